"""Cluster, model-profile and workload data model shared by every simulator, policy and env.

Units everywhere: seconds, bytes, bytes per second. Nothing here imports gymnasium or torch.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Iterable, Sequence

import numpy as np


class ConfigError(ValueError):
    """A configuration or input problem, with a message that names what to fix."""


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
    """

    gpus_per_server: tuple[int, ...]
    intra_bandwidth: float = 100e9  # bytes/s, NVLink-class
    inter_bandwidth: float = 1.25e9  # bytes/s = 10 Gb/s Ethernet
    gpu_memory_mb: float = 16_384.0  # V100-16GB

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

    @classmethod
    def homogeneous(cls, servers: int, gpus_per_server: int, **kwargs: float) -> ClusterSpec:
        """``servers`` identical servers of ``gpus_per_server`` GPUs each."""
        return cls(gpus_per_server=(gpus_per_server,) * servers, **kwargs)

    @property
    def num_servers(self) -> int:
        return len(self.gpus_per_server)

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

    def __post_init__(self) -> None:
        n = len(self.job_id)
        fill = {"weight": np.ones(n), "user": np.full(n, -1, np.int64), "group": np.full(n, -1, np.int64)}
        for key, default in fill.items():
            if getattr(self, key) is None:
                object.__setattr__(self, key, default)
        casts = {
            "job_id": np.int64, "arrival": np.float64, "gpus": np.int64, "iterations": np.int64,
            "model_index": np.int64, "weight": np.float64, "user": np.int64, "group": np.int64,
        }
        for key, dtype in casts.items():
            arr = np.ascontiguousarray(getattr(self, key), dtype=dtype)
            if arr.shape != (n,):
                raise ConfigError(f"workload {self.name!r}: column {key!r} has shape {arr.shape}, expected ({n},)")
            arr.setflags(write=False)
            object.__setattr__(self, key, arr)
        if n and np.any(np.diff(self.arrival) < 0):
            raise ConfigError(f"workload {self.name!r}: jobs must be sorted by arrival (use Workload.from_jobs)")
        if n and (self.gpus.min() < 1):
            raise ConfigError(f"workload {self.name!r}: every job needs >= 1 GPU")
        if n and (self.iterations.min() < 1):
            raise ConfigError(f"workload {self.name!r}: every job needs >= 1 iteration")
        if n and (self.model_index.min() < 0 or self.model_index.max() >= len(self.models)):
            raise ConfigError(f"workload {self.name!r}: model_index out of range")

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
    ) -> Workload:
        """Build from per-job lists (``models`` one profile per job); sorts stably by arrival."""
        n = len(arrival)
        arrival_arr = np.asarray(arrival, dtype=np.float64)
        order = np.argsort(arrival_arr, kind="stable")
        distinct: dict[ModelProfile, int] = {}
        model_index = np.empty(n, dtype=np.int64)
        for i, m in enumerate(models):
            model_index[i] = distinct.setdefault(m, len(distinct))

        def pick(values: Iterable | None, default: np.ndarray) -> np.ndarray:
            return default[order] if values is None else np.asarray(values)[order]

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
        )

    def subset(self, rows: np.ndarray, name: str | None = None) -> Workload:
        """The jobs at ``rows`` (kept in arrival order)."""
        rows = np.sort(np.asarray(rows, dtype=np.int64))
        return replace(
            self,
            job_id=self.job_id[rows], arrival=self.arrival[rows], gpus=self.gpus[rows],
            iterations=self.iterations[rows], model_index=self.model_index[rows],
            weight=self.weight[rows], user=self.user[rows], group=self.group[rows],
            name=name or self.name,
        )

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
