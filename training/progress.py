"""How long training takes: the ``--max-minutes`` budget of a run (:class:`Budget`) and
progress lines of long training work (behaviour cloning's demonstrations, PPO's steps): how
far it has got, how fast it goes and how long it has left, a line at most every
:data:`~uno_mk_env.evaluation.progress.INTERVAL` seconds whether or not anyone watches a
terminal (a log gets a readable line, not a bar redrawn with carriage returns), here on two
lines::

    train: 1,253,376/10,000,000 steps (12 %), 8,412 steps/s, 2 min 29 s so far, about
    7 min 31 s left (--max-minutes)

The time left is the remaining work at the rate so far, or the time to a deadline (the
``--max-minutes`` budget) when that comes first.
"""

from __future__ import annotations

import math
import os
import sys
import time
from collections.abc import Callable
from typing import TextIO

from uno_mk_env.evaluation.progress import INTERVAL, duration

__all__ = ["Budget", "RateLines", "process_start"]


class RateLines:
    """Progress of ``total`` ``unit`` (``"steps"``) of the work ``label`` on ``file``
    (stderr): :meth:`update` with the count done prints a line when :data:`INTERVAL` seconds
    have passed since the last one (the first after one interval).

    Args:
        label: what runs (``"train"``, ``"behaviour cloning"``), at the start of each line.
        total: the count that ends the work.
        unit: what is counted (``"steps"``, ``"teacher decisions"``).
        deadline: a ``clock()`` time at which the work stops anyway (``--max-minutes``).
        enabled: print nothing when ``False`` (``--no-progress``).
        file: where to write (default: stderr at the time of the call).
        interval: seconds between two lines.
        clock: the clock (seconds; tests pass their own).
    """

    def __init__(self, label: str, total: int, unit: str, deadline: float = math.inf,
                 enabled: bool = True, file: TextIO | None = None, interval: float = INTERVAL,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.label, self.total, self.unit, self.deadline = label, total, unit, deadline
        self.enabled, self.interval, self.clock = enabled, interval, clock
        self.file = file if file is not None else sys.stderr
        self.start = self._last = clock()

    def update(self, done: int) -> None:
        """``done`` of ``total`` are done: a line if one is due."""
        now = self.clock()
        if self.enabled and now - self._last >= self.interval:
            self._last = now
            print(f"{self.label}: {self.status(done, now)}", file=self.file, flush=True)

    def status(self, done: int, now: float) -> str:
        """``"1,253,376/10,000,000 steps (12 %), 8,412 steps/s, 2 min 29 s so far, about
        7 min 31 s left"``."""
        elapsed = max(now - self.start, 1e-9)
        rate = done / elapsed
        text = (f"{done:,}/{self.total:,} {self.unit} ({100 * done // max(self.total, 1)} %), "
                f"{rate:,.0f} {self.unit}/s, {duration(elapsed)} so far")
        to_end = (self.total - done) / rate if rate > 0 else math.inf
        to_deadline = self.deadline - now
        if min(to_end, to_deadline) < math.inf:
            text += f", about {duration(max(0.0, min(to_end, to_deadline)))} left"
            if to_deadline < to_end:
                text += " (--max-minutes)"
        return text


def process_start() -> float:
    """When this process started, on the ``time.monotonic()`` clock, from its age in
    ``/proc/self/stat`` (Linux), else now: a command's budget then counts the interpreter's
    start and the imports too."""
    try:
        with open("/proc/self/stat", encoding="ascii") as f:
            started_ticks = int(f.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/uptime", encoding="ascii") as f:
            uptime = float(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return time.monotonic()
    age = uptime - started_ticks / os.sysconf("SC_CLK_TCK")
    return time.monotonic() - max(age, 0.0)


class Budget:
    """``--max-minutes`` as times on the monotonic clock, counted from ``start`` (default: now;
    a command passes :func:`process_start`), so that the checks, behaviour cloning, the
    evaluations and the final outputs are included: behaviour cloning collects demonstrations
    until :data:`BC_COLLECT_SHARE` of the time left when it starts has passed and trains on
    them until :data:`BC_SHARE` (:meth:`at`); an evaluation is sized to take at most
    :data:`EVAL_SHARE` of it; training stops when the next update and the final evaluation
    would not fit before the end, and the final evaluation plays what fits in the time left.
    Without a budget every time is infinite."""

    BC_COLLECT_SHARE = 0.2
    BC_SHARE = 0.3
    EVAL_SHARE = 0.1
    #: CPU seconds kept after the final evaluation for the outputs (the policy, the curve's
    #: PNG) and the end of the process (:meth:`write_seconds` scales them to the machine).
    WRITE_SECONDS = 5.0
    #: The most :meth:`write_seconds` scales :data:`WRITE_SECONDS` by.
    MAX_SLOWDOWN = 10.0

    def __init__(self, minutes: float, start: float | None = None,
                 cpu_clock: Callable[[], float] = time.process_time,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.clock, self.cpu_clock = clock, cpu_clock
        self.start = clock() if start is None else start
        self.seconds = 60.0 * minutes if minutes > 0 else math.inf
        self.end = self.start + self.seconds
        self._wall0, self._cpu0 = clock(), cpu_clock()

    def write_seconds(self) -> float:
        """Seconds kept for the outputs and the end of the process: :data:`WRITE_SECONDS` times
        how much longer than its CPU time this process has taken so far (1 to
        :data:`MAX_SLOWDOWN`), so that on a machine busy with other work the reserve grows
        with the wait for a core."""
        wall, cpu = self.clock() - self._wall0, self.cpu_clock() - self._cpu0
        slowdown = wall / cpu if cpu > 0 else 1.0
        return self.WRITE_SECONDS * min(self.MAX_SLOWDOWN, max(1.0, slowdown))

    def at(self, share: float) -> float:
        """The time when ``share`` of the time left now has passed (``inf`` without a
        budget): what was spent before (the start of the process, the checks) is not taken
        from the work sized so."""
        return self.clock() + share * self.left()

    def left(self) -> float:
        """Seconds to the end of the budget (``inf`` without one)."""
        return self.end - self.clock()
