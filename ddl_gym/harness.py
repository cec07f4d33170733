"""One evaluation harness for every reference policy and learned agent.

:func:`evaluate` runs each ``(policy, seed)`` pair on the episode ``scenario.episode(seed)`` — the
same cluster and workload the Gymnasium env draws for ``reset(seed=seed)`` — and records one
summary row per pair and one row per job, with identical columns for every kind of policy:

* **native** job-level policies (they have ``schedule(sim)``, e.g. ``"srsf+pack"``) are driven by
  :func:`ddl_gym.sim.run_policy` on a :class:`~ddl_gym.sim.Simulator`;
* **self-driving** policies (they have ``run_episode(scenario, cluster, workload, rng)``, e.g.
  planned or task-level algorithms) run the episode themselves and return a ``SimResult``;
* **env-driven** policies (they have ``act(obs, action_mask, info) -> int``; agents given as
  ``"NAME:PATH"`` specs are loaded with ``ddl_gym.agents.load_policy``) step a
  :class:`~ddl_gym.envs.cluster_env.DDLClusterEnv` until the episode ends.

Pairs run in parallel worker processes; every pair is independent and seeded, and rows are
sorted by ``(scenario, policy, seed)``, so results do not depend on the worker count. With an
output folder, rows are appended to ``summary.csv`` / ``jobs.csv`` as pairs complete (a crash
keeps what was computed), a rerun reuses rows already there (``overwrite=False``), and at the end
``summary.md`` (mean ± 95% Student-t confidence interval over seeds) and the plots are written
*from those files* (:func:`write_artifacts`, also used by ``scripts/plot_results.py``).

Wall-clock columns (``decision_time_s``, ``wall_time_s``) are measurements, not results: they are
excluded from determinism comparisons (:data:`TIMING_COLUMNS`) and never enter the env's ``info``.

Results that cannot go stale, and files that cannot tear:

* **Cache on content.** Every row carries ``cache_key`` = hash of the scenario's *content*
  (:func:`ddl_gym.fingerprint.scenario_fingerprint`: cluster, model, workload generator and
  parameters, workload file bytes), the canonical policy spec, the bytes of an agent's files, and
  the code (package version, git commit, uncommitted changes), the source files and parameters of a
  policy registered from outside ddl-gym or passed as an object (:mod:`ddl_gym.policy_keys`; where
  they cannot be known, no key and a warning), and ``--debug``. A rerun reuses a row only if its key
  matches; an edited scenario file, policy module or a retrained agent at the same path is
  recomputed, and a ``--debug`` run never reuses rows computed without the checks.
* **One writer per folder.** ``evaluate`` holds an exclusive lock on ``<out>/.ddl-gym.lock``; a
  second run on the same folder stops with a one-line error instead of duplicating rows.
* **Atomic files.** Whole-file writes go to a temporary file that is renamed over the target;
  appends that fail (disk full, read-only folder) are cut back to the previous size and the run
  stops with one line naming the file, so ``jobs.csv`` is never torn and integer columns stay
  integers when read back (:func:`read_results` restores the dtypes).
* **No orphans.** Worker processes watch the process that started them and exit when it dies
  (``kill -9`` included); the forkserver then exits with them.

Env-driven policies also report ``invalid_actions`` (steps whose action was masked, plus actions an
agent wrapper replaced before the env saw them) and ``invalid_action_rate`` (per env step).
"""

from __future__ import annotations

import dataclasses
import errno
import functools
import math
import os
import re
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ddl_gym.scenarios import SCENARIOS, Scenario, get_scenario
from ddl_gym.sim.checks import invariant_checks
from ddl_gym.sim.engine import Simulator, run_policy
from ddl_gym.sim.metrics import SUMMARY_KEYS, SimResult
from ddl_gym.sim.model import ClusterSpec, ConfigError, Workload

#: Columns identifying one evaluated pair.
ID_COLUMNS: tuple[str, ...] = ("scenario", "policy", "seed")
#: Every column of ``summary.csv``, in file order.
SUMMARY_COLUMNS: tuple[str, ...] = (
    *ID_COLUMNS, *SUMMARY_KEYS, "decisions", "invalid_actions", "invalid_action_rate", "completed", "driver",
    "invariant_checks", "num_gpus", "num_servers", "gpus_per_server", "decision_time_s", "wall_time_s", "ddl_gym_version", "git_sha",
    "cache_key",
)
#: Wall-clock measurements: vary from run to run, so never compared for determinism.
TIMING_COLUMNS: tuple[str, ...] = ("decision_time_s", "wall_time_s")
_STRING_COLUMNS = ("scenario", "policy", "driver", "ddl_gym_version", "git_sha", "model", "gpu_ids",
                   "gpus_per_server", "cache_key")
#: Integer columns of both files: restored to int64 when read back (a NaN would make pandas use float).
_INT_COLUMNS = ("seed", "jobs", "decisions", "invalid_actions", "invariant_checks", "num_gpus", "num_servers",
                "job_id", "gpus", "iterations", "n_servers", "preemptions")
#: Job-record columns that are never empty in a complete row (``n_servers`` is 0 for a job that never ran).
_JOB_REQUIRED = ("job_id", "arrival_s", "gpus", "iterations", "n_servers", "arch", "rejected", "preemptions")
#: Metrics where smaller is better (used for "better on k of n seeds" in paired comparisons).
LOWER_IS_BETTER: frozenset[str] = frozenset({
    "makespan_s", "avg_jct_s", "median_jct_s", "p95_jct_s", "avg_queue_s", "total_jct_s", "weighted_jct_s",
    "avg_slowdown", "decision_time_s", "wall_time_s", "weighted_completion", "rejected_jobs", "preemptions",
})
#: Metrics where larger is better (SMD's objective, utilisation).
HIGHER_IS_BETTER: frozenset[str] = frozenset({"total_utility", "gpu_alloc_util", "gpu_compute_util"})
LOCK_FILE = ".ddl-gym.lock"
#: ``cache_key`` of rows that may never be reused (policies whose source or parameters cannot be known).
NO_CACHE_KEY = "-"
#: Plot files a results folder may hold; removed before plots are redrawn so none can linger.
PLOT_PATTERNS: tuple[str, ...] = tuple(f"{stem}.{ext}" for ext in ("png", "svg", "pdf")
                                      for stem in ("jct_cdf", "metrics", "gantt_*"))

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

SUMMARY_FILE = "summary.csv"
JOBS_FILE = "jobs.csv"
MARKDOWN_FILE = "summary.md"

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


# ============================================================================ provenance
def package_version() -> str:
    """``ddl_gym.__version__``, else the installed distribution's version, else ``"unknown"``."""
    import ddl_gym

    version = getattr(ddl_gym, "__version__", None)
    if version:
        return str(version)
    try:
        from importlib.metadata import PackageNotFoundError, version as dist_version

        return dist_version("ddl-gym")
    except (ImportError, PackageNotFoundError):
        return "unknown"


@functools.lru_cache(maxsize=None)
def git_sha() -> str:
    """Short commit of the source checkout the package runs from (``""`` if not a git checkout)."""
    root = Path(__file__).resolve().parents[1]
    if not (root / ".git").exists():
        return ""
    try:
        out = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=root, capture_output=True,
                             text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.stdout.strip() if out.returncode == 0 else ""


# ============================================================================ scenarios & policies
def resolve_scenario(scenario: str | Path | Scenario, workload_csv: str | Path | None = None,
                     drop_oversized: bool = False) -> Scenario:
    """The scenario to evaluate on, with its workload replaced by a CSV file if one is given.

    With ``workload_csv`` the scenario keeps its cluster and performance model, every seed gets
    the file's jobs, and the scenario is renamed ``"<name>@<file stem>"`` so its rows never mix
    with the scenario's own.
    """
    base = scenario if isinstance(scenario, Scenario) else get_scenario(scenario)
    if workload_csv is None:
        return base
    if type(base).sample is not Scenario.sample:  # e.g. A-Online worlds: jobs and cluster drawn together
        raise ConfigError(f"--workload: scenario {base.name!r} draws its cluster and jobs together "
                          f"({type(base).__name__}); it takes no workload file")
    path = Path(workload_csv)
    from ddl_gym.scenarios import CsvSource

    # Jobs larger than the cluster are an error unless the user asks to drop them (counted warning).
    source = CsvSource(str(path), drop_oversized=drop_oversized)
    return dataclasses.replace(base, workload=source, name=f"{base.name}@{path.stem}",
                               description=f"{base.description} (workload from {path})")


def split_policy_list(text: str) -> list[str]:
    """Split ``"fifo+pack,mcts:guide=srsf+pack,sims=16,srsf+ca"`` into policy specs.

    A comma followed by ``key=`` continues the previous spec (options of ``mcts:...``); any other
    comma starts a new spec.
    """
    specs: list[str] = []
    for token in (t.strip() for t in text.split(",")):
        if not token:
            continue
        if specs and re.match(r"[A-Za-z_]+=", token):
            specs[-1] += "," + token
        else:
            specs.append(token)
    return specs


def is_agent_spec(spec: str) -> bool:
    """Whether ``spec`` names a saved agent (``"maskable-ppo:PATH"``, ``"ppo:PATH"``) rather than a registry policy."""
    from ddl_gym.baselines.registry import is_agent_spec as _is_agent

    return _is_agent(spec)


def load_policy_spec(spec: str) -> Any:
    """A policy object for a registry name (``"srsf+pack"``) or an agent spec (``"NAME:PATH"``).

    Raises:
        ConfigError: unknown name, bad agent file, or an agent spec without the agents package / RL extra.
    """
    if is_agent_spec(spec):
        try:
            from ddl_gym.agents import load_policy
        except ImportError as exc:  # the agents package or its RL dependencies are missing
            raise ConfigError(
                f"policy {spec!r} is an agent (NAME:PATH) but agents are unavailable ({exc}); "
                "install the RL extra: pip install 'ddl-gym[rl]'"
            ) from None
        try:
            return load_policy(spec)
        except ImportError as exc:
            from ddl_gym.extras import install_hint

            raise ConfigError(f"policy {spec!r} needs {getattr(exc, 'name', None) or exc}; "
                              f"{install_hint(getattr(exc, 'name', None) or 'torch')}") from None
    from ddl_gym.baselines import make_policy

    return make_policy(spec)


def policy_label(policy: str | Any) -> str:
    """The name a policy's rows carry: the canonical spec (aliases folded), the agent spec, or ``.name``."""
    if isinstance(policy, str):
        from ddl_gym.baselines.registry import canonical_name

        return canonical_name(policy)
    name = getattr(policy, "name", None)
    if not name:
        raise ConfigError(f"policy object {policy!r} has no 'name' attribute")
    return str(name)


def policy_driver(policy: Any) -> str:
    """``"self"`` (run_episode), ``"native"`` (schedule) or ``"env"`` (act)."""
    if callable(getattr(policy, "run_episode", None)):
        return "self"
    if callable(getattr(policy, "schedule", None)):
        return "native"
    if callable(getattr(policy, "act", None)):
        return "env"
    raise ConfigError(f"policy {policy_label(policy)!r} has none of run_episode, schedule or act")


def _portable_spec(spec: str) -> str:
    """The spec workers load: an agent's relative path made absolute (workers may not share our cwd)."""
    if not is_agent_spec(spec):
        return spec
    name, path = spec.split(":", 1)
    return f"{name}:{Path(path).resolve()}" if Path(path).exists() else spec


def _check_engine(policy: Any, label: str, scenario: Scenario) -> None:
    """Job-level drivers (native ``schedule``, the env) cannot run a task-level scenario."""
    driver = policy_driver(policy)
    check = getattr(policy, "check_scenario", None)  # a policy's own requirements (A-SRPT: pipeline jobs)
    if callable(check):
        check(scenario)
    if scenario.engine == "task" and driver in ("native", "env"):
        raise ConfigError(
            f"policy {label!r} drives the job-level simulator but scenario {scenario.name!r} uses the task-level "
            "engine; pick a task-level policy (e.g. ada-srsf, srsf1+lwf1) or the scenario's job-level variant"
        )


# ============================================================================ running one episode
@dataclass
class EpisodeRun:
    """One policy on one seed: the records plus how it was run and timed."""

    result: SimResult
    driver: str
    decision_time_s: float  # wall time inside the policy's decisions (simulator work excluded where separable)
    wall_time_s: float  # wall time of the whole episode
    invalid_actions: int = 0  # env-driven: masked actions the env saw + actions the agent wrapper replaced
    env_steps: int = 0  # env-driven: steps taken (0 for the other drivers)
    invariant_checks: int = 0  # debug: invariant checks the engines ran (every engine the policy built)


class _TimedSimulator(Simulator):
    """Simulator that measures the time spent in ``start`` (simulator work done inside ``schedule``).

    ``fork()`` returns a plain :class:`Simulator`, so look-ahead copies are not timed.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._harness_start_s = 0.0

    def start(self, job: int, placement: Any) -> None:
        t0 = time.perf_counter()
        try:
            super().start(job, placement)
        finally:
            self._harness_start_s += time.perf_counter() - t0


class _TimedScheduler:
    """Wraps a native scheduler and accumulates the wall time of ``reset`` and ``schedule``."""

    def __init__(self, policy: Any) -> None:
        self.policy = policy
        self.name = getattr(policy, "name", "")
        self.capabilities = getattr(policy, "capabilities", ())  # engine capabilities it may use
        self.seconds = 0.0

    def reset(self, sim: Simulator, rng: np.random.Generator) -> None:
        t0 = time.perf_counter()
        self.policy.reset(sim, rng)
        self.seconds += time.perf_counter() - t0

    def schedule(self, sim: Simulator) -> None:
        t0 = time.perf_counter()
        self.policy.schedule(sim)
        self.seconds += time.perf_counter() - t0


def _reset_env_policy(policy: Any, seed: int) -> None:
    reset = getattr(policy, "reset", None)
    if callable(reset):
        try:
            reset(seed=seed)
        except TypeError:  # a reset(self, s) without the keyword name
            reset(seed)


def run_env_policy(
    policy: Any,
    scenario: str | Scenario,
    seed: int,
    *,
    env_kwargs: Mapping[str, Any] | None = None,
    debug: bool = False,
) -> tuple[SimResult, float, int, int]:
    """Drive the Gymnasium env with any object that has ``act(obs, action_mask, info) -> int``.

    Builds ``DDLClusterEnv(scenario, **env_kwargs)`` (``env_kwargs`` defaults to the policy's own
    ``env_kwargs`` attribute), resets it with ``seed`` — the same episode as
    ``scenario.episode(seed)`` — and steps until ``terminated`` or ``truncated``.

    Returns:
        ``(records, seconds inside reset/act, invalid actions, env steps)``. Invalid actions are
        the steps whose ``info["invalid_action"]`` is true (the env masked the action) plus the
        actions the policy itself replaced before the env saw them (its ``invalid_replacements``
        counter, e.g. plain PPO agents).
    """
    kwargs = dict(getattr(policy, "env_kwargs", None) or {}) if env_kwargs is None else dict(env_kwargs)
    kwargs.setdefault("debug", debug)
    env = make_agent_env(scenario, kwargs)
    invalid = 0
    steps = 0
    try:
        obs, info = env.reset(seed=seed)
        t0 = time.perf_counter()
        _reset_env_policy(policy, seed)
        decision = time.perf_counter() - t0
        while True:
            mask = info.get("action_mask")
            if mask is None:
                mask = env.action_masks()
            t0 = time.perf_counter()
            action = policy.act(obs, mask, info)
            decision += time.perf_counter() - t0
            obs, _, terminated, truncated, info = env.step(int(action))
            steps += 1
            invalid += bool(info.get("invalid_action", False))
            if terminated or truncated:
                break
        result = env.result()
    finally:
        env.close()
    invalid += int(getattr(policy, "invalid_replacements", 0) or 0)
    if not result.policy:
        result.policy = policy_label(policy)
    return result, decision, invalid, steps


def simulate(policy: Any, scenario: Scenario, seed: int, *, debug: bool = False) -> EpisodeRun:
    """Run ``policy`` on ``scenario.episode(seed)`` with the driver its methods call for.

    ``debug``: every engine built during the episode checks its invariants, whoever builds it (the
    harness, the env, or a self-driving policy's ``run_episode``; :mod:`ddl_gym.sim.checks`), and
    ``EpisodeRun.invariant_checks`` says how many checks ran.
    """
    with invariant_checks(debug) as session:
        run = _simulate(policy, scenario, seed, debug)
    return dataclasses.replace(run, invariant_checks=session.checks)


def _simulate(policy: Any, scenario: Scenario, seed: int, debug: bool) -> EpisodeRun:
    driver = policy_driver(policy)
    t_start = time.perf_counter()
    invalid = steps = 0
    if driver == "env":
        result, decision, invalid, steps = run_env_policy(policy, scenario, seed, debug=debug)
    else:
        cluster, workload = scenario.episode(seed)
        result, decision = simulate_episode(policy, scenario, cluster, workload, seed, debug=debug)
    return EpisodeRun(result=result, driver=driver, decision_time_s=decision,
                      wall_time_s=time.perf_counter() - t_start, invalid_actions=invalid, env_steps=steps)


def make_agent_env(scenario: str | Scenario, env_kwargs: Mapping[str, Any]) -> Any:
    """The env an agent acts in: ``DDLClusterEnv`` (v0), or ``DDLClusterEnvV1`` when ``env_kwargs`` says
    ``env_version=1`` (agents trained on ``DDLCluster-*-v1`` record it)."""
    kwargs = dict(env_kwargs)
    version = kwargs.pop("env_version", 0)
    if version == 1:
        from ddl_gym.envs.cluster_env_v1 import DDLClusterEnvV1

        return DDLClusterEnvV1(scenario, **kwargs)
    if version != 0:
        raise ConfigError(f"env_version must be 0 or 1, got {version!r}")
    from ddl_gym.envs.cluster_env import DDLClusterEnv

    return DDLClusterEnv(scenario, **kwargs)


def simulate_episode(policy: Any, scenario: Scenario, cluster: ClusterSpec, workload: Workload, seed: int, *,
                     debug: bool = False) -> tuple[SimResult, float]:
    """Run a scheduler or self-driving ``policy`` on a given episode (``cluster``, ``workload``) with the
    generator ``default_rng(seed)``; returns ``(records, seconds inside the policy)``. What
    :func:`simulate` does after drawing ``scenario.episode(seed)``; env-driven policies (agents) need
    :func:`run_env_policy` instead."""
    driver = policy_driver(policy)
    rng = np.random.default_rng(seed)
    if driver == "self":
        t0 = time.perf_counter()
        result = policy.run_episode(scenario, cluster, workload, rng)
        return result, time.perf_counter() - t0
    if driver != "native":
        raise ConfigError(f"policy {policy_label(policy)!r} drives the env itself; it cannot run on a given episode")
    sim = _TimedSimulator(cluster, workload, scenario.model, debug=debug)
    timed = _TimedScheduler(policy)
    result = run_policy(sim, timed, rng)
    return result, max(0.0, timed.seconds - sim._harness_start_s)


# ============================================================================ one (policy, seed) pair
@dataclass(frozen=True)
class _PairTask:
    scenario: str | Scenario  # a spec string in worker processes; Scenario objects run in-process
    workload_csv: str | None
    drop_oversized: bool
    policy: str | Any  # a spec string, or a policy object (in-process only)
    label: str
    seed: int
    debug: bool
    provenance: tuple[str, str] = ("", "")  # (ddl_gym version, git SHA), taken once by the parent
    cache_key: str = "-"  # content key of (scenario, policy, code); "-" = never reused


def _run_length(counts: Sequence[int]) -> str:
    """``(4, 4, 4, 8)`` -> ``"3x4,1x8"`` (servers x GPUs, in server order)."""
    parts: list[str] = []
    for value in counts:
        if parts and parts[-1].split("x")[1] == str(value):
            n, g = parts[-1].split("x")
            parts[-1] = f"{int(n) + 1}x{g}"
        else:
            parts.append(f"1x{value}")
    return ",".join(parts)


def gpus_per_server_from_text(text: str) -> list[int]:
    """Inverse of the ``gpus_per_server`` column: ``"3x4,1x8"`` -> ``[4, 4, 4, 8]``."""
    out: list[int] = []
    for part in filter(None, str(text).split(",")):
        n, _, g = part.partition("x")
        out += [int(g)] * int(n)
    return out


def _pair_records(task: _PairTask, scenario: Scenario, run: EpisodeRun) -> tuple[dict[str, Any], dict[str, Any]]:
    result = run.result
    row: dict[str, Any] = {"scenario": scenario.name, "policy": task.label, "seed": task.seed}
    row.update(result.summary())
    row.update({
        "decisions": int(result.decisions),
        "invalid_actions": int(run.invalid_actions),
        "invalid_action_rate": float(run.invalid_actions / run.env_steps) if run.env_steps else 0.0,
        "completed": bool(result.completed),
        "driver": run.driver,
        "invariant_checks": int(run.invariant_checks),
        "num_gpus": int(result.cluster.num_gpus),
        "num_servers": int(result.cluster.num_servers),
        "gpus_per_server": _run_length(result.cluster.gpus_per_server),
        "decision_time_s": float(run.decision_time_s),
        "wall_time_s": float(run.wall_time_s),
        "ddl_gym_version": task.provenance[0],
        "git_sha": task.provenance[1],
        "cache_key": task.cache_key,
    })
    jobs: dict[str, Any] = {"scenario": scenario.name, "policy": task.label, "seed": task.seed}
    jobs.update(result.job_records())
    return row, jobs


def _run_pair(task: _PairTask) -> tuple[dict[str, Any], dict[str, Any]]:
    """Evaluate one pair from scratch (fresh scenario and policy objects: no state leaks between pairs)."""
    scenario = resolve_scenario(task.scenario, task.workload_csv, task.drop_oversized)
    policy = load_policy_spec(task.policy) if isinstance(task.policy, str) else task.policy
    run = simulate(policy, scenario, task.seed, debug=task.debug)
    if task.debug and run.invariant_checks == 0:  # never a debug run that checked nothing
        raise ConfigError(f"--debug: policy {task.label!r} on scenario {scenario.name!r} seed {task.seed} ran no "
                          "invariant checks (it simulates on an engine ddl_gym cannot check)")
    if run.result.workload.num_jobs == 0:  # an empty episode would "complete" with jobs=0: it is an input error
        raise ConfigError(f"scenario {scenario.name!r} seed {task.seed} has no jobs; nothing to evaluate")
    return _pair_records(task, scenario, run)


def _process_alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, killed but not yet reaped, counts as dead)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except (OSError, IndexError):
        return True


def _watch_parent(pid: int, interval_s: float) -> None:
    while True:
        time.sleep(interval_s)
        if not _process_alive(pid):
            os._exit(1)  # the evaluation that wanted our result is gone (kill -9, SIGTERM): stop now


def _worker_init(parent_pid: int | None = None, interval_s: float = 0.5,
                 registrations: Sequence[tuple[tuple[Any, ...], dict[str, Any]]] = ()) -> None:
    from ddl_gym.poolsafe import register_in_worker

    register_in_worker(registrations)  # policies the caller registered at run time
    # One process per pair already saturates the cores; keep torch/BLAS from oversubscribing them.
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(var, "1")
    # Pool workers are children of the forkserver, not of the evaluating process, and block forever
    # on their task queue if that process dies without shutting the pool down: watch it instead.
    if parent_pid is not None:
        threading.Thread(target=_watch_parent, args=(parent_pid, interval_s), daemon=True,
                         name="ddl-gym-parent-watch").start()


# ============================================================================ files
def _canonical(frame: pd.DataFrame, columns: Sequence[str] | None = None) -> pd.DataFrame:
    """Fixed column order and dtypes, so fresh and re-read rows compare equal."""
    if columns is not None:
        for col in columns:
            if col not in frame.columns:
                frame[col] = np.nan
        extra = [c for c in frame.columns if c not in columns]
        frame = frame[list(columns) + extra]
    for col in _STRING_COLUMNS:
        if col in frame.columns:
            frame[col] = frame[col].fillna("").astype(str)
    for col in _INT_COLUMNS:  # back to int64 unless a value is missing (rows from an older version)
        if col in frame.columns and len(frame) and frame[col].dtype != np.int64 and frame[col].notna().all():
            frame[col] = frame[col].astype(np.int64)
    if "completed" in frame.columns and frame["completed"].dtype != bool:
        frame["completed"] = frame["completed"].map(lambda v: str(v).lower() == "true").astype(bool)
    return frame


def _read_csv(path: Path) -> pd.DataFrame:
    dtype = {c: str for c in _STRING_COLUMNS}
    try:
        frame = pd.read_csv(path, dtype=dtype)
    except pd.errors.EmptyDataError:
        return pd.DataFrame()
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError) as exc:
        raise ConfigError(f"{path}: cannot read results file ({str(exc).splitlines()[0]}); "
                          "move it away or rerun with --overwrite into another folder") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read results file ({exc.strerror or exc})") from None
    return frame


def read_results(out: str | Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``summary.csv`` and ``jobs.csv`` of a results folder, cleaned of incomplete rows.

    A summary row is complete when its metric columns parse; job rows count only if their pair
    has a summary row (rows are appended jobs-first, so a crash mid-pair leaves orphan job rows),
    and a job appearing twice for one pair keeps its last row. Integer columns come back as int64.
    """
    out = Path(out)
    summary_path, jobs_path = out / SUMMARY_FILE, out / JOBS_FILE
    summary = _read_csv(summary_path) if summary_path.exists() else pd.DataFrame()
    jobs = _read_csv(jobs_path) if jobs_path.exists() else pd.DataFrame()
    if summary.empty or any(c not in summary.columns for c in (*ID_COLUMNS, *SUMMARY_KEYS)):
        return _canonical(pd.DataFrame(columns=list(SUMMARY_COLUMNS))), pd.DataFrame()
    # A row cut short by a crash misses its trailing columns; the version is never empty when complete.
    # cache_key is the last column and never empty ("-" for rows that may not be reused), so a row torn
    # anywhere before it is dropped here (a key cut short cannot match, so it is recomputed anyway).
    required = [*ID_COLUMNS, *SUMMARY_KEYS] + [c for c in ("decision_time_s", "ddl_gym_version", "cache_key")
                                               if c in summary]
    summary = summary.dropna(subset=required).copy()
    summary = summary[pd.to_numeric(summary["seed"], errors="coerce").notna()]
    summary = summary.drop_duplicates(subset=list(ID_COLUMNS), keep="last")
    summary = _canonical(summary, SUMMARY_COLUMNS)
    if not jobs.empty and all(c in jobs.columns for c in ID_COLUMNS):
        jobs = jobs.dropna(subset=list(ID_COLUMNS)).copy()
        jobs = jobs[pd.to_numeric(jobs["seed"], errors="coerce").notna()]
        jobs["seed"] = jobs["seed"].astype(np.float64).astype(np.int64)
        # A job row cut short misses its trailing columns: its whole pair is incomplete and is recomputed.
        torn = jobs[list(c for c in _JOB_REQUIRED if c in jobs.columns)].isna().any(axis=1)
        if torn.any():
            bad = set(zip(jobs.loc[torn, "scenario"], jobs.loc[torn, "policy"], jobs.loc[torn, "seed"]))
            summary = summary[[k not in bad for k in zip(summary["scenario"], summary["policy"], summary["seed"])]]
        keys = set(zip(summary["scenario"], summary["policy"], summary["seed"]))
        jobs_keys = list(zip(jobs["scenario"].astype(str), jobs["policy"].astype(str), jobs["seed"]))
        jobs = jobs[[k in keys for k in jobs_keys]]
        if "job_id" in jobs.columns:
            jobs = jobs.drop_duplicates(subset=[*ID_COLUMNS, "job_id"], keep="last")
        jobs = _canonical(jobs.reset_index(drop=True))
    else:
        jobs = pd.DataFrame()
    return _sort_summary(summary), _sort_jobs(jobs)


def _sort_summary(summary: pd.DataFrame) -> pd.DataFrame:
    if summary.empty:
        return summary.reset_index(drop=True)
    return summary.sort_values(list(ID_COLUMNS), kind="stable").reset_index(drop=True)


def _sort_jobs(jobs: pd.DataFrame) -> pd.DataFrame:
    """Pairs in (scenario, policy, seed) order; jobs within a pair keep their workload order."""
    if jobs.empty:
        return jobs.reset_index(drop=True)
    order = np.lexsort((np.arange(len(jobs)), jobs["seed"].to_numpy(),
                        jobs["policy"].to_numpy(), jobs["scenario"].to_numpy()))
    return jobs.iloc[order].reset_index(drop=True)


def _write_error(path: Path, exc: OSError) -> ConfigError:
    hint = {errno.ENOSPC: "the disk is full", errno.EROFS: "the file system is read-only",
            errno.EACCES: "permission denied", errno.EDQUOT: "the disk quota is exhausted"}.get(exc.errno or 0)
    reason = hint or exc.strerror or str(exc)
    return ConfigError(f"cannot write {path}: {reason}; the results already written there are kept intact")


def _write_bytes_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to a temporary file in the same folder, flush it to disk, then rename it over ``path``."""
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        try:
            tmp.unlink(missing_ok=True)
        except OSError:
            pass
        raise _write_error(path, exc) from None


def _write_text_atomic(path: Path, text: str) -> None:
    _write_bytes_atomic(path, text.encode("utf-8"))


def _write_csv_atomic(frame: pd.DataFrame, path: Path) -> None:
    _write_bytes_atomic(path, frame.to_csv(index=False).encode("utf-8"))


def _append_csv(frame: pd.DataFrame, path: Path) -> None:
    """Append rows in one write; on failure cut the file back to its old size (never a torn row)."""
    exists = path.exists() and path.stat().st_size > 0
    if exists:
        header = pd.read_csv(path, nrows=0).columns.tolist()
        for col in header:
            if col not in frame.columns:
                frame[col] = np.nan
        text = frame[header].to_csv(index=False, header=False)
    else:
        text = frame.to_csv(index=False)
    data = text.encode("utf-8")
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    except OSError as exc:
        raise _write_error(path, exc) from None
    size = os.fstat(fd).st_size
    try:
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
    except OSError as exc:
        try:
            os.ftruncate(fd, size)
        except OSError:
            pass
        raise _write_error(path, exc) from None
    finally:
        os.close(fd)


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


# ============================================================================ the folder lock
@contextmanager
def results_lock(out: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``out/.ddl-gym.lock`` (one writer per results folder).

    Raises:
        ConfigError: another process holds it (its pid is named), or the folder is not writable.
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: no advisory locks, run unguarded
        yield
        return
    path = out / LOCK_FILE
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise _write_error(path, exc) from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "?"
            raise ConfigError(f"{out}: another ddl-gym run (pid {holder}) is writing results here; wait for it "
                              "to finish or choose another --out") from None
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        except OSError as exc:
            raise _write_error(path, exc) from None
        yield
    finally:
        os.close(fd)  # releases the lock (also released by the kernel if this process dies)


# ============================================================================ evaluate
@dataclass
class EvalResults:
    """What :func:`evaluate` returns.

    Attributes:
        summary: one row per (policy, seed), columns :data:`SUMMARY_COLUMNS`.
        jobs: one row per job per (policy, seed): ``scenario, policy, seed`` + ``SimResult.job_records()``.
        out: the results folder, if any.
        reused: how many pairs were taken from existing files instead of being run.
        files: the files written.
        stale: how many existing rows were recomputed because their inputs changed (``cache_key``).
    """

    summary: pd.DataFrame
    jobs: pd.DataFrame
    out: Path | None = None
    reused: int = 0
    files: list[Path] = field(default_factory=list)
    stale: int = 0

    @property
    def markdown(self) -> str:
        """Mean ± 95% CI table over seeds."""
        return markdown_table(self.summary)

    def table(self, metrics: Sequence[str] | None = None) -> pd.DataFrame:
        """:func:`aggregate` of the summary."""
        return aggregate(self.summary, metrics)


#: Most seeds one evaluation accepts (each is a full episode per policy).
MAX_SEEDS = 100_000
#: Seeds are stored as int64 and fed to ``np.random.default_rng``.
MAX_SEED = 2**63 - 1
#: Most worker processes (each imports the package and holds an episode in memory).
MAX_WORKERS = 256


def _as_seed_list(seeds: Sequence[int] | int) -> list[int]:
    if isinstance(seeds, (bool, np.bool_)):
        raise ConfigError(f"seeds must be a count or a list of integers, got {seeds!r}")
    if isinstance(seeds, (int, np.integer)):
        if not 1 <= seeds <= MAX_SEEDS:
            raise ConfigError(f"number of seeds must be in [1, {MAX_SEEDS:,}], got {seeds}")
        return list(range(int(seeds)))
    out: dict[int, None] = {}
    for s in seeds:
        if isinstance(s, (bool, np.bool_)) or not isinstance(s, (int, np.integer)):
            raise ConfigError(f"seeds must be integers, got {s!r}")
        s = int(s)
        if not 0 <= s <= MAX_SEED:
            raise ConfigError(f"seeds must be in [0, 2**63-1], got {s}")
        out[s] = None
        if len(out) > MAX_SEEDS:
            raise ConfigError(f"more than {MAX_SEEDS:,} seeds")
    if not out:
        raise ConfigError("no seeds given")
    return list(out)


def _scenario_for_workers(scenario: str | Path | Scenario) -> str | Scenario:
    """A picklable handle: the spec string, or the name of a registered Scenario object."""
    if isinstance(scenario, Scenario):
        return scenario.name if SCENARIOS.get(scenario.name) is scenario else scenario
    key = str(scenario)
    if key not in SCENARIOS and Path(key).exists():
        return str(Path(key).resolve())  # workers may not share this process's working directory
    return key


def _agent_files(spec: str) -> list[Path]:
    """The files an agent spec loads (zip, metadata sidecar, normalisation statistics)."""
    _, _, text = spec.partition(":")
    path = Path(text.strip())
    if path.is_dir():
        path = path / "agent.zip"
    if path.suffix != ".zip":
        path = path.with_suffix(".zip")
    return [path, path.with_suffix(".json"), path.with_name("vecnormalize.pkl"),
            path.with_name(f"{path.stem}.vecnormalize.pkl")]


def policy_fingerprint(spec: str) -> str:
    """Content key of a policy spec: the canonical spec plus the bytes of every agent file it loads."""
    from ddl_gym.fingerprint import file_digest, fingerprint

    label = policy_label(spec)
    agents = [label] if is_agent_spec(label) else [
        value for item in label.partition(":")[2].split(",")
        for key, _, value in [item.partition("=")] if key.strip() == "policy" and is_agent_spec(value)]
    files = {str(f): file_digest(f) for a in agents for f in _agent_files(a)}
    return fingerprint({"spec": label, "files": files})


def run_cache_key(scenario: Scenario, policy: str | Any, instance: Any | None = None, debug: bool = False) -> str:
    """The ``cache_key`` of a (scenario, policy) pair: scenario content, policy content, code and ``debug``.

    A registered policy from outside ddl-gym and an in-process policy object also key on the source
    of their defining modules and their parameters (:mod:`ddl_gym.policy_keys`); where those cannot
    be known the pair gets ``"-"`` (never reused) and a warning says so once. ``debug=True`` is part
    of the key, so a ``--debug`` run never reuses rows computed without the checks.
    """
    from ddl_gym.fingerprint import code_fingerprint, fingerprint, scenario_fingerprint
    from ddl_gym.policy_keys import Unknowable, object_policy_key, registered_policy_key, warn_uncached

    try:
        if isinstance(policy, str):
            user = registered_policy_key(policy, instance)
            policy_key = policy_fingerprint(policy) if not user else fingerprint(
                {"spec": policy_fingerprint(policy), "user": user})
        else:
            policy_key = fingerprint({"object": object_policy_key(policy)})
    except Unknowable as exc:
        warn_uncached(policy_label(policy), str(exc))
        return NO_CACHE_KEY
    parts: dict[str, Any] = {"scenario": scenario_fingerprint(scenario), "policy": policy_key,
                             "code": code_fingerprint()}
    if debug:
        parts["debug"] = True
    return fingerprint(parts)[:24]


def evaluate(
    policies: Sequence[str | Any],
    scenario: str | Path | Scenario,
    seeds: Sequence[int] | int,
    out: str | Path | None = None,
    *,
    workers: int | None = None,
    workload_csv: str | Path | None = None,
    drop_oversized: bool = False,
    progress: bool = True,
    debug: bool = False,
    overwrite: bool = False,
    plots: bool = True,
    echo: bool = True,
    executor: str | Any = "local",
    ray_address: str | None = None,
    formats: Sequence[str] | None = None,
) -> EvalResults:
    """Evaluate policies and agents on the same episodes and record identical metrics.

    Args:
        policies: registry names (``"srsf+pack"``, see ``ddl_gym.baselines.list_policies()``),
            agent specs ``"NAME:PATH"`` (``ddl_gym.agents.load_policy``), or policy objects with
            ``run_episode``, ``schedule`` or ``act`` (objects run in this process).
        scenario: a scenario name, a scenario file (``.toml``/``.json``) or a Scenario.
        seeds: a list of seeds, or ``N`` for seeds ``0..N-1``. Seed ``s`` is episode
            ``scenario.episode(s)`` and the policy's generator ``np.random.default_rng(s)``.
        out: results folder (created); ``None`` keeps everything in memory.
        workers: parallel processes (default ``min(cpu_count, pairs)``; 1 runs in-process).
        workload_csv: run every seed on this workload file instead of the scenario's workload.
        drop_oversized: drop workload-file jobs needing more GPUs than the cluster (a counted
            warning) instead of failing.
        progress: show a tqdm progress bar (stderr).
        debug: check simulator invariants after every event (slow).
        overwrite: recompute pairs already in ``out/summary.csv`` (default: reuse the rows whose
            ``cache_key`` still matches, recompute the others).
        plots: write plots (``summary.md`` is always written when ``out`` is given).
        formats: figure formats (``("png", "svg", "pdf")``; default PNG only).
        echo: print the Markdown table to stdout (also returned as ``EvalResults.markdown``).
        executor: where pairs run (:mod:`ddl_gym.executors`): ``"local"`` (worker processes here,
            the default), ``"ray"`` (Ray tasks; rows come back to this process, which alone writes
            the files), or an :class:`~ddl_gym.executors.Executor` (reused, not closed).
        ray_address: with ``executor="ray"``: ``"auto"`` or ``"HOST:PORT"`` of a running cluster
            (default: start a local one for this call).

    Returns:
        :class:`EvalResults` for exactly the requested pairs, sorted by (scenario, policy, seed).

    Raises:
        ConfigError: unknown scenario/policy, bad scenario or workload file, a folder another run is
            writing to, or an output file that cannot be written. Raised before any pair runs,
            except write errors. A pair that fails later does not stop the others; their rows are
            written, then the first error is raised.
    """
    if isinstance(policies, str):  # "fifo+pack" or "fifo+pack,srsf+ca": not a sequence of characters
        policies = split_policy_list(policies)
    seed_list = _as_seed_list(seeds)
    csv_text = str(Path(workload_csv).resolve()) if workload_csv is not None else None
    resolved = resolve_scenario(scenario, csv_text, drop_oversized)
    resolved.episode(seed_list[0])  # fail now (with the file's name) on a bad workload/scenario file

    # Policies: validate every name before running anything; objects keep their identity.
    entries: dict[str, str | Any] = {}
    instances: dict[str, Any] = {}
    for policy in policies:
        label = policy_label(policy)
        if label in entries:
            continue
        instance = load_policy_spec(label) if isinstance(policy, str) else policy
        _check_engine(instance, label, resolved)
        entries[label] = _portable_spec(label) if isinstance(policy, str) else policy
        instances[label] = instance
    if not entries:
        raise ConfigError("no policies given")
    if workers is not None and not 1 <= int(workers) <= MAX_WORKERS:
        raise ConfigError(f"workers must be in [1, {MAX_WORKERS}], got {workers}")
    keys = {label: run_cache_key(resolved, entry, instances[label], debug) for label, entry in entries.items()}

    from ddl_gym.executors import Executor, make_executor

    if isinstance(executor, Executor) or executor in (None, "local"):
        if ray_address is not None and not isinstance(executor, Executor):
            raise ConfigError("--ray-address needs --executor ray")
        runner = executor if isinstance(executor, Executor) and executor.name != "local" else None
        if isinstance(executor, Executor) and executor.name == "local" and workers is None:
            workers = getattr(executor, "workers", None)
        return _evaluate_with(runner, out, resolved, scenario, entries, keys, seed_list, csv_text, drop_oversized,
                              workers, progress, debug, overwrite, plots, echo, formats)
    with make_executor(executor, workers=workers, ray_address=ray_address) as runner:
        return _evaluate_with(runner, out, resolved, scenario, entries, keys, seed_list, csv_text, drop_oversized,
                              workers, progress, debug, overwrite, plots, echo, formats)


def _evaluate_with(runner: Any, out: str | Path | None, resolved: Scenario, scenario: str | Path | Scenario,
                   entries: dict[str, str | Any], keys: dict[str, str], seed_list: list[int], csv_text: str | None,
                   drop_oversized: bool, workers: int | None, progress: bool, debug: bool, overwrite: bool,
                   plots: bool, echo: bool, formats: Sequence[str] | None = None) -> EvalResults:
    out_path = Path(out) if out is not None else None
    if out_path is None:
        return _evaluate_into(None, resolved, scenario, entries, keys, seed_list, csv_text, drop_oversized,
                              workers, progress, debug, overwrite, plots, echo, runner, formats)
    try:
        out_path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"cannot create results folder {out_path}: {exc.strerror or exc}") from None
    if not out_path.is_dir():
        raise ConfigError(f"{out_path}: not a folder; --out must name a folder")
    with results_lock(out_path):
        return _evaluate_into(out_path, resolved, scenario, entries, keys, seed_list, csv_text, drop_oversized,
                              workers, progress, debug, overwrite, plots, echo, runner, formats)


class _StopEvaluation(Exception):
    """An error that must stop the whole evaluation (results can no longer be written)."""


def _evaluate_into(out_path: Path | None, resolved: Scenario, scenario: str | Path | Scenario,
                   entries: dict[str, str | Any], keys: dict[str, str], seed_list: list[int], csv_text: str | None,
                   drop_oversized: bool, workers: int | None, progress: bool, debug: bool, overwrite: bool,
                   plots: bool, echo: bool, runner: Any = None,
                   formats: Sequence[str] | None = None) -> EvalResults:
    wanted = [(resolved.name, label, seed) for label in entries for seed in seed_list]
    wanted_set = set(wanted)

    existing_summary = pd.DataFrame()
    existing_jobs = pd.DataFrame()
    stale = 0
    if out_path is not None:
        existing_summary, existing_jobs = read_results(out_path)
        if not existing_summary.empty:
            # A wanted pair is reusable only if its row was computed from the same content.
            ids = list(zip(existing_summary["scenario"], existing_summary["policy"], existing_summary["seed"]))
            row_keys = existing_summary["cache_key"].tolist()
            drop = [k in wanted_set and (overwrite or rk in ("", NO_CACHE_KEY) or rk != keys[k[1]])
                    for k, rk in zip(ids, row_keys)]
            stale = 0 if overwrite else sum(drop)
            dropped = {k for k, d in zip(ids, drop) if d}
            existing_summary = existing_summary[[not d for d in drop]].reset_index(drop=True)
            if not existing_jobs.empty and dropped:
                jkeys = list(zip(existing_jobs["scenario"], existing_jobs["policy"], existing_jobs["seed"]))
                existing_jobs = existing_jobs[[k not in dropped for k in jkeys]].reset_index(drop=True)
        # Rewrite without partial/stale rows so appends below start from a clean state.
        for frame, name in ((existing_summary, SUMMARY_FILE), (existing_jobs, JOBS_FILE)):
            if frame.empty:
                try:
                    (out_path / name).unlink(missing_ok=True)
                except OSError as exc:
                    raise _write_error(out_path / name, exc) from None
            else:
                _write_csv_atomic(frame, out_path / name)

    done_keys: set[tuple[str, str, int]] = set()
    if not existing_summary.empty:
        done_keys = set(zip(existing_summary["scenario"], existing_summary["policy"],
                            existing_summary["seed"].astype(int))) & wanted_set
    todo = [k for k in wanted if k not in done_keys]

    handle = _scenario_for_workers(scenario)
    provenance = (package_version(), git_sha())
    tasks = [_PairTask(handle, csv_text, drop_oversized, entries[label], label, seed, debug, provenance, keys[label])
             for (_, label, seed) in todo]
    # Pairs with a picklable handle and a policy given by name may go to worker processes.
    from ddl_gym.baselines.registry import runs_in_process_only

    local = sorted({t.label for t in tasks if isinstance(t.policy, str) and runs_in_process_only(t.policy)})
    portable = [i for i, t in enumerate(tasks) if not isinstance(t.scenario, Scenario) and isinstance(t.policy, str)
                and t.label not in local]
    n_workers = int(workers) if workers is not None else min(os.cpu_count() or 1, max(1, len(portable)))
    if local and n_workers > 1:
        print(f"note: {', '.join(local)} defined in the running script: run in this process "
              "(worker processes cannot import __main__; put it in a module to run it in parallel)", file=sys.stderr)
    pool_idx = set(portable) if n_workers > 1 and len(portable) > 1 else set()
    if runner is not None:  # a remote executor (ddl_gym.executors) takes every pair given by name
        pool_idx = {i for i, t in enumerate(tasks) if isinstance(t.policy, str) and t.label not in local}
    pool_tasks = [t for i, t in enumerate(tasks) if i in pool_idx]
    serial_tasks = [t for i, t in enumerate(tasks) if i not in pool_idx]

    new_summary: dict[tuple[str, str, int], pd.DataFrame] = {}
    new_jobs: dict[tuple[str, str, int], pd.DataFrame] = {}
    errors: list[BaseException] = []

    def record(task: _PairTask, row: dict[str, Any], jobs: dict[str, Any]) -> None:
        key = (resolved.name, task.label, task.seed)
        summary_frame = _canonical(pd.DataFrame([row]), SUMMARY_COLUMNS)
        jobs_frame = _canonical(pd.DataFrame(jobs))
        new_summary[key], new_jobs[key] = summary_frame, jobs_frame
        if out_path is not None:  # jobs first: a summary row implies its job rows are complete
            try:
                _append_csv(jobs_frame.copy(), out_path / JOBS_FILE)
                _append_csv(summary_frame.copy(), out_path / SUMMARY_FILE)
            except ConfigError as exc:
                raise _StopEvaluation(str(exc)) from None

    from tqdm.auto import tqdm

    bar = tqdm(total=len(tasks), desc=f"eval {resolved.name}", unit="run", disable=not progress or not tasks,
               file=sys.stderr, dynamic_ncols=True)
    try:
        if pool_tasks and runner is not None:
            runner.run_pairs(pool_tasks, resolved, record, errors, bar)
        elif pool_tasks:
            _run_in_pool(pool_tasks, n_workers, record, errors, bar)
        for task in serial_tasks:
            try:
                row, jobs = _run_pair(task)
            except Exception as exc:
                errors.append(_annotate(exc, task))
            else:
                record(task, row, jobs)
            bar.update(1)
    except _StopEvaluation as exc:
        raise ConfigError(str(exc)) from None
    finally:
        bar.close()

    # Assemble the requested pairs in canonical order.
    frames_s, frames_j = [], []
    for key in sorted(wanted_set):
        if key in new_summary:
            frames_s.append(new_summary[key])
            frames_j.append(new_jobs[key])
    reused_summary = pd.DataFrame()
    reused_jobs = pd.DataFrame()
    if done_keys:
        skeys = list(zip(existing_summary["scenario"], existing_summary["policy"], existing_summary["seed"]))
        reused_summary = existing_summary[[k in done_keys for k in skeys]]
        if not existing_jobs.empty:
            jkeys = list(zip(existing_jobs["scenario"], existing_jobs["policy"], existing_jobs["seed"]))
            reused_jobs = existing_jobs[[k in done_keys for k in jkeys]]
    summary = _concat([reused_summary, *frames_s])
    jobs = _concat([reused_jobs, *frames_j])
    summary = _sort_summary(_canonical(summary, SUMMARY_COLUMNS)) if not summary.empty else summary
    jobs = _sort_jobs(_canonical(jobs)) if not jobs.empty else jobs

    files: list[Path] = []
    if out_path is not None:
        all_summary, all_jobs = read_results(out_path)  # final files sorted: identical for any worker count
        if not all_summary.empty:
            _write_csv_atomic(all_summary, out_path / SUMMARY_FILE)
            files.append(out_path / SUMMARY_FILE)
        if not all_jobs.empty:
            _write_csv_atomic(all_jobs, out_path / JOBS_FILE)
            files.append(out_path / JOBS_FILE)
        if not all_summary.empty:
            files += write_artifacts(out_path, plots=plots, formats=formats)
    results = EvalResults(summary=summary, jobs=jobs, out=out_path, reused=len(done_keys), files=files, stale=stale)
    if echo:
        print(results.markdown)
    if debug and echo:
        checked = sum(int(frame["invariant_checks"].iloc[0]) for frame in frames_s)
        print(f"debug: {checked} invariant checks over {len(frames_s)} simulated pairs, 0 violations"
              + (f"; {len(done_keys)} reused pairs were not re-checked" if done_keys else ""), file=sys.stderr)
    if errors:
        raise errors[0]
    return results


def _run_in_pool(tasks: list[_PairTask], n_workers: int, record: Any, errors: list[BaseException], bar: Any) -> None:
    """Run pairs in worker processes; on an interrupt or a write error, stop the workers at once."""
    import multiprocessing

    from ddl_gym.baselines.registry import user_registrations
    from ddl_gym.poolsafe import workers_skip_main

    # forkserver: children start clean (no inherited torch/OpenMP threads, which can hang after fork).
    method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
    pool = ProcessPoolExecutor(max_workers=min(n_workers, len(tasks)), mp_context=multiprocessing.get_context(method),
                               initializer=_worker_init, initargs=(os.getpid(), 0.5, user_registrations()))
    finished_cleanly = False
    try:
        with workers_skip_main():  # workers start without re-running the calling script (no guard needed)
            pending: dict[Future, _PairTask] = {pool.submit(_run_pair, t): t for t in tasks}
        while pending:
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            for fut in finished:
                task = pending.pop(fut)
                try:
                    row, jobs = fut.result()
                except Exception as exc:  # keep the other pairs; raise after writing
                    errors.append(_annotate(exc, task))
                else:
                    record(task, row, jobs)
                bar.update(1)
        finished_cleanly = True
    finally:
        if finished_cleanly:
            pool.shutdown(wait=True)
        else:  # Ctrl-C, SIGTERM or a disk error: do not wait for running pairs
            processes = list(getattr(pool, "_processes", {}).values())
            pool.shutdown(wait=False, cancel_futures=True)
            for proc in processes:
                if proc.is_alive():
                    proc.terminate()
            for proc in processes:
                proc.join(timeout=5)


def _concat(frames: Sequence[pd.DataFrame]) -> pd.DataFrame:
    frames = [f for f in frames if not f.empty]
    if not frames:
        return pd.DataFrame()
    return pd.concat(frames, ignore_index=True)


def _annotate(exc: BaseException, task: _PairTask) -> BaseException:
    if hasattr(exc, "add_note"):
        exc.add_note(f"while evaluating policy {task.label!r} on seed {task.seed}")
    return exc
