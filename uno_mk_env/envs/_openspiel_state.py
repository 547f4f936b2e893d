"""The state of the OpenSpiel game apart from pyspiel's API (:mod:`uno_mk_env.envs.openspiel`):
chance nodes (the deal, draws and item flips revealed card by card in the explicit form), a
state's position and record, and reading a state string back with every field checked against
the game it is loaded into. Loading never runs code: a state string's pickle may name only
:func:`_restore_record`, which parses JSON within bounds."""

from __future__ import annotations

import base64
import io
import json
import pickle
from collections import Counter
from collections.abc import Mapping
from typing import Any, Protocol

import numpy as np
import pyspiel  # reached only through uno_mk_env.envs.openspiel, which checks the extra

from ..engine import actions as A
from ..engine.cards import NUM_KINDS
from ..engine.game import Game
from ..engine.rewards import win_rewards
from ..engine.rules import OPTIONS, Rules, RulesError
from ..errors import IllegalActionError, StateError, UnoMkError, one_line, quote
from ..files import MAX_JSON_BYTES, parse_json

__all__ = ["DEALER_BASE", "MAX_CARDS_PER_ACTION", "SpielGame", "engine_returns", "reached_cap"]

#: Chance outcome of "seat ``s`` deals round 1" (R3.1): ``DEALER_BASE + s``; a card is its kind id.
DEALER_BASE = NUM_KINDS
#: The most cards one action may wait for in a position or a state string (a 10-player deal of
#: 15-card hands takes 151; each start card a W4 or, under ``reflip``, an action card adds one).
MAX_CARDS_PER_ACTION = 400
_DEAL = -1  # the pending action of round 1's deal
_RECORD_FORMAT = 1
_STATE_STRING_BYTES = 2 * MAX_JSON_BYTES  # the record in base64 (4/3 of it) and the history
#: The modules a state string's pickle may name for :func:`_restore_record`: this one, and where
#: it lived before 0.10.0 (state strings written by older versions still load).
_RECORD_MODULES = (__name__, "uno_mk_env.envs.openspiel", "uno_mk_env.openspiel")


class SpielGame(Protocol):
    """What a state reads of its game (:class:`~uno_mk_env.envs.openspiel.UnoMarioKartGame`)."""

    rules: Rules
    chance: str
    max_length: int

    def identity(self) -> dict[str, Any]: ...
    def sampled_deal(self) -> Game: ...
    def max_game_length(self) -> int: ...
    def max_chance_outcomes(self) -> int: ...


def rules_mismatch(found: Rules, expected: Rules, what: str) -> RulesError | None:
    """The error naming the first option in which ``found`` differs from ``expected``."""
    for name in OPTIONS:
        mine, theirs = getattr(found, name), getattr(expected, name)
        if mine != theirs:
            return RulesError(f"{what}: {name}={quote(mine)} is not this game's {quote(theirs)}")
    return None



def engine_returns(game: Game) -> list[float]:
    """The returns of an engine game: :func:`~uno_mk_env.engine.rewards.win_rewards` once it is
    over,
    else zeros (also when cut off at ``max_game_length``)."""
    if game.game_over:
        return win_rewards(game.num_players, game.winner)
    return [0.0] * game.num_players


def reached_cap(game: Game, max_length: int) -> bool:
    """The length cap: ``max_length`` public decisions taken (a KEEP is hidden from the other
    seats and not counted), and never inside a drawn card's decision, so where a game is cut
    tells no seat a hidden choice."""
    return game.at_step_cap(max_length)


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


# ------------------------------------------------------------------------------ chance nodes
class _NeedCard(UnoMkError):
    """The engine takes a card no chance outcome has decided yet: the state is a chance node
    whose outcomes are the kinds in ``pile`` by their counts. Never leaves this module."""

    def __init__(self, pile: list[int]) -> None:
        super().__init__("a card is needed")
        total = len(pile)
        self.outcomes = [(kind, count / total) for kind, count in sorted(Counter(pile).items())]


class _Deck:
    """The engine's :data:`~uno_mk_env.engine.game.Deck` in the explicit form: hands out the decided
    cards in order, then raises :class:`_NeedCard` (or, with ``rng``, takes a uniformly random
    card: a rollout's continuation). The pile's order is never used: it is a multiset."""

    __slots__ = ("cards", "next", "rng")

    def __init__(self, cards: list[int], first: int,
                 rng: np.random.Generator | None = None) -> None:
        self.cards = cards
        self.next = first
        self.rng = rng

    def __call__(self, pile: list[int]) -> int:
        i = self.next
        if i < len(self.cards):
            self.next = i + 1
            card = self.cards[i]
            pile.remove(card)  # a decided outcome is one of the pile's kinds (checked)
            return card
        if self.rng is None:
            raise _NeedCard(pile)
        j = int(self.rng.integers(len(pile)))
        pile[j], pile[-1] = pile[-1], pile[j]
        return pile.pop()


class Record:
    """A state's serialised record, as read from a state string: not yet checked (the state it
    is loaded into checks it, see :func:`_replay`)."""

    __slots__ = ("data",)

    def __init__(self, data: Any) -> None:
        self.data = data


def _restore_record(text: str) -> Record:
    """What a state string's pickle calls (the only thing it may call, see
    :class:`RecordUnpickler`): the record's JSON, parsed within bounds."""
    return Record(parse_json(text, "state string record", error=StateError))


class Core:
    """Everything a state is (a pyspiel state holds one, as its only Python attribute).

    ``committed`` is the engine game before the pending action (``None`` before round 1's deal
    in the explicit form, or before the sampled form's lazy deal); ``pending`` the action that
    waits for cards (``_DEAL`` for round 1's deal), ``cards`` the chance outcomes decided for
    it, ``outcomes`` the chance node's outcomes (``None`` at a decision or terminal node).
    ``start`` is the position the history starts from (``None``: the game's initial state,
    dealt by chance; a :class:`Game` clone; or a chance position's dict) and ``actions`` every
    action since: a state string replays them.
    """

    __slots__ = ("game", "committed", "pending", "cards", "outcomes", "start", "actions")

    def __init__(self, game: SpielGame, engine: Game | None,
                 start: Game | dict[str, Any] | None) -> None:
        self.game = game
        self.committed = engine
        self.pending: int | None = None
        self.cards: list[int] = []
        self.outcomes: list[tuple[int, float]] | None = None
        self.start = start
        self.actions: list[int] = []

    @classmethod
    def initial(cls, game: SpielGame) -> Core:
        core = cls(game, None, None)
        if game.chance == "explicit":
            core._decide(_DEAL, [])
        return core

    @classmethod
    def at(cls, game: SpielGame, engine: Game) -> Core:
        return cls(game, engine, engine.clone())

    # ---------------------------------------------------------------- reading
    @property
    def engine(self) -> Game:
        """The engine game (dealt now in the sampled form if it was not yet)."""
        g = self.committed
        if g is None:
            if self.game.chance == "explicit":
                raise StateError("there is no engine game before round 1 is dealt: apply the "
                                 "chance outcomes of the deal first")
            g = self.committed = self.game.sampled_deal()
            self.start = g.clone()
        return g

    def is_terminal(self) -> bool:
        if self.outcomes is not None:
            return False
        g = self.engine
        return g.game_over or reached_cap(g, self.game.max_length)

    def current_player(self) -> int:
        if self.outcomes is not None:
            return int(pyspiel.PlayerId.CHANCE)
        if self.is_terminal():
            return int(pyspiel.PlayerId.TERMINAL)
        return self.engine.current_player

    def returns(self) -> list[float]:
        if self.outcomes is not None:
            return [0.0] * self.game.rules.num_players
        return engine_returns(self.engine)

    def position(self) -> dict[str, Any]:
        """The position as JSON-safe data (see the module docstring, Serialisation)."""
        if self.outcomes is None:
            return self.engine.to_dict()
        g = self.committed
        return {
            "chance": {"pending": "deal" if self.pending == _DEAL else self.pending,
                       "outcomes": list(self.cards)},
            "rules": self.game.rules.to_dict(),
            "state": None if g is None else g.to_dict(),
        }

    def record(self) -> dict[str, Any]:
        """What a state string carries: the game, the start position and the actions since."""
        if self.start is None and self.game.chance == "sampled":
            self.engine  # noqa: B018  (deals, setting the start)
        start = self.start.to_dict() if isinstance(self.start, Game) else self.start
        return {"format": _RECORD_FORMAT, "game": self.game.identity(), "start": start,
                "actions": list(self.actions)}

    # ---------------------------------------------------------------- acting
    def apply(self, action: int) -> None:
        """Applies a player's action or a chance outcome (checked: IllegalActionError)."""
        if self.outcomes is not None:
            if action not in dict(self.outcomes):
                raise IllegalActionError(
                    f"chance outcome {action} is not possible here; possible: "
                    f"{[a for a, _ in self.outcomes]}")
            assert self.pending is not None
            if len(self.cards) >= MAX_CARDS_PER_ACTION:
                raise IllegalActionError(f"an action takes at most {MAX_CARDS_PER_ACTION} "
                                         "cards here")
            self._decide(self.pending, [*self.cards, action])
        else:
            if self.is_terminal():
                raise IllegalActionError(f"action {action}: the game is over (won, or cut at "
                                         f"max_game_length={self.game.max_length})")
            if self.game.chance == "explicit":
                self._decide(action, [])
            else:
                self.engine.step(action)
        self.actions.append(action)

    def _decide(self, pending: int, cards: list[int]) -> None:
        """Plays ``pending`` on a copy of the engine with ``cards`` decided: done if it needs
        no other card, else a chance node for the next one (the engine is then unchanged)."""
        try:
            g = self._trial(pending, cards, None)
        except _NeedCard as need:
            self.pending, self.cards, self.outcomes = pending, cards, need.outcomes
            return
        g.deck = None
        self.committed = g
        self.pending, self.cards, self.outcomes = None, [], None

    def _trial(self, pending: int, cards: list[int], rng: np.random.Generator | None) -> Game:
        if pending == _DEAL:
            rules = self.game.rules
            if not cards and rng is None:
                n = rules.num_players
                raise _NeedCard([DEALER_BASE + s for s in range(n)])
            dealer = cards[0] - DEALER_BASE if cards else None
            return Game(rules, seed=rng if rng is not None else 0, dealer=dealer,
                        deck=_Deck(cards, 1, rng))
        g = self.engine.clone()
        g.deck = _Deck(cards, 0, rng)
        g.step(pending)
        return g

    def sample_engine(self, rng: np.random.Generator) -> Game:
        """An engine game continuing this state, its chance drawn from ``rng``."""
        if self.game.chance == "sampled":
            return self.engine.clone()
        if self.pending is None:
            g = self.engine.clone()
        else:
            g = self._trial(self.pending, self.cards, rng)
            g.deck = None
        g.rng = np.random.default_rng(int(rng.integers(2**63)))
        rng.shuffle(g.draw_pile)  # from here the engine draws the top card of a shuffled pile
        return g

    # ---------------------------------------------------------------- copying and pickling
    def __deepcopy__(self, memo: dict[int, Any]) -> Core:
        twin = Core(self.game, None, self.start)
        if self.game.chance == "sampled":
            twin.committed = self.engine.clone()  # a clone shares the deal (made now if not yet)
            twin.start = self.start
        elif self.committed is not None:
            twin.committed = self.committed.clone()
        twin.pending, twin.cards, twin.outcomes = self.pending, list(self.cards), self.outcomes
        twin.actions = list(self.actions)
        return twin

    def __reduce__(self) -> tuple[Any, ...]:
        return (_restore_record, (json.dumps(self.record()),))

    # ---------------------------------------------------------------- loading
    @classmethod
    def from_position(cls, game: SpielGame, d: Any) -> Core:
        """A core at the position ``d`` (:meth:`position`'s form), checked against ``game``."""
        if not isinstance(d, Mapping):
            raise StateError(f"a state must be a JSON object, got {type(d).__name__}")
        if "chance" in d:
            return cls._from_chance_position(game, d)
        return cls._from_engine_position(game, d)

    @classmethod
    def _from_engine_position(cls, game: SpielGame, d: Any) -> Core:
        g = Game.from_dict(d)
        error = rules_mismatch(g.rules, game.rules, "the state's rules")
        if error:
            raise error
        return cls.at(game, g)

    @classmethod
    def _from_chance_position(cls, game: SpielGame, d: Mapping[str, Any]) -> Core:
        if game.chance != "explicit":
            raise StateError("state field 'chance': chance nodes exist in chance='explicit' "
                             "games only; this game is chance='sampled'")
        unknown = sorted(str(k) for k in d if k not in ("chance", "rules", "state"))
        if unknown:
            raise StateError(f"a chance position has unknown field(s) {quote(unknown)}; the "
                             "fields are chance, rules, state")
        _check_position_rules(d.get("rules"), game)
        chance = d["chance"]
        if not isinstance(chance, Mapping) or set(chance) != {"pending", "outcomes"}:
            raise StateError("state field 'chance' must be an object with the fields pending "
                             f"and outcomes, got {quote(chance)}")
        pending, outcomes = chance["pending"], chance["outcomes"]
        if pending != "deal" and not (is_int(pending) and 0 <= pending < A.NUM_ACTIONS):
            raise StateError(f"state field 'chance.pending'={quote(pending)} is not allowed; "
                             f"allowed: 'deal' or an action id 0-{A.NUM_ACTIONS - 1}")
        if not isinstance(outcomes, list) or len(outcomes) > MAX_CARDS_PER_ACTION or not all(
                is_int(o) for o in outcomes):
            raise StateError(f"state field 'chance.outcomes'={quote(outcomes)} is not allowed; "
                             f"allowed: a list of at most {MAX_CARDS_PER_ACTION} chance "
                             "outcome ids")
        state = d.get("state")
        if (pending == "deal") != (state is None):
            raise StateError("state field 'state' must be null exactly when 'chance.pending' "
                             "is 'deal' (round 1 is not dealt yet)")
        core = cls.initial(game) if state is None else cls._from_engine_position(game, state)
        if state is not None:
            try:
                core.apply(pending)
            except IllegalActionError as e:
                raise StateError(f"state field 'chance.pending': {e}") from None
        for i, outcome in enumerate(outcomes):
            if core.outcomes is None:
                break
            try:
                core.apply(outcome)
            except IllegalActionError as e:
                raise StateError(f"state field 'chance.outcomes[{i}]': {e}") from None
        if core.outcomes is None:
            raise StateError("state field 'chance': the pending action needs no further card "
                             "after these outcomes, so this is not a chance node (give the "
                             "position after it)")
        core.actions = []
        core.start = core.position()
        return core


def _check_position_rules(found: Any, game: SpielGame) -> None:
    """A chance position's ``rules`` field must be this game's rules."""
    if not isinstance(found, Mapping):
        raise StateError(f"state field 'rules' must be an object, got {type(found).__name__}")
    try:
        rules = Rules.from_dict(found)
    except RulesError as e:
        raise StateError(f"state field 'rules': {e}") from None
    error = rules_mismatch(rules, game.rules, "state field 'rules'")
    if error:
        raise error


def _check_identity(found: Any, game: SpielGame) -> None:
    expected = game.identity()
    if not isinstance(found, Mapping) or set(found) != set(expected):
        raise StateError(f"state string field 'game' must be an object with the fields "
                         f"{', '.join(expected)}, got {quote(found)}")
    for name, value in expected.items():
        if name == "rules":
            try:
                rules = Rules.from_dict(found[name])
            except RulesError as e:
                raise StateError(f"state string field 'game.rules': {e}") from None
            error = rules_mismatch(rules, game.rules, "state string field 'game.rules'")
            if error:
                raise error
        elif found[name] != value or type(found[name]) is not type(value):
            raise StateError(f"state string field 'game.{name}'={quote(found[name])} is not "
                             f"this game's {quote(value)}")


def replay(game: SpielGame, data: Any, history: list[tuple[int, int]],
            move_number: int) -> Core:
    """The core a state string's record describes, checked against ``game`` and the string's
    history line (``(player, action)`` pairs) by replaying every action."""
    fields = ("format", "game", "start", "actions")
    if not isinstance(data, Mapping) or set(data) != set(fields):
        raise StateError(f"a state string's record must be an object with the fields "
                         f"{', '.join(fields)}, got {quote(data)}")
    if data["format"] != _RECORD_FORMAT or not is_int(data["format"]):
        raise StateError(f"state string field 'format'={quote(data['format'])} is not "
                         f"supported; this version reads {_RECORD_FORMAT}")
    _check_identity(data["game"], game)
    actions = data["actions"]
    if not isinstance(actions, list) or not all(is_int(a) for a in actions):
        raise StateError(f"state string field 'actions'={quote(actions)} is not allowed; "
                         "allowed: a list of action ids")
    if move_number != len(history):
        raise StateError(f"state string field 'move_number'={move_number} is not the "
                         f"history's length {len(history)}")
    line = [a for _, a in history]
    if actions != line:
        step = next((i for i, (a, b) in enumerate(zip(actions, line)) if a != b),
                    min(len(actions), len(line)))
        raise StateError(f"state string field 'history' does not match its record's actions "
                         f"(from step {step}): the string was edited")
    start = data["start"]
    if start is None and game.chance == "sampled":
        raise StateError("state string field 'start' is null, but a chance='sampled' state "
                         "starts from a dealt game")
    core = Core.initial(game) if start is None else Core.from_position(game, start)
    for i, (player, action) in enumerate(history):
        if core.current_player() != player:
            raise StateError(f"state string field 'history' step {i}: player {player} acts, "
                             f"but the state's current player is {core.current_player()}")
        try:
            core.apply(action)
        except IllegalActionError as e:
            raise StateError(f"state string field 'history' step {i}: {e}") from None
    return core


class RecordUnpickler(pickle.Unpickler):
    """Reads a state string's pickle allowing only :func:`_restore_record` (JSON text in, no
    code run): any other class or function in it is refused."""

    def find_class(self, module: str, name: str) -> Any:
        if module in _RECORD_MODULES and name == _restore_record.__name__:
            return _restore_record
        raise StateError(f"a state string's __dict__ may hold only its record; it refers to "
                         f"{quote(module + '.' + name)}")


def check_state_string(text: Any, game: SpielGame) -> None:
    """Checks the form of pyspiel's state string (``history=…``, ``move_number=…``,
    ``__dict__=…``) before pyspiel reads it; the record itself is checked by :func:`_replay`."""
    if not isinstance(text, str):
        raise StateError(f"a state string must be a str, got {type(text).__name__}")
    if len(text) > _STATE_STRING_BYTES:
        raise StateError(f"state string is larger than {_STATE_STRING_BYTES} bytes")
    lines = text.split("\n", 2)
    tags = ("history=", "move_number=", "__dict__=")
    if len(lines) != 3 or not all(line.startswith(t) for line, t in zip(lines, tags)):
        raise StateError("a state string has three lines: history=…, move_number=…, "
                         f"__dict__=…; got {quote(text[:60])}")
    history_text, number_text, dict_text = (line[len(t):] for line, t in zip(lines, tags))
    limit = _max_history(game)
    if history_text.count(",") >= limit:  # counted before the line is split or replayed
        raise StateError(f"state string field 'history' has more than {limit} entries, the "
                         "most a game of these parameters can have")
    n = game.rules.num_players
    outcomes = max(A.NUM_ACTIONS, game.max_chance_outcomes())
    for i, item in enumerate(history_text.split(",") if history_text else []):
        player, _, action = item.partition(":")
        if not (_is_decimal(player, signed=True) and _is_decimal(action)
                and -1 <= int(player) < n and int(action) < outcomes):
            raise StateError(f"state string field 'history' entry {i}={quote(item)} is not "
                             f"allowed; allowed: player:action, a player -1 (chance) to {n - 1} "
                             f"and an action 0-{outcomes - 1}")
    if not _is_decimal(number_text):
        raise StateError(f"state string field 'move_number'={quote(number_text)} is not an "
                         "int ≥ 0")
    try:
        raw = base64.b64decode(dict_text, validate=True)
        attributes = RecordUnpickler(io.BytesIO(raw)).load()
    except UnoMkError:
        raise
    except Exception as e:  # a pickle reader fails in many ways (binascii.Error too): one line
        raise StateError(f"state string field '__dict__' is not a state's pickled record: "
                         f"{one_line(str(e) or type(e).__name__, 80)}") from None
    if not isinstance(attributes, dict) or set(attributes) != {"_core"} or not isinstance(
            attributes["_core"], Record):
        raise StateError("state string field '__dict__' must hold exactly one attribute, the "
                         "state's record")


def _max_history(game: SpielGame) -> int:
    """The most actions a state's history may hold: pyspiel's ``max_game_length()`` decisions
    (and the deal), each with at most :data:`MAX_CARDS_PER_ACTION` chance outcomes."""
    return int(game.max_game_length() + 1) * (MAX_CARDS_PER_ACTION + 1)


def _is_decimal(text: str, signed: bool = False) -> bool:
    digits = text[1:] if signed and text.startswith("-") else text
    return 0 < len(digits) <= 12 and digits.isascii() and digits.isdigit()


