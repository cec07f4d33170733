"""Smoke tests: SB3 / sb3-contrib algorithms train on DDLCluster-Small-v0 (few hundred steps)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

from sb3_contrib import MaskablePPO  # noqa: E402
from stable_baselines3 import PPO  # noqa: E402

from ddl_gym.agents.train import make_vec_env  # noqa: E402

SMALL = {"window": 4}


def _params(model) -> np.ndarray:
    return np.concatenate([p.detach().cpu().numpy().ravel() for p in model.policy.parameters()])


@pytest.mark.parametrize("kind", ["dummy", "subproc"])
def test_maskable_ppo_trains_on_small(kind: str) -> None:
    venv = make_vec_env("small", SMALL, 2 if kind == "subproc" else 1, seed=0, kind=kind)
    try:
        model = MaskablePPO("MlpPolicy", venv, n_steps=64, batch_size=32, n_epochs=1, seed=0,
                            policy_kwargs={"net_arch": [16, 16]})
        before = _params(model)
        model.learn(total_timesteps=256)
        assert model.num_timesteps >= 256
        assert not np.allclose(before, _params(model)), "an update must change the weights"
        # Masks flow through the vec env: every env reports a mask with a valid action.
        masks = np.stack(venv.env_method("action_masks"))
        assert masks.shape == (venv.num_envs, venv.action_space.n) and masks.any(axis=1).all()
    finally:
        venv.close()


def test_plain_ppo_runs_on_small() -> None:
    venv = make_vec_env("small", {**SMALL, "invalid_action_penalty": 0.05, "max_decisions": 500}, 1, seed=0)
    try:
        model = PPO("MlpPolicy", venv, n_steps=128, batch_size=64, n_epochs=1, seed=0,
                    policy_kwargs={"net_arch": [16, 16]})
        model.learn(total_timesteps=256)
        assert model.num_timesteps >= 256
        action, _ = model.predict(venv.reset(), deterministic=True)
        assert 0 <= int(action[0]) < venv.action_space.n
    finally:
        venv.close()


@pytest.mark.slow
def test_ppo_unmasked_curve_script_smoke(tmp_path) -> None:
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[2] / "scripts" / "ppo_unmasked_curve.py"
    run = subprocess.run([sys.executable, str(script), "--timesteps", "64", "--n-steps", "64", "--eval-every", "64",
                          "--eval-seeds", "10000:10001", "--out", str(tmp_path)], capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 0, run.stderr
    table = (tmp_path / "table.md").read_text()
    assert "| random (all actions) |" in table and "| PPO (no masks) | 64 | 100% |" in table
    assert "0 truncated by the decision limit" in table
    assert (tmp_path / "curve.csv").read_text().count("\n") >= 4 and (tmp_path / "curve.png").stat().st_size > 0
