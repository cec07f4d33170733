"""Reports of a results folder: Markdown tables (mean ± 95% CI), paired comparisons and the plots.

Everything here is made from the CSV files of a results folder (:func:`write_artifacts`, also used by
``scripts/plot_results.py``); the plots are drawn by :mod:`ddl_gym.plots` from data frames.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ddl_gym.harness.policy_specs import is_agent_spec, policy_label
from ddl_gym.harness.stats import HIGHER_IS_BETTER, PAIRED_METRICS, TABLE_METRICS, aggregate, paired_differences
from ddl_gym.harness.store import (
    SUMMARY_FILE, TIMING_COLUMNS, _read_csv, _write_csv_atomic, _write_error, _write_text_atomic,
    gpus_per_server_from_text, read_results,
)
from ddl_gym.sim.model import ConfigError


#: Plot files a results folder may hold; removed before plots are redrawn so none can linger.
PLOT_PATTERNS: tuple[str, ...] = tuple(f"{stem}.{ext}" for ext in ("png", "svg", "pdf")
                                      for stem in ("jct_cdf", "metrics", "gantt_*"))


MARKDOWN_FILE = "summary.md"


def _decimals_for(half: float) -> int:
    """Decimals that show two significant digits of a CI half-width."""
    if not math.isfinite(half) or half <= 0:
        return -1
    return int(min(6, max(0, 1 - math.floor(math.log10(half)))))


def _format_number(x: float) -> str:
    a = abs(x)
    if a >= 1000:
        return f"{x:.0f}"
    if a >= 10:
        return f"{x:.1f}"
    if a >= 1:
        return f"{x:.2f}"
    return f"{x:.3g}"


#: Marks a cell whose value is identical on every seed (no spread: more seeds add nothing).
SAME_ON_EVERY_SEED = "‡"


SAME_ON_EVERY_SEED_NOTE = (f"{SAME_ON_EVERY_SEED} identical on every seed: the workload and the policy are "
                           "deterministic here, so more seeds add nothing (the interval has zero width).")


def format_mean_ci(mean: float, half: float) -> str:
    """``"5169 ± 120"``: the CI with two significant digits, the mean to the same decimals.

    A bare number means one seed (no interval); ``"x ‡"`` means every seed gave the same value.
    """
    if not math.isfinite(mean):
        return "–"
    decimals = _decimals_for(half)
    if decimals < 0:
        return _format_number(mean) if not math.isfinite(half) else f"{_format_number(mean)} {SAME_ON_EVERY_SEED}"
    return f"{mean:.{decimals}f} ± {half:.{decimals}f}"


def markdown_table(summary: pd.DataFrame, metrics: Sequence[tuple[str, str, float]] = TABLE_METRICS) -> str:
    """Markdown table of mean ± 95% CI over seeds, one row per (scenario, policy).

    The scenario column appears only when the frame holds more than one scenario. Cells that are
    identical on every seed are marked ``‡`` and explained below the table.
    """
    if summary.empty:
        return "(no results)"
    present = [(m, h, s) for m, h, s in metrics if m in summary.columns]
    table = aggregate(summary, [m for m, _, _ in present])
    multi = table["scenario"].nunique() > 1
    header = (["scenario"] if multi else []) + ["policy", "seeds"] + [h for _, h, _ in present]
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join(["---"] * (len(header) - len(present)) + ["---:"] * len(present)) + "|"]
    same = False
    for row in table.itertuples(index=False):
        r = row._asdict()
        cells = ([str(r["scenario"])] if multi else []) + [str(r["policy"]), str(r["seeds"])]
        for m, _, s in present:
            cell = format_mean_ci(r[f"{m}_mean"] * s, r[f"{m}_ci"] * s)
            same |= cell.endswith(SAME_ON_EVERY_SEED) and m not in TIMING_COLUMNS
            cells.append(cell)
        lines.append("| " + " | ".join(cells) + " |")
    if same:
        lines += ["", SAME_ON_EVERY_SEED_NOTE]
    return "\n".join(lines)


def _signed(x: float, decimals: int) -> str:
    return f"{x:+.{decimals}f}".replace("-", "−")


def paired_markdown(paired: pd.DataFrame) -> str:
    """The paired comparison as a Markdown table: relative change % (absolute change) ± 95% CI."""
    if paired.empty:
        return "(no policy shares a seed with the reference)"
    reference = paired["reference"].iloc[0]
    metrics = list(dict.fromkeys(paired["metric"]))
    multi = paired["scenario"].nunique() > 1
    header = (["scenario"] if multi else []) + ["policy", "seeds"] + [f"{m} vs {reference}" for m in metrics]
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join(["---"] * (len(header) - len(metrics)) + ["---:"] * len(metrics)) + "|"]
    constant_seen = False
    for (scenario, policy), group in paired.groupby(["scenario", "policy"], sort=False):
        by_metric = group.set_index("metric")
        n = int(group["seeds"].iloc[0])
        cells = ([str(scenario)] if multi else []) + [str(policy), str(n)]
        for metric in metrics:
            r = by_metric.loc[metric]
            if not math.isfinite(r["rel_pct_mean"]):
                cells.append("–")
                continue
            if r["constant"]:
                constant_seen = True
                cell = f"{_signed(r['rel_pct_mean'], 1)}% ({_signed(r['diff_mean'], 0)}) {SAME_ON_EVERY_SEED}"
            elif not math.isfinite(r["rel_pct_ci"]):
                cell = f"{_signed(r['rel_pct_mean'], 1)}% ({_signed(r['diff_mean'], 0)})"
            else:
                dec = max(1, _decimals_for(r["rel_pct_ci"]))
                cell = (f"{_signed(r['rel_pct_mean'], dec)}% ± {r['rel_pct_ci']:.{dec}f}% "
                        f"({_signed(r['diff_mean'], 0)} ± {r['diff_ci']:.0f})")
            if math.isfinite(r["better"]):
                cell += f", better on {int(r['better'])}/{n}"
            cells.append(cell)
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", f"Cells: mean over seeds of the per-seed relative change against `{reference}` ± half-width of its "
              "95% CI (Student t), then the absolute change in the metric's unit; negative is lower. "
              "Only seeds both policies ran are paired."]
    if constant_seen:
        lines.append(SAME_ON_EVERY_SEED_NOTE)
    return "\n".join(lines)


def compare(out: str | Path, reference: str, metrics: Sequence[str] = PAIRED_METRICS, *,
            write: bool = True, formats: Sequence[str] = ("png",)) -> tuple[pd.DataFrame, str]:
    """Paired comparison of a results folder against ``reference`` (``ddl-gym compare``).

    Writes ``paired_<reference>.csv``, ``.md`` and the paired-difference figure
    ``paired_<reference>.<fmt>`` for each of ``formats`` (none if empty;
    :func:`ddl_gym.paired_plot.plot_paired`) next to ``summary.csv`` when ``write``.

    Returns:
        ``(paired rows, Markdown table)``.
    """
    out = Path(out)
    if not (out / SUMMARY_FILE).exists():
        raise ConfigError(f"{out / SUMMARY_FILE}: not found; run `ddl-gym eval --out {out}` first")
    summary, _ = read_results(out)
    raw_rows = len(_read_csv(out / SUMMARY_FILE))
    skipped = raw_rows - len(summary)
    if summary.empty:
        raise ConfigError(f"{out / SUMMARY_FILE}: no complete row to compare ({raw_rows} row(s), all incomplete or "
                          "torn); rerun `ddl-gym eval` on this --out to recompute them")
    missing = [m for m in metrics if m not in summary.columns]
    if missing:
        raise ConfigError(f"{out / SUMMARY_FILE}: no column {missing[0]!r} (metrics: {', '.join(metrics)})")
    for metric in metrics:  # a kept row with an empty/NaN metric would silently leave its seed out of the mean
        values = pd.to_numeric(summary[metric], errors="coerce")
        bad = summary[values.isna() | ~np.isfinite(values.fillna(0.0))]
        if not bad.empty:
            row = bad.iloc[0]
            raise ConfigError(f"{out / SUMMARY_FILE}: metric {metric!r} is not a finite number for policy "
                              f"{row['policy']!r} seed {row['seed']} ({len(bad)} row(s)); rerun that pair "
                              "(ddl-gym eval --overwrite) or drop the row")
    paired = paired_differences(summary, reference, metrics)
    text = paired_markdown(paired)
    if skipped > 0:  # torn (a crash mid-write) or repeated rows: reported, never silently left out
        note = (f"(skipped {skipped} incomplete or repeated row(s) of {out / SUMMARY_FILE}; "
                "`ddl-gym eval` on the same --out recomputes incomplete pairs)")
        warnings.warn(note, stacklevel=2)
        text = f"{text}\n\n{note}"
    if summary["scenario"].nunique() > 1:  # a sweep over tasks: rliable-style aggregate (ddl_gym/aggregate.py)
        from ddl_gym.aggregate import aggregate_across_tasks, aggregate_markdown

        metric = metrics[0]
        table = aggregate_across_tasks(summary, reference, metric, higher_is_better=metric in HIGHER_IS_BETTER)
        text += f"\n\nAcross the {summary['scenario'].nunique()} scenarios ({metric}):\n\n{aggregate_markdown(table)}"
    if write:
        stem = f"paired_{_slug(policy_label(reference))}"
        _write_csv_atomic(paired, out / f"{stem}.csv")
        _write_text_atomic(out / f"{stem}.md", f"# Paired comparison against {policy_label(reference)}\n\n{text}\n")
        if formats:  # the paired-difference figure (ddl_gym.paired_plot)
            from ddl_gym.paired_plot import plot_paired

            plot_paired(paired, out / stem, formats=formats)
    return paired, text


def _slug(text: str) -> str:
    if is_agent_spec(text):  # "maskable-ppo:runs/x/agent.zip" -> "maskable-ppo_agent"
        name, path = text.split(":", 1)
        text = f"{name}_{Path(path).stem}"
    keep = [c if c.isalnum() or c in "-_." else "_" for c in text]
    return "".join(keep).strip("_") or "policy"


def _remove_stale_plots(out: Path) -> None:
    for pattern in PLOT_PATTERNS:
        for old in out.glob(pattern):
            try:
                old.unlink()
            except OSError as exc:
                raise _write_error(old, exc) from None


def write_artifacts(out: str | Path, *, plots: bool = True, formats: Sequence[str] | None = None) -> list[Path]:
    """Write ``summary.md`` and the plots of a results folder from its CSV files only.

    Plots: ``jct_cdf.png`` (JCT CDF per policy), ``metrics.png`` (bars with 95% CI error bars, in the
    table's order) and ``gantt_<policy>.png`` (GPU occupancy for each policy's lowest seed, shaded by
    slowdown; every Gantt chart of the folder shares one time axis and one colour scale). Plots of an
    earlier run in the same folder are removed first, so none can linger (also with ``plots=False``).

    Returns:
        The files written.
    """
    out = Path(out)
    summary, jobs = read_results(out)
    written: list[Path] = []
    md = out / MARKDOWN_FILE
    _write_text_atomic(md, _markdown_report(summary))
    written.append(md)
    _remove_stale_plots(out)
    if not plots or summary.empty:
        return written
    from ddl_gym import plots as plotting

    order = list(aggregate(summary, [TABLE_METRICS[0][0]])["policy"])  # the Markdown table's order
    with plotting.figure_formats(formats):  # --format png,svg,pdf
        return written + _write_plots(out, summary, jobs, order, plotting)


def _write_plots(out: Path, summary: pd.DataFrame, jobs: pd.DataFrame, order: list[str], plotting: Any) -> list[Path]:
    written: list[Path] = []
    try:
        if not jobs.empty:
            written.append(plotting.plot_jct_cdf(jobs, out / "jct_cdf.png", order=order))
        written.append(plotting.plot_metric_bars(summary, out / "metrics.png", order=order))
        multi = summary["scenario"].nunique() > 1
        if not jobs.empty:
            charts = []
            for (scenario, policy), group in summary.groupby(["scenario", "policy"], sort=True):
                seed = int(group["seed"].min())
                first = group.loc[group["seed"] == seed].iloc[0]
                rows = jobs[(jobs["scenario"] == scenario) & (jobs["policy"] == policy) & (jobs["seed"] == seed)]
                servers = gpus_per_server_from_text(first.get("gpus_per_server", "")) or None
                n_gpus, n_servers = int(first["num_gpus"]), int(first.get("num_servers", 0) or 0)
                if servers is None and n_servers > 0 and n_gpus % n_servers == 0:  # files from before the column
                    servers = [n_gpus // n_servers] * n_servers
                name = f"gantt_{_slug(scenario) + '_' if multi else ''}{_slug(policy)}.png"
                label = plotting.short_label(policy, others=list(summary["policy"].unique()))
                title = f"{scenario}: {label}, seed {seed}" if multi else f"{label} (seed {seed})"
                charts.append((rows, int(first["num_gpus"]), servers, out / name, title))
            # One time axis and one colour scale for every chart, so they compare at a glance.
            horizon = max((float(np.nanmax(r["finish_s"].to_numpy(float))) for r, *_ in charts
                           if len(r) and np.isfinite(r["finish_s"].to_numpy(float)).any()), default=1.0)
            slowdowns = np.concatenate([r["slowdown"].to_numpy(float) for r, *_ in charts if "slowdown" in r]
                                       or [np.ones(1)])
            top = float(np.nanmax(slowdowns[np.isfinite(slowdowns)])) if np.isfinite(slowdowns).any() else 1.0
            for rows, num_gpus, servers, path, title in charts:
                written.append(plotting.plot_gantt(rows, num_gpus, path, title=title, horizon_s=horizon,
                                                   max_slowdown=top, gpus_per_server=servers))
    except OSError as exc:
        raise _write_error(getattr(exc, "filename", None) and Path(exc.filename) or out, exc) from None
    return written



def _markdown_report(summary: pd.DataFrame) -> str:
    if summary.empty:
        return "# Evaluation results\n\n(no results)\n"
    scenarios = ", ".join(f"`{s}`" for s in sorted(summary["scenario"].unique()))
    seeds = sorted(summary["seed"].unique().tolist())
    versions = ", ".join(sorted(set(summary["ddl_gym_version"].astype(str)) - {""})) or "unknown"
    shas = ", ".join(sorted(set(summary["git_sha"].astype(str)) - {""})) or "n/a"
    incomplete = int((~summary["completed"].astype(bool)).sum())
    lines = [
        "# Evaluation results",
        "",
        f"Scenario {scenarios}; seeds {_seed_text(seeds)}. Cells are mean ± half-width of the 95% "
        "confidence interval over seeds (Student t); a bare number means one seed.",
        "",
        markdown_table(summary),
        "",
        f"ddl-gym {versions}, git {shas}. Decision time is wall-clock time inside the policy's decisions.",
    ]
    fixed = sorted(s for s in summary["scenario"].unique() if "@" in str(s))
    if fixed and len(seeds) > 1:
        lines.append(f"\nScenario(s) {', '.join(f'`{s}`' for s in fixed)} replay one workload file on every seed: "
                     "only seeded policies (random placement, MCTS, sampled agents) can differ between seeds.")
    invalid = summary[pd.to_numeric(summary.get("invalid_actions"), errors="coerce").fillna(0) > 0] \
        if "invalid_actions" in summary else summary.iloc[0:0]
    if len(invalid):
        rates = invalid.groupby("policy")["invalid_action_rate"].mean()
        shown = ", ".join(f"`{p}` {100 * r:.1f}%" for p, r in rates.items())
        lines.append(f"\nInvalid (masked or replaced) actions per env step: {shown} (`invalid_actions` in summary.csv).")
    if incomplete:
        lines.append(f"\n**{incomplete} run(s) did not finish every job** (see `completed` in summary.csv).")
    return "\n".join(lines) + "\n"


def _seed_text(seeds: Sequence[int]) -> str:
    if seeds and list(seeds) == list(range(seeds[0], seeds[0] + len(seeds))) and len(seeds) > 2:
        return f"{seeds[0]}–{seeds[-1]}"
    return ", ".join(str(s) for s in seeds)
