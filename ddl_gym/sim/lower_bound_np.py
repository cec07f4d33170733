"""A stronger lower bound on the average JCT of every *non-preemptive* schedule (strengthening S3).

:mod:`ddl_gym.sim.lower_bound` bounds every schedule the engine can run, preemptive ones included, so
it must let a job's work be cut into pieces (a mean-busy-time relaxation). Most of the suite's tasks
have no policy that preempts: their references, the ``DDLCluster`` agents and the search all start a
job once and let it run to the end. For those schedules a *start-time-indexed* linear programme (Dyer
and Wolsey, Discrete Applied Mathematics 26, 1990, for one machine; here with rigid jobs of ``G_j`` of
the ``M`` GPUs) keeps each job's run in one piece and is tighter. :func:`nonpreemptive_lower_bound`
solves it with HiGHS and certifies its value by weak duality exactly as the general bound does.

Scope: valid for schedules that never preempt or resize a job (the engine's ``preemptions`` record is
empty). A preemptive policy can beat it: ``tests/sim/test_lower_bound_np.py`` shows one. Same engines,
models and job kinds as :func:`ddl_gym.sim.lower_bound.check_supported`.

Claim (validity)
----------------
For any non-preemptive schedule the engine can produce,
``avg JCT ≥ (LP_np* + Σ_j p_j − Σ_j r_j) / N``, where ``p_j`` is the minimum run time of
:func:`ddl_gym.sim.lower_bound.minimum_runtimes` and LP_np* the optimum of the programme below.

Proof.
1. *Duration.* Job j starts at ``S_j ≥ r_j`` and holds exactly ``G_j`` GPUs until it completes at
   ``C_j``. Its progress rate never exceeds ``1/p_j`` (step 1 of the general proof), so
   ``C_j − S_j ≥ p_j``: the job holds its GPUs during all of ``[S_j, S_j + p_j)``.
2. *Periods.* Cut ``[t_0, H)`` (``t_0`` the first arrival, ``H`` the horizon of the general bound) into
   ``T`` equal periods ``[g_t, g_{t+1})`` and add the late period ``[H, ∞)``. Let ``y_jt = 1`` if
   ``S_j`` lies in period t (``y_j,late`` if ``S_j ≥ H``), else 0. Then ``Σ_t y_jt + y_j,late = 1``,
   and ``y_jt = 0`` for periods that end by ``r_j`` (no start before arrival), so only periods with
   ``g_{t+1} > r_j`` get a variable. Write ``a_jt = max(g_t, r_j)``, the earliest start in period t.
3. *Capacity at the grid instants.* Take an instant ``g_k`` (k = 1..T). If ``y_jt = 1`` with
   ``g_{t+1} ≤ g_k < a_jt + p_j``, then ``S_j < g_{t+1} ≤ g_k`` and ``g_k < a_jt + p_j ≤ S_j + p_j``,
   so by step 1 job j holds ``G_j`` GPUs at ``g_k``. Jobs holding GPUs at one instant hold at most
   ``M`` together, so ``Σ_j G_j Σ_{t: g_{t+1} ≤ g_k < a_jt + p_j} y_jt ≤ M``.
4. *Objective.* ``C_j ≥ S_j + p_j ≥ a_jt + p_j`` for the period t holding ``S_j`` (``H + p_j`` for the
   late one), so ``Σ_j C_j ≥ Σ_j (Σ_t a_jt y_jt + H y_j,late) + Σ_j p_j``. The schedule's 0/1 vector y
   satisfies every row of steps 2–3 and ``0 ≤ y ≤ 1``, so the LP's optimum over real y is at most its
   objective: ``Σ_j C_j ≥ LP_np* + Σ_j p_j``. Subtract ``Σ_j r_j`` and divide by N.
5. *Certificate.* The value used is the weak-duality bound of
   :func:`ddl_gym.sim.lower_bound.certified_minimum` at HiGHS's duals (≤ LP_np* whatever the solver's
   accuracy). ∎

What makes it tighter than the mean-busy-time LP: a job's GPUs are counted for ``p_j`` in a row from
its start, so the LP cannot fill idle GPUs with slivers of a job that is waiting for a gang of GPUs.
What it still relaxes: fractional starts (a job may be split over several start periods, each piece
running ``p_j``), GPU fragmentation across servers, contention between spread jobs, and up to one period
of each job's run at the grid instants. :func:`best_nonpreemptive_bound` takes the larger of it and
the general bound, which holds for non-preemptive schedules as well.

Refining the grid never lowers it when the grids are nested (T' a multiple of T; tested): map a
solution of the fine LP to the coarse one by summing each coarse period's sub-periods. A coarse period
starts no later than its sub-periods, so its charge ``a_jt`` is no larger; and at a coarse instant
``g_k`` (also a fine one) every term the coarse row counts is counted by the fine row too (the
sub-period ends no later and starts no earlier), so the coarse row holds. Hence LP(T) ≤ LP(T').
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ddl_gym.sim.lower_bound import (
    ROUNDING_MARGIN, LowerBound, bound_inputs, certified_minimum, default_breakpoints, lower_bound,
)
from ddl_gym.sim.model import ClusterSpec, ConfigError, Workload

#: Equal start periods between the first arrival and the horizon H (accuracy against solve time: on
#: ``helios-ib200`` about 2 s and 10⁶ matrix entries per episode at 400 periods).
DEFAULT_NP_PERIODS = 400


def nonpreemptive_lower_bound(workload: Workload, cluster: ClusterSpec, model: Any, *,
                              periods: int = DEFAULT_NP_PERIODS, engine: str = "job",
                              options: dict[str, Any] | None = None) -> LowerBound:
    """The certified start-time LP bound on the average JCT of every non-preemptive schedule (module docstring).

    Returns a :class:`~ddl_gym.sim.lower_bound.LowerBound` whose ``lp_value`` is the certified
    ``LP_np*`` (seconds·jobs of start times) and ``periods`` the number of start periods T.
    """
    try:
        from scipy.optimize import linprog
        from scipy.sparse import coo_matrix
    except ImportError:
        raise ConfigError("LP lower bound: needs scipy (HiGHS); pip install 'ddl-gym[opt]'") from None
    if isinstance(periods, bool) or not isinstance(periods, (int, np.integer)) or periods < 1:
        raise ConfigError(f"non-preemptive LP bound: periods must be an integer >= 1, got {periods!r}")
    r, g, p = bound_inputs(workload, cluster, model, engine, options)
    n = workload.num_jobs
    t0 = float(r.min())
    horizon = float(default_breakpoints(r, g, p, cluster.num_gpus, 1)[-1])  # H of the general bound
    grid = np.linspace(t0, horizon, periods + 1)

    # y_jt for the periods ending after r_j (step 2), then one late variable per job
    first = np.searchsorted(grid[1:], r, side="right")  # first period with g_{t+1} > r_j
    counts = periods - first
    job_of = np.repeat(np.arange(n), counts)
    per_of = np.concatenate([np.arange(f, periods) for f in first])
    ny = job_of.size
    earliest = np.maximum(grid[per_of], r[job_of])  # a_jt
    c = np.concatenate([earliest, np.full(n, horizon)])

    # capacity rows at g_k, k = 1..T (step 3): y_jt counts for k from t+1 while g_k < a_jt + p_j
    k_first = per_of + 1
    k_last = np.searchsorted(grid, earliest + p[job_of], side="left") - 1  # last k with g_k < a_jt + p_j
    k_last = np.minimum(k_last, periods)
    span = np.maximum(k_last - k_first + 1, 0)
    rows = np.concatenate([np.arange(a, a + s) for a, s in zip(k_first, span)]) - 1 if span.any() else \
        np.zeros(0, dtype=np.int64)
    cols = np.repeat(np.arange(ny), span)
    nvar = ny + n
    a_ub = coo_matrix((g[job_of][cols], (rows, cols)), shape=(periods, nvar)).tocsr()
    b_ub = np.full(periods, float(cluster.num_gpus))
    # assignment: Σ_t y_jt + y_j,late = 1
    a_eq = coo_matrix((np.ones(nvar), (np.concatenate([job_of, np.arange(n)]), np.arange(nvar))),
                      shape=(n, nvar)).tocsr()
    b_eq = np.ones(n)
    lower, upper = np.zeros(nvar), np.ones(nvar)
    res = linprog(c, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=b_eq, bounds=np.column_stack([lower, upper]),
                  method="highs")
    value = certified_minimum(res, c, a_ub, b_ub, a_eq, b_eq, lower, upper)
    avg = (value + float(p.sum()) - float(r.sum())) / n
    avg -= ROUNDING_MARGIN * abs(avg)
    alone = float(p.mean())
    return LowerBound(avg_jct_s=max(avg, alone * (1.0 - ROUNDING_MARGIN)) if math.isfinite(avg) else alone,
                      lp_value=value, lp_primal=float(res.fun), alone_avg_jct_s=alone, runtimes_s=p,
                      periods=periods, horizon_s=horizon)


def best_nonpreemptive_bound(workload: Workload, cluster: ClusterSpec, model: Any, *,
                             periods: int = DEFAULT_NP_PERIODS, engine: str = "job",
                             options: dict[str, Any] | None = None) -> float:
    """max(start-time LP bound on ``periods`` periods, general mean-busy-time bound on its default partition):
    both hold for every non-preemptive schedule."""
    general = lower_bound(workload, cluster, model, engine=engine, options=options).avg_jct_s
    strong = nonpreemptive_lower_bound(workload, cluster, model, periods=periods, engine=engine,
                                       options=options).avg_jct_s
    return max(general, strong)


def scenario_nonpreemptive_lower_bound(scenario: Any, seed: int, *, periods: int = DEFAULT_NP_PERIODS) -> LowerBound:
    """The start-time LP bound for ``scenario.episode(seed)``."""
    cluster, workload = scenario.episode(seed)
    return nonpreemptive_lower_bound(workload, cluster, scenario.model, periods=periods, engine=scenario.engine,
                                     options=scenario.options)
