"""The fast backend's network: an actor-critic of two MLPs over the scaled observation, as
stable-baselines3 builds one (orthogonal init), and its conversions to and from the numpy
policy files the ``ppo`` agent plays (:mod:`uno_mk_env.agents.ppo`).

Imports torch (the ``train`` extra): :mod:`uno_mk_env.training.ppo_fast` imports this module
only once the thread policy is set (:func:`uno_mk_env.agents.threads.set_thread_policy`).
"""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
from torch import nn

from uno_mk_env.agents.numpy_actor import OBS_SCALE
from uno_mk_env.agents.policy_file import write_policy
from uno_mk_env.engine.actions import NUM_ACTIONS
from uno_mk_env.engine.observation import OBS_SIZE
from uno_mk_env.files import atomic_save

from .rollouts import Layers

__all__ = ["MASKED_LOGIT", "ActorCritic", "actor_layers", "load_actor", "masked",
           "save_state", "snapshot"]

MASKED_LOGIT = -1e8  # what sb3-contrib's MaskableCategorical writes for illegal actions

def masked(logits: torch.Tensor, masks: torch.Tensor) -> torch.Tensor:
    """``logits`` with the illegal actions' set to :data:`MASKED_LOGIT`."""
    return torch.where(masks, logits, torch.full_like(logits, MASKED_LOGIT))


def _mlp(sizes: Sequence[int], out: int, gain: float, activation: type[nn.Module]
         ) -> nn.Sequential:
    layers: list[nn.Module] = []
    size = OBS_SIZE
    for h in sizes:
        layer = nn.Linear(size, h)
        nn.init.orthogonal_(layer.weight, math.sqrt(2))
        nn.init.zeros_(layer.bias)
        layers += [layer, activation()]
        size = h
    head = nn.Linear(size, out)
    nn.init.orthogonal_(head.weight, gain)
    nn.init.zeros_(head.bias)
    return nn.Sequential(*layers, head)


class ActorCritic(nn.Module):
    """The observation times the policy files' input scale, then separate MLPs of hidden
    ``sizes`` for the :data:`~uno_mk_env.engine.actions.NUM_ACTIONS` logits and the value. A
    :class:`uno_mk_env.training.behaviour_cloning.Clonable`."""

    def __init__(self, sizes: Sequence[int], activation: str) -> None:
        super().__init__()
        act = {"tanh": nn.Tanh, "relu": nn.ReLU}[activation]
        self.register_buffer("scale", torch.as_tensor(OBS_SCALE))
        self.actor = _mlp(sizes, NUM_ACTIONS, 0.01, act)
        self.critic = _mlp(sizes, 1, 1.0, act)

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        x = obs * self.scale  # type: ignore[operator]  # a registered buffer
        return self.actor(x), self.critic(x).squeeze(-1)

    def log_probs_and_values(self, obs: torch.Tensor, masks: torch.Tensor
                             ) -> tuple[torch.Tensor, torch.Tensor]:
        logits, values = self(obs)
        return torch.log_softmax(masked(logits, masks), dim=1), values

    def value_state(self) -> dict[str, Any]:
        return copy.deepcopy(self.critic.state_dict())

    def load_value_state(self, state: dict[str, Any]) -> None:
        self.critic.load_state_dict(state)


def actor_layers(agent: ActorCritic) -> Layers:
    """The actor's ``(W, b)`` layers as numpy arrays, ``W`` of shape ``(inputs, outputs)``."""
    return [(m.weight.detach().numpy().T.copy(), m.bias.detach().numpy().copy())
            for m in agent.actor if isinstance(m, nn.Linear)]


def load_actor(agent: ActorCritic, layers: Layers) -> None:
    """Copies ``(W, b)`` layers (``W`` of shape ``(inputs, outputs)``) into the actor."""
    linears = [m for m in agent.actor if isinstance(m, nn.Linear)]
    with torch.no_grad():
        for m, (w, b) in zip(linears, layers, strict=True):
            m.weight.copy_(torch.as_tensor(w.T))
            m.bias.copy_(torch.as_tensor(b))


def export(agent: ActorCritic, activation: str, path: Path, provenance: dict[str, Any]) -> Path:
    """Writes the actor as a policy ``.npz`` (read by ``ppo:PATH`` without unpickling),
    atomically."""
    return write_policy(actor_layers(agent), activation, path, scale=OBS_SCALE,
                        provenance=provenance)


def snapshot(agent: ActorCritic, opt: torch.optim.Optimizer
             ) -> tuple[dict[str, Any], dict[str, Any]]:
    """A copy of the weights and the optimizer's state (to go back to them)."""
    return copy.deepcopy(agent.state_dict()), copy.deepcopy(opt.state_dict())


def save_state(path: Path, agent: ActorCritic, opt: torch.optim.Optimizer, steps: int) -> None:
    """``final.pt``: the weights, the optimizer state and the step count (a plain state dict),
    written atomically."""
    atomic_save(path, lambda f: torch.save(
        {"model": agent.state_dict(), "optimizer": opt.state_dict(), "timesteps": steps}, f))
