"""Jain et al. [44]'s greedy for deadline jobs, the comparison of A_maxweight in Zhou Fig. 8.

Zhou §7: "an algorithm from recent literature [44] which proposes a greedy strategy to schedule
jobs with deadlines in the offline scenario". We implement its GreedyRTL form for one batch
(spec C3): jobs sorted by ``w_j / ideal resource-time`` (descending); each is placed at the
**latest** window ending by the batch deadline ``τ_i`` using its ideal configuration (``D_j``
workers of the fastest type, fastest PS type), reducing the worker count until it fits; a job that
fits nowhere is not scheduled. The placement inside a window is the baselines' rule on the window's
minimum free capacity; the duration uses the distributed ρ unless everything lands on one server.

``jain-greedy`` runs this batch routine inside A-Online's Alg. 1/2 framework (calendar mode) in
place of A_maxweight, so it can be evaluated online beside A-Online.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ddl_gym.baselines.a_online.policy import AOnlinePolicy
from ddl_gym.baselines.a_online.mincost import Schedule
from ddl_gym.baselines.a_online.common import alloc_use, place_on
from ddl_gym.sim.model import ARCH_PS
from ddl_gym.sim.perf.aonline import ideal_config


def jain_batch(policy: AOnlinePolicy, jobs: list[int], beta: np.ndarray) -> list[tuple[int, Schedule]]:
    """Greedy batch schedule over a window whose reservations are ``beta`` (H, R, τ); updates ``beta``."""
    C = policy.C
    tau = beta.shape[2]
    ranked = sorted(jobs, key=lambda j: (-policy.weight[j] / policy._ideal_resource_time(j), j))
    out = []
    for j in ranked:
        prof, arch = policy.profiles[j], policy.arch[j]
        m, p, n_ideal, _ = ideal_config(prof, policy.cluster, arch)
        rates = policy.rates[j]
        placed = None
        for n in range(n_ideal, 0, -1):
            rho0 = rates.ps_rate[0, m, p] if arch == ARCH_PS else rates.ra_rate[0, m, n]
            L = int(math.ceil(rates.total / (n * rho0)))
            for t0 in range(tau - L, 0, -1):  # latest window first (t^- + L <= τ)
                free = (C[:, :, None] - beta[:, :, t0 - 1 : t0 - 1 + L]).min(axis=2)
                alloc = place_on(policy.cluster, C, free, m, p, n, arch)
                if alloc is None:
                    continue
                one = len(alloc.servers) == 1
                if one:  # co-located: the faster ρ, possibly a shorter window (still ends by τ)
                    rho1 = rates.ps_rate[1, m, p] if arch == ARCH_PS else rates.ra_rate[1, m, n]
                    L1 = int(math.ceil(rates.total / (n * rho1)))
                else:
                    L1 = L
                placed = (t0, L1, alloc)
                break
            if placed:
                break
        if placed is None:
            continue
        t0, L, alloc = placed
        beta[:, :, t0 - 1 : t0 - 1 + L] += alloc_use(policy.cluster, alloc)[:, :, None]
        sched = Schedule(t0, L, m, p if arch == ARCH_PS else -1,
                         tuple((h, c) for h, _, c in alloc.workers), tuple((h, c) for h, _, c in alloc.ps),
                         len(alloc.servers) == 1)
        out.append((j, sched))
    return out


class JainGreedyPolicy(AOnlinePolicy):
    """A-Online's online framework with Jain et al.'s greedy as the batch routine."""

    def _maxweight(self, jobs: list[int], origin: int, tau: int) -> list[tuple[int, Schedule]]:
        H, R = self.C.shape
        beta = np.zeros((H, R, tau))
        known = max(0, min(tau, self.calendar.shape[2] - origin))
        if known:
            beta[:, :, :known] = self.calendar[:, :, origin : origin + known]
        return jain_batch(self, jobs, beta)


def make_jain_greedy(**kwargs: Any) -> JainGreedyPolicy:
    policy = JainGreedyPolicy(**kwargs)
    policy.name = "jain-greedy"
    return policy
