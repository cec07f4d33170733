"""A-SRPT (Algorithm 1, reconstructed) and its baselines: the virtual SRPT machine, the
communication-heavy delay, blocking vs work-conserving orders, engine invariants in debug mode."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ddl_gym.policies import make_policy
from ddl_gym.baselines.a_srpt.policy import ASRPT, VirtualSRPT
from ddl_gym.baselines.a_srpt.paper_baselines import PredictedOrderPolicy
from ddl_gym.scenarios import get_scenario
from ddl_gym.sim.engine import Simulator, run_policy
from ddl_gym.sim.model import ClusterSpec, ConfigError
from ddl_gym.sim.perf.pipeline import PipelineConfig, PipelineRateModel, StageProfile
from ddl_gym.workloads.asrpt import asrpt_sim_scenario
from tests.sim.test_asrpt_model import pipeline_workload

B_INTER, B_INTRA = 1.25e9, 3e11
ASRPT_FAMILY = ("a-srpt", "a-srpt-perfect", "a-srpt-tau0", "a-srpt-nonblocking", "spjf", "spwf",
                "wcs-duration", "wcs-workload", "wcs-subtime")


def data_parallel(k: int, param_bytes: float = 0.0, seconds: float = 1.0) -> PipelineConfig:
    """k replicas of one stage taking ``seconds`` per iteration; ``param_bytes`` > 0 makes it comm-heavy."""
    return PipelineConfig((StageProfile(seconds / 3, 2 * seconds / 3, 0.0, 0.0, param_bytes, k),))


def run(policy, cluster, workload, seed: int = 0):
    sim = Simulator(cluster, workload, PipelineRateModel(), debug=True)
    result = run_policy(sim, policy, np.random.default_rng(seed))
    return sim, result


# ----------------------------------------------------------------------------- virtual single machine
def test_virtual_srpt_spec_example():
    # Part F: (r, p~) = (0, 4), (1, 1), (2, 0) -> completion order 2, 3, 1 at times 2, 2, 5
    vm = VirtualSRPT()
    assert vm.advance(0.0) == []
    vm.add(1, 4.0, 0.0)
    assert vm.advance(1.0) == [] and vm.next_completion() == 4.0  # alone it would end at 4
    vm.add(2, 1.0, 1.0)  # preempts job 1 (remaining 3 > 1)
    assert vm.next_completion() == 2.0
    assert vm.advance(2.0) == [(2.0, 2)]
    assert vm.advance(5.0) == [(5.0, 1)] and len(vm) == 0


def test_asrpt_releases_jobs_in_virtual_completion_order():
    cluster = ClusterSpec.homogeneous(1, 1, inter_bandwidth=B_INTER, intra_bandwidth=B_INTRA)
    one = data_parallel(1)  # α̃_min = 1 s, G = 1: p~ = ñ
    wl = pipeline_workload([one] * 3, arrival=[0.0, 1.0, 2.0], iterations=[4, 1, 2], predicted=[4.0, 1.0, 0.0])
    policy = ASRPT()
    sim, result = run(policy, cluster, wl)
    assert policy.vm_completion == {1: 2.0, 2: 2.0, 0: 5.0}  # job 3 (size 0) after job 2 at t = 2
    # the cluster waits for the virtual machine: job 1 runs [2, 3), job 2 [3, 5), job 0 from its release at 5
    assert result.start.tolist() == [5.0, 2.0, 3.0] and result.finish.tolist() == [9.0, 3.0, 5.0]
    perfect = ASRPT(perfect=True)
    run(perfect, cluster, wl)
    assert perfect.vm_completion[2] == 4.0  # true sizes: job 2 has 2 iterations, preempted by nobody after t=2


def test_unknown_predictions_count_as_unseen():
    cluster = ClusterSpec.homogeneous(1, 2)
    wl = pipeline_workload([data_parallel(1)] * 2, iterations=[5, 5])  # predicted_iterations NaN
    policy = ASRPT()
    _, result = run(policy, cluster, wl)
    assert result.start.tolist() == [0.0, 0.0] and policy.vm_completion == {0: 0.0, 1: 0.0}


# ----------------------------------------------------------------------------- communication-heavy delay
def delay_world(job0_iterations: int = 15):
    """2 servers x 3 GPUs. Jobs 0, 1 (2 GPUs, not comm-heavy) leave one free GPU on each server; job 2
    (2 GPUs, 1 GB of parameters: comm-heavy) is released by the virtual machine at t = 11; job 3
    (1 GPU, unseen) arrives at 12."""
    cluster = ClusterSpec.homogeneous(2, 3, inter_bandwidth=B_INTER, intra_bandwidth=B_INTRA)
    heavy = data_parallel(2, param_bytes=1e9)
    wl = pipeline_workload([data_parallel(2), data_parallel(2), heavy, data_parallel(1)],
                           arrival=[0.0, 0.0, 1.0, 12.0], iterations=[job0_iterations, 100, 30, 5],
                           predicted=[0.0, 0.0, 30.0, 0.0])
    return cluster, wl


def test_comm_heavy_job_waits_for_a_consolidated_placement():
    cluster, wl = delay_world()
    policy = ASRPT(tau=1.0)
    sim, result = run(policy, cluster, wl)
    oracle = sim.bound
    assert policy.is_comm_heavy(2) and not policy.is_comm_heavy(0)
    p_tilde = 2 / 6 * 30 * oracle.alpha_min_tilde(2)
    assert policy.vm_completion[2] == pytest.approx(1.0 + p_tilde)
    assert policy.delay_start[2] == pytest.approx(1.0 + p_tilde)  # eligible (2 free GPUs) but spread: delayed
    assert result.start[2] == pytest.approx(15.0)  # job 0 ends at 15: server 0 then has 3 free GPUs
    assert result.n_servers[2] == 1 and sim.tau[2] == pytest.approx(oracle.alpha_min_tilde(2))
    assert result.start[3] == pytest.approx(15.0)  # delay_blocks: job 3 waited behind job 2


def test_delay_runs_out_after_tau_times_the_virtual_size():
    cluster, wl = delay_world(job0_iterations=40)  # no consolidated placement before t = 40
    policy = ASRPT(tau=0.2)
    sim, result = run(policy, cluster, wl)
    deadline = policy.delay_start[2] + 0.2 * policy.virtual_size(2)
    assert result.start[2] == pytest.approx(deadline) and result.n_servers[2] == 2
    assert sim.tau[2] / sim.bound.alpha_min_tilde(2) > 1.5  # started on the current (spread) mapping
    _, no_delay = run(ASRPT(tau=0.0), cluster, wl)
    assert no_delay.start[2] == pytest.approx(policy.vm_completion[2]) and no_delay.n_servers[2] == 2


def test_nonblocking_delay_lets_later_jobs_pass():
    cluster, wl = delay_world()
    _, blocking = run(ASRPT(tau=1.0, delay_blocks=True), cluster, wl)
    _, side = run(ASRPT(tau=1.0, delay_blocks=False), cluster, wl)
    assert blocking.start[3] == pytest.approx(15.0) and side.start[3] == pytest.approx(12.0)
    assert side.start[2] == pytest.approx(15.0)  # still waits for the consolidated placement


# ----------------------------------------------------------------------------- baselines
def order_world():
    """4 GPUs (2 x 2). Job 0 (2 GPUs, long) runs; job 1 (4 GPUs, predicted shortest) and job 2 (1 GPU)
    arrive at t = 1."""
    cluster = ClusterSpec.homogeneous(2, 2, inter_bandwidth=B_INTER, intra_bandwidth=B_INTRA)
    wl = pipeline_workload([data_parallel(2), data_parallel(4), data_parallel(1)], arrival=[0.0, 1.0, 1.0],
                           iterations=[50, 10, 30], predicted=[50.0, 1.0, 5.0])
    return cluster, wl


@pytest.mark.parametrize("name, job2_start", [("spjf", 60.0), ("spwf", 60.0), ("wcs-duration", 1.0),
                                               ("wcs-workload", 1.0), ("wcs-subtime", 1.0)])
def test_blocking_versus_work_conserving(name, job2_start):
    # SPJF/SPWF: job 1 heads the order and does not fit -> nothing starts until job 0 ends at 50;
    # WCS-*: job 2 fits next to job 0 and starts at once (backfilling); job 1 starts at 50 either way.
    cluster, wl = order_world()
    _, result = run(make_policy(name), cluster, wl)
    assert result.start[0] == 0.0 and result.start[1] == pytest.approx(50.0)
    assert result.start[2] == pytest.approx(job2_start)


def test_baseline_keys():
    cluster, wl = order_world()
    sim = Simulator(cluster, wl, PipelineRateModel())
    duration = PredictedOrderPolicy("wcs-duration")
    duration.reset(sim, np.random.default_rng(0))
    assert duration.key.tolist() == pytest.approx([50.0, 1.0, 5.0])  # ñ · α̃_min (α̃ = 1 s)
    workload = PredictedOrderPolicy("spwf")
    workload.reset(sim, np.random.default_rng(0))
    assert workload.key.tolist() == pytest.approx([100.0, 4.0, 5.0])  # × g_i
    perfect = PredictedOrderPolicy("spjf", perfect=True)
    perfect.reset(sim, np.random.default_rng(0))
    assert perfect.key.tolist() == pytest.approx([50.0, 10.0, 30.0])
    with pytest.raises(ConfigError, match="unknown A-SRPT baseline"):
        PredictedOrderPolicy("spxf")


# ----------------------------------------------------------------------------- wiring and invariants
def test_policies_refuse_scenarios_without_pipeline_jobs_naming_both():
    for name in ("a-srpt", "wcs-subtime"):
        with pytest.raises(ConfigError, match=rf"policy '{name}'.*scenario 'small'"):
            make_policy(name).check_scenario(get_scenario("small"))
        cluster, wl = get_scenario("small").episode(0)
        with pytest.raises(ConfigError, match=rf"policy '{name}'.*workload '{wl.name}'.*'rar'"):
            run_policy(Simulator(cluster, wl), make_policy(name))


@pytest.fixture(scope="module")
def tiny_scenario():
    return asrpt_sim_scenario(servers=4, num_jobs=60, trace_jobs=800, load=0.9, name="asrpt-tiny")


@pytest.mark.parametrize("name", ASRPT_FAMILY)
def test_family_runs_with_invariants_checked_and_is_deterministic(tiny_scenario, name):
    cluster, wl = tiny_scenario.episode(1)
    sim, first = run(make_policy(name), cluster, wl, seed=3)
    again = run_policy(Simulator(cluster, wl, tiny_scenario.model), make_policy(name), np.random.default_rng(3))
    assert np.all(np.isfinite(first.finish)) and sim.num_finished == wl.num_jobs
    assert np.array_equal(first.finish, again.finish) and np.array_equal(first.start, again.start)
    assert np.all(first.start >= wl.arrival)


def test_asrpt_env_schedules_pipeline_jobs_with_heavy_edge_rules():
    import gymnasium as gym
    from gymnasium.utils.env_checker import check_env

    import ddl_gym  # noqa: F401  (registers the env ids)

    env = gym.make("DDLCluster-ASRPT-v0").unwrapped
    assert env.placement_names == ("heavy_edge_consolidate", "heavy_edge_fragment")
    check_env(env, skip_render_check=True)
    obs, info = env.reset(seed=2)
    rng = np.random.default_rng(0)
    total = 0.0
    mapped = 0
    while True:
        obs, reward, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        total += reward
        # every job the env starts carries a Heavy-Edge stage mapping (not plain GPU ids)
        assert all(env.sim.allocation(j).stage_of is not None for j in env.sim.running)
        mapped += len(env.sim.running)
        if terminated or truncated:
            break
    assert terminated and info["metrics"]["jobs"] == 200 and mapped > 0
    assert total == pytest.approx(-info["metrics"]["total_jct_s"] / 3600.0)


@st.composite
def pipeline_worlds(draw):
    """Small random pipeline workloads on 2-3 servers of 4 GPUs (some comm-heavy, some unseen)."""
    configs = []
    n = draw(st.integers(2, 7))
    for _ in range(n):
        stages = draw(st.integers(1, 3))
        k = [draw(st.integers(1, 2)) for _ in range(stages)]
        act = [draw(st.sampled_from([0.0, 1e6, 5e7])) for _ in range(stages - 1)]
        configs.append(PipelineConfig(tuple(
            StageProfile(0.1, 0.2, act[s - 1] / k[s] if s else 0.0, act[s] / k[s] if s < stages - 1 else 0.0,
                         draw(st.sampled_from([0.0, 1e8, 1e9])), k[s]) for s in range(stages))))
    arrival = sorted(draw(st.lists(st.floats(0, 50), min_size=n, max_size=n)))
    iterations = draw(st.lists(st.integers(1, 60), min_size=n, max_size=n))
    predicted = draw(st.lists(st.sampled_from([0.0, 5.0, 40.0, 200.0]), min_size=n, max_size=n))
    servers = draw(st.integers(2, 3))
    cluster = ClusterSpec.homogeneous(servers, 4, inter_bandwidth=B_INTER, intra_bandwidth=B_INTRA)
    return cluster, pipeline_workload(configs, arrival=arrival, iterations=iterations, predicted=predicted)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(world=pipeline_worlds(), tau=st.sampled_from([0.0, 1.0, 3.0]), blocks=st.booleans())
def test_fuzzed_family_keeps_engine_and_virtual_machine_invariants(world, tau, blocks):
    cluster, wl = world
    policy = ASRPT(tau=tau, delay_blocks=blocks)
    sim, result = run(policy, cluster, wl)  # debug=True: ledger, gang, conservation checked at every event
    assert sim.num_finished == wl.num_jobs
    vm = np.array([policy.vm_completion[j] for j in range(wl.num_jobs)])
    assert np.all(result.start >= vm - 1e-9)  # nobody starts before it completes on the virtual machine
    assert np.all(vm >= wl.arrival - 1e-9)
    for name in ("spjf", "wcs-subtime"):
        _, other = run(make_policy(name), cluster, wl)
        assert np.all(other.start >= wl.arrival) and np.all(np.isfinite(other.finish))
