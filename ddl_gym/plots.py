"""Plots made from the harness's CSV files (``summary.csv``, ``jobs.csv``) only.

matplotlib is imported lazily and used through its object-oriented API with the Agg canvas, so
plotting never touches a global backend or opens a window (safe on headless machines and in
worker processes). Every function writes one PNG (atomically: a temporary file renamed over the
target) and returns its path.

* :func:`plot_jct_cdf` — empirical CDF of job completion time, one line per policy (all seeds pooled),
  and below it each JCT quantile's change against the table's first policy (overlapping CDFs apart).
* :func:`plot_metric_bars` — one panel per metric, one point per policy, mean ± 95% CI over seeds
  on an axis zoomed to the data (not bars from zero, so close policies stay distinguishable).
* :func:`plot_gantt` — GPU occupancy: GPU index vs time, one bar per job per GPU, shaded by the
  job's slowdown against running alone on the same placement (i.e. by network contention).

Conventions: policies keep the order of the results table (pass ``order``); agent specs are shown
by :func:`short_label` (``maskable-ppo:runs/x/agent.zip`` -> ``maskable-ppo:x``); an axis turns
logarithmic when its values span more than :data:`LOG_SPREAD`; legends sit outside the data;
error bars never reach below zero for non-negative metrics; Gantt charts of one run share a time
axis and a colour scale (``horizon_s``, ``max_slowdown``) and draw server boundaries.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
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
#: max/min ratio of positive values above which an axis becomes logarithmic.
LOG_SPREAD = 30.0
_GENERIC_STEMS = {"agent", "model", "best", "final", "policy", "checkpoint"}


def _figure(width: float, height: float) -> Any:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=110, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


#: Formats :func:`_save` writes (``figure_formats``); None = the path's own suffix (PNG by default).
_FORMATS: contextvars.ContextVar[tuple[str, ...] | None] = contextvars.ContextVar("ddl_gym_figure_formats",
                                                                                   default=None)


@contextlib.contextmanager
def figure_formats(formats: Sequence[str] | None) -> Iterator[None]:
    """Within the block, every figure is written in each of ``formats`` (``png``, ``svg``, ``pdf``:
    ``--format``) next to the requested path, with that suffix."""
    token = _FORMATS.set(tuple(formats) if formats else None)
    try:
        yield
    finally:
        _FORMATS.reset(token)


def _save(fig: Any, path: str | Path) -> Path:
    """Write ``fig`` atomically; returns the first file written (see :func:`figure_formats`)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    formats = _FORMATS.get() or ((path.suffix.lstrip(".") or "png"),)
    written: list[Path] = []
    for fmt in formats:
        target = path.with_suffix(f".{fmt}")
        tmp = target.with_name(f".{target.name}.tmp{os.getpid()}")
        try:
            fig.savefig(tmp, format=fmt)
            os.replace(tmp, target)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        written.append(target)
    return written[0]


def _agent_parts(policy: str) -> tuple[str, list[str]] | None:
    """``(kind, path parts without the suffix and a generic last stem)`` of an agent spec, else None."""
    kind, sep, path_text = policy.partition(":")
    if not sep or kind.lower() not in ("maskable-ppo", "ppo") or not path_text.strip():
        return None
    parts = list(Path(path_text.strip()).with_suffix("").parts)
    if len(parts) > 1 and parts[-1].lower() in _GENERIC_STEMS:
        parts = parts[:-1]
    return kind, parts


def _tail_label(policy: str, k: int) -> str:
    found = _agent_parts(policy)
    if found is None:
        return policy
    kind, parts = found
    tail = "/".join(parts[-k:])
    return tail if tail.lower().startswith(kind.lower()) else f"{kind}:{tail}"


def short_label(policy: str, others: Sequence[str] = ()) -> str:
    """A readable label: agent specs lose their folders (``maskable-ppo:runs/bc/best/agent.zip`` ->
    ``maskable-ppo:best``); reference policies are unchanged.

    The label keeps as many trailing path parts as it takes to stay distinct from ``others``.
    """
    found = _agent_parts(policy)
    if found is None:
        return policy
    rivals = [o for o in others if o != policy]
    for k in range(1, len(found[1]) + 1):
        mine = _tail_label(policy, k)
        if all(_tail_label(o, k) != mine for o in rivals):
            return mine
    return policy


def _group_labels(frame: pd.DataFrame) -> pd.Series:
    """Short policy name, prefixed by the scenario when the frame mixes scenarios."""
    policies = list(frame["policy"].astype(str).unique())
    short = frame["policy"].astype(str).map(lambda p: short_label(p, policies))
    if "scenario" in frame.columns and frame["scenario"].nunique() > 1:
        return frame["scenario"].astype(str) + ": " + short
    return short


def _ordered_names(frame: pd.DataFrame, labels: pd.Series, order: Sequence[str] | None) -> list[str]:
    """Group labels in the table's policy order (``order``), else alphabetical."""
    names = list(dict.fromkeys(labels))
    if not order:
        return sorted(names)
    rank = {p: i for i, p in enumerate(order)}
    first_policy = {lab: pol for lab, pol in zip(labels, frame["policy"].astype(str))}
    return sorted(names, key=lambda lab: (rank.get(first_policy[lab], len(rank)), lab))


def _colours(n: int) -> list[Any]:
    from matplotlib import colormaps

    cmap = colormaps["tab10" if n <= 10 else "tab20"]
    return [cmap(i % cmap.N) for i in range(n)]


def _spread(values: Iterable[float]) -> float:
    x = np.asarray([v for v in values if np.isfinite(v) and v > 0], dtype=np.float64)
    return float(x.max() / x.min()) if x.size else 1.0


def plot_jct_cdf(jobs: pd.DataFrame, path: str | Path, *, title: str | None = None,
                 order: Sequence[str] | None = None) -> Path:
    """Empirical CDF of job completion time per policy (jobs of all seeds pooled).

    Args:
        jobs: ``jobs.csv`` rows (columns ``policy``, ``jct_s``; ``scenario`` optional).
        path: PNG to write.
        title: figure title.
        order: policies in the order of the results table (legend order).
    """
    labels = _group_labels(jobs)
    names = _ordered_names(jobs, labels, order)
    fig = _figure(8.0, 7.5 if len(names) > 1 else 4.5)
    ax = fig.add_subplot(2, 1, 1) if len(names) > 1 else fig.add_subplot()
    lo, hi = np.inf, 0.0
    quantiles = np.linspace(0.01, 0.99, 99)
    curves: dict[str, np.ndarray] = {}
    for name, colour in zip(names, _colours(len(names))):
        jct = np.sort(jobs.loc[labels == name, "jct_s"].to_numpy(dtype=np.float64))
        jct = jct[np.isfinite(jct)]
        if jct.size == 0:
            continue
        lo, hi = min(lo, jct[0]), max(hi, jct[-1])
        y = np.arange(1, jct.size + 1) / jct.size
        ax.step(np.concatenate(([jct[0]], jct)), np.concatenate(([0.0], y)), where="post", label=name,
                color=colour, linewidth=1.4)
        curves[name] = np.quantile(jct, quantiles)
    if len(names) > 1 and names[0] in curves:
        # Close policies overlap in the CDF: the second panel shows each quantile's change against
        # the first policy of the table (zoomed on the differences).
        base = curves[names[0]]
        diff_ax = fig.add_subplot(2, 1, 2)
        for name, colour in zip(names, _colours(len(names))):
            if name in curves:
                with np.errstate(divide="ignore", invalid="ignore"):
                    change = np.where(base > 0, 100.0 * (curves[name] - base) / base, np.nan)
                diff_ax.plot(100 * quantiles, change, color=colour, linewidth=1.4, label=name)
        diff_ax.axhline(0.0, color="black", linewidth=0.8)
        diff_ax.set_xlabel("JCT quantile (% of jobs)")
        diff_ax.set_ylabel(f"change vs {names[0]} (%)")
        diff_ax.grid(True, alpha=0.3)
    if np.isfinite(lo) and lo > 0 and hi / lo > LOG_SPREAD:  # heavy-tailed JCTs: a log axis keeps both ends readable
        ax.set_xscale("log")
    ax.set_xlabel("job completion time (s)")
    ax.set_ylabel("fraction of jobs")
    ax.set_ylim(0, 1.01)
    ax.grid(True, alpha=0.3)
    if names:  # outside the axes: never on top of a curve
        ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    ax.set_title(title or "JCT CDF")
    return _save(fig, path)


def error_bars(means: Sequence[float], halves: Sequence[float], non_negative: bool) -> np.ndarray:
    """``yerr`` rows (below, above) of CI error bars; below is cut at zero for a non-negative metric."""
    m, h = np.asarray(means, dtype=np.float64), np.asarray(halves, dtype=np.float64)
    below = np.minimum(h, np.where(np.isfinite(m), np.maximum(m, 0.0), 0.0)) if non_negative else h
    return np.vstack([below, h])


def plot_metric_bars(
    summary: pd.DataFrame,
    path: str | Path,
    *,
    metrics: Sequence[tuple[str, str, float]] = BAR_METRICS,
    title: str | None = None,
    order: Sequence[str] | None = None,
) -> Path:
    """Bars of each metric per policy: mean over seeds with 95% Student-t CI error bars.

    Bars follow ``order`` (the results table's order); a panel whose means span more than
    :data:`LOG_SPREAD` gets a log axis; error bars of non-negative metrics stop at zero.

    Args:
        summary: ``summary.csv`` rows (columns ``policy``, ``seed`` and the metrics).
        path: PNG to write.
        metrics: ``(column, label, scale)`` per panel; missing columns are skipped.
        title: figure title.
        order: policies in the order of the results table.
    """
    from ddl_gym.harness.stats import mean_ci

    present = [m for m in metrics if m[0] in summary.columns]
    labels = _group_labels(summary)
    names = _ordered_names(summary, labels, order)
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
        m = np.asarray(means)
        nonneg = bool(np.all(summary[column].dropna() >= 0))
        x = np.arange(len(names))
        err = error_bars(m, halves, nonneg)
        # Points with CI bars on an axis zoomed to the data (not bars from zero): close policies stay apart.
        ax.errorbar(x, m, yerr=err, fmt="none", ecolor="black", elinewidth=1.0, capsize=3, zorder=2)
        ax.scatter(x, m, c=colours, s=36, edgecolors="black", linewidths=0.4, zorder=3)
        if nonneg and _spread(m) > LOG_SPREAD:
            ax.set_yscale("log")
        elif np.isfinite(m).any():
            low = float(np.nanmin(m - err[0]))
            high = float(np.nanmax(m + err[1]))
            pad = 0.08 * (high - low) if high > low else max(abs(high) * 0.01, 1e-9)
            ax.set_ylim(low - pad, high + pad)
        ax.set_xticks(x, names, rotation=35, ha="right", fontsize="small")
        ax.set_ylabel(label)
        ax.grid(True, axis="y", alpha=0.3)
    seeds = summary["seed"].nunique() if "seed" in summary.columns else 0
    fig.suptitle(title or f"mean ± 95% CI over {seeds} seed(s); axes zoomed to the data (not from 0)")
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
    horizon_s: float | None = None,
    max_slowdown: float | None = None,
    gpus_per_server: Sequence[int] | None = None,
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
        horizon_s: right end of the time axis (share it across the charts of one run).
        max_slowdown: top of the colour scale (share it across the charts of one run).
        gpus_per_server: GPUs of each server in order; draws a line at every server boundary.
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

    horizon = float(horizon_s) if horizon_s else (float(finishes.max()) if finishes.size else 1.0)
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

    fig = _figure(9.5, max(3.0, min(12.0, 1.5 + 0.12 * num_gpus)))
    ax = fig.add_subplot()
    cmap = colormaps["YlOrRd"]
    top = float(max_slowdown) if max_slowdown else (float(np.max(shades)) if shades else 1.05)
    norm = Normalize(vmin=1.0, vmax=max(1.05, top))
    collection = PolyCollection(polys, array=np.asarray(shades, dtype=float), cmap=cmap, norm=norm,
                                edgecolors="0.35" if len(polys) < 4000 else "face", linewidths=0.2)
    ax.add_collection(collection)
    bar = fig.colorbar(collection, ax=ax, pad=0.01)  # drawn even when empty: one scale across charts
    bar.set_label("slowdown vs. running alone (contention)")
    if gpus_per_server and sum(gpus_per_server) == num_gpus and len(gpus_per_server) > 1:
        for edge in np.cumsum(gpus_per_server)[:-1]:
            ax.axhline(edge - 0.5, color="0.25", linewidth=0.5 if len(gpus_per_server) > 64 else 0.8, alpha=0.7)
    ax.set_xlim(0, max(horizon / unit, 1e-9) * 1.01)
    ax.set_ylim(-0.6, num_gpus - 0.4)
    ax.set_xlabel(f"time ({unit_name})")
    ax.set_ylabel("GPU index (lines: server boundaries)" if gpus_per_server else "GPU index")
    shown = title or "GPU occupancy"
    if drawn_jobs < len(gpu_lists):
        shown += f" (first {drawn_jobs} of {len(gpu_lists)} jobs)"
    ax.set_title(shown)
    return _save(fig, path)


_LINE_STYLES = (("o", "-"), ("s", "--"), ("^", "-."), ("D", ":"), ("v", "-"), ("P", "--"), ("X", "-."), ("*", ":"))


def merged_series(series: Mapping[str, Sequence[float]], rtol: float = 1e-9) -> list[tuple[str, list[float]]]:
    """Series that are equal point by point (within ``rtol``) merged into one, labelled ``"A = B = C"``.

    A reproduction's policies often coincide on a small grid (every policy admits every job); drawn
    one over the other, the last line hides the rest. Merging them says so in the legend instead.
    Order: first appearance.
    """
    groups: list[tuple[list[str], np.ndarray]] = []
    for label, values in series.items():
        ys = np.asarray(values, dtype=float)
        for names, ref in groups:
            if ref.shape == ys.shape and np.allclose(ys, ref, rtol=rtol, atol=0.0, equal_nan=True):
                names.append(label)
                break
        else:
            groups.append(([label], ys))
    return [(" = ".join(names), ref.tolist()) for names, ref in groups]


def plot_lines(ax: Any, xs: Sequence[float], series: Mapping[str, Sequence[float]]) -> list[str]:
    """Draw ``series`` on ``ax`` with equal series merged (:func:`merged_series`) and a distinct marker
    and line style per line, so no line hides another; returns the legend labels drawn."""
    labels = []
    for k, (label, ys) in enumerate(merged_series(series)):
        marker, style = _LINE_STYLES[k % len(_LINE_STYLES)]
        ax.plot(list(xs), ys, marker=marker, linestyle=style, label=label)
        labels.append(label)
    return labels
