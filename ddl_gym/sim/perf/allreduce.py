"""All-reduce with contention, job-level form of Ada-SRSF §III-A eq. (5): the model ``"allreduce"``."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ddl_gym.sim.compact import float_column
from ddl_gym.sim.model import ClusterSpec, ConfigError, Workload
from ddl_gym.sim.perf.base import _require_finite, rate_classes, require_architectures


@dataclass(frozen=True)
class AllReduceContentionModel:
    """Ada-SRSF §III-A, job-level form: ``τ = t_f + t_b (+ a + k·b·M + (k−1)·η·M if ≥ 2 servers)``.

    ``k = p_j`` (eq. 5: the number of concurrent communication tasks on the busiest of the job's
    servers, here every split job counted as communicating). All-reduce inside one server is free
    (the paper's model and its authors' simulator). The cross-server time does not depend on the
    number of workers.

    Defaults follow the authors' public simulator for 10GbE (``a = 0``, ``b = 0.856 ms/MB``,
    ``η = 0.235 ms/MB``); the paper's own fit is ``a = 6.69e-4 s``, ``b = 8.53e-10 s/byte`` and it
    does not state η.
    """

    a: float = 0.0  # seconds per all-reduce
    b: float = 8.56e-10  # seconds per byte (0.856 ms/MB)
    eta: float = 2.35e-10  # seconds per byte per extra contending task (0.235 ms/MB)
    name: str = "allreduce"

    def __post_init__(self) -> None:
        _require_finite("all-reduce model", a=self.a, b=self.b, eta=self.eta)
        if self.a < 0 or self.b <= 0 or self.eta < 0:
            raise ConfigError(f"all-reduce model: need a >= 0, b > 0, eta >= 0, got a={self.a!r}, b={self.b!r}, "
                              f"eta={self.eta!r}")

    def bind(self, cluster: ClusterSpec, workload: Workload) -> _BoundAllReduce:
        require_architectures(self.name, workload, ("allreduce",))
        return _BoundAllReduce(self, workload)

    def allreduce_time(self, message_bytes: float, k: int) -> float:
        """Eq. (5): duration of one all-reduce of ``message_bytes`` under ``k``-way contention."""
        return self.a + k * self.b * message_bytes + (k - 1) * self.eta * message_bytes


class _BoundAllReduce:
    contention_free = False

    def __init__(self, model: AllReduceContentionModel, workload: Workload) -> None:
        self._model = model
        self._compute = float_column(workload.per_job("forward_s") + workload.per_job("backward_s"))
        self._message = float_column(workload.per_job("gradient_bytes"))
        self._classes: list[int] | None | bool = False  # rate_classes(), once asked

    def rate_classes(self) -> list[int] | None:
        """τ reads a job only through its compute time and message size (see :class:`BoundModel`).
        Computed once, as for the RAR model."""
        if self._classes is False:
            self._classes = rate_classes(self._compute, self._message)
        return self._classes

    def iteration_time(self, job: int, n_servers: int, contention: int) -> float:
        if n_servers <= 1:
            return self._compute[job]
        return self._compute[job] + self._model.allreduce_time(self._message[job], max(1, contention))

    def iteration_times(self, jobs: np.ndarray, n_servers: np.ndarray, contention: np.ndarray) -> np.ndarray:
        return np.array([self.iteration_time(int(j), int(s), int(p)) for j, s, p in zip(jobs, n_servers, contention)])
