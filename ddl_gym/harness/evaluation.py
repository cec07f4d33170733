from __future__ import annotations

import dataclasses
import os
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ddl_gym.fingerprint import git_sha, package_version
from ddl_gym.harness.policy_specs import (
    _portable_spec, load_policy_spec, policy_driver, policy_label, split_policy_list,
)
from ddl_gym.harness.report import markdown_table, write_artifacts
from ddl_gym.harness.stats import aggregate
from ddl_gym.harness.store import (
    JOBS_FILE, NO_CACHE_KEY, SUMMARY_COLUMNS, SUMMARY_FILE, _append_csv, _canonical, _run_length, _sort_jobs,
    _sort_summary, _write_csv_atomic, _write_error, read_results, results_lock, run_cache_key,
)
from ddl_gym.scenarios import SCENARIOS, Scenario, get_scenario
from ddl_gym.sim.engine import Simulator, run_policy
from ddl_gym.sim.metrics import SimResult
from ddl_gym.sim.model import ConfigError


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
    path = Path(workload_csv)
    from ddl_gym.scenarios import CsvSource

    # Jobs larger than the cluster are an error unless the user asks to drop them (counted warning).
    source = CsvSource(str(path), drop_oversized=drop_oversized)
    return dataclasses.replace(base, workload=source, name=f"{base.name}@{path.stem}",
                               description=f"{base.description} (workload from {path})")


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
    from ddl_gym.envs.cluster_env import DDLClusterEnv

    kwargs = dict(getattr(policy, "env_kwargs", None) or {}) if env_kwargs is None else dict(env_kwargs)
    kwargs.setdefault("debug", debug)
    env = DDLClusterEnv(scenario, **kwargs)
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
    """Run ``policy`` on ``scenario.episode(seed)`` with the driver its methods call for."""
    driver = policy_driver(policy)
    t_start = time.perf_counter()
    invalid = steps = 0
    if driver == "env":
        result, decision, invalid, steps = run_env_policy(policy, scenario, seed, debug=debug)
    else:
        cluster, workload = scenario.episode(seed)
        rng = np.random.default_rng(seed)
        if driver == "self":
            t0 = time.perf_counter()
            result = policy.run_episode(scenario, cluster, workload, rng)
            decision = time.perf_counter() - t0
        else:
            sim = _TimedSimulator(cluster, workload, scenario.model, debug=debug)
            timed = _TimedScheduler(policy)
            result = run_policy(sim, timed, rng)
            decision = max(0.0, timed.seconds - sim._harness_start_s)
    return EpisodeRun(result=result, driver=driver, decision_time_s=decision,
                      wall_time_s=time.perf_counter() - t_start, invalid_actions=invalid, env_steps=steps)


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


def _worker_init(parent_pid: int | None = None, interval_s: float = 0.5) -> None:
    # One process per pair already saturates the cores; keep torch/BLAS from oversubscribing them.
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(var, "1")
    # Pool workers are children of the forkserver, not of the evaluating process, and block forever
    # on their task queue if that process dies without shutting the pool down: watch it instead.
    if parent_pid is not None:
        threading.Thread(target=_watch_parent, args=(parent_pid, interval_s), daemon=True,
                         name="ddl-gym-parent-watch").start()


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
        echo: print the Markdown table to stdout (also returned as ``EvalResults.markdown``).

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
    for policy in policies:
        label = policy_label(policy)
        if label in entries:
            continue
        instance = load_policy_spec(label) if isinstance(policy, str) else policy
        _check_engine(instance, label, resolved)
        entries[label] = _portable_spec(label) if isinstance(policy, str) else policy
    if not entries:
        raise ConfigError("no policies given")
    if workers is not None and not 1 <= int(workers) <= MAX_WORKERS:
        raise ConfigError(f"workers must be in [1, {MAX_WORKERS}], got {workers}")
    keys = {label: run_cache_key(resolved, entry) for label, entry in entries.items()}

    out_path = Path(out) if out is not None else None
    if out_path is None:
        return _evaluate_into(None, resolved, scenario, entries, keys, seed_list, csv_text, drop_oversized,
                              workers, progress, debug, overwrite, plots, echo)
    try:
        out_path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"cannot create results folder {out_path}: {exc.strerror or exc}") from None
    if not out_path.is_dir():
        raise ConfigError(f"{out_path}: not a folder; --out must name a folder")
    with results_lock(out_path):
        return _evaluate_into(out_path, resolved, scenario, entries, keys, seed_list, csv_text, drop_oversized,
                              workers, progress, debug, overwrite, plots, echo)


class _StopEvaluation(Exception):
    """An error that must stop the whole evaluation (results can no longer be written)."""


def _evaluate_into(out_path: Path | None, resolved: Scenario, scenario: str | Path | Scenario,
                   entries: dict[str, str | Any], keys: dict[str, str], seed_list: list[int], csv_text: str | None,
                   drop_oversized: bool, workers: int | None, progress: bool, debug: bool, overwrite: bool,
                   plots: bool, echo: bool) -> EvalResults:
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
    portable = [i for i, t in enumerate(tasks) if not isinstance(t.scenario, Scenario) and isinstance(t.policy, str)]
    n_workers = int(workers) if workers is not None else min(os.cpu_count() or 1, max(1, len(portable)))
    pool_idx = set(portable) if n_workers > 1 and len(portable) > 1 else set()
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
        if pool_tasks:
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
            files += write_artifacts(out_path, plots=plots)
    results = EvalResults(summary=summary, jobs=jobs, out=out_path, reused=len(done_keys), files=files, stale=stale)
    if echo:
        print(results.markdown)
    if errors:
        raise errors[0]
    return results


def _run_in_pool(tasks: list[_PairTask], n_workers: int, record: Any, errors: list[BaseException], bar: Any) -> None:
    """Run pairs in worker processes; on an interrupt or a write error, stop the workers at once."""
    import multiprocessing

    # forkserver: children start clean (no inherited torch/OpenMP threads, which can hang after fork).
    method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
    pool = ProcessPoolExecutor(max_workers=min(n_workers, len(tasks)), mp_context=multiprocessing.get_context(method),
                               initializer=_worker_init, initargs=(os.getpid(),))
    finished_cleanly = False
    try:
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
