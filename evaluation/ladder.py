"""A persistent ladder of agents: one folder, entrants added one at a time, each new entrant
playing scheduled duplicate matches against those already there until its rating is known
well enough.

The folder
    :data:`LADDER_FILE` (JSON, written atomically) holds the ladder: its player count (2: every
    match is a head-to-head of duplicate pairs), its root seed, the entrants in the order they
    joined (spec, whether it cheats, the ``bound``, ``batch`` and ``max_games`` it was added
    with, and once its matches are over why they stopped) and the matches played (the two
    specs, the seed, the games, the file). Each match is a tournament result with its games and
    without timing (``matches/NNNN.json``, atomic), so a match file is a function of its seed;
    while it is played, its games are journaled (``matches/NNNN.journal.jsonl``).

Adding an entrant (:func:`add_entrant`)
    In rounds: round ``r`` plays one match of ``batch`` games against every entrant already on
    the ladder (seed derived from the ladder's seed, the entrant's number, the opponent's and
    ``r``); after each round the ratings are fitted and the entrant stops once the 95 %
    interval of its rating is narrower than ``bound`` or its games have reached ``max_games``
    (rounds are whole: the last may take it past). The first entrant plays nobody.

Resuming
    The entrant is written to the ladder before its first match (marked unfinished), and the
    ladder is saved after every match: everything the ladder counts is a finished match's
    file. An ``add`` killed at any point (mid-match, between matches, after a round) and run
    again with the same spec and settings continues where it stopped: the match being played
    resumes from its journal, the matches already saved are not played again, and the ladder
    ends byte for byte as an uninterrupted run's. While an entrant is unfinished the ladder
    takes no other. The folder is locked (:class:`~uno_mk_env.files.OutputLock`) while an
    entrant is added.

Ratings (:func:`standings`)
    A Plackett–Luce fit (at two players, Bradley–Terry) on every game of every match at once
    (:mod:`~uno_mk_env.evaluation.ratings`: mean 0, 95 % intervals clustered by deal), so the
    table stays current as entrants join. Agents that cheat (see hidden cards) are marked as
    references, not competitors.

Nothing in the folder is trusted: the ladder file and every match file are checked (types,
file names inside the folder, the match's agents and games) before they are used.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from uno_mk_env.engine.seeding import derive_seed
from uno_mk_env.errors import UnoMkError, quote
from uno_mk_env.files import OutputLock, atomic_write_text, check_output_dir, read_json

from .backends import session
from .match import cheats
from .ratings import rating_rows
from .results import GameRecord, TournamentResult
from .tournament import MAX_ENTRANTS, MAX_GAMES, build_agent, run_tournament

__all__ = ["LADDER_FILE", "LadderError", "add_entrant", "load", "standings"]

LADDER_FILE = "ladder.json"
FORMAT = "uno-mk-ladder"
VERSION = 1
#: Deal numbers of one match stay below this, so deals of different matches never share a
#: cluster in the rating fit.
_DEALS_PER_MATCH = 10**7
_MATCH_FILE = re.compile(r"matches/[0-9]{4,6}\.json")
#: Why an entrant's matches stopped (``"stopped"`` of a finished entrant).
STOPS = ("first", "bound", "max_games")


class LadderError(UnoMkError, ValueError):
    """A ladder folder that cannot be used, or an entrant it cannot take (one line)."""


def _new(seed: int) -> dict[str, Any]:
    return {"format": FORMAT, "version": VERSION, "num_players": 2, "seed": seed,
            "entrants": [], "matches": []}


def _is_int(value: Any, low: int, high: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def _entrant_ok(e: Any) -> bool:
    return (isinstance(e, dict) and isinstance(e.get("spec"), str) and e["spec"]
            and isinstance(e.get("cheats"), bool)
            and isinstance(e.get("bound"), (int, float)) and e["bound"] > 0
            and _is_int(e.get("batch"), 2, MAX_GAMES)
            and _is_int(e.get("max_games"), e["batch"], MAX_GAMES)
            and e.get("stopped", None) in (None, *STOPS))


def _check(data: Any, path: Path) -> dict[str, Any]:
    """``data`` when it is a well-formed ladder, else a :class:`LadderError` naming what."""
    where = quote(str(path))
    if not (isinstance(data, dict) and data.get("format") == FORMAT
            and data.get("version") == VERSION and data.get("num_players") == 2
            and _is_int(data.get("seed"), 0, 2**63 - 1)
            and isinstance(data.get("entrants"), list)
            and isinstance(data.get("matches"), list)):
        raise LadderError(f"{where} is not a ladder of this version (format {FORMAT!r}, "
                          f"version {VERSION})")
    entrants = data["entrants"]
    if len(entrants) > MAX_ENTRANTS or not all(_entrant_ok(e) for e in entrants):
        raise LadderError(f"{where}: an entrant is not a spec with its settings (or more than "
                          f"{MAX_ENTRANTS})")
    specs = [e["spec"] for e in entrants]
    if len(set(specs)) != len(specs) or any(e.get("stopped") is None for e in entrants[:-1]):
        raise LadderError(f"{where}: an entrant is listed twice, or one before the last is "
                          "unfinished")
    for number, m in enumerate(data["matches"]):
        if not (isinstance(m, dict) and m.get("a") in specs and m.get("b") in specs
                and specs.index(m["b"]) < specs.index(m["a"])
                and _is_int(m.get("seed"), 0, 2**32 - 1)
                and _is_int(m.get("games"), 1, MAX_GAMES)
                and m.get("file") == f"matches/{number:04d}.json"
                and _MATCH_FILE.fullmatch(m["file"])):
            raise LadderError(f"{where}: match {number} is not a match of two of its entrants "
                              "with its seed, games and file")
    return data


def load(folder: str | Path) -> dict[str, Any]:
    """The ladder in ``folder`` (a new, empty one when there is none).

    Raises:
        LadderError: a ladder file that is not one (naming the file and what is wrong).
    """
    path = Path(folder) / LADDER_FILE
    if not path.exists():
        return _new(0)
    return _check(read_json(path, error=LadderError), path)


def _save(folder: Path, ladder: dict[str, Any]) -> None:
    atomic_write_text(folder / LADDER_FILE, json.dumps(ladder, indent=2) + "\n")


def _match_records(folder: Path, match: dict[str, Any]) -> list[GameRecord]:
    """The games of one match, checked to be the match the ladder lists."""
    path = folder / match["file"]
    data = read_json(path, error=LadderError)
    try:
        result = TournamentResult.from_dict(data)
        ok = (result.config["entrant_specs"] == [match["a"], match["b"]]
              and result.config["seed"] == match["seed"]
              and len(result.records) == match["games"])
    except (KeyError, TypeError, ValueError, AttributeError):
        ok = False
    if not ok:
        raise LadderError(f"{quote(str(path))} is not the result of the match of "
                          f"{quote(match['a'])} and {quote(match['b'])} the ladder lists")
    return result.records


def _records(folder: Path, ladder: dict[str, Any]) -> list[GameRecord]:
    """Every game of the ladder, seats numbered as the ladder's entrants, deals made unique."""
    index = {e["spec"]: i for i, e in enumerate(ladder["entrants"])}
    out = []
    for number, match in enumerate(ladder["matches"]):
        ids = (index[match["a"]], index[match["b"]])
        out += [dataclasses.replace(r, seats=tuple(ids[s] for s in r.seats),
                                    deal=number * _DEALS_PER_MATCH + r.deal)
                for r in _match_records(folder, match)]
    return out


def _table(folder: Path, ladder: dict[str, Any]) -> list[dict[str, Any]]:
    entrants = ladder["entrants"]
    specs = [e["spec"] for e in entrants]
    if not specs:
        return []
    records = _records(folder, ladder)
    rows = rating_rows(specs, records) if records else [
        {"rating": 0.0, "rating_ci_low": -math.inf, "rating_ci_high": math.inf}]
    games = [0] * len(specs)
    for r in records:
        for e in r.seats:
            games[e] += 1
    table = [{"agent": e["spec"], **row, "games": games[i], "cheats": e["cheats"],
              **{k: e[k] for k in ("bound", "batch", "max_games")},
              "stopped": e.get("stopped")}
             for i, (e, row) in enumerate(zip(entrants, rows))]
    return sorted(table, key=lambda r: (-r["rating"], r["agent"]))


def standings(folder: str | Path) -> list[dict[str, Any]]:
    """The ladder's table, best rating first: per entrant its spec (``agent``), rating with
    95 % interval, games, whether it cheats, the settings it was added with and why its
    matches stopped (``None`` while it is being added).

    Raises:
        LadderError: the ladder file or a match file is not what the ladder lists.
    """
    folder = Path(folder)
    return _table(folder, load(folder))


def _settings(bound: float, batch: int, max_games: int) -> dict[str, Any]:
    if not (isinstance(bound, (int, float)) and bound > 0 and math.isfinite(bound)):
        raise LadderError(f"the bound (--bound) must be a positive number, got {quote(bound)}")
    if not (_is_int(batch, 2, MAX_GAMES) and _is_int(max_games, batch, MAX_GAMES)):
        raise LadderError(f"need 2 <= batch <= max_games <= {MAX_GAMES:,} (--batch, "
                          f"--max-games), got {quote(batch)} and {quote(max_games)}")
    return {"bound": bound, "batch": batch, "max_games": max_games}


def _enter(ladder: dict[str, Any], spec: str, settings: dict[str, Any], seed: int | None,
           allow_cheating: bool, folder: Path) -> dict[str, Any]:
    """The ladder's entry for ``spec``: its unfinished one (to resume, same settings), or a
    new one appended; refuses a spec already added, or a second entrant while one is
    unfinished."""
    entrants = ladder["entrants"]
    if seed is not None and not _is_int(seed, 0, 2**63 - 1):
        raise LadderError(f"the seed (--seed) must be an int >= 0, got {quote(seed)}")
    if seed is not None and entrants and seed != ladder["seed"]:
        raise LadderError(f"the ladder in {quote(str(folder))} has seed {ladder['seed']} (its "
                          f"first entrant's): leave out --seed, got {seed}")
    if not entrants and seed is not None:
        ladder["seed"] = seed
    last = entrants[-1] if entrants else None
    if last is not None and last.get("stopped") is None:
        if last["spec"] != spec:
            raise LadderError(f"{quote(last['spec'])} is still being added to the ladder in "
                              f"{quote(str(folder))} (a run was stopped): add it again to "
                              "finish it first")
        theirs = {k: last[k] for k in settings}
        if theirs != settings:
            raise LadderError(f"{quote(spec)} was being added with " + ", ".join(
                f"{k}={v}" for k, v in theirs.items()) + ": resume it with the same settings")
        return last
    if any(e["spec"] == spec for e in entrants):
        raise LadderError(f"{quote(spec)} is already on the ladder in {quote(str(folder))}")
    if len(entrants) >= MAX_ENTRANTS:
        raise LadderError(f"the ladder holds {MAX_ENTRANTS} entrants, the most it takes")
    is_cheat = cheats(build_agent(spec, seed=0))
    if is_cheat and not allow_cheating:
        raise LadderError(f"agent {spec!r} cheats (it sees hidden cards): add it as a reference "
                          "with --allow-cheating")
    entry = {"spec": spec, "cheats": is_cheat, **settings, "stopped": None}
    entrants.append(entry)
    return entry


def add_entrant(
    folder: str | Path, spec: str, *, seed: int | None = None, bound: float = 0.5,
    batch: int = 100, max_games: int = 2000, allow_cheating: bool = False, workers: int = 1,
    backend: str = "local", address: str | None = None,
    on_round: Callable[[int, float], None] | None = None,
) -> dict[str, Any]:
    """Adds ``spec`` to the ladder in ``folder``, or finishes adding it after a stopped run
    (module docstring); returns its table row. ``seed`` (default 0) is the ladder's root seed,
    fixed by its first entrant; ``on_round(games, width)`` hears after every round.

    Raises:
        LadderError: ``spec`` is already on the ladder, another entrant is unfinished, bad
            settings (or not those of the unfinished entrant), or a seed not the ladder's.
        OutputPathError: ``folder`` cannot be created or written, or another run holds it.
        AgentSpecError: the spec cannot be built, or cheats without ``allow_cheating``.
    """
    folder = Path(folder)
    settings = _settings(bound, batch, max_games)
    check_output_dir(folder, [LADDER_FILE])  # one line when it cannot be written
    if (folder / "matches").exists() and not (folder / "matches").is_dir():
        raise LadderError(f"{quote(str(folder / 'matches'))} exists and is not a folder")
    with OutputLock(folder, "ladder add"):
        ladder = load(folder)
        entry = _enter(ladder, spec, settings, seed, allow_cheating, folder)
        (folder / "matches").mkdir(exist_ok=True)
        _save(folder, ladder)
        _tidy(folder, len(ladder["matches"]))
        with session(backend, address, workers):  # one Ray for all the matches
            return _play_rounds(folder, ladder, entry, workers, backend, address, on_round)


def _tidy(folder: Path, matches: int) -> None:
    """Removes what a killed run may leave (the folder is locked: no write is under way): the
    journals of matches already listed, and atomic writes' temporary files."""
    for number in range(matches):
        (folder / f"matches/{number:04d}.journal.jsonl").unlink(missing_ok=True)
    for stale in [*folder.glob(f".{LADDER_FILE}.*.tmp"), *folder.glob("matches/.*.tmp")]:
        stale.unlink(missing_ok=True)


def _play_rounds(folder: Path, ladder: dict[str, Any], entry: dict[str, Any], workers: int,
                 backend: str, address: str | None,
                 on_round: Callable[[int, float], None] | None) -> dict[str, Any]:
    """Plays the entrant's matches from where the ladder stands to its stop."""
    spec, bound, max_games = entry["spec"], entry["bound"], entry["max_games"]
    me = ladder["entrants"].index(entry)
    opponents = [e["spec"] for e in ladder["entrants"][:me]]
    while entry["stopped"] is None:
        mine = [m for m in ladder["matches"] if m["a"] == spec]
        played = sum(m["games"] for m in mine)
        round_number, k = divmod(len(mine), max(len(opponents), 1))
        if not opponents:
            entry["stopped"] = "first"
        elif k == 0 and round_number > 0:  # a round over: stop when known well enough
            width = _width(_table(folder, ladder), spec)
            if on_round is not None:
                on_round(played, width)
            if width <= bound:
                entry["stopped"] = "bound"
            elif played >= max_games:
                entry["stopped"] = "max_games"
        if entry["stopped"] is None:
            _play_match(folder, ladder, spec, opponents[k], derive_seed(
                ladder["seed"], me, k, round_number), workers, backend, address)
        _save(folder, ladder)
    return next(r for r in _table(folder, ladder) if r["agent"] == spec)


def _width(table: list[dict[str, Any]], spec: str) -> float:
    row = next(r for r in table if r["agent"] == spec)
    return float(row["rating_ci_high"] - row["rating_ci_low"])


def _play_match(folder: Path, ladder: dict[str, Any], spec: str, other: str, seed: int,
                workers: int, backend: str, address: str | None) -> None:
    """Plays (or finishes from its journal) the ladder's next match and lists it: the match
    file first, then the ladder, then the journal removed, so a kill at any point loses at
    most the games in flight."""
    name = f"matches/{len(ladder['matches']):04d}"
    entry = {e["spec"]: e for e in ladder["entrants"]}
    journal = folder / f"{name}.journal.jsonl"
    # both were admitted to the ladder: a reference (cheating) may play in any match
    result = run_tournament([spec, other], 2, entry[spec]["batch"], seed=seed, workers=workers,
                            backend=backend, address=address,
                            allow_cheating=entry[spec]["cheats"] or entry[other]["cheats"],
                            journal=journal, resume=journal.exists())
    data = result.to_dict()
    del data["run"]  # no timing: the file is a function of the match's seed
    atomic_write_text(folder / f"{name}.json", json.dumps(data) + "\n")
    ladder["matches"].append({"a": spec, "b": other, "seed": seed,
                              "games": len(result.records), "file": f"{name}.json"})
    _save(folder, ladder)
    journal.unlink(missing_ok=True)
