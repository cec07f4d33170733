"""Scores aggregated across tasks (scenarios) and seeds, the way rliable does it (Agarwal et al.,
"Deep RL at the Edge of the Statistical Precipice", NeurIPS 2021).

Used where one comparison spans several tasks: a results folder holding several scenarios
(``ddl-gym compare`` prints the table) or the leaderboard's boards. Per task and seed, a policy's
**score** is the reference's metric over the policy's (``ref/x`` for lower-is-better metrics such as
JCT, ``x/ref`` for higher-is-better ones): 1 = as good as the reference, above 1 = better. Then:

* **IQM** — the interquartile mean of all (task, seed) scores: the mean of the middle 50%
  (the lowest and highest quarter cut, as ``scipy.stats.trim_mean(x, 0.25)``), robust to outlier
  tasks yet less noisy than the median.
* **95% stratified bootstrap CI** — seeds resampled with replacement *within each task* (tasks are
  fixed, not resampled), ``reps`` times; percentile interval of the statistic.
* **Probability of improvement** ``P(X > Y)`` — per task, the Mann-Whitney probability that a
  random seed of policy X scores above a random seed of policy Y (ties count ½), averaged over
  tasks; with its stratified bootstrap CI. Above 0.5 means X tends to beat Y.

Why not the ``rliable`` package itself: rliable 1.2 pins ``arch<8``, and arch 7 does not import under
pandas 3 (which this project uses); the definitions above are rliable's
(``metrics.aggregate_iqm``, ``library.get_interval_estimates`` with ``StratifiedBootstrap``,
``metrics.probability_of_improvement``), in NumPy.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from ddl_gym.sim.model import ConfigError

Statistic = Callable[[np.ndarray], float]


def iqm(scores: np.ndarray) -> float:
    """Interquartile mean of every value of ``scores`` (any shape; NaNs are an error)."""
    x = np.sort(np.asarray(scores, dtype=np.float64).ravel())
    if x.size == 0:
        return math.nan
    cut = int(0.25 * x.size)
    return float(x[cut:x.size - cut].mean())


def stratified_bootstrap_ci(scores: np.ndarray, statistic: Statistic = iqm, *, reps: int = 2000,
                            seed: int = 0, level: float = 0.95) -> tuple[float, float]:
    """Percentile CI of ``statistic`` over bootstrap samples that resample the rows (seeds) of each
    column (task) of ``scores`` (seeds × tasks) independently."""
    x = np.asarray(scores, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] < 1:
        raise ConfigError(f"scores must be a (seeds, tasks) array, got shape {x.shape}")
    rng = np.random.default_rng(seed)
    n, tasks = x.shape
    values = np.empty(reps)
    cols = np.arange(tasks)
    for r in range(reps):
        rows = rng.integers(0, n, size=(n, tasks))
        values[r] = statistic(x[rows, cols])
    alpha = (1.0 - level) / 2.0
    return float(np.quantile(values, alpha)), float(np.quantile(values, 1.0 - alpha))


def probability_of_improvement(x: np.ndarray, y: np.ndarray) -> float:
    """Mean over tasks (columns) of P(a seed of X scores above a seed of Y), ties ½."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if x.ndim != 2 or y.ndim != 2 or x.shape[1] != y.shape[1]:
        raise ConfigError(f"scores must be (seeds, tasks) arrays with the same tasks, got {x.shape} and {y.shape}")
    per_task = [float(np.mean((x[:, t, None] > y[None, :, t]) + 0.5 * (x[:, t, None] == y[None, :, t])))
                for t in range(x.shape[1])]
    return float(np.mean(per_task))


def _poi_ci(x: np.ndarray, y: np.ndarray, reps: int, seed: int) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    values = np.empty(reps)
    cols_x, cols_y = np.arange(x.shape[1]), np.arange(y.shape[1])
    for r in range(reps):
        bx = x[rng.integers(0, x.shape[0], size=x.shape), cols_x]
        by = y[rng.integers(0, y.shape[0], size=y.shape), cols_y]
        values[r] = probability_of_improvement(bx, by)
    return float(np.quantile(values, 0.025)), float(np.quantile(values, 0.975))


def score_matrix(summary: pd.DataFrame, policy: str, reference: str, metric: str,
                 higher_is_better: bool = False) -> tuple[np.ndarray, list[str]]:
    scores, _, _, tasks = _matrices(summary, policy, reference, metric, higher_is_better)
    return scores, tasks


def _matrices(summary: pd.DataFrame, policy: str, reference: str, metric: str,
              higher_is_better: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]:
    """(seeds × tasks) scores of ``policy`` against ``reference`` on the seeds of each scenario both ran.

    Every task must have the same number of shared seeds (a stratified bootstrap needs a rectangle);
    otherwise the smallest count is used, keeping each task's lowest seeds.
    """
    tasks = sorted(summary["scenario"].unique())
    columns, raw_x, raw_r = [], [], []
    for task in tasks:
        frame = summary[summary["scenario"] == task]
        mine = frame[frame["policy"] == policy].set_index("seed")[metric]
        ref = frame[frame["policy"] == reference].set_index("seed")[metric]
        seeds = sorted(set(mine.index) & set(ref.index))
        if not seeds:
            raise ConfigError(f"{policy!r} and {reference!r} share no seed on scenario {task!r}")
        x, r = mine.loc[seeds].to_numpy(np.float64), ref.loc[seeds].to_numpy(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            columns.append(x / r if higher_is_better else r / x)
        sign = 1.0 if higher_is_better else -1.0  # "higher is better" values for the improvement probability
        raw_x.append(sign * x)
        raw_r.append(sign * r)
    n = min(len(c) for c in columns)

    def stack(cols: list[np.ndarray]) -> np.ndarray:
        return np.column_stack([c[:n] for c in cols])

    return stack(columns), stack(raw_x), stack(raw_r), tasks


def aggregate_across_tasks(summary: pd.DataFrame, reference: str, metric: str = "avg_jct_s", *,
                           higher_is_better: bool = False, reps: int = 2000, seed: int = 0) -> pd.DataFrame:
    """One row per policy: IQM of its scores against ``reference`` with the 95% stratified bootstrap CI,
    and the probability that it improves on the reference, with its CI (module docstring)."""
    from ddl_gym.harness.policy_specs import policy_label

    reference = policy_label(reference)
    if reference not in set(summary["policy"]):
        raise ConfigError(f"reference policy {reference!r} has no results here")
    rows = []
    for policy in sorted(set(summary["policy"]) - {reference}):
        try:
            scores, mine, ref, tasks = _matrices(summary, policy, reference, metric, higher_is_better)
        except ConfigError:
            continue
        lo, hi = stratified_bootstrap_ci(scores, iqm, reps=reps, seed=seed)
        poi = probability_of_improvement(mine, ref)  # unpaired within a task, as rliable
        poi_lo, poi_hi = _poi_ci(mine, ref, reps=max(200, reps // 4), seed=seed)
        rows.append({"policy": policy, "reference": reference, "metric": metric, "tasks": len(tasks),
                     "seeds_per_task": scores.shape[0], "iqm": iqm(scores), "iqm_lo": lo, "iqm_hi": hi,
                     "p_improvement": poi, "p_improvement_lo": poi_lo, "p_improvement_hi": poi_hi})
    table = pd.DataFrame(rows, columns=["policy", "reference", "metric", "tasks", "seeds_per_task", "iqm", "iqm_lo",
                                        "iqm_hi", "p_improvement", "p_improvement_lo", "p_improvement_hi"])
    return table.sort_values("iqm", ascending=False, kind="stable").reset_index(drop=True)


def aggregate_markdown(table: pd.DataFrame) -> str:
    """The aggregate table as Markdown (scores: reference's metric over the policy's; > 1 is better)."""
    if table.empty:
        return "(no policy shares seeds with the reference on every task)"
    ref, metric = table["reference"].iloc[0], table["metric"].iloc[0]
    lines = [f"| policy | tasks × seeds | IQM score vs {ref} (95% CI) | P(improves on {ref}) (95% CI) |",
             "|---|---|---:|---:|"]
    for r in table.itertuples(index=False):
        lines.append(f"| {r.policy} | {r.tasks} × {r.seeds_per_task} | {r.iqm:.3f} [{r.iqm_lo:.3f}, {r.iqm_hi:.3f}] | "
                     f"{r.p_improvement:.2f} [{r.p_improvement_lo:.2f}, {r.p_improvement_hi:.2f}] |")
    lines += ["", f"Score per task and seed: {ref}'s {metric} over the policy's (> 1: better than {ref}). IQM = mean "
              "of the middle 50% of all scores; CIs: stratified bootstrap (seeds resampled within each task); "
              "P(improves) = per-task Mann-Whitney probability of beating the reference, averaged over tasks "
              "(rliable's definitions, ddl_gym/aggregate.py)."]
    return "\n".join(lines)
