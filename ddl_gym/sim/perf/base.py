"""What every performance model shares: the protocols (:class:`PerformanceModel`, :class:`BoundModel`,
:class:`ContentionFreeBoundModel`), contention functions, the architecture check, and the from-scratch
contention counts of SJF-BCO eq. (6) (:func:`contention_counts`, :func:`per_iteration_times`)."""

from __future__ import annotations

import math
from array import array
from typing import Any, Callable, Protocol, Sequence

import numpy as np

from ddl_gym.sim.model import ClusterSpec, ConfigError, Workload

ContentionFunction = Callable[[float, float], float]


def linear_degradation(alpha: float, k: float) -> float:
    """SJF-BCO's example ``f(α, k) = k + α(k − 1)``: fair share ``b_e/k`` degraded by α per extra job."""
    return k + alpha * (k - 1.0)


def power_degradation(alpha: float, k: float) -> float:
    """An alternative ``f(α, k) = k^(1+α)`` (``f(α,1)=1``, increasing): super-linear degradation."""
    return k ** (1.0 + alpha)


#: Named degradation functions (names keep scenario files and pickles simple).
DEGRADATION_FUNCTIONS: dict[str, ContentionFunction] = {
    "linear": linear_degradation,
    "power": power_degradation,
}


class BoundModel(Protocol):
    """A performance model bound to one cluster and workload (per-job constants precomputed).

    Optionally, ``rate_classes()`` returns per job a class id such that ``iteration_time(i, n, p)``
    and ``iteration_time(j, n, p)`` are the same float for any two jobs of one class (their per-job
    constants are bit-identical), or ``None``; the engine then memoises τ per class, not per job.
    """

    def iteration_time(self, job: int, n_servers: int, contention: int) -> float:
        """Per-iteration time τ of ``job`` spanning ``n_servers`` with contention count ``p_j``."""
        ...

    def iteration_times(self, jobs: np.ndarray, n_servers: np.ndarray, contention: np.ndarray) -> np.ndarray:
        """Vectorised :meth:`iteration_time`."""
        ...


def rate_classes(*columns: Any) -> list[int] | None:
    """Per job, the id of its class of jobs whose ``columns`` values (float64) are bit-identical.

    For a bound model whose τ reads a job only through these columns (see :class:`BoundModel`).
    ``None`` when the classes would save little (more than half of the jobs in classes of their own).
    """
    n = len(columns[0]) if columns else 0
    if n == 0:
        return None
    key = np.zeros(n, dtype=np.int64)
    for column in columns:  # the classes of the pairs so far, refined by this column's bit patterns
        bits = np.frombuffer(column, dtype=np.float64).view(np.int64) if isinstance(column, array) else \
            np.ascontiguousarray(column, dtype=np.float64).view(np.int64)
        _, ids = np.unique(bits, return_inverse=True)
        _, key = np.unique(key * (int(ids.max()) + 1) + ids.ravel(), return_inverse=True)
        key = key.ravel().astype(np.int64)
        if 2 * (int(key.max()) + 1) > n:
            return None
    return key.tolist()


class ContentionFreeBoundModel(Protocol):
    """A bound rate model whose per-iteration time depends only on the job's own allocation."""

    contention_free: bool  # True

    def allocation_time(self, job: int, alloc: Any) -> float:
        """Per-iteration time (seconds per unit of ``Workload.iterations``) of ``job`` on ``alloc``."""
        ...

    def nominal_iteration_time(self, job: int) -> float:
        """Planning estimate of the per-iteration time (e.g. the best consolidated placement)."""
        ...

    def busy_gpu_seconds_per_iteration(self, job: int, alloc: Any) -> float:
        """GPU-seconds of pure computation one iteration costs on ``alloc`` (compute utilisation)."""
        ...


class PerformanceModel(Protocol):
    name: str

    def bind(self, cluster: ClusterSpec, workload: Workload) -> BoundModel | ContentionFreeBoundModel: ...


def require_architectures(model_name: str, workload: Workload, supported: Sequence[str]) -> None:
    """Raise ConfigError naming the model and the first unsupported architecture in ``workload``."""
    unsupported = sorted(workload.architectures - set(supported))
    if unsupported:
        raise ConfigError(
            f"performance model {model_name!r} models {', '.join(supported)} jobs, but workload "
            f"{workload.name!r} has {', '.join(unsupported)} jobs; pick a scenario/model for that architecture"
        )


def _require_finite(model: str, **fields: Any) -> None:
    """A model parameter that enters the simulator must be a finite real number: NaN or infinity would
    make a time per iteration NaN or infinite, and the engine would never reach the job's end (a
    NaN in ``RARContentionModel(xi2=nan)`` once hung ``step()``). Named error: model and field."""
    for field_name, value in fields.items():
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
                or not math.isfinite(float(value)):
            raise ConfigError(f"{model}: {field_name} must be a finite number, got {value!r}")


def contention_counts(cluster: ClusterSpec, placements: Sequence[np.ndarray], gpus: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """From-scratch ``(n_servers_j, p_j)`` for running jobs given their GPU placements (eq. 6).

    Args:
        cluster: the cluster.
        placements: for each running job, its global GPU indices.
        gpus: ``G_j`` of each running job (must equal ``len(placements[j])``).
    """
    gpu_server = cluster.gpu_server()
    per_job_servers = []
    split_on_server = np.zeros(cluster.num_servers, dtype=np.int64)
    for ids, g in zip(placements, gpus):
        servers = np.unique(gpu_server[np.asarray(ids, dtype=np.int64)])
        per_job_servers.append(servers)
        if len(ids) != g:
            raise ConfigError(f"placement has {len(ids)} GPUs but the job needs {g}")
        if servers.size > 1:  # 0 < y_js < G_j on every server it uses
            split_on_server[servers] += 1
    n_servers = np.array([s.size for s in per_job_servers], dtype=np.int64)
    p = np.array([int(split_on_server[s].max()) if s.size > 1 else 0 for s in per_job_servers], dtype=np.int64)
    return n_servers, p


def per_iteration_times(
    model: PerformanceModel, cluster: ClusterSpec, workload: Workload, running: Sequence[int], placements: Sequence[np.ndarray]
) -> np.ndarray:
    """Per-iteration time of each job in ``running`` given every running job's placement (pure)."""
    running = np.asarray(running, dtype=np.int64)
    n_servers, p = contention_counts(cluster, placements, workload.gpus[running])
    return model.bind(cluster, workload).iteration_times(running, n_servers, p)
