"""A lower bound on the average job completion time (JCT) of *every* schedule of a workload.

:func:`lp_lower_bound` returns a number that no policy — reference, random, search or learned,
preemptive or not — can beat on the job-level engine (:mod:`ddl_gym.sim.engine`) for the given
``(workload, cluster, model)``. It is a time-indexed *mean-busy-time* linear programme in the
spirit of Goemans, Queyranne, Schulz, Skutella and Wang (SIAM J. Discrete Math. 15(2), 2002) for
jobs that each occupy ``G_j`` of the cluster's ``M`` GPUs, solved with HiGHS
(:func:`scipy.optimize.linprog`, ``method="highs"``) and *certified* by weak duality: the value
returned is the Lagrangian dual bound evaluated at HiGHS's dual solution, so solver tolerances can
only lower it, never push it above the LP optimum.

Quantities
----------
* ``r_j`` — arrival of job ``j``; ``F_j`` — its iterations; ``G_j`` — its GPUs (rigid gang).
* ``p_j`` — its **minimum run time**: ``F_j · min_n τ_j(n, c_n)`` over every server count ``n``
  the job could span (from the fewest servers that can hold ``G_j`` GPUs, largest servers first, up
  to ``min(G_j, servers)``), with the smallest contention count the engine can give that placement
  (``c_1 = 0`` on one server, ``c_n = 1`` across servers: the job itself). For the two supported
  models this is the job alone on its most consolidated placement; a job too big for one server
  therefore carries its spread run time — inter-server exchange and the per-server overhead ξ2 of
  every server it must span (strengthening S1 below).

Claim (validity)
----------------
For any schedule the engine can produce (non-preemptive, or preemptive with restart overheads),
``avg JCT ≥ (LP* + Σ_j p_j/2 − Σ_j r_j) / N``, where LP* is the optimum of the programme below.

Proof.
1. *Rate.* Let ``ρ_j(t) = 1/(F_j τ_j(t))`` be the fraction of job ``j`` done per second at time t
   while it runs (0 while it waits). Under both supported models τ grows with the contention count
   (RAR: ``f(α, max(1, ξ1 p))`` is increasing in p; all-reduce eq. (5): ``k·b·M + (k−1)·η·M`` is
   increasing in k) and the engine's contention count of a split job is ≥ 1, so every τ the engine
   can assign is ≥ ``p_j/F_j``, i.e. ``ρ_j(t) ≤ 1/p_j``. Define the *busy rate*
   ``β_j(t) = p_j ρ_j(t) ∈ [0, 1]``; ``∫ β_j = p_j`` (restart overheads only add iterations, i.e.
   more busy time than needed, which the next step handles by truncation: take the earliest
   ``p_j`` of busy-rate mass — all statements below hold for that truncated β_j, whose support
   still ends by ``C_j``).
2. *Mean busy time.* ``M_j = (1/p_j) ∫ t β_j(t) dt``. Since ``β_j ≤ 1`` and the mass ``p_j``
   lies in ``[r_j, C_j]``, the mean is largest when the mass is packed against ``C_j``:
   ``M_j ≤ C_j − p_j/2``. Hence ``C_j ≥ M_j + p_j/2`` and
   ``Σ_j (C_j − r_j) ≥ Σ_j M_j + Σ_j p_j/2 − Σ_j r_j``.
3. *The LP.* Cut time at breakpoints ``t_0 = min r < t_1 < … < t_K = H`` into periods
   ``I_k = [t_{k−1}, t_k)`` plus a last period ``I_{K+1} = [H, ∞)``. For job j and period k let
   ``x_jk = ∫_{I_k} β_j`` and ``s_jk = max(t_{k−1}, r_j)`` (the earliest moment j can be busy in
   I_k). The true schedule's ``x`` satisfies

   * (demand)    ``Σ_k x_jk = p_j``;
   * (rate)      ``0 ≤ x_jk ≤ |I_k ∩ [r_j, ∞)|`` because ``β_j ≤ 1`` and ``β_j = 0`` before r_j;
   * (capacity)  ``Σ_j G_j x_jk ≤ M·|I_k|`` for k ≤ K: a running job holds exactly ``G_j`` GPUs and
     ``β_j ≤ 1`` whenever it runs, so ``Σ_j G_j β_j(t) ≤ #GPUs in use ≤ M``;
   * the last period has no rate or capacity row (it is unbounded), so *every* schedule — however
     long — is represented, whatever H is.

   Charging each period's work at its earliest moment, ``M_j ≥ (1/p_j) Σ_k s_jk x_jk``.
   With variables ``u_j`` and rows ``u_j ≥ (1/p_j) Σ_k s_jk x_jk`` and ``u_j ≥ r_j + p_j/2``
   (the job alone: its busy mass starts at r_j at the earliest, so ``M_j ≥ r_j + p_j/2``;
   strengthening S2), the true ``(x, u_j = M_j)`` is feasible, so ``Σ_j M_j ≥ LP* = min Σ_j u_j``.
   (Upper bounds ``u_j ≤ max(H, r_j + p_j/2)`` and ``x_jk ≤ p_j`` are added for the dual
   certificate; they never bind: ``(1/p_j) Σ_k s_jk x_jk ≤ max(H, r_j)``, and ``x_jk ≤ p_j`` by the
   demand row.)
4. *Certificate.* For the LP ``min cᵀx, A_ub x ≤ b_ub, A_eq x = b_eq, l ≤ x ≤ u`` and any
   ``λ ≥ 0, ν``: ``cᵀx ≥ −λᵀb_ub − νᵀb_eq + Σ_i min((c + A_ubᵀλ + A_eqᵀν)_i l_i, (…)_i u_i)`` for
   every feasible x (weak duality; all bounds are finite). The returned LP value is this expression
   at HiGHS's duals (λ clipped to ≥ 0), hence ≤ LP* no matter how accurate the solve was. ∎

Coarser periods never give a higher bound (tested): if the breakpoints of partition P are a subset
of those of P', aggregating a feasible x' of P' period-wise gives a feasible x of P (rates and
capacities add up), and every charge time of P' is ≥ the charge time of the P period containing
it, so LP*(P) ≤ LP*(P').

Strengthenings (each part of the proof above)
---------------------------------------------
* **S1 — spread jobs.** ``p_j`` is the minimum over *feasible* server counts only: a job larger
  than every server can never run at single-server speed, so its ``p_j`` includes the NIC exchange
  at the uncontended inter-server bandwidth and ``ξ2`` for each of the ≥ 2 servers (step 1).
* **S2 — per-job floor.** ``u_j ≥ r_j + p_j/2`` (step 3) makes the bound at least the
  "every job alone" bound ``mean p_j`` even on coarse periods.

Not modelled (the bound stays valid, only looser): GPU fragmentation across servers, contention
between spread jobs, GPU memory.

Scope. The job-level engine with the RAR (SJF-BCO eqs. 6–8) or job-level all-reduce (Ada-SRSF
eq. 5) model and rigid all-reduce jobs. Anything else (the task-level engine, GPU sharing,
contention-free paper models, parameter-server / pipeline / elastic jobs) raises
:class:`LowerBoundUnsupported`: their rate laws are not covered by step 1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ddl_gym.sim.model import ClusterSpec, ConfigError, Workload

#: Performance-model names the proof covers (step 1).
SUPPORTED_MODELS: tuple[str, ...] = ("rar", "allreduce")
#: Uniform periods up to the horizon H in the default partition (arrival times are added to it).
DEFAULT_PERIODS = 192
#: Relative amount subtracted from the final average to absorb float rounding of the sums
#: (the LP value itself is certified by weak duality, see the module docstring).
ROUNDING_MARGIN = 1e-9


class LowerBoundUnsupported(ConfigError):
    """The scenario's engine, model or job kind is outside what the LP lower bound's proof covers."""


@dataclass(frozen=True)
class LowerBound:
    """The bound and what it was computed from.

    Attributes:
        avg_jct_s: the lower bound on the average JCT (seconds).
        lp_value: certified lower bound on LP* (Σ_j u_j, seconds·jobs).
        lp_primal: HiGHS's primal objective (≥ ``lp_value`` up to tolerances; for diagnostics).
        alone_avg_jct_s: ``mean p_j``, the bound without the LP (every job alone).
        runtimes_s: ``p_j`` per job.
        periods: number of finite periods used.
        horizon_s: H, the start of the unbounded last period.
    """

    avg_jct_s: float
    lp_value: float
    lp_primal: float
    alone_avg_jct_s: float
    runtimes_s: np.ndarray
    periods: int
    horizon_s: float


def check_supported(cluster: ClusterSpec, workload: Workload, model: Any, engine: str = "job",
                    options: dict[str, Any] | None = None) -> None:
    """Raise :class:`LowerBoundUnsupported` unless the proof covers this setting."""
    if engine != "job":
        raise LowerBoundUnsupported(f"LP lower bound: engine {engine!r} is not supported (only the job-level "
                                    "engine; the task-level engine's communication phases are not modelled)")
    if options and options.get("gpu_sharing"):
        raise LowerBoundUnsupported("LP lower bound: GPU sharing is not supported (jobs must hold their GPUs)")
    name = getattr(model, "name", type(model).__name__)
    if name not in SUPPORTED_MODELS:
        raise LowerBoundUnsupported(f"LP lower bound: performance model {name!r} is not supported; supported: "
                                    f"{', '.join(SUPPORTED_MODELS)} (rigid all-reduce jobs)")
    other = sorted(workload.architectures - {"allreduce"})
    if other:
        raise LowerBoundUnsupported(f"LP lower bound: workload {workload.name!r} has {', '.join(other)} jobs; "
                                    "only rigid all-reduce jobs are supported")
    if workload.num_jobs and int(workload.gpus.max()) > cluster.num_gpus:
        raise LowerBoundUnsupported(f"LP lower bound: workload {workload.name!r} has a job larger than the "
                                    f"cluster ({int(workload.gpus.max())} > {cluster.num_gpus} GPUs)")


def fewest_servers(cluster: ClusterSpec, gpus: int) -> int:
    """Fewest servers that can hold ``gpus`` GPUs (largest servers first)."""
    reach = np.cumsum(sorted(cluster.gpus_per_server, reverse=True))
    return int(np.searchsorted(reach, gpus)) + 1


def minimum_runtimes(cluster: ClusterSpec, workload: Workload, model: Any) -> np.ndarray:
    """``p_j = F_j · min_n τ_j(n, c_n)`` over every feasible server count (module docstring, step 1)."""
    bound = model.bind(cluster, workload)
    out = np.empty(workload.num_jobs)
    servers = cluster.num_servers
    cache: dict[tuple[int, int], float] = {}
    classes = bound.rate_classes() if hasattr(bound, "rate_classes") else None
    for j in range(workload.num_jobs):
        g = int(workload.gpus[j])
        key = (classes[j] if classes is not None else -1 - j, g)
        tau = cache.get(key)
        if tau is None:
            low = fewest_servers(cluster, g)
            tau = min(bound.iteration_time(j, n, 0 if n == 1 else 1) for n in range(low, max(low, min(g, servers)) + 1))
            cache[key] = tau
        out[j] = float(workload.iterations[j]) * tau
    return out


def bound_inputs(workload: Workload, cluster: ClusterSpec, model: Any, engine: str = "job",
                 options: dict[str, Any] | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Arrivals ``r_j``, GPUs ``G_j`` and minimum run times ``p_j`` of a workload the proofs cover
    (:class:`LowerBoundUnsupported` / :class:`ConfigError` otherwise)."""
    check_supported(cluster, workload, model, engine, options)
    if workload.num_jobs == 0:
        raise ConfigError("LP lower bound: the workload has no jobs")
    return (workload.arrival.astype(np.float64), workload.gpus.astype(np.float64),
            minimum_runtimes(cluster, workload, model))


def default_breakpoints(arrival: np.ndarray, gpus: np.ndarray, runtimes: np.ndarray, total_gpus: int,
                        periods: int = DEFAULT_PERIODS) -> np.ndarray:
    """``periods`` uniform periods from the first arrival to ``H = r_max + Σ G_j p_j / M + p_max``
    (by then a fluid schedule has finished every job), merged with every arrival time."""
    if periods < 1:
        raise ConfigError(f"LP lower bound: periods must be >= 1, got {periods}")
    t0 = float(arrival.min())
    horizon = float(arrival.max()) + float((gpus * runtimes).sum()) / total_gpus + float(runtimes.max())
    grid = np.linspace(t0, horizon, periods + 1)
    return np.unique(np.concatenate([grid, arrival.astype(np.float64)]))


def lower_bound(workload: Workload, cluster: ClusterSpec, model: Any, *, periods: int = DEFAULT_PERIODS,
                breakpoints: Sequence[float] | np.ndarray | None = None, engine: str = "job",
                options: dict[str, Any] | None = None) -> LowerBound:
    """The certified LP lower bound on average JCT with its details (module docstring).

    Args:
        workload: the episode's jobs (as the engine would run them).
        cluster: its cluster.
        model: its performance model.
        periods: uniform periods of the default partition (ignored when ``breakpoints`` is given).
        breakpoints: an explicit increasing partition ``t_0 < … < t_K = H`` with ``t_0 ≤ min r``;
            any partition gives a valid bound (finer ones a higher or equal one when nested).
        engine: the scenario's engine (checked by :func:`check_supported`).
        options: the scenario's engine options (checked likewise).
    """
    try:
        from scipy.optimize import linprog
        from scipy.sparse import coo_matrix, vstack
    except ImportError:
        raise ConfigError("LP lower bound: needs scipy (HiGHS); pip install 'ddl-gym[opt]'") from None

    r, g, p = bound_inputs(workload, cluster, model, engine, options)
    n = workload.num_jobs
    if breakpoints is None:
        t = default_breakpoints(r, g, p, cluster.num_gpus, periods)
    else:
        t = np.asarray(breakpoints, dtype=np.float64)
        if t.ndim != 1 or t.size < 2 or not np.all(np.isfinite(t)) or np.any(np.diff(t) <= 0):
            raise ConfigError("LP lower bound: breakpoints must be a finite, strictly increasing list of >= 2 times")
        if t[0] > r.min():
            raise ConfigError(f"LP lower bound: the first breakpoint {t[0]:g} is after the first arrival {r.min():g}")
    horizon = float(t[-1])
    k_fin = t.size - 1
    starts = np.append(t[:-1], horizon)  # period k's start; index k_fin is the last period [H, ∞)
    ends = np.append(t[1:], np.inf)

    # variables: x_jk for the periods that end after r_j (finite ones) plus the last one, then u_j
    rows_j, cols_k = [], []
    for j in range(n):
        first = int(np.searchsorted(t[1:], r[j], side="right"))  # first finite period ending after r_j
        ks = np.arange(first, k_fin + 1)  # includes the last period (index k_fin)
        rows_j.append(np.full(ks.size, j))
        cols_k.append(ks)
    job_of = np.concatenate(rows_j)
    per_of = np.concatenate(cols_k)
    nx = job_of.size
    charge = np.maximum(starts[per_of], r[job_of])
    avail = np.where(per_of < k_fin, ends[per_of] - charge, np.inf)
    x_upper = np.minimum(np.maximum(avail, 0.0), p[job_of])
    u_lower = r + p / 2.0
    u_upper = np.maximum(horizon, u_lower)
    nvar = nx + n

    c = np.concatenate([np.zeros(nx), np.ones(n)])
    # demand: Σ_k x_jk = p_j
    a_eq = coo_matrix((np.ones(nx), (job_of, np.arange(nx))), shape=(n, nvar)).tocsr()
    b_eq = p.copy()
    # capacity rows (finite periods), then mean-busy rows (1/p_j) Σ_k s_jk x_jk − u_j ≤ 0
    fin = per_of < k_fin
    cap = coo_matrix((g[job_of[fin]], (per_of[fin], np.flatnonzero(fin))), shape=(k_fin, nvar))
    mb_rows = np.concatenate([job_of, np.arange(n)])
    mb_cols = np.concatenate([np.arange(nx), nx + np.arange(n)])
    mb_vals = np.concatenate([charge / p[job_of], -np.ones(n)])
    mb = coo_matrix((mb_vals, (mb_rows, mb_cols)), shape=(n, nvar))
    a_ub = vstack([cap, mb]).tocsr()
    b_ub = np.concatenate([cluster.num_gpus * np.diff(t), np.zeros(n)])
    lower = np.concatenate([np.zeros(nx), u_lower])
    upper = np.concatenate([x_upper, u_upper])
    res = linprog(c, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=b_eq, bounds=np.column_stack([lower, upper]),
                  method="highs")
    value = certified_minimum(res, c, a_ub, b_ub, a_eq, b_eq, lower, upper)
    total = value + float(p.sum()) / 2.0 - float(r.sum())
    avg = total / n
    avg -= ROUNDING_MARGIN * abs(avg)
    alone = float(p.mean())
    return LowerBound(avg_jct_s=max(avg, alone * (1.0 - ROUNDING_MARGIN)) if math.isfinite(avg) else alone,
                      lp_value=value, lp_primal=float(res.fun), alone_avg_jct_s=alone, runtimes_s=p,
                      periods=k_fin, horizon_s=horizon)


def certified_minimum(res: Any, c: np.ndarray, a_ub: Any, b_ub: np.ndarray, a_eq: Any, b_eq: np.ndarray,
                      lower: np.ndarray, upper: np.ndarray) -> float:
    """A value ≤ the optimum of ``min cᵀx, A_ub x ≤ b_ub, A_eq x = b_eq, lower ≤ x ≤ upper`` (finite bounds)
    from HiGHS's result ``res``: the Lagrangian dual bound at its duals (module docstring, step 4), or its
    primal objective if that is lower. Solver tolerances can only lower it."""
    if res.status != 0:
        raise RuntimeError(f"LP lower bound: HiGHS did not solve the LP ({res.message})")
    # scipy's marginals are d(obj)/d(rhs)
    lam = np.maximum(-np.asarray(res.ineqlin.marginals), 0.0)
    nu = -np.asarray(res.eqlin.marginals)
    reduced = c + a_ub.T @ lam + a_eq.T @ nu
    certified = float(-lam @ b_ub - nu @ b_eq + np.minimum(reduced * lower, reduced * upper).sum())
    return min(certified, float(res.fun))


def lp_lower_bound(workload: Workload, cluster: ClusterSpec, model: Any, *, periods: int = DEFAULT_PERIODS,
                   breakpoints: Sequence[float] | np.ndarray | None = None, engine: str = "job",
                   options: dict[str, Any] | None = None) -> float:
    """Lower bound (seconds) on the average JCT of any schedule of ``workload`` (see :func:`lower_bound`)."""
    return lower_bound(workload, cluster, model, periods=periods, breakpoints=breakpoints, engine=engine,
                       options=options).avg_jct_s


def scenario_lower_bound(scenario: Any, seed: int, *, periods: int = DEFAULT_PERIODS) -> LowerBound:
    """The bound for ``scenario.episode(seed)`` (the episode the harness and the env run for ``seed``)."""
    cluster, workload = scenario.episode(seed)
    return lower_bound(workload, cluster, scenario.model, periods=periods, engine=scenario.engine,
                       options=scenario.options)
