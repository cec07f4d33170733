"""Ring-all-reduce with communication contention (SJF-BCO §4.1, eqs. (6)-(8)): the default job-level model ``"rar"``."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ddl_gym.sim.compact import float_column
from ddl_gym.sim.model import ClusterSpec, ConfigError, Workload
from ddl_gym.sim.perf.base import DEGRADATION_FUNCTIONS, _require_finite, rate_classes, require_architectures


@dataclass(frozen=True)
class RARContentionModel:
    """Ring-all-reduce with communication contention and per-server overhead (SJF-BCO §4.1).

    Per-iteration time of job ``j`` with ``w_j = G_j`` workers and gradient size ``m_j`` (eq. 8)::

        τ_j = 2·m_j(w_j−1)/w_j / B_j  +  m_j(w_j−1)/w_j / C  +  ξ2·(#servers of j)  +  t_f + t_b

    with ``B_j = b_i`` on one server and ``B_j = b_e / f(α, k_j)`` across servers, where
    ``k_j = max(1, ξ1·p_j)`` (eq. 7). Decision (DESIGN.md §2.3): the paper requires ``f(α,1)=1``
    and ``f`` increasing, but ``ξ1·p_j < 1`` would then hand a job *more* than the link's
    bandwidth, so the contention level is floored at 1.

    Attributes:
        xi1: ``ξ1`` in (0, 1], the fraction of co-located split jobs that actually contend.
        xi2: ``ξ2`` seconds of overhead per server per iteration (ACKs, ring negotiation).
        alpha: ``α`` of the degradation function.
        reduce_bytes_per_s: ``C``, GPU reduction speed (bytes/s).
        degradation: name of ``f`` in :data:`DEGRADATION_FUNCTIONS`.
    """

    xi1: float = 1.0
    xi2: float = 1e-3  # seconds per server per iteration
    alpha: float = 0.275  # ≈ η/b of Ada-SRSF's 10GbE fit (0.235/0.856): same penalty per extra job
    reduce_bytes_per_s: float = 100e9
    degradation: str = "linear"
    name: str = "rar"

    def __post_init__(self) -> None:
        _require_finite("RAR model", xi1=self.xi1, xi2=self.xi2, alpha=self.alpha,
                        reduce_bytes_per_s=self.reduce_bytes_per_s)
        if not (0 < self.xi1 <= 1):
            raise ConfigError(f"RAR model: xi1 must be in (0, 1], got {self.xi1}")
        if self.xi2 < 0 or self.alpha < 0 or self.reduce_bytes_per_s <= 0:
            raise ConfigError("RAR model: xi2 and alpha must be >= 0 and reduce_bytes_per_s > 0, got "
                              f"xi2={self.xi2!r}, alpha={self.alpha!r}, reduce_bytes_per_s={self.reduce_bytes_per_s!r}")
        if self.degradation not in DEGRADATION_FUNCTIONS:
            raise ConfigError(
                f"RAR model: unknown degradation {self.degradation!r}; choose one of {sorted(DEGRADATION_FUNCTIONS)}"
            )

    def bind(self, cluster: ClusterSpec, workload: Workload) -> _BoundRAR:
        require_architectures(self.name, workload, ("allreduce",))
        return _BoundRAR(self, cluster, workload)


class _BoundRAR:
    contention_free = False

    def __init__(self, model: RARContentionModel, cluster: ClusterSpec, workload: Workload) -> None:
        w = workload.gpus.astype(np.float64)
        m = workload.per_job("gradient_bytes")
        chunk = m * (w - 1.0) / w  # m_j(w_j−1)/w_j bytes
        # array columns, not lists of floats: 8 B per job instead of 32 (same float64 values)
        self._compute = float_column(workload.per_job("forward_s") + workload.per_job("backward_s") + chunk / model.reduce_bytes_per_s)
        self._exchange = float_column(2.0 * chunk)  # bytes over the bottleneck link per iteration
        self._xi1 = model.xi1
        self._xi2 = model.xi2
        self._alpha = model.alpha
        self._f = DEGRADATION_FUNCTIONS[model.degradation]
        self._b_intra = cluster.intra_bandwidth
        self._b_inter = cluster.inter_bandwidth
        self._classes: list[int] | None | bool = False  # rate_classes(), once asked

    def rate_classes(self) -> list[int] | None:
        """τ reads a job only through its compute time and exchanged bytes (see :class:`BoundModel`).
        Computed once (the engine and SJF-BCO's planner both ask; the list is read only)."""
        if self._classes is False:
            self._classes = rate_classes(self._compute, self._exchange)
        return self._classes

    def _split_bandwidth(self, contention: int) -> float:
        """Effective inter-server bandwidth of a split job under contention count ``contention``."""
        return self._b_inter / self._f(self._alpha, max(1.0, self._xi1 * contention))

    def iteration_time(self, job: int, n_servers: int, contention: int) -> float:
        bandwidth = self._b_intra if n_servers <= 1 else self._split_bandwidth(contention)
        return self._compute[job] + self._xi2 * n_servers + self._exchange[job] / bandwidth

    def iteration_times(self, jobs: np.ndarray, n_servers: np.ndarray, contention: np.ndarray) -> np.ndarray:
        """:meth:`iteration_time` of many jobs, bit for bit: the same float64 operations in the same
        order, element-wise, with the bandwidth of each distinct contention count from the scalar code."""
        jobs = np.asarray(jobs, dtype=np.int64)
        n_servers = np.asarray(n_servers, dtype=np.int64)
        contention = np.asarray(contention, dtype=np.int64)
        bandwidth = np.full(jobs.shape, self._b_intra, dtype=np.float64)
        split = n_servers > 1
        for p in np.unique(contention[split]).tolist():
            bandwidth[split & (contention == p)] = self._split_bandwidth(p)
        compute = np.frombuffer(self._compute, dtype=np.float64)[jobs] if len(self._compute) else np.zeros(0)
        exchange = np.frombuffer(self._exchange, dtype=np.float64)[jobs] if len(self._exchange) else np.zeros(0)
        return compute + self._xi2 * n_servers + exchange / bandwidth
