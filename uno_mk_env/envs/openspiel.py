"""UNO Mario Kart as an OpenSpiel game: ``import uno_mk_env.envs.openspiel`` registers
``python_uno_mario_kart`` with pyspiel (docs/openspiel.md), the way OpenSpiel's own Python games
(``open_spiel/python/games/kuhn_poker.py``) register.

>>> import pyspiel, uno_mk_env.envs.openspiel                          # doctest: +SKIP
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
    (:class:`~uno_mk_env.Game`) with a :data:`~uno_mk_env.engine.game.Deck` that hands it the cards
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
    (:func:`uno_mk_env.engine.rewards.win_rewards`: +1 to the winner, −1/(N−1) to every other seat,
    0
    for all without a winner); utility bounds −1/(N−1) and 1. Actions are the engine's 73 ids
    (``uno_mk_env.engine.actions``); the current player is the engine's ``current_player``, so
    out-of-turn decisions (W4 challenges, UNO catches) are asked of the seat the engine names.
    The observation tensor is the 437-float observation
    (:func:`uno_mk_env.engine.observation.encode`
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

import json
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

try:
    import pyspiel
except ImportError:  # one line naming the extra, not pyspiel's traceback
    raise ImportError(
        "uno_mk_env.envs.openspiel needs OpenSpiel: pip install 'uno-mk-env[openspiel]'"
    ) from None

from ..engine import actions as A
from ..engine.cards import NUM_KINDS, code
from ..engine.game import Game
from ..engine.observation import OBS_SIZE, encode
from ..engine.rewards import loss_reward
from ..engine.rules import MAX_PLAYERS, MIN_PLAYERS, OPTIONS, PRESETS, Rules, RulesError
from ..engine.view import PlayerView
from ..errors import StateError, quote
from ..files import parse_json
from ._openspiel_state import (
    DEALER_BASE,
    MAX_CARDS_PER_ACTION,
    Core,
    Record,
    check_state_string,
    engine_returns,
    reached_cap,
    replay,
)

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
_DEFAULT_PLAYERS = 2

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
        return UnoMarioKartState(self, core=Core.from_position(self, d))

    def deserialize_state(self, text: str) -> UnoMarioKartState:
        """The state of a ``state.serialize()`` string, checked against this game: its form, its
        record (read without running code), the history replayed.

        Raises:
            StateError, RulesError: one line naming the field that is wrong.
        """
        check_state_string(text, self)
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
                 core: Core | None = None) -> None:
        super().__init__(game)
        if core is None:
            core = Core.initial(game) if engine is None else Core.at(game, engine)
        self._core = core

    def __setattr__(self, name: str, value: Any) -> None:
        """A state has one Python attribute, its core. pyspiel's ``Clone`` sets a copy;
        pyspiel's deserialisation sets the string's :class:`Record`, checked here against the
        game and the history pyspiel has just read from the same string."""
        if name != "_core":
            raise StateError(f"a {GAME_NAME} state has one attribute, _core; "
                             f"{quote(name)} is not allowed")
        if isinstance(value, Record):
            game = self.__dict__["_core"].game  # this state's game, set by __init__
            history = [(int(item.player), int(item.action)) for item in self.full_history()]
            value = replay(game, value.data, history, self.move_number())
        elif not isinstance(value, Core):
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
