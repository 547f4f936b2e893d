"""Tournaments that neither hoard memory nor lose results (issue 24, items 5 and 6): a lazy
schedule, bounded sizes, the journal and ``--resume``, atomic result files, the output lock;
and the one match driver (``uno_mk_env.evaluation.match``)."""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

import uno_mk_env.evaluation.scheduling as scheduling
import uno_mk_env.evaluation.tournament as tournament
from uno_mk_env import Rules
from uno_mk_env.agents import RandomAgent, make_agent
from uno_mk_env.cli.app import main
from uno_mk_env.engine.seeding import derive_seed
from uno_mk_env.evaluation.journal import JOURNAL_FILE, JournalError, read_journal
from uno_mk_env.evaluation.match import MatchStopped, play_match
from uno_mk_env.evaluation.tournament import (
    MAX_GAMES,
    AgentSpecError,
    GameTask,
    Schedule,
    run_tournament,
    schedule,
)
from uno_mk_env.files import (
    LOCK_FILE,
    OutputLock,
    OutputPathError,
    atomic_write,
    atomic_write_text,
)

FAST = {"uno": "off"}  # shorter random rounds (see test_tournament.py)


def run(argv: list[str], capsys) -> tuple[int, str, str]:
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# ------------------------------------------------------------------------------ schedule
def eager_schedule(num_entrants: int, num_players: int, games: int, seed: int,
                   duplicate: bool = True) -> list[GameTask]:
    """The schedule as it was built before it became lazy (every table listed up front): the
    reference the lazy one must equal."""
    n = num_players
    tables = list(itertools.combinations(range(num_entrants), n))
    tasks = []
    for block in range(-(-games // n)):
        table = tables[block % len(tables)]
        perm = np.random.default_rng(derive_seed(seed, block, 0)).permutation(n)
        order = [table[i] for i in perm]
        deal_seed = derive_seed(seed, block, 1)
        for r in range(n):
            index = block * n + r
            tasks.append(GameTask(
                index=index,
                deal=block if duplicate else index,
                game_seed=deal_seed if duplicate else derive_seed(seed, block, 1, r),
                seats=tuple(order[(s + r) % n] for s in range(n)),
                agent_seeds=tuple(derive_seed(seed, block, 2, r, s) for s in range(n)),
            ))
    return tasks


@pytest.mark.parametrize(("entrants", "players", "games", "seed", "duplicate"), [
    (2, 2, 20, 1, True), (2, 2, 20, 1, False), (4, 4, 10, 3, True),
    (4, 3, 40, 0, True),  # round robin: more than one pass over the 4 tables
    (6, 3, 130, 7, False), (5, 2, 47, 11, True), (7, 4, 300, 2, True),
])
def test_the_lazy_schedule_equals_the_eager_one(entrants, players, games, seed,
                                                duplicate) -> None:
    old = eager_schedule(entrants, players, games, seed, duplicate)
    lazy = schedule(entrants, players, games, seed, duplicate)
    assert len(lazy) == len(old)
    assert list(lazy) == old  # by iteration
    assert [lazy[i] for i in range(len(old))] == old  # by index
    assert lazy[3:len(old):players] == old[3::players] and lazy[-1] == old[-1]
    assert lazy == old


def test_tables_by_index_follow_combinations_order() -> None:
    for items, size in ((5, 2), (7, 3), (8, 8), (10, 4)):
        combos = list(itertools.combinations(range(items), size))
        assert [scheduling._combination(items, size, k) for k in range(len(combos))] == combos


def test_a_schedule_of_any_size_costs_no_memory() -> None:
    """40 entrants at 10-player tables: 847 M tables, which the old schedule listed up front (out
    of memory; 30 entrants took 3.8 GB). Now any game is computed from its index and the
    tournament starts at once."""
    tracemalloc.start()
    try:
        big = Schedule(40, 10, MAX_GAMES, seed=3)
        first = big[0]
        last = big[len(big) - 1]  # any game by its index
        head = list(itertools.islice(big, 50))  # lazily, block by block
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert head[0] == first and [t.index for t in head] == list(range(50))
    assert last.index == len(big) - 1 == MAX_GAMES - 1
    assert peak < 4 * 2**20, f"{peak / 2**20:.1f} MiB"
    start = time.perf_counter()
    result = run_tournament(["random"] * 40, 10, 10, seed=3, rules=FAST, max_steps=200)
    assert len(result.records) == 10 and len(result.entrants) == 40
    assert time.perf_counter() - start < 20


@pytest.mark.parametrize(("argv", "flag"), [
    (["tournament", "--agents", "random,random", "--games", "1000000000000"], "--games"),
    (["tournament", "--agents", "random,random", "--workers", "100000"], "--workers"),
    (["tournament", "--agents", "random,random", "--replays", "5000"], "--replays"),
    (["evaluate", "random", "--games", "1000000000000"], "--games"),
    (["replay", "--agents", "random,random", "--games", "1000000"], "--games"),
])
def test_absurd_sizes_are_one_line_refusals_before_anything_starts(argv, flag, tmp_path,
                                                                   monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    start = time.perf_counter()
    code, _, err = run(argv, capsys)
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert f"{flag} must be at least" in err and "at most" in err
    assert time.perf_counter() - start < 10
    assert not (tmp_path / "results").exists()


def test_the_api_refuses_absurd_sizes() -> None:
    with pytest.raises(ValueError, match="games must be at least 1 and at most 1,000,000"):
        run_tournament(["random", "random"], 2, 10**12)
    with pytest.raises(ValueError, match="entrants must be at least 1 and at most"):
        run_tournament(["random"] * 1001, 2, 2)


# ------------------------------------------------------------------------ atomic writes
def test_atomic_write_keeps_the_old_file_when_the_writer_fails(tmp_path) -> None:
    target = tmp_path / "tournament.json"
    target.write_text("old\n")
    with pytest.raises(RuntimeError), atomic_write(target) as f:
        f.write("half of the new")
        raise RuntimeError("killed")
    assert target.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tournament.json"]  # no temp left
    atomic_write_text(target, "new\n")
    assert target.read_text() == "new\n" and oct(target.stat().st_mode & 0o777) != "0o600"


_WRITER = textwrap.dedent("""
    import sys
    from uno_mk_env.files import atomic_write_text
    i = 0
    print("ready", flush=True)
    while True:
        i += 1
        atomic_write_text(sys.argv[1], str(i % 10) * 3_000_000)
""")


def test_a_sigkill_while_saving_never_leaves_a_truncated_file(tmp_path) -> None:
    """The helper every result file goes through: killed at random moments while rewriting a
    3 MB file, the file is always one whole version (``write_text`` in place left it cut
    short)."""
    target = tmp_path / "replays.json"
    target.write_text("x" * 3_000_000)
    rng = np.random.default_rng(0)
    for _ in range(4):
        proc = subprocess.Popen([sys.executable, "-c", _WRITER, str(target)],
                                stdout=subprocess.PIPE, text=True)
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(float(rng.uniform(0.05, 0.4)))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        text = target.read_text()
        assert len(text) == 3_000_000 and len(set(text)) == 1


# -------------------------------------------------------------------------------- locks
def test_a_second_run_into_a_locked_folder_is_refused_in_one_line(tmp_path, capsys) -> None:
    out = tmp_path / "out"
    out.mkdir()
    with OutputLock(out):
        with pytest.raises(OutputPathError, match="in use by another"), OutputLock(out):
            pass
        code, _, err = run(["tournament", "--agents", "greedy,random", "--games", "2",
                            "--out", str(out)], capsys)
        assert code == 2 and err.count("\n") == 1 and "in use by another tournament" in err
        assert not (out / "tournament.json").exists()
    with OutputLock(out):  # released on leaving
        pass


def test_the_lock_of_a_killed_run_does_not_block(tmp_path) -> None:
    holder = textwrap.dedent("""
        import sys, time
        from uno_mk_env.files import OutputLock
        with OutputLock(sys.argv[1]):
            print("locked", flush=True)
            time.sleep(60)
    """)
    proc = subprocess.Popen([sys.executable, "-c", holder, str(tmp_path)],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "locked"
        with pytest.raises(OutputPathError, match="in use"), OutputLock(tmp_path):
            pass
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert (tmp_path / LOCK_FILE).exists()  # the file stays; the kernel dropped the lock
    with OutputLock(tmp_path):
        pass


# ----------------------------------------------------------------------- journal, resume
ARGS = ["tournament", "--agents", "greedy,random,strategic", "--players", "3", "--games", "36",
        "--seed", "4", "--rule", "uno=off", "--no-plot"]
RESULT_FILES = ("tournament.json", "games.csv", "leaderboard.csv", "head_to_head.csv")


def _without_timing(path: Path) -> dict:
    data = json.loads(path.read_text())
    data["run"].pop("elapsed_s")
    data["run"].pop("workers")
    return data


def _interrupt_after(monkeypatch, games: int) -> list[int]:
    """Makes the next tournament stop (as Ctrl-C would) after ``games`` games."""
    played: list[int] = []
    real = tournament._Runner.play

    def play(self, task):
        if len(played) == games:
            raise KeyboardInterrupt
        played.append(task.index)
        return real(self, task)

    monkeypatch.setattr(tournament._Runner, "play", play)
    return played


@pytest.mark.parametrize("workers", ["1", "2"])
def test_resume_finishes_an_interrupted_tournament_to_the_same_result(
        workers, tmp_path, monkeypatch, capsys) -> None:
    whole, part = tmp_path / "whole", tmp_path / "part"
    assert run([*ARGS, "--out", str(whole)], capsys)[0] == 0
    with monkeypatch.context() as m:
        _interrupt_after(m, 13)
        code, _, err = run([*ARGS, "--out", str(part)], capsys)
    assert code == 130 and not (part / "tournament.json").exists()
    lines = (part / JOURNAL_FILE).read_text().splitlines()
    assert 1 + 5 <= len(lines) < 1 + 13  # the header, then the chunks done (5 games each)
    with (part / JOURNAL_FILE).open("a") as f:
        f.write('{"index": 20, "deal"')  # a write cut short by a kill: dropped
    played = []
    real = tournament._Runner.play
    monkeypatch.setattr(tournament._Runner, "play",
                        lambda self, t: played.append(t.index) or real(self, t))
    code, out, err = run([*ARGS, "--out", str(part), "--resume", "--workers", workers], capsys)
    assert code == 0, err
    if workers == "1":  # (worker processes play in other processes)
        assert len(played) == 36 - (len(lines) - 1)
    assert _without_timing(part / "tournament.json") == _without_timing(whole / "tournament.json")
    for name in RESULT_FILES[1:]:
        assert (part / name).read_bytes() == (whole / name).read_bytes(), name
    journaled = (part / JOURNAL_FILE).read_text().splitlines()
    assert len(journaled) == 37 and all(line.endswith("}") for line in journaled)


def test_resume_without_a_journal_or_with_other_arguments_is_refused(tmp_path, capsys) -> None:
    out = tmp_path / "out"
    code, _, err = run([*ARGS, "--out", str(out), "--resume"], capsys)
    assert code == 2 and err.count("\n") == 1 and "no journal" in err
    assert run([*ARGS, "--out", str(out)], capsys)[0] == 0
    code, _, err = run([*ARGS[:-5], "--seed", "5", "--rule", "uno=off", "--no-plot",
                        "--out", str(out), "--resume"], capsys)
    assert code == 2 and err.count("\n") == 1 and "another tournament" in err and "seed" in err


def _tamper(lines: list[str], how: str) -> list[str]:
    game = json.loads(lines[1])
    if how == "winner":
        game["winner"] = (game["winner"] or 0) + 1 if game["winner"] != 2 else 0
        game["end"] = "win"
    elif how == "seed":
        game["seed"] += 1
    elif how == "places":
        game["places"] = [1, 1, 1]
    elif how == "bool":
        game["rounds"] = True
    elif how == "extra":
        game["pickle"] = "cos\nsystem\n(S'echo hi'\ntR."
    elif how == "duplicate":
        return [*lines, lines[1]]
    elif how == "garbage":
        return [*lines[:1], "not json", *lines[1:]]
    elif how == "nested":
        return [*lines, "[" * 3000 + "]" * 3000]
    elif how == "header":
        return [json.dumps({"format": "uno-mk-tournament-journal", "version": 99}), *lines[1:]]
    elif how == "index":
        game["index"] = 10**30
    return [lines[0], json.dumps(game), *lines[2:]]


@pytest.mark.parametrize("how", ["winner", "seed", "places", "bool", "extra", "duplicate",
                                 "garbage", "nested", "header", "index"])
def test_a_tampered_journal_is_a_one_line_refusal(how, tmp_path, capsys) -> None:
    out = tmp_path / "out"
    assert run([*ARGS, "--out", str(out)], capsys)[0] == 0
    journal = out / JOURNAL_FILE
    journal.write_text("\n".join(_tamper(journal.read_text().splitlines(), how)) + "\n")
    code, _, err = run([*ARGS, "--out", str(out), "--resume"], capsys)
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert JOURNAL_FILE in err and len(err) < 400


def test_read_journal_keeps_the_valid_games(tmp_path) -> None:
    path = tmp_path / JOURNAL_FILE
    result = run_tournament(["greedy", "random"], 2, 6, seed=1, rules=FAST, journal=path)
    tasks = schedule(2, 2, 6, 1)
    records, size = read_journal(path, result.config, tasks.__getitem__, len(tasks))
    assert records == result.records and size == path.stat().st_size
    with pytest.raises(JournalError, match="another tournament"):
        read_journal(path, {**result.config, "games": 8}, tasks.__getitem__, len(tasks))


# ---------------------------------------------------------------------------- the driver
class _Spy:
    def __init__(self) -> None:
        self.calls: list[str] = []

    def start(self, game) -> None:
        self.calls.append("start")

    def before(self, game, seat) -> None:
        self.calls.append(f"before {seat} {game.num_steps}")

    def after(self, game, seat, action) -> None:
        self.calls.append(f"after {seat} {game.num_steps}")


def test_the_driver_calls_its_observer_around_every_decision() -> None:
    spy = _Spy()
    players = [make_agent("greedy"), make_agent("random")]
    outcome = play_match(players, Rules(num_players=2), 5, [1, 2], observer=spy)
    steps = outcome.game.num_steps
    assert spy.calls[0] == "start" and len(spy.calls) == 1 + 2 * steps
    assert outcome.end in ("win", "no_winner") and not outcome.capped


def test_the_driver_states_the_cheating_policy_and_the_cap() -> None:
    oracle = make_agent("oracle")
    with pytest.raises(AgentSpecError, match="cheats .*--allow-cheating"):
        play_match([oracle, RandomAgent()], Rules(num_players=2), 1)
    done = play_match([oracle, RandomAgent()], Rules(num_players=2), 1, [0, 0],
                      allow_cheating=True)
    assert done.game.game_over
    capped = play_match([RandomAgent(), RandomAgent()], Rules(num_players=2), 1, [0, 0],
                        max_steps=3)
    assert capped.capped and capped.winner is None and capped.end == "capped"
    assert capped.game.num_steps == 3


def test_an_agent_that_stops_the_match_is_not_an_agent_failure() -> None:
    class Leaves(RandomAgent):
        def act(self, observation, action_mask, view):
            raise MatchStopped("the player left")

    with pytest.raises(MatchStopped):
        play_match([Leaves(), RandomAgent()], Rules(num_players=2), 1)


# ------------------------------------------------------------------------ evaluate cards
def test_evaluate_force_leaves_no_stale_files_of_the_old_card(tmp_path, capsys) -> None:
    base = ["evaluate", "random", "--players", "2", "--games", "2", "--out",
            str(tmp_path / "card")]
    assert run([*base, "--opponents", "greedy,strategic"], capsys)[0] == 0
    assert run([*base, "--opponents", "greedy", "--force"], capsys)[0] == 0
    assert sorted(p.name for p in (tmp_path / "card" / "games").iterdir()) == [
        "2p_vs_greedy.json"]
    card = json.loads((tmp_path / "card" / "card.json").read_text())
    assert [line["opponent"] for line in card["lines"]] == ["greedy"]
    assert not [p for p in (tmp_path / "card").rglob("*.tmp")]


def test_evaluate_writes_each_agent_to_its_own_folder(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    for agent in ("random", "greedy"):
        assert run(["evaluate", agent, "--players", "2", "--games", "2", "--opponents",
                    "random"], capsys)[0] == 0
    assert sorted(p.name for p in (tmp_path / "results" / "evaluate").iterdir()) == [
        "greedy", "random"]
    assert os.path.isfile(tmp_path / "results" / "evaluate" / "greedy" / "card.json")


def test_the_split_keeps_every_public_name_importable_from_tournament() -> None:
    from uno_mk_env.engine import rewards
    from uno_mk_env.evaluation import results, tables

    assert tournament.places is rewards.places
    assert tournament.TournamentResult is results.TournamentResult
    assert tournament.FILE_NAMES is tables.FILE_NAMES
    for name in ("GameRecord", "GameTask", "OutputPathError", "TournamentError", "build_agent",
                 "check_output_dir", "cheating_refusal", "discover_agents", "entrant_labels",
                 "leaderboard_legend", "make_rules", "play_game", "run_tournament", "schedule",
                 "wilson_interval", "LEADERBOARD_COLUMNS", "DEFAULT_MAX_STEPS", "REPLAYS_FILE"):
        assert hasattr(tournament, name), name
