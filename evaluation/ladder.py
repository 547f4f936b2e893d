"""A persistent ladder of agents: one folder, entrants added one at a time, each new entrant
playing scheduled duplicate matches against those already there until its rating is known
well enough.

The folder
    :data:`LADDER_FILE` (JSON, written atomically) holds the ladder: its player count (2: every
    match is a head-to-head of duplicate pairs), root seed, interval bound, the entrants in the
    order they joined (spec, whether it cheats) and the matches played (the two specs, the
    seed, the file). Each match is a tournament result with its games
    (``matches/NNNN.json``, atomic) and, while it is played, its journal
    (``matches/NNNN.journal.jsonl``): a ``ladder add`` killed during its first round, run again
    with the same arguments, resumes the match it was playing (a match is a function of its
    seed, so one replayed gives the same games). The ladder file is saved after every round:
    an entrant killed later stays on the ladder with the rounds it finished. The command line
    locks the folder for a run.

Adding an entrant (:func:`add_entrant`)
    In rounds: round ``r`` plays one match of ``batch`` games against every entrant already on
    the ladder (seed derived from the ladder's seed, the entrant's number, the opponent's and
    ``r``); after each round the ratings are fitted and the round stops the entrant once the
    95 % interval of its rating is narrower than ``bound`` (or its games reach ``max_games``).
    The first entrant plays nobody.

Ratings (:func:`standings`)
    A Plackett–Luce fit (at two players, Bradley–Terry) on every game of every match at once
    (:mod:`~uno_mk_env.evaluation.ratings`: mean 0, 95 % intervals clustered by deal), so the
    table stays current as entrants join. Agents that cheat (see hidden cards) are marked as
    references, not competitors.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from uno_mk_env.engine.seeding import derive_seed
from uno_mk_env.errors import UnoMkError, quote
from uno_mk_env.files import atomic_write_text, read_json

from .match import cheats
from .ratings import rating_rows
from .results import GameRecord, TournamentResult
from .tournament import MAX_ENTRANTS, build_agent, run_tournament

__all__ = ["LADDER_FILE", "LadderError", "add_entrant", "load", "standings"]

LADDER_FILE = "ladder.json"
FORMAT = "uno-mk-ladder"
VERSION = 1
#: Deal numbers of one match stay below this, so deals of different matches never share a
#: cluster in the rating fit.
_DEALS_PER_MATCH = 10**7


class LadderError(UnoMkError, ValueError):
    """A ladder folder that cannot be used, or an entrant it cannot take (one line)."""


def _new(seed: int, bound: float) -> dict[str, Any]:
    return {"format": FORMAT, "version": VERSION, "num_players": 2, "seed": seed,
            "bound": bound, "entrants": [], "matches": []}


def load(folder: str | Path) -> dict[str, Any]:
    """The ladder in ``folder`` (a new, empty one when there is none).

    Raises:
        LadderError: a ladder file that is not one (naming the file).
    """
    path = Path(folder) / LADDER_FILE
    if not path.exists():
        return _new(0, 0.5)
    data = read_json(path, error=LadderError)
    ok = (isinstance(data, dict) and data.get("format") == FORMAT
          and data.get("version") == VERSION and isinstance(data.get("entrants"), list)
          and isinstance(data.get("matches"), list))
    if not ok:
        raise LadderError(f"{quote(str(path))} is not a ladder of this version (format "
                          f"{FORMAT!r}, version {VERSION})")
    return data


def _save(folder: Path, ladder: dict[str, Any]) -> None:
    atomic_write_text(folder / LADDER_FILE, json.dumps(ladder, indent=2) + "\n")


def _records(folder: Path, ladder: dict[str, Any]) -> list[GameRecord]:
    """Every game of the ladder, seats numbered as the ladder's entrants, deals made unique."""
    index = {e["spec"]: i for i, e in enumerate(ladder["entrants"])}
    out = []
    for number, match in enumerate(ladder["matches"]):
        data = read_json(folder / match["file"], error=LadderError)
        specs = data["config"]["entrant_specs"]
        for r in TournamentResult.from_dict(data).records:
            out.append(dataclasses.replace(
                r, seats=tuple(index[specs[s]] for s in r.seats),
                deal=number * _DEALS_PER_MATCH + r.deal))
    return out


def standings(folder: str | Path) -> list[dict[str, Any]]:
    """The ladder's table, best rating first: per entrant its spec, rating with 95 % interval,
    games, and whether it cheats."""
    folder = Path(folder)
    ladder = load(folder)
    specs = [e["spec"] for e in ladder["entrants"]]
    if not specs:
        return []
    records = _records(folder, ladder)
    rows = rating_rows(specs, records) if records else [
        {"rating": 0.0, "rating_ci_low": float("-inf"), "rating_ci_high": float("inf")}]
    games = [0] * len(specs)
    for r in records:
        for e in r.seats:
            games[e] += 1
    table = [{"agent": spec, **row, "games": games[i], "cheats": ladder["entrants"][i]["cheats"]}
             for i, (spec, row) in enumerate(zip(specs, rows))]
    return sorted(table, key=lambda r: (-r["rating"], r["agent"]))


def add_entrant(
    folder: str | Path, spec: str, *, seed: int = 0, bound: float = 0.5, batch: int = 100,
    max_games: int = 2000, allow_cheating: bool = False, workers: int = 1,
    backend: str = "local", address: str | None = None,
    on_round: Callable[[int, float], None] | None = None,
) -> dict[str, Any]:
    """Adds ``spec`` to the ladder in ``folder`` (module docstring); returns its table row.

    Raises:
        LadderError: ``spec`` is already on the ladder, or a bad bound, batch or budget.
        AgentSpecError: the spec cannot be built, or cheats without ``allow_cheating``.
    """
    folder = Path(folder)
    ladder = load(folder)
    if not ladder["entrants"] and not ladder["matches"]:
        ladder.update(seed=seed, bound=bound)
    if not 0 < bound or not 2 <= batch or not batch <= max_games:
        raise LadderError(f"need bound > 0 and 2 <= batch <= max_games, got bound={bound:g}, "
                          f"batch={batch}, max_games={max_games}")
    specs = [e["spec"] for e in ladder["entrants"]]
    if spec in specs:
        raise LadderError(f"{quote(spec)} is already on the ladder in {quote(str(folder))}")
    if len(specs) >= MAX_ENTRANTS:
        raise LadderError(f"the ladder holds {MAX_ENTRANTS} entrants, the most it takes")
    agent = build_agent(spec, seed=0)
    if cheats(agent) and not allow_cheating:
        raise LadderError(f"agent {spec!r} cheats (it sees hidden cards): add it as a reference "
                          "with --allow-cheating")
    (folder / "matches").mkdir(parents=True, exist_ok=True)
    ladder["entrants"].append({"spec": spec, "cheats": cheats(agent)})
    me = len(specs)
    played = 0
    for round_number in range(-(-max_games // (batch * max(len(specs), 1)))):
        if not specs:
            break
        for opponent, other in enumerate(specs):
            number = len(ladder["matches"])
            name = f"matches/{number:04d}"
            result = run_tournament(
                [spec, other], 2, batch, seed=derive_seed(ladder["seed"], me, opponent,
                                                          round_number),
                workers=workers, backend=backend, address=address,
                allow_cheating=allow_cheating, journal=folder / f"{name}.journal.jsonl",
                resume=(folder / f"{name}.journal.jsonl").exists())
            atomic_write_text(folder / f"{name}.json", result.to_json(indent=None) + "\n")
            (folder / f"{name}.journal.jsonl").unlink(missing_ok=True)
            ladder["matches"].append({"a": spec, "b": other, "seed": result.config["seed"],
                                      "games": len(result.records), "file": f"{name}.json"})
            played += len(result.records)
        _save(folder, ladder)
        row = next(r for r in standings(folder) if r["agent"] == spec)
        width = row["rating_ci_high"] - row["rating_ci_low"]
        if on_round is not None:
            on_round(played, width)
        if width <= bound or played >= max_games:
            break
    _save(folder, ladder)
    return next(r for r in standings(folder) if r["agent"] == spec)
