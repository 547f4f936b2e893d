"""The env in the field's registries, registered when ``uno_mk_env`` is imported (as Gymnasium's
plugin packages do; no import hook):

- Gymnasium: :data:`GYM_ID` (``gym.make("UnoMarioKart-v0", num_players=3)``; keyword arguments
  go to :class:`~uno_mk_env.envs.gym_env.UnoMarioKartGymEnv`);
  ``gym.make("uno_mk_env:UnoMarioKart-v0")`` imports the package itself.
- PettingZoo 1.27+: :data:`PZ_ID` as an AEC env (``pettingzoo.make("aec", "uno_mario_kart_v0",
  num_players=3)``; keyword arguments go to :func:`uno_mk_env.uno_mario_kart_v0.env`). The env
  is turn-based, so no ``"parallel"`` id (``turn_based_aec_to_parallel`` converts it).

Each library is registered with only when it is installed (the ``env`` extra); the entry points
are strings, so nothing of the envs is imported here. A PettingZoo without a registry (before
1.27) is left alone.
"""

from __future__ import annotations

__all__ = ["GYM_ENTRY_POINT", "GYM_ID", "PZ_ENTRY_POINT", "PZ_ID", "register_envs"]

#: The Gymnasium id.
GYM_ID = "UnoMarioKart-v0"
GYM_ENTRY_POINT = "uno_mk_env.envs.gym_env:UnoMarioKartGymEnv"
#: The id in PettingZoo's AEC registry (PettingZoo also finds it as ``uno_mario_kart-v0``, its
#: own spelling of versions).
PZ_ID = "uno_mario_kart_v0"
PZ_ENTRY_POINT = "uno_mk_env.uno_mario_kart_v0:env"
_PZ_KEY = "uno_mario_kart-v0"  # how PettingZoo stores PZ_ID


def register_envs() -> dict[str, bool]:
    """Registers the env with each installed library, once (a second call changes nothing);
    returns which libraries have it registered."""
    return {"gymnasium": _register_gymnasium(), "pettingzoo": _register_pettingzoo()}


def _register_gymnasium() -> bool:
    try:
        from gymnasium.envs.registration import register, registry  # the env extra
    except ImportError:
        return False
    if GYM_ID not in registry:
        register(id=GYM_ID, entry_point=GYM_ENTRY_POINT)
    return True


def _register_pettingzoo() -> bool:
    try:
        from pettingzoo import aec_registry, register  # the env extra, PettingZoo 1.27+
    except ImportError:
        return False
    if _PZ_KEY not in aec_registry:
        register("aec", PZ_ID, entry_point=PZ_ENTRY_POINT)
    return True
