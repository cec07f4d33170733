"""Shipped agents by short name (agents/shipped.py): files present, portable across cluster sizes, refused elsewhere."""

from __future__ import annotations

import json

import pytest

from ddl_gym.agents.shipped import REPO_ROOT, SHIPPED_AGENTS, load_shipped
from ddl_gym.sim.model import ConfigError

pytest.importorskip("sb3_contrib")


@pytest.mark.parametrize("name", sorted(SHIPPED_AGENTS))
def test_every_registered_agent_is_committed_and_small(name: str) -> None:
    agent = SHIPPED_AGENTS[name]
    zip_path = REPO_ROOT / agent.path
    meta = json.loads(zip_path.with_suffix(".json").read_text())
    stats = zip_path.with_name(meta["vecnormalize"])
    assert sum(p.stat().st_size for p in (zip_path, zip_path.with_suffix(".json"), stats)) < 2_000_000


def test_unknown_shipped_agent_is_named_in_the_error() -> None:
    with pytest.raises(ConfigError, match="unknown shipped agent 'agent-nope'"):
        load_shipped("agent-nope")


@pytest.mark.parametrize("scenario", ["small", "default"])
def test_agent_transfer_runs_on_other_cluster_sizes_and_matches_its_teacher(scenario: str) -> None:
    # small is 4 servers, default 16: one network, both sizes; it is a clone of srsf+ca, so on a
    # held-out seed it reproduces its teacher's schedule (recorded in its metadata as bc_expert).
    from ddl_gym.harness import load_policy_spec, simulate
    from ddl_gym.scenarios import get_scenario

    policy = load_shipped("agent-transfer")
    assert policy.metadata["bc_expert"] == "srsf+ca" and policy.env_kwargs["observation"] == "portable"
    sc = get_scenario(scenario)
    agent = simulate(policy, sc, 1_000_001).result.summary()
    teacher = simulate(load_policy_spec("srsf+ca"), sc, 1_000_001).result.summary()
    assert agent["avg_jct_s"] == teacher["avg_jct_s"] and agent["makespan_s"] == teacher["makespan_s"]


def test_legacy_agent_is_refused_on_the_portable_env_by_name() -> None:
    from ddl_gym.envs.cluster_env import DDLClusterEnv

    policy = load_shipped("agent-10g")
    with pytest.raises(ConfigError, match="observation"):
        policy.check_env(DDLClusterEnv("small"))
