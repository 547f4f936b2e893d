"""Train a MaskablePPO agent (sb3-contrib) for UNO Mario Kart, CleanRL style.

::

    python -m uno_mk_env.training.train_ppo --num-players 2 --total-timesteps 1000000 --seed 1
    python -m uno_mk_env.training.train_ppo --help          # every argument, documented
    python -m uno_mk_env.training.train_ppo --resume runs/<run>/checkpoints/ppo_500000_steps.zip \\
        --total-timesteps 2000000

One learning seat (drawn at random every episode) plays :class:`uno_mk_env.gym_env.
UnoMarioKartGymEnv` against opponents drawn per episode and per seat from a pool: the rule-based
agents given by ``--opponents`` (weighted by ``--opponent-weights``) and, with probability
``--self-play-prob``, a frozen snapshot of the learner itself. A snapshot is taken every
``--snapshot-every`` steps when the learner's latest evaluation is at least as good as the one of
the previous snapshot (so the self-play pool only ever gets stronger); the newest
``--max-snapshots`` are kept.

Every ``--eval-every`` steps the current policy plays a duplicate-deal tournament
(:func:`uno_mk_env.evaluation.tournament.run_tournament`) against each agent of
``--eval-opponents``: at two players one against one, at N players one learner against N-1 copies of
the opponent. Win rates with 95 % Wilson intervals go to TensorBoard (``runs/<run_name>``), to
``eval.csv`` and to a plot. Outputs, all in ``runs/<run_name>/``:

* ``config.json`` (these arguments plus versions), TensorBoard events and ``progress.csv``;
* ``checkpoints/ppo_<steps>_steps.zip`` every ``--checkpoint-every`` steps (+ ``config.json``);
* ``snapshots/`` (the self-play opponents), ``eval.csv``, ``curve.png``;
* ``final.zip`` and ``best.zip`` (best evaluation against the last ``--eval-opponents`` agent).

With ``--save-path models/ppo_2p.zip`` the final model is also written there without its
optimizer state (a few hundred KB instead of ~3x that; training resumed from it starts with a
fresh Adam state), next to ``ppo_2p.npz`` (the policy alone, for play without torch or
unpickling: :func:`uno_mk_env.agents.ppo.export_policy`), ``ppo_2p.json`` (config and final
evaluation), ``ppo_2p_curve.csv`` and ``ppo_2p_curve.png``.

``--resume`` continues a checkpoint with its own architecture and PPO hyperparameters: on the
command line the ones not given are taken from the checkpoint's run, and giving one that
differs is refused (:data:`RESUME_MAY_CHANGE` lists what may change), so ``config.json``
records what runs. It loads the checkpoint with stable-baselines3's loader, which unpickles:
resume only from files you trust.
"""

from __future__ import annotations

import argparse
import ast
import csv
import dataclasses
import inspect
import json
import os
import random
import shutil
import sys
import time
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from uno_mk_env.seeding import derive_seed


@dataclass
class Args:
    exp_name: str = "ppo"
    """the name of this experiment (first part of the run name)"""
    seed: int = 1
    """seed of the experiment (torch, numpy, the envs, the opponent draws)"""
    torch_threads: int = 1
    """torch intra-op threads (1 is fastest for this small MLP; envs get the other cores)"""

    # environment
    num_players: int = 2
    """players at the table (2-10); the learner takes a random seat every episode"""
    reward: str = "win"
    """reward mode of the env: "win" (+1 / -1/(N-1)) or "points" (hand points / 100)"""
    max_steps: int = 2000
    """decisions per episode (all seats) before truncation"""
    n_envs: int = 2
    """parallel environments"""
    vec_env: str = "auto"
    """"subproc" (one process per env), "dummy" (in process) or "auto" (subproc if n_envs > 1)"""

    # opponents
    opponents: str = "strategic,greedy,random"
    """comma-separated agent specs of the opponent pool (see 'uno-mk agents')"""
    opponent_weights: str = "0.45,0.45,0.1"
    """comma-separated sampling weights of --opponents (empty: uniform)"""
    self_play_prob: float = 0.2
    """probability that an opponent seat plays a frozen snapshot of the learner (once one exists)"""
    snapshot_every: int = 100_000
    """steps between self-play snapshots (0: no self-play)"""
    max_snapshots: int = 5
    """snapshots kept in the self-play pool (the oldest is dropped)"""
    snapshot_deterministic: bool = False
    """snapshots play their most likely action instead of sampling from their policy"""

    # algorithm
    total_timesteps: int = 1_000_000
    """total learner decisions to train for (including those of a resumed model)"""
    net_arch: str = "128,128"
    """hidden layer sizes of the policy network (comma-separated)"""
    vf_arch: str = ""
    """hidden layer sizes of the value network (empty: same as --net-arch)"""
    activation: str = "tanh"
    """activation of the hidden layers: "tanh" or "relu\""""
    learning_rate: float = 3e-4
    """Adam learning rate"""
    anneal_lr: bool = True
    """decay the learning rate linearly to 10 % of its value over the run"""
    n_steps: int = 1024
    """steps per environment per rollout"""
    batch_size: int = 512
    """minibatch size"""
    n_epochs: int = 10
    """epochs over each rollout"""
    gamma: float = 0.995
    """discount factor"""
    gae_lambda: float = 0.95
    """lambda of generalised advantage estimation"""
    clip_range: float = 0.2
    """PPO clipping coefficient"""
    ent_coef: float = 0.01
    """entropy bonus coefficient"""
    vf_coef: float = 0.5
    """value loss coefficient"""
    max_grad_norm: float = 0.5
    """gradient clipping norm"""
    critic_state: bool = False
    """asymmetric actor-critic: the value network also sees the perfect-information state()
    of the game (a centralised critic, used in training only); the policy sees only the
    observation, as at the table"""
    target_kl: float = 0.0
    """stop an update early when the approximate KL exceeds this (0: never)"""

    # behaviour cloning (a warm start before PPO)
    bc_teacher: str = ""
    """agent spec to imitate before PPO starts (e.g. "greedy"; empty: start from scratch)"""
    bc_steps: int = 100_000
    """teacher decisions collected (in the training env, against the opponent pool)"""
    bc_epochs: int = 8
    """epochs of supervised training on them (policy: cross-entropy; value: discounted return)"""
    bc_lr: float = 1e-3
    """Adam learning rate of behaviour cloning"""
    bc_smoothing: float = 0.1
    """label smoothing over the legal actions: the clone keeps this much probability off the
    teacher's choice, so that PPO still explores (a pure clone is nearly deterministic)"""

    # evaluation, checkpoints, outputs
    eval_every: int = 50_000
    """steps between evaluations (0: only at the start and the end)"""
    eval_games: int = 1000
    """games per evaluation tournament (duplicate deals, seats rotated)"""
    final_eval_games: int = 4000
    """games per opponent in the final evaluation"""
    eval_opponents: str = "greedy,strategic"
    """comma-separated agents the learner is evaluated against; the last one picks best.zip"""
    checkpoint_every: int = 100_000
    """steps between checkpoints (0: none)"""
    runs_dir: str = "runs"
    """directory of the runs (TensorBoard logs, checkpoints, curves)"""
    save_path: str = ""
    """also write the final model (optimizer state stripped), its config and curve here"""
    max_minutes: float = 0.0
    """stop training (then evaluate and save as usual) after this many minutes (0: no limit)"""
    resume: str = ""
    """a checkpoint .zip to continue training from: its architecture and PPO hyperparameters
    are kept (changing one is refused; see RESUME_MAY_CHANGE); stable-baselines3's loader
    unpickles the file, so resume only from files you trust"""
    progress: bool = True
    """show a progress bar"""
    verbose: int = 0
    """SB3 verbosity (1 prints the training statistics table)"""


# ------------------------------------------------------------------------ argument parsing
def _field_docs(cls: type) -> dict[str, str]:
    """The docstring under each dataclass field (CleanRL style), read from the source."""
    try:
        tree = ast.parse(inspect.getsource(cls))
    except (OSError, TypeError):
        return {}
    body = tree.body[0].body  # type: ignore[attr-defined]
    docs = {}
    for node, nxt in zip(body, body[1:]):
        if (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
                and isinstance(nxt, ast.Expr) and isinstance(nxt.value, ast.Constant)
                and isinstance(nxt.value.value, str)):
            docs[node.target.id] = nxt.value.value
    return docs


def parse_args(argv: Sequence[str] | None = None) -> Args:
    """:class:`Args` from the command line (``--num-players 4``; booleans as ``--x/--no-x``)."""
    try:
        import tyro
    except ImportError:
        tyro = None
    if tyro is not None:
        return tyro.cli(Args, args=argv)
    docs = _field_docs(Args)
    hints = typing.get_type_hints(Args)
    parser = argparse.ArgumentParser(
        prog="python -m uno_mk_env.training.train_ppo",
        description="Train a MaskablePPO agent for UNO Mario Kart (see the module docstring).",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    for f in dataclasses.fields(Args):
        flag = "--" + f.name.replace("_", "-")
        kind = hints[f.name]
        if kind is bool:
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=f.default,
                                help=docs.get(f.name, "").replace("%", "%%"))
        else:
            parser.add_argument(flag, type=kind, default=f.default, metavar=f.name.upper(),
                                help=docs.get(f.name, "").replace("%", "%%"))
    return Args(**vars(parser.parse_args(argv)))


def _ints(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


def _specs(text: str) -> list[str]:
    return [s.strip() for s in text.split(",") if s.strip()]


_seed = derive_seed


# --------------------------------------------------------------------------- opponent pool
class OpponentPool:
    """One opponent seat: at every episode it draws the agent it plays with.

    With probability ``self_play_prob`` (and at least one snapshot in ``snapshots``) it plays a
    uniformly drawn snapshot of the learner, otherwise an agent of ``specs`` drawn with
    ``weights``. ``snapshots`` is a list shared by the seats of one env and filled by
    :class:`SelfPlayEnv`. The draw uses the pool's own generator, seeded at construction (the
    vectorised env resets without a seed after the first episode).
    """

    def __init__(
        self,
        specs: Sequence[str],
        weights: Sequence[float] | None,
        self_play_prob: float,
        snapshots: list[Any],
        seed: int,
    ) -> None:
        # build_agent finds agents of modules not imported yet (e.g. ppo:path opponents).
        from uno_mk_env.evaluation.tournament import build_agent

        self.rng = np.random.default_rng(seed)
        self.agents = [build_agent(spec, seed=_seed(seed, i)) for i, spec in enumerate(specs)]
        w = np.ones(len(specs)) if not weights else np.asarray(weights, dtype=float)
        if len(w) != len(specs) or (w < 0).any() or w.sum() <= 0:
            raise ValueError(f"opponent weights {list(w)} do not fit the opponents {list(specs)}")
        self.weights = w / w.sum()
        self.self_play_prob = self_play_prob
        self.snapshots = snapshots
        self.current = self.agents[0]

    @property
    def needs_observation(self) -> bool:
        return self.current.needs_observation

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        if self.snapshots and self.rng.random() < self.self_play_prob:
            self.current = self.snapshots[int(self.rng.integers(len(self.snapshots)))]
        else:
            self.current = self.agents[int(self.rng.choice(len(self.agents), p=self.weights))]
        self.current.reset(int(self.rng.integers(2**63)))

    def act(self, observation: np.ndarray | None, action_mask: np.ndarray, view: Any) -> int:
        return self.current.act(observation, action_mask, view)


def make_self_play_env(args: Args, rank: int) -> Any:
    """The training env of worker ``rank``: the gym env with one :class:`OpponentPool` per
    opponent seat, wrapped so that the trainer can add snapshots (``add_snapshot``)."""
    import gymnasium

    from uno_mk_env.gym_env import UnoMarioKartGymEnv
    from uno_mk_env.observation import encode_state, state_high

    class SelfPlayEnv(gymnasium.Wrapper):
        """Adds :meth:`add_snapshot`; ``action_masks`` is reached through the wrapper."""

        def __init__(self, env: UnoMarioKartGymEnv, snapshots: list[Any]) -> None:
            super().__init__(env)
            self.snapshots = snapshots

        def action_masks(self) -> np.ndarray:
            return self.env.action_masks()

        def add_snapshot(self, path: str, seed: int) -> int:
            from uno_mk_env.agents.ppo import PPOAgent

            self.snapshots.append(
                PPOAgent(path, seed=seed, deterministic=args.snapshot_deterministic)
            )
            del self.snapshots[:-args.max_snapshots]
            return len(self.snapshots)

    class WithState(gymnasium.ObservationWrapper):
        """Appends the game's perfect-information ``encode_state`` to the learner's observation
        (``--critic-state``: the input of ``AsymmetricActorCriticPolicy``, whose actor reads
        only the observation part)."""

        def __init__(self, env: SelfPlayEnv) -> None:
            super().__init__(env)
            base = env.unwrapped
            high = np.concatenate([base.observation_space.high, state_high(base.rules)])
            self.observation_space = gymnasium.spaces.Box(0.0, high, high.shape, np.float32)

        def observation(self, observation: np.ndarray) -> np.ndarray:
            return np.concatenate([observation, encode_state(self.env.unwrapped.game)])

        def action_masks(self) -> np.ndarray:
            return self.env.action_masks()

    specs = _specs(args.opponents)
    weights = [float(x) for x in args.opponent_weights.split(",") if x.strip()]
    snapshots: list[Any] = []
    pools = [
        OpponentPool(specs, weights, args.self_play_prob, snapshots, _seed(args.seed, rank, seat))
        for seat in range(args.num_players - 1)
    ]
    env = UnoMarioKartGymEnv(
        num_players=args.num_players, opponents=pools, reward=args.reward,
        max_steps=args.max_steps,
    )
    wrapped = SelfPlayEnv(env, snapshots)
    return WithState(wrapped) if args.critic_state else wrapped


def make_env(args: Args, rank: int) -> Callable[[], Any]:
    """A thunk building env ``rank`` (CleanRL's ``make_env``), with episode statistics."""

    def thunk() -> Any:
        from stable_baselines3.common.monitor import Monitor

        return Monitor(make_self_play_env(args, rank))

    return thunk


# ----------------------------------------------------------------------- behaviour cloning
def collect_demonstrations(args: Args) -> dict[str, np.ndarray]:
    """``args.bc_steps`` decisions of ``args.bc_teacher`` in the learner's seat of a training env
    (opponents from the pool, no self-play): observations, masks, actions, the discounted
    return that followed each decision and the index of its episode."""
    from uno_mk_env.evaluation.tournament import build_agent

    env = make_self_play_env(args, rank=10_000)
    base = env.unwrapped
    teacher = build_agent(args.bc_teacher, seed=_seed(args.seed, 3000))
    rng = np.random.default_rng(_seed(args.seed, 3001))
    obs_l, mask_l, act_l, ret_l, ep_l = [], [], [], [], []
    obs, _ = env.reset(seed=_seed(args.seed, 3002))
    teacher.reset(int(rng.integers(2**63)))
    episode: list[float] = []
    while True:
        mask = env.action_masks()
        action = teacher.act(obs, mask.astype(np.int8), base.game.view(base.seat))
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
            if len(act_l) >= args.bc_steps:
                break
            obs, _ = env.reset()
            teacher.reset(int(rng.integers(2**63)))
    return {"obs": np.asarray(obs_l, np.float32), "masks": np.asarray(mask_l, bool),
            "actions": np.asarray(act_l, np.int64), "returns": np.asarray(ret_l, np.float32),
            "episodes": np.asarray(ep_l, np.int64)}


def behaviour_cloning(model: Any, args: Args) -> dict[str, float]:
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
    rng = np.random.default_rng(_seed(args.seed, 3003))
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
            taught = log_p.gather(1, t["actions"][idx, None]).squeeze(1)
            spread = (log_p * masks).sum(1) / masks.sum(1)  # mean log-prob of the legal actions
            eps = args.bc_smoothing
            values = policy.predict_values(obs).flatten()
            loss = -((1 - eps) * taught + eps * spread).mean() + 0.5 * (
                torch.nn.functional.mse_loss(values, t["returns"][idx])
            )
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


# ------------------------------------------------------------------------------ evaluation
def evaluate(
    model_path: str, opponent: str, num_players: int, games: int, seed: int, workers: int = 1
) -> dict[str, Any]:
    """Win rate of ``ppo:model_path`` against ``opponent`` (one learner and ``num_players - 1``
    copies of it), duplicate deals with rotated seats."""
    from uno_mk_env.evaluation.tournament import run_tournament

    specs = [f"ppo:{model_path}"] + [opponent] * (num_players - 1)
    result = run_tournament(specs, num_players, games=games, seed=seed, workers=workers)
    row = next(r for r in result.leaderboard() if r["agent"] == specs[0])
    return {
        "opponent": opponent, "games": row["games"], "wins": row["wins"],
        "win_rate": row["win_rate"], "ci_low": row["win_ci_low"], "ci_high": row["win_ci_high"],
        "mean_reward": row["mean_reward"], "result": result,
    }


#: ``kind`` is ``eval`` (periodic, ``--eval-games``) or ``final_eval`` (``--final-eval-games``).
EVAL_COLUMNS = ["timesteps", "kind", "opponent", "games", "wins", "win_rate", "ci_low", "ci_high",
                "wall_s"]


def write_eval_csv(rows: Sequence[dict[str, Any]], path: Path) -> None:
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=EVAL_COLUMNS, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)


def read_eval_csv(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        r.setdefault("kind", "eval")
        for key in ("timesteps", "games", "wins"):
            r[key] = int(r[key])
        for key in ("win_rate", "ci_low", "ci_high", "wall_s"):
            r[key] = float(r[key])
    return rows


def plot_curve(rows: Sequence[dict[str, Any]], num_players: int, path: Path, title: str) -> None:
    """Eval win rate (95 % CI band) per opponent over training steps, as a PNG."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7, 4), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    for opponent in dict.fromkeys(r["opponent"] for r in rows):
        mine = [r for r in rows if r["opponent"] == opponent]
        pts = sorted((r for r in mine if r.get("kind", "eval") == "eval"),
                     key=lambda r: r["timesteps"])
        x = [r["timesteps"] for r in pts]
        line, = ax.plot(x, [r["win_rate"] for r in pts], marker="o", ms=3,
                        label=f"vs {opponent}")
        ax.fill_between(x, [r["ci_low"] for r in pts], [r["ci_high"] for r in pts],
                        color=line.get_color(), alpha=0.2)
        for r in mine:
            if r.get("kind") == "final_eval":
                ax.errorbar([r["timesteps"]], [r["win_rate"]], fmt="*", ms=10,
                            color=line.get_color(),
                            yerr=[[r["win_rate"] - r["ci_low"]], [r["ci_high"] - r["win_rate"]]],
                            label=f"final vs {opponent} ({r['games']} games)")
    ax.axhline(1 / num_players, color="grey", ls="--", lw=1, label=f"equal share 1/{num_players}")
    ax.set_xlabel("training steps (learner decisions)")
    ax.set_ylabel("learner win rate (95% Wilson CI)")
    ax.set_ylim(0, 1)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", fontsize="small")
    ax.set_title(title, fontsize="medium")
    fig.savefig(path, dpi=100)


def _make_callback(args: Args, run_dir: Path, eval_rows: list[dict[str, Any]], vec_env: Any,
                   start_time: float) -> Any:
    from stable_baselines3.common.callbacks import BaseCallback

    class EvalAndSelfPlay(BaseCallback):
        """Periodic evaluation (TensorBoard + eval.csv + curve.png, best.zip) and self-play
        snapshots, both on the learner's step count."""

        def __init__(self) -> None:
            super().__init__()
            self.next_eval = 0
            self.next_snapshot = 0
            self.snapshot_score = -1.0
            self.best_score = -1.0
            self.latest_score = -1.0
            self.n_snapshots = 0

        def _on_training_start(self) -> None:
            now = self.num_timesteps
            if args.eval_every > 0:
                self.next_eval = now + args.eval_every
            if args.snapshot_every > 0:
                self.next_snapshot = now + args.snapshot_every
            if not any(r["timesteps"] == now for r in eval_rows):
                self.evaluate(args.eval_games)

        def _on_step(self) -> bool:
            if args.eval_every > 0 and self.num_timesteps >= self.next_eval:
                self.next_eval += args.eval_every
                self.evaluate(args.eval_games)
            if args.snapshot_every > 0 and self.num_timesteps >= self.next_snapshot:
                self.next_snapshot += args.snapshot_every
                self.snapshot()
            return not (args.max_minutes > 0 and time.time() - start_time > 60 * args.max_minutes)

        def evaluate(self, games: int, tag: str = "eval") -> list[dict[str, Any]]:
            path = run_dir / "eval_model.zip"
            self.model.save(path)
            rows = []
            for i, opponent in enumerate(_specs(args.eval_opponents)):
                # The same deals at every evaluation: differences between points of the curve
                # are then about the policy, not the cards (common random numbers).
                r = evaluate(str(path), opponent, args.num_players, games,
                             seed=_seed(args.seed, 1000, i, int(tag == "final_eval")))
                r.update(timesteps=self.num_timesteps, kind=tag, wall_s=time.time() - start_time)
                del r["result"]
                rows.append(r)
                name = opponent.replace(":", "_")
                self.logger.record(f"{tag}/win_rate_vs_{name}", r["win_rate"])
                self.logger.record(f"{tag}/win_ci_low_vs_{name}", r["ci_low"])
                self.logger.record(f"{tag}/win_ci_high_vs_{name}", r["ci_high"])
            self.logger.dump(self.num_timesteps)
            eval_rows.extend(rows)
            write_eval_csv(eval_rows, run_dir / "eval.csv")
            plot_curve(eval_rows, args.num_players, run_dir / "curve.png", run_dir.name)
            self.latest_score = rows[-1]["win_rate"]
            if tag == "eval" and self.latest_score > self.best_score:
                self.best_score = self.latest_score
                shutil.copyfile(path, run_dir / "best.zip")
            return rows

        def snapshot(self) -> None:
            # Only a learner at least as strong as the previous snapshot joins the pool.
            if args.eval_every > 0 and self.latest_score < self.snapshot_score:
                return
            self.snapshot_score = self.latest_score
            path = run_dir / "snapshots" / f"snapshot_{self.num_timesteps}.zip"
            path.parent.mkdir(exist_ok=True)
            self.model.save(path)
            self.add(str(path))

        def add(self, path: str) -> None:
            self.n_snapshots += 1
            sizes = vec_env.env_method("add_snapshot", path, _seed(args.seed, 2000,
                                                                   self.n_snapshots))
            if getattr(self, "model", None) is not None:  # not yet set when resuming
                self.logger.record("self_play/snapshots", sizes[0])

    return EvalAndSelfPlay()


# ---------------------------------------------------------------------------------- resume
class TrainingError(ValueError):
    """A training request that is refused before anything is created (a missing or unreadable
    checkpoint, nothing left to train, a hyperparameter a resumed model cannot change); one
    line."""


#: Arguments that may differ from the checkpoint's run on ``--resume``: they are read from the
#: arguments of every run (environment, opponents, self-play, evaluation, checkpoints, outputs,
#: the step budget). The others (:data:`RESUME_FIXED`) belong to the model: its architecture,
#: its PPO hyperparameters and how it was started (behaviour cloning does not run on resume).
RESUME_MAY_CHANGE = frozenset({
    "exp_name", "seed", "torch_threads", "num_players", "reward", "max_steps", "n_envs",
    "vec_env", "opponents", "opponent_weights", "self_play_prob", "snapshot_every",
    "max_snapshots", "snapshot_deterministic", "total_timesteps", "eval_every", "eval_games",
    "final_eval_games", "eval_opponents", "checkpoint_every", "runs_dir", "save_path",
    "max_minutes", "resume", "progress", "verbose",
})
RESUME_FIXED = tuple(f.name for f in dataclasses.fields(Args) if f.name not in RESUME_MAY_CHANGE)


def _checkpoint_hyperparameters(data: dict[str, Any]) -> dict[str, Any]:
    """The :data:`RESUME_FIXED` values a checkpoint's ``data`` JSON tells (read as JSON and
    literals only, never unpickled)."""
    import re

    from uno_mk_env.agents.ppo import sb3_literal

    def number(v: Any) -> bool:
        return isinstance(v, (int, float)) and not isinstance(v, bool)

    out: dict[str, Any] = {}
    for key in ("n_steps", "batch_size", "n_epochs"):
        if isinstance(data.get(key), int) and not isinstance(data.get(key), bool):
            out[key] = data[key]
    for key in ("gamma", "gae_lambda", "ent_coef", "vf_coef", "max_grad_norm"):
        if number(data.get(key)):
            out[key] = float(data[key])
    if "target_kl" in data and (data["target_kl"] is None or number(data["target_kl"])):
        out["target_kl"] = float(data["target_kl"] or 0.0)
    clip = data.get("clip_range")
    if number(clip):
        out["clip_range"] = float(clip)
    elif isinstance(clip, dict):
        m = re.fullmatch(r"ConstantSchedule\(val=([-+0-9.eE]+)\)",
                         str(clip.get("value_schedule", "")))
        if m:
            out["clip_range"] = float(m[1])
    if number(data.get("learning_rate")):  # a constant rate (an annealed one is a function)
        out["learning_rate"], out["anneal_lr"] = float(data["learning_rate"]), False
    kwargs = data.get("policy_kwargs")
    if isinstance(kwargs, dict):
        net_arch = sb3_literal(kwargs.get("net_arch"))
        if isinstance(net_arch, dict) and isinstance(net_arch.get("pi"), list):
            pi, vf = net_arch["pi"], net_arch.get("vf", net_arch["pi"])
            out["net_arch"] = ",".join(map(str, pi))
            out["vf_arch"] = "" if vf == pi else ",".join(map(str, vf))
        elif isinstance(net_arch, list):
            out["net_arch"], out["vf_arch"] = ",".join(map(str, net_arch)), ""
        m = re.fullmatch(r"<class 'torch\.nn\.modules\.activation\.(Tanh|ReLU)'>",
                         str(kwargs.get("activation_fn", "<class 'torch.nn.modules.activation."
                                                          "Tanh'>")))
        if m:
            out["activation"] = m[1].lower()
        out["critic_state"] = "actor_size" in kwargs
    return out


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def _first_run_args(checkpoint: Path) -> dict[str, Any]:
    """The arguments of the run that created the model of ``checkpoint``: the config of its run
    (``config.json`` of its run directory, else the ``.json`` of an exported model), followed
    back through ``resume`` to the first run of the chain, whose model arguments every resumed
    run kept (an export's JSON lists the chain in ``resumed_from``). Empty when unknown."""
    from uno_mk_env.agents.ppo import resolve_model_path

    config = _read_json(run_dir_of(checkpoint) / "config.json") or _read_json(
        checkpoint.with_suffix(".json"))
    if config is None:
        return {}
    chain = config.get("resumed_from")
    if isinstance(chain, list) and chain and isinstance(chain[-1], dict):
        config = chain[-1]
    seen: set[Path] = set()
    while isinstance(config.get("args"), dict) and config["args"].get("resume"):
        try:
            previous = run_dir_of(resolve_model_path(config["args"]["resume"])) / "config.json"
        except (FileNotFoundError, OSError, TypeError):
            break
        earlier = _read_json(previous)
        if earlier is None or previous in seen:
            break
        seen.add(previous)
        config = earlier
    args = config.get("args")
    return args if isinstance(args, dict) else {}


def resume_source(resume: str) -> tuple[Path, int, dict[str, Any]]:
    """The checkpoint of ``--resume``, its step count and what is known of the arguments it
    was trained with (:data:`RESUME_FIXED`), read without unpickling: the arguments of the run
    that created it (:func:`_first_run_args`), overridden by what the checkpoint's own ``data``
    JSON tells.

    Raises:
        TrainingError: the file is missing or is not a stable-baselines3 model.
    """
    from uno_mk_env.agents.ppo import ModelFileError, resolve_model_path, sb3_data

    try:
        path = resolve_model_path(resume)
        data = sb3_data(path)
    except FileNotFoundError:
        raise TrainingError(f"--resume {resume!r}: checkpoint not found (from {Path.cwd()})"
                            ) from None
    except ModelFileError as e:
        raise TrainingError(f"--resume: {e}") from None
    stored = _first_run_args(path)
    known = {k: stored[k] for k in RESUME_FIXED if k in stored}
    known.update(_checkpoint_hyperparameters(data))
    steps = data.get("num_timesteps")
    return path, steps if isinstance(steps, int) else 0, known


def _comparable(name: str, values: dict[str, Any]) -> Any:
    value = values[name]
    if name == "net_arch":
        return _ints(str(value))
    if name == "vf_arch":  # empty: the same as net_arch
        return _ints(str(value)) or _ints(str(values.get("net_arch", "")))
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return value


def check_resume_args(args: Args, path: Path, steps: int, known: dict[str, Any]) -> None:
    """Refuses a resume that would not do what ``args`` (and so ``config.json``) says.

    Raises:
        TrainingError: one line listing every :data:`RESUME_FIXED` argument that differs from
            the checkpoint's run (old → new), or saying that the checkpoint already has
            ``--total-timesteps`` steps.
    """
    new = dataclasses.asdict(args)
    old = {**known}
    old.setdefault("bc_teacher", "")  # behaviour cloning does not run on resume
    changed = [
        f"{name} {old[name]!r} → {new[name]!r}"
        for name in RESUME_FIXED
        if name in old and _comparable(name, old) != _comparable(name, {**old, **new})
        and (name != "vf_arch" or old[name] != new[name])  # else told by the net_arch change
    ]
    if changed:
        raise TrainingError(
            f"--resume {path}: {', '.join(changed)}: a resumed model keeps its architecture, "
            "its PPO hyperparameters and its start (only the environment, opponent, self-play, "
            "evaluation, checkpoint, output and step-budget arguments may change: "
            "uno_mk_env.training.train_ppo.RESUME_MAY_CHANGE)"
        )
    if steps >= args.total_timesteps:
        raise TrainingError(
            f"--resume {path}: the checkpoint already has {steps} steps and --total-timesteps is "
            f"{args.total_timesteps}: nothing to train (--total-timesteps counts the "
            "checkpoint's steps too; ask for more)"
        )


def given_fields(argv: Sequence[str]) -> set[str]:
    """The :class:`Args` fields set on a command line (``--n-steps 8``, ``--n_steps=8``,
    ``--no-progress``, or a unique prefix such as ``--n-ste 8``, as argparse allows)."""
    names = [f.name for f in dataclasses.fields(Args)]
    given = set()
    for token in argv:
        if not token.startswith("--"):
            continue
        flag = token[2:].split("=", 1)[0].replace("-", "_")
        for name in (flag, flag[3:] if flag.startswith("no_") else None):
            if name is None:
                continue
            matches = [n for n in names if n == name] or [n for n in names if n.startswith(name)]
            if len(matches) == 1:
                given.add(matches[0])
                break
    return given


def inherit_resume_args(args: Args, given: set[str]) -> Args:
    """``args`` with each :data:`RESUME_FIXED` argument not in ``given`` taken from the
    checkpoint's run when known (so ``--resume X --total-timesteps N`` continues with the
    model's own hyperparameters, and config.json records them); the ones given are checked by
    :func:`check_resume_args`.

    Raises:
        TrainingError: the checkpoint is missing or not a stable-baselines3 model.
    """
    _, _, known = resume_source(args.resume)
    taken = {k: v for k, v in known.items() if k not in given and k in RESUME_FIXED}
    return dataclasses.replace(args, **taken)


# ------------------------------------------------------------------------------------ main
def _versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": sys.version.split()[0]}
    for pkg in ("uno-mk-env", "numpy", "torch", "stable-baselines3", "sb3-contrib", "gymnasium"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            pass
    return out


def run_dir_of(checkpoint: Path) -> Path:
    """The run directory of a checkpoint (``<run>/checkpoints/x.zip`` or ``<run>/x.zip``)."""
    return checkpoint.parent.parent if checkpoint.parent.name == "checkpoints" else (
        checkpoint.parent
    )


def strip_optimizer_and_save(model: Any, path: Path) -> None:
    """Saves ``model`` with a fresh (empty) optimizer state: the Adam moments are two extra
    copies of every weight and are only needed to resume training exactly."""
    policy = model.policy
    saved = policy.optimizer
    policy.optimizer = policy.optimizer_class(
        policy.parameters(), lr=saved.param_groups[0]["lr"], **policy.optimizer_kwargs
    )
    try:
        model.save(path)
    finally:
        policy.optimizer = saved


def train(args: Args) -> dict[str, Any]:
    """Trains, evaluates and saves (see the module docstring); returns a summary dict."""
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import CallbackList, CheckpointCallback
    from stable_baselines3.common.logger import configure
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    from uno_mk_env.evaluation.tournament import check_output_dir

    if args.num_players < 2 or args.n_envs < 1 or args.total_timesteps < 1:
        raise TrainingError("--num-players must be >= 2, --n-envs >= 1 and --total-timesteps "
                            f">= 1, got {args.num_players}, {args.n_envs} and "
                            f"{args.total_timesteps}")
    # Everything that can be refused is checked before a run folder is made.
    if args.resume:
        resume_path, resume_steps, known = resume_source(args.resume)
        check_resume_args(args, resume_path, resume_steps, known)
    target = None
    if args.save_path:
        target = Path(args.save_path)
        if target.suffix != ".zip":
            target = target.with_name(target.name + ".zip")
        stem = target.with_suffix("")
        check_output_dir(target.parent, [target.name, f"{stem.name}.npz", f"{stem.name}.json",
                                         f"{stem.name}_curve.csv", f"{stem.name}_curve.png"])
    check_output_dir(args.runs_dir, [])
    run_name = f"{args.exp_name}_{args.num_players}p__s{args.seed}__{int(time.time())}"
    run_dir = Path(args.runs_dir) / run_name
    run_dir.mkdir(parents=True, exist_ok=True)

    # seeding
    random.seed(args.seed)
    np.random.seed(args.seed)  # noqa: NPY002 - SB3's rollout buffer shuffles with the global one
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.torch_threads)
    # Argument checks of torch.distributions cost ~10 % of a rollout step; the masks are valid.
    torch.distributions.Distribution.set_default_validate_args(False)
    from uno_mk_env.agents.ppo import ScaledObservationExtractor
    from uno_mk_env.observation import OBS_PIECES, OBS_SIZE

    # envs
    thunks = [make_env(args, rank) for rank in range(args.n_envs)]
    use_subproc = args.vec_env == "subproc" or (args.vec_env == "auto" and args.n_envs > 1)
    vec_env = SubprocVecEnv(thunks) if use_subproc else DummyVecEnv(thunks)
    vec_env.seed(args.seed)

    lr: Any = args.learning_rate
    if args.anneal_lr:
        lr0 = args.learning_rate

        def lr(progress_remaining: float) -> float:
            # clamped: a run asked for fewer steps than one rollout goes past the end
            return lr0 * (0.1 + 0.9 * min(max(progress_remaining, 0.0), 1.0))

    # The PPO hyperparameters, applied to a resumed model too (they were checked against the
    # checkpoint's above), so that config.json records what runs.
    hyper: dict[str, Any] = dict(
        learning_rate=lr, n_steps=args.n_steps, batch_size=args.batch_size,
        n_epochs=args.n_epochs, gamma=args.gamma, gae_lambda=args.gae_lambda,
        clip_range=args.clip_range, ent_coef=args.ent_coef, vf_coef=args.vf_coef,
        max_grad_norm=args.max_grad_norm, target_kl=args.target_kl or None,
        verbose=args.verbose,
    )
    eval_rows: list[dict[str, Any]] = []
    if args.resume:
        model = MaskablePPO.load(resume_path, env=vec_env, device="cpu", **hyper)
        model.set_random_seed(args.seed)
        # Keep the earlier run's curve and self-play pool when the checkpoint sits in a run dir.
        old_run = run_dir_of(resume_path)
        if (old_run / "eval.csv").is_file():
            eval_rows = [r for r in read_eval_csv(old_run / "eval.csv")
                         if r["timesteps"] <= model.num_timesteps]
    else:
        pi = _ints(args.net_arch)
        vf = _ints(args.vf_arch) if args.vf_arch else pi
        activation = {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU}[args.activation]
        policy: Any = "MlpPolicy"
        policy_kwargs: dict[str, Any] = {
            "net_arch": {"pi": pi, "vf": vf}, "activation_fn": activation,
            "features_extractor_class": ScaledObservationExtractor,
        }
        if args.critic_state:
            from uno_mk_env.agents.ppo import AsymmetricActorCriticPolicy

            policy = AsymmetricActorCriticPolicy
            policy_kwargs["actor_size"] = OBS_SIZE
        model = MaskablePPO(policy, vec_env, policy_kwargs=policy_kwargs, seed=args.seed,
                            device="cpu", **hyper)
    model.set_logger(configure(str(run_dir), ["tensorboard", "csv"]
                               + (["stdout"] if args.verbose else [])))

    config = {
        "run_name": run_name, "run_dir": str(run_dir), "args": dataclasses.asdict(args),
        "command": "python -m uno_mk_env.training.train_ppo " + " ".join(sys.argv[1:]),
        "versions": _versions(),
        "observation_size": int(model.observation_space.shape[0]),
        # A checkpoint only fits the layout it was trained on (DESIGN.md §5 pieces, in order).
        "observation_layout": [[p.name, p.size] for p in OBS_PIECES],
        "policy_kwargs": {k: (v.__name__ if isinstance(v, type) else v)
                          for k, v in model.policy_kwargs.items()},
    }
    (run_dir / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    if args.bc_teacher and not args.resume:
        t0 = time.time()
        bc = behaviour_cloning(model, args)
        bc["seconds"] = round(time.time() - t0, 1)
        config["behaviour_cloning"] = bc
        (run_dir / "config.json").write_text(json.dumps(config, indent=2) + "\n")
        print(f"behaviour cloning of {args.bc_teacher}: {bc}", flush=True)
    callbacks: list[Any] = []
    start = time.time()
    callback = _make_callback(args, run_dir, eval_rows, vec_env, start)
    callbacks.append(callback)
    if args.checkpoint_every > 0:
        ckpt_dir = run_dir / "checkpoints"
        ckpt_dir.mkdir(exist_ok=True)
        (ckpt_dir / "config.json").write_text(json.dumps(config, indent=2) + "\n")
        callbacks.append(CheckpointCallback(
            save_freq=max(1, args.checkpoint_every // args.n_envs), save_path=str(ckpt_dir),
            name_prefix="ppo",
        ))
    if args.resume and args.snapshot_every > 0:
        old_snapshots = sorted((old_run / "snapshots").glob("snapshot_*.zip"),
                               key=lambda p: int(p.stem.split("_")[1]))
        for path in old_snapshots[-args.max_snapshots:]:
            callback.add(str(path))

    start_steps = model.num_timesteps
    remaining = args.total_timesteps - start_steps
    if remaining > 0:
        model.learn(remaining, callback=CallbackList(callbacks), progress_bar=args.progress,
                    reset_num_timesteps=not args.resume)
    train_seconds = time.time() - start
    steps_done = model.num_timesteps - start_steps

    model.save(run_dir / "final.zip")
    callback.evaluate(args.final_eval_games, tag="final_eval")
    final = [r for r in eval_rows if r["timesteps"] == model.num_timesteps][-len(
        _specs(args.eval_opponents)):]
    vec_env.close()
    summary = {
        "run_dir": str(run_dir), "timesteps": model.num_timesteps,
        "train_seconds": round(train_seconds, 1),
        "steps_per_second": round(steps_done / max(train_seconds, 1e-9), 1),
        "final_eval": [{k: r[k] for k in EVAL_COLUMNS if k in r} for r in final],
    }
    (run_dir / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    if target is not None:
        from uno_mk_env.agents.ppo import export_policy

        target.parent.mkdir(parents=True, exist_ok=True)
        strip_optimizer_and_save(model, target)
        export_policy(target, target.with_suffix(".npz"), provenance={
            "run_dir": str(run_dir), "timesteps": int(model.num_timesteps)})
        stem = target.with_suffix("")
        (stem.parent / f"{stem.name}.json").write_text(
            json.dumps({**config, "summary": summary}, indent=2) + "\n"
        )
        write_eval_csv(eval_rows, stem.parent / f"{stem.name}_curve.csv")
        plot_curve(eval_rows, args.num_players, stem.parent / f"{stem.name}_curve.png",
                   f"{target.name}: {args.num_players} players, seed {args.seed}")
    return summary


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m uno_mk_env.training.train_ppo``: 0 when trained, 2 with a one-line error when the
    request is refused (a missing checkpoint, nothing left to train, a changed hyperparameter
    on ``--resume``, an output place that cannot be written)."""
    from uno_mk_env.evaluation.tournament import OutputPathError

    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(argv)
    os.environ.setdefault("OMP_NUM_THREADS", str(args.torch_threads))
    try:
        if args.resume:
            args = inherit_resume_args(args, given_fields(argv))
        summary = train(args)
    except (TrainingError, OutputPathError) as e:
        print(f"python -m uno_mk_env.training.train_ppo: error: {e}", file=sys.stderr)
        return 2
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
