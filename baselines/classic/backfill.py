"""EASY backfilling: a job order with one reservation, the classic scheduler of rigid gang jobs.

EASY (Lifka, "The ANL/IBM SP scheduling system", JSSPP 1995; analysed by Mu'alem and Feitelson,
IEEE TPDS 12(6), 2001) is what HPC batch systems run for jobs that need all their processors at
once, the situation of a distributed training job and its ``G_j`` GPUs. At every event
(arrival, completion):

1. queued jobs are tried in the policy's order (``fifo``: arrival, the original EASY; ``sjf``:
   ``F_j·τ̂_j``; ``srsf``: ``F_j·G_j·τ̂_j``, both as in :mod:`ddl_gym.baselines.classic.policy`)
   and started while they fit;
2. the first job that cannot start, the *head*, gets a reservation: its **shadow time** is the
   earliest moment at which the GPUs free now plus those of the running jobs finishing first
   (their estimated finish times, in order) reach ``G_head``; the **extra** GPUs are those free at
   the shadow time beyond ``G_head``;
3. every later queued job (in the same order) that fits now is *backfilled* if it does not delay
   the head: it is estimated to finish by the shadow time, or it needs no more than the extra GPUs
   (which it then uses up).

The greedy classic orders (``sjf+fs``, ``srsf+pack``, ...) are step 1 without the reservation:
they start every job that fits, so a wide job can wait while narrower ones keep taking the GPUs
it needs. EASY bounds that wait at the price of idle GPUs before the shadow time.

Estimates (a stated choice; EASY itself runs on user estimates). A queued job's run time is
``F_j·τ̂_j`` (τ̂: the uncontended iteration time on its most consolidated placement,
:func:`ddl_gym.sim.priority.nominal_runtimes`), a running job's remaining time is its remaining
iterations at its *current* iteration time. Both read iteration counts, so EASY is a
clairvoyant reference, like SJF and SRSF. They ignore future contention: a backfilled job that the
placement spreads may run longer than estimated and delay the head (EASY's estimates are never
exact either).

Names: ``easy-<order>+<placement>`` with any classic placement rule (:mod:`ddl_gym.placement`),
e.g. ``easy-fifo+pack`` (the original), ``easy-srsf+fs``.
"""

from __future__ import annotations

import numpy as np

from ddl_gym.placement import PlacementRule, get_placement_rule
from ddl_gym.sim.engine import Simulator
from ddl_gym.sim.model import ConfigError
from ddl_gym.sim.priority import nominal_runtimes, priority_key, rank_by_key

#: Job orders EASY can use (each needs run-time estimates, so no non-clairvoyant order is offered).
BACKFILL_ORDERS: tuple[str, ...] = ("fifo", "sjf", "srsf")


class EasyBackfillPolicy:
    """EASY backfilling with ``order`` and ``placement`` (see the module docstring).

    Args:
        order: ``"fifo"``, ``"sjf"`` or ``"srsf"``: the order jobs are started and backfilled in.
        placement: a placement rule name or alias (:mod:`ddl_gym.placement`).
    """

    engine = "job"

    def __init__(self, order: str = "fifo", placement: str = "pack") -> None:
        if order not in BACKFILL_ORDERS:
            raise ConfigError(f"easy: unknown job order {order!r}; choose one of {BACKFILL_ORDERS}")
        self.order = order
        self.placement_name = placement
        self.rule: PlacementRule = get_placement_rule(placement)
        self.name = f"easy-{order}+{placement}"
        self._rng = np.random.default_rng(0)
        self._rank: list[int] = []
        self._runtime: list[float] = []
        self._gpus: list[int] = []
        self.reservations = 0  # reservations computed (a head job that could not start), for tests

    def reset(self, sim: Simulator, rng: np.random.Generator, key: np.ndarray | list[float] | None = None) -> None:
        """Prepare for ``sim``'s episode; ``key`` (one value per job, smaller first, ties by index) replaces
        ``order``'s priority key when given (e.g. a search over priorities)."""
        self._rng = rng
        w = sim.workload
        self._gpus = w.gpus.tolist()
        self._runtime = nominal_runtimes(sim).tolist()
        if key is not None and len(key) != w.num_jobs:
            raise ConfigError(f"easy: a priority key needs one value per job ({w.num_jobs}), got {len(key)}")
        key = priority_key(sim, self.order) if key is None else key
        # FIFO: arrival order, which is job index order
        self._rank = list(range(w.num_jobs)) if key is None else rank_by_key(key)[0]
        self.reservations = 0

    def priority_queue(self, sim: Simulator) -> list[int]:
        """Queued jobs in the order EASY tries and backfills them."""
        return sorted(sim.queue, key=self._rank.__getitem__)

    def shadow(self, sim: Simulator, head: int) -> tuple[float, int]:
        """(shadow time, extra GPUs) of ``head``'s reservation: when the free GPUs plus those of the running
        jobs finishing first, by their estimated finish times, reach ``G_head``; ``(inf, 0)`` if they never do."""
        now = sim.now
        ends = sorted((now + sim.remaining_iterations(job) * sim.tau[job], job) for job in sim.running)
        need = self._gpus[head]
        free = sim.num_free
        for t, job in ends:
            free += self._gpus[job]
            if free >= need:
                return t, free - need
        return float("inf"), 0

    def next_start(self, sim: Simulator) -> tuple[int, list[int]] | None:
        """The job EASY starts next at this decision point and its GPUs, or ``None`` (wait for the next event).

        Starting it and asking again gives EASY's whole pass: after each start the reservation is
        recomputed from the new state, which is the pass's own bookkeeping (a long backfilled job
        holds its GPUs past the shadow time, so the extra GPUs shrink by its size; a short one
        releases them before it). The env-level expert (``agents/imitation.py``) asks the same way.
        """
        queue = self.priority_queue(sim)
        if not queue:
            return None
        gpus, rule, rng = self._gpus, self.rule, self._rng
        head = queue[0]
        if gpus[head] <= sim.num_free:  # step 1: the first job in order, if it fits
            ids = rule(sim, head, rng)  # (every rule places a job that fits the free GPUs)
            if ids is not None:
                return head, ids
        shadow, extra = self.shadow(sim, head)  # step 2: the head's reservation
        self.reservations += 1
        deadline = shadow - sim.now
        runtime = self._runtime
        for job in queue[1:]:  # step 3: backfill what does not delay the head
            g = gpus[job]
            if g > sim.num_free or (runtime[job] > deadline and g > extra):
                continue
            ids = rule(sim, job, rng)
            if ids is not None:
                return job, ids
        return None

    def schedule(self, sim: Simulator) -> None:
        while (choice := self.next_start(sim)) is not None:
            sim.start(*choice)


def make_easy_backfill(order: str = "fifo", placement: str = "pack") -> EasyBackfillPolicy:
    """Registry factory of ``easy-<order>+<placement>``."""
    return EasyBackfillPolicy(order=order, placement=placement)
