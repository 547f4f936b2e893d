"""The recording format of :mod:`uno_mk_env.evaluation.replay` (``FORMAT``, version
``VERSION``; the layout is in that module's docstring), and reading a recording file with every
field checked before anything is shown: bounded in size, depth, text and counts, each wrong field
named in one :class:`ReplayError` line."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from uno_mk_env import Rules
from uno_mk_env import actions as A
from uno_mk_env.engine.cards import CODES, COLOURS, ITEM_NAMES, NUM_CARDS
from uno_mk_env.engine.phases import PHASE_NAMES
from uno_mk_env.engine.rules import MAX_PLAYERS, MIN_PLAYERS
from uno_mk_env.errors import UnoMkError, one_line, quote
from uno_mk_env.files import read_json

__all__ = [
    "FORMAT", "MAX_RECORDED_STEPS", "MAX_RECORDING_BYTES", "MAX_RECORDING_DEPTH",
    "MAX_REPLAY_GAMES", "MAX_TEXT_CHARS", "VERSION", "ReplayError", "check_recording",
    "load_recording",
]

FORMAT = "uno-mk-replay"
VERSION = 1
#: Most games of one recording (every game is held in memory, ~0.2-2 MB each; the tournament's
#: ``MAX_REPLAYS`` is this bound).
MAX_REPLAY_GAMES = 100


class ReplayError(UnoMkError, ValueError):
    """A recording that cannot be read or shown (one line naming the file or the field)."""



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
    """A table as :func:`uno_mk_env.render.table.table_data` writes it."""
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


