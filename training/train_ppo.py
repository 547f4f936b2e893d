"""Train a MaskablePPO agent (sb3-contrib) for UNO Mario Kart, CleanRL style.

::

    python -m uno_mk_env.training.train_ppo --num-players 2 --total-timesteps 1000000 --seed 1
    python -m uno_mk_env.training.train_ppo --help          # every argument, documented
    python -m uno_mk_env.training.train_ppo --resume runs/<run>/checkpoints/ppo_500000_steps.zip \\
        --total-timesteps 2000000

One learning seat (drawn at random every episode) plays a training table
(:class:`uno_mk_env.training.envs.TrainingEnv`: the player count drawn from ``--table-sizes``
and the rules from ``--rule-presets`` every episode) against opponents drawn per episode and per
seat (:mod:`uno_mk_env.training.opponents`): the agents of ``--opponents`` (weighted by
``--opponent-weights``) and, with probability ``--self-play-prob``, a frozen snapshot of the
learner itself. A snapshot is taken every ``--snapshot-every`` steps when the learner's latest
evaluation is at least as good as the one of the previous snapshot (so the league only ever
gets stronger); the newest ``--max-snapshots`` are kept. ``--bc-teacher`` starts with behaviour
cloning (:mod:`uno_mk_env.training.behaviour_cloning`).

**Reproducible by construction.** Training stops at exactly ``--total-timesteps`` learner steps
(rounded up to whole rollouts of ``--n-envs`` x ``--n-steps``; the rounded count is what
``config.json`` records), and the learning-rate schedule runs over exactly that length; the same
command on the same commit gives bit-identical weights (one env process, ``--torch-threads 1``).
``--max-minutes`` bounds the whole command (behaviour cloning, the evaluations, PPO, the final
evaluation and the outputs, :class:`~uno_mk_env.training.progress.Budget`): a run it stops is
marked incomplete (``"complete": false``). ``config.json`` records the arguments as they ran
(those a resume inherits included), the command that reproduces them, the git commit (and
whether the tree was dirty), the versions, the seeds and, on ``--resume``, the SHA-256 of the
checkpoint it started from.

Every ``--eval-every`` steps the policy plays a duplicate-deal tournament
(:func:`uno_mk_env.training.curves.evaluate`) against each agent of ``--eval-opponents`` at
each table size of ``--eval-players``: one learner and N-1 copies of the opponent. Win rates
with 95 % Wilson intervals go to TensorBoard (``runs/<run_name>``), ``eval.csv`` and a plot.
Outputs, all in ``runs/<run_name>/``:

* ``config.json``, TensorBoard events and ``progress.csv``;
* ``checkpoints/ppo_<steps>_steps.zip`` every ``--checkpoint-every`` steps (+ ``config.json``);
* ``snapshots/`` (the self-play league), ``eval.csv``, ``curve.png``;
* ``final.zip`` and ``final.npz`` (the policy for play), ``summary.json``;
* ``best.zip``: the best evaluation after training started (against the last
  ``--eval-opponents`` agent, mean over ``--eval-players`` of win rate x players); no
  ``best.zip`` when the run made no evaluation after its start (``summary.json`` says so).

With ``--save-path models/ppo_2p.zip`` the final model is also shipped there
(:func:`uno_mk_env.training.provenance.ship`): the model without its optimizer state, its
``.npz`` policy, its JSON provenance and its curve (CSV and PNG, final evaluation included).

``--resume`` continues a checkpoint with its own architecture and PPO hyperparameters: on the
command line the ones not given are taken from the checkpoint's run, and giving one that
differs is refused (:data:`RESUME_MAY_CHANGE` lists what may change), so ``config.json``
records what runs. It loads the checkpoint with stable-baselines3's loader, which unpickles:
resume only from files you trust.
"""

from __future__ import annotations

import copy
import csv
import dataclasses
import hashlib
import math
import random
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from uno_mk_env.agents.policy_file import export_policy
from uno_mk_env.agents.threads import set_thread_policy
from uno_mk_env.engine.observation import OBS_PIECES, OBS_SIZE
from uno_mk_env.engine.rules import MAX_PLAYERS, MIN_PLAYERS, PRESETS
from uno_mk_env.engine.seeding import Stream
from uno_mk_env.errors import UnoMkError
from uno_mk_env.files import OutputPathError, check_output_dir

from . import args as _args
from .args import PPOArgs, TrainingDiverged, TrainingError, ints
from .behaviour_cloning import Cloning, behaviour_cloning
from .curves import EVAL_COLUMNS, read_eval_csv
from .divergence import NonFinite
from .envs import Tables, make_training_env, table_sizes
from .outputs import new_run_dir, save_model, write_json
from .progress import Budget, process_start
from .provenance import ship, shipped_paths, source_commit, versions, zip_target
from .resume import config_chain, resume_source, run_dir_of
from .summary import print_summary

__all__ = ["RESUME_FIXED", "RESUME_MAY_CHANGE", "Args", "TrainingError", "main", "parse_args",
           "read_eval_csv", "train"]

PROG = "python -m uno_mk_env.training.train_ppo"
#: The ``--help`` description (``uno-mk train``, the sb3 backend).
DESCRIPTION = (
    "Train a MaskablePPO agent (stable-baselines3, the 'train' extra) for UNO Mario Kart: one "
    "learning seat, drawn every episode, against the rule-based agents of --opponents and "
    "snapshots of itself; evaluated against --eval-opponents on duplicate deals every "
    "--eval-every steps; reproducible bit for bit from its command. Outputs go to "
    "runs/<run>/ (config.json, TensorBoard, eval.csv, curve.png, checkpoints, final.npz, "
    "summary.json); the last line printed is 'agent: ppo:PATH'. 'uno-mk train --backend "
    "rllib --help': the Ray RLlib backend.")


@dataclass
class Args(PPOArgs):
    """The sb3 backend's arguments: :class:`~uno_mk_env.training.args.PPOArgs` (those it shares
    with the fast backend, and :class:`~uno_mk_env.training.args.TrainArgs`, those of every
    backend) and these."""

    # environment
    table_sizes: str = ""
    """player counts drawn per episode, each with an optional weight, e.g. "2:3,3,4:2"
    (empty: always --num-players); the observation is the same at every size"""
    rule_presets: str = ""
    """rules presets (uno_mk_env.engine.rules.PRESETS) drawn per episode, each with an optional
    weight,
    e.g. "default:4,strict,standard_uno" (empty: the default rules)"""
    place_weight: float = 0.5
    """with --reward win_place: the weight w of the place reward (0.5: the mean of the two; at
    four players 0.25 pays +1, -1/6, -1/3, -1/2 from first to last place)"""
    vec_env: str = "auto"
    """"subproc" (one process per env), "dummy" (in process) or "auto" (subproc if n_envs > 1)"""

    # opponents
    opponent_weights: str = "0.45,0.45,0.1"
    self_play_prob: float = 0.2

    # algorithm
    vf_arch: str = ""
    """hidden layer sizes of the value network (empty: same as --net-arch)"""
    critic_state: bool = False
    """asymmetric actor-critic: the value network also sees the perfect-information state()
    of the game (a centralised critic, used in training only); the policy sees only the
    observation, as at the table"""

    # evaluation, outputs
    eval_players: str = ""
    """table sizes of the evaluations, comma-separated (empty: --num-players)"""
    verbose: int = 0
    """SB3 verbosity (1 prints the training statistics table)"""


#: Arguments that may differ from the checkpoint's run on ``--resume``: they are read from the
#: arguments of every run (environment, opponents, self-play, evaluation, checkpoints, outputs,
#: the step budget). The others (:data:`RESUME_FIXED`) belong to the model: its architecture,
#: its PPO hyperparameters and how it was started (behaviour cloning does not run on resume).
RESUME_MAY_CHANGE = frozenset({
    "exp_name", "seed", "torch_threads", "num_players", "table_sizes", "rule_presets", "reward",
    "place_weight",
    "max_steps", "n_envs", "vec_env", "opponents", "opponent_weights", "self_play_prob",
    "snapshot_every", "max_snapshots", "snapshot_deterministic", "total_timesteps",
    "eval_every", "eval_games", "final_eval_games", "eval_opponents", "eval_players",
    "checkpoint_every", "runs_dir", "save_path", "max_minutes", "resume", "progress", "verbose",
})
RESUME_FIXED = tuple(f.name for f in dataclasses.fields(Args) if f.name not in RESUME_MAY_CHANGE)


# ------------------------------------------------------------------------ argument parsing
def parse_args(argv: Sequence[str] | None = None, prog: str = PROG) -> Args:
    """:class:`Args` from the command line (``--num-players 4``; booleans as ``--x/--no-x``);
    ``prog`` names the command in the usage line and errors (``uno-mk train``)."""
    return _args.parse(Args, argv, prog, DESCRIPTION)


def given_fields(argv: Sequence[str]) -> set[str]:
    """The :class:`Args` fields set on a command line."""
    return _args.given_fields(Args, argv)


def command(args: Args) -> str:
    """The command line that runs ``args`` (every argument that differs from its default)."""
    return _args.command_line(PROG, args)


# ---------------------------------------------------------------------------------- resume
def _comparable(name: str, values: dict[str, Any]) -> Any:
    value = values[name]
    if name == "net_arch":
        return ints(str(value))
    if name == "vf_arch":  # empty: the same as net_arch
        return ints(str(value)) or ints(str(values.get("net_arch", "")))
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return value


def check_resume_args(args: Args, path: Path, steps: int, known: dict[str, Any]) -> None:
    """Refuses a resume that would not do what ``args`` (and so ``config.json``) says.

    Raises:
        TrainingError: one line listing every :data:`RESUME_FIXED` argument that differs from
            the checkpoint's run (old → new), or saying that the checkpoint already has
            ``--total-timesteps`` steps.
    """
    new = dataclasses.asdict(args)
    old = {**known}
    old.setdefault("bc_teacher", "")  # behaviour cloning does not run on resume
    changed = [
        f"{name} {old[name]!r} → {new[name]!r}"
        for name in RESUME_FIXED
        if name in old and _comparable(name, old) != _comparable(name, {**old, **new})
        and (name != "vf_arch" or old[name] != new[name])  # else told by the net_arch change
    ]
    if changed:
        raise TrainingError(
            f"--resume {path}: {', '.join(changed)}: a resumed model keeps its architecture, "
            "its PPO hyperparameters and its start (only the environment, opponent, self-play, "
            "evaluation, checkpoint, output and step-budget arguments may change: "
            "uno_mk_env.training.train_ppo.RESUME_MAY_CHANGE)"
        )
    if steps >= args.total_timesteps:
        raise TrainingError(
            f"--resume {path}: the checkpoint already has {steps} steps and --total-timesteps is "
            f"{args.total_timesteps}: nothing to train (--total-timesteps counts the "
            "checkpoint's steps too; ask for more)"
        )


def inherit_resume_args(args: Args, given: set[str]) -> Args:
    """``args`` with each :data:`RESUME_FIXED` argument not in ``given`` taken from the
    checkpoint's run when known (so ``--resume X --total-timesteps N`` continues with the
    model's own hyperparameters, and config.json records them); the ones given are checked by
    :func:`check_resume_args`.

    Raises:
        TrainingError: the checkpoint is missing or not a stable-baselines3 model.
    """
    _, _, known = resume_source(args.resume, RESUME_FIXED)
    taken = {k: v for k, v in known.items() if k not in given and k in RESUME_FIXED}
    return dataclasses.replace(args, **taken)


# ------------------------------------------------------------------------------- checks
def check_args(args: Args) -> None:
    """Refuses arguments that cannot run, in one line, before anything is created: every value
    (:func:`uno_mk_env.training.args.check`), then this backend's table sizes, rules presets,
    evaluation table sizes and place weight.

    Raises:
        TrainingError: naming the value and what is allowed.
    """
    _args.check(args, rewards=("win", "points", "place", "win_place"))
    if args.reward != "win_place" and args.place_weight != Args.place_weight:
        raise TrainingError(f"--place-weight {args.place_weight}: only --reward win_place uses "
                            f"it (the reward is {args.reward!r})")
    if args.vec_env not in ("auto", "dummy", "subproc"):
        raise _args.refuse("vec_env", args.vec_env, "must be auto, dummy or subproc")
    table_sizes(Tables.of(args))
    _args.weighted(args.rule_presets or "default", "--rule-presets", allowed=list(PRESETS))
    try:
        players = ints(args.eval_players)
    except ValueError:
        players = [0]
    if not all(MIN_PLAYERS <= n <= MAX_PLAYERS for n in players) or len(players) > 9:
        raise _args.refuse("eval_players", args.eval_players, f"must be comma-separated table "
                           f"sizes, each {MIN_PLAYERS}-{MAX_PLAYERS}")


def whole_rollouts(args: Args, start: int) -> Args:
    """``args`` with ``total_timesteps`` rounded up so that training from ``start`` steps ends
    on a whole rollout (``n_envs * n_steps`` steps): where stable-baselines3 stops anyway."""
    rollout = args.n_envs * args.n_steps
    total = start + math.ceil(max(args.total_timesteps - start, 0) / rollout) * rollout
    if total != args.total_timesteps:
        print(f"--total-timesteps {args.total_timesteps} rounded up to {total}: whole rollouts "
              f"of {args.n_envs} envs x {args.n_steps} steps from step {start}", flush=True)
    return dataclasses.replace(args, total_timesteps=total)


# ------------------------------------------------------------------------------- building
def make_env(args: Args, rank: int) -> Callable[[], Any]:
    """A thunk building env ``rank`` (CleanRL's ``make_env``), with episode statistics."""

    def thunk() -> Any:
        from stable_baselines3.common.monitor import Monitor  # the train extra

        return Monitor(make_training_env(Tables.of(args), rank))

    return thunk


def learning_rate(args: Args) -> float | Callable[[float], float]:
    """The learning rate, or its schedule over the run (``--anneal-lr``): linear from
    ``--learning-rate`` at step 0 to 10 % of it at ``--total-timesteps``."""
    if not args.anneal_lr:
        return args.learning_rate
    lr0 = args.learning_rate

    def schedule(progress_remaining: float) -> float:
        return lr0 * (0.1 + 0.9 * min(max(progress_remaining, 0.0), 1.0))

    return schedule


def new_model(args: Args, vec_env: Any, hyper: dict[str, Any]) -> Any:
    """An untrained MaskablePPO of ``args``' architecture (scaled input; asymmetric critic
    with ``--critic-state``)."""
    import torch  # the train extra, as the imports below
    from sb3_contrib import MaskablePPO

    from .policies import (  # torch classes: the train extra, loaded with torch above
        AsymmetricActorCriticPolicy,
        ScaledObservationExtractor,
    )

    pi = ints(args.net_arch)
    vf = ints(args.vf_arch) if args.vf_arch else pi
    policy: Any = "MlpPolicy"
    policy_kwargs: dict[str, Any] = {
        "net_arch": {"pi": pi, "vf": vf},
        "activation_fn": {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU}[args.activation],
        "features_extractor_class": ScaledObservationExtractor,
    }
    if args.critic_state:
        policy = AsymmetricActorCriticPolicy
        policy_kwargs["actor_size"] = OBS_SIZE
    return MaskablePPO(policy, vec_env, policy_kwargs=policy_kwargs, seed=args.seed,
                       device="cpu", **hyper)


def seeds(args: Args) -> dict[str, str]:
    """How every random stream of a run derives from ``--seed`` (uno_mk_env.engine.seeding)."""
    return {
        "root": str(args.seed),
        "torch, numpy global, python random, SB3": "seed",
        "env rank r (first reset; table draws)": "seed + r",
        "opponent seat s of env r, table t > 0": "derive_seed(seed, r, s[, t])",
        "behaviour cloning": f"derive_seed(seed, {Stream.CLONING_TEACHER}.."
                             f"{Stream.CLONING_SPLIT})",
        "periodic evaluation vs opponent i (players n != num_players)":
            f"derive_seed(seed, {Stream.EVALUATION}, i, 0[, n])",
        "final evaluation": f"derive_seed(seed, {Stream.EVALUATION}, i, 1[, n])",
        "snapshot k": f"derive_seed(seed, {Stream.SNAPSHOT}, k)",
    }


def last_logged(progress_csv: Path, key: str) -> float | None:
    """The last value of ``key`` in stable-baselines3's ``progress.csv`` (``None``: never)."""
    if not progress_csv.is_file():
        return None
    value = None
    with progress_csv.open(encoding="utf-8") as f:
        for row in csv.DictReader(f):
            if row.get(key):
                value = float(row[key])
    return value


# ------------------------------------------------------------------------------------ train
def train(args: Args, invocation: str | None = None,
          started: float | None = None) -> dict[str, Any]:
    """Trains, evaluates and saves (see the module docstring).

    Args:
        args: the arguments (after :func:`inherit_resume_args` for a resume from the command
            line).
        invocation: the command as typed, recorded next to the reproducing ``command``.
        started: when the command began on the ``time.monotonic()`` clock (default: now):
            the start of the ``--max-minutes`` budget.

    Returns:
        The run's summary: ``run_dir``, ``timesteps``, ``complete`` (False when
        ``--max-minutes`` stopped it), ``train_seconds``, ``steps_per_second``, ``final_eval``,
        ``best`` (the step and score of ``best.zip``, or ``None`` with ``best_note``),
        ``explained_variance`` (the critic's, at the last update logged) and ``policy``, the
        final policy file (``.npz``): ``--save-path``'s, else the run's ``final.npz``.

    Raises:
        TrainingError: a refused request (one line; nothing is created).
        OutputPathError: an output place that cannot be written.
    """
    budget = Budget(args.max_minutes, start=started)
    check_args(args)
    # Everything that can be refused is checked before a run folder is made.
    start_steps = 0
    if args.resume:
        resume_path, start_steps, known = resume_source(args.resume, RESUME_FIXED)
        check_resume_args(args, resume_path, start_steps, known)
    args = whole_rollouts(args, start_steps)
    args = dataclasses.replace(args, final_eval_games=_args.final_eval_games(args))
    target = None
    if args.save_path:
        target = zip_target(args.save_path)
        check_output_dir(target.parent, [p.name for p in shipped_paths(target)])
    check_output_dir(args.runs_dir, [])
    return _train(args, invocation, start_steps, target,
                  resume_path if args.resume else None, budget)


def _model(args: Args, vec_env: Any, hyper: dict[str, Any], resume_path: Path | None
           ) -> tuple[Any, list[dict[str, Any]], Path | None]:
    """The model to train (``--resume``'s, or a new one), the curve so far and the run folder
    the checkpoint came from (``None``: a new model)."""
    from .policies import load_model  # stable-baselines3 (the train extra)

    if resume_path is None:
        return new_model(args, vec_env, hyper), [], None
    model = load_model(resume_path, env=vec_env, **hyper)
    model.set_random_seed(args.seed)
    # Keep the earlier runs' curve (their periodic evaluations): the run directory's when
    # the checkpoint sits in one (and its self-play league), else a shipped model's curve.
    old_run = run_dir_of(resume_path)
    earlier = old_run / "eval.csv"
    if not earlier.is_file():
        earlier = resume_path.with_name(f"{resume_path.stem}_curve.csv")
    eval_rows = []
    if earlier.is_file():
        eval_rows = [r for r in read_eval_csv(earlier, args.num_players)
                     if r["timesteps"] <= model.num_timesteps and r["kind"] == "eval"]
    return model, eval_rows, old_run


def _warm_start(model: Any, args: Args, run_dir: Path, config: dict[str, Any],
                budget: Budget) -> dict[str, Any] | None:
    """Behaviour cloning of ``--bc-teacher`` (reported in ``config.json``); ``None``, or how
    it diverged (the policy's weights before it are put back)."""
    from .policies import SB3Clonable  # stable-baselines3 (the train extra)

    before = copy.deepcopy(model.policy.state_dict())
    t0 = time.time()
    try:
        bc = behaviour_cloning(SB3Clonable(model.policy), Tables.of(args), Cloning.of(args),
                               collect_until=budget.at(Budget.BC_COLLECT_SHARE),
                               train_until=budget.at(Budget.BC_SHARE))
    except NonFinite as e:
        model.policy.load_state_dict(before)
        return {"reason": str(e), "at_timesteps": 0, "kept_timesteps": 0}
    bc["seconds"] = round(time.time() - t0, 1)
    config["behaviour_cloning"] = bc
    write_json(run_dir / "config.json", config)
    print(f"behaviour cloning of {args.bc_teacher}: {bc}", flush=True)
    return None


def _train(args: Args, invocation: str | None, start_steps: int, target: Path | None,
           resume_path: Path | None, budget: Budget) -> dict[str, Any]:
    # torch and stable-baselines3 (the train extra) load here, after the thread policy is set
    import torch
    from stable_baselines3.common.logger import configure
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    from .callbacks import EvalAndSelfPlay  # stable-baselines3 callbacks: the train extra

    run_name, run_dir = new_run_dir(args)

    # seeding
    random.seed(args.seed)
    np.random.seed(args.seed)  # noqa: NPY002 - SB3's rollout buffer shuffles with the global one
    torch.manual_seed(args.seed)
    set_thread_policy(args.torch_threads)  # torch's intra-op threads, now that it is loaded
    # Argument checks of torch.distributions cost ~10 % of a rollout step; the masks are valid.
    torch.distributions.Distribution.set_default_validate_args(False)

    thunks = [make_env(args, rank) for rank in range(args.n_envs)]
    use_subproc = args.vec_env == "subproc" or (args.vec_env == "auto" and args.n_envs > 1)
    vec_env = SubprocVecEnv(thunks) if use_subproc else DummyVecEnv(thunks)
    vec_env.seed(args.seed)

    # The PPO hyperparameters, applied to a resumed model too (they were checked against the
    # checkpoint's above), so that config.json records what runs.
    hyper: dict[str, Any] = dict(
        learning_rate=learning_rate(args), n_steps=args.n_steps, batch_size=args.batch_size,
        n_epochs=args.n_epochs, gamma=args.gamma, gae_lambda=args.gae_lambda,
        clip_range=args.clip_range, ent_coef=args.ent_coef, vf_coef=args.vf_coef,
        max_grad_norm=args.max_grad_norm, target_kl=args.target_kl or None,
        verbose=args.verbose,
    )
    model, eval_rows, old_run = _model(args, vec_env, hyper, resume_path)
    model.set_logger(configure(str(run_dir), ["tensorboard", "csv"]
                               + (["stdout"] if args.verbose else [])))

    config: dict[str, Any] = {
        "run_name": run_name, "run_dir": str(run_dir), "args": dataclasses.asdict(args),
        "command": command(args),
        "invocation": invocation,
        "git": source_commit(),
        "versions": versions(),
        "seeds": seeds(args),
        "start_timesteps": start_steps,
        # The file a resume started from, by content: a path such as models/ppo_2p.zip may
        # later hold another model.
        "resume_sha256": (hashlib.sha256(resume_path.read_bytes()).hexdigest()
                          if resume_path is not None else None),
        "observation_size": int(model.observation_space.shape[0]),
        # A checkpoint only fits the layout it was trained on (docs/api.md#observation).
        "observation_layout": [[p.name, p.size] for p in OBS_PIECES],
        "policy_kwargs": {k: (v.__name__ if isinstance(v, type) else v)
                          for k, v in model.policy_kwargs.items()},
    }
    write_json(run_dir / "config.json", config)
    diverged: dict[str, Any] | None = None
    # --bc-steps 0: no cloning (behaviour cloning never runs on a resume either)
    if args.bc_teacher and args.bc_steps > 0 and resume_path is None:
        diverged = _warm_start(model, args, run_dir, config, budget)
    start = time.time()
    callback = EvalAndSelfPlay(args, run_dir, eval_rows, vec_env, start, budget)
    if args.checkpoint_every > 0:
        (run_dir / "checkpoints").mkdir(exist_ok=True)
        write_json(run_dir / "checkpoints" / "config.json", config)
    if old_run is not None and args.snapshot_every > 0:
        old_snapshots = sorted((old_run / "snapshots").glob("snapshot_*.zip"),
                               key=lambda p: int(p.stem.split("_")[1]))
        for path in old_snapshots[-args.max_snapshots:]:
            callback.add(str(path))

    if diverged is None:
        model.learn(args.total_timesteps - start_steps, callback=callback,
                    progress_bar=args.progress, reset_num_timesteps=resume_path is None)
        if callback.keep_finite():  # the last update's weights
            callback.finish()
        diverged = callback.diverged
        if diverged is not None:
            model.num_timesteps = callback.good_steps  # the weights kept are those
    complete = (model.num_timesteps == args.total_timesteps and not callback.timed_out
                and diverged is None)
    train_seconds = time.time() - start
    steps_done = model.num_timesteps - start_steps

    save_model(model, run_dir / "final.zip")
    export_policy(run_dir / "final.zip", run_dir / "final.npz", provenance={
        "run_dir": str(run_dir), "timesteps": int(model.num_timesteps)})
    final = [] if diverged else callback.evaluate(callback.final_games(), tag="final_eval")
    vec_env.close()
    summary: dict[str, Any] = {
        "run_dir": str(run_dir), "timesteps": model.num_timesteps, "complete": complete,
        "stopped_by": "diverged" if diverged else "max_minutes" if callback.timed_out
        else "total_timesteps",
        "train_seconds": round(train_seconds, 1),
        "steps_per_second": round(steps_done / max(train_seconds, 1e-9), 1),
        "final_eval": [{k: r[k] for k in EVAL_COLUMNS if k in r} for r in final],
        "best": callback.best,
        "explained_variance": last_logged(run_dir / "progress.csv", "train/explained_variance"),
    }
    if callback.best is None and diverged is None:
        summary["best_note"] = ("no evaluation after training started (raise the step budget "
                                "or lower --eval-every): no best.zip")
    summary["policy"] = str(run_dir / "final.npz")
    if diverged is not None:
        summary["diverged"] = diverged
    elif target is not None:
        summary["policy"] = str(target.with_suffix(".npz"))
        info = {**config, "complete": complete, "summary": summary,
                "selection": {"method": "the final model of the run"},
                "resumed_from": config_chain(run_dir)[1:]}
        ship(model, target, info, eval_rows, args.num_players,
             f"{target.name}: {args.num_players} players, seed {args.seed}",
             npz_provenance={"run_dir": str(run_dir)})
    write_json(run_dir / "summary.json", summary)
    model.logger.close()  # progress.csv and the TensorBoard events file
    if diverged is not None:
        raise TrainingDiverged(
            f"{'training' if diverged['at_timesteps'] else 'behaviour cloning'} diverged "
            f"({diverged['reason']}); the last finite policy (step "
            f"{diverged['kept_timesteps']:,}) is {run_dir / 'final.npz'}, and "
            f"{run_dir / 'summary.json'} says so (try a lower --learning-rate, --bc-lr or "
            "--max-grad-norm)")
    return summary


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m uno_mk_env.training.train_ppo``: 0 when trained, 2 with a one-line error when
    the request is refused (a bad value, a missing checkpoint, nothing left to train, a changed
    hyperparameter on ``--resume``, an output place that cannot be written)."""
    started = process_start()
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(argv)
    set_thread_policy(args.torch_threads)  # before torch is imported
    try:
        if args.resume:
            args = inherit_resume_args(args, given_fields(argv))
        summary = train(args, invocation=" ".join([PROG, *argv]), started=started)
    except OutputPathError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    except UnoMkError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return e.exit_code
    print_summary(summary)
    print(f"agent: ppo:{summary['policy']}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
