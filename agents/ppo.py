"""``ppo``: a MaskablePPO policy (sb3-contrib) trained by :mod:`uno_mk_env.training.train_ppo`.

Registered as ``ppo`` with the spec ``ppo:NAME``, a policy shipped with the package
(``ppo:ppo_2p``, :mod:`uno_mk_env.agents.shipped`), or ``ppo:PATH``, where ``PATH`` is a
stable-baselines3 ``.zip`` (``model.save``; the suffix may be left out, as SB3 allows) or this
project's policy ``.npz`` (:func:`export_policy`); :func:`resolve_model_path` decides.
Importing this module does not import torch or stable-baselines3.


The agent sees the observation vector (:func:`uno_mk_env.engine.observation.encode`) and the action
mask, exactly what the Gymnasium env gave the learner, and plays what
``model.predict(obs, action_masks=mask.astype(bool), deterministic=...)`` would: the most likely
legal action (``deterministic=True``, the default) or a sample from the masked policy. The
actor's forward pass runs in numpy (~20x faster per decision than ``model.predict``, whose torch
call overhead dominates a batch of one); a test checks it against ``model.predict``. Sampling
(``deterministic=False``) draws from the agent's own ``numpy`` generator, so it is reproducible
from the agent's seed (docs/api.md#randomness), not from torch's global one.

A checkpoint trained with an asymmetric critic (``train_ppo.py --critic-state``, policy
``AsymmetricActorCriticPolicy``) has observation + state as its input, but its actor reads only
the observation: the agent gives it the observation alone, so it never sees hidden information
at the table.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from uno_mk_env import PlayerView
from uno_mk_env import actions as A

from .base import Agent, register
from .numpy_actor import NumpyActor
from .policy_file import load_policy, resolve_model_path

__all__ = ["PPOAgent"]

_MASKED_LOGIT = -1e8  # what sb3-contrib's MaskableCategorical writes for illegal actions



#: The torch classes of training (:mod:`uno_mk_env.training.policies`) that package 0.4.0 made
#: in this module. This layer never imports training: checkpoints that name them here are loaded
#: by ``uno_mk_env.training.policies.load_model`` (which puts them back in place while it
#: unpickles), and code is told where they live.
_MOVED_TO_TRAINING = ("ScaledObservationExtractor", "AsymmetricActorCriticPolicy")


def __getattr__(name: str) -> Any:
    if name in _MOVED_TO_TRAINING:
        raise AttributeError(f"{name} moved to uno_mk_env.training.policies after package "
                             f"0.4.0: from uno_mk_env.training.policies import {name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class PPOAgent(Agent):
    """Plays a MaskablePPO policy with a numpy forward pass, loaded without unpickling
    (:func:`load_policy`).

    Args:
        path: a stable-baselines3 ``.zip`` (``model.save``; the suffix may be omitted) or a
            policy ``.npz`` (:func:`export_policy`).
        seed: seeds the generator used when ``deterministic=False``.
        deterministic: play the most likely legal action (default) or sample from the policy.

    Attributes:
        actor: the numpy actor; info: what :func:`load_policy` says about the file.

    Raises:
        FileNotFoundError: the model file does not exist.
        ModelFileError: (a ``ValueError``) the file is not a model this agent plays, or its
            spaces do not match this env (observation ``(OBS_SIZE,)``, or
            ``(OBS_SIZE + STATE_SIZE,)`` for an asymmetric policy; ``Discrete(73)``).
    """

    name = "ppo"
    needs_observation = True

    def __init__(
        self,
        path: str | Path,
        seed: int | None = None,
        deterministic: bool = True,
    ) -> None:
        super().__init__(seed)
        self.path = resolve_model_path(path)
        self.deterministic = deterministic
        self.actor, self.info = load_policy(self.path)

    def act(
        self, observation: np.ndarray | None, action_mask: np.ndarray, view: PlayerView
    ) -> int:
        if observation is None:
            raise ValueError("the ppo agent needs the observation vector (needs_observation)")
        return self.choose(self.actor.logits(observation), action_mask)

    def batched_policy(self) -> NumpyActor:
        """The numpy actor (:class:`uno_mk_env.envs.vector.BatchedAgent`: the vector env decides
        every table waiting on it in one forward pass, then asks :meth:`choose`)."""
        return self.actor

    def choose(self, logits: np.ndarray, action_mask: np.ndarray) -> int:
        """The action :meth:`act` plays for the actor's ``logits`` of one observation."""
        mask = np.asarray(action_mask).astype(bool)
        logits = np.where(mask, logits, _MASKED_LOGIT)
        if self.deterministic:
            return int(np.argmax(logits))
        p = np.exp(logits - logits.max())
        return int(self.rng.choice(A.NUM_ACTIONS, p=p / p.sum()))

    def action_probabilities(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        """The masked policy's probability of each action (float64, shape ``(73,)``)."""
        mask = np.asarray(action_mask).astype(bool)
        logits = np.where(mask, self.actor.logits(observation), _MASKED_LOGIT).astype(np.float64)
        p = np.exp(logits - logits.max())
        return p / p.sum()


@register("ppo", "a trained MaskablePPO policy: ppo:NAME, a shipped one (ppo_2p, ppo_4p, "
          "rllib_2p; uno-mk models), ppo:path/to/policy.npz (numpy only) or "
          "ppo:path/to/model.zip (needs torch)", example="ppo:ppo_2p")
def _make_ppo(arg: str | None, seed: int | None) -> Agent:
    if not arg:
        raise ValueError("agent 'ppo' needs a model path or a shipped policy's name, e.g. "
                         "ppo:ppo_2p or ppo:runs/my_run/final.zip")
    return PPOAgent(arg, seed=seed)
