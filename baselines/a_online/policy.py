"""A-Online (Zhou et al.): geometric-interval online framework (Alg. 1), dual approximation
(Alg. 2) and primal-dual batch scheduling (Alg. 3) over the mincost routines (Alg. 4-7).

Round ``i`` happens at ``τ_i = 2^{i-1}`` slots (``τ_0 = 1``). ``J_i`` = jobs that arrived by ``τ_i``
(``a_j <= τ_i``, the text's definition; spec C5 #7) and are not yet scheduled (Alg. 1 l.3-5, l.10).
A_dual (Alg. 2) calls A_maxweight (Alg. 3) once per sub-round ``ι``, each on its own window of
``τ_i`` slots, for the still-unscheduled jobs of the round (l.2-4). A_maxweight visits the jobs in
arrival order (C5 #8; ``order="density"``: ``w_j`` / ideal resource-time, descending), asks the
q=1 routine (l.3) then the q=0 routine (l.4), keeps the cheaper (strictly, l.5), and admits the job
if ``u_j = w_j − cost_j > 0`` (l.8-9), then raises the prices of what it took (l.13-14, eq. 11):
``δ = λ^{β/C} − 1``, ``λ = 2·T·H·R·F + 1``.

**Execution modes** (spec C5 #1; the choice changes the headline, so it is an option):

* ``mode="calendar"`` (default, spec's recommendation): one absolute reservation calendar. Round
  ``i`` is planned at ``τ_i`` and its sub-round ``ι`` covers ``[τ_i + (ι−1)τ_i, τ_i + ι·τ_i)``, with
  ``β`` (hence prices and free capacity) initialised from earlier reservations; jobs start as planned.
* ``mode="paper"``: Alg. 1 l.8 literally: round ``i``'s schedule runs in ``[A·τ_i, A·τ_{i+1})``
  with a constant ``A`` (``paper_alpha``, default 4, "the typical value of α"), i.e. at most ``A``
  sub-rounds; jobs a round could not place are deferred to the next round (windows stay disjoint,
  so every A_dual call sees an empty cluster, as the paper assumes).

**α** (eq. 6, §5.3): ``α_i = floor((log w(J_i) − log w_min)/(log γ − log(γ−1))) + 1`` with
``γ = 2·log2 λ``, ``w_min`` = the generator's lower bound 200 (C5 #9). It is only a cap: A_dual
stops when every job of the round is scheduled (the paper's early stop), when no remaining job could
finish inside a ``τ_i`` window even on an empty cluster, or when a sub-round schedules nothing on a
window the calendar leaves empty (every later window would repeat it). The *effective α* (sub-rounds
used) is reported in the summary (``alpha_eff_*``), next to the formula's value (``alpha_rule_max``).

**Units** (C5 #2): prices apply to resource use normalised by server capacity. ``F`` defaults to
``max_j w_j / min_j r_j`` with ``r_j`` the normalised resource-time of ``j``'s smallest
configuration, computed from the jobs (known to the operator, like ``T``).

Slots. Local slot ``t`` of a window starting at absolute slot ``o`` is ``[o + t − 1, o + t)``; a job
with ``t^-`` and ``L`` holds its resources over ``[o + t^- − 1, o + t^- − 1 + L)`` (whole slots), but
completes at its exact time ``EDK/(Nρ)`` and releases early; A-Online's later plans do not reuse
that slack (C5 #11).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ddl_gym.baselines.a_online.mincost import FAST, LITERAL, JobRates, Market, Schedule, _Windows
from ddl_gym.baselines.a_online.common import (
    SelfDrivingPolicy, catalogue_arrays, job_rates, require_aonline, schedule_allocation,
)
from ddl_gym.sim.engine import Simulator
from ddl_gym.sim.model import ARCH_PS, ConfigError
from ddl_gym.sim.perf.aonline import SLOT_SECONDS, ideal_config

W_MIN_DEFAULT = 200.0  # generator's lower weight bound (C5 #9)


# ----------------------------------------------------------------------------- eqs. (11), (6)
def price_base(T: float, H: int, R: int, F: float) -> float:
    """``λ = 2(T·H·R·F) + 1`` (eq. 11)."""
    return 2.0 * T * H * R * F + 1.0


def price(utilisation: np.ndarray | float, lam: float) -> np.ndarray | float:
    """``δ = λ^{β/C} − 1`` (eq. 11)."""
    return np.power(lam, utilisation) - 1.0


def alpha_rule(round_weight: float, w_min: float, lam: float) -> int:
    """§5.3's simulation rule: ``floor((log w(J_i) − log w_min) / (log γ − log(γ − 1))) + 1``, ``γ = 2 log2 λ``."""
    gamma = 2.0 * math.log2(lam)
    return int(math.floor((math.log(round_weight) - math.log(w_min)) / (math.log(gamma) - math.log(gamma - 1.0)))) + 1


@dataclass
class _Plan:
    job: int
    start_slot: float
    sched: Schedule
    alloc: Any


@dataclass
class AOnlinePolicy(SelfDrivingPolicy):
    """A-Online as a native scheduler (see the module docstring for every option).

    Args:
        mode: ``"calendar"`` or ``"paper"``.
        paper_alpha: ``A`` of paper mode.
        F: price parameter (``None``: from the jobs, see module docstring).
        horizon_slots: ``T`` of ``λ`` (``None``: the last arrival slot, rounded up).
        order: job order in A_maxweight, ``"arrival"`` or ``"density"``.
        tie_break: ``"completion"`` (default; §7.1(3): among equal-cost schedules the one that ends
            earliest, i.e. at the zero prices of an idle cluster the best worker type and the worker
            count with the smallest completion time) or ``"listing"`` (the first schedule the
            listings enumerate: at zero prices worker type 1, one server, the fewest workers).
        search: ``"pruned"`` (default) or ``"exhaustive"``: the fast routines' exact pruning of the
            completion tie-break (a zero-cost schedule ending at ``e`` cannot be beaten by one of
            ``>= e − 1`` slots) and the per-price-state memo (one market, its window tables and the
            per-(worker type, duration) greedy tables shared by every job until an admission changes
            the prices). Both give identical schedules (tests/baselines/a_online/test_aonline_ect.py); ``exhaustive``
            is the reference.
        strict_listing: keep the listings' printed bugs (C5 #5) in the mincost routines.
        implementation: ``"fast"`` or ``"literal"`` mincost routines.
        w_min: ``w_min`` of the α rule.
    """

    mode: str = "calendar"
    paper_alpha: int = 4
    F: float | None = None
    horizon_slots: float | None = None
    order: str = "arrival"
    tie_break: str = "completion"
    search: str = "pruned"
    strict_listing: bool = False
    implementation: str = "fast"
    w_min: float = W_MIN_DEFAULT
    max_workers: int | None = None  # Fig. 10: cap on workers per job (None: D_j)
    name: str = "a-online"
    capabilities: frozenset = frozenset()
    rounds: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.mode not in ("calendar", "paper"):
            raise ConfigError(f"a-online: mode must be 'calendar' or 'paper', got {self.mode!r}")
        if self.order not in ("arrival", "density"):
            raise ConfigError(f"a-online: order must be 'arrival' or 'density', got {self.order!r}")
        if self.tie_break not in ("listing", "completion"):
            raise ConfigError(f"a-online: tie_break must be 'listing' or 'completion', got {self.tie_break!r}")
        if self.search not in ("pruned", "exhaustive"):
            raise ConfigError(f"a-online: search must be 'pruned' or 'exhaustive', got {self.search!r}")
        if self.implementation not in ("fast", "literal"):
            raise ConfigError(f"a-online: implementation must be 'fast' or 'literal', got {self.implementation!r}")
        from ddl_gym.bounds import check_int

        from ddl_gym.bounds import check_float

        check_int(self.paper_alpha, 1, 1_000, "a-online: paper_alpha")
        if self.max_workers is not None:
            check_int(self.max_workers, 1, 100_000, "a-online: max_workers")
        for key in ("F", "horizon_slots"):
            if getattr(self, key) is not None:
                check_float(getattr(self, key), 0.0, 1e12, f"a-online: {key}", low_open=True)
        check_float(self.w_min, 0.0, 1e12, "a-online: w_min")

    # ------------------------------------------------------------------ harness entry points

    def reset(self, sim: Simulator, rng: np.random.Generator) -> None:
        cluster, workload = sim.cluster, sim.workload
        require_aonline(self.name, workload, cluster)
        self.cluster = cluster
        self.C, self.e, self.z, self.bw = catalogue_arrays(cluster)
        self.arch = workload.arch.tolist()
        self.profiles = [workload.job_profile(j) for j in range(workload.num_jobs)]
        self.rates: list[JobRates] = [job_rates(p, cluster, a) for p, a in zip(self.profiles, self.arch)]
        if self.max_workers is not None:  # the routines enumerate N <= chunks
            self.rates = [replace(r, chunks=max(1, min(r.chunks, int(self.max_workers)))) for r in self.rates]
        self.weight = workload.weight.tolist()
        self.arrival_slot = (workload.arrival / SLOT_SECONDS).tolist()
        H, R = self.C.shape
        T = self.horizon_slots if self.horizon_slots is not None else math.ceil(max(self.arrival_slot, default=1.0))
        self.F_used = float(self.F) if self.F is not None else self._default_F()
        self.lam = price_base(T, H, R, self.F_used)
        self.calendar = np.zeros((H, R, 0))  # β per absolute slot (reservations of every plan so far)
        self.next_round = 1
        self.planned: set[int] = set()
        self.pending: list[_Plan] = []
        self.rounds = []
        self._woken: set[float] = set()
        self.failed_starts = 0
        self.min_length = [self._min_length(j) for j in range(workload.num_jobs)]
        routines = FAST if self.implementation == "fast" else LITERAL
        self._routines = routines

    def _default_F(self) -> float:
        """``max w / min r`` with ``r_j`` the normalised resource-time of j's smallest configuration."""
        cmax = self.C.max(axis=0)
        best = math.inf
        for j, prof in enumerate(self.profiles):
            rates = self.rates[j]
            for m in range(self.e.shape[0]):
                wshare = float((self.e[m] / cmax).sum())
                if self.arch[j] == ARCH_PS:
                    for p in range(self.z.shape[0]):
                        rho = rates.ps_rate[1, m, p]
                        work = wshare * rates.total / rho  # N·d is constant: N workers for EDK/(Nρ) slots
                        ps = float((self.z[p] / cmax).sum()) * rates.total / (prof.chunks * rho)
                        best = min(best, work + ps)
                else:
                    best = min(best, wshare * rates.total * min(1.0 / (phi * rates.ra_rate[1, m, phi]) * phi
                                                                for phi in range(1, prof.chunks + 1)))
        return max(1.0, max(self.weight) / best)

    def _min_length(self, j: int) -> int:
        """Shortest duration of any configuration (empty cluster): a job needs ``τ_i >= L + 1``."""
        r = self.rates[j]
        if self.arch[j] == ARCH_PS:
            return int(math.ceil(r.total / (r.chunks * r.ps_rate.max()) - 1e-12))
        return min(int(math.ceil(r.total / (phi * r.ra_rate[:, :, phi].max()))) for phi in range(1, r.chunks + 1))

    # ------------------------------------------------------------------ Alg. 1
    def schedule(self, sim: Simulator) -> None:
        now = sim.now / SLOT_SECONDS
        while 2 ** (self.next_round - 1) <= now + 1e-9:  # l.2-3: every round whose τ_i has come
            self._round(sim, self.next_round)
            self.next_round += 1
        self._start_due(sim, now)
        unplanned = any(j not in self.planned for j in sim.queue) or sim.has_future_arrivals
        if unplanned:
            self._wake(sim, 2 ** (self.next_round - 1))

    def _wake(self, sim: Simulator, slot: float) -> None:
        t = slot * SLOT_SECONDS
        if t not in self._woken and t >= sim.now:
            self._woken.add(t)
            sim.wake_at(t)

    def _start_due(self, sim: Simulator, now: float) -> None:
        keep = []
        for plan in sorted(self.pending, key=lambda p: (p.start_slot, p.job)):
            if plan.start_slot <= now + 1e-9:
                if sim.fits(plan.alloc):
                    sim.start(plan.job, plan.alloc)
                    continue
                self.failed_starts += 1  # a predecessor's exact finish a rounding error later: retry at the next event
            keep.append(plan)
        self.pending = keep

    def _round(self, sim: Simulator, i: int) -> None:
        tau = 2 ** (i - 1)
        jobs = [j for j in sim.queue if j not in self.planned and self.arrival_slot[j] <= tau + 1e-9]  # l.3-5
        if not jobs:
            return
        if self.order == "density":
            jobs.sort(key=lambda j: (-self.weight[j] / self._ideal_resource_time(j), j))
        alpha_cap = alpha_rule(sum(self.weight[j] for j in jobs), self.w_min, self.lam)
        origin0 = tau if self.mode == "calendar" else self.paper_alpha * tau
        cap = alpha_cap if self.mode == "calendar" else min(self.paper_alpha, alpha_cap)
        remaining = list(jobs)
        used = 0
        for iota in range(1, cap + 1):  # Alg. 2 l.2
            if not remaining or all(self.min_length[j] > tau - 1 for j in remaining):
                break
            origin = origin0 + (iota - 1) * tau
            placed = self._maxweight(remaining, origin, tau)  # Alg. 2 l.3
            used += 1
            for j, sched in placed:
                self._commit(sim, j, origin, sched)
            done = {j for j, _ in placed}
            remaining = [j for j in remaining if j not in done]
            if not placed and origin >= self.calendar.shape[2]:
                break  # an empty window scheduled nothing: every later one would repeat it
        self.rounds.append({"round": i, "tau": tau, "jobs": len(jobs), "scheduled": len(jobs) - len(remaining),
                            "alpha_eff": used, "alpha_rule": alpha_cap})

    def _ideal_resource_time(self, j: int) -> float:
        m, p, n, ps = ideal_config(self.profiles[j], self.cluster, self.arch[j])
        use = n * self.e[m] + (ps * self.z[p] if p >= 0 else 0.0)
        rate = self.rates[j].ps_rate[0, m, p] if p >= 0 else self.rates[j].ra_rate[0, m, n]
        return float((use / self.C.sum(axis=0)).sum()) * self.rates[j].total / (n * rate)

    def _commit(self, sim: Simulator, j: int, origin: int, sched: Schedule) -> None:
        start = origin + sched.start - 1
        self._reserve(start, sched)
        alloc = schedule_allocation(self.cluster, sched)
        self.planned.add(j)
        self.pending.append(_Plan(j, float(start), sched, alloc))
        self._wake(sim, float(start))

    def _reserve(self, start: int, sched: Schedule) -> None:
        end = start + sched.length
        if end > self.calendar.shape[2]:
            grow = np.zeros(self.calendar.shape[:2] + (end - self.calendar.shape[2],))
            self.calendar = np.concatenate([self.calendar, grow], axis=2)
        for h, c in sched.workers:
            self.calendar[h, :, start:end] += c * self.e[sched.worker_type][:, None]
        for h, c in sched.ps:
            self.calendar[h, :, start:end] += c * self.z[sched.ps_type][:, None]

    # ------------------------------------------------------------------ Alg. 3
    def _maxweight(self, jobs: list[int], origin: int, tau: int) -> list[tuple[int, Schedule]]:
        """A_maxweight over the window ``[origin, origin + τ)``; returns the admitted (job, schedule)."""
        H, R = self.C.shape
        beta = np.zeros((H, R, tau))  # l.1 (from the calendar in calendar mode; paper windows are empty)
        known = max(0, min(tau, self.calendar.shape[2] - origin))
        if known:
            beta[:, :, :known] = self.calendar[:, :, origin : origin + known]
        Ccol = self.C[:, :, None]
        admitted = []
        market, windows = None, None
        for j in jobs:  # l.2
            if market is None or self.search == "exhaustive":  # a new price state (first job, or after an admission)
                market = Market(unit_price=price(beta / Ccol, self.lam) / Ccol, free=Ccol - beta,
                                worker_demand=self.e, ps_demand=self.z, bw=self.bw)
                windows = _Windows(market) if self.implementation == "fast" else None
            cost_j, l_j = self._best(j, market, windows)
            if l_j is None or not self.weight[j] - cost_j > 0:  # l.8-9: u_j > 0
                continue
            market = None  # l.13-14 change the prices
            admitted.append((j, l_j))  # l.10-12
            win = slice(l_j.start - 1, l_j.start - 1 + l_j.length)
            for h, c in l_j.workers:  # l.13 (l.14: prices are recomputed from β above)
                beta[h, :, win] += c * self.e[l_j.worker_type][:, None]
            for h, c in l_j.ps:
                beta[h, :, win] += c * self.z[l_j.ps_type][:, None]
        return admitted

    def _best(self, j: int, market: Market, windows: _Windows | None = None) -> tuple[float, Schedule | None]:
        """Alg. 3 l.3-7: the q=1 routine, replaced by the q=0 one only if strictly cheaper (or, with the
        completion tie-break, equally cheap and ending earlier)."""
        kwargs: dict[str, Any] = {"strict_listing": self.strict_listing, "tie_break": self.tie_break}
        if self.implementation == "fast":
            kwargs["windows"] = windows if windows is not None else _Windows(market)
            kwargs["prune"] = self.search == "pruned"
        if self.arch[j] == ARCH_PS:
            one, dist = self._routines["mincost2"], self._routines["mincost1"]
        else:
            one, dist = self._routines["ra_mincost1"], self._routines["ra_mincost2"]
        cost_j, l_j = one(self.rates[j], market, **kwargs)
        if self.search == "pruned" and self.implementation == "fast" and l_j is not None:
            kwargs["incumbent"] = (cost_j, l_j.end)  # only a better q=0 schedule can replace it (l.5)
        cost, l = dist(self.rates[j], market, **kwargs)
        if cost < cost_j or (self.tie_break == "completion" and l is not None and cost == cost_j
                             and l_j is not None and l.end < l_j.end):
            cost_j, l_j = cost, l
        return cost_j, l_j

    # ------------------------------------------------------------------ reporting
    def summary_extras(self) -> dict[str, float]:
        used = [r["alpha_eff"] for r in self.rounds if r["alpha_eff"]]
        return {
            "alpha_eff_mean": float(np.mean(used)) if used else 0.0,
            "alpha_eff_max": float(max(used)) if used else 0.0,
            "alpha_rule_max": float(max((r["alpha_rule"] for r in self.rounds), default=0)),
            "rounds": float(len(self.rounds)),
            "price_F": self.F_used,
            "failed_starts": float(self.failed_starts),
        }


def make_a_online(**kwargs: Any) -> AOnlinePolicy:
    """Registry factory: ``make_policy("a-online", mode="paper")``."""
    name = kwargs.pop("name", None)
    policy = AOnlinePolicy(**kwargs)
    if name:
        policy.name = name
    else:
        suffix = [] if policy.mode == "calendar" else [policy.mode]
        if policy.tie_break == "listing":
            suffix.append("listing")
        policy.name = "-".join(["a-online", *suffix])
    return policy
