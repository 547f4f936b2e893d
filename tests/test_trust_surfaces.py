"""Issue 35, items 6 and 8, on other inputs than the audit's: the vector envs check a whole
call (seeds, actions, ``num_envs``) before changing any table, and the SB3 adapter refuses what
they refuse; OpenSpiel state strings are checked against the game they are loaded into; every
file the command line parses (recordings, journals, cards) is bounded in depth and size before
parsing, one line each.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from uno_mk_env.cli import main
from uno_mk_env.envs.self_play import SelfPlayVectorEnv
from uno_mk_env.envs.vector import UnoMarioKartVectorEnv

DEEP = "[" * 100_000 + "]" * 100_000
DEEP_OBJECT = '{"a":' * 50_000 + "1" + "}" * 50_000


def uno_mk(argv: list[str]) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(argv, stdout=out, stderr=err)
    return code, err.getvalue()


def one_line(code: int, err: str, *needles: str) -> None:
    assert code == 2, err
    assert err.count("\n") == 1 and "Traceback" not in err and len(err) < 600, err
    for needle in needles:
        assert needle in err, err


# ------------------------------------------------------------------- vector envs (item 6)
@pytest.mark.parametrize("bad", [np.float64(1.0), np.int8(-1), np.bool_(False), "", b"",
                                 [1, True, 3], [1, 2.0, 3], [[1], [2], [3]], [1, "2", 3],
                                 [1, 2, 3, 4], [1, 2], (1, 2**64, 3), {}, 1e3],
                         ids=repr)
def test_other_bad_seeds_are_refused_before_any_table_is_dealt(bad: Any) -> None:
    for cls in (UnoMarioKartVectorEnv, SelfPlayVectorEnv):
        venv = cls(3, 2)
        venv.reset(seed=1)
        before = [g.to_dict() for g in venv.games()]
        with pytest.raises(ValueError, match="seed"):
            venv.reset(seed=bad)
        assert [g.to_dict() for g in venv.games()] == before


def test_integer_seeds_of_every_kind_deal_alike() -> None:
    deals = []
    for seed in (5, np.int64(5), np.uint64(5), [5, 6, 7], np.array([5, 6, 7]), (5, 6, 7)):
        venv = UnoMarioKartVectorEnv(3, 2)
        venv.reset(seed=seed)
        deals.append([g.to_dict() for g in venv.games()])
    assert all(d == deals[0] for d in deals)


@pytest.mark.parametrize("bad", [np.int64(0), np.uint64(4097), np.bool_(True), np.float64(2.0),
                                 None, [2], 10**30])
def test_num_envs_is_bounded_whatever_its_type(bad: Any) -> None:
    for cls in (UnoMarioKartVectorEnv, SelfPlayVectorEnv):
        with pytest.raises(ValueError, match="num_envs must be an int from 1 to 4096"):
            cls(bad)


def test_num_envs_takes_a_numpy_integer() -> None:
    venv = UnoMarioKartVectorEnv(np.int64(3), 2)
    assert venv.num_envs == 3 and type(venv.num_envs) is int


@pytest.mark.parametrize("table", [0, 3])
def test_an_illegal_action_in_the_first_or_last_table_steps_no_table(table: int) -> None:
    venv = SelfPlayVectorEnv(4, 3)
    venv.reset(seed=8)
    masks = venv.action_masks()
    actions = np.array([np.flatnonzero(m)[0] for m in masks])
    actions[table] = np.flatnonzero(~masks[table])[0]
    before = [g.to_dict() for g in venv.games()]
    with pytest.raises(Exception, match=f"no table stepped: table {table}"):
        venv.step(actions)
    assert [g.to_dict() for g in venv.games()] == before


@pytest.mark.parametrize("bad", [np.array([0, 0, 0], object), np.array([[0, 0, 0]]),
                                 np.array([0, 0, 2**40]), np.array([0.5, 0, 0]),
                                 np.array([255, 0, 0], np.uint8), "012", [0, 0, None]],
                         ids=repr)
def test_other_malformed_actions_change_no_table(bad: Any) -> None:
    for cls in (UnoMarioKartVectorEnv, SelfPlayVectorEnv):
        venv = cls(3, 2)
        venv.reset(seed=2)
        before = [g.to_dict() for g in venv.games()]
        with pytest.raises((TypeError, ValueError), match="actions must be"):
            venv.step(bad)
        assert [g.to_dict() for g in venv.games()] == before


def _sb3() -> Any:
    pytest.importorskip("stable_baselines3")
    from uno_mk_env.training.sb3_vector import SB3VectorEnv

    return SB3VectorEnv(UnoMarioKartVectorEnv(2, 2))


@pytest.mark.parametrize("bad", [
    1.5, -1, 2**64,
    True, "1", 2.0, np.int64(-3),
], ids=repr)
def test_the_sb3_adapter_refuses_the_seeds_the_vector_env_refuses(bad: Any) -> None:
    venv = _sb3()
    with pytest.raises((TypeError, ValueError), match="seed"):
        venv.seed(bad)
        venv.reset()


@pytest.mark.parametrize("bad", [np.array([0, 1], object), np.array([[0], [1]]), "01",
                                 np.array([np.nan, 0]), np.array([1e20, 0]),
                                 np.array([-1, 0], np.int8)], ids=repr)
def test_the_sb3_adapter_refuses_other_malformed_actions(bad: Any) -> None:
    venv = _sb3()
    venv.seed(3)
    venv.reset()
    before = [g.to_dict() for g in venv.venv.games()]
    with pytest.raises((TypeError, ValueError), match="actions must be"):
        venv.step(bad)
    assert [g.to_dict() for g in venv.venv.games()] == before


@pytest.mark.parametrize("seat", [-1, 2, 1.0, np.bool_(True), "1"], ids=repr)
def test_a_learner_seat_that_is_not_a_seat_is_refused(seat: Any) -> None:
    import gymnasium as gym

    from uno_mk_env import GYM_ID

    with pytest.raises(ValueError, match="learner_seat must be None or a seat 0-1"):
        UnoMarioKartVectorEnv(2, 2, learner_seat=seat)
    with pytest.raises(ValueError, match="learner_seat must be None or a seat 0-1"):
        gym.make(GYM_ID, learner_seat=seat)


# ------------------------------------------------------------------ OpenSpiel strings (item 8)
needs_pyspiel = pytest.mark.skipif(importlib.util.find_spec("pyspiel") is None,
                                   reason="needs the openspiel extra")


def _game(players: int, **params: Any) -> Any:
    import pyspiel

    from uno_mk_env.envs import openspiel as uos

    return pyspiel.load_game(uos.GAME_NAME, {"players": players, **params})


def _played(game: Any, seed: int = 4, steps: int = 40) -> Any:
    rng = np.random.default_rng(seed)
    state = game.new_initial_state()
    for _ in range(steps):
        if state.is_terminal():
            break
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes())
            state.apply_action(int(outcomes[rng.choice(len(outcomes), p=probs)]))
        else:
            state.apply_action(int(rng.choice(state.legal_actions())))
    return state


def _refused(load: Any, match: str) -> None:
    from uno_mk_env import UnoMkError

    with pytest.raises(UnoMkError, match=match) as e:
        load()
    assert "\n" not in str(e.value) and len(str(e.value)) < 400


@needs_pyspiel
@pytest.mark.parametrize("made, loaded", [(3, 2), (2, 10), (4, 3), (10, 2)])
def test_a_state_string_of_another_table_size_is_refused(made: int, loaded: int) -> None:
    """Into a smaller game the history's seats already are out of range; into a larger one
    the record's table size is not the game's."""
    text = _played(_game(made)).serialize()
    _refused(lambda: _game(loaded).deserialize_state(text),
             rf"'game.players'={made} is not this game's {loaded}|'history' entry \d+="
             rf"'{made - 1}:\d+' is not allowed; allowed: .* -1 \(chance\) to {loaded - 1}")


@needs_pyspiel
@pytest.mark.parametrize("params", [{"max_game_length": -1}, {"max_game_length": 0},
                                    {"players": 11}, {"players": 1}])
def test_bad_game_parameters_are_one_line(params: dict[str, Any]) -> None:
    _refused(lambda: _game(**{"players": 2, **params}), "is not allowed")


@needs_pyspiel
def test_an_edited_history_is_refused_whatever_the_edit() -> None:
    game = _game(3)
    text = _played(game, steps=60).serialize()
    history, rest = text.split("\n", 1)
    items = history.removeprefix("history=").split(",")
    for edit in (items[:-1] + [items[-2]],  # a step repeated in place of the last
                 [items[1], items[0], *items[2:]],  # two steps swapped
                 [*items[:5], *items[6:]]):  # a step dropped
        forged = "history=" + ",".join(edit) + "\n" + rest
        _refused(lambda forged=forged: game.deserialize_state(forged), "history|move_number")


@needs_pyspiel
@pytest.mark.parametrize("text", [DEEP, DEEP_OBJECT, '[{"a":' * 30_000 + "1" + "}]" * 30_000,
                                  "{" * 100_000])
def test_deep_texts_are_one_line_in_every_state_reader(text: str) -> None:
    game = _game(2)
    _refused(lambda: game.new_initial_state(text), "nests arrays and objects|not JSON")
    _refused(lambda: game.deserialize_state(text), "three lines")
    _refused(lambda: game.deserialize_state(f"history=\nmove_number=0\n__dict__={text}"),
             "__dict__")


# ---------------------------------------------------- files the command line parses (item 8)
@pytest.mark.parametrize("text", [DEEP, DEEP_OBJECT,
                                  '{"format": "uno-mk-replay", "version": 1, "games": ['
                                  + '{"a":' * 20_000 + "1" + "}" * 20_000 + "]}",
                                  "\x00" * 1000, "[1, 2, 3]", '"' + "x" * 100_000])
def test_replay_from_a_hostile_recording_is_one_line(text: str, tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text(text)
    code, err = uno_mk(["replay", "--from", str(path), "--out", str(tmp_path / "p.html")])
    one_line(code, err, "r.json")
    assert not (tmp_path / "p.html").exists()


def test_replay_from_a_huge_recording_is_refused_before_reading_it(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    with open(path, "wb") as f:
        f.truncate(2**31)  # sparse: 2 GiB of nothing
    code, err = uno_mk(["replay", "--from", str(path), "--out", str(tmp_path / "p.html")])
    one_line(code, err, "r.json", "bytes")


@pytest.mark.parametrize("line", [DEEP_OBJECT, DEEP, '{"index": ' + "9" * 5000 + "}",
                                  "\udcff"], ids=["deep-object", "deep-array", "long-number",
                                                  "not-utf8"])
def test_a_hostile_journal_line_is_one_line(line: str, tmp_path: Path) -> None:
    args = ["tournament", "--agents", "greedy,random", "--games", "6", "--seed", "2",
            "--no-progress", "--out", str(tmp_path / "out")]
    assert uno_mk(args)[0] == 0
    journal = tmp_path / "out" / "journal.jsonl"
    lines = journal.read_text().splitlines()
    journal.write_bytes("\n".join([*lines[:3], line, *lines[3:]]).encode("utf-8",
                                                                         "surrogateescape"))
    code, err = uno_mk([*args, "--resume"])
    one_line(code, err, "journal.jsonl")


def test_a_hostile_card_is_one_line_when_recomputed(tmp_path: Path) -> None:
    from uno_mk_env.evaluation.protocol import recompute_card
    from uno_mk_env.files import FileFormatError

    (tmp_path / "card.json").write_text(DEEP_OBJECT)
    with pytest.raises(FileFormatError, match="nests arrays and objects") as e:
        recompute_card(tmp_path)
    assert "\n" not in str(e.value)
    (tmp_path / "card.json").write_text(json.dumps({"lines": [{"name": "x"}]}))
    (tmp_path / "games").mkdir()
    (tmp_path / "games" / "x.json").write_text(DEEP)
    with pytest.raises(FileFormatError, match="x.json"):
        recompute_card(tmp_path)


# ------------------------------------------------------- places told at truncation (item 7)
@pytest.mark.parametrize("num_players", [3, 5, 8])
def test_a_cut_episode_tells_every_seat_a_place_its_view_decides(num_players: int) -> None:
    """At a cut (unfinished) game, the place in the episode statistics is the same in every
    world a seat cannot tell apart (the hidden cards re-dealt by ``determinize``), for every
    seat; places by the hidden hand points would have differed (the test can fail)."""
    from uno_mk_env import Game, Rules
    from uno_mk_env.engine.rewards import episode_places, places

    rng = np.random.default_rng(num_players)
    leaky = checked = 0
    for seed in range(30):
        game = Game(Rules(num_players=num_players), seed=seed)
        for _ in range(int(rng.integers(3, 40))):
            if game.game_over:
                break
            game.step(int(rng.choice(game.legal_action_ids())))
        if game.game_over:
            continue
        told = episode_places(game)
        for seat in range(num_players):
            other = game.determinize(seat, rng)
            assert other.view(seat) == game.view(seat)
            assert episode_places(other) == told
            hidden = [places(None, list(g.scores), [g.hand_points(s) for s in range(num_players)])
                      for g in (game, other)]
            leaky += hidden[0][seat] != hidden[1][seat]
            checked += 1
    assert checked >= 60 and leaky > 0
