"""Engine invariants over thousands of seeded games and leak tests.

Every player count 2-10 is played under every preset of ``uno_mk_env.engine.rules.PRESETS`` and
under
the multi-round match modes (R10.3) and ``uno_catch="any_player"`` (R8), driven by two policies:

* ``prefer_play``: random, but plays a card whenever it can (games end in ~100 decisions);
* ``uniform``: uniformly random over the legal ids (rounds are very long; capped).

After every step: all 112 cards accounted for per kind (R2), hand sizes consistent, one decider
with a non-empty mask equal to ``legal_action_ids()`` until ``game_over``, the mask matches the
phase table of docs/api.md#actions-and-phases, and scores move only when a round ends (R10.2).
At sampled steps (the expensive checks): JSON round trip of ``to_dict()``,
``from_dict(to_dict(g)) == g``, continuing a restored game and a clone with the same actions
gives identical states, stepping copies never changes the original, ``determinize`` keeps
``view(seat)`` and the card totals, and re-dealing the hidden cards leaves ``view(seat)``
unchanged (leak test). Every game is replayed from its seed with the same actions and must come
out identical (docs/api.md#randomness).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

import numpy as np
import pytest

from uno_mk_env import PRESETS, Game, IllegalActionError, Rules, StateError, cards
from uno_mk_env import actions as A
from uno_mk_env.engine.cards import COPIES, WB

Policy = Callable[[np.random.Generator, Sequence[int]], int]

PLAYER_COUNTS = tuple(range(2, 11))
#: (config name, rule options): every preset, plus the two multi-round match modes.
CONFIGS: tuple[tuple[str, dict], ...] = (
    *((name, dict(opts)) for name, opts in PRESETS.items()),
    ("target_score_100", {"match": "target_score", "target_score": 100}),
    ("fixed_rounds_2", {"match": "fixed_rounds", "rounds": 2}),
    ("any_player_catch", {"uno_catch": "any_player", "uno_penalty": 1}),
)
MULTI_ROUND = {"target_score_100", "fixed_rounds_2"}

PREFER_CAP = 3000  # decisions; prefer_play single rounds take ~100-300
UNIFORM_CAP = 300  # uniform rounds take thousands of decisions: check a prefix of each
DEEP_RATE = 0.004  # probability of the expensive checks after a step
FINAL_DEEP_RATE = 0.25  # ... and on a game's final state (over, or at the cap)
CONTINUE_STEPS = 6  # steps a restored game and a clone are continued in lockstep

PHASES = ("play", "play_drawn", "choose_colour", "choose_target", "challenge", "uno_catch")
COLOURS = frozenset(range(A.COLOUR_BASE, A.COLOUR_BASE + 4))
CHALLENGE_IDS = frozenset((A.CHALLENGE, A.ACCEPT))
UNO_IDS = frozenset((A.CALL_UNO, A.CATCH_UNO))


# ------------------------------------------------------------------------------- policies
def uniform(rng: np.random.Generator, ids: Sequence[int]) -> int:
    """Uniformly random over the legal ids."""
    return ids[int(rng.integers(len(ids)))]


def prefer_play(rng: np.random.Generator, ids: Sequence[int]) -> int:
    """Random, but plays a card whenever one is legal; usually calls and catches UNO."""
    if A.CATCH_UNO in ids and rng.random() < 0.5:
        return A.CATCH_UNO
    if A.CALL_UNO in ids and rng.random() < 0.9:
        return A.CALL_UNO
    plays = [a for a in ids if a < A.DRAW]
    if plays:
        return plays[int(rng.integers(len(plays)))]
    rest = [a for a in ids if a not in UNO_IDS] or list(ids)
    return rest[int(rng.integers(len(rest)))]


# ------------------------------------------------------------------------------- helpers
_BYTE = [256**k for k in range(cards.NUM_KINDS)]


def packed(counts: Sequence[int]) -> int:
    """Counts per kind packed one byte per kind (kind k at byte k). Adding packed hands adds them
    kind by kind (no kind ever reaches 256 copies); a negative count raises ValueError."""
    return int.from_bytes(bytes(counts), "little")


def pile_packed(pile: Sequence[int]) -> int:
    """A pile of kind ids packed like :func:`packed`."""
    return sum(map(_BYTE.__getitem__, pile))


FULL_DECK = packed(cards.COPIES)


def card_totals(d: dict) -> list[int]:
    """Copies per kind in a state dict: hands + draw pile + discard pile."""
    totals = [0] * cards.NUM_KINDS
    for pile in (*d["hands"], d["draw_pile"], d["discard_pile"]):
        for code in pile:
            totals[cards.kind(code)] += 1
    return totals


def last_event(g: Game, kind: str) -> tuple:
    for e in reversed(g.events):
        if e[0] == kind:
            return e
    raise AssertionError(f"no {kind!r} event in the log")


def round_had_stalemate(g: Game) -> bool:
    for e in reversed(g.events):
        if e[0] == "stalemate":
            return True
        if e[0] == "deal":
            return False
    return False


# ------------------------------------------------------------------------------- per step
def check_step(g: Game) -> None:
    """The cheap invariants, after every step."""
    n = g.num_players
    ids = g.legal_action_ids()
    mask = g.legal_actions()
    assert mask.shape == (A.NUM_ACTIONS,) and mask.dtype == np.bool_
    assert tuple(np.flatnonzero(mask).tolist()) == tuple(ids)

    if g.game_over:
        assert ids == ()
        assert g.current_player == -1
        assert g.phase_name == "game_over"
        assert g.winner is None or 0 <= g.winner < n
        view = g.view(0)
    else:
        p = g.current_player
        assert 0 <= p < n, f"current_player {p} out of range"
        assert ids, f"empty legal mask in phase {g.phase_name}"
        assert list(ids) == sorted(set(ids)) and 0 <= ids[0] and ids[-1] < A.NUM_ACTIONS
        view = g.view(p)
        assert view.is_decider and view.legal_actions == tuple(ids)
        check_phase_table(g, ids, view.hand)

    # R2: every one of the 112 cards is in exactly one hand or pile, per kind. Counts per kind
    # are packed one byte per kind into an int (see ``packed``), so this per-step check costs a
    # few C-level calls; the piles are read from the engine's lists (to_dict() is too slow here).
    discard = pile_packed(g.discard)
    assert discard == packed(view.discard_counts), "discard_counts out of sync with the pile"
    assert view.top_card == g.discard[-1]
    assert len(g.draw_pile) == view.draw_pile_size
    hands = g.hands
    assert list(map(sum, hands)) == list(view.hand_sizes), "hand sizes != cards held"
    assert list(hands[n - 1]) == g.hand(n - 1) and len(hands) == n
    total = discard + pile_packed(g.draw_pile) + sum(map(packed, hands))
    assert total == FULL_DECK, "cards lost or duplicated"


def check_phase_table(g: Game, ids: Sequence[int], hand: Sequence[int]) -> None:
    """docs/api.md#actions-and-phases: which ids each phase allows."""
    phase = g.phase_name
    assert phase in PHASES
    if phase == "uno_catch":  # R8 ruling: out of turn, catch or let it pass
        assert list(ids) == [A.ACCEPT, A.CATCH_UNO] and g.rules.uno_catch != "auto"
        assert g.uno_miss >= 0 and g.current_player != g.uno_miss
        return
    core = set(ids) - UNO_IDS
    plays = [a for a in ids if a < A.DRAW]
    assert all(hand[a] > 0 for a in plays), "a PLAY id for a card not in hand"
    if phase == "play":
        assert A.DRAW in core
        assert core - set(plays) == {A.DRAW}
    elif phase == "play_drawn":
        assert len(plays) == 1 and core == {plays[0], A.KEEP}
    elif phase == "choose_colour":
        assert core == COLOURS
    elif phase == "choose_target":
        assert core == set(range(A.TARGET_BASE, A.TARGET_BASE + g.num_players - 1))
    else:
        assert core == CHALLENGE_IDS
    if A.CALL_UNO in ids:
        assert phase in ("play", "play_drawn") and sum(hand) == 2 and g.rules.uno == "on"
    if A.CATCH_UNO in ids:
        assert g.rules.uno_catch == "next_player" and g.rules.uno == "on"


def check_scores(g: Game, before: list[int]) -> None:
    """R10.2: scores change only when a round ends, by the round's points, for its winner."""
    after = list(g.scores)
    assert len(after) == g.num_players and all(type(x) is int and x >= 0 for x in after)
    if not g.round_over:
        assert after == before, "scores changed although no round ended"
        return
    _, winner, points, scores = last_event(g, "round_end")
    assert list(scores) == after
    delta = [a - b for a, b in zip(after, before)]
    if winner is None:
        assert points == 0 and not any(delta)
    else:
        assert delta[winner] == points >= 0
        assert not any(x for s, x in enumerate(delta) if s != winner)


def check_final(g: Game) -> None:
    """R10.2/R10.3: who won the game and with what score."""
    rules, n, w = g.rules, g.num_players, g.winner
    if rules.match == "single_round":
        if w is None:
            assert round_had_stalemate(g) and g.scores == [0] * n
            return
        others = sum(g.hand_points(s) for s in range(n) if s != w)
        assert g.scores[w] == others, "single-round winner must score the others' hand points"
        assert all(g.scores[s] == 0 for s in range(n) if s != w)
        if not round_had_stalemate(g):
            assert sum(g.hand(w)) == 0, "the round winner went out"
    elif rules.match == "target_score":
        assert w is not None and g.scores[w] >= rules.target_score
        assert all(g.scores[s] < rules.target_score for s in range(n) if s != w)
    else:
        assert g.round == rules.rounds
        best = max(g.scores)
        assert w == (g.scores.index(best) if g.scores.count(best) == 1 else None)


# ------------------------------------------------------------------------------- sampled
def redeal_hidden(d: dict, seat: int, rng: np.random.Generator) -> dict:
    """``d`` with every card ``seat`` cannot see (other hands, draw pile) shuffled among the
    other hands and the draw pile, sizes kept. The card another seat is deciding to play in
    ``play_drawn`` stays in its hand (its being playable is public); under ``w4_strict`` a drawn
    W4's legality depends on the whole hand, so that hand stays as it is."""
    d = json.loads(json.dumps(d))
    n = len(d["hands"])
    kept: dict[int, list[str]] = {s: [] for s in range(n)}
    decider = d["current_player"]
    if d["phase"] == "play_drawn" and decider != seat:
        if d["drawn_card"] == "W4" and d["rules"]["w4_strict"]:
            kept[decider] = list(d["hands"][decider])
        else:
            kept[decider] = [d["drawn_card"]]
    pool = list(d["draw_pile"])
    for s in range(n):
        if s == seat:
            continue
        rest = list(d["hands"][s])
        for c in kept[s]:
            rest.remove(c)
        pool += rest
    pool = [pool[i] for i in rng.permutation(len(pool))]
    for s in range(n):
        if s == seat:
            continue
        size = len(d["hands"][s]) - len(kept[s])
        d["hands"][s] = kept[s] + pool[:size]
        pool = pool[size:]
    assert len(pool) == len(d["draw_pile"])
    d["draw_pile"] = pool
    return d


def deep_check(g: Game, rng: np.random.Generator, policy: Policy) -> Game:
    """The expensive invariants, at sampled steps. Returns a fresh ``from_dict(to_dict(g))``
    for the caller to step along with ``g``."""
    before = g.to_dict()
    assert card_totals(before) == list(cards.COPIES)
    assert [len(h) for h in before["hands"]] == [sum(g.hand(s)) for s in range(g.num_players)]

    text = json.dumps(before)
    assert json.loads(text) == before, "to_dict() is not JSON-exact"
    restored = Game.from_dict(json.loads(text))
    assert restored == g
    assert restored.to_dict() == before
    assert restored.legal_action_ids() == g.legal_action_ids()

    clone = g.clone()
    assert clone.to_dict() == before
    for _ in range(CONTINUE_STEPS):
        if clone.game_over:
            break
        a = policy(rng, clone.legal_action_ids())
        clone.step(a)
        restored.step(a)
    assert clone.to_dict() == restored.to_dict(), "a restored game and a clone diverged"
    assert clone.events[len(g.events):] == restored.events, "same actions, different events"
    assert g.to_dict() == before, "stepping a clone or a restored copy changed the original"

    follower = Game.from_dict(json.loads(text))
    if g.game_over:
        with pytest.raises(IllegalActionError):
            g.step(A.DRAW)
        assert g.to_dict() == before
        return follower
    seat = int(rng.integers(g.num_players))
    view = g.view(seat)

    det = g.determinize(seat, np.random.default_rng(int(rng.integers(2**32))))
    assert g.to_dict() == before, "determinize changed the original"
    assert det.view(seat) == view, "determinize changed what the seat can see"
    dd = det.to_dict()
    assert card_totals(dd) == list(cards.COPIES)
    assert [len(h) for h in dd["hands"]] == [len(h) for h in before["hands"]]
    assert len(dd["draw_pile"]) == len(before["draw_pile"])
    assert dd["discard_pile"][-1] == before["discard_pile"][-1]
    try:
        rebuilt = Game.from_dict(dd)
    except StateError as e:
        pytest.fail(f"determinize({seat}) built an invalid state: {e}")
    assert rebuilt == det, "determinize built a state that from_dict alters"
    if det.legal_action_ids():
        det.step(policy(rng, det.legal_action_ids()))

    leaked = Game.from_dict(redeal_hidden(before, seat, rng))
    assert leaked.view(seat) == view, "re-dealing hidden cards changed the seat's view"
    return follower


# ------------------------------------------------------------------------------- driver
def play_checked(
    rules: Rules, seed: int, policy: Policy, rng: np.random.Generator, cap: int
) -> Game:
    """Plays one seeded game with every check; returns it (over, or at the cap)."""
    g = Game(rules, seed=seed)
    check_step(g)
    copy_before, dict_before = g.clone(), g.to_dict()
    history: list[int] = []
    scores = list(g.scores)
    follower, follow_left = None, 0  # a restored copy stepped along with g
    while not g.game_over and len(history) < cap:
        a = policy(rng, g.legal_action_ids())
        g.step(a)
        history.append(a)
        check_step(g)
        check_scores(g, scores)
        scores = list(g.scores)
        if follower is not None:
            follower.step(a)
            follow_left -= 1
            if not follow_left or g.game_over:
                assert follower.to_dict() == g.to_dict(), "restored game diverged from original"
                follower = None
        if rng.random() < DEEP_RATE:
            follower, follow_left = deep_check(g, rng, policy), CONTINUE_STEPS
            assert copy_before.to_dict() == dict_before, "stepping the original changed a clone"
            copy_before, dict_before = g.clone(), g.to_dict()
    if rng.random() < FINAL_DEEP_RATE:
        deep_check(g, rng, policy)
    if g.game_over:
        check_final(g)

    replay = Game(rules, seed=seed)
    for a in history:
        replay.step(a)
    assert replay.to_dict() == g.to_dict(), "same seed + same actions gave a different game"
    assert replay.events == g.events
    return g


def rules_for(config: dict, n: int) -> Rules:
    return Rules(**{**config, "num_players": n})


CASES = [pytest.param(name, opts, n, id=f"{name}-{n}p") for name, opts in CONFIGS
         for n in PLAYER_COUNTS]


def seed_of(name: str, n: int, policy: str) -> int:
    """A fixed, distinct seed base per test case (``hash()`` of str is salted per process)."""
    return sum(map(ord, f"{name}/{policy}")) * 1000 + n * 100_003


@pytest.mark.parametrize(("name", "opts", "n"), CASES)
def test_invariants_prefer_play(name: str, opts: dict, n: int) -> None:
    """R1-R10 invariants; 30 single-round (12 multi-round) games per table; >= 90 % finish."""
    games = 12 if name in MULTI_ROUND else 30
    run_many(name, opts, n, games, "prefer", min_finished=0.9)


@pytest.mark.parametrize(("name", "opts", "n"), CASES)
def test_invariants_uniform(name: str, opts: dict, n: int) -> None:
    """The same invariants under uniformly random play (long rounds: the first 300 decisions)."""
    run_many(name, opts, n, 3, "uniform", min_finished=0.0)


@pytest.mark.slow
@pytest.mark.parametrize(("name", "opts", "n"), CASES)
def test_invariants_heavy(name: str, opts: dict, n: int) -> None:
    """A heavier run: 10x the prefer_play games, uniform games up to 3000 decisions."""
    run_many(name, opts, n, 300, "prefer", min_finished=0.9)
    run_many(name, opts, n, 10, "uniform", min_finished=0.0, cap=3000)


def run_many(
    name: str, opts: dict, n: int, games: int, policy_name: str, min_finished: float,
    cap: int | None = None,
) -> None:
    policy = prefer_play if policy_name == "prefer" else uniform
    if cap is None:
        cap = PREFER_CAP if policy_name == "prefer" else UNIFORM_CAP
    rules = rules_for(opts, n)
    base = seed_of(name, n, policy_name)
    rng = np.random.default_rng(base)
    finished = 0
    for i in range(games):
        g = play_checked(rules, base + i, policy, rng, cap)
        finished += g.game_over
    assert finished >= min_finished * games, f"only {finished}/{games} games ended by {cap}"


# ------------------------------------------------------------------------------- seeding
def test_same_seed_same_game_different_seed_different_deal() -> None:
    """docs/api.md#randomness: a seed fixes the deal; an int seed and an equal Generator agree."""
    rules = Rules(num_players=5)
    for seed in range(20):
        a, b = Game(rules, seed=seed), Game(rules, seed=seed)
        assert a == b and a.events == b.events
        c = Game(rules, seed=np.random.default_rng(seed))
        assert c.to_dict()["hands"] == a.to_dict()["hands"]
    deals = {json.dumps(Game(rules, seed=s).to_dict()["hands"]) for s in range(20)}
    assert len(deals) == 20



# ------------------------------------------------------------------------------- determinize
@pytest.mark.parametrize("n", (2, 3, 5))
def test_determinize_keeps_the_drawn_card_playable_under_w4_strict(n: int) -> None:
    """R4.2, R6.2: a seat in ``play_drawn`` holds a drawn card that is playable given its whole
    hand. Under ``w4_strict`` a drawn W4 is playable only without a card of the active colour, so
    every game ``determinize`` samples for another seat must respect that (``from_dict`` checks
    it); every sampled game keeps the observer's view."""
    rules = Rules(num_players=n, w4_strict=True)
    rng = np.random.default_rng(n)
    checked = 0
    for seed in range(40):
        g = Game(rules, seed=seed)
        while not g.game_over and g.num_steps < 400:
            if g.phase_name == "play_drawn":
                for seat in range(n):
                    if seat == g.current_player:
                        continue
                    for _ in range(3):
                        det = g.determinize(seat, rng)
                        assert det.view(seat) == g.view(seat)
                        try:
                            assert Game.from_dict(det.to_dict()) == det
                        except StateError as e:
                            pytest.fail(f"determinize({seat}) built an invalid state: {e}")
                        checked += 1
            g.step(prefer_play(rng, g.legal_action_ids()))
    assert checked > 100


def test_determinize_keeps_a_pending_auto_uno_penalty() -> None:
    """R8 (``uno_catch="auto"``): seat 0 plays its W4 leaving one card without calling UNO; the
    miss is public (one card, no call), and is caught when the next turn begins. A game
    determinized for seat 1 must reach the same hand sizes after the same public actions."""
    d = {"rules": {"num_players": 3}, "hands": [["W4", "R3"], ["G2", "GS", "B1"], ["B9", "Y2"]],
         "draw_pile": ["B3", "Y7", "Y8", "Y9", "G7", "G8", "G9", "B7", "B8"],
         "discard_pile": ["Y5", "R5"], "active_colour": "R", "current_player": 0, "direction": 1}
    g = Game.from_dict(d, seed=0)
    g.step(A.play(cards.W4))  # no CALL_UNO first
    assert g.phase_name == "choose_colour"
    for i in range(5):
        det = g.determinize(1, np.random.default_rng(i))
        assert det.view(1) == g.view(1)
        for game in (g.clone(), det):
            game.step(A.choose_colour(0))
            game.step(A.ACCEPT)  # seat 1 takes 4; seat 2's turn begins: seat 0 is caught
            assert [len(h) for h in game.to_dict()["hands"]] == [3, 7, 2]


def _swap_first_red(hands: list[bytearray], pile: list[int], rng: np.random.Generator) -> None:
    """A valid condition: seat 1's red cards swapped with non-red cards of the draw pile."""
    others = [i for i, k in enumerate(pile) if cards.COLOUR_OF[k] != 0]
    for k in range(13):
        while hands[1][k] and others:
            i = others.pop()
            hands[1][k] -= 1
            hands[1][pile[i]] += 1
            pile[i] = k


def test_from_view_condition_biases_the_sample_and_derives_the_state_after_it() -> None:
    """``from_view(..., condition)``: the hook moves hidden cards; the result keeps the view,
    its playable-kinds bitmask and legal actions follow the moved cards (from_dict agrees)."""
    rng = np.random.default_rng(0)
    checked = 0
    for seed in range(30):
        g = Game(Rules(num_players=3), seed=seed)
        for _ in range(int(rng.integers(0, 30))):
            if g.game_over:
                break
            g.step(prefer_play(rng, g.legal_action_ids()))
        if g.game_over or g.phase_name == "play_drawn":
            continue
        view = g.view(0)
        det = Game.from_view(view, rng, _swap_first_red)
        assert det.view(0) == view
        red = sum(det.hands[1][:13])
        assert red == 0 or all(cards.COLOUR_OF[k] == 0 for k in det.draw_pile)
        rebuilt = Game.from_dict(det.to_dict())
        assert rebuilt == det and rebuilt.held == det.held
        assert det.legal_action_ids() == rebuilt.legal_action_ids()
        checked += 1
    assert checked >= 20


@pytest.mark.parametrize("bad, message", [
    (lambda hands, pile, rng: pile.pop(), "the draw pile holds"),
    (lambda hands, pile, rng: hands[0].__setitem__(0, hands[0][0] + 1), "viewer's hand"),
    (lambda hands, pile, rng: hands[1].__setitem__(0, hands[1][0] + 1), "hand sizes"),
    (lambda hands, pile, rng: pile.__setitem__(0, (pile[0] + 1) % 54), "multiset"),
])
def test_from_view_condition_that_breaks_the_view_is_rejected(bad, message) -> None:
    g = Game(Rules(num_players=3), seed=4)
    with pytest.raises(StateError, match=message):
        Game.from_view(g.view(0), np.random.default_rng(1), bad)


def test_from_view_condition_may_not_make_a_drawn_strict_w4_unplayable() -> None:
    """R6.2: a seat deciding on a drawn W4 under ``w4_strict`` holds no card of the active
    colour; a condition that hands it one is rejected."""
    g = Game.from_dict({
        "rules": {"num_players": 2, "w4_strict": True}, "hands": [["B1", "B2"], ["G3", "G4"]],
        "draw_pile": ["W4", "R5", "R6", "R7"], "discard_pile": ["R9"], "active_colour": "R",
        "current_player": 1, "direction": 1,
    })
    g.step(A.DRAW)
    assert g.phase_name == "play_drawn" and g.drawn == cards.W4

    def give_red(hands, pile, rng):
        i = next((i for i, k in enumerate(pile) if cards.COLOUR_OF[k] == 0), None)
        k = next((k for k in range(54) if hands[1][k] and k != cards.W4), None)
        if i is None or k is None:
            return
        hands[1][k] -= 1
        hands[1][pile[i]] += 1
        pile[i] = k

    rejected = 0
    for seed in range(20):  # seat 0 cannot see the drawn card: the sample draws it
        try:
            det = Game.from_view(g.view(0), np.random.default_rng(seed), give_red)
        except StateError as e:  # (the hook may also have moved a sampled drawn card away)
            assert "no longer playable" in str(e) or "no longer holds" in str(e)
            rejected += "no longer playable" in str(e)
        else:
            assert det.drawn != cards.W4 or not any(det.hands[1][:13])
    assert rejected > 0


def test_determinize_judges_a_pending_w4_on_the_hand_held_when_it_was_played() -> None:
    """R6.1 in ``from_view``: seat 0 plays W4 from ``W4 Y1`` on a red top (legal: no red), does
    not call UNO, names blue and is caught by seat 1 (two penalty cards). In seat 1's samples the
    W4 must be judged on the one card seat 0 held beside it, not on its three cards now: illegal
    exactly when that card is red or a WB, whose chance is their share of seat 1's unseen cards.
    The W4's player knows the truth, so its own samples keep it."""
    from scenario import do, make

    g = make({"rules": {"num_players": 3, "uno_catch": "next_player"},
              "hands": ["W4 Y1", "G1 G2 G3", "B4 B5 B6"], "discard_pile": "R3",
              "draw_pile": "Y7 Y8 B9"})
    do(g, "PLAY(W4)", "COLOUR(B)", "CATCH_UNO")
    assert g.phase_name == "challenge" and g.sizes[0] == 3 and not g.w4_illegal
    view = g.view(1)
    assert (view.w4_hand_size, view.w4_illegal) == (1, -1)
    assert g.view(0).w4_illegal == 0
    unseen = [c - h - d for c, h, d in zip(COPIES, view.hand, view.discard_counts)]
    p_illegal = (sum(unseen[0:13]) + unseen[WB]) / sum(unseen)  # a red card or a WB
    rng = np.random.default_rng(5)
    samples = 3000
    illegal = sum(Game.from_view(view, rng).w4_illegal for _ in range(samples))
    sigma = (p_illegal * (1 - p_illegal) / samples) ** 0.5
    assert abs(illegal / samples - p_illegal) < 4 * sigma, (illegal / samples, p_illegal)
    assert not any(Game.from_view(g.view(0), rng).w4_illegal for _ in range(50))


def _sensible(rng: np.random.Generator, legal: Sequence[int]) -> int:
    """Calls UNO when it may, plays when it can, else anything: rounds end."""
    if A.CALL_UNO in legal:
        return A.CALL_UNO
    plays = [a for a in legal if a < A.DRAW] or list(legal)
    return plays[rng.integers(len(plays))]


def test_a_long_match_keeps_a_bounded_event_log_and_cheap_clones() -> None:
    """A ``target_score`` match that never ends (target 10**9, no step cap): with the default
    ``event_log="recent"`` the log holds only the current and the previous round, however many
    rounds were played, and a clone copies no more; ``event_log="all"`` keeps everything."""
    rules = Rules(num_players=4, match="target_score", target_score=10**9)
    g = Game(rules, seed=3)
    full = Game(rules, seed=3, event_log="all")
    rng, rng_full = np.random.default_rng(0), np.random.default_rng(0)
    longest = 0
    while g.round < 300:
        g.step(_sensible(rng, g.legal_action_ids()))
        full.step(_sensible(rng_full, full.legal_action_ids()))
        longest = max(longest, len(g.events))
    assert g.event_count == len(full.events) > 20 * longest
    assert g.events == full.events[g.events_start:]
    deals = [e for e in g.events if e[0] == "deal"]
    assert [e[1] for e in deals] == [g.round - 1, g.round]
    assert len(g.clone().events) == len(g.events)
    with pytest.raises(ValueError, match="event_log"):
        Game(rules, event_log="everything")
