"""Seed derivation: one home for turning a root seed and a key into an independent seed.

Tournaments, training and the command line derive every game's and agent's seed from the
run's root seed with :func:`derive_seed`, so a result depends only on the root seed and the
key (the game's index, the seat...), never on process or worker order.
"""

from __future__ import annotations

import numpy as np

__all__ = ["derive_seed"]


def derive_seed(root: int, *key: int) -> int:
    """A 32-bit seed for ``key`` under ``root`` (``numpy.random.SeedSequence(root,
    spawn_key=key)``): distinct keys give statistically independent streams."""
    return int(np.random.SeedSequence(root, spawn_key=key).generate_state(1)[0])
