"""stable-baselines3's ``VecEnv`` over the batched vector env (:class:`SB3VectorEnv`): the
training tables of :func:`uno_mk_env.training.vector_envs.make_vector_training_env` stepped in
one process by sb3-contrib's ``MaskablePPO`` (``env_method("action_masks")``), with
``env_method("add_snapshot", path, seed)`` for the self-play callback. Imports
stable-baselines3 (the ``train`` extra)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from stable_baselines3.common.vec_env import VecEnv

from uno_mk_env.envs.gym_env import check_seed
from uno_mk_env.envs.vector import STATS_KEY, UnoMarioKartVectorEnv, check_actions

from .vector_envs import VectorLeague

__all__ = ["SB3VectorEnv"]


class SB3VectorEnv(VecEnv):
    """stable-baselines3's ``VecEnv`` over an :class:`~uno_mk_env.envs.vector.UnoMarioKartVectorEnv`
    (in one process): ``reset()`` seeds table ``i`` with ``seed + i`` after ``seed(seed)``;
    ``step_wait`` gives SB3's ``dones`` and per-env infos (``terminal_observation``,
    ``TimeLimit.truncated``, and Monitor's ``episode`` ``{"r", "l"}`` at an episode's end, from
    the vector env's ``uno_episode``); ``step_async`` refuses what the vector env refuses (a
    float, bool or string action: ``TypeError``, an id outside 0-72: ``ValueError``);
    ``env_method("action_masks")`` the masks for ``MaskablePPO`` and ``env_method(
    "add_snapshot", path, seed)`` adds a snapshot to ``league`` (if given)."""

    def __init__(self, venv: UnoMarioKartVectorEnv, league: VectorLeague | None = None) -> None:
        self.venv = venv  # first: VecEnv's __init__ reads render_mode through get_attr
        self.league = league
        super().__init__(venv.num_envs, venv.single_observation_space,
                         venv.single_action_space)
        self._actions: np.ndarray | None = None

    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        """SB3's ``seed(seed)`` (table ``i`` then gets ``seed + i`` at the next ``reset()``),
        after checking ``seed`` as the vector env does (:func:`~uno_mk_env.envs.gym_env.
        check_seed`: ``None`` or an int in [0, 2**64); a bool, float or string is refused)."""
        return super().seed(check_seed(seed))

    def reset(self) -> np.ndarray:
        seed = self._seeds[0] if self._seeds and self._seeds[0] is not None else None
        obs, _ = self.venv.reset(seed=seed)
        self._reset_seeds()
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        """Takes ``actions`` as the vector env does (:func:`uno_mk_env.envs.vector.check_actions`):
        ``num_envs`` integer ids; floats, bools and strings are refused, never cast."""
        self._actions = np.asarray(check_actions(actions, self.num_envs), np.int64)

    def step_wait(self) -> Any:
        obs, rewards, terms, truncs, info = self.venv.step(self._actions)
        dones = terms | truncs
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        for i in np.flatnonzero(dones):
            infos[i] = {"terminal_observation": info["final_obs"][i],
                        "TimeLimit.truncated": bool(truncs[i] and not terms[i]),
                        "episode": {"r": float(info[STATS_KEY]["r"][i]),
                                    "l": int(info[STATS_KEY]["l"][i])}}
        return obs, rewards.astype(np.float32), dones, infos

    def close(self) -> None:
        pass

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        return [getattr(self.venv, attr_name)] * len(self._indices(indices))

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        setattr(self.venv, attr_name, value)

    def env_method(self, method_name: str, *method_args: Any, indices: Any = None,
                   **method_kwargs: Any) -> list[Any]:
        idx = self._indices(indices)
        if method_name == "action_masks":
            masks = self.venv.action_masks()
            return [masks[i] for i in idx]
        if method_name == "add_snapshot" and self.league is not None:
            size = self.league.add(*method_args, **method_kwargs)
            return [size] * len(idx)
        raise AttributeError(f"SB3VectorEnv.env_method: no method {method_name!r} (only "
                             "action_masks and add_snapshot)")

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        return [False] * len(self._indices(indices))

    def _indices(self, indices: Any) -> Sequence[int]:
        if indices is None:
            return range(self.num_envs)
        return [indices] if isinstance(indices, int) else list(indices)

