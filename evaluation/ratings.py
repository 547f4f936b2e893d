"""Ratings fitted on all games at once: a Plackett–Luce maximum-likelihood fit of the finishing
orders, with confidence intervals.

Model
    Entrant ``i`` has a log-strength ``theta_i``. A game's finishing order is built from the top:
    at each place the players still unplaced are the *risk set* ``R`` and the players sharing
    that place the group ``G``; the group is drawn from ``R`` with probability
    ``prod_{i in G} exp(theta_i) / (sum_{j in R} exp(theta_j)) ** |G|`` (Plackett–Luce; ties by
    Breslow's approximation, as in Cox regression). A place shared by every player still
    unplaced says nothing about order and is skipped, so a game that everyone ties adds nothing.
    With two players this is the Bradley–Terry model: ``theta_a - theta_b`` is the log-odds
    that ``a`` places ahead of ``b``.

Fit
    Newton's method on the log-likelihood plus a weak Gaussian prior ``N(0, PRIOR_SD**2)`` on
    each ``theta`` (it keeps the fit finite when an entrant wins or loses every game, and fixes
    the scale's origin: the strengths have mean 0). The games are put in a canonical order first
    (by their index, then their contents), so the fit is a function of the *set* of games: the
    same games in any order give bit-identical ratings. (The openskill rating this replaces was
    updated game by game, so it depended on the order of the games.)

Confidence intervals
    95 % Wald intervals from a cluster-robust ("sandwich") covariance with the games of one
    deal as a cluster: duplicate deals replay the same cards with the seats rotated, so the
    games of a deal are not independent. The intervals are for each strength on the mean-0
    scale.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["PRIOR_SD", "Z95", "fit_plackett_luce", "rating_rows"]

#: Standard deviation of the Gaussian prior on each log-strength (weak: the data dominate).
PRIOR_SD = 10.0
#: Two-sided 95 % normal quantile.
Z95 = 1.959963984540054


def _stages(
    games: Sequence[tuple[int, Sequence[int], Sequence[int]]], k: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The Plackett–Luce stages of every game: risk-set masks ``(S, k)``, group masks ``(S, k)``,
    group sizes ``(S,)`` and the cluster index of each stage ``(S,)``."""
    risk_rows: list[np.ndarray] = []
    group_rows: list[np.ndarray] = []
    clusters: list[int] = []
    for cluster, entrants, places in games:
        remaining = list(zip(places, entrants))
        for place in sorted(set(places)):
            group = [e for p, e in remaining if p == place]
            if len(group) == len(remaining):
                break  # everyone left shares this place: no information about order
            risk = np.zeros(k)
            for _, e in remaining:
                risk[e] += 1.0
            grp = np.zeros(k)
            for e in group:
                grp[e] += 1.0
            risk_rows.append(risk)
            group_rows.append(grp)
            clusters.append(cluster)
            remaining = [(p, e) for p, e in remaining if p != place]
    if not risk_rows:
        return np.zeros((0, k)), np.zeros((0, k)), np.zeros(0), np.zeros(0, dtype=int)
    risk_m = np.array(risk_rows)
    group_m = np.array(group_rows)
    return risk_m, group_m, group_m.sum(axis=1), np.array(clusters)


def fit_plackett_luce(
    num_entrants: int,
    games: Sequence[tuple[Any, Sequence[int], Sequence[int]]],
    prior_sd: float = PRIOR_SD,
    max_iter: int = 100,
) -> tuple[np.ndarray, np.ndarray]:
    """Fits the log-strengths of ``num_entrants`` entrants (see the module docstring).

    Args:
        num_entrants: entrants are ``0 .. num_entrants - 1``.
        games: one ``(cluster, entrants, places)`` per game: ``entrants[s]`` sat at seat ``s``
            and finished at ``places[s]`` (1 = first; equal places are ties). ``cluster``
            groups games that are not independent (the deal); any sortable, hashable value.
        prior_sd: standard deviation of the Gaussian prior on each strength.
        max_iter: Newton iterations at most (it converges in about ten).

    Returns:
        ``(theta, se)``: the strengths (mean 0 up to the prior's pull) and their cluster-robust
        standard errors.

    Raises:
        ValueError: an entrant index out of range, or seats and places of different lengths.
    """
    k = num_entrants
    canon = []
    for cluster, entrants, places in games:
        if len(entrants) != len(places):
            raise ValueError(f"a game has {len(entrants)} entrants but {len(places)} places")
        if any(not 0 <= e < k for e in entrants):
            raise ValueError(f"entrant index out of range 0-{k - 1} in {list(entrants)}")
        canon.append((cluster, tuple(int(e) for e in entrants), tuple(int(p) for p in places)))
    canon.sort(key=lambda g: (repr(g[0]), g[1], g[2]))
    ids = {c: i for i, c in enumerate(dict.fromkeys(g[0] for g in canon))}
    risk, group, size, cluster = _stages([(ids[c], e, p) for c, e, p in canon], k)
    lam = 1.0 / prior_sd**2
    theta = np.zeros(k)
    wins = group.sum(axis=0)
    for _ in range(max_iter):
        w = risk * np.exp(theta - theta.max())
        prob = w / w.sum(axis=1, keepdims=True)
        grad = wins - size @ prob - lam * theta
        info = np.diag(size @ prob) - prob.T @ (prob * size[:, None]) + lam * np.eye(k)
        step = np.linalg.solve(info, grad)
        theta = theta + step
        if np.max(np.abs(step)) < 1e-12:
            break
    w = risk * np.exp(theta - theta.max())
    prob = w / w.sum(axis=1, keepdims=True)
    info = np.diag(size @ prob) - prob.T @ (prob * size[:, None]) + lam * np.eye(k)
    scores = group - prob * size[:, None]  # per-stage score vectors
    meat = np.zeros((k, k))
    if len(cluster):
        per_cluster = np.zeros((int(cluster.max()) + 1, k))
        np.add.at(per_cluster, cluster, scores)
        meat = per_cluster.T @ per_cluster
    bread = np.linalg.inv(info)
    cov = bread @ meat @ bread
    return theta, np.sqrt(np.clip(np.diag(cov), 0.0, None))


def rating_rows(
    entrants: Sequence[str], records: Sequence[Any]
) -> list[Mapping[str, float]]:
    """Per entrant: ``rating`` (Plackett–Luce log-strength, mean 0) and its 95 % interval
    ``rating_ci_low``/``rating_ci_high`` from tournament records (``deal``, ``seats``,
    ``places``; the deal is the cluster)."""
    theta, se = fit_plackett_luce(
        len(entrants), [(r.deal, r.seats, r.places) for r in records]
    )
    return [
        {"rating": float(t), "rating_ci_low": float(t - Z95 * s),
         "rating_ci_high": float(t + Z95 * s)}
        if math.isfinite(s) else {"rating": float(t), "rating_ci_low": -math.inf,
                                  "rating_ci_high": math.inf}
        for t, s in zip(theta, se)
    ]
