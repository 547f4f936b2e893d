"""The short human-readable end of a training run: the run's ``summary.json`` as a table of a
few rows (where it is, how far it trained, how fast, the final evaluation, the best checkpoint,
the policy). The JSON itself stays in the run folder.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TextIO

#: ``(out, title, columns, rows)``: draws a table (``uno_mk_env.cli.common.print_table`` draws
#: it with rich when installed).
TablePrinter = Callable[[TextIO, str, Sequence[str], Sequence[Sequence[str]]], object]


def summary_rows(summary: dict[str, Any]) -> list[list[str]]:
    """``[what, value]`` rows of a run's summary (either backend's)."""
    complete = summary.get("complete")
    rows = [["run", str(summary["run_dir"])],
            ["steps", f"{int(summary['timesteps']):,}" + (
                "" if complete is None else " (complete)" if complete
                else " (stopped by --max-minutes)")]]
    if summary.get("train_seconds") is not None:
        rows.append(["training", f"{summary['train_seconds']:,.1f} s, "
                                 f"{summary.get('steps_per_second', 0):,.0f} steps/s"])
    for r in summary.get("final_eval", []):
        rows.append([f"final eval vs {r['opponent']} ({r.get('players', '?')}p)",
                     f"{r['win_rate']:.3f} [{r['ci_low']:.3f}, {r['ci_high']:.3f}], "
                     f"{r['games']:,} games"])
    best = summary.get("best")
    if best:
        rows.append(["best checkpoint", f"step {best['timesteps']:,} (score "
                                        f"{best['score']:.3f} vs {best['opponent']})"])
    rows.append(["policy", str(summary["policy"])])
    rows.append(["summary", str(Path(summary["run_dir"]) / "summary.json")])
    return rows


def plain_table(out: TextIO, title: str, columns: Sequence[str],
                rows: Sequence[Sequence[str]]) -> None:
    """Aligned plain text (the default :data:`TablePrinter`)."""
    width = max(len(str(r[0])) for r in rows)
    print(title, file=out)
    for what, value in rows:
        print(f"  {what.ljust(width)}  {value}", file=out)


def print_summary(summary: dict[str, Any], out: TextIO | None = None,
                  table: TablePrinter | None = None) -> None:
    """The run's summary table on ``out`` (stdout), drawn by ``table`` (plain text)."""
    out = out or sys.stdout
    (table or plain_table)(out, "training run", ["", "value"], summary_rows(summary))
    out.flush()
