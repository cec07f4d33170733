"""SMD's interval mode end to end: the engine and the static evaluator agree bit for bit, every policy
against the exact optimum, the baselines' semantics (hand-computed), scenario registration, scenario
files with PS jobs and resource pools (one-line errors), and ``ddl-gym eval`` / ``list``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ddl_gym.baselines.smd.interval_optimum import IntervalOptimum
from ddl_gym.baselines.smd.optimus import OptimusOfficialPolicy, greedy_allocation
from ddl_gym.baselines.smd.interval import IntervalInstance, evaluate_interval
from ddl_gym.policies import list_policies, make_policy
from ddl_gym.scenarios import Scenario, get_scenario, load_scenario_file
from ddl_gym.sim.engine import RUNNING, Simulator, run_policy
from ddl_gym.sim.model import ClusterSpec, ConfigError, Workload
from ddl_gym.sim.perf.ps import SMDSpeedModel, exact_inner_optimum
from ddl_gym.workloads.smd_jobs import (
    PS_PLACEHOLDER_MODEL, draw_smd_jobs, instance_cluster, pooled_cluster, smd_scenario, smd_time_scale, smd_workload,
)
from tests.sim.test_smd_model import worked_profile

SMD_POLICIES = ("smd", "smd-fc", "smd-literal", "smd-opt", "esw", "optimus", "optimus-time", "optimus-official")


def small_episode(mode: str, seed: int = 0, jobs: int = 10, units: float = 1.0):
    scenario = smd_scenario(mode, units=units, num_jobs=jobs)
    cluster, workload = scenario.episode(seed)
    return scenario, cluster, workload


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_engine_run_and_static_evaluator_agree_bit_for_bit(mode):
    scenario, cluster, workload = small_episode(mode, seed=3)
    instance = IntervalInstance.from_episode(cluster, workload)
    for name in SMD_POLICIES:
        static = evaluate_interval(make_policy(name), instance, 3)
        result = make_policy(name).run_episode(scenario, cluster, workload, np.random.default_rng(3))
        admitted = ~result.rejected
        assert np.array_equal(admitted, static.admit), name
        assert np.array_equal(result.finish[admitted], static.completion[admitted]), name  # exact, not approx
        assert np.array_equal(result.utilities(), static.utilities), name
        summary = result.summary()
        assert summary["total_utility"] == float(np.nansum(static.utilities))
        assert summary["rejected_jobs"] == int((~static.admit).sum())


def test_every_policy_is_feasible_and_at_most_the_exact_optimum():
    for mode in ("sync", "async"):
        for seed in range(2):
            _, cluster, workload = small_episode(mode, seed, jobs=12)
            instance = IntervalInstance.from_episode(cluster, workload)
            limits, capacity = instance.limits(), np.asarray(instance.capacity)
            opt = evaluate_interval(IntervalOptimum(), instance)
            assert opt.admit.any()
            for name in SMD_POLICIES:
                out = evaluate_interval(make_policy(name), instance, seed)
                if name != "optimus-official":  # it does not reserve limits (2): a different, looser problem
                    assert out.total_utility <= opt.total_utility + 1e-9, name
                for i in np.flatnonzero(out.admit):  # (3)/(7), and completion >= the exact inner optimum
                    prof, e = instance.profiles[i], instance.iterations[i]
                    assert bool(prof.fits_limit(out.workers[i], out.ps[i])), name
                    assert out.completion[i] >= exact_inner_optimum(prof, e).completion_s, name
                if name != "optimus-official":  # (2): admission reserves the limits
                    assert np.all(limits[out.admit].sum(axis=0) <= capacity * (1 + 1e-9)), name
                used = instance.usage(out.workers, out.ps)[out.admit].sum(axis=0)
                assert np.all(used <= capacity * (1 + 1e-9)), name


def test_smd_close_to_opt_when_capacity_never_binds():
    # Yu Fig. 11's setting: 1000 instances; OPT = Σ_i max μ_i, and SMD's loss comes only from Alg. 1 + 2.
    profiles, iterations = draw_smd_jobs(np.random.default_rng(4), 10, "async", time_scale=smd_time_scale("async"))
    workload = smd_workload(profiles, iterations)
    instance = IntervalInstance.from_episode(instance_cluster(1000), workload)
    opt = evaluate_interval(IntervalOptimum(), instance)
    smd = evaluate_interval(make_policy("smd"), instance, 0)
    u_star = [p.utility(exact_inner_optimum(p, e).completion_s) if p.fits_limit(1, 1) else 0.0
              for p, e in zip(profiles, iterations)]
    assert opt.total_utility == pytest.approx(sum(u_star), rel=1e-12)
    assert 0.9 * opt.total_utility <= smd.total_utility <= opt.total_utility + 1e-9


def test_esw_takes_the_largest_one_to_one_allocation():
    instance = IntervalInstance((worked_profile("sync"),), (100,), (10.0, 100.0, 100.0, 100.0), ("gpu", "cpu", "mem", "storage"))
    out = evaluate_interval(make_policy("esw"), instance)
    assert (out.workers[0], out.ps[0]) == (2, 2)  # pairs (1,6,12,10) vs limit (4,36,60,20): storage allows 2
    assert out.utilities[0] == worked_profile("sync").utility(worked_profile("sync").completion_time(100, 2, 2))


def test_optimus_stops_in_the_flat_sigmoid_tail_but_optimus_time_does_not():
    flat = worked_profile("async", time_scale=1e-3, limit=(40, 360, 600, 200))  # π ≈ 1e5: μ == 0 exactly
    assert greedy_allocation(flat, 100, "utility") == (1, 1, 0)
    w, p, steps = greedy_allocation(flat, 100, "time")
    assert steps > 0 and flat.completion_time(100, w, p) < flat.completion_time(100, 1, 1)
    # optimus-time climbs while the time drops and the limit allows, so it ends at a local optimum
    assert flat.completion_time(100, w + 1, p) >= flat.completion_time(100, w, p) or not flat.fits_limit(w + 1, p)


def test_optimus_official_queue_stops_at_the_first_failure():
    # Two identical-speed jobs (β1 = 0.01: workers pay off); job B's PS is 5x cheaper. Pool: 3 GPUs.
    # (1) both get (1, 1): 1 GPU left. (2)-(3) queue (time gain / dominant share; worker share 1/3):
    #   B's PS (7.5/0.01 = 750) > A's worker (143/(1/3) = 429): B -> (1, 2);
    #   B's worker (151/(1/3) = 453) > A's worker 429: B -> (2, 2), the last GPU;
    #   B's PS (4.83/0.01 = 483) > 429: B -> (2, 3);
    #   A's worker (429) tops B's PS (217) but needs a GPU: the first failure ends the loop (B's PS would fit).
    big = (40, 360, 600, 200)
    a = worked_profile("sync", beta1=0.01, ps_demand=(0, 2, 4, 5), limit=big)
    b = worked_profile("sync", beta1=0.01, ps_demand=(0, 1, 1, 1), limit=big)
    instance = IntervalInstance((a, b), (100, 100), (3.0, 100.0, 100.0, 100.0), ("gpu", "cpu", "mem", "storage"))
    plan = OptimusOfficialPolicy().plan(instance, np.random.default_rng(0))
    assert plan.admit.tolist() == [True, True]
    assert plan.workers.tolist() == [1, 2] and plan.ps.tolist() == [1, 3] and plan.info["queue_steps"] == 3


def test_later_arrivals_plan_against_the_capacity_left_by_reserved_limits():
    prof = worked_profile("sync", time_scale=200.0)  # ESW: 927 s, π = 4.6, μ ≈ 50
    wl = Workload.from_jobs(arrival=[0.0, 5.0], gpus=[1, 1], iterations=[100, 100], models=[PS_PLACEHOLDER_MODEL] * 2,
                            arch=["ps"] * 2, profiles=[prof, worked_profile("sync", time_scale=200.0, gamma=(60.0, 5.0, 8.0))])
    cluster = pooled_cluster(1.0, {"gpu": 6, "cpu": 40, "mem": 100, "storage": 30})  # one limit fits, not two
    scenario = Scenario(name="two-batches", cluster=cluster, workload=lambda rng, c: wl, model=SMDSpeedModel())
    result = make_policy("esw").run_episode(scenario, cluster, wl, np.random.default_rng(0))
    # Job 0 uses 2 GPUs of 6, but it reserved its limit of 4 (eq. 2), so job 1 (limit 4) cannot be admitted.
    assert result.rejected.tolist() == [False, True]


def test_policy_on_a_scenario_without_ps_jobs_names_policy_and_scenario():
    scenario = get_scenario("small")
    cluster, workload = scenario.episode(0)
    for name in ("smd", "esw", "optimus-official"):
        with pytest.raises(ConfigError, match=rf"policy '{name}'.*scenario 'small' has allreduce jobs"):
            make_policy(name).run_episode(scenario, cluster, workload, np.random.default_rng(0))
    sim = Simulator(cluster, workload)
    with pytest.raises(ConfigError, match="policy 'smd'.*allreduce"):
        run_policy(sim, make_policy("smd"))
    _, _, smd_jobs = small_episode("sync", jobs=2)
    servers = ClusterSpec(gpus_per_server=(4, 4), resources=("gpu", "cpu", "mem", "storage"),
                          capacity=((4, 100, 100, 100),) * 2)
    with pytest.raises(ConfigError, match=r"policy 'esw' plans on a pooled cluster.*has 2 servers"):
        make_policy("esw").run_episode(Scenario("two-servers", servers, lambda r, c: smd_jobs, SMDSpeedModel()),
                                       servers, smd_jobs, np.random.default_rng(0))


def test_scenarios_and_policies_are_registered():
    for mode in ("sync", "async"):
        scenario = get_scenario(f"smd-{mode}")
        cluster, workload = scenario.episode(0)
        assert workload.num_jobs == 50 and cluster.resources == ("gpu", "cpu", "mem", "storage")
        assert cluster.capacity_matrix().tolist() == [[600, 3400, 1400, 1200]]
        assert {workload.job_profile(j).mode for j in range(50)} == {mode}
        assert workload.job_profile(0).time_scale == smd_time_scale(mode)
    assert set(SMD_POLICIES) <= set(list_policies())


def test_generator_prefix_property_ranges_and_time_scale_factor():
    a, ea = draw_smd_jobs(np.random.default_rng(8), 5, "sync")
    b, eb = draw_smd_jobs(np.random.default_rng(8), 12, "sync")
    assert a == b[:5] and ea == eb[:5]
    assert all(50 <= e <= 200 for e in eb)
    assert all(3 <= p.beta1 <= 4 and 0 <= p.beta2 <= 0.01 and 5 * 1.25e8 <= p.bandwidth <= 20 * 1.25e8 for p in b)
    assert all(p.global_batch % p.mini_batch == 0 and 1 <= p.global_batch / p.mini_batch <= 100 for p in b)
    assert all(p.limit[0] % 4 == 0 and 1 <= p.limit[0] / 4 <= 20 for p in b)  # θ ∈ [1, 20] × 4 GPUs
    base = smd_scenario("async", num_jobs=4).episode(1)[1]
    doubled = smd_scenario("async", num_jobs=4, time_scale_factor=2.0).episode(1)[1]
    for j in range(4):
        p, q = base.job_profile(j), doubled.job_profile(j)
        assert q.time_scale == 2 * p.time_scale and q.with_time_scale(p.time_scale) == p


# ----------------------------------------------------------------------------- scenario files
JOB = """
[[workload.jobs]]
iterations = 100
mode = "sync"
global_batch = 320
mini_batch = 32
gradient_mb = 100
bandwidth_gbps = 10
t_f = 0.01
t_b = 0.5
alpha = 0.5
beta1 = 3.5
beta2 = 0.005
worker = { gpu = 1, cpu = 4, mem = 8, storage = 5 }
ps = { cpu = 2, mem = 4, storage = 5 }
limit = { gpu = 4, cpu = 36, mem = 60, storage = 20 }
utility = { gamma1 = 50, gamma2 = 5, gamma3 = 8 }
time_scale = 200.0
"""

HEADER = """
name = "ps-file"
[cluster]
pool = { gpu = 8, cpu = 100, mem = 200, storage = 60 }
[model]
name = "smd-ps"
[workload]
kind = "ps-jobs"
"""


def test_ps_jobs_scenario_file_runs_with_hand_checked_numbers(tmp_path: Path):
    path = tmp_path / "ps.toml"
    path.write_text(HEADER + JOB + JOB.replace("gamma1 = 50", "gamma1 = 80") + JOB.replace("iterations = 100", "iterations = 50"))
    scenario = load_scenario_file(path)
    cluster, workload = scenario.episode(0)
    assert workload.num_jobs == 3 and workload.job_profile(0) == worked_profile("sync", time_scale=200.0)
    out = evaluate_interval(make_policy("esw"), IntervalInstance.from_episode(cluster, workload))
    # ESW: (2, 2) each, 927 s for E = 100 (π = 4.6), 463.5 s for E = 50 (π = 2.3): utilities ≈ 50, 80, 50 with
    # job 2 closer to saturation than job 0. Limits (4, 36, 60, 20) each; the pool (8 GPUs, 100 CPUs) fits two.
    assert out.admit.tolist() == [False, True, True]
    assert out.completion[1] == worked_profile("sync").completion_time(100, 2, 2) == pytest.approx(927.0)
    assert out.completion[2] == pytest.approx(463.5) and out.utilities[2] > workload.job_profile(0).utility(927.0)


def test_smd_generator_scenario_file(tmp_path: Path):
    path = tmp_path / "gen.toml"
    path.write_text('name = "g"\n[cluster]\nunits = 2\n[workload]\nkind = "smd"\nmode = "async"\nnum_jobs = 6\n'
                    'time_scale = 500.0\n')
    scenario = load_scenario_file(path)
    cluster, workload = scenario.episode(0)
    assert cluster.capacity_matrix().tolist() == [[1200, 6800, 2800, 2400]]
    assert workload.num_jobs == 6 and workload.job_profile(0).time_scale == 500.0


@pytest.mark.parametrize("body, message", [
    (HEADER + JOB.replace("beta2 = 0.005", "beta2 = 0.005\nspeed = 3"), r"workload\.jobs\[0\]\.speed: unknown key"),
    (HEADER + JOB.replace("cpu = 4,", 'cpu = "four",'), r"workload\.jobs\[0\]\.worker\.cpu: must be a number"),
    (HEADER + JOB.replace("storage = 5 }\nps", "disk = 5 }\nps"), r"jobs\[0\]\.worker\.disk: unknown resource"),
    (HEADER + JOB.replace('utility = { gamma1 = 50, gamma2 = 5, gamma3 = 8 }', ""), r"jobs\[0\]\.utility: must be a table"),
    (HEADER + JOB.replace('mode = "sync"', 'mode = "both"'), r"jobs\[0\]\.mode: must be one of"),
    (HEADER + JOB.replace("gpu = 1, cpu = 4", "gpu = 1.5, cpu = 4"), r"jobs\[0\]\.worker\.gpu: must be a whole number"),
    (HEADER.replace("pool = { gpu = 8,", "pool = { disk = 8,") + JOB, r"cluster\.pool: must be a table of capacities"),
    (HEADER.replace("pool = { gpu = 8,", "units = 2\npool = { gpu = 8,") + JOB, r"cluster: give exactly one of"),
    (HEADER.replace('kind = "ps-jobs"', 'kind = "ps-jobs"\nextra = 1') + JOB, r"workload\.extra: unknown key"),
    (HEADER + JOB + "[[workload.jobs]]\niterations = 0\n", r"jobs\[1\]\.iterations: must be > 0"),
    (HEADER + "[[workload.jobs\n", r"not valid TOML.*line"),
    (HEADER.replace('name = "smd-ps"', 'name = "rar"') + JOB, r"model\.name: PS jobs on a pool run on the 'smd-ps'"),
])
def test_malformed_ps_scenario_files_give_one_line_errors(tmp_path: Path, body: str, message: str):
    path = tmp_path / "bad.toml"
    path.write_text(body)
    with pytest.raises(ConfigError, match=message) as info:
        load_scenario_file(path)
    assert "\n" not in str(info.value) and str(path) in str(info.value)


def test_cli_eval_writes_utility_rejection_and_use_ratio_columns(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    from ddl_gym.cli import main

    path = tmp_path / "ps.toml"
    path.write_text(HEADER + JOB + JOB.replace("gamma1 = 50", "gamma1 = 80") + JOB.replace("iterations = 100", "iterations = 50"))
    out = tmp_path / "out"
    assert main(["eval", "--scenario", str(path), "--policies", "smd,esw,smd-opt", "--seeds", "1", "--out", str(out),
                 "--workers", "1", "--no-progress"]) == 0
    summary = pd.read_csv(out / "summary.csv").set_index("policy")
    assert {"total_utility", "rejected_jobs", "resource_use_ratio_gpu", "resource_use_ratio_mem"} <= set(summary.columns)
    assert summary["rejected_jobs"].tolist() == [1, 1, 1]
    assert summary.loc["smd-opt", "total_utility"] >= summary.loc["esw", "total_utility"] - 1e-9
    # ESW's (2, 2) of jobs 1 and 2: GPUs 2 + 2 of limits 4 + 4; storage 20 + 20 of 20 + 20.
    assert summary.loc["esw", "resource_use_ratio_gpu"] == pytest.approx(0.5)
    assert summary.loc["esw", "resource_use_ratio_storage"] == pytest.approx(1.0)
    capsys.readouterr()
    assert main(["eval", "--scenario", "small", "--policies", "smd", "--seeds", "1", "--workers", "1",
                 "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "policy 'smd'" in err and "scenario 'small'" in err and "Traceback" not in err
    assert main(["list"]) == 0
    listing = capsys.readouterr().out
    assert "smd-sync" in listing and "optimus-official" in listing


def test_interval_runs_keep_the_engine_invariants():
    scenario, cluster, workload = small_episode("sync", jobs=6)
    for name in ("smd-opt", "optimus-official"):
        sim = Simulator(cluster, workload, scenario.model, debug=True)  # invariants checked after every action
        result = run_policy(sim, make_policy(name))
        assert result.completed and not any(s == RUNNING for s in sim.state)
        assert np.allclose(sim.used, 0.0, atol=1e-9)
