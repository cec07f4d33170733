"""Tests for the SJF-BCO planner (Alg. 1–3), its §7.2 baselines and plan execution in the simulator."""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np
import pytest

from ddl_gym.policies import make_policy
from ddl_gym.baselines.sjf_bco.policy import (
    SJF_BCO_MODELS,
    SJF_BCO_PERF_MODEL,
    SJF_BCO_SCENARIOS,
    PlanOptions,
    SJFBCOPolicy,
    make_sjf_bco,
    make_sjf_bco_baseline,
    sjf_bco_regime_scenario,
    sjf_bco_scenario,
)
from ddl_gym.baselines.sjf_bco.plan import InitialState, bisect_theta, estimate_bounds, make_trial, plan
from ddl_gym.scenarios import GBPS, Scenario, get_scenario
from ddl_gym.sim.engine import Simulator, run_policy
from ddl_gym.sim.model import ClusterSpec, ConfigError, ModelProfile, Workload
from ddl_gym.sim.perf import RARContentionModel
from ddl_gym.workloads.synthetic import scaled_workload, sjf_bco_workload
from ddl_gym.report_paths import reproduction_file

# τ = t_f + t_b = 1 s per iteration on one server, no communication, no overhead: ρ̂_j = F_j exactly.
UNIT = ModelProfile("unit", 0.0, 0.5, 0.5)
EXACT = RARContentionModel(xi1=1.0, xi2=0.0, alpha=0.0)
BCO_CLUSTER = ClusterSpec((4, 8, 16, 32, 8, 4), intra_bandwidth=800 * GBPS, inter_bandwidth=100 * GBPS)


def unit_jobs(gpus: list[int], iterations: list[int], arrival: list[float] | None = None) -> Workload:
    return Workload.from_jobs(arrival=arrival or [0.0] * len(gpus), gpus=gpus, iterations=iterations,
                              models=[UNIT] * len(gpus))


def bco_jobs(seed: int = 0) -> Workload:
    mix = {1: 16, 2: 6, 4: 8, 8: 6, 16: 3, 32: 1}
    return sjf_bco_workload(np.random.default_rng(seed), gpu_mix=mix, models=SJF_BCO_MODELS)


# ----------------------------------------------------------------------------- bisection (Alg. 1 lines 4–23)
@pytest.mark.parametrize("mode", ["paper", "feasible"])
def test_bisection_finds_tightest_theta_when_makespan_improves(mode: str) -> None:
    # Feasible iff θ >= 37 and makespan strictly shrinks with θ: both modes must land on 37.
    calls = []

    def evaluate(theta: int):
        calls.append(theta)
        return (100.0 + theta, "plan") if theta >= 37 else (math.inf, None)

    m, y, theta_tilde, theta_plan, history = bisect_theta(1000, evaluate, mode)
    assert (m, y, theta_tilde, theta_plan) == (137.0, "plan", 37, 37)
    assert len(calls) <= math.ceil(math.log2(1000)) + 1  # integer bisection, not a scan
    assert [h[0] for h in history] == calls


def test_bisection_on_hand_solvable_instance() -> None:
    # One server, 2 GPUs, three 1-GPU jobs with ρ̂ = 3, 2, 2 (u = 1). Least-U plan: J0→g0 [0,3),
    # J1→g1 [0,2), J2 waits for g1 → [2,4). U = (3, 4): the tightest feasible θ is 4.
    cluster, wl = ClusterSpec((2,)), unit_jobs([1, 1, 1], [3, 2, 2])
    assert estimate_bounds(cluster, wl, EXACT).u == 1.0
    feasible = plan(cluster, wl, EXACT, kind="ls", horizon=16, bisection="feasible", extend_horizon=False)
    assert feasible.theta_tilde == 4 and feasible.planned_makespan == pytest.approx(4.0)
    assert feasible.w_max == pytest.approx(4.0)  # Lemma 2: Ŵ_max = θ̃_u here
    starts = {e.job: (e.start, e.gpus) for e in feasible.entries}
    assert starts == {0: (0.0, (0,)), 1: (0.0, (1,)), 2: (2.0, (1,))}
    # θ = 3 is infeasible: a direct trial returns ∅ for the third job (nothing left running can help).
    trial = make_trial(cluster, wl, EXACT, 3, kind="ls")
    assert not trial.run([0, 1, 2])
    # As written (go left only on a strictly better makespan) the search keeps the first feasible θ
    # it met (8) because θ = 4 ties on makespan; it still visits 4, reported as θ̃_u.
    paper = plan(cluster, wl, EXACT, kind="ls", horizon=16, bisection="paper", extend_horizon=False)
    assert paper.theta_plan == 8 and paper.theta_tilde == 4
    assert paper.planned_makespan == pytest.approx(4.0)


def test_infeasible_horizon_returns_empty_or_extends() -> None:
    cluster, wl = ClusterSpec((2,)), unit_jobs([1, 1, 1], [3, 2, 2])
    stuck = plan(cluster, wl, EXACT, kind="sjf-bco", horizon=3, extend_horizon=False)
    assert not stuck.feasible and stuck.planned_makespan == math.inf  # ∅, T
    extended = plan(cluster, wl, EXACT, kind="sjf-bco", horizon=3)
    assert extended.feasible and extended.horizon_doublings == 1 and extended.horizon == 6


# ----------------------------------------------------------------------------- FA-FFP / LBSGF
def test_fa_ffp_takes_least_loaded_idle_gpus_and_waits_under_theta() -> None:
    cluster = ClusterSpec((4, 4))
    wl = Workload.from_jobs(arrival=[0.0], gpus=[3], iterations=[1000], models=[SJF_BCO_MODELS[0]])
    load = np.array([5, 1, 7, 3, 2, 9, 0.5, 4], dtype=float)
    busy = np.full(8, -np.inf)
    busy[6] = 10.0  # the least-loaded GPU is busy until t = 10 (a single-server job)
    initial = InitialState(0.0, busy, load, ((10.0, (1,)),))
    trial = make_trial(cluster, wl, EXACT, 1000, kappa=32, initial=initial)
    entry = trial.place(0)
    assert entry is not None and entry.method == "fa-ffp"
    assert entry.gpus == (1, 3, 4) and entry.start == 0.0  # least U among idle GPUs, no waiting
    # Now make θ too tight for g3 (U = 3): FA-FFP must wait for g6 (U = 0.5) to exit at t = 10.
    probe = make_trial(cluster, wl, EXACT, 1000, kappa=32, initial=initial)
    rho, n_servers = probe.rho_hat(0, np.array([1, 3, 4]))
    assert n_servers == 2
    theta = 3 + rho / probe.ctx.u - 1e-3
    tight = make_trial(cluster, wl, EXACT, theta, kappa=32, initial=initial)
    entry = tight.place(0)
    assert entry is not None and entry.gpus == (1, 4, 6) and entry.start == 10.0
    assert entry.end == pytest.approx(10.0 + entry.rho_hat)  # T_j = planned start + ρ̂_j
    assert tight.load[[1, 4, 6]] == pytest.approx(load[[1, 4, 6]] + entry.rho_hat / tight.ctx.u)


def test_lbsgf_uses_least_busy_servers_and_lambda_widens_the_choice() -> None:
    cluster = ClusterSpec((4, 4, 4))
    wl = Workload.from_jobs(arrival=[0.0], gpus=[4], iterations=[1000], models=[SJF_BCO_MODELS[0]])
    load = np.array([9, 9, 9, 9, 0, 2, 2, 0, 1.5, 1.5, 1.5, 0.1])  # server means 9, 1, 1.15
    initial = InitialState(0.0, np.full(12, -np.inf), load, ())
    narrow = make_trial(cluster, wl, EXACT, 1000, kappa=1, lam=1.0, initial=initial)
    assert narrow.lbsgf_servers(0).tolist() == [1]  # Σ O_s ≥ λ G_j = 4 after one server
    entry = narrow.place(0)
    assert entry is not None and entry.method == "lbsgf" and entry.gpus == (4, 5, 6, 7)
    wide = make_trial(cluster, wl, EXACT, 1000, kappa=1, lam=2.0, initial=initial)
    assert wide.lbsgf_servers(0).tolist() == [1, 2]
    entry = wide.place(0)
    assert entry is not None and entry.gpus == (4, 7, 8, 11)  # least U over servers 1 and 2 (tie g8 < g9)


def test_kappa_selects_algorithm_and_classes() -> None:
    cluster = ClusterSpec((4, 4))
    wl = unit_jobs([1, 2, 4, 4], [5, 5, 5, 5])
    result = plan(cluster, wl, EXACT, kappas=2)
    methods = {e.job: e.method for e in result.entries}
    assert methods == {0: "fa-ffp", 1: "fa-ffp", 2: "lbsgf", 3: "lbsgf"}  # G_j ≤ κ → Alg. 2, else Alg. 3
    classed = plan(cluster, wl, EXACT, kappas=[2, 3])
    assert classed.kappa == 2 and classed.kappa_class == (2, 3)  # κ = 3 induces the same job split


def test_kappa_loop_keeps_the_class_with_the_smallest_makespan() -> None:
    # Alg. 1 lines 7–18: at the kept θ, the returned κ is the first κ class whose complete schedule has
    # the strictly smallest makespan; recompute every class's schedule independently and compare.
    wl = bco_jobs(3)
    full = plan(BCO_CLUSTER, wl, SJF_BCO_PERF_MODEL, horizon=1200)
    order = sorted(range(len(wl)), key=lambda j: int(wl.gpus[j]))
    makespans = {}
    for kappa in (1, 2, 4, 8, 16, 32):  # one κ per class of the sizes {1, 2, 4, 8, 16, 32}
        trial = make_trial(BCO_CLUSTER, wl, SJF_BCO_PERF_MODEL, full.theta_plan, kappa=kappa)
        makespans[kappa] = trial.makespan if trial.run(order) else math.inf
    best = min(makespans.values())
    assert full.kappa == next(k for k, m in makespans.items() if m == best)
    assert full.planned_makespan == pytest.approx(best)
    assert len(set(makespans.values())) > 1  # the classes genuinely differ on this instance


def test_waiting_gives_a_sequential_plan_on_a_small_cluster() -> None:
    cluster = ClusterSpec((4,))
    wl = unit_jobs([4, 4, 4], [7, 3, 5])
    result = plan(cluster, wl, EXACT, kind="sjf-bco")
    entries = result.entries
    assert [e.job for e in entries] == [0, 1, 2]  # stable SJF order on equal G_j
    assert [e.start for e in entries] == [0.0, 7.0, 10.0]  # each waits for the previous exit
    assert result.planned_makespan == pytest.approx(15.0)


def test_estimate_bounds_quantities() -> None:
    wl = bco_jobs()
    b = estimate_bounds(BCO_CLUSTER, wl, SJF_BCO_PERF_MODEL)
    assert np.all(b.tau_low <= b.tau_up)
    single = wl.gpus == 1
    assert np.allclose(b.tau_low[single], b.tau_up[single])  # 1-GPU jobs: no exchange, one server
    assert b.u > 1 > b.l > 0 and b.n_g == 32
    assert b.phi_u_over_l == pytest.approx(b.phi * b.u / b.l)
    assert b.approximation_ratio == pytest.approx(32 * b.phi_u_over_l)
    # τ range of the calibrated §7.1 profiles lies in the paper's [0.01, 0.05] s at its low end.
    assert 0.01 - 1e-12 <= b.tau_low.min() and b.tau_low.max() <= 0.05


# ----------------------------------------------------------------------------- execution in the simulator
@pytest.mark.parametrize("kind", ["sjf-bco", "ff", "ls", "rand"])
def test_plan_is_executed_exactly(kind: str) -> None:
    wl = bco_jobs(1)
    policy = SJFBCOPolicy(kind, horizon=1200)
    scenario = Scenario("t", BCO_CLUSTER, lambda rng, c: wl, model=SJF_BCO_PERF_MODEL)
    result = policy.run_episode(scenario, BCO_CLUSTER, wl, np.random.default_rng(3), debug=True)
    assert result.completed
    planned = policy.planned_assignments()
    assert sorted(j for j, _ in planned) == list(range(len(wl)))
    per_gpu_plan: dict[int, list[int]] = defaultdict(list)
    for job, gpus in planned:
        assert tuple(sorted(result.gpu_ids[job])) == gpus  # exactly the planned GPUs
        for g in gpus:
            per_gpu_plan[g].append(job)
    for g, jobs in per_gpu_plan.items():
        starts = [result.start[j] for j in jobs]
        assert starts == sorted(starts)  # plan order preserved on every GPU
        for a, b in zip(jobs, jobs[1:]):
            assert result.finish[a] <= result.start[b] + 1e-9  # never overlapping
    extra = result.extra
    assert extra["planned_makespan_s"] == pytest.approx(policy.plan_result.planned_makespan)
    assert extra["simulated_makespan_s"] == pytest.approx(result.summary()["makespan_s"])
    assert extra["n_g"] == 32 and extra["phi_u_over_l"] > 1 and extra["replans"] == 0
    # §5.1: the estimate lies in [l·ρ, u·ρ] for the *simulated* run time ρ (real contention), with the
    # analytical u and l of the τ range — fails if execution is slower or faster than the bounds allow.
    entries = policy.plan_result.entries
    rho = np.array([result.finish[e.job] - result.start[e.job] for e in entries])
    rho_hat = np.array([e.rho_hat for e in entries])
    assert np.all(rho_hat <= extra["u"] * rho * (1 + 1e-9)) and np.all(rho_hat >= extra["l"] * rho * (1 - 1e-9))
    # Ŵ_max recomputed from the plan's entries: per GPU Σ ρ̂_j/u over the jobs planned on it (Alg. 2 line 6).
    load = np.zeros(BCO_CLUSTER.num_gpus)
    for e in entries:
        load[list(e.gpus)] += e.rho_hat / extra["u"]
    assert extra["w_max_u"] == pytest.approx(load.max())
    if kind == "sjf-bco":
        assert 1 <= extra["kappa"] <= 32
    if kind == "rand":
        assert extra["theta_plan_u"] == 1200  # θ^RAND = T


def test_policy_is_deterministic_and_registered() -> None:
    wl = bco_jobs(2)
    results = []
    for _ in range(2):
        sim = Simulator(BCO_CLUSTER, wl, SJF_BCO_PERF_MODEL)
        results.append(run_policy(sim, make_policy("sjf-bco-rand", horizon=900), np.random.default_rng(5)))
    assert np.array_equal(results[0].finish, results[1].finish)
    assert make_policy("sjf-bco").kind == "sjf-bco" and make_sjf_bco(kappa=1).kappa == 1
    assert make_sjf_bco_baseline("ls").name == "sjf-bco-ls" and make_policy("sjf-bco-ff").engine == "job"
    with pytest.raises(ConfigError):
        make_sjf_bco_baseline("nope")
    with pytest.raises(ConfigError):
        make_sjf_bco(lam=0.5)


def test_online_replan_mode_runs_every_job() -> None:
    wl = scaled_workload(np.random.default_rng(4), 30, max_gpus=16, arrival_rate_per_s=0.05, models=SJF_BCO_MODELS)
    assert wl.arrival.max() > 0
    policy = make_sjf_bco(online="replan")
    scenario = Scenario("t", BCO_CLUSTER, lambda rng, c: wl, model=SJF_BCO_PERF_MODEL)
    result = policy.run_episode(scenario, BCO_CLUSTER, wl, np.random.default_rng(0), debug=True)
    assert result.completed
    assert result.extra["replans"] >= 1 and len(policy.plans) == result.extra["replans"] + 1
    assert np.all(result.start >= wl.arrival)
    for job, gpus in policy.planned_assignments():
        assert tuple(sorted(result.gpu_ids[job])) == gpus


def test_refuse_mode_rejects_online_arrivals() -> None:
    wl = unit_jobs([1, 1], [3, 3], arrival=[0.0, 5.0])
    sim = Simulator(ClusterSpec((2,)), wl, EXACT)
    with pytest.raises(ConfigError, match="online='replan'"):
        run_policy(sim, make_sjf_bco(online="refuse"), np.random.default_rng(0))
    offline = unit_jobs([1, 1], [3, 3])  # all at t = 0: accepted
    result = run_policy(Simulator(ClusterSpec((2,)), offline, EXACT), make_sjf_bco(online="refuse"))
    assert result.completed


# ----------------------------------------------------------------------------- scenarios
def test_scenarios_nested_and_registered() -> None:
    names = [s.name for s in SJF_BCO_SCENARIOS]
    assert names[0] == "sjf-bco" and "sjf-bco-10s" in names and len(names) == 11
    assert get_scenario("sjf-bco-15s").name == "sjf-bco-15s"
    big_cluster, big_wl = sjf_bco_scenario(20).episode(7)
    small_cluster, small_wl = sjf_bco_scenario(10).episode(7)
    assert big_cluster.num_servers == 20 and set(big_cluster.gpus_per_server) <= {4, 8, 16, 32}
    assert small_cluster.gpus_per_server == big_cluster.gpus_per_server[:10]  # Fig. 6 nested clusters
    assert np.array_equal(small_wl.iterations, big_wl.iterations) and len(big_wl) == 160
    assert np.all(big_wl.arrival == 0)


# ----------------------------------------------------------------------------- readings (named options)
def test_plan_options_are_validated() -> None:
    assert PlanOptions().changed() == {} and PlanOptions(fa_ffp="prose").changed() == {"fa_ffp": "prose"}
    with pytest.raises(ConfigError, match="fa_ffp"):
        PlanOptions(fa_ffp="packing")
    with pytest.raises(ConfigError, match="job_order"):
        SJFBCOPolicy("ff", options=PlanOptions(job_order="lifo"))


def test_fa_ffp_as_listed_is_ls() -> None:
    # Alg. 2 line 4 (top-G_j least U) is §7.2's LS rule: with κ = max G_j every job uses FA-FFP and
    # SJF-BCO's plan is LS's plan, job for job.
    wl = bco_jobs(4)
    ls = plan(BCO_CLUSTER, wl, SJF_BCO_PERF_MODEL, kind="ls", horizon=1200)
    k32 = plan(BCO_CLUSTER, wl, SJF_BCO_PERF_MODEL, kind="sjf-bco", kappas=32, horizon=1200)
    assert [(e.job, e.gpus, e.start) for e in k32.entries] == [(e.job, e.gpus, e.start) for e in ls.entries]
    prose = plan(BCO_CLUSTER, wl, SJF_BCO_PERF_MODEL, kind="sjf-bco", kappas=32, horizon=1200,
                 options=PlanOptions(fa_ffp="prose"))
    assert [e.gpus for e in prose.entries] != [e.gpus for e in ls.entries]


def test_fa_ffp_prose_packs_into_occupied_servers() -> None:
    cluster = ClusterSpec((4, 4))
    wl = Workload.from_jobs(arrival=[0.0], gpus=[2], iterations=[100], models=[UNIT])
    load = np.array([5, 5, 6, 7, 0, 0, 0, 0], dtype=float)
    busy = np.full(8, -np.inf)
    busy[0] = 10.0  # server 0 hosts a running job on GPU 0; server 1 is empty and less loaded
    initial = InitialState(0.0, busy, load, ((10.0, (0,)),))
    listed = make_trial(cluster, wl, EXACT, 1000, kappa=32, initial=initial).place(0)
    assert listed is not None and listed.gpus == (4, 5)  # least U: opens the empty server
    prose = make_trial(cluster, wl, EXACT, 1000, kappa=32, initial=initial, options=PlanOptions(fa_ffp="prose"))
    entry = prose.place(0)
    assert entry is not None and entry.gpus == (1, 2)  # the occupied server first, least U inside it


def test_lbsgf_line_7_readings() -> None:
    cluster = ClusterSpec((4, 4, 4))
    wl = Workload.from_jobs(arrival=[0.0], gpus=[4], iterations=[1000], models=[SJF_BCO_MODELS[0]])
    load = np.array([9, 9, 9, 9, 0, 2, 2, 0, 1.5, 1.5, 1.5, 0.1])  # server means 9, 1, 1.15
    initial = InitialState(0.0, np.full(12, -np.inf), load, ())
    listed = make_trial(cluster, wl, EXACT, 1000, kappa=1, lam=2.0, initial=initial,
                        options=PlanOptions(lbsgf_pick="list-order"))
    entry = listed.place(0)
    # Servers [1, 2] in line-2 order, each sorted by U: g4, g7, g5, g6 | g11, g8, ... → the first four.
    assert entry is not None and entry.gpus == (4, 5, 6, 7)


def test_rand_servers_reading_fills_random_servers() -> None:
    cluster = ClusterSpec.homogeneous(6, 4)
    wl = unit_jobs([4], [10])
    spans = {"gpus": set(), "servers": set()}
    for reading in spans:
        for seed in range(20):
            trial = make_trial(cluster, wl, EXACT, 1000, kind="rand", rng=np.random.default_rng(seed),
                               options=PlanOptions(rand_pick=reading))
            spans[reading].add(trial.place(0).n_servers)
    assert spans["servers"] == {1}  # a random server, then random GPUs in it: one 4-GPU server suffices
    assert max(spans["gpus"]) > 1  # uniformly random GPUs spread the job


def test_baselines_in_arrival_order() -> None:
    cluster = ClusterSpec((4,))
    wl = unit_jobs([4, 1, 1], [5, 3, 3])
    sjf = plan(cluster, wl, EXACT, kind="ff", horizon=100)
    arrival = plan(cluster, wl, EXACT, kind="ff", horizon=100, options=PlanOptions(job_order="arrival"))
    assert [(e.job, e.start) for e in sjf.entries] == [(1, 0.0), (2, 0.0), (0, 3.0)]
    assert [(e.job, e.start) for e in arrival.entries] == [(0, 0.0), (1, 5.0), (2, 5.0)]


def test_regime_scenario_meets_the_rho_hat_range() -> None:
    regime = sjf_bco_regime_scenario(20)
    cluster, wl = regime.episode(2)
    base_cluster, base_wl = sjf_bco_scenario(20).episode(2)
    assert cluster == base_cluster and np.array_equal(wl.gpus, base_wl.gpus)  # same clusters and job mix
    bound = regime.model.bind(cluster, wl)
    tau = np.array([bound.iteration_time(j, 1, 0) for j in range(len(wl))])
    rho = tau * wl.iterations
    assert rho.min() >= 50 and rho.max() <= 300 and tau.min() >= 0.01 - 1e-12 and tau.max() <= 0.05
    assert wl.iterations.min() >= 1000 and wl.iterations.max() <= 6000
    assert get_scenario("sjf-bco-regime").name == "sjf-bco-regime"


# ----------------------------------------------------------------------------- reproduction
def test_reproduction_builds_every_figure_and_reading() -> None:
    from ddl_gym.reproduce.sjf_bco import READINGS, build_runs

    runs = build_runs([0], quick=True, bisection="paper")
    assert {r.fig for r in runs} == {"fig4", "fig5", "fig6", "fig7"}
    assert sorted(k for r in runs if r.fig == "fig5" for k in r.kappa_members) == list(range(1, 33))
    assert len(runs) == len(set(runs))  # runs shared by several readings are simulated once
    fig4 = [r for r in runs if r.fig == "fig4"]
    assert {r.calibration for r in fig4} == {"sjf-bco", "sjf-bco-regime", "sjf-bco-heavy"}  # heavy: issue 32
    for reading in READINGS[1:]:  # every other reading changes exactly one choice of the default
        changed = (reading.sjf_bco.changed(), reading.baselines.changed(), reading.calibration != "sjf-bco")
        assert sum(bool(c) for c in changed) == 1, reading.name


@pytest.mark.slow
def test_quick_claims_match_the_committed_table(tmp_path) -> None:
    """Regenerate the quick claims table; it must equal docs/reproductions/sjf_bco/claims_quick.md (regenerate with
    ``ddl-gym reproduce sjf-bco --quick --workers 1 --claims docs/reproductions/sjf_bco/claims_quick.md``)."""
    from pathlib import Path

    import pandas as pd

    from ddl_gym.reproduce.sjf_bco import main

    assert main(["--quick", "--workers", "1", "--no-plots", "--out", str(tmp_path)]) == 0
    committed = reproduction_file("sjf_bco", "claims_quick.md")
    assert (tmp_path / "claims.md").read_text() == committed.read_text()
    rows = pd.read_csv(tmp_path / "rows.csv")
    assert len(rows[rows.fig == "fig5"]) == 32 and rows.sim_makespan_s.gt(0).all()
    regime = rows[rows.calibration == "sjf-bco-regime"]
    assert (regime.jobs_rho_below_50 == 0).all() and (rows[rows.calibration == "sjf-bco"].jobs_rho_below_50 > 0).all()


def test_replan_when_started_plans_arrivals_only_after_the_plan_has_started() -> None:
    wl = scaled_workload(np.random.default_rng(7), 60, max_gpus=16, arrival_rate_per_s=0.3, models=SJF_BCO_MODELS)
    scenario = Scenario("t", BCO_CLUSTER, lambda rng, c: wl, model=SJF_BCO_PERF_MODEL)
    runs = {}
    for online in ("replan", "replan-when-started"):
        policy = make_sjf_bco(online=online)
        result = policy.run_episode(scenario, BCO_CLUSTER, wl, np.random.default_rng(0), debug=True)
        assert result.completed and np.all(result.start >= wl.arrival)
        for job, gpus in policy.planned_assignments():
            assert tuple(sorted(result.gpu_ids[job])) == gpus  # every job runs on its planned GPUs
        # Did some job of a plan start after the next plan was made (i.e. was it re-planned)?
        overtaken = [any(result.start[e.job] > later.replan_time + 1e-9 for e in earlier.plan.entries)
                     for earlier, later in zip(policy.plans, policy.plans[1:])]
        planned = [e.job for p in policy.plans for e in p.plan.entries]
        runs[online] = (len(policy.plans), any(overtaken), len(planned) - len(set(planned)))
    assert runs["replan"][1] and runs["replan"][2] > 0  # the default re-plans queued, planned jobs
    plans, overtaken, replanned = runs["replan-when-started"]
    assert plans >= 2 and not overtaken and replanned == 0  # each job planned once, after its plan started
    assert plans < runs["replan"][0]
    with pytest.raises(ConfigError, match="online must be one of"):
        make_sjf_bco(online="sometimes")


def test_replan_when_started_equals_the_default_offline() -> None:
    wl = bco_jobs(3)
    finishes = []
    for online in ("replan", "replan-when-started"):
        result = run_policy(Simulator(BCO_CLUSTER, wl, SJF_BCO_PERF_MODEL), make_sjf_bco(online=online))
        finishes.append(result.finish)
    assert np.array_equal(finishes[0], finishes[1])


def test_least_u_pick_after_an_lbsgf_phase_rebuilds_the_idle_order() -> None:
    # In SJF order a trial stops keeping the idle GPUs in (U, index) order once it reaches LBSGF (every
    # later job is LBSGF). Placed out of SJF order by hand, an FA-FFP job after LBSGF ones must see the
    # same idle order as a trial that kept it all along (job_order="arrival" never drops it).
    cluster, wl = sjf_bco_scenario(10).episode(0)
    big = [j for j in range(wl.num_jobs) if wl.gpus[j] >= 8][:4]
    small = [j for j in range(wl.num_jobs) if wl.gpus[j] <= 2][:6]
    trials = [make_trial(cluster, wl, SJF_BCO_PERF_MODEL, 10**9, kappa=4, options=PlanOptions(job_order=order))
              for order in ("sjf", "arrival")]
    placed = [[trial.place(j) for j in big + small] for trial in trials]
    assert all(e is not None for e in placed[0])
    assert [e.method for e in placed[0]] == ["lbsgf"] * len(big) + ["fa-ffp"] * len(small)
    assert placed[0] == placed[1]
    assert trials[0].idle_sorted is not None and trials[0].idle_sorted == trials[1].idle_sorted
