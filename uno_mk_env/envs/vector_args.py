"""The arguments both vector envs (:mod:`.vector`, :mod:`.self_play`) take, checked the same way
before any table changes: ``num_envs``, seeds, actions, the autoreset mode and a reset mask; and
the name of their episode statistics in ``infos``."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode

from ..engine import actions as A
from ..errors import quote
from .gym_env import check_seed

__all__ = ["MAX_ENVS", "STATS_KEY", "check_autoreset_mode", "check_actions", "check_num_envs",
           "reset_mask", "reset_seeds"]

NUM_ACTIONS = A.NUM_ACTIONS
#: The most tables one vector env holds (a typo such as ``10**8`` is refused, not built).
MAX_ENVS = 4096
#: The key of the episode statistics in ``infos`` (Gymnasium's wrappers own ``"episode"``).
STATS_KEY = "uno_episode"




def check_num_envs(num_envs: Any) -> int:
    """``num_envs`` as an ``int`` if it is an integer (``int`` or a numpy integer, as seeds
    are) from 1 to :data:`MAX_ENVS`.

    Raises:
        ValueError: anything else (a bool, a float, 0, ``10**8``), naming the value.
    """
    if not isinstance(num_envs, int | np.integer) or isinstance(num_envs, bool) or not (
            1 <= num_envs <= MAX_ENVS):
        raise ValueError(f"num_envs must be an int from 1 to {MAX_ENVS}, got {quote(num_envs)}")
    return int(num_envs)


def reset_seeds(seed: Any, n: int) -> list[int | None]:
    """One seed per table (``seed + i`` for an integer), every one checked before any is used.

    Raises:
        ValueError: a seed that :func:`uno_mk_env.envs.gym_env.check_seed` refuses, or a sequence
            whose length is not ``n``.
    """
    if seed is None:
        return [None] * n
    if isinstance(seed, str | bytes | bool | np.bool_) or not hasattr(seed, "__len__"):
        first = check_seed(seed)  # a str/bytes/bool/float is refused here, with its type
        assert first is not None
        check_seed(first + n - 1, f"seed + {n - 1} (the last table's seed)")
        return [first + i for i in range(n)]
    seeds = list(seed)
    if len(seeds) != n:
        raise ValueError(f"seed must be None, an int or {n} seeds (one per table), got "
                         f"{len(seeds)} seeds")
    return [check_seed(s, f"seed[{i}]") for i, s in enumerate(seeds)]


def check_actions(actions: Any, n: int) -> np.ndarray:
    """``actions`` as ``n`` action ids, a new ``int64`` array: an integer array of shape
    ``(n,)`` of ids 0-72 (the one check of the vector envs and of their stable-baselines3
    adapter).

    Raises:
        TypeError: another shape, or not integers (floats, bools, strings, objects).
        ValueError: an id outside 0-72.
    """
    a = np.asarray(actions)
    if a.shape != (n,) or a.dtype.kind not in "iu":
        raise TypeError(f"actions must be an integer array of shape ({n},), got "
                        f"{a.dtype} of shape {a.shape}")
    if n and (a.min() < 0 or a.max() >= NUM_ACTIONS):
        raise ValueError(f"actions must be ids 0-{NUM_ACTIONS - 1}, got values "
                         f"{a.min()}..{a.max()}")
    return a.astype(np.int64)


def check_autoreset_mode(mode: Any) -> AutoresetMode:
    if isinstance(mode, AutoresetMode):
        return mode
    values = [m.value for m in AutoresetMode]
    if isinstance(mode, str) and mode in values:
        return AutoresetMode(mode)
    raise ValueError(f"autoreset_mode must be an AutoresetMode or one of {values}, got "
                     f"{quote(mode)}")


def reset_mask(options: Any, n: int) -> np.ndarray | None:
    """The tables ``reset(options=...)`` deals (``None``: all)."""
    if options is None:
        return None
    if not isinstance(options, dict):
        raise TypeError(f"options must be None or a dict, got {type(options).__name__}")
    mask = options.get("reset_mask")
    if mask is None:
        return None
    if (not isinstance(mask, np.ndarray) or mask.dtype != np.bool_ or mask.shape != (n,)
            or not mask.any()):
        raise ValueError(f"options['reset_mask'] must be a bool array of shape ({n},) with at "
                         f"least one True, got {quote(mask)}")
    return mask
