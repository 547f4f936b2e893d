"""PettingZoo's env registry (uno_mk_env.registration_pz): after the registration,
``pettingzoo.make("aec", "uno_mario_kart_v0", ...)`` builds the package's AEC env with the given
arguments, whether pettingzoo was imported before or after; registering twice changes nothing;
importing the package or registering never imports pettingzoo by itself; a bad argument is the
env's own one-line error. Each case runs in a fresh interpreter (the import hook and
PettingZoo's registry are per process)."""

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
    from uno_mk_env.env import UnoMarioKartEnv
    assert isinstance(env.unwrapped, UnoMarioKartEnv), type(env.unwrapped)
    env.reset(seed=0)
    assert env.possible_agents == ["player_0", "player_1", "player_2"]
    assert env.unwrapped.game.rules.hand_size == 5
    assert len(pettingzoo.make("aec", "uno_mario_kart-v0").possible_agents) == 4  # either spelling
"""


def test_registered_when_pettingzoo_is_imported_after() -> None:
    run("""
    import sys
    from uno_mk_env import registration_pz
    registration_pz.register_when_pettingzoo_imports()
    assert "pettingzoo" not in sys.modules
    import pettingzoo
    assert "uno_mario_kart-v0" in pettingzoo.aec_registry
    """ + MAKE_AND_CHECK)


def test_registered_when_pettingzoo_was_imported_before_and_only_once() -> None:
    run("""
    import pettingzoo
    from uno_mk_env import registration_pz
    registration_pz.register_when_pettingzoo_imports()
    registration_pz.register_when_pettingzoo_imports()  # no "Overriding" warning (-W error)
    assert registration_pz.register_pettingzoo_env()
    assert pettingzoo.spec("aec", "uno_mario_kart_v0").entry_point == registration_pz.ENTRY_POINT
    """ + MAKE_AND_CHECK)


def test_the_registered_env_passes_pettingzoo_api_test() -> None:
    pettingzoo = pytest.importorskip("pettingzoo")
    from pettingzoo.test import api_test

    from uno_mk_env import registration_pz

    assert registration_pz.register_pettingzoo_env()
    api_test(pettingzoo.make("aec", "uno_mario_kart_v0", num_players=2), num_cycles=50)


def test_a_bad_argument_is_the_envs_one_line_error() -> None:
    out = run("""
    import pettingzoo
    from uno_mk_env import registration_pz
    from uno_mk_env.rules import RulesError
    registration_pz.register_pettingzoo_env()
    try:
        pettingzoo.make("aec", "uno_mario_kart_v0", max_cycles=100)
    except RulesError as e:
        print(e)
    """)
    assert out.startswith("unknown rule option 'max_cycles'") and out.count("\n") == 1, out


def test_without_pettingzoo_nothing_is_registered_and_nothing_fails() -> None:
    run("""
    import sys
    sys.modules["pettingzoo"] = None  # as if not installed
    from uno_mk_env import registration_pz
    assert registration_pz.register_pettingzoo_env() is False
    registration_pz.register_when_pettingzoo_imports()
    """)
