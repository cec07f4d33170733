"""Offered load and lower bounds of A-Online worlds (Zhou §7; issue 32), and the load axis rule.

The paper gives no arrival process; the worlds draw arrival slots ``U{1..T}``. Because the cluster is
scaled to ``κ ×`` the jobs' summed ideal demand, the offered load depends on ``T`` (and on the job
draws), not on the number of jobs or servers: about ``mean run time / (κ·T)``. At the project's
``T = 300`` it is ≈ 0.2, where no policy can beat the best baseline by 30 % (it is within a few
percent of the lower bound). This module makes load an explicit, stated quantity.

Definitions (every time in one-hour slots):

* **minimal area** ``A_j^r`` of job ``j`` on resource ``r``: the least ``r``-time any configuration
  can use: ``e_m^r · EDK / ρ`` minimised over worker type ``m``, PS type ``p`` and co-location ``q``
  (PS jobs, eq. 1: ``N`` workers for ``EDK/(Nρ)`` slots use ``N·e_m^r`` for that long, whatever
  ``N``) or over ``m``, ``Φ``, ``q`` with ``ρ = ρ_jm(Φ)`` (ring-all-reduce, eq. 14). PSs are left out
  (it stays a lower bound).
* **offered load** ``max_r Σ_j A_j^r / (Σ_h C_h^r · W)`` with ``W`` the arrival window ``T``: above 1
  the cluster cannot keep up on some resource even with perfect packing.
* **lower bound** on ``Σ_j w_j C_j`` of *any* schedule (preemptive or not) the engine can run:
  the larger of

  - the per-job bound ``Σ_j w_j (a_j + e_j^min)`` (:func:`ddl_gym.baselines.a_online.optimum.trivial_lower_bound`;
    ``e_j^min`` the shortest run time of any configuration), and
  - for every resource ``r``, the *mean-busy-time* bound of the single-machine relaxation: give job
    ``j`` processing time ``p_j = A_j^r / C^r`` on one machine of speed 1 (the whole pooled
    resource). Take any schedule and the first ``p_j`` units of job ``j``'s normalised *worker* use
    ``μ_j(t) = worker use_j^r(t)/C^r`` (its workers use at least ``A_j^r``); these profiles obey
    ``Σ_j μ_j(t) ≤ 1``, start at ``a_j`` and end by ``C_j``, and ``μ_j(t) ≤ μ_j^max = D_j·max_m e_m^r/C^r``
    (at most ``D_j`` workers, as the per-job bound assumes too). Mass ``p_j`` delivered at rate at most
    ``μ_j^max`` and finished by ``C_j`` has mean busy time ``M_j ≤ C_j − p_j/(2μ_j^max)``. Hence
    ``Σ w_j C_j ≥ min Σ w_j M_j + Σ w_j p_j/(2μ_j^max)``, and the minimum of ``Σ w_j M_j`` over
    preemptive single-machine schedules with release dates (rate caps dropped: a relaxation) is
    attained by preemptive WSPT (largest ``w_j/p_j`` first; Goemans, SODA'97, the mean-busy-time LP
    relaxation).

* **load axis rule** (:func:`loaded_horizon`): the loaded setting of a world is the *largest*
  arrival window ``T`` of :data:`HORIZON_GRID` (that is, the lightest load) whose offered load,
  averaged over the reproduction's seeds, is at least :data:`LOAD_THRESHOLD` = 1.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence

import numpy as np

from ddl_gym.sim.model import ARCH_PS, ClusterSpec, Workload
from ddl_gym.sim.perf.aonline import SLOT_SECONDS

#: The offered load the loaded setting must reach (stated rule; see the module docstring).
LOAD_THRESHOLD = 1.0
#: Arrival windows the rule chooses from (slots), lightest load first.
HORIZON_GRID: tuple[int, ...] = (300, 250, 200, 150, 120, 100, 80, 70, 60, 50, 40, 30, 25, 20, 15, 10)


def min_areas(cluster: ClusterSpec, workload: Workload) -> np.ndarray:
    """``A_j^r`` (resource × slots), shape ``(jobs, resources)``; see the module docstring."""
    from ddl_gym.baselines.a_online.common import job_rates

    e = np.array([t.demand for t in cluster.worker_types], dtype=np.float64)  # (M, R)
    out = np.zeros((workload.num_jobs, cluster.num_resources))
    for j in range(workload.num_jobs):
        arch = int(workload.arch[j])
        rates = job_rates(workload.job_profile(j), cluster, arch)
        if arch == ARCH_PS:
            best_rate = rates.ps_rate.max(axis=(0, 2))  # (M,): fastest q, p per worker type
        else:
            best_rate = rates.ra_rate[:, :, 1:].max(axis=(0, 2))  # (M,): fastest q, Φ
        # r-time of type m: e_m^r · EDK / ρ_m; the least over m per resource
        out[j] = (e * (rates.total / best_rate)[:, None]).min(axis=0)
    return out


def offered_load(cluster: ClusterSpec, workload: Workload, window_slots: float) -> float:
    """``max_r Σ_j A_j^r / (Σ_h C_h^r · W)`` (module docstring)."""
    return float(resource_loads(cluster, workload, window_slots).max())


def resource_loads(cluster: ClusterSpec, workload: Workload, window_slots: float) -> np.ndarray:
    """Offered load per resource (gpu, cpu, mem, bw)."""
    total = cluster.capacity_matrix().sum(axis=0)
    area = min_areas(cluster, workload).sum(axis=0)
    return np.where(total > 0, area / np.maximum(total, 1e-12), 0.0) / float(window_slots)


def _wspt_mean_busy(release: np.ndarray, proc: np.ndarray, weight: np.ndarray) -> float:
    """``min Σ w_j M_j`` (mean busy times) on one machine: preemptive WSPT with release dates (exact)."""
    order = np.argsort(release, kind="stable")
    heap: list[tuple[float, int]] = []
    remaining = proc.astype(np.float64).copy()
    busy = np.zeros_like(remaining)  # ∫ t dt over j's processing
    total = 0.0
    t = 0.0
    i, n = 0, len(order)
    while i < n or heap:
        if not heap:
            t = max(t, float(release[order[i]]))
        while i < n and release[order[i]] <= t:
            j = int(order[i])
            if proc[j] > 0:
                heapq.heappush(heap, (-weight[j] / proc[j], j))
            else:
                total += weight[j] * float(release[j])  # no mass: M_j = a_j
            i += 1
        if not heap:
            continue
        _, j = heap[0]
        nxt = float(release[order[i]]) if i < n else np.inf
        run = min(remaining[j], nxt - t)
        busy[j] += run * (t + run / 2.0)
        remaining[j] -= run
        t += run
        if remaining[j] <= 1e-12 * max(1.0, proc[j]):
            heapq.heappop(heap)
            total += weight[j] * busy[j] / proc[j]
    return total


def busy_time_bound(cluster: ClusterSpec, workload: Workload) -> float:
    """The largest single-resource mean-busy-time bound over resources (slots; module docstring)."""
    cap = cluster.capacity_matrix().sum(axis=0)
    areas = min_areas(cluster, workload)
    release = workload.arrival / SLOT_SECONDS
    weight = np.asarray(workload.weight, dtype=np.float64)
    e = np.array([t.demand for t in cluster.worker_types], dtype=np.float64)  # (M, R)
    chunks = np.array([workload.job_profile(j).chunks for j in range(workload.num_jobs)], dtype=np.float64)
    best = 0.0
    for r in range(cluster.num_resources):
        if cap[r] <= 0 or e[:, r].max() <= 0:
            continue
        p = areas[:, r] / cap[r]
        rate = chunks * e[:, r].max() / cap[r]  # the most of r a job's workers can hold (D_j workers)
        tail = float((weight * np.minimum(p / rate, np.inf)).sum()) / 2.0  # Σ w_j p_j / (2 μ_j^max)
        best = max(best, _wspt_mean_busy(release, p, weight) + tail)
    return best


def lower_bound(cluster: ClusterSpec, workload: Workload) -> float:
    """``max(per-job bound, mean-busy-time bounds)`` on ``Σ w_j C_j`` in slots (module docstring)."""
    from ddl_gym.baselines.a_online.optimum import trivial_lower_bound

    return max(trivial_lower_bound(cluster, workload), busy_time_bound(cluster, workload))


def loaded_horizon(load_of: Callable[[int], float], grid: Sequence[int] = HORIZON_GRID,
                   threshold: float = LOAD_THRESHOLD) -> int:
    """The rule: the largest ``T`` of ``grid`` with ``load_of(T) >= threshold`` (the smallest ``T``
    of the grid if none reaches it). ``load_of(T)``: mean offered load over the seeds at window ``T``."""
    for T in sorted(grid, reverse=True):
        if load_of(T) >= threshold:
            return int(T)
    return int(min(grid))


__all__ = ["HORIZON_GRID", "LOAD_THRESHOLD", "busy_time_bound", "loaded_horizon", "lower_bound", "min_areas",
           "offered_load", "resource_loads"]


# ----------------------------------------------------------------------------- ddl-gym scenarios --stats
#: Policies measured on A-Online worlds by ``ddl-gym scenarios --stats`` (the job-level set cannot run there).
STATS_POLICIES: tuple[str, ...] = ("a-online", "a-online-listing", "fifo-mr", "drf", "antman", "tiresias")
_BASELINES = ("fifo-mr", "drf", "antman", "tiresias")


def is_aonline(scenario) -> bool:
    from ddl_gym.workloads.aonline import AOnlineScenario

    return isinstance(scenario, AOnlineScenario)


def scenario_stats(scenario, seeds: Sequence[int], policies: Sequence[str] = STATS_POLICIES) -> dict:
    """Load and headroom of an A-Online scenario, means over ``seeds``:

    ``offered_load`` (module docstring, window = the setup's ``T``), ``gpu_util`` (the jobs' least GPU
    time ÷ (GPUs × makespan), mean over policies), ``lower_bound`` (:func:`lower_bound`, slots),
    ``best`` / ``best_value`` (the policy with the lowest mean Σ w C), ``headroom`` (mean over seeds of
    best policy's Σ w C ÷ bound − 1) and ``baseline_headroom`` (the same for the best of FIFO/DRF/AntMan/
    Tiresias). The rate models are contention-free (bandwidth is reserved per worker and PS), so the
    contention share is 0 by construction and not measured.
    """
    from ddl_gym.policies import make_policy

    loads, lbs, utils = [], [], []
    values: dict[str, list[float]] = {p: [] for p in policies}
    for seed in seeds:
        cluster, workload = scenario.episode(int(seed))
        loads.append(offered_load(cluster, workload, scenario.setup.horizon))
        lbs.append(lower_bound(cluster, workload))
        gpu_time = float(min_areas(cluster, workload)[:, 0].sum())
        gpus = float(cluster.capacity_matrix()[:, 0].sum())
        for name in policies:
            result = make_policy(name).run_episode(scenario, cluster, workload, np.random.default_rng(int(seed)))
            summary = result.summary()
            values[name].append(summary["weighted_completion"] / SLOT_SECONDS)
            utils.append(gpu_time / (gpus * summary["makespan_s"] / SLOT_SECONDS))
    lb = np.array(lbs)
    best = min(policies, key=lambda p: float(np.mean(values[p])))
    base = [p for p in policies if p in _BASELINES]
    base_best = np.min(np.vstack([values[p] for p in base]), axis=0) if base else np.full(len(lb), np.nan)
    return {"scenario": scenario.name, "T": scenario.setup.horizon, "offered_load": float(np.mean(loads)),
            "gpu_util": float(np.mean(utils)), "lower_bound": float(lb.mean()), "best": best,
            "best_value": float(np.mean(values[best])), "headroom": float(np.mean(np.array(values[best]) / lb - 1)),
            "baseline_headroom": float(np.mean(base_best / lb - 1)), "policies": tuple(policies)}


def stats_markdown(rows: Sequence[dict]) -> str:
    lines = ["| scenario | T (slots) | offered load | GPU util. (least GPU time) | lower bound Σ w C (slots) | best policy "
             "| its Σ w C | headroom of the best policy | headroom of the best baseline |",
             "|---|---:|---:|---:|---:|---|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| `{r['scenario']}` | {r['T']} | {r['offered_load']:.2f} | {100 * r['gpu_util']:.0f}% | "
                     f"{r['lower_bound']:.4g} | {r['best']} | {r['best_value']:.4g} | {100 * r['headroom']:+.1f}% | "
                     f"{100 * r['baseline_headroom']:+.1f}% |")
    return "\n".join(lines)
