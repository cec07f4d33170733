"""A-Online (Zhou et al.): hand-computed speeds (eqs. 1, 14), prices and alpha, mincost fast ==
literal, the policies on the engine, preemption conserving work, and the ILP below every policy."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from ddl_gym.policies import make_policy
from ddl_gym.baselines.a_online import mincost as mc
from ddl_gym.baselines.a_online.policy import alpha_rule, price, price_base
from ddl_gym.baselines.a_online.optimum import config_ilp, trivial_lower_bound
from ddl_gym.scenarios import get_scenario
from ddl_gym.sim.alloc import Allocation
from ddl_gym.sim.engine import Simulator, run_policy
from ddl_gym.sim.model import ClusterSpec, ConfigError, ResourceType, Workload
from ddl_gym.sim.perf.aonline import (
    SLOT_SECONDS, AOnlinePSModel, AOnlineProfile, AOnlineRAModel, duration_slots, ps_rate, ra_rate,
)
from ddl_gym.workloads.aonline import AOnlineSetup, make_aonline_scenario
from ddl_gym.report_paths import reproduction_file
from tests.conftest import make_workload

# Spec C1.5 worked example: v = 0.01 slot, U = 50 ms, π = 100 MB, b = 1 Gb/s, EDK = 60·10·20.
V, U, PI, B_GBPS, EDK = 0.01, 0.05 / 3600, 100e6, 1.0, 12_000

TINY = AOnlineSetup(num_jobs=4, horizon=4, servers=2, worker_types=2, ps_types=2, epochs_range=(1, 1),
                    chunks_range=(1, 2), minibatch_range=(10, 20), worker_time_range=(0.05, 0.3), kappa=1.5,
                    max_baseline_workers=2)
POLICIES = ("a-online", "a-online-paper", "a-online-listing", "fifo-mr", "drf", "antman", "tiresias", "tiresias-dlas",
            "jain-greedy")


# ----------------------------------------------------------------------------- eqs. (1), (14), (11), (6)
def test_ps_speed_and_durations_match_the_hand_computed_example():
    rho1 = ps_rate(V, U, PI, B_GBPS, colocated=True)
    rho0 = ps_rate(V, U, PI, B_GBPS, colocated=False)
    assert rho1 == pytest.approx(99.861, abs=1e-3) and rho0 == pytest.approx(95.618, abs=1e-3)
    assert [duration_slots(EDK, n, rho1) for n in (1, 5, 10)] == [121, 25, 13]
    assert [duration_slots(EDK, n, rho0) for n in (1, 5, 10)] == [126, 26, 13]


def test_ring_allreduce_speed_matches_the_hand_computed_example():
    rho1 = ra_rate(V, U, PI, B_GBPS, 5, colocated=True)
    rho0 = ra_rate(V, U, PI, B_GBPS, 5, colocated=False)
    assert rho1 == pytest.approx(99.889, abs=1e-3) and rho0 == pytest.approx(96.463, abs=1e-3)
    assert duration_slots(EDK, 5, rho1) == 25 and duration_slots(EDK, 5, rho0) == 25
    assert ra_rate(V, U, PI, B_GBPS, 1, colocated=False) == pytest.approx(1 / V)  # one worker: no exchange


def test_price_function_and_alpha_rule_values():
    lam = price_base(150, 150, 4, 1)
    assert lam == 180_001
    assert [price(u, lam) for u in (0.1, 0.5, 0.9)] == pytest.approx([2.354, 423.27, 53_671], rel=1e-3)
    assert price(0.0, lam) == 0.0
    assert [alpha_rule(200 * ratio, 200, lam) for ratio in (10, 100, 1300)] == [80, 159, 247]


def _example_world(arch: str = "ps") -> tuple[ClusterSpec, Workload]:
    cluster = ClusterSpec(gpus_per_server=(8, 8), resources=("gpu", "cpu", "mem", "bw"),
                          capacity=((8, 32, 256, 10), (8, 32, 256, 10)),
                          worker_types=(ResourceType("w", (1, 2, 8, B_GBPS)),),
                          ps_types=(ResourceType("ps", (0, 2, 8, 5.0)),))
    prof = AOnlineProfile(60, 10, 20, PI, (V,), (U,), U, 5)
    wl = Workload.from_jobs(arrival=[0.0], gpus=[1], iterations=[EDK], models=[make_workload([1], [1]).models[0]],
                            arch=[arch], profiles=[prof])
    return cluster, wl


def test_rate_model_runs_the_example_at_eq_1_speed_and_checks_the_constraints():
    cluster, wl = _example_world()
    sim = Simulator(cluster, wl, AOnlinePSModel(), debug=True)
    split = Allocation.typed(cluster, workers=[(0, 0, 3), (1, 0, 2)], ps=[(0, 0, 1)])  # 2 remote x 1 Gb/s <= 5
    sim.start(0, split)
    assert sim.tau[0] == pytest.approx(SLOT_SECONDS / (5 * ps_rate(V, U, PI, B_GBPS, False)))
    while sim.advance():
        pass
    assert sim.finish_time[0] / SLOT_SECONDS == pytest.approx(EDK / (5 * 95.618), rel=1e-4)  # exact, not ceil
    bound = AOnlinePSModel().bind(cluster, wl)
    with pytest.raises(ConfigError, match="2i"):  # 6 remote workers need 6 Gb/s, one PS gives 5
        bound.allocation_time(0, Allocation.typed(cluster, workers=[(1, 0, 6)], ps=[(0, 0, 1)]))
    with pytest.raises(ConfigError, match="2c/2e"):
        bound.allocation_time(0, Allocation.typed(cluster, workers=[(0, 0, 2)]))
    with pytest.raises(ConfigError, match="2g"):
        bound.allocation_time(0, Allocation.typed(cluster, workers=[(0, 0, 8), (1, 0, 3)], ps=[(0, 0, 3)]))
    one = Allocation.typed(cluster, workers=[(0, 0, 5)], ps=[(0, 0, 1)])
    assert bound.allocation_time(0, one) == pytest.approx(SLOT_SECONDS / (5 * ps_rate(V, U, PI, B_GBPS, True)))


def test_ra_rate_model_uses_eq_14():
    cluster, wl = _example_world("allreduce_elastic")
    bound = AOnlineRAModel().bind(cluster, wl)
    split = Allocation.typed(cluster, workers=[(0, 0, 3), (1, 0, 2)])
    assert bound.allocation_time(0, split) == pytest.approx(SLOT_SECONDS / (5 * 96.463), rel=1e-4)


# ----------------------------------------------------------------------------- mincost: fast == literal
def _tiny_market(seed: int, H: int = 3, tau: int = 8, M: int = 2, P: int = 2):
    rng = np.random.default_rng(seed)
    R = 4
    C = rng.integers(2, 9, (H, R)).astype(float)
    beta = np.floor(rng.uniform(0, 1, (H, R, tau)) * C[:, :, None] * (rng.random((H, 1, 1)) < 0.6))
    delta = price(beta / C[:, :, None], 50.0)
    e = np.column_stack([rng.integers(1, 3, M), rng.integers(0, 3, M), rng.integers(0, 3, M),
                         rng.integers(1, 3, M)]).astype(float)
    z = np.column_stack([np.zeros(P), rng.integers(1, 3, P), rng.integers(0, 2, P), rng.integers(1, 5, P)]).astype(float)
    mk = mc.Market(unit_price=delta / C[:, :, None], free=C[:, :, None] - beta, worker_demand=e, ps_demand=z, bw=3)
    D = int(rng.integers(1, 5))
    total = float(rng.integers(1, 6) * D * rng.integers(1, 4))
    ps = np.sort(rng.uniform(0.3, 2.0, (2, M, P)), axis=0)
    ra = np.zeros((2, M, D + 1))
    ra[:, :, 1:] = np.sort(rng.uniform(0.3, 2.0, (2, M, D)), axis=0)
    return mc.JobRates(total, D, ps, ra), mk


@pytest.mark.parametrize("routine", sorted(mc.LITERAL))
def test_fast_mincost_equals_the_literal_listing_on_random_tiny_instances(routine: str):
    checked = feasible = 0
    for seed in range(25):
        job, mk = _tiny_market(seed)
        for strict in (False, True):
            for tie in ("listing", "completion"):
                c_lit, s_lit = mc.LITERAL[routine](job, mk, strict_listing=strict, tie_break=tie)
                for l_values in ("all", "n-loop"):
                    c_fast, s_fast = mc.FAST[routine](job, mk, strict_listing=strict, tie_break=tie, l_values=l_values)
                    checked += 1
                    if math.isinf(c_lit):
                        assert math.isinf(c_fast) and s_fast is None
                        continue
                    feasible += 1
                    assert c_fast == pytest.approx(c_lit, rel=1e-9, abs=1e-12)
                    assert s_fast == s_lit or mc.schedule_cost(mk, s_fast) == pytest.approx(c_lit, rel=1e-9, abs=1e-12)
    assert feasible > checked // 4  # the instances are not all infeasible


def test_bug_fixes_change_what_the_listings_return():
    """Fix (b) of Alg. 7 matters on tiny instances (fix (a) of Alg. 4 only rescues placements that
    fix (e) then skips, so with both applied it changes nothing; the cross-test covers it with e off)."""
    diff = {"ra_mincost2": 0}
    for seed in range(60):
        job, mk = _tiny_market(seed)
        for routine in diff:
            fixed = mc.FAST[routine](job, mk)
            strict = mc.FAST[routine](job, mk, strict_listing=True)
            diff[routine] += fixed[1] != strict[1]
    assert diff["ra_mincost2"] > 0


# ----------------------------------------------------------------------------- policies on the engine
@pytest.fixture(scope="module")
def tiny_runs():
    scenario = make_aonline_scenario("aonline-tiny", TINY, "tiny")
    out = []
    for seed in range(3):
        cluster, workload = scenario.episode(seed)
        results = {}
        for name in POLICIES:
            sim = Simulator(cluster, workload, scenario.model, debug=True, record_timeline=True)
            results[name] = (run_policy(sim, make_policy(name), np.random.default_rng(seed)), sim)
        out.append((cluster, workload, results))
    return out


def test_every_policy_finishes_every_job_under_invariant_checks(tiny_runs):
    for _, workload, results in tiny_runs:
        for name, (result, _) in results.items():
            assert result.completed and np.isfinite(result.finish).all(), name
            assert np.all(result.start >= workload.arrival - 1e-6), name


def test_preemption_conserves_work():
    crowded = make_aonline_scenario("aonline-crowded", replace(TINY, num_jobs=10, horizon=6, chunks_range=(1, 3),
                                                                minibatch_range=(10, 30), kappa=0.6,
                                                                max_baseline_workers=3), "crowded")
    preempted = 0
    for seed in range(3):
        cluster, workload = crowded.episode(seed)
        for name in ("antman", "tiresias", "tiresias-dlas"):
            sim = Simulator(cluster, workload, crowded.model, debug=True, record_timeline=True)
            result = run_policy(sim, make_policy(name), np.random.default_rng(seed))
            preempted += int(result.preemptions.sum())
            done = np.zeros(workload.num_jobs)
            last: dict[int, tuple[float, float]] = {}
            for t, job, tau in sim.timeline:
                if job in last:
                    t0, tau0 = last.pop(job)
                    done[job] += (t - t0) / tau0
                if tau != math.inf:
                    last[job] = (t, tau)
            expected = workload.iterations + np.array([sim._overhead_iters.get(j, 0.0) for j in range(workload.num_jobs)])
            assert done == pytest.approx(expected, rel=1e-9), name
    assert preempted > 0  # the check saw preemptions


def test_a_online_plans_start_on_schedule(tiny_runs):
    for _, workload, results in tiny_runs:
        paper, _ = results["a-online-paper"]
        slots = paper.start / SLOT_SECONDS
        # paper mode: a job planned in round i starts in [4 tau_i, 8 tau_i), tau_i a power of two
        rounds = 2.0 ** np.floor(np.log2(slots / 4.0))
        assert np.all(slots >= 4.0 * rounds - 1e-9) and np.all(slots < 8.0 * rounds + 1e-9)
        calendar, _ = results["a-online"]
        assert np.allclose(calendar.start / SLOT_SECONDS, np.round(calendar.start / SLOT_SECONDS))  # whole slots


def test_ilp_optimum_is_below_every_policy(tiny_runs):
    for cluster, workload, results in tiny_runs:
        objective = {name: r.summary()["weighted_completion"] / SLOT_SECONDS for name, (r, _) in results.items()}
        ub = min(v for k, v in objective.items() if k not in ("antman", "tiresias", "tiresias-dlas"))
        lb = config_ilp(cluster, workload, upper_bound_slots=ub, durations="floor", max_ps=1)
        assert lb.status == "optimal"
        trivial = trivial_lower_bound(cluster, workload)
        for name, value in objective.items():
            assert lb.objective_slots <= value * (1 + 1e-9), name
            assert trivial <= value * (1 + 1e-9), name
        opt = config_ilp(cluster, workload, upper_bound_slots=1.5 * ub, durations="ceil", max_ps=1)
        assert opt.status == "optimal" and lb.objective_slots <= opt.objective_slots + 1e-9


def test_policies_refuse_a_scenario_without_their_architecture_naming_both():
    scenario = get_scenario("small")
    cluster, workload = scenario.episode(0)
    for name in ("a-online", "drf", "tiresias-dlas"):
        with pytest.raises(ConfigError, match=f"'{name}'.*'small'.*allreduce"):
            make_policy(name).run_episode(scenario, cluster, workload, np.random.default_rng(0))
    with pytest.raises(ConfigError, match="'fifo-mr'.*'scaled-40'"):  # natively: the workload's name
        run_policy(Simulator(cluster, workload), make_policy("fifo-mr"))


def test_scenarios_are_registered_and_deterministic():
    for name in ("aonline-ps", "aonline-ra"):
        scenario = get_scenario(name)
        c1, w1 = scenario.episode(3)
        c2, w2 = scenario.episode(3)
        assert c1 == c2 and np.array_equal(w1.iterations, w2.iterations) and w1.profiles == w2.profiles
        total = np.asarray(c1.capacity).sum(axis=0)
        assert c1.num_servers == 150 and w1.num_jobs == 100 and np.all(total > 0)
    assert get_scenario("aonline-ra").episode(0)[1].architectures == frozenset({"allreduce_elastic"})


# ----------------------------------------------------------------------------- env for elastic jobs
def test_elastic_env_passes_both_checkers_and_masks_come_from_the_ledger():
    import warnings

    from gymnasium.utils.env_checker import check_env
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    from ddl_gym.envs.elastic_env import DDLClusterElasticEnv

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(DDLClusterElasticEnv("aonline-ps-small"), skip_render_check=True)
        sb3_check_env(DDLClusterElasticEnv("aonline-ps-small"))
    env = DDLClusterElasticEnv("aonline-ps-small", debug=True)
    obs, info = env.reset(seed=1)
    steps, invalid_seen = 0, False
    rng = np.random.default_rng(0)
    while True:
        mask = env.action_masks()
        assert mask.dtype == np.int8 and mask.any() and np.array_equal(mask, info["action_mask"])
        K = len(env.menu)
        for a in np.flatnonzero(mask[1:]) + 1:  # every valid start fits the free resources right now
            slot, item = divmod(int(a) - 1, K)
            assert env.sim.fits(env._options[(env._window[slot], env.menu[item])])
        if not invalid_seen and (mask == 0).any():  # an invalid action waits (its substitute runs), flagged
            bad = int(np.flatnonzero(mask == 0)[0])
            substitute = 0 if mask[0] else int(np.flatnonzero(mask)[0])
            obs, reward, term, trunc, info = env.step(bad)
            assert info["invalid_action"] and info["executed_action"] == substitute
            invalid_seen = True
            if term:
                break
            continue
        obs, reward, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(mask))))
        assert obs in env.observation_space
        steps += 1
        if term:
            break
    assert info["metrics"]["jobs"] == 30 and invalid_seen
    cluster, workload = get_scenario("aonline-ps-small").episode(1)  # the env's episode is the harness's
    assert np.array_equal(env.sim.workload.iterations, workload.iterations) and env.sim.cluster == cluster


def test_elastic_env_is_deterministic_and_registered():
    import gymnasium as gym

    import ddl_gym  # noqa: F401

    def rollout():
        env = gym.make("ddl_gym:DDLClusterElastic-v0", scenario="aonline-ps-small")
        obs, info = env.reset(seed=4)
        out = [obs]
        while True:
            mask = info["action_mask"]
            obs, r, term, trunc, info = env.step(int(np.flatnonzero(mask)[-1]))
            out.append(obs)
            if term or trunc:
                return np.array(out), info["metrics"]

    (a, ma), (b, mb) = rollout(), rollout()
    assert np.array_equal(a, b) and ma == mb
    with pytest.raises(ConfigError, match="A-Online scenario"):
        from ddl_gym.envs.elastic_env import DDLClusterElasticEnv

        DDLClusterElasticEnv("small")


def test_policies_are_listed_and_run_through_ddl_gym_eval(tmp_path):
    from ddl_gym.cli import main

    assert main(["eval", "--scenario", "aonline-ps-small", "--policies", "a-online,fifo-mr,drf", "--seeds", "1",
                 "--out", str(tmp_path), "--workers", "1", "--no-plots", "--no-progress"]) == 0
    import pandas as pd

    summary = pd.read_csv(tmp_path / "summary.csv")
    assert set(summary.policy) == {"a-online", "fifo-mr", "drf"}
    assert summary.weighted_completion.gt(0).all() and summary.weighted_jct_s.gt(0).all()
    assert "alpha_eff_mean" in summary.columns  # A-Online's own statistics reach summary.csv
    from ddl_gym.policies import list_policies

    assert {"a-online", "a-online-paper", "fifo-mr", "drf", "antman", "tiresias", "tiresias-dlas",
            "jain-greedy"} <= set(list_policies())


# The quick claims' regeneration check is tests/reproduce/test_catalog.py (entry a-online-quick).


def test_shipped_elastic_agent_runs_in_the_harness():
    pytest.importorskip("sb3_contrib")
    scenario = get_scenario("aonline-ps-small")
    cluster, workload = scenario.episode(0)
    policy = make_policy("aonline-ppo")
    result = policy.run_episode(scenario, cluster, workload, np.random.default_rng(0))
    assert result.completed and result.policy == "aonline-ppo"
    assert result.summary()["weighted_completion"] >= trivial_lower_bound(cluster, workload) * SLOT_SECONDS


@pytest.mark.parametrize("action", [1.0, True, np.array([1]), "1"])
def test_elastic_env_refuses_non_integer_actions_by_name(action):
    """Like the other envs: a float, bool, array or string is a named error, never a silent int()."""
    from ddl_gym.envs.base import InvalidActionError
    from ddl_gym.envs.elastic_env import DDLClusterElasticEnv

    env = DDLClusterElasticEnv("aonline-ps-small")
    env.reset(seed=0)
    with pytest.raises(InvalidActionError, match="DDLClusterElastic.step"):
        env.step(action)
    obs, _, _, _, info = env.step(np.int64(0))  # NumPy integers stay accepted
    assert obs.shape == env.observation_space.shape and not info["invalid_action"]
