"""Replays: record games decision by decision, and show them in a browser.

A *recording* is plain JSON (never a pickle): every decision of a game with the table before it
as a spectator sees it and as each seat sees it, the legal actions, the chosen action, the
policy's probabilities when the agent gives them (``action_probabilities(observation, mask)``,
as the ``ppo`` agent does) and what the decision caused, as one line of the event log per view.
Everything comes from the engine: each seat's part is built from ``game.view(seat)`` and
``game.events_for(seat)`` only (:func:`uno_mk_env.render_image.table_data`), the spectator's
from every seat's view and the full log.

:func:`replay_html` turns a recording into one self-contained HTML page (inline CSS, JS and SVG,
no network access, opens from disk): the table drawn as the image renderer draws it, buttons,
arrow keys and a slider to step through every decision, the legal actions with the chosen one
highlighted (and the probabilities), the event log, and a choice between the spectator's view
and any seat's view. A seat's view reads only that seat's part of the recording, so it shows
only what that seat may know (the legal actions and probabilities of a decision only to the
seat that made it).

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

import functools
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from uno_mk_env import Game, Rules
from uno_mk_env import __version__ as ENV_VERSION
from uno_mk_env import actions as A
from uno_mk_env.agents.base import Agent, AgentError, build_agent
from uno_mk_env.cards import CODES, COLOUR_NAMES, COLOURS, ITEM_NAMES, NAMES, NUM_CARDS
from uno_mk_env.errors import UnoMkError, one_line, quote
from uno_mk_env.evaluation.match import play_match
from uno_mk_env.files import atomic_write_text, no_space, read_json
from uno_mk_env.phases import PHASE_NAMES
from uno_mk_env.render_image import (
    GEOMETRY,
    ITEM_EFFECTS,
    PALETTE,
    last_decision_text,
    table_data,
)
from uno_mk_env.rules import MAX_PLAYERS, MIN_PLAYERS

__all__ = [
    "FORMAT", "MAX_REPLAY_GAMES", "VERSION", "ReplayError", "action_label", "load_recording",
    "record_game", "record_games", "replay_html", "seat_names", "seat_steps", "write_html",
]

FORMAT = "uno-mk-replay"
VERSION = 1
DEFAULT_MAX_STEPS = 5000  #: as the tournament: decisions per round before the game is stopped
#: Most games of one recording (every game is held in memory, ~0.2-2 MB each; the tournament's
#: ``MAX_REPLAYS`` is this bound).
MAX_REPLAY_GAMES = 100


class ReplayError(UnoMkError, ValueError):
    """A recording that cannot be read or shown (one line naming the file or the field)."""


def action_label(action: int, seat: int, names: Sequence[str]) -> str:
    """What ``action`` of ``seat`` means, in a few words (``"play R7 (Red 7)"``,
    ``"Green Shell at P2 greedy"``)."""
    if action < A.DRAW:
        return f"play {CODES[action]} ({NAMES[action]})"
    if action == A.DRAW:
        return "draw a card"
    if action == A.KEEP:
        return "keep the drawn card"
    if A.COLOUR_BASE <= action < A.TARGET_BASE:
        return f"name {COLOUR_NAMES[action - A.COLOUR_BASE]}"
    if A.TARGET_BASE <= action < A.CHALLENGE:
        k = action - A.TARGET_BASE + 1
        return f"Green Shell at {names[(seat + k) % len(names)]} (+{k})"
    return {A.CHALLENGE: "challenge the Wild Draw Four", A.ACCEPT: "accept: draw 4",
            A.CALL_UNO: "call UNO", A.CATCH_UNO: "catch the missed UNO"}[action]


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
    from uno_mk_env.observation import action_mask, encode

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
    :class:`uno_mk_env.render.RecentDecisions` does, the other seats' event lines join the
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


def record_game(
    players: Sequence[Agent],
    rules: Rules,
    game_seed: int,
    agent_seeds: Sequence[int | None] | None = None,
    labels: Sequence[str] | None = None,
    max_steps: int = DEFAULT_MAX_STEPS,
    title: str | None = None,
    allow_cheating: bool = False,
) -> dict[str, Any]:
    """Plays one game through the match driver, as the tournament does
    (:func:`uno_mk_env.evaluation.match.play_match`: agents reset with their seeds,
    ``Game(rules, seed=game_seed)``, a round beyond ``max_steps`` decisions stops the game,
    cheating agents only with ``allow_cheating``) and records it (one game of the format in the
    module docstring).

    Raises:
        AgentError: an agent failed (names it and the seat).
        AgentSpecError: a cheating agent without ``allow_cheating``.
    """
    n = rules.num_players
    if len(players) != n:
        raise ValueError(f"{len(players)} players given for a table of {n}")
    labels = list(labels) if labels is not None else [a.name for a in players]
    names = seat_names(labels)
    seeds = list(agent_seeds) if agent_seeds is not None else [None] * n
    recorder = _Recorder(players, names)
    outcome = play_match(players, rules, game_seed, seeds, labels, max_steps, allow_cheating,
                         observer=recorder)
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
    at seat ``s`` is seeded with :func:`uno_mk_env.seeding.derive_seed` ``(seed + i, s)``, so
    the same arguments give the same recording.

    Raises:
        AgentSpecError: an agent spec cannot be built. RulesError: a bad rule option.
        ValueError: bad ``games``/``seed``/``max_steps``. AgentError: an agent failed.
    """
    from uno_mk_env.evaluation.tournament import make_rules
    from uno_mk_env.seeding import derive_seed

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


# ------------------------------------------------------------------------------ files
#: Largest recording file read (a tournament's 100 recorded games at ten players stay far below).
MAX_RECORDING_BYTES = 256 * 2**20
#: Deepest nesting of lists and objects in a recording (the format needs 10).
MAX_RECORDING_DEPTH = 16
#: Longest text of a recording: a title, a name, an agent spec, an event line.
MAX_TEXT_CHARS = 10_000
#: Most decisions of one recorded game (rounds x ``max_steps``; the file size bounds it too).
MAX_RECORDED_STEPS = 1_000_000
_BIG = 2**63  # bound of seeds, scores and counters: any int of the engine, no 5,000-digit one


def load_recording(path: str | Path) -> dict[str, Any]:
    """Reads a recording: a JSON file written by ``uno-mk replay --json`` or the
    ``replays.json`` of ``uno-mk tournament --replays N`` (a directory is searched for it), at
    most :data:`MAX_RECORDING_BYTES`, checked in full (:func:`check_recording`).

    Raises:
        ReplayError: the file is missing, too large, not JSON, or not a recording (one line
            naming it and the first field that is wrong).
    """
    p = Path(path).expanduser()
    if p.is_dir():
        p = p / "replays.json"
    where = repr(str(p))
    data = read_json(p, f"replay file {where}", max_bytes=MAX_RECORDING_BYTES,
                     max_depth=MAX_RECORDING_DEPTH, error=ReplayError)
    check_recording(data, where)
    return data


def check_recording(data: Any, where: str = "recording") -> None:
    """Checks every field of a recording against the format of the module docstring: types,
    ranges (seats, card codes, phases, action ids), lengths (one entry per seat, a legal list
    per decision) and sizes (:data:`MAX_RECORDING_DEPTH`, :data:`MAX_TEXT_CHARS`,
    :data:`MAX_REPLAY_GAMES` games, :data:`MAX_RECORDED_STEPS` steps a game), so that what the
    page shows is what the engine could have recorded. Keys the format does not name are
    ignored (they count toward the depth).

    Raises:
        ReplayError: one line naming the first field that is missing or wrong, with its value
            quoted short.
    """
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ReplayError(f"{where} is not a replay recording (expected \"format\": "
                          f"{FORMAT!r})")
    if data.get("version") != VERSION:
        raise ReplayError(f"{where}: replay format version {quote(data.get('version'))} is not "
                          f"supported (this version reads {VERSION})")
    _check_depth(data, where)
    _check(data, "env_version", where, _is_text, "a string", optional=True)
    games = data.get("games")
    if not isinstance(games, list) or not 1 <= len(games) <= MAX_REPLAY_GAMES:
        raise ReplayError(f"{where}: \"games\" must be a list of 1 to {MAX_REPLAY_GAMES} games, "
                          f"got {quote(games)}")
    for i, game in enumerate(games):
        _check_game(game, f"{where}: games[{i}]")


def _check_depth(data: Any, where: str) -> None:
    stack = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_RECORDING_DEPTH:
            raise ReplayError(f"{where} is not a replay recording (it nests arrays and objects "
                              f"deeper; at most {MAX_RECORDING_DEPTH} levels are read)")
        children = value.values() if isinstance(value, dict) else value if isinstance(
            value, list) else ()
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))


def _is_int(low: int, high: int) -> Any:
    return lambda v: isinstance(v, int) and not isinstance(v, bool) and low <= v <= high


def _is_text(value: Any) -> bool:
    return isinstance(value, str) and len(value) <= MAX_TEXT_CHARS


def _is_list(n: int, item: Any) -> Any:
    return lambda v: isinstance(v, list) and len(v) == n and all(item(x) for x in v)


def _one_of(values: Sequence[str]) -> Any:
    return lambda v: isinstance(v, str) and v in values


def _either(*tests: Any) -> Any:
    return lambda v: any(t(v) for t in tests)


def _is_none(value: Any) -> bool:
    return value is None


def _check(obj: dict[str, Any], key: str, where: str, test: Any, what: str,
           optional: bool = False) -> None:
    """Raises :class:`ReplayError` unless ``obj[key]`` passes ``test`` (``what`` says what it
    must be)."""
    if key not in obj:
        if optional:
            return
        raise ReplayError(f"{where} has no {key!r}")
    if not test(obj[key]):
        raise ReplayError(f"{where}.{key} must be {what}, got {quote(obj[key])}")


def _check_object(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ReplayError(f"{where} must be an object, got {quote(value)}")
    return value


def _check_game(value: Any, where: str) -> None:
    game = _check_object(value, where)
    _check(game, "players", where, _is_int(MIN_PLAYERS, MAX_PLAYERS),
           f"an int from {MIN_PLAYERS} to {MAX_PLAYERS}")
    n = game["players"]
    seat = _is_int(0, n - 1)
    for key, test, what in (
        ("names", _is_list(n, _is_text), f"a list of {n} strings"),
        ("title", _is_text, f"a string of at most {MAX_TEXT_CHARS} characters"),
        ("seed", _is_int(0, _BIG), "a non-negative int"),
        ("agents", _is_list(n, _is_text), f"a list of {n} strings"),
        ("agent_seeds", _is_list(n, _either(_is_none, _is_int(0, _BIG))),
         f"a list of {n} non-negative ints or nulls"),
        ("max_steps", _is_int(1, _BIG), "a positive int"),
        ("rules", lambda v: isinstance(v, dict), "an object"),
        ("index", _is_int(0, _BIG), "a non-negative int"),
    ):
        _check(game, key, where, test, what, optional=key == "index")
    try:
        rules = Rules.from_dict(game["rules"])
    except (ValueError, TypeError) as e:
        raise ReplayError(f"{where}.rules: {one_line(str(e))}") from None
    if rules.num_players != n:
        raise ReplayError(f"{where}.rules are for {rules.num_players} players, the game has {n}")
    result = _check_object(game.get("result"), f"{where}.result")
    _check(result, "winner", f"{where}.result", _either(_is_none, seat), f"a seat 0-{n - 1} or "
           "null")
    _check(result, "scores", f"{where}.result", _is_list(n, _is_int(0, _BIG)),
           f"a list of {n} non-negative ints")
    _check(result, "decisions", f"{where}.result", _is_int(0, _BIG), "a non-negative int")
    _check(result, "end", f"{where}.result", _one_of(_ENDS), " or ".join(_ENDS))
    if (result["end"] == "win") != (result["winner"] is not None):
        raise ReplayError(f"{where}.result: end {result['end']!r} and winner "
                          f"{result['winner']!r} disagree")
    steps = game.get("steps")
    if not isinstance(steps, list) or not 1 <= len(steps) <= MAX_RECORDED_STEPS:
        raise ReplayError(f"{where}.steps must be a list of 1 to {MAX_RECORDED_STEPS} steps, got "
                          f"{quote(steps)}")
    for j, step in enumerate(steps):
        _check_step(step, f"{where}.steps[{j}]", n, last=j == len(steps) - 1)


_ENDS = ("win", "capped", "no_winner")


def _check_step(value: Any, where: str, n: int, last: bool) -> None:
    step = _check_object(value, where)
    _check(step, "decision", where, _is_int(0, _BIG), "a non-negative int")
    actor_range = (-1, -1) if last else (0, n - 1)
    _check(step, "actor", where, _is_int(*actor_range), "-1 (the final table)" if last else
           f"a seat 0-{n - 1}")
    _check(step, "phase", where, _one_of(PHASE_NAMES), "a phase name")
    actor = step["actor"]
    _check_part(step.get("spectator"), f"{where}.spectator", n, None, decided=actor >= 0)
    _check(step, "hidden", where, lambda v: isinstance(v, bool) and (not v or actor >= 0 and step[
        "spectator"]["action"] == A.KEEP), "a boolean, true only on a KEEP decision", optional=True)
    seats = step.get("seats")
    if not isinstance(seats, list) or len(seats) != n:
        raise ReplayError(f"{where}.seats must be a list of {n} seat views, got {quote(seats)}")
    for s, part in enumerate(seats):
        _check_part(part, f"{where}.seats[{s}]", n, s, decided=s == actor)


def _check_part(value: Any, where: str, n: int, viewer: int | None, decided: bool) -> None:
    """One view of a step: its table, its events and, for the decider's view and the
    spectator's, the legal actions, the action and the probabilities."""
    part = _check_object(value, where)
    _check(part, "events", where, _is_text, "a string")
    _check_table(part.get("table"), f"{where}.table", n, viewer)
    if not decided:
        if any(key in part for key in ("legal", "action", "probs")):
            raise ReplayError(f"{where} shows a decision it did not make")
        return
    _check(part, "legal", where, lambda v: isinstance(v, list) and 1 <= len(v) <= A.NUM_ACTIONS
           and all(isinstance(x, list) and len(x) == 2 and _is_int(0, A.NUM_ACTIONS - 1)(x[0])
                   and _is_text(x[1]) for x in v),
           f"a list of 1 to {A.NUM_ACTIONS} [action id, label] pairs")
    ids = [a for a, _ in part["legal"]]
    _check(part, "action", where, lambda v: _is_int(0, A.NUM_ACTIONS - 1)(v) and v in ids,
           "one of its legal action ids")
    _check(part, "probs", where, _either(_is_none, lambda v: isinstance(v, list) and len(
        v) == len(ids) and all(isinstance(p, int | float) and not isinstance(p, bool)
                               and 0 <= p <= 1 for p in v)),
           f"null or {len(ids)} probabilities", optional=True)


def _check_table(value: Any, where: str, n: int, viewer: int | None) -> None:
    """A table as :func:`uno_mk_env.render_image.table_data` writes it."""
    table = _check_object(value, where)
    for key, test, what in _table_fields(n, viewer):
        _check(table, key, where, test, what)
    item = table.get("item")
    if item is not None:
        item = _check_object(item, f"{where}.item")
        _check(item, "seat", f"{where}.item", _either(_is_none, _is_int(0, n - 1)),
               f"null or a seat 0-{n - 1}")
        _check(item, "item", f"{where}.item", _one_of(ITEM_NAMES), "an item name")
        for key in ("effect", "events"):
            _check(item, key, f"{where}.item", _is_text, "a string")


@functools.cache
def _table_fields(n: int, viewer: int | None) -> tuple[tuple[str, Any, str], ...]:
    """(key, test, what it must be) of each field of a table at ``n`` seats seen by
    ``viewer``."""
    seat = _is_int(0, n - 1)
    count = _is_int(0, NUM_CARDS)
    card = _one_of(CODES)

    def hand(v: Any) -> bool:
        return isinstance(v, list) and len(v) <= NUM_CARDS and all(card(c) for c in v)

    return (
        ("players", _is_int(n, n), f"{n}"),
        ("names", _is_list(n, _is_text), f"a list of {n} strings"),
        ("viewer", _is_none if viewer is None else _is_int(viewer, viewer),
         "null" if viewer is None else f"{viewer}"),
        ("round", _is_int(1, _BIG), "a positive int"),
        ("decision", _is_int(0, _BIG), "a non-negative int"),
        ("hands", _is_list(n, _either(_is_none, hand)), f"a list of {n} hands (card codes) "
         "or nulls"),
        ("hand_sizes", _is_list(n, count), f"a list of {n} ints from 0 to {NUM_CARDS}"),
        ("uno_called", _is_list(n, lambda v: isinstance(v, bool)), f"a list of {n} booleans"),
        ("scores", _is_list(n, _is_int(0, _BIG)), f"a list of {n} non-negative ints"),
        ("top_card", card, "a card code"),
        ("active_colour", _one_of(COLOURS), " or ".join(COLOURS)),
        ("direction", lambda v: _is_int(-1, 1)(v) and v != 0, "1 or -1"),
        ("draw_pile", count, f"an int from 0 to {NUM_CARDS}"),
        ("discard_pile", count, f"an int from 0 to {NUM_CARDS}"),
        ("current_player", _either(seat, _is_int(-1, -1)), f"a seat 0-{n - 1} or -1"),
        ("phase", _one_of(PHASE_NAMES), "a phase name"),
        ("drawn_card", _either(_is_none, card), "null or a card code"),
        ("game_over", lambda v: isinstance(v, bool), "a boolean"),
        ("winner", _either(_is_none, seat), f"null or a seat 0-{n - 1}"),
        ("last", _is_text, "a string"),
    )


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


def _script_json(value: Any) -> str:
    """JSON safe inside ``<script>``: no ``<``, ``>`` or ``&`` (names are user text)."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=True)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def replay_html(data: Mapping[str, Any], title: str | None = None) -> str:
    """One self-contained HTML page showing the recording ``data`` (see the module docstring).

    Raises:
        ReplayError: ``data`` is not a recording.
    """
    from uno_mk_env.evaluation.replay_viewer import CSS, JS, PAGE

    check_recording(data)
    constants = {
        "geometry": GEOMETRY, "palette": PALETTE, "item_names": ITEM_NAMES,
        "item_effects": ITEM_EFFECTS, "colours": COLOURS, "colour_names": COLOUR_NAMES,
        "card_names": dict(zip(CODES, NAMES)),
    }
    games = data["games"]
    title = title or (games[0]["title"] if len(games) == 1 else f"{len(games)} games")
    page = PAGE
    for key, value in (("TITLE", _html_escape("UNO Mario Kart replay: " + title)),
                       ("CSS", CSS), ("JS", JS), ("CONSTANTS", _script_json(constants)),
                       ("DATA", _script_json(dict(data)))):
        page = page.replace("{{" + key + "}}", value)
    return page


def _html_escape(text: str) -> str:
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;"))


def write_html(data: Mapping[str, Any], path: str | Path, title: str | None = None) -> Path:
    """Writes :func:`replay_html` to ``path`` (parents created); returns the path.

    Raises:
        ReplayError: ``data`` is not a recording, or ``path`` cannot be written.
        OSError: no space for it (:func:`uno_mk_env.files.no_space`).
    """
    target = Path(path).expanduser()
    html = replay_html(data, title)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(target, html)  # never a half-written page
    except OSError as e:
        if no_space(e):  # not a bad path: the command line says so, exit 1
            raise
        raise ReplayError(f"cannot write {str(target)!r}: {e.strerror or e}") from None
    return target


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

