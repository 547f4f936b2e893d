"""A lean PPO for UNO Mario Kart, CleanRL style, on the batched vector env.

This module reads top-down as CleanRL's ``ppo.py``: the arguments (:class:`Args`), their
checks, then :func:`train`: behaviour cloning (:mod:`~uno_mk_env.training.behaviour_cloning`),
the PPO loop (:func:`_learn`), the final evaluation and the outputs. Beside it, one idea each:
the network (:mod:`~uno_mk_env.training.network`), one PPO iteration, rollout and update
(:mod:`~uno_mk_env.training.ppo_update`), the rollouts' worker processes
(:mod:`~uno_mk_env.training.rollouts`) and the run folder (:mod:`~uno_mk_env.training.
fast_run`).

::

    python -m uno_mk_env.training.ppo_fast --num-players 2 --total-timesteps 2000000 --seed 1
    python -m uno_mk_env.training.ppo_fast --help          # every argument, documented

``--n-envs`` tables (:class:`uno_mk_env.envs.vector.UnoMarioKartVectorEnv`, built by
:func:`uno_mk_env.training.vector_envs.make_vector_training_env`) are played together, split
over ``--env-workers`` processes (:mod:`uno_mk_env.training.rollouts`): at each rollout the
learner sends its actor's weights, every worker plays ``--n-steps`` steps of its tables with a
numpy copy of the actor (one forward pass per step for all its learner seats, one for every
table waiting on the same self-play snapshot, the rule-based opponents table by table) and
sends the rollout back whole; the rollouts do not depend on the split. The learner then
computes the values and log-probabilities in one batched torch pass and updates, using
``--torch-threads`` while the workers wait. The update is
PPO with a masked categorical policy (illegal logits set to -1e8, as sb3-contrib's
``MaskablePPO``), clipped objective, GAE, normalised advantages and a separate value network;
the tables' opponents are the sb3 backend's (``--opponents`` weighted by
``--opponent-weights``, and with ``--self-play-prob`` a snapshot of the learner, taken every
``--snapshot-every`` steps when the latest evaluation did not drop).

**Reproducible**: the same command on the same commit and machine gives the same weights
(a fixed ``--torch-threads``, numpy's BLAS limited to one thread, every random stream derived
from ``--seed``, each table's action draws from its own generator); training stops at
``--total-timesteps`` rounded up to whole rollouts (``--n-envs`` x ``--n-steps``).
``--max-minutes`` bounds the whole command (behaviour cloning, evaluations, the final
evaluation and the outputs included, :class:`~uno_mk_env.training.progress.Budget`): cloning
and evaluations are sized to their share of it, PPO stops when the next update and the final
evaluation would not fit (``"complete": false``).

Outputs in ``runs/<run_name>/``: ``config.json`` (arguments, command, git commit, versions,
seeds), ``progress.csv`` (one row per update), ``eval.csv`` and ``curve.png``, ``snapshots/``,
``checkpoints/policy_<steps>_steps.npz`` every ``--checkpoint-every`` steps (default
0: none), ``final.npz`` (the policy, :func:`uno_mk_env.agents.policy_file.write_policy`, played by
``ppo:PATH``), ``best.npz`` (best evaluation after the start, as the sb3 backend picks
``best.zip``), ``final.pt`` (the torch weights and optimizer state, a plain state dict) and
``summary.json``. ``--save-path X.npz`` also ships the final policy with its JSON provenance
and curve. ``--resume`` is not supported by this backend.

This is ``uno-mk train``'s default backend. Its defaults are the recipe that did best with
``--max-minutes 10`` at two players (docs/training.md, "The fast path"): behaviour cloning of
``strategic``, then PPO against ``strategic`` alone without self-play, no entropy bonus,
learning rate 3e-4, rollouts of 64 tables x 128 steps, an evaluation every million steps; a
timed run's automatic final evaluation is capped (:func:`final_games`). The network and the
length of the imitation follow the table size (:data:`TABLE_SIZE_DEFAULTS`): at three or more
players a wider network imitates four times as many decisions, the recipe that beat three
``strategic`` with ``--num-players 4 --max-minutes 30``.
"""

from __future__ import annotations

import dataclasses
import json
import math
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from uno_mk_env.agents.numpy_actor import OBS_SCALE
from uno_mk_env.agents.policy_file import ModelFileError, load_policy
from uno_mk_env.agents.threads import set_thread_policy
from uno_mk_env.engine.actions import NUM_ACTIONS
from uno_mk_env.engine.observation import OBS_PIECES, OBS_SIZE
from uno_mk_env.engine.seeding import Stream
from uno_mk_env.errors import UnoMkError

from .args import (
    PPOArgs,
    TrainingDiverged,
    TrainingError,
    check,
    check_outputs,
    command_line,
    final_eval_games,
    layer_sizes,
    parse,
)
from .behaviour_cloning import Cloning, behaviour_cloning
from .curves import EVAL_COLUMNS
from .divergence import NonFinite
from .envs import Tables
from .fast_run import Run, ship, shipped_files
from .mixed_tables import check_training_tables
from .outputs import new_run_dir, write_json
from .progress import Budget, RateLines, process_start
from .provenance import source_commit, versions
from .rollouts import Layers, ProcessRollouts, TableRollouts

__all__ = ["Args", "main", "train"]

PROG = "python -m uno_mk_env.training.ppo_fast"
DESCRIPTION = (
    "Train a PPO agent fast (the 'train' extra, without stable-baselines3) for UNO Mario Kart: "
    "--n-envs tables of the batched vector env stepped together, one learning seat each, drawn "
    "every episode, against --opponents (and, with --self-play-prob, snapshots of itself); "
    "behaviour cloning of --bc-teacher first; evaluated against --eval-opponents on duplicate "
    "deals every --eval-every steps; reproducible from its command. Outputs go to runs/<run>/ "
    "(config.json, progress.csv, eval.csv, curve.png, final.npz, summary.json); the last line "
    "printed by 'uno-mk train' is 'agent: ppo:PATH'. 'uno-mk train --backend sb3 --help': "
    "the stable-baselines3 backend.")


@dataclass
class Args(PPOArgs):
    """The arguments of the fast backend (see the module docstring)."""

    exp_name: str = "ppo_fast"
    table_sizes: str = ""
    """player counts of the training tables, each with an optional weight, e.g.
    "2,3,4,6,10" (empty: --num-players); table i keeps the size drawn for its index
    (uno_mk_env.training.mixed_tables); the evaluations play --num-players"""
    place_weight: float = 0.5
    """with --reward win_place: the weight w of the place reward (as the sb3 backend's)"""
    opponents: str = "strategic"
    torch_threads: int = 2
    """torch intra-op threads of the update (the env workers wait while it runs, so 2 use both
    cores of a 2-core machine; a run is bit-reproducible for a given number)"""
    n_envs: int = 64
    env_workers: int = 2
    """processes the tables are split over, each playing its share of every rollout with a
    numpy copy of the actor (0: all in the learner's process); the run is the same either way"""
    n_steps: int = 128
    batch_size: int = 1024
    n_epochs: int = 4
    ent_coef: float = 0.0
    critic_warmup: int = 0
    """learner steps at the start of PPO during which only the value network learns (the
    actor is frozen): a critic that fits the starting policy before its advantages steer it"""
    init_policy: str = ""
    """start the actor from this policy .npz instead of behaviour cloning (read without
    unpickling; its layers must match --net-arch and --activation), e.g. to continue a shipped
    model; the critic starts fresh (see --critic-warmup)"""
    bc_from_init: bool = False
    """with --init-policy: behaviour-clone --bc-teacher starting from that policy instead of
    skipping behaviour cloning (a distillation: expert iteration's step with a search teacher,
    e.g. --bc-teacher ismcts:400:prior=ppo; docs/training.md, "Expert iteration")"""
    total_timesteps: int = 10_000_000
    learning_rate: float = 3e-4
    net_arch: str = "auto"
    """hidden layer sizes of the policy and value networks (comma-separated); "auto": the table
    size's (128,128 at two players, 256,256 at three or more)"""
    bc_teacher: str = "strategic"
    bc_steps: int = 0
    """teacher decisions collected for behaviour cloning (the teacher in the learner's seat);
    0: the table size's number (100,000 at two players, 400,000 at three or more)"""
    bc_epochs: int = 0
    """epochs of behaviour cloning; 0: the table size's number (8 at two players, 10 at more)"""
    eval_every: int = 1_000_000
    final_eval_games: int = 0
    """games per opponent in the final evaluation; 0: follow the budget, one game per 250
    training steps, at least 100 and at most 4000, and at most 1000 when --max-minutes is set
    (a timed run ends within a minute of its budget)"""
    checkpoint_every: int = 0



#: The most games per opponent of an automatic final evaluation (``--final-eval-games 0``) of
#: a run with ``--max-minutes``: it follows the budget, so that the command ends within about a
#: minute of it (1000 games against each of the two default opponents take ~10-40 s on two
#: busy cores).
TIMED_FINAL_EVAL_GAMES = 1000


def final_games(args: Args) -> int:
    """Games per opponent of the final evaluation: ``--final-eval-games``, or with 0 the sb3
    rule (:func:`uno_mk_env.training.args.final_eval_games`, which follows
    ``--total-timesteps``) capped at :data:`TIMED_FINAL_EVAL_GAMES` when ``--max-minutes``
    is set."""
    games = final_eval_games(args)
    if args.final_eval_games or args.max_minutes <= 0:
        return games
    return min(games, TIMED_FINAL_EVAL_GAMES)


#: The defaults that follow the table size: a field's value meaning "the table size's", then
#: its value at two players and at three or more. Two players: the ten-minute recipe; more:
#: the four-player thirty-minute one (docs/training.md, "The fast path"), a wider network and a
#: four times longer imitation of ``strategic``: at four players PPO starts from a clone that
#: already plays about as well as its teacher (0.250 against three ``strategic``, 10,000 games)
#: and improves on it; with the two-player recipe it ended level with the teacher.
TABLE_SIZE_DEFAULTS: dict[str, tuple[Any, Any, Any]] = {
    "net_arch": ("auto", "128,128", "256,256"),
    "bc_steps": (0, 100_000, 400_000),
    "bc_epochs": (0, 8, 10),
}


def table_size_defaults(args: Args) -> Args:
    """``args`` with every field left to the table size (:data:`TABLE_SIZE_DEFAULTS`) set to
    the value of its ``--num-players``."""
    column = 1 if args.num_players <= 2 else 2
    return dataclasses.replace(args, **{
        name: values[column] for name, values in TABLE_SIZE_DEFAULTS.items()
        if getattr(args, name) == values[0]})


def whole_rollouts(args: Args) -> Args:
    rollout = args.n_envs * args.n_steps
    total = math.ceil(args.total_timesteps / rollout) * rollout
    if total != args.total_timesteps:
        print(f"--total-timesteps {args.total_timesteps} rounded up to {total}: whole rollouts "
              f"of {args.n_envs} tables x {args.n_steps} steps", flush=True)
    return dataclasses.replace(args, total_timesteps=total)


# --------------------------------------------------------------------------------- checks
def check_args(args: Args) -> None:
    """Refuses arguments this backend cannot run, in one line, before anything is created or
    started: every value (:func:`uno_mk_env.training.args.check`), then what only the sb3
    backend does, then ``--init-policy``.

    Raises:
        TrainingError: naming the option, its value and what is allowed.
    """
    check(args, rewards=("win", "points", "place", "win_place"))
    if args.reward != "win_place" and args.place_weight != Args.place_weight:
        raise TrainingError(f"--place-weight {args.place_weight}: only --reward win_place uses "
                            f"it (the reward is {args.reward!r})")
    if args.resume:
        raise TrainingError("--resume: not supported by the fast backend (use the sb3 backend)")
    check_training_tables(Tables.of(args))
    if args.bc_from_init and not (args.init_policy and args.bc_teacher):
        raise TrainingError("--bc-from-init: needs --init-policy (the policy the teacher is "
                            "distilled into) and --bc-teacher (the teacher)")
    if args.init_policy:
        initial_actor(args)


def initial_actor(args: Args) -> Layers:
    """The layers of ``--init-policy`` (read by :func:`uno_mk_env.agents.policy_file.load_policy`,
    never unpickled).

    Raises:
        TrainingError: not a policy file, or its shape or activation is not this run's.
    """
    try:
        actor, _ = load_policy(args.init_policy)
    except (OSError, ModelFileError) as e:
        raise TrainingError(f"--init-policy: {e}") from None
    want = [OBS_SIZE, *layer_sizes(args), NUM_ACTIONS]
    shapes = [actor.layers[0][0].shape[0]] + [w.shape[1] for w, _ in actor.layers]
    if shapes != want or actor.activation_name != args.activation:
        raise TrainingError(
            f"--init-policy {args.init_policy}: a {actor.activation_name} MLP of sizes "
            f"{shapes}; this run's --net-arch {args.net_arch} --activation {args.activation} "
            f"needs {want}")
    if actor.scale is None or not np.allclose(actor.scale, OBS_SCALE):
        raise TrainingError(f"--init-policy {args.init_policy}: its input scale is not this "
                            "version's observation scale")
    return [(w, b) for w, b in actor.layers]


def seeds(args: Args) -> dict[str, str]:
    """How every random stream derives from ``--seed``
    (:class:`uno_mk_env.engine.seeding.Stream`)."""
    return {
        "root": str(args.seed),
        "torch (init), minibatch order": "seed",
        "table i's actions (the learner's draws)": f"derive_seed(seed, {Stream.ACTIONS}, i)",
        "table i (deals, seat draws)": "np_random(seed + i)",
        "opponent seat s of table i": "derive_seed(seed, i, s)",
        "behaviour cloning": f"derive_seed(seed, {Stream.CLONING_TEACHER}.."
                             f"{Stream.CLONING_SPLIT})",
        "periodic evaluation vs opponent i": f"derive_seed(seed, {Stream.EVALUATION}, i, 0)",
        "final evaluation": f"derive_seed(seed, {Stream.EVALUATION}, i, 1)",
        "snapshot k": f"derive_seed(seed, {Stream.SNAPSHOT}, k)",
    }


# ---------------------------------------------------------------------------------- train
def train(args: Args, invocation: str | None = None,
          started: float | None = None) -> dict[str, Any]:
    """Trains, evaluates and saves (see the module docstring); returns the summary
    (``run_dir``, ``timesteps``, ``complete``, ``train_seconds``, ``steps_per_second``,
    ``final_eval``, ``best``, ``policy``). ``started``: when the command began on the
    ``time.monotonic()`` clock (:func:`~uno_mk_env.training.progress.process_start`; default
    now), the start of the ``--max-minutes`` budget.

    Raises:
        TrainingError: a refused request (one line; nothing is created): a bad value, an
            output place that cannot be written.
        TrainingDiverged: a loss or the weights became non-finite; the last finite policy is
            the run's ``final.npz`` and ``summary.json`` says when (one line).
    """
    budget = Budget(args.max_minutes, start=started)
    args = table_size_defaults(args)
    check_args(args)
    args = whole_rollouts(args)
    check_outputs(args, shipped_files(args))
    set_thread_policy(args.torch_threads)  # before torch loads: OpenMP reads it once
    with threadpool_limits(limits=1, user_api="blas"):  # BLAS threads thrash on small batches
        return _train(args, invocation, budget)


def _train(args: Args, invocation: str | None, budget: Budget) -> dict[str, Any]:
    # torch (the train extra) loads here, after the thread policy is set
    import torch

    run_name, run_dir = new_run_dir(args)
    random.seed(args.seed)
    torch.manual_seed(args.seed)
    set_thread_policy(args.torch_threads)  # torch's intra-op threads, now that it is loaded
    tables: Any = (ProcessRollouts(Tables.of(args), args.n_envs, args.env_workers)
                   if args.env_workers > 0 else TableRollouts(Tables.of(args), args.n_envs))
    try:
        return _run(args, invocation, run_name, run_dir, tables, budget)
    finally:
        tables.close()


@dataclass
class Learning:
    """How far PPO got: learner steps, the last finite weights and optimizer state (``good``,
    after ``good_steps``; kept if the run diverges), the seconds spent in rollouts and updates,
    whether ``--max-minutes`` stopped it and whether it started (else a divergence was
    behaviour cloning's)."""

    good: tuple[dict[str, Any], dict[str, Any]]
    steps: int = 0
    good_steps: int = 0
    train_seconds: float = 0.0
    timed_out: bool = False
    started: bool = False


def _run(args: Args, invocation: str | None, run_name: str, run_dir: Path, tables: Any,
         budget: Budget) -> dict[str, Any]:
    """Behaviour cloning, the first evaluation, PPO (:func:`_learn`), the final evaluation and
    the outputs; a divergence keeps the last finite policy and ends with
    :class:`TrainingDiverged` once ``summary.json`` is written."""
    # torch (the train extra): these modules import it, after the thread policy is set
    from .network import ActorCritic, actor_layers, load_actor, save_state, snapshot
    from .ppo_update import optimizer

    agent = ActorCritic(layer_sizes(args), args.activation)
    if args.init_policy:
        load_actor(agent, initial_actor(args))
    config: dict[str, Any] = {
        "run_name": run_name, "run_dir": str(run_dir), "backend": "fast",
        "args": dataclasses.asdict(args), "command": command_line(PROG, args),
        "invocation": invocation, "git": source_commit(), "versions": versions(),
        "seeds": seeds(args), "start_timesteps": 0, "resume_sha256": None,
        "observation_size": OBS_SIZE,
        "observation_layout": [[p.name, p.size] for p in OBS_PIECES],
        "policy_kwargs": {"net_arch": {"pi": layer_sizes(args), "vf": layer_sizes(args)},
                          "activation_fn": args.activation,
                          "features_extractor_class": "ScaledObservationExtractor"},
    }
    write_json(run_dir / "config.json", config)
    run = Run(args, run_dir, tables.league, time.time(), budget)
    opt = optimizer(agent, args.learning_rate)
    learning = Learning(good=snapshot(agent, opt))
    diverged: dict[str, Any] | None = None
    try:
        if args.bc_teacher and (args.bc_from_init or not args.init_policy):
            t0 = time.time()
            bc = behaviour_cloning(agent, Tables.of(args), Cloning.of(args),
                                   collect_until=budget.at(Budget.BC_COLLECT_SHARE),
                                   train_until=budget.at(Budget.BC_SHARE))
            bc["seconds"] = round(time.time() - t0, 1)
            config["behaviour_cloning"] = bc
            write_json(run_dir / "config.json", config)
            print(f"behaviour cloning of {args.bc_teacher}: {bc}", flush=True)
            opt = optimizer(agent, args.learning_rate)
            learning.good = snapshot(agent, opt)
        layers = actor_layers(agent)
        run.evaluate(layers, 0, run.games_within(Budget.EVAL_SHARE * budget.seconds,
                                                 args.eval_games, layers))
        _learn(args, agent, opt, tables, run, learning)
    except NonFinite as e:
        agent.load_state_dict(learning.good[0])
        opt.load_state_dict(learning.good[1])
        at = learning.steps + args.n_envs * args.n_steps if learning.started else 0
        diverged = {"reason": str(e), "at_timesteps": at, "kept_timesteps": learning.good_steps}
    steps = learning.good_steps
    complete = steps == args.total_timesteps and not learning.timed_out and diverged is None
    layers = actor_layers(agent)
    final_path = run.policy(layers, "final.npz", steps)
    save_state(run_dir / "final.pt", agent, opt, steps)
    final: list[dict[str, Any]] = []
    if diverged is None:
        games = run.games_within(budget.left() - budget.write_seconds(), final_games(args),
                                 layers)
        final = run.evaluate(layers, steps, games, tag="final_eval")
    summary: dict[str, Any] = {
        "run_dir": str(run_dir), "timesteps": steps, "complete": complete,
        "stopped_by": "diverged" if diverged else "max_minutes" if learning.timed_out
        else "total_timesteps",
        "train_seconds": round(learning.train_seconds, 1),
        "steps_per_second": round(steps / max(learning.train_seconds, 1e-9), 1),
        "final_eval": [{k: r[k] for k in EVAL_COLUMNS if k in r} for r in final],
        "best": run.best,
        "explained_variance": run.last_row["explained_variance"] if run.last_row else None,
        "policy": str(final_path),
    }
    if diverged is not None:
        summary["diverged"] = diverged
    elif args.save_path:
        summary["policy"] = str(ship(args, final_path, config, run, summary, complete))
    write_json(run_dir / "summary.json", summary)
    if diverged is not None:
        what = (f"training diverged at step {diverged['at_timesteps']:,}" if learning.started
                else "behaviour cloning diverged")
        raise TrainingDiverged(
            f"{what} ({diverged['reason']}); "
            f"the last finite policy (step {steps:,}) is {final_path}, and "
            f"{run_dir / 'summary.json'} says so (try a lower "
            f"{'--learning-rate' if learning.started else '--bc-lr'} or --max-grad-norm)")
    return summary


def _learn(args: Args, agent: Any, opt: Any, tables: Any, run: Run,
           learning: Learning) -> None:
    """PPO from the current weights: rollouts, updates, the periodic evaluations, checkpoints
    and snapshots, until ``--total-timesteps`` or the budget's end (less the final
    evaluation's share); ``learning`` follows it.

    Raises:
        NonFinite: the run diverged (``learning`` holds the last finite state).
    """
    # torch (the train extra): these modules import it, after the thread policy is set
    from .network import actor_layers, snapshot
    from .ppo_update import collect, update

    budget = run.budget
    rng = np.random.default_rng(args.seed)
    tables.reset(args.seed)
    per_rollout = args.n_envs * args.n_steps
    num_updates = args.total_timesteps // per_rollout
    next_eval = args.eval_every or math.inf
    next_snapshot = args.snapshot_every or math.inf
    next_checkpoint = args.checkpoint_every or math.inf
    stats: dict[str, list[float]] = {"return": [], "length": [], "place": []}
    lines = RateLines("train", args.total_timesteps, "steps", deadline=budget.end,
                      enabled=args.progress)
    learning.started = True
    for i in range(num_updates):
        t0 = time.time()
        if args.anneal_lr:
            opt.param_groups[0]["lr"] = args.learning_rate * (0.1 + 0.9 * (1 - i / num_updates))
        buf = collect(agent, tables, args, stats)
        adv, returns = buf.advantages(args.gamma, args.gae_lambda)
        losses = update(agent, opt, buf, adv, returns, args, rng,
                        critic_only=learning.steps < args.critic_warmup)
        learning.steps += per_rollout
        learning.good, learning.good_steps = snapshot(agent, opt), learning.steps
        steps, update_seconds = learning.steps, time.time() - t0
        learning.train_seconds += update_seconds
        run.log({"timesteps": steps, "seconds": round(time.time() - run.start, 2),
                 "steps_per_second": round(steps / max(learning.train_seconds, 1e-9), 1),
                 "episodes": len(stats["return"]),
                 "ep_return_mean": float(np.mean(stats["return"][-200:] or [0.0])),
                 "ep_place_mean": float(np.mean(stats["place"][-200:] or [0.0])),
                 "lr": opt.param_groups[0]["lr"], **losses})
        lines.update(steps)
        if steps >= next_eval and steps < args.total_timesteps:
            next_eval += args.eval_every
            if run.eval_seconds(args.eval_games) < budget.left() - final_reserve(args, run):
                run.evaluate(actor_layers(agent), steps, args.eval_games)
        if steps >= next_checkpoint:
            next_checkpoint += args.checkpoint_every
            (run.dir / "checkpoints").mkdir(exist_ok=True)
            run.policy(actor_layers(agent), f"checkpoints/policy_{steps}_steps.npz", steps)
        if steps >= next_snapshot:
            next_snapshot += args.snapshot_every
            run.snapshot(actor_layers(agent), steps)
        # Stop when another update would eat into the final evaluation's time.
        if i < num_updates - 1 and budget.left() < update_seconds + final_reserve(args, run):
            learning.timed_out = True
            return


def final_reserve(args: Args, run: Run) -> float:
    """Seconds kept at the end of the budget: the final evaluation (at the speed measured,
    at most :data:`Budget.EVAL_SHARE` of the budget) and the outputs."""
    budget = run.budget
    return budget.write_seconds() + min(run.eval_seconds(final_games(args)),
                                        Budget.EVAL_SHARE * budget.seconds)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m uno_mk_env.training.ppo_fast``: 0 when trained, 2 with a one-line error when
    the request is refused, 1 when the run failed (it diverged, an env worker died, a file
    could not be written)."""
    started = process_start()
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse(Args, argv, PROG, DESCRIPTION)
    try:
        summary = train(args, invocation=" ".join([PROG, *argv]), started=started)
    except UnoMkError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
