"""SMD's solvers: Charnes–Cooper LPs on HiGHS vs the vectorised vertex enumeration, Algorithm 1's ε
guarantee against a dense certificate, Algorithm 2's two semantics, and the MKP (exact MILP vs brute
force, Frieze–Clarke)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from ddl_gym.baselines.smd.mkp import feasible, mkp_brute_force, mkp_exact, mkp_frieze_clarke, solve_mkp
from ddl_gym.baselines.smd.sum_of_ratios import (
    Ratio, SumOfRatios, algorithm1, charnes_cooper, grid_values, inner_problem, lfp_by_vertices, randomized_rounding,
    solve_grid,
)
from ddl_gym.workloads.smd_jobs import draw_smd_jobs


def random_polygon(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Packing rows ``O w + G p <= v`` (2-4 of them) plus ``w, p >= 1``: a bounded, non-empty Ω."""
    rows = rng.uniform(0.0, 5.0, size=(int(rng.integers(2, 5)), 2))
    rows[0] = [rng.uniform(0.5, 5), 0.0]  # something bounds w ...
    rows[1] = [0.0, rng.uniform(0.5, 5)]  # ... and p
    rhs = rows.sum(axis=1) * rng.uniform(1.0, 40.0, rows.shape[0])  # (1, 1) always fits
    return np.vstack([rows, [[-1, 0], [0, -1]]]), np.concatenate([rhs, [-1, -1]])


def random_ratio(rng: np.random.Generator) -> Ratio:
    a = rng.uniform(0, 3, 2) * (rng.random(2) < 0.7)
    c = rng.uniform(0, 3, 2) * (rng.random(2) < 0.7)
    return Ratio(tuple(a), float(rng.uniform(0.1, 5)), tuple(c), float(rng.uniform(0.0, 2)) + (0.1 if not c.any() else 0.0))


def test_vertex_enumeration_matches_charnes_cooper_on_highs():
    rng = np.random.default_rng(7)
    checked = infeasible = 0
    for _ in range(30):
        A, C = random_polygon(rng)
        objective, caps = random_ratio(rng), [random_ratio(rng) for _ in range(int(rng.integers(0, 3)))]
        # The bounds l_j and φ_j: min and max over Ω (max ζ = −min of (−a·x − q)/(c·x + d)).
        lo, hi = charnes_cooper(objective, A, C), charnes_cooper(objective, A, C, maximize=True)
        negated = Ratio((-objective.a[0], -objective.a[1]), -objective.q, objective.c, objective.d)
        assert lo[0] == pytest.approx(lfp_by_vertices(objective, A, C)[0], rel=1e-7)
        assert hi[0] == pytest.approx(-lfp_by_vertices(negated, A, C)[0], rel=1e-7)
        for _ in range(4):
            nus = []
            for cap in caps:
                lo, hi = charnes_cooper(cap, A, C)[0], charnes_cooper(cap, A, C, maximize=True)[0]
                nus.append(float(rng.uniform(lo - 0.2 * (hi - lo), hi)))  # below l_j: infeasible
            lp = charnes_cooper(objective, A, C, caps=list(zip(caps, nus)))
            vx = lfp_by_vertices(objective, A, C, list(zip(caps, nus)))
            if lp is None:
                assert vx is None
                infeasible += 1
                continue
            assert vx is not None
            assert vx[0] == pytest.approx(lp[0], rel=1e-7, abs=1e-9)
            assert objective(vx[1]) == pytest.approx(vx[0], rel=1e-9)
            checked += 1
    assert checked > 70 and infeasible > 0  # both outcomes exercised


def test_solve_grid_equals_one_lp_per_grid_point():
    rng = np.random.default_rng(3)
    A, C = random_polygon(rng)
    objective, cap0, cap1 = (random_ratio(rng) for _ in range(3))
    nus0 = np.linspace(*(charnes_cooper(cap0, A, C)[0], charnes_cooper(cap0, A, C, maximize=True)[0]), 7)
    nus1 = np.linspace(*(charnes_cooper(cap1, A, C)[0], charnes_cooper(cap1, A, C, maximize=True)[0]), 5)
    values, points = solve_grid(objective, A, C, [(cap0, nus0), (cap1, nus1)], with_points=True)
    for i, j in itertools.product(range(7), range(5)):
        lp = charnes_cooper(objective, A, C, caps=[(cap0, nus0[i]), (cap1, nus1[j])])
        if lp is None:
            assert values[i, j] == np.inf
        else:
            assert values[i, j] == pytest.approx(lp[0], rel=1e-7)
            assert objective(points[i, j]) == pytest.approx(values[i, j], rel=1e-9)


def test_grid_values_follow_step_2_1():
    q = grid_values(2.0, 2.0 * 1.01 ** 10 * 1.001, 0.01)
    assert len(q) == 11 and q[0] == 2.0 and q[-1] == pytest.approx(2.0 * 1.01 ** 10)
    assert len(grid_values(3.0, 3.0, 0.01)) == 1


def dense_minimum(problem: SumOfRatios, n: int = 600) -> float:
    """A certificate: the true objective on a dense grid of Ω's bounding box (an upper bound on min ζ)."""
    w_hi = min(c / a for (a, b), c in zip(problem.A, problem.C) if a > 0 and b >= 0)
    p_hi = min(c / b for (a, b), c in zip(problem.A, problem.C) if b > 0 and a >= 0)
    ww, pp = np.meshgrid(np.linspace(1, w_hi, n), np.linspace(1, p_hi, n), indexing="ij")
    pts = np.stack([ww, pp], axis=-1)
    ok = np.all(pts @ problem.A.T <= problem.C * (1 + 1e-12), axis=-1)
    return float(problem.value(pts)[ok].min())


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_algorithm1_is_within_one_plus_eps_of_a_dense_certificate(mode):
    profiles, iterations = draw_smd_jobs(np.random.default_rng(11), 8, mode)
    eps = 0.05
    for profile, e in zip(profiles, iterations):
        if not profile.fits_limit(1, 1):
            continue
        problem = inner_problem(profile, e)
        result = algorithm1(problem, eps)
        assert np.all(problem.A @ result.x <= problem.C * (1 + 1e-9) + 1e-9)  # x̃ ∈ Ω
        assert result.objective <= result.psi + problem.constant + 1e-6 * result.objective  # ζ(x̃) <= Ψ
        assert result.objective <= (1 + eps) * dense_minimum(problem) * (1 + 1e-9)
        assert result.objective == pytest.approx(profile.completion_time(e, *result.x), rel=1e-9)


def test_algorithm1_pruning_does_not_change_the_answer(monkeypatch):
    import ddl_gym.baselines.smd.sum_of_ratios as sor

    profiles, iterations = draw_smd_jobs(np.random.default_rng(2), 6, "async")
    for profile, e in zip(profiles, iterations):
        if not profile.fits_limit(1, 1):
            continue
        problem = inner_problem(profile, e)
        pruned = algorithm1(problem, 0.02)
        monkeypatch.setattr(sor, "_COARSE_STRIDE", 10**9)  # coarse pass = one point: (almost) no pruning
        full = algorithm1(problem, 0.02)
        monkeypatch.undo()
        assert np.array_equal(pruned.x, full.x) and pruned.psi == full.psi
        assert np.prod(pruned.solved_shape) <= np.prod(full.solved_shape)


# ----------------------------------------------------------------------------- Algorithm 2
def test_rounding_best_of_f_keeps_the_cheapest_feasible_sample():
    rng = np.random.default_rng(0)
    out = randomized_rounding([2.5, 3.5], lambda w, p: w + p <= 6, lambda w, p: -w, rng, attempts=50)
    assert (out.workers, out.ps, out.source) == (3, 3, "sample")  # (3, 3) is feasible and has the most workers
    never = randomized_rounding([2.5, 3.5], lambda w, p: (w, p) == (1, 1), lambda w, p: 0.0, rng, attempts=5)
    assert (never.workers, never.ps, never.source) == (1, 1, "(1,1)")
    assert randomized_rounding([2.5, 3.5], lambda w, p: False, lambda w, p: 0.0, rng) is None


def test_rounding_literal_semantics_draws_more_than_f_and_keeps_the_last():
    rng = np.random.default_rng(1)
    out = randomized_rounding([2.5, 3.5], lambda w, p: True, lambda w, p: 0.0, rng, attempts=4, semantics="literal")
    assert out.draws == 5  # line 3 loops while cnt < F: F + 1 draws when every draw is feasible
    out = randomized_rounding([2.5, 3.5], lambda w, p: w == 3, lambda w, p: 0.0, np.random.default_rng(1), attempts=4,
                              semantics="literal")
    assert out.draws >= 5 and out.workers == 3
    integral = randomized_rounding([2.0, 5.0], lambda w, p: True, lambda w, p: 0.0, rng, semantics="literal")
    assert (integral.workers, integral.ps) == (2, 5)  # an integral x̃ is kept


def test_rounding_draws_ceil_with_the_fractional_part_as_probability():
    rng = np.random.default_rng(5)
    ups = [randomized_rounding([1.25, 1.0], lambda w, p: True, lambda w, p: 0.0, rng, attempts=1).workers == 2
           for _ in range(4000)]
    assert np.mean(ups) == pytest.approx(0.25, abs=0.03)


# ----------------------------------------------------------------------------- MKP
def random_mkp(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    values = rng.uniform(0, 100, n) * (rng.random(n) < 0.9)
    weights = rng.uniform(0, 50, size=(n, 4))
    capacity = weights.sum(axis=0) * rng.uniform(0.15, 0.6, 4)
    return values, weights, capacity


def test_mkp_exact_matches_brute_force():
    rng = np.random.default_rng(42)
    for n in (1, 3, 8, 12, 15):
        for _ in range(4):
            values, weights, capacity = random_mkp(rng, n)
            best, _ = mkp_brute_force(values, weights, capacity)
            pick = mkp_exact(values, weights, capacity)
            assert feasible(pick, weights, capacity)
            assert values[pick].sum() == pytest.approx(best, abs=1e-6)


def test_frieze_clarke_is_feasible_below_exact_and_exact_when_q_covers_the_optimum():
    rng = np.random.default_rng(9)
    for _ in range(6):
        values, weights, capacity = random_mkp(rng, 7)
        exact = values[mkp_exact(values, weights, capacity)].sum()
        for q in (0, 1, 2):
            pick = mkp_frieze_clarke(values, weights, capacity, q)
            assert feasible(pick, weights, capacity) and values[pick].sum() <= exact + 1e-9
        full = mkp_frieze_clarke(values, weights, capacity, q=7)  # S = the optimal set is enumerated
        assert values[full].sum() == pytest.approx(exact, abs=1e-6)


def test_mkp_never_selects_worthless_or_oversized_items():
    values = np.array([0.0, 5.0, 3.0, -1.0])
    weights = np.array([[1.0], [10.0], [1.0], [1.0]])
    pick = solve_mkp(values, weights, np.array([5.0]))
    assert pick.tolist() == [False, False, True, False]
    roomy = np.array([100.0])
    assert mkp_frieze_clarke(values, weights, roomy).tolist() == [False, True, True, False]  # all that are worth it
    with pytest.raises(ValueError, match="unknown MKP method"):
        solve_mkp(values, weights, np.array([5.0]), "greedy")


def test_algorithm1_on_a_region_narrower_than_eps_extends_the_grid_instead_of_failing():
    """Held-out seed 1000007 of smd-sync: Ω barely hosts one worker and one PS (w, p <= ~1.004).

    Each gridded term's range [l_j, φ_j] is narrower than ε, so Step 2.1 as printed gives the single
    value l_j per axis, and the two caps at separate minima admit no point. Algorithm 1 must then add
    l_j(1+ε) (a cap that cannot bind) instead of raising; the answer is still within (1+ε) of the optimum.
    """
    A = np.array([[1.0, 0.0], [8.09156202, 5.85546149], [30.3207204, 29.56233599], [9.48369742, 5.36617707],
                  [-1.0, 0.0], [0.0, -1.0]])
    C = np.array([4.0, 36.0, 60.0, 20.0, -1.0, -1.0])
    terms = (Ratio((31.23611605923225, 0.0), 0.0, (0.0, 1.0), 0.0),
             Ratio((0.0, 0.0), 10423030.019266564, (1.0, 0.0), 0.0),
             Ratio((418.87248148874636, 0.4184038908549425), 0.21004909877386685, (0.0, 0.0), 1.0))
    problem = SumOfRatios(terms, 0.0, A, C)
    eps = 0.01
    for term in terms[1:]:  # the printed grid of each gridded term is one point
        low, high = charnes_cooper(term, A, C)[0], charnes_cooper(term, A, C, maximize=True)[0]
        assert high < low * (1 + eps) and len(grid_values(low, high, eps)) == 1
    result = algorithm1(problem, eps)
    assert np.all(A @ result.x <= C * (1 + 1e-9) + 1e-9)
    assert result.objective <= (1 + eps) * dense_minimum(problem) * (1 + 1e-9)
