"""Per-job estimates shared by policies and envs: uncontended run time and queue priority keys.

One definition, so that ``srsf+pack`` natively, the env's ``queue_order="srsf"`` window, the
placement env's job order and MCTS rollouts all rank jobs identically.
"""

from __future__ import annotations

import numpy as np

from ddl_gym.sim.engine import Simulator
from ddl_gym.sim.model import ClusterSpec, ConfigError, Workload

ORDERS = ("fifo", "sjf", "srsf", "gpu-step")
#: Orders that read no job's iteration count (remaining work): usable by a non-clairvoyant scheduler.
#: ``gpu-step`` ranks by ``G_j · τ̂_j``, the GPU-seconds of one training step, which a cluster measures
#: in a job's first iterations (per-iteration throughput profiling, as Tiresias and Pollux do) without
#: knowing how many iterations the job will run. When iteration counts are drawn independently of the
#: job's class (GPUs, model), a job's service is ``G_j·τ̂_j`` times an i.i.d. count, so this is the
#: order of the non-preemptive Gittins index at zero attained service (smallest scale first).
NONCLAIRVOYANT_ORDERS = ("fifo", "gpu-step")


def nominal_runtimes(sim: Simulator) -> np.ndarray:
    """``F_j · τ̂_j``: each job's run time alone on its most consolidated placement (seconds)."""
    return sim.workload.iterations * sim.nominal_iteration_times()


def priority_key(sim: Simulator, order: str, runtime: np.ndarray | None = None) -> np.ndarray | None:
    """Smaller first: SJF ``F·τ̂``, SRSF ``F·G·τ̂`` (non-preemptive: remaining = F), gpu-step ``G·τ̂``
    (no ``F``: non-clairvoyant); ``None`` for FIFO.

    Ties are broken by job index (= arrival order) by every caller.
    """
    if order not in ORDERS:
        raise ConfigError(f"unknown job order {order!r}; choose one of {ORDERS}")
    if order == "fifo":
        return None
    if order == "gpu-step":
        return sim.nominal_iteration_times() * sim.workload.gpus
    duration = nominal_runtimes(sim) if runtime is None else runtime
    return duration * sim.workload.gpus if order == "srsf" else duration


def rank_by_key(key: np.ndarray | list[float]) -> tuple[list[int], list[int]]:
    """``(rank, job_by_rank)``: each job's place when sorted by ``key`` with ties by job index, and its inverse
    (the order a classic policy, EASY and the env's queue window try jobs in)."""
    values = np.asarray(key, dtype=np.float64)
    order = np.lexsort((np.arange(values.size), values))
    rank = np.empty(values.size, dtype=np.int64)
    rank[order] = np.arange(values.size)
    return rank.tolist(), order.tolist()


def comm_intensity(workload: Workload, cluster: ClusterSpec) -> np.ndarray:
    """``r/(1+r)`` with ``r`` = gradient exchange over one NIC ÷ compute time per iteration."""
    compute = workload.per_job("forward_s") + workload.per_job("backward_s")
    ratio = 2.0 * workload.per_job("gradient_bytes") / cluster.inter_bandwidth / np.maximum(compute, 1e-9)
    return ratio / (1.0 + ratio)
