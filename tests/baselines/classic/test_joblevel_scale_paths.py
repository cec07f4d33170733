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

from ddl_gym.baselines.classic.policy import ClassicPolicy
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


# ----------------------------------------------------------------------------- placement at scale
# The rules as they were before the servers-by-free-count groups (reference copies): whole-cluster
# numpy scans, sorts and Generator.choice. The new code must choose exactly the same GPUs.
def _ref_best_fit(sim: Simulator, need: int) -> int:
    free = sim.free_per_server
    fits = np.flatnonzero(free >= need)
    return -1 if fits.size == 0 else int(fits[np.argmin(free[fits])])


def ref_pack(sim, job, rng):
    need = int(sim.workload.gpus[job])
    if sim.num_free < need:
        return None
    s = _ref_best_fit(sim, need)
    if s >= 0:
        return sim.free_gpu_ids(s)[:need]
    free = sim.free_per_server
    return _take_from_servers(sim, np.lexsort((np.arange(free.size), -free)), need)


def ref_spread(sim, job, rng):
    need = int(sim.workload.gpus[job])
    if sim.num_free < need:
        return None
    free = sim.free_per_server.copy()
    taken = np.zeros_like(free)
    for _ in range(need):
        s = int(np.argmax(free))
        taken[s] += 1
        free[s] -= 1
    return np.concatenate([sim.free_gpu_ids(s)[:k] for s, k in enumerate(taken.tolist()) if k])


def ref_contention_aware(sim, job, rng):
    need = int(sim.workload.gpus[job])
    if sim.num_free < need:
        return None
    s = _ref_best_fit(sim, need)
    if s >= 0:
        return sim.free_gpu_ids(s)[:need]
    order = np.lexsort((np.arange(sim.free_per_server.size), -sim.free_per_server, sim.split_count))
    return _take_from_servers(sim, order[sim.free_per_server[order] > 0], need)


def ref_least_loaded(sim, job, rng):
    need = int(sim.workload.gpus[job])
    if sim.num_free < need:
        return None
    free = np.flatnonzero(sim.gpu_owner < 0)
    return np.sort(free[np.argsort(sim.gpu_assigned_work[free], kind="stable")[:need]])


def ref_random(sim, job, rng):
    need = int(sim.workload.gpus[job])
    if sim.num_free < need:
        return None
    return np.sort(rng.choice(np.flatnonzero(sim.gpu_owner < 0), size=need, replace=False))


REFERENCE_RULES = {"pack": ref_pack, "spread": ref_spread, "ca": ref_contention_aware, "ls": ref_least_loaded,
                   "rand": ref_random}


@pytest.mark.parametrize("rule", sorted(REFERENCE_RULES))
@pytest.mark.parametrize("servers,per_server", [(80, 4), (70, 8), (20, 4), (12, 8)])
def test_rules_choose_what_the_whole_cluster_scans_chose(rule: str, servers: int, per_server: int) -> None:
    """Above 64 servers pack/spread/ca read the free-count groups, at or below it they sort Python lists;
    ls/rand have a one-GPU fast path. Each equals the numpy scan of the whole cluster it replaced."""
    cluster = ClusterSpec.homogeneous(servers, per_server, inter_bandwidth=10 * GBPS, intra_bandwidth=800 * GBPS)
    workload = scaled_workload(np.random.default_rng(servers), 300, max_gpus=32, arrival_rate_per_s=servers / 20.0)
    digests = []
    for reference in (False, True):
        policy = ClassicPolicy("srsf" if rule in ("ca", "ls") else "fifo", rule)
        if reference:
            policy.rule = REFERENCE_RULES[rule]
        sim = Simulator(cluster, workload, RARContentionModel())
        digests.append(result_digest(run_policy(sim, policy, np.random.default_rng(5))))
    assert digests[0] == digests[1]


def test_free_count_groups_follow_every_start_and_release_and_fork() -> None:
    cluster = ClusterSpec.homogeneous(70, 4, inter_bandwidth=10 * GBPS, intra_bandwidth=800 * GBPS)
    workload = scaled_workload(np.random.default_rng(1), 200, max_gpus=16, arrival_rate_per_s=3.0)
    sim = Simulator(cluster, workload, RARContentionModel(), debug=True)  # check_invariants compares the groups
    policy = ClassicPolicy("fifo", "spread")
    policy.reset(sim, np.random.default_rng(0))
    groups = sim.servers_by_free()
    assert groups[4] == list(range(70)) and not any(groups[:4])
    for _ in range(150):
        if sim.queue:
            policy.schedule(sim)
        sim.advance()
    twin = sim.fork()
    twin.advance()
    for s_ in (sim, twin):
        expected = [np.flatnonzero(s_.free_per_server == c).tolist() for c in range(5)]
        assert s_.servers_by_free() == expected
    assert twin.servers_by_free() is not sim.servers_by_free()


def test_one_gpu_random_draw_matches_generator_choice() -> None:
    """random_fit's one-GPU path relies on choice(n, 1, replace=False) == integers(n), state included."""
    for seed in range(30):
        for n in (1, 2, 7, 64, 1000, 10_001, 70_000):
            a, b = np.random.default_rng(seed), np.random.default_rng(seed)
            for _ in range(3):
                assert a.choice(n, size=1, replace=False)[0] == b.integers(n)
            assert a.bit_generator.state == b.bit_generator.state


class FullRerateSimulator(Simulator):
    """Re-rates every split neighbour on every split start/end (the engine before the incremental sets),
    at p recomputed from scratch over each neighbour's servers."""

    def _every_neighbour(self, servers):
        # The engine's protocol: the jobs to re-rate, with their new p left in the _new_p scratch.
        count = self.split_count_list()
        jobs = list(self._neighbours(servers))
        for i in jobs:
            self._new_p[i] = max(count[s] for s in self.servers[i])
        return jobs

    def _raised_neighbours(self, servers):
        return self._every_neighbour(servers)

    def _lowered_neighbours(self, servers):
        return self._every_neighbour(servers)


@pytest.mark.parametrize("policy_name", ["fifo+spread", "srsf+rand", "sjf+ca", "fifo+pack"])
def test_incremental_rerate_equals_rerating_every_neighbour(policy_name: str) -> None:
    cluster, workload, model = _world(11, 12, 400, rate=1.5)  # saturated, many split jobs contend
    from ddl_gym.policies import make_policy

    digests, contended = [], []
    for cls in (Simulator, FullRerateSimulator):
        sim = cls(cluster, workload, model)
        digests.append(result_digest(run_policy(sim, make_policy(policy_name), np.random.default_rng(2))))
        contended.append(sum(sim.contention))
    assert digests[0] == digests[1]
    assert contended[0] == contended[1] > 0  # contention happened (the test exercises re-rating)


@pytest.mark.parametrize("seed", range(20))
def test_pack_emptiest_first_equals_the_full_sort(seed: int) -> None:
    rng = np.random.default_rng(seed)
    cluster = ClusterSpec.homogeneous(int(rng.integers(300, 900)), int(rng.choice([2, 4, 8])))
    workload = scaled_workload(rng, 400, max_gpus=1, arrival_rate_per_s=1.0)
    sim = Simulator(cluster, workload, RARContentionModel())
    # Occupy a random subset of GPUs with one-GPU jobs so that servers have every free count.
    sim.now = float(workload.arrival[-1])
    sim._admit_arrivals()
    busy = rng.permutation(cluster.num_gpus)[: int(cluster.num_gpus * rng.uniform(0.2, 0.95))]
    for job, gpu in zip(list(sim.queue), busy.tolist()):
        sim.start(job, [gpu])
    for need in (2, 5, 9, 17, 32):
        if need > sim.num_free:
            continue
        order = np.lexsort((np.arange(cluster.num_servers), -sim.free_per_server))
        np.testing.assert_array_equal(_take_emptiest_first(sim, need), _take_from_servers(sim, order, need))
