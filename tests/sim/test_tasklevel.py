"""Task-level engine (Ada-SRSF §III): eq. (5) all-reduces, GPU sharing, invariants, fast path.

Hand-checked numbers use the defaults of the authors' simulator: b = 0.856 ms/MB = 8.56e-10 s/B,
η = 0.235 ms/MB = 2.35e-10 s/B, a = 0. Times are compared to 1e-8 s (the engine's clock is integer
nanoseconds; an all-reduce end is rounded up to the next nanosecond).
"""

from __future__ import annotations

import numpy as np
import pytest

from ddl_gym.baselines.ada_srsf.policy import AdaDual, SRSFn, first_fit_placement, lwf_placement, random_placement
from ddl_gym.sim.model import ClusterSpec, ConfigError, ModelProfile, Workload
from ddl_gym.sim.perf import AllReduceContentionModel
from ddl_gym.sim.tasklevel import InvariantError, TaskLevelSimulator
from ddl_gym.workloads import ada_srsf_workload

B, ETA = 8.56e-10, 2.35e-10
MODEL = AllReduceContentionModel(a=0.0, b=B, eta=ETA)
TF, TBW = 0.010, 0.020  # seconds
TC = TF + TBW
TOL = 1e-8


def profile(name: str, message_mb: float, mem: float = 1000.0, tf: float = TF, tb: float = TBW) -> ModelProfile:
    return ModelProfile(name, gradient_bytes=message_mb * 1e6, forward_s=tf, backward_s=tb, batch_size=16,
                        gpu_memory_mb=mem)


def scripted(assignment: dict[int, list[int]]):
    """Placement rule that puts job i on assignment[i] (None: keep it queued)."""

    def rule(sim: TaskLevelSimulator, job: int, rng: np.random.Generator):
        ids = assignment.get(job)
        if ids is None or not all(sim.fits(g, job) for g in ids):
            return None
        return ids

    return rule


def two_allreduce_sim(m_first: float, m_second: float, comm, *, a: float = 0.0, probe_defect: bool = False,
                      iterations: int = 1) -> TaskLevelSimulator:
    """Two 2-GPU jobs on servers 0 and 1 (one GPU each per server, GPUs not shared), arriving at 0.

    Both finish their compute at t_c and become ready to all-reduce together; job 0 (message
    ``m_first`` MB) is first in SRSF order (equal remaining service, lower index).
    """
    cluster = ClusterSpec.homogeneous(2, 2)
    wl = Workload.from_jobs(arrival=[0.0, 0.0], gpus=[2, 2], iterations=[iterations] * 2,
                            models=[profile("first", m_first), profile("second", m_second)])
    model = AllReduceContentionModel(a=a, b=B, eta=ETA)
    return TaskLevelSimulator(cluster, wl, model, placement=scripted({0: [0, 2], 1: [1, 3]}), comm_admission=comm,
                              debug=True, probe_defect=probe_defect)


# ----------------------------------------------------------------------------- eq. (5), Theorems 1-2
def test_sequential_allreduces_theorem1_times() -> None:
    """Theorem 1 (C1, t = t1): c1 then c2 back to back: T1 = b·M1, T2 = b·M1 + b·M2 after t_c."""
    m1, m2 = 100.0, 300.0
    res = two_allreduce_sim(m1, m2, SRSFn(1)).run()
    t1, t2 = B * m1 * 1e6, B * m2 * 1e6
    assert res.finish[0] == pytest.approx(TC + t1, abs=TOL)
    assert res.finish[1] == pytest.approx(TC + t1 + t2, abs=TOL)


def test_concurrent_allreduces_eq5_rerating() -> None:
    """C2 with t = 0 (eq. 11): both at k = 2 until c1 ends at (2b+η)M1, then c2 alone at b per byte."""
    m1, m2 = 100.0, 300.0
    res = two_allreduce_sim(m1, m2, SRSFn(2)).run()
    T1 = (2 * B + ETA) * m1 * 1e6
    T2 = T1 + B * (m2 - m1) * 1e6
    assert res.finish[0] == pytest.approx(TC + T1, abs=TOL)
    assert res.finish[1] == pytest.approx(TC + T2, abs=TOL)


def test_latency_a_charged_once_per_allreduce() -> None:
    a = 6.69e-4
    res = two_allreduce_sim(100.0, 300.0, SRSFn(1), a=a).run()
    first = TC + a + B * 100e6
    assert res.finish[0] == pytest.approx(first, abs=TOL)
    assert res.finish[1] == pytest.approx(first + a + B * 300e6, abs=TOL)


@pytest.mark.parametrize("ratio", [0.30, 0.50])
def test_adadual_picks_the_better_of_theorem2_cases(ratio: float) -> None:
    """Theorem 2: the long task c2 runs; c1 (M1 = ratio·M2) joins at once iff M1/M2 < b/(2(b+η)) ≈ 0.392."""
    m2 = 500.0
    m1 = ratio * m2
    threshold = B / (2 * (B + ETA))
    ada = two_allreduce_sim(m2, m1, AdaDual(B, ETA)).run()  # job 0 = c2 (long), job 1 = c1
    seq = two_allreduce_sim(m2, m1, SRSFn(1)).run()
    con = two_allreduce_sim(m2, m1, SRSFn(2)).run()
    # Closed forms of eqs. (11)-(12): C2a (t = 0) and C2b (t = t2).
    c2a = ((2 * B + ETA) * m1 * 1e6, (2 * B + ETA) * m1 * 1e6 + B * (m2 - m1) * 1e6)  # (T1, T2)
    c2b = (B * m2 * 1e6 + B * m1 * 1e6, B * m2 * 1e6)
    assert con.finish[1] == pytest.approx(TC + c2a[0], abs=TOL) and con.finish[0] == pytest.approx(TC + c2a[1], abs=TOL)
    assert seq.finish[1] == pytest.approx(TC + c2b[0], abs=TOL) and seq.finish[0] == pytest.approx(TC + c2b[1], abs=TOL)
    joins = ratio < threshold
    expected = con if joins else seq
    np.testing.assert_allclose(ada.finish, expected.finish, atol=TOL)
    # ... and that choice has the smaller average completion time (eq. 9).
    assert (ada.finish.mean() <= min(con.finish.mean(), seq.finish.mean()) + TOL)


def test_k_is_the_max_over_the_jobs_servers() -> None:
    """A job sharing only one of its servers with another all-reduce still sees k = 2 (eq. 5)."""
    cluster = ClusterSpec.homogeneous(3, 1)
    wl = Workload.from_jobs(arrival=[0.0, 0.0], gpus=[2, 2], iterations=[1, 1],
                            models=[profile("x", 200.0, mem=100), profile("y", 200.0, mem=100)])
    sim = TaskLevelSimulator(cluster, wl, MODEL, placement=scripted({0: [0, 1], 1: [1, 2]}), comm_admission=SRSFn(2),
                             debug=True)
    res = sim.run()
    # GPU 1 is shared: job 0 computes first (lower index), job 1 after it; job 0's all-reduce
    # starts at t_c alone (k = 1) and is joined at 2·t_c by job 1's (k = 2 on server 1 only).
    t0 = TC
    rem_at_join = 200e6 - (2 * TC - t0) / B
    end0 = 2 * TC + rem_at_join * (2 * B + ETA)
    assert res.finish[0] == pytest.approx(end0, abs=1e-7)
    end1 = end0 + (200e6 - (end0 - 2 * TC) / (2 * B + ETA)) * B
    assert res.finish[1] == pytest.approx(end1, abs=1e-7)


def test_single_server_job_has_free_allreduce_and_full_utilisation() -> None:
    cluster = ClusterSpec.homogeneous(1, 2)
    wl = Workload.from_jobs(arrival=[0.0], gpus=[2], iterations=[7], models=[profile("p", 500.0)])
    res = TaskLevelSimulator(cluster, wl, MODEL, placement=first_fit_placement, comm_admission=SRSFn(1),
                             debug=True).run()
    assert res.finish[0] == pytest.approx(7 * TC, abs=TOL)
    assert res.summary()["gpu_compute_util"] == pytest.approx(1.0)
    assert res.ideal_runtime[0] == pytest.approx(7 * TC)


def test_multi_server_job_alone_runs_at_ideal_speed() -> None:
    cluster = ClusterSpec.homogeneous(2, 1)
    wl = Workload.from_jobs(arrival=[3.0], gpus=[2], iterations=[5], models=[profile("p", 250.0)])
    res = TaskLevelSimulator(cluster, wl, AllReduceContentionModel(a=1e-3, b=B, eta=ETA),
                             placement=first_fit_placement, comm_admission=AdaDual(B, ETA), debug=True).run()
    per_iteration = TC + 1e-3 + B * 250e6
    assert res.start[0] == 3.0
    assert res.finish[0] - res.start[0] == pytest.approx(5 * per_iteration, abs=5 * TOL)
    assert res.ideal_runtime[0] == pytest.approx(5 * per_iteration)
    # Utilisation = GPU compute time / (GPUs x makespan), makespan from the first arrival.
    assert res.summary()["gpu_compute_util"] == pytest.approx(5 * TC / (5 * per_iteration), rel=1e-6)


# ----------------------------------------------------------------------------- GPU sharing
def test_jobs_share_a_gpu_when_memory_fits() -> None:
    cluster = ClusterSpec.homogeneous(1, 1, gpu_memory_mb=16384)
    wl = Workload.from_jobs(arrival=[0.0, 0.0], gpus=[1, 1], iterations=[10, 20],
                            models=[profile("a", 1.0, mem=5000), profile("b", 1.0, mem=5000)])
    sim = TaskLevelSimulator(cluster, wl, MODEL, placement=first_fit_placement, comm_admission=SRSFn(1), debug=True)
    res = sim.run()
    assert sim.placed_ns == [0, 0]  # both resident from t = 0
    # SRSF on the GPU: the shorter job runs first, the other one after it, never overlapping.
    assert res.finish[0] == pytest.approx(10 * TC)
    assert res.start[1] == pytest.approx(10 * TC) and res.finish[1] == pytest.approx(30 * TC)
    intervals = sim.task_intervals()[0]
    assert len(intervals) == 2 * 30
    assert all(e0 <= s1 + 1e-12 for (_, e0, _), (s1, _, _) in zip(intervals, intervals[1:]))


def test_jobs_do_not_share_a_gpu_when_memory_does_not_fit() -> None:
    cluster = ClusterSpec.homogeneous(1, 1, gpu_memory_mb=16384)
    wl = Workload.from_jobs(arrival=[0.0, 0.0], gpus=[1, 1], iterations=[10, 20],
                            models=[profile("a", 1.0, mem=9000), profile("b", 1.0, mem=9000)])
    sim = TaskLevelSimulator(cluster, wl, MODEL, placement=first_fit_placement, comm_admission=SRSFn(1), debug=True)
    res = sim.run()
    assert sim.placed_ns[0] == 0 and sim.placed_ns[1] == round(10 * TC * 1e9)  # waits for the memory
    assert res.finish[1] == pytest.approx(30 * TC)


def test_gpu_sharing_off_means_one_job_per_gpu() -> None:
    cluster = ClusterSpec.homogeneous(1, 1)
    wl = Workload.from_jobs(arrival=[0.0, 0.0], gpus=[1, 1], iterations=[10, 20],
                            models=[profile("a", 1.0, mem=10), profile("b", 1.0, mem=10)])
    sim = TaskLevelSimulator(cluster, wl, MODEL, placement=first_fit_placement, comm_admission=SRSFn(1),
                             gpu_sharing=False, debug=True)
    sim.run()
    assert sim.placed_ns[1] == round(10 * TC * 1e9)


def test_shared_gpu_runs_other_work_during_an_allreduce() -> None:
    """A one-GPU job on a GPU of a multi-server job fills that GPU while the all-reduce runs."""
    cluster = ClusterSpec.homogeneous(2, 1)
    wl = Workload.from_jobs(arrival=[0.0, 0.0], gpus=[2, 1], iterations=[3, 200],
                            models=[profile("ms", 300.0, mem=100), profile("solo", 1.0, mem=100)])
    sim = TaskLevelSimulator(cluster, wl, MODEL, placement=scripted({0: [0, 1], 1: [0]}), comm_admission=SRSFn(1),
                             debug=True)
    res = sim.run()
    busy = sum(e - s for s, e, _ in sim.task_intervals()[0])
    assert busy == pytest.approx(3 * TC + 200 * TC)
    # The multi-server job has the smaller remaining service, so it wins every task boundary on
    # GPU 0; the one-GPU job only delays it by the task it is running when an all-reduce ends.
    alone = 3 * (TC + B * 300e6)
    assert alone <= res.finish[0] <= alone + 3 * TC
    assert res.finish[1] < 200 * TC + 3 * TC + 1e-9 + alone  # it kept working during the all-reduces


# ----------------------------------------------------------------------------- invariants
def test_debug_catches_an_over_committing_placement() -> None:
    cluster = ClusterSpec.homogeneous(1, 1, gpu_memory_mb=16384)
    wl = Workload.from_jobs(arrival=[0.0, 0.0], gpus=[1, 1], iterations=[2, 2],
                            models=[profile("a", 1.0, mem=9000), profile("b", 1.0, mem=9000)])
    greedy = lambda sim, job, rng: [0]  # noqa: E731 - ignores memory on purpose
    sim = TaskLevelSimulator(cluster, wl, MODEL, placement=greedy, comm_admission=SRSFn(1), debug=True)
    with pytest.raises(InvariantError, match="does not fit"):
        sim.run()


def test_debug_detects_overlapping_tasks() -> None:
    cluster = ClusterSpec.homogeneous(1, 1)
    wl = Workload.from_jobs(arrival=[0.0], gpus=[1], iterations=[2], models=[profile("a", 1.0)])
    sim = TaskLevelSimulator(cluster, wl, MODEL, placement=first_fit_placement, comm_admission=SRSFn(1), debug=True)
    sim.run()
    sim.check_invariants(final=True)
    sim._intervals[0].append((1, 10**9, 0))  # forge a task overlapping the real ones
    with pytest.raises(InvariantError, match="overlap"):
        sim.check_invariants(final=True)


def test_bad_inputs_give_config_errors() -> None:
    cluster = ClusterSpec.homogeneous(1, 1, gpu_memory_mb=1000)
    wl = Workload.from_jobs(arrival=[0.0], gpus=[1], iterations=[2], models=[profile("big", 1.0, mem=5000)])
    with pytest.raises(ConfigError, match="MB per GPU"):
        TaskLevelSimulator(cluster, wl, MODEL, placement=first_fit_placement, comm_admission=SRSFn(1))
    from ddl_gym.sim.perf import RARContentionModel

    with pytest.raises(ConfigError, match="AllReduceContentionModel"):
        TaskLevelSimulator(cluster, wl, RARContentionModel(), placement=first_fit_placement, comm_admission=SRSFn(1))


def random_instance(seed: int) -> tuple[ClusterSpec, Workload, AllReduceContentionModel]:
    rng = np.random.default_rng(seed)
    cluster = ClusterSpec.homogeneous(int(rng.integers(2, 5)), int(rng.integers(2, 5)),
                                      gpu_memory_mb=float(rng.choice([8000.0, 16384.0])))
    model = AllReduceContentionModel(a=float(rng.choice([0.0, 6.69e-4])), b=B, eta=float(rng.choice([0.0, ETA])))
    mix = {1: int(rng.integers(2, 8)), 2: int(rng.integers(0, 4)), 4: int(rng.integers(0, 3))}
    if cluster.num_gpus >= 8:
        mix[8] = int(rng.integers(0, 2))
    wl = ada_srsf_workload(rng, gpu_mix=mix, iterations=(3, 40), window_s=float(rng.integers(2, 30)))
    return cluster, wl, model


@pytest.mark.parametrize("seed", range(8))
def test_fast_path_equals_task_by_task(seed: int) -> None:
    """Closed-form cohorts/gangs give exactly the schedule of one event per task (debug on both)."""
    cluster, wl, model = random_instance(seed)
    comms = [AdaDual(model.b, model.eta), SRSFn(1), SRSFn(2)]
    places = [lwf_placement(1), first_fit_placement, random_placement]
    comm, place = comms[seed % 3], places[(seed // 3) % 3]
    runs = []
    for fast in (False, True):
        sim = TaskLevelSimulator(cluster, wl, model, placement=place, comm_admission=comm,
                                 rng=np.random.default_rng(seed), fast=fast, debug=True)
        runs.append((sim.run(), sim))
    (slow, slow_sim), (fast, fast_sim) = runs
    np.testing.assert_array_equal(slow.finish, fast.finish)
    np.testing.assert_array_equal(slow.start, fast.start)
    assert slow_sim.stats.cohorts_formed == 0 and fast_sim.stats.cohorts_formed > 0
    assert fast_sim.stats.events < slow_sim.stats.events


def test_fast_path_equals_task_by_task_on_a_paper_sized_slice() -> None:
    """16x4 GPUs, Table III models, 40 jobs of the paper's mix with short runs (a few hundred iterations)."""
    rng = np.random.default_rng(11)
    cluster = ClusterSpec.homogeneous(16, 4)
    wl = ada_srsf_workload(rng, gpu_mix={1: 20, 2: 4, 4: 6, 8: 7, 16: 2, 32: 1}, iterations=(20, 120), window_s=60)
    finishes = []
    for fast in (False, True):
        sim = TaskLevelSimulator(cluster, wl, MODEL, placement=lwf_placement(1), comm_admission=AdaDual(B, ETA),
                                 fast=fast, debug=True)
        finishes.append(sim.run().finish)
    np.testing.assert_array_equal(finishes[0], finishes[1])


def test_same_seed_same_result_and_rand_depends_on_seed() -> None:
    cluster, wl, model = random_instance(3)
    def run(seed: int) -> np.ndarray:
        sim = TaskLevelSimulator(cluster, wl, model, placement=random_placement, comm_admission=AdaDual(B, ETA),
                                 rng=np.random.default_rng(seed))
        res = sim.run()
        return np.concatenate([res.finish, [g for ids in res.gpu_ids for g in ids]])
    np.testing.assert_array_equal(run(1), run(1))
    assert not np.array_equal(run(1), run(2))


def test_advance_stops_at_the_requested_time() -> None:
    sim = two_allreduce_sim(100.0, 300.0, SRSFn(1))
    assert sim.advance(until_s=TC / 2) is False
    assert sim.now <= TC / 2 and sim.num_done == 0
    assert sim.advance() is True and sim.num_done == 2


def test_plain_admission_function_works_like_the_rule_object() -> None:
    """A bare ``rule(sim, job) -> bool`` (no ``decide``) is asked at every change; SRSF(1) by hand."""
    cluster, wl, model = random_instance(5)

    def srsf1(sim: TaskLevelSimulator, job: int) -> bool:
        return all(sim.comm_count[s] < 1 for s in sim.job_servers[job])

    finishes = []
    for comm in (srsf1, SRSFn(1)):
        sim = TaskLevelSimulator(cluster, wl, model, placement=first_fit_placement, comm_admission=comm, debug=True)
        finishes.append(sim.run().finish)
    np.testing.assert_array_equal(finishes[0], finishes[1])


@pytest.mark.parametrize("n", [1, 2])
def test_decide_hold_guarantee_is_a_refusal_while_the_server_stays_crowded(n: int) -> None:
    """SRSF(n)'s hold: refused with (s, n) means every state with >= n tasks on s refuses too."""
    sim = two_allreduce_sim(100.0, 300.0, SRSFn(n))
    sim.advance(until_s=0.0)
    sim.job_servers[0] = sim.job_servers[1] = (0, 1)
    for counts in ([n, 0], [n, n + 1], [n + 2, 0]):
        sim.comm_count[:] = counts
        admit, dec, inc, hold_server, hold_count = SRSFn(n).decide_hold(sim, 0)
        assert not admit and hold_server in dec and hold_count == n
        assert sim.comm_count[hold_server] >= hold_count
    sim.comm_count[:] = [n - 1, n - 1]
    assert SRSFn(n).decide_hold(sim, 0)[0] is True
