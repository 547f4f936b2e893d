"""Behaviour cloning: a supervised warm start before PPO, one routine for every backend.

:func:`collect_demonstrations` records a rule-based teacher (``--bc-teacher``) playing the
learner's seat of a training env; :func:`behaviour_cloning` fits a network to its choices
(masked cross-entropy with label smoothing over the legal actions) and its value head to the
discounted returns that followed, on a split by *episode* with early stopping of the value head,
so that PPO starts at the teacher's level with an honest critic. A backend hands its network
over as a :class:`Clonable` (the fast backend's actor-critic is one; sb3's policy and RLlib's
module have small adapters). With a budget (``--max-minutes``) the demonstrations and the
epochs stop at their deadlines; the report says how many were done.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from uno_mk_env.agents.base import agent_action, build_agent
from uno_mk_env.engine.seeding import Stream, derive_seed

from .divergence import check_finite
from .envs import Tables, make_training_env
from .progress import RateLines

__all__ = ["Clonable", "Cloning", "behaviour_cloning", "cloning_loss", "collect_demonstrations"]

#: Minibatch size of behaviour cloning.
BATCH = 1024


@dataclass(frozen=True)
class Cloning:
    """How to clone: the ``teacher`` agent spec, ``steps`` teacher decisions, ``epochs``, the
    Adam learning rate ``lr``, label ``smoothing``, the gradient clipping norm, the discount of
    the value targets, the run's ``seed`` and whether progress lines are printed."""

    teacher: str
    steps: int
    epochs: int
    lr: float = 1e-3
    smoothing: float = 0.1
    max_grad_norm: float = 0.5
    gamma: float = 0.995
    seed: int = 1
    progress: bool = True

    @classmethod
    def of(cls, args: Any, **changes: Any) -> Cloning:
        """The cloning of a backend's ``Args`` (its ``bc_*`` fields), with ``changes``."""
        return cls(**{**{
            "teacher": args.bc_teacher, "steps": args.bc_steps, "epochs": args.bc_epochs,
            "lr": args.bc_lr, "smoothing": args.bc_smoothing, "gamma": args.gamma,
            "max_grad_norm": getattr(args, "max_grad_norm", 0.5), "seed": args.seed,
            "progress": args.progress}, **changes})


class Clonable(Protocol):
    """A network behaviour cloning can fit: its parameters, the masked log-probabilities and
    the values of a batch, and a copy of its value head's weights to go back to."""

    def parameters(self) -> Iterator[Any]: ...

    def log_probs_and_values(self, obs: Any, masks: Any) -> tuple[Any, Any]:
        """``(log_softmax of the masked logits, values)`` of ``obs`` (``masks``: legal)."""
        ...

    def value_state(self) -> Any: ...

    def load_value_state(self, state: Any) -> None: ...


def collect_demonstrations(tables: Tables, cloning: Cloning,
                           until: float = math.inf) -> dict[str, np.ndarray]:
    """``cloning.steps`` decisions of the teacher in the learner's seat of a training env of
    ``tables`` (opponents from the pool, no self-play), or fewer when ``time.monotonic()``
    passes ``until`` (a budget; at least one whole episode): observations, masks, actions, the
    discounted return that followed each decision and the index of its episode. A progress line
    every few seconds unless ``cloning.progress`` is false."""
    lines = RateLines("behaviour cloning", cloning.steps, "teacher decisions", deadline=until,
                      enabled=cloning.progress)
    env = make_training_env(tables, rank=10_000)
    teacher = build_agent(cloning.teacher, seed=derive_seed(cloning.seed, Stream.CLONING_TEACHER))
    rng = np.random.default_rng(derive_seed(cloning.seed, Stream.CLONING_EPISODES))
    obs_l: list[np.ndarray] = []
    mask_l: list[np.ndarray] = []
    act_l: list[int] = []
    ret_l: list[float] = []
    ep_l: list[int] = []
    obs, _ = env.reset(seed=derive_seed(cloning.seed, Stream.CLONING_DEAL))
    teacher.reset(int(rng.integers(2**63)))
    episode: list[float] = []
    while True:
        mask = env.action_masks()
        action = agent_action(teacher, env.game, f"teacher {cloning.teacher}")
        obs_l.append(obs)
        mask_l.append(mask)
        act_l.append(action)
        obs, reward, terminated, truncated, _ = env.step(action)
        episode.append(float(reward))
        if terminated or truncated:
            g, returns = 0.0, []
            for r in reversed(episode):
                g = r + cloning.gamma * g
                returns.append(g)
            ret_l.extend(reversed(returns))
            ep_l.extend([ep_l[-1] + 1 if ep_l else 0] * len(returns))
            episode = []
            lines.update(len(act_l))
            if len(act_l) >= cloning.steps or time.monotonic() > until:
                break
            obs, _ = env.reset()
            teacher.reset(int(rng.integers(2**63)))
    return {"obs": np.asarray(obs_l, np.float32), "masks": np.asarray(mask_l, bool),
            "actions": np.asarray(act_l, np.int64), "returns": np.asarray(ret_l, np.float32),
            "episodes": np.asarray(ep_l, np.int64)}


def cloning_loss(log_p: Any, masks: Any, actions: Any, values: Any, returns: Any,
                 smoothing: float) -> Any:
    """The behaviour-cloning loss: cross-entropy of the teacher's ``actions`` under the masked
    log-probabilities ``log_p``, with label smoothing spread over the legal actions
    (``masks``), plus half the squared error of ``values`` against the discounted
    ``returns``."""
    taught = log_p.gather(1, actions[:, None]).squeeze(1)
    spread = (log_p * masks).sum(1) / masks.sum(1)  # mean log-prob of the legal actions
    return -((1 - smoothing) * taught + smoothing * spread).mean() + 0.5 * (
        (values - returns) ** 2).mean()


def behaviour_cloning(net: Clonable, tables: Tables, cloning: Cloning,
                      collect_until: float = math.inf,
                      train_until: float = math.inf) -> dict[str, Any]:
    """Fits ``net`` to the teacher's demonstrations (see the module docstring); the
    demonstrations stop at ``collect_until`` and the epochs at ``train_until``
    (``time.monotonic()`` times; at least one episode and one epoch).

    5 % of the *episodes* are held out (every decision of an episode shares its outcome, so a
    split by decision would let the critic memorise outcomes and report a fictitious fit). The
    value weights of the epoch with the lowest held-out error are kept (early stopping); the
    returned ``holdout_value_explained_variance`` is ``1 - MSE / Var(returns)`` on those
    episodes.

    Raises:
        NonFinite: the fitted weights or outputs are not finite (the run diverged).
    """
    import torch  # the train extra: the backends that clone have imported it already

    data = collect_demonstrations(tables, cloning, until=collect_until)
    rng = np.random.default_rng(derive_seed(cloning.seed, Stream.CLONING_SPLIT))
    episodes = data.pop("episodes")
    n_episodes = int(episodes[-1]) + 1
    held = rng.permutation(n_episodes)[: max(1, n_episodes // 20)]
    is_held = np.isin(episodes, held)
    hold, train_idx = np.flatnonzero(is_held), np.flatnonzero(~is_held)
    t = {k: torch.as_tensor(v) for k, v in data.items()}
    hold_t = torch.as_tensor(hold)
    hold_obs, hold_masks, hold_returns = t["obs"][hold_t], t["masks"][hold_t], t["returns"][hold_t]
    opt = torch.optim.Adam(net.parameters(), lr=cloning.lr)

    def holdout_mse() -> float:
        with torch.no_grad():
            _, values = net.log_probs_and_values(hold_obs, hold_masks)
        return float(((values - hold_returns) ** 2).mean())

    best_mse, best_epoch, best_value = holdout_mse(), 0, net.value_state()
    epochs = 0
    for epoch in range(1, cloning.epochs + 1):
        if epoch > 1 and time.monotonic() > train_until:
            break
        epochs = epoch
        rng.shuffle(train_idx)
        for i in range(0, len(train_idx), BATCH):
            idx = torch.as_tensor(train_idx[i:i + BATCH])
            masks = t["masks"][idx]
            log_p, values = net.log_probs_and_values(t["obs"][idx], masks)
            loss = cloning_loss(log_p, masks, t["actions"][idx], values, t["returns"][idx],
                                cloning.smoothing)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(list(net.parameters()), cloning.max_grad_norm)
            opt.step()
        mse = holdout_mse()
        if mse < best_mse:
            best_mse, best_epoch, best_value = mse, epoch, net.value_state()
    net.load_value_state(best_value)
    with torch.no_grad():
        log_p, values = net.log_probs_and_values(hold_obs, hold_masks)
    check_finite(net.parameters(), log_p[hold_masks], values, "after behaviour cloning")
    variance = float(hold_returns.var(unbiased=False))
    return {"samples": len(data["actions"]), "episodes": n_episodes, "epochs": epochs,
            "holdout_episodes": len(held),
            "holdout_accuracy": float((log_p.argmax(1) == t["actions"][hold_t]).float().mean()),
            "holdout_value_mse": best_mse,
            "holdout_value_explained_variance": 1.0 - best_mse / variance if variance else 0.0,
            "value_epoch": best_epoch}
