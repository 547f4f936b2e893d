"""The thread policy of a process that plays or trains agents (:func:`set_thread_policy`), the
one home for it: tournament and evaluation workers, training's env workers and the learner of
every training backend call it (the learner before torch is imported, and again after, for
torch's intra-op threads).

OpenMP (torch) and BLAS (numpy) start one thread per core by default, and OpenMP's idle threads
spin-wait. A process that is one of several workers on a shared machine then competes with the
others for every core: on two cores loaded by other work (load 11-12), the fast backend's PPO
update took 37-44 s with torch's default policy against 1.9-2.4 s with idle threads sleeping
(docs/training.md, "Budgets and threads"). The agents here are small networks and tree
searches, fastest on one thread per process; parallel work comes from worker processes.
"""

from __future__ import annotations

import contextlib
import os
import sys

__all__ = ["THREAD_VARIABLES", "set_thread_policy"]

#: Environment variables read by the thread pools when they start (OpenMP, OpenBLAS, MKL).
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def set_thread_policy(threads: int = 1) -> None:
    """Limits this process to ``threads`` threads per pool, idle threads sleeping.

    Sets :data:`THREAD_VARIABLES` and ``OMP_WAIT_POLICY=PASSIVE`` for pools not started yet
    (a value already in the environment is kept: the user's choice); limits the pools already
    loaded through threadpoolctl when it is installed; and torch's intra-op threads when torch is
    already imported (this never imports torch).

    Args:
        threads: threads per pool (at least 1).
    """
    threads = max(1, int(threads))
    for name in THREAD_VARIABLES:
        os.environ.setdefault(name, str(threads))
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    with contextlib.suppress(ImportError):  # threadpoolctl: the train extra, optional here
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=threads)
    torch = sys.modules.get("torch")
    if torch is not None and hasattr(torch, "set_num_threads"):
        torch.set_num_threads(threads)
