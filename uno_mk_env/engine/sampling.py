"""Information-set sampling: a full game consistent with one seat's :class:`PlayerView`.

``Game.from_view`` / ``Game.determinize`` (search agents' determinizations) call
:func:`game_from_view`. It is built from the view alone, so it cannot carry hidden information;
a view that could not come from a real game (tampered, or of another rules version) raises
:class:`StateError` naming the field.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from ..errors import StateError
from .cards import COPIES, ITEM_NAMES, NUM_COLOURS, NUM_KINDS, W4, counts_to_kinds
from .legality import held_mask, playable, w4_is_legal
from .phases import COLOUR_AFTER_W4, COLOUR_NO_FLIP, PHASE_NAMES, Phase
from .play import Play
from .rules import Rules
from .state import check_consistency
from .table import VOID_MEMORY
from .view import PlayerView

__all__ = ["Condition", "check_view", "game_from_view"]

_G = TypeVar("_G", bound=Play)  # Game, or any class built on the rules

#: ``condition(hands, draw_pile, rng)``: moves hidden cards in place (see ``Game.from_view``).
Condition = Callable[[list[bytearray], list[int], np.random.Generator], None]


def game_from_view(
    cls: type[_G],
    view: PlayerView,
    rng: np.random.Generator,
    condition: Condition | None = None,
    validate: bool = True,
) -> _G:
    """A game of class ``cls`` (``Game.from_view``) sampled uniformly among those consistent
    with ``view``.

    The cards the seat cannot see (deck minus its hand minus the discard pile) are shuffled
    and dealt to the other hands (same sizes) and the draw pile (same size); the game gets a
    fresh generator drawn from ``rng``, so it cannot know future shuffles either. The discard
    pile keeps its top card (its order below is not public and never matters: it is shuffled
    when reused, R9). Knowledge the view holds only as history (a hand revealed by an earlier
    challenge) is kept as history but does not constrain the sample. If another seat is
    deciding whether to play a card it just drew, that card is sampled among the unseen kinds
    that are playable. The hidden W4 legality of a pending challenge is
    recomputed from the sampled hand of the W4 player.

    ``condition(hands, draw_pile, rng)``, if given, may then move the hidden cards between
    the other seats' hands (``bytearray`` counts per kind) and the draw pile (a list of kinds,
    top last) in place, to bias the sample with a belief (an agent's guess of who lacks a
    colour, say). It must keep every hand's size, the draw pile's length, the viewer's hand,
    and the card a deciding seat just drew in its hand; the game's derived state (playable
    kinds, W4 legality) is computed after it.

    ``validate=False`` skips checking ``view`` itself (its fields' types, ranges and counts;
    about a third of the cost): only for a view just made by ``Game.view``, as a search agent
    makes thousands. The sampled game is checked either way.

    Raises:
        StateError: ``view`` could not come from a real game (a tampered field, named), or
            ``condition`` broke one of those rules (the sample is discarded).
    """
    if validate:
        unseen = check_view(view)
    else:
        unseen = list(map(operator.sub, COPIES, map(operator.add, view.hand,
                                                    view.discard_counts)))
    g = cls.__new__(cls)
    g._setup(view.rules, int(rng.integers(2**63)))
    seat = view.seat
    n = view.num_players
    kinds = counts_to_kinds(unseen)
    pool = [kinds[i] for i in rng.permutation(len(kinds))]
    _copy_public_fields(g, view)
    top = view.top_card
    below = [k for k in range(NUM_KINDS) for _ in range(view.discard_counts[k] - (k == top))]
    g.discard = below + [top]
    g.discard_counts = bytearray(view.discard_counts)
    g.hands[seat] = bytearray(view.hand)
    g.sizes = list(view.hand_sizes)
    if view.revealed_hand is not None:
        g.reveals = ((view.revealed_by, seat, counts_to_kinds(view.revealed_hand)),)
    decider = view.current_player
    if view.phase == Phase.PLAY_DRAWN:
        if decider == seat:
            g.drawn = view.drawn_card
        else:
            g.held = [0] * n  # _playable (strict W4) reads it; the real masks come below
            g.drawn = _sample_drawn_card(g, pool, view.hand_sizes[decider] - 1, rng)
    for s in range(n):
        if s != seat:
            hand = g.hands[s]
            for _ in range(view.hand_sizes[s] - sum(hand)):
                hand[pool.pop()] += 1
    g.draw_pile = pool[:view.draw_pile_size]
    if condition is not None:
        _apply_condition(g, view, condition, rng)
    g.held = [held_mask(h) for h in g.hands]
    if view.w4_illegal >= 0:  # the viewer played it and knows
        g.w4_illegal = bool(view.w4_illegal)
    elif view.phase == Phase.CHALLENGE or view.colour_context == COLOUR_AFTER_W4:
        g.w4_illegal = _sample_w4_illegal(g, view, rng)
    check_consistency(g)
    if g.game_over:
        g.current_player = -1
        g._legal = ()
    return g


def _copy_public_fields(g: Any, view: PlayerView) -> None:
    n = view.num_players
    g.colour = view.active_colour
    g.current_player = view.current_player
    g.direction = view.direction
    g.phase = Phase(view.phase)
    g.dealer = view.dealer
    g.scores = list(view.scores)
    g.round = view.round
    g.uno_called = list(view.uno_called)
    g.uno_miss = view.uno_pending
    g.w4_player = view.w4_player
    g.w4_prev_colour = view.w4_prev_colour
    g.w4_hand_size = view.w4_hand_size
    g.colour_context = view.colour_context
    g.last_item = view.last_item
    g.idle_turns = view.idle_turns
    g.turn_player = view.turn_player
    g.previous_turn_player = view.previous_turn_player
    g.void_evidence = [
        bytearray(view.void_evidence[s * NUM_COLOURS:(s + 1) * NUM_COLOURS]) for s in range(n)
    ]
    g.game_over = view.phase == Phase.GAME_OVER


# ---------------------------------------------------------------------------- view checks


def _fail(field: str, value: Any, allowed: str) -> StateError:
    return StateError(f"PlayerView.{field} must be {allowed}, got {value!r:.80}")


def _int_in(view: PlayerView, field: str, lo: int, hi: int) -> int:
    v = getattr(view, field)
    if not isinstance(v, int | np.integer) or isinstance(v, bool) or not lo <= v <= hi:
        raise _fail(field, v, f"an int {lo}-{hi}")
    return int(v)


def _counts_of(view: PlayerView, field: str, optional: bool = False) -> None:
    v = getattr(view, field)
    if v is None and optional:
        return
    if not isinstance(v, bytes | bytearray) or len(v) != NUM_KINDS or not all(
            map(operator.le, v, COPIES)):
        raise _fail(field, v, f"bytes of {NUM_KINDS} counts, each at most the deck's copies")


def _per_seat(view: PlayerView, field: str, n: int, ok: Callable[[Any], bool], what: str) -> None:
    v = getattr(view, field)
    if not isinstance(v, tuple | list) or len(v) != n or not all(ok(x) for x in v):
        raise _fail(field, v, f"{n} {what}")


def check_view(view: Any) -> list[int]:
    """Raises :class:`StateError` naming the first field of ``view`` that no game could show
    (wrong type, size or range, or counts that do not add up); returns the unseen cards' counts
    per kind (the deck minus the viewer's hand and the discard pile)."""
    if not isinstance(view, PlayerView):
        raise StateError(f"from_view needs a PlayerView, got {type(view).__name__}")
    if not isinstance(view.rules, Rules):
        raise _fail("rules", view.rules, "a uno_mk_env.Rules")
    n = view.rules.num_players
    if view.num_players != n:
        raise _fail("num_players", view.num_players, f"rules.num_players ({n})")
    seat = _int_in(view, "seat", 0, n - 1)
    phase = _int_in(view, "phase", 0, len(PHASE_NAMES) - 1)
    over = phase == Phase.GAME_OVER
    _int_in(view, "current_player", -1 if over else 0, -1 if over else n - 1)
    for field in ("hand", "discard_counts"):
        _counts_of(view, field)
    _counts_of(view, "revealed_hand", optional=True)

    def is_count(x: Any) -> bool:
        return isinstance(x, int) and not isinstance(x, bool) and 0 <= x <= NUM_KINDS * 8

    _per_seat(view, "hand_sizes", n, is_count, "card counts")
    _per_seat(view, "uno_called", n, lambda x: isinstance(x, bool), "booleans")
    _per_seat(view, "scores", n, lambda x: isinstance(x, int) and not isinstance(x, bool),
              "ints")  # their range: state.check_consistency
    if sum(view.hand) != view.hand_sizes[seat]:
        raise _fail("hand", sum(view.hand), f"hand_sizes[{seat}] = {view.hand_sizes[seat]} cards")
    unseen = list(map(operator.sub, COPIES, map(operator.add, view.hand, view.discard_counts)))
    if min(unseen) < 0:
        raise _fail("discard_counts", view.discard_counts, "at most the deck's copies together "
                    "with the hand")
    others = sum(view.hand_sizes) - view.hand_sizes[seat]
    pile = _int_in(view, "draw_pile_size", 0, sum(unseen))
    if others + pile > sum(unseen):
        raise _fail("hand_sizes", view.hand_sizes, f"other hands of at most {sum(unseen) - pile} "
                    f"cards in all (the cards {seat} cannot see)")
    _int_in(view, "discard_pile_size", sum(view.discard_counts), sum(view.discard_counts))
    top = _int_in(view, "top_card", 0, NUM_KINDS - 1)
    if not view.discard_counts[top]:
        raise _fail("top_card", top, "a kind the discard pile holds")
    _check_view_scalars(view, n, seat)
    return unseen


def _check_view_scalars(view: PlayerView, n: int, seat: int) -> None:
    _int_in(view, "active_colour", 0, NUM_COLOURS - 1)
    if view.direction not in (1, -1) or isinstance(view.direction, bool):
        raise _fail("direction", view.direction, "1 or -1")
    for field in ("w4_player", "uno_catchable", "uno_pending", "turn_player",
                  "previous_turn_player"):
        _int_in(view, field, -1, n - 1)
    _int_in(view, "dealer", 0, n - 1)
    _int_in(view, "round", 1, 2**62)
    _int_in(view, "idle_turns", 0, n)
    _int_in(view, "last_item", -1, len(ITEM_NAMES) - 1)
    _int_in(view, "colour_context", -1, COLOUR_NO_FLIP - 1)  # R7.3: never "nothing to flip"
    w4 = view.w4_player >= 0
    _int_in(view, "w4_prev_colour", 0 if w4 else -1, NUM_COLOURS - 1 if w4 else -1)
    _int_in(view, "w4_hand_size", 0 if w4 else -1, NUM_KINDS * 8 if w4 else -1)
    mine = w4 and view.w4_player == seat
    _int_in(view, "w4_illegal", 0 if mine else -1, 1 if mine else -1)
    if view.revealed_hand is not None:
        _int_in(view, "revealed_by", 0, n - 1)
    if view.phase == Phase.PLAY_DRAWN and view.current_player == seat:
        drawn = _int_in(view, "drawn_card", 0, NUM_KINDS - 1)
        if not view.hand[drawn]:
            raise _fail("drawn_card", drawn, "a card of the viewer's hand")
    ev = view.void_evidence
    if not isinstance(ev, bytes | bytearray) or len(ev) != NUM_COLOURS * n or (
            ev and max(ev) > VOID_MEMORY):
        raise _fail("void_evidence", ev, f"bytes of {NUM_COLOURS * n} values 0-{VOID_MEMORY}")


# ------------------------------------------------------------------------- hidden choices


def _sample_w4_illegal(g: Any, view: PlayerView, rng: np.random.Generator) -> bool:
    """Whether the pending W4 (played by another seat) broke R6.1, judged on the hand its
    player held when playing it: the sampled hand minus the cards drawn since (a penalty for a
    caught UNO, say), i.e. a uniform pick of ``w4_hand_size`` of its cards, as every hidden card
    is equally likely to be either."""
    kinds = counts_to_kinds(g.hands[view.w4_player])
    held = 0
    for i in rng.permutation(len(kinds))[:view.w4_hand_size]:
        held |= 1 << kinds[i]
    return not w4_is_legal(held, view.w4_prev_colour, g.rules.item_box_counts_for_w4)


def _sample_drawn_card(g: Any, pool: list[int], rest: int, rng: np.random.Generator) -> int:
    """Picks the card another seat is deciding whether to play (R4.2), among the unseen cards
    that could be playable, and puts it in that seat's hand. Under ``w4_strict`` a drawn W4 is
    playable only if the rest of the hand has no active-colour card (nor a WB when it counts,
    R6.1), so that rest is then dealt from the cards compatible with it."""
    colour, top = g.colour, g.discard[-1]
    wb_counts = g.rules.item_box_counts_for_w4

    def beside_strict_w4(k: int) -> bool:  # holding k beside a W4 keeps the W4 legal
        return w4_is_legal(1 << k, colour, wb_counts)

    strict_w4_ok = not g._w4_strict or sum(map(beside_strict_w4, pool)) - 1 >= rest
    candidates = [i for i, k in enumerate(pool)
                  if (k != W4 or strict_w4_ok) and playable(k, top, colour)]
    if not candidates:
        raise StateError("PlayerView.phase 'play_drawn': no unseen card could be the playable "
                         "card the deciding seat drew")
    card = pool.pop(candidates[int(rng.integers(len(candidates)))])
    hand = g.hands[g.current_player]
    hand[card] += 1
    if card == W4 and g._w4_strict:
        allowed = [i for i, k in enumerate(pool) if beside_strict_w4(k)][:rest]
        for i in reversed(allowed):  # the pool is shuffled: the first ones are a uniform pick
            hand[pool.pop(i)] += 1
    return card


def _apply_condition(
    g: Any, view: PlayerView, condition: Condition, rng: np.random.Generator
) -> None:
    """Runs ``Game.from_view``'s ``condition`` hook on ``g`` and checks what it may not change:
    the hidden multiset, every hand size, the draw pile's length, the viewer's hand, the drawn
    card of a deciding seat (still playable)."""
    def hidden(game: Any) -> list[int]:
        counts = [0] * NUM_KINDS
        for s, hand in enumerate(game.hands):
            if s != view.seat:
                for k in range(NUM_KINDS):
                    counts[k] += hand[k]
        for k in game.draw_pile:
            counts[k] += 1
        return counts

    before = hidden(g)
    condition(g.hands, g.draw_pile, rng)
    problems = []
    if g.hands[view.seat] != view.hand:
        problems.append(f"the viewer's hand (seat {view.seat}) changed")
    sizes = [sum(h) for h in g.hands]
    if sizes != list(view.hand_sizes):
        problems.append(f"hand sizes {sizes} differ from the view's {list(view.hand_sizes)}")
    if len(g.draw_pile) != view.draw_pile_size:
        problems.append(f"the draw pile holds {len(g.draw_pile)} cards, not "
                        f"{view.draw_pile_size}")
    if hidden(g) != before:
        problems.append("the hidden cards are not the same multiset")
    if g.phase == Phase.PLAY_DRAWN:
        hand = g.hands[g.current_player]
        if not hand[g.drawn]:
            problems.append(f"seat {g.current_player} no longer holds the card it drew")
        elif g.drawn == W4 and g.rules.w4_strict and not w4_is_legal(
                held_mask(hand), g.colour, g.rules.item_box_counts_for_w4):
            problems.append(f"seat {g.current_player}'s drawn W4 is no longer playable (R6.2)")
    if problems:
        raise StateError("from_view condition: " + "; ".join(problems))
