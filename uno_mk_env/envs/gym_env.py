"""A single-agent Gymnasium env: one learning seat against fixed opponents.

Description
    The learner plays one seat of an UNO Mario Kart table; the other seats are played by the
    given opponents inside :meth:`~UnoMarioKartGymEnv.step`, which returns at the learner's next
    decision (or at the end of the episode). The engine is driven directly (no AEC env in
    between). Observation and reward of every transition are the learner's own.

Action Space
    ``Discrete(73)`` (docs/api.md#actions-and-phases).
    :meth:`~UnoMarioKartGymEnv.action_masks` gives the legal ones for sb3-contrib's
    ``MaskablePPO``; ``info["action_mask"]`` holds the same as ``int8``. Any integer type is an id
    (numpy integers, 0-d arrays); anything else (a bool, a float, a string) raises
    ``TypeError``, an integer outside 0-72 ``ValueError``, as in the AEC envs.

Observation Space
    ``Box(0, high, (437,), float32)`` (437 = ``OBS_SIZE``):
    :func:`uno_mk_env.engine.observation.encode`
    of the learner's ``PlayerView`` (:func:`uno_mk_env.engine.observation.layout_markdown`).

Rewards
    As the AEC env (``reward="win"`` or ``"points"``, docs/api.md#rewards-and-episodes), for the
    learner's seat only, summed over everything that happened since its previous decision
    (opponents' turns included). An illegal action ends the episode with
    ``illegal_action_penalty`` (default −1) and ``info["illegal_action"] = True``.

Info
    ``info`` holds ``action_mask``, ``learner_seat``, and, when the game is over, ``winner`` and
    ``scores`` (the end-of-game scoring every seat sees, R10.2); ``illegal_action`` after an
    illegal action. Each is a function of what the learner may know: two games that differ only
    in cards it cannot see give it the same observations, masks, rewards and infos, truncation
    included (the hidden-twin tests).

Episode End
    ``terminated`` when the game is over (or after an illegal action); ``truncated`` after
    ``max_steps`` decisions of all seats together (default 2000; a ``KEEP`` is not counted and a
    draw's ``play_drawn`` decision is not cut off: the draw looks the same whether its card was
    kept or could not be played, R4.2, and so does when the cap falls). A deal in which
    the game ends before the learner's first decision is replaced by a new one inside
    ``reset()``.

Arguments
    ``num_players`` (2-10, default 2), ``opponents`` (see below), ``learner_seat`` (``None``:
    drawn at random each episode, or a fixed seat: an ``int``, not a ``bool``), ``reward``,
    ``illegal_action_penalty``, ``max_steps``, ``render_mode``, ``render_seat`` (see
    Rendering) and every rule option of :data:`uno_mk_env.engine.rules.OPTIONS`.

    ``opponents`` is ``None`` (uniformly random legal actions from the env's own seeded
    generator), one policy for every opponent seat, or a sequence of ``num_players - 1``
    policies, ``opponents[i]`` sitting ``i + 1`` seats clockwise from the learner. A policy is an
    agent (anything with ``act(observation, action_mask, view)``, e.g.
    :class:`uno_mk_env.envs.agent.Agent`; the observation is skipped when its
    ``needs_observation`` is ``False``) or a callable ``(observation, action_mask) -> action``.
    Agents are ``reset()`` at every episode, with a seed drawn from the env's generator when
    ``reset(seed=...)`` is given. A seed is ``None`` or an integer ``0 <= seed < 2**64``
    (:func:`check_seed`: Gymnasium's rule, bounded, a ``bool`` refused).

Rendering
    ``render_mode``: ``None``, ``"ansi"`` (``render()`` returns the table as text),
    ``"rgb_array"`` (``render()`` returns an ``(800, 1280, 3)`` ``uint8`` image of the table) or
    ``"human"`` (that image in a pygame window after every step); the image modes need the
    ``render`` extra. ``render_seat``: ``None`` (default: the image is the spectator's, every hand
    face up; the text is the learner's view), ``"learner"`` (the learner's view in both, whatever
    its seat this episode) or a seat (that seat's view in both).

Version History
    v0: initial release. Package 0.4.0: ``render_mode="rgb_array"``;
    ``"human"`` shows the image in a window instead of printing the text (use ``"ansi"`` for
    text); ``render_seat``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import missing_env_extra

try:
    import gymnasium
except ImportError as e:  # no env extra: one ImportError that names it
    raise missing_env_extra(e) from None

from ..engine import actions as A
from ..engine.game import Game
from ..engine.observation import OBS_SIZE, action_mask, encode, observation_high
from ..engine.rules import Rules
from ..errors import quote
from ..render import text as R
from . import learner
from .aec import DEFAULT_MAX_STEPS, action_id, check_env_options, check_render_seat
from .learner import LearnerSeat, Policy, ask_opponent
from .screen import RENDER_MODES, Screen

__all__ = ["MAX_SEED", "UnoMarioKartGymEnv", "ask_opponent", "check_seed"]

#: Seeds are integers ``0 <= seed < MAX_SEED`` (or ``None``): Gymnasium's rule (a non-negative
#: integer), with a bound, and without its accident of taking ``True`` as seed 1.
MAX_SEED = 2**64


class UnoMarioKartGymEnv(gymnasium.Env[np.ndarray, np.int64]):
    """One learning seat against ``opponents``; see the module docstring for the full spec.
    The episode runs on a :class:`~uno_mk_env.envs.learner.LearnerSeat`, as each table of the
    vector env does."""

    metadata: dict[str, Any] = {"render_modes": list(RENDER_MODES), "render_fps": 2}

    def __init__(
        self,
        num_players: int = 2,
        opponents: Policy | Sequence[Policy] | None = None,
        learner_seat: int | None = None,
        reward: str = "win",
        illegal_action_penalty: float = -1.0,
        max_steps: int | None = DEFAULT_MAX_STEPS,
        render_mode: str | None = None,
        render_seat: int | str | None = None,
        **rule_options: Any,
    ) -> None:
        self.rules = Rules(num_players=num_players, **rule_options)
        n = self.rules.num_players
        check_env_options(reward, max_steps, render_mode)
        check_render_seat(render_seat, n, extra=("learner",))
        self._history = R.RecentDecisions()
        self._learner = LearnerSeat(
            self.rules, opponents, learner_seat, reward, illegal_action_penalty, max_steps,
            history=None if render_mode is None else self._history)
        self.render_mode = render_mode
        self.render_seat = render_seat
        self._screen = Screen(render_mode, self.metadata["render_fps"], "UnoMarioKartGymEnv")
        self.observation_space = gymnasium.spaces.Box(
            0.0, observation_high(self.rules), (OBS_SIZE,), np.float32
        )
        self.action_space = gymnasium.spaces.Discrete(A.NUM_ACTIONS)
        self._names = [f"player_{i}" for i in range(n)]

    # ------------------------------------------------------------------ properties
    @property
    def game(self) -> Game:
        """The engine of the current episode (hidden state included)."""
        return self._learner.game

    @property
    def seat(self) -> int:
        """The learner's seat in the current episode."""
        return self._learner.seat

    @property
    def _game(self) -> Game | None:
        """The current episode's engine, or ``None`` before the first reset (the hidden-twin
        tests swap in a twin game here, as at a vector env's table)."""
        return self._learner._game

    @_game.setter
    def _game(self, game: Game | None) -> None:
        self._learner._game = game

    @property
    def opponents(self) -> list[Policy | None]:
        """The opponents' policies, ``[i]`` sitting ``i + 1`` seats clockwise from the learner
        (``None``: uniformly random)."""
        return self._learner.opponents

    @property
    def learner_seat(self) -> int | None:
        """The fixed learner seat, or ``None`` (drawn each episode)."""
        return self._learner.learner_seat

    @property
    def reward_mode(self) -> str:
        """``"win"`` or ``"points"``."""
        return self._learner.reward_mode

    @property
    def illegal_action_penalty(self) -> float:
        """The reward of an illegal action."""
        return self._learner.illegal_action_penalty

    @property
    def max_steps(self) -> int | None:
        """The step cap (``None``: none)."""
        return self._learner.max_steps

    # ------------------------------------------------------------------ gymnasium API
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Deals a new game (``options`` is unused) and plays the opponents up to the learner's
        first decision.

        Raises:
            ValueError: ``seed`` is not ``None`` nor an integer 0 <= seed < 2**64
                (:func:`check_seed`); nothing is changed.
        """
        seed = check_seed(seed)
        super().reset(seed=seed)
        self._learner.start(seed, self.np_random)
        learner.deal((self._learner,))
        if self.render_mode == "human":
            self.render()
        game = self.game
        return encode(game.view(self.seat)), self._info(game)

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Plays the learner's ``action`` and the opponents up to its next decision.

        Raises:
            TypeError: ``action`` is not an integer (a bool included: ``True`` is not action 1),
                as in the AEC envs (:func:`uno_mk_env.envs.aec.action_id`); nothing is changed.
            ValueError: an integer outside ``Discrete(73)``; nothing is changed.
        """
        seat = self._learner
        if seat.over:
            raise RuntimeError("the episode is over; call reset()" if seat.dealt else
                               "reset() needs to be called before step()")
        seat.step_alone(action_id(action))
        game = seat.game
        observation = encode(game.view(seat.seat))
        info = self._info(game)
        if seat.illegal:
            info["illegal_action"] = True
            return observation, seat.reward, True, False, info
        if self.render_mode == "human":
            self.render()
        terminated = game.game_over
        return observation, seat.reward, terminated, seat.over and not terminated, info

    def action_masks(self) -> np.ndarray:
        """Bool mask of the learner's legal actions (all ``False`` once the episode is over)."""
        mask = np.zeros(A.NUM_ACTIONS, dtype=bool)
        seat = self._learner
        if not seat.over:  # also before the first reset
            mask[list(seat.game.legal_action_ids())] = True
        return mask

    # gymnasium types Env.render with a TypeVar bound nowhere (RenderFrame): no concrete return
    # type can override it
    def render(self) -> str | np.ndarray | None:  # type: ignore[override]
        """The table (see Rendering in the module docstring): text (``"ansi"``, the learner's
        view unless ``render_seat`` is a seat), an image (``"rgb_array"``) or the image in a
        window (``"human"``, returns ``None``)."""
        if self.render_mode is None:
            self._screen.no_mode()
            return None
        learner_seat = self._learner
        render_seat = self.render_seat  # a seat, None or "learner" (check_render_seat)
        seat = learner_seat.seat if isinstance(render_seat, str) else render_seat
        return self._screen.frame(self.game, learner_seat.seat if seat is None else seat, seat,
                                  self._names, self._history, learner_seat.steps,
                                  learner_seat.over)

    def close(self) -> None:
        """Closes the ``"human"`` window, if one is open."""
        self._screen.close()

    # ------------------------------------------------------------------ internals
    def _info(self, game: Game) -> dict[str, Any]:
        """The learner's info in ``game`` (the current episode's)."""
        seat = self._learner
        if seat.over:
            mask = np.zeros(A.NUM_ACTIONS, dtype=np.int8)
        else:
            mask = action_mask(game.legal_action_ids())
        info: dict[str, Any] = {"action_mask": mask, "learner_seat": seat.seat}
        if game.game_over:
            info["winner"] = game.winner
            info["scores"] = list(game.scores)
        return info


def check_seed(seed: Any, name: str = "seed") -> int | None:
    """``seed`` as an ``int`` (or ``None``): an integer (``int`` or a numpy integer) with
    ``0 <= seed < 2**64`` (:data:`MAX_SEED`).

    Raises:
        ValueError: naming ``name``, for anything else: a bool (``True`` is not seed 1), a float
            (even ``1.0``), a string (``"1234"`` is not seed 1234), a negative or larger integer.
    """
    if seed is None:
        return None
    if isinstance(seed, bool | np.bool_) or not isinstance(seed, int | np.integer):
        raise ValueError(f"{name} must be None or an int 0 <= seed < 2**64, got "
                         f"{quote(seed)} of type {type(seed).__name__}")
    if not 0 <= seed < MAX_SEED:
        raise ValueError(f"{name} must be None or an int 0 <= seed < 2**64, got {quote(seed)}")
    return int(seed)
