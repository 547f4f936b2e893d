"""Duplicate scoring of a person against a reference agent (as Slumbot scores poker players).

After each game, the same deal is played again through the match driver with the reference
agent (default ``strategic``) in the person's seat and the same opponents with the same seeds.
The *duplicate difference* of the game is the person's score minus the reference's score in that
seat: luck of the deal cancels out, since both played the same cards dealt. Over a session: the
person's win rate (Wilson 95 % interval) and the mean duplicate difference (95 % normal
interval; ``None`` before two games).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from uno_mk_env import Game, Rules
from uno_mk_env.agents.base import build_agent
from uno_mk_env.evaluation.match import play_match
from uno_mk_env.evaluation.results import wilson_interval

__all__ = ["DuplicateScore", "duplicate_score", "session_summary", "warm_up"]


@dataclass(frozen=True)
class DuplicateScore:
    """One game: the person's score and win, the reference's in the same seat and deal."""

    score: int
    won: bool
    reference_score: int
    reference_won: bool

    @property
    def difference(self) -> int:
        return self.score - self.reference_score

    def text(self, reference: str) -> str:
        did = "won" if self.reference_won else "did not win"
        return (f"{reference} in your seat, with the same deal and opponents, {did} and scored "
                f"{self.reference_score} (you: {self.score}; difference {self.difference:+d}).")


def duplicate_score(game: Game, seat: int, specs: Sequence[str], rules: Rules, game_seed: int,
                    agent_seeds: Sequence[int], max_steps: int) -> DuplicateScore:
    """Replays the deal of the finished ``game`` with the agents ``specs`` (the reference at
    ``seat``) seeded with ``agent_seeds``, and compares ``seat``'s results."""
    players = [build_agent(spec, seed=0) for spec in specs]
    outcome = play_match(players, rules, game_seed, agent_seeds, list(specs), max_steps)
    ref = outcome.game
    return DuplicateScore(int(game.scores[seat]), game.winner == seat, int(ref.scores[seat]),
                          outcome.winner == seat)


def warm_up() -> None:
    """Loads what scoring needs (scipy's statistics: seconds to import) before any table plays,
    so that the first game to end does not stall every other table's moves."""
    wilson_interval(1, 2)


def session_summary(scores: Sequence[DuplicateScore], reference: str) -> dict[str, Any]:
    """Win rate and mean duplicate difference over the session's games, with 95 % intervals."""
    n = len(scores)
    wins = sum(s.won for s in scores)
    low, high = wilson_interval(wins, n) if n else (0.0, 1.0)
    diffs = [s.difference for s in scores]
    mean = sum(diffs) / n if n else 0.0
    interval: list[float] | None = None
    if n >= 2:
        sd = math.sqrt(sum((d - mean) ** 2 for d in diffs) / (n - 1))
        half = 1.96 * sd / math.sqrt(n)
        interval = [round(mean - half, 2), round(mean + half, 2)]
    text = (f"{n} game{'s' if n != 1 else ''}: you won {wins} ({100 * wins / max(n, 1):.0f} %, "
            f"95 % interval {100 * low:.0f}-{100 * high:.0f} %); mean duplicate difference vs "
            f"{reference} {mean:+.1f} points"
            + (f" (95 % interval {interval[0]:+.1f} to {interval[1]:+.1f})" if interval else "")
            + ".")
    return {"games": n, "wins": wins, "win_rate": [round(wins / max(n, 1), 4), round(low, 4),
            round(high, 4)], "mean_difference": round(mean, 3), "interval": interval,
            "text": text}
