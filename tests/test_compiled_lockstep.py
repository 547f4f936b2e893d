"""The compiled core in lockstep with the Python engine (docs/compiled.md#bit-exactness).

Same seed, same actions: the two engines must hold the same state (``to_dict``, events
included), show every seat the same observation and view, offer the same legal actions and mask,
and pay the same rewards, over every rules preset and option set and 2-10 players. Snapshots
cross between the engines both ways, and a determinization from a seat's view is the same game
drawn with the same draws.

Skips: ``UNO_MK_ENGINE=python`` (the Python engine forced) skips these tests; so does a missing
extension, unless ``UNO_MK_REQUIRE_COMPILED=1`` (set in CI, where the core is built): then a
missing extension fails the run.
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from uno_mk_env import Game, Rules, compiled
from uno_mk_env import actions as A
from uno_mk_env.engine.observation import action_mask, encode
from uno_mk_env.engine.rewards import REWARD_MODES, round_rewards
from uno_mk_env.engine.rules import MAX_DEALT, PRESETS
from uno_mk_env.errors import IllegalActionError, StateError


def load_core() -> Any:
    """The extension module, or skip (see the module docstring); fails if it is required."""
    if compiled.engine() == "python":
        pytest.skip("UNO_MK_ENGINE=python forces the Python engine", allow_module_level=True)
    module = compiled._load()
    if module is None:
        if os.environ.get("UNO_MK_REQUIRE_COMPILED") == "1":
            pytest.fail("UNO_MK_REQUIRE_COMPILED=1 but uno_mk_env.compiled._core is not built",
                        pytrace=False)
        pytest.skip("the compiled core is not built", allow_module_level=True)
    return module


core = load_core()
CompiledGame = core.CompiledGame

#: Every preset, then option sets that reach each remaining value of every rule option.
OPTION_SETS: dict[str, dict[str, Any]] = {
    **{f"preset-{name}": options for name, options in PRESETS.items()},
    "any_player": {"uno_catch": "any_player", "uno_penalty": 3},
    "next_player_full": {"uno_catch": "next_player", "last_item_box": "full",
                         "lightning_draw": 0},
    "target_score": {"match": "target_score", "target_score": 60},
    "fixed_rounds": {"match": "fixed_rounds", "rounds": 3, "stalemate": "lowest_hand"},
    "one_card": {"hand_size": 1, "uno_penalty": 0},
    "big_hands": {"hand_size": 15, "banana_target": "last_player"},
    "reflip_strict": {"start_action_cards": "reflip", "w4_strict": True,
                      "item_box_counts_for_w4": False, "start_item_box_chooser": "first_player"},
    "no_uno_no_reverse_skip": {"uno": "off", "two_player_reverse_skips": False,
                               "lightning_draw": 3},
}
PLAYERS = range(2, 11)


def rules_of(options: dict[str, Any], n: int) -> Rules:
    options = dict(options, num_players=n)
    options["hand_size"] = min(options.get("hand_size", 7), MAX_DEALT // n)
    return Rules(**options)


def choose(legal: tuple[int, ...], pick: np.random.Generator) -> int:
    """Random legal play that mostly plays a card (uniform play draws for thousands of steps):
    every non-DRAW action (calls, catches, challenges, colours, targets) stays reachable."""
    others = [a for a in legal if a != A.DRAW]
    if others and pick.random() < 0.85:
        return others[int(pick.integers(len(others)))]
    return legal[int(pick.integers(len(legal)))]


def same_state(py: Game, c: Any, events: bool = False) -> None:
    assert c.to_dict(events) == py.to_dict(events)


def same_seen(py: Game, c: Any) -> None:
    """Every seat's observation and view, the legal ids and the mask."""
    legal = py.legal_action_ids()
    assert c.legal_action_ids() == legal
    assert np.array_equal(c.legal_actions(), py.legal_actions())
    assert np.array_equal(action_mask(c.legal_action_ids()), action_mask(legal))
    for seat in range(py.num_players):
        view = py.view(seat)
        assert c.view(seat) == view
        assert np.array_equal(c.observation(seat), encode(view))


def lockstep(rules: Rules, seed: int, max_steps: int, check_every: int = 1) -> Iterator[
        tuple[Game, Any, np.random.Generator]]:
    """Plays both engines with the same random legal actions, checking them at every step;
    yields ``(python game, compiled game, picker)`` after each step for extra checks."""
    py = Game(rules, seed=seed, event_log="all")
    c = CompiledGame(rules, seed=seed, event_log="all")
    pick = np.random.default_rng([seed, 7])
    same_state(py, c)
    while not py.game_over and py.num_steps < max_steps:
        same_seen(py, c)
        action = choose(py.legal_action_ids(), pick)
        py.step(action)
        c.step(action)
        assert (c.round_over, c.game_over, c.current_player) == (
            py.round_over, py.game_over, py.current_player)
        if py.round_over:
            for mode in REWARD_MODES:
                assert c.round_rewards(mode) == round_rewards(py, mode)
        if py.round_over or py.num_steps % check_every == 0:
            same_state(py, c)
        yield py, c, pick
    same_seen(py, c)
    same_state(py, c, events=True)
    assert c.events == py.events


@pytest.mark.parametrize("n", PLAYERS)
@pytest.mark.parametrize("name", OPTION_SETS)
def test_lockstep_every_option_set(name: str, n: int) -> None:
    rules = rules_of(OPTION_SETS[name], n)
    for seed in (n, 100 + n):
        for _ in lockstep(rules, seed, max_steps=150, check_every=7):
            pass


@pytest.mark.slow
@pytest.mark.parametrize("n", PLAYERS)
@pytest.mark.parametrize("name", OPTION_SETS)
def test_lockstep_long(name: str, n: int) -> None:
    rules = rules_of(OPTION_SETS[name], n)
    for seed in range(20):
        for _ in lockstep(rules, 1000 + seed, max_steps=3000, check_every=1):
            pass


@pytest.mark.parametrize("n", [2, 3, 4, 7, 10])
@pytest.mark.parametrize("name", ["preset-default", "preset-standard_uno", "any_player",
                                  "target_score", "reflip_strict"])
def test_snapshots_cross_both_ways(name: str, n: int) -> None:
    """A position written by one engine, read by the other, plays on identically (the
    generator's state travels with it)."""
    rules = rules_of(OPTION_SETS[name], n)
    for py, c, _ in lockstep(rules, 3 + n, max_steps=120):
        if py.num_steps % 15 or py.game_over:
            continue
        c2 = CompiledGame.from_dict(py.to_dict(include_events=True))
        py2 = Game.from_dict(c.to_dict(include_events=True))  # (a state dict's events are
        assert c2.to_dict() == py.to_dict() == py2.to_dict()  # a record, not read back)
        assert CompiledGame.from_game(py).to_dict(True) == py.to_dict(True)
        assert c.to_game().to_dict(True) == py.to_dict(True)
        follow = np.random.default_rng(py.num_steps)
        for _ in range(12):
            if py2.game_over:
                break
            action = choose(py2.legal_action_ids(), follow)
            py2.step(action)
            c2.step(action)
            same_state(py2, c2, events=True)


@pytest.mark.parametrize("n", [2, 3, 4, 5, 8, 10])
@pytest.mark.parametrize("name", list(OPTION_SETS))
def test_determinize_matches(name: str, n: int) -> None:
    """``determinize(seat, rng)`` from the decider's and another seat's view: the same sampled
    game, the same draws from ``rng``, in every phase the games pass through."""
    rules = rules_of(OPTION_SETS[name], n)
    for py, c, _ in lockstep(rules, 50 + n, max_steps=70):
        if py.game_over:
            break
        for seat in {py.current_player, (py.current_player + 1) % n}:
            r_py = np.random.default_rng([py.num_steps, seat])
            r_c = np.random.default_rng([py.num_steps, seat])
            d_py = py.determinize(seat, r_py)
            d_c = c.determinize(seat, r_c, event_log="recent")
            assert d_c.to_dict(True) == d_py.to_dict(True)
            assert r_c.bit_generator.state == r_py.bit_generator.state
            assert d_c.legal_action_ids() == d_py.legal_action_ids()


def test_determinize_keeps_hidden_cards_hidden() -> None:
    """Two games that differ only in what seat 0 cannot see determinize alike for seat 0."""
    game = Game(Rules(num_players=4), seed=11)
    d = game.to_dict()
    hands = d["hands"]
    assert len(hands[1]) == len(hands[2])
    other = Game.from_dict(dict(d, hands=[hands[0], hands[2], hands[1], hands[3]],
                                draw_pile=list(reversed(d["draw_pile"]))))
    assert other.to_dict() != d
    a = CompiledGame.from_game(game).determinize(0, np.random.default_rng(1), "recent")
    b = CompiledGame.from_game(other).determinize(0, np.random.default_rng(1), "recent")
    assert a.to_dict() == b.to_dict()


@pytest.mark.parametrize("bit_generator", ["PCG64", "Philox", "MT19937"])
def test_generator_seeds_borrow_like_the_reference(bit_generator: str) -> None:
    """``seed=Generator``: both engines draw from (and advance) the caller's generator; any of
    numpy's bit generators, whose state ``to_dict`` carries."""
    rules = Rules(num_players=3)

    def gen() -> np.random.Generator:
        return np.random.Generator(getattr(np.random, bit_generator)(5))

    g_py, g_c = gen(), gen()
    py, c = Game(rules, seed=g_py), CompiledGame(rules, seed=g_c)
    pick = np.random.default_rng(0)
    while not py.game_over and py.num_steps < 400:
        action = choose(py.legal_action_ids(), pick)
        py.step(action)
        c.step(action)
    d_py, d_c = py.to_dict(True), c.to_dict(True)
    assert same_values(d_c.pop("rng"), d_py.pop("rng"))  # numpy arrays in some states
    assert d_c == d_py
    assert same_values(g_c.bit_generator.state, g_py.bit_generator.state)


def same_values(a: Any, b: Any) -> bool:
    """``a == b`` for nested dicts holding numpy arrays."""
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(
            same_values(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray):
        return np.array_equal(a, b)
    return bool(a == b)


def test_illegal_actions_fail_alike_and_change_nothing() -> None:
    rules = Rules(num_players=4)
    py, c = Game(rules, seed=2), CompiledGame(rules, seed=2)
    legal = set(py.legal_action_ids())
    for bad in [a for a in range(A.NUM_ACTIONS) if a not in legal][:5] + [-1, 73, 10**30]:
        with pytest.raises(IllegalActionError) as e_py:
            py.step(bad)
        with pytest.raises(IllegalActionError) as e_c:
            c.step(bad)
        assert str(e_c.value) == str(e_py.value)
    for bad_type in (True, 1.0, "3", None):
        with pytest.raises(IllegalActionError, match="action must be an int"):
            c.step(bad_type)
    same_state(py, c, events=True)
    c.step(np.int64(py.legal_action_ids()[0]))  # numpy ints are action ids
    py.step(py.legal_action_ids()[0])
    same_state(py, c, events=True)


def test_game_over_refuses_every_action() -> None:
    rules = Rules(num_players=2, hand_size=1)
    states = list(lockstep(rules, 9, max_steps=500))
    c = states[-1][1]
    assert c.game_over and c.legal_action_ids() == ()
    with pytest.raises(IllegalActionError, match="the game is over"):
        c.step(0)


def test_clone_and_pickle_are_independent() -> None:
    rules = Rules(num_players=3)
    c = CompiledGame(rules, seed=4)
    before = c.to_dict(True)
    twin = c.clone()
    again = pickle.loads(pickle.dumps(c))
    twin.step(twin.legal_action_ids()[-1])
    assert c.to_dict(True) == before == again.to_dict(True)
    assert twin.to_dict(True) != before
    again.step(c.legal_action_ids()[-1])
    assert again.to_dict(True) == twin.to_dict(True)


def test_bad_inputs_are_one_line_errors() -> None:
    with pytest.raises(TypeError, match="rules must be a uno_mk_env.Rules"):
        CompiledGame({"num_players": 2})
    with pytest.raises(ValueError, match="event_log="):
        CompiledGame(Rules(), event_log="most")
    with pytest.raises(StateError, match="hands"):
        CompiledGame.from_dict({"hands": "R1"})
    with pytest.raises(ValueError, match="seat 7 out of range 0-3"):
        CompiledGame(Rules()).observation(7)
    with pytest.raises(ValueError, match="reward="):
        CompiledGame(Rules()).round_rewards("score")
    with pytest.raises(TypeError, match="numpy.random.Generator"):
        CompiledGame(Rules()).determinize(0, 5)


def test_random_play_runs_whole_games() -> None:
    """The core's C benchmark loop (``random_play``) plays games to their end."""
    assert core.random_play(Rules(num_players=4), 100_000, 3) > 10
    with pytest.raises(TypeError, match="rules must be"):
        core.random_play({}, 10)
