"""Scenario tests for the Wild Item Box and the items (docs/rules.md R7).

In most scenarios seat 0 plays a WB and ``flip`` is the top card of the draw pile.
"""

from __future__ import annotations

import pytest
from scenario import (
    cards,
    colour,
    discard_pile,
    do,
    draw_pile,
    events_of,
    hand_codes,
    legal_names,
    make,
    top,
)

from uno_mk_env import actions as A
from uno_mk_env.engine.cards import (
    BANANA,
    BOB_OMB,
    CODES,
    COPIES,
    DECK,
    GREEN_SHELL,
    LIGHTNING,
    MUSHROOM,
    kind,
)
from uno_mk_env.errors import StateError

HANDS4 = ["WB G5 B3 Y1", "G1 B1 Y3", "B2 Y4 G8", "R4 G2 B6"]
REST = "Y5 Y6 Y7 Y8 B7 B8"
COLOURS = {"COLOUR(R)", "COLOUR(Y)", "COLOUR(G)", "COLOUR(B)"}


def item_box(flip: str, hands=None, rules: dict | None = None, **extra):
    """A position where seat 0 plays a WB onto R7 and ``flip`` is turned up."""
    hands = hands or HANDS4
    g = make({"rules": {"num_players": len(hands), **(rules or {})}, "hands": hands,
              "discard_pile": "R7", "draw_pile": f"{flip} {REST}", **extra})
    do(g, "PLAY(WB)")
    assert events_of(g, "flip") == [("flip", 0, kind(flip))]
    return g


def item_events(g):
    return [e[2] for e in events_of(g, "item")]


# ----------------------------------------------------------------------- R7.1 the flip


def test_r7_1_flipped_card_becomes_the_top_card_to_match():
    """R7.1: F goes onto the discard pile and is the card to match (colour, number, symbol)."""
    g = item_box("Y1")  # Banana Peel: seat 3 draws 2; then seat 1 plays on Y1
    assert discard_pile(g) == ["R7", "WB", "Y1"]
    assert (top(g), colour(g), g.current_player) == ("Y1", "Y", 1)
    assert legal_names(g) == {"PLAY(G1)", "PLAY(B1)", "PLAY(Y3)", "DRAW"}
    assert draw_pile(g) == REST.split()[2:]


def test_r7_1_flipped_skip_does_not_skip():
    """R7.1: a flipped Skip only gives its item (Mushroom); after P's extra turn the next
    player is not skipped."""
    g = item_box("RS")
    assert item_events(g) == [MUSHROOM]
    assert (g.current_player, g.phase_name, top(g), colour(g)) == (0, "play", "RS", "R")
    assert legal_names(g) == {"DRAW"}  # G5 B3 Y1 match neither red nor Skip
    do(g, "DRAW")  # draws an unplayable Y5
    assert g.current_player == 1


def test_r7_1_flipped_draw_two_makes_nobody_draw_two():
    """R7.1: a flipped Draw Two only gives its item (Banana: seat 3 draws 2); the next player
    neither draws nor is skipped."""
    g = item_box("YD")
    assert item_events(g) == [BANANA]
    assert hand_codes(g, 1) == cards("G1 B1 Y3")
    assert hand_codes(g, 3) == cards("R4 G2 B6 Y5 Y6")
    assert (g.current_player, top(g), colour(g)) == (1, "YD", "Y")
    assert legal_names(g) == {"PLAY(Y3)", "DRAW"}


def test_r7_1_flipped_reverse_does_not_reverse():
    """R7.1: a flipped Reverse only gives its item (Green Shell); the direction stays."""
    g = item_box("GR")
    assert item_events(g) == [GREEN_SHELL]
    assert (g.current_player, g.phase_name) == (0, "choose_target")
    do(g, "TARGET(+2)")
    assert (g.direction, g.current_player, top(g), colour(g)) == (1, 1, "GR", "G")


def test_r7_1_flipped_w4_gives_bob_omb_and_no_draw_four():
    """R7.1 / R7.2: a flipped W4 is a Bob-omb: P draws 2 and names its colour; nobody draws 4
    and there is no challenge."""
    g = item_box("W4")
    assert item_events(g) == [BOB_OMB]
    assert hand_codes(g, 0) == cards("G5 B3 Y1 Y5 Y6")
    assert (g.current_player, g.phase_name, top(g)) == (0, "choose_colour", "W4")
    assert g.legal_action_ids() == (56, 57, 58, 59)
    do(g, "COLOUR(B)")
    assert (g.current_player, g.phase_name, colour(g)) == (1, "play", "B")
    assert hand_codes(g, 1) == cards("G1 B1 Y3")
    assert legal_names(g) == {"PLAY(B1)", "DRAW"}


def test_r7_1_flipped_item_box_gives_bob_omb_and_no_second_flip():
    """R7.1: a flipped WB does not flip again; it is a Bob-omb (P draws 2, names the colour)."""
    g = item_box("WB")
    assert len(events_of(g, "flip")) == 1
    assert item_events(g) == [BOB_OMB]
    assert discard_pile(g) == ["R7", "WB", "WB"]
    assert hand_codes(g, 0) == cards("G5 B3 Y1 Y5 Y6")
    assert legal_names(g) == COLOURS
    do(g, "COLOUR(Y)")
    assert (g.current_player, colour(g), top(g)) == (1, "Y", "WB")
    assert legal_names(g) == {"PLAY(Y3)", "DRAW"}


# ----------------------------------------------------------------------- R7.2 the items


def test_r7_2_mushroom_gives_another_full_turn():
    """R7.2 Mushroom: P immediately takes another full turn against F."""
    g = item_box("R5")
    assert item_events(g) == [MUSHROOM]
    assert (g.current_player, g.phase_name, top(g), colour(g)) == (0, "play", "R5", "R")
    assert legal_names(g) == {"PLAY(G5)", "DRAW"}
    do(g, "PLAY(G5)")
    assert (g.current_player, colour(g)) == (1, "G")
    assert [len(h) for h in (hand_codes(g, s) for s in range(4))] == [2, 3, 3, 3]


def test_r7_2_banana_hits_the_previous_seat():
    """R7.2 Banana Peel: the seat just before P draws 2; play passes on from P."""
    g = item_box("Y2")
    assert item_events(g) == [BANANA]
    assert hand_codes(g, 3) == cards("R4 G2 B6 Y5 Y6")
    assert [hand_codes(g, s) for s in (1, 2)] == [cards("G1 B1 Y3"), cards("B2 Y4 G8")]
    assert g.current_player == 1


def test_r7_2_banana_counter_clockwise_hits_the_seat_on_the_left():
    """R7.2: with direction -1 the seat just before P is P+1; play passes on to P-1."""
    g = item_box("Y2", direction=-1)
    assert hand_codes(g, 1) == cards("G1 B1 Y3 Y5 Y6")
    assert hand_codes(g, 3) == cards("R4 G2 B6")
    assert (g.current_player, g.direction) == (3, -1)


def _skip_then_item_box(banana_target: str):
    """Seat 3 plays a Skip (seat 0 skipped); seat 1 then plays a WB that flips Y2."""
    g = make({"rules": {"num_players": 4, "banana_target": banana_target},
              "hands": ["G5 B3 Y1", "WB G1 B1", "B2 Y4 G8", "RS G2 B6"],
              "discard_pile": "R7", "draw_pile": "Y2 Y5 Y6 Y7", "current_player": 3})
    do(g, "PLAY(RS)")
    assert g.current_player == 1
    do(g, "PLAY(WB)")
    assert item_events(g) == [BANANA]
    return g


def test_r7_2_banana_hits_previous_seat_even_if_skipped():
    """R7.2 (banana_target="previous_seat"): the seat before P draws 2 even though it was
    skipped last turn."""
    g = _skip_then_item_box("previous_seat")
    assert hand_codes(g, 0) == cards("G5 B3 Y1 Y5 Y6")
    assert hand_codes(g, 3) == cards("G2 B6")
    assert g.current_player == 2


def test_r7_2_banana_last_player_option_hits_the_player_before_p():
    """R7.2 option banana_target="last_player": the last other seat who took a turn before P
    (the Skip player) draws 2; the skipped seat does not."""
    g = _skip_then_item_box("last_player")
    assert hand_codes(g, 3) == cards("G2 B6 Y5 Y6")
    assert hand_codes(g, 0) == cards("G5 B3 Y1")
    assert g.current_player == 2


def test_r7_2_banana_last_player_option_equals_previous_seat_without_skips():
    """R7.2 option banana_target="last_player": in plain clockwise play it is the seat before."""
    g = make({"rules": {"num_players": 3, "banana_target": "last_player"},
              "hands": ["R3 G5 B3", "WB G1 B1", "B2 Y4 G8"],
              "discard_pile": "R7", "draw_pile": "Y2 Y5 Y6 Y7"})
    do(g, "PLAY(R3)", "PLAY(WB)")
    assert hand_codes(g, 0) == cards("G5 B3 Y5 Y6")
    assert g.current_player == 2


def test_r7_2_green_shell_two_players_only_target_plus_one():
    """R7.2 Green Shell, 2 players: the only opponent (TARGET(+1)) draws 1."""
    g = item_box("G3", hands=["WB G5 B3 Y1", "G1 B1 Y3"])
    assert item_events(g) == [GREEN_SHELL]
    assert (g.current_player, g.phase_name) == (0, "choose_target")
    assert legal_names(g) == {"TARGET(+1)"}
    do(g, "TARGET(+1)")
    assert hand_codes(g, 1) == cards("G1 B1 Y3 Y5")
    assert (g.current_player, g.phase_name, top(g)) == (1, "play", "G3")
    assert legal_names(g) == {"PLAY(G1)", "PLAY(Y3)", "DRAW"}


def test_r7_2_green_shell_ten_players_any_opponent_plus_nine_is_counter_clockwise():
    """R7.2 Green Shell, 10 players: TARGET(+1..+9) are legal; +9 hits the seat just
    counter-clockwise of P; play passes on from P."""
    hands = ["WB G5 B3 Y1", *"R1 Y2 B3 R4 Y5 B6 R7 Y8 B9".split()]
    g = item_box("G3", hands=hands)
    assert legal_names(g) == {f"TARGET(+{k})" for k in range(1, 10)}
    do(g, "TARGET(+9)")
    assert hand_codes(g, 9) == cards("B9 Y5")
    assert all(len(hand_codes(g, s)) == 1 for s in range(1, 9))
    assert ("target", 0, 9) in g.events
    assert (g.current_player, g.phase_name) == (1, "play")


def test_r7_2_green_shell_target_is_clockwise_regardless_of_direction():
    """R7.2 / docs/api.md#actions-and-phases: TARGET(+k) counts seats clockwise even when play runs
    counter-clockwise."""
    g = item_box("G3", direction=-1)
    do(g, "TARGET(+1)")
    assert hand_codes(g, 1) == cards("G1 B1 Y3 Y5")
    assert g.current_player == 3


@pytest.mark.parametrize("n_draw", [1, 2])
def test_r7_2_lightning_every_other_player_draws_then_extra_turn(n_draw):
    """R7.2 Lightning: every other player draws lightning_draw (in turn order from P), then P
    takes another full turn."""
    g = item_box("B4", rules={"lightning_draw": n_draw})
    assert item_events(g) == [LIGHTNING]
    rest = REST.split()
    got = {e[1]: e[2] for e in events_of(g, "draw") if e[3] == "lightning"}
    assert [e[1] for e in events_of(g, "draw") if e[3] == "lightning"] == [1, 2, 3]
    assert [len(got[s]) for s in (1, 2, 3)] == [n_draw] * 3
    assert hand_codes(g, 1) == cards(["G1", "B1", "Y3", *rest[:n_draw]])
    assert hand_codes(g, 3) == cards(["R4", "G2", "B6", *rest[2 * n_draw:3 * n_draw]])
    assert hand_codes(g, 0) == cards("G5 B3 Y1")
    assert (g.current_player, g.phase_name, top(g), colour(g)) == (0, "play", "B4", "B")
    assert legal_names(g) == {"PLAY(B3)", "DRAW"}


def test_r7_2_lightning_turn_order_counter_clockwise():
    """R7.2 Lightning: with direction -1 the draws go P-1, P-2, ..."""
    g = item_box("B4", direction=-1)
    assert [e[1] for e in events_of(g, "draw") if e[3] == "lightning"] == [3, 2, 1]
    assert g.current_player == 0


def test_r7_2_bob_omb_draw_two_then_name_colour_then_play_passes_on():
    """R7.2 Bob-omb: P draws 2, then names the colour of F (mask exactly 56-59); play passes
    on from P and the next player must match the named colour."""
    g = item_box("W4")
    assert [e[1:] for e in events_of(g, "draw")] == [(0, (kind("Y5"), kind("Y6")), "bob_omb")]
    assert g.legal_action_ids() == tuple(range(A.COLOUR_BASE, A.COLOUR_BASE + 4))
    assert g.to_dict()["colour_context"] == "bob_omb"
    do(g, "COLOUR(G)")
    assert (g.current_player, colour(g), top(g)) == (1, "G", "W4")
    assert legal_names(g) == {"PLAY(G1)", "DRAW"}


# ---------------------------------------------------------- R7.3 always something to flip


def test_r7_3_card_under_the_item_box_is_reshuffled_and_flipped():
    """R7.3 / R9: with an empty draw pile the card under the WB is reshuffled into the draw
    pile and flipped; the WB stays on the discard pile."""
    g = make({"rules": {"num_players": 3}, "hands": ["WB G5 B3", "G1 B1 Y3", "B2 Y4 G8"],
              "discard_pile": "R7", "draw_pile": ""})
    do(g, "PLAY(WB)")
    assert events_of(g, "reshuffle") == [("reshuffle", 1)]
    assert discard_pile(g) == ["WB", "R7"]
    assert draw_pile(g) == []
    assert item_events(g) == [MUSHROOM]
    assert (g.current_player, top(g), colour(g)) == (0, "R7", "R")


def test_r7_3_nothing_to_flip_cannot_occur_and_a_position_claiming_it_is_refused():
    """R7.3: there is always a card to flip (the discard pile holds a card under the WB), so a
    colour choice "because nothing could be flipped" is no position of a real game."""
    with pytest.raises(StateError, match="colour_context"):
        make({"rules": {"num_players": 3}, "hands": ["G5 B3", "G1 B1 Y3", "B2 Y4 G8"],
              "discard_pile": "R7 WB", "active_colour": "R", "phase": "choose_colour",
              "colour_context": "no_flip"})


def test_r7_3_the_last_card_under_the_item_box_is_flipped_with_every_other_card_held():
    """R7.3: the tightest case: all 112 cards are in the hands but for the start card and the
    WB played on it; the start card is reshuffled into the draw pile and flipped."""
    rest = list(DECK)
    for code in ("R7", "WB", "R5"):
        rest.remove(kind(code))
    hand0 = [kind("WB"), kind("R5")]
    others = [rest[i::2] for i in range(2)]
    g = make({"rules": {"num_players": 3}, "discard_pile": "R7", "draw_pile": "",
              "hands": [[CODES[k] for k in h] for h in (hand0, *others)]})
    assert sum(len(hand_codes(g, s)) for s in range(3)) == sum(COPIES) - 1
    do(g, "PLAY(WB)")
    assert events_of(g, "flip") == [("flip", 0, kind("R7"))] and item_events(g) == [MUSHROOM]


# ----------------------------------------------------------------- R7.4 WB as the last card


def last_item_box(flip: str, option: str | None = None, **extra):
    rules = {"num_players": 4} if option is None else {"num_players": 4, "last_item_box": option}
    g = make({"rules": rules, "hands": ["WB", "G1 B1 Y3", "B2 Y4 G8", "R4 G2 B6"],
              "discard_pile": "R7", "draw_pile": f"{flip} {REST}",
              "uno_called": [True, False, False, False], **extra})
    do(g, "PLAY(WB)")
    return g


def test_r7_4_others_only_banana_draws_then_round_scores():
    """R7.4 (default others_only): P is out; the Banana's draw on the previous seat happens
    before scoring."""
    g = last_item_box("Y2")
    assert g.game_over and g.winner == 0
    assert hand_codes(g, 3) == cards("R4 G2 B6 Y5 Y6")
    assert g.scores == [5 + 14 + (12 + 11), 0, 0, 0]  # seat 3 + Y5 Y6


def test_r7_4_others_only_lightning_draws_then_round_scores():
    """R7.4 (others_only): Lightning's draws on every opponent count; no extra turn."""
    g = last_item_box("B9")
    assert g.game_over and g.winner == 0
    assert [len(hand_codes(g, s)) for s in range(4)] == [0, 4, 4, 4]
    assert g.scores == [(5 + 5) + (14 + 6) + (12 + 7), 0, 0, 0]  # + Y5, Y6, Y7


def test_r7_4_others_only_green_shell_target_draws_then_round_scores():
    """R7.4 (others_only): P still aims the Green Shell; the target draws, then scoring."""
    g = last_item_box("G3")
    assert (g.current_player, g.phase_name, g.game_over) == (0, "choose_target", False)
    assert legal_names(g) == {"TARGET(+1)", "TARGET(+2)", "TARGET(+3)"}
    do(g, "TARGET(+2)")
    assert g.game_over and g.winner == 0
    assert hand_codes(g, 2) == cards("B2 Y4 G8 Y5")
    assert g.scores == [5 + 19 + 12, 0, 0, 0]


@pytest.mark.parametrize("flip", ["R5", "W4", "WB"])
def test_r7_4_others_only_effects_on_p_are_dropped(flip):
    """R7.4 (others_only): Mushroom's extra turn and Bob-omb's draw and colour are dropped."""
    g = last_item_box(flip)
    assert g.game_over and g.winner == 0
    assert hand_codes(g, 0) == []
    assert not events_of(g, "colour")
    assert g.scores == [5 + 14 + 12, 0, 0, 0]
    assert draw_pile(g) == REST.split()


def test_r7_4_full_bob_omb_puts_p_back_in_the_round():
    """R7.4 option last_item_box="full": the Bob-omb resolves: P draws 2, names the colour and
    the round goes on."""
    g = last_item_box("W4", "full")
    assert not g.round_over and not g.game_over
    assert hand_codes(g, 0) == cards("Y5 Y6")
    assert (g.current_player, g.phase_name) == (0, "choose_colour")
    do(g, "COLOUR(G)")
    assert (g.current_player, colour(g), g.game_over) == (1, "G", False)
    assert legal_names(g) == {"PLAY(G1)", "DRAW"}


def test_r7_4_full_banana_draw_then_round_ends():
    """R7.4 option last_item_box="full": items with no effect on P end the round as usual."""
    g = last_item_box("Y2", "full")
    assert g.game_over and g.winner == 0
    assert hand_codes(g, 3) == cards("R4 G2 B6 Y5 Y6")


def test_r7_4_none_skips_the_flip():
    """R7.4 option last_item_box="none": no flip, no item; the round ends at once."""
    g = last_item_box("Y2", "none")
    assert g.game_over and g.winner == 0
    assert not events_of(g, "flip") and not events_of(g, "item")
    assert discard_pile(g) == ["R7", "WB"]
    assert draw_pile(g) == ["Y2", *REST.split()]
    assert g.scores == [5 + 14 + 12, 0, 0, 0]


def test_r7_3_a_view_claiming_nothing_to_flip_is_refused_by_from_view():
    """R7.3: ``Game.from_view`` refuses a (tampered) view whose colour choice is "nothing to
    flip", naming the field."""
    import numpy as np

    from uno_mk_env import Game
    from uno_mk_env.engine.phases import COLOUR_NO_FLIP

    g = make({"rules": {"num_players": 3}, "hands": ["W4 G5 B3", "G1 B1 Y3", "B2 Y4 G8"],
              "discard_pile": "R7", "draw_pile": REST})
    do(g, "PLAY(W4)")
    view = g.view(1)._replace(colour_context=COLOUR_NO_FLIP)
    with pytest.raises(StateError, match="colour_context"):
        Game.from_view(view, np.random.default_rng(0))
