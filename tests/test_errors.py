"""One error type (issue 26): :class:`uno_mk_env.errors.UnoMkError` is the base of every exception
class the project defines — found by importing every module of the package — each keeping its
standard base (``ValueError``, ...) so that callers' ``except`` clauses keep working; the command
line catches the one type and keeps its exit codes (2 bad input, 1 a failure during the run)."""

from __future__ import annotations

import ast
import importlib
import inspect
import io
import pkgutil
import types
from collections.abc import Iterator
from pathlib import Path

import pytest

import uno_mk_env
from uno_mk_env.errors import UnoMkError

REPO = Path(__file__).resolve().parents[1]
#: The subpackages that install from the repository's other folders (pkgutil cannot find them
#: from ``uno_mk_env.__path__`` in an editable install).
SUBPACKAGES = ("agents", "evaluation", "training", "cli")


def _module_names() -> Iterator[str]:
    seen = set()
    roots = [uno_mk_env] + [importlib.import_module(f"uno_mk_env.{p}") for p in SUBPACKAGES]
    for package in roots:
        for name in [package.__name__] + [
                info.name for info in pkgutil.walk_packages(package.__path__,
                                                            package.__name__ + ".")]:
            if name not in seen:
                seen.add(name)
                yield name


def _modules() -> list[types.ModuleType]:
    """Every module of the package, imported; ``__main__`` modules (entry points, which run on
    import) are read by :func:`test_no_exception_class_escapes_the_import_walk` instead."""
    out = []
    for name in _module_names():
        if name.rpartition(".")[2] == "__main__":
            continue
        try:
            out.append(importlib.import_module(name))
        except ImportError as e:
            # The test extra brings every optional package, so each module imports. One line,
            # not pytest's traceback: a module-level raise would print the module's source from
            # its first line (its whole docstring).
            pytest.fail(f"cannot import {name}: {e}", pytrace=False)
    return out


def _project_exceptions() -> dict[str, type[BaseException]]:
    found = {}
    for module in _modules():
        for obj in vars(module).values():
            if (inspect.isclass(obj) and issubclass(obj, BaseException)
                    and obj.__module__ == module.__name__):
                found[f"{obj.__module__}.{obj.__qualname__}"] = obj
    return found


def test_every_exception_the_project_defines_is_an_uno_mk_error() -> None:
    found = _project_exceptions()
    assert len(found) >= 15, sorted(found)  # the import walk reached every layer
    outside = sorted(name for name, cls in found.items() if not issubclass(cls, UnoMkError))
    assert outside == []


def _looks_like_an_exception(node: ast.ClassDef) -> bool:
    return any(ast.unparse(b).split(".")[-1].endswith(("Error", "Exception", "Warning"))
               for b in node.bases)


def test_no_exception_class_escapes_the_import_walk() -> None:
    """Classes made inside functions, and classes of ``__main__`` modules, escape the import
    walk above: none of them looks like an exception."""
    escaped = []
    for name in _module_names():
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None or not spec.origin.endswith(".py"):
            continue
        tree = ast.parse(Path(spec.origin).read_text(encoding="utf-8"))
        if name.rpartition(".")[2] == "__main__":
            escaped += [f"{name}.{n.name}" for n in ast.walk(tree)
                        if isinstance(n, ast.ClassDef) and _looks_like_an_exception(n)]
            continue
        for func in ast.walk(tree):
            if isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
                escaped += [f"{name}.{func.name}.{n.name}" for n in ast.walk(func)
                            if isinstance(n, ast.ClassDef) and _looks_like_an_exception(n)]
    assert escaped == []


@pytest.mark.parametrize("name, standard", [
    ("uno_mk_env.errors.IllegalActionError", ValueError),
    ("uno_mk_env.errors.StateError", ValueError),
    ("uno_mk_env.engine.rules.RulesError", ValueError),
    ("uno_mk_env.envs.aec.UnknownAgentError", KeyError),
    ("uno_mk_env.envs.aec.IllegalActionWarning", UserWarning),
    ("uno_mk_env.envs.agent.AgentError", RuntimeError),
    ("uno_mk_env.agents.base.AgentSpecError", ValueError),
    ("uno_mk_env.agents.policy_file.ModelFileError", ValueError),
    ("uno_mk_env.evaluation.replay_format.ReplayError", ValueError),
    ("uno_mk_env.evaluation.tournament.TournamentError", RuntimeError),
    ("uno_mk_env.files.OutputPathError", ValueError),
    ("uno_mk_env.files.FileFormatError", ValueError),
    ("uno_mk_env.training.args.TrainingError", ValueError),
])
def test_each_keeps_its_standard_base(name: str, standard: type) -> None:
    module, _, cls = name.rpartition(".")
    error = getattr(importlib.import_module(module), cls)
    assert issubclass(error, UnoMkError) and issubclass(error, standard)


def test_the_command_line_catches_the_one_type() -> None:
    """``cli/app.py``'s ``_run`` has one ``except`` for the project's errors (besides SIGTERM's
    ``Terminated``, Ctrl-C, a reader closing the pipe, and a full disk: an ``OSError`` for no
    space or a file-size limit, re-raised otherwise)."""
    tree = ast.parse((REPO / "cli" / "app.py").read_text(encoding="utf-8"))
    run = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "_run")
    caught = {ast.unparse(h.type) for n in ast.walk(run) if isinstance(n, ast.Try)
              for h in n.handlers}
    assert caught == {"UnoMkError", "Terminated", "KeyboardInterrupt", "BrokenPipeError",
                      "OSError"}


def _raise(error: BaseException) -> types.ModuleType:
    module = types.ModuleType("fake_command")

    def run(args, out):
        raise error

    module.run = run  # type: ignore[attr-defined]
    return module


def _cases() -> list[tuple[BaseException, int, str]]:
    from uno_mk_env.agents.base import AgentError, AgentSpecError
    from uno_mk_env.cli.app import Terminated
    from uno_mk_env.cli.common import CLIError
    from uno_mk_env.engine.rules import RulesError
    from uno_mk_env.evaluation.replay_format import ReplayError
    from uno_mk_env.evaluation.tournament import TournamentError
    from uno_mk_env.files import OutputPathError

    return [
        (CLIError("bad flag"), 2, "error: bad flag"),
        (AgentSpecError("bad spec"), 2, "error: bad spec"),
        (RulesError("bad rule"), 2, "error: bad rule"),
        (OutputPathError("bad out"), 2, "error: bad out"),
        (ReplayError("bad file"), 2, "error: bad file"),
        (AgentError("it raised"), 1, "agent failed: it raised"),
        (TournamentError("a worker died"), 1, "error: a worker died"),
        (Terminated(), 143, "terminated"),
    ]


@pytest.mark.parametrize("case", range(8))
def test_exit_codes_are_kept(case: int) -> None:
    from uno_mk_env.cli.app import _run

    error, code, message = _cases()[case]
    err = io.StringIO()
    assert _run(_raise(error), types.SimpleNamespace(), "uno-mk x", io.StringIO(), err) == code
    assert err.getvalue() == f"uno-mk x: {message}\n"
