"""The ``uno-mk`` command line: a scripted human game to the end, the tournament command, the
listings, and one-line errors with exit code 2 for bad arguments."""

from __future__ import annotations

import io
import itertools
import json
import re
import subprocess
import sys
from collections.abc import Callable, Iterable

import numpy as np
import pytest

from uno_mk_env import OPTIONS
from uno_mk_env.cli.app import main, rules_from_args


class Script:
    """An ``input_fn`` replaying ``first`` answers, then ``then`` forever (up to ``limit``)."""

    def __init__(self, first: Iterable[str], then: str = "1", limit: int = 20_000):
        self.answers = list(first)
        self.then = then
        self.limit = limit
        self.prompts: list[str] = []

    def __call__(self, prompt: str) -> str:
        self.prompts.append(prompt)
        if len(self.prompts) > self.limit:
            return "quit"
        return self.answers.pop(0) if self.answers else self.then


def run(argv: list[str], input_fn: Callable[[str], str] = input) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(argv, input_fn=input_fn, stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


# ------------------------------------------------------------------------------------ play
def test_play_a_full_game_with_scripted_input_including_bad_input_and_help() -> None:
    script = Script(["", "banana", "0", "99", "?", "R9", "help", "show", "draw"])
    code, out, err = run(["play", "--opponents", "random", "--players", "3", "--seed", "5",
                          "--rule", "uno=off"], script)
    assert code == 0, err
    assert len(script.prompts) < script.limit
    assert "'banana' is not a choice" in out
    assert "Enter a number from 1 to" in out
    assert "Commands:" in out and "? or help" in out  # help printed
    assert "Your hand" in out and "Top card" in out and "Your choices" in out
    assert "Game over:" in out and "You left" not in out
    assert "P1:random" in out and "P2:random" in out


def test_play_full_game_to_a_target_score_against_rule_agents() -> None:
    pytest.importorskip("uno_mk_env.agents.rule_based")
    script = Script([])
    code, out, err = run(["play", "--opponents", "greedy,strategic", "--seed", "2",
                          "--rounds-to-500", "--rule", "target_score=150"], script)
    assert code == 0, err
    assert "to 150 points" in out
    assert "wins the round" in out and "Game over:" in out


@pytest.mark.parametrize("answers", [["q"], ["quit"]])
def test_play_quit(answers: list[str]) -> None:
    code, out, _ = run(["play", "--seed", "1"], Script(answers))
    assert code == 0 and "You left the game." in out


def test_play_end_of_input_quits_without_traceback() -> None:
    def eof(prompt: str) -> str:
        raise EOFError

    code, out, err = run(["play", "--seed", "1", "--seat", "1"], eof)
    assert code == 0 and "You left the game." in out and not err


def test_play_names_choices_by_card_and_word() -> None:
    """Card codes and words pick the matching legal action; other input re-prompts."""
    script = Script(["draw", "keep"], then="q")
    code, out, _ = run(["play", "--seed", "4", "--rule", "uno=off"], script)
    assert code == 0
    assert "drew a card" in out


# ------------------------------------------------------------------------------ tournament
def test_tournament_prints_a_leaderboard_and_writes_files(tmp_path) -> None:
    out_dir = tmp_path / "res"
    code, out, err = run(["tournament", "--agents", "random,random,random", "--players", "2",
                          "--games", "6", "--seed", "3", "--rule", "uno=off", "--max-steps",
                          "400", "--out", str(out_dir)])
    assert code == 0, err
    assert "win rate [95% CI]" in out and "rating" in out and "random#3" in out
    assert "head-to-head" in out
    for name in ("tournament.json", "leaderboard.csv", "head_to_head.csv", "games.csv",
                 "tournament.png"):
        assert (out_dir / name).is_file(), name
    data = json.loads((out_dir / "tournament.json").read_text())
    assert data["config"]["games"] == 6 and data["config"]["rules"]["uno"] == "off"


def test_tournament_console_script_with_workers_rounds_to_500(tmp_path) -> None:
    """The real entry point in a fresh interpreter, two workers, full games to 500."""
    pytest.importorskip("uno_mk_env.agents.rule_based")
    proc = subprocess.run(
        [sys.executable, "-m", "uno_mk_env.cli", "tournament", "--agents", "greedy,strategic",
         "--players", "2", "--games", "4", "--seed", "1", "--workers", "2", "--rounds-to-500",
         "--no-plot", "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "match=target_score" in proc.stdout
    data = json.loads((tmp_path / "tournament.json").read_text())
    assert data["run"]["workers"] == 2
    assert all(g["end"] == "win" and max(g["scores"]) >= 500 for g in data["games"])
    assert not (tmp_path / "tournament.png").exists()


@pytest.mark.parametrize("where", ["a_file", "under_a_file", "unwritable", "replays_a_folder"])
def test_tournament_checks_out_before_playing(where: str, tmp_path, monkeypatch) -> None:
    """A bad --out used to be found after the whole tournament (results lost, a traceback)."""
    import uno_mk_env.cli.tournament as cli
    import uno_mk_env.evaluation.tournament as tournament

    def no_play(*args, **kwargs):
        raise AssertionError("the tournament was played")

    monkeypatch.setattr(cli, "run_tournament", no_play)
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    out = {"a_file": a_file, "under_a_file": a_file / "results",
           "unwritable": tmp_path / "ro", "replays_a_folder": tmp_path / "rp"}[where]
    if where == "unwritable":
        def refused(*args, **kwargs):
            raise PermissionError(13, "Permission denied")

        monkeypatch.setattr(tournament.tempfile, "mkstemp", refused)
    if where == "replays_a_folder":  # only --replays writes replays.json
        (out / tournament.REPLAYS_FILE).mkdir(parents=True)
    code, _, err = run(["tournament", "--agents", "greedy,random", "--games", "2",
                        "--out", str(out), "--replays", "1"])
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert str(out) in err
    assert ("uno-mk tournament: error: cannot write" in err and "replays.json" in err
            if where == "replays_a_folder" else "uno-mk tournament: error: output directory" in err)


def test_demo_checks_out_before_playing(tmp_path, monkeypatch, capsys) -> None:
    import uno_mk_env.evaluation.tournament as tournament

    def no_play(*args, **kwargs):
        raise AssertionError("the tournament was played")

    monkeypatch.setattr(tournament, "run_tournament", no_play)
    (tmp_path / "a_file").write_text("x")
    assert main(["demo", "--games", "4", "--out", str(tmp_path / "a_file")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "exists and is not a directory" in err


# ------------------------------------------------------------------------------ listings
def test_agents_lists_registered_agents() -> None:
    code, out, _ = run(["agents"])
    assert code == 0 and "random" in out and "uniform over the legal actions" in out


def test_rules_lists_every_option_with_its_default() -> None:
    code, out, _ = run(["rules"])
    assert code == 0
    for name in OPTIONS:
        assert name in out
    assert "single_round" in out and "presets" in out and "czech" in out


def test_rule_values_are_parsed() -> None:
    opts = rules_from_args("strict", ["hand_size=5", "w4_strict=false", "match=target_score"],
                           False)
    assert opts == {"w4_strict": False, "uno": "off", "hand_size": 5, "match": "target_score"}
    assert rules_from_args(None, [], True) == {"match": "target_score"}


# -------------------------------------------------------------------------------- errors
@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["tournament", "--agents", "random,nope"], "unknown agent 'nope'"),
        (["tournament", "--agents", "random", "--players", "11"], "bad player count 11"),
        (["tournament", "--agents", "random", "--players", "1"], "bad player count 1"),
        (["tournament", "--agents", "ppo:/no/such/model.zip"], "model file not found"),
        (["tournament", "--agents", "random", "--rule", "colours=5"],
         "unknown rule option 'colours'"),
        (["tournament", "--agents", "random", "--rule", "uno=maybe"], "uno='maybe'"),
        (["tournament", "--agents", "random", "--rule", "uno"], "key=value"),
        (["tournament", "--agents", "random", "--preset", "nope"], "unknown preset 'nope'"),
        (["tournament", "--agents", "random", "--games", "0"], "--games"),
        (["tournament", "--agents", "random", "--players", "x"], "invalid int value"),
        (["tournament"], "--agents"),
        (["play", "--opponents", "nope"], "unknown agent 'nope'"),
        (["play", "--opponents", "random,random", "--players", "2"], "do not fit"),
        (["play", "--seat", "7"], "bad --seat 7"),
        (["play", "--players", "12"], "bad player count 12"),
        (["frobnicate"], "invalid choice"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(argv: list[str], message: str, capsys) -> None:
    code, out, err = run(argv)
    err += capsys.readouterr().err  # argparse's own errors go to sys.stderr
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert message in lines[0] and "error" in lines[0]
    assert "Traceback" not in err


def test_bad_argument_in_a_subprocess_has_no_traceback() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "uno_mk_env.cli", "tournament", "--agents", "nobody"],
        capture_output=True, text=True, timeout=60,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [proc.stderr.strip()]
    assert "unknown agent 'nobody'" in proc.stderr and "Traceback" not in proc.stderr


# ------------------------------------------------------------------- one module per command
def test_every_subcommand_is_a_module_with_add_parser_and_run() -> None:
    from uno_mk_env.cli.app import COMMANDS, build_parser

    _, handlers = build_parser()
    assert {"play", "tournament", "train", "export", "agents", "rules", "demo"} <= set(handlers)
    for module in COMMANDS:
        assert callable(module.add_parser) and callable(module.run), module.__name__
    assert {m.__name__.rsplit(".", 1)[1] for m in COMMANDS} == set(handlers)


def test_unknown_option_of_a_command_without_extra_args_is_one_line(capsys) -> None:
    code, _, err = run(["rules", "--bogus"])
    err += capsys.readouterr().err
    assert code == 2 and "unrecognized arguments: --bogus" in err and err.count("\n") == 1


def test_train_ends_with_an_agent_spec_that_plays_in_a_tournament(tmp_path, monkeypatch) -> None:
    pytest.importorskip("sb3_contrib")
    monkeypatch.chdir(tmp_path)
    code, out, err = run(["train", "--backend", "sb3", "--total-timesteps", "64", "--n-envs", "1",
                          "--n-steps", "64",
                          "--batch-size", "32", "--n-epochs", "1", "--net-arch", "8",
                          "--eval-every", "0", "--eval-games", "4", "--final-eval-games", "4",
                          "--checkpoint-every", "0", "--snapshot-every", "0",
                          "--runs-dir", "runs"])
    assert code == 0, err
    last = out.strip().splitlines()[-1]
    assert last.startswith("agent: ppo:runs/") and last.endswith("/final.npz"), last
    spec = last.removeprefix("agent: ")
    run_dir = tmp_path / spec.removeprefix("ppo:").rsplit("/", 1)[0]
    config = json.loads((run_dir / "config.json").read_text())
    assert config["args"]["progress"] is False  # stderr is not a terminal: no progress bar
    code, out, err = run(["tournament", "--agents", f"{spec},strategic", "--players", "2",
                          "--games", "4", "--no-plot", "--out", str(tmp_path / "res")])
    assert code == 0, err
    assert "final.npz" in out


@pytest.mark.parametrize("command", ["train", "export"])
def test_train_and_export_usage_names_the_uno_mk_command(command: str, capsys) -> None:
    """``uno-mk train --help``/``uno-mk export --help`` (and their errors) name ``uno-mk ...``,
    not the ``python -m uno_mk_env.training...`` module behind them, which keeps its own."""
    from uno_mk_env.training import export_model, ppo_fast

    code, out, _ = run([command, "--help"])
    shown = out + capsys.readouterr().out
    assert code == 0
    assert re.search(rf"^usage: uno-mk {command} \[-h\]", shown, re.M), shown[:400]
    assert "python -m" not in shown.split("\n\n")[0]  # the usage block
    code, _, err = run([command, "--bogus-option"])
    err += capsys.readouterr().err
    assert code == 2 and f"uno-mk {command}: error: " in err, err
    module = {"train": ppo_fast.main, "export": export_model.main}[command]
    with pytest.raises(SystemExit):
        module(["--help"])
    assert f"usage: python -m uno_mk_env.training.{module.__module__.rsplit('.', 1)[1]} [-h]" in (
        capsys.readouterr().out)


def test_train_defaults_to_the_fast_backend_and_its_agent_plays(tmp_path, monkeypatch) -> None:
    """``uno-mk train`` without --backend is the fast backend (behaviour cloning of strategic
    first, by default): the last line names the run's policy .npz, which make_agent plays."""
    pytest.importorskip("torch")
    from uno_mk_env.agents.base import make_agent

    monkeypatch.chdir(tmp_path)
    code, out, err = run(["train", "--total-timesteps", "128", "--n-envs", "2", "--n-steps", "64",
                          "--batch-size", "64", "--n-epochs", "1", "--net-arch", "8",
                          "--env-workers", "0", "--bc-steps", "100", "--bc-epochs", "1",
                          "--eval-every", "0", "--eval-games", "2", "--final-eval-games", "2",
                          "--runs-dir", "runs"])
    assert code == 0, err
    last = out.strip().splitlines()[-1]
    assert re.fullmatch(r"agent: ppo:runs/ppo_fast_2p__s1__\d+/final\.npz", last), last
    spec = last.removeprefix("agent: ")
    config = json.loads((tmp_path / spec.removeprefix("ppo:")).with_name("config.json")
                        .read_text())
    assert config["backend"] == "fast" and config["args"]["bc_teacher"] == "strategic"
    assert config["args"]["progress"] is True  # progress lines also when stderr is a log
    assert config["invocation"].startswith("uno-mk train --total-timesteps 128 ")
    agent = make_agent(spec, seed=0)
    mask = np.zeros(73, np.int8)
    mask[[3, 54]] = 1
    assert agent.act(np.zeros(437, np.float32), mask, None) in (3, 54)  # type: ignore[arg-type]


@pytest.mark.parametrize("argv,needle", [
    (["--rule-presets", "strict"], "--rule-presets: only the sb3 backend takes this option"),
    (["--vf-arch=64", "--verbose", "1"], "--verbose, --vf-arch: only the sb3 backend"),
    (["--vec-env", "vector"], "--vec-env: only the sb3 backend"),
    (["--critic-state"], "--critic-state: only the sb3 backend"),
    (["--resume", "runs/x/checkpoints/a.zip"], "--resume: not supported by the fast backend"),
])
def test_train_fast_refuses_what_only_sb3_does_in_one_line(argv, needle, tmp_path,
                                                           monkeypatch, capsys) -> None:
    pytest.importorskip("torch")
    monkeypatch.chdir(tmp_path)
    code, out, err = run(["train", *argv])
    err += capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith("uno-mk train: error: ") and needle in err and "sb3" in err, err
    assert not (tmp_path / "runs").exists()


def test_train_fast_without_the_train_extra_names_it_in_one_line(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "threadpoolctl", None)
    code, _, err = run(["train", "--total-timesteps", "10"])
    assert code == 2 and err.count("\n") == 1, err
    assert "pip install 'uno-mk-env[train]'" in err and "threadpoolctl" in err


def test_train_rllib_backend_missing_is_one_line(monkeypatch, capsys) -> None:
    import uno_mk_env.cli.train as train

    monkeypatch.setattr(train, "RLLIB_MODULE", "uno_mk_env.training.no_such_backend")
    code, out, err = run(["train", "--backend", "rllib", "--num-players", "2"])
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert "--backend rllib is not available" in err and "'rllib' extra" in err


# ------------------------------------------------------------------------ the base install
def test_listings_are_plain_text_without_rich(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "rich", None)  # as on a base install: not importable
    for argv in (["rules"], ["agents"]):
        code, out, _ = run(argv)
        assert code == 0
        assert "│" not in out and "━" not in out and "─" not in out, out[:400]
    code, out, _ = run(["rules"])
    lines = out.splitlines()
    assert lines[0] == "rule options (--rule KEY=VALUE)"
    assert lines[1].split() == ["option", "default", "allowed", "meaning"]
    for name in OPTIONS:
        assert any(line.startswith(f"{name} ") for line in lines), name
    code, out, _ = run(["agents"])
    assert any(line.startswith("random ") and "uniform over the legal actions" in line
               for line in out.splitlines())


@pytest.mark.parametrize("argv", [
    ["tournament", "--agents", "greedy,random", "--games", "4"],
    ["demo", "--games", "4"],
])
def test_tournament_without_the_eval_extra_names_it_in_one_line(argv, monkeypatch,
                                                                 tmp_path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(sys.modules, "scipy", None)
    code, out, err = run(argv)
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert "pip install 'uno-mk-env[eval]'" in err and "scipy" in err
    assert not list(tmp_path.iterdir())


def test_tournament_without_matplotlib_or_tqdm_still_runs(monkeypatch, tmp_path) -> None:
    for name in ("matplotlib", "tqdm", "rich"):
        monkeypatch.setitem(sys.modules, name, None)
    code, out, err = run(["tournament", "--agents", "greedy,random", "--games", "4",
                          "--progress", "--out", str(tmp_path)])
    assert code == 0, err
    assert "note: no plot" in out and "win rate [95% CI]" in out
    assert (tmp_path / "leaderboard.csv").is_file() and not (tmp_path / "tournament.png").exists()


def test_train_export_exploit_without_the_train_extra_name_it_in_one_line(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "sb3_contrib", None)
    for argv in (["train", "--backend", "sb3", "--total-timesteps", "10"],
                 ["export", "a.zip", "b.zip"], ["exploit", "greedy"]):
        code, _, err = run(argv)
        assert code == 2 and err.count("\n") == 1, err
        assert "pip install 'uno-mk-env[train]'" in err and "sb3_contrib" in err


# ----------------------------------------------------------- progress bars and long names
def test_demo_in_a_log_has_no_progress_bar(capsys) -> None:
    """tqdm redraws with carriage returns: 30 KB on one line of a log file (make demo > log)."""

    assert main(["demo", "--games", "8", "--workers", "1"]) == 0
    captured = capsys.readouterr()
    assert "\r" not in captured.err and "\r" not in captured.out
    assert "win rate" in captured.out
    # a log gets plain progress lines instead: the games to play, then the count, time and rate
    assert captured.err.splitlines()[0] == "demo: 8 games to play"
    assert re.fullmatch(r"demo: 8 games in \d+ s \([\d.,]+ games/s\)",
                        captured.err.splitlines()[-1])
    assert "ppo:ppo_4p" in captured.out  # the shipped agent plays (tests/test_packaging.py)


def test_short_labels_keep_what_tells_long_labels_apart() -> None:
    from uno_mk_env.cli.common import short_labels

    long = "/a/very/long/directory/name/that/goes/on/and/on"
    labels = [f"ppo:{long}/run1/final.npz", f"ppo:{long}/run2/final.npz", "greedy"]
    assert short_labels(labels) == ["ppo:…/run1/final.npz", "ppo:…/run2/final.npz", "greedy"]
    assert short_labels(["random", "random#2"]) == ["random", "random#2"]
    one = [f"ppo:{long}/x/final.npz", "strategic"]
    assert short_labels(one) == ["ppo:…/final.npz", "strategic"]


def _leaderboard_agents(out: str) -> list[str]:
    """The agent cell of each row of the leaderboard (the first table) of ``uno-mk
    tournament``'s output, drawn by rich or as plain text (whichever columns fit)."""
    lines = out.split("head-to-head")[0].splitlines()
    if any(line.startswith("┃") for line in lines):  # rich: │ rank │ agent │ ...
        header = next(line for line in lines if line.startswith("┃"))
        col = [c.strip() for c in header.split("┃")].index("agent")
        return [line.split("│")[col].strip() for line in lines if line.startswith("│")]
    dashes = next(i for i, line in enumerate(lines) if line.startswith("-"))
    col = re.split(r"\s{2,}", lines[dashes - 1].strip()).index("agent")
    rows = itertools.takewhile(str.strip, lines[dashes + 1:])
    return [re.split(r"\s{2,}", row.strip())[col] for row in rows]


def _plot_clashes(fig) -> list[tuple[str, str]]:
    """Pairs of the figure's texts (titles, axis and tick labels) and axes (the colour bar's
    too) whose boxes overlap; the rotated tick labels of one axis are parallel, not a clash."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    boxes = [("suptitle", fig._suptitle.get_window_extent(renderer), None)]
    for i, ax in enumerate(fig.axes):
        boxes.append((f"axes {i}", ax.get_window_extent(renderer), None))
        texts = [ax.title, ax.xaxis.label, ax.yaxis.label, *ax.get_xticklabels(),
                 *ax.get_yticklabels()]
        boxes += [(t.get_text(), t.get_window_extent(renderer), (i, t.get_rotation()))
                  for t in texts if t.get_visible() and t.get_text()]
    return [(a, b) for i, (a, box_a, tilt_a) in enumerate(boxes)
            for b, box_b, tilt_b in boxes[i + 1:]
            if box_a.overlaps(box_b) and not (tilt_a == tilt_b and tilt_a and tilt_a[1])]


@pytest.fixture
def plotted(monkeypatch) -> list:
    """The figures of the tournament plots saved while the test runs."""
    from uno_mk_env.evaluation.tournament import TournamentResult

    figures, save = [], TournamentResult.plot

    def plot(self, path) -> None:
        figures.append(self.figure())
        save(self, path)

    monkeypatch.setattr(TournamentResult, "plot", plot)
    return figures


@pytest.mark.parametrize("drawn_by", ["rich", "plain"])
def test_two_checkpoints_with_long_paths_are_told_apart_in_table_and_plot(
        drawn_by: str, tmp_path, monkeypatch, plotted) -> None:
    """Labels of about 30 characters (under LABEL_LIMIT, so kept whole) are never cut in the
    leaderboard's rows, by rich (a console of 120 columns) or as plain text; nothing overlaps
    in the plot."""
    import shutil
    import warnings
    from pathlib import Path

    from uno_mk_env.cli.tournament import LABEL_LIMIT

    if drawn_by == "plain":
        monkeypatch.setitem(sys.modules, "rich", None)
    monkeypatch.setenv("COLUMNS", "200")  # the whole boxed table, every column shown
    model = Path(__file__).resolve().parents[1] / "models" / "ppo_2p.npz"
    deep = tmp_path / "experiments" / "a_long_folder_name_for_the_runs" / "of_this_week"
    specs = []
    for file in ("run1/final.npz", "run2/final.npz", "policy_final_seed_1.npz",
                 "policy_final_seed_2.npz"):
        (deep / file).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(model, deep / file)
        specs.append(f"ppo:{deep / file}")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # matplotlib's layout warnings fail the test
        code, out, err = run(["tournament", "--agents", ",".join(specs), "--players", "3",
                              "--games", "12", "--out", str(tmp_path / "res")])
    assert code == 0, err
    assert "ppo:…/run1/final.npz" in out and "ppo:…/run2/final.npz" in out
    shown = {"ppo:…/run1/final.npz", "ppo:…/run2/final.npz", "ppo:…/policy_final_seed_1.npz",
             "ppo:…/policy_final_seed_2.npz"}
    assert max(map(len, shown)) == 29 < LABEL_LIMIT
    assert sorted(_leaderboard_agents(out)) == sorted(shown)
    assert ("│" in out) == (drawn_by == "rich")
    assert (tmp_path / "res" / "tournament.png").is_file()
    data = json.loads((tmp_path / "res" / "tournament.json").read_text())
    assert data["config"]["entrants"] == specs  # the files keep the full labels
    [fig] = plotted
    assert {t.get_text() for t in fig.axes[0].get_yticklabels()} == shown
    assert _plot_clashes(fig) == []


@pytest.mark.parametrize("agents", ["greedy,random", "greedy,random,strategic",
                                    "greedy,random,strategic,ismcts:2"])
def test_the_plots_titles_and_labels_do_not_overlap(agents: str, tmp_path, plotted) -> None:
    """At 3 entrants the head-to-head title used to run into the colour bar."""
    code, _, err = run(["tournament", "--agents", agents, "--players", "2", "--games", "12",
                        "--out", str(tmp_path)])
    assert code == 0, err
    [fig] = plotted
    assert _plot_clashes(fig) == []


# ----------------------------------------------------------------------------- play details
def test_play_names_the_person_once() -> None:
    code, out, _ = run(["play", "--seed", "1", "--opponents", "greedy"], Script(["q"]))
    assert code == 0
    assert "P0 (you)" in out and "P0:you" not in out and "P1:greedy" in out


def test_play_says_why_uno_is_not_a_choice() -> None:
    code, out, _ = run(["play", "--seed", "1"], Script(["uno", "q"]))
    assert code == 0
    assert "'uno' is not a choice" not in out
    assert "UNO is called holding exactly two cards" in out and "(you hold 7)" in out
    code, out, _ = run(["play", "--seed", "1", "--rule", "uno=off"], Script(["uno", "q"]))
    assert "these rules have no UNO call (uno=off)" in out


def test_a_single_choice_is_taken_with_enter_not_choose_1_1() -> None:
    """At two players a Green Shell has one target: the prompt used to read 'Choose 1-1'."""
    import numpy as np

    from uno_mk_env import Game, Rules
    from uno_mk_env.cli.play import ask
    from uno_mk_env.engine.phases import Phase

    rules = Rules(num_players=2)
    for seed in range(500):
        g = Game(rules, seed=seed)
        rng = np.random.default_rng(seed)
        while not g.game_over and g.phase != Phase.CHOOSE_TARGET:
            legal = g.legal_action_ids()
            g.step(int(legal[rng.integers(len(legal))]))
        if not g.game_over:
            break
    else:
        pytest.fail("no Green Shell in 500 games")
    view = g.view(g.current_player)
    assert len(view.legal_actions) == 1
    said: list[str] = []
    script = Script(["2", ""])
    action = ask(view, ["P0", "P1:random"], script, said.append, "table", rules)
    assert action == view.legal_actions[0]
    assert all("1-1" not in p for p in script.prompts) and "Press Enter" in script.prompts[0]
    assert "Press Enter (or 1) to choose it" in "\n".join(said)


def test_tournament_refuses_a_cheating_agent_before_making_its_output_place(tmp_path) -> None:
    code, out, err = run(["tournament", "--agents", "oracle,strategic", "--games", "4",
                          "--out", str(tmp_path / "out")])
    assert code == 2 and "agent 'oracle' cheats" in err and err.count("\n") == 1, err
    assert not (tmp_path / "out").exists()
    code, out, err = run(["tournament", "--agents", "oracle:5,strategic", "--games", "2",
                          "--allow-cheating", "--no-plot", "--out", str(tmp_path / "out")])
    assert code == 0, err
    assert "oracle:5" in out and (tmp_path / "out" / "leaderboard.csv").is_file()
