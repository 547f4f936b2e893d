"""One PPO iteration of the fast backend, CleanRL's loop body: :func:`collect` plays a rollout
at every table (:mod:`uno_mk_env.training.rollouts`) into a :class:`Rollout`, which computes
the values and GAE; :func:`update` runs the clipped PPO epochs over it.

Imports torch (the ``train`` extra): :mod:`uno_mk_env.training.ppo_fast` imports this module
only once the thread policy is set.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from uno_mk_env.agents.numpy_actor import OBS_SCALE

from .divergence import check_finite, check_loss
from .network import ActorCritic, actor_layers, masked

__all__ = ["Rollout", "collect", "optimizer", "update"]


def optimizer(agent: ActorCritic, learning_rate: float) -> torch.optim.Adam:
    """The optimizer of PPO and of its restarts (CleanRL's: Adam, ``eps=1e-5``)."""
    return torch.optim.Adam(agent.parameters(), lr=learning_rate, eps=1e-5)


class Rollout:
    """The storage of one rollout: ``(n_steps, n_envs, ...)`` tensors, and GAE on them."""

    def __init__(self, batch: Any, agent: ActorCritic, gamma: float) -> None:
        """Takes a :class:`uno_mk_env.training.rollouts.Batch` and adds what the learner
        computes in one batched pass: the log-probabilities of the actions, the values, the
        value of the observations the next rollout starts from, and ``gamma * V(final
        observation)`` on the last reward of a truncated episode (as stable-baselines3 does
        with ``TimeLimit.truncated``)."""
        self.obs = torch.from_numpy(batch.obs)
        self.masks = torch.from_numpy(batch.masks)
        self.actions = torch.from_numpy(batch.actions)
        self.rewards = torch.from_numpy(batch.rewards)
        self.dones = torch.from_numpy(batch.dones.astype(np.float32))
        steps, n = batch.actions.shape
        with torch.no_grad():
            logits, values = agent(self.obs.reshape(steps * n, -1))
            logp = torch.log_softmax(masked(logits, self.masks.reshape(steps * n, -1)), dim=1)
            self.logprobs = logp.gather(1, self.actions.reshape(-1, 1)).reshape(steps, n)
            self.values = values.reshape(steps, n)
            self.last_value = agent(torch.from_numpy(batch.last_obs))[1]
            if batch.truncated:
                final = torch.from_numpy(np.stack([o for _, _, o in batch.truncated]))
                for (t, j, _), v in zip(batch.truncated, agent(final)[1]):
                    self.rewards[t, j] += gamma * v

    def advantages(self, gamma: float, lam: float) -> tuple[Any, Any]:
        """GAE (the episode that ended at step ``t`` is not bootstrapped from the next table
        state, which is already the next episode's)."""
        adv = torch.zeros_like(self.rewards)
        last = torch.zeros_like(self.last_value)
        steps = len(self.rewards)
        for t in reversed(range(steps)):
            next_value = self.last_value if t == steps - 1 else self.values[t + 1]
            alive = 1.0 - self.dones[t]
            delta = self.rewards[t] + gamma * next_value * alive - self.values[t]
            last = delta + gamma * lam * alive * last
            adv[t] = last
        return adv, adv + self.values


def collect(agent: ActorCritic, tables: Any, args: Any, stats: dict[str, list[float]]) -> Rollout:
    """One rollout of ``--n-steps`` steps at every table, played where the tables are
    (:mod:`uno_mk_env.training.rollouts`) by a numpy copy of the current actor; the ended
    episodes' return, length and place go to ``stats``."""
    batch = tables.rollout(actor_layers(agent), args.activation, OBS_SCALE, args.n_steps)
    for _, _, ret, length, place in batch.episodes:
        stats["return"].append(ret)
        stats["length"].append(float(length))
        stats["place"].append(float(place))
    return Rollout(batch, agent, args.gamma)


def update(agent: ActorCritic, opt: Any, buf: Rollout, adv: Any, returns: Any, args: Any,
           rng: np.random.Generator, critic_only: bool = False) -> dict[str, float]:
    """``--n-epochs`` epochs of clipped PPO over the rollout in minibatches of
    ``--batch-size`` (``critic_only``: the value loss alone, the actor untouched).

    Raises:
        NonFinite: a minibatch's loss is not finite (before it is applied), or the updated
            weights are not (:func:`check_finite`).
    """
    n = args.n_steps * args.n_envs
    b_obs, b_masks = buf.obs.reshape(n, -1), buf.masks.reshape(n, -1)
    b_actions, b_logp = buf.actions.reshape(n), buf.logprobs.reshape(n)
    b_adv, b_ret = adv.reshape(n), returns.reshape(n)
    out: dict[str, list[float]] = {"policy_loss": [], "value_loss": [], "entropy": [],
                                   "approx_kl": [], "clip_fraction": []}
    for _ in range(args.n_epochs):
        order = rng.permutation(n)
        for start in range(0, n, args.batch_size):
            idx = torch.as_tensor(order[start:start + args.batch_size])
            logits, value = agent(b_obs[idx])
            logp_all = torch.log_softmax(masked(logits, b_masks[idx]), dim=1)
            logp = logp_all.gather(1, b_actions[idx, None]).squeeze(1)
            log_ratio = logp - b_logp[idx]
            ratio = log_ratio.exp()
            a = b_adv[idx]
            a = (a - a.mean()) / (a.std() + 1e-8)
            pg = -torch.min(a * ratio,
                            a * ratio.clamp(1 - args.clip_range, 1 + args.clip_range)).mean()
            v_loss = ((value - b_ret[idx]) ** 2).mean()
            entropy = -(logp_all.exp() * logp_all).sum(1).mean()  # illegal: 0 * -1e8 = 0
            loss = args.vf_coef * v_loss if critic_only else (
                pg - args.ent_coef * entropy + args.vf_coef * v_loss)
            check_loss(loss)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
            opt.step()
            with torch.no_grad():
                kl = float(((ratio - 1) - log_ratio).mean())
            out["policy_loss"].append(pg.item())
            out["value_loss"].append(v_loss.item())
            out["entropy"].append(entropy.item())
            out["approx_kl"].append(kl)
            out["clip_fraction"].append(float(((ratio - 1).abs() > args.clip_range)
                                              .float().mean()))
        if args.target_kl and out["approx_kl"][-1] > args.target_kl:
            break
    with torch.no_grad():
        logits, values = agent(b_obs)
    check_finite(agent.parameters(), logits, values, "after the update")
    var = float(b_ret.var())
    with torch.no_grad():
        explained = 1.0 - float((b_ret - buf.values.reshape(n)).var()) / var if var else 0.0
    return {**{k: float(np.mean(v)) for k, v in out.items()}, "explained_variance": explained}
