"""The A-SRPT reproduction's figures (PNG, matplotlib's Agg canvas, no pyplot state).

:func:`write_figures` draws, into the output folder of ``ddl-gym reproduce a-srpt``:

* ``fig5.png`` — testbed stand-in: total JCT per policy (default reading + A-SRPT backfill);
* ``fig6.png`` — total JCT against the number of jobs, one line per policy (default reading);
* ``fig7.png`` — best baseline / A-SRPT against the share of single-GPU jobs, one line per reading;
* ``fig8.png`` — best baseline / A-SRPT against the NIC bandwidth, fixed job set and equal offered load;
* ``fig9.png`` — total JCT and window MAE per predictor (Figs. 9 and 4);
* ``table2.png`` — Heavy-Edge vs the ILP per configuration (Table II).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd


def _figure(width: float, height: float, ncols: int = 1) -> tuple[Any, list[Any]]:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height))
    FigureCanvasAgg(fig)
    axes = [fig.add_subplot(1, ncols, i + 1) for i in range(ncols)]
    return fig, axes


def _save(fig: Any, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=100, metadata={"Software": None})
    return path


def write_figures(out: Path, ep: pd.DataFrame, exps: dict[str, dict[str, Any]], t2: pd.DataFrame, grid: Any,
                  seeds: Sequence[int]) -> list[Path]:
    """Draw every figure into ``out``; returns the paths written."""
    from ddl_gym.reproduce import a_srpt as R

    def mean(rows: dict[str, Any], row: str, metric: str = "total_jct_s") -> float:
        return float(np.mean(R._vals(ep, rows[row], metric, seeds)))

    written: list[Path] = []
    # Fig. 5
    fig, (ax,) = _figure(7.0, 3.4)
    rows5 = [R.arow(False), R.arow(True), R.arow(False, True), *R._brows(R.DEFAULT_READING)]
    ax.bar(range(len(rows5)), [mean(exps["fig5"], r) for r in rows5], color="tab:blue")
    ax.set_xticks(range(len(rows5)), [R._label(r).replace(" (", "\n(") for r in rows5], fontsize=6)
    ax.set_ylabel("total JCT (s)")
    ax.set_title("Fig. 5 — testbed stand-in (baselines best fit)", fontsize=9)
    written.append(_save(fig, out / "fig5.png"))
    # Fig. 6
    fig, (ax,) = _figure(5.5, 3.6)
    for r in [R.arow(False), R.arow(True), R.arow(False, True), *R._brows(R.DEFAULT_READING),
              *[R.brow(b, "most-free") for b in ("wcs-duration",)]]:
        ax.plot(grid.windows, [mean(exps[f"fig6/{n}"], r) for n in grid.windows], marker="o", label=R._label(r))
    ax.set_xlabel("jobs per window")
    ax.set_ylabel("total JCT (s)")
    ax.set_yscale("log")
    ax.legend(fontsize=6)
    ax.set_title("Fig. 6 — number of jobs", fontsize=9)
    written.append(_save(fig, out / "fig6.png"))
    # Fig. 7 and Fig. 8: one line per reading
    fig, (ax,) = _figure(5.5, 3.6)
    names = [f"fig7/{s:g}" for s in grid.shares]
    for reading in R.READINGS:
        curve, _ = R._ratio_curve(ep, exps, names, seeds, reading)
        ax.plot([100 * s for s in grid.shares], curve, marker="o", label=R.reading_label(reading))
    ax.axhline(1.0, color="grey", lw=0.8)
    ax.set_xlabel("single-GPU jobs (%)")
    ax.set_ylabel("best baseline / A-SRPT (total JCT)")
    ax.invert_xaxis()
    ax.legend(fontsize=6)
    ax.set_title("Fig. 7 — A-SRPT's advantage (> 1: A-SRPT better)", fontsize=9)
    written.append(_save(fig, out / "fig7.png"))
    fig, axes = _figure(10.0, 3.8, ncols=2)
    for ax, prefix, what in zip(axes, ("fig8", "fig8eq"), ("fixed job set (paper)", "equal offered load")):
        names = [f"{prefix}/{b:g}" for b in grid.bandwidths]
        for reading in R.READINGS:
            curve, _ = R._ratio_curve(ep, exps, names, seeds, reading)
            ax.plot(grid.bandwidths, curve, marker="o", label=R.reading_label(reading))
        ax.axhline(1.0, color="grey", lw=0.8)
        ax.set_xscale("log")
        ax.set_xlabel("NIC bandwidth (Gb/s)")
        ax.set_ylabel("best baseline / A-SRPT")
        ax.set_title(f"Fig. 8 — {what}", fontsize=9)
    axes[0].legend(fontsize=6)
    written.append(_save(fig, out / "fig8.png"))
    # Figs. 9 and 4
    fig, axes = _figure(9.0, 3.4, ncols=2)
    keys = list(exps["fig9"])
    axes[0].bar(range(len(keys)), [mean(exps["fig9"], k) for k in keys], color="tab:green")
    axes[0].set_xticks(range(len(keys)), keys, fontsize=7, rotation=30)
    axes[0].set_ylabel("A-SRPT total JCT (s)")
    axes[0].set_title("Fig. 9 — predictors", fontsize=9)
    axes[1].bar(range(len(keys)), [mean(exps["fig9"], k, "pred_mae") for k in keys], color="tab:orange")
    axes[1].set_xticks(range(len(keys)), keys, fontsize=7, rotation=30)
    axes[1].set_ylabel("window MAE (iterations)")
    axes[1].set_title("Fig. 4/9 — prediction error", fontsize=9)
    written.append(_save(fig, out / "fig9.png"))
    # Table II
    fig, (ax,) = _figure(6.5, 3.4)
    models = t2.model.unique().tolist()
    he = [float((t2[t2.model == m].he_pitt_ms / t2[t2.model == m].ilp_pitt_ms).mean()) for m in models]
    any_ = [float((t2[t2.model == m].ilp_any_pitt_ms / t2[t2.model == m].ilp_pitt_ms).mean()) for m in models]
    x = np.arange(len(models))
    ax.bar(x - 0.2, he, 0.4, label="Heavy-Edge / ILP")
    ax.bar(x + 0.2, any_, 0.4, label="ILP (any servers) / ILP")
    ax.axhline(1.0, color="grey", lw=0.8)
    ax.set_xticks(x, models, fontsize=7)
    ax.set_ylabel("PITT relative to the ILP")
    ax.legend(fontsize=7)
    ax.set_title("Table II — Heavy-Edge vs the exact ILP", fontsize=9)
    written.append(_save(fig, out / "table2.png"))
    return written
