"""Learning curves of training runs on one figure: the win rate against an opponent by wall time
and by learner steps, one line per run (issue: the old and the new training path side by side).

Each run folder holds the ``eval.csv`` that every backend writes (``training/curves.py``:
``timesteps``, ``wall_s``, ``win_rate`` and its Wilson interval per evaluation).

    python -m benchmarks.train_curves --run "sb3 (0.6.4 default)=runs/A" \\
        --run "fast (0.7.0 default)=runs/B" --opponent strategic --out docs/images/train_paths.png
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path


def read_curve(run_dir: Path, opponent: str) -> list[dict[str, float]]:
    """The evaluations of ``run_dir/eval.csv`` against ``opponent``, in step order."""
    path = run_dir / "eval.csv"
    with path.open(encoding="utf-8") as f:
        rows = [r for r in csv.DictReader(f) if r["opponent"] == opponent]
    if not rows:
        raise SystemExit(f"{path}: no evaluation against {opponent!r}")
    return sorted(({k: float(r[k]) for k in ("timesteps", "wall_s", "win_rate", "ci_low",
                                             "ci_high")} for r in rows),
                  key=lambda r: r["timesteps"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.train_curves",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", action="append", required=True, metavar="LABEL=DIR",
                        help="a run folder and its legend label (repeatable)")
    parser.add_argument("--opponent", default="strategic")
    parser.add_argument("--fair-share", type=float, default=0.5,
                        help="the win rate of an equal player (1 / players)")
    parser.add_argument("--out", type=Path, required=True, help="the PNG to write")
    args = parser.parse_args(argv)
    runs = []
    for item in args.run:
        label, sep, folder = item.partition("=")
        if not sep or not Path(folder).is_dir():
            parser.error(f"--run {item!r}: expected LABEL=DIR with an existing folder")
        runs.append((label, read_curve(Path(folder), args.opponent)))

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    for (label, rows), colour in zip(runs, plt.rcParams["axes.prop_cycle"].by_key()["color"]):
        for ax, x_key, scale in ((axes[0], "wall_s", 60.0), (axes[1], "timesteps", 1e6)):
            x = [r[x_key] / scale for r in rows]
            ax.plot(x, [r["win_rate"] for r in rows], "o-", color=colour, label=label, ms=4)
            ax.fill_between(x, [r["ci_low"] for r in rows], [r["ci_high"] for r in rows],
                            color=colour, alpha=0.15)
    for ax, xlabel in ((axes[0], "wall time, minutes (evaluations included)"),
                       (axes[1], "learner steps, millions")):
        ax.axhline(args.fair_share, color="grey", ls="--", lw=1, label="equal share")
        ax.set_xlabel(xlabel)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel(f"win rate vs {args.opponent} (95 % Wilson CI)")
    axes[1].legend(loc="lower right", fontsize=8)
    fig.suptitle(f"Learning curves against {args.opponent}")
    fig.tight_layout()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=100)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
