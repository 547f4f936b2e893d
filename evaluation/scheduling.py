"""The schedule of a tournament (:mod:`uno_mk_env.evaluation.tournament`, its "Schedule" and
"Seeds" sections): which entrants sit where in game ``i``, with which deal and agent seeds.

:class:`Schedule` is a read-only sequence that is never listed in full: game ``i`` is computed
from its index (the table of block ``b`` by unranking the ``b % C``-th combination of the
entrants), and iteration computes one block at a time, so a schedule of any size costs the same
memory. It equals, game for game, the list the tournament used to build up front.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import overload

import numpy as np

from uno_mk_env.engine.seeding import derive_seed

__all__ = ["GameTask", "Schedule", "schedule"]


@dataclass(frozen=True)
class GameTask:
    """One scheduled game: the deal's ``game_seed`` and the entrant index sitting at each seat."""

    index: int
    deal: int
    game_seed: int
    seats: tuple[int, ...]
    agent_seeds: tuple[int, ...]




_seed = derive_seed


_ORDER, _DEAL, _AGENT = range(3)  # purposes in the seed keys (see the module docstring)


def _combination(items: int, size: int, rank: int) -> tuple[int, ...]:
    """The ``rank``-th ``size``-combination of ``range(items)`` in lexicographic order (the
    order of :func:`itertools.combinations`), computed without listing the others."""
    out: list[int] = []
    x = 0
    for i in range(size):
        while True:
            starting_here = math.comb(items - x - 1, size - i - 1)
            if rank < starting_here:
                out.append(x)
                x += 1
                break
            rank -= starting_here
            x += 1
    return tuple(out)


class Schedule(Sequence[GameTask]):
    """The games of a tournament (see the module docstring), rounded up to whole blocks, as a
    read-only sequence that is never listed in full: ``schedule[i]`` computes game ``i`` from
    its index, iteration computes one block at a time, so any size costs the same memory."""

    def __init__(self, num_entrants: int, num_players: int, games: int, seed: int,
                 duplicate: bool = True) -> None:
        self.num_entrants, self.num_players, self.seed = num_entrants, num_players, seed
        self.duplicate = duplicate
        self.tables = math.comb(num_entrants, num_players) if num_entrants >= 0 else 0
        if not self.tables or num_players < 1:
            raise ValueError(f"{num_entrants} entrants cannot fill a table of {num_players}")
        self.blocks = -(-games // num_players)

    def __len__(self) -> int:
        return self.blocks * self.num_players

    def _order(self, block: int, table: tuple[int, ...]) -> list[int]:
        perm = np.random.default_rng(_seed(self.seed, block, _ORDER)).permutation(
            self.num_players)
        return [table[i] for i in perm]

    def _task(self, block: int, order: Sequence[int], r: int) -> GameTask:
        n = self.num_players
        index = block * n + r
        return GameTask(
            index=index,
            deal=block if self.duplicate else index,
            game_seed=(_seed(self.seed, block, _DEAL) if self.duplicate
                       else _seed(self.seed, block, _DEAL, r)),
            seats=tuple(order[(s + r) % n] for s in range(n)),
            agent_seeds=tuple(_seed(self.seed, block, _AGENT, r, s) for s in range(n)),
        )

    def table(self, block: int) -> tuple[int, ...]:
        """The entrants at the table of ``block`` (before its seating is shuffled)."""
        return _combination(self.num_entrants, self.num_players, block % self.tables)

    @overload
    def __getitem__(self, i: int) -> GameTask: ...

    @overload
    def __getitem__(self, i: slice) -> list[GameTask]: ...

    def __getitem__(self, i: int | slice) -> GameTask | list[GameTask]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if not isinstance(i, int) or isinstance(i, bool):
            raise TypeError(f"schedule indices are ints, not {type(i).__name__}")
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(f"game {i} is not in a schedule of {len(self)} games")
        block, r = divmod(i, self.num_players)
        return self._task(block, self._order(block, self.table(block)), r)

    def __iter__(self) -> Iterator[GameTask]:
        tables = itertools.combinations(range(self.num_entrants), self.num_players)
        for block in range(self.blocks):
            table = next(tables, None)
            if table is None:  # a new pass over the tables (round robin)
                tables = itertools.combinations(range(self.num_entrants), self.num_players)
                table = next(tables)
            order = self._order(block, table)
            for r in range(self.num_players):
                yield self._task(block, order, r)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (f"Schedule(num_entrants={self.num_entrants}, num_players={self.num_players}, "
                f"games={len(self)}, seed={self.seed}, duplicate={self.duplicate})")


def schedule(
    num_entrants: int, num_players: int, games: int, seed: int, duplicate: bool = True
) -> Schedule:
    """The games of a tournament (see the module docstring), rounded up to whole blocks: a
    :class:`Schedule` (a sequence computed on demand, never listed in full)."""
    return Schedule(num_entrants, num_players, games, seed, duplicate)
