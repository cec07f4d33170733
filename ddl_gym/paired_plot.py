"""The paired-difference figure of ``ddl-gym eval --reference P`` and ``ddl-gym compare``.

One panel per metric; one row per policy: the mean over seeds of the per-seed relative change
against the reference (``100·(x_s − ref_s)/ref_s``) with its 95% confidence interval (Student t,
from :func:`ddl_gym.harness.paired_differences`), sorted best first, labelled with "better on k/n"
seeds; green / red when the interval excludes zero (clearly better / worse), grey otherwise. Zero is
the reference. Pairing removes the between-seed variation of the workload, so
policies whose unpaired means look equal separate here.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

#: Figure formats ``--format`` accepts.
FORMATS: tuple[str, ...] = ("png", "svg", "pdf")

_LABELS = {"avg_jct_s": "average JCT", "makespan_s": "makespan", "p95_jct_s": "p95 JCT",
           "median_jct_s": "median JCT", "avg_queue_s": "average queueing delay"}


def parse_formats(text: str | Sequence[str]) -> tuple[str, ...]:
    """``"png,svg"`` -> ``("png", "svg")``; unknown formats raise a ConfigError naming them."""
    from ddl_gym.sim.model import ConfigError

    items = [f.strip().lower().lstrip(".") for f in (text.split(",") if isinstance(text, str) else text)]
    items = [f for f in items if f]
    bad = [f for f in items if f not in FORMATS]
    if bad or not items:
        raise ConfigError(f"--format {','.join(bad) or '(empty)'}: choose from {', '.join(FORMATS)}")
    return tuple(dict.fromkeys(items))


def save_figure(fig: object, stem: Path, formats: Sequence[str]) -> list[Path]:
    """Save ``fig`` as ``stem.<fmt>`` for every format (atomically); returns the files."""
    from ddl_gym.plots import _save

    return [_save(fig, stem.with_suffix(f".{fmt}")) for fmt in formats]


def plot_paired(paired: pd.DataFrame, stem: str | Path, *, formats: Sequence[str] = ("png",),
                title: str | None = None) -> list[Path]:
    """Draw the paired-difference figure of ``paired`` (rows of :func:`paired_differences`).

    Args:
        paired: one row per (scenario, policy, metric) against one reference.
        stem: output path without suffix (``out/paired_srsf_ca``).
        formats: any of :data:`FORMATS`.
        title: figure title (default: the reference and the scenario).

    Returns:
        The files written (one per format); nothing when ``paired`` is empty.
    """
    from ddl_gym.harness.stats import HIGHER_IS_BETTER
    from ddl_gym.plots import _figure

    if paired.empty:
        return []
    reference = str(paired["reference"].iloc[0])
    scenarios = sorted(paired["scenario"].unique())
    metrics = list(dict.fromkeys(paired["metric"]))
    panels = [(s, m) for s in scenarios for m in metrics]
    n_policies = paired.groupby("scenario")["policy"].nunique().max()
    cols = min(3, len(panels))
    rows = -(-len(panels) // cols)
    fig = _figure(4.6 * cols + 0.6, (0.42 * n_policies + 1.3) * rows + 0.5)
    for k, (scenario, metric) in enumerate(panels):
        ax = fig.add_subplot(rows, cols, k + 1)
        part = paired[(paired["scenario"] == scenario) & (paired["metric"] == metric)]
        higher = metric in HIGHER_IS_BETTER
        part = part.sort_values("rel_pct_mean", ascending=not higher, kind="stable")  # best first
        means = part["rel_pct_mean"].to_numpy(np.float64)
        halves = np.nan_to_num(part["rel_pct_ci"].to_numpy(np.float64), nan=0.0)
        y = np.arange(len(part))
        good = (means > 0) if higher else (means < 0)
        clear = np.abs(means) > halves  # the 95% CI excludes zero (a clear difference)
        colours = np.where(~clear, "tab:gray", np.where(good, "tab:green", "tab:red"))
        ax.errorbar(means, y, xerr=halves, fmt="none", ecolor="black", elinewidth=1.0, capsize=3, zorder=2)
        ax.scatter(means, y, c=list(colours), s=28, zorder=3, edgecolors="black", linewidths=0.4)
        ax.axvline(0.0, color="black", linewidth=0.8, zorder=1)
        span = float(np.nanmax(np.abs(np.concatenate([means - halves, means + halves])))) if len(part) else 1.0
        span = span if math.isfinite(span) and span > 0 else 1.0
        ax.set_xlim(-1.25 * span, 1.25 * span)  # zoomed on the differences, zero in the middle
        labels = []
        for r in part.itertuples(index=False):
            tail = f"  {int(r.better)}/{int(r.seeds)} better" if math.isfinite(r.better) else ""
            labels.append(f"{r.policy}{tail}")
        ax.set_yticks(y, labels, fontsize="small")
        ax.invert_yaxis()
        ax.grid(True, axis="x", alpha=0.3)
        name = _LABELS.get(metric, metric)
        ax.set_xlabel(f"{name} vs {reference} (% per seed, mean ± 95% CI)", fontsize="small")
        if len(scenarios) > 1:
            ax.set_title(scenario, fontsize="small")
    seeds = int(paired["seeds"].max())
    fig.suptitle(title or f"Paired change against {reference} over {seeds} seed(s), best first; "
                 "green / red: better / worse with the 95% CI excluding 0, grey: no clear difference",
                 fontsize="medium")
    return save_figure(fig, Path(stem), formats)
