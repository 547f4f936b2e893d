"""Rule options (docs/rules.md#rule-options): a typed, validated rules object.

Every option accepts its default and the alternatives docs/rules.md lists; an unknown option or a
bad value raises :class:`RulesError` naming the option and what is allowed; ``Rules`` is immutable,
hashable, and round-trips through dicts; presets build; every table the rules accept can be dealt.
"""

from __future__ import annotations

import json
import signal
from contextlib import contextmanager
from typing import Any

import pytest

from uno_mk_env import OPTIONS, PRESETS, Game, Rules, RulesError, cards, preset

#: docs/rules.md#rule-options written out by hand: option -> (default, alternatives); ``None``:
#: the rules fix no default (``rounds`` matters only with ``match="fixed_rounds"``).
RULES_TABLE: dict[str, tuple[Any, list[Any]]] = {
    "num_players": (4, [2, 3, 5, 6, 7, 8, 9, 10]),
    "hand_size": (7, [1, 2, 6, 8, 10, 15]),
    "start_action_cards": ("apply", ["reflip"]),
    "start_item_box_chooser": ("dealer", ["first_player"]),
    "two_player_reverse_skips": (True, [False]),
    "item_box_counts_for_w4": (True, [False]),
    "w4_strict": (False, [True]),
    "lightning_draw": (1, [0, 2, 3, 20]),
    "banana_target": ("previous_seat", ["last_player"]),
    "last_item_box": ("others_only", ["full", "none"]),
    "uno": ("on", ["off"]),
    "uno_catch": ("auto", ["next_player"]),
    "uno_penalty": (2, [0, 1, 4]),
    "stalemate": ("no_score", ["lowest_hand"]),
    "match": ("single_round", ["target_score", "fixed_rounds"]),
    "target_score": (500, [1, 100, 1000]),
    "rounds": (None, [1, 2, 10]),
}

INT_OPTIONS = {"num_players", "hand_size", "lightning_draw", "uno_penalty", "target_score",
               "rounds"}
BOOL_OPTIONS = {"two_player_reverse_skips", "item_box_counts_for_w4", "w4_strict"}

#: Values of the right type that are out of range.
OUT_OF_RANGE: dict[str, list[Any]] = {
    "num_players": [0, 1, 11, -4],
    "hand_size": [0, 16, -1],
    "lightning_draw": [-1],
    "uno_penalty": [-1],
    "target_score": [0, -500],
    "rounds": [0, -1],
}


def bad_values(name: str) -> list[Any]:
    """Wrong types (a bool for an int too) and out-of-range values for option ``name``."""
    if name in INT_OPTIONS:
        return [True, False, 4.0, "4", None, [4], *OUT_OF_RANGE[name]]
    if name in BOOL_OPTIONS:
        return [1, 0, "true", "True", None, 1.0]
    default = OPTIONS[name].default
    return [default.upper(), "", " " + default, None, 1, True, [default]]


def test_options_are_exactly_the_documented_ones() -> None:
    assert set(OPTIONS) == set(RULES_TABLE)


@pytest.mark.parametrize("name", list(RULES_TABLE))
def test_default_and_listed_alternatives_are_accepted(name: str) -> None:
    default, alternatives = RULES_TABLE[name]
    if default is not None:
        assert OPTIONS[name].default == default
        assert type(OPTIONS[name].default) is type(default)
    assert getattr(Rules(), name) == OPTIONS[name].default
    for value in [OPTIONS[name].default, *alternatives]:
        r = Rules(**{name: value})
        assert getattr(r, name) == value
        assert r.to_dict()[name] == value


@pytest.mark.parametrize("name", list(RULES_TABLE))
def test_bad_value_names_the_option_and_allowed_values(name: str) -> None:
    for value in bad_values(name):
        with pytest.raises(RulesError) as info:
            Rules(**{name: value})
        message = str(info.value)
        assert name in message, message
        assert OPTIONS[name].allowed in message, message
        assert repr(value) in message, message


def test_bool_is_not_an_int() -> None:
    """``True == 1`` in Python; a flag given where a count is expected is a mistake."""
    with pytest.raises(RulesError, match="num_players"):
        Rules(num_players=True)
    with pytest.raises(RulesError, match="uno_penalty"):
        Rules(uno_penalty=False)


@pytest.mark.parametrize("bad", ["colours", "num_player", "Num_Players", "seed"])
def test_unknown_option_is_named_and_options_listed(bad: str) -> None:
    with pytest.raises(RulesError) as info:
        Rules(**{bad: 5})
    message = str(info.value)
    assert repr(bad) in message
    assert all(name in message for name in OPTIONS)


def test_rules_error_is_a_value_error() -> None:
    assert issubclass(RulesError, ValueError)


def test_options_are_keyword_only() -> None:
    with pytest.raises(TypeError):
        Rules(4)  # type: ignore[misc]


# ------------------------------------------------------------------------------ table size
def test_deal_larger_than_the_deck_is_rejected() -> None:
    """R2/R3.2: 10 players x 15 cards is 150 cards; the deck holds 112."""
    with pytest.raises(RulesError) as info:
        Rules(num_players=10, hand_size=15)
    assert "num_players" in str(info.value) and "hand_size" in str(info.value)
    with pytest.raises(RulesError):
        Rules(num_players=4).replace(num_players=10, hand_size=15)
    with pytest.raises(RulesError):
        Rules.from_dict({"num_players": 8, "hand_size": 15})


class DealTimeout(Exception):
    pass


@contextmanager
def time_limit(seconds: float):
    """Fails a deal that never returns (e.g. flipping W4 after W4 from an all-W4 pile)."""

    def expire(signum: int, frame: Any) -> None:
        raise DealTimeout

    old = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def test_every_accepted_table_can_be_dealt() -> None:
    """R3: any (num_players, hand_size) that Rules accepts deals, flips a start card and hands a
    decision to someone, for many seeds; the largest accepted deals get the most seeds."""
    accepted = []
    for n in range(2, 11):
        for h in range(1, 16):
            try:
                accepted.append(Rules(num_players=n, hand_size=h))
            except RulesError:
                assert n * h > 100, f"{n} players x {h} cards fits the deck but is rejected"
    assert accepted
    biggest = max(r.num_players * r.hand_size for r in accepted)
    for rules in accepted:
        dealt = rules.num_players * rules.hand_size
        for seed in range(400 if dealt >= biggest - 10 else 3):
            try:
                with time_limit(2.0):
                    g = Game(rules, seed=seed)
            except DealTimeout:
                pytest.fail(f"dealing {rules!r} with seed {seed} never finished")
            d = g.to_dict()
            sizes = [len(h) for h in d["hands"]]
            assert min(sizes) >= rules.hand_size  # a Draw Two start card adds 2 (R3.3)
            assert sum(sizes) in (dealt, dealt + 2)
            n_cards = sum(map(len, d["hands"])) + len(d["draw_pile"]) + len(d["discard_pile"])
            assert n_cards == cards.NUM_CARDS
            assert g.legal_action_ids()


# ------------------------------------------------------------------------------ value object
def test_rules_are_immutable() -> None:
    r = Rules(num_players=3)
    with pytest.raises(AttributeError):
        r.num_players = 5  # type: ignore[misc]
    with pytest.raises(AttributeError):
        r.colours = 5  # type: ignore[attr-defined]
    with pytest.raises(AttributeError):
        del r.num_players
    assert r.num_players == 3 and r == Rules(num_players=3)


def test_replace_validates_and_leaves_the_original() -> None:
    r = Rules(num_players=3, uno="off")
    s = r.replace(num_players=5)
    assert (s.num_players, s.uno) == (5, "off")
    assert (r.num_players, r.uno) == (3, "off")
    assert r.replace() == r
    with pytest.raises(RulesError, match="num_players"):
        r.replace(num_players=1)
    with pytest.raises(RulesError, match="colours"):
        r.replace(colours=5)


def test_to_dict_from_dict_round_trip() -> None:
    for name in PRESETS:
        r = preset(name, num_players=6)
        d = r.to_dict()
        assert set(d) == set(OPTIONS)
        assert json.loads(json.dumps(d)) == d
        assert Rules.from_dict(d) == r
        assert Rules(**d) == r
        d["num_players"] = 2  # a copy: the rules are not touched
        assert r.num_players == 6
    assert Rules.from_dict({}) == Rules()
    assert Rules.from_dict({"uno": "off"}) == Rules(uno="off")
    with pytest.raises(RulesError, match="colours"):
        Rules.from_dict({"colours": 5})
    for not_a_mapping in (["num_players"], "num_players=3", None, 3):
        with pytest.raises(RulesError, match="mapping"):
            Rules.from_dict(not_a_mapping)  # type: ignore[arg-type]


def test_equality_and_hash() -> None:
    a = Rules(num_players=3, uno="off")
    b = Rules(uno="off", num_players=3)
    assert a == b and hash(a) == hash(b)
    assert a != Rules(num_players=3) and a != Rules()
    assert a != a.to_dict() and a != "Rules(num_players=3, uno='off')"
    assert len({a, b, Rules(), Rules()}) == 2
    assert {a: 1}[b] == 1
    assert Rules() == Rules(**{n: s.default for n, s in OPTIONS.items()})


def test_repr_shows_non_defaults_and_evaluates_back() -> None:
    r = Rules(num_players=3, uno="off")
    assert repr(r) == "Rules(num_players=3, uno='off')"
    assert repr(Rules()) == "Rules()"
    for name in PRESETS:
        p = preset(name)
        assert eval(repr(p), {"Rules": Rules}) == p


# ------------------------------------------------------------------------------ presets
@pytest.mark.parametrize("name", list(PRESETS))
def test_every_preset_builds_with_its_options(name: str) -> None:
    r = preset(name)
    assert isinstance(r, Rules)
    for option, value in PRESETS[name].items():
        assert option in OPTIONS
        assert getattr(r, option) == value
    assert preset(name, num_players=2).num_players == 2
    assert Game(preset(name, num_players=5), seed=0).legal_action_ids()


def test_default_preset_is_the_default_rules() -> None:
    assert preset("default") == Rules()


def test_unknown_preset_is_named_and_presets_listed() -> None:
    with pytest.raises(RulesError) as info:
        preset("tournament")
    message = str(info.value)
    assert "'tournament'" in message
    assert all(name in message for name in PRESETS)


def test_preset_overrides_are_validated() -> None:
    with pytest.raises(RulesError, match="num_players"):
        preset("strict", num_players=11)
    with pytest.raises(RulesError, match="colours"):
        preset("czech", colours=5)


@pytest.mark.parametrize("value", [10**5000, -(10**30), "x" * 10_000],
                         ids=["5001-digit int", "31-digit int", "10000-char string"])
def test_a_huge_or_long_option_value_is_one_bounded_line(value):
    """Issue #24.9: ``Rules(hand_size=<5,000 digits>)`` formatted the value with ``repr``, past
    Python's int-string limit (a ``ValueError`` traceback) or into a huge line; now one
    ``RulesError`` line of bounded length naming the option and what it allows."""
    with pytest.raises(RulesError, match="^rule option hand_size=") as info:
        Rules(hand_size=value)
    message = str(info.value)
    assert "allowed: int 1–15" in message and len(message) < 160 and "\n" not in message


@pytest.mark.parametrize("digits", [19, 4000, 5000])
def test_cli_rule_with_a_huge_number_is_one_line_naming_the_option(digits):
    """Issue #24.9: ``--rule hand_size=<5,000 digits>`` traced back in ``int()``; now one
    ``CLIError`` line naming the option and the allowed range (the CLI prints it, exit 2)."""
    from uno_mk_env.cli.common import CLIError, rules_from_args

    with pytest.raises(CLIError, match="^--rule hand_size: .*allowed: int 1–15$") as info:
        rules_from_args(None, ["hand_size=" + "9" * digits], False)
    assert len(str(info.value)) < 120
