"""Replays: record games decision by decision, and show them in a browser.

A *recording* is plain JSON (never a pickle): every decision of a game with the table before it
as a spectator sees it and as each seat sees it, the legal actions, the chosen action, the
policy's probabilities when the agent gives them (``action_probabilities(observation, mask)``,
as the ``ppo`` agent does) and what the decision caused, as one line of the event log per view.
Everything comes from the engine: each seat's part is built from ``game.view(seat)`` and
``game.events_for(seat)`` only (:func:`uno_mk_env.render.table.table_data`), the spectator's
from every seat's view and the full log.

:func:`~uno_mk_env.evaluation.replay_page.replay_html` turns a recording into one self-contained
HTML page (inline CSS, JS and SVG, no network access, opens from disk): the table drawn as the
image renderer draws it, buttons, arrow keys and a slider to step through every decision, the legal
actions with the chosen one highlighted (and the probabilities), the event log, and a choice
between the spectator's view and any seat's view. A seat's view reads only that seat's part of the
recording, so it shows only what that seat may know (the legal actions and probabilities of a
decision only to the seat that made it).

Command line: ``uno-mk replay`` (``uno_mk_env.cli.replay``); tournaments record their first
games with ``run_tournament(..., replays=N)`` (``uno-mk tournament --replays N``).

Format (``FORMAT``, version ``VERSION``)::

    {"format": "uno-mk-replay", "version": 1, "env_version": "...", "games": [
      {"title", "seed", "rules", "players", "names", "agents", "agent_seeds", "max_steps",
       "result": {"winner", "scores", "decisions", "end"},
       "steps": [
         {"decision", "actor", "phase"[, "hidden": true],
          "spectator": {"table", "events", "legal": [[id, label], ...], "action", "probs"},
          "seats": [{"table", "events"[, "legal", "action", "probs"]}, ...]},
         ...]}]}

``steps[i]`` shows the table before decision ``i`` (``table.last`` is the line of the decision
before it) and ``events`` is what decision ``i`` caused; the last step is the final table, with
``actor`` -1 and no action. Only the deciding seat's entry in ``seats`` has ``legal``,
``action`` and ``probs``.

Hidden decisions (R4.2): a ``KEEP`` step has ``"hidden": true``. Only its actor (and the
spectator) may know of it: other seats cannot tell it from a drawn card that could not be played,
which ends the turn without a decision. Their entries of the draw's step hold the events of the
draw and of the ``KEEP`` together, their ``table.last`` after it is that line, and a seat's view
of the replay skips a hidden step the seat did not make and numbers its steps by
``table.decision`` (``Game.public_steps``). So everything a seat's view shows
(:func:`seat_steps`) is the same whether another seat kept a drawn card or could not play it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from uno_mk_env import Game, Rules
from uno_mk_env import __version__ as ENV_VERSION
from uno_mk_env import actions as A
from uno_mk_env.agents.base import Agent, AgentError, build_agent
from uno_mk_env.engine.observation import action_mask, encode
from uno_mk_env.engine.phases import PHASE_NAMES
from uno_mk_env.engine.seeding import derive_seed
from uno_mk_env.evaluation.match import MatchObserver, make_rules, play_match
from uno_mk_env.evaluation.replay_format import (
    FORMAT,
    MAX_REPLAY_GAMES,
    VERSION,
    ReplayError,
)
from uno_mk_env.files import atomic_write_text, no_space
from uno_mk_env.render.table import last_decision_text, table_data
from uno_mk_env.render.text import action_label

__all__ = [
    "DEFAULT_MAX_STEPS", "action_label", "record_game", "record_games", "record_tournament_games",
    "recording", "seat_names", "seat_steps", "select_games", "write_json",
]

DEFAULT_MAX_STEPS = 5000  #: as the tournament: decisions per round before the game is stopped


def seat_names(labels: Sequence[str]) -> list[str]:
    """Display names ``P0 greedy``, ``P1 ppo:ppo_2p.npz`` (a model spec keeps its file name)."""
    out = []
    for s, label in enumerate(labels):
        name, sep, arg = label.partition(":")
        short = f"{name}:{Path(arg).name}" if sep and "/" in arg else label
        out.append(f"P{s} {short}")
    return out


def _probabilities(agent: Agent, game: Game, legal: tuple[int, ...]) -> list[float] | None:
    """The agent's probability of each legal action, when it has ``action_probabilities``."""
    method = getattr(agent, "action_probabilities", None)
    if method is None:
        return None

    probs = np.asarray(method(encode(game.view(game.current_player)), action_mask(legal)))
    return [round(float(probs[a]), 4) for a in legal]


def _tables(game: Game, names: Sequence[str], last: Sequence[str]) -> list[dict[str, Any]]:
    """Spectator table, then one per seat (``last[0]`` spectator, ``last[1 + s]`` seat s)."""
    n = game.num_players
    return [table_data(game, None, names, last[0])] + [
        table_data(game, s, names, last[1 + s]) for s in range(n)
    ]


class _Recorder:
    """The match observer that records every decision (the format in the module docstring).

    A ``KEEP`` (R4.2) is seen only by the seat that kept the card: other seats cannot tell it
    from a drawn card that could not be played, which ends the turn with no decision. So, as
    :class:`uno_mk_env.render.text.RecentDecisions` does, the other seats' event lines join the
    ``KEEP``'s events to the decision before it (the draw), and the ``KEEP``'s step is marked
    ``"hidden"``: a seat's view of the replay skips it unless the seat made it.
    """

    def __init__(self, players: Sequence[Agent], names: Sequence[str]) -> None:
        self.players = players
        self.names = names
        self.lasts: list[str] = []
        self.steps: list[dict[str, Any]] = []
        self._before: tuple[tuple[int, ...], list[dict[str, Any]], str, Any, int] | None = None
        self._public_start = 0  # game.event_count before the latest decision others see

    def start(self, game: Game) -> None:
        self._public_start = game.events_start
        self.lasts = self._texts(game, self._public_start)

    def _texts(self, game: Game, start: int) -> list[str]:
        """The events since event ``start`` as one line: the spectator's, then each seat's."""
        names = self.names
        return [last_decision_text(game, start, None, names)] + [
            last_decision_text(game, start, s, names) for s in range(game.num_players)
        ]

    def before(self, game: Game, seat: int) -> None:
        legal = game.legal_action_ids()
        tables = _tables(game, self.names, self.lasts)
        probs = _probabilities(self.players[seat], game, legal)
        self._before = (legal, tables, game.phase_name, probs, game.event_count)

    def after(self, game: Game, seat: int, action: int) -> None:
        assert self._before is not None
        legal, tables, phase, probs, start = self._before
        n = game.num_players
        names = self.names
        hidden = action == A.KEEP
        self.lasts = self._texts(game, start)
        events = list(self.lasts)
        if hidden:  # other seats: the draw's events with the KEEP's, on the draw's step
            joined = self._texts(game, self._public_start)
            public = next((st for st in reversed(self.steps) if not st.get("hidden")), None)
            for s in range(n):
                if s != seat:
                    self.lasts[1 + s] = joined[1 + s]
                    events[1 + s] = ""  # they see nothing of it
                    if public is not None:
                        public["seats"][s]["events"] = joined[1 + s]
        else:
            self._public_start = start
        decision = {"legal": [[a, action_label(a, seat, names)] for a in legal],
                    "action": action, "probs": probs}
        seats = []
        for s in range(n):
            entry: dict[str, Any] = {"table": tables[1 + s], "events": events[1 + s]}
            if s == seat:
                entry.update(decision)
            seats.append(entry)
        self.steps.append({
            "decision": len(self.steps), "actor": seat, "phase": phase,
            **({"hidden": True} if hidden else {}),
            "spectator": {"table": tables[0], "events": self.lasts[0], **decision},
            "seats": seats,
        })

    def finish(self, game: Game) -> list[dict[str, Any]]:
        """The steps, with the final table as the last one."""
        n = game.num_players
        tables = _tables(game, self.names, self.lasts)
        self.steps.append({
            "decision": len(self.steps), "actor": -1, "phase": PHASE_NAMES[game.phase],
            "spectator": {"table": tables[0], "events": ""},
            "seats": [{"table": tables[1 + s], "events": ""} for s in range(n)],
        })
        return self.steps


class _Both:
    """Two match observers, called in order."""

    def __init__(self, first: MatchObserver, second: MatchObserver) -> None:
        self.observers = (first, second)

    def start(self, game: Game) -> None:
        for o in self.observers:
            o.start(game)

    def before(self, game: Game, seat: int) -> None:
        for o in self.observers:
            o.before(game, seat)

    def after(self, game: Game, seat: int, action: int) -> None:
        for o in self.observers:
            o.after(game, seat, action)


def record_game(
    players: Sequence[Agent],
    rules: Rules,
    game_seed: int,
    agent_seeds: Sequence[int | None] | None = None,
    labels: Sequence[str] | None = None,
    max_steps: int = DEFAULT_MAX_STEPS,
    title: str | None = None,
    allow_cheating: bool = False,
    observer: MatchObserver | None = None,
) -> dict[str, Any]:
    """Plays one game through the match driver, as the tournament does
    (:func:`uno_mk_env.evaluation.match.play_match`: agents reset with their seeds,
    ``Game(rules, seed=game_seed)``, a round beyond ``max_steps`` decisions stops the game,
    cheating agents only with ``allow_cheating``) and records it (one game of the format in the
    module docstring). ``observer`` also watches the game, after the recorder at each call
    (the browser table, :mod:`uno_mk_env.serve`, shows the game as it is recorded).

    Raises:
        AgentError: an agent failed (names it and the seat).
        AgentSpecError: a cheating agent without ``allow_cheating``.
        MatchStopped: an agent ended the game.
    """
    n = rules.num_players
    if len(players) != n:
        raise ValueError(f"{len(players)} players given for a table of {n}")
    labels = list(labels) if labels is not None else [a.name for a in players]
    names = seat_names(labels)
    seeds = list(agent_seeds) if agent_seeds is not None else [None] * n
    recorder = _Recorder(players, names)
    watcher: MatchObserver = recorder if observer is None else _Both(recorder, observer)
    outcome = play_match(players, rules, game_seed, seeds, labels, max_steps, allow_cheating,
                         observer=watcher)
    g = outcome.game
    steps = recorder.finish(g)
    return {
        "title": title or f"{n} players: {', '.join(labels)} (seed {game_seed})",
        "seed": game_seed,
        "rules": rules.to_dict(),
        "players": n,
        "names": names,
        "agents": labels,
        "agent_seeds": seeds,
        "max_steps": max_steps,
        "result": {
            "winner": outcome.winner, "scores": list(g.scores), "decisions": g.num_steps,
            "end": outcome.end,
        },
        "steps": steps,
    }


def record_games(
    agent_specs: Sequence[str],
    num_players: int,
    seed: int = 0,
    rules: Mapping[str, Any] | Rules | None = None,
    games: int = 1,
    max_steps: int = DEFAULT_MAX_STEPS,
) -> dict[str, Any]:
    """A recording of ``games`` games of the agents ``agent_specs`` (cycled over the seats:
    ``greedy,random`` at 3 players seats ``greedy, random, greedy``).

    Game ``i`` is dealt with seed ``seed + i`` (``Game(rules, seed=seed + i)``, the deal of
    ``uno-mk play --seed`` with that seed, and game 0 of a recording with that seed); the agent
    at seat ``s`` is seeded with :func:`uno_mk_env.engine.seeding.derive_seed` ``(seed + i, s)``, so
    the same arguments give the same recording.

    Raises:
        AgentSpecError: an agent spec cannot be built. RulesError: a bad rule option.
        ValueError: bad ``games``/``seed``/``max_steps``. AgentError: an agent failed.
    """

    rules_obj = make_rules(rules, num_players)
    for name, value, low in (("games", games, 1), ("seed", seed, 0), ("max_steps", max_steps, 1)):
        if not isinstance(value, int) or isinstance(value, bool) or value < low:
            raise ValueError(f"{name} must be an int ≥ {low}, got {value!r}")
    if games > MAX_REPLAY_GAMES:
        raise ValueError(f"games must be at least 1 and at most {MAX_REPLAY_GAMES}, got {games}")
    if not agent_specs:
        raise ValueError("no agents given")
    specs = [agent_specs[s % len(agent_specs)] for s in range(num_players)]
    out = []
    for i in range(games):
        # Not derive_seed(seed, i): the deal seed is the public contract above (``--seed S``
        # game i is ``--seed S+i`` game 0), printed in the CLI help and kept in recordings.
        game_seed = seed + i
        players = [build_agent(spec, seed=0) for spec in specs]
        agent_seeds = [derive_seed(game_seed, s) for s in range(num_players)]
        out.append(record_game(players, rules_obj, game_seed, agent_seeds, specs, max_steps))
    return recording(out)


def recording(games: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The top-level recording holding ``games`` (as :func:`record_game` makes them)."""
    return {"format": FORMAT, "version": VERSION, "env_version": ENV_VERSION,
            "games": list(games)}


# ------------------------------------------------------------------------------ reading
def seat_steps(game: Mapping[str, Any], seat: int) -> list[dict[str, Any]]:
    """What ``seat``'s view of the replay page shows of the recorded ``game``, step by step
    (the viewer's JavaScript reads the same): ``actor``, ``phase`` and the seat's entry of every
    step but the hidden ones of other seats (module docstring). Its steps are numbered by
    ``table.decision`` and its decision count is the final table's."""
    return [{"actor": step["actor"], "phase": step["phase"], **step["seats"][seat]}
            for step in game["steps"] if not step.get("hidden") or step["actor"] == seat]


def select_games(data: Mapping[str, Any], indices: Sequence[int] | None) -> dict[str, Any]:
    """The recording with only the games ``indices`` (all when ``None``).

    Raises:
        ReplayError: an index outside the recording.
    """
    games = data["games"]
    if indices is None:
        return dict(data)
    for i in indices:
        if not 0 <= i < len(games):
            raise ReplayError(f"game {i} is not in the recording (games 0-{len(games) - 1})")
    return {**data, "games": [games[i] for i in indices]}


def write_json(data: Mapping[str, Any], path: str | Path) -> Path:
    """Writes a recording as JSON (parents created); returns the path.

    Raises:
        ReplayError: ``path`` cannot be written.
        OSError: no space for it (:func:`uno_mk_env.files.no_space`).
    """
    target = Path(path).expanduser()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(target, json.dumps(data, separators=(",", ":")) + "\n")
    except OSError as e:
        if no_space(e):  # not a bad path: the command line says so, exit 1
            raise
        raise ReplayError(f"cannot write {str(target)!r}: {e.strerror or e}") from None
    return target


# --------------------------------------------------------------------------- tournaments
def record_tournament_games(
    tasks: Sequence[Any],
    entrants: Sequence[tuple[str, str]],
    rules: Rules,
    max_steps: int,
    records: Sequence[Any],
    allow_cheating: bool = False,
) -> list[dict[str, Any]]:
    """Records the tournament games ``tasks`` again, exactly as the tournament played them
    (same deal seed, same agent seeds; agents are deterministic given their seed; cheating
    agents as the tournament admitted them), and checks each against its ``records`` entry
    (winner and number of decisions).

    Raises:
        AgentError: an agent failed, or a game did not replay as it was played (an agent that
            is not deterministic given its seed).
    """
    by_index = {r.index: r for r in records}
    out = []
    for task in tasks:
        labels = [entrants[e][0] for e in task.seats]
        players = [build_agent(entrants[e][1], seed=0) for e in task.seats]
        game = record_game(players, rules, task.game_seed, task.agent_seeds, labels, max_steps,
                           title=f"game {task.index} (deal {task.deal}): {', '.join(labels)}",
                           allow_cheating=allow_cheating)
        record = by_index.get(task.index)
        result = game["result"]
        if record is not None and (result["winner"], result["decisions"]) != (
                record.winner, record.decisions):
            raise AgentError(
                f"game {task.index} did not replay as it was played (winner {record.winner}, "
                f"{record.decisions} decisions; replayed: winner {result['winner']}, "
                f"{result['decisions']} decisions): an agent is not deterministic given its seed"
            )
        game["index"] = task.index
        out.append(game)
    return out

