"""Event-driven cluster simulator for gang-scheduled distributed training jobs of every kind.

One clock (``Simulator.now``), one completion heap with deterministic tie-breaking
``(time, sequence)``, arrivals read in order from the (sorted) workload, and policy wake-up
timers. Jobs progress continuously at ``1/τ_j`` iterations per second, where ``τ_j`` comes from
the bound rate model (:mod:`ddl_gym.sim.perf`). With a *contention* model (RAR, all-reduce), when
a split job (one spread over several servers) starts or ends, only the split jobs sharing one of
its servers can change rate: the engine re-rates exactly those, banks their progress and
reschedules their completion. With a *contention-free* model (pipeline, parameter-server,
A-Online) a job's τ depends on its own :class:`~ddl_gym.sim.alloc.Allocation` only: it is set at
start and never re-rated.

**What a job holds.** ``start(job, placement)`` takes GPU ids (a rigid gang, today's form) or an
:class:`~ddl_gym.sim.alloc.Allocation` (pipeline stage mapping, typed workers / parameter servers
with CPU, memory, bandwidth ...). The resource ledger tracks GPUs by identity
(``gpu_owner``, ``free_per_server``) and every other resource as an amount per server
(``used``, against ``ClusterSpec.capacity``).

**Optional capabilities** (off unless the policy declares them in ``policy.capabilities``; the
native driver :func:`run_policy` switches them on, so a default run cannot use them by accident):

* ``"reject"`` — :meth:`Simulator.reject`: a queued job leaves unserved (state REJECTED).
* ``"preempt"`` — :meth:`Simulator.preempt`: a running job's progress is banked, it releases
  everything and re-enters the queue; a restart overhead (seconds) is charged on its next start.
* ``"resize"`` — :meth:`Simulator.resize`: a running (elastic) job moves to another allocation,
  progress banked.

Scheduling happens between events. A driver (the native loop :func:`run_policy`, or the Gymnasium
env) asks the policy for decisions, applies them with :meth:`Simulator.start`, then calls
:meth:`Simulator.advance`, which jumps to the next event time and processes every event at that
time (completions first, then arrivals, then wake-ups).

With ``debug=True`` the invariants are checked after every event batch and every action:
no GPU over-committed and no resource over capacity on any server, gang start/stop (all of a job's
GPUs held while it runs, a rigid job exactly ``G_j``), no start before arrival, a queued, preempted
or rejected job holds nothing, iterations conserved (``0 <= remaining <= F`` plus restart overheads,
exactly ``0`` at completion, also across preemptions), every job's work done non-decreasing, a job
that kept one holding finishing no earlier than arrival + ``F·τ_ideal``, and time non-decreasing.
Violations raise :class:`InvariantError`. Inside :func:`ddl_gym.sim.checks.invariant_checks` every
engine is built in debug mode and its checks are counted (self-driving policies included).

**Zero-time iterations are refused**: a time per iteration from the rate model that is not positive
and finite (``0``: a job with no compute and no communication, which has no defined slowdown;
``inf``/NaN: a job that would never end) raises a :class:`ConfigError` naming the job, its model and
the rate model when the job is started (in every mode, not only debug).

**Compiled build** (optional): ``scripts/build_native.py`` compiles this very file with mypyc (the
same code and float arithmetic, so bit-identical results; the golden tests run both builds).
:class:`Simulator` and :func:`run_policy` are that build while its sha256 stamp matches this source,
else plain Python (:data:`BUILD` says which; ``DDL_GYM_PURE_PYTHON=1`` forces plain Python;
:class:`PurePythonSimulator` is always the plain one). Compiled classes keep their attributes in
slots: set only the attributes the engine defines (subclasses may add their own), and
``Simulator()`` without arguments is the bare shell that :meth:`Simulator.fork` and unpickling fill.
"""

from __future__ import annotations

import bisect
import heapq
import math
from array import array
from collections.abc import Callable, Iterator
from typing import Any, Protocol

import numpy as np

import ddl_gym.sim.checks as _checks
from ddl_gym.sim.alloc import Allocation
from ddl_gym.sim.compact import GpuIdTable, filled_column, float_column, int_column
from ddl_gym.sim.jobqueue import JobQueue
from ddl_gym.sim.metrics import SimResult
from ddl_gym.sim.model import RIGID_ARCHITECTURES, ClusterSpec, ConfigError, Workload
from ddl_gym.sim.perf import PerformanceModel, RARContentionModel

PENDING, QUEUED, RUNNING, DONE, REJECTED = 0, 1, 2, 3, 4
_STATE_NAMES = ("pending (not arrived)", "queued", "running", "done", "rejected")

#: Capabilities a policy may declare (``policy.capabilities``) to use the matching engine actions.
CAPABILITIES: frozenset[str] = frozenset({"reject", "preempt", "resize"})
_TOLERANCE = 1e-9  # slack on non-GPU capacity checks (float amounts)
_HEAP_SLACK = 256  # stale completion entries tolerated beyond twice the live ones (Simulator._set_rates)
_TAU_MEMO_SIZE = 1 << 14  # (job or rate class, servers, p) -> τ entries kept (Simulator._tau_memo; about 2 MB)


# <shared> (the compiled build imports these from this module: one class for both builds)
class SimulationError(RuntimeError):
    """A driver or policy asked the simulator for something impossible."""


class InvariantError(AssertionError):
    """A simulator invariant was violated (raised in debug mode only)."""
# </shared>


class Simulator:
    """The cluster simulator. See the module docstring for semantics.

    Args:
        cluster: servers and links.
        workload: the jobs (sorted by arrival).
        model: performance model (default: :class:`RARContentionModel`).
        debug: check invariants after every event batch and start.
        record_timeline: keep ``(time, job, τ)`` for every rate change (for Gantt plots).

    Public read-only state for policies (do not mutate): ``now``, ``queue`` (queued job indices
    in arrival order: a read-only list-like :class:`~ddl_gym.sim.jobqueue.JobQueue` whose head is
    taken in O(1)), ``running`` (dict of running jobs in start order), ``free_per_server``,
    ``gpu_owner`` (job index per GPU, ``-1`` free), ``split_count`` (split jobs per server),
    ``num_free``, ``num_queued`` (``len(queue)``), ``state``, ``used`` (non-GPU resource amounts in
    use per server; its GPU column stays 0, see :meth:`free_resources`), ``capacity``, ``allocation(job)``, ``preemptions``,
    ``placement[job]`` (GPU ids held, else of the last holding), ``finished_since(k)`` (the jobs that
    finished after the first ``k``, in completion order). Per-job float columns
    (``remaining``, ``tau``, ``start_time``, ``finish_time``) are ``array('d')`` sequences, not lists
    (memory: 8 bytes per job each); a finished job's ``servers`` entry is released to ``()``.
    ``capabilities`` is the set of optional actions enabled (see the module docstring).
    """

    def __init__(
        self,
        cluster: ClusterSpec = None,  # type: ignore[assignment]  # None only for a bare instance (below)
        workload: Workload = None,  # type: ignore[assignment]
        model: PerformanceModel | None = None,
        *,
        debug: bool = False,
        record_timeline: bool = False,
    ) -> None:
        if cluster is None and workload is None:
            # A bare instance, its state set afterwards (fork, unpickling). The compiled build's
            # ``Simulator.__new__`` runs ``__init__`` without arguments, so this must not fail.
            return
        if cluster is None or workload is None:
            raise ConfigError("Simulator needs a cluster and a workload")
        workload.check_fits(cluster)
        self.cluster = cluster
        self.workload = workload
        self.model = model if model is not None else RARContentionModel()
        self.bound = self.model.bind(cluster, workload)
        self._contention_free = bool(getattr(self.bound, "contention_free", False))
        # ``checks.invariant_checks()`` switches every engine built inside it to debug mode.
        self.debug = bool(debug) or _checks.forced()
        self.capabilities: frozenset[str] = frozenset()
        n = workload.num_jobs
        self._n = n
        self.gpu_server = cluster.gpu_server()
        self._gpu_server_list: list[int] = self.gpu_server.tolist()
        self.server_first_gpu = cluster.server_first_gpu()
        self.server_gpus = np.asarray(cluster.gpus_per_server, dtype=np.int64)
        self._server_first_list: list[int] = self.server_first_gpu.tolist()
        self._server_gpus_list: list[int] = list(cluster.gpus_per_server)
        # Per-job scalars live in array columns (8 B each, same float64 values; a list of distinct
        # Python floats costs 32 B per job), so 10^6 jobs fit in a few hundred MB. ``_gpus`` stays a
        # list: its small ints are shared objects, and list indexing is the faster read.
        self._arrival = float_column(workload.arrival)
        self._gpus: list[int] = workload.gpus.tolist()
        self._iterations = int_column(workload.iterations)
        self._weight = float_column(workload.weight)
        self._max_server_gpus = cluster.max_server_gpus
        # Architecture per job only when some job is not a rigid all-reduce gang (saves 8 B/job otherwise).
        self._elastic: frozenset[int] = frozenset(
            np.flatnonzero(~np.isin(workload.arch, list(RIGID_ARCHITECTURES))).tolist()) if workload.arch.any() else frozenset()
        # Non-GPU resource ledger (column 0, GPUs, is tracked by identity in gpu_owner/free_per_server).
        self.capacity = cluster.capacity_matrix()
        self.used = np.zeros_like(self.capacity)
        self._multi_resource = cluster.num_resources > 1

        self.now = 0.0 if n == 0 else self._arrival[0]  # the clock starts at the first arrival
        self.queue = JobQueue()
        self.num_queued = 0  # len(queue) as a plain attribute: the env and run_policy read it per step/event
        self.running: dict[int, None] = {}
        self.state = [PENDING] * n
        self.free_per_server = self.server_gpus.copy()
        self.num_free = cluster.num_gpus
        self.gpu_owner = np.full(cluster.num_gpus, -1, dtype=np.int64)
        # Free GPU ids per server, ascending: a Python mirror of gpu_owner < 0 for fast placement queries.
        self._free_ids: list[list[int]] = [list(range(f, f + c)) for f, c in
                                           zip(self._server_first_list, self._server_gpus_list)]
        # Servers by free-GPU count (entry c: servers with exactly c free GPUs, ascending), for placement
        # rules on large clusters; built on first use (servers_by_free) and kept up to date from then on.
        self._by_free: list[list[int]] | None = None
        self.split_count = np.zeros(cluster.num_servers, dtype=np.int64)
        # Estimated GPU-seconds assigned to each GPU so far (list-scheduling load, LS / LWF rules), read
        # through ``gpu_assigned_work``: starts only queue their additions, applied in order on the next
        # read (or every _WORK_BATCH starts), as most policies never read it.
        self._assigned_work = np.zeros(cluster.num_gpus, dtype=np.float64)
        self._pending_work: list[tuple[Any, float]] = []  # (GPU id or ids, GPU-seconds added to each)
        self._split_jobs: list[set[int]] = [set() for _ in range(cluster.num_servers)]
        self._split_list: list[int] = [0] * cluster.num_servers  # python mirror of split_count (fast scalar reads)

        self.remaining = float_column(workload.iterations)  # iterations left (banked at `last`)
        self.tau = filled_column("d", math.inf, n)  # current per-iteration time
        self._last = filled_column("d", 0.0, n)  # time `remaining` was last banked
        self._version = [0] * n
        self.contention = [0] * n  # p_j
        # Running jobs with p_j > 0 and the sum of their p_j, kept up to date for observers (the env).
        self.contended_jobs = 0
        self.contention_sum = 0
        # Servers of a running (or preempted) job; a finished job's entry is released to () and only
        # its span (number of servers, for the records) is kept.
        self.servers: list[tuple[int, ...]] = [()] * n
        self._server_counts: list[tuple[int, ...]] = [()] * n  # GPUs of the job on each of its servers
        self._span = filled_column("i", 0, n)  # servers of the job's latest holding
        # GPU ids: a numpy array per job only while it holds them (``_held``); every holding is also
        # appended to one flat log (``_gpu_start``/``_gpu_count`` point at the latest, count -1 = never),
        # which ``placement`` and the records read (a numpy array per finished job cost > 100 B).
        self._held: list[Any] = [None] * n  # ndarray of GPU ids while held, else None
        self._gpu_log = array("i")
        self._gpu_start = filled_column("q", 0, n)
        self._gpu_count = filled_column("i", -1, n)
        self.start_time = filled_column("d", math.nan, n)
        self.finish_time = filled_column("d", math.nan, n)
        self._ideal_tau = filled_column("d", math.nan, n)
        self._nominal_tau = filled_column("d", math.nan, n)  # nominal_iteration_time, filled on first use

        self._heap: list[tuple[float, int, int, int]] = []  # (time, seq, job, version)
        # Every re-rate pushes a new completion and leaves the old one stale. Past this length the
        # heap is compacted to its live entries (see _set_rates), so pops stay O(log running jobs).
        self._heap_limit = _HEAP_SLACK
        # τ(job, servers, p) of recent re-rates: a split job's p goes up and down among a few values
        # while it runs. Bounded (cleared when full); τ is a pure function of the key, so forks share it.
        # Keyed by one int, ``(who · (servers + 1) + n_servers) · (GPUs + 2) + p``, unique because a job spans
        # at most every server and p (split jobs holding GPUs on one server, plus one) never exceeds GPUs + 1.
        # ``who`` is the job's rate class where the bound model has them (jobs with bit-identical per-job
        # constants have the same τ: a few dozen classes instead of several keys per job), else the job.
        self._tau_memo: dict[int, float] = {}
        self._memo_servers: int = cluster.num_servers + 1
        self._memo_p: int = cluster.num_gpus + 2
        classes = None if self._contention_free else getattr(self.bound, "rate_classes", None)
        self._rate_class: list[int] | None = classes() if classes is not None else None
        # Scratch of a re-rate: the new p of each job being re-rated, -1 for every other job (restored by
        # _rerate_to). A list indexed by job, not a dict built per re-rate (8 B a job).
        self._new_p: list[int] = [-1] * n
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
        self.num_rejected = 0
        # Sparse per-job state, only for jobs that use allocations or capabilities (no cost otherwise).
        self._alloc: dict[int, Allocation] = {}  # jobs started with an Allocation
        self._amounts: dict[int, np.ndarray] = {}  # non-GPU amounts held, rows aligned with servers[job]
        self.preemptions: dict[int, int] = {}
        self.resizes: dict[int, int] = {}
        self._pending_overhead_s: dict[int, float] = {}  # restart overhead charged at the next start
        self._overhead_iters: dict[int, float] = {}  # iterations added by restart overheads so far
        self._segment_start: dict[int, float] = {}  # start of the current holding (preempted/resized jobs)
        self._banked_gpu_s: dict[int, float] = {}  # GPU-seconds of earlier holdings
        self._banked_resource_s: dict[int, np.ndarray] = {}  # resource-seconds of earlier holdings
        self._banked_busy_gpu_s: dict[int, float] = {}  # compute GPU-seconds (contention-free models)
        self._last_amounts: dict[int, np.ndarray] = {}  # non-GPU amounts of a job's last holding (records)
        self._finish_order = array("i")  # finished jobs in completion order (see finished_since; 4 B a job)
        # Debug checks' memory: the clock, each started job's work done, completions already checked.
        self._checked_now = -math.inf
        self._checked_done: dict[int, float] = {}
        self._checked_finished = 0
        self._admit_arrivals()

    # ------------------------------------------------------------------ queries
    @property
    def done(self) -> bool:
        """Every job finished or was rejected."""
        return self.num_finished + self.num_rejected == self._n

    @property
    def placement(self) -> _Placements:
        """GPU ids per job as numpy arrays: what it holds if running, else its last holding (``None``: never started)."""
        return _Placements(self)

    @property
    def jobs_in_system(self) -> int:
        return self.num_arrived - self.num_finished - self.num_rejected

    def finished_since(self, count: int) -> list[int]:
        """The jobs that finished after the first ``count`` to finish, in completion order (so a policy
        that remembers ``num_finished`` learns which jobs ended, and which GPUs they freed, without
        scanning the cluster)."""
        return self._finish_order[count:].tolist()

    @property
    def rate_changes(self) -> int:
        """Rates set so far: one per start and one per re-rate of a contended neighbour. Each banks a
        job's progress and pushes its completion, so this counts the engine's work beyond the events."""
        return self._seq

    @property
    def has_future_arrivals(self) -> bool:
        return self._next_arrival < self._n

    def next_event_time(self) -> float:
        """Time of the next completion, arrival or wake-up (``inf`` if none)."""
        self._drop_stale()
        t = self._heap[0][0] if self._heap else math.inf
        if self._next_arrival < self._n:
            arrival = self._arrival[self._next_arrival]
            if arrival < t:  # a comparison, not a call of min(): this runs at every event
                t = arrival
        if self._wakeups and self._wakeups[0] < t:
            t = self._wakeups[0]
        return t

    def free_gpu_ids(self, server: int | None = None) -> np.ndarray:
        """Free global GPU indices (of one server, or of the whole cluster), ascending."""
        if server is None:
            return np.nonzero(self.gpu_owner < 0)[0]
        return np.array(self._free_ids[server], dtype=np.int64)

    def free_gpu_list(self, server: int) -> list[int]:
        """Free GPU ids of ``server``, ascending, as the engine's own Python list: read it, never mutate it."""
        return self._free_ids[server]

    def split_count_list(self) -> list[int]:
        """``split_count`` as the engine's own Python list (fast scalar reads): read it, never mutate it."""
        return self._split_list

    def servers_by_free(self) -> list[list[int]]:
        """Servers grouped by free-GPU count: entry ``c`` lists the servers with exactly ``c`` free GPUs, ascending.

        The engine's own lists (read them, never mutate them): built on the first call, then kept up to
        date at every start and release (two binary searches per server touched), so that placement
        rules on clusters of thousands of servers find a best fit or the emptiest servers without a
        pass over every server.
        """
        if self._by_free is None:
            by_free: list[list[int]] = [[] for _ in range(self._max_server_gpus + 1)]
            for server, n_free in enumerate(self.free_per_server.tolist()):
                by_free[n_free].append(server)
            self._by_free = by_free
        return self._by_free

    def _rebucket(self, server: int, old: int, new: int) -> None:
        """Move ``server`` between free-count groups (only once :meth:`servers_by_free` has built them)."""
        by_free = self._by_free
        group = by_free[old]  # type: ignore[index]
        del group[bisect.bisect_left(group, server)]
        bisect.insort(by_free[new], server)  # type: ignore[index]

    def remaining_iterations(self, job: int) -> float:
        """Iterations ``job`` still has to run, as of ``now``."""
        if self.state[job] == RUNNING:
            return max(0.0, self.remaining[job] - (self.now - self._last[job]) / self.tau[job])
        return self.remaining[job]

    def running_since(self, job: int) -> float:
        """When ``job``'s current holding began: its start, or its last restart after a preemption or resize."""
        return self._segment_start.get(job, self.start_time[job])

    def attained_gpu_seconds(self, job: int) -> float:
        """Tiresias's 2D attained service of ``job`` as of ``now``: GPUs × seconds held over all its holdings
        (a preempted job keeps what it attained; restart overhead counts, as the GPUs are held); 0 for a
        job that never ran; a finished job's total service."""
        banked = self._banked_gpu_s.get(job, 0.0)
        state = self.state[job]
        if state == RUNNING:
            return banked + self._held[job].size * (self.now - self._segment_start.get(job, self.start_time[job]))
        if state == DONE:
            since = self._segment_start.get(job, self.start_time[job])
            last = self.placement[job]
            return banked + (last.size if last is not None else self._gpus[job]) * (self.finish_time[job] - since)
        return banked

    def nominal_iteration_time(self, job: int) -> float:
        """τ of ``job`` on its most consolidated placement with no contention (planning estimate).

        Contention-free rate models supply their own estimate (e.g. A-SRPT's ``α̃_min``).
        """
        tau = self._nominal_tau[job]
        if tau == tau:  # computed before: a pure function of the job (every start asks again)
            return tau
        if self._contention_free:
            tau = self.bound.nominal_iteration_time(job)
        else:
            g = self._gpus[job]
            n_servers = -(-g // self._max_server_gpus)
            tau = self._tau(job, n_servers, 1 if n_servers > 1 else 0)
        self._nominal_tau[job] = tau
        return tau

    def nominal_iteration_times(self) -> np.ndarray:
        """:meth:`nominal_iteration_time` of every job (float64 array, the same values) through the rate
        model's ``iteration_times`` (every env reset ranks all jobs by it)."""
        n = self._n
        cached = np.frombuffer(self._nominal_tau, dtype=np.float64) if n else np.zeros(0)
        if n and not np.isnan(cached).any():
            return cached.copy()
        if self._contention_free:
            return np.array([self.nominal_iteration_time(j) for j in range(n)], dtype=np.float64)
        gpus = np.asarray(self._gpus, dtype=np.int64)
        n_servers = -(-gpus // self._max_server_gpus)
        tau = np.asarray(self.bound.iteration_times(np.arange(n), n_servers, (n_servers > 1).astype(np.int64)),
                         dtype=np.float64)
        self._nominal_tau[:] = float_column(tau)
        return tau

    def estimate_iteration_time(self, job: int, placement: np.ndarray | list[int] | Allocation) -> float:
        """τ that ``job`` would have right now on ``placement`` (others' slowdown not included)."""
        if self._contention_free:
            alloc = placement if isinstance(placement, Allocation) else Allocation.rigid(placement)
            return self.bound.allocation_time(job, alloc)
        gpu_ids = placement.gpu_ids if isinstance(placement, Allocation) else placement
        servers = np.unique(self.gpu_server[np.asarray(gpu_ids, dtype=np.int64)])
        if servers.size <= 1:
            return self._tau(job, 1, 0)
        return self._tau(job, int(servers.size), int(self.split_count[servers].max()) + 1)

    def _tau(self, job: int, n_servers: int, p: int) -> float:
        """``bound.iteration_time(job, n_servers, p)`` through the memo (see ``_tau_memo``)."""
        classes = self._rate_class
        key = ((job if classes is None else classes[job]) * self._memo_servers + n_servers) * self._memo_p + p
        memo = self._tau_memo
        rate = memo.get(key)
        if rate is None:
            if len(memo) >= _TAU_MEMO_SIZE:
                memo.clear()
            rate = memo[key] = self.bound.iteration_time(job, n_servers, p)
        return rate

    def allocation(self, job: int) -> Allocation | None:
        """What ``job`` holds now (``None`` if it holds nothing)."""
        if self.state[job] != RUNNING:
            return None
        return self._alloc.get(job) or Allocation.rigid(self._held[job])

    def free_resources(self) -> np.ndarray:
        """Free amount of every resource per server, shape ``(servers, resources)`` (GPU column = free GPUs)."""
        free = self.capacity - self.used
        free[:, 0] = self.free_per_server
        return free

    def fits(self, alloc: Allocation) -> bool:
        """Whether ``alloc``'s resources are free right now (GPU ids, if given, must be free)."""
        servers, use = alloc.server_use(self.cluster)
        if alloc.gpu_ids is not None and alloc.gpu_ids.size and (self.gpu_owner[alloc.gpu_ids] >= 0).any():
            return False
        if servers and np.any(use[:, 0] > self.free_per_server[list(servers)]):
            return False
        if self._multi_resource and servers:
            rows = list(servers)
            return bool(np.all(self.used[rows, 1:] + use[:, 1:] <= self.capacity[rows, 1:] + _TOLERANCE))
        return True

    # ------------------------------------------------------------------ actions
    def start(self, job: int, placement: np.ndarray | list[int] | Allocation) -> None:
        """Gang-start queued ``job`` on ``placement``: free GPU ids (a rigid gang of exactly ``G_j``
        distinct GPUs) or an :class:`~ddl_gym.sim.alloc.Allocation` (stage mapping, typed
        workers / parameter servers, non-GPU resources). All of it is taken at once or not at all.
        """
        if not 0 <= job < self._n or self.state[job] != QUEUED:
            raise SimulationError(f"job {job} cannot start: it is not in the queue (state {self._state_name(job)})")
        if isinstance(placement, Allocation):
            ids, servers, counts, amounts = self._resolve_allocation(job, placement)
        else:
            ids, servers, counts = self._resolve_gpu_ids(job, placement)
            amounts = None
        self._occupy(job, ids, servers, counts, placement if isinstance(placement, Allocation) else None, amounts)
        self.queue.remove(job)  # O(1) at the head (see JobQueue)
        self.num_queued -= 1
        self.running[job] = None
        self.state[job] = RUNNING
        if self.start_time[job] != self.start_time[job]:  # NaN: first start (a restart keeps it)
            self.start_time[job] = self.now
        else:
            self._segment_start[job] = self.now
        self._last[job] = self.now
        self.decisions += 1
        self._rate_new_placement(job, servers)
        if self.debug:
            self.check_invariants()

    def _resolve_gpu_ids(self, job: int, gpu_ids: np.ndarray | list[int]) -> tuple[np.ndarray, tuple[int, ...], tuple[int, ...]]:
        """Validate a plain GPU-id placement; returns ``(ids, servers, GPUs per server)``."""
        ids = np.asarray(gpu_ids, dtype=np.int64).ravel()
        g = self._gpus[job]
        if ids.size != g and job not in self._elastic:
            raise SimulationError(f"job {job} needs {g} GPUs, placement has {ids.size}")
        id_list = ids.tolist()
        owner = self.gpu_owner
        gpu_server = self._gpu_server_list
        if len(id_list) == 1:  # the common case, kept free of numpy fancy indexing
            gpu = id_list[0]
            if not 0 <= gpu < owner.size:
                raise SimulationError(f"job {job}: GPU index out of range in {id_list}")
            if owner[gpu] >= 0:
                raise SimulationError(f"job {job}: placement {id_list} uses busy or repeated GPUs")
            return ids, (gpu_server[gpu],), (1,)
        if not id_list:
            raise SimulationError(f"job {job}: an empty GPU placement needs an Allocation with its other resources")
        first = id_list[0]
        if 0 <= first < owner.size:
            server = gpu_server[first]
            if self._free_ids[server][: len(id_list)] == id_list:
                # The lowest free GPUs of one server (what best-fit rules take): free and distinct by
                # construction of the ascending free-id list, so one list comparison validates them all.
                return ids, (server,), (len(id_list),)
        if min(id_list) < 0 or max(id_list) >= owner.size:
            raise SimulationError(f"job {job}: GPU index out of range in {id_list}")
        free_ids = self._free_ids  # membership in the short per-server lists beats numpy fancy indexing
        busy = False
        for gpu in id_list:
            if gpu not in free_ids[gpu_server[gpu]]:
                busy = True
                break
        if busy or len(set(id_list)) != len(id_list):
            raise SimulationError(f"job {job}: placement {id_list} uses busy or repeated GPUs")
        per_server: dict[int, int] = {}
        for i in id_list:
            server = gpu_server[i]
            per_server[server] = per_server.get(server, 0) + 1
        servers = tuple(sorted(per_server))
        return ids, servers, tuple(map(per_server.__getitem__, servers))

    def _resolve_allocation(self, job: int, alloc: Allocation
                            ) -> tuple[np.ndarray, tuple[int, ...], tuple[int, ...], np.ndarray | None]:
        """Validate an Allocation against the free resources; pick its GPUs if it left them to us.

        Returns ``(GPU ids, servers, GPUs per server, non-GPU amounts per server or None)``. With
        non-GPU amounts, ``servers`` includes servers where the job holds no GPU (e.g. a CPU-only
        parameter server) and the amounts' rows are aligned with it.
        """
        if alloc.use is None and alloc.gpu_ids is not None and alloc.gpu_ids.size:
            # GPUs only (e.g. a pipeline stage mapping): the GPU ids say everything; deriving the
            # per-server use first (np.unique per start) would only be thrown away below.
            ids, servers, counts = self._resolve_gpu_ids(job, alloc.gpu_ids)
            return ids, servers, counts, None
        try:
            servers_use, use = alloc.server_use(self.cluster)
        except ConfigError as exc:
            raise SimulationError(f"job {job}: {exc}") from None
        if use.ndim != 2 or use.shape[1] != self.cluster.num_resources:
            raise SimulationError(f"job {job}: allocation has {use.shape[1:]} resource columns, the cluster "
                                  f"has {self.cluster.num_resources} {self.cluster.resources}")
        if alloc.gpu_ids is None:  # typed allocation: the lowest-index free GPUs of each server
            picked = []
            for server, n in zip(servers_use, use[:, 0].tolist()):
                free = self.free_gpu_ids(server)
                if free.size < n:
                    raise SimulationError(f"job {job}: server {server} has {free.size} free GPUs, the allocation needs {int(n)}")
                picked.append(free[: int(n)])
            ids = np.concatenate(picked) if picked else np.zeros(0, dtype=np.int64)
        else:
            ids = alloc.gpu_ids
            try:
                alloc.check_gpu_column(self.cluster)
            except ConfigError as exc:
                raise SimulationError(f"job {job}: {exc}") from None
        if ids.size:
            ids, servers, counts = self._resolve_gpu_ids(job, ids)
        elif job in self._elastic:
            servers, counts = (), ()
        else:
            raise SimulationError(f"job {job} needs {self._gpus[job]} GPUs, the allocation has none")
        if not use[:, 1:].any():
            return ids, servers, counts, None
        rows = list(servers_use)
        fits = np.all(self.used[rows, 1:] + use[:, 1:] <= self.capacity[rows, 1:] + _TOLERANCE, axis=1)
        if not fits.all():
            bad = [s for s, ok in zip(rows, fits.tolist()) if not ok]
            raise SimulationError(f"job {job}: allocation exceeds the free non-GPU resources of server(s) {bad}")
        amounts = np.ascontiguousarray(use[:, 1:], dtype=np.float64)
        amounts.setflags(write=False)
        return ids, tuple(servers_use), tuple(int(round(c)) for c in use[:, 0].tolist()), amounts

    def _occupy(self, job: int, ids: np.ndarray, servers: tuple[int, ...], counts: tuple[int, ...],
                alloc: Allocation | None, amounts: np.ndarray | None) -> None:
        """Take ``ids`` (and non-GPU ``amounts``) for ``job``: the ledger side of a start or resize."""
        g = int(ids.size)
        log = self._gpu_log  # every holding is logged (placement view, records)
        self._gpu_start[job] = len(log)
        self._gpu_count[job] = g
        if g == 1 and amounts is None:
            gpu = int(ids[0])
            self.free_per_server[servers[0]] -= 1
            self.gpu_owner[gpu] = job
            server_ids = self._free_ids[servers[0]]
            server_ids.remove(gpu)
            if self._by_free is not None:
                self._rebucket(servers[0], len(server_ids) + 1, len(server_ids))
            self._queue_work(gpu, self._iterations[job] * self.nominal_iteration_time(job))
            log.append(gpu)
        elif g:
            free = self.free_per_server
            for server, count in zip(servers, counts):  # scalar updates: a few servers, no fancy indexing
                free[server] -= count
            self.gpu_owner[ids] = job
            free_ids, gpu_server = self._free_ids, self._gpu_server_list
            id_list = ids.tolist()
            server_ids = free_ids[servers[0]]
            if len(servers) == 1 and server_ids[:g] == id_list:  # a server's lowest free GPUs: one slice
                del server_ids[:g]
            else:
                for gpu in id_list:
                    free_ids[gpu_server[gpu]].remove(gpu)
            self._queue_work(id_list, self._iterations[job] * self.nominal_iteration_time(job))
            log.extend(id_list)
            if self._by_free is not None:
                for server, count in zip(servers, counts):
                    left = len(free_ids[server])
                    self._rebucket(server, left + count, left)
        if amounts is not None:
            self.used[list(servers), 1:] += amounts
            self._amounts[job] = amounts
        if alloc is not None:
            self._alloc[job] = alloc if alloc.gpu_ids is not None else alloc.with_gpu_ids(ids)
        self._server_counts[job] = counts
        self.num_free -= g
        self.servers[job] = servers
        self._span[job] = len(servers)
        self._held[job] = ids

    @property
    def gpu_assigned_work(self) -> np.ndarray:
        """Estimated GPU-seconds assigned to each GPU so far (``F_j·τ̂_j`` per GPU of every start);
        the engine's own array: read it, never mutate it."""
        if self._pending_work:
            self._apply_work()
        return self._assigned_work

    def _queue_work(self, gpus: int | list[int], added: float) -> None:
        self._pending_work.append((gpus, added))
        if len(self._pending_work) >= _WORK_BATCH:
            self._apply_work()

    def _apply_work(self) -> None:
        """Add the queued work, in start order: per GPU the same float64 additions as adding at each start."""
        pending, work = self._pending_work, self._assigned_work
        if len(pending) == 1:  # e.g. list scheduling, which reads the work before every start
            gpus, added = pending[0]
            if type(gpus) is int:
                work[gpus] += added
            elif len(gpus) < 8:  # scalar writes beat building an index array for a few GPUs
                for gpu in gpus:
                    work[gpu] += added
            else:
                work[np.array(gpus, dtype=np.int64)] += added  # distinct ids: the fancy-indexed add is exact
        else:
            index: list[int] = []
            values: list[float] = []
            for gpus, added in pending:
                if type(gpus) is int:
                    index.append(gpus)
                    values.append(added)
                else:
                    index += gpus
                    values += [added] * len(gpus)
            np.add.at(work, np.array(index, dtype=np.int64), np.array(values, dtype=np.float64))  # in order
        pending.clear()

    def _rate_new_placement(self, job: int, servers: tuple[int, ...]) -> None:
        """Set ``job``'s rate after it took a placement (and re-rate contended neighbours)."""
        gpu_servers = self._gpu_servers_of(job) if self._amounts else servers
        split = len(gpu_servers) > 1
        if split:
            split_count = self.split_count
            for s in gpu_servers:
                self._split_jobs[s].add(job)
                self._split_list[s] += 1
                split_count[s] += 1
        if self._contention_free:
            tau = self.bound.allocation_time(job, self._alloc.get(job) or Allocation.rigid(self._held[job]))
            self._ideal_tau[job] = tau
            self._charge_restart(job, tau)
            self._set_rate(job, tau)
        elif split:
            self._ideal_tau[job] = self._tau(job, len(gpu_servers), 1)
            self._charge_restart(job, self._ideal_tau[job])
            if self._amounts or self._last_amounts:
                self._rerate(self._neighbours(gpu_servers))
            else:
                self._rerate_to(self._raised_neighbours(gpu_servers))
        else:
            tau = self._tau(job, 1, 0)
            self._ideal_tau[job] = tau
            self._charge_restart(job, tau)
            self._set_rate(job, tau)

    def _gpu_servers_of(self, job: int) -> tuple[int, ...]:
        """Servers on which ``job`` holds GPUs (differs from ``servers`` only for CPU-only holdings)."""
        if job in self._amounts:
            return tuple(s for s, c in zip(self.servers[job], self._server_counts[job]) if c)
        return self.servers[job]

    def _charge_restart(self, job: int, tau: float) -> None:
        """Add a preempted job's restart overhead as ``overhead_s / τ`` extra iterations (τ uncontended)."""
        if self._pending_overhead_s:
            overhead = self._pending_overhead_s.pop(job, 0.0)
            if overhead > 0.0:
                extra = overhead / tau
                self.remaining[job] += extra
                self._overhead_iters[job] = self._overhead_iters.get(job, 0.0) + extra

    # ------------------------------------------------------------------ optional capabilities
    def _require(self, capability: str, job: int) -> None:
        if capability not in self.capabilities:
            raise SimulationError(
                f"job {job}: {capability} is an optional capability the policy did not declare "
                f"(set capabilities = {{'{capability}'}} on the policy; enabled: {sorted(self.capabilities) or 'none'})"
            )

    def reject(self, job: int) -> None:
        """A queued job leaves the system unserved (capability ``"reject"``; e.g. SMD admission)."""
        self._require("reject", job)
        if not 0 <= job < self._n or self.state[job] != QUEUED:
            raise SimulationError(f"job {job} cannot be rejected: it is not in the queue (state {self._state_name(job)})")
        self.queue.remove(job)
        self.num_queued -= 1
        self.state[job] = REJECTED
        self.num_rejected += 1
        self._weight_in_system -= self._weight[job]
        self.decisions += 1
        if self.debug:
            self.check_invariants()

    def preempt(self, job: int, overhead_s: float = 0.0) -> None:
        """Stop a running job, bank its progress and put it back in the queue (capability ``"preempt"``).

        Args:
            job: a running job.
            overhead_s: restart cost in seconds, charged when the job next starts as
                ``overhead_s / τ`` extra iterations (τ = its uncontended per-iteration time there).
        """
        self._require("preempt", job)
        if not 0 <= job < self._n or self.state[job] != RUNNING:
            raise SimulationError(f"job {job} cannot be preempted: it is not running (state {self._state_name(job)})")
        if not (overhead_s >= 0.0 and math.isfinite(overhead_s)):
            raise SimulationError(f"job {job}: preemption overhead must be a finite number >= 0, got {overhead_s!r}")
        self._bank_progress(job)
        self._bank_holding(job)
        servers = self._release(job)
        self.state[job] = QUEUED
        self.queue.insort(job)  # the queue stays in arrival (= index) order
        self.num_queued += 1
        self.preemptions[job] = self.preemptions.get(job, 0) + 1
        if overhead_s > 0.0:
            self._pending_overhead_s[job] = self._pending_overhead_s.get(job, 0.0) + overhead_s
        if self.timeline is not None:
            self.timeline.append((self.now, job, math.inf))
        if servers is not None:
            self._rerate(self._neighbours(servers))
        if self.debug:
            self.check_invariants()

    def resize(self, job: int, placement: np.ndarray | list[int] | Allocation) -> None:
        """Move a running job to another allocation, progress banked (capability ``"resize"``)."""
        self._require("resize", job)
        if not 0 <= job < self._n or self.state[job] != RUNNING:
            raise SimulationError(f"job {job} cannot be resized: it is not running (state {self._state_name(job)})")
        self._bank_progress(job)
        self._bank_holding(job)
        before = (self._held[job], self.servers[job], self._server_counts[job], self._alloc.pop(job, None),
                  self._amounts.get(job))
        old = self._release(job, keep_running=True)
        try:
            if isinstance(placement, Allocation):
                ids, servers, counts, amounts = self._resolve_allocation(job, placement)
            else:
                ids, servers, counts = self._resolve_gpu_ids(job, placement)
                amounts = None
        except SimulationError:  # keep running where it was (progress stays banked)
            self._occupy(job, before[0], before[1], before[2], before[3], before[4])
            self._segment_start[job] = self.now
            self._rate_new_placement(job, before[1])
            raise
        self._occupy(job, ids, servers, counts, placement if isinstance(placement, Allocation) else None, amounts)
        self._segment_start[job] = self.now
        self.resizes[job] = self.resizes.get(job, 0) + 1
        self.decisions += 1
        if old is not None:
            self._rerate(self._neighbours(old))
        self._rate_new_placement(job, servers)
        if self.debug:
            self.check_invariants()

    def _bank_progress(self, job: int) -> None:
        """Bank ``job``'s progress up to now and invalidate its pending completion event."""
        tau = self.tau[job]
        left = self.remaining[job] - (self.now - self._last[job]) / tau
        self.remaining[job] = left if left > 0.0 else 0.0
        self._last[job] = self.now
        self.tau[job] = math.inf
        self._version[job] += 1

    def _bank_holding(self, job: int) -> None:
        """Accumulate the GPU-, resource- and compute-seconds of ``job``'s current holding (before it ends early)."""
        elapsed = self.now - self._segment_start.get(job, self.start_time[job])
        self._banked_gpu_s[job] = self._banked_gpu_s.get(job, 0.0) + self._held[job].size * elapsed
        if job in self._amounts:
            self._banked_resource_s[job] = self._banked_resource_s.get(job, 0.0) + self._amounts[job].sum(axis=0) * elapsed
        self._bank_busy(job)

    def _bank_busy(self, job: int) -> None:
        """Compute GPU-seconds of the current holding, for models that report them (compute utilisation)."""
        busy = getattr(self.bound, "busy_gpu_seconds_per_iteration", None) if self._contention_free else None
        if busy is None:
            return
        alloc = self._alloc.get(job) or Allocation.rigid(self._held[job])
        elapsed = self.now - self._segment_start.get(job, self.start_time[job])
        tau = self._ideal_tau[job]
        self._banked_busy_gpu_s[job] = self._banked_busy_gpu_s.get(job, 0.0) + busy(job, alloc) * (elapsed / tau)

    def _release(self, job: int, keep_running: bool = False) -> tuple[int, ...] | None:
        """Give back everything ``job`` holds (the ledger side of a completion, preemption or resize).

        Returns the servers of a split job whose neighbours must be re-rated (contention models), else None.
        """
        ids = self._held[job]
        self._held[job] = None  # the log keeps it (``placement``); _occupy sets the next holding
        servers = self.servers[job]
        counts = self._server_counts[job]
        gpu_servers = self._gpu_servers_of(job)
        if ids.size == 1:
            self.gpu_owner[int(ids[0])] = -1
        elif ids.size:
            self.gpu_owner[ids] = -1
        self._return_free_ids(ids.tolist(), gpu_servers)
        free = self.free_per_server
        for server, count in zip(servers, counts):  # scalar updates: a few servers, no fancy indexing
            free[server] += count
        if self._by_free is not None:
            for server, count in zip(servers, counts):
                if count:
                    now_free = len(self._free_ids[server])
                    self._rebucket(server, now_free - count, now_free)
        self.num_free += int(ids.size)
        amounts = self._amounts.pop(job, None)
        if amounts is not None:
            self.used[list(servers), 1:] -= amounts
            self._last_amounts[job] = amounts
        if not keep_running:
            self._alloc.pop(job, None)
            del self.running[job]
        split = len(gpu_servers) > 1
        if split:
            split_count = self.split_count
            for s in gpu_servers:
                self._split_jobs[s].discard(job)
                self._split_list[s] -= 1
                split_count[s] -= 1
        if self.contention[job]:
            self.contended_jobs -= 1
            self.contention_sum -= self.contention[job]
        self.contention[job] = 0
        return gpu_servers if split and not self._contention_free else None

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
        return _STATE_NAMES[self.state[job]]

    def _integrate(self, t: float) -> None:
        if t < self.now:
            raise InvariantError(f"time went backwards: {t} < {self.now}")
        dt = t - self.now
        if dt > 0:
            self.jobs_area += dt * (self.num_arrived - self.num_finished - self.num_rejected)
            self.weighted_area += dt * self._weight_in_system
            self.busy_gpu_area += dt * (self.gpu_owner.size - self.num_free)
        self.now = t

    def _admit_arrivals(self) -> None:
        n = self._n
        i = self._next_arrival
        enqueue = self.queue._items.append  # arrivals come in index order: JobQueue.append, minus a call
        while i < n and self._arrival[i] <= self.now:
            self.state[i] = QUEUED
            enqueue(i)
            self._weight_in_system += self._weight[i]
            i += 1
        self.num_arrived += i - self._next_arrival
        self.num_queued += i - self._next_arrival
        self._next_arrival = i

    def _neighbours(self, servers: tuple[int, ...]) -> set[int]:
        affected: set[int] = set()
        for s in servers:
            affected |= self._split_jobs[s]
        return affected

    # Re-rating only the neighbours whose p can change. Rigid gangs keep the invariant "every running
    # split job's p is the max split count over its servers" (each change of a count re-rates every
    # split job on that server). So when the counts of ``servers`` have just risen by one (a split
    # job started there), a neighbour's p changes iff one of those servers now exceeds it, and its new
    # p is the largest such count (the others' counts did not move); when they have just fallen by one
    # (one ended), iff it equalled the old count of one of them. The others would be re-rated to the p
    # they have, a no-op, so the set, its order and every rate (and heap sequence number) are those of
    # re-rating all neighbours. Jobs with non-GPU holdings break the invariant (their p also counts
    # servers where they hold no GPU) and take the full re-rate.
    def _raised_neighbours(self, servers: tuple[int, ...]) -> list[int]:
        """Split jobs on ``servers`` whose p rises (the job just started included), their new p left in
        ``_new_p`` for :meth:`_rerate_to`."""
        contention, split_jobs, count, new_p = self.contention, self._split_jobs, self._split_list, self._new_p
        changed: list[int] = []
        for s in servers:
            c = count[s]  # >= 1: the job just started is counted here
            for i in split_jobs[s]:
                p = new_p[i]  # -1 while i is not in ``changed``
                if contention[i] < c and p < c:  # also the job just started (p = 0, τ = inf)
                    if p < 0:
                        changed.append(i)
                    new_p[i] = c
        return changed

    def _lowered_neighbours(self, servers: tuple[int, ...]) -> list[int]:
        """Split jobs on ``servers`` whose p may fall, their p recomputed over all their servers and left in
        ``_new_p`` for :meth:`_rerate_to`."""
        contention, split_jobs, count, new_p = self.contention, self._split_jobs, self._split_list, self._new_p
        changed: list[int] = []
        for s in servers:
            c = count[s] + 1  # before the job left
            for i in split_jobs[s]:
                if contention[i] == c and new_p[i] < 0:
                    new_p[i] = self._max_split_count(i)
                    changed.append(i)
        return changed

    def _max_split_count(self, job: int) -> int:
        """The largest split count over ``job``'s servers (its p); a plain loop, which the compiled
        build runs on native ints (``max(map(...))`` is a generic call there)."""
        count = self._split_list
        most = 0
        for s in self.servers[job]:
            c = count[s]
            if c > most:
                most = c
        return most

    def _rerate(self, jobs: set[int]) -> None:
        """Re-rate ``jobs`` at p = the largest split count over their servers."""
        new_p = self._new_p
        for i in jobs:
            new_p[i] = self._max_split_count(i)
        self._rerate_to(list(jobs))

    def _rerate_to(self, changed: list[int]) -> None:
        """Give each job of ``changed`` its p in ``_new_p`` (then reset there), and a new rate where p
        changed (or it has none yet)."""
        contention, tau, job_servers, new_p = self.contention, self.tau, self.servers, self._new_p
        jobs: list[int] = []
        rates: list[float] = []
        changed.sort()  # ascending job ids: deterministic heap sequence numbers
        for i in changed:
            p = new_p[i]
            new_p[i] = -1
            old = contention[i]
            if p != old or tau[i] == math.inf:
                if not old:
                    self.contended_jobs += 1
                self.contention_sum += p - old
                contention[i] = p
                jobs.append(i)
                rates.append(self._tau(i, len(job_servers[i]), p))
        self._set_rates(jobs, rates)

    def _set_rate(self, job: int, tau: float) -> None:
        self._set_rates([job], [tau])

    def _set_rates(self, jobs: list[int], taus: list[float]) -> None:
        """From now on ``jobs[k]`` runs at ``taus[k]`` s/iteration: bank progress, push its new completion
        (in this order: it gives the heap sequence numbers). One rate depends on no other job's."""
        now: float = self.now
        now_value: Any = self.now  # boxed once: the column stores below take it as it is
        remaining, last, tau_of, version, heap = self.remaining, self._last, self.tau, self._version, self._heap
        timeline = self.timeline
        seq = self._seq
        push = heapq.heappush
        # Typed float locals: the compiled build does this arithmetic on C doubles (the same IEEE
        # operations in the same order), not through generic number calls on the columns' items. The
        # array('d') columns take ``job_key``/``tau_value``/``now_value`` as objects: each is boxed at most
        # once per job (the compiled build boxed a typed int or float again at every column access).
        for k in range(len(jobs)):
            job: int = jobs[k]
            job_key: Any = jobs[k]
            tau: float = taus[k]
            tau_value: Any = taus[k]
            if not 0.0 < tau < math.inf:
                self._bad_rate(job, tau)
            old: float = tau_of[job_key]
            left: float = remaining[job_key]
            if old != math.inf:
                last_banked: float = last[job_key]
                left = left - (now - last_banked) / old
                if not left > 0.0:
                    left = 0.0
                remaining[job_key] = left
            last[job_key] = now_value
            tau_of[job_key] = tau_value
            v = version[job] + 1
            version[job] = v
            seq += 1
            push(heap, (now + left * tau, seq, job_key, v))
            if timeline is not None:
                timeline.append((now_value, job_key, tau_value))
        self._seq = seq
        if len(heap) > self._heap_limit:
            self._compact_heap()

    def _bad_rate(self, job: int, tau: float) -> None:
        """Refuse a time per iteration that is not positive and finite (zero: an iteration that takes no
        time has no slowdown and makes the debug checks divide by zero; infinite or NaN: the job never
        ends). Named error: the job, its model and the rate model."""
        raise ConfigError(
            f"job {int(self.workload.job_id[job])} (model {self.workload.profile(job).name!r}): the performance model "
            f"{type(self.model).__name__} gives a time per iteration of {tau!r} s on its placement "
            f"({len(self.servers[job])} server(s)); it must be positive and finite (a job needs compute time "
            "forward_s + backward_s > 0, or communication, in every iteration)"
        )

    def _compact_heap(self) -> None:
        """Drop the stale completion entries (superseded rates, ended jobs), in place: callers may hold
        the list. Keys ``(time, seq)`` are unique, so the live entries pop in the same order."""
        version, state, heap = self._version, self.state, self._heap
        heap[:] = [e for e in heap if e[3] == version[e[2]] and state[e[2]] == RUNNING]
        heapq.heapify(heap)
        self._heap_limit = 2 * len(heap) + _HEAP_SLACK

    def _complete(self, job: int) -> None:
        ids = self._held[job]
        servers = self.servers[job]
        generic = self._contention_free or job in self._amounts
        if generic:  # allocations, contention-free rates: the general release
            self._bank_busy(job)
            neighbours_of = self._release(job)
        else:  # rigid gang under a contention model: the hot path, kept free of extra work
            id_list = ids.tolist()
            if len(id_list) == 1:
                self.gpu_owner[id_list[0]] = -1
            else:
                self.gpu_owner[ids] = -1
            self._held[job] = None
            self._return_free_ids(id_list, servers)
            free = self.free_per_server
            for server, count in zip(servers, self._server_counts[job]):
                free[server] += count
            if self._by_free is not None:
                free_ids = self._free_ids
                for server, count in zip(servers, self._server_counts[job]):
                    now_free = len(free_ids[server])
                    self._rebucket(server, now_free - count, now_free)
            self.num_free += len(id_list)
            if self._alloc:
                self._alloc.pop(job, None)
            del self.running[job]
            if self.contention[job]:  # kept in the records; no longer counted as running
                self.contended_jobs -= 1
                self.contention_sum -= self.contention[job]
            neighbours_of = servers if len(servers) > 1 else None
        self.state[job] = DONE
        self.remaining[job] = 0.0
        self._last[job] = self.now
        self.finish_time[job] = self.now
        self.num_finished += 1
        self._finish_order.append(job)
        self._weight_in_system -= self._weight[job]
        if self.timeline is not None:
            self.timeline.append((self.now, job, math.inf))
        if neighbours_of is not None:
            if not generic:
                split_count = self.split_count
                for s in servers:
                    self._split_jobs[s].discard(job)
                    self._split_list[s] -= 1
                    split_count[s] -= 1
                if self._amounts or self._last_amounts:
                    self._rerate(self._neighbours(servers))
                else:
                    self._rerate_to(self._lowered_neighbours(servers))
            else:
                self._rerate(self._neighbours(neighbours_of))
        self.servers[job] = self._server_counts[job] = ()  # released: the records keep only the span

    def _return_free_ids(self, ids: list[int], servers: tuple[int, ...]) -> None:
        """Put ``ids`` (held on ``servers``) back into the ascending per-server free lists."""
        free_ids = self._free_ids
        if len(servers) == 1:  # one list: a C-level merge, not an insort per GPU
            server_ids = free_ids[servers[0]]
            server_ids += ids
            server_ids.sort()
            return
        gpu_server = self._gpu_server_list
        for gpu in ids:
            bisect.insort(free_ids[gpu_server[gpu]], gpu)

    def _drop_stale(self) -> None:
        heap = self._heap
        while heap and (heap[0][3] != self._version[heap[0][2]] or self.state[heap[0][2]] != RUNNING):
            heapq.heappop(heap)

    # ------------------------------------------------------------------ checks & results
    def check_invariants(self) -> None:
        """Raise InvariantError if any simulator invariant does not hold right now.

        Each call is counted by an open :func:`ddl_gym.sim.checks.invariant_checks` session.
        """
        _checks.count()
        if not self.now >= self._checked_now:
            raise InvariantError(f"time went backwards: {self.now} < {self._checked_now}")
        self._checked_now = self.now
        owner = self.gpu_owner
        free_now = np.bincount(self.gpu_server[owner < 0], minlength=self.cluster.num_servers)
        if not np.array_equal(free_now, self.free_per_server) or int((owner < 0).sum()) != self.num_free:
            raise InvariantError("free-GPU bookkeeping disagrees with GPU ownership (over-committed GPU?)")
        if [i for ids in self._free_ids for i in ids] != np.flatnonzero(owner < 0).tolist():
            raise InvariantError("the free GPU id lists disagree with GPU ownership")
        if self._by_free is not None and any(
                group != np.flatnonzero(self.free_per_server == c).tolist() for c, group in enumerate(self._by_free)):
            raise InvariantError("the servers-by-free-count groups disagree with the free GPUs per server")
        if np.any(self.free_per_server < 0) or np.any(self.free_per_server > self.server_gpus):
            raise InvariantError("a server has a negative or excess free-GPU count")
        if self._multi_resource:
            expected_used = np.zeros_like(self.used)
            for j, amounts in self._amounts.items():
                if self.state[j] != RUNNING:
                    raise InvariantError(f"job {j} is {self._state_name(j)} but holds non-GPU resources")
                expected_used[list(self.servers[j]), 1:] += amounts
            if not np.allclose(expected_used, self.used, rtol=0.0, atol=1e-6):
                raise InvariantError("non-GPU resource ledger disagrees with what running jobs hold")
            if np.any(self.used > self.capacity + 1e-6) or np.any(self.used < -1e-6):
                raise InvariantError("a server's non-GPU resource use exceeds its capacity (or is negative)")
        held = np.bincount(owner[owner >= 0], minlength=self.workload.num_jobs)
        for j in range(self.workload.num_jobs):
            state = self.state[j]
            if state == RUNNING:
                gang = self._held[j].size if j in self._elastic else self._gpus[j]
                if held[j] != gang or not np.all(owner[self._held[j]] == j):
                    raise InvariantError(f"gang violated: job {j} holds {held[j]} of its {gang} GPUs")
                if self.start_time[j] < self._arrival[j]:
                    raise InvariantError(f"job {j} started at {self.start_time[j]} before arrival {self._arrival[j]}")
                ceiling = self._iterations[j] + self._overhead_iters.get(j, 0.0)
                if not (-1e-9 <= self.remaining_iterations(j) <= ceiling * (1 + 1e-12)):
                    raise InvariantError(f"job {j}: remaining iterations {self.remaining_iterations(j)} out of range")
            elif held[j]:
                raise InvariantError(f"job {j} is {self._state_name(j)} but holds {held[j]} GPUs")
            elif state == QUEUED and not (0.0 <= self.remaining[j] <= self._iterations[j] + self._overhead_iters.get(j, 0.0)):
                raise InvariantError(f"job {j}: banked remaining iterations {self.remaining[j]} out of range (work not conserved)")
            if state == DONE and (self.remaining[j] != 0.0 or not self.finish_time[j] >= self.start_time[j]):
                raise InvariantError(f"job {j} finished with {self.remaining[j]} iterations left")
            if state == REJECTED and self.finish_time[j] == self.finish_time[j]:
                raise InvariantError(f"job {j} was rejected but has a finish time")
            if state in (PENDING,) and self._arrival[j] <= self.now and j < self._next_arrival:
                raise InvariantError(f"job {j} arrived but was never queued")
        expected_split = np.zeros(self.cluster.num_servers, dtype=np.int64)
        for j in self.running:
            gpu_servers = self._gpu_servers_of(j)
            if len(gpu_servers) > 1:
                expected_split[list(gpu_servers)] += 1
        if not np.array_equal(expected_split, self.split_count) or expected_split.tolist() != self._split_list:
            raise InvariantError("per-server split-job counts are stale")
        contended = [self.contention[j] for j in self.running if self.contention[j]]
        if len(contended) != self.contended_jobs or sum(contended) != self.contention_sum:
            raise InvariantError("running contended-job counters are stale")
        if self.num_finished + self.num_rejected + len(self.running) + len(self.queue) != self.num_arrived:
            raise InvariantError("arrived jobs are not all accounted for (queued + running + done + rejected)")
        if self.num_queued != len(self.queue):
            raise InvariantError(f"queued-job counter {self.num_queued} disagrees with the queue ({len(self.queue)} jobs)")
        finished = self._finish_order
        if len(finished) != self.num_finished or len(set(finished)) != len(finished) or \
                any(self.state[j] != DONE for j in finished):
            raise InvariantError("the completion order log disagrees with the finished jobs")
        self._check_progress()

    def _check_progress(self) -> None:
        """Debug: every started job's work done never falls (progress is monotone), and a job that ran
        on one holding (never preempted or resized) finished no earlier than arrival + ``F · τ_ideal``
        (its uncontended time on that holding)."""
        checked = self._checked_done
        for j in range(self._n):
            state = self.state[j]
            if state == PENDING or state == REJECTED or self.start_time[j] != self.start_time[j]:
                continue
            total = self._iterations[j] + self._overhead_iters.get(j, 0.0)
            done = total - (self.remaining_iterations(j) if state == RUNNING else self.remaining[j])
            before = checked.get(j)
            if before is not None and done < before - 1e-9 * max(1.0, total):
                raise InvariantError(f"job {j}: work done fell from {before} to {done} iterations (progress not monotone)")
            checked[j] = done
        finished = self._finish_order
        for k in range(self._checked_finished, len(finished)):
            j = finished[k]
            if j in self.preemptions or j in self.resizes or j in self._elastic:
                continue
            ideal = self._iterations[j] * self._ideal_tau[j]
            took = self.finish_time[j] - self._arrival[j]
            if took < ideal - 1e-9 * max(1.0, ideal):
                raise InvariantError(f"job {j} finished {took} s after arrival, before its ideal run time {ideal} s")
        self._checked_finished = len(finished)

    def result(self, policy: str = "") -> SimResult:
        """Per-job records of the run so far (unfinished jobs have NaN finish)."""
        n = self.workload.num_jobs
        iterations = self.workload.iterations.astype(np.float64)
        start = np.array(self.start_time, dtype=np.float64)  # array columns: buffer copies, no float objects
        finish = np.array(self.finish_time, dtype=np.float64)
        extended = bool(self._banked_gpu_s or self._last_amounts or self._amounts or self._contention_free
                        or self.num_rejected or self._elastic)
        kwargs = {}
        if extended:
            kwargs = self._extended_records(start, finish)
        return SimResult(
            workload=self.workload,
            cluster=self.cluster,
            start=start,
            finish=finish,
            n_servers=np.array(self._span, dtype=np.int64),
            gpu_ids=GpuIdTable(self._gpu_log[:], self._gpu_start[:], self._gpu_count[:]),
            ideal_runtime=iterations * np.array(self._ideal_tau, dtype=np.float64) if n else np.zeros(0),
            decisions=self.decisions,
            policy=policy,
            timeline=list(self.timeline) if self.timeline is not None else None,
            **kwargs,
        )

    def _extended_records(self, start: np.ndarray, finish: np.ndarray) -> dict:
        """Records beyond rigid non-preemptive gangs: rejections, preemptions, held GPU/resource/compute seconds."""
        n = self._n
        rejected = np.array([s == REJECTED for s in self.state], dtype=bool)
        preemptions = np.zeros(n, dtype=np.int64)
        for j, c in self.preemptions.items():
            preemptions[j] = c
        gpu_s = np.zeros(n)
        resource_s = np.zeros((n, self.cluster.num_resources - 1))
        now = self.now
        for j in range(n):
            if start[j] != start[j]:
                continue
            banked = self._banked_gpu_s.get(j, 0.0)
            holding = self.state[j] in (RUNNING, DONE)
            end = finish[j] if self.state[j] == DONE else now
            since = self._segment_start.get(j, start[j])
            gpu_s[j] = banked + (self._gpu_count[j] * (end - since) if holding else 0.0)
            if resource_s.shape[1]:
                amounts = self._amounts.get(j, self._last_amounts.get(j))
                res = self._banked_resource_s.get(j, 0.0)
                if holding and amounts is not None:
                    res = res + amounts.sum(axis=0) * (end - since)
                resource_s[j] = res
        busy = None
        if self._contention_free and getattr(self.bound, "busy_gpu_seconds_per_iteration", None) is not None:
            busy = np.zeros(n)
            for j, v in self._banked_busy_gpu_s.items():
                busy[j] = v
            for j in self.running:  # the current holding so far
                alloc = self._alloc.get(j) or Allocation.rigid(self._held[j])
                since = self._segment_start.get(j, start[j])
                busy[j] += self.bound.busy_gpu_seconds_per_iteration(j, alloc) * (now - since) / self._ideal_tau[j]
        return {"rejected": rejected, "preemptions": preemptions, "gpu_seconds": gpu_s,
                "resource_seconds": resource_s, "busy_gpu_seconds": busy}

    def fork(self) -> Simulator:
        """An independent copy of the full simulator state (workload and model are shared, immutable).

        Everything is first shared (one dict update), then the mutable attributes are replaced by
        copies following a plan made once per attribute layout (MCTS forks hundreds of times per
        decision, so the per-attribute type dispatch is not repeated each time).
        """
        twin = _ENGINE_CLASS.__new__(_ENGINE_CLASS)  # bare (no __init__ work), in both builds
        # The attributes by name: the instance dict in plain Python; the compiled build's native
        # attributes have no dict, its __getstate__/__setstate__ read and write them all at once.
        source: dict[str, Any] = self.__getstate__() if _COMPILED else self.__dict__  # type: ignore[assignment]
        target = dict(source)
        layout = tuple(source)
        plan = _FORK_PLANS.get(layout)
        if plan is None:
            plan = _FORK_PLANS[layout] = tuple((key, copier) for key, value in source.items()
                                               if (copier := _fork_copier(key, value)) is not None)
        for key, copier in plan:
            target[key] = copier(source[key])
        if _COMPILED:
            twin.__setstate__(target)  # type: ignore[attr-defined]
        else:
            twin.__dict__ = target
        return twin

    def with_future(self, workload: Workload) -> Simulator:
        """A fork whose unseen future is ``workload``'s: the past is kept, the jobs not yet arrived replaced.

        The first ``num_arrived`` rows of ``workload`` are the jobs that have arrived (same arrival
        times and GPU counts as this simulator's); every later row is a job that has not arrived yet
        and must arrive at or after ``now``. It may hold any number of future jobs. The total
        iterations of an arrived job that has not finished may differ from this simulator's (a
        non-clairvoyant planner's guess of its remaining work): it must exceed the iterations the
        job has done by ``now``; its remaining work is shifted by the difference and, if it runs,
        its completion is rescheduled. Everything else (clock, queue, placements, rates, areas,
        records) is this simulator's state, copied as :meth:`fork` copies it.

        The result is the simulator that ``workload`` would have produced under the same decisions
        up to ``now`` whenever the future jobs do not change the past — true for the arrivals (they
        come after ``now``) and for remaining work that no decision could observe. A planner that
        must not see the true future (non-clairvoyant search) forks with a sampled one.

        Raises:
            ConfigError: the past rows disagree with this simulator's, a future job arrives before
                ``now``, or a job's new iteration count is not above the work it has done.
        """
        k = self.num_arrived
        n_new = workload.num_jobs
        old = self.workload
        if n_new < k:
            raise ConfigError(f"with_future: the workload has {n_new} jobs but {k} have arrived already")
        if k and not (np.array_equal(workload.arrival[:k], old.arrival[:k])
                      and np.array_equal(workload.gpus[:k], old.gpus[:k])):
            raise ConfigError("with_future: the workload's first rows must be the arrived jobs (same arrivals and GPUs)")
        if n_new > k and float(workload.arrival[k]) < self.now:
            raise ConfigError(f"with_future: future job {k} arrives at {float(workload.arrival[k])} before now ({self.now})")
        workload.check_fits(self.cluster)
        old_iterations = old.iterations[:k]
        changed = np.flatnonzero(workload.iterations[:k] != old_iterations).tolist()
        fresh = _ENGINE_CLASS(self.cluster, workload, self.model, debug=self.debug)
        base = self.fork()
        source: dict[str, Any] = base.__getstate__() if _COMPILED else base.__dict__  # type: ignore[assignment]
        fresh_state: Any = fresh.__getstate__() if _COMPILED else fresh.__dict__  # type: ignore[attr-defined]
        target: dict[str, Any] = dict(fresh_state)
        for key, value in source.items():
            if key in _FUTURE_BOUND:
                continue  # built by the fresh engine from the new workload (and its model binding)
            if key in _PER_JOB:
                column = target[key]
                column[:k] = value[:k]
                if key == "state":
                    for j in range(k, n_new):
                        column[j] = PENDING  # the fresh engine admitted arrivals at its own clock
            else:
                target[key] = value
        twin = _ENGINE_CLASS.__new__(_ENGINE_CLASS)
        if _COMPILED:
            twin.__setstate__(target)  # type: ignore[attr-defined]
        else:
            twin.__dict__ = target
        if changed:
            twin._shift_work(changed, (workload.iterations[changed] - old_iterations[changed]).tolist())
        twin._admit_arrivals()  # future jobs arriving exactly now
        if twin.debug:
            twin.check_invariants()
        return twin

    def _shift_work(self, jobs: list[int], deltas: list[int]) -> None:
        """Add ``deltas[i]`` iterations to the remaining work of arrived, unfinished ``jobs[i]`` (see with_future)."""
        running: list[int] = []
        taus: list[float] = []
        for i in range(len(jobs)):
            job = jobs[i]
            state = self.state[job]
            if state == DONE or state == REJECTED:
                raise ConfigError(f"with_future: job {job} has ended; its iterations cannot change")
            if self.remaining_iterations(job) + deltas[i] <= 0.0:
                raise ConfigError(f"with_future: job {job}'s new iteration count is not above the work it has done")
            self.remaining[job] = self.remaining[job] + deltas[i]
            if state == RUNNING:
                running.append(job)
                taus.append(self.tau[job])
        if running:
            self._set_rates(running, taus)  # bank progress at the old rate, push the new completion


#: Simulator.with_future: attributes the new workload determines (taken from an engine built on it) ...
_FUTURE_BOUND = frozenset({"workload", "bound", "_contention_free", "_n", "_arrival", "_gpus", "_iterations", "_weight",
                           "_elastic", "_nominal_tau", "_tau_memo", "_rate_class", "_new_p"})
#: ... and the per-job columns whose arrived rows are this simulator's (every other attribute is copied whole).
_PER_JOB = frozenset({"state", "remaining", "tau", "_last", "_version", "contention", "servers", "_server_counts",
                      "_span", "_held", "_gpu_start", "_gpu_count", "start_time", "finish_time", "_ideal_tau"})


#: This build's class (a fork is one of it, also of a subclass): the name ``Simulator`` is rebound
#: to the compiled class at the end of the plain-Python module when that build is in use.
_ENGINE_CLASS = Simulator
#: True in the compiled build (mypyc native classes keep their attributes in slots, listed here).
_COMPILED = hasattr(Simulator, "__mypyc_attrs__")


#: Starts whose GPU work additions are queued before they are applied (when nobody reads them).
_WORK_BATCH = 1024

# ---------------------------------------------------------------------------- Simulator.fork plans
#: Attributes every fork shares: immutable, read-only after construction, (``_nominal_tau``, ``_tau_memo``)
#: caches of pure functions that every fork may fill, or (``_new_p``) scratch that is all -1 between calls.
_FORK_SHARED = frozenset({"cluster", "workload", "model", "bound", "gpu_server", "_gpu_server_list", "server_first_gpu",
                          "server_gpus", "_arrival", "_gpus", "_iterations", "_weight",
                          "_nominal_tau", "_tau_memo", "_new_p", "_rate_class"})
#: Per attribute layout (the tuple of attribute names): the (name, copier) pairs of the mutable ones.
_FORK_PLANS: dict[tuple[str, ...], tuple[tuple[str, Callable[[Any], Any]], ...]] = {}


def _copy(value: Any) -> Any:
    # ndarray, list or dict (elements immutable, or arrays never mutated in place)
    return None if value is None else value.copy()


def _copy_array(value: array) -> array:
    return value[:]


def _copy_lists(value: Any) -> Any:
    return None if value is None else [list(s) for s in value]


def _copy_sets(value: Any) -> Any:
    return [set(s) for s in value]


def _copy_by_value(key: str) -> Callable[[Any], Any]:
    """For an attribute that was None when the plan was made: decide from its value at each fork."""
    def copy(value: Any) -> Any:
        copier = None if value is None else _fork_copier(key, value)
        return value if copier is None else copier(value)
    return copy


def _fork_copier(key: str, value: Any) -> Callable[[Any], Any] | None:
    """How :meth:`Simulator.fork` copies attribute ``key`` (None: shared), from its name and type."""
    if key in _FORK_SHARED:
        return None
    if key == "_split_jobs":
        return _copy_sets
    if key in ("_free_ids", "_by_free"):
        return _copy_lists
    if value is None:
        return _copy_by_value(key)
    if isinstance(value, array):
        return _copy_array
    if isinstance(value, (np.ndarray, list, dict, JobQueue)):
        return _copy
    return None  # scalars, tuples, frozensets, model objects


class _Placements:
    """``Simulator.placement``: job -> GPU ids (int64 array) it holds now, else of its last holding, else None.

    A read-only view: running jobs give the engine's own array (do not mutate it), others a fresh
    copy from the engine's flat GPU-id log.
    """

    __slots__ = ("_sim",)

    def __init__(self, sim: Simulator) -> None:
        self._sim = sim

    def __len__(self) -> int:
        return self._sim._n

    def __getitem__(self, job: int) -> np.ndarray | None:
        sim = self._sim
        held = sim._held[job]
        if held is not None:
            return held
        count = sim._gpu_count[job]
        if count < 0:
            return None
        first = sim._gpu_start[job]
        return np.array(sim._gpu_log[first:first + count], dtype=np.int64)

    def __iter__(self) -> Iterator[np.ndarray | None]:
        return (self[j] for j in range(len(self)))


class Scheduler(Protocol):
    """A native scheduling policy: looks at the simulator and starts jobs (or asks to be woken).

    ``schedule`` is called at every decision point (after each batch of events). It may call
    ``sim.start(job, placement)`` any number of times and ``sim.wake_at(t)``, and — only if it
    lists them in an optional ``capabilities`` attribute — ``sim.reject``, ``sim.preempt`` and
    ``sim.resize``.
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
    sim.capabilities = _declared_capabilities(policy)
    policy.reset(sim, rng if rng is not None else np.random.default_rng(0))
    events = 0
    while not sim.done:
        if sim.num_queued:
            policy.schedule(sim)
            if sim.done:  # its last decision rejected the last job
                break
        if not sim.advance():
            raise SimulationError(
                f"policy {policy.name!r} is stuck at t={sim.now:.3f}s: {len(sim.queue)} jobs queued, none running, "
                "no arrivals or wake-ups left (it never starts a job that fits)"
            )
        events += 1
        if max_events is not None and events >= max_events:
            break
    return sim.result(policy.name)



def _declared_capabilities(policy: object) -> frozenset[str]:
    """The optional engine capabilities ``policy`` declares (validated against :data:`CAPABILITIES`)."""
    declared = getattr(policy, "capabilities", None) or ()
    if isinstance(declared, str):
        declared = (declared,)
    caps = frozenset(str(c) for c in declared)
    unknown = caps - CAPABILITIES
    if unknown:
        raise SimulationError(f"policy {getattr(policy, 'name', policy)!r} declares unknown capabilities "
                              f"{sorted(unknown)}; known: {sorted(CAPABILITIES)}")
    return caps


# <pure-only> (not in the compiled build)
#: This module's simulator and driver as plain Python, whichever build :data:`Simulator` names.
PurePythonSimulator = Simulator
pure_python_run_policy = run_policy


def _native_module() -> Any:
    """The compiled build of this very source (:mod:`ddl_gym.sim.native`), if in use; else None."""
    from ddl_gym.sim.native import compiled_module

    return compiled_module(__file__)


#: ``"native"`` (the compiled build) or ``"python"``: which build :data:`Simulator` and
#: :func:`run_policy` are.
BUILD = "python"
_NATIVE = _native_module()
if _NATIVE is not None:
    Simulator = _NATIVE.Simulator  # type: ignore[misc]
    run_policy = _NATIVE.run_policy  # type: ignore[assignment]
    BUILD = "native"
    PurePythonSimulator.__qualname__ = "PurePythonSimulator"  # the name pickle finds it under now
# </pure-only>
