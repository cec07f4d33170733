"""Env helpers of issue 34: action_for / decode_action, observation_view, the placements alias, the
vector entry point, labelled rgb frames, and docstrings that match the scenarios."""

from __future__ import annotations

import re

import gymnasium as gym
import numpy as np
import pytest

import ddl_gym
from ddl_gym.envs.cluster_env import DDLClusterEnv
from ddl_gym.scenarios import get_scenario
from ddl_gym.sim.model import ConfigError


def test_action_for_and_decode_action_are_inverse_and_match_the_step_semantics() -> None:
    env = DDLClusterEnv("small", placements=("pack", "spread", "contention_aware"))
    obs, info = env.reset(seed=3)
    assert env.placements == env.placement_names == ("pack", "spread", "contention_aware")
    n_rules = len(env.placements)
    for action in range(env.action_space.n):
        decoded = env.decode_action(action)
        if action == 0:
            assert decoded.kind == "advance" and env.action_for(None) == 0
            continue
        assert decoded.kind == "start" and 1 + decoded.slot * n_rules + env.placements.index(decoded.placement) == action
        assert env.action_for(decoded.slot, decoded.placement) == action
        assert env.action_for(decoded.slot, env.placements.index(decoded.placement)) == action
    # aliases of placement names are accepted; the job in the slot is the env's window entry
    assert env.action_for(0, "ca") == env.action_for(0, "contention_aware") == 3
    assert env.decode_action(env.action_for(0, "pack")).job == info["window_jobs"][0]
    # starting via action_for starts exactly that job
    job = info["window_jobs"][0]
    env.step(env.action_for(0, "pack"))
    assert not np.isnan(env.sim.start_time[job])
    with pytest.raises(ConfigError, match="slot must be an integer in 0..7"):
        env.action_for(8, "pack")
    with pytest.raises(ConfigError, match="not one of this env's placements"):
        env.action_for(0, "first_fit")
    with pytest.raises(ConfigError, match="outside"):
        env.decode_action(env.action_space.n)


@pytest.mark.parametrize("observation", ["portable", "legacy"])
def test_observation_view_names_every_value_once(observation: str) -> None:
    env = DDLClusterEnv("small", observation=observation)
    obs, info = env.reset(seed=1)
    for _ in range(5):
        obs, *_, info = env.step(int(np.flatnonzero(info["action_mask"])[-1]))
    view = env.observation_view(obs)
    flat = np.concatenate([np.atleast_1d(np.asarray(v, dtype=np.float32)).ravel()
                           for block in view.values() for v in block.values()])
    assert flat.size == obs.size and sorted(flat.tolist()) == sorted(obs.tolist())
    # the slot block is slot-major: "present" marks exactly the jobs of the window
    assert int(view["jobs"]["present"].sum()) == len(info["window_jobs"])
    assert view["global"]["free_fraction"] == pytest.approx(env.sim.num_free / env.sim.cluster.num_gpus, abs=1e-6)
    if observation == "legacy":  # servers block is feature-major: "size" is 1 for the largest server
        assert view["servers"]["size"].shape == (env.num_servers,) and view["servers"]["size"].max() == 1.0
    with pytest.raises(ConfigError, match="shape"):
        env.observation_view(obs[:-1])


def test_vector_entry_point_builds_the_batched_env_with_the_same_episodes() -> None:
    from ddl_gym.envs.vector import BatchedVectorEnv

    batched = gym.make_vec("ddl_gym:DDLCluster-Small-v0", num_envs=2, vectorization_mode="vector_entry_point")
    sync = gym.make_vec("ddl_gym:DDLCluster-Small-v0", num_envs=2, vectorization_mode="sync")
    try:
        assert isinstance(batched, BatchedVectorEnv)
        obs_b, _ = batched.reset(seed=5)
        obs_s, _ = sync.reset(seed=5)
        np.testing.assert_array_equal(obs_b, obs_s)
        actions = np.zeros(2, dtype=np.int64)
        for _ in range(3):
            step_b, step_s = batched.step(actions), sync.step(actions)
            np.testing.assert_array_equal(step_b[0], step_s[0])
            np.testing.assert_allclose(step_b[1], step_s[1])
    finally:
        batched.close()
        sync.close()


def test_rgb_frames_are_labelled() -> None:
    env = DDLClusterEnv("small", render_mode="rgb_array")
    obs, info = env.reset(seed=0)
    for _ in range(10):
        obs, *_, info = env.step(int(np.flatnonzero(info["action_mask"])[-1]))
    frame = env.render()
    assert frame.dtype == np.uint8 and frame.ndim == 3 and frame.shape[1] == 640
    # axes and text: dark pixels in the left margin (tick labels) and along the bottom (x label)
    assert (frame[:, :40].min(axis=2) < 80).any() and (frame[-30:].min(axis=2) < 80).any()


def _minutes(text: str) -> float:
    match = re.search(r"arriving\s+over\s+(\d+)\s+minutes", " ".join(text.split()))
    assert match, "the docstring no longer states the arrival window"
    return float(match.group(1))


def test_docstrings_state_the_default_scenarios_arrival_window() -> None:
    scenario = get_scenario("default")
    spans = [float(w.arrival.max() - w.arrival.min()) / 60.0 for w in (scenario.episode(s)[1] for s in range(3))]
    stated = _minutes(DDLClusterEnv.__doc__ or "")
    assert abs(np.mean(spans) - stated) / stated < 0.15, (spans, stated)
    table = re.search(r"DDLCluster-v0``\s*\|.*?over (\d+) min", ddl_gym.__doc__ or "")
    assert table and float(table.group(1)) == stated
