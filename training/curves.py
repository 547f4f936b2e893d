"""Evaluation curves of a training run: measuring a policy (a duplicate-deal tournament), the
rows of ``eval.csv`` (one per evaluation, opponent and table size), reading and writing them,
and the PNG plot.

A row: ``timesteps`` (learner steps when evaluated), ``kind`` (``eval``: periodic;
``final_eval``: the end of the run, on other deals; ``shipped_eval``: the evaluation of a
shipped model, :mod:`uno_mk_env.training.export_model`), ``opponent`` (an agent spec),
``players`` (the table size: one learner and ``players - 1`` copies of the opponent),
``games``, ``wins``, ``win_rate``, ``ci_low``/``ci_high`` (95 % Wilson interval), ``wall_s``
(seconds since the run started). Files written before ``players`` existed read with the run's
table size.
"""

from __future__ import annotations

import csv
import math
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from uno_mk_env.evaluation.tournament import run_tournament
from uno_mk_env.files import atomic_save, atomic_write, read_json

#: Columns of ``eval.csv`` and of a shipped model's ``<name>_curve.csv``.
EVAL_COLUMNS = ["timesteps", "kind", "opponent", "players", "games", "wins", "win_rate",
                "ci_low", "ci_high", "wall_s"]

#: The x axis of the RLlib backend's curves: it counts the decisions of every seat RLlib plays.
RLLIB_STEPS = "env steps (decisions of every RLlib seat)"


def evaluate(
    model_path: str, opponent: str, num_players: int, games: int, seed: int, workers: int = 1,
    rules: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Win rate of ``ppo:model_path`` against ``opponent`` (one learner and ``num_players - 1``
    copies of it), duplicate deals with rotated seats
    (:func:`uno_mk_env.evaluation.tournament.run_tournament`).

    Returns:
        ``opponent``, ``players``, ``games``, ``wins``, ``win_rate``, ``ci_low``, ``ci_high``,
        ``mean_reward``, ``mean_place``, ``opponent_mean_places`` (of each copy),
        ``ahead_of_each`` (the share of games the learner placed ahead of each copy, ties
        counting half), ``place_gap_se`` (the standard error of the copies' mean place minus
        the learner's, from its spread over games) and the tournament ``result``.
    """
    specs = [f"ppo:{model_path}"] + [opponent] * (num_players - 1)
    result = run_tournament(specs, num_players, games=games, seed=seed, workers=workers,
                            rules=rules)
    board = {r["agent"]: r for r in result.leaderboard()}
    labels = result.entrants  # the learner first, then the copies ("strategic#2", ...)
    row = board[labels[0]]
    h2h = result.head_to_head()["score"]
    return {
        "opponent": opponent, "players": num_players, "games": row["games"],
        "wins": row["wins"], "win_rate": row["win_rate"], "ci_low": row["win_ci_low"],
        "ci_high": row["win_ci_high"], "mean_reward": row["mean_reward"],
        "mean_place": row["mean_place"],
        "opponent_mean_places": [board[x]["mean_place"] for x in labels[1:]],
        "ahead_of_each": [h2h[0][j] for j in range(1, len(labels))],
        "place_gap_se": place_gap_se(result.records),
        "result": result,
    }


def eval_line(tag: str, steps: int, rows: list[dict[str, Any]], seconds: float) -> str:
    """The line printed after an evaluation (both backends): each opponent's win rate with its
    95 % interval."""
    return (f"{tag.replace('_', ' ')} @ {steps:,} steps ({seconds:.0f} s): " + ", ".join(
        f"vs {r['opponent']}" + (f" {r['players']}p" if r.get("players") else "")
        + f" {r['win_rate']:.3f} [{r['ci_low']:.3f}, {r['ci_high']:.3f}] ({r['games']:,} games)"
        for r in rows))


def place_gap_se(records: Sequence[Any]) -> float:
    """The standard error of the mean, over ``records`` (tournament games), of the copies'
    mean place minus entrant 0's place: its sample standard deviation over ``sqrt(games)``."""
    gaps = []
    for rec in records:
        mine = rec.seats.index(0)
        others = [p for s, p in enumerate(rec.places) if s != mine]
        gaps.append(sum(others) / len(others) - rec.places[mine])
    if len(gaps) < 2:
        return math.inf
    return statistics.stdev(gaps) / math.sqrt(len(gaps))


def write_eval_csv(rows: Sequence[dict[str, Any]], path: Path) -> None:
    """Writes ``rows`` as the CSV ``path`` (:data:`EVAL_COLUMNS`), atomically."""
    with atomic_write(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=EVAL_COLUMNS, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)


def read_eval_csv(path: Path, num_players: int | None = None) -> list[dict[str, Any]]:
    """The rows of ``path``, typed; ``num_players`` fills ``players`` in files written before
    that column existed."""
    with path.open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        r.setdefault("kind", "eval")
        if not r.get("players"):
            r["players"] = num_players
        for key in ("timesteps", "games", "wins", "players"):
            if r[key] is not None:
                r[key] = int(r[key])
        for key in ("win_rate", "ci_low", "ci_high", "wall_s"):
            r[key] = float(r[key])
    return rows


def selection_score(rows: Sequence[dict[str, Any]], opponent: str) -> float:
    """How a checkpoint's evaluation ranks it: the mean over table sizes of its win rate
    against ``opponent`` times the table size (1.0 is a fair share at every size)."""
    mine = [r for r in rows if r["opponent"] == opponent]
    return sum(r["win_rate"] * r["players"] for r in mine) / max(len(mine), 1)


def every_axis_score(rows: Sequence[dict[str, Any]], opponent: str) -> float:
    """How a checkpoint ranks when it must beat ``opponent`` on every axis at once: the
    smallest, over table sizes and axes, of its relative margin on that axis — win rate over the
    fair share (``win_rate x players - 1``), mean place against the copies' mean
    (``1 - mean_place / copies' mean place``) and the share of games ahead of the copy it beats
    least often over an even split (``2 x min(ahead_of_each) - 1``). Positive: better than
    ``opponent`` on every axis; at two players every axis is the win rate's."""
    mine = [r for r in rows if r["opponent"] == opponent]
    if not mine:
        return 0.0
    margins = []
    for r in mine:
        others = r["opponent_mean_places"]
        margins += [r["win_rate"] * r["players"] - 1.0,
                    1.0 - r["mean_place"] / (sum(others) / len(others)),
                    2.0 * min(r["ahead_of_each"]) - 1.0]
    return min(margins)


def _in_errors(margin: float, se: float) -> float:
    """``margin / se``; with no spread (``se`` 0) the sign of ``margin`` as infinity, or 0."""
    if se > 0:
        return margin / se
    return math.copysign(math.inf, margin) if margin else 0.0


def every_axis_z_score(rows: Sequence[dict[str, Any]], opponent: str) -> float:
    """How surely a checkpoint meets the target "the win rate's 95 % interval above the fair
    share, and better than ``opponent`` on the other axes", in standard errors: the smallest,
    over table sizes and axes, of the win rate's Wilson lower bound (``ci_low``) over the fair
    share ``p = 1 / players``, in units of ``sqrt(p (1 - p) / games)``; the copies' mean place
    minus the learner's, over ``place_gap_se``; and the share ahead of the copy it beats least
    often over an even split, over ``0.5 / sqrt(games)``. The relative margins of
    :func:`every_axis_score` weigh a win-rate edge like a place edge, though the win rate's must
    be about three times wider to be as sure and must clear its interval; this score does not."""
    mine = [r for r in rows if r["opponent"] == opponent]
    if not mine:
        return 0.0
    margins = []
    for r in mine:
        games, fair = r["games"], 1.0 / r["players"]
        others = r["opponent_mean_places"]
        margins += [(r["ci_low"] - fair) / math.sqrt(fair * (1 - fair) / games),
                    _in_errors(sum(others) / len(others) - r["mean_place"],
                               r["place_gap_se"]),
                    (min(r["ahead_of_each"]) - 0.5) / (0.5 / math.sqrt(games))]
    return min(margins)


#: How :mod:`~uno_mk_env.training.export_model` may rank candidate checkpoints.
SELECTION_SCORES = {"win": selection_score, "every_axis": every_axis_score,
                    "every_axis_z": every_axis_z_score}


def resume_points(info: dict[str, Any]) -> list[int]:
    """The steps at which the runs of a shipped model's resume chain started (its JSON's
    ``start_timesteps`` and those of ``resumed_from``), the first run's 0 left out."""
    chain = [info, *(c for c in info.get("resumed_from") or [] if isinstance(c, dict))]
    return sorted({int(c["start_timesteps"]) for c in chain if c.get("start_timesteps")})


def _steps_axis(ax: Any, top: float, label: str) -> None:
    """The x axis in millions of steps (thousands for a run under a million)."""
    from matplotlib.ticker import FuncFormatter

    scale, unit = (1e6, "millions") if top >= 1e6 else (1e3, "thousands")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x / scale:g}"))
    ax.set_xlabel(f"{label}, {unit}")


def _zoom(ax: Any, rows: Sequence[dict[str, Any]], fair: Sequence[float]) -> None:
    """The y axis zoomed to the intervals drawn and the fair shares, with a margin."""
    low = min([r["ci_low"] for r in rows] + list(fair))
    high = max([r["ci_high"] for r in rows] + list(fair))
    pad = max(0.1 * (high - low), 0.01)
    ax.set_ylim(max(0.0, low - pad), min(1.0, high + pad))


def plot_curve(rows: Sequence[dict[str, Any]], num_players: int, path: Path, title: str,
               resumes: Sequence[int] = (),
               steps_label: str = "training steps (learner decisions)") -> None:
    """:func:`curve_figure` saved as the PNG ``path``, atomically."""
    figure = curve_figure(rows, num_players, title, resumes, steps_label)
    atomic_save(path, lambda f: figure.savefig(f, dpi=100, format="png"))


def curve_figure(rows: Sequence[dict[str, Any]], num_players: int, title: str,
                 resumes: Sequence[int] = (),
                 steps_label: str = "training steps (learner decisions)") -> Any:
    """Eval win rate (95 % CI band) per opponent and table size over training steps (in
    millions), with the fair share of each table size, as a PNG; final and shipped evaluations
    are stars (a shipped model's just right of its step), and a dotted line marks each step
    where a run of the resume chain started (``resumes``). The y axis is zoomed to the data;
    the legend, beside the plot, names only what is drawn. Returns the matplotlib ``Figure``."""
    from matplotlib import rcParams
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(9, 4.2), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    keys = list(dict.fromkeys((r["opponent"], r.get("players") or num_players) for r in rows))
    sizes = sorted({n for _, n in keys} or {num_players})
    colors = rcParams["axes.prop_cycle"].by_key()["color"]
    span = max([r["timesteps"] for r in rows] + [1])
    for i, (opponent, n) in enumerate(keys):
        color = colors[i % len(colors)]
        mine = [r for r in rows if r["opponent"] == opponent
                and (r.get("players") or num_players) == n]
        name = f"vs {opponent}" + (f", {n}p" if len(sizes) > 1 else "")
        pts = sorted((r for r in mine if r.get("kind", "eval") == "eval"),
                     key=lambda r: r["timesteps"])
        if pts:
            x = [r["timesteps"] for r in pts]
            ax.plot(x, [r["win_rate"] for r in pts], marker="o", ms=3, color=color, label=name)
            ax.fill_between(x, [r["ci_low"] for r in pts], [r["ci_high"] for r in pts],
                            color=color, alpha=0.2)
        for r in mine:
            if r.get("kind", "eval") != "eval":
                # a shipped model's evaluation just right of the run's final one at that step
                shift = 0.012 * span * (r["kind"] == "shipped_eval")
                ax.errorbar([r["timesteps"] + shift], [r["win_rate"]], fmt="*", ms=10,
                            color=color,
                            yerr=[[r["win_rate"] - r["ci_low"]], [r["ci_high"] - r["win_rate"]]],
                            label=f"{r['kind'].replace('_', ' ')} {name} ({r['games']:,} games)")
    for n in sizes:
        ax.axhline(1 / n, color="grey", ls="--", lw=1, label=f"fair share 1/{n}")
    for j, step in enumerate(resumes):
        ax.axvline(step, color="black", ls=":", lw=1,
                   label="a resumed run starts" if j == 0 else None)
    if rows:
        _zoom(ax, rows, [1 / n for n in sizes])
    _steps_axis(ax, max([r["timesteps"] for r in rows] + list(resumes) + [0]), steps_label)
    ax.set_ylabel("learner win rate (95% Wilson CI)")
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small", frameon=False)
    ax.set_title(title, fontsize="medium")
    return fig


def plot_shipped(json_path: Path) -> Path:
    """Redraws a shipped model's curve (``NAME_curve.png``) from its ``NAME_curve.csv`` and the
    resume chain of its ``NAME.json``; returns the PNG."""
    info = read_json(json_path)
    stem = Path(json_path).with_suffix("")
    n = int(info["args"]["num_players"])
    rllib = info.get("backend") == "rllib"
    chain = [info, *(c for c in info.get("resumed_from") or [] if isinstance(c, dict))]
    seeds = sorted({int(c["args"]["seed"]) for c in chain if "args" in c})
    runs = f"{len(seeds)} runs (seeds {', '.join(map(str, seeds))})" if len(seeds) > 1 else (
        f"seed {seeds[0]}")
    title = (f"{stem.name}: {n} players, {info['timesteps']:,} steps, {runs}"
             + (" (RLlib)" if rllib else ""))
    png = stem.with_name(stem.name + "_curve.png")
    plot_curve(read_eval_csv(stem.with_name(stem.name + "_curve.csv"), n), n, png, title,
               resumes=resume_points(info),
               steps_label="env steps (decisions of every RLlib seat)" if rllib else
               "training steps (learner decisions)")
    return png


if __name__ == "__main__":  # python -m uno_mk_env.training.curves models/ppo_2p.json ...

    for arg in sys.argv[1:]:
        print(plot_shipped(Path(arg)))
