"""Scenario tests for the Wild Draw Four (docs/rules.md R6): legality, bluffing, the challenge."""

from __future__ import annotations

import pytest
from scenario import cards, colour, do, hand_codes, legal_names, make, top

from uno_mk_env.engine.cards import counts_to_codes

COLOURS = {"COLOUR(R)", "COLOUR(Y)", "COLOUR(G)", "COLOUR(B)"}
PILE = "Y5 Y6 Y7 Y8 B7 B8 G9 B9 R9 Y9"


def w4_position(hand0: str, rules: dict | None = None, **extra) -> dict:
    """Three players, R7 on top, seat 0 to play ``hand0``; seat 1 would be hit by a W4."""
    return {"rules": {"num_players": 3, **(rules or {})},
            "hands": [hand0, "G1 B1 Y3", "B2 Y4 G8"], "discard_pile": "R7", "draw_pile": PILE,
            **extra}


def play_w4(g, named="G"):
    do(g, "PLAY(W4)")
    assert (g.current_player, g.phase_name) == (0, "choose_colour")
    assert legal_names(g) == COLOURS
    do(g, f"COLOUR({named})")
    return g


# ----------------------------------------------------------------------------------- R6.2


def test_r6_2_bluff_is_allowed_by_default_and_the_next_player_decides():
    """R6.2: by default a W4 may be played while holding the active colour; the next player
    then decides between CHALLENGE and ACCEPT."""
    g = make(w4_position("W4 R2 G5"))
    assert legal_names(g) == {"PLAY(W4)", "PLAY(R2)", "DRAW"}
    play_w4(g)
    assert (g.current_player, g.phase_name, colour(g), top(g)) == (1, "challenge", "G", "W4")
    assert legal_names(g) == {"CHALLENGE", "ACCEPT"}


def test_r6_2_strict_masks_an_illegal_w4():
    """R6.2 option w4_strict=True: a W4 held with a card of the active colour is not legal."""
    g = make(w4_position("W4 R2 G5", {"w4_strict": True}))
    assert legal_names(g) == {"PLAY(R2)", "DRAW"}


def test_r6_2_strict_allows_a_legal_w4_and_removes_the_challenge():
    """R6.2 option w4_strict=True: a legal W4 hits at once, with no challenge decision."""
    g = make(w4_position("W4 G5 B3", {"w4_strict": True}))
    assert legal_names(g) == {"PLAY(W4)", "DRAW"}
    play_w4(g, "B")
    assert hand_codes(g, 1) == cards("G1 B1 Y3 Y5 Y6 Y7 Y8")
    assert (g.current_player, g.phase_name, colour(g)) == (2, "play", "B")
    assert legal_names(g) == {"PLAY(B2)", "DRAW"}


def test_r5_r6_3_accept_draws_four_and_loses_the_turn():
    """R5 / R6.3: ACCEPT: the next player draws 4 and loses the turn; the named colour holds."""
    g = play_w4(make(w4_position("W4 R2 G5")), "B")
    do(g, "ACCEPT")
    assert hand_codes(g, 1) == cards("G1 B1 Y3 Y5 Y6 Y7 Y8")
    assert hand_codes(g, 0) == cards("R2 G5")
    assert (g.current_player, g.phase_name, colour(g), top(g)) == (2, "play", "B", "W4")
    assert legal_names(g) == {"PLAY(B2)", "DRAW"}


# ----------------------------------------------------------------------------------- R6.3


def test_r6_3_challenge_of_an_illegal_w4_w4_player_draws_four():
    """R6.3: the W4 was illegal (red held on red): the W4 player draws 4; the challenger draws
    nothing and plays normally against the named colour."""
    g = play_w4(make(w4_position("W4 R2 G5")), "G")
    do(g, "CHALLENGE")
    assert hand_codes(g, 0) == cards("R2 G5 Y5 Y6 Y7 Y8")
    assert hand_codes(g, 1) == cards("G1 B1 Y3")
    assert (g.current_player, g.phase_name, colour(g), top(g)) == (1, "play", "G", "W4")
    assert legal_names(g) == {"PLAY(G1)", "DRAW"}
    do(g, "PLAY(G1)")
    assert g.current_player == 2


def test_r6_3_challenge_of_a_legal_w4_challenger_draws_six_and_loses_turn():
    """R6.3: the W4 was legal (no red held): the challenger draws 6 and loses the turn."""
    g = play_w4(make(w4_position("W4 G5 B3")), "Y")
    do(g, "CHALLENGE")
    assert hand_codes(g, 1) == cards("G1 B1 Y3 Y5 Y6 Y7 Y8 B7 B8")
    assert hand_codes(g, 0) == cards("G5 B3")
    assert (g.current_player, g.phase_name, colour(g)) == (2, "play", "Y")
    assert legal_names(g) == {"PLAY(Y4)", "DRAW"}


@pytest.mark.parametrize("hand0, illegal", [("W4 R2 G5", True), ("W4 G5 B3", False)])
def test_r6_3_revealed_hand_is_shown_to_the_challenger_only(hand0, illegal):
    """R6.3: after a challenge the W4 player's hand is shown to the challenger only."""
    g = play_w4(make(w4_position(hand0)))
    assert all(g.view(s).revealed_hand is None for s in range(3))
    do(g, "CHALLENGE")
    shown = g.view(1).revealed_hand
    assert shown is not None and g.view(1).revealed_by == 0
    assert cards(counts_to_codes(shown)) == cards(hand0.replace("W4", ""))
    assert g.view(0).revealed_hand is None
    assert g.view(2).revealed_hand is None
    assert ("challenge", 1, 0, illegal) in g.events


def test_r6_3_challenge_with_direction_minus_one_hits_the_previous_seat():
    """R6.3 / R1: counter-clockwise, the player hit by the W4 (and who decides) is seat -1."""
    g = make(w4_position("W4 G5 B3", direction=-1))
    play_w4(g, "B")
    assert (g.current_player, g.phase_name) == (2, "challenge")
    do(g, "CHALLENGE")
    assert hand_codes(g, 2) == cards("B2 Y4 G8 Y5 Y6 Y7 Y8 B7 B8")
    assert (g.current_player, g.phase_name) == (1, "play")


# ----------------------------------------------------------------------------------- R6.1


def test_r6_1_held_item_box_counts_as_colour_match():
    """R6.1: a held WB counts as a colour match, so W4 with WB (and no red) is illegal."""
    g = play_w4(make(w4_position("W4 WB G5")))
    do(g, "CHALLENGE")
    assert hand_codes(g, 0) == cards("WB G5 Y5 Y6 Y7 Y8")
    assert (g.current_player, g.phase_name) == (1, "play")


def test_r6_1_held_item_box_does_not_count_with_option_off():
    """R6.1 option item_box_counts_for_w4=False: W4 with WB (and no red) is legal."""
    g = play_w4(make(w4_position("W4 WB G5", {"item_box_counts_for_w4": False})))
    do(g, "CHALLENGE")
    assert hand_codes(g, 0) == cards("WB G5")
    assert len(hand_codes(g, 1)) == 3 + 6
    assert g.current_player == 2


@pytest.mark.parametrize("counts, w4_legal", [(True, False), (False, True)])
def test_r6_1_r6_2_strict_mask_follows_item_box_option(counts, w4_legal):
    """R6.1 + R6.2: under w4_strict the held WB masks the W4 unless item_box_counts_for_w4 is
    off."""
    g = make(w4_position("W4 WB G5", {"w4_strict": True, "item_box_counts_for_w4": counts}))
    expected = {"PLAY(WB)", "DRAW"} | ({"PLAY(W4)"} if w4_legal else set())
    assert legal_names(g) == expected


def test_r6_1_number_match_in_another_colour_does_not_count():
    """R6.1: a G7 on R7 matches by number but is not of the active colour: the W4 is legal."""
    g = make(w4_position("W4 G7 BS"))
    assert legal_names(g) == {"PLAY(W4)", "PLAY(G7)", "DRAW"}
    play_w4(g)
    do(g, "CHALLENGE")
    assert len(hand_codes(g, 1)) == 3 + 6
    assert hand_codes(g, 0) == cards("G7 BS")


def test_r6_1_strict_allows_w4_despite_a_number_match():
    """R6.1 + R6.2: under w4_strict a number/symbol match in another colour keeps W4 legal."""
    g = make(w4_position("W4 G7 BS", {"w4_strict": True}))
    assert legal_names(g) == {"PLAY(W4)", "PLAY(G7)", "DRAW"}


def test_r6_1_legality_uses_the_named_colour_under_a_wild():
    """R6.1: with a wild on top the active colour is the named one (here Y)."""
    g = make({"rules": {"num_players": 3}, "hands": ["W4 Y2 R5", "G1 B1 Y3", "B2 Y4 G8"],
              "discard_pile": "R7 W4", "active_colour": "Y", "draw_pile": PILE})
    play_w4(g, "R")
    do(g, "CHALLENGE")
    assert hand_codes(g, 0) == cards("Y2 R5 Y5 Y6 Y7 Y8")


def test_r6_1_a_just_drawn_w4_is_judged_on_the_hand_when_played():
    """R6.1: the hand at the moment of play counts: a drawn W4 played while red is held is
    illegal."""
    g = make(w4_position("R2 G5 B3", draw_pile="W4 " + PILE))
    do(g, "DRAW")
    assert (g.phase_name, legal_names(g)) == ("play_drawn", {"PLAY(W4)", "KEEP"})
    play_w4(g)
    do(g, "CHALLENGE")
    assert hand_codes(g, 0) == cards("R2 G5 B3 Y5 Y6 Y7 Y8")


def test_r6_1_a_just_drawn_red_card_makes_a_held_w4_illegal():
    """R6.1: a card just drawn is part of the hand: after drawing (and keeping) R3 the held W4
    is masked under w4_strict."""
    g = make({"rules": {"num_players": 2, "w4_strict": True}, "hands": ["W4 G5 B3", "G1 B1 Y3"],
              "discard_pile": "R7", "draw_pile": "R3 G9"})
    assert "PLAY(W4)" in legal_names(g)
    do(g, "DRAW")
    assert legal_names(g) == {"PLAY(R3)", "KEEP"}
    do(g, "KEEP", "DRAW")  # seat 1 draws an unplayable G9
    assert g.current_player == 0
    assert legal_names(g) == {"PLAY(R3)", "DRAW"}


@pytest.mark.parametrize("hand0, playable", [("R2 G5 B3", False), ("Y2 G5 B3", True)])
def test_r6_2_strict_drawn_w4_playable_only_if_legal(hand0, playable):
    """R6.1 + R6.2 (w4_strict): a drawn W4 can be played at once only if it is legal."""
    g = make(w4_position(hand0, {"w4_strict": True}, draw_pile="W4 " + PILE))
    do(g, "DRAW")
    if playable:
        assert (g.current_player, g.phase_name) == (0, "play_drawn")
        assert legal_names(g) == {"PLAY(W4)", "KEEP"}
    else:
        assert (g.current_player, g.phase_name) == (1, "play")
        assert hand_codes(g, 0) == cards(hand0 + " W4")


# ----------------------------------------------------------------------------------- R6.4


def test_r6_4_w4_as_last_card_no_challenge_next_draws_four_round_ends():
    """R6.4 / R10.1: a W4 as the last card is always legal, has no colour choice and no
    challenge; the next player draws 4 and the round ends (the 4 cards score)."""
    g = make(w4_position("W4", uno_called=[True, False, False]))
    do(g, "PLAY(W4)")
    assert g.round_over and g.game_over and g.winner == 0
    assert g.phase_name == "game_over" and legal_names(g) == set()
    assert hand_codes(g, 1) == cards("G1 B1 Y3 Y5 Y6 Y7 Y8")
    assert not [e for e in g.events if e[0] in ("challenge", "accept", "colour")]
    assert g.scores == [31 + 14, 0, 0]  # G1 B1 Y3 Y5 Y6 Y7 Y8 = 31, B2 Y4 G8 = 14


def test_r6_4_w4_as_last_card_counter_clockwise_hits_previous_seat():
    """R6.4: counter-clockwise the next player (seat -1) draws the 4."""
    g = make(w4_position("W4", direction=-1, uno_called=[True, False, False]))
    do(g, "PLAY(W4)")
    assert g.winner == 0
    assert hand_codes(g, 2) == cards("B2 Y4 G8 Y5 Y6 Y7 Y8")
    assert hand_codes(g, 1) == cards("G1 B1 Y3")


def test_r6_4_w4_as_last_card_is_legal_under_strict():
    """R6.4 + R6.2: under w4_strict a lone W4 is legal and still ends the round."""
    g = make(w4_position("W4", {"w4_strict": True}, uno_called=[True, False, False]))
    assert legal_names(g) == {"PLAY(W4)", "DRAW"}
    do(g, "PLAY(W4)")
    assert g.game_over and g.winner == 0


def test_r6_3_each_challenger_keeps_the_hand_it_saw_for_the_round():
    """R6.3 (issue #24.2): 4 players; seat 1 challenges seat 0's legal W4 and sees its hand;
    later seat 3 challenges seat 2's legal W4. Seat 1 still sees seat 0's hand (view and
    observation slot), seat 3 sees seat 2's, seats 0 and 2 see none; a state dict keeps both."""
    import numpy as np

    from uno_mk_env import Game
    from uno_mk_env.engine.observation import encode, split

    g = make({"rules": {"num_players": 4},
              "hands": ["W4 G5 B3", "G1 B1 Y3", "W4 Y4 G8", "R4 G2 B6"],
              "discard_pile": "R7", "draw_pile": PILE + " R2 R3 R5 G3"})
    play_w4(g, "B")
    do(g, "CHALLENGE")  # legal (no red): seat 1 draws 6 and is skipped
    assert sorted(counts_to_codes(g.view(1).revealed_hand)) == cards("G5 B3")
    assert g.current_player == 2
    do(g, "PLAY(W4)", "COLOUR(Y)", "CHALLENGE")  # legal (no blue): seat 3 draws 6
    assert g.current_player == 0
    views = [g.view(s) for s in range(4)]
    assert sorted(counts_to_codes(views[1].revealed_hand)) == cards("G5 B3")
    assert sorted(counts_to_codes(views[3].revealed_hand)) == cards("Y4 G8")
    assert (views[1].revealed_by, views[3].revealed_by) == (0, 2)
    assert views[0].revealed_hand is None and views[2].revealed_hand is None
    obs = split(encode(views[1]))
    assert obs["revealed_hand"].sum() == 2 and obs["revealed_by"][3] == 1  # seat 0 = 3 after me
    d = g.to_dict()
    assert [(r["player"], r["to"]) for r in d["reveals"]] == [(0, 1), (2, 3)]
    again = Game.from_dict(d)
    assert again == g and again.view(1) == views[1]
    sample = Game.from_view(views[1], np.random.default_rng(0))
    assert sample.view(1).revealed_hand == views[1].revealed_hand


def test_r6_3_a_second_challenge_by_the_same_seat_replaces_its_reveal():
    """R6.3: one reveal per challenger: its latest challenge's hand."""
    g = make({"rules": {"num_players": 2},
              "hands": ["W4 W4 G5 B3", "G1 B1 Y3"], "discard_pile": "R7", "draw_pile": PILE})
    play_w4(g, "B")
    do(g, "CHALLENGE")  # legal: seat 1 draws 6, skipped; seat 0 plays again (2 players)
    assert sorted(counts_to_codes(g.view(1).revealed_hand)) == cards("W4 G5 B3")
    do(g, "PLAY(W4)", "COLOUR(Y)", "CHALLENGE")
    assert sorted(counts_to_codes(g.view(1).revealed_hand)) == cards("G5 B3")
    assert len(g.reveals) == 1
