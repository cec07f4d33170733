"""Plots made from the harness's CSV files (``summary.csv``, ``jobs.csv``) only.

matplotlib is imported lazily and used through its object-oriented API with the Agg canvas, so
plotting never touches a global backend or opens a window (safe on headless machines and in
worker processes). Every function writes one PNG and returns its path.

* :func:`plot_jct_cdf` — empirical CDF of job completion time, one line per policy (all seeds pooled).
* :func:`plot_metric_bars` — one panel per metric, one bar per policy, mean ± 95% CI over seeds.
* :func:`plot_gantt` — GPU occupancy: GPU index vs time, one bar per job per GPU, shaded by the
  job's slowdown against running alone on the same placement (i.e. by network contention).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

#: Default panels of :func:`plot_metric_bars`: (column, axis label, scale).
BAR_METRICS: tuple[tuple[str, str, float], ...] = (
    ("avg_jct_s", "average JCT (s)", 1.0),
    ("p95_jct_s", "p95 JCT (s)", 1.0),
    ("makespan_s", "makespan (s)", 1.0),
    ("gpu_alloc_util", "GPU allocation utilisation (%)", 100.0),
)


def _figure(width: float, height: float) -> Any:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=110, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _save(fig: Any, path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format="png")
    return path


def _group_labels(frame: pd.DataFrame) -> pd.Series:
    """Policy name, prefixed by the scenario when the frame mixes scenarios."""
    if "scenario" in frame.columns and frame["scenario"].nunique() > 1:
        return frame["scenario"].astype(str) + ": " + frame["policy"].astype(str)
    return frame["policy"].astype(str)


def _colours(n: int) -> list[Any]:
    from matplotlib import colormaps

    cmap = colormaps["tab10" if n <= 10 else "tab20"]
    return [cmap(i % cmap.N) for i in range(n)]


def plot_jct_cdf(jobs: pd.DataFrame, path: str | Path, *, title: str | None = None) -> Path:
    """Empirical CDF of job completion time per policy (jobs of all seeds pooled).

    Args:
        jobs: ``jobs.csv`` rows (columns ``policy``, ``jct_s``; ``scenario`` optional).
        path: PNG to write.
        title: figure title.
    """
    fig = _figure(7.0, 4.5)
    ax = fig.add_subplot()
    labels = _group_labels(jobs)
    names = sorted(labels.unique())
    lo, hi = np.inf, 0.0
    for name, colour in zip(names, _colours(len(names))):
        jct = np.sort(jobs.loc[labels == name, "jct_s"].to_numpy(dtype=np.float64))
        jct = jct[np.isfinite(jct)]
        if jct.size == 0:
            continue
        lo, hi = min(lo, jct[0]), max(hi, jct[-1])
        y = np.arange(1, jct.size + 1) / jct.size
        ax.step(np.concatenate(([jct[0]], jct)), np.concatenate(([0.0], y)), where="post", label=name,
                color=colour, linewidth=1.4)
    if np.isfinite(lo) and lo > 0 and hi / lo > 50:  # heavy-tailed JCTs: a log axis keeps both ends readable
        ax.set_xscale("log")
    ax.set_xlabel("job completion time (s)")
    ax.set_ylabel("fraction of jobs")
    ax.set_ylim(0, 1.01)
    ax.grid(True, alpha=0.3)
    if names:
        ax.legend(fontsize="small", loc="lower right")
    ax.set_title(title or "JCT CDF")
    return _save(fig, path)


def plot_metric_bars(
    summary: pd.DataFrame,
    path: str | Path,
    *,
    metrics: Sequence[tuple[str, str, float]] = BAR_METRICS,
    title: str | None = None,
) -> Path:
    """Bars of each metric per policy: mean over seeds with 95% Student-t CI error bars.

    Args:
        summary: ``summary.csv`` rows (columns ``policy``, ``seed`` and the metrics).
        path: PNG to write.
        metrics: ``(column, label, scale)`` per panel; missing columns are skipped.
        title: figure title.
    """
    from ddl_gym.harness import mean_ci

    present = [m for m in metrics if m[0] in summary.columns]
    labels = _group_labels(summary)
    names = sorted(labels.unique())
    cols = min(2, max(1, len(present)))
    rows = -(-len(present) // cols) if present else 1
    fig = _figure(max(6.0, 0.55 * len(names) * cols + 2.5), 3.2 * rows + 0.6)
    colours = _colours(len(names))
    for k, (column, label, scale) in enumerate(present):
        ax = fig.add_subplot(rows, cols, k + 1)
        means, halves = [], []
        for name in names:
            mean, half, _ = mean_ci(summary.loc[labels == name, column])
            means.append(mean * scale)
            halves.append(0.0 if not np.isfinite(half) else half * scale)
        x = np.arange(len(names))
        ax.bar(x, means, yerr=halves, capsize=3, color=colours, edgecolor="black", linewidth=0.4)
        ax.set_xticks(x, names, rotation=35, ha="right", fontsize="small")
        ax.set_ylabel(label)
        ax.grid(True, axis="y", alpha=0.3)
    seeds = summary["seed"].nunique() if "seed" in summary.columns else 0
    fig.suptitle(title or f"mean ± 95% CI over {seeds} seed(s)")
    return _save(fig, path)


def _gpu_list(value: Any) -> list[int]:
    if isinstance(value, str):
        return [int(v) for v in value.split()]
    if value is None or (isinstance(value, float) and not np.isfinite(value)):
        return []
    if isinstance(value, (int, np.integer)):
        return [int(value)]
    return [int(v) for v in value]


def plot_gantt(
    job_rows: pd.DataFrame | Iterable[Mapping[str, Any]],
    num_gpus: int,
    path: str | Path,
    *,
    title: str | None = None,
    max_bars: int = 200_000,
) -> Path:
    """GPU occupancy chart: GPU index vs time, one bar per job per GPU, shaded by slowdown.

    The shade is the job's slowdown — its run time over the run time it would have had alone on
    the same placement — so darker bars are jobs slowed by sharing NICs with other split jobs.

    Args:
        job_rows: ``jobs.csv`` rows of one run (``start_s``, ``finish_s``, ``gpu_ids`` as
            ``"0 1 2"`` or a sequence, ``slowdown``).
        num_gpus: GPUs in the cluster (the y range).
        path: PNG to write.
        title: figure title.
        max_bars: draw at most this many bars (earliest-starting jobs first) to bound the cost.
    """
    from matplotlib import colormaps
    from matplotlib.collections import PolyCollection
    from matplotlib.colors import Normalize

    frame = job_rows if isinstance(job_rows, pd.DataFrame) else pd.DataFrame(list(job_rows))
    if len(frame):
        frame = frame[np.isfinite(frame["start_s"].to_numpy(float)) & np.isfinite(frame["finish_s"].to_numpy(float))]
        frame = frame.sort_values("start_s", kind="stable")
    starts = frame["start_s"].to_numpy(float) if len(frame) else np.zeros(0)
    finishes = frame["finish_s"].to_numpy(float) if len(frame) else np.zeros(0)
    slowdowns = frame["slowdown"].to_numpy(float) if len(frame) and "slowdown" in frame else np.ones(len(frame))
    gpu_lists = [_gpu_list(v) for v in frame["gpu_ids"]] if len(frame) else []

    horizon = float(finishes.max()) if finishes.size else 1.0
    unit, unit_name = (3600.0, "h") if horizon > 7200 else (1.0, "s")
    polys, shades = [], []
    drawn_jobs = 0
    for start, finish, slow, gpus in zip(starts / unit, finishes / unit, slowdowns, gpu_lists):
        if len(polys) + len(gpus) > max_bars:
            break
        drawn_jobs += 1
        for g in gpus:
            polys.append(((start, g - 0.4), (finish, g - 0.4), (finish, g + 0.4), (start, g + 0.4)))
            shades.append(slow if np.isfinite(slow) else 1.0)

    fig = _figure(9.0, max(3.0, min(12.0, 1.5 + 0.12 * num_gpus)))
    ax = fig.add_subplot()
    cmap = colormaps["YlOrRd"]
    top = max(1.05, float(np.max(shades)) if shades else 1.05)
    norm = Normalize(vmin=1.0, vmax=top)
    if polys:
        collection = PolyCollection(polys, array=np.asarray(shades), cmap=cmap, norm=norm,
                                    edgecolors="0.35" if len(polys) < 4000 else "face", linewidths=0.2)
        ax.add_collection(collection)
        bar = fig.colorbar(collection, ax=ax, pad=0.01)
        bar.set_label("slowdown vs. running alone (contention)")
    ax.set_xlim(0, max(horizon / unit, 1e-9) * 1.01)
    ax.set_ylim(-0.6, num_gpus - 0.4)
    ax.set_xlabel(f"time ({unit_name})")
    ax.set_ylabel("GPU index")
    shown = title or "GPU occupancy"
    if drawn_jobs < len(gpu_lists):
        shown += f" (first {drawn_jobs} of {len(gpu_lists)} jobs)"
    ax.set_title(shown)
    return _save(fig, path)
