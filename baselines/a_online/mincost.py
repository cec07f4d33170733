"""A-Online's cost-minimisation subroutines, Zhou Algorithms 4-7, literal and fast.

Each routine finds, for one job, the cheapest schedule ``l = (t^-, L, worker type, PS type, worker
split y, PS split s)`` inside a window of ``τ`` slots, given resource prices ``δ_h^r(t)`` and free
capacities ``ω_h^r(t) = C_h^r − β_h^r(t)``:

* Alg. 4 ``A_mincost1`` — PS job, distributed (``q = 0``): workers fill servers in increasing
  per-worker price ``Ω_h`` (l.8), all PSs on one server ``n`` (l.9), which keeps the largest number
  ``g`` of workers whose remote bandwidth its PSs can carry (l.15-21).
* Alg. 5 ``A_mincost2`` — PS job, everything on one server (``q = 1``).
* Alg. 6 ``A_RAmincost1`` — ring-all-reduce job on one server (``q = 1``).
* Alg. 7 ``A_RAmincost2`` — ring-all-reduce job over several servers (``q = 0``), greedy fill.

Prices are per unit of *normalised* resource (spec C5 #2): a job's use ``f_jh^r`` is measured as a
fraction of ``C_h^r``, so ``cost = Σ_t Σ_h Σ_r δ_h^r(t) f_jh^r / C_h^r`` is in weight units. Callers
pass ``unit_price = δ / C``.

Two implementations with the same interface (``cost, Schedule | None``):

* ``literal_*`` follow the listings loop for loop (line numbers in comments); they are the
  reference for tests on tiny instances (they cost ``O(M P L τ H² D)``).
* ``fast_*`` (spec C2.8): prefix sums over ``t`` for window prices, a sparse table for window
  minima of ``ω``, and numpy over all start slots and servers at once; the per-PS-server step of
  Alg. 4 uses the closed form ``cost(n) = G_{−n}(N − g) + g·Ω_n + s·Π_n`` (``G_{−n}``: greedy fill
  cost without ``n``). ``l_values="n-loop"`` (default) visits only the durations
  ``L_N = ceil(EDK/(Nρ))``, N = D..1, instead of every ``L`` of l.5 — exact for the single-server
  routines (a feasible placement of the longer window with more workers restricts to the shorter
  one at no higher cost) and, for the greedy Alg. 4/7, equal to the literal loops on every tested
  instance; ``l_values="all"`` visits every ``L`` (identical to the listing). Both stop as soon as
  a zero-cost schedule is found (prices are ``>= 0`` and only a strictly cheaper one replaces it).

``prune=True`` (default; issue 32) makes the completion tie-break (§7.1(3)) cheap without changing any
result: the listing's winner is the first schedule minimising ``(cost, end)``, i.e. the minimum of
``(cost, end, position in the listing)``, so Alg. 4/5 may visit durations shortest first and break equal
``(cost, end)`` by position; a ``(m, p, L)`` is skipped when a lower bound on its cost (greedy fill of ``N``
workers plus the cheapest PS, with a 1e-9 relative slack) exceeds the best cost, or, at best cost 0, when its
earliest zero-bound start cannot end before the best end; an incumbent ``(cost, end)`` (the q = 1 routine's
schedule, which Alg. 3 l.5 keeps unless the q = 0 one is better) seeds the search. Window tables per
``(worker type, L)`` and price minima are memoised on the :class:`_Windows` of one price state.
``prune=False`` is the exhaustive reference (tests/baselines/a_online/test_aonline_ect.py).

Bug fixes (spec C5 #5), all undone by ``strict_listing=True``:

* (a) Alg. 4 l.19: when all workers sit on the PS server, ``s = ceil(0) = 0`` and l.25 rejects
  a valid placement; fixed ``s = max(1, min(ŝ, ceil(...)))`` when ``ŝ >= 1``. (The placement it
  rescues has every worker on the PS server, which fix (e) then skips: with both fixes on, (a)
  changes nothing, and ``strict_listing`` undoes both.)
* (b) Alg. 7 l.5: ``N̂ = d̂_j`` should be ``N̂ = Φ'``.
* (e) In the ``q = 0`` routines a placement landing entirely on one server would be costed with the
  slow ρ; the ``q = 1`` routine dominates it, so it is skipped.

Readings that are not switchable, because the printed text is not executable otherwise: Alg. 6
l.10's ``e^r`` is ``e_m'^r`` and Alg. 7 l.11's ``ω_k`` is ``ω_h`` (C5 #5c); Alg. 4's loop over ``k``
follows the order of l.8 (C5 #5d); ``N̂`` restarts at ``N_j`` for every PS server ``n`` (l.6 sets it
once per ``L``; without the restart every ``n`` after the first would place no worker and "succeed"
with zero workers, violating 13c); Alg. 5 l.6 places ``N = ceil(EDK/(Lρ))`` workers and one PS
(C5 #5f). Ties keep the first schedule found in the listing's order (m', p', L ascending, t^-
ascending, then n or h ascending), or with ``tie_break="completion"`` the one that ends earliest.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

_EPS = 1e-9  # slack in floor(ω/e): capacities are sums of float demands


@dataclass(frozen=True)
class Schedule:
    """A schedule ``l_j`` in window-local slots (``start`` is the listing's 1-based ``t^-``)."""

    start: int
    length: int
    worker_type: int
    ps_type: int  # -1 for ring-all-reduce
    workers: tuple[tuple[int, int], ...]  # (server, count)
    ps: tuple[tuple[int, int], ...] = ()
    colocated: bool = False

    @property
    def end(self) -> int:
        return self.start + self.length

    @property
    def num_workers(self) -> int:
        return sum(c for _, c in self.workers)


@dataclass(frozen=True)
class JobRates:
    """What the routines need of one job: its work and per-worker speeds.

    Attributes:
        total: ``E_j D_j K_j`` mini-batches.
        chunks: ``D_j``.
        ps_rate: ``ρ_jm^p`` of eq. (1), shape ``(2, M, P)``; index 0: ``q = 0``, 1: ``q = 1``.
        ra_rate: ``ρ_jm`` of eq. (14), shape ``(2, M, D + 1)`` (index ``Φ``; column 0 unused).
    """

    total: float
    chunks: int
    ps_rate: np.ndarray | None = None
    ra_rate: np.ndarray | None = None


@dataclass
class Market:
    """Window state for one job's routines: prices and free capacity per server, resource, slot.

    Attributes:
        unit_price: ``δ_h^r(t) / C_h^r``, shape ``(H, R, τ)`` (slot ``t`` local, 0-based).
        free: ``ω_h^r(t)``, shape ``(H, R, τ)``.
        worker_demand: ``e_m^r``, shape ``(M, R)``; ``ps_demand``: ``z_p^r``, ``(P, R)``.
        bw: column of the bandwidth resource (``b_m = e_m^bw``, ``B_p = z_p^bw``).
    """

    unit_price: np.ndarray
    free: np.ndarray
    worker_demand: np.ndarray
    ps_demand: np.ndarray
    bw: int

    @property
    def tau(self) -> int:
        return self.free.shape[2]


def _ceil_div(total: float, denominator: float) -> int:
    return int(math.ceil(total / denominator))


def _floor_cap(amount: float, demand: float) -> float:
    """``floor(amount / demand)``, +inf for a zero demand that fits, -inf for one that does not."""
    if demand <= 0:
        return math.inf if amount >= -_EPS else -math.inf
    return math.floor(amount / demand + _EPS)


def _ps_count(remote: int, b: float, B: float) -> int:
    """``ceil(remote·b / B)`` of Alg. 4 l.19."""
    return int(math.ceil(remote * b / B - 1e-12)) if remote > 0 else 0


def _better(cost: float, end: int, best_cost: float, best_end: int, tie_break: str) -> bool:
    if cost < best_cost:
        return True
    return tie_break == "completion" and cost == best_cost and end < best_end


# ============================================================================ literal listings
def literal_mincost1(job: JobRates, mk: Market, *, strict_listing: bool = False, tie_break: str = "listing"
                     ) -> tuple[float, Schedule | None]:
    """Alg. 4 ``A_mincost1`` (PS job, ``q_j = 0``), loop for loop."""
    H, R, tau = mk.free.shape
    M, P = mk.worker_demand.shape[0], mk.ps_demand.shape[0]
    best, best_l, best_end = math.inf, None, 1 << 60  # l.1
    EDK = job.total
    EK = job.total / job.chunks
    for m in range(M):  # l.3
        e = mk.worker_demand[m]
        b = e[mk.bw]
        for p in range(P):  # l.4
            z = mk.ps_demand[p]
            B = z[mk.bw]
            rho = job.ps_rate[0, m, p]
            for L in range(_ceil_div(EK, rho), _ceil_div(EDK, rho) + 1):  # l.5
                N = _ceil_div(EDK, L * rho)  # l.6
                for t0 in range(1, tau - L + 1):  # l.7 (t^- is 1-based; slots t0-1 .. t0+L-2)
                    win = slice(t0 - 1, t0 - 1 + L)
                    omega_h = [sum(mk.unit_price[h, r, win].sum() * e[r] for r in range(R)) for h in range(H)]  # l.8
                    order = sorted(range(H), key=lambda h: (omega_h[h], h))
                    for n in range(H):  # l.9
                        y = [0] * H  # l.10
                        s = [0] * H
                        Nhat = N  # restarted per n (see module docstring)
                        for k in order:  # l.11
                            yhat = min(min(_floor_cap(mk.free[k, r, win].min(), e[r]) for r in range(R)), Nhat)  # l.12
                            yhat = max(0, int(yhat))
                            y[k] = yhat  # l.13
                            if k == n:  # l.14
                                for g in range(0, yhat + 1):  # l.15
                                    shat = min(_floor_cap(mk.free[n, r, win].min() - g * e[r], z[r]) for r in range(R))  # l.16
                                    if shat * B >= (N - g) * b:  # l.17
                                        y[n] = g  # l.18
                                        need = _ps_count(N - g, b, B)
                                        s[n] = int(min(shat, need))  # l.19
                                        if not strict_listing and shat >= 1:
                                            s[n] = max(1, s[n])  # fix (a)
                            Nhat -= y[k]  # l.23
                        if Nhat > 0 or s[n] < 1:  # l.25
                            continue  # cost = +inf (l.26)
                        if not strict_listing and y[n] == N:
                            continue  # fix (e): all on one server, q = 1 dominates
                        cost = sum(mk.unit_price[h, r, win].sum() * (e[r] * y[h] + z[r] * s[h])
                                   for h in range(H) for r in range(R))  # l.28
                        if _better(cost, t0 + L, best, best_end, tie_break):  # l.30
                            best, best_end = cost, t0 + L  # l.31
                            best_l = Schedule(t0, L, m, p, _pairs(y), _pairs(s), False)
    return best, best_l  # l.38


def literal_mincost2(job: JobRates, mk: Market, *, strict_listing: bool = False, tie_break: str = "listing"
                     ) -> tuple[float, Schedule | None]:
    """Alg. 5 ``A_mincost2`` (PS job, ``q_j = 1``); l.6 read as N workers and one PS (C5 #5f)."""
    H, R, tau = mk.free.shape
    M, P = mk.worker_demand.shape[0], mk.ps_demand.shape[0]
    best, best_l, best_end = math.inf, None, 1 << 60
    EDK, EK = job.total, job.total / job.chunks
    for m in range(M):  # l.3: m', p', L, t^- in order
        e = mk.worker_demand[m]
        for p in range(P):
            z = mk.ps_demand[p]
            rho = job.ps_rate[1, m, p]
            for L in range(_ceil_div(EK, rho), _ceil_div(EDK, rho) + 1):
                N = _ceil_div(EDK, L * rho)
                for t0 in range(1, tau - L + 1):
                    win = slice(t0 - 1, t0 - 1 + L)
                    for h in range(H):  # l.4
                        fits = N <= job.chunks and all(mk.free[h, r, win].min() >= N * e[r] + z[r] - _EPS for r in range(R))  # l.6
                        if not fits:
                            continue  # l.7: cost = +inf
                        cost = sum(mk.unit_price[h, r, win].sum() * (N * e[r] + z[r]) for r in range(R))
                        if _better(cost, t0 + L, best, best_end, tie_break):  # l.8
                            best, best_end = cost, t0 + L
                            best_l = Schedule(t0, L, m, p, ((h, N),), ((h, 1),), True)  # l.9
    return best, best_l


def literal_ra_mincost1(job: JobRates, mk: Market, *, strict_listing: bool = False, tie_break: str = "listing"
                        ) -> tuple[float, Schedule | None]:
    """Alg. 6 ``A_RAmincost1`` (ring-all-reduce job, ``q_j = 1``)."""
    H, R, tau = mk.free.shape
    M = mk.worker_demand.shape[0]
    best, best_l, best_end = math.inf, None, 1 << 60
    for m in range(M):  # l.3
        e = mk.worker_demand[m]
        for phi in range(1, job.chunks + 1):  # l.4
            d = _ceil_div(job.total, phi * job.ra_rate[1, m, phi])  # l.5
            for t0 in range(1, tau - d + 1):  # l.6
                win = slice(t0 - 1, t0 - 1 + d)  # l.7
                for h in range(H):  # l.8
                    y = min(min(_floor_cap(mk.free[h, r, win].min(), e[r]) for r in range(R)), phi)  # l.10
                    if phi > y:  # l.11
                        continue  # l.12
                    cost = sum(mk.unit_price[h, r, win].sum() * e[r] * y for r in range(R))  # l.14
                    if _better(cost, t0 + d, best, best_end, tie_break):  # l.16
                        best, best_end = cost, t0 + d
                        best_l = Schedule(t0, d, m, -1, ((h, int(y)),), (), True)  # l.17
    return best, best_l


def literal_ra_mincost2(job: JobRates, mk: Market, *, strict_listing: bool = False, tie_break: str = "listing"
                        ) -> tuple[float, Schedule | None]:
    """Alg. 7 ``A_RAmincost2`` (ring-all-reduce job, ``q_j = 0``), greedy fill in price order."""
    H, R, tau = mk.free.shape
    M = mk.worker_demand.shape[0]
    best, best_l, best_end = math.inf, None, 1 << 60
    for m in range(M):  # l.3
        e = mk.worker_demand[m]
        for phi in range(1, job.chunks + 1):  # l.4
            d = _ceil_div(job.total, phi * job.ra_rate[0, m, phi])  # l.5
            for t0 in range(1, tau - d + 1):  # l.6
                win = slice(t0 - 1, t0 - 1 + d)
                Nhat = d if strict_listing else phi  # l.5, bug (b)
                omega_h = [sum(mk.unit_price[h, r, win].sum() * e[r] for r in range(R)) for h in range(H)]  # l.7
                order = sorted(range(H), key=lambda h: (omega_h[h], h))  # l.8
                y = [0] * H
                for h in order:  # l.9
                    y[h] = max(0, int(min(min(_floor_cap(mk.free[h, r, win].min(), e[r]) for r in range(R)), Nhat)))  # l.11
                    Nhat -= y[h]  # l.12
                if Nhat > 0:  # l.14
                    continue
                if not strict_listing and sum(1 for c in y if c) == 1:
                    continue  # fix (e): one server, q = 1 dominates
                cost = sum(mk.unit_price[h, r, win].sum() * e[r] * y[h] for h in range(H) for r in range(R))  # l.17
                if _better(cost, t0 + d, best, best_end, tie_break):  # l.19
                    best, best_end = cost, t0 + d
                    best_l = Schedule(t0, d, m, -1, _pairs(y), (), False)  # l.20
    return best, best_l


def _pairs(counts: list[int]) -> tuple[tuple[int, int], ...]:
    return tuple((h, int(c)) for h, c in enumerate(counts) if c)


# ============================================================================ fast, exact
class _Windows:
    """Window sums of prices (prefix sums) and window minima of free capacity (sparse table)."""

    def __init__(self, mk: Market) -> None:
        self.mk = mk
        H, R, tau = mk.free.shape
        self.prefix = np.concatenate([np.zeros((H, R, 1)), np.cumsum(mk.unit_price, axis=2)], axis=2)
        self.table = [mk.free]
        k = 1
        while 2 * k <= tau:
            prev = self.table[-1]
            self.table.append(np.minimum(prev[:, :, : prev.shape[2] - k], prev[:, :, k:]))
            k *= 2
        self._cache: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self._greedy: dict[tuple[int, int], tuple] = {}
        self._mins: dict[tuple[str, int, int], float] = {}

    def get(self, L: int) -> tuple[np.ndarray, np.ndarray]:
        """``(sums, minima)`` over windows ``[i, i+L)``, ``i = 0 .. τ−L−1`` (the listing's t^- range), ``(H, R, T')``."""
        hit = self._cache.get(L)
        if hit is None:
            tau = self.mk.tau
            count = tau - L
            sums = self.prefix[:, :, L : L + count] - self.prefix[:, :, :count]
            k = L.bit_length() - 1
            level = self.table[k]
            minima = np.minimum(level[:, :, :count], level[:, :, L - (1 << k) : L - (1 << k) + count])
            hit = self._cache[L] = (sums, minima)
        return hit

    def price_min(self, kind: str, k: int, L: int) -> float:
        """``min`` over servers and start slots of the window price of one worker (``kind="w"``, type
        ``k``) or one PS (``"ps"``), windows of ``L`` slots (memoised per price state)."""
        key = (kind, k, L)
        hit = self._mins.get(key)
        if hit is None:
            demand = self.mk.worker_demand[k] if kind == "w" else self.mk.ps_demand[k]
            sums = self.get(L)[0]
            hit = self._mins[key] = float(np.einsum("hrt,r->ht", sums, demand).min()) if sums.size else math.inf
        return hit

    def greedy(self, m: int, L: int) -> tuple:
        """``(a, cap, order, cs, asorted, Pc, Qc)`` of worker type ``m`` over windows of ``L`` slots:
        per-worker prices ``Ω_h``, room ``cap`` and the greedy fill tables (:func:`_greedy_tables`).
        They depend on the market, ``m`` and ``L`` only, so the PS types of Alg. 4 and the jobs that
        see the same market (no admission in between) share them (memoised per price state)."""
        key = (m, L)
        hit = self._greedy.get(key)
        if hit is None:
            e = self.mk.worker_demand[m]
            sums, minima = self.get(L)
            a = np.einsum("hrt,r->ht", sums, e)
            cap = np.maximum(_caps(minima, e), 0.0)
            hit = self._greedy[key] = (a, cap, *_greedy_tables(a, cap))
        return hit


def _caps(minima: np.ndarray, demand: np.ndarray) -> np.ndarray:
    """``min_r floor(ω/e^r)`` per (server, window), same rounding as :func:`_floor_cap`."""
    out = np.full(minima.shape[0:1] + minima.shape[2:], np.inf)
    for r, d in enumerate(demand.tolist()):
        if d > 0:
            np.minimum(out, np.floor(minima[:, r, :] / d + _EPS), out=out)
        else:
            out[np.any(minima[:, r : r + 1, :] < -_EPS, axis=1)] = -np.inf
    return out


def _durations(total: float, chunks: int, rho: float, tau: int, l_values: str) -> list[int]:
    """The ``L`` values visited, ascending, with ``L <= τ − 1`` (l.5 / l.7 leave no start otherwise)."""
    lo, hi = _ceil_div(total / chunks, rho), _ceil_div(total, rho)
    if l_values == "all":
        return list(range(lo, min(hi, tau - 1) + 1))
    return sorted({L for L in (_ceil_div(total, n * rho) for n in range(chunks, 0, -1)) if L <= tau - 1 and L >= lo})


class _Best:
    """Running best under :func:`_better` (the first minimal schedule in the listing's order).

    ``incumbent`` ``(cost, end)``: a schedule found elsewhere (Alg. 3 l.5 keeps the q=1 routine's
    schedule unless the q=0 one is better by :func:`_better`); only strictly better ones are kept,
    which returns the same schedule as an unseeded search whenever that one beats the incumbent."""

    def __init__(self, tie_break: str, incumbent: tuple[float, int] | None = None) -> None:
        self.cost, self.end, self.key, self.tie_break = math.inf, 1 << 60, None, tie_break
        self.pos: tuple = ()
        if incumbent is not None:
            self.cost, self.end = incumbent

    def offer(self, cost: float, end: int, key: tuple, pos: tuple | None = None) -> None:
        """``pos``: the candidate's position in the listing's order, for searches that visit the
        listing out of order: then equal ``(cost, end)`` go to the smaller position, which is what the
        in-order search keeps (the first of them). An incumbent has position ``()``, before every other."""
        if pos is None:
            if _better(cost, end, self.cost, self.end, self.tie_break):
                self.cost, self.end, self.key = cost, end, key
        elif cost < self.cost or (cost == self.cost and (end < self.end or (end == self.end and pos < self.pos))):
            self.cost, self.end, self.key, self.pos = cost, end, key, pos

    @property
    def done(self) -> bool:  # nothing can be strictly cheaper than zero (ties keep the first)
        return self.cost == 0.0 and self.tie_break == "listing"

    def ends_no_earlier(self, length: int) -> bool:
        """Exact pruning of the completion tie-break: at cost 0 (nothing is cheaper, prices are
        ``>= 0``) a schedule of ``length`` slots ends at ``>= 1 + length``, so it can replace the
        best one only if ``1 + length < end``. (The listing tie-break has stopped already.)"""
        return self.cost == 0.0 and 1 + length >= self.end


def _pick(cost: np.ndarray, lengths: np.ndarray | int, tie_break: str) -> int:
    """Flat index of the best entry (row-major = the listing's order), ``-1`` if all are infinite."""
    flat = cost.ravel()
    best = flat.min() if flat.size else math.inf
    if not np.isfinite(best):
        return -1
    return int(np.flatnonzero(flat == best)[0])


def fast_mincost2(job: JobRates, mk: Market, *, strict_listing: bool = False, tie_break: str = "listing",
                  l_values: str = "n-loop", windows: _Windows | None = None, prune: bool = True,
                  incumbent: tuple[float, int] | None = None
                  ) -> tuple[float, Schedule | None]:
    """Alg. 5, vectorised over start slots and servers."""
    win = windows or _Windows(mk)
    M, P = mk.worker_demand.shape[0], mk.ps_demand.shape[0]
    best = _Best(tie_break, incumbent if prune else None)
    combos = [(m, p, L) for m in range(M) for p in range(P)
              for L in _durations(job.total, job.chunks, job.ps_rate[1, m, p], mk.tau, l_values)]
    shortest_first = prune and tie_break == "completion"
    if shortest_first:  # as in fast_mincost1: shortest durations first, equal (cost, end) by listing position
        combos.sort(key=lambda c: c[2])
    for m, p, L in combos:
        if shortest_first and best.cost == 0.0 and 1 + L > best.end:
            break  # every later duration is at least as long: none ends earlier at cost 0
        if prune and best.ends_no_earlier(L) and not shortest_first:
            continue  # durations ascend within (m, p): no later L of it ends earlier either
        e, z = mk.worker_demand[m], mk.ps_demand[p]
        N = _ceil_div(job.total, L * job.ps_rate[1, m, p])
        if prune and math.isfinite(best.cost):  # N workers and one PS cost at least N·min Ω + min Π (with slack)
            if (N * win.price_min("w", m, L) + win.price_min("ps", p, L)) * (1 - 1e-9) > best.cost:
                continue
        sums, minima = win.get(L)
        need = N * e + z
        fits = np.all(minima >= need[None, :, None] - _EPS, axis=1) & (N <= job.chunks)  # (H, T')
        cost = np.einsum("hrt,r->th", sums, need)
        cost[~fits.T] = np.inf
        _offer_window(best, cost, L, (m, p, N), tie_break, (m, p, L) if shortest_first else None)
        if best.done:
            break
    if best.key is None:
        return math.inf, None
    m, p, N, t0, h, L = best.key
    return best.cost, Schedule(t0, L, m, p, ((h, N),), ((h, 1),), True)


def _offer_window(best: _Best, cost: np.ndarray, L: int, head: tuple, tie_break: str,
                  pos: tuple | None = None) -> None:
    """Offer the best (t^-, server) entry of a ``(T', H)`` cost table for duration ``L`` (``pos``: the
    table's position in the listing, for out-of-order searches; the entry's ``(t^-, h)`` is appended)."""
    idx = _pick(cost, L, tie_break)  # row-major: t^- first, so also the earliest end among equal costs
    if idx < 0:
        return
    t_idx, h = divmod(idx, cost.shape[1])
    best.offer(float(cost.ravel()[idx]), t_idx + 1 + L, (*head, t_idx + 1, h, L),
               None if pos is None else (*pos, t_idx + 1, h))


def fast_ra_mincost1(job: JobRates, mk: Market, *, strict_listing: bool = False, tie_break: str = "listing",
                     l_values: str = "n-loop", windows: _Windows | None = None, prune: bool = True,
                  incumbent: tuple[float, int] | None = None
                  ) -> tuple[float, Schedule | None]:
    """Alg. 6, vectorised over start slots and servers (the listing already loops over Φ)."""
    win = windows or _Windows(mk)
    best = _Best(tie_break, incumbent if prune else None)
    for m in range(mk.worker_demand.shape[0]):
        e = mk.worker_demand[m]
        for phi in range(1, job.chunks + 1):
            d = _ceil_div(job.total, phi * job.ra_rate[1, m, phi])
            if d > mk.tau - 1 or (prune and best.ends_no_earlier(d)):
                continue
            sums, minima = win.get(d)
            cap = _caps(minima, e)
            cost = np.einsum("hrt,r->th", sums, e) * phi
            cost[(cap < phi).T] = np.inf
            _offer_window(best, cost, d, (m, phi), tie_break)
            if best.done:
                break
        if best.done:
            break
    if best.key is None:
        return math.inf, None
    m, phi, t0, h, d = best.key
    return best.cost, Schedule(t0, d, m, -1, ((h, phi),), (), True)


def _greedy_tables(a: np.ndarray, cap: np.ndarray):
    """Servers sorted by per-worker price per window (ties: lower index), with prefix sums."""
    order = np.argsort(a, axis=0, kind="stable")  # (H, T')
    cs = np.take_along_axis(cap, order, axis=0)
    asorted = np.take_along_axis(a, order, axis=0)
    T = a.shape[1]
    Pc = np.vstack([np.zeros((1, T)), np.cumsum(cs, axis=0)])  # capacity before position k
    Qc = np.vstack([np.zeros((1, T)), np.cumsum(cs * asorted, axis=0)])  # cost of filling positions < k
    return order, cs, asorted, Pc, Qc


def _fill_cost(Y: np.ndarray, cs: np.ndarray, asorted: np.ndarray, Pc: np.ndarray, Qc: np.ndarray) -> np.ndarray:
    """Cost of filling ``Y`` workers greedily in sorted order, per window (``Y``: ``(T',)`` or ``(K, T')``).

    One ``searchsorted`` over all windows at once: column ``t`` of the capacity prefix is shifted by
    ``t·span`` (all values are whole numbers, so the shifted keys stay exact in float64).
    """
    H, T = cs.shape
    Y2 = np.atleast_2d(Y)
    span = float(Pc[-1].max() + Y2.max() + 1.0)
    offsets = np.arange(T) * span
    keys = (Pc[1:] + offsets[None, :]).T.ravel()  # column-major: window by window, ascending within
    query = (Y2 + offsets[None, :]).ravel()
    col = np.broadcast_to(np.arange(T), Y2.shape).ravel()
    k = np.searchsorted(keys, query, side="right") - col * H  # positions completely filled
    k = np.minimum(k, H - 1)
    out = Qc[k, col] + (Y2.ravel() - Pc[k, col]) * asorted[k, col]
    return out.reshape(Y2.shape) if np.ndim(Y) == 2 else out


def fast_ra_mincost2(job: JobRates, mk: Market, *, strict_listing: bool = False, tie_break: str = "listing",
                     l_values: str = "n-loop", windows: _Windows | None = None, prune: bool = True,
                  incumbent: tuple[float, int] | None = None
                  ) -> tuple[float, Schedule | None]:
    """Alg. 7, vectorised over start slots: the greedy fill is a cumulative sum over sorted capacities."""
    win = windows or _Windows(mk)
    best = _Best(tie_break, incumbent if prune else None)
    for m in range(mk.worker_demand.shape[0]):
        e = mk.worker_demand[m]
        for phi in range(1, job.chunks + 1):
            d = _ceil_div(job.total, phi * job.ra_rate[0, m, phi])
            if d > mk.tau - 1 or (prune and best.ends_no_earlier(d)):
                continue
            want = d if strict_listing else phi
            if prune:
                a, cap, order, cs, asorted, Pc, Qc = win.greedy(m, d)
            else:
                sums, minima = win.get(d)
                a = np.einsum("hrt,r->ht", sums, e)
                cap = np.maximum(_caps(minima, e), 0.0)
                order, cs, asorted, Pc, Qc = _greedy_tables(a, cap)
            Y = np.full(a.shape[1], float(want))
            cost = _fill_cost(Y, cs, asorted, Pc, Qc)
            cost[Pc[-1] < want] = np.inf
            if not strict_listing:
                last = np.sum(Pc[1:] < want, axis=0)  # position where the fill completes
                one = Pc[np.minimum(last, cs.shape[0] - 1), np.arange(cs.shape[1])] == 0
                cost[one] = np.inf  # fix (e): the first server with room takes all
            idx = _pick(cost[:, None], d, tie_break)
            if idx >= 0:
                best.offer(float(cost[idx]), idx + 1 + d, (m, phi, idx + 1, d, want))
            if best.done:
                break
        if best.done:
            break
    if best.key is None:
        return math.inf, None
    m, phi, t0, d, want = best.key
    sums, minima = win.get(d)
    i = t0 - 1
    a = np.einsum("hr,r->h", sums[:, :, i], mk.worker_demand[m])
    cap = np.maximum(_caps(minima[:, :, i : i + 1], mk.worker_demand[m])[:, 0], 0.0)
    y = [0] * a.shape[0]
    left = want
    for h in np.argsort(a, kind="stable").tolist():
        y[h] = int(min(cap[h], left))
        left -= y[h]
    return best.cost, Schedule(t0, d, m, -1, _pairs(y), (), False)


def fast_mincost1(job: JobRates, mk: Market, *, strict_listing: bool = False, tie_break: str = "listing",
                  l_values: str = "n-loop", windows: _Windows | None = None, prune: bool = True,
                  incumbent: tuple[float, int] | None = None
                  ) -> tuple[float, Schedule | None]:
    """Alg. 4, vectorised over start slots and PS servers ``n``.

    For PS server ``n`` at position ``k_n`` of the price order, the listing places
    ``min(P_{k_n}, N)`` workers before ``n`` (``P``: capacity prefix), offers ``ŷ = min(cap_n,
    N − P_{k_n})`` at ``n``, keeps the largest ``g <= ŷ`` whose PSs cover the ``N − g`` remote
    workers (l.15-21), then fills the rest after ``n``. Its cost is ``G_{−n}(N − g) + g Ω_n + s Π_n``.
    """
    win = windows or _Windows(mk)
    M, P = mk.worker_demand.shape[0], mk.ps_demand.shape[0]
    best = _Best(tie_break, incumbent if prune else None)
    combos = [(m, p, L) for m in range(M) for p in range(P)
              for L in _durations(job.total, job.chunks, job.ps_rate[0, m, p], mk.tau, l_values)]
    shortest_first = prune and tie_break == "completion"
    if shortest_first:  # shortest durations first (stable: listing order within a duration); ties by position
        combos.sort(key=lambda c: c[2])
    for m, p, L in combos:
        e = mk.worker_demand[m]
        b = float(e[mk.bw])
        z = mk.ps_demand[p]
        B = float(z[mk.bw])
        rho = job.ps_rate[0, m, p]
        if shortest_first and best.cost == 0.0 and 1 + L > best.end:
            break  # every later duration is at least as long: none ends earlier at cost 0
        if prune and best.ends_no_earlier(L) and not shortest_first:
            continue  # durations ascend within (m, p): no later L of it ends earlier either
        N = _ceil_div(job.total, L * rho)
        sums, minima = win.get(L)
        tables = win.greedy(m, L) if prune else None
        a = tables[0] if prune else np.einsum("hrt,r->ht", sums, e)  # Ω_h: per-worker price
        if N * float(a.min()) > best.cost:  # every worker costs at least min Ω
            continue
        c = np.einsum("hrt,r->ht", sums, z)  # Π_n: per-PS price
        if prune and not strict_listing and math.isfinite(best.cost):
            # Lower bound per start slot: the N workers cost at least the greedy fill of N (the
            # cheapest placement under the servers' room) and the PSs (s >= 1) at least min_n Π_n.
            _, _, _, cs, asorted, Pc, Qc = tables
            if float(Pc[-1].max()) < N:
                continue  # no start slot has room for N workers (the table would be all +inf)
            bound = _fill_cost(np.full(a.shape[1], float(N)), cs, asorted, Pc, Qc) + c.min(axis=0)
            if float(bound[Pc[-1] >= N].min()) * (1 - 1e-9) > best.cost:
                continue
            if best.cost == 0.0 and tie_break == "completion":
                # Only a zero-cost entry can still win, and it needs bound 0 at its start slot: the
                # earliest such slot ends at idx + 1 + L; later than the best end, nothing here wins.
                zero = np.flatnonzero((bound == 0.0) & (Pc[-1] >= N))
                if zero.size == 0 or int(zero[0]) + 1 + L > best.end:
                    continue
        cost = _mincost1_table(a, c, minima, e, z, b, B, N, strict_listing,
                               tables=tables)
        if cost is None:
            continue
        _offer_window(best, cost, L, (m, p, N), tie_break, (m, p, L) if shortest_first else None)
        if best.done:
            break
    if best.key is None:
        return math.inf, None
    m, p, N, t0, n, L = best.key
    return best.cost, _mincost1_placement(mk, win, m, p, N, t0, n, L, strict_listing)


def _mincost1_table(a, c, minima, e, z, b, B, N, strict_listing, tables=None):
    """Cost of every (start slot, PS server) pair for one (m, p, L), shape ``(T', H)``; None if none is feasible.
    ``tables``: :meth:`_Windows.greedy`'s memoised ``(a, cap, order, cs, asorted, Pc, Qc)``."""
    H, T = a.shape
    if tables is not None:
        _, cap, order, cs, asorted, Pc, Qc = tables
    else:
        cap = np.maximum(_caps(minima, e), 0.0)  # (H, T)
        order, cs, asorted, Pc, Qc = _greedy_tables(a, cap)
    total_cap = Pc[-1]
    if not np.any(total_cap >= N):
        return None
    pos = np.empty_like(order)
    np.put_along_axis(pos, order, np.arange(H)[:, None].repeat(T, axis=1), axis=0)
    cols = np.arange(T)[None, :].repeat(H, axis=0)
    before = Pc[pos, cols]  # (H=n, T)
    nhat = np.maximum(0.0, N - before)
    yhat = np.minimum(cap, nhat)  # l.12 at k = n
    # l.15-21: the largest g in [0, ŷ] with ŝ(g)·B >= (N − g)·b (searched downwards, only where still open).
    g_best = np.full((H, T), -1.0)
    shat_best = np.zeros((H, T))
    open_ = total_cap[None, :].repeat(H, axis=0) >= N  # infeasible windows need no search
    g = yhat.copy()
    while True:
        idx = np.nonzero(open_ & (g >= 0))
        if idx[0].size == 0:
            break
        gi = g[idx]
        sh = np.full(gi.shape, np.inf)
        for r, zr in enumerate(z.tolist()):
            rest = minima[idx[0], r, idx[1]] - gi * e[r]
            if zr > 0:
                sh = np.minimum(sh, np.floor(rest / zr + _EPS))
            else:
                sh[rest < -_EPS] = -np.inf
        ok = sh * B >= (N - gi) * b
        hit = (idx[0][ok], idx[1][ok])
        g_best[hit] = gi[ok]
        shat_best[hit] = sh[ok]
        open_[hit] = False
        g[idx] = gi - 1
    found = g_best >= 0
    remote = N - np.where(found, g_best, 0.0)
    need = np.where(remote > 0, np.ceil(remote * b / B - 1e-12), 0.0)
    s = np.minimum(shat_best, need)
    if not strict_listing:
        s = np.where(shat_best >= 1, np.maximum(1.0, s), s)
    capn = cap
    rest_after = total_cap[None, :] - before - capn  # capacity of the servers after n
    feasible = found & (s >= 1) & (nhat - g_best <= rest_after + 1e-9)
    if not strict_listing:
        feasible &= g_best < N
    X = remote  # workers on servers other than n
    full_cost = _fill_cost(X + capn, cs, asorted, Pc, Qc) - capn * a
    cost_other = np.where(X <= before, _fill_cost(X, cs, asorted, Pc, Qc), full_cost)
    cost = cost_other + g_best * a + s * c
    cost[~feasible] = np.inf
    return cost.T


def _mincost1_placement(mk, win, m, p, N, t0, n, L, strict_listing) -> Schedule:
    """Re-run the listing's l.10-24 for the chosen (m, p, L, t^-, n) to get y and s."""
    sums, minima = win.get(L)
    i = t0 - 1
    e, z = mk.worker_demand[m], mk.ps_demand[p]
    b, B = float(e[mk.bw]), float(z[mk.bw])
    a = np.einsum("hr,r->h", sums[:, :, i], e)
    H = a.shape[0]
    y, s = [0] * H, [0] * H
    Nhat = N
    for k in np.argsort(a, kind="stable").tolist():
        yhat = max(0, int(min(min(_floor_cap(minima[k, r, i], e[r]) for r in range(e.size)), Nhat)))
        y[k] = yhat
        if k == n:
            for g in range(yhat + 1):
                shat = min(_floor_cap(minima[n, r, i] - g * e[r], z[r]) for r in range(e.size))
                if shat * B >= (N - g) * b:
                    y[n] = g
                    s[n] = int(min(shat, _ps_count(N - g, b, B)))
                    if not strict_listing and shat >= 1:
                        s[n] = max(1, s[n])
        Nhat -= y[k]
    return Schedule(t0, L, m, p, _pairs(y), _pairs(s), False)


LITERAL = {"mincost1": literal_mincost1, "mincost2": literal_mincost2,
           "ra_mincost1": literal_ra_mincost1, "ra_mincost2": literal_ra_mincost2}
FAST = {"mincost1": fast_mincost1, "mincost2": fast_mincost2,
        "ra_mincost1": fast_ra_mincost1, "ra_mincost2": fast_ra_mincost2}


def schedule_cost(mk: Market, sched: Schedule) -> float:
    """Σ over the schedule's window, servers and resources of ``unit_price × use`` (for checks)."""
    win = slice(sched.start - 1, sched.start - 1 + sched.length)
    e = mk.worker_demand[sched.worker_type]
    total = 0.0
    for h, c in sched.workers:
        total += float((mk.unit_price[h, :, win].sum(axis=1) * e).sum()) * c
    for h, c in sched.ps:
        total += float((mk.unit_price[h, :, win].sum(axis=1) * mk.ps_demand[sched.ps_type]).sum()) * c
    return total
