"""Performance models: the per-iteration time of every running job, given all placements.

Two job-level models share one structure. A job whose workers sit on more than one server
("split": ``0 < y_js < G_j`` for some server ``s``) communicates over the NICs of its servers.
The *contention count* of a split job is

    p_j = max over servers s holding j of  #{split jobs j' with workers on s}        (SJF-BCO eq. 6)

(``j`` itself included, so ``p_j >= 1``). A job on one server never contends. The simulator keeps
``p_j`` up to date incrementally; the models only turn ``(job, servers spanned, p_j)`` into a
per-iteration time ``τ_j`` (seconds). :func:`per_iteration_times` is the pure, from-scratch
reference used by tests and by planners.

* :class:`RARContentionModel` — SJF-BCO §4.1, eqs. (6)–(8) (the default).
* :class:`AllReduceContentionModel` — Ada-SRSF §III-A, eq. (5), in job-level form (every split
  job is counted as communicating all the time; the task-level form with explicit communication
  phases lives in :mod:`ddl_gym.sim.tasklevel`).

**Rate models.** Both are *contention* rate models: a job's rate depends on what else runs on its
servers, so the engine re-rates neighbours when a split job starts or ends. The other papers'
models are *contention-free* (each reserves bandwidth per job: A-SRPT's per-GPU NIC share, SMD's
per-PS bandwidth, A-Online's per-type bandwidth), so a job's per-iteration time depends only on its
own :class:`~ddl_gym.sim.alloc.Allocation`. A bound contention-free model sets
``contention_free = True`` and implements :class:`ContentionFreeBoundModel`; the engine then
computes τ once at start (and on resize) and never re-rates. Which model a scenario uses is a name in
:data:`PERFORMANCE_MODELS` (classes, or ``"module:Class"`` strings imported on first use).
"""

from __future__ import annotations

import math
from array import array
from dataclasses import dataclass
from typing import Any, Callable, Protocol, Sequence

import numpy as np

from ddl_gym.sim.compact import float_column
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


#: Model name -> class, or ``"module:Class"`` imported on first use (paper models live in their own
#: modules so that an optional dependency of one never breaks the others).
PERFORMANCE_MODELS: dict[str, type | str] = {
    "rar": RARContentionModel,
    "allreduce": AllReduceContentionModel,
    "pipeline": "ddl_gym.sim.perf_pipeline:PipelineRateModel",  # A-SRPT §III-B eqs. (4)-(7)
    "smd-ps": "ddl_gym.sim.perf_ps:SMDSpeedModel",  # SMD §III-B/C eqs. (4)/(5)
    "aonline-ps": "ddl_gym.sim.perf_aonline:AOnlinePSModel",  # A-Online eq. (1)
    "aonline-ra": "ddl_gym.sim.perf_aonline:AOnlineRAModel",  # A-Online eq. (14)
}


def performance_model_class(name: str) -> type:
    """The class registered under ``name`` (imports it on first use)."""
    try:
        target = PERFORMANCE_MODELS[name]
    except KeyError:
        raise ConfigError(f"unknown performance model {name!r}; choose one of {sorted(PERFORMANCE_MODELS)}") from None
    if isinstance(target, str):
        import importlib

        module_name, class_name = target.split(":")
        try:
            target = getattr(importlib.import_module(module_name), class_name)
        except (ImportError, AttributeError) as exc:
            raise ConfigError(f"performance model {name!r} is not available: {exc}") from None
        PERFORMANCE_MODELS[name] = target
    return target


def make_performance_model(name: str, **params: Any) -> PerformanceModel:
    """Build a performance model by registry name (e.g. ``"rar"``, ``"allreduce"``) with keyword parameters."""
    cls = performance_model_class(name)
    try:
        return cls(**params)
    except TypeError as exc:
        raise ConfigError(f"performance model {name!r}: {exc}") from None


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
