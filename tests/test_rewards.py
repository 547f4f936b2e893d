"""The reward and seed-derivation homes (``uno_mk_env.rewards``, ``uno_mk_env.seeding``)."""

from __future__ import annotations

import pytest

from uno_mk_env.rewards import win_reward, win_rewards
from uno_mk_env.rules import MAX_PLAYERS, MIN_PLAYERS
from uno_mk_env.seeding import derive_seed


@pytest.mark.parametrize("n", range(MIN_PLAYERS, MAX_PLAYERS + 1))
def test_win_rewards_are_zero_sum_for_every_table_size(n: int) -> None:
    for winner in range(n):
        rewards = win_rewards(n, winner)
        assert rewards[winner] == 1.0 and sum(rewards) == pytest.approx(0.0)
        assert all(r == pytest.approx(-1 / (n - 1)) for s, r in enumerate(rewards) if s != winner)
    assert win_rewards(n, None) == [0.0] * n
    assert win_reward(n, None, 0) == 0.0


def test_derived_seeds_depend_only_on_root_and_key() -> None:
    assert derive_seed(7, 1, 2) == derive_seed(7, 1, 2)
    seeds = {derive_seed(root, *key) for root in range(5) for key in [(0,), (1,), (0, 1), (1, 0)]}
    assert len(seeds) == 20
