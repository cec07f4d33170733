"""A hand-written heuristic driven through the Gymnasium env, with the env's helpers.

Rule: among the queued jobs in the window that fit now, start the one with the shortest estimated
run time, placed contention-aware; if none fits, advance time. No index arithmetic: the named
observation view and ``action_for`` do it.

    python examples/heuristic_env.py            # small scenario, seeds 0 and 1
"""

import gymnasium as gym
import numpy as np

import ddl_gym  # noqa: F401  (registers the env ids)

env = gym.make("ddl_gym:DDLCluster-Small-v0")
core = env.unwrapped  # the DDLClusterEnv under Gymnasium's wrappers

for seed in (0, 1):
    obs, info = env.reset(seed=seed)
    done = False
    while not done:
        jobs = core.observation_view(obs)["jobs"]
        candidates = np.flatnonzero((jobs["present"] > 0) & (jobs["fits_now"] > 0))
        if candidates.size:
            slot = int(candidates[np.argmin(jobs["est_runtime"][candidates])])
            action = core.action_for(slot, "contention_aware")
        else:
            action = core.action_for(None)  # advance
        obs, reward, terminated, truncated, info = env.step(action)
        done = terminated or truncated
    print(f"seed {seed}: average JCT {info['metrics']['avg_jct_s']:.1f} s, "
          f"makespan {info['metrics']['makespan_s']:.0f} s")
env.close()
