"""The compiled core (docs/compiled.md): the rules engine in C, bit-identical with the Python one.

The extension ``uno_mk_env.compiled._core`` is optional: it is built by ``pip install`` where a C
compiler is found, and everything works without it on the Python engine (:class:`uno_mk_env.Game`,
the reference). :func:`core` is the one place that decides which engine runs:

* ``UNO_MK_ENGINE=python`` forces the Python engine everywhere (:func:`core` returns ``None``);
* ``UNO_MK_ENGINE=compiled`` requires the extension (:func:`core` raises :class:`EngineError`
  when it is not built);
* unset, empty or ``auto``: the extension when it is built, else the Python engine.
"""

from __future__ import annotations

import os
from types import ModuleType

from ..errors import UnoMkError

__all__ = ["ENGINES", "ENGINE_VARIABLE", "EngineError", "available", "core", "engine"]

#: The environment variable that chooses the engine.
ENGINE_VARIABLE = "UNO_MK_ENGINE"
#: Its allowed values (``""`` is ``"auto"``).
ENGINES = ("auto", "python", "compiled")


class EngineError(UnoMkError, RuntimeError):
    """``UNO_MK_ENGINE`` holds an unknown value, or asks for a compiled core that is not built."""


def engine() -> str:
    """The engine asked for by ``UNO_MK_ENGINE``: ``"auto"``, ``"python"`` or ``"compiled"``.

    Raises:
        EngineError: any other value, named.
    """
    value = os.environ.get(ENGINE_VARIABLE, "").strip().lower() or "auto"
    if value not in ENGINES:
        raise EngineError(f"{ENGINE_VARIABLE}={os.environ[ENGINE_VARIABLE]!r:.40} is not allowed; "
                          f"allowed: {', '.join(ENGINES)} (or unset)")
    return value


def _load() -> ModuleType | None:
    try:
        from . import _core  # the extension, when it was built (the Python engine otherwise)
    except ImportError:
        return None
    return _core


def core() -> ModuleType | None:
    """The compiled core's module, or ``None`` when the Python engine runs (forced, or the
    extension not built).

    Raises:
        EngineError: ``UNO_MK_ENGINE=compiled`` and the extension is not built (or cannot be
            loaded), or an unknown ``UNO_MK_ENGINE``.
    """
    wanted = engine()
    if wanted == "python":
        return None
    module = _load()
    if module is None and wanted == "compiled":
        raise EngineError(f"{ENGINE_VARIABLE}=compiled but the compiled core is not built: "
                          "reinstall with a C compiler (pip install -e .), or unset "
                          f"{ENGINE_VARIABLE}")
    return module


def available() -> bool:
    """True when the compiled core will run (built, and not forced off)."""
    return core() is not None
