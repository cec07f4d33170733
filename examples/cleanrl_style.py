"""A single-file, CleanRL-style policy-gradient loop on the masked env (PyTorch only, no RL library).

    python examples/cleanrl_style.py            # 3 updates on the small scenario: a smoke-sized budget
    python examples/cleanrl_style.py 300        # more updates

REINFORCE with a mean baseline on whole episodes of ``DDLCluster-Small-v0``, 2 envs in a Gymnasium
vector env; invalid actions are masked out of the categorical distribution (logits of masked
actions set to -inf), so the agent never picks one. Everything is seeded.
"""

import sys

import gymnasium as gym
import numpy as np
import torch
from torch import nn

import ddl_gym  # noqa: F401  (registers the env ids)

torch.set_num_threads(1)
torch.manual_seed(0)
updates = int(sys.argv[1]) if len(sys.argv) > 1 else 3
num_envs = 2
envs = gym.make_vec("ddl_gym:DDLCluster-Small-v0", num_envs=num_envs, vectorization_mode="sync")
n_obs, n_actions = envs.single_observation_space.shape[0], int(envs.single_action_space.n)
policy = nn.Sequential(nn.Linear(n_obs, 64), nn.Tanh(), nn.Linear(64, n_actions))
optimizer = torch.optim.Adam(policy.parameters(), lr=3e-3)

for update in range(updates):
    obs, info = envs.reset(seed=1000 * update)
    log_probs: list[list[torch.Tensor]] = [[] for _ in range(num_envs)]
    returns = np.zeros(num_envs)
    done = np.zeros(num_envs, dtype=bool)
    while not done.all():
        logits = policy(torch.as_tensor(obs, dtype=torch.float32))
        mask = torch.as_tensor(info["action_mask"], dtype=torch.bool)
        dist = torch.distributions.Categorical(logits=logits.masked_fill(~mask, float("-inf")))
        action = dist.sample()
        for i in np.flatnonzero(~done):
            log_probs[i].append(dist.log_prob(action)[i])
        obs, reward, terminated, truncated, info = envs.step(action.numpy())
        returns += np.where(done, 0.0, reward)
        done |= terminated | truncated  # each env's first episode only (next-step autoreset follows)
    advantage = torch.as_tensor(returns - returns.mean(), dtype=torch.float32)
    loss = -sum(advantage[i] * torch.stack(log_probs[i]).sum() for i in range(num_envs)) / num_envs
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"update {update}: mean return {returns.mean():.2f} (−Σ JCT in hours)")
envs.close()
