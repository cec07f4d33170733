"""SJF-BCO offline planner (Yu, Ji, Rajan, Liu, MobiHoc'22, §5 Algorithms 1–3, §6, §7.2 baselines).

The planner turns a set of jobs known up front into a *plan*: for each job, in start order, a GPU
set and a planned start/end time. It simulates a planned clock on its own (it never touches the
event simulator); :mod:`ddl_gym.baselines.sjf_bco.policy` then executes the plan in the simulator with
the real contention dynamics.

Symbols (paper Table 1): ``G_j`` GPUs and ``F_j`` iterations of job ``j``; ``O_s`` GPUs of server
``s``; ``U_s^g`` accumulated estimated execution time of GPU ``g`` (in units of ``ρ̂/u``);
``ρ̂_j(y^k)`` estimated execution time of ``j`` under placement ``y^k``; ``θ_u`` the per-GPU
execution-time limit of Problem (14)/(16); ``T`` the horizon; ``κ`` the FA-FFP/LBSGF threshold;
``λ_j`` LBSGF's server-capacity factor; ``n_g = max_j G_j``.

Decisions where the paper is ambiguous (each is cited where it is implemented):

* **ρ̂ and u/l (§5.1, §5.3).** ``ρ̂_j(y^k) = F_j · τ̂_j`` with ``τ̂_j`` from eq. (8) for the
  candidate placement: its number of servers, and the estimated contention ``p̂_j`` = (planned split
  jobs active on the busiest of its servers at the planned start) + 1 (eq. 6 evaluated on the plan
  so far; jobs planned to start later are not known yet). ``u`` and ``l`` come from the range of
  ``τ_j`` (§5.1): ``τ_j ∈ [τ_low, τ_up]`` with ``τ_low`` = eq. (8) at ``B = b_i`` and one server,
  ``τ_up`` = eq. (8) at ``B = b_e / f(α, max_s O_s)`` and ``min(G_j, |S|)`` servers (a job cannot
  span more servers than exist). Since both the estimate and the actual time lie in
  ``[F_j τ_low, F_j τ_up]``: ``u = max_j τ_up/τ_low``, ``l = min_j τ_low/τ_up``, and the same range
  bounds ``φ = max_j max_{k1,k2} ρ_j(y^k1)/ρ_j(y^k2) ≤ max_j τ_up/τ_low``.
* **Per-(θ, κ) state.** Alg. 1 line 2 initialises ``U = 0`` once; every (θ_u, κ) trial builds a
  schedule from scratch, so ``U``, the planned clock and the running set are reset per trial.
* **Planned clock, "wait for some job to exit" (Alg. 2 lines 8–9, Alg. 3 lines 11–12).** Jobs are
  placed in SJF order at the planned clock; a GPU is *available* if it is idle at the planned clock
  (its planned job has exited). When no placement is possible, the clock advances to the next
  planned exit, that job's GPUs are freed, and the job is retried. With no running job left the
  result is ``∅, T`` (Alg. 2 line 10, Alg. 3 line 13). The clock never goes back, so plan order is
  planned-start order. Shortcut (exact): if even ``ρ̂_low = F_j τ_low`` does not let ``G_j`` allowed
  GPUs satisfy ``U + ρ̂/u ≤ θ_u``, waiting cannot help (``U`` never decreases, ``ρ̂ ≥ ρ̂_low``), so
  ``∅`` is returned at once — the same outcome as waiting for every job to exit first. (If
  ``b_e > b_i`` a two-server placement could beat ``τ_low``; the floor then uses that instead.)
* **Which ρ̂ the filter uses (Alg. 2 line 2, Alg. 3 line 5).** The filter ``U + ρ̂_j(y^k)/u ≤ θ_u``
  needs the placement ``y^k`` it is choosing. For the least-``U`` rules (FA-FFP, LBSGF, LS) the
  chosen set does not depend on the threshold (top-``G_j`` least ``U`` among idle GPUs), so the
  candidate is that set and ``ρ̂`` is evaluated on it: it is accepted iff its largest ``U`` plus
  ``ρ̂/u`` is within ``θ_u`` — exactly Alg. 2 lines 2–4 with ``ρ̂ = ρ̂(candidate)``. For FF and RAND
  (the first ``G_j`` eligible GPUs in index / random order) a fixed point is taken: start from
  ``ρ̂_low``, pick, re-evaluate ``ρ̂`` on the pick, tighten, until the pick satisfies its own limit.
* **T_j (Alg. 2 line 5, Alg. 3 line 8)** = planned start + ``ρ̂_j(y^k)``.
* **Alg. 1 lines 14–18.** A κ whose job loop broke (some ``y_j = ∅``) is infeasible: lines 17–18
  only consider complete schedules. A trial stops early once its partial makespan reaches the best
  one found for this θ (line 17 needs a strict improvement; ``m_θ`` starts at ``T``): exact pruning.
* **κ loop (Alg. 1 line 7).** κ only matters through the set ``{j : G_j ≤ κ}``, so κ values with the
  same set share one trial (identical schedules); the reported κ is the smallest of its class.
* **Bisection (Alg. 1 lines 4–23).** ``bisection="paper"`` is the integer bisection as written: go
  left iff ``m_θ < m`` (strictly better makespan than the best so far). When several feasible θ give
  the same makespan this stops at the first of them, not the tightest; ``bisection="feasible"`` goes
  left iff θ is feasible (``m_θ < T``), which finds the tightest feasible θ that Lemma 2 assumes,
  and still keeps the best-makespan schedule seen.
* **Ties.** Jobs with equal ``G_j`` keep workload order (stable sort, line 3). Equal ``U`` breaks by
  GPU index (first fit, FA-FFP) or by server rank then GPU index (LBSGF line 5 appends per server).
  LBSGF ranks servers by ``Σ_g U_s^g / O_s`` with ties by server index.
* **Horizon.** ``T=None`` uses ``T = ⌈Σ_j F_j τ_up_j⌉ + 1``, for which the plan is always feasible
  (all jobs run one after another, no GPU accumulates more than ``Σ ρ̂/u ≤ T``). With a given ``T``
  and no feasible plan, ``extend_horizon`` doubles ``T`` and plans again (recorded).
* **Baselines (§7.2).** FF, LS and RAND use Alg. 1's framework (SJF order, planned clock, wait
  semantics) with the placement replaced and no κ loop: FF = first ``G_j`` available GPUs in index
  order (server to server) under its own bisected ``θ^FF``; LS = top-``G_j`` least-``U`` GPUs under
  bisected ``θ^LS``; RAND = ``G_j`` available GPUs uniformly at random with ``θ^RAND = T``.

Speed (every decision identical; ``tests/baselines/sjf_bco/test_sjf_bco_digests.py`` pins plans and executions):

* **Trial reuse across bisection steps.** θ enters a trial only through tests ``x <= θ_u + ε``
  (:meth:`Trial._within`). A trial records the largest ``x`` that passed and the smallest that
  failed; any θ' between them replays it bit for bit (:meth:`Trial.valid_for`), so a bisection step
  whose θ lands there reuses it (a pruned trial resumes where it stopped). Alg. 1 as written mostly
  visits such θ (the bisection only goes left on a strict improvement), so one plan costs about one
  schedule per κ class instead of one per (θ, κ).
* **κ classes share their prefix.** With κ_c, every job before the first one with ``G_j > κ_c`` is
  placed by FA-FFP exactly as in the all-FA-FFP schedule, so each class forks one such "spine".
* **Incremental state on plain lists.** For the least-``U`` rules the idle GPUs are kept sorted by
  ``(U, index)``, ``U`` and the busy times in lists, per-server means recomputed only where ``U``
  changed (numpy's pairwise sum replayed on the list, so bit-identical) and kept in Alg. 3 line 2's
  order, eq. (8) memoised. ``U``'s array is brought up to date from the list only when read.
* **"Waiting cannot help", once, late.** The test reads the ``G_j``-th smallest ``U`` by partition.
  It is made once per job and call (no ``U`` changes while it waits), after the job's first wait:
  most waiting jobs fit after one exit, and a hopeless job fails either way (the test only spares
  waiting for every running job).
* **Compiled build.** ``scripts/build_native.py`` compiles this module with mypyc like the engines
  (``BUILD`` says which is in use; the plan records stay this module's classes; ``DDL_GYM_PURE_PYTHON=1``
  disables it); ``tests/baselines/sjf_bco/test_sjf_bco_native.py`` compares the two builds' plans.

Readings that change a headline are named options (:class:`PlanOptions`); the defaults are the
readings above, and ``ddl-gym reproduce sjf-bco`` prints the headline under each of the others:

* ``fa_ffp`` — Alg. 2 **as listed** (``"listing"``, default): line 4 picks the top-``G_j``
  least-``U`` available GPUs, which is exactly §7.2's LS rule, so SJF-BCO with ``κ = max_j G_j``
  *is* LS. **As the prose says** (``"prose"``, §5 "we prefer to pack the job into servers whose
  GPUs are already occupied by some other jobs rather than opening new server(s)"): first fit over
  servers that already host a planned-running job (index order), then the unoccupied servers
  (index order); inside a server least ``U`` first; the θ filter of line 2 as for FF.
* ``lbsgf_pick`` — Alg. 3 line 7 "pick top-``G_j`` workers with least ``U``" from the list built in
  lines 4–5: ``"least-u"`` (default) = the ``G_j`` least-``U`` GPUs of the selected servers (ties by
  server rank); ``"list-order"`` = the first ``G_j`` GPUs of the appended list, i.e. the least-busy
  server filled first (servers in line-2 order, each sorted by ``U``).
* ``rand_pick`` — §7.2 "RAND randomly chooses servers and GPUs": ``"gpus"`` (default) = ``G_j``
  available GPUs uniformly at random; ``"servers"`` = servers in a random order, each server's GPUs
  in a random order, filled server by server (random servers, then random GPUs in them).
* ``job_order`` — ``"sjf"`` (default): every policy places jobs in Alg. 1 line 3's order (§7.2 does
  not say the baselines do); ``"arrival"``: workload order (every job arrives at 0, so this is the
  order of the job list). Meant for the baselines; SJF-BCO itself is defined with SJF order.
"""

from __future__ import annotations

import math
import time
from bisect import bisect_left, insort
from dataclasses import dataclass, field
from heapq import heapify, heappop, heappush
from typing import Any, Callable, ClassVar, NamedTuple, Sequence, cast

import numpy as np

from ddl_gym.sim.model import ClusterSpec, ConfigError, Workload
from ddl_gym.sim.perf import BoundModel, PerformanceModel, RARContentionModel

KINDS = ("sjf-bco", "ff", "ls", "rand")
BISECTION_MODES = ("paper", "feasible")
_EPS = 1e-9
_TRIAL_CACHE = 3  # trials kept per κ class for reuse across bisection steps
_WAITS_UNTESTED = 1  # waits of a job before the "waiting cannot help" test (see Trial._place)


def _pairwise_sum(values: list[float], first: int, count: int) -> float:
    """numpy's float64 pairwise summation of ``values[first:first + count]``, in its exact order."""
    if count < 8:
        total = 0.0
        for i in range(first, first + count):
            total += values[i]
        return total
    if count <= 128:  # numpy's block: eight running sums, combined as a tree, then the tail
        r0, r1, r2, r3 = values[first], values[first + 1], values[first + 2], values[first + 3]
        r4, r5, r6, r7 = values[first + 4], values[first + 5], values[first + 6], values[first + 7]
        i = first + 8
        whole = first + count - count % 8
        while i < whole:
            r0 += values[i]
            r1 += values[i + 1]
            r2 += values[i + 2]
            r3 += values[i + 3]
            r4 += values[i + 4]
            r5 += values[i + 5]
            r6 += values[i + 6]
            r7 += values[i + 7]
            i += 8
        total = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
        while i < first + count:
            total += values[i]
            i += 1
        return total
    half = count // 2
    half -= half % 8
    return _pairwise_sum(values, first, half) + _pairwise_sum(values, first + half, count - half)


def _server_sum(values: list[float], start: int, stop: int) -> float:
    """``np.add.reduceat`` of one server's GPUs, bit for bit: the first value plus numpy's pairwise
    sum of the rest (``tests/baselines/sjf_bco/test_sjf_bco_native.py`` checks it against numpy), on a plain list."""
    return values[start] + _pairwise_sum(values, start + 1, stop - start - 1) if stop - start > 1 else values[start]


# <shared> (the compiled build imports these records from this module: one class for both builds)
@dataclass(frozen=True)
class PlanOptions:
    """Readings of the paper where it is ambiguous (see the module docstring); defaults as before.

    Attributes:
        fa_ffp: Alg. 2 "listing" (top-G_j least U = LS) or "prose" (pack into occupied servers first).
        lbsgf_pick: Alg. 3 line 7 "least-u" (least U over the selected servers) or "list-order".
        rand_pick: §7.2 RAND "gpus" (uniform GPUs) or "servers" (random servers, then random GPUs).
        job_order: "sjf" (Alg. 1 line 3 for every policy) or "arrival" (workload order).
    """

    fa_ffp: str = "listing"
    lbsgf_pick: str = "least-u"
    rand_pick: str = "gpus"
    job_order: str = "sjf"

    CHOICES: ClassVar[dict[str, tuple[str, ...]]] = {"fa_ffp": ("listing", "prose"), "lbsgf_pick": ("least-u", "list-order"),
               "rand_pick": ("gpus", "servers"), "job_order": ("sjf", "arrival")}

    def __post_init__(self) -> None:
        for name, allowed in self.CHOICES.items():
            value = getattr(self, name)
            if value not in allowed:
                raise ConfigError(f"SJF-BCO planner: {name} must be one of {allowed}, got {value!r}")

    def changed(self) -> dict[str, str]:
        """The options that differ from the defaults."""
        return {name: getattr(self, name) for name, allowed in self.CHOICES.items() if getattr(self, name) != allowed[0]}



@dataclass(frozen=True)
class EstimateBounds:
    """The §5.1 range of ``τ_j`` and the §6 approximation quantities derived from it.

    Attributes:
        tau_low: per workload row, eq. (8) with ``B = b_i`` on one server (seconds).
        tau_up: per workload row, eq. (8) with ``B = b_e/f(α, max_s O_s)`` on ``min(G_j, |S|)`` servers.
        u: ``max_j τ_up/τ_low`` (so that ``ρ̂ ≤ u·ρ``).
        l: ``min_j τ_low/τ_up`` (so that ``ρ̂ ≥ l·ρ``).
        phi: ``φ`` of Lemma 4, bounded by ``max_j τ_up/τ_low``.
        n_g: ``max_j G_j``.
    """

    tau_low: np.ndarray
    tau_up: np.ndarray
    u: float
    l: float
    phi: float
    n_g: int

    @property
    def phi_u_over_l(self) -> float:
        """``φ·u/l`` (Lemma 4's bound on ``θ̃_u / θ_u*``)."""
        return self.phi * self.u / self.l

    @property
    def approximation_ratio(self) -> float:
        """``n_g·φ·u/l`` (Theorem 5)."""
        return self.n_g * self.phi_u_over_l


class PlanEntry(NamedTuple):
    """One planned job: GPUs, planned start/end (``T_j``) and ``ρ̂_j`` (seconds). A named tuple: a
    plan of 100k jobs builds 100k of them, three times faster than a frozen dataclass would."""

    job: int
    gpus: tuple[int, ...]
    start: float
    end: float
    rho_hat: float
    method: str  # "fa-ffp", "lbsgf", "ff", "ls" or "rand"
    n_servers: int


@dataclass(frozen=True)
class InitialState:
    """Planner start state (for re-planning while jobs run; offline planning starts empty at 0).

    Attributes:
        clock: planned clock at the start (seconds).
        busy_until: per GPU, the planned time it becomes free (``<= clock`` = idle).
        load: per GPU, initial ``U_s^g`` (in ``ρ̂/u`` units).
        running: ``(planned end, servers spanned)`` of each job already running.
    """

    clock: float
    busy_until: np.ndarray
    load: np.ndarray
    running: tuple[tuple[float, tuple[int, ...]], ...] = ()

    @classmethod
    def empty(cls, cluster: ClusterSpec, clock: float = 0.0) -> InitialState:
        n = cluster.num_gpus
        return cls(clock, np.full(n, -math.inf), np.zeros(n), ())


@dataclass
class PlanResult:
    """What :func:`plan` returns.

    Attributes:
        kind: "sjf-bco", "ff", "ls" or "rand".
        entries: planned jobs in start order (empty if no feasible plan).
        planned_makespan: ``m`` of Alg. 1 (seconds from the plan's start clock, ``max_j T_j``).
        theta_tilde: ``θ̃_u`` — the tightest feasible θ the bisection visited (Lemma 2).
        theta_plan: the θ whose schedule was kept (equals ``theta_tilde`` unless ties, see module doc).
        kappa: the κ of the kept schedule (smallest κ of its class; ``None`` for baselines).
        kappa_class: all κ values giving the same schedule.
        lam: ``λ_j`` (same for all jobs).
        horizon: the ``T`` finally used; ``horizon_doublings`` how often it was doubled.
        w_max: ``Ŵ_max = max_g U_g`` of the kept plan (``ρ̂/u`` units; Lemma 2 says ``≤ θ_plan``).
        bounds: §5.1/§6 quantities (``u``, ``l``, ``φ``, ``n_g``).
        trials: number of (θ, κ-class) schedules built; ``history`` the bisection steps
            ``(θ, m_θ or inf, feasible)``.
        planning_time_s: wall time of the planning (decision time).
        clock0: planned clock at the start.
    """

    kind: str
    entries: list[PlanEntry]
    planned_makespan: float
    theta_tilde: int | None
    theta_plan: int | None
    kappa: int | None
    kappa_class: tuple[int, ...]
    lam: float
    horizon: float
    horizon_doublings: int
    w_max: float
    bounds: EstimateBounds
    trials: int
    history: list[tuple[int, float, bool]] = field(default_factory=list)
    planning_time_s: float = 0.0
    clock0: float = 0.0

    @property
    def feasible(self) -> bool:
        return bool(self.entries)

    def assignments(self) -> list[tuple[int, tuple[int, ...]]]:
        """``(job, gpu_ids)`` in planned start order."""
        return [(e.job, e.gpus) for e in self.entries]

    def summary(self) -> dict[str, float | int | str | None]:
        """Flat dict of the plan quantities (for ``SimResult.extra`` and tables)."""
        b = self.bounds
        return {
            "planner": self.kind,
            "planned_makespan_s": self.planned_makespan,
            "theta_tilde_u": self.theta_tilde,
            "theta_plan_u": self.theta_plan,
            "kappa": self.kappa,
            "lambda": self.lam,
            "horizon_T": self.horizon,
            "horizon_doublings": self.horizon_doublings,
            "w_max_u": self.w_max,
            "n_g": b.n_g,
            "u": b.u,
            "l": b.l,
            "phi": b.phi,
            "phi_u_over_l": b.phi_u_over_l,
            "approx_ratio": b.approximation_ratio,
            "plan_trials": self.trials,
            "planning_time_s": self.planning_time_s,
        }


# </shared>

#: The readings of the listing that the module docstring describes.
DEFAULT_OPTIONS = PlanOptions()


def estimate_bounds(
    cluster: ClusterSpec, workload: Workload, model: PerformanceModel, bound: BoundModel | None = None,
    jobs: Sequence[int] | None = None,
) -> EstimateBounds:
    """Compute the §5.1 per-job ``τ`` range and ``u``, ``l``, ``φ``, ``n_g`` over ``jobs`` (default: all)."""
    bound = bound if bound is not None else model.bind(cluster, workload)
    n = workload.num_jobs
    max_o = float(cluster.max_server_gpus)
    # §5.1: "the largest number of k_j is max_s O_s", i.e. B_min = b_e / f(α, max_s O_s). Our RAR
    # model computes k = ξ1·p, so the worst case is reached at p = max_s O_s / ξ1.
    p_up = max_o / model.xi1 if isinstance(model, RARContentionModel) else max_o
    if float(p_up).is_integer() and hasattr(bound, "iteration_times"):
        # Every job at once: a bound model's iteration_times is its iteration_time bit for bit (a
        # contention count must be an integer there, hence the scalar loop below otherwise).
        every = np.arange(n)
        n_up = np.minimum(workload.gpus.astype(np.int64), cluster.num_servers)
        tau_low = np.asarray(bound.iteration_times(every, np.ones(n, dtype=np.int64), np.zeros(n, dtype=np.int64)),
                             dtype=np.float64)
        worst = np.asarray(bound.iteration_times(every, n_up, np.full(n, int(p_up), dtype=np.int64)), dtype=np.float64)
        tau_up = np.where(n_up <= 1, tau_low, np.maximum(tau_low, worst))
    else:
        tau_low = np.empty(n)
        tau_up = np.empty(n)
        for j in range(n):
            tau_low[j] = bound.iteration_time(j, 1, 0)
            servers_up = min(int(workload.gpus[j]), cluster.num_servers)
            if servers_up <= 1:
                tau_up[j] = tau_low[j]
            else:
                tau_up[j] = max(tau_low[j], bound.iteration_time(j, servers_up, p_up))  # type: ignore[arg-type]
    rows = np.arange(n) if jobs is None else np.asarray(list(jobs), dtype=np.int64)
    if rows.size == 0:
        return EstimateBounds(tau_low, tau_up, 1.0, 1.0, 1.0, 0)
    ratio = tau_up[rows] / tau_low[rows]
    u = max(1.0, float(ratio.max()))
    l = min(1.0, float((1.0 / ratio).min()))
    return EstimateBounds(tau_low, tau_up, u, l, float(ratio.max()), int(workload.gpus[rows].max()))


class PlanContext:
    """Per-planning constants shared by every trial (a re-planning policy keeps one for all its plans:
    they depend only on the world and the §5.1 bounds, and it carries the eq. (8) memo along)."""

    def __init__(self, cluster: ClusterSpec | None = None, workload: Workload | None = None,
                 bound: BoundModel | None = None, bounds: EstimateBounds | None = None) -> None:
        if cluster is None or workload is None or bound is None or bounds is None:
            # An empty shell: the compiled build's classes are unpickled by calling the class with no
            # arguments, then given their attributes (a policy that has planned keeps a context).
            if not (cluster is None and workload is None and bound is None and bounds is None):
                raise ConfigError("PlanContext needs the cluster, workload, bound model and bounds (or none of them)")
            return
        self.cluster = cluster
        self.bound = bound
        self.gpu_server = cluster.gpu_server()
        self.server_first = cluster.server_first_gpu()
        self.capacity = np.asarray(cluster.gpus_per_server, dtype=np.int64)  # O_s
        self.server_first_list: list[int] = self.server_first.tolist()
        self.capacity_list: list[int] = self.capacity.tolist()
        self.num_gpus = cluster.num_gpus
        self.gpu_index = np.arange(cluster.num_gpus)
        self.gpus: list[int] = workload.gpus.tolist()
        self.iterations: list[float] = workload.iterations.astype(np.float64).tolist()
        self.tau_low: list[float] = bounds.tau_low.tolist()
        self.u = float(bounds.u)
        self._tau_floor: dict[int, float] = {}
        self.server_of: list[int] = self.gpu_server.tolist()
        self.server_gpus: list[range] = [range(int(a), int(a) + int(c)) for a, c in zip(self.server_first, self.capacity)]
        # Keyed by one int, ``(who · (servers + 1) + n_servers) · (GPUs + 2) + p̂`` (unique: n_servers ≤ servers,
        # p̂ ≤ GPUs + 1), ``who`` the job's rate class where the bound model has them (see BoundModel), else the job.
        self._tau_memo: dict[int, float] = {}
        self._memo_servers: int = cluster.num_servers + 1
        self._memo_p: int = cluster.num_gpus + 2
        classes = getattr(bound, "rate_classes", None)
        self._rate_class: list[int] | None = classes() if classes is not None else None

    def iteration_time(self, job: int, n_servers: int, p_hat: int) -> float:
        """eq. (8) through the bound model, memoised (trials ask for the same (job, servers, p̂) again)."""
        classes = self._rate_class
        key = ((job if classes is None else classes[job]) * self._memo_servers + n_servers) * self._memo_p + p_hat
        tau = self._tau_memo.get(key)
        if tau is None:
            tau = self._tau_memo[key] = self.bound.iteration_time(job, n_servers, p_hat)
        return tau

    def tau_floor(self, job: int) -> float:
        """Smallest τ any placement can give ``job``: one server, or two servers without contention.

        Equals ``τ_low`` under eq. (8) whenever ``b_e ≤ b_i``; kept separate so that the
        "waiting cannot help" shortcut stays exact for any bandwidths and performance model.
        """
        floor = self._tau_floor.get(job)
        if floor is None:
            floor = self.tau_low[job]
            if self.gpus[job] >= 2 and self.cluster.num_servers >= 2:
                floor = min(floor, self.iteration_time(job, 2, 1))
            self._tau_floor[job] = floor
        return floor


class Trial:
    """One schedule for a fixed (θ_u, κ, λ): the job loop of Alg. 1 lines 9–16 with Alg. 2/3.

    Exposed (rather than private) so tests can drive FA-FFP and LBSGF on a hand-built state.

    Args:
        ctx: planning constants.
        theta: ``θ_u``.
        kind: "sjf-bco" (κ decides FA-FFP or LBSGF), "ff", "ls" or "rand".
        kappa: κ (``G_j ≤ κ`` → FA-FFP, Alg. 1 line 10).
        lam: ``λ_j`` for LBSGF.
        initial: start state.
        prune_at: abort once a planned end reaches this (absolute) time.
        rng: randomness for RAND.
        options: readings of the ambiguous lines (:class:`PlanOptions`).
    """

    def __init__(
        self, ctx: PlanContext, theta: float, kind: str, kappa: float, lam: float, initial: InitialState,
        prune_at: float = math.inf, rng: np.random.Generator | None = None, options: PlanOptions = DEFAULT_OPTIONS,
        *, blank: bool = False,
    ) -> None:
        self.ctx = ctx
        self.options = options
        self.initial = initial
        self.theta = float(theta)
        self.kind = kind
        self.kappa = kappa  # an int, or inf for the all-FA-FFP spine of plan()
        self.lam = lam
        self.clock = float(initial.clock)
        self.split_active: list[int] = [0] * ctx.cluster.num_servers
        self.heap: list[tuple[float, int, tuple[int, ...]]] = []
        self._seq = 0
        # Least-U rules (FA-FFP as listed, LS): idle GPUs kept sorted by (U, index), updated per
        # commit/release, instead of masking and sorting all GPUs per attempt.
        self.fast: bool = kind in ("sjf-bco", "ls", "ff") and options.fa_ffp == "listing"
        self.fast_ff: bool = kind == "ff"  # FF (§7.2) scans idle GPUs in index order: keep them sorted too
        # LBSGF least-U (Alg. 3 as listed) on plain lists too: per-GPU U and idle flags, per-server mean U.
        self.fast_lbsgf: bool = self.fast and options.lbsgf_pick == "least-u"
        # With every rule of this trial on lists, the busy times live only in a list (see ``busy``),
        # and U's array is brought up to date from the list only when read (see ``load``): "waiting
        # cannot help" partitions it about once per two commits, so no numpy update per commit.
        self._busy: np.ndarray | None = None
        self._load = np.zeros(0)
        self._load_stale: list[int] | None = None  # GPUs whose U changed since the array was read
        if not blank:  # (a fork copies the state instead)
            self._start_state(initial)
        self.prune_at = prune_at
        self.rng = rng if rng is not None else np.random.default_rng(0)
        # The planned jobs as PlanEntry fields, in start order (records are built only when read).
        self._planned: list[tuple[int, tuple[int, ...], float, float, float, str, int]] = []
        self.makespan = -math.inf
        self.pruned = False
        self.failed = False
        self.next_index = 0  # position in the job list (a pruned trial can be resumed from here)
        # θ enters the trial only through tests ``x <= θ + ε``. The largest x that passed and the
        # smallest that failed bound the θ' that replay every decision bit for bit (see valid_for).
        self.x_passed = -math.inf
        self.x_failed = math.inf

    @property
    def load(self) -> np.ndarray:
        """``U_s^g`` per GPU (the trial's own array: read it, never mutate it)."""
        stale = self._load_stale
        if stale:
            load = self.load_list
            self._load[stale] = [load[g] for g in stale]  # the list's values: the same floats
            stale.clear()
        return self._load

    @property
    def busy(self) -> np.ndarray:
        """Per GPU, the planned time it becomes free (a new array where the trial keeps it in a list)."""
        return np.array(self.busy_list, dtype=np.float64) if self._busy is None else self._busy

    def _start_state(self, initial: InitialState) -> None:
        """The planned state at the start: ``initial``'s busy times, ``U`` and running jobs."""
        busy_array = np.asarray(initial.busy_until, dtype=np.float64).copy()
        load_array = np.asarray(initial.load, dtype=np.float64).copy()  # U_s^g
        # Typed: the compiled build takes the records as untyped objects, and float() of an untyped
        # object is a Python call per running job (a re-plan on 1,024 GPUs starts with ~100 of them).
        running: tuple[tuple[float, tuple[int, ...]], ...] = tuple(initial.running)
        for end, servers in running:
            self._push(float(end), tuple(servers))
        self._load = load_array
        if self.fast_lbsgf:
            self._load_stale = []
        else:
            self._busy = busy_array
        if self.fast:
            ctx = self.ctx
            idle = busy_array <= self.clock
            loads: list[float] = load_array.tolist()
            self.load_list = loads
            self.busy_list: list[float] = busy_array.tolist()
            self.idle_flag: list[bool] = idle.tolist()
            self.server_mean: list[float] = [_server_sum(loads, a, a + c) / c for a, c in zip(ctx.server_first_list,
                                                                                            ctx.capacity_list)]
            # Alg. 3 line 2's order, (mean U, index) ascending, kept sorted: stale servers move by bisection.
            # (A stable sort of the indices by mean: the (mean, index) order without comparing tuples.)
            mean = self.server_mean
            self.server_order: list[tuple[float, int]] = [(mean[s], s) for s in
                                                          sorted(range(len(mean)), key=mean.__getitem__)]
            self.stale_servers: set[int] = set()
            idle_ids: list[int] = np.flatnonzero(idle).tolist()
            # None while not kept (see place): only the least-U picks read it, and they rebuild it.
            # idle_ids ascend, so a stable sort of them by U is the (U, index) order (as for the servers).
            self.idle_sorted: list[tuple[float, int]] | None = [(loads[g], g) for g in
                                                                sorted(idle_ids, key=loads.__getitem__)]
            self.idle_ids = idle_ids
            busy = self.busy_list
            # Busy GPUs grouped by the time they free up (a running job's GPUs share it): one entry per
            # time, not per GPU. _release_until frees every GPU of every entry due into sorted structures,
            # so neither the grouping nor the order within a group changes anything.
            freeing: dict[float, list[int]] = {}
            for g in np.flatnonzero(~idle).tolist():
                freeing.setdefault(busy[g], []).append(g)
            self.gpu_heap: list[tuple[float, tuple[int, ...]]] = [(t, tuple(ids)) for t, ids in freeing.items()]
            heapify(self.gpu_heap)

    # ---------------------------------------------------------------- θ tests
    def _within(self, x: float) -> bool:
        """``x <= θ_u + ε`` (every use of θ goes through here or records its deciding x likewise)."""
        if x <= self.theta + _EPS:
            if x > self.x_passed:
                self.x_passed = x
            return True
        if x < self.x_failed:
            self.x_failed = x
        return False

    def valid_for(self, theta: float) -> bool:
        """True iff every θ test made so far has the same outcome at ``theta``: the trial so far is
        then exactly what a trial at ``theta`` would have built (θ is used nowhere else)."""
        limit = float(theta) + _EPS
        return self.x_passed <= limit < self.x_failed

    # ---------------------------------------------------------------- helpers
    def _push(self, end: float, servers: tuple[int, ...]) -> None:
        if len(servers) > 1:
            split = self.split_active
            for s in servers:
                split[s] += 1
        self._seq += 1
        heappush(self.heap, (end, self._seq, servers))

    def _release_until(self, t: float) -> None:
        heap = self.heap
        while heap and heap[0][0] <= t:
            _, _, servers = heappop(heap)
            if len(servers) > 1:
                split = self.split_active
                for s in servers:
                    split[s] -= 1
        if self.fast:
            # One typed local each (the compiled build indexes typed lists natively).
            gpu_heap = self.gpu_heap
            idle = self.idle_sorted
            load: list[float] = self.load_list
            flag: list[bool] = self.idle_flag
            while gpu_heap and gpu_heap[0][0] <= t:
                for g in heappop(gpu_heap)[1]:
                    if idle is not None:
                        insort(idle, (load[g], g))
                    flag[g] = True
                    if self.fast_ff:
                        insort(self.idle_ids, g)

    def advance(self) -> bool:
        """Alg. 2 line 9 / Alg. 3 line 12: wait for the next planned exit. False if none is running."""
        self._release_until(self.clock)
        if not self.heap:
            return False
        self.clock = self.heap[0][0]
        self._release_until(self.clock)
        return True

    def rho_hat(self, job: int, gpus: Sequence[int] | np.ndarray) -> tuple[float, int]:
        """``ρ̂_j(y^k) = F_j·τ̂_j`` (eq. 8) on the candidate ``gpus``; returns ``(ρ̂, #servers)``."""
        ctx = self.ctx
        if len(gpus) == 1:
            return ctx.iterations[job] * ctx.tau_low[job], 1
        server_of = ctx.server_of
        ids: list[int] = gpus if isinstance(gpus, list) else np.asarray(gpus).tolist()
        servers = {server_of[g] for g in ids}
        if len(servers) == 1:
            return ctx.iterations[job] * ctx.tau_low[job], 1
        # p̂_j: eq. (6) on the plan so far — split jobs active on the busiest server, plus this one.
        split = self.split_active
        p_hat = max(split[s] for s in servers) + 1
        return ctx.iterations[job] * ctx.iteration_time(job, len(servers), p_hat), len(servers)

    def _lbsgf_server_list(self, job: int) -> list[int]:
        """:meth:`lbsgf_servers` on plain lists: per-server means kept, recomputed where U changed with
        the same reduction (``np.add.reduceat`` over the server's GPUs), so bit-identical."""
        ctx = self.ctx
        mean, order = self.server_mean, self.server_order
        if self.stale_servers:
            load = self.load_list
            for s in self.stale_servers:
                span = ctx.server_gpus[s]
                del order[bisect_left(order, (mean[s], s))]
                mean[s] = _server_sum(load, span.start, span.stop) / len(span)  # as np.add.reduceat / O_s
                insort(order, (mean[s], s))
            self.stale_servers.clear()
        need = self.lam * ctx.gpus[job] - _EPS
        chosen: list[int] = []
        reach = 0
        for _, s in order:  # by mean U, ties by server index
            chosen.append(s)
            reach += len(ctx.server_gpus[s])
            if reach >= need:  # first prefix with Σ O_s ≥ λ_j G_j
                break
        return chosen

    def lbsgf_servers(self, job: int) -> np.ndarray:
        """Alg. 3 line 2: servers by ``Σ_g U_s^g / O_s`` (ties by index), top ``m`` with ``Σ O_s ≥ λ_j G_j``."""
        ctx = self.ctx
        if self.fast_lbsgf:
            return np.array(self._lbsgf_server_list(job), dtype=np.int64)
        avg = np.add.reduceat(self.load, ctx.server_first) / ctx.capacity
        order = np.argsort(avg, kind="stable")
        need = self.lam * ctx.gpus[job]
        reach = np.cumsum(ctx.capacity[order])
        m = int(np.searchsorted(reach, need - _EPS)) + 1  # first prefix with Σ O_s ≥ λ_j G_j
        return order[: min(m, order.size)]

    # ---------------------------------------------------------------- placement rules
    def _least_load_pick(
        self, job: int, allowed: np.ndarray | None, rank: np.ndarray | None
    ) -> tuple[np.ndarray | list[int], float, int] | None:
        """Top-``G_j`` least-``U`` idle GPUs (optionally among ``allowed``), if they meet ``θ_u``."""
        g = self.ctx.gpus[job]
        if allowed is None and self.fast:
            # Top-G_j of the idle GPUs by (U, index): the head of the sorted idle list.
            idle_sorted = self.idle_sorted
            if idle_sorted is None:
                load = self.load_list
                idle_sorted = self.idle_sorted = sorted((load[gpu], gpu) for gpu, free in enumerate(self.idle_flag) if free)
            if len(idle_sorted) < g:
                return None
            head = idle_sorted[:g]
            fast_pick = [gpu for _, gpu in head]
            rho, n_servers = self.rho_hat(job, fast_pick)
            if self._within(head[-1][0] + rho / self.ctx.u):
                return fast_pick, rho, n_servers
            return None
        idle = self.busy <= self.clock
        if allowed is not None:
            idle &= allowed
        ids = np.flatnonzero(idle)
        if ids.size < g:
            return None
        if rank is None:  # ties by GPU index: ids ascending + stable sort
            order = np.argsort(self.load[ids], kind="stable")
        else:  # ties by server rank (LBSGF append order), then GPU index
            order = np.lexsort((ids, rank[self.ctx.gpu_server[ids]], self.load[ids]))
        pick = ids[order[:g]]
        rho, n_servers = self.rho_hat(job, pick)
        if self._within(float(self.load[pick].max()) + rho / self.ctx.u):
            return pick, rho, n_servers
        return None

    def _ordered_pick(self, job: int, order: np.ndarray) -> tuple[np.ndarray | list[int], float, int] | None:
        """First ``G_j`` idle GPUs in ``order`` meeting ``U + ρ̂/u ≤ θ_u`` (fixed point on ρ̂)."""
        ctx = self.ctx
        g = ctx.gpus[job]
        idle_order = order[self.busy[order] <= self.clock]
        guess = ctx.iterations[job] * ctx.tau_floor(job)
        while True:
            x = self.load[idle_order] + guess / ctx.u
            ok = x <= self.theta + _EPS
            passed = np.flatnonzero(ok)
            # Only the tests up to the g-th pass decide the pick: record those (see valid_for).
            seen = x if passed.size < g else x[: int(passed[g - 1]) + 1]
            seen_ok = ok[: seen.size]
            if seen_ok.any():
                self._within(float(seen[seen_ok].max()))
            if not seen_ok.all():
                self._within(float(seen[~seen_ok].min()))
            pick = idle_order[passed[:g]]
            if pick.size < g:
                return None
            rho, n_servers = self.rho_hat(job, pick)
            if self._within(float(self.load[pick].max()) + rho / ctx.u):
                return pick, rho, n_servers
            guess = max(guess * (1 + 1e-12), rho)  # strictly tighter: terminates

    def _ff_pick(self, job: int) -> tuple[np.ndarray | list[int], float, int] | None:
        """:meth:`_ordered_pick` in GPU index order on plain lists (the same tests, the same records)."""
        ctx = self.ctx
        g = ctx.gpus[job]
        load = self.load_list
        guess = ctx.iterations[job] * ctx.tau_floor(job)
        limit = self.theta + _EPS
        while True:
            step = guess / ctx.u
            pick: list[int] = []
            top_passed, low_failed = -math.inf, math.inf
            for gpu in self.idle_ids:
                x = load[gpu] + step
                if x <= limit:
                    pick.append(gpu)
                    if x > top_passed:
                        top_passed = x
                    if len(pick) == g:
                        break
                elif x < low_failed:
                    low_failed = x
            if top_passed > -math.inf:
                self._within(top_passed)
            if low_failed < math.inf:
                self._within(low_failed)
            if len(pick) < g:
                return None
            rho, n_servers = self.rho_hat(job, pick)
            if self._within(max(load[gpu] for gpu in pick) + rho / ctx.u):
                return pick, rho, n_servers
            guess = max(guess * (1 + 1e-12), rho)  # strictly tighter: terminates

    def method_for(self, job: int) -> str:
        """Alg. 1 lines 10–13: FA-FFP if ``G_j ≤ κ`` else LBSGF (baselines: their own rule)."""
        if self.kind != "sjf-bco":
            return self.kind
        return "fa-ffp" if self.ctx.gpus[job] <= self.kappa else "lbsgf"

    def _server_mask(self, servers: np.ndarray) -> np.ndarray:
        mask = np.zeros(self.ctx.cluster.num_servers, dtype=bool)
        mask[servers] = True
        return mask[self.ctx.gpu_server]

    def prose_fa_ffp_order(self) -> np.ndarray:
        """FA-FFP as the prose says: GPUs of occupied servers first (server index order), then the rest;
        inside a server least ``U`` first (ties by GPU index). Occupied = hosts a planned-running job."""
        ctx = self.ctx
        occupied = np.zeros(ctx.cluster.num_servers, dtype=bool)
        occupied[ctx.gpu_server[self.busy > self.clock]] = True
        return np.lexsort((ctx.gpu_index, self.load, ctx.gpu_server, ~occupied[ctx.gpu_server]))

    def random_server_order(self) -> np.ndarray:
        """RAND reading "servers": servers in a random order, each server's GPUs in a random order."""
        ctx = self.ctx
        parts = []
        for s in self.rng.permutation(ctx.cluster.num_servers).tolist():
            first = int(ctx.server_first[s])
            parts.append(first + self.rng.permutation(int(ctx.capacity[s])))
        return np.concatenate(parts)

    def try_place(
        self, job: int, method: str, servers: np.ndarray | list[int] | None = None
    ) -> tuple[np.ndarray | list[int], float, int] | None:
        """One attempt at the current planned clock (no waiting); LBSGF may pass its server choice."""
        opts = self.options
        if method == "fa-ffp" and opts.fa_ffp == "prose":
            return self._ordered_pick(job, self.prose_fa_ffp_order())
        if method in ("fa-ffp", "ls"):
            # Alg. 2 lines 2–4 (and LS, §7.2): available = idle now and U + ρ̂/u ≤ θ_u; least U first.
            return self._least_load_pick(job, None, None)
        if method == "lbsgf":
            if self.fast_lbsgf:
                chosen = self._lbsgf_server_list(job) if servers is None else list(servers)
                return self._lbsgf_pick(job, chosen)
            servers = self.lbsgf_servers(job) if servers is None else np.asarray(servers, dtype=np.int64)
            rank = np.full(self.ctx.cluster.num_servers, np.iinfo(np.int64).max, dtype=np.int64)
            rank[servers] = np.arange(servers.size)
            if opts.lbsgf_pick == "list-order":
                # Line 7 read as "the first G_j of the list appended in lines 4–5": server rank, then U.
                ids = np.flatnonzero(self._server_mask(servers))
                order = ids[np.lexsort((ids, self.load[ids], rank[self.ctx.gpu_server[ids]]))]
                return self._ordered_pick(job, order)
            # Alg. 3 lines 3–7: idle GPUs of the selected servers under θ_u, top-G_j least U.
            return self._least_load_pick(job, self._server_mask(servers), rank)
        if method == "ff":
            if self.fast_ff:
                return self._ff_pick(job)
            return self._ordered_pick(job, self.ctx.gpu_index)  # §7.2 FF: server to server, index order
        if method == "rand":
            if opts.rand_pick == "servers":
                return self._ordered_pick(job, self.random_server_order())
            return self._ordered_pick(job, self.rng.permutation(self.ctx.num_gpus))  # §7.2 RAND
        raise ConfigError(f"unknown placement method {method!r}")

    def _lbsgf_pick(self, job: int, servers: list[int]) -> tuple[np.ndarray | list[int], float, int] | None:
        """Alg. 3 lines 3–7 on plain lists: idle GPUs of the chosen servers by (U, server rank, index)."""
        ctx = self.ctx
        g = ctx.gpus[job]
        load: list[float] = self.load_list
        flag: list[bool] = self.idle_flag
        first: list[int] = ctx.server_first_list
        capacity: list[int] = ctx.capacity_list
        ids: list[int] = []
        loads: list[float] = []
        for rank in range(len(servers)):
            s = servers[rank]
            for gpu in range(first[s], first[s] + capacity[s]):
                if flag[gpu]:
                    ids.append(gpu)
                    loads.append(load[gpu])
        if len(ids) < g:
            return None
        # Collected in (server rank, index) order, so a stable sort by U alone gives the (U, rank,
        # index) order, without a tuple per GPU.
        order = sorted(range(len(ids)), key=loads.__getitem__)
        pick = [ids[i] for i in order[:g]]
        rho, n_servers = self.rho_hat(job, pick)
        if self._within(loads[order[g - 1]] + rho / ctx.u):
            return pick, rho, n_servers
        return None

    def _hopeless(self, job: int, servers: np.ndarray | list[int] | None) -> bool:
        """True if no amount of waiting can place ``job`` (``U`` only grows; ``ρ̂ ≥ F_j τ_floor``)."""
        ctx = self.ctx
        floor = ctx.iterations[job] * ctx.tau_floor(job) / ctx.u
        g = ctx.gpus[job]
        if servers is not None and self.fast_lbsgf:
            load, server_gpus = self.load_list, ctx.server_gpus
            chosen = sorted([load[gpu] for s in servers for gpu in server_gpus[s]])  # type: ignore[union-attr]
            return len(chosen) < g or not self._within(chosen[g - 1] + floor)
        loads = self.load if servers is None else self.load[self._server_mask(np.asarray(servers, dtype=np.int64))]
        if loads.size < g:
            return True
        # At least G_j GPUs pass ``U + floor <= θ + ε`` iff the G_j-th smallest does (float addition is
        # monotone), so that one x decides.
        return not self._within(float(np.partition(loads, g - 1)[g - 1]) + floor)

    @property
    def entries(self) -> list[PlanEntry]:
        """The planned jobs so far, in start order."""
        return [PlanEntry(*fields) for fields in self._planned]

    def place(self, job: int) -> PlanEntry | None:
        """Alg. 2 / Alg. 3 for one job, with waiting; ``None`` is ``∅`` (infeasible at this θ)."""
        return PlanEntry(*self._planned[-1]) if self._place(job) else None

    def _place(self, job: int) -> bool:
        """:meth:`place`, saying only whether the job was placed."""
        method = self.method_for(job)
        # Alg. 3 "goes to Line 2" after a wait: U does not change while waiting, so the server
        # choice of line 2 is the same and is computed once.
        if method == "lbsgf":
            servers = self._lbsgf_server_list(job) if self.fast_lbsgf else self.lbsgf_servers(job)
            if self.options.job_order == "sjf":
                # In SJF order every later job is LBSGF too (G only grows past κ): stop keeping the
                # idle GPUs in (U, index) order, which only the least-U picks read (they rebuild it).
                self.idle_sorted = None
        else:
            servers = None
        # "Waiting cannot help" is tested once, after _WAITS_UNTESTED waits: most jobs that wait fit
        # after the first exit, and a hopeless job fails either way (the test only saves waiting for
        # every running job). Waiting changes no U, so once not hopeless a job stays so in this call.
        failures = 0
        while True:
            got = self.try_place(job, method, servers)
            if got is not None:
                pick, rho, n_servers = got
                self._commit(job, method, pick, rho, n_servers)
                return True
            failures += 1
            if failures == _WAITS_UNTESTED + 1 and self._hopeless(job, servers):
                return False
            if not self.advance():
                return False

    def _commit(self, job: int, method: str, pick: np.ndarray | list[int], rho: float, n_servers: int) -> None:
        start = self.clock
        end = start + rho  # T_j = planned start + ρ̂_j (Alg. 2 line 5, Alg. 3 line 8)
        gpus: list[int] = pick if isinstance(pick, list) else pick.tolist()
        step = rho / self.ctx.u
        if self._busy is not None:
            self._busy[gpus] = end
        if self._load_stale is None:
            self._load[gpus] += step  # Alg. 2 line 6, Alg. 3 line 9
        else:
            self._load_stale.extend(gpus)  # (the list is updated below)
        server_of = self.ctx.server_of
        if n_servers > 1:
            servers = tuple(sorted({server_of[g] for g in gpus}))
        else:
            servers = (server_of[gpus[0]],)
        self._push(end, servers)
        if self.fast:
            idle = self.idle_sorted
            load: list[float] = self.load_list
            flag: list[bool] = self.idle_flag
            if idle is not None:
                head = len(gpus)
                if [gpu for _, gpu in idle[:head]] == gpus:  # FA-FFP and LS pick the head of the idle list
                    del idle[:head]
                else:
                    for g in gpus:
                        del idle[bisect_left(idle, (load[g], g))]
            busy = self.busy_list
            for g in gpus:
                load[g] += step  # Alg. 2 line 6, Alg. 3 line 9 (the same float64 addition as an array's)
                busy[g] = end
                flag[g] = False
                if self.fast_ff:
                    del self.idle_ids[bisect_left(self.idle_ids, g)]
            self.stale_servers.update(servers)
            heappush(self.gpu_heap, (end, tuple(gpus)))
        self._planned.append((job, tuple(sorted(gpus)), start, end, rho, method, n_servers))
        self.makespan = max(self.makespan, end)

    def fork(self, kappa: float, prune_at: float) -> Trial:
        """A copy of this trial's state (planned so far) that continues with its own κ and prune bound.

        Field by field (the compiled build's classes have no ``__dict__`` to copy): the constants are
        shared, every container is copied."""
        other = type(self)(self.ctx, self.theta, self.kind, kappa, self.lam, self.initial, prune_at, self.rng, self.options,
                      blank=True)
        other.clock, other._seq, other.makespan = self.clock, self._seq, self.makespan
        other.pruned, other.failed, other.next_index = self.pruned, self.failed, self.next_index
        other.x_passed, other.x_failed = self.x_passed, self.x_failed
        other._busy = None if self._busy is None else self._busy.copy()
        other._load = self.load.copy()
        other._load_stale = None if self._load_stale is None else []
        other.split_active = list(self.split_active)
        other.heap = list(self.heap)
        if self.fast:
            other.load_list = list(self.load_list)
            other.busy_list = list(self.busy_list)
            other.idle_flag = list(self.idle_flag)
            other.server_mean = list(self.server_mean)
            other.server_order = list(self.server_order)
            other.stale_servers = set(self.stale_servers)
            other.idle_sorted = None if self.idle_sorted is None else list(self.idle_sorted)
            other.idle_ids = list(self.idle_ids)
            other.gpu_heap = list(self.gpu_heap)
        other._planned = list(self._planned)
        return other

    def run(self, jobs_sorted: Sequence[int], stop: int | None = None) -> bool:
        """Alg. 1 lines 9–16. True iff every job was placed (and the prune bound never reached).

        ``stop``: place only up to that position (the κ-class spine in :func:`plan`; then False).
        """
        end = len(jobs_sorted) if stop is None else stop
        for i in range(self.next_index, end):
            if not self._place(jobs_sorted[i]):
                self.failed = True
                self.next_index = i
                return False  # line 14–15: y_j = ∅ → break (this κ is infeasible)
            if self.makespan >= self.prune_at:
                self.pruned = True
                self.next_index = i + 1
                return False
        self.next_index = end
        return end == len(jobs_sorted)

    def rerun(self, theta: float, prune_at: float, jobs_sorted: Sequence[int]) -> bool:
        """What :meth:`run` of a fresh trial at ``(theta, prune_at)`` returns, given ``valid_for(theta)``.

        The decisions so far are those of the fresh trial. Its makespan only grows, so: a failed trial
        fails again (or is pruned first: False either way); a finished one passes iff its makespan is
        below ``prune_at``; a pruned one stays pruned if its makespan already reaches ``prune_at``, else
        it continues at ``theta`` from where it stopped.
        """
        if self.failed:
            return False
        if self.makespan >= prune_at:
            return False
        if self.next_index >= len(jobs_sorted):
            return True
        self.theta = float(theta)
        self.prune_at = prune_at
        self.pruned = False
        return self.run(jobs_sorted)


#: The classes this module's functions build: the build switch at the end of the plain module rebinds the
#: public ``Trial`` and ``PlanContext`` to the compiled build, and these keep each build's own.
_TRIAL = Trial
_CONTEXT = PlanContext


def bisect_theta(
    horizon: int, evaluate: Callable[[int], tuple[float, object]], mode: str = "paper"
) -> tuple[float, object, int | None, int | None, list[tuple[int, float, bool]]]:
    """Integer bisection of Alg. 1 lines 4–23 over ``θ_u ∈ [1, T]``.

    Args:
        horizon: ``T`` (an integer ≥ 1).
        evaluate: ``θ → (m_θ, y_θ)``; ``m_θ`` is ``inf`` (or ``≥ T``) when infeasible.
        mode: ``"paper"`` (go left iff ``m_θ < m``, lines 19–23 as written) or ``"feasible"``
            (go left iff ``m_θ < T``; keep the best makespan seen).

    Returns:
        ``(m, y, θ̃, θ_plan, history)``: best makespan and schedule, tightest feasible θ visited,
        the θ of the kept schedule, and ``(θ, m_θ, feasible)`` per step.
    """
    if mode not in BISECTION_MODES:
        raise ConfigError(f"bisection mode {mode!r} unknown; choose one of {BISECTION_MODES}")
    best_m, best_y = float(horizon), None  # line 4: m ← T, y ← ∅
    theta_tilde: int | None = None
    theta_plan: int | None = None
    left, right = 1, int(horizon)
    history: list[tuple[int, float, bool]] = []
    while left <= right:  # line 5
        theta = (left + right) // 2  # line 6 (integer bisection)
        m_theta, y_theta = evaluate(theta)
        feasible = y_theta is not None and m_theta < horizon
        history.append((theta, m_theta if feasible else math.inf, feasible))
        if feasible:
            theta_tilde = theta if theta_tilde is None else min(theta_tilde, theta)
        improved = feasible and m_theta < best_m
        if improved:  # lines 19–20
            best_m, best_y, theta_plan = m_theta, y_theta, theta
        go_left = improved if mode == "paper" else feasible
        if go_left:
            right = theta - 1  # line 21
        else:
            left = theta + 1  # line 23
    return best_m, best_y, theta_tilde, theta_plan, history


def kappa_classes(sizes: Sequence[int], kappas: Sequence[int]) -> list[tuple[int, tuple[int, ...]]]:
    """Group κ values by the job set ``{j: G_j ≤ κ}`` they induce: ``[(threshold, κ values)]``."""
    distinct = sorted(set(int(s) for s in sizes))
    classes: dict[int, list[int]] = {}
    for k in kappas:
        key = sum(1 for s in distinct if s <= k)  # how many distinct sizes use FA-FFP
        classes.setdefault(key, []).append(int(k))
    return [(vals[0], tuple(vals)) for _, vals in sorted(classes.items(), key=lambda kv: kv[1][0])]


def plan(
    cluster: ClusterSpec,
    workload: Workload,
    model: PerformanceModel,
    *,
    kind: str = "sjf-bco",
    jobs: Sequence[int] | None = None,
    horizon: float | None = None,
    kappas: Sequence[int] | int | None = None,
    lam: float = 1.0,
    bisection: str = "paper",
    extend_horizon: bool = True,
    initial: InitialState | None = None,
    bounds: EstimateBounds | None = None,
    bound: BoundModel | None = None,
    rng: np.random.Generator | None = None,
    options: PlanOptions = DEFAULT_OPTIONS,
    context: PlanContext | None = None,
) -> PlanResult:
    """Plan ``jobs`` with SJF-BCO (Alg. 1–3) or one of the §7.2 baselines.

    Args:
        cluster, workload, model: the world (the model gives eq. 8 through ``model.bind``).
        kind: "sjf-bco", "ff", "ls" or "rand".
        jobs: workload rows to plan (default: all).
        horizon: ``T`` in seconds (the bisection range of θ_u is ``[1, T]``); ``None`` = auto
            (always feasible, see module doc).
        kappas: κ values to try (default ``1..max_j G_j``, Alg. 1 line 7); an int fixes κ.
        lam: ``λ_j ≥ 1`` for every job (LBSGF).
        bisection: "paper" (as written) or "feasible" (tightest feasible θ).
        extend_horizon: double ``T`` when no plan is feasible (else return an empty plan).
        initial: start state (default: empty cluster at clock 0).
        bounds, bound: precomputed §5.1 bounds and bound model (re-planning reuses them).
        rng: randomness for RAND.
        options: readings of the ambiguous lines (:class:`PlanOptions`; defaults as the module doc).
        context: a :class:`PlanContext` of this world and these ``bounds`` to reuse (re-planning).

    Returns:
        The :class:`PlanResult`.

    Raises:
        ConfigError: unknown kind/mode, ``λ < 1``, or a non-positive horizon.
    """
    t0 = time.perf_counter()
    if kind not in KINDS:
        raise ConfigError(f"SJF-BCO planner: unknown kind {kind!r}; choose one of {KINDS}")
    if not lam >= 1.0:
        raise ConfigError(f"SJF-BCO planner: lambda must be >= 1 (Alg. 3), got {lam}")
    if horizon is not None and not horizon >= 1:
        raise ConfigError(f"SJF-BCO planner: horizon T must be >= 1 second, got {horizon}")
    if bisection not in BISECTION_MODES:
        raise ConfigError(f"SJF-BCO planner: bisection must be one of {BISECTION_MODES}, got {bisection!r}")
    bound = bound if bound is not None else model.bind(cluster, workload)
    rows = list(range(workload.num_jobs)) if jobs is None else [int(j) for j in jobs]
    bounds = bounds if bounds is not None else estimate_bounds(cluster, workload, model, bound, rows)
    initial = initial if initial is not None else InitialState.empty(cluster)
    ctx = context if context is not None else _CONTEXT(cluster, workload, bound, bounds)
    rng = rng if rng is not None else np.random.default_rng(0)
    # Alg. 1 line 3: jobs by G_j non-decreasing (stable: ties keep workload order); or workload order.
    jobs_sorted = sorted(rows, key=lambda j: ctx.gpus[j]) if options.job_order == "sjf" else list(rows)
    n_g = max((ctx.gpus[j] for j in rows), default=0)
    if isinstance(kappas, (int, np.integer)):
        kappas = [int(kappas)]
    kappa_list = list(range(1, max(n_g, 1) + 1)) if kappas is None else [int(k) for k in kappas]
    if not kappa_list or min(kappa_list) < 1:
        raise ConfigError(f"SJF-BCO planner: kappa values must be >= 1, got {kappa_list}")
    classes = kappa_classes([ctx.gpus[j] for j in rows], kappa_list) if kind == "sjf-bco" else [(0, ())]

    clock0 = float(initial.clock)
    running_left = max((end - clock0 for end, _ in initial.running), default=0.0)
    if horizon is None:
        seq = sum(ctx.iterations[j] * float(bounds.tau_up[j]) for j in rows)
        horizon_t = int(math.ceil(seq + max(running_left, 0.0))) + 1
    else:
        horizon_t = int(math.ceil(horizon))
    doublings = 0
    trials = 0
    # Identical schedules are not rebuilt: a trial replays exactly at any θ for which its θ tests
    # (Trial.valid_for) come out the same, so a bisection step whose θ lands there reuses it (in Alg. 1
    # as written most steps do: θ only binds near the tightest feasible value). Per κ class, the most
    # recent trials are kept. RAND draws from the generator and is planned once per horizon: no reuse.
    reusable = kind != "rand"
    cache: list[list[Trial]] = [[] for _ in classes]
    # κ classes share a prefix: with κ_c, every job before the first one with G_j > κ_c is placed by
    # FA-FFP, as in the all-FA-FFP schedule. So per θ one "spine" trial (κ = ∞) is built once and each
    # class forks it at its switch position (its decisions there are the spine's, bit for bit).
    share = kind == "sjf-bco" and len(classes) > 1
    switch = [next((i for i, j in enumerate(jobs_sorted) if ctx.gpus[j] > kappa), len(jobs_sorted))
              for kappa, _ in classes]

    while True:
        horizon_abs = clock0 + horizon_t

        def evaluate(theta: int) -> tuple[float, object]:
            nonlocal trials
            best_m, best = horizon_abs, None  # line 6: m_θ ← T
            spine: Trial | None = None
            for index, (kappa, members) in enumerate(classes):  # line 7 (κ classes, see module doc)
                trials += 1
                reuse = next((t for t in cache[index] if t.valid_for(theta)), None) if reusable else None
                if reuse is not None:
                    trial, done = reuse, reuse.rerun(theta, best_m, jobs_sorted)
                elif share:
                    # Class κ places jobs before switch[index] exactly as the all-FA-FFP spine does.
                    if spine is None:
                        spine = _TRIAL(ctx, theta, kind, math.inf, lam, initial, rng=rng, options=options)
                    stop = switch[index]
                    if not spine.failed and spine.next_index < stop:
                        spine.run(jobs_sorted, stop)
                    trial = spine.fork(kappa, best_m)
                    if trial.failed:  # the fresh trial fails at the same job (or is pruned first)
                        done = False
                    elif trial.next_index > 0 and trial.makespan >= best_m:  # it is pruned within the prefix
                        trial.pruned, done = True, False
                    else:
                        done = trial.run(jobs_sorted)
                    cache[index] = [trial, *cache[index][: _TRIAL_CACHE - 1]]
                else:
                    trial = _TRIAL(ctx, theta, kind, kappa, lam, initial, prune_at=best_m, rng=rng, options=options)
                    done = trial.run(jobs_sorted)
                    if reusable:
                        cache[index] = [trial, *cache[index][: _TRIAL_CACHE - 1]]
                if done and trial.makespan < best_m:  # lines 17–18
                    best_m, best = trial.makespan, (trial, kappa, members)
            return (best_m - clock0 if best is not None else math.inf), best

        if not rows:
            return PlanResult(kind, [], 0.0, None, None, None, (), lam, float(horizon_t), 0, 0.0, bounds, 0,
                              planning_time_s=time.perf_counter() - t0, clock0=clock0)
        if kind == "rand":  # §7.2: θ^RAND = T, no bisection
            m, chosen = evaluate(horizon_t)
            feasible = chosen is not None and m < horizon_t
            history = [(horizon_t, m if feasible else math.inf, feasible)]
            theta_tilde = theta_plan = horizon_t if feasible else None
            if not feasible:
                chosen = None
        else:
            m, chosen, theta_tilde, theta_plan, history = bisect_theta(horizon_t, evaluate, bisection)
        if chosen is not None or not extend_horizon or doublings >= 30:
            break
        horizon_t *= 2
        doublings += 1

    if chosen is None:
        return PlanResult(kind, [], math.inf, None, None, None, (), lam, float(horizon_t), doublings, 0.0, bounds,
                          trials, history, time.perf_counter() - t0, clock0)
    trial, kappa, members = cast(tuple[Trial, int, tuple[int, ...]], chosen)
    return PlanResult(
        kind=kind,
        entries=list(trial.entries),
        planned_makespan=float(m),
        theta_tilde=theta_tilde,
        theta_plan=theta_plan,
        kappa=kappa if kind == "sjf-bco" else None,
        kappa_class=members,
        lam=lam,
        horizon=float(horizon_t),
        horizon_doublings=doublings,
        w_max=float(trial.load.max()) if trial.load.size else 0.0,
        bounds=bounds,
        trials=trials,
        history=history,
        planning_time_s=time.perf_counter() - t0,
        clock0=clock0,
    )


def make_trial(
    cluster: ClusterSpec,
    workload: Workload,
    model: PerformanceModel,
    theta: float,
    *,
    kind: str = "sjf-bco",
    kappa: int = 1,
    lam: float = 1.0,
    initial: InitialState | None = None,
    rng: np.random.Generator | None = None,
    options: PlanOptions = DEFAULT_OPTIONS,
) -> Trial:
    """A single (θ_u, κ, λ) :class:`Trial` on a given start state (for inspection and tests)."""
    bound = model.bind(cluster, workload)
    bounds = estimate_bounds(cluster, workload, model, bound)
    ctx = _CONTEXT(cluster, workload, bound, bounds)
    return _TRIAL(ctx, theta, kind, kappa, lam, initial or InitialState.empty(cluster), rng=rng, options=options)


# <pure-only> (the build switch: the compiled build of this very file, while its stamp matches)
from ddl_gym.sim.native import compiled_module  # noqa: E402  (ddl_gym.sim.native: the stamp check)

#: The planner as plain Python, whichever build the public names are.
PurePythonTrial, PurePythonPlanContext, pure_python_plan = Trial, PlanContext, plan
#: ``"native"`` (the compiled build, ``scripts/build_native.py``) or ``"python"``: which build the
#: planner's :class:`PlanContext`, :class:`Trial` and functions are.
BUILD = "python"
_NATIVE = compiled_module(__file__)
if _NATIVE is not None:
    # The public names only: this module's own functions keep building its classes (_TRIAL, _CONTEXT).
    for _name in ("PlanContext", "Trial", "estimate_bounds", "bisect_theta", "kappa_classes", "plan", "make_trial"):
        globals()[_name] = getattr(_NATIVE, _name)
    BUILD = "native"
    PurePythonTrial.__qualname__ = "PurePythonTrial"  # the names pickle finds them under now
    PurePythonPlanContext.__qualname__ = "PurePythonPlanContext"
# </pure-only>
