"""SMD's inner subproblem: the continuous sum-of-ratios problem and its rounding (Yu §IV Step 2).

For one job, minimising the completion time over real ``x = (w, p)`` is the sum-of-ratios problem
(12) over ``Ω = {(7), w >= 1, p >= 1}`` (spec B5 #8 adds the lower bounds):

* sync (9): ``ζ1 = θ4·w/p``, ``ζ2 = θ5/w``, ``ζ3 = θ1·w + θ2·p + θ3`` (denominator 1);
* async (10): ``ζ1 = θ2·p/w``, ``ζ2 = θ3/w``, ``ζ3 = θ4/p``, plus the constant ``θ1``
  (spec B5 #9: three ratio terms each, so two axes are gridded).

**Algorithm 1** (:func:`algorithm1`): the bounds ``l_j = min_Ω ζ_j`` and ``φ_j = max_Ω ζ_j`` are
linear-fractional programs solved by the Charnes–Cooper transform on HiGHS
(:func:`charnes_cooper`, ``scipy.optimize.linprog``); ``J = argmax_j φ_j/l_j`` is the summand that
is not gridded; the grid ``T^ε = Q_1 × Q_2`` with ``Q_j = {l_j(1+ε)^k : k = 0..λ_j}``
(Step 2.1); for every grid point ν the LP (15) ``min ζ_J(x) s.t. ζ_j(x) <= ν_j, x ∈ Ω`` and
``Ψ(ν) = Σ ν_j + ζ_J(x^ν)`` (line 4); the point with the smallest Ψ wins (lines 5–6, first in
grid order on ties). With ``ε = 0.01`` that is ~10^5 LPs per job, so (15) is solved exactly by
**vectorised 2-D vertex enumeration** over the whole grid at once (:func:`solve_grid`): the
minimum of a linear-fractional function with a positive denominator over a bounded polygon lies at
a vertex, and every vertex is the intersection of two constraint lines (two of Ω's, one of Ω's and
one grid line, or the two grid lines). It is cross-tested against the Charnes–Cooper LP on HiGHS.

**Algorithm 2** (:func:`randomized_rounding`): ``x' = M_δ·x̃``, each coordinate rounded up with
probability equal to its fractional part. Semantics (spec B5 #5, option ``semantics``):

* ``"best-of-F"`` (default): draw ``F`` samples and keep the feasible one with the smallest true
  completion time; if none is feasible, the best feasible floor/ceil neighbour of ``x̃``, then
  ``(1, 1)``;
* ``"literal"``: line 3 as printed — redraw while the sample is infeasible *or* fewer than ``F``
  redraws were made, keep the last sample (so at least ``F + 1`` draws); capped at
  :data:`LITERAL_MAX_DRAWS` draws, then the same fallbacks.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from ddl_gym.sim.perf.ps import SMDProfile, SpeedKeyCache

ROUNDING_SEMANTICS: tuple[str, ...] = ("best-of-F", "literal")
LITERAL_MAX_DRAWS = 10_000
_FEAS_RTOL = 1e-9  # relative slack of a vertex on the constraint lines (scale-aware)
_COARSE_STRIDE = 8  # sub-grid that bounds min Ψ before the exact pruning


# ============================================================================ problem data
@dataclass(frozen=True)
class Ratio:
    """``ζ(x) = (a·x + q) / (c·x + d)`` over ``x = (w, p)``."""

    a: tuple[float, float]
    q: float
    c: tuple[float, float]
    d: float

    def __call__(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=np.float64)
        num = self.a[0] * x[..., 0] + self.a[1] * x[..., 1] + self.q
        den = self.c[0] * x[..., 0] + self.c[1] * x[..., 1] + self.d
        return num / den


@dataclass(frozen=True)
class SumOfRatios:
    """Problem (12): minimise ``Σ_j ζ_j(x) + constant`` over ``Ω = {x : A x <= C}`` (w, p >= 1 included)."""

    terms: tuple[Ratio, ...]
    constant: float
    A: np.ndarray  # (K, 2)
    C: np.ndarray  # (K,)

    def value(self, x: np.ndarray) -> np.ndarray:
        total = np.full(np.shape(x)[:-1], self.constant, dtype=np.float64)
        for term in self.terms:
            total = total + term(x)
        return total


def inner_problem(profile: SMDProfile, iterations: int) -> SumOfRatios:
    """The continuous relaxation of (9) (sync) or (10) (async) for one job, with the term split of B5 #9."""
    th = profile.thetas(iterations)
    if profile.mode == "sync":
        t1, t2, t3, t4, t5 = th
        terms = (Ratio((t4, 0.0), 0.0, (0.0, 1.0), 0.0),  # θ4·w/p
                 Ratio((0.0, 0.0), t5, (1.0, 0.0), 0.0),  # θ5/w
                 Ratio((t1, t2), t3, (0.0, 0.0), 1.0))  # θ1·w + θ2·p + θ3
        constant = 0.0
    else:
        t1, t2, t3, t4 = th
        terms = (Ratio((0.0, t2), 0.0, (1.0, 0.0), 0.0),  # θ2·p/w
                 Ratio((0.0, 0.0), t3, (1.0, 0.0), 0.0),  # θ3/w
                 Ratio((0.0, 0.0), t4, (0.0, 1.0), 0.0))  # θ4/p
        constant = t1
    rows, rhs = [], []
    for o, g, v in zip(profile.worker_demand, profile.ps_demand, profile.limit):
        if o > 0 or g > 0:
            rows.append((o, g))
            rhs.append(v)
    rows += [(-1.0, 0.0), (0.0, -1.0)]
    rhs += [-1.0, -1.0]
    return SumOfRatios(terms, constant, np.array(rows, dtype=np.float64), np.array(rhs, dtype=np.float64))


# ============================================================================ Charnes–Cooper on HiGHS
def charnes_cooper(term: Ratio, A: np.ndarray, C: np.ndarray, *, maximize: bool = False,
                   caps: Sequence[tuple[Ratio, float]] = ()) -> tuple[float, np.ndarray] | None:
    """Optimise one linear-fractional program over ``{A x <= C} ∩ {ζ_j(x) <= ν_j}`` by Charnes–Cooper + HiGHS.

    With ``y = t·x`` and ``t = 1/(c·x + d)``: ``min a·y + q·t`` s.t. ``c·y + d·t = 1``,
    ``A y <= C t``, ``(a_j − ν_j c_j)·y + (q_j − ν_j d_j)·t <= 0``, ``y, t >= 0``.

    Returns:
        ``(optimal ζ value, x)``, or ``None`` if the region is empty.
    """
    from scipy.optimize import linprog

    sign = -1.0 if maximize else 1.0
    cost = sign * np.array([term.a[0], term.a[1], term.q])
    a_ub = [np.concatenate([A, -C[:, None]], axis=1)]
    for cap, nu in caps:
        a_ub.append(np.array([[cap.a[0] - nu * cap.c[0], cap.a[1] - nu * cap.c[1], cap.q - nu * cap.d]]))
    a_ub_m = np.concatenate(a_ub, axis=0)
    res = linprog(cost, A_ub=a_ub_m, b_ub=np.zeros(a_ub_m.shape[0]),
                  A_eq=np.array([[term.c[0], term.c[1], term.d]]), b_eq=np.array([1.0]),
                  bounds=[(0, None)] * 3, method="highs")
    if res.status == 2:
        return None
    if res.status != 0:
        raise RuntimeError(f"Charnes–Cooper LP failed: {res.message}")
    y = res.x
    if y[2] <= 0:
        raise RuntimeError("Charnes–Cooper LP returned t <= 0 (unbounded feasible region?)")
    return sign * float(res.fun), y[:2] / y[2]


# ============================================================================ vectorised vertex enumeration
def _solve2(n1: np.ndarray, h1: np.ndarray, n2: np.ndarray, h2: np.ndarray) -> np.ndarray:
    """Intersection of lines ``n1·x = h1`` and ``n2·x = h2`` (broadcast); NaN where they are parallel."""
    det = n1[..., 0] * n2[..., 1] - n1[..., 1] * n2[..., 0]
    scale = np.hypot(n1[..., 0], n1[..., 1]) * np.hypot(n2[..., 0], n2[..., 1])
    with np.errstate(divide="ignore", invalid="ignore"):
        x = (h1 * n2[..., 1] - h2 * n1[..., 1]) / det
        y = (n1[..., 0] * h2 - n2[..., 0] * h1) / det
    bad = ~(np.abs(det) > 1e-12 * scale)
    return np.stack([np.where(bad, np.nan, x), np.where(bad, np.nan, y)], axis=-1)


def _in_omega(points: np.ndarray, A: np.ndarray, C: np.ndarray) -> np.ndarray:
    """``A x <= C`` for ``points`` (``S + (2,)`` -> ``S``), up to a scale-aware slack (vertices lie on lines)."""
    t0 = A[:, 0] * points[..., None, 0]
    t1 = A[:, 1] * points[..., None, 1]
    with np.errstate(invalid="ignore"):
        ok = t0 + t1 <= C + _FEAS_RTOL * (np.abs(t0) + np.abs(t1) + np.abs(C))
    return np.all(ok, axis=-1)


def _grid_line(term: Ratio, nus: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``ζ(x) <= ν  ⇔  (a − ν c)·x <= ν d − q`` (denominator > 0 on Ω): normals ``(Λ, 2)``, rhs ``(Λ,)``."""
    normal = np.stack([term.a[0] - nus * term.c[0], term.a[1] - nus * term.c[1]], axis=-1)
    return normal, nus * term.d - term.q


def _ratio_at(term: Ratio, points: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return term(points)


def solve_grid(objective: Ratio, A: np.ndarray, C: np.ndarray, caps: Sequence[tuple[Ratio, np.ndarray]],
               *, with_points: bool = False) -> tuple[np.ndarray, np.ndarray | None]:
    """Problem (15) on a whole grid at once: ``min ζ_J(x)`` s.t. ``x ∈ Ω``, ``ζ_j(x) <= ν_j``.

    Candidate vertices, each kind computed only over the grid axes it depends on: Ω's own vertices;
    a grid line of axis 0 (1) crossing an Ω line; the two grid lines crossing. A candidate counts
    where it satisfies every other constraint: Ω up to a scale-aware slack, a grid constraint as
    ``ζ_j(x) <= ν_j (1 + 1e-9)`` (the candidate's own lines are satisfied by construction).

    Args:
        objective: ``ζ_J``.
        A, C: Ω as ``A x <= C`` (bounded).
        caps: at most two ``(ζ_j, grid values of ν_j)`` pairs: grid axes 0 and 1.
        with_points: also return the minimising vertex of every grid point (memory: ``Λ0·Λ1·2``).

    Returns:
        ``(values, points)``: min ζ_J per grid point, shape ``(Λ0, Λ1)`` (``inf`` where the polygon
        is empty), and the minimisers ``(Λ0, Λ1, 2)`` (NaN there) or ``None``.
    """
    if len(caps) > 2:
        raise ValueError("solve_grid handles at most two gridded terms")
    A = np.asarray(A, dtype=np.float64)
    C = np.asarray(C, dtype=np.float64)
    terms = [term for term, _ in caps]
    nus = [np.asarray(v, dtype=np.float64) for _, v in caps]
    lam = tuple(len(v) for v in nus) + (1,) * (2 - len(caps))
    lines = [_grid_line(term, v) for term, v in zip(terms, nus)]
    thresholds = [v * (1.0 + _FEAS_RTOL) for v in nus]
    best_val = np.full(lam, np.inf)
    best_pt = np.full(lam + (2,), np.nan) if with_points else None

    def to_grid(arr: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
        """Lay an array whose leading dims are the given grid axes (then candidates) onto (Λ0, Λ1, m)."""
        shape = [1, 1] + list(arr.shape[len(axes):])
        for k, ax in enumerate(axes):
            shape[ax] = arr.shape[k]
        return arr.reshape(shape)

    def offer(points: np.ndarray, axes: tuple[int, ...]) -> None:
        """Candidates ``points`` (leading dims = ``axes``, then candidates, then 2) lying on the lines of ``axes``."""
        nonlocal best_val, best_pt
        ok = to_grid(_in_omega(points, A, C) & np.all(np.isfinite(points), axis=-1), axes)
        for ax in range(len(caps)):
            if ax in axes:
                continue
            z = to_grid(_ratio_at(terms[ax], points), axes)
            with np.errstate(invalid="ignore"):
                ok = ok & (z <= (thresholds[ax][:, None, None] if ax == 0 else thresholds[ax][None, :, None]))
        val = to_grid(_ratio_at(objective, points), axes)
        val = np.where(ok, val, np.inf)
        k = np.argmin(val, axis=-1)
        v = np.take_along_axis(val, k[..., None], axis=-1)[..., 0]
        v = np.broadcast_to(v, lam)
        better = v < best_val
        best_val = np.where(better, v, best_val)
        if best_pt is not None:
            pts = np.broadcast_to(to_grid(points, axes), ok.shape + (2,))
            chosen = np.take_along_axis(pts, k[..., None, None], axis=-2)[..., 0, :]
            best_pt = np.where(better[..., None], np.broadcast_to(chosen, lam + (2,)), best_pt)

    i, j = np.triu_indices(A.shape[0], k=1)
    offer(_solve2(A[i], C[i], A[j], C[j]), ())  # Ω's vertices: (m0, 2)
    for ax, (normal, rhs) in enumerate(lines):  # a grid line crossing each Ω line: (Λ, K, 2)
        offer(_solve2(normal[:, None, :], rhs[:, None], A[None, :, :], C[None, :]), (ax,))
    if len(lines) == 2:  # the two grid lines crossing: (Λ0, Λ1, 1, 2)
        (n0, h0), (n1, h1) = lines
        offer(_solve2(n0[:, None, :], h0[:, None], n1[None, :, :], h1[None, :])[:, :, None, :], (0, 1))
    return best_val, best_pt


def lfp_by_vertices(objective: Ratio, A: np.ndarray, C: np.ndarray, caps: Sequence[tuple[Ratio, float]] = ()
                    ) -> tuple[float, np.ndarray] | None:
    """One LP (15) by vertex enumeration (:func:`solve_grid` on a 1×1 grid); ``None`` if infeasible."""
    vals, pts = solve_grid(objective, A, C, [(term, np.array([nu])) for term, nu in caps], with_points=True)
    value = float(vals.ravel()[0])
    return None if not math.isfinite(value) else (value, pts.reshape(-1, 2)[0])  # type: ignore[union-attr]


# ============================================================================ Algorithm 1
@dataclass(frozen=True)
class Algorithm1Result:
    """Algorithm 1's output and diagnostics.

    Attributes:
        x: the fractional solution ``x̃ = (w̃, p̃)``.
        psi: ``Ψ`` at the chosen grid point (an upper bound on the true objective there).
        objective: the true ``ζ(x̃)`` (constant included) = the continuous completion time.
        lower: ``l_j``; upper: ``φ_j`` (per term).
        not_gridded: index ``J`` of the summand that is not gridded.
        grid_shape: number of grid values per gridded axis (``T^ε``).
        solved_shape: the part of the grid actually solved after exact pruning (Ψ(ν) >= Σν + l_J
            rules out every other point; the result is identical to solving all of ``T^ε``).
    """

    x: np.ndarray
    psi: float
    objective: float
    lower: tuple[float, ...]
    upper: tuple[float, ...]
    not_gridded: int
    grid_shape: tuple[int, ...]
    solved_shape: tuple[int, ...] = ()


def grid_values(low: float, high: float, eps: float) -> np.ndarray:
    """Step 2.1: ``{l(1+ε)^k : k = 0..λ}`` with ``λ = max{n : l(1+ε)^n <= φ}``."""
    if low <= 0 or high < low:
        raise ValueError(f"grid needs 0 < l <= φ, got l={low}, φ={high}")
    n = int(math.floor(math.log(high / low) / math.log1p(eps)))
    while low * (1.0 + eps) ** (n + 1) <= high:
        n += 1
    while n > 0 and low * (1.0 + eps) ** n > high:
        n -= 1
    return low * (1.0 + eps) ** np.arange(n + 1)


def algorithm1(problem: SumOfRatios, eps: float = 0.01) -> Algorithm1Result:
    """Algorithm 1 (ε-approximation of the continuous relaxation of (9)/(10)); see the module docstring.

    Terms with ``l_j = 0`` (identically zero, e.g. ``β2 = 0``) are left out of the grid and of
    Ψ but stay in the reported objective (spec B2.1). Raises ValueError if Ω is empty.
    """
    if not 0 < eps < 1:
        raise ValueError(f"eps must be in (0, 1), got {eps}")
    lower, upper = [], []
    for term in problem.terms:
        lo = charnes_cooper(term, problem.A, problem.C)
        if lo is None:
            raise ValueError("the inner problem's region Ω is empty (the limit cannot host one worker and one PS)")
        hi = charnes_cooper(term, problem.A, problem.C, maximize=True)
        lower.append(max(lo[0], 0.0))
        upper.append(max(hi[0], lo[0], 0.0))  # type: ignore[index]
    active = [j for j, lo in enumerate(lower) if lo > 0]
    if not active:  # every term is constant zero: any point of Ω
        value, x = charnes_cooper(problem.terms[0], problem.A, problem.C)  # type: ignore[misc]
        return Algorithm1Result(x, problem.constant, float(problem.value(x)), tuple(lower), tuple(upper), 0, (), ())
    ratios = [upper[j] / lower[j] for j in active]
    big = active[int(np.argmax(ratios))]
    gridded = [j for j in active if j != big]
    axes = [grid_values(lower[j], upper[j], eps) for j in gridded]
    # Exact pruning: Ψ(ν) >= Σ_j ν_j + l_J, so grid points whose bound exceeds a Ψ already attained
    # (on a coarse sub-grid) cannot be the argmin (nor tie with it); only the remaining box is solved.
    coarse = [nus[::_COARSE_STRIDE] for nus in axes]
    bound = _psi_grid(problem, big, gridded, coarse).min() * (1.0 + 1e-12) if axes else np.inf
    kept = []
    for k, nus in enumerate(axes):
        others = (sum(lower[j] for n, j in enumerate(gridded) if n != k) + lower[big]) * (1.0 - 1e-6)  # LP tolerance
        kept.append(nus[: max(1, int(np.searchsorted(nus, bound - others, side="right")))] if np.isfinite(bound) else nus)
    psi = _psi_grid(problem, big, gridded, kept)
    if not np.isfinite(psi).any():
        # Step 2.1 as printed stops the grid at the last l(1+ε)^n <= φ, so when a term's range is
        # narrower than ε (a region Ω that barely hosts one worker and one PS) its only grid value is
        # l_j, and capping two such terms at their separate minima is infeasible. The ε-guarantee
        # needs a grid value >= φ_j on every axis; add l_j(1+ε)^(λ+1) (a cap that cannot bind) and
        # solve the whole grid again. Only instances whose printed grid has no feasible point change.
        kept = [np.append(nus, nus[-1] * (1.0 + eps)) for nus in axes]
        psi = _psi_grid(problem, big, gridded, kept)
    flat = int(np.argmin(psi))  # first in grid order on ties (Algorithm 1 uses a strict "<")
    if not math.isfinite(float(psi.ravel()[flat])):
        raise ValueError("no grid point of Algorithm 1 is feasible")
    caps = [(problem.terms[j], nus) for j, nus in zip(gridded, kept)]
    cell = np.unravel_index(flat, psi.shape)
    found = lfp_by_vertices(problem.terms[big], problem.A, problem.C,
                            [(term, float(nus[cell[axis]])) for axis, (term, nus) in enumerate(caps)])
    x = found[1].copy()  # type: ignore[index]  # the same vertex computations on that grid point alone
    return Algorithm1Result(x, float(psi.ravel()[flat]), float(problem.value(x)), tuple(lower), tuple(upper), big,
                            tuple(len(a) for a in axes), tuple(len(a) for a in kept))


def _psi_grid(problem: SumOfRatios, big: int, gridded: list[int], axes: list[np.ndarray]) -> np.ndarray:
    """``Ψ(ν) = Σ_j ν_j + min ζ_J`` on the grid ``axes`` (``inf`` where (15) is infeasible)."""
    values, _ = solve_grid(problem.terms[big], problem.A, problem.C,
                           [(problem.terms[j], nus) for j, nus in zip(gridded, axes)])
    psi = values
    for axis, nus in enumerate(axes):
        psi = psi + (nus[:, None] if axis == 0 else nus[None, :])
    return psi


_ALG1_CACHE = SpeedKeyCache()


def continuous_allocation(profile: SMDProfile, iterations: int, eps: float = 0.01) -> Algorithm1Result:
    """Algorithm 1 for one job (cached by speed key: profiles differing only in their utility share the result)."""
    return _ALG1_CACHE.get((profile.speed_key(), int(iterations), float(eps)),
                           lambda: algorithm1(inner_problem(profile, int(iterations)), float(eps)))


# ============================================================================ Algorithm 2
@dataclass(frozen=True)
class RoundingResult:
    """An integer allocation from Algorithm 2 (``None`` counts if even ``(1, 1)`` is infeasible)."""

    workers: int
    ps: int
    draws: int
    source: str  # "sample", "neighbour" or "(1,1)"


def randomized_rounding(x_tilde: Sequence[float], feasible: Callable[[int, int], bool],
                        cost: Callable[[int, int], float], rng: np.random.Generator, *, attempts: int = 20,
                        m_delta: float = 1.0, semantics: str = "best-of-F") -> RoundingResult | None:
    """Algorithm 2 (randomized rounding) of ``x̃ = (w̃, p̃)``; see the module docstring for the semantics.

    Args:
        x_tilde: the fractional solution.
        feasible: constraint (7) and ``w, p >= 1``.
        cost: the true completion time (the best feasible sample wins under ``best-of-F``).
        rng: the random source (consumed only here).
        attempts: ``F``.
        m_delta: ``M_δ`` in (0, 1] (the experiments use 1).
        semantics: ``"best-of-F"`` or ``"literal"``.
    """
    if semantics not in ROUNDING_SEMANTICS:
        raise ValueError(f"unknown rounding semantics {semantics!r}; choose one of {ROUNDING_SEMANTICS}")
    if attempts < 1 or not 0 < m_delta <= 1:
        raise ValueError("need F >= 1 and 0 < M_delta <= 1")
    xp = m_delta * np.asarray(x_tilde, dtype=np.float64)
    low = np.floor(xp)
    frac = xp - low

    def draw() -> tuple[int, int]:
        up = rng.random(2) < frac
        sample = low + up
        return int(sample[0]), int(sample[1])

    if semantics == "best-of-F":
        best: tuple[float, int, int] | None = None
        for _ in range(attempts):
            w, p = draw()
            if feasible(w, p):
                c = cost(w, p)
                if best is None or c < best[0]:
                    best = (c, w, p)
        if best is not None:
            return RoundingResult(best[1], best[2], attempts, "sample")
        draws = attempts
    else:
        cnt, draws = 0, 0
        while draws < LITERAL_MAX_DRAWS:
            w, p = draw()
            draws += 1
            if not feasible(w, p) or cnt < attempts:
                cnt += 1
                continue
            return RoundingResult(w, p, draws, "sample")
    base = np.floor(np.asarray(x_tilde, dtype=np.float64)).astype(int)
    neighbours = [(int(base[0] + dw), int(base[1] + dp)) for dw in (0, 1) for dp in (0, 1)]
    ok = [(cost(w, p), w, p) for w, p in neighbours if feasible(w, p)]
    if ok:
        _, w, p = min(ok)
        return RoundingResult(w, p, draws, "neighbour")
    if feasible(1, 1):
        return RoundingResult(1, 1, draws, "(1,1)")
    return None
