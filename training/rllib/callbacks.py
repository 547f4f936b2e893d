"""The mask check of every sampled action (:class:`MaskCheckCallback`). Imports Ray."""

from __future__ import annotations

from typing import Any

import numpy as np
from ray.rllib.callbacks.callbacks import RLlibCallback

__all__ = ["MaskCheckCallback"]


class MaskCheckCallback(RLlibCallback):
    """Checks every sampled action against the mask RLlib recorded with the observation it
    was taken on, at the end of each ``EnvRunner.sample()`` (every action is in exactly one
    of the returned episode chunks, finished or not). Logs the lifetime sums
    ``checked_actions`` and ``masked_actions`` (the actions whose mask entry was 0)."""

    def on_sample_end(self, *, samples: Any = None, metrics_logger: Any = None,
                      **kwargs: Any) -> None:
        checked = masked = 0
        for episode in samples or []:
            for sa in getattr(episode, "agent_episodes", {}).values():
                actions = np.asarray(sa.get_actions(), dtype=np.int64).reshape(-1)
                if len(actions) == 0:
                    continue
                observations = sa.get_observations()  # a list of dicts until finalized
                masks = (np.stack([o["action_mask"] for o in observations])
                         if isinstance(observations, list) else
                         np.asarray(observations["action_mask"]))[: len(actions)]
                checked += len(actions)
                masked += int((masks[np.arange(len(actions)), actions] == 0).sum())
        if metrics_logger is not None:
            metrics_logger.log_value("checked_actions", checked, reduce="lifetime_sum")
            metrics_logger.log_value("masked_actions", masked, reduce="lifetime_sum")
