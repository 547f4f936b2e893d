"""The torch parts of the trained policies: the input-scaling features extractor, the asymmetric
(centralised-critic) actor-critic policy, and :func:`load_model`, stable-baselines3's loader
for ``--resume`` and exports.

Checkpoints name these classes by module and class name. Those written since this module exists
name ``uno_mk_env.training.policies``; earlier ones name ``uno_mk_env.agents.ppo`` (package
0.4.0) or the top-level ``agents.ppo`` (before 0.4.0), where these classes used to be made.
:func:`load_model` accepts all three (see :func:`legacy_module_aliases`); the ``ppo`` agent's
own loader (:func:`uno_mk_env.agents.policy_file.load_policy`), which never unpickles, recognises
the
same three names.

Importing this module imports torch, stable-baselines3 and sb3-contrib.
"""

from __future__ import annotations

import contextlib
import copy
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import torch
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor, MlpExtractor

from uno_mk_env.agents import ppo
from uno_mk_env.agents.numpy_actor import OBS_SCALE, PRIVILEGED_SIZE, STATE_SCALE
from uno_mk_env.engine.observation import OBS_SIZE

__all__ = ["AsymmetricActorCriticPolicy", "SB3Clonable", "ScaledObservationExtractor",
           "legacy_module_aliases", "load_model"]


class ScaledObservationExtractor(BaseFeaturesExtractor):
    """SB3 features extractor: the observation times a fixed per-entry scale
    (:data:`uno_mk_env.agents.numpy_actor.OBS_SCALE`, stored in the model as the buffer ``scale``);
    for
    the input of an asymmetric policy (observation + state, ``PRIVILEGED_SIZE``) the state's
    entries are scaled by :data:`uno_mk_env.agents.numpy_actor.STATE_SCALE`."""

    scale: torch.Tensor  # the buffer registered in __init__

    def __init__(self, observation_space: Any) -> None:
        size = int(np.prod(observation_space.shape))
        scales = {OBS_SIZE: OBS_SCALE, PRIVILEGED_SIZE: np.concatenate([OBS_SCALE, STATE_SCALE])}
        if size not in scales:
            raise ValueError(f"observations of size {size}: expected {OBS_SIZE} (the "
                             f"observation) or {PRIVILEGED_SIZE} (observation + state)")
        super().__init__(observation_space, size)
        self.register_buffer("scale", torch.as_tensor(scales[size]))

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        return torch.flatten(observations, 1) * self.scale


class ActorSlicesExtractor(MlpExtractor):
    """SB3's ``MlpExtractor`` whose policy network reads only the first ``actor_size`` features
    (the observation); the value network reads all of them."""

    def __init__(self, feature_dim: int, actor_size: int, net_arch: Any, activation_fn: Any,
                 device: Any) -> None:
        super().__init__(feature_dim, net_arch, activation_fn, device)
        self.actor_size = actor_size
        self.policy_net = MlpExtractor(actor_size, net_arch, activation_fn, device).policy_net

    def forward_actor(self, features: torch.Tensor) -> torch.Tensor:
        return self.policy_net(features[..., :self.actor_size])


class AsymmetricActorCriticPolicy(MaskableActorCriticPolicy):
    """Asymmetric actor-critic (a centralised, perfect-information critic): the input is the
    observation followed by :func:`~uno_mk_env.engine.observation.encode_state`; the actor sees only
    the first ``actor_size`` entries (the observation), the critic all of them. The critic is
    used only in training, so the trained actor still acts on what its seat may know (the
    ``ppo`` agent gives it the observation alone)."""

    def __init__(self, *args: Any, actor_size: int = OBS_SIZE, **kwargs: Any) -> None:
        self.actor_size = actor_size
        super().__init__(*args, **kwargs)

    def _build_mlp_extractor(self) -> None:
        self.mlp_extractor = ActorSlicesExtractor(
            self.features_dim, self.actor_size, self.net_arch, self.activation_fn, self.device,
        )

    def _get_constructor_parameters(self) -> dict[str, Any]:
        return {**super()._get_constructor_parameters(), "actor_size": self.actor_size}


class SB3Clonable:
    """An sb3-contrib ``MaskableActorCriticPolicy`` as behaviour cloning's
    :class:`~uno_mk_env.training.behaviour_cloning.Clonable` (and the divergence check's
    network): its parameters, the masked log-probabilities and values of a batch, and its value
    layers' weights (for early stopping)."""

    def __init__(self, policy: MaskableActorCriticPolicy) -> None:
        self.policy = policy
        self.value_modules = (policy.mlp_extractor.value_net, policy.value_net)

    def parameters(self) -> Iterator[torch.nn.Parameter]:
        return self.policy.parameters()

    def log_probs_and_values(self, obs: torch.Tensor, masks: torch.Tensor
                             ) -> tuple[torch.Tensor, torch.Tensor]:
        dist = self.policy.get_distribution(obs, action_masks=masks.numpy())
        logits = dist.distribution.logits  # type: ignore[union-attr]  # one Categorical
        return logits, self.policy.predict_values(obs).flatten()

    def value_state(self) -> list[dict[str, Any]]:
        return copy.deepcopy([m.state_dict() for m in self.value_modules])

    def load_value_state(self, state: list[dict[str, Any]]) -> None:
        for module, weights in zip(self.value_modules, state, strict=True):
            module.load_state_dict(weights)


#: Module names under which checkpoints of earlier versions refer to the classes above.
LEGACY_MODULES = ("agents", "agents.ppo")


@contextlib.contextmanager
def legacy_module_aliases() -> Iterator[None]:
    """While inside, ``agents`` and ``agents.ppo`` (the top-level names of the package before
    0.4.0) resolve to this module's classes, and ``uno_mk_env.agents.ppo`` (package 0.4.0)
    holds them, so that a checkpoint whose pickles refer to
    ``agents.ppo.ScaledObservationExtractor`` unpickles. Names another package already holds
    in ``sys.modules`` are left alone, and every alias is removed on exit."""
    added = []
    here = sys.modules[__name__]
    for name in LEGACY_MODULES:
        if name in sys.modules:
            continue
        alias = types.ModuleType(name, f"alias of {__name__} while loading a checkpoint")
        if name == "agents":
            alias.__path__ = []  # a package, so that "agents.ppo" can be imported from it
        else:
            alias.__dict__.update({k: getattr(here, k) for k in __all__ if k[0].isupper()})
            alias.ActorSlicesExtractor = ActorSlicesExtractor  # type: ignore[attr-defined]
        sys.modules[name] = alias
        added.append(name)
    # Package 0.4.0 made these classes in uno_mk_env.agents.ppo, and its checkpoints name them
    # there; that layer never imports training, so they are put in place while inside.

    lent = [k for k in ("ScaledObservationExtractor", "AsymmetricActorCriticPolicy")
            if k not in vars(ppo)]
    for k in lent:
        setattr(ppo, k, getattr(here, k))
    try:
        yield
    finally:
        for name in added:
            sys.modules.pop(name, None)
        for k in lent:
            delattr(ppo, k)


def load_model(path: str | Path, **kwargs: Any) -> Any:
    """``MaskablePPO.load(path, device="cpu", **kwargs)`` with :func:`legacy_module_aliases`.

    stable-baselines3's loader unpickles: use it only on files you trust (your own runs, the
    shipped models). Playing a model never needs it (:class:`uno_mk_env.agents.ppo.PPOAgent`).
    """
    from sb3_contrib import MaskablePPO

    kwargs.setdefault("device", "cpu")
    with legacy_module_aliases():
        return MaskablePPO.load(path, **kwargs)
