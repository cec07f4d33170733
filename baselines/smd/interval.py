"""Interval mode for parameter-server jobs: one scheduling interval with admission (Yu §III-A).

SMD's problem (1)–(3) is static: the jobs submitted in an interval are all known at its start;
a policy admits some (``x_i``) and gives each admitted job ``w_i`` workers and ``p_i`` PSs within
its limit (3); admission reserves the user's limit ``v^r_i`` against the pooled capacity (2); an
admitted job runs from the interval start and its utility is ``μ_i(E_i/f_i(p_i, w_i))``; a
rejected job leaves with utility 0. There is no interaction between jobs.

Two ways to evaluate a policy, which agree bit for bit (a test checks it):

* :func:`evaluate_interval` — the **static evaluator** ``(policy, instance) -> (x, w, p, utilities)``;
* the event engine — :class:`IntervalPolicy` is a native scheduler with the ``"reject"``
  capability: at each decision point it plans the queued jobs as one interval, starts the admitted
  ones with :func:`~ddl_gym.sim.perf.ps.smd_allocation` and rejects the others
  (``Simulator.reject``). ``run_episode`` does the same through :func:`ddl_gym.sim.run_policy`, so
  the harness (``ddl-gym eval``) runs every interval policy on the engine.

Jobs arriving later than the first batch form further intervals against the capacity left: the
total minus the limits reserved by running jobs (``capacity_mode = "reserve"``, eq. 2), or minus
what running jobs actually use (``"free"``, Optimus's own scheduler). SMD's scenarios have one
interval (every job arrives at ``t = 0``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from ddl_gym.baselines.smd.mkp import MKP_METHODS, solve_mkp
from ddl_gym.sim.engine import RUNNING, Simulator, run_policy
from ddl_gym.sim.metrics import SimResult
from ddl_gym.sim.model import ClusterSpec, ConfigError, Workload
from ddl_gym.sim.perf.ps import SMDProfile, smd_allocation


def check_ps_workload(policy: str, workload: Workload, scenario: str | None = None,
                      cluster: ClusterSpec | None = None) -> None:
    """Raise ConfigError naming the policy and the scenario unless every job is an SMD parameter-server job
    (and the cluster, if given, is a pooled one: SMD has no servers or placement)."""
    where = f"scenario {scenario!r}" if scenario else f"workload {workload.name!r}"
    others = sorted(workload.architectures - {"ps"})
    if others:
        raise ConfigError(f"policy {policy!r} schedules parameter-server (ps) jobs with SMD profiles, but {where} has "
                          f"{', '.join(others)} jobs; use an SMD scenario (smd-sync, smd-async) or a PS scenario file")
    for j in range(workload.num_jobs):
        if not isinstance(workload.job_profile(j), SMDProfile):
            raise ConfigError(f"policy {policy!r} needs SMD profiles for its ps jobs, but job {int(workload.job_id[j])} "
                              f"of {where} has a {type(workload.job_profile(j)).__name__}")
    if cluster is not None and cluster.num_servers != 1:
        raise ConfigError(f"policy {policy!r} plans on a pooled cluster (one virtual server, SMD §III-A), but {where} "
                          f"has {cluster.num_servers} servers; use ClusterSpec.pooled / a [cluster] pool")


# ============================================================================ instances and results
@dataclass(frozen=True)
class IntervalInstance:
    """One interval's jobs and the capacity available to them.

    Attributes:
        profiles: the jobs' SMD profiles.
        iterations: ``E_i``.
        capacity: ``C^r`` per resource of ``resources``.
        resources: resource names (the cluster's order).
        name: label for messages.
    """

    profiles: tuple[SMDProfile, ...]
    iterations: tuple[int, ...]
    capacity: tuple[float, ...]
    resources: tuple[str, ...]
    name: str = "interval"

    def __post_init__(self) -> None:
        if len(self.profiles) != len(self.iterations):
            raise ConfigError("interval instance: one iteration count per profile")
        if len(self.capacity) != len(self.resources):
            raise ConfigError("interval instance: one capacity per resource")

    @property
    def num_jobs(self) -> int:
        return len(self.profiles)

    @classmethod
    def from_episode(cls, cluster: ClusterSpec, workload: Workload, jobs: Sequence[int] | None = None,
                     capacity: np.ndarray | None = None) -> IntervalInstance:
        """The jobs ``jobs`` (default: all) of an SMD episode against ``capacity`` (default: the whole cluster)."""
        rows = list(range(workload.num_jobs)) if jobs is None else [int(j) for j in jobs]
        profiles = tuple(workload.job_profile(j) for j in rows)
        for j, profile in zip(rows, profiles):
            if not isinstance(profile, SMDProfile):
                raise ConfigError(f"job {int(workload.job_id[j])} of workload {workload.name!r} has no SMD profile")
        cap = cluster.capacity_matrix().sum(axis=0) if capacity is None else np.asarray(capacity, dtype=np.float64)
        return cls(profiles, tuple(int(workload.iterations[j]) for j in rows), tuple(float(c) for c in cap),
                   cluster.resources, workload.name)

    def limits(self) -> np.ndarray:
        """``v^r_i`` aligned with ``resources``, shape ``(I, R)`` (0 for resources a job does not mention)."""
        out = np.zeros((self.num_jobs, len(self.resources)))
        for i, profile in enumerate(self.profiles):
            lim = dict(profile.resource_limits)
            out[i] = [lim.get(r, 0.0) for r in self.resources]
        return out

    def usage(self, workers: np.ndarray, ps: np.ndarray) -> np.ndarray:
        """``O^r_i w_i + G^r_i p_i`` aligned with ``resources``, shape ``(I, R)``."""
        out = np.zeros((self.num_jobs, len(self.resources)))
        for i, profile in enumerate(self.profiles):
            used = dict(zip(profile.resources, profile.usage(int(workers[i]), int(ps[i])).tolist()))
            out[i] = [used.get(r, 0.0) for r in self.resources]
        return out

    def with_profiles(self, profiles: Sequence[SMDProfile]) -> IntervalInstance:
        return IntervalInstance(tuple(profiles), self.iterations, self.capacity, self.resources, self.name)


@dataclass(frozen=True)
class IntervalDecision:
    """A plan: admission ``x``, and ``(w, p)`` per job (0 where a job has no feasible allocation)."""

    admit: np.ndarray
    workers: np.ndarray
    ps: np.ndarray
    info: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class IntervalOutcome:
    """What an interval produced: admission, counts, completion times (NaN if rejected) and utilities (0 if rejected)."""

    admit: np.ndarray
    workers: np.ndarray
    ps: np.ndarray
    completion: np.ndarray
    utilities: np.ndarray
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def total_utility(self) -> float:
        return float(self.utilities.sum())


def job_utility(profile: SMDProfile, iterations: int, workers: int, ps: int) -> float:
    """``μ(E/f(p, w))`` with the same operations as the engine (completion ``E·τ`` from the interval start)."""
    return profile.utility(profile.completion_time(iterations, workers, ps))


def _as_rng(rng: np.random.Generator | int | None) -> np.random.Generator:
    if isinstance(rng, np.random.Generator):
        return rng
    return np.random.default_rng(0 if rng is None else rng)


def evaluate_interval(policy: IntervalPolicy, instance: IntervalInstance,
                      rng: np.random.Generator | int | None = None) -> IntervalOutcome:
    """The static evaluator: plan ``instance`` with ``policy`` and score it.

    ``rng`` (a generator or a seed; ``None`` = seed 0, as :func:`~ddl_gym.sim.run_policy`) is what
    the engine would hand the policy: ``evaluate_interval(p, inst, seed)`` equals the engine run
    on the same episode with the same seed, bit for bit.
    """
    decision = policy.plan(instance, _as_rng(rng))
    n = instance.num_jobs
    completion = np.full(n, np.nan)
    utilities = np.zeros(n)
    for i in np.flatnonzero(decision.admit):
        profile, e = instance.profiles[i], instance.iterations[i]
        completion[i] = profile.completion_time(e, int(decision.workers[i]), int(decision.ps[i]))
        utilities[i] = profile.utility(completion[i])
    return IntervalOutcome(decision.admit.copy(), decision.workers.copy(), decision.ps.copy(), completion, utilities,
                           dict(decision.info))


# ============================================================================ policies
class IntervalPolicy:
    """Base class: an interval planner that also drives the event engine (see the module docstring).

    Subclasses implement :meth:`plan`.
    """

    name = "interval"
    engine = "job"
    capabilities = frozenset({"reject"})
    capacity_mode = "reserve"  # or "free"

    def plan(self, instance: IntervalInstance, rng: np.random.Generator) -> IntervalDecision:
        raise NotImplementedError

    # ------------------------------------------------------------------ the engine side
    def reset(self, sim: Simulator, rng: np.random.Generator) -> None:
        check_ps_workload(self.name, sim.workload, cluster=sim.cluster)
        self._rng = rng
        self.last_decision: IntervalDecision | None = None

    def _capacity(self, sim: Simulator) -> np.ndarray:
        """Capacity for a new batch: the total minus what running jobs reserve (their limits) or use."""
        total = sim.cluster.capacity_matrix().sum(axis=0)
        running = [j for j in sim.running if sim.state[j] == RUNNING]
        if not running:
            return total
        if self.capacity_mode == "free":
            return np.maximum(sim.free_resources().sum(axis=0), 0.0)
        held = IntervalInstance.from_episode(sim.cluster, sim.workload, running).limits().sum(axis=0)
        return np.maximum(total - held, 0.0)

    def schedule(self, sim: Simulator) -> None:
        batch = list(sim.queue)
        instance = IntervalInstance.from_episode(sim.cluster, sim.workload, batch)
        instance = IntervalInstance(instance.profiles, instance.iterations,
                                    tuple(self._capacity(sim).tolist()), instance.resources,
                                    instance.name)
        decision = self.plan(instance, self._rng)
        self.last_decision = decision
        for k, job in enumerate(batch):
            if decision.admit[k]:
                sim.start(job, smd_allocation(sim.cluster, instance.profiles[k], int(decision.workers[k]),
                                              int(decision.ps[k])))
            else:
                sim.reject(job)

    def run_episode(self, scenario: Any, cluster: ClusterSpec, workload: Workload, rng: np.random.Generator
                    ) -> SimResult:
        """The harness's entry point: the episode on the event engine (errors name the scenario)."""
        check_ps_workload(self.name, workload, getattr(scenario, "name", None), cluster)
        sim = Simulator(cluster, workload, scenario.model)
        return run_policy(sim, self, rng)


class AllocateThenAdmit(IntervalPolicy):
    """Per-job allocation ``(w_i, p_i)`` (the subclass's :meth:`allocate`), then the MKP (16) on the utilities.

    Every policy of Yu §V shares the admission step (spec B5 #4), so only the allocation differs.

    Args:
        mkp: ``"exact"`` (MILP) or ``"frieze-clarke"``.
        q: Frieze–Clarke's subset size.
    """

    def __init__(self, *, mkp: str = "exact", q: int = 2, name: str | None = None) -> None:
        if mkp not in MKP_METHODS:
            raise ConfigError(f"unknown MKP method {mkp!r}; choose one of {MKP_METHODS}")
        from ddl_gym.bounds import check_int

        self.mkp = mkp
        self.q = check_int(q, 1, 3, "q (Frieze-Clarke subset size; C(n, q) subsets)")
        if name:
            self.name = name

    def allocate(self, instance: IntervalInstance, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, dict]:
        """``(w, p, info)`` per job; ``w = p = 0`` where a job cannot run within its limit."""
        raise NotImplementedError

    def plan(self, instance: IntervalInstance, rng: np.random.Generator) -> IntervalDecision:
        t0 = time.perf_counter()
        workers, ps, info = self.allocate(instance, rng)
        t1 = time.perf_counter()
        utilities = np.array([job_utility(prof, e, int(w), int(p)) if w >= 1 else 0.0
                              for prof, e, w, p in zip(instance.profiles, instance.iterations, workers, ps)])
        admit = solve_mkp(utilities, instance.limits(), np.asarray(instance.capacity), self.mkp, self.q)
        info = dict(info)
        info.update(allocation_s=t1 - t0, admission_s=time.perf_counter() - t1, planned_utilities=utilities)
        return IntervalDecision(admit, np.asarray(workers, dtype=np.int64), np.asarray(ps, dtype=np.int64), info)
