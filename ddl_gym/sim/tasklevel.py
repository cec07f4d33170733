"""Task-level simulator for Ada-SRSF (Wang et al., 2020, §III): every training iteration is a DAG.

Model (paper §III-A/B, with the details of the authors' public simulator made explicit):

* A job ``J`` with ``G`` workers runs ``F`` iterations. Iteration ``i`` is a forward task
  (``t_f``) followed by a backward task (``t_b``) on each of its GPUs, then **one** all-reduce
  communication task that waits for all backward tasks of the iteration; the forward tasks of
  iteration ``i+1`` wait for that all-reduce (Fig. 3).
* All-reduce inside one server costs nothing: a job on one server has no communication task (its
  next iteration starts when its last backward task ends). Across servers the all-reduce moves
  ``M`` bytes (the model size) and takes ``a + k·b·M + (k−1)·η·M`` (eq. 5) when ``k`` is the largest
  number of concurrently running communication tasks over the job's servers; the time does not
  depend on the number of workers.
* ``k`` is re-evaluated whenever a communication task starts or ends. The remaining bytes are
  re-rated: progress is banked at the old per-byte time ``k_old·b + (k_old−1)·η`` and continues at
  the new one — exactly how the proofs of Theorems 1 and 2 account for a task whose contention
  changes part-way (eqs. 10–12).
* Decision (latency ``a``): charged once, at the start of the task; the bytes start flowing ``a``
  seconds after the start and the task occupies its servers (counts towards ``k``) throughout.
  With the default ``a = 0`` (the authors' simulator) this is immaterial.
* GPUs may be shared: a GPU hosts the workers of several jobs while their memory (Table III
  "GPU memory usage") fits in the GPU's memory; their compute tasks are time-multiplexed, one task
  at a time, non-preemptively. Whenever a GPU is idle it runs the ready compute task of the job
  with the smallest remaining service (SRSF, Alg. 3 lines 24–31). With ``gpu_sharing=False`` a GPU
  hosts at most one job.
* Remaining service ``R_J`` = remaining GPU compute time of all of ``J``'s workers
  (``C_J·|G(J)|`` at arrival, minus the duration of every finished compute task; ``E_J = 0``, as
  §IV-A prescribes when sorting). It is the SRSF key for the queue, for communication tasks
  (Alg. 3 line 17) and for compute tasks (line 28), ties broken by job index. It is decremented
  when a task *ends*, as in the authors' simulator.
* Remaining GPU workload ``L_g`` (Alg. 1) = sum of ``R_J`` over the jobs resident on ``g``: a job
  adds ``L_J = C_J·|G(J)|`` to each of its GPUs when placed (Alg. 1 lines 8/20) and that
  contribution falls as the job's work completes (Alg. 3 line 4).

Engine (decisions):

* **Event-driven, continuous time** (not the paper's one-second slots, nor the authors' 1 ms
  ticks): the clock is an integer number of **nanoseconds**, so that coinciding events (jobs that
  arrived in the same second on identical GPUs) coincide exactly and ties are broken only by the
  documented order. Compute durations are rounded to the nanosecond; a communication task's end
  is rounded up to the next nanosecond.
* At each event time every event at that time is processed first (task ends, all-reduce ends,
  arrivals), then — in the order of Alg. 3 — the placement pass (queue in SRSF order, jobs that
  do not fit are skipped), the communication pass (ready all-reduces in SRSF order, each admitted
  or not by the policy) and the compute pass (every idle GPU with ready work picks a task).
  Heap ties: ``(time, sequence)``; decisions within a pass are independent of the order of
  same-time events.
* A refused all-reduce waits and is reconsidered whenever the communication state it depends on
  changes. A communication pass is a sequence of rounds at the same instant: in each round the
  candidates are considered in SRSF order with the state updated after every admission, and a job
  refused earlier in the round whose inputs an admission changed is considered again in the next
  round (the authors' simulator would do so one 1 ms tick later). Rules that declare
  ``reconsider_on_server_change_only`` (AdaDUAL, SRSF(n): a refusal can only turn into an
  admission after a task starts or ends on one of the job's servers) also return the servers whose
  change matters, and the engine only reconsiders a job then — with no side effect in the rule this
  is exactly the same as asking again at every instant.
* **Fast path** (``fast=True``, default; ``fast=False`` runs one event per compute task, the
  reference path, and the tests check that both give identical schedules). Workers of one job
  that start the same task at the same instant form a *cohort* simulated in closed form: one event
  for the rest of their iteration's compute instead of two per worker. A cohort of all of a job's
  workers is a *gang*: on one server (incl. every one-GPU job) it runs whole iterations back to
  back; across servers, if its servers host no other multi-server job (nobody can contend for its
  NICs) it runs whole iterations including its uncontended all-reduce; otherwise it keeps its GPUs
  through the (simulated) all-reduce while no other job has ready work on them and restarts on all
  of them at once. A cohort is handed back to the task-level path exactly at the first instant at
  which another job could take one of its GPUs: another job's work becomes ready there and would
  win SRSF at the next task boundary (priorities only fall while a job runs, so a loser keeps
  losing until its own remaining service falls — then it is checked again), or another
  multi-server job is placed on one of its servers. A zero-length all-reduce (``a = 0``,
  ``M = 0``) makes an iteration boundary two decision points at one instant; the tasks started at
  the first are running at the second (a cohort cut there materialises them as running), and a
  multi-server gang with a zero-length all-reduce is a held gang, never a closed-form one (its GPUs
  are idle for that instant, where another job's ready work takes them).
* Compute times are at least 1 ns: a model whose ``t_f`` or ``t_b`` rounds to 0 ns is rejected
  with a :class:`ConfigError` naming the model and the field (a zero-duration task has no place
  in the DAG model, and an iteration of zero time would never let the clock move on).
* Bookkeeping that keeps the cost per decision point low without changing any decision: per GPU
  the set of resident workers with a ready task (the compute pass and the cohort checks look only
  there, not at every resident); a running all-reduce is re-rated only when its ``k`` can change;
  a refusal that a rule guarantees to stand while a server stays crowded (``decide_hold``) is not
  asked again until it drains; a running all-reduce keeps one live end event, re-posted lazily
  when a re-rating delays it (same event order as posting eagerly, fewer stale events); the two
  paper rules' admission checks (AdaDUAL, SRSF(n)) run as engine kernels when the rule declares
  ``engine_kernel()`` (a copy of its ``decide_hold``, cross-checked against it in debug mode),
  so that a query (a waiting all-reduce is asked about 6 times per admission) is no call into the
  policy module.
  ``tests/sim/test_tasklevel_golden.py`` checks the schedules against digests recorded before these
  changes.
* **Compiled build** (optional): ``scripts/build_native.py`` compiles this very file with
  mypyc (several times less CPU per episode, ``scripts/bench_tasklevel.py``; same integer/float
  arithmetic, so identical schedules); :data:`TaskLevelSimulator` is that build while its sha256
  stamp matches this source, else plain Python (:data:`BUILD` says which;
  ``DDL_GYM_PURE_PYTHON=1`` forces plain Python). The source is written for it: ``Final`` module
  constants, typed attributes and locals (int clock, no ``inf``), direct ``self._method()`` calls
  (a bound-method alias is a Python-level call in the compiled build), no ``math``/``divmod``/
  augmented list-item updates in hot paths.
* Optional replication of the authors' simulator defect (``probe_defect=True``, see
  :meth:`TaskLevelSimulator.mark_probe`): there AdaDUAL's check of the running transfer's remaining
  size also advances that transfer, so it moves ``1 + p`` times as fast while ``p`` refused jobs
  keep checking it. Off by default: the paper's probe has no side effect.
* ``debug=True`` checks invariants after every decision point and at the end: GPU memory never
  over-committed, at most one compute task on a GPU at a time (every task interval is recorded,
  cohorts included), no task before the job's arrival, work and iterations conserved (``2·G·F``
  compute tasks and ``F`` iterations per job, remaining service exactly 0 at completion).
"""

from __future__ import annotations

from heapq import heapify, heappop, heappush
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol

import numpy as np

import ddl_gym.sim.checks as _checks
from ddl_gym.sim.metrics import SimResult
from ddl_gym.sim.model import ClusterSpec, ConfigError, Workload
from ddl_gym.sim.perf import AllReduceContentionModel

# Module constants are Final so that the compiled build inlines them (no globals lookup per use).
NS_PER_S: Final = 1_000_000_000

# Worker phases within an iteration.
FW_READY: Final = 0
FW_RUN: Final = 1
BW_READY: Final = 2
BW_RUN: Final = 3
SYNC: Final = 4
# Job states.
PENDING: Final = 0
QUEUED: Final = 1
RUNNING: Final = 2
DONE: Final = 3
# Event kinds (heap entries are (time_ns, seq, kind, subject, version)).
_EV_TASK: Final = 0
_EV_COMM: Final = 1
_EV_COHORT: Final = 2
# Admission kernels the engine runs itself for rules that declare one (``engine_kernel``).
_KERNEL_NONE: Final = 0
_KERNEL_ADADUAL: Final = 1
_KERNEL_SRSF: Final = 2


def _ceil(x: float) -> int:
    """``math.ceil(x)`` of a finite float (truncation, plus one above a positive fraction); a plain
    function so that the compiled build needs no call into the math module."""
    i = int(x)
    return i + 1 if i < x else i


class _Cohort:
    """Workers of one job running the same task in lockstep, simulated in closed form (fast path).

    Fields: ``job``, ``size``/``workers``/``gpus`` (its members), ``t0`` (formed at), ``origin``
    (virtual start of its first iteration), ``phase0``/``work0`` (offset it started at and the
    per-worker compute done by then), ``iter0`` (job iterations done at ``origin``), ``period``
    (``t_c``, plus the all-reduce for a closed-form multi-server gang, ``comm_ns``), ``whole``
    (covers whole iterations), ``end``, ``cut`` (pending cut time or -1), ``version`` (event
    validity), ``active``, ``hold``/``holding`` (multi-server gang that keeps its GPUs over its
    simulated all-reduce), ``pending`` (held and its next iteration ready to restart at this
    instant: its workers are ready but kept out of the per-GPU ready sets, as nobody else can
    take those GPUs unless it is released).
    """

    __slots__ = ("job", "size", "workers", "gpus", "t0", "origin", "phase0", "iter0", "period", "comm_ns",
                 "whole", "end", "work0", "cut", "version", "active", "hold", "holding", "pending")
    # Declared types (the compiled build, see _native_simulator, stores them unboxed).
    job: int
    size: int
    workers: list[int]
    gpus: list[int]
    t0: int
    origin: int
    phase0: int
    iter0: int
    period: int
    comm_ns: int
    whole: bool
    end: int
    work0: int
    cut: int
    version: int
    active: bool
    hold: bool
    holding: bool
    pending: bool


# <shared> (the compiled build imports these from this module: one class for both builds)
class InvariantError(AssertionError):
    """A task-level simulator invariant was violated (debug mode only)."""
# </shared>


class TaskPlacement(Protocol):
    """``rule(sim, job, rng) -> GPU ids | None``: where a queued job's workers go (None: not now)."""

    def __call__(self, sim: TaskLevelSimulator, job: int, rng: np.random.Generator) -> Sequence[int] | None: ...


class CommAdmission(Protocol):
    """``rule(sim, job) -> bool``: start ``job``'s ready all-reduce now? (No side effects.)

    Optional attributes the engine uses when present:

    * ``decide(sim, job) -> (admit, dec, inc)``: the answer plus, for a refusal, the servers on
      which a task ending (``dec``) or starting (``inc``) could change it;
    * ``decide_hold(sim, job) -> (admit, dec, inc, hold_server, hold_count)``: ``decide`` plus,
      for a refusal, a guarantee: it stands as long as ``comm_count[hold_server] >= hold_count``
      whatever else changes (``hold_count = 0``: none). ``hold_server`` must be in ``dec``. The
      engine then skips asking again while the guarantee holds (same answers, fewer calls);
    * ``reconsider_on_server_change_only = True``: a refusal can only turn into an admission after
      a task starts or ends on one of the job's servers (then refused jobs are re-asked only then);
    * ``admits_when_idle = True``: an all-reduce with no other task on its servers is always
      admitted (then uncontended multi-server gangs may run their all-reduces in closed form);
    * ``engine_kernel() -> (name, parameter) | None``: the rule's ``decide_hold`` is exactly one
      of the engine's built-in kernels, which the engine then runs itself instead of calling the
      rule (same answers, no call into Python per query; see :meth:`TaskLevelSimulator._adadual`):
      ``("adadual", threshold)`` (Alg. 2 without the probe defect) or ``("srsf", n)`` (SRSF(n)).
      With ``debug=True`` the engine asks the rule too and checks that both agree.
    """

    def __call__(self, sim: TaskLevelSimulator, job: int) -> bool: ...


# <shared>
@dataclass
class EngineStats:
    """Counters of one run (for profiling and the reproduction report)."""

    events: int = 0
    compute_tasks_started: int = 0
    comm_tasks: int = 0
    cohorts_formed: int = 0
    gangs_formed: int = 0
    cohort_cuts: int = 0
    gang_restarts: int = 0
    comm_passes: int = 0
    placement_passes: int = 0
    decision_points: int = 0
# </shared>


class TaskLevelSimulator:
    """Ada-SRSF's task-level cluster simulator (see the module docstring for the model).

    Args:
        cluster: servers, GPUs per server, GPU memory (``gpu_memory_mb``).
        workload: the jobs (profiles give ``t_f``, ``t_b``, model size ``M``, GPU memory).
        model: eq. (5) parameters ``a`` (s), ``b`` (s/byte), ``eta`` (s/byte).
        placement: the placement rule (LWF-κ, FF, LS, RAND in :mod:`ddl_gym.baselines.ada_srsf.policy`).
        comm_admission: the communication-task admission rule (AdaDUAL, SRSF(n)).
        rng: generator handed to the placement rule (RAND).
        gpu_sharing: several jobs per GPU while memory fits (default), else one job per GPU.
        fast: closed-form cohorts and gangs (module docstring); ``False``: one event per task.
        debug: check invariants (records every task interval; slower).
        probe_defect: reproduce the authors' simulator defect (see :meth:`mark_probe`).

    Policy-visible state (read-only): ``now`` (seconds; ``now_ns`` integer ns), per job ``G``,
    ``F``, ``message_bytes``, ``mem_mb``, ``job_gpus``, ``job_servers``, ``state``; per GPU
    ``gpu_mem_free`` (MB), ``residents`` (``(job, worker)``); per server ``comm_count`` (running
    all-reduces), ``comm_on_server`` (their jobs), ``server_gpu_ids``; ``queue``,
    ``comm_waiting``, ``comm_running``; and the query methods :meth:`remaining_service`,
    :meth:`gpu_loads`, :meth:`fits`, :meth:`comm_remaining_bytes`. After a run, ``stats``
    (:class:`EngineStats`), ``placed_ns`` and, in debug mode, :meth:`task_intervals`.
    """

    def __init__(
        self,
        cluster: ClusterSpec,
        workload: Workload,
        model: AllReduceContentionModel | None = None,
        *,
        placement: TaskPlacement,
        comm_admission: CommAdmission,
        rng: np.random.Generator | None = None,
        gpu_sharing: bool = True,
        fast: bool = True,
        debug: bool = False,
        probe_defect: bool = False,
    ) -> None:
        if model is None:
            model = AllReduceContentionModel()
        if not isinstance(model, AllReduceContentionModel):
            raise ConfigError(
                f"task-level engine needs an AllReduceContentionModel (a, b, eta), got {type(model).__name__}"
            )
        workload.check_fits(cluster)
        self.cluster = cluster
        self.workload = workload
        self.model = model
        self.placement = placement
        self.comm_admission = comm_admission
        self.rng = rng if rng is not None else np.random.default_rng(0)
        self.gpu_sharing = bool(gpu_sharing)
        self.fast = bool(fast)
        # ``checks.invariant_checks()`` switches every engine built inside it to debug mode.
        self.debug = bool(debug) or _checks.forced()
        self.probe_defect = bool(probe_defect)
        self.stats = EngineStats()
        # Counters of the run, kept as plain int attributes while it runs (cheap in the compiled
        # build) and copied into ``stats`` when :meth:`advance` returns.
        self._n_events = 0
        self._n_tasks_started = 0
        self._n_comm_tasks = 0
        self._n_cohorts = 0
        self._n_gangs = 0
        self._n_cuts = 0
        self._n_restarts = 0
        self._n_comm_passes = 0
        self._n_placement_passes = 0
        self._n_decision_points = 0

        n = workload.num_jobs
        self.num_jobs = n
        self.num_gpus = cluster.num_gpus
        self.num_servers = cluster.num_servers
        self.gpu_server: list[int] = cluster.gpu_server().tolist()
        self.server_gpu_ids: list[list[int]] = [[] for _ in range(self.num_servers)]
        for g, s in enumerate(self.gpu_server):
            self.server_gpu_ids[s].append(g)

        # Per-job constants (integer nanoseconds for times).
        prof = [workload.profile(i) for i in range(n)]
        self.arrival_ns: list[int] = [int(round(a * NS_PER_S)) for a in workload.arrival.tolist()]
        self.G: list[int] = workload.gpus.tolist()
        self.F: list[int] = workload.iterations.tolist()
        self.tf: list[int] = [int(round(p.forward_s * NS_PER_S)) for p in prof]
        self.tb: list[int] = [int(round(p.backward_s * NS_PER_S)) for p in prof]
        self.tc: list[int] = [f + b for f, b in zip(self.tf, self.tb)]
        for i in range(n):
            if self.tf[i] < 1 or self.tb[i] < 1:
                # Decision: a compute task of zero duration has no place in the paper's DAG model
                # (Table III measures t_f, t_b > 0) and would make an iteration take no time (the
                # closed forms divide by t_c), so it is rejected at input rather than simulated.
                p = prof[i]
                field, value = ("forward_s", p.forward_s) if self.tf[i] < 1 else ("backward_s", p.backward_s)
                raise ConfigError(
                    f"model profile {p.name!r} (job {int(workload.job_id[i])}): {field} = {value!r} s rounds to 0 ns; "
                    "the task-level engine needs forward_s and backward_s of at least 1 ns"
                )
        self.message_bytes: list[float] = [float(p.gradient_bytes) for p in prof]
        self.mem_mb: list[float] = [float(p.gpu_memory_mb) for p in prof]
        too_big = [i for i in range(n) if self.mem_mb[i] > cluster.gpu_memory_mb]
        if too_big:
            i = too_big[0]
            raise ConfigError(
                f"job {int(workload.job_id[i])} ({prof[i].name}) needs {self.mem_mb[i]:.0f} MB per GPU but GPUs have "
                f"{cluster.gpu_memory_mb:.0f} MB"
            )
        # Eq. (5) in nanoseconds: a_ns, and per-byte times b, η in ns/byte.
        # (Declared int / float: the compiled build then does this arithmetic natively.)
        self.a_ns: int = int(round(model.a * NS_PER_S))
        self.b_ns: float = float(model.b * NS_PER_S)
        self.eta_ns: float = float(model.eta * NS_PER_S)
        #: C_J · |G(J)| = total GPU compute service of each job (ns), the queue's SRSF key.
        self.total_service: list[int] = [self.F[i] * self.G[i] * self.tc[i] for i in range(n)]

        # Per-job dynamic state.
        self.state = [PENDING] * n
        self.R: list[int] = list(self.total_service)  # remaining service R_J (ns)
        self.iters_done = [0] * n
        self.bw_left = [0] * n
        self.phase: list[list[int]] = [[] for _ in range(n)]
        self.job_gpus: list[tuple[int, ...]] = [()] * n
        self.job_servers: list[tuple[int, ...]] = [()] * n
        self.multi: list[bool] = [False] * n
        self.start_ns: list[int] = [-1] * n
        self.finish_ns: list[int] = [-1] * n
        self.placed_ns: list[int] = [-1] * n
        self.tasks_done = [0] * n  # debug: compute tasks finished

        # Per-GPU state.
        self.gpu_mem_free: list[float] = [float(cluster.gpu_memory_mb)] * self.num_gpus
        self.residents: list[list[tuple[int, int]]] = [[] for _ in range(self.num_gpus)]  # (job, worker)
        self.busy = [False] * self.num_gpus
        self.cur_job = [-1] * self.num_gpus
        self.cur_worker = [-1] * self.num_gpus
        self.gpu_version = [0] * self.num_gpus
        self.cohort_of_gpu: list[_Cohort | None] = [None] * self.num_gpus  # fast path
        # Per GPU, {job: worker} of the resident workers whose next task is ready (FW/BW_READY).
        self._ready: list[dict[int, int]] = [{} for _ in range(self.num_gpus)]

        # Communication state.
        self.comm_count: list[int] = [0] * self.num_servers
        self.comm_on_server: list[set[int]] = [set() for _ in range(self.num_servers)]
        self.multi_on_server: list[int] = [0] * self.num_servers  # resident multi-server jobs per server
        self.comm_waiting: set[int] = set()  # jobs whose all-reduce is ready but not started
        self.comm_running: dict[int, None] = {}
        self.comm_k = [0] * n
        self.comm_per_byte = [0.0] * n  # ns per byte at the current k (× defect factor)
        self.comm_bank_t = [0] * n  # bytes flow from this time on ...
        self.comm_bank_rem = [0.0] * n  # ... with this many bytes left
        self.comm_end = [0] * n
        self.comm_version = [0] * n
        # Lazy re-posting of all-reduce end events: a running all-reduce has one live heap entry
        # (time _comm_entry, version comm_version). When a re-rating moves its end later, no entry
        # is posted; the live one, when it pops early, re-posts itself at comm_end with the
        # sequence number the re-rating drew (_comm_seq), i.e. exactly the entry an eager re-post
        # would have made. Fewer heap entries and stale pops, same event order.
        self._comm_entry = [-1] * n
        self._comm_seq = [0] * n
        self.comm_speedup = [1] * n  # authors' probe defect: 1 + number of waiting probers
        self._probe_marks: dict[int, int] = {}  # waiting prober job -> probed job (defect mode)
        # A rejected all-reduce is reconsidered only when the tasks on one of its servers changed,
        # if the rule says that is the only way its answer can change (AdaDUAL and SRSF(n) do).
        self._lazy_comm = bool(getattr(comm_admission, "reconsider_on_server_change_only", False))
        # Waiting jobs registered per server: reconsider when a task ends (dec) / starts (inc) there.
        self._wait_dec: list[set[int]] = [set() for _ in range(self.num_servers)]
        self._wait_inc: list[set[int]] = [set() for _ in range(self.num_servers)]
        self._watch_dec: list[tuple[int, ...]] = [()] * n  # the servers each waiting job watches
        self._watch_inc: list[tuple[int, ...]] = [()] * n
        self._comm_decide = self._decide_function(comm_admission)
        # The rule's own kernel, run inside the engine (see CommAdmission.engine_kernel).
        self._kernel = _KERNEL_NONE
        self._kernel_threshold = 0.0
        self._kernel_n = 0
        kernel = getattr(comm_admission, "engine_kernel", None)
        spec = kernel() if callable(kernel) else None
        if spec is not None:
            name, param = spec
            if name == "adadual":
                self._kernel = _KERNEL_ADADUAL
                self._kernel_threshold = float(param)
            elif name == "srsf" and int(param) >= 1:
                self._kernel = _KERNEL_SRSF
                self._kernel_n = int(param)
            else:
                raise ConfigError(f"admission rule {comm_admission!r}: unknown engine kernel {spec!r} "
                                  "(expected ('adadual', threshold) or ('srsf', n >= 1))")
        self._server_tuple: list[tuple[int, ...]] = [(s,) for s in range(self.num_servers)]
        # A refusal that stands while server _hold_server[j] runs >= _hold_count[j] all-reduces
        # (0: no such guarantee) is not asked again while that holds (``decide_hold``).
        self._hold_server = [0] * n
        self._hold_count = [0] * n
        self._comm_dirty: set[int] = set()  # waiting jobs to (re)consider at the next pass
        self._pass_round: list[tuple[int, int]] | None = None  # heap of the pass in progress
        self._pass_in_round: set[int] = set()
        self._pass_next: set[int] = set()
        self._pass_key: tuple[int, int] = (0, 0)

        # Event machinery.
        self.now_ns = 0
        # (time_ns, seq, kind, subject, version); subject: a GPU, a job or a _Cohort.
        self._heap: list[tuple[int, int, int, Any, int]] = []
        self._seq = 0
        self._next_arrival = 0
        self.queue: list[int] = []
        self.num_done = 0
        self.placements = 0
        self._decide: list[int] = []
        self._decide_flag = [False] * self.num_gpus
        self._need_placement = False
        self._need_comm = False
        # Fast path (cohorts, see _Cohort).
        self.cohorts: list[list[_Cohort]] = [[] for _ in range(n)]  # computing cohorts of each job
        self.held: list[_Cohort | None] = [None] * n  # gang holding its idle GPUs over an all-reduce
        self._restart: list[_Cohort] = []  # held gangs whose next iteration starts in this compute pass
        self._in_compute_pass = False
        # The latest instant whose first decision point has completed: a later decision point at
        # the same instant (after a zero-length all-reduce) finds every task boundary at that
        # instant already decided, i.e. the tasks that started there running (non-preemptive).
        self._settled_ns: int = -1
        self._loads_key: tuple[int, int, int, int] | None = None
        self._loads: list[int] = []
        # job -> [(cohort, GPU, worker)]: cohorts this job's ready work waits behind (SRSF watch).
        self._watch: dict[int, list[tuple[_Cohort, int, int]]] = {}
        # Closed-form all-reduces need a rule that admits an all-reduce when none runs on its servers.
        self._solo_comm_ok = bool(getattr(comm_admission, "admits_when_idle", False))
        # Debug records: each job's remaining service and iterations at the last check (monotone).
        self._checked_R: list[int] = list(self.total_service)
        self._checked_iters: list[int] = [0] * n
        self._intervals: list[list[tuple[int, int, int]]] | None = (
            [[] for _ in range(self.num_gpus)] if self.debug else None
        )

    # =================================================================== queries (policy-visible)
    @property
    def now(self) -> float:
        """Current time in seconds."""
        return self.now_ns / NS_PER_S

    def remaining_service(self, job: int) -> int:
        """``R_J`` (ns): remaining GPU compute time of all of ``job``'s workers, as of now."""
        if self.cohorts[job]:
            return self._job_R(job, self.now_ns)
        return self.R[job]

    def gpu_load(self, gpu: int) -> int:
        """``L_g`` (ns): sum of the remaining service of the jobs resident on ``gpu`` (Alg. 1)."""
        total = 0
        for job, _ in self.residents[gpu]:
            total += self.remaining_service(job)
        return total

    def gpu_loads(self) -> list[int]:
        """``L_g`` of every GPU (ns, read-only list); cached until time, events or residents change."""
        key = (self.now_ns, self._n_events, self.placements, self.num_done)
        if self._loads_key == key:
            return self._loads
        cache: dict[int, int] = {}
        loads = []
        for g in range(self.num_gpus):
            total = 0
            for job, _ in self.residents[g]:
                r = cache.get(job)
                if r is None:
                    r = cache[job] = self.remaining_service(job)
                total += r
            loads.append(total)
        self._loads_key = key
        self._loads = loads
        return loads

    def fits(self, gpu: int, job: int) -> bool:
        """Can ``gpu`` host a worker of ``job`` now (memory, or exclusivity without sharing)?"""
        if not self.gpu_sharing:
            return not self.residents[gpu]
        return self.gpu_mem_free[gpu] >= self.mem_mb[job]

    def comm_remaining_bytes(self, job: int) -> float:
        """Bytes ``job``'s running all-reduce still has to move, as of now. No side effect."""
        if job not in self.comm_running:
            raise KeyError(f"job {job} has no running all-reduce")
        bank_t = self.comm_bank_t[job]
        per_byte = self.comm_per_byte[job]
        t = self.now_ns
        if t <= bank_t or per_byte == 0.0:
            return self.comm_bank_rem[job]
        rem = self.comm_bank_rem[job] - (t - bank_t) / per_byte
        return rem if rem > 0.0 else 0.0

    def mark_probe(self, probed_job: int, prober: int) -> None:
        """Record that ``prober``'s admission check read ``probed_job``'s remaining size.

        Only used with ``probe_defect=True``: the authors' simulator advances the probed transfer
        by the elapsed time on every check (``get_rest_size`` adds to ``transferred_size`` without
        moving ``last_change_time``), once per 1 ms tick per waiting job. The continuous-time
        equivalent implemented here: while ``p`` rejected jobs keep probing a transfer, it moves
        ``1 + p`` times as fast.
        """
        if self.probe_defect:
            self._probe_marks[prober] = probed_job

    def job_k(self, job: int) -> int:
        """``k`` that an all-reduce of ``job`` would see now if it started (max over its servers)."""
        return max(self.comm_count[s] for s in self.job_servers[job]) + 1

    def allreduce_ns(self, job: int, k: int = 1) -> int:
        """Eq. (5) in ns for ``job``'s message under constant ``k``-way contention."""
        per_byte = k * self.b_ns + (k - 1) * self.eta_ns
        return self.a_ns + _ceil(self.message_bytes[job] * per_byte)

    # =================================================================== main loop
    def run(self) -> SimResult:
        """Simulate until every job has finished; return the per-job records."""
        self.advance()
        return self.result()

    def next_event_ns(self) -> float:
        """Time (ns) of the next decision point: the earliest pending event or arrival (inf: none)."""
        t = self._heap[0][0] if self._heap else math.inf
        if self._next_arrival < self.num_jobs and self.arrival_ns[self._next_arrival] < t:
            t = self.arrival_ns[self._next_arrival]
        return t

    def advance(self, until_s: float | None = None) -> bool:
        """Process decision points (in time order) up to and including ``until_s`` seconds (all if None).

        When it stops early the clock is moved to ``until_s`` (no event lies in between), so
        queries such as :meth:`comm_remaining_bytes` see that instant.

        Returns:
            True when every job has finished.

        Raises:
            InvariantError: nothing can happen any more but jobs are unfinished (e.g. a job that
                fits on no GPU), or a debug invariant failed.
        """
        # Locals are typed (ints, not inf) and methods called directly, so that the compiled
        # build runs this loop on machine integers with native calls.
        n = self.num_jobs
        heap = self._heap
        event: tuple[int, int, int, Any, int]
        arrival = self.arrival_ns
        pop = heappop
        gpu_version = self.gpu_version
        comm_version = self.comm_version
        comm_running = self.comm_running
        comm_end_ns = self.comm_end
        comm_entry = self._comm_entry
        comm_seq = self._comm_seq
        push = heappush
        bounded = until_s is not None
        limit = int(round(until_s * NS_PER_S)) if until_s is not None else 0
        arrivals_left = self._next_arrival < n
        next_arrival = arrival[self._next_arrival] if arrivals_left else 0
        decision_points = 0
        t = 0
        try:
            while self.num_done < n:
                if heap:
                    t = heap[0][0]
                    if arrivals_left and next_arrival < t:
                        t = next_arrival
                elif arrivals_left:
                    t = next_arrival
                else:  # nothing left to happen
                    if bounded:
                        if limit > self.now_ns:
                            self.now_ns = limit
                        return False
                    raise InvariantError(
                        f"task-level engine stuck at t={self.now:.3f}s: {len(self.queue)} jobs queued, "
                        f"{len(self.comm_waiting)} all-reduces waiting, nothing running"
                    )
                if bounded and t > limit:
                    if limit > self.now_ns:
                        self.now_ns = limit  # nothing happens in between
                    return False
                if t < self.now_ns:
                    raise InvariantError(f"time went backwards: {t} < {self.now_ns}")
                self.now_ns = t
                decision_points += 1
                # 1. Every event at t (Alg. 3 lines 4-5): task ends, all-reduce ends, cohort ends/cuts.
                events = 0
                while heap and heap[0][0] == t:
                    event = pop(heap)
                    kind = event[2]
                    ver = event[4]
                    events += 1
                    if kind == _EV_TASK:
                        g: int = event[3]
                        if ver == gpu_version[g]:
                            self._task_end(g, t)
                    elif kind == _EV_COMM:
                        x: int = event[3]
                        if ver == comm_version[x] and x in comm_running:
                            end = comm_end_ns[x]
                            if end == t:
                                self._comm_end(x, t)
                            else:  # slowed down since posted: re-post (see _comm_entry)
                                comm_entry[x] = end
                                push(heap, (end, comm_seq[x], _EV_COMM, x, ver))
                    else:
                        c: _Cohort = event[3]
                        if ver == c.version and c.active:
                            if c.hold and t == c.end:
                                self._cohort_compute_end(c, t)
                            else:
                                self._cohort_materialise(c, t)
                self._n_events += events
                # 2. Arrivals (line 6).
                if arrivals_left and next_arrival <= t:
                    while self._next_arrival < n and arrival[self._next_arrival] <= t:
                        j = self._next_arrival
                        self.state[j] = QUEUED
                        self.queue.append(j)
                        self._next_arrival += 1
                        self._need_placement = True
                    arrivals_left = self._next_arrival < n
                    next_arrival = arrival[self._next_arrival] if arrivals_left else 0
                # 3. Placement (lines 7-14), all-reduces (15-22), compute tasks (23-31).
                if self._need_placement:
                    self._need_placement = False
                    if self.queue:
                        self._placement_pass(t)
                if self._need_comm:
                    self._need_comm = False
                    if self.comm_waiting:
                        self._comm_pass(t)
                if self._decide or self._restart:
                    self._compute_pass(t)
                if self.debug:
                    self.check_invariants()
                self._settled_ns = t
        finally:
            self._n_decision_points += decision_points
            self._flush_stats()
        if self.debug:
            self.check_invariants(final=True)
        return True

    def _flush_stats(self) -> None:
        """Copy the run's counters into :attr:`stats` (totals since the engine was built)."""
        stats = self.stats
        stats.events = self._n_events
        stats.compute_tasks_started = self._n_tasks_started
        stats.comm_tasks = self._n_comm_tasks
        stats.cohorts_formed = self._n_cohorts
        stats.gangs_formed = self._n_gangs
        stats.cohort_cuts = self._n_cuts
        stats.gang_restarts = self._n_restarts
        stats.comm_passes = self._n_comm_passes
        stats.placement_passes = self._n_placement_passes
        stats.decision_points = self._n_decision_points

    # =================================================================== passes
    def _placement_pass(self, t: int) -> None:
        """Alg. 3 lines 6–14: try queued jobs in SRSF order (E_J = 0), skipping those that do not fit."""
        self._n_placement_passes += 1
        key = self.total_service
        order = sorted(self.queue, key=lambda j: (key[j], j))
        placed = False
        for job in order:
            ids = self.placement(self, job, self.rng)
            if ids is None or len(ids) == 0:
                continue
            self._place(job, [int(g) for g in ids], t)
            placed = True
        if placed:
            self.queue = [j for j in self.queue if self.state[j] == QUEUED]

    def _place(self, job: int, ids: list[int], t: int) -> None:
        g_count = self.G[job]
        if len(ids) != g_count or len(set(ids)) != g_count:
            raise InvariantError(f"placement of job {job} must be {g_count} distinct GPUs, got {ids}")
        mem = self.mem_mb[job]
        for g in ids:
            if not self.fits(g, job):
                raise InvariantError(
                    f"placement of job {job} on GPU {g}: does not fit ({self.gpu_mem_free[g]} MB free)"
                )
        servers = tuple(sorted({self.gpu_server[g] for g in ids}))
        self.state[job] = RUNNING
        self.job_gpus[job] = tuple(ids)
        self.job_servers[job] = servers
        self.multi[job] = len(servers) > 1
        self.placed_ns[job] = t
        self.phase[job] = [FW_READY] * g_count
        self.bw_left[job] = g_count
        self.placements += 1
        if self.multi[job]:
            for s in servers:
                self.multi_on_server[s] = self.multi_on_server[s] + 1
            if self.fast:
                # Another multi-server job now shares these NICs: closed-form all-reduces end here.
                for s in servers:
                    for g in self.server_gpu_ids[s]:
                        cohort = self.cohort_of_gpu[g]
                        if cohort is not None and cohort.comm_ns:
                            self._n_cuts += 1
                            self._cohort_materialise(cohort, t)
        for w, g in enumerate(ids):
            self.gpu_mem_free[g] = self.gpu_mem_free[g] - mem
            self.residents[g].append((job, w))
            self._ready[g][job] = w
            self._became_ready(g, job, t)

    def _comm_pass(self, t: int) -> None:
        """Alg. 3 lines 15–22: ready all-reduces in SRSF order, each admitted or not by the policy."""
        self._n_comm_passes += 1
        R = self.R
        marks = self._probe_marks
        decide = self._comm_decide
        waiting = self.comm_waiting
        lazy = self._lazy_comm
        hold_server = self._hold_server
        hold_count = self._hold_count
        comm_count = self.comm_count
        watch_dec = self._watch_dec
        watch_inc = self._watch_inc
        wait_dec = self._wait_dec
        wait_inc = self._wait_inc
        kernel = self._kernel
        check_kernel = self.debug and kernel != _KERNEL_NONE
        todo = self._comm_dirty if lazy else set(waiting)
        self._comm_dirty = set()
        while todo:
            # One round = Alg. 3 lines 16-22: candidates in SRSF order, the state updated after each
            # admission. A job whose inputs did not change since it was last refused is skipped (its
            # answer is still no); one whose watched server an admission touches is (re)considered
            # in this round if it comes later in the order, else in the next round at this instant.
            in_round = todo if todo <= waiting else todo & waiting
            if len(in_round) == 1:
                for j in in_round:
                    heap = [(R[j], j)]
            else:
                heap = [(R[j], j) for j in in_round]
                heapify(heap)
            self._pass_round = heap
            self._pass_in_round = in_round
            self._pass_next = set()
            while heap:
                key = heappop(heap)
                job = key[1]
                in_round.discard(job)
                if marks:
                    marks.pop(job, None)
                m = hold_count[job]
                if m and comm_count[hold_server[job]] >= m:
                    continue  # the rule's last refusal still stands (its guarantee), no need to ask
                if kernel == _KERNEL_ADADUAL:
                    admit, dec, inc, hs, hm = self._adadual(job)
                elif kernel == _KERNEL_SRSF:
                    admit, dec, inc, hs, hm = self._srsf_n(job)
                else:
                    admit, dec, inc, hs, hm = decide(self, job)
                if check_kernel:
                    self._check_kernel(job, (admit, dec, inc, hs, hm))
                if admit:
                    if marks:
                        marks.pop(job, None)
                    waiting.discard(job)
                    hold_count[job] = 0
                    if watch_dec[job] or watch_inc[job]:
                        self._comm_rewatch(job, (), ())
                    self._pass_key = key
                    self._start_comm(job, t)
                else:
                    hold_server[job] = hs
                    hold_count[job] = hm
                    if lazy:
                        # Register on the servers whose change may turn the refusal (inlined _comm_rewatch).
                        old = watch_dec[job]
                        if old != dec:
                            for s in old:
                                wait_dec[s].discard(job)
                            for s in dec:
                                wait_dec[s].add(job)
                            watch_dec[job] = dec
                        old = watch_inc[job]
                        if old != inc:
                            for s in old:
                                wait_inc[s].discard(job)
                            for s in inc:
                                wait_inc[s].add(job)
                            watch_inc[job] = inc
            todo = self._pass_next
            if not lazy and todo:
                todo = set(waiting)
        self._pass_round = None
        if self.probe_defect:
            self._apply_probe_defect(t)

    def _adadual(self, job: int) -> tuple[bool, tuple[int, ...], tuple[int, ...], int, int]:
        """The AdaDUAL kernel: ``decide_hold`` of ``ddl_gym.baselines.ada_srsf.policy.AdaDual`` (Alg. 2, no
        probe defect), line for line, on the engine's own state (see that method for the reasoning)."""
        count = self.comm_count
        servers = self.job_servers[job]
        first = -1
        i = 0
        for s in servers:  # lines 4-9
            c = count[s]
            if c:
                if c > 1:  # lines 21-23: wait while the most crowded server runs two or more
                    crowded = self._most_crowded(servers)
                    return False, self._server_tuple[crowded], (), crowded, 2
                if first < 0:
                    first = i
            i += 1
        if first < 0:
            return True, (), (), 0, 0  # lines 10-12
        s_first = servers[first]
        old = -1
        for j in self.comm_on_server[s_first]:  # its one running all-reduce
            old = j
        m_old = self._comm_rem_at(old, self.now_ns)  # line 14
        if m_old > 0.0 and self.message_bytes[job] / m_old < self._kernel_threshold:  # lines 15-19
            return True, (), (), 0, 0
        return False, self._server_tuple[s_first], servers[:first], 0, 0

    def _srsf_n(self, job: int) -> tuple[bool, tuple[int, ...], tuple[int, ...], int, int]:
        """The SRSF(n) kernel: ``decide_hold`` of ``ddl_gym.baselines.ada_srsf.policy.SRSFn``."""
        count = self.comm_count
        servers = self.job_servers[job]
        n = self._kernel_n
        for s in servers:
            if count[s] >= n:
                crowded = self._most_crowded(servers)
                return False, self._server_tuple[crowded], (), crowded, n
        return True, (), (), 0, 0

    def _most_crowded(self, servers: tuple[int, ...]) -> int:
        """The server of ``servers`` running the most all-reduces (lowest index on ties)."""
        count = self.comm_count
        best = servers[0]
        most = count[best]
        for s in servers:
            if count[s] > most:
                best = s
                most = count[s]
        return best

    def _check_kernel(self, job: int,
                      answer: tuple[bool, tuple[int, ...], tuple[int, ...], int, int]) -> None:
        """Debug: the engine's kernel answered as the rule itself does."""
        expected = tuple(self._comm_decide(self, job))
        if answer != expected:
            raise InvariantError(f"admission kernel for job {job} at {self.now_ns} ns answered {answer}, "
                                 f"the rule {expected}")

    @staticmethod
    def _decide_function(rule: CommAdmission) -> Callable[[TaskLevelSimulator, int], tuple[bool, tuple[int, ...], tuple[int, ...], int, int]]:
        """``f(sim, job) -> (admit, dec, inc, hold_server, hold_count)`` from whatever the rule offers."""
        decide_hold = getattr(rule, "decide_hold", None)
        if decide_hold is not None:
            return decide_hold
        decide = getattr(rule, "decide", None)
        if decide is not None:
            def with_decide(sim: TaskLevelSimulator, job: int) -> tuple[bool, tuple[int, ...], tuple[int, ...], int, int]:
                admit, dec, inc = decide(sim, job)
                return admit, dec, inc, 0, 0

            return with_decide

        def plain(sim: TaskLevelSimulator, job: int) -> tuple[bool, tuple[int, ...], tuple[int, ...], int, int]:
            # A plain ``rule(sim, job) -> bool``: a refusal watches every server of the job.
            servers = sim.job_servers[job]
            if rule(sim, job):
                return True, (), (), 0, 0
            return False, servers, servers, 0, 0

        return plain

    def _comm_rewatch(self, job: int, dec: tuple[int, ...], inc: tuple[int, ...]) -> None:
        """Register a refused job on the servers whose task ending (dec) / starting (inc) matters."""
        old = self._watch_dec[job]
        if old != dec:
            wait_dec = self._wait_dec
            for s in old:
                wait_dec[s].discard(job)
            for s in dec:
                wait_dec[s].add(job)
            self._watch_dec[job] = dec
        old = self._watch_inc[job]
        if old != inc:
            wait_inc = self._wait_inc
            for s in old:
                wait_inc[s].discard(job)
            for s in inc:
                wait_inc[s].add(job)
            self._watch_inc[job] = inc

    def _server_tasks_changed(self, s: int, started: bool) -> None:
        """An all-reduce started (``started``) or ended on server ``s``: waiting jobs may look again."""
        jobs = self._wait_inc[s] if started else self._wait_dec[s]
        if not jobs:
            return
        heap = self._pass_round
        if heap is None:
            if started:
                self._comm_dirty |= jobs
                return
            hold_server = self._hold_server
            hold_count = self._hold_count
            count = self.comm_count[s]
            dirty = self._comm_dirty
            for j in jobs:
                m = hold_count[j]
                if not (m and hold_server[j] == s and count >= m):  # else: its refusal still stands
                    dirty.add(j)
            return
        R = self.R
        key = self._pass_key
        in_round = self._pass_in_round
        for j in jobs:
            if j in in_round:
                continue
            k = (R[j], j)
            if k > key:
                heappush(heap, k)
                in_round.add(j)
            else:
                self._pass_next.add(j)

    def _compute_pass(self, t: int) -> None:
        """Alg. 3 lines 23–31: every idle GPU with ready work runs the SRSF-first ready task."""
        if self._restart:
            self._restart_held(t)
        decide = self._decide
        if not decide:
            return
        self._decide = []
        if not self.fast:
            self._compute_pass_reference(t, decide)
            return
        flag = self._decide_flag
        busy = self.busy
        ready = self._ready
        phase = self.phase
        cohort_of_gpu = self.cohort_of_gpu
        # Tasks started, grouped by (job, task) in order of appearance: key 2·job + (backward task)
        # -> ([workers], [GPUs]). The per-task bookkeeping is done per group afterwards.
        groups: dict[int, tuple[list[int], list[int]]] = {}
        for g in decide:
            flag[g] = False
            if busy[g] or cohort_of_gpu[g] is not None:
                continue
            here = ready[g]
            if not here:
                continue
            if len(here) == 1:
                best, best_w = here.popitem()
            else:
                best, best_w = self._srsf_pick(here, t)
                del here[best]
            busy[g] = True
            key = best + best if phase[best][best_w] == FW_READY else best + best + 1
            group = groups.get(key)
            if group is None:
                groups[key] = ([best_w], [g])
            else:
                group[0].append(best_w)
                group[1].append(g)
        if not groups:
            return
        # Start the tasks (line 28).
        tf = self.tf
        tb = self.tb
        start_ns = self.start_ns
        intervals = self._intervals
        started = 0
        for key, (workers, gpus) in groups.items():
            job = key >> 1
            job_phase = phase[job]
            if key & 1:
                for w in workers:
                    job_phase[w] = BW_RUN
                end = t + tb[job]
            else:
                for w in workers:
                    job_phase[w] = FW_RUN
                end = t + tf[job]
            if start_ns[job] < 0:
                start_ns[job] = t
            if intervals is not None:
                for g in gpus:
                    intervals[g].append((t, end, job))
            started += len(workers)
        self._n_tasks_started += started
        G = self.G
        single = None
        self._in_compute_pass = True
        for key, (workers, gpus) in groups.items():
            job = key >> 1
            if len(workers) > 1 or not key & 1 or G[job] == 1:
                self._cohort_start(job, workers, gpus, t, BW_RUN if key & 1 else FW_RUN)
            elif single is None:
                single = [key]
            else:
                single.append(key)
        self._in_compute_pass = False
        if single is not None:
            # One backward task of a multi-GPU job, not absorbed by a cohort: a task-end event.
            heap = self._heap
            cur_job = self.cur_job
            cur_worker = self.cur_worker
            gpu_version = self.gpu_version
            for key in single:
                job = key >> 1
                workers, gpus = groups[key]
                g = gpus[0]
                cur_job[g] = job
                cur_worker[g] = workers[0]
                gpu_version[g] = version = gpu_version[g] + 1
                self._seq += 1
                heappush(heap, (t + tb[job], self._seq, _EV_TASK, g, version))

    def _srsf_pick(self, here: dict[int, int], t: int) -> tuple[int, int]:
        """SRSF among the ready workers ``{job: worker}`` of one GPU, ties to the lower job index."""
        R = self.R
        cohorts = self.cohorts
        best = -1
        best_r = 0
        best_w = 0
        for job, w in here.items():  # order-free
            r = R[job] if not cohorts[job] else self._job_R(job, t)
            if best < 0 or r < best_r or (r == best_r and job < best):
                best, best_r, best_w = job, r, w
        return best, best_w

    def _compute_pass_reference(self, t: int, decide: list[int]) -> None:
        """The compute pass of the reference path (``fast=False``): one task-end event per task."""
        flag = self._decide_flag
        busy = self.busy
        ready = self._ready
        phase = self.phase
        tf = self.tf
        tb = self.tb
        start_ns = self.start_ns
        cur_job = self.cur_job
        cur_worker = self.cur_worker
        gpu_version = self.gpu_version
        intervals = self._intervals
        plain: list[tuple[int, int]] = []
        for g in decide:
            flag[g] = False
            if busy[g]:
                continue
            here = ready[g]
            if not here:
                continue
            if len(here) == 1:
                best, best_w = here.popitem()
            else:
                best, best_w = self._srsf_pick(here, t)
                del here[best]
            job_phase = phase[best]
            if job_phase[best_w] == FW_READY:
                job_phase[best_w] = FW_RUN
                end = t + tf[best]
            else:
                job_phase[best_w] = BW_RUN
                end = t + tb[best]
            if start_ns[best] < 0:
                start_ns[best] = t
            if intervals is not None:
                intervals[g].append((t, end, best))
            busy[g] = True
            cur_job[g] = best
            cur_worker[g] = best_w
            gpu_version[g] = gpu_version[g] + 1
            plain.append((g, end))
        if not plain:
            return
        self._n_tasks_started += len(plain)
        heap = self._heap
        push = heappush
        for g, end in plain:  # in the order the tasks started
            self._seq += 1
            push(heap, (end, self._seq, _EV_TASK, g, gpu_version[g]))

    # =================================================================== compute tasks
    def _task_end(self, g: int, t: int) -> None:
        job = self.cur_job[g]
        w = self.cur_worker[g]
        self.busy[g] = False
        self.cur_job[g] = -1
        self._mark_decide(g)
        ph = self.phase[job][w]
        self.tasks_done[job] = self.tasks_done[job] + 1
        if ph == FW_RUN:
            self.phase[job][w] = BW_READY
            self._ready[g][job] = w
            self.R[job] = self.R[job] - self.tf[job]
        else:
            self.phase[job][w] = SYNC
            self.R[job] = self.R[job] - self.tb[job]
            self.bw_left[job] = self.bw_left[job] - 1
            if self.bw_left[job] == 0:
                self._iteration_compute_done(job, t)
        if self.fast:
            self._notify_priority_change(job, t)

    def _iteration_compute_done(self, job: int, t: int) -> None:
        if self.multi[job]:
            self.comm_waiting.add(job)
            self._comm_dirty.add(job)
            self._need_comm = True
        else:
            self._iteration_done(job, t)

    def _iteration_done(self, job: int, t: int) -> None:
        self.iters_done[job] = self.iters_done[job] + 1
        if self.iters_done[job] >= self.F[job]:
            self._finish(job, t)
            return
        g_count = self.G[job]
        self.phase[job] = [FW_READY] * g_count
        self.bw_left[job] = g_count
        held = self.held[job]
        if held is not None:
            # Its GPUs are held idle for it and nothing else waits on them: it restarts as a
            # gang in the compute pass at t, unless something else becomes ready there first.
            held.pending = True
            self._restart.append(held)
            return
        ready = self._ready
        for w, g in enumerate(self.job_gpus[job]):
            ready[g][job] = w
        cohort_of_gpu = self.cohort_of_gpu
        busy = self.busy
        flag = self._decide_flag
        decide = self._decide
        for w, g in enumerate(self.job_gpus[job]):
            cohort = cohort_of_gpu[g]
            if cohort is not None:
                if cohort.holding:
                    self._release_held(cohort, t)
                else:
                    self._cohort_interference(cohort, g, job, w, t)
            elif not busy[g] and not flag[g]:
                flag[g] = True
                decide.append(g)

    def _became_ready(self, g: int, job: int, t: int) -> None:
        """A worker of ``job`` on ``g`` has a ready task: decide now if idle, else maybe cut a cohort."""
        cohort = self.cohort_of_gpu[g]
        if cohort is not None:
            if cohort.holding:
                self._release_held(cohort, t)
            else:
                self._cohort_interference(cohort, g, job, self.job_gpus[job].index(g), t)
        elif not self.busy[g]:
            self._mark_decide(g)

    def _mark_decide(self, g: int) -> None:
        if not self._decide_flag[g]:
            self._decide_flag[g] = True
            self._decide.append(g)

    def _finish(self, job: int, t: int) -> None:
        held = self.held[job]
        if held is not None:
            self._release_held(held, t)
        if self.R[job] != 0 or self.cohorts[job]:
            raise InvariantError(f"job {job} finished with remaining service {self.R[job]} ns (work not conserved)")
        self.state[job] = DONE
        self.finish_ns[job] = t
        self.num_done += 1
        mem = self.mem_mb[job]
        for w, g in enumerate(self.job_gpus[job]):
            self.gpu_mem_free[g] = self.gpu_mem_free[g] + mem
            self.residents[g].remove((job, w))
        if self.multi[job]:
            for s in self.job_servers[job]:
                self.multi_on_server[s] = self.multi_on_server[s] - 1
        self._need_placement = True

    # =================================================================== communication tasks
    def _start_comm(self, job: int, t: int) -> None:
        self.comm_running[job] = None
        self._n_comm_tasks += 1
        servers = self.job_servers[job]
        count = self.comm_count
        on_server = self.comm_on_server
        comm_k = self.comm_k
        # Running all-reduces whose k (max count over their servers) rises: only those are re-rated.
        changed = None
        for s in servers:
            c = count[s] + 1
            count[s] = c
            jobs = on_server[s]
            for j in jobs:
                if comm_k[j] < c:
                    if changed is None:
                        changed = {j}
                    else:
                        changed.add(j)
            jobs.add(job)
        wait_inc = self._wait_inc
        for s in servers:
            if wait_inc[s]:
                self._server_tasks_changed(s, True)
        comm_k[job] = 0
        self.comm_per_byte[job] = 0.0
        self.comm_bank_t[job] = t + self.a_ns
        self.comm_bank_rem[job] = self.message_bytes[job]
        self.comm_speedup[job] = 1
        if changed is None:
            self._rerate(job, t)
        else:
            changed.add(job)
            for j in sorted(changed):  # job order fixes the event sequence numbers
                self._rerate(j, t)

    def _comm_end(self, job: int, t: int) -> None:
        del self.comm_running[job]
        servers = self.job_servers[job]
        count = self.comm_count
        on_server = self.comm_on_server
        comm_k = self.comm_k
        # Running all-reduces whose k may fall (it was this server's old count): re-rated.
        changed = None
        for s in servers:
            c = count[s]
            count[s] = c - 1
            jobs = on_server[s]
            jobs.discard(job)
            for j in jobs:
                if comm_k[j] == c:
                    if changed is None:
                        changed = {j}
                    else:
                        changed.add(j)
        wait_dec = self._wait_dec
        for s in servers:
            if wait_dec[s]:
                self._server_tasks_changed(s, False)
        self.comm_version[job] = self.comm_version[job] + 1
        self._comm_entry[job] = -1
        self._need_comm = True
        if changed is not None:
            for j in sorted(changed) if len(changed) > 1 else changed:
                self._rerate(j, t)
        self._iteration_done(job, t)

    def _comm_rem_at(self, job: int, t: int) -> float:
        bank_t = self.comm_bank_t[job]
        per_byte = self.comm_per_byte[job]
        if t <= bank_t or per_byte == 0.0:
            return self.comm_bank_rem[job]
        rem = self.comm_bank_rem[job] - (t - bank_t) / per_byte
        return rem if rem > 0.0 else 0.0

    def _rerate(self, job: int, t: int) -> None:
        count = self.comm_count
        k = 0
        for s in self.job_servers[job]:
            if count[s] > k:
                k = count[s]
        per_byte = (k * self.b_ns + (k - 1) * self.eta_ns) / self.comm_speedup[job]
        comm_per_byte = self.comm_per_byte
        old = comm_per_byte[job]
        if per_byte == old and k == self.comm_k[job]:
            return
        bank_t = self.comm_bank_t
        if old != 0.0 and t > bank_t[job]:
            rem = self.comm_bank_rem[job] - (t - bank_t[job]) / old
            self.comm_bank_rem[job] = rem if rem > 0.0 else 0.0
            bank_t[job] = t
        self.comm_k[job] = k
        comm_per_byte[job] = per_byte
        end = bank_t[job] + _ceil(self.comm_bank_rem[job] * per_byte)
        self.comm_end[job] = end
        self._seq += 1
        entry = self._comm_entry[job]
        if 0 <= entry < end:
            self._comm_seq[job] = self._seq  # the live entry pops earlier and re-posts itself
            return
        version = self.comm_version[job] + 1
        self.comm_version[job] = version
        self._comm_entry[job] = end
        self._comm_seq[job] = self._seq
        heappush(self._heap, (end, self._seq, _EV_COMM, job, version))

    def _apply_probe_defect(self, t: int) -> None:
        counts: dict[int, int] = {}
        for probed in self._probe_marks.values():
            if probed in self.comm_running:
                counts[probed] = counts.get(probed, 0) + 1
        for job in sorted(self.comm_running):
            factor = 1 + counts.get(job, 0)
            if factor != self.comm_speedup[job]:
                self.comm_speedup[job] = factor
                self._rerate(job, t)

    # =================================================================== fast path: cohorts
    # A cohort is a set of workers of one job that started the same task at the same instant. Until
    # something could change its schedule it runs in closed form; its schedule is periodic from a
    # virtual origin o: iteration m's forward tasks run in [o+mP, o+mP+t_f), its backward tasks in
    # [o+mP+t_f, o+mP+t_c) and, for a closed-form multi-server gang, its uncontended all-reduce in
    # [o+mP+t_c, o+(m+1)P). A partial cohort covers the rest of its workers' current iteration; a
    # *gang* (every worker of the job) may cover whole iterations (``whole``). Nothing is simulated
    # inside; the cohort is materialised back into task-level state at its end, or at the first
    # instant at which another job could take one of its GPUs.
    def _work(self, c: _Cohort, x: int) -> int:
        """Per-worker compute time finished in ``[0, x]`` of cohort ``c``'s schedule (ns)."""
        span = c.end - c.origin
        if x > span:
            x = span
        n = x // c.period
        r = x - n * c.period
        job = c.job
        done = n * self.tc[job]
        tf = self.tf[job]
        if r >= tf:
            done += tf
            if r >= self.tc[job]:
                done += self.tb[job]
        return done

    def _job_R(self, job: int, t: int) -> int:
        """``R_J`` at time ``t`` counting the closed-form progress of its cohorts (up to their ends)."""
        r = self.R[job]
        for c in self.cohorts[job]:
            r -= c.size * (self._work(c, t - c.origin) - c.work0)
        return r

    def _job_R_floor(self, job: int) -> int:
        """``R_J`` once its current cohorts have finished: the lowest it gets before another event."""
        r = self.R[job]
        for c in self.cohorts[job]:
            r -= c.size * (self._work(c, c.end - c.origin) - c.work0)
        return r

    def _next_decision(self, c: _Cohort, t: int, strict: bool) -> int:
        """First instant ``>= t`` (``> t`` if the decision at ``t`` was taken) at which ``c``'s GPUs decide.

        Decisions happen at task boundaries (offsets 0 and ``t_f`` of each period) and, for a
        closed-form multi-server gang, throughout its all-reduce (its GPUs are idle then).
        """
        period = c.period
        tf, tc = self.tf[c.job], self.tc[c.job]
        n = (t - c.origin) // period
        r = t - c.origin - n * period
        base = c.origin + n * period
        if r == 0:
            return base + tf if strict else t
        if r < tf:
            return base + tf
        if r == tf:
            if not strict:
                return t
            return base + tc if tc < period else base + period
        if r < tc:
            return base + tc if tc < period else base + period
        if strict:
            raise InvariantError(f"cohort of job {c.job}: strict decision query inside its all-reduce at {t}")
        return t

    def _alone_on_servers(self, job: int) -> bool:
        """Is ``job`` the only multi-server job resident on each of its servers?"""
        multi_on_server = self.multi_on_server
        for s in self.job_servers[job]:
            if multi_on_server[s] != 1:
                return False
        return True

    def _has_other_ready(self, job: int) -> bool:
        """Does another job have a ready task on one of ``job``'s GPUs?"""
        ready = self._ready
        for g in self.job_gpus[job]:
            here = ready[g]
            if here and (len(here) > 1 or job not in here):
                return True
        return False

    def _cohort_start(self, job: int, workers: list[int], gpus: list[int], t: int, running_phase: int) -> None:
        """Workers ``workers`` (on ``gpus``) of ``job`` all started the same task at ``t``: run on in closed form."""
        tf, tc = self.tf[job], self.tc[job]
        c = _Cohort()
        c.job = job
        size = c.size = len(workers)
        c.workers = workers
        c.gpus = gpus
        c.t0 = t
        # Started with the forward (offset 0) or the backward task (offset t_f); the per-worker
        # work done at that offset is the offset itself.
        phase0 = c.phase0 = c.work0 = 0 if running_phase == FW_RUN else tf
        origin = c.origin = t - phase0
        c.iter0 = self.iters_done[job]
        c.comm_ns = 0
        c.whole = False
        c.period = tc
        c.end = origin + tc  # the rest of this iteration's compute
        gang = size == self.G[job]
        if gang:
            iters_left = self.F[job] - self.iters_done[job]
            if not self.multi[job]:
                # One server: the all-reduce is free, so whole iterations follow back to back.
                c.whole = True
                c.end = origin + iters_left * tc
            elif (self._solo_comm_ok and self._alone_on_servers(job) and not self._has_other_ready(job)
                    and self.allreduce_ns(job, 1) > 0):
                # No other multi-server job on its servers, so nobody can contend for its NICs and
                # its all-reduce is admitted at once with k = 1; no other work waits on its GPUs.
                # (A zero-length all-reduce, a = 0 and M = 0, is simulated as a held gang instead:
                # its GPUs are idle for an instant at every iteration boundary, where another job's
                # ready work takes them, and a closed form with period t_c cannot say so.)
                c.comm_ns = self.allreduce_ns(job, 1)
                c.whole = True
                c.period = tc + c.comm_ns
                c.end = origin + iters_left * c.period
        c.cut = -1
        c.version = 0
        c.active = True
        c.holding = False
        c.pending = False
        # A multi-server gang whose all-reduce must be simulated (it may be contended) keeps its
        # GPUs through the all-reduce while no other work is ready on them (see _cohort_compute_end).
        c.hold = gang and not c.whole and self.multi[job]
        cohort_of_gpu = self.cohort_of_gpu
        for g in gpus:
            cohort_of_gpu[g] = c  # its tasks' end events are replaced by the cohort's
        self.cohorts[job].append(c)
        self._seq += 1
        heappush(self._heap, (c.end, self._seq, _EV_COHORT, c, 0))
        self._n_cohorts += 1
        if gang:
            self._n_gangs += 1
        if self._watch:
            # R_J's floor falls (its R at t does not: the decisions at t stand): re-check the
            # cohorts this job's other workers wait behind, from their next boundary on.
            self._notify_priority_change(job, t, strict=True)
        if not c.comm_ns:
            # Work already waiting on these GPUs lost the decision at t; it may win a later boundary.
            phase = self.phase
            residents = self.residents
            ready = self._ready
            for g in gpus:
                if not ready[g]:
                    continue
                for other, w in residents[g]:  # in residence order (it fixes event sequence numbers)
                    if other != job:
                        p = phase[other][w]
                        if p == FW_READY or p == BW_READY:
                            self._cohort_interference(c, g, other, w, t, strict=True)
                            if not c.active or c.cut >= 0:
                                return

    def _cohort_interference(self, c: _Cohort, g: int, other: int, w: int, t: int, strict: bool = False) -> None:
        """``other``'s worker ``w`` has ready work on ``c``'s GPU ``g``: cut ``c`` where that matters."""
        if not c.active:
            return
        if c.holding:
            if self._in_compute_pass:
                raise InvariantError(f"held gang of job {c.job} interfered with during the compute pass")
            self._release_held(c, t)
            return
        # At a second decision point of an instant its boundary decision has already been taken.
        at = self._next_decision(c, t, strict or t == self._settled_ns)
        if at >= c.end:
            return  # the cohort ends (and its GPUs decide) by then anyway
        if not c.comm_ns:
            # SRSF at that boundary. R only falls while a job runs: if ``other`` loses even with
            # its lowest R before its next event, against c's job's R at the boundary (which can
            # only be lower still), it loses at every later boundary too, until one of its events
            # lowers its R further — then this is called again.
            r_other = self._job_R_floor(other) if self.cohorts[other] else self.R[other]
            job = c.job
            r_job = self._job_R(job, at)
            if r_other > r_job or (r_other == r_job and other > job):
                watch = self._watch.get(other)
                if watch is None:
                    self._watch[other] = [(c, g, w)]
                else:
                    watch.append((c, g, w))
                return
        self._cohort_cut_at(c, at)

    def _notify_priority_change(self, job: int, t: int, strict: bool = False) -> None:
        """``job``'s remaining service fell: cohorts it waits behind may now lose a boundary to it."""
        watch = self._watch.pop(job, None)
        if not watch:
            return
        phase = self.phase[job]
        cohort_of_gpu = self.cohort_of_gpu
        for c, g, w in watch:
            if cohort_of_gpu[g] is c and not c.holding and (phase[w] == FW_READY or phase[w] == BW_READY):
                self._cohort_interference(c, g, job, w, t, strict)

    def _cohort_cut_at(self, c: _Cohort, at: int) -> None:
        if at <= self.now_ns:
            if self._in_compute_pass:
                raise InvariantError(f"cohort of job {c.job} cut at {at} during the compute pass at {self.now_ns}")
            self._n_cuts += 1
            self._cohort_materialise(c, self.now_ns)
            return
        if 0 <= c.cut <= at:
            return
        c.cut = at
        c.version += 1
        self._seq += 1
        heappush(self._heap, (at, self._seq, _EV_COHORT, c, c.version))
        self._n_cuts += 1

    def _cohort_materialise(self, c: _Cohort, t: int) -> None:
        """Turn cohort ``c`` back into task-level state at time ``t`` (what per-task events give)."""
        job = c.job
        tf, tc = self.tf[job], self.tc[job]
        size = c.size
        x = t - c.origin
        # At a second decision point of instant t (after a zero-length all-reduce) the tasks the
        # cohort started at t have started (the first decision point decided its boundary at t):
        # materialise them as running, not as ready.
        settled = t == self._settled_ns
        if self.debug:
            self._cohort_log_tasks(c, t, settled)
        self.R[job] = self.R[job] - (size * (self._work(c, x) - c.work0))
        c.active = False
        self.cohorts[job].remove(c)
        self._free_gpus(c.gpus)
        if c.whole:
            n = x // c.period
            r = x - n * c.period
        else:
            n, r = 0, x
        g_count = self.G[job]
        if r == 0 and n > 0 and not settled:
            # A gang's iteration iter0+n-1 ended exactly now (last backward on one server, else
            # its all-reduce). (Settled: its next iteration's forward tasks started now, below.)
            self.iters_done[job] = c.iter0 + n - 1
            self.phase[job] = [SYNC] * g_count
            self.bw_left[job] = 0
            self._iteration_done(job, t)
            return
        if c.whole:
            self.iters_done[job] = c.iter0 + n
            self.bw_left[job] = g_count
        base = c.origin + n * c.period
        if r < tf:
            self._resume_tasks(c, FW_RUN, base + tf)
        elif r == tf and settled:
            self._resume_tasks(c, BW_RUN, base + tc)
        elif r == tf:
            phase = self.phase[job]
            ready = self._ready
            for w, g in zip(c.workers, c.gpus):
                phase[w] = BW_READY
                ready[g][job] = w
        elif r < tc:
            self._resume_tasks(c, BW_RUN, base + tc)
        else:
            phase = self.phase[job]
            for w in c.workers:
                phase[w] = SYNC
            if r == tc:
                self.bw_left[job] = self.bw_left[job] - size
                if self.bw_left[job] == 0:
                    self._iteration_compute_done(job, t)
            else:
                self.bw_left[job] = 0
                self._comm_resume(job, base + tc, base + c.period)

    def _cohort_compute_end(self, c: _Cohort, t: int) -> None:
        """A multi-server gang finished this iteration's compute: hold its GPUs over the all-reduce?

        While no other job has ready work on any of its GPUs the schedule is the same whether the
        GPUs idle free or held: the gang keeps them (its workers wait for the all-reduce as usual)
        and restarts its next iteration on all of them at once, without per-GPU decisions. The
        first ready work of another job on one of them releases them all (:meth:`_release_held`).
        """
        job = c.job
        if self._has_other_ready(job):
            self._cohort_materialise(c, t)
            return
        if self.debug:
            self._cohort_log_tasks(c, t)
        self.R[job] = self.R[job] - (c.size * (self._work(c, t - c.origin) - c.work0))
        self.cohorts[job].remove(c)
        c.holding = True
        c.version += 1
        self.held[job] = c
        self.phase[job] = [SYNC] * self.G[job]
        self.bw_left[job] = 0
        self._iteration_compute_done(job, t)

    def _release_held(self, c: _Cohort, t: int) -> None:
        """Another job wants one of the GPUs a gang holds idle: give them all back (decide now)."""
        c.active = False
        c.holding = False
        job = c.job
        self.held[job] = None
        if c.pending:  # its next iteration is ready: visible to the compute pass from now on
            c.pending = False
            ready = self._ready
            for w, g in enumerate(self.job_gpus[job]):
                ready[g][job] = w
        self._free_gpus(c.gpus)

    def _free_gpus(self, gpus: list[int]) -> None:
        """A cohort's GPUs are idle again: no cohort, not busy, to be decided in this compute pass."""
        cohort_of_gpu = self.cohort_of_gpu
        busy = self.busy
        cur_job = self.cur_job
        flag = self._decide_flag
        decide = self._decide
        for g in gpus:
            cohort_of_gpu[g] = None
            busy[g] = False
            cur_job[g] = -1
            if not flag[g]:
                flag[g] = True
                decide.append(g)

    def _restart_held(self, t: int) -> None:
        """Held gangs whose all-reduce ended at ``t`` and whose GPUs are still uncontested restart."""
        restart = self._restart
        self._restart = []
        heap = self._heap
        for c in restart:
            if not (c.active and c.holding):
                continue  # released: its GPUs decide in this pass like any other
            job = c.job
            tf, tc = self.tf[job], self.tc[job]
            c.holding = False
            self.held[job] = None
            self.cohorts[job].append(c)
            c.t0 = t
            c.origin = t
            c.phase0 = 0
            c.iter0 = self.iters_done[job]
            c.end = t + tc
            c.work0 = 0
            c.cut = -1
            c.version += 1
            c.pending = False
            self.phase[job] = [FW_RUN] * self.G[job]
            self._seq += 1
            heappush(heap, (c.end, self._seq, _EV_COHORT, c, c.version))
            self._n_tasks_started += c.size
            self._n_restarts += 1
            if self._intervals is not None:
                for g in c.gpus:
                    self._intervals[g].append((t, t + tf, job))

    def _resume_tasks(self, c: _Cohort, ph: int, end: int) -> None:
        """The cohort's current task (the same on each of its workers) continues as task events."""
        job = c.job
        phase = self.phase[job]
        heap = self._heap
        for w, g in zip(c.workers, c.gpus):
            phase[w] = ph
            self.busy[g] = True
            self.cur_job[g] = job
            self.cur_worker[g] = w
            self.gpu_version[g] = self.gpu_version[g] + 1
            self._seq += 1
            heappush(heap, (end, self._seq, _EV_TASK, g, self.gpu_version[g]))

    def _comm_resume(self, job: int, start: int, end: int) -> None:
        """Re-create, as a running task, the uncontended all-reduce a gang started at ``start``."""
        self.comm_running[job] = None
        for s in self.job_servers[job]:
            self.comm_count[s] = self.comm_count[s] + 1
            self.comm_on_server[s].add(job)
        self.comm_k[job] = 1
        self.comm_per_byte[job] = self.b_ns + 0 * self.eta_ns  # exactly what _rerate computes for k = 1
        self.comm_bank_t[job] = start + self.a_ns
        self.comm_bank_rem[job] = self.message_bytes[job]
        self.comm_end[job] = end
        self.comm_speedup[job] = 1
        self.comm_version[job] = self.comm_version[job] + 1
        self._seq += 1
        self._comm_entry[job] = end
        self._comm_seq[job] = self._seq
        heappush(self._heap, (end, self._seq, _EV_COMM, job, self.comm_version[job]))
        for s in self.job_servers[job]:
            self._server_tasks_changed(s, True)
        self._need_comm = True

    def _cohort_log_tasks(self, c: _Cohort, t: int, settled: bool = False) -> None:
        """Debug: record the compute tasks a cohort ran (intervals) and count those finished by ``t``
        (``settled``: including those it started at ``t``, see :meth:`_cohort_materialise`)."""
        job = c.job
        tf, tc = self.tf[job], self.tc[job]
        last_m = (t - c.origin) // c.period if c.whole else 0
        done = 0
        for m in range(last_m + 1):
            base = c.origin + m * c.period
            for start, end in ((base, base + tf), (base + tf, base + tc)):
                if start < c.t0 or start > t or (start == t and not settled):
                    continue
                if end <= t:
                    done += 1
                if start > c.t0 and self._intervals is not None:
                    for g in c.gpus:
                        self._intervals[g].append((start, end, job))
        self.tasks_done[job] += done * c.size

    # =================================================================== checks & results
    def check_invariants(self, final: bool = False) -> None:
        """Raise :class:`InvariantError` if an invariant fails (called after every decision point in debug).

        Always: GPU memory never over-committed (and booked consistently), at most one job per GPU
        without sharing, a busy GPU runs a task of one of its resident jobs, no job placed before
        its arrival, iterations within ``[0, F)`` for running jobs, per-server all-reduce counts
        consistent, every job's remaining service never rising and its iterations never falling
        (progress monotone; the clock's monotony is checked by :meth:`advance` itself). ``final``
        (or ``debug`` task records): compute-task intervals on a GPU never overlap, no task before
        its job's arrival; every job finished its ``F`` iterations and ``2·G·F`` compute tasks, no
        earlier than arrival + its ideal run time. Each call is counted by an open
        :func:`ddl_gym.sim.checks.invariant_checks` session.
        """
        _checks.count()
        cap = self.cluster.gpu_memory_mb
        for g in range(self.num_gpus):
            used = sum(self.mem_mb[j] for j, _ in self.residents[g])
            if used > cap + 1e-6 or abs(cap - used - self.gpu_mem_free[g]) > 1e-6:
                raise InvariantError(f"GPU {g}: memory over-committed or mis-booked ({used} MB used of {cap} MB)")
            if not self.gpu_sharing and len(self.residents[g]) > 1:
                raise InvariantError(f"GPU {g} hosts {len(self.residents[g])} jobs without GPU sharing")
            if self.busy[g] and self.cohort_of_gpu[g] is None:
                j, w = self.cur_job[g], self.cur_worker[g]
                if (j, w) not in self.residents[g] or self.phase[j][w] not in (FW_RUN, BW_RUN):
                    raise InvariantError(f"GPU {g} is busy with job {j} worker {w}, which is not running a task there")
            expect = {j: w for j, w in self.residents[g] if self.phase[j][w] in (FW_READY, BW_READY)}
            if self._ready[g] != expect:
                raise InvariantError(f"GPU {g}: ready set {self._ready[g]} disagrees with the phases {expect}")
        counts = [0] * self.num_servers
        for j in self.comm_running:
            for s in self.job_servers[j]:
                counts[s] += 1
        if counts != self.comm_count:
            raise InvariantError(f"per-server all-reduce counts {self.comm_count} disagree with running tasks {counts}")
        for j in range(self.num_jobs):
            r = self.remaining_service(j)
            if r > self._checked_R[j] or self.iters_done[j] < self._checked_iters[j]:
                raise InvariantError(f"job {j}: remaining service rose from {self._checked_R[j]} to {r} ns or "
                                     f"iterations fell from {self._checked_iters[j]} to {self.iters_done[j]} "
                                     "(progress not monotone)")
            self._checked_R[j] = r
            self._checked_iters[j] = self.iters_done[j]
            if self.state[j] in (RUNNING, DONE):
                if self.placed_ns[j] < self.arrival_ns[j]:
                    raise InvariantError(f"job {j} placed at {self.placed_ns[j]} before arrival {self.arrival_ns[j]}")
                if self.state[j] == RUNNING and not 0 <= self.iters_done[j] < self.F[j]:
                    raise InvariantError(f"job {j}: {self.iters_done[j]} iterations done of {self.F[j]} while running")
        if not final:
            return
        if self._intervals is not None:
            for g, ivs in enumerate(self._intervals):
                ivs.sort()
                for (s0, e0, j0), (s1, e1, j1) in zip(ivs, ivs[1:]):
                    if s1 < e0:
                        raise InvariantError(f"GPU {g}: tasks of jobs {j0}, {j1} overlap ({s0}-{e0}, {s1}-{e1} ns)")
                for s0, _, j0 in ivs:
                    if s0 < self.arrival_ns[j0]:
                        raise InvariantError(f"job {j0} ran a task at {s0} before its arrival {self.arrival_ns[j0]}")
        logged = [0] * self.num_jobs
        for ivs in self._intervals or ():
            for _, _, j in ivs:
                logged[j] += 1
        for j in range(self.num_jobs):
            expected = 2 * self.G[j] * self.F[j]
            if self.state[j] != DONE:
                raise InvariantError(f"job {j} never finished")
            if self.iters_done[j] != self.F[j]:
                raise InvariantError(f"job {j}: {self.iters_done[j]} of {self.F[j]} iterations")
            if self._intervals is not None and self.tasks_done[j] != expected:
                raise InvariantError(f"job {j}: {self.tasks_done[j]} compute tasks, expected {expected}")
            if self._intervals is not None and logged[j] != expected:
                raise InvariantError(f"job {j}: {logged[j]} task intervals recorded, expected {expected}")
            # No faster than alone: F iterations of t_c, plus an uncontended all-reduce each across
            # servers (re-rating rounds each end up: 1 ns of slack per iteration; the probe defect
            # speeds transfers up, so the bound does not hold there).
            ideal = self.F[j] * (self.tc[j] + (self.allreduce_ns(j, 1) if self.multi[j] else 0))
            if not self.probe_defect and self.finish_ns[j] - self.arrival_ns[j] < ideal - self.F[j]:
                raise InvariantError(f"job {j} finished {self.finish_ns[j] - self.arrival_ns[j]} ns after arrival, "
                                     f"before its ideal run time {ideal} ns")

    def task_intervals(self) -> list[list[tuple[float, float, int]]]:
        """Debug mode: per GPU, the ``(start_s, end_s, job)`` of every compute task (gangs included)."""
        if self._intervals is None:
            raise ConfigError("task intervals are recorded only with debug=True")
        return [[(s / NS_PER_S, e / NS_PER_S, j) for s, e, j in sorted(ivs)] for ivs in self._intervals]

    def result(self, policy: str = "") -> SimResult:
        """Per-job records: start = first task start, finish = last all-reduce (or backward) end."""
        n = self.num_jobs
        w = self.workload
        start = np.array([s / NS_PER_S if s >= 0 else np.nan for s in self.start_ns], dtype=np.float64)
        finish = np.array([f / NS_PER_S if f >= 0 else np.nan for f in self.finish_ns], dtype=np.float64)
        ideal = np.zeros(n)
        for j in range(n):
            per_iter = self.tc[j] / NS_PER_S
            if self.multi[j]:
                per_iter += self.model.a + self.model.b * self.message_bytes[j]
            ideal[j] = self.F[j] * per_iter
        return SimResult(
            workload=w,
            cluster=self.cluster,
            start=start,
            finish=finish,
            n_servers=np.array([len(s) for s in self.job_servers], dtype=np.int64),
            gpu_ids=list(self.job_gpus),
            ideal_runtime=ideal,
            decisions=self.placements,
            policy=policy,
            extra={"engine": "task", "stats": dict(vars(self.stats))},
        )


# <pure-only> (not in the compiled build)
#: This module's simulator as plain Python, whichever build :data:`TaskLevelSimulator` names.
PurePythonTaskLevelSimulator = TaskLevelSimulator


def _native_simulator() -> type[TaskLevelSimulator] | None:
    """The compiled build of this very source (:mod:`ddl_gym.sim.native`), if in use; else None."""
    from ddl_gym.sim.native import compiled_module

    native = compiled_module(__file__)
    return None if native is None else native.TaskLevelSimulator  # type: ignore[no-any-return]


#: ``"native"`` (the compiled build) or ``"python"``: which build :data:`TaskLevelSimulator` is.
BUILD = "python"
_NATIVE = _native_simulator()
if _NATIVE is not None:
    TaskLevelSimulator = _NATIVE  # type: ignore[misc]
    BUILD = "native"
# </pure-only>
