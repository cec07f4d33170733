"""Scenario randomisation for agents meant to transfer to other clusters, loads and real traces.

``transfer-train`` (registered with the built-in scenarios) draws every training episode from a
wide family instead of one setting, so that the policy cannot overfit one cluster size, one
network or one job mix. All draws come from the episode's generator (``env.reset(seed)`` =
``scenario.episode(seed)``), so training is reproducible.

Per episode (:class:`RandomClusterSource`, :class:`MixedWorkloadSource`):

* **Cluster**: ``S`` servers from ``{4, 8, 12, 16, 24}``, each with 4 or 8 GPUs (one size
  per cluster) or — with probability 1/4 — a heterogeneous mix of 2-, 4- and 8-GPU servers in the
  proportions of Alibaba's GPU node list (``openb_node_list_gpu_node.csv``: 518 / 54 / 617 nodes;
  the 24 one-GPU nodes are left out); at most 128 GPUs. NIC bandwidth log-uniform in
  [10, 100] Gb/s; intra-server 800 Gb/s.
* **Workload** (probabilities 0.5 / 0.35 / 0.15; Alibaba windows get the least weight because no
  decision changes their average JCT much: it is set by multi-day one-GPU tasks):

  - *synthetic*: the papers' size mix (Ada-SRSF/SJF-BCO, sizes up to the cluster and 32 GPUs),
    1000–6000 iterations, Table III models, Poisson arrivals rescaled so that the episode's
    offered load ``Σ G_j·ρ_j / (GPUs × arrival span)`` (ρ_j = uncontended run time on the most
    consolidated placement) equals a target drawn log-uniformly in [0.5, 4];
  - *Philly*: a window of the Pollux table's **training split** (before 2017-11-13);
  - *Alibaba*: a window of the Alibaba v2023 **training split** (before day 138), fractional
    GPUs as whole GPUs;

  trace windows take ``time_scale`` = the built-in calibrated scale × ``0.8 / target`` (same load
  target draw), i.e. from 5× denser to 1.6× sparser than the evaluation scenarios (the in-window
  load of :mod:`ddl_gym.workloads.windows` moves roughly, not exactly, inversely with the scale).
  Jobs per episode: ``2.5 × GPUs`` clipped to [40, 160].
* **Performance model**: the default scenario's (RAR contention, ξ1 of the default).

Evaluation windows (``philly-windows``, ``alibaba-windows``: the evaluation splits) and the
held-out seeds (1 000 000+) are never drawn here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ddl_gym.sim.model import ClusterSpec, ConfigError, Workload

GBPS = 1e9 / 8
#: Alibaba v2023 GPU node list: nodes with 2, 4 and 8 GPUs (the 24 one-GPU nodes left out).
ALIBABA_NODE_MIX: dict[int, int] = {2: 518, 4: 54, 8: 617}


def _log_uniform(rng: np.random.Generator, low: float, high: float) -> float:
    return float(math.exp(rng.uniform(math.log(low), math.log(high))))


@dataclass(frozen=True)
class RandomClusterSource:
    """A cluster drawn per episode (module docstring)."""

    servers: tuple[int, ...] = (4, 8, 12, 16, 24)
    gpus_per_server: tuple[int, ...] = (4, 8)
    heterogeneous_probability: float = 0.25
    node_mix: tuple[tuple[int, int], ...] = tuple(ALIBABA_NODE_MIX.items())
    nic_gbps: tuple[float, float] = (10.0, 100.0)
    intra_gbps: float = 800.0
    max_gpus: int = 128

    def __call__(self, rng: np.random.Generator) -> ClusterSpec:
        servers = int(rng.choice(self.servers))
        if rng.random() < self.heterogeneous_probability:
            sizes = np.array([s for s, _ in self.node_mix])
            weights = np.array([w for _, w in self.node_mix], dtype=float)
            per_server = rng.choice(sizes, size=servers, p=weights / weights.sum())
        else:
            per_server = np.full(servers, int(rng.choice(self.gpus_per_server)))
        while per_server.sum() > self.max_gpus:  # drop servers until it fits the cap
            per_server = per_server[:-1]
        nic = _log_uniform(rng, *self.nic_gbps)
        return ClusterSpec(gpus_per_server=tuple(int(g) for g in per_server), inter_bandwidth=nic * GBPS,
                           intra_bandwidth=self.intra_gbps * GBPS)


def nominal_durations(workload: Workload, cluster: ClusterSpec, performance_model: Any) -> np.ndarray:
    """Each job's uncontended run time on its most consolidated placement (seconds)."""
    bound = performance_model.bind(cluster, workload)
    spans = -(-workload.gpus // cluster.max_server_gpus)
    per_iter = np.array([bound.iteration_time(j, int(s), 1 if s > 1 else 0) for j, s in enumerate(spans.tolist())])
    return workload.iterations * per_iter


def offered_load(workload: Workload, cluster: ClusterSpec, performance_model: Any) -> float:
    """``Σ G_j·ρ_j / (GPUs × arrival span)`` (``inf`` when every job arrives at once)."""
    work = float((workload.gpus * nominal_durations(workload, cluster, performance_model)).sum())
    span = float(workload.arrival[-1] - workload.arrival[0]) if workload.num_jobs else 0.0
    return work / (cluster.num_gpus * span) if span > 0 else math.inf


@dataclass(frozen=True)
class MixedWorkloadSource:
    """Synthetic, Philly-training and Alibaba-training episodes at a random load (module docstring)."""

    performance_model: Any = None
    kinds: tuple[tuple[str, float], ...] = (("synthetic", 0.5), ("philly", 0.35), ("alibaba", 0.15))
    load: tuple[float, float] = (0.5, 4.0)
    jobs_per_gpu: float = 2.5
    jobs: tuple[int, int] = (40, 160)
    trace_sources: tuple[Any, ...] = field(default=(), compare=False)

    def trace_data(self) -> list[str]:
        """Keys of :data:`ddl_gym.workloads.tracedata.TRACE_DATA` the episodes may read."""
        return [k for kind, weight in self.kinds if weight > 0 and kind != "synthetic"
                for k in self._trace(kind).trace_data()]

    def trace_files(self) -> list[str]:
        """The trace files the episodes may read (for the evaluation cache's content fingerprint)."""
        return [f for kind, weight in self.kinds if weight > 0 and kind != "synthetic"
                for f in self._trace(kind).trace_files()]

    def _trace(self, trace: str) -> Any:
        from ddl_gym.workloads.windows import BUILTIN_TIME_SCALE, TraceWindowSource

        extra = {"table": "pollux"} if trace == "philly" else {"fractional": "whole"}
        return TraceWindowSource(trace=trace, split="train", time_scale=BUILTIN_TIME_SCALE[trace],
                                 performance_model=self.performance_model, **extra)

    def __call__(self, rng: np.random.Generator, cluster: ClusterSpec) -> Workload:
        from ddl_gym.workloads.synthetic import scaled_workload
        from ddl_gym.workloads.windows import TARGET_MEDIAN_LOAD

        from ddl_gym.workloads.tracedata import locate

        for key in self.trace_data():  # every episode needs every trace: stop now, whatever this draw picks
            locate(key)
        names = [k for k, _ in self.kinds]
        weights = np.array([w for _, w in self.kinds], dtype=float)
        kind = names[int(rng.choice(len(names), p=weights / weights.sum()))]
        target = _log_uniform(rng, *self.load)
        num_jobs = int(np.clip(round(self.jobs_per_gpu * cluster.num_gpus), *self.jobs))
        if kind == "synthetic":
            workload = scaled_workload(rng, num_jobs, max_gpus=min(32, cluster.num_gpus), arrival_rate_per_s=1.0,
                                       name="transfer-synthetic")
            load = offered_load(workload, cluster, self.performance_model)
            return replace(workload, arrival=workload.arrival * (load / target))
        if kind not in ("philly", "alibaba"):
            raise ConfigError(f"MixedWorkloadSource: unknown kind {kind!r}")
        base = self._trace(kind)
        source = replace(base, num_jobs=num_jobs, time_scale=base.time_scale * TARGET_MEDIAN_LOAD / target)
        return source(rng, cluster)


def transfer_scenarios() -> list[Any]:
    """``transfer-train``: the randomised training family on the default scenario's performance model."""
    from ddl_gym.scenarios import SCENARIOS, Scenario

    model = SCENARIOS["default"].model
    return [Scenario(
        name="transfer-train", cluster=RandomClusterSource(), workload=MixedWorkloadSource(performance_model=model),
        model=model,
        description="training family: 4-24 servers (4/8/mixed GPUs), 10-100 Gb/s, load 0.5-4; synthetic, Philly "
                    "and Alibaba training-split windows (agents/transfer.py)",
    )]
