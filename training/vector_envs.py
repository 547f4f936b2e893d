"""The training tables as one batched vector env (:class:`uno_mk_env.envs.vector.
UnoMarioKartVectorEnv`), and its adapter for stable-baselines3.

:func:`make_vector_training_env` builds what :func:`uno_mk_env.training.envs.make_training_env`
builds for one env, for ``num_envs`` tables in one process: per table and opponent seat an
:class:`BatchedOpponentPool` drawing, every episode, one of ``--opponents`` or (with
``--self-play-prob``) a snapshot of the learner. A snapshot file is read once
(:class:`VectorLeague`); every table plays its own copy of the agent (its own random stream)
sharing the one numpy actor, so the vector env decides all tables waiting on a snapshot in one
forward pass.

:class:`SB3VectorEnv` presents the vector env as stable-baselines3's ``VecEnv`` (with
``env_method("action_masks")`` for sb3-contrib's ``MaskablePPO`` and
``env_method("add_snapshot", path, seed)`` for the self-play callback).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import numpy as np

from uno_mk_env.engine.rules import PRESETS
from uno_mk_env.engine.seeding import derive_seed
from uno_mk_env.envs.vector import STATS_KEY, UnoMarioKartVectorEnv, check_actions

from .opponents import OpponentPool

__all__ = ["BatchedOpponentPool", "SB3VectorEnv", "VectorLeague",
           "make_vector_training_env"]


class BatchedOpponentPool(OpponentPool):
    """An :class:`~uno_mk_env.training.opponents.OpponentPool` that lets the vector env batch
    its decisions when the agent it plays this episode does
    (:class:`uno_mk_env.envs.vector.BatchedAgent`)."""

    def batched_policy(self) -> Any:
        method = getattr(self.current, "batched_policy", None)
        return None if method is None else method()

    def choose(self, logits: np.ndarray, action_mask: np.ndarray) -> int:
        return int(self.current.choose(logits, action_mask))  # type: ignore[attr-defined]


class VectorLeague:
    """The self-play league of every table: one list of snapshot agents per table (the
    ``snapshots`` of its pools), each snapshot read once and copied per table (the copies
    share its actor, each keeps its own generator), the newest ``max_snapshots`` kept."""

    def __init__(self, num_envs: int, max_snapshots: int = 5,
                 deterministic: bool = False) -> None:
        self.tables: list[list[Any]] = [[] for _ in range(num_envs)]
        self.max_snapshots = max_snapshots
        self.deterministic = deterministic

    def add(self, path: str, seed: int) -> int:
        """Adds the policy file ``path`` (``.zip`` or ``.npz``) to every table's league;
        returns the league's size."""
        from uno_mk_env.agents.ppo import PPOAgent

        agent = PPOAgent(path, seed=seed, deterministic=self.deterministic)
        for league in self.tables:
            league.append(copy.copy(agent))
            del league[:-self.max_snapshots]
        return len(self.tables[0])


def check_vector_args(args: Any) -> None:
    """Refuses training arguments the vector env does not implement yet (one line).

    Raises:
        TrainingError: several table sizes, another rules preset, a place reward or the
            asymmetric critic's state.
    """
    from .args import TrainingError

    unsupported = [(args.table_sizes not in ("", str(args.num_players)), "--table-sizes"),
                   (args.rule_presets not in ("", "default"), "--rule-presets"),
                   (args.reward not in ("win", "points"), f"--reward {args.reward}"),
                   (bool(args.critic_state), "--critic-state")]
    named = [name for bad, name in unsupported if bad]
    if named:
        raise TrainingError(f"{', '.join(named)}: not supported by the vector env yet (one "
                            "table size, the default rules, reward win or points, no critic "
                            "state); use the sb3 backend")


def make_vector_training_env(args: Any, num_envs: int, first: int = 0
                             ) -> tuple[UnoMarioKartVectorEnv, VectorLeague]:
    """``num_envs`` training tables of ``args`` (:class:`uno_mk_env.training.train_ppo.Args`
    fields: ``num_players``, ``opponents``, ``opponent_weights``, ``self_play_prob``,
    ``max_snapshots``, ``snapshot_deterministic``, ``reward``, ``max_steps``, ``seed``) and
    their league. Table ``i``'s seat ``s`` pool is seeded ``derive_seed(seed, first + i, s)``
    (the pools of env rank ``i`` in the sb3 backend; ``first``: the index of the first table
    when the tables are split over processes).

    Raises:
        TrainingError: see :func:`check_vector_args`.
    """
    from .args import specs

    check_vector_args(args)
    opponents = specs(args.opponents)
    weights = [float(x) for x in args.opponent_weights.split(",") if x.strip()]
    league = VectorLeague(num_envs, args.max_snapshots, args.snapshot_deterministic)
    n = args.num_players

    def pools(i: int) -> list[BatchedOpponentPool]:
        return [BatchedOpponentPool(opponents, weights, args.self_play_prob, league.tables[i],
                                    derive_seed(args.seed, first + i, seat))
                for seat in range(n - 1)]

    venv = UnoMarioKartVectorEnv(num_envs, n, opponents=pools, reward=args.reward,
                                 max_steps=args.max_steps, **PRESETS["default"])
    return venv, league


def _vec_env_base() -> type:
    from stable_baselines3.common.vec_env import VecEnv

    return VecEnv


class SB3VectorEnv(_vec_env_base()):  # type: ignore[misc]
    """stable-baselines3's ``VecEnv`` over an :class:`~uno_mk_env.envs.vector.UnoMarioKartVectorEnv`
    (in one process): ``reset()`` seeds table ``i`` with ``seed + i`` after ``seed(seed)``;
    ``step_wait`` gives SB3's ``dones`` and per-env infos (``terminal_observation``,
    ``TimeLimit.truncated``, and Monitor's ``episode`` ``{"r", "l"}`` at an episode's end, from
    the vector env's ``uno_episode``); ``step_async`` refuses what the vector env refuses (a
    float, bool or string action: ``TypeError``, an id outside 0-72: ``ValueError``);
    ``env_method("action_masks")`` the masks for ``MaskablePPO`` and ``env_method(
    "add_snapshot", path, seed)`` adds a snapshot to ``league`` (if given)."""

    def __init__(self, venv: UnoMarioKartVectorEnv, league: VectorLeague | None = None) -> None:
        super().__init__(venv.num_envs, venv.single_observation_space,
                         venv.single_action_space)
        self.venv = venv
        self.league = league
        self._actions: np.ndarray | None = None

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

