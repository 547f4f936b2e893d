"""Approximate exploitability (``uno_mk_env.training.best_response``, ``uno-mk exploit``): a
best response trains against the target alone and is measured on the protocol's deals; bad
requests are refused in one line before any training."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

pytest.importorskip("sb3_contrib")

from uno_mk_env.cli.app import main as cli_main  # noqa: E402
from uno_mk_env.evaluation import protocol  # noqa: E402
from uno_mk_env.training import best_response as br  # noqa: E402


def tiny_recipe() -> tuple[str, ...]:
    """The fixed recipe with everything that costs time made tiny (same flags)."""
    recipe = list(br.RECIPE)
    for flag, value in (("--n-envs", "1"), ("--n-steps", "64"), ("--batch-size", "64"),
                        ("--bc-steps", "300"), ("--bc-epochs", "1"), ("--final-eval-games", "4"),
                        ("--net-arch", "16,16")):
        recipe[recipe.index(flag) + 1] = value
    return tuple(recipe)


def test_a_best_response_trains_against_the_target_alone_and_plays_the_protocol_line(
        tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setattr(br, "RECIPE", tiny_recipe())
    out_csv = tmp_path / "out" / "exploit.csv"
    argv = ["greedy", "--players", "3", "--total-timesteps", "128", "--games", "9",
            "--eval-every", "0", "--runs-dir", str(tmp_path / "runs"), "--csv", str(out_csv)]
    assert br.main(argv) == 0
    printed = capsys.readouterr().out
    assert "best response vs greedy at 3 players: win rate" in printed
    (row,) = list(csv.DictReader(out_csv.open()))
    assert row["target"] == "greedy" and row["players"] == "3" and row["games"] == "9"
    assert row["target_sha256"] == ""  # a rule agent loads no model file
    assert row["root_seed"] == str(protocol.SEEDS[3])
    assert float(row["ci_low"]) <= float(row["win_rate"]) <= float(row["ci_high"])
    assert float(row["fair_share"]) == pytest.approx(1 / 3, abs=1e-4)
    assert row["command"].endswith("greedy --players 3 --total-timesteps 128 --seed 1 --games 9")
    # what trained: the target in every other seat, no self-play, the recipe's teacher
    policy = Path(row["policy"])
    assert policy.is_file()
    config = json.loads((policy.parent / "config.json").read_text())["args"]
    assert config["opponents"] == "greedy" and config["eval_opponents"] == "greedy"
    assert config["self_play_prob"] == 0 and config["snapshot_every"] == 0
    assert config["bc_teacher"] == "strategic" and config["num_players"] == 3
    # the line is the protocol's: the same records as playing it directly
    line = protocol.Line(3, "greedy", 9, protocol.SEEDS[3])
    again = protocol.line_metrics(protocol.run_line(f"ppo:{policy}", line).records)
    assert round(again["win_rate"]["value"], 4) == float(row["win_rate"])
    # a second run appends one row under the same header
    assert br.main(argv) == 0
    assert len(list(csv.DictReader(out_csv.open()))) == 2


@pytest.mark.parametrize("argv, message", [
    (["greedy", "--players", "11"], "--players 11: allowed 2-10"),
    (["greedy", "--total-timesteps", "0"], "--total-timesteps 0: must be > 0"),
    (["nosuch"], "unknown agent 'nosuch'"),
    (["oracle"], "sees hidden cards"),
    (["ppo:missing.npz"], "missing.npz"),
])
def test_bad_requests_are_one_line_before_training(argv, message, tmp_path, capsys) -> None:
    runs = tmp_path / "runs"
    assert cli_main(["exploit", *argv, "--runs-dir", str(runs)]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1, err
    assert not runs.exists() or not any(runs.iterdir())


def test_an_unwritable_csv_place_is_refused_before_training(tmp_path, capsys) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert cli_main(["exploit", "greedy", "--runs-dir", str(tmp_path / "runs"),
                     "--csv", str(blocker / "x.csv")]) == 2
    err = capsys.readouterr().err
    assert "is not a directory" in err and err.count("\n") == 1
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


def test_a_csv_with_other_columns_is_refused_before_training_and_left_alone(tmp_path,
                                                                             capsys) -> None:
    old = tmp_path / "old.csv"
    old.write_text("target,players,win_rate\nstrategic,2,0.51\n")
    before = old.read_bytes()
    assert cli_main(["exploit", "greedy", "--runs-dir", str(tmp_path / "runs"),
                     "--csv", str(old)]) == 2
    err = capsys.readouterr().err
    assert "old.csv: its columns ['target', 'players', 'win_rate']" in err, err
    assert "name a new file" in err and err.count("\n") == 1
    assert old.read_bytes() == before
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


def test_the_target_file_is_named_by_its_sha256(tmp_path) -> None:
    import hashlib
    import shutil

    copy = tmp_path / "model.npz"
    shutil.copy(Path(__file__).parents[1] / "models" / "ppo_2p.npz", copy)
    digest = hashlib.sha256(copy.read_bytes()).hexdigest()
    assert protocol.file_sha256(f"ppo:{copy}") == digest
    assert protocol.file_sha256("strategic") is None


def test_the_shipped_exploitability_csv_names_every_probed_model_file() -> None:
    rows = list(csv.DictReader((Path(__file__).parents[1] / "docs" / "images"
                                / "exploitability.csv").open()))
    assert rows and list(rows[0]) == br.FIELDS
    for row in rows:
        is_model = row["target"].startswith("ppo:")
        assert (len(row["target_sha256"]) == 64) == is_model, row["target"]
