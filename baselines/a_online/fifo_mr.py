"""FIFO over multi-resource servers (Zhou §7 baseline (i); spec C3 FIFO row).

"Jobs run by order of arrival, with fixed numbers and resource configuration of workers (and PSs).
The number of workers is fixed to a number within [1, 30]." Each job uses its ideal worker and PS
types (fastest worker type ``m*``, fastest PS type ``p*``), ``N_fifo = min(U{1..30}, D_j)`` workers
(drawn once per job by the generator: ``AOnlineProfile.baseline_workers``) and the fewest PSs on one
server covering its remote workers (2i). Strict head-of-line (Hadoop/Spark FIFO), non-preemptive.
Named ``fifo-mr`` so it does not clash with the classic ``fifo+<rule>`` family.
"""

from __future__ import annotations


import numpy as np

from ddl_gym.baselines.a_online.common import SelfDrivingPolicy, fixed_config, place_fixed, require_aonline
from ddl_gym.sim.engine import Simulator


class FifoMultiResource(SelfDrivingPolicy):
    name = "fifo-mr"


    def reset(self, sim: Simulator, rng: np.random.Generator) -> None:
        require_aonline(self.name, sim.workload, sim.cluster)
        self.config = {j: fixed_config(sim, j)
                       for j in range(sim.workload.num_jobs)}

    def schedule(self, sim: Simulator) -> None:
        for job in list(sim.queue):  # arrival order
            m, p, n, _ = self.config[job]
            alloc = place_fixed(sim, job, m, p, n, int(sim.workload.arch[job]))
            if alloc is None or not sim.fits(alloc):
                return  # head-of-line blocking
            sim.start(job, alloc)


def make_fifo_mr() -> FifoMultiResource:
    return FifoMultiResource()
