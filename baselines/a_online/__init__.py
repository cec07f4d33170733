"""A-Online (Zhou et al., "Online Scheduling Algorithm for Heterogeneous Distributed ML Jobs") and its §7 baselines.

* :mod:`~ddl_gym.baselines.a_online.policy` — Alg. 1 (geometric rounds ``τ_i = 2^{i-1}``), Alg. 2
  A_dual, Alg. 3 A_maxweight with the price update of eq. (11) (:func:`price`), α of eq. (6)
  (:func:`alpha_rule`); :class:`AOnlinePolicy`.
* :mod:`~ddl_gym.baselines.a_online.mincost` — the cost-minimisation routines Alg. 4–7
  (``literal_*`` as printed, ``fast_*`` equivalent and faster).
* :mod:`~ddl_gym.baselines.a_online.optimum` — configuration ILP and lower bound (spec C7).
* :mod:`~ddl_gym.baselines.a_online.common` — shared pieces: architecture checks, rates,
  allocations, the baselines' greedy multi-resource placement.
* baselines of §7: :mod:`~ddl_gym.baselines.a_online.fifo_mr` (i), :mod:`~ddl_gym.baselines.a_online.drf`
  (ii), :mod:`~ddl_gym.baselines.a_online.antman` (iii), :mod:`~ddl_gym.baselines.a_online.tiresias` (iv;
  ``tiresias`` clairvoyant 2D-SRSF as the paper defines it, ``tiresias-dlas`` the official 2D-LAS),
  :mod:`~ddl_gym.baselines.a_online.jain_greedy` (Fig. 8, in place of A_maxweight).

Readings (options of :class:`AOnlinePolicy`, default first): ``mode`` = ``calendar`` | ``paper``
(Alg. 1 l.8 literally, ``paper_alpha`` = 4) (C5 #1), ``tie_break`` = ``completion`` (default, §7.1(3)) | ``listing`` (``a-online-listing``),
``order`` = ``arrival`` | ``density`` (C5 #8). The performance model (ρ, slots) is :mod:`ddl_gym.sim.perf.aonline`.
"""

from ddl_gym.baselines.a_online.policy import (  # the former module ddl_gym.baselines.a_online: its public names
    W_MIN_DEFAULT, price_base, price, alpha_rule, AOnlinePolicy, make_a_online,
)

__all__ = ['W_MIN_DEFAULT', 'price_base', 'price', 'alpha_rule', 'AOnlinePolicy', 'make_a_online']
