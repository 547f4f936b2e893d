"""The engine stands alone (docs/api.md#layers, docs/api.md#randomness).

The engine needs numpy alone: in a fresh interpreter where gymnasium, pettingzoo and torch cannot
be imported, the package imports and plays (``import uno_mk_env`` registers the Gymnasium id only
when gymnasium is installed). Its source never prints and never touches the global RNGs
(``random``, ``np.random.*`` functions): one ``numpy.random.Generator`` per game.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

import uno_mk_env

PACKAGE = Path(uno_mk_env.__file__).resolve().parent
#: The engine: the package's entry point and every module of the rules engine.
ENGINE_FILES = ("__init__.py",
                *sorted(f"engine/{p.name}" for p in (PACKAGE / "engine").glob("*.py")))

#: ``numpy.random`` names that are not global-state functions.
NUMPY_RANDOM_OK = {"Generator", "default_rng", "SeedSequence", "BitGenerator", "PCG64",
                   "PCG64DXSM", "Philox", "SFC64", "MT19937"}

PROBE = """
import json, sys
for name in ("gymnasium", "gym", "pettingzoo", "torch", "stable_baselines3", "sb3_contrib"):
    sys.modules[name] = None  # cannot be imported: the engine must not need them
import numpy
numpy.random.default_rng(0).permutation(3)  # loads numpy.random's compiled modules
with_numpy = set(sys.modules)
import uno_mk_env
import uno_mk_env.engine.game
g = uno_mk_env.Game(uno_mk_env.Rules(num_players=3), seed=1)
g.step(g.legal_action_ids()[0])
print(json.dumps({"all": sorted(sys.modules), "new": sorted(set(sys.modules) - with_numpy)}))
"""


def test_engine_import_pulls_in_no_rl_library() -> None:
    """A fresh interpreter without the RL libraries: import the engine, play a step, list
    ``sys.modules``."""
    out = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120, check=True,
        cwd=PACKAGE.parent,
    )
    modules = json.loads(out.stdout)
    assert "uno_mk_env.engine.game" in modules["all"]
    # Beyond what numpy itself loads, only the standard library and the package itself.
    new_roots = {m.split(".")[0] for m in modules["new"]}
    third_party = new_roots - set(sys.stdlib_module_names) - {"uno_mk_env", "numpy"}
    assert not third_party, f"the engine needs only numpy, but imported {sorted(third_party)}"


def _source(name: str) -> str:
    return (PACKAGE / name).read_text(encoding="utf-8")


@pytest.mark.parametrize("name", ENGINE_FILES)
def test_engine_source_never_prints(name: str) -> None:
    tree = ast.parse(_source(name))
    calls = [node.lineno for node in ast.walk(tree)
             if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
             and node.func.id == "print"]
    assert not calls, f"{name}: print() at line(s) {calls}"
    assert "print(" not in _code_only(name), f"{name}: 'print(' in the code"


@pytest.mark.parametrize("name", ENGINE_FILES)
def test_engine_source_uses_no_global_rng(name: str) -> None:
    """docs/api.md#randomness: never ``random`` or the ``np.random.*`` functions."""
    tree = ast.parse(_source(name))
    problems = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            problems += [f"import {a.name}" for a in node.names if a.name == "random"]
        elif isinstance(node, ast.ImportFrom):
            if node.module == "random":
                problems.append("from random import ...")
            elif node.module == "numpy.random":
                problems += [f"from numpy.random import {a.name}" for a in node.names
                             if a.name not in NUMPY_RANDOM_OK]
        elif isinstance(node, ast.Attribute) and node.attr not in NUMPY_RANDOM_OK:
            value = node.value
            if (isinstance(value, ast.Attribute) and value.attr == "random"
                    and isinstance(value.value, ast.Name) and value.value.id in ("np", "numpy")):
                problems.append(f"{value.value.id}.random.{node.attr} (line {node.lineno})")
    assert not problems, f"{name}: global RNG use: {problems}"
    code = _code_only(name)
    for text in ("np.random.seed", "np.random.randint", "import random", "np.random.rand"):
        assert text not in code, f"{name}: {text!r}"


def _code_only(name: str) -> str:
    """The file's source without comments and docstrings (string constants used as statements),
    so that documentation may mention what the code must not do."""
    source = _source(name)
    tree = ast.parse(source)
    lines = source.splitlines()
    for node in ast.walk(tree):
        if (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, str)):
            for i in range(node.lineno - 1, node.end_lineno):
                lines[i] = ""
    return "\n".join(line.split("#", 1)[0] for line in lines)
