"""Optimality certificates for A-Online worlds (spec C7): an exact configuration ILP on tiny
instances and a lower bound for any size.

**Configuration ILP** (C7.1, scipy HiGHS ``milp``). For every job, every schedule ``l``: worker type
``m``, PS type ``p``, worker split ``y_h``, PS split ``s_h`` obeying (2e), (2g), (2i), integer
start ``t >= a_j`` and duration ``d(l)``; binaries ``x_jl``, ``Σ_l x_jl = 1``, per-server,
per-resource, per-slot capacity, objective ``min Σ_j w_j Σ_l (t_l + d_l) x_jl`` (slots). Two
duration rules:

* ``durations="ceil"`` — ``d = ceil(EDK / (N ρ))``: the optimum of the paper's problem (2) itself
  (whole slots, integer starts).
* ``durations="floor"`` (default for gaps) — ``d = floor(EDK / (N ρ))``: a **valid lower bound** on
  ``Σ w_j C_j`` of every non-preemptive schedule in continuous time (what the engine runs): map a
  job that starts at ``S`` and runs ``e`` to start ``floor(S)`` and length ``floor(e)``; jobs that
  are sequential stay sequential (``floor(S1) + floor(e1) <= floor(S1 + e1) <= floor(S2)``), the
  jobs that cover slot ``t`` are all running just before ``t + 1``, so capacity holds, and the
  objective does not increase.

Preemptive baselines (AntMan, Tiresias) split jobs; the paper's problem (2) excludes preemption
("We do not consider preemption"), so their gap to the ILP is reported, not asserted.

Start times are bounded with an upper bound ``UB`` on the optimum (any policy's objective): every
job of an optimal schedule completes by ``UB / w_j``.

**Lower bound for any size** (C7.4): ``Σ_j w_j (a_j + e_j^min)`` with ``e_j^min = EDK / (D_j ρ_j^max)``
(``ρ^max`` over every type, PS type and co-location; valid with preemption too, since a job's
completion is at least its arrival plus its work at the fastest possible rate).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from ddl_gym.baselines.a_online.common import job_rates
from ddl_gym.sim.model import ARCH_PS, ClusterSpec, ConfigError, Workload
from ddl_gym.sim.perf.aonline import SLOT_SECONDS


@dataclass(frozen=True)
class OptResult:
    objective_slots: float  # Σ w_j C_j in slots (weighted_completion / 3600)
    status: str
    columns: int
    completion_slots: tuple[float, ...] = ()


def trivial_lower_bound(cluster: ClusterSpec, workload: Workload) -> float:
    """``Σ_j w_j (a_j + EDK/(D ρ^max))`` in slots (C7.4)."""
    return float(sum(_job_lower_bounds(cluster, workload)))


def _job_lower_bounds(cluster: ClusterSpec, workload: Workload) -> list[float]:
    out = []
    for j in range(workload.num_jobs):
        prof = workload.job_profile(j)
        rates = job_rates(prof, cluster, int(workload.arch[j]))
        if workload.arch[j] == ARCH_PS:
            best = prof.chunks * float(rates.ps_rate.max())
        else:
            best = max(phi * float(rates.ra_rate[:, :, phi].max()) for phi in range(1, prof.chunks + 1))
        out.append(float(workload.weight[j] * (workload.arrival[j] / SLOT_SECONDS + rates.total / best)))
    return out


def _configs(cluster: ClusterSpec, workload: Workload, j: int, max_ps: int):
    """Every (m, p, y, s, rate) of job ``j`` obeying (2b)(2c)(2e)(2g)(2i) (tiny clusters only)."""
    prof = workload.job_profile(j)
    arch = int(workload.arch[j])
    rates = job_rates(prof, cluster, arch)
    H = cluster.num_servers
    bw = cluster.resources.index("bw")
    M, P = len(cluster.worker_types), (len(cluster.ps_types) if arch == ARCH_PS else 1)
    for m in range(M):
        b = cluster.worker_types[m].demand[bw]
        for y in itertools.product(range(prof.chunks + 1), repeat=H):
            n = sum(y)
            if not 1 <= n <= prof.chunks:
                continue
            if arch != ARCH_PS:
                q = sum(1 for c in y if c) == 1
                yield m, -1, y, (0,) * H, n * rates.ra_rate[int(q), m, n]
                continue
            for p in range(P):
                B = cluster.ps_types[p].demand[bw]
                for s in itertools.product(range(max_ps + 1), repeat=H):
                    if sum(s) < 1:
                        continue
                    if any(c and (n - y[h]) * b > c * B * (1 + 1e-9) for h, c in enumerate(s)):
                        continue  # (2i)
                    q = len({h for h in range(H) if y[h] or s[h]}) == 1
                    yield m, p, y, s, n * rates.ps_rate[int(q), m, p]


def config_ilp(cluster: ClusterSpec, workload: Workload, *, upper_bound_slots: float, durations: str = "floor",
               max_ps: int = 2, time_limit_s: float = 60.0, max_columns: int = 200_000) -> OptResult:
    """Exact optimum of the configuration ILP (see module docstring); tiny instances only."""
    from scipy.optimize import Bounds, LinearConstraint, milp
    from scipy.sparse import coo_matrix

    if durations not in ("ceil", "floor"):
        raise ConfigError(f"durations must be 'ceil' or 'floor', got {durations!r}")
    H, R = cluster.num_servers, cluster.num_resources
    cap = cluster.capacity_matrix()
    e = np.array([t.demand for t in cluster.worker_types])
    z = np.array([t.demand for t in cluster.ps_types]) if cluster.ps_types else np.zeros((1, R))
    J = workload.num_jobs
    cols_job, cols_cost, cols_completion = [], [], []
    rows, cols, vals = [], [], []
    horizon = 0
    floor_j = _job_lower_bounds(cluster, workload)  # w_j (a_j + e_j^min): no job can do better
    for j in range(J):
        a = int(round(workload.arrival[j] / SLOT_SECONDS))
        # An optimal schedule has w_j C_j <= UB − Σ_{k≠j} w_k (a_k + e_k^min).
        latest = math.floor((upper_bound_slots - (sum(floor_j) - floor_j[j])) / workload.weight[j] + 1e-9)
        total = workload.iterations[j]
        for m, p, y, s, rate in _configs(cluster, workload, j, max_ps):
            exact = total / rate
            d = int(math.ceil(exact - 1e-12)) if durations == "ceil" else int(math.floor(exact + 1e-12))
            use = np.array(y)[:, None] * e[m][None, :] + (np.array(s)[:, None] * z[p][None, :] if p >= 0 else 0.0)
            if np.any(use > cap + 1e-9):
                continue
            nz = [(h, r, use[h, r]) for h in range(H) for r in range(R) if use[h, r] > 0]
            for t in range(a, latest - d + 1):
                k = len(cols_job)
                cols_job.append(j)
                cols_cost.append(workload.weight[j] * (t + d))
                cols_completion.append(t + d)
                for h, r, u in nz:
                    for tt in range(t, t + d):
                        rows.append((tt, h, r))
                        cols.append(k)
                        vals.append(u)
                horizon = max(horizon, t + d)
                if len(cols_job) > max_columns:
                    raise ConfigError(f"configuration ILP: more than {max_columns} columns; instance too large")
    if set(cols_job) != set(range(J)):
        raise ConfigError("configuration ILP: some job has no schedule within the upper bound (UB too small?)")
    n = len(cols_job)
    row_index = {key: i for i, key in enumerate(sorted(set(rows)))}
    A_cap = coo_matrix((vals, ([row_index[r] for r in rows], cols)), shape=(len(row_index), n)).tocsr()
    ub_cap = np.array([cap[h, r] for (_, h, r) in sorted(row_index, key=row_index.get)]) + 1e-9
    A_one = coo_matrix((np.ones(n), (cols_job, np.arange(n))), shape=(J, n)).tocsr()
    constraints = [LinearConstraint(A_one, 1, 1)]
    if len(row_index):
        constraints.append(LinearConstraint(A_cap, -np.inf, ub_cap))
    res = milp(np.array(cols_cost), constraints=constraints, integrality=np.ones(n), bounds=Bounds(0, 1),
               options={"time_limit": time_limit_s})
    if res.x is None:
        return OptResult(math.nan, str(res.message), n)
    chosen = np.flatnonzero(res.x > 0.5)
    completion = [0.0] * J
    for k in chosen:
        completion[cols_job[k]] = cols_completion[k]
    status = "optimal" if res.status == 0 else str(res.message)
    return OptResult(float(res.fun), status, n, tuple(completion))
