"""``uno-mk tournament``: a seeded duplicate-deal tournament between agents.

::

    uno-mk tournament --agents greedy,random --players 4 --games 400 --seed 1 --workers 2
    uno-mk tournament --agents greedy,random --players 4 --games 400 --seed 1 --resume

Finished games are journaled in the ``--out`` folder as they complete (``journal.jsonl``); after
an interruption the same command with ``--resume`` plays only the missing games and writes the
same results. The folder is locked for the run (a second run into it is refused) and every
result file is written atomically.

Needs the ``eval`` extra (scipy: confidence intervals and the Plackett–Luce rating fit); without
it the command ends with one line naming it. matplotlib (the PNG plot), tqdm (the progress bar)
and rich (drawn tables) are used when installed and skipped otherwise.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from uno_mk_env.evaluation.tournament import (
    DEFAULT_MAX_STEPS,
    FILE_NAMES,
    JOURNAL_FILE,
    MAX_GAMES,
    MAX_REPLAYS,
    MAX_WORKERS,
    REPLAYS_FILE,
    OutputLock,
    TournamentResult,
    check_output_dir,
    check_sizes,
    entrant_labels,
    make_rules,
    run_tournament,
)
from uno_mk_env.rules import MAX_PLAYERS, MIN_PLAYERS

from .common import (
    CLIError,
    add_rule_args,
    check_agents,
    importable,
    players,
    print_table,
    require,
    rules_from_args,
    short_labels,
    specs,
)

#: What a tournament cannot do without (the ``eval`` extra): confidence intervals and ratings.
NEEDS = ("scipy",)
EXTRA = "eval"
LABEL_LIMIT = 32  #: longer agent labels are shortened from the left in tables and the plot


def add_parser(subparsers: Any) -> None:
    t = subparsers.add_parser(
        "tournament", help="play a seeded tournament between agents",
        description="Round-robin tournament with duplicate deals, confidence intervals and "
                    "Plackett-Luce ratings fitted on all games (needs the 'eval' extra).")
    t.add_argument("--agents", required=True,
                   help="comma-separated agent specs, e.g. greedy,random,ismcts:200")
    t.add_argument("--players", type=int, help="seats per table, 2-10 "
                   "(default: the number of agents)")
    t.add_argument("--games", type=int, default=100,
                   help=f"games to play, 1 to {MAX_GAMES:,} (rounded up to a multiple of "
                        "--players; default 100)")
    t.add_argument("--seed", type=int, default=0, help="root seed (default 0)")
    t.add_argument("--workers", type=int, default=1,
                   help=f"processes, 1 to {MAX_WORKERS} (default 1)")
    t.add_argument("--out", help="directory for the result files and the journal of finished "
                   "games (default: results/<players>p_<agents>_seed<seed>); one run at a time")
    t.add_argument("--resume", action="store_true",
                   help=f"continue the interrupted tournament in --out from its {JOURNAL_FILE} "
                        "(give the same arguments): the result equals an uninterrupted run's")
    t.add_argument("--no-duplicate", action="store_true",
                   help="a fresh deal for every game instead of replaying each deal per seat "
                        "rotation")
    t.add_argument("--max-steps", type=int, default=DEFAULT_MAX_STEPS,
                   help=f"decisions per round before the game counts as having no winner "
                        f"(default {DEFAULT_MAX_STEPS})")
    t.add_argument("--replays", type=int, default=0, metavar="N",
                   help=f"record the first N games (at most {MAX_REPLAYS}) decision by decision "
                        "into replays.json (view them with 'uno-mk replay --from DIR'; default 0)")
    t.add_argument("--allow-cheating", action="store_true",
                   help="admit agents that see hidden cards (oracle), as skill-ceiling "
                        "references; refused otherwise")
    t.add_argument("--no-plot", action="store_true",
                   help="do not write the PNG plot (never written without matplotlib)")
    t.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress bar (default: when stderr is a terminal and tqdm is installed)")
    add_rule_args(t)


def run(args: argparse.Namespace, out: TextIO) -> int:
    agent_specs = specs(args.agents, "--agents")
    rules = rules_from_args(args.preset, args.rule, args.rounds_to_500)
    n = players(args.players, rules, min(max(len(agent_specs), MIN_PLAYERS), MAX_PLAYERS))
    if args.max_steps < 1:
        raise CLIError(f"--max-steps must be at least 1, got {args.max_steps}")
    if args.seed < 0:
        raise CLIError(f"--seed must be a non-negative int, got {args.seed}")
    try:  # sizes beyond their bounds, before anything is built or played
        check_sizes(args.games, args.workers, args.replays,
                    len(entrant_labels(agent_specs, n)),
                    flags={"games": "--games", "workers": "--workers", "replays": "--replays",
                           "entrants": "the number of entrants (--agents)"})
    except ValueError as e:
        raise CLIError(str(e)) from None
    require(NEEDS, EXTRA, "uno-mk tournament")
    check_agents(agent_specs, args.allow_cheating)
    rules.pop("num_players", None)
    out_dir = Path(args.out) if args.out else Path("results") / run_name(
        agent_specs, n, args.seed, make_rules(rules, n).match
    )
    # before playing: a bad --out must not cost the results
    check_output_dir(out_dir, [*FILE_NAMES.values(), JOURNAL_FILE,
                               *([REPLAYS_FILE] if args.replays else [])])
    with OutputLock(out_dir, "tournament"):  # one run per folder; released if this one dies
        result = run_tournament(
            agent_specs, n, args.games, seed=args.seed, rules=rules,
            duplicate=not args.no_duplicate, workers=args.workers,
            progress=progress_wanted(args.progress), max_steps=args.max_steps,
            allow_cheating=args.allow_cheating,
            replays=args.replays, journal=out_dir / JOURNAL_FILE, resume=args.resume,
        )
        print_leaderboard(result, out)
        paths = save(result, out_dir, plot=not args.no_plot, out=out)
    print(f"Results written to {out_dir}/: {', '.join(p.name for p in paths.values())}"
          f" (and the journal {JOURNAL_FILE})", file=out)
    return 0


def progress_wanted(asked: bool | None) -> bool:
    """A progress bar when asked (``--progress``) or, by default, when stderr is a terminal:
    tqdm redraws its line with carriage returns, which piles up in a log file. Never without
    tqdm."""
    wanted = asked if asked is not None else sys.stderr.isatty()
    return bool(wanted) and importable("tqdm")


def run_name(agent_specs: Sequence[str], players: int, seed: int, match: str) -> str:
    """The default result folder's name."""
    agents = "_".join(re.sub(r"[^A-Za-z0-9.-]+", "-", Path(s).stem if "/" in s else s)
                      for s in agent_specs)
    suffix = "_500" if match == "target_score" else ""
    return f"{players}p_{agents}_seed{seed}{suffix}"[:120]


def save(result: TournamentResult, out_dir: Path, plot: bool = True,
         out: TextIO | None = None) -> dict[str, Path]:
    """``result.save`` with the plot's agent names shortened like the tables' (long model paths
    would overlap) and no plot without matplotlib (a note on ``out`` says so)."""
    if plot and not importable("matplotlib"):
        plot = False
        if out is not None:
            print("note: no plot (matplotlib is not installed: pip install "
                  f"'uno-mk-env[{EXTRA}]')", file=out)
    short = short_labels(result.entrants, LABEL_LIMIT)
    if not plot or short == list(result.entrants):
        return result.save(out_dir, plot=plot)
    paths = result.save(out_dir, plot=False)
    relabelled = TournamentResult(config=result.config, entrants=short, records=result.records,
                                  elapsed=result.elapsed, workers=result.workers)
    paths["plot"] = Path(out_dir) / FILE_NAMES["plot"]
    relabelled.plot(paths["plot"])
    return paths


#: Leaderboard columns (row key, header) when the evaluation module does not list them.
_COLUMNS = (("rank", "#"), ("agent", "agent"), ("games", "games"), ("wins", "wins"),
            ("win_rate", "win rate [95% CI]"), ("mean_reward", "reward"),
            ("points_per_round", "pts/round"), ("mean_place", "place"), ("rating", "rating"))
_FORMATS = {"win_rate": ".3f", "mean_reward": "+.3f", "points_per_round": ".1f",
            "mean_place": ".2f"}


def leaderboard_columns() -> list[tuple[str, str]]:
    """(row key, header) of each leaderboard column, as the evaluation module lists them."""
    from uno_mk_env.evaluation import tournament as t

    listed = getattr(t, "LEADERBOARD_COLUMNS", None)
    return [(key, header) for key, header, *_ in listed] if listed else list(_COLUMNS)


def cell(key: str, row: dict[str, Any]) -> str:
    """One leaderboard cell: counts as they are, figures rounded, with their interval when the
    row has one (``win_ci_low``/``win_ci_high`` for ``win_rate``, ``<key>_ci_low``/... else)."""
    value = row.get(key)
    if value is None:
        return "-"
    if isinstance(value, (int, str)) and not isinstance(value, bool):
        return str(value)
    fmt = _FORMATS.get(key, ".2f")
    text = format(value, fmt)
    for stem in (key, key.removesuffix("_rate")):
        lo, hi = row.get(f"{stem}_ci_low"), row.get(f"{stem}_ci_high")
        if lo is not None and hi is not None:
            return f"{text} [{format(lo, fmt)}, {format(hi, fmt)}]"
    return text


def print_leaderboard(result: TournamentResult, out: TextIO) -> None:
    """The leaderboard and head-to-head tables (drawn by rich when installed, else plain), then
    the result's notes and outcomes. Agent labels longer than :data:`LABEL_LIMIT` are shortened
    from the left, keeping what tells them apart."""
    c = result.config
    short = dict(zip(result.entrants, short_labels(result.entrants, LABEL_LIMIT)))
    title = (f"{c['num_players']} players · {c['games']} games"
             f"{' · duplicate deals' if c['duplicate'] else ''} · seed {c['seed']} · "
             f"match={c['rules']['match']} · sorted by win rate")
    columns = leaderboard_columns()
    board = result.leaderboard()
    rows = [[short[r["agent"]] if key == "agent" else cell(key, r) for key, _ in columns]
            for r in board]
    headers = [header for _, header in columns]
    print_table(out, title, headers, rows,
                right=[h for (key, h) in columns if key != "agent"])
    h2h = result.head_to_head()
    order = [result.entrants.index(r["agent"]) for r in board]
    if len(order) <= 10:
        names = [short[result.entrants[e]] for e in order]
        cells = [
            [names[i], *("-" if h2h["score"][a][b] is None else f"{h2h['score'][a][b]:.3f}"
                         for b in order)]
            for i, a in enumerate(order)
        ]
        print_table(out, "head-to-head: row placed ahead of column", ["", *names], cells,
                    right=names)
    from uno_mk_env.evaluation.tournament import leaderboard_legend

    print("columns:", file=out)
    for line in leaderboard_legend():
        print(f"  {line}", file=out)
    for note in getattr(result, "notes", list)():
        print(f"note: {note}", file=out)
    o = result.outcomes()
    print(f"{o['win']} games won, {o['no_winner']} without winner (stalemate), "
          f"{o['capped']} stopped at the step cap; {result.elapsed:.1f} s with "
          f"{result.workers} worker(s)", file=out)
