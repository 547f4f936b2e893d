"""The one cheating policy (:func:`uno_mk_env.evaluation.match.admit`, issue 24): every command
that builds agents asks it, so a cheating agent (``oracle``, it sees hidden cards) plays only
where the command admits it (``--allow-cheating``), and is refused with the same line, exit code
2, before anything is played or printed."""

from __future__ import annotations

import io

import pytest

import uno_mk_env.cli.common as common
import uno_mk_env.evaluation.match as match
from uno_mk_env.cli.app import main
from uno_mk_env.cli.common import CLIError, check_agents


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(argv, input_fn=lambda prompt: "quit", stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_check_agents_asks_the_one_policy(monkeypatch) -> None:
    """``check_agents`` decides nothing itself: it asks ``admit`` for each spec, once."""
    asked = []

    def spy(agent, label, allow_cheating, refusal=None):
        asked.append((label, allow_cheating))
        return match.cheats(agent)

    monkeypatch.setattr(common, "admit", spy)  # cli.common imports the one policy
    check_agents(["oracle", "random", "oracle"], allow_cheating=False)  # the spy admits all
    assert asked == [("oracle", False), ("random", False)]


def test_a_cheating_agent_is_refused_unless_admitted() -> None:
    with pytest.raises(CLIError) as e:
        check_agents(["random", "oracle:3"])  # not admitted by default, as in play_match
    assert str(e.value) == match.cheating_refusal("oracle:3")
    check_agents(["random", "oracle:3"], allow_cheating=True)


@pytest.mark.parametrize("argv", [
    ["play", "--opponents", "oracle", "--seed", "1"],
    ["replay", "--agents", "oracle,random", "--seed", "1", "--out", "never.html"],
])
def test_commands_without_allow_cheating_refuse_before_anything(argv, tmp_path,
                                                                 monkeypatch) -> None:
    """``uno-mk play`` and ``uno-mk replay`` never admit a cheating agent: one line, exit code
    2, nothing printed or written (``play`` printed its greeting before the refusal)."""
    monkeypatch.chdir(tmp_path)
    code, out, err = run(argv)
    assert code == 2 and out == "" and not (tmp_path / "never.html").exists()
    assert err.count("\n") == 1 and "agent 'oracle' cheats" in err, err
