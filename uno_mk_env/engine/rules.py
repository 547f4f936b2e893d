"""The rule options of docs/rules.md, in one typed, validated, immutable object.

Every variant is declared once in :data:`OPTIONS` with its default, its allowed values and where it
comes from; the options table of docs/rules.md is generated from it. An unknown option or a bad
value raises :class:`RulesError` naming the option and what is allowed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import UnoMkError, quote
from .cards import COPIES, POINTS


class RulesError(UnoMkError, ValueError):
    """An unknown rule option or a value it does not allow."""


@dataclass(frozen=True)
class OptionSpec:
    """One rule option: default, validity check, human description of the allowed values."""

    default: Any
    check: Callable[[Any], bool]
    allowed: str
    doc: str


def _choice(*values: str) -> tuple[Callable[[Any], bool], str]:
    return (lambda v: v in values), " / ".join(f"`{v!r}`".replace("'", '"') for v in values)


def _bool() -> tuple[Callable[[Any], bool], str]:
    return (lambda v: isinstance(v, bool)), "`True` / `False`"


def _int(lo: int, hi: int | None = None) -> tuple[Callable[[Any], bool], str]:
    def check(v: Any) -> bool:
        if not isinstance(v, int) or isinstance(v, bool):
            return False
        return v >= lo and (hi is None or v <= hi)

    return check, f"int {lo}–{hi}" if hi is not None else f"int ≥ {lo}"


def _spec(default: Any, rule: tuple[Callable[[Any], bool], str], doc: str) -> OptionSpec:
    return OptionSpec(default, rule[0], rule[1], doc)


#: Players at a table (R1).
MIN_PLAYERS, MAX_PLAYERS = 2, 10

#: All rule options, defaults first (docs/rules.md#rule-options).
OPTIONS: dict[str, OptionSpec] = {
    "num_players": _spec(4, _int(MIN_PLAYERS, MAX_PLAYERS), "Players at the table (R1)."),
    "hand_size": _spec(7, _int(1, 15), "Cards dealt to each player (R3.2)."),
    "start_action_cards": _spec(
        "apply", _choice("apply", "reflip"),
        "Start card Skip/Reverse/Draw Two: apply it (GameRules) or flip another card onto it "
        "(Czech) (R3.3).",
    ),
    "start_item_box_chooser": _spec(
        "dealer", _choice("dealer", "first_player"),
        "Who names the colour when the start card is a Wild Item Box (R3.3).",
    ),
    "two_player_reverse_skips": _spec(
        True, _bool(), "With 2 players a Reverse acts as a Skip (R5)."
    ),
    "item_box_counts_for_w4": _spec(
        True, _bool(), "A held Wild Item Box counts as a colour match for W4 legality (R6.1)."
    ),
    "w4_strict": _spec(
        False, _bool(), "Mask illegal W4s and remove the challenge decision (R6.2)."
    ),
    "lightning_draw": _spec(1, _int(0), "Cards each opponent draws from Lightning (R7.2)."),
    "banana_target": _spec(
        "previous_seat", _choice("previous_seat", "last_player"),
        "Banana Peel hits the seat just before the player in the current direction, or the last "
        "player who took a turn before them (R7.2).",
    ),
    "last_item_box": _spec(
        "others_only", _choice("others_only", "full", "none"),
        "A Wild Item Box as the last card: apply only the draws on opponents, everything, or no "
        "flip at all (R7.4).",
    ),
    "uno": _spec("on", _choice("on", "off"), "The UNO call rule (R8)."),
    "uno_catch": _spec(
        "auto", _choice("auto", "next_player", "any_player"),
        "A missed UNO is always caught; or only if the next player other than the offender "
        "plays `CATCH_UNO` (asked out of turn when the next turn is the offender's own); or if "
        "any other player does, asked in turn order from the offender (R8).",
    ),
    "uno_penalty": _spec(2, _int(0), "Cards drawn for a missed UNO (R8)."),
    "stalemate": _spec(
        "no_score", _choice("no_score", "lowest_hand"),
        "A stalemated round scores nothing, or is won by the lowest hand value (R9).",
    ),
    "match": _spec(
        "single_round", _choice("single_round", "target_score", "fixed_rounds"),
        "One round is the game, play to `target_score`, or play `rounds` rounds (R10.3).",
    ),
    "target_score": _spec(500, _int(1), "Points that end a `target_score` game (R10.3)."),
    "rounds": _spec(1, _int(1), "Rounds in a `fixed_rounds` game (R10.3)."),
}


#: Most cards that may be dealt: 112 minus the four W4s minus one card to flip (R3.3). With
#: ``start_action_cards="reflip"`` the limit is the same: the flipped action cards are buried
#: only while a card other than a W4 is left to flip, and the last one stays otherwise (the R3.3
#: ruling), so the first flip is the only one that needs a non-W4 card in the pile.
MAX_DEALT = 107


class Rules:
    """Immutable, validated set of rule options.

    >>> Rules(num_players=3).num_players
    3
    >>> Rules(colours=5)
    Traceback (most recent call last):
    ...
    uno_mk_env.engine.rules.RulesError: unknown rule option 'colours'; the options are:
    num_players, ...

    Attribute names are exactly the keys of :data:`OPTIONS`.
    """

    __slots__ = tuple(OPTIONS)

    num_players: int
    hand_size: int
    start_action_cards: str
    start_item_box_chooser: str
    two_player_reverse_skips: bool
    item_box_counts_for_w4: bool
    w4_strict: bool
    lightning_draw: int
    banana_target: str
    last_item_box: str
    uno: str
    uno_catch: str
    uno_penalty: int
    stalemate: str
    match: str
    target_score: int
    rounds: int

    def __init__(self, **options: Any) -> None:
        for name in options:
            if name not in OPTIONS:
                raise RulesError(
                    f"unknown rule option {quote(name)}; the options are: "
                    f"{', '.join(OPTIONS)}"
                )
        for name, spec in OPTIONS.items():
            value = options.get(name, spec.default)
            if not spec.check(value):
                raise RulesError(
                    f"rule option {name}={quote(value)} is not allowed; allowed: "
                    f"{spec.allowed}"
                )
            object.__setattr__(self, name, value)
        dealt = self.num_players * self.hand_size
        if dealt > MAX_DEALT:
            raise RulesError(
                f"num_players={self.num_players} × hand_size={self.hand_size} deals {dealt} cards; "
                f"at most {MAX_DEALT} of the 112 may be dealt (the draw pile must keep a card "
                "that is not a Wild Draw Four to start the discard pile, R3.3)"
            )

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Rules is immutable; use rules.replace(...)")

    def __delattr__(self, name: str) -> None:
        raise AttributeError("Rules is immutable; use rules.replace(...)")

    def __reduce__(self) -> tuple[Any, ...]:
        # pickle/deepcopy rebuild through the validating constructor (__setattr__ is blocked)
        return (Rules.from_dict, (self.to_dict(),))

    def replace(self, **changes: Any) -> Rules:
        """A copy with some options changed (validated)."""
        return Rules(**{**self.to_dict(), **changes})

    def to_dict(self) -> dict[str, Any]:
        """All options as a plain dict (JSON-safe)."""
        return {name: getattr(self, name) for name in OPTIONS}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Rules:
        """Builds rules from a (possibly partial) mapping; missing options take their default."""
        if not isinstance(d, Mapping):
            raise RulesError(f"rules must be a mapping of option names, got {type(d).__name__}")
        return cls(**d)

    def non_defaults(self) -> dict[str, Any]:
        """Options that differ from their default."""
        return {n: v for n, v in self.to_dict().items() if v != OPTIONS[n].default}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Rules) and self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash(tuple(self.to_dict().values()))

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.non_defaults().items())
        return f"Rules({args})"


#: Named rule presets used in tests, docs and the command line.
PRESETS: dict[str, dict[str, Any]] = {
    "default": {},
    "standard_uno": {"item_box_counts_for_w4": False, "uno_catch": "next_player"},
    "czech": {"start_action_cards": "reflip", "start_item_box_chooser": "first_player"},
    "strict": {"w4_strict": True, "uno": "off"},
    "variants": {
        "lightning_draw": 2, "banana_target": "last_player", "last_item_box": "full",
        "stalemate": "lowest_hand", "two_player_reverse_skips": False,
    },
    "no_flip_last": {"last_item_box": "none", "uno_penalty": 4},
}


def preset(name: str, **overrides: Any) -> Rules:
    """Rules of a named preset (see :data:`PRESETS`) with optional overrides."""
    if name not in PRESETS:
        raise RulesError(f"unknown rules preset {name!r}; presets: {', '.join(PRESETS)}")
    return Rules(**{**PRESETS[name], **overrides})


#: Points of every card of the deck: the most a round can score (R10.2).
MAX_ROUND_POINTS = sum(c * p for c, p in zip(COPIES, POINTS))


def max_score(rules: Rules) -> int:
    """An upper bound of any seat's game score under ``rules`` (R10.3): a ``target_score`` game
    ends on the round that reaches the target, a ``fixed_rounds`` game after ``rounds``."""
    if rules.match == "target_score":
        return rules.target_score - 1 + MAX_ROUND_POINTS
    if rules.match == "fixed_rounds":
        return rules.rounds * MAX_ROUND_POINTS
    return MAX_ROUND_POINTS


def options_table() -> str:
    """The rule-options table of docs/rules.md, generated from :data:`OPTIONS`."""
    rows = ["| option | default | allowed | meaning |", "|---|---|---|---|"]
    for name, spec in OPTIONS.items():
        default = f"`{spec.default!r}`".replace("'", '"')
        rows.append(f"| `{name}` | {default} | {spec.allowed} | {spec.doc} |")
    return "\n".join(rows)
