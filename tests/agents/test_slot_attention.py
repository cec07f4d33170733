"""The slot-attention policy of ``train_v1 --network attention`` (ddl_gym.agents.slot_attention)."""

from __future__ import annotations

import json

import pytest

from ddl_gym.agents.slot_attention import SlotAttentionPolicy, observation_blocks
from ddl_gym.agents.train_v1 import main as train_v1
from ddl_gym.relative_reward import make_v1_env


def _policy(extra: int = 0, placements: tuple[str, ...] = ("pack", "spread", "contention_aware")):
    from gymnasium import spaces

    env = make_v1_env("small", placements=placements)
    blocks = observation_blocks(env.unwrapped.observation_layout, int(env.action_space.n), extra=extra)
    n = env.observation_space.shape[0] + extra
    policy = SlotAttentionPolicy(spaces.Box(-10, 10, (n,)), env.action_space, lambda _: 1e-3, blocks=blocks)
    return env, blocks, policy


def test_blocks_follow_the_env_layout_and_a_wrong_size_is_refused():
    env, blocks, _ = _policy(placements=("pack", "spread", "contention_aware", "fewest_servers"))
    n = (blocks["cluster"] + blocks["slots"] * blocks["slot_features"] + blocks["global"]
         + blocks["running_global"] + blocks["running_slots"] * blocks["running_features"])
    assert n == env.observation_space.shape[0] and blocks["placements"] == 4
    from gymnasium import spaces

    with pytest.raises(ValueError, match="layout gives"):
        SlotAttentionPolicy(spaces.Box(-10, 10, (n + 1,)), env.action_space, lambda _: 1e-3, blocks=blocks)
    with pytest.raises(ValueError, match="not 1 \\+"):
        observation_blocks(env.unwrapped.observation_layout, int(env.action_space.n) + 1)


def test_permuting_queue_slots_permutes_their_logits_and_the_actor_ignores_the_future():
    import torch

    env, b, policy = _policy(extra=3)
    n_obs = env.observation_space.shape[0]
    obs = torch.randn(4, n_obs + 3)
    start, width, slots, P = b["cluster"], b["slot_features"], b["slots"], b["placements"]
    perm = torch.randperm(slots, generator=torch.Generator().manual_seed(1))
    shuffled = obs.clone()
    block = obs[:, start:start + slots * width].reshape(4, slots, width)
    shuffled[:, start:start + slots * width] = block[:, perm].reshape(4, -1)
    with torch.no_grad():
        logits = policy.get_distribution(obs).distribution.logits
        moved = policy.get_distribution(shuffled).distribution.logits
        assert torch.allclose(moved[:, 0], logits[:, 0], atol=1e-5)  # advance: a function of the set
        per_slot, moved_slot = logits[:, 1:].reshape(4, slots, P), moved[:, 1:].reshape(4, slots, P)
        assert torch.allclose(moved_slot, per_slot[:, perm], atol=1e-5)
        future = obs.clone()
        future[:, n_obs:] += 5.0
        assert torch.equal(policy.get_distribution(future).distribution.logits, logits)
        assert not torch.allclose(policy.predict_values(future), policy.predict_values(obs))


def test_an_attention_run_ships_an_agent_the_harness_runs(tmp_path):
    """A small attention network (width 32, 1 layer) trains, records its size, and the harness runs it."""
    from ddl_gym.harness import evaluate
    from ddl_gym.suite import get_task

    out = tmp_path / "attn"
    common = ["--reference", "srsf+pack", "--timesteps", "256", "--validate-every", "256", "--pool", "2",
              "--n-envs", "1", "--n-steps", "128", "--batch-size", "128", "--network", "attention",
              "--attention-width", "32", "--attention-layers", "1"]
    assert train_v1(["--task", "small", "--expert", "srsf+pack", "--bc-episodes", "2", "--bc-epochs", "5",
                     "--critic-sees-future", *common, "--out", str(out)]) == 0
    meta = json.loads((out / "agent.json").read_text())
    assert meta["recipe"]["network"] == "attention"
    assert (meta["recipe"]["attention_width"], meta["recipe"]["attention_layers"]) == (32, 1)
    from sb3_contrib import MaskablePPO

    policy = MaskablePPO.load(str(out / "agent.zip"), device="cpu").policy
    assert (policy.d_model, policy.n_layers) == (32, 1) and len(policy.mlp_extractor.encoder.layers) == 1
    log = json.loads((out / "log.json").read_text())
    assert log["bc"]["accuracy_after"] > 0.8  # one shared slot head learns the expert's rule from 2 episodes
    task = get_task("small")
    res = evaluate([f"maskable-ppo:{out / 'agent.zip'}"], task.scenario, list(task.validation_seeds), None,
                   workers=1, progress=False, plots=False, echo=False)
    assert res.summary["avg_jct_s"].mean() == pytest.approx(meta["validation_avg_jct_s"], rel=1e-9)
    assert res.summary["invalid_actions"].sum() == 0
    from ddl_gym.sim.model import ConfigError

    with pytest.raises(ConfigError, match="attention network; this run's --network is mlp"):
        train_v1(["--task", "small", "--init", str(out / "agent.zip"), "--reference", "srsf+pack",
                  "--out", str(tmp_path / "x")])
    # Continuing needs the same size: a default-size run is refused with both sizes named.
    with pytest.raises(ConfigError, match="width 32 and 1 layers; this run asks for width 64 and 2 layers"):
        train_v1(["--task", "small", "--init", str(out / "agent.zip"), "--reference", "srsf+pack",
                  "--network", "attention", "--out", str(tmp_path / "y")])


@pytest.mark.parametrize("flags, message", [
    (["--attention-width", "32"], "give --network attention"),
    (["--network", "attention", "--attention-width", "30"], "multiple of 4"),
    (["--network", "attention", "--attention-layers", "0"], "must be >= 1"),
])
def test_attention_size_flags_are_checked(tmp_path, capsys, flags, message):
    with pytest.raises(SystemExit):
        train_v1(["--task", "small", "--expert", "srsf+pack", "--reference", "srsf+pack", *flags,
                  "--out", str(tmp_path / "z")])
    assert message in capsys.readouterr().err
