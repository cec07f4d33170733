"""One engine for every job kind: allocations, the multi-resource ledger, contention-free rate models,
and the optional capabilities reject / preempt / resize (hand-computed values and hypothesis fuzzing)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ddl_gym.baselines.classic.policy import ClassicPolicy
from ddl_gym.sim.alloc import Allocation
from ddl_gym.sim.engine import QUEUED, REJECTED, RUNNING, SimulationError, Simulator, run_policy
from ddl_gym.sim.model import ARCH_PS, ClusterSpec, ConfigError, ModelProfile, ResourceType, Workload
from ddl_gym.sim.perf import RARContentionModel
from tests.conftest import make_cluster, make_workload

RAR = RARContentionModel(xi1=1.0, xi2=1e-3, alpha=0.5, reduce_bytes_per_s=1e11)
PLAIN = ModelProfile("plain", gradient_bytes=0.0, forward_s=0.4, backward_s=0.6)


@dataclass(frozen=True)
class ElasticProfile:
    """Toy elastic job: one iteration costs ``work_s`` GPU-seconds, split perfectly over its workers."""

    work_s: float
    max_workers: int = 8

    def utility(self, completion_s: float) -> float:  # a linear toy utility: 100 at t=0, 0 at 100 s
        return max(0.0, 100.0 - completion_s)


@dataclass(frozen=True)
class ToyElasticModel:
    """A contention-free rate model: τ = work / workers (workers = worker instances, else GPUs)."""

    name: str = "toy-elastic"

    def bind(self, cluster, workload):
        return _BoundToy(workload)


class _BoundToy:
    contention_free = True

    def __init__(self, workload: Workload) -> None:
        self.work = [workload.job_profile(j).work_s if workload.job_profile(j) else 1.0 for j in range(workload.num_jobs)]

    def _workers(self, alloc: Allocation) -> int:
        return alloc.num_workers() or alloc.gpu_count()

    def allocation_time(self, job: int, alloc: Allocation) -> float:
        return self.work[job] / max(1, self._workers(alloc))

    def nominal_iteration_time(self, job: int) -> float:
        return self.work[job]

    def busy_gpu_seconds_per_iteration(self, job: int, alloc: Allocation) -> float:
        return self.work[job]


def elastic_cluster(servers: int = 2) -> ClusterSpec:
    """Servers with 4 GPUs, 16 CPUs, 64 GB; a 1-GPU/4-CPU/8-GB worker type and a CPU-only PS type."""
    return ClusterSpec(
        gpus_per_server=(4,) * servers, resources=("gpu", "cpu", "mem"),
        capacity=((4, 16, 64),) * servers,
        worker_types=(ResourceType("w1", (1, 4, 8)),), ps_types=(ResourceType("ps", (0, 2, 16)),),
    )


def elastic_workload(works: list[float], arrival: list[float] | None = None, iterations: list[int] | None = None) -> Workload:
    n = len(works)
    return Workload.from_jobs(
        arrival=arrival or [0.0] * n, gpus=[1] * n, iterations=iterations or [100] * n, models=[PLAIN] * n,
        arch=["ps"] * n, profiles=[ElasticProfile(w) for w in works],
    )


# ----------------------------------------------------------------------------- data model
def test_workload_requires_a_profile_for_non_allreduce_jobs():
    with pytest.raises(ConfigError, match="ps job without a profile"):
        Workload.from_jobs(arrival=[0.0], gpus=[1], iterations=[10], models=[PLAIN], arch=["ps"])
    wl = elastic_workload([2.0, 2.0, 3.0])
    assert wl.architectures == frozenset({"ps"}) and len(wl.profiles) == 2  # equal profiles stored once
    assert wl.arch.tolist() == [ARCH_PS] * 3 and wl.job_profile(2).work_s == 3.0
    sub = wl.subset(np.array([2]))
    assert sub.job_profile(0).work_s == 3.0 and sub.arch.tolist() == [ARCH_PS]


def test_cluster_capacity_must_agree_with_gpu_counts_and_resources():
    with pytest.raises(ConfigError, match="GPU column of capacity"):
        ClusterSpec(gpus_per_server=(4,), resources=("gpu", "cpu"), capacity=((8, 16),))
    with pytest.raises(ConfigError, match="need a capacity table"):
        ClusterSpec(gpus_per_server=(4,), resources=("gpu", "cpu"))
    with pytest.raises(ConfigError, match="'gpu' first"):
        ClusterSpec(gpus_per_server=(4,), resources=("cpu", "gpu"), capacity=((4, 4),))
    pooled = ClusterSpec.pooled({"gpu": 600, "cpu": 3400, "mem": 1400})
    assert pooled.num_servers == 1 and pooled.num_gpus == 600 and pooled.resources == ("gpu", "cpu", "mem")


def test_rar_model_refuses_a_workload_of_another_architecture_naming_both():
    with pytest.raises(ConfigError, match="'rar' models allreduce jobs.*has ps jobs"):
        Simulator(elastic_cluster(), elastic_workload([1.0]), RAR)


# ----------------------------------------------------------------------------- allocations
def test_rigid_allocation_and_plain_gpu_ids_give_identical_runs():
    cluster = make_cluster(2, 4)
    wl = make_workload([2, 2, 1], [100, 300, 50], [0.0, 0.0, 1.0])

    def run(wrap: bool) -> tuple:
        sim = Simulator(cluster, wl, RAR, debug=True)
        for job, ids in ((0, [0, 4]), (1, [1, 5])):
            sim.start(job, Allocation.rigid(ids) if wrap else ids)
        sim.advance()
        sim.start(2, Allocation.rigid([2]) if wrap else [2])
        while sim.advance():
            pass
        return tuple(sim.finish_time), tuple(sim.tau)

    assert run(True) == run(False)


def test_typed_allocation_takes_gpus_and_amounts_and_releases_them():
    cluster = elastic_cluster()
    sim = Simulator(cluster, elastic_workload([4.0]), ToyElasticModel(), debug=True)
    alloc = Allocation.typed(cluster, workers=[(0, 0, 2), (1, 0, 1)], ps=[(1, 0, 1)])
    sim.start(0, alloc)
    held = sim.allocation(0)
    assert sorted(held.gpu_ids.tolist()) == [0, 1, 4]  # lowest free GPUs of each server, chosen by the engine
    free = sim.free_resources()
    assert free.tolist() == [[2, 8, 48], [3, 10, 40]]  # server 1: one worker (1,4,8) + one PS (0,2,16)
    assert sim.tau[0] == pytest.approx(4.0 / 3)  # three workers
    while sim.advance():
        pass
    assert sim.free_resources().tolist() == [[4, 16, 64], [4, 16, 64]]
    assert sim.finish_time[0] == pytest.approx(100 * 4.0 / 3)


def test_allocation_over_capacity_raises():
    cluster = elastic_cluster()
    sim = Simulator(cluster, elastic_workload([1.0]), ToyElasticModel(), debug=True)
    with pytest.raises(SimulationError, match=r"non-GPU resources of server\(s\) \[0\]"):
        sim.start(0, Allocation.typed(cluster, ps=[(0, 0, 5)], workers=[(1, 0, 1)]))  # 5 PS: 80 GB > 64 GB
    assert sim.state[0] == QUEUED and sim.free_resources().tolist() == [[4, 16, 64], [4, 16, 64]]
    assert not sim.fits(Allocation.typed(cluster, ps=[(0, 0, 5)]))
    assert sim.fits(Allocation.typed(cluster, ps=[(0, 0, 4)]))


def test_rigid_job_cannot_start_on_a_different_gang_size_but_elastic_can():
    sim = Simulator(make_cluster(1, 4), make_workload([2], [10]), RAR)
    with pytest.raises(SimulationError, match="needs 2 GPUs"):
        sim.start(0, Allocation.rigid([0, 1, 2]))
    cluster = elastic_cluster(1)
    sim = Simulator(cluster, elastic_workload([1.0]), ToyElasticModel(), debug=True)
    sim.start(0, [0, 1, 2])  # elastic: any gang size
    assert sim.tau[0] == pytest.approx(1.0 / 3)


# ----------------------------------------------------------------------------- capabilities
def test_capabilities_must_be_declared():
    sim = Simulator(make_cluster(1, 4), make_workload([1], [10]), RAR)
    for action in (lambda: sim.reject(0), lambda: sim.preempt(0)):
        with pytest.raises(SimulationError, match="did not declare"):
            action()


def test_reject_job_leaves_unserved_holds_nothing_and_ends_the_episode():
    sim = Simulator(make_cluster(1, 4), make_workload([1, 1], [1000, 100], [0.0, 10.0]), RAR, debug=True)
    sim.capabilities = frozenset({"reject"})
    sim.start(0, [0])
    sim.advance()  # t = 10: job 1 arrives
    sim.reject(1)
    assert sim.state[1] == REJECTED and sim.jobs_in_system == 1
    while sim.advance():
        pass
    assert sim.done
    result = sim.result()
    assert result.completed and result.rejected.tolist() == [False, True]
    summary = result.summary()
    assert summary["jobs"] == 1 and summary["rejected_jobs"] == 1
    # jobs-in-system area: job 0 alone over its whole run (the rejected job never counts after leaving).
    assert sim.jobs_area == pytest.approx(sim.finish_time[0])


def test_preempt_banks_progress_and_charges_restart_overhead_hand_computed():
    # One 1-GPU job, τ = 0.05 s (toy model: 2·m/b_i for a 1-GPU job is 0, so τ = t_f + t_b + ξ2).
    sim = Simulator(make_cluster(1, 4), make_workload([1], [100]), RAR, debug=True, record_timeline=True)
    sim.capabilities = frozenset({"preempt"})
    tau = 0.02 + 0.03 + 1e-3
    sim.start(0, [0])
    sim.wake_at(40 * tau)
    sim.advance()
    sim.preempt(0, overhead_s=10 * tau)  # 40 iterations done; restart costs 10 more
    assert sim.state[0] == QUEUED and sim.remaining[0] == pytest.approx(60)
    assert sim.gpu_owner.tolist() == [-1] * 4
    sim.wake_at(5.0)
    sim.advance()
    sim.start(0, [3])
    assert sim.remaining[0] == pytest.approx(70)
    while sim.advance():
        pass
    assert sim.finish_time[0] == pytest.approx(5.0 + 70 * tau)
    assert sim.start_time[0] == 0.0  # first start kept (queueing delay); ideal runtime uses the last placement
    result = sim.result()
    assert result.preemptions.tolist() == [1]
    assert result.gpu_seconds[0] == pytest.approx(40 * tau + 70 * tau)  # held time only, not the gap
    assert result.summary()["preemptions"] == 1


def test_preempting_a_split_job_speeds_up_its_neighbour():
    sim = Simulator(make_cluster(2, 4), make_workload([2, 2], [100, 300]), RAR, debug=True)
    sim.capabilities = frozenset({"preempt"})
    sim.start(0, [0, 4])
    sim.start(1, [1, 5])
    assert sim.tau[1] == pytest.approx(0.2525)
    sim.preempt(0)
    assert sim.tau[1] == pytest.approx(0.1325) and sim.split_count.tolist() == [1, 1]


def test_resize_moves_an_elastic_job_and_keeps_its_progress():
    cluster = elastic_cluster(1)
    sim = Simulator(cluster, elastic_workload([4.0], iterations=[100]), ToyElasticModel(), debug=True)
    sim.capabilities = frozenset({"resize"})
    sim.start(0, Allocation.typed(cluster, workers=[(0, 0, 1)]))  # τ = 4 s
    sim.wake_at(40.0)
    sim.advance()  # 10 iterations done
    sim.resize(0, Allocation.typed(cluster, workers=[(0, 0, 4)]))  # τ = 1 s
    with pytest.raises(SimulationError, match="non-GPU resources"):  # 5 workers need 20 CPUs > 16
        sim.resize(0, Allocation.typed(cluster, workers=[(0, 0, 4)], ps=[(0, 0, 3)]))
    assert sim.allocation(0).num_workers() == 4  # a failed resize keeps the job where it was
    while sim.advance():
        pass
    assert sim.finish_time[0] == pytest.approx(40.0 + 90 * 1.0)
    assert sim.result().busy_gpu_seconds[0] == pytest.approx(100 * 4.0)  # compute work is conserved


def test_total_utility_and_weighted_completion():
    cluster = elastic_cluster(1)
    wl = elastic_workload([1.0, 1.0], iterations=[10, 30])
    sim = Simulator(cluster, wl, ToyElasticModel(), debug=True)
    sim.capabilities = frozenset({"reject"})
    sim.start(0, [0])  # 10 s
    sim.reject(1)
    while sim.advance():
        pass
    summary = sim.result().summary()
    assert summary["total_utility"] == pytest.approx(90.0)  # 100 - 10, and 0 for the rejected job
    assert summary["weighted_completion"] == pytest.approx(10.0)
    assert summary["resource_util_cpu"] == pytest.approx(0.0)  # a plain GPU-id start holds no CPU


# ----------------------------------------------------------------------------- fuzzing
class _FuzzPolicy:
    """Random typed starts, rejections, preemptions and resizes (seeded)."""

    name = "fuzz"
    capabilities = frozenset({"reject", "preempt", "resize"})

    def __init__(self, cluster: ClusterSpec) -> None:
        self.cluster = cluster

    def reset(self, sim: Simulator, rng: np.random.Generator) -> None:
        self.rng = rng

    def _random_alloc(self, sim: Simulator) -> Allocation | None:
        free = sim.free_resources()
        workers, ps = [], []
        for s in range(self.cluster.num_servers):
            k = int(self.rng.integers(0, 3))
            if k:
                workers.append((s, int(self.rng.integers(len(self.cluster.worker_types))), k))
            if self.rng.random() < 0.3:
                ps.append((s, 0, 1))
        if not workers:
            return None
        alloc = Allocation.typed(self.cluster, workers=workers, ps=ps)
        return alloc if sim.fits(alloc) and alloc.gpu_count() <= int(free[:, 0].sum()) else None

    def schedule(self, sim: Simulator) -> None:
        rng = self.rng
        for job in list(sim.running):
            roll = rng.random()
            if roll < 0.1:
                sim.preempt(job, overhead_s=float(rng.uniform(0, 2)))
            elif roll < 0.2:
                alloc = self._random_alloc(sim)
                if alloc is not None:
                    try:
                        sim.resize(job, alloc)
                    except SimulationError:
                        pass  # it may not fit once the job's own holding counts (kept where it was)
        for job in list(sim.queue):
            if rng.random() < 0.05:
                sim.reject(job)
                continue
            alloc = self._random_alloc(sim)
            if alloc is not None:
                sim.start(job, alloc)
        if sim.queue and not sim.running:
            sim.wake_at(sim.now + 1.0)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), servers=st.integers(1, 3), jobs=st.integers(1, 12))
def test_fuzzed_capabilities_keep_every_invariant_and_conserve_work(seed: int, servers: int, jobs: int) -> None:
    rng = np.random.default_rng(seed)
    cluster = ClusterSpec(
        gpus_per_server=(4,) * servers, resources=("gpu", "cpu", "mem"), capacity=((4, 16, 64),) * servers,
        worker_types=(ResourceType("w1", (1, 4, 8)), ResourceType("w2", (2, 2, 24))),
        ps_types=(ResourceType("ps", (0, 2, 16)),),
    )
    wl = elastic_workload(rng.uniform(0.5, 4.0, jobs).tolist(), np.sort(rng.uniform(0, 20, jobs)).tolist(),
                          rng.integers(5, 60, jobs).tolist())
    sim = Simulator(cluster, wl, ToyElasticModel(), debug=True, record_timeline=True)
    result = run_policy(sim, _FuzzPolicy(cluster), np.random.default_rng(seed))
    assert sim.done and result.completed
    # Work conservation, independently of the engine's own bookkeeping: integrate each job's rate
    # over the timeline; it must equal F plus the restart overheads the engine charged.
    done_iters = np.zeros(jobs)
    last: dict[int, tuple[float, float]] = {}
    for t, job, tau in sim.timeline:
        if job in last:
            t0, tau0 = last.pop(job)
            done_iters[job] += (t - t0) / tau0
        if tau != math.inf:
            last[job] = (t, tau)
    for j in range(jobs):
        if result.rejected[j]:
            assert not np.isfinite(result.finish[j])
            continue
        expected = wl.iterations[j] + sim._overhead_iters.get(j, 0.0)
        assert done_iters[j] == pytest.approx(expected, rel=1e-9)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_classic_policies_still_drain_under_debug_after_generalisation(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 15
    wl = make_workload(rng.choice([1, 2, 4, 6], n).tolist(), rng.integers(20, 200, n).tolist(),
                       np.sort(rng.uniform(0, 10, n)).tolist())
    sim = Simulator(make_cluster(3, 4), wl, RAR, debug=True)
    result = run_policy(sim, ClassicPolicy("srsf", "spread"), rng)
    assert result.completed and result.rejected is None and all(s != RUNNING for s in sim.state)


def test_contention_free_model_never_rerates_neighbours():
    cluster = elastic_cluster(2)
    sim = Simulator(cluster, elastic_workload([2.0, 2.0]), ToyElasticModel(), debug=True)
    sim.start(0, [0, 4])  # spans both servers
    version = sim._version[0]
    sim.start(1, [1, 5])  # also split, on the same servers: a contention model would re-rate job 0
    assert sim._version[0] == version and sim.tau[0] == pytest.approx(1.0)
    assert sim.split_count.tolist() == [2, 2]  # split jobs are still counted (observations use it)


class _PreemptingClassic:
    """fifo+spread that also preempts a random running job now and then (rigid RAR jobs).

    FIFO reads ``sim.queue``, into which a preempted job returns in arrival order.
    """

    name = "fifo+spread+preempt"
    capabilities = frozenset({"preempt"})

    def __init__(self) -> None:
        self.inner = ClassicPolicy("fifo", "spread")

    def reset(self, sim: Simulator, rng: np.random.Generator) -> None:
        self.rng = rng
        self.inner.reset(sim, rng)

    def schedule(self, sim: Simulator) -> None:
        for job in list(sim.running):
            if self.rng.random() < 0.15:
                sim.preempt(job, overhead_s=float(self.rng.uniform(0.0, 0.5)))
        self.inner.schedule(sim)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_fuzzed_preemption_under_rar_contention_conserves_work(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 14
    wl = make_workload(rng.choice([1, 2, 3, 4, 6], n).tolist(), rng.integers(20, 300, n).tolist(),
                       np.sort(rng.uniform(0, 10, n)).tolist())
    sim = Simulator(make_cluster(3, 4), wl, RAR, debug=True, record_timeline=True)
    result = run_policy(sim, _PreemptingClassic(), rng)
    assert result.completed
    done_iters = np.zeros(n)
    last: dict[int, tuple[float, float]] = {}
    for t, job, tau in sim.timeline:
        if job in last:
            t0, tau0 = last.pop(job)
            done_iters[job] += (t - t0) / tau0
        if tau != math.inf:
            last[job] = (t, tau)
    expected = wl.iterations + np.array([sim._overhead_iters.get(j, 0.0) for j in range(n)])
    assert done_iters == pytest.approx(expected, rel=1e-9)
    assert int(result.preemptions.sum()) == sum(sim.preemptions.values())
