"""Per-job records and summary metrics, identical for every simulator, policy and agent."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from collections.abc import Sequence
from typing import Any

import numpy as np

from ddl_gym.sim.model import ARCHITECTURES, ClusterSpec, Workload

#: Summary keys every result reports (the harness adds scenario/policy/seed/decision_time_s).
#: ``weighted_completion`` is Σ w_j·C_j in seconds with absolute completion times (A-Online's objective);
#: ``rejected_jobs`` and ``preemptions`` count engine capability uses.
SUMMARY_KEYS: tuple[str, ...] = (
    "jobs", "makespan_s", "avg_jct_s", "median_jct_s", "p95_jct_s", "avg_queue_s",
    "gpu_alloc_util", "gpu_compute_util", "total_jct_s", "weighted_jct_s", "avg_slowdown",
    "weighted_completion", "rejected_jobs", "preemptions",
)
#: Keys added only where they are defined: ``total_utility`` (jobs whose profile has a utility,
#: e.g. SMD's sigmoid; rejected jobs count 0) and ``resource_util_<r>`` for each non-GPU resource
#: ``r`` (held resource-seconds ÷ (cluster capacity × makespan)), and ``resource_use_ratio_<r>`` where
#: profiles carry ``resource_limits`` (SMD: Σ held amount ÷ Σ user limit over finished jobs).
OPTIONAL_SUMMARY_KEYS: tuple[str, ...] = ("total_utility",)


def median_of_sorted(values: Sequence[float]) -> float:
    """``np.median`` of ascending finite ``values``, bit for bit (the middle value, or the mean of the
    two middle ones), without numpy's per-call overhead (tens of µs, paid at every episode end)."""
    n = len(values)
    half = n // 2
    return float(values[half]) if n % 2 else (values[half - 1] + values[half]) / 2


def percentile_of_sorted(values: Sequence[float], q: float) -> float:
    """``np.percentile(values, q)`` (method "linear") of ascending finite ``values``, bit for bit.

    numpy's steps in scalar form: virtual index ``(n − 1)·q/100``, its floor and the next index (both
    the last element at or past the end), and numpy's two-sided linear interpolation (from the
    upper neighbour when the fraction is at least 0.5).
    """
    n = len(values)
    virtual = (n - 1) * (q / 100)
    if virtual >= n - 1:
        return float(values[-1])
    below = math.floor(virtual)
    fraction = virtual - below
    low, high = values[below], values[below + 1]
    diff = high - low
    return high - diff * (1 - fraction) if fraction >= 0.5 else low + diff * fraction


@dataclass
class SimResult:
    """What one simulation run produced.

    Attributes:
        workload, cluster: the inputs.
        start, finish: per-job start and completion time in seconds (NaN if it never ran).
        n_servers: servers each job's workers spanned.
        gpu_ids: the global GPU indices each job ran on (last holding), a tuple per job; read-only.
        ideal_runtime: the job's run time had it run alone on the same placement (no contention).
        decisions: number of scheduling decisions taken (placements started).
        timeline: optional list of ``(time, job, per_iteration_time)`` rate changes (for plots).
        rejected: per job, whether it left unserved (``None``: nobody could be rejected).
        preemptions: per job, how often it was preempted (``None``: never).
        gpu_seconds: per job, GPU-seconds held over all its holdings (``None``: rigid
            non-preemptive gangs, where it is ``G_j · (finish − start)``).
        resource_seconds: per job and non-GPU resource, amount-seconds held.
        busy_gpu_seconds: per job, GPU-seconds of pure computation (from contention-free rate
            models; ``None``: ``G_j · F_j · (t_f + t_b)`` from the model profile).

    With preemption, ``start`` is the first start and ``ideal_runtime`` is ``F_j`` times the
    uncontended per-iteration time of the job's last placement.
    """

    workload: Workload
    cluster: ClusterSpec
    start: np.ndarray
    finish: np.ndarray
    n_servers: np.ndarray
    gpu_ids: Sequence[tuple[int, ...]]  # a GpuIdTable from the job-level engine (compact), or a list
    ideal_runtime: np.ndarray
    decisions: int = 0
    policy: str = ""
    timeline: list[tuple[float, int, float]] | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    rejected: np.ndarray | None = None
    preemptions: np.ndarray | None = None
    gpu_seconds: np.ndarray | None = None
    resource_seconds: np.ndarray | None = None
    busy_gpu_seconds: np.ndarray | None = None

    @property
    def jct(self) -> np.ndarray:
        return self.finish - self.workload.arrival

    @property
    def queueing(self) -> np.ndarray:
        return self.start - self.workload.arrival

    @property
    def completed(self) -> bool:
        """Every job finished or was rejected."""
        ended = np.isfinite(self.finish)
        if self.rejected is not None:
            ended |= self.rejected
        return bool(np.all(ended))

    def utilities(self) -> np.ndarray | None:
        """Per-job utility of its completion time (NaN where undefined, 0 for rejected jobs), or None.

        A job has a utility when its architecture profile defines ``utility(completion_s)``
        (e.g. SMD's sigmoid of the completion time measured from the job's arrival).
        """
        w = self.workload
        if not any(callable(getattr(p, "utility", None)) for p in w.profiles):
            return None
        out = np.full(w.num_jobs, np.nan)
        jct = self.jct
        for i in range(w.num_jobs):
            profile = w.job_profile(i)
            fn = getattr(profile, "utility", None)
            if fn is None:
                continue
            if self.rejected is not None and self.rejected[i]:
                out[i] = 0.0
            elif np.isfinite(jct[i]):
                out[i] = float(fn(float(jct[i])))
        return out

    def summary(self) -> dict[str, float]:
        """Aggregate metrics; see SUMMARY_KEYS. Utilisations are fractions in [0, 1]."""
        w = self.workload
        done = np.isfinite(self.finish)
        jct = self.jct[done]
        n_done = int(done.sum())
        if n_done == 0:
            out = {k: (0.0 if k != "jobs" else 0) for k in SUMMARY_KEYS}
            out.update(self._optional_summary(done, 0.0))
            return out
        makespan = float(self.finish[done].max() - w.arrival.min())
        runtime = (self.finish - self.start)[done]
        gpus = w.gpus[done]
        capacity = self.cluster.num_gpus * makespan if makespan > 0 else np.inf
        if self.busy_gpu_seconds is not None:
            busy = float(self.busy_gpu_seconds[done].sum())
        else:
            compute = (w.iterations * w.per_job("forward_s") + w.iterations * w.per_job("backward_s"))[done]
            busy = float((gpus * compute).sum())
        held = float((gpus * runtime).sum()) if self.gpu_seconds is None else float(self.gpu_seconds[done].sum())
        out = {
            "jobs": n_done,
            "makespan_s": makespan,
            "avg_jct_s": float(jct.mean()),
            "median_jct_s": median_of_sorted(sorted_jct := sorted(jct.tolist())),
            "p95_jct_s": percentile_of_sorted(sorted_jct, 95),
            "avg_queue_s": float(self.queueing[done].mean()),
            "gpu_alloc_util": held / capacity,
            "gpu_compute_util": busy / capacity,
            "total_jct_s": float(jct.sum()),
            "weighted_jct_s": float((w.weight[done] * jct).sum()),
            "avg_slowdown": float(np.mean(runtime / np.maximum(self.ideal_runtime[done], 1e-12))),
            "weighted_completion": float((w.weight[done] * self.finish[done]).sum()),
            "rejected_jobs": int(self.rejected.sum()) if self.rejected is not None else 0,
            "preemptions": int(self.preemptions.sum()) if self.preemptions is not None else 0,
        }
        out.update(self._optional_summary(done, makespan))
        out.update(self.extra.get("summary", {}))
        return out

    def _optional_summary(self, done: np.ndarray, makespan: float) -> dict[str, float]:
        out: dict[str, float] = {}
        utilities = self.utilities()
        if utilities is not None:
            out["total_utility"] = float(np.nansum(utilities))
        if self.cluster.num_resources > 1:
            capacity = self.cluster.capacity_matrix().sum(axis=0)
            for k, name in enumerate(self.cluster.resources[1:], start=1):
                used = float(self.resource_seconds[done, k - 1].sum()) if self.resource_seconds is not None else 0.0
                denominator = capacity[k] * makespan
                out[f"resource_util_{name}"] = used / denominator if denominator > 0 else 0.0
        out.update(self._resource_use_ratios(done))
        return out

    def _resource_use_ratios(self, done: np.ndarray) -> dict[str, float]:
        """SMD's "actual used resources ratio" (Yu Fig. 12): Σ held amount ÷ Σ user limit over finished jobs
        whose profiles carry ``resource_limits`` (held amount = amount-seconds ÷ run time)."""
        w = self.workload
        if not any(getattr(p, "resource_limits", None) for p in w.profiles):
            return {}
        jobs = [i for i in np.flatnonzero(done) if getattr(w.job_profile(i), "resource_limits", None)]
        if not jobs or self.resource_seconds is None or self.gpu_seconds is None:
            return {}
        runtime = (self.finish - self.start)[jobs]
        held = np.column_stack([self.gpu_seconds[jobs], self.resource_seconds[jobs]]) / runtime[:, None]
        limits = np.array([[dict(w.job_profile(i).resource_limits).get(r, 0.0) for r in self.cluster.resources]
                           for i in jobs])
        return {f"resource_use_ratio_{name}": float(held[:, k].sum() / limits[:, k].sum())
                for k, name in enumerate(self.cluster.resources) if limits[:, k].sum() > 0}

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
            "arch": [ARCHITECTURES[a] for a in w.arch.tolist()],
            "rejected": self.rejected if self.rejected is not None else np.zeros(w.num_jobs, dtype=bool),
            "preemptions": self.preemptions if self.preemptions is not None else np.zeros(w.num_jobs, dtype=np.int64),
        }
