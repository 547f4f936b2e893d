"""``uno-mk replay``: one self-contained HTML page replaying games decision by decision.

::

    uno-mk replay --agents strategic,greedy,ppo:models/ppo_4p.npz --players 3 --seed 5
    uno-mk replay --from results/<tournament>/replays.json --game 0 --out replay.html

The page (inline CSS, JavaScript and SVG; no network access; opens from disk) steps through
every decision with buttons, the arrow keys and a slider, and shows the table, the legal actions
with the chosen one (and the policy's probabilities for agents that give them), the event log,
and the spectator's view or any seat's view (:mod:`uno_mk_env.evaluation.replay`).
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any, TextIO

from uno_mk_env.engine.rules import MAX_PLAYERS, MIN_PLAYERS
from uno_mk_env.evaluation.replay import DEFAULT_MAX_STEPS, record_games, select_games, write_json
from uno_mk_env.evaluation.replay_format import MAX_REPLAY_GAMES, ReplayError, load_recording
from uno_mk_env.evaluation.replay_page import write_html

from .common import CLIError, add_rule_args, check_agents, players, rules_from_args, specs


def add_parser(subparsers: Any) -> None:
    r = subparsers.add_parser(
        "replay", help="write an HTML page replaying games decision by decision",
        description="Play games between agents (or read games saved by 'uno-mk tournament "
                    "--replays N') and write one self-contained HTML page that replays them: "
                    "step through every decision, see the legal actions and the chosen one, "
                    "and switch between the spectator's view and any seat's view.")
    source = r.add_mutually_exclusive_group(required=True)
    source.add_argument("--agents", help="comma-separated agent specs, cycled over the seats "
                        "(e.g. strategic,greedy,ppo:models/ppo_4p.npz)")
    source.add_argument("--from", dest="source", metavar="FILE",
                        help="a recording: the replays.json of 'uno-mk tournament --replays N' "
                             "(or its folder), or a file written by --json")
    r.add_argument("--players", type=int, help="players at the table, 2-10 "
                   "(default: the number of agents)")
    r.add_argument("--seed", type=int, default=0,
                   help="deal seed of the first game (game i uses seed + i; default 0)")
    r.add_argument("--games", type=int, default=1, help="games to play (default 1)")
    r.add_argument("--game", metavar="I[,J...]",
                   help="with --from: the games of the recording to show (default: all)")
    r.add_argument("--max-steps", type=int, default=DEFAULT_MAX_STEPS,
                   help=f"decisions per round before the game is stopped "
                        f"(default {DEFAULT_MAX_STEPS})")
    r.add_argument("--out", help="the HTML file (default: results/replays/<name>.html, or "
                   "replays.html beside the --from file)")
    r.add_argument("--json", metavar="FILE", help="also write the recording as JSON")
    r.add_argument("--title", help="the page's title")
    add_rule_args(r)


def run(args: argparse.Namespace, out: TextIO) -> int:
    try:
        if args.source is not None:
            data, default_out = _from_file(args)
        else:
            data, default_out = _play(args)
        path = write_html(data, Path(args.out) if args.out else default_out, args.title)
        if args.json:
            write_json(data, args.json)
    except ReplayError as e:
        raise CLIError(str(e)) from None
    games = data["games"]
    decisions = sum(len(g["steps"]) - 1 for g in games)
    print(f"Replay written to {path} ({len(games)} game{'s' if len(games) != 1 else ''}, "
          f"{decisions} decisions); open it in a browser", file=out)
    return 0


def _play(args: argparse.Namespace) -> tuple[dict[str, Any], Path]:
    if args.game is not None:
        raise CLIError("--game selects games of a recording: use it with --from")
    agent_specs = specs(args.agents, "--agents")
    rules = rules_from_args(args.preset, args.rule, args.rounds_to_500)
    n = players(args.players, rules, min(max(len(agent_specs), MIN_PLAYERS), MAX_PLAYERS))
    for flag, value in (("--games", args.games), ("--max-steps", args.max_steps)):
        if value < 1:
            raise CLIError(f"{flag} must be at least 1, got {value}")
    if args.games > MAX_REPLAY_GAMES:  # every recorded game is held in memory and in the page
        raise CLIError(f"--games must be at least 1 and at most {MAX_REPLAY_GAMES}, got "
                       f"{args.games}")
    if args.seed < 0:
        raise CLIError(f"--seed must be a non-negative int, got {args.seed}")
    check_agents(agent_specs)
    rules.pop("num_players", None)
    data = record_games(agent_specs, n, seed=args.seed, rules=rules, games=args.games,
                        max_steps=args.max_steps)
    agents = "_".join(re.sub(r"[^A-Za-z0-9.-]+", "-", Path(s).stem if "/" in s else s)
                      for s in agent_specs)
    return data, Path("results") / "replays" / (f"{n}p_{agents}_seed{args.seed}"[:120] + ".html")


def _from_file(args: argparse.Namespace) -> tuple[dict[str, Any], Path]:
    given = {"--players": args.players, "--games": args.games != 1,
             "--seed": args.seed != 0, "--preset": args.preset, "--rule": args.rule,
             "--rounds-to-500": args.rounds_to_500}
    clash = [flag for flag, value in given.items() if value]
    if clash:
        raise CLIError(f"{', '.join(clash)} apply to played games, not to --from "
                       f"(the recording fixes them)")
    data = load_recording(args.source)
    indices = None
    if args.game is not None:
        try:
            indices = [int(i) for i in args.game.split(",") if i.strip()]
        except ValueError:
            indices = []
        if not indices:
            raise CLIError(f"--game expects game numbers like 0 or 0,2; got {args.game!r}")
    source = Path(args.source)
    folder = source if source.is_dir() else source.parent
    return select_games(data, indices), folder / "replays.html"
