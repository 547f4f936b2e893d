"""State dicts: ``Game.to_dict()`` and ``Game.from_dict()`` (JSON-safe, exact round trip).

``from_dict`` reads a full ``to_dict()`` or a minimal hand-written position (see
``Game.from_dict``). Every field has its own parser, which raises :class:`StateError` naming the
field, the value and what is allowed; :func:`check_consistency` then checks the fields against
each other (seats, phase and its fields, counts, scores, the winner). ``Game.from_view`` runs the
same consistency check, so neither can build a game that fails later.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeGuard, TypeVar

import numpy as np

from ..errors import StateError
from .cards import (
    CODES,
    COLOURS,
    COPIES,
    ITEM_NAMES,
    NO_CARD,
    NUM_CARDS,
    NUM_COLOURS,
    NUM_KINDS,
    W4,
    counts_to_codes,
)
from .cards import colour as parse_colour
from .cards import kind as parse_kind
from .events import event_to_dict
from .legality import held_mask
from .phases import COLOUR_AFTER_W4, COLOUR_CONTEXT_NAMES, COLOUR_NO_FLIP, PHASE_NAMES, Phase
from .play import Play
from .rules import MAX_ROUND_POINTS, Rules, RulesError, max_score
from .table import VOID_MEMORY

__all__ = ["STATE_FORMAT", "check_consistency", "game_from_dict", "game_to_dict"]

_G = TypeVar("_G", bound=Play)  # Game, or any class built on the rules

STATE_FORMAT = 1
#: Fields a minimal position must give.
REQUIRED = ("hands", "draw_pile", "discard_pile", "active_colour", "current_player", "direction")
#: Every field a state dict may have (``to_dict``'s, ``events`` with ``include_events``).
FIELDS = (
    "format", "rules", *REQUIRED, "phase", "dealer", "scores", "round", "drawn_card",
    "uno_called", "uno_miss", "w4", "colour_context", "reveals", "reveal", "last_item",
    "idle_turns", "turn_player", "previous_turn_player", "void_evidence", "round_over",
    "game_over", "winner", "round_winner", "round_hand_points", "num_steps", "num_keeps", "rng",
    "events",
)
#: Bit generators a state may name (numpy's own).
BIT_GENERATORS = ("PCG64", "PCG64DXSM", "Philox", "SFC64", "MT19937")
_BIG = 2**62  # bound of plain counters (steps): far above any game, far below float trouble

# ------------------------------------------------------------------------------------ writing


def game_to_dict(g: Any, include_events: bool = False) -> dict[str, Any]:
    """The full state of ``g`` as JSON-safe data (see ``Game.to_dict``)."""
    n = g.num_players
    d: dict[str, Any] = {
        "format": STATE_FORMAT,
        "rules": g.rules.to_dict(),
        "hands": [counts_to_codes(g.hands[s]) for s in range(n)],
        "draw_pile": [CODES[k] for k in reversed(g.draw_pile)],
        "discard_pile": [CODES[k] for k in g.discard],
        "active_colour": COLOURS[g.colour],
        "current_player": g.current_player if not g.game_over else None,
        "direction": g.direction,
        "phase": g.phase_name,
        "dealer": g.dealer,
        "scores": list(g.scores),
        "round": g.round,
        "drawn_card": CODES[g.drawn] if g.drawn != NO_CARD else None,
        "uno_called": list(g.uno_called),
        "uno_miss": g.uno_miss if g.uno_miss >= 0 else None,
        "w4": None if g.w4_player < 0 else {
            "player": g.w4_player,
            "previous_colour": COLOURS[g.w4_prev_colour],
            "illegal": g.w4_illegal,
            "hand_size": g.w4_hand_size,
        },
        "colour_context": (
            COLOUR_CONTEXT_NAMES[g.colour_context] if g.colour_context >= 0 else None
        ),
        "reveals": [
            {"player": w4p, "to": to, "hand": [CODES[k] for k in shown]}
            for w4p, to, shown in g.reveals
        ],
        "last_item": ITEM_NAMES[g.last_item] if g.last_item >= 0 else None,
        "idle_turns": g.idle_turns,
        "turn_player": g.turn_player,
        "previous_turn_player": g.previous_turn_player,
        "void_evidence": [list(e) for e in g.void_evidence],
        "round_over": g.round_over,
        "game_over": g.game_over,
        "winner": g.winner,
        "round_winner": g.round_winner,
        "round_hand_points": (
            None if g.round_hand_points is None else list(g.round_hand_points)
        ),
        "num_steps": g.num_steps,
        "num_keeps": g.num_keeps,
        "rng": _jsonable(g.rng.bit_generator.state),
    }
    if include_events:
        d["events"] = [event_to_dict(e) for e in g.events]
    return d


def _jsonable(state: dict[str, Any]) -> dict[str, Any]:
    """Bit-generator state with its big ints as strings (JSON readers other than Python's
    lose precision on integers beyond 2**53)."""
    out: dict[str, Any] = {}
    for k, v in state.items():
        if isinstance(v, dict):
            out[k] = _jsonable(v)
        elif isinstance(v, int) and not isinstance(v, bool):
            out[k] = str(v)
        else:
            out[k] = v
    return out


# ------------------------------------------------------------------------ field primitives


def _is_int(v: object) -> TypeGuard[int]:
    return isinstance(v, int) and not isinstance(v, bool)


def _int(v: Any, field: str, lo: int, hi: int) -> int:
    if not _is_int(v) or not lo <= v <= hi:
        raise StateError(f"'{field}' must be an int {lo}-{hi}, got {v!r}")
    return v


def _bool(v: Any, field: str) -> bool:
    if not isinstance(v, bool):
        raise StateError(f"'{field}' must be true or false, got {v!r}")
    return v


def _seat(v: Any, field: str, n: int, none: Any = ...) -> int:
    """A seat index ``0..n-1``; ``none`` (when given) is also accepted and returned as ``-1``."""
    if none is not ... and v == none and type(v) is type(none):
        return -1
    if not _is_int(v) or not 0 <= v < n:
        also = "" if none is ... else f" or {none!r}"
        raise StateError(f"'{field}' must be a seat 0-{n - 1}{also}, got {v!r}")
    return v


def _list(v: Any, field: str, length: int | None = None) -> list[Any]:
    if not isinstance(v, list | tuple):
        raise StateError(f"'{field}' must be a list, got {type(v).__name__} {v!r:.60}")
    if length is not None and len(v) != length:
        raise StateError(f"'{field}' must have {length} entries, got {len(v)}")
    return list(v)


def _mapping(v: Any, field: str, keys: tuple[str, ...]) -> Mapping[str, Any]:
    if not isinstance(v, Mapping) or any(k not in v for k in keys):
        raise StateError(f"'{field}' must be a mapping with keys {list(keys)}, got {v!r:.80}")
    return v


def _card(v: Any, label: str) -> int:
    """A card code; ``label`` names it in errors (``'hands'[0][1]``)."""
    try:
        return parse_kind(v)
    except ValueError as e:
        raise StateError(f"{label}: {e}") from None


def _cards(v: Any, field: str, label: str | None = None) -> list[int]:
    label = label or f"'{field}'"
    return [_card(c, f"{label}[{i}]") for i, c in enumerate(_list(v, field))]


def _colour(v: Any, field: str) -> int:
    try:
        return parse_colour(v)
    except (ValueError, TypeError, AttributeError):
        raise StateError(f"'{field}' must be one of R, Y, G, B, got {v!r}") from None


def _counts(kinds: list[int]) -> bytearray:
    counts = bytearray(NUM_KINDS)
    for k in kinds:
        if counts[k] == 255:
            break  # too many copies: reported by the deck check
        counts[k] += 1
    return counts


# ----------------------------------------------------------------------------- the parsers


def _parse_rules(d: Mapping[str, Any]) -> Rules:
    given = d.get("rules")
    given = {} if given is None else given
    if not isinstance(given, Mapping) or not all(isinstance(k, str) for k in given):
        raise StateError(f"'rules' must be a mapping of rule option names, got {given!r:.80}")
    options = dict(given)
    hands = d["hands"]
    options.setdefault("num_players", len(hands) if isinstance(hands, list | tuple) else 0)
    try:
        return Rules(**options)
    except RulesError as e:
        raise StateError(f"'rules': {e}") from None


def _parse_cards_and_piles(g: Any, d: Mapping[str, Any]) -> None:
    n = g.num_players
    hands = _list(d["hands"], "hands")
    if len(hands) != n:
        raise StateError(f"'hands' has {len(hands)} hands but rules.num_players is {n}")
    kinds = [_cards(h, "hands", f"'hands'[{s}]") for s, h in enumerate(hands)]
    g.draw_pile = _cards(d["draw_pile"], "draw_pile")[::-1]
    g.discard = _cards(d["discard_pile"], "discard_pile")
    if not g.discard:
        raise StateError("'discard_pile' must hold at least the top card")
    total = [0] * NUM_KINDS
    for k in [k for hand in kinds for k in hand] + g.draw_pile + g.discard:
        total[k] += 1
    too_many = [f"{CODES[k]} ×{total[k]} (deck has {COPIES[k]})"
                for k in range(NUM_KINDS) if total[k] > COPIES[k]]
    if too_many:
        raise StateError(f"more copies than the {NUM_CARDS}-card deck holds: {', '.join(too_many)}")
    g.hands = [_counts(hand) for hand in kinds]
    g.sizes = [len(hand) for hand in kinds]
    g.held = [held_mask(h) for h in g.hands]
    g.discard_counts = _counts(g.discard)
    g.colour = _colour(d["active_colour"], "active_colour")


def _parse_turn(g: Any, d: Mapping[str, Any]) -> None:
    n = g.num_players
    if type(d["direction"]) is not int or d["direction"] not in (1, -1):
        raise StateError(f"'direction' must be 1 or -1, got {d['direction']!r}")
    g.direction = d["direction"]
    phase = d.get("phase", "play")
    if phase not in PHASE_NAMES:
        raise StateError(f"'phase' {phase!r} unknown; phases: {list(PHASE_NAMES)}")
    g.phase = Phase(PHASE_NAMES.index(phase))
    g.game_over = _bool(d.get("game_over", False), "game_over")
    if (g.phase == Phase.GAME_OVER) != g.game_over:
        raise StateError("'phase' is 'game_over' exactly when 'game_over' is true")
    if g.game_over:
        g.current_player = _seat(d["current_player"], "current_player", n, none=None)
    else:
        g.current_player = _seat(d["current_player"], "current_player", n)
    default_dealer = (g.current_player - g.direction) % n
    g.dealer = _seat(d.get("dealer", default_dealer), "dealer", n)
    g.turn_player = _seat(d.get("turn_player", g.current_player), "turn_player", n, none=-1)
    g.previous_turn_player = _seat(
        d.get("previous_turn_player", -1), "previous_turn_player", n, none=-1
    )
    g.round = _int(d.get("round", 1), "round", 1, _BIG)
    g.idle_turns = _int(d.get("idle_turns", 0), "idle_turns", 0, n)
    g.num_steps = _int(d.get("num_steps", 0), "num_steps", 0, _BIG)
    g.num_keeps = _int(d.get("num_keeps", 0), "num_keeps", 0, g.num_steps)
    g.round_over = _bool(d.get("round_over", False), "round_over")


def _parse_scores(g: Any, d: Mapping[str, Any]) -> None:
    n = g.num_players
    scores = _list(d.get("scores", [0] * n), "scores", n)
    g.scores = [_int(x, f"scores[{s}]", 0, _BIG) for s, x in enumerate(scores)]  # range: below
    winner = d.get("winner")
    g.winner = None if winner is None else _seat(winner, "winner", n)
    round_winner = d.get("round_winner")
    g.round_winner = None if round_winner is None else _seat(round_winner, "round_winner", n)
    points = d.get("round_hand_points")
    g.round_hand_points = None if points is None else tuple(
        _int(x, f"round_hand_points[{s}]", 0, MAX_ROUND_POINTS)
        for s, x in enumerate(_list(points, "round_hand_points", n))
    )


def _parse_uno(g: Any, d: Mapping[str, Any]) -> None:
    n = g.num_players
    called = _list(d.get("uno_called", [False] * n), "uno_called", n)
    g.uno_called = [_bool(x, f"uno_called[{s}]") for s, x in enumerate(called)]
    g.uno_miss = _seat(d.get("uno_miss"), "uno_miss", n, none=None)


def _parse_drawn(g: Any, d: Mapping[str, Any]) -> None:
    drawn = d.get("drawn_card")
    if g.phase == Phase.PLAY_DRAWN:
        if drawn is None:
            raise StateError("phase 'play_drawn' needs 'drawn_card' (the card just drawn)")
        g.drawn = _card(drawn, "'drawn_card'")
    elif drawn is not None:
        raise StateError("'drawn_card' is only allowed in phase 'play_drawn'")


def _parse_w4(g: Any, d: Mapping[str, Any]) -> None:
    n = g.num_players
    w4 = d.get("w4")
    if w4 is None:
        return
    w4 = _mapping(w4, "w4", ("player", "previous_colour", "illegal"))
    g.w4_player = _seat(w4["player"], "w4.player", n)
    g.w4_prev_colour = _colour(w4["previous_colour"], "w4.previous_colour")
    g.w4_illegal = _bool(w4["illegal"], "w4.illegal")
    size = w4.get("hand_size", g.sizes[g.w4_player])
    g.w4_hand_size = _int(size, "w4.hand_size", 0, NUM_CARDS)


def _parse_colour_context(g: Any, d: Mapping[str, Any]) -> None:
    ctx = d.get("colour_context")
    if ctx is None:
        return
    allowed = COLOUR_CONTEXT_NAMES[:COLOUR_NO_FLIP]  # R7.3: there is always a card to flip
    if ctx not in allowed:
        raise StateError(f"'colour_context' {ctx!r} unknown; allowed: {list(allowed)} or null")
    g.colour_context = COLOUR_CONTEXT_NAMES.index(ctx)


def _parse_reveals(g: Any, d: Mapping[str, Any]) -> None:
    """``reveals``: a list of ``{player, to, hand}``, one per challenger (R6.3); or the form of
    package 0.6 and earlier, ``reveal``: one such mapping or ``null``."""
    if "reveal" in d and "reveals" in d:
        raise StateError("give 'reveals' (a list) or the older 'reveal' (one or null), not both")
    if "reveals" in d:
        entries = _list(d["reveals"], "reveals")
        if len(entries) > g.num_players:
            raise StateError(f"'reveals' holds {len(entries)} entries; at most one per seat "
                             f"({g.num_players})")
        field = "reveals[{}]"
    else:
        entries = [] if d.get("reveal") is None else [d["reveal"]]
        field = "reveal"
    reveals = [_reveal(entry, field.format(i), g.num_players) for i, entry in enumerate(entries)]
    challengers = [r[1] for r in reveals]
    if len(set(challengers)) != len(challengers):
        raise StateError(f"'reveals': one reveal per challenger ('to'), got {challengers}")
    g.reveals = tuple(reveals)


def _reveal(entry: Any, field: str, n: int) -> tuple[int, int, tuple[int, ...]]:
    entry = _mapping(entry, field, ("player", "to", "hand"))
    shown = _cards(entry["hand"], f"{field}.hand", f"'{field}.hand'")
    over = [CODES[k] for k in set(shown) if shown.count(k) > COPIES[k]]
    if over:
        raise StateError(f"'{field}.hand' shows more copies than the deck holds: {over}")
    player, to = _seat(entry["player"], f"{field}.player", n), _seat(entry["to"], f"{field}.to", n)
    if player == to:
        raise StateError(f"'{field}': a hand is shown to another seat ('player' != 'to')")
    return player, to, tuple(sorted(shown))


def _parse_last_item(g: Any, d: Mapping[str, Any]) -> None:
    item = d.get("last_item")
    if item is None:
        return
    if item not in ITEM_NAMES:
        raise StateError(f"'last_item' {item!r} unknown; items: {list(ITEM_NAMES)} or null")
    g.last_item = ITEM_NAMES.index(item)


def _parse_void_evidence(g: Any, d: Mapping[str, Any]) -> None:
    """Optional ``void_evidence``: n lists of 4 ints 0-VOID_MEMORY (default: all 0)."""
    rows = d.get("void_evidence")
    if rows is None:
        return
    n = g.num_players
    what = f"{n} lists of {NUM_COLOURS} ints 0-{VOID_MEMORY}"
    if not isinstance(rows, list | tuple) or len(rows) != n:
        raise StateError(f"'void_evidence' must be {what}, got {rows!r:.80}")
    evidence = []
    for s, row in enumerate(rows):
        if (not isinstance(row, list | tuple) or len(row) != NUM_COLOURS
                or not all(_is_int(x) and 0 <= x <= VOID_MEMORY for x in row)):
            raise StateError(
                f"'void_evidence'[{s}] must be {NUM_COLOURS} ints 0-{VOID_MEMORY}, got {row!r}"
            )
        evidence.append(bytearray(row))
    g.void_evidence = evidence


def _parse_rng(g: Any, d: Mapping[str, Any]) -> None:
    if "rng" not in d:
        return
    state = d["rng"]
    if not isinstance(state, Mapping) or state.get("bit_generator") not in BIT_GENERATORS:
        raise StateError(
            f"'rng' must be a bit-generator state naming one of {list(BIT_GENERATORS)}, "
            f"got {state!r:.80}"
        )
    try:
        restored = _restore(state)
        rng = np.random.Generator(getattr(np.random, state["bit_generator"])())
        rng.bit_generator.state = restored
    except (TypeError, ValueError, KeyError, OverflowError, AttributeError) as e:
        raise StateError(f"'rng': not a valid {state['bit_generator']} state ({e})") from None
    if _jsonable(rng.bit_generator.state) != _jsonable(restored):
        raise StateError(f"'rng': numpy did not keep the {state['bit_generator']} state as given")
    g.rng = rng


def _restore(state: Mapping[str, Any]) -> dict[str, Any]:
    """Inverse of :func:`_jsonable` (strings back to ints)."""
    out: dict[str, Any] = {}
    for k, v in state.items():
        if isinstance(v, Mapping):
            out[k] = _restore(v)
        elif isinstance(v, str) and k != "bit_generator":
            try:
                out[k] = int(v)
            except ValueError:
                raise ValueError(f"{k}={v!r} is not an integer") from None
        else:
            out[k] = v
    return out


_PARSERS = (
    _parse_cards_and_piles, _parse_turn, _parse_scores, _parse_uno, _parse_drawn, _parse_w4,
    _parse_colour_context, _parse_reveals, _parse_last_item, _parse_void_evidence,
)


def game_from_dict(cls: type[_G], d: Any, seed: int | None) -> _G:
    """A game of class ``cls`` from a state dict (see ``Game.from_dict``)."""
    if not isinstance(d, Mapping):
        raise StateError(f"state must be a mapping, got {type(d).__name__}")
    missing = [f for f in REQUIRED if f not in d]
    if missing:
        raise StateError(f"state is missing required field(s) {missing}; required: {REQUIRED}")
    unknown = sorted(str(k) for k in d if k not in FIELDS)
    if unknown:
        raise StateError(f"state has unknown field(s) {unknown}; the fields are {list(FIELDS)}")
    fmt = d.get("format", STATE_FORMAT)
    if fmt != STATE_FORMAT or not _is_int(fmt):
        raise StateError(f"'format' {fmt!r} is not supported; this version reads {STATE_FORMAT}")
    if seed is not None and not _is_int(seed):
        raise StateError(f"seed must be an int or None, got {seed!r}")
    g = cls.__new__(cls)
    g._setup(_parse_rules(d), seed)
    for parse in _PARSERS:
        parse(g, d)
    _parse_rng(g, d)
    check_consistency(g)
    if g.game_over:
        g.current_player = -1
        g._legal = ()
    return g


# ---------------------------------------------------------------------------- consistency


def check_consistency(g: Any) -> None:
    """Checks the fields of a built game against each other (and the rules); raises
    :class:`StateError` naming the fields. Shared by ``from_dict`` and ``from_view``."""
    for check in (_check_top, _check_phase_fields, _check_hands, _check_seats, _check_scores):
        check(g)


def _check_top(g: Any) -> None:
    top = g.discard[-1]
    if top < W4 and top // 13 != g.colour:
        raise StateError(
            f"'active_colour' {COLOURS[g.colour]!r} contradicts the top card {CODES[top]} "
            "(a coloured top card sets the active colour)"
        )


def _check_phase_fields(g: Any) -> None:
    phase, p = g.phase, g.current_player
    if phase == Phase.PLAY_DRAWN:
        if not g.hands[p][g.drawn]:
            raise StateError(f"'drawn_card' {CODES[g.drawn]} is not in the current player's hand")
        if not g._playable(g.drawn):
            raise StateError(
                f"'drawn_card' {CODES[g.drawn]} is not playable, so 'play_drawn' cannot be"
            )
    if (phase == Phase.CHOOSE_COLOUR) != (g.colour_context >= 0):
        raise StateError(
            f"'colour_context' is set exactly in phase 'choose_colour' (phase {g.phase_name!r}, "
            f"colour_context {g.colour_context})"
        )
    pending_w4 = phase == Phase.CHALLENGE or (
        phase == Phase.CHOOSE_COLOUR and g.colour_context == COLOUR_AFTER_W4)
    if pending_w4 and g.w4_player < 0:
        raise StateError(f"phase {g.phase_name!r} needs 'w4' {{player, previous_colour, illegal}}")
    if phase == Phase.CHOOSE_COLOUR and g.colour_context == COLOUR_AFTER_W4 and p != g.w4_player:
        raise StateError("after a W4 its player names the colour: 'current_player' must be "
                         f"'w4.player' ({g.w4_player}), got {p}")
    if phase == Phase.CHALLENGE:
        if g.rules.w4_strict:
            raise StateError("phase 'challenge' does not exist under rule w4_strict=True")
        if p != g.next_seat(g.w4_player):
            raise StateError(f"the challenger must be the seat after 'w4.player' "
                             f"({g.next_seat(g.w4_player)}), got 'current_player' {p}")
    if pending_w4 and g.w4_hand_size > g.sizes[g.w4_player]:
        raise StateError(f"'w4.hand_size' {g.w4_hand_size} exceeds the W4 player's "
                         f"{g.sizes[g.w4_player]} cards")


def _check_hands(g: Any) -> None:
    for s, size in enumerate(g.sizes):
        if size == 0 and not g.game_over and not (
                s == g.current_player and g.phase in (Phase.CHOOSE_COLOUR, Phase.CHOOSE_TARGET)):
            # R10.1: the round ends when a hand empties; only a last-card WB's own choices
            # (a Green Shell target, a Bob-omb colour, R7.4) are made with no cards.
            raise StateError(f"seat {s} has no cards but the round is not over")
    m = g.uno_miss
    if m >= 0 and (g.sizes[m] != 1 or g.uno_called[m] or g.rules.uno == "off"):
        raise StateError(f"'uno_miss' {m}: that seat must hold one card without an UNO call "
                         "(and rule uno 'on')")
    if g.phase == Phase.UNO_CATCH:
        _check_uno_catch(g)


def _check_uno_catch(g: Any) -> None:
    """Phase ``uno_catch`` (R8 ruling): a pending miss, asked of a player other than the offender
    before the turn of ``turn_player`` begins (the offender's own under "next_player")."""
    m, p, catch = g.uno_miss, g.current_player, g.rules.uno_catch
    if catch == "auto" or m < 0 or p == m:
        raise StateError("phase 'uno_catch' needs rule uno_catch 'next_player' or 'any_player', "
                         f"a pending 'uno_miss' and another seat deciding (uno_miss {m}, "
                         f"current_player {p}, uno_catch {catch!r})")
    if catch == "next_player" and (g.turn_player != m or p != g.next_seat(m)):
        raise StateError("under uno_catch 'next_player' phase 'uno_catch' asks the seat after "
                         f"'uno_miss' ({g.next_seat(m)}) before the offender's own turn "
                         f"('turn_player' {m}); got current_player {p}, turn_player "
                         f"{g.turn_player}")


def _check_seats(g: Any) -> None:
    if g.turn_player < 0 and g.phase not in (Phase.CHOOSE_COLOUR, Phase.GAME_OVER):
        raise StateError("'turn_player' -1 (no turn yet) is only possible while the start "
                         "card's colour is chosen")
    if not g.game_over and g.idle_turns >= g.num_players:
        raise StateError(f"'idle_turns' {g.idle_turns}: {g.num_players} idle turns end the round "
                         "(R9 stalemate)")
    if g.winner is not None and not g.game_over:
        raise StateError("'winner' is set only when the game is over")


def _check_scores(g: Any) -> None:
    """Each score within what a game under the rules can reach (the one home of that bound,
    for ``from_dict`` and ``from_view``), and the scores against the match state."""
    rules = g.rules
    high = max_score(rules)
    for s, x in enumerate(g.scores):
        if not 0 <= x <= high:
            shown = x if abs(x) < 10**12 else f"a {len(str(abs(x)))}-digit number"
            raise StateError(f"'scores[{s}]' is {shown}; allowed 0-{high} under these rules")
    if rules.match == "target_score" and not g.game_over:
        reached = [s for s, x in enumerate(g.scores) if x >= rules.target_score]
        if reached:
            raise StateError(f"'scores': seat(s) {reached} reached target_score "
                             f"{rules.target_score} but the game is not over")
    if rules.match == "fixed_rounds" and g.round > rules.rounds:
        raise StateError(f"'round' {g.round} exceeds rules.rounds {rules.rounds}")
    if g.game_over and g.winner is not None and rules.match == "target_score" and (
            g.scores[g.winner] < rules.target_score):
        raise StateError(f"'winner' {g.winner} has {g.scores[g.winner]} points, below "
                         f"target_score {rules.target_score}")
