"""The module paths of 0.9.0 that moved in 0.10.0, kept working for one release.

0.10.0 laid the core out by idea (``engine/``, ``envs/``, ``render/``, docs/architecture.md).
``import uno_mk_env.game`` and ``from uno_mk_env.vector import ...`` still work: they give the
module at its new path (the same module object, not a copy) with a ``DeprecationWarning`` that
names the new path. 1.0 removes them. The public imports (``from uno_mk_env import Game, ...``)
are not affected.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings
from types import ModuleType
from typing import Any

#: Old module path -> new module path.
MOVED = {
    **{f"uno_mk_env.{name}": f"uno_mk_env.engine.{name}" for name in (
        "actions", "cards", "events", "game", "legality", "observation", "phases", "rewards",
        "rules", "sampling", "seeding", "state", "view")},
    "uno_mk_env.env": "uno_mk_env.envs.aec",
    "uno_mk_env.agent": "uno_mk_env.envs.agent",
    "uno_mk_env.gym_env": "uno_mk_env.envs.gym_env",
    "uno_mk_env.openspiel": "uno_mk_env.envs.openspiel",
    "uno_mk_env.vector": "uno_mk_env.envs.vector",
    "uno_mk_env.render_image": "uno_mk_env.render.image",
}


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds the old paths only, and loads each as the module at its new path."""

    def __init__(self) -> None:
        self.specs: dict[str, importlib.machinery.ModuleSpec | None] = {}

    def find_spec(self, fullname: str, path: Any = None,
                  target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if fullname not in MOVED:
            return None
        return importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        new = MOVED[spec.name]
        warnings.warn(f"{spec.name} moved to {new} in uno-mk-env 0.10.0; the old path goes in 1.0",
                      DeprecationWarning, stacklevel=2)
        module = importlib.import_module(new)
        self.specs[new] = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        """The module ran at its new path; importlib has just set its ``__spec__`` to the old
        path's, which is put back (``module.__name__`` names the new path)."""
        module.__spec__ = self.specs[module.__name__]


def install() -> None:
    """Serves the old paths (once per process)."""
    if not any(isinstance(finder, _Alias) for finder in sys.meta_path):
        sys.meta_path.append(_Alias())
