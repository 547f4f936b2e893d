"""The ladder (``uno-mk ladder``, ``uno_mk_env.evaluation.ladder``): entrants join one at a
time and play duplicate matches until their rating interval is narrow enough; the table is a
Bradley-Terry fit on every game; a killed ``ladder add`` resumes to the same ladder."""

from __future__ import annotations

import io
import json

import pytest

import uno_mk_env.evaluation.tournament as tournament
from uno_mk_env.cli.app import main
from uno_mk_env.evaluation import ladder

pytest.importorskip("scipy")


def _cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(argv, stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def _add(folder, spec: str, *extra: str) -> str:
    code, out, err = _cli(["ladder", "add", spec, "--dir", str(folder), "--batch", "40",
                           "--max-games", "160", *extra])
    assert code == 0, err
    return out


def test_entrants_play_the_others_until_their_interval_is_narrow(tmp_path) -> None:
    _add(tmp_path, "strategic")
    _add(tmp_path, "random")
    out = _add(tmp_path, "greedy", "--bound", "0.05")  # not reachable: plays its budget
    data = json.loads((tmp_path / ladder.LADDER_FILE).read_text())
    assert [e["spec"] for e in data["entrants"]] == ["strategic", "random", "greedy"]
    greedy = [m for m in data["matches"] if m["a"] == "greedy"]
    assert {m["b"] for m in greedy} == {"strategic", "random"}  # every round, every entrant
    assert sum(m["games"] for m in greedy) == 160 and "interval" in out
    table = ladder.standings(tmp_path)
    assert [r["agent"] for r in table][-1] == "random"  # the weakest last
    assert all(r["rating_ci_low"] < r["rating"] < r["rating_ci_high"] for r in table)
    assert sum(r["rating"] for r in table) == pytest.approx(0, abs=1e-6)
    code, shown, _ = _cli(["ladder", "show", "--dir", str(tmp_path)])
    assert code == 0 and "strategic" in shown and "95% CI" in shown


def test_an_entrant_stops_once_its_interval_is_below_the_bound(tmp_path) -> None:
    _add(tmp_path, "strategic")
    _add(tmp_path, "random", "--bound", "5")
    data = json.loads((tmp_path / ladder.LADDER_FILE).read_text())
    assert [m["games"] for m in data["matches"]] == [40]  # one round was enough


def test_a_killed_add_resumes_to_the_same_ladder(tmp_path, monkeypatch) -> None:
    whole, cut = tmp_path / "whole", tmp_path / "cut"
    for folder in (whole, cut):
        _add(folder, "strategic")
    _add(whole, "greedy")
    real = tournament._Runner.play
    played: list[int] = []

    def play(self, task):
        if len(played) == 20:
            raise KeyboardInterrupt
        played.append(task.index)
        return real(self, task)

    with monkeypatch.context() as m:
        m.setattr(tournament._Runner, "play", play)
        assert _cli(["ladder", "add", "greedy", "--dir", str(cut), "--batch", "40",
                     "--max-games", "160"])[0] == 130
    assert list((cut / "matches").glob("*.journal.jsonl"))  # the match in play, journaled
    _add(cut, "greedy")
    assert ladder.standings(cut) == ladder.standings(whole)
    assert not list((cut / "matches").glob("*.journal.jsonl"))


@pytest.mark.parametrize("argv, message", [
    (["add", "strategic"], "already on the ladder"),
    (["add", "oracle"], "cheats"),
    (["add", "nonsense"], "unknown agent"),
    (["add", "greedy", "--batch", "0"], "--batch"),
    (["add", "greedy", "--address", "127.0.0.1:1"], "--backend ray"),
])
def test_bad_additions_are_one_line(argv, message, tmp_path) -> None:
    _add(tmp_path, "strategic")
    code, _, err = _cli(["ladder", *argv, "--dir", str(tmp_path)])
    assert code == 2 and message in err and err.count("\n") == 1


def test_a_cheating_reference_is_marked(tmp_path) -> None:
    _add(tmp_path, "random")
    code, out, err = _cli(["ladder", "add", "oracle:2", "--dir", str(tmp_path), "--batch", "4",
                           "--max-games", "4", "--allow-cheating"])  # the oracle is slow
    assert code == 0, err
    assert "oracle:2 (cheats: reference)" in out
    assert [r["cheats"] for r in ladder.standings(tmp_path)] == [True, False]


def test_show_without_a_ladder_is_one_line(tmp_path) -> None:
    code, _, err = _cli(["ladder", "show", "--dir", str(tmp_path / "none")])
    assert code == 2 and "no ladder" in err
