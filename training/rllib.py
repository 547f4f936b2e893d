"""Multi-agent PPO on Ray RLlib: self-play for any table size, from a laptop to a Ray cluster.

::

    uno-mk train --backend rllib --num-players 4 --total-timesteps 2000000
    python -m uno_mk_env.training.rllib --help                    # every argument
    python -m uno_mk_env.training.rllib --address 10.0.0.5:6379 --num-env-runners 32
    python -m uno_mk_env.training.rllib --resume runs/<run>/checkpoints/000500000 \\
        --total-timesteps 4000000

**Embedded or on a cluster.** Without ``--address`` (and without ``RAY_ADDRESS`` in the
environment) a local Ray starts on this machine (``ray.init()``) with all its cores;
``--address HOST:PORT`` joins a running cluster (started with ``ray start --head``, see the
README, "Running on a cluster"). ``--num-env-runners`` (default: the cluster's CPUs minus one
for the learner), ``--envs-per-runner`` and ``--num-learners`` scale sampling and learning.
The driver (this process) holds the learner when ``--num-learners 0`` (the default), runs the
evaluations and writes every output; env runners only sample.

**The env as RLlib sees it** (:class:`UnoMultiAgentEnv`, a ``MultiAgentEnv``). The PettingZoo
AEC env is turn based: exactly one seat decides at a time and the same seat may decide several
times in a row (a colour after its own W4, a Green Shell target, a Skip's extra turn). RLlib's
``PettingZooEnv`` wrapper passes only the decider's reward at each step and gives the final
observation to one agent at a time, so this module drives the engine itself, as the Gymnasium
wrapper does: each ``step`` returns the observation of the next decider only, a reward entry for
every RLlib agent of the table (zero-sum ``reward="win"`` or ``"points"``, the project's
:func:`uno_mk_env.rewards.round_rewards`), and at the end of the game an observation for every
agent with ``terminated`` (or ``truncated`` after ``--max-steps`` decisions) for all. RLlib's
``MultiAgentEpisode`` keeps each agent's action "hanging" until that agent's next observation and
sums the rewards it gets in between, which is exactly the AEC semantics (``last()``'s reward is
the sum since the agent last acted). Observations are the env's ``{"observation": float32[437],
"action_mask": int8[73]}``.

**Seats.** Every seat of the table is an RLlib agent of one shared, action-masked policy, the
learner (RLModule ``main``), unless drawn otherwise for the episode by the env's own generator:
with ``--league-prob`` a seat other than the one guaranteed learner seat is a *league* seat, played
by a frozen snapshot of the learner; with ``--opponent-prob`` it is played inside the env by a
rule-based agent of ``--opponents`` (fixed opponents, invisible to RLlib). A learner seat is
the agent ``player_<seat>``, a league seat ``league_<seat>``; the policy mapping function
(:class:`LeagueMapping`) sends ``player_*`` to ``main`` and each ``league_*`` to a snapshot drawn
for that episode (``main`` itself while the league is empty).

**League.** As in RLlib's self-play examples (a ``main`` module trained, frozen copies of it as
opponents, the mapping function changed as the league grows), with the league's slots
allocated up front: ``--league-size`` modules ``league_0 … league_{K-1}``, never trained
(``policies_to_train=["main"]``), so that a checkpoint always holds the same modules. Every
``--snapshot-every`` steps the learner's weights are copied into the next slot (the oldest is
overwritten once all are filled) when its latest evaluation against the last
``--eval-opponents`` agent is at least as good as at the previous snapshot, and the env
runners get the new mapping function.

**The mask is honoured.** :class:`MaskedActorCritic` (a ``TorchRLModule`` with
``ValueFunctionAPI``, after RLlib's action-masking example) sets the logits of masked actions
to ``-1e8`` before any distribution is built, so their probability is exactly 0 when sampling,
when acting greedily and in the loss. The env refuses a masked action (the engine raises
``IllegalActionError``), and every finished episode is checked again by a callback against the
masks RLlib recorded: ``masked_actions`` (always 0) and ``checked_actions`` in the results,
``progress.csv`` and TensorBoard; a run stops with an error if ``masked_actions`` is ever
positive.

**A trained policy is an agent.** The learner's actor (``x * input_scale``, then the hidden
``Linear`` + activation layers, then the logits layer) is written with
:func:`uno_mk_env.agents.ppo.write_policy` as the project's policy ``.npz``, which
``ppo:PATH`` plays with numpy alone: no Ray, no torch, no unpickling
(``uno-mk tournament --agents ppo:runs/<run>/final.npz,strategic``).

**Evaluation.** Every ``--eval-every`` env steps the exported policy plays a duplicate-deal
tournament (:func:`uno_mk_env.evaluation.tournament.run_tournament`, through
:func:`uno_mk_env.training.curves.evaluate`) against each ``--eval-opponents`` agent, one
policy seat against ``N - 1`` copies of the opponent; win rates with 95 % Wilson intervals go to
TensorBoard, ``eval.csv`` and ``curve.png`` as in the stable-baselines3 path.

Outputs, all in ``runs/<run_name>/``: ``config.json``, ``progress.csv`` and TensorBoard events
(``tensorboard --logdir runs``), ``eval.csv``, ``curve.png``, ``checkpoints/<steps>/`` (RLlib
checkpoints plus ``uno_mk.json``, every ``--checkpoint-every`` steps and at the end),
``final.npz`` and ``best.npz`` (best evaluation against the last ``--eval-opponents`` agent),
``summary.json`` (``complete``: whether the run reached ``--total-timesteps`` rather than
stopping on ``--max-minutes``). With ``--save-path models/rllib_2p.npz`` the final policy is
also written there with ``rllib_2p.json`` (command, config, commit, versions, ``complete``,
evaluation), ``rllib_2p_curve.csv`` and ``rllib_2p_curve.png``. The last line printed is
``agent: ppo:<final .npz>``.

``--resume`` restores an RLlib checkpoint (weights, optimizer, league, step counters) with
RLlib's own loader, which unpickles parts of the checkpoint: resume only from files you trust.
The model and PPO arguments are taken from the checkpoint's run; giving a different one is
refused (:data:`RESUME_FIXED`).

RLlib runs are not bit-for-bit reproducible (env runners sample concurrently, and episode ids,
from which the league mapping draws, are random); the deals are seeded per env from ``--seed``.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import json
import os
import shutil
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from uno_mk_env.seeding import derive_seed

from . import args as _args
from .args import TrainingError

#: The Ray version this module was tested with (the ``rllib`` extra pins it).
RAY_VERSION = "2.60.0"
#: Module id of the learner; league modules are ``league_0`` ... (see :class:`LeagueMapping`).
MAIN = "main"
LEAGUE_MODULE = "league_{}"
#: Agent ids: a learner seat and a league seat (see the module docstring).
LEARNER_AGENT = "player_{}"
LEAGUE_AGENT = "league_{}"
#: Logit given to masked actions (as sb3-contrib's MaskableCategorical): probability exactly 0.
MASKED_LOGIT = -1e8
PROG = "uno-mk train --backend rllib"


@dataclass
class Args:
    exp_name: str = "rllib_ppo"
    """the name of this experiment (first part of the run name)"""
    seed: int = 1
    """seed of the experiment (torch, the envs' deals and seat draws, the evaluations)"""
    torch_threads: int = 1
    """torch intra-op threads of the driver (learner) process"""

    # cluster
    address: str = ""
    """Ray cluster to join, HOST:PORT of its head (empty: $RAY_ADDRESS if set, else start a
    local Ray on this machine)"""
    num_cpus: int = 0
    """CPUs of the local Ray started without --address (0: all of this machine's)"""
    num_env_runners: int = -1
    """env runner actors that sample (-1: the cluster's CPUs minus one for the learner, at
    least 1; 0: sample in the driver process)"""
    envs_per_runner: int = 8
    """environments each env runner steps (vectorised: one forward pass for all of them)"""
    num_learners: int = 0
    """learner actors (0: learn in the driver process; n > 0: n learner actors, data-parallel)"""

    # environment
    num_players: int = 2
    """players at the table (2-10)"""
    reward: str = "win"
    """reward mode of the env: "win" (+1 / -1/(N-1)) or "points" (hand points / 100)"""
    max_steps: int = 2000
    """decisions per episode (all seats) before truncation"""

    # opponents
    league_size: int = 4
    """frozen snapshots of the learner kept as opponents (0: pure self-play)"""
    league_prob: float = 0.3
    """probability that a seat other than the guaranteed learner seat is a league seat"""
    snapshot_every: int = 200_000
    """env steps between league snapshots (taken when the latest evaluation did not drop)"""
    opponents: str = ""
    """comma-separated rule-based agents played inside the env as fixed opponents (e.g.
    "greedy,strategic"; empty: none)"""
    opponent_prob: float = 0.0
    """probability that a seat other than the guaranteed learner seat is one of --opponents"""

    # algorithm
    total_timesteps: int = 1_000_000
    """env steps (decisions of all seats played by RLlib modules) to train for, counting those of
    a resumed checkpoint; RLlib samples whole training batches, so the run stops at the end of
    the first iteration that reaches it (``complete`` in ``summary.json``)"""
    net_arch: str = "256,256"
    """hidden layer sizes of the policy and the value networks (comma-separated)"""
    activation: str = "tanh"
    """activation of the hidden layers: "tanh" or "relu\""""
    learning_rate: float = 3e-4
    """Adam learning rate"""
    train_batch_size: int = 8000
    """env steps per training iteration (per learner)"""
    minibatch_size: int = 512
    """minibatch size"""
    num_epochs: int = 6
    """epochs over each training batch"""
    gamma: float = 0.995
    """discount factor"""
    gae_lambda: float = 0.95
    """lambda of generalised advantage estimation"""
    clip_param: float = 0.2
    """PPO clipping coefficient"""
    entropy_coeff: float = 0.01
    """entropy bonus coefficient"""
    vf_loss_coeff: float = 0.5
    """value loss coefficient"""
    grad_clip: float = 0.5
    """gradient clipping norm"""

    # behaviour cloning (a warm start before PPO)
    bc_teacher: str = ""
    """agent to imitate before PPO starts (e.g. "strategic"; empty: start from scratch); the
    sb3 path's behaviour cloning (uno_mk_env.training.behaviour_cloning) fits the RLModule"""
    bc_steps: int = 100_000
    """teacher decisions collected (the teacher in one seat, --opponents or greedy,strategic in
    the others)"""
    bc_epochs: int = 8
    """epochs of supervised training on them"""
    bc_lr: float = 1e-3
    """Adam learning rate of behaviour cloning"""
    bc_smoothing: float = 0.1
    """label smoothing over the legal actions (keeps the clone exploring)"""

    # evaluation, checkpoints, outputs
    eval_every: int = 100_000
    """env steps between evaluations (0: only at the start and the end)"""
    eval_games: int = 1000
    """games per evaluation tournament (duplicate deals, seats rotated)"""
    final_eval_games: int = 4000
    """games per opponent in the final evaluation"""
    eval_opponents: str = "greedy,strategic"
    """comma-separated agents the learner is evaluated against; the last one picks best.npz and
    gates league snapshots"""
    eval_workers: int = 1
    """processes of each evaluation tournament"""
    checkpoint_every: int = 500_000
    """env steps between RLlib checkpoints (0: only at the end)"""
    runs_dir: str = "runs"
    """directory of the runs (TensorBoard logs, checkpoints, curves)"""
    save_path: str = ""
    """also write the final policy .npz here, with its .json provenance and its curve"""
    max_minutes: float = 0.0
    """stop training (then evaluate and save as usual) after this many minutes (0: no limit)"""
    resume: str = ""
    """an RLlib checkpoint directory of this module (runs/<run>/checkpoints/<steps>) to continue;
    RLlib's loader unpickles parts of it, so resume only from files you trust"""
    progress: bool = True
    """print a progress line per training iteration"""


#: Arguments a resumed run may change; the others (:data:`RESUME_FIXED`) belong to the model and
#: its optimisation and are taken from the checkpoint's run.
RESUME_MAY_CHANGE = frozenset({
    "exp_name", "seed", "torch_threads", "address", "num_cpus", "num_env_runners",
    "envs_per_runner", "num_learners", "league_prob", "snapshot_every", "opponents",
    "opponent_prob", "total_timesteps", "eval_every", "eval_games", "final_eval_games",
    "eval_opponents", "eval_workers", "checkpoint_every", "runs_dir", "save_path", "max_minutes",
    "resume", "progress", "max_steps", "num_players", "reward",
})
RESUME_FIXED = tuple(f.name for f in dataclasses.fields(Args) if f.name not in RESUME_MAY_CHANGE)


# ------------------------------------------------------------------------ argument parsing
def build_parser(prog: str = PROG) -> argparse.ArgumentParser:
    """The command line of :func:`main`: one ``--flag`` per :class:`Args` field (booleans as
    ``--x/--no-x``), each documented."""
    return _args.build_parser(
        Args, prog, "Multi-agent PPO self-play on Ray RLlib, on this machine or on a Ray "
        "cluster (see the docstring of uno_mk_env.training.rllib).")


def parse_args(argv: Sequence[str] | None = None) -> Args:
    return Args(**vars(build_parser().parse_args(argv)))


def check_args(args: Args) -> None:
    """Refuses arguments that cannot run, each with a one-line reason.

    Raises:
        TrainingError: the first bad argument, naming its value and what is allowed.
    """
    _check_model_args(args)
    _check_ranges(args)
    if args.opponent_prob > 0 and not _args.specs(args.opponents):
        raise _bad("opponents", args.opponents, "--opponent-prob > 0 needs at least one agent")
    if args.minibatch_size > args.train_batch_size:
        raise _bad("minibatch_size", args.minibatch_size,
                   f"must be <= --train-batch-size ({args.train_batch_size})")
    if not _args.specs(args.eval_opponents):
        raise _bad("eval_opponents", args.eval_opponents, "needs at least one agent")
    _args.check_agent_specs(args, ("opponents", "eval_opponents", "bc_teacher"))


def _bad(name: str, value: Any, allowed: str) -> TrainingError:
    """The error of :func:`check_args` for the argument ``name`` given ``value``."""
    return TrainingError(f"--{name.replace('_', '-')} {value!r}: {allowed}")


def _check_model_args(args: Args) -> None:
    """Refuses a table size, reward mode, activation or ``--net-arch`` that does not exist."""
    from uno_mk_env.rewards import REWARD_MODES
    from uno_mk_env.rules import MAX_PLAYERS, MIN_PLAYERS

    if not MIN_PLAYERS <= args.num_players <= MAX_PLAYERS:
        raise _bad("num_players", args.num_players, f"must be {MIN_PLAYERS}-{MAX_PLAYERS}")
    if args.reward not in REWARD_MODES:
        raise _bad("reward", args.reward, f"must be one of {', '.join(REWARD_MODES)}")
    if args.activation not in ("tanh", "relu"):
        raise _bad("activation", args.activation, "must be tanh or relu")
    try:
        hidden = _args.ints(args.net_arch)
    except ValueError:
        hidden = [0]
    if not hidden or min(hidden) < 1:
        raise _bad("net_arch", args.net_arch, "must be comma-separated positive layer sizes")


def _check_ranges(args: Args) -> None:
    """Refuses counts and probabilities out of their ranges."""
    _args.check_ranges(
        args,
        at_least_one=("max_steps", "total_timesteps", "train_batch_size", "minibatch_size",
                      "num_epochs", "eval_games", "final_eval_games", "eval_workers",
                      "envs_per_runner", "bc_steps", "bc_epochs"),
        non_negative=("league_size", "snapshot_every", "eval_every", "checkpoint_every",
                      "num_learners", "num_cpus"),
        unit=("league_prob", "opponent_prob", "gamma", "gae_lambda"))
    if args.num_env_runners < -1:
        raise _bad("num_env_runners", args.num_env_runners, "must be >= 0, or -1 for automatic")
    if args.league_prob + args.opponent_prob > 1.0:
        raise TrainingError(f"--league-prob {args.league_prob} + --opponent-prob "
                            f"{args.opponent_prob} exceed 1")


# -------------------------------------------------------------------------- league mapping
class LeagueMapping:
    """RLlib's ``policy_mapping_fn`` (agent id, episode) -> module id: a learner seat
    (``player_<seat>``) is always ``main``; a league seat (``league_<seat>``) is one of the
    ``league`` modules, drawn for the episode and seat from a generator seeded by the episode's
    id (``main`` while the league is empty). A plain class, so that Ray can ship it to env
    runners."""

    def __init__(self, league: Sequence[str] = ()) -> None:
        self.league = list(league)

    def __call__(self, agent_id: Any, episode: Any = None, **kwargs: Any) -> str:
        name = str(agent_id)
        if not self.league or not name.startswith("league_"):
            return MAIN
        seat = int(name.rsplit("_", 1)[1])
        episode_id = getattr(episode, "id_", "0")
        rng = np.random.default_rng([int(str(episode_id), 16) % 2**63, seat])
        return self.league[int(rng.integers(len(self.league)))]

    def __repr__(self) -> str:
        return f"LeagueMapping({self.league!r})"


# ------------------------------------------------------------------------ Ray-backed classes
class _UnoMultiAgentEpisodes:
    """The episodes of :class:`UnoMultiAgentEnv` (``reset``, ``step`` and what they use): a
    plain class, so that this module does not import Ray; :func:`_make_env_class` derives the
    env from it and RLlib's ``MultiAgentEnv``, and its ``__init__`` sets the attributes used
    here."""

    # -------------------------------------------------------------- episode
    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[dict, dict]:
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        rng = self._rng
        n = self.num_players
        while True:
            self._draw_seats(rng)
            self.game = self._game_cls(self.rules, seed=int(rng.integers(2**63)))
            self._steps = 0
            self._play_fixed()
            if not self._over():
                break
        agent = self._seat_agent[self.game.current_player]
        self.agents = [a for a in self._seat_agent if a is not None]
        del n
        return {agent: self._obs(self.game.current_player)}, {}

    def _draw_seats(self, rng: np.random.Generator) -> None:
        n = self.num_players
        learner = int(rng.integers(n))
        for seat in range(n):
            self._seat_fixed[seat] = None
            role = "learner"
            if seat != learner:
                u = rng.random()
                if u < self.opponent_prob:
                    role = "fixed"
                elif u < self.opponent_prob + self.league_prob:
                    role = "league"
            if role == "fixed":
                agents = self._fixed[seat]
                agent = agents[int(rng.integers(len(agents)))]
                agent.reset(int(rng.integers(2**63)))
                self._seat_fixed[seat] = agent
                self._seat_agent[seat] = None
            else:
                ids = self.learner_ids if role == "learner" else self.league_ids
                self._seat_agent[seat] = ids[seat]

    def step(self, action_dict: dict[Any, Any]) -> tuple[dict, dict, dict, dict, dict]:
        game = self.game
        seat = game.current_player
        agent = self._seat_agent[seat]
        if agent not in action_dict or len(action_dict) != 1:
            raise ValueError(f"expected an action for {agent} only (the decider), got "
                             f"{sorted(map(str, action_dict))}")
        action = int(action_dict[agent])
        legal = game.legal_action_ids()
        if action not in legal:
            raise self._illegal(
                f"{agent} took the masked action {action} in phase '{game.phase_name}' "
                f"(legal: {list(legal)}): the RLModule did not apply the action mask")
        rewards = dict.fromkeys(self.agents, 0.0)
        self._apply(action, rewards)
        self._play_fixed(rewards)
        if self._over():
            terminated = bool(game.game_over)
            obs = {a: self._obs(s) for s, a in enumerate(self._seat_agent) if a is not None}
            flags = dict.fromkeys(self.agents, True)
            flags["__all__"] = True
            other = dict.fromkeys(self.agents, False)
            other["__all__"] = False
            info = {"winner": game.winner, "steps": self._steps}
            infos = {a: info for a in self.agents}
            if terminated:
                return obs, rewards, flags, other, infos
            return obs, rewards, other, flags, infos
        decider = game.current_player
        nxt = self._seat_agent[decider]
        return ({nxt: self._obs(decider)}, rewards, {"__all__": False},
                {"__all__": False}, {})

    # -------------------------------------------------------------- internals
    def _obs(self, seat: int) -> dict[str, np.ndarray]:
        game = self.game
        deciding = not self._over() and seat == game.current_player
        return {
            "observation": self._encode(game.view(seat)),
            "action_mask": (self._action_mask(game.legal_action_ids()) if deciding
                            else self._zero_mask),
        }

    def _over(self) -> bool:
        return bool(self.game.game_over) or self._steps >= self.max_steps

    def _apply(self, action: int, rewards: dict[str, float] | None) -> None:
        game = self.game
        game.step(action)
        self._steps += 1
        if game.round_over and rewards is not None:
            values = self._round_rewards(game, self.reward_mode)
            for seat, value in enumerate(values):
                agent = self._seat_agent[seat]
                if value and agent is not None:
                    rewards[agent] += value

    def _play_fixed(self, rewards: dict[str, float] | None = None) -> None:
        """Rule-based seats decide until a RLlib seat does or the episode ends."""
        from uno_mk_env.agents.base import agent_action

        game = self.game
        while not self._over() and self._seat_agent[game.current_player] is None:
            agent = self._seat_fixed[game.current_player]
            self._apply(agent_action(agent, game), rewards)


def _make_env_class() -> type:
    import gymnasium
    from ray.rllib.env.multi_agent_env import MultiAgentEnv

    from uno_mk_env import actions as A
    from uno_mk_env.env import check_env_options
    from uno_mk_env.game import Game, IllegalActionError
    from uno_mk_env.observation import OBS_SIZE, action_mask, encode, observation_high
    from uno_mk_env.rewards import round_rewards
    from uno_mk_env.rules import Rules

    class UnoMultiAgentEnv(_UnoMultiAgentEpisodes, MultiAgentEnv):
        """``uno_mario_kart_v0`` as an RLlib ``MultiAgentEnv`` (see the module docstring).

        ``config`` (RLlib's ``env_config``, an ``EnvContext`` on env runners): ``num_players``,
        ``reward``, ``max_steps``, ``rules`` (rule options), ``seed``, ``league_prob``,
        ``opponents`` (agent specs), ``opponent_prob``. The env's generator is seeded from
        ``seed`` and the env runner's worker and vector indices; ``reset(seed=s)`` reseeds it.
        """

        def __init__(self, config: dict[str, Any] | None = None) -> None:
            super().__init__()
            worker = int(getattr(config, "worker_index", 0))
            vector = int(getattr(config, "vector_index", 0))
            config = dict(config or {})
            self.rules = Rules(num_players=int(config.get("num_players", 2)),
                               **dict(config.get("rules") or {}))
            n = self.num_players = self.rules.num_players
            self.reward_mode = str(config.get("reward", "win"))
            self.max_steps = int(config.get("max_steps", 2000))
            check_env_options(self.reward_mode, self.max_steps, None)
            self.league_prob = float(config.get("league_prob", 0.0))
            self.opponent_prob = float(config.get("opponent_prob", 0.0))
            root = int(config.get("seed", 0))
            self._rng = np.random.default_rng(derive_seed(root, 7, worker, vector))
            specs = [str(s) for s in config.get("opponents") or []]
            from uno_mk_env.evaluation.tournament import build_agent

            # one agent object per seat and spec: rule-based agents remember a game's history
            self._fixed = [[build_agent(spec, seed=derive_seed(root, 8, worker, vector, seat, i))
                            for i, spec in enumerate(specs)] for seat in range(n)]
            self._fixed_names = specs
            self.learner_ids = [LEARNER_AGENT.format(s) for s in range(n)]
            self.league_ids = [LEAGUE_AGENT.format(s) for s in range(n)]
            self.possible_agents = self.learner_ids + self.league_ids
            self.agents = []
            high = observation_high(self.rules)
            space = gymnasium.spaces.Dict({
                "observation": gymnasium.spaces.Box(0.0, high, (OBS_SIZE,), np.float32),
                "action_mask": gymnasium.spaces.Box(0, 1, (A.NUM_ACTIONS,), np.int8),
            })
            self.observation_spaces = dict.fromkeys(self.possible_agents, space)
            self.action_spaces = dict.fromkeys(self.possible_agents,
                                               gymnasium.spaces.Discrete(A.NUM_ACTIONS))
            self._zero_mask = np.zeros(A.NUM_ACTIONS, dtype=np.int8)
            self._encode, self._action_mask = encode, action_mask
            self._round_rewards, self._illegal = round_rewards, IllegalActionError
            self._game_cls = Game
            self.game: Any = None
            self._seat_agent: list[str | None] = [None] * n
            self._seat_fixed: list[Any] = [None] * n
            self._steps = 0

    UnoMultiAgentEnv.__module__ = __name__
    return UnoMultiAgentEnv


def _make_module_class() -> type:
    import torch
    from ray.rllib.core.columns import Columns
    from ray.rllib.core.rl_module.apis import ValueFunctionAPI
    from ray.rllib.core.rl_module.torch import TorchRLModule
    from torch import nn

    from uno_mk_env.agents.ppo import OBS_SCALE

    class MaskedActorCritic(TorchRLModule, ValueFunctionAPI):
        """Actor-critic RLModule for the env's ``{"observation", "action_mask"}`` dict
        (after RLlib's ``ActionMaskingTorchRLModule`` example): ``pi`` and ``vf`` are separate
        MLPs over ``observation * scale`` (the per-piece input scale of the stable-baselines3
        path, :data:`uno_mk_env.agents.ppo.OBS_SCALE`); masked actions get the logit
        ``MASKED_LOGIT`` in every forward pass. ``model_config``: ``hidden`` (layer sizes) and
        ``activation`` (``"tanh"``/``"relu"``). The actor's layout is what
        :func:`export_module` writes as a policy ``.npz``."""

        def setup(self) -> None:
            config = dict(self.model_config or {})
            hidden = [int(h) for h in config.get("hidden", [256, 256])]
            activation = {"tanh": nn.Tanh, "relu": nn.ReLU}[config.get("activation", "tanh")]
            space = self.observation_space
            inputs = int(space["observation"].shape[0]) if hasattr(space, "spaces") else int(
                space.shape[0])
            outputs = int(self.action_space.n)

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

    MaskedActorCritic.__module__ = __name__
    return MaskedActorCritic


def _make_callback_class() -> type:
    from ray.rllib.callbacks.callbacks import RLlibCallback

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

    MaskCheckCallback.__module__ = __name__
    return MaskCheckCallback


_LAZY = {
    "UnoMultiAgentEnv": _make_env_class,
    "MaskedActorCritic": _make_module_class,
    "MaskCheckCallback": _make_callback_class,
}


def __getattr__(name: str) -> Any:
    # Subclasses of Ray's classes are created on first use (by the driver, or by an env runner
    # unpickling a reference to them), so that importing this module does not import Ray.
    if name in _LAZY:
        cls = _LAZY[name]()
        globals()[name] = cls
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# ------------------------------------------------------------------------------ RLlib config
def env_config(args: Args) -> dict[str, Any]:
    """RLlib's ``env_config`` for :class:`UnoMultiAgentEnv` from the arguments."""
    return {
        "num_players": args.num_players, "reward": args.reward, "max_steps": args.max_steps,
        "seed": args.seed, "league_prob": args.league_prob if args.league_size > 0 else 0.0,
        "opponents": _args.specs(args.opponents), "opponent_prob": args.opponent_prob,
    }


def league_modules(args: Args) -> list[str]:
    return [LEAGUE_MODULE.format(i) for i in range(args.league_size)]


def build_config(args: Args, num_env_runners: int, league: Sequence[str] = ()) -> Any:
    """The ``PPOConfig`` of a run: the multi-agent env, one ``MaskedActorCritic`` for ``main``
    and each league slot, only ``main`` trained, :class:`LeagueMapping` over the filled slots
    ``league``."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    this = sys.modules[__name__]
    module_class = this.MaskedActorCritic
    model_config = {"hidden": _args.ints(args.net_arch), "activation": args.activation}
    modules = [MAIN, *league_modules(args)]
    specs = {m: RLModuleSpec(module_class=module_class, model_config=model_config)
             for m in modules}
    return (
        PPOConfig()
        # RLlib's env checker steps random actions of the action space, ignoring the mask;
        # this env refuses them (the engine raises), so the check is left out.
        .environment(this.UnoMultiAgentEnv, env_config=env_config(args),
                     disable_env_checking=True)
        .env_runners(
            num_env_runners=num_env_runners,
            num_envs_per_env_runner=args.envs_per_runner,
            num_cpus_per_env_runner=1,
            rollout_fragment_length="auto",
        )
        .learners(num_learners=args.num_learners, num_cpus_per_learner=1)
        .training(
            lr=args.learning_rate, gamma=args.gamma, lambda_=args.gae_lambda,
            clip_param=args.clip_param, entropy_coeff=args.entropy_coeff,
            vf_loss_coeff=args.vf_loss_coeff, grad_clip=args.grad_clip,
            train_batch_size_per_learner=args.train_batch_size,
            minibatch_size=args.minibatch_size, num_epochs=args.num_epochs,
            vf_clip_param=10.0, use_kl_loss=False,
        )
        .multi_agent(
            policies=set(modules),
            policy_mapping_fn=LeagueMapping(league),
            policies_to_train=[MAIN],
        )
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=specs))
        .callbacks(this.MaskCheckCallback)
        .debugging(seed=args.seed)
    )


# ---------------------------------------------------------------------------- policy files
def actor_layers(state: dict[str, Any]) -> list[tuple[np.ndarray, np.ndarray]]:
    """The actor's ``(W, b)`` layers (``W`` of shape ``(inputs, outputs)``) from the state
    dict of a :class:`MaskedActorCritic` (``pi.<i>.weight`` / ``pi.<i>.bias``, torch's
    ``(outputs, inputs)`` layout)."""
    indices = sorted(int(k.split(".")[1]) for k in state
                     if k.startswith("pi.") and k.endswith(".weight"))
    return [(np.asarray(state[f"pi.{i}.weight"], np.float32).T.copy(),
             np.asarray(state[f"pi.{i}.bias"], np.float32).copy()) for i in indices]


def export_module(state: dict[str, Any], activation: str, destination: str | Path,
                  provenance: dict[str, Any] | None = None) -> Path:
    """Writes the actor of a :class:`MaskedActorCritic` state dict as the project's policy
    ``.npz`` (:func:`uno_mk_env.agents.ppo.write_policy`): its input scale, hidden layers and
    logits layer; the agent ``ppo:PATH`` plays it with numpy alone."""
    from uno_mk_env.agents.ppo import write_policy

    return write_policy(actor_layers(state), activation, destination,
                        scale=np.asarray(state["scale"], np.float32),
                        provenance={"trainer": "ray-rllib", **(provenance or {})})


# ------------------------------------------------------------------------ behaviour cloning
class _SB3PolicyView:
    """What :func:`uno_mk_env.training.behaviour_cloning.behaviour_cloning` uses of an SB3
    policy, over a :class:`MaskedActorCritic`: its parameters, the masked action distribution,
    the values and the value layers (for early stopping)."""

    def __init__(self, module: Any) -> None:
        import types

        self.module = module
        self.mlp_extractor = types.SimpleNamespace(value_net=module.vf[:-1])
        self.value_net = module.vf[-1]

    def parameters(self) -> Any:
        return self.module.parameters()

    def get_distribution(self, obs: Any, action_masks: Any) -> Any:
        import types

        import torch

        x = obs * self.module.scale
        logits = self.module._masked_logits(x, torch.as_tensor(action_masks))
        return types.SimpleNamespace(distribution=torch.distributions.Categorical(
            logits=logits))

    def predict_values(self, obs: Any) -> Any:
        return self.module.vf(obs * self.module.scale)


def behaviour_cloning_warm_start(algo: Any, args: Args) -> dict[str, Any]:
    """Fits ``main`` to ``--bc-teacher`` with the sb3 path's behaviour cloning (demonstrations
    from its training env: the teacher in one seat, ``--opponents`` or ``greedy,strategic`` in
    the others, no self-play), then gives the weights to the learner and the env runners."""
    import types

    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from . import train_ppo
    from .behaviour_cloning import behaviour_cloning

    env = sys.modules[__name__].UnoMultiAgentEnv({"num_players": args.num_players})
    module = RLModuleSpec(
        module_class=sys.modules[__name__].MaskedActorCritic,
        observation_space=env.observation_spaces[LEARNER_AGENT.format(0)],
        action_space=env.action_spaces[LEARNER_AGENT.format(0)],
        model_config={"hidden": _args.ints(args.net_arch), "activation": args.activation},
    ).build()
    module.set_state(algo.learner_group.get_weights([MAIN])[MAIN])
    demo_args = dataclasses.replace(
        train_ppo.Args(), num_players=args.num_players, reward=args.reward,
        max_steps=args.max_steps, opponents=args.opponents or "greedy,strategic",
        opponent_weights="", self_play_prob=0.0, seed=args.seed, gamma=args.gamma,
        bc_teacher=args.bc_teacher, bc_steps=args.bc_steps, bc_epochs=args.bc_epochs,
        bc_lr=args.bc_lr, bc_smoothing=args.bc_smoothing, max_grad_norm=args.grad_clip)
    module.train()
    report = behaviour_cloning(types.SimpleNamespace(policy=_SB3PolicyView(module)), demo_args)
    module.eval()
    state = {k: v.detach().cpu().numpy() for k, v in module.state_dict().items()}
    algo.learner_group.set_weights({MAIN: state})
    algo.env_runner_group.sync_weights(from_worker_or_learner_group=algo.learner_group,
                                       policies=[MAIN], inference_only=True,
                                       timeout_seconds=60.0)
    return report


# ------------------------------------------------------------------------------------- Ray
def _import_ray() -> Any:
    try:
        import ray
        import ray.rllib  # noqa: F401
    except ImportError as e:
        raise TrainingError(f"the rllib backend needs Ray RLlib ({e}): pip install "
                            f"'uno-mk-env[rllib]' (ray[rllib]=={RAY_VERSION}; install "
                            "torch==2.13.0 first)") from None
    return ray


def connect(args: Args) -> dict[str, Any]:
    """Starts a local Ray or joins the cluster of ``--address`` (else ``$RAY_ADDRESS``) and
    describes it: ``address`` (its GCS address), ``local`` (started by this process),
    ``nodes``, ``cpus`` and ``driver_node``."""
    ray = _import_ray()
    address = args.address or os.environ.get("RAY_ADDRESS", "")
    if address:
        check_reachable(address, "--address" if args.address else "RAY_ADDRESS")
    started = False
    if not ray.is_initialized():
        try:
            if address:
                ray.init(address=address, logging_level="WARNING")
            else:
                ray.init(num_cpus=args.num_cpus or None, include_dashboard=False,
                         logging_level="WARNING")
                started = True
        except (ConnectionError, ValueError, RuntimeError) as e:
            where = f"the Ray cluster at {address!r}" if address else "a local Ray"
            text = " ".join(str(e).split())[:300]
            if address and "RAY_AUTH_MODE" not in os.environ:
                text += (" (a cluster with token authentication, Ray's default when its head "
                         "has a token, needs RAY_AUTH_MODE=token and its token in "
                         "RAY_AUTH_TOKEN or ~/.ray/auth_token: 'ray get-auth-token' on the head)")
            raise TrainingError(f"cannot start or join {where}: {text}") from None
    context = ray.get_runtime_context()
    nodes = [n for n in ray.nodes() if n.get("Alive")]
    return {
        "address": context.gcs_address, "local": started, "requested_address": address,
        "nodes": len(nodes), "cpus": int(ray.cluster_resources().get("CPU", 0)),
        "driver_node": context.get_node_id(),
    }


def check_reachable(address: str, source: str = "--address", timeout: float = 10.0) -> None:
    """Refuses a ``HOST:PORT`` address where nothing accepts a connection (``ray.init`` would
    retry for minutes); other forms (``auto``, ``ray://...``) are left to Ray. ``source`` names
    where the address came from (``--address`` or ``RAY_ADDRESS``).

    Raises:
        TrainingError: the port is closed or the host unknown, in one line.
    """
    import socket

    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit() or "://" in address or not host:
        return
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout):
            pass
    except OSError as e:
        raise TrainingError(
            f"{source} {address!r}: nothing accepts connections there ({e.strerror or e}); "
            f"start the cluster's head with 'ray start --head --port {port}' (see the README, "
            "Running on a cluster)") from None


def resolve_env_runners(args: Args, cpus: int) -> int:
    """``--num-env-runners``, with -1 resolved to the cluster's CPUs less one for the learner
    (and one per learner actor), at least 1."""
    if args.num_env_runners >= 0:
        return args.num_env_runners
    return max(1, cpus - 1 - args.num_learners)


def env_runner_placement(algo: Any) -> list[dict[str, Any]]:
    """Where each remote env runner runs: its node id, host, process id and parent process id
    (on a cluster's node the parent is that node's raylet)."""
    import ray

    def where(runner: Any) -> dict[str, Any]:
        import socket

        return {"node": ray.get_runtime_context().get_node_id(), "host": socket.gethostname(),
                "pid": os.getpid(), "ppid": os.getppid()}

    if algo.env_runner_group.num_remote_env_runners() == 0:
        return []
    return list(algo.env_runner_group.foreach_env_runner(where, local_env_runner=False))


# ------------------------------------------------------------------------------------ league
@dataclass
class League:
    """The league's state: ``slots`` (module ids filled so far, in the order they were first
    filled), ``snapshots`` (snapshots taken), ``score`` (the evaluation score when the last one
    was taken) and ``steps`` (env steps of each filled slot's snapshot)."""

    size: int
    slots: list[str] = dataclasses.field(default_factory=list)
    snapshots: int = 0
    score: float = -1.0
    steps: dict[str, int] = dataclasses.field(default_factory=dict)

    def next_slot(self) -> str:
        return LEAGUE_MODULE.format(self.snapshots % self.size)


def set_league(algo: Any, league: Sequence[str]) -> None:
    """Points the policy mapping function of the algorithm and of every env runner at the
    filled league slots (as ``Algorithm.add_module(new_agent_to_module_mapping_fn=...)`` does);
    episodes already running keep their mapping."""
    mapping = LeagueMapping(league)
    config = algo.config
    config._is_frozen = False  # as Algorithm.add_module does
    config.multi_agent(policy_mapping_fn=mapping)
    config.freeze()

    def update(runner: Any) -> None:
        runner.config.multi_agent(policy_mapping_fn=mapping)

    algo.env_runner_group.foreach_env_runner(update)


def take_snapshot(algo: Any, league: League, steps: int) -> str:
    """Copies ``main``'s weights into the next league slot (learners and env runners) and
    maps league seats over the filled slots; returns the slot."""
    slot = league.next_slot()
    weights = algo.learner_group.get_weights([MAIN])[MAIN]
    algo.learner_group.set_weights({slot: weights})
    algo.env_runner_group.sync_weights(from_worker_or_learner_group=algo.learner_group,
                                       policies=[slot], inference_only=True,
                                       timeout_seconds=60.0)
    if slot not in league.slots:
        league.slots.append(slot)
    league.snapshots += 1
    league.steps[slot] = int(steps)
    set_league(algo, league.slots)
    return slot


# ------------------------------------------------------------------------------ checkpoints
CHECKPOINT_META = "uno_mk.json"


def read_checkpoint(path: str | Path) -> dict[str, Any]:
    """The metadata this module writes next to an RLlib checkpoint (``uno_mk.json``: the run's
    arguments, steps, league, evaluation rows), read as JSON.

    Raises:
        TrainingError: not a checkpoint directory of this module.
    """
    p = Path(path).expanduser()
    meta_path = p / CHECKPOINT_META
    if not meta_path.is_file():
        raise TrainingError(f"--resume {str(path)!r}: not a checkpoint of this backend (no "
                            f"{CHECKPOINT_META} in {p}; checkpoints are "
                            "runs/<run>/checkpoints/<steps>/)")
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise TrainingError(f"--resume {str(path)!r}: unreadable {CHECKPOINT_META} ({e})"
                            ) from None
    if not isinstance(meta, dict) or not isinstance(meta.get("args"), dict):
        raise TrainingError(f"--resume {str(path)!r}: {CHECKPOINT_META} has no 'args'")
    return meta


def resume_args(args: Args, given: set[str]) -> Args:
    """``args`` with the model and PPO arguments (:data:`RESUME_FIXED`) of the checkpoint's
    run; the ones given on the command line must agree.

    Raises:
        TrainingError: a given :data:`RESUME_FIXED` argument differs (old -> new), or the
            checkpoint already has ``--total-timesteps`` steps.
    """
    meta = read_checkpoint(args.resume)
    old = meta["args"]
    changed = [f"{k} {old[k]!r} -> {getattr(args, k)!r}" for k in RESUME_FIXED
               if k in given and k in old and old[k] != getattr(args, k)]
    if changed:
        raise TrainingError(f"--resume {args.resume}: {', '.join(changed)}: a resumed run keeps "
                            "its model, league size and PPO arguments (only those in "
                            "uno_mk_env.training.rllib.RESUME_MAY_CHANGE may change)")
    args = dataclasses.replace(args, **{k: old[k] for k in RESUME_FIXED if k in old})
    if int(meta.get("timesteps", 0)) >= args.total_timesteps:
        raise TrainingError(f"--resume {args.resume}: the checkpoint already has "
                            f"{meta.get('timesteps')} env steps and --total-timesteps is "
                            f"{args.total_timesteps}: nothing to train (it counts the "
                            "checkpoint's steps too)")
    return args


CHECKPOINT_POLICY = "policy.npz"


def save_checkpoint(algo: Any, run_dir: Path, steps: int, meta: dict[str, Any],
                    activation: str) -> Path:
    """``algo.save_to_path(run_dir/checkpoints/<steps>)`` plus ``uno_mk.json`` and the
    learner's policy as ``policy.npz`` (playable, and checked against the restored weights on
    ``--resume``)."""
    path = run_dir / "checkpoints" / f"{steps:09d}"
    algo.save_to_path(str(path.resolve()))
    export_module(algo.learner_group.get_weights([MAIN])[MAIN], activation,
                  path / CHECKPOINT_POLICY, provenance={"timesteps": steps})
    (path / CHECKPOINT_META).write_text(json.dumps({**meta, "timesteps": steps}, indent=2) + "\n",
                                        encoding="utf-8")
    return path


def restored_weights_match(state: dict[str, Any], policy: Path) -> bool | None:
    """Whether the actor of ``state`` is the one saved in ``policy`` (a checkpoint's
    ``policy.npz``); ``None`` when there is no such file."""
    if not policy.is_file():
        return None
    from uno_mk_env.agents.ppo import load_policy

    actor, _ = load_policy(policy)
    mine = actor_layers(state)
    return len(mine) == len(actor.layers) and all(
        np.array_equal(w, w2) and np.array_equal(b, b2)
        for (w, b), (w2, b2) in zip(mine, actor.layers))


# ------------------------------------------------------------------------------- training
#: Columns of ``progress.csv`` (one row per training iteration).
PROGRESS_COLUMNS = [
    "iteration", "timesteps", "agent_steps", "main_steps", "episodes", "wall_s",
    "steps_per_s", "sample_s", "learn_s", "episode_len_mean", "policy_loss", "vf_loss",
    "vf_explained_var", "entropy", "mean_kl", "checked_actions", "masked_actions",
    "league_slots",
]


def _number(value: Any) -> float | None:
    try:
        x = float(value)
    except (TypeError, ValueError):
        return None
    return x if np.isfinite(x) else None


def _total(value: Any) -> float:
    """A number, or the sum of a dict of numbers (RLlib's per-agent counters); 0 if neither."""
    if isinstance(value, dict):
        return sum(_total(v) for v in value.values())
    return _number(value) or 0.0


def iteration_row(result: dict[str, Any], iteration: int, wall: float, steps_per_s: float,
                  league: League) -> dict[str, Any]:
    """A ``progress.csv`` row from an ``Algorithm.train()`` result."""
    runners = result.get("env_runners", {})
    learner = result.get("learners", {}).get(MAIN, {})
    timers = result.get("timers", {})
    return {
        "iteration": iteration,
        "timesteps": int(runners.get("num_env_steps_sampled_lifetime", 0)),
        "agent_steps": int(_total(runners.get("num_agent_steps_sampled_lifetime"))),
        "main_steps": int(_total((runners.get("num_module_steps_sampled_lifetime") or {})
                                 .get(MAIN) if isinstance(runners.get(
                                     "num_module_steps_sampled_lifetime"), dict) else None)),
        "episodes": int(_number(runners.get("num_episodes_lifetime")) or 0),
        "wall_s": round(wall, 1), "steps_per_s": round(steps_per_s, 1),
        "sample_s": _number(timers.get("env_runner_sampling_timer")),
        "learn_s": _number(timers.get("learner_update_timer")),
        "episode_len_mean": _number(runners.get("episode_len_mean")),
        "policy_loss": _number(learner.get("policy_loss")),
        "vf_loss": _number(learner.get("vf_loss")),
        "vf_explained_var": _number(learner.get("vf_explained_var")),
        "entropy": _number(learner.get("entropy")),
        "mean_kl": _number(learner.get("mean_kl_loss")),
        "checked_actions": int(_number(runners.get("checked_actions")) or 0),
        "masked_actions": int(_number(runners.get("masked_actions")) or 0),
        "league_slots": len(league.slots),
    }


class _Outputs:
    """The run directory's files: TensorBoard, ``progress.csv``, ``eval.csv`` and the curve."""

    def __init__(self, run_dir: Path, num_players: int) -> None:
        self.run_dir = run_dir
        self.num_players = num_players
        try:
            from torch.utils.tensorboard import SummaryWriter

            self.writer: Any = SummaryWriter(str(run_dir))
        except ImportError:  # tensorboard is in the 'train' extra
            self.writer = None
        self._progress = (run_dir / "progress.csv").open("a", newline="", encoding="utf-8")
        self._csv = csv.DictWriter(self._progress, fieldnames=PROGRESS_COLUMNS)
        if self._progress.tell() == 0:
            self._csv.writeheader()

    def scalars(self, values: dict[str, Any], step: int, prefix: str) -> None:
        if self.writer is not None:
            for key, value in values.items():
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    self.writer.add_scalar(f"{prefix}/{key}", value, step)

    def progress(self, row: dict[str, Any]) -> None:
        self._csv.writerow(row)
        self._progress.flush()
        self.scalars({k: v for k, v in row.items() if k not in ("iteration", "timesteps")},
                     row["timesteps"], "train")

    def evals(self, rows: list[dict[str, Any]], all_rows: list[dict[str, Any]]) -> None:
        from .curves import plot_curve, write_eval_csv

        for r in rows:
            name = r["opponent"].replace(":", "_")
            self.scalars({f"win_rate_vs_{name}": r["win_rate"],
                          f"win_ci_low_vs_{name}": r["ci_low"],
                          f"win_ci_high_vs_{name}": r["ci_high"]}, r["timesteps"], r["kind"])
        write_eval_csv(all_rows, self.run_dir / "eval.csv")
        plot_curve(all_rows, self.num_players, self.run_dir / "curve.png", self.run_dir.name)
        if self.writer is not None:
            self.writer.flush()

    def close(self) -> None:
        self._progress.close()
        if self.writer is not None:
            self.writer.close()


def _versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    from .provenance import versions

    out = versions()
    try:
        out["ray"] = version("ray")
    except PackageNotFoundError:
        pass
    return out


def _say(text: str) -> None:
    print(text, flush=True)


def train(args: Args, invocation: str | None = None) -> dict[str, Any]:
    """Trains, evaluates and saves (see the module docstring); returns a summary dict whose
    ``policy`` is the final policy ``.npz``.

    Raises:
        TrainingError: a refused request (one line), before anything is written.
    """
    from uno_mk_env.evaluation.tournament import OutputPathError, check_output_dir

    check_args(args)
    meta = read_checkpoint(args.resume) if args.resume else None
    target = None
    names: list[str] = []
    try:
        if args.save_path:
            target = Path(args.save_path)
            if target.suffix != ".npz":
                target = target.with_name(target.name + ".npz")
            stem = target.with_suffix("")
            names = [target.name, f"{stem.name}.json", f"{stem.name}_curve.csv",
                     f"{stem.name}_curve.png"]
            check_output_dir(target.parent, names)
        check_output_dir(args.runs_dir, [])
    except OutputPathError as e:
        raise TrainingError(str(e)) from None
    ray_info = connect(args)
    import ray

    try:
        return _train(args, invocation, meta, target, ray_info)
    finally:
        if ray_info["local"]:
            ray.shutdown()


def _train(args: Args, invocation: str | None, meta: dict[str, Any] | None,
           target: Path | None, ray_info: dict[str, Any]) -> dict[str, Any]:
    import torch

    from .provenance import source_commit

    torch.manual_seed(args.seed)
    torch.set_num_threads(args.torch_threads)
    runners = resolve_env_runners(args, ray_info["cpus"])
    run_name = f"{args.exp_name}_{args.num_players}p__s{args.seed}__{int(time.time())}"
    run_dir = Path(args.runs_dir) / run_name
    run_dir.mkdir(parents=True, exist_ok=True)
    league, eval_rows = _resumed_league(args, meta)
    config = {
        "run_name": run_name, "run_dir": str(run_dir), "args": dataclasses.asdict(args),
        "command": invocation or _args.command_line(PROG, args),
        "backend": "rllib", "versions": _versions(), "git": source_commit(),
        "ray": ray_info, "num_env_runners": runners,
        "resumed_from": str(Path(args.resume).expanduser().resolve()) if meta else None,
    }
    (run_dir / "config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    where = (f"a local Ray ({ray_info['cpus']} CPUs)" if ray_info["local"] else
             f"the Ray cluster at {ray_info['address']} ({ray_info['nodes']} node(s), "
             f"{ray_info['cpus']} CPUs)")
    _say(f"rllib: {where}; {runners} env runner(s) x {args.envs_per_runner} env(s), "
         f"{args.num_learners or 'local'} learner(s); run {run_dir}")

    algo = build_config(args, runners, league.slots).build_algo()
    outputs = _Outputs(run_dir, args.num_players)
    try:
        if meta is not None:
            _restore(algo, args, league, config)
        placement = env_runner_placement(algo)
        config["env_runners"] = placement
        (run_dir / "config.json").write_text(json.dumps(config, indent=2) + "\n",
                                             encoding="utf-8")
        run = _Run(algo, args, run_dir, outputs, league, eval_rows,
                   int(meta.get("timesteps", 0)) if meta else 0)
        start_steps = run.steps
        if args.bc_teacher and meta is None:
            _warm_start(algo, args, run_dir, config)
        if not any(r["timesteps"] == run.steps and r["kind"] == "eval" for r in eval_rows):
            run.run_eval("eval", args.eval_games)
        iteration, row, result = _train_loop(run)
        steps = run.steps
        train_seconds = time.time() - run.start
        last = run.checkpoint()
        final = run.export(run_dir / "final.npz")
        final_rows = run.run_eval("final_eval", args.final_eval_games)
        summary = {
            "run_dir": str(run_dir), "timesteps": steps, "checkpoint": str(last),
            "policy": str(final),
            # False when --max-minutes ended the run before --total-timesteps
            "complete": steps >= args.total_timesteps,
            "train_seconds": round(train_seconds, 1),
            "steps_per_second": round((steps - start_steps) / max(train_seconds, 1e-9), 1),
            "checked_actions": row["checked_actions"] if iteration else 0,
            "masked_actions": row["masked_actions"] if iteration else 0,
            "ray": ray_info, "num_env_runners": runners, "env_runners": placement,
            "league": dataclasses.asdict(league),
            "module_steps": _module_steps(result),
            "resumed_from": config["resumed_from"],
            "resumed_weights_match": config.get("resumed_weights_match"),
            "final_eval": [{k: r[k] for k in r if k != "result"} for r in final_rows],
        }
        (run_dir / "summary.json").write_text(json.dumps(summary, indent=2) + "\n",
                                              encoding="utf-8")
        if target is not None:
            summary["policy"] = str(_ship(run, target, config, summary))
        return summary
    finally:
        outputs.close()
        algo.stop()


def _resumed_league(args: Args, meta: dict[str, Any] | None
                    ) -> tuple[League, list[dict[str, Any]]]:
    """The league and the evaluation rows of the checkpoint ``meta`` (empty ones without)."""
    if meta is None:
        return League(args.league_size), []
    saved = meta.get("league") or {}
    league = League(args.league_size, list(saved.get("slots", [])),
                    int(saved.get("snapshots", 0)), float(saved.get("score", -1.0)),
                    dict(saved.get("steps", {})))
    eval_rows = [r for r in meta.get("eval_rows", [])
                 if int(r["timesteps"]) <= int(meta.get("timesteps", 0))]
    return league, eval_rows


def _restore(algo: Any, args: Args, league: League, config: dict[str, Any]) -> None:
    """Restores the checkpoint of ``--resume`` and checks the restored learner against its
    ``policy.npz`` (``config["resumed_weights_match"]``).

    Raises:
        TrainingError: the restored weights are not the checkpoint's.
    """
    source = Path(args.resume).expanduser().resolve()
    algo.restore_from_path(str(source))
    set_league(algo, league.slots)
    config["resumed_weights_match"] = restored_weights_match(
        algo.learner_group.get_weights([MAIN])[MAIN], source / CHECKPOINT_POLICY)
    if config["resumed_weights_match"] is False:
        raise TrainingError(f"--resume {args.resume}: the restored learner's weights "
                            f"differ from the checkpoint's {CHECKPOINT_POLICY}")


def _warm_start(algo: Any, args: Args, run_dir: Path, config: dict[str, Any]) -> None:
    """Behaviour cloning of ``--bc-teacher`` before PPO, reported in ``config.json``."""
    t0 = time.time()
    _say(f"behaviour cloning of {args.bc_teacher}: {args.bc_steps:,} decisions, "
         f"{args.bc_epochs} epochs")
    bc = behaviour_cloning_warm_start(algo, args)
    bc["seconds"] = round(time.time() - t0, 1)
    config["behaviour_cloning"] = bc
    (run_dir / "config.json").write_text(json.dumps(config, indent=2) + "\n",
                                         encoding="utf-8")
    _say(f"behaviour cloning: {bc}")


class _Run:
    """A run's learner and what it writes as it trains: ``steps`` (env steps so far),
    ``eval_rows`` (every evaluation, those of a resumed checkpoint first), ``best`` and
    ``latest`` (the win rate against the last ``--eval-opponents`` agent at the best and at the
    latest evaluation) and ``start`` (the time training started)."""

    def __init__(self, algo: Any, args: Args, run_dir: Path, outputs: _Outputs,
                 league: League, eval_rows: list[dict[str, Any]], steps: int) -> None:
        self.algo = algo
        self.args = args
        self.run_dir = run_dir
        self.outputs = outputs
        self.league = league
        self.eval_rows = eval_rows
        self.start = time.time()
        self.steps = steps
        self.best = max((r["win_rate"] for r in eval_rows if r["kind"] == "eval"
                         and r["opponent"] == _args.specs(args.eval_opponents)[-1]),
                        default=-1.0)
        self.latest = -1.0

    def main_weights(self) -> dict[str, Any]:
        return self.algo.learner_group.get_weights([MAIN])[MAIN]

    def export(self, path: Path) -> Path:
        args = self.args
        return export_module(self.main_weights(), args.activation, path, provenance={
            "timesteps": self.steps, "run_dir": str(self.run_dir), "seed": args.seed,
            "num_players": args.num_players})

    def run_eval(self, tag: str, games: int) -> list[dict[str, Any]]:
        from .curves import evaluate

        args = self.args
        path = self.export(self.run_dir / "eval_policy.npz")
        rows = []
        for i, opponent in enumerate(_args.specs(args.eval_opponents)):
            # The same deals at every evaluation (common random numbers).
            r = evaluate(str(path), opponent, args.num_players, games,
                         seed=derive_seed(args.seed, 1000, i, int(tag == "final_eval")),
                         workers=args.eval_workers)
            del r["result"]
            r.update(timesteps=self.steps, kind=tag, wall_s=round(time.time() - self.start, 1))
            rows.append(r)
        self.eval_rows.extend(rows)
        self.outputs.evals(rows, self.eval_rows)
        self.latest = rows[-1]["win_rate"]
        if tag == "eval" and self.latest > self.best:
            self.best = self.latest
            shutil.copyfile(path, self.run_dir / "best.npz")
        _say(f"{tag} @ {self.steps:,} env steps: " + ", ".join(
            f"vs {r['opponent']} {r['win_rate']:.3f} [{r['ci_low']:.3f}, "
            f"{r['ci_high']:.3f}] ({r['games']} games)" for r in rows))
        return rows

    def snapshot(self) -> None:
        args, league = self.args, self.league
        # Only a learner at least as strong as at the previous snapshot joins.
        if args.league_size and (not args.eval_every or self.latest >= league.score):
            league.score = self.latest
            slot = take_snapshot(self.algo, league, self.steps)
            _say(f"league: snapshot of main at {self.steps:,} env steps -> {slot} "
                 f"({len(league.slots)}/{args.league_size} slots)")

    def checkpoint(self) -> Path:
        steps, run_dir = self.steps, self.run_dir
        return save_checkpoint(self.algo, run_dir, steps, {
            "args": dataclasses.asdict(self.args), "run_dir": str(run_dir),
            "league": dataclasses.asdict(self.league), "eval_rows": self.eval_rows,
            "checkpoint": str(run_dir / "checkpoints" / f"{steps:09d}"),
        }, self.args.activation)


def _first_due(steps: int, every: int) -> int | None:
    """When an event every ``every`` env steps (0: never) is first due after ``steps``."""
    return steps + every if every else None


def _due(next_at: int | None, steps: int, every: int) -> tuple[bool, int | None]:
    """Whether an event every ``every`` env steps, next due at ``next_at`` (``None``: never),
    is due at ``steps``, and when it is due next."""
    if next_at is None or steps < next_at:
        return False, next_at
    while next_at <= steps:
        next_at += every
    return True, next_at


def _train_loop(run: _Run) -> tuple[int, dict[str, Any] | None, dict[str, Any] | None]:
    """Trains until ``--total-timesteps`` (or ``--max-minutes``), evaluating, taking league
    snapshots and checkpoints on schedule; returns the number of iterations, the last one's
    ``progress.csv`` row and its result (``None`` without iterations)."""
    args, algo = run.args, run.algo
    next_eval = _first_due(run.steps, args.eval_every)
    next_snapshot = _first_due(run.steps, args.snapshot_every)
    next_checkpoint = _first_due(run.steps, args.checkpoint_every)
    iteration = 0
    row = result = None
    last_time, last_steps = time.time(), run.steps
    while run.steps < args.total_timesteps:
        result = algo.train()
        iteration += 1
        now = time.time()
        steps = run.steps = int(result["env_runners"]["num_env_steps_sampled_lifetime"])
        rate = (steps - last_steps) / max(float(result.get("time_this_iter_s") or 0.0)
                                          or now - last_time, 1e-9)
        last_time, last_steps = now, steps
        row = iteration_row(result, iteration, now - run.start, rate, run.league)
        run.outputs.progress(row)
        if row["masked_actions"]:
            raise RuntimeError(f"{row['masked_actions']} masked actions were taken (of "
                               f"{row['checked_actions']} checked): the action mask was "
                               "not honoured")
        if args.progress:
            _say(_progress_line(args, iteration, steps, rate, row, run.league))
        due, next_eval = _due(next_eval, steps, args.eval_every)
        if due:
            run.run_eval("eval", args.eval_games)
        due, next_snapshot = _due(next_snapshot, steps, args.snapshot_every)
        if due:
            run.snapshot()
        due, next_checkpoint = _due(next_checkpoint, steps, args.checkpoint_every)
        if due:
            _say(f"checkpoint: {run.checkpoint()}")
        if args.max_minutes and now - run.start > 60 * args.max_minutes:
            _say(f"--max-minutes {args.max_minutes}: stopping at {steps:,} env steps")
            break
    return iteration, row, result


def _progress_line(args: Args, iteration: int, steps: int, rate: float, row: dict[str, Any],
                   league: League) -> str:
    """The line printed after a training iteration (with ``--progress``)."""
    return (f"iter {iteration} | {steps:,}/{args.total_timesteps:,} env steps | "
            f"{rate:,.0f} steps/s (sample {row['sample_s'] or 0:.1f} s, learn "
            f"{row['learn_s'] or 0:.1f} s) | entropy {row['entropy'] or 0:.3f} "
            f"| vf_ev {row['vf_explained_var'] or 0:.2f} | masked "
            f"{row['masked_actions']}/{row['checked_actions']:,} | league "
            f"{len(league.slots)}/{args.league_size}")


def _module_steps(result: dict[str, Any] | None) -> dict[str, int]:
    """The env steps of each module from the last ``Algorithm.train()`` result (none without
    one)."""
    if result is None:
        return {}
    return {str(k): int(v) for k, v in (result["env_runners"].get(
        "num_module_steps_sampled_lifetime") or {}).items()}


def _ship(run: _Run, target: Path, config: dict[str, Any], summary: dict[str, Any]) -> Path:
    """Writes the final policy to ``--save-path`` with its ``.json`` provenance and its curve
    (``.csv`` and ``.png``); returns the policy."""
    from .curves import plot_curve, write_eval_csv

    args = run.args
    shipped = export_module(run.main_weights(), args.activation, target, provenance={
        "timesteps": run.steps, "seed": args.seed, "num_players": args.num_players,
        "commit": config["git"].get("commit")})
    stem = target.with_suffix("")
    info = {**config, "numpy_policy": shipped.name, "timesteps": run.steps,
            "complete": summary["complete"], "summary": summary}
    (stem.parent / f"{stem.name}.json").write_text(json.dumps(info, indent=2) + "\n",
                                                   encoding="utf-8")
    write_eval_csv(run.eval_rows, stem.parent / f"{stem.name}_curve.csv")
    plot_curve(run.eval_rows, args.num_players, stem.parent / f"{stem.name}_curve.png",
               f"{target.name}: {args.num_players} players, seed {args.seed} (RLlib)")
    return shipped


def main(argv: Sequence[str] | None = None) -> int:
    """``uno-mk train --backend rllib`` / ``python -m uno_mk_env.training.rllib``: 0 when
    trained (the last line printed is ``agent: ppo:<policy .npz>``), 2 with a one-line error
    when the request is refused."""
    import signal

    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(argv)
    os.environ.setdefault("OMP_NUM_THREADS", str(args.torch_threads))
    # SIGTERM ends the run through the finally blocks (the algorithm and a local Ray stopped).
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    try:
        if args.resume:
            args = resume_args(args, _args.given_fields(Args, argv))
        summary = train(args, invocation=" ".join([PROG, *argv]))
    except TrainingError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    finally:
        signal.signal(signal.SIGTERM, previous)
    print(json.dumps(summary, indent=2))
    print(f"agent: ppo:{summary['policy']}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
