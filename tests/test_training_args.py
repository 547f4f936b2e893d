"""The training backends' arguments as tyro reads them: whole-sentence ``--help`` (issue #26,
item 4), the defaults and flags unchanged."""

from __future__ import annotations

import dataclasses
import importlib
from pathlib import Path

import pytest

pytest.importorskip("tyro")

from uno_mk_env.training import args as train_args  # noqa: E402

BACKENDS = {"fast": "uno_mk_env.training.ppo_fast", "sb3": "uno_mk_env.training.train_ppo",
            "rllib": "uno_mk_env.training.rllib.args"}


def backend(name: str):
    return importlib.import_module(BACKENDS[name])


@pytest.mark.parametrize("name", list(BACKENDS))
def test_every_field_has_one_paragraph_of_help(name) -> None:
    cls = backend(name).Args
    helps = train_args.field_help(cls)
    assert set(helps) == {f.name for f in dataclasses.fields(cls)}
    for field, text in helps.items():
        assert "\n" not in text and "  " not in text, (field, text)
    # a field re-declared to change its default keeps the base's help
    assert helps["seed"].startswith("seed of the experiment: every random stream")


@pytest.mark.parametrize("name", list(BACKENDS))
def test_help_prints_each_option_in_whole_sentences(name, capsys, monkeypatch) -> None:
    """On a terminal wide enough, every option's help is one line ending in its default; tyro
    alone broke a help at every continuation line of its docstring."""
    module = backend(name)
    monkeypatch.setenv("COLUMNS", "1000")
    with pytest.raises(SystemExit) as exit_info:
        train_args.parse(module.Args, ["--help"], "prog", module.DESCRIPTION)
    assert exit_info.value.code == 0
    out = capsys.readouterr().out  # a box on a terminal, plain lines otherwise
    lines = [line.strip("│ ") for line in out.split("-h, --help", 1)[1].splitlines()[1:]]
    texts = [line.split("  ", 1)[-1].strip() if line.startswith("-") else line
             for line in lines if not set(line) & set("╭╰─")]
    texts = [t for t in texts if t and not t.startswith("-")]
    assert len(texts) >= len(dataclasses.fields(module.Args)) - 2  # a few print help inline
    for text in texts:
        assert "(default: " in text, text
    seed = next(t for t in texts if t.startswith("seed of the experiment"))
    assert "(torch, the envs' deals and seat draws" in seed


@pytest.mark.parametrize("name", list(BACKENDS))
def test_defaults_and_flags_are_tyros(name) -> None:
    cls = backend(name).Args
    assert train_args.parse(cls, [], "prog", "d") == cls()
    parsed = train_args.parse(cls, ["--seed", "7", "--no-progress", "--exp-name=x"], "prog", "d")
    assert parsed == dataclasses.replace(cls(), seed=7, progress=False, exp_name="x")


def test_runs_started_in_the_same_second_get_their_own_folders(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch
                                                               ) -> None:
    import time
    import types

    from uno_mk_env.training.outputs import new_run_dir

    monkeypatch.setattr(time, "time", lambda: 1_800_000_000.5)
    args = types.SimpleNamespace(exp_name="x", num_players=2, seed=1,
                                 runs_dir=str(tmp_path / "runs"))
    names = [new_run_dir(args)[0] for _ in range(3)]
    assert names == ["x_2p__s1__1800000000", "x_2p__s1__1800000000-2",
                     "x_2p__s1__1800000000-3"]
    assert all((tmp_path / "runs" / n).is_dir() for n in names)
