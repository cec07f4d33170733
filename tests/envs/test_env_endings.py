"""Every registered env ends, pickles and deep-copies (issue 30).

* Repeating one invalid action (an integer outside the action space, so it stays invalid) ends
  every env: with ``invalid_action="wait"`` (default) the substitute moves the episode to its end;
  with ``"noop"`` the decision limit (``max_decisions="auto"``) truncates it.
* The decision limit never touches an episode played with valid actions (it is set well above
  what any valid episode takes), so v0 streams under valid play are unchanged.
* Every ``ddl_gym`` id in ``gym.registry`` pickles and deep-copies, fresh and mid-episode, and the
  copies continue exactly as the original.
"""

from __future__ import annotations

import copy
import pickle

import gymnasium as gym
import numpy as np
import pytest

import ddl_gym  # noqa: F401  (registers the ids)

ENV_IDS = sorted(i for i, spec in gym.registry.items() if str(spec.entry_point).startswith("ddl_gym."))
#: Smaller scenarios of the same kind, so that whole episodes stay cheap in the test suite.
SMALL = {"DDLCluster-v0": "small", "DDLCluster-Large-v0": "small", "DDLCluster-Philly-v0": "small",
         "DDLCluster-Small-v0": "small", "DDLClusterPlacement-v0": "small", "DDLClusterElastic-v0": "aonline-ps-small",
         "DDLCluster-ASRPT-v0": "asrpt-small"}
#: The v1 ids (``make_v1_env``: one DDLClusterEnvV1 per task of the suite) take any job-level scenario.
V1_ENTRY = "ddl_gym.relative_reward:make_v1_env"


def _small_scenario(env_id: str) -> str:
    if env_id in SMALL:
        return SMALL[env_id]
    if str(gym.registry[env_id].entry_point) == V1_ENTRY:
        return "small"
    raise KeyError(env_id)


def _make(env_id: str, **kwargs):
    return gym.make(env_id, scenario=_small_scenario(env_id), disable_env_checker=True, **kwargs)


def test_every_registered_id_is_covered() -> None:
    uncovered = []
    for env_id in ENV_IDS:
        try:
            _small_scenario(env_id)
        except KeyError:
            uncovered.append(env_id)
    assert not uncovered, f"a new env id needs a small scenario here: {uncovered}"


@pytest.mark.parametrize("env_id", ENV_IDS)
@pytest.mark.parametrize("mode", ["wait", "noop"])
def test_repeating_an_invalid_action_ends_the_episode(env_id: str, mode: str) -> None:
    env = _make(env_id, invalid_action=mode)
    _, info = env.reset(seed=3)
    bad = int(env.action_space.n)  # outside the space: invalid at every step
    limit = env.unwrapped._decision_limit
    assert limit is not None and limit > 0
    for step in range(1, limit + 1):
        _, _, terminated, truncated, info = env.step(bad)
        assert info["invalid_action"]
        if terminated or truncated:
            break
    assert terminated or truncated, f"{env_id} ({mode}) did not end within its decision limit {limit}"
    if mode == "noop":
        assert truncated and not terminated and step == limit  # nothing moved: only the backstop ends it
    else:
        assert terminated and step < limit  # every substitute moves the episode on


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_valid_play_never_reaches_the_decision_limit(env_id: str) -> None:
    env = _make(env_id)
    rng = np.random.default_rng(0)
    _, info = env.reset(seed=5)
    limit = env.unwrapped._decision_limit
    steps = 0
    while True:
        action = int(rng.choice(np.flatnonzero(info["action_mask"])))
        _, _, terminated, truncated, info = env.step(action)
        steps += 1
        if terminated or truncated:
            break
    assert terminated and not truncated
    assert steps <= limit // 2, f"{env_id}: a valid episode took {steps} of {limit} decisions"


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_every_registered_env_pickles_and_deep_copies(env_id: str) -> None:
    env = gym.make(env_id, disable_env_checker=True)  # the id as registered (its own scenario)
    for twin in (copy.deepcopy(env), pickle.loads(pickle.dumps(env))):
        assert twin.spec is not None and twin.spec.id == env_id
    env = _make(env_id)
    _, info = env.reset(seed=2)
    first = int(np.flatnonzero(info["action_mask"])[0])
    env.step(first)
    twins = [copy.deepcopy(env), pickle.loads(pickle.dumps(env))]
    rng = np.random.default_rng(1)
    for _ in range(5):
        mask = env.unwrapped.action_masks()
        action = int(rng.choice(np.flatnonzero(mask)))
        expected = env.step(action)
        for twin in twins:
            got = twin.step(action)
            np.testing.assert_array_equal(got[0], expected[0])
            assert got[1:4] == expected[1:4]
        if expected[2] or expected[3]:
            break
