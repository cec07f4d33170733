"""The per-step hot path of ``DDLCluster-v0``: its decision window, action-mask bits and portable observation.

:class:`DecisionCore` holds the env's mutable per-episode state between decisions — the queued jobs
ranked in ``queue_order``, the window of the first ``W``, which of them fit, the queued GPU demand —
and builds the portable observation from it and the simulator. :class:`~ddl_gym.envs.cluster_env.DDLClusterEnv`
owns one per episode and delegates to it; nothing here knows of Gymnasium.

It lives in its own module so that ``scripts/build_native.py`` can compile it with mypyc (like the
engines, the same source: identical integer and float arithmetic, so identical observations and
trajectories; the golden trajectories run both builds). :class:`DecisionCore` is that build while
its sha256 stamp matches this file (:data:`BUILD` says which), else this plain-Python class.
The simulator is read through its public attributes only (typed ``Any``: any build of it works).
"""

from __future__ import annotations

import bisect
import math
import struct
from typing import Any

import numpy as np

_WAIT_MAX_S = 1e6  # seconds waited (log-scaled, saturates here)
_TIME_MAX_S = 1e7  # simulated seconds
_QUEUE_MAX = 1000  # queued jobs
_INV_LOG_WAIT = 1.0 / math.log1p(_WAIT_MAX_S)
_INV_LOG_QUEUE = 1.0 / math.log1p(_QUEUE_MAX)
_INV_LOG_TIME = 1.0 / math.log1p(_TIME_MAX_S)
_LOG2_DEMAND_MAX = 4.0  # queued GPU demand of 15 clusters' worth
_INV_LOG2_DEMAND = 1.0 / _LOG2_DEMAND_MAX
_NO_JOB_GPUS = 1 << 62  # the smallest G_j of an empty window

_PACKERS: dict[int, struct.Struct] = {}
_FLOAT32 = np.dtype(np.float32)


def packer(n: int) -> struct.Struct:
    """A cached ``struct.Struct`` packing ``n`` float32 values."""
    found = _PACKERS.get(n)
    if found is None:
        found = _PACKERS[n] = struct.Struct(f"{n}f")
    return found


def to_float32(head: list[float], tail: tuple[float, ...], size: int) -> np.ndarray:
    """A fresh float32 array of ``size`` values: ``head`` first, ``tail`` last, zeros between (the empty
    window rows). ``struct`` packs floats straight into the array's buffer, faster than numpy converts
    a list (both round each float64 to the nearest float32), and the zeros are not packed at all."""
    out: Any = np.zeros(size, dtype=_FLOAT32)
    packer(len(head)).pack_into(out, 0, *head)
    packer(len(tail)).pack_into(out, 4 * (size - len(tail)), *tail)
    return out


class PortableLayout:
    """The per-episode constants of the portable observation (the layout is documented on the env).

    Built once per episode and shared by every fork of the episode's core: read only, but for the
    ``at_least`` scratch list, which every observation rewrites in full before reading it.
    ``PortableLayout()`` without arguments is an empty shell (see :class:`DecisionCore`).

    Args:
        static: per job, the six features that never change (present, gpus, cluster_share,
            servers_needed, est_runtime, comm_intensity) as float32-exact floats.
        arrival: arrival time per job.
        server_caps: GPUs per server.
        free_levels: the ``g`` of the ``servers_free_g`` features this cluster can have.
        free_levels_pad: zeros for the levels above its largest server.
        scale_features: ``cluster_gpus`` and ``server_gpus``.
        num_gpus, num_jobs: cluster and episode sizes.
        t0: the first arrival (``sim_time`` counts from it).
        size: the observation's length.
    """

    def __init__(self, static: list[tuple[float, ...]] | None = None, arrival: list[float] | None = None,
                 server_caps: list[int] | None = None, free_levels: list[int] | None = None,
                 free_levels_pad: tuple[float, ...] = (), scale_features: tuple[float, float] = (0.0, 0.0),
                 num_gpus: int = 1, num_jobs: int = 0, t0: float = 0.0, size: int = 0) -> None:
        caps = server_caps if server_caps else [1]
        self.static: list[tuple[float, ...]] = static if static is not None else []
        self.arrival: list[float] = arrival if arrival is not None else []
        self.server_caps: list[int] = caps
        self.max_server = max(caps)
        self.homogeneous = min(caps) == self.max_server
        self.free_levels: list[int] = free_levels if free_levels is not None else []
        self.free_levels_pad = free_levels_pad
        self.scale_features = scale_features
        self.inv_servers = 1.0 / len(caps)
        self.inv_gpus = 1.0 / num_gpus
        self.inv_jobs = 1.0 / num_jobs if num_jobs else 0.0
        self.inv_log_gpus = 1.0 / math.log1p(num_gpus)
        self.num_jobs = num_jobs
        self.t0 = t0
        self.size = size
        self.at_least: list[int] = [0] * (self.max_server + 2)


class DecisionCore:
    """The env's state between decisions (see the module docstring).

    Args:
        gpus: ``G_j`` per job.
        rank: each job's place in ``queue_order`` (ties by index), or ``None`` for arrival order
            (the window is then the simulator queue's head).
        job_by_rank: the inverse of ``rank`` (unused without it).
        window: ``W``, the number of queued jobs the agent sees.
        layout: the portable observation's constants (``None`` for the legacy layout, which the env
            builds itself).

    ``DecisionCore()`` without arguments is an empty shell (the compiled build's ``__new__`` runs
    ``__init__`` without arguments when a pickled env is loaded; the pickled state then fills it).

    Attributes read by the env (do not mutate): ``window`` (job indices in slots 0, 1, ...),
    ``mask_key`` (bit 0: advance is valid; bit ``1 + w``: slot ``w``'s job fits the free GPUs),
    ``queued_gpus`` (Σ G_j over queued jobs).
    """

    def __init__(self, gpus: list[int] | None = None, rank: list[int] | None = None,
                 job_by_rank: list[int] | None = None, window: int = 0, layout: PortableLayout | None = None,
                 preemptive: bool = False) -> None:
        self.gpus: list[int] = gpus if gpus is not None else []
        self.preemptive = preemptive
        self.rank = rank
        self.job_by_rank: list[int] = job_by_rank if job_by_rank is not None else []
        self.window_size = window
        self.layout = layout
        self.ranked: list[int] = []  # ranks of the queued jobs, ascending (rank is not None)
        self.window: list[int] = []
        self.window_min_gpus = _NO_JOB_GPUS
        self.window_stale = True
        self.seen_arrivals = 0
        self.queued_gpus = 0
        self.mask_key = 1

    def fork(self) -> DecisionCore:
        """An independent copy: the mutable state copied, the per-episode constants shared."""
        twin = DecisionCore(self.gpus, self.rank, self.job_by_rank, self.window_size, self.layout, self.preemptive)
        twin.ranked = list(self.ranked)
        twin.window = list(self.window)
        twin.window_min_gpus = self.window_min_gpus
        twin.window_stale = self.window_stale
        twin.seen_arrivals = self.seen_arrivals
        twin.queued_gpus = self.queued_gpus
        twin.mask_key = self.mask_key
        return twin

    # ------------------------------------------------------------------ window and mask
    def started(self, job: int) -> None:
        """``job`` (in the window) was started: it leaves the queue; the window is rebuilt on the next advance."""
        self.queued_gpus -= self.gpus[job]
        rank = self.rank
        if rank is not None:
            ranked = self.ranked
            del ranked[bisect.bisect_left(ranked, rank[job])]
        self.window_stale = True

    def requeued(self, job: int) -> None:
        """``job`` was preempted: it is queued again (the inverse of :meth:`started`)."""
        self.queued_gpus += self.gpus[job]
        rank = self.rank
        if rank is not None:
            bisect.insort(self.ranked, rank[job])
        self.window_stale = True

    def auto_advance(self, sim: Any) -> None:
        """Let time run while there is nothing to decide; set the mask.

        Nothing to decide: the queue is empty or no windowed job fits the free GPUs, and, in a
        ``preemptive`` core, no running job could make room (one is preemptable when it has held its
        GPUs since before ``now``; a job started at this instant is not, so a decision cannot loop).
        """
        gpus = self.gpus
        while True:
            arrived: int = sim.num_arrived
            if arrived != self.seen_arrivals:  # new arrivals join the ranked queue
                rank = self.rank
                if rank is not None:
                    ranked = self.ranked
                    for job in range(self.seen_arrivals, arrived):
                        bisect.insort(ranked, rank[job])
                demand = 0
                for job in range(self.seen_arrivals, arrived):
                    demand += gpus[job]
                self.queued_gpus += demand
                self.seen_arrivals = arrived
                self.window_stale = True
            if self.window_stale:
                self._rebuild_window(sim)
            if sim.done:
                self.mask_key = 1
                return
            if self.window_min_gpus <= sim.num_free or (self.preemptive and self._preemptable(sim)) \
                    or not sim.advance():
                break
        free: int = sim.num_free
        key = 0
        bit = 2
        for job in self.window:
            if gpus[job] <= free:
                key |= bit
            bit <<= 1
        if sim.running or sim.has_future_arrivals or not key:
            key |= 1
        self.mask_key = key

    @staticmethod
    def _preemptable(sim: Any) -> bool:
        """Some job waits and some running job has held its GPUs since before now."""
        if not sim.num_queued:
            return False
        now: float = sim.now
        for job in sim.running:
            if sim.running_since(job) < now:
                return True
        return False

    def _rebuild_window(self, sim: Any) -> None:
        size = self.window_size
        if self.rank is None:
            window: list[int] = sim.queue.head(size)
        else:
            by_rank = self.job_by_rank
            ranked = self.ranked
            window = [by_rank[ranked[i]] for i in range(min(size, len(ranked)))]
        self.window = window
        gpus = self.gpus
        smallest = _NO_JOB_GPUS
        for job in window:
            g = gpus[job]
            if g < smallest:
                smallest = g
        self.window_min_gpus = smallest
        self.window_stale = False

    # ------------------------------------------------------------------ portable observation
    def observe_portable(self, sim: Any) -> np.ndarray:
        """The portable observation of the current state (the layout is documented on the env)."""
        layout = self._portable_layout()
        block, tail = self._portable_features(sim, layout)
        return to_float32(block, tail, layout.size)

    def observe_portable_into(self, sim: Any, out: Any, row: int) -> None:
        """:meth:`observe_portable` written into row ``row`` of ``out`` (a C-contiguous float32 array of
        rows of this observation's size, e.g. a vector env's shared memory), the empty slots zeroed."""
        layout = self._portable_layout()
        block, tail = self._portable_features(sim, layout)
        size = layout.size
        gap = size - len(block) - len(tail)
        if gap:
            block.extend([0.0] * gap)
        block.extend(tail)
        packer(size).pack_into(out, 4 * size * row, *block)

    def _portable_layout(self) -> PortableLayout:
        layout = self.layout
        if layout is None:
            raise ValueError("this core has no portable layout (the env uses observation='legacy')")
        return layout

    def _portable_features(self, sim: Any, layout: PortableLayout) -> tuple[list[float], tuple[float, ...]]:
        """The observation's values before float32 rounding: the cluster block and the window rows, and
        the global block (the empty slots between them are zeros)."""
        free: list[int] = sim.free_per_server.tolist()
        M = layout.max_server
        # at_least[g] = servers with >= g free GPUs (g = 0 .. M + 1), from a count per free level.
        at_least = layout.at_least
        for g in range(M + 2):
            at_least[g] = 0
        most_free = 0
        for f in free:
            at_least[f] += 1
            if f > most_free:
                most_free = f
        acc = 0
        for g in range(M, -1, -1):
            acc += at_least[g]
            at_least[g] = acc
        inv_s = layout.inv_servers
        if layout.homogeneous:
            empty = at_least[M]
        else:
            empty = 0
            for f, cap in zip(free, layout.server_caps):
                if f == cap:
                    empty += 1
        block: list[float] = [at_least[g] * inv_s for g in layout.free_levels]
        block.extend(layout.free_levels_pad)
        block.append(empty * inv_s)
        block.append(most_free / M)
        block.append((len(free) - sim.split_count_list().count(0)) * inv_s)
        block.extend(layout.scale_features)
        window = self.window
        num_free: int = sim.num_free
        now: float = sim.now
        if window:
            arrival, gpus, static = layout.arrival, self.gpus, layout.static
            inv_free = 1.0 / num_free if num_free else 0.0
            tails: dict[int, tuple[float, float, float, float]] = {}  # the free-GPU features depend on G_j only
            for job in window:
                g = gpus[job]
                tail = tails.get(g)
                if tail is None:
                    if g <= num_free:
                        choices = at_least[g] if g <= M else 0
                        tail = (g * inv_free, 1.0, 1.0 if choices else 0.0, choices * inv_s)
                    else:
                        tail = (1.0, 0.0, 0.0, 0.0)
                    tails[g] = tail
                block.extend(static[job])
                waited = math.log1p(now - arrival[job]) * _INV_LOG_WAIT
                block.append(waited if waited < 1.0 else 1.0)
                block.extend(tail)
        queued: int = sim.num_queued
        q = math.log1p(queued) * _INV_LOG_QUEUE
        over = queued - self.window_size
        o = math.log1p(over) * _INV_LOG_QUEUE if over > 0 else 0.0
        d = math.log2(1.0 + self.queued_gpus * layout.inv_gpus) * _INV_LOG2_DEMAND
        elapsed = now - layout.t0
        t = math.log1p(elapsed if elapsed > 0.0 else 0.0) * _INV_LOG_TIME
        contended: int = sim.contended_jobs
        c = sim.contention_sum / contended / M if contended else 0.0
        inv_jobs = layout.inv_jobs
        running: int = len(sim.running)
        finished: int = sim.num_finished
        arrived: int = sim.num_arrived
        tail_features = (
            q if q < 1.0 else 1.0,
            o if o < 1.0 else 1.0,
            d if d < 1.0 else 1.0,
            math.log1p(running) * layout.inv_log_gpus,
            num_free * layout.inv_gpus,
            finished * inv_jobs,
            (layout.num_jobs - arrived) * inv_jobs,
            t if t < 1.0 else 1.0,
            c if c < 1.0 else 1.0,
        )
        return block, tail_features


# <pure-only> (the build switch: the compiled build of this very file, while its stamp matches)
from ddl_gym.sim.native import compiled_module as _compiled_module  # noqa: E402

PurePythonDecisionCore = DecisionCore
PurePythonPortableLayout = PortableLayout


def _native_module() -> Any:
    """The compiled build of this file if it is in place and matches this source, else None."""
    return _compiled_module(__file__)


_native = _native_module()
#: ``"native"`` when :class:`DecisionCore` and :class:`PortableLayout` are the mypyc build of this file,
#: else ``"python"``.
BUILD = "python"
if _native is not None:
    DecisionCore = _native.DecisionCore  # type: ignore[misc]
    PortableLayout = _native.PortableLayout  # type: ignore[misc]
    BUILD = "native"
# </pure-only>
