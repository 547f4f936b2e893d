"""The run: connect to Ray, build the algorithm, train on schedule (evaluations, league
snapshots, checkpoints), evaluate at the end and write the outputs; :func:`main` is the command
line. Imports Ray only once the arguments are checked (a missing Ray is one line)."""

from __future__ import annotations

import dataclasses
import math
import signal
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from uno_mk_env.agents.threads import set_thread_policy
from uno_mk_env.engine.seeding import Stream, derive_seed
from uno_mk_env.errors import UnoMkError

from .. import args as _args
from ..args import TrainingDiverged, TrainingError
from ..curves import RLLIB_STEPS, eval_line, evaluate, plot_curve, write_eval_csv
from ..divergence import NonFinite
from ..outputs import copy_file, new_run_dir, write_json
from ..provenance import source_commit
from ..summary import TablePrinter, print_summary
from .args import PROG, Args, check_args, parse_args
from .checkpoints import (
    CHECKPOINT_POLICY,
    export_module,
    read_checkpoint,
    restored_weights_match,
    resume_args,
    save_checkpoint,
)
from .cluster import connect, env_runner_placement, resolve_env_runners
from .league import MAIN, League, set_league, take_snapshot
from .outputs import Outputs, iteration_row, say, versions

__all__ = ["main", "train"]


def train(args: Args, invocation: str | None = None) -> dict[str, Any]:
    """Trains, evaluates and saves (see the module docstring); returns a summary dict whose
    ``policy`` is the final policy ``.npz``.

    Raises:
        TrainingError: a refused request (one line), before anything is written.
    """
    check_args(args)
    args = dataclasses.replace(args, final_eval_games=_args.final_eval_games(args))
    meta = read_checkpoint(args.resume) if args.resume else None
    target = None
    shipped: list[Path] = []
    if args.save_path:
        target = Path(args.save_path)
        if target.suffix != ".npz":
            target = target.with_name(target.name + ".npz")
        stem = target.with_suffix("")
        shipped = [target, stem.with_suffix(".json"), stem.parent / f"{stem.name}_curve.csv",
                   stem.parent / f"{stem.name}_curve.png"]
    _args.check_outputs(args, shipped)
    ray_info = connect(args)
    import ray

    try:
        return _train(args, invocation, meta, target, ray_info)
    finally:
        if ray_info["local"]:
            ray.shutdown()


def _train(args: Args, invocation: str | None, meta: dict[str, Any] | None,
           target: Path | None, ray_info: dict[str, Any]) -> dict[str, Any]:
    # torch and Ray's RLlib (the rllib extra) load here, after the thread policy is set
    import torch

    from .config import build_config

    torch.manual_seed(args.seed)
    set_thread_policy(args.torch_threads)  # torch's intra-op threads, now that it is loaded
    runners = resolve_env_runners(args, ray_info["cpus"])
    run_name, run_dir = new_run_dir(args)
    league, eval_rows = _resumed_league(args, meta)
    config = {
        "run_name": run_name, "run_dir": str(run_dir), "args": dataclasses.asdict(args),
        "command": invocation or _args.command_line(PROG, args),
        "backend": "rllib", "versions": versions(), "git": source_commit(),
        "ray": ray_info, "num_env_runners": runners,
        "resumed_from": str(Path(args.resume).expanduser().resolve()) if meta else None,
    }
    write_json(run_dir / "config.json", config)
    where = (f"a local Ray ({ray_info['cpus']} CPUs)" if ray_info["local"] else
             f"the Ray cluster at {ray_info['address']} ({ray_info['nodes']} node(s), "
             f"{ray_info['cpus']} CPUs)")
    say(f"rllib: {where}; {runners} env runner(s) x {args.envs_per_runner} env(s), "
         f"{args.num_learners or 'local'} learner(s); run {run_dir}")

    algo = build_config(args, runners, league.slots).build_algo()
    outputs = Outputs(run_dir, args.num_players)
    try:
        if meta is not None:
            _restore(algo, args, league, config)
        placement = env_runner_placement(algo)
        config["env_runners"] = placement
        write_json(run_dir / "config.json", config)
        run = _Run(algo, args, run_dir, outputs, league, eval_rows,
                   int(meta.get("timesteps", 0)) if meta else 0)
        start_steps = run.steps
        # --bc-steps 0: no cloning (nor on a resume)
        if args.bc_teacher and args.bc_steps > 0 and meta is None:
            run.diverged = _warm_start(algo, args, run_dir, config)
        iteration, row, result = 0, None, None
        if run.diverged is None:
            if not any(r["timesteps"] == run.steps and r["kind"] == "eval" for r in eval_rows):
                run.run_eval("eval", args.eval_games)
            run.good = run.main_weights()
            iteration, row, result = _train_loop(run)
        steps = run.steps
        train_seconds = time.time() - run.start
        last = run.checkpoint() if run.diverged is None else None
        final = run.export(run_dir / "final.npz")
        final_rows = run.run_eval("final_eval", args.final_eval_games) if (
            run.diverged is None) else []
        summary = {
            "run_dir": str(run_dir), "timesteps": steps,
            "checkpoint": str(last) if last else None, "policy": str(final),
            # False when --max-minutes ended the run before --total-timesteps
            "complete": steps >= args.total_timesteps and run.diverged is None,
            "stopped_by": "diverged" if run.diverged else "total_timesteps"
            if steps >= args.total_timesteps else "max_minutes",
            "train_seconds": round(train_seconds, 1),
            "steps_per_second": round((steps - start_steps) / max(train_seconds, 1e-9), 1),
            "checked_actions": row["checked_actions"] if row is not None else 0,
            "masked_actions": row["masked_actions"] if row is not None else 0,
            "ray": ray_info, "num_env_runners": runners, "env_runners": placement,
            "league": dataclasses.asdict(league),
            "module_steps": _module_steps(result),
            "resumed_from": config["resumed_from"],
            "resumed_weights_match": config.get("resumed_weights_match"),
            "final_eval": [{k: r[k] for k in r if k != "result"} for r in final_rows],
        }
        if run.diverged is not None:
            summary["diverged"] = run.diverged
            write_json(run_dir / "summary.json", summary)
            raise TrainingDiverged(
                f"{'training' if run.diverged['at_timesteps'] else 'behaviour cloning'} "
                f"diverged ({run.diverged['reason']}); the last finite policy (step {steps:,}) "
                f"is {final}, and {run_dir / 'summary.json'} says so (try a lower "
                "--learning-rate, --bc-lr or --grad-clip)")
        write_json(run_dir / "summary.json", summary)
        if target is not None:
            summary["policy"] = str(_ship(run, target, config, summary))
        return summary
    finally:
        outputs.close()
        algo.stop()


def _resumed_league(args: Args, meta: dict[str, Any] | None
                    ) -> tuple[League, list[dict[str, Any]]]:
    """The league and the evaluation rows of the checkpoint ``meta`` (empty ones without)."""
    league = League.from_checkpoint(args.league_size, meta)
    if meta is None:
        return league, []
    eval_rows = [r for r in meta.get("eval_rows", [])
                 if int(r["timesteps"]) <= int(meta.get("timesteps", 0))]
    return league, eval_rows


def _restore(algo: Any, args: Args, league: League, config: dict[str, Any]) -> None:
    """Restores the checkpoint of ``--resume`` and checks the restored learner against its
    ``policy.npz`` (``config["resumed_weights_match"]``).

    Raises:
        TrainingError: the restored weights are not the checkpoint's.
    """
    source = Path(args.resume).expanduser().resolve()
    algo.restore_from_path(str(source))
    set_league(algo, league.slots)
    config["resumed_weights_match"] = restored_weights_match(
        algo.learner_group.get_weights([MAIN])[MAIN], source / CHECKPOINT_POLICY)
    if config["resumed_weights_match"] is False:
        raise TrainingError(f"--resume {args.resume}: the restored learner's weights "
                            f"differ from the checkpoint's {CHECKPOINT_POLICY}")


def _warm_start(algo: Any, args: Args, run_dir: Path, config: dict[str, Any]
                ) -> dict[str, Any] | None:
    """Behaviour cloning of ``--bc-teacher`` before PPO, reported in ``config.json``;
    ``None``, or how it diverged (``main`` keeps its weights)."""
    from .config import behaviour_cloning_warm_start  # Ray (the rllib extra)

    t0 = time.time()
    say(f"behaviour cloning of {args.bc_teacher}: {args.bc_steps:,} decisions, "
         f"{args.bc_epochs} epochs")
    try:
        bc = behaviour_cloning_warm_start(algo, args)
    except NonFinite as e:
        return {"reason": str(e), "at_timesteps": 0, "kept_timesteps": 0}
    bc["seconds"] = round(time.time() - t0, 1)
    config["behaviour_cloning"] = bc
    write_json(run_dir / "config.json", config)
    say(f"behaviour cloning: {bc}")
    return None


class _Run:
    """A run's learner and what it writes as it trains: ``steps`` (env steps so far),
    ``eval_rows`` (every evaluation, those of a resumed checkpoint first), ``best`` and
    ``latest`` (the win rate against the last ``--eval-opponents`` agent at the best and at the
    latest evaluation), ``start`` (the time training started), the last finite weights of
    ``main`` (``good``, after ``good_steps``) and how the run diverged (``diverged``, or
    ``None``)."""

    def __init__(self, algo: Any, args: Args, run_dir: Path, outputs: Outputs,
                 league: League, eval_rows: list[dict[str, Any]], steps: int) -> None:
        self.algo = algo
        self.args = args
        self.run_dir = run_dir
        self.outputs = outputs
        self.league = league
        self.eval_rows = eval_rows
        self.start = time.time()
        self.steps = steps
        self.best = max((r["win_rate"] for r in eval_rows if r["kind"] == "eval"
                         and r["opponent"] == _args.specs(args.eval_opponents)[-1]),
                        default=-1.0)
        self.latest = -1.0
        self.good: dict[str, Any] | None = None
        self.good_steps = steps
        self.diverged: dict[str, Any] | None = None

    def main_weights(self) -> dict[str, Any]:
        return self.algo.learner_group.get_weights([MAIN])[MAIN]

    def keep_finite(self, result: dict[str, Any]) -> bool:
        """After a training iteration: keeps ``main``'s weights as the last finite ones and
        returns True, or, when they or the iteration's loss are not finite, gives the learner
        and the env runners the last finite ones back, records :attr:`diverged` and returns
        False."""
        weights = self.main_weights()
        loss = (result.get("learners") or {}).get(MAIN, {}).get("total_loss")
        finite = all(np.isfinite(np.asarray(v)).all() for v in weights.values())
        if finite and (loss is None or math.isfinite(float(loss))):
            self.good, self.good_steps = weights, self.steps
            return True
        self.diverged = {"reason": "weights not finite" if not finite
                         else f"a non-finite loss ({float(loss)})",
                         "at_timesteps": self.steps, "kept_timesteps": self.good_steps}
        self.algo.learner_group.set_weights({MAIN: self.good})
        self.algo.env_runner_group.sync_weights(
            from_worker_or_learner_group=self.algo.learner_group, policies=[MAIN],
            inference_only=True, timeout_seconds=60.0)
        self.steps = self.good_steps
        return False

    def export(self, path: Path) -> Path:
        args = self.args
        return export_module(self.main_weights(), args.activation, path, provenance={
            "timesteps": self.steps, "run_dir": str(self.run_dir), "seed": args.seed,
            "num_players": args.num_players})

    def run_eval(self, tag: str, games: int) -> list[dict[str, Any]]:
        args = self.args
        started = time.time()
        path = self.export(self.run_dir / "eval_policy.npz")
        rows = []
        for i, opponent in enumerate(_args.specs(args.eval_opponents)):
            # The same deals at every evaluation (common random numbers).
            r = evaluate(str(path), opponent, args.num_players, games,
                         seed=derive_seed(args.seed, Stream.EVALUATION, i,
                                          int(tag == "final_eval")),
                         workers=args.eval_workers)
            del r["result"]
            r.update(timesteps=self.steps, kind=tag, wall_s=round(time.time() - self.start, 1))
            rows.append(r)
        self.eval_rows.extend(rows)
        self.outputs.evals(rows, self.eval_rows)
        self.latest = rows[-1]["win_rate"]
        if tag == "eval" and self.latest > self.best:
            self.best = self.latest
            copy_file(path, self.run_dir / "best.npz")
        say(eval_line(tag, self.steps, rows, time.time() - started))
        return rows

    def snapshot(self) -> None:
        args, league = self.args, self.league
        # Only a learner at least as strong as at the previous snapshot joins.
        if args.league_size and (not args.eval_every or self.latest >= league.score):
            league.score = self.latest
            slot = take_snapshot(self.algo, league, self.steps)
            say(f"league: snapshot of main at {self.steps:,} env steps -> {slot} "
                 f"({len(league.slots)}/{args.league_size} slots)")

    def checkpoint(self) -> Path:
        steps, run_dir = self.steps, self.run_dir
        return save_checkpoint(self.algo, run_dir, steps, {
            "args": dataclasses.asdict(self.args), "run_dir": str(run_dir),
            "league": dataclasses.asdict(self.league), "eval_rows": self.eval_rows,
            "checkpoint": str(run_dir / "checkpoints" / f"{steps:09d}"),
        }, self.args.activation)


def _first_due(steps: int, every: int) -> int | None:
    """When an event every ``every`` env steps (0: never) is first due after ``steps``."""
    return steps + every if every else None


def _due(next_at: int | None, steps: int, every: int) -> tuple[bool, int | None]:
    """Whether an event every ``every`` env steps, next due at ``next_at`` (``None``: never),
    is due at ``steps``, and when it is due next."""
    if next_at is None or steps < next_at:
        return False, next_at
    while next_at <= steps:
        next_at += every
    return True, next_at


def _train_loop(run: _Run) -> tuple[int, dict[str, Any] | None, dict[str, Any] | None]:
    """Trains until ``--total-timesteps`` (or ``--max-minutes``), evaluating, taking league
    snapshots and checkpoints on schedule; returns the number of iterations, the last one's
    ``progress.csv`` row and its result (``None`` without iterations)."""
    args, algo = run.args, run.algo
    next_eval = _first_due(run.steps, args.eval_every)
    next_snapshot = _first_due(run.steps, args.snapshot_every)
    next_checkpoint = _first_due(run.steps, args.checkpoint_every)
    iteration = 0
    row = result = None
    last_time, last_steps = time.time(), run.steps
    while run.steps < args.total_timesteps:
        result = algo.train()
        iteration += 1
        now = time.time()
        steps = run.steps = int(result["env_runners"]["num_env_steps_sampled_lifetime"])
        if not run.keep_finite(result):
            say(f"diverged at {steps:,} env steps: {run.diverged}")
            break
        rate = (steps - last_steps) / max(float(result.get("time_this_iter_s") or 0.0)
                                          or now - last_time, 1e-9)
        last_time, last_steps = now, steps
        row = iteration_row(result, iteration, now - run.start, rate, run.league)
        run.outputs.progress(row)
        if row["masked_actions"]:
            raise RuntimeError(f"{row['masked_actions']} masked actions were taken (of "
                               f"{row['checked_actions']} checked): the action mask was "
                               "not honoured")
        if args.progress:
            say(_progress_line(args, iteration, steps, rate, row, run.league))
        due, next_eval = _due(next_eval, steps, args.eval_every)
        if due:
            run.run_eval("eval", args.eval_games)
        due, next_snapshot = _due(next_snapshot, steps, args.snapshot_every)
        if due:
            run.snapshot()
        due, next_checkpoint = _due(next_checkpoint, steps, args.checkpoint_every)
        if due:
            say(f"checkpoint: {run.checkpoint()}")
        if args.max_minutes and now - run.start > 60 * args.max_minutes:
            say(f"--max-minutes {args.max_minutes}: stopping at {steps:,} env steps")
            break
    return iteration, row, result


def _progress_line(args: Args, iteration: int, steps: int, rate: float, row: dict[str, Any],
                   league: League) -> str:
    """The line printed after a training iteration (with ``--progress``)."""
    return (f"iter {iteration} | {steps:,}/{args.total_timesteps:,} env steps | "
            f"{rate:,.0f} steps/s (sample {row['sample_s'] or 0:.1f} s, learn "
            f"{row['learn_s'] or 0:.1f} s) | entropy {row['entropy'] or 0:.3f} "
            f"| vf_ev {row['vf_explained_var'] or 0:.2f} | masked "
            f"{row['masked_actions']}/{row['checked_actions']:,} | league "
            f"{len(league.slots)}/{args.league_size}")


def _module_steps(result: dict[str, Any] | None) -> dict[str, int]:
    """The env steps of each module from the last ``Algorithm.train()`` result (none without
    one)."""
    if result is None:
        return {}
    return {str(k): int(v) for k, v in (result["env_runners"].get(
        "num_module_steps_sampled_lifetime") or {}).items()}


def _ship(run: _Run, target: Path, config: dict[str, Any], summary: dict[str, Any]) -> Path:
    """Writes the final policy to ``--save-path`` with its ``.json`` provenance and its curve
    (``.csv`` and ``.png``); returns the policy."""
    args = run.args
    shipped = export_module(run.main_weights(), args.activation, target, provenance={
        "timesteps": run.steps, "seed": args.seed, "num_players": args.num_players,
        "commit": config["git"].get("commit")})
    stem = target.with_suffix("")
    info = {**config, "numpy_policy": shipped.name, "timesteps": run.steps,
            "complete": summary["complete"], "summary": summary}
    write_json(stem.with_suffix(".json"), info)
    write_eval_csv(run.eval_rows, stem.parent / f"{stem.name}_curve.csv")
    plot_curve(run.eval_rows, args.num_players, stem.parent / f"{stem.name}_curve.png",
               f"{target.name}: {args.num_players} players, seed {args.seed} (RLlib)",
               steps_label=RLLIB_STEPS)
    return shipped


def main(argv: Sequence[str] | None = None, table: TablePrinter | None = None) -> int:
    """``uno-mk train --backend rllib`` / ``python -m uno_mk_env.training.rllib``: 0 when
    trained (a summary table drawn by ``table``, plain text by default, then the last line
    ``agent: ppo:<policy .npz>``), 2 with a one-line error when the request is refused."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(argv)
    set_thread_policy(args.torch_threads)  # before torch is imported
    # SIGTERM ends the run through the finally blocks (the algorithm and a local Ray stopped).
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    try:
        if args.resume:
            args = resume_args(args, _args.given_fields(Args, argv))
        summary = train(args, invocation=" ".join([PROG, *argv]))
    except UnoMkError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return e.exit_code
    finally:
        signal.signal(signal.SIGTERM, previous)
    print_summary(summary, sys.stdout, table)
    print(f"agent: ppo:{summary['policy']}", flush=True)
    return 0

