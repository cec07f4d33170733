"""The env a trained agent acts in, by the ``env_version`` its ``env_kwargs`` record.

Kept in the env package (not the harness) so that agents, the harness and scripts build it the same
way without importing each other.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ddl_gym.scenario_base import Scenario
from ddl_gym.sim.model import ConfigError


def make_agent_env(scenario: str | Scenario, env_kwargs: Mapping[str, Any]) -> Any:
    """The env an agent acts in: ``DDLClusterEnv`` (v0), or ``DDLClusterEnvV1`` when ``env_kwargs`` says
    ``env_version=1`` (agents trained on ``DDLCluster-*-v1`` record it)."""
    kwargs = dict(env_kwargs)
    version = kwargs.pop("env_version", 0)
    if version == 1:
        from ddl_gym.envs.cluster_env_v1 import DDLClusterEnvV1

        return DDLClusterEnvV1(scenario, **kwargs)
    if version != 0:
        raise ConfigError(f"env_version must be 0 or 1, got {version!r}")
    from ddl_gym.envs.cluster_env import DDLClusterEnv

    return DDLClusterEnv(scenario, **kwargs)
