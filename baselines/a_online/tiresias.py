"""Tiresias (Gu et al. [20]) as A-Online's baseline (iv), in two readings (spec C3, C5 #4, Part D).

* ``tiresias`` (default, the A-Online paper's definition): "a preemptive scheduler ... assigns
  jobs according to the multiplication of a job's remaining workload and the number of resources"
  — a **clairvoyant 2D-SRSF**. At every arrival and completion all jobs are ranked by
  ``remaining mini-batches / (N ρ) × normalised footprint`` (footprint = Σ_r demand_r / C_total^r
  of its fixed ideal configuration with ``N_fifo`` workers) and allocated in rank order, fit-first;
  running jobs that no longer fit are **preempted** (``preempt_overhead`` 0.1 slot on resume).
* ``tiresias-dlas`` (the real Tiresias, official simulator ``dlas_sim_jobs``): non-clairvoyant
  **discretised 2D-LAS**. Attained service = executed time × GPUs (GPU-seconds); queues split at
  ``queue_limits`` (official: 3250 and 7200 GPU-s, i.e. three queues); new jobs enter Q0; at every
  event (arrival, completion, the next demotion) jobs are scanned queue by queue, FIFO inside a
  queue, fit-first; running jobs that no longer fit are preempted and go to the back of their
  queue. Starvation knob ``solve_starvation``: a pending job whose pending time reaches
  ``executed time × solve_starvation`` returns to Q0 with its executed time reset (0 = off, the
  official default).

Both keep each job's worker/PS types and count fixed (the ideal configuration, as FIFO), and place
through the same multi-resource rule as FIFO.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ddl_gym.baselines.a_online.common import (
    SelfDrivingPolicy, alloc_use, fixed_config, normalised_footprint, place_fixed, require_aonline,
)
from ddl_gym.sim.engine import RUNNING, Simulator
from ddl_gym.sim.perf.aonline import SLOT_SECONDS


class Tiresias(SelfDrivingPolicy):
    capabilities = frozenset({"preempt"})

    def __init__(self, variant: str = "srsf", preempt_overhead_slots: float = 0.1,
                 queue_limits: tuple[float, ...] = (3250.0, 7200.0), solve_starvation: float = 0.0,
                 name: str | None = None) -> None:
        if variant not in ("srsf", "dlas"):
            raise ValueError(f"tiresias: variant must be 'srsf' or 'dlas', got {variant!r}")
        from ddl_gym.bounds import check_float

        self.variant = variant
        self.overhead_s = check_float(preempt_overhead_slots, 0.0, 1e6, "tiresias: preempt_overhead_slots") * SLOT_SECONDS
        self.queue_limits = tuple(check_float(q, 0.0, 1e15, "tiresias: queue_limits") for q in queue_limits)
        self.solve_starvation = check_float(solve_starvation, 0.0, 1e6, "tiresias: solve_starvation")
        self.name = name or ("tiresias" if variant == "srsf" else "tiresias-dlas")


    def reset(self, sim: Simulator, rng: np.random.Generator) -> None:
        require_aonline(self.name, sim.workload, sim.cluster)
        n = sim.workload.num_jobs
        self.config = {j: fixed_config(sim, j) for j in range(n)}
        self.footprint = [normalised_footprint(sim.cluster, *self.config[j]) for j in range(n)]
        self.gpus = [sim.cluster.worker_types[self.config[j][0]].demand[0] * self.config[j][2] for j in range(n)]
        self.rate: dict[int, float] = {}
        self.executed = [0.0] * n  # seconds run (dlas: resets on starvation promotion)
        self.pending_since = [math.nan] * n
        self.queue_entry = [0.0] * n  # FIFO key inside a 2D-LAS queue
        self.last = sim.now
        self._woken: set[float] = set()

    def _alloc(self, sim: Simulator, job: int, free: np.ndarray):
        m, p, n, _ = self.config[job]
        return place_fixed(sim, job, m, p, n, int(sim.workload.arch[job]), free=free)

    def _service(self, job: int) -> float:
        return self.executed[job] * self.gpus[job]

    def _queue_of(self, job: int) -> int:
        s = self._service(job)
        return sum(1 for limit in self.queue_limits if s >= limit)

    def schedule(self, sim: Simulator) -> None:
        now = sim.now
        dt = now - self.last
        for j in sim.running:
            self.executed[j] += dt
        self.last = now
        jobs = list(sim.running) + list(sim.queue)
        for j in sim.queue:
            if self.pending_since[j] != self.pending_since[j]:
                self.pending_since[j] = now
                self.queue_entry[j] = now
        if self.variant == "srsf":
            key = {j: (self._remaining_slots(sim, j) * self.footprint[j], j) for j in jobs}
        else:
            if self.solve_starvation > 0:
                for j in sim.queue:
                    if self.executed[j] > 0 and now - self.pending_since[j] >= self.executed[j] * self.solve_starvation:
                        self.executed[j] = 0.0  # back to Q0
                        self.queue_entry[j] = now
            key = {j: (self._queue_of(j), self.queue_entry[j], j) for j in jobs}
        free = sim.capacity.copy()
        free[:, 0] = sim.capacity[:, 0]
        keep, start = set(), []
        for j in sorted(jobs, key=key.__getitem__):  # fit-first in priority order
            if sim.state[j] == RUNNING:
                use = alloc_use(sim.cluster, sim.allocation(j))
                if np.all(free >= use - 1e-9):
                    free -= use
                    keep.add(j)
                continue
            alloc = self._alloc(sim, j, free)
            if alloc is not None:
                free -= alloc_use(sim.cluster, alloc)
                start.append((j, alloc))
        for j in [j for j in sim.running if j not in keep]:
            sim.preempt(j, overhead_s=self.overhead_s)
            self.pending_since[j] = now
            self.queue_entry[j] = now  # back of its queue
        for j, alloc in start:
            if sim.fits(alloc):
                sim.start(j, alloc)
                self.pending_since[j] = math.nan
        if self.variant == "dlas":  # wake at the next demotion of a running job (a "job jump")
            for j in sim.running:
                s = self._service(j)
                nxt = [limit for limit in self.queue_limits if limit > s]
                if nxt:
                    t = now + (nxt[0] - s) / max(self.gpus[j], 1e-12) + 1e-6
                    if t not in self._woken:
                        self._woken.add(t)
                        sim.wake_at(t)

    def _remaining_slots(self, sim: Simulator, job: int) -> float:
        """Remaining mini-batches / (N ρ) in slots on its fixed configuration (clairvoyant).

        ``ρ`` is the distributed rate of the ideal types; for ring-all-reduce jobs it is taken at
        ``Φ = D_j`` (eq. 14 depends on Φ only through ``(Φ−1)/Φ``), a ranking approximation.
        """
        return sim.remaining_iterations(job) * sim.nominal_iteration_time(job) / SLOT_SECONDS * \
            self._config_scale(sim, job)

    def _config_scale(self, sim: Simulator, job: int) -> float:
        # nominal_iteration_time is for D_j workers; the fixed configuration has N_fifo of them.
        if job not in self.rate:
            prof = sim.workload.job_profile(job)
            self.rate[job] = prof.chunks / self.config[job][2]
        return self.rate[job]


def make_tiresias(**kwargs: Any) -> Tiresias:
    return Tiresias(**kwargs)
