"""SMD: sum-of-ratios multi-dimensional-knapsack decomposition (Yu, Wu, Ji, Liu, INFOCOM'21, §IV).

For one scheduling interval (:mod:`ddl_gym.baselines.smd.interval`), spec B2.4:

1. Step 1 (decomposition): with ``x_i = 1`` the problem separates into one inner problem (6)–(8)
   per job; maximising the non-increasing utility = minimising the completion time (9)/(10).
2. Step 2: Algorithm 1 (ε-grid over the sum-of-ratios relaxation, Charnes–Cooper LPs;
   :func:`~ddl_gym.baselines.smd.sum_of_ratios.algorithm1`) gives ``x̃_i = (w̃_i, p̃_i)``; Algorithm 2
   (randomized rounding, :func:`~ddl_gym.baselines.smd.sum_of_ratios.randomized_rounding`) gives integer
   ``(ŵ_i, p̂_i)``; ``u_i = μ_i(E_i/f_i(p̂_i, ŵ_i))``. A job whose limit cannot host one worker
   and one PS gets ``u_i = 0`` and is never admitted (spec B5 #8).
3. Step 3: the MKP (16) over ``u`` with weights ``v^r_i`` and capacities ``C^r`` (exact MILP by
   default; Frieze–Clarke(q) as the paper describes it with ``mkp="frieze-clarke"``).

Options (the paper's §V values as defaults): ``eps = ε1 = 0.01``, ``attempts = F = 20``,
``m_delta = M_δ = 1``, ``rounding = "best-of-F"`` (spec B5 #5; ``"literal"`` = line 3 as printed).
Each job rounds with its own random stream, spawned from the policy's generator in job order.
"""

from __future__ import annotations

import numpy as np

from ddl_gym.baselines.smd.interval import AllocateThenAdmit, IntervalInstance
from ddl_gym.baselines.smd.sum_of_ratios import ROUNDING_SEMANTICS, continuous_allocation, randomized_rounding
from ddl_gym.sim.model import ConfigError


#: Smallest grid precision ε1 accepted (the grid of Alg. 1 has ~1/ε points per job; 1e-9 needs ~17 GiB).
MIN_EPS = 1e-4
#: Most randomised-rounding attempts F per job (the paper uses 20).
MAX_ATTEMPTS = 10_000


class SMDPolicy(AllocateThenAdmit):
    """SMD end to end (Yu §IV, Algorithms 1–2 + MKP); see the module docstring for the options."""

    name = "smd"

    def __init__(self, *, eps: float = 0.01, attempts: int = 20, m_delta: float = 1.0, rounding: str = "best-of-F",
                 mkp: str = "exact", q: int = 2, name: str | None = None) -> None:
        super().__init__(mkp=mkp, q=q, name=name)
        from ddl_gym.bounds import check_float, check_int

        # eps >= 1e-4 keeps Alg. 1's grid (~1/eps points per job) in memory; F <= 10^4 attempts per job.
        eps = check_float(eps, MIN_EPS, 1.0, "smd: eps", high_open=True)
        attempts = check_int(attempts, 1, MAX_ATTEMPTS, "smd: attempts (F)")
        m_delta = check_float(m_delta, 0.0, 1.0, "smd: m_delta", low_open=True)
        if rounding not in ROUNDING_SEMANTICS:
            raise ConfigError(f"smd: unknown rounding {rounding!r}; choose one of {ROUNDING_SEMANTICS}")
        self.eps = float(eps)
        self.attempts = int(attempts)
        self.m_delta = float(m_delta)
        self.rounding = rounding

    def allocate(self, instance: IntervalInstance, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, dict]:
        n = instance.num_jobs
        streams = np.random.SeedSequence(int(rng.integers(2**63))).spawn(n)
        workers = np.zeros(n, dtype=np.int64)
        ps = np.zeros(n, dtype=np.int64)
        continuous = np.full((n, 2), np.nan)
        relaxed = np.full(n, np.nan)
        sources = [""] * n
        grid_points = np.zeros(n, dtype=np.int64)
        for i, (profile, e) in enumerate(zip(instance.profiles, instance.iterations)):
            if not profile.fits_limit(1, 1):
                sources[i] = "infeasible"
                continue
            alg1 = continuous_allocation(profile, e, self.eps)
            continuous[i] = alg1.x
            relaxed[i] = alg1.objective
            grid_points[i] = int(np.prod(alg1.grid_shape)) if alg1.grid_shape else 1
            result = randomized_rounding(
                alg1.x, lambda w, p, prof=profile: bool(prof.fits_limit(w, p)),
                lambda w, p, prof=profile, it=e: float(prof.completion_time(it, w, p)),
                np.random.default_rng(streams[i]), attempts=self.attempts, m_delta=self.m_delta,
                semantics=self.rounding)
            if result is None:
                sources[i] = "infeasible"
                continue
            workers[i], ps[i] = result.workers, result.ps
            sources[i] = result.source
        return workers, ps, {"continuous": continuous, "relaxed_completion_s": relaxed, "rounding_source": sources,
                             "grid_points": grid_points}
