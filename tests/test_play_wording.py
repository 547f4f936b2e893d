"""What a person reads at the table is current and in words (issue 34): ``uno-mk play``'s menu
and the ANSI render name actions in words, never in the engine's notation (``PLAY(B1)``); a hand
a challenge revealed (R6.3) is shown only as far as its cards are still held; UNO is never
offered when no card can follow the call (R8); the game's end gives places and scores in a
sentence."""

from __future__ import annotations

import io
import re

import numpy as np
import pytest
from scenario import do, make

from uno_mk_env import Rules, uno_mario_kart_v0
from uno_mk_env import actions as A
from uno_mk_env.cli.app import main
from uno_mk_env.cli.play import ask
from uno_mk_env.engine.cards import CODES
from uno_mk_env.engine.game import Game
from uno_mk_env.render import known_cards, offered_actions, render_game

#: The engine's action names (``PLAY(R7)``, ``COLOUR(G)``, ``TARGET(+1)``, ``CALL_UNO``, ...)
#: as they would appear in text meant for a person.
ENGINE_NOTATION = re.compile(
    r"\b(?:PLAY|COLOUR|TARGET)\([^)]*\)|\b(?:DRAW|KEEP|CHALLENGE|ACCEPT|CALL_UNO|CATCH_UNO)\b")
#: How a finished game ends for the person (cli/play.py result_text).
RESULT = re.compile(
    r"Game over: (?:nobody won \(stalemate\)\. )?you (?:won|finished (?:joint )?\d+(?:st|nd|rd|th))"
    r" with \d+ points?; .+\.")


def play(argv: list[str], answer: str = "1", limit: int = 5000) -> str:
    """``uno-mk play`` to the end (or ``limit`` prompts), always answering ``answer``."""
    asked = 0

    def input_fn(prompt: str) -> str:
        nonlocal asked
        asked += 1
        return answer if asked < limit else "q"

    out, err = io.StringIO(), io.StringIO()
    assert main(["play", *argv], input_fn=input_fn, stdout=out, stderr=err) == 0, err.getvalue()
    return out.getvalue()


def test_the_engine_notation_pattern_would_notice_it() -> None:
    assert ENGINE_NOTATION.search("   3) PLAY(B1)") and ENGINE_NOTATION.search("CALL_UNO")
    assert ENGINE_NOTATION.search("choices: DRAW; KEEP")
    assert not ENGINE_NOTATION.search("play Blue 1 [B1]; draw a card; call UNO!; UNO")


@pytest.mark.parametrize("seed, players, opponents", [
    (5, 3, "greedy,strategic"), (11, 2, "strategic"), (3, 4, "random"), (8, 5, "greedy")])
def test_play_speaks_in_words_and_ends_with_a_sentence(seed: int, players: int,
                                                       opponents: str) -> None:
    out = play(["--opponents", opponents, "--players", str(players), "--seed", str(seed)])
    assert out.count("Your choices:") > 3
    assert ENGINE_NOTATION.search(out) is None, ENGINE_NOTATION.search(out)
    menu = [line for line in out.splitlines() if re.match(r"\s+\d+\) ", line)]
    cards = [line for line in menu if re.match(r"\s+\d+\) play ", line)]
    assert cards and all(re.search(r"play [A-Z][a-z]+.* \[(?:[RYGB][0-9SRD]|W4|WB)\]$", line)
                         for line in cards), cards
    last = out.rstrip().splitlines()[-1]
    assert RESULT.fullmatch(last), last
    assert "[" not in last and "Final scores" not in out


def test_a_match_to_a_target_score_ends_with_every_seat_placed() -> None:
    out = play(["--opponents", "greedy,strategic", "--seed", "2", "--rounds-to-500", "--rule",
                "target_score=150"])
    last = out.rstrip().splitlines()[-1]
    assert RESULT.fullmatch(last), last
    assert "P1:greedy" in last and "P2:strategic" in last


def test_the_ansi_render_speaks_in_words_at_every_step() -> None:
    env = uno_mario_kart_v0.env(num_players=4, render_mode="ansi", uno_catch="next_player")
    env.reset(seed=42)
    rendered = 0
    for _ in env.agent_iter():
        observation, _, termination, truncation, _ = env.last()
        text = env.render()
        assert ENGINE_NOTATION.search(text) is None, text
        rendered += "Your choices:" in text
        action = None if termination or truncation else int(
            env.np_random.choice(observation["action_mask"].nonzero()[0]))
        env.step(action)
    assert rendered > 100


# ----------------------------------------------------------------- a revealed hand (R6.3)
def _challenged_legal_w4() -> Game:
    """Seat 0 plays a legal W4 (no red held, red active) holding G5 G7 and names green; seat 1
    challenges and sees G5 G7, draws 6 and is skipped; seat 2 plays G1. Seat 0 to play."""
    g = make({"rules": {"uno": "off"}, "hands": ["W4 G5 G7", "Y1 Y2 Y3", "G1 G2 Y5 Y6"],
              "draw_pile": "Y7 Y8 Y9 B1 B2 B3 R3 R4 R5 B6", "discard_pile": "R9"})
    return do(g, "PLAY(W4)", "COLOUR(G)", "CHALLENGE", "PLAY(G1)")


def _holds(g: Game, seat: int) -> list[str]:
    names = ["P0", "P1", "P2"]
    return [line for line in render_game(g, seat, names).splitlines() if " holds " in line]


def test_a_revealed_hand_shows_only_the_cards_still_held_and_nothing_once_played() -> None:
    g = _challenged_legal_w4()
    assert _holds(g, 1) == ["P0 holds G5 G7 (seen when you challenged their Wild Draw Four)"]
    assert _holds(g, 2) == [] and _holds(g, 0) == []  # only the challenger saw it
    do(g, "PLAY(G5)")  # seat 0 plays one of the cards seat 1 saw
    assert _holds(g, 1) == ["P0 holds G7 (seen when you challenged their Wild Draw Four)"]
    do(g, "DRAW", "PLAY(G2)", "PLAY(G7)")  # seat 1 draws R3 (kept), seat 2 G2, seat 0 wins
    assert g.game_over and g.winner == 0
    assert _holds(g, 1) == []
    assert "showed you" not in render_game(g, 1, ["P0", "P1", "P2"], done=True)


@pytest.mark.parametrize("n", [2, 3, 4])
def test_known_cards_are_always_in_the_hand_now(n: int) -> None:
    """Over random games with many challenges: what a seat is told another seat holds is in
    that hand at every step (never a card played since, never a hand of 0 cards)."""
    rules = Rules(num_players=n, hand_size=4)
    told = 0
    for seed in range(20):
        g, rng = Game(rules, seed=seed), np.random.default_rng(seed)
        while not g.game_over and g.num_steps < 300:  # always challenging makes long games
            for seat in range(n):
                known = known_cards(g, seat)
                if known is None:
                    continue
                told += 1
                held = list(g.to_dict()["hands"][known.seat])
                for code in (CODES[k] for k in known.kinds):
                    assert code in held, (seed, seat, known, g.to_dict()["hands"][known.seat])
                    held.remove(code)
                assert known.others == len(held) >= 0
            legal = g.legal_action_ids()
            challenge = A.CHALLENGE in legal
            g.step(A.CHALLENGE if challenge else int(legal[rng.integers(len(legal))]))
    assert told > 20


# ----------------------------------------------------------------- the UNO call (R8)
def test_uno_is_not_offered_when_no_card_can_follow_the_call() -> None:
    """Two cards, none playable: calling UNO would leave only the draw (three cards then)."""
    g = make({"hands": ["Y1 Y2", "B1 B2 B3"], "draw_pile": "B5 B6 B7", "discard_pile": "R9"})
    view = g.view(0)
    assert A.CALL_UNO in view.legal_actions  # the engine allows it (R8)
    assert offered_actions(view) == (A.DRAW,)
    text = render_game(g, 0, ["P0", "P1"])
    assert "Your choices: draw a card." in text and "UNO" not in text.split("Your choices:")[1]
    said: list[str] = []
    answers = iter(["uno", "1"])
    assert ask(view, ["P0", "P1"], lambda _: next(answers), said.append, text, g.rules) == A.DRAW
    menus = [line for line in said if re.match(r"\s+\d+\) ", line)]
    assert menus == ["   1) draw a card"]
    assert "You cannot call UNO now: you have no card to play after it" in "\n".join(said)


def test_uno_is_offered_with_a_card_to_follow() -> None:
    g = make({"hands": ["R1 Y2", "B1 B2 B3"], "draw_pile": "B5 B6 B7", "discard_pile": "R9"})
    offered = offered_actions(g.view(0))
    assert A.CALL_UNO in offered and any(a < A.DRAW for a in offered)
    assert "call UNO (then play your second-to-last card)" in render_game(g, 0, ["P0", "P1"])


@pytest.mark.parametrize("n", [2, 4])
def test_uno_is_offered_only_with_a_playable_card_in_random_games(n: int) -> None:
    rules = Rules(num_players=n)
    offered_calls = 0
    for seed in range(20):
        g, rng = Game(rules, seed=seed), np.random.default_rng(seed)
        while not g.game_over and g.num_steps < 400:
            offered = offered_actions(g.view(g.current_player))
            if A.CALL_UNO in offered:
                offered_calls += 1
                assert any(a < A.DRAW for a in offered), (seed, offered)
            legal = g.legal_action_ids()
            g.step(int(legal[rng.integers(len(legal))]))
    assert offered_calls > 10
