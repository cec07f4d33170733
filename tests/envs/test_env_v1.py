"""DDLCluster-v1 (issue 31): running-jobs observation, non-clairvoyant view, arrival pools, the
reference-relative reward, and v1 agents in the harness."""

from __future__ import annotations

import math
import pickle

import gymnasium as gym
import numpy as np
import pytest

import ddl_gym  # noqa: F401  (registers the ids)
from ddl_gym.envs.cluster_env import PORTABLE_JOB_FEATURES, DDLClusterEnv
from ddl_gym.envs.cluster_env_v1 import RUNNING_GLOBAL_FEATURES, RUNNING_SLOT_FEATURES, DDLClusterEnvV1
from ddl_gym.harness import simulate
from ddl_gym.relative_reward import ReferenceRelativeReward, make_v1_env
from ddl_gym.scenarios import get_scenario
from ddl_gym.sim.model import ConfigError
from ddl_gym.suite import TASKS


def _random_episode(env: gym.Env, seed: int, rng: np.random.Generator, p_advance: float = 0.3):
    obs, info = env.reset(seed=seed)
    total = 0.0
    steps = [(obs, info)]
    while True:
        valid = np.flatnonzero(info["action_mask"])
        action = 0 if info["action_mask"][0] and rng.random() < p_advance else int(rng.choice(valid))
        obs, reward, terminated, truncated, info = env.step(action)
        total += reward
        steps.append((obs, info))
        if terminated or truncated:
            return total, info, steps


def test_v1_ids_registered_for_every_task_and_pass_the_env_checker():
    from gymnasium.utils.env_checker import check_env

    for task in TASKS:
        assert task.env_id in gym.registry
    env = gym.make("DDLCluster-Small-v1")
    check_env(env.unwrapped, skip_render_check=True)
    base = env.unwrapped
    assert isinstance(base, DDLClusterEnvV1)
    n_base = DDLClusterEnv("small").observation_space.shape[0]
    assert env.observation_space.shape[0] == n_base + len(RUNNING_GLOBAL_FEATURES) + 8 * len(RUNNING_SLOT_FEATURES)


def test_running_block_matches_a_hand_computed_state():
    env = DDLClusterEnvV1("small", window=8)
    obs, info = env.reset(seed=5)
    # Start the first startable job with the first rule, then look at the running block.
    action = int(np.flatnonzero(info["action_mask"][1:])[0]) + 1
    obs, _, _, _, info = env.step(action)
    sim = env.sim
    running = list(sim.running)
    assert running, "a job must be running after a start"
    block = obs[env._base_size:].astype(np.float64)
    g = len(RUNNING_GLOBAL_FEATURES)
    slots = block[g:].reshape(env.running_slots, len(RUNNING_SLOT_FEATURES))
    # The slot order is by estimated finish; find each running job's row by its remaining time.
    expected = sorted((sim.remaining_iterations(j) * sim.tau[j], j) for j in running)
    for row, (remaining, job) in zip(slots, expected):
        assert row[0] == 1.0
        assert row[1] == pytest.approx(min(1.0, math.log2(sim.workload.gpus[job]) / 6.0), abs=1e-6)
        assert row[2] == pytest.approx(min(1.0, math.log1p(remaining) / math.log1p(1e6)), abs=1e-6)
        assert row[4] == float(len(sim.servers[job]) > 1)
    assert np.all(slots[len(running):] == 0.0)
    # free_within_4h: the free GPUs plus those of jobs finishing within 4 h.
    freed = sum(int(sim.workload.gpus[j]) for r, j in expected if r <= 14400.0)
    assert block[3] == pytest.approx((sim.num_free + freed) / sim.cluster.num_gpus, abs=1e-6)
    # The server histogram sums to 1.
    assert block[8:12].sum() == pytest.approx(1.0, abs=1e-6)


def test_non_clairvoyant_view_hides_remaining_work():
    env = DDLClusterEnvV1("small", clairvoyant=False)
    assert env.queue_order == "fifo"
    rng = np.random.default_rng(1)
    _, _, steps = _random_episode(env, 3, rng)
    n_cluster = 9
    n_job = len(PORTABLE_JOB_FEATURES)
    est = PORTABLE_JOB_FEATURES.index("est_runtime")
    g = len(RUNNING_GLOBAL_FEATURES)
    saw_queue = saw_running = False
    for obs, _ in steps:
        queue = obs[n_cluster: n_cluster + n_job * env.max_window].reshape(env.max_window, n_job)
        assert np.all(queue[:, est] == 0.0)
        saw_queue |= bool(queue[:, 0].any())
        block = obs[env._base_size:]
        assert np.all(block[4:8] == 0.0)  # wait_for_g needs remaining work
        slots = block[g:].reshape(env.running_slots, len(RUNNING_SLOT_FEATURES))
        assert np.all(slots[:, 2] == 0.0)
        saw_running |= bool(slots[:, 3].any())  # attained service is shown
    assert saw_queue and saw_running
    with pytest.raises(ConfigError, match="queue_order"):
        DDLClusterEnvV1("small", clairvoyant=False, queue_order="srsf")
    assert DDLClusterEnvV1("small", clairvoyant=False, queue_order="gpu-step").queue_order == "gpu-step"


def test_gpu_step_window_reads_no_iteration_count():
    """The non-clairvoyant gpu-step window: same observations and masks when only iteration counts differ
    (up to the first completion, which the counts decide), unlike the clairvoyant srsf window."""
    import dataclasses

    from ddl_gym.scenarios import get_scenario

    _, episode = get_scenario("pollux-nc-25g").episode(3)
    a = dataclasses.replace(episode, iterations=episode.iterations * 1000)  # long jobs: many decisions first
    b = dataclasses.replace(a, iterations=a.iterations[::-1].copy())  # same jobs, other counts
    views = {}
    for order, clairvoyant in (("gpu-step", False), ("srsf", True)):
        seen = []
        for workload in (a, b):
            env = DDLClusterEnvV1("pollux-nc-25g", clairvoyant=clairvoyant, queue_order=order)
            obs, info = env.reset(seed=3, options={"workload": workload})
            trace = []
            while env.sim.num_finished == 0:
                trace.append((obs.copy(), np.asarray(info["action_mask"]).copy()))
                valid = np.flatnonzero(info["action_mask"])
                obs, _, _, _, info = env.step(int(valid[-1]))  # the last startable slot, else advance
            seen.append(trace)
        n = min(len(seen[0]), len(seen[1]))
        assert n > 10
        views[order] = all(np.array_equal(x[0], y[0]) and np.array_equal(x[1], y[1])
                           for x, y in zip(seen[0][:n], seen[1][:n]))
    assert views == {"gpu-step": True, "srsf": False}


@pytest.mark.parametrize("seed", [500_000, 500_001])
def test_fifo_window_shows_only_the_oldest_jobs_most_of_the_time_on_the_non_clairvoyant_task(seed):
    """The figure behind the gpu-step window (docs/training.md, this env's docstring): on ``pollux-nc-25g``
    driven by ``fifo+ca``, the queue is longer than the 8-slot window at more than 80% of the decisions."""
    from ddl_gym.agents.imitation import expert_action

    env = DDLClusterEnvV1("pollux-nc-25g", clairvoyant=False)
    env.reset(seed=seed)
    longer = []
    while True:
        longer.append(len(env.sim.queue) > env.window)
        _, _, terminated, truncated, _ = env.step(expert_action(env, "fifo+ca", "window"))
        if terminated or truncated:
            break
    assert np.mean(longer) > 0.8


def test_arrival_pool_draws_fixed_inputs():
    env = DDLClusterEnvV1("small", arrival_pool=[11, 12])
    env.reset(seed=0)
    seen = {}
    for _ in range(12):
        _, info = env.reset()
        k = info["episode_seed"]
        assert k in (11, 12)
        arrivals = env.sim.workload.arrival.copy()
        if k in seen:
            np.testing.assert_array_equal(seen[k], arrivals)
        seen[k] = arrivals
        _, expected = get_scenario("small").episode(k)
        np.testing.assert_array_equal(arrivals, expected.arrival)
    assert set(seen) == {11, 12}
    with pytest.raises(ConfigError, match="arrival_pool"):
        DDLClusterEnvV1("small", arrival_pool=0)


def test_reference_relative_return_is_reference_minus_agent_total_jct():
    env = make_v1_env("small", reference="srsf+pack")
    rng = np.random.default_rng(7)
    for seed in (0, 1, 2):
        total, info, _ = _random_episode(env, seed, rng)
        n = env.unwrapped.sim.workload.num_jobs
        reference = simulate(ddl_gym.baselines.make_policy("srsf+pack"), get_scenario("small"), seed)
        ref_total = float(np.sum(reference.result.finish - reference.result.workload.arrival))
        agent_total = info["metrics"]["avg_jct_s"] * n
        assert total == pytest.approx((ref_total - agent_total) / 3600.0, rel=1e-9, abs=1e-9)
        assert total != 0.0  # a random agent is not the reference


def test_reference_relative_reward_is_exactly_zero_for_the_reference_itself():
    """Replay srsf+pack's own schedule through the env: every step's reward is exactly 0."""
    scenario = get_scenario("small")
    env = ReferenceRelativeReward(DDLClusterEnvV1("small", window=64, placements=("pack",)), "srsf+pack")
    for seed in (0, 3):
        reference = simulate(ddl_gym.baselines.make_policy("srsf+pack"), scenario, seed).result
        obs, info = env.reset(seed=seed)
        base = env.unwrapped
        rewards = []
        while True:
            now = base.sim.now
            window = info["window_jobs"]
            due = [slot for slot, job in enumerate(window) if reference.start[job] == now]
            action = 1 + due[0] if due else 0
            assert info["action_mask"][action]
            obs, reward, terminated, truncated, info = env.step(action)
            rewards.append(reward)
            if terminated or truncated:
                break
        assert terminated
        np.testing.assert_array_equal(base.sim.result().finish, reference.finish)  # the replay is the reference
        assert all(r == 0.0 for r in rewards)


def test_v1_env_pickles_and_refuses_batched_stepping():
    env = gym.make("DDLCluster-Small-v1", reference="srsf+pack")
    env.reset(seed=0)
    clone = pickle.loads(pickle.dumps(env))
    a = clone.step(0)
    b = env.step(0)
    np.testing.assert_array_equal(a[0], b[0])
    assert a[1] == b[1]
    with pytest.raises(NotImplementedError):
        DDLClusterEnvV1("small").step_into(0, None, None, 0)


def test_reference_relative_reward_refuses_other_objectives_and_env_agents():
    with pytest.raises(ConfigError, match="reward='jct'"):
        ReferenceRelativeReward(DDLClusterEnvV1("small", reward="makespan"), "srsf+pack")
    with pytest.raises(ConfigError):
        make_v1_env("small", reference="no-such-policy")
