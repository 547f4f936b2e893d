"""``uno-mk evaluate AGENT``: the standard evaluation protocol and its benchmark card.

::

    uno-mk evaluate ppo:models/ppo_2p.npz --workers 2
    uno-mk evaluate my_agent_spec --players 2 --games 2000 --out results/card
    uno-mk evaluate oracle --opponents strategic --allow-cheating
    uno-mk evaluate ppo:models/ppo_2p.npz --players 2 --opponents strategic --preset strict

The protocol (:mod:`uno_mk_env.evaluation.protocol`, docs/evaluation.md): the agent against a
fixed suite of opponents at 2 and 4 players on fixed, published deals (duplicate deals with
seat rotation), 10,000 games per line by default. Prints each line as it finishes, then the
card; writes ``card.json``, ``card.md`` and every line's game records (``games/``) into the
card's own folder (``--out``, default ``results/evaluate/<agent>``), the folder locked while it
runs. A folder that holds a card is refused unless ``--force``, which replaces the card and
removes the records of lines the new card lacks. The run writes into a staging folder inside
``--out`` (``.new-card``) and moves the finished card and its records into place at the end
(:func:`uno_mk_env.evaluation.protocol.publish`), so whenever the run stops (Ctrl-C, SIGKILL, a
full disk) the folder holds the old card with its records, or no card: never a card and records
of different runs. A full disk (or a file-size limit) ends the run with one line and exit code 1.
Needs the ``eval`` extra (scipy). Agents that cheat are refused unless ``--allow-cheating`` is
given.
"""

from __future__ import annotations

import argparse
import re
import shlex
from pathlib import Path
from typing import Any, TextIO

from uno_mk_env.agents.base import AgentSpecError
from uno_mk_env.evaluation import protocol
from uno_mk_env.evaluation.sprt import SprtSpec
from uno_mk_env.evaluation.tournament import MAX_GAMES, OutputLock, check_output_dir, check_sizes

from .common import (
    CLIError,
    add_rule_args,
    no_space,
    require,
    rules_from_args,
    specs,
    write_error,
)
from .tournament import PROGRESS_HELP, add_scale_args, progress_wanted, sprt_spec

EXTRA = "eval"


def add_parser(subparsers: Any) -> None:
    e = subparsers.add_parser(
        "evaluate", help="the standard evaluation protocol: a benchmark card for one agent",
        description="Evaluate one agent with the standard protocol (fixed deals, duplicate "
                    "deals with seat rotation, a fixed suite of opponents at 2 and 4 players) "
                    "and write its benchmark card (JSON + Markdown) and game records.")
    e.add_argument("agent", help="the agent spec to evaluate (see 'uno-mk agents')")
    e.add_argument("--players", type=int, nargs="+", default=list(protocol.PLAYER_COUNTS),
                   metavar="N", help="player counts (default: "
                   f"{' '.join(map(str, protocol.PLAYER_COUNTS))})")
    e.add_argument("--games", type=int, default=protocol.DEFAULT_GAMES,
                   help=f"games per line, 1 to {MAX_GAMES:,} (default {protocol.DEFAULT_GAMES}; "
                        "lines against a "
                        f"search opponent play at most {protocol.SEARCH_LINE_GAMES}); a "
                        "deviation from the protocol when changed, recorded in the card")
    e.add_argument("--opponents", help="comma-separated opponent specs instead of the suite "
                   "(a deviation, recorded in the card)")
    e.add_argument("--workers", type=int, default=1,
                   help="processes (default 1; results do not depend on it)")
    add_scale_args(e, "the agent against each line's opponents")
    e.add_argument("--out", help="the card's own folder, for the card and its game records "
                   "(default: results/evaluate/<agent>); a folder holding a card is refused "
                   "unless --force")
    e.add_argument("--force", action="store_true",
                   help="replace the card in --out (its files, including the game records of "
                        "lines the new card does not have, are replaced or removed)")
    e.add_argument("--allow-cheating", action="store_true",
                   help="admit an agent that sees hidden cards (oracle): a skill-ceiling "
                        "reference, marked as cheating in the card")
    e.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help=PROGRESS_HELP)
    add_rule_args(e)
    e.epilog = ("--preset / --rule play every line under other rules than the default: a "
                "deviation from the protocol, recorded in the card")


def _name(spec: str) -> str:
    name = Path(spec[4:]).stem if spec.startswith("ppo:") else spec
    return re.sub(r"[^A-Za-z0-9.-]+", "-", name)[:80]


def run(args: argparse.Namespace, out: TextIO) -> int:
    try:  # sizes beyond their bounds, before anything is built or played
        check_sizes(args.games, args.workers, flags={"games": "--games", "workers": "--workers"})
    except ValueError as e:
        raise CLIError(str(e)) from None
    for n in args.players:
        if n not in protocol.SEEDS:
            raise CLIError(f"bad player count {n}: the protocol has seeds for "
                           f"{min(protocol.SEEDS)} to {max(protocol.SEEDS)} players")
    if args.address and args.backend != "ray":
        raise CLIError("--address names a Ray cluster: give it with --backend ray")
    sprt = sprt_spec(args)
    opponents = specs(args.opponents, "--opponents") if args.opponents else None
    rules = rules_from_args(args.preset, args.rule, args.rounds_to_500)
    if "num_players" in rules:
        raise CLIError("--rule num_players: the player counts are --players")
    require(("scipy",), EXTRA, "uno-mk evaluate")
    if args.backend == "ray":
        require(("ray",), "rllib", "uno-mk evaluate --backend ray")
    lines = protocol.plan(args.players, args.games, opponents)
    try:  # a bad or cheating agent is refused before the output place is made
        protocol.check_cheating(args.agent, [line.opponent for line in lines],
                                args.allow_cheating)
    except AgentSpecError as e:
        raise CLIError(str(e)) from None
    out_dir = Path(args.out) if args.out else Path("results") / "evaluate" / _name(args.agent)
    check_output_dir(out_dir, [protocol.CARD_JSON, protocol.CARD_MD])
    check_output_dir(out_dir / "games", [f"{line.name}.json" for line in lines])
    if not args.force:
        refuse_an_earlier_card(out_dir)
    with OutputLock(out_dir, "evaluation"):
        return _evaluate(args, out, rules, opponents, out_dir, sprt)


def refuse_an_earlier_card(out_dir: Path) -> None:
    """A card already in ``out_dir`` is never replaced silently.

    Raises:
        CLIError: naming the folder and ``--force``.
    """
    earlier = [name for name in (protocol.CARD_JSON, protocol.CARD_MD)
               if (out_dir / name).exists()]
    earlier += [f"games/{p.name}" for p in sorted((out_dir / "games").glob("*.json"))][:1]
    if earlier:
        raise CLIError(f"{str(out_dir)!r} already holds a card ({', '.join(earlier)}): pass "
                       "--force to replace it, or choose another --out")


def _evaluate(args: argparse.Namespace, out: TextIO, rules: dict[str, Any],
              opponents: list[str] | None, out_dir: Path, sprt: SprtSpec | None) -> int:
    command = "uno-mk evaluate " + " ".join(shlex.quote(a) for a in _argv(args))

    def report(line: protocol.Line, m: dict[str, Any]) -> None:
        w = m["win_rate"]
        test = f" ({m['sprt']['summary']})" if "sprt" in m else ""
        print(f"{line.num_players} players vs {line.opponent}: win rate {w['value']:.3f} "
              f"[{w['ci_low']:.3f}, {w['ci_high']:.3f}] over {m['games']:,} games{test}",
              file=out, flush=True)

    try:
        card = protocol.evaluate(
            args.agent, args.players, args.games, opponents, workers=args.workers,
            allow_cheating=args.allow_cheating, out_dir=out_dir, command=command,
            on_line=report, progress=progress_wanted(args.progress), rules=rules, sprt=sprt,
            backend=args.backend, address=args.address,
        )
    except AgentSpecError as e:
        raise CLIError(str(e)) from None
    except OSError as e:
        if not no_space(e):
            raise
        raise write_error(e, out_dir, f"{str(out_dir)!r} is as it was before this run (its "
                          "files are replaced only once the new card is complete): free space, "
                          "then run it again") from None
    print(file=out)
    print(protocol.card_markdown(card), file=out)
    print(f"Card written to {out_dir}/: {protocol.CARD_JSON}, {protocol.CARD_MD}, games/",
          file=out)
    return 0


def _argv(args: argparse.Namespace) -> list[str]:
    """The command's arguments as given (for the card)."""
    argv = [args.agent]
    if list(args.players) != list(protocol.PLAYER_COUNTS):
        argv += ["--players", *map(str, args.players)]
    if args.games != protocol.DEFAULT_GAMES:
        argv += ["--games", str(args.games)]
    if args.opponents:
        argv += ["--opponents", args.opponents]
    if args.workers != 1:
        argv += ["--workers", str(args.workers)]
    if args.allow_cheating:
        argv.append("--allow-cheating")
    if args.sprt is not None:
        argv += ["--sprt", args.sprt, "--sprt-alpha", f"{args.sprt_alpha:g}", "--sprt-beta",
                 f"{args.sprt_beta:g}", "--sprt-min-games", str(args.sprt_min_games)]
    if args.preset is not None:
        argv += ["--preset", args.preset]
    for item in args.rule:
        argv += ["--rule", item]
    if args.rounds_to_500:
        argv.append("--rounds-to-500")
    return argv
