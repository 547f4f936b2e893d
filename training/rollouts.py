"""Rollouts of the learner's policy gathered where the tables are, one message per rollout.

The fast backend (:mod:`uno_mk_env.training.ppo_fast`) plays ``n_steps`` learner decisions at
every training table per rollout. Sending each step's actions to worker processes and their
observations back costs a pipe round trip per step (~0.25 ms on a 2-core VM, as much as the
64 tables' step itself), so the learner instead sends its actor's weights once: the process
that holds the tables plays the rollout with a numpy copy of the actor and returns it whole.

* :class:`TableRollouts` — the tables of one process and how they play a rollout: the numpy
  actor's logits, illegal actions masked, an action drawn by inverse CDF from each table's own
  generator (``derive_seed(seed, Stream.ACTIONS, table)``), the vector env stepped. It is also
  the plain reference: ``--env-workers 0`` plays every table this way in the learner's process.
* :class:`ProcessRollouts` — the tables split over worker processes (spawned), each playing its
  share with a :class:`TableRollouts` at the same time; the same rollouts, table for table,
  as one :class:`TableRollouts` of all the tables (a table's seeds and generator depend on its
  index, never on the split; ``tests/test_ppo_fast.py`` compares them).

A rollout is a :class:`Batch` of ``(n_steps, n_tables, ...)`` arrays. The learner computes the
values and log-probabilities of the actions itself, in one batched torch pass.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import signal
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from uno_mk_env.agents.numpy_actor import numpy_actor
from uno_mk_env.agents.threads import set_thread_policy
from uno_mk_env.engine.seeding import Stream, derive_seed
from uno_mk_env.errors import one_line

from .args import TrainingError
from .envs import Tables
from .mixed_tables import check_training_tables, make_training_tables

__all__ = ["Batch", "Layers", "ProcessRollouts", "TableRollouts", "sample_actions"]

#: A policy's layers: ``(W, b)`` numpy pairs, ``W`` of shape ``(inputs, outputs)``.
Layers = list[tuple[np.ndarray, np.ndarray]]


@dataclass
class Batch:
    """One rollout: ``obs``/``masks``/``actions``/``rewards``/``dones`` of shape
    ``(n_steps, n_tables, ...)`` (``dones[t]``: the episode ended with action ``t``; the
    next observation is already the next episode's), the observations and masks the next
    rollout starts from (``last_obs``, ``last_masks``), the ended episodes ``(step, table,
    return, length, place)`` and the final observations of truncated ones ``(step, table,
    obs)``."""

    obs: np.ndarray
    masks: np.ndarray
    actions: np.ndarray
    rewards: np.ndarray
    dones: np.ndarray
    last_obs: np.ndarray
    last_masks: np.ndarray
    episodes: list[tuple[int, int, float, int, int]] = field(default_factory=list)
    truncated: list[tuple[int, int, np.ndarray]] = field(default_factory=list)

    @staticmethod
    def join(parts: list[Batch], offsets: list[int]) -> Batch:
        """The batches of consecutive table ranges (starting at ``offsets``) as one."""
        def cat(name: str, axis: int) -> np.ndarray:
            return np.concatenate([getattr(p, name) for p in parts], axis=axis)

        return Batch(
            cat("obs", 1), cat("masks", 1), cat("actions", 1), cat("rewards", 1), cat("dones", 1),
            cat("last_obs", 0), cat("last_masks", 0),
            sorted((s, off + j, r, n, pl) for p, off in zip(parts, offsets)
                   for s, j, r, n, pl in p.episodes),
            sorted(((s, off + j, o) for p, off in zip(parts, offsets)
                    for s, j, o in p.truncated), key=lambda x: (x[0], x[1])))


def sample_actions(logits: np.ndarray, masks: np.ndarray, uniforms: np.ndarray) -> np.ndarray:
    """One action per row from the masked softmax of ``logits`` by inverse CDF:
    ``uniforms`` in (0, 1] (one per row) picks the first action whose cumulative probability
    reaches it; an illegal action has probability 0 and is never picked."""
    z = np.where(masks, logits.astype(np.float64), -np.inf)
    p = np.exp(z - z.max(axis=1, keepdims=True))
    cdf = np.cumsum(p, axis=1)
    return (cdf < uniforms[:, None] * cdf[:, -1:]).sum(axis=1)


class TableRollouts:
    """Tables ``first … first + count - 1`` of the training tables ``tables``
    (:func:`uno_mk_env.training.mixed_tables.make_training_tables`) and the rollouts they
    play; ``league`` is their self-play league (``league.add(path, seed)``)."""

    def __init__(self, tables: Tables, count: int, first: int = 0) -> None:
        self.venv, self.league = make_training_tables(tables, count, first)
        self.first = first
        self.rngs = [np.random.default_rng(derive_seed(tables.seed, Stream.ACTIONS, first + j))
                     for j in range(count)]
        self.obs: np.ndarray | None = None

    def reset(self, seed: int) -> None:
        """Deals every table (table ``i`` seeded ``seed + i``)."""
        self.obs, _ = self.venv.reset(seed=[seed + self.first + j for j in range(len(self.rngs))])

    def rollout(self, layers: Layers, activation: str, scale: np.ndarray | None,
                n_steps: int) -> Batch:
        """``n_steps`` steps of every table, the learner playing the actor ``layers``
        (:func:`uno_mk_env.agents.numpy_actor.numpy_actor`)."""
        if self.obs is None:
            raise RuntimeError("reset() needs to be called before rollout()")
        actor = numpy_actor(layers, activation, scale)
        n = len(self.rngs)
        obs = np.zeros((n_steps, n, self.obs.shape[1]), np.float32)
        masks = np.zeros((n_steps, n, self.venv.action_masks().shape[1]), np.bool_)
        actions = np.zeros((n_steps, n), np.int64)
        rewards = np.zeros((n_steps, n), np.float32)
        dones = np.zeros((n_steps, n), np.bool_)
        batch = Batch(obs, masks, actions, rewards, dones, self.obs, self.obs)
        for t in range(n_steps):
            obs[t], masks[t] = self.obs, self.venv.action_masks()
            uniforms = np.array([1.0 - rng.random() for rng in self.rngs])
            actions[t] = sample_actions(actor.logits(obs[t]), masks[t], uniforms)
            self.obs, rewards[t], term, trunc, info = self.venv.step(actions[t])
            dones[t] = term | trunc
            for j in np.flatnonzero(dones[t]):
                ep = info["uno_episode"]  # uno_mk_env.envs.vector.STATS_KEY
                batch.episodes.append((t, int(j), float(ep["r"][j]), int(ep["l"][j]),
                                       int(ep["place"][j])))
                if trunc[j] and not term[j]:
                    batch.truncated.append((t, int(j), info["final_obs"][j]))
        batch.last_obs, batch.last_masks = self.obs.copy(), self.venv.action_masks()
        return batch

    def close(self) -> None:
        """Nothing to release (the tables are in this process)."""


def _worker(conn: Any, tables: Tables, first: int, count: int) -> None:
    """A worker process: a :class:`TableRollouts` of tables ``first … first + count - 1``;
    answers ``reset``, ``rollout``, ``add`` (a snapshot) and ``close`` on ``conn``, each reply
    ``(True, value)``, or ``(False, one line)`` when the request failed (then it exits).

    It ignores SIGINT (Ctrl-C reaches the whole process group: the learner decides how the run
    ends) and exits without a word when its pipe closes (the learner ended, or was killed)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    set_thread_policy(1)  # parallel work is the workers': one thread each, sleeping when idle
    try:
        mine = TableRollouts(tables, count, first)
        while True:
            command, payload = conn.recv()
            reply: Any = None
            if command == "reset":
                mine.reset(payload)
            elif command == "rollout":
                reply = mine.rollout(*payload)
            elif command == "add":
                reply = mine.league.add(*payload)
            else:
                return
            conn.send((True, reply))
    except (EOFError, OSError):  # the learner is gone: nobody to tell
        return
    except Exception as e:  # noqa: BLE001 - any failure goes back to the learner as one line
        with contextlib.suppress(OSError):
            conn.send((False, f"{type(e).__name__}: {one_line(str(e))}"))
    finally:
        conn.close()


@contextlib.contextmanager
def _sigint_ignored() -> Iterator[None]:
    """SIGINT ignored while worker processes start: a spawned interpreter inherits the
    disposition, so a Ctrl-C while it imports is not a ``KeyboardInterrupt`` traceback."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


class ProcessRollouts:
    """The training tables split over ``workers`` spawned processes playing their shares of
    each rollout at the same time (see the module docstring); ``reset``, ``rollout``,
    ``league.add`` and ``close`` as :class:`TableRollouts`. A worker that fails or dies ends the
    run with one error line (its pipe breaks), never a hang; the workers ignore Ctrl-C and end
    quietly when the learner closes them or dies."""

    def __init__(self, tables: Tables, num_envs: int, workers: int) -> None:
        check_training_tables(tables)
        ctx = multiprocessing.get_context("spawn")
        bounds = np.linspace(0, num_envs, workers + 1).astype(int)
        self._offsets = [int(a) for a, b in zip(bounds[:-1], bounds[1:]) if b > a]
        sizes = [int(b - a) for a, b in zip(bounds[:-1], bounds[1:]) if b > a]
        self._conns: list[Any] = []
        self._procs: list[Any] = []
        with _sigint_ignored():
            for first, count in zip(self._offsets, sizes):
                parent, child = ctx.Pipe()
                proc = ctx.Process(target=_worker, args=(child, tables, first, count),
                                   daemon=True)
                proc.start()
                child.close()
                self._conns.append(parent)
                self._procs.append(proc)
        self.league = self  # league.add(path, seed)

    def _ask(self, command: str, payload: Any) -> list[Any]:
        try:
            for conn in self._conns:
                conn.send((command, payload))
            replies = [conn.recv() for conn in self._conns]
        except (EOFError, OSError):  # a broken pipe: the worker is gone
            for proc in self._procs:
                proc.join(timeout=1)
            codes = [p.exitcode for p in self._procs if not p.is_alive()]
            raise TrainingError(f"an env worker process died (exit codes {codes})") from None
        failed = [value for ok, value in replies if not ok]
        if failed:
            raise TrainingError(f"an env worker process failed: {failed[0]}")
        return [value for _, value in replies]

    def add(self, path: str, seed: int) -> int:
        return int(self._ask("add", (path, seed))[0])

    def reset(self, seed: int) -> None:
        self._ask("reset", seed)

    def rollout(self, layers: Layers, activation: str, scale: np.ndarray | None,
                n_steps: int) -> Batch:
        return Batch.join(self._ask("rollout", (layers, activation, scale, n_steps)),
                          self._offsets)

    def close(self) -> None:
        """Asks every worker to end and closes its pipe (a worker still busy with a rollout
        then finds the pipe closed and ends too); one that has not ended within a few seconds
        is killed."""
        for conn in self._conns:
            with contextlib.suppress(OSError):
                conn.send(("close", None))
            conn.close()
        for proc in self._procs:
            proc.join(timeout=5)
            if proc.is_alive():
                proc.kill()
                proc.join()
        self._conns, self._procs = [], []
