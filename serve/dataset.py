"""The people's decisions at the browser table as dataset rows, for behaviour cloning.

Each finished game writes ``table-ID-game-K.jsonl`` beside its recording: one JSON object per
line, one line per decision a person took, in order (docs/serve.md#dataset-rows)::

    {"format": "uno-mk-human-rows", "version": 1, "table": "ID", "game": K, "seat": S,
     "ask": N,                      # the seat's N-th decision at this table
     "view": {...},                 # the seat's PlayerView: its fields by name; per-kind counts
                                    # and void_evidence as lists of ints, rules as a dict
     "observation": [...],          # uno_mk_env.engine.observation.encode(view), floats
     "mask": [...],                 # the 73 action mask entries, 0/1
     "action": A,                   # the action id taken (legal: mask[A] == 1)
     "outcome": {"winner": W or null, "scores": [...], "score": the seat's score,
                 "won": true/false}}

:func:`load_rows` reads such files back as arrays (``observation``, ``mask``, ``action``,
``won``) ready for a classifier; the files are plain JSON lines, read through the project's
bounded JSON parser.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from uno_mk_env import Game, PlayerView, Rules
from uno_mk_env.files import FileFormatError, atomic_write_text, parse_json

__all__ = ["FORMAT", "VERSION", "load_rows", "rows_for_game", "view_dict", "write_rows"]

FORMAT = "uno-mk-human-rows"
VERSION = 1
#: Largest row file read (a line is ~5 kB; a long game of a person is a few hundred lines).
MAX_ROWS_BYTES = 64 * 2**20


def view_dict(view: PlayerView) -> dict[str, Any]:
    """A :class:`~uno_mk_env.PlayerView` as JSON-safe data (field names kept)."""
    out: dict[str, Any] = {}
    for name, value in zip(view._fields, view):
        if isinstance(value, Rules):
            out[name] = value.to_dict()
        elif isinstance(value, bytes | tuple):
            out[name] = [int(v) for v in value]
        else:
            out[name] = value
    return out


def rows_for_game(decisions: Sequence[dict[str, Any]], game: Game, table: str,
                  index: int) -> list[dict[str, Any]]:
    """The rows of one finished game from the decisions its people took (each: ``seat``,
    ``view``, ``observation``, ``mask``, ``action``, ``ask``)."""
    winner = game.winner
    scores = [int(x) for x in game.scores]
    rows = []
    for d in decisions:
        seat = d["seat"]
        obs = d["observation"]
        rows.append({
            "format": FORMAT, "version": VERSION, "table": table, "game": index + 1,
            "seat": seat, "ask": d["ask"], "view": view_dict(d["view"]),
            "observation": [] if obs is None else [float(x) for x in obs],
            "mask": [int(x) for x in d["mask"]], "action": int(d["action"]),
            "outcome": {"winner": winner, "scores": scores, "score": scores[seat],
                        "won": winner == seat},
        })
    return rows


def write_rows(rows: Iterable[dict[str, Any]], path: str | Path) -> Path:
    """Writes rows as JSON lines, atomically; returns the path."""
    text = "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in rows)
    return atomic_write_text(Path(path), text)


def load_rows(path: str | Path) -> dict[str, np.ndarray]:
    """Reads a row file: ``observation`` (float32, rows x features), ``mask`` (int8, rows x 73),
    ``action`` (int64), ``seat`` (int64), ``won`` (bool).

    Raises:
        FileFormatError: not a row file of this format (names the line).
    """
    target = Path(path)
    try:
        data = target.read_bytes()
    except OSError as e:
        raise FileFormatError(f"cannot read {str(target)!r}: {e.strerror or e}") from None
    if len(data) > MAX_ROWS_BYTES:
        raise FileFormatError(f"{str(target)!r} is larger than {MAX_ROWS_BYTES} bytes")
    obs, masks, actions, seats, won = [], [], [], [], []
    for i, line in enumerate(data.splitlines(), 1):
        if not line.strip():
            continue
        row = parse_json(line, f"{str(target)!r} line {i}")
        if not isinstance(row, dict) or row.get("format") != FORMAT:
            raise FileFormatError(f"{str(target)!r} line {i} is not a {FORMAT} row")
        obs.append(row["observation"])
        masks.append(row["mask"])
        actions.append(row["action"])
        seats.append(row["seat"])
        won.append(bool(row["outcome"]["won"]))
    return {"observation": np.asarray(obs, np.float32), "mask": np.asarray(masks, np.int8),
            "action": np.asarray(actions, np.int64), "seat": np.asarray(seats, np.int64),
            "won": np.asarray(won, bool)}
