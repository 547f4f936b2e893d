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
import math
import re
import shlex
import sys
import typing
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn, TypeVar

from uno_mk_env.agents.base import AgentSpecError
from uno_mk_env.errors import UnoMkError, quote
from uno_mk_env.evaluation.tournament import build_agent
from uno_mk_env.files import OutputPathError, check_output_dir

__all__ = ["MAX_ROLLOUT", "MAX_SEED", "PPOArgs", "RANGES", "Range", "TrainArgs",
           "TrainingDiverged",
           "TrainingError", "check",
           "check_agent_specs", "check_outputs", "command_line", "given_fields", "ints",
           "layer_sizes", "opponent_weights", "parse", "refuse", "specs", "weighted"]

T = TypeVar("T")


class TrainingError(UnoMkError, ValueError):
    """A training request that is refused before anything is created (a bad argument value, a
    missing or unreadable checkpoint, nothing left to train, a hyperparameter a resumed model
    cannot change); one line."""


class TrainingDiverged(TrainingError):
    """A run whose loss or weights became non-finite: it stopped there and kept its last finite
    policy (one line naming it; exit code 1, the arguments were valid)."""

    exit_code = 1


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


@dataclass
class PPOArgs(TrainArgs):
    """The arguments the fast and the sb3 backends share beyond :class:`TrainArgs`: both play
    --n-envs tables of one learner against an opponent pool with self-play snapshots and update
    with clipped PPO (each backend re-declares a default it changes, without a docstring)."""

    opponent_weights: str = ""
    """comma-separated sampling weights of --opponents (empty: uniform)"""
    self_play_prob: float = 0.0
    """probability that an opponent seat plays a frozen snapshot of the learner (once one exists)"""
    max_snapshots: int = 5
    """snapshots kept in the self-play league (the oldest is dropped)"""
    snapshot_deterministic: bool = False
    """snapshots play their most likely action instead of sampling from their policy"""
    n_envs: int = 2
    """tables (environments) played together"""
    n_steps: int = 1024
    """steps per table per rollout (a rollout is --n-envs x --n-steps learner decisions)"""
    batch_size: int = 512
    """minibatch size"""
    n_epochs: int = 10
    """epochs over each rollout"""
    anneal_lr: bool = True
    """decay the learning rate linearly to 10 % of its value over --total-timesteps"""
    clip_range: float = 0.2
    """PPO clipping coefficient"""
    ent_coef: float = 0.01
    """entropy bonus coefficient"""
    vf_coef: float = 0.5
    """value loss coefficient"""
    max_grad_norm: float = 0.5
    """gradient clipping norm"""
    target_kl: float = 0.0
    """stop an update's epochs early when the approximate KL exceeds this (0: never)"""
    max_minutes: float = 0.0
    """the whole command's time in minutes (fractions allowed): behaviour cloning, the
    evaluations, PPO, the final evaluation and the outputs are sized to end within it (10 %, or
    a minute); 0: no limit. A run stopped so is marked incomplete ("complete": false)"""


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
        from tyro._errors import on_parse_error  # tyro: the train extra
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
    from tyro import constructors as tc  # the train extra

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
    import tyro  # the train extra: --help stays quick without it loaded

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
            raise TrainingError(f"{what} {quote(text)}: cannot read {quote(item)} (expected "
                                "value or value:weight)") from None
        if allowed is not None and v not in allowed:
            raise TrainingError(f"{what} {quote(text)}: {quote(v)} is not one of "
                                f"{', '.join(map(str, allowed))}")
        if not (w >= 0 and math.isfinite(w)):  # NaN fails too
            raise TrainingError(f"{what} {quote(text)}: weight {quote(weight)} must be a "
                                "finite number >= 0")
        values.append(v)
        weights.append(w)
    if not values or sum(weights) <= 0:
        raise TrainingError(f"{what} {quote(text)}: give at least one value with a positive "
                            "weight")
    total = sum(weights)
    return values, [w / total for w in weights]


# ------------------------------------------------------------------------------ validation
#: The most a training seed may be: numpy's legacy seeding (stable-baselines3) takes < 2**32,
#: and table ``i`` of a run is seeded ``seed + i``.
MAX_SEED = 2**31 - 1
#: The most steps any step count may name (a budget, an interval): decades of training.
MAX_TIMESTEPS = 10**12
#: The most learner decisions one rollout or training batch may hold: each is 437 float32
#: observations (about 0.9 GB at this bound, before the learner's copies).
MAX_ROLLOUT = 2**19
#: The widest hidden layer and the most hidden layers of ``--net-arch`` / ``--vf-arch``.
MAX_WIDTH = 4096
MAX_HIDDEN_LAYERS = 8
#: The most teacher decisions behaviour cloning collects (each kept in memory, ~2 kB).
MAX_BC_STEPS = 1_000_000
#: The most games of one evaluation (the tournament's own bound).
MAX_EVAL_GAMES = 1_000_000
#: The most worker processes or threads any argument may start.
MAX_PROCESSES = 64


@dataclass(frozen=True)
class Range:
    """What a numeric argument allows: ``low`` to ``high`` (``low`` excluded when
    ``above``), a finite number; an integer when ``integer``."""

    low: float
    high: float
    integer: bool = True
    above: bool = False

    def allows(self, value: Any) -> bool:
        if isinstance(value, bool) or not isinstance(value, int | float):
            return False
        if self.integer and not isinstance(value, int):
            return False
        if not math.isfinite(value):  # NaN fails every comparison; inf is no budget
            return False
        return (value > self.low if self.above else value >= self.low) and value <= self.high

    def __str__(self) -> str:
        if self.integer:
            return f"an integer from {self.low:,} to {self.high:,}"
        if math.isinf(self.high):
            return f"a finite number {'>' if self.above else '>='} {self.low:g}"
        return f"a number from {self.low:g} to {self.high:g}"


_COUNT = Range(1, MAX_TIMESTEPS)
_EVERY = Range(0, MAX_TIMESTEPS)
_UNIT = Range(0.0, 1.0, integer=False)
_POSITIVE = Range(0.0, math.inf, integer=False, above=True)
_NON_NEGATIVE = Range(0.0, math.inf, integer=False)

#: The range of every numeric argument of every backend (:func:`check`), by field name.
RANGES: dict[str, Range] = {
    # every backend
    "seed": Range(0, MAX_SEED), "torch_threads": Range(1, MAX_PROCESSES),
    "num_players": Range(2, 10), "max_steps": Range(1, 1_000_000),
    "snapshot_every": _EVERY, "total_timesteps": _COUNT, "learning_rate": _POSITIVE,
    "gamma": _UNIT, "gae_lambda": _UNIT, "bc_steps": Range(0, MAX_BC_STEPS),
    "bc_epochs": Range(0, 1000), "bc_lr": _POSITIVE, "bc_smoothing": _UNIT,
    "eval_every": _EVERY, "eval_games": Range(1, MAX_EVAL_GAMES),
    "final_eval_games": Range(0, MAX_EVAL_GAMES), "checkpoint_every": _EVERY,
    "max_minutes": Range(0.0, 1e6, integer=False),
    # fast and sb3
    "self_play_prob": _UNIT, "max_snapshots": Range(1, 100), "n_envs": Range(1, 1024),
    "env_workers": Range(0, MAX_PROCESSES), "n_steps": Range(1, MAX_ROLLOUT),
    "batch_size": Range(1, MAX_ROLLOUT), "n_epochs": Range(1, 1000), "clip_range": _POSITIVE,
    "ent_coef": _NON_NEGATIVE, "vf_coef": _NON_NEGATIVE, "max_grad_norm": _POSITIVE,
    "target_kl": _NON_NEGATIVE, "critic_warmup": _EVERY, "place_weight": _UNIT,
    "verbose": Range(0, 2),
    # rllib
    "num_cpus": Range(0, 1024), "num_env_runners": Range(-1, 1024),
    "envs_per_runner": Range(1, 1024), "num_learners": Range(0, MAX_PROCESSES),
    "league_size": Range(0, 100), "league_prob": _UNIT, "opponent_prob": _UNIT,
    "train_batch_size": Range(1, MAX_ROLLOUT), "minibatch_size": Range(1, MAX_ROLLOUT),
    "num_epochs": Range(1, 1000), "clip_param": _POSITIVE, "entropy_coeff": _NON_NEGATIVE,
    "vf_loss_coeff": _NON_NEGATIVE, "grad_clip": _POSITIVE, "eval_workers": Range(1, 256),
}

#: A run name: letters, digits, ``.``, ``_``, ``+``, ``-`` (it names a folder in --runs-dir).
_NAME = re.compile(r"[A-Za-z0-9_+-][A-Za-z0-9._+-]{0,99}")


def refuse(name: str, value: Any, allowed: str) -> TrainingError:
    """The one-line refusal of the argument ``name`` (a field) given ``value``."""
    return TrainingError(f"--{name.replace('_', '-')} {quote(value)}: {allowed}")


def layer_sizes(args: Any, name: str = "net_arch") -> list[int]:
    """The hidden layer sizes of the field ``name`` (``"128,128"``).

    Raises:
        TrainingError: not comma-separated integers from 1 to :data:`MAX_WIDTH`, or none,
            or more than :data:`MAX_HIDDEN_LAYERS`.
    """
    text = getattr(args, name)
    allowed = (f"must be 1 to {MAX_HIDDEN_LAYERS} comma-separated layer sizes, each an integer "
               f"from 1 to {MAX_WIDTH:,} (e.g. 128,128)")
    parts = [p.strip() for p in str(text).split(",")]
    if not 1 <= len(parts) <= MAX_HIDDEN_LAYERS or not all(
            re.fullmatch(r"\+?[0-9]{1,5}", p) for p in parts):
        raise refuse(name, text, allowed)
    sizes = [int(p) for p in parts]
    if not all(1 <= s <= MAX_WIDTH for s in sizes):
        raise refuse(name, text, allowed)
    return sizes


def opponent_weights(args: Any) -> list[float]:
    """``--opponent-weights`` as numbers, one per ``--opponents`` spec (empty: all 1).

    Raises:
        TrainingError: not numbers, a negative or non-finite one, none positive, or not one
            per opponent.
    """
    opponents = specs(args.opponents)
    text = args.opponent_weights
    if not text.strip():
        return [1.0] * len(opponents)
    try:
        weights = [float(x) for x in text.split(",")]
    except ValueError:
        raise refuse("opponent_weights", text, "must be comma-separated numbers, one per "
                     "--opponents agent") from None
    if not all(math.isfinite(w) and w >= 0 for w in weights) or sum(weights) <= 0:
        raise refuse("opponent_weights", text, "must be finite numbers >= 0, at least one > 0")
    if len(weights) != len(opponents):
        raise refuse("opponent_weights", text,
                     f"gives {len(weights)} weight(s) for {len(opponents)} --opponents agent(s) "
                     f"({', '.join(opponents) or 'none'}); give one per agent, or none")
    return weights


def check(args: Any, rewards: Sequence[str]) -> None:
    """Refuses the first argument of ``args`` (any backend's ``Args``) that cannot run, before
    anything is created or started: a number out of its :data:`RANGES`, a run name that is not
    one folder name, a bad layer list, an empty or unbuildable agent list, opponent weights that
    do not fit the opponents, a rollout larger than :data:`MAX_ROLLOUT`, a reward not in
    ``rewards``. A backend then refuses what it does not support.

    Raises:
        TrainingError: naming the option, its value and what is allowed (one line).
    """
    names = [f.name for f in dataclasses.fields(args)]
    for name in names:
        allowed = RANGES.get(name)
        value = getattr(args, name)
        if allowed is not None and not allowed.allows(value):
            raise refuse(name, value, f"must be {allowed}")
    if not _NAME.fullmatch(args.exp_name):
        raise refuse("exp_name", args.exp_name, "must be 1-100 letters, digits, '.', '_', '+' "
                     "or '-' (not starting with '.'): it names the run's folder")
    if args.activation not in ("tanh", "relu"):
        raise refuse("activation", args.activation, "must be tanh or relu")
    if args.reward not in rewards:
        raise refuse("reward", args.reward, f"must be one of {', '.join(rewards)}")
    layer_sizes(args)
    if getattr(args, "vf_arch", ""):
        layer_sizes(args, "vf_arch")
    if "opponent_weights" in names:  # fast, sb3: every opponent seat draws from --opponents
        if not specs(args.opponents):
            raise refuse("opponents", args.opponents, "needs at least one agent spec (see "
                         "'uno-mk agents')")
        opponent_weights(args)
    if not specs(args.eval_opponents):
        raise refuse("eval_opponents", args.eval_opponents, "needs at least one agent spec")
    if {"n_envs", "n_steps"} <= set(names) and args.n_envs * args.n_steps > MAX_ROLLOUT:
        raise TrainingError(f"--n-envs x --n-steps = {args.n_envs * args.n_steps:,} decisions "
                            f"per rollout: at most {MAX_ROLLOUT:,} (each holds a 437-float "
                            "observation)")
    check_agent_specs(args, ("opponents", "eval_opponents", "bc_teacher"))


def check_outputs(args: Any, shipped: Sequence[Path] = ()) -> None:
    """Checks that the run's folder can be made in ``--runs-dir`` and that the ``shipped``
    files (``--save-path``'s) can be written, before any work: each folder is created if
    missing and probed with a temporary file (:func:`uno_mk_env.files.check_output_dir`).

    Raises:
        TrainingError: naming the place and why (one line).
    """
    places = [(folder, [p.name for p in shipped if p.parent == folder], "--save-path")
              for folder in sorted({p.parent for p in shipped})]
    for folder, names, flag in [*places, (Path(args.runs_dir), [], "--runs-dir")]:
        try:
            check_output_dir(folder, names)
        except OutputPathError as e:
            raise TrainingError(f"{flag}: {e}") from None


def check_agent_specs(args: Any, names: Sequence[str]) -> None:
    """Refuses an agent spec of the comma-separated fields ``names`` of ``args`` (opponents,
    evaluation opponents, a behaviour-cloning teacher) that cannot be built, before anything
    is created.

    Raises:
        TrainingError: naming the option, the spec and why (one line).
    """
    for name in names:
        for spec in specs(getattr(args, name)):
            try:
                build_agent(spec, seed=0)
            except (AgentSpecError, ValueError, OSError) as e:
                message = " ".join(str(e).split())
                raise TrainingError(f"--{name.replace('_', '-')}: agent {spec!r}: "
                                    f"{message}") from None
