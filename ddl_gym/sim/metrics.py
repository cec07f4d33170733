"""Per-job records and summary metrics, identical for every simulator, policy and agent."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ddl_gym.sim.model import ClusterSpec, Workload

#: Summary keys every result reports (the harness adds scenario/policy/seed/decision_time_s).
SUMMARY_KEYS: tuple[str, ...] = (
    "jobs", "makespan_s", "avg_jct_s", "median_jct_s", "p95_jct_s", "avg_queue_s",
    "gpu_alloc_util", "gpu_compute_util", "total_jct_s", "weighted_jct_s", "avg_slowdown",
)


@dataclass
class SimResult:
    """What one simulation run produced.

    Attributes:
        workload, cluster: the inputs.
        start, finish: per-job start and completion time in seconds (NaN if it never ran).
        n_servers: servers each job's workers spanned.
        gpu_ids: the global GPU indices each job ran on.
        ideal_runtime: the job's run time had it run alone on the same placement (no contention).
        decisions: number of scheduling decisions taken (placements started).
        timeline: optional list of ``(time, job, per_iteration_time)`` rate changes (for plots).
    """

    workload: Workload
    cluster: ClusterSpec
    start: np.ndarray
    finish: np.ndarray
    n_servers: np.ndarray
    gpu_ids: list[tuple[int, ...]]
    ideal_runtime: np.ndarray
    decisions: int = 0
    policy: str = ""
    timeline: list[tuple[float, int, float]] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def jct(self) -> np.ndarray:
        return self.finish - self.workload.arrival

    @property
    def queueing(self) -> np.ndarray:
        return self.start - self.workload.arrival

    @property
    def completed(self) -> bool:
        return bool(np.all(np.isfinite(self.finish)))

    def summary(self) -> dict[str, float]:
        """Aggregate metrics; see SUMMARY_KEYS. Utilisations are fractions in [0, 1]."""
        w = self.workload
        done = np.isfinite(self.finish)
        jct = self.jct[done]
        n_done = int(done.sum())
        if n_done == 0:
            return {k: (0.0 if k != "jobs" else 0) for k in SUMMARY_KEYS}
        makespan = float(self.finish[done].max() - w.arrival.min())
        runtime = (self.finish - self.start)[done]
        gpus = w.gpus[done]
        capacity = self.cluster.num_gpus * makespan if makespan > 0 else np.inf
        compute = (w.iterations * w.per_job("forward_s") + w.iterations * w.per_job("backward_s"))[done]
        return {
            "jobs": n_done,
            "makespan_s": makespan,
            "avg_jct_s": float(jct.mean()),
            "median_jct_s": float(np.median(jct)),
            "p95_jct_s": float(np.percentile(jct, 95)),
            "avg_queue_s": float(self.queueing[done].mean()),
            "gpu_alloc_util": float((gpus * runtime).sum() / capacity),
            "gpu_compute_util": float((gpus * compute).sum() / capacity),
            "total_jct_s": float(jct.sum()),
            "weighted_jct_s": float((w.weight[done] * jct).sum()),
            "avg_slowdown": float(np.mean(runtime / np.maximum(self.ideal_runtime[done], 1e-12))),
        }

    def job_records(self) -> dict[str, np.ndarray | list]:
        """Column dict with one row per job (``pandas.DataFrame(result.job_records())``)."""
        w = self.workload
        return {
            "job_id": w.job_id,
            "arrival_s": w.arrival,
            "gpus": w.gpus,
            "iterations": w.iterations,
            "model": [w.models[m].name for m in w.model_index],
            "weight": w.weight,
            "start_s": self.start,
            "finish_s": self.finish,
            "jct_s": self.jct,
            "queue_s": self.queueing,
            "n_servers": self.n_servers,
            "slowdown": (self.finish - self.start) / np.maximum(self.ideal_runtime, 1e-12),
            "gpu_ids": [" ".join(map(str, g)) for g in self.gpu_ids],
        }
