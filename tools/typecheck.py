"""Type-check the whole package with mypy, configured in ``pyproject.toml`` (``[tool.mypy]``).

The repository's ``agents/``, ``evaluation/``, ``training/`` and ``cli/`` folders install as
subpackages of ``uno_mk_env`` through ``[tool.setuptools.package-dir]``, a mapping mypy cannot
follow. This script lays the installed shape out as a tree of symbolic links in
``build/typecheck/`` (what setuptools' ``editable_mode=strict`` builds) and runs mypy on it, so
every module is checked under its real name ``uno_mk_env.*``; the report names the repository's
files (``agents/ppo.py``), not the links. Any arguments go to mypy. Works from any directory.

    python tools/typecheck.py            # or: make typecheck
"""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # mypy itself depends on tomli below Python 3.11
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
TREE = ROOT / "build" / "typecheck"


def source_dir(package: str, package_dir: dict[str, str]) -> Path:
    """The folder of ``package`` as setuptools finds it: its longest mapped prefix + the rest."""
    parts = package.split(".")
    for cut in range(len(parts), 0, -1):
        prefix = ".".join(parts[:cut])
        if prefix in package_dir:
            return ROOT.joinpath(package_dir[prefix], *parts[cut:])
    return ROOT.joinpath(package_dir.get("", ""), *parts)


def link_tree() -> Path:
    """Build ``build/typecheck/`` from the package mapping and return it."""
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    shutil.rmtree(TREE, ignore_errors=True)
    for package in setuptools["packages"]:
        source = source_dir(package, setuptools.get("package-dir", {}))
        target = TREE.joinpath(*package.split("."))
        target.mkdir(parents=True, exist_ok=True)
        for module in sorted(source.glob("*.py")) + sorted(source.glob("*.pyi")):
            (target / module.name).symlink_to(module)
        if (source / "py.typed").exists():
            (target / "py.typed").symlink_to(source / "py.typed")
    return TREE


def source_path(match: re.Match[str]) -> str:
    """A path in mypy's output, shown as the repository's file when it is a link of the tree."""
    # mypy's cache keeps paths relative to the directory of the run that wrote it
    for path in (Path(match.group(0)).absolute(), ROOT / match.group(0)):
        if path.is_relative_to(TREE) and path.exists():
            break
    else:
        return match.group(0)
    real = path.resolve()
    return str(real.relative_to(Path.cwd()) if real.is_relative_to(Path.cwd()) else real)


def main(argv: list[str] | None = None) -> int:
    from mypy import api

    link_tree()
    args = ["--config-file", str(ROOT / "pyproject.toml"), "--cache-dir", str(ROOT / ".mypy_cache")]
    stdout, stderr, status = api.run([*args, *(sys.argv[1:] if argv is None else argv)])
    sys.stdout.write(re.sub(r"^[^:\n]+\.pyi?(?=:)", source_path, stdout, flags=re.MULTILINE))
    sys.stderr.write(stderr)
    return status


if __name__ == "__main__":
    raise SystemExit(main())
