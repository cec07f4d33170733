"""Non-clairvoyant references for the job-level engine: Tiresias's 2D-LAS and 2D-Gittins index.

Both see what a cluster scheduler sees — arrivals, each job's features (GPUs, model, user) and its
*attained service* — and never a job's remaining work (they read neither ``remaining`` nor
``iterations`` nor ``predicted_iterations``). Attained service is two-dimensional as in Tiresias
(Gu et al., NSDI'19, §3.1): GPUs × seconds executed so far, kept by the policy's own ledger from
the times it started and preempted jobs.

* ``las`` — Tiresias's discretised 2D-LAS (§3.2, "Discretized 2D-LAS"): queues split at
  ``limits`` GPU-seconds (Tiresias's official simulator: 3250 and 7200), a new job enters Q0, jobs
  are served queue by queue and FIFO (by the time they entered the queue) inside one; at every
  event (arrival, completion, the next demotion of a running job) the policy scans jobs in that
  order, keeps every job that fits the free GPUs (fit-first) and **preempts** running jobs that do
  not make the cut (restart overhead ``overhead`` seconds, charged by the engine as extra
  iterations). ``las-np`` is the non-preemptive reading: only queued jobs are ordered (so with no
  attained service yet it is FIFO with fit-first skipping).
* ``gittins`` — the Gittins index policy (Gittins, *Multi-armed Bandit Allocation Indices*, 1989;
  Tiresias §3.2 "2DAS-Gittins"): with ``S`` a job's total 2D service drawn from the size
  distribution and ``a`` its attained service, the index is
  ``G(a) = sup_{Δ>0} P(S − a ≤ Δ | S > a) / E[min(S − a, Δ) | S > a]`` and the job of highest index
  runs first; a running job keeps its index until it completes or has received the maximising
  ``Δ*`` more service (then the policy is woken to re-rank). Preemptive like ``las``;
  ``gittins-np`` never preempts (for queued jobs that never ran, ``a = 0``, so it orders them by
  ``G(0)`` of their feature class — the non-preemptive ``c/E[S]``-type rule reads the same
  distribution).

**The size distribution** (what a cluster knows from its history, never the current jobs' sizes):
``prior=SCENARIO`` samples 2D service ``G_j·p_j`` (``p_j``: run time alone on the most consolidated
placement, :func:`ddl_gym.sim.lower_bound.minimum_runtimes`) from that scenario's episodes with seeds
``prior_seeds`` (``"A-B"``, default ``0-19``, the suite's training seeds); without ``prior`` the
history is only the jobs finished so far in this episode (their attained service at completion), and
until ``min_history`` of them have finished the index is the LAS order. Per job the distribution is
that of its *feature class* (same GPU count and model) when the class has at least ``min_class``
samples, else of its GPU count, else all samples (a stated rule, applied per job).

Placement: any classic rule (``ddl_gym.placement``), default ``pack``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ddl_gym.placement import get_placement_rule
from ddl_gym.sim.engine import QUEUED, RUNNING, Simulator
from ddl_gym.sim.model import ConfigError, Workload

#: Tiresias's official 2D-LAS queue limits (GPU-seconds).
TIRESIAS_LIMITS: tuple[float, ...] = (3250.0, 7200.0)


def _parse_limits(limits: Any) -> tuple[float, ...]:
    if isinstance(limits, (int, float)):
        values = (float(limits),)
    elif isinstance(limits, str):
        try:
            values = tuple(float(x) for x in limits.split("/") if x.strip())
        except ValueError:
            raise ConfigError(f"las: limits must be GPU-seconds separated by '/', e.g. 3250/7200, got {limits!r}") from None
    else:
        values = tuple(float(x) for x in limits)
    if any(not math.isfinite(v) or v <= 0 for v in values) or list(values) != sorted(set(values)):
        raise ConfigError(f"las: limits must be increasing positive GPU-seconds, got {limits!r}")
    return values


def _parse_seeds(seeds: Any) -> range:
    if isinstance(seeds, int):
        return range(seeds, seeds + 1)
    text = str(seeds)
    first, dash, last = text.partition("-")
    try:
        lo, hi = int(first), int(last) if dash else int(first)
    except ValueError:
        raise ConfigError(f"gittins: prior_seeds must be 'A-B' (inclusive), got {seeds!r}") from None
    if hi < lo:
        raise ConfigError(f"gittins: prior_seeds must be 'A-B' with A <= B, got {seeds!r}")
    return range(lo, hi + 1)


def _class_keys(workload: Workload) -> list[tuple[int, str]]:
    names = [m.name for m in workload.models]
    return [(int(g), names[int(k)]) for g, k in zip(workload.gpus, workload.model_index)]


class SizeDistribution:
    """Empirical 2D-service samples per feature class with the fallback rule of the module docstring."""

    def __init__(self, min_class: int = 30) -> None:
        self.min_class = int(min_class)
        self._by_class: dict[tuple[int, str], list[float]] = {}
        self._by_gpus: dict[int, list[float]] = {}
        self._all: list[float] = []
        self._sorted: dict[Any, np.ndarray] = {}

    def add(self, key: tuple[int, str], service: float) -> None:
        self._by_class.setdefault(key, []).append(service)
        self._by_gpus.setdefault(key[0], []).append(service)
        self._all.append(service)
        self._sorted.clear()

    def __len__(self) -> int:
        return len(self._all)

    def sample_for(self, key: tuple[int, str]) -> np.ndarray:
        """Sorted samples of ``key``'s class, else its GPU count, else all (module docstring)."""
        if key in self._by_class and len(self._by_class[key]) >= self.min_class:
            ref: Any = ("class", key)
            values = self._by_class[key]
        elif key[0] in self._by_gpus and len(self._by_gpus[key[0]]) >= self.min_class:
            ref, values = ("gpus", key[0]), self._by_gpus[key[0]]
        else:
            ref, values = ("all",), self._all
        out = self._sorted.get(ref)
        if out is None:
            out = self._sorted[ref] = np.sort(np.asarray(values, dtype=np.float64))
        return out


def gittins_index(sorted_sizes: np.ndarray, attained: float) -> tuple[float, float]:
    """``(G(a), Δ*)`` for the empirical distribution ``sorted_sizes`` at attained service ``a``.

    The supremum over Δ is attained at a sample point ``Δ = s_i − a`` (between sample points the
    numerator is constant and the denominator grows). If no sample exceeds ``a`` the job has outlived
    its history: index 0 (served last), ``Δ* = ∞``.
    """
    tail = sorted_sizes[np.searchsorted(sorted_sizes, attained, side="right"):] - attained
    m = tail.size
    if m == 0:
        return 0.0, math.inf
    cum = np.cumsum(tail)
    i = np.arange(m)
    expected = (cum + (m - 1 - i) * tail) / m  # E[min(S − a, Δ_i) | S > a] with Δ_i = tail[i]
    prob = (i + 1) / m
    with np.errstate(divide="ignore"):
        ratio = np.where(expected > 0, prob / np.maximum(expected, 1e-300), np.inf)
    best = int(np.argmax(ratio))
    return float(ratio[best]), float(tail[best])


class AttainedServicePolicy:
    """2D-LAS or 2D-Gittins on the job-level engine (module docstring).

    Args:
        kind: ``"las"`` or ``"gittins"``.
        preempt: preempt running jobs that lose their place (Tiresias) or never preempt.
        placement: classic placement rule name.
        limits: 2D-LAS queue limits, GPU-seconds (``"3250/7200"``).
        overhead: restart overhead of a preempted job, seconds (an assumption: a checkpoint/restore
            of tens of seconds; configurable).
        prior: scenario whose episodes (``prior_seeds``) give the Gittins size distribution; empty
            for the in-episode history.
        prior_seeds: ``"A-B"`` inclusive seed range for ``prior``.
        min_class: samples a feature class needs before its own distribution is used.
        min_history: with no prior, finished jobs needed before the Gittins index replaces LAS order.
    """

    engine = "job"

    def __init__(self, kind: str = "las", preempt: bool = True, placement: str = "pack", limits: Any = TIRESIAS_LIMITS,
                 overhead: float = 10.0, prior: str = "", prior_seeds: Any = "0-19", min_class: int = 30,
                 min_history: int = 10, name: str | None = None) -> None:
        if kind not in ("las", "gittins"):
            raise ConfigError(f"attained-service policy: kind must be 'las' or 'gittins', got {kind!r}")
        if not (isinstance(overhead, (int, float)) and math.isfinite(overhead) and overhead >= 0):
            raise ConfigError(f"{kind}: overhead must be seconds >= 0, got {overhead!r}")
        self.kind = kind
        self.preempt = bool(preempt)
        self.capabilities = frozenset({"preempt"}) if self.preempt else frozenset()
        self.rule = get_placement_rule(placement)
        self.placement = placement
        self.limits = _parse_limits(limits)
        self.overhead = float(overhead)
        self.prior = str(prior or "")
        self.prior_seeds = _parse_seeds(prior_seeds)
        self.min_class = int(min_class)
        self.min_history = int(min_history)
        base = kind if self.preempt else f"{kind}-np"
        self.name = name or (base if placement == "pack" else f"{base}+{placement}")
        self._prior_cache: SizeDistribution | None = None

    # ------------------------------------------------------------------ size distribution
    def _prior_distribution(self) -> SizeDistribution:
        dist = SizeDistribution(self.min_class)
        if not self.prior:
            return dist
        from ddl_gym.scenarios import get_scenario
        from ddl_gym.sim.lower_bound import minimum_runtimes

        scenario = get_scenario(self.prior)
        for seed in self.prior_seeds:
            cluster, workload = scenario.episode(seed)
            service = workload.gpus * minimum_runtimes(cluster, workload, scenario.model)
            for key, s in zip(_class_keys(workload), service.tolist()):
                dist.add(key, s)
        return dist

    def reset(self, sim: Simulator, rng: np.random.Generator) -> None:
        self._rng = rng
        n = sim.workload.num_jobs
        self._gpus = sim.workload.gpus.tolist()
        self._keys = _class_keys(sim.workload)
        self._banked = [0.0] * n  # 2D service of finished segments
        self._since = [math.nan] * n  # start of the current segment
        self._entered = list(sim.workload.arrival.tolist())  # FIFO key inside a LAS queue
        self._queue_of = [0] * n
        self._finished_seen = 0
        if self.kind == "gittins":
            if self._prior_cache is None:
                self._prior_cache = self._prior_distribution()
            self._dist = SizeDistribution(self.min_class)
            for key, values in self._prior_cache._by_class.items():
                for v in values:
                    self._dist.add(key, v)

    def _attained(self, sim: Simulator, job: int) -> float:
        since = self._since[job]
        running = sim.state[job] == RUNNING and since == since
        return self._banked[job] + (self._gpus[job] * (sim.now - since) if running else 0.0)

    def _learn_finished(self, sim: Simulator) -> None:
        """Add the jobs finished since the last call to the history (their attained service)."""
        done = sim.finished_since(self._finished_seen)
        self._finished_seen += len(done)
        for job in done:
            since = self._since[job]
            service = self._banked[job] + self._gpus[job] * (float(sim.finish_time[job]) - since)
            self._banked[job], self._since[job] = service, math.nan
            self.learn(job, service)

    # ------------------------------------------------------------------ ranking
    def _las_queue(self, attained: float) -> int:
        return int(np.searchsorted(self.limits, attained, side="right"))

    def rank(self, sim: Simulator, jobs: list[int], attained: Any = None) -> tuple[list[int], float]:
        """Jobs in service order and the time of the next re-ranking (demotion / Δ* reached).

        ``attained(job)``: a job's 2D attained service; default the policy's own ledger (an env-level
        caller passes :meth:`Simulator.attained_gpu_seconds`, which keeps the same account).
        """
        wake = math.inf
        keyed = []
        use_gittins = self.kind == "gittins" and len(self._dist) >= (0 if self.prior else self.min_history)
        for job in jobs:
            a = self._attained(sim, job) if attained is None else attained(job)
            if use_gittins:
                index, delta = gittins_index(self._dist.sample_for(self._keys[job]), a)
                keyed.append((-index, self._entered[job], job))
                if sim.state[job] == RUNNING and math.isfinite(delta):
                    wake = min(wake, sim.now + delta / self._gpus[job])
            else:
                q = self._las_queue(a)
                if q != self._queue_of[job]:  # demoted: enters the back of its new queue now
                    self._queue_of[job], self._entered[job] = q, sim.now
                keyed.append((q, self._entered[job], job))
                if sim.state[job] == RUNNING and q < len(self.limits):
                    wake = min(wake, sim.now + (self.limits[q] - a) / self._gpus[job])
        keyed.sort()
        return [job for *_, job in keyed], wake

    def kept(self, sim: Simulator, order: list[int]) -> set[int]:
        """The jobs a preemptive policy keeps: fit-first by GPU count over the whole cluster, in ``order``."""
        free, keep = sim.cluster.num_gpus, set()
        for job in order:
            if self._gpus[job] <= free:
                keep.add(job)
                free -= self._gpus[job]
        return keep

    def learn(self, job: int, service: float) -> None:
        """Add a finished job's 2D service to the Gittins size distribution (its feature class)."""
        if self.kind == "gittins":
            self._dist.add(self._keys[job], service)

    def schedule(self, sim: Simulator) -> None:
        self._learn_finished(sim)
        queued = list(sim.queue)
        running = list(sim.running) if self.preempt else []
        order, wake = self.rank(sim, queued + running)
        if self.preempt:
            keep = self.kept(sim, order)
            for job in running:
                if job not in keep and any(sim.state[q] == QUEUED and q in keep for q in queued):
                    a = self._attained(sim, job)
                    self._banked[job], self._since[job] = a, math.nan
                    sim.preempt(job, overhead_s=self.overhead)
        for job in order:
            if sim.state[job] != QUEUED or self._gpus[job] > sim.num_free:
                continue
            ids = self.rule(sim, job, self._rng)
            if ids is not None:
                sim.start(job, ids)
                self._since[job] = sim.now
        if math.isfinite(wake) and wake > sim.now:
            sim.wake_at(wake)


def make_attained_policy(kind: str = "las", preempt: bool = True, placement: str = "pack", **kwargs: Any) -> AttainedServicePolicy:
    """Registry factory (``las``, ``las-np``, ``gittins``, ``gittins-np``; options as keyword arguments)."""
    return AttainedServicePolicy(kind=kind, preempt=preempt, placement=placement, **kwargs)
