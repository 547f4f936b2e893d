"""The journal of a tournament: its finished games, appended as they complete, so that a killed
run loses at most the games in flight and ``--resume`` can finish it.

Format (:data:`JOURNAL_FILE` in the output folder; JSON lines, never a pickle)
    The first line is a header ``{"format": "uno-mk-tournament-journal", "version": 1,
    "config": {...}}`` holding the tournament's configuration (``TournamentResult.config``);
    every other line is one finished game (``GameRecord.to_dict()``), in the order the games
    finished. Lines are appended and flushed once per chunk of games. A last line without its
    newline is a write cut short by a kill: it is dropped on resume. A write that fails (a full
    disk, a file-size limit) is taken back before the error is raised, so the journal always
    ends with a whole game and ``--resume`` works once there is space again.

Unfinished journals (:func:`unfinished`)
    A journal that holds fewer games than its tournament plays, or whose tournament's results
    were never saved, is the work of an interrupted run: the command line refuses to start
    another tournament over it unless told to resume it or to discard it.

Resuming (:func:`read_journal`) trusts nothing in the file: the header must name the same
tournament (every configuration field equal), and every game must be a game of its schedule
(index, deal, seeds and seats as scheduled), with values of the right types and ranges and
places that follow from its winner, scores and hand points. Anything else is refused with one
line (:class:`JournalError`).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, cast

from uno_mk_env.engine.rewards import places
from uno_mk_env.files import OutputPathError, atomic_write_text, parse_json

from .results import GameRecord

__all__ = ["JOURNAL_FILE", "JournalError", "JournalWriter", "journal_path", "journaled_games",
           "read_journal", "unfinished"]

JOURNAL_FILE = "journal.jsonl"
FORMAT = "uno-mk-tournament-journal"
VERSION = 1
#: Longest line accepted in a journal (a 10-player game's record is about 400 characters).
MAX_LINE = 4096
#: Longest header accepted (the configuration lists every entrant: up to 1,000 of them).
MAX_HEADER = 2**20
_KEYS = ("index", "deal", "seed", "seats", "winner", "end", "scores", "hand_points", "places",
         "rounds", "decisions")
_ENDS = ("win", "no_winner", "capped")


class JournalError(OutputPathError):
    """A journal that cannot be resumed (missing, of another tournament, or altered); one line
    naming the file and the reason."""


def _header(config: Mapping[str, Any]) -> str:
    return json.dumps({"format": FORMAT, "version": VERSION, "config": config},
                      separators=(",", ":"))


class JournalWriter:
    """Appends finished games to a journal (a context manager). Each :meth:`append` reaches the
    file whole or not at all: the file is written unbuffered, and a failed write is cut back
    to the last whole game before its error is raised."""

    def __init__(self, path: str | Path, config: Mapping[str, Any], keep_bytes: int | None):
        """Starts a new journal holding only the header (``keep_bytes`` ``None``), or appends
        to an existing one cut to its first ``keep_bytes`` bytes (what :func:`read_journal`
        validated).

        Raises:
            OSError: the journal cannot be written (its ``filename`` is the journal's path).
        """
        self.path = Path(path)
        try:
            if keep_bytes is None:
                atomic_write_text(self.path, _header(config) + "\n")
                keep_bytes = self.path.stat().st_size
            self._file = self.path.open("r+b", buffering=0)
        except OSError as e:
            raise OSError(e.errno, e.strerror, str(self.path)) from None
        self._size = keep_bytes
        self._file.truncate(keep_bytes)  # drop a line cut short by a kill
        self._file.seek(keep_bytes)

    def append(self, records: Iterable[GameRecord]) -> None:
        """Writes the games to the file (no buffer: they are in the file when this returns).

        Raises:
            OSError: the write failed (a full disk, a file-size limit); the journal is cut back
                to what it held before, and the error names its path.
        """
        data = "".join(json.dumps(r.to_dict(), separators=(",", ":")) + "\n"
                       for r in records).encode("utf-8")
        view = memoryview(data)
        try:
            while view:  # a raw write may write only part (at a file-size limit, say)
                written = self._file.write(view)
                if not written:
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
                view = view[written:]
        except OSError as e:
            with contextlib.suppress(OSError):  # shrinking a file needs no space
                self._file.truncate(self._size)
                self._file.seek(self._size)
            raise OSError(e.errno, e.strerror, str(self.path)) from None
        self._size += len(data)

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> JournalWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_journal(
    path: str | Path, config: Mapping[str, Any], task: Callable[[int], Any], num_games: int,
) -> tuple[list[GameRecord], int]:
    """The games of the journal at ``path`` of the tournament ``config`` whose scheduled game
    ``i`` is ``task(i)`` (``i < num_games``), and the length in bytes of its valid part.

    Raises:
        JournalError: no journal, another tournament's, or a line that is not one of its games.
    """
    p = Path(path)
    where = str(p)
    try:
        f = p.open("rb")
    except OSError as e:
        raise JournalError(f"cannot resume: no journal {where!r} to read "
                           f"({e.strerror or e})") from None
    with f:
        first = f.readline(MAX_HEADER + 1)
        _check_header(_parse(first, where, 1, MAX_HEADER), config, where)
        keep = len(first)
        records: dict[int, GameRecord] = {}
        for number, line in enumerate(iter(lambda: f.readline(MAX_LINE + 1), b""), start=2):
            if not line.endswith(b"\n"):
                if len(line) > MAX_LINE:
                    raise JournalError(f"{where}: line {number} is longer than {MAX_LINE} bytes")
                if f.read(1):
                    raise JournalError(f"{where}: line {number} is cut short")
                break  # the last write of a killed run: dropped
            record = _check_record(_parse(line, where, number), task, num_games,
                                   f"{where}: line {number}")
            if record.index in records:
                raise JournalError(f"{where}: line {number}: game {record.index} is journaled "
                                   "twice")
            records[record.index] = record
            keep += len(line)
    return [records[i] for i in sorted(records)], keep


def _parse(line: bytes, where: str, number: int, max_bytes: int = MAX_LINE) -> Any:
    return parse_json(line, f"{where}: line {number}", max_bytes=max_bytes, error=JournalError)


def _check_header(header: Any, config: Mapping[str, Any], where: str) -> None:
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise JournalError(f"{where} is not a tournament journal (its first line must name "
                           f"\"format\": {FORMAT!r})")
    if header.get("version") != VERSION:
        raise JournalError(f"{where}: journal version {str(header.get('version'))[:20]!r} is "
                           f"not supported (this version reads {VERSION})")
    theirs = header.get("config")
    mine = json.loads(json.dumps(config))
    if theirs != mine:
        keys = sorted(set(mine) | set(theirs if isinstance(theirs, dict) else {}))
        diff = [k for k in keys if not isinstance(theirs, dict) or theirs.get(k) != mine.get(k)]
        raise JournalError(f"{where} was written by another tournament (differs in: "
                           f"{', '.join(diff)[:200]}); resume with the same arguments")


def _is_int(value: Any, low: int, high: int | None = None) -> bool:
    return (isinstance(value, int) and not isinstance(value, bool) and value >= low
            and (high is None or value <= high))


def _int_list(value: Any, n: int, low: int) -> bool:
    return isinstance(value, list) and len(value) == n and all(_is_int(v, low) for v in value)


def _check_record(d: Any, task: Callable[[int], Any], num_games: int, where: str) -> GameRecord:
    """The game record ``d`` after checking it is game ``d["index"]`` of the schedule."""
    if not isinstance(d, dict) or sorted(d) != sorted(_KEYS):
        raise JournalError(f"{where}: not a game record (expected the keys {', '.join(_KEYS)})")
    if not _is_int(d["index"], 0, num_games - 1):
        raise JournalError(f"{where}: index {str(d['index'])[:20]} is not a game of this "
                           f"tournament (0-{num_games - 1})")
    t = task(d["index"])
    n = len(t.seats)
    if (d["deal"], d["seed"], d["seats"]) != (t.deal, t.game_seed, list(t.seats)):
        raise JournalError(f"{where}: game {t.index} does not have the deal, seed and seats "
                           "of its schedule")
    ok = (
        (d["winner"] is None or _is_int(d["winner"], 0, n - 1))
        and d["end"] in _ENDS and (d["end"] == "win") == (d["winner"] is not None)
        and _int_list(d["scores"], n, 0) and _int_list(d["hand_points"], n, 0)
        and _is_int(d["rounds"], 1) and _is_int(d["decisions"], 0)
        and _int_list(d["places"], n, 1)
    )
    if not ok or d["places"] != places(d["winner"], d["scores"], d["hand_points"]):
        raise JournalError(f"{where}: game {t.index} has a value of the wrong type or range, "
                           "or places that do not follow from its result")
    return GameRecord.from_dict(d)


def journal_path(out_dir: str | Path) -> Path:
    """The journal of the output folder ``out_dir``."""
    return Path(out_dir) / JOURNAL_FILE



def journaled_games(path: str | Path) -> tuple[int, int] | None:
    """``(games, total)``: how many games the journal at ``path`` holds and how many its
    tournament plays; ``None`` when there is no readable journal there.

    Only the header is parsed (bounded, :data:`MAX_HEADER`); the games are counted by their
    newlines, a megabyte at a time, so any journal is read in constant memory.
    """
    try:
        with Path(path).open("rb") as f:
            header = _parse(f.readline(MAX_HEADER + 1), str(path), 1, MAX_HEADER)
            if not isinstance(header, dict) or header.get("format") != FORMAT:
                return None
            config = header.get("config")
            total = config.get("games") if isinstance(config, dict) else None
            if not _is_int(total, 1):
                return None
            games = sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(2**20), b""))
    except (OSError, JournalError):
        return None
    return games, cast(int, total)  # an int: checked above


def _sequential(path: str | Path) -> bool:
    """Whether the journal's tournament is a sequential test (its config has ``sprt``)."""
    try:
        with Path(path).open("rb") as f:
            header = _parse(f.readline(MAX_HEADER + 1), str(path), 1, MAX_HEADER)
    except (OSError, JournalError):
        return False
    config = header.get("config") if isinstance(header, dict) else None
    return isinstance(config, dict) and "sprt" in config


def unfinished(path: str | Path, results: str | Path | None = None) -> str | None:
    """What the journal at ``path`` holds when it is the work of an interrupted run (``"13 of
    36 games"``), else ``None``: no file there, or a journal holding every game of its
    tournament while the result file ``results`` exists. A file there that is not a readable
    journal counts as unfinished: only a complete one may be overwritten without asking."""
    if not Path(path).exists():
        return None
    counts = journaled_games(path)
    if counts is None:
        return "a file that is not a readable tournament journal"
    games, total = counts
    if results is not None and Path(results).exists() and _sequential(path):
        return None  # a sequential test (SPRT) stops before its budget, its results saved
    if games < total:
        return f"{games:,} of {total:,} games"
    if results is not None and not Path(results).exists():
        return f"all {total:,} games, but not their results"
    return None
