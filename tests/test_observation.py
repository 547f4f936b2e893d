"""The observation and state encoders (uno_mk_env.engine.observation): layout, content, bounds,
leaks."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from benchmarks.references import reference_encode
from uno_mk_env import PRESETS, Game, Rules, actions
from uno_mk_env.engine import observation as O
from uno_mk_env.engine.cards import CODES, COPIES, NUM_KINDS, kind

ROOT = Path(__file__).resolve().parents[1]
PLAYER_COUNTS = (2, 3, 4, 10)


def random_states(rules: Rules, seed: int, steps: int, every: int = 1):
    """Yields the games met while playing ``steps`` uniformly random decisions (re-dealing at the
    end of a game), every ``every``-th decision."""
    rng = np.random.default_rng(seed)
    g = Game(rules, seed=seed)
    for i in range(steps):
        if g.game_over:
            g = Game(rules, seed=int(rng.integers(2**31)))
        if i % every == 0:
            yield g
        legal = g.legal_action_ids()
        g.step(legal[rng.integers(len(legal))])


# ----------------------------------------------------------------------------------- layout
def test_layout_pieces_are_contiguous_and_named_once():
    names = [p.name for p in O.OBS_PIECES]
    assert len(names) == len(set(names))
    stops = [O.OBS_SLICES[n].stop for n in names]
    starts = [O.OBS_SLICES[n].start for n in names]
    assert starts == [0] + stops[:-1]
    assert stops[-1] == O.OBS_SIZE == sum(p.size for p in O.OBS_PIECES)
    assert O.observation_high(Rules()).shape == (O.OBS_SIZE,)
    assert O.state_high(Rules()).shape == (O.STATE_SIZE,)


def test_layout_markdown_lists_every_piece_with_its_index_range():
    rows = O.layout_markdown().splitlines()
    assert rows[0].startswith("| indices | name |")
    body = rows[2:-1]
    assert len(body) == len(O.OBS_PIECES)
    for row, piece in zip(body, O.OBS_PIECES):
        s = O.OBS_SLICES[piece.name]
        expected = f"{s.start}" if piece.size == 1 else f"{s.start}–{s.stop - 1}"
        assert row.startswith(f"| {expected} | `{piece.name}` | {piece.size} |")
    assert f"**{O.OBS_SIZE}**" in rows[-1]
    state_rows = O.state_layout_markdown().splitlines()
    assert len(state_rows) == len(O.STATE_PIECES) + 3
    assert f"**{O.STATE_SIZE}**" in state_rows[-1]


def test_encoders_need_neither_gymnasium_nor_pettingzoo():
    """(``import uno_mk_env`` registers with them when they are installed: here they are not.)"""
    code = ("import sys; sys.modules['gymnasium'] = sys.modules['pettingzoo'] = None\n"
            "import uno_mk_env, uno_mk_env.engine.observation, uno_mk_env.render.text\n"
            "from uno_mk_env import Game, Rules\n"
            "g = Game(Rules(num_players=3), seed=1)\n"
            "assert uno_mk_env.engine.observation.encode(g.view(0)).shape == (437,)\n"
            "assert 'player_0' in uno_mk_env.render.text.render_game(\n"
            "g, 0, ['player_0', 'player_1', "
            "'player_2'])")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


# ---------------------------------------------------------------------------------- content
@pytest.mark.parametrize("n", PLAYER_COUNTS)
@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_encode_matches_the_reference_encoder_and_bounds(n, preset):
    rules = Rules(**{**PRESETS[preset], "num_players": n,
                     "match": "target_score", "target_score": 150})
    high = O.observation_high(rules)
    checked = 0
    for g in random_states(rules, seed=n, steps=1500, every=7):
        for seat in range(n):
            view = g.view(seat)
            obs = O.encode(view)
            assert obs.dtype == np.float32 and obs.shape == (O.OBS_SIZE,)
            np.testing.assert_array_equal(obs, reference_encode(view))
            assert (obs >= 0).all() and (obs <= high).all()
            checked += 1
    assert checked > 100


def test_void_evidence_follows_voluntary_draws_and_fades():
    # Seat 1 draws voluntarily facing red (R4.2), then is hit by a Draw Two.
    d = {"rules": {"num_players": 3}, "hands": [["R7", "B1"], ["G2", "Y3"], ["B9", "R2", "G4"]],
         "draw_pile": ["Y6", "Y7", "Y8", "Y9"], "discard_pile": ["R5"], "active_colour": "R",
         "current_player": 1, "direction": 1}
    g = Game.from_dict(d)
    g.step(actions.DRAW)  # Y6: not playable, the turn passes to seat 2
    assert g.view(0).void_evidence == bytes([0, 0, 0, 0, O.VOID_MEMORY, 0, 0, 0, 0, 0, 0, 0])
    ev = O.split(O.encode(g.view(0)))["void_evidence"].reshape(10, 4)
    assert ev[1].tolist() == [O.VOID_MEMORY, 0, 0, 0] and not ev[[0, 2]].any()
    ev2 = O.split(O.encode(g.view(2)))["void_evidence"].reshape(10, 4)
    assert ev2[2].tolist() == [O.VOID_MEMORY, 0, 0, 0]  # seat 1 is two places after seat 2
    g.step(kind("R2"))
    g.step(actions.DRAW)  # seat 0 draws Y7 facing red: not playable
    g.step(kind("G2"))  # seat 1 matches the 2
    g.step(kind("G4"))
    g.step(actions.DRAW)  # seat 0 draws Y8 facing green
    # seat 2 went down to one card without calling UNO: 2 penalty cards (R8), not voluntary
    assert g.view(0).void_evidence[8:12] == bytes(4)
    assert list(g.view(0).void_evidence[0:4]) == [O.VOID_MEMORY - 1, 0, O.VOID_MEMORY, 0]
    ev3 = O.split(O.encode(g.view(1)))["void_evidence"].reshape(10, 4)
    # seat 0 is slot 2 for seat 1: red fades by the one card drawn since, green is fresh
    assert ev3[2].tolist() == [O.VOID_MEMORY - 1, 0, O.VOID_MEMORY, 0]
    assert ev3[0].tolist() == [O.VOID_MEMORY, 0, 0, 0]  # seat 1's own red draw


def test_void_evidence_fades_with_penalty_draws_and_round_trips():
    # Seat 1 holds fresh evidence in red (8) and older in blue (3); a Draw Two costs it 2.
    d = {"rules": {"num_players": 2}, "hands": [["RD", "R1", "B1"], ["G2", "Y3"]],
         "draw_pile": ["Y6", "Y7", "Y8"], "discard_pile": ["R5"], "active_colour": "R",
         "current_player": 0, "direction": 1, "void_evidence": [[0] * 4, [8, 0, 0, 3]]}
    g = Game.from_dict(d)
    assert g.view(0).void_evidence == bytes([0, 0, 0, 0, 8, 0, 0, 3])
    g.step(kind("RD"))  # two players: the victim draws 2 and is skipped
    assert g.view(1).void_evidence == bytes([0, 0, 0, 0, 6, 0, 0, 1])
    assert g.to_dict()["void_evidence"] == [[0, 0, 0, 0], [6, 0, 0, 1]]
    assert Game.from_dict(g.to_dict()) == g
    ev = O.split(O.encode(g.view(0)))["void_evidence"].reshape(10, 4)
    assert ev[1].tolist() == [6, 0, 0, 1]


def test_scores_are_relative_and_scaled():
    d = {"rules": {"num_players": 3}, "hands": [["R7"], ["G2"], ["B9"]],
         "draw_pile": ["B3"], "discard_pile": ["R5"], "active_colour": "R",
         "current_player": 1, "direction": 1, "scores": [10, 250, 0]}
    g = Game.from_dict(d)
    parts = O.split(O.encode(g.view(1)))
    np.testing.assert_allclose(parts["scores"][:3], [2.5, 0.0, 0.1])
    np.testing.assert_array_equal(parts["hand_sizes"], [1, 1, 1, 0, 0, 0, 0, 0, 0, 0])
    np.testing.assert_array_equal(parts["seat_present"], [1, 1, 1, 0, 0, 0, 0, 0, 0, 0])
    assert parts["decider"][0] == 1


def test_fixed_size_for_every_player_count():
    sizes = {O.encode(Game(Rules(num_players=n), seed=1).view(0)).shape for n in range(2, 11)}
    assert sizes == {(O.OBS_SIZE,)}


def test_action_mask_is_the_engines_legal_actions():
    for g in random_states(Rules(num_players=3, uno_catch="next_player"), 5, 800):
        mask = O.action_mask(g.legal_action_ids())
        assert mask.dtype == np.int8 and mask.flags.writeable
        np.testing.assert_array_equal(mask.astype(bool), g.legal_actions())


# ------------------------------------------------------------------------------------ leaks
def _redeal_hidden_from(g: Game, seat: int, rng: np.random.Generator) -> Game:
    """The same position with every card ``seat`` cannot see shuffled among the places it cannot
    see (other hands, draw pile), sizes kept. The card another decider is deciding whether to
    play (``play_drawn``) stays in that hand, as the engine's state requires."""
    d = g.to_dict()
    keep: dict[int, str] = {}
    if d["phase"] == "play_drawn" and d["current_player"] != seat:
        keep[d["current_player"]] = d["drawn_card"]
    pool: list[str] = list(d["draw_pile"])
    sizes = {}
    for s, hand in enumerate(d["hands"]):
        if s == seat:
            continue
        hand = list(hand)
        if s in keep:
            hand.remove(keep[s])
        sizes[s] = len(hand)
        pool += hand
    pool = [pool[i] for i in rng.permutation(len(pool))]
    hands = [list(h) for h in d["hands"]]
    for s, size in sizes.items():
        hands[s] = pool[:size] + ([keep[s]] if s in keep else [])
        pool = pool[size:]
    return Game.from_dict({**d, "hands": hands, "draw_pile": pool})


@pytest.mark.parametrize("n", PLAYER_COUNTS)
@pytest.mark.parametrize("preset", ["default", "standard_uno", "variants"])
def test_redealing_hidden_cards_leaves_the_observation_unchanged(n, preset):
    rules = Rules(**{**PRESETS[preset], "num_players": n})
    rng = np.random.default_rng(n)
    changed = 0
    for g in random_states(rules, seed=100 + n, steps=1200, every=11):
        for seat in range(n):
            g2 = _redeal_hidden_from(g, seat, rng)
            changed += g2.hands != g.hands
            np.testing.assert_array_equal(O.encode(g2.view(seat)), O.encode(g.view(seat)))
    assert changed > 0  # the re-deals did move hidden cards


@pytest.mark.parametrize("n", (2, 4))
def test_redealing_one_hand_leaves_every_other_seats_observation_unchanged(n):
    rng = np.random.default_rng(3)
    for g in random_states(Rules(num_players=n), seed=7, steps=600, every=13):
        d = g.to_dict()
        for x in range(n):
            if d["phase"] == "play_drawn" and d["current_player"] == x or not d["draw_pile"]:
                continue
            pool = list(d["hands"][x]) + list(d["draw_pile"])
            pool = [pool[i] for i in rng.permutation(len(pool))]
            size = len(d["hands"][x])
            hands = [list(h) for h in d["hands"]]
            hands[x] = pool[:size]
            g2 = Game.from_dict({**d, "hands": hands, "draw_pile": pool[size:]})
            for seat in range(n):
                if seat != x:
                    np.testing.assert_array_equal(O.encode(g2.view(seat)),
                                                  O.encode(g.view(seat)))


def _challenge_position() -> Game:
    """Player 0 has just played a W4 (named Blue) holding a red card: an illegal W4 (R6.1);
    player 1 decides whether to challenge, player 2 watches."""
    return Game.from_dict({
        "rules": {"num_players": 3},
        "hands": [["R3", "G5", "WB"], ["Y1", "Y2"], ["B7", "G9", "R1"]],
        "draw_pile": ["B1", "B2", "B3", "B4", "B5", "B6"],
        "discard_pile": ["R9", "W4"], "active_colour": "B", "current_player": 1,
        "direction": 1, "phase": "challenge",
        "w4": {"player": 0, "previous_colour": "R", "illegal": True},
    })


def test_only_the_challenger_sees_the_revealed_hand():
    """R6.3: the W4 player's hand is shown to the challenger only."""
    g = _challenge_position()
    shown = list(g.hand(0))
    g.step(actions.CHALLENGE)
    parts = [O.split(O.encode(g.view(s))) for s in range(3)]
    np.testing.assert_array_equal(parts[1]["revealed_hand"], shown)
    assert parts[1]["revealed_by"][(0 - 1) % 3] == 1
    for s in (0, 2):
        assert not parts[s]["revealed_hand"].any() and not parts[s]["revealed_by"].any()
    # Another revealed hand changes what the challenger sees, and nothing anyone else sees.
    d = g.to_dict()
    assert d["reveals"] == [{"player": 0, "to": 1, "hand": ["R3", "G5", "WB"]}]
    g2 = Game.from_dict({**d, "reveals": [{**d["reveals"][0], "hand": ["Y9", "G5", "WB"]}]})
    assert not np.array_equal(O.encode(g2.view(1)), O.encode(g.view(1)))
    for s in (0, 2):
        np.testing.assert_array_equal(O.encode(g2.view(s)), O.encode(g.view(s)))


def test_revealed_hand_never_reaches_a_non_challenger_in_random_games():
    """R6.3: each challenger (and only it) sees the hand its latest challenge revealed, for the
    rest of the round, whatever other seats challenge later."""
    reveals = 0
    for n in (2, 3, 5):
        seen = None
        for g in random_states(Rules(num_players=n), seed=11 * n, steps=4000):
            if not g.reveals or g.reveals == seen:
                continue
            seen = g.reveals  # check each new set of reveals once, right after the challenge
            reveals += 1
            by_challenger = {to: (w4p, shown) for w4p, to, shown in g.reveals}
            for s in range(n):
                parts = O.split(O.encode(g.view(s)))
                if s in by_challenger:
                    w4_player, shown = by_challenger[s]
                    assert parts["revealed_by"][(w4_player - s) % n] == 1
                    assert parts["revealed_hand"].sum() == len(shown)
                else:
                    assert not parts["revealed_hand"].any() and not parts["revealed_by"].any()
    assert reveals > 0


# ------------------------------------------------------------------------------------ state
@pytest.mark.parametrize("n", PLAYER_COUNTS)
def test_state_holds_every_hand_and_pile(n):
    rules = Rules(num_players=n, match="target_score", target_score=100)
    high = O.state_high(rules)
    for g in random_states(rules, seed=n, steps=600, every=9):
        st = O.encode_state(g)
        assert st.shape == (O.STATE_SIZE,) and st.dtype == np.float32
        assert (st >= 0).all() and (st <= high).all()
        parts = O.split(st, O.STATE_PIECES)
        hands = parts["hands"].reshape(O.MAX_SEATS, NUM_KINDS)
        np.testing.assert_array_equal(hands[:n], g.hands)
        assert not hands[n:].any()
        draw = np.bincount(g.draw_pile, minlength=NUM_KINDS)
        np.testing.assert_array_equal(parts["draw_pile_counts"], draw)
        total = hands.sum(0) + parts["draw_pile_counts"] + parts["discard_counts"]
        np.testing.assert_array_equal(total, COPIES)
        np.testing.assert_allclose(parts["scores"][:n], np.array(g.scores) / 100)
        assert parts["top_card"].argmax() == g.top_card


def test_state_layout_markdown_names_the_hand_blocks():
    assert re.search(r"\| 0–539 \| `hands` \| 540 \|", O.state_layout_markdown())
    assert CODES[0] == "R0"  # the hands block is in kind-id order


def test_encode_returns_independent_arrays():
    g = Game(Rules(num_players=3), seed=4)
    first = O.encode(g.view(0))
    kept = first.copy()
    second = O.encode(g.view(1))
    np.testing.assert_array_equal(first, kept)  # the second call did not write into the first
    assert not np.shares_memory(first, second)
