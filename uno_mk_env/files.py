"""Files the package writes and reads: one atomic writer for every result file, a lock on an
output folder, the check that a folder can be written before any work is done, and one bounded
JSON reader for every file or string the package parses.

Atomic writes
    :func:`atomic_write` writes into a temporary file in the target's folder, flushes it to disk,
    then renames it over the target (``os.replace``): a reader, or a run killed at any moment
    (even by SIGKILL), sees the old file or the new one, never a truncated one. Every result
    file of the evaluation tools (``tournament.json``, the CSVs, ``replays.json``, the plot,
    benchmark cards) goes through it.

Locks
    :class:`OutputLock` holds ``fcntl.flock`` on a lock file in the folder for the duration of a
    run: a second run into the same folder is refused with one line. The kernel releases the
    lock when its process dies, so the lock of a killed run never blocks the next one (the lock
    file itself stays, empty of meaning). Where ``fcntl`` does not exist (Windows) there is no
    lock.

Bounded JSON
    :func:`parse_json` and :func:`read_json` are how every JSON text from outside is parsed (a
    state string, a run's ``config.json``, a replay recording, a journal line, a policy file's
    metadata): its size and its nesting depth are checked *before* :func:`json.loads` runs, so
    a 100,000-deep ``[[[...]]]`` or a gigabyte file is one line naming it, never a
    ``RecursionError`` or unbounded memory. Never ``eval``, never ``pickle``.
"""

from __future__ import annotations

import contextlib
import csv
import errno
import io
import json
import os
import re
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

import numpy as np

from .errors import UnoMkError, one_line

__all__ = ["LOCK_FILE", "MAX_JSON_BYTES", "MAX_JSON_DEPTH", "NO_SPACE", "FileFormatError",
           "OutputLock", "OutputPathError", "append_csv_row", "atomic_save", "atomic_write",
           "atomic_write_text", "check_output_dir", "json_depth", "no_space", "parse_json",
           "read_json"]

#: The lock file :class:`OutputLock` holds in an output folder.
LOCK_FILE = ".uno-mk.lock"
#: ``errno`` values of a write that found no space: a full disk, a full quota, a file-size limit
#: (``EFBIG``: ``ulimit -f`` / ``prlimit --fsize``; Python ignores the signal that comes with it).
NO_SPACE = frozenset({errno.ENOSPC, errno.EFBIG, getattr(errno, "EDQUOT", errno.ENOSPC)})


def no_space(error: BaseException) -> bool:
    """Whether ``error`` is a write that found no space (:data:`NO_SPACE`): the command line
    ends it with one line and exit code 1, never as a bad argument."""
    return isinstance(error, OSError) and error.errno in NO_SPACE


class OutputPathError(UnoMkError, ValueError):
    """A place where the result files cannot be written (one line naming it)."""


class FileFormatError(UnoMkError, ValueError):
    """A JSON file or string that cannot be read: too large, nested too deep, not UTF-8, not
    JSON (one line naming it)."""


@contextlib.contextmanager
def atomic_write(path: str | Path, mode: str = "w", **open_args: Any) -> Iterator[IO[Any]]:
    """Opens a temporary file beside ``path`` for writing (``mode`` ``"w"`` or ``"wb"``, other
    arguments as :func:`open`); when the ``with`` block ends without an exception the file is
    flushed to disk and renamed over ``path`` (``os.replace``, atomic), else it is removed and
    ``path`` is left as it was.

    Raises:
        OSError: the folder cannot be written (the caller turns it into one line).
    """
    target = Path(path)
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_write writes a whole file: mode 'w' or 'wb', not {mode!r}")
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes it 0600; a result file is not secret
        with os.fdopen(fd, mode, **open_args) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException as e:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(e, OSError) and e.filename is None:  # a failed write names no file:
            e.filename = str(target)  # the caller's one line then names the one it wrote
        raise


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def atomic_write_text(path: str | Path, text: str) -> Path:
    """Writes ``text`` (UTF-8) to ``path`` atomically (:func:`atomic_write`); returns the path."""
    with atomic_write(path, "w", encoding="utf-8", newline="") as f:
        f.write(text)
    return Path(path)


def atomic_save(path: str | Path, save: Callable[[IO[bytes]], Any]) -> Path:
    """Calls ``save(binary_file)`` (a matplotlib ``savefig``, a ``torch.save``) on a buffer in
    memory, then writes it to ``path`` atomically (:func:`atomic_write`); returns the path.
    The buffer makes a full disk the ``OSError`` it is: a writer that catches the error of its
    own writes (``torch.save`` turns it into a ``RuntimeError``) never sees one."""
    buffer = io.BytesIO()
    save(buffer)
    with atomic_write(path, "wb") as f:
        f.write(buffer.getbuffer())
    return Path(path)


class OutputLock:
    """An exclusive lock on an output folder for one run (``with OutputLock(folder): ...``).

    Raises (on entering):
        OutputPathError: another running process holds the folder (one line naming it).
    """

    def __init__(self, folder: str | Path, what: str = "run") -> None:
        self.folder = Path(folder)
        self.what = what
        self._fd: int | None = None

    def __enter__(self) -> OutputLock:
        try:
            import fcntl
        except ImportError:  # no flock here (Windows): no lock
            return self
        path = self.folder / LOCK_FILE
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as e:
            raise OutputPathError(f"cannot lock output directory {str(self.folder)!r} "
                                  f"({e.strerror or e})") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise OutputPathError(
                f"output directory {str(self.folder)!r} is in use by another {self.what} "
                f"(it holds {LOCK_FILE}); wait for it to end or choose another folder"
            ) from None
        self._fd = fd
        return self

    def __exit__(self, *exc: object) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the descriptor releases the flock
            self._fd = None


def append_csv_row(path: str | Path, fields: Sequence[str], row: Mapping[str, Any]) -> None:
    """Appends ``row`` to the CSV file ``path`` (columns ``fields``), its header first when the
    file does not exist yet: a record that grows by one line a measurement (a benchmark's
    points, best responses), not a result file rewritten whole."""
    path = Path(path)
    new = not path.exists()
    with path.open("a", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(fields))
        if new:
            writer.writeheader()
        writer.writerow(row)


def check_output_dir(path: str | Path, file_names: Iterable[str]) -> Path:
    """Makes sure files can be written into the directory ``path`` before any work is done:
    creates it (with its parents) if needed, writes and removes a probe file, and checks that
    none of ``file_names`` exists as something other than a file.

    Returns:
        The directory.

    Raises:
        OutputPathError: one line naming the place and the reason (it or a parent is not a
            directory, it cannot be created or written).
    """
    out = Path(path).expanduser()
    try:
        if out.exists() and not out.is_dir():
            raise OutputPathError(f"output directory {str(path)!r} exists and is not a directory")
        for parent in out.parents:
            if parent.exists():
                if not parent.is_dir():
                    raise OutputPathError(f"output directory {str(path)!r} cannot be created: "
                                          f"{str(parent)!r} is not a directory")
                break
        out.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=out, prefix=".write-check-")
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        raise OutputPathError(f"output directory {str(path)!r} cannot be created or written "
                              f"({e.strerror or e})") from None
    for name in file_names:
        target = out / name
        if target.exists() and not target.is_file():
            raise OutputPathError(f"cannot write {str(target)!r}: it exists and is not a file")
    return out


#: The largest JSON text :func:`parse_json` reads unless its caller sets a smaller bound.
MAX_JSON_BYTES = 64 * 2**20
#: The deepest nesting of arrays and objects :func:`parse_json` accepts unless told otherwise
#: (a state dict nests 4 levels, a recording 6, a run's config 5).
MAX_JSON_DEPTH = 32

_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_OPEN = np.zeros(256, dtype=np.int64)
_OPEN[[ord("["), ord("{")]] = 1
_OPEN[[ord("]"), ord("}")]] = -1


def json_depth(text: bytes) -> int:
    """The deepest nesting of ``[``/``{`` in the JSON text ``text``, brackets inside strings
    not counted: a linear scan (strings removed by one regular expression, then a running sum
    in numpy), so it is safe on any input."""
    stripped = _JSON_STRING.sub(b"", text)
    if not stripped:
        return 0
    depth = np.cumsum(_OPEN[np.frombuffer(stripped, dtype=np.uint8)])
    return int(depth.max(initial=0))


def parse_json(text: str | bytes, what: str, *, max_bytes: int = MAX_JSON_BYTES,
               max_depth: int = MAX_JSON_DEPTH,
               error: type[Exception] = FileFormatError) -> Any:
    """Parses the JSON text ``text`` after checking its size and nesting depth.

    Args:
        text: the JSON text (``bytes`` must be UTF-8).
        what: what it is, for the message (``"state string"``, ``"'runs/x/config.json'"``).
        max_bytes: the largest size accepted, in UTF-8 bytes.
        max_depth: the deepest nesting of arrays and objects accepted.
        error: the exception raised (the caller's own error type; one line, naming ``what``).

    Raises:
        error: too large, nested too deep, not UTF-8 or not JSON.
    """
    if isinstance(text, str):
        if len(text) > max_bytes:  # a character is at least one byte
            raise error(f"{what} is larger than {max_bytes} bytes")
        data = text.encode("utf-8", "surrogatepass")
    else:
        data = bytes(text)
    if len(data) > max_bytes:
        raise error(f"{what} is {len(data)} bytes; at most {max_bytes} are read")
    depth = json_depth(data)
    if depth > max_depth:
        raise error(f"{what} nests arrays and objects {depth} deep; at most {max_depth} "
                    "levels are read")
    try:
        return json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise error(f"{what} is not JSON: not UTF-8 text ({e.reason} at byte {e.start})"
                    ) from None
    except (ValueError, RecursionError) as e:
        raise error(f"{what} is not JSON: {one_line(str(e), 120)}") from None


def read_json(path: str | Path, what: str | None = None, *, max_bytes: int = MAX_JSON_BYTES,
              max_depth: int = MAX_JSON_DEPTH, error: type[Exception] = FileFormatError) -> Any:
    """Reads and parses the JSON file ``path`` (:func:`parse_json`), reading at most
    ``max_bytes + 1`` bytes of it whatever its size claims.

    Raises:
        error: the file cannot be read, is too large, nested too deep, or not JSON (one line
            naming ``what``, by default the path).
    """
    where = what or repr(str(path))
    try:
        with open(path, "rb") as f:
            data = f.read(max_bytes + 1)
    except OSError as e:
        raise error(f"cannot read {where}: {e.strerror or e}") from None
    return parse_json(data, where, max_bytes=max_bytes, max_depth=max_depth, error=error)
