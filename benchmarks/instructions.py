"""CPU instructions per AEC step under callgrind: the machine-independent cost of the env loop,
for this checkout and, to compare, other checkouts of the project (e.g. a ``git worktree`` of an
earlier commit).

    python -m benchmarks.instructions                          # this checkout
    git worktree add /tmp/before 190b3b9
    python -m benchmarks.instructions --other /tmp/before      # ratio to that checkout

The loop is :mod:`benchmarks.env_speed`'s (2 players, uniform over the mask, seeded), run once
for ``--short`` and once for ``--long`` steps in a fresh interpreter under ``valgrind
--tool=callgrind`` with ``PYTHONHASHSEED=0``; the difference divided by the extra steps is the
cost of a step with start-up left out. Each checkout's ``uno_mk_env`` is imported from its own
folder (``PYTHONPATH``). Needs valgrind.

Instruction counts do not depend on the machine's load, but they are not exactly repeatable:
object addresses feed hashing and allocation, so the same loop on the same commit moves by a few
per cent between runs. Each figure is therefore the median of ``--repeats`` runs, the checkouts
interleaved run by run, printed with its spread (lowest to highest); compare two checkouts by the
ratio of medians and read it against that spread.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

LOOP = """
import sys
import numpy as np
from uno_mk_env import uno_mario_kart_v0
steps, kind = int(sys.argv[1]), sys.argv[2]
env = (uno_mario_kart_v0.raw_env if kind == "raw_env" else uno_mario_kart_v0.env)(num_players=2)
env.reset(seed=0)
rng = np.random.default_rng(0)
n = 0
while n < steps:
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, info = env.last()
        if terminated or truncated:
            action = None
        else:
            legal = np.flatnonzero(obs["action_mask"])
            action = int(legal[int(rng.random() * len(legal))])
        env.step(action)
        n += 1
        if n >= steps:
            break
    else:
        env.reset()
"""


def instructions(checkout: Path, kind: str, steps: int) -> int:
    """Instructions callgrind counts for ``steps`` steps of the loop (start-up included)."""
    env = {**os.environ, "PYTHONPATH": str(checkout), "PYTHONHASHSEED": "0"}
    proc = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, "-c",
         LOOP, str(steps), kind], env=env, capture_output=True, text=True, check=True)
    return int(re.search(r"Collected : (\d+)", proc.stderr).group(1))


def per_step(checkout: Path, kind: str, short: int, long: int) -> float:
    return (instructions(checkout, kind, long) - instructions(checkout, kind, short)) / (
        long - short)


def _summary(values: list[float]) -> str:
    mid = statistics.median(values)
    return (f"{mid / 1000:.1f}k (spread {min(values) / 1000:.1f}k-{max(values) / 1000:.1f}k, "
            f"{(max(values) - min(values)) / mid:.1%} of the median, {len(values)} runs)")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--other", type=Path, action="append", default=[],
                        help="another checkout to measure and compare with (repeatable)")
    parser.add_argument("--short", type=int, default=2_000)
    parser.add_argument("--long", type=int, default=12_000)
    parser.add_argument("--repeats", type=int, default=5,
                        help="runs per checkout, interleaved; the median is reported")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    if shutil.which("valgrind") is None:
        parser.error("needs valgrind (apt-get install valgrind)")
    for path in args.other:
        if not (path / "uno_mk_env" / "__init__.py").is_file():
            parser.error(f"--other {str(path)!r} is not a checkout of this project")
    checkouts = [ROOT, *args.other]
    for kind in ("raw_env", "env()"):
        runs: list[list[float]] = [[] for _ in checkouts]
        for _ in range(args.repeats):
            for i, path in enumerate(checkouts):
                runs[i].append(per_step(path, kind, args.short, args.long))
        ours = statistics.median(runs[0])
        print(f"{kind}, 2 players, instructions per step: {_summary(runs[0])} (this checkout)")
        for path, theirs in zip(checkouts[1:], runs[1:]):
            print(f"{kind}, 2 players, instructions per step: {_summary(theirs)} ({path}); "
                  f"this checkout / that = {ours / statistics.median(theirs):.3f}")

if __name__ == "__main__":
    main()
