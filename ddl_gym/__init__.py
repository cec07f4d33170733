"""ddl-gym: scheduling distributed deep-learning jobs on shared GPU clusters.

``import ddl_gym`` registers the Gymnasium environments (Gymnasium 1.x has no plugin
auto-registration); ``gym.make("ddl_gym:DDLCluster-v0")`` imports and registers in one go.

| id                        | scenario | what                                                        |
|---------------------------|----------|-------------------------------------------------------------|
| ``DDLCluster-v0``         | default  | 16x4 GPUs, 100 Gb/s, 160 jobs over 80 min, RAR contention   |
| ``DDLCluster-Small-v0``   | small    | 4x4 GPUs, 40 jobs (fast experiments, smoke tests)           |
| ``DDLCluster-Large-v0``   | large    | 64x4 GPUs, 640 jobs                                         |
| ``DDLCluster-Philly-v0``  | philly-slice | 160 consecutive Philly jobs on the default cluster      |
| ``DDLCluster-ASRPT-v0``   | asrpt-small-v0 | A-SRPT pipeline jobs (8x8 GPUs, 200 jobs), Heavy-Edge placements |
| ``DDLClusterPlacement-v0``| default  | Harmony-style: place a job's workers server by server       |
| ``DDLClusterElastic-v0``  | aonline-ps | A-Online elastic PS jobs: job x configuration menu, multi-resource |
"""

from __future__ import annotations

from gymnasium.envs.registration import register, registry

__version__ = "0.1.0"

_ENTRY = "ddl_gym.envs.cluster_env:DDLClusterEnv"

_ENVS = {
    "DDLCluster-v0": {"scenario": "default"},
    "DDLCluster-Small-v0": {"scenario": "small"},
    "DDLCluster-Large-v0": {"scenario": "large"},
    "DDLCluster-Philly-v0": {"scenario": "philly-slice"},
    # A-SRPT (Luo et al.): rigid pipeline jobs; placements = Alg. 1's two server selections + Heavy-Edge.
    # FIFO window: the env's other orders rank by true iterations, which A-SRPT's schedulers may not know.
    # Its world is "asrpt-small-v0": asrpt-small with the Heavy-Edge tie-break and unseen-job rule it had
    # when the id was registered (asrpt-small's defaults changed in issue 32; a v0 id keeps its dynamics).
    "DDLCluster-ASRPT-v0": {"scenario": "asrpt-small-v0", "placements": ("heavy_edge_consolidate", "heavy_edge_fragment"),
                            "queue_order": "fifo"},
}

def _make_batched_vec(num_envs: int = 1, *, env_id: str, **kwargs: object) -> object:
    """``vector_entry_point`` of the ``DDLCluster-*`` ids (imports the vector env only when called, so
    ``import ddl_gym`` stays light): :func:`ddl_gym.envs.vector_entry.make_batched_vec`."""
    from ddl_gym.envs.vector_entry import make_batched_vec

    return make_batched_vec(num_envs, env_id=env_id, **kwargs)


def _vector_entry(env_id: str) -> object:
    import functools

    return functools.partial(_make_batched_vec, env_id=f"ddl_gym:{env_id}")


for _env_id, _kwargs in _ENVS.items():
    if _env_id not in registry:
        # vector_entry_point: gym.make_vec(id, n, vectorization_mode="vector_entry_point") builds the
        # batched vector env (ddl_gym.envs.vector_entry).
        register(id=_env_id, entry_point=_ENTRY, kwargs=_kwargs, vector_entry_point=_vector_entry(_env_id))

if "DDLClusterPlacement-v0" not in registry:
    register(id="DDLClusterPlacement-v0", entry_point="ddl_gym.envs.placement_env:DDLPlacementEnv",
             kwargs={"scenario": "default"})

if "DDLClusterElastic-v0" not in registry:  # A-Online's elastic jobs: job x configuration menu
    register(id="DDLClusterElastic-v0", entry_point="ddl_gym.envs.elastic_env:DDLClusterElasticEnv", kwargs={"scenario": "aonline-ps"})

# v1 (issue 31): running jobs observed, optional non-clairvoyant view, arrival pools, γ = 1 (see
# ddl_gym.envs.cluster_env_v1); one id per task of the versioned suite (ddl_gym.suite).
_V1_ENTRY = "ddl_gym.relative_reward:make_v1_env"
if "DDLCluster-v1" not in registry:
    register(id="DDLCluster-v1", entry_point=_V1_ENTRY, kwargs={"scenario": "default"})


def _register_suite() -> None:
    from ddl_gym.suite import TASKS

    for task in TASKS:
        if task.env_id not in registry:
            register(id=task.env_id, entry_point=_V1_ENTRY,
                     kwargs={"scenario": task.scenario, "clairvoyant": task.clairvoyant})


_register_suite()

__all__ = ["__version__"]
