"""Sampling throughput of training: Ray RLlib with 1 and 2 env runners against the
stable-baselines3 path, in one run, plus the per-step costs that say where the time goes.

What is measured (all with an untrained policy, so that every configuration plays alike):

* **RLlib, k env runners** (``uno_mk_env.training.rllib``, pure self-play: every seat is the
  learner, so every env step is a training sample): the sampling phase of a PPO iteration,
  ``synchronous_parallel_sample`` of ``--steps`` env steps from the env runners to the driver
  (episodes shipped included), timed on the driver. Each runner steps ``--envs-per-runner``
  envs.
* **sb3** (``uno_mk_env.training.train_ppo``, its default opponent pool: one learner seat, the
  other seat played inside the env by ``strategic``/``greedy``/``random``): MaskablePPO's
  ``collect_rollouts`` of the same number of learner steps (training samples), with
  ``--envs-per-runner`` envs in one process (``DummyVecEnv``, like one env runner) and in as
  many subprocesses (``SubprocVecEnv``, how the shipped models were trained).
* **Per-step costs** in this process: an env step of the RLlib env (``UnoMultiAgentEnv.step``
  with a uniformly random legal action, observation included), a forward pass of the
  RLModule (batch 1 and the vectorised batch), a learner update (``LearnerGroup.update`` of one
  ``--train-batch-size`` batch with ``--num-epochs`` epochs of ``--minibatch-size``), and the
  bytes that cross the network per env step (the episode data) and per weight broadcast.

Run: ``python -m benchmarks.sampling_throughput [--players 2] [--steps 16000] [--repeat 3]``
(needs the ``rllib`` and ``train`` extras). Each throughput is the best of ``--repeat``
interleaved runs (on a shared machine the best run is the least disturbed); the ratios are to
RLlib with 1 env runner. ``--json PATH`` also writes the figures. A benchmark, not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Callable
from typing import Any

import numpy as np


def _best(values: list[float]) -> float:
    return max(values) if values else float("nan")


# --------------------------------------------------------------------------------- RLlib
def rllib_args(opts: argparse.Namespace, runners: int) -> Any:
    from uno_mk_env.training.rllib import Args

    return Args(num_players=opts.players, num_env_runners=runners,
                envs_per_runner=opts.envs_per_runner, league_size=0, league_prob=0.0,
                train_batch_size=opts.train_batch_size, minibatch_size=opts.minibatch_size,
                num_epochs=opts.num_epochs, seed=opts.seed)


def rllib_sampling(opts: argparse.Namespace, runners: int, learn: bool = False
                   ) -> dict[str, float]:
    """Env steps per second of the sampling phase with ``runners`` env runners; with
    ``learn`` also the learner update time of one batch."""
    from ray.rllib.execution.rollout_ops import synchronous_parallel_sample

    from uno_mk_env.training.rllib import build_config

    algo = build_config(rllib_args(opts, runners), runners).build_algo()
    try:
        group = algo.env_runner_group

        def sample(steps: int) -> tuple[list[Any], float]:
            start = time.perf_counter()
            episodes = synchronous_parallel_sample(worker_set=group, max_env_steps=steps,
                                                   _uses_new_env_runners=True)
            return episodes, time.perf_counter() - start

        sample(max(1000, opts.steps // 8))  # warm-up: actors started, first episodes dealt
        episodes, seconds = sample(opts.steps)
        steps = sum(e.env_steps() for e in episodes)
        out = {"env_steps": steps, "seconds": seconds, "steps_per_s": steps / seconds}
        if learn:
            batch, _ = sample(opts.train_batch_size)
            n = sum(e.env_steps() for e in batch)
            start = time.perf_counter()
            algo.learner_group.update(episodes=batch, num_epochs=opts.num_epochs,
                                      minibatch_size=opts.minibatch_size)
            seconds = time.perf_counter() - start
            out.update(learn_batch=n, learn_seconds=seconds,
                       learn_us_per_sample_epoch=1e6 * seconds / (n * opts.num_epochs))
        return out
    finally:
        algo.stop()


def per_step_costs(opts: argparse.Namespace) -> dict[str, float]:
    """Microseconds per env step, per module forward (batch 1 and the vectorised batch) and
    the sizes of what crosses the network."""
    import torch
    from ray.rllib.core.columns import Columns
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from uno_mk_env.training import rllib

    torch.set_num_threads(1)
    env = rllib.UnoMultiAgentEnv({"num_players": opts.players, "seed": opts.seed})
    rng = np.random.default_rng(opts.seed)
    obs, _ = env.reset(seed=opts.seed)
    observations = []
    steps, start = 0, time.perf_counter()
    while steps < opts.steps:
        (agent, o), = obs.items()
        legal = np.flatnonzero(o["action_mask"])
        if len(observations) < 256:
            observations.append(o)
        obs, _, term, trunc, _ = env.step({agent: int(legal[int(rng.random() * len(legal))])})
        steps += 1
        if term["__all__"] or trunc["__all__"]:
            obs, _ = env.reset()
    env_us = 1e6 * (time.perf_counter() - start) / steps
    space, actions = env.observation_spaces["player_0"], env.action_spaces["player_0"]
    args = rllib_args(opts, 1)
    module = RLModuleSpec(module_class=rllib.MaskedActorCritic, observation_space=space,
                          action_space=actions, model_config={
                              "hidden": [int(h) for h in args.net_arch.split(",")],
                              "activation": args.activation}).build()
    params = sum(p.numel() for p in module.parameters())

    def forward_us(batch_size: int, calls: int = 300) -> float:
        picked = [observations[i % len(observations)] for i in range(batch_size)]
        batch = {Columns.OBS: {
            "observation": torch.as_tensor(np.stack([o["observation"] for o in picked])),
            "action_mask": torch.as_tensor(np.stack([o["action_mask"] for o in picked]))}}
        with torch.no_grad():
            module.forward_exploration(batch)
            start = time.perf_counter()
            for _ in range(calls):
                module.forward_exploration(batch)
        return 1e6 * (time.perf_counter() - start) / calls

    o = observations[0]
    step_bytes = (o["observation"].nbytes + o["action_mask"].nbytes
                  + 8 + 4 + 4 + 4 + 4 + 4)  # action, reward, logp, dist inputs ref, vf, flags
    step_bytes += 4 * actions.n  # action distribution inputs kept for the PPO ratio
    return {
        "env_step_us": env_us,
        "forward_batch1_us": forward_us(1),
        f"forward_batch{opts.envs_per_runner}_us": forward_us(opts.envs_per_runner),
        "module_parameters": params,
        "weights_bytes_per_module": 4 * params,
        "episode_bytes_per_env_step": step_bytes,
    }


# ----------------------------------------------------------------------------------- sb3
def sb3_sampling(opts: argparse.Namespace, vec_env: str) -> dict[str, float]:
    """Learner steps per second of MaskablePPO's ``collect_rollouts`` (the sb3 path's own
    env, opponents and policy)."""
    import dataclasses

    import torch
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    from uno_mk_env.training import train_ppo

    torch.set_num_threads(1)
    n_envs = opts.envs_per_runner
    n_steps = max(8, opts.steps // n_envs)
    args = dataclasses.replace(train_ppo.Args(), num_players=opts.players, n_envs=n_envs,
                               n_steps=n_steps, batch_size=n_steps * n_envs // 4,
                               vec_env=vec_env, seed=opts.seed, progress=False)
    thunks = [train_ppo.make_env(args, rank) for rank in range(n_envs)]
    env = SubprocVecEnv(thunks) if vec_env == "subproc" else DummyVecEnv(thunks)
    env.seed(opts.seed)
    try:
        model = train_ppo.new_model(args, env, {"n_steps": n_steps,
                                                "batch_size": n_steps * n_envs // 4})
        _, callback = model._setup_learn(10 * n_steps * n_envs, None)
        callback.on_training_start(locals(), globals())
        model.collect_rollouts(model.env, callback, model.rollout_buffer, max(8, n_steps // 8))
        start = time.perf_counter()
        model.collect_rollouts(model.env, callback, model.rollout_buffer, n_steps)
        seconds = time.perf_counter() - start
    finally:
        env.close()
    steps = n_steps * n_envs
    return {"env_steps": steps, "seconds": seconds, "steps_per_s": steps / seconds}


# ---------------------------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.sampling_throughput",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--steps", type=int, default=16000,
                        help="env steps sampled per measurement")
    parser.add_argument("--envs-per-runner", type=int, default=8)
    parser.add_argument("--train-batch-size", type=int, default=8000)
    parser.add_argument("--minibatch-size", type=int, default=1000)
    parser.add_argument("--num-epochs", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--skip-sb3", action="store_true")
    parser.add_argument("--json", default="", help="also write the figures to this file")
    opts = parser.parse_args(argv)

    import ray

    os.environ.setdefault("OMP_NUM_THREADS", "1")
    load = os.getloadavg()
    ray.init(num_cpus=max(2, os.cpu_count() or 2), include_dashboard=False,
             logging_level="ERROR")
    runs: dict[str, list[dict[str, float]]] = {}
    cases: list[tuple[str, Callable[[], dict[str, float]]]] = [
        ("rllib, 1 env runner", lambda: rllib_sampling(opts, 1, learn=True)),
        ("rllib, 2 env runners", lambda: rllib_sampling(opts, 2)),
    ]
    if not opts.skip_sb3:
        cases += [("sb3, DummyVecEnv (1 process)", lambda: sb3_sampling(opts, "dummy")),
                  ("sb3, SubprocVecEnv", lambda: sb3_sampling(opts, "subproc"))]
    try:
        for r in range(opts.repeat):
            for name, case in cases:
                result = case()
                runs.setdefault(name, []).append(result)
                print(f"run {r + 1}/{opts.repeat}: {name}: {result['steps_per_s']:,.0f} "
                      "steps/s", flush=True)
        costs = per_step_costs(opts)
    finally:
        ray.shutdown()
    best = {name: _best([x["steps_per_s"] for x in rs]) for name, rs in runs.items()}
    base = best["rllib, 1 env runner"]
    learn = min(x["learn_seconds"] for x in runs["rllib, 1 env runner"])
    learn_us = min(x["learn_us_per_sample_epoch"] for x in runs["rllib, 1 env runner"])
    print(f"\n{opts.players} players, {opts.envs_per_runner} envs per runner / vec env, "
          f"{opts.steps:,} steps per measurement, best of {opts.repeat}; load average before "
          f"the run {load[0]:.2f}, {os.cpu_count()} cores\n")
    print("| sampler | env steps/s | ÷ RLlib 1 runner |")
    print("|---|---|---|")
    for name, value in best.items():
        print(f"| {name} | {value:,.0f} | {value / base:.2f}× |")
    print()
    print(f"learner update, {opts.train_batch_size:,} steps x {opts.num_epochs} epochs of "
          f"{opts.minibatch_size}: {learn:.2f} s ({learn_us:.1f} µs per sample-epoch); sampling "
          f"the same batch with 1 runner: {opts.train_batch_size / base:.2f} s")
    for key, value in costs.items():
        print(f"{key}: {value:,.1f}" if isinstance(value, float) else f"{key}: {value:,}")
    sample_us = 1e6 / base
    e = opts.envs_per_runner
    forward = costs[f"forward_batch{e}_us"] / e
    print(f"RLlib sampling cost per env step (1 runner): {sample_us:.0f} µs = env "
          f"{costs['env_step_us']:.0f} + forward {forward:.0f} (a batch of {e} / {e}) + "
          f"RLlib connectors and episode bookkeeping "
          f"{sample_us - costs['env_step_us'] - forward:.0f}")
    if opts.json:
        with open(opts.json, "w", encoding="utf-8") as f:
            json.dump({"options": vars(opts), "load_average": load, "runs": runs, "best": best,
                       "learn_seconds": learn, "costs": costs}, f, indent=2, default=float)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
