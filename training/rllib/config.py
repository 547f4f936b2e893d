"""The RLlib configuration of a run: the env's ``env_config``, the ``PPOConfig`` (the env, one
:class:`~uno_mk_env.training.rllib.module.MaskedActorCritic` for ``main`` and each league
slot, the league mapping, the mask check) and the behaviour-cloning warm start of the
RLModule. Imports Ray."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any, cast

import torch
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModuleSpec

from .. import args as _args
from ..behaviour_cloning import Cloning, behaviour_cloning
from ..envs import Tables
from .args import Args
from .callbacks import MaskCheckCallback
from .env import UnoMultiAgentEnv
from .league import LEARNER_AGENT, MAIN, LeagueMapping, league_modules
from .module import MaskedActorCritic

__all__ = ["RLlibClonable", "behaviour_cloning_warm_start", "build_config", "env_config"]


def env_config(args: Args) -> dict[str, Any]:
    """RLlib's ``env_config`` for :class:`UnoMultiAgentEnv` from the arguments."""
    return {
        "num_players": args.num_players, "reward": args.reward, "max_steps": args.max_steps,
        "seed": args.seed, "league_prob": args.league_prob if args.league_size > 0 else 0.0,
        "opponents": _args.specs(args.opponents), "opponent_prob": args.opponent_prob,
    }


def build_config(args: Args, num_env_runners: int, league: Sequence[str] = ()) -> Any:
    """The ``PPOConfig`` of a run: the multi-agent env, one ``MaskedActorCritic`` for ``main``
    and each league slot, only ``main`` trained, :class:`LeagueMapping` over the filled slots
    ``league``."""
    model_config = {"hidden": _args.ints(args.net_arch), "activation": args.activation}
    modules = [MAIN, *league_modules(args.league_size)]
    specs = {m: RLModuleSpec(module_class=MaskedActorCritic, model_config=model_config)
             for m in modules}
    return (
        PPOConfig()
        # RLlib's env checker steps random actions of the action space, ignoring the mask;
        # this env refuses them (the engine raises), so the check is left out.
        .environment(UnoMultiAgentEnv, env_config=env_config(args),
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
        .callbacks(MaskCheckCallback)
        .debugging(seed=args.seed)
    )


class RLlibClonable:
    """A :class:`MaskedActorCritic` as behaviour cloning's
    :class:`~uno_mk_env.training.behaviour_cloning.Clonable`: its parameters, the masked
    log-probabilities and values of a batch, and its value network's weights."""

    def __init__(self, module: MaskedActorCritic) -> None:
        self.module = module

    def parameters(self) -> Any:
        return self.module.parameters()

    def log_probs_and_values(self, obs: Any, masks: Any) -> tuple[Any, Any]:
        x = obs * self.module.scale
        logits = self.module._masked_logits(x, masks)
        return torch.log_softmax(logits, dim=1), self.module.vf(x).flatten()

    def value_state(self) -> Any:
        return copy.deepcopy(self.module.vf.state_dict())

    def load_value_state(self, state: Any) -> None:
        self.module.vf.load_state_dict(state)


def behaviour_cloning_warm_start(algo: Any, args: Args) -> dict[str, Any]:
    """Fits ``main`` to ``--bc-teacher`` with the behaviour cloning of every backend
    (demonstrations from the training env: the teacher in one seat, ``--opponents`` or
    ``greedy,strategic`` in the others, no self-play), then gives the weights to the learner
    and the env runners.

    Raises:
        NonFinite: the clone diverged (``main`` keeps its weights).
    """
    env = UnoMultiAgentEnv({"num_players": args.num_players})
    module = cast(MaskedActorCritic, RLModuleSpec(  # build() makes a module_class
        module_class=MaskedActorCritic,
        observation_space=env.get_observation_space(LEARNER_AGENT.format(0)),
        action_space=env.get_action_space(LEARNER_AGENT.format(0)),
        model_config={"hidden": _args.ints(args.net_arch), "activation": args.activation},
    ).build())
    module.set_state(algo.learner_group.get_weights([MAIN])[MAIN])
    tables = Tables(num_players=args.num_players, seed=args.seed,
                    opponents=args.opponents or "greedy,strategic", reward=args.reward,
                    max_steps=args.max_steps)
    module.train()
    report = behaviour_cloning(RLlibClonable(module), tables,
                               Cloning.of(args, max_grad_norm=args.grad_clip))
    module.eval()
    state = {k: v.detach().cpu().numpy() for k, v in module.state_dict().items()}
    algo.learner_group.set_weights({MAIN: state})
    algo.env_runner_group.sync_weights(from_worker_or_learner_group=algo.learner_group,
                                       policies=[MAIN], inference_only=True,
                                       timeout_seconds=60.0)
    return report
