"""Scenario files with parameter-server jobs on a resource pool (SMD's world).

:func:`ddl_gym.scenarios.load_scenario_file` hands a file to :func:`load_ps_scenario` when
:func:`is_ps_scenario` says it describes a pool or PS jobs. Every error is one line naming the file
and the key (``jobs[2].worker.cpu``). Format (TOML; JSON with the same keys)::

    name = "my-smd"
    description = "what it models"

    [cluster]                          # one of: pool = {...} | units = 2 | instances = 1000
    pool = { gpu = 600, cpu = 3400, mem = 1400, storage = 1200 }

    [model]
    name = "smd-ps"                    # SMD's speed model (the only PS model here)

    [workload]
    kind = "smd"                       # Yu §V's generator ...
    mode = "sync"                      # "sync" | "async"
    num_jobs = 50
    overlap = "wait-free"              # "sequential" | "wait-free" | "priority" | "priority-sim"
    time_scale = 31737.0               # seconds per unit of π (default: calibrated, spec B5 #1)
    time_scale_factor = 1.0

    # ... or explicit jobs (kind = "ps-jobs"), one [[workload.jobs]] table each:
    [[workload.jobs]]
    iterations = 100                   # E
    mode = "sync"
    global_batch = 320                 # K (sync)
    mini_batch = 32                    # m (async)
    gradient_mb = 100                  # g in MB (1e6 bytes)
    bandwidth_gbps = 10                # B per PS-worker pair
    t_f = 0.01                         # per-sample FP / BP seconds, or layers = {f = [...], b = [...], r = [...]}
    t_b = 0.5
    eta = [1.0, 1.0, 1.0]              # or derived from layers under `overlap`
    alpha = 0.5
    beta1 = 3.5
    beta2 = 0.005
    worker = { gpu = 1, cpu = 4, mem = 8, storage = 5 }
    ps = { cpu = 2, mem = 4, storage = 5 }
    limit = { gpu = 4, cpu = 36, mem = 60, storage = 20 }     # or theta = 3 (× the virtual instance)
    utility = { gamma1 = 50, gamma2 = 5, gamma3 = 8 }
    time_scale = 100.0
    arrival = 0.0                      # optional (default 0: one interval)

Resources not named in a demand table count 0; names must be resources of the pool.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from ddl_gym.scenario_base import Scenario
from ddl_gym.sim.model import ClusterSpec, ConfigError, Workload
from ddl_gym.sim.perf import make_performance_model
from ddl_gym.sim.perf.ps import MODES, OVERLAP_MODELS, SMDProfile, overlap_coefficients
from ddl_gym.workloads.smd_jobs import MAX_PS_JOBS
from ddl_gym.workloads.smd_jobs import (
    GBPS, INSTANCE, MB, PS_PLACEHOLDER_MODEL, RESOURCE_UNIT, SMD_RESOURCES, SMDJobSource, pooled_cluster,
)

_CLUSTER_KEYS = {"pool", "units", "instances"}
_WORKLOAD_KINDS = ("smd", "ps-jobs")
_JOB_KEYS = {"iterations", "mode", "global_batch", "mini_batch", "gradient_mb", "bandwidth_gbps", "t_f", "t_b", "layers",
             "overlap", "slice_s", "eta", "alpha", "beta1", "beta2", "worker", "ps", "limit", "theta", "utility",
             "time_scale", "arrival"}


def is_ps_scenario(data: Mapping[str, Any]) -> bool:
    """Whether a parsed scenario file describes a resource pool or parameter-server jobs."""
    cluster, workload = data.get("cluster"), data.get("workload")
    return (isinstance(cluster, dict) and bool(_CLUSTER_KEYS & set(cluster))) or \
        (isinstance(workload, dict) and workload.get("kind") in _WORKLOAD_KINDS)


#: Largest number a PS scenario file may give (any key): keeps every product of them finite.
MAX_NUMBER = 1e15


class _Errors:
    def __init__(self, path: Path) -> None:
        self.path = path

    def __call__(self, key: str, msg: str) -> ConfigError:
        return ConfigError(f"{self.path}: {key}: {msg}")

    def number(self, table: Mapping[str, Any], key: str, where: str, *, default: Any = None, positive: bool = False,
               integer: bool = False, high: float = MAX_NUMBER) -> float:
        value = table.get(key, default)
        if value is None:
            raise self(f"{where}{key}", "required")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not np.isfinite(value):
            raise self(f"{where}{key}", f"must be a number, got {value!r}")
        if value < 0 or (positive and value <= 0):
            raise self(f"{where}{key}", f"must be {'> 0' if positive else '>= 0'}, got {value!r}")
        if value > high:
            raise self(f"{where}{key}", f"must be at most {high:,g}, got {value!r}")
        if integer and value != int(value):
            raise self(f"{where}{key}", f"must be a whole number, got {value!r}")
        return float(value)

    def vector(self, table: Mapping[str, Any], key: str, where: str, resources: tuple[str, ...]) -> tuple[float, ...]:
        sub = table.get(key)
        if not isinstance(sub, dict):
            raise self(f"{where}{key}", f"must be a table of resource amounts ({', '.join(resources)})")
        for name in sub:
            if name not in resources:
                raise self(f"{where}{key}.{name}", f"unknown resource (the pool has {', '.join(resources)})")
        return tuple(self.number(sub, r, f"{where}{key}.", default=0.0, integer=(r == "gpu")) for r in resources)


def _cluster(cfg: Any, err: _Errors) -> ClusterSpec:
    if not isinstance(cfg, dict):
        raise err("cluster", "missing [cluster] table")
    given = _CLUSTER_KEYS & set(cfg)
    if len(given) != 1:
        raise err("cluster", f"give exactly one of {sorted(_CLUSTER_KEYS)}")
    extra = set(cfg) - _CLUSTER_KEYS
    if extra:
        raise err(f"cluster.{sorted(extra)[0]}", "unknown key for a pooled cluster (pool, units or instances)")
    key = given.pop()
    if key == "pool":
        pool = cfg["pool"]
        if not isinstance(pool, dict) or "gpu" not in pool:
            raise err("cluster.pool", "must be a table of capacities with a 'gpu' entry, e.g. {gpu = 600, cpu = 3400}")
        names = ("gpu",) + tuple(k for k in pool if k != "gpu")
        capacity = {r: err.number(pool, r, "cluster.pool.", integer=(r == "gpu")) for r in names}
        if capacity["gpu"] < 1:
            raise err("cluster.pool.gpu", "a pool needs >= 1 GPU (the engine's pooled server)")
        return ClusterSpec.pooled(capacity)
    amount = err.number(cfg, key, "cluster.", positive=True)
    unit = RESOURCE_UNIT if key == "units" else INSTANCE
    if float(unit["gpu"]) * amount != int(float(unit["gpu"]) * amount):
        raise err(f"cluster.{key}", f"must give a whole number of GPUs ({unit['gpu']:g} per {key[:-1]})")
    return pooled_cluster(amount, unit)


def _job(cfg: Any, index: int, resources: tuple[str, ...], err: _Errors) -> tuple[SMDProfile, int, float]:
    where = f"workload.jobs[{index}]."
    if not isinstance(cfg, dict):
        raise err(where[:-1], "must be a table")
    for key in cfg:
        if key not in _JOB_KEYS:
            raise err(f"{where}{key}", f"unknown key (expected one of {sorted(_JOB_KEYS)})")
    mode = cfg.get("mode", "sync")
    if mode not in MODES:
        raise err(f"{where}mode", f"must be one of {MODES}, got {mode!r}")
    iterations = err.number(cfg, "iterations", where, positive=True, integer=True)
    overlap = cfg.get("overlap", "wait-free")
    if overlap not in OVERLAP_MODELS:
        raise err(f"{where}overlap", f"must be one of {OVERLAP_MODELS}, got {overlap!r}")
    if "layers" in cfg:
        layers = cfg["layers"]
        if not isinstance(layers, dict) or set(layers) != {"f", "b", "r"}:
            raise err(f"{where}layers", "must be a table {f = [...], b = [...], r = [...]} (seconds per sample)")
        try:
            f, b, r = (np.asarray(layers[k], dtype=np.float64) for k in ("f", "b", "r"))
            eta = overlap_coefficients(f, b, r, overlap, err.number(cfg, "slice_s", where, default=0.0))
        except (ValueError, TypeError, ConfigError) as exc:
            raise err(f"{where}layers", str(exc)) from None
        t_f, t_b = float(f.sum()), float(b.sum())
        if "eta" in cfg or "t_f" in cfg or "t_b" in cfg:
            raise err(f"{where}layers", "give either layers or t_f/t_b/eta, not both")
    else:
        t_f = err.number(cfg, "t_f", where)
        t_b = err.number(cfg, "t_b", where)
        raw = cfg.get("eta", [1.0, 1.0, 1.0])
        if not isinstance(raw, list) or len(raw) != 3:
            raise err(f"{where}eta", f"must be a list of three numbers, got {raw!r}")
        eta = tuple(err.number({"eta": v}, "eta", where) for v in raw)
    if "limit" in cfg and "theta" in cfg:
        raise err(f"{where}limit", "give either limit or theta, not both")
    if "theta" in cfg:
        theta = err.number(cfg, "theta", where, positive=True)
        limit = tuple(theta * INSTANCE.get(x, 0.0) for x in resources)
    else:
        limit = err.vector(cfg, "limit", where, resources)
    utility = cfg.get("utility")
    if not isinstance(utility, dict):
        raise err(f"{where}utility", "must be a table {gamma1 = ..., gamma2 = ..., gamma3 = ...}")
    gamma = tuple(err.number(utility, k, f"{where}utility.") for k in ("gamma1", "gamma2", "gamma3"))
    try:
        profile = SMDProfile(
            mode=mode, gradient_bytes=err.number(cfg, "gradient_mb", where) * MB,
            bandwidth=err.number(cfg, "bandwidth_gbps", where, positive=True) * GBPS,
            global_batch=err.number(cfg, "global_batch", where, default=1.0, positive=True),
            mini_batch=err.number(cfg, "mini_batch", where, default=1.0, positive=True),
            t_f=t_f, t_b=t_b, alpha=err.number(cfg, "alpha", where, default=1.0),
            beta1=err.number(cfg, "beta1", where, default=0.0), beta2=err.number(cfg, "beta2", where, default=0.0),
            eta=eta, resources=resources, worker_demand=err.vector(cfg, "worker", where, resources),
            ps_demand=err.vector(cfg, "ps", where, resources), limit=limit, gamma=gamma,
            time_scale=err.number(cfg, "time_scale", where, default=1.0, positive=True), overlap=overlap)
    except ConfigError as exc:
        raise err(where[:-1], str(exc)) from None
    return profile, int(iterations), err.number(cfg, "arrival", where, default=0.0)


@dataclass(frozen=True)
class ExplicitPSJobs:
    """Workload source: the same explicit PS jobs every episode."""

    workload: Workload

    def __call__(self, rng: np.random.Generator, cluster: ClusterSpec) -> Workload:
        return self.workload


def load_ps_scenario(path: Path, data: Mapping[str, Any]) -> Scenario:
    """Build the scenario of a PS scenario file (see the module docstring); errors name file and key."""
    err = _Errors(Path(path))
    cluster = _cluster(data.get("cluster"), err)
    model_cfg = data.get("model", {"name": "smd-ps"})
    if not isinstance(model_cfg, dict):
        raise err("model", "must be a table")
    model_cfg = dict(model_cfg)
    model_name = model_cfg.pop("name", "smd-ps")
    if model_name != "smd-ps":
        raise err("model.name", f"PS jobs on a pool run on the 'smd-ps' speed model, got {model_name!r}")
    try:
        model = make_performance_model(model_name, **model_cfg)
    except ConfigError as exc:
        raise err("model", str(exc)) from None
    if data.get("engine", "job") != "job":
        raise err("engine", "PS scenarios run on the job-level engine ('job')")
    wl = data.get("workload")
    if not isinstance(wl, dict):
        raise err("workload", "missing [workload] table")
    name = str(data.get("name", Path(path).stem))
    kind = wl.get("kind")
    if kind == "smd":
        known = {"kind", "mode", "num_jobs", "overlap", "time_scale", "time_scale_factor"}
        for key in wl:
            if key not in known:
                raise err(f"workload.{key}", f"unknown key for kind = 'smd' (expected one of {sorted(known)})")
        if cluster.resources != SMD_RESOURCES:
            raise err("cluster.pool", f"kind = 'smd' jobs demand {SMD_RESOURCES}; the pool has {cluster.resources}")
        mode = wl.get("mode", "sync")
        if mode not in MODES:
            raise err("workload.mode", f"must be one of {MODES}, got {mode!r}")
        overlap = wl.get("overlap", "wait-free")
        if overlap not in OVERLAP_MODELS:
            raise err("workload.overlap", f"must be one of {OVERLAP_MODELS}, got {overlap!r}")
        source: Any = SMDJobSource(
            mode=mode, num_jobs=int(err.number(wl, "num_jobs", "workload.", default=50, positive=True, integer=True,
                                               high=MAX_PS_JOBS)),
            overlap=overlap,
            time_scale=err.number(wl, "time_scale", "workload.", positive=True) if "time_scale" in wl else None,
            time_scale_factor=err.number(wl, "time_scale_factor", "workload.", default=1.0, positive=True), name=name)
    elif kind == "ps-jobs":
        jobs = wl.get("jobs")
        for key in wl:
            if key not in ("kind", "jobs"):
                raise err(f"workload.{key}", "unknown key for kind = 'ps-jobs' (expected kind and [[workload.jobs]])")
        if not isinstance(jobs, list) or not jobs:
            raise err("workload.jobs", "kind = 'ps-jobs' needs one or more [[workload.jobs]] tables")
        parsed = [_job(cfg, i, cluster.resources, err) for i, cfg in enumerate(jobs)]
        n = len(parsed)
        workload = Workload.from_jobs(arrival=[a for _, _, a in parsed], gpus=[1] * n,
                                      iterations=[e for _, e, _ in parsed], models=[PS_PLACEHOLDER_MODEL] * n,
                                      arch=["ps"] * n, profiles=[p for p, _, _ in parsed], name=name)
        source = ExplicitPSJobs(workload)
    else:
        raise err("workload.kind", f"PS scenarios take kind {' or '.join(map(repr, _WORKLOAD_KINDS))}, got {kind!r}")
    scenario = Scenario(name=name, cluster=cluster, workload=source, model=model,
                        description=str(data.get("description", f"from {path}")))
    try:  # fail now, naming the file, rather than at the first episode
        episode_cluster, episode_workload = scenario.episode(0)
        model.bind(episode_cluster, episode_workload)
    except ConfigError as exc:
        raise ConfigError(f"{path}: workload: {exc}") from None
    return scenario
