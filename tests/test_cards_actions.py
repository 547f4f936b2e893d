"""Card kinds (docs/rules.md R2, docs/api.md#card-kinds), action ids
(docs/api.md#actions-and-phases) and illegal actions.

The deck table, items, codes and points are checked against docs/rules.md R2 written out here by
hand (not derived from the module under test); the action ids against the table of
docs/api.md#actions-and-phases.
An illegal action raises :class:`IllegalActionError` (a ValueError) naming the action, the phase
and the legal ids, and changes nothing.
"""

from __future__ import annotations

import numpy as np
import pytest

import uno_mk_env
from uno_mk_env import Game, IllegalActionError, Rules, cards
from uno_mk_env import actions as A

COLOUR_LETTERS = "RYGB"
RANK_CODES = "0123456789SRD"
#: docs/rules.md R2: rank code -> (copies per colour, points).
R2_COLOURED = {"0": (1, 0), **{str(i): (2, i) for i in range(1, 10)},
               "S": (2, 20), "R": (2, 20), "D": (2, 20)}
R2_ITEMS = {"R": "Mushroom", "Y": "Banana Peel", "G": "Green Shell", "B": "Lightning"}


# ------------------------------------------------------------------------------ cards
def test_deck_size_and_kinds() -> None:
    assert cards.NUM_CARDS == 112 == len(cards.DECK) == sum(cards.COPIES)
    assert cards.NUM_KINDS == 54 == len(cards.CODES) == len(set(cards.CODES))
    assert all(cards.DECK.count(k) == cards.COPIES[k] for k in range(54))


def test_kind_ids_codes_copies_points_items_follow_r2() -> None:
    """docs/api.md#card-kinds: kind = 13 * colour + rank; R2: copies, points, items."""
    for c, letter in enumerate(COLOUR_LETTERS):
        for rank, rank_code in enumerate(RANK_CODES):
            k = 13 * c + rank
            code = letter + rank_code
            copies, points = R2_COLOURED[rank_code]
            assert cards.CODES[k] == code and cards.kind(code) == k
            assert cards.COPIES[k] == copies, code
            assert cards.POINTS[k] == points, code
            assert cards.COLOUR_OF[k] == c and cards.RANK_OF[k] == rank
            assert cards.ITEM_NAMES[cards.ITEM_OF[k]] == R2_ITEMS[letter], code
    for code, k, copies in (("W4", 52, 4), ("WB", 53, 8)):
        assert cards.CODES[k] == code and cards.kind(code) == k
        assert cards.COPIES[k] == copies and cards.POINTS[k] == 50
        assert cards.COLOUR_OF[k] == -1
        assert cards.ITEM_NAMES[cards.ITEM_OF[k]] == "Bob-omb"
    assert (cards.W4, cards.WB) == (52, 53)
    assert (cards.SKIP, cards.REVERSE, cards.DRAW_TWO) == (10, 11, 12)


def test_r2_table_totals() -> None:
    def total(pred) -> int:
        return sum(n for k, n in enumerate(cards.COPIES) if pred(cards.CODES[k]))

    assert total(lambda c: c[1] == "0") == 4
    assert total(lambda c: c[0] in COLOUR_LETTERS and c[1] in "123456789") == 72
    for symbol in "SRD":
        assert total(lambda c, s=symbol: c[0] in COLOUR_LETTERS and c[1] == s) == 8
    assert total(lambda c: c == "W4") == 4 and total(lambda c: c == "WB") == 8


def test_code_examples_of_r2() -> None:
    assert [cards.kind(c) for c in ("R7", "GS", "BR", "YD", "W4", "WB", "R0", "B9")] == [
        7, 36, 50, 25, 52, 53, 0, 48]


def test_code_round_trip_for_all_54() -> None:
    for k in range(54):
        assert cards.kind(cards.code(k)) == k
    assert cards.kinds(cards.codes(range(54))) == list(range(54))
    assert cards.codes(cards.kinds(["WB", "R1", "R1"])) == ["WB", "R1", "R1"]
    counts = [0] * 54
    counts[cards.kind("G5")] = 2
    counts[cards.WB] = 1
    assert cards.counts_to_codes(counts) == ["G5", "G5", "WB"]


@pytest.mark.parametrize("bad", ["X7", "R10", "r7", "W", "W2", "WD4", "", " R7", "7R", None, 7])
def test_unknown_code_error_names_the_code_and_the_forms(bad: object) -> None:
    with pytest.raises(ValueError) as info:
        cards.kind(bad)  # type: ignore[arg-type]
    message = str(info.value)
    assert repr(bad) in message
    assert "R/Y/G/B" in message and "W4" in message and "WB" in message


def test_colour_letters() -> None:
    assert [cards.colour(c) for c in COLOUR_LETTERS] == [0, 1, 2, 3]
    assert cards.COLOURS == tuple(COLOUR_LETTERS)
    for bad in ("r", "P", "", "Red"):
        with pytest.raises(ValueError, match=repr(bad)):
            cards.colour(bad)


def test_hand_points_example_of_r10_2() -> None:
    """R10.2: 1+3+4+8+9 + Skip + Reverse + Draw Two + W4 = 25 + 60 + 50 = 135."""
    hand = [0] * 54
    for code in ("R1", "Y3", "G4", "B8", "R9", "YS", "GR", "BD", "W4"):
        hand[cards.kind(code)] += 1
    assert cards.hand_points(hand) == 135
    assert cards.hand_points(cards.COPIES) == sum(
        n * p for n, p in zip(cards.COPIES, cards.POINTS))


# ------------------------------------------------------------------------------ action ids
def test_action_ids_are_the_design_table() -> None:
    """docs/api.md#actions-and-phases."""
    assert [A.play(k) for k in range(54)] == list(range(54)) and A.PLAY_BASE == 0
    assert A.DRAW == 54 and A.KEEP == 55
    assert A.COLOUR_BASE == 56 and [A.choose_colour(c) for c in range(4)] == [56, 57, 58, 59]
    assert A.TARGET_BASE == 60 and [A.target(k) for k in range(1, 10)] == list(range(60, 69))
    assert A.CHALLENGE == 69 and A.ACCEPT == 70
    assert A.CALL_UNO == 71 and A.CATCH_UNO == 72
    assert A.NUM_ACTIONS == 73


def test_action_names() -> None:
    names = A.ACTION_NAMES
    assert len(names) == 73 == len(set(names))
    assert names[7] == "PLAY(R7)" and names[52] == "PLAY(W4)" and names[53] == "PLAY(WB)"
    assert names[54:60] == ("DRAW", "KEEP", "COLOUR(R)", "COLOUR(Y)", "COLOUR(G)", "COLOUR(B)")
    assert names[60] == "TARGET(+1)" and names[68] == "TARGET(+9)"
    assert names[69:] == ("CHALLENGE", "ACCEPT", "CALL_UNO", "CATCH_UNO")
    assert all(A.action_name(a) == names[a] for a in range(73))


def test_phase_names() -> None:
    assert A.PHASE_NAMES[:5] == ("play", "play_drawn", "choose_colour", "choose_target",
                                 "challenge")


@pytest.mark.parametrize("n", [2, 3, 10])
def test_mask_has_73_entries_for_every_table(n: int) -> None:
    g = Game(Rules(num_players=n), seed=n)
    mask = g.legal_actions()
    assert mask.shape == (73,) and mask.dtype == np.bool_


def test_target_offsets_are_clockwise_whatever_the_direction() -> None:
    """docs/api.md#actions-and-phases: TARGET(+k) is the opponent k seats clockwise from the
    chooser (R7.2)."""
    for direction in (1, -1):
        for k in (1, 2, 3):
            d = {"rules": {"num_players": 4}, "hands": [["R1"], ["R2"], ["R3"], ["R4"]],
                 "draw_pile": ["B1", "B2"], "discard_pile": ["WB", "G5"], "active_colour": "G",
                 "current_player": 0, "direction": direction, "phase": "choose_target"}
            g = Game.from_dict(d)
            assert g.legal_action_ids() == (60, 61, 62)
            g.step(A.target(k))
            sizes = [sum(g.hand(s)) for s in range(4)]
            assert sizes == [1 + (s == k) for s in range(4)]


# ------------------------------------------------------------------------------ illegal actions
def test_illegal_action_error_is_a_value_error() -> None:
    assert issubclass(IllegalActionError, ValueError)
    assert uno_mk_env.IllegalActionError is IllegalActionError


POSITIONS = {
    "play": {},
    "play_drawn": {"hands": [["R7", "Y5"], ["G2"], ["B9"]], "phase": "play_drawn",
                   "drawn_card": "R7"},
    "choose_colour": {"discard_pile": ["Y5", "W4"], "phase": "choose_colour",
                      "colour_context": "w4",
                      "w4": {"player": 0, "previous_colour": "R", "illegal": True}},
    "challenge": {"discard_pile": ["Y5", "W4"], "phase": "challenge", "current_player": 1,
                  "w4": {"player": 0, "previous_colour": "R", "illegal": True}},
    "choose_target": {"discard_pile": ["WB", "G5"], "active_colour": "G",
                      "phase": "choose_target"},
}


def position(phase: str) -> Game:
    d = {"rules": {"num_players": 3}, "hands": [["R7", "W4"], ["G2", "GS"], ["B9"]],
         "draw_pile": ["B3", "Y7"], "discard_pile": ["Y5", "R5"], "active_colour": "R",
         "current_player": 0, "direction": 1}
    d.update(POSITIONS[phase])
    g = Game.from_dict(d, seed=1)
    assert g.phase_name == phase
    return g


@pytest.mark.parametrize("phase", list(POSITIONS))
def test_illegal_action_message_names_action_phase_and_legal_ids(phase: str) -> None:
    g = position(phase)
    legal = g.legal_action_ids()
    for a in (a for a in range(73) if a not in legal):
        before = g.to_dict()
        with pytest.raises(IllegalActionError) as info:
            g.step(a)
        message = str(info.value)
        assert str(a) in message and A.ACTION_NAMES[a] in message
        assert f"'{phase}'" in message
        assert str(list(legal)) in message
        assert g.to_dict() == before


def test_illegal_steps_change_nothing_in_random_games() -> None:
    """Every illegal id, out-of-range id and non-int at ~150 random states: an error, and
    to_dict() (RNG included), the event log and the legal ids are as before."""
    junk = [-1, 73, 10**9, -(10**9), 1.0, 54.0, np.float64(54), "54", "DRAW", None, [54], (54,)]
    states = 0
    for seed in range(10):
        g = Game(Rules(num_players=2 + seed % 9), seed=seed)
        rng = np.random.default_rng(seed)
        for _ in range(15):
            if g.game_over:
                break
            legal = g.legal_action_ids()
            before, n_events = g.to_dict(), len(g.events)
            for a in [*(a for a in range(73) if a not in legal), *junk]:
                with pytest.raises(IllegalActionError):
                    g.step(a)
                assert g.legal_action_ids() == legal
            assert g.to_dict() == before and len(g.events) == n_events
            states += 1
            for _ in range(int(rng.integers(1, 30))):
                if g.game_over:
                    break
                ids = g.legal_action_ids()
                g.step(ids[int(rng.integers(len(ids)))])
    assert states >= 100


def test_numpy_integer_actions_are_accepted() -> None:
    """Agents hand out numpy integers (argmax, Generator.choice)."""
    for dtype in (np.int64, np.int32, np.int8, np.uint8):
        g = position("play")
        g.step(dtype(A.DRAW))
        assert g.hand(0)[cards.kind("B3")] == 1


def test_no_action_is_legal_once_the_game_is_over() -> None:
    g = position("play")
    g.step(A.CALL_UNO)
    g.step(A.play(cards.kind("R7")))
    g.step(A.DRAW)  # seat 1: B3, not playable
    g.step(A.DRAW)  # seat 2: Y7, playable on R7
    g.step(A.KEEP)
    g.step(A.play(cards.W4))  # the last card: game over (single round)
    assert g.game_over and g.legal_action_ids() == () and not g.legal_actions().any()
    before = g.to_dict()
    for a in (0, A.DRAW, A.KEEP, 72):
        with pytest.raises(IllegalActionError, match="over"):
            g.step(a)
    assert g.to_dict() == before
