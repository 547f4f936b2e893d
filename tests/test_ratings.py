"""Ratings fitted on all games at once (``uno_mk_env.evaluation.ratings``): a Plackett–Luce
maximum-likelihood fit of the finishing orders with deal-clustered intervals.

The rating used to be an openskill rating updated game by game, so the same games in another
order ranked the agents differently; the fit here is a function of the set of games.
"""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from uno_mk_env.evaluation.ratings import PRIOR_SD, Z95, fit_plackett_luce, rating_rows
from uno_mk_env.evaluation.tournament import TournamentResult, run_tournament


def _pl_sample(rng: np.random.Generator, strengths: np.ndarray, entrants) -> list[int]:
    """Places of ``entrants`` drawn from a Plackett–Luce model."""
    left = list(entrants)
    order = []
    while left:
        w = np.exp(strengths[left])
        order.append(left.pop(int(rng.choice(len(left), p=w / w.sum()))))
    return [order.index(e) + 1 for e in entrants]


def _games(n: int, strengths: list[float], seats: int, seed: int = 0) -> list[tuple]:
    rng = np.random.default_rng(seed)
    s = np.array(strengths)
    games = []
    for i in range(n):
        entrants = [int(e) for e in rng.choice(len(s), seats, replace=False)]
        games.append((i, entrants, _pl_sample(rng, s, entrants)))
    return games


# ------------------------------------------------------------------------------- the model
def test_two_players_is_bradley_terry_closed_form() -> None:
    """a beats b in 30 of 40 games: the MLE gap is log(30/10) (the weak prior moves it by less
    than 1e-3)."""
    games = [(i, [0, 1], [1, 2] if i < 30 else [2, 1]) for i in range(40)]
    theta, _ = fit_plackett_luce(2, games)
    assert theta[0] - theta[1] == pytest.approx(math.log(3), abs=1e-3)
    assert theta.sum() == pytest.approx(0.0, abs=1e-12)


def test_matches_a_direct_maximisation_of_the_likelihood() -> None:
    """The Newton fit equals scipy's minimisation of the written-out negative log-posterior
    (Plackett–Luce with Breslow ties, Gaussian prior)."""
    from scipy.optimize import minimize

    games = _games(300, [0.6, 0.0, -0.4, 0.2, -0.1], seats=3, seed=1)
    games += [(300, [0, 1, 2], [1, 2, 2]), (301, [3, 4, 1], [2, 2, 1])]  # ties

    def nll(theta: np.ndarray) -> float:
        total = 0.0
        for _, entrants, places in games:
            left = list(zip(places, entrants))
            for place in sorted(set(places)):
                group = [e for p, e in left if p == place]
                if len(group) == len(left):
                    break
                denom = math.log(sum(math.exp(theta[e]) for _, e in left))
                total += sum(theta[e] for e in group) - len(group) * denom
                left = [(p, e) for p, e in left if p != place]
        return -total + (theta**2).sum() / (2 * PRIOR_SD**2)

    direct = minimize(nll, np.zeros(5), method="BFGS", options={"gtol": 1e-9}).x
    theta, _ = fit_plackett_luce(5, games)
    # BFGS stops early along the prior's very flat direction (a common shift): compare gaps
    np.testing.assert_allclose(theta - theta[0], direct - direct[0], atol=1e-5)
    assert nll(theta) <= nll(direct) + 1e-9


def test_recovers_known_strengths_within_its_intervals() -> None:
    true = np.array([0.5, 0.0, -0.5, 0.2])
    theta, se = fit_plackett_luce(4, _games(6000, list(true), seats=3, seed=2))
    centred = true - true.mean()
    assert np.all(np.abs(theta - centred) < 4 * se)
    assert np.all(se < 0.05)


def test_a_game_everyone_ties_adds_nothing() -> None:
    games = _games(200, [0.3, 0.0, -0.3], seats=3, seed=3)
    with_ties = games + [(999, [0, 1, 2], [1, 1, 1])]
    np.testing.assert_array_equal(fit_plackett_luce(3, games)[0],
                                  fit_plackett_luce(3, with_ties)[0])


def test_games_of_one_deal_are_one_cluster() -> None:
    """Every game played twice: as two games of the same deal the interval does not shrink
    (they are one observation twice); as independent deals it shrinks by sqrt(2)."""
    games = _games(400, [0.4, 0.0, -0.4], seats=2, seed=4)
    theta1, se1 = fit_plackett_luce(3, games)
    same_deal = games + games
    theta2, se2 = fit_plackett_luce(3, same_deal)
    new_deals = games + [(1000 + c, e, p) for c, e, p in games]
    theta3, se3 = fit_plackett_luce(3, new_deals)
    np.testing.assert_allclose(theta2, theta3)
    np.testing.assert_allclose(theta2, theta1, atol=2e-3)  # the prior weighs half as much
    np.testing.assert_allclose(se2, se1, rtol=2e-2)
    np.testing.assert_allclose(se3, se1 / math.sqrt(2), rtol=2e-2)


def test_an_unbeaten_entrant_stays_finite() -> None:
    theta, se = fit_plackett_luce(2, [(i, [0, 1], [1, 2]) for i in range(20)])
    assert np.all(np.isfinite(theta)) and theta[0] > 3 and np.all(np.isfinite(se))


def test_bad_input_is_named() -> None:
    with pytest.raises(ValueError, match="out of range 0-1"):
        fit_plackett_luce(2, [(0, [0, 2], [1, 2])])
    with pytest.raises(ValueError, match="2 entrants but 3 places"):
        fit_plackett_luce(2, [(0, [0, 1], [1, 2, 3])])


# ------------------------------------------------------------------------ the leaderboard
def test_ratings_are_identical_for_any_order_of_the_games() -> None:
    """The issue's finding: an openskill rating updated game by game ranked agents differently
    when the same games came in another order. The fit sees the set of games: bit-identical."""
    result = run_tournament(["greedy", "strategic", "random"], 3, 60, seed=90210,
                            rules={"uno": "off"})
    base = [(r["agent"], r["rating"], r["rating_ci_low"], r["rating_ci_high"])
            for r in result.leaderboard()]
    rnd = random.Random(0)
    for _ in range(5):
        records = list(result.records)
        rnd.shuffle(records)
        shuffled = TournamentResult(config=result.config, entrants=result.entrants,
                                    records=records)
        assert [(r["agent"], r["rating"], r["rating_ci_low"], r["rating_ci_high"])
                for r in shuffled.leaderboard()] == base


def test_rating_rows_use_the_deal_as_cluster_and_a_95_percent_interval() -> None:
    result = run_tournament(["greedy", "random"], 2, 40, seed=3)
    rows = rating_rows(result.entrants, result.records)
    theta, se = fit_plackett_luce(2, [(r.deal, r.seats, r.places) for r in result.records])
    for row, t, s in zip(rows, theta, se):
        assert row["rating"] == t
        assert row["rating_ci_low"] == pytest.approx(t - Z95 * s)
        assert row["rating_ci_high"] == pytest.approx(t + Z95 * s)
