"""``uno-mk tournament``: a seeded duplicate-deal tournament between agents.

::

    uno-mk tournament --agents greedy,random --players 4 --games 400 --seed 1 --workers 2
    uno-mk tournament --agents greedy,random --players 4 --games 400 --seed 1 --resume
    uno-mk tournament --agents ppo:ppo_2p,strategic --sprt 0,20 --backend ray

``--sprt ELO0,ELO1`` stops as soon as a sequential test of the first agent against the second
decides (``uno_mk_env.evaluation.sprt``; ``--games`` is then the budget, default 10,000).
``--backend ray`` plays the same chunks as tasks on a Ray cluster (``--address``, default
``RAY_ADDRESS``, else a Ray started on this machine): the results are the same.

Finished games are journaled in the ``--out`` folder as they complete (``journal.jsonl``); after
an interruption the same command with ``--resume`` plays only the missing games and writes the
same results. A folder holding an interrupted tournament is refused without ``--resume`` (finish
it) or ``--restart`` (discard its games and start afresh). The folder is locked for the run (a
second run into it is refused) and every result file is written atomically. A full disk (or a
file-size limit) ends the run with one line and exit code 1: the journal keeps every game
finished before it, and ``--resume`` carries on once there is space.

Progress goes to stderr with the rate and the time left: a bar on a terminal, a plain line
every few seconds in a log (``--no-progress``: none). Needs the ``eval`` extra (scipy:
confidence intervals and the Plackett–Luce rating fit); without it the command ends with one
line naming it. matplotlib (the PNG plot), tqdm (the progress bar) and rich (drawn tables) are
used when installed and skipped otherwise.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from uno_mk_env.engine.rules import MAX_PLAYERS, MIN_PLAYERS
from uno_mk_env.errors import quote
from uno_mk_env.evaluation import tournament as tournament_module
from uno_mk_env.evaluation.journal import journaled_games, unfinished
from uno_mk_env.evaluation.progress import INTERVAL
from uno_mk_env.evaluation.sprt import DEFAULT_MIN_GAMES, SprtError, SprtSpec, parse_bounds
from uno_mk_env.evaluation.tournament import (
    BACKENDS,
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
    leaderboard_legend,
    make_rules,
    run_tournament,
)

from .common import (
    CLIError,
    add_rule_args,
    check_agents,
    importable,
    no_space,
    players,
    print_table,
    print_wrapped,
    require,
    rules_from_args,
    short_labels,
    specs,
    write_error,
)

#: What a tournament cannot do without (the ``eval`` extra): confidence intervals and ratings.
NEEDS = ("scipy",)
EXTRA = "eval"
LABEL_LIMIT = 32  #: longer agent labels are shortened from the left in tables and the plot
#: ``--progress``'s help, the same for every command that plays many games.
PROGRESS_HELP = (f"progress on stderr with the rate and the time left (default: on): a bar on a "
                 f"terminal with tqdm, else a line every {INTERVAL:.0f} s")


def add_parser(subparsers: Any) -> None:
    t = subparsers.add_parser(
        "tournament", help="play a seeded tournament between agents",
        description="Round-robin tournament with duplicate deals, confidence intervals and "
                    "Plackett-Luce ratings fitted on all games (needs the 'eval' extra).")
    t.add_argument("--agents", required=True,
                   help="comma-separated agent specs, e.g. greedy,random,ismcts:200")
    t.add_argument("--players", type=int, help="seats per table, 2-10 "
                   "(default: the number of agents)")
    t.add_argument("--games", type=int,
                   help=f"games to play, 1 to {MAX_GAMES:,} (rounded up to a multiple of "
                        f"--players; default {DEFAULT_GAMES}, with --sprt the most it may use, "
                        f"default {DEFAULT_SPRT_GAMES:,})")
    t.add_argument("--seed", type=int, default=0, help="root seed (default 0)")
    t.add_argument("--workers", type=int, default=1,
                   help=f"processes, 1 to {MAX_WORKERS} (default 1); with --backend ray, "
                        "Ray tasks in flight (times 4)")
    add_scale_args(t, "the first agent against the second (give two agents at 2 players, "
                      "or as many as --players)")
    t.add_argument("--out", help="directory for the result files and the journal of finished "
                   "games (default: results/<players>p_<agents>_seed<seed>); one run at a time")
    t.add_argument("--resume", action="store_true",
                   help=f"continue the interrupted tournament in --out from its {JOURNAL_FILE} "
                        "(give the same arguments): the result equals an uninterrupted run's")
    t.add_argument("--restart", action="store_true",
                   help="start afresh in an --out that holds an interrupted tournament, "
                        "discarding its journaled games (refused without --restart or --resume)")
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
                   help=PROGRESS_HELP)
    add_rule_args(t)


#: Games of a tournament without ``--games``; with ``--sprt``, the budget of the test.
DEFAULT_GAMES = 100
DEFAULT_SPRT_GAMES = 10_000


def add_scale_args(p: argparse.ArgumentParser, tested: str) -> None:
    """``--backend``, ``--address`` and the sequential test's flags (``--sprt`` tests
    ``tested``), shared by ``tournament`` and ``evaluate``."""
    p.add_argument("--backend", choices=BACKENDS, default="local",
                   help="where the games are played: local processes (default) or tasks on a "
                        "Ray cluster (needs the rllib extra); the results are the same")
    p.add_argument("--address", help="the Ray cluster to join with --backend ray (default: "
                   "RAY_ADDRESS, else a Ray started on this machine for the run)")
    p.add_argument("--sprt", metavar="ELO0,ELO1",
                   help=f"stop as soon as a sequential probability ratio test of {tested} "
                        "decides between H0 elo<=ELO0 and H1 elo>=ELO1 (logistic Elo, on "
                        "duplicate-deal pairs as fishtest's pentanomial model), e.g. 0,20")
    p.add_argument("--sprt-alpha", type=float, default=0.05,
                   help="--sprt: chance of accepting H1 when elo=ELO0 (default 0.05)")
    p.add_argument("--sprt-beta", type=float, default=0.05,
                   help="--sprt: chance of accepting H0 when elo=ELO1 (default 0.05)")
    p.add_argument("--sprt-min-games", type=int, default=DEFAULT_MIN_GAMES,
                   help=f"--sprt: games before the test may stop (default {DEFAULT_MIN_GAMES})")


def sprt_spec(args: argparse.Namespace) -> SprtSpec | None:
    """The test of ``--sprt`` and its options, or ``None``.

    Raises:
        CLIError: a bad value, one line naming the flag.
    """
    if args.sprt is None:
        given = [f for f, v, d in (("--sprt-alpha", args.sprt_alpha, 0.05),
                                   ("--sprt-beta", args.sprt_beta, 0.05),
                                   ("--sprt-min-games", args.sprt_min_games, DEFAULT_MIN_GAMES))
                 if v != d]
        if given:
            raise CLIError(f"{', '.join(given)} set(s) the sequential test of --sprt, which is "
                           "not given")
        return None
    try:
        elo0, elo1 = parse_bounds(args.sprt)
        return SprtSpec(elo0, elo1, args.sprt_alpha, args.sprt_beta, args.sprt_min_games)
    except SprtError as e:
        message = str(e)
        for name in ("alpha", "beta", "min_games"):
            message = message.replace(f"SPRT {name}", f"--sprt-{name.replace('_', '-')}")
        raise CLIError(message) from None


def run(args: argparse.Namespace, out: TextIO) -> int:
    if args.resume and args.restart:
        raise CLIError("--resume finishes the tournament in --out and --restart discards it: "
                       "give one of them")
    agent_specs = specs(args.agents, "--agents")
    rules = rules_from_args(args.preset, args.rule, args.rounds_to_500)
    n = players(args.players, rules, min(max(len(agent_specs), MIN_PLAYERS), MAX_PLAYERS))
    if args.max_steps < 1:
        raise CLIError(f"--max-steps must be at least 1, got {args.max_steps}")
    if args.seed < 0:
        raise CLIError(f"--seed must be a non-negative int, got {args.seed}")
    sprt = sprt_spec(args)
    if sprt is not None and len(agent_specs) != n:
        raise CLIError(f"--sprt tests the first agent against the others at one table: give as "
                       f"many agents as --players ({n}), got {len(agent_specs)}")
    if sprt is not None and args.no_duplicate:
        raise CLIError("--sprt counts duplicate-deal pairs: it cannot run with --no-duplicate")
    if args.address and args.backend != "ray":
        raise CLIError("--address names a Ray cluster: give it with --backend ray")
    if args.games is None:
        args.games = DEFAULT_SPRT_GAMES if sprt is not None else DEFAULT_GAMES
    try:  # sizes beyond their bounds, before anything is built or played
        check_sizes(args.games, args.workers, args.replays,
                    len(entrant_labels(agent_specs, n)),
                    flags={"games": "--games", "workers": "--workers", "replays": "--replays",
                           "entrants": "the number of entrants (--agents)"})
    except ValueError as e:
        raise CLIError(str(e)) from None
    require(NEEDS, EXTRA, "uno-mk tournament")
    if args.backend == "ray":
        require(("ray",), "rllib", "uno-mk tournament --backend ray")
    check_agents(agent_specs, args.allow_cheating)
    rules.pop("num_players", None)
    out_dir = Path(args.out) if args.out else Path("results") / run_name(
        agent_specs, n, args.seed, make_rules(rules, n).match
    )
    # before playing: a bad --out must not cost the results
    check_output_dir(out_dir, [*FILE_NAMES.values(), JOURNAL_FILE,
                               *([REPLAYS_FILE] if args.replays else [])])
    journal = out_dir / JOURNAL_FILE
    with OutputLock(out_dir, "tournament"):  # one run per folder; released if this one dies
        if not (args.resume or args.restart):
            refuse_an_interrupted_tournament(out_dir)
        try:
            result = run_tournament(
                agent_specs, n, args.games, seed=args.seed, rules=rules,
                duplicate=not args.no_duplicate, workers=args.workers,
                progress=progress_wanted(args.progress), max_steps=args.max_steps,
                allow_cheating=args.allow_cheating,
                replays=args.replays, journal=journal, resume=args.resume,
                sprt=sprt, backend=args.backend, address=args.address,
            )
            print_leaderboard(result, out)
            paths = save(result, out_dir, plot=not args.no_plot, out=out)
        except OSError as e:
            if not no_space(e):
                raise
            raise write_error(e, out_dir, _what_is_kept(journal)) from None
    print_wrapped(out, f"Results written to {out_dir}/: "
                  f"{', '.join(p.name for p in paths.values())} (and the journal {JOURNAL_FILE})")
    return 0


def refuse_an_interrupted_tournament(out_dir: Path) -> None:
    """Finished games are never thrown away silently: an interrupted tournament's journal in
    ``out_dir`` (:func:`~uno_mk_env.evaluation.journal.unfinished`) is refused.

    Raises:
        CLIError: naming the folder, what its journal holds, ``--resume`` and ``--restart``.
    """
    held = unfinished(out_dir / JOURNAL_FILE, out_dir / FILE_NAMES["json"])
    if held:
        raise CLIError(f"{quote(str(out_dir), 160)} holds an interrupted tournament ({held} in "
                       f"{JOURNAL_FILE}): pass --resume to finish it (with the same arguments), "
                       "or --restart to discard it and start afresh")


def _what_is_kept(journal: Path) -> str:
    """After a write that found no space: what the journal keeps and how to carry on."""
    counts = journaled_games(journal)
    if counts is None:
        return "no game was kept: free space, then run the same command again"
    games, total = counts
    return (f"the {games:,} finished games of {total:,} are kept in {JOURNAL_FILE}: free space, "
            "then run the same command with --resume")


def progress_wanted(asked: bool | None) -> bool:
    """Progress unless ``--no-progress``: a bar on a terminal (with tqdm), else a plain line
    every few seconds (:class:`~uno_mk_env.evaluation.progress.Progress`), so that a log of a
    long run says how far it got and how long it has left."""
    return True if asked is None else asked


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

    listed = getattr(tournament_module, "LEADERBOARD_COLUMNS", None)
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


#: Leaderboard columns a narrow terminal drops, first to last (the rank is the row order, the
#: reward follows from the win rate, the counts from the title): win rate and rating stay.
NARROW_DROPS = ("rank", "mean_reward", "games", "wins", "points_per_round", "mean_place")


def print_leaderboard(result: TournamentResult, out: TextIO) -> None:
    """The leaderboard and head-to-head tables (drawn by rich when installed, else plain; both
    fit the terminal, :func:`~uno_mk_env.cli.common.print_table`), then the legend of the
    columns shown, the result's notes, why the rating orders the entrants otherwise than the
    win rate when it does (:func:`ranking_note`), and the outcomes. Agent labels longer than
    :data:`LABEL_LIMIT` are shortened from the left, keeping what tells them apart."""
    c = result.config
    short = dict(zip(result.entrants, short_labels(result.entrants, LABEL_LIMIT)))
    title = (f"{c['num_players']} players · {c['games']} games"
             f"{' · duplicate deals' if c['duplicate'] else ''} · seed {c['seed']} · "
             f"match={c['rules']['match']} · sorted by win rate")
    columns = leaderboard_columns()
    header = dict(columns)
    board = result.leaderboard()
    rows = [[short[r["agent"]] if key == "agent" else cell(key, r) for key, _ in columns]
            for r in board]
    headers = [h for _, h in columns]
    shown = print_table(out, title, headers, rows,
                        right=[h for (key, h) in columns if key != "agent"],
                        drop=[header[key] for key in NARROW_DROPS if key in header])
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
    print("columns:", file=out)
    for line in leaderboard_legend():
        if line.split(": ", 1)[0] in shown:
            print_wrapped(out, line, indent="  ")
    hidden = [h for h in headers if h not in shown]
    if hidden:
        print_wrapped(out, f"not shown at this width: {', '.join(hidden)} (a wider terminal "
                      "or COLUMNS shows them)", indent="  ")
    notes = [*getattr(result, "notes", list)(), *filter(None, [ranking_note(board, short)])]
    for note in notes:
        print_wrapped(out, f"note: {note}")
    o = result.outcomes()
    print_wrapped(out, f"{o['win']} games won, {o['no_winner']} without winner (stalemate), "
                  f"{o['capped']} stopped at the step cap; {result.elapsed:.1f} s with "
                  f"{result.workers} worker(s)")


def ranking_note(board: Sequence[dict[str, Any]], names: dict[str, str] | None = None
                 ) -> str | None:
    """Why the leaderboard, sorted by win rate, puts an entrant above one with a higher rating,
    or ``None`` when the two orders agree: the first such pair, in words (the rating and the
    mean place count every finishing place, the win rate only first places).

    Args:
        board: the leaderboard's rows, in its order (``TournamentResult.leaderboard()``).
        names: display names of the entrants (default: their labels).
    """
    names = names or {}
    for i, a in enumerate(board):
        for b in board[i + 1:]:
            if b["rating"] > a["rating"] and b["win_rate"] < a["win_rate"]:
                na, nb = (names.get(r["agent"], r["agent"]) for r in (a, b))
                place = (f" and a better mean place ({b['mean_place']:.2f} against "
                         f"{a['mean_place']:.2f})" if b["mean_place"] < a["mean_place"] else "")
                return (f"sorted by win rate, the share of games won: {na} wins more often than "
                        f"{nb} ({a['win_rate']:.3f} against {b['win_rate']:.3f}), but {nb} has "
                        f"the higher rating ({b['rating']:.2f} against {a['rating']:.2f}){place}: "
                        "the rating and the mean place count every finishing place, not only "
                        f"first places, and {nb} places better when it does not win")
    return None
