"""The vector envs on the compiled core against themselves on the Python engine (the reference):
seed for seed and action for action, ``UnoMarioKartVectorEnv`` (every autoreset mode, partial
resets, illegal actions, truncation) and ``SelfPlayVectorEnv`` give identical observations,
masks, rewards, terminations, truncations and infos (final observations, outcomes, episode
statistics) and identical games, over whole episodes at 2-10 players against uniform,
``random``, ``greedy`` and ``strategic`` opponents. Opponents without a compiled twin keep the
env on the Python engine.

Skips as ``tests/test_compiled_lockstep.py`` does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

from tests.test_compiled_lockstep import load_core
from uno_mk_env.agents.base import build_agent
from uno_mk_env.agents.rule_based import GreedyAgent, StrategicAgent, StrategicParams
from uno_mk_env.compiled import ENGINE_VARIABLE
from uno_mk_env.engine.seeding import derive_seed
from uno_mk_env.envs.self_play import SelfPlayVectorEnv
from uno_mk_env.envs.vector import UnoMarioKartVectorEnv

load_core()

OPPONENTS: dict[str, Callable[[int, int], Any] | None] = {
    "uniform": None,
    "random": lambda i, n: build_agent("random", seed=derive_seed(3, i)),
    "greedy": lambda i, n: build_agent("greedy", seed=derive_seed(4, i)),
    "strategic": lambda i, n: build_agent("strategic", seed=derive_seed(5, i)),
    "mixed": lambda i, n: [None if s % 4 == 3 else build_agent(
        ("strategic", "random", "greedy")[s % 3], seed=derive_seed(6, i, s)) for s in range(n - 1)],
}


def make(engine: str, monkeypatch: pytest.MonkeyPatch, factory: Callable[..., Any],
         *args: Any, **kwargs: Any) -> Any:
    monkeypatch.setenv(ENGINE_VARIABLE, engine)
    env = factory(*args, **kwargs)
    assert env.engine == engine
    return env


def assert_same(a: Any, b: Any, where: str) -> None:
    """``a == b`` for the envs' outputs: arrays (dtype included), tuples and dicts of them,
    object arrays of arrays or ``None``."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys(), (where, a.keys(), b.keys())
        for key in a:
            assert_same(a[key], b[key], f"{where}[{key!r}]")
    elif isinstance(a, tuple):
        assert isinstance(b, tuple) and len(a) == len(b), where
        for k, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{where}[{k}]")
    elif isinstance(a, np.ndarray) and a.dtype == object:
        assert b.dtype == object and a.shape == b.shape, where
        for x, y in zip(a, b):
            assert (x is None and y is None) or np.array_equal(x, y), where
    else:
        a, b = np.asarray(a), np.asarray(b)
        assert a.dtype == b.dtype and a.shape == b.shape, (where, a.dtype, b.dtype)
        np.testing.assert_array_equal(a, b, err_msg=where)


def choose(rng: np.random.Generator, masks: np.ndarray, illegal: bool) -> np.ndarray:
    actions = np.array([rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in masks])
    if illegal and masks[0].any():
        actions[0] = np.flatnonzero(~masks[0])[0]
    return actions


def same_games(envs: list[Any]) -> None:
    dicts = [[g.to_dict() for g in env.games()] for env in envs]
    assert dicts[0] == dicts[1]


@pytest.mark.parametrize("mode", list(AutoresetMode), ids=lambda m: m.name)
@pytest.mark.parametrize(("num_players", "opponents"), [
    (2, "uniform"), (2, "strategic"), (3, "greedy"), (4, "mixed"), (5, "random"),
    (7, "strategic"), (10, "mixed")])
def test_learner_vector_env_is_the_same_on_both_engines(
        mode: AutoresetMode, num_players: int, opponents: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    factory = OPPONENTS[opponents]
    num_envs, steps = 4, 160 if num_players <= 5 else 90
    seed = derive_seed(11, num_players, list(AutoresetMode).index(mode))
    opts = {"hand_size": 4 if num_players > 5 else 7, "max_steps": 120,
            "reward": "points" if num_players % 2 else "win", "autoreset_mode": mode,
            "illegal_action_penalty": -2.5}
    envs = [make(engine, monkeypatch, UnoMarioKartVectorEnv, num_envs, num_players,
                 opponents=None if factory is None else lambda i: factory(i, num_players),
                 **opts) for engine in ("python", "compiled")]
    results = [env.reset(seed=seed) for env in envs]
    assert_same(results[0], results[1], "reset")
    rng = np.random.default_rng(seed)
    ended = 0
    for step in range(steps):
        masks = envs[0].action_masks()
        assert_same(masks, envs[1].action_masks(), f"masks, step {step}")
        actions = choose(rng, masks, illegal=step % 37 == 36)
        results = [env.step(actions) for env in envs]
        assert_same(results[0], results[1], f"step {step}")
        done = results[0][2] | results[0][3]
        ended += int(done.sum())
        if mode == AutoresetMode.DISABLED and done.any():
            seeds = [int(rng.integers(2**32)) if rng.random() < 0.5 else None
                     for _ in range(num_envs)]
            results = [env.reset(seed=seeds, options={"reset_mask": done}) for env in envs]
            assert_same(results[0], results[1], f"reset_mask, step {step}")
        if step % 40 == 0:
            same_games(envs)
    same_games(envs)
    assert ended >= num_envs  # whole episodes, ended and dealt again


@pytest.mark.parametrize("num_players", [2, 3, 4, 6, 10])
def test_self_play_vector_env_is_the_same_on_both_engines(
        num_players: int, monkeypatch: pytest.MonkeyPatch) -> None:
    opts = {"reward": "points" if num_players % 2 else "win", "max_steps": 150,
            "hand_size": 5}
    envs = [make(engine, monkeypatch, SelfPlayVectorEnv, 4, num_players, **opts)
            for engine in ("python", "compiled")]
    results = [env.reset(seed=[derive_seed(12, num_players), 2**64 - 1, 3, 0]) for env in envs]
    assert_same(results[0], results[1], "reset")
    rng = np.random.default_rng(num_players)
    ended = 0
    for step in range(300):
        actions = choose(rng, envs[0].action_masks(), illegal=False)
        results = [env.step(actions) for env in envs]
        assert_same(results[0], results[1], f"step {step}")
        ended += int((results[0][2] | results[0][3]).sum())
    same_games(envs)
    assert ended >= 4


def test_opponents_without_a_compiled_twin_stay_on_the_python_engine(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENGINE_VARIABLE, "auto")
    shared = build_agent("strategic", seed=1)

    class Subclass(StrategicAgent):
        pass

    tuned = StrategicParams(trust=0.5)
    python = {
        "a subclass": lambda i: Subclass(seed=i),
        "an agent shared between tables": lambda i: shared,
        "two strategic weightings": lambda i: [StrategicAgent(i, tuned), StrategicAgent(i)],
        "a greedy setting the core lacks": lambda i: GreedyAgent(seed=i, challenge_hand=3),
        "different kinds per table": lambda i: build_agent(("random", "greedy")[i % 2], seed=i),
        "a callable policy": lambda i: lambda obs, mask, view: int(np.flatnonzero(mask)[0]),
    }
    for why, factory in python.items():
        assert UnoMarioKartVectorEnv(2, 3, opponents=factory).engine == "python", why
    compiled = UnoMarioKartVectorEnv(2, 3, opponents=lambda i: [StrategicAgent(i, tuned)] * 2)
    assert compiled.engine == "compiled"
    with pytest.raises(RuntimeError, match="compiled core"):
        compiled.tables  # noqa: B018
    monkeypatch.setenv(ENGINE_VARIABLE, "python")
    assert UnoMarioKartVectorEnv(2, 3).engine == "python"
    assert SelfPlayVectorEnv(2, 3).engine == "python"
