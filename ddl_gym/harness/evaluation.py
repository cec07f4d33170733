"""``evaluate``: every (policy, seed) pair of a scenario, run once, cached on content, written to a
results folder (``summary.csv``, ``jobs.csv``, ``summary.md``, plots).

Pairs run through :mod:`ddl_gym.harness.episodes` (here, in a local process pool) or a remote
executor (:mod:`ddl_gym.executors`); rows are stored by :mod:`ddl_gym.harness.store`, summarised by
:mod:`ddl_gym.harness.stats` and reported by :mod:`ddl_gym.harness.report`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ddl_gym.fingerprint import git_sha, package_version
from ddl_gym.harness.episodes import _check_engine, _PairTask, _run_in_pool, resolve_scenario, run_pairs_here
from ddl_gym.harness.policy_specs import _portable_spec, load_policy_spec, policy_label, split_policy_list
from ddl_gym.harness.report import markdown_table, write_artifacts
from ddl_gym.harness.stats import aggregate
from ddl_gym.harness.store import (
    JOBS_FILE, NO_CACHE_KEY, SUMMARY_COLUMNS, SUMMARY_FILE, _append_csv, _canonical, _sort_jobs, _sort_summary,
    _write_csv_atomic, _write_error, read_results, results_lock, run_cache_key,
)
from ddl_gym.scenarios import SCENARIOS, Scenario
from ddl_gym.sim.model import ConfigError


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
    from ddl_gym.policies import runs_in_process_only

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
        run_pairs_here(serial_tasks, record, errors, bar)
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


def _concat(frames: Sequence[pd.DataFrame]) -> pd.DataFrame:
    frames = [f for f in frames if not f.empty]
    if not frames:
        return pd.DataFrame()
    return pd.concat(frames, ignore_index=True)


