"""Ada-SRSF policies (Wang et al. 2020): LWF-κ (Alg. 1), AdaDUAL (Alg. 2), SRSF(n), the policy objects.

Placement fixtures build a state with known GPU workloads ``L_g`` (= the resident jobs' remaining
service, here F·G·t_c since no task has finished at t = 0) and then ask a rule where a probe job
would go.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from ddl_gym.baselines.ada_srsf.policy import (
    AdaDual,
    AdaSRSFPolicy,
    SRSFn,
    adadual_accepts,
    adadual_threshold,
    first_fit_placement,
    least_workload_placement,
    lwf_placement,
    make_ada_srsf_policy,
    make_placement,
    random_placement,
)
from ddl_gym.policies import make_policy
from ddl_gym.scenarios import Scenario, get_scenario
from ddl_gym.sim.model import ClusterSpec, ConfigError, ModelProfile, Workload
from ddl_gym.sim.perf import AllReduceContentionModel
from ddl_gym.sim.tasklevel import PurePythonTaskLevelSimulator, TaskLevelSimulator
from ddl_gym.workloads import ada_srsf_workload
from ddl_gym.report_paths import reproduction_file

B, ETA = 8.56e-10, 2.35e-10
MODEL = AllReduceContentionModel(a=0.0, b=B, eta=ETA)
TC = 0.001  # 1 ms per iteration: L_g in ms equals F·G


def profile(name: str, message_mb: float = 100.0, mem: float = 1000.0, tc: float = TC) -> ModelProfile:
    return ModelProfile(name, gradient_bytes=message_mb * 1e6, forward_s=0.4 * tc, backward_s=0.6 * tc,
                        batch_size=16, gpu_memory_mb=mem)


def scripted(assignment: dict[int, list[int]]):
    def rule(sim: TaskLevelSimulator, job: int, rng: np.random.Generator):
        return assignment.get(job)

    return rule


# ----------------------------------------------------------------------------- LWF-κ, LS, FF, RAND
@pytest.fixture
def loaded_sim() -> TaskLevelSimulator:
    """3 servers x 2 GPUs with L = [100, 0, 1, 50, 30, 30] (ms) and a queued probe job (index 5)."""
    cluster = ClusterSpec.homogeneous(3, 2, gpu_memory_mb=16384)
    # jobs 0..4 are one-GPU jobs with F = their load; job 5 is the probe (never placed by the script)
    loads = {0: 100, 2: 1, 3: 50, 4: 30, 5: 30}
    gpus_of = list(loads)
    iterations = [loads[g] for g in gpus_of] + [10]
    wl = Workload.from_jobs(arrival=[0.0] * 6, gpus=[1] * 5 + [2], iterations=iterations,
                            models=[profile(f"j{i}") for i in range(6)])
    sim = TaskLevelSimulator(cluster, wl, MODEL, placement=scripted({i: [g] for i, g in enumerate(gpus_of)}),
                             comm_admission=SRSFn(1))
    sim.advance(until_s=0.0)
    assert sim.gpu_loads() == [v * 1_000_000 for v in (100, 0, 1, 50, 30, 30)]
    return sim


def probe(sim: TaskLevelSimulator, rule, gpus: int) -> list[int]:
    sim.G[5] = gpus  # the probe job's demand (the rule reads sim.G)
    return list(rule(sim, 5, np.random.default_rng(0)))


def test_lwf_small_job_takes_least_loaded_gpus_anywhere(loaded_sim: TaskLevelSimulator) -> None:
    assert probe(loaded_sim, lwf_placement(2), 2) == [1, 2]  # G <= κ: like LS, across servers
    assert probe(loaded_sim, least_workload_placement, 2) == [1, 2]


def test_lwf_large_job_goes_server_by_server(loaded_sim: TaskLevelSimulator) -> None:
    # G > κ: servers by L_S = (100, 51, 60): server 1 first (GPUs by L_g: 2, 3), then server 2.
    assert probe(loaded_sim, lwf_placement(1), 2) == [2, 3]
    assert probe(loaded_sim, lwf_placement(1), 3) == [2, 3, 4]
    assert probe(loaded_sim, lwf_placement(2), 3) == [2, 3, 4]


def test_lwf_skips_gpus_without_memory(loaded_sim: TaskLevelSimulator) -> None:
    loaded_sim.gpu_mem_free[2] = 100.0  # GPU 2 cannot host another worker
    assert probe(loaded_sim, lwf_placement(2), 2) == [1, 4]
    assert probe(loaded_sim, lwf_placement(1), 2) == [3, 4]  # server 1 has one fitting GPU; spill to server 2
    loaded_sim.gpu_mem_free[:] = [100.0] * 5 + [16384.0]
    assert lwf_placement(1)(loaded_sim, 5, np.random.default_rng(0)) is None  # line 24: not enough GPUs


def test_ff_and_rand(loaded_sim: TaskLevelSimulator) -> None:
    loaded_sim.gpu_mem_free[0] = 0.0
    assert probe(loaded_sim, first_fit_placement, 3) == [1, 2, 3]
    loaded_sim.G[5] = 2
    rng_picks = {tuple(random_placement(loaded_sim, 5, np.random.default_rng(s))) for s in range(40)}
    assert all(0 not in p and len(set(p)) == 2 for p in rng_picks)  # only GPUs that fit
    assert len(rng_picks) > 3  # genuinely random


def test_make_placement_names() -> None:
    assert make_placement("lwf4").__name__ == "lwf4"
    assert make_placement("LS") is least_workload_placement
    with pytest.raises(ConfigError, match="placement"):
        make_placement("lwf0")
    with pytest.raises(ConfigError, match="placement"):
        make_placement("best")


# ----------------------------------------------------------------------------- AdaDUAL
def test_adadual_threshold_both_sides() -> None:
    thr = adadual_threshold(B, ETA)
    assert thr == pytest.approx(0.856 / (2 * (0.856 + 0.235)))
    assert adadual_accepts(0.99 * thr * 100, 100, B, ETA)
    assert not adadual_accepts(1.01 * thr * 100, 100, B, ETA)
    assert not adadual_accepts(thr * 100, 100, B, ETA)  # strict inequality (eq. 13)
    assert adadual_threshold(B, 0.0) == pytest.approx(0.5)
    # Theorem 2's derivation: accepting is better exactly when 2(b+η)M1 - bM2 < 0.
    for m1 in np.linspace(1, 100, 37):
        c2a = ((3 * B + 2 * ETA) * m1 + B * 100) / 2
        c2b = (B * m1 + 2 * B * 100) / 2
        assert adadual_accepts(m1, 100, B, ETA) == (c2a < c2b)


def two_job_sim(m_old: float, m_new: float, *, defect: bool = False) -> TaskLevelSimulator:
    """Job 0 (m_old MB) starts its all-reduce at t_c; job 1 (m_new MB) is ready at the same time."""
    cluster = ClusterSpec.homogeneous(2, 2)
    wl = Workload.from_jobs(arrival=[0.0, 0.0], gpus=[2, 2], iterations=[1, 1],
                            models=[profile("old", m_old), profile("new", m_new)])
    return TaskLevelSimulator(cluster, wl, MODEL, placement=scripted({0: [0, 2], 1: [1, 3]}),
                              comm_admission=AdaDual(B, ETA, replicate_probe_defect=defect), debug=True,
                              probe_defect=defect)


def test_adadual_rejects_then_the_probe_has_no_side_effect() -> None:
    sim = two_job_sim(500.0, 300.0)  # 300/500 > 0.392: job 1 waits
    sim.advance(until_s=TC + 0.05)
    assert 1 in sim.comm_waiting and list(sim.comm_running) == [0]
    before = (sim.comm_remaining_bytes(0), sim.comm_end[0], sim.comm_bank_rem[0], sim.comm_bank_t[0])
    rule = AdaDual(B, ETA)
    for _ in range(5):
        assert rule(sim, 1) is False
    after = (sim.comm_remaining_bytes(0), sim.comm_end[0], sim.comm_bank_rem[0], sim.comm_bank_t[0])
    assert after == before
    assert before[0] == pytest.approx(500e6 - 0.05 / B)
    res = sim.run() if sim.advance() else None
    assert res is not None
    assert res.finish[0] == pytest.approx(TC + B * 500e6, abs=1e-8)  # undisturbed by the checks
    assert res.finish[1] == pytest.approx(TC + B * 800e6, abs=1e-8)


def test_adadual_admits_small_task_next_to_a_large_one() -> None:
    res = two_job_sim(500.0, 100.0).run()  # 100/500 < 0.392: both run, k = 2
    assert res.finish[1] == pytest.approx(TC + (2 * B + ETA) * 100e6, abs=1e-8)


def test_replicated_probe_defect_speeds_up_the_probed_transfer() -> None:
    """The authors' simulator: while job 1 waits and probes, job 0's transfer runs twice as fast."""
    res = two_job_sim(500.0, 300.0, defect=True).run()
    assert res.finish[0] == pytest.approx(TC + B * 500e6 / 2, abs=1e-8)
    with pytest.raises(ConfigError, match="only applies to AdaDUAL"):
        make_ada_srsf_policy("lwf1", "srsf1", replicate_probe_defect=True)


def test_adadual_two_running_tasks_means_wait() -> None:
    cluster = ClusterSpec.homogeneous(2, 3)
    wl = Workload.from_jobs(arrival=[0.0] * 3, gpus=[2] * 3, iterations=[1] * 3,
                            models=[profile("a", 500.0), profile("b", 100.0), profile("c", 1.0)])
    sim = TaskLevelSimulator(cluster, wl, MODEL, placement=scripted({0: [0, 3], 1: [1, 4], 2: [2, 5]}),
                             comm_admission=SRSFn(2), debug=True)
    sim.advance(until_s=TC)
    assert sorted(sim.comm_running) == [0, 1]
    assert AdaDual(B, ETA).decide(sim, 2)[0] is False  # max_task = 2 (lines 21-23), however small M_new


# ----------------------------------------------------------------------------- SRSF(n)
@pytest.mark.parametrize("n", [1, 2, 3])
def test_srsf_n_caps_concurrent_allreduces_per_server(n: int) -> None:
    rng = np.random.default_rng(5)
    cluster = ClusterSpec.homogeneous(4, 4)
    wl = ada_srsf_workload(rng, gpu_mix={2: 6, 4: 6, 8: 4}, iterations=(5, 30), window_s=3)
    # The plain-Python build: the test wraps an engine method (a compiled build's are read-only).
    sim = PurePythonTaskLevelSimulator(cluster, wl, MODEL, placement=random_placement, comm_admission=SRSFn(n),
                                       rng=np.random.default_rng(1), debug=True)
    peak = [0]
    start = sim._start_comm

    def watched(job: int, t: int) -> None:
        start(job, t)
        peak[0] = max(peak[0], max(sim.comm_count))
        assert max(sim.comm_count[s] for s in sim.job_servers[job]) <= n

    sim._start_comm = watched
    sim.run()
    assert peak[0] == n  # the cap is reached (the instance is contended) but never exceeded


# ----------------------------------------------------------------------------- policy objects
def small_scenario(**options) -> Scenario:
    cluster = ClusterSpec.homogeneous(4, 4)
    return Scenario(
        name="ada-srsf-tiny", cluster=cluster,
        workload=lambda rng, c: ada_srsf_workload(rng, gpu_mix={1: 8, 2: 3, 4: 3, 8: 2}, iterations=(10, 40),
                                                   window_s=10),
        model=MODEL, engine="task", options=options,
    )


def test_registry_names_and_factory() -> None:
    policy = make_policy("ada-srsf")
    assert isinstance(policy, AdaSRSFPolicy) and policy.engine == "task"
    assert policy.name == "lwf1+ada-srsf"
    assert make_policy("ff+srsf1").name == "ff+srsf1"
    assert make_policy("rand+ada-srsf").placement is random_placement
    assert make_ada_srsf_policy("lwf8", "srsf3").name == "lwf8+srsf3"
    assert make_ada_srsf_policy(replicate_probe_defect=True).name == "lwf1+ada-srsf+probe-defect"
    with pytest.raises(ConfigError, match="communication rule"):
        make_ada_srsf_policy("lwf1", "fifo")


def test_run_episode_via_harness_is_deterministic() -> None:
    from ddl_gym.harness import simulate

    scenario = small_scenario()
    a = simulate(make_policy("rand+ada-srsf"), scenario, seed=3).result
    b = simulate(make_policy("rand+ada-srsf"), scenario, seed=3).result
    np.testing.assert_array_equal(a.finish, b.finish)
    assert a.completed and a.policy == "rand+ada-srsf"
    summary = a.summary()
    assert 0 < summary["gpu_compute_util"] <= 1


def test_gpu_sharing_option_from_scenario() -> None:
    scenario = small_scenario(gpu_sharing=False)
    cluster, workload = scenario.episode(0)
    policy = make_ada_srsf_policy("lwf1", "ada", debug=True)
    policy.run_episode(scenario, cluster, workload, np.random.default_rng(0))
    assert policy.last_simulator is not None and not policy.last_simulator.gpu_sharing
    shared = make_ada_srsf_policy("lwf1", "ada")
    shared.run_episode(small_scenario(), cluster, workload, np.random.default_rng(0))
    assert shared.last_simulator.gpu_sharing


def test_policy_needs_the_allreduce_model() -> None:
    scenario = get_scenario("small")  # RAR model, job-level engine
    cluster, workload = scenario.episode(0)
    with pytest.raises(ConfigError, match="all-reduce contention model"):
        make_policy("ada-srsf").run_episode(scenario, cluster, workload, np.random.default_rng(0))


def test_ada_srsf_scenario_registered_for_the_task_engine() -> None:
    scenario = get_scenario("ada-srsf")
    assert scenario.engine == "task" and isinstance(scenario.model, AllReduceContentionModel)
    assert scenario.model.b == pytest.approx(8.56e-10) and scenario.model.eta == pytest.approx(2.35e-10)
    cluster, workload = scenario.episode(0)
    assert cluster.num_gpus == 64 and cluster.gpu_memory_mb == 16384 and len(workload) == 160
    assert math.isclose(cluster.inter_bandwidth, 1.25e9)


def test_reproduction_options_reach_the_engine() -> None:
    """RunSpec's named options (GPU sharing, the authors' job scale) change the simulated world."""
    from ddl_gym.reproduce.ada_srsf import AUTHORS_TIME_FACTOR, RunSpec, _scenario, authors_scale_workload

    exclusive = _scenario(RunSpec("lwf1", "ada", gpu_sharing=False))
    assert exclusive.options["gpu_sharing"] is False and _scenario(RunSpec("lwf1", "ada")).options["gpu_sharing"]
    cluster, _ = get_scenario("ada-srsf").episode(0)
    w = authors_scale_workload(np.random.default_rng(4), cluster)
    assert w.iterations.min() >= 10 and w.iterations.max() <= 60 and len(w) == 160  # the authors' final code
    assert w.arrival.max() <= 12.0 and np.allclose(w.arrival * AUTHORS_TIME_FACTOR, np.round(w.arrival * 1000))
    assert RunSpec("lwf1", "ada", gpu_sharing=False, scale="authors").key == "lwf1/ada/eta0.235/exclusive/authors-scale"


@pytest.mark.slow
def test_quick_claims_match_the_committed_table(tmp_path) -> None:
    """Regenerate the quick claims (authors' job scale, 2 seeds); they must equal docs/reproductions/ada_srsf/claims_quick.md
    (regenerate with ``ddl-gym reproduce ada-srsf --quick --jobs 1 --claims docs/reproductions/ada_srsf/claims_quick.md``)."""
    from pathlib import Path

    from ddl_gym.reproduce.ada_srsf import main

    assert main(["--quick", "--out", str(tmp_path), "--jobs", "1", "--no-plots"]) == 0
    committed = reproduction_file("ada_srsf", "claims_quick.md")
    assert (tmp_path / "claims.md").read_text() == committed.read_text()
    report = (tmp_path / "report.md").read_text()
    for heading in ("Table IV", "Table V", "Exclusive GPUs", "κ study", "Probe defect", "## Timing"):
        assert heading in report
    episodes = (tmp_path / "episodes.csv").read_text().splitlines()
    assert len(episodes) == 1 + 28 * 2  # header + distinct runs of the quick setting (16/32 GB) x two seeds
