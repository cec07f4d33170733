"""Statistics of the harness: 95% Student-t confidence intervals over seeds, aggregation and paired differences.

Which direction is better per metric (:data:`LOWER_IS_BETTER`, :data:`HIGHER_IS_BETTER`) is defined here.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ddl_gym.harness.policy_specs import policy_label
from ddl_gym.sim.metrics import SUMMARY_KEYS
from ddl_gym.sim.model import ConfigError


#: Metrics where smaller is better (used for "better on k of n seeds" in paired comparisons).
LOWER_IS_BETTER: frozenset[str] = frozenset({
    "makespan_s", "avg_jct_s", "median_jct_s", "p95_jct_s", "avg_queue_s", "total_jct_s", "weighted_jct_s",
    "avg_slowdown", "decision_time_s", "wall_time_s", "weighted_completion", "rejected_jobs", "preemptions",
})


#: Metrics where larger is better (SMD's objective, utilisation).
HIGHER_IS_BETTER: frozenset[str] = frozenset({"total_utility", "gpu_alloc_util", "gpu_compute_util"})


#: Metrics of the Markdown table: (column, header, scale).
TABLE_METRICS: tuple[tuple[str, str, float], ...] = (
    ("avg_jct_s", "avg JCT (s)", 1.0),
    ("median_jct_s", "median JCT (s)", 1.0),
    ("p95_jct_s", "p95 JCT (s)", 1.0),
    ("makespan_s", "makespan (s)", 1.0),
    ("avg_queue_s", "avg queue (s)", 1.0),
    ("gpu_alloc_util", "GPU alloc util (%)", 100.0),
    ("gpu_compute_util", "GPU compute util (%)", 100.0),
    ("decision_time_s", "decision time (s)", 1.0),
)


# Two-sided 95% Student-t quantiles t_{0.975, df} for df = 1..30 (scipy.stats.t.ppf, 4 decimals).
_T975 = (
    12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622, 2.2281,
    2.2010, 2.1788, 2.1604, 2.1448, 2.1314, 2.1199, 2.1098, 2.1009, 2.0930, 2.0860,
    2.0796, 2.0739, 2.0687, 2.0639, 2.0595, 2.0555, 2.0518, 2.0484, 2.0452, 2.0423,
)


_Z975 = 1.959963984540054


# ============================================================================ statistics
def t_quantile_975(df: int) -> float:
    """Two-sided 95% Student-t quantile ``t_{0.975, df}`` (no scipy needed).

    Table values for ``df <= 30``; beyond, the Cornish-Fisher expansion of ``t`` around the normal
    quantile (error below 1e-5 for ``df > 30``).
    """
    if df < 1:
        raise ValueError(f"degrees of freedom must be >= 1, got {df}")
    if df <= len(_T975):
        return _T975[df - 1]
    z = _Z975
    return (z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)
            + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * df**3))


#: Relative spread below which values count as identical (summation-order noise of float64 sums,
#: ~1e-16 relative, stays far below; a real difference between seeds is far above).
FLOAT_NOISE = 1e-9



def mean_ci(values: Iterable[float]) -> tuple[float, float, int]:
    """Mean and half-width of its 95% confidence interval (Student t), ignoring NaNs.

    A standard deviation below :data:`FLOAT_NOISE` times the largest magnitude is floating-point
    noise: the half-width is then exactly 0 (printed as deterministic, ``‡``), not ``± 0.000000``.

    Returns:
        ``(mean, half_width, n)``; the half-width is NaN for fewer than two values.
    """
    x = np.asarray(list(values), dtype=np.float64)
    x = x[np.isfinite(x)]
    n = int(x.size)
    if n == 0:
        return math.nan, math.nan, 0
    mean = float(x.mean())
    if n < 2:
        return mean, math.nan, n
    sd = float(x.std(ddof=1))
    if sd <= FLOAT_NOISE * float(np.max(np.abs(x))):  # floating-point noise, not spread: deterministic
        return mean, 0.0, n
    half = t_quantile_975(n - 1) * sd / math.sqrt(n)
    return mean, half, n


def aggregate(summary: pd.DataFrame, metrics: Sequence[str] | None = None) -> pd.DataFrame:
    """Mean and 95% CI half-width of each metric over seeds, one row per (scenario, policy).

    Columns: ``scenario, policy, seeds, <metric>_mean, <metric>_ci`` for each metric; rows sorted
    by scenario, then by mean of the first metric (best first for JCT-like metrics).
    """
    metrics = list(metrics) if metrics is not None else [m for m, _, _ in TABLE_METRICS]
    rows = []
    for (scenario, policy), group in summary.groupby(["scenario", "policy"], sort=True):
        row: dict[str, Any] = {"scenario": scenario, "policy": policy, "seeds": int(group["seed"].nunique())}
        for metric in metrics:
            mean, half, _ = mean_ci(group[metric]) if metric in group else (math.nan, math.nan, 0)
            row[f"{metric}_mean"] = mean
            row[f"{metric}_ci"] = half
        rows.append(row)
    table = pd.DataFrame(rows, columns=["scenario", "policy", "seeds",
                                        *[f"{m}_{s}" for m in metrics for s in ("mean", "ci")]])
    if metrics and len(table):
        table = table.sort_values(["scenario", f"{metrics[0]}_mean", "policy"], kind="stable").reset_index(drop=True)
    return table


#: Metrics of paired comparisons by default.
PAIRED_METRICS: tuple[str, ...] = ("avg_jct_s", "makespan_s", "p95_jct_s")


def paired_differences(summary: pd.DataFrame, reference: str,
                       metrics: Sequence[str] = PAIRED_METRICS) -> pd.DataFrame:
    """Per-seed paired differences of every policy against ``reference``, with 95% CIs.

    For each scenario, policy and metric, on the seeds both policies ran: ``d_s = x_s − ref_s``
    and ``r_s = 100·d_s / ref_s`` (percent). Pairing removes the between-seed variation of the
    workload, so these intervals are much narrower than the difference of two unpaired means.

    Returns:
        One row per (scenario, policy, metric): ``seeds``, ``diff_mean``, ``diff_ci``,
        ``rel_pct_mean``, ``rel_pct_ci`` (Student t, NaN for one seed), ``better`` (seeds where
        the policy beats the reference, for metrics in :data:`LOWER_IS_BETTER` or
        :data:`HIGHER_IS_BETTER`; else NaN) and
        ``constant`` (every seed gave the same difference: extra seeds add nothing).

    Raises:
        ConfigError: ``reference`` is not in the summary, or a metric is missing.
    """
    reference = policy_label(reference)
    if summary.empty or reference not in set(summary["policy"]):
        known = ", ".join(sorted(set(summary["policy"]))) if not summary.empty else "none"
        raise ConfigError(f"reference policy {reference!r} has no results here (policies: {known})")
    missing = [m for m in metrics if m not in summary.columns]
    if missing:
        raise ConfigError(f"unknown metric {missing[0]!r}; choose from {', '.join(SUMMARY_KEYS)}")
    rows: list[dict[str, Any]] = []
    for scenario, frame in summary.groupby("scenario", sort=True):
        ref = frame[frame["policy"] == reference].set_index("seed")
        for policy, group in frame.groupby("policy", sort=True):
            if policy == reference:
                continue
            mine = group.set_index("seed")
            seeds = sorted(set(mine.index) & set(ref.index))
            if not seeds:
                continue
            for metric in metrics:
                x = mine.loc[seeds, metric].to_numpy(np.float64)
                y = ref.loc[seeds, metric].to_numpy(np.float64)
                diff = x - y
                with np.errstate(divide="ignore", invalid="ignore"):
                    rel = np.where(y != 0, 100.0 * diff / y, np.nan)
                d_mean, d_ci, _ = mean_ci(diff)
                r_mean, r_ci, _ = mean_ci(rel)
                scale = float(np.max(np.abs(y))) if len(y) else 0.0
                constant = bool(len(seeds) > 1 and np.all(np.abs(diff - diff[0]) <= FLOAT_NOISE * scale))
                if constant:  # the same difference on every seed, up to float noise: no interval
                    d_ci = r_ci = 0.0
                if metric in LOWER_IS_BETTER:
                    better = float(np.sum(diff < 0))
                elif metric in HIGHER_IS_BETTER:
                    better = float(np.sum(diff > 0))
                else:
                    better = math.nan
                rows.append({"scenario": scenario, "policy": policy, "reference": reference, "metric": metric,
                             "seeds": len(seeds), "diff_mean": d_mean, "diff_ci": d_ci, "rel_pct_mean": r_mean,
                             "rel_pct_ci": r_ci, "better": better,
                             "constant": constant})
    return pd.DataFrame(rows, columns=["scenario", "policy", "reference", "metric", "seeds", "diff_mean", "diff_ci",
                                       "rel_pct_mean", "rel_pct_ci", "better", "constant"])
