"""Rewards (docs/api.md#rewards-and-episodes): one home for the numbers every part of the
project pays out — the env, the tournaments' mean reward and the search agents' rollouts.

Both reward modes are zero-sum for every player count.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["POINTS_SCALE", "REWARD_MODES", "episode_places", "expected_win_rewards", "loss_reward",
           "place_reward", "places", "round_rewards", "win_place_reward", "win_reward",
           "win_rewards"]

REWARD_MODES = ("win", "points")
#: ``reward="points"`` pays points / 100 (the observation's score unit too).
POINTS_SCALE = 100.0


def loss_reward(num_players: int) -> float:
    """``reward="win"`` of a seat that did not win: −1/(N−1), so a game's rewards sum to 0."""
    if num_players < 2:
        raise ValueError(f"a game has at least 2 players, not {num_players}")
    return -1.0 / (num_players - 1)


def win_reward(num_players: int, winner: int | None, seat: int) -> float:
    """``reward="win"`` for ``seat``: +1 for the winner, :func:`loss_reward` (−1/(N−1)) for every
    other seat, 0 for all when there is no winner (a stalemate, a tied ``fixed_rounds`` game)."""
    if winner is None:
        return 0.0
    return 1.0 if seat == winner else loss_reward(num_players)


def win_rewards(num_players: int, winner: int | None) -> list[float]:
    """:func:`win_reward` of every seat."""
    return [win_reward(num_players, winner, s) for s in range(num_players)]


def expected_win_rewards(weights: Sequence[float]) -> list[float]:
    """Every seat's expected ``reward="win"`` when seat ``s`` wins with probability
    ``weights[s] / sum(weights)`` (the search agents' cut-off value): ``p·1 + (1−p)·loss``."""
    lose = loss_reward(len(weights))
    total = sum(weights)
    return [w / total * (1.0 - lose) + lose for w in weights]


def places(winner: int | None, scores: Sequence[int], hand_points: Sequence[int]) -> list[int]:
    """Finishing places (1 = first) of a finished game, as tournaments and the place reward rank
    them: the winner, then score descending (multi-round games, R10.2), then the points left in
    hand ascending; equal keys share the better place."""
    keys = [(s != winner, -scores[s], hand_points[s]) for s in range(len(scores))]
    return [1 + sum(other < key for other in keys) for key in keys]


def episode_places(game: Any) -> list[int]:
    """Every seat's place (:func:`places`) when an episode ends on ``game``, from what every seat
    may know then, so that it can be told to any seat (the vector env's episode statistics):

    - the game is over and its last round was scored (a winner went out, R10.2, or a
      ``stalemate="lowest_hand"`` round was scored, R9): the scoring counts every hand face up,
      so the places follow the points left in hand, as :func:`places` ranks a finished game;
    - otherwise (the episode was cut by ``max_steps`` or by an illegal action, or the round was
      a stalemate that scores nothing): no hand is shown, and the points in hand are hidden, so
      the cards left in hand (public) take their place: the winner (if any), then score
      descending, then fewer cards, equal keys sharing the better place.
    """
    left = game.round_hand_points
    if not (game.game_over and game.round_winner is not None and left is not None):
        left = game.sizes
    return places(game.winner if game.game_over else None, game.scores, left)


def place_reward(num_players: int, place: int) -> float:
    """The place reward (training's ``reward="place"``) of a seat that finished at ``place``
    (:func:`places`): ``1 - 2 (place - 1) / (N - 1)``, +1 for first place down to -1 for last,
    linear; at two players the win reward."""
    return 1.0 - 2.0 * (place - 1) / (num_players - 1)


def win_place_reward(num_players: int, winner: int | None, seat: int, place: int,
                     place_weight: float) -> float:
    """Training's ``reward="win_place"``: ``w * place_reward + (1 - w) * win_reward`` with
    ``w = place_weight`` (0.5: their mean; at four players +1, 0, -1/3, -2/3 from first to
    last place)."""
    return (place_weight * place_reward(num_players, place)
            + (1.0 - place_weight) * win_reward(num_players, winner, seat))


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
