"""A-SRPT (Luo, Liu, Lee, Shroff): prediction-assisted online scheduling of pipeline jobs, and its baselines.

* :mod:`~ddl_gym.baselines.a_srpt.policy` — Algorithm 1 as reconstructed in
  ``shared/specs/asrpt-smd-aonline.md`` §A2.1 (lines marked (R)): :class:`VirtualSRPT` (line 3, the
  preemptive virtual single machine, exact in continuous time), :class:`ASRPT` (lines 2–25: the
  communication-heavy test of line 6, delay of lines 8–20, best-fit of lines 21–23).
* :mod:`~ddl_gym.baselines.a_srpt.server_selection` — server selection (Alg. 1 lines 8–23:
  ``consolidate``, ``fragment``, ``literal_ascending``, ``pack``) followed by the Heavy-Edge stage
  mapping (§IV-B, :mod:`ddl_gym.sim.perf.pipeline_mapping`), and the exact mapping ILP of Table II.
* :mod:`~ddl_gym.baselines.a_srpt.prediction` — iteration predictors (§IV-C-3, Fig. 9): the
  paper's random forest on (group, user), statistics and perfect predictors.
* :mod:`~ddl_gym.baselines.a_srpt.paper_baselines` — §V-A-1-d: SPJF, SPWF, WCS-Duration,
  WCS-Workload, WCS-SubTime (server selection ``best-fit`` by default; ``most-free`` and ``a-srpt`` as
  named readings, A5 #13, issue 32).

Readings (options of :class:`ASRPT`, default first): ``tau`` (1; the testbed used 0, A5 #4),
``delay_blocks`` (True | False, A5 #3), ``fragment`` (``fragment`` | ``literal_ascending``, A5 #7),
``connectivity`` (Heavy-Edge's HE9 rule, A5 #8d), ``perfect`` (A-SRPT-Perfect), ``backfill`` (False =
Alg. 1 line 25 strictly | True, ``a-srpt-backfill``). Unseen-job predictions: :mod:`.prediction`'s
``unseen`` rule (default ``median``; the paper's ``zero``).
"""

from ddl_gym.baselines.a_srpt.policy import (  # the former module ddl_gym.baselines.a_srpt: its public names
    COMM_HEAVY, VirtualSRPT, ASRPT,
)

__all__ = ['COMM_HEAVY', 'VirtualSRPT', 'ASRPT']
