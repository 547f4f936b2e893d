"""How far long work has got, how fast it goes and how long it has left, whether or not anyone
watches a terminal.

:class:`Progress` counts finished games. On a terminal it draws a tqdm bar (rate and ETA
included) when tqdm is installed; anywhere else (a log file, a pipe, CI, or no tqdm) it prints
a plain line at the start, then at most one every :data:`INTERVAL` seconds as games finish, and
one at the end::

    tournament: 16,000 games to play
    tournament: 2,350/16,000 games (15 %), 235 games/s, 10 s so far, about 58 s left
    tournament: 16,000 games in 1 min 8 s (235 games/s)

(tqdm redraws its bar with carriage returns, which pile up on one line of a log.) The rate
counts only the games of this run (not those a resumed run found journaled), so the time left
is the remaining games at that rate.
"""

from __future__ import annotations

import importlib.util
import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

__all__ = ["INTERVAL", "Progress", "duration"]

#: Seconds between two progress lines in a log.
INTERVAL = 10.0


def duration(seconds: float) -> str:
    """``seconds`` in words a person reads at a glance: ``"42 s"``, ``"6 min 3 s"``,
    ``"2 h 5 min"``."""
    s = max(0, round(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60} s"
    return f"{s // 3600} h {s % 3600 // 60} min"


def _has_tqdm() -> bool:
    try:
        return importlib.util.find_spec("tqdm") is not None
    except (ImportError, ValueError):
        return False


class Progress:
    """Progress of ``total`` games on ``file`` (stderr), ``initial`` of them done before this
    run started (a resumed tournament's); a context manager.

    Args:
        total: games in all.
        initial: games already done.
        label: what is counted, at the start of every line (``"tournament"``,
            ``"2p vs strategic"``).
        file: where to write (default: stderr at the time of the call).
        bar: a tqdm bar (``True``) or plain lines (``False``); default: a bar when ``file``
            is a terminal and tqdm is installed.
        interval: seconds between two plain lines.
        clock: the clock (seconds; tests pass their own).
    """

    def __init__(self, total: int, initial: int = 0, label: str = "tournament",
                 file: TextIO | None = None, bar: bool | None = None,
                 interval: float = INTERVAL, clock: Callable[[], float] = time.monotonic):
        self.total, self.done, self.label = total, initial, label
        self.file = file if file is not None else sys.stderr
        self.interval, self.clock = interval, clock
        self._initial = initial
        self._start = self._last = clock()
        if bar is None:
            isatty = getattr(self.file, "isatty", None)
            bar = bool(isatty and isatty()) and _has_tqdm()
        self._bar: Any = None
        if bar:
            from tqdm.auto import tqdm  # optional: only on a terminal with tqdm installed

            self._bar = tqdm(total=total, initial=initial, unit="game", desc=label,
                             dynamic_ncols=True, file=self.file)
        else:
            already = f" ({initial:,} already done)" if initial else ""
            self._print(f"{total - initial:,} games to play{already}")

    def update(self, n: int) -> None:
        """``n`` more games finished."""
        self.done += n
        if self._bar is not None:
            self._bar.update(n)
            return
        now = self.clock()
        if now - self._last >= self.interval and self.done < self.total:
            self._last = now
            self._print(self.status(now))

    def status(self, now: float | None = None) -> str:
        """``"2,350/16,000 games (15 %), 235 games/s, 10 s so far, about 58 s left"``."""
        elapsed = (self.clock() if now is None else now) - self._start
        played = self.done - self._initial
        text = (f"{self.done:,}/{self.total:,} games ({100 * self.done // max(self.total, 1)} %)"
                f", {self.rate(elapsed):,.1f} games/s, {duration(elapsed)} so far")
        if played > 0:
            text += f", about {duration((self.total - self.done) * elapsed / played)} left"
        return text

    def rate(self, elapsed: float) -> float:
        """Games of this run per second over ``elapsed`` seconds."""
        return (self.done - self._initial) / elapsed if elapsed > 0 else 0.0

    def close(self) -> None:
        """Ends the bar, or prints the last line (games played, time, rate) when every game is
        done."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None
            return
        if self.done >= self.total:  # (an error or Ctrl-C is the command's own last line)
            elapsed = self.clock() - self._start
            self._print(f"{self.done - self._initial:,} games in {duration(elapsed)} "
                        f"({self.rate(elapsed):,.1f} games/s)")

    def _print(self, text: str) -> None:
        print(f"{self.label}: {text}", file=self.file, flush=True)

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
