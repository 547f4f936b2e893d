"""Multi-agent PPO on Ray RLlib: self-play for any table size, from a laptop to a Ray cluster.

::

    uno-mk train --backend rllib --num-players 4 --total-timesteps 2000000
    python -m uno_mk_env.training.rllib --help                    # every argument
    python -m uno_mk_env.training.rllib --address 10.0.0.5:6379 --num-env-runners 32
    python -m uno_mk_env.training.rllib --resume runs/<run>/checkpoints/000500000 \\
        --total-timesteps 4000000

**Embedded or on a cluster.** Without ``--address`` (and without ``RAY_ADDRESS`` in the
environment) a local Ray starts on this machine (``ray.init()``) with all its cores;
``--address HOST:PORT`` joins a running cluster (started with ``ray start --head``, see
docs/rllib.md, "Running on a cluster"). ``--num-env-runners`` (default: the cluster's CPUs minus one
for the learner), ``--envs-per-runner`` and ``--num-learners`` scale sampling and learning.
The driver (this process) holds the learner when ``--num-learners 0`` (the default), runs the
evaluations and writes every output; env runners only sample.

**The env as RLlib sees it** (:class:`~uno_mk_env.training.rllib.env.UnoMultiAgentEnv`):
RLlib's own ``PettingZooEnv`` over the PettingZoo AEC env ``raw_env``. The env is turn based:
exactly one seat decides at a time and the same seat may decide several times in a row (a
colour after its own W4, a Green Shell target, a Skip's extra turn). Each ``step`` returns the
observation of the next decider with its ``last()`` reward, the AEC env's sum of that agent's
rewards since it last acted (zero-sum ``reward="win"`` or ``"points"``,
:func:`uno_mk_env.engine.rewards.round_rewards`), and at the end of the game an observation and the
remaining reward for every agent, with ``terminated`` (or ``truncated`` after ``--max-steps``
decisions) for all; RLlib's ``MultiAgentEpisode`` adds each reward to the agent's return, so
every agent's return is the env's own (``tests/test_rllib.py`` checks it on seeded 2-, 3- and
4-player games of both reward modes). Observations are the env's ``{"observation":
float32[437], "action_mask": int8[73]}``.

**Seats.** Every seat of the table is an RLlib agent of one shared, action-masked policy, the
learner (RLModule ``main``), unless drawn otherwise for the episode by the env's own generator:
with ``--league-prob`` a seat other than the one guaranteed learner seat is a *league* seat,
played by a frozen snapshot of the learner; with ``--opponent-prob`` it is played inside the env
by a rule-based agent of ``--opponents`` (fixed opponents, invisible to RLlib). A learner seat
is the agent ``player_<seat>``, a league seat ``league_<seat>``; the policy mapping function
(:class:`~uno_mk_env.training.rllib.league.LeagueMapping`) sends ``player_*`` to ``main`` and
each ``league_*`` to a snapshot drawn for that episode (``main`` itself while the league is
empty).

**League.** As in RLlib's self-play examples (a ``main`` module trained, frozen copies of it as
opponents, the mapping function changed as the league grows), with the league's slots
allocated up front: ``--league-size`` modules ``league_0 … league_{K-1}``, never trained
(``policies_to_train=["main"]``), so that a checkpoint always holds the same modules. Every
``--snapshot-every`` steps the learner's weights are copied into the next slot (the oldest is
overwritten once all are filled) when its latest evaluation against the last
``--eval-opponents`` agent is at least as good as at the previous snapshot, and the env
runners get the new mapping function.

**The mask is honoured.** :class:`~uno_mk_env.training.rllib.module.MaskedActorCritic` (a
``TorchRLModule`` with ``ValueFunctionAPI``, after RLlib's action-masking example) sets the
logits of masked actions to ``-1e8`` before any distribution is built, so their probability is
exactly 0 when sampling, when acting greedily and in the loss. The env refuses a masked action
(the engine raises ``IllegalActionError``), and every finished episode is checked again by a
callback against the masks RLlib recorded: ``masked_actions`` (always 0) and ``checked_actions``
in the results, ``progress.csv`` and TensorBoard; a run stops with an error if
``masked_actions`` is ever positive.

**A trained policy is an agent.** The learner's actor (``x * input_scale``, then the hidden
``Linear`` + activation layers, then the logits layer) is written with
:func:`uno_mk_env.agents.policy_file.write_policy` as the project's policy ``.npz``, which
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
stopping on ``--max-minutes``), also printed as a short table at the end. With ``--save-path
models/rllib_2p.npz`` the final policy is also written there with ``rllib_2p.json`` (command,
config, commit, versions, ``complete``, evaluation), ``rllib_2p_curve.csv`` and
``rllib_2p_curve.png``. The last line printed is ``agent: ppo:<final .npz>``.

``--resume`` restores an RLlib checkpoint (weights, optimizer, league, step counters) with
RLlib's own loader, which unpickles parts of the checkpoint: resume only from files you trust.
The model and PPO arguments are taken from the checkpoint's run; giving a different one is
refused (:data:`~uno_mk_env.training.rllib.args.RESUME_FIXED`).

RLlib runs are not bit-for-bit reproducible (env runners sample concurrently, and episode ids,
from which the league mapping draws, are random); the deals are seeded per env from ``--seed``.

**The package**, one module per concern: :mod:`~uno_mk_env.training.rllib.args` (the
arguments and their checks), :mod:`~uno_mk_env.training.rllib.env` (the env),
:mod:`~uno_mk_env.training.rllib.module` (the RLModule), :mod:`~uno_mk_env.training.rllib.
callbacks` (the mask check), :mod:`~uno_mk_env.training.rllib.league` (ids, mapping,
snapshots), :mod:`~uno_mk_env.training.rllib.config` (the ``PPOConfig``, the behaviour-cloning
warm start), :mod:`~uno_mk_env.training.rllib.cluster` (the Ray connection),
:mod:`~uno_mk_env.training.rllib.checkpoints` (checkpoints, policy files, ``--resume``),
:mod:`~uno_mk_env.training.rllib.outputs` (``progress.csv``, TensorBoard, curves) and
:mod:`~uno_mk_env.training.rllib.loop` (the run and :func:`main`). Importing the package does
not import Ray: the Ray-backed names (``UnoMultiAgentEnv``, ``MaskedActorCritic``,
``MaskCheckCallback``, ``build_config``, ...) are imported from their modules on first use.
"""

from __future__ import annotations

import importlib
from typing import Any

from .args import DESCRIPTION, PROG, RESUME_FIXED, RESUME_MAY_CHANGE, Args, check_args, parse_args
from .checkpoints import (
    CHECKPOINT_META,
    CHECKPOINT_POLICY,
    actor_layers,
    export_module,
    read_checkpoint,
    restored_weights_match,
    resume_args,
    save_checkpoint,
)
from .cluster import (
    RAY_VERSION,
    check_reachable,
    connect,
    env_runner_placement,
    resolve_env_runners,
)
from .league import (
    LEAGUE_AGENT,
    LEAGUE_MODULE,
    LEARNER_AGENT,
    MAIN,
    League,
    LeagueMapping,
    league_modules,
    set_league,
    take_snapshot,
)
from .loop import main, train
from .outputs import PROGRESS_COLUMNS, iteration_row

#: Names of the modules that import Ray, imported on first use (``rllib.UnoMultiAgentEnv``).
_RAY_BACKED = {
    "UnoMultiAgentEnv": "env", "MaskedActorCritic": "module", "MASKED_LOGIT": "module",
    "MaskCheckCallback": "callbacks", "build_config": "config", "env_config": "config",
    "behaviour_cloning_warm_start": "config",
}

__all__ = [
    "CHECKPOINT_META", "CHECKPOINT_POLICY", "DESCRIPTION", "LEAGUE_AGENT", "LEAGUE_MODULE",
    "LEARNER_AGENT", "MAIN", "PROG", "PROGRESS_COLUMNS", "RAY_VERSION", "RESUME_FIXED",
    "RESUME_MAY_CHANGE", "Args", "League", "LeagueMapping", "actor_layers", "check_args",
    "check_reachable", "connect", "env_runner_placement", "export_module", "iteration_row",
    "league_modules", "main", "parse_args", "read_checkpoint", "resolve_env_runners",
    "restored_weights_match", "resume_args", "save_checkpoint", "set_league", "take_snapshot",
    "train", *_RAY_BACKED,
]


def __getattr__(name: str) -> Any:
    if name in _RAY_BACKED:
        value = getattr(importlib.import_module(f"{__name__}.{_RAY_BACKED[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
