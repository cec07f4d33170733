"""Env streams stay bit-identical: every recorded stream (legacy and portable layouts) reproduces its digest."""

from __future__ import annotations

import json

import pytest

from tests.env_stream_cases import PORTABLE_STREAM_FILE, STREAM_FILE, cases, portable_cases

_RECORDED = json.loads(STREAM_FILE.read_text())
_CASES = cases(legacy={"observation": "legacy"})  # recorded before the option existed
_RECORDED_PORTABLE = json.loads(PORTABLE_STREAM_FILE.read_text())
_PORTABLE_CASES = portable_cases()


def test_every_stream_case_has_a_recorded_digest() -> None:
    assert sorted(_CASES) == sorted(_RECORDED)


@pytest.mark.parametrize("name", sorted(_CASES))
def test_legacy_stream_digest(name: str) -> None:
    assert _CASES[name]() == _RECORDED[name], f"{name}: what the agent sees changed"


def test_every_portable_stream_case_has_a_recorded_digest() -> None:
    assert sorted(_PORTABLE_CASES) == sorted(_RECORDED_PORTABLE)


@pytest.mark.parametrize("name", sorted(_PORTABLE_CASES))
def test_portable_stream_digest(name: str) -> None:
    assert _PORTABLE_CASES[name]() == _RECORDED_PORTABLE[name], f"{name}: what the agent sees changed"


# The shipped agents (legacy layout) on the first release's default world: actions and schedule
# digests recorded from commit 9a99d18's code (tests.golden_cases._old_default_scenario).
# Files renamed in issue 14: leaderboard/default/agents/maskable-ppo-default* -> leaderboard/default-10g/agents/agent-10g*.
SHIPPED_AGENTS = {
    "agent-10g": ("55951263ac988335f30c5b311adeec8091c82d1d1c81e9b4befa4e5461729f04",
                             "7ed3b5555059d0e5cc38629efff095fb1d3810221b7a50960dc9a9912b010a40"),
    "agent-10g-scratch": ("9da09267ee51cd6907b7549a4c900f067f3c453c609475e5ee47b180441ee220",
                                     "0a853a59011ca0adb111e554e6d68181b65aa46d6144e4677c26347b5d2a5377"),
}


@pytest.mark.parametrize("name", sorted(SHIPPED_AGENTS))
def test_shipped_agent_loads_and_acts_exactly_as_before(name: str) -> None:
    pytest.importorskip("sb3_contrib")
    import hashlib
    from pathlib import Path

    import numpy as np

    from ddl_gym.agents.policy import load_policy
    from ddl_gym.envs.cluster_env import DDLClusterEnv
    from tests.golden_cases import _old_default_scenario, result_digest

    path = Path(__file__).resolve().parents[2] / "leaderboard" / "default-10g" / "agents" / f"{name}.zip"
    policy = load_policy(f"maskable-ppo:{path}")
    assert policy.env_kwargs["observation"] == "legacy"  # its metadata predates the option
    env = DDLClusterEnv(_old_default_scenario(), **policy.env_kwargs)
    policy.check_env(env)
    obs, info = env.reset(seed=1_000_000)
    actions = hashlib.sha256()
    while True:
        action = policy.act(obs, info["action_mask"], info)
        actions.update(np.int64(action).tobytes())
        obs, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            break
    assert (actions.hexdigest(), result_digest(env.result())) == SHIPPED_AGENTS[name]
