"""Behaviour cloning: a supervised warm start before PPO.

:func:`collect_demonstrations` records a rule-based teacher (``--bc-teacher``) playing the
learner's seat of a training env; :func:`behaviour_cloning` fits the policy to its choices
(masked cross-entropy with label smoothing over the legal actions) and the value head to the
discounted returns that followed, on a split by *episode* with early stopping of the value head,
so that PPO starts at the teacher's level with an honest critic.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from uno_mk_env.agents.base import agent_action, build_agent
from uno_mk_env.engine.seeding import derive_seed

from .envs import make_training_env
from .progress import RateLines


def collect_demonstrations(args: Any, until: float = math.inf) -> dict[str, np.ndarray]:
    """``args.bc_steps`` decisions of ``args.bc_teacher`` in the learner's seat of a training env
    (opponents from the pool, no self-play), or fewer when ``time.monotonic()`` passes
    ``until`` (a budget; at least one whole episode): observations, masks, actions, the
    discounted return that followed each decision and the index of its episode. A progress line
    every few seconds unless ``args.progress`` is false."""
    lines = RateLines("behaviour cloning", args.bc_steps, "teacher decisions", deadline=until,
                      enabled=args.progress)
    env = make_training_env(args, rank=10_000)
    teacher = build_agent(args.bc_teacher, seed=derive_seed(args.seed, 3000))
    rng = np.random.default_rng(derive_seed(args.seed, 3001))
    obs_l, mask_l, act_l, ret_l = [], [], [], []
    ep_l: list[int] = []
    obs, _ = env.reset(seed=derive_seed(args.seed, 3002))
    teacher.reset(int(rng.integers(2**63)))
    episode: list[float] = []
    while True:
        mask = env.action_masks()
        action = agent_action(teacher, env.game, f"teacher {args.bc_teacher}")
        obs_l.append(obs)
        mask_l.append(mask)
        act_l.append(action)
        obs, reward, terminated, truncated, _ = env.step(action)
        episode.append(float(reward))
        if terminated or truncated:
            g, returns = 0.0, []
            for r in reversed(episode):
                g = r + args.gamma * g
                returns.append(g)
            ret_l.extend(reversed(returns))
            ep_l.extend([ep_l[-1] + 1 if ep_l else 0] * len(returns))
            episode = []
            lines.update(len(act_l))
            if len(act_l) >= args.bc_steps or time.monotonic() > until:
                break
            obs, _ = env.reset()
            teacher.reset(int(rng.integers(2**63)))
    return {"obs": np.asarray(obs_l, np.float32), "masks": np.asarray(mask_l, bool),
            "actions": np.asarray(act_l, np.int64), "returns": np.asarray(ret_l, np.float32),
            "episodes": np.asarray(ep_l, np.int64)}


def cloning_loss(log_p: Any, masks: Any, actions: Any, values: Any, returns: Any,
                 smoothing: float) -> Any:
    """The behaviour-cloning loss of both PPO backends: cross-entropy of the teacher's
    ``actions`` under the masked log-probabilities ``log_p``, with label smoothing spread
    over the legal actions (``masks``), plus half the squared error of ``values`` against the
    discounted ``returns``."""
    taught = log_p.gather(1, actions[:, None]).squeeze(1)
    spread = (log_p * masks).sum(1) / masks.sum(1)  # mean log-prob of the legal actions
    return -((1 - smoothing) * taught + smoothing * spread).mean() + 0.5 * (
        (values - returns) ** 2).mean()


def behaviour_cloning(model: Any, args: Any) -> dict[str, float]:
    """Supervised warm start: the policy imitates ``args.bc_teacher`` (masked cross-entropy) and
    the value head regresses the teacher's discounted returns, so PPO starts from the teacher's
    level with a critic that already knows it.

    5 % of the *episodes* are held out (every decision of an episode shares its outcome, so a
    split by decision would let the critic memorise outcomes and report a fictitious fit). The
    value weights of the epoch with the lowest held-out error are kept (early stopping); the
    returned ``holdout_value_explained_variance`` is ``1 - MSE / Var(returns)`` on those
    episodes."""
    import copy

    import torch

    data = collect_demonstrations(args)
    n = len(data["actions"])
    rng = np.random.default_rng(derive_seed(args.seed, 3003))
    episodes = data.pop("episodes")
    n_episodes = int(episodes[-1]) + 1
    held = rng.permutation(n_episodes)[: max(1, n_episodes // 20)]
    is_held = np.isin(episodes, held)
    hold = np.flatnonzero(is_held)
    train_idx = np.flatnonzero(~is_held)
    t = {k: torch.as_tensor(v) for k, v in data.items()}
    policy = model.policy
    value_modules = (policy.mlp_extractor.value_net, policy.value_net)
    opt = torch.optim.Adam(policy.parameters(), lr=args.bc_lr)
    hold_t = torch.as_tensor(hold)
    hold_returns = t["returns"][hold_t]

    def holdout_value_mse() -> float:
        with torch.no_grad():
            values = policy.predict_values(t["obs"][hold_t]).flatten()
        return float(((values - hold_returns) ** 2).mean())

    best_mse, best_epoch = holdout_value_mse(), 0
    best_value = copy.deepcopy([m.state_dict() for m in value_modules])
    batch = 1024
    for epoch in range(1, args.bc_epochs + 1):
        rng.shuffle(train_idx)
        for i in range(0, len(train_idx), batch):
            idx = torch.as_tensor(train_idx[i:i + batch])
            obs, masks = t["obs"][idx], t["masks"][idx]
            log_p = policy.get_distribution(obs, action_masks=masks.numpy()).distribution.logits
            values = policy.predict_values(obs).flatten()
            loss = cloning_loss(log_p, masks, t["actions"][idx], values, t["returns"][idx],
                                args.bc_smoothing)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), args.max_grad_norm)
            opt.step()
        mse = holdout_value_mse()
        if mse < best_mse:
            best_mse, best_epoch = mse, epoch
            best_value = copy.deepcopy([m.state_dict() for m in value_modules])
    for module, state in zip(value_modules, best_value):
        module.load_state_dict(state)
    with torch.no_grad():
        dist = policy.get_distribution(t["obs"][hold_t], action_masks=t["masks"][hold_t].numpy())
        chosen = dist.distribution.probs.argmax(dim=1)
    variance = float(hold_returns.var(unbiased=False))
    return {
        "samples": n,
        "episodes": n_episodes,
        "holdout_episodes": len(held),
        "holdout_accuracy": float((chosen == t["actions"][hold_t]).float().mean()),
        "holdout_value_mse": best_mse,
        "holdout_value_explained_variance": 1.0 - best_mse / variance if variance else 0.0,
        "value_epoch": best_epoch,
    }
