"""The OpenSpiel game's chance (``uno_mk_env.envs.openspiel``, ``chance="explicit"``, the default):
the dealer (R3.1), every card dealt (R3.2), every start-card flip (R3.3), every card drawn and
the Wild Item Box flip (R7.1) are chance nodes whose outcomes are the draw pile's kinds by their
counts. So OpenSpiel's ``random_sim_test(serialize=True)`` passes, Shimmy's wrapper deals a new
game on each seeded reset, and OpenSpiel's algorithms that sample chance nodes run.

The module is skipped without pyspiel (failed under CI), as tests/test_openspiel.py is; the
Shimmy test is skipped without shimmy.
"""

from __future__ import annotations

import importlib.util
import os
from collections import Counter

import numpy as np
import pytest

if importlib.util.find_spec("pyspiel") is None:
    if os.environ.get("CI"):
        pytest.fail("pyspiel is not installed, and CI must run the OpenSpiel tests: the 'test' "
                    "extra brings it (make test)", pytrace=False)
    pytest.skip("pyspiel is not installed (pip install -e '.[openspiel]'); make test installs it "
                "and runs these tests", allow_module_level=True)

import pyspiel  # noqa: E402
from open_spiel.python.algorithms import (  # noqa: E402
    evaluate_bots,
    mcts,
    outcome_sampling_mccfr,
)

from uno_mk_env import IllegalActionError, Rules, StateError  # noqa: E402
from uno_mk_env import actions as A  # noqa: E402
from uno_mk_env.agents.openspiel_bots import EngineRandomRollout, ISMCTSBot  # noqa: E402
from uno_mk_env.engine.cards import DECK, NUM_CARDS, W4, kind  # noqa: E402
from uno_mk_env.envs import openspiel as uos

CHANCE = pyspiel.PlayerId.CHANCE
SHORT = 100  # decisions: uniformly random play rarely ends a default game quickly (R4.2)


def _load(players: int, **params: object) -> pyspiel.Game:
    return pyspiel.load_game(uos.GAME_NAME, {"players": players, **params})


def _pile_outcomes(pile: list[int]) -> list[tuple[int, float]]:
    """The chance outcomes a draw pile gives: each kind with its count / the pile's size."""
    return [(k, c / len(pile)) for k, c in sorted(Counter(pile).items())]


#: Dealer 0 deals seat 1 GD WB R8 and seat 0 R5 R3 R2, one at a time from seat 1; start card
#: G4, so seat 1 starts and may play GD or WB (three cards each: no UNO call in the way).
_HANDS = ["GD", "R5", "WB", "R3", "R8", "R2", "G4"]


def _deal(state: pyspiel.State, dealer: int, cards: list[str]) -> None:
    """Applies the chance outcomes ``dealer`` then ``cards`` (codes), each checked possible."""
    for outcome in [uos.DEALER_BASE + dealer, *(kind(c) for c in cards)]:
        assert state.is_chance_node()
        assert outcome in dict(state.chance_outcomes())
        state.apply_action(outcome)


# ------------------------------------------------------------------------------ the forms
def test_explicit_chance_is_the_default_and_sampled_an_option() -> None:
    for n in (2, 4, 10):
        game = _load(n)
        assert game.get_type().chance_mode == pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC
        assert game.max_chance_outcomes() == uos.DEALER_BASE + n == 54 + n
        sampled = _load(n, chance="sampled", seed=3)
        assert sampled.get_type().chance_mode == pyspiel.GameType.ChanceMode.SAMPLED_STOCHASTIC
        assert sampled.max_chance_outcomes() == 0
        assert not sampled.new_initial_state().is_chance_node()
    with pytest.raises(uos.RulesError, match="seed=5 is not allowed with chance='explicit'"):
        _load(2, seed=5)
    with pytest.raises(uos.RulesError, match="chance='dice' is not allowed"):
        _load(2, chance="dice")


# ------------------------------------------------------------------------ one node per thing
def test_the_dealer_is_a_chance_node_each_seat_equally_likely() -> None:
    """R3.1: the first node chooses round 1's dealer; the deal starts at the dealer's left."""
    for n in (2, 5):
        state = _load(n).new_initial_state()
        assert state.current_player() == CHANCE
        assert state.chance_outcomes() == [(uos.DEALER_BASE + s, 1 / n) for s in range(n)]
        assert state.observation_string(0) == "before the deal"
        assert not np.any(state.observation_tensor(0))
        with pytest.raises(StateError, match="before round 1 is dealt"):
            state.engine  # noqa: B018
        state.apply_action(uos.DEALER_BASE + n - 1)
        assert state.is_chance_node()
        with pytest.raises(StateError, match="before round 1 is dealt"):
            state.engine  # noqa: B018
        while state.is_chance_node():
            state.apply_action(state.chance_outcomes()[0][0])
        assert state.engine.dealer == n - 1


def test_each_dealt_card_is_a_chance_node_with_the_pile_counts() -> None:
    """R3.2: every card dealt is a chance node over the kinds left, each with count / cards
    left, given one at a time from the dealer's left."""
    n, h = 3, 4
    state = _load(n, hand_size=h).new_initial_state()
    state.apply_action(uos.DEALER_BASE + 1)
    pile = list(DECK)
    rng = np.random.default_rng(1)
    dealt: list[list[int]] = [[] for _ in range(n)]
    for i in range(n * h):
        outcomes = state.chance_outcomes()
        assert outcomes == _pile_outcomes(pile)
        assert abs(sum(p for _, p in outcomes) - 1.0) < 1e-12
        card = int(pile[rng.integers(len(pile))])
        state.apply_action(card)
        pile.remove(card)
        dealt[(1 + 1 + i) % n].append(card)
    assert len(pile) == NUM_CARDS - n * h
    assert state.chance_outcomes() == _pile_outcomes(pile)  # the start card's flip (R3.3)
    state.apply_action(kind("G4"))
    g = state.engine
    assert not state.is_chance_node() and g.top_card == kind("G4")
    for seat in range(n):
        assert g.hand(seat) == [dealt[seat].count(k) for k in range(54)]
    assert sorted(g.draw_pile) == sorted(pile[:pile.index(kind("G4"))]
                                         + pile[pile.index(kind("G4")) + 1:])


def test_a_wild_draw_four_flipped_at_the_start_goes_back_and_is_flipped_again() -> None:
    """R3.3: a W4 start card is put back; the next flip is a chance node with it counted."""
    state = _load(2, hand_size=1).new_initial_state()
    _deal(state, 0, ["R1", "R2"])
    before = state.chance_outcomes()
    state.apply_action(W4)
    assert state.is_chance_node() and state.chance_outcomes() == before
    state.apply_action(kind("B5"))
    assert not state.is_chance_node() and state.engine.top_card == kind("B5")


def test_a_draw_is_a_chance_node_per_card() -> None:
    """R4.2 and R5: a voluntary draw waits for one card, a Draw Two for two; the seat observes
    the game before the pending action until its cards are decided."""
    state = _load(2, hand_size=3).new_initial_state()
    _deal(state, 0, _HANDS)
    g = state.engine
    assert g.current_player == 1 and kind("GD") in state.legal_actions()
    before = state.observation_string(1)
    pile = list(g.draw_pile)
    state.apply_action(kind("GD"))  # seat 0 draws 2 and is skipped (R5)
    for card in ("Y1", "WB"):
        assert state.is_chance_node()
        assert state.observation_string(1) == before  # the pending play is not yet done
        assert state.chance_outcomes() == _pile_outcomes(pile)
        state.apply_action(kind(card))
        pile.remove(kind(card))
    g = state.engine
    assert not state.is_chance_node() and g.current_player == 1
    assert sorted(g.draw_pile) == sorted(pile)
    assert {c for c in range(54) if g.hand(0)[c]} == {kind(c) for c in
                                                      ("R5", "R3", "R2", "Y1", "WB")}
    state.apply_action(A.DRAW)
    assert state.is_chance_node()
    assert state.chance_outcomes() == _pile_outcomes(state.engine.draw_pile)
    state.apply_action(kind("B9"))
    assert state.engine.hand(1)[kind("B9")] == 1


def test_the_item_box_flip_is_a_chance_node() -> None:
    """R7.1: the card flipped onto a Wild Item Box is a chance node; its item fires (a red
    card's Mushroom: the player goes again)."""
    state = _load(2, hand_size=3).new_initial_state()
    _deal(state, 0, _HANDS)
    state.apply_action(kind("WB"))
    assert state.is_chance_node()
    assert state.chance_outcomes() == _pile_outcomes(state.engine.draw_pile)
    state.apply_action(kind("R9"))
    g = state.engine
    assert not state.is_chance_node()
    assert g.top_card == kind("R9") and g.current_player == 1  # Mushroom: another turn
    assert ("flip", 1, kind("R9")) in g.events


def test_an_impossible_outcome_is_refused_and_the_state_unchanged() -> None:
    state = _load(2, hand_size=1).new_initial_state()
    with pytest.raises(IllegalActionError, match="chance outcome 3 is not possible"):
        state.apply_action(3)
    _deal(state, 0, ["R1"])
    state.apply_action(kind("R1"))  # the second and last R1
    text = str(state)
    with pytest.raises(IllegalActionError, match=f"chance outcome {kind('R1')} is not"):
        state.apply_action(kind("R1"))
    assert str(state) == text


def test_the_explicit_deals_follow_the_shuffle_distribution() -> None:
    """Sampling every chance node by its probabilities deals as the engine's shuffle does: over
    600 two-card deals, seat 1's first card is a wild (12 of 112 cards) about 10.7 % of the
    time, each seat dealing about half."""
    game = _load(2, hand_size=1)
    rng = np.random.default_rng(0)
    wild = dealer0 = 0
    runs = 600
    for _ in range(runs):
        state = game.new_initial_state()
        first = None
        while state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes())
            outcome = int(outcomes[rng.choice(len(outcomes), p=probs)])
            if first is None:
                dealer0 += outcome == uos.DEALER_BASE
                first = -1
            elif first == -1:
                first = outcome
                wild += outcome >= W4
            state.apply_action(outcome)
    assert abs(wild / runs - 12 / 112) < 0.04  # ~3.2 standard errors
    assert abs(dealer0 / runs - 0.5) < 0.07


# ------------------------------------------------------------------------ OpenSpiel's tools
@pytest.mark.parametrize("players", [2, 3, 4, 10])
def test_random_sim_test_with_serialisation(players: int) -> None:
    """OpenSpiel's conformance test, ``serialize=True``: pyspiel's
    ``serialize_game_and_state`` round trip at every state, chance nodes included."""
    game = _load(players, max_game_length=SHORT)
    pyspiel.random_sim_test(game, num_sims=2, serialize=True, verbose=False)


@pytest.mark.slow
@pytest.mark.parametrize("players", [2, 4])
def test_random_sim_test_with_serialisation_full_length(players: int) -> None:
    game = _load(players)
    pyspiel.random_sim_test(game, num_sims=2, serialize=True, verbose=False)


def test_shimmy_deals_a_new_game_on_each_seeded_reset() -> None:
    """Shimmy's ``OpenSpielCompatibilityV0`` reloads the game on reset and samples its chance
    nodes with the reset's seed: the same seed deals the same game, other seeds other games."""
    shimmy = pytest.importorskip("shimmy", reason="shimmy is not installed (pip install shimmy)")
    from pettingzoo.test import api_test

    env = shimmy.OpenSpielCompatibilityV0(game_name=uos.GAME_NAME,
                                          config={"players": 3, "max_game_length": 50})
    deals = []
    for seed in (1, 2, 3, 1):
        env.reset(seed=seed)
        deals.append(env.game_state.engine.to_dict()["hands"])
    assert deals[0] == deals[3]
    assert deals[0] != deals[1] and deals[1] != deals[2] and deals[0] != deals[2]
    api_test(env, num_cycles=30)


def test_mcts_and_ismcts_sample_the_chance_nodes_through_evaluate_bots() -> None:
    """OpenSpiel's MCTS (which samples chance nodes in its tree) and IS-MCTS play whole games
    from the chance root, the deal included; returns are the game's."""
    game = _load(2, hand_size=2, max_game_length=30)
    rs = np.random.RandomState(0)
    evaluator = mcts.RandomRolloutEvaluator(random_state=rs)
    for bots in ([mcts.MCTSBot(game, 2.0, 4, evaluator, random_state=rs) for _ in range(2)],
                 [ISMCTSBot(game, evaluator, 2.0, 4, random_state=rs) for _ in range(2)]):
        state = game.new_initial_state()
        returns = evaluate_bots.evaluate_bots(state, bots, rs)
        assert state.is_terminal() and returns == state.returns()
        assert abs(sum(returns)) < 1e-9


def test_outcome_sampling_mccfr_runs_over_the_chance_nodes() -> None:
    """Outcome-sampling MCCFR samples chance outcomes by their probabilities: a few iterations
    touch information states and give a policy over them (no claim on its quality: the game is
    far too large for CFR, docs/openspiel.md)."""
    game = _load(2, hand_size=2, max_game_length=10)
    solver = outcome_sampling_mccfr.OutcomeSamplingSolver(game)
    for _ in range(5):
        solver.iteration()
    state = game.new_initial_state()
    while state.is_chance_node():
        state.apply_action(state.chance_outcomes()[0][0])
    probs = solver.average_policy().action_probabilities(state)
    assert set(probs) == set(state.legal_actions()) and abs(sum(probs.values()) - 1) < 1e-9


def test_sample_engine_continues_a_chance_node() -> None:
    """What the engine rollouts step: at a pending action, the action done with random cards
    (the decided ones kept); the state itself untouched."""
    state = _load(2, hand_size=3).new_initial_state()
    _deal(state, 0, _HANDS)
    state.apply_action(kind("GD"))
    state.apply_action(kind("Y1"))  # one of the two cards decided
    text = str(state)
    g = state.sample_engine(np.random.default_rng(0))
    assert str(state) == text
    assert g.hand(0)[kind("Y1")] == 1 and sum(g.hand(0)) == 5 and g.current_player == 1
    dealt = _load(3).new_initial_state().sample_engine(np.random.default_rng(1))
    assert dealt.rules == Rules(num_players=3) and dealt.top_card >= 0 and not dealt.game_over
    assert sum(map(sum, dealt.hands)) + len(dealt.draw_pile) + len(dealt.discard) == NUM_CARDS
    value = EngineRandomRollout(0, max_length=1).evaluate(state)
    assert value.tolist() == [0.0, 0.0]
