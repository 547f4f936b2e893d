"""Rewards (docs/api.md#rewards-and-episodes): one home for the numbers every part of the
project pays out — the env, the tournaments' mean reward and the search agents' rollouts.

Both reward modes are zero-sum for every player count.
"""

from __future__ import annotations

from typing import Any

__all__ = ["POINTS_SCALE", "REWARD_MODES", "round_rewards", "win_reward", "win_rewards"]

REWARD_MODES = ("win", "points")
#: ``reward="points"`` pays points / 100 (the observation's score unit too).
POINTS_SCALE = 100.0


def win_reward(num_players: int, winner: int | None, seat: int) -> float:
    """``reward="win"`` for ``seat``: +1 for the winner, −1/(N−1) for every other seat, 0 for
    all when there is no winner (a stalemate, a tied ``fixed_rounds`` game)."""
    if winner is None:
        return 0.0
    return 1.0 if seat == winner else -1.0 / (num_players - 1)


def win_rewards(num_players: int, winner: int | None) -> list[float]:
    """:func:`win_reward` of every seat."""
    return [win_reward(num_players, winner, s) for s in range(num_players)]


def round_rewards(game: Any, reward: str) -> list[float]:
    """Per-seat rewards of the step that just ended a round (``game.round_over``).

    ``"win"``: only when the game is over (:func:`win_rewards` of its winner). ``"points"``: every
    round, as it ends: the round winner +points/100, each other seat −(own hand points)/100; a
    round without a winner 0.
    """
    n = game.num_players
    if reward == "win":
        return win_rewards(n, game.winner) if game.game_over else [0.0] * n
    out = [0.0] * n
    winner = game.round_winner
    if winner is None:
        return out
    for s, points in enumerate(game.round_hand_points):
        if s != winner:
            out[s] = -points / POINTS_SCALE
            out[winner] += points / POINTS_SCALE
    return out
