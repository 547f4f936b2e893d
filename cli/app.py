"""The ``uno-mk`` command line: one subcommand per module of this package.

::

    uno-mk play --opponents greedy,random --players 3 --seed 1 [--rule uno_catch=next_player]
    uno-mk serve --agents ppo:ppo_2p                   # play in a browser
    uno-mk tournament --agents greedy,random --players 4 --games 400 --seed 1 --workers 2
    uno-mk evaluate ppo:models/ppo_2p.npz --workers 2                 # a benchmark card
    uno-mk train --num-players 2 --total-timesteps 1000000     # last line: agent: ppo:PATH
    uno-mk export CHECKPOINT models/ppo_4p.zip
    uno-mk exploit ppo:models/ppo_2p.npz --players 2   # a best response's win rate
    uno-mk agents
    uno-mk models                                      # the shipped policies (ppo:ppo_2p, ...)
    uno-mk rules
    uno-mk demo
    uno-mk                                             # the command list; --version: the version

Each module of :data:`COMMANDS` has ``add_parser(subparsers) -> None`` (it adds its subparser)
and ``run(args, out) -> int`` (it runs the parsed command, writing to ``out``, and returns the
exit code). A subparser that sets the default ``extra_args=[]`` receives the arguments it does
not declare in ``args.extra_args`` (``train`` and ``export`` hand them to their backend); for
every other command they are an error.

Bad arguments (an unknown agent or rule option, a bad player count, a missing or unreadable
model file, an ``--out`` that cannot be written, checked before any game is played, a missing
extra) end with exit code 2 and a one-line error on stderr, never a traceback. A failing agent,
a dying worker process or a write that finds no space (a full disk or quota, a file-size limit:
:data:`~uno_mk_env.files.NO_SPACE`) ends with exit code 1 and one line; SIGTERM ends a
tournament's workers and exits with 143, Ctrl-C with 130, without a traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from types import ModuleType
from typing import Any, NoReturn, TextIO

from uno_mk_env import __version__
from uno_mk_env.envs.agent import AgentError
from uno_mk_env.errors import UnoMkError

from . import (
    agents,
    demo,
    evaluate,
    exploit,
    export,
    ladder,
    models,
    play,
    replay,
    rules,
    serve,
    tournament,
    train,
)
from .common import PROG, CLIError, WriteError, no_space, rules_from_args, write_error
from .tournament import print_leaderboard

__all__ = ["COMMANDS", "PROG", "CLIError", "build_parser", "main", "print_leaderboard",
           "rules_from_args"]

#: The subcommand modules, in the order ``uno-mk --help`` lists them.
COMMANDS: tuple[ModuleType, ...] = (
    play, serve, tournament, ladder, replay, evaluate, train, export, exploit, agents, models,
    rules, demo,
)


class Terminated(UnoMkError):
    """SIGTERM arrived: raised in the main thread so that running work (a tournament's worker
    processes) is ended in order; exit code 143."""

    exit_code = 143


class _Parser(argparse.ArgumentParser):
    """argparse with a one-line error (no usage dump) and exit code 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def build_parser() -> tuple[argparse.ArgumentParser, dict[str, ModuleType]]:
    """The ``uno-mk`` parser, and the module of each subcommand by name."""
    parser = _Parser(prog=PROG, description="UNO Mario Kart: play, run tournaments, train and "
                     "export agents, list agents and rules, run the demo.")
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    # Optional: 'uno-mk' alone prints the command list (main).
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)
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
    failed or a write found no space, 2 bad arguments, 130 interrupted, 143 terminated by
    SIGTERM)."""
    out = stdout if stdout is not None else sys.stdout
    err = stderr if stderr is not None else sys.stderr
    parser, handlers = build_parser()
    try:
        args, extra = parser.parse_known_args(argv)
        if extra and not hasattr(args, "extra_args"):
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
    except SystemExit as e:  # argparse: --help (0) or a bad argument (2, message printed)
        return int(e.code or 0)
    if args.version:
        print(f"{PROG} {__version__}", file=out)
        return 0
    if args.command is None:  # 'uno-mk' alone: the command list, not an error
        parser.print_help(out)
        return 0
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
        code = module.run(args, out)
        out.flush()  # inside the try: a closed pipe shows here, not at the interpreter's exit
        return code
    except Terminated as e:
        print(f"{prog}: terminated", file=err)
        return e.exit_code
    except UnoMkError as e:  # every error of the project: one line, its exit code (2 or 1)
        what = "agent failed" if isinstance(e, AgentError) else "error"
        print(f"{prog}: {what}: {e}", file=err)
        return e.exit_code
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=err)
        return 130
    except BrokenPipeError:  # the reader went away ('uno-mk agents | head'): stop quietly
        if out is sys.stdout:  # what is still buffered must not fail again at exit
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # 128 + SIGPIPE, as a shell reports a command a closed pipe ended
    except OSError as e:  # a full disk where no command said more (tournament, evaluate do)
        if not no_space(e):
            raise
        print(f"{prog}: error: {write_error(e, None, 'free space, then run it again')}",
              file=err)
        return WriteError.exit_code


if __name__ == "__main__":
    sys.exit(main())
