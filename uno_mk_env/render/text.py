"""Text rendering (``render_mode="ansi"``/``"human"``): the table as one seat sees it.

Everything shown comes from that seat's :class:`~uno_mk_env.PlayerView` and from events filtered
by :func:`uno_mk_env.engine.events.event_for`, so the text holds no more than the observation: other
players' drawn cards appear as counts, a challenge's revealed hand only for the challenger.
Library code never prints; the envs print the returned string in ``"human"`` mode.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import NamedTuple

from ..engine import actions as A
from ..engine.actions import KEEP
from ..engine.cards import CODES, COLOUR_NAMES, ITEM_NAMES, NAMES, counts_to_kinds
from ..engine.events import Event, event_for
from ..engine.game import Game
from ..engine.phases import Phase
from ..engine.view import PlayerView

__all__ = [
    "PHASE_WORDS", "KnownCards", "RecentDecisions", "action_label", "action_text", "event_text",
    "events_text", "known_cards", "known_text", "merge_lines", "offered_actions", "render_game",
    "render_table",
]

#: What the decider of each phase does, in words.
PHASE_WORDS: dict[int, str] = {
    Phase.PLAY: "play a card or draw",
    Phase.PLAY_DRAWN: "play the card just drawn or keep it",
    Phase.CHOOSE_COLOUR: "name a colour",
    Phase.CHOOSE_TARGET: "aim the Green Shell",
    Phase.CHALLENGE: "challenge or accept the Wild Draw Four",
    Phase.UNO_CATCH: "catch a missed UNO or let it pass",
    Phase.GAME_OVER: "nobody: the game is over",
}

_DRAW_REASON = {
    "voluntary": "", "draw_two": " (Draw Two)", "wild_draw_four": " (Wild Draw Four)",
    "challenge_failed": " (failed challenge)", "challenge_won": " (illegal W4)",
    "banana": " (Banana Peel)", "green_shell": "", "lightning": "", "bob_omb": " (Bob-omb)",
    "uno_penalty": " (missed UNO)",
}


def _cards(kinds: Sequence[int]) -> str:
    return " ".join(CODES[k] for k in kinds)


def _draw_text(event: Event, names: Sequence[str]) -> str | None:
    seat, cards, reason = event[1], event[2], event[3]
    if reason == "deal":
        return None
    shown = f" ({_cards(cards)})" if cards and cards[0] is not None else ""
    if reason == "voluntary":
        if not cards:
            return f"{names[seat]} could not draw (no cards left)"
        return f"{names[seat]} drew a card{shown}"
    return f"{names[seat]} draws {len(cards)}{shown}{_DRAW_REASON.get(reason, '')}"


def _reveal_text(event: Event, names: Sequence[str]) -> str:
    if event[3] is None:
        return f"{names[event[1]]} showed their hand to {names[event[2]]}"
    return f"{names[event[1]]} showed their hand: {_cards(event[3])}"


def _catch_text(event: Event, names: Sequence[str]) -> str:
    if event[1] < 0:
        return f"{names[event[2]]} missed UNO"
    return f"{names[event[1]]} caught {names[event[2]]}'s missed UNO"


def _round_end_text(event: Event, names: Sequence[str]) -> str:
    if event[1] is None:
        return "round over, no winner"
    return f"{names[event[1]]} wins the round (+{event[2]} points)"


#: One formatter per event type (docs/api.md#events): ``(event, names) -> line or None``.
_EVENT_TEXT: dict[str, Callable[[Event, Sequence[str]], str | None]] = {
    "deal": lambda e, names: f"round {e[1]} dealt by {names[e[2]]}",
    "start_card": lambda e, names: f"start card {CODES[e[1]]}",
    "play": lambda e, names: f"{names[e[1]]} played {NAMES[e[2]]}",
    "draw": _draw_text,
    "keep": lambda e, names: f"{names[e[1]]} kept it",
    "colour": lambda e, names: f"{names[e[1]]} named {COLOUR_NAMES[e[2]]}",
    "flip": lambda e, names: f"flipped {CODES[e[2]]}",
    "item": lambda e, names: ITEM_NAMES[e[2]],
    "target": lambda e, names: None,  # the Green Shell's draw event names the target
    "skip": lambda e, names: f"{names[e[1]]} is skipped",
    "reverse": lambda e, names: "direction reversed",
    "accept": lambda e, names: f"{names[e[1]]} accepted",
    "challenge": lambda e, names: (f"{names[e[1]]} challenged {names[e[2]]}: the W4 was "
                                   f"{'illegal' if e[3] else 'legal'}"),
    "reveal": _reveal_text,
    "uno": lambda e, names: f"{names[e[1]]} called UNO!",
    "catch": _catch_text,
    "let_pass": lambda e, names: f"{names[e[1]]} let {names[e[2]]}'s missed UNO pass",
    "reshuffle": lambda e, names: f"discard pile reshuffled ({e[1]} cards)",
    "stalemate": lambda e, names: "stalemate",
    "round_end": _round_end_text,
}


def event_text(event: Event, names: Sequence[str], viewer: int | None = None) -> str | None:
    """One event as text (``None`` for events not worth a line, e.g. dealt cards).

    ``event`` should already be filtered for ``viewer``
    (:func:`uno_mk_env.engine.events.event_for`).
    """
    text = _EVENT_TEXT.get(event[0])
    return text(event, names) if text is not None else f"{event[0]} {event[1:]}"


def events_text(events: Sequence[Event], names: Sequence[str], viewer: int | None = None) -> str:
    """Events as one line: ``"player_2 played Wild Item Box → flipped G7 → Green Shell:
    player_0 draws 1"``."""
    out = ""
    after_item = False
    for e in events:
        text = event_text(e, names, viewer)
        if text is None:
            continue
        out = text if not out else out + (": " if after_item else " → ") + text
        after_item = e[0] == "item"
    return out


def merge_lines(lines: Sequence[tuple[int, str]], names: Sequence[str]) -> list[str]:
    """Joins consecutive ``(actor seat, text)`` decisions of the same actor into one line."""
    out: list[str] = []
    prev = None
    for actor, text in lines:
        if not text:
            continue
        if out and actor == prev and actor >= 0:
            out[-1] += " → " + text
        else:
            out.append(text)
        prev = actor
    return out


class KnownCards(NamedTuple):
    """Cards a seat knows another seat holds now (:func:`known_cards`)."""

    seat: int  #: whose cards
    kinds: tuple[int, ...]  #: the cards known to be in that hand, in kind order
    others: int  #: that hand's other cards, unknown to the viewer


def known_cards(game: Game, seat: int) -> KnownCards | None:
    """What ``seat`` knows for certain of another seat's hand now: the hand its latest
    challenge revealed (``PlayerView.revealed_hand``, R6.3), less one copy of each card that
    player has played since (public plays: after a draw the card played may have been the drawn
    copy, so a shown copy is no longer certain). ``None`` when no challenge revealed a hand to
    ``seat`` this round, when every shown card has been played since, or when the game's event
    log does not hold the reveal (a position loaded from a state dict or sampled from a view:
    the plays since cannot be told, so nothing is claimed)."""
    view = game.view(seat)
    if view.revealed_hand is None:
        return None
    owner = view.revealed_by
    events = game.events
    at = next((i for i in range(len(events) - 1, -1, -1) if events[i][0] == "reveal"
               and events[i][1] == owner and events[i][2] == seat), None)
    if at is None:
        return None
    counts = bytearray(view.revealed_hand)
    for e in events[at + 1:]:
        if e[0] == "play" and e[1] == owner and counts[e[2]]:
            counts[e[2]] -= 1
    kinds = counts_to_kinds(counts)
    if not kinds:
        return None
    return KnownCards(owner, kinds, view.hand_sizes[owner] - len(kinds))


def known_text(known: KnownCards, names: Sequence[str]) -> str:
    """:class:`KnownCards` as one line."""
    text = (f"{names[known.seat]} holds {' '.join(CODES[k] for k in known.kinds)} "
            "(seen when you challenged their Wild Draw Four)")
    if known.others:
        text += f" and {known.others} card{'s' if known.others != 1 else ''} you have not seen"
    return text


def offered_actions(view: PlayerView) -> tuple[int, ...]:
    """The deciding ``view``'s legal actions worth offering a person: all of them but a
    ``CALL_UNO`` with no card to play after it (R8: UNO is called before playing the
    second-to-last card; with nothing playable the call leaves only the draw, after which the
    hand holds three cards)."""
    legal = view.legal_actions
    if A.CALL_UNO in legal and not any(a < A.DRAW for a in legal):
        return tuple(a for a in legal if a != A.CALL_UNO)
    return legal


def action_text(action: int, view: PlayerView, names: Sequence[str]) -> str:
    """What choosing ``action`` means, in words, for the seat of ``view`` (its decider)."""
    return _action_words(action, view.seat, names, view)


def action_label(action: int, seat: int, names: Sequence[str]) -> str:
    """What ``action`` of ``seat`` means, in a few words and without a view (the lists of legal
    actions in replays and at the browser table): ``"play R7 (Red 7)"``, ``"Green Shell at P2
    greedy (+2)"``."""
    return _action_words(action, seat, names, None)


def _action_words(action: int, seat: int, names: Sequence[str], view: PlayerView | None) -> str:
    """:func:`action_text` (with ``view``: what the decider sees adds the context) or
    :func:`action_label` (``view`` ``None``)."""
    if action < A.DRAW:
        if view is None:
            return f"play {CODES[action]} ({NAMES[action]})"
        drawn = " (the card you drew)" if view.phase == Phase.PLAY_DRAWN else ""
        return f"play {NAMES[action]}{drawn}"
    if action == A.DRAW:
        return "draw a card"
    if action == A.KEEP:
        return "keep the drawn card" + ("" if view is None else " (your turn ends)")
    if A.COLOUR_BASE <= action < A.TARGET_BASE:
        return f"name {COLOUR_NAMES[action - A.COLOUR_BASE]}"
    if A.TARGET_BASE <= action < A.CHALLENGE:
        k = action - A.TARGET_BASE + 1
        target = (seat + k) % len(names)
        if view is None:
            return f"Green Shell at {names[target]} (+{k})"
        return (f"hit {names[target]} with the Green Shell "
                f"({view.hand_sizes[target]} cards, draws 1)")
    if view is None:
        if action not in _BRIEF:
            raise ValueError(f"no action {action!r}")
        return _BRIEF[action]
    if action == A.CHALLENGE:
        return (f"challenge {names[view.w4_player]}'s Wild Draw Four "
                "(illegal: they draw 4; legal: you draw 6)")
    if action == A.ACCEPT and view.phase == Phase.UNO_CATCH:
        return f"let {names[view.uno_catchable]}'s missed UNO pass"
    if action == A.ACCEPT:
        return "accept: draw 4 and lose your turn"
    if action == A.CALL_UNO:
        return "call UNO (then play your second-to-last card)"
    if action == A.CATCH_UNO:
        return f"catch {names[view.uno_catchable]}'s missed UNO (they draw)"
    raise ValueError(f"no action {action!r}")


#: :func:`action_label` of the actions whose full words name a seat the label cannot see.
_BRIEF = {A.CHALLENGE: "challenge the Wild Draw Four", A.ACCEPT: "accept: draw 4",
          A.CALL_UNO: "call UNO", A.CATCH_UNO: "catch the missed UNO"}


def render_table(
    view: PlayerView,
    names: Sequence[str],
    recent: Sequence[str] = (),
    step: int | None = None,
    done: bool = False,
    known: KnownCards | None = None,
    choices: bool = True,
) -> str:
    """The table as ``view.seat`` sees it: hands' sizes, UNO calls and scores per seat, the top
    card and active colour, the direction, this seat's hand, the cards it knows another seat
    still holds (``known``, :func:`known_cards`: a view alone cannot tell which of a revealed
    hand's cards were played since, so nothing of it is shown without ``known``), what the
    decider does and, when this seat decides and ``choices`` is true, its choices in words
    (:func:`offered_actions`), and ``recent`` lines."""
    me = view.seat
    clockwise = view.direction == 1
    head = f"UNO Mario Kart · round {view.round}"
    if step is not None:
        head += f" · decision {step}"
    width = max(len(name) for name in names) + 7
    lines = [
        head,
        f"Top card: {CODES[view.top_card]} ({NAMES[view.top_card]}) · active colour: "
        f"{COLOUR_NAMES[view.active_colour]} · direction: "
        + ("clockwise (seat +1)" if clockwise else "counter-clockwise (seat -1)"),
        f"Draw pile: {view.draw_pile_size} · discard pile: {sum(view.discard_counts)}",
        "",
        f"  {'seat':<{width}}{'cards':>5}  {'UNO':<4}{'score':>6}",
    ]
    for s in range(view.num_players):
        mark = "*" if s == view.current_player and not done else " "
        you = " (you)" if s == me else ""
        uno = "UNO" if view.uno_called[s] else ""
        lines.append(
            f"{mark} {names[s] + you:<{width}}{view.hand_sizes[s]:>5}  {uno:<4}{view.scores[s]:>6}"
        )
    hand = [CODES[k] for k, c in enumerate(view.hand) for _ in range(c)]
    lines += ["", f"Your hand ({names[me]}, {len(hand)} cards): {' '.join(hand) or '-'}"]
    if known is not None:
        lines.append(known_text(known, names))
    if done:
        lines.append("Game over." if view.phase == Phase.GAME_OVER else "Episode over.")
    elif view.is_decider:
        if view.drawn_card >= 0:
            lines.append(f"You drew {NAMES[view.drawn_card]}: play it or keep it")
        lines.append(f"Your turn: {PHASE_WORDS[view.phase]}.")
        if choices:
            lines.append("Your choices: " + "; ".join(
                action_text(a, view, names) for a in offered_actions(view)) + ".")
    else:
        lines.append(f"{names[view.current_player]} decides: {PHASE_WORDS[view.phase]}.")
    if recent:
        lines += ["", "Last events:"] + [f"  {line}" for line in recent]
    return "\n".join(lines)


def render_game(
    game: Game,
    seat: int,
    names: Sequence[str],
    history: Iterable[tuple[int, int]] = (),
    step: int | None = None,
    done: bool = False,
    choices: bool = True,
) -> str:
    """:func:`render_table` for ``seat`` of ``game``, with the events of the recent decisions
    and the cards ``seat`` knows another seat still holds (:func:`known_cards`).

    Args:
        history: ``(actor seat, game.event_count before its decision)`` per recent decision,
            oldest first (actor ``-1`` for the deal); each decision's events run to the next one's.
            Events the game's log no longer holds are left out.
    """
    events, offset = game.events, game.events_start
    history = list(history)
    bounds = [start for _, start in history] + [game.event_count]
    lines = [
        (actor, events_text(
            [seen for e in events[max(start - offset, 0):max(stop - offset, 0)]
             if (seen := event_for(e, seat)) is not None],
            names, seat,
        ))
        for (actor, start), stop in zip(history, bounds[1:])
    ]
    return render_table(game.view(seat), names, merge_lines(lines, names), step=step, done=done,
                        known=known_cards(game, seat), choices=choices)


class RecentDecisions:
    """The recent decisions of a game, for :func:`render_game`'s "Last events": ``(actor seat,
    game.event_count before the decision)``, oldest first, at most ``maxlen``.

    A ``KEEP`` is not a decision of its own here: its events join the draw before it, so the
    window of decisions other seats see is the same whether a drawn card was kept or could not
    be played (R4.2; another seat's KEEP is hidden from it).

    Drivers call :meth:`start` after a deal, :meth:`before` before each ``game.step`` and
    :meth:`after` once the step succeeded.
    """

    def __init__(self, maxlen: int | None = 8) -> None:
        self._items: deque[tuple[int, int]] = deque(maxlen=maxlen)
        self._pending: tuple[int, int] | None = None

    def start(self, game: Game) -> None:
        """A new game: its first entry is the deal (actor -1)."""
        self._items.clear()
        self._items.append((-1, game.events_start))
        self._pending = None

    def before(self, game: Game) -> None:
        self._pending = (game.current_player, game.event_count)

    def after(self, action: int) -> None:
        if self._pending is not None and action != KEEP:
            self._items.append(self._pending)
        self._pending = None

    def __iter__(self) -> Iterator[tuple[int, int]]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

