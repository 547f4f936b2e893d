"""The numpy actor of a PPO policy: SB3's ``MlpPolicy`` actor as a forward pass in numpy (input
scale, hidden layers, logits), built only from checked layers, and the input scale of the
observation pieces that every backend's network uses."""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from uno_mk_env import actions as A
from uno_mk_env.engine.observation import OBS_PIECES, OBS_SIZE, STATE_PIECES, STATE_SIZE
from uno_mk_env.errors import quote

__all__ = [
    "MAX_QUOTED_CHARS", "OBS_SCALE", "PIECE_SCALE", "PRIVILEGED_SIZE", "STATE_PIECE_SCALE",
    "STATE_SCALE", "NumpyActor", "numpy_actor",
]


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


#: Widest quotation of a value read from a file in an error message.
MAX_QUOTED_CHARS = 80
_SCALE_KEYS = ("features_extractor.scale", "pi_features_extractor.scale")


def _act_tanh(x: np.ndarray) -> np.ndarray:
    return np.tanh(x)


def _act_relu(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, 0.0)


_ACTIVATIONS = {"tanh": _act_tanh, "relu": _act_relu}


def _short(value: Any) -> str:
    """A value read from a file, quoted for an error message (bounded: hostile files hold
    100,000-character fields)."""
    return quote(value, MAX_QUOTED_CHARS)


class NumpyActor:
    """The actor of SB3's ``MlpPolicy`` in numpy: ``x * scale``, then ``activation(x @ W + b)``
    for each hidden layer and ``x @ W + b`` for the last (the logits); ``W`` is ``(in, out)``."""

    def __init__(
        self,
        layers: list[tuple[np.ndarray, np.ndarray]],
        activation: str,
        scale: np.ndarray | None = None,
    ) -> None:
        self.layers = layers
        self.activation_name = activation
        self.activation = _ACTIVATIONS[activation]
        self.scale = scale

    @classmethod
    def from_state_dict(
        cls, state: dict[str, np.ndarray], activation: str, hidden_sizes: list[int] | None,
        scaled: bool,
    ) -> NumpyActor:
        """Builds the actor from a policy ``state_dict`` (as numpy arrays).

        Raises:
            ValueError: a one-line reason when the state is not SB3's MLP actor (another
                features extractor, missing or misshapen layers, non-finite weights).
        """
        hidden: dict[int, dict[str, np.ndarray]] = {}
        scale = None
        for key, value in state.items():
            m = re.fullmatch(r"mlp_extractor\.policy_net\.(\d+)\.(weight|bias)", key)
            if m:
                hidden.setdefault(int(m[1]), {})[m[2]] = value
            elif key in _SCALE_KEYS:
                scale = value
            elif not key.startswith(("mlp_extractor.value_net.", "value_net.", "action_net.",
                                     "vf_features_extractor.")):
                raise ValueError(f"its policy has weights this loader does not play "
                                 f"({_short(key)}): only SB3's MLP policy on the observation "
                                 "vector is supported")
        if "action_net.weight" not in state or "action_net.bias" not in state:
            raise ValueError("its policy has no action_net weights")
        if any(set(d) != {"weight", "bias"} for d in hidden.values()) or sorted(hidden) != list(
            range(0, 2 * len(hidden), 2)  # Linear layers at even indices, activations between
        ):
            raise ValueError("its policy network is not a plain sequence of Linear layers")
        if scaled != (scale is not None):
            raise ValueError("its features extractor and its weights disagree about the input "
                             "scale")
        layers = [(hidden[i]["weight"].T.copy(), hidden[i]["bias"].copy()) for i in sorted(hidden)]
        layers.append((state["action_net.weight"].T.copy(), state["action_net.bias"].copy()))
        if hidden_sizes is not None and [w.shape[1] for w, _ in layers[:-1]] != hidden_sizes:
            raise ValueError(f"its net_arch {_short(hidden_sizes)} does not match its weights")
        if scale is not None:  # an asymmetric policy's actor reads the first entries
            scale = scale.reshape(-1)[: layers[0][0].shape[0]].copy()
        return cls.checked(layers, activation, scale)

    @classmethod
    def checked(cls, layers: list[tuple[np.ndarray, np.ndarray]], activation: str,
                scale: np.ndarray | None) -> NumpyActor:
        """The actor, after checking that the layers chain from ``OBS_SIZE`` inputs to
        ``NUM_ACTIONS`` logits with finite float weights.

        Raises:
            ValueError: a one-line reason.
        """
        if activation not in _ACTIVATIONS:
            raise ValueError(f"activation {_short(activation)} is not supported (supported: "
                             f"{', '.join(_ACTIVATIONS)})")
        size = OBS_SIZE
        out = []
        for i, (w, b) in enumerate(layers):
            if w.ndim != 2 or b.shape != (w.shape[1],) or w.shape[0] != size:
                raise ValueError(f"layer {i} has weight shape {w.shape} and bias shape "
                                 f"{b.shape}; expected ({size}, n) and (n,)")
            for a in (w, b):
                if a.dtype.kind != "f" or not np.isfinite(a).all():
                    raise ValueError(f"layer {i} holds {a.dtype} values that are not all finite "
                                     "floats")
            size = w.shape[1]
            out.append((w.astype(np.float32, copy=False), b.astype(np.float32, copy=False)))
        if not layers or size != A.NUM_ACTIONS:
            raise ValueError(f"the policy outputs {size} logits; this env has {A.NUM_ACTIONS} "
                             "actions")
        if scale is not None:
            if (scale.shape != (OBS_SIZE,) or scale.dtype.kind != "f"
                    or not np.isfinite(scale).all()):
                raise ValueError(f"input scale of shape {scale.shape} ({scale.dtype}); expected "
                                 f"({OBS_SIZE},) finite floats")
            scale = scale.astype(np.float32, copy=False)
        return cls(out, activation, scale)

    def logits(self, obs: np.ndarray) -> np.ndarray:
        x = obs.astype(np.float32, copy=False)
        if self.scale is not None:
            x = x * self.scale
        for w, b in self.layers[:-1]:
            x = self.activation(x @ w + b)
        w, b = self.layers[-1]
        return x @ w + b


def numpy_actor(layers: list[tuple[np.ndarray, np.ndarray]], activation: str,
                scale: np.ndarray | None = None) -> NumpyActor:
    """The numpy actor of an MLP given by its ``(W, b)`` layers (as :func:`write_policy`
    takes them), with ``logits(obs)`` for a batch of observations.

    Raises:
        ValueError: the layers do not make such an actor.
    """
    return NumpyActor.checked(layers, activation, scale)


