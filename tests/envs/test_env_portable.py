"""The portable (size-free) observation: same shape on any cluster, features with the documented meaning."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from ddl_gym.envs.cluster_env import (PORTABLE_CLUSTER_FEATURES, PORTABLE_GLOBAL_FEATURES, PORTABLE_JOB_FEATURES,
                                      DDLClusterEnv)
from ddl_gym.scenarios import GBPS, Scenario, SyntheticSource
from ddl_gym.sim.model import ClusterSpec, ConfigError


def _random_size_scenario() -> Scenario:
    """A scenario whose cluster has 2..12 servers of 2 or 8 GPUs, drawn per episode."""

    def cluster(rng: np.random.Generator) -> ClusterSpec:
        return ClusterSpec.homogeneous(int(rng.integers(2, 13)), int(rng.choice([2, 8])),
                                       inter_bandwidth=10 * GBPS, intra_bandwidth=800 * GBPS)

    params = (("arrival_rate_per_s", 0.2), ("max_gpus", 4), ("num_jobs", 25))
    return Scenario(name="random-size", cluster=cluster, workload=SyntheticSource("scaled", params))


def _split(env: DDLClusterEnv, obs: np.ndarray) -> tuple[dict, np.ndarray, dict]:
    """Observation -> (cluster features, slot table K x F, global features) by the documented layout."""
    nc, nf, K = len(PORTABLE_CLUSTER_FEATURES), len(PORTABLE_JOB_FEATURES), env.max_window
    cluster = dict(zip(PORTABLE_CLUSTER_FEATURES, obs[:nc].tolist()))
    slots = obs[nc : nc + nf * K].reshape(K, nf)
    glob = dict(zip(PORTABLE_GLOBAL_FEATURES, obs[nc + nf * K :].tolist()))
    return cluster, slots, glob


def test_observation_shape_does_not_depend_on_the_cluster() -> None:
    shapes = {DDLClusterEnv(name).observation_space.shape for name in ("small", "default", "large")}
    assert shapes == {(9 + 11 * 8 + 9,)}
    legacy = {DDLClusterEnv(name, observation="legacy").observation_space.shape for name in ("small", "default")}
    assert len(legacy) == 2  # the legacy layout is tied to the server count


def test_cluster_size_may_change_between_episodes_with_the_portable_layout() -> None:
    env = DDLClusterEnv(_random_size_scenario(), window=4)
    sizes = set()
    for seed in range(8):
        obs, info = env.reset(seed=seed)
        sizes.add((env.sim.cluster.num_servers, env.sim.cluster.max_server_gpus))
        assert env.num_servers == env.sim.cluster.num_servers
        assert env.observation_space.contains(obs)
        for _ in range(10):
            obs, _, terminated, _, info = env.step(int(np.flatnonzero(info["action_mask"])[-1]))
            assert env.observation_space.contains(obs)
            if terminated:
                break
    assert len(sizes) > 2
    legacy = DDLClusterEnv(_random_size_scenario(), window=4, observation="legacy")
    with pytest.raises(ConfigError, match="observation='portable'"):
        for seed in range(8):
            legacy.reset(seed=seed)


@pytest.mark.parametrize("scenario", ["small", "default"])
def test_portable_features_match_their_definitions(scenario: str) -> None:
    env = DDLClusterEnv(scenario, placements=("pack", "spread"))
    obs, info = env.reset(seed=4)
    rng = np.random.default_rng(1)
    checked = 0
    for _ in range(60):
        sim = env.sim
        cluster, slots, glob = _split(env, obs)
        free = sim.free_per_server
        G, M = sim.cluster.num_gpus, sim.cluster.max_server_gpus
        for g in (1, 2, 4, 8):
            assert cluster[f"servers_free_{g}"] == pytest.approx(np.mean(free >= g), abs=1e-6)
        assert cluster["servers_empty"] == pytest.approx(np.mean(free == sim.server_gpus), abs=1e-6)
        assert cluster["most_free_server"] == pytest.approx(free.max() / M, abs=1e-6)
        assert cluster["servers_split"] == pytest.approx(np.mean(sim.split_count > 0), abs=1e-6)
        assert cluster["cluster_gpus"] == pytest.approx(math.log2(G) / 16, abs=1e-6)
        window = info["window_jobs"]
        for slot in range(env.max_window):
            row = dict(zip(PORTABLE_JOB_FEATURES, slots[slot].tolist()))
            if slot >= len(window):
                assert not any(row.values())
                continue
            j = window[slot]
            g = int(sim.workload.gpus[j])
            assert row["present"] == 1.0
            assert row["gpus"] == pytest.approx(min(1.0, math.log2(g) / 6), abs=1e-6)
            assert row["cluster_share"] == pytest.approx(g / G, abs=1e-6)
            assert row["servers_needed"] == pytest.approx(min(1.0, math.log2(math.ceil(g / M)) / 4), abs=1e-6)
            assert row["waited"] == pytest.approx(min(1.0, math.log1p(sim.now - sim.workload.arrival[j])
                                                      / math.log1p(1e6)), abs=1e-6)
            assert row["fits_now"] == float(g <= sim.num_free)
            assert row["free_share"] == pytest.approx(min(1.0, g / sim.num_free) if g <= sim.num_free else 1.0,
                                                      abs=1e-6)
            assert row["fits_one_server"] == float(g <= free.max() and g <= sim.num_free)
            if g <= sim.num_free:
                assert row["one_server_choices"] == pytest.approx(np.mean(free >= g), abs=1e-6)
            checked += 1
        queued_gpus = int(sim.workload.gpus[sim.queue].sum()) if sim.queue else 0
        assert glob["queued_demand"] == pytest.approx(min(1.0, math.log2(1 + queued_gpus / G) / 4), abs=1e-6)
        assert glob["free_fraction"] == pytest.approx(sim.num_free / G, abs=1e-6)
        obs, _, terminated, _, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        if terminated:
            break
    assert checked > 20


def test_max_window_pads_slots_that_stay_empty_and_masked() -> None:
    env = DDLClusterEnv("default", window=2, max_window=5, placements=("pack", "spread"))
    assert env.action_space.n == 1 + 5 * 2
    obs, info = env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(40):
        _, slots, _ = _split(env, obs)
        assert not slots[2:].any() and len(info["window_jobs"]) <= 2
        assert not info["action_mask"][1 + 2 * 2 :].any()
        obs, _, terminated, _, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        if terminated:
            break
    with pytest.raises(ConfigError, match="max_window"):
        DDLClusterEnv("small", window=4, max_window=3)
    with pytest.raises(ConfigError, match="needs observation='portable'"):
        DDLClusterEnv("small", window=4, max_window=6, observation="legacy")
    with pytest.raises(ConfigError, match="observation must be"):
        DDLClusterEnv("small", observation="flat")


@pytest.mark.parametrize("observation", ["portable", "legacy"])
def test_both_layouts_pass_both_checkers(observation: str) -> None:
    from gymnasium.utils.env_checker import check_env
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(DDLClusterEnv("small", observation=observation), skip_render_check=True)
        sb3_check_env(DDLClusterEnv("small", observation=observation), warn=True)


def test_same_window_contents_in_both_layouts() -> None:
    """The layouts differ only in what they show: decisions and masks are identical."""
    a, b = DDLClusterEnv("small"), DDLClusterEnv("small", observation="legacy")
    _, ia = a.reset(seed=6)
    _, ib = b.reset(seed=6)
    rng = np.random.default_rng(2)
    while True:
        np.testing.assert_array_equal(ia["action_mask"], ib["action_mask"])
        assert ia["window_jobs"] == ib["window_jobs"]
        action = int(rng.choice(np.flatnonzero(ia["action_mask"])))
        _, ra, ta, _, ia = a.step(action)
        _, rb, tb, _, ib = b.step(action)
        assert ra == rb and ta == tb
        if ta:
            break
