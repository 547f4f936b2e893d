"""The benchmarks' figures: what docs/images/ismcts_budget.png draws from its CSV."""

from __future__ import annotations

import csv
import shutil
import warnings
from pathlib import Path

import pytest

from benchmarks import ismcts_budget

CSV = Path(__file__).resolve().parents[1] / "docs" / "images" / "ismcts_budget.csv"


def rows() -> list[dict[str, str]]:
    with CSV.open(newline="") as f:
        return list(csv.DictReader(f))


def test_ismcts_budget_figure_names_current_models_only() -> None:
    """Series measured with a model no longer shipped stay in the CSV but are not drawn; the
    2-player prior=ppo curve is named after the shipped ppo_2p (issue #25, item 11)."""
    data = rows()
    assert {r["series"] for r in data} >= {"ismcts prior=ppo (0.5.0 ppo_2p, 0.3.0 ppo_4p)",
                                          "ismcts prior=ppo (0.6.0)"}  # the record stays
    two, four = ismcts_budget.curves(data, 2), ismcts_budget.curves(data, 4)
    assert list(two) == ["ismcts", "ismcts prior=ppo_2p (shipped, 0.6.0)"]
    assert [p[4] for p in two["ismcts"]] == [25, 100, 400, 1000]
    assert [p[:2] for p in two["ismcts prior=ppo_2p (shipped, 0.6.0)"]] == [(50.0, 0.584)]
    assert list(four) == ["ismcts"]
    assert "not yet measured" in ismcts_budget.NOTES[4]


def test_ismcts_budget_plot_draws_without_layout_warnings(tmp_path) -> None:
    pytest.importorskip("matplotlib")
    src = shutil.copy(CSV, tmp_path / "budget.csv")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a legend or label that does not fit warns
        out = ismcts_budget.plot(Path(src))
    assert out == tmp_path / "budget.png" and out.stat().st_size > 10_000


def test_a_record_csv_gets_its_header_once(tmp_path) -> None:
    """``append_csv_row``, the one writer of the benchmark's and the best response's records."""
    from uno_mk_env.files import append_csv_row

    path = tmp_path / "record.csv"
    append_csv_row(path, ["a", "b"], {"a": 1, "b": "x,y"})
    append_csv_row(path, ["a", "b"], {"a": 2, "b": ""})
    with path.open(newline="") as f:
        assert list(csv.reader(f)) == [["a", "b"], ["1", "x,y"], ["2", ""]]


def test_paired_reads_two_results_and_refuses_a_file_without_games(tmp_path, capsys) -> None:
    """``benchmarks.paired``: two result files' games compared on the same deals, one line per
    metric; a file that is not a result is one line naming it."""
    import json

    from benchmarks import paired

    def game(deal: int, seats: list[int], winner: int) -> dict:
        return {"index": deal, "deal": deal, "seed": deal, "seats": seats, "winner": winner,
                "end": "win", "scores": [0, 0], "hand_points": [0, 0],
                "places": [1, 2] if winner == 0 else [2, 1], "rounds": 1, "decisions": 9}

    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps({"games": [game(0, [0, 1], 0), game(0, [1, 0], 0)]}))
    b.write_text(json.dumps({"games": [game(0, [0, 1], 1), game(0, [1, 0], 0)]}))
    assert paired.main([str(a), str(b)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("win_rate: A - B +0.5000") and "2 paired games, 1 deals" in out[0]
    assert out[1].startswith("mean_place: A - B -0.5000")
    with pytest.raises(SystemExit, match="README.md: not a result with its games"):
        paired.main([str(Path(__file__).parents[1] / "README.md"), str(b)])


def test_teacher_agreement_counts_departures_from_the_prior(capsys) -> None:
    """``benchmarks.teacher_agreement``: a teacher that is its own prior never leaves it and
    its runs agree; the rows are the multi-action decisions asked for."""
    from benchmarks import teacher_agreement

    rows = teacher_agreement.decisions("greedy", "greedy", "random", 40, 2, seed=3)
    assert rows.shape == (40, 4) and (rows[:, 0] == rows[:, 1]).all()
    assert (rows[:, 0] == rows[:, 2]).all() and (rows[:, 3] != rows[:, 2]).any()
    assert teacher_agreement.main(["--teacher", "greedy", "--prior", "greedy", "--student",
                                   "random", "--decisions", "30"]) == 0
    out = capsys.readouterr().out
    assert "the teacher plays the prior's action 1.000, its two runs agree 1.000" in out
    assert "where run 1 leaves the prior (0), run 2 makes the same choice -" in out
    with pytest.raises(SystemExit, match="error: unknown agent 'nope'"):
        teacher_agreement.main(["--student", "nope:1", "--decisions", "5"])
    with pytest.raises(SystemExit):
        teacher_agreement.main(["--student", "random", "--players", "11"])
    assert "argument --players: invalid choice: 11" in capsys.readouterr().err
