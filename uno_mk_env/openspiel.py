"""UNO Mario Kart as an OpenSpiel game: ``import uno_mk_env.openspiel`` registers
``python_uno_mario_kart`` with pyspiel (docs/openspiel.md), the way OpenSpiel's own Python games
(``open_spiel/python/games/kuhn_poker.py``) register.

>>> import pyspiel, uno_mk_env.openspiel                          # doctest: +SKIP
>>> game = pyspiel.load_game("python_uno_mario_kart", {"players": 3, "seed": 7})  # doctest: +SKIP

Parameters
    ``players`` (2–10, default 2), ``preset`` (a name of :data:`uno_mk_env.PRESETS`, default
    ``"default"``), every other rule option of :class:`~uno_mk_env.Rules` by its name, ``seed``
    (default 0: the deals of the states a game makes, see below) and ``max_game_length``
    (default 5000 public decisions, the tournaments' cap: a hidden KEEP is not counted, so
    pyspiel's ``max_game_length()`` is twice that plus one; a game cut there ends with every
    return 0, as an env episode truncated without a winner). pyspiel hands a Python game every
    parameter, given or not, so a rule option overrides the preset only when its value differs
    from the option's default: a preset's option cannot be set back to its default here (leave
    ``preset`` out and list the options instead).

Game type
    Sequential; chance is ``SAMPLED_STOCHASTIC``: there are no chance nodes, the engine's own
    ``numpy.random.Generator`` deals and shuffles inside :meth:`~uno_mk_env.Game.step`. That
    generator is part of the state (serialised and cloned with it), so a clone of the true
    state knows the future draws: search from a seat's side starts from
    ``resample_from_infostate``, never from a clone. The ``k``-th game a pyspiel game deals is
    seeded with the ``k``-th child of ``numpy.random.SeedSequence(seed)``, so the same program
    gets the same deals. A state deals on first use (:class:`_Engine`), so pyspiel's ``Clone``
    does not deal, but pyspiel's tensor-size queries (every ``observation_tensor()`` call makes
    and observes a new initial state) do. Imperfect information; zero-sum terminal returns
    equal to the env's ``reward="win"`` (:func:`uno_mk_env.rewards.win_rewards`: +1 to the
    winner, −1/(N−1) to every other seat, 0 for all without a winner); utility bounds −1/(N−1)
    and 1.

Actions, observations, information states
    Actions are the engine's 73 ids (``uno_mk_env.actions``); the current player is the engine's
    ``current_player``, so out-of-turn decisions (W4 challenges, UNO catches) are asked of the
    seat the engine names. The observation tensor is the 437-float observation
    (:func:`uno_mk_env.observation.encode` of the seat's :class:`~uno_mk_env.PlayerView`).
    The information state *is* the view: the engine keeps what a seat may know as the view's
    public memory fields (void-colour evidence, a hand revealed by a challenge, the latest W4,
    the previous turn player). Its event log is not part of a state that determinization
    rebuilds (``Game.from_view`` samples from the view alone), and IS-MCTS requires a
    resampled state to have the searcher's information state exactly, so the information-state
    string/tensor equal the observation string/tensor. It is therefore not perfect recall: two
    histories that leave a seat with the same view share an information state (IS-MCTS treats
    them as one node; algorithms that need perfect recall, CFR and its kin, do not apply —
    docs/openspiel.md says why they would not fit anyway).
    ``resample_from_infostate`` is :meth:`~uno_mk_env.Game.determinize` (a game built from the
    seat's view alone, hidden cards and the generator resampled).

Serialisation
    A state's Python attributes are its engine game, which pickles as the exact state dict in
    JSON (:meth:`~uno_mk_env.Game.to_dict`), and its length cap, so ``state.serialize()`` and
    ``game.deserialize_state`` round-trip exactly. OpenSpiel wraps Python attributes in a
    pickle, whose loading can run code: for untrusted input use :meth:`UnoMarioKartState.to_json`
    and ``game.new_initial_state(json_text)``, which go through ``Game.from_dict``'s validation.
    ``pyspiel.serialize_game_and_state`` (and so ``random_sim_test(serialize=True)``) cannot
    serialise any Python sampled-stochastic game: it asks for the game's RNG state
    (``Game::GetRNGState``), which pyspiel's bridge for Python games does not forward
    (open-spiel 2.0.2).

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
        "uno_mk_env.openspiel needs OpenSpiel: pip install 'uno-mk-env[openspiel]'"
    ) from None

from . import actions as A
from .errors import StateError
from .files import parse_json
from .game import Game
from .observation import OBS_SIZE, encode
from .rewards import loss_reward, win_rewards
from .rules import MAX_PLAYERS, MIN_PLAYERS, OPTIONS, PRESETS, Rules, RulesError
from .view import PlayerView

__all__ = [
    "DEFAULT_MAX_GAME_LENGTH", "GAME_NAME", "UnoMarioKartGame", "UnoMarioKartObserver",
    "UnoMarioKartState", "engine_returns", "game_parameters", "rules_from_parameters",
    "view_string",
]

GAME_NAME = "python_uno_mario_kart"
#: Decisions before a game is cut off with every return 0 (the tournaments' step cap).
DEFAULT_MAX_GAME_LENGTH = 5000
_DEFAULT_PLAYERS = 2

#: Every game parameter with its default: pyspiel types a parameter by its default's type.
_PARAMETERS: dict[str, Any] = {
    "players": _DEFAULT_PLAYERS,
    "preset": "default",
    **{name: spec.default for name, spec in OPTIONS.items() if name != "num_players"},
    "seed": 0,
    "max_game_length": DEFAULT_MAX_GAME_LENGTH,
}

_GAME_TYPE = pyspiel.GameType(
    short_name=GAME_NAME,
    long_name="Python UNO Mario Kart (uno-mk-env)",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.SAMPLED_STOCHASTIC,
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


def game_parameters(rules: Rules, **extra: Any) -> dict[str, Any]:
    """The pyspiel parameters of ``rules`` (plus ``seed``/``max_game_length`` in ``extra``):
    ``pyspiel.load_game(GAME_NAME, game_parameters(rules, seed=3))``."""
    params: dict[str, Any] = {"players": rules.num_players, **rules.non_defaults()}
    params.pop("num_players", None)
    unknown = sorted(set(extra) - {"seed", "max_game_length"})
    if unknown:
        raise ValueError(f"unknown extra parameter(s) {unknown}; allowed: seed, max_game_length")
    return {**params, **extra}


def rules_from_parameters(params: Mapping[str, Any]) -> Rules:
    """The :class:`~uno_mk_env.Rules` of a parameter dict (missing entries take defaults).

    Raises:
        RulesError: an unknown parameter, preset or a bad option value (one line).
    """
    unknown = sorted(set(params) - set(_PARAMETERS))
    if unknown:
        raise RulesError(f"unknown {GAME_NAME} parameter(s) {unknown}; allowed: "
                         f"{', '.join(_PARAMETERS)}")
    preset = params.get("preset", "default")
    if preset not in PRESETS:
        raise RulesError(f"parameter preset={preset!r} is not allowed; presets: "
                         f"{', '.join(PRESETS)}")
    options = dict(PRESETS[preset])
    for name, spec in OPTIONS.items():
        if name != "num_players" and name in params and params[name] != spec.default:
            options[name] = params[name]
    options["num_players"] = params.get("players", _DEFAULT_PLAYERS)
    return Rules(**options)


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


class _Engine:
    """Holds a state's engine :class:`~uno_mk_env.Game`, dealt on first use.

    pyspiel's ``Clone`` builds a new state with ``new_initial_state()`` and then replaces its
    Python attributes with deep copies of the original's, and ``serialize()`` pickles them:
    dealing lazily keeps those throw-away states from dealing (and from advancing the game's
    seed sequence), ``__deepcopy__`` is the engine's fast :meth:`~uno_mk_env.Game.clone`, and
    ``__reduce__`` pickles the exact state dict as JSON, rebuilt by ``Game.from_dict``.
    """

    __slots__ = ("_game", "_deal")

    def __init__(self, game: Game | None, deal: Callable[[], Game] | None = None) -> None:
        self._game = game
        self._deal = deal

    @property
    def game(self) -> Game:
        g = self._game
        if g is None:
            assert self._deal is not None
            g = self._game = self._deal()
            self._deal = None
        return g

    def __deepcopy__(self, memo: dict[int, Any]) -> _Engine:
        return _Engine(self.game.clone())

    def __reduce__(self) -> tuple[Any, ...]:
        return (_engine_from_json, (json.dumps(self.game.to_dict()),))


def _engine_from_json(text: str) -> _Engine:
    return _Engine(Game.from_dict(parse_json(text, "state string", error=StateError)))


class UnoMarioKartGame(pyspiel.Game):
    """The pyspiel game; ``pyspiel.load_game(GAME_NAME, params)`` builds it (see the module
    docstring for the parameters)."""

    def __init__(self, params: Mapping[str, Any] | None = None) -> None:
        params = dict(params or {})
        self.rules = rules_from_parameters(params)
        max_length = params.get("max_game_length", DEFAULT_MAX_GAME_LENGTH)
        if not isinstance(max_length, int) or max_length < 1:
            raise ValueError(f"parameter max_game_length={max_length!r} is not allowed; "
                             "allowed: int ≥ 1")
        seed = params.get("seed", 0)
        if not isinstance(seed, int) or seed < 0:
            raise ValueError(f"parameter seed={seed!r} is not allowed; allowed: int ≥ 0")
        n = self.rules.num_players
        info = pyspiel.GameInfo(
            num_distinct_actions=A.NUM_ACTIONS,
            max_chance_outcomes=0,
            num_players=n,
            min_utility=loss_reward(n),
            max_utility=1.0,
            utility_sum=0.0,
            # the cap counts public decisions; each may be a draw followed by a hidden KEEP
            max_game_length=2 * max_length + 1,
        )
        super().__init__(_GAME_TYPE, info, params)
        self.max_length = max_length
        self._seeds = np.random.SeedSequence(seed)

    def _deal(self) -> Game:
        child = self._seeds.spawn(1)[0]
        return Game(self.rules, seed=np.random.default_rng(child))

    def new_initial_state(self, state: str | Mapping[str, Any] | None = None) -> UnoMarioKartState:
        """A new dealt game; or, given a state dict (or its JSON text, see
        :meth:`UnoMarioKartState.to_json`), that exact position (validated by
        ``Game.from_dict``; it must be of this game's rules)."""
        if state is None:
            return UnoMarioKartState(self)
        d = parse_json(state, "state string", error=StateError) if isinstance(state, str) else state
        g = Game.from_dict(d)
        if g.rules != self.rules:
            raise RulesError(f"the state's rules {g.rules!r} are not this game's {self.rules!r}")
        return UnoMarioKartState(self, g)

    def make_py_observer(
        self, iig_obs_type: Any = None, params: Mapping[str, Any] | None = None
    ) -> UnoMarioKartObserver:
        """The observer of OpenSpiel's observation API (information state = observation)."""
        return UnoMarioKartObserver(iig_obs_type, params)


class UnoMarioKartState(pyspiel.State):
    """A pyspiel state around one engine :class:`~uno_mk_env.Game` (``state.engine``)."""

    def __init__(self, game: UnoMarioKartGame, engine: Game | None = None) -> None:
        super().__init__(game)
        self._engine = _Engine(engine, None if engine is not None else game._deal)
        self.max_length = game.max_length

    @property
    def engine(self) -> Game:
        """The engine game (the true state: every hand; never give it to a seat's agent)."""
        return self._engine.game

    def current_player(self) -> int:
        """The engine's decider, or ``pyspiel.PlayerId.TERMINAL``."""
        if self.is_terminal():
            return int(pyspiel.PlayerId.TERMINAL)
        return self.engine.current_player

    def _legal_actions(self, player: int) -> list[int]:
        return list(self.engine.legal_action_ids())

    def _apply_action(self, action: int) -> None:
        self.engine.step(action)

    def _action_to_string(self, player: int, action: int) -> str:
        return A.action_name(action)

    def is_terminal(self) -> bool:
        g = self.engine
        # The cap counts public decisions (a KEEP is hidden from the other seats) and never falls
        # inside a drawn card's decision, so where a game is cut tells no seat a hidden choice.
        return g.game_over or (g.public_steps >= self.max_length and g.phase != A.PLAY_DRAWN)

    def returns(self) -> list[float]:
        """:func:`engine_returns` of the engine game."""
        return engine_returns(self.engine)

    def resample_from_infostate(
        self, player_id: int, probability_sampler: Callable[[], float]
    ) -> UnoMarioKartState:
        """A state ``player_id`` cannot tell from this one: :meth:`~uno_mk_env.Game.determinize`
        (built from the seat's view alone), its generator seeded from ``probability_sampler``
        (OpenSpiel passes a uniform ``[0, 1)`` sampler)."""
        g = self.engine
        seed = int(probability_sampler() * 2**53)
        sample = g.determinize(player_id, np.random.default_rng(seed))
        sample.num_steps = g.public_steps  # what the seat knows: the public decisions so far
        return UnoMarioKartState(self.get_game(), sample)

    def to_json(self) -> str:
        """The exact state dict (:meth:`~uno_mk_env.Game.to_dict`) as JSON text."""
        return json.dumps(self.engine.to_dict())

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
        """Writes ``player``'s observation of ``state`` into :attr:`tensor`."""
        self.tensor[:] = encode(state.engine.view(player))

    def string_from(self, state: UnoMarioKartState, player: int) -> str:
        """``player``'s view of ``state`` as one line (:func:`view_string`)."""
        return view_string(state.engine.view(player))


pyspiel.register_game(_GAME_TYPE, UnoMarioKartGame)
