"""SJF-BCO (Yu, Ji, Rajan, Liu, MobiHoc'22): ``sjf-bco`` and its §7.2 baselines ``sjf-bco+ff|ls|rand``.

* :mod:`~ddl_gym.baselines.sjf_bco.plan` — the offline planner on a planned clock (compiled with
  mypyc by ``scripts/build_native.py``, identical results): Alg. 1 (bisection over θ_u,
  :func:`~ddl_gym.baselines.sjf_bco.plan.bisect_theta`; κ loop over
  :func:`~ddl_gym.baselines.sjf_bco.plan.kappa_classes`; :func:`~ddl_gym.baselines.sjf_bco.plan.plan`),
  Alg. 2 FA-FFP and Alg. 3 LBSGF (:class:`~ddl_gym.baselines.sjf_bco.plan.Trial`), the estimate
  ``ρ̂_j = F_j · τ̂_j`` from eqs. (6)–(8) (:func:`~ddl_gym.baselines.sjf_bco.plan.estimate_bounds`
  gives ``u``, ``l`` of §5.1).
* :mod:`~ddl_gym.baselines.sjf_bco.policy` — :class:`SJFBCOPolicy` executes the plan in the event
  simulator with the real contention (per-GPU plan order kept, work-conserving); the §7.1 scenarios
  (:func:`sjf_bco_scenario`, :func:`sjf_bco_regime_scenario`).

Readings where the paper is ambiguous (``PlanOptions``, default first): ``fa_ffp`` = ``listing`` |
``prose`` (Alg. 2), ``lbsgf_pick`` = ``least-u`` | ``list-order`` (Alg. 3 l.7), ``rand_pick`` =
``gpus`` | ``servers`` (§7.2 RAND), ``job_order`` = ``sjf`` | ``arrival`` (Alg. 1 l.3); the others
(per-trial state, planned clock, θ filter) are documented in ``plan``'s docstring.
"""

from ddl_gym.baselines.sjf_bco.policy import (  # the former module ddl_gym.baselines.sjf_bco: its public names
    MB, ONLINE_MODES, SJF_BCO_MODELS, SJF_BCO_PERF_MODEL, PAPER_SERVER_GPU_CHOICES, PAPER_SERVERS,
    INTER_GBPS, INTRA_GBPS, sjf_bco_scenario, SJF_BCO_SCENARIOS, SJF_BCO_REGIME_MODELS,
    SJF_BCO_REGIME_PERF_MODEL, PAPER_RHO_HAT_RANGE, sjf_bco_regime_scenario, SJFBCOPolicy, make_sjf_bco,
    make_sjf_bco_baseline,
)

__all__ = ['MB', 'ONLINE_MODES', 'SJF_BCO_MODELS', 'SJF_BCO_PERF_MODEL', 'PAPER_SERVER_GPU_CHOICES', 'PAPER_SERVERS', 'INTER_GBPS', 'INTRA_GBPS', 'sjf_bco_scenario', 'SJF_BCO_SCENARIOS', 'SJF_BCO_REGIME_MODELS', 'SJF_BCO_REGIME_PERF_MODEL', 'PAPER_RHO_HAT_RANGE', 'sjf_bco_regime_scenario', 'SJFBCOPolicy', 'make_sjf_bco', 'make_sjf_bco_baseline']
