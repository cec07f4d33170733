"""Issue 32 (A-Online): the §7.1(3) completion tie-break is the default and differs from the listing
order as described; its pruned, memoised search returns the exhaustive search's schedules; the load
axis rule reaches its threshold; the lower bound is below every policy."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ddl_gym.policies import make_policy
from ddl_gym.baselines.a_online import mincost as mc
from ddl_gym.baselines.a_online.policy import AOnlinePolicy, price
from ddl_gym.baselines.a_online.optimum import trivial_lower_bound
from ddl_gym.sim.perf.aonline import SLOT_SECONDS
from ddl_gym.workloads.aonline import AOnlineSetup, make_aonline_scenario
from ddl_gym.workloads.aonline_load import (
    HORIZON_GRID, LOAD_THRESHOLD, _wspt_mean_busy, busy_time_bound, lower_bound, offered_load,
)

POLICIES = ("a-online", "a-online-listing", "a-online-paper", "fifo-mr", "drf", "antman", "tiresias",
            "tiresias-dlas", "jain-greedy")


def _world(arch: str, jobs: int, servers: int, horizon: int):
    return make_aonline_scenario(f"t-{arch}", AOnlineSetup(arch=arch, num_jobs=jobs, servers=servers, horizon=horizon),
                                 "test world")


def _run(policy, scenario, seed):
    cluster, workload = scenario.episode(seed)
    result = policy.run_episode(scenario, cluster, workload, np.random.default_rng(seed))
    assert result.completed
    return result


# ----------------------------------------------------------------------------- defaults and names
def test_default_tie_break_is_completion_and_listing_is_a_named_variant():
    assert AOnlinePolicy().tie_break == "completion" and AOnlinePolicy().search == "pruned"
    assert make_policy("a-online").tie_break == "completion"
    listing = make_policy("a-online-listing")
    assert listing.tie_break == "listing" and listing.name == "a-online-listing"
    assert make_policy("a-online-ect").tie_break == "completion"  # old name kept, same policy


def _empty_market(scenario, seed, tau=256):
    """The zero-price market of an idle cluster over a ``tau``-slot window, and the policy (job rates)."""
    from ddl_gym.sim.engine import Simulator

    cluster, workload = scenario.episode(seed)
    policy = AOnlinePolicy()
    policy.reset(Simulator(cluster, workload, scenario.model), np.random.default_rng(seed))
    H, R = policy.C.shape
    beta = np.zeros((H, R, tau))
    Ccol = policy.C[:, :, None]
    mk = mc.Market(unit_price=price(beta / Ccol, policy.lam) / Ccol, free=Ccol - beta, worker_demand=policy.e,
                   ps_demand=policy.z, bw=policy.bw)
    return policy, mk


def _one_server_schedules(policy, mk, j, arch):
    """Every one-server configuration (m, p, N, L) that fits an idle server, in the listing's order."""
    rates, C, tau = policy.rates[j], policy.C, mk.tau
    out = []
    for m in range(policy.e.shape[0]):
        if arch == "ps":
            for p in range(policy.z.shape[0]):
                rho = rates.ps_rate[1, m, p]
                for L in sorted({math.ceil(rates.total / (n * rho)) for n in range(rates.chunks, 0, -1)}):
                    n = math.ceil(rates.total / (L * rho))
                    if L <= tau - 1 and n <= rates.chunks and np.any(np.all(C >= n * policy.e[m] + policy.z[p] - 1e-9, axis=1)):
                        out.append((m, n, L))
        else:
            for phi in range(1, rates.chunks + 1):
                d = math.ceil(rates.total / (phi * rates.ra_rate[1, m, phi]))
                if d <= tau - 1 and np.any(np.all(C >= phi * policy.e[m] - 1e-9, axis=1)):
                    out.append((m, phi, d))
    return out


@pytest.mark.parametrize("arch", ["ps", "allreduce_elastic"])
def test_on_an_idle_cluster_listing_takes_the_first_schedule_and_completion_the_earliest_end(arch):
    """At zero prices every schedule costs 0: the listing keeps the first one enumerated (the first worker
    type that fits; for ring-all-reduce the fewest workers that finish inside the window), the completion tie-break the one that ends
    first, i.e. the best type and the worker count with the smallest completion time (§7.1(3))."""
    policy, mk = _empty_market(_world(arch, 8, 4, 20), 0)
    one = "mincost2" if arch == "ps" else "ra_mincost1"
    shorter = 0
    for j in range(len(policy.rates)):
        configs = _one_server_schedules(policy, mk, j, arch)
        c_list, s_list = mc.FAST[one](policy.rates[j], mk, tie_break="listing")
        c_ect, s_ect = mc.FAST[one](policy.rates[j], mk, tie_break="completion")
        if not configs:
            assert s_list is None and s_ect is None
            continue
        assert c_list == 0.0 == c_ect
        m, n, L = configs[0]
        assert (s_list.worker_type, s_list.num_workers, s_list.length) == (m, n, L)
        assert s_ect.end == 1 + min(c[2] for c in configs) <= s_list.end
        shorter += s_ect.end < s_list.end
    assert shorter >= 4  # the two readings differ on most jobs


def test_completion_default_beats_listing_at_light_load_and_differs_from_it():
    scenario = _world("allreduce_elastic", 10, 5, 100)
    ect = _run(make_policy("a-online"), scenario, 0).summary()["weighted_completion"]
    listing = _run(make_policy("a-online-listing"), scenario, 0).summary()["weighted_completion"]
    assert ect < listing


# ----------------------------------------------------------------------------- fast == slow
def _tiny_markets():
    from tests.baselines.a_online.test_aonline import _tiny_market

    return [_tiny_market(seed) for seed in range(30)]


@pytest.mark.parametrize("routine", sorted(mc.FAST))
def test_pruned_routines_return_the_exhaustive_schedule(routine):
    """Pruning, the shortest-first order and an incumbent never change what a routine returns."""
    for job, mk in _tiny_markets():
        for tie in ("listing", "completion"):
            for strict in (False, True):
                ref = mc.FAST[routine](job, mk, tie_break=tie, strict_listing=strict, prune=False)
                got = mc.FAST[routine](job, mk, tie_break=tie, strict_listing=strict, prune=True)
                assert got == ref
                if ref[1] is not None:  # an incumbent as good as the result: nothing replaces it
                    assert mc.FAST[routine](job, mk, tie_break=tie, strict_listing=strict,
                                            incumbent=(ref[0], ref[1].end))[1] is None


@pytest.mark.parametrize(("arch", "horizon", "seed"), [("ps", 100, 0), ("ps", 15, 1), ("ps", 40, 2),
                                                       ("allreduce_elastic", 100, 0), ("allreduce_elastic", 15, 1)])
def test_fast_ect_schedules_equal_the_exhaustive_search(arch, horizon, seed):
    scenario = _world(arch, 10, 5, horizon)
    fast = _run(make_policy("a-online"), scenario, seed)
    slow = _run(make_policy("a-online", search="exhaustive"), scenario, seed)
    assert np.array_equal(fast.start, slow.start) and np.array_equal(fast.finish, slow.finish)


# ----------------------------------------------------------------------------- load axis
def test_load_axis_rule_picks_the_lightest_grid_window_with_load_at_least_one():
    from ddl_gym.reproduce.a_online import loaded_horizon_for, world_load

    seeds = (0, 1)
    T = loaded_horizon_for("ps", 8, 6, seeds)
    assert T in HORIZON_GRID and world_load("ps", 8, 6, T, seeds) >= LOAD_THRESHOLD
    lighter = [t for t in HORIZON_GRID if t > T]
    assert lighter and world_load("ps", 8, 6, min(lighter), seeds) < LOAD_THRESHOLD
    assert world_load("ps", 8, 6, 300, seeds) < 0.3  # the project's light setting


def test_offered_load_scales_with_the_arrival_window():
    cluster, workload = _world("ps", 8, 4, 50).episode(0)
    assert offered_load(cluster, workload, 25) == pytest.approx(2 * offered_load(cluster, workload, 50))


# ----------------------------------------------------------------------------- lower bound
def test_mean_busy_time_bound_on_hand_examples():
    # two jobs at 0: WSPT runs p=1 first ([0, 1], M = 0.5), then p=2 ([1, 3], M = 2)
    assert _wspt_mean_busy(np.array([0.0, 0.0]), np.array([2.0, 1.0]), np.array([1.0, 1.0])) == pytest.approx(2.5)
    # B (w=10, p=1) released at 1 preempts A (w=1, p=2): A busy [0,1] ∪ [2,3] → M = 1.5; B [1, 2] → M = 1.5
    assert _wspt_mean_busy(np.array([0.0, 1.0]), np.array([2.0, 1.0]), np.array([1.0, 10.0])) == pytest.approx(16.5)


@pytest.mark.parametrize(("arch", "horizon", "seed"), [("ps", 10, 0), ("ps", 60, 1), ("allreduce_elastic", 10, 2)])
def test_lower_bound_is_below_every_policy(arch, horizon, seed):
    scenario = _world(arch, 10, 4, horizon)
    cluster, workload = scenario.episode(seed)
    lb = lower_bound(cluster, workload)
    assert lb == max(trivial_lower_bound(cluster, workload), busy_time_bound(cluster, workload))
    for name in POLICIES:
        if arch != "ps" and name == "jain-greedy":
            continue
        value = _run(make_policy(name), scenario, seed).summary()["weighted_completion"] / SLOT_SECONDS
        assert lb <= value * (1 + 1e-9), name
    assert math.isfinite(lb) and lb > 0 and busy_time_bound(cluster, workload) > 0
