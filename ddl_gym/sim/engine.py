"""Event-driven cluster simulator for gang-scheduled, non-preemptive distributed training jobs.

One clock (``Simulator.now``), one completion heap with deterministic tie-breaking
``(time, sequence)``, arrivals read in order from the (sorted) workload, and policy wake-up
timers. Jobs progress continuously at ``1/τ_j`` iterations per second, where ``τ_j`` comes from
the bound performance model (:mod:`ddl_gym.sim.perf`). When a split job (one spread over several
servers) starts or ends, only the split jobs sharing one of its servers can change rate: the
engine re-rates exactly those, banks their progress and reschedules their completion.

Scheduling happens between events. A driver (the native loop :func:`run_policy`, or the Gymnasium
env) asks the policy for decisions, applies them with :meth:`Simulator.start`, then calls
:meth:`Simulator.advance`, which jumps to the next event time and processes every event at that
time (completions first, then arrivals, then wake-ups).

With ``debug=True`` the invariants are checked after every event batch and every start:
no GPU over-committed, gang start/stop (all of a job's GPUs held from start to finish), no start
before arrival, iterations conserved (``0 <= remaining <= F``, exactly ``0`` at completion) and time
non-decreasing. Violations raise :class:`InvariantError`.
"""

from __future__ import annotations

import heapq
import math
from typing import Protocol

import numpy as np

from ddl_gym.sim.metrics import SimResult
from ddl_gym.sim.model import ClusterSpec, Workload
from ddl_gym.sim.perf import PerformanceModel, RARContentionModel

PENDING, QUEUED, RUNNING, DONE = 0, 1, 2, 3


class SimulationError(RuntimeError):
    """A driver or policy asked the simulator for something impossible."""


class InvariantError(AssertionError):
    """A simulator invariant was violated (raised in debug mode only)."""


class Simulator:
    """The cluster simulator. See the module docstring for semantics.

    Args:
        cluster: servers and links.
        workload: the jobs (sorted by arrival).
        model: performance model (default: :class:`RARContentionModel`).
        debug: check invariants after every event batch and start.
        record_timeline: keep ``(time, job, τ)`` for every rate change (for Gantt plots).

    Public read-only state for policies (do not mutate): ``now``, ``queue`` (queued job indices
    in arrival order), ``running`` (dict of running jobs in start order), ``free_per_server``,
    ``gpu_owner`` (job index per GPU, ``-1`` free), ``split_count`` (split jobs per server),
    ``num_free``, ``state``.
    """

    def __init__(
        self,
        cluster: ClusterSpec,
        workload: Workload,
        model: PerformanceModel | None = None,
        *,
        debug: bool = False,
        record_timeline: bool = False,
    ) -> None:
        workload.check_fits(cluster)
        self.cluster = cluster
        self.workload = workload
        self.model = model if model is not None else RARContentionModel()
        self.bound = self.model.bind(cluster, workload)
        self.debug = debug
        n = workload.num_jobs
        self._n = n
        self.gpu_server = cluster.gpu_server()
        self._gpu_server_list: list[int] = self.gpu_server.tolist()
        self.server_first_gpu = cluster.server_first_gpu()
        self.server_gpus = np.asarray(cluster.gpus_per_server, dtype=np.int64)
        self._server_first_list: list[int] = self.server_first_gpu.tolist()
        self._server_gpus_list: list[int] = list(cluster.gpus_per_server)
        self._arrival: list[float] = workload.arrival.tolist()
        self._gpus: list[int] = workload.gpus.tolist()
        self._iterations: list[int] = workload.iterations.tolist()
        self._weight: list[float] = workload.weight.tolist()
        self._max_server_gpus = cluster.max_server_gpus

        self.now = 0.0 if n == 0 else self._arrival[0]  # the clock starts at the first arrival
        self.queue: list[int] = []
        self.running: dict[int, None] = {}
        self.state = [PENDING] * n
        self.free_per_server = self.server_gpus.copy()
        self.num_free = cluster.num_gpus
        self.gpu_owner = np.full(cluster.num_gpus, -1, dtype=np.int64)
        self.split_count = np.zeros(cluster.num_servers, dtype=np.int64)
        # Estimated GPU-seconds assigned to each GPU so far (list-scheduling load, LS / LWF rules).
        self.gpu_assigned_work = np.zeros(cluster.num_gpus, dtype=np.float64)
        self._split_jobs: list[set[int]] = [set() for _ in range(cluster.num_servers)]
        self._split_list: list[int] = [0] * cluster.num_servers  # python mirror of split_count (fast scalar reads)

        self.remaining = [float(f) for f in self._iterations]  # iterations left (banked at `last`)
        self.tau = [math.inf] * n  # current per-iteration time
        self._last = [0.0] * n  # time `remaining` was last banked
        self._version = [0] * n
        self.contention = [0] * n  # p_j
        self.servers: list[tuple[int, ...]] = [()] * n
        self._server_counts: list[tuple[int, ...]] = [()] * n  # GPUs of the job on each of its servers
        self.placement: list[np.ndarray | None] = [None] * n
        self.start_time = [math.nan] * n
        self.finish_time = [math.nan] * n
        self._ideal_tau = [math.nan] * n

        self._heap: list[tuple[float, int, int, int]] = []  # (time, seq, job, version)
        self._wakeups: list[float] = []
        self._seq = 0
        self._next_arrival = 0
        self.num_finished = 0
        self.num_arrived = 0
        self.decisions = 0
        # ∫ (jobs in system) dt, ∫ Σ weights dt, ∫ busy GPUs dt — rewards and utilisation.
        self.jobs_area = 0.0
        self.weighted_area = 0.0
        self.busy_gpu_area = 0.0
        self._weight_in_system = 0.0
        self.timeline: list[tuple[float, int, float]] | None = [] if record_timeline else None
        self._admit_arrivals()

    # ------------------------------------------------------------------ queries
    @property
    def done(self) -> bool:
        """All jobs finished."""
        return self.num_finished == self._n

    @property
    def jobs_in_system(self) -> int:
        return self.num_arrived - self.num_finished

    @property
    def has_future_arrivals(self) -> bool:
        return self._next_arrival < self._n

    def next_event_time(self) -> float:
        """Time of the next completion, arrival or wake-up (``inf`` if none)."""
        self._drop_stale()
        t = self._heap[0][0] if self._heap else math.inf
        if self._next_arrival < self._n:
            t = min(t, self._arrival[self._next_arrival])
        if self._wakeups:
            t = min(t, self._wakeups[0])
        return t

    def free_gpu_ids(self, server: int | None = None) -> np.ndarray:
        """Free global GPU indices (of one server, or of the whole cluster), ascending."""
        if server is None:
            return np.nonzero(self.gpu_owner < 0)[0]
        first = self._server_first_list[server]
        return first + np.nonzero(self.gpu_owner[first : first + self._server_gpus_list[server]] < 0)[0]

    def remaining_iterations(self, job: int) -> float:
        """Iterations ``job`` still has to run, as of ``now``."""
        if self.state[job] == RUNNING:
            return max(0.0, self.remaining[job] - (self.now - self._last[job]) / self.tau[job])
        return self.remaining[job]

    def nominal_iteration_time(self, job: int) -> float:
        """τ of ``job`` on its most consolidated placement with no contention (planning estimate)."""
        g = self._gpus[job]
        n_servers = -(-g // self._max_server_gpus)
        return self.bound.iteration_time(job, n_servers, 1 if n_servers > 1 else 0)

    def estimate_iteration_time(self, job: int, gpu_ids: np.ndarray) -> float:
        """τ that ``job`` would have right now on ``gpu_ids`` (others' slowdown not included)."""
        servers = np.unique(self.gpu_server[np.asarray(gpu_ids, dtype=np.int64)])
        if servers.size <= 1:
            return self.bound.iteration_time(job, 1, 0)
        return self.bound.iteration_time(job, int(servers.size), int(self.split_count[servers].max()) + 1)

    # ------------------------------------------------------------------ actions
    def start(self, job: int, gpu_ids: np.ndarray | list[int]) -> None:
        """Gang-start queued ``job`` on the given free GPUs (exactly ``G_j`` distinct ones)."""
        if not 0 <= job < self._n or self.state[job] != QUEUED:
            raise SimulationError(f"job {job} cannot start: it is not in the queue (state {self._state_name(job)})")
        ids = np.asarray(gpu_ids, dtype=np.int64).ravel()
        g = self._gpus[job]
        if ids.size != g:
            raise SimulationError(f"job {job} needs {g} GPUs, placement has {ids.size}")
        id_list = ids.tolist()
        owner = self.gpu_owner
        gpu_server = self._gpu_server_list
        if g == 1:  # the common case, kept free of numpy fancy indexing
            gpu = id_list[0]
            if not 0 <= gpu < owner.size:
                raise SimulationError(f"job {job}: GPU index out of range in {id_list}")
            if owner[gpu] >= 0:
                raise SimulationError(f"job {job}: placement {id_list} uses busy or repeated GPUs")
            servers: tuple[int, ...] = (gpu_server[gpu],)
            counts: tuple[int, ...] = (1,)
            self.free_per_server[servers[0]] -= 1
            owner[gpu] = job
            self.gpu_assigned_work[gpu] += self._iterations[job] * self.nominal_iteration_time(job)
        else:
            if min(id_list) < 0 or max(id_list) >= owner.size:
                raise SimulationError(f"job {job}: GPU index out of range in {id_list}")
            if owner[ids].max() >= 0 or len(set(id_list)) != g:
                raise SimulationError(f"job {job}: placement {id_list} uses busy or repeated GPUs")
            per_server: dict[int, int] = {}
            for i in id_list:
                server = gpu_server[i]
                per_server[server] = per_server.get(server, 0) + 1
            servers = tuple(sorted(per_server))
            counts = tuple(per_server[server] for server in servers)
            if len(servers) == 1:
                self.free_per_server[servers[0]] -= g
            else:
                self.free_per_server[list(servers)] -= counts
            owner[ids] = job
            self.gpu_assigned_work[ids] += self._iterations[job] * self.nominal_iteration_time(job)
        self._server_counts[job] = counts
        self.num_free -= g
        self.queue.remove(job)
        self.running[job] = None
        self.state[job] = RUNNING
        self.servers[job] = servers
        self.placement[job] = ids
        self.start_time[job] = self.now
        self._last[job] = self.now
        self.decisions += 1
        if len(servers) > 1:
            for s in servers:
                self._split_jobs[s].add(job)
                self._split_list[s] += 1
            self.split_count[list(servers)] += 1
            self._ideal_tau[job] = self.bound.iteration_time(job, len(servers), 1)
            self._rerate(self._neighbours(servers))
        else:
            tau = self.bound.iteration_time(job, 1, 0)
            self._ideal_tau[job] = tau
            self._set_rate(job, tau)
        if self.debug:
            self.check_invariants()

    def wake_at(self, t: float) -> None:
        """Ask to be called again at time ``t`` (a decision point even if nothing else happens)."""
        if t < self.now:
            raise SimulationError(f"wake-up time {t} is before now ({self.now})")
        heapq.heappush(self._wakeups, float(t))

    def advance(self) -> bool:
        """Jump to the next event time and process all its events. False if there is none."""
        t = self.next_event_time()
        if t == math.inf:
            return False
        self._integrate(t)
        heap = self._heap
        while heap and heap[0][0] <= t:
            _, _, job, version = heapq.heappop(heap)
            if version == self._version[job] and self.state[job] == RUNNING:
                self._complete(job)
        self._admit_arrivals()
        while self._wakeups and self._wakeups[0] <= t:
            heapq.heappop(self._wakeups)
        if self.debug:
            self.check_invariants()
        return True

    # ------------------------------------------------------------------ internals
    def _state_name(self, job: int) -> str:
        if not 0 <= job < self.workload.num_jobs:
            return "no such job"
        return ("pending (not arrived)", "queued", "running", "done")[self.state[job]]

    def _integrate(self, t: float) -> None:
        if t < self.now:
            raise InvariantError(f"time went backwards: {t} < {self.now}")
        dt = t - self.now
        if dt > 0:
            self.jobs_area += dt * (self.num_arrived - self.num_finished)
            self.weighted_area += dt * self._weight_in_system
            self.busy_gpu_area += dt * (self.gpu_owner.size - self.num_free)
        self.now = t

    def _admit_arrivals(self) -> None:
        n = self._n
        i = self._next_arrival
        while i < n and self._arrival[i] <= self.now:
            self.state[i] = QUEUED
            self.queue.append(i)
            self._weight_in_system += self._weight[i]
            i += 1
        self.num_arrived += i - self._next_arrival
        self._next_arrival = i

    def _neighbours(self, servers: tuple[int, ...]) -> set[int]:
        affected: set[int] = set()
        for s in servers:
            affected |= self._split_jobs[s]
        return affected

    def _rerate(self, jobs: set[int]) -> None:
        count_of = self._split_list.__getitem__
        for i in sorted(jobs):  # sorted: deterministic heap sequence numbers
            servers = self.servers[i]
            p = max(map(count_of, servers))
            if p != self.contention[i] or self.tau[i] == math.inf:
                self.contention[i] = p
                self._set_rate(i, self.bound.iteration_time(i, len(servers), p))

    def _set_rate(self, job: int, tau: float) -> None:
        now = self.now
        old = self.tau[job]
        if old != math.inf:
            left = self.remaining[job] - (now - self._last[job]) / old
            self.remaining[job] = left if left > 0.0 else 0.0
        self._last[job] = now
        self.tau[job] = tau
        self._version[job] += 1
        self._seq += 1
        heapq.heappush(self._heap, (now + self.remaining[job] * tau, self._seq, job, self._version[job]))
        if self.timeline is not None:
            self.timeline.append((now, job, tau))

    def _complete(self, job: int) -> None:
        ids = self.placement[job]
        servers = self.servers[job]
        if ids.size == 1:
            self.gpu_owner[int(ids[0])] = -1
        else:
            self.gpu_owner[ids] = -1
        if len(servers) == 1:
            self.free_per_server[servers[0]] += self._gpus[job]
        else:
            self.free_per_server[list(servers)] += self._server_counts[job]
        self.num_free += self._gpus[job]
        del self.running[job]
        self.state[job] = DONE
        self.remaining[job] = 0.0
        self._last[job] = self.now
        self.finish_time[job] = self.now
        self.num_finished += 1
        self._weight_in_system -= self._weight[job]
        if self.timeline is not None:
            self.timeline.append((self.now, job, math.inf))
        if len(servers) > 1:
            for s in servers:
                self._split_jobs[s].discard(job)
                self._split_list[s] -= 1
            self.split_count[list(servers)] -= 1
            self._rerate(self._neighbours(servers))

    def _drop_stale(self) -> None:
        heap = self._heap
        while heap and (heap[0][3] != self._version[heap[0][2]] or self.state[heap[0][2]] != RUNNING):
            heapq.heappop(heap)

    # ------------------------------------------------------------------ checks & results
    def check_invariants(self) -> None:
        """Raise InvariantError if any simulator invariant does not hold right now."""
        owner = self.gpu_owner
        free_now = np.bincount(self.gpu_server[owner < 0], minlength=self.cluster.num_servers)
        if not np.array_equal(free_now, self.free_per_server) or int((owner < 0).sum()) != self.num_free:
            raise InvariantError("free-GPU bookkeeping disagrees with GPU ownership (over-committed GPU?)")
        if np.any(self.free_per_server < 0) or np.any(self.free_per_server > self.server_gpus):
            raise InvariantError("a server has a negative or excess free-GPU count")
        held = np.bincount(owner[owner >= 0], minlength=self.workload.num_jobs)
        for j in range(self.workload.num_jobs):
            state = self.state[j]
            if state == RUNNING:
                if held[j] != self._gpus[j] or not np.all(owner[self.placement[j]] == j):
                    raise InvariantError(f"gang violated: job {j} holds {held[j]} of its {self._gpus[j]} GPUs")
                if self.start_time[j] < self._arrival[j]:
                    raise InvariantError(f"job {j} started at {self.start_time[j]} before arrival {self._arrival[j]}")
                if not (-1e-9 <= self.remaining_iterations(j) <= self._iterations[j]):
                    raise InvariantError(f"job {j}: remaining iterations {self.remaining_iterations(j)} out of range")
            elif held[j]:
                raise InvariantError(f"job {j} is {self._state_name(j)} but holds {held[j]} GPUs")
            if state == DONE and (self.remaining[j] != 0.0 or not self.finish_time[j] >= self.start_time[j]):
                raise InvariantError(f"job {j} finished with {self.remaining[j]} iterations left")
            if state in (PENDING,) and self._arrival[j] <= self.now and j < self._next_arrival:
                raise InvariantError(f"job {j} arrived but was never queued")
        expected_split = np.zeros(self.cluster.num_servers, dtype=np.int64)
        for j in self.running:
            if len(self.servers[j]) > 1:
                expected_split[list(self.servers[j])] += 1
        if not np.array_equal(expected_split, self.split_count) or expected_split.tolist() != self._split_list:
            raise InvariantError("per-server split-job counts are stale")

    def result(self, policy: str = "") -> SimResult:
        """Per-job records of the run so far (unfinished jobs have NaN finish)."""
        n = self.workload.num_jobs
        iterations = self.workload.iterations.astype(np.float64)
        return SimResult(
            workload=self.workload,
            cluster=self.cluster,
            start=np.array(self.start_time, dtype=np.float64),
            finish=np.array(self.finish_time, dtype=np.float64),
            n_servers=np.array([len(s) for s in self.servers], dtype=np.int64),
            gpu_ids=[tuple(p.tolist()) if p is not None else () for p in self.placement],
            ideal_runtime=iterations * np.array(self._ideal_tau, dtype=np.float64) if n else np.zeros(0),
            decisions=self.decisions,
            policy=policy,
            timeline=list(self.timeline) if self.timeline is not None else None,
        )

    def fork(self) -> Simulator:
        """An independent copy of the full simulator state (workload and model are shared, immutable)."""
        twin = object.__new__(Simulator)
        shared = {"cluster", "workload", "model", "bound", "gpu_server", "_gpu_server_list", "server_first_gpu",
                  "server_gpus", "_arrival", "_gpus", "_iterations", "_weight"}
        for key, value in self.__dict__.items():
            if key in shared:
                twin.__dict__[key] = value
            elif isinstance(value, np.ndarray):
                twin.__dict__[key] = value.copy()
            elif key == "_split_jobs":
                twin.__dict__[key] = [set(s) for s in value]
            elif isinstance(value, (list, dict)):
                twin.__dict__[key] = value.copy()  # elements are immutable (or arrays never mutated in place)
            else:
                twin.__dict__[key] = value
        return twin


class Scheduler(Protocol):
    """A native scheduling policy: looks at the simulator and starts jobs (or asks to be woken).

    ``schedule`` is called at every decision point (after each batch of events). It may call
    ``sim.start(job, gpu_ids)`` any number of times and ``sim.wake_at(t)``.
    """

    name: str

    def reset(self, sim: Simulator, rng: np.random.Generator) -> None: ...

    def schedule(self, sim: Simulator) -> None: ...


def run_policy(sim: Simulator, policy: Scheduler, rng: np.random.Generator | None = None, *, max_events: int | None = None) -> SimResult:
    """Run ``policy`` natively until every job has finished; returns the records.

    Raises:
        SimulationError: if the policy leaves jobs queued with nothing running, no future arrivals
            and no wake-up pending (it would wait forever).
    """
    policy.reset(sim, rng if rng is not None else np.random.default_rng(0))
    events = 0
    while not sim.done:
        if sim.queue:
            policy.schedule(sim)
        if not sim.advance():
            raise SimulationError(
                f"policy {policy.name!r} is stuck at t={sim.now:.3f}s: {len(sim.queue)} jobs queued, none running, "
                "no arrivals or wake-ups left (it never starts a job that fits)"
            )
        events += 1
        if max_events is not None and events >= max_events:
            break
    return sim.result(policy.name)

