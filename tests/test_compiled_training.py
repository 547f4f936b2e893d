"""The fast backend's training tables on the compiled core against themselves on the Python
engine (the reference): an opponent pool that always plays one agent ignoring its seed
(``greedy`` or ``strategic``, no self-play: the default ``--opponents strategic``) runs inside
the core, and the rollouts are identical, table for table; any other pool keeps the tables on
the Python engine.

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


@pytest.mark.parametrize(("opponents", "players", "reward"), [
    ("strategic", 2, "win"), ("strategic", 4, "points"), ("greedy", 3, "win")])
def test_deterministic_pools_run_inside_the_core(monkeypatch: pytest.MonkeyPatch,
                                                 opponents: str, players: int,
                                                 reward: str) -> None:
    tables = Tables(num_players=players, seed=7, opponents=opponents, reward=reward,
                    max_steps=300)
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
    {"opponents": "strategic,greedy"}, {"opponents": "random"},
    {"opponents": "strategic", "self_play_prob": 0.2}])
def test_other_pools_stay_on_the_python_engine(monkeypatch: pytest.MonkeyPatch,
                                               changes: dict) -> None:
    tables = Tables(**{"num_players": 2, "seed": 1, **changes})
    assert rollouts(monkeypatch, "compiled", tables).venv.engine == "python"
