"""``uno-mk serve``: play the agents in a browser (:mod:`uno_mk_env.serve`; needs the ``serve``
extra).

::

    uno-mk serve --agents ppo:ppo_2p                      # you against the 2-player policy
    uno-mk serve --agents strategic,greedy --players 4 --humans 2 --seed 7
    uno-mk serve --help

Prints one link per person's seat and a spectator link, then serves until Ctrl-C (or SIGTERM);
every finished game is saved in ``--out`` (a recording for ``uno-mk replay --from`` and the
people's decisions as dataset rows). It listens on 127.0.0.1 only unless ``--host`` names
another address together with ``--allow-remote``.
"""

from __future__ import annotations

import argparse
import signal
import socket
import sys
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from uno_mk_env import Rules
from uno_mk_env.agents.threads import set_thread_policy

from .common import (
    CLIError,
    add_rule_args,
    check_agents,
    players,
    require,
    rules_from_args,
    specs,
)

LOOPBACK = ("127.0.0.1", "localhost", "::1")


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "serve", help="play against agents in a browser (a local web table)",
        description="Serve a table in the browser: you (and other people, one link each) "
                    "against agents. Every finished game is recorded and scored.")
    p.add_argument("--agents", default="strategic",
                   help="comma-separated agent specs, cycled over the seats that are not "
                        "people's (default: strategic; see 'uno-mk agents')")
    p.add_argument("--players", type=int,
                   help="players at the table, 2-10 (default: the people + one per agent)")
    p.add_argument("--humans", type=int, default=1,
                   help="seats played by people, seats 0 to N-1, one link each (default 1)")
    p.add_argument("--seed", type=int, help="seed of the first game (default: a fresh one)")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1: this machine only)")
    p.add_argument("--allow-remote", action="store_true",
                   help="required for a --host other than the loopback: anyone who can reach "
                        "it and has a link can play that seat")
    p.add_argument("--port", type=int, default=8765, help="port (default 8765)")
    p.add_argument("--pause", type=float, default=0.8,
                   help="seconds shown before each agent's move (default 0.8)")
    p.add_argument("--reference", default="strategic",
                   help="the agent of duplicate scoring in your seat (default strategic)")
    p.add_argument("--out", default="uno-mk-serve",
                   help="folder of the recordings and dataset rows (default ./uno-mk-serve)")
    add_rule_args(p)


def run(args: argparse.Namespace, out: TextIO) -> int:
    agents = specs(args.agents, "--agents")
    rules = rules_from_args(args.preset, args.rule, args.rounds_to_500)
    n = players(args.players, rules, args.humans + len(agents))
    if not 1 <= args.humans <= n:
        raise CLIError(f"bad --humans {args.humans}: 1 to {n} people at a table of {n}")
    if not 0 < args.port < 65536:
        raise CLIError(f"bad --port {args.port}: 1 to 65535")
    if not 0 <= args.pause <= 10:
        raise CLIError(f"bad --pause {args.pause}: 0 to 10 seconds")
    remote = args.host not in LOOPBACK
    if remote and not args.allow_remote:
        raise CLIError(f"--host {args.host!r} is not this machine's loopback; add "
                       "--allow-remote to serve other machines")
    seed = args.seed
    if seed is None:
        seed = int(np.random.SeedSequence().generate_state(1)[0])
    elif seed < 0:
        raise CLIError(f"--seed must be a non-negative int, got {seed}")
    require(("starlette", "uvicorn", "websockets", "scipy"), "serve", "uno-mk serve")
    _check_port(args.host, args.port)
    check_agents([*agents, args.reference])
    folder = Path(args.out).expanduser()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise CLIError(f"cannot create --out {str(folder)!r}: {e.strerror or e}") from None
    rules.pop("num_players", None)
    rules_obj = Rules(**{**rules, "num_players": n})
    seats = n - args.humans
    table_agents = tuple(agents[i % len(agents)] for i in range(seats))
    return serve(rules_obj, tuple(range(args.humans)), table_agents, seed, args, folder, out,
                 remote)


def _check_port(host: str, port: int) -> None:
    """One line, before anything starts, when ``host:port`` cannot be listened on."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        with socket.socket(infos[0][0], socket.SOCK_STREAM) as s:
            s.bind(infos[0][4])
    except OSError as e:
        raise CLIError(f"cannot listen on {host}:{port}: {e.strerror or e}") from None


def serve(rules: Rules, humans: tuple[int, ...], agents: tuple[str, ...], seed: int,
          args: argparse.Namespace, folder: Path, out: TextIO, remote: bool) -> int:
    # uvicorn and starlette are the serve extra: imported here, once require() has checked them
    import uvicorn

    from uno_mk_env.serve.app import LOOPBACK_HOSTS, Server, create_app
    from uno_mk_env.serve.table import TableConfig

    set_thread_policy(1)  # the agents are small: one BLAS/OpenMP thread, idle ones sleeping
    server = Server()
    table = server.add_table(TableConfig(rules, humans, agents, seed, args.pause,
                                         args.reference, folder))
    app = create_app(server, ("*",) if remote else LOOPBACK_HOSTS)
    host = f"[{args.host}]" if ":" in args.host else args.host
    base = f"http://{'127.0.0.1' if not remote else host}:{args.port}"
    if remote:
        print(f"warning: serving {args.host}:{args.port} to other machines, unencrypted; "
              "anyone with a link can play its seat", file=sys.stderr)
    print(f"UNO Mario Kart at {base} ({rules.num_players} players, seed {seed}; "
          f"agents: {', '.join(agents) or 'none'})", file=out)
    for seat in humans:
        print(f"  seat {seat}: {base}/play/{table.tokens[seat]}", file=out)
    print(f"  spectator: {base}/play/{table.spectator_token}", file=out)
    print(f"Games are saved in {folder}; Ctrl-C stops the server.", file=out, flush=True)
    config = uvicorn.Config(app, host=args.host, port=args.port, log_level="warning",
                            ws_max_size=4096, ws="websockets-sansio")
    # uvicorn shuts down gracefully on SIGINT/SIGTERM, then raises the signal again to the
    # handlers it found: these note it, so the server ends with the line below and status 0.
    stopped: list[int] = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda signum, frame: stopped.append(signum))
    uvicorn.Server(config).run()
    print(f"Stopped after {table.games} game{'s' if table.games != 1 else ''}; saved in "
          f"{folder}.", file=out)
    return 0
