"""The ladder (``uno-mk ladder``, ``uno_mk_env.evaluation.ladder``): entrants join one at a
time and play duplicate matches until their rating interval is narrow enough; the table is a
Bradley-Terry fit on every game; a killed ``ladder add`` resumes to the same ladder."""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

import uno_mk_env.evaluation.tournament as tournament
from tools import env_docs
from uno_mk_env.cli.app import main
from uno_mk_env.evaluation import ladder
from uno_mk_env.files import LOCK_FILE

pytest.importorskip("scipy")

REPO = Path(__file__).resolve().parent.parent


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


#: The entrant resumed in the tests below: two opponents, rounds of 2 x 20 games, five rounds.
_RESUMED = ["greedy", "--batch", "20", "--max-games", "200", "--bound", "0.01"]


def _folder_bytes(folder: Path) -> dict[str, bytes]:
    """Every file of a ladder folder but its lock, by relative path."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and p.name != LOCK_FILE}


@pytest.fixture(scope="module")
def base_and_whole(tmp_path_factory) -> tuple[Path, dict[str, bytes], str]:
    """A ladder of strategic and random (``base``), and the files and table of that ladder
    after an uninterrupted ``ladder add`` of :data:`_RESUMED`."""
    root = tmp_path_factory.mktemp("ladder")
    base, whole = root / "base", root / "whole"
    _add(base, "strategic")
    _add(base, "random")
    shutil.copytree(base, whole)
    _cli(["ladder", "add", *_RESUMED, "--dir", str(whole)])
    files = _folder_bytes(whole)
    matches = json.loads(files[ladder.LADDER_FILE])["matches"]
    assert [m["games"] for m in matches if m["a"] == "greedy"] == [20] * 10  # 5 rounds x 2
    return base, files, _rows(whole)


def _rows(folder: Path) -> str:
    """The rows of ``ladder show`` (its title names the folder)."""
    shown = _cli(["ladder", "show", "--dir", str(folder)])[1]
    return "\n".join(line for line in shown.splitlines() if "│" in line)


def _assert_same_as_whole(folder: Path, whole: dict[str, bytes], table: str) -> None:
    assert _folder_bytes(folder) == whole  # byte for byte; no journal left
    assert _rows(folder) == table and "greedy" in table


def _cut_after(base: Path, cut: Path, games: int, monkeypatch) -> list[int]:
    """A copy of ``base`` at ``cut`` whose ``ladder add`` of ``_RESUMED`` was interrupted (exit
    130) after ``games`` games; returns the list the indices of the played games went to."""
    shutil.copytree(base, cut)
    real = tournament._Runner.play
    played: list[int] = []

    def play(self, task):
        if len(played) == games:
            raise KeyboardInterrupt
        played.append(task.index)
        return real(self, task)

    with monkeypatch.context() as m:
        m.setattr(tournament._Runner, "play", play)
        assert _cli(["ladder", "add", *_RESUMED, "--dir", str(cut)])[0] == 130
    return played


@pytest.mark.parametrize("games", [10, 40, 70])
def test_an_add_killed_mid_way_resumes_to_the_same_ladder(games, base_and_whole, tmp_path,
                                                          monkeypatch) -> None:
    """Killed during the first match (10 games), as the second round starts (40), in the
    second round's second match (70): run again, the same command ends with the ladder of an
    uninterrupted run, no game played or counted twice."""
    base, whole, table = base_and_whole
    cut = tmp_path / "cut"
    played = _cut_after(base, cut, games, monkeypatch)
    real = tournament._Runner.play
    data = json.loads((cut / ladder.LADDER_FILE).read_text())
    assert data["entrants"][-1]["spec"] == "greedy" and data["entrants"][-1]["stopped"] is None
    assert len([m for m in data["matches"] if m["a"] == "greedy"]) == games // 20
    code, _, err = _cli(["ladder", "add", "ppo:ppo_2p", "--dir", str(cut)])
    assert code == 2 and "'greedy' is still being added" in err  # nothing else meanwhile
    code, _, err = _cli(["ladder", "add", *_RESUMED[:-1], "0.5", "--dir", str(cut)])
    assert code == 2 and "same settings" in err
    played.clear()
    with monkeypatch.context() as m:
        m.setattr(tournament._Runner, "play", lambda self, task: played.append(task.index)
                  or real(self, task))
        assert _cli(["ladder", "add", *_RESUMED, "--dir", str(cut)])[0] == 0
    assert len(played) == 200 - games  # the journaled games are not played again
    _assert_same_as_whole(cut, whole, table)


@pytest.mark.slow  # starts Ray (~30 s): CI runs it with the Ray cluster tests (.ci/run)
def test_an_add_cut_locally_finishes_on_ray_to_the_same_ladder(base_and_whole, tmp_path,
                                                               monkeypatch) -> None:
    """Either backend: an entrant cut short on the local pool finishes on a Ray started for the
    run (once, for all its matches) to the ladder the local backend gives, byte for byte."""
    ray = pytest.importorskip("ray")
    for name, value in (("RAY_TMPDIR", tempfile.mkdtemp(prefix="ray", dir="/tmp")),
                        ("RAY_AUTH_MODE", "disabled"), ("RAY_USAGE_STATS_ENABLED", "0")):
        monkeypatch.setenv(name, value)  # a short folder: Ray's socket paths must fit
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    base, whole, table = base_and_whole
    cut = tmp_path / "cut"
    _cut_after(base, cut, 70, monkeypatch)
    starts: list[str] = []
    init = ray.init
    monkeypatch.setattr(ray, "init", lambda *a, **k: starts.append(k["address"]) or init(*a, **k))
    try:
        code, _, err = _cli(["ladder", "add", *_RESUMED, "--dir", str(cut), "--backend", "ray",
                             "--workers", "2"])
    finally:
        shutil.rmtree(os.environ["RAY_TMPDIR"], ignore_errors=True)
    assert code == 0, err
    assert starts == ["local"] and not ray.is_initialized()  # one Ray for the seven matches
    _assert_same_as_whole(cut, whole, table)


def test_a_kill_between_a_match_file_and_the_ladder_loses_nothing(base_and_whole, tmp_path,
                                                                  monkeypatch) -> None:
    """The third match's file is written but the ladder not saved yet: the match is taken from
    its journal (no game played again) and listed once."""
    base, whole, table = base_and_whole
    cut = tmp_path / "cut"
    shutil.copytree(base, cut)
    before = len(json.loads((base / ladder.LADDER_FILE).read_text())["matches"])
    real = ladder._save

    def save(folder, data):
        if len(data["matches"]) == before + 3:
            raise KeyboardInterrupt
        real(folder, data)

    with monkeypatch.context() as m:
        m.setattr(ladder, "_save", save)
        assert _cli(["ladder", "add", *_RESUMED, "--dir", str(cut)])[0] == 130
    third = cut / "matches" / f"{before + 2:04d}"
    assert third.with_suffix(".json").exists()  # written, not listed
    assert third.with_suffix(".journal.jsonl").exists()
    assert len(json.loads((cut / ladder.LADDER_FILE).read_text())["matches"]) == before + 2
    played: list[int] = []
    play = tournament._Runner.play
    with monkeypatch.context() as m:
        m.setattr(tournament._Runner, "play", lambda self, task: played.append(task.index)
                  or play(self, task))
        assert _cli(["ladder", "add", *_RESUMED, "--dir", str(cut)])[0] == 0
    assert len(played) == 200 - 60  # the third match came from its journal
    _assert_same_as_whole(cut, whole, table)


def test_an_add_killed_by_sigkill_after_its_first_round_resumes(base_and_whole,
                                                                tmp_path) -> None:
    """A real kill: ``uno-mk ladder add`` in its own process, SIGKILLed once the ladder lists
    its first round; the same command then finishes the ladder of an uninterrupted run."""
    base, whole, table = base_and_whole
    cut = tmp_path / "cut"
    shutil.copytree(base, cut)
    proc = subprocess.Popen(
        [sys.executable, "-m", "uno_mk_env.cli", "ladder", "add", *_RESUMED, "--dir",
         str(cut)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    try:
        while proc.poll() is None and time.monotonic() < deadline:
            try:
                text = (cut / ladder.LADDER_FILE).read_text()
            except OSError:
                text = ""
            if text.count('"a": "greedy"') >= 2:  # the first round is listed
                proc.send_signal(signal.SIGKILL)
                break
            time.sleep(0.01)
    finally:
        proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.read()
    data = json.loads((cut / ladder.LADDER_FILE).read_text())
    assert data["entrants"][-1]["stopped"] is None
    assert _cli(["ladder", "add", *_RESUMED, "--dir", str(cut)])[0] == 0
    _assert_same_as_whole(cut, whole, table)


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


@pytest.mark.parametrize("where", ["a_file", "a_file/below"])
def test_a_folder_that_cannot_be_one_is_one_line(where, tmp_path) -> None:
    (tmp_path / "a_file").touch()
    code, _, err = _cli(["ladder", "add", "greedy", "--dir", str(tmp_path / where)])
    assert code == 2 and "not a directory" in err and err.count("\n") == 1, err


def test_show_without_a_ladder_is_one_line(tmp_path) -> None:
    code, _, err = _cli(["ladder", "show", "--dir", str(tmp_path / "none")])
    assert code == 2 and "no ladder" in err


@pytest.mark.parametrize("tamper", [
    lambda d: d["matches"][0].update(file="../../outside.json"),
    lambda d: d["matches"][0].update(a="nobody"),
    lambda d: d["entrants"][0].update(batch=-1),
    lambda d: d.update(seed="zero"),
    lambda d: d["entrants"].append(dict(d["entrants"][0])),
])
def test_a_tampered_ladder_file_is_one_line(tamper, tmp_path) -> None:
    _add(tmp_path, "strategic")
    _add(tmp_path, "random", "--bound", "5")
    path = tmp_path / ladder.LADDER_FILE
    data = json.loads(path.read_text())
    tamper(data)
    path.write_text(json.dumps(data))
    for argv in (["show"], ["add", "greedy"]):
        code, _, err = _cli(["ladder", *argv, "--dir", str(tmp_path)])
        assert code == 2 and "ladder.json" in err and err.count("\n") == 1, err


def test_a_match_file_that_is_not_the_listed_match_is_one_line(tmp_path) -> None:
    _add(tmp_path, "strategic")
    _add(tmp_path, "random", "--bound", "5")
    match = tmp_path / "matches" / "0000.json"
    data = json.loads(match.read_text())
    data["config"]["seed"] += 1
    match.write_text(json.dumps(data))
    code, _, err = _cli(["ladder", "show", "--dir", str(tmp_path)])
    assert code == 2 and "0000.json" in err and "is not the result" in err
    match.write_text('{"config": 1}')
    code, _, err = _cli(["ladder", "show", "--dir", str(tmp_path)])
    assert code == 2 and "0000.json" in err and err.count("\n") == 1


def test_the_shipped_ladder_page_is_generated_from_its_folder() -> None:
    """docs/ladder.md holds the table and the commands of benchmarks/ladder/ as they are
    regenerated now (byte for byte), every entrant with its rating, and is in the site's nav."""
    page = (REPO / "docs" / "ladder.md").read_text(encoding="utf-8")
    assert env_docs.render(page) == page, "run python tools/env_docs.py docs/ladder.md"
    data = ladder.load(REPO / env_docs.LADDER_DIR)
    table = page.split("generated:shipped_ladder -->", 2)[1]
    for row in ladder.standings(REPO / env_docs.LADDER_DIR):
        cheats = " **cheats** |" if row["cheats"] else " |"
        assert f"| `{row['agent']}`{cheats} {row['rating']:+.2f} |" in table
    assert all(e["stopped"] is not None for e in data["entrants"])  # no entrant half-added
    assert {e["spec"] for e in data["entrants"] if e["cheats"]} == {"oracle", "oracle:deck"}
    assert "ladder.md" in (REPO / "mkdocs.yml").read_text(encoding="utf-8")
