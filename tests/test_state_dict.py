"""State dicts (docs/api.md#state-dicts): ``Game.from_dict`` / ``to_dict``.

The minimal position of docs/api.md#state-dicts is read exactly as written there and played to
the end; ``to_dict()`` writes the same keys with the same meanings (``draw_pile[0]`` is drawn first,
``discard_pile[-1]`` is the top card); the JSON round trip is exact, RNG included; malformed
input raises :class:`uno_mk_env.StateError` naming the field, and builds nothing.
"""

from __future__ import annotations

import copy
import gc
import json
from collections import Counter
from typing import Any

import numpy as np
import pytest

from uno_mk_env import Game, Rules, StateError, cards
from uno_mk_env import actions as A

#: docs/api.md#state-dicts, verbatim.
MINIMAL_JSON = """
{"rules": {"num_players": 3}, "hands": [["R7", "W4"], ["G2", "GS"], ["B9"]],
 "draw_pile": ["B3", "Y7"], "discard_pile": ["Y5", "R5"], "active_colour": "R",
 "current_player": 0, "direction": 1}
"""

PHASE_NAMES = {"play", "play_drawn", "choose_colour", "choose_target", "challenge", "game_over"}


def minimal() -> dict[str, Any]:
    return json.loads(MINIMAL_JSON)


def random_action(g: Game, rng: np.random.Generator) -> int:
    ids = g.legal_action_ids()
    return ids[int(rng.integers(len(ids)))]


def midgame(seed: int, steps: int, num_players: int = 4, **rules: Any) -> Game:
    """A seeded game after up to ``steps`` random decisions."""
    g = Game(Rules(num_players=num_players, **rules), seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        if g.game_over:
            break
        g.step(random_action(g, rng))
    return g


# ------------------------------------------------------------------------------ minimal position
def test_minimal_position_is_read_as_written() -> None:
    """docs/api.md#state-dicts: the hand-written position, everything else as at the start of a
    turn."""
    g = Game.from_dict(minimal())
    assert g.num_players == 3 and g.rules == Rules(num_players=3)
    assert g.current_player == 0 and g.phase_name == "play" and g.direction == 1
    assert g.active_colour == cards.colour("R")
    assert g.top_card == cards.kind("R5")
    assert g.hand(0) == _counts(["R7", "W4"])
    assert g.hand(1) == _counts(["G2", "GS"])
    assert g.hand(2) == _counts(["B9"])
    assert g.scores == [0, 0, 0] and not g.game_over and g.winner is None
    # R4.1 + R6.2 (W4 as a bluff) + R8 (two cards: CALL_UNO).
    assert g.legal_action_ids() == (cards.kind("R7"), cards.W4, A.DRAW, A.CALL_UNO)
    d = g.to_dict()
    assert d["phase"] == "play" and d["drawn_card"] is None and d["w4"] is None
    assert d["uno_called"] == [False] * 3 and d["scores"] == [0] * 3 and d["idle_turns"] == 0


def test_minimal_position_plays_on_to_the_end() -> None:
    """The docs/api.md#state-dicts position played out: R8 UNO call, R4.2 draws in pile order
    (draw_pile[0] first), a playable drawn card, R6.4 W4 as the last card, R9 reshuffle, R10.2
    scoring."""
    g = Game.from_dict(minimal(), seed=0)
    g.step(A.CALL_UNO)
    g.step(A.play(cards.kind("R7")))
    assert (g.current_player, g.phase_name) == (1, "play")
    assert g.legal_action_ids() == (A.DRAW, A.CALL_UNO)  # G2, GS do not match R7
    g.step(A.DRAW)  # draws B3, not playable: the turn ends
    assert g.hand(1) == _counts(["G2", "GS", "B3"])
    assert (g.current_player, g.phase_name) == (2, "play")
    assert g.legal_action_ids() == (A.DRAW,)
    g.step(A.DRAW)  # draws Y7: matches the 7, may be played at once
    assert g.phase_name == "play_drawn" and g.to_dict()["drawn_card"] == "Y7"
    assert g.legal_action_ids() == (cards.kind("Y7"), A.KEEP, A.CALL_UNO)
    g.step(A.CALL_UNO)
    g.step(A.play(cards.kind("Y7")))
    assert (g.current_player, g.active_colour) == (0, cards.colour("Y"))
    assert g.legal_action_ids() == (cards.W4, A.DRAW)
    g.step(A.play(cards.W4))  # last card: no colour, no challenge; seat 1 draws 4 (R6.4)
    d = g.to_dict()
    assert g.game_over and g.winner == 0 and d["phase"] == "game_over"
    assert d["current_player"] is None
    assert d["discard_pile"] == ["W4"] and d["draw_pile"] == []
    # The pile held none, so Y5 R5 R7 Y7 were reshuffled (R9) and all four drawn.
    assert Counter(d["hands"][1]) == Counter(["G2", "GS", "B3", "Y5", "R5", "R7", "Y7"])
    assert d["hands"][0] == [] and d["hands"][2] == ["B9"]
    assert g.scores == [2 + 20 + 3 + 5 + 5 + 7 + 7 + 9, 0, 0]


def test_to_dict_writes_the_minimal_keys_with_the_same_meaning() -> None:
    m = minimal()
    g = Game.from_dict(m)
    d = g.to_dict()
    assert set(m) | {"phase", "dealer", "scores"} <= set(d)
    assert d["rules"] == Rules(num_players=3).to_dict()
    assert [Counter(h) for h in d["hands"]] == [Counter(h) for h in m["hands"]]
    for key in ("draw_pile", "discard_pile", "active_colour", "current_player", "direction"):
        assert d[key] == m[key], key
    assert d["phase"] == "play" and d["scores"] == [0, 0, 0]
    assert isinstance(d["dealer"], int) and 0 <= d["dealer"] < 3
    assert Game.from_dict(d) == g


def test_to_dict_keys_and_types_midgame() -> None:
    for seed in range(12):
        g = midgame(seed, 40 + 7 * seed, num_players=2 + seed % 9)
        d = g.to_dict()
        n = g.num_players
        assert d["phase"] in PHASE_NAMES and d["phase"] == g.phase_name
        assert len(d["hands"]) == n and all(isinstance(c, str) for h in d["hands"] for c in h)
        assert d["discard_pile"][-1] == cards.code(g.top_card)
        assert d["active_colour"] == cards.COLOURS[g.active_colour]
        assert d["direction"] in (1, -1) and type(d["direction"]) is int
        assert d["scores"] == g.scores and all(type(x) is int for x in d["scores"])
        assert d["winner"] is None or type(d["winner"]) is int
        if not g.game_over:
            assert d["current_player"] == g.current_player


def test_draw_pile_zero_is_drawn_first_and_discard_last_is_the_top() -> None:
    checked = 0
    for seed in range(30):
        g = midgame(seed, seed % 11)
        rng = np.random.default_rng(seed)
        for _ in range(60):
            if g.game_over:
                break
            d = g.to_dict()
            if g.phase_name == "play" and d["draw_pile"]:
                before = g.hand(g.current_player)
                p = g.current_player
                g.step(A.DRAW)
                after = g.hand(p)
                gained = [cards.code(k) for k in range(cards.NUM_KINDS) if after[k] > before[k]]
                assert gained == [d["draw_pile"][0]]
                checked += 1
            else:
                a = random_action(g, rng)
                g.step(a)
                if a < A.DRAW:
                    top = g.to_dict()["discard_pile"]
                    assert cards.kind(top[-1]) == g.top_card
                    assert a in (g.top_card, cards.kind(top[-2]))  # WB: the flip lies on it
    assert checked > 100


# ------------------------------------------------------------------------------ round trips
def test_json_round_trip_is_exact() -> None:
    for seed in range(40):
        g = midgame(seed, 5 * seed, num_players=2 + seed % 9)
        d = g.to_dict()
        text = json.dumps(d, allow_nan=False)
        back = json.loads(text)
        assert back == d
        r = Game.from_dict(back)
        assert r == g and r.to_dict() == d and json.dumps(r.to_dict(), allow_nan=False) == text
        assert r.legal_action_ids() == g.legal_action_ids()
    full = midgame(3, 50).to_dict(include_events=True)
    assert json.loads(json.dumps(full, allow_nan=False)) == full


def test_finished_game_round_trips() -> None:
    """A game over (R10) round-trips too, and stays over."""
    for seed in range(5):
        g = Game(Rules(num_players=3 + seed), seed=seed)
        rng = np.random.default_rng(seed)
        while not g.game_over:  # play whenever possible: rounds end in ~100 decisions
            ids = g.legal_action_ids()
            plays = [a for a in ids if a < A.DRAW] or [a for a in ids if a != A.CALL_UNO]
            g.step(A.CALL_UNO if A.CALL_UNO in ids else plays[int(rng.integers(len(plays)))])
        d = json.loads(json.dumps(g.to_dict()))
        assert d["game_over"] and d["phase"] == "game_over" and d["current_player"] is None
        r = Game.from_dict(d)
        assert r == g and r.game_over and r.winner == g.winner and r.scores == g.scores
        assert r.legal_action_ids() == () and r.current_player == -1


def _reshuffle_soon() -> tuple[Game, np.random.Generator]:
    """A seeded game whose draw pile is about to run out (a reshuffle within a few draws)."""
    for seed in range(100):
        g = Game(Rules(num_players=3), seed=seed)
        rng = np.random.default_rng(seed)
        while not g.game_over and g.num_steps < 3000:
            d = g.to_dict()
            if len(d["draw_pile"]) <= 1 and len(d["discard_pile"]) >= 20 and g.phase_name == "play":
                return g, rng
            g.step(random_action(g, rng))
    raise AssertionError("no game reached an almost empty draw pile")


def test_rng_state_is_restored_so_reshuffles_continue_identically() -> None:
    """docs/api.md#state-dicts, docs/api.md#randomness: a game restored mid-way continues with the
    same reshuffles (R9)."""
    g, rng = _reshuffle_soon()
    d = json.loads(json.dumps(g.to_dict()))
    restored = Game.from_dict(d)
    other = {k: v for k, v in d.items() if k != "rng"}
    reseeded = Game.from_dict(other, seed=12345)
    n_events = len(g.events)
    for _ in range(3):  # draw until the pile is refilled
        for game in (g, restored, reseeded):
            assert game.phase_name == "play"
            game.step(A.DRAW)
        for game in (g, restored, reseeded):
            if game.phase_name == "play_drawn":
                game.step(A.KEEP)
    assert any(e[0] == "reshuffle" for e in g.events[n_events:])
    assert any(e[0] == "reshuffle" for e in restored.events)
    assert restored.to_dict() == g.to_dict()
    assert restored.events == g.events[n_events:]
    # Without the stored state, another generator reshuffles differently.
    assert reseeded.to_dict()["draw_pile"] != g.to_dict()["draw_pile"]
    for _ in range(40):
        if g.game_over:
            break
        a = random_action(g, rng)
        g.step(a)
        restored.step(a)
    assert restored.to_dict() == g.to_dict()


def test_from_dict_seed_is_used_without_rng_and_ignored_with_it() -> None:
    d = midgame(4, 30).to_dict()
    bare = {k: v for k, v in d.items() if k != "rng"}
    assert Game.from_dict(bare, seed=9) == Game.from_dict(bare, seed=9)
    assert Game.from_dict(bare, seed=9).to_dict()["rng"] != Game.from_dict(bare, seed=10).to_dict()[
        "rng"]
    assert Game.from_dict(d, seed=9) == Game.from_dict(d, seed=10) == Game.from_dict(d)


def test_dicts_are_copies() -> None:
    """Mutating the input dict after from_dict, or the output of to_dict, never touches a game."""
    m = minimal()
    g = Game.from_dict(m)
    before = g.to_dict()
    m["hands"][0].append("R1")
    m["draw_pile"].clear()
    out = g.to_dict()
    out["hands"][1].append("B1")
    out["rules"]["num_players"] = 9
    out["scores"][0] = 100
    assert g.to_dict() == before


# ------------------------------------------------------------------------------ rejection
def _game_count() -> int:
    gc.collect()
    # type(), not isinstance(): isinstance on every live object wakes lazy modules (torch's
    # deprecated attributes warn)
    return sum(1 for o in gc.get_objects() if type(o) is Game)


def assert_rejected(d: Any, *needles: str) -> None:
    """``from_dict(d)`` raises StateError mentioning every needle and leaves ``d`` as it was."""
    snapshot = copy.deepcopy(d)
    try:
        result = Game.from_dict(d)
    except StateError as e:
        message = str(e)
    else:
        pytest.fail(f"from_dict accepted a malformed state and returned {result!r}")
    for needle in needles:
        assert needle in message, f"{needle!r} not in error message {message!r}"
    assert d == snapshot, "from_dict modified its input"


def _with(**changes: Any) -> dict[str, Any]:
    d = minimal()
    d.update(changes)
    return d


MALFORMED = [
    pytest.param(_with(hands=[["R7", "X9"], ["G2", "GS"], ["B9"]]), ("'hands'", "X9"),
                 id="unknown-code-hand"),
    pytest.param(_with(hands=[["R7", 7], ["G2", "GS"], ["B9"]]), ("'hands'",),
                 id="non-string-code-hand"),
    pytest.param(_with(draw_pile=["B3", "R10"]), ("'draw_pile'", "R10"), id="unknown-code-draw"),
    pytest.param(_with(discard_pile=["Y5", "W2"]), ("'discard_pile'", "W2"),
                 id="unknown-code-discard"),
    pytest.param(_with(hands=[["R7", "W4"], ["G2", "GS"], ["R0", "R0"]]), ("R0",),
                 id="too-many-R0"),
    pytest.param(_with(draw_pile=["W4", "W4", "W4", "W4"]), ("W4",), id="too-many-W4-across"),
    pytest.param(_with(rules={"num_players": 4}), ("'hands'", "num_players"),
                 id="hands-vs-num-players"),
    pytest.param(_with(phase="playing"), ("'phase'", "playing"), id="bad-phase"),
    pytest.param(_with(phase=0), ("'phase'",), id="phase-as-int"),
    pytest.param(_with(phase="game_over"), ("'phase'", "game_over"), id="game-over-phase-only"),
    pytest.param(_with(direction=0), ("'direction'",), id="direction-0"),
    pytest.param(_with(direction=2), ("'direction'",), id="direction-2"),
    pytest.param(_with(direction="1"), ("'direction'",), id="direction-str"),
    pytest.param(_with(direction=True), ("'direction'",), id="direction-bool"),
    pytest.param(_with(direction=None), ("'direction'",), id="direction-none"),
    pytest.param(_with(direction=1.0), ("'direction'",), id="direction-float"),
    pytest.param(_with(current_player=3), ("'current_player'",), id="current-player-3"),
    pytest.param(_with(current_player=-1), ("'current_player'",), id="current-player-neg"),
    pytest.param(_with(current_player=None), ("'current_player'",), id="current-player-none"),
    pytest.param(_with(current_player=True), ("'current_player'",), id="current-player-bool"),
    pytest.param(_with(current_player="0"), ("'current_player'",), id="current-player-str"),
    pytest.param(_with(active_colour="Y"), ("'active_colour'", "R5"), id="colour-contradicts"),
    pytest.param(_with(active_colour="P"), ("'active_colour'",), id="colour-unknown"),
    pytest.param(_with(discard_pile=[]), ("'discard_pile'",), id="empty-discard"),
    pytest.param(_with(phase="play_drawn"), ("drawn_card",), id="play-drawn-without-card"),
    pytest.param(_with(phase="challenge"), ("'w4'",), id="challenge-without-w4"),
    pytest.param(_with(rules={"num_players": 3, "colours": 5}), ("'rules'", "colours"),
                 id="unknown-rule-option"),
    pytest.param(_with(rules={"num_players": 3, "uno": "maybe"}), ("'rules'", "uno"),
                 id="bad-rule-value"),
    pytest.param(_with(rules=["num_players"]), ("'rules'",), id="rules-list"),
    pytest.param(_with(rules="num_players=3"), ("'rules'",), id="rules-str"),
    pytest.param(_with(hands="R7 W4"), ("'hands'",), id="hands-str"),
    pytest.param(_with(draw_pile="B3"), ("'draw_pile'",), id="draw-pile-str"),
    pytest.param(_with(void_evidence=[[0] * 4] * 2), ("'void_evidence'",),
                 id="void-evidence-short"),
    pytest.param(_with(void_evidence=[[0] * 4, [9, 0, 0, 0], [0] * 4]),
                 ("'void_evidence'[1]", "0-8"), id="void-evidence-too-big"),
    pytest.param(_with(void_evidence=[[0] * 4, [0] * 3, [0] * 4]), ("'void_evidence'[1]",),
                 id="void-evidence-row-short"),
    pytest.param(_with(void_evidence=[[0] * 4, [True, 0, 0, 0], [0] * 4]),
                 ("'void_evidence'[1]",), id="void-evidence-bool"),
    pytest.param([("hands", [])], ("mapping",), id="list-of-pairs"),
    pytest.param("{}", ("mapping",), id="json-text"),
    pytest.param(None, ("mapping",), id="none"),
]


@pytest.mark.parametrize(("d", "needles"), MALFORMED)
def test_malformed_state_is_rejected_naming_the_field(d: Any, needles: tuple[str, ...]) -> None:
    assert_rejected(d, *needles)


def test_rejected_states_leave_no_game_behind() -> None:
    """A rejected dict builds nothing: no Game is returned and none survives the error."""
    games = _game_count()
    for case in MALFORMED:
        d, needles = case.values
        try:
            assert_rejected(d, *needles)
        except (Exception, pytest.fail.Exception):
            pass  # reported by the test above; here only the leftovers count
    assert _game_count() == games, "a half-built Game survived a rejected state"


@pytest.mark.parametrize("field", ["hands", "draw_pile", "discard_pile", "active_colour",
                                   "current_player", "direction"])
def test_missing_required_field_is_named(field: str) -> None:
    d = minimal()
    del d[field]
    assert_rejected(d, field)


def test_state_error_is_a_value_error_and_valid_input_still_builds() -> None:
    assert issubclass(StateError, ValueError)
    assert_rejected(_with(direction=0), "'direction'")
    assert Game.from_dict(minimal()).to_dict()["direction"] == 1


def _counts(codes: list[str]) -> list[int]:
    counts = [0] * cards.NUM_KINDS
    for c in codes:
        counts[cards.kind(c)] += 1
    return counts


# ------------------------------------------------------------------- hostile full states


def _full() -> dict[str, Any]:
    """A real mid-game state of four players (every field present)."""
    return midgame(seed=5, steps=40).to_dict()


def _set(d: dict[str, Any], path: tuple, value: Any) -> dict[str, Any]:
    d = copy.deepcopy(d)
    node = d
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return d


HOSTILE = [  # what an outside audit fed from_dict: each raised a raw error or crashed later
    (("round",), None, "'round'"),
    (("idle_turns",), "x", "'idle_turns'"),
    (("idle_turns",), 300, "'idle_turns'"),
    (("num_steps",), float("nan"), "'num_steps'"),
    (("rng",), None, "'rng'"),
    (("rng", "state", "state"), "-1", "'rng'"),
    (("rng", "state", "state"), str(2**200), "'rng'"),
    (("rng", "bit_generator"), "os.system", "'rng'"),
    (("rules",), {1: 2}, "'rules'"),
    (("turn_player",), 99, "'turn_player'"),
    (("previous_turn_player",), 99, "'previous_turn_player'"),
    (("winner",), "abc", "'winner'"),
    (("winner",), 1, "'winner'"),  # a winner while the game goes on
    (("scores",), [10**400, 0, 0, 0], "'scores[0]'"),
    (("scores",), [2000, 0, 0, 0], "'scores[0]'"),  # above a single round's 1440
    (("reveals",), [{"player": 0, "to": 1, "hand": ["R1"] * 300}], "'reveals[0].hand'"),
    (("reveals",), [{"player": 0, "to": 0, "hand": ["R1"]}], "'reveals[0]'"),
    (("reveals",), [{"player": 0, "to": 1, "hand": []}] * 2, "one reveal per challenger"),
    (("reveals",), [{"player": 0, "to": 1, "hand": []}] * 5, "'reveals'"),
    (("reveals",), {"player": 0, "to": 1, "hand": []}, "'reveals'"),
    (("num_keeps",), 10**9, "'num_keeps'"),  # more KEEPs than decisions
    (("colour_context",), "no_flip", "'colour_context'"),  # R7.3: never occurs
    (("uno_called",), ["x", False, False, False], "'uno_called[0]'"),
    (("round_hand_points",), [1, 2], "'round_hand_points'"),
    (("dealer",), -1, "'dealer'"),
    (("format",), 99, "'format'"),
    (("colour_context",), "w4", "'colour_context'"),  # only in phase choose_colour
    (("w4",), {"player": 0, "previous_colour": "R", "illegal": "no"}, "'w4.illegal'"),
    (("last_item",), "Star", "'last_item'"),
]


@pytest.mark.parametrize(("path", "value", "needle"), HOSTILE,
                         ids=[f"{'.'.join(map(str, p))}={v!r:.20}" for p, v, _ in HOSTILE])
def test_hostile_field_raises_state_error_naming_it(path, value, needle) -> None:
    assert_rejected(_set(_full(), path, value), needle)


def test_seed_must_be_an_int() -> None:
    with pytest.raises(StateError, match="seed"):
        Game.from_dict(minimal(), seed="7")  # type: ignore[arg-type]


GARBAGE = [None, True, False, -1, 0, 1, 2, 3, 99, 2**70, 10**400, float("nan"), 1.5, "x", "R7",
           "W4", "play", [], [None], [0, 0], ["R1"] * 300, {}, {"player": 0}, [[0] * 4] * 4]


def _paths(d: Any, prefix: tuple = ()) -> list[tuple]:
    out = []
    if isinstance(d, dict):
        for k, v in d.items():
            out.append(prefix + (k,))
            out += _paths(v, prefix + (k,))
    elif isinstance(d, list) and d and len(d) <= 10:
        for i, v in enumerate(d):
            out.append(prefix + (i,))
            out += _paths(v, prefix + (i,))
    return out


def _exercise(g: Game, rng: np.random.Generator) -> None:
    """Everything a user does with a game: views, observations, the state vector, a JSON round
    trip, a few random steps. Nothing may raise."""
    from uno_mk_env.engine.observation import encode, encode_state

    for _ in range(6):
        for seat in range(g.num_players):
            encode(g.view(seat))
        encode_state(g)
        assert Game.from_dict(json.loads(json.dumps(g.to_dict()))) == g
        if g.game_over:
            return
        ids = g.legal_action_ids()
        assert ids, "a live game with no legal action"
        g.step(ids[int(rng.integers(len(ids)))])


@pytest.mark.parametrize("seed", range(4))
def test_from_dict_fuzz_raises_state_error_or_builds_a_game_that_works(seed: int) -> None:
    """Random fields of real states (every preset's fields, nested ones too) set to garbage:
    ``from_dict`` raises StateError, or the game it builds survives views, encoders, a JSON
    round trip and play. Never a raw TypeError/ValueError/... and never a later crash."""
    from uno_mk_env import PRESETS

    rng = np.random.default_rng(seed)
    presets = list(PRESETS)
    built = rejected = 0
    for trial in range(200):
        preset = presets[trial % len(presets)]
        base = midgame(seed=trial, steps=int(rng.integers(0, 60)),
                       num_players=int(rng.integers(2, 8)), **PRESETS[preset]).to_dict()
        d = base
        for _ in range(int(rng.integers(1, 3))):
            paths = _paths(d)
            path = paths[int(rng.integers(len(paths)))]
            d = _set(d, path, GARBAGE[int(rng.integers(len(GARBAGE)))])
        try:
            g = Game.from_dict(d)
        except StateError:
            rejected += 1
            continue
        built += 1
        _exercise(g, rng)
    assert rejected > 100 and built >= 3


# ---------------------------------------------------------------------- tampered views

VIEW_GARBAGE = [None, True, -1, 0, 1, 2, 99, 2**70, 1.5, "x", b"", bytes(54), bytes([9] * 54),
                (), (0,), (1, 1, 1, 1), b"\x09" * 40]


def test_from_view_of_a_tampered_view_raises_state_error_naming_the_field() -> None:
    """``Game.from_view`` with a PlayerView whose fields were tampered with: StateError naming a
    PlayerView field, or a game that works (never a raw error, never a later crash)."""
    from uno_mk_env import PRESETS, PlayerView

    rng = np.random.default_rng(0)
    rejected = 0
    for trial in range(300):
        preset = list(PRESETS)[trial % len(PRESETS)]
        g = midgame(seed=trial, steps=int(rng.integers(0, 60)),
                    num_players=int(rng.integers(2, 8)), **PRESETS[preset])
        view = g.view(int(rng.integers(g.num_players)))
        field = PlayerView._fields[int(rng.integers(len(PlayerView._fields)))]
        if field == "legal_actions":
            continue  # not read by from_view
        bad = view._replace(**{field: VIEW_GARBAGE[int(rng.integers(len(VIEW_GARBAGE)))]})
        try:
            sample = Game.from_view(bad, rng)
        except StateError as e:
            rejected += 1
            assert "PlayerView" in str(e) or "'" in str(e), str(e)
            continue
        _exercise(sample, rng)
    assert rejected > 150


def test_from_view_of_a_view_with_one_tampered_element_raises_or_works() -> None:
    """One element of a per-seat field (a score, a hand size, an UNO flag) set to garbage: the
    whole-field test above never builds these. StateError naming the field, or a game that
    survives views, encoders and a JSON round trip (a score of 10**400 used to be accepted and
    crash the encoder; -1 or 5000 broke the round trip)."""
    from uno_mk_env.engine.rules import max_score

    rng = np.random.default_rng(1)
    rejected = 0
    for trial in range(200):
        g = midgame(seed=trial, steps=int(rng.integers(0, 60)),
                    num_players=int(rng.integers(2, 7)))
        view = g.view(int(rng.integers(g.num_players)))
        field = ("scores", "hand_sizes", "uno_called")[trial % 3]
        values = list(getattr(view, field))
        values[int(rng.integers(len(values)))] = [
            -1, 10**400, max_score(g.rules) + 1, 2**70, 1.5, None, True, "x"][trial % 8]
        try:
            sample = Game.from_view(view._replace(**{field: tuple(values)}), rng)
        except StateError as e:
            rejected += 1
            assert field in str(e), str(e)
            continue
        _exercise(sample, rng)
    assert rejected > 100


def test_from_dict_refuses_unknown_fields() -> None:
    d = midgame(seed=2, steps=5).to_dict()
    d["scroes"] = [0, 0]
    with pytest.raises(StateError, match=r"unknown field\(s\) \['scroes'\]"):
        Game.from_dict(d)
    del d["scroes"]
    with_events = midgame(seed=2, steps=5).to_dict(include_events=True)
    assert "events" in with_events and Game.from_dict(with_events) == Game.from_dict(d)


def test_from_view_rejects_hand_sizes_that_the_unseen_cards_cannot_fill() -> None:
    g = midgame(seed=3, steps=10)
    view = g.view(0)
    sizes = list(view.hand_sizes)
    sizes[1] += 200
    with pytest.raises(StateError, match="hand_sizes"):
        Game.from_view(view._replace(hand_sizes=tuple(sizes)), np.random.default_rng(0))


def test_reveals_accept_the_older_single_reveal_form() -> None:
    """State dicts of package 0.6 and earlier hold ``reveal`` (one mapping or null) instead of
    ``reveals`` (a list, one per challenger, R6.3): read as a one-entry list; both at once are
    refused."""
    d = _full()
    del d["reveals"]
    old = {**d, "reveal": {"player": 0, "to": 1, "hand": ["R1", "G5"]}}
    g = Game.from_dict(old)
    assert g.reveals == ((0, 1, tuple(sorted(g.reveals[0][2]))),)
    assert g.to_dict()["reveals"] == [{"player": 0, "to": 1, "hand": ["R1", "G5"]}]
    assert Game.from_dict({**d, "reveal": None}).reveals == ()
    assert_rejected({**old, "reveals": []}, "'reveals'", "'reveal'")


def test_num_keeps_defaults_to_zero_in_older_state_dicts() -> None:
    """``num_keeps`` (the hidden KEEPs among ``num_steps``) is new: an older dict reads as 0."""
    d = _full()
    del d["num_keeps"]
    assert Game.from_dict(d).num_keeps == 0
