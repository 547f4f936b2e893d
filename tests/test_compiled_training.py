"""The fast backend's training tables on the compiled core against themselves on the Python
engine (the reference): opponent pools of agents with compiled twins and no self-play (the
default ``--opponents strategic``, and weighted pools of ``random``, ``greedy`` and
``strategic``) run inside the core, and the rollouts are identical, table for table; a pool
with self-play or an agent without a twin keeps the tables on the Python engine.

Skips as ``tests/test_compiled_lockstep.py`` does.
"""

from __future__ import annotations

import pytest

pytest.importorskip("torch")  # the train extra (the actor's layers come from a torch module)

import numpy as np  # noqa: E402

from tests.test_compiled_lockstep import load_core  # noqa: E402
from uno_mk_env.agents.numpy_actor import OBS_SCALE  # noqa: E402
from uno_mk_env.compiled import ENGINE_VARIABLE  # noqa: E402
from uno_mk_env.training.envs import Tables  # noqa: E402
from uno_mk_env.training.network import ActorCritic, actor_layers  # noqa: E402
from uno_mk_env.training.rollouts import TableRollouts  # noqa: E402

load_core()


def rollouts(monkeypatch: pytest.MonkeyPatch, engine: str, tables: Tables,
             snapshot: bool = False) -> TableRollouts:
    monkeypatch.setenv(ENGINE_VARIABLE, engine)
    out = TableRollouts(tables, 5)
    if snapshot:
        out.league.add("models/ppo_2p.npz", 3)  # never played without self-play
    out.reset(tables.seed)
    return out


@pytest.mark.parametrize(("opponents", "weights", "players", "reward"), [
    ("strategic", "", 2, "win"), ("strategic", "", 4, "points"), ("greedy", "", 3, "win"),
    ("random", "", 2, "win"), ("strategic,greedy,random", "0.45,0.45,0.1", 2, "win"),
    ("random,strategic", "", 3, "points"), ("greedy,strategic,random", "0,1,3", 4, "win")])
def test_pools_without_self_play_run_inside_the_core(monkeypatch: pytest.MonkeyPatch,
                                                     opponents: str, weights: str,
                                                     players: int, reward: str) -> None:
    tables = Tables(num_players=players, seed=7, opponents=opponents,
                    opponent_weights=weights, reward=reward, max_steps=300)
    py = rollouts(monkeypatch, "python", tables)
    c = rollouts(monkeypatch, "compiled", tables, snapshot=True)
    assert (py.venv.engine, c.venv.engine) == ("python", "compiled")
    layers = actor_layers(ActorCritic([16], "tanh"))
    episodes = 0
    for _ in range(3):
        a = py.rollout(layers, "tanh", OBS_SCALE, 80)
        b = c.rollout(layers, "tanh", OBS_SCALE, 80)
        for key in ("obs", "masks", "actions", "rewards", "dones", "last_obs", "last_masks"):
            np.testing.assert_array_equal(getattr(a, key), getattr(b, key), err_msg=key)
        assert a.episodes == b.episodes
        assert [(t, j) for t, j, _ in a.truncated] == [(t, j) for t, j, _ in b.truncated]
        episodes += len(a.episodes)
    assert episodes >= 5


@pytest.mark.parametrize("changes", [
    {"opponents": "strategic", "self_play_prob": 0.2},
    {"opponents": "strategic,ismcts:5"}])
def test_other_pools_stay_on_the_python_engine(monkeypatch: pytest.MonkeyPatch,
                                               changes: dict) -> None:
    tables = Tables(**{"num_players": 2, "seed": 1, **changes})
    assert rollouts(monkeypatch, "compiled", tables).venv.engine == "python"
