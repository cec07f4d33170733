"""Per-job estimates shared by policies and envs: uncontended run time and queue priority keys.

One definition, so that ``srsf+pack`` natively, the env's ``queue_order="srsf"`` window, the
placement env's job order and MCTS rollouts all rank jobs identically.
"""

from __future__ import annotations

import numpy as np

from ddl_gym.sim.engine import Simulator
from ddl_gym.sim.model import ClusterSpec, ConfigError, Workload

ORDERS = ("fifo", "sjf", "srsf")


def nominal_runtimes(sim: Simulator) -> np.ndarray:
    """``F_j · τ̂_j``: each job's run time alone on its most consolidated placement (seconds)."""
    return sim.workload.iterations * sim.nominal_iteration_times()


def priority_key(sim: Simulator, order: str, runtime: np.ndarray | None = None) -> np.ndarray | None:
    """Smaller first: SJF ``F·τ̂``, SRSF ``F·G·τ̂`` (non-preemptive: remaining = F); ``None`` for FIFO.

    Ties are broken by job index (= arrival order) by every caller.
    """
    if order not in ORDERS:
        raise ConfigError(f"unknown job order {order!r}; choose one of {ORDERS}")
    if order == "fifo":
        return None
    duration = nominal_runtimes(sim) if runtime is None else runtime
    return duration * sim.workload.gpus if order == "srsf" else duration


def comm_intensity(workload: Workload, cluster: ClusterSpec) -> np.ndarray:
    """``r/(1+r)`` with ``r`` = gradient exchange over one NIC ÷ compute time per iteration."""
    compute = workload.per_job("forward_s") + workload.per_job("backward_s")
    ratio = 2.0 * workload.per_job("gradient_bytes") / cluster.inter_bandwidth / np.maximum(compute, 1e-9)
    return ratio / (1.0 + ratio)
