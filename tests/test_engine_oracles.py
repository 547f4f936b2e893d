"""Oracle tests of the engine's fast paths (issue #10, item 5).

The engine computes legal actions from precomputed bit tables and a per-seat bitmask of the kinds
held, and ``observation.encode_state`` joins precomputed byte strings. Here the same answers are
computed slowly and plainly from the rules text (docs/rules.md R4-R8 and its rulings) and the game's
public state (``g.hand(seat)``, ``g.top_card``, ``g.active_colour``, ``g.phase_name``,
``g.to_dict()``), never from the engine's tables, and compared after every step of random games
under every preset and the two multi-round match modes, 2-10 players:

* the legal action ids (R4.1 playability, R6.1/R6.2 strict W4, R4.2 the drawn card, R8 UNO call
  and catch, the colour, target and challenge decisions);
* the playable-cards bitmask ``g.held[seat]`` against the hands, for every seat;
* every piece of ``encode_state`` (``STATE_PIECES``), named on failure.

What the current state does not show (who called UNO this turn, whose missed UNO is still open,
the card just drawn, the latest W4 and its legality, whose hand a challenge revealed, whose turn
came before) is followed by :class:`Table` from the actions themselves, as a person at the table
would, and checked against the engine through the legal ids and the state pieces.

The default run plays a few hundred games; ``-m slow`` plays thousands.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pytest

from uno_mk_env import PRESETS, Game, Rules
from uno_mk_env import actions as A
from uno_mk_env.engine import observation as O
from uno_mk_env.engine.cards import CODES, COLOURS, ITEM_NAMES, NUM_KINDS, W4, WB, kind

PLAYER_COUNTS = tuple(range(2, 11))
#: Every preset, plus the multi-round match modes (rounds end and the next one is dealt).
CONFIGS: tuple[tuple[str, dict], ...] = (
    *((name, dict(opts)) for name, opts in PRESETS.items()),
    ("target_score_100", {"match": "target_score", "target_score": 100}),
    ("fixed_rounds_2", {"match": "fixed_rounds", "rounds": 2, "uno_catch": "next_player"}),
    ("any_player_catch", {"uno_catch": "any_player"}),
)
PHASES = ("play", "play_drawn", "choose_colour", "choose_target", "challenge")
CONTEXTS = ("w4", "bob_omb", "start")  # to_dict names, in the state piece's order (R7.3: no 4th)
COLOUR_IDS = tuple(range(A.COLOUR_BASE, A.COLOUR_BASE + 4))
SKIP, REVERSE, DRAW_TWO = 10, 11, 12  # ranks (kind id = 13 * colour + rank)

Policy = Callable[[np.random.Generator, Sequence[int]], int]


# ------------------------------------------------------------------------- R4.1 and R6, plainly
def colour_of(k: int) -> int | None:
    """The colour of a coloured kind (kind id = 13 * colour + rank); None for a wild."""
    return k // 13 if k < W4 else None


def rank_of(k: int) -> int | None:
    """0-9 numbers, 10 Skip, 11 Reverse, 12 Draw Two; None for a wild."""
    return k % 13 if k < W4 else None


def holds_colour(hand: Sequence[int], colour: int) -> bool:
    return any(hand[k] for k in range(NUM_KINDS) if colour_of(k) == colour)


def w4_breaks_r61(hand: Sequence[int], colour: int, rules: Rules) -> bool:
    """R6.1: a W4 is legal only with no card of the active colour in hand; a held WB counts as
    a colour match unless ``item_box_counts_for_w4=False``."""
    return holds_colour(hand, colour) or (rules.item_box_counts_for_w4 and hand[WB] > 0)


def playable(k: int, hand: Sequence[int], top: int, colour: int, rules: Rules) -> bool:
    """R4.1: matches the active colour, or the top card's number or symbol when the top card is
    coloured, or is a wild; R6.2: with ``w4_strict`` a W4 must also be legal (R6.1)."""
    if k == WB:
        return True
    if k == W4:
        return not (rules.w4_strict and w4_breaks_r61(hand, colour, rules))
    if colour_of(k) == colour:
        return True
    return colour_of(top) is not None and rank_of(k) == rank_of(top)


# ------------------------------------------------------------------- what the state does not show
@dataclass
class Before:
    """What the table saw just before a step."""

    player: int
    phase: str
    colour: int
    top: int
    hand: list[int]
    round: int


@dataclass
class Table:
    """Follows a game from outside, step by step, as the rules describe it (R4.2, R6, R8, R10).

    ``pending`` is the seat whose missed UNO is still open (R8: a play left it with one card and no
    call; under ``uno_catch="auto"`` it is settled when the next turn begins, under
    ``"next_player"`` it closes with the first action of another decider, or with the answer of
    the seat after the offender asked out of turn before the offender's own turn; under
    ``"any_player"`` every other seat is asked in turn order when the next turn begins, until one
    catches (the R8 ruling); it ends when the offender draws); ``called`` the seats that called
    UNO in the current turn; ``drawn`` the card
    the decider just drew (R4.2); ``w4`` the round's latest W4 as (player, previous colour, broke
    R6.1 on the hand it was played from); ``reveal`` (W4 player, challenger) after a challenge.
    """

    rules: Rules
    round: int = 0
    dealer: int = -1
    pending: int | None = None
    called: set[int] = field(default_factory=set)
    drawn: int | None = None
    w4: tuple[int, int, bool] | None = None
    reveal: tuple[int, int] | None = None
    turn: int = -1
    previous: int = -1
    context: str | None = None

    def new_round(self, g: Game, d: dict) -> None:
        """A round was just dealt (R3): nothing of the previous round carries over."""
        n = g.num_players
        if self.round:
            assert d["round"] == self.round + 1, "rounds are numbered one by one"
            assert d["dealer"] == (self.dealer + 1) % n, "R3.1: the deal passes left"
        self.round, self.dealer = d["round"], d["dealer"]
        self.pending, self.called, self.drawn, self.w4, self.reveal = None, set(), None, None, None
        self.previous = -1
        self.turn = d["current_player"] if d["phase"] == "play" else -1
        self.context = "start" if d["phase"] == "choose_colour" else None  # R3.3: a WB start

    def before(self, g: Game, d: dict) -> Before:
        p = g.current_player
        return Before(p, g.phase_name, g.active_colour, g.top_card, g.hand(p), d["round"])

    def turn_began(self, seat: int, window: bool = False) -> None:
        """``seat``'s turn begins (``window``: with the R8 catch window asked first)."""
        catch, m = self.rules.uno_catch, self.pending
        if catch == "auto":
            self.pending = None  # R8: the penalty (if still one card) was settled
        elif m is not None and not window and (catch == "any_player" or m == seat):
            raise AssertionError(f"R8 ruling: a turn began with seat {m}'s miss pending and no "
                                 "one was asked first (phase uno_catch)")
        self.called.clear()
        if seat != self.turn:
            self.previous, self.turn = self.turn, seat

    def after(self, b: Before, action: int, g: Game, d: dict) -> None:
        """Updates what the table knows after ``b.player`` took ``action``."""
        if d["round"] != b.round:  # the step ended the round and the next one was dealt
            self.new_round(g, d)
            return
        rules, p = self.rules, b.player
        over = d["game_over"]
        phase = None if over else d["phase"]
        sizes = [len(h) for h in d["hands"]]
        if rules.uno_catch == "next_player" and self.pending not in (None, p):
            self.pending = None  # R8: the window closes with the next decider's first action
        if b.phase == "uno_catch" and phase != "uno_catch":
            self.pending = None  # R8 ruling: one catch, or the last seat asked let it pass
        if action == A.CALL_UNO:
            self.called.add(p)
        if action < A.DRAW and sum(b.hand) == 2 and rules.uno == "on" and p not in self.called:
            self.pending = p  # R8: left with one card and no UNO call
        if action == W4 and sum(b.hand) > 1:  # R6.4: a last-card W4 ends the round instead
            self.w4 = (p, b.colour, w4_breaks_r61(b.hand, b.colour, rules))
        if action == A.CHALLENGE:
            assert self.w4 is not None, "a challenge without a W4"
            self.reveal = (self.w4[0], p)
        if action == A.DRAW:
            self.drawn = self._drawn_card(b, g, d)
        elif phase != "play_drawn":
            self.drawn = None
        if b.phase == "uno_catch" and phase == "play":
            assert d["current_player"] == self.turn, "after the catch window the turn begins"
        elif phase == "play" and action not in (A.CALL_UNO, A.CATCH_UNO):
            self.turn_began(d["current_player"])
        elif phase == "uno_catch" and b.phase != "uno_catch":
            self.turn_began(d["turn_player"], window=True)
        if self.pending is not None and sizes[self.pending] != 1:
            self.pending = None  # R8: the offender drew, it no longer holds one uncalled card
        if phase == "uno_catch":
            self.check_asked(b, d)
        self.colour_context(action, phase, d)

    def colour_context(self, action: int, phase: str | None, d: dict) -> None:
        """Why a colour is being chosen (R6, R7.2, R3.3)."""
        if phase != "choose_colour":
            self.context = None
        elif action == W4:
            self.context = "w4"
        elif action == WB:  # a Bob-omb flipped (R7.3: there is always a card to flip)
            assert d["colour_context"] == "bob_omb", d["colour_context"]
            self.context = d["colour_context"]
        else:
            assert action in (A.CALL_UNO, A.CATCH_UNO), f"a colour choice after {action}"

    def check_asked(self, b: Before, d: dict) -> None:
        """R8 ruling: who is asked out of turn: the seat after the offender first (under
        "next_player" only before the offender's own turn), then under "any_player" each next
        seat in turn order, never the offender."""
        m, n = self.pending, len(d["hands"])
        assert m is not None, "phase uno_catch without a pending miss"
        first = b.phase != "uno_catch"
        asked = (m if first else b.player) + d["direction"]
        assert d["current_player"] == asked % n != m, (
            f"uno_catch asks seat {d['current_player']}, expected {asked % n} (offender {m})")
        if self.rules.uno_catch == "next_player":
            assert first and d["turn_player"] == m, "next_player asks out of turn only before " \
                "the offender's own turn, and only once"

    def _drawn_card(self, b: Before, g: Game, d: dict) -> int | None:
        """R4.2: the drawn card is offered for play iff it is playable, to its drawer only."""
        hand = g.hand(b.player)
        gained = [k for k in range(NUM_KINDS) if hand[k] > b.hand[k]]
        assert sum(hand) - sum(b.hand) == len(gained) <= 1, "a voluntary draw takes one card"
        if not gained:
            assert d["phase"] != "play_drawn", "play_drawn without a drawn card"
            return None
        k = gained[0]
        offered = not d["game_over"] and d["phase"] == "play_drawn"
        assert offered == playable(k, hand, b.top, b.colour, self.rules), (
            f"R4.2: drew {CODES[k]} on {CODES[b.top]} ({COLOURS[b.colour]} active), "
            f"offered={offered}"
        )
        if offered:
            assert d["current_player"] == b.player
            return k
        return None


# ---------------------------------------------------------------------------------- references
def reference_legal(g: Game, t: Table) -> list[int]:
    """The legal ids from the rules text (README "Actions" table), ascending."""
    if g.game_over:
        return []
    rules, p, phase = g.rules, g.current_player, g.phase_name
    hand = g.hand(p)
    may_call = rules.uno == "on" and sum(hand) == 2 and p not in t.called  # R8
    ids: set[int] = set()
    if phase == "play":
        top, colour = g.top_card, g.active_colour
        ids.update(k for k in range(NUM_KINDS) if hand[k] and playable(k, hand, top, colour, rules))
        ids.add(A.DRAW)  # R4.2: allowed even when a card could be played
        if may_call:
            ids.add(A.CALL_UNO)
    elif phase == "play_drawn":
        assert t.drawn is not None, "play_drawn, but nobody drew a playable card"
        ids.update((A.PLAY_BASE + t.drawn, A.KEEP))  # that card only (R4.2)
        if may_call:
            ids.add(A.CALL_UNO)
    elif phase == "choose_colour":
        ids.update(COLOUR_IDS)
    elif phase == "choose_target":  # an opponent k seats clockwise, 1 <= k < N
        ids.update(A.TARGET_BASE + k - 1 for k in range(1, g.num_players))
    elif phase == "challenge":
        ids.update((A.CHALLENGE, A.ACCEPT))
    elif phase == "uno_catch":  # R8 ruling: catch, or let the miss pass
        return [A.ACCEPT, A.CATCH_UNO]
    else:
        raise AssertionError(f"unknown phase {phase!r}")
    m = t.pending
    if rules.uno_catch == "next_player" and m is not None and m != p and sum(g.hand(m)) == 1:
        ids.add(A.CATCH_UNO)
    return sorted(ids)


def reference_state(g: Game, d: dict, t: Table) -> dict[str, np.ndarray]:
    """Every ``STATE_PIECES`` entry from its README description, from ``to_dict()`` and
    :class:`Table`."""
    out = {piece.name: np.zeros(piece.size, np.float32) for piece in O.STATE_PIECES}

    def hot(name: str, index: int | None) -> None:
        if index is not None and index >= 0:
            out[name][index] = 1

    over = d["game_over"]
    for s, codes in enumerate(d["hands"]):
        for code in codes:
            out["hands"][NUM_KINDS * s + kind(code)] += 1
        out["seat_present"][s] = 1
        out["hand_sizes"][s] = len(codes)
        out["uno_called"][s] = d["uno_called"][s]
        out["scores"][s] = d["scores"][s] / 100
    for code in d["draw_pile"]:
        out["draw_pile_counts"][kind(code)] += 1
    for code in d["discard_pile"]:
        out["discard_counts"][kind(code)] += 1
    hot("top_card", kind(d["discard_pile"][-1]))
    hot("active_colour", COLOURS.index(d["active_colour"]))
    if not over:
        hot("phase", PHASES.index(d["phase"]) if d["phase"] in PHASES else None)  # uno_catch: 0
        hot("current_player", d["current_player"])
        if d["phase"] == "play_drawn":
            hot("drawn_card", t.drawn)
        if d["phase"] == "choose_colour":
            hot("colour_context", CONTEXTS.index(t.context) if t.context else None)
    out["direction"][0] = d["direction"] == 1
    out["draw_pile_size"][0] = len(d["draw_pile"])
    out["discard_pile_size"][0] = len(d["discard_pile"])
    if t.w4 is not None:
        hot("w4_player", t.w4[0])
        hot("w4_prev_colour", t.w4[1])
        out["w4_illegal"][0] = t.w4[2]
    if t.reveal is not None:
        hot("reveal_player", t.reveal[0])
        hot("reveal_to", t.reveal[1])
    hot("last_item", ITEM_NAMES.index(d["last_item"]) if d["last_item"] else None)
    hot("uno_miss", t.pending)
    out["idle_turns"][0] = d["idle_turns"]
    out["round"][0] = min(d["round"], O.MAX_ROUND)
    hot("turn_player", t.turn)
    hot("previous_turn_player", t.previous)
    hot("dealer", t.dealer)
    return out


# ---------------------------------------------------------------------------------- the checks
def names(ids: Sequence[int]) -> list[str]:
    return [A.ACTION_NAMES[a] for a in ids]


def check_bitmask(g: Game) -> None:
    """``held[seat]`` (the engine's playable-cards bitmask) has exactly the kinds in the hand."""
    for s in range(g.num_players):
        hand = g.hand(s)
        expected = sum(1 << k for k in range(NUM_KINDS) if hand[k])
        if g.held[s] != expected:
            extra = [CODES[k] for k in range(NUM_KINDS) if (g.held[s] ^ expected) >> k & 1]
            raise AssertionError(f"held[{s}] disagrees with the hand on {extra}")


def check_legal(g: Game, t: Table) -> None:
    expected = reference_legal(g, t)
    got = list(g.legal_action_ids())
    if got != expected:
        p = g.current_player
        hand = [CODES[k] for k, c in enumerate(g.hand(p)) for _ in range(c)]
        raise AssertionError(
            f"legal ids of player {p} in {g.phase_name!r}: engine {names(got)}, rules "
            f"{names(expected)}; hand {hand}, top {CODES[g.top_card]}, "
            f"active {COLOURS[g.active_colour]}"
        )
    np.testing.assert_array_equal(np.flatnonzero(g.legal_actions()), expected)


def check_state(g: Game, d: dict, t: Table) -> None:
    expected = reference_state(g, d, t)
    assert set(expected) == {p.name for p in O.STATE_PIECES}
    got = O.split(O.encode_state(g), O.STATE_PIECES)
    for piece in O.STATE_PIECES:
        if not np.array_equal(got[piece.name], expected[piece.name]):
            diff = np.flatnonzero(got[piece.name] != expected[piece.name])
            raise AssertionError(
                f"state piece {piece.name!r} differs at {diff.tolist()}: encode_state "
                f"{got[piece.name][diff].tolist()}, reference {expected[piece.name][diff].tolist()}"
            )


def check_all(g: Game, t: Table, d: dict | None = None) -> None:
    """Every oracle on the current state (``d``: ``g.to_dict()`` if already at hand)."""
    check_bitmask(g)
    check_legal(g, t)
    check_state(g, g.to_dict() if d is None else d, t)


# ---------------------------------------------------------------------------------- random games
def uniform(rng: np.random.Generator, ids: Sequence[int]) -> int:
    """Uniformly random over the legal ids."""
    return ids[int(rng.integers(len(ids)))]


def prefer_play(rng: np.random.Generator, ids: Sequence[int]) -> int:
    """Random, but mostly plays a card when it can (rounds end), and mostly calls and catches
    UNO (both happen, and so do misses)."""
    for reflex in (A.CATCH_UNO, A.CALL_UNO):
        if reflex in ids and rng.random() < 0.7:
            return reflex
    plays = [a for a in ids if a < A.DRAW]
    if plays and rng.random() < 0.9:
        return plays[int(rng.integers(len(plays)))]
    return uniform(rng, ids)


def situations(g: Game, d: dict) -> set[str]:
    """What the oracle just checked, for the coverage assertions: the phase, the UNO actions on
    offer, a W4 held but masked (R6.2), a second round."""
    seen = {g.phase_name}
    ids = g.legal_action_ids()
    seen.update(A.ACTION_NAMES[a] for a in ids if a in (A.CALL_UNO, A.CATCH_UNO))
    if g.phase_name == "play" and g.hand(g.current_player)[W4] and W4 not in ids:
        seen.add("W4 masked")
    if d["round"] > 1:
        seen.add("round 2+")
    return seen


def play_checked(
    rules: Rules, seed: int, policy: Policy, cap: int, seen: set[str] | None = None
) -> Game:
    """One game of ``policy`` from ``seed``, every check before the first and after every step;
    adds what it met to ``seen``."""
    seen = set() if seen is None else seen
    rng = np.random.default_rng(seed)
    g = Game(rules, seed=seed)
    t = Table(rules)
    d = g.to_dict()
    t.new_round(g, d)
    step = 0
    try:
        check_all(g, t, d)
        while not g.game_over and step < cap:
            b = t.before(g, d)
            action = policy(rng, g.legal_action_ids())
            g.step(action)
            step += 1
            d = g.to_dict()
            t.after(b, action, g, d)
            check_all(g, t, d)
            seen |= situations(g, d)
    except AssertionError as e:
        raise AssertionError(
            f"{rules.num_players} players, seed {seed}, after step {step}: {e}"
        ) from None
    return g


def run(name: str, opts: dict, n: int, games: int, policy: Policy, cap: int,
        seen: set[str] | None = None) -> int:
    """Plays ``games`` checked games; returns how many ended."""
    rules = Rules(**{**opts, "num_players": n})
    base = sum(map(ord, name)) * 10_007 + n * 1_009 + (policy is uniform) * 500_009
    return sum(play_checked(rules, base + i, policy, cap, seen).game_over for i in range(games))


def expected_situations(opts: dict) -> set[str]:
    """What a config's random games must reach for the oracle to have checked it."""
    rules = Rules(**opts)
    out = {"play", "play_drawn", "choose_colour", "choose_target"}
    out.add("W4 masked" if rules.w4_strict else "challenge")
    if rules.uno == "on":
        out.add("CALL_UNO")
        if rules.uno_catch != "auto":
            out.add("CATCH_UNO")
        if rules.uno_catch == "any_player":
            out.add("uno_catch")
    if rules.match != "single_round":
        out.add("round 2+")
    return out


CASES = [pytest.param(name, opts, id=name) for name, opts in CONFIGS]


@pytest.mark.parametrize(("name", "opts"), CASES)
def test_fast_paths_match_the_rules_along_random_games(name: str, opts: dict) -> None:
    """Per config, 2-10 players: 2 uniform games (first 120 decisions) and 2 play-first games
    (to the end) per player count: 36 games, ~300 in all."""
    finished, seen = 0, set()
    for n in PLAYER_COUNTS:
        run(name, opts, n, 2, uniform, cap=120, seen=seen)
        finished += run(name, opts, n, 2, prefer_play, cap=2000, seen=seen)
    assert finished >= 14, f"only {finished}/18 play-first games ended"
    assert expected_situations(opts) <= seen, expected_situations(opts) - seen


@pytest.mark.slow
@pytest.mark.parametrize(("name", "opts"), CASES)
@pytest.mark.parametrize("n", PLAYER_COUNTS)
def test_fast_paths_match_the_rules_along_many_random_games(name: str, opts: dict, n: int) -> None:
    """Thousands of games: per config and player count, 15 uniform games (first 1,500
    decisions) and 40 play-first games."""
    run(name, opts, n, 15, uniform, cap=1500)
    run(name, opts, n, 40, prefer_play, cap=3000)


# ------------------------------------------------------------------- the references themselves
def position(hand: list[str], top: str, colour: str, **rules) -> Game:
    return Game.from_dict({
        "rules": {"num_players": 2, **rules}, "hands": [hand, ["B1", "B2"]],
        "draw_pile": ["G9", "Y7", "R3"], "discard_pile": [top], "active_colour": colour,
        "current_player": 0, "direction": 1,
    })


@pytest.mark.parametrize(("hand", "top", "colour", "rules", "plays"), [
    # R4.1: colour, number, symbol; a wild anytime
    (["R7", "Y5", "G2", "B9", "YS", "W4", "WB"], "R5", "R", {}, ["R7", "Y5", "W4", "WB"]),
    (["GS", "G3", "Y0", "BD"], "YS", "Y", {}, ["Y0", "GS"]),
    (["RD", "BD", "R1"], "GD", "G", {}, ["RD", "BD"]),
    # a wild top card: only the named colour (and wilds) match
    (["G1", "R4", "Y4", "WB"], "W4", "G", {}, ["G1", "WB"]),
    (["G1", "R4", "Y4", "W4"], "WB", "R", {}, ["R4", "W4"]),
    # R6.2: a strict W4 needs no card of the active colour, and no WB unless WB does not count
    (["W4", "R1"], "R5", "R", {"w4_strict": True}, ["R1"]),
    (["W4", "WB", "G1"], "R5", "R", {"w4_strict": True}, ["WB"]),
    (["W4", "WB", "G1"], "R5", "R", {"w4_strict": True, "item_box_counts_for_w4": False},
     ["W4", "WB"]),
    (["W4", "Y5"], "R5", "R", {"w4_strict": True}, ["Y5", "W4"]),  # a number match is no colour
])
def test_the_reference_on_hand_written_positions(hand, top, colour, rules, plays):
    g = position(hand, top, colour, **rules)
    t = Table(g.rules)
    t.new_round(g, g.to_dict())
    call = [A.CALL_UNO] if len(hand) == 2 else []
    expected = sorted([kind(c) for c in plays] + [A.DRAW] + call)
    assert reference_legal(g, t) == expected
    check_all(g, t)


def test_the_oracle_notices_a_stale_bitmask_wrong_legal_ids_and_a_wrong_state_piece(monkeypatch):
    g = position(["R7", "Y5", "G2"], "R5", "R")
    t = Table(g.rules)
    t.new_round(g, g.to_dict())
    check_all(g, t)
    g.held[0] &= ~(1 << kind("G2"))  # an unplayable kind forgotten: only the bitmask shows it
    with pytest.raises(AssertionError, match=r"held\[0\] disagrees with the hand on \['G2'\]"):
        check_all(g, t)
    g.held[0] |= 1 << kind("G2")
    legal = g.legal_action_ids()
    monkeypatch.setattr(Game, "legal_action_ids", lambda self: legal[1:])
    with pytest.raises(AssertionError, match=r"engine \['PLAY\(Y5\)'"):
        check_all(g, t)
    monkeypatch.undo()

    real = O.encode_state

    def broken(game):
        state = real(game)
        state[O.STATE_SLICES["dealer"]] = np.roll(state[O.STATE_SLICES["dealer"]], 1)
        return state

    monkeypatch.setattr(O, "encode_state", broken)
    with pytest.raises(AssertionError, match="state piece 'dealer' differs"):
        check_all(g, t)


def test_every_state_piece_has_a_reference():
    g = Game(Rules(num_players=3), seed=0)
    t = Table(g.rules)
    d = g.to_dict()
    t.new_round(g, d)
    pieces = reference_state(g, d, t)
    assert list(pieces) == [p.name for p in O.STATE_PIECES]
    assert sum(v.size for v in pieces.values()) == O.STATE_SIZE


def test_a_winner_who_missed_uno_has_no_pending_miss_once_out():
    """R8: the player who has gone out is never penalised, so no miss of theirs is pending. (The
    oracle found the engine keeping it at game over, in ``state()`` and every seat's view, after a
    missed UNO and an extra turn under ``uno_catch="next_player"``; since the R8 ruling seat 1 is
    asked first, out of turn, and lets it pass here.)"""
    g = Game.from_dict({
        "rules": {"num_players": 3, "uno_catch": "next_player"},
        "hands": [["WB", "R3"], ["G2", "GS"], ["B9"]], "draw_pile": ["R9", "Y7"],
        "discard_pile": ["Y5", "R5"], "active_colour": "R", "current_player": 0, "direction": 1,
    })
    g.step(kind("WB"))  # no UNO call; R9 flips: Mushroom, player 0 plays again
    assert (g.phase_name, g.current_player) == ("uno_catch", 1)
    g.step(A.ACCEPT)
    g.step(kind("R3"))  # out
    d = g.to_dict()
    assert d["game_over"] and d["winner"] == 0
    assert d["uno_miss"] is None
    assert g.view(1).uno_pending == -1
