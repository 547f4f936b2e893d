"""The RLlib configuration of a run: the env's ``env_config``, the ``PPOConfig`` (the env, one
:class:`~uno_mk_env.training.rllib.module.MaskedActorCritic` for ``main`` and each league
slot, the league mapping, the mask check) and the behaviour-cloning warm start of the
RLModule. Imports Ray."""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Sequence
from typing import Any, cast

from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModuleSpec

from .. import args as _args
from .args import Args
from .callbacks import MaskCheckCallback
from .env import UnoMultiAgentEnv
from .league import LEARNER_AGENT, MAIN, LeagueMapping, league_modules
from .module import MaskedActorCritic

__all__ = ["behaviour_cloning_warm_start", "build_config", "env_config"]


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


class _SB3PolicyView:
    """What :func:`uno_mk_env.training.behaviour_cloning.behaviour_cloning` uses of an SB3
    policy, over a :class:`MaskedActorCritic`: its parameters, the masked action distribution,
    the values and the value layers (for early stopping)."""

    def __init__(self, module: Any) -> None:
        self.module = module
        self.mlp_extractor = types.SimpleNamespace(value_net=module.vf[:-1])
        self.value_net = module.vf[-1]

    def parameters(self) -> Any:
        return self.module.parameters()

    def get_distribution(self, obs: Any, action_masks: Any) -> Any:
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
    from .. import train_ppo
    from ..behaviour_cloning import behaviour_cloning

    env = UnoMultiAgentEnv({"num_players": args.num_players})
    module = cast(MaskedActorCritic, RLModuleSpec(  # build() makes a module_class
        module_class=MaskedActorCritic,
        observation_space=env.get_observation_space(LEARNER_AGENT.format(0)),
        action_space=env.get_action_space(LEARNER_AGENT.format(0)),
        model_config={"hidden": _args.ints(args.net_arch), "activation": args.activation},
    ).build())
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

