"""Ada-SRSF (Wang, Shi, Wang, Chu 2020): LWF-κ placement, AdaDUAL, Ada-SRSF and the paper's baselines.

All policies run on the task-level engine :class:`~ddl_gym.sim.tasklevel.TaskLevelSimulator`
(§III's DAG model: forward/backward tasks per GPU, one all-reduce per iteration, eq. (5)
contention, GPUs shared while memory fits, compute tasks chosen per GPU by SRSF — Alg. 3 lines
23–31, inside the engine). A policy = a placement rule × a communication admission rule:

Placement rules, ``rule(sim, job, rng) -> GPU ids | None``:

* :func:`lwf_placement` — LWF-κ, Alg. 1 (``"lwf1"``, ``"lwf4"``, ...).
* :func:`least_workload_placement` — LS, list scheduling: the ``|G(J)|`` GPUs with least workload
  for every job (= LWF-κ with κ above the largest job) (``"ls"``).
* :func:`first_fit_placement` — FF: the first ``|G(J)|`` GPUs in index order that fit (``"ff"``).
* :func:`random_placement` — RAND: ``|G(J)|`` fitting GPUs uniformly at random (``"rand"``).

Communication admission rules, ``rule(sim, job) -> bool`` (plus ``decide`` for the engine):

* :class:`AdaDual` — Alg. 2, the ``b / (2(b+η))`` rule of Theorems 1–2 (``"ada"``: Ada-SRSF).
* :class:`SRSFn` — SRSF(n): an all-reduce starts only while fewer than ``n`` run on each of its
  servers (``"srsf1"`` avoids all contention, ``"srsf2"``/``"srsf3"`` accept 2-/3-way contention).

Queued jobs are tried in SRSF order (total GPU compute time, ``E_J = 0``, §IV-A) and ready
all-reduces are considered in SRSF order (Alg. 3 line 17) — both in the engine.

:func:`make_ada_srsf_policy` builds the harness policy object (``name``, ``engine = "task"``,
``run_episode(scenario, cluster, workload, rng) -> SimResult``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ddl_gym.sim.metrics import SimResult
from ddl_gym.sim.model import ClusterSpec, ConfigError, Workload
from ddl_gym.sim.perf import AllReduceContentionModel
from ddl_gym.sim.tasklevel import TaskLevelSimulator

PlacementRule = Callable[[TaskLevelSimulator, int, np.random.Generator], "Sequence[int] | None"]


# ============================================================================ placement (Alg. 1)
def _available(sim: TaskLevelSimulator, job: int) -> list[int]:
    """GPUs with enough free memory for one of ``job``'s workers (Alg. 1 lines 5 and 16)."""
    return [g for g in range(sim.num_gpus) if sim.fits(g, job)]


def lwf_placement(kappa: float = 1) -> PlacementRule:
    """LWF-κ (Alg. 1): least-workload GPUs for ``|G(J)| ≤ κ``, else server by server.

    ``|G(J)| ≤ κ`` (lines 4–11): among GPUs with enough free memory, the ``|G(J)|`` with the least
    remaining workload ``L_g`` (ties: lower GPU index), i.e. LS. ``|G(J)| > κ`` (lines 12–23):
    servers sorted by ``L_S = Σ_g L_g`` (ties: lower index); the fitting GPUs of each, sorted by
    ``L_g``, are appended in that server order and the first ``|G(J)|`` are taken. Line 13 names
    the top ``⌈|G(J)|/N_g⌉`` servers, but line 15 then scans every server in that order, so GPUs
    spill over to the next server when memory runs short; we follow lines 15–19. Returns ``None``
    when fewer than ``|G(J)|`` GPUs fit (line 24). ``L_g`` is the engine's
    :meth:`~ddl_gym.sim.tasklevel.TaskLevelSimulator.gpu_loads` (sum of the resident jobs'
    remaining service, so line 8's ``L_g += L_J = C_J·|G(J)|`` happens implicitly).

    Args:
        kappa: κ ≥ 1; ``math.inf`` gives LS.
    """
    if not kappa >= 1:
        raise ConfigError(f"LWF-κ: κ must be >= 1, got {kappa!r}")

    def rule(sim: TaskLevelSimulator, job: int, rng: np.random.Generator) -> list[int] | None:
        need = sim.G[job]
        avail = _available(sim, job)
        if len(avail) < need:
            return None
        loads = sim.gpu_loads()
        if need <= kappa:
            avail.sort(key=lambda g: (loads[g], g))
            return avail[:need]
        server_load = [sum(loads[g] for g in ids) for ids in sim.server_gpu_ids]
        fits = set(avail)
        chosen: list[int] = []
        for s in sorted(range(sim.num_servers), key=lambda s: (server_load[s], s)):
            chosen.extend(sorted((g for g in sim.server_gpu_ids[s] if g in fits), key=lambda g: (loads[g], g)))
            if len(chosen) >= need:
                break
        return chosen[:need]

    rule.__name__ = f"lwf{kappa:g}" if isinstance(kappa, (int, float)) else "lwf"
    return rule


def least_workload_placement(sim: TaskLevelSimulator, job: int, rng: np.random.Generator) -> list[int] | None:
    """LS (list scheduling): the ``|G(J)|`` fitting GPUs with the least workload ``L_g`` (LWF-∞)."""
    need = sim.G[job]
    avail = _available(sim, job)
    if len(avail) < need:
        return None
    loads = sim.gpu_loads()
    avail.sort(key=lambda g: (loads[g], g))
    return avail[:need]


def first_fit_placement(sim: TaskLevelSimulator, job: int, rng: np.random.Generator) -> list[int] | None:
    """FF (first fit): the first ``|G(J)|`` fitting GPUs in index order (server by server)."""
    need = sim.G[job]
    avail = _available(sim, job)
    return avail[:need] if len(avail) >= need else None


def random_placement(sim: TaskLevelSimulator, job: int, rng: np.random.Generator) -> list[int] | None:
    """RAND: ``|G(J)|`` fitting GPUs uniformly at random (drawn from the episode's generator)."""
    need = sim.G[job]
    avail = _available(sim, job)
    if len(avail) < need:
        return None
    return sorted(int(g) for g in rng.choice(np.asarray(avail), size=need, replace=False))


def make_placement(name: str) -> PlacementRule:
    """``"lwf<κ>"`` (e.g. ``"lwf1"``, ``"lwf16"``), ``"ls"``, ``"ff"`` or ``"rand"``."""
    key = name.strip().lower()
    fixed = {"ls": least_workload_placement, "ff": first_fit_placement, "rand": random_placement}
    if key in fixed:
        return fixed[key]
    match = re.fullmatch(r"lwf-?(\d+)", key)
    if match and int(match.group(1)) >= 1:
        return lwf_placement(int(match.group(1)))
    raise ConfigError(f"unknown Ada-SRSF placement {name!r}; choose lwf<κ> (κ >= 1, e.g. lwf1), ls, ff or rand")


# ============================================================================ communication (Alg. 2)
def adadual_threshold(b: float, eta: float) -> float:
    """``b / (2(b+η))`` (Theorem 2, eq. 13)."""
    return b / (2.0 * (b + eta))


def adadual_accepts(m_new: float, m_old: float, b: float, eta: float) -> bool:
    """Alg. 2 lines 15–19: start the new task next to the old one iff ``M_new/M_old < b/(2(b+η))``."""
    return m_old > 0.0 and m_new / m_old < adadual_threshold(b, eta)


#: ``decide_hold``'s answer for an admission.
_ADMIT: tuple[bool, tuple[int, ...], tuple[int, ...], int, int] = (True, (), (), 0, 0)


def _most_crowded(count: Sequence[int], servers: tuple[int, ...]) -> int:
    """The server of ``servers`` with the most running all-reduces (lowest index on ties)."""
    best = servers[0]
    for s in servers:
        if count[s] > count[best]:
            best = s
    return best


class AdaDual:
    """AdaDUAL (Alg. 2): adaptive admission of an all-reduce given the tasks on its servers.

    Lines 3–9: ``max_task`` = the largest number of running all-reduces on the job's servers and
    ``C_old`` = the union of the task sets of the servers where a new maximum was found (servers
    in ascending index order) — with ``max_task = 1`` that is the one task of the first server
    holding one. Lines 10–12: no running task: start. Lines 13–20: exactly one: start iff
    ``M_new / M_old < b/(2(b+η))`` with ``M_old`` the *remaining* message size of that task (line
    14, read without side effect). Lines 21–23: two or more: wait.

    Args:
        b, eta: eq. (5) parameters in s/byte (only their ratio matters).
        replicate_probe_defect: reproduce the authors' simulator, whose size check advances the
            probed transfer (see :meth:`TaskLevelSimulator.mark_probe`). Off by default; the engine
            must be built with ``probe_defect=True`` for it to have an effect.
    """

    #: An all-reduce with no other task on its servers is always admitted (lines 10-12), so the
    #: engine may run it in closed form.
    admits_when_idle = True
    #: A refusal can only turn into an admission after the task set of one of the job's servers
    #: changed (the probed task's remaining size only shrinks), so the engine may skip re-checks.
    reconsider_on_server_change_only = True

    def __init__(self, b: float, eta: float, *, replicate_probe_defect: bool = False) -> None:
        if not (b > 0 and eta >= 0):
            raise ConfigError(f"AdaDUAL: need b > 0 and eta >= 0, got b={b!r}, eta={eta!r}")
        self.b = float(b)
        self.eta = float(eta)
        self.threshold = adadual_threshold(self.b, self.eta)
        self.replicate_probe_defect = bool(replicate_probe_defect)

    def __call__(self, sim: TaskLevelSimulator, job: int) -> bool:
        return self.decide_hold(sim, job)[0]

    def engine_kernel(self) -> tuple[str, float] | None:
        """``("adadual", threshold)``: the engine may run its copy of :meth:`decide_hold` itself
        (:meth:`TaskLevelSimulator._adadual`, checked against this method in debug mode). None with
        the probe defect (it needs :meth:`TaskLevelSimulator.mark_probe`) or an overridden rule."""
        if self.replicate_probe_defect or type(self).decide_hold is not AdaDual.decide_hold:
            return None
        return ("adadual", self.threshold)

    def decide(self, sim: TaskLevelSimulator, job: int) -> tuple[bool, tuple[int, ...], tuple[int, ...]]:
        """Alg. 2, plus the servers on which a change could turn a refusal into an admission.

        Returns ``(admit, dec, inc)``: after a refusal the engine reconsiders the job when a task
        ends on a server in ``dec`` or starts on one in ``inc``. Refused with ``max_task > 1``:
        nothing helps until the most crowded of its servers drains. Refused by the size rule: the
        task of the first server holding one ending, or a task starting on an earlier server (it
        would become ``C_old``). With the probe defect: any change (as the authors' per-tick loop
        re-probes, and the probe target must be tracked).
        """
        return self.decide_hold(sim, job)[:3]

    def decide_hold(self, sim: TaskLevelSimulator, job: int) -> tuple[bool, tuple[int, ...], tuple[int, ...], int, int]:
        """:meth:`decide` plus ``(hold_server, hold_count)``: a refusal by lines 21–23 stands while
        ``hold_server`` runs at least ``hold_count`` (= 2) all-reduces, whatever else changes
        (``hold_count = 0``: no such guarantee, e.g. a refusal by the size rule)."""
        count = sim.comm_count
        servers = sim.job_servers[job]
        # Lines 4-9: max_task > 1 as soon as one server runs two tasks (whatever the others hold);
        # else C_old is the task of the first server running one.
        first = -1
        for i, s in enumerate(servers):
            c = count[s]
            if c:
                if c > 1:  # lines 21-23
                    # Admission needs every server below two tasks, so waiting on the most
                    # crowded one suffices (when it drains, all others are looked at afresh).
                    crowded = _most_crowded(count, servers)
                    if self.replicate_probe_defect:
                        return False, servers, servers, crowded, 2
                    return False, (crowded,), (), crowded, 2
                if first < 0:
                    first = i
        if first < 0:
            return _ADMIT  # lines 10-12
        (old,) = sim.comm_on_server[servers[first]]
        m_old = sim.comm_remaining_bytes(old)  # line 14: no side effect
        if self.replicate_probe_defect:
            sim.mark_probe(old, job)
        if m_old > 0.0 and sim.message_bytes[job] / m_old < self.threshold:  # lines 15-19
            return _ADMIT
        if self.replicate_probe_defect:
            return False, servers, servers, 0, 0
        return False, (servers[first],), servers[:first], 0, 0


class SRSFn:
    """SRSF(n): admit an all-reduce only while fewer than ``n`` run on every one of its servers."""

    admits_when_idle = True
    reconsider_on_server_change_only = True

    def __init__(self, n: int) -> None:
        if int(n) < 1:
            raise ConfigError(f"SRSF(n): n must be >= 1, got {n!r}")
        self.n = int(n)

    def __call__(self, sim: TaskLevelSimulator, job: int) -> bool:
        return self.decide_hold(sim, job)[0]

    def engine_kernel(self) -> tuple[str, int] | None:
        """``("srsf", n)``: the engine may run its copy of :meth:`decide_hold` itself
        (:meth:`TaskLevelSimulator._srsf_n`, checked against this method in debug mode)."""
        if type(self).decide_hold is not SRSFn.decide_hold:
            return None
        return ("srsf", self.n)

    def decide(self, sim: TaskLevelSimulator, job: int) -> tuple[bool, tuple[int, ...], tuple[int, ...]]:
        """``(admit, dec, inc)``: a refusal stands until its most crowded server drains."""
        return self.decide_hold(sim, job)[:3]

    def decide_hold(self, sim: TaskLevelSimulator, job: int) -> tuple[bool, tuple[int, ...], tuple[int, ...], int, int]:
        """:meth:`decide` plus ``(hold_server, hold_count)``: a refusal stands while its most crowded
        server runs at least ``n`` all-reduces."""
        count = sim.comm_count
        servers = sim.job_servers[job]
        n = self.n
        for s in servers:
            if count[s] >= n:
                crowded = _most_crowded(count, servers)
                return False, (crowded,), (), crowded, n
        return _ADMIT


def make_comm_rule(name: str, model: AllReduceContentionModel, *,
                   replicate_probe_defect: bool = False) -> AdaDual | SRSFn:
    """``"ada"`` (AdaDUAL with the model's ``b``, ``η``) or ``"srsf<n>"`` (e.g. ``"srsf1"``)."""
    key = name.strip().lower()
    if key in ("ada", "adadual", "ada-srsf"):
        return AdaDual(model.b, model.eta, replicate_probe_defect=replicate_probe_defect)
    match = re.fullmatch(r"srsf\(?(\d+)\)?", key)
    if match and int(match.group(1)) >= 1:
        if replicate_probe_defect:
            raise ConfigError("replicate_probe_defect only applies to AdaDUAL (comm='ada'); SRSF(n) never probes")
        return SRSFn(int(match.group(1)))
    raise ConfigError(f"unknown Ada-SRSF communication rule {name!r}; choose ada, srsf1, srsf2, srsf3 (srsf<n>)")


# ============================================================================ the policy object
class AdaSRSFPolicy:
    """A placement rule × an all-reduce admission rule, run on the task-level engine.

    Args:
        placement: ``"lwf<κ>"``, ``"ls"``, ``"ff"`` or ``"rand"``.
        comm: ``"ada"`` (Ada-SRSF) or ``"srsf<n>"``.
        replicate_probe_defect: reproduce the authors' simulator defect (AdaDUAL's size check
            advances the checked transfer); for comparison only.
        gpu_sharing: override the scenario's ``options["gpu_sharing"]`` (default: share GPUs).
        model: override the scenario's eq. (5) parameters (an ``AllReduceContentionModel``).
        fast: closed-form cohorts in the engine (``False``: every task is an event; same results).
        debug: engine invariant checks.
        name: override the policy name.

    Attributes:
        name: e.g. ``"lwf1+ada-srsf"``, ``"ff+srsf1"``.
        engine: ``"task"``.
        last_simulator: the engine of the latest episode (statistics, state), or ``None``.
    """

    engine = "task"

    def __init__(
        self,
        placement: str = "lwf1",
        comm: str = "ada",
        *,
        replicate_probe_defect: bool = False,
        gpu_sharing: bool | None = None,
        model: AllReduceContentionModel | None = None,
        fast: bool = True,
        debug: bool = False,
        name: str | None = None,
    ) -> None:
        self.placement_name = placement.strip().lower()
        self.comm_name = comm.strip().lower()
        self.placement = make_placement(self.placement_name)
        make_comm_rule(self.comm_name, AllReduceContentionModel(), replicate_probe_defect=replicate_probe_defect)
        self.replicate_probe_defect = bool(replicate_probe_defect)
        self.gpu_sharing = gpu_sharing
        if model is not None and not isinstance(model, AllReduceContentionModel):
            raise ConfigError(f"Ada-SRSF policy: model must be an AllReduceContentionModel, got {type(model).__name__}")
        self.model = model
        self.fast = bool(fast)
        self.debug = bool(debug)
        label = "ada-srsf" if self.comm_name in ("ada", "adadual", "ada-srsf") else self.comm_name
        default = f"{self.placement_name}+{label}" + ("+probe-defect" if replicate_probe_defect else "")
        self.name = name or default
        self.last_simulator: TaskLevelSimulator | None = None

    def _model_for(self, scenario: Any) -> AllReduceContentionModel:
        if self.model is not None:
            return self.model
        model = getattr(scenario, "model", None)
        if isinstance(model, AllReduceContentionModel):
            return model
        raise ConfigError(
            f"policy {self.name!r} runs on the task-level engine and needs a scenario whose model is the "
            f"all-reduce contention model (e.g. 'ada-srsf'); scenario {getattr(scenario, 'name', scenario)!r} "
            f"uses {type(model).__name__}"
        )

    def make_simulator(self, scenario: Any, cluster: ClusterSpec, workload: Workload,
                       rng: np.random.Generator) -> TaskLevelSimulator:
        """The engine for one episode (``scenario`` supplies ``model`` and ``options``)."""
        model = self._model_for(scenario)
        options = dict(getattr(scenario, "options", None) or {})
        sharing = self.gpu_sharing if self.gpu_sharing is not None else bool(options.get("gpu_sharing", True))
        comm = make_comm_rule(self.comm_name, model, replicate_probe_defect=self.replicate_probe_defect)
        return TaskLevelSimulator(
            cluster, workload, model, placement=self.placement, comm_admission=comm, rng=rng,
            gpu_sharing=sharing, fast=self.fast, debug=self.debug, probe_defect=self.replicate_probe_defect,
        )

    def run_episode(self, scenario: Any, cluster: ClusterSpec, workload: Workload,
                    rng: np.random.Generator) -> SimResult:
        """Simulate one episode to completion (the harness's self-driving entry point)."""
        sim = self.make_simulator(scenario, cluster, workload, rng)
        self.last_simulator = sim
        result = sim.run()
        result.policy = self.name
        return result

    def __repr__(self) -> str:
        return f"AdaSRSFPolicy({self.name!r})"


def make_ada_srsf_policy(placement: str = "lwf1", comm: str = "ada", **params: Any) -> AdaSRSFPolicy:
    """Registry factory: ``make_ada_srsf_policy("lwf1", "ada")`` is Ada-SRSF with LWF-1 placement.

    Args:
        placement: ``"lwf1"`` / ``"lwf<κ>"``, ``"rand"``, ``"ff"`` or ``"ls"``.
        comm: ``"ada"``, ``"srsf1"``, ``"srsf2"``, ``"srsf3"`` (any ``"srsf<n>"``).
        **params: :class:`AdaSRSFPolicy` keyword arguments (``replicate_probe_defect``,
            ``gpu_sharing``, ``model``, ``fast``, ``debug``, ``name``).
    """
    return AdaSRSFPolicy(placement, comm, **params)
