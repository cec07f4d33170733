"""Gymnasium adapters over the simulator, and batched vector envs."""

from ddl_gym.envs.base import DiscreteActions, InvalidActionError
from ddl_gym.envs.cluster_env import DDLClusterEnv
from ddl_gym.envs.placement_env import DDLPlacementEnv
from ddl_gym.envs.vector import BatchedVectorEnv, make_async_vec

__all__ = ["DDLClusterEnv", "DDLPlacementEnv", "BatchedVectorEnv", "make_async_vec", "DiscreteActions",
           "InvalidActionError"]
