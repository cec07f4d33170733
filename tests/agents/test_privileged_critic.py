"""The input-dependent baseline of ``train_v1 --critic-sees-future`` (ddl_gym.agents.privileged_critic)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ddl_gym.agents.privileged_critic import (
    FUTURE_FEATURES, FutureInputFeatures, PrivilegedCriticPolicy, actor_state, widen_critic_state,
)
from ddl_gym.agents.train_v1 import main as train_v1
from ddl_gym.harness import evaluate
from ddl_gym.relative_reward import make_v1_env


def test_future_features_count_the_arrivals_still_to_come():
    env = FutureInputFeatures(make_v1_env("small"))
    obs, info = env.reset(seed=3)
    base = env.unwrapped
    arrival = np.asarray(base.sim.workload.arrival)
    n = len(FUTURE_FEATURES)
    assert obs.shape == (base.observation_space.shape[0] + n,) and env.observation_space.contains(obs)
    names = list(FUTURE_FEATURES)
    rng = np.random.default_rng(0)
    previous = None
    while True:
        future = obs[-n:]
        now = base.sim.now
        assert future[names.index("arrive_all")] == pytest.approx(np.mean(arrival > now), abs=1e-6)
        assert future[names.index("arrive_5m")] == pytest.approx(np.mean((arrival > now) & (arrival <= now + 300)),
                                                                  abs=1e-6)
        counts = future[:5]
        assert np.all(np.diff(counts) >= -1e-7)  # longer horizons count at least as many jobs
        if previous is not None:
            assert future[names.index("arrive_all")] <= previous + 1e-7  # arrivals only ever leave the future
        previous = future[names.index("arrive_all")]
        action = int(rng.choice(np.flatnonzero(info["action_mask"])))
        obs, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            assert obs[-n:][names.index("arrive_all")] == 0.0 and obs[-n:][names.index("work_all")] == 0.0
            break


def test_the_actor_never_reads_the_future_and_shipping_drops_only_the_critics_columns():
    import torch
    from gymnasium import spaces

    n_obs, k = 20, len(FUTURE_FEATURES)
    policy = PrivilegedCriticPolicy(spaces.Box(-10, 10, (n_obs + k,)), spaces.Discrete(5), lambda _: 1e-3,
                                    actor_features=n_obs, net_arch={"pi": [16], "vf": [16]})
    x = torch.randn(8, n_obs + k)
    y = x.clone()
    y[:, n_obs:] = torch.randn(8, k) * 5
    with torch.no_grad():
        assert torch.equal(policy.get_distribution(x).distribution.logits,
                           policy.get_distribution(y).distribution.logits)
        assert not torch.allclose(policy.predict_values(x), policy.predict_values(y))  # the critic reads them

    state = policy.state_dict()
    round_trip = widen_critic_state(actor_state(state, k), k)
    key = "mlp_extractor.value_net.0.weight"
    assert torch.equal(round_trip[key][:, :n_obs], state[key][:, :n_obs]) and not round_trip[key][:, n_obs:].any()
    assert all(torch.equal(round_trip[name], state[name]) for name in state if name != key)


def test_a_privileged_critic_run_ships_an_ordinary_agent_that_acts_as_it_validated(tmp_path):
    out = tmp_path / "pc"
    common = ["--reference", "srsf+pack", "--timesteps", "256", "--validate-every", "256", "--pool", "2",
              "--n-envs", "1", "--critic-sees-future"]
    assert train_v1(["--task", "small", "--expert", "srsf+pack", "--bc-episodes", "1", "--bc-epochs", "1",
                     *common, "--out", str(out)]) == 0
    meta = json.loads((out / "agent.json").read_text())
    assert meta["recipe"]["critic_sees_future"] is True
    assert meta["observation_shape"] == list(make_v1_env("small").observation_space.shape)  # no future columns
    from sb3_contrib import MaskablePPO

    assert MaskablePPO.load(out / "agent.zip", device="cpu").observation_space.shape == tuple(meta["observation_shape"])
    task_validation = json.loads((out / "log.json").read_text())["validation"]
    assert meta["validation_avg_jct_s"] == min(v["avg_jct_s"] for v in task_validation)

    # the shipped agent, run by the harness on the task's validation seeds, gives the figure it was selected on
    from ddl_gym.suite import get_task

    task = get_task("small")
    res = evaluate([f"maskable-ppo:{out / 'agent.zip'}"], task.scenario, list(task.validation_seeds), None,
                   workers=1, progress=False, plots=False, echo=False)
    assert res.summary["avg_jct_s"].mean() == pytest.approx(meta["validation_avg_jct_s"], rel=1e-9)
    # and a privileged run continued from it starts from that figure
    again = tmp_path / "again"
    assert train_v1(["--task", "small", "--init", str(out / "agent.zip"), *common, "--out", str(again)]) == 0
    first = json.loads((again / "log.json").read_text())["validation"][0]["avg_jct_s"]
    assert first == meta["validation_avg_jct_s"]
