"""Tournaments (``uno_mk_env.evaluation.tournament``): schedule and duplicate deals,
reproducibility across worker counts, statistics (Wilson interval, rewards, head-to-head,
Plackett–Luce ratings), the leaderboard's order, legend and notes, cheating agents, and files."""

from __future__ import annotations

import csv
import functools
import itertools
import json
import os

import numpy as np
import pytest

import uno_mk_env.evaluation.backends as backends
import uno_mk_env.evaluation.tournament as tournament
from uno_mk_env import Game, Rules, RulesError
from uno_mk_env.agents import Agent, RandomAgent, make_agent
from uno_mk_env.evaluation.tournament import (
    AgentError,
    AgentSpecError,
    GameTask,
    OutputPathError,
    TournamentResult,
    check_output_dir,
    entrant_labels,
    places,
    play_game,
    run_tournament,
    schedule,
    wilson_interval,
)

#: Random play is slow (rounds of thousands of decisions, README "Rewards and episodes"); without
#: the UNO rule
#: (a missed call makes hands grow) a random round is ~10x shorter and rarely hits the cap.
FAST_RANDOM = {"uno": "off"}


# ------------------------------------------------------------------------------ statistics
@pytest.mark.parametrize(
    ("k", "n", "low", "high"),
    [
        # 95 % Wilson score interval; k = 0 or n: z²/(n+z²) closed form, the others from
        # scipy's binomtest(k, n).proportion_ci(method="wilson").
        (0, 10, 0.0, 0.277533),
        (10, 10, 0.722467, 1.0),
        (5, 10, 0.236593, 0.763407),
        (81, 263, 0.255289, 0.366210),
        (1, 400, 0.000441, 0.014023),
    ],
)
def test_wilson_interval_known_values(k: int, n: int, low: float, high: float) -> None:
    lo, hi = wilson_interval(k, n)
    assert lo == pytest.approx(low, abs=1e-6)
    assert hi == pytest.approx(high, abs=1e-6)


def test_wilson_interval_edges_and_confidence() -> None:
    assert wilson_interval(0, 0) == (0.0, 1.0)
    lo99, hi99 = wilson_interval(5, 10, confidence=0.99)
    assert lo99 < 0.236593 and hi99 > 0.763407


def test_places_winner_first_then_hand_points_ties_share() -> None:
    assert places(2, [0, 0, 40, 0], [12, 30, 0, 12]) == [2, 4, 1, 2]
    assert places(None, [0, 0, 0], [5, 3, 5]) == [2, 1, 2]  # stalemate / capped
    # multi-round: score before hand points
    assert places(None, [100, 300, 0], [0, 50, 1]) == [2, 1, 3]


# -------------------------------------------------------------------------------- schedule
def test_entrants_repeat_and_fill_the_table() -> None:
    assert entrant_labels(["greedy", "random"], 4) == [
        ("greedy", "greedy"), ("random", "random"), ("greedy#2", "greedy"), ("random#2", "random"),
    ]
    assert [lab for lab, _ in entrant_labels(["random", "random", "greedy"], 2)] == [
        "random", "random#2", "greedy",
    ]


def test_schedule_rotates_seats_over_one_deal_per_block() -> None:
    tasks = schedule(num_entrants=4, num_players=4, games=10, seed=3, duplicate=True)
    assert len(tasks) == 12  # rounded up to whole blocks of 4
    for block in range(3):
        games = tasks[4 * block:4 * block + 4]
        assert len({t.game_seed for t in games}) == 1  # one deal, replayed
        assert {t.deal for t in games} == {block}
        for seat in range(4):  # every entrant in every seat once
            assert sorted(t.seats[seat] for t in games) == [0, 1, 2, 3]
        first = games[0].seats
        for r, t in enumerate(games):  # rotations of the block's seating order
            assert t.seats == first[r:] + first[:r]
        assert len({s for t in games for s in t.agent_seeds}) == 16
    assert len({t.game_seed for t in tasks}) == 3
    assert [t.index for t in tasks] == list(range(12))


def test_schedule_without_duplicates_deals_every_game() -> None:
    tasks = schedule(2, 2, 20, seed=1, duplicate=False)
    assert len({t.game_seed for t in tasks}) == 20
    assert [t.deal for t in tasks] == list(range(20))
    assert sum(t.seats[0] == 0 for t in tasks) == 10  # still seat-balanced


def test_schedule_round_robin_over_tables() -> None:
    tasks = schedule(num_entrants=4, num_players=3, games=24, seed=0)
    tables = [frozenset(t.seats) for t in tasks]
    combos = [frozenset(c) for c in itertools.combinations(range(4), 3)]
    assert all(tables.count(c) == 6 for c in combos)  # 24 games = 2 passes over 4 tables x 3


def test_schedule_is_a_pure_function_of_the_seed() -> None:
    assert schedule(3, 3, 30, seed=9) == schedule(3, 3, 30, seed=9)
    assert schedule(3, 3, 30, seed=9) != schedule(3, 3, 30, seed=10)


def test_duplicate_deals_replay_the_same_cards_with_permuted_seats() -> None:
    rules = Rules(num_players=3)
    tasks = schedule(3, 3, 9, seed=5)
    for block in range(3):
        games = tasks[3 * block:3 * block + 3]
        deals = [Game(rules, seed=t.game_seed) for t in games]
        assert all(d.hands == deals[0].hands and d.draw_pile == deals[0].draw_pile for d in deals)
        # the same seat's cards go to a different entrant in each game of the deal
        assert len({t.seats[0] for t in games}) == 3


def test_duplicate_deal_with_identical_deterministic_agents_gives_identical_games() -> None:
    """Two copies of the deterministic ``greedy`` play each deal twice with seats swapped: the
    games must be move-for-move the same, only the entrant labels change seat."""
    pytest.importorskip("uno_mk_env.agents.rule_based")
    result = run_tournament(["greedy", "greedy"], 2, 20, seed=11)
    for a, b in zip(result.records[::2], result.records[1::2], strict=True):
        assert a.seed == b.seed and a.seats == b.seats[::-1]
        assert (a.winner, a.scores, a.hand_points, a.decisions) == (
            b.winner, b.scores, b.hand_points, b.decisions)
    rows = {r["agent"]: r for r in result.leaderboard()}
    assert rows["greedy"]["wins"] == rows["greedy#2"]["wins"]


# ---------------------------------------------------------------------------- tournaments
def _quick(**kw) -> TournamentResult:
    args = {"agent_specs": ["random", "random"], "num_players": 2, "games": 16, "seed": 1,
            "rules": FAST_RANDOM}
    args.update(kw)
    return run_tournament(**args)


def test_same_seed_same_results_and_different_seed_differs() -> None:
    a = _quick(agent_specs=["random", "random", "random"], num_players=3, games=12)
    b = _quick(agent_specs=["random", "random", "random"], num_players=3, games=12)
    assert a == b
    da, db = a.to_dict(), b.to_dict()
    del da["run"], db["run"]
    assert da == db
    c = _quick(agent_specs=["random", "random", "random"], num_players=3, games=12, seed=2)
    assert c.records != a.records


def test_two_workers_give_exactly_the_single_process_results() -> None:
    agents = ["random", "greedy"] if "greedy" in _registered() else ["random", "random"]
    one = run_tournament(agents + ["random"], 2, 36, seed=4, rules=FAST_RANDOM, workers=1)
    two = run_tournament(agents + ["random"], 2, 36, seed=4, rules=FAST_RANDOM, workers=2)
    assert two.workers == 2
    assert one == two
    assert one.leaderboard() == two.leaderboard()
    assert one.head_to_head() == two.head_to_head()


def _registered() -> set[str]:
    from uno_mk_env.evaluation.tournament import discover_agents

    discover_agents()
    from uno_mk_env.agents import registered

    return set(registered())


def test_statistics_rewards_and_head_to_head_are_consistent() -> None:
    result = _quick(agent_specs=["random", "random", "random"], num_players=3, games=30)
    rows = result.leaderboard()
    assert [r["rank"] for r in rows] == [1, 2, 3]
    assert sum(r["games"] for r in rows) == 3 * 30
    # docs/api.md#rewards-and-episodes: reward="win" is zero-sum per game
    assert sum(r["mean_reward"] * r["games"] for r in rows) == pytest.approx(0.0, abs=1e-9)
    wins = sum(r["wins"] for r in rows)
    assert wins == result.outcomes()["win"]
    for r in rows:
        assert r["win_ci_low"] <= r["win_rate"] <= r["win_ci_high"]
        assert (r["win_ci_low"], r["win_ci_high"]) == wilson_interval(r["wins"], r["games"])
    h2h = result.head_to_head()
    for a, b in itertools.permutations(range(3), 2):
        assert h2h["games"][a][b] == 30
        assert h2h["score"][a][b] + h2h["score"][b][a] == pytest.approx(1.0)
    assert h2h["score"][0][0] is None


def test_ratings_are_the_plackett_luce_fit_of_all_games() -> None:
    from uno_mk_env.evaluation.ratings import fit_plackett_luce

    result = _quick(agent_specs=["random", "random", "random"], num_players=3, games=9)
    theta, _ = fit_plackett_luce(3, [(r.deal, r.seats, r.places) for r in result.records])
    for row in result.leaderboard():
        e = result.entrants.index(row["agent"])
        assert row["rating"] == theta[e]
        assert row["rating_ci_low"] < row["rating"] < row["rating_ci_high"]
    assert not {"mu", "sigma"} & set(result.leaderboard()[0])


def test_leaderboard_is_sorted_by_win_rate_not_by_rating() -> None:
    """The issue's 4-player table ranked the entrant with the best win rate last by rating: the
    rank is the position by win rate (then mean place), whatever the ratings say."""
    result = run_tournament(["greedy", "random", "greedy", "random"], 4, 24, seed=3)
    rows = result.leaderboard()
    keys = [(-r["win_rate"], r["mean_place"], r["agent"]) for r in rows]
    assert keys == sorted(keys) and [r["rank"] for r in rows] == [1, 2, 3, 4]
    # Hand-built games in which the ratings disagree with the win rates: entrant 0 wins 4 of 10
    # and is last in the other 6, entrant 1 wins 3 and is never last, entrant 2 wins 3.
    base = run_tournament(["greedy", "random", "strategic"], 3, 3, seed=1)
    orders = [(0, 1, 2)] * 4 + [(1, 2, 0)] * 3 + [(2, 1, 0)] * 3
    records = []
    for i, order in enumerate(orders):
        place = [order.index(e) + 1 for e in range(3)]
        records.append(tournament.GameRecord(
            index=i, deal=i, seed=i, seats=(0, 1, 2), winner=order[0], end="win",
            scores=(0, 0, 0), hand_points=tuple(10 * (p - 1) for p in place),
            places=tuple(place), rounds=1, decisions=10))
    rows = tournament.TournamentResult(base.config, base.entrants, records).leaderboard()
    assert [r["agent"] for r in rows] == ["greedy", "random", "strategic"]  # 0.4, 0.3, 0.3
    assert [r["win_rate"] for r in rows] == [0.4, 0.3, 0.3]
    assert rows[1]["mean_place"] < rows[2]["mean_place"]  # the tie broken by mean place
    by_rating = sorted(rows, key=lambda r: -r["rating"])
    assert by_rating[0]["agent"] == "random" and by_rating[-1]["agent"] == "greedy"


def test_every_leaderboard_column_has_a_one_line_legend() -> None:
    result = _quick(games=4)
    row = result.leaderboard()[0]
    legend = tournament.leaderboard_legend()
    assert len(legend) == len(tournament.LEADERBOARD_COLUMNS)
    for (key, header, text), line in zip(tournament.LEADERBOARD_COLUMNS, legend):
        assert key in row and text and "\n" not in text and line == f"{header}: {text}"
    assert "sorted by win rate" in tournament.LEADERBOARD_COLUMNS[0][2]


def test_the_documented_legend_is_the_code_legend() -> None:
    """The leaderboard legend of docs/usage.md (it was the README's) is the code's."""
    from pathlib import Path

    usage = (Path(__file__).resolve().parents[1] / "docs" / "usage.md").read_text(encoding="utf-8")
    for _, header, text in tournament.LEADERBOARD_COLUMNS:
        assert f"| {header} | {text} |" in usage, header


def test_copies_added_to_fill_the_table_are_announced() -> None:
    """Three specs at a four-seat table: the tournament adds a copy (``greedy#2``) and says so."""
    result = run_tournament(["greedy", "random", "strategic"], 4, 4, seed=1, rules=FAST_RANDOM)
    assert result.entrants == ["greedy", "random", "strategic", "greedy#2"]
    (note,) = result.notes()
    assert "3 agent spec(s) for 4 seats" in note and "greedy#2" in note
    assert _quick(games=2).notes() == []


# --------------------------------------------------------------------------- cheating agents
def test_cheating_agents_cannot_enter_by_accident() -> None:
    """``oracle`` sees hidden cards: refused by the tournament and by play_game unless allowed,
    with one line saying why."""
    for spec in ("oracle", "oracle:deck:5"):
        with pytest.raises(AgentSpecError, match=f"agent '{spec}' cheats") as info:
            run_tournament([spec, "random"], 2, 2, rules=FAST_RANDOM)
        assert "\n" not in str(info.value) and "allow_cheating" in str(info.value)
    task = GameTask(index=0, deal=0, game_seed=1, seats=(0, 1), agent_seeds=(1, 2))
    with pytest.raises(AgentSpecError, match="cheats"):
        play_game(task, [make_agent("oracle:3"), make_agent("random")], Rules(num_players=2))


def test_allowed_cheating_agents_see_the_game_and_are_marked() -> None:
    result = run_tournament(["oracle:8", "random"], 2, 4, seed=2, rules=FAST_RANDOM,
                            allow_cheating=True)
    assert result.config["cheating"] == ["oracle:8"] and result.config["allow_cheating"]
    assert any("oracle:8 cheats" in note for note in result.notes())
    assert next(r for r in result.leaderboard() if r["agent"] == "oracle:8")["wins"] >= 3


def test_a_cheating_agent_not_shown_the_game_fails_in_one_line() -> None:
    """Drivers other than the tournament never show the game: the oracle refuses to guess."""
    from uno_mk_env.agents import agent_action

    g = Game(Rules(num_players=2), seed=1)
    while len(g.legal_action_ids()) < 2:
        g.step(g.legal_action_ids()[0])
    with pytest.raises(AgentError, match="cheating agent and was not shown the game"):
        agent_action(make_agent("oracle:3"), g)


def test_stronger_agent_rates_higher() -> None:
    pytest.importorskip("uno_mk_env.agents.rule_based")
    result = run_tournament(["random", "greedy"], 2, 40, seed=0)
    best = result.leaderboard()[0]
    assert best["agent"] == "greedy"
    assert best["win_ci_low"] > 0.5 and best["mean_reward"] > 0.5


def test_more_agents_than_seats_round_robin() -> None:
    result = _quick(agent_specs=["random", "random", "random"], num_players=2, games=12)
    h2h = result.head_to_head()
    for a, b in itertools.permutations(range(3), 2):
        assert h2h["games"][a][b] == 4
    assert all(r["games"] == 8 for r in result.leaderboard())


def test_step_cap_counts_as_no_winner() -> None:
    result = _quick(max_steps=3, games=4)
    assert result.outcomes() == {"win": 0, "no_winner": 0, "capped": 4}
    for rec in result.records:
        assert rec.winner is None and rec.end == "capped"
    assert all(r["mean_reward"] == 0 and r["wins"] == 0 for r in result.leaderboard())


def test_full_games_to_500() -> None:
    pytest.importorskip("uno_mk_env.agents.rule_based")
    result = run_tournament(["greedy", "strategic"], 2, 2, seed=3,
                            rules={"match": "target_score"})
    assert result.config["rules"]["match"] == "target_score"
    for rec in result.records:
        assert rec.end == "win" and rec.rounds > 1
        assert rec.scores[rec.winner] >= 500
    rows = result.leaderboard()
    assert sum(r["points_per_round"] > 0 for r in rows) >= 1


class _Cheater(Agent):
    name = "cheater"

    def act(self, observation, action_mask, view) -> int:
        return int(np.flatnonzero(~action_mask.astype(bool))[0])  # an illegal id


def test_illegal_action_error_names_the_agent() -> None:
    task = GameTask(index=0, deal=0, game_seed=1, seats=(0, 1), agent_seeds=(1, 2))
    with pytest.raises(AgentError, match=r"agent 'my-cheater' \(seat \d\) chose an illegal"):
        play_game(task, [_Cheater(), _Cheater()], Rules(num_players=2),
                  labels=["my-cheater", "my-cheater"])


def test_agent_needing_observations_gets_vectors() -> None:
    encoder = pytest.importorskip("uno_mk_env.engine.observation")

    class Needy(RandomAgent):
        needs_observation = True
        seen = 0

        def act(self, observation, action_mask, view) -> int:
            assert isinstance(observation, np.ndarray)
            np.testing.assert_array_equal(observation, encoder.encode(view))
            Needy.seen += 1
            return super().act(observation, action_mask, view)

    task = GameTask(index=0, deal=0, game_seed=3, seats=(0, 1), agent_seeds=(1, 2))
    play_game(task, [Needy(), make_agent("random")], Rules(num_players=2, **FAST_RANDOM),
              max_steps=50)
    assert Needy.seen > 0


def test_bad_arguments_raise_clear_errors(tmp_path) -> None:
    with pytest.raises(AgentSpecError, match="unknown agent 'nope'.*random"):
        _quick(agent_specs=["random", "nope"])
    with pytest.raises(AgentSpecError, match="model file not found"):
        _quick(agent_specs=["random", f"ppo:{tmp_path / 'missing.zip'}"])
    with pytest.raises(RulesError, match="num_players"):
        _quick(num_players=11)
    with pytest.raises(RulesError, match="unknown rule option 'colours'"):
        _quick(rules={"colours": 5})
    with pytest.raises(RulesError, match="contradicts"):
        _quick(rules={"num_players": 3})
    with pytest.raises(ValueError, match="games"):
        _quick(games=0)


# ---------------------------------------------------------------------------------- files
def test_save_writes_json_csv_and_png(tmp_path) -> None:
    result = _quick(agent_specs=["random", "random", "random"], num_players=3, games=6)
    paths = result.save(tmp_path / "out")
    assert set(paths) == {"json", "leaderboard", "head_to_head", "games", "plot"}
    data = json.loads(paths["json"].read_text())
    assert data["config"]["seed"] == 1 and len(data["games"]) == 6
    assert data["leaderboard"] == result.leaderboard()
    assert TournamentResult.from_dict(data) == result  # statistics recomputed identically
    with paths["leaderboard"].open() as f:
        rows = list(csv.DictReader(f))
    assert [r["agent"] for r in rows] == [r["agent"] for r in result.leaderboard()]
    assert {"win_rate", "win_ci_low", "win_ci_high", "mean_reward", "rating", "rating_ci_low",
            "rating_ci_high"} <= set(rows[0])
    with paths["games"].open() as f:
        assert len(list(csv.DictReader(f))) == 6
    with paths["head_to_head"].open() as f:
        assert len(list(csv.DictReader(f))) == 6  # ordered pairs of 3 entrants
    assert paths["plot"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert paths["plot"].stat().st_size > 10_000


def test_check_output_dir_refuses_files_and_places_it_cannot_write(tmp_path, monkeypatch) -> None:
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    with pytest.raises(OutputPathError, match="a_file' exists and is not a directory"):
        check_output_dir(a_file)
    with pytest.raises(OutputPathError, match=r"sub/dir' cannot be created: .*a_file' is not a"):
        check_output_dir(a_file / "sub" / "dir")
    (tmp_path / "out" / "games.csv").mkdir(parents=True)
    with pytest.raises(OutputPathError, match="games.csv': it exists and is not a file"):
        check_output_dir(tmp_path / "out")
    new = check_output_dir(tmp_path / "new" / "dir")
    assert new.is_dir() and list(new.iterdir()) == []  # the probe file is gone

    def refused(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(tournament.tempfile, "mkstemp", refused)
    with pytest.raises(OutputPathError, match="cannot be created or written .Permission denied"):
        check_output_dir(tmp_path / "ro")


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0,
                    reason="root may write into a read-only directory")
def test_check_output_dir_refuses_a_read_only_directory(tmp_path) -> None:
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        with pytest.raises(OutputPathError, match="cannot be created or written"):
            check_output_dir(ro / "results")
    finally:
        ro.chmod(0o700)


def test_save_refuses_a_file_in_one_line(tmp_path) -> None:
    (tmp_path / "taken").write_text("x")
    with pytest.raises(OutputPathError, match="taken' exists and is not a directory"):
        _quick(games=2).save(tmp_path / "taken")


# ------------------------------------------------------------------------ worker processes
def test_a_worker_builds_each_agent_once_not_once_per_chunk(monkeypatch) -> None:
    """The worker initializer makes one runner per process; chunks reuse its agents (a ppo model
    used to be reloaded for every chunk)."""
    built: list[str] = []
    real = tournament.build_agent

    def counting(spec: str, seed=None):
        built.append(spec)
        return real(spec, seed)

    monkeypatch.setattr(tournament, "build_agent", counting)
    monkeypatch.setattr(backends, "_worker_signals", lambda parent: None)  # not this process
    monkeypatch.setattr(backends, "_WORKER_RUNNER", None)
    entrants = entrant_labels(["greedy", "random"], 2)
    tasks = schedule(2, 2, 8, seed=0)
    job = backends.Job(entrants, functools.partial(
        tournament._Runner, Rules(num_players=2, **FAST_RANDOM).to_dict(), 500, False))
    backends._init_worker(job, os.getpid())
    for chunk in (tasks[:2], tasks[2:5], tasks[5:]):
        assert [r.index for r in backends._play_chunk(chunk)] == [t.index for t in chunk]
    assert sorted(built) == ["greedy", "random"]


# ------------------------------------------------------------------------------- sanity
def _random_vs_random(games: int) -> TournamentResult:
    return run_tournament(["random", "random"], 2, games, seed=0, rules=FAST_RANDOM, workers=2)


def test_random_vs_random_win_rate_ci_contains_half() -> None:
    result = _random_vs_random(160)
    for row in result.leaderboard():
        assert row["win_ci_low"] < 0.5 < row["win_ci_high"], row


@pytest.mark.slow
def test_random_vs_random_400_games_ci_contains_half() -> None:
    result = _random_vs_random(400)
    assert result.outcomes()["capped"] < 20
    for row in result.leaderboard():
        assert row["win_ci_low"] < 0.5 < row["win_ci_high"], row
