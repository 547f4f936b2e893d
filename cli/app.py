"""The ``uno-mk`` command line: play against agents, run tournaments, list agents and rules.

::

    uno-mk play --opponents greedy,random --players 3 --seed 1 [--rule uno_catch=next_player]
    uno-mk tournament --agents greedy,random --players 4 --games 400 --seed 1 --workers 2
    uno-mk agents
    uno-mk rules

Bad arguments (an unknown agent or rule option, a bad player count, a missing or unreadable
model file, an ``--out`` that cannot be written, checked before any game is played) end with exit
code 2 and a one-line error on stderr, never a traceback. A failing agent or a dying worker
process ends with exit code 1 and one line; SIGTERM ends a tournament's workers and exits with
143, Ctrl-C with 130, without a traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import re
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, NoReturn, TextIO

import numpy as np

from uno_mk_env import PRESETS, Game, PlayerView, Rules, RulesError
from uno_mk_env import actions as A
from uno_mk_env.agents import Agent, registered
from uno_mk_env.agents.base import AgentError, AgentSpecError, agent_action, discover_agents
from uno_mk_env.cards import CODE_TO_KIND, CODES, COLOUR_NAMES, COLOURS, NAMES, W4
from uno_mk_env.evaluation.tournament import (
    DEFAULT_MAX_STEPS,
    OutputPathError,
    TournamentError,
    TournamentResult,
    build_agent,
    check_output_dir,
    make_rules,
    run_tournament,
)
from uno_mk_env.phases import PHASE_NAMES, Phase
from uno_mk_env.rules import MAX_PLAYERS, MIN_PLAYERS, OPTIONS
from uno_mk_env.seeding import derive_seed

PROG = "uno-mk"
MAX_RECENT_DECISIONS = 20  #: decisions of the others shown before each of the player's turns


class CLIError(Exception):
    """A bad command-line argument: printed as one line, exit code 2."""


class Terminated(Exception):
    """SIGTERM arrived: raised in the main thread so that running work (a tournament's worker
    processes) is ended in order; exit code 143."""


class _Parser(argparse.ArgumentParser):
    """argparse with a one-line error (no usage dump) and exit code 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


# ---------------------------------------------------------------------------- rule arguments
def _parse_value(text: str) -> Any:
    low = text.strip().lower()
    if low in ("true", "false"):
        return low == "true"
    if re.fullmatch(r"[+-]?\d+", text.strip()):
        return int(text)
    return text.strip()


def rules_from_args(
    preset: str | None, rule_items: Sequence[str], rounds_to_500: bool
) -> dict[str, Any]:
    """Rule options from ``--preset``, repeated ``--rule key=value`` and ``--rounds-to-500``
    (validated by building a :class:`~uno_mk_env.Rules`).

    Raises:
        CLIError: a malformed item, an unknown preset or option, or a bad value.
    """
    options: dict[str, Any] = {}
    if preset is not None:
        if preset not in PRESETS:
            raise CLIError(f"unknown preset {preset!r}; presets: {', '.join(PRESETS)}")
        options.update(PRESETS[preset])
    for item in rule_items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise CLIError(f"--rule expects key=value (e.g. uno_penalty=4), got {item!r}")
        key = key.strip()
        if key not in OPTIONS:
            raise CLIError(f"unknown rule option {key!r}; the options are: {', '.join(OPTIONS)}")
        options[key] = _parse_value(value)
    if rounds_to_500:
        options["match"] = "target_score"
    try:
        Rules(**options)
    except RulesError as e:
        raise CLIError(str(e)) from None
    return options


def _add_rule_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("rules (see 'uno-mk rules')")
    g.add_argument("--preset", help=f"a rules preset: {', '.join(PRESETS)}")
    g.add_argument(
        "--rule", action="append", default=[], metavar="KEY=VALUE",
        help="a rule option, repeatable (e.g. --rule uno_catch=next_player --rule hand_size=5)",
    )
    g.add_argument(
        "--rounds-to-500", action="store_true",
        help="play full games to 500 points (match=target_score) instead of single rounds",
    )


def _players(given: int | None, rules: dict[str, Any], default: int) -> int:
    n = given if given is not None else rules.get("num_players", default)
    lo, hi = 2, 10
    if not lo <= n <= hi:
        raise CLIError(f"bad player count {n}: a table seats {lo} to {hi} players")
    if "num_players" in rules and rules["num_players"] != n:
        raise CLIError(f"--players {n} contradicts --rule num_players={rules['num_players']}")
    return n


def _specs(text: str, flag: str) -> list[str]:
    specs = [s.strip() for s in text.split(",") if s.strip()]
    if not specs:
        raise CLIError(f"{flag} needs at least one agent (e.g. {flag} greedy,random)")
    return specs


def _check_agents(specs: Sequence[str]) -> None:
    for spec in dict.fromkeys(specs):
        try:
            build_agent(spec, seed=0)
        except AgentSpecError as e:
            raise CLIError(str(e)) from None


# ------------------------------------------------------------------------------------- play
def choice_label(action: int, view: PlayerView, names: Sequence[str]) -> str:
    """What choosing ``action`` means, in words, for the seat of ``view``."""
    me = view.seat
    if action < A.DRAW:
        drawn = " (the card you drew)" if view.phase == Phase.PLAY_DRAWN else ""
        return f"play {CODES[action]:<3} {NAMES[action]}{drawn}"
    if action == A.DRAW:
        return "draw a card"
    if action == A.KEEP:
        return "keep the drawn card (your turn ends)"
    if A.COLOUR_BASE <= action < A.TARGET_BASE:
        return f"name {COLOUR_NAMES[action - A.COLOUR_BASE]}"
    if A.TARGET_BASE <= action < A.CHALLENGE:
        target = (me + action - A.TARGET_BASE + 1) % view.num_players
        return (f"hit {names[target]} with the Green Shell "
                f"({view.hand_sizes[target]} cards, draws 1)")
    if action == A.CHALLENGE:
        return (f"challenge {names[view.w4_player]}'s Wild Draw Four "
                "(illegal: they draw 4; legal: you draw 6)")
    if action == A.ACCEPT:
        return "accept: draw 4 and lose your turn"
    if action == A.CALL_UNO:
        return "call UNO! (then play your card)"
    if action == A.CATCH_UNO:
        return f"catch {names[view.uno_catchable]}'s missed UNO (they draw)"
    return A.ACTION_NAMES[action]


def _aliases(action: int) -> set[str]:
    """Words the player may type instead of the choice's number."""
    words = {A.ACTION_NAMES[action].lower()}
    if action < A.DRAW:
        words.add(CODES[action].lower())
    elif A.COLOUR_BASE <= action < A.TARGET_BASE:
        c = action - A.COLOUR_BASE
        words |= {COLOURS[c].lower(), COLOUR_NAMES[c].lower()}
    else:
        words |= {
            A.DRAW: {"draw", "d"}, A.KEEP: {"keep", "k"}, A.CHALLENGE: {"challenge", "c"},
            A.ACCEPT: {"accept", "a"}, A.CALL_UNO: {"uno", "call", "u"},
            A.CATCH_UNO: {"catch"},
        }.get(action, set())
    return words


_PHASE_HELP = {
    Phase.PLAY: "Play a card matching the active colour, or the top card's number or symbol, or a "
            "wild (W4, WB) - or draw one card instead (you may then play it if it fits). "
            "With two cards, call UNO before playing the second-to-last one.",
    Phase.PLAY_DRAWN: "You drew a card that fits: play it now or keep it (your turn ends).",
    Phase.CHOOSE_COLOUR: "Name the colour the next player must match.",
    Phase.CHOOSE_TARGET: "Green Shell: choose the opponent who draws one card.",
    Phase.CHALLENGE: "You were hit by a Wild Draw Four. It was legal only if its player held "
                       "no card of the colour that was active. Challenge: if it was illegal they "
                       "draw 4 and you play on; if it was legal you draw 6 and lose your turn. "
                       "Or accept: draw 4 and lose your turn.",
}

HELP = """Commands:
  1, 2, ...      choose that option
  R7, W4, WB     play that card;  draw / keep / uno / catch / challenge / accept;  red, y, ...
  ? or help      this help
  show           show the table again
  q or quit      leave the game
Cards: colour R Y G B + 0-9, S (Skip), R (Reverse), D (Draw Two); W4 = Wild Draw Four,
WB = Wild Item Box (flips the next card: red Mushroom = extra turn, yellow Banana = the player
before you draws 2, green Shell = an opponent of your choice draws 1, blue Lightning = all others
draw 1 and you play again, wild Bob-omb = you draw 2 and name a colour)."""


def _names(labels: Sequence[str]) -> list[str]:
    return [f"P{s}:{label}" for s, label in enumerate(labels)]


def play(
    opponents: Sequence[str],
    num_players: int,
    seed: int,
    rules: dict[str, Any] | None = None,
    seat: int = 0,
    input_fn: Callable[[str], str] = input,
    output: TextIO | None = None,
) -> int:
    """A person plays at ``seat`` against agents (cycled over the other seats), in the terminal.

    Every decision of the person is prompted with numbered choices; bad input is re-prompted.
    ``input_fn`` and ``output`` let tests script a whole game. Returns 0 (a game finished, or
    the player quit).
    """
    from uno_mk_env.render import RecentDecisions, render_game

    out = output if output is not None else sys.stdout

    def say(text: str = "") -> None:
        print(text, file=out, flush=True)

    rules_obj = Rules(**{**(rules or {}), "num_players": num_players})
    n = num_players
    if not 0 <= seat < n:
        raise CLIError(f"bad --seat {seat}: seats are 0 to {n - 1}")
    others = [s for s in range(n) if s != seat]
    labels = ["you"] * n
    bots: dict[int, Agent] = {}
    for i, s in enumerate(others):
        spec = opponents[i % len(opponents)]
        agent_seed = derive_seed(seed, s)
        bots[s] = build_agent(spec, seed=agent_seed)
        labels[s] = spec
    names = _names(labels)
    g = Game(rules_obj, seed=seed)
    length = {"single_round": "one round", "target_score": f"to {rules_obj.target_score} points",
              "fixed_rounds": f"{rules_obj.rounds} rounds"}[rules_obj.match]
    say(f"UNO Mario Kart ({length}): you are {names[seat]}; seed {seed}. Type ? for help.")
    history = RecentDecisions(maxlen=None)
    history.start(g)
    shown_from = 0
    while not g.game_over:
        p = g.current_player
        if p != seat:
            action = agent_action(bots[p], g, names[p])
            history.before(g)
            g.step(action)
            history.after(action)
            continue
        recent = list(history)[max(shown_from, len(history) - MAX_RECENT_DECISIONS):]
        table = render_game(g, seat, names, recent)
        say()
        say(table)
        action = _ask(g.view(seat), names, input_fn, say, table)
        if action is None:
            say("You left the game.")
            return 0
        history.before(g)
        shown_from = len(history)
        g.step(action)
        history.after(action)
    say()
    recent = list(history)[max(shown_from, len(history) - MAX_RECENT_DECISIONS):]
    say(render_game(g, seat, names, recent, done=True))
    if g.winner is None:
        say("Game over: no winner.")
    elif g.winner == seat:
        say(f"Game over: you win! Final scores: {list(g.scores)}")
    else:
        say(f"Game over: {names[g.winner]} wins. Final scores: {list(g.scores)}")
    return 0


def _ask(
    view: PlayerView,
    names: Sequence[str],
    input_fn: Callable[[str], str],
    say: Callable[[str], None],
    table: str,
) -> int | None:
    """Prompts until a legal action is chosen; ``None`` when the player quits (or input ends)."""
    legal = list(view.legal_actions)
    order = {A.CATCH_UNO: 2, A.CALL_UNO: 1}  # the reflex actions after the real choices
    legal.sort(key=lambda a: (order.get(a, 0), a == A.DRAW or a == A.KEEP, a == W4, a))
    lookup: dict[str, int] = {}
    for a in legal:
        for word in _aliases(a):
            lookup.setdefault(word, a)

    def menu() -> None:
        say(f"Your choices ({PHASE_NAMES[view.phase]}):")
        for i, a in enumerate(legal, 1):
            say(f"  {i:>2}) {choice_label(a, view, names)}")

    menu()
    while True:
        try:
            raw = input_fn(f"Choose 1-{len(legal)} (? for help, q to quit): ")
        except (EOFError, KeyboardInterrupt):
            say("")
            return None
        text = raw.strip().lower()
        if text in ("q", "quit", "exit"):
            return None
        if text in ("?", "h", "help"):
            say(_PHASE_HELP.get(view.phase, ""))
            say(HELP)
            menu()
            continue
        if text in ("show", "s", "table"):
            say(table)
            menu()
            continue
        if text.isdigit() and 1 <= int(text) <= len(legal):
            return legal[int(text) - 1]
        if text in lookup:
            return lookup[text]
        if text.upper() in CODE_TO_KIND:
            say(f"You cannot play {text.upper()} now.")
        elif text:
            say(f"{raw.strip()!r} is not a choice.")
        say(f"Enter a number from 1 to {len(legal)}, ? for help or q to quit.")


# ------------------------------------------------------------------------------- tournament
def _run_name(specs: Sequence[str], players: int, seed: int, match: str) -> str:
    agents = "_".join(re.sub(r"[^A-Za-z0-9.-]+", "-", Path(s).stem if "/" in s else s)
                      for s in specs)
    suffix = "_500" if match == "target_score" else ""
    return f"{players}p_{agents}_seed{seed}{suffix}"[:120]


def print_leaderboard(result: TournamentResult, out: TextIO) -> None:
    """The leaderboard and head-to-head tables (rich)."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = Console(file=out, width=None if out.isatty() else 120, highlight=False)
    c = result.config
    table = Table(
        title=f"{c['num_players']} players · {c['games']} games"
        f"{' · duplicate deals' if c['duplicate'] else ''} · seed {c['seed']} · "
        f"match={c['rules']['match']}",
    )
    for col, justify in (("#", "right"), ("agent", "left"), ("games", "right"),
                         ("wins", "right"), ("win rate [95% CI]", "right"),
                         ("reward", "right"), ("pts/round", "right"), ("place", "right"),
                         ("rating (μ ± σ)", "right")):
        table.add_column(col, justify=justify)  # type: ignore[arg-type]
    for r in result.leaderboard():
        table.add_row(
            str(r["rank"]), Text(r["agent"]), str(r["games"]), str(r["wins"]),
            f"{r['win_rate']:.3f} [{r['win_ci_low']:.3f}, {r['win_ci_high']:.3f}]",
            f"{r['mean_reward']:+.3f}", f"{r['points_per_round']:.1f}",
            f"{r['mean_place']:.2f}", f"{r['rating']:.1f} ({r['mu']:.1f} ± {r['sigma']:.1f})",
        )
    console.print(table)
    h2h = result.head_to_head()
    order = [result.entrants.index(r["agent"]) for r in result.leaderboard()]
    if len(order) <= 10:
        t = Table(title="head-to-head: row placed ahead of column")
        t.add_column("")
        for e in order:
            t.add_column(Text(result.entrants[e]), justify="right")
        for a in order:
            cells = ["-" if h2h["score"][a][b] is None else f"{h2h['score'][a][b]:.3f}"
                     for b in order]
            t.add_row(Text(result.entrants[a]), *cells)
        console.print(t)
    o = result.outcomes()
    console.print(
        Text(f"{o['win']} games won, {o['no_winner']} without winner (stalemate), "
             f"{o['capped']} stopped at the step cap; {result.elapsed:.1f} s with "
             f"{result.workers} worker(s)")
    )


def tournament_command(args: argparse.Namespace, out: TextIO) -> int:
    specs = _specs(args.agents, "--agents")
    rules = rules_from_args(args.preset, args.rule, args.rounds_to_500)
    players = _players(args.players, rules, min(max(len(specs), MIN_PLAYERS), MAX_PLAYERS))
    for flag, value in (("--games", args.games), ("--workers", args.workers),
                        ("--max-steps", args.max_steps)):
        if value < 1:
            raise CLIError(f"{flag} must be at least 1, got {value}")
    if args.seed < 0:
        raise CLIError(f"--seed must be a non-negative int, got {args.seed}")
    _check_agents(specs)
    rules.pop("num_players", None)
    out_dir = Path(args.out) if args.out else Path("results") / _run_name(
        specs, players, args.seed, make_rules(rules, players).match
    )
    check_output_dir(out_dir)  # before playing: a bad --out must not cost the results
    progress = args.progress if args.progress is not None else sys.stderr.isatty()
    result = run_tournament(
        specs, players, args.games, seed=args.seed, rules=rules, duplicate=not args.no_duplicate,
        workers=args.workers, progress=progress, max_steps=args.max_steps,
    )
    print_leaderboard(result, out)
    paths = result.save(out_dir, plot=not args.no_plot)
    print(f"Results written to {out_dir}/: {', '.join(p.name for p in paths.values())}", file=out)
    return 0


# ---------------------------------------------------------------------------- agents, rules
def agents_command(out: TextIO) -> int:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    failures = discover_agents()
    console = Console(file=out, width=None if out.isatty() else 120, highlight=False)
    table = Table(title="registered agents (spec: name or name:argument)")
    table.add_column("name")
    table.add_column("description")
    for name, text in sorted(registered().items()):
        table.add_row(Text(name), Text(text))
    console.print(table)
    for module, reason in failures.items():
        console.print(Text(f"note: {module} could not be imported ({reason})"))
    return 0


def rules_command(out: TextIO) -> int:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = Console(file=out, width=None if out.isatty() else 140, highlight=False)
    table = Table(title="rule options (--rule KEY=VALUE)")
    for col in ("option", "default", "allowed", "meaning"):
        table.add_column(col)
    for name, spec in OPTIONS.items():
        table.add_row(Text(name), Text(str(spec.default)),
                      Text(spec.allowed.replace("`", "").replace('"', "")),
                      Text(spec.doc.replace("`", "")))
    console.print(table)
    presets = Table(title="presets (--preset NAME)")
    presets.add_column("preset")
    presets.add_column("options")
    for name, opts in PRESETS.items():
        presets.add_row(Text(name), Text(", ".join(f"{k}={v!r}" for k, v in opts.items())
                                         or "(all defaults)"))
    console.print(presets)
    return 0


# ------------------------------------------------------------------------------------ main
def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog=PROG, description="UNO Mario Kart: play, run tournaments, list "
                     "agents and rules.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser,
                                metavar="{play,tournament,agents,rules}")

    p = sub.add_parser("play", help="play against agents in the terminal",
                       description="Play UNO Mario Kart in the terminal against agents.")
    p.add_argument("--opponents", default="random",
                   help="comma-separated agent specs, cycled over the other seats "
                        "(default: random; see 'uno-mk agents')")
    p.add_argument("--players", type=int, help="players at the table, 2-10 "
                   "(default: you + one per opponent)")
    p.add_argument("--seat", type=int, default=0, help="your seat (default 0)")
    p.add_argument("--seed", type=int, help="game seed (default: a fresh one, printed)")
    _add_rule_args(p)

    t = sub.add_parser("tournament", help="play a seeded tournament between agents",
                       description="Round-robin tournament with duplicate deals, confidence "
                                   "intervals and openskill ratings.")
    t.add_argument("--agents", required=True,
                   help="comma-separated agent specs, e.g. greedy,random,ismcts:200")
    t.add_argument("--players", type=int, help="seats per table, 2-10 "
                   "(default: the number of agents)")
    t.add_argument("--games", type=int, default=100,
                   help="games to play (rounded up to a multiple of --players; default 100)")
    t.add_argument("--seed", type=int, default=0, help="root seed (default 0)")
    t.add_argument("--workers", type=int, default=1, help="processes (default 1)")
    t.add_argument("--out", help="directory for the result files "
                   "(default: results/<players>p_<agents>_seed<seed>)")
    t.add_argument("--no-duplicate", action="store_true",
                   help="a fresh deal for every game instead of replaying each deal per seat "
                        "rotation")
    t.add_argument("--max-steps", type=int, default=DEFAULT_MAX_STEPS,
                   help=f"decisions per round before the game counts as having no winner "
                        f"(default {DEFAULT_MAX_STEPS})")
    t.add_argument("--no-plot", action="store_true", help="do not write the PNG plot")
    t.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress bar (default: when stderr is a terminal)")
    _add_rule_args(t)

    sub.add_parser("agents", help="list the registered agents")
    sub.add_parser("rules", help="list the rule options with their defaults, and the presets")
    return parser


def main(
    argv: Sequence[str] | None = None,
    input_fn: Callable[[str], str] = input,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    """Entry point of ``uno-mk``; returns the exit code (0 ok, 1 an agent or a worker process
    failed, 2 bad arguments, 130 interrupted, 143 terminated by SIGTERM)."""
    out = stdout if stdout is not None else sys.stdout
    err = stderr if stderr is not None else sys.stderr
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # argparse: --help (0) or a bad argument (2, message printed)
        return int(e.code or 0)
    prog = f"{PROG} {args.command}"
    with _sigterm_raises():
        return _run(args, prog, input_fn, out, err)


@contextlib.contextmanager
def _sigterm_raises() -> Iterator[None]:
    """While active (in the main thread), SIGTERM raises :class:`Terminated` once; a second
    SIGTERM ends the process at once (the default action)."""

    def handler(signum: int, frame: Any) -> None:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        raise Terminated()

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _run(
    args: argparse.Namespace, prog: str, input_fn: Callable[[str], str], out: TextIO,
    err: TextIO,
) -> int:
    try:
        if args.command == "play":
            opponents = _specs(args.opponents, "--opponents")
            rules = rules_from_args(args.preset, args.rule, args.rounds_to_500)
            players = _players(args.players, rules, 1 + len(opponents))
            if len(opponents) > players - 1:
                raise CLIError(f"{len(opponents)} opponents do not fit a table of {players}")
            if not 0 <= args.seat < players:
                raise CLIError(f"bad --seat {args.seat}: seats are 0 to {players - 1}")
            _check_agents(opponents)
            seed = args.seed
            if seed is None:
                seed = int(np.random.SeedSequence().generate_state(1)[0])
            elif seed < 0:
                raise CLIError(f"--seed must be a non-negative int, got {seed}")
            rules.pop("num_players", None)
            return play(opponents, players, seed, rules, seat=args.seat, input_fn=input_fn,
                        output=out)
        if args.command == "tournament":
            return tournament_command(args, out)
        if args.command == "agents":
            return agents_command(out)
        return rules_command(out)
    except (CLIError, AgentSpecError, RulesError, OutputPathError) as e:
        print(f"{prog}: error: {e}", file=err)
        return 2
    except AgentError as e:
        print(f"{prog}: agent failed: {e}", file=err)
        return 1
    except TournamentError as e:
        print(f"{prog}: error: {e}", file=err)
        return 1
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=err)
        return 130
    except Terminated:
        print(f"{prog}: terminated", file=err)
        return 143


if __name__ == "__main__":
    sys.exit(main())
