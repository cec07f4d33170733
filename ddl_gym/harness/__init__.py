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
  the code (package version, git commit, uncommitted changes). A rerun reuses a row only if its key
  matches; an edited scenario file or a retrained agent at the same path is recomputed.
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

The package by concern (every name above is importable from ``ddl_gym.harness``):

* :mod:`~ddl_gym.harness.evaluation` — :func:`evaluate`: pairs, seeds, the content cache, the results
  folder, local pool or a remote executor (:mod:`ddl_gym.executors`);
* :mod:`~ddl_gym.harness.episodes` — running one episode (native, self-driving, env-driven:
  :func:`simulate`), one (policy, seed) pair, the worker pool and its orphan watch;
* :mod:`~ddl_gym.harness.store` — the results folder: columns, :func:`read_results`, atomic writes,
  the lock, cache keys (resume reuses rows whose key matches);
* :mod:`~ddl_gym.harness.stats` — confidence intervals, aggregation, paired differences;
* :mod:`~ddl_gym.harness.report` — Markdown tables, paired reports, :func:`write_artifacts` (plots);
* :mod:`~ddl_gym.harness.policy_specs` — policy specs: parsing, loading, labels, drivers.

(The module is named ``evaluation``, not ``evaluate``, so that ``ddl_gym.harness.evaluate`` stays the function.)
"""

from __future__ import annotations

from ddl_gym.harness.policy_specs import (
    split_policy_list, is_agent_spec, load_policy_spec, policy_label, policy_driver,
)
from ddl_gym.harness.stats import (
    LOWER_IS_BETTER, HIGHER_IS_BETTER, TABLE_METRICS, FLOAT_NOISE, t_quantile_975, mean_ci, aggregate, PAIRED_METRICS,
    paired_differences,
)
from ddl_gym.harness.store import (
    ID_COLUMNS, SUMMARY_COLUMNS, TIMING_COLUMNS, LOCK_FILE, NO_CACHE_KEY, SUMMARY_FILE, JOBS_FILE,
    gpus_per_server_from_text, read_results, results_lock, policy_fingerprint, run_cache_key,
)
from ddl_gym.harness.report import (
    PLOT_PATTERNS, MARKDOWN_FILE, SAME_ON_EVERY_SEED, SAME_ON_EVERY_SEED_NOTE, format_mean_ci, markdown_table,
    paired_markdown, compare, write_artifacts,
)
from ddl_gym.harness.episodes import (
    resolve_scenario, EpisodeRun, run_env_policy, simulate, simulate_episode,
)
from ddl_gym.harness.evaluation import EvalResults, MAX_SEEDS, MAX_SEED, MAX_WORKERS, evaluate
from ddl_gym.envs.agent_env import make_agent_env
from ddl_gym.fingerprint import git_sha, package_version  # provenance, re-exported as before

__all__ = [
    "split_policy_list", "is_agent_spec", "load_policy_spec", "policy_label", "policy_driver",
    "LOWER_IS_BETTER", "HIGHER_IS_BETTER", "TABLE_METRICS", "FLOAT_NOISE", "t_quantile_975", "mean_ci", "aggregate",
    "PAIRED_METRICS", "paired_differences", "ID_COLUMNS", "SUMMARY_COLUMNS", "TIMING_COLUMNS", "LOCK_FILE",
    "NO_CACHE_KEY", "SUMMARY_FILE", "JOBS_FILE", "gpus_per_server_from_text", "read_results", "results_lock",
    "policy_fingerprint", "run_cache_key", "PLOT_PATTERNS", "MARKDOWN_FILE", "SAME_ON_EVERY_SEED",
    "SAME_ON_EVERY_SEED_NOTE", "format_mean_ci", "markdown_table", "paired_markdown", "compare",
    "write_artifacts", "resolve_scenario", "EpisodeRun", "run_env_policy", "simulate", "simulate_episode", "make_agent_env", "EvalResults",
    "MAX_SEEDS", "MAX_SEED", "MAX_WORKERS", "evaluate", "git_sha", "package_version",
]
