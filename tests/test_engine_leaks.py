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
from uno_mk_env.engine.observation import encode


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
    from uno_mk_env.render.text import RecentDecisions, render_game

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


# ------------------------------------------- every channel a seat is shown (issue #24, item 1)
def _r4_2_world(drawn: str) -> Game:
    """3 players, R3 on top; seat 0 will draw ``drawn`` (R7: playable, B7: not)."""
    return make({"rules": {"num_players": 3}, "hands": ["G1 G2", "Y1 Y2 Y3", "B4 B5 B6"],
                 "discard_pile": "R3", "draw_pile": f"{drawn} G9 Y9"})


def _draw_keep(drawn: str):
    """The R4.2 pair of worlds, played through seat 0's turn with a RecentDecisions history."""
    from uno_mk_env.render.text import RecentDecisions

    g = _r4_2_world(drawn)
    history = RecentDecisions()
    history.start(g)
    while g.current_player == 0:
        action = A.DRAW if g.phase == A.PLAY else A.KEEP
        history.before(g)
        g.step(action)
        history.after(action)
    return g, history


def test_r4_2_public_counter_table_data_text_and_image_are_the_same_to_other_seats():
    """R4.2, the issue's case: after seat 0 kept a playable R7 or drew an unplayable B7, the
    public decision counter, the image renderer's table dict (its ``decision``), the text render
    and the image itself are the same for seats 1 and 2 (the omniscient ``num_steps`` is not)."""
    from uno_mk_env.render.image import render_image
    from uno_mk_env.render.table import last_decision_text, table_data
    from uno_mk_env.render.text import render_game

    (kept, h1), (unplayable, h2) = _draw_keep("R7"), _draw_keep("B7")
    assert (kept.num_steps, unplayable.num_steps) == (2, 1)  # the hidden KEEP
    assert kept.public_steps == unplayable.public_steps == 1
    names = ["p0", "p1", "p2"]
    for seat in (1, 2):
        last = [last_decision_text(g, list(h)[-1][1], seat, names) for g, h in
                ((kept, h1), (unplayable, h2))]
        assert last[0] == last[1]
        assert table_data(kept, seat, names, last[0]) == table_data(unplayable, seat, names,
                                                                    last[1])
        assert table_data(kept, seat, names)["decision"] == 1
        text = [render_game(g, seat, names, h, step=g.public_steps)
                for g, h in ((kept, h1), (unplayable, h2))]
        assert text[0] == text[1] and "decision 1" in text[0]
        assert np.array_equal(render_image(kept, seat, names, h1),
                              render_image(unplayable, seat, names, h2))


def _aec_world(drawn: str, **kwargs):
    """``uno_mario_kart_v0.env`` playing the R4.2 worlds (the game injected after ``reset``)."""
    from uno_mk_env import uno_mario_kart_v0

    env = uno_mario_kart_v0.env(num_players=3, **kwargs)
    env.reset(seed=0)
    env._game = _r4_2_world(drawn)
    env._history.start(env._game)
    env._select_decider()
    return env


def _aec_public(env, seat: int) -> tuple:
    """What ``player_{seat}`` is shown by the AEC env (besides its observation)."""
    agent = f"player_{seat}"
    info = {k: (v.tolist() if isinstance(v, np.ndarray) else v)
            for k, v in env.infos[agent].items()}
    flags = (env.terminations[agent], env.truncations[agent], env._cumulative_rewards[agent])
    return env.agent_selection, info, flags, env.observe(agent)["observation"].tolist()


@pytest.mark.parametrize("cap", [1, 2, None])
def test_r4_2_aec_env_render_infos_and_truncation_are_the_same_to_other_seats(cap):
    """R4.2 at the AEC env: the ANSI render from seat 1's seat and every other seat's
    ``infos``/flags/observation are the same after a kept or an unplayable draw, and the step
    cap truncates both worlds at the same public moment: ``max_steps=1`` right after the draw
    (not in the middle of the kept card's play_drawn decision), ``max_steps=2`` after seat 1's
    decision (the hidden KEEP is not counted)."""
    worlds = [_aec_world(card, render_mode="ansi", render_seat=1, max_steps=cap)
              for card in ("R7", "B7")]
    for env in worlds:
        while env.game.current_player == 0 and not any(env.truncations.values()):
            mask = env.observe("player_0")["action_mask"]
            env.step(A.KEEP if mask[A.KEEP] else A.DRAW)
    kept, unplayable = worlds
    assert kept.game.num_steps == 2 and unplayable.game.num_steps == 1
    assert kept.render() == unplayable.render()
    for seat in (1, 2):
        assert _aec_public(kept, seat) == _aec_public(unplayable, seat)
    assert all(kept.truncations.values()) == (cap == 1)
    if cap != 1:
        for env in worlds:
            env.step(A.DRAW)  # seat 1: the second public decision
            assert all(env.truncations.values()) == (cap == 2)
    images = [_aec_world(card, render_mode="rgb_array", render_seat=1) for card in ("R7", "B7")]
    for env in images:
        env.step(A.DRAW)
        if env.agent_selection == "player_0":
            env.step(A.KEEP)
    assert np.array_equal(images[0].render(), images[1].render())


def test_r4_2_gymnasium_wrapper_render_info_and_truncation_are_the_same():
    """R4.2 at the Gymnasium wrapper (learner at seat 1, seat 0 an opponent that draws and
    keeps): the learner's render, info and observation, and the ``max_steps`` truncation, do not
    depend on whether seat 0's drawn card was playable."""
    from uno_mk_env.engine.observation import encode as encode_view
    from uno_mk_env.envs.gym_env import UnoMarioKartGymEnv
    from uno_mk_env.envs.learner import play_opponents

    def draw_then_keep(observation, mask):
        return A.KEEP if mask[A.KEEP] else A.DRAW

    def world(drawn: str, max_steps: int):
        env = UnoMarioKartGymEnv(num_players=3, opponents=draw_then_keep, learner_seat=1,
                                 render_mode="ansi", render_seat="learner", max_steps=max_steps)
        env.reset(seed=0)
        seat = env._learner
        seat._game, seat.seat, seat.steps, seat.over = _r4_2_world(drawn), 1, 0, False
        env._history.start(seat.game)
        play_opponents([seat])
        return env

    for cap in (1, 2):
        kept, unplayable = world("R7", cap), world("B7", cap)
        assert kept.game.num_steps == 2 and unplayable.game.num_steps == 1  # the KEEP is made
        assert kept._learner.over == unplayable._learner.over == (cap == 1)
        assert kept.render() == unplayable.render()
        a, b = kept._info(kept.game), unplayable._info(unplayable.game)
        assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)
        assert np.array_equal(encode_view(kept.game.view(1)), encode_view(unplayable.game.view(1)))
