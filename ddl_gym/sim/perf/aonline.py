"""A-Online's job model: PS training speed (Zhou eq. 1) and Ring-AllReduce speed (Zhou eq. 14).

Zhou et al. (``shared/papers/zhou-online-heterogeneous-ml-jobs.txt``) measure time in *slots* of one
hour (§7) and work in *mini-batches*: job ``j`` trains ``E_j·D_j·K_j`` mini-batches, and each of its
``N`` workers of type ``m`` trains ``ρ`` mini-batches per slot, so the job needs
``d_j = ceil(E_j D_j K_j / (N ρ))`` slots (eq. 2f). In the engine one unit of
``Workload.iterations`` is one mini-batch, and the per-iteration time is ``SLOT_SECONDS / (N ρ)``
seconds (the job completes at its exact time and releases everything; spec C5 #11).

Units. Profiles hold ``v_jm``, ``U_j^p`` and ``U_j`` in slots (the paper's unit; ``U`` is drawn in
milliseconds and converted), ``π_j`` in bytes. Clusters hold bandwidth (resource ``"bw"``) in Gb/s,
so ``b_m = e_m^bw · 1e9/8`` bytes/s.

Both rate models are contention-free: each job reserves its bandwidth (worker ``b_m``, PS ``B_p``),
so its speed depends on its own allocation only. They validate what the paper requires of an
allocation: one worker type (2b), one PS type (2c), at least one PS (2e), at most ``D_j`` workers
(2g) and PS bandwidth covering the remote workers on every server holding PSs (2i). A policy that
breaks one of them gets a :class:`ConfigError` naming the constraint.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ddl_gym.sim.model import ARCH_ALLREDUCE_ELASTIC, ARCH_PS, ClusterSpec, ConfigError, Workload
from ddl_gym.sim.perf import require_architectures

SLOT_SECONDS = 3600.0  # Zhou §7: "Each time slot is one hour long."
GBPS_BYTES = 1e9 / 8  # bytes per second in one Gb/s
AONLINE_RESOURCES = ("gpu", "cpu", "mem", "bw")  # GPUs, vCPUs, GiB, Gb/s (Zhou §3.1: R = 4)


@dataclass(frozen=True)
class AOnlineProfile:
    """One A-Online job (Zhou Table 1 and §7); frozen and hashable, stored once per distinct job.

    Attributes:
        epochs: ``E_j``.
        chunks: ``D_j`` data chunks (also the most workers the job may use, eq. 2g).
        minibatches_per_chunk: ``K_j``.
        gradient_bytes: ``π_j``, gradient size per worker per mini-batch.
        worker_time: ``v_jm`` per worker type (slots per mini-batch), one entry per catalogue type.
        ps_update: ``U_j^p`` per PS type (slots per iteration).
        ra_update: ``U_j`` of eq. (14), time to reduce a gradient of size ``π_j`` (slots).
        baseline_workers: the fixed worker count of FIFO / AntMan / Tiresias (Zhou §7 "a number
            within [1, 30]", capped at ``D_j``), drawn once per job so that they share it.
    """

    epochs: int
    chunks: int
    minibatches_per_chunk: int
    gradient_bytes: float
    worker_time: tuple[float, ...]
    ps_update: tuple[float, ...] = ()
    ra_update: float = 0.0
    baseline_workers: int = 1

    def __post_init__(self) -> None:
        object.__setattr__(self, "worker_time", tuple(float(v) for v in self.worker_time))
        object.__setattr__(self, "ps_update", tuple(float(u) for u in self.ps_update))
        if min(self.epochs, self.chunks, self.minibatches_per_chunk) < 1:
            raise ConfigError(f"A-Online profile: E, D, K must be >= 1, got {self.epochs}, {self.chunks}, "
                              f"{self.minibatches_per_chunk}")
        if not self.worker_time or min(self.worker_time) <= 0:
            raise ConfigError("A-Online profile: worker_time needs one positive v_jm per worker type")
        if any(u < 0 for u in self.ps_update) or self.ra_update < 0 or self.gradient_bytes < 0:
            raise ConfigError("A-Online profile: U and π must be >= 0")
        if not 1 <= self.baseline_workers <= self.chunks:
            raise ConfigError(f"A-Online profile: baseline_workers must be in [1, D_j={self.chunks}]")

    @property
    def total_minibatches(self) -> int:
        """``E_j·D_j·K_j`` (Zhou eq. 2f)."""
        return self.epochs * self.chunks * self.minibatches_per_chunk


# ----------------------------------------------------------------------------- eqs. (1), (14)
def exchange_slots(gradient_bytes: float, bw_gbps: float) -> float:
    """``2·π_j/b_m`` in slots: push gradients and pull parameters over the worker's reserved link."""
    if bw_gbps <= 0:
        return math.inf
    return 2.0 * gradient_bytes / (bw_gbps * GBPS_BYTES) / SLOT_SECONDS


def ps_rate(v: float, ps_update: float, gradient_bytes: float, bw_gbps: float, colocated: bool) -> float:
    """Zhou eq. (1): mini-batches per slot of one worker, ``1/(v + U)`` co-located, else ``+ 2π/b``."""
    per_batch = v + ps_update + (0.0 if colocated else exchange_slots(gradient_bytes, bw_gbps))
    return 1.0 / per_batch


def ra_rate(v: float, reduce_update: float, gradient_bytes: float, bw_gbps: float, workers: int,
            colocated: bool) -> float:
    """Zhou eq. (14): ``1/(v + U(Φ−1)/Φ)`` on one server, ``+ 2π(Φ−1)/(Φ b)`` across servers."""
    share = (workers - 1) / workers
    per_batch = v + reduce_update * share + (0.0 if colocated else exchange_slots(gradient_bytes, bw_gbps) * share)
    return 1.0 / per_batch


def duration_slots(total_minibatches: float, workers: int, rate: float) -> int:
    """``d = ceil(EDK / (N ρ))`` slots (eq. 2f), the whole slots a plan reserves."""
    return int(math.ceil(total_minibatches / (workers * rate)))


def ps_count_for_bandwidth(remote_workers: int, worker_bw: float, ps_bw: float) -> int:
    """Fewest PSs on one server whose bandwidth covers ``remote_workers`` (eq. 2i), at least 1 (2e)."""
    if remote_workers <= 0:
        return 1
    return max(1, int(math.ceil(remote_workers * worker_bw / ps_bw - 1e-12)))


# ----------------------------------------------------------------------------- allocations
@dataclass(frozen=True)
class Config:
    """A configuration read from an allocation: worker type, PS type (-1 for RA), counts, co-location."""

    worker_type: int
    ps_type: int
    workers: int
    ps: int
    colocated: bool


def read_config(cluster: ClusterSpec, alloc: Any, profile: AOnlineProfile, arch: int, job: int) -> Config:
    """Check an allocation against Zhou's constraints and return its configuration.

    Raises:
        ConfigError: naming the violated constraint (2b), (2c), (2e), (2g) or (2i).
    """
    wtypes = {t for _, t, _ in alloc.workers}
    if len(wtypes) != 1:
        raise ConfigError(f"job {job}: needs exactly one worker type (Zhou 2b), allocation has {sorted(wtypes)}")
    workers = alloc.num_workers()
    if not 1 <= workers <= profile.chunks:
        raise ConfigError(f"job {job}: {workers} workers, must be in [1, D_j={profile.chunks}] (Zhou 2g)")
    m = next(iter(wtypes))
    worker_servers = {s for s, _, c in alloc.workers if c}
    if arch == ARCH_ALLREDUCE_ELASTIC:
        if alloc.ps:
            raise ConfigError(f"job {job}: a ring-all-reduce job has no parameter servers")
        return Config(m, -1, workers, 0, len(worker_servers) == 1)
    ptypes = {t for _, t, _ in alloc.ps}
    if len(ptypes) != 1:
        raise ConfigError(f"job {job}: needs exactly one PS type (Zhou 2c/2e), allocation has {sorted(ptypes)}")
    p = next(iter(ptypes))
    bw = cluster.resource_index("bw")
    b_m = cluster.worker_types[m].demand[bw]
    b_p = cluster.ps_types[p].demand[bw]
    per_server = {}
    for s, _, c in alloc.workers:
        per_server[s] = per_server.get(s, 0) + c
    ps_servers: dict[int, int] = {}
    for s, _, c in alloc.ps:
        ps_servers[s] = ps_servers.get(s, 0) + c
    for s, count in ps_servers.items():  # (2i): PS bandwidth on s covers every worker elsewhere
        remote = workers - per_server.get(s, 0)
        if remote * b_m > count * b_p * (1 + 1e-9):
            raise ConfigError(f"job {job}: {count} PS(s) on server {s} give {count * b_p:g} Gb/s for {remote} remote "
                              f"workers needing {remote * b_m:g} Gb/s (Zhou 2i)")
    colocated = len(worker_servers | set(ps_servers)) == 1
    return Config(m, p, workers, sum(ps_servers.values()), colocated)


def config_rate(profile: AOnlineProfile, cluster: ClusterSpec, arch: int, cfg: Config) -> float:
    """Per-worker mini-batches per slot of a configuration (eq. 1 or 14)."""
    bw = cluster.resources.index("bw")
    b_m = cluster.worker_types[cfg.worker_type].demand[bw]
    v = profile.worker_time[cfg.worker_type]
    if arch == ARCH_ALLREDUCE_ELASTIC:
        return ra_rate(v, profile.ra_update, profile.gradient_bytes, b_m, cfg.workers, cfg.colocated)
    return ps_rate(v, profile.ps_update[cfg.ps_type], profile.gradient_bytes, b_m, cfg.colocated)


def ideal_config(profile: AOnlineProfile, cluster: ClusterSpec, arch: int, workers: int | None = None
                 ) -> tuple[int, int, int, int]:
    """The "ideal case" configuration of Zhou §7 baselines: ``(m*, p*, N, PS count)``.

    ``m* = argmax_m ρ_jm`` (distributed ρ, the usual case for many workers; ties: lower index),
    ``p* = argmin_p U_j^p``, ``N = workers`` (default ``D_j``), PSs = the fewest on one server that
    cover all ``N`` workers' bandwidth (2i) when they are remote.
    """
    n = profile.chunks if workers is None else int(workers)
    bw = cluster.resources.index("bw")
    if arch == ARCH_ALLREDUCE_ELASTIC:
        rates = [ra_rate(v, profile.ra_update, profile.gradient_bytes, t.demand[bw], max(n, 2), False)
                 for v, t in zip(profile.worker_time, cluster.worker_types)]
        return int(np.argmax(rates)), -1, n, 0
    p = int(np.argmin(profile.ps_update))
    rates = [ps_rate(v, profile.ps_update[p], profile.gradient_bytes, t.demand[bw], False)
             for v, t in zip(profile.worker_time, cluster.worker_types)]
    m = int(np.argmax(rates))
    ps = ps_count_for_bandwidth(n, cluster.worker_types[m].demand[bw], cluster.ps_types[p].demand[bw])
    return m, p, n, ps


# ----------------------------------------------------------------------------- rate models
@dataclass(frozen=True)
class AOnlinePSModel:
    """Parameter-server jobs, Zhou eq. (1); contention-free (bandwidth reserved per worker / PS)."""

    name: str = "aonline-ps"
    arch: str = "ps"

    def bind(self, cluster: ClusterSpec, workload: Workload) -> BoundAOnlineModel:
        require_architectures(self.name, workload, (self.arch,))
        return BoundAOnlineModel(cluster, workload)


@dataclass(frozen=True)
class AOnlineRAModel(AOnlinePSModel):
    """Elastic ring-all-reduce jobs, Zhou eq. (14)."""

    name: str = "aonline-ra"
    arch: str = "allreduce_elastic"


class BoundAOnlineModel:
    """Both A-Online models bound to a cluster and workload (the architecture is read per job)."""

    contention_free = True

    def __init__(self, cluster: ClusterSpec, workload: Workload) -> None:
        if "bw" not in cluster.resources or not cluster.worker_types:
            raise ConfigError("A-Online models need a cluster with a 'bw' resource (Gb/s) and a worker-type catalogue")
        self.cluster = cluster
        self.workload = workload
        self.profiles: list[AOnlineProfile] = [workload.job_profile(j) for j in range(workload.num_jobs)]
        for j, prof in enumerate(self.profiles):
            if not isinstance(prof, AOnlineProfile):
                raise ConfigError(f"job {j}: A-Online models need an AOnlineProfile, got {type(prof).__name__}")
            if len(prof.worker_time) != len(cluster.worker_types):
                raise ConfigError(f"job {j}: {len(prof.worker_time)} worker times for {len(cluster.worker_types)} types")
            if workload.arch[j] == ARCH_PS and len(prof.ps_update) != len(cluster.ps_types):
                raise ConfigError(f"job {j}: {len(prof.ps_update)} PS update times for {len(cluster.ps_types)} PS types")
        self.arch: list[int] = workload.arch.tolist()
        self._gpu_col = 0

    def config(self, job: int, alloc: Any) -> Config:
        return read_config(self.cluster, alloc, self.profiles[job], self.arch[job], job)

    def rate(self, job: int, alloc: Any) -> float:
        """Mini-batches per slot of the whole job on ``alloc`` (``N·ρ``)."""
        cfg = self.config(job, alloc)
        return cfg.workers * config_rate(self.profiles[job], self.cluster, self.arch[job], cfg)

    def allocation_time(self, job: int, alloc: Any) -> float:
        return SLOT_SECONDS / self.rate(job, alloc)

    def nominal_iteration_time(self, job: int) -> float:
        """Seconds per mini-batch on the ideal configuration (``D_j`` workers of the fastest type)."""
        prof = self.profiles[job]
        m, p, n, _ = ideal_config(prof, self.cluster, self.arch[job])
        cfg = Config(m, p, n, 1, False)
        return SLOT_SECONDS / (n * config_rate(prof, self.cluster, self.arch[job], cfg))

    def busy_gpu_seconds_per_iteration(self, job: int, alloc: Any) -> float:
        """One mini-batch keeps one worker's GPUs computing for ``v_jm`` slots."""
        cfg = self.config(job, alloc)
        gpus = self.cluster.worker_types[cfg.worker_type].demand[self._gpu_col]
        return self.profiles[job].worker_time[cfg.worker_type] * SLOT_SECONDS * gpus
