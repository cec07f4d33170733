"""Batched vector envs: identical to stepping the same envs one by one, both autoreset conventions."""

from __future__ import annotations

import numpy as np
import pytest

import ddl_gym  # noqa: F401
from ddl_gym.envs.cluster_env import DDLClusterEnv
from ddl_gym.envs import vector
from ddl_gym.envs.vector import DEFAULT_SPIN_S, INFO_FIELDS, BatchedVectorEnv, auto_spin_s

ENV_ID = "ddl_gym:DDLCluster-Small-v0"


def _greedy(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return np.array([int(rng.choice(np.flatnonzero(m))) for m in masks])


@pytest.mark.parametrize(("step_in_parent", "spin_s"), [(False, None), (True, None), (True, 0.0), (True, 0.005)],
                         ids=["workers", "parent-steps-a-share", "parent-blocking", "parent-polling"])
def test_gymnasium_batched_env_matches_single_envs_with_next_step_autoreset(step_in_parent: bool,
                                                                           spin_s: float | None) -> None:
    envs = BatchedVectorEnv(ENV_ID, num_envs=3, num_workers=2, env_kwargs={"window": 4},
                            step_in_parent=step_in_parent, spin_s=spin_s)
    # With step_in_parent, rows 0-1 are stepped in this process and row 2 in the one worker process.
    assert len(envs._pool._procs) == (1 if step_in_parent else 2)
    if step_in_parent:  # the parent's share steps straight into the shared rows (step_into)
        assert all(env is not None for env in envs._pool._parent.direct)
    if spin_s is not None:
        assert envs._pool.spin_s == spin_s
    try:
        assert envs.metadata["autoreset_mode"].name == "NEXT_STEP"
        singles = [DDLClusterEnv("small", window=4) for _ in range(3)]
        obs, info = envs.reset(seed=10)
        expected = [e.reset(seed=10 + i) for i, e in enumerate(singles)]
        np.testing.assert_array_equal(obs, np.stack([o for o, _ in expected]))
        assert obs.shape == (3, *envs.single_observation_space.shape)
        rng = np.random.default_rng(0)
        ended = [False] * 3
        episodes = 0
        for _ in range(150):
            actions = _greedy(envs.action_masks(), rng)
            actions[1] = 10_000 if rng.random() < 0.2 else actions[1]  # invalid actions travel too
            obs, reward, terminated, truncated, info = envs.step(actions)
            for i, env in enumerate(singles):
                if ended[i]:  # next-step autoreset: the action is ignored, reward 0
                    o, single_info = env.reset()
                    r, te, tr = 0.0, False, False
                else:
                    o, r, te, tr, single_info = env.step(int(actions[i]))
                np.testing.assert_array_equal(obs[i], o)
                assert (reward[i], terminated[i], truncated[i]) == (r, te, tr)
                np.testing.assert_array_equal(info["action_mask"][i], single_info["action_mask"])
                for name, _ in INFO_FIELDS:
                    assert info[name][i] == single_info[name], name
                if te or tr:
                    assert info["_metrics"][i]
                    assert info["metrics"]["avg_jct_s"][i] == single_info["metrics"]["avg_jct_s"]
                    episodes += 1
                ended[i] = te or tr
        assert episodes >= 2
        assert envs.call("window") == (4, 4, 4)
        np.testing.assert_array_equal(np.stack(envs.call("action_masks")), envs.action_masks())
    finally:
        envs.close()
    envs.close()  # idempotent


@pytest.mark.parametrize("step_in_parent", [False, True], ids=["workers", "parent-steps-a-share"])
def test_sb3_batched_vec_env_matches_single_envs_with_same_step_autoreset(step_in_parent: bool) -> None:
    pytest.importorskip("stable_baselines3")
    from ddl_gym.envs.vector import BatchedSubprocVecEnv

    venv = BatchedSubprocVecEnv(ENV_ID, num_envs=2, num_workers=2, step_in_parent=step_in_parent)
    try:
        if step_in_parent:
            assert all(env is not None for env in venv._pool._parent.direct)
        singles = [DDLClusterEnv("small") for _ in range(2)]
        venv.seed(3)
        obs = venv.reset()
        np.testing.assert_array_equal(obs, np.stack([e.reset(seed=3 + i)[0] for i, e in enumerate(singles)]))
        rng = np.random.default_rng(1)
        ends = 0
        for _ in range(120):
            masks = np.stack(venv.env_method("action_masks"))
            actions = _greedy(masks, rng)
            obs, rewards, dones, infos = venv.step(actions)
            for i, env in enumerate(singles):
                o, r, te, tr, single_info = env.step(int(actions[i]))
                assert rewards[i] == np.float32(r) and dones[i] == (te or tr)
                if te or tr:
                    np.testing.assert_array_equal(infos[i]["terminal_observation"], o)
                    assert infos[i]["TimeLimit.truncated"] == (tr and not te)
                    assert infos[i]["metrics"] == single_info["metrics"]
                    o, single_info = env.reset()  # same-step autoreset (continues the generator)
                    ends += 1
                np.testing.assert_array_equal(obs[i], o)
                np.testing.assert_array_equal(infos[i]["action_mask"], single_info["action_mask"])
                for name, _ in INFO_FIELDS:  # after an end: the next episode's first info, as SB3 expects
                    assert infos[i][name] == single_info[name], name
        assert ends >= 1
        assert venv.get_attr("window") == [8, 8]
    finally:
        venv.close()


def test_sb3_info_dicts_carry_the_info_fields_in_order() -> None:
    names = [name for name, _ in INFO_FIELDS]
    columns = [[10 * k + i for i in range(3)] for k in range(len(names))]
    masks = [np.full(4, i, dtype=np.int8) for i in range(3)]
    with_masks = vector._info_dicts(columns, masks)
    for i in range(3):
        assert list(with_masks[i]) == [*names, "action_mask"]
        assert [with_masks[i][name] for name in names] == [10 * k + i for k in range(len(names))]
        assert with_masks[i]["action_mask"] is masks[i]


def test_sb3_infos_carry_no_mask_for_an_env_without_one() -> None:
    pytest.importorskip("stable_baselines3")
    from ddl_gym.envs.vector import BatchedSubprocVecEnv

    venv = BatchedSubprocVecEnv("CartPole-v1", num_envs=2, num_workers=1)  # the generic path, no action mask
    try:
        venv.seed(0)
        venv.reset()
        _, _, _, infos = venv.step(np.zeros(2, dtype=np.int64))
        assert all("action_mask" not in info for info in infos)
        assert [list(info)[:len(INFO_FIELDS)] for info in infos] == [[name for name, _ in INFO_FIELDS]] * 2
    finally:
        venv.close()


def test_maskable_ppo_trains_on_the_batched_sb3_vec_env() -> None:
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO

    from ddl_gym.envs.vector import BatchedSubprocVecEnv

    venv = BatchedSubprocVecEnv(ENV_ID, num_envs=4, num_workers=1, env_kwargs={"window": 4})
    try:
        model = MaskablePPO("MlpPolicy", venv, n_steps=16, batch_size=64, n_epochs=1, seed=0,
                            policy_kwargs={"net_arch": [16, 16]})
        model.learn(total_timesteps=128)
        assert model.num_timesteps >= 128
    finally:
        venv.close()


def test_errors_are_named_and_worker_failures_surface_in_the_parent() -> None:
    from ddl_gym.sim.model import ConfigError

    with pytest.raises(ConfigError, match="window must be"):  # the env is built once in the parent first
        BatchedVectorEnv(ENV_ID, num_envs=2, num_workers=1, env_kwargs={"window": 0})
    envs = BatchedVectorEnv(ENV_ID, num_envs=2, num_workers=1)
    envs.reset(seed=0)
    with pytest.raises(RuntimeError, match="worker failed: AttributeError: .*no_such_method"):
        envs.call("no_such_method")
    with pytest.raises(Exception, match="closed"):
        envs.step(np.zeros(2, dtype=np.int64))
    envs.close()


def test_processes_poll_only_when_each_has_a_core(monkeypatch) -> None:
    monkeypatch.setattr(vector.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    assert auto_spin_s(2, step_in_parent=True) == DEFAULT_SPIN_S > 0  # the caller and one worker: 2 processes
    assert auto_spin_s(1, step_in_parent=False) == DEFAULT_SPIN_S  # one worker and the waiting caller
    assert auto_spin_s(2, step_in_parent=False) == 0.0  # three processes on two cores: pollers would starve the others
    assert auto_spin_s(3, step_in_parent=True) == 0.0
    with pytest.raises(ValueError, match="spin_s must be >= 0"):
        BatchedVectorEnv(ENV_ID, num_envs=2, num_workers=1, spin_s=-1.0)


def test_sub_envs_skip_the_passive_checker_wrapper_unless_asked():
    from gymnasium.wrappers.common import PassiveEnvChecker

    from ddl_gym.envs.vector import _make_env

    def wrappers(env):
        found = []
        while hasattr(env, "env"):
            found.append(type(env))
            env = env.env
        return found

    assert PassiveEnvChecker not in wrappers(_make_env("ddl_gym:DDLCluster-v0", {}))
    assert PassiveEnvChecker in wrappers(_make_env("ddl_gym:DDLCluster-v0", {"disable_env_checker": False}))
