"""The OpenSpiel game (``uno_mk_env.envs.openspiel``) and OpenSpiel's IS-MCTS as an agent
(``openspiel-ismcts:N``, ``uno_mk_env.agents.openspiel_bots``).

* The game loads with pyspiel with every rule option and preset as a parameter, declares what
  it is (sequential, imperfect information, zero-sum, 73 actions, the 437-float observation)
  and its sampled form (``chance="sampled"``) passes OpenSpiel's own random-simulation test at
  2, 3, 4 and 10 players (the explicit chance form: tests/test_openspiel_chance.py).
* States serialise exactly, resample from an information state without changing it, and end
  with the env's ``win`` rewards. A state string or position is checked against the game it is
  loaded into (players, rules, length cap, form, every action replayed), its size and nesting
  bounded before it is parsed: each malformed input is refused in one line.
* OpenSpiel's ``ISMCTSBot`` plays whole games through ``evaluate_bots``, and as an agent spec.
* Without pyspiel, both modules fail in one line naming the extra, and the engine never imports
  them.

Without pyspiel the module is skipped with the reason, except under CI (``CI`` set), where a
missing pyspiel is a failure: ``.ci/run`` installs the ``openspiel`` extra.
"""

from __future__ import annotations

import base64
import importlib.util
import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

if importlib.util.find_spec("pyspiel") is None:
    if os.environ.get("CI"):
        pytest.fail("pyspiel is not installed, and CI must run the OpenSpiel tests: the 'test' "
                    "extra brings it (make test)", pytrace=False)
    pytest.skip("pyspiel is not installed (pip install -e '.[openspiel]'); make test installs it "
                "and runs these tests", allow_module_level=True)

import pyspiel  # noqa: E402
from open_spiel.python.algorithms import evaluate_bots, ismcts, mcts  # noqa: E402

from uno_mk_env import PRESETS, Game, Rules, RulesError, UnoMkError  # noqa: E402
from uno_mk_env import actions as A  # noqa: E402
from uno_mk_env.agents import AgentSpecError, RandomAgent, agent_action  # noqa: E402
from uno_mk_env.agents.base import build_agent  # noqa: E402
from uno_mk_env.agents.openspiel_bots import ISMCTSBot  # noqa: E402
from uno_mk_env.engine.observation import OBS_SIZE, encode  # noqa: E402
from uno_mk_env.engine.rewards import win_rewards  # noqa: E402
from uno_mk_env.envs import _openspiel_state  # noqa: E402
from uno_mk_env.envs import openspiel as uos

REPO = Path(__file__).resolve().parents[1]
#: Uniformly random play rarely ends a default game (a voluntary draw is always legal, R4.2):
#: the fast tests cut games at this many decisions (returns 0) to stay fast.
SHORT = 100


def _load(players: int, **params: object) -> pyspiel.Game:
    return pyspiel.load_game(uos.GAME_NAME, {"players": players, **params})


def _step(state: pyspiel.State, rng: np.random.Generator) -> None:
    """One step: a chance outcome by its probability, or a uniformly random legal action."""
    if state.is_chance_node():
        outcomes, probs = zip(*state.chance_outcomes())
        state.apply_action(int(outcomes[rng.choice(len(outcomes), p=probs)]))
    else:
        state.apply_action(int(rng.choice(state.legal_actions())))


def _random_states(game: pyspiel.Game, seed: int, steps: int = 200, chance: bool = False):
    """The decision and terminal states of one random game (at most ``steps`` decisions; with
    ``chance`` its chance nodes too)."""
    rng = np.random.default_rng(seed)
    state = game.new_initial_state()
    decisions = 0
    while decisions < steps and not state.is_terminal():
        if chance or not state.is_chance_node():
            yield state
        decisions += not state.is_chance_node()
        _step(state, rng)
    while not chance and state.is_chance_node():
        _step(state, rng)
    yield state


def _dealt(game: pyspiel.Game, seed: int = 0) -> pyspiel.State:
    """A new state with its deal's chance nodes sampled."""
    rng = np.random.default_rng(seed)
    state = game.new_initial_state()
    while state.is_chance_node():
        _step(state, rng)
    return state


# ------------------------------------------------------------------------- the game itself
def test_game_type_and_sizes() -> None:
    for n in (2, 4, 10):
        game = _load(n)
        t = game.get_type()
        assert t.short_name == "python_uno_mario_kart"
        assert t.dynamics == pyspiel.GameType.Dynamics.SEQUENTIAL
        assert t.chance_mode == pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC
        assert t.information == pyspiel.GameType.Information.IMPERFECT_INFORMATION
        assert t.utility == pyspiel.GameType.Utility.ZERO_SUM
        assert game.num_players() == n and game.num_distinct_actions() == 73
        assert game.max_chance_outcomes() == 54 + n  # card kinds, then a seat dealing
        assert game.observation_tensor_size() == OBS_SIZE == 437
        assert game.information_state_tensor_size() == OBS_SIZE
        assert (game.min_utility(), game.max_utility(), game.utility_sum()) == (
            -1.0 / (n - 1), 1.0, 0.0)
        assert game.max_game_length() == 2 * uos.DEFAULT_MAX_GAME_LENGTH + 1  # KEEPs uncounted


def test_parameters_are_rule_options_and_presets() -> None:
    game = _load(3, preset="strict", lightning_draw=2)
    assert game.rules == Rules(num_players=3, w4_strict=True, uno="off", lightning_draw=2)
    assert _dealt(game).engine.rules == game.rules
    for name in PRESETS:
        assert _load(2, preset=name).rules == Rules(num_players=2, **PRESETS[name])
    params = uos.game_parameters(Rules(num_players=5, uno_catch="next_player"),
                                 chance="sampled", seed=4)
    assert params == {"players": 5, "uno_catch": "next_player", "chance": "sampled", "seed": 4}
    assert pyspiel.load_game(uos.GAME_NAME, params).rules == Rules(num_players=5,
                                                                     uno_catch="next_player")
    with pytest.raises(RulesError, match="preset='nope'"):
        uos.UnoMarioKartGame({"preset": "nope"})
    with pytest.raises(RulesError, match="num_players=11"):
        uos.UnoMarioKartGame({"players": 11})
    with pytest.raises(RulesError, match="colours"):
        uos.UnoMarioKartGame({"colours": 5})
    with pytest.raises(ValueError, match="max_game_length=0"):
        uos.UnoMarioKartGame({"max_game_length": 0})
    with pytest.raises(pyspiel.SpielError):  # pyspiel refuses a parameter it was not told of
        pyspiel.load_game(uos.GAME_NAME, {"colours": 5})


@pytest.mark.parametrize("players", [2, 3, 4, 10])
def test_openspiel_random_sim_test_sampled(players: int) -> None:
    """OpenSpiel's own conformance test (clone, legal actions, tensors, returns, lengths) for
    the sampled form. ``serialize=False``: pyspiel cannot serialise a Python sampled-stochastic
    game with ``serialize_game_and_state`` (see below); the round trip is tested with the
    state's own ``serialize``/``deserialize_state``. The explicit form passes with
    ``serialize=True`` (tests/test_openspiel_chance.py)."""
    game = _load(players, max_game_length=SHORT, seed=players, chance="sampled")
    pyspiel.random_sim_test(game, num_sims=1, serialize=False, verbose=False)


@pytest.mark.slow
@pytest.mark.parametrize("players", [2, 3, 4, 10])
def test_openspiel_random_sim_test_sampled_full_length(players: int) -> None:
    game = _load(players, seed=players, chance="sampled")
    pyspiel.random_sim_test(game, num_sims=5, serialize=False, verbose=False)


def test_serialize_game_and_state_needs_the_game_rng_state() -> None:
    """pyspiel's ``serialize_game_and_state`` (what ``random_sim_test(serialize=True)`` calls)
    appends ``Game.GetRNGState()`` for sampled-stochastic games, which pyspiel's Python-game
    bridge does not forward (open-spiel 2.0.2): no Python sampled-stochastic game can pass it.
    If a pyspiel release forwards it, the full test must pass."""
    game = _load(2, max_game_length=SHORT, chance="sampled")
    try:
        pyspiel.serialize_game_and_state(game, game.new_initial_state())
    except pyspiel.SpielError as e:
        assert "GetRNGState" in str(e)
    else:
        pyspiel.random_sim_test(game, num_sims=2, serialize=True, verbose=False)


@pytest.mark.parametrize("chance", ["explicit", "sampled"])
def test_states_serialise_exactly(chance: str) -> None:
    """Every state, chance nodes included, round-trips through ``serialize`` and through
    ``to_json`` (a decision node's JSON is the engine's state dict)."""
    for n in (2, 4):
        game = _load(n, chance=chance, seed=11 if chance == "sampled" else 0)
        for k, state in enumerate(_random_states(game, seed=n, steps=120, chance=True)):
            text = state.serialize()
            back = game.deserialize_state(text)
            assert str(back) == str(state) and back.history() == state.history()
            if state.is_chance_node():
                assert back.chance_outcomes() == state.chance_outcomes()
            else:
                assert back.legal_actions() == state.legal_actions()
            if k % 10 == 0:
                restored = game.new_initial_state(state.to_json())
                assert str(restored) == str(state)
                assert restored.is_chance_node() == state.is_chance_node()
                if not state.is_chance_node():
                    assert json.loads(str(state)) == state.engine.to_dict()


def test_a_state_from_json_is_validated() -> None:
    game = _load(2)
    d = _dealt(game).engine.to_dict()
    d["hands"][0] = d["hands"][0] + ["R5"] * 3
    with pytest.raises(ValueError, match="copies|hands|R5"):
        game.new_initial_state(json.dumps(d))
    with pytest.raises(RulesError, match="num_players=2 is not this game's 3"):
        _load(3).new_initial_state(_dealt(_load(2)).to_json())


# -------------------------------------------------------------- state strings from outside
class _Forged:
    """Pickles as a state string's record holding ``text``: what anyone can write into the
    ``__dict__`` line (the only callable a state string's pickle may name)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __reduce__(self) -> tuple[object, ...]:
        return (_openspiel_state._restore_record, (self.text,))


def _forge(history: str, move_number: object, record: object) -> str:
    text = record if isinstance(record, str) else json.dumps(record)
    pickled = base64.b64encode(pickle.dumps({"_core": _Forged(text)})).decode()
    return f"history={history}\nmove_number={move_number}\n__dict__={pickled}"


def _parts(state: pyspiel.State) -> tuple[str, int, dict]:
    """A real state string's history line, move number and record."""
    history, number, _ = state.serialize().split("\n")
    record = state._core.record()
    return history[len("history="):], int(number[len("move_number="):]), record


def _played(game: pyspiel.Game, steps: int = 40, seed: int = 0) -> pyspiel.State:
    rng = np.random.default_rng(seed)
    state = game.new_initial_state()
    for _ in range(steps):
        if state.is_terminal():
            break
        _step(state, rng)
    return state


def _refused(load, match: str) -> str:
    """``load()`` is refused with one line of the project's errors, matching ``match``."""
    with pytest.raises(UnoMkError, match=match) as e:
        load()
    assert "\n" not in str(e.value) and len(str(e.value)) < 400
    return str(e.value)


def test_a_state_string_loads_only_into_its_own_game() -> None:
    """Issue 35 item 8: a 2-player state into a 3-player game, another length cap, other
    rules, the other chance form: each refused naming the field."""
    text = _played(_load(2)).serialize()
    assert str(_load(2).deserialize_state(text)) == str(_played(_load(2)))
    _refused(lambda: _load(3).deserialize_state(text), r"'game.players'=2 is not this game's 3")
    _refused(lambda: _load(2, max_game_length=7).deserialize_state(text),
             r"'game.max_game_length'=5000 is not this game's 7")
    _refused(lambda: _load(2, lightning_draw=2).deserialize_state(text),
             r"lightning_draw=1 is not this game's 2")
    _refused(lambda: _load(2, chance="sampled").deserialize_state(text),
             r"'game.chance'='explicit' is not this game's 'sampled'")


@pytest.mark.parametrize("edit, match", [
    (lambda r: r["game"].update(players=3), r"'game.players'=3 is not this game's 2"),
    (lambda r: r["game"].update(max_game_length=-7), r"'game.max_game_length'=-7"),
    (lambda r: r["game"].update(max_game_length=5000.0), r"'game.max_game_length'=5000.0"),
    (lambda r: r["game"]["rules"].update(hand_size=8), r"hand_size=8 is not this game's 7"),
    (lambda r: r["game"]["rules"].update(hand_size="x"), r"game.rules.*hand_size"),
    (lambda r: r["game"].pop("rules"), r"'game' must be an object with the fields"),
    (lambda r: r.update(format=2), r"'format'=2 is not supported"),
    (lambda r: r.update(extra=1), r"record must be an object with the fields"),
    (lambda r: r.update(actions="all"), r"'actions'='all' is not allowed"),
    (lambda r: r["actions"].__setitem__(3, True), r"'actions'=.* is not allowed"),
    (lambda r: r["actions"].pop(), r"'move_number'=40 is not the history's length|does not"),
    (lambda r: r.update(start={"hands": []}), r"state is missing required field"),
])
def test_an_edited_record_is_refused(edit, match: str) -> None:
    state = _played(_load(2))
    history, number, record = _parts(state)
    assert str(_load(2).deserialize_state(_forge(history, number, record))) == str(state)
    edit(record)
    _refused(lambda: _load(2).deserialize_state(_forge(history, number, record)), match)


def test_an_edited_history_is_refused_when_replayed() -> None:
    """The history line must be the record's actions, and every action (chance outcomes too)
    must be legal when replayed from the start."""
    game = _load(2)
    state = _played(game)
    history, number, record = _parts(state)
    items = history.split(",")
    player, action = items[20].split(":")
    items[20] = f"{player}:{(int(action) + 1) % 54}"
    _refused(lambda: game.deserialize_state(_forge(",".join(items), number, record)),
             r"'history' does not match its record's actions \(from step 20\)")
    # the line and the record edited alike: the replay refuses the first impossible step
    i = next(i for i, item in enumerate(items) if item.startswith("-1:") and i > 1)
    card = record["actions"][i]
    taken = ",".join([*history.split(",")[:i], *[f"-1:{card}"] * 9])
    forged = {**record, "actions": [*record["actions"][:i], *[card] * 9]}
    _refused(lambda: game.deserialize_state(_forge(taken, i + 9, forged)),
             rf"'history' step \d+: chance outcome {card} is not possible")
    k = next(k for k, item in enumerate(history.split(",")) if not item.startswith("-1:"))
    player = history.split(",")[k].split(":")[0]
    illegal = ",".join([*history.split(",")[:k], f"{player}:{A.KEEP}"])
    forged = {**record, "actions": [*record["actions"][:k], A.KEEP]}
    _refused(lambda: game.deserialize_state(_forge(illegal, k + 1, forged)),
             rf"'history' step {k}: illegal action {A.KEEP} \(KEEP\)")


@pytest.mark.parametrize("text, match", [
    (None, "must be a str, got NoneType"),
    ("hello", "three lines: history=…"),
    ("[" * 100_000 + "]" * 100_000, "three lines"),
    ("history=0:x\nmove_number=1\n__dict__=", r"'history' entry 0='0:x' is not allowed"),
    ("history=9:1\nmove_number=1\n__dict__=", r"entry 0='9:1' is not allowed"),
    ("history=0:999\nmove_number=1\n__dict__=", r"entry 0='0:999'"),
    ("history=\nmove_number=-1\n__dict__=", r"'move_number'='-1' is not an int"),
    ("history=\nmove_number=0\n__dict__=%%%", r"'__dict__' is not a state's pickled record"),
    ("history=\nmove_number=0\n__dict__=" + base64.b64encode(b"\x80\x04K\x01.").decode(),
     r"'__dict__' must hold exactly one attribute"),
])
def test_malformed_state_strings_are_one_line(text: object, match: str) -> None:
    _refused(lambda: _load(2).deserialize_state(text), match)


def test_a_state_string_never_runs_code(tmp_path: Path) -> None:
    """The pickle may name only the record's constructor: anything else is refused before it
    is called."""
    marker = tmp_path / "ran"

    class Evil:
        def __reduce__(self) -> tuple[object, ...]:
            return (Path.touch, (marker,))

    pickled = base64.b64encode(pickle.dumps({"_core": Evil()})).decode()
    _refused(lambda: _load(2).deserialize_state(f"history=\nmove_number=0\n__dict__={pickled}"),
             r"may hold only its record; it refers to 'pathlib.Path.touch'|'pathlib")
    assert not marker.exists()


def test_sizes_and_depths_are_bounded_before_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    """``new_initial_state("[" * 100000 + "]" * 100000)`` and a record nested as deep are one
    line each (``uno_mk_env.files.parse_json``'s bound), never a RecursionError; a history
    longer than any game of these parameters and an oversized string are refused before they
    are split or replayed."""
    deep = "[" * 100_000 + "]" * 100_000
    _refused(lambda: _load(2).new_initial_state(deep), r"state string nests arrays and objects "
             r"100000 deep; at most \d+ levels are read")
    _refused(lambda: _load(2).deserialize_state(_forge("", 0, deep)),
             r"record nests arrays and objects 100000 deep")
    game = _load(2, max_game_length=3)
    limit = (game.max_game_length() + 1) * (uos.MAX_CARDS_PER_ACTION + 1)
    long_line = ",".join(["-1:54"] * (limit + 1))
    _refused(lambda: game.deserialize_state(_forge(long_line, limit + 1, "{}")),
             rf"'history' has more than {limit} entries")
    monkeypatch.setattr(_openspiel_state, "_STATE_STRING_BYTES", 1000)
    _refused(lambda: game.deserialize_state("x" * 1001), "larger than 1000 bytes")


def test_positions_are_checked_against_the_game() -> None:
    """``new_initial_state(json)``: an engine position or a chance position, each checked
    (rules, fields, every decided outcome possible)."""
    game = _load(2)
    state = game.new_initial_state()
    state.apply_action(uos.DEALER_BASE)
    state.apply_action(5)
    chance = json.loads(state.to_json())
    assert chance["chance"] == {"pending": "deal", "outcomes": [uos.DEALER_BASE, 5]}
    assert str(game.new_initial_state(state.to_json())) == str(state)

    def bad(edit, match: str, into: pyspiel.Game = game) -> None:
        d = json.loads(state.to_json())
        edit(d)
        _refused(lambda: into.new_initial_state(json.dumps(d)), match)

    bad(lambda d: d.update(extra=1), r"unknown field\(s\) \['extra'\]")
    bad(lambda d: d["chance"].update(pending="later"), r"'chance.pending'='later'")
    bad(lambda d: d["chance"].update(outcomes=[uos.DEALER_BASE, 99]),
        r"'chance.outcomes\[1\]': chance outcome 99 is not possible")
    bad(lambda d: d["chance"].update(outcomes=[0] * 500), r"at most 400")
    bad(lambda d: d["rules"].update(num_players=3), r"num_players=3 is not this game's 2")
    bad(lambda d: d.update(state={}), r"'state' must be null exactly when")
    bad(lambda d: None, r"chance nodes exist in chance='explicit' games only",
        into=_load(2, chance="sampled"))
    _refused(lambda: game.new_initial_state("[1, 2]"), r"must be a JSON object, got list")
    _refused(lambda: game.new_initial_state("{"), r"state string is not JSON")


def test_seed_gives_the_deals_and_clones_do_not_deal() -> None:
    """The sampled form: the game's seed deals its states in turn."""
    fresh = _load(3, seed=5, chance="sampled")
    expected = [str(fresh.new_initial_state()) for _ in range(2)]
    game = _load(3, seed=5, chance="sampled")
    a = game.new_initial_state()
    for _ in range(3):
        a.clone()  # pyspiel's Clone makes (and discards) a new initial state
    b = game.new_initial_state()
    assert [str(a), str(b)] == expected and expected[0] != expected[1]
    assert str(_load(3, seed=6, chance="sampled").new_initial_state()) != expected[0]


def test_play_follows_the_engine_and_returns_are_win_rewards() -> None:
    """Current player and legal actions are the engine's (out-of-turn challenges and catches
    included: ``standard_uno`` catches UNO by ``CATCH_UNO``); returns are the env's ``win``
    rewards."""
    ended = 0
    for n, preset in ((2, "default"), (3, "standard_uno"), (4, "variants")):
        game = _load(n, preset=preset, hand_size=2)
        for seed in range(3):
            for state in _random_states(game, seed, steps=1000):
                g = state.engine
                if state.is_terminal():
                    assert state.current_player() == pyspiel.PlayerId.TERMINAL
                    assert state.returns() == (win_rewards(n, g.winner) if g.game_over
                                               else [0.0] * n)
                    assert abs(sum(state.returns())) < 1e-9
                    ended += g.game_over
                else:
                    assert state.current_player() == g.current_player
                    assert state.legal_actions() == list(g.legal_action_ids())
                    assert state.returns() == [0.0] * n
    assert ended >= 3


def test_information_state_is_the_view_and_resampling_keeps_it() -> None:
    rng = np.random.default_rng(0)
    for n in (2, 4):
        game = _load(n)
        changed = 0
        for state in _random_states(game, seed=n, steps=120):
            if state.is_terminal():
                break
            p = state.current_player()
            view = state.engine.view(p)
            assert state.information_state_string(p) == uos.view_string(view)
            assert state.observation_string(p) == state.information_state_string(p)
            assert np.array_equal(state.observation_tensor(p), encode(view))
            assert np.array_equal(state.information_state_tensor(p), encode(view))
            before = str(state)
            sample = state.resample_from_infostate(p, rng.random)
            assert str(state) == before  # the state itself is untouched
            assert sample.information_state_string(p) == state.information_state_string(p)
            assert sample.legal_actions() == state.legal_actions()
            other = (p + 1) % n
            changed += sample.engine.hand(other) != state.engine.hand(other)
        assert changed > 0  # the hidden cards are resampled


# ------------------------------------------------------------------------ OpenSpiel's bots
def _ismcts_bot(game: pyspiel.Game, seed: int, sims: int = 6) -> ISMCTSBot:
    rs = np.random.RandomState(seed)
    evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=rs)
    return ISMCTSBot(game, evaluator, 2.0, sims, random_state=rs)


@pytest.mark.parametrize("players", [2, 3])
def test_openspiel_ismcts_plays_through_evaluate_bots(players: int) -> None:
    """OpenSpiel's IS-MCTS with its random-rollout evaluator at every seat (small hands and a
    cut-off keep the random rollouts short); the shipped bot lacks ``restart_at``, which
    ``evaluate_bots`` calls (``openspiel_bots.ISMCTSBot`` adds it)."""
    game = _load(players, hand_size=2, max_game_length=SHORT, seed=players, chance="sampled")
    state = game.new_initial_state()
    bots = [_ismcts_bot(game, seed=s, sims=4) for s in range(players)]
    returns = evaluate_bots.evaluate_bots(state, bots, np.random.RandomState(0))
    assert state.is_terminal() and returns == state.returns()
    assert abs(sum(returns)) < 1e-9


def test_the_shipped_bot_lacks_restart_at() -> None:
    """Why ``openspiel_bots.ISMCTSBot`` exists: when a pyspiel release implements it, use the
    shipped class."""
    game = _load(2)
    rs = np.random.RandomState(0)
    bot = ismcts.ISMCTSBot(game, mcts.RandomRolloutEvaluator(random_state=rs), 2.0, 2)
    with pytest.raises(pyspiel.SpielError, match="RestartAt"):
        bot.restart_at(game.new_initial_state())


def test_agent_spec_plays_a_game_and_is_reproducible() -> None:
    def play(seed: int) -> list[int]:
        agent = build_agent("openspiel-ismcts:2", seed=seed)
        other = RandomAgent(1)
        g = Game(Rules(num_players=2, hand_size=4), seed=3)
        mine = []
        while not g.game_over and g.num_steps < 40:
            if g.current_player == 0:
                mine.append(agent_action(agent, g))
                g.step(mine[-1])
            else:
                g.step(agent_action(other, g))
        return mine

    first = play(7)
    assert play(7) == first and len(first) > 3


def test_engine_rollouts_end_the_game_or_stop_at_their_cap() -> None:
    from uno_mk_env.agents.openspiel_bots import EngineRandomRollout

    game = _load(3, hand_size=2, seed=1, chance="sampled")
    state = game.new_initial_state()
    before = str(state)
    values = [EngineRandomRollout(seed).evaluate(state) for seed in range(20)]
    assert str(state) == before  # rollouts play on a copy
    assert all(abs(v.sum()) < 1e-9 for v in values) and any(v.max() == 1.0 for v in values)
    capped = EngineRandomRollout(0, max_length=1).evaluate(state)
    assert capped.tolist() == [0.0, 0.0, 0.0]


def test_agent_decides_from_its_view_only() -> None:
    """A twin game whose hidden cards were re-dealt (the same view) gets the same decision."""
    agent = build_agent("openspiel-ismcts:3", seed=2)
    rng = np.random.default_rng(5)
    g = Game(Rules(num_players=3), seed=9)
    checked = 0
    while checked < 3 and not g.game_over:
        if len(g.legal_action_ids()) > 1:
            twin = g.determinize(g.current_player, rng)
            agent.reset(17)
            a = agent_action(agent, g)
            agent.reset(17)
            assert agent_action(agent, twin) == a
            checked += 1
        g.step(g.legal_action_ids()[0])
    assert checked == 3


@pytest.mark.parametrize("spec, match", [
    ("openspiel-ismcts", "needs a simulation count"),
    ("openspiel-ismcts:1", "int 2-10000"),  # OpenSpiel's bot needs 2: it asserts otherwise
    ("openspiel-ismcts:10001", "int 2-10000"),
    ("openspiel-ismcts:ten", "int 2-10000"),
    ("openspiel-ismcts:10:c=x", "c=float 0.0-100.0"),
    ("openspiel-ismcts:10:c=-1", "c=float"),
    ("openspiel-ismcts:10:rollout=0", "rollout=int 1-100000"),
    ("openspiel-ismcts:10:rollout=2.5", "rollout=int"),
    ("openspiel-ismcts:10:depth=3", "'depth=3' is not allowed"),
])
def test_bad_specs_are_one_line(spec: str, match: str) -> None:
    with pytest.raises(AgentSpecError, match=match) as e:
        build_agent(spec)
    assert "\n" not in str(e.value)


def test_without_pyspiel_both_modules_fail_in_one_line_naming_the_extra() -> None:
    code = (
        "import sys; sys.modules['pyspiel'] = None\n"
        "import uno_mk_env, uno_mk_env.agents\n"
        "from uno_mk_env.agents.base import build_agent, AgentSpecError\n"
        "try:\n"
        "    import uno_mk_env.envs.openspiel\n"
        "except ImportError as e:\n"
        "    print(e)\n"
        "try:\n"
        "    build_agent('openspiel-ismcts:5')\n"
        "except AgentSpecError as e:\n"
        "    print(e)\n"
        "print(build_agent('strategic').name)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert len(lines) == 3, out.stdout
    assert "uno-mk-env[openspiel]" in lines[0] and "uno-mk-env[openspiel]" in lines[1]
    assert lines[2] == "strategic"


def test_the_engine_and_the_agents_package_do_not_import_pyspiel() -> None:
    code = ("import sys, uno_mk_env, uno_mk_env.agents\n"
            "from uno_mk_env.agents import make_agent\n"
            "make_agent('strategic'); make_agent('ismcts:5')\n"
            "print('pyspiel' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def test_the_length_cap_counts_public_decisions_only() -> None:
    """Issue 24 item 1: a game is cut after ``max_game_length`` public decisions (a KEEP, hidden
    from the other seats, is not counted) and never inside a drawn card's decision."""
    game = _load(2, max_game_length=3, seed=0, chance="sampled")
    state = game.new_initial_state()
    while not state.is_terminal():
        legal = state.legal_actions()
        state.apply_action(next(a for a in (A.KEEP, A.DRAW) if a in legal))
    g = state.engine
    assert g.num_keeps >= 1  # the seed deals a playable draw: the case this test is about
    assert g.public_steps == 3 and g.phase != A.PLAY_DRAWN and not g.game_over
