"""uno_mk_env: UNO Mario Kart for reinforcement learning.

The rules engine (:class:`Game`, :class:`Rules`) is pure Python + numpy. The PettingZoo env
``uno_mario_kart_v0`` and the Gymnasium wrapper live in submodules that import those libraries
only when used (they need the ``env`` extra).

The Gymnasium wrapper is registered as :data:`GYM_ID` when gymnasium is installed:
``gym.make("uno_mk_env:UnoMarioKart-v0", num_players=3)`` imports this package itself, and
``gym.make("UnoMarioKart-v0")`` works once it is imported. Importing this package never imports
gymnasium: it registers at once when gymnasium is already imported, else the moment it is.
"""

import importlib.abc
import importlib.util
import sys
from types import ModuleType
from typing import Any

from . import actions, cards
from .errors import IllegalActionError, StateError, UnoMkError
from .game import Game
from .phases import Phase
from .rules import OPTIONS, PRESETS, Rules, RulesError, preset
from .view import PlayerView

__version__ = "0.9.0"

#: The Gymnasium id of :class:`uno_mk_env.gym_env.UnoMarioKartGymEnv` (keyword arguments of
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
        register(id=GYM_ID, entry_point="uno_mk_env.gym_env:UnoMarioKartGymEnv")
    return True


class _RegisterAfterGymnasium(importlib.abc.MetaPathFinder):
    """An import hook that registers :data:`GYM_ID` right after gymnasium is first imported,
    then leaves ``sys.meta_path``. It finds nothing itself: it wraps the loader that the other
    finders return for ``gymnasium``."""

    def __init__(self) -> None:
        self.busy = False

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname != "gymnasium" or self.busy:
            return None
        self.busy = True  # importlib.util.find_spec below asks every finder, this one included
        try:
            spec = importlib.util.find_spec(fullname)
        finally:
            self.busy = False
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        exec_module = spec.loader.exec_module

        def exec_then_register(module: ModuleType) -> None:
            exec_module(module)
            if self in sys.meta_path:  # not while importlib iterates sys.meta_path
                sys.meta_path.remove(self)
            _register_gym_env()

        spec.loader.exec_module = exec_then_register  # type: ignore[method-assign]  # wrap it
        return spec


if "gymnasium" in sys.modules:
    _register_gym_env()
elif importlib.util.find_spec("gymnasium") is not None:
    sys.meta_path.insert(0, _RegisterAfterGymnasium())


def _missing_env_extra(error: ImportError) -> ImportError:
    """The one ``ImportError`` of the env modules (``uno_mario_kart_v0``, ``env``, ``gym_env``)
    when the ``env`` extra is missing; ``error`` is the import that failed."""
    return ImportError(f"the UNO Mario Kart envs need {error.name or 'gymnasium and pettingzoo'}"
                       ": pip install 'uno-mk-env[env]'", name=error.name)


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
