"""SMD's outer subproblem: the 0-1 multi-dimensional knapsack (16) (Yu §IV Step 3).

``maximise Σ_i u_i x_i  s.t.  Σ_i v^r_i x_i <= C^r  for every resource r,  x ∈ {0,1}^I``.

* :func:`mkp_exact` — exact, by ``scipy.optimize.milp`` (HiGHS branch and bound, relative gap 0);
  R = 4 rows and I <= 200 binaries take milliseconds (spec B2.3's recommendation).
* :func:`mkp_frieze_clarke` — the paper's scheme (Frieze–Clarke [35]) with subsets enumerated up to
  size ``q``: for every ``S`` with ``|S| <= q`` that fits, fix ``x_S = 1`` and ``x_{T(S)} = 0`` with
  ``T(S) = {t ∉ S : u_t > min_{i∈S} u_i}``, solve the LP relaxation ``LP(S)`` for a basic optimal
  solution (HiGHS dual simplex), round it down, keep the best. The paper says "for all S ⊂ I",
  which is exponential; Frieze–Clarke's PTAS bounds ``|S|`` by a function of R/ε that the paper
  does not give, hence the parameter (default 2).
* :func:`mkp_brute_force` — every subset (tests, I <= 20).

Items with ``u_i <= 0`` are never selected (they cannot raise the objective; SMD never admits a job
whose utility is 0). Ties between optimal subsets are broken by the solver (deterministic).
"""

from __future__ import annotations

import itertools

import numpy as np

_CAP_RTOL = 1e-9


def _prepare(values: np.ndarray, weights: np.ndarray, capacity: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    values = np.asarray(values, dtype=np.float64).ravel()
    weights = np.asarray(weights, dtype=np.float64)
    capacity = np.asarray(capacity, dtype=np.float64).ravel()
    if weights.shape != (values.size, capacity.size):
        raise ValueError(f"MKP: weights must have shape (items, resources) = {(values.size, capacity.size)}, got {weights.shape}")
    if np.any(weights < 0) or np.any(capacity < 0) or not np.all(np.isfinite(values)):
        raise ValueError("MKP: weights and capacities must be >= 0 and values finite")
    fits_alone = np.all(weights <= capacity * (1 + _CAP_RTOL) + _CAP_RTOL, axis=1)
    candidates = np.flatnonzero((values > 0) & fits_alone)
    return values, weights, capacity, candidates


def feasible(selection: np.ndarray, weights: np.ndarray, capacity: np.ndarray) -> bool:
    """Whether the 0/1 ``selection`` satisfies every capacity row."""
    load = np.asarray(weights, dtype=np.float64)[np.asarray(selection, dtype=bool)].sum(axis=0)
    return bool(np.all(load <= np.asarray(capacity) * (1 + _CAP_RTOL) + _CAP_RTOL))


def mkp_exact(values: np.ndarray, weights: np.ndarray, capacity: np.ndarray) -> np.ndarray:
    """Exact optimum of (16) by HiGHS MILP; returns a boolean selection."""
    from scipy.optimize import Bounds, LinearConstraint, milp

    values, weights, capacity, cand = _prepare(values, weights, capacity)
    chosen = np.zeros(values.size, dtype=bool)
    if cand.size == 0:
        return chosen
    w = weights[cand]
    if feasible(np.ones(cand.size, dtype=bool), w, capacity):  # everything fits: no solver needed
        chosen[cand] = True
        return chosen
    res = milp(c=-values[cand], constraints=LinearConstraint(w.T, -np.inf, capacity),
               integrality=np.ones(cand.size), bounds=Bounds(0, 1), options={"mip_rel_gap": 0.0})
    if res.x is None:
        raise RuntimeError(f"MKP MILP failed: {res.message}")
    pick = res.x > 0.5
    if not feasible(pick, w, capacity):  # HiGHS's feasibility tolerance let a row slip: tighten once
        res = milp(c=-values[cand], constraints=LinearConstraint(w.T, -np.inf, capacity * (1 - 1e-6)),
                   integrality=np.ones(cand.size), bounds=Bounds(0, 1), options={"mip_rel_gap": 0.0})
        pick = res.x > 0.5
        if not feasible(pick, w, capacity):
            raise RuntimeError("MKP MILP returned an infeasible selection")
    chosen[cand[pick]] = True
    return chosen


def mkp_frieze_clarke(values: np.ndarray, weights: np.ndarray, capacity: np.ndarray, q: int = 2) -> np.ndarray:
    """Frieze–Clarke's scheme with subsets up to size ``q`` (see the module docstring); boolean selection."""
    from scipy.optimize import linprog

    if q < 0:
        raise ValueError(f"Frieze–Clarke: q must be >= 0, got {q}")
    values, weights, capacity, cand = _prepare(values, weights, capacity)
    best = np.zeros(values.size, dtype=bool)
    best_value = 0.0
    u = values[cand]
    w = weights[cand]
    n = cand.size
    if feasible(np.ones(n, dtype=bool), w, capacity):  # every LP(S) is then solved by x = 1: all items
        best[cand] = True
        return best
    for size in range(0, min(q, n) + 1):
        for subset in itertools.combinations(range(n), size):
            s = np.zeros(n, dtype=bool)
            s[list(subset)] = True
            if not feasible(s, w, capacity):
                continue
            floor_u = u[s].min() if size else np.inf
            free = ~s & ~(u > floor_u)  # T(S) fixed to 0, S fixed to 1
            x = s.astype(np.float64)
            idx = np.flatnonzero(free)
            if idx.size:
                residual = capacity - w[s].sum(axis=0)
                res = linprog(-u[idx], A_ub=w[idx].T, b_ub=np.maximum(residual, 0.0), bounds=[(0, 1)] * idx.size,
                              method="highs-ds")
                if res.status != 0:
                    raise RuntimeError(f"Frieze–Clarke LP(S) failed: {res.message}")
                x[idx] = np.floor(res.x + 1e-9)  # round the basic solution down
            pick = x > 0.5
            value = float(u[pick].sum())
            if value > best_value and feasible(pick, w, capacity):
                best_value = value
                best = np.zeros(values.size, dtype=bool)
                best[cand[pick]] = True
    return best


def mkp_brute_force(values: np.ndarray, weights: np.ndarray, capacity: np.ndarray) -> tuple[float, np.ndarray]:
    """Every subset (I <= 20): ``(optimal value, one optimal boolean selection)``."""
    values, weights, capacity, _ = _prepare(values, weights, capacity)
    n = values.size
    if n > 20:
        raise ValueError("brute force is for at most 20 items")
    masks = ((np.arange(2 ** n)[:, None] >> np.arange(n)) & 1).astype(bool)
    loads = masks.astype(np.float64) @ weights
    ok = np.all(loads <= capacity * (1 + _CAP_RTOL) + _CAP_RTOL, axis=1)
    totals = np.where(ok, masks.astype(np.float64) @ np.maximum(values, 0.0), -np.inf)
    k = int(np.argmax(totals))
    return float(totals[k]), masks[k]


MKP_METHODS: tuple[str, ...] = ("exact", "frieze-clarke")


def solve_mkp(values: np.ndarray, weights: np.ndarray, capacity: np.ndarray, method: str = "exact", q: int = 2
              ) -> np.ndarray:
    """Dispatch: ``"exact"`` (MILP) or ``"frieze-clarke"`` (with subset size ``q``)."""
    if method == "exact":
        return mkp_exact(values, weights, capacity)
    if method == "frieze-clarke":
        return mkp_frieze_clarke(values, weights, capacity, q)
    raise ValueError(f"unknown MKP method {method!r}; choose one of {MKP_METHODS}")
