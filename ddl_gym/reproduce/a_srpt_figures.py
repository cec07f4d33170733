"""The A-SRPT reproduction's figures (PNG, matplotlib's Agg canvas, no pyplot state).

:func:`write_figures` draws, into the output folder of ``ddl-gym reproduce a-srpt``, from the plain
numbers that :func:`ddl_gym.reproduce.a_srpt.figure_data` computes (this module imports nothing of
the reproduction):

* ``fig5.png`` — testbed stand-in: total JCT per policy (default reading + A-SRPT backfill);
* ``fig6.png`` — total JCT against the number of jobs, one line per policy (default reading);
* ``fig7.png`` — best baseline / A-SRPT against the share of single-GPU jobs, one line per reading;
* ``fig8.png`` — best baseline / A-SRPT against the NIC bandwidth, fixed job set and equal offered load;
* ``fig9.png`` — total JCT and window MAE per predictor (Figs. 9 and 4);
* ``table2.png`` — Heavy-Edge vs the ILP per configuration (Table II).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

FIGURES = ("fig5.png", "fig6.png", "fig7.png", "fig8.png", "fig9.png", "table2.png")


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


def write_figures(out: Path, data: dict[str, Any]) -> list[Path]:
    """Draw every figure into ``out``; returns the paths written.

    ``data`` (:func:`ddl_gym.reproduce.a_srpt.figure_data`): ``fig5`` {label: JCT}; ``fig6`` (sizes,
    {label: [JCT]}); ``fig7`` (shares, {reading: [ratio]}); ``fig8`` {"fixed"/"equal": (bandwidths,
    {reading: [ratio]})}; ``fig9`` {predictor: (JCT, MAE)}; ``table2`` {model: (HE/ILP, any/ILP)}.
    """
    written: list[Path] = []
    fig, (ax,) = _figure(7.0, 3.4)
    labels = list(data["fig5"])
    ax.bar(range(len(labels)), list(data["fig5"].values()), color="tab:blue")
    ax.set_xticks(range(len(labels)), [label.replace(" (", "\n(") for label in labels], fontsize=6)
    ax.set_ylabel("total JCT (s)")
    ax.set_title("Fig. 5 — testbed stand-in (baselines best fit)", fontsize=9)
    written.append(_save(fig, out / "fig5.png"))

    fig, (ax,) = _figure(5.5, 3.6)
    sizes, lines = data["fig6"]
    for label, values in lines.items():
        ax.plot(sizes, values, marker="o", label=label)
    ax.set_xlabel("jobs per window")
    ax.set_ylabel("total JCT (s)")
    ax.set_yscale("log")
    ax.legend(fontsize=6)
    ax.set_title("Fig. 6 — number of jobs", fontsize=9)
    written.append(_save(fig, out / "fig6.png"))

    fig, (ax,) = _figure(5.5, 3.6)
    shares, curves = data["fig7"]
    for label, curve in curves.items():
        ax.plot([100 * s for s in shares], curve, marker="o", label=label)
    ax.axhline(1.0, color="grey", lw=0.8)
    ax.set_xlabel("single-GPU jobs (%)")
    ax.set_ylabel("best baseline / A-SRPT (total JCT)")
    ax.invert_xaxis()
    ax.legend(fontsize=6)
    ax.set_title("Fig. 7 — A-SRPT's advantage (> 1: A-SRPT better)", fontsize=9)
    written.append(_save(fig, out / "fig7.png"))

    fig, axes = _figure(10.0, 3.8, ncols=2)
    for ax, key, what in zip(axes, ("fixed", "equal"), ("fixed job set (paper)", "equal offered load")):
        bandwidths, curves = data["fig8"][key]
        for label, curve in curves.items():
            ax.plot(bandwidths, curve, marker="o", label=label)
        ax.axhline(1.0, color="grey", lw=0.8)
        ax.set_xscale("log")
        ax.set_xlabel("NIC bandwidth (Gb/s)")
        ax.set_ylabel("best baseline / A-SRPT")
        ax.set_title(f"Fig. 8 — {what}", fontsize=9)
    axes[0].legend(fontsize=6)
    written.append(_save(fig, out / "fig8.png"))

    fig, axes = _figure(9.0, 3.4, ncols=2)
    keys = list(data["fig9"])
    for ax, i, ylabel, title, color in ((axes[0], 0, "A-SRPT total JCT (s)", "Fig. 9 — predictors", "tab:green"),
                                        (axes[1], 1, "window MAE (iterations)", "Figs. 4/9 — prediction error",
                                         "tab:orange")):
        ax.bar(range(len(keys)), [data["fig9"][k][i] for k in keys], color=color)
        ax.set_xticks(range(len(keys)), keys, fontsize=7, rotation=30)
        ax.set_ylabel(ylabel)
        ax.set_title(title, fontsize=9)
    written.append(_save(fig, out / "fig9.png"))

    fig, (ax,) = _figure(6.5, 3.4)
    models = list(data["table2"])
    x = np.arange(len(models))
    ax.bar(x - 0.2, [data["table2"][m][0] for m in models], 0.4, label="Heavy-Edge / ILP")
    ax.bar(x + 0.2, [data["table2"][m][1] for m in models], 0.4, label="ILP (any servers) / ILP")
    ax.axhline(1.0, color="grey", lw=0.8)
    ax.set_xticks(x, models, fontsize=7)
    ax.set_ylabel("PITT relative to the ILP")
    ax.legend(fontsize=7)
    ax.set_title("Table II — Heavy-Edge vs the exact ILP", fontsize=9)
    written.append(_save(fig, out / "table2.png"))
    return written
