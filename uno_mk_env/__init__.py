"""uno_mk_env: UNO Mario Kart for reinforcement learning.

The rules engine (:class:`Game`, :class:`Rules`) is pure Python + numpy. The PettingZoo env
``uno_mario_kart_v0`` and the Gymnasium wrapper live in submodules that import those libraries
only when used.
"""

from . import actions, cards
from .errors import IllegalActionError, StateError
from .game import Game
from .phases import Phase
from .rules import OPTIONS, PRESETS, Rules, RulesError, preset
from .view import PlayerView

__version__ = "0.6.4"


def __getattr__(name: str) -> object:
    # The PettingZoo env imports gymnasium and pettingzoo: load it only when it is asked for, so
    # ``import uno_mk_env`` stays free of them.
    if name == "uno_mario_kart_v0":
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "Game", "IllegalActionError", "Phase", "PlayerView", "StateError", "Rules", "RulesError",
    "OPTIONS", "PRESETS", "preset", "actions", "cards", "__version__",
]
