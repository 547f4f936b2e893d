"""The reward and seed-derivation homes (``uno_mk_env.engine.rewards``,
``uno_mk_env.engine.seeding``)."""

from __future__ import annotations

import pytest

from uno_mk_env.engine.rewards import expected_win_rewards, loss_reward, win_reward, win_rewards
from uno_mk_env.engine.rules import MAX_PLAYERS, MIN_PLAYERS
from uno_mk_env.engine.seeding import derive_seed


@pytest.mark.parametrize("n", range(MIN_PLAYERS, MAX_PLAYERS + 1))
def test_win_rewards_are_zero_sum_for_every_table_size(n: int) -> None:
    for winner in range(n):
        rewards = win_rewards(n, winner)
        assert rewards[winner] == 1.0 and sum(rewards) == pytest.approx(0.0)
        assert all(r == pytest.approx(-1 / (n - 1)) for s, r in enumerate(rewards) if s != winner)
    assert win_rewards(n, None) == [0.0] * n
    assert win_reward(n, None, 0) == 0.0


@pytest.mark.parametrize("n", range(MIN_PLAYERS, MAX_PLAYERS + 1))
def test_expected_win_rewards_are_win_rewards_averaged_over_the_winner(n: int) -> None:
    """The search agents' cut-off value: the win reward's expectation under P(s) ∝ weights[s]."""
    weights = [float(s + 1) for s in range(n)]
    expected = [sum(w / sum(weights) * win_reward(n, winner, s) for winner, w in enumerate(weights))
                for s in range(n)]
    assert expected_win_rewards(weights) == pytest.approx(expected, abs=1e-12)
    assert sum(expected_win_rewards(weights)) == pytest.approx(0.0, abs=1e-12)
    certain = [0.0] * n
    certain[n - 1] = 5.0
    assert expected_win_rewards(certain) == pytest.approx(win_rewards(n, n - 1), abs=1e-15)
    assert loss_reward(n) == win_reward(n, 0, 1) == -1.0 / (n - 1)


@pytest.mark.parametrize("n", [0, 1])
def test_loss_reward_refuses_a_table_without_opponents(n: int) -> None:
    with pytest.raises(ValueError, match=f"at least 2 players, not {n}"):
        loss_reward(n)


def test_derived_seeds_depend_only_on_root_and_key() -> None:
    assert derive_seed(7, 1, 2) == derive_seed(7, 1, 2)
    seeds = {derive_seed(root, *key) for root in range(5) for key in [(0,), (1,), (0, 1), (1, 0)]}
    assert len(seeds) == 20
