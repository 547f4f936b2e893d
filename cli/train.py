"""``uno-mk train``: train a policy; the last line printed is ``agent: SPEC``, the agent spec
that plays it (``uno-mk tournament --agents SPEC,strategic``).

::

    uno-mk train --num-players 2 --max-minutes 10                       # fast (the default)
    uno-mk train --backend sb3 --num-players 2 --total-timesteps 1000000  # sb3 (MaskablePPO)
    uno-mk train --backend rllib ...                                     # Ray RLlib
    uno-mk train --help                                                  # the backend's arguments

The run ends with a short summary table (drawn by rich when installed; ``summary.json`` in the
run folder has it all), then the agent line. Every argument other than ``--backend`` goes to
the backend: ``fast`` (the default) is :mod:`uno_mk_env.training.ppo_fast` (a lean PPO on the
batched vector env; the same arguments as ``python -m uno_mk_env.training.ppo_fast``; needs the
``train`` extra), ``sb3`` is :mod:`uno_mk_env.training.train_ppo` (the same arguments as
``python -m uno_mk_env.training.train_ppo``; needs the ``train`` extra), ``rllib`` is
``uno_mk_env.training.rllib`` (needs the ``rllib`` extra). An option only the sb3 backend has
(``--table-sizes``, ``--resume``, ...) given to the fast backend is refused in one line naming
``--backend sb3``. For fast and sb3 the agent spec is the policy ``.npz`` (numpy alone plays it,
read without unpickling): next to ``--save-path`` when given, else the run's
``runs/<run>/final.npz``.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import importlib
import sys
from collections.abc import Iterator, Sequence
from typing import Any, TextIO

from uno_mk_env.errors import one_line, quote

from .common import PROG as COMMAND
from .common import CLIError, WriteError, importable, no_space, print_table, require, write_error

BACKENDS = ("fast", "sb3", "rllib")  #: the first is the default
#: What the sb3 backend imports (the ``train`` extra, torch installed first).
SB3_NEEDS = ("torch", "stable_baselines3", "sb3_contrib", "gymnasium", "tyro")
#: What the fast backend imports (the ``train`` extra without stable-baselines3).
FAST_NEEDS = ("torch", "gymnasium", "threadpoolctl", "tyro")
RLLIB_MODULE = "uno_mk_env.training.rllib"
PROG = f"{COMMAND} train"  #: the fast backend's usage line and errors name this command
SB3_PROG = f"{COMMAND} train --backend sb3"  #: the sb3 backend's


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "train", add_help=False, allow_abbrev=False,
        help="train a policy (fast PPO, sb3 MaskablePPO or rllib); prints 'agent: SPEC' last",
        description="Train a policy. Arguments other than --backend go to the backend "
                    "('uno-mk train [--backend B] --help' lists them).")
    p.add_argument("--backend", choices=BACKENDS, default=BACKENDS[0],
                   help="fast (a lean PPO on the batched vector env, the 'train' extra; "
                        "default), sb3 (MaskablePPO, the 'train' extra) or rllib (the 'rllib' "
                        "extra)")
    p.set_defaults(extra_args=[])  # the backend's own arguments (see cli/app.py)


def run(args: argparse.Namespace, out: TextIO) -> int:
    argv = list(args.extra_args)
    wants_help = any(a in ("-h", "--help") for a in argv)
    if args.backend == "rllib":
        return run_rllib(argv)
    if args.backend == "fast":
        require(FAST_NEEDS[-1:] if wants_help else FAST_NEEDS, "train",
                "uno-mk train (install torch==2.13.0 first)")
        return train_fast(argv, out)
    require(SB3_NEEDS[-1:] if wants_help else SB3_NEEDS, "train",
            "uno-mk train --backend sb3 (install torch==2.13.0 first)")
    return train_sb3(argv, out)


def run_rllib(argv: Sequence[str]) -> int:
    """``uno_mk_env.training.rllib.main(argv)`` when that backend exists and Ray is
    installed."""
    if not importable(RLLIB_MODULE):
        raise CLIError("--backend rllib is not available in this version of uno-mk-env "
                       "(it needs uno_mk_env.training.rllib and the 'rllib' extra)")
    require(("ray",), "rllib", "uno-mk train --backend rllib")
    module = importlib.import_module(RLLIB_MODULE)
    return _exit_code(module.main, list(argv), print_table)


def run_training_module(name: str, argv: Sequence[str], prog: str) -> int:
    """``uno_mk_env.training.<name>.main(argv, prog)`` for a subcommand that hands all its
    arguments to that module (``uno-mk export``, ``uno-mk exploit``): the ``train`` extra is
    required unless only ``--help`` is asked for."""
    argv = list(argv)
    if not any(a in ("-h", "--help") for a in argv):
        require(SB3_NEEDS, "train", f"{prog} (install torch==2.13.0 first)")
    module = importlib.import_module(f"uno_mk_env.training.{name}")
    return _exit_code(module.main, argv, prog)


def _exit_code(fn: Any, *a: Any) -> int:
    try:
        return int(fn(*a) or 0)
    except SystemExit as e:  # argparse: --help (0) or a bad argument (2, message printed)
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 2)


def train_sb3(argv: Sequence[str], out: TextIO) -> int:
    """The sb3 backend: ``train_ppo``'s arguments and run (as its ``main``), then the last line
    ``agent: ppo:PATH`` naming the run's policy ``.npz`` (``--save-path``'s, else
    ``runs/<run>/final.npz``). stable-baselines3's progress bar is off by default when stderr
    is not a terminal (a log file would get a carriage-return line per update); a progress line
    every few seconds replaces it there."""
    # training loads torch (the train extra): imported when this command runs, so that the
    # other commands and --help start without it
    from uno_mk_env.agents.threads import set_thread_policy
    from uno_mk_env.training import train_ppo
    from uno_mk_env.training.progress import process_start

    argv = list(argv)
    try:
        options = train_ppo.parse_args(argv, prog=SB3_PROG)
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else 0
    given = train_ppo.given_fields(argv)
    if "progress" not in given and not sys.stderr.isatty():
        options = dataclasses.replace(options, progress=False)
    set_thread_policy(options.torch_threads)  # before torch is imported
    with _run_errors():
        if options.resume:
            options = train_ppo.inherit_resume_args(options, given)
        summary = train_ppo.train(options, invocation=" ".join([SB3_PROG, *argv]),
                                  started=process_start())
    return _summary(summary, out)


def sb3_only_options(argv: Sequence[str]) -> list[str]:
    """The options of ``argv`` that only the sb3 backend takes (``--table-sizes``,
    ``--resume``, ...), as given."""
    from uno_mk_env.training import ppo_fast, train_ppo
    from uno_mk_env.training.args import given_fields

    fast = {f.name for f in dataclasses.fields(ppo_fast.Args)}
    only = given_fields(train_ppo.Args, argv) - fast
    return ["--" + name.replace("_", "-") for name in sorted(only)]


def train_fast(argv: Sequence[str], out: TextIO) -> int:
    """The fast backend (the default): ``ppo_fast``'s arguments and run, then the summary table
    and the last line ``agent: ppo:PATH`` (as :func:`train_sb3`). An sb3-only option, a place
    reward or ``--resume`` is refused in one line naming ``--backend sb3``. Progress lines
    (rate and time left) come every few seconds, on a terminal or in a log."""
    from uno_mk_env.training import ppo_fast
    from uno_mk_env.training.args import parse
    from uno_mk_env.training.progress import process_start

    argv = list(argv)
    if not any(a in ("-h", "--help") for a in argv):
        only = sb3_only_options(argv)
        if only:
            raise CLIError(f"{', '.join(only)}: only the sb3 backend takes "
                           f"{'this option' if len(only) == 1 else 'these options'} (add "
                           "--backend sb3)")
    try:
        options = parse(ppo_fast.Args, argv, PROG, ppo_fast.DESCRIPTION)
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else 0
    with _run_errors():  # the budget of --max-minutes counts from the start of uno-mk
        summary = ppo_fast.train(options, invocation=" ".join([PROG, *argv]),
                                 started=process_start())
    return _summary(summary, out)


@contextlib.contextmanager
def _run_errors() -> Iterator[None]:
    """A file that could not be written during a run (a full disk, a file-size limit, a
    folder made read-only) as one line, exit code 1: the run folder holds whole files only
    (each is written atomically). The project's own errors (a refused argument: 2; a diverged
    run, a dead env worker: 1) pass to ``uno-mk``'s handler as they are."""
    then = "the run folder keeps whole files only; free space or fix the folder, then run it again"
    try:
        yield
    except OSError as e:
        if no_space(e):
            raise write_error(e, None, then) from None
        where = quote(str(e.filename), 160) if e.filename is not None else "a file"
        raise WriteError(f"cannot write {where}: {one_line(e.strerror or str(e), 80)}; {then}"
                         ) from None


def _summary(summary: dict[str, Any], out: TextIO) -> int:
    """The summary table, then the last line ``agent: ppo:PATH``."""
    from uno_mk_env.training.summary import print_summary

    print_summary(summary, out, print_table)
    print(f"agent: ppo:{summary['policy']}", file=out, flush=True)
    return 0
