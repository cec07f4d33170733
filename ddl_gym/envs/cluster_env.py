"""``DDLCluster-v0``: scheduling distributed training jobs on a shared GPU cluster.

The env is a thin adapter over :class:`ddl_gym.sim.engine.Simulator`: it turns the simulator's
decision points into ``step()`` calls and contains no simulation logic.
"""

from __future__ import annotations

import bisect
import math
from typing import Any, Sequence

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from ddl_gym.envs.base import SimulatorEnv
from ddl_gym.placement import PlacementRule, get_placement_rule
from ddl_gym.scenarios import Scenario
from ddl_gym.sim.priority import comm_intensity, nominal_runtimes, priority_key
from ddl_gym.sim.model import ConfigError

# Normalisation constants (log-scaled heavy-tailed quantities saturate at these).
_WORK_MAX_S = 1e6  # seconds of estimated run time
_WAIT_MAX_S = 1e6  # seconds waited
_TIME_MAX_S = 1e7  # simulated seconds
_QUEUE_MAX = 1000  # queued jobs
_INV_LOG_WAIT = 1.0 / math.log1p(_WAIT_MAX_S)
_INV_LOG_QUEUE = 1.0 / math.log1p(_QUEUE_MAX)
_INV_LOG_TIME = 1.0 / math.log1p(_TIME_MAX_S)

SERVER_FEATURES = ("free_fraction", "split_jobs", "size")
JOB_FEATURES = ("present", "gpus", "est_runtime", "waited", "comm_intensity", "fits_now", "fits_one_server")
GLOBAL_FEATURES = ("queue_length", "queue_overflow", "running_jobs", "free_fraction", "finished_fraction",
                   "arrivals_left_fraction", "sim_time", "mean_split_contention")


class DDLClusterEnv(SimulatorEnv):
    """Schedule distributed deep-learning jobs on a multi-tenant GPU cluster.

    ## Description

    Jobs (data-parallel, ring-all-reduce) arrive over time and wait in a queue. Each needs ``G_j``
    GPUs at once (gang scheduling) and runs ``F_j`` iterations without preemption. A job spread
    over several servers communicates over their NICs and slows down every other spread job on
    those servers (ring-all-reduce contention, SJF-BCO §4.1 eqs. 6–8) and pays a per-server
    overhead; a job on one server uses the fast intra-server link. The agent decides which queued
    job to start next, how to place it, and when to wait. The default scenario has 16 servers × 4
    GPUs, 10 Gb/s NICs, and 160 jobs (80×1, 14×2, 26×4, 30×8, 8×16, 2×32 GPUs; Table III models of
    Ada-SRSF) arriving over 20 minutes, freshly sampled each episode.

    ## Action Space

    ``Discrete(1 + W·P)`` with ``W = window`` queue slots and ``P = len(placements)`` rules:

    | action          | meaning                                                               |
    |-----------------|-----------------------------------------------------------------------|
    | 0               | advance: let simulated time run to the next event (arrival/completion)|
    | 1 + w·P + p     | start the job in queue slot ``w`` with placement rule ``placements[p]``|

    The queue window lists the first ``W`` queued jobs in ``queue_order`` (``"srsf"``: smallest
    ``F·G·τ̂`` first; ``"fifo"``: arrival order; ``"sjf"``: smallest ``F·τ̂``). Slots are re-sorted
    every step: an action names "the job now in slot w", never a job id. Default rules:
    ``pack`` (consolidate on the fullest server that fits, else fewest servers), ``spread``
    (one GPU at a time on the least-loaded server) and ``contention_aware`` (one server if
    possible, else the servers with the fewest spread jobs). Masks: :meth:`action_masks` (np.int8)
    and ``info["action_mask"]``; a start is valid iff the slot holds a job with ``G_j <= free
    GPUs``; "advance" is valid unless it would wait forever (nothing running, no arrivals left).
    An invalid action is a no-op that costs ``invalid_action_penalty`` and sets
    ``info["invalid_action"] = True``; it never raises.

    ## Observation Space

    A flat ``Box(0, 1, (3·S + 7·W + 8,), float32)`` (``S`` servers), in this order:

    | block      | feature (per item)   | meaning / normalisation                                    |
    |------------|----------------------|------------------------------------------------------------|
    | per server | free_fraction        | free GPUs / GPUs of the server                             |
    |            | split_jobs           | spread jobs with workers on it / GPUs of the server (p_s)  |
    |            | size                 | GPUs of the server / largest server                        |
    | per slot   | present              | 1 if a job occupies the slot                               |
    |            | gpus                 | log2(1+G_j) / log2(1+GPUs in cluster)                      |
    |            | est_runtime          | log1p(F_j·τ̂_j) / log1p(1e6 s), τ̂ = uncontended, consolidated |
    |            | waited               | log1p(now − arrival) / log1p(1e6 s)                        |
    |            | comm_intensity       | r/(1+r), r = 2·m_j/b_e ÷ compute time per iteration        |
    |            | fits_now             | 1 if G_j <= free GPUs                                      |
    |            | fits_one_server      | 1 if some server alone has G_j free GPUs                   |
    | global     | queue_length         | log1p(queued) / log1p(1000)                                |
    |            | queue_overflow       | log1p(queued beyond the window) / log1p(1000)              |
    |            | running_jobs         | log1p(running) / log1p(GPUs in cluster)                    |
    |            | free_fraction        | free GPUs / GPUs in cluster                                |
    |            | finished_fraction    | finished jobs / jobs in the episode                        |
    |            | arrivals_left_fraction | jobs not yet arrived / jobs in the episode               |
    |            | sim_time             | log1p(now − first arrival) / log1p(1e7 s)                  |
    |            | mean_split_contention| mean p_j of running spread jobs / largest server           |

    Values are clipped to [0, 1]. Layout sizes are in ``env.observation_layout``.

    ## Rewards

    ``reward="jct"`` (default): ``−Δt · (jobs in system) · reward_scale`` per step, so the
    undiscounted return is exactly ``−(Σ_j JCT_j) · reward_scale``. ``"makespan"``: ``−Δt ·
    reward_scale`` while jobs remain (return ``−makespan · scale``). ``"weighted_jct"``:
    ``−Δt · Σ weights in system · scale``. ``reward_scale`` defaults to 1/3600 (hours).

    ## Starting State

    ``reset(seed)`` draws the cluster and workload from the scenario with the env's
    ``np_random`` (identical to ``scenario.episode(seed)`` used by the evaluation harness),
    puts the clock at the first arrival and advances to the first decision. ``options``:
    ``{"workload": Workload | path.csv}`` replaces the sampled jobs for this episode.

    ## Episode End

    Terminated when every job has finished (``info["metrics"]`` then holds the harness's
    summary keys). Truncated after ``max_decisions`` steps, if set. Time only moves on
    "advance" (or automatically when no start is possible), so steps are decisions.

    ## Arguments

    ``scenario`` (name, file or :class:`Scenario`), ``window`` W (8), ``placements``,
    ``queue_order``, ``reward``, ``reward_scale``, ``invalid_action_penalty``, ``max_decisions``,
    ``render_mode`` (``"ansi"`` or ``"rgb_array"``), ``debug`` (simulator invariant checks).

    ## Version History

    * v0: initial version.
    """

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}

    def __init__(
        self,
        scenario: str | Scenario = "default",
        *,
        window: int = 8,
        placements: Sequence[str] = ("pack", "spread", "contention_aware"),
        queue_order: str = "srsf",
        reward: str = "jct",
        reward_scale: float = 1.0 / 3600.0,
        invalid_action_penalty: float = 0.0,
        max_decisions: int | None = None,
        render_mode: str | None = None,
        debug: bool = False,
    ) -> None:
        self._setup_common(scenario, reward=reward, reward_scale=reward_scale, render_mode=render_mode,
                           invalid_action_penalty=invalid_action_penalty, max_decisions=max_decisions, debug=debug)
        if window < 1:
            raise ConfigError(f"window must be >= 1, got {window}")
        if queue_order not in ("srsf", "fifo", "sjf"):
            raise ConfigError(f"queue_order must be 'srsf', 'fifo' or 'sjf', got {queue_order!r}")
        self.window = int(window)
        self.placement_names = tuple(placements)
        self._rules: tuple[PlacementRule, ...] = tuple(get_placement_rule(p) for p in self.placement_names)
        self.queue_order = queue_order
        n_obs = len(SERVER_FEATURES) * self.num_servers + len(JOB_FEATURES) * self.window + len(GLOBAL_FEATURES)
        self.observation_space = spaces.Box(0.0, 1.0, shape=(n_obs,), dtype=np.float32)
        self.action_space = spaces.Discrete(1 + self.window * len(self._rules))
        self.observation_layout = {
            "servers": self.num_servers, "server_features": SERVER_FEATURES, "window": self.window,
            "job_features": JOB_FEATURES, "global_features": GLOBAL_FEATURES, "placements": self.placement_names,
        }
        self._obs = np.zeros(n_obs, dtype=np.float32)
        self._window: list[int] = []
        self._mask: np.ndarray | None = None

    # ------------------------------------------------------------------ gym API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        self._start_episode(seed, options)
        self._prepare_episode()
        self._auto_advance()
        obs = self._observe()
        return obs, self._info(invalid=False)

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if self.sim is None:
            raise gym.error.ResetNeeded("call reset() before step()")
        sim = self.sim
        before = self._objective_area()
        mask = self._mask if self._mask is not None else self._compute_mask()
        action = int(action)
        invalid = bool(not (0 <= action < mask.size) or mask[action] == 0)
        if not invalid and not sim.done:
            if action == 0:
                sim.advance()
            else:
                slot, rule = divmod(action - 1, len(self._rules))
                job = self._window[slot]
                ids = self._rules[rule](sim, job, self.np_random)
                sim.start(job, ids)
            self._auto_advance()
            self._mask = None
        return self._finish_step(before, invalid)

    def action_masks(self) -> np.ndarray:
        """Valid actions as np.int8 0/1 (at least one is always 1)."""
        if self._mask is None:
            self._mask = self._compute_mask()
        return self._mask.copy()

    def _compute_mask(self) -> np.ndarray:
        mask = np.zeros(self.action_space.n, dtype=np.int8)
        sim = self.sim
        if sim is None or sim.done:
            mask[0] = 1
            return mask
        gpus = self._gpus
        P = len(self._rules)
        for slot, job in enumerate(self._window):
            if gpus[job] <= sim.num_free:
                mask[1 + slot * P : 1 + (slot + 1) * P] = 1
        if sim.running or sim.has_future_arrivals or not mask.any():
            mask[0] = 1
        return mask

    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None or self.sim is None:
            return None
        if self.render_mode == "ansi":
            return self._render_text()
        return self._render_rgb()

    def _fork_state(self, twin: DDLClusterEnv) -> None:
        twin._window = list(self._window)
        twin._ranked_queue = list(getattr(self, "_ranked_queue", []))
        twin._obs = self._obs.copy()

    # ------------------------------------------------------------------ internals
    def _prepare_episode(self) -> None:
        sim = self.sim
        assert sim is not None
        w = sim.workload
        cluster = sim.cluster
        self._gpus = w.gpus.tolist()
        runtime = nominal_runtimes(sim)
        key = priority_key(sim, self.queue_order, runtime)
        self._order_key: list[float] | None = None if key is None else key.tolist()
        # Static part of each job's window row, in JOB_FEATURES order (waited/fits_* filled per step).
        static = np.zeros((w.num_jobs, len(JOB_FEATURES)), dtype=np.float32)
        static[:, 0] = 1.0
        static[:, 1] = np.log2(1.0 + w.gpus) / math.log2(1.0 + cluster.num_gpus)
        static[:, 2] = np.minimum(1.0, np.log1p(runtime) / math.log1p(_WORK_MAX_S))
        static[:, 4] = comm_intensity(w, cluster)
        self._job_static = static
        self._job_static_rows = static.tolist()
        self._zero_rows = [[0.0] * (len(JOB_FEATURES) * (self.window - k)) for k in range(self.window + 1)]
        self._gpus_arr = w.gpus
        # Queue order as a rank per job (ties by index), so sorting the queue is a C-level key lookup.
        if self._order_key is None:
            self._rank = None
        else:
            order = np.lexsort((np.arange(w.num_jobs), np.asarray(self._order_key)))
            rank = np.empty(w.num_jobs, dtype=np.int64)
            rank[order] = np.arange(w.num_jobs)
            self._rank = rank.tolist()
            self._job_by_rank = order.tolist()
        self._ranked_queue: list[int] = []
        self._seen_arrivals = 0
        self._arrival = w.arrival
        self._arrival_list = w.arrival.tolist()
        self._inv_server_gpus = 1.0 / sim.server_gpus.astype(np.float64)
        self._inv_log_gpus = 1.0 / math.log1p(cluster.num_gpus)
        self._t0 = float(w.arrival[0]) if w.num_jobs else 0.0
        self._server_gpus = sim.server_gpus.astype(np.float64)
        self._max_server = float(cluster.max_server_gpus)
        S = self.num_servers
        self._obs[:] = 0.0
        self._obs[2 * S : 3 * S] = self._server_gpus / self._max_server
        self._window: list[int] = []
        self._window_stamp: tuple[int, int] = (-1, -1)
        self._mask: np.ndarray | None = None

    def _refresh_window(self) -> None:
        sim = self.sim
        assert sim is not None
        stamp = (sim.num_arrived, sim.decisions)  # the queue changes only on arrivals and starts
        if stamp == self._window_stamp:
            return
        self._window_stamp = stamp
        self._mask = None
        if self._rank is None:
            self._window = sim.queue[: self.window]
            return
        # Keep the queue as a sorted list of ranks: arrivals come in job-index order, and only the
        # env starts jobs, so inserting new arrivals and dropping started jobs keeps it exact.
        ranked = self._ranked_queue
        rank = self._rank
        for job in range(self._seen_arrivals, sim.num_arrived):
            bisect.insort(ranked, rank[job])
        self._seen_arrivals = sim.num_arrived
        state = sim.state
        by_rank = self._job_by_rank
        window: list[int] = []
        i = 0
        while i < len(ranked) and len(window) < self.window:
            job = by_rank[ranked[i]]
            if state[job] != 1:  # started since (QUEUED == 1): drop lazily
                del ranked[i]
                continue
            window.append(job)
            i += 1
        self._window = window

    def _auto_advance(self) -> None:
        """Let time run while there is no start to decide (queue empty or nothing fits)."""
        sim = self.sim
        assert sim is not None
        while True:
            self._refresh_window()
            if sim.done:
                return
            if any(self._gpus[j] <= sim.num_free for j in self._window):
                return
            if not sim.advance():
                return

    def _observe(self) -> np.ndarray:
        sim = self.sim
        assert sim is not None
        S, W = self.num_servers, self.window
        obs = self._obs
        np.multiply(sim.free_per_server, self._inv_server_gpus, out=obs[0:S])
        np.multiply(sim.split_count, self._inv_server_gpus, out=obs[S : 2 * S])
        base = 3 * S
        nf = len(JOB_FEATURES)
        # The window block is built as one Python list (≤ W·7 floats) and written with a single
        # numpy assignment: cheaper than many small numpy writes.
        block: list[float] = []
        window = self._window
        if window:
            now, arrival, gpus, static = sim.now, self._arrival_list, self._gpus, self._job_static_rows
            num_free = sim.num_free
            most_free = max(sim.free_per_server.tolist())
            log1p = math.log1p
            for job in window:
                present, g_feature, runtime, _, comm, _, _ = static[job]
                block += (present, g_feature, runtime, min(1.0, log1p(now - arrival[job]) * _INV_LOG_WAIT), comm,
                          float(gpus[job] <= num_free), float(gpus[job] <= most_free))
        block += self._zero_rows[len(window)]
        obs[base : base + nf * W] = block
        n_jobs = max(1, sim.workload.num_jobs)
        queued = len(sim.queue)
        running = sim.running
        contention = sim.contention
        split = [contention[j] for j in running if contention[j]]
        obs[base + nf * W :] = (
            min(1.0, math.log1p(queued) * _INV_LOG_QUEUE),
            min(1.0, math.log1p(max(0, queued - W)) * _INV_LOG_QUEUE),
            math.log1p(len(running)) * self._inv_log_gpus,
            sim.num_free / sim.cluster.num_gpus,
            sim.num_finished / n_jobs,
            (n_jobs - sim.num_arrived) / n_jobs if sim.workload.num_jobs else 0.0,
            min(1.0, math.log1p(max(0.0, sim.now - self._t0)) * _INV_LOG_TIME),
            min(1.0, sum(split) / len(split) / self._max_server) if split else 0.0,
        )
        return obs.copy()

    def _info(self, invalid: bool) -> dict[str, Any]:
        sim = self.sim
        assert sim is not None
        return {
            "action_mask": self.action_masks(),  # cached: computed once per state
            "invalid_action": invalid,
            "sim_time": float(sim.now),
            "queue_length": len(sim.queue),
            "running_jobs": len(sim.running),
            "finished_jobs": sim.num_finished,
            "window_jobs": list(self._window),
        }

    def _render_text(self) -> str:
        sim = self.sim
        assert sim is not None
        lines = [f"t={sim.now:10.1f}s  queued={len(sim.queue)}  running={len(sim.running)}  "
                 f"done={sim.num_finished}/{sim.workload.num_jobs}  free GPUs={sim.num_free}/{sim.cluster.num_gpus}"]
        row = []
        for s in range(self.num_servers):
            total = int(sim.server_gpus[s])
            used = total - int(sim.free_per_server[s])
            row.append(f"S{s:02d}[{'#' * used}{'.' * (total - used)}]p{int(sim.split_count[s])}")
        for i in range(0, len(row), 4):
            lines.append("  ".join(row[i : i + 4]))
        for slot, job in enumerate(self._window):
            w = sim.workload
            lines.append(f"  slot {slot}: job {int(w.job_id[job])} G={int(w.gpus[job])} F={int(w.iterations[job])} "
                         f"model={w.profile(job).name} waited={sim.now - w.arrival[job]:.0f}s")
        return "\n".join(lines) + "\n"

    def _render_rgb(self) -> np.ndarray:
        """GPU occupancy Gantt chart so far: one row band per GPU, colour per job, darker = more contention."""
        sim = self.sim
        assert sim is not None
        n_gpus = sim.cluster.num_gpus
        row_h = max(2, min(8, 256 // max(1, n_gpus)))
        height, width = n_gpus * row_h, 480
        image = np.full((height, width, 3), 255, dtype=np.uint8)
        t0 = float(sim.workload.arrival[0]) if sim.workload.num_jobs else 0.0
        span = max(sim.now - t0, 1e-9)
        palette = np.array([[31, 119, 180], [255, 127, 14], [44, 160, 44], [214, 39, 40], [148, 103, 189],
                            [140, 86, 75], [227, 119, 194], [127, 127, 127], [188, 189, 34], [23, 190, 207]])
        for j in range(sim.workload.num_jobs):
            start = sim.start_time[j]
            if math.isnan(start):
                continue
            end = sim.finish_time[j] if not math.isnan(sim.finish_time[j]) else sim.now
            x0 = int((start - t0) / span * (width - 1))
            x1 = max(x0 + 1, int((end - t0) / span * (width - 1)))
            shade = 1.0 / (1.0 + 0.5 * max(0, sim.contention[j] - 1))
            colour = (palette[j % len(palette)] * shade).astype(np.uint8)
            for g in sim.placement[j].tolist():
                image[g * row_h : (g + 1) * row_h - 1, x0:x1] = colour
        return image
