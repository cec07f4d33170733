"""The scale-oriented code paths of the classic policies choose exactly what the simple ones chose.

* SJF/SRSF scheduling keeps one heap of queued jobs per GPU demand instead of walking the whole
  queue at every event; it must start the same jobs in the same order as the walk (a reference
  copy of the walk lives here).
* ``pack``'s multi-server path on large clusters locates the emptiest servers by free-GPU count
  instead of sorting all servers; it must return the same GPUs as the full sort.
"""

from __future__ import annotations

import numpy as np
import pytest

from ddl_gym.baselines.classic import ClassicPolicy
from ddl_gym.placement import _take_emptiest_first, _take_from_servers
from ddl_gym.sim import ClusterSpec, RARContentionModel, Simulator, run_policy
from ddl_gym.sim.engine import QUEUED
from ddl_gym.workloads.synthetic import scaled_workload
from tests.golden_cases import result_digest

GBPS = 1e9 / 8


class WalkingPolicy(ClassicPolicy):
    """The pre-heap SJF/SRSF pass: every queued job in rank order, started if it fits and is placed."""

    def schedule(self, sim: Simulator) -> None:
        queue = sorted((j for j in sim.queue if sim.state[j] == QUEUED), key=self._rank.__getitem__)
        for job in queue:
            if sim.num_free == 0:
                return
            if self._gpus[job] <= sim.num_free:
                ids = self.rule(sim, job, self._rng)
                if ids is not None:
                    sim.start(job, ids)


def _world(seed: int, servers: int, jobs: int, rate: float):
    cluster = ClusterSpec.homogeneous(servers, 4, inter_bandwidth=10 * GBPS, intra_bandwidth=800 * GBPS)
    workload = scaled_workload(np.random.default_rng(seed), jobs, max_gpus=min(32, cluster.num_gpus),
                               arrival_rate_per_s=rate)
    return cluster, workload, RARContentionModel()


@pytest.mark.parametrize("order", ["sjf", "srsf"])
@pytest.mark.parametrize("rule", ["ff", "ls", "rand", "pack", "spread", "ca"])
def test_heap_scheduling_equals_the_queue_walk(order: str, rule: str) -> None:
    cluster, workload, model = _world(7, 8, 300, rate=2.0)  # saturated: a long queue of mixed demands
    digests = []
    for cls in (ClassicPolicy, WalkingPolicy):
        result = run_policy(Simulator(cluster, workload, model), cls(order, rule), np.random.default_rng(3))
        digests.append(result_digest(result))
    assert digests[0] == digests[1]


def test_heap_scheduling_retries_nothing_a_rule_refused_in_the_same_pass() -> None:
    """A rule may refuse a job that fits; the pass goes on with later jobs, like the walk."""
    cluster, workload, model = _world(2, 4, 120, rate=1.0)
    calls: list[int] = []

    def picky(sim, job, rng):  # refuses every third call
        calls.append(job)
        if len(calls) % 3 == 0:
            return None
        return np.flatnonzero(sim.gpu_owner < 0)[: int(sim.workload.gpus[job])]

    digests = []
    for cls in (ClassicPolicy, WalkingPolicy):
        policy = cls("srsf", "ff")
        policy.rule = picky
        calls.clear()
        digests.append((result_digest(run_policy(Simulator(cluster, workload, model), policy)), list(calls)))
    assert digests[0] == digests[1]


@pytest.mark.parametrize("seed", range(20))
def test_pack_emptiest_first_equals_the_full_sort(seed: int) -> None:
    rng = np.random.default_rng(seed)
    cluster = ClusterSpec.homogeneous(int(rng.integers(300, 900)), int(rng.choice([2, 4, 8])))
    sim = Simulator(cluster, scaled_workload(rng, 5, max_gpus=4, arrival_rate_per_s=1.0), RARContentionModel())
    # Occupy a random subset of GPUs so that servers have every free count.
    busy = rng.random(cluster.num_gpus) < rng.uniform(0.2, 0.95)
    sim.gpu_owner[busy] = 0
    sim.free_per_server = np.bincount(cluster.gpu_server()[~busy], minlength=cluster.num_servers).astype(
        sim.free_per_server.dtype)
    sim.num_free = int((~busy).sum())
    for need in (2, 5, 9, 17, 32):
        if need > sim.num_free:
            continue
        order = np.lexsort((np.arange(cluster.num_servers), -sim.free_per_server))
        np.testing.assert_array_equal(_take_emptiest_first(sim, need), _take_from_servers(sim, order, need))
