"""Classic reference policies: a job order (FIFO, SJF, SRSF) combined with a placement rule.

* FIFO: strict arrival order with head-of-line blocking — if the oldest queued job does not fit,
  nothing starts (the textbook FIFO; also exactly what the env's "slot 0" action does with a FIFO
  queue window).
* SJF: shortest job first by estimated duration ``F_j · τ̂_j`` (τ̂ = uncontended per-iteration
  time on the most consolidated placement). Greedy: tries queued jobs in that order and starts
  every one that fits (skipping those that do not), so it is work-conserving.
* SRSF: shortest remaining service first, service = remaining iterations × GPUs × τ̂ (Tiresias /
  Ada-SRSF's SRSF). Non-preemptive here, so for queued jobs remaining = F_j. Greedy like SJF.

Placement rules come from :mod:`ddl_gym.placement` (FF, LS, RAND, pack, spread, contention-aware),
so a policy name is ``"<order>+<rule>"``, e.g. ``fifo+pack``, ``srsf+ls``.
"""

from __future__ import annotations

import bisect

import numpy as np

from ddl_gym.placement import PlacementRule, get_placement_rule
from ddl_gym.sim.engine import QUEUED, Simulator
from ddl_gym.sim.model import ConfigError
from ddl_gym.sim.priority import ORDERS, priority_key



class ClassicPolicy:
    """``order + placement`` policy, driven natively or expressed as env actions.

    Args:
        order: ``"fifo"``, ``"sjf"`` or ``"srsf"``.
        placement: a rule name or alias from :mod:`ddl_gym.placement`.
    """

    engine = "job"

    def __init__(self, order: str = "fifo", placement: str = "pack") -> None:
        if order not in ORDERS:
            raise ConfigError(f"unknown job order {order!r}; choose one of {ORDERS}")
        self.order = order
        self.placement_name = placement
        self.rule: PlacementRule = get_placement_rule(placement)
        self.name = f"{order}+{placement}"
        self._rng = np.random.default_rng(0)
        self._key: list[float] = []

    def reset(self, sim: Simulator, rng: np.random.Generator, key: list[float] | None = None) -> None:
        """Prepare for ``sim``'s episode (also mid-episode, e.g. on a forked simulator).

        Args:
            key: precomputed priority key per job (callers that restart the policy often, such
                as MCTS rollouts, pass it to skip recomputing it); ignored for FIFO.
        """
        self._rng = rng
        w = sim.workload
        self._gpus = w.gpus.tolist()
        if self.order == "fifo":
            self._key = []
            return
        if key is None:
            key = priority_key(sim, self.order).tolist()
        self._key = list(key)
        # Jobs by rank (key, then index). The queue is kept as a sorted list of ranks: arrivals come
        # in job-index order and started jobs are dropped lazily, so no per-call sort of the queue.
        order = np.lexsort((np.arange(w.num_jobs), np.asarray(self._key, dtype=np.float64)))
        rank = np.empty(w.num_jobs, dtype=np.int64)
        rank[order] = np.arange(w.num_jobs)
        self._rank = rank.tolist()
        self._job_by_rank = order.tolist()
        self._ranked: list[int] = []
        self._seen = 0

    def priority_queue(self, sim: Simulator) -> list[int]:
        """Queued jobs in the order this policy tries them (ties by arrival/index)."""
        if self.order == "fifo":
            return list(sim.queue)
        ranked = self._ranked
        for job in range(self._seen, sim.num_arrived):
            bisect.insort(ranked, self._rank[job])
        self._seen = sim.num_arrived
        state, by_rank = sim.state, self._job_by_rank
        ranked[:] = [r for r in ranked if state[by_rank[r]] == QUEUED]
        return [by_rank[r] for r in ranked]

    def schedule(self, sim: Simulator) -> None:
        if self.order == "fifo":
            queue = sim.queue
            while queue:
                job = queue[0]
                ids = self.rule(sim, job, self._rng)
                if ids is None:
                    return
                sim.start(job, ids)
            return
        gpus = self._gpus
        for job in self.priority_queue(sim):
            if sim.num_free == 0:
                return
            if gpus[job] <= sim.num_free:
                ids = self.rule(sim, job, self._rng)
                if ids is not None:
                    sim.start(job, ids)
