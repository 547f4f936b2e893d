"""Where a tournament's chunks of games are played: in this process, in a local pool of worker
processes, or as tasks on a Ray cluster. One small interface (:func:`play_chunks`); the
tournament (:mod:`~uno_mk_env.evaluation.tournament`) says *what* to play, this module only runs
it and owns the worker processes' lifecycle.

The contract
    A :class:`Job` names the entrants and a picklable ``make_runner(entrants)`` that builds,
    once per worker process, an object whose ``play(task)`` returns a game's record. The
    backend plays the chunks (submitted as workers free up, never all at once) and hands each
    finished chunk's records to ``on_chunk``, in the order they finish; ``on_chunk`` returning
    true stops the run (a sequential test has decided): no further chunk is started and the
    chunks in flight are ended. A game's result depends only on its task's seeds, so every
    backend gives the same records for any number of workers.

``local`` (:func:`play_local`)
    ``workers=1`` plays in this process; more start a pool of processes (``fork``, or a clean
    ``spawn`` once torch is loaded). A worker that dies ends the run with a
    :class:`BackendError` as soon as the pool notices it; an agent's error in a worker is raised
    here as it was raised there; either way, and on an interruption, the workers are ended
    before this returns.

``ray`` (:func:`play_ray`)
    Each chunk is a Ray task (:func:`_ray_chunk`). A worker process or node that dies loses its
    chunk, which Ray runs again (``max_retries``); the journal counts a chunk once, when its
    result arrives. Agents are built once per Ray worker process and kept for the job's later
    chunks. Model files (``ppo:PATH``) travel through the object store as bytes: a worker
    writes them into a private temporary folder, builds the agents from there with the same
    loader (numpy arrays, never a pickle) and removes the folder, so the cluster needs no
    shared filesystem. ``address``:
    a cluster (``ray://`` or ``HOST:PORT``), default ``RAY_ADDRESS``, else a Ray started on this
    machine for the run with ``workers`` CPUs (and stopped after it). Several runs share one
    connection inside :func:`session`.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import multiprocessing
import multiprocessing.spawn
import os
import signal
import socket
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from uno_mk_env.agents.policy_file import resolve_model_path
from uno_mk_env.agents.threads import set_thread_policy
from uno_mk_env.errors import UnoMkError

from .results import GameRecord
from .scheduling import GameTask

__all__ = ["BACKENDS", "BackendError", "Job", "play_chunks", "play_local", "play_ray",
           "session"]

BACKENDS = ("local", "ray")
#: Chunks in flight per worker: enough to keep every worker busy, few enough that the tasks and
#: results waiting stay small whatever the schedule's size.
CHUNKS_PER_WORKER = 4
#: Times Ray runs a chunk again after its worker process or node died.
RAY_RETRIES = 5
_PR_SET_PDEATHSIG = 1

OnChunk = Callable[[list[GameRecord]], bool]


class BackendError(UnoMkError, RuntimeError):
    """The games could not be played: a worker process died or could not start, or the
    backend is not available (one line); the command line exits with 1 for it."""

    exit_code = 1


class Runner(Protocol):
    def play(self, task: GameTask) -> GameRecord: ...

    def build_all(self) -> None:
        """Builds every entrant's agent now (their model files may be gone later)."""


@dataclass(frozen=True)
class Job:
    """What the workers play: ``make_runner(entrants)`` builds a process's runner
    (``entrants``: ``(label, spec)`` pairs; picklable, as it travels to the workers)."""

    entrants: list[tuple[str, str]]
    make_runner: Callable[[list[tuple[str, str]]], Runner]
    key: str = field(default="", compare=False)


def play_chunks(backend: str, job: Job, chunks: Iterator[list[GameTask]], workers: int,
                on_chunk: OnChunk, address: str | None = None) -> None:
    """Plays ``chunks`` of ``job`` on ``backend`` (:data:`BACKENDS`; module docstring).

    Raises:
        ValueError: an unknown backend. BackendError: a worker died, or Ray is missing or
            cannot be reached. AgentError and the agents' other errors, as raised in a worker.
    """
    if backend == "local":
        play_local(job, chunks, workers, on_chunk)
    elif backend == "ray":
        play_ray(job, chunks, workers, on_chunk, address)
    else:
        raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}")


# ------------------------------------------------------------------------------- local
def play_local(job: Job, chunks: Iterator[list[GameTask]], workers: int,
               on_chunk: OnChunk) -> None:
    """The ``local`` backend (module docstring)."""
    if workers == 1:
        runner = job.make_runner(job.entrants)
        for chunk in chunks:
            if on_chunk([runner.play(task) for task in chunk]):
                return
        return
    _play_in_pool(job, chunks, workers, on_chunk)


#: The runner of a pool's worker process, made once by :func:`_init_worker` (so a model is
#: loaded once per worker, not once per chunk of games).
_WORKER_RUNNER: Runner | None = None


def _init_worker(job: Job, parent: int) -> None:
    """Initializer of a worker process of the main process ``parent`` (a pid):
    :func:`_worker_signals`, one thread per pool
    (:func:`~uno_mk_env.agents.threads.set_thread_policy`), then the process's runner."""
    global _WORKER_RUNNER
    _worker_signals(parent)
    set_thread_policy(1)  # parallel work is the workers': one thread each, sleeping when idle
    _WORKER_RUNNER = job.make_runner(job.entrants)


def _worker_signals(parent: int) -> None:
    """Ctrl-C ignored and SIGTERM the default action in a worker (a forked worker inherits the
    main process's handlers; the main process ends the workers itself); on Linux, a SIGTERM
    when the main process dies, so that no worker outlives it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM))
            if os.getppid() != parent:  # it died before prctl: nobody to work for
                os._exit(0)


def _play_chunk(tasks: list[GameTask]) -> list[GameRecord]:
    if _WORKER_RUNNER is None:
        raise RuntimeError("_play_chunk runs in a worker started with _init_worker")
    return [_WORKER_RUNNER.play(t) for t in tasks]


def check_workers_can_start(workers: int) -> None:
    """A spawned worker re-imports the main script (``__main__``) before it does anything; when
    that script is not a file (read from standard input, say) every worker would die at once,
    and a worker re-importing a script that starts a tournament when imported would start one.

    Raises:
        BackendError: naming the script and what to do instead.
    """
    if workers > 1 and getattr(multiprocessing.current_process(), "_inheriting", False):
        raise BackendError(
            f"workers={workers}: this process is a worker re-importing the main script, which "
            "starts a tournament when imported; put that under if __name__ == '__main__':"
        )
    method = start_method()
    if workers == 1 or method == "fork":
        return
    main_path = multiprocessing.spawn.get_preparation_data("check").get("init_main_from_path")
    if main_path is not None and not os.path.isfile(main_path):
        name = getattr(sys.modules.get("__main__"), "__file__", main_path)
        raise BackendError(
            f"workers={workers} cannot start: worker processes are started with {method!r} "
            f"(torch is loaded) and re-import the main script, which is {name!r}, not a file; "
            "run the script from a file (its entry point under if __name__ == '__main__':) or "
            "use workers=1"
        )


def _worker_death(processes: Sequence[Any], method: str) -> str:
    """One line about the worker process that died (its exit code or signal)."""
    ended = [(p.pid, p.exitcode) for p in processes if p.exitcode is not None]
    # The pool terminates (SIGTERM) the other workers after the first one dies.
    culprits = [e for e in ended if e[1] != -signal.SIGTERM] or ended
    if culprits:
        pid, code = culprits[0]
        if code < 0:
            try:
                how = f"killed by {signal.Signals(-code).name}"
            except ValueError:
                how = f"killed by signal {-code}"
        else:
            how = f"exit code {code}"
        what = f"pid {pid}, {how}"
    else:
        what = "exit status unknown"
    hint = ""
    if method != "fork":
        hint = (f"; with the {method!r} start method each worker re-imports the main script, "
                "so a script must run its tournament under if __name__ == '__main__':")
    return f"a worker process died ({what}); the tournament stopped without results{hint}"


def _end_workers(executor: ProcessPoolExecutor, processes: Sequence[Any]) -> None:
    """Ends a pool after an error, an interruption or an early stop: the workers are terminated
    (they may be in the middle of a chunk), the pool notices it and fails its pending chunks
    (futures are not cancelled from here: the pool's thread owns them until then), then its
    thread is joined."""
    for p in processes:
        if p.exitcode is None:
            with contextlib.suppress(Exception):
                p.terminate()
    for p in processes:
        with contextlib.suppress(Exception):
            p.join(5)
            if p.exitcode is None:
                p.kill()
                p.join(1)
    executor.shutdown(wait=True, cancel_futures=True)


def start_method() -> str:
    """``fork`` where it exists (fast, and scripts need no ``__main__`` guard), except once torch
    is loaded: forking a process whose torch thread pools are running can deadlock, so then a
    clean ``spawn`` interpreter per worker (which does need the guard in scripts)."""
    methods = multiprocessing.get_all_start_methods()
    return "fork" if "fork" in methods and "torch" not in sys.modules else "spawn"


def _play_in_pool(job: Job, chunks: Iterator[list[GameTask]], workers: int,
                  on_chunk: OnChunk) -> None:
    method = start_method()
    check_workers_can_start(workers)
    executor = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context(method),
                                   initializer=_init_worker, initargs=(job, os.getpid()))
    pending: set[Future] = set()
    processes: list[Any] = []
    ended = stop = False

    def collect() -> bool:
        nonlocal pending
        done, pending = wait(pending, return_when=FIRST_COMPLETED)
        # every finished chunk is handed over (the journal keeps them), even after a stop
        return any([on_chunk(future.result()) for future in done])  # raises a worker's error

    try:
        for chunk in chunks:
            pending.add(executor.submit(_play_chunk, chunk))
            # The pool starts its processes on submission; keep them to report or end them.
            processes = list((getattr(executor, "_processes", None) or {}).values()) or processes
            if len(pending) >= CHUNKS_PER_WORKER * workers and (stop := collect()):
                break
        while pending and not stop:
            stop = collect()
        if stop:
            _end_workers(executor, processes)
        else:
            executor.shutdown(wait=True)
        ended = True
    except BrokenProcessPool:
        _end_workers(executor, processes)
        ended = True
        raise BackendError(_worker_death(processes, method)) from None
    finally:
        if not ended:
            _end_workers(executor, processes)


# --------------------------------------------------------------------------------- ray
def model_files(entrants: Sequence[tuple[str, str]]) -> dict[str, bytes]:
    """The model files of the ``ppo:PATH`` entrants, by spec: their bytes, to ship."""
    out = {}
    for _, spec in entrants:
        name, _, arg = spec.partition(":")
        if name == "ppo" and arg and spec not in out:
            path = resolve_model_path(arg)
            if path.is_file():
                out[spec] = path.read_bytes()
    return out


def _local_entrants(entrants: Sequence[tuple[str, str]], files: dict[str, bytes],
                    folder: Path) -> list[tuple[str, str]]:
    """The entrants with each shipped model written into ``folder`` (named by its SHA-256,
    keeping the suffix the loader reads the format from) and its spec pointing there."""
    specs = {}
    for spec, data in files.items():
        suffix = Path(spec.partition(":")[2]).suffix or ".npz"
        path = folder / f"{hashlib.sha256(data).hexdigest()}{suffix}"
        if not path.exists():
            path.write_bytes(data)
        specs[spec] = f"ppo:{path}"
    return [(label, specs.get(spec, spec)) for label, spec in entrants]


#: The runners of this Ray worker process, by job key (a worker serves many chunks of a job).
_RAY_RUNNERS: dict[str, Runner] = {}


def _ray_chunk(job: Job, files: dict[str, bytes], tasks: list[GameTask]) -> list[GameRecord]:
    """A chunk played on a Ray worker (the body of the remote task)."""
    runner = _RAY_RUNNERS.get(job.key)
    if runner is None:
        set_thread_policy(1)
        with tempfile.TemporaryDirectory(prefix="uno-mk-models-") as folder:
            runner = job.make_runner(_local_entrants(job.entrants, files, Path(folder)))
            runner.build_all()  # the models are read now: their copies go with the folder
        _RAY_RUNNERS.clear()  # one job's agents at a time per worker process
        _RAY_RUNNERS[job.key] = runner
    return [runner.play(t) for t in tasks]


def _import_ray() -> Any:
    try:
        import ray  # the rllib extra's: imported only for --backend ray
    except ImportError:
        raise BackendError("the ray backend needs Ray: pip install 'uno-mk-env[rllib]'") from None
    return ray


def ray_address(address: str | None) -> str | None:
    """The cluster to join: ``address``, else ``RAY_ADDRESS``, else ``None`` (a local Ray)."""
    return address or os.environ.get("RAY_ADDRESS") or None


@contextlib.contextmanager
def ray_session(address: str | None, workers: int) -> Iterator[Any]:
    """Ray connected for a run: to the cluster at ``address`` (:func:`ray_address`) or to a Ray
    started here with ``workers`` CPUs; disconnected (a local one stopped) afterwards, unless
    the caller had connected already."""
    ray = _import_ray()
    if ray.is_initialized():
        yield ray
        return
    where = ray_address(address)
    if where is not None:
        _check_reachable(where)
    try:
        if where is None:
            # "local": a new Ray for this run, never another user's running on this machine
            ray.init(address="local", num_cpus=workers, include_dashboard=False,
                     log_to_driver=False, configure_logging=False)
        else:
            ray.init(address=where, log_to_driver=False, configure_logging=False)
    except (ConnectionError, ValueError, RuntimeError) as e:
        text = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise BackendError(f"cannot connect to the Ray cluster at {where or 'a local Ray'}: "
                           f"{text[:200]}") from None
    try:
        yield ray
    finally:
        ray.shutdown()


def session(backend: str, address: str | None,
            workers: int) -> contextlib.AbstractContextManager[Any]:
    """One connection for several runs (a ladder's matches, a card's lines): Ray joined once
    (:func:`ray_session`) with ``backend="ray"``, so a Ray started here is not started again
    for every run; nothing for ``"local"``."""
    return ray_session(address, workers) if backend == "ray" else contextlib.nullcontext()


def _check_reachable(address: str) -> None:
    """A ``HOST:PORT`` address that refuses connections fails at once, in one line (Ray itself
    retries for a minute or more); ``ray://`` and other forms are left to Ray.

    Raises:
        BackendError: nothing listens there.
    """
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit() or "://" in host or not host:
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=10).close()
    except OSError as e:
        raise BackendError(f"cannot connect to the Ray cluster at {address}: "
                           f"{e.strerror or e} (start it with ray start --head, or give "
                           "--address / RAY_ADDRESS of a running one)") from None


def play_ray(job: Job, chunks: Iterator[list[GameTask]], workers: int, on_chunk: OnChunk,
             address: str | None = None) -> None:
    """The ``ray`` backend (module docstring)."""
    with ray_session(address, workers) as ray:
        job = Job(job.entrants, job.make_runner, os.urandom(16).hex())  # this run's runners
        files = ray.put(model_files(job.entrants))
        job_ref = ray.put(job)
        remote = ray.remote(num_cpus=1, max_retries=RAY_RETRIES)(_ray_chunk)
        pending: list[Any] = []
        stop = False

        def collect() -> bool:
            nonlocal pending
            done, pending = ray.wait(pending, num_returns=1)
            return any([on_chunk(_ray_result(ray, ref)) for ref in done])

        try:
            for chunk in chunks:
                pending.append(remote.remote(job_ref, files, chunk))
                if len(pending) >= CHUNKS_PER_WORKER * workers and (stop := collect()):
                    break
            while pending and not stop:
                stop = collect()
        finally:
            for ref in pending:
                with contextlib.suppress(Exception):
                    ray.cancel(ref, force=True)


def _ray_result(ray: Any, ref: Any) -> list[GameRecord]:
    """A chunk's records; an agent's error raised as it was raised on the worker."""
    try:
        return ray.get(ref)
    except ray.exceptions.RayTaskError as e:
        cause = getattr(e, "cause", None)
        if isinstance(cause, BaseException):
            raise cause from None
        raise BackendError(f"a Ray task failed: {str(e).splitlines()[0][:200]}") from None
    except ray.exceptions.RayError as e:
        raise BackendError(f"a chunk of games was lost on the Ray cluster after "
                           f"{RAY_RETRIES} retries: {str(e).splitlines()[0][:200]}") from None

