"""The PettingZoo AEC environment of ``uno_mario_kart_v0`` (its docstring is the spec).

Two classes share one implementation:

* :class:`UnoMarioKartEnv` (``raw_env``): the engine's :class:`~uno_mk_env.IllegalActionError`
  propagates (nothing is changed, so the caller may catch it and step again).
* :class:`GuardedUnoMarioKartEnv` (``env()``): PettingZoo's usual guarantees, implemented inline
  instead of stacking ``OrderEnforcingWrapper``/``AssertOutOfBoundsWrapper``/
  ``TerminateIllegalWrapper`` (≈ 30 µs a step): an illegal action ends the episode with
  ``illegal_reward`` for the mover and an :class:`IllegalActionWarning`; calls out of order raise
  a clear error.

In both (and in the Gymnasium wrapper) an action that is not an action id at all is not an
illegal move but a bug of the caller, reported by :func:`action_id` before the game is touched:
``TypeError`` for anything that is not an integer (a ``bool`` or ``np.bool_`` too: ``True`` is
not ``PLAY(R1)``; a float, a string, ``None`` for an agent that is still playing), ``ValueError``
for an integer outside ``Discrete(73)``. An unknown agent name raises :class:`UnknownAgentError`
(a ``KeyError``) naming it and the valid ones.

The hot path costs one engine step, one cached read-only ``int8`` mask and, in :meth:`observe`,
one ``game.view(seat)`` through :func:`~uno_mk_env.engine.observation.encode`. With
``render_mode=None``
(the default) nothing is rendered or recorded for rendering: each step tests the mode once.

Render modes: ``"ansi"`` (``render()`` returns the table as text, :mod:`uno_mk_env.render.text`),
``"rgb_array"`` (``render()`` returns a ``800 × 1280 × 3`` ``uint8`` image of the table,
:mod:`uno_mk_env.render.image`) and ``"human"`` (that image in a pygame window, updated after
every step). The two image modes need the ``render`` extra (Pillow, pygame).
"""

from __future__ import annotations

import math
import operator
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np

from ..errors import missing_env_extra

try:
    import gymnasium
    from pettingzoo import AECEnv
    from pettingzoo.utils.env import AECIterable, AECIterator
except ImportError as e:  # no env extra: one ImportError that names it
    raise missing_env_extra(e) from None

from ..engine import actions as A
from ..engine.game import Game, IllegalActionError
from ..engine.observation import (
    OBS_SIZE,
    STATE_SIZE,
    action_mask,
    encode,
    encode_state,
    observation_high,
    state_high,
)
from ..engine.rewards import REWARD_MODES, round_rewards
from ..engine.rules import Rules
from ..errors import UnoMkError
from ..render import text as R
from .screen import RENDER_MODES, Screen

__all__ = ["GuardedUnoMarioKartEnv", "IllegalActionWarning", "UnknownAgentError", "UnoMarioKartEnv",
           "action_id", "check_env_options", "check_render_seat", "check_reward_value", "env",
           "raw_env"]

DEFAULT_MAX_STEPS = 2000

_KEEP = A.KEEP
_ZERO_MASK = np.zeros(A.NUM_ACTIONS, dtype=np.int8)
_ZERO_MASK.flags.writeable = False  # shared by every seat that is not deciding
_HISTORY = 8  # decisions kept for the render's "last events"
#: Read-only masks by legal-id tuple, shared by every env of the process: a decision's mask is
#: one dict lookup (building one costs more than the rest of the step's bookkeeping).
#: numpy's integer scalar types (not ``np.bool_``): what a policy's ``argmax`` or a mask's
#: ``nonzero`` gives; ``int()`` of one is its id (a bad id is then refused like any int).
_NUMPY_INTEGERS = frozenset(t for t in set(np.sctypeDict.values())
                            if issubclass(t, np.integer) and not issubclass(t, np.timedelta64))
_MASKS: dict[tuple[int, ...], np.ndarray] = {}
_MASKS_MAX = 1 << 15


class IllegalActionWarning(UnoMkError, UserWarning):
    """Issued by ``env()`` when an illegal action ends the episode."""


class UnknownAgentError(UnoMkError, KeyError):
    """An agent name that is not one of the env's ``possible_agents``; the message names it and
    the valid ones (a ``KeyError``, as a plain dict lookup would raise)."""

    def __str__(self) -> str:  # KeyError would print the message in quotes
        return str(self.args[0]) if self.args else ""


def action_id(action: Any) -> int:
    """The action id ``action`` stands for: the one conversion of ``raw_env``, ``env()`` and the
    Gymnasium wrapper.

    Any integer is accepted (``int``, numpy integers, 0-d integer arrays): what ``Discrete(73)``
    samples and what a policy's ``argmax`` returns.

    Raises:
        TypeError: ``action`` is not an integer: a ``bool`` or ``np.bool_`` (``True`` is not
            action 1), a float (even ``1.0``), a string, ``None``, a sequence.
        ValueError: an integer outside ``Discrete(73)`` (ids 0-72).
    """
    cls = action.__class__
    a: int | None
    if cls is int:
        a = action
    else:
        a = None
        if cls is not bool:  # operator.index(True) is 1: a bool must not pass as PLAY(R1)
            try:  # numpy bools (np.True_, bool arrays) already raise here
                a = operator.index(action)
            except TypeError:
                pass
        if a is None:
            hint = " (None only steps a terminated or truncated agent)" if action is None else ""
            raise TypeError(
                f"action must be an int action id 0-{A.NUM_ACTIONS - 1}{hint}, got {action!r} "
                f"of type {type(action).__name__}"
            )
    if not 0 <= a < A.NUM_ACTIONS:
        raise _out_of_range(a)
    return a


def _out_of_range(a: int) -> ValueError:
    return ValueError(
        f"action {a} is out of the action space Discrete({A.NUM_ACTIONS}): ids are "
        f"0-{A.NUM_ACTIONS - 1}"
    )


def check_env_options(reward: str, max_steps: int | None, render_mode: str | None) -> None:
    """Validates the env-level options (rule options are validated by :class:`Rules`).

    Raises:
        ValueError: naming the option and the allowed values.
    """
    if reward not in REWARD_MODES:
        raise ValueError(f"reward={reward!r} is not allowed; allowed: {REWARD_MODES}")
    if max_steps is not None and (
        not isinstance(max_steps, int) or isinstance(max_steps, bool) or max_steps < 1
    ):
        raise ValueError(f"max_steps must be a positive int or None, got {max_steps!r}")
    if render_mode is not None and render_mode not in RENDER_MODES:
        raise ValueError(
            f"render_mode={render_mode!r} is not allowed; allowed: None, {RENDER_MODES}"
        )


def check_reward_value(name: str, value: Any) -> float:
    """``value`` as a finite ``float`` (a reward the env pays, e.g. ``illegal_reward``).

    Raises:
        ValueError: naming ``name`` when ``value`` is not a real number, or is NaN or infinite
            (a NaN reward poisons every return it is summed into).
    """
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise ValueError(f"{name} must be a finite number, got {type(value).__name__}")
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"{name} must be a finite number, got {number!r}")
    return number


def check_render_seat(render_seat: Any, num_players: int, extra: tuple[str, ...] = ()) -> None:
    """Validates ``render_seat``: ``None`` (a spectator), a seat ``0 … num_players - 1`` or one
    of ``extra`` (the Gymnasium wrapper's ``"learner"``).

    Raises:
        ValueError: naming the value and what is allowed.
    """
    if render_seat is None or render_seat in extra:
        return
    if (not isinstance(render_seat, int) or isinstance(render_seat, bool)
            or not 0 <= render_seat < num_players):
        allowed = ", ".join(["None", f"a seat 0-{num_players - 1}", *map(repr, extra)])
        raise ValueError(f"render_seat={render_seat!r} is not allowed; allowed: {allowed}")


class UnoMarioKartEnv(AECEnv[str, dict[str, np.ndarray], int]):
    """UNO Mario Kart as a PettingZoo AEC env (``raw_env``); spec: :mod:`.uno_mario_kart_v0`.

    Args:
        num_players: seats at the table (2-10); agents ``player_0 … player_{N-1}``.
        render_mode: ``None``, ``"ansi"`` (``render()`` returns the table as text),
            ``"rgb_array"`` (``render()`` returns an image, ``uint8`` of shape
            ``(800, 1280, 3)`` for every player count) or ``"human"`` (the image in a pygame
            window, updated after every step). The image modes need the ``render`` extra.
        reward: ``"win"`` or ``"points"`` (docs/api.md#rewards-and-episodes).
        max_steps: decisions per episode before every agent is truncated (``None``: no limit);
            a ``KEEP`` is not counted and a draw's ``play_drawn`` decision is not cut off (the
            draw looks the same to other seats whether its card was kept or could not be played,
            R4.2, and so does when the cap falls).
        render_seat: whose view is rendered: ``None`` (default) draws the spectator's image,
            every hand face up, and the text of the deciding seat's view (as before); a seat
            draws only what that seat may know (other hands as card backs) in both.
        **rule_options: any option of :data:`uno_mk_env.engine.rules.OPTIONS` (validated by
            :class:`~uno_mk_env.Rules`, which raises :class:`~uno_mk_env.RulesError`).
    """

    metadata: dict[str, Any] = {
        "name": "uno_mario_kart_v0",
        "render_modes": list(RENDER_MODES),
        "is_parallelizable": False,
        "render_fps": 2,
    }
    _illegal_reward: float | None = None  # None: raise the engine's IllegalActionError

    def __init__(
        self,
        num_players: int = 4,
        render_mode: str | None = None,
        reward: str = "win",
        max_steps: int | None = DEFAULT_MAX_STEPS,
        render_seat: int | None = None,
        **rule_options: Any,
    ) -> None:
        super().__init__()
        self.rules = Rules(num_players=num_players, **rule_options)
        check_env_options(reward, max_steps, render_mode)
        check_render_seat(render_seat, self.rules.num_players)
        self.render_mode = render_mode
        self.render_seat = render_seat
        self._screen = Screen(render_mode, self.metadata["render_fps"], "uno_mario_kart_v0.env()")
        self.reward_mode = reward
        self.max_steps = max_steps
        n = self.rules.num_players
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self._seat = {a: i for i, a in enumerate(self.possible_agents)}
        high = observation_high(self.rules)
        self.observation_spaces = {
            a: gymnasium.spaces.Dict({
                "observation": gymnasium.spaces.Box(0.0, high, (OBS_SIZE,), np.float32),
                "action_mask": gymnasium.spaces.Box(0, 1, (A.NUM_ACTIONS,), np.int8),
            })
            for a in self.possible_agents
        }
        self.action_spaces: dict[str, gymnasium.spaces.Discrete[np.int64]] = {
            a: gymnasium.spaces.Discrete(A.NUM_ACTIONS) for a in self.possible_agents
        }
        self.state_space = gymnasium.spaces.Box(
            0.0, state_high(self.rules), (STATE_SIZE,), np.float32
        )
        self._rng: np.random.Generator | None = None
        self._game: Game | None = None
        self._done = True  # until reset(): step() takes the slow path, which explains
        self._mask = _ZERO_MASK
        self._steps = 0
        self._dirty_rewards = False
        self._history = R.RecentDecisions(_HISTORY)
        self._updates = 0  # step()/reset() calls, for the guarded agent_iter's order check

    # ------------------------------------------------------------------ spaces / accessors
    def observation_space(self, agent: str) -> gymnasium.spaces.Dict:
        """``Dict(observation=Box(0, high, (OBS_SIZE,), float32), action_mask=Box(0, 1, (73,),
        int8))``, the same object for every call."""
        try:
            return self.observation_spaces[agent]
        except (KeyError, TypeError):
            raise self._unknown_agent(agent) from None

    def action_space(self, agent: str) -> gymnasium.spaces.Discrete[np.int64]:
        """``Discrete(73)`` (docs/api.md#actions-and-phases), the same object for every call."""
        try:
            return self.action_spaces[agent]
        except (KeyError, TypeError):
            raise self._unknown_agent(agent) from None

    @property
    def game(self) -> Game:
        """The engine of the current episode (hidden state included: not for acting agents)."""
        return self._require_game("game")

    @property
    def np_random(self) -> np.random.Generator:
        """The env's generator (seeded by ``reset(seed=...)``); it seeds each game's own one."""
        if self._rng is None:
            self._rng = np.random.default_rng()
        return self._rng

    def seat(self, agent: str) -> int:
        """The seat index of ``agent`` (``"player_3"`` -> 3).

        Raises:
            UnknownAgentError: (a ``KeyError``) ``agent`` is not one of ``possible_agents``.
        """
        try:
            return self._seat[agent]
        except (KeyError, TypeError):
            raise self._unknown_agent(agent) from None

    def _unknown_agent(self, agent: Any) -> UnknownAgentError:
        return UnknownAgentError(
            f"unknown agent {agent!r}; the agents of this {len(self.possible_agents)}-player env "
            f"are {', '.join(self.possible_agents)}"
        )

    def _require_game(self, what: str) -> Game:
        if self._game is None:
            raise RuntimeError(f"reset() needs to be called before {what}")
        return self._game

    # ------------------------------------------------------------------ episode
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Deals a new game. ``seed`` reseeds the env's generator, which seeds each game's own
        generator; without it the next game continues that sequence. ``options`` is unused."""
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self._game = Game(self.rules, seed=int(self.np_random.integers(2**63)))
        agents = self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(agents, 0.0)
        self.terminations = dict.fromkeys(agents, False)
        self.truncations = dict.fromkeys(agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {"action_mask": _ZERO_MASK} for a in agents}
        self.agent_selection = agents[0]
        self._skip_agent_selection = None
        self._steps = 0
        self._dirty_rewards = False
        self._done = False
        self._history.start(self._game)
        self._updates += 1
        self._select_decider()
        if self.render_mode == "human":
            self.render()

    def _select_decider(self) -> None:
        """Points ``agent_selection`` and its info's mask at the engine's decider."""
        game = self._game
        assert game is not None  # reset() made it
        agent = self.possible_agents[game.current_player]
        prev = self.agent_selection
        if prev != agent:
            self.infos[prev]["action_mask"] = _ZERO_MASK
            self.agent_selection = agent
        legal = game.legal_action_ids()
        mask = _MASKS.get(legal)
        self._mask = self.infos[agent]["action_mask"] = (
            mask if mask is not None else self._new_mask(legal)
        )

    @staticmethod
    def _new_mask(legal: tuple[int, ...]) -> np.ndarray:
        """Builds, caches (read-only) and returns the mask of ``legal``; callers look in
        ``_MASKS`` first."""
        if len(_MASKS) >= _MASKS_MAX:
            _MASKS.clear()
        mask = _MASKS[legal] = action_mask(legal)
        mask.flags.writeable = False
        return mask

    def step(self, action: Any) -> None:
        """Applies the decider's action (docs/api.md#actions-and-phases); ``None`` for a finished
        agent.

        Raises:
            TypeError: ``action`` is not an integer (a bool included), see :func:`action_id`.
            ValueError: an integer outside ``Discrete(73)``.
            IllegalActionError: (``raw_env`` only) an id that is not legal now; ``env()`` ends
                the episode instead.

        When one of these is raised, nothing has changed.
        """
        self._updates += 1
        if self._done:
            self._finished_step(action)
            return
        cls = action.__class__
        if cls is not int:  # ints go straight to the engine (the hot path), numpy ints nearly
            action = int(action) if cls in _NUMPY_INTEGERS else action_id(action)
        game = self._game
        assert game is not None  # not done: reset() made it
        render = self.render_mode
        if render is not None:
            self._history.before(game)
        try:
            game.step(action)
        except IllegalActionError:
            if not 0 <= action < A.NUM_ACTIONS:  # not an id at all: a ValueError, not a move
                raise _out_of_range(action) from None
            if self._illegal_reward is None:
                raise
            self._illegal(action)
            return
        if render is not None:
            self._history.after(action)
        agent = self.agent_selection
        self._cumulative_rewards[agent] = 0.0
        if self._dirty_rewards:
            self._clear_rewards()
            self._dirty_rewards = False
        # public decisions: a KEEP joins the draw before it (other seats cannot see it, R4.2),
        # so the step cap and the rendered counter are the same in both hidden worlds
        steps = self._steps = self._steps + (action != _KEEP)
        if game.round_over:
            self._round_over()
            if game.game_over:
                self._end(terminated=True)
                return
        if game.at_step_cap(self.max_steps, steps):
            self._end(terminated=False)
            return
        # _select_decider(), inlined: this is the hot path
        infos = self.infos
        decider = self.possible_agents[game.current_player]
        if decider != agent:
            infos[agent]["action_mask"] = _ZERO_MASK
            self.agent_selection = decider
        legal = game.legal_action_ids()
        mask = _MASKS.get(legal)
        if mask is None:
            mask = self._new_mask(legal)
        self._mask = infos[decider]["action_mask"] = mask
        if render == "human":
            self.render()

    def _round_over(self) -> None:
        values = round_rewards(self._game, self.reward_mode)
        if any(values):
            rewards = self.rewards
            for agent, value in zip(self.possible_agents, values):
                rewards[agent] = value
            self._accumulate_rewards()
            self._dirty_rewards = True

    def _end(self, terminated: bool) -> None:
        """Every agent is terminated (game over) or truncated (``max_steps``)."""
        self._done = True
        self._mask = _ZERO_MASK
        flags = self.terminations if terminated else self.truncations
        for agent in self.agents:
            flags[agent] = True
            self.infos[agent]["action_mask"] = _ZERO_MASK
        self._deads_step_first()
        if self.render_mode == "human":
            self.render()

    def _illegal(self, a: int) -> None:
        """``env()``: the legal-looking id ``a`` (0-72) is illegal now; the episode ends."""
        agent = self.agent_selection
        game, reward = self._game, self._illegal_reward
        assert game is not None and reward is not None  # step() came here for env()
        legal = game.legal_action_ids()
        warnings.warn(
            f"illegal action {a} ({A.ACTION_NAMES[a]}) by {agent} in phase "
            f"'{game.phase_name}' (legal: {[A.ACTION_NAMES[x] for x in legal]}); the "
            f"episode ends with reward {reward} for {agent}",
            IllegalActionWarning,
            stacklevel=3,
        )
        self._cumulative_rewards[agent] = 0.0
        self._clear_rewards()
        self.rewards[agent] = float(reward)
        self._accumulate_rewards()
        self._dirty_rewards = True
        self.infos[agent]["illegal_action"] = True
        self._end(terminated=True)

    def _finished_step(self, action: Any) -> None:
        """Removes a terminated/truncated agent (PettingZoo's dead step); explains misuse."""
        self._require_game("step()")
        if not self.agents:
            warnings.warn(
                "step() called after every agent is terminated or truncated; call reset()",
                stacklevel=3,
            )
            return
        if action is not None:
            raise ValueError(
                f"{self.agent_selection} is terminated or truncated: the only valid action is "
                f"None, got {action!r}"
            )
        self._was_dead_step(None)

    # ------------------------------------------------------------------ observations
    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """``{"observation": float32[OBS_SIZE], "action_mask": int8[73]}`` of ``agent``
        (docs/api.md#observation). The mask is all zero unless ``agent`` decides now. It is a
        read-only array shared with ``infos[agent]["action_mask"]`` (and with other steps that
        have the same legal actions): ``mask.copy()`` before writing into it.

        Raises:
            UnknownAgentError: (a ``KeyError``) ``agent`` is not one of ``possible_agents``.
        """
        game = self._game
        if game is None:
            raise RuntimeError("reset() needs to be called before observe()")
        try:
            seat = self._seat[agent]
        except (KeyError, TypeError):
            raise self._unknown_agent(agent) from None
        return {
            "observation": encode(game.view(seat)),
            "action_mask": self._mask if seat == game.current_player else _ZERO_MASK,
        }

    def state(self) -> np.ndarray:
        """The global perfect-information vector (``state_space``) for centralised critics."""
        return encode_state(self._require_game("state()"))

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """``(observation, reward, terminated, truncated, info)`` of ``agent_selection`` (see
        PettingZoo's ``AECEnv.last``).

        Raises:
            RuntimeError: before ``reset()``, as ``step()`` and ``observe()`` do.
        """
        self._require_game("last()")
        last: tuple[Any, float, bool, bool, dict[str, Any]] = super().last(observe)
        return last

    def agent_iter(self, max_iter: int = 2**63) -> AECIterable:
        """Yields ``agent_selection`` until every agent is done (call ``step()`` each time)."""
        self._require_game("agent_iter()")
        return super().agent_iter(max_iter)

    # ------------------------------------------------------------------ render
    def render(self) -> str | np.ndarray | None:
        """The table: ``"ansi"`` returns it as text (from ``render_seat``, else from
        ``agent_selection``'s seat), ``"rgb_array"`` as a ``(800, 1280, 3)`` ``uint8`` image
        (``render_seat``'s view, else the spectator's), ``"human"`` shows that image in a window
        and returns ``None``; without a render mode a warning is given."""
        if self.render_mode is None:
            self._screen.no_mode()
            return None
        game = self._require_game("render()")
        seat = self.render_seat
        text_seat = seat if seat is not None else (
            self._seat[self.agent_selection] if self.agents else max(game.current_player, 0))
        return self._screen.frame(game, text_seat, seat, self.possible_agents, self._history,
                                  self._steps, self._done)

    def close(self) -> None:
        """Closes the ``"human"`` window, if one is open."""
        self._screen.close()


class GuardedUnoMarioKartEnv(UnoMarioKartEnv):
    """``uno_mario_kart_v0.env()``: an illegal action ends the episode (−1 for the mover, 0 for
    the others, an :class:`IllegalActionWarning`, ``infos[mover]["illegal_action"] = True``);
    an action that is not an id of ``Discrete(73)`` raises ``TypeError`` (not an integer: a bool,
    a float, a string) or ``ValueError`` (out of range) and changes nothing, as in ``raw_env``;
    calls before ``reset()`` raise ``RuntimeError``; ``agent_iter`` loops must call ``step()``.

    Args:
        illegal_reward: the mover's reward for an illegal action (default ``-1.0``; a finite
            number: NaN or an infinity raises ``ValueError`` naming it).
        Other arguments as :class:`UnoMarioKartEnv`.
    """

    def __init__(self, *args: Any, illegal_reward: float = -1.0, **kwargs: Any) -> None:
        reward = check_reward_value("illegal_reward", illegal_reward)
        super().__init__(*args, **kwargs)
        self._illegal_reward = reward

    def agent_iter(self, max_iter: int = 2**63) -> AECIterable:
        self._require_game("agent_iter()")
        return _CheckedIterable(self, max_iter)


class _CheckedIterable(AECIterable):
    def __iter__(self) -> Iterator[str]:
        return _CheckedIterator(self.env, self.max_iter)


class _CheckedIterator(AECIterator):
    """Like PettingZoo's order-enforcing iterator: every yielded agent must be stepped."""

    def __init__(self, env: UnoMarioKartEnv, max_iter: int) -> None:
        super().__init__(env, max_iter)
        self._last = -1

    def __next__(self) -> str:
        env = self.env
        mark = env._updates
        if mark == self._last:
            raise RuntimeError("call step() (or reset()) in every iteration of agent_iter()")
        agent: str = super().__next__()
        self._last = mark
        return agent


#: The unguarded env class: illegal actions raise :class:`~uno_mk_env.IllegalActionError`.
raw_env = UnoMarioKartEnv


def env(
    num_players: int = 4, render_mode: str | None = None, **kwargs: Any
) -> GuardedUnoMarioKartEnv:
    """The env with PettingZoo's usual guarantees (see :class:`GuardedUnoMarioKartEnv`)."""
    return GuardedUnoMarioKartEnv(num_players=num_players, render_mode=render_mode, **kwargs)
