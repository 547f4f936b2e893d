"""Divergence: a loss or weights that became non-finite, the one check every backend makes.

:func:`check_finite` raises :class:`NonFinite` when a network has diverged; each backend then
stops, keeps its last finite policy, writes ``summary.json`` with ``"stopped_by": "diverged"``
and ends with :class:`~uno_mk_env.training.args.TrainingDiverged` (one line, exit code 1).
Works on torch tensors through their methods, so this module does not import torch.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from uno_mk_env.errors import UnoMkError

__all__ = ["MAX_LOGIT", "NonFinite", "check_finite", "check_loss"]

#: The largest logit a policy that has not diverged gives: far beyond any trained policy's (a few
#: tens), far below the logit illegal actions are masked with (``-1e8``), which a larger legal
#: logit would pass below.
MAX_LOGIT = 1e6


class NonFinite(UnoMkError):  # noqa: N818 - a signal inside the run, never shown as such
    """A loss or the weights became non-finite (NaN or infinite): the run has diverged."""


def check_loss(loss: Any) -> None:
    """Raises :class:`NonFinite` unless ``loss`` (a number or a 0-d tensor) is finite."""
    value = float(loss.detach() if hasattr(loss, "detach") else loss)
    if not math.isfinite(value):
        raise NonFinite(f"a non-finite loss ({value})")


def check_finite(parameters: Iterable[Any], logits: Any, values: Any, where: str) -> None:
    """Raises :class:`NonFinite` unless every tensor of ``parameters`` is finite and the
    ``logits`` and ``values`` the network gives on the data just learned from are finite, the
    logits within :data:`MAX_LOGIT`: weights that pass are a policy the env workers can play.

    ``logits`` may hold the masked logit of illegal actions (``-1e8``): only legal ones are
    given here."""
    if not (all(bool(p.isfinite().all()) for p in parameters)
            and bool((logits.abs() <= MAX_LOGIT).all())
            and bool(values.isfinite().all())):
        raise NonFinite(f"weights or outputs not finite, or logits beyond {MAX_LOGIT:g}, "
                        f"{where}")
