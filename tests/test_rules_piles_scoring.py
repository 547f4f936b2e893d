"""Scenario tests for running out of cards (docs/rules.md R9) and scoring / end of game (R10)."""

from __future__ import annotations

import pytest
from scenario import cards, discard_pile, do, draw_pile, events_of, hand_codes, hand_sizes, make

from uno_mk_env import Game
from uno_mk_env.engine.cards import code

# ------------------------------------------------------------------------------------------ R9


def test_r9_reshuffle_keeps_the_top_card():
    """R9: drawing from an empty pile shuffles the discard pile except its top card into a new
    draw pile."""
    g = make({"rules": {"num_players": 3}, "hands": ["G5 B3 Y1", "G1 B1 Y3", "B2 Y4 G8"],
              "discard_pile": "Y2 Y6 G4 B4 R7", "draw_pile": ""})
    do(g, "DRAW")
    assert events_of(g, "reshuffle") == [("reshuffle", 4)]
    assert discard_pile(g) == ["R7"]
    (drawn,) = events_of(g, "draw")[0][2]
    assert len(draw_pile(g)) == 3
    assert cards([code(drawn), *draw_pile(g)]) == cards("Y2 Y6 G4 B4")
    assert hand_codes(g, 0) == cards(["G5", "B3", "Y1", code(drawn)])


def test_r9_penalty_draw_takes_what_exists():
    """R9: a Draw Two with one card left after the reshuffle draws just that card."""
    g = make({"rules": {"num_players": 3}, "hands": ["RD G5 B3", "G1 B1 Y3", "B2 Y4 G8"],
              "discard_pile": "R7", "draw_pile": ""})
    do(g, "PLAY(RD)")
    assert hand_codes(g, 1) == cards("G1 B1 Y3 R7")
    assert discard_pile(g) == ["RD"] and draw_pile(g) == []
    assert g.current_player == 2


def test_r9_voluntary_draw_of_nothing_ends_the_turn():
    """R9: with both piles empty (only the top card) a voluntary draw gets nothing and the turn
    ends."""
    g = make({"rules": {"num_players": 3}, "hands": ["R5 B3 Y1", "G1 B1 Y3", "B2 Y4 G8"],
              "discard_pile": "R7", "draw_pile": ""})
    do(g, "DRAW")
    assert events_of(g, "draw") == [("draw", 0, (), "voluntary")]
    assert hand_codes(g, 0) == cards("R5 B3 Y1")
    assert (g.current_player, g.phase_name, g.round_over) == (1, "play", False)


STALE = {"hands": ["G5 B3", "G1 B1 Y3", "B2 Y4 G8"], "discard_pile": "R7", "draw_pile": ""}


def test_r9_stalemate_after_n_empty_draws_scores_nothing():
    """R9 (stalemate="no_score"): N players in a row drawing nothing end the round unscored."""
    g = make({"rules": {"num_players": 3}, **STALE})
    do(g, "DRAW", "DRAW")
    assert not g.round_over and g.current_player == 2
    do(g, "DRAW")
    assert g.round_over and g.game_over and g.winner is None
    assert g.scores == [0, 0, 0]
    assert events_of(g, "stalemate") == [("stalemate",)]
    assert hand_sizes(g) == [2, 3, 3]


def test_r9_stalemate_count_restarts_after_a_play_or_a_draw():
    """R9: a play (or drawing a card) breaks the row of idle turns."""
    g = make({"rules": {"num_players": 3},
              "hands": ["G5 B3", "G1 B1 Y3", "R2 Y4 G8"], "discard_pile": "R7", "draw_pile": ""})
    do(g, "DRAW", "DRAW", "PLAY(R2)")  # two idle turns, then a play
    do(g, "DRAW")  # the R7 under R2 is reshuffled and drawn (playable on R2)
    assert hand_codes(g, 0) == cards("G5 B3 R7") and g.phase_name == "play_drawn"
    do(g, "KEEP", "DRAW", "DRAW")
    assert not g.round_over and g.current_player == 0
    do(g, "DRAW")
    assert g.game_over and g.winner is None


def test_r9_stalemate_lowest_hand_option_scores_the_lowest_hand():
    """R9 option stalemate="lowest_hand": the lowest hand value wins the others' points."""
    g = make({"rules": {"num_players": 3, "stalemate": "lowest_hand"}, **STALE})
    do(g, "DRAW", "DRAW", "DRAW")
    # hand values: G5 B3 = 8, G1 B1 Y3 = 5, B2 Y4 G8 = 14
    assert g.game_over and g.winner == 1
    assert g.scores == [0, 8 + 14, 0]


def test_r9_stalemate_lowest_hand_tie_scores_nothing():
    """R9 option stalemate="lowest_hand" (engine): a tie for the lowest hand scores nothing."""
    g = make({"rules": {"num_players": 3, "stalemate": "lowest_hand"},
              **{**STALE, "hands": ["G5", "G1 B1 Y3", "B2 Y4 G8"]}})
    do(g, "DRAW", "DRAW", "DRAW")
    assert g.game_over and g.winner is None
    assert g.scores == [0, 0, 0]


# ----------------------------------------------------------------------------------------- R10


def test_r10_2_scoring_example_135():
    """R10.2: 1+3+4+8+9 + Skip + Reverse + Draw Two + W4 = 25 + 60 + 50 = 135."""
    g = make({"rules": {"num_players": 2}, "hands": ["R2", "G1 G3 G4 G8 G9 BS BR BD W4"],
              "discard_pile": "R7", "uno_called": [True, False]})
    do(g, "PLAY(R2)")
    assert g.round_over and g.game_over
    assert (g.winner, g.scores) == (0, [135, 0])
    assert events_of(g, "round_end") == [("round_end", 0, 135, (135, 0))]


def test_r10_2_winner_scores_every_opponents_hand():
    """R10.2: the points of all opponents' hands go to the winner (wilds 50, actions 20)."""
    g = make({"rules": {"num_players": 4}, "hands": ["R2", "WB", "YS Y0", "B9 B9"],
              "discard_pile": "R7", "uno_called": [True, True, False, False],
              "current_player": 0})
    do(g, "PLAY(R2)")
    assert g.scores == [50 + 20 + 0 + 18, 0, 0, 0]


def test_r10_1_round_ends_the_moment_a_hand_is_empty():
    """R10.1: a Skip as the last card ends the round; nothing else happens."""
    g = make({"rules": {"num_players": 3}, "hands": ["RS", "G1", "B2"], "discard_pile": "R7",
              "uno_called": [True, True, True]})
    do(g, "PLAY(RS)")
    assert g.game_over and g.winner == 0 and g.current_player == -1
    assert not events_of(g, "skip")
    assert g.legal_action_ids() == ()


def test_r10_1_draw_two_as_last_card_still_makes_the_next_player_draw():
    """R10.1: a Draw Two as the last card is carried out, and the drawn cards score."""
    g = make({"rules": {"num_players": 3}, "hands": ["RD", "G1 B1 Y3", "B2 Y4 G8"],
              "discard_pile": "R7", "draw_pile": "Y5 Y6 Y7", "uno_called": [True, False, False]})
    do(g, "PLAY(RD)")
    assert g.game_over and g.winner == 0
    assert hand_codes(g, 1) == cards("G1 B1 Y3 Y5 Y6")
    assert g.scores == [5 + 11 + 14, 0, 0]


def _round_end_position(rules: dict, scores: list[int], **extra) -> Game:
    """Seat 0 goes out with R5 (opponents hold 5 + 14 = 19 points)."""
    return make({"rules": {"num_players": 3, **rules}, "hands": ["R5", "G1 B1 Y3", "B2 Y4 G8"],
                 "discard_pile": "R7", "draw_pile": "Y5 Y6", "uno_called": [True, False, False],
                 "scores": scores, **extra}, seed=1)


def test_r10_3_single_round_is_the_whole_game_by_default():
    """R10.3 (match="single_round"): the first round's end ends the game."""
    g = _round_end_position({}, [0, 0, 0])
    do(g, "PLAY(R5)")
    assert g.round_over and g.game_over and g.winner == 0
    assert g.scores == [19, 0, 0]


def test_r10_3_target_score_ends_when_a_player_reaches_500():
    """R10.3 (match="target_score"): reaching 500 ends the game."""
    g = _round_end_position({"match": "target_score"}, [490, 300, 0])
    do(g, "PLAY(R5)")
    assert g.game_over and g.winner == 0
    assert g.scores == [509, 300, 0]


def test_r10_3_target_score_below_target_deals_next_round_scores_persist():
    """R10.3 (match="target_score"): below 500 the next round is dealt by dealer + 1; scores
    persist."""
    g = _round_end_position({"match": "target_score"}, [400, 300, 0], dealer=1)
    do(g, "PLAY(R5)")
    assert g.round_over and not g.game_over and g.winner is None
    assert g.round_winner == 0
    assert g.scores == [419, 300, 0]
    assert (g.round, g.dealer) == (2, 2)
    assert sum(hand_sizes(g)) + len(draw_pile(g)) + len(discard_pile(g)) == 112
    assert all(n >= 7 for n in hand_sizes(g))
    assert g.current_player >= 0 and g.legal_action_ids()


@pytest.mark.parametrize("target, over", [(100, True), (120, False)])
def test_r10_3_target_score_option(target, over):
    """R10.3 option target_score: the game ends when a player reaches that many points."""
    g = _round_end_position({"match": "target_score", "target_score": target}, [81, 0, 0])
    do(g, "PLAY(R5)")
    assert g.scores[0] == 100
    assert g.game_over is over
    assert g.winner == (0 if over else None)


def test_r10_3_fixed_rounds_deals_until_k_rounds_played():
    """R10.3 (match="fixed_rounds", rounds=2): after round 1 the next round is dealt."""
    g = _round_end_position({"match": "fixed_rounds", "rounds": 2}, [0, 0, 0], dealer=2)
    do(g, "PLAY(R5)")
    assert not g.game_over and (g.round, g.dealer) == (2, 0)
    assert g.scores == [19, 0, 0]


def test_r10_3_fixed_rounds_most_points_after_k_rounds_wins():
    """R10.3 (fixed_rounds): after the last round the most points win, not the round winner."""
    g = _round_end_position({"match": "fixed_rounds", "rounds": 2}, [0, 100, 40], round=2)
    do(g, "PLAY(R5)")
    assert g.game_over and g.round_winner == 0
    assert (g.winner, g.scores) == (1, [19, 100, 40])


def test_r10_3_fixed_rounds_tie_for_most_points_has_no_winner():
    """R10.3 (fixed_rounds, engine): a tie for most points gives winner None."""
    g = _round_end_position({"match": "fixed_rounds", "rounds": 3}, [81, 100, 40], round=3)
    do(g, "PLAY(R5)")
    assert g.game_over and g.scores == [100, 100, 40]
    assert g.winner is None


def test_r9_r10_3_stalemate_in_a_target_score_game_deals_the_next_round():
    """R9 + R10.3: an unscored stalemate ends only the round; the next dealer deals."""
    g = make({"rules": {"num_players": 3, "match": "target_score"}, **STALE,
              "scores": [10, 20, 30], "dealer": 0}, seed=2)
    do(g, "DRAW", "DRAW", "DRAW")
    assert g.round_over and not g.game_over and g.round_winner is None
    assert g.scores == [10, 20, 30]
    assert (g.round, g.dealer) == (2, 1)
