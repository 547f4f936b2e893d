"""The ``ray`` backend (``uno_mk_env.evaluation.backends``): a tournament played as Ray tasks
gives the same games as the local pool, on a Ray started for the run and on a real two-node
cluster (``ray start --head`` plus a second ``ray start --address=...`` on this machine, one CPU
each), where a worker process killed during the run costs only a retry of its chunk."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from uno_mk_env.evaluation import backends
from uno_mk_env.evaluation.sprt import SprtSpec
from uno_mk_env.evaluation.tournament import run_tournament

ray = pytest.importorskip("ray")

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="finds the cluster's processes through /proc")

FAST = {"uno": "off"}
AGENTS = ["ppo:ppo_2p", "strategic", "random"]
RAY_BIN = Path(sys.executable).with_name("ray")
#: Marks the processes of the test cluster (their environment), to find and end only those.
MARK = "UNO_MK_TEST_CLUSTER"


def _result_files(result, folder: Path) -> dict[str, bytes]:
    paths = result.save(folder, plot=False)
    return {kind: Path(p).read_bytes() for kind, p in paths.items() if kind != "json"}


@pytest.fixture
def short_tmp(monkeypatch):
    """A temporary folder of a short path for Ray's session files (its sockets' paths must fit
    108 bytes), removed after the test, and Ray's settings for a cluster of this machine."""
    folder = Path(tempfile.mkdtemp(prefix="ray", dir="/tmp"))
    monkeypatch.setenv("RAY_TMPDIR", str(folder))
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    monkeypatch.setenv("RAY_USAGE_STATS_ENABLED", "0")
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_a_tournament_on_a_local_ray_equals_the_local_pool(tmp_path, short_tmp) -> None:
    """A model file travels as bytes (the worker loads its own copy); games.csv, the tables and
    the ratings are byte for byte the local backend's; a local run's journal, cut short as by a
    kill, resumes on Ray to the same result."""
    journal = tmp_path / "journal.jsonl"
    local = run_tournament(AGENTS, 3, 36, seed=5, rules=FAST, workers=1, journal=journal)
    lines = journal.read_text().splitlines(keepends=True)
    journal.write_text("".join(lines[:1 + len(lines) // 3]))
    with backends.ray_session(None, 2):  # one Ray for both runs
        on_ray = run_tournament(AGENTS, 3, 36, seed=5, rules=FAST, workers=2, backend="ray")
        resumed = run_tournament(AGENTS, 3, 36, seed=5, rules=FAST, workers=2, backend="ray",
                                 journal=journal, resume=True)
    assert on_ray == local == resumed and len(on_ray.records) == 36
    assert len(journal.read_text().splitlines()) == 1 + 36  # every game journaled once
    assert _result_files(on_ray, tmp_path / "ray") == _result_files(local, tmp_path / "local")
    assert not ray.is_initialized()  # the Ray started for the runs is stopped after them


def test_model_files_travel_as_bytes_and_load_from_a_private_copy(tmp_path) -> None:
    entrants = [("ppo:ppo_2p", "ppo:ppo_2p"), ("random", "random")]
    files = backends.model_files(entrants)
    assert list(files) == ["ppo:ppo_2p"] and files["ppo:ppo_2p"][:2] == b"PK"  # an npz archive
    local = backends._local_entrants(entrants, files, tmp_path)
    path = Path(local[0][1].removeprefix("ppo:"))
    assert path.parent == tmp_path and path.read_bytes() == files["ppo:ppo_2p"]
    assert local[0][0] == "ppo:ppo_2p" and local[1] == ("random", "random")


def test_an_unreachable_cluster_is_one_line(short_tmp) -> None:
    port = _free_port()
    with pytest.raises(backends.BackendError, match="cannot connect to the Ray cluster") as e:
        run_tournament(["greedy", "random"], 2, 4, rules=FAST, backend="ray",
                       address=f"127.0.0.1:{port}")
    assert "\n" not in str(e.value)


# ------------------------------------------------------------------ a two-node cluster
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _node(args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen:
    """One ``ray start --block`` in its own process group (ended with it at teardown)."""
    return subprocess.Popen(
        [str(RAY_BIN), "start", *args, "--num-cpus=1", "--node-ip-address=127.0.0.1",
         "--block", "--disable-usage-stats", f"--dashboard-agent-listen-port={_free_port()}",
         f"--ray-client-server-port={_free_port()}"],
        env=env, start_new_session=True, stdout=log.open("w"), stderr=subprocess.STDOUT,
    )


def _marked(pid: int, mark: str) -> bool:
    try:
        return f"{MARK}={mark}".encode() in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return False


def _cluster_processes(mark: str, name: bytes = b"") -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and _marked(int(entry.name), mark):
            try:
                if name in (entry / "cmdline").read_bytes():
                    out.append(int(entry.name))
            except OSError:
                continue
    return out


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A head and a worker node on this machine (one CPU each); yields the address."""
    if not RAY_BIN.exists():
        pytest.skip("the ray command is not installed beside this Python")
    logs = tmp_path_factory.mktemp("ray-cluster")
    mark = f"{os.getpid()}-{time.monotonic_ns()}"
    scratch = Path(tempfile.mkdtemp(prefix="ray", dir="/tmp"))  # short: Ray's socket paths
    env = dict(os.environ, RAY_AUTH_MODE="disabled", RAY_USAGE_STATS_ENABLED="0",
               TMPDIR=str(scratch), RAY_TMPDIR=str(scratch), **{MARK: mark})
    env.pop("RAY_ADDRESS", None)
    port = _free_port()
    address = f"127.0.0.1:{port}"
    nodes = [_node(["--head", f"--port={port}", "--include-dashboard=false"], env,
                   logs / "head.log")]
    old = os.environ.get("RAY_AUTH_MODE")
    os.environ["RAY_AUTH_MODE"] = "disabled"
    try:
        _wait_for(lambda: _connects(address), 90, "the head node", logs / "head.log")
        nodes.append(_node([f"--address={address}"], env, logs / "worker.log"))
        _wait_for(lambda: _alive_nodes(address) >= 2, 90, "the worker node",
                  logs / "worker.log")
        yield address, mark
    finally:
        for p in nodes[::-1]:
            with _suppress():
                os.killpg(p.pid, signal.SIGTERM)
        deadline = time.monotonic() + 10
        for p in nodes:
            with _suppress():
                p.wait(max(deadline - time.monotonic(), 0.1))
        for pid in _cluster_processes(mark):  # anything of this cluster still running
            with _suppress():
                os.kill(pid, signal.SIGKILL)
        for p in nodes:
            with _suppress():
                os.killpg(p.pid, signal.SIGKILL)
                p.wait(5)
        shutil.rmtree(scratch, ignore_errors=True)
        if old is None:
            os.environ.pop("RAY_AUTH_MODE", None)
        else:
            os.environ["RAY_AUTH_MODE"] = old


class _suppress:
    def __enter__(self) -> None:
        return None

    def __exit__(self, kind, value, tb) -> bool:
        return kind is not None and issubclass(kind, (OSError, subprocess.TimeoutExpired))


def _connects(address: str) -> bool:
    try:
        ray.init(address=address, log_to_driver=False, configure_logging=False)
    except ConnectionError:
        return False
    ray.shutdown()
    return True


def _alive_nodes(address: str) -> int:
    ray.init(address=address, log_to_driver=False, configure_logging=False)
    try:
        return sum(n["Alive"] for n in ray.nodes())
    finally:
        ray.shutdown()


def _wait_for(ready, seconds: float, what: str, log: Path) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if ready():
            return
        time.sleep(1)
    pytest.fail(f"{what} did not start in {seconds} s: {log.read_text()[-2000:]}")


@pytest.mark.slow
def test_a_tournament_across_two_nodes_equals_the_local_pool(cluster, tmp_path) -> None:
    address, _ = cluster
    on_ray = run_tournament(AGENTS, 3, 60, seed=7, rules=FAST, workers=2, backend="ray",
                            address=address)
    local = run_tournament(AGENTS, 3, 60, seed=7, rules=FAST, workers=2)
    assert on_ray == local
    assert _result_files(on_ray, tmp_path / "ray") == _result_files(local, tmp_path / "local")


@pytest.mark.slow
def test_a_worker_killed_during_the_run_costs_only_its_chunk(cluster, tmp_path) -> None:
    """A Ray worker process is killed (SIGKILL) while it plays a chunk; Ray runs the chunk
    again and the result, with its journal, is whole and equal to the local one; an SPRT on
    the same cluster stops at the same game as locally."""
    address, mark = cluster
    journal = tmp_path / "journal.jsonl"
    box: dict[str, object] = {}

    def play() -> None:
        try:
            box["result"] = run_tournament(
                ["strategic", "greedy"], 2, 600, seed=11, rules={"match": "target_score"},
                workers=2, backend="ray", address=address, journal=journal)
        except BaseException as e:  # reported by the assertion below
            box["error"] = e

    thread = threading.Thread(target=play)
    thread.start()
    killed = None
    deadline = time.monotonic() + 120
    while killed is None and thread.is_alive() and time.monotonic() < deadline:
        busy = _cluster_processes(mark, b"ray::_ray_chunk")
        if busy:
            killed = busy[0]
            os.kill(killed, signal.SIGKILL)
        time.sleep(0.2)
    thread.join(600)
    assert killed is not None, "no worker was seen playing a chunk"
    assert "error" not in box, box.get("error")
    result = box["result"]
    local = run_tournament(["strategic", "greedy"], 2, 600, seed=11,
                           rules={"match": "target_score"}, workers=1)
    assert result == local and len(result.records) == 600
    journaled = journal.read_text().splitlines()[1:]
    assert len(journaled) == 600  # every game once: the killed chunk was not counted twice
    spec = SprtSpec(0, 100, min_games=20)
    tested = run_tournament(["strategic", "random"], 2, 400, seed=3, rules=FAST, sprt=spec,
                            workers=2, backend="ray", address=address)
    assert tested == run_tournament(["strategic", "random"], 2, 400, seed=3, rules=FAST,
                                    sprt=spec)
