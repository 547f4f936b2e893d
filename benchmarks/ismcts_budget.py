"""The ``ismcts`` agent's win rate against ``strategic`` as a function of its budget (the
IS-MCTS figure of docs/agents.md, docs/images/ismcts_budget.png).

Each point is a line of the standard evaluation protocol (``uno_mk_env.evaluation.protocol``:
the protocol's deals for that player count, duplicate deals with seat rotation, one ``ismcts``
seat against ``N - 1`` copies of ``strategic``), so its win rate equals
``uno-mk evaluate ismcts:B<options> --players N --opponents strategic --games G``. The games are
played in this process so that the search can be timed: **CPU milliseconds per searched move**
(``time.process_time`` around each search; a decision with one legal action or an UNO call is
answered without searching and is not counted) and wall-clock milliseconds. CPU time is what
the budget costs; on a shared machine the wall clock also counts other processes' turns. A
budget ``Tms`` searches ``T`` ms of wall-clock time a move; its row's ``iterations`` is then the
mean number of iterations a searched move ran (``UNO_MK_ENGINE`` chooses the engine).

    python -m benchmarks.ismcts_budget --players 2 --budgets 50 100 200 --games 1000 \
        --csv docs/images/ismcts_budget.csv                # appends rows
    python -m benchmarks.ismcts_budget --players 2 --budgets 100ms --games 300   # a time budget
    python -m benchmarks.ismcts_budget --plot docs/images/ismcts_budget.csv   # the PNG beside it

A benchmark, not a test: the figures depend on the machine.
"""

from __future__ import annotations

import argparse
import csv
import time
from pathlib import Path

from uno_mk_env.agents import ismcts
from uno_mk_env.evaluation import protocol
from uno_mk_env.files import append_csv_row

FIELDS = ["players", "series", "spec", "iterations", "games", "win_rate", "ci_low", "ci_high",
          "cpu_ms_per_move", "wall_ms_per_move", "searched_moves", "root_seed"]


class _Clock:
    """Times :meth:`ISMCTSAgent.search` of every agent in this process."""

    def __init__(self) -> None:
        self.cpu = self.wall = 0.0
        self.searches = self.iterations = 0
        self._search = ismcts.ISMCTSAgent.search

    def __enter__(self) -> _Clock:
        real = self._search
        clock = self

        def timed(agent, view, prior=-1):
            c, w = time.process_time(), time.perf_counter()
            try:
                return real(agent, view, prior)
            finally:
                clock.cpu += time.process_time() - c
                clock.wall += time.perf_counter() - w
                clock.searches += 1
                clock.iterations += agent.iterations

        ismcts.ISMCTSAgent.search = timed
        return self

    def __exit__(self, *exc: object) -> None:
        ismcts.ISMCTSAgent.search = self._search


def measure(players: int, budget: str, options: str, games: int, series: str,
            opponent: str = "strategic") -> dict[str, object]:
    spec = f"ismcts:{budget}{options}"
    line = protocol.Line(players, opponent, games, protocol.SEEDS[players])
    with _Clock() as clock:
        result = protocol.run_line(spec, line)
    m = protocol.line_metrics(result.records)
    w = m["win_rate"]
    n = max(clock.searches, 1)
    return {
        "players": players, "series": series, "spec": spec,
        "iterations": round(clock.iterations / n) if budget.endswith("ms") else int(budget),
        "games": m["games"], "win_rate": round(w["value"], 4), "ci_low": round(w["ci_low"], 4),
        "ci_high": round(w["ci_high"], 4), "cpu_ms_per_move": round(1000 * clock.cpu / n, 1),
        "wall_ms_per_move": round(1000 * clock.wall / n, 1), "searched_moves": clock.searches,
        "root_seed": line.seed,
    }


#: The legend's name of a CSV series at a player count, or ``None`` for a series whose prior was
#: a model that is no longer shipped: its rows stay in the CSV (the record; docs/agents.md names
#: the model of each) but are not drawn. A series not listed is drawn under its CSV name.
LEGEND: dict[tuple[int, str], str | None] = {
    (2, "ismcts prior=ppo (0.5.0 ppo_2p, 0.3.0 ppo_4p)"): None,
    (4, "ismcts prior=ppo (0.5.0 ppo_2p, 0.3.0 ppo_4p)"): None,
    (2, "ismcts prior=ppo (0.6.0)"): "ismcts prior=ppo_2p (shipped, 0.6.0)",
    (4, "ismcts prior=ppo (0.6.0)"): None,
}
#: A line under a panel's legend: what is not measured yet with the shipped models.
NOTES = {4: "ismcts prior=ppo_4p (shipped, 0.6.4): not yet measured"}
#: Offset (points) and alignment of the iteration labels, one per curve in turn: above left of
#: the point (clear of a rising curve and of the 100 ms line at the right), then below right, so
#: that the labels of two curves at one budget do not meet.
LABEL_PLACES = [((-5, 5), "right"), ((5, -11), "left"), ((5, 5), "left"), ((-5, -11), "right")]


def curves(rows: list[dict[str, str]], players: int) -> dict[str, list[tuple]]:
    """The curves drawn for ``players``: legend name -> sorted points ``(cpu ms, win rate, CI
    low, CI high, iterations)``; superseded series (:data:`LEGEND`) left out."""
    out: dict[str, list[tuple]] = {}
    for r in rows:
        if int(r["players"]) != players:
            continue
        name = LEGEND.get((players, r["series"]), r["series"])
        if name is not None:
            out.setdefault(name, []).append(
                (float(r["cpu_ms_per_move"]), float(r["win_rate"]), float(r["ci_low"]),
                 float(r["ci_high"]), int(r["iterations"])))
    return {name: sorted(pts) for name, pts in out.items()}


def plot(csv_path: Path) -> Path:
    """Win rate (95% CI) against CPU ms per move, one curve per current series and player
    count, the legend under each panel."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    with csv_path.open(newline="") as f:
        rows = list(csv.DictReader(f))
    counts = sorted({int(r["players"]) for r in rows})
    fig = Figure(figsize=(5.5 * len(counts), 4.8), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, len(counts), squeeze=False)[0]
    for ax, n in zip(axes, counts):
        for i, (name, pts) in enumerate(curves(rows, n).items()):
            x = [p[0] for p in pts]
            y = [p[1] for p in pts]
            err = [[p[1] - p[2] for p in pts], [p[3] - p[1] for p in pts]]
            bars = ax.errorbar(x, y, yerr=err, marker="o", capsize=3, label=name)
            offset, align = LABEL_PLACES[i % len(LABEL_PLACES)]
            for p in pts:
                ax.annotate(str(p[4]), (p[0], p[1]), textcoords="offset points", xytext=offset,
                            ha=align, fontsize="x-small", color=bars[0].get_color())
        ax.axhline(1 / n, color="grey", ls="--", lw=1, label=f"equal share 1/{n}")
        ax.axvline(100, color="tab:red", ls=":", lw=1, label="100 ms per move")
        if n in NOTES:
            ax.plot([], [], " ", label=NOTES[n])
        ax.set_xscale("log")
        ax.margins(x=0.1)
        ax.set_xlabel("CPU ms per searched move (labels: iterations)")
        ax.set_ylabel("win rate vs strategic (95% Wilson CI)")
        ax.set_title(f"ismcts vs {n - 1} x strategic, {n} players")
        handles, labels = ax.get_legend_handles_labels()
        order = sorted(range(len(labels)), key=lambda j: labels[j] == NOTES.get(n))
        ax.legend([handles[j] for j in order], [labels[j] for j in order], fontsize="small",
                  loc="upper center", bbox_to_anchor=(0.5, -0.16), frameon=False)
    out = csv_path.with_suffix(".png")
    fig.savefig(out, dpi=100)
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, nargs="+", default=[2])
    parser.add_argument("--budgets", nargs="+", default=["50", "100", "200"],
                        help="iterations (N) or wall-clock milliseconds (Tms) a move")
    parser.add_argument("--games", type=int, nargs="+", default=[1000],
                        help="games per point: one value, or one per budget")
    parser.add_argument("--options", default="", help="spec options, e.g. ':prior=ppo'")
    parser.add_argument("--series", default="ismcts", help="the curve's name in the CSV/plot")
    parser.add_argument("--csv", type=Path, help="append the rows to this CSV")
    parser.add_argument("--plot", type=Path, help="only draw the PNG of this CSV")
    args = parser.parse_args(argv)
    if args.plot:
        print(plot(args.plot))
        return
    for budget in args.budgets:  # a bad budget is named before any game is played
        try:
            ismcts.parse_spec(budget)
        except ValueError as e:
            parser.error(str(e))
    games = args.games * len(args.budgets) if len(args.games) == 1 else args.games
    if len(games) != len(args.budgets):
        parser.error("--games takes one value or one per budget")
    for n in args.players:
        for budget, g in zip(args.budgets, games):
            row = measure(n, budget, args.options, g, args.series)
            print(row, flush=True)
            if args.csv:
                append_csv_row(args.csv, FIELDS, row)


if __name__ == "__main__":
    main()
