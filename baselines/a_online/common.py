"""Pieces shared by A-Online and its baselines (Zhou §7): architecture checks, per-job rates,
catalogue arrays, allocation building and a greedy multi-resource placement."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ddl_gym.sim.alloc import Allocation
from ddl_gym.sim.engine import Simulator, run_policy
from ddl_gym.sim.metrics import SimResult
from ddl_gym.sim.model import ARCH_ALLREDUCE_ELASTIC, ARCH_PS, ClusterSpec, ConfigError, Workload
from ddl_gym.sim.perf.aonline import (
    SLOT_SECONDS, AOnlineProfile, ideal_config, ps_count_for_bandwidth, ps_rate, ra_rate,
)
from ddl_gym.baselines.a_online.mincost import JobRates, Schedule

AONLINE_ARCHS = frozenset({"ps", "allreduce_elastic"})


def require_aonline(policy: str, workload: Workload, cluster: ClusterSpec, scenario: str | None = None) -> None:
    """Raise ConfigError naming the policy and the scenario (or workload) if it is not an A-Online world."""
    where = f"scenario {scenario!r}" if scenario else f"workload {workload.name!r}"
    other = sorted(workload.architectures - AONLINE_ARCHS)
    if other or not all(isinstance(workload.job_profile(j), AOnlineProfile) for j in range(workload.num_jobs)):
        raise ConfigError(f"policy {policy!r} schedules A-Online ps / allreduce_elastic jobs, but {where} "
                          f"has {', '.join(other) or 'jobs without an AOnlineProfile'} jobs; "
                          "use scenario aonline-ps or aonline-ra")
    if "bw" not in cluster.resources or not cluster.worker_types:
        raise ConfigError(f"policy {policy!r} needs a multi-resource cluster with worker types ({where})")


def job_rates(profile: AOnlineProfile, cluster: ClusterSpec, arch: int) -> JobRates:
    """``ρ`` of eq. (1) for every (q, m, p) or of eq. (14) for every (q, m, Φ)."""
    bw = cluster.resources.index("bw")
    b = [t.demand[bw] for t in cluster.worker_types]
    M = len(b)
    if arch == ARCH_PS:
        P = len(cluster.ps_types)
        rates = np.empty((2, M, P))
        for q in (0, 1):
            for m in range(M):
                for p in range(P):
                    rates[q, m, p] = ps_rate(profile.worker_time[m], profile.ps_update[p], profile.gradient_bytes,
                                             b[m], bool(q))
        return JobRates(float(profile.total_minibatches), profile.chunks, ps_rate=rates)
    D = profile.chunks
    rates = np.zeros((2, M, D + 1))
    for q in (0, 1):
        for m in range(M):
            for phi in range(1, D + 1):
                rates[q, m, phi] = ra_rate(profile.worker_time[m], profile.ra_update, profile.gradient_bytes, b[m],
                                           phi, bool(q))
    return JobRates(float(profile.total_minibatches), D, ra_rate=rates)


def catalogue_arrays(cluster: ClusterSpec) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """``(C (H,R), e (M,R), z (P,R), bw column)``."""
    R = cluster.num_resources
    e = np.array([t.demand for t in cluster.worker_types], dtype=np.float64).reshape(-1, R)
    z = np.array([t.demand for t in cluster.ps_types], dtype=np.float64).reshape(-1, R)
    return cluster.capacity_matrix(), e, z, cluster.resources.index("bw")


def schedule_allocation(cluster: ClusterSpec, sched: Schedule) -> Allocation:
    return Allocation.typed(cluster, workers=[(h, sched.worker_type, c) for h, c in sched.workers],
                            ps=[(h, sched.ps_type, c) for h, c in sched.ps])


def run_with_extras(policy: Any, scenario: Any, cluster: ClusterSpec, workload: Workload,
                    rng: np.random.Generator) -> SimResult:
    """Self-driving run: the native loop, then the policy's own statistics added to the summary."""
    require_aonline(getattr(policy, "name", "?"), workload, cluster, getattr(scenario, "name", None))
    sim = Simulator(cluster, workload, scenario.model)
    result = run_policy(sim, policy, rng)
    extras = getattr(policy, "summary_extras", None)
    if callable(extras):
        result.extra["summary"] = dict(extras())
    return result


class SelfDrivingPolicy:
    """Base of the A-Online world's policies: ``run_episode`` = :func:`run_with_extras` (native loop + extras)."""

    name = "?"
    capabilities: frozenset = frozenset()

    def run_episode(self, scenario: Any, cluster: ClusterSpec, workload: Workload,
                    rng: np.random.Generator) -> SimResult:
        return run_with_extras(self, scenario, cluster, workload, rng)


# ----------------------------------------------------------------------------- baseline placement
def place_fixed(sim: Simulator, job: int, m: int, p: int, workers: int, arch: int,
                free: np.ndarray | None = None) -> Allocation | None:
    """Zhou §7 baselines' placement of a fixed configuration (spec C3, FIFO row).

    One server if everything fits there (the one with the most free GPUs); otherwise all PSs on the
    server with the most free bandwidth that can hold the PSs covering every remote worker (2i), and
    workers filled onto servers by most free resources (sum of free fractions). ``free`` overrides
    the simulator's free resources (planning on a virtual ledger). None if it does not fit.
    """
    free = sim.free_resources() if free is None else free
    return place_on(sim.cluster, sim.capacity, free, m, p, workers, arch)


def place_on(cluster: ClusterSpec, cap: np.ndarray, free: np.ndarray, m: int, p: int, workers: int, arch: int
             ) -> Allocation | None:
    """:func:`place_fixed` on explicit capacity / free matrices (planning without a simulator)."""
    e = np.asarray(cluster.worker_types[m].demand)
    arch_ps = arch == ARCH_PS
    z = np.asarray(cluster.ps_types[p].demand) if arch_ps else np.zeros_like(e)
    single = workers * e + z
    fits_one = np.all(free >= single[None, :] - 1e-9, axis=1)
    if fits_one.any():
        candidates = np.flatnonzero(fits_one)
        h = int(candidates[np.argmax(free[candidates, 0])])
        return Allocation.typed(cluster, workers=[(h, m, workers)], ps=[(h, p, 1)] if arch_ps else [])
    bw = cluster.resources.index("bw")
    ps_list: list[tuple[int, int, int]] = []
    remaining_free = free.copy()
    if arch_ps:
        n_ps = ps_count_for_bandwidth(workers, e[bw], z[bw])
        need = n_ps * z
        ok = np.flatnonzero(np.all(free >= need[None, :] - 1e-9, axis=1))
        if ok.size == 0:
            return None
        h_ps = int(ok[np.argmax(free[ok, bw])])
        ps_list = [(h_ps, p, n_ps)]
        remaining_free[h_ps] -= need
    per_server = worker_room(remaining_free, e)
    if per_server.sum() < workers:
        return None
    score = (remaining_free / np.maximum(cap, 1e-12)).sum(axis=1)
    placed, left = [], workers
    for h in np.argsort(-score, kind="stable").tolist():  # most free first, ties: lower index
        take = int(min(per_server[h], left))
        if take:
            placed.append((h, m, take))
            left -= take
        if not left:
            break
    return Allocation.typed(cluster, workers=placed, ps=ps_list)


def max_workers_fitting(cluster: ClusterSpec, free: np.ndarray, m: int, p: int, limit: int, arch: int) -> int:
    """Largest ``n <= limit`` for which :func:`place_on` succeeds on ``free`` (0 if none), without
    building allocations: one server holding everything, or PSs on one server plus room elsewhere."""
    e = np.asarray(cluster.worker_types[m].demand)
    arch_ps = arch == ARCH_PS
    z = np.asarray(cluster.ps_types[p].demand) if arch_ps else np.zeros_like(e)
    bw = cluster.resources.index("bw")
    room_one = worker_room(free - z[None, :], e) if arch_ps else worker_room(free, e)
    if arch_ps:
        room_one[np.any(free < z[None, :] - 1e-9, axis=1)] = 0
    best = int(min(limit, room_one.max(initial=0)))
    room = worker_room(free, e)
    for n in range(limit, best, -1):  # spread placements need a PS server covering n remote workers
        if not arch_ps:
            if room.sum() >= n:
                return n
            continue
        need = ps_count_for_bandwidth(n, e[bw], z[bw]) * z
        ok = np.flatnonzero(np.all(free >= need[None, :] - 1e-9, axis=1))
        if ok.size == 0:
            continue
        h_ps = int(ok[np.argmax(free[ok, bw])])
        left = room.sum() - room[h_ps] + worker_room((free[h_ps] - need)[None, :], e)[0]
        if left >= n:
            return n
    return best


def worker_room(free: np.ndarray, e: np.ndarray) -> np.ndarray:
    """How many workers of demand ``e`` fit on each server's ``free`` resources."""
    with np.errstate(divide="ignore", invalid="ignore"):
        room = np.where(e[None, :] > 0, np.floor(free / np.where(e > 0, e, 1.0)[None, :] + 1e-9), np.inf).min(axis=1)
    return np.maximum(room, 0)


def alloc_use(cluster: ClusterSpec, alloc: Allocation) -> np.ndarray:
    """Resources an allocation takes, as a full ``(servers, resources)`` matrix."""
    out = np.zeros((cluster.num_servers, cluster.num_resources))
    servers, use = alloc.server_use(cluster)
    if servers:
        out[list(servers)] += use
    return out


def ideal_of(sim: Simulator, job: int, workers: int | None = None) -> tuple[int, int, int, int]:
    """The job's ideal ``(m*, p*, N, PS count)`` (``workers`` overrides ``N``)."""
    prof = sim.workload.job_profile(job)
    return ideal_config(prof, sim.cluster, int(sim.workload.arch[job]), workers)


def fixed_config(sim: Simulator, job: int) -> tuple[int, int, int, int]:
    """The FIFO / AntMan / Tiresias configuration: ideal types, ``N_fifo`` workers, capped to the most
    that fit the *empty* cluster with this placement rule (a larger gang could never start: with
    all PSs on one server, eq. 2i can need more PSs than any server holds)."""
    m, p, n, ps = ideal_of(sim, job, sim.workload.job_profile(job).baseline_workers)
    arch = int(sim.workload.arch[job])
    while n > 1 and place_on(sim.cluster, sim.capacity, sim.capacity, m, p, n, arch) is None:
        n -= 1
    return m, p, n, ps


def slots(seconds: float) -> float:
    return seconds / SLOT_SECONDS


def normalised_footprint(cluster: ClusterSpec, m: int, p: int, workers: int, n_ps: int) -> float:
    """Σ_r demand_r / total capacity_r of a configuration (Tiresias' resource factor, DRF's shares)."""
    total = cluster.capacity_matrix().sum(axis=0)
    use = workers * np.asarray(cluster.worker_types[m].demand)
    if p >= 0 and n_ps:
        use = use + n_ps * np.asarray(cluster.ps_types[p].demand)
    return float((use / np.maximum(total, 1e-12)).sum())


def is_ps(arch: int) -> bool:
    return arch == ARCH_PS


def is_ra(arch: int) -> bool:
    return arch == ARCH_ALLREDUCE_ELASTIC


def ceil_slots(x: float) -> int:
    return int(math.ceil(x - 1e-9))
