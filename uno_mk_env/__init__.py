"""uno_mk_env: UNO Mario Kart for reinforcement learning.

The rules engine (:class:`Game`, :class:`Rules`) is pure Python + numpy. The PettingZoo env
``uno_mario_kart_v0`` and the Gymnasium wrapper live in submodules (``uno_mk_env.envs``, loaded
when used; they need the ``env`` extra).

Importing this package registers the env with Gymnasium's registry (:data:`GYM_ID`:
``gym.make("UnoMarioKart-v0")``) and PettingZoo's (``pettingzoo.make("aec",
"uno_mario_kart_v0")``) when they are installed (the ``env`` extra), as Gymnasium's plugin
packages do (:mod:`uno_mk_env.registration`); without them it works on numpy alone.
"""

import importlib

from . import _moved
from .engine import actions, cards
from .engine.game import Game
from .engine.phases import Phase
from .engine.rules import OPTIONS, PRESETS, Rules, RulesError, preset
from .engine.view import PlayerView
from .errors import IllegalActionError, StateError, UnoMkError
from .registration import GYM_ID, register_envs

__version__ = "0.9.0"

register_envs()  # with Gymnasium and PettingZoo, when installed (uno_mk_env.registration)
_moved.install()  # the module paths of 0.9.0, for one release


def __getattr__(name: str) -> object:
    # The PettingZoo module loads the envs (and needs the env extra): only when it is asked for.
    if name == "uno_mario_kart_v0":
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "Game", "IllegalActionError", "Phase", "PlayerView", "StateError", "Rules", "RulesError",
    "UnoMkError",
    "OPTIONS", "PRESETS", "preset", "actions", "cards", "GYM_ID", "__version__",
]
