"""Optimus (Peng et al., EuroSys'18) as the SMD paper uses it, and with its own scheduler's semantics.

Every variant uses SMD's analytic speed function instead of Optimus's online-fitted model (Yu §V:
"we use our own speed function to estimate the utility for each job").

* ``optimus`` — Yu §V's definition: "compare the utility gain by adding one more worker and one
  more PS and choose the one with larger utility gain". Per job (spec B2.5): start at
  ``(w, p) = (1, 1)``; repeat: ``gain_w = μ(E/f(p, w+1)) − μ(E/f(p, w))`` and ``gain_p`` likewise;
  stop if the larger gain is ``<= 0`` or its step would break the job's limit (7); else take it
  (ties: the worker). Admission: the same MKP as SMD (spec B5 #4).
  Pathology (documented, measured in the report): the sigmoid is flat far from ``γ3``, where
  both gains are 0 in floating point, so this variant stops at ``(1, 1)`` for such jobs.
* ``optimus-time`` — the same greedy with the completion-time reduction as the gain.
* ``optimus-official`` — the semantics of Optimus's own scheduler (``pengyanghua/optimus``,
  ``scheduler/optimus_scheduler.py``, spec Part D): (1) in job order, each job gets 1 PS + 1 worker
  if the *free* cluster capacity allows (else it is rejected: the interval has no later slot);
  (2) a global priority queue holds each admitted job's better option, keyed by
  ``(remaining time now − remaining time after adding the task) / the task's dominant share``
  (largest ``demand^r / C^r``); (3) pop the best; stop at the first entry whose utility is ``<= 0``
  or that does not fit the free capacity (the first failure ends the loop); else add the task and
  re-queue the job. Options that would break the job's own limit (7) are never queued (a user
  limit is a hard constraint of SMD's world). Capacity is what running tasks *use*, not the
  limits SMD reserves (eq. 2), so this variant may admit jobs whose limits exceed the pool.
"""

from __future__ import annotations

import heapq
from functools import lru_cache

import numpy as np

from ddl_gym.baselines.smd.interval import AllocateThenAdmit, IntervalDecision, IntervalInstance, IntervalPolicy
from ddl_gym.sim.model import ConfigError
from ddl_gym.sim.perf.ps import SMDProfile

OPTIMUS_GAINS: tuple[str, ...] = ("utility", "time")


@lru_cache(maxsize=65536)
def greedy_allocation(profile: SMDProfile, iterations: int, gain: str = "utility") -> tuple[int, int, int]:
    """Yu §V's Optimus greedy for one job: ``(w, p, steps taken)``; ``(0, 0, 0)`` if ``(1, 1)`` breaks the limit.

    Cached (profiles are frozen): the reproduction evaluates the same job on many instances.
    """
    if not profile.fits_limit(1, 1):
        return 0, 0, 0

    def score(w: int, p: int) -> float:
        completion = profile.completion_time(iterations, w, p)
        return profile.utility(completion) if gain == "utility" else -completion

    w, p, steps = 1, 1, 0
    current = score(w, p)
    while True:
        up_w, up_p = score(w + 1, p), score(w, p + 1)
        gain_w, gain_p = up_w - current, up_p - current
        if max(gain_w, gain_p) <= 0:
            break
        nw, np_, new = (w + 1, p, up_w) if gain_w >= gain_p else (w, p + 1, up_p)
        if not profile.fits_limit(nw, np_):
            break
        w, p, current = nw, np_, new
        steps += 1
    return w, p, steps


class OptimusPolicy(AllocateThenAdmit):
    """Yu §V's Optimus baseline (``gain="utility"``) or its completion-time variant (``gain="time"``)."""

    name = "optimus"

    def __init__(self, *, gain: str = "utility", mkp: str = "exact", q: int = 2, name: str | None = None) -> None:
        if gain not in OPTIMUS_GAINS:
            raise ConfigError(f"optimus: unknown gain {gain!r}; choose one of {OPTIMUS_GAINS}")
        super().__init__(mkp=mkp, q=q, name=name or ("optimus" if gain == "utility" else "optimus-time"))
        self.gain = gain

    def allocate(self, instance: IntervalInstance, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, dict]:
        out = [greedy_allocation(prof, int(e), self.gain) for prof, e in zip(instance.profiles, instance.iterations)]
        workers = np.array([o[0] for o in out], dtype=np.int64)
        ps = np.array([o[1] for o in out], dtype=np.int64)
        return workers, ps, {"greedy_steps": np.array([o[2] for o in out], dtype=np.int64)}


class OptimusOfficialPolicy(IntervalPolicy):
    """Optimus's own scheduler on SMD's world (see the module docstring)."""

    name = "optimus-official"
    capacity_mode = "free"

    def __init__(self, *, name: str | None = None) -> None:
        if name:
            self.name = name

    def plan(self, instance: IntervalInstance, rng: np.random.Generator) -> IntervalDecision:
        n = instance.num_jobs
        capacity = np.asarray(instance.capacity, dtype=np.float64)
        free = capacity.copy()
        names = instance.resources
        worker_task = np.zeros((n, len(names)))
        ps_task = np.zeros((n, len(names)))
        for i, prof in enumerate(instance.profiles):
            o, g = dict(zip(prof.resources, prof.worker_demand)), dict(zip(prof.resources, prof.ps_demand))
            worker_task[i] = [o.get(r, 0.0) for r in names]
            ps_task[i] = [g.get(r, 0.0) for r in names]
        with np.errstate(divide="ignore", invalid="ignore"):
            share_w = np.nanmax(np.where(capacity > 0, worker_task / capacity, np.where(worker_task > 0, np.inf, 0.0)), axis=1)
            share_p = np.nanmax(np.where(capacity > 0, ps_task / capacity, np.where(ps_task > 0, np.inf, 0.0)), axis=1)
        slack = 1e-9 * (capacity + 1.0)
        admit = np.zeros(n, dtype=bool)
        workers = np.zeros(n, dtype=np.int64)
        ps = np.zeros(n, dtype=np.int64)
        for i, prof in enumerate(instance.profiles):  # (1) one PS + one worker each, in job order
            need = worker_task[i] + ps_task[i]
            if prof.fits_limit(1, 1) and np.all(need <= free + slack):
                admit[i] = True
                workers[i] = ps[i] = 1
                free -= need

        def entry(i: int) -> tuple[float, int, int] | None:
            prof, e = instance.profiles[i], instance.iterations[i]
            now = prof.completion_time(e, int(workers[i]), int(ps[i]))
            best = None
            for kind, (w, p), share in ((0, (workers[i] + 1, ps[i]), share_w[i]), (1, (workers[i], ps[i] + 1), share_p[i])):
                if not prof.fits_limit(int(w), int(p)):
                    continue
                utility = (now - prof.completion_time(e, int(w), int(p))) / share
                if best is None or utility > best[0]:  # ties: the worker (listed first)
                    best = (utility, kind, i)
            return best

        heap: list[tuple[float, int, int]] = []
        for i in np.flatnonzero(admit):
            item = entry(int(i))
            if item is not None:
                heapq.heappush(heap, (-item[0], item[2], item[1]))
        steps = 0
        while heap:  # (3) the best task cluster-wide; the first failure ends the loop
            neg_utility, i, kind = heapq.heappop(heap)
            if -neg_utility <= 0:
                break
            task = worker_task[i] if kind == 0 else ps_task[i]
            if np.any(task > free + slack):
                break
            free -= task
            if kind == 0:
                workers[i] += 1
            else:
                ps[i] += 1
            steps += 1
            item = entry(i)
            if item is not None:
                heapq.heappush(heap, (-item[0], item[2], item[1]))
        return IntervalDecision(admit, workers, ps, {"queue_steps": steps})
