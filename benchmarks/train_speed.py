"""End-to-end training throughput: learner steps per second, updates included, of today's
default (``uno-mk train --num-players 2``: sb3 MaskablePPO, 2 envs in subprocesses, 1024 steps
per env per rollout, 10 epochs of minibatches of 512) against the fast path
(:mod:`uno_mk_env.training.ppo_fast` on the batched vector env :mod:`uno_mk_env.envs.vector`), side
by side in one run: the contenders take turns (``--repeats`` rounds, interleaved, so that a
change of load on the machine hits each of them alike) and the table gives each one's median
with its spread (min-max).

::

    python benchmarks/train_speed.py [--steps 16384] [--repeats 3] [--out benchmarks/results]

Contenders (each at the same opponents: ``strategic,greedy,random`` weighted 0.45/0.45/0.1,
self-play probability 0.2, one snapshot of the learner in the league: ``models/ppo_2p.npz``):

* ``sb3 default``: the 0.6.4 default configuration, built as ``train_ppo`` builds it;
* ``sb3 + vector env``: the same MaskablePPO on :class:`~uno_mk_env.training.vector_envs.
  SB3VectorEnv` (64 tables in one process, 32 steps each per rollout: the same 2048-step
  rollout and update), to tell sb3's own rollout loop from the environment;
* ``fast``: ``ppo_fast``'s defaults (64 tables x 64 steps per rollout, 4 epochs of minibatches
  of 1024, the tables split over 2 worker processes that play each rollout whole, the update on
  2 torch threads); ``fast (in process)``: the same with every table in the learner's process
  (``--env-workers 0``);
* with ``--puffer-python`` (an interpreter with ``pufferlib`` or ``pufferlib-core`` 3
  installed): env steps only, no learner (64 tables, the first legal action, one
  ``strategic`` opponent) of this env under PufferLib's ``Serial`` and ``Multiprocessing``
  (2 workers) vectorisation (:func:`puffer_peer`), and the same work on the vector env
  (:func:`vector_env_steps`).

PufferLib: ``pufferlib`` 3.0.0 is a source distribution that builds its extensions on
install; ``pufferlib-core`` (3.0.23) is pure Python but requires torch, which pip resolves to a
CUDA build (gigabytes). What works here, without touching the project's environment::

    python3 -m venv /tmp/pvenv && /tmp/pvenv/bin/pip install --no-deps pufferlib-core
    echo 'import site; site.addsitedir("'$PWD'/.venv/lib/python3.11/site-packages")' \
        > /tmp/pvenv/lib/python3.11/site-packages/zz_project.pth
    python benchmarks/train_speed.py --puffer-python /tmp/pvenv/bin/python

(pufferlib-core first, then this project's numpy 2.4, gymnasium 1.2.2 and torch 2.13).

Only training is timed (rollouts and updates; not evaluations, which both backends run every
``--eval-every`` steps, nor the process start). The time per step includes the policy forward
pass, the opponents, the environment, the storage and the update. Writes ``train_speed.csv``
and ``train_speed.md``.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

SNAPSHOT = "models/ppo_2p.npz"
#: The fast contenders as measured (the 0.6.4 default's opponent pool, 64 x 64-step rollouts),
#: pinned: ``uno-mk train``'s fast defaults are the ten-minute recipe (strategic only, no
#: self-play, 128-step rollouts), docs/training.md.
FAST_AS_MEASURED: dict[str, Any] = dict(
    opponents="strategic,greedy,random", opponent_weights="0.45,0.45,0.1", self_play_prob=0.2,
    n_steps=64, ent_coef=0.01, bc_teacher="", net_arch="128,128")


def cpu_seconds(pids: list[int]) -> float:
    """CPU seconds (user + system) used so far by this process and the processes ``pids``."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = time.process_time()
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) / ticks  # utime, stime
    return total


def sb3_default(steps: int, seed: int) -> tuple[float, float]:
    """Wall and CPU seconds of ``model.learn(steps)`` for the default sb3 configuration (the CPU
    of its two env processes included)."""
    import numpy as np
    import torch
    from stable_baselines3.common.vec_env import SubprocVecEnv

    from uno_mk_env.training import train_ppo as T

    args = dataclasses.replace(T.Args(), num_players=2, seed=seed, progress=False)
    np.random.seed(seed)  # noqa: NPY002 - as train_ppo (SB3's buffer)
    torch.manual_seed(seed)
    torch.set_num_threads(1)
    torch.distributions.Distribution.set_default_validate_args(False)
    venv = SubprocVecEnv([T.make_env(args, rank) for rank in range(args.n_envs)])
    venv.seed(seed)
    venv.env_method("add_snapshot", SNAPSHOT, 1)
    model = T.new_model(args, venv, _sb3_hyper(T, args))
    pids = [p.pid for p in venv.processes]
    t, c = time.perf_counter(), cpu_seconds(pids)
    model.learn(steps)
    seconds, cpu = time.perf_counter() - t, cpu_seconds(pids) - c
    venv.close()
    return seconds, cpu


def _sb3_hyper(T: Any, args: Any) -> dict[str, Any]:
    return dict(learning_rate=T.learning_rate(args), n_steps=args.n_steps,
                batch_size=args.batch_size, n_epochs=args.n_epochs, gamma=args.gamma,
                gae_lambda=args.gae_lambda, clip_range=args.clip_range, ent_coef=args.ent_coef,
                vf_coef=args.vf_coef, max_grad_norm=args.max_grad_norm, verbose=0)


def sb3_vector(steps: int, seed: int) -> tuple[float, float]:
    """Wall and CPU seconds of ``model.learn(steps)``: the default MaskablePPO on the vector
    env adapter."""
    import torch

    from uno_mk_env.training import train_ppo as T
    from uno_mk_env.training.envs import Tables
    from uno_mk_env.training.ppo_fast import Args as FastArgs
    from uno_mk_env.training.sb3_vector import SB3VectorEnv
    from uno_mk_env.training.vector_envs import make_vector_training_env

    args = dataclasses.replace(T.Args(), num_players=2, seed=seed, n_envs=64, n_steps=32,
                               progress=False)
    torch.manual_seed(seed)
    torch.set_num_threads(1)
    torch.distributions.Distribution.set_default_validate_args(False)
    fast = dataclasses.replace(FastArgs(), seed=seed, **FAST_AS_MEASURED)
    vector, league = make_vector_training_env(Tables.of(fast), args.n_envs)
    venv = SB3VectorEnv(vector, league)
    venv.seed(seed)
    venv.env_method("add_snapshot", SNAPSHOT, 1)
    model = T.new_model(args, venv, _sb3_hyper(T, args))
    t, c = time.perf_counter(), time.process_time()
    model.learn(steps)
    return time.perf_counter() - t, time.process_time() - c


def fast(steps: int, seed: int, workers: int = 2) -> tuple[float, float]:
    """Wall and CPU seconds of ``ppo_fast``'s rollouts and updates for ``steps`` learner steps
    (whole rollouts); the tables in ``workers`` processes (0: in this one)."""
    import numpy as np
    import torch

    from uno_mk_env.training import ppo_fast as F
    from uno_mk_env.training.args import layer_sizes
    from uno_mk_env.training.envs import Tables
    from uno_mk_env.training.network import ActorCritic
    from uno_mk_env.training.ppo_update import collect, optimizer, update
    from uno_mk_env.training.rollouts import ProcessRollouts, TableRollouts

    args = dataclasses.replace(F.Args(), seed=seed, env_workers=workers, **FAST_AS_MEASURED)
    torch.manual_seed(seed)
    torch.set_num_threads(args.torch_threads)
    tables: Any = (ProcessRollouts(Tables.of(args), args.n_envs, workers) if workers
                   else TableRollouts(Tables.of(args), args.n_envs))
    pids = [p.pid for p in getattr(tables, "_procs", [])]
    tables.league.add(SNAPSHOT, 1)  # (waits until the workers are up)
    agent = ActorCritic(layer_sizes(args), args.activation)
    opt = optimizer(agent, args.learning_rate)
    rng = np.random.default_rng(seed)
    stats: dict[str, list[float]] = {"return": [], "length": [], "place": []}
    t, c = time.perf_counter(), cpu_seconds(pids)
    tables.reset(seed)
    for _ in range(max(1, steps // (args.n_envs * args.n_steps))):
        buf = collect(agent, tables, args, stats)
        adv, returns = buf.advantages(args.gamma, args.gae_lambda)
        update(agent, opt, buf, adv, returns, args, rng)
    seconds, cpu = time.perf_counter() - t, cpu_seconds(pids) - c
    tables.close()
    return seconds, cpu


#: The peers' common work: 64 tables, the learner plays its first legal action (no policy,
#: no update), one ``strategic`` opponent; only the vectorisation differs.
PUFFER_SCRIPT = r"""
import sys, time, numpy as np, gymnasium
import pufferlib.emulation, pufferlib.vector
from uno_mk_env.envs.gym_env import UnoMarioKartGymEnv
from uno_mk_env.agents.base import build_agent
class FirstLegal(gymnasium.Wrapper):
    def step(self, action):
        legal = np.flatnonzero(self.env.action_masks())
        return self.env.step(int(legal[int(action) % len(legal)]))
def make(*a, buf=None, seed=0, **k):
    env = FirstLegal(UnoMarioKartGymEnv(2, opponents=build_agent("strategic", seed=1)))
    return pufferlib.emulation.GymnasiumPufferEnv(env=env, buf=buf, seed=seed)
steps, n, backend = int(sys.argv[1]), 64, sys.argv[2]
kw = dict(num_workers=2, batch_size=n) if backend == "Multiprocessing" else {}
vecenv = pufferlib.vector.make(make, num_envs=n, backend=getattr(pufferlib.vector, backend), **kw)
vecenv.reset(seed=1)
t, c = time.perf_counter(), time.process_time()
for _ in range(steps // n):
    vecenv.step(np.zeros(n, np.int64))
print(time.perf_counter() - t, time.process_time() - c)
vecenv.close()
"""


def puffer_peer(python: str, steps: int, backend: str) -> tuple[float, float]:
    """Wall and CPU seconds of ``steps`` env steps of this env (the Gymnasium wrapper in
    PufferLib's emulation layer) under PufferLib's ``backend`` vectorisation, run by the
    interpreter ``python`` (which has pufferlib and this package); env steps only (see
    :data:`PUFFER_SCRIPT`). The CPU of Multiprocessing's workers is not counted."""
    out = subprocess.run([python, "-c", PUFFER_SCRIPT, str(steps), backend],
                         capture_output=True, text=True, check=True, timeout=1800)
    wall, cpu = out.stdout.strip().splitlines()[-1].split()
    return float(wall), float(cpu)


def vector_env_steps(steps: int, seed: int) -> tuple[float, float]:
    """The same work as :data:`PUFFER_SCRIPT` on :class:`~uno_mk_env.envs.vector.
    UnoMarioKartVectorEnv` (env steps only, in process)."""
    import numpy as np

    from uno_mk_env.agents.base import build_agent
    from uno_mk_env.envs.vector import UnoMarioKartVectorEnv

    venv = UnoMarioKartVectorEnv(64, 2, opponents=lambda i: build_agent("strategic", seed=1))
    venv.reset(seed=seed)
    t, c = time.perf_counter(), time.process_time()
    for _ in range(steps // 64):
        venv.step(np.argmax(venv.action_masks(), axis=1))
    return time.perf_counter() - t, time.process_time() - c


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=16384,
                        help="learner steps per measurement (a multiple of 4096)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--contenders",
                        default="sb3 default,sb3 + vector env,fast,fast (in process)")
    parser.add_argument("--puffer-python", default="",
                        help="an interpreter with pufferlib installed (adds it as a peer)")
    parser.add_argument("--out", default="benchmarks/results")
    a = parser.parse_args()
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")
    runners: dict[str, Callable[[int, int], tuple[float, float]]] = {
        "sb3 default": sb3_default, "sb3 + vector env": sb3_vector, "fast": fast,
        "fast (in process)": lambda n, seed: fast(n, seed, workers=0)}
    names = [x.strip() for x in a.contenders.split(",") if x.strip()]
    if a.puffer_python:
        runners["env steps only: vector env"] = vector_env_steps
        for backend in ("Serial", "Multiprocessing"):
            name = f"env steps only: pufferlib {backend}"
            runners[name] = lambda n, _, b=backend: puffer_peer(a.puffer_python, n, b)
        names += ["env steps only: vector env", "env steps only: pufferlib Serial",
                  "env steps only: pufferlib Multiprocessing"]
    rows = []
    for r in range(a.repeats):
        for name in names:
            seconds, cpu = runners[name](a.steps, a.seed + r)
            rows.append({"repeat": r, "contender": name, "steps": a.steps,
                         "seconds": round(seconds, 2), "cpu_seconds": round(cpu, 2),
                         "steps_per_second": round(a.steps / seconds, 1),
                         "steps_per_cpu_second": round(a.steps / cpu, 1),
                         "load_average": round(os.getloadavg()[0], 2)})
            print(rows[-1], flush=True)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    with (out / "train_speed.csv").open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    base = statistics.median(r["steps_per_second"] for r in rows
                             if r["contender"] == names[0])
    base_cpu = statistics.median(r["steps_per_cpu_second"] for r in rows
                                 if r["contender"] == names[0])
    loads = [r["load_average"] for r in rows]
    lines = [f"{a.steps:,} learner steps per measurement, {a.repeats} interleaved repeats "
             f"(python {sys.version.split()[0]}, {os.cpu_count()} cores, 1-min load average "
             f"{min(loads):.1f}-{max(loads):.1f}); median [min, max]. Wall: learner steps per "
             "second of elapsed time; CPU: per CPU-second of every process of the contender.",
             "", f"| contender | steps/s (wall) | × {names[0]} | steps per CPU-s | "
             f"× {names[0]} |", "|---|---:|---:|---:|---:|"]
    for name in names:
        v = [r["steps_per_second"] for r in rows if r["contender"] == name]
        u = [r["steps_per_cpu_second"] for r in rows if r["contender"] == name]
        med, med_u = statistics.median(v), statistics.median(u)
        lines.append(f"| {name} | {med:,.0f} [{min(v):,.0f}, {max(v):,.0f}] | "
                     f"{med / base:.2f} | {med_u:,.0f} [{min(u):,.0f}, {max(u):,.0f}] | "
                     f"{med_u / base_cpu:.2f} |")
    text = "\n".join(lines) + "\n"
    (out / "train_speed.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
