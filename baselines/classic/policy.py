"""Classic reference policies: a job order (FIFO, SJF, SRSF, gpu-step) combined with a placement rule.

* FIFO: strict arrival order with head-of-line blocking — if the oldest queued job does not fit,
  nothing starts (the textbook FIFO; also exactly what the env's "slot 0" action does with a FIFO
  queue window).
* SJF: shortest job first by estimated duration ``F_j · τ̂_j`` (τ̂ = uncontended per-iteration
  time on the most consolidated placement). Greedy: tries queued jobs in that order and starts
  every one that fits (skipping those that do not), so it is work-conserving.
* SRSF: shortest remaining service first, service = remaining iterations × GPUs × τ̂ (Tiresias /
  Ada-SRSF's SRSF). Non-preemptive here, so for queued jobs remaining = F_j. Greedy like SJF.
* gpu-step: fewest GPU-seconds per training step ``G_j · τ̂_j`` first — SRSF without the iteration
  count ``F_j``, so a non-clairvoyant scheduler can run it (:data:`ddl_gym.sim.priority.NONCLAIRVOYANT_ORDERS`).
  Greedy like SJF.

Placement rules come from :mod:`ddl_gym.placement` (FF, LS, RAND, pack, spread, contention-aware),
so a policy name is ``"<order>+<rule>"``, e.g. ``fifo+pack``, ``srsf+ls``.
"""

from __future__ import annotations

import heapq

import numpy as np

from ddl_gym.placement import PlacementRule, get_placement_rule
from ddl_gym.sim.engine import QUEUED, Simulator
from ddl_gym.sim.model import ConfigError
from ddl_gym.sim.priority import ORDERS, priority_key, rank_by_key



class ClassicPolicy:
    """``order + placement`` policy, driven natively or expressed as env actions.

    Args:
        order: ``"fifo"``, ``"sjf"``, ``"srsf"`` or ``"gpu-step"``.
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
        # Jobs by rank (key, then index). Queued jobs are kept in one min-heap of ranks per GPU
        # demand: a scheduling pass merges the heads of the demands that fit the free GPUs, so it
        # costs O(demand sizes × starts · log n) instead of a walk over the whole queue.
        self._rank, self._job_by_rank = rank_by_key(self._key)
        self._by_demand: dict[int, list[int]] = {}
        self._demands: list[tuple[int, list[int]]] = []  # (G, heap of ranks), ascending G
        self._seen = 0

    def _sync(self, sim: Simulator) -> None:
        """Add the jobs that arrived since the last call to their demand's heap."""
        state, rank, gpus = sim.state, self._rank, self._gpus
        for job in range(self._seen, sim.num_arrived):
            if state[job] != QUEUED:
                continue
            heap = self._by_demand.get(gpus[job])
            if heap is None:
                heap = self._by_demand[gpus[job]] = []
                self._demands = sorted(self._by_demand.items())
            heapq.heappush(heap, rank[job])
        self._seen = sim.num_arrived

    def priority_queue(self, sim: Simulator) -> list[int]:
        """Queued jobs in the order this policy tries them (ties by arrival/index)."""
        if self.order == "fifo":
            return list(sim.queue)
        return sorted(sim.queue, key=self._rank.__getitem__)

    def schedule(self, sim: Simulator) -> None:
        if self.order == "fifo":
            first = sim.queue.first  # the head or -1: one call per start (the loop of a FIFO run)
            while (job := first()) >= 0:
                ids = self.rule(sim, job, self._rng)
                if ids is None:
                    return
                sim.start(job, ids)
            return
        # Queued jobs in rank order, skipping those that need more GPUs than are free then (the
        # free count only falls during a pass, so a skipped job would be skipped again).
        self._sync(sim)
        state, by_rank, rule, rng = sim.state, self._job_by_rank, self.rule, self._rng
        pop = heapq.heappop
        refused: list[tuple[list[int], int]] = []  # fitting jobs the rule did not place (not retried)
        try:
            while True:
                free = sim.num_free
                if free == 0:
                    return
                best_rank, best_heap = -1, None
                for demand, heap in self._demands:
                    if demand > free:
                        break
                    while heap and state[by_rank[heap[0]]] != QUEUED:
                        pop(heap)  # started (or removed) since it was queued
                    if heap and (best_heap is None or heap[0] < best_rank):
                        best_rank, best_heap = heap[0], heap
                if best_heap is None:
                    return
                pop(best_heap)
                job = by_rank[best_rank]
                ids = rule(sim, job, rng)
                if ids is None:
                    refused.append((best_heap, best_rank))
                else:
                    sim.start(job, ids)
        finally:
            for heap, r in refused:
                heapq.heappush(heap, r)
