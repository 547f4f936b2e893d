"""Scenario tests for a turn (docs/rules.md R4) and the action cards (R5)."""

from __future__ import annotations

import pytest
from scenario import cards, colour, do, hand_codes, legal_names, make, top

# ------------------------------------------------------------------------------------------ R4


def test_r4_1_play_matches_by_colour_number_or_symbol_and_any_wild():
    """R4.1: R7 on top accepts red cards, 7s of any colour and both wilds; nothing else."""
    g = make({"hands": ["R2 G7 B3 YS WB W4", "G5 B1 Y2", "R1 R3 Y9"], "discard_pile": "R7"})
    assert legal_names(g) == {"PLAY(R2)", "PLAY(G7)", "PLAY(WB)", "PLAY(W4)", "DRAW"}


@pytest.mark.parametrize("symbol", ["S", "R", "D"])
def test_r4_1_symbol_matches_symbol_of_another_colour(symbol):
    """R4.1: Skip on Skip, Reverse on Reverse, Draw Two on Draw Two, across colours."""
    others = {"S": "GR BD", "R": "GS BD", "D": "GS BR"}[symbol]
    g = make({"hands": [f"G{symbol} {others} Y1", "G5 B1 Y2", "R1 R3 Y9"],
              "discard_pile": f"R{symbol}"})
    assert legal_names(g) == {f"PLAY(G{symbol})", "DRAW"}


def test_r4_1_play_a_matching_number_changes_the_active_colour_and_passes_left():
    """R4.1: a 7 on a 7 makes its colour active; play passes to the next seat."""
    g = make({"hands": ["G7 B3 Y1", "G5 B1 Y2", "R1 R3 Y9"], "discard_pile": "R7"})
    do(g, "PLAY(G7)")
    assert (top(g), colour(g), g.current_player, g.phase_name) == ("G7", "G", 1, "play")
    assert hand_codes(g, 0) == cards("B3 Y1")
    assert legal_names(g) == {"PLAY(G5)", "DRAW"}


def test_r4_wild_top_card_matches_only_the_named_colour():
    """R4: with a wild on top only the named colour (and wilds) match, never a number."""
    g = make({"hands": ["G2 R4 B4 YS W4", "G5 B1 Y2", "R1 R3 Y9"],
              "discard_pile": "R4 W4", "active_colour": "G"})
    assert legal_names(g) == {"PLAY(G2)", "PLAY(W4)", "DRAW"}


def test_r4_2_draw_then_play_the_drawn_card():
    """R4.2: a playable drawn card may be played at once (that card only)."""
    g = make({"hands": ["G5 B2 R1", "G4 B1 Y2", "R2 R3 Y9"], "discard_pile": "R7",
              "draw_pile": "R8 Y5"})
    assert "PLAY(R1)" in legal_names(g)  # drawing is allowed even when a play is possible
    do(g, "DRAW")
    assert (g.current_player, g.phase_name) == (0, "play_drawn")
    assert legal_names(g) == {"PLAY(R8)", "KEEP"}  # not R1: only the drawn card
    do(g, "PLAY(R8)")
    assert (top(g), g.current_player, g.phase_name) == ("R8", 1, "play")
    assert hand_codes(g, 0) == cards("G5 B2 R1")


def test_r4_2_draw_then_keep_ends_the_turn():
    """R4.2: the drawn playable card may be kept; the turn ends."""
    g = make({"hands": ["G5 B2 Y1", "G4 B1 Y2", "R2 R3 Y9"], "discard_pile": "R7",
              "draw_pile": "R8 Y5"})
    do(g, "DRAW", "KEEP")
    assert hand_codes(g, 0) == cards("G5 B2 Y1 R8")
    assert (top(g), g.current_player, g.phase_name) == ("R7", 1, "play")


def test_r4_2_drawing_an_unplayable_card_ends_the_turn():
    """R4.2: an unplayable drawn card is kept and the turn ends at once."""
    g = make({"hands": ["G5 B2 Y1", "G4 B1 Y2", "R2 R3 Y9"], "discard_pile": "R7",
              "draw_pile": "G9 Y5"})
    do(g, "DRAW")
    assert hand_codes(g, 0) == cards("G5 B2 Y1 G9")
    assert (g.current_player, g.phase_name) == (1, "play")
    assert legal_names(g) == {"DRAW"}


def test_r4_2_a_drawn_number_matching_the_top_card_is_playable():
    """R4.2: the drawn card is playable by number too (a 7 of another colour on R7)."""
    g = make({"hands": ["G5 B2 Y1", "G4 B1 Y2", "R2 R3 Y9"], "discard_pile": "R7",
              "draw_pile": "B7"})
    do(g, "DRAW")
    assert g.phase_name == "play_drawn"
    assert legal_names(g) == {"PLAY(B7)", "KEEP"}


# ------------------------------------------------------------------------------------------ R5


def test_r5_skip_next_player_loses_their_turn():
    """R5: Skip; with 4 players seat 1 is skipped and seat 2 plays."""
    g = make({"hands": ["RS G1 B2", "R1 R2", "G3 Y4", "B5 Y6"], "discard_pile": "R7"})
    do(g, "PLAY(RS)")
    assert (g.current_player, g.direction, top(g), colour(g)) == (2, 1, "RS", "R")
    assert hand_codes(g, 1) == cards("R1 R2")


def test_r5_skip_with_two_players_gives_another_turn():
    """R5 / R4: two-player Skip is an extra, full turn for the player."""
    g = make({"hands": ["RS G1 B2 Y3", "R1 R2"], "discard_pile": "R7"})
    do(g, "PLAY(RS)")
    assert (g.current_player, g.phase_name) == (0, "play")
    assert legal_names(g) == {"DRAW"}  # G1, B2, Y3 do not match RS


def test_r5_draw_two_next_draws_two_and_loses_turn():
    """R5: Draw Two; the next player draws 2 and is skipped."""
    g = make({"hands": ["RD G1 B2", "R1 R2", "G3 Y4", "B5 Y6"], "discard_pile": "R7",
              "draw_pile": "Y7 Y8 Y9"})
    do(g, "PLAY(RD)")
    assert hand_codes(g, 1) == cards("R1 R2 Y7 Y8")
    assert (g.current_player, g.direction, top(g)) == (2, 1, "RD")


def test_r5_draw_two_with_two_players_gives_another_turn():
    """R5: with 2 players the Draw Two victim draws 2 and the player plays again."""
    g = make({"hands": ["RD G1 B2 Y3", "R1 R2 B4"], "discard_pile": "R7", "draw_pile": "Y7 Y8"})
    do(g, "PLAY(RD)")
    assert hand_codes(g, 1) == cards("R1 R2 B4 Y7 Y8")
    assert (g.current_player, g.phase_name, top(g)) == (0, "play", "RD")


def test_r5_reverse_with_three_players_flips_direction():
    """R5: Reverse with 3+ players: direction -1, the previous seat plays next."""
    g = make({"hands": ["RR G1 B2", "R1 R2", "G3 Y4", "B5 Y6"], "discard_pile": "R7",
              "draw_pile": "G9"})
    do(g, "PLAY(RR)")
    assert (g.direction, g.current_player) == (-1, 3)
    do(g, "DRAW")  # seat 3 draws an unplayable G9; the turn passes on against the direction
    assert (g.direction, g.current_player) == (-1, 2)


def test_r5_reverse_again_restores_clockwise():
    """R5: a second Reverse flips the direction back to +1."""
    g = make({"hands": ["RR G1 B2", "R1 R2", "G3 Y4", "GR Y6"], "discard_pile": "R7"})
    do(g, "PLAY(RR)", "PLAY(GR)")
    assert (g.direction, g.current_player) == (1, 0)


def test_r5_two_player_reverse_acts_as_skip():
    """R5: with 2 players a Reverse acts as a Skip (two_player_reverse_skips=True)."""
    g = make({"hands": ["RR G1 B2", "R1 R2 Y5"], "discard_pile": "R7"})
    do(g, "PLAY(RR)")
    assert (g.current_player, g.phase_name, top(g)) == (0, "play", "RR")


def test_r5_two_player_reverse_without_skip_option_passes_turn():
    """R5 option two_player_reverse_skips=False: the Reverse only flips the direction."""
    g = make({"rules": {"num_players": 2, "two_player_reverse_skips": False},
              "hands": ["RR G1 B2", "R1 R2 Y5"], "discard_pile": "R7"})
    do(g, "PLAY(RR)")
    assert (g.current_player, g.direction) == (1, -1)
    assert legal_names(g) == {"PLAY(R1)", "PLAY(R2)", "DRAW"}
