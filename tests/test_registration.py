"""The registries (uno_mk_env.registration): importing the package registers the env with
PettingZoo's registry, so ``pettingzoo.make("aec", "uno_mario_kart_v0", ...)`` builds the package's
AEC env with the given arguments whichever was imported first; registering twice changes
nothing; no import hook is installed; without pettingzoo nothing fails; a bad argument is the
env's own one-line error. (Gymnasium's registry: tests/test_packaging.py.) Each case runs in a
fresh interpreter, warnings as errors (a second registration would warn)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def run(code: str) -> str:
    """Runs ``code`` in a fresh interpreter (warnings are errors); returns its stdout."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-W", "error", "-c", textwrap.dedent(code)],
                          env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


MAKE_AND_CHECK = """
    env = pettingzoo.make("aec", "uno_mario_kart_v0", num_players=3, hand_size=5)
    from uno_mk_env.envs.aec import UnoMarioKartEnv
    assert isinstance(env.unwrapped, UnoMarioKartEnv), type(env.unwrapped)
    env.reset(seed=0)
    assert env.possible_agents == ["player_0", "player_1", "player_2"]
    assert env.unwrapped.game.rules.hand_size == 5
    assert len(pettingzoo.make("aec", "uno_mario_kart-v0").possible_agents) == 4  # either spelling
"""


@pytest.mark.parametrize("first", ["import uno_mk_env\nimport pettingzoo",
                                   "import pettingzoo\nimport uno_mk_env"])
def test_importing_the_package_registers_in_either_order(first: str) -> None:
    run("""
    import sys
    hooks = list(sys.meta_path)
    """ + first.replace("\n", "\n    ") + """
    from uno_mk_env import registration
    # no import hook: the one finder the package adds serves the 0.9.0 module paths
    assert [type(f).__name__ for f in sys.meta_path if f not in hooks] == ["_Alias"]
    assert registration.register_envs() == {"gymnasium": True, "pettingzoo": True}  # again
    assert pettingzoo.spec("aec", "uno_mario_kart_v0").entry_point == registration.PZ_ENTRY_POINT
    """ + MAKE_AND_CHECK)


def test_the_registered_env_passes_pettingzoo_api_test() -> None:
    pettingzoo = pytest.importorskip("pettingzoo")
    from pettingzoo.test import api_test

    import uno_mk_env  # noqa: F401  (registers)

    api_test(pettingzoo.make("aec", "uno_mario_kart_v0", num_players=2), num_cycles=50)


def test_a_bad_argument_is_the_envs_one_line_error() -> None:
    out = run("""
    import pettingzoo
    import uno_mk_env
    try:
        pettingzoo.make("aec", "uno_mario_kart_v0", max_cycles=100)
    except uno_mk_env.RulesError as e:
        print(e)
    """)
    assert out.startswith("unknown rule option 'max_cycles'") and out.count("\n") == 1, out


def test_without_the_libraries_nothing_is_registered_and_nothing_fails() -> None:
    out = run("""
    import sys
    sys.modules["pettingzoo"] = sys.modules["gymnasium"] = None  # as if not installed
    from uno_mk_env import registration
    print(registration.register_envs())
    """)
    assert out.strip() == "{'gymnasium': False, 'pettingzoo': False}"
