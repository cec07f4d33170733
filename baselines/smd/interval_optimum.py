"""The exact optimum of SMD's interval problem (1)–(3) (spec B7 #1), as a policy.

The decomposition is exact: constraint (2) does not involve ``(w, p)`` and (3) and the objective
separate per job, so ``OPT = MKP(u*)`` with ``u*_i = max_{(w,p) ∈ Z²_{++}, (7)} μ_i(E_i/f_i(p, w))``.
Since μ is non-increasing, ``u*_i`` is μ of the smallest completion time, found exactly by
:func:`~ddl_gym.sim.perf.ps.exact_inner_optimum` (enumeration of every ``w``, the convex ``p``
direction solved exactly); the MKP is solved exactly by HiGHS MILP. This yields the exact
approximation ratio SMD/OPT at every instance size (Yu's Fig. 11 only at 1000× capacity).
"""

from __future__ import annotations

import numpy as np

from ddl_gym.baselines.smd.interval import AllocateThenAdmit, IntervalInstance
from ddl_gym.sim.perf.ps import exact_inner_optimum


class IntervalOptimum(AllocateThenAdmit):
    """Exact OPT: the integer inner optimum of every job, then the exact MKP."""

    name = "smd-opt"

    def __init__(self, *, name: str | None = None) -> None:
        super().__init__(mkp="exact", name=name)

    def allocate(self, instance: IntervalInstance, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, dict]:
        n = instance.num_jobs
        workers = np.zeros(n, dtype=np.int64)
        ps = np.zeros(n, dtype=np.int64)
        for i, (profile, e) in enumerate(zip(instance.profiles, instance.iterations)):
            best = exact_inner_optimum(profile, e)
            if best is not None:
                workers[i], ps[i] = best.workers, best.ps
        return workers, ps, {}
