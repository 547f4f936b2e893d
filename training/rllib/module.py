"""The learner's network: :class:`MaskedActorCritic`, an action-masked actor-critic RLModule
(after RLlib's ``ActionMaskingTorchRLModule`` example). Imports torch and Ray."""

from __future__ import annotations

from typing import Any, cast

import numpy as np
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis import ValueFunctionAPI
from ray.rllib.core.rl_module.torch import TorchRLModule
from torch import nn

from uno_mk_env.agents.numpy_actor import OBS_SCALE

__all__ = ["MASKED_LOGIT", "MaskedActorCritic"]

#: Logit given to masked actions (as sb3-contrib's MaskableCategorical): probability exactly 0.
MASKED_LOGIT = -1e8



class MaskedActorCritic(TorchRLModule, ValueFunctionAPI):
    """Actor-critic RLModule for the env's ``{"observation", "action_mask"}`` dict
    (after RLlib's ``ActionMaskingTorchRLModule`` example): ``pi`` and ``vf`` are separate
    MLPs over ``observation * scale`` (the per-piece input scale of the stable-baselines3
    path, :data:`uno_mk_env.agents.numpy_actor.OBS_SCALE`); masked actions get the logit
    ``MASKED_LOGIT`` in every forward pass. ``model_config``: ``hidden`` (layer sizes) and
    ``activation`` (``"tanh"``/``"relu"``). The actor's layout is what
    :func:`export_module` writes as a policy ``.npz``."""

    def setup(self) -> None:
        # RLlib types model_config as a dict or a DefaultModelConfig and the spaces as any Space
        # or None: this module is built with a dict, the env's Dict (or Box) and Discrete spaces
        config = dict(cast("dict[str, Any]", self.model_config or {}))
        hidden = [int(h) for h in config.get("hidden", [256, 256])]
        activation = {"tanh": nn.Tanh, "relu": nn.ReLU}[config.get("activation", "tanh")]
        space: Any = self.observation_space
        inputs = int(space["observation"].shape[0]) if hasattr(space, "spaces") else int(
            space.shape[0])
        action_space: Any = self.action_space
        outputs = int(action_space.n)

        def mlp(out: int, last_gain: float) -> nn.Sequential:
            layers: list[nn.Module] = []
            size = inputs
            for h in hidden:
                linear = nn.Linear(size, h)
                nn.init.orthogonal_(linear.weight, gain=float(np.sqrt(2)))
                nn.init.zeros_(linear.bias)
                layers += [linear, activation()]
                size = h
            last = nn.Linear(size, out)
            nn.init.orthogonal_(last.weight, gain=last_gain)
            nn.init.zeros_(last.bias)
            layers.append(last)
            return nn.Sequential(*layers)

        self.pi = mlp(outputs, 0.01)
        self.vf = mlp(1, 1.0)
        self.register_buffer("scale", torch.as_tensor(OBS_SCALE, dtype=torch.float32))

    def _inputs(self, batch: dict[str, Any]) -> tuple[Any, Any]:
        obs = batch[Columns.OBS]
        return obs["observation"].float() * self.scale, obs["action_mask"]

    def _masked_logits(self, x: Any, mask: Any) -> Any:
        logits = self.pi(x)
        return torch.where(mask > 0, logits, torch.full_like(logits, MASKED_LOGIT))

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        x, mask = self._inputs(batch)
        return {Columns.ACTION_DIST_INPUTS: self._masked_logits(x, mask)}

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        x, mask = self._inputs(batch)
        return {Columns.ACTION_DIST_INPUTS: self._masked_logits(x, mask),
                Columns.EMBEDDINGS: x}

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> Any:
        x = embeddings if embeddings is not None else self._inputs(batch)[0]
        return self.vf(x).squeeze(-1)
