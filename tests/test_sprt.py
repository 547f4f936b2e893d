"""Sequential tests on duplicate deals (``uno_mk_env.evaluation.sprt``): the log-likelihood
ratio against an independent implementation of fishtest's formula, the error rates measured by
simulation, the deal as the unit, and a tournament that stops on its own, at the same game for
any number of workers."""

from __future__ import annotations

import io
import json
import math
import random

import numpy as np
import pytest

from uno_mk_env.cli.app import main
from uno_mk_env.evaluation import protocol
from uno_mk_env.evaluation.results import GameRecord, wilson_interval
from uno_mk_env.evaluation.sprt import (
    Sprt,
    SprtError,
    SprtSpec,
    deal_score,
    elo_to_score,
    llr,
    outcome,
    parse_bounds,
    score_units,
    simulate,
    tilt,
)
from uno_mk_env.evaluation.tournament import run_tournament

scipy_optimize = pytest.importorskip("scipy.optimize")

FAST = {"uno": "off"}
#: A pentanomial like a match of two close agents' (LL, LD, WL+DD, WD, WW).
BASE = [0.08, 0.2, 0.44, 0.2, 0.08]


def _fishtest_llr(results: list[int], elo0: float, elo1: float) -> float:
    """fishtest's LLR_logistic written out with scipy's root finder, one outcome at a time."""
    res = [r if r else 1e-3 for r in results]
    n = sum(res)
    pdf = [(i / (len(res) - 1), r / n) for i, r in enumerate(res)]

    def mle(s: float) -> list[float]:
        shifted = [(a - s, p) for a, p in pdf]
        x = scipy_optimize.brentq(lambda x: sum(p * a / (1 + x * a) for a, p in shifted),
                                  -1 / (1 - s) + 1e-12, 1 / s - 1e-12)
        return [p / (1 + x * (a - s)) for a, p in pdf]

    p0, p1 = mle(elo_to_score(elo0)), mle(elo_to_score(elo1))
    return n * sum(p * (math.log(b) - math.log(a)) for (_, p), a, b in zip(pdf, p0, p1))


@pytest.mark.parametrize("counts", [[10, 200, 400, 250, 40], [0, 30, 100, 40, 5],
                                    [3, 0, 5, 9, 1], [50, 40, 30, 20, 10]])
def test_llr_is_fishtests_generalized_llr(counts) -> None:
    ours = llr(np.array(counts), elo_to_score(0), elo_to_score(20))
    assert ours == pytest.approx(_fishtest_llr(counts, 0, 20), rel=1e-9, abs=1e-9)


def test_llr_of_a_multinomial_of_many_outcomes_matches_too() -> None:
    rng = np.random.default_rng(3)
    counts = rng.integers(0, 30, size=score_units(4) + 1)
    ours = llr(counts, elo_to_score(-10), elo_to_score(10))
    assert ours == pytest.approx(_fishtest_llr(list(counts), -10, 10), rel=1e-8)


@pytest.mark.parametrize("elo, wrong", [(0, 1), (20, -1)])
def test_error_rates_by_simulation_are_within_alpha_and_beta(elo, wrong) -> None:
    """1,000 tests on deals drawn from a known pentanomial at each boundary strength: the share
    deciding wrongly (H1 at elo0, H0 at elo1) is not significantly above 0.05, and the test
    is not trivially conservative either (it decides wrongly at least sometimes)."""
    spec = SprtSpec(0, 20, alpha=0.05, beta=0.05, min_games=200)
    pdf = tilt(BASE, elo_to_score(elo))
    assert pdf @ np.linspace(0, 1, 5) == pytest.approx(elo_to_score(elo))
    runs = 1000
    decisions, deals = simulate(pdf, spec, runs, 4000, np.random.default_rng(elo + 7))
    errors = int((decisions == wrong).sum())
    low, high = wilson_interval(errors, runs)
    assert (decisions != 0).mean() > 0.995  # nearly every run decides within the budget
    assert low <= 0.05, f"error rate {errors / runs:.3f} [{low:.3f}, {high:.3f}] above 0.05"
    assert errors / runs > 0.01
    assert deals.min() >= 100  # never before min_games (two games a deal)


def test_tilt_keeps_the_shape_and_moves_the_mean() -> None:
    for s in (0.4, 0.5, 0.6):
        p = tilt(BASE, s)
        assert p.sum() == pytest.approx(1) and p @ np.linspace(0, 1, 5) == pytest.approx(s)
    np.testing.assert_allclose(tilt(BASE, 0.5), BASE, atol=1e-12)


def _record(index: int, seats: tuple[int, ...], places: tuple[int, ...]) -> GameRecord:
    n = len(seats)
    winner = places.index(1) if places.count(1) == 1 else None
    return GameRecord(index=index, deal=index // n, seed=0, seats=seats, winner=winner,
                      end="win" if winner is not None else "no_winner", scores=(0,) * n,
                      hand_points=(0,) * n, places=places, rounds=1, decisions=1)


def test_a_pair_of_games_is_one_of_five_outcomes() -> None:
    """Two players: LL 0, LD 1, WL 2, DD 2, WD 3, WW 4 (units of 1/4; a draw is a tie)."""
    win, loss, draw = (1, 2), (2, 1), (1, 1)
    cases = {(loss, loss): 0, (loss, draw): 1, (win, loss): 2, (draw, draw): 2, (win, draw): 3,
             (win, win): 4}
    for (first, second), units in cases.items():
        pair = [_record(0, (0, 1), first), _record(1, (1, 0), second[::-1])]
        assert deal_score(pair) == units
    assert score_units(2) == 4 and score_units(4) == 24


def test_deals_count_in_schedule_order_whatever_order_they_arrive() -> None:
    rng = random.Random(0)
    records = [_record(i, (0, 1) if i % 2 == 0 else (1, 0),
                       rng.choice([(1, 2), (2, 1)])) for i in range(400)]
    spec = SprtSpec(-50, 50, min_games=10)
    in_order = Sprt(spec, 2)
    in_order.add(records)
    shuffled = records[:]
    rng.shuffle(shuffled)
    test = Sprt(spec, 2)
    for k in range(0, 400, 7):
        test.add(shuffled[k:k + 7])
    assert test.outcome() == in_order.outcome() == outcome(spec, records, 2)
    assert test.deals >= 5


def test_an_incomplete_deal_waits_and_nothing_stops_before_min_games() -> None:
    wins = [_record(i, (0, 1) if i % 2 == 0 else (1, 0), (1, 2) if i % 2 == 0 else (2, 1))
            for i in range(100)]
    test = Sprt(SprtSpec(0, 200, min_games=60), 2)
    assert not test.add(wins[1:59])  # game 0 missing: no deal counts yet
    assert test.deals == 0
    assert not test.add(wins[:1])
    assert test.deals == 29  # 58 games: below min_games
    assert test.add(wins[59:]) and test.decision == "H1" and test.games == 60


@pytest.mark.parametrize("text", ["20", "20,0", "a,b", "0,20,40", "nan,3", "0,99999", ""])
def test_bad_bounds_are_one_line(text) -> None:
    with pytest.raises(SprtError) as e:
        parse_bounds(text)
    assert "\n" not in str(e.value) and ("--sprt" in str(e.value) or "elo" in str(e.value))


@pytest.mark.parametrize("field, value", [("alpha", 0.0), ("beta", 0.7), ("min_games", -1)])
def test_bad_error_rates_are_refused(field, value) -> None:
    with pytest.raises(SprtError, match=field):
        SprtSpec(0, 20, **{field: value})


# --------------------------------------------------------------------------- tournaments
def test_a_tournament_stops_when_the_test_decides_and_workers_do_not_matter() -> None:
    spec = SprtSpec(0, 200, min_games=20)
    one = run_tournament(["strategic", "random"], 2, 2000, seed=1, rules=FAST, sprt=spec)
    two = run_tournament(["strategic", "random"], 2, 2000, seed=1, rules=FAST, sprt=spec,
                         workers=2)
    o = one.sprt()
    assert o["decision"] == "H1" and o["llr"] >= o["upper_bound"]
    assert 20 <= o["games"] < 2000 and len(one.records) == o["games"]
    assert [r.index for r in one.records] == list(range(o["games"]))
    assert one == two and two.sprt() == o
    assert "H1 accepted" in one.notes()[-1] and "games" in one.to_dict()["sprt"]["summary"]


def test_a_resumed_sequential_tournament_reaches_the_same_decision(tmp_path) -> None:
    spec = SprtSpec(0, 200, min_games=20)
    journal = tmp_path / "journal.jsonl"
    whole = run_tournament(["strategic", "random"], 2, 2000, seed=2, rules=FAST, sprt=spec,
                           journal=journal)
    lines = journal.read_text().splitlines(keepends=True)
    journal.write_text("".join(lines[:1 + len(lines) // 2]))  # a run killed half-way
    resumed = run_tournament(["strategic", "random"], 2, 2000, seed=2, rules=FAST, sprt=spec,
                             journal=journal, resume=True)
    assert resumed == whole and resumed.sprt() == whole.sprt()


def test_a_test_needs_one_table_of_duplicate_deals() -> None:
    with pytest.raises(SprtError, match="as many agents as seats"):
        run_tournament(["strategic", "random"], 4, 40, rules=FAST, sprt=SprtSpec(0, 20))
    with pytest.raises(SprtError, match="duplicate"):
        run_tournament(["strategic", "random"], 2, 40, rules=FAST, duplicate=False,
                       sprt=SprtSpec(0, 20))


# ------------------------------------------------------------------------ the commands
def _cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(argv, stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_evaluate_sprt_marks_each_line_decided_early_on_its_games(tmp_path) -> None:
    code, out, _ = _cli(["evaluate", "strategic", "--players", "2", "4", "--opponents",
                         "random", "--games", "2000", "--sprt", "0,100", "--out",
                         str(tmp_path), "--no-progress"])
    assert code == 0
    card = json.loads((tmp_path / protocol.CARD_JSON).read_text())
    for line in card["lines"]:
        test = line["sprt"]
        assert test["decision"] == "H1" and test["games"] == line["games"] < 2000
        assert test["llr"] >= test["upper_bound"]
    assert any("SPRT" in d for d in card["protocol"]["deviations"])
    md = (tmp_path / protocol.CARD_MD).read_text()
    assert md.count("(SPRT H1, decided early") == 2
    assert protocol.recompute_card(tmp_path) == card  # the decision follows from the records


def test_tournament_sprt_prints_the_decision_and_saves_it(tmp_path) -> None:
    code, out, _ = _cli(["tournament", "--agents", "strategic,random", "--sprt", "0,100",
                         "--out", str(tmp_path), "--no-plot", "--no-progress"])
    assert code == 0 and "H1 accepted" in out and "LLR" in out
    saved = json.loads((tmp_path / "tournament.json").read_text())
    assert saved["config"]["games"] == 10_000 and saved["sprt"]["games"] < 10_000
    assert len(saved["games"]) == saved["sprt"]["games"]
    # a finished test is not an interrupted tournament: the folder takes a new run
    code, _, err = _cli(["tournament", "--agents", "strategic,random", "--sprt", "0,100",
                         "--out", str(tmp_path), "--no-plot", "--no-progress"])
    assert code == 0, err


@pytest.mark.parametrize("argv, message", [
    (["--sprt", "20,0"], "elo0 < elo1"),
    (["--sprt", "0,20", "--sprt-alpha", "0.6"], "--sprt-alpha must be"),
    (["--sprt-min-games", "10"], "--sprt-min-games set(s) the sequential test"),
    (["--sprt", "0,20", "--players", "3"], "as many agents as --players"),
    (["--sprt", "0,20", "--no-duplicate"], "duplicate-deal pairs"),
    (["--address", "127.0.0.1:1"], "--backend ray"),
])
def test_bad_sprt_and_backend_flags_are_one_line(argv, message, tmp_path) -> None:
    code, _, err = _cli(["tournament", "--agents", "strategic,random", "--out",
                         str(tmp_path / "out"), *argv])
    assert code == 2 and message in err and err.count("\n") == 1
    assert not (tmp_path / "out").exists()
