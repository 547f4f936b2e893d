"""Observation and global-state vectors, built from named pieces (docs/api.md#observation).

The layout is one list of :class:`Piece` (name, size, description, upper bound); offsets are
derived from it, the encoder writes the pieces in that order, and the tables of docs/environment.md
(observation, :func:`layout_markdown`) and docs/api.md (``state()``, :func:`state_layout_markdown`)
are generated from the same list, as OpenSpiel's ``KuhnPokerObserver`` does.

* :func:`encode` turns a :class:`~uno_mk_env.PlayerView` (``game.view(seat)``) into a ``float32``
  vector of :data:`OBS_SIZE`. It sees nothing but the view, so it cannot leak hidden cards.
  Opponents appear in relative seat order (slot ``k`` = the seat ``k`` places clockwise from the
  observer, slot 0 = the observer), padded to 10 slots, so the size is the same for 2-10 players.
* :func:`encode_state` is the perfect-information vector for centralised critics (absolute seats,
  every hand, the draw pile's contents, hidden W4 legality).
* :func:`action_mask` turns legal action ids into the ``int8[73]`` mask.

Scaling: counts (cards per kind, hand and pile sizes, idle turns, round number) are raw small
integers; scores are divided by 100 (the unit of ``reward="points"``). Everything is ``>= 0``.

Speed: see :func:`encode` (a few microseconds a call).

Imports only numpy and the engine (no gymnasium / pettingzoo).
"""

from __future__ import annotations

from operator import itemgetter
from typing import NamedTuple

import numpy as np

from . import actions as A
from .cards import COPIES, NUM_CARDS, NUM_COLOURS, NUM_ITEMS, NUM_KINDS
from .game import Game
from .phases import PHASE_NAMES, TURN_PHASES
from .rewards import POINTS_SCALE
from .rules import MAX_PLAYERS, Rules, max_score
from .table import VOID_MEMORY
from .view import PlayerView

MAX_SEATS = MAX_PLAYERS  #: slots of every per-seat block (relative seats 0-9, 0 = the observer)
SCORE_SCALE = POINTS_SCALE  #: scores are divided by this (the unit of ``reward="points"``)
MAX_ROUND = 255  #: the round number is clipped here (it is stored as a byte)
NUM_COLOUR_CONTEXTS = 4  #: why a colour is being chosen: W4, Bob-omb, start card (4th: unused)

__all__ = [
    "OBS_PIECES", "OBS_SIZE", "OBS_SLICES", "STATE_PIECES", "STATE_SIZE", "STATE_SLICES",
    "Piece",
    "action_mask", "encode", "encode_state", "layout_markdown", "observation_high", "split",
    "state_high", "state_layout_markdown",
]


class Piece(NamedTuple):
    """One named slice of a vector.

    Attributes:
        name: identifier (also the key of :func:`split`).
        size: number of entries.
        doc: what the entries mean (one cell of the generated table).
        high: upper bound of every entry, or a tuple with one bound per entry; ``None`` for the
            score pieces, whose bound depends on the rules (see :func:`observation_high`).
    """

    name: str
    size: int
    doc: str
    high: float | tuple[float, ...] | None = 1.0


_PHASES = ", ".join(PHASE_NAMES[:len(TURN_PHASES)])
_SEATS = "slot k = the seat k places clockwise from me (0 = me); unused slots 0"

#: The observation layout, in order (docs/api.md#observation).
OBS_PIECES: tuple[Piece, ...] = (
    Piece("hand", NUM_KINDS, "my hand: number of cards of each kind (kind id order)", COPIES),
    Piece("top_card", NUM_KINDS, "one-hot kind of the top card of the discard pile"),
    Piece("active_colour", NUM_COLOURS, "one-hot active colour (R, Y, G, B)"),
    Piece("phase", len(TURN_PHASES),
          f"one-hot decision phase ({_PHASES}); all 0 once the game is over, and in phase "
          "`uno_catch` (then `decider` and `uno_catchable` are set)"),
    Piece("drawn_card", NUM_KINDS,
          "one-hot kind of the card I just drew, only while I decide in `play_drawn`"),
    Piece("direction", 1, "1 = clockwise, 0 = counter-clockwise"),
    Piece("seat_present", MAX_SEATS, f"1 for every seat at the table; {_SEATS}"),
    Piece("hand_sizes", MAX_SEATS, f"cards in each hand; {_SEATS}", float(NUM_CARDS)),
    Piece("uno_called", MAX_SEATS, f"1 if that player has called UNO; {_SEATS}"),
    Piece("scores", MAX_SEATS, f"game score / {SCORE_SCALE:g}; {_SEATS}", None),
    Piece("decider", MAX_SEATS,
          "one-hot relative seat of the player deciding now (0 = me); all 0 once over"),
    Piece("previous_turn_player", MAX_SEATS,
          "one-hot relative seat of the player whose turn came before the current turn"),
    Piece("uno_catchable", MAX_SEATS,
          "one-hot relative seat of a player whose missed UNO can be caught now "
          "(`uno_catch` \"next_player\" or \"any_player\")"),
    Piece("uno_pending", MAX_SEATS,
          "one-hot relative seat of a player left with one card and no UNO call whose penalty "
          "or catch is still open"),
    Piece("draw_pile_size", 1, "cards in the draw pile", float(NUM_CARDS)),
    Piece("discard_pile_size", 1, "cards in the discard pile", float(NUM_CARDS)),
    Piece("discard_counts", NUM_KINDS, "discard pile: number of cards of each kind", COPIES),
    Piece("w4_prev_colour", NUM_COLOURS,
          "one-hot active colour before this round's latest Wild Draw Four (0 if none)"),
    Piece("w4_player", MAX_SEATS, "one-hot relative seat of who played that Wild Draw Four"),
    Piece("revealed_hand", NUM_KINDS,
          "the W4 player's hand shown to me by my (latest) challenge this round, per kind "
          "(0 otherwise; another seat's later challenge does not erase it)",
          COPIES),
    Piece("revealed_by", MAX_SEATS, "one-hot relative seat of the player whose hand I saw"),
    Piece("last_item", NUM_ITEMS,
          "one-hot item last activated this round (Mushroom, Banana Peel, Green Shell, "
          "Lightning, Bob-omb)"),
    Piece("colour_context", NUM_COLOUR_CONTEXTS,
          "one-hot reason of a pending colour choice (W4, Bob-omb, start card; the 4th entry "
          "is never set, R7.3)"),
    Piece("idle_turns", 1, "turns in a row without a card played or drawn (R9 stalemate count)",
          float(MAX_SEATS)),
    Piece("round", 1, f"round number (1-based, clipped at {MAX_ROUND})", float(MAX_ROUND)),
    Piece("void_evidence", MAX_SEATS * NUM_COLOURS,
          f"entry 4·slot + colour: {VOID_MEMORY} − cards that seat drew since it last drew "
          f"voluntarily (R4.2) facing that active colour, floored at 0; 0 if it has not this "
          f"round (`PlayerView.void_evidence`); {_SEATS}", float(VOID_MEMORY)),
)

_ABS = "index = absolute seat; unused seats 0"

#: The global state layout (perfect information, absolute seats), in order.
STATE_PIECES: tuple[Piece, ...] = (
    Piece("hands", MAX_SEATS * NUM_KINDS,
          f"every hand, count per kind: seat s at [54·s, 54·s + 54); {_ABS}", COPIES * MAX_SEATS),
    Piece("draw_pile_counts", NUM_KINDS, "draw pile: number of cards of each kind", COPIES),
    Piece("discard_counts", NUM_KINDS, "discard pile: number of cards of each kind", COPIES),
    Piece("top_card", NUM_KINDS, "one-hot kind of the top card"),
    Piece("active_colour", NUM_COLOURS, "one-hot active colour"),
    Piece("phase", len(TURN_PHASES),
          f"one-hot decision phase ({_PHASES}); all 0 once over and in `uno_catch`"),
    Piece("current_player", MAX_SEATS, "one-hot seat of the decider; all 0 once over"),
    Piece("drawn_card", NUM_KINDS, "one-hot kind of the card the decider just drew (`play_drawn`)"),
    Piece("direction", 1, "1 = clockwise, 0 = counter-clockwise"),
    Piece("seat_present", MAX_SEATS, f"1 for every seat at the table; {_ABS}"),
    Piece("hand_sizes", MAX_SEATS, f"cards in each hand; {_ABS}", float(NUM_CARDS)),
    Piece("uno_called", MAX_SEATS, f"1 if that player has called UNO; {_ABS}"),
    Piece("scores", MAX_SEATS, f"game score / {SCORE_SCALE:g}; {_ABS}", None),
    Piece("draw_pile_size", 1, "cards in the draw pile", float(NUM_CARDS)),
    Piece("discard_pile_size", 1, "cards in the discard pile", float(NUM_CARDS)),
    Piece("w4_player", MAX_SEATS, "one-hot seat of who played this round's latest W4"),
    Piece("w4_prev_colour", NUM_COLOURS, "one-hot active colour before that W4"),
    Piece("w4_illegal", 1, "1 if that W4 broke R6.1 (hidden from the players)"),
    Piece("reveal_player", MAX_SEATS,
          "one-hot seat whose hand the round's latest challenge revealed"),
    Piece("reveal_to", MAX_SEATS, "one-hot seat of the challenger who saw it"),
    Piece("last_item", NUM_ITEMS, "one-hot item last activated this round"),
    Piece("colour_context", NUM_COLOUR_CONTEXTS, "one-hot reason of a pending colour choice"),
    Piece("uno_miss", MAX_SEATS, "one-hot seat with a pending missed UNO"),
    Piece("idle_turns", 1, "R9 stalemate count", float(MAX_SEATS)),
    Piece("round", 1, f"round number (clipped at {MAX_ROUND})", float(MAX_ROUND)),
    Piece("turn_player", MAX_SEATS, "one-hot seat whose turn it is"),
    Piece("previous_turn_player", MAX_SEATS, "one-hot seat whose turn came before"),
    Piece("dealer", MAX_SEATS, "one-hot seat of this round's dealer"),
)


def _slices(pieces: tuple[Piece, ...]) -> dict[str, slice]:
    out, start = {}, 0
    for p in pieces:
        out[p.name] = slice(start, start + p.size)
        start += p.size
    return out


OBS_SLICES: dict[str, slice] = _slices(OBS_PIECES)  #: piece name -> index range
OBS_SIZE: int = sum(p.size for p in OBS_PIECES)  #: length of the observation vector
STATE_SLICES: dict[str, slice] = _slices(STATE_PIECES)
STATE_SIZE: int = sum(p.size for p in STATE_PIECES)


def _high(pieces: tuple[Piece, ...], rules: Rules) -> np.ndarray:
    score_high = max_score(rules) / SCORE_SCALE
    parts = []
    for p in pieces:
        h = score_high if p.high is None else p.high
        parts.append(np.broadcast_to(np.asarray(h, dtype=np.float32), (p.size,)))
    return np.concatenate(parts).astype(np.float32)


def observation_high(rules: Rules) -> np.ndarray:
    """Upper bounds of the observation entries (the lower bound is 0 everywhere)."""
    return _high(OBS_PIECES, rules)


def state_high(rules: Rules) -> np.ndarray:
    """Upper bounds of the state entries (the lower bound is 0 everywhere)."""
    return _high(STATE_PIECES, rules)


def split(vector: np.ndarray, pieces: tuple[Piece, ...] = OBS_PIECES) -> dict[str, np.ndarray]:
    """The named pieces of an observation (or, with ``STATE_PIECES``, a state) vector."""
    slices = _slices(pieces)
    return {name: vector[..., s] for name, s in slices.items()}


def _markdown(pieces: tuple[Piece, ...]) -> str:
    rows = ["| indices | name | size | meaning |", "|---|---|---|---|"]
    slices = _slices(pieces)
    for p in pieces:
        s = slices[p.name]
        idx = f"{s.start}" if p.size == 1 else f"{s.start}–{s.stop - 1}"
        rows.append(f"| {idx} | `{p.name}` | {p.size} | {p.doc} |")
    rows.append(f"| | **total** | **{sum(p.size for p in pieces)}** | |")
    return "\n".join(rows)


def layout_markdown() -> str:
    """The observation table of docs/environment.md, generated from :data:`OBS_PIECES`."""
    return _markdown(OBS_PIECES)


def state_layout_markdown() -> str:
    """The ``state()`` table of docs/api.md, generated from :data:`STATE_PIECES`."""
    return _markdown(STATE_PIECES)


# ------------------------------------------------------------------------------- the encoders
def _one_hot_table(width: int) -> tuple[bytes, ...]:
    """``table[i]`` = one-hot bytes of ``i``; ``table[-1]`` = all zeros (index ``-1`` = none)."""
    rows = [bytes(1 if j == i else 0 for j in range(width)) for i in range(width)]
    return (*rows, bytes(width))


_HOT_KIND = _one_hot_table(NUM_KINDS)
_HOT_COLOUR = _one_hot_table(NUM_COLOURS)
#: index GAME_OVER (5) is the all-zero row, and so is UNO_CATCH (6)
_HOT_PHASE = (*_one_hot_table(len(TURN_PHASES)), bytes(len(TURN_PHASES)))
_HOT_ITEM = _one_hot_table(NUM_ITEMS)
_HOT_CONTEXT = _one_hot_table(NUM_COLOUR_CONTEXTS)
_HOT_SEAT = _one_hot_table(MAX_SEATS)
_PAD = tuple(bytes(MAX_SEATS - k) for k in range(MAX_SEATS + 1))  # _PAD[k]: pad k slots to 10
_PRESENT = tuple(b"\x01" * n + bytes(MAX_SEATS - n) for n in range(MAX_SEATS + 1))
_DIRECTION = {1: b"\x01", -1: b"\x00"}
_SCORES = OBS_SLICES["scores"].start


_NO_KINDS = bytes(NUM_KINDS)
_NO_VOID = tuple(bytes(NUM_COLOURS * (MAX_SEATS - n)) for n in range(MAX_SEATS + 1))
_NO_SCORES = tuple((0,) * n for n in range(MAX_SEATS + 1))
#: ``_RELATIVE[n][me][seat]`` = ``(seat - me) % n``; ``[-1]`` (no seat) stays ``-1``.
_RELATIVE = tuple(
    tuple((*((s - me) % n for s in range(n)), -1) for me in range(n)) for n in range(MAX_SEATS + 1)
)
#: The view fields the encoder reads, fetched in one C call (indices looked up by name).
_VIEW_FIELDS = itemgetter(*(PlayerView._fields.index(name) for name in (
    "seat", "num_players", "hand", "top_card", "active_colour", "phase", "drawn_card", "direction",
    "hand_sizes", "uno_called", "scores", "current_player", "previous_turn_player",
    "uno_catchable", "uno_pending", "draw_pile_size", "discard_pile_size", "discard_counts",
    "w4_prev_colour", "w4_player", "revealed_hand", "revealed_by", "last_item", "colour_context",
    "idle_turns", "round", "void_evidence",
)))
_frombuffer = np.frombuffer
_uint8 = np.uint8
_float32 = np.float32


def encode(view: PlayerView) -> np.ndarray:
    """The observation vector (``float32[OBS_SIZE]``, a new array) of the seat whose view it is.

    Only ``view`` is read: what the seat may not know is not in the view, so not in the vector.

    Speed (the AEC loop's budget is a few microseconds): every piece is a small ``bytes`` (a
    one-hot is a lookup in a precomputed table whose entry ``-1`` is all zeros, so "none" needs
    no branch; per-seat tuples are rotated to relative order and converted in C), the pieces
    are joined once and one ``astype`` makes the ``float32`` vector; only non-zero scores are
    written as floats afterwards.
    """
    (me, n, hand, top, colour, phase, drawn, direction, sizes, uno, scores, decider, previous,
     catchable, pending, draw_size, discard_size, discard, w4_colour, w4_player, revealed,
     revealed_by, item, context, idle, rnd, void) = _VIEW_FIELDS(view)
    rel = _RELATIVE[n][me]
    pad = _PAD[n]
    cut = NUM_COLOURS * me
    vector = _frombuffer(b"".join((
        bytes(hand),
        _HOT_KIND[top],
        _HOT_COLOUR[colour],
        _HOT_PHASE[phase],
        _HOT_KIND[drawn],
        _DIRECTION[direction],
        _PRESENT[n],
        bytes(sizes[me:] + sizes[:me]), pad,
        bytes(uno[me:] + uno[:me]), pad,
        _PAD[0],  # scores, written below
        _HOT_SEAT[rel[decider]],
        _HOT_SEAT[rel[previous]],
        _HOT_SEAT[rel[catchable]],
        _HOT_SEAT[rel[pending]],
        bytes((draw_size, discard_size)),
        bytes(discard),
        _HOT_COLOUR[w4_colour],
        _HOT_SEAT[rel[w4_player]],
        _NO_KINDS if revealed is None else bytes(revealed),
        _HOT_SEAT[rel[revealed_by]],
        _HOT_ITEM[item],
        _HOT_CONTEXT[context],
        bytes((idle, rnd if rnd < MAX_ROUND else MAX_ROUND)),
        void[cut:], void[:cut], _NO_VOID[n],
    )), _uint8).astype(_float32)
    if scores != _NO_SCORES[n]:
        vector[_SCORES:_SCORES + n] = [x / SCORE_SCALE for x in scores[me:] + scores[:me]]
    return vector


_MASK_TEMPLATE = bytes(A.NUM_ACTIONS)


def action_mask(legal: tuple[int, ...] | list[int]) -> np.ndarray:
    """The ``int8[73]`` mask (a new, writable array) of the given legal action ids."""
    buf = bytearray(_MASK_TEMPLATE)
    for a in legal:
        buf[a] = 1
    return np.frombuffer(buf, np.int8)


def encode_state(game: Game) -> np.ndarray:
    """The global, perfect-information state vector (``float32[STATE_SIZE]``) of ``game``.

    Reads the game itself (every hand, the draw pile's contents, the hidden W4 legality): for
    centralised critics only, never for a policy that acts at the table.
    """
    n = game.num_players
    over = game.game_over
    draw_counts = [0] * NUM_KINDS
    for k in game.draw_pile:
        draw_counts[k] += 1
    reveal = game.reveal
    hands = b"".join(bytes(h) for h in game.hands) + bytes(NUM_KINDS * (MAX_SEATS - n))
    chunks = [
        hands,
        bytes(draw_counts),
        bytes(game.discard_counts),
        _HOT_KIND[game.discard[-1] if game.discard else -1],
        _HOT_COLOUR[game.colour],
        _HOT_PHASE[game.phase],
        _HOT_SEAT[-1 if over else game.current_player],
        _HOT_KIND[game.drawn],
        _DIRECTION[game.direction],
        _PRESENT[n],
        bytes(game.sizes), _PAD[n],
        bytes(game.uno_called), _PAD[n],
        _PAD[0],  # scores
        bytes((len(game.draw_pile), len(game.discard))),
        _HOT_SEAT[game.w4_player],
        _HOT_COLOUR[game.w4_prev_colour],
        b"\x01" if game.w4_player >= 0 and game.w4_illegal else b"\x00",
        _HOT_SEAT[-1 if reveal is None else reveal[0]],
        _HOT_SEAT[-1 if reveal is None else reveal[1]],
        _HOT_ITEM[game.last_item],
        _HOT_CONTEXT[game.colour_context],
        _HOT_SEAT[game.uno_miss],
        bytes((game.idle_turns, min(game.round, MAX_ROUND))),
        _HOT_SEAT[game.turn_player],
        _HOT_SEAT[game.previous_turn_player],
        _HOT_SEAT[game.dealer],
    ]
    state = np.frombuffer(b"".join(chunks), np.uint8).astype(np.float32)
    s = STATE_SLICES["scores"].start
    state[s:s + n] = [x / SCORE_SCALE for x in game.scores]
    return state
