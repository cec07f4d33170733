"""Env API hardening: action types, reset options, invalid actions, episodes that always end."""

from __future__ import annotations

import enum

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ddl_gym  # noqa: F401
from ddl_gym.envs.base import InvalidActionError
from ddl_gym.envs.cluster_env import DDLClusterEnv
from ddl_gym.envs.placement_env import DDLPlacementEnv
from ddl_gym.sim.model import ConfigError

NOT_ACTIONS = [1.7, 1.0, float("nan"), np.float32(1.0), "1", None, True, False, np.True_, np.array([1]),
               np.array([[1]]), np.array(1.0), [1], (1,), 1 + 0j]


def _state(env: DDLClusterEnv) -> tuple:
    sim = env.sim
    return (sim.now, sim.jobs_area, tuple(sim.queue), tuple(sim.running), env._steps, env.window_jobs)


@pytest.mark.parametrize("action", NOT_ACTIONS, ids=repr)
@pytest.mark.parametrize("env_cls", [DDLClusterEnv, DDLPlacementEnv])
def test_non_integer_actions_raise_a_named_error_and_change_nothing(env_cls, action) -> None:
    env = env_cls("small")
    env.reset(seed=0)
    before = (env.sim.now, env.sim.jobs_area, tuple(env.sim.queue), env._steps)
    with pytest.raises(InvalidActionError) as err:
        env.step(action)
    message = str(err.value)
    assert repr(action) in message and f"Discrete({env.action_space.n})" in message
    assert isinstance(err.value, TypeError) and isinstance(err.value, gym.error.Error)
    assert (env.sim.now, env.sim.jobs_area, tuple(env.sim.queue), env._steps) == before


def test_non_integer_action_through_gym_make_wrappers() -> None:
    env = gym.make("ddl_gym:DDLCluster-Small-v0")
    env.reset(seed=0)
    with pytest.raises(InvalidActionError, match=r"array\(\[1\]\).*action.item\(\)"):
        env.step(np.array([1]))


class Slot(enum.IntEnum):
    ADVANCE = 0


@pytest.mark.parametrize("convert", [int, np.int64, np.int8, np.uint8, np.intc, np.array, lambda a: Slot(a) if a == 0 else a],
                         ids=["int", "int64", "int8", "uint8", "intc", "0d-array", "IntEnum"])
def test_integer_types_gymnasium_accepts_act_like_int(convert) -> None:
    a, b = DDLClusterEnv("small"), DDLClusterEnv("small")
    _, info = a.reset(seed=1)
    b.reset(seed=1)
    for _ in range(12):
        action = int(np.flatnonzero(info["action_mask"])[-1])
        ra, rb = a.step(convert(action)), b.step(action)
        info = ra[4]
        np.testing.assert_array_equal(ra[0], rb[0])
        assert ra[1:4] == rb[1:4] and ra[4]["executed_action"] == action and not ra[4]["invalid_action"]


@pytest.mark.parametrize("action", [-1, 10**30, np.int64(-5), np.uint64(2**64 - 1)], ids=repr)
def test_out_of_range_integers_are_invalid_actions_not_errors(action) -> None:
    env = DDLClusterEnv("small", invalid_action_penalty=0.25)
    env.reset(seed=0)
    _, reward, _, _, info = env.step(action)
    assert info["invalid_action"] is True and reward <= -0.25
    assert info["executed_action"] in (0, *range(1, env.action_space.n))


@pytest.mark.parametrize("options,match", [
    ([("workload", "jobs.csv")], "must be a dict"),
    ("workload=jobs.csv", "must be a dict"),
    (3, "must be a dict"),
    ({"worklaod": "jobs.csv"}, "unknown key 'worklaod'; did you mean 'workload'"),
    ({"seed": 3}, "unknown key 'seed'"),
    ({"workload": 3}, "Workload or the path"),
])
@pytest.mark.parametrize("env_cls", [DDLClusterEnv, DDLPlacementEnv])
def test_reset_options_are_validated_by_name(env_cls, options, match) -> None:
    env = env_cls("small")
    with pytest.raises(ConfigError, match=match):
        env.reset(seed=0, options=options)
    obs, _ = env.reset(seed=0, options={})  # empty options and None are fine
    assert env.observation_space.contains(obs)


def test_workload_option_still_replaces_the_episode_jobs() -> None:
    from ddl_gym.scenarios import get_scenario

    _, workload = get_scenario("small").episode(123)
    env = DDLClusterEnv("small")
    env.reset(seed=0, options={"workload": workload})
    assert env.sim.workload is workload


# ---------------------------------------------------------------------------- no endless episodes
def _play(env, choose, max_steps: int = 100_000):
    obs, info = env.reset(seed=3)
    total, invalid, steps = 0.0, 0, 0
    while steps < max_steps:
        obs, reward, terminated, truncated, info = env.step(choose(info, steps))
        total += reward
        invalid += info["invalid_action"]
        steps += 1
        if terminated or truncated:
            return total, invalid, steps, terminated, truncated, info
    raise AssertionError(f"no episode end after {max_steps} steps")


@pytest.mark.parametrize("env_id", ["DDLCluster-v0", "DDLCluster-Small-v0"])
def test_registered_envs_end_even_if_the_agent_always_picks_invalid_actions(env_id) -> None:
    """The plain-PPO failure: an agent repeating a masked action must not stall the episode."""
    env = gym.make(f"ddl_gym:{env_id}")
    n_jobs = None

    def always_invalid(info, _):
        bad = np.flatnonzero(info["action_mask"] == 0)
        return int(bad[-1]) if bad.size else 0

    total, invalid, steps, terminated, truncated, info = _play(env, always_invalid)
    n_jobs = env.unwrapped.sim.workload.num_jobs
    assert terminated and not truncated and invalid > 0
    assert steps <= 3 * n_jobs  # every step started a job or let an event happen
    assert info["metrics"]["jobs"] == n_jobs


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(actions=st.lists(st.integers(min_value=-3, max_value=40), min_size=1, max_size=30),
       penalty=st.sampled_from([0.0, 0.5]))
def test_any_action_sequence_ends_and_return_is_minus_jct_minus_penalties(actions, penalty) -> None:
    env = DDLClusterEnv("small", invalid_action_penalty=penalty, reward_scale=1.0)
    total, invalid, steps, terminated, _, info = _play(env, lambda _, t: actions[t % len(actions)])
    assert terminated and steps <= 3 * env.sim.workload.num_jobs
    assert total == pytest.approx(-info["metrics"]["total_jct_s"] - penalty * invalid, rel=1e-9)


def test_noop_mode_is_bounded_by_the_auto_decision_limit() -> None:
    env = DDLClusterEnv("small", invalid_action="noop")
    _, _, steps, terminated, truncated, info = _play(env, lambda info, _: env.action_space.n - 1 if not
                                                     info["action_mask"][-1] else 0)
    n_jobs = env.sim.workload.num_jobs
    assert truncated and not terminated and steps == 6 * n_jobs + 64
    assert "metrics" in info  # the truncated episode still reports what happened


def test_max_decisions_integer_and_none() -> None:
    env = DDLClusterEnv("small", max_decisions=5)
    _, _, steps, terminated, truncated, _ = _play(env, lambda info, _: 0)
    assert (steps, terminated, truncated) == (5, False, True)
    env = DDLClusterEnv("small", invalid_action="noop", max_decisions=None)
    with pytest.raises(AssertionError, match="no episode end"):
        _play(env, lambda info, _: 10_000, max_steps=2_000)
    for bad in (0, -1, 2.5, "forever", True):
        with pytest.raises(ConfigError, match="max_decisions"):
            DDLClusterEnv("small", max_decisions=bad)
    with pytest.raises(ConfigError, match="invalid_action must be"):
        DDLClusterEnv("small", invalid_action="raise")


def test_invalid_advance_runs_the_first_valid_start() -> None:
    """When "advance" is itself invalid (nothing running, no arrivals left), the substitute is a start."""
    env = DDLClusterEnv("small", invalid_action_penalty=1.0)
    _, info = env.reset(seed=0)
    while not env.sim.done:
        mask = info["action_mask"]
        if mask[0] == 0:
            first = int(np.flatnonzero(mask)[0])
            twin = env.fork()
            _, reward, _, _, info = env.step(0)
            _, twin_reward, _, _, _ = twin.step(first)
            assert info["invalid_action"] and info["executed_action"] == first
            assert reward == twin_reward - 1.0 and env.sim.decisions == twin.sim.decisions
            return
        # drain arrivals and starts with "advance" so that the queue fills with nothing running
        action = 0 if env.sim.has_future_arrivals else int(np.flatnonzero(mask)[-1])
        _, _, _, _, info = env.step(action)
    pytest.skip("no state with an invalid advance reached")


def test_placement_env_always_invalid_agent_ends() -> None:
    env = DDLPlacementEnv("small")

    def always_invalid(info, _):
        bad = np.flatnonzero(info["action_mask"] == 0)
        return int(bad[0]) if bad.size else env.wait_action

    _, invalid, steps, terminated, truncated, info = _play(env, always_invalid)
    assert terminated and not truncated and invalid > 0
    assert info["metrics"]["jobs"] == env.sim.workload.num_jobs


def test_info_keys_on_every_step() -> None:
    env = DDLClusterEnv("small")
    _, info = env.reset(seed=2)
    keys = {"action_mask", "invalid_action", "executed_action", "sim_time", "queue_length", "running_jobs",
            "finished_jobs", "window_jobs"}
    assert set(info) == keys and info["executed_action"] == -1 and info["invalid_action"] is False
    rng = np.random.default_rng(0)
    while True:
        action = int(rng.choice(np.flatnonzero(info["action_mask"])))
        _, _, terminated, truncated, info = env.step(action)
        assert keys <= set(info) and info["executed_action"] == action
        assert info["window_jobs"] == env.window_jobs and info["queue_length"] == len(env.sim.queue)
        if terminated or truncated:
            assert set(info) == keys | {"metrics"}
            break
