"""Load of the browser table (``uno-mk serve``): many tables at once on the loopback, each
person played by a scripted WebSocket client, the agents by ``--agents``.

Reports the reply time — from a person's move sent to the next decision offered to them, which
holds every agent move in between (``--pause 0``) — as median and p95 over all moves, the games
finished, and the server's peak memory. Bounded: ``--tables`` tables (at most 200), one game
each, every client stopped after ``--timeout`` seconds. Only 127.0.0.1 is contacted.

::

    python benchmarks/serve_load.py --tables 100 --agents ppo:ppo_2p
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import resource
import socket
import statistics
import threading
import time

import uvicorn
import websockets

from uno_mk_env import Rules
from uno_mk_env.serve.app import Server, create_app
from uno_mk_env.serve.table import TableConfig


async def client(url: str, seed: int, deadline: float, times: list[float]) -> bool:
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
                action = rng.choice(frame["legal"])[0]
                sent = time.monotonic()
                await ws.send(json.dumps({"type": "act", "ask": frame["ask"], "action": action}))
    return False


async def drive(base: str, tokens: list[str], timeout: float) -> tuple[int, list[float]]:
    deadline = time.monotonic() + timeout
    times: list[float] = []
    done = await asyncio.gather(*(client(f"{base}/ws/{t}", i, deadline, times)
                                  for i, t in enumerate(tokens)))
    return sum(done), times


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tables", type=int, default=100)
    p.add_argument("--players", type=int, default=2)
    p.add_argument("--agents", default="ppo:ppo_2p")
    p.add_argument("--timeout", type=float, default=300.0)
    args = p.parse_args()
    if not 1 <= args.tables <= 200:
        p.error("--tables: 1 to 200")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = Server()
    web = uvicorn.Server(uvicorn.Config(create_app(server), host="127.0.0.1", port=port,
                                        log_level="warning", ws="websockets-sansio"))
    thread = threading.Thread(target=web.run, daemon=True)
    thread.start()
    while not web.started:
        time.sleep(0.05)
    agents = tuple(args.agents.split(",")) * (args.players - 1)
    tokens = []
    for i in range(args.tables):
        table = server.add_table(TableConfig(Rules(num_players=args.players), (0,),
                                             agents[:args.players - 1], seed=i, pause=0))
        tokens.append(table.tokens[0])
    start = time.monotonic()
    finished, times = asyncio.run(drive(f"ws://127.0.0.1:{port}", tokens, args.timeout))
    wall = time.monotonic() - start
    web.should_exit = True
    thread.join(30)
    times.sort()
    p95 = times[int(0.95 * (len(times) - 1))] if times else float("nan")
    print(f"{args.tables} tables of {args.players} ({args.agents}): {finished} games finished "
          f"in {wall:.1f} s; {len(times)} replies, median "
          f"{1000 * statistics.median(times):.1f} ms, p95 {1000 * p95:.1f} ms; peak memory "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
