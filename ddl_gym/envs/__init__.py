"""Gymnasium adapters over the simulator."""

from ddl_gym.envs.cluster_env import DDLClusterEnv

__all__ = ["DDLClusterEnv"]
