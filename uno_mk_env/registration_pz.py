"""``uno_mario_kart_v0`` in PettingZoo's own env registry (``pettingzoo.make``).

PettingZoo 1.27 has an env registry beside Gymnasium's: ``pettingzoo.register`` and
``pettingzoo.make(env_type, id, **kwargs)``. :func:`register_pettingzoo_env` registers
:data:`PZ_ID` as an AEC env whose entry point is :func:`uno_mk_env.uno_mario_kart_v0.env`
(keyword arguments of ``make`` go to it), so that, once ``uno_mk_env`` is imported::

    import pettingzoo
    env = pettingzoo.make("aec", "uno_mario_kart_v0", num_players=3)

:func:`register_when_pettingzoo_imports` is what the package calls on import: it registers at
once when pettingzoo is already imported, else the moment it is (an import hook), so importing
``uno_mk_env`` never imports pettingzoo. A PettingZoo without a registry (before 1.27) is left
alone. The env is turn-based, so no ``"parallel"`` id is registered (PettingZoo's
``turn_based_aec_to_parallel`` converts the AEC env).
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any

#: The id of the AEC env in PettingZoo's registry (``make`` finds it by either spelling).
PZ_ID = "uno_mario_kart_v0"
#: The key PettingZoo stores :data:`PZ_ID` under (it spells versions Gymnasium's way).
_REGISTRY_KEY = "uno_mario_kart-v0"
#: Its entry point: the module's ``env()`` (an illegal action ends the game with a penalty).
ENTRY_POINT = "uno_mk_env.uno_mario_kart_v0:env"


def register_pettingzoo_env() -> bool:
    """Registers :data:`PZ_ID` with PettingZoo's AEC registry (once); ``False`` when pettingzoo
    is not importable or has no registry (before 1.27)."""
    try:
        # the env extra's pettingzoo, imported only when asked for (``import uno_mk_env`` stays
        # free of it)
        from pettingzoo import aec_registry, register
    except ImportError:
        return False
    if _REGISTRY_KEY not in aec_registry:
        register("aec", PZ_ID, entry_point=ENTRY_POINT)
    return True


class _CallAfterImport(importlib.abc.MetaPathFinder):
    """An import hook that calls ``callback`` right after the module ``name`` is first
    imported, then leaves ``sys.meta_path``. It finds nothing itself: it wraps the loader that
    the other finders return for ``name``."""

    def __init__(self, name: str, callback: Callable[[], object]) -> None:
        self.name = name
        self.callback = callback
        self.busy = False

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname != self.name or self.busy:
            return None
        self.busy = True  # importlib.util.find_spec below asks every finder, this one included
        try:
            spec = importlib.util.find_spec(fullname)
        finally:
            self.busy = False
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        exec_module = spec.loader.exec_module

        def exec_then_call(module: ModuleType) -> None:
            exec_module(module)
            if self in sys.meta_path:  # not while importlib iterates sys.meta_path
                sys.meta_path.remove(self)
            self.callback()

        spec.loader.exec_module = exec_then_call  # type: ignore[method-assign]  # wrap it
        return spec


def call_after_import(name: str, callback: Callable[[], object]) -> None:
    """Calls ``callback`` now if the module ``name`` is imported, else right after it first is
    (nothing when it is not installed)."""
    if name in sys.modules:
        callback()
    elif importlib.util.find_spec(name) is not None:
        sys.meta_path.insert(0, _CallAfterImport(name, callback))


def register_when_pettingzoo_imports() -> None:
    """Registers :data:`PZ_ID` with PettingZoo now, or as soon as pettingzoo is imported."""
    call_after_import("pettingzoo", register_pettingzoo_env)


__all__ = ["ENTRY_POINT", "PZ_ID", "call_after_import", "register_pettingzoo_env",
           "register_when_pettingzoo_imports"]
