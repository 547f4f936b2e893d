"""Issue 35, items 4, 5 and 10, on other inputs than the audit's: a file-size limit (a full
disk) during a tournament or an evaluation is one line, exit 1, and leaves only whole files; a
folder holding an interrupted journal is refused without ``--resume`` or ``--restart``;
``evaluate --force`` killed at any moment leaves a card that describes the records beside it;
tables fit ``COLUMNS``; the OpenSpiel import note shows only with ``uno-mk agents --verbose``.
"""

from __future__ import annotations

import io
import json
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from uno_mk_env.cli import main

UNO_MK = [sys.executable, "-m", "uno_mk_env.cli"]
TOURNAMENT = ["tournament", "--agents", "greedy,random", "--games", "40", "--seed", "3",
              "--no-progress"]


def file_size_limit(limit: int):
    """A ``preexec_fn``: at most ``limit`` bytes per file (``RLIMIT_FSIZE``), a write past it
    failing with ``EFBIG`` instead of killing the process (SIGXFSZ ignored)."""
    def apply() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return apply


def run(argv: list[str], cwd: Path, limit: int | None = None,
        timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*UNO_MK, *argv], capture_output=True, text=True, cwd=cwd,
                          timeout=timeout, env={**os.environ, "COLUMNS": "100"},
                          preexec_fn=None if limit is None else file_size_limit(limit))


def one_error_line(proc: subprocess.CompletedProcess[str], code: int, *needles: str) -> str:
    assert proc.returncode == code, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr[-2000:]
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def assert_whole_files(folder: Path) -> None:
    """No temporary file left; every JSON file parses; every CSV and journal ends with a
    whole line (each journal line a JSON object)."""
    for path in folder.rglob("*"):
        if path.is_dir() or path.name == ".uno-mk.lock":
            continue
        assert not path.name.endswith(".tmp"), f"a temporary file was left: {path}"
        data = path.read_bytes()
        if path.suffix == ".json":
            json.loads(data)
        elif path.suffix in (".csv", ".jsonl"):
            assert data == b"" or data.endswith(b"\n"), f"{path} ends with a cut line"
            if path.suffix == ".jsonl":
                assert all(isinstance(json.loads(line), dict) for line in data.splitlines())
        elif path.suffix == ".png":
            assert data.startswith(b"\x89PNG") and data.endswith(b"IEND\xaeB`\x82")


# ------------------------------------------------------------------------ a full disk (item 4)
@pytest.mark.parametrize("limit", [0, 700, 3000, 20_000])
def test_a_full_disk_ends_a_tournament_in_one_line_with_whole_files(limit: int,
                                                                    tmp_path: Path) -> None:
    """0 bytes: nothing can be written; 700 and 3,000: the journal fills (a few whole games
    kept); 20,000: the games finish and a result file (or the plot) finds no room."""
    proc = run([*TOURNAMENT, "--out", "out"], tmp_path, limit)
    line = one_error_line(proc, 1, "cannot write", "no space left, or a file-size limit")
    assert "'out/" in line or "'out'" in line  # names the file (or at least its folder)
    assert_whole_files(tmp_path / "out")
    journal = tmp_path / "out" / "journal.jsonl"
    if journal.exists() and journal.stat().st_size:
        assert "--resume" in line


@pytest.mark.parametrize("argv, name", [
    (["replay", "--agents", "greedy,random", "--games", "2", "--out", "p.html", "--json",
      "r.json"], "p.html"),
    ([*TOURNAMENT[:4], "4", *TOURNAMENT[5:], "--replays", "2", "--out", "t"],
     "t/replays.json"),
], ids=["replay", "tournament-replays"])
def test_a_full_disk_is_exit_1_not_a_bad_argument_for_replays(argv: list[str], name: str,
                                                             tmp_path: Path) -> None:
    """A page or a recording that finds no room is the one line of a full disk (exit 1), as
    every other write; it used to be exit 2, the code of a bad argument."""
    proc = run(argv, tmp_path, 5000)
    one_error_line(proc, 1, f"cannot write '{name}'", "no space left, or a file-size limit")
    assert_whole_files(tmp_path)


@pytest.mark.parametrize("limit", [0, 2500])
def test_a_full_disk_ends_an_evaluation_in_one_line_keeping_the_old_card(limit: int,
                                                                       tmp_path: Path) -> None:
    argv = ["evaluate", "greedy", "--players", "2", "--opponents", "random", "--games", "12",
            "--out", "card", "--no-progress"]
    assert run(argv, tmp_path).returncode == 0
    before = {p.relative_to(tmp_path): p.read_bytes() for p in (tmp_path / "card").rglob("*")
              if p.is_file()}
    proc = run([argv[0], "random", *argv[2:], "--force"], tmp_path, limit)
    one_error_line(proc, 1, "cannot write", "'card' is as it was before this run")
    after = {p.relative_to(tmp_path): p.read_bytes() for p in (tmp_path / "card").rglob("*")
             if p.is_file()}
    assert after == before  # the old card, whole, and nothing of the new run


# --------------------------------------------------------- an interrupted journal (item 10)
def test_an_interrupted_journal_is_refused_then_restarted_or_resumed(tmp_path: Path) -> None:
    """A tournament cut by a full disk keeps whole games in its journal; running the same
    command again without --resume is refused in one line naming --resume and --restart
    (nothing discarded); --restart starts over, --resume finishes to the same result."""
    out = tmp_path / "out"
    one_error_line(run([*TOURNAMENT, "--out", "out"], tmp_path, 3000), 1, "--resume")
    journal = out / "journal.jsonl"
    kept = journal.read_bytes()
    assert 1 < len(kept.splitlines()) < 41  # its header and some of the 40 games
    for argv in ([*TOURNAMENT, "--out", "out"],
                 [*TOURNAMENT[:4], "80", *TOURNAMENT[5:], "--out", "out"]):  # other arguments
        proc = run(argv, tmp_path)
        one_error_line(proc, 2, "--resume", "--restart")
        assert journal.read_bytes() == kept  # nothing thrown away
    resumed = tmp_path / "resumed"
    resumed.mkdir()
    (resumed / "journal.jsonl").write_bytes(kept)
    assert run([*TOURNAMENT, "--out", "resumed", "--resume"], tmp_path).returncode == 0
    restarted = run([*TOURNAMENT, "--out", "out", "--restart"], tmp_path)
    assert restarted.returncode == 0, restarted.stderr
    results = [json.loads((tmp_path / d / "tournament.json").read_text())
               for d in ("out", "resumed")]
    assert [r["leaderboard"] for r in results][0] == results[1]["leaderboard"]
    assert len((out / "journal.jsonl").read_bytes().splitlines()) == 41  # header, 40 games


# ------------------------------------------------------- evaluate --force killed (item 5)
def _card_matches_its_records(folder: Path) -> bool:
    """The card in ``folder`` (if any) names exactly the records in ``games/``, each of its
    agent and size. Returns whether there is a card."""
    card_path = folder / "card.json"
    records = {p.stem: json.loads(p.read_text()) for p in (folder / "games").glob("*.json")}
    if not card_path.exists():
        assert not (folder / "card.md").exists()
        return False
    card = json.loads(card_path.read_text())
    assert {line["name"] for line in card["lines"]} == set(records)
    for line in card["lines"]:
        config = records[line["name"]]["config"]
        assert config["agents"][0] == card["agent"]
        assert config["games"] == line["games"]
    return True


@pytest.mark.parametrize("delay", [2.5, pytest.param(1.0, marks=pytest.mark.slow),
                                   pytest.param(4.5, marks=pytest.mark.slow)])
def test_evaluate_force_killed_midway_never_mixes_two_cards(delay: float,
                                                           tmp_path: Path) -> None:
    old = ["evaluate", "greedy", "--players", "2", "--opponents", "random,greedy", "--games",
           "10", "--out", "card", "--no-progress"]
    assert run(old, tmp_path).returncode == 0
    assert _card_matches_its_records(tmp_path / "card")
    new = ["evaluate", "random", "--players", "2", "4", "--opponents", "random,greedy",
           "--games", "300", "--out", "card", "--force", "--no-progress"]
    proc = subprocess.Popen([*UNO_MK, *new], cwd=tmp_path, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    time.sleep(delay)
    proc.kill()
    proc.wait(timeout=30)
    _card_matches_its_records(tmp_path / "card")
    # the next run goes on from whatever was left (a staging folder included)
    done = run([*new[:new.index("--games") + 1], "12", *new[new.index("--games") + 2:]],
               tmp_path)
    assert done.returncode == 0, done.stderr
    assert _card_matches_its_records(tmp_path / "card")
    card = json.loads((tmp_path / "card" / "card.json").read_text())
    assert card["agent"] == "random" and len(card["lines"]) == 4
    assert not (tmp_path / "card" / ".new-card").exists()


# ------------------------------------------------------------------ tables fit the terminal
@pytest.mark.parametrize("columns", [80, 60])
@pytest.mark.parametrize("argv", [
    ["tournament", "--agents", "greedy,random,strategic,ppo:ppo_2p", "--games", "8",
     "--no-progress", "--out", "t"],
    ["demo", "--games", "4", "--no-progress", "--out", "d"],
    ["models"], ["agents"], ["agents", "--verbose"], ["rules"],
], ids=["tournament", "demo", "models", "agents", "agents-verbose", "rules"])
def test_tables_fit_the_terminal_width(argv: list[str], columns: int, tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", str(columns))
    monkeypatch.chdir(tmp_path)  # short output paths: a path alone on a line cannot wrap
    out, err = io.StringIO(), io.StringIO()
    code = main(argv, stdout=out, stderr=err)
    assert code == 0, err.getvalue()
    text = out.getvalue() + err.getvalue()
    assert text.strip()
    too_long = [line for line in text.splitlines() if len(line) > columns]
    assert not too_long, too_long


# ------------------------------------------------------ the OpenSpiel note only when asked
def test_the_openspiel_import_note_shows_only_with_agents_verbose(tmp_path: Path) -> None:
    """With ``pyspiel`` missing (a sitecustomize blocks it), ``uno-mk agents`` and a
    tournament say nothing of it; ``uno-mk agents --verbose`` names it."""
    (tmp_path / "sitecustomize.py").write_text(
        "import sys\n"
        "class _Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'pyspiel' or name.startswith('open_spiel'):\n"
        "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
        "sys.meta_path.insert(0, _Block())\n")
    env = {**os.environ,
           "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}

    def uno_mk(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*UNO_MK, *argv], capture_output=True, text=True, env=env,
                              cwd=tmp_path, timeout=120)

    blocked = subprocess.run([sys.executable, "-c", "import pyspiel"], env=env,
                             capture_output=True, text=True)
    assert blocked.returncode == 1 and "No module named 'pyspiel'" in blocked.stderr
    quiet = [uno_mk("agents"),
             uno_mk("tournament", "--agents", "greedy,random", "--games", "4", "--no-progress",
                    "--out", "t")]
    for proc in quiet:
        assert proc.returncode == 0, proc.stderr
        assert "could not be imported" not in proc.stdout + proc.stderr
        assert "uno-mk-env[openspiel]" not in proc.stdout + proc.stderr
    verbose = uno_mk("agents", "--verbose")
    assert verbose.returncode == 0
    note = [line for line in (verbose.stdout + verbose.stderr).splitlines()
            if "could not be imported" in line]
    assert len(note) == 1 and "uno-mk-env[openspiel]" in note[0]
    refused = uno_mk("tournament", "--agents", "openspiel-ismcts,random", "--games", "2",
                     "--out", "t2")
    one_error_line(refused, 2, "openspiel")
