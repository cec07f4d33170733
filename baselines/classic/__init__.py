"""Classic reference policies: a job order (FIFO, SJF, SRSF) × a placement rule (``fifo+ff``, ``srsf+pack``, ...).

* :mod:`~ddl_gym.baselines.classic.policy` — :class:`ClassicPolicy`. Orders come from
  :mod:`ddl_gym.sim.priority` (the single definition of the estimates: SJF by ``F_j · τ̂_j``, SRSF by
  remaining iterations × GPUs × τ̂); FIFO is strict (head-of-line blocking), SJF and SRSF are greedy
  (work-conserving, non-preemptive). Placement rules come from :mod:`ddl_gym.placement` (FF, LS,
  RAND, pack, spread, contention-aware ``ca``).

No paper: textbook rules, the common baselines of SJF-BCO §7.2, Ada-SRSF §V and Tiresias.
"""

from ddl_gym.baselines.classic.policy import (  # the former module ddl_gym.baselines.classic: its public names
    ClassicPolicy,
)

__all__ = ['ClassicPolicy']
