"""One table of the browser game: people and agents, game after game, played by the match
driver the tournaments use, recorded as the replays are.

The server holds the game. Each game runs in its own thread through
:func:`uno_mk_env.evaluation.replay.record_game` (which plays it with
:func:`~uno_mk_env.evaluation.match.play_match` and records it); a seat played by a person is a
:class:`SocketAgent`, whose ``act`` waits for that person's answer. The table's observer builds
every receiver's frame (:mod:`uno_mk_env.serve.frames`) before each decision and pushes it to
the receiver's listeners: it never reads anything but the receiver's view and the events it may
see. The socket side (:mod:`uno_mk_env.serve.app`) only calls :meth:`Table.submit` and
:meth:`Table.again`, which check everything before they change anything.

After each game the recording (``uno-mk replay --from`` opens it) and the people's decisions as
dataset rows (:mod:`uno_mk_env.serve.dataset`) are written to the table's folder, and each
person's result is scored against the reference agent in the same seat
(:mod:`uno_mk_env.serve.scoring`).
"""

from __future__ import annotations

import queue
import secrets
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from uno_mk_env import Game, PlayerView, Rules
from uno_mk_env import actions as A
from uno_mk_env.agents.base import Agent, build_agent
from uno_mk_env.engine.seeding import derive_seed
from uno_mk_env.evaluation.match import MatchStopped
from uno_mk_env.evaluation.replay import record_game, recording, seat_names, write_json

from .dataset import rows_for_game, write_rows
from .frames import error_frame, frame_text, last_text, sees_now, state_frame
from .scoring import DuplicateScore, duplicate_score, session_summary
from .twins import Twin

__all__ = ["SocketAgent", "Table", "TableConfig"]

#: Listener of a receiver: called with each frame's JSON text (from the game's thread).
Listener = Callable[[str], None]


@dataclass(frozen=True)
class TableConfig:
    """A table: ``rules`` (its ``num_players`` seats), ``humans`` (the seats played from a
    browser), ``agents`` (one spec per other seat, in seat order), ``seed`` (game ``k`` is dealt
    with ``seed + k``; agent ``s`` of it seeded with ``derive_seed(seed + k, s)``), ``pause``
    (seconds shown before each agent's public decision), ``reference`` (the agent of duplicate
    scoring), ``out`` (the folder of recordings and rows; ``None``: nothing written),
    ``max_steps`` (decisions per round before a game is capped), ``twin`` (tests: the first
    game is world B of :mod:`uno_mk_env.serve.twins`, the agent seats replay world A)."""

    rules: Rules
    humans: tuple[int, ...]
    agents: tuple[str, ...]
    seed: int = 0
    pause: float = 0.8
    reference: str = "strategic"
    out: Path | None = None
    max_steps: int = 5000
    twin: Twin | None = None


@dataclass
class _Pending:
    ask: int
    legal: frozenset[int]
    answer: queue.Queue[int] = field(default_factory=lambda: queue.Queue(maxsize=1))


class SocketAgent(Agent):
    """A seat played by a person in a browser: :meth:`act` waits for :meth:`Table.submit`."""

    name = "human"
    needs_observation = True  # the dataset rows keep the observation

    def __init__(self, table: Table, seat: int) -> None:
        super().__init__(None)
        self.table = table
        self.seat = seat

    def act(self, observation: np.ndarray | None, action_mask: np.ndarray,
            view: PlayerView) -> int:
        return self.table._wait_for(self.seat, observation, action_mask, view)


class Table:
    """One table (see the module docstring). Thread-safe: the game runs in its own thread; the
    socket side calls :meth:`listen`, :meth:`submit` and :meth:`again`."""

    def __init__(self, config: TableConfig, table_id: str | None = None) -> None:
        n = config.rules.num_players
        others = [s for s in range(n) if s not in config.humans]
        if not config.humans or len(set(config.humans)) != len(config.humans) or any(
                not 0 <= s < n for s in config.humans):
            raise ValueError(f"humans must be distinct seats 0-{n - 1}, got {config.humans}")
        if len(config.agents) != len(others):
            raise ValueError(f"{len(others)} agent seats need {len(others)} specs, got "
                             f"{len(config.agents)}")
        self.config = config
        self.id = table_id or secrets.token_hex(4)
        self.n = n
        self.tokens = {s: secrets.token_urlsafe(24) for s in config.humans}
        self.spectator_token = secrets.token_urlsafe(24)
        labels = ["human"] * n
        self.players: list[Agent] = [SocketAgent(self, s) for s in range(n)]
        for s, spec in zip(others, config.agents):
            labels[s] = spec
            self.players[s] = build_agent(spec, seed=0) if config.twin is None else \
                config.twin.agent(s)
        self.labels = labels
        self.names = seat_names(labels)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._listeners: dict[int | None, set[Listener]] = {r: set() for r in self._receivers()}
        self._latest: dict[int | None, str] = {}
        self._pending: dict[int, _Pending] = {}  # decisions open to submit
        self._asking: dict[int, _Pending] = {}  # the latest decision asked of each seat
        self._asked = dict.fromkeys(config.humans, 0)
        self._starts: dict[int | None, int] = {}
        self._logs: dict[int | None, list[str]] = {}
        self._rows: list[dict[str, Any]] = []
        self.scores: list[DuplicateScore] = []
        self.games = 0  #: games started
        self.game: Game | None = None  #: the game being played (read it only while it waits)
        #: the latest finished game's recording (all a finished game keeps in memory)
        self.recording: dict[str, Any] | None = None
        self.status = "new"  # new, playing, over, stopped, failed
        self.error: str | None = None
        self.last_activity = time.monotonic()
        self._thread: threading.Thread | None = None
        self._again = False  # "again" asked while the finished game is saved and scored

    # ---------------------------------------------------------------- the socket side
    def _receivers(self) -> list[int | None]:
        """Who may be sent frames: the people's seats and the spectator (an agent's seat has no
        link, so no frame is built for it)."""
        return [*self.config.humans, None]

    def listen(self, receiver: int | None, listener: Listener) -> Callable[[], None]:
        """Registers ``listener`` for ``receiver``'s frames, sends it the latest one at once, and
        returns the function that unregisters it."""
        with self._lock:
            self._listeners[receiver].add(listener)
            latest = self._latest.get(receiver)
            self.last_activity = time.monotonic()
        if latest is not None:
            listener(latest)

        def stop() -> None:
            with self._lock:
                self._listeners[receiver].discard(listener)
                self.last_activity = time.monotonic()

        return stop

    def listeners(self) -> int:
        with self._lock:
            return sum(len(v) for v in self._listeners.values())

    def submit(self, seat: int, ask: int, action: int) -> str | None:
        """A person's decision: ``None`` when taken, else why it is refused (nothing changes)."""
        with self._lock:
            self.last_activity = time.monotonic()
            pending = self._pending.get(seat)
            if pending is None:
                return "it is not your decision now"
            if ask != pending.ask:
                return f"that answers decision {ask}, but decision {pending.ask} is open"
            if action not in pending.legal:
                return (f"action {action} is not one of the decisions offered "
                        f"({', '.join(map(str, sorted(pending.legal)))})")
            del self._pending[seat]
            pending.answer.put_nowait(action)
        return None

    def again(self, seat: int) -> str | None:
        """A person asks for the next game: ``None`` when it starts, else why not."""
        with self._lock:
            finishing = self.status == "playing" and self.game is not None and (
                self.game.game_over)
            if finishing:  # saved and scored first: the game's thread starts the next one
                self._again = True
                return None
            if self.status != "over":
                return "a new game starts only once this one is over"
        self.start()
        return None

    # ---------------------------------------------------------------- the games
    def start(self) -> None:
        """Starts the next game in its own thread."""
        with self._lock:
            if self.status in ("playing", "stopped"):
                return
            self.status = "playing"
            index = self.games
            self.games += 1
            self._rows = []
        self._thread = threading.Thread(target=self._play, args=(index,), daemon=True,
                                        name=f"uno-mk-table-{self.id}-{index}")
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        """Ends the table: a game in progress stops (it is not saved); waits for its thread."""
        with self._lock:
            self.status = "stopped"
        self._stop.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    def wait(self, timeout: float | None = None) -> None:
        """Waits for the current game's thread (tests)."""
        if self._thread is not None:
            self._thread.join(timeout)

    def seeds(self, index: int) -> tuple[int, list[int]]:
        """The deal seed of game ``index`` and its agents' seeds."""
        game_seed = self.config.seed + index
        return game_seed, [derive_seed(game_seed, s) for s in range(self.n)]

    def _play(self, index: int) -> None:
        cfg = self.config
        game_seed, agent_seeds = self.seeds(index)
        watcher = _Watcher(self, cfg.twin if index == 0 else None)
        try:
            game = record_game(self.players, cfg.rules, game_seed, agent_seeds, self.labels,
                               cfg.max_steps, title=f"table {self.id}, game {index + 1}",
                               observer=watcher)
        except MatchStopped:
            return
        except Exception as e:  # an agent failed: the table says so and stops
            with self._lock:
                self.status, self.error = "failed", f"{type(e).__name__}: {e}"
            # The message may name an agent's legal actions (hidden): the browsers get none of it.
            self._push_all(frame_text(error_frame("an agent failed; this table has stopped")))
            return
        final = watcher.game
        assert final is not None
        self._publish(final)
        self._save(index, game, final)
        session = self._score(index, game_seed, agent_seeds, final) if len(cfg.humans) == 1 \
            else None
        with self._lock:
            again, self._again = self._again, False
            if self.status == "playing":
                self.status = "over"
            self.game, self.recording, self._rows = None, game, []
        if session is not None:
            self._push(cfg.humans[0], session)
        if again:
            self.start()

    def _save(self, index: int, game: dict[str, Any], final: Game) -> None:
        out = self.config.out
        if out is None:
            return
        stem = out / f"table-{self.id}-game-{index + 1}"
        write_json(recording([game]), stem.with_suffix(".json"))
        write_rows(rows_for_game(self._rows, final, self.id, index), stem.with_suffix(".jsonl"))

    def _score(self, index: int, game_seed: int, agent_seeds: Sequence[int], final: Game) -> str:
        """Duplicate scoring of the one person's game: the session frame to send them."""
        seat = self.config.humans[0]
        specs = [self.config.reference if s == seat else self.labels[s] for s in range(self.n)]
        score = duplicate_score(final, seat, specs, self.config.rules, game_seed, agent_seeds,
                                self.config.max_steps)
        self.scores.append(score)
        frame = {"type": "session", "game": index + 1, "reference": self.config.reference,
                 "last": score.text(self.config.reference),
                 "summary": session_summary(self.scores, self.config.reference)}
        return frame_text(frame)

    # ---------------------------------------------------------------- the game's thread
    def _wait_for(self, seat: int, observation: np.ndarray | None, mask: np.ndarray,
                  view: PlayerView) -> int:
        pending = self._asking[seat]  # set by _before (submit may already have answered it)
        while True:
            try:
                action = pending.answer.get(timeout=0.25)
                break
            except queue.Empty:
                if self._stop.is_set():
                    raise MatchStopped("the table was closed") from None
        self._rows.append({"seat": seat, "view": view, "observation": observation,
                           "mask": mask, "action": action, "ask": pending.ask})
        return action

    def _before(self, game: Game, seat: int) -> None:
        if seat in self._asked:
            legal = frozenset(game.legal_action_ids())
            with self._lock:
                self._asked[seat] += 1
                self._pending[seat] = self._asking[seat] = _Pending(self._asked[seat], legal)
        self._publish(game)
        if seat not in self._asked and game.phase != A.PLAY_DRAWN:
            self._stop.wait(self.config.pause)  # a visible pause before an agent's move

    def _publish(self, game: Game) -> None:
        for receiver in self._receivers():
            if not sees_now(game, receiver):
                continue
            start = self._starts.get(receiver, game.events_start)
            last = last_text(game, start, receiver, self.names)
            self._starts[receiver] = game.event_count
            log = self._logs.setdefault(receiver, [])
            if last:
                log.append(last)
                del log[:-200]
            offer = receiver in self._asked
            ask = self._asked.get(receiver, 0) if receiver is not None else 0
            frame = state_frame(game, receiver, self.names, last, log, ask, offer)
            self._push(receiver, frame_text(frame))

    def _push(self, receiver: int | None, text: str) -> None:
        with self._lock:
            self._latest[receiver] = text
            listeners = list(self._listeners[receiver])
        for listener in listeners:
            listener(text)

    def _push_all(self, text: str) -> None:
        for receiver in self._receivers():
            self._push(receiver, text)


class _Watcher:
    """The match observer of a table's game (it reads the game, never changes it; a twin's
    exchanges are applied to the deal before anything is shown)."""

    def __init__(self, table: Table, twin: Twin | None) -> None:
        self.table = table
        self.twin = twin
        self.game: Game | None = None

    def start(self, game: Game) -> None:
        if self.twin is not None:
            self.twin.apply(game)
        self.game = self.table.game = game
        self.table._starts.clear()
        self.table._logs.clear()

    def before(self, game: Game, seat: int) -> None:
        self.table._before(game, seat)

    def after(self, game: Game, seat: int, action: int) -> None:
        pass
