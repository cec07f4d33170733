"""SMD's parameter-server speed model (Yu, Wu, Ji, Liu, INFOCOM'21, §III-B/C) and PS job helpers.

A parameter-server job (architecture ``"ps"``) with ``w`` workers and ``p`` PSs trains at
``f(p, w)`` iterations per second:

* synchronous SGD, eq. (4): ``1/f = η1·(K/w)·t_f + η2·t_b + 2·η3·(g/p)/(B/w) + β1·w + β2·p``;
* asynchronous SGD, eq. (5): ``f = w / (η1·m·t_f + η2·t_b + 2·η3·α·(g/p)/(B/w) + β1·w + β2·p)``
  (``E`` counts worker steps summed over all workers, spec B5 #12).

``E = Workload.iterations`` and the completion time of a job started at the interval start is
``E/f``. :class:`SMDSpeedModel` is the engine's contention-free rate model for these jobs
(``allocation_time = 1/f``); the static evaluator and every planner use the same
:meth:`SMDProfile.per_iteration_time`, so engine runs and static evaluations agree bit for bit.

The overlap coefficients ``η = (η1, η2, η3)`` (§III-C-3) come from the per-layer FP / BP / push-pull
times of the job's DNN under one of three communication patterns (:func:`overlap_coefficients`):

* ``"sequential"`` (Poseidon [22], Fig. 3): ``η = (1, 1, 1)``, ``t = Σb + 2Σr + Σf``;
* ``"wait-free"`` (Lemma 1, Fig. 4; the default, spec B5 #3): the recurrences of Lemma 1, with η
  from critical-path attribution (:func:`wait_free_times`);
* ``"priority"`` (Lemma 2, Figs. 5–6, P3 [9]): the recurrences of Lemma 2 *as printed*
  (:func:`priority_times`); :func:`priority_link_simulation` is a direct event simulation of a
  preemptive-priority link with slices used to cross-check it (the lemma double-counts the
  backlog once two or more layers wait, see its docstring), offered as ``"priority-sim"``.

Utilities: the sigmoid of Yu §V, ``μ(π) = γ1 / (1 + exp(γ2·(π − γ3)))``, of the completion time
in units of an explicit ``time_scale`` (``π = completion_s / time_scale``, spec B5 #1: the paper
never states the unit of ``π``).

Resources: each job has its own worker and PS demand vectors ``O^r``, ``G^r`` and limit ``v^r``
(Yu Table I), so they live in the profile rather than in the cluster's type catalogue. A job's
:class:`~ddl_gym.sim.alloc.Allocation` is built by :func:`ps_allocation` (a generic helper any PS
rate model can use): ``workers``/``ps`` triples carry :data:`PER_JOB_TYPE` as the type index (the
job's own type, described by its profile) and ``use`` is ``O·w + G·p`` computed here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from collections import OrderedDict
from typing import Any, Sequence

import numpy as np

from ddl_gym.sim.alloc import Allocation
from ddl_gym.sim.model import ClusterSpec, ConfigError, Workload
from ddl_gym.sim.perf import require_architectures

#: Type index used in ``Allocation.workers`` / ``Allocation.ps`` for a per-job type (the job's profile
#: describes the demand; the cluster's catalogue is not consulted).
PER_JOB_TYPE = -1
#: Communication patterns (§III-B, §III-C) accepted by :func:`overlap_coefficients`.
OVERLAP_MODELS: tuple[str, ...] = ("sequential", "wait-free", "priority", "priority-sim")
MODES: tuple[str, ...] = ("sync", "async")
_LIMIT_RTOL = 1e-12  # slack on O·w + G·p <= v (float demands such as GB)


# ============================================================================ utility
def sigmoid_utility(pi: float, gamma1: float, gamma2: float, gamma3: float) -> float:
    """Yu §V: ``γ1 / (1 + exp(γ2·(π − γ3)))``, evaluated without overflow."""
    z = gamma2 * (pi - gamma3)
    if z >= 0.0:
        e = math.exp(-z)
        return gamma1 * e / (1.0 + e)
    return gamma1 / (1.0 + math.exp(z))


# ============================================================================ overlap models
def _layers(f: Sequence[float], b: Sequence[float], r: Sequence[float]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    arrays = tuple(np.asarray(x, dtype=np.float64).ravel() for x in (f, b, r))
    n = arrays[0].size
    if n < 1 or any(a.size != n for a in arrays):
        raise ConfigError(f"layer times: f, b and r need the same number (>= 1) of layers, got "
                          f"{[a.size for a in arrays]}")
    if any(not np.all(np.isfinite(a)) or np.any(a < 0) for a in arrays):
        raise ConfigError("layer times: every f_j, b_j, r_j must be a finite number >= 0")
    return arrays  # type: ignore[return-value]


@dataclass(frozen=True)
class OverlapTimes:
    """Per-sample time ``t`` of one overlap model and its attribution ``t = H_f + H_b + H_r``."""

    t: float
    h_f: float
    h_b: float
    h_r: float


def sequential_times(f: Sequence[float], b: Sequence[float], r: Sequence[float]) -> OverlapTimes:
    """Fig. 3: BP of all layers, then push/pull of every layer, then FP: ``t = Σb + 2Σr + Σf``."""
    f_, b_, r_ = _layers(f, b, r)
    hf, hb, hr = float(f_.sum()), float(b_.sum()), 2.0 * float(r_.sum())
    return OverlapTimes(hb + hr + hf, hf, hb, hr)


def wait_free_times(f: Sequence[float], b: Sequence[float], r: Sequence[float]) -> OverlapTimes:
    """Lemma 1 (wait-free, Fig. 4) with critical-path attribution of ``t`` to FP, BP and communication.

    Layers are 1..N (input to output) in the paper, 0..N−1 here; BP runs N→1::

        κ_N = b_N;       κ_j = max{ Σ_{k=j}^N b_k , κ_{j+1} + r_{j+1} }      (gradient push starts)
        s_N = b_N + r_N; s_j = max{ κ_j + r_j , s_{j+1} + r_{j+1} }          (parameter pull starts)
        τ_1 = s_1 + r_1; τ_j = τ_{j−1} + f_{j−1};  t = τ_N + f_N

    Attribution (spec B5 #3): backtrack from ``t`` through the argument of each ``max`` that binds,
    adding every segment to ``H_f``, ``H_b`` or ``H_r``; ties go to the first argument as printed.
    On the paper's communication-bound Fig. 4 example this gives ``η2 = b_4/Σb`` and
    ``η3 = (2r_4 + r_3 + r_2 + r_1)/(2Σr)``.
    """
    f_, b_, r_ = _layers(f, b, r)
    fl, bl, rl = f_.tolist(), b_.tolist(), r_.tolist()
    n = len(fl)
    suffix_b = [0.0] * (n + 1)
    for j in range(n - 1, -1, -1):
        suffix_b[j] = suffix_b[j + 1] + bl[j]
    kappa = [0.0] * n
    s = [0.0] * n
    kappa[n - 1] = bl[n - 1]
    s[n - 1] = bl[n - 1] + rl[n - 1]
    for j in range(n - 2, -1, -1):
        kappa[j] = max(suffix_b[j], kappa[j + 1] + rl[j + 1])
        s[j] = max(kappa[j] + rl[j], s[j + 1] + rl[j + 1])
    tau = s[0] + rl[0]
    for j in range(1, n):
        tau = tau + fl[j - 1]
    t = tau + fl[n - 1]
    # Backtrack: FP chain (all of Σf), then the pull that lets FP of layer 1 start.
    h_f = float(sum(fl))
    h_b = 0.0
    h_r = rl[0]
    node, j = "s", 0
    while True:
        if node == "s":
            if j == n - 1:  # s_N = b_N + r_N
                h_r += rl[j]
                h_b += bl[j]
                break
            if kappa[j] + rl[j] >= s[j + 1] + rl[j + 1]:
                h_r += rl[j]
                node = "kappa"
            else:
                h_r += rl[j + 1]
                j += 1
        else:  # kappa
            if j == n - 1:  # κ_N = b_N
                h_b += bl[j]
                break
            if suffix_b[j] >= kappa[j + 1] + rl[j + 1]:
                h_b += suffix_b[j]
                break
            h_r += rl[j + 1]
            j += 1
    return OverlapTimes(t, h_f, h_b, h_r)


def priority_times(f: Sequence[float], b: Sequence[float], r: Sequence[float], slice_s: float = 0.0) -> OverlapTimes:
    """Lemma 2 (priority-based, P3 [9]) exactly as printed, with ``φ`` read as a slice's transmission time.

    ::

        e_1 = Σ_{k=1}^N b_k + r_1 + φ
        e_j = Σ_{k=2}^j r_k − Σ_{k=1}^{j−1} b_k + max_{1≤k≤j−1} e_k   if Σ_{k=2}^j r_k > Σ_{k=1}^{j−1} b_k, else 0
        τ_1 = e_1;  τ_j = max{ τ_{j−1} + f_{j−1}, e_j };  t = τ_N + f_N

    (``φ`` is a size in the paper; spec B5 #6 reads it as ``slice_bytes / B``, seconds, default 0.)
    Each layer communicates ``r_j`` once here (Lemma 1 pushes and pulls, ``2 r_j``): literal.

    Attribution: ``H_f`` is the FP chain back to the last layer whose ``e_j`` binds (ties: the FP
    argument); that ``e_j`` splits into ``H_b = Σ_{k≥j} b_k`` (BP until layer j's gradient exists)
    and ``H_r = e_j − H_b`` (communication wait, ``φ`` included).

    Known disagreement (reported, not corrected): when two or more layers still have backlog at
    ``e_1``, ``max_k e_k`` already contains the earlier backlog and the cumulative sum adds it again,
    so ``t`` exceeds the direct simulation (:func:`priority_link_simulation`); with at most one such
    layer (e.g. ``N = 2``) the two agree exactly for ``φ = 0``.
    """
    f_, b_, r_ = _layers(f, b, r)
    fl, bl, rl = f_.tolist(), b_.tolist(), r_.tolist()
    n = len(fl)
    total_b = float(sum(bl))
    e = [0.0] * n
    e[0] = total_b + rl[0] + slice_s
    running_max = e[0]
    sum_r = 0.0
    sum_b = 0.0
    for j in range(1, n):
        sum_r += rl[j]
        sum_b += bl[j - 1]
        e[j] = sum_r - sum_b + running_max if sum_r > sum_b else 0.0
        running_max = max(running_max, e[j])
    return _fp_chain(fl, bl, e)


def priority_link_simulation(f: Sequence[float], b: Sequence[float], r: Sequence[float],
                             slice_s: float = 0.0) -> OverlapTimes:
    """Direct event simulation of the priority-based model (Figs. 5–6), to cross-check Lemma 2.

    BP runs N→1, so layer j's gradient is ready at ``Σ_{k≥j} b_k``. One link serves ready layers,
    lowest index first; each layer needs ``r_j`` of link time (as in Lemma 2). With ``slice_s = 0``
    preemption is immediate (fluid); with ``slice_s > 0`` the link sends slices of that duration and
    a slice in flight is never interrupted (Fig. 6). ``e_j`` is when layer j's communication ends;
    FP then follows Lemma 2's ``τ`` recurrence.
    """
    f_, b_, r_ = _layers(f, b, r)
    fl, bl, rl = f_.tolist(), b_.tolist(), r_.tolist()
    n = len(fl)
    ready = [0.0] * n
    acc = 0.0
    for j in range(n - 1, -1, -1):
        acc += bl[j]
        ready[j] = acc
    rem = list(rl)
    e = [0.0] * n
    for j in range(n):
        if rem[j] <= 0.0:
            e[j] = ready[j]
    left = sum(1 for x in rem if x > 0.0)
    t = 0.0
    while left:
        active = [j for j in range(n) if rem[j] > 0.0 and ready[j] <= t]
        if not active:
            t = min(ready[j] for j in range(n) if rem[j] > 0.0)
            continue
        j = active[0]
        if slice_s > 0.0:
            dt = min(slice_s, rem[j])
        else:  # until done or until a higher-priority (lower-index) layer becomes ready
            later = [ready[k] for k in range(j) if ready[k] > t]
            dt = min(rem[j], min(later) - t) if later else rem[j]
        if dt >= rem[j]:
            t += rem[j]
            rem[j] = 0.0
            e[j] = t
            left -= 1
        else:
            rem[j] -= dt
            t += dt
    return _fp_chain(fl, bl, e)


def _fp_chain(fl: list[float], bl: list[float], e: list[float]) -> OverlapTimes:
    """``τ_1 = e_1; τ_j = max(τ_{j−1} + f_{j−1}, e_j); t = τ_N + f_N`` with the attribution of :func:`priority_times`."""
    n = len(fl)
    tau = [0.0] * n
    tau[0] = e[0]
    bound_by_comm = [True] + [False] * (n - 1)
    for j in range(1, n):
        chain = tau[j - 1] + fl[j - 1]
        if e[j] > chain:
            tau[j] = e[j]
            bound_by_comm[j] = True
        else:
            tau[j] = chain
    t = tau[n - 1] + fl[n - 1]
    last = max(j for j in range(n) if bound_by_comm[j])
    h_f = float(sum(fl[last:]))
    h_b = float(sum(bl[last:]))
    h_r = e[last] - h_b
    return OverlapTimes(t, h_f, h_b, h_r)


def overlap_times(f: Sequence[float], b: Sequence[float], r: Sequence[float], overlap: str = "wait-free",
                  slice_s: float = 0.0) -> OverlapTimes:
    """Per-sample time and its attribution under ``overlap`` (one of :data:`OVERLAP_MODELS`)."""
    if overlap == "sequential":
        return sequential_times(f, b, r)
    if overlap == "wait-free":
        return wait_free_times(f, b, r)
    if overlap == "priority":
        return priority_times(f, b, r, slice_s)
    if overlap == "priority-sim":
        return priority_link_simulation(f, b, r, slice_s)
    raise ConfigError(f"unknown overlap model {overlap!r}; choose one of {OVERLAP_MODELS}")


def overlap_coefficients(f: Sequence[float], b: Sequence[float], r: Sequence[float], overlap: str = "wait-free",
                         slice_s: float = 0.0) -> tuple[float, float, float]:
    """``(η1, η2, η3) = (H_f/Σf, H_b/Σb, H_r/(2Σr))`` (§III-C-3); a zero denominator gives η = 1."""
    times = overlap_times(f, b, r, overlap, slice_s)
    f_, b_, r_ = _layers(f, b, r)
    sums = (float(f_.sum()), float(b_.sum()), 2.0 * float(r_.sum()))
    return tuple(h / s if s > 0 else 1.0 for h, s in zip((times.h_f, times.h_b, times.h_r), sums))  # type: ignore[return-value]


# ============================================================================ the job profile
@dataclass(frozen=True)
class SMDProfile:
    """One parameter-server job of SMD (Yu Table I, §III, §V); frozen and hashable.

    Attributes:
        mode: ``"sync"`` (eq. 4) or ``"async"`` (eq. 5).
        gradient_bytes: model size ``g`` in bytes (spec B5 #13: the experiments give MB = 1e6 B).
        bandwidth: ``B``, bytes/s between each PS and worker.
        global_batch: ``K`` (sync; local batch ``K/w``).
        mini_batch: ``m`` (async).
        t_f, t_b: per-sample FP and BP time, seconds (``Σ f_j``, ``Σ b_j``).
        alpha: ``α``, async concurrency fraction (``w'_ρ = α·w``).
        beta1, beta2: ``β1``, ``β2``, seconds of overhead per worker / per PS.
        eta: ``(η1, η2, η3)`` from the overlap model (:func:`overlap_coefficients`).
        resources: resource names the demand vectors refer to (a cluster's resource order).
        worker_demand, ps_demand: ``O^r``, ``G^r`` per resource.
        limit: ``v^r``, the user's limit per resource (reserved at admission, eq. 2).
        gamma: sigmoid ``(γ1, γ2, γ3)``.
        time_scale: seconds per unit of ``π`` in the utility (spec B5 #1).
        overlap: name of the overlap model that produced ``eta`` (informational).
    """

    mode: str
    gradient_bytes: float
    bandwidth: float
    global_batch: float
    mini_batch: float
    t_f: float
    t_b: float
    alpha: float
    beta1: float
    beta2: float
    eta: tuple[float, float, float]
    resources: tuple[str, ...]
    worker_demand: tuple[float, ...]
    ps_demand: tuple[float, ...]
    limit: tuple[float, ...]
    gamma: tuple[float, float, float]
    time_scale: float = 1.0
    overlap: str = "wait-free"

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ConfigError(f"SMD profile: mode must be one of {MODES}, got {self.mode!r}")
        for name in ("resources", "worker_demand", "ps_demand", "limit", "eta", "gamma"):
            value = tuple(getattr(self, name))
            object.__setattr__(self, name, tuple(str(v) for v in value) if name == "resources"
                               else tuple(float(v) for v in value))
        n = len(self.resources)
        if len(self.worker_demand) != n or len(self.ps_demand) != n or len(self.limit) != n:
            raise ConfigError(f"SMD profile: worker_demand, ps_demand and limit need one value per resource {self.resources}")
        if len(self.eta) != 3 or len(self.gamma) != 3:
            raise ConfigError("SMD profile: eta and gamma need three values each")
        for name in ("gradient_bytes", "bandwidth", "global_batch", "mini_batch", "t_f", "t_b", "alpha", "beta1",
                     "beta2", "time_scale"):
            value = float(getattr(self, name))
            object.__setattr__(self, name, value)
            if not math.isfinite(value) or value < 0:
                raise ConfigError(f"SMD profile: {name} must be a finite number >= 0, got {value!r}")
        if self.bandwidth <= 0 or self.time_scale <= 0:
            raise ConfigError("SMD profile: bandwidth and time_scale must be > 0")
        if self.mode == "sync" and self.global_batch <= 0 or self.mode == "async" and self.mini_batch <= 0:
            raise ConfigError(f"SMD profile: a {self.mode} job needs a positive "
                              f"{'global_batch K' if self.mode == 'sync' else 'mini_batch m'}")
        for name in ("worker_demand", "ps_demand", "limit", "eta"):
            if any(not math.isfinite(v) or v < 0 for v in getattr(self, name)):
                raise ConfigError(f"SMD profile: every {name} entry must be a finite number >= 0")
        if "gpu" in self.resources:
            k = self.resources.index("gpu")
            if self.worker_demand[k] != int(self.worker_demand[k]) or self.ps_demand[k] != int(self.ps_demand[k]):
                raise ConfigError("SMD profile: GPU demands of a worker / PS must be whole numbers")
        if not any(v > 0 for v in self.worker_demand) or not any(v > 0 for v in self.ps_demand):
            raise ConfigError("SMD profile: a worker and a PS must each demand some resource (else counts are unbounded)")

    # ------------------------------------------------------------------ speed (eqs. 4/5)
    def per_iteration_time(self, w: Any, p: Any) -> Any:
        """``1/f(p, w)``: seconds per unit of ``E`` (scalars or numpy arrays; the same operations either way)."""
        e1, e2, e3 = self.eta
        comm = 2.0 * e3 * (self.gradient_bytes / p) / (self.bandwidth / w)
        overhead = self.beta1 * w + self.beta2 * p
        if self.mode == "sync":
            return e1 * (self.global_batch / w) * self.t_f + e2 * self.t_b + comm + overhead
        return (e1 * self.mini_batch * self.t_f + e2 * self.t_b + self.alpha * comm + overhead) / w

    def completion_time(self, iterations: float, w: Any, p: Any) -> Any:
        """``E / f(p, w)``: seconds from the interval start (what the engine computes, bit for bit)."""
        return float(iterations) * self.per_iteration_time(w, p)

    def thetas(self, iterations: float) -> tuple[float, ...]:
        """θ of (9) (sync, five values) or (10) (async, four values)."""
        e = float(iterations)
        e1, e2, e3 = self.eta
        if self.mode == "sync":
            return (e * self.beta1, e * self.beta2, e * e2 * self.t_b, 2.0 * e * e3 * self.gradient_bytes / self.bandwidth,
                    e1 * e * self.global_batch * self.t_f)
        return (e * self.beta1, e * self.beta2, e * (e1 * self.mini_batch * self.t_f + e2 * self.t_b),
                2.0 * e * self.alpha * e3 * self.gradient_bytes / self.bandwidth)

    # ------------------------------------------------------------------ utility
    def utility(self, completion_s: float) -> float:
        """Sigmoid utility of a completion time in seconds (``π = completion_s / time_scale``)."""
        g1, g2, g3 = self.gamma
        return sigmoid_utility(completion_s / self.time_scale, g1, g2, g3)

    # ------------------------------------------------------------------ resources
    @property
    def resource_limits(self) -> tuple[tuple[str, float], ...]:
        """``((resource, v^r), ...)``: what :mod:`ddl_gym.sim.metrics` divides used amounts by."""
        return tuple(zip(self.resources, self.limit))

    def usage(self, w: Any, p: Any) -> np.ndarray:
        """``O·w + G·p`` per resource (``(R,)``, or ``(..., R)`` for array counts)."""
        o = np.asarray(self.worker_demand)
        g = np.asarray(self.ps_demand)
        return np.multiply.outer(np.asarray(w, dtype=np.float64), o) + np.multiply.outer(np.asarray(p, dtype=np.float64), g)

    def fits_limit(self, w: Any, p: Any) -> Any:
        """Constraint (7): ``O^r·w + G^r·p <= v^r`` for every r (and ``w, p >= 1``); arrays give arrays."""
        if isinstance(w, (int, np.integer)) and isinstance(p, (int, np.integer)):  # the planners' hot path
            if w < 1 or p < 1:
                return False
            return all(o * w + g * p <= v * (1.0 + _LIMIT_RTOL) + _LIMIT_RTOL
                       for o, g, v in zip(self.worker_demand, self.ps_demand, self.limit))
        v = np.asarray(self.limit)
        ok = np.all(self.usage(w, p) <= v * (1.0 + _LIMIT_RTOL) + _LIMIT_RTOL, axis=-1)
        return ok & (np.asarray(w) >= 1) & (np.asarray(p) >= 1)

    def max_workers(self, p: int = 1) -> int:
        """Largest ``w`` with ``(w, p)`` inside the limit (0 if none)."""
        k = _max_count(self.worker_demand, self.ps_demand, self.limit, p)
        while k > 0 and not self.fits_limit(k, max(p, 1)):  # float rounding of the floor
            k -= 1
        return k

    def max_ps(self, w: int = 1) -> int:
        """Largest ``p`` with ``(w, p)`` inside the limit (0 if none)."""
        k = _max_count(self.ps_demand, self.worker_demand, self.limit, w)
        while k > 0 and not self.fits_limit(max(w, 1), k):
            k -= 1
        return k

    def max_equal_count(self) -> int:
        """Largest ``k`` with ``(w, p) = (k, k)`` inside the limit (ESW's 1:1 allocation; 0 if none)."""
        per_pair = [o + g for o, g in zip(self.worker_demand, self.ps_demand)]
        k = _max_count(per_pair, [0.0] * len(per_pair), self.limit, 0)
        while k > 0 and not self.fits_limit(k, k):
            k -= 1
        return k

    def with_time_scale(self, time_scale: float) -> SMDProfile:
        return replace(self, time_scale=float(time_scale))

    def speed_key(self) -> tuple:
        """The fields that determine completion times and the feasible (w, p) set (not the utility)."""
        return (self.mode, self.gradient_bytes, self.bandwidth, self.global_batch, self.mini_batch, self.t_f, self.t_b,
                self.alpha, self.beta1, self.beta2, self.eta, self.worker_demand, self.ps_demand, self.limit)


def _max_count(own: Sequence[float], other: Sequence[float], limit: Sequence[float], other_count: int) -> int:
    best = None
    for o, g, v in zip(own, other, limit):
        if o > 0:
            k = math.floor((v * (1.0 + _LIMIT_RTOL) + _LIMIT_RTOL - g * other_count) / o)
            best = k if best is None else min(best, k)
        elif g * other_count > v * (1.0 + _LIMIT_RTOL) + _LIMIT_RTOL:
            return 0
    return max(0, best if best is not None else 0)


# ============================================================================ exact inner optimum
@dataclass(frozen=True)
class InnerOptimum:
    """The integer ``(w, p)`` minimising the completion time within the limit (spec B7 #1)."""

    workers: int
    ps: int
    completion_s: float


class SpeedKeyCache:
    """A bounded LRU cache keyed by ``(profile.speed_key(), extra...)``: profiles that differ only in their
    utility (γ, time scale) share entries, so a planner re-run at another time scale reuses the inner solutions."""

    def __init__(self, maxsize: int = 65536) -> None:
        self._data: OrderedDict[tuple, Any] = OrderedDict()
        self.maxsize = maxsize

    def get(self, key: tuple, compute: Any) -> Any:
        if key in self._data:
            self._data.move_to_end(key)
            return self._data[key]
        value = compute()
        self._data[key] = value
        if len(self._data) > self.maxsize:
            self._data.popitem(last=False)
        return value

    def clear(self) -> None:
        self._data.clear()


_EXACT_CACHE = SpeedKeyCache()


def exact_inner_optimum(profile: SMDProfile, iterations: int) -> InnerOptimum | None:
    """Exact ``argmin_{(w,p) ∈ Z²_{++}, (7)} E/f(p, w)`` (``None`` if even ``(1, 1)`` breaks the limit).

    For a fixed ``w`` the completion time is ``c(w) + a·w/p + β2·p`` (times ``E``, over ``w`` in
    async), convex in ``p > 0`` with its continuous minimum at ``p* = sqrt(a·w/β2)`` (``a`` = the
    communication coefficient), so the integer minimum over ``p`` is among ``floor``/``ceil`` of
    ``p*`` clipped to ``[1, p_max(w)]``; every ``w`` from 1 to ``w_max`` is enumerated. Ties go to the
    smallest ``w``, then the smallest ``p``. Cross-checked against full 2-D enumeration in the tests.
    Cached by speed key (the utility does not change the answer).
    """
    return _EXACT_CACHE.get((profile.speed_key(), int(iterations)), lambda: _exact_inner(profile, int(iterations)))


def _exact_inner(profile: SMDProfile, iterations: int) -> InnerOptimum | None:
    if not profile.fits_limit(1, 1):
        return None
    w_max = profile.max_workers(1)
    w = np.arange(1, w_max + 1, dtype=np.int64)
    p_max = np.array([profile.max_ps(int(k)) for k in w], dtype=np.int64)
    keep = p_max >= 1
    w, p_max = w[keep], p_max[keep]
    e3 = profile.eta[2]
    a = 2.0 * e3 * profile.gradient_bytes / profile.bandwidth * (profile.alpha if profile.mode == "async" else 1.0)
    if profile.beta2 > 0:
        p_star = np.sqrt(a * w / profile.beta2)
    else:
        p_star = p_max.astype(np.float64)
    base = np.floor(p_star).astype(np.int64)
    candidates = np.stack([base - 1, base, base + 1, base + 2], axis=1)
    candidates = np.clip(candidates, 1, p_max[:, None])
    ww = np.broadcast_to(w[:, None], candidates.shape)
    times = profile.completion_time(iterations, ww, candidates)
    flat = int(np.lexsort((candidates.ravel(), ww.ravel(), times.ravel()))[0])
    return InnerOptimum(int(ww.ravel()[flat]), int(candidates.ravel()[flat]), float(times.ravel()[flat]))




def brute_force_inner_optimum(profile: SMDProfile, iterations: int) -> InnerOptimum | None:
    """Every integer pair inside the limit (tests; the paper's "enumerating all the possible combinations")."""
    if not profile.fits_limit(1, 1):
        return None
    w_max, p_max = profile.max_workers(1), profile.max_ps(1)
    ww, pp = np.meshgrid(np.arange(1, w_max + 1), np.arange(1, p_max + 1), indexing="ij")
    ok = profile.fits_limit(ww, pp)
    times = np.where(ok, profile.completion_time(iterations, ww, pp), np.inf)
    flat = int(np.argmin(times.ravel()))  # C order: smallest w, then smallest p, among equal times
    return InnerOptimum(int(ww.ravel()[flat]), int(pp.ravel()[flat]), float(times.ravel()[flat]))


# ============================================================================ allocations
def ps_allocation(cluster: ClusterSpec, workers: int, ps: int, worker_demand: Sequence[float],
                  ps_demand: Sequence[float], resources: Sequence[str] | None = None, server: int = 0,
                  duration_hint: float | None = None) -> Allocation:
    """An :class:`Allocation` of ``workers`` + ``ps`` per-job-typed instances on one server.

    Generic for parameter-server jobs whose worker / PS demand vectors are per job (SMD's ``O^r[i]``,
    ``G^r[i]``) rather than entries of the cluster's type catalogue: the ``workers``/``ps`` triples
    carry :data:`PER_JOB_TYPE` and ``use`` (``O·w + G·p``, mapped onto the cluster's resources by
    name) is computed here; the engine picks the GPUs at start.

    Args:
        cluster: target cluster (resource order).
        workers, ps: counts ``w``, ``p`` (>= 0).
        worker_demand, ps_demand: demand of one instance per resource of ``resources``.
        resources: names for the demand vectors (default: the cluster's resources, in order).
        server: the server holding them (0 for a pooled cluster).
        duration_hint: a planner's run-time estimate (informational).

    Raises:
        ConfigError: a demanded resource the cluster does not have, a fractional GPU total,
            negative counts.
    """
    names = tuple(resources) if resources is not None else cluster.resources
    if len(worker_demand) != len(names) or len(ps_demand) != len(names):
        raise ConfigError(f"PS allocation: demand vectors need one value per resource {names}")
    if workers < 0 or ps < 0:
        raise ConfigError(f"PS allocation: negative counts (workers={workers}, ps={ps})")
    if not 0 <= server < cluster.num_servers:
        raise ConfigError(f"PS allocation: server {server} does not exist ({cluster.num_servers} servers)")
    row = np.zeros(cluster.num_resources)
    for name, o, g in zip(names, worker_demand, ps_demand):
        amount = float(o) * workers + float(g) * ps
        if name not in cluster.resources:
            if amount > 0:
                raise ConfigError(f"PS allocation: the job demands {name!r} but the cluster has only {cluster.resources}")
            continue
        row[cluster.resources.index(name)] = amount
    if row[0] != int(row[0]):
        raise ConfigError(f"PS allocation: {row[0]} GPUs is not a whole number")
    use = row[None, :]
    use.setflags(write=False)
    triples_w = ((server, PER_JOB_TYPE, int(workers)),) if workers else ()
    triples_p = ((server, PER_JOB_TYPE, int(ps)),) if ps else ()
    return Allocation(gpu_ids=None, workers=triples_w, ps=triples_p, servers=(server,), use=use,
                      duration_hint=duration_hint)


def smd_allocation(cluster: ClusterSpec, profile: SMDProfile, workers: int, ps: int, server: int = 0) -> Allocation:
    """:func:`ps_allocation` for an :class:`SMDProfile`."""
    return ps_allocation(cluster, workers, ps, profile.worker_demand, profile.ps_demand, profile.resources, server)


# ============================================================================ the engine's rate model
@dataclass(frozen=True)
class SMDSpeedModel:
    """Contention-free rate model of SMD's PS jobs: ``allocation_time = 1/f(p, w)`` (eqs. 4/5).

    The allocation's worker and PS counts are ``w`` and ``p``; every job needs an
    :class:`SMDProfile`. Registered as ``"smd-ps"`` in :data:`ddl_gym.sim.perf.PERFORMANCE_MODELS`.
    """

    name: str = "smd-ps"

    def bind(self, cluster: ClusterSpec, workload: Workload) -> _BoundSMD:
        require_architectures(self.name, workload, ("ps",))
        for j in range(workload.num_jobs):
            profile = workload.job_profile(j)
            if not isinstance(profile, SMDProfile):
                raise ConfigError(f"performance model {self.name!r}: job {int(workload.job_id[j])} of workload "
                                  f"{workload.name!r} has no SMD profile (got {type(profile).__name__})")
            missing = [r for r, o, g in zip(profile.resources, profile.worker_demand, profile.ps_demand)
                       if (o > 0 or g > 0) and r not in cluster.resources]
            if missing:
                raise ConfigError(f"performance model {self.name!r}: job {int(workload.job_id[j])} demands {missing}, "
                                  f"which the cluster (resources {cluster.resources}) does not have")
        return _BoundSMD(workload)


class _BoundSMD:
    contention_free = True

    def __init__(self, workload: Workload) -> None:
        self._profiles: list[SMDProfile] = [workload.job_profile(j) for j in range(workload.num_jobs)]
        self._iterations: list[int] = workload.iterations.tolist()

    @staticmethod
    def _counts(job: int, alloc: Allocation) -> tuple[int, int]:
        w, p = alloc.num_workers(), alloc.num_ps()
        if w < 1 or p < 1:
            raise ConfigError(f"job {job}: a parameter-server job needs >= 1 worker and >= 1 PS, got w={w}, p={p}")
        return w, p

    def allocation_time(self, job: int, alloc: Allocation) -> float:
        w, p = self._counts(job, alloc)
        return self._profiles[job].per_iteration_time(w, p)

    def nominal_iteration_time(self, job: int) -> float:
        """τ at the job's exact best integer allocation within its limit (``(1, 1)`` if none fits)."""
        profile = self._profiles[job]
        best = exact_inner_optimum(profile, self._iterations[job])
        return profile.per_iteration_time(best.workers, best.ps) if best else profile.per_iteration_time(1, 1)

    def busy_gpu_seconds_per_iteration(self, job: int, alloc: Allocation) -> float:
        """GPU-seconds of computation per unit of E: each worker's GPUs busy for its FP + BP (η not applied)."""
        w, p = self._counts(job, alloc)
        profile = self._profiles[job]
        gpus = profile.worker_demand[profile.resources.index("gpu")] if "gpu" in profile.resources else 0.0
        if profile.mode == "sync":  # one iteration: every worker runs K/w samples of FP and one BP
            return gpus * w * ((profile.global_batch / w) * profile.t_f + profile.t_b)
        return gpus * (profile.mini_batch * profile.t_f + profile.t_b)  # one worker step
