"""Load of the browser table (``uno-mk serve``): many tables at once on the loopback, each
person played by a scripted WebSocket client, the agents by ``--agents``.

The server runs in its own process, as ``uno-mk serve`` does (one thread per table's game, one
BLAS thread); the clients run in this one, so their work does not count against the server.
A client waits ``--think`` seconds (uniform between half and one and a half times it) before
each move, as a person would; ``--think 0`` answers at once, which measures the server
saturated rather than loaded.

Reports the reply time — from a person's move sent to the next decision offered to them, which
holds every agent move in between (``--pause 0``) — as median and p95 over all moves, the games
finished, the server's CPU time per decision and its peak memory, and the machine's load.
Bounded: ``--tables`` tables (at most 200), one game each, every client stopped after
``--timeout`` seconds. Only 127.0.0.1 is contacted.

::

    python benchmarks/serve_load.py --tables 100 --agents ppo:ppo_2p --think 1
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import random
import resource
import socket
import statistics
import threading
import time
from multiprocessing.connection import Connection

import uvicorn
import websockets

from uno_mk_env import Rules
from uno_mk_env.agents.threads import set_thread_policy
from uno_mk_env.serve.app import Server, create_app
from uno_mk_env.serve.table import TableConfig


def serve(port: int, tables: int, players: int, agents: tuple[str, ...],
          conn: Connection) -> None:
    """The server process: ``tables`` tables; sends their links, then, once told to stop,
    its CPU seconds, the decisions played and its peak memory (MB)."""
    set_thread_policy(1)
    server = Server()
    web = uvicorn.Server(uvicorn.Config(create_app(server), host="127.0.0.1", port=port,
                                        log_level="warning", ws="websockets-sansio"))
    made = [server.add_table(TableConfig(Rules(num_players=players), (0,), agents, seed=i,
                                         pause=0), start=True) for i in range(tables)]

    def stop() -> None:
        conn.recv()
        web.should_exit = True

    threading.Thread(target=stop, daemon=True).start()
    started: list[float] = []

    def ready() -> None:
        while not web.started:
            time.sleep(0.05)
        started.append(_cpu())  # start-up (imports, models, tables) is not counted
        conn.send([t.tokens[0] for t in made])

    threading.Thread(target=ready, daemon=True).start()
    web.run()
    decisions = sum(len(t.recording["steps"]) for t in made if t.recording is not None)
    conn.send((_cpu() - started[0], decisions,
               resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024))


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def client(url: str, seed: int, think: float, deadline: float,
                 times: list[float]) -> bool:
    """Plays one seat to the end of its game; True when the game finished."""
    rng = random.Random(seed)
    sent = None
    async with websockets.connect(url, max_size=2**22) as ws:
        while time.monotonic() < deadline:
            try:
                frame = json.loads(await asyncio.wait_for(ws.recv(), deadline - time.monotonic()))
            except TimeoutError:
                return False
            if frame["type"] != "state":
                continue
            if frame["over"]:
                return True
            if frame["legal"]:
                if sent is not None:
                    times.append(time.monotonic() - sent)
                if think:
                    await asyncio.sleep(think * rng.uniform(0.5, 1.5))
                action = rng.choice(frame["legal"])[0]
                sent = time.monotonic()
                await ws.send(json.dumps({"type": "act", "ask": frame["ask"], "action": action}))
    return False


async def drive(base: str, tokens: list[str], think: float,
                timeout: float) -> tuple[int, list[float]]:
    deadline = time.monotonic() + timeout
    times: list[float] = []
    done = await asyncio.gather(*(client(f"{base}/ws/{t}", i, think, deadline, times)
                                  for i, t in enumerate(tokens)))
    return sum(done), times


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tables", type=int, default=100)
    p.add_argument("--players", type=int, default=2)
    p.add_argument("--agents", default="ppo:ppo_2p")
    p.add_argument("--think", type=float, default=1.0,
                   help="a client's mean seconds before each move (default 1; 0: at once)")
    p.add_argument("--timeout", type=float, default=600.0)
    args = p.parse_args()
    if not 1 <= args.tables <= 200:
        p.error("--tables: 1 to 200")
    if not 0 <= args.think <= 30:
        p.error("--think: 0 to 30 seconds")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    agents = tuple(args.agents.split(",")) * (args.players - 1)
    here, there = multiprocessing.get_context("spawn").Pipe()
    proc = multiprocessing.get_context("spawn").Process(
        target=serve, args=(port, args.tables, args.players, agents[:args.players - 1], there))
    proc.start()
    tokens = here.recv()
    load = os.getloadavg()
    start = time.monotonic()
    finished, times = asyncio.run(drive(f"ws://127.0.0.1:{port}", tokens, args.think,
                                        args.timeout))
    wall = time.monotonic() - start
    here.send("stop")
    cpu, decisions, memory = here.recv()
    proc.join(30)
    times.sort()
    p95 = times[int(0.95 * (len(times) - 1))] if times else float("nan")
    print(f"{args.tables} tables of {args.players} ({args.agents}), think {args.think} s: "
          f"{finished} games finished in {wall:.1f} s; {len(times)} replies, median "
          f"{1000 * statistics.median(times):.1f} ms, p95 {1000 * p95:.1f} ms; server "
          f"{cpu:.1f} CPU s for {decisions} decisions ({1000 * cpu / max(decisions, 1):.2f} "
          f"ms each), peak memory {memory:.0f} MB; load before "
          f"{' '.join(f'{x:.1f}' for x in load)}, after "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
