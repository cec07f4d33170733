"""Training CLI (agent + metadata + checkpoints, resume), agent loading, expert actions, behaviour cloning."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

import ddl_gym  # noqa: E402,F401
from ddl_gym.agents import load_policy  # noqa: E402
from ddl_gym.agents.imitation import (  # noqa: E402
    behaviour_cloning, collect_demonstrations, expert_action, imitation_accuracy)
from ddl_gym.agents.policy import run_agent_episode  # noqa: E402
from ddl_gym.agents.train import main, parameter_checksum, quick_train  # noqa: E402
from ddl_gym.policies import make_policy  # noqa: E402
from ddl_gym.scenarios import get_scenario  # noqa: E402
from ddl_gym.sim.engine import Simulator, run_policy  # noqa: E402
from ddl_gym.sim.model import ConfigError  # noqa: E402

TINY = ["--scenario", "small", "--preset", "quick", "--n-envs", "1", "--seed", "0", "--quiet", "--window", "4", "--eval-freq", "256"]


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("agent")
    assert main([*TINY, "--timesteps", "512", "--checkpoint-freq", "256", "--out", str(out)]) == 0
    return out


def test_train_writes_agent_metadata_and_checkpoints(trained: Path) -> None:
    assert (trained / "agent.zip").exists() and (trained / "vecnormalize.pkl").exists()
    meta = json.loads((trained / "agent.json").read_text())
    assert meta["scenario"] == "small" and meta["ddl_gym_version"] == ddl_gym.__version__
    assert meta["window"] == 4 and meta["action_n"] == 1 + 4 * 3
    assert meta["placements"] == ["pack", "spread", "contention_aware"] and meta["queue_order"] == "srsf"
    assert meta["observation_layout"]["observation"] == "portable" and meta["observation_layout"]["slots"] == 4
    assert "servers" not in meta["observation_layout"] and meta["timesteps"] >= 512  # size-free layout
    checkpoints = sorted((trained / "checkpoints").glob("step_*"))
    assert checkpoints and all((c / "model.zip").exists() and (c / "rng.pkl").exists() for c in checkpoints)
    assert (trained / "eval" / "evaluations.npz").exists()


def test_resume_after_kill_continues_counter_and_loads_checkpoint_weights(tmp_path: Path) -> None:
    out = tmp_path / "run"
    args = [*TINY, "--timesteps", "768", "--checkpoint-freq", "256", "--out", str(out)]
    assert main([*args, "--kill-after", "600"]) == 3  # "killed" mid-rollout 512..640, no final agent
    assert not (out / "agent.zip").exists()
    last = sorted((out / "checkpoints").glob("step_*"))[-1]
    assert json.loads((last / "state.json").read_text())["num_timesteps"] == 512
    from sb3_contrib import MaskablePPO

    expected = parameter_checksum(MaskablePPO.load(last / "model.zip", device="cpu"))

    assert main([*args, "--resume"]) == 0
    resume = json.loads((out / "resume.json").read_text())
    assert resume["checkpoint"] == last.name and resume["num_timesteps"] == 512
    assert resume["param_checksum"] == pytest.approx(expected, rel=1e-12)
    meta = json.loads((out / "agent.json").read_text())
    assert meta["timesteps"] == 768 and meta["resumed_from"] == last.name
    # The evaluation history continues across the kill instead of restarting.
    steps = np.load(out / "eval" / "evaluations.npz")["timesteps"].tolist()
    assert steps[0] == 256 and steps[-1] == 768 and steps == sorted(set(steps))


def test_load_policy_acts_and_refuses_incompatible_env(trained: Path) -> None:
    policy = load_policy(f"maskable-ppo:{trained / 'agent.zip'}")
    assert policy.env_kwargs["window"] == 4 and policy.env_kwargs["queue_order"] == "srsf"
    result = run_agent_episode(policy, "small", 1_000_000)
    assert result.summary()["jobs"] == get_scenario("small").episode(1_000_000)[1].num_jobs
    with pytest.raises(ConfigError, match="max_window=4 but the env has max_window=8"):
        load_policy(f"maskable-ppo:{trained}", env=gym.make("ddl_gym:DDLCluster-v0", scenario="small", window=8))
    with pytest.raises(ConfigError, match="observation='portable' but the env has observation='legacy'"):
        load_policy(f"maskable-ppo:{trained}", env=gym.make("ddl_gym:DDLCluster-v0", scenario="small", window=4,
                                                           observation="legacy"))
    # The portable layout is size-free: the small-cluster agent runs on the 16-server default
    # cluster, and on a shorter window padded to its 4 slots.
    bigger = gym.make("ddl_gym:DDLCluster-v0", scenario="default", **policy.env_kwargs)
    load_policy(f"maskable-ppo:{trained}", env=bigger)
    assert run_agent_episode(policy, "default", 3).summary()["jobs"] == get_scenario("default").episode(3)[1].num_jobs
    shorter = gym.make("ddl_gym:DDLCluster-v0", scenario="small", window=2, max_window=4)
    load_policy(f"maskable-ppo:{trained}", env=shorter)
    wrong = gym.make("ddl_gym:DDLCluster-v0", scenario="small", window=4, placements=("pack", "spread"))
    with pytest.raises(ConfigError, match="placements"):
        load_policy(f"maskable-ppo:{trained}", env=wrong)
    with pytest.raises(ConfigError, match="trained with 'maskable-ppo'"):
        load_policy(f"ppo:{trained}")
    with pytest.raises(ConfigError, match="spec must be"):
        load_policy(str(trained))


@pytest.mark.parametrize("seed", [1_000_000, 1_000_003])
def test_expert_fifo_pack_through_env_reproduces_native_metrics(seed: int) -> None:
    scenario = get_scenario("small")
    cluster, workload = scenario.episode(seed)
    native = run_policy(Simulator(cluster, workload, scenario.model), make_policy("fifo+pack"),
                        np.random.default_rng(seed)).summary()
    env = gym.make("ddl_gym:DDLCluster-v0", scenario="small", queue_order="fifo")
    obs, info = env.reset(seed=seed)
    done = False
    while not done:
        obs, _, terminated, truncated, info = env.step(expert_action(env, "fifo+pack"))
        done = terminated or truncated
    assert env.unwrapped.result().summary() == native


@pytest.mark.parametrize("policy, seed", [("easy-srsf+pack", 1_000_001), ("easy-fifo+fs", 1_000_002)])
def test_expert_easy_backfilling_through_env_reproduces_native_metrics(policy: str, seed: int) -> None:
    """EASY as env actions (its next start, else advance while it holds GPUs for its reserved job) is the
    native EASY schedule: waits included, job for job (the window holds the whole queue)."""
    scenario_name = "pollux-8x8-100g"
    scenario = get_scenario(scenario_name)
    cluster, workload = scenario.episode(seed)
    native_policy = make_policy(policy)
    native = run_policy(Simulator(cluster, workload, scenario.model), native_policy, np.random.default_rng(seed))
    assert native_policy.reservations > 0  # the episode exercises the reservation
    env = gym.make("ddl_gym:DDLCluster-v0", scenario=scenario_name, placements=("pack", "fs"),
                   window=workload.num_jobs)
    env.reset(seed=seed)
    done, waits = False, 0
    while not done:
        action = expert_action(env, policy)
        mask = env.unwrapped.action_masks()
        waits += action == 0 and bool(mask[1:].any())
        _, _, terminated, truncated, _ = env.step(action)
        done = terminated or truncated
    assert env.unwrapped.result().summary() == native.summary()
    assert waits > 0  # EASY held free GPUs for a reserved job at some decision


def test_expert_rejects_placement_missing_from_env() -> None:
    env = gym.make("ddl_gym:DDLCluster-v0", scenario="small", placements=("pack", "spread"))
    env.reset(seed=0)
    with pytest.raises(ConfigError, match="contention_aware"):
        expert_action(env, "srsf+ca")


def test_behaviour_cloning_improves_imitation_accuracy() -> None:
    from sb3_contrib import MaskablePPO

    env = gym.make("ddl_gym:DDLCluster-v0", scenario="small", window=4)
    demos = collect_demonstrations(env, "srsf+ca", range(20_000, 20_004))
    starts = demos["actions"][demos["actions"] > 0]
    assert starts.size and np.all((starts - 1) % 3 == 2)  # every start uses rule 2 = contention_aware
    model = MaskablePPO("MlpPolicy", env, seed=0, policy_kwargs={"net_arch": [32, 32]})
    before = imitation_accuracy(model, demos["obs"], demos["actions"], demos["masks"])
    history = behaviour_cloning(model, demos["obs"], demos["actions"], demos["masks"], epochs=30,
                                batch_size=32, learning_rate=3e-3)
    assert history[-1]["loss"] < history[0]["loss"]
    assert history[-1]["accuracy"] > before and history[-1]["accuracy"] >= 0.9


def test_quick_train_returns_harness_spec(tmp_path: Path) -> None:
    spec = quick_train(scenario="small", timesteps=256, out=tmp_path / "q")
    assert spec.startswith("maskable-ppo:") and spec.endswith("agent.zip")
    policy = load_policy(spec)
    env = gym.make("ddl_gym:DDLCluster-v0", scenario="small", **policy.env_kwargs)
    obs, info = env.reset(seed=1)
    action = policy.act(obs, info["action_mask"], info)
    assert info["action_mask"][action] == 1


def test_resume_skips_a_truncated_newest_checkpoint_and_shows_progress(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    args = [*[a for a in TINY if a != "--quiet"], "--timesteps", "512", "--checkpoint-freq", "128", "--out", str(out)]
    assert main([*args, "--kill-after", "300", "--no-progress"]) == 3
    checkpoints = sorted((out / "checkpoints").glob("step_*"))
    assert len(checkpoints) >= 2
    newest, previous = checkpoints[-1], checkpoints[-2]
    model = newest / "model.zip"
    model.write_bytes(model.read_bytes()[: model.stat().st_size // 2])  # a crash or full disk mid-save
    capsys.readouterr()
    assert main([*args, "--resume"]) == 0
    err = capsys.readouterr().err
    assert f"skipping checkpoint {newest.name}" in err
    assert json.loads((out / "resume.json").read_text())["checkpoint"] == previous.name
    assert "train" in err and "512/512" in err.replace(",", "") and "eval return" in err  # the progress line
    # The finished run is not silently overwritten by a second run into the same folder.
    assert main([*args]) == 2
    assert "already holds a training run" in capsys.readouterr().err


def test_overwrite_removes_only_the_earlier_runs_files(tmp_path: Path) -> None:
    import argparse

    from ddl_gym.agents.train import _prepare_out

    out = tmp_path / "run"
    (out / "checkpoints" / "step_000000000256").mkdir(parents=True)
    for name in ("config.json", "agent.zip", "notes.txt"):
        (out / name).write_text("x")
    ns = argparse.Namespace(out=str(out), resume=False, overwrite=False)
    with pytest.raises(ConfigError, match="--resume.*--overwrite"):
        _prepare_out(ns)
    _prepare_out(argparse.Namespace(out=str(out), resume=False, overwrite=True))
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]
    with pytest.raises(ConfigError, match="exclude each other"):
        _prepare_out(argparse.Namespace(out=str(out), resume=True, overwrite=True))
