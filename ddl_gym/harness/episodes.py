"""Running episodes and (policy, seed) pairs: the drivers, the pair task, and the worker pool.

The layer below :mod:`ddl_gym.harness.evaluation` (which adds seeds, caching, files and tables) and
below :mod:`ddl_gym.executors` (which ships pair tasks to local processes or Ray tasks): both import
it, it imports neither.
"""

from __future__ import annotations

import dataclasses
import os
import threading
import time
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ddl_gym.envs.agent_env import make_agent_env
from ddl_gym.harness.policy_specs import load_policy_spec, policy_driver, policy_label
from ddl_gym.harness.store import _run_length
from ddl_gym.scenarios import Scenario, get_scenario
from ddl_gym.sim.checks import invariant_checks
from ddl_gym.sim.engine import Simulator, run_policy
from ddl_gym.sim.metrics import SimResult
from ddl_gym.sim.model import ClusterSpec, ConfigError, Workload



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


def _run_in_pool(tasks: list[_PairTask], n_workers: int, record: Any, errors: list[BaseException], bar: Any) -> None:
    """Run pairs in worker processes; on an interrupt or a write error, stop the workers at once."""
    import multiprocessing

    from ddl_gym.policies import user_registrations
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
        close_pool(pool, finished_cleanly)


def close_pool(pool: Any, finished_cleanly: bool) -> None:
    """Shut a process pool down: wait for it after a clean run; after Ctrl-C, SIGTERM or a disk error,
    cancel what is queued and stop the running workers instead of waiting for their pairs."""
    if finished_cleanly:
        pool.shutdown(wait=True)
        return
    processes = list(getattr(pool, "_processes", {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in processes:
        if proc.is_alive():
            proc.terminate()
    for proc in processes:
        proc.join(timeout=5)


def run_pairs_here(tasks: Sequence[_PairTask], record: Any, errors: list[BaseException], bar: Any) -> None:
    """Run pairs one after the other in this process: ``record(task, row, jobs)`` for each that finishes,
    its annotated error into ``errors`` for each that fails."""
    for task in tasks:
        try:
            row, jobs = _run_pair(task)
        except Exception as exc:
            errors.append(_annotate(exc, task))
        else:
            record(task, row, jobs)
        bar.update(1)


def _annotate(exc: BaseException, task: _PairTask) -> BaseException:
    if hasattr(exc, "add_note"):
        exc.add_note(f"while evaluating policy {task.label!r} on seed {task.seed}")
    return exc
