"""uno_mk_env: UNO Mario Kart for reinforcement learning.

The rules engine (:class:`Game`, :class:`Rules`) is pure Python + numpy. The PettingZoo env
``uno_mario_kart_v0`` and the Gymnasium wrapper live in submodules that import those libraries
only when used (they need the ``env`` extra).

The Gymnasium wrapper is registered as :data:`GYM_ID` when gymnasium is installed:
``gym.make("uno_mk_env:UnoMarioKart-v0", num_players=3)`` imports this package itself, and
``gym.make("UnoMarioKart-v0")`` works once it is imported: importing this package registers the id
with Gymnasium's registry when gymnasium is installed (the ``env`` extra), as Gymnasium's plugin
packages do, and works without it. It never imports pettingzoo.
"""

from . import _moved
from .engine import actions, cards
from .engine.game import Game
from .engine.phases import Phase
from .engine.rules import OPTIONS, PRESETS, Rules, RulesError, preset
from .engine.view import PlayerView
from .errors import IllegalActionError, StateError, UnoMkError

__version__ = "0.9.0"

#: The Gymnasium id of :class:`uno_mk_env.envs.gym_env.UnoMarioKartGymEnv` (keyword arguments of
#: ``gym.make`` go to its constructor).
GYM_ID = "UnoMarioKart-v0"


def _register_gym_env() -> bool:
    """Registers :data:`GYM_ID` with an imported gymnasium; ``False`` when it is not importable
    (a base install, or ``sys.modules["gymnasium"] = None``)."""
    try:
        from gymnasium.envs.registration import register, registry
    except ImportError:
        return False
    if GYM_ID not in registry:
        register(id=GYM_ID, entry_point="uno_mk_env.envs.gym_env:UnoMarioKartGymEnv")
    return True


_register_gym_env()
_moved.install()  # the module paths of 0.9.0, for one release


def __getattr__(name: str) -> object:
    # The PettingZoo env imports gymnasium and pettingzoo: load it only when it is asked for, so
    # ``import uno_mk_env`` stays free of them.
    if name == "uno_mario_kart_v0":
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "Game", "IllegalActionError", "Phase", "PlayerView", "StateError", "Rules", "RulesError",
    "UnoMkError",
    "OPTIONS", "PRESETS", "preset", "actions", "cards", "GYM_ID", "__version__",
]
