"""AntMan (Xiao et al. [17]) as A-Online's baseline (iii): a documented modelling decision.

Zhou §7: "AntMan schedules resource-guarantee jobs first and allocates sufficient GPU resources to
them. For opportunistic jobs, AntMan aims to utilize free resources to the best of its ability.
Resource-guarantee jobs that suffer long queuing delay will be automatically executed as
opportunistic jobs." AntMan's public code (alibaba/GPU-scheduler-for-deep-learning, a k8s plugin
marked WIP) leaves the automatic RG→opportunistic conversion unimplemented (spec Part D), so the
rule below is ours (spec C3 AntMan row, C5 #4), every constant an argument:

* every job arrives resource-guarantee (RG) with its ideal types and ``N_fifo`` workers (as FIFO);
  RG jobs start in arrival order when their full demand fits, preempting opportunistic jobs (latest
  started first) when that makes it fit; the first RG job that cannot start blocks later RG jobs;
* a job that has queued for more than ``wait_slots`` (1 slot) since arriving becomes opportunistic
  for good: it starts whenever its gang fits the idle resources (best effort, any order gap);
* an opportunistic job is **preempted** (engine capability; progress banked, ``preempt_overhead``
  = 0.1 slot charged on resume, counted per job) whenever a waiting RG job needs its resources.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ddl_gym.baselines.a_online.common import SelfDrivingPolicy, alloc_use, fixed_config, place_fixed, require_aonline
from ddl_gym.sim.engine import Simulator
from ddl_gym.sim.perf.aonline import SLOT_SECONDS


class AntMan(SelfDrivingPolicy):
    capabilities = frozenset({"preempt"})

    def __init__(self, wait_slots: float = 1.0, preempt_overhead_slots: float = 0.1, name: str = "antman") -> None:
        self.wait_s = wait_slots * SLOT_SECONDS
        self.overhead_s = preempt_overhead_slots * SLOT_SECONDS
        self.name = name


    def reset(self, sim: Simulator, rng: np.random.Generator) -> None:
        require_aonline(self.name, sim.workload, sim.cluster)
        self.config = {j: fixed_config(sim, j)
                       for j in range(sim.workload.num_jobs)}
        self.opportunistic: set[int] = set()
        self.started_at: dict[int, float] = {}
        self._woken: set[float] = set()

    def _alloc(self, sim: Simulator, job: int, free: np.ndarray | None = None):
        m, p, n, _ = self.config[job]
        return place_fixed(sim, job, m, p, n, int(sim.workload.arch[job]), free=free)

    def schedule(self, sim: Simulator) -> None:
        now = sim.now
        arrival = sim.workload.arrival
        for job in sim.queue:
            if now - arrival[job] > self.wait_s + 1e-9:
                self.opportunistic.add(job)
            else:
                t = float(arrival[job] + self.wait_s) + 1e-6
                if t not in self._woken:
                    self._woken.add(t)
                    sim.wake_at(t)
        # Resource-guarantee jobs, FIFO; they may preempt opportunistic ones.
        for job in [j for j in sim.queue if j not in self.opportunistic]:
            alloc = self._alloc(sim, job)
            if alloc is not None and sim.fits(alloc):
                self._start(sim, job, alloc)
                continue
            victims = sorted((j for j in sim.running if j in self.opportunistic), key=lambda j: -self.started_at[j])
            free = sim.free_resources()
            chosen, alloc = [], None
            for v in victims:
                free = free + alloc_use(sim.cluster, sim.allocation(v))
                chosen.append(v)
                alloc = self._alloc(sim, job, free)
                if alloc is not None:
                    break
            if alloc is None:
                break  # the first RG job that cannot start blocks the later ones
            for v in chosen:
                sim.preempt(v, overhead_s=self.overhead_s)
            if sim.fits(alloc):
                self._start(sim, job, alloc)
            else:
                break
        # Opportunistic jobs: best effort on idle resources.
        for job in [j for j in sim.queue if j in self.opportunistic]:
            alloc = self._alloc(sim, job)
            if alloc is not None and sim.fits(alloc):
                self._start(sim, job, alloc)

    def _start(self, sim: Simulator, job: int, alloc) -> None:
        sim.start(job, alloc)
        self.started_at[job] = sim.now


def make_antman(**kwargs: Any) -> AntMan:
    return AntMan(**kwargs)
