"""The env core (``ddl_gym/envs/core.py``): its compiled and plain builds agree, and ``step_into`` /
``reset_into`` (what the batched vector envs call) write exactly what ``step`` / ``reset`` return."""

from __future__ import annotations

import numpy as np
import pytest

from ddl_gym.envs import cluster_env
from ddl_gym.envs import core as env_core
from ddl_gym.envs.cluster_env import DDLClusterEnv
from ddl_gym.envs.vector import INFO_FIELDS

# Worlds that reach every branch of the core: homogeneous 4-GPU servers (default, small), servers of
# 4-32 GPUs (sjf-bco: free levels up to 8, empty servers counted per capacity), arrival order
# (queue_order="fifo": the window is the queue's head), padded slots (max_window > window).
_CASES = {
    "default": ("default", {}),
    "small-fifo": ("small", {"queue_order": "fifo"}),
    "sjf-bco-sjf-padded": ("sjf-bco", {"queue_order": "sjf", "window": 4, "max_window": 6}),
}


def _episode(env: DDLClusterEnv, seed: int, steps: int) -> list[tuple]:
    """Observations, rewards, flags and infos of a masked random walk (the actions come from its own generator)."""
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    trace = [(obs.tobytes(), info["action_mask"].tobytes(), tuple(info["window_jobs"]))]
    for _ in range(steps):
        action = int(rng.choice(np.flatnonzero(info["action_mask"]))) if rng.random() < 0.9 else 10_000
        obs, reward, terminated, truncated, info = env.step(action)
        trace.append((obs.tobytes(), reward, terminated, truncated, info["action_mask"].tobytes(),
                      tuple(info["window_jobs"]), tuple(info[name] for name, _ in INFO_FIELDS), str(info.get("metrics"))))
        if terminated or truncated:
            break
    return trace


@pytest.mark.skipif(env_core.BUILD != "native", reason="the compiled env core is not built: only one build to compare")
@pytest.mark.parametrize("case", sorted(_CASES))
def test_compiled_and_plain_cores_give_identical_episodes(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    scenario, kwargs = _CASES[case]
    compiled = _episode(DDLClusterEnv(scenario, **kwargs), seed=4, steps=400)
    monkeypatch.setattr(cluster_env, "DecisionCore", env_core.PurePythonDecisionCore)
    monkeypatch.setattr(cluster_env, "PortableLayout", env_core.PurePythonPortableLayout)
    env = DDLClusterEnv(scenario, **kwargs)
    plain = _episode(env, seed=4, steps=400)
    assert type(env._core) is env_core.PurePythonDecisionCore
    assert type(env._core.layout) is env_core.PurePythonPortableLayout
    assert len(compiled) > 50 and compiled == plain


@pytest.mark.parametrize("observation", ["portable", "legacy"])
def test_step_into_writes_what_step_returns(observation: str) -> None:
    kwargs = {"observation": observation, "window": 4}
    stepped, direct = DDLClusterEnv("small", **kwargs), DDLClusterEnv("small", **kwargs)
    n_obs, n_actions = stepped.observation_space.shape[0], stepped.action_space.n
    # Row 1 of 3, the other rows and the row itself pre-filled: empty window slots must be written as zeros.
    obs_rows = np.full((3, n_obs), 7.0, dtype=np.float32)
    mask_rows = np.full((3, n_actions), 5, dtype=np.int8)
    obs, info = stepped.reset(seed=2)
    values = direct.reset_into(obs_rows, mask_rows, 1, seed=2)
    rng = np.random.default_rng(2)
    ends = 0
    for _ in range(300):
        np.testing.assert_array_equal(obs_rows[1], obs)
        np.testing.assert_array_equal(mask_rows[1], info["action_mask"])
        assert values == tuple(info[name] for name, _ in INFO_FIELDS)
        assert (obs_rows[[0, 2]] == 7.0).all() and (mask_rows[[0, 2]] == 5).all()  # other rows untouched
        action = int(rng.choice(np.flatnonzero(info["action_mask"]))) if rng.random() < 0.9 else 10_000
        obs, reward, terminated, truncated, info = stepped.step(action)
        r, te, tr, values, metrics = direct.step_into(action, obs_rows, mask_rows, 1)
        assert (r, te, tr) == (reward, terminated, truncated)
        assert metrics == info.get("metrics")
        if te or tr:
            ends += 1
            obs, info = stepped.reset(seed=10 + ends)
            values = direct.reset_into(obs_rows, mask_rows, 1, seed=10 + ends)
    assert ends >= 1


def test_vector_groups_step_ddlcluster_envs_directly_and_others_generically() -> None:
    import gymnasium as gym

    from ddl_gym.envs.vector import _direct_env

    plain = gym.make("ddl_gym:DDLCluster-v0", disable_env_checker=True)
    assert _direct_env(plain) is plain.unwrapped
    assert _direct_env(gym.make("ddl_gym:DDLCluster-v0")) is not None  # the passive checker passes through
    # A wrapper that changes steps (here a time limit) keeps the generic path.
    assert _direct_env(gym.make("ddl_gym:DDLCluster-v0", max_episode_steps=5)) is None
    assert _direct_env(gym.make("CartPole-v1")) is None
