"""The ``uno-mk`` command line: one subcommand per module of this package.

::

    uno-mk play --opponents greedy,random --players 3 --seed 1 [--rule uno_catch=next_player]
    uno-mk tournament --agents greedy,random --players 4 --games 400 --seed 1 --workers 2
    uno-mk evaluate ppo:models/ppo_2p.npz --workers 2                 # a benchmark card
    uno-mk train --num-players 2 --total-timesteps 1000000     # last line: agent: ppo:PATH
    uno-mk export CHECKPOINT models/ppo_4p.zip
    uno-mk exploit ppo:models/ppo_2p.npz --players 2   # a best response's win rate
    uno-mk agents
    uno-mk rules
    uno-mk demo

Each module of :data:`COMMANDS` has ``add_parser(subparsers) -> None`` (it adds its subparser)
and ``run(args, out) -> int`` (it runs the parsed command, writing to ``out``, and returns the
exit code). A subparser that sets the default ``extra_args=[]`` receives the arguments it does
not declare in ``args.extra_args`` (``train`` and ``export`` hand them to their backend); for
every other command they are an error.

Bad arguments (an unknown agent or rule option, a bad player count, a missing or unreadable
model file, an ``--out`` that cannot be written, checked before any game is played, a missing
extra) end with exit code 2 and a one-line error on stderr, never a traceback. A failing agent
or a dying worker process ends with exit code 1 and one line; SIGTERM ends a tournament's
workers and exits with 143, Ctrl-C with 130, without a traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from types import ModuleType
from typing import Any, NoReturn, TextIO

from uno_mk_env import RulesError
from uno_mk_env.agents.base import AgentError, AgentSpecError
from uno_mk_env.evaluation.replay import ReplayError
from uno_mk_env.evaluation.tournament import OutputPathError, TournamentError

from . import agents, demo, evaluate, exploit, export, play, replay, rules, tournament, train
from .common import PROG, CLIError, rules_from_args
from .tournament import print_leaderboard

__all__ = ["COMMANDS", "PROG", "CLIError", "build_parser", "main", "print_leaderboard",
           "rules_from_args"]

#: The subcommand modules, in the order ``uno-mk --help`` lists them.
COMMANDS: tuple[ModuleType, ...] = (
    play, tournament, replay, evaluate, train, export, exploit, agents, rules, demo,
)


class Terminated(Exception):
    """SIGTERM arrived: raised in the main thread so that running work (a tournament's worker
    processes) is ended in order; exit code 143."""


class _Parser(argparse.ArgumentParser):
    """argparse with a one-line error (no usage dump) and exit code 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def build_parser() -> tuple[argparse.ArgumentParser, dict[str, ModuleType]]:
    """The ``uno-mk`` parser, and the module of each subcommand by name."""
    parser = _Parser(prog=PROG, description="UNO Mario Kart: play, run tournaments, train and "
                     "export agents, list agents and rules, run the demo.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    handlers: dict[str, ModuleType] = {}
    for module in COMMANDS:
        before = set(sub.choices)
        module.add_parser(sub)
        for name in set(sub.choices) - before:
            handlers[name] = module
    sub.metavar = "{" + ",".join(handlers) + "}"
    return parser, handlers


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
    parser, handlers = build_parser()
    try:
        args, extra = parser.parse_known_args(argv)
        if extra and not hasattr(args, "extra_args"):
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
    except SystemExit as e:  # argparse: --help (0) or a bad argument (2, message printed)
        return int(e.code or 0)
    if hasattr(args, "extra_args"):
        args.extra_args = extra
    args.input_fn = input_fn  # the person's answers in 'uno-mk play' (tests script them)
    prog = f"{PROG} {args.command}"
    with _sigterm_raises():
        return _run(handlers[args.command], args, prog, out, err)


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


def _run(module: ModuleType, args: argparse.Namespace, prog: str, out: TextIO,
         err: TextIO) -> int:
    try:
        return module.run(args, out)
    except (CLIError, AgentSpecError, RulesError, OutputPathError, ReplayError) as e:
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
