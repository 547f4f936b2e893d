"""Scenario tests for calling UNO (docs/rules.md R8)."""

from __future__ import annotations

import pytest
from scenario import cards, do, events_of, hand_codes, legal_names, make

PILE = "Y5 Y6 Y7 Y8 B7 B8"


def uno_position(hand0: str = "R5 G5", rules: dict | None = None, **extra):
    """Three players, R7 on top; seat 0 holds ``hand0`` (two cards by default)."""
    return make({"rules": {"num_players": 3, **(rules or {})},
                 "hands": [hand0, "R1 B1 Y3", "B2 Y4 G8"], "discard_pile": "R7",
                 "draw_pile": PILE, **extra})


def called(g) -> list[bool]:
    return g.to_dict()["uno_called"]


# ------------------------------------------------------------------------- CALL_UNO legality


def test_r8_call_uno_legal_with_exactly_two_cards_and_does_not_end_the_turn():
    """R8 / docs/api.md#actions-and-phases: CALL_UNO is legal holding exactly 2 cards, not yet
    called; calling keeps the turn and cannot be repeated."""
    g = uno_position()
    assert legal_names(g) == {"PLAY(R5)", "DRAW", "CALL_UNO"}
    do(g, "CALL_UNO")
    assert (g.current_player, g.phase_name) == (0, "play")
    assert legal_names(g) == {"PLAY(R5)", "DRAW"}
    assert called(g) == [True, False, False]
    assert ("uno", 0) in g.events


@pytest.mark.parametrize("hand0", ["R5", "R5 G5 B5"])
def test_r8_call_uno_not_legal_with_one_or_three_cards(hand0):
    """R8: CALL_UNO is legal only with exactly two cards."""
    assert "CALL_UNO" not in legal_names(uno_position(hand0))


def test_r8_call_uno_legal_in_play_drawn_with_two_cards():
    """R8 / docs/api.md#actions-and-phases: after drawing up to 2 cards, CALL_UNO is legal before
    playing the drawn card; then no penalty follows."""
    g = uno_position("G5", draw_pile="R3 " + PILE)
    do(g, "DRAW")
    assert legal_names(g) == {"PLAY(R3)", "KEEP", "CALL_UNO"}
    do(g, "CALL_UNO", "PLAY(R3)")
    assert g.current_player == 1
    assert hand_codes(g, 0) == ["G5"]
    assert not events_of(g, "catch")


def test_r8_called_uno_means_no_penalty_and_the_call_stays_while_holding_one():
    """R8: a called UNO is never penalised; the call stays while the player holds one card."""
    g = uno_position()
    do(g, "CALL_UNO", "PLAY(R5)")
    assert hand_codes(g, 0) == ["G5"]
    do(g, "PLAY(R1)", "DRAW")  # seat 2 draws an unplayable Y5; seat 0's turn begins
    assert g.current_player == 0
    assert hand_codes(g, 0) == ["G5"]
    assert called(g)[0] is True
    assert not events_of(g, "catch")


def test_r8_the_call_is_reset_when_the_player_draws():
    """R8 (engine): drawing clears a UNO call."""
    g = uno_position("R5 G5", draw_pile="G9 " + PILE)
    do(g, "CALL_UNO", "DRAW")  # draws an unplayable G9: three cards, the turn ends
    assert called(g) == [False, False, False]
    assert hand_codes(g, 0) == cards("R5 G5 G9")


def test_r8_the_call_is_reset_at_turn_start_unless_holding_one_card():
    """R8 (engine): a stale call is cleared when the player's turn begins with 2+ cards."""
    g = uno_position("R5 G5 B5", uno_called=[False, True, False])  # seat 1 holds 3 cards
    do(g, "PLAY(R5)")
    assert g.current_player == 1
    assert called(g) == [False, False, False]
    assert "CALL_UNO" not in legal_names(g)


# --------------------------------------------------------------- uno_catch="auto" (default)


def test_r8_missed_uno_auto_penalty_two_when_next_turn_begins():
    """R8 (uno_catch="auto"): playing down to one card without calling costs 2 cards when the
    next turn begins; there is no CATCH_UNO action."""
    g = uno_position()
    do(g, "PLAY(R5)")
    assert hand_codes(g, 0) == cards("G5 Y5 Y6")
    assert events_of(g, "catch") == [("catch", -1, 0)]
    assert g.current_player == 1
    assert legal_names(g) == {"PLAY(R1)", "DRAW"}


@pytest.mark.parametrize("penalty", [0, 1, 4])
def test_r8_uno_penalty_option(penalty):
    """R8 option uno_penalty: a miss costs that many cards."""
    g = uno_position(rules={"uno_penalty": penalty})
    do(g, "PLAY(R5)")
    assert hand_codes(g, 0) == cards(["G5", *PILE.split()[:penalty]])


def test_r8_auto_penalty_applies_at_the_offenders_own_extra_turn():
    """R8 (engine: the next turn may be the offender's own): a WB that flips a Mushroom gives
    an extra turn, which begins with the penalty."""
    g = uno_position("WB G5", draw_pile="R3 " + PILE)
    do(g, "PLAY(WB)")
    assert g.current_player == 0
    assert hand_codes(g, 0) == cards("G5 Y5 Y6")


def test_r8_auto_penalty_not_applied_during_the_challenge_decision():
    """R8 (engine): the W4 challenge decision is not a turn; the penalty waits for the next
    turn."""
    g = uno_position("W4 G5")
    do(g, "PLAY(W4)", "COLOUR(B)")
    assert (g.current_player, g.phase_name) == (1, "challenge")
    assert hand_codes(g, 0) == ["G5"]
    do(g, "ACCEPT")
    assert g.current_player == 2
    assert hand_codes(g, 1) == cards("R1 B1 Y3 Y5 Y6 Y7 Y8")
    assert hand_codes(g, 0) == cards("G5 B7 B8")


def test_r8_auto_no_penalty_after_a_won_challenge_leaves_more_than_one_card():
    """R8: the offender who draws 4 for an illegal W4 no longer holds one card."""
    g = uno_position("W4 R2")
    do(g, "PLAY(W4)", "COLOUR(B)", "CHALLENGE")
    assert hand_codes(g, 0) == cards("R2 Y5 Y6 Y7 Y8")
    assert not events_of(g, "catch")


# --------------------------------------------------------------- uno_catch="next_player"


def test_r8_next_player_may_catch_and_keeps_deciding():
    """R8 option uno_catch="next_player": the next decider may CATCH_UNO; the offender draws
    the penalty; catching does not end the catcher's turn."""
    g = uno_position(rules={"uno_catch": "next_player"})
    do(g, "PLAY(R5)")
    assert hand_codes(g, 0) == ["G5"]  # no automatic penalty
    assert legal_names(g) == {"PLAY(R1)", "DRAW", "CATCH_UNO"}
    assert g.view(1).uno_catchable == 0
    do(g, "CATCH_UNO")
    assert hand_codes(g, 0) == cards("G5 Y5 Y6")
    assert events_of(g, "catch") == [("catch", 1, 0)]
    assert (g.current_player, g.phase_name) == (1, "play")
    assert legal_names(g) == {"PLAY(R1)", "DRAW"}


def test_r8_next_player_window_closes_after_their_first_other_action():
    """R8 option uno_catch="next_player": once the next decider acts otherwise, the miss can no
    longer be caught and goes unpunished."""
    g = uno_position(rules={"uno_catch": "next_player"})
    do(g, "PLAY(R5)", "PLAY(R1)")
    assert g.current_player == 2
    assert "CATCH_UNO" not in legal_names(g)
    assert g.view(2).uno_catchable == -1
    do(g, "DRAW")  # unplayable Y5
    assert g.current_player == 0
    assert "CATCH_UNO" not in legal_names(g)
    assert hand_codes(g, 0) == ["G5"]
    assert not events_of(g, "catch")


def test_r8_next_player_offender_never_catches_themself_at_an_extra_turn():
    """R8 ruling, uno_catch="next_player": at the offender's own extra turn (a Mushroom) the
    offender is never offered CATCH_UNO; the seat after it is asked first, out of turn, and
    may let the miss pass; the window is then over."""
    g = uno_position("WB G5", {"uno_catch": "next_player"}, draw_pile="R3 " + PILE)
    do(g, "PLAY(WB)")  # Mushroom: extra turn for seat 0 with one card
    assert (g.current_player, g.phase_name, g.turn_player) == (1, "uno_catch", 0)
    do(g, "ACCEPT")  # let it pass
    assert (g.current_player, g.phase_name) == (0, "play")
    assert legal_names(g) == {"DRAW"}
    assert events_of(g, "let_pass") == [("let_pass", 1, 0)]
    do(g, "DRAW")  # an unplayable Y5: two cards again
    assert g.current_player == 1
    assert "CATCH_UNO" not in legal_names(g)


@pytest.mark.parametrize("catch", ["auto", "next_player"])
def test_r8_miss_with_draw_two_the_skipped_victim_never_decides(catch):
    """R8: after an uncalled Draw Two the victim is skipped; the next decider (seat 2) is the
    one who may catch, and with "auto" the penalty comes as seat 2's turn begins."""
    g = uno_position("RD G5", {"uno_catch": catch})
    do(g, "PLAY(RD)")
    assert hand_codes(g, 1) == cards("R1 B1 Y3 Y5 Y6")
    assert g.current_player == 2
    if catch == "auto":
        assert hand_codes(g, 0) == cards("G5 Y7 Y8")
        assert legal_names(g) == {"DRAW"}
    else:
        assert hand_codes(g, 0) == ["G5"]
        assert legal_names(g) == {"DRAW", "CATCH_UNO"}
        do(g, "CATCH_UNO")
        assert hand_codes(g, 0) == cards("G5 Y7 Y8")


def test_r8_next_player_catch_at_the_challenge_decision():
    """R8 option uno_catch="next_player": the W4's victim is the first other decider and may
    catch before challenging or accepting."""
    g = uno_position("W4 G5", {"uno_catch": "next_player"})
    do(g, "PLAY(W4)", "COLOUR(B)")
    assert legal_names(g) == {"CHALLENGE", "ACCEPT", "CATCH_UNO"}
    do(g, "CATCH_UNO")
    assert hand_codes(g, 0) == cards("G5 Y5 Y6")
    assert (g.current_player, g.phase_name) == (1, "challenge")
    assert legal_names(g) == {"CHALLENGE", "ACCEPT"}


def test_r8_catch_uno_never_legal_with_auto():
    """R8: with uno_catch="auto" CATCH_UNO is never offered (the W4 victim included)."""
    g = uno_position("W4 G5")
    do(g, "PLAY(W4)", "COLOUR(B)")
    assert legal_names(g) == {"CHALLENGE", "ACCEPT"}


# -------------------------------------------------------------------------------- uno="off"


def test_r8_uno_off_no_call_no_penalty():
    """R8 option uno="off": no CALL_UNO, no penalty, no catch."""
    g = uno_position(rules={"uno": "off", "uno_catch": "next_player"})
    assert legal_names(g) == {"PLAY(R5)", "DRAW"}
    do(g, "PLAY(R5)")
    assert g.current_player == 1
    assert hand_codes(g, 0) == ["G5"]
    assert legal_names(g) == {"PLAY(R1)", "DRAW"}
    assert not events_of(g, "catch")


# ---------------------------------------------------------------- going out is never penalised


@pytest.mark.parametrize("catch", ["auto", "next_player"])
def test_r8_player_who_goes_out_is_never_penalised(catch):
    """R8: a player with a pending missed UNO who goes out draws nothing; the round scores."""
    g = uno_position("R5", {"uno_catch": catch}, uno_miss=0)
    do(g, "PLAY(R5)")
    assert g.game_over and g.winner == 0
    assert hand_codes(g, 0) == []
    assert not events_of(g, "catch")
    assert g.scores == [5 + 14, 0, 0]


@pytest.mark.parametrize("catch", ["next_player", "any_player"])
def test_r8_offender_going_out_in_an_extra_turn_after_the_miss_was_let_pass(catch):
    """R8: a two-player Skip gives an extra turn; seat 1 is asked first and lets the miss pass;
    the offender then goes out and is not penalised."""
    g = make({"rules": {"num_players": 2, "uno_catch": catch},
              "hands": ["RS R5", "G1 B1 Y3"], "discard_pile": "R7", "draw_pile": PILE})
    do(g, "PLAY(RS)")
    assert (g.current_player, legal_names(g)) == (1, {"ACCEPT", "CATCH_UNO"})
    do(g, "ACCEPT")
    assert (g.current_player, legal_names(g)) == (0, {"PLAY(R5)", "DRAW"})
    do(g, "PLAY(R5)")
    assert g.game_over and g.winner == 0
    assert hand_codes(g, 0) == []
    assert g.scores == [5, 0]


# ------------------------------------------- R8: a miss ends when the offender draws (any catch)


def test_r8_next_player_cannot_catch_a_called_uno_after_a_two_player_skip():
    """R8: only an uncalled UNO is caught. Seat 0 plays a Skip leaving one uncalled card, takes
    its extra turn (2 players), draws, calls UNO and plays down to one card: that UNO was
    called, so seat 1 is not offered CATCH_UNO (the earlier miss ended with the draw)."""
    g = make({"rules": {"num_players": 2, "uno_catch": "next_player"},
              "hands": ["RS R5", "G1 G2 G3"], "discard_pile": "R3", "draw_pile": "R7 B1 B2"})
    do(g, "PLAY(RS)")
    assert g.current_player == 1 and g.view(1).uno_pending == 0
    do(g, "ACCEPT")  # seat 1 lets the miss pass (R8 ruling: asked out of turn)
    assert g.current_player == 0 and g.view(1).uno_pending == -1
    do(g, "DRAW")  # draws R7: two cards again
    assert g.view(1).uno_pending == -1
    assert legal_names(g) == {"PLAY(R7)", "KEEP", "CALL_UNO"}
    do(g, "CALL_UNO", "PLAY(R7)")
    assert g.current_player == 1 and called(g)[0]
    assert "CATCH_UNO" not in legal_names(g)
    assert g.view(1).uno_catchable == -1


def test_r8_next_player_cannot_catch_a_called_uno_after_a_mushroom_extra_turn():
    """R8, three players: a WB leaves seat 0 one uncalled card and flips a Mushroom (extra
    turn); seat 0 draws, calls and plays down to one card: no catch for seat 1."""
    g = make({"rules": {"num_players": 3, "uno_catch": "next_player"},
              "hands": ["WB R5", "G1 G2 G3", "B4 B5 B6"], "discard_pile": "R3",
              "draw_pile": "R9 R7 Y1"})
    do(g, "PLAY(WB)")  # flips R9: Mushroom
    assert (g.current_player, g.phase_name) == (1, "uno_catch") and g.view(1).uno_pending == 0
    do(g, "ACCEPT")
    assert (g.current_player, g.phase_name) == (0, "play")
    do(g, "DRAW")  # R7
    do(g, "CALL_UNO", "PLAY(R7)")
    assert g.current_player == 1
    assert "CATCH_UNO" not in legal_names(g)


@pytest.mark.parametrize("catch", ["auto", "next_player"])
def test_r8_a_miss_ends_when_the_offender_draws_from_a_bob_omb(catch):
    """R8: a WB as the second-to-last card without a call, then a Bob-omb makes the offender draw
    2: it no longer holds one card, so the miss is over (no penalty, nothing to catch, and no
    stale miss left to catch after a later, called UNO)."""
    g = make({"rules": {"num_players": 3, "uno_catch": catch},
              "hands": ["WB G5", "G1 G2 G3", "B4 B5 B6"], "discard_pile": "R3",
              "draw_pile": "W4 Y2 Y1"})
    do(g, "PLAY(WB)")  # flips W4: Bob-omb, seat 0 draws Y2 and Y1
    assert g.view(1).uno_pending == -1 and len(hand_codes(g, 0)) == 3
    do(g, "COLOUR(G)")
    assert g.current_player == 1 and "CATCH_UNO" not in legal_names(g)
    assert len(hand_codes(g, 0)) == 3 and not events_of(g, "catch")


# ------------------------------------------------- R8 ruling: the catch window ("next_player")


def two_player(hand0: str, catch: str = "next_player", **extra):
    """Two players, R3 on top; seat 0 holds ``hand0`` (two cards: it will miss UNO)."""
    return make({"rules": {"num_players": 2, "uno_catch": catch, **extra.pop("rules", {})},
                 "hands": [hand0, "G1 G2 G3"], "discard_pile": "R3", "draw_pile": PILE, **extra})


def asked(g) -> tuple[int, str, set[str]]:
    return g.current_player, g.phase_name, legal_names(g)


@pytest.mark.parametrize(("hand0", "card", "rules"), [
    ("RS R1", "RS", {}),  # the case: Skip, then R1 would go out unpunished
    ("RR R1", "RR", {}),  # a 2-player Reverse acts as a Skip (R5)
    ("RD R1", "RD", {}),  # a 2-player Draw Two: the victim draws and is skipped
], ids=["skip", "reverse", "draw_two"])
def test_r8_ruling_two_player_the_other_player_is_asked_before_the_offenders_turn(
        hand0, card, rules):
    """R8 ruling, uno_catch="next_player", 2 players: after an uncalled Skip / Reverse / Draw Two
    the next turn is the offender's own; the other player is asked first, out of turn, and
    catches: the offender draws the penalty, then its turn begins (it cannot go out)."""
    g = two_player(hand0, rules=rules)
    do(g, f"PLAY({card})")
    assert asked(g) == (1, "uno_catch", {"ACCEPT", "CATCH_UNO"})
    assert g.turn_player == 0 and g.view(1).uno_catchable == 0
    do(g, "CATCH_UNO")
    assert events_of(g, "catch") == [("catch", 1, 0)]
    assert len(hand_codes(g, 0)) == 3  # R1 + the 2-card penalty
    assert (g.current_player, g.phase_name) == (0, "play")
    assert "CATCH_UNO" not in legal_names(g)


def test_r8_ruling_two_player_reverse_without_the_skip_rule_is_a_normal_turn():
    """R8 ruling: with two_player_reverse_skips=False the next turn is seat 1's own: it is asked
    at its first decision, as before (CATCH_UNO among its play actions)."""
    g = two_player("RR R1", rules={"two_player_reverse_skips": False})
    do(g, "PLAY(RR)")
    assert asked(g) == (1, "play", {"DRAW", "CATCH_UNO"})


def test_r8_ruling_lightning_extra_turn_asks_the_next_seat():
    """R8 ruling, 3 players: a WB flips Lightning (every other player draws 1, then an extra turn
    for the offender); the seat after the offender is asked out of turn."""
    g = uno_position("WB G5", {"uno_catch": "next_player"}, draw_pile="B9 Y1 Y2 " + PILE)
    do(g, "PLAY(WB)")
    assert [e[2] for e in events_of(g, "item")] == [3]  # Lightning
    assert asked(g) == (1, "uno_catch", {"ACCEPT", "CATCH_UNO"})
    do(g, "CATCH_UNO")
    assert hand_codes(g, 0) == cards("G5 Y5 Y6")
    assert (g.current_player, g.phase_name, g.turn_player) == (0, "play", 0)


def test_r8_ruling_three_players_the_next_turns_player_is_asked_at_its_decision():
    """R8 ruling, 3+ players: when the next turn is another player's, that player is asked at
    its first decision (no out-of-turn question), and the offender is never asked."""
    g = uno_position(rules={"uno_catch": "next_player"})
    do(g, "PLAY(R5)")
    assert asked(g) == (1, "play", {"PLAY(R1)", "DRAW", "CATCH_UNO"})
    do(g, "PLAY(R1)")  # declines by acting: the window closes
    assert "CATCH_UNO" not in legal_names(g) and g.view(2).uno_pending == -1


def test_r8_ruling_decline_then_the_offender_is_not_asked_and_goes_out_unpunished():
    """R8 ruling: the asked player may let the miss pass; the offender is never asked and,
    going out at its turn, is never penalised."""
    g = two_player("RS R1")
    do(g, "PLAY(RS)", "ACCEPT")
    assert asked(g) == (0, "play", {"PLAY(R1)", "DRAW"})
    do(g, "PLAY(R1)")
    assert g.game_over and g.winner == 0 and not events_of(g, "catch")


# ----------------------------------------------------- R8 ruling: uno_catch="any_player"


def four_players(hand0: str = "R5 G5", **extra):
    return make({"rules": {"num_players": 4, "uno_catch": "any_player"},
                 "hands": [hand0, "R1 B1 Y3", "B2 Y4 G8", "G6 B6 Y6"], "discard_pile": "R7",
                 "draw_pile": PILE, **extra})


def test_r8_any_player_every_other_player_is_asked_in_turn_order_from_the_offender():
    """R8 option uno_catch="any_player": at the start of the next turn seats 1, 2, 3 (in turn
    order from the offender, never the offender) are asked until one catches; passing asks
    the next; then the next turn's player (seat 1) decides."""
    g = four_players()
    do(g, "PLAY(R5)")
    assert asked(g) == (1, "uno_catch", {"ACCEPT", "CATCH_UNO"})
    assert g.turn_player == 1
    do(g, "ACCEPT")
    assert asked(g) == (2, "uno_catch", {"ACCEPT", "CATCH_UNO"})
    do(g, "ACCEPT")
    assert asked(g) == (3, "uno_catch", {"ACCEPT", "CATCH_UNO"})
    do(g, "ACCEPT")  # everyone let it pass: the window is over
    assert asked(g) == (1, "play", {"PLAY(R1)", "DRAW"})
    assert [e[1] for e in events_of(g, "let_pass")] == [1, 2, 3]
    assert hand_codes(g, 0) == ["G5"] and g.view(1).uno_pending == -1


def test_r8_any_player_one_catch_ends_the_window():
    """R8 option uno_catch="any_player": seat 2 catches after seat 1 passed; seat 3 is not
    asked; seat 1's turn begins."""
    g = four_players()
    do(g, "PLAY(R5)", "ACCEPT", "CATCH_UNO")
    assert events_of(g, "catch") == [("catch", 2, 0)]
    assert hand_codes(g, 0) == cards("G5 Y5 Y6")
    assert asked(g) == (1, "play", {"PLAY(R1)", "DRAW"})


def test_r8_any_player_order_follows_the_direction_and_skips():
    """R8 option uno_catch="any_player": after a Reverse the order runs counter-clockwise from
    the offender (3, 2, 1); the turn that begins is seat 3's."""
    g = four_players("RR G5")
    do(g, "PLAY(RR)")
    assert (g.current_player, g.turn_player) == (3, 3)
    do(g, "ACCEPT")
    assert g.current_player == 2
    do(g, "ACCEPT", "ACCEPT")
    assert (g.current_player, g.phase_name) == (3, "play")


def test_r8_any_player_no_catch_at_the_challenge_decision():
    """R8 option uno_catch="any_player": the window opens when the next turn begins, so the
    W4's victim is not offered CATCH_UNO while it challenges or accepts; after ACCEPT (seat 1
    skipped) seat 2's turn begins and seats 1, 2, 3 are asked."""
    g = four_players("W4 G5")
    do(g, "PLAY(W4)", "COLOUR(B)")
    assert asked(g) == (1, "challenge", {"CHALLENGE", "ACCEPT"})
    do(g, "ACCEPT")
    assert (g.current_player, g.phase_name, g.turn_player) == (1, "uno_catch", 2)


@pytest.mark.parametrize("catch", ["next_player", "any_player"])
def test_r8_catch_window_never_opens_after_going_out(catch):
    """R8: the player who goes out is never penalised: no question is asked after the round."""
    g = make({"rules": {"num_players": 2, "uno_catch": catch}, "hands": ["R5", "G1 G2"],
              "discard_pile": "R3", "draw_pile": PILE, "uno_miss": 0})
    do(g, "PLAY(R5)")
    assert g.game_over and g.winner == 0 and not events_of(g, "catch")


@pytest.mark.parametrize("catch", ["next_player", "any_player"])
def test_r8_catch_phase_round_trips_and_refuses_bad_positions(catch):
    """State dicts (docs/api.md#state-dicts) keep the uno_catch phase; a position in that phase
    without a pending miss, or asking the offender, is refused naming the phase."""
    from uno_mk_env import Game, StateError

    g = two_player("RS R1", catch)
    do(g, "PLAY(RS)")
    d = g.to_dict()
    assert d["phase"] == "uno_catch"
    assert Game.from_dict(d) == g
    with pytest.raises(StateError, match="uno_catch"):
        Game.from_dict({**d, "uno_miss": None})
    with pytest.raises(StateError, match="uno_catch"):
        Game.from_dict({**d, "current_player": 0})
    with pytest.raises(StateError, match="uno_catch"):
        Game.from_dict({**d, "rules": {**d["rules"], "uno_catch": "auto"}})


@pytest.mark.parametrize("catch", ["next_player", "any_player"])
def test_r8_catch_phase_view_and_observation(catch):
    """docs/api.md#observation: in phase uno_catch the phase one-hot is all 0, the decider and
    uno_catchable slots are set; the mask holds ACCEPT and CATCH_UNO; from_view samples it."""
    import numpy as np

    from uno_mk_env import Game
    from uno_mk_env import actions as A
    from uno_mk_env.engine.observation import encode, split

    g = two_player("RS R1", catch)
    do(g, "PLAY(RS)")
    parts = split(encode(g.view(1)))
    assert parts["phase"].sum() == 0
    assert parts["decider"][0] == 1 and parts["uno_catchable"][1] == 1
    assert g.view(1).legal_actions == (A.ACCEPT, A.CATCH_UNO)
    sample = Game.from_view(g.view(1), np.random.default_rng(0))
    assert (sample.phase_name, sample.current_player) == ("uno_catch", 1)
    assert sample.view(1) == g.view(1)


@pytest.mark.parametrize("catch", ["next_player", "any_player"])
@pytest.mark.parametrize("spec", ["random", "greedy", "strategic", "ismcts:20"])
def test_r8_agents_answer_in_the_uno_catch_phase(spec, catch):
    """The shipped agents act in phase uno_catch (their UNO reflex catches; a random agent picks
    a legal answer)."""
    from uno_mk_env import actions as A
    from uno_mk_env.agents import make_agent
    from uno_mk_env.agents.base import agent_action

    g = two_player("RS R1", catch)
    do(g, "PLAY(RS)")
    action = agent_action(make_agent(spec, seed=0), g)
    assert action in (A.ACCEPT, A.CATCH_UNO)
    if spec != "random":
        assert action == A.CATCH_UNO
