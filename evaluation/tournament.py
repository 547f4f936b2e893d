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
    once per rotation, so every entrant sits in every seat once per block. With
    ``duplicate=True`` all games of a block replay the same deal (the same ``Game`` seed: in
    this engine the seed fixes every shuffle), which cancels most of the luck of the cards;
    with ``duplicate=False`` each game gets its own deal. ``games`` is rounded up to whole
    blocks. The schedule is never listed in full (:class:`Schedule` computes game ``i`` from
    its index and iterates lazily), so its size costs no memory; a tournament plays at most
    :data:`MAX_GAMES` games among at most :data:`MAX_ENTRANTS` entrants on at most
    :data:`MAX_WORKERS` workers, and larger requests are refused before anything is played.

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

Journal and resume
    With ``journal=PATH`` every finished game is appended to a journal as its chunk completes
    (:mod:`uno_mk_env.evaluation.journal`); ``resume=True`` reads the journal back, checks it
    and plays only the games it lacks, which gives the same result as an uninterrupted run
    (a game's result depends only on its seeds). The command line keeps the journal in the
    ``--out`` folder and locks that folder for the run
    (:class:`~uno_mk_env.files.OutputLock`).

Cheating agents
    An agent with ``cheats = True`` (:class:`uno_mk_env.agents.oracle.CheatingAgent`: it sees
    hidden cards) is refused unless ``allow_cheating=True``; when allowed, the match driver
    (:mod:`uno_mk_env.evaluation.match`, where the policy is stated) shows it the true game
    before each of its decisions, and the result marks it (``config["cheating"]``,
    :meth:`TournamentResult.notes`).

Backends and early stops
    The chunks of games are played by a backend (:mod:`~uno_mk_env.evaluation.backends`: this
    process, a local pool of worker processes, or tasks on a Ray cluster), which owns the
    worker processes; results do not depend on it. With ``sprt`` the tournament stops as soon
    as a sequential test of entrant 0 against the others decides
    (:mod:`~uno_mk_env.evaluation.sprt`).

This module plays (schedule, games); the statistics are in
:mod:`~uno_mk_env.evaluation.results`, the files and plot in :mod:`~uno_mk_env.evaluation.tables`
and :mod:`~uno_mk_env.files`. Every public name stays importable from here.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import tempfile  # noqa: F401  (``tournament.tempfile``: kept for callers that patch it)
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from uno_mk_env import PlayerView, Rules, files
from uno_mk_env import __version__ as ENV_VERSION
from uno_mk_env.agents.base import (
    Agent,
    AgentError,
    AgentSpecError,
    build_agent,
    discover_agents,
)
from uno_mk_env.engine.rewards import places
from uno_mk_env.evaluation.replay import record_tournament_games
from uno_mk_env.files import OutputLock, OutputPathError

from .backends import BACKENDS, BackendError, Job, check_workers_can_start, play_chunks
from .journal import JOURNAL_FILE, JournalError, JournalWriter, read_journal
from .match import admit, cheating_refusal, make_rules, play_match
from .progress import Progress
from .replay_format import MAX_REPLAY_GAMES
from .results import (
    LEADERBOARD_COLUMNS,
    GameRecord,
    TournamentResult,
    leaderboard_legend,
    wilson_interval,
)
from .scheduling import GameTask, Schedule, schedule
from .sprt import Sprt, SprtError, SprtSpec
from .tables import FILE_NAMES, REPLAYS_FILE

__all__ = [
    "DEFAULT_MAX_STEPS", "FILE_NAMES", "JOURNAL_FILE", "LEADERBOARD_COLUMNS", "MAX_ENTRANTS",
    "MAX_GAMES", "REPLAYS_FILE", "BACKENDS", "SprtSpec",
    "MAX_REPLAYS", "MAX_WORKERS", "AgentError", "AgentSpecError", "GameRecord", "GameTask",
    "JournalError", "OutputLock", "OutputPathError", "Schedule", "TournamentError",
    "TournamentResult", "build_agent", "check_output_dir", "check_sizes", "cheating_refusal",
    "discover_agents", "entrant_labels", "leaderboard_legend", "make_rules", "places",
    "play_game", "run_tournament", "schedule", "wilson_interval",
]

#: Decisions allowed per round before the game is stopped and counted as having no winner.
DEFAULT_MAX_STEPS = 5000
#: Most games one tournament plays (a game's record takes about 0.5 kB in memory and in each
#: result file): larger requests are refused before anything is played.
MAX_GAMES = 1_000_000
#: Most entrants of one tournament (its head-to-head table has one cell per pair).
MAX_ENTRANTS = 1000
#: Most worker processes.
MAX_WORKERS = 256
#: Most games recorded decision by decision (``replays``; a recorded game is ~0.2-2 MB).
MAX_REPLAYS = MAX_REPLAY_GAMES


#: The tournament could not finish: a worker process died or could not start, or the backend
#: is out of reach (one line; exit code 1). Raised by :mod:`~uno_mk_env.evaluation.backends`.
TournamentError = BackendError


def check_output_dir(path: str | Path, file_names: Iterable[str] | None = None) -> Path:
    """:func:`uno_mk_env.files.check_output_dir` with the result files
    (:data:`FILE_NAMES`) as the default ``file_names``."""
    return files.check_output_dir(path, FILE_NAMES.values() if file_names is None
                                    else file_names)


def check_sizes(games: int, workers: int = 1, replays: int = 0, entrants: int = 1,
                flags: Mapping[str, str] | None = None) -> None:
    """Refuses a request beyond the bounds (:data:`MAX_GAMES`, :data:`MAX_WORKERS`,
    :data:`MAX_REPLAYS`, :data:`MAX_ENTRANTS`) or below 1 (0 for ``replays``) before anything
    is played; ``flags`` renames the arguments in the message (``{"games": "--games"}``).

    Raises:
        ValueError: one line naming the argument, the allowed range and the value.
    """
    names = {"games": "games", "workers": "workers", "replays": "replays",
             "entrants": "entrants", **(flags or {})}
    for key, value, low, high in (("games", games, 1, MAX_GAMES),
                                  ("workers", workers, 1, MAX_WORKERS),
                                  ("replays", replays, 0, MAX_REPLAYS),
                                  ("entrants", entrants, 1, MAX_ENTRANTS)):
        if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
            raise ValueError(f"{names[key]} must be at least {low} and at most {high:,}, got "
                             f"{str(value)[:40]}")


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


# ---------------------------------------------------------------------------------- games
def play_game(
    task: GameTask,
    players: Sequence[Agent],
    rules: Rules,
    max_steps: int = DEFAULT_MAX_STEPS,
    labels: Sequence[str] | None = None,
    encode: Callable[[PlayerView], np.ndarray] | None = None,
    allow_cheating: bool = False,
) -> GameRecord:
    """Plays one game of the schedule through the match driver
    (:func:`uno_mk_env.evaluation.match.play_match`); ``players[seat]`` acts for ``seat``.

    Raises:
        AgentError: an agent returned an illegal action or raised; names the agent, the seat,
            the game and its seed.
        AgentSpecError: a cheating agent without ``allow_cheating``.
    """
    try:
        outcome = play_match(players, rules, task.game_seed, task.agent_seeds, labels,
                             max_steps, allow_cheating, encode=encode)
    except AgentError as e:
        raise AgentError(f"{e} (game {task.index}, seed {task.game_seed})") from e.__cause__
    g = outcome.game
    winner = outcome.winner
    scores = tuple(g.scores)
    hand_points = tuple(g.hand_points(s) for s in range(rules.num_players))
    return GameRecord(
        index=task.index, deal=task.deal, seed=task.game_seed, seats=task.seats, winner=winner,
        end=outcome.end, scores=scores, hand_points=hand_points,
        places=tuple(places(winner, scores, hand_points)), rounds=g.round,
        decisions=g.num_steps,
    )


class _Runner:
    """Plays tasks in one process; builds each entrant's agent on first use and keeps it (one
    per entrant and process, reset before every game). A backend builds one per worker
    process (:class:`~uno_mk_env.evaluation.backends.Job`), calling it with the entrants."""

    def __init__(self, rules: dict[str, Any], max_steps: int, allow_cheating: bool,
                 entrants: Sequence[tuple[str, str]]):
        self.entrants = list(entrants)
        self.rules = Rules(**rules)
        self.max_steps = max_steps
        self.allow_cheating = allow_cheating
        self.agents: dict[int, Agent] = {}

    def _agent(self, e: int) -> Agent:
        if e not in self.agents:
            self.agents[e] = build_agent(self.entrants[e][1], seed=0)
        return self.agents[e]

    def build_all(self) -> None:
        """Builds every entrant's agent now (a Ray worker removes its model copies after)."""
        for e in range(len(self.entrants)):
            self._agent(e)

    def play(self, task: GameTask) -> GameRecord:
        for e in task.seats:
            self._agent(e)
        return play_game(
            task, [self.agents[e] for e in task.seats], self.rules, self.max_steps,
            labels=[self.entrants[e][0] for e in task.seats], allow_cheating=self.allow_cheating,
        )


def chunk_size(games: int, workers: int) -> int:
    """Games per chunk: about eight chunks per worker, at most 50 games (the journal is flushed
    once per chunk)."""
    return max(1, min(50, games // (workers * 8)))


def _chunks(items: Iterable[GameTask], size: int) -> Iterator[list[GameTask]]:
    it = iter(items)
    while chunk := list(itertools.islice(it, size)):
        yield chunk


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
    journal: str | Path | None = None,
    resume: bool = False,
    progress_label: str = "tournament",
    sprt: SprtSpec | None = None,
    backend: str = "local",
    address: str | None = None,
) -> TournamentResult:
    """Plays a seeded tournament (see the module docstring).

    Args:
        agent_specs: agent specs (``uno_mk_env.agents.make_agent`` strings); repeats are
            separate entrants (at most :data:`MAX_ENTRANTS`).
        num_players: seats per table (2-10).
        games: games to play (1 to :data:`MAX_GAMES`), rounded up to a multiple of
            ``num_players``; with ``sprt``, the most games the test may use.
        seed: non-negative root seed; the same seed gives identical results for any ``workers``
            and either backend.
        rules: rule options (``uno_mk_env.engine.rules.OPTIONS`` names) or a ``Rules``;
            ``{"match": "target_score"}`` plays full games to 500.
        duplicate: replay each deal once per seat rotation.
        workers: processes to play in (1 to :data:`MAX_WORKERS`; results do not depend on it).
        progress: report progress on stderr (:class:`~uno_mk_env.evaluation.progress.Progress`:
            a tqdm bar on a terminal, else a line with the rate and the time left every few
            seconds).
        max_steps: decisions allowed per round; a round beyond it ends the game without winner.
        replays: record the first ``replays`` games (at most :data:`MAX_REPLAYS`) decision by
            decision for the replay viewer (re-played in this process after the tournament and
            checked against their results; ``TournamentResult.replays``, saved as
            ``replays.json``).
        allow_cheating: admit agents that see hidden cards (``cheats = True``, such as
            ``oracle``); without it they are refused.
        journal: a file to append every finished game to, chunk by chunk
            (:mod:`~uno_mk_env.evaluation.journal`; a new run starts it afresh).
        resume: continue the tournament of ``journal``: its games are checked and kept, the
            others played; the result equals an uninterrupted run's.
        progress_label: what the progress lines call this tournament.
        sprt: stop as soon as a sequential test of entrant 0 against the others decides
            (:mod:`~uno_mk_env.evaluation.sprt`; one table: as many entrants as seats, and
            duplicate deals); the result keeps the games of the deals it counted and its
            outcome (``config["sprt"]``, :func:`~uno_mk_env.evaluation.sprt.outcome`).
        backend: where the games are played (:data:`BACKENDS`,
            :mod:`~uno_mk_env.evaluation.backends`): ``"local"`` processes or ``"ray"`` tasks.
        address: the Ray cluster (``backend="ray"``; default ``RAY_ADDRESS``, else a local Ray).

    Raises:
        AgentSpecError: an agent spec cannot be built, or cheats without ``allow_cheating``.
            RulesError: a bad rule option or player
            count. ValueError: bad ``games``/``seed``/``workers``/``replays`` or a size beyond
            its bound. SprtError: an ``sprt`` the tournament cannot test. AgentError: an agent
            failed. JournalError: ``resume`` without a journal of this tournament, or an
            altered one. TournamentError: a worker process died or could not start, or Ray
            cannot be reached (the other workers are ended first).
    """
    rules_obj = make_rules(rules, num_players)
    for name, value, low in (("max_steps", max_steps, 1), ("seed", seed, 0)):
        if not isinstance(value, int) or isinstance(value, bool) or value < low:
            raise ValueError(f"{name} must be an int ≥ {low}, got {value!r}")
    if resume and journal is None:
        raise ValueError("resume=True needs the journal to resume from")
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    entrants = entrant_labels(agent_specs, num_players)
    check_sizes(games, workers, replays, len(entrants))
    if sprt is not None and (len(agent_specs) != num_players or not duplicate):
        raise SprtError(f"an SPRT tests entrant 0 against the others at one table of duplicate "
                        f"deals: give as many agents as seats ({num_players}), got "
                        f"{len(agent_specs)}{'' if duplicate else ' without duplicate deals'}")
    if backend == "local":
        check_workers_can_start(workers)
    cheating = set()
    for spec in dict.fromkeys(spec for _, spec in entrants):
        # fail fast, in this process, with a one-line reason
        if admit(build_agent(spec, seed=0), spec, allow_cheating):
            cheating.add(spec)
    tasks = schedule(len(entrants), num_players, games, seed, duplicate)
    config: dict[str, Any] = {
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
        **({"sprt": sprt.to_dict()} if sprt is not None else {}),
    }
    records: list[GameRecord] = []
    keep = None
    if resume and journal is not None:
        records, keep = read_journal(journal, config, tasks.__getitem__, len(tasks))
    test = Sprt(sprt, num_players) if sprt is not None else None
    job = Job(entrants, functools.partial(_Runner, rules_obj.to_dict(), max_steps,
                                          allow_cheating))
    start = time.perf_counter()
    with contextlib.ExitStack() as stack:
        writer = (stack.enter_context(JournalWriter(journal, config, keep))
                  if journal is not None else None)
        _play(tasks, records, job, workers, writer, test,
              Progress(len(tasks), len(records), progress_label)
              if progress and len(records) < len(tasks) else None,
              lambda chunks, on_chunk: play_chunks(backend, job, chunks, workers, on_chunk,
                                                   address))
    if test is not None:  # the deals the test counted, whatever else was in flight
        records = [r for r in records if r.index < test.games]
    records.sort(key=lambda r: r.index)
    elapsed = time.perf_counter() - start
    recorded = None
    if replays:

        recorded = record_tournament_games(tasks[:replays], entrants, rules_obj, max_steps,
                                           records, allow_cheating=allow_cheating)
    return TournamentResult(
        config=config, entrants=config["entrants"], records=records,
        elapsed=elapsed, workers=workers, replays=recorded,
    )


def _play(
    tasks: Schedule, records: list[GameRecord], job: Job, workers: int,
    writer: JournalWriter | None, test: Sprt | None, bar: Progress | None,
    run: Callable[[Iterator[list[GameTask]], Callable[[list[GameRecord]], bool]], None],
) -> None:
    """Plays the games of ``tasks`` not yet in ``records`` (a resumed run's) with ``run`` (a
    backend), chunk by chunk, appending their records to ``records`` and to the journal
    (``writer``), until the sequential ``test`` (if any) decides."""
    done = {r.index for r in records}
    todo = len(tasks) - len(done)
    if test is not None and test.add(records):
        todo = 0

    def on_chunk(chunk: list[GameRecord]) -> bool:
        records.extend(chunk)
        if writer is not None:
            writer.append(chunk)
        if bar is not None:
            bar.update(len(chunk))
        return test is not None and test.add(chunk)

    size = chunk_size(todo, workers)
    try:
        if todo:
            run(_chunks((t for t in tasks if t.index not in done), size), on_chunk)
    finally:
        if bar is not None:
            bar.close()
