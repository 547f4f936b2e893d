"""Command-line arguments, CleanRL style: a dataclass per backend, one field per argument, the
string literal under a field its ``--help`` text (its lines joined into whole sentences by
:func:`field_help`), parsed by `tyro <https://brentyi.github.io/tyro/>`_ (CleanRL's choice).

:class:`TrainArgs` holds the arguments every training backend takes (seed, table, opponents,
budget, behaviour cloning, evaluation, outputs), each written once; a backend's ``Args``
subclasses it, adds its own fields and may change a default by re-declaring the field without a
docstring (tyro takes the help from the base). :func:`parse` reads a command line into one
(booleans as ``--x/--no-x``; a bad value or an unknown option is one line ``PROG: error: ...``
and exit code 2), :func:`given_fields` tells which fields a command line set, and
:func:`command_line` writes the command that reproduces a set of arguments. Nothing here imports
torch, stable-baselines3 or Ray, so ``--help`` is quick.
"""

from __future__ import annotations

import dataclasses
import re
import shlex
import sys
import typing
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn, TypeVar

from uno_mk_env.errors import UnoMkError

__all__ = ["TrainArgs", "TrainingError", "check_agent_specs", "check_ranges", "command_line",
           "given_fields", "ints", "parse", "specs", "weighted"]

T = TypeVar("T")


class TrainingError(UnoMkError, ValueError):
    """A training request that is refused before anything is created (a bad argument value, a
    missing or unreadable checkpoint, nothing left to train, a hyperparameter a resumed model
    cannot change); one line."""


@dataclass
class TrainArgs:
    """The arguments of every training backend (see the module docstring)."""

    exp_name: str = "ppo"
    """the name of this experiment (first part of the run name)"""
    seed: int = 1
    """seed of the experiment: every random stream of the run derives from it (torch, the envs'
    deals and seat draws, the opponents, the evaluations)"""
    torch_threads: int = 1
    """torch intra-op threads of the learner's process (1 is fastest for these small MLPs, and
    bit-reproducible)"""

    # environment
    num_players: int = 2
    """players at the table (2-10); the learner takes a random seat every episode"""
    reward: str = "win"
    """reward of the learner: "win" (+1 / -1/(N-1)) or "points" (hand points / 100); sb3 also
    "place" (+1 for first place down to -1 for last, linear; the same as "win" at 2 players)
    and "win_place" ((1 - w) x "win" + w x "place", w = --place-weight)"""
    max_steps: int = 2000
    """decisions per episode (all seats) before truncation"""

    # opponents
    opponents: str = "strategic,greedy,random"
    """comma-separated agent specs of the rule-based opponents (see 'uno-mk agents'): sb3's
    opponent pool (weighted by --opponent-weights); rllib's fixed seats, drawn with
    --opponent-prob (empty: none)"""
    snapshot_every: int = 100_000
    """steps between snapshots of the learner joining its league, each taken only when the
    latest evaluation did not drop (0: no snapshots)"""

    # algorithm
    total_timesteps: int = 1_000_000
    """steps to train for, a resumed checkpoint's included: sb3 counts learner decisions and
    stops exactly there (rounded up to whole rollouts, --n-envs x --n-steps); rllib counts the
    decisions of every seat its modules play and stops after the training iteration that
    reaches it ("complete" in summary.json)"""
    net_arch: str = "128,128"
    """hidden layer sizes of the policy network (comma-separated; of the value network too,
    unless --vf-arch)"""
    activation: str = "tanh"
    """activation of the hidden layers: "tanh" or "relu\""""
    learning_rate: float = 3e-4
    """Adam learning rate"""
    gamma: float = 0.995
    """discount factor"""
    gae_lambda: float = 0.95
    """lambda of generalised advantage estimation"""

    # behaviour cloning (a warm start before PPO)
    bc_teacher: str = ""
    """agent spec to imitate before PPO starts (e.g. "strategic"; empty: start from scratch),
    with uno_mk_env.training.behaviour_cloning"""
    bc_steps: int = 100_000
    """teacher decisions collected (the teacher in one seat, the opponents in the others)"""
    bc_epochs: int = 8
    """epochs of supervised training on them (policy: cross-entropy; value: discounted return)"""
    bc_lr: float = 1e-3
    """Adam learning rate of behaviour cloning"""
    bc_smoothing: float = 0.1
    """label smoothing over the legal actions: the clone keeps this much probability off the
    teacher's choice, so that PPO still explores (a pure clone is nearly deterministic)"""

    # evaluation, checkpoints, outputs
    eval_every: int = 50_000
    """steps between evaluations (0: only at the start and the end)"""
    eval_games: int = 1000
    """games per evaluation tournament and opponent (duplicate deals, seats rotated)"""
    final_eval_games: int = 0
    """games per opponent (and table size) in the final evaluation; 0: follow the budget, one
    game per 250 training steps, at least 100 and at most 4000 (a 4,096-step smoke run plays
    100, a 1 M-step run 4000)"""
    eval_opponents: str = "greedy,strategic"
    """comma-separated agents the learner is evaluated against; the last one picks the best
    checkpoint (best.zip / best.npz) and gates the league's snapshots"""
    checkpoint_every: int = 100_000
    """steps between checkpoints (0: sb3 none, rllib only at the end)"""
    runs_dir: str = "runs"
    """directory of the runs (TensorBoard logs, checkpoints, curves)"""
    save_path: str = ""
    """also ship the final policy here: its .npz (sb3: and the model without its optimizer
    state), its .json provenance and its curve (.csv and .png)"""
    max_minutes: float = 0.0
    """safety net only: stop training (then evaluate and save as usual) after this many
    minutes (0: no limit); a run stopped so is marked incomplete ("complete": false)"""
    resume: str = ""
    """a checkpoint to continue (sb3: a .zip; rllib: runs/<run>/checkpoints/<steps>): its
    architecture and PPO hyperparameters are kept (changing one is refused, see
    RESUME_MAY_CHANGE); both loaders unpickle, so resume only from files you trust"""
    progress: bool = True
    """show training progress (sb3: a progress bar; rllib: a line per training iteration)"""


#: The per-opponent size of an automatic final evaluation (``--final-eval-games 0``): one game
#: per this many training steps, clamped to :data:`FINAL_EVAL_RANGE`.
FINAL_EVAL_STEPS_PER_GAME = 250
FINAL_EVAL_RANGE = (100, 4000)


def final_eval_games(args: Any) -> int:
    """``--final-eval-games``, or with 0 the size that follows ``--total-timesteps`` (one game
    per :data:`FINAL_EVAL_STEPS_PER_GAME` steps, within :data:`FINAL_EVAL_RANGE`)."""
    if args.final_eval_games:
        return int(args.final_eval_games)
    low, high = FINAL_EVAL_RANGE
    return min(high, max(low, args.total_timesteps // FINAL_EVAL_STEPS_PER_GAME))


# ------------------------------------------------------------------------- the command line
class _Refused(UnoMkError):
    """A command line tyro refuses, as one line (raised by :func:`_one_line`)."""


def _one_line(event: Any) -> NoReturn:
    """tyro's parse-error hook: the refusal as one argparse-style line instead of a box."""
    tokens = " ".join(getattr(event, "tokens", []) or [])
    argument = getattr(event, "argument", None)
    name = argument.display_name() if argument is not None else ""
    kind = type(event).__name__
    if kind == "UnrecognizedArgs":
        text = f"unrecognized arguments: {tokens}"
    elif kind == "InvalidChoice":
        text = (f"argument {name}: invalid choice {event.value!r} (choose from "
                f"{', '.join(event.choices)})")
    elif kind == "InstantiationFailure":
        text = (f"argument {name}: " if name else "") + " ".join(str(event.message).split())
    elif kind == "BadValue":
        value = event.offending_value
        text = f"argument {name}: " + (f"unexpected value {value!r}" if value is not None
                                        else "expected a value")
    else:
        text = f"cannot read the arguments {tokens!r} ({kind})"
    raise _Refused(text[:300])


def _error_hook() -> AbstractContextManager[Any]:
    """tyro's parse-error hook (``tyro._errors.on_parse_error``, tyro >= 1.0; the ``train``
    extra pins the minor version): without it, tyro's own error box is shown."""
    try:
        from tyro._errors import on_parse_error
    except ImportError:  # pragma: no cover - another tyro: its box, still exit code 2
        return nullcontext()
    return on_parse_error(_one_line)


def field_help(cls: type) -> dict[str, str]:
    """The ``--help`` text of each field of the dataclass ``cls``: the string literal under the
    field, from the nearest class of its MRO that has one (a field re-declared without one keeps
    the base's), its line breaks joined into whole sentences (a blank line stays a paragraph).

    tyro would read these docstrings itself, but it starts a new line at every continuation
    line that starts with indentation or a non-letter (``tyro._strings.remove_single_line_
    breaks``), breaking every multi-line help in mid-sentence."""
    import docstring_parser  # tyro's own docstring reader (a dependency of tyro)

    out: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if dataclasses.is_dataclass(klass):
            for param in docstring_parser.parse_from_object(klass).params:
                if param.description:
                    paragraphs = re.split(r"\n\s*\n", param.description.strip())
                    out[param.arg_name] = "\n\n".join(" ".join(p.split()) for p in paragraphs)
    return out


def _registry(cls: type) -> Any:
    """A tyro constructor registry that reads the dataclass ``cls`` field by field as tyro
    does (name, type, default) with the help of :func:`field_help`."""
    from tyro import constructors as tc

    registry = tc.ConstructorRegistry()
    helps = field_help(cls)

    def default(f: dataclasses.Field[Any]) -> Any:
        if f.default is not dataclasses.MISSING:
            return f.default
        if f.default_factory is not dataclasses.MISSING:
            return f.default_factory()
        return tc.MISSING_NONPROP  # a required option

    @registry.struct_rule
    def _fields(info: tc.StructTypeInfo) -> tc.StructConstructorSpec | None:
        if info.type is not cls:
            return None
        hints = typing.get_type_hints(cls)
        return tc.StructConstructorSpec(instantiate=cls, fields=tuple(
            tc.StructFieldSpec(name=f.name, type=hints[f.name], default=default(f),
                               helptext=helps.get(f.name))
            for f in dataclasses.fields(cls)))

    return registry


def parse(cls: type[T], argv: Sequence[str] | None, prog: str, description: str) -> T:
    """``cls`` (a dataclass) from the command line ``argv`` (``sys.argv[1:]`` when ``None``):
    one ``--field-name`` per field, booleans as ``--x/--no-x``, ``--help`` from the fields'
    docstrings. Exits like argparse: 0 after ``--help``; 2 after one line
    ``PROG: error: ...`` on stderr for a value that is not of the field's type or an unknown
    option."""
    import tyro

    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        with _error_hook():
            return tyro.cli(cls, args=argv, prog=prog, description=description,
                            registry=_registry(cls))
    except _Refused as e:
        print(f"{prog}: error: {e}", file=sys.stderr, flush=True)
        raise SystemExit(2) from None


def given_fields(cls: type, argv: Sequence[str]) -> set[str]:
    """The fields of ``cls`` set on a command line (``--n-steps 8``, ``--n_steps=8``,
    ``--no-progress``)."""
    names = {f.name for f in dataclasses.fields(cls)}
    given = set()
    for token in argv:
        if not token.startswith("--"):
            continue
        flag = token[2:].split("=", 1)[0].replace("-", "_")
        for name in (flag, flag.removeprefix("no_")):
            if name in names:
                given.add(name)
                break
    return given


def command_line(prog: str, args: Any) -> str:
    """The command that parses back to ``args`` (a dataclass instance): ``prog`` followed by
    every field that differs from its default, shell-quoted."""
    parts = [prog]
    for f in dataclasses.fields(args):
        value = getattr(args, f.name)
        if value == f.default:
            continue
        flag = "--" + f.name.replace("_", "-")
        if isinstance(value, bool):
            parts.append(flag if value else "--no-" + flag[2:])
        else:
            parts += [flag, shlex.quote(str(value))]
    return " ".join(parts)


def new_run_dir(args: Any) -> tuple[str, Path]:
    """A new, empty run folder ``runs_dir/<exp_name>_<N>p__s<seed>__<unix time>`` (``-2``,
    ``-3`` ... appended when a run of the same name started in the same second, so that two
    runs never share, and overwrite, a folder); returns its name and path."""
    import time

    base = f"{args.exp_name}_{args.num_players}p__s{args.seed}__{int(time.time())}"
    Path(args.runs_dir).mkdir(parents=True, exist_ok=True)
    name, n = base, 1
    while True:
        try:
            (Path(args.runs_dir) / name).mkdir()
            return name, Path(args.runs_dir) / name
        except FileExistsError:
            n += 1
            name = f"{base}-{n}"


def ints(text: str) -> list[int]:
    """``"256,256"`` -> ``[256, 256]``."""
    return [int(x) for x in text.split(",") if x.strip()]


def specs(text: str) -> list[str]:
    """``"strategic, greedy"`` -> ``["strategic", "greedy"]``."""
    return [s.strip() for s in text.split(",") if s.strip()]


def weighted(text: str, what: str, allowed: Sequence[Any] | None = None,
             kind: type = str) -> tuple[list[Any], list[float]]:
    """``"2:3,4,6:0.5"`` -> ``([2, 4, 6], [3.0, 1.0, 0.5])``: comma-separated values, each with an
    optional ``:weight`` (default 1), normalised to sum 1.

    Raises:
        TrainingError: an empty list, a value not in ``allowed`` or a bad weight (one line,
            naming ``what``).
    """
    values, weights = [], []
    for item in specs(text):
        value, _, weight = item.partition(":")
        try:
            v = kind(value.strip())
            w = float(weight) if weight.strip() else 1.0
        except ValueError:
            raise TrainingError(f"{what} {text!r}: cannot read {item!r} (expected value or "
                                "value:weight)") from None
        if allowed is not None and v not in allowed:
            raise TrainingError(f"{what} {text!r}: {v!r} is not one of "
                                f"{', '.join(map(str, allowed))}")
        if not w >= 0:
            raise TrainingError(f"{what} {text!r}: weight {weight!r} must be >= 0")
        values.append(v)
        weights.append(w)
    if not values or sum(weights) <= 0:
        raise TrainingError(f"{what} {text!r}: give at least one value with a positive weight")
    total = sum(weights)
    return values, [w / total for w in weights]


def check_ranges(args: Any, *, at_least_one: Sequence[str] = (),
                 non_negative: Sequence[str] = (), unit: Sequence[str] = (),
                 positive: Sequence[str] = ()) -> None:
    """Refuses the first field of ``args`` out of its range: a count that must be ``>= 1``
    (``at_least_one``), a count or budget that must be ``>= 0`` (``non_negative``), a
    probability or factor in ``[0, 1]`` (``unit``), a rate that must be ``> 0`` (``positive``).

    Raises:
        TrainingError: naming the option (``--name``), its value and its range (one line).
    """
    checks = [(at_least_one, lambda v: v >= 1, "must be >= 1"),
              (non_negative, lambda v: v >= 0, "must be >= 0"),
              (unit, lambda v: 0.0 <= v <= 1.0, "must be in [0, 1]"),
              (positive, lambda v: v > 0, "must be > 0")]
    for names, ok, allowed in checks:
        for name in names:
            value = getattr(args, name)
            if not ok(value):  # NaN fails every range
                raise TrainingError(f"--{name.replace('_', '-')} {value!r}: {allowed}")


def check_agent_specs(args: Any, names: Sequence[str]) -> None:
    """Refuses an agent spec of the comma-separated fields ``names`` of ``args`` (opponents,
    evaluation opponents, a behaviour-cloning teacher) that cannot be built, before anything
    is created.

    Raises:
        TrainingError: naming the option, the spec and why (one line).
    """
    from uno_mk_env.agents.base import AgentSpecError
    from uno_mk_env.evaluation.tournament import build_agent

    for name in names:
        for spec in specs(getattr(args, name)):
            try:
                build_agent(spec, seed=0)
            except (AgentSpecError, ValueError, OSError) as e:
                message = " ".join(str(e).split())
                raise TrainingError(f"--{name.replace('_', '-')}: agent {spec!r}: "
                                    f"{message}") from None
