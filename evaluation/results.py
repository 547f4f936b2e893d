"""Tournament statistics: the game records, the Wilson interval and :class:`TournamentResult`
(leaderboard, head-to-head, outcomes, Plackett–Luce ratings) computed from the records.

The metrics are described in :mod:`uno_mk_env.evaluation.tournament` (its "Per entrant"
section) and each leaderboard column in :data:`LEADERBOARD_COLUMNS`; files and plots of a
result are written by :mod:`uno_mk_env.evaluation.tables`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from uno_mk_env.engine.rewards import win_reward
from uno_mk_env.files import atomic_save

from .ratings import rating_rows
from .sprt import Sprt, SprtSpec
from .tables import figure, save_result

__all__ = ["LEADERBOARD_COLUMNS", "GameRecord", "TournamentResult", "leaderboard_legend",
           "wilson_interval"]

#: The leaderboard's columns: (row key, table header, one-line legend). Rows are sorted by win
#: rate, the metric a tournament's leaderboard is about (then mean place, then label).
LEADERBOARD_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("rank", "#", "position in this table, sorted by win rate (ties: mean place)"),
    ("agent", "agent", "entrant: its agent spec; spec#k is the k-th copy of the same spec"),
    ("games", "games", "games the entrant played"),
    ("wins", "wins", "games it won"),
    ("win_rate", "win rate [95% CI]",
     "wins / games, with a 95% Wilson score interval (duplicate deals make it approximate)"),
    ("mean_reward", "reward",
     "mean reward=\"win\": +1 for a win, -1/(N-1) for a loss, 0 when nobody won"),
    ("points_per_round", "pts/round", "points it scored per round played (docs/rules.md R10.2)"),
    ("mean_place", "place",
     "mean finishing place: 1 = winner, then by score, then by points left in hand"),
    ("rating", "rating [95% CI]",
     "Plackett-Luce log-strength fitted on all games' finishing orders at once (mean 0; a "
     "gap d between two entrants: odds e^d that the first finishes ahead); CI clustered by deal"),
)


def leaderboard_legend() -> list[str]:
    """One line per leaderboard column: ``"header: legend"``."""
    return [f"{header}: {legend}" for _, header, legend in LEADERBOARD_COLUMNS]


@dataclass(frozen=True)
class GameRecord:
    """The outcome of one game; per-seat lists are indexed by seat.

    ``end`` is ``"win"``, ``"no_winner"`` (stalemate, or a tied fixed-rounds game) or
    ``"capped"`` (a round exceeded the step cap). ``scores`` are the game's final scores,
    ``hand_points`` the points left in each hand when it ended, ``places`` 1 = first.
    """

    index: int
    deal: int
    seed: int
    seats: tuple[int, ...]
    winner: int | None
    end: str
    scores: tuple[int, ...]
    hand_points: tuple[int, ...]
    places: tuple[int, ...]
    rounds: int
    decisions: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index, "deal": self.deal, "seed": self.seed, "seats": list(self.seats),
            "winner": self.winner, "end": self.end, "scores": list(self.scores),
            "hand_points": list(self.hand_points), "places": list(self.places),
            "rounds": self.rounds, "decisions": self.decisions,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> GameRecord:
        return cls(
            index=d["index"], deal=d["deal"], seed=d["seed"], seats=tuple(d["seats"]),
            winner=d["winner"], end=d["end"], scores=tuple(d["scores"]),
            hand_points=tuple(d["hand_points"]), places=tuple(d["places"]),
            rounds=d["rounds"], decisions=d["decisions"],
        )


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion (``(0, 1)`` when ``n == 0``), by scipy."""
    if n == 0:
        return 0.0, 1.0
    from scipy.stats import binomtest

    ci = binomtest(successes, n).proportion_ci(confidence_level=confidence, method="wilson")
    return float(ci.low), float(ci.high)



@dataclass
class TournamentResult:
    """Everything a tournament produced: its configuration, one record per game (in schedule
    order) and the statistics derived from them.

    Attributes:
        config: the arguments (agents, entrants, players, games, seed, full rules, ...).
        entrants: entrant labels; ``GameRecord.seats`` index into this list.
        records: the games, by ``index``.
        elapsed: wall-clock seconds (not part of equality).
        workers: processes used (not part of equality).
        replays: the games recorded decision by decision (``run_tournament(..., replays=N)``,
            :mod:`uno_mk_env.evaluation.replay`), or ``None`` (not part of equality).
    """

    config: dict[str, Any]
    entrants: list[str]
    records: list[GameRecord]
    elapsed: float = field(default=0.0, compare=False)
    workers: int = field(default=1, compare=False)
    replays: list[dict[str, Any]] | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        self._stats = self._compute()

    def _compute(self) -> dict[str, Any]:
        k = len(self.entrants)
        games = [0] * k
        wins = [0] * k
        no_result = [0] * k
        reward = [0.0] * k
        points = [0] * k
        rounds = [0] * k
        place_sum = [0] * k
        h2h_ahead = [[0] * k for _ in range(k)]
        h2h_ties = [[0] * k for _ in range(k)]
        h2h_games = [[0] * k for _ in range(k)]
        for rec in self.records:
            n = len(rec.seats)
            for s, e in enumerate(rec.seats):
                games[e] += 1
                rounds[e] += rec.rounds
                points[e] += rec.scores[s]
                place_sum[e] += rec.places[s]
                reward[e] += win_reward(n, rec.winner, s)
                if rec.winner is None:
                    no_result[e] += 1
                elif rec.winner == s:
                    wins[e] += 1
                for t, f in enumerate(rec.seats):
                    if t == s:
                        continue
                    h2h_games[e][f] += 1
                    if rec.places[s] < rec.places[t]:
                        h2h_ahead[e][f] += 1
                    elif rec.places[s] == rec.places[t]:
                        h2h_ties[e][f] += 1

        ratings = rating_rows(self.entrants, self.records)
        rows: list[dict[str, Any]] = []
        for e, label in enumerate(self.entrants):
            lo, hi = wilson_interval(wins[e], games[e])
            g = max(games[e], 1)
            rows.append({
                "agent": label,
                "games": games[e],
                "wins": wins[e],
                "no_winner": no_result[e],
                "win_rate": wins[e] / g,
                "win_ci_low": lo,
                "win_ci_high": hi,
                "mean_reward": reward[e] / g,
                "points_per_round": points[e] / max(rounds[e], 1),
                "mean_place": place_sum[e] / g,
                **ratings[e],
            })
        rows.sort(key=lambda r: (-r["win_rate"], r["mean_place"], r["agent"]))
        for i, row in enumerate(rows, 1):
            row["rank"] = i
        score = [
            [
                (h2h_ahead[a][b] + 0.5 * h2h_ties[a][b]) / h2h_games[a][b]
                if h2h_games[a][b] else None
                for b in range(k)
            ]
            for a in range(k)
        ]
        ends = {"win": 0, "no_winner": 0, "capped": 0}
        for rec in self.records:
            ends[rec.end] += 1
        return {
            "leaderboard": rows,
            "head_to_head": {
                "agents": list(self.entrants), "score": score, "ahead": h2h_ahead,
                "ties": h2h_ties, "games": h2h_games,
            },
            "outcomes": ends,
        }

    # -------------------------------------------------------------------- accessors
    def leaderboard(self) -> list[dict[str, Any]]:
        """One row per entrant, best win rate first (then mean place; keys: rank, agent, games,
        wins, no_winner, win_rate, win_ci_low, win_ci_high, mean_reward, points_per_round,
        mean_place, rating, rating_ci_low, rating_ci_high; legends in
        :data:`LEADERBOARD_COLUMNS`)."""
        return [dict(r) for r in self._stats["leaderboard"]]

    def notes(self) -> list[str]:
        """What a reader of the leaderboard must know beyond its columns: entrants added to fill
        the table (copies of the specs given), and cheating agents."""
        c = self.config
        out = []
        specs = c.get("agents", [])
        if len(specs) < c["num_players"]:
            added = c["entrants"][len(specs):]
            out.append(
                f"{len(specs)} agent spec(s) for {c['num_players']} seats: the specs were cycled "
                f"to fill the table, adding {', '.join(added)} (copies of the same agents)"
            )
        if "sprt" in c:
            out.append(self.sprt()["summary"])
        for label in c.get("cheating", []):
            out.append(f"{label} cheats (it sees hidden cards): a skill-ceiling reference, "
                       "not a competitor")
        return out

    def sprt(self) -> dict[str, Any]:
        """The sequential test's outcome (a run with ``sprt``,
        :func:`uno_mk_env.evaluation.sprt.outcome`) recomputed from the games, with a one-line
        ``summary``; ``{}`` for a run without one."""
        if "sprt" not in self.config:
            return {}
        test = Sprt(SprtSpec.from_dict(self.config["sprt"]), self.config["num_players"])
        test.add(self.records)
        return {**test.outcome(), "summary": test.summary()}

    def head_to_head(self) -> dict[str, Any]:
        """``score[a][b]``: share of the games entrants ``a`` and ``b`` played together in which
        ``a`` placed ahead of ``b`` (ties count half; ``None`` if they never met). Also the raw
        counts ``ahead``, ``ties`` and ``games``; rows and columns follow ``agents``."""
        return json.loads(json.dumps(self._stats["head_to_head"]))

    def outcomes(self) -> dict[str, int]:
        """Games per ending: ``win``, ``no_winner``, ``capped``."""
        return dict(self._stats["outcomes"])

    def to_dict(self, include_games: bool = True) -> dict[str, Any]:
        """A JSON-safe dict of the whole result (``run`` holds the timing)."""
        d: dict[str, Any] = {
            "config": self.config,
            "run": {
                "workers": self.workers, "elapsed_s": round(self.elapsed, 3),
                "decisions": sum(r.decisions for r in self.records),
            },
            "leaderboard": self.leaderboard(),
            "head_to_head": self.head_to_head(),
            "outcomes": self.outcomes(),
            **({"sprt": self.sprt()} if "sprt" in self.config else {}),
        }
        if include_games:
            d["games"] = [r.to_dict() for r in self.records]
        return d

    def to_json(self, indent: int | None = 2) -> str:
        """:meth:`to_dict` as JSON text."""
        return json.dumps(self.to_dict(), indent=indent)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> TournamentResult:
        """Rebuilds a result (statistics recomputed) from :meth:`to_dict` output."""
        run = d.get("run", {})
        return cls(
            config=dict(d["config"]), entrants=list(d["config"]["entrants"]),
            records=[GameRecord.from_dict(r) for r in d["games"]],
            elapsed=run.get("elapsed_s", 0.0), workers=run.get("workers", 1),
        )

    # -------------------------------------------------------------------------- files
    def save(self, out_dir: str | Path, plot: bool = True) -> dict[str, Path]:
        """Writes the JSON, the CSVs (leaderboard, head-to-head, games), the recorded games and
        the plot into ``out_dir`` (created if needed), each file atomically; returns their paths
        by kind (:func:`uno_mk_env.evaluation.tables.save_result`).

        Raises:
            OutputPathError: ``out_dir`` cannot be written (:func:`check_output_dir`, which
                callers can run before the tournament).
        """
        return save_result(self, out_dir, plot)

    def plot(self, path: str | Path) -> None:
        """Saves a PNG of :meth:`figure` (atomically)."""
        image = self.figure()
        kind = Path(path).suffix[1:].lower() or "png"
        atomic_save(path, lambda f: image.savefig(f, format=kind, dpi=100))

    def figure(self) -> Any:
        """A matplotlib ``Figure``: win rates with 95 % intervals, and the head-to-head heatmap
        (:func:`uno_mk_env.evaluation.tables.figure`)."""
        return figure(self)
