"""``ppo``: a MaskablePPO policy (sb3-contrib) trained by ``training/train_ppo.py``.

Registered as ``ppo`` with the spec ``ppo:path/to/model.zip`` (the ``.zip`` suffix may be left
out, as SB3 allows). Importing this module does not import torch or stable-baselines3: they are
loaded when a ``ppo`` agent is built, so listing agents or running rule-based tournaments stays
light.

The agent sees the observation vector (:func:`uno_mk_env.observation.encode`) and the action
mask, exactly what the Gymnasium env gave the learner, and plays what
``model.predict(obs, action_masks=mask.astype(bool), deterministic=...)`` would: the most likely
legal action (``deterministic=True``, the default) or a sample from the masked policy.

A checkpoint trained with an asymmetric critic (``train_ppo.py --critic-state``, policy
``AsymmetricActorCriticPolicy``) has observation + state as its input, but its actor reads only
the observation: the agent gives it the observation alone (zero-padded where SB3 wants the full
input), so it never sees hidden information at the table.

Speed: for SB3's standard MLP policy (the one ``train_ppo.py`` builds) the actor's weights are
copied into numpy arrays once and the forward pass runs in numpy, which is ~20x faster per
decision than ``model.predict`` (torch call overhead dominates a batch of one) and keeps
tournaments and self-play opponents cheap. The result is the same action as ``model.predict``
(a test checks it); any other policy architecture falls back to ``model.predict`` itself.
Sampling (``deterministic=False``) draws from the agent's own ``numpy`` generator, so it is
reproducible from the agent's seed (DESIGN.md §6), not from torch's global one.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np

from uno_mk_env import PlayerView
from uno_mk_env import actions as A
from uno_mk_env.observation import OBS_PIECES, OBS_SIZE, STATE_PIECES, STATE_SIZE

from .base import Agent, register

# ``ScaledObservationExtractor`` and ``AsymmetricActorCriticPolicy`` are public too, created on
# first access (see ``__getattr__``).
__all__ = [
    "OBS_SCALE", "PIECE_SCALE", "PPOAgent", "PRIVILEGED_SIZE", "STATE_PIECE_SCALE", "STATE_SCALE",
    "resolve_model_path",
]

_MASKED_LOGIT = -1e8  # what sb3-contrib's MaskableCategorical writes for illegal actions
_ACTIVATIONS = {
    "Tanh": np.tanh,
    "ReLU": lambda x: np.maximum(x, 0.0),
}


#: Per-piece input scale of the policy network: counts that can reach tens (hand and pile sizes)
#: would otherwise saturate the first tanh layer; one-hot and flag pieces are left as they are.
PIECE_SCALE = {
    "hand": 0.5, "discard_counts": 0.5, "revealed_hand": 0.5, "hand_sizes": 0.1,
    "draw_pile_size": 0.02, "discard_pile_size": 0.02, "idle_turns": 0.2, "round": 0.1,
}
#: The same for the pieces of the perfect-information state (:data:`STATE_PIECES`), which the
#: critic of an asymmetric policy sees after the observation.
STATE_PIECE_SCALE = {
    "hands": 0.5, "draw_pile_counts": 0.5, "discard_counts": 0.5, "hand_sizes": 0.1,
    "draw_pile_size": 0.02, "discard_pile_size": 0.02, "idle_turns": 0.2, "round": 0.1,
}


def _scale(pieces: Any, scales: dict[str, float]) -> np.ndarray:
    return np.concatenate(
        [np.full(p.size, scales.get(p.name, 1.0), dtype=np.float32) for p in pieces]
    )


OBS_SCALE = _scale(OBS_PIECES, PIECE_SCALE)
STATE_SCALE = _scale(STATE_PIECES, STATE_PIECE_SCALE)
#: Input size of an asymmetric policy: the observation, then ``encode_state`` of the game.
PRIVILEGED_SIZE = OBS_SIZE + STATE_SIZE


def _make_extractor_class() -> type:
    import torch
    from stable_baselines3.common.torch_layers import BaseFeaturesExtractor

    class ScaledObservationExtractor(BaseFeaturesExtractor):
        """SB3 features extractor: the observation times a fixed per-entry scale
        (:data:`OBS_SCALE`, stored in the model as the buffer ``scale``); for the input of an
        asymmetric policy (observation + state, :data:`PRIVILEGED_SIZE`) the state's entries
        are scaled by :data:`STATE_SCALE`."""

        def __init__(self, observation_space: Any) -> None:
            size = int(np.prod(observation_space.shape))
            scales = {OBS_SIZE: OBS_SCALE, PRIVILEGED_SIZE: np.concatenate([OBS_SCALE,
                                                                         STATE_SCALE])}
            if size not in scales:
                raise ValueError(f"observations of size {size}: expected {OBS_SIZE} (the "
                                 f"observation) or {PRIVILEGED_SIZE} (observation + state)")
            super().__init__(observation_space, size)
            self.register_buffer("scale", torch.as_tensor(scales[size]))

        def forward(self, observations: torch.Tensor) -> torch.Tensor:
            return torch.flatten(observations, 1) * self.scale

    ScaledObservationExtractor.__module__ = __name__
    return ScaledObservationExtractor


def _make_asymmetric_policy_class() -> type:
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
    from stable_baselines3.common.torch_layers import MlpExtractor

    class _ActorSlicesExtractor(MlpExtractor):
        """SB3's ``MlpExtractor`` whose policy network reads only the first ``actor_size``
        features (the observation); the value network reads all of them."""

        def __init__(self, feature_dim: int, actor_size: int, net_arch: Any,
                     activation_fn: Any, device: Any) -> None:
            super().__init__(feature_dim, net_arch, activation_fn, device)
            self.actor_size = actor_size
            self.policy_net = MlpExtractor(actor_size, net_arch, activation_fn, device).policy_net

        def forward_actor(self, features: Any) -> Any:
            return self.policy_net(features[..., :self.actor_size])

    class AsymmetricActorCriticPolicy(MaskableActorCriticPolicy):
        """Asymmetric actor-critic (a centralised, perfect-information critic): the input is
        the observation followed by :func:`~uno_mk_env.observation.encode_state`; the actor
        sees only the first ``actor_size`` entries (the observation), the critic all of them.
        The critic is used only in training, so the trained actor still acts on what its seat
        may know (the ``ppo`` agent gives it the observation alone)."""

        def __init__(self, *args: Any, actor_size: int = OBS_SIZE, **kwargs: Any) -> None:
            self.actor_size = actor_size
            super().__init__(*args, **kwargs)

        def _build_mlp_extractor(self) -> None:
            self.mlp_extractor = _ActorSlicesExtractor(
                self.features_dim, self.actor_size, self.net_arch, self.activation_fn,
                self.device,
            )

        def _get_constructor_parameters(self) -> dict[str, Any]:
            return {**super()._get_constructor_parameters(), "actor_size": self.actor_size}

    AsymmetricActorCriticPolicy.__module__ = __name__
    return AsymmetricActorCriticPolicy


_LAZY = {
    "ScaledObservationExtractor": _make_extractor_class,
    "AsymmetricActorCriticPolicy": _make_asymmetric_policy_class,
}


def __getattr__(name: str) -> Any:
    # These subclass torch modules: they are created on first use (training, or unpickling a
    # model, which looks them up here by name) so that importing this module does not import
    # torch.
    if name in _LAZY:
        cls = _LAZY[name]()
        globals()[name] = cls
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def resolve_model_path(path: str | Path) -> Path:
    """The model file for ``path``, with or without its ``.zip`` suffix.

    Raises:
        FileNotFoundError: neither ``path`` nor ``path + ".zip"`` is a file.
    """
    p = Path(path).expanduser()
    for candidate in (p, p.with_name(p.name + ".zip")):
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(
        f"PPO model file not found: {str(path)!r} (looked for {p} and {p.name}.zip from "
        f"{Path.cwd()}); train one with 'python -m training.train_ppo' or use a checkpoint "
        "from models/"
    )


class _NumpyActor:
    """The actor of SB3's ``MlpPolicy`` (flatten → Linear/activation layers → action_net)."""

    def __init__(
        self,
        layers: list[tuple[np.ndarray, np.ndarray]],
        activation: str,
        scale: np.ndarray | None = None,
    ) -> None:
        self.layers = layers
        self.activation = _ACTIVATIONS[activation]
        self.scale = scale

    @classmethod
    def from_state_dict(cls, state: dict[str, Any], activation: str) -> _NumpyActor | None:
        """Builds the actor from a policy ``state_dict``; ``None`` if it is not a plain MLP."""
        if activation not in _ACTIVATIONS:
            return None
        hidden: dict[int, dict[str, np.ndarray]] = {}
        scale = None
        for key, value in state.items():
            m = re.fullmatch(r"mlp_extractor\.policy_net\.(\d+)\.(weight|bias)", key)
            if m:
                hidden.setdefault(int(m[1]), {})[m[2]] = value.detach().cpu().numpy()
            elif key in ("features_extractor.scale", "pi_features_extractor.scale"):
                scale = value.detach().cpu().numpy().astype(np.float32)
            elif not key.startswith(("mlp_extractor.value_net.", "value_net.", "action_net.",
                                     "vf_features_extractor.")):
                return None  # a features extractor with weights, or another policy family
        if "action_net.weight" not in state or any(len(d) != 2 for d in hidden.values()):
            return None
        # Linear layers sit at even indices of the Sequential, activations in between.
        if sorted(hidden) != list(range(0, 2 * len(hidden), 2)):
            return None
        layers = [(hidden[i]["weight"].T.copy(), hidden[i]["bias"].copy()) for i in sorted(hidden)]
        if scale is not None and layers:  # an asymmetric policy's actor reads the first entries
            scale = scale[: layers[0][0].shape[0]]
        layers.append((state["action_net.weight"].detach().cpu().numpy().T.copy(),
                       state["action_net.bias"].detach().cpu().numpy().copy()))
        return cls(layers, activation, scale)

    def logits(self, obs: np.ndarray) -> np.ndarray:
        x = obs.astype(np.float32, copy=False)
        if self.scale is not None:
            x = x * self.scale
        for w, b in self.layers[:-1]:
            x = self.activation(x @ w + b)
        w, b = self.layers[-1]
        return x @ w + b


class PPOAgent(Agent):
    """Plays a MaskablePPO checkpoint (loaded on CPU).

    Args:
        path: the ``.zip`` written by ``model.save`` (the suffix may be omitted).
        seed: seeds the generator used when ``deterministic=False``.
        deterministic: play the most likely legal action (default) or sample from the policy.
        use_numpy: run the MLP actor in numpy when the policy allows it (see the module
            docstring); ``False`` always calls ``model.predict``.

    Raises:
        FileNotFoundError: the model file does not exist.
        ValueError: the model's spaces do not match this env (observation ``(OBS_SIZE,)``, or
            ``(OBS_SIZE + STATE_SIZE,)`` for an asymmetric policy; ``Discrete(73)``).
    """

    name = "ppo"
    needs_observation = True

    def __init__(
        self,
        path: str | Path,
        seed: int | None = None,
        deterministic: bool = True,
        use_numpy: bool = True,
    ) -> None:
        super().__init__(seed)
        self.path = resolve_model_path(path)
        self.deterministic = deterministic
        # Imported here so that registering the agent costs nothing without torch.
        import torch
        from sb3_contrib import MaskablePPO
        from stable_baselines3.common.save_util import load_from_zip_file

        data, params, _ = load_from_zip_file(self.path, device="cpu", print_system_info=False)
        obs_space, act_space = data.get("observation_space"), data.get("action_space")
        kwargs = data.get("policy_kwargs") or {}
        # An asymmetric policy's input is the observation + the state; its actor reads only the
        # observation, which is all this agent gives it (the state is zero-padded for predict).
        self._pad = STATE_SIZE if kwargs.get("actor_size") == OBS_SIZE else 0
        if getattr(obs_space, "shape", None) != (OBS_SIZE + self._pad,) or getattr(
            act_space, "n", None
        ) != A.NUM_ACTIONS:
            shape = getattr(obs_space, "shape", obs_space)
            raise ValueError(
                f"{self.path} does not fit this env: its observations have shape {shape} and its "
                f"action space is {act_space}; this env has ({OBS_SIZE},) and "
                f"Discrete({A.NUM_ACTIONS}) (a checkpoint only fits the observation layout it was "
                "trained on: retrain it, or use the package version it was trained with)"
            )
        self.model: Any = None
        self._actor: _NumpyActor | None = None
        extractor = kwargs.get("features_extractor_class")
        plain = set(kwargs) <= {
            "net_arch", "activation_fn", "ortho_init", "features_extractor_class", "actor_size"
        } and getattr(extractor, "__name__", "ScaledObservationExtractor") in (
            "ScaledObservationExtractor", "FlattenExtractor"
        )
        if use_numpy and plain and "policy" in params:
            activation = getattr(kwargs.get("activation_fn", torch.nn.Tanh), "__name__", "")
            self._actor = _NumpyActor.from_state_dict(params["policy"], activation)
        if self._actor is None:
            self.model = MaskablePPO.load(self.path, device="cpu")

    def act(
        self, observation: np.ndarray | None, action_mask: np.ndarray, view: PlayerView
    ) -> int:
        if observation is None:
            raise ValueError("the ppo agent needs the observation vector (needs_observation)")
        mask = np.asarray(action_mask).astype(bool)
        if self._actor is None:
            action, _ = self.model.predict(
                self._model_input(observation), action_masks=mask,
                deterministic=self.deterministic,
            )
            return int(action)
        logits = np.where(mask, self._actor.logits(observation), _MASKED_LOGIT)
        if self.deterministic:
            return int(np.argmax(logits))
        p = np.exp(logits - logits.max())
        return int(self.rng.choice(A.NUM_ACTIONS, p=p / p.sum()))

    def _model_input(self, observation: np.ndarray) -> np.ndarray:
        if not self._pad:
            return observation
        return np.concatenate([observation, np.zeros(self._pad, np.float32)])

    def action_probabilities(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        """The masked policy's probability of each action (float64, shape ``(73,)``)."""
        mask = np.asarray(action_mask).astype(bool)
        if self._actor is not None:
            logits = np.where(mask, self._actor.logits(observation), _MASKED_LOGIT)
            p = np.exp(logits - logits.max())
            return p / p.sum()
        import torch

        obs_t, _ = self.model.policy.obs_to_tensor(self._model_input(observation))
        with torch.no_grad():
            dist = self.model.policy.get_distribution(obs_t, action_masks=mask)
        return dist.distribution.probs[0].double().numpy()


@register("ppo", "a trained MaskablePPO checkpoint, spec ppo:path/to/model.zip (needs torch)")
def _make_ppo(arg: str | None, seed: int | None) -> Agent:
    if not arg:
        raise ValueError("agent 'ppo' needs a model path, e.g. ppo:models/ppo_2p.zip")
    return PPOAgent(arg, seed=seed)
