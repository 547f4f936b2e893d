"""MkDocs hooks: mkdocstrings reads the package as it installs, and the docstrings' roles read
as plain code.

The repository's ``agents/``, ``training/``, ``evaluation/`` and ``cli/`` folders install as
``uno_mk_env.agents`` etc. (``[tool.setuptools.package-dir]`` in pyproject.toml), which griffe,
reading the source tree statically, cannot see. Before the build this hook lays out that package
as symbolic links in a temporary folder (``uno_mk_env/`` with every entry of the engine's folder
plus one link per mapped subpackage) and points mkdocstrings' Python handler at it; the folder
is removed when the build ends. Nothing is imported.

The docstrings cross-reference in Sphinx's style (``:class:`Game```), which Markdown renders as
the role's name followed by code; :func:`on_page_content` drops the role's name.
"""

from __future__ import annotations

import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from mkdocs.plugins import event_priority

if sys.version_info >= (3, 11):
    import tomllib
else:  # the docs extra installs tomli there
    import tomli as tomllib

PACKAGE = "uno_mk_env"
_TREE: Path | None = None
#: A Sphinx role's name left in front of the code it marks, as Markdown renders ``:class:`X```.
_ROLE = re.compile(r":(?:class|func|meth|mod|data|attr|exc|obj|const):(?=<code>)")


def package_tree(root: Path, into: Path) -> Path:
    """Builds ``into/uno_mk_env`` from ``root`` as the installed package is laid out."""
    mapping = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    dirs = mapping["tool"]["setuptools"]["package-dir"]
    package = into / PACKAGE
    package.mkdir()
    mapped = {name.split(".", 1)[1]: folder for name, folder in dirs.items()
              if name.startswith(f"{PACKAGE}.") and name.count(".") == 1}
    for entry in (root / dirs[PACKAGE]).iterdir():
        if entry.name not in mapped:  # a checkout may link them there already (a git worktree)
            (package / entry.name).symlink_to(entry.resolve())
    for sub, folder in mapped.items():
        (package / sub).symlink_to((root / folder).resolve())
    return into


@event_priority(100)  # before mkdocstrings reads its handlers' configuration
def on_config(config: Any) -> Any:
    global _TREE
    root = Path(config.config_file_path).resolve().parent
    _TREE = package_tree(root, Path(tempfile.mkdtemp(prefix="uno_mk_docs_")))
    handlers = config.plugins["mkdocstrings"].config.handlers
    handlers.setdefault("python", {})["paths"] = [str(_TREE)]
    return config


def on_shutdown() -> None:
    if _TREE is not None:
        shutil.rmtree(_TREE, ignore_errors=True)


def on_page_content(html: str, **_: Any) -> str:
    return _ROLE.sub("", html)
