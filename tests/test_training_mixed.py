"""The fast backend's mixed table sizes and place rewards (uno_mk_env.training.mixed_tables):
each table keeps a size given by its index, the sizes share the tables by weight, the rollouts
do not depend on how the tables are split over processes, and the place rewards are paid at
the end of a game as the sb3 backend's training env pays them."""

from __future__ import annotations

import dataclasses
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("torch")

from uno_mk_env.agents.numpy_actor import OBS_SCALE  # noqa: E402
from uno_mk_env.engine.rewards import place_reward, win_place_reward  # noqa: E402
from uno_mk_env.training.args import TrainingError  # noqa: E402
from uno_mk_env.training.envs import Tables  # noqa: E402
from uno_mk_env.training.mixed_tables import (  # noqa: E402
    MixedTables,
    make_training_tables,
    size_of_table,
)
from uno_mk_env.training.ppo_fast import Args, train  # noqa: E402

MIX = "2,3,4,6,10"


def _tables(**kw: Any) -> Tables:
    return Tables.of(dataclasses.replace(Args(), seed=7, **kw))


def test_sizes_share_the_tables_by_weight() -> None:
    equal = Counter(size_of_table(i, [2, 3, 4, 6, 10], [0.2] * 5) for i in range(64))
    assert set(equal) == {2, 3, 4, 6, 10} and all(12 <= c <= 14 for c in equal.values())
    weighted = Counter(size_of_table(i, [2, 4], [0.75, 0.25]) for i in range(64))
    assert 46 <= weighted[2] <= 50 and weighted[2] + weighted[4] == 64
    # a worker's share of the tables has the sizes the whole run gives those indices
    whole = MixedTables(_tables(table_sizes=MIX), 10)
    part = MixedTables(_tables(table_sizes=MIX), 4, first=6)
    assert part.sizes.tolist() == whole.sizes[6:10].tolist()


def test_plain_tables_stay_the_vector_env() -> None:
    from uno_mk_env.envs.vector import UnoMarioKartVectorEnv

    venv, _ = make_training_tables(_tables(), 3)
    assert isinstance(venv, UnoMarioKartVectorEnv) and venv.rules.num_players == 2
    one_other_size, _ = make_training_tables(_tables(table_sizes="4"), 3)
    assert isinstance(one_other_size, MixedTables) and set(one_other_size.sizes) == {4}


def _rollouts(tables: Tables, n_steps: int) -> tuple[Any, Any]:
    from uno_mk_env.training.network import ActorCritic, actor_layers
    from uno_mk_env.training.rollouts import ProcessRollouts, TableRollouts

    local = TableRollouts(tables, 10)
    procs = ProcessRollouts(tables, 10, workers=2)
    layers = actor_layers(ActorCritic([16], "tanh"))
    try:
        for add in (local.league.add, procs.league.add):
            assert add("models/ppo_4p.npz", 3) == 1
        local.reset(5)
        procs.reset(5)
        a = local.rollout(layers, "tanh", OBS_SCALE, n_steps)
        b = procs.rollout(layers, "tanh", OBS_SCALE, n_steps)
    finally:
        procs.close()
    return a, b, local.venv.sizes


def test_mixed_rollouts_pay_the_place_reward_and_do_not_depend_on_the_split() -> None:
    w = 0.3
    tables = _tables(table_sizes=MIX, reward="win_place", place_weight=w, self_play_prob=0.5)
    a, b, sizes = _rollouts(tables, 80)
    for key in ("obs", "masks", "actions", "rewards", "dones", "last_obs", "last_masks"):
        np.testing.assert_array_equal(getattr(a, key), getattr(b, key), err_msg=key)
    assert a.episodes == b.episodes and len(a.episodes) >= 5
    assert {int(sizes[j]) for _, j, *_ in a.episodes} >= {2, 3}
    assert all(a.masks[t, j, a.actions[t, j]] for t in range(80) for j in range(10))
    paid = set()
    for t, j, ret, _, place in a.episodes:
        n = int(sizes[j])
        winner = 0 if place == 1 else 1  # the learner (seat 0 here) won iff it placed first
        expected = win_place_reward(n, winner, 0, place, w)
        assert a.rewards[t, j] == pytest.approx(expected) and ret == pytest.approx(expected)
        paid.add(round(expected, 6))
    assert len(paid) >= 3  # places other than first and last are paid between them
    ended = np.zeros(a.rewards.shape, bool)
    for t, j, *_ in a.episodes:
        ended[t, j] = True
    assert not a.rewards[~ended].any()  # nothing before the end of a game


def test_the_place_reward_alone() -> None:
    a, _, sizes = _rollouts(_tables(table_sizes="3,4", reward="place"), 60)
    assert a.episodes
    for t, j, _ret, _, place in a.episodes:
        assert a.rewards[t, j] == pytest.approx(place_reward(int(sizes[j]), place))


def test_a_tiny_mixed_run_and_its_refusals(tmp_path: Path) -> None:
    args = dataclasses.replace(
        Args(), n_envs=5, n_steps=8, total_timesteps=80, batch_size=20, n_epochs=1,
        net_arch="16", eval_games=2, final_eval_games=2, eval_every=0, progress=False,
        env_workers=0, bc_teacher="strategic", bc_steps=200, bc_epochs=1, num_players=4,
        table_sizes="2,4,10", reward="win_place", place_weight=0.25,
        runs_dir=str(tmp_path / "runs"))
    summary = train(args)
    assert summary["complete"] and summary["timesteps"] == 80
    assert summary["final_eval"] and summary["final_eval"][0]["players"] == 4
    for change, message in [({"table_sizes": "2,11"}, "--table-sizes '2,11': 11 is not one"),
                            ({"place_weight": 0.2, "reward": "win"}, "--place-weight 0.2"),
                            ({"reward": "bogus"}, "--reward")]:
        with pytest.raises(TrainingError, match=message):
            train(dataclasses.replace(args, runs_dir=str(tmp_path / "refused"), **change))
    assert not (tmp_path / "refused").exists()
