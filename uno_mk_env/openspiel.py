"""UNO Mario Kart as an OpenSpiel game: ``import uno_mk_env.openspiel`` registers
``python_uno_mario_kart`` with pyspiel (docs/openspiel.md), the way OpenSpiel's own Python games
(``open_spiel/python/games/kuhn_poker.py``) register.

>>> import pyspiel, uno_mk_env.openspiel                          # doctest: +SKIP
>>> game = pyspiel.load_game("python_uno_mario_kart", {"players": 3})  # doctest: +SKIP

Parameters
    ``players`` (2–10, default 2); ``preset`` (a name of :data:`uno_mk_env.PRESETS`, default
    ``"default"``); every other rule option of :class:`~uno_mk_env.Rules` by its name;
    ``chance`` (``"explicit"``, the default, or ``"sampled"``, see below); ``seed`` (an int
    0–2³¹−1, default 0: the deals of the ``"sampled"`` form; the ``"explicit"`` form takes only
    0, its deals being chance outcomes); ``max_game_length`` (an int 1–2³⁰−1, default 5000
    public decisions, the tournaments' cap: a hidden KEEP is not counted, so pyspiel's
    ``max_game_length()`` is twice that plus one; a game cut there ends with every return 0, as
    an env episode truncated without a winner: :func:`reached_cap`). Every value is checked,
    a bad one is a :class:`~uno_mk_env.RulesError` naming it and what is allowed. pyspiel hands
    a Python game every parameter, given or not, so a rule option overrides the preset only
    when its value differs from the option's default: a preset's option cannot be set back to
    its default here (leave ``preset`` out and list the options instead).

Chance (``chance="explicit"``, the default)
    Sequential, ``EXPLICIT_STOCHASTIC``: the shuffled deck is revealed card by card at chance
    nodes, as OpenSpiel's own card games (``crazy_eights``, ``hearts``) deal. A chance node comes
    for the dealer of round 1 (R3.1) and for every card that leaves the draw pile: each card
    dealt (R3.2), each start-card flip (R3.3, a W4 put back and flipped again, a ``reflip``),
    each card drawn (a voluntary draw, Draw Two, Wild Draw Four and its challenge, Banana,
    Green Shell, Lightning, Bob-omb, the UNO penalty) and the Item Box flip (R7.1); a deal of a
    later round too. Its outcomes are the distinct card kinds in the draw pile, each with
    probability proportional to its count (the draw pile is an unordered multiset: a reshuffle,
    R9, makes it one again), which is the distribution of the engine's own uniform shuffle.
    Outcome ids: a card kind's id 0–53 (the id of its ``PLAY`` action, as in ``crazy_eights``);
    the dealer is ``DEALER_BASE + seat`` = 54 + seat; ``max_chance_outcomes()`` is 54 + the
    number of players. The rules stay in the engine: the state steps the engine
    (:class:`~uno_mk_env.Game`) with a :data:`~uno_mk_env.game.Deck` that hands it the cards
    decided so far, and a card not yet decided is a chance node: the action waits (the state's
    *pending* action) until its cards are decided, then the engine plays it. pyspiel's
    ``max_chance_nodes_in_history()`` is its default (the maximum game length), which is no
    bound here: a W4 flipped at the start goes back and the pile is flipped again (R3.3) as
    often as it comes up.

Chance (``chance="sampled"``)
    ``SAMPLED_STOCHASTIC``, no chance nodes: the engine's own ``numpy.random.Generator`` deals and
    shuffles inside :meth:`~uno_mk_env.Game.step`. That generator is part of the state, so a
    clone of the true state knows the future draws (search from a seat's side starts from
    ``resample_from_infostate``). The ``k``-th game a pyspiel game deals is seeded with the
    ``k``-th child of ``numpy.random.SeedSequence(seed)``; a state deals on first use, so
    pyspiel's ``Clone`` does not deal. About a third of the explicit form's cost a decision
    (docs/openspiel.md); OpenSpiel's IS-MCTS agent uses it.

Both forms
    Imperfect information; zero-sum terminal returns equal to the env's ``reward="win"``
    (:func:`uno_mk_env.rewards.win_rewards`: +1 to the winner, −1/(N−1) to every other seat, 0
    for all without a winner); utility bounds −1/(N−1) and 1. Actions are the engine's 73 ids
    (``uno_mk_env.actions``); the current player is the engine's ``current_player``, so
    out-of-turn decisions (W4 challenges, UNO catches) are asked of the seat the engine names.
    The observation tensor is the 437-float observation (:func:`uno_mk_env.observation.encode`
    of the seat's :class:`~uno_mk_env.PlayerView`). The information state *is* the view: the
    engine keeps what a seat may know as the view's public memory fields. A resampled state
    (``Game.from_view``) must give the searcher exactly its information state, and the engine's
    event log is not part of it, so the information-state string/tensor equal the observation
    string/tensor: not perfect recall (two histories that leave a seat with the same view share
    an information state). At a chance node a seat observes the game as it was before the
    pending action (all zeros and ``"before the deal"`` before round 1 is dealt).
    ``resample_from_infostate`` (at a decision node) is :meth:`~uno_mk_env.Game.determinize`.

Serialisation
    :meth:`UnoMarioKartState.to_json` (also ``str(state)``) is the position as JSON: the engine's
    state dict (:meth:`~uno_mk_env.Game.to_dict`), or at a chance node
    ``{"chance": {"pending": action id or "deal", "outcomes": [decided ids]}, "rules": {...},
    "state": engine dict or null}``; ``game.new_initial_state(json_text)`` loads either, checked
    against the game (rules, form, every field, each decided card replayed). pyspiel's
    ``state.serialize()`` is its history and a pickled ``__dict__``; here that dict holds one
    record, as JSON: the game's identity, the position the history starts from (none for a game
    dealt by chance) and the actions since. ``game.deserialize_state`` checks the string's form
    (reading the pickle with only that record allowed, so loading cannot run code), that the
    record is of this game, that the history line and the record agree, and replays every
    action, refusing in one line (:class:`~uno_mk_env.StateError`, naming the field) anything
    else. ``pyspiel.deserialize_game_and_state`` (C++) replays the same way but unpickles
    without that restriction: give it trusted strings only.

pyspiel is an optional dependency (``pip install 'uno-mk-env[openspiel]'``); the engine never
imports this module.
"""

from __future__ import annotations

import base64
import io
import json
import pickle
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

try:
    import pyspiel
except ImportError:  # one line naming the extra, not pyspiel's traceback
    raise ImportError(
        "uno_mk_env.openspiel needs OpenSpiel: pip install 'uno-mk-env[openspiel]'"
    ) from None

from . import actions as A
from .cards import NUM_KINDS, code
from .errors import IllegalActionError, StateError, UnoMkError, one_line, quote
from .files import MAX_JSON_BYTES, parse_json
from .game import Game
from .observation import OBS_SIZE, encode
from .rewards import loss_reward, win_rewards
from .rules import MAX_PLAYERS, MIN_PLAYERS, OPTIONS, PRESETS, Rules, RulesError
from .view import PlayerView

__all__ = [
    "CHANCE_FORMS", "DEALER_BASE", "DEFAULT_MAX_GAME_LENGTH", "GAME_NAME", "MAX_CARDS_PER_ACTION",
    "MAX_GAME_LENGTH", "MAX_SEED", "UnoMarioKartGame", "UnoMarioKartObserver",
    "UnoMarioKartState", "engine_returns", "game_parameters", "reached_cap",
    "rules_from_parameters", "view_string",
]

GAME_NAME = "python_uno_mario_kart"
#: Decisions before a game is cut off with every return 0 (the tournaments' step cap).
DEFAULT_MAX_GAME_LENGTH = 5000
#: The largest ``max_game_length``: pyspiel holds twice it plus one in a C ``int``.
MAX_GAME_LENGTH = 2**30 - 1
#: The largest ``seed`` (pyspiel holds an int parameter in a C ``int``).
MAX_SEED = 2**31 - 1
#: The ``chance`` parameter's values: chance nodes (the default) or the engine's own generator.
CHANCE_FORMS = ("explicit", "sampled")
#: Chance outcome of "seat ``s`` deals round 1" (R3.1): ``DEALER_BASE + s``; a card is its kind id.
DEALER_BASE = NUM_KINDS
#: The most cards one action may wait for in a position or a state string (a 10-player deal of
#: 15-card hands takes 151; each start card a W4 or, under ``reflip``, an action card adds one).
MAX_CARDS_PER_ACTION = 400
_DEFAULT_PLAYERS = 2
_DEAL = -1  # the pending action of round 1's deal
_RECORD_FORMAT = 1
_STATE_STRING_BYTES = 2 * MAX_JSON_BYTES  # the record in base64 (4/3 of it) and the history

#: Every game parameter with its default: pyspiel types a parameter by its default's type.
_PARAMETERS: dict[str, Any] = {
    "players": _DEFAULT_PLAYERS,
    "preset": "default",
    **{name: spec.default for name, spec in OPTIONS.items() if name != "num_players"},
    "chance": CHANCE_FORMS[0],
    "seed": 0,
    "max_game_length": DEFAULT_MAX_GAME_LENGTH,
}
_EXTRA_PARAMETERS = ("chance", "seed", "max_game_length")


def _game_type(chance_mode: Any) -> Any:
    return pyspiel.GameType(
        short_name=GAME_NAME,
        long_name="Python UNO Mario Kart (uno-mk-env)",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=chance_mode,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.ZERO_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=MAX_PLAYERS,
        min_num_players=MIN_PLAYERS,
        provides_information_state_string=True,
        provides_information_state_tensor=True,
        provides_observation_string=True,
        provides_observation_tensor=True,
        provides_factored_observation_string=False,
        parameter_specification=_PARAMETERS,
        default_loadable=True,
    )


_GAME_TYPES = {
    "explicit": _game_type(pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC),
    "sampled": _game_type(pyspiel.GameType.ChanceMode.SAMPLED_STOCHASTIC),
}


# ------------------------------------------------------------------------------ parameters
def game_parameters(rules: Rules, **extra: Any) -> dict[str, Any]:
    """The pyspiel parameters of ``rules`` (plus ``chance``/``seed``/``max_game_length`` in
    ``extra``): ``pyspiel.load_game(GAME_NAME, game_parameters(rules, chance="sampled"))``."""
    params: dict[str, Any] = {"players": rules.num_players, **rules.non_defaults()}
    params.pop("num_players", None)
    unknown = sorted(set(extra) - set(_EXTRA_PARAMETERS))
    if unknown:
        raise RulesError(f"unknown extra parameter(s) {unknown}; allowed: "
                         f"{', '.join(_EXTRA_PARAMETERS)}")
    return {**params, **extra}


def rules_from_parameters(params: Mapping[str, Any]) -> Rules:
    """The :class:`~uno_mk_env.Rules` of a parameter dict (missing entries take defaults).

    Raises:
        RulesError: an unknown parameter, preset or a bad option value (one line).
    """
    if not isinstance(params, Mapping):
        raise RulesError(f"{GAME_NAME} parameters must be a mapping, got {type(params).__name__}")
    unknown = sorted(str(k) for k in params if k not in _PARAMETERS)
    if unknown:
        raise RulesError(f"unknown {GAME_NAME} parameter(s) {quote(unknown)}; allowed: "
                         f"{', '.join(_PARAMETERS)}")
    preset = params.get("preset", "default")
    if not isinstance(preset, str) or preset not in PRESETS:
        raise RulesError(f"parameter preset={quote(preset)} is not allowed; presets: "
                         f"{', '.join(PRESETS)}")
    options = dict(PRESETS[preset])
    for name, spec in OPTIONS.items():
        if name != "num_players" and name in params and params[name] != spec.default:
            options[name] = params[name]
    options["num_players"] = params.get("players", _DEFAULT_PLAYERS)
    return Rules(**options)


def _int_parameter(params: Mapping[str, Any], name: str, low: int, high: int) -> int:
    value = params.get(name, _PARAMETERS[name])
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise RulesError(f"parameter {name}={quote(value)} is not allowed; allowed: an int "
                         f"{low}-{high}")
    return value


def _chance_parameter(params: Mapping[str, Any], seed: int) -> str:
    chance = params.get("chance", CHANCE_FORMS[0])
    if not isinstance(chance, str) or chance not in CHANCE_FORMS:
        raise RulesError(f"parameter chance={quote(chance)} is not allowed; allowed: "
                         f"{', '.join(CHANCE_FORMS)}")
    if chance == "explicit" and seed != 0:
        raise RulesError(f"parameter seed={seed} is not allowed with chance='explicit' (its deals "
                         "are chance outcomes: seed what samples them); allowed: seed=0, or "
                         "chance='sampled'")
    return chance


def _rules_mismatch(found: Rules, expected: Rules, what: str) -> RulesError | None:
    """The error naming the first option in which ``found`` differs from ``expected``."""
    for name in OPTIONS:
        mine, theirs = getattr(found, name), getattr(expected, name)
        if mine != theirs:
            return RulesError(f"{what}: {name}={quote(mine)} is not this game's {quote(theirs)}")
    return None


# ---------------------------------------------------------------------------- small helpers
def view_string(view: PlayerView) -> str:
    """Every field of a view but ``rules`` (the game's), as one line: the information-state key.

    Two states give a seat the same string exactly when its views are equal."""
    parts = []
    for name, value in zip(PlayerView._fields, view):
        if name == "rules":
            continue
        if isinstance(value, bytes):
            text = value.hex()
        elif isinstance(value, tuple):
            text = ",".join(str(int(v)) for v in value)
        else:
            text = str(value)
        parts.append(f"{name}={text}")
    return " ".join(parts)


def engine_returns(game: Game) -> list[float]:
    """The returns of an engine game: :func:`~uno_mk_env.rewards.win_rewards` once it is over,
    else zeros (also when cut off at ``max_game_length``)."""
    if game.game_over:
        return win_rewards(game.num_players, game.winner)
    return [0.0] * game.num_players


def reached_cap(game: Game, max_length: int) -> bool:
    """The length cap: ``max_length`` public decisions taken (a KEEP is hidden from the other
    seats and not counted), and never inside a drawn card's decision, so where a game is cut
    tells no seat a hidden choice."""
    return game.public_steps >= max_length and game.phase != A.PLAY_DRAWN


def _is_int(value: Any) -> bool:
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
    """The engine's :data:`~uno_mk_env.game.Deck` in the explicit form: hands out the decided
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


class _Record:
    """A state's serialised record, as read from a state string: not yet checked (the state it
    is loaded into checks it, see :func:`_replay`)."""

    __slots__ = ("data",)

    def __init__(self, data: Any) -> None:
        self.data = data


def _restore_record(text: str) -> _Record:
    """What a state string's pickle calls (the only thing it may call, see
    :class:`_RecordUnpickler`): the record's JSON, parsed within bounds."""
    return _Record(parse_json(text, "state string record", error=StateError))


class _Core:
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

    def __init__(self, game: UnoMarioKartGame, engine: Game | None,
                 start: Game | dict[str, Any] | None) -> None:
        self.game = game
        self.committed = engine
        self.pending: int | None = None
        self.cards: list[int] = []
        self.outcomes: list[tuple[int, float]] | None = None
        self.start = start
        self.actions: list[int] = []

    @classmethod
    def initial(cls, game: UnoMarioKartGame) -> _Core:
        core = cls(game, None, None)
        if game.chance == "explicit":
            core._decide(_DEAL, [])
        return core

    @classmethod
    def at(cls, game: UnoMarioKartGame, engine: Game) -> _Core:
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
    def __deepcopy__(self, memo: dict[int, Any]) -> _Core:
        twin = _Core(self.game, None, self.start)
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
    def from_position(cls, game: UnoMarioKartGame, d: Any) -> _Core:
        """A core at the position ``d`` (:meth:`position`'s form), checked against ``game``."""
        if not isinstance(d, Mapping):
            raise StateError(f"a state must be a JSON object, got {type(d).__name__}")
        if "chance" in d:
            return cls._from_chance_position(game, d)
        return cls._from_engine_position(game, d)

    @classmethod
    def _from_engine_position(cls, game: UnoMarioKartGame, d: Any) -> _Core:
        g = Game.from_dict(d)
        error = _rules_mismatch(g.rules, game.rules, "the state's rules")
        if error:
            raise error
        return cls.at(game, g)

    @classmethod
    def _from_chance_position(cls, game: UnoMarioKartGame, d: Mapping[str, Any]) -> _Core:
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
        if pending != "deal" and not (_is_int(pending) and 0 <= pending < A.NUM_ACTIONS):
            raise StateError(f"state field 'chance.pending'={quote(pending)} is not allowed; "
                             f"allowed: 'deal' or an action id 0-{A.NUM_ACTIONS - 1}")
        if not isinstance(outcomes, list) or len(outcomes) > MAX_CARDS_PER_ACTION or not all(
                _is_int(o) for o in outcomes):
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


def _check_position_rules(found: Any, game: UnoMarioKartGame) -> None:
    """A chance position's ``rules`` field must be this game's rules."""
    if not isinstance(found, Mapping):
        raise StateError(f"state field 'rules' must be an object, got {type(found).__name__}")
    try:
        rules = Rules.from_dict(found)
    except RulesError as e:
        raise StateError(f"state field 'rules': {e}") from None
    error = _rules_mismatch(rules, game.rules, "state field 'rules'")
    if error:
        raise error


def _check_identity(found: Any, game: UnoMarioKartGame) -> None:
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
            error = _rules_mismatch(rules, game.rules, "state string field 'game.rules'")
            if error:
                raise error
        elif found[name] != value or type(found[name]) is not type(value):
            raise StateError(f"state string field 'game.{name}'={quote(found[name])} is not "
                             f"this game's {quote(value)}")


def _replay(game: UnoMarioKartGame, data: Any, history: list[tuple[int, int]],
            move_number: int) -> _Core:
    """The core a state string's record describes, checked against ``game`` and the string's
    history line (``(player, action)`` pairs) by replaying every action."""
    fields = ("format", "game", "start", "actions")
    if not isinstance(data, Mapping) or set(data) != set(fields):
        raise StateError(f"a state string's record must be an object with the fields "
                         f"{', '.join(fields)}, got {quote(data)}")
    if data["format"] != _RECORD_FORMAT or not _is_int(data["format"]):
        raise StateError(f"state string field 'format'={quote(data['format'])} is not "
                         f"supported; this version reads {_RECORD_FORMAT}")
    _check_identity(data["game"], game)
    actions = data["actions"]
    if not isinstance(actions, list) or not all(_is_int(a) for a in actions):
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
    core = _Core.initial(game) if start is None else _Core.from_position(game, start)
    for i, (player, action) in enumerate(history):
        if core.current_player() != player:
            raise StateError(f"state string field 'history' step {i}: player {player} acts, "
                             f"but the state's current player is {core.current_player()}")
        try:
            core.apply(action)
        except IllegalActionError as e:
            raise StateError(f"state string field 'history' step {i}: {e}") from None
    return core


class _RecordUnpickler(pickle.Unpickler):
    """Reads a state string's pickle allowing only :func:`_restore_record` (JSON text in, no
    code run): any other class or function in it is refused."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) == (__name__, _restore_record.__name__):
            return _restore_record
        raise StateError(f"a state string's __dict__ may hold only its record; it refers to "
                         f"{quote(module + '.' + name)}")


def _check_state_string(text: Any, game: UnoMarioKartGame) -> None:
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
        attributes = _RecordUnpickler(io.BytesIO(raw)).load()
    except UnoMkError:
        raise
    except Exception as e:  # a pickle reader fails in many ways (binascii.Error too): one line
        raise StateError(f"state string field '__dict__' is not a state's pickled record: "
                         f"{one_line(str(e) or type(e).__name__, 80)}") from None
    if not isinstance(attributes, dict) or set(attributes) != {"_core"} or not isinstance(
            attributes["_core"], _Record):
        raise StateError("state string field '__dict__' must hold exactly one attribute, the "
                         "state's record")


def _max_history(game: UnoMarioKartGame) -> int:
    """The most actions a state's history may hold: pyspiel's ``max_game_length()`` decisions
    (and the deal), each with at most :data:`MAX_CARDS_PER_ACTION` chance outcomes."""
    return int(game.max_game_length() + 1) * (MAX_CARDS_PER_ACTION + 1)


def _is_decimal(text: str, signed: bool = False) -> bool:
    digits = text[1:] if signed and text.startswith("-") else text
    return 0 < len(digits) <= 12 and digits.isascii() and digits.isdigit()


# ------------------------------------------------------------------------------ pyspiel API
class UnoMarioKartGame(pyspiel.Game):
    """The pyspiel game; ``pyspiel.load_game(GAME_NAME, params)`` builds it (see the module
    docstring for the parameters).

    Raises:
        RulesError: a parameter that is unknown or out of its range (one line naming it).
    """

    def __init__(self, params: Mapping[str, Any] | None = None) -> None:
        params = {} if params is None else params
        self.rules = rules_from_parameters(params)
        self.max_length = _int_parameter(params, "max_game_length", 1, MAX_GAME_LENGTH)
        seed = _int_parameter(params, "seed", 0, MAX_SEED)
        self.chance = _chance_parameter(params, seed)
        n = self.rules.num_players
        info = pyspiel.GameInfo(
            num_distinct_actions=A.NUM_ACTIONS,
            max_chance_outcomes=DEALER_BASE + n if self.chance == "explicit" else 0,
            num_players=n,
            min_utility=loss_reward(n),
            max_utility=1.0,
            utility_sum=0.0,
            # the cap counts public decisions; each may be a draw followed by a hidden KEEP
            max_game_length=2 * self.max_length + 1,
        )
        super().__init__(_GAME_TYPES[self.chance], info, dict(params))
        self._seeds = np.random.SeedSequence(seed)

    def identity(self) -> dict[str, Any]:
        """What a state string names of its game (checked when it is loaded)."""
        return {"players": self.rules.num_players, "chance": self.chance,
                "max_game_length": self.max_length, "rules": self.rules.to_dict()}

    def sampled_deal(self) -> Game:
        """The sampled form's next deal (its own seed, from the game's seed sequence)."""
        child = self._seeds.spawn(1)[0]
        return Game(self.rules, seed=np.random.default_rng(child))

    def new_initial_state(self, state: str | Mapping[str, Any] | None = None) -> UnoMarioKartState:
        """A new game (before its deal's chance nodes, or dealt in the sampled form); or, given
        a position (:meth:`UnoMarioKartState.to_json`'s JSON text or its dict), that position,
        checked against this game.

        Raises:
            StateError, RulesError: a position that is malformed or not of this game (one line
                naming the field).
        """
        if state is None:
            return UnoMarioKartState(self)
        d = parse_json(state, "state string", error=StateError) if isinstance(state, str) else state
        return UnoMarioKartState(self, core=_Core.from_position(self, d))

    def deserialize_state(self, text: str) -> UnoMarioKartState:
        """The state of a ``state.serialize()`` string, checked against this game: its form, its
        record (read without running code), the history replayed.

        Raises:
            StateError, RulesError: one line naming the field that is wrong.
        """
        _check_state_string(text, self)
        return super().deserialize_state(text)  # type: ignore[no-any-return]

    def make_py_observer(
        self, iig_obs_type: Any = None, params: Mapping[str, Any] | None = None
    ) -> UnoMarioKartObserver:
        """The observer of OpenSpiel's observation API (information state = observation)."""
        return UnoMarioKartObserver(iig_obs_type, params)


class UnoMarioKartState(pyspiel.State):
    """A pyspiel state around the engine :class:`~uno_mk_env.Game` (``state.engine``).

    Args:
        game: the pyspiel game.
        engine: a position to start from (used, not copied); ``None``: the game's initial state.
        core: internal (a position the game has built and checked).
    """

    def __init__(self, game: UnoMarioKartGame, engine: Game | None = None, *,
                 core: _Core | None = None) -> None:
        super().__init__(game)
        if core is None:
            core = _Core.initial(game) if engine is None else _Core.at(game, engine)
        self._core = core

    def __setattr__(self, name: str, value: Any) -> None:
        """A state has one Python attribute, its core. pyspiel's ``Clone`` sets a copy;
        pyspiel's deserialisation sets the string's :class:`_Record`, checked here against the
        game and the history pyspiel has just read from the same string."""
        if name != "_core":
            raise StateError(f"a {GAME_NAME} state has one attribute, _core; "
                             f"{quote(name)} is not allowed")
        if isinstance(value, _Record):
            game = self.__dict__["_core"].game  # this state's game, set by __init__
            history = [(int(item.player), int(item.action)) for item in self.full_history()]
            value = _replay(game, value.data, history, self.move_number())
        elif not isinstance(value, _Core):
            raise StateError(f"a state's _core must be a state record, got "
                             f"{type(value).__name__}")
        super().__setattr__(name, value)

    @property
    def engine(self) -> Game:
        """The engine game (the true state: every hand; never give it to a seat's agent). At a
        chance node: the game before the pending action; before round 1's deal there is none
        (:class:`~uno_mk_env.StateError`)."""
        return self._core.engine

    @property
    def max_length(self) -> int:
        """The game's ``max_game_length`` (public decisions)."""
        return self._core.game.max_length

    def current_player(self) -> int:
        """The engine's decider, ``pyspiel.PlayerId.CHANCE`` or ``TERMINAL``."""
        return self._core.current_player()

    def is_terminal(self) -> bool:
        return self._core.is_terminal()

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """The chance node's outcomes: each card kind in the draw pile with its share of the
        pile, or each seat that may deal round 1 (``DEALER_BASE + seat``), equally likely."""
        outcomes = self._core.outcomes
        if outcomes is None:
            raise StateError("chance_outcomes: this is not a chance node")
        return list(outcomes)

    def _legal_actions(self, player: int) -> list[int]:
        return list(self._core.engine.legal_action_ids())

    def _apply_action(self, action: int) -> None:
        self._core.apply(action)

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            if DEALER_BASE <= action < DEALER_BASE + self._core.game.rules.num_players:
                return f"Dealer: seat {action - DEALER_BASE}"
            return f"Card: {code(action)}" if 0 <= action < NUM_KINDS else f"chance {action}?"
        return A.action_name(action)

    def returns(self) -> list[float]:
        """:func:`engine_returns` of the engine game (zeros before the game is over)."""
        return self._core.returns()

    def resample_from_infostate(
        self, player_id: int, probability_sampler: Callable[[], float]
    ) -> UnoMarioKartState:
        """A state ``player_id`` cannot tell from this one: :meth:`~uno_mk_env.Game.determinize`
        (built from the seat's view alone), its generator seeded from ``probability_sampler``
        (OpenSpiel passes a uniform ``[0, 1)`` sampler). At a decision or terminal node only.
        """
        if self._core.outcomes is not None:
            raise StateError("resample_from_infostate: this is a chance node; resample at a "
                             "decision node")
        g = self._core.engine
        seed = int(probability_sampler() * 2**53)
        sample = g.determinize(player_id, np.random.default_rng(seed))
        sample.num_steps = g.public_steps  # what the seat knows: the public decisions so far
        return UnoMarioKartState(self.get_game(), sample)

    def sample_engine(self, rng: np.random.Generator) -> Game:
        """An engine game that continues this state with its chance drawn from ``rng``: a
        clone in the sampled form; in the explicit form the pending action done with random
        cards and the draw pile shuffled (what a rollout steps). It holds every hidden card."""
        return self._core.sample_engine(rng)

    def to_json(self) -> str:
        """The position as JSON text: the engine's state dict, or a chance position (module
        docstring, Serialisation); ``game.new_initial_state(text)`` loads it."""
        return json.dumps(self._core.position())

    def __str__(self) -> str:
        return self.to_json()


class UnoMarioKartObserver:
    """OpenSpiel's PyObserver for this game: the tensor is the 437-float observation of the
    seat's view, the string :func:`view_string`. A perfect-recall request (pyspiel's
    information state) gets the same (the information state is the view, see the module
    docstring); public-only or other seats' private observations are not provided."""

    def __init__(self, iig_obs_type: Any, params: Mapping[str, Any] | None) -> None:
        if params:
            raise ValueError(f"observation parameters are not supported, got {dict(params)}")
        if iig_obs_type is not None and (
            not iig_obs_type.public_info
            or iig_obs_type.private_info != pyspiel.PrivateInfoType.SINGLE_PLAYER
        ):
            raise ValueError("only the seat's own observation (public info and its private "
                             "info) is provided")
        self.tensor = np.zeros(OBS_SIZE, np.float32)
        self.dict = {"observation": self.tensor}

    def set_from(self, state: UnoMarioKartState, player: int) -> None:
        """Writes ``player``'s observation of ``state`` into :attr:`tensor` (zeros before the
        deal)."""
        g = _observed(state)
        if g is None:
            self.tensor[:] = 0.0
        else:
            self.tensor[:] = encode(g.view(player))

    def string_from(self, state: UnoMarioKartState, player: int) -> str:
        """``player``'s view of ``state`` as one line (:func:`view_string`)."""
        g = _observed(state)
        return "before the deal" if g is None else view_string(g.view(player))


def _observed(state: UnoMarioKartState) -> Game | None:
    """The engine game a seat observes: the game before any pending action."""
    core = state._core
    return core.engine if core.committed is not None or core.game.chance == "sampled" else None


pyspiel.register_game(_GAME_TYPES["explicit"], UnoMarioKartGame)
