"""ddl-gym under the gymnasium that ray[rllib] pins (1.2.2), in the Ray venv: the env passes Gymnasium's
checker, plain and wrapped for RLlib, and a masked episode runs to the end on the vector API too."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
from gymnasium.utils.env_checker import check_env

import ddl_gym  # noqa: F401  (registers the ids)
from ddl_gym.wrappers import ACTION_MASK_KEY, rllib_env_creator


def test_the_ray_venv_has_the_pinned_gymnasium():
    assert gym.__version__ == "1.2.2"


def test_env_and_rllib_wrapper_pass_gymnasiums_checker_and_run_an_episode():
    check_env(gym.make("ddl_gym:DDLCluster-Small-v0").unwrapped, skip_render_check=True)
    env = rllib_env_creator({"env_id": "DDLCluster-Small-v0"})
    check_env(env, skip_render_check=True)
    obs, info = env.reset(seed=3)
    rng = np.random.default_rng(0)
    steps = 0
    while True:
        allowed = np.flatnonzero(obs[ACTION_MASK_KEY] > 0)
        obs, _, terminated, truncated, info = env.step(int(rng.choice(allowed)))
        steps += 1
        assert not info.get("invalid_action", False)
        if terminated or truncated:
            break
    assert terminated and steps > 10


def test_vector_env_steps_with_masks():
    envs = gym.make_vec("ddl_gym:DDLCluster-Small-v0", num_envs=2, vectorization_mode="sync")
    obs, info = envs.reset(seed=[0, 1])
    masks = np.asarray(info["action_mask"])
    assert masks.shape[0] == 2 and masks.any(axis=1).all()
    actions = np.array([int(np.flatnonzero(m)[0]) for m in masks])
    obs, reward, terminated, truncated, info = envs.step(actions)
    assert obs.shape[0] == 2 and np.isfinite(reward).all()
    envs.close()
