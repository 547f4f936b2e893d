"""Leak tests over pairs of hidden worlds (docs/api.md#observation, R4.2).

Two games that differ only in cards a seat cannot see must look the same to that seat: its
``PlayerView``, its filtered event log (``events_for``) and its observation vector. The case that
matters most is a voluntary draw: a player who draws a playable card and keeps it must be
indistinguishable, after the turn, from one whose card was not playable.
"""

from __future__ import annotations

import numpy as np
import pytest
from scenario import do, make

from uno_mk_env import PRESETS, Game, Rules
from uno_mk_env import actions as A
from uno_mk_env.observation import encode


def _assert_same_to_others(a: Game, b: Game, hidden_from: set[int], context: str) -> None:
    for seat in hidden_from:
        assert a.view(seat) == b.view(seat), f"{context}: view({seat}) differs"
        assert a.events_for(seat) == b.events_for(seat), f"{context}: events_for({seat}) differs"
        assert np.array_equal(encode(a.view(seat)), encode(b.view(seat))), (
            f"{context}: observation of seat {seat} differs")


def test_r4_2_keeping_a_playable_drawn_card_looks_like_drawing_an_unplayable_one():
    """R4.2: seat 0 draws R7 (playable on R3) and keeps it, or draws B7 (not playable); after
    the turn seats 1 and 2 see the same view, event log and observation."""
    def world(drawn: str) -> Game:
        return make({"rules": {"num_players": 3}, "hands": ["G1 G2", "Y1 Y2 Y3", "B4 B5 B6"],
                     "discard_pile": "R3", "draw_pile": f"{drawn} G9 Y9"})

    kept, unplayable = world("R7"), world("B7")
    do(kept, "DRAW")
    assert kept.phase_name == "play_drawn"
    do(kept, "KEEP")
    do(unplayable, "DRAW")
    assert kept.current_player == unplayable.current_player == 1
    assert ("keep", 0) in kept.events  # the omniscient log keeps the decision
    assert ("keep", 0) in kept.events_for(0)
    _assert_same_to_others(kept, unplayable, {1, 2}, "after the turn")


def _twin(g: Game, i: int) -> Game:
    """``g`` with the draw pile's top card swapped with the ``i``-th from the top (hidden from
    every seat)."""
    twin = g.clone()
    pile = twin.draw_pile
    pile[-1], pile[-1 - i] = pile[-1 - i], pile[-1]
    return twin


def _draw_and_keep(g: Game) -> bool:
    """The decider draws; if the card may be played it is kept. True if it was playable."""
    g.step(A.DRAW)
    if g.phase == A.PLAY_DRAWN:
        g.step(A.KEEP)
        return True
    return False


CASES = [(name, n) for name in PRESETS for n in (2, 3, 4, 7, 10)]


@pytest.mark.parametrize(("preset", "n"), CASES, ids=[f"{p}-{n}p" for p, n in CASES])
def test_a_kept_draw_and_an_unplayable_draw_are_the_same_to_everyone_else(preset, n):
    """Along random games, whenever the decider may draw, swap the draw pile's top card with a
    hidden card of the other kind (playable vs not): after draw (+ keep) the two worlds differ
    only in what the drawer holds, so every other seat sees the same view, log and observation."""
    rules = Rules(**{**PRESETS[preset], "num_players": n})
    rng = np.random.default_rng(n)
    pairs = 0
    for seed in range(4):
        g = Game(rules, seed=seed)
        while not g.game_over and g.num_steps < 300:
            legal = g.legal_action_ids()
            if A.DRAW in legal and len(g.draw_pile) >= 2 and rng.random() < 0.5:
                base = g.clone()
                playable = _draw_and_keep(base)
                for i in range(1, len(g.draw_pile)):
                    twin = _twin(g, i)
                    if _draw_and_keep(twin) != playable:
                        others = set(range(n)) - {g.current_player}
                        where = f"seed {seed} step {g.num_steps}"
                        _assert_same_to_others(base, twin, others, where)
                        pairs += 1
                        break
            g.step(legal[rng.integers(len(legal))])
    assert pairs > 5


def test_r4_2_the_rendered_table_of_other_seats_is_the_same_too():
    """R4.2 in the text render: the recent-decisions window (here 2 decisions) and its lines are
    the same for seats 1 and 2 whether seat 0 kept a playable card or drew an unplayable one."""
    from uno_mk_env.render import RecentDecisions, render_game

    def world(drawn: str) -> tuple[Game, RecentDecisions]:
        g = make({"rules": {"num_players": 3}, "hands": ["G1 G2", "Y1 Y2 Y3", "B4 B5 B6"],
                  "discard_pile": "R3", "draw_pile": f"{drawn} G9 Y9"})
        history = RecentDecisions(maxlen=2)
        history.start(g)
        while g.current_player == 0:
            action = A.DRAW if g.phase == A.PLAY else A.KEEP
            history.before(g)
            g.step(action)
            history.after(action)
        return g, history

    (kept, h1), (unplayable, h2) = world("R7"), world("B7")
    names = ["p0", "p1", "p2"]
    for seat in (1, 2):
        assert render_game(kept, seat, names, h1) == render_game(unplayable, seat, names, h2)
