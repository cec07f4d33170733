"""A custom native scheduler (the :class:`ddl_gym.protocols.SchedulerPolicy` protocol).

``LargestFirst`` starts queued jobs largest GPU demand first (ties: arrival order) wherever a
placement rule finds room. It is used by ``evaluate_custom_policy.py`` and from the command line::

    cd examples
    ddl-gym eval --scenario small --policies my_policy:LargestFirst+ca,srsf+ca --seeds 2 --out /tmp/largest

(``+ca`` arrives as ``placement="ca"``; ``:key=value`` options arrive as keyword arguments.)
"""

from __future__ import annotations

import numpy as np

from ddl_gym.placement import get_placement_rule
from ddl_gym.sim.engine import Simulator


class LargestFirst:
    """Largest GPU demand first, greedy (skips jobs that do not fit)."""

    def __init__(self, placement: str = "pack") -> None:
        self.rule = get_placement_rule(placement)
        self.name = f"largest-first+{placement}"
        self._rng = np.random.default_rng(0)

    def reset(self, sim: Simulator, rng: np.random.Generator) -> None:
        self._rng = rng  # every random draw comes from here: same seed, same schedule

    def schedule(self, sim: Simulator) -> None:
        gpus = sim.workload.gpus
        for job in sorted(sim.queue, key=lambda j: (-int(gpus[j]), j)):
            if int(gpus[job]) <= sim.num_free:
                placement = self.rule(sim, job, self._rng)
                if placement is not None:
                    sim.start(job, placement)
