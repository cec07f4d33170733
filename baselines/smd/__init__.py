"""SMD (Yu, Wu, Ji, Liu, INFOCOM'21) and its §V baselines: parameter-server jobs, one interval with admission.

* :mod:`~ddl_gym.baselines.smd.interval` — the interval model of §III-A (problem (1)–(3)): the
  static evaluator :func:`evaluate_interval` and the engine policy ``IntervalPolicy`` (they agree
  bit for bit); ``AllocateThenAdmit`` = allocation per job, then MKP admission.
* :mod:`~ddl_gym.baselines.smd.sum_of_ratios` — §IV Step 2: Algorithm 1 (ε-grid over the
  sum-of-ratios problem (12), Charnes–Cooper LPs) and Algorithm 2 (randomized rounding).
* :mod:`~ddl_gym.baselines.smd.mkp` — §IV Step 3: the 0-1 multi-dimensional knapsack (16): exact
  HiGHS MILP, the paper's Frieze–Clarke scheme (subsets up to ``q``), brute force.
* :mod:`~ddl_gym.baselines.smd.policy` — :class:`SMDPolicy` (Steps 1–3).
* :mod:`~ddl_gym.baselines.smd.interval_optimum` — the exact optimum of (1)–(3) (``smd-opt``).
* :mod:`~ddl_gym.baselines.smd.esw`, :mod:`~ddl_gym.baselines.smd.optimus` — §V's ESW (1:1
  workers:PSs) and Optimus (greedy by utility gain; ``optimus-official``: Optimus's own scheduler).

Readings (options of :class:`SMDPolicy`, default first): ``rounding`` = ``best-of-F`` | ``literal``
(Alg. 2 line 3), ``mkp`` = ``exact`` | ``frieze-clarke`` (with ``q``), ``eps``, ``attempts``.
The speed functions (eqs. (9), (10)) live in :mod:`ddl_gym.sim.perf.ps`.
"""

from ddl_gym.baselines.smd.policy import (  # the former module ddl_gym.baselines.smd: its public names
    SMDPolicy,
)

__all__ = ['SMDPolicy']
