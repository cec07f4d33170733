"""Distillation into a copy of the clone (agents/dagger.py): labels are learnt, the agent still loads."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

from ddl_gym.agents.dagger import fit_from_clone  # noqa: E402
from ddl_gym.agents.finetune import START_AGENT  # noqa: E402
from ddl_gym.sim.model import ConfigError  # noqa: E402


def _demos(path: Path, env_kwargs: dict) -> Path:
    """One 'small' episode driven by srsf+ca, labelled with the last valid action other than srsf+ca's (if any)."""
    from ddl_gym.agents.imitation import expert_action
    from ddl_gym.envs.cluster_env import DDLClusterEnv

    env = DDLClusterEnv("small", **env_kwargs)
    obs, info = env.reset(seed=40_002)
    actions, labels, done = [], [], False
    while not done:
        action = expert_action(env, "srsf+ca", "window")
        actions.append(action)
        others = [a for a in np.flatnonzero(info["action_mask"]) if a != action]
        labels.append(int(others[-1]) if others else action)
        obs, _, terminated, truncated, info = env.step(action)
        done = terminated or truncated
    path.write_text(json.dumps({"scenario": "small", "env_kwargs": env_kwargs, "search": {"guide": "test", "simulations": 1},
                                "episodes": {"40002": {"seed": 40_002, "actions": actions, "labels": labels,
                                                       "wall_s": 0.0}}}))
    return path


def test_fit_from_clone_learns_the_labels_and_keeps_a_loadable_agent(tmp_path: Path) -> None:
    from ddl_gym.agents.policy import load_policy

    meta = json.loads(START_AGENT.with_suffix(".json").read_text())
    demos = _demos(tmp_path / "d.json", meta["env_kwargs"])
    path = fit_from_clone([demos], tmp_path / "agent", epochs=30, learning_rate=3e-3)
    fitted = json.loads(path.with_suffix(".json").read_text())["dagger"]
    assert fitted["accuracy_before"] + 0.3 < fitted["accuracy_after"]
    policy = load_policy(f"maskable-ppo:{path}")
    assert policy.metadata["finetuned_from"] == START_AGENT.name and policy.obs_stats is not None


def test_demonstrations_from_another_env_are_refused(tmp_path: Path) -> None:
    demos = _demos(tmp_path / "d.json", {"window": 4, "max_window": 16, "queue_order": "srsf"})
    with pytest.raises(ConfigError, match="recorded with env"):
        fit_from_clone([demos], tmp_path / "agent", epochs=1)
