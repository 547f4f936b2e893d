"""A lean single-file PPO for UNO Mario Kart, CleanRL style, on the batched vector env.

::

    python -m uno_mk_env.training.ppo_fast --num-players 2 --total-timesteps 2000000 --seed 1
    python -m uno_mk_env.training.ppo_fast --help          # every argument, documented

``--n-envs`` tables (:class:`uno_mk_env.envs.vector.UnoMarioKartVectorEnv`, built by
:func:`uno_mk_env.training.vector_envs.make_vector_training_env`) are played together, split
over ``--env-workers`` processes (:mod:`uno_mk_env.training.rollouts`): at each rollout the
learner sends its actor's weights, every worker plays ``--n-steps`` steps of its tables with a
numpy copy of the actor (one forward pass per step for all its learner seats, one for every
table waiting on the same self-play snapshot, the rule-based opponents table by table) and
sends the rollout back whole; the rollouts do not depend on the split. The learner then
computes the values and log-probabilities in one batched torch pass and updates, using
``--torch-threads`` while the workers wait. The update is
PPO with a masked categorical policy (illegal logits set to -1e8, as sb3-contrib's
``MaskablePPO``), clipped objective, GAE, normalised advantages and a separate value network;
the tables' opponents are the sb3 backend's (``--opponents`` weighted by
``--opponent-weights``, and with ``--self-play-prob`` a snapshot of the learner, taken every
``--snapshot-every`` steps when the latest evaluation did not drop).

**Reproducible**: the same command on the same commit and machine gives the same weights
(a fixed ``--torch-threads``, numpy's BLAS limited to one thread, every random stream derived
from ``--seed``, each table's action draws from its own generator); training stops at
``--total-timesteps`` rounded up to whole rollouts (``--n-envs`` x ``--n-steps``).
``--max-minutes`` stops training that many minutes after the run began, behaviour cloning and
evaluations included (then the final evaluation and the outputs follow; ``"complete":
false``).

Outputs in ``runs/<run_name>/``: ``config.json`` (arguments, command, git commit, versions,
seeds), ``progress.csv`` (one row per update), ``eval.csv`` and ``curve.png``, ``snapshots/``,
``checkpoints/policy_<steps>_steps.npz`` every ``--checkpoint-every`` steps (default
0: none), ``final.npz`` (the policy, :func:`uno_mk_env.agents.policy_file.write_policy`, played by
``ppo:PATH``), ``best.npz`` (best evaluation after the start, as the sb3 backend picks
``best.zip``), ``final.pt`` (the torch weights and optimizer state, a plain state dict) and
``summary.json``. ``--save-path X.npz`` also ships the final policy with its JSON provenance
and curve. ``--resume`` is not supported by this backend.

This is ``uno-mk train``'s default backend. Its defaults are the recipe that did best with
``--max-minutes 10`` at two players (docs/training.md, "The fast path"): behaviour cloning of
``strategic``, then PPO against ``strategic`` alone without self-play, no entropy bonus,
learning rate 3e-4, rollouts of 64 tables x 128 steps, an evaluation every million steps; a
timed run's automatic final evaluation is capped (:func:`final_games`). The network and the
length of the imitation follow the table size (:data:`TABLE_SIZE_DEFAULTS`): at three or more
players a wider network imitates four times as many decisions, the recipe that beat three
``strategic`` with ``--num-players 4 --max-minutes 30``.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import math
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from uno_mk_env.agents.numpy_actor import OBS_SCALE
from uno_mk_env.agents.policy_file import ModelFileError, load_policy, write_policy
from uno_mk_env.engine.observation import OBS_PIECES, OBS_SIZE
from uno_mk_env.engine.seeding import derive_seed
from uno_mk_env.errors import UnoMkError
from uno_mk_env.files import atomic_save

from .args import (
    TrainArgs,
    TrainingDiverged,
    TrainingError,
    check,
    check_outputs,
    command_line,
    final_eval_games,
    layer_sizes,
    new_run_dir,
    parse,
    quiet_threads,
    specs,
)
from .curves import (
    EVAL_COLUMNS,
    eval_line,
    evaluate,
    plot_curve,
    selection_score,
    write_eval_csv,
)
from .outputs import copy_file, write_json
from .progress import Budget, RateLines
from .provenance import source_commit, versions

__all__ = ["Args", "main", "train"]

PROG = "python -m uno_mk_env.training.ppo_fast"
DESCRIPTION = (
    "Train a PPO agent fast (the 'train' extra, without stable-baselines3) for UNO Mario Kart: "
    "--n-envs tables of the batched vector env stepped together, one learning seat each, drawn "
    "every episode, against --opponents (and, with --self-play-prob, snapshots of itself); "
    "behaviour cloning of --bc-teacher first; evaluated against --eval-opponents on duplicate "
    "deals every --eval-every steps; reproducible from its command. Outputs go to runs/<run>/ "
    "(config.json, progress.csv, eval.csv, curve.png, final.npz, summary.json); the last line "
    "printed by 'uno-mk train' is 'agent: ppo:PATH'. 'uno-mk train --backend sb3 --help': "
    "the stable-baselines3 backend.")
MASKED_LOGIT = -1e8  # what sb3-contrib's MaskableCategorical writes for illegal actions


@dataclass
class Args(TrainArgs):
    """The arguments of the fast backend (see the module docstring)."""

    exp_name: str = "ppo_fast"
    opponents: str = "strategic"
    opponent_weights: str = ""
    """comma-separated sampling weights of --opponents (empty: uniform)"""
    self_play_prob: float = 0.0
    """probability that an opponent seat plays a frozen snapshot of the learner (once one exists)"""
    max_snapshots: int = 5
    """snapshots kept in the self-play league (the oldest is dropped)"""
    snapshot_deterministic: bool = False
    """snapshots play their most likely action instead of sampling from their policy"""
    torch_threads: int = 2
    """torch intra-op threads of the update (the env workers wait while it runs, so 2 use both
    cores of a 2-core machine; a run is bit-reproducible for a given number)"""
    n_envs: int = 64
    """tables played together (each step of the actor is batched over them)"""
    env_workers: int = 2
    """processes the tables are split over, each playing its share of every rollout with a
    numpy copy of the actor (0: all in the learner's process); the run is the same either way"""
    n_steps: int = 128
    """steps per table per rollout (a rollout is --n-envs x --n-steps learner decisions)"""
    batch_size: int = 1024
    """minibatch size"""
    n_epochs: int = 4
    """epochs over each rollout"""
    anneal_lr: bool = True
    """decay the learning rate linearly to 10 % of its value over --total-timesteps"""
    clip_range: float = 0.2
    """PPO clipping coefficient"""
    ent_coef: float = 0.0
    """entropy bonus coefficient"""
    vf_coef: float = 0.5
    """value loss coefficient"""
    max_grad_norm: float = 0.5
    """gradient clipping norm"""
    target_kl: float = 0.0
    """stop an update's epochs early when the approximate KL exceeds this (0: never)"""
    critic_warmup: int = 0
    """learner steps at the start of PPO during which only the value network learns (the
    actor is frozen): a critic that fits the starting policy before its advantages steer it"""
    init_policy: str = ""
    """start the actor from this policy .npz instead of behaviour cloning (read without
    unpickling; its layers must match --net-arch and --activation), e.g. to continue a shipped
    model; the critic starts fresh (see --critic-warmup)"""
    total_timesteps: int = 10_000_000
    learning_rate: float = 3e-4
    net_arch: str = "auto"
    """hidden layer sizes of the policy and value networks (comma-separated); "auto": the table
    size's (128,128 at two players, 256,256 at three or more)"""
    bc_teacher: str = "strategic"
    bc_steps: int = 0
    """teacher decisions collected for behaviour cloning (the teacher in the learner's seat);
    0: the table size's number (100,000 at two players, 400,000 at three or more)"""
    bc_epochs: int = 0
    """epochs of behaviour cloning; 0: the table size's number (8 at two players, 10 at more)"""
    eval_every: int = 1_000_000
    final_eval_games: int = 0
    """games per opponent in the final evaluation; 0: follow the budget, one game per 250
    training steps, at least 100 and at most 4000, and at most 1000 when --max-minutes is set
    (a timed run ends within a minute of its budget)"""
    checkpoint_every: int = 0
    max_minutes: float = 0.0
    """stop training this many minutes after the run began, behaviour cloning and evaluations
    included (then the final evaluation and the outputs); 0: no limit. A run stopped so is
    marked incomplete ("complete": false)"""


# --------------------------------------------------------------------------------- checks
def check_args(args: Args) -> None:
    """Refuses arguments this backend cannot run, in one line, before anything is created or
    started: every value (:func:`uno_mk_env.training.args.check`), then what only the sb3
    backend does, then ``--init-policy``.

    Raises:
        TrainingError: naming the option, its value and what is allowed.
    """
    from .vector_envs import check_vector_args

    check(args, rewards=("win", "points", "place", "win_place"))
    if args.resume:
        raise TrainingError("--resume: not supported by the fast backend (use the sb3 backend)")
    check_vector_args(_env_view(args))
    if args.init_policy:
        initial_actor(args)


def _env_view(args: Args) -> Any:
    """``args`` with the sb3 backend's table fields this backend fixes (one table size, the
    default rules, no critic state), for the shared env builders."""
    import types

    return types.SimpleNamespace(**dataclasses.asdict(args), table_sizes="", rule_presets="",
                                 critic_state=False, place_weight=0.5)


#: The most games per opponent of an automatic final evaluation (``--final-eval-games 0``) of
#: a run with ``--max-minutes``: it follows the budget, so that the command ends within about a
#: minute of it (1000 games against each of the two default opponents take ~10-40 s on two
#: busy cores).
TIMED_FINAL_EVAL_GAMES = 1000


def final_games(args: Args) -> int:
    """Games per opponent of the final evaluation: ``--final-eval-games``, or with 0 the sb3
    rule (:func:`uno_mk_env.training.args.final_eval_games`, which follows
    ``--total-timesteps``) capped at :data:`TIMED_FINAL_EVAL_GAMES` when ``--max-minutes``
    is set."""
    games = final_eval_games(args)
    if args.final_eval_games or args.max_minutes <= 0:
        return games
    return min(games, TIMED_FINAL_EVAL_GAMES)


#: The defaults that follow the table size: a field's value meaning "the table size's", then
#: its value at two players and at three or more. Two players: the ten-minute recipe; more:
#: the four-player thirty-minute one (docs/training.md, "The fast path"), a wider network and a
#: four times longer imitation of ``strategic``: at four players PPO starts from a clone that
#: already plays about as well as its teacher (0.250 against three ``strategic``, 10,000 games)
#: and improves on it; with the two-player recipe it ended level with the teacher.
TABLE_SIZE_DEFAULTS: dict[str, tuple[Any, Any, Any]] = {
    "net_arch": ("auto", "128,128", "256,256"),
    "bc_steps": (0, 100_000, 400_000),
    "bc_epochs": (0, 8, 10),
}


def table_size_defaults(args: Args) -> Args:
    """``args`` with every field left to the table size (:data:`TABLE_SIZE_DEFAULTS`) set to
    the value of its ``--num-players``."""
    column = 1 if args.num_players <= 2 else 2
    return dataclasses.replace(args, **{
        name: values[column] for name, values in TABLE_SIZE_DEFAULTS.items()
        if getattr(args, name) == values[0]})


def whole_rollouts(args: Args) -> Args:
    rollout = args.n_envs * args.n_steps
    total = math.ceil(args.total_timesteps / rollout) * rollout
    if total != args.total_timesteps:
        print(f"--total-timesteps {args.total_timesteps} rounded up to {total}: whole rollouts "
              f"of {args.n_envs} tables x {args.n_steps} steps", flush=True)
    return dataclasses.replace(args, total_timesteps=total)


# --------------------------------------------------------------------------------- network
def make_agent(args: Args) -> Any:
    """The actor-critic: the observation times the policy files' input scale, then separate
    MLPs for the 73 logits and the value (orthogonal init, as stable-baselines3)."""
    import torch
    from torch import nn

    act = {"tanh": nn.Tanh, "relu": nn.ReLU}[args.activation]

    def mlp(out: int, gain: float) -> nn.Sequential:
        layers: list[nn.Module] = []
        size = OBS_SIZE
        for h in layer_sizes(args):
            layer = nn.Linear(size, h)
            nn.init.orthogonal_(layer.weight, math.sqrt(2))
            nn.init.zeros_(layer.bias)
            layers += [layer, act()]
            size = h
        head = nn.Linear(size, out)
        nn.init.orthogonal_(head.weight, gain)
        nn.init.zeros_(head.bias)
        return nn.Sequential(*layers, head)

    class ActorCritic(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.register_buffer("scale", torch.as_tensor(OBS_SCALE))
            self.actor = mlp(73, 0.01)
            self.critic = mlp(1, 1.0)

        def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            x = obs * self.scale  # type: ignore[operator]  # a registered buffer
            return self.actor(x), self.critic(x).squeeze(-1)

    return ActorCritic()


def actor_layers(agent: Any) -> list[tuple[np.ndarray, np.ndarray]]:
    """The actor's ``(W, b)`` layers as numpy arrays, ``W`` of shape ``(inputs, outputs)``."""
    from torch import nn

    return [(m.weight.detach().numpy().T.copy(), m.bias.detach().numpy().copy())
            for m in agent.actor if isinstance(m, nn.Linear)]


def initial_actor(args: Args) -> list[tuple[np.ndarray, np.ndarray]]:
    """The layers of ``--init-policy`` (read by :func:`uno_mk_env.agents.policy_file.load_policy`,
    never unpickled).

    Raises:
        TrainingError: not a policy file, or its shape or activation is not this run's.
    """
    try:
        actor, _ = load_policy(args.init_policy)
    except (OSError, ModelFileError) as e:
        raise TrainingError(f"--init-policy: {e}") from None
    want = [OBS_SIZE, *layer_sizes(args), 73]
    shapes = [actor.layers[0][0].shape[0]] + [w.shape[1] for w, _ in actor.layers]
    if shapes != want or actor.activation_name != args.activation:
        raise TrainingError(
            f"--init-policy {args.init_policy}: a {actor.activation_name} MLP of sizes "
            f"{shapes}; this run's --net-arch {args.net_arch} --activation {args.activation} "
            f"needs {want}")
    if actor.scale is None or not np.allclose(actor.scale, OBS_SCALE):
        raise TrainingError(f"--init-policy {args.init_policy}: its input scale is not this "
                            "version's observation scale")
    return [(w, b) for w, b in actor.layers]


def load_actor(agent: Any, layers: list[tuple[np.ndarray, np.ndarray]]) -> None:
    """Copies ``(W, b)`` layers (``W`` of shape ``(inputs, outputs)``) into the actor."""
    import torch
    from torch import nn

    linears = [m for m in agent.actor if isinstance(m, nn.Linear)]
    with torch.no_grad():
        for m, (w, b) in zip(linears, layers, strict=True):
            m.weight.copy_(torch.as_tensor(w.T))
            m.bias.copy_(torch.as_tensor(b))


def export(agent: Any, args: Args, path: Path, provenance: dict[str, Any]) -> Path:
    """Writes the actor as a policy ``.npz`` (read by ``ppo:PATH`` without unpickling),
    atomically."""
    return write_policy(actor_layers(agent), args.activation, path, scale=OBS_SCALE,
                        provenance=provenance)


def masked(logits: Any, masks: Any) -> Any:
    import torch

    return torch.where(masks, logits, torch.full_like(logits, MASKED_LOGIT))


# ---------------------------------------------------------------------- behaviour cloning
def behaviour_cloning(agent: Any, args: Args, budget: Budget) -> dict[str, Any]:
    """Warm start: the actor imitates ``--bc-teacher`` (masked cross-entropy with label
    smoothing over the legal actions), the critic regresses the discounted returns that
    followed; demonstrations from :func:`uno_mk_env.training.behaviour_cloning.
    collect_demonstrations`, 5 % of the episodes held out, the critic of the epoch with the
    lowest held-out error kept (as the sb3 backend does). With ``--max-minutes`` the
    demonstrations and the epochs stop at their share of the budget (:class:`Budget`; at least
    one episode and one epoch); the result says how many were done."""
    import copy

    import torch

    from .behaviour_cloning import cloning_loss, collect_demonstrations

    data = collect_demonstrations(_env_view(args), until=budget.at(Budget.BC_COLLECT_SHARE))
    rng = np.random.default_rng(derive_seed(args.seed, 3003))
    episodes = data.pop("episodes")
    n_episodes = int(episodes[-1]) + 1
    held = rng.permutation(n_episodes)[: max(1, n_episodes // 20)]
    is_held = np.isin(episodes, held)
    hold, train_idx = np.flatnonzero(is_held), np.flatnonzero(~is_held)
    t = {k: torch.as_tensor(v) for k, v in data.items()}
    opt = torch.optim.Adam(agent.parameters(), lr=args.bc_lr)
    hold_t = torch.as_tensor(hold)

    def holdout_mse() -> float:
        with torch.no_grad():
            _, values = agent(t["obs"][hold_t])
        return float(((values - t["returns"][hold_t]) ** 2).mean())

    best_mse, best_epoch = holdout_mse(), 0
    best_critic = copy.deepcopy(agent.critic.state_dict())
    epochs = 0
    for epoch in range(1, args.bc_epochs + 1):
        if epoch > 1 and time.monotonic() > budget.at(Budget.BC_SHARE):
            break
        epochs = epoch
        rng.shuffle(train_idx)
        for i in range(0, len(train_idx), 1024):
            idx = torch.as_tensor(train_idx[i:i + 1024])
            obs, masks = t["obs"][idx], t["masks"][idx]
            logits, values = agent(obs)
            log_p = torch.log_softmax(masked(logits, masks), dim=1)
            loss = cloning_loss(log_p, masks, t["actions"][idx], values, t["returns"][idx],
                                args.bc_smoothing)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
            opt.step()
        mse = holdout_mse()
        if mse < best_mse:
            best_mse, best_epoch = mse, epoch
            best_critic = copy.deepcopy(agent.critic.state_dict())
    agent.critic.load_state_dict(best_critic)
    check_finite(agent, t["obs"], "after behaviour cloning")
    with torch.no_grad():
        logits, _ = agent(t["obs"][hold_t])
        chosen = masked(logits, t["masks"][hold_t]).argmax(1)
    variance = float(t["returns"][hold_t].var(unbiased=False))
    return {"samples": len(data["actions"]), "episodes": n_episodes, "epochs": epochs,
            "holdout_episodes": len(held),
            "holdout_accuracy": float((chosen == t["actions"][hold_t]).float().mean()),
            "holdout_value_mse": best_mse,
            "holdout_value_explained_variance": 1.0 - best_mse / variance if variance else 0.0,
            "value_epoch": best_epoch}


# --------------------------------------------------------------------------------- rollout
class Rollout:
    """The storage of one rollout: ``(n_steps, n_envs, ...)`` tensors, and GAE on them."""

    def __init__(self, batch: Any, agent: Any, gamma: float) -> None:
        """Takes a :class:`uno_mk_env.training.rollouts.Batch` and adds what the learner
        computes in one batched pass: the log-probabilities of the actions, the values, the
        value of the observations the next rollout starts from, and ``gamma * V(final
        observation)`` on the last reward of a truncated episode (as stable-baselines3 does
        with ``TimeLimit.truncated``)."""
        import torch

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
        import torch

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


def collect(agent: Any, tables: Any, args: Args, stats: dict[str, list[float]]) -> Rollout:
    """One rollout of ``--n-steps`` steps at every table, played where the tables are
    (:mod:`uno_mk_env.training.rollouts`) by a numpy copy of the current actor; the ended
    episodes' return, length and place go to ``stats``."""
    batch = tables.rollout(actor_layers(agent), args.activation, OBS_SCALE, args.n_steps)
    for _, _, ret, length, place in batch.episodes:
        stats["return"].append(ret)
        stats["length"].append(float(length))
        stats["place"].append(float(place))
    return Rollout(batch, agent, args.gamma)


class NonFinite(UnoMkError):  # noqa: N818 - a signal inside the run, never shown as such
    """A loss or the weights became non-finite (NaN or infinite): the run has diverged."""


#: The largest logit a policy that has not diverged gives: far beyond any trained policy's (a few
#: tens), far below the logit illegal actions are masked with (:data:`MASKED_LOGIT`), which a
#: larger legal logit would pass below.
MAX_LOGIT = 1e6


def check_finite(agent: Any, obs: Any, where: str) -> None:
    """Raises :class:`NonFinite` unless every weight of ``agent`` is finite and its logits and
    values on the observations ``obs`` (the data just learned from) are finite, the logits
    within :data:`MAX_LOGIT`: weights that pass are a policy the env workers can play."""
    import torch

    with torch.no_grad():
        logits, values = agent(obs)
        if not (all(bool(torch.isfinite(p).all()) for p in agent.parameters())
                and bool((logits.abs() <= MAX_LOGIT).all())
                and bool(torch.isfinite(values).all())):
            raise NonFinite(f"weights or outputs not finite, or logits beyond {MAX_LOGIT:g}, "
                            f"{where}")


def update(agent: Any, opt: Any, buf: Rollout, adv: Any, returns: Any, args: Args,
           rng: np.random.Generator, critic_only: bool = False) -> dict[str, float]:
    """``--n-epochs`` epochs of clipped PPO over the rollout in minibatches of
    ``--batch-size`` (``critic_only``: the value loss alone, the actor untouched).

    Raises:
        NonFinite: a minibatch's loss is not finite (before it is applied), or the updated
            weights are not (:func:`check_finite`).
    """
    import torch

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
            if not bool(torch.isfinite(loss)):
                raise NonFinite(f"a non-finite loss ({loss.item()})")
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
    check_finite(agent, b_obs, "after the update")
    var = float(b_ret.var())
    with torch.no_grad():
        explained = 1.0 - float((b_ret - buf.values.reshape(n)).var()) / var if var else 0.0
    return {**{k: float(np.mean(v)) for k, v in out.items()}, "explained_variance": explained}


# --------------------------------------------------------------------------------- running
class Run:
    """The run directory and its bookkeeping: evaluations (``eval.csv``, ``curve.png``,
    ``best.npz``), snapshots, ``progress.csv``; every file written whole (atomically) or, for
    ``progress.csv``, grown by whole lines."""

    def __init__(self, args: Args, run_dir: Path, league: Any, start: float,
                 budget: Budget) -> None:
        self.args = args
        self.dir = run_dir
        self.league = league
        self.start = start
        self.budget = budget
        self.eval_rows: list[dict[str, Any]] = []
        self.best: dict[str, Any] | None = None
        self.latest_score = -1.0
        self.snapshot_score = -1.0
        self.n_snapshots = 0
        self.last_row: dict[str, Any] | None = None
        self.game_seconds: float | None = None  # measured seconds per evaluation game

    def policy(self, agent: Any, name: str, steps: int) -> Path:
        return export(agent, self.args, self.dir / name,
                      {"run_dir": str(self.dir), "timesteps": steps, "backend": "fast"})

    def games_within(self, seconds: float, wanted: int, agent: Any) -> int:
        """Games per opponent (at most ``wanted``) that an evaluation plays in ``seconds``, at
        the speed measured so far (a first measure: ``2 x --num-players`` games against each
        opponent, not recorded); at least ``--num-players`` (one deal, every seat)."""
        a = self.args
        if math.isinf(seconds):
            return wanted
        if self.game_seconds is None:
            path = self.policy(agent, "eval_policy.npz", 0)
            t0 = time.monotonic()
            games = 2 * a.num_players
            for opponent in specs(a.eval_opponents):
                evaluate(str(path), opponent, a.num_players, games, seed=0)
            self.game_seconds = (time.monotonic() - t0) / (games * len(specs(a.eval_opponents)))
        fit = int(seconds / (self.game_seconds * len(specs(a.eval_opponents))))
        return max(a.num_players, min(wanted, fit))

    def evaluate(self, agent: Any, steps: int, games: int, tag: str = "eval") -> list[dict]:
        """As the sb3 backend's callback: every ``--eval-opponents`` agent, the same deals at
        every evaluation (``derive_seed(seed, 1000, i, 0)``; the final one ``..., 1)``)."""
        a = self.args
        path = self.policy(agent, "eval_policy.npz", steps)
        rows = []
        t0 = time.monotonic()
        for i, opponent in enumerate(specs(a.eval_opponents)):
            r = evaluate(str(path), opponent, a.num_players, games,
                         seed=derive_seed(a.seed, 1000, i, int(tag == "final_eval")))
            r.update(timesteps=steps, kind=tag, wall_s=round(time.time() - self.start, 1))
            del r["result"]
            rows.append(r)
        played = sum(r["games"] for r in rows)
        self.game_seconds = (time.monotonic() - t0) / max(played, 1)
        self.eval_rows.extend(rows)
        write_eval_csv(self.eval_rows, self.dir / "eval.csv")
        if tag == "final_eval":  # drawing costs seconds: the curve is drawn once, at the end
            plot_curve(self.eval_rows, a.num_players, self.dir / "curve.png", self.dir.name)
        print(eval_line(tag, steps, rows, time.time() - self.start), flush=True)
        self.latest_score = selection_score(rows, specs(a.eval_opponents)[-1])
        if tag == "eval" and steps > 0 and (self.best is None
                                            or self.latest_score > self.best["score"]):
            copy_file(path, self.dir / "best.npz")
            self.best = {"timesteps": steps, "score": self.latest_score,
                         "opponent": specs(a.eval_opponents)[-1], "players": [a.num_players]}
        return rows

    def eval_seconds(self, games: int) -> float:
        """The measured time of an evaluation of ``games`` per opponent (0 before any)."""
        return (self.game_seconds or 0.0) * games * len(specs(self.args.eval_opponents))

    def snapshot(self, agent: Any, steps: int) -> None:
        """Adds the current policy to every table's league when its latest evaluation did not
        drop (the sb3 backend's rule)."""
        if self.args.eval_every > 0 and self.latest_score < self.snapshot_score:
            return
        self.snapshot_score = self.latest_score
        (self.dir / "snapshots").mkdir(exist_ok=True)
        path = self.policy(agent, f"snapshots/snapshot_{steps}.npz", steps)
        self.n_snapshots += 1
        self.league.add(str(path), derive_seed(self.args.seed, 2000, self.n_snapshots))

    def log(self, row: dict[str, Any]) -> None:
        """Appends ``row`` to ``progress.csv`` (the header first) as one write; a write that
        fails (a full disk) is cut back, so the file only ever holds whole lines."""
        path = self.dir / "progress.csv"
        text = io.StringIO()
        writer = csv.DictWriter(text, fieldnames=list(row), lineterminator="\n")
        if self.last_row is None:
            writer.writeheader()
        writer.writerow(row)
        self.last_row = row
        with path.open("ab", buffering=0) as f:
            size = f.tell()
            try:
                f.write(text.getvalue().encode("utf-8"))
            except OSError:
                f.truncate(size)
                raise


def seeds(args: Args) -> dict[str, str]:
    """How every random stream derives from ``--seed``."""
    return {
        "root": str(args.seed),
        "torch (init), minibatch order": "seed",
        "table i's actions (the learner's draws)": "derive_seed(seed, 4000, i)",
        "table i (deals, seat draws)": "np_random(seed + i)",
        "opponent seat s of table i": "derive_seed(seed, i, s)",
        "behaviour cloning": "derive_seed(seed, 3000..3003)",
        "periodic evaluation vs opponent i": "derive_seed(seed, 1000, i, 0)",
        "final evaluation": "derive_seed(seed, 1000, i, 1)",
        "snapshot k": "derive_seed(seed, 2000, k)",
    }


def shipped_files(args: Args) -> list[Path]:
    """The files ``--save-path`` names (none without it): the policy ``.npz``, its ``.json``
    provenance and its curve (``_curve.csv``, ``_curve.png``)."""
    if not args.save_path:
        return []
    target = Path(args.save_path)
    target = target if target.suffix == ".npz" else target.with_name(target.name + ".npz")
    stem = target.with_suffix("")
    return [target, stem.with_suffix(".json"), stem.parent / f"{stem.name}_curve.csv",
            stem.parent / f"{stem.name}_curve.png"]


def train(args: Args, invocation: str | None = None) -> dict[str, Any]:
    """Trains, evaluates and saves (see the module docstring); returns the summary
    (``run_dir``, ``timesteps``, ``complete``, ``train_seconds``, ``steps_per_second``,
    ``final_eval``, ``best``, ``policy``).

    Raises:
        TrainingError: a refused request (one line; nothing is created): a bad value, an
            output place that cannot be written.
        TrainingDiverged: a loss or the weights became non-finite; the last finite policy is
            the run's ``final.npz`` and ``summary.json`` says when (one line).
    """
    budget = Budget(args.max_minutes)  # the whole command's: checks and cloning included
    args = table_size_defaults(args)
    check_args(args)
    args = whole_rollouts(args)
    check_outputs(args, shipped_files(args))
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):  # BLAS threads thrash on small batches
        return _train(args, invocation, budget)


def _train(args: Args, invocation: str | None, budget: Budget) -> dict[str, Any]:
    import torch

    from .rollouts import ProcessRollouts, TableRollouts

    run_name, run_dir = new_run_dir(args)
    random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.torch_threads)
    tables: Any = (ProcessRollouts(_env_view(args), args.n_envs, args.env_workers)
                   if args.env_workers > 0 else TableRollouts(_env_view(args), args.n_envs))
    try:
        return _run(args, invocation, run_name, run_dir, tables, budget)
    finally:
        tables.close()


@dataclass
class Learning:
    """How far PPO got: learner steps, the last finite weights and optimizer state (``good``,
    after ``good_steps``; kept if the run diverges), the seconds spent in rollouts and updates,
    whether ``--max-minutes`` stopped it and whether it started (else a divergence was
    behaviour cloning's)."""

    good: tuple[dict[str, Any], dict[str, Any]]
    steps: int = 0
    good_steps: int = 0
    train_seconds: float = 0.0
    timed_out: bool = False
    started: bool = False

    def keep(self, agent: Any, opt: Any) -> None:
        """Remembers the current weights and optimizer state as the last finite ones."""
        self.good, self.good_steps = _state(agent, opt), self.steps


def _state(agent: Any, opt: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """A copy of the weights and the optimizer's state (to go back to them)."""
    import copy

    return copy.deepcopy(agent.state_dict()), copy.deepcopy(opt.state_dict())


def _run(args: Args, invocation: str | None, run_name: str, run_dir: Path, tables: Any,
         budget: Budget) -> dict[str, Any]:
    import torch

    agent = make_agent(args)
    if args.init_policy:
        load_actor(agent, initial_actor(args))
    config: dict[str, Any] = {
        "run_name": run_name, "run_dir": str(run_dir), "backend": "fast",
        "args": dataclasses.asdict(args), "command": command_line(PROG, args),
        "invocation": invocation, "git": source_commit(), "versions": versions(),
        "seeds": seeds(args), "start_timesteps": 0, "resume_sha256": None,
        "observation_size": OBS_SIZE,
        "observation_layout": [[p.name, p.size] for p in OBS_PIECES],
        "policy_kwargs": {"net_arch": {"pi": layer_sizes(args), "vf": layer_sizes(args)},
                          "activation_fn": args.activation,
                          "features_extractor_class": "ScaledObservationExtractor"},
    }

    def write_config() -> None:
        write_json(run_dir / "config.json", config)

    write_config()
    run = Run(args, run_dir, tables.league, time.time(), budget)
    opt = torch.optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)
    learning = Learning(good=_state(agent, opt))
    diverged: dict[str, Any] | None = None
    try:
        if args.bc_teacher and not args.init_policy:
            t0 = time.time()
            bc = behaviour_cloning(agent, args, budget)
            bc["seconds"] = round(time.time() - t0, 1)
            config["behaviour_cloning"] = bc
            write_config()
            print(f"behaviour cloning of {args.bc_teacher}: {bc}", flush=True)
            opt = torch.optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)
            learning.keep(agent, opt)
        run.evaluate(agent, 0, run.games_within(Budget.EVAL_SHARE * budget.seconds,
                                                args.eval_games, agent))
        _learn(args, agent, opt, tables, run, learning)
    except NonFinite as e:
        agent.load_state_dict(learning.good[0])
        opt.load_state_dict(learning.good[1])
        at = learning.steps + args.n_envs * args.n_steps if learning.started else 0
        diverged = {"reason": str(e), "at_timesteps": at, "kept_timesteps": learning.good_steps}
    steps = learning.good_steps
    complete = steps == args.total_timesteps and not learning.timed_out and diverged is None
    final_path = run.policy(agent, "final.npz", steps)
    atomic_save(run_dir / "final.pt", lambda f: torch.save(
        {"model": agent.state_dict(), "optimizer": opt.state_dict(), "timesteps": steps}, f))
    final: list[dict[str, Any]] = []
    if diverged is None:
        games = run.games_within(budget.left() - Budget.WRITE_SECONDS, final_games(args), agent)
        final = run.evaluate(agent, steps, games, tag="final_eval")
    summary: dict[str, Any] = {
        "run_dir": str(run_dir), "timesteps": steps, "complete": complete,
        "stopped_by": "diverged" if diverged else "max_minutes" if learning.timed_out
        else "total_timesteps",
        "train_seconds": round(learning.train_seconds, 1),
        "steps_per_second": round(steps / max(learning.train_seconds, 1e-9), 1),
        "final_eval": [{k: r[k] for k in EVAL_COLUMNS if k in r} for r in final],
        "best": run.best,
        "explained_variance": run.last_row["explained_variance"] if run.last_row else None,
        "policy": str(final_path),
    }
    if diverged is not None:
        summary["diverged"] = diverged
    elif args.save_path:
        summary["policy"] = str(ship(args, final_path, config, run, summary, complete))
    write_json(run_dir / "summary.json", summary)
    if diverged is not None:
        what = (f"training diverged at step {diverged['at_timesteps']:,}" if learning.started
                else "behaviour cloning diverged")
        raise TrainingDiverged(
            f"{what} ({diverged['reason']}); "
            f"the last finite policy (step {steps:,}) is {final_path}, and "
            f"{run_dir / 'summary.json'} says so (try a lower "
            f"{'--learning-rate' if learning.started else '--bc-lr'} or --max-grad-norm)")
    return summary


def _learn(args: Args, agent: Any, opt: Any, tables: Any, run: Run,
           learning: Learning) -> None:
    """PPO from the current weights: rollouts, updates, the periodic evaluations, checkpoints
    and snapshots, until ``--total-timesteps`` or the budget's end (less the final
    evaluation's share); ``learning`` follows it.

    Raises:
        NonFinite: the run diverged (``learning`` holds the last finite state).
    """
    budget = run.budget
    rng = np.random.default_rng(args.seed)
    tables.reset(args.seed)
    per_rollout = args.n_envs * args.n_steps
    num_updates = args.total_timesteps // per_rollout
    next_eval = args.eval_every or math.inf
    next_snapshot = args.snapshot_every or math.inf
    next_checkpoint = args.checkpoint_every or math.inf
    stats: dict[str, list[float]] = {"return": [], "length": [], "place": []}
    lines = RateLines("train", args.total_timesteps, "steps", deadline=budget.end,
                      enabled=args.progress)
    final_reserve = Budget.WRITE_SECONDS + min(run.eval_seconds(final_games(args)),
                                               Budget.EVAL_SHARE * budget.seconds)
    learning.started = True
    for i in range(num_updates):
        t0 = time.time()
        if args.anneal_lr:
            opt.param_groups[0]["lr"] = args.learning_rate * (0.1 + 0.9 * (1 - i / num_updates))
        buf = collect(agent, tables, args, stats)
        adv, returns = buf.advantages(args.gamma, args.gae_lambda)
        losses = update(agent, opt, buf, adv, returns, args, rng,
                        critic_only=learning.steps < args.critic_warmup)
        learning.steps += per_rollout
        learning.keep(agent, opt)
        steps, update_seconds = learning.steps, time.time() - t0
        learning.train_seconds += update_seconds
        run.log({"timesteps": steps, "seconds": round(time.time() - run.start, 2),
                 "steps_per_second": round(steps / max(learning.train_seconds, 1e-9), 1),
                 "episodes": len(stats["return"]),
                 "ep_return_mean": float(np.mean(stats["return"][-200:] or [0.0])),
                 "ep_place_mean": float(np.mean(stats["place"][-200:] or [0.0])),
                 "lr": opt.param_groups[0]["lr"], **losses})
        lines.update(steps)
        if steps >= next_eval and steps < args.total_timesteps:
            next_eval += args.eval_every
            if run.eval_seconds(args.eval_games) < budget.left() - final_reserve:
                run.evaluate(agent, steps, args.eval_games)
        if steps >= next_checkpoint:
            next_checkpoint += args.checkpoint_every
            (run.dir / "checkpoints").mkdir(exist_ok=True)
            run.policy(agent, f"checkpoints/policy_{steps}_steps.npz", steps)
        if steps >= next_snapshot:
            next_snapshot += args.snapshot_every
            run.snapshot(agent, steps)
        # Stop when another update would eat into the final evaluation's time.
        if i < num_updates - 1 and budget.left() < update_seconds + final_reserve:
            learning.timed_out = True
            return


def ship(args: Args, final_path: Path, config: dict[str, Any], run: Run,
         summary: dict[str, Any], complete: bool) -> Path:
    """``--save-path``: the policy ``.npz``, its JSON provenance and its curve (CSV, PNG), each
    written atomically."""
    target, info_path, csv_path, png_path = shipped_files(args)
    copy_file(final_path, target)
    info = {"numpy_policy": target.name, "timesteps": summary["timesteps"], **config,
            "complete": complete, "summary": summary,
            "selection": {"method": "the final model of the run"}}
    write_json(info_path, info)
    write_eval_csv(run.eval_rows, csv_path)
    plot_curve(run.eval_rows, args.num_players, png_path,
               f"{target.name}: {args.num_players} players, seed {args.seed}")
    return target


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m uno_mk_env.training.ppo_fast``: 0 when trained, 2 with a one-line error when
    the request is refused, 1 when the run failed (it diverged, an env worker died, a file
    could not be written)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse(Args, argv, PROG, DESCRIPTION)
    quiet_threads(args.torch_threads)
    try:
        summary = train(args, invocation=" ".join([PROG, *argv]))
    except UnoMkError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
