"""``vector_entry_point`` of the ``DDLCluster-*`` ids: ``gym.make_vec(id, num_envs=n,
vectorization_mode="vector_entry_point")`` builds the batched vector env
(:class:`ddl_gym.envs.vector.BatchedVectorEnv`: several envs per worker process, observations and
masks in shared memory). Since a registered ``vector_entry_point`` is Gymnasium's default when
``vectorization_mode`` is not given, a plain ``gym.make_vec(id, num_envs=n)`` builds it too; pass
``vectorization_mode="sync"`` or ``"async"`` for Gymnasium's own vector envs.
"""

from __future__ import annotations

import functools
from typing import Any

from ddl_gym.sim.model import ConfigError

#: Keyword arguments of :class:`~ddl_gym.envs.vector.BatchedVectorEnv` (the others go to each env).
VECTOR_OPTIONS = ("num_workers", "context", "step_in_parent", "spin_s")


def make_batched_vec(num_envs: int = 1, *, env_id: str, **kwargs: Any) -> Any:
    """A :class:`~ddl_gym.envs.vector.BatchedVectorEnv` of ``num_envs`` copies of ``env_id``; ``kwargs``
    are the env's keyword arguments plus the batching options ``num_workers`` (default
    ``min(2, num_envs)``), ``context``, ``step_in_parent`` and ``spin_s``."""
    from ddl_gym.envs.vector import BatchedVectorEnv

    if isinstance(num_envs, bool) or not isinstance(num_envs, int) or num_envs < 1:
        raise ConfigError(f"num_envs must be an integer >= 1, got {num_envs!r}")
    options = {key: kwargs.pop(key) for key in VECTOR_OPTIONS if key in kwargs}
    if "max_episode_steps" in kwargs:  # Gymnasium passes the spec's limit; ours have none
        limit = kwargs.pop("max_episode_steps")
        if limit is not None:
            raise ConfigError("the batched vector env has no max_episode_steps; use the env's max_decisions")
    options.setdefault("num_workers", min(2, num_envs))
    return BatchedVectorEnv(env_id, num_envs=num_envs, env_kwargs=kwargs, **options)


def vector_entry_point(env_id: str) -> Any:
    """The creator registered as ``env_id``'s ``vector_entry_point``."""
    return functools.partial(make_batched_vec, env_id=env_id)
