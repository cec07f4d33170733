"""PPO fine-tuning of the shipped clone (agents/finetune.py): a tiny run that must keep its promises.

One module-scoped run (512 steps, critic alone for the first 256) is shared: the actor may not
move during the critic phase and must move after it, the saved agent loads and never emits a
masked action, and a second run with the same seed gives the same weights bit for bit.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

from ddl_gym.agents.finetune import FinetuneConfig, action_probabilities, finetune, read_curve, soften  # noqa: E402
from ddl_gym.sim.model import ConfigError  # noqa: E402

TINY = FinetuneConfig(timesteps=512, critic_steps=256, n_steps=128, batch_size=64, n_epochs=2, learning_rate=1e-3,
                      eval_every=10**9, checkpoint_every=256, val_seeds=(40_000, 40_001))


def _params(zip_path: Path) -> dict[str, np.ndarray]:
    from stable_baselines3.common.save_util import load_from_zip_file

    _, params, _ = load_from_zip_file(zip_path, device="cpu")
    return {k: v.numpy().copy() for k, v in params["policy"].items()}


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("ft") / "run"
    finetune(TINY, out, log=lambda *a: None)
    return out


def test_critic_learns_alone_first_then_the_actor_moves(tiny_run: Path) -> None:
    start = _params(Path(TINY.start))
    after_critic = _params(tiny_run / "checkpoints" / f"step_{256:012d}" / "model.zip")
    final = _params(tiny_run / "agent.zip")
    actor_body = [k for k in start if k.startswith("mlp_extractor.policy_net")]
    critic = [k for k in start if k.startswith(("value_net", "mlp_extractor.value_net"))]
    assert actor_body and critic
    assert all(np.array_equal(start[k], after_critic[k]) for k in actor_body)  # actor lr 0 while the critic learns
    assert any(not np.array_equal(start[k], after_critic[k]) for k in critic)
    assert any(not np.array_equal(after_critic[k], final[k]) for k in actor_body)


def test_finetuned_agent_loads_and_respects_masks(tiny_run: Path) -> None:
    from ddl_gym.agents.policy import load_policy
    from ddl_gym.envs.cluster_env import DDLClusterEnv

    policy = load_policy(f"maskable-ppo:{tiny_run / 'agent.zip'}")
    assert policy.metadata["finetuned_from"] == "agent-transfer.zip" and policy.metadata["rl_timesteps"] == 512
    env = DDLClusterEnv("small", **policy.env_kwargs)  # another cluster size: the observation is portable
    obs, info = env.reset(seed=40_001)
    done, steps = False, 0
    while not done:
        action = policy.act(obs, info["action_mask"], info)
        assert info["action_mask"][action] == 1
        obs, _, terminated, truncated, info = env.step(action)
        done, steps = terminated or truncated, steps + 1
    assert steps > 0 and info["metrics"]["avg_jct_s"] > 0
    curve = read_curve(tiny_run)
    assert [r["timesteps"] for r in curve] == [0, 512]
    assert curve[0]["vs_srsf+ca_pct"] == 0.0  # step 0 is the softened clone: same greedy actions as its teacher


def test_same_seed_same_weights(tiny_run: Path, tmp_path: Path) -> None:
    finetune(TINY, tmp_path / "again", log=lambda *a: None)
    first, second = _params(tiny_run / "agent.zip"), _params(tmp_path / "again" / "agent.zip")
    assert all(np.array_equal(first[k], second[k]) for k in first)


def test_soften_keeps_the_greedy_action_and_reaches_the_target() -> None:
    from sb3_contrib import MaskablePPO

    model = MaskablePPO.load(TINY.start, device="cpu")
    rng = np.random.default_rng(0)
    obs = rng.normal(size=(64, model.observation_space.shape[0])).astype(np.float32)
    masks = rng.random((64, model.action_space.n)) < 0.5
    masks[:, 0] = True
    before = action_probabilities(model, obs, masks)
    target = 0.7 * float(np.median(before.max(axis=1)))
    t = soften(model, obs, masks, target)
    after = action_probabilities(model, obs, masks)
    assert t > 1.0
    assert np.array_equal(before.argmax(axis=1), after.argmax(axis=1))
    assert np.median(after.max(axis=1)) == pytest.approx(target, abs=1e-3)
    assert soften(model, obs, masks, 0.999) == 1.0  # already softer than that: left alone


@pytest.mark.parametrize("kwargs, message", [
    ({"train_seeds": (39_000, 40_010)}, "overlap the validation seeds"),
    ({"train_seeds": (999_990, 1_000_010)}, "held-out seeds"),
])
def test_training_seeds_never_touch_evaluation_seeds(kwargs: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        FinetuneConfig(**kwargs)


def test_an_existing_run_is_not_overwritten(tiny_run: Path) -> None:
    with pytest.raises(ConfigError, match="exists"):
        finetune(TINY, tiny_run, log=lambda *a: None)


def test_an_interrupted_run_resumes_from_its_checkpoint(tiny_run: Path, tmp_path: Path) -> None:
    import json
    import shutil

    out = tmp_path / "cut"
    shutil.copytree(tiny_run, out)
    shutil.rmtree(out / "checkpoints" / f"step_{512:012d}")  # as if killed after the checkpoint at 256
    (out / "agent.zip").unlink()
    with pytest.raises(ConfigError, match="differs"):  # another setting cannot continue this run
        finetune(FinetuneConfig(**{**TINY.__dict__, "learning_rate": 5e-4}), out, resume=True, log=lambda *a: None)
    path = finetune(TINY, out, resume=True, log=lambda *a: None)
    assert json.loads((out / "resumes.json").read_text()) == [256]
    assert json.loads(path.with_suffix(".json").read_text())["rl_timesteps"] == 512
    assert [r["timesteps"] for r in read_curve(out)] == [0, 512]
