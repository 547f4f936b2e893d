"""The layers of the package (docs/architecture.md): core (``uno_mk_env/`` itself) < ``agents``
< ``evaluation`` < ``training`` < ``cli``, and inside the core ``engine`` < ``compiled``,
``render`` < ``envs`` < ``uno_mario_kart_v0``; an import goes down or sideways, never up, and no
import cycle anywhere (import-linter's ``acyclic_siblings`` contract).

Two independent checks: a scan of every ``import`` and ``from ... import`` statement of every
source file (top level and inside functions, relative imports resolved against the package
mapping of ``pyproject.toml``), and import-linter's contract of ``pyproject.toml``, run on the
installed layout (the repository's folders install as subpackages, which import-linter cannot
see in the repository itself). A test plants an upward import inside a function in a copy of
the source and checks that both catch it.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
ROOT = "uno_mk_env"
#: From the top layer down; the modules of a tuple share a layer. Every other module of the
#: package (errors, files, the 0.9.0 path aliases) is the bottom layer, rank 0.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("uno_mk_env.cli",), ("uno_mk_env.training", "uno_mk_env.serve"), ("uno_mk_env.evaluation",),
    ("uno_mk_env.agents",), ("uno_mk_env.uno_mario_kart_v0",), ("uno_mk_env.envs",),
    ("uno_mk_env.compiled", "uno_mk_env.render"), ("uno_mk_env.engine",),
)
#: Subpackages that hold data only, counted as core.
DATA_PACKAGES = ("uno_mk_env.models",)
#: Entry points of the command line outside ``cli/`` (``python -m uno_mk_env``): the top layer.
ENTRY_POINTS = ("uno_mk_env.__main__",)


def _pyproject() -> dict:
    tomllib = pytest.importorskip("tomllib" if sys.version_info >= (3, 11) else "tomli")
    return tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))


def _package_dirs() -> dict[str, Path]:
    """Package name -> its folder in the repository (``[tool.setuptools.package-dir]``)."""
    mapping = _pyproject()["tool"]["setuptools"]["package-dir"]
    return {package: REPO / folder for package, folder in mapping.items()}


def _rank(module: str) -> int | None:
    """The layer of ``module`` (0 the bottom, ``len(LAYERS)`` cli), or ``None`` outside the
    package and for the package itself (its ``__init__`` re-exports the public names)."""
    if module == ROOT or not module.startswith(ROOT + "."):
        return None
    if module in ENTRY_POINTS:
        return len(LAYERS)
    for i, layer in enumerate(LAYERS):
        if any(module == name or module.startswith(name + ".") for name in layer):
            return len(LAYERS) - i
    return 0


def _imported(node: ast.AST, package: str) -> list[str]:
    """The modules an import statement may import (for ``from m import x``: ``m`` and
    ``m.x``, since ``x`` may be a submodule); ``package`` is where relative imports start."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    if node.level:
        parts = package.split(".")
        base = parts[: len(parts) - (node.level - 1)]
        module = ".".join(base + ([node.module] if node.module else []))
    else:
        module = node.module or ""
    return [module] + [f"{module}.{alias.name}" for alias in node.names]


def _sources(dirs: dict[str, Path]) -> Iterator[tuple[str, bool, Path]]:
    """(module name, is a package's ``__init__``, file) of every ``.py`` file of the package."""
    for package, folder in dirs.items():
        for path in sorted(folder.rglob("*.py")):
            parts = path.relative_to(folder).with_suffix("").parts
            is_init = parts[-1] == "__init__"
            yield ".".join([package, *parts[:-1 if is_init else None]]), is_init, path


def upward_imports(dirs: dict[str, Path]) -> list[str]:
    """``file:line: importer -> imported`` for every import statement, anywhere in a file,
    that reaches a higher layer."""
    found = []
    for module, is_init, path in _sources(dirs):
        package = module if is_init else module.rpartition(".")[0]
        own = _rank(module)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            for target in _imported(node, package):
                rank = _rank(target)
                if rank is not None and own is not None and rank > own:
                    found.append(f"{path.relative_to(REPO) if path.is_relative_to(REPO) else path}"
                                 f":{node.lineno}: {module} -> {target}")
                    break
    return found


def _copy_sources(dirs: dict[str, Path], target: dict[str, Path]) -> dict[str, Path]:
    """Copies the ``.py`` files of each package's folder in ``dirs`` to its folder in
    ``target``; returns ``target``."""
    for package, folder in dirs.items():
        for path in folder.rglob("*.py"):
            dst = target[package] / path.relative_to(folder)
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, dst)
    return target


def _stage(dirs: dict[str, Path], root: Path) -> Path:
    """Copies the sources into ``root`` in the installed layout (``uno_mk_env/agents/...``)."""
    _copy_sources(dirs, {package: root.joinpath(*package.split(".")) for package in dirs})
    return root


def _lint_imports(staged: Path) -> subprocess.CompletedProcess[str]:
    """import-linter with this repository's contract, on the staged layout (run from there so
    that it, not the repository's ``uno_mk_env/`` folder, is the package analysed)."""
    pytest.importorskip("importlinter")
    exe = Path(sys.executable).with_name("lint-imports")
    command = [str(exe)] if exe.exists() else [sys.executable, "-m", "importlinter.cli"]
    return subprocess.run([*command, str(REPO / "pyproject.toml"), "--no-cache", "--no-logo"],
                          cwd=staged, capture_output=True, text=True, timeout=300)


# ---------------------------------------------------------------------------------- tests
def test_every_subpackage_has_a_layer() -> None:
    placed = {ROOT, *(name for layer in LAYERS for name in layer), *DATA_PACKAGES}
    assert set(_package_dirs()) <= placed, "place the new subpackage in LAYERS (and pyproject)"
    subpackages = {f"{ROOT}.{p.parent.name}" for p in (REPO / ROOT).glob("*/__init__.py")}
    assert subpackages <= placed, "place the new subpackage of the core in LAYERS (and pyproject)"


def test_no_import_goes_up_a_layer() -> None:
    assert upward_imports(_package_dirs()) == []


def test_import_linter_contract_is_kept(tmp_path: Path) -> None:
    out = _lint_imports(_stage(_package_dirs(), tmp_path))
    assert out.returncode == 0, out.stdout + out.stderr
    assert "2 kept, 0 broken" in out.stdout


def test_both_checks_catch_an_upward_import_inside_a_function(tmp_path: Path) -> None:
    """A relative import of the agents layer inside a function of a core module (what
    ``gym_env`` did): the scan and import-linter both report it."""
    dirs = _copy_sources(_package_dirs(), {p: tmp_path / "src" / p for p in _package_dirs()})
    planted = dirs[ROOT] / "engine" / "seeding.py"
    planted.write_text(planted.read_text(encoding="utf-8")
                       + "\n\ndef _planted():\n    from ..agents import base\n\n    return base\n",
                       encoding="utf-8")
    found = upward_imports(dirs)
    assert len(found) == 1 and found[0].endswith(
        "uno_mk_env.engine.seeding -> uno_mk_env.agents"), found
    out = _lint_imports(_stage(dirs, tmp_path / "staged"))
    assert out.returncode == 1 and "BROKEN" in out.stdout
    assert "uno_mk_env.engine.seeding -> uno_mk_env.agents" in out.stdout, out.stdout


def test_the_engine_imports_nothing_of_the_envs_or_renderers() -> None:
    """The rules engine is the bottom of the core: a scan of its own files (function-level
    imports included) finds no import of ``envs``, ``render``, ``compiled`` or above."""
    dirs = {ROOT: _package_dirs()[ROOT]}
    engine = [(m, path) for m, _, path in _sources(dirs) if m.startswith(f"{ROOT}.engine")]
    assert len(engine) >= 10
    for module, path in engine:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            for target in _imported(node, module.rpartition(".")[0]):
                assert not target.startswith((f"{ROOT}.envs", f"{ROOT}.render",
                                              f"{ROOT}.compiled")), (path, node.lineno, target)


def test_import_linter_catches_an_import_cycle_inside_a_function(tmp_path: Path) -> None:
    """``view`` importing ``game`` inside a function closes a loop (``game`` imports ``view``):
    the acyclic contract reports it though no layer is crossed."""
    dirs = _copy_sources(_package_dirs(), {p: tmp_path / "src" / p for p in _package_dirs()})
    planted = dirs[ROOT] / "engine" / "view.py"
    planted.write_text(planted.read_text(encoding="utf-8")
                       + "\n\ndef _planted():\n    from .game import Game\n\n    return Game\n",
                       encoding="utf-8")
    assert upward_imports(dirs) == []
    out = _lint_imports(_stage(dirs, tmp_path / "staged"))
    assert out.returncode == 1 and "1 kept, 1 broken" in out.stdout, out.stdout
    assert "- .view -> .game (1 import)" in out.stdout, out.stdout
