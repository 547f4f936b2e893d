"""The fast backend's run folder as it trains (:class:`Run`): the evaluations (``eval.csv``,
``curve.png``, ``best.npz``), the self-play snapshots, ``progress.csv``; and what
``--save-path`` ships (:func:`ship`). Every file is written whole (atomically) or, for
``progress.csv``, grown by whole lines. The policies are numpy layers: nothing here imports
torch."""

from __future__ import annotations

import csv
import io
import math
import time
from pathlib import Path
from typing import Any

from uno_mk_env.agents.numpy_actor import OBS_SCALE
from uno_mk_env.agents.policy_file import write_policy
from uno_mk_env.engine.seeding import Stream, derive_seed

from .args import specs
from .curves import eval_line, evaluate, plot_curve, selection_score, write_eval_csv
from .outputs import copy_file, write_json
from .progress import Budget
from .rollouts import Layers

__all__ = ["Run", "ship", "shipped_files"]

class Run:
    """The run directory and its bookkeeping: evaluations (``eval.csv``, ``curve.png``,
    ``best.npz``), snapshots, ``progress.csv``; every file written whole (atomically) or, for
    ``progress.csv``, grown by whole lines."""

    def __init__(self, args: Any, run_dir: Path, league: Any, start: float,
                 budget: Budget) -> None:
        self.args = args
        self.dir = run_dir
        self.league = league
        self.start = start
        self.budget = budget
        self.eval_rows: list[dict[str, Any]] = []
        self.best: dict[str, Any] | None = None
        self.latest_score = -1.0
        self.snapshot_score = -1.0
        self.n_snapshots = 0
        self.last_row: dict[str, Any] | None = None
        self.game_seconds: float | None = None  # measured seconds per evaluation game

    def policy(self, layers: Layers, name: str, steps: int) -> Path:
        """Writes the actor ``layers`` as the policy file ``name`` of the run folder."""
        return write_policy(layers, self.args.activation, self.dir / name, scale=OBS_SCALE,
                            provenance={"run_dir": str(self.dir), "timesteps": steps,
                                        "backend": "fast"})

    def games_within(self, seconds: float, wanted: int, layers: Layers) -> int:
        """Games per opponent (at most ``wanted``) that an evaluation plays in ``seconds``, at
        the speed measured so far (a first measure: ``2 x --num-players`` games against each
        opponent, not recorded); at least ``--num-players`` (one deal, every seat)."""
        a = self.args
        if math.isinf(seconds):
            return wanted
        if self.game_seconds is None:
            path = self.policy(layers, "eval_policy.npz", 0)
            t0 = time.monotonic()
            games = 2 * a.num_players
            for opponent in specs(a.eval_opponents):
                evaluate(str(path), opponent, a.num_players, games, seed=0)
            self.game_seconds = (time.monotonic() - t0) / (games * len(specs(a.eval_opponents)))
        fit = int(seconds / (self.game_seconds * len(specs(a.eval_opponents))))
        return max(a.num_players, min(wanted, fit))

    def evaluate(self, layers: Layers, steps: int, games: int, tag: str = "eval"
                 ) -> list[dict[str, Any]]:
        """As the sb3 backend's callback: every ``--eval-opponents`` agent, the same deals at
        every evaluation (``derive_seed(seed, Stream.EVALUATION, i, 0)``; the final one
        ``..., 1)``)."""
        a = self.args
        path = self.policy(layers, "eval_policy.npz", steps)
        rows = []
        t0 = time.monotonic()
        for i, opponent in enumerate(specs(a.eval_opponents)):
            r = evaluate(str(path), opponent, a.num_players, games,
                         seed=derive_seed(a.seed, Stream.EVALUATION, i,
                                          int(tag == "final_eval")))
            r.update(timesteps=steps, kind=tag, wall_s=round(time.time() - self.start, 1))
            del r["result"]
            rows.append(r)
        played = sum(r["games"] for r in rows)
        self.game_seconds = (time.monotonic() - t0) / max(played, 1)
        self.eval_rows.extend(rows)
        write_eval_csv(self.eval_rows, self.dir / "eval.csv")
        if tag == "final_eval":  # drawing costs seconds: the curve is drawn once, at the end
            plot_curve(self.eval_rows, a.num_players, self.dir / "curve.png", self.dir.name)
        print(eval_line(tag, steps, rows, time.time() - self.start), flush=True)
        self.latest_score = selection_score(rows, specs(a.eval_opponents)[-1])
        if tag == "eval" and steps > 0 and (self.best is None
                                            or self.latest_score > self.best["score"]):
            copy_file(path, self.dir / "best.npz")
            self.best = {"timesteps": steps, "score": self.latest_score,
                         "opponent": specs(a.eval_opponents)[-1], "players": [a.num_players]}
        return rows

    def eval_seconds(self, games: int) -> float:
        """The measured time of an evaluation of ``games`` per opponent (0 before any)."""
        return (self.game_seconds or 0.0) * games * len(specs(self.args.eval_opponents))

    def snapshot(self, layers: Layers, steps: int) -> None:
        """Adds the current policy to every table's league when its latest evaluation did not
        drop (the sb3 backend's rule)."""
        if self.args.eval_every > 0 and self.latest_score < self.snapshot_score:
            return
        self.snapshot_score = self.latest_score
        (self.dir / "snapshots").mkdir(exist_ok=True)
        path = self.policy(layers, f"snapshots/snapshot_{steps}.npz", steps)
        self.n_snapshots += 1
        self.league.add(str(path), derive_seed(self.args.seed, Stream.SNAPSHOT,
                                               self.n_snapshots))

    def log(self, row: dict[str, Any]) -> None:
        """Appends ``row`` to ``progress.csv`` (the header first) as one write; a write that
        fails (a full disk) is cut back, so the file only ever holds whole lines."""
        path = self.dir / "progress.csv"
        text = io.StringIO()
        writer = csv.DictWriter(text, fieldnames=list(row), lineterminator="\n")
        if self.last_row is None:
            writer.writeheader()
        writer.writerow(row)
        self.last_row = row
        with path.open("ab", buffering=0) as f:
            size = f.tell()
            try:
                f.write(text.getvalue().encode("utf-8"))
            except OSError:
                f.truncate(size)
                raise


def shipped_files(args: Any) -> list[Path]:
    """The files ``--save-path`` names (none without it): the policy ``.npz``, its ``.json``
    provenance and its curve (``_curve.csv``, ``_curve.png``)."""
    if not args.save_path:
        return []
    target = Path(args.save_path)
    target = target if target.suffix == ".npz" else target.with_name(target.name + ".npz")
    stem = target.with_suffix("")
    return [target, stem.with_suffix(".json"), stem.parent / f"{stem.name}_curve.csv",
            stem.parent / f"{stem.name}_curve.png"]


def ship(args: Any, final_path: Path, config: dict[str, Any], run: Run,
         summary: dict[str, Any], complete: bool) -> Path:
    """``--save-path``: the policy ``.npz``, its JSON provenance and its curve (CSV, PNG), each
    written atomically."""
    target, info_path, csv_path, png_path = shipped_files(args)
    copy_file(final_path, target)
    info = {"numpy_policy": target.name, "timesteps": summary["timesteps"], **config,
            "complete": complete, "summary": summary,
            "selection": {"method": "the final model of the run"}}
    write_json(info_path, info)
    write_eval_csv(run.eval_rows, csv_path)
    plot_curve(run.eval_rows, args.num_players, png_path,
               f"{target.name}: {args.num_players} players, seed {args.seed}")
    return target
