"""Tournaments between agents: seeded, duplicate-dealt, parallel, with confidence intervals and
a Plackett–Luce rating fitted on all games at once.

Schedule
    The agents given (``agent_specs``) become *entrants*: a spec given twice becomes two entrants
    (``random``, ``random#2``), and with fewer specs than seats the specs are cycled to fill the
    table (``greedy,random`` at 4 players: ``greedy``, ``random``, ``greedy#2``, ``random#2``);
    :meth:`TournamentResult.notes` says so. Games are played in *blocks* of ``num_players``
    games. Block ``b`` seats the table
    ``combinations(entrants, num_players)[b % C]`` (round robin over the tables when there are
    more entrants than seats), shuffles its seating order with the block's seed, then plays it
    once per rotation, so every entrant sits in every seat once per block. With ``duplicate=True``
    all games of a block replay the same deal (the same ``Game`` seed: in this engine the seed
    fixes every shuffle), which cancels most of the luck of the cards; with ``duplicate=False``
    each game gets its own deal. ``games`` is rounded up to whole blocks.

Seeds
    Every seed is derived from ``(seed, block, purpose, rotation, seat)`` with
    ``numpy.random.SeedSequence(seed, spawn_key=...)``, so a game's seeds do not depend on which
    process plays it or in which order: ``workers=2`` gives exactly the results of ``workers=1``.
    Agents are built once per process and ``reset(seed)`` before each game.

Outcome of a game
    The winner of the game (``Game.winner``); ``None`` after a stalemate or when a round exceeds
    ``max_steps`` decisions (a *capped* game, counted as no winner). Places: the winner first,
    then by score (descending, multi-round games), then by the points left in hand (ascending);
    equal keys share a place.

Per entrant
    The leaderboard's columns are listed, each with a one-line legend, in
    :data:`LEADERBOARD_COLUMNS`; rows are sorted by win rate (then mean place). Win rate with a
    95 % Wilson score interval; mean reward as the env's ``reward="win"``
    (docs/api.md#rewards-and-episodes: winner +1, the others -1/(N-1), 0 to all without a
    winner); points scored per round; mean place; a pairwise head-to-head table (share of
    common games finishing ahead, a tie counting half); and a Plackett–Luce rating fitted by
    maximum likelihood on the places of all games at once (:mod:`uno_mk_env.evaluation.ratings`:
    it does not depend on the order of the games; 95 % intervals clustered by deal). Duplicate
    games are not independent, so the Wilson interval is an approximation (a conservative one at
    two players, where the two games of a deal are negatively correlated).

Cheating agents
    An agent with ``cheats = True`` (:class:`uno_mk_env.agents.oracle.CheatingAgent`: it sees
    hidden cards) is refused unless ``allow_cheating=True``; when allowed, :func:`play_game`
    shows it the true game before each of its decisions, and the result marks it
    (``config["cheating"]``, :meth:`TournamentResult.notes`).
"""

from __future__ import annotations

import contextlib
import csv
import ctypes
import itertools
import json
import multiprocessing
import multiprocessing.spawn
import os
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_EXCEPTION, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from uno_mk_env import Game, PlayerView, Rules, RulesError
from uno_mk_env import __version__ as ENV_VERSION
from uno_mk_env.agents.base import (
    Agent,
    AgentError,
    AgentSpecError,
    agent_action,
    build_agent,
    discover_agents,
)
from uno_mk_env.rewards import win_reward
from uno_mk_env.seeding import derive_seed

__all__ = [
    "DEFAULT_MAX_STEPS", "LEADERBOARD_COLUMNS", "AgentError", "AgentSpecError", "GameRecord",
    "GameTask", "OutputPathError", "TournamentError", "TournamentResult", "build_agent",
    "check_output_dir", "cheating_refusal", "discover_agents", "entrant_labels",
    "leaderboard_legend", "make_rules", "play_game", "run_tournament", "schedule",
    "wilson_interval",
]

#: Decisions allowed per round before the game is stopped and counted as having no winner.
DEFAULT_MAX_STEPS = 5000

FILE_NAMES = {
    "json": "tournament.json",
    "leaderboard": "leaderboard.csv",
    "head_to_head": "head_to_head.csv",
    "games": "games.csv",
    "plot": "tournament.png",
}


#: The leaderboard's columns: (row key, table header, one-line legend). Rows are sorted by win
#: rate, the metric a tournament's leaderboard is about (then mean place, then label).
LEADERBOARD_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("rank", "#", "position in this table, sorted by win rate (ties: mean place)"),
    ("agent", "agent", "entrant: its agent spec; spec#k is the k-th copy of the same spec"),
    ("games", "games", "games the entrant played"),
    ("wins", "wins", "games it won"),
    ("win_rate", "win rate [95% CI]",
     "wins / games, with a 95% Wilson score interval (duplicate deals make it approximate)"),
    ("mean_reward", "reward",
     "mean reward=\"win\": +1 for a win, -1/(N-1) for a loss, 0 when nobody won"),
    ("points_per_round", "pts/round", "points it scored per round played (docs/rules.md R10.2)"),
    ("mean_place", "place",
     "mean finishing place: 1 = winner, then by score, then by points left in hand"),
    ("rating", "rating [95% CI]",
     "Plackett-Luce log-strength fitted on all games' finishing orders at once (mean 0; a "
     "gap d between two entrants: odds e^d that the first finishes ahead); CI clustered by deal"),
)


def leaderboard_legend() -> list[str]:
    """One line per leaderboard column: ``"header: legend"``."""
    return [f"{header}: {legend}" for _, header, legend in LEADERBOARD_COLUMNS]


def cheating_refusal(label: str) -> str:
    """The one-line refusal of a cheating agent in a tournament that does not allow it."""
    return (f"agent {label!r} cheats (it sees hidden cards) and is refused here; it is only a "
            "reference for the skill ceiling: pass allow_cheating=True (--allow-cheating) to "
            "play it anyway")


#: Written by :meth:`TournamentResult.save` when the tournament recorded games (``replays``).
REPLAYS_FILE = "replays.json"


class TournamentError(RuntimeError):
    """The tournament could not finish: a worker process died or could not start (one line)."""


class OutputPathError(ValueError):
    """A place where the result files cannot be written (one line naming it)."""


# --------------------------------------------------------------------------------- agents
def entrant_labels(agent_specs: Sequence[str], num_players: int) -> list[tuple[str, str]]:
    """The entrants as ``(label, spec)`` pairs: specs cycled to fill a table when there are fewer
    than ``num_players``; the k-th copy of a spec is labelled ``spec#k``."""
    if not agent_specs:
        raise AgentSpecError("no agents given")
    specs = list(agent_specs)
    if len(specs) < num_players:
        specs = [specs[i % len(specs)] for i in range(num_players)]
    seen: dict[str, int] = {}
    out = []
    for spec in specs:
        seen[spec] = seen.get(spec, 0) + 1
        out.append((spec if seen[spec] == 1 else f"{spec}#{seen[spec]}", spec))
    return out


def make_rules(rules: Mapping[str, Any] | Rules | None, num_players: int) -> Rules:
    """Validated rules for a table of ``num_players`` (a ``num_players`` in ``rules`` must agree).

    Raises:
        RulesError: naming the bad option (from :class:`~uno_mk_env.Rules`).
    """
    if isinstance(rules, Rules):
        if rules.num_players != num_players:
            raise RulesError(
                f"rules have num_players={rules.num_players} but num_players={num_players}"
            )
        return rules
    options = dict(rules or {})
    given = options.get("num_players", num_players)
    if given != num_players:
        raise RulesError(
            f"rule option num_players={given!r} contradicts num_players={num_players!r}"
        )
    options["num_players"] = num_players
    return Rules(**options)


# ------------------------------------------------------------------------------- schedule
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


def schedule(
    num_entrants: int, num_players: int, games: int, seed: int, duplicate: bool = True
) -> list[GameTask]:
    """The games of a tournament (see the module docstring), rounded up to whole blocks."""
    n = num_players
    tables = list(itertools.combinations(range(num_entrants), n))
    if not tables:
        raise ValueError(f"{num_entrants} entrants cannot fill a table of {n}")
    tasks = []
    for block in range(-(-games // n)):
        table = tables[block % len(tables)]
        order = [table[i] for i in np.random.default_rng(_seed(seed, block, _ORDER)).permutation(n)]
        deal_seed = _seed(seed, block, _DEAL)
        for r in range(n):
            index = block * n + r
            tasks.append(GameTask(
                index=index,
                deal=block if duplicate else index,
                game_seed=deal_seed if duplicate else _seed(seed, block, _DEAL, r),
                seats=tuple(order[(s + r) % n] for s in range(n)),
                agent_seeds=tuple(_seed(seed, block, _AGENT, r, s) for s in range(n)),
            ))
    return tasks


# ---------------------------------------------------------------------------------- games
@dataclass(frozen=True)
class GameRecord:
    """The outcome of one game; per-seat lists are indexed by seat.

    ``end`` is ``"win"``, ``"no_winner"`` (stalemate, or a tied fixed-rounds game) or
    ``"capped"`` (a round exceeded the step cap). ``scores`` are the game's final scores,
    ``hand_points`` the points left in each hand when it ended, ``places`` 1 = first.
    """

    index: int
    deal: int
    seed: int
    seats: tuple[int, ...]
    winner: int | None
    end: str
    scores: tuple[int, ...]
    hand_points: tuple[int, ...]
    places: tuple[int, ...]
    rounds: int
    decisions: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index, "deal": self.deal, "seed": self.seed, "seats": list(self.seats),
            "winner": self.winner, "end": self.end, "scores": list(self.scores),
            "hand_points": list(self.hand_points), "places": list(self.places),
            "rounds": self.rounds, "decisions": self.decisions,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> GameRecord:
        return cls(
            index=d["index"], deal=d["deal"], seed=d["seed"], seats=tuple(d["seats"]),
            winner=d["winner"], end=d["end"], scores=tuple(d["scores"]),
            hand_points=tuple(d["hand_points"]), places=tuple(d["places"]),
            rounds=d["rounds"], decisions=d["decisions"],
        )


def places(winner: int | None, scores: Sequence[int], hand_points: Sequence[int]) -> list[int]:
    """Places (1 = first): the winner, then score descending, then hand points ascending; equal
    keys share the better place."""
    keys = [(s != winner, -scores[s], hand_points[s]) for s in range(len(scores))]
    return [1 + sum(other < key for other in keys) for key in keys]


def play_game(
    task: GameTask,
    players: Sequence[Agent],
    rules: Rules,
    max_steps: int = DEFAULT_MAX_STEPS,
    labels: Sequence[str] | None = None,
    encode: Callable[[PlayerView], np.ndarray] | None = None,
    allow_cheating: bool = False,
) -> GameRecord:
    """Plays one game, driving the engine directly; ``players[seat]`` acts for ``seat``.

    A cheating agent (``cheats = True``) is refused unless ``allow_cheating``; when allowed, it
    is shown the true game (``observe_game``) before each of its decisions.

    Raises:
        AgentError: an agent returned an illegal action or raised; names the agent and seat.
        AgentSpecError: a cheating agent without ``allow_cheating``.
    """
    labels = labels if labels is not None else [a.name for a in players]
    cheats = [bool(getattr(a, "cheats", False)) for a in players]
    if any(cheats) and not allow_cheating:
        raise AgentSpecError(cheating_refusal(labels[cheats.index(True)]))
    for seat, agent in enumerate(players):
        agent.reset(task.agent_seeds[seat])
    g = Game(rules, seed=task.game_seed)
    in_round = 0
    capped = False
    while not g.game_over:
        if in_round >= max_steps:
            capped = True
            break
        p = g.current_player
        if cheats[p]:
            players[p].observe_game(g)  # type: ignore[attr-defined]
        try:
            action = agent_action(players[p], g, labels[p], encode)
        except AgentError as e:
            raise AgentError(f"{e} (game {task.index}, seed {task.game_seed})") from e.__cause__
        g.step(action)
        in_round = 0 if g.round_over else in_round + 1
    n = rules.num_players
    winner = None if capped else g.winner
    scores = tuple(g.scores)
    hand_points = tuple(g.hand_points(s) for s in range(n))
    return GameRecord(
        index=task.index, deal=task.deal, seed=task.game_seed, seats=task.seats, winner=winner,
        end="capped" if capped else ("win" if winner is not None else "no_winner"),
        scores=scores, hand_points=hand_points,
        places=tuple(places(winner, scores, hand_points)), rounds=g.round,
        decisions=g.num_steps,
    )


class _Runner:
    """Plays tasks in one process; builds each entrant's agent on first use and keeps it (one
    per entrant and process, reset before every game)."""

    def __init__(self, entrants: Sequence[tuple[str, str]], rules: Rules, max_steps: int,
                 allow_cheating: bool = False):
        self.entrants = list(entrants)
        self.rules = rules
        self.max_steps = max_steps
        self.allow_cheating = allow_cheating
        self.agents: dict[int, Agent] = {}

    def play(self, task: GameTask) -> GameRecord:
        for e in task.seats:
            if e not in self.agents:
                self.agents[e] = build_agent(self.entrants[e][1], seed=0)
        return play_game(
            task, [self.agents[e] for e in task.seats], self.rules, self.max_steps,
            labels=[self.entrants[e][0] for e in task.seats], allow_cheating=self.allow_cheating,
        )


#: The runner of a worker process, made once by :func:`_init_worker` (so a model is loaded once
#: per worker, not once per chunk of games).
_WORKER_RUNNER: _Runner | None = None
_PR_SET_PDEATHSIG = 1


def _init_worker(
    entrants: list[tuple[str, str]], rules: dict, max_steps: int, parent: int,
    allow_cheating: bool = False,
) -> None:
    """Initializer of a worker process of the main process ``parent`` (a pid):
    :func:`_worker_signals`, then the process's runner."""
    global _WORKER_RUNNER
    _worker_signals(parent)
    _WORKER_RUNNER = _Runner(entrants, Rules(**rules), max_steps, allow_cheating)


def _worker_signals(parent: int) -> None:
    """Ctrl-C ignored and SIGTERM the default action in a worker (a forked worker inherits the
    main process's handlers; the main process ends the workers itself); on Linux, a SIGTERM
    when the main process dies, so that no worker outlives it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM))
            if os.getppid() != parent:  # it died before prctl: nobody to work for
                os._exit(0)


def _play_chunk(tasks: list[GameTask]) -> list[GameRecord]:
    if _WORKER_RUNNER is None:
        raise RuntimeError("_play_chunk runs in a worker started with _init_worker")
    return [_WORKER_RUNNER.play(t) for t in tasks]


def _check_workers_can_start(method: str, workers: int) -> None:
    """A spawned worker re-imports the main script (``__main__``) before it does anything; when
    that script is not a file (read from standard input, say) every worker would die at once.

    Raises:
        TournamentError: naming the script and what to do instead.
    """
    if method == "fork":
        return
    main_path = multiprocessing.spawn.get_preparation_data("check").get("init_main_from_path")
    if main_path is not None and not os.path.isfile(main_path):
        name = getattr(sys.modules.get("__main__"), "__file__", main_path)
        raise TournamentError(
            f"workers={workers} cannot start: worker processes are started with {method!r} "
            f"(torch is loaded) and re-import the main script, which is {name!r}, not a file; "
            "run the script from a file (its entry point under if __name__ == '__main__':) or "
            "use workers=1"
        )


def _worker_death(processes: Sequence[Any], method: str) -> str:
    """One line about the worker process that died (its exit code or signal)."""
    ended = [(p.pid, p.exitcode) for p in processes if p.exitcode is not None]
    # The pool terminates (SIGTERM) the other workers after the first one dies.
    culprits = [e for e in ended if e[1] != -signal.SIGTERM] or ended
    if culprits:
        pid, code = culprits[0]
        if code < 0:
            try:
                how = f"killed by {signal.Signals(-code).name}"
            except ValueError:
                how = f"killed by signal {-code}"
        else:
            how = f"exit code {code}"
        what = f"pid {pid}, {how}"
    else:
        what = "exit status unknown"
    hint = ""
    if method != "fork":
        hint = (f"; with the {method!r} start method each worker re-imports the main script, "
                "so a script must run its tournament under if __name__ == '__main__':")
    return f"a worker process died ({what}); the tournament stopped without results{hint}"


def _end_workers(executor: ProcessPoolExecutor, processes: Sequence[Any]) -> None:
    """Ends a pool after an error or an interruption: the workers are terminated (they may be in
    the middle of a chunk), the pool notices it and fails its pending chunks (futures are not
    cancelled from here: the pool's thread owns them until then), then its thread is joined."""
    for p in processes:
        if p.exitcode is None:
            with contextlib.suppress(Exception):
                p.terminate()
    for p in processes:
        with contextlib.suppress(Exception):
            p.join(5)
            if p.exitcode is None:
                p.kill()
                p.join(1)
    executor.shutdown(wait=True, cancel_futures=True)


def _start_method() -> str:
    """``fork`` where it exists (fast, and scripts need no ``__main__`` guard), except once torch
    is loaded: forking a process whose torch thread pools are running can deadlock, so then a
    clean ``spawn`` interpreter per worker (which does need the guard in scripts)."""
    methods = multiprocessing.get_all_start_methods()
    return "fork" if "fork" in methods and "torch" not in sys.modules else "spawn"


def _play_in_workers(
    tasks: list[GameTask], entrants: list[tuple[str, str]], rules: Rules, max_steps: int,
    workers: int, records: list[GameRecord], bar: Any, allow_cheating: bool = False,
) -> None:
    """Plays ``tasks`` in chunks on a pool of worker processes, appending to ``records``.

    A worker that dies (killed, out of memory, unable to start) ends the tournament with a
    :class:`TournamentError` as soon as the pool notices it; an agent's error in a worker is
    raised here as it was raised there; either way, and on an interruption, the workers are
    ended before this returns.
    """
    method = _start_method()
    _check_workers_can_start(method, workers)
    size = max(1, min(50, len(tasks) // (workers * 8)))
    chunks = list(_chunks(tasks, size))
    executor = ProcessPoolExecutor(
        min(workers, len(chunks)), mp_context=multiprocessing.get_context(method),
        initializer=_init_worker, initargs=(entrants, rules.to_dict(), max_steps, os.getpid(),
                                               allow_cheating),
    )
    futures: list[Future] = []
    processes: list[Any] = []
    ended = False
    try:
        for chunk in chunks:
            futures.append(executor.submit(_play_chunk, chunk))
            # The pool starts its processes on submission; keep them to report or end them.
            processes = list((getattr(executor, "_processes", None) or {}).values()) or processes
        pending = set(futures)
        while pending:
            done, pending = wait(pending, return_when=FIRST_EXCEPTION)
            for future in done:
                chunk_records = future.result()  # raises a worker's exception
                records.extend(chunk_records)
                if bar is not None:
                    bar.update(len(chunk_records))
        executor.shutdown(wait=True)
        ended = True
    except BrokenProcessPool:
        _end_workers(executor, processes)
        ended = True
        raise TournamentError(_worker_death(processes, method)) from None
    finally:
        if not ended:
            _end_workers(executor, processes)


def _chunks(items: list, size: int) -> Iterator[list]:
    for i in range(0, len(items), size):
        yield items[i:i + size]


# ---------------------------------------------------------------------------------- files
def check_output_dir(path: str | Path, file_names: Iterable[str] | None = None) -> Path:
    """Makes sure files can be written into the directory ``path`` before any work is done:
    creates it (with its parents) if needed, writes and removes a probe file, and checks that
    none of ``file_names`` (default: the result files, :data:`FILE_NAMES`) exists as something
    other than a file.

    Returns:
        The directory.

    Raises:
        OutputPathError: one line naming the place and the reason (it or a parent is not a
            directory, it cannot be created or written).
    """
    out = Path(path).expanduser()
    names = FILE_NAMES.values() if file_names is None else file_names
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
    for name in names:
        target = out / name
        if target.exists() and not target.is_file():
            raise OutputPathError(f"cannot write {str(target)!r}: it exists and is not a file")
    return out


# ----------------------------------------------------------------------------- statistics
def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion (``(0, 1)`` when ``n == 0``), by scipy."""
    if n == 0:
        return 0.0, 1.0
    from scipy.stats import binomtest

    ci = binomtest(successes, n).proportion_ci(confidence_level=confidence, method="wilson")
    return float(ci.low), float(ci.high)


#: Width of one character of a tick label in the plot (10 pt), to size the figure for long labels.
_LABEL_INCHES_PER_CHAR = 0.075


@dataclass
class TournamentResult:
    """Everything a tournament produced: its configuration, one record per game (in schedule
    order) and the statistics derived from them.

    Attributes:
        config: the arguments (agents, entrants, players, games, seed, full rules, ...).
        entrants: entrant labels; ``GameRecord.seats`` index into this list.
        records: the games, by ``index``.
        elapsed: wall-clock seconds (not part of equality).
        workers: processes used (not part of equality).
        replays: the games recorded decision by decision (``run_tournament(..., replays=N)``,
            :mod:`uno_mk_env.evaluation.replay`), or ``None`` (not part of equality).
    """

    config: dict[str, Any]
    entrants: list[str]
    records: list[GameRecord]
    elapsed: float = field(default=0.0, compare=False)
    workers: int = field(default=1, compare=False)
    replays: list[dict[str, Any]] | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        self._stats = self._compute()

    def _compute(self) -> dict[str, Any]:
        k = len(self.entrants)
        games = [0] * k
        wins = [0] * k
        no_result = [0] * k
        reward = [0.0] * k
        points = [0] * k
        rounds = [0] * k
        place_sum = [0] * k
        h2h_ahead = [[0] * k for _ in range(k)]
        h2h_ties = [[0] * k for _ in range(k)]
        h2h_games = [[0] * k for _ in range(k)]
        for rec in self.records:
            n = len(rec.seats)
            for s, e in enumerate(rec.seats):
                games[e] += 1
                rounds[e] += rec.rounds
                points[e] += rec.scores[s]
                place_sum[e] += rec.places[s]
                reward[e] += win_reward(n, rec.winner, s)
                if rec.winner is None:
                    no_result[e] += 1
                elif rec.winner == s:
                    wins[e] += 1
                for t, f in enumerate(rec.seats):
                    if t == s:
                        continue
                    h2h_games[e][f] += 1
                    if rec.places[s] < rec.places[t]:
                        h2h_ahead[e][f] += 1
                    elif rec.places[s] == rec.places[t]:
                        h2h_ties[e][f] += 1
        from .ratings import rating_rows

        ratings = rating_rows(self.entrants, self.records)
        rows = []
        for e, label in enumerate(self.entrants):
            lo, hi = wilson_interval(wins[e], games[e])
            g = max(games[e], 1)
            rows.append({
                "agent": label,
                "games": games[e],
                "wins": wins[e],
                "no_winner": no_result[e],
                "win_rate": wins[e] / g,
                "win_ci_low": lo,
                "win_ci_high": hi,
                "mean_reward": reward[e] / g,
                "points_per_round": points[e] / max(rounds[e], 1),
                "mean_place": place_sum[e] / g,
                **ratings[e],
            })
        rows.sort(key=lambda r: (-r["win_rate"], r["mean_place"], r["agent"]))
        for i, row in enumerate(rows, 1):
            row["rank"] = i
        score = [
            [
                (h2h_ahead[a][b] + 0.5 * h2h_ties[a][b]) / h2h_games[a][b]
                if h2h_games[a][b] else None
                for b in range(k)
            ]
            for a in range(k)
        ]
        ends = {"win": 0, "no_winner": 0, "capped": 0}
        for rec in self.records:
            ends[rec.end] += 1
        return {
            "leaderboard": rows,
            "head_to_head": {
                "agents": list(self.entrants), "score": score, "ahead": h2h_ahead,
                "ties": h2h_ties, "games": h2h_games,
            },
            "outcomes": ends,
        }

    # -------------------------------------------------------------------- accessors
    def leaderboard(self) -> list[dict[str, Any]]:
        """One row per entrant, best win rate first (then mean place; keys: rank, agent, games,
        wins, no_winner, win_rate, win_ci_low, win_ci_high, mean_reward, points_per_round,
        mean_place, rating, rating_ci_low, rating_ci_high; legends in
        :data:`LEADERBOARD_COLUMNS`)."""
        return [dict(r) for r in self._stats["leaderboard"]]

    def notes(self) -> list[str]:
        """What a reader of the leaderboard must know beyond its columns: entrants added to fill
        the table (copies of the specs given), and cheating agents."""
        c = self.config
        out = []
        specs = c.get("agents", [])
        if len(specs) < c["num_players"]:
            added = c["entrants"][len(specs):]
            out.append(
                f"{len(specs)} agent spec(s) for {c['num_players']} seats: the specs were cycled "
                f"to fill the table, adding {', '.join(added)} (copies of the same agents)"
            )
        for label in c.get("cheating", []):
            out.append(f"{label} cheats (it sees hidden cards): a skill-ceiling reference, "
                       "not a competitor")
        return out

    def head_to_head(self) -> dict[str, Any]:
        """``score[a][b]``: share of the games entrants ``a`` and ``b`` played together in which
        ``a`` placed ahead of ``b`` (ties count half; ``None`` if they never met). Also the raw
        counts ``ahead``, ``ties`` and ``games``; rows and columns follow ``agents``."""
        return json.loads(json.dumps(self._stats["head_to_head"]))

    def outcomes(self) -> dict[str, int]:
        """Games per ending: ``win``, ``no_winner``, ``capped``."""
        return dict(self._stats["outcomes"])

    def to_dict(self, include_games: bool = True) -> dict[str, Any]:
        """A JSON-safe dict of the whole result (``run`` holds the timing)."""
        d: dict[str, Any] = {
            "config": self.config,
            "run": {
                "workers": self.workers, "elapsed_s": round(self.elapsed, 3),
                "decisions": sum(r.decisions for r in self.records),
            },
            "leaderboard": self.leaderboard(),
            "head_to_head": self.head_to_head(),
            "outcomes": self.outcomes(),
        }
        if include_games:
            d["games"] = [r.to_dict() for r in self.records]
        return d

    def to_json(self, indent: int | None = 2) -> str:
        """:meth:`to_dict` as JSON text."""
        return json.dumps(self.to_dict(), indent=indent)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> TournamentResult:
        """Rebuilds a result (statistics recomputed) from :meth:`to_dict` output."""
        run = d.get("run", {})
        return cls(
            config=dict(d["config"]), entrants=list(d["config"]["entrants"]),
            records=[GameRecord.from_dict(r) for r in d["games"]],
            elapsed=run.get("elapsed_s", 0.0), workers=run.get("workers", 1),
        )

    # -------------------------------------------------------------------------- files
    def save(self, out_dir: str | Path, plot: bool = True) -> dict[str, Path]:
        """Writes the JSON, the CSVs (leaderboard, head-to-head, games) and the plot into
        ``out_dir`` (created if needed); returns their paths by kind (see ``FILE_NAMES``).

        Raises:
            OutputPathError: ``out_dir`` cannot be written (:func:`check_output_dir`, which
                callers can run before the tournament).
        """
        out = check_output_dir(out_dir)
        paths = {kind: out / name for kind, name in FILE_NAMES.items()}
        paths["json"].write_text(self.to_json() + "\n", encoding="utf-8")
        rows = self.leaderboard()
        columns = ["rank", *[c for c in rows[0] if c != "rank"]] if rows else ["rank"]
        with paths["leaderboard"].open("w", newline="", encoding="utf-8") as f:
            writer = csv.DictWriter(f, fieldnames=columns)
            writer.writeheader()
            writer.writerows(rows)
        h2h = self.head_to_head()
        with paths["head_to_head"].open("w", newline="", encoding="utf-8") as f:
            writer = csv.writer(f)
            writer.writerow(["agent", "opponent", "games", "ahead", "ties", "score"])
            for a, b in itertools.permutations(range(len(self.entrants)), 2):
                if h2h["games"][a][b]:
                    writer.writerow([
                        self.entrants[a], self.entrants[b], h2h["games"][a][b],
                        h2h["ahead"][a][b], h2h["ties"][a][b], h2h["score"][a][b],
                    ])
        with paths["games"].open("w", newline="", encoding="utf-8") as f:
            writer = csv.writer(f)
            writer.writerow([
                "index", "deal", "seed", "seat_agents", "winner_seat", "winner_agent", "end",
                "scores", "hand_points", "places", "rounds", "decisions",
            ])
            for r in self.records:
                writer.writerow([
                    r.index, r.deal, r.seed, "|".join(self.entrants[e] for e in r.seats),
                    "" if r.winner is None else r.winner,
                    "" if r.winner is None else self.entrants[r.seats[r.winner]], r.end,
                    "|".join(map(str, r.scores)), "|".join(map(str, r.hand_points)),
                    "|".join(map(str, r.places)), r.rounds, r.decisions,
                ])
        if self.replays:  # the recorded games, for uno-mk replay --from DIR
            from uno_mk_env.evaluation.replay import recording, write_json

            paths["replays"] = write_json(recording(self.replays), out / REPLAYS_FILE)
        if plot:
            self.plot(paths["plot"])
        else:
            del paths["plot"]
        return paths

    def plot(self, path: str | Path) -> None:
        """Saves a PNG of :meth:`figure`."""
        self.figure().savefig(path, dpi=100)

    def figure(self) -> Any:
        """A matplotlib ``Figure``: win rates with 95 % intervals, and the head-to-head heatmap,
        sized for the longest agent label so that labels, titles and the colour bar never
        overlap."""
        # Figure + Agg canvas directly: no pyplot, so no global backend is switched for callers.
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        k = len(self.entrants)
        label = _LABEL_INCHES_PER_CHAR * max(len(e) for e in self.entrants)
        fig = Figure(figsize=(6 + 0.6 * k + 2 * label, 3.5 + 0.45 * k + 0.7 * label),
                     layout="constrained")
        FigureCanvasAgg(fig)
        ax_rate, ax_h2h = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1, 1.1]})
        rows = self.leaderboard()
        self._plot_rates(ax_rate, rows[::-1])  # best at the top of a horizontal bar chart
        self._plot_head_to_head(fig, ax_h2h, [self.entrants.index(r["agent"]) for r in rows])
        c = self.config
        fig.suptitle(
            f"{c['num_players']} players, {c['games']} games"
            f"{' (duplicate deals)' if c['duplicate'] else ''}, seed {c['seed']}, "
            f"match={c['rules']['match']}"
        )
        return fig

    def _plot_rates(self, ax: Any, rows: list[dict[str, Any]]) -> None:
        """Win rates of ``rows`` (bottom to top) with their Wilson intervals."""
        y = np.arange(len(rows))
        rate = np.array([r["win_rate"] for r in rows])
        err = np.array([
            [r["win_rate"] - r["win_ci_low"] for r in rows],
            [r["win_ci_high"] - r["win_rate"] for r in rows],
        ])
        ax.barh(y, rate, xerr=err, capsize=4, color="tab:blue", alpha=0.8)
        ax.axvline(1 / self.config["num_players"], color="grey", ls="--", lw=1,
                   label="equal share 1/N")
        ax.set_yticks(y, [r["agent"] for r in rows])
        ax.set_xlim(0, 1)
        ax.set_xlabel("win rate (95% Wilson CI)")
        ax.legend(loc="lower right", fontsize="small")

    def _plot_head_to_head(self, fig: Any, ax: Any, order: list[int]) -> None:
        """The head-to-head heatmap of the entrants ``order`` (leaderboard order), its colour
        bar at its right (the title, on two lines, stays within the heatmap's width)."""
        h2h = self.head_to_head()
        k = len(order)
        names = [self.entrants[e] for e in order]
        score = np.array(
            [[np.nan if h2h["score"][a][b] is None else h2h["score"][a][b] for b in order]
             for a in order],
            dtype=float,
        )
        im = ax.imshow(score, vmin=0, vmax=1, cmap="RdBu")
        ax.set_xticks(range(k), names, rotation=45, ha="right")
        ax.set_yticks(range(k), names)
        ax.set_xlabel("opponent")
        ax.set_title("head-to-head: share of games\nthe row placed ahead of the column",
                     fontsize="medium")
        for a in range(k):
            for b in range(k):
                if not np.isnan(score[a, b]):
                    ax.text(b, a, f"{score[a, b]:.2f}", ha="center", va="center",
                            fontsize="small",
                            color="white" if abs(score[a, b] - 0.5) > 0.3 else "black")
        fig.colorbar(im, ax=ax, shrink=0.8)


# ---------------------------------------------------------------------------------- entry
def run_tournament(
    agent_specs: Sequence[str],
    num_players: int,
    games: int,
    seed: int = 0,
    rules: Mapping[str, Any] | Rules | None = None,
    duplicate: bool = True,
    workers: int = 1,
    progress: bool = False,
    max_steps: int = DEFAULT_MAX_STEPS,
    allow_cheating: bool = False,
    replays: int = 0,
) -> TournamentResult:
    """Plays a seeded tournament (see the module docstring).

    Args:
        agent_specs: agent specs (``uno_mk_env.agents.make_agent`` strings); repeats are
            separate entrants.
        num_players: seats per table (2-10).
        games: games to play, rounded up to a multiple of ``num_players``.
        seed: non-negative root seed; the same seed gives identical results for any ``workers``.
        rules: rule options (``uno_mk_env.rules.OPTIONS`` names) or a ``Rules``;
            ``{"match": "target_score"}`` plays full games to 500.
        duplicate: replay each deal once per seat rotation.
        workers: processes to play in (results do not depend on it).
        progress: show a tqdm progress bar (on stderr).
        max_steps: decisions allowed per round; a round beyond it ends the game without winner.
        replays: record the first ``replays`` games decision by decision for the replay viewer
            (re-played in this process after the tournament and checked against their
            results; ``TournamentResult.replays``, saved as ``replays.json``).
        allow_cheating: admit agents that see hidden cards (``cheats = True``, such as
            ``oracle``); without it they are refused.

    Raises:
        AgentSpecError: an agent spec cannot be built, or cheats without ``allow_cheating``.
            RulesError: a bad rule option or player
            count. ValueError: bad ``games``/``seed``/``workers``. AgentError: an agent failed.
            TournamentError: a worker process died or could not start (``workers > 1``; the
            other workers are ended first).
    """
    rules_obj = make_rules(rules, num_players)
    for name, value, low in (("games", games, 1), ("workers", workers, 1),
                             ("max_steps", max_steps, 1), ("seed", seed, 0),
                             ("replays", replays, 0)):
        if not isinstance(value, int) or isinstance(value, bool) or value < low:
            raise ValueError(f"{name} must be an int ≥ {low}, got {value!r}")
    if workers > 1 and getattr(multiprocessing.current_process(), "_inheriting", False):
        # A spawned worker re-importing a script that starts a tournament when imported.
        raise TournamentError(
            f"workers={workers}: this process is a worker re-importing the main script, which "
            "starts a tournament when imported; put that under if __name__ == '__main__':"
        )
    entrants = entrant_labels(agent_specs, num_players)
    cheating = set()
    for spec in dict.fromkeys(spec for _, spec in entrants):
        agent = build_agent(spec, seed=0)  # fail fast, in this process, with a one-line reason
        if getattr(agent, "cheats", False):
            if not allow_cheating:
                raise AgentSpecError(cheating_refusal(spec))
            cheating.add(spec)
    tasks = schedule(len(entrants), num_players, games, seed, duplicate)
    config = {
        "agents": list(agent_specs),
        "entrants": [label for label, _ in entrants],
        "entrant_specs": [spec for _, spec in entrants],
        "num_players": num_players,
        "games": len(tasks),
        "games_requested": games,
        "seed": seed,
        "duplicate": duplicate,
        "max_steps": max_steps,
        "rules": rules_obj.to_dict(),
        "env_version": ENV_VERSION,
        "allow_cheating": allow_cheating,
        "cheating": [label for label, spec in entrants if spec in cheating],
    }
    start = time.perf_counter()
    records: list[GameRecord] = []
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(tasks), unit="game", desc="tournament", dynamic_ncols=True)
    try:
        if workers == 1:
            runner = _Runner(entrants, rules_obj, max_steps, allow_cheating)
            for task in tasks:
                records.append(runner.play(task))
                if bar is not None:
                    bar.update(1)
        else:
            _play_in_workers(tasks, entrants, rules_obj, max_steps, workers, records, bar,
                             allow_cheating)
    finally:
        if bar is not None:
            bar.close()
    records.sort(key=lambda r: r.index)
    elapsed = time.perf_counter() - start
    recorded = None
    if replays:
        from uno_mk_env.evaluation.replay import record_tournament_games

        recorded = record_tournament_games(tasks[:replays], entrants, rules_obj, max_steps,
                                           records)
    return TournamentResult(
        config=config, entrants=config["entrants"], records=records,
        elapsed=elapsed, workers=workers, replays=recorded,
    )
