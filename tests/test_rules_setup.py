"""Scenario tests for the setup of a round (docs/rules.md R3).

Deals are random, so each start-card scenario scans seeds deterministically for a deal that
flips the wanted card, then checks its consequences.
"""

from __future__ import annotations

import contextlib
import signal

import numpy as np
import pytest
from scenario import (
    colour,
    discard_pile,
    do,
    draw_pile,
    events_of,
    find_game,
    hand_sizes,
    legal_names,
    make,
    start_cards,
    top,
)

from uno_mk_env import Game, Rules
from uno_mk_env.engine.cards import DECK, NUM_CARDS, W4

COLOURS = {"COLOUR(R)", "COLOUR(Y)", "COLOUR(G)", "COLOUR(B)"}


def _starts_with(pred):
    return lambda g: pred(start_cards(g)[0])


def _is_number(code: str) -> bool:
    return code[0] in "RYGB" and code[1].isdigit()


def _replay_shuffle(rules: Rules, seed: int) -> tuple[int, list[int]]:
    """The dealer and shuffled deck a fresh ``Game(rules, seed)`` uses (one seeded generator
    per game, docs/api.md#randomness: dealer drawn first, then the deck shuffled)."""
    rng = np.random.default_rng(seed)
    dealer = rng.integers(rules.num_players).item()
    pile = list(DECK)
    rng.shuffle(pile)
    return dealer, pile


# ------------------------------------------------------------------------------- R3.1, R3.2


def test_r3_1_first_dealer_is_random_but_seeded():
    """R3.1: the same seed gives the same dealer and deal; seeds vary the dealer."""
    rules = Rules(num_players=4)
    assert Game(rules, seed=11).to_dict() == Game(rules, seed=11).to_dict()
    dealers = {Game(rules, seed=s).dealer for s in range(40)}
    assert dealers == {0, 1, 2, 3}


def test_r3_2_deal_seven_each_one_at_a_time_from_the_dealers_left():
    """R3.2: 7 cards each, dealt one at a time starting left of the dealer; the rest is the
    draw pile."""
    rules = Rules(num_players=4)
    seed = next(s for s in range(3000) if _is_number(start_cards(Game(rules, seed=s))[0]))
    g = Game(rules, seed=seed)
    dealer, pile = _replay_shuffle(rules, seed)
    assert g.dealer == dealer
    expected = [[0] * 54 for _ in range(4)]
    for _ in range(7):
        for j in range(1, 5):
            expected[(dealer + j) % 4][pile.pop()] += 1
    assert [g.hand(s) for s in range(4)] == expected
    assert hand_sizes(g) == [7, 7, 7, 7]
    assert len(draw_pile(g)) == NUM_CARDS - 28 - 1
    assert len(discard_pile(g)) == 1


def test_r3_2_hand_size_option_deals_that_many():
    """R3.2 option hand_size: every player is dealt hand_size cards."""
    g = find_game(Rules(num_players=3, hand_size=3), _starts_with(_is_number))
    assert hand_sizes(g) == [3, 3, 3]
    assert len(draw_pile(g)) == NUM_CARDS - 9 - 1


# ----------------------------------------------------------------------------------- R3.3


def test_r3_3_number_start_card_left_of_dealer_starts():
    """R3.3: a number card: the player left of the dealer starts, clockwise."""
    g = find_game(Rules(num_players=4), _starts_with(_is_number))
    assert start_cards(g) == [top(g)]
    assert (g.current_player, g.direction, g.phase_name) == ((g.dealer + 1) % 4, 1, "play")
    assert colour(g) == top(g)[0]
    assert hand_sizes(g) == [7, 7, 7, 7]


def test_r3_3_skip_start_card_skips_left_of_dealer():
    """R3.3: a Skip: the player left of the dealer is skipped; dealer+2 starts."""
    g = find_game(Rules(num_players=4), _starts_with(lambda c: c[1:] == "S"))
    assert (g.current_player, g.direction, g.phase_name) == ((g.dealer + 2) % 4, 1, "play")
    assert events_of(g, "skip") == [("skip", (g.dealer + 1) % 4)]
    assert hand_sizes(g) == [7, 7, 7, 7]


def test_r3_3_reverse_start_card_dealer_plays_first_counter_clockwise():
    """R3.3: a Reverse: direction becomes -1 and the dealer plays first."""
    g = find_game(Rules(num_players=4), _starts_with(lambda c: c[1:] == "R"))
    assert (g.current_player, g.direction, g.phase_name) == (g.dealer, -1, "play")
    assert hand_sizes(g) == [7, 7, 7, 7]


def test_r3_3_draw_two_start_card_left_of_dealer_draws_two_and_is_skipped():
    """R3.3: a Draw Two: the player left of the dealer draws 2 and is skipped."""
    g = find_game(Rules(num_players=4), _starts_with(lambda c: c[1:] == "D"))
    left = (g.dealer + 1) % 4
    assert (g.current_player, g.direction, g.phase_name) == ((g.dealer + 2) % 4, 1, "play")
    assert hand_sizes(g) == [9 if s == left else 7 for s in range(4)]
    assert len(draw_pile(g)) == NUM_CARDS - 28 - 1 - 2


def test_r3_3_item_box_start_card_dealer_names_colour_then_left_starts():
    """R3.3: a WB: no item fires; the dealer names the colour, the player left of the dealer
    starts (start_item_box_chooser="dealer")."""
    g = find_game(Rules(num_players=4), _starts_with(lambda c: c == "WB"))
    assert (g.current_player, g.phase_name) == (g.dealer, "choose_colour")
    assert legal_names(g) == COLOURS
    assert not events_of(g, "flip") and not events_of(g, "item")
    assert discard_pile(g) == ["WB"] and hand_sizes(g) == [7, 7, 7, 7]
    do(g, "COLOUR(G)")
    assert (colour(g), top(g)) == ("G", "WB")
    assert (g.current_player, g.direction, g.phase_name) == ((g.dealer + 1) % 4, 1, "play")
    assert hand_sizes(g) == [7, 7, 7, 7]


def test_r3_3_item_box_start_card_first_player_chooser_option():
    """R3.3 option start_item_box_chooser="first_player": the player left of the dealer names
    the colour and then starts."""
    rules = Rules(num_players=4, start_item_box_chooser="first_player")
    g = find_game(rules, _starts_with(lambda c: c == "WB"))
    left = (g.dealer + 1) % 4
    assert (g.current_player, g.phase_name) == (left, "choose_colour")
    assert legal_names(g) == COLOURS
    do(g, "COLOUR(B)")
    assert (colour(g), g.current_player, g.phase_name) == ("B", left, "play")
    assert hand_sizes(g) == [7, 7, 7, 7]


def test_r3_3_wild_draw_four_start_card_is_put_back_and_reshuffled():
    """R3.3: a W4 flipped to start goes back into the draw pile, which is reshuffled, and
    another card is flipped."""
    rules = Rules(num_players=4)
    for seed in range(3000):
        _, pile = _replay_shuffle(rules, seed)
        if pile[len(pile) - 28 - 1] == W4:  # the card flipped after dealing 4 x 7 from the end
            break
    else:
        raise AssertionError("no seed flips a W4 first")
    g = Game(rules, seed=seed)
    assert top(g) != "W4" and len(discard_pile(g)) == 1
    assert start_cards(g) == [top(g)]
    d = g.to_dict()
    w4s_in_hands = sum(h.count("W4") for h in d["hands"])
    assert d["draw_pile"].count("W4") == 4 - w4s_in_hands  # the W4 is back in the draw pile
    assert len(d["draw_pile"]) == NUM_CARDS - 28 - 1


def test_r3_3_never_starts_on_a_wild_draw_four():
    """R3.3: over many deals the start card is never a W4."""
    assert all(top(Game(Rules(num_players=3), seed=s)) != "W4" for s in range(200))


def test_r3_3_reflip_option_buries_action_start_card_and_flips_again():
    """R3.3 option start_action_cards="reflip": a coloured action card stays in the discard
    pile, another card is flipped onto it and no action applies; left of the dealer starts."""
    rules = Rules(num_players=4, start_action_cards="reflip")
    g = find_game(rules, lambda g: len(start_cards(g)) == 2 and _is_number(start_cards(g)[1])
                  and start_cards(g)[0][1:] in ("S", "D"))
    first, second = start_cards(g)
    assert discard_pile(g) == [first, second]
    assert (top(g), colour(g)) == (second, second[0])
    assert (g.current_player, g.direction, g.phase_name) == ((g.dealer + 1) % 4, 1, "play")
    assert hand_sizes(g) == [7, 7, 7, 7]
    assert not events_of(g, "skip")


def test_r3_3_reflip_option_ignores_a_reverse():
    """R3.3 option start_action_cards="reflip": a Reverse start card does not reverse."""
    rules = Rules(num_players=4, start_action_cards="reflip")
    g = find_game(rules, lambda g: start_cards(g)[0][1:] == "R"
                  and _is_number(start_cards(g)[-1]))
    assert discard_pile(g) == start_cards(g)
    assert (g.current_player, g.direction) == ((g.dealer + 1) % 4, 1)


class _RiggedRng:
    """A stand-in generator for a rigged deal: its first ``shuffle`` puts the deck in the given
    order (the draw pile's top is the list's end), later calls shuffle for real."""

    def __init__(self, deck: list[int], seed: int = 0) -> None:
        self._deck = deck
        self._real = np.random.default_rng(seed)

    def shuffle(self, pile: list[int]) -> None:
        if self._deck is not None:
            assert sorted(pile) == sorted(self._deck)
            pile[:] = self._deck
            self._deck = None
        else:
            self._real.shuffle(pile)

    def integers(self, *args, **kwargs):
        return self._real.integers(*args, **kwargs)


def _rigged_deal(rules: Rules, undealt: list[str], dealer: int = 0, seed: int = 0) -> Game:
    """A round dealt from a deck whose undealt cards are ``undealt`` (flipped from the end)."""
    from uno_mk_env.engine.cards import kind

    rest = list(DECK)
    for code in undealt:
        rest.remove(kind(code))
    assert len(undealt) == NUM_CARDS - rules.num_players * rules.hand_size
    g = Game.__new__(Game)
    g._setup(rules, seed)
    rigged = _RiggedRng([kind(c) for c in undealt] + rest, seed)
    g.rng = rigged
    g._deal(dealer)
    g.rng = rigged._real  # to_dict() stores a real generator's state
    return g


def test_r3_3_reflip_ruling_last_action_card_stays_when_only_w4s_are_left():
    """R3.3 ruling: under reflip, when only W4s are left to flip, the last flipped action card
    stays the start card and applies as under "apply" (here a Skip: dealer + 2 starts). Before
    the ruling this deal looped forever (W4 back, reshuffle, W4 again)."""
    rules = Rules(num_players=7, hand_size=15, start_action_cards="reflip")
    g = _rigged_deal(rules, ["W4", "W4", "W4", "W4", "RS", "BR", "GD"], dealer=2)
    assert start_cards(g) == ["GD", "BR", "RS"]
    assert (top(g), colour(g)) == ("RS", "R")
    assert draw_pile(g) == ["W4"] * 4
    assert (g.current_player, g.direction, g.phase_name) == (4, 1, "play")  # dealer 2, 3 skipped
    assert [e[1] for e in events_of(g, "skip")] == [3]
    assert hand_sizes(g) == [15] * 7


def test_r3_3_reflip_ruling_applies_a_draw_two_or_a_reverse_that_stays():
    """R3.3 ruling: the action card that stays applies its effect: a Draw Two makes the player
    left of the dealer draw 2 (here two W4s) and lose the turn; a Reverse lets the dealer start
    counter-clockwise."""
    rules = Rules(num_players=7, hand_size=15, start_action_cards="reflip")
    g = _rigged_deal(rules, ["W4", "W4", "W4", "W4", "YD", "RS", "BR"], dealer=5)
    assert start_cards(g) == ["BR", "RS", "YD"]
    assert (g.current_player, g.direction) == (0, 1)  # 6 drew 2 and was skipped
    assert hand_sizes(g)[6] == 17 and g.hand(6)[W4] >= 2
    g = _rigged_deal(rules, ["W4", "W4", "W4", "W4", "BR", "RS", "YD"], dealer=5)
    assert start_cards(g) == ["YD", "RS", "BR"]
    assert (g.current_player, g.direction) == (5, -1)


@contextlib.contextmanager
def fails_after(seconds: int):
    """A regression to an endless deal fails the test instead of hanging the suite."""
    def timeout(signum, frame):
        raise AssertionError(f"the deal did not end within {seconds} s")

    previous = signal.signal(signal.SIGALRM, timeout)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.mark.parametrize("seed", [65685, 107065, 193889])
def test_r3_3_reflip_deals_that_used_to_hang(seed):
    """R3.3 ruling: the three seeds an outside audit found hanging at 7 × 15 now deal, ending on
    an action card over a pile of W4s only."""
    with fails_after(30):
        g = Game(Rules(num_players=7, hand_size=15, start_action_cards="reflip"), seed=seed)
    assert start_cards(g)[-1][1:] in ("S", "R", "D")
    assert set(draw_pile(g)) == {"W4"}
    assert sum(hand_sizes(g)) + len(draw_pile(g)) + len(discard_pile(g)) == NUM_CARDS


def test_r3_3_every_legal_table_size_deals_under_both_start_options():
    """R3.3: the deal ends for every legal ``num_players × hand_size`` (at most 107 dealt), with
    either start option (a handful of seeds each; the rigged tests above cover the worst case)."""
    from uno_mk_env.engine.rules import MAX_DEALT

    for n in range(2, 11):
        for hand_size in range(1, 16):
            if n * hand_size > MAX_DEALT:
                continue
            for option in ("apply", "reflip"):
                rules = Rules(num_players=n, hand_size=hand_size, start_action_cards=option)
                for seed in range(12):
                    g = Game(rules, seed=seed)
                    assert sum(hand_sizes(g)) + len(draw_pile(g)) + len(discard_pile(g)) == (
                        NUM_CARDS)
                    assert g.phase_name in ("play", "choose_colour")


# ----------------------------------------------------------------- R3.1: the deal passes left


def test_r3_1_next_round_is_dealt_by_the_next_seat_left():
    """R3.1 / R10.3: in a multi-round game each later round's dealer is the previous one + 1
    (wrapping), and every player is dealt 7 new cards."""
    g = make({"rules": {"num_players": 3, "match": "target_score"},
              "hands": ["R5", "G1 G2", "B1 B2"], "discard_pile": "R7", "draw_pile": "Y1 Y2",
              "dealer": 2, "current_player": 0}, seed=3)
    assert g.dealer == 2
    do(g, "PLAY(R5)")
    assert not g.game_over and g.round == 2
    assert g.dealer == 0  # 2 + 1 wraps to seat 0
    assert ("deal", 2, 0) in g.events
    assert _dealt(g, 2) == {0: 7, 1: 7, 2: 7}
    assert sum(hand_sizes(g)) + len(draw_pile(g)) + len(discard_pile(g)) == NUM_CARDS


def _quick_round(d: dict, winner: int) -> dict:
    """``d`` (a ``to_dict()`` between rounds) with a tiny position in which ``winner`` goes out
    by playing R5; rules, round, dealer, scores and the generator are kept."""
    n = len(d["hands"])
    pairs = iter([["G1", "G2"], ["B1", "B2"], ["Y1", "Y2"]])
    hands = [["R5"] if s == winner else next(pairs) for s in range(n)]
    return {**d, "hands": hands, "draw_pile": ["Y3", "Y4"], "discard_pile": ["R7"],
            "active_colour": "R", "current_player": winner, "direction": 1, "phase": "play",
            "colour_context": None, "drawn_card": None, "w4": None, "reveals": [],
            "uno_miss": None, "uno_called": [False] * n}


def _dealt(g: Game, round_: int) -> dict[int, int]:
    """Cards dealt to each seat at the start of ``round_`` (from the event log)."""
    start = next(i for i, e in enumerate(g.events) if e[:2] == ("deal", round_))
    return {e[1]: len(e[2]) for e in g.events[start:] if e[0] == "draw" and e[3] == "deal"}


@pytest.mark.parametrize("match", ["target_score", "fixed_rounds"])
def test_r3_1_dealer_passes_left_each_round(match):
    """R3.1: over successive rounds the dealer moves one seat left every round, and each round
    deals 7 cards to every player."""
    rules = {"num_players": 4, "match": match, "rounds": 5}
    g = make({"rules": rules, "hands": ["R5", "G1 G2", "B1 B2", "Y1 Y2"],
              "discard_pile": "R7", "draw_pile": "Y3 Y4", "dealer": 1}, seed=5)
    do(g, "PLAY(R5)")
    assert (g.round, g.dealer) == (2, 2)
    for round_, dealer in ((3, 3), (4, 0)):
        g = Game.from_dict(_quick_round(g.to_dict(), winner=1))
        do(g, "PLAY(R5)")
        assert not g.game_over
        assert (g.round, g.dealer) == (round_, dealer)
        assert ("deal", round_, dealer) in g.events
        assert _dealt(g, round_) == {0: 7, 1: 7, 2: 7, 3: 7}
