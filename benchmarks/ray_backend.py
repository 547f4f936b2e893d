"""Tournament throughput (games per second) on the ``ray`` backend beside the ``local`` process
pool, at 1 and 2 workers (docs/evaluation.md, "Running on a Ray cluster").

The same seeded tournament is played on each backend and worker count; its records must be
equal (checked here). The clock runs around :func:`run_tournament` as a whole, so Ray's start
(a local Ray is started for each run unless ``--address``/``RAY_ADDRESS`` names a running
cluster) and model shipping are included, as a user sees them; ``--warm`` connects once first
and reports the steady rate of an already running Ray.

    python -m benchmarks.ray_backend --games 2000 --agents ppo:ppo_2p,strategic
    python -m benchmarks.ray_backend --warm --csv results/ray_backend.csv

A benchmark, not a test: the figures depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import contextlib
import time
from collections.abc import Iterator
from typing import Any

from uno_mk_env.evaluation.backends import ray_session
from uno_mk_env.evaluation.tournament import run_tournament
from uno_mk_env.files import append_csv_row

FIELDS = ["backend", "workers", "games", "seconds", "games_per_s", "warm"]


def measure(agents: list[str], games: int, backend: str, workers: int,
            address: str | None = None) -> tuple[float, Any]:
    """Seconds (wall clock) of one tournament, and its result."""
    start = time.perf_counter()
    result = run_tournament(agents, len(agents), games, seed=1, workers=workers,
                            backend=backend, address=address)
    return time.perf_counter() - start, result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--agents", default="ppo:ppo_2p,strategic")
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--address", help="a running Ray cluster (default: RAY_ADDRESS, else "
                        "a local Ray per run)")
    parser.add_argument("--warm", action="store_true",
                        help="connect to Ray once for all runs (its start not timed)")
    parser.add_argument("--csv", help="append the rows to this CSV file")
    args = parser.parse_args(argv)
    agents = args.agents.split(",")
    reference = None
    for workers in args.workers:
        for backend in ("local", "ray"):
            warm = args.warm and backend == "ray"
            with (ray_session(args.address, max(args.workers)) if warm
                  else contextlib.nullcontext()):
                seconds, result = measure(agents, args.games, backend, workers, args.address)
            reference = reference or result
            if result != reference:
                raise SystemExit(f"{backend} with {workers} worker(s) played other games")
            row = {"backend": backend, "workers": workers, "games": len(result.records),
                   "seconds": round(seconds, 2),
                   "games_per_s": round(len(result.records) / seconds, 1), "warm": warm}
            print(" ".join(f"{k}={v}" for k, v in row.items()), flush=True)
            if args.csv:
                append_csv_row(args.csv, FIELDS, row)


def _rows(path: str) -> Iterator[dict[str, str]]:  # pragma: no cover - convenience for notebooks
    import csv

    with open(path, newline="") as f:
        yield from csv.DictReader(f)


if __name__ == "__main__":
    main()
