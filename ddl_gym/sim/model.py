"""Cluster, model-profile and workload data model shared by every simulator, policy and env.

Units everywhere: seconds, bytes, bytes per second. Nothing here imports gymnasium or torch.

Job kinds. Every job has an *architecture* (``Workload.arch``): ``allreduce`` (rigid data-parallel
gang with ring all-reduce, the SJF-BCO / Ada-SRSF model), ``pipeline`` (rigid mixed-parallel job whose
stages are mapped to GPUs, A-SRPT), ``ps`` (parameter-server job with elastic worker / PS counts,
SMD and A-Online) and ``allreduce_elastic`` (ring all-reduce with an elastic worker count, A-Online
§6). Architecture-specific parameters live in frozen profile objects (``Workload.profiles``, one per
distinct profile, ``Workload.profile_index`` per job), the same pattern as ``models`` /
``model_index``; the rate model of the scenario (:mod:`ddl_gym.sim.perf`) interprets them.

Clusters. Servers have several resources (``ClusterSpec.resources``, GPU first) with per-server
capacities; GPUs keep device identity (global GPU indices) so that placements and Gantt charts name
them, the other resources are amounts. ``worker_types`` / ``ps_types`` are catalogues of demand
vectors over those resources (A-Online's EC2-like types, SMD's worker / PS demands).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Sequence

import numpy as np


class ConfigError(ValueError):
    """A configuration or input problem, with a message that names what to fix."""


#: Job architectures, by code (``Workload.arch`` holds the code).
ARCHITECTURES: tuple[str, ...] = ("allreduce", "pipeline", "ps", "allreduce_elastic")
ARCH_ALLREDUCE, ARCH_PIPELINE, ARCH_PS, ARCH_ALLREDUCE_ELASTIC = range(4)
#: Architectures whose GPU demand is fixed (``Workload.gpus``); the others choose it per allocation.
RIGID_ARCHITECTURES: frozenset[int] = frozenset({ARCH_ALLREDUCE, ARCH_PIPELINE})


def arch_code(name: str) -> int:
    """The code of an architecture name (``"allreduce"``, ``"pipeline"``, ``"ps"``, ``"allreduce_elastic"``)."""
    try:
        return ARCHITECTURES.index(name)
    except ValueError:
        raise ConfigError(f"unknown job architecture {name!r}; choose one of {ARCHITECTURES}") from None


@dataclass(frozen=True)
class ResourceType:
    """A worker or parameter-server type: what one instance of it takes on its server.

    Attributes:
        name: e.g. ``"p3.2xlarge-worker"``.
        demand: amount of each cluster resource (same order as ``ClusterSpec.resources``; the GPU
            entry is a whole number of GPUs).
    """

    name: str
    demand: tuple[float, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "demand", tuple(float(d) for d in self.demand))
        if any(not np.isfinite(d) or d < 0 for d in self.demand):
            raise ConfigError(f"resource type {self.name!r}: every demand must be a finite number >= 0, got {self.demand}")
        if self.demand and self.demand[0] != int(self.demand[0]):
            raise ConfigError(f"resource type {self.name!r}: the GPU demand must be a whole number, got {self.demand[0]}")


@dataclass(frozen=True)
class ModelProfile:
    """Per-model training profile (one worker, one mini-batch).

    Attributes:
        name: model name, e.g. ``"resnet50"``.
        gradient_bytes: gradient / parameter size exchanged per all-reduce (``m_j``, Ada-SRSF ``M``).
        forward_s: forward-pass time of one mini-batch on one GPU (``Δf_j·M_j``, Ada-SRSF ``t_f``).
        backward_s: backward-pass time of one mini-batch on one GPU (``Δb_j``, Ada-SRSF ``t_b``).
        batch_size: per-worker mini-batch size (``M_j``); informational for the RAR model.
        gpu_memory_mb: GPU memory one worker occupies (Ada-SRSF Table III), used where GPUs are shared.
    """

    name: str
    gradient_bytes: float
    forward_s: float
    backward_s: float
    batch_size: int = 32
    gpu_memory_mb: float = 0.0

    @property
    def compute_s(self) -> float:
        """Forward + backward time of one iteration on one GPU, seconds."""
        return self.forward_s + self.backward_s

    def __post_init__(self) -> None:
        for name in ("gradient_bytes", "forward_s", "backward_s", "gpu_memory_mb"):
            value = getattr(self, name)
            if not np.isfinite(value) or value < 0:
                raise ConfigError(f"model profile {self.name!r}: {name} must be a finite number >= 0, got {value!r}")
        if self.batch_size < 1:
            raise ConfigError(f"model profile {self.name!r}: batch_size must be >= 1, got {self.batch_size}")


@dataclass(frozen=True)
class ClusterSpec:
    """A GPU cluster: servers behind one non-blocking switch (contention only at the NICs).

    Attributes:
        gpus_per_server: GPU count of each server (heterogeneous counts allowed).
        intra_bandwidth: intra-server GPU-to-GPU bandwidth ``b_i`` in bytes/s (NVLink/PCIe).
        inter_bandwidth: per-server NIC bandwidth ``b_e`` in bytes/s.
        gpu_memory_mb: memory of one GPU (used by models in which GPUs are shared).
        resources: resource names, GPU first (``("gpu",)`` for a GPU-only cluster; e.g.
            ``("gpu", "cpu", "mem", "bw")`` for A-Online, ``("gpu", "cpu", "mem", "storage")`` for SMD).
        capacity: per-server capacity of every resource, one row per server (``None``: GPU-only,
            the GPU column is ``gpus_per_server``). The GPU column must equal ``gpus_per_server``.
        worker_types, ps_types: catalogues of worker / parameter-server types (may be empty).
    """

    gpus_per_server: tuple[int, ...]
    intra_bandwidth: float = 100e9  # bytes/s, NVLink-class
    inter_bandwidth: float = 1.25e9  # bytes/s = 10 Gb/s Ethernet
    gpu_memory_mb: float = 16_384.0  # V100-16GB
    resources: tuple[str, ...] = ("gpu",)
    capacity: tuple[tuple[float, ...], ...] | None = None
    worker_types: tuple[ResourceType, ...] = ()
    ps_types: tuple[ResourceType, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "gpus_per_server", tuple(int(g) for g in self.gpus_per_server))
        if not self.gpus_per_server:
            raise ConfigError("cluster: needs at least one server (gpus_per_server is empty)")
        if min(self.gpus_per_server) < 1:
            raise ConfigError(f"cluster: every server needs >= 1 GPU, got {self.gpus_per_server}")
        for name in ("intra_bandwidth", "inter_bandwidth", "gpu_memory_mb"):
            value = getattr(self, name)
            if not np.isfinite(value) or value <= 0:
                raise ConfigError(f"cluster: {name} must be a finite number > 0, got {value!r}")
        resources = tuple(str(r) for r in self.resources)
        object.__setattr__(self, "resources", resources)
        if not resources or resources[0] != "gpu" or len(set(resources)) != len(resources):
            raise ConfigError(f"cluster: resources must be distinct names with 'gpu' first, got {resources}")
        if self.capacity is not None:
            rows = tuple(tuple(float(c) for c in row) for row in self.capacity)
            object.__setattr__(self, "capacity", rows)
            if len(rows) != len(self.gpus_per_server) or any(len(r) != len(resources) for r in rows):
                raise ConfigError(f"cluster: capacity must have one row per server ({len(self.gpus_per_server)}) and "
                                  f"one column per resource {resources}")
            if any(not np.isfinite(c) or c < 0 for row in rows for c in row):
                raise ConfigError("cluster: every capacity must be a finite number >= 0")
            if tuple(int(r[0]) for r in rows) != self.gpus_per_server or any(r[0] != int(r[0]) for r in rows):
                raise ConfigError("cluster: the GPU column of capacity must equal gpus_per_server")
        elif len(resources) > 1:
            raise ConfigError(f"cluster: resources {resources} need a capacity table (one row per server)")
        for kind in ("worker_types", "ps_types"):
            types = tuple(getattr(self, kind))
            object.__setattr__(self, kind, types)
            for t in types:
                if len(t.demand) != len(resources):
                    raise ConfigError(f"cluster: {kind} {t.name!r} has {len(t.demand)} demands, expected one per "
                                      f"resource {resources}")

    @classmethod
    def homogeneous(cls, servers: int, gpus_per_server: int, **kwargs: float) -> ClusterSpec:
        """``servers`` identical servers of ``gpus_per_server`` GPUs each."""
        return cls(gpus_per_server=(gpus_per_server,) * servers, **kwargs)

    @classmethod
    def pooled(cls, capacity: dict[str, float], **kwargs: Any) -> ClusterSpec:
        """One virtual server holding a whole resource pool (SMD's aggregate cluster: no topology).

        Args:
            capacity: amount of each resource, ``"gpu"`` included (a whole number).
            **kwargs: other ClusterSpec fields (worker_types, ps_types, bandwidths).
        """
        if "gpu" not in capacity:
            raise ConfigError("pooled cluster: capacity needs a 'gpu' entry")
        names = ("gpu",) + tuple(k for k in capacity if k != "gpu")
        row = tuple(float(capacity[k]) for k in names)
        return cls(gpus_per_server=(int(row[0]),), resources=names, capacity=(row,), **kwargs)

    @property
    def num_servers(self) -> int:
        return len(self.gpus_per_server)

    @property
    def num_resources(self) -> int:
        return len(self.resources)

    def capacity_matrix(self) -> np.ndarray:
        """Per-server capacity, shape ``(servers, resources)``, float64 (a fresh array)."""
        if self.capacity is None:
            return np.asarray(self.gpus_per_server, dtype=np.float64)[:, None]
        return np.asarray(self.capacity, dtype=np.float64)

    def resource_index(self, name: str) -> int:
        """Column of resource ``name`` (ConfigError if the cluster has no such resource)."""
        try:
            return self.resources.index(name)
        except ValueError:
            raise ConfigError(f"cluster has no resource {name!r}; it has {self.resources}") from None

    @property
    def num_gpus(self) -> int:
        return int(sum(self.gpus_per_server))

    @property
    def max_server_gpus(self) -> int:
        return max(self.gpus_per_server)

    def gpu_server(self) -> np.ndarray:
        """Server index of each global GPU index (GPUs numbered server by server)."""
        return np.repeat(np.arange(self.num_servers), self.gpus_per_server)

    def server_first_gpu(self) -> np.ndarray:
        """Global index of the first GPU of each server."""
        return np.concatenate(([0], np.cumsum(self.gpus_per_server)[:-1])).astype(np.int64)


@dataclass(frozen=True)
class Workload:
    """A set of jobs as column arrays (fast for 100k-job traces), sorted by arrival time.

    Row ``i`` is job ``i`` for the simulator; ``job_id`` keeps the user's identifier.
    ``models`` holds the distinct profiles and ``model_index`` points into it.

    Columns beyond the rigid all-reduce job (all optional, filled with defaults):

    * ``arch``: architecture code per job (:data:`ARCHITECTURES`; default all-reduce).
    * ``profile_index`` into ``profiles``: the architecture-specific profile of each job
      (``-1`` = none; required for every job whose architecture is not all-reduce).
    * ``predicted_iterations``: what a scheduler is allowed to know about ``iterations`` (a
      user's declaration or a predictor's output, A-SRPT §IV-C); NaN = nothing known. The
      simulator always runs the true ``iterations``.

    For rigid architectures ``gpus`` is the gang size; for elastic ones (``ps``,
    ``allreduce_elastic``) it is the smallest number of GPUs the job can start with and the
    allocation decides the rest.
    """

    job_id: np.ndarray  # int64
    arrival: np.ndarray  # float64 seconds
    gpus: np.ndarray  # int64, G_j
    iterations: np.ndarray  # int64, F_j
    model_index: np.ndarray  # int64 into ``models``
    models: tuple[ModelProfile, ...]
    weight: np.ndarray = field(default=None)  # type: ignore[assignment]  # float64
    user: np.ndarray = field(default=None)  # type: ignore[assignment]  # int64, -1 unknown
    group: np.ndarray = field(default=None)  # type: ignore[assignment]  # int64, -1 unknown
    name: str = "workload"
    arch: np.ndarray = field(default=None)  # type: ignore[assignment]  # int8 architecture code
    profile_index: np.ndarray = field(default=None)  # type: ignore[assignment]  # int64 into profiles, -1 none
    profiles: tuple[Any, ...] = ()
    predicted_iterations: np.ndarray = field(default=None)  # type: ignore[assignment]  # float64, NaN unknown

    def __post_init__(self) -> None:
        n = len(self.job_id)
        fill = {"weight": lambda: np.ones(n), "user": lambda: np.full(n, -1, np.int64),
                "group": lambda: np.full(n, -1, np.int64), "arch": lambda: np.zeros(n, np.int8),
                "profile_index": lambda: np.full(n, -1, np.int64),
                "predicted_iterations": lambda: np.full(n, np.nan)}
        for key, default in fill.items():
            if getattr(self, key) is None:
                object.__setattr__(self, key, default())
        casts = {
            "job_id": np.int64, "arrival": np.float64, "gpus": np.int64, "iterations": np.int64,
            "model_index": np.int64, "weight": np.float64, "user": np.int64, "group": np.int64,
            "arch": np.int8, "profile_index": np.int64, "predicted_iterations": np.float64,
        }
        for key, dtype in casts.items():
            arr = np.ascontiguousarray(getattr(self, key), dtype=dtype)
            if arr.shape != (n,):
                raise ConfigError(f"workload {self.name!r}: column {key!r} has shape {arr.shape}, expected ({n},)")
            arr.setflags(write=False)
            object.__setattr__(self, key, arr)
        object.__setattr__(self, "profiles", tuple(self.profiles))
        for key in ("arrival", "weight"):  # NaN/inf would never arrive or poison rewards (and sort checks)
            values = getattr(self, key)
            if n and not np.all(np.isfinite(values)):
                i = int(np.flatnonzero(~np.isfinite(values))[0])
                raise ConfigError(f"workload {self.name!r}: job {int(self.job_id[i])}: {key} must be a finite number, "
                                  f"got {float(values[i])!r}")
        if n and np.any(np.diff(self.arrival) < 0):
            raise ConfigError(f"workload {self.name!r}: jobs must be sorted by arrival (use Workload.from_jobs)")
        if n and (self.gpus.min() < 1):
            raise ConfigError(f"workload {self.name!r}: every job needs >= 1 GPU")
        if n and (self.iterations.min() < 1):
            raise ConfigError(f"workload {self.name!r}: every job needs >= 1 iteration")
        if n and (self.model_index.min() < 0 or self.model_index.max() >= len(self.models)):
            raise ConfigError(f"workload {self.name!r}: model_index out of range")
        if n and (self.arch.min() < 0 or self.arch.max() >= len(ARCHITECTURES)):
            raise ConfigError(f"workload {self.name!r}: arch codes must be in 0..{len(ARCHITECTURES) - 1}")
        if n and (self.profile_index.min() < -1 or self.profile_index.max() >= len(self.profiles)):
            raise ConfigError(f"workload {self.name!r}: profile_index out of range (profiles: {len(self.profiles)})")
        if n and np.any((self.arch != ARCH_ALLREDUCE) & (self.profile_index < 0)):
            i = int(np.flatnonzero((self.arch != ARCH_ALLREDUCE) & (self.profile_index < 0))[0])
            raise ConfigError(f"workload {self.name!r}: job {int(self.job_id[i])} is a "
                              f"{ARCHITECTURES[self.arch[i]]} job without a profile (profile_index = -1)")

    @property
    def architectures(self) -> frozenset[str]:
        """Names of the architectures present in this workload."""
        return frozenset(ARCHITECTURES[a] for a in np.unique(self.arch).tolist())

    def job_profile(self, i: int) -> Any:
        """The architecture-specific profile of job ``i`` (``None`` for a plain all-reduce job)."""
        k = int(self.profile_index[i])
        return self.profiles[k] if k >= 0 else None

    def __len__(self) -> int:
        return len(self.job_id)

    @property
    def num_jobs(self) -> int:
        return len(self.job_id)

    def profile(self, i: int) -> ModelProfile:
        return self.models[int(self.model_index[i])]

    def per_job(self, attribute: str) -> np.ndarray:
        """A model-profile attribute broadcast to one value per job (e.g. ``"gradient_bytes"``)."""
        table = np.array([getattr(m, attribute) for m in self.models], dtype=np.float64)
        return table[self.model_index]

    @classmethod
    def from_jobs(
        cls,
        *,
        arrival: Sequence[float],
        gpus: Sequence[int],
        iterations: Sequence[int],
        models: Sequence[ModelProfile],
        job_id: Sequence[int] | None = None,
        weight: Sequence[float] | None = None,
        user: Sequence[int] | None = None,
        group: Sequence[int] | None = None,
        name: str = "workload",
        arch: Sequence[int | str] | None = None,
        profiles: Sequence[Any] | None = None,
        predicted_iterations: Sequence[float] | None = None,
    ) -> Workload:
        """Build from per-job lists (``models`` one profile per job); sorts stably by arrival.

        ``arch`` (codes or names) and ``profiles`` (one architecture profile per job, or ``None``
        entries for plain all-reduce jobs) are optional; equal profiles are stored once.
        """
        n = len(arrival)
        arrival_arr = np.asarray(arrival, dtype=np.float64)
        order = np.argsort(arrival_arr, kind="stable")
        distinct: dict[ModelProfile, int] = {}
        model_index = np.empty(n, dtype=np.int64)
        for i, m in enumerate(models):
            model_index[i] = distinct.setdefault(m, len(distinct))

        def pick(values: Iterable | None, default: np.ndarray) -> np.ndarray:
            return default[order] if values is None else np.asarray(values)[order]

        arch_codes = None if arch is None else np.array([a if isinstance(a, (int, np.integer)) else arch_code(a)
                                                         for a in arch], dtype=np.int8)
        profile_index = np.full(n, -1, dtype=np.int64)
        distinct_profiles: dict[Any, int] = {}
        if profiles is not None:
            for i, prof in enumerate(profiles):
                if prof is not None:
                    profile_index[i] = distinct_profiles.setdefault(prof, len(distinct_profiles))
        return cls(
            job_id=pick(job_id, np.arange(n)),
            arrival=arrival_arr[order],
            gpus=np.asarray(gpus)[order],
            iterations=np.asarray(iterations)[order],
            model_index=model_index[order],
            models=tuple(distinct),
            weight=pick(weight, np.ones(n)),
            user=pick(user, np.full(n, -1)),
            group=pick(group, np.full(n, -1)),
            name=name,
            arch=pick(arch_codes, np.zeros(n, dtype=np.int8)),
            profile_index=profile_index[order],
            profiles=tuple(distinct_profiles),
            predicted_iterations=pick(predicted_iterations, np.full(n, np.nan)),
        )

    def subset(self, rows: np.ndarray, name: str | None = None) -> Workload:
        """The jobs at ``rows`` (kept in arrival order)."""
        rows = np.sort(np.asarray(rows, dtype=np.int64))
        return replace(
            self,
            job_id=self.job_id[rows], arrival=self.arrival[rows], gpus=self.gpus[rows],
            iterations=self.iterations[rows], model_index=self.model_index[rows],
            weight=self.weight[rows], user=self.user[rows], group=self.group[rows],
            arch=self.arch[rows], profile_index=self.profile_index[rows],
            predicted_iterations=self.predicted_iterations[rows], name=name or self.name,
        )

    def with_predictions(self, predicted_iterations: np.ndarray) -> Workload:
        """Same jobs with ``predicted_iterations`` replaced (what schedulers may know)."""
        return replace(self, predicted_iterations=np.asarray(predicted_iterations, dtype=np.float64))

    def shifted(self, offset: float) -> Workload:
        """Same jobs with ``offset`` added to every arrival."""
        return replace(self, arrival=self.arrival + offset)

    def check_fits(self, cluster: ClusterSpec) -> None:
        """Raise ConfigError naming the first job that needs more GPUs than the cluster has."""
        too_big = np.flatnonzero(self.gpus > cluster.num_gpus)
        if too_big.size:
            i = int(too_big[0])
            raise ConfigError(
                f"workload {self.name!r}: job {int(self.job_id[i])} needs {int(self.gpus[i])} GPUs but the "
                f"cluster has {cluster.num_gpus} ({too_big.size} such jobs); drop them with "
                "drop_oversized=True / --drop-oversized"
            )
