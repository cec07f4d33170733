"""DDLClusterPlacement-v0: API checkers, determinism, masks, reward identity, pack equivalence."""

from __future__ import annotations

import pickle
import warnings

import gymnasium as gym
import numpy as np
import pytest

import ddl_gym  # noqa: F401  (registers the env ids)
from ddl_gym.baselines.classic.policy import ClassicPolicy
from ddl_gym.envs.placement_env import DDLPlacementEnv, pack_worker_action, random_worker_action
from ddl_gym.scenarios import get_scenario
from ddl_gym.sim.engine import Simulator, run_policy


def _rollout(env: DDLPlacementEnv, rng: np.random.Generator, max_steps: int = 100_000) -> tuple[float, dict]:
    total = 0.0
    info: dict = {}
    for _ in range(max_steps):
        mask = env.action_masks()
        obs, reward, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(mask))))
        assert env.observation_space.contains(obs)
        assert not info["invalid_action"]
        total += reward
        if terminated or truncated:
            break
    return total, info


def test_gymnasium_check_env() -> None:
    from gymnasium.utils.env_checker import check_env

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(DDLPlacementEnv("small"), skip_render_check=True)


def test_sb3_check_env() -> None:
    sb3 = pytest.importorskip("stable_baselines3.common.env_checker")
    sb3.check_env(DDLPlacementEnv("small"), warn=True)


def test_registered_id_builds_default_scenario() -> None:
    env = gym.make("DDLClusterPlacement-v0")
    assert env.unwrapped.scenario.name == "default"
    assert env.action_space.n == env.unwrapped.num_servers + 1
    env.close()


def test_two_envs_same_seed_same_actions_identical() -> None:
    a, b = DDLPlacementEnv("small"), DDLPlacementEnv("small")
    oa, ia = a.reset(seed=7)
    ob, ib = b.reset(seed=7)
    assert np.array_equal(oa, ob)
    rng = np.random.default_rng(0)
    while True:
        action = int(rng.choice(np.flatnonzero(a.action_masks())))
        ra, rb = a.step(action), b.step(action)
        assert ra[0].tobytes() == rb[0].tobytes() and ra[1:4] == rb[1:4]
        assert ra[4]["current_job"] == rb[4]["current_job"] and ra[4]["sim_time"] == rb[4]["sim_time"]
        if ra[2]:
            break
    assert a.result().summary() == b.result().summary()


def test_pickle_round_trip_mid_episode() -> None:
    env = DDLPlacementEnv("small")
    env.reset(seed=3)
    rng = np.random.default_rng(1)
    for _ in range(25):
        env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
    clone = pickle.loads(pickle.dumps(env))
    for _ in range(30):
        action = int(rng.choice(np.flatnonzero(env.action_masks())))
        assert env.step(action)[0].tobytes() == clone.step(action)[0].tobytes()
    assert np.array_equal(env.claimed, clone.claimed)


@pytest.mark.parametrize("reward", ["jct", "makespan"])
def test_return_equals_negative_objective(reward: str) -> None:
    env = DDLPlacementEnv("small", reward=reward)
    env.reset(seed=2)
    total, info = _rollout(env, np.random.default_rng(2))
    metrics = info["metrics"]
    # makespan_s runs from the first arrival, where the episode's clock starts.
    expected = metrics["total_jct_s"] if reward == "jct" else metrics["makespan_s"]
    assert -total * 3600.0 == pytest.approx(expected, rel=1e-9)


def test_masked_random_rollouts_never_over_commit_with_invariant_checks() -> None:
    for seed in range(3):
        env = DDLPlacementEnv("small", debug=True)  # the simulator raises on any over-commit
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        while not env.sim.done:
            mask = env.action_masks()
            job = env.current_job
            if job is not None:
                # Every valid server has an unclaimed free GPU; claims never exceed free GPUs.
                servers = np.flatnonzero(mask[:-1])
                assert np.all(env.sim.free_per_server[servers] - env.claimed[servers] > 0)
                assert np.all(env.claimed <= env.sim.free_per_server)
                assert env.sim.workload.gpus[job] <= env.sim.num_free
            _, _, terminated, _, info = env.step(int(rng.choice(np.flatnonzero(mask))))
            assert not info["invalid_action"]
            assert mask.any()
        assert info["metrics"]["jobs"] == env.sim.workload.num_jobs


def _state_with_a_full_server(env: DDLPlacementEnv) -> np.ndarray:
    full = np.flatnonzero(env.action_masks()[:-1] == 0)
    while full.size == 0 or env.current_job is None:  # until some server has no unclaimed free GPU
        env.step(pack_worker_action(env))
        full = np.flatnonzero(env.action_masks()[:-1] == 0)
    return full


def test_invalid_action_waits_and_is_penalised() -> None:
    """Default ``invalid_action="wait"``: the invalid server choice runs "wait" (drop claims, next event)."""
    env = DDLPlacementEnv("small", invalid_action_penalty=0.5)
    env.reset(seed=0)
    full = _state_with_a_full_server(env)
    twin = env.fork()
    assert env.action_masks()[env.wait_action] == 1
    _, reward, _, _, info = env.step(int(full[0]))
    _, wait_reward, _, _, wait_info = twin.step(env.wait_action)
    assert info["invalid_action"] and info["executed_action"] == env.wait_action
    assert not wait_info["invalid_action"]
    assert reward == wait_reward - 0.5
    assert (env.sim.now, env.claimed.tolist(), env.current_job) == (twin.sim.now, twin.claimed.tolist(), twin.current_job)


def test_invalid_action_noop_mode_changes_nothing() -> None:
    env = DDLPlacementEnv("small", invalid_action="noop", invalid_action_penalty=0.5)
    env.reset(seed=0)
    full = _state_with_a_full_server(env)
    before = (env.sim.now, env.claimed.tolist(), env.current_job)
    _, reward, _, _, info = env.step(int(full[0]))
    assert info["invalid_action"] and reward == -0.5 and info["executed_action"] == -1
    assert (env.sim.now, env.claimed.tolist(), env.current_job) == before


@pytest.mark.parametrize("scenario,order", [("small", "srsf"), ("small", "sjf"), ("small", "fifo"), ("default", "srsf")])
def test_pack_worker_heuristic_reproduces_native_order_plus_pack(scenario: str, order: str) -> None:
    scen = get_scenario(scenario)
    for seed in range(2):
        cluster, workload = scen.episode(seed)
        native = run_policy(Simulator(cluster, workload, scen.model), ClassicPolicy(order, "pack"))
        env = DDLPlacementEnv(scenario, order=order)
        env.reset(seed=seed)
        while not env.sim.done:
            env.step(pack_worker_action(env))
        mine = env.result()
        assert np.array_equal(mine.start, native.start) and np.array_equal(mine.finish, native.finish)
        assert [sorted(ids) for ids in mine.gpu_ids] == [sorted(ids) for ids in native.gpu_ids]


def test_random_worker_placement_spans_more_servers_than_pack() -> None:
    env = DDLPlacementEnv("default")
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    while not env.sim.done:
        env.step(random_worker_action(env, rng))
    spread = env.result()
    env.reset(seed=0)
    while not env.sim.done:
        env.step(pack_worker_action(env))
    packed = env.result()
    assert spread.n_servers.sum() > packed.n_servers.sum()


def test_wait_drops_partial_placement_and_advances_time() -> None:
    env = DDLPlacementEnv("small")
    env.reset(seed=0)
    while env.current_job is None or env.sim.workload.gpus[env.current_job] < 2:
        env.step(pack_worker_action(env))
    env.step(pack_worker_action(env))
    assert env.claimed.sum() == 1
    now = env.sim.now
    _, _, _, _, info = env.step(env.wait_action)
    assert not info["invalid_action"]
    assert env.sim.now > now
    assert env.claimed.sum() == 0


def test_padded_layout_runs_on_clusters_of_any_size_up_to_max_servers() -> None:
    from ddl_gym.scenarios import GBPS, Scenario, SyntheticSource
    from ddl_gym.sim.model import ClusterSpec, ConfigError

    def cluster(rng: np.random.Generator) -> ClusterSpec:
        return ClusterSpec.homogeneous(int(rng.integers(2, 7)), 4, inter_bandwidth=10 * GBPS,
                                       intra_bandwidth=800 * GBPS)

    scenario = Scenario(name="random-size", cluster=cluster,
                        workload=SyntheticSource("scaled", (("arrival_rate_per_s", 0.2), ("max_gpus", 8),
                                                            ("num_jobs", 12))))
    env = DDLPlacementEnv(scenario, max_servers=6)
    assert env.action_space.n == 7 and env.wait_action == 6
    assert env.observation_space.shape == (4 * 6 + 8 + 7,)
    sizes = set()
    for seed in range(6):
        obs, info = env.reset(seed=seed)
        S = env.sim.cluster.num_servers
        sizes.add(S)
        while True:
            mask = info["action_mask"]
            assert not mask[S:6].any()  # absent servers are never valid
            np.testing.assert_array_equal(obs[3 * 6 : 4 * 6], [1.0] * S + [0.0] * (6 - S))  # present
            assert env.observation_space.contains(obs)
            obs, _, terminated, truncated, info = env.step(pack_worker_action(env))
            assert not info["invalid_action"]
            if terminated or truncated:
                break
        assert terminated
    assert len(sizes) > 2
    with pytest.raises(ConfigError, match="max_servers"):
        DDLPlacementEnv("small", max_servers=3)
    calls = iter(range(1_000))

    def growing(rng: np.random.Generator) -> ClusterSpec:  # 2 servers when the env is built, 5 afterwards
        return ClusterSpec.homogeneous(2 if next(calls) == 0 else 5, 4, inter_bandwidth=10 * GBPS,
                                       intra_bandwidth=800 * GBPS)

    grows = Scenario(name="growing", cluster=growing, workload=scenario.workload)
    with pytest.raises(ConfigError, match="drew 5 servers, more than max_servers=2"):
        DDLPlacementEnv(grows, max_servers=2).reset(seed=0)
