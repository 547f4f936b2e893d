"""The Ray connection: a local Ray or a running cluster (``--address``, ``$RAY_ADDRESS``), its
description, the env runner count and where the env runners run. Imports Ray only when
called."""

from __future__ import annotations

import os
import socket
from typing import Any

from ..args import TrainingError
from .args import Args

__all__ = ["RAY_VERSION", "check_reachable", "connect", "env_runner_placement",
           "resolve_env_runners"]

#: The Ray version this backend was tested with (the ``rllib`` extra pins it).
RAY_VERSION = "2.60.0"


def _import_ray() -> Any:
    try:
        import ray
        import ray.rllib  # noqa: F401
    except ImportError as e:
        raise TrainingError(f"the rllib backend needs Ray RLlib ({e}): pip install "
                            f"'uno-mk-env[rllib]' (ray[rllib]=={RAY_VERSION}; install "
                            "torch==2.13.0 first)") from None
    return ray


def connect(args: Args) -> dict[str, Any]:
    """Starts a local Ray or joins the cluster of ``--address`` (else ``$RAY_ADDRESS``) and
    describes it: ``address`` (its GCS address), ``local`` (started by this process),
    ``nodes``, ``cpus`` and ``driver_node``."""
    ray = _import_ray()
    address = args.address or os.environ.get("RAY_ADDRESS", "")
    if address:
        check_reachable(address, "--address" if args.address else "RAY_ADDRESS")
    started = False
    if not ray.is_initialized():
        try:
            if address:
                ray.init(address=address, logging_level="WARNING")
            else:
                ray.init(num_cpus=args.num_cpus or None, include_dashboard=False,
                         logging_level="WARNING")
                started = True
        except (ConnectionError, ValueError, RuntimeError) as e:
            where = f"the Ray cluster at {address!r}" if address else "a local Ray"
            text = " ".join(str(e).split())[:300]
            if address and "RAY_AUTH_MODE" not in os.environ:
                text += (" (a cluster with token authentication, Ray's default when its head "
                         "has a token, needs RAY_AUTH_MODE=token and its token in "
                         "RAY_AUTH_TOKEN or ~/.ray/auth_token: 'ray get-auth-token' on the head)")
            raise TrainingError(f"cannot start or join {where}: {text}") from None
    context = ray.get_runtime_context()
    nodes = [n for n in ray.nodes() if n.get("Alive")]
    return {
        "address": context.gcs_address, "local": started, "requested_address": address,
        "nodes": len(nodes), "cpus": int(ray.cluster_resources().get("CPU", 0)),
        "driver_node": context.get_node_id(),
    }


def check_reachable(address: str, source: str = "--address", timeout: float = 10.0) -> None:
    """Refuses a ``HOST:PORT`` address where nothing accepts a connection (``ray.init`` would
    retry for minutes); other forms (``auto``, ``ray://...``) are left to Ray. ``source`` names
    where the address came from (``--address`` or ``RAY_ADDRESS``).

    Raises:
        TrainingError: the port is closed or the host unknown, in one line.
    """
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit() or "://" in address or not host:
        return
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout):
            pass
    except OSError as e:
        raise TrainingError(
            f"{source} {address!r}: nothing accepts connections there ({e.strerror or e}); "
            f"start the cluster's head with 'ray start --head --port {port}' (see "
            "docs/rllib.md, Running on a cluster)") from None


def resolve_env_runners(args: Args, cpus: int) -> int:
    """``--num-env-runners``, with -1 resolved to the cluster's CPUs less one for the learner
    (and one per learner actor), at least 1."""
    if args.num_env_runners >= 0:
        return args.num_env_runners
    return max(1, cpus - 1 - args.num_learners)


def env_runner_placement(algo: Any) -> list[dict[str, Any]]:
    """Where each remote env runner runs: its node id, host, process id and parent process id
    (on a cluster's node the parent is that node's raylet)."""
    import ray

    def where(runner: Any) -> dict[str, Any]:
        return {"node": ray.get_runtime_context().get_node_id(), "host": socket.gethostname(),
                "pid": os.getpid(), "ppid": os.getppid()}

    if algo.env_runner_group.num_remote_env_runners() == 0:
        return []
    return list(algo.env_runner_group.foreach_env_runner(where, local_env_runner=False))

