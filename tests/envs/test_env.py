"""DDLCluster-v0: checkers, masks, reward identity, determinism, pickling, vector envs, rendering."""

from __future__ import annotations

import pickle
import warnings

import gymnasium as gym
import numpy as np
import pytest

import ddl_gym
from ddl_gym.baselines.classic.policy import ClassicPolicy
from ddl_gym.envs.cluster_env import DDLClusterEnv
from ddl_gym.scenarios import get_scenario
from ddl_gym.sim.engine import Simulator, run_policy
from ddl_gym.sim.model import ConfigError


def rollout(env: gym.Env, seed: int, actions_rng: np.random.Generator, max_steps: int = 10_000):
    obs, info = env.reset(seed=seed)
    trace = [(obs.copy(), 0.0, info)]
    for _ in range(max_steps):
        action = int(actions_rng.choice(np.flatnonzero(info["action_mask"])))
        obs, reward, terminated, truncated, info = env.step(action)
        trace.append((obs.copy(), reward, info))
        if terminated or truncated:
            break
    return trace


def test_registered_ids_and_module_prefix_form():
    env = gym.make("ddl_gym:DDLCluster-v0")
    assert isinstance(env.unwrapped, DDLClusterEnv)
    for env_id in ("DDLCluster-Small-v0", "DDLCluster-Large-v0"):
        assert env_id in gym.registry
    gym.register_envs(ddl_gym)


def test_gymnasium_and_sb3_checkers_pass_without_warnings():
    from gymnasium.utils.env_checker import check_env
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(DDLClusterEnv("small"), skip_render_check=True)
        sb3_check_env(DDLClusterEnv("small"), warn=True)


def test_return_equals_minus_total_jct_scaled():
    env = DDLClusterEnv("small", reward_scale=1 / 3600)
    trace = rollout(env, 4, np.random.default_rng(0))
    total = sum(r for _, r, _ in trace)
    metrics = trace[-1][2]["metrics"]
    assert total == pytest.approx(-metrics["total_jct_s"] / 3600, rel=1e-9)
    assert metrics["jobs"] == env.sim.workload.num_jobs


@pytest.mark.parametrize("reward,key", [("makespan", "makespan_s"), ("weighted_jct", "weighted_jct_s")])
def test_reward_variants_sum_to_their_objective(reward, key):
    env = DDLClusterEnv("small", reward=reward, reward_scale=1.0)
    trace = rollout(env, 2, np.random.default_rng(1))
    assert sum(r for _, r, _ in trace) == pytest.approx(-trace[-1][2]["metrics"][key], rel=1e-9)


def test_masks_are_int8_always_nonempty_and_mirror_info():
    env = DDLClusterEnv("small", debug=True)
    obs, info = env.reset(seed=0)
    rng = np.random.default_rng(0)
    done = False
    while not done:
        mask = env.action_masks()
        assert mask.dtype == np.int8 and mask.any()
        np.testing.assert_array_equal(mask, info["action_mask"])
        assert env.observation_space.contains(obs)
        obs, _, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(mask))))
        done = term or trunc
    assert env.action_masks().tolist()[0] == 1  # terminal state still has the no-op


def test_invalid_action_waits_and_is_penalised():
    """Default ``invalid_action="wait"``: a masked start runs "advance" and costs the penalty on top."""
    env = DDLClusterEnv("small", invalid_action_penalty=0.5)
    obs, info = env.reset(seed=0)
    invalid = np.flatnonzero(info["action_mask"] == 0)
    assert invalid.size and info["action_mask"][0] == 1, "expected a masked action and a valid advance"
    twin = env.fork()
    obs2, reward, _, _, info2 = env.step(int(invalid[-1]))
    obs3, wait_reward, _, _, info3 = twin.step(0)
    assert info2["invalid_action"] is True and info2["executed_action"] == 0
    assert info3["invalid_action"] is False and info3["executed_action"] == 0
    assert reward == wait_reward - 0.5
    assert env.sim.now == twin.sim.now > 0 and env.sim.queue == twin.sim.queue
    np.testing.assert_array_equal(obs2, obs3)
    _, _, _, _, info4 = env.step(10_000)  # out of range: also invalid, no exception
    assert info4["invalid_action"] is True


def test_invalid_action_noop_mode_is_the_first_release_behaviour():
    env = DDLClusterEnv("small", invalid_action="noop", invalid_action_penalty=0.5)
    obs, info = env.reset(seed=0)
    invalid = np.flatnonzero(info["action_mask"] == 0)
    now, queued = env.sim.now, list(env.sim.queue)
    obs2, reward, term, trunc, info2 = env.step(int(invalid[-1]))
    assert info2["invalid_action"] is True and reward == -0.5 and info2["executed_action"] == -1
    assert env.sim.now == now and env.sim.queue == queued
    np.testing.assert_array_equal(obs, obs2)


def test_two_envs_same_seed_same_actions_identical():
    a = DDLClusterEnv("default", placements=("pack", "random", "contention_aware"))
    b = DDLClusterEnv("default", placements=("pack", "random", "contention_aware"))
    ta = rollout(a, 7, np.random.default_rng(3))
    tb = rollout(b, 7, np.random.default_rng(3))
    assert len(ta) == len(tb)
    for (oa, ra, ia), (ob, rb, ib) in zip(ta, tb):
        np.testing.assert_array_equal(oa, ob)
        assert ra == rb
        assert ia.keys() == ib.keys()
        for k in ia:
            np.testing.assert_array_equal(np.asarray(ia[k], dtype=object), np.asarray(ib[k], dtype=object))


def test_different_seeds_draw_different_workloads():
    env = DDLClusterEnv("default")
    env.reset(seed=1)
    first = env.sim.workload.arrival.copy()
    env.reset(seed=2)
    assert not np.array_equal(first, env.sim.workload.arrival)


def test_reset_seed_matches_harness_episode():
    env = DDLClusterEnv("default")
    env.reset(seed=11)
    _, workload = get_scenario("default").episode(11)
    np.testing.assert_array_equal(env.sim.workload.arrival, workload.arrival)
    np.testing.assert_array_equal(env.sim.workload.iterations, workload.iterations)


def test_fifo_pack_through_actions_equals_native_run():
    env = DDLClusterEnv("default", queue_order="fifo", placements=("pack", "spread", "contention_aware"))
    obs, info = env.reset(seed=5)
    done = False
    while not done:
        # FIFO+pack as an env action: head of the FIFO window with rule 0 (pack), else advance.
        action = 1 if info["action_mask"][1] else 0
        obs, _, term, trunc, info = env.step(action)
        done = term or trunc
    cluster, workload = get_scenario("default").episode(5)
    native = run_policy(Simulator(cluster, workload, get_scenario("default").model), ClassicPolicy("fifo", "pack"))
    assert info["metrics"] == native.summary()
    np.testing.assert_array_equal(env.result().finish, native.finish)


def test_pickle_round_trip_mid_episode():
    env = DDLClusterEnv("small")
    rollout_rng = np.random.default_rng(0)
    obs, info = env.reset(seed=3)
    for _ in range(5):
        obs, *_ , info = env.step(int(rollout_rng.choice(np.flatnonzero(info["action_mask"]))))
    clone = pickle.loads(pickle.dumps(env))
    action = int(np.flatnonzero(info["action_mask"])[-1])
    r1 = env.step(action)
    r2 = clone.step(action)
    np.testing.assert_array_equal(r1[0], r2[0])
    assert r1[1:4] == r2[1:4]


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_gymnasium_vector_envs(mode):
    envs = gym.make_vec("ddl_gym:DDLCluster-Small-v0", num_envs=2, vectorization_mode=mode)
    obs, infos = envs.reset(seed=0)
    assert obs.shape == (2, envs.single_observation_space.shape[0])
    for _ in range(20):
        masks = np.stack(envs.unwrapped.call("action_masks"))
        actions = np.array([np.flatnonzero(m)[0] for m in masks])
        obs, rewards, term, trunc, infos = envs.step(actions)
        assert np.all(np.isfinite(rewards))
    envs.close()


def test_sb3_dummy_and_subproc_vec_envs():
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    for cls in (DummyVecEnv, SubprocVecEnv):
        venv = make_vec_env("ddl_gym:DDLCluster-Small-v0", n_envs=2, seed=0, vec_env_cls=cls)
        venv.reset()
        masks = np.stack(venv.env_method("action_masks"))
        obs, rewards, dones, infos = venv.step(np.array([np.flatnonzero(m)[0] for m in masks]))
        assert obs.shape[0] == 2 and len(infos) == 2
        venv.close()


def test_render_modes():
    env = DDLClusterEnv("small", render_mode="ansi")
    env.reset(seed=0)
    env.step(int(np.flatnonzero(env.action_masks())[-1]))
    text = env.render()
    assert isinstance(text, str) and "free GPUs" in text and "S00[" in text
    env = DDLClusterEnv("small", render_mode="rgb_array")
    rollout(env, 0, np.random.default_rng(0))
    image = env.render()
    assert image.dtype == np.uint8 and image.ndim == 3 and image.shape[2] == 3
    assert (image != 255).any()  # something was drawn
    env.close()
    env.close()  # idempotent


def test_config_errors_are_clear():
    with pytest.raises(ConfigError, match="unknown scenario"):
        DDLClusterEnv("no-such-scenario")
    with pytest.raises(ConfigError, match="queue_order"):
        DDLClusterEnv("small", queue_order="lifo")
    with pytest.raises(ConfigError, match="task-level engine"):
        DDLClusterEnv("ada-srsf")
    with pytest.raises(ConfigError, match="placement rule"):
        DDLClusterEnv("small", placements=("pack", "teleport"))


def test_env_fork_replays_identically():
    env = DDLClusterEnv("small", placements=("pack", "random", "contention_aware"))
    obs, info = env.reset(seed=9)
    twin = env.fork()
    rng_a, rng_b = np.random.default_rng(2), np.random.default_rng(2)
    for _ in range(30):
        a = int(rng_a.choice(np.flatnonzero(env.action_masks())))
        b = int(rng_b.choice(np.flatnonzero(twin.action_masks())))
        ra, rb = env.step(a), twin.step(b)
        np.testing.assert_array_equal(ra[0], rb[0])
        assert ra[1:4] == rb[1:4]
        if ra[2]:
            break
