"""A tournament's files and plot: ``tournament.json``, the leaderboard, head-to-head and games
CSVs, the recorded games and the PNG (:func:`save_result`, :func:`figure`). Every file is
written atomically (:func:`uno_mk_env.evaluation.outputs.atomic_write`): a run killed while
saving leaves the previous file or the new one, never a truncated one.
"""

from __future__ import annotations

import csv
import io
import itertools
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from uno_mk_env.files import atomic_write_text, check_output_dir

from .replay import recording, write_json

__all__ = ["FILE_NAMES", "REPLAYS_FILE", "TournamentResult", "figure", "save_result"]


class TournamentResult(Protocol):
    """What the tables and the figure read of a tournament's result
    (:class:`uno_mk_env.evaluation.results.TournamentResult`)."""

    @property
    def config(self) -> dict[str, Any]: ...
    @property
    def entrants(self) -> list[str]: ...
    @property
    def records(self) -> Sequence[Any]: ...
    @property
    def replays(self) -> list[dict[str, Any]] | None: ...
    def leaderboard(self) -> list[dict[str, Any]]: ...
    def head_to_head(self) -> dict[str, Any]: ...
    def to_json(self) -> str: ...
    def plot(self, path: str | Path) -> None: ...

FILE_NAMES = {
    "json": "tournament.json",
    "leaderboard": "leaderboard.csv",
    "head_to_head": "head_to_head.csv",
    "games": "games.csv",
    "plot": "tournament.png",
}

#: Written by :meth:`TournamentResult.save` when the tournament recorded games (``replays``).
REPLAYS_FILE = "replays.json"

#: Width of one character of a tick label in the plot (10 pt), to size the figure for long labels.
_LABEL_INCHES_PER_CHAR = 0.075


def _csv_text(rows: list[list[Any]]) -> str:
    buffer = io.StringIO(newline="")
    csv.writer(buffer).writerows(rows)
    return buffer.getvalue()


def leaderboard_csv(result: TournamentResult) -> str:
    """The leaderboard as CSV text (one row per entrant, every key of the rows)."""
    rows = result.leaderboard()
    columns = ["rank", *[c for c in rows[0] if c != "rank"]] if rows else ["rank"]
    buffer = io.StringIO(newline="")
    writer = csv.DictWriter(buffer, fieldnames=columns)
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


def head_to_head_csv(result: TournamentResult) -> str:
    """One row per ordered pair of entrants that met: games, ahead, ties, score."""
    h2h = result.head_to_head()
    names = result.entrants
    rows: list[list[Any]] = [["agent", "opponent", "games", "ahead", "ties", "score"]]
    for a, b in itertools.permutations(range(len(names)), 2):
        if h2h["games"][a][b]:
            rows.append([names[a], names[b], h2h["games"][a][b], h2h["ahead"][a][b],
                         h2h["ties"][a][b], h2h["score"][a][b]])
    return _csv_text(rows)


def games_csv(result: TournamentResult) -> str:
    """One row per game, in schedule order."""
    names = result.entrants
    rows: list[list[Any]] = [[
        "index", "deal", "seed", "seat_agents", "winner_seat", "winner_agent", "end",
        "scores", "hand_points", "places", "rounds", "decisions",
    ]]
    for r in result.records:
        rows.append([
            r.index, r.deal, r.seed, "|".join(names[e] for e in r.seats),
            "" if r.winner is None else r.winner,
            "" if r.winner is None else names[r.seats[r.winner]], r.end,
            "|".join(map(str, r.scores)), "|".join(map(str, r.hand_points)),
            "|".join(map(str, r.places)), r.rounds, r.decisions,
        ])
    return _csv_text(rows)


def save_result(result: TournamentResult, out_dir: str | Path, plot: bool = True
                ) -> dict[str, Path]:
    """Writes the JSON, the CSVs (leaderboard, head-to-head, games), ``replays.json`` when the
    result holds recorded games, and the plot into ``out_dir`` (created if needed), each
    atomically; returns their paths by kind (see :data:`FILE_NAMES`).

    Raises:
        OutputPathError: ``out_dir`` cannot be written.
    """
    out = check_output_dir(out_dir, FILE_NAMES.values())
    paths = {kind: out / name for kind, name in FILE_NAMES.items()}
    atomic_write_text(paths["json"], result.to_json() + "\n")
    atomic_write_text(paths["leaderboard"], leaderboard_csv(result))
    atomic_write_text(paths["head_to_head"], head_to_head_csv(result))
    atomic_write_text(paths["games"], games_csv(result))
    if result.replays:  # the recorded games, for uno-mk replay --from DIR (atomic too)
        paths["replays"] = write_json(recording(result.replays), out / REPLAYS_FILE)
    if plot:
        result.plot(paths["plot"])
    else:
        del paths["plot"]
    return paths


def figure(result: TournamentResult) -> Any:
    """A matplotlib ``Figure``: win rates with 95 % intervals, and the head-to-head heatmap,
    sized for the longest agent label so that labels, titles and the colour bar never
    overlap."""
    # Figure + Agg canvas directly: no pyplot, so no global backend is switched for callers.
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    k = len(result.entrants)
    label = _LABEL_INCHES_PER_CHAR * max(len(e) for e in result.entrants)
    fig = Figure(figsize=(6 + 0.6 * k + 2 * label, 3.5 + 0.45 * k + 0.7 * label),
                 layout="constrained")
    FigureCanvasAgg(fig)
    ax_rate, ax_h2h = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1, 1.1]})
    rows = result.leaderboard()
    _plot_rates(result, ax_rate, rows[::-1])  # best at the top of a horizontal bar chart
    _plot_head_to_head(result, fig, ax_h2h, [result.entrants.index(r["agent"]) for r in rows])
    c = result.config
    fig.suptitle(
        f"{c['num_players']} players, {c['games']} games"
        f"{' (duplicate deals)' if c['duplicate'] else ''}, seed {c['seed']}, "
        f"match={c['rules']['match']}"
    )
    return fig


def _plot_rates(result: TournamentResult, ax: Any, rows: list[dict[str, Any]]) -> None:
    """Win rates of ``rows`` (bottom to top) with their Wilson intervals."""
    y = np.arange(len(rows))
    rate = np.array([r["win_rate"] for r in rows])
    err = np.array([
        [r["win_rate"] - r["win_ci_low"] for r in rows],
        [r["win_ci_high"] - r["win_rate"] for r in rows],
    ])
    ax.barh(y, rate, xerr=err, capsize=4, color="tab:blue", alpha=0.8)
    ax.axvline(1 / result.config["num_players"], color="grey", ls="--", lw=1,
               label="equal share 1/N")
    ax.set_yticks(y, [r["agent"] for r in rows])
    ax.set_xlim(0, 1)
    ax.set_xlabel("win rate (95% Wilson CI)")
    ax.legend(loc="lower right", fontsize="small")


def _plot_head_to_head(result: TournamentResult, fig: Any, ax: Any, order: list[int]) -> None:
    """The head-to-head heatmap of the entrants ``order`` (leaderboard order), its colour
    bar at its right (the title, on two lines, stays within the heatmap's width)."""
    h2h = result.head_to_head()
    k = len(order)
    names = [result.entrants[e] for e in order]
    score = np.array(
        [[np.nan if h2h["score"][a][b] is None else h2h["score"][a][b] for b in order]
         for a in order],
        dtype=float,
    )
    im = ax.imshow(score, vmin=0, vmax=1, cmap="RdBu")
    ax.set_xticks(range(k), names, rotation=45, ha="right")
    ax.set_yticks(range(k), names)
    ax.set_xlabel("opponent")
    ax.set_title("head-to-head: share of games\nthe row placed ahead of the column",
                 fontsize="medium")
    for a in range(k):
        for b in range(k):
            if not np.isnan(score[a, b]):
                ax.text(b, a, f"{score[a, b]:.2f}", ha="center", va="center",
                        fontsize="small",
                        color="white" if abs(score[a, b] - 0.5) > 0.3 else "black")
    fig.colorbar(im, ax=ax, shrink=0.8)


