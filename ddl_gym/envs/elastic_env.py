"""``DDLClusterElastic-v0``: scheduling elastic jobs (A-Online's PS / ring-all-reduce jobs) on
multi-resource servers by choosing a queued job and one configuration from a small menu.

The env is a thin adapter over :class:`ddl_gym.sim.engine.Simulator` (shared parts in
:class:`ddl_gym.envs.base.SimulatorEnv`); configurations are built by the same placement rule as
the A-Online baselines (:func:`ddl_gym.baselines.a_online.common.place_fixed`).
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from ddl_gym.envs.base import SimulatorEnv, action_index
from ddl_gym.scenarios import Scenario
from ddl_gym.sim.model import ConfigError
from ddl_gym.sim.perf.aonline import SLOT_SECONDS

MENU_ITEMS = ("max", "ideal", "fixed", "min")
JOB_FEATURES = ("present", "weight", "waited", "chunks")
MENU_FEATURES = ("valid", "duration", "share")
GLOBAL_FEATURES = ("queue_length", "queue_overflow", "running_jobs", "finished_fraction", "arrivals_left_fraction",
                   "sim_time")
_DUR_MAX_S = 1e7  # seconds
_TIME_MAX_S = 1e7
_QUEUE_MAX = 1000
_W_MAX = 5000.0  # Zhou §7: w_j <= 5000


class DDLClusterElasticEnv(SimulatorEnv):
    """Schedule elastic distributed-training jobs on a multi-resource, heterogeneous cluster.

    ## Description

    A-Online's world (Zhou et al., §3, §6, §7): jobs train ``E·D·K`` mini-batches with a parameter
    server (eq. 1) or ring all-reduce (eq. 14) architecture and may run with any number of workers
    up to ``D_j``, of any worker / PS type. Servers have GPUs, vCPUs, memory and bandwidth
    (EC2 P3/P2/G3 shapes). A configuration is fixed at start (no preemption, no resizing); the job
    completes at ``EDK / (N ρ)`` slots. The objective is the total weighted completion time
    ``Σ w_j C_j`` (A-Online's metric). The agent picks which queued job to start next and with which
    configuration, or lets time run.

    ## Action Space

    ``Discrete(1 + W·K)`` with ``W = window`` queue slots and ``K = len(menu)`` configurations:

    | action      | meaning                                                                  |
    |-------------|--------------------------------------------------------------------------|
    | 0           | advance: let simulated time run to the next event (arrival / completion) |
    | 1 + w·K + k | start the job in queue slot ``w`` with configuration ``menu[k]``         |

    Menu items (each job keeps its ideal worker type ``m* = argmax_m ρ_jm`` and PS type
    ``p* = argmin_p U_j^p``, Zhou §7's "ideal case" types): ``"max"`` — the most workers (≤ ``D_j``)
    that fit now; ``"ideal"`` — ``D_j`` workers; ``"fixed"`` — the FIFO/AntMan/Tiresias worker count
    ``N_fifo``; ``"min"`` — one worker. PSs: the fewest on one server covering the remote workers
    (eq. 2i); everything on one server when it fits. The queue window lists queued jobs in
    ``queue_order`` (``"wspt"``: ``w_j`` / fixed-configuration run time, descending — Smith's rule;
    ``"fifo"``: arrival). A start is valid iff its allocation fits the free resources now
    (``Simulator.fits``, the resource ledger); "advance" is valid unless it would wait forever.
    Masks: :meth:`action_masks` (np.int8) and ``info["action_mask"]``.

    **Invalid actions** (masked, or an integer outside the space) never raise. With
    ``invalid_action="wait"`` (default, as in the other envs) the env carries out "advance"
    instead, or, when advance is itself invalid, the first valid start (lowest slot, then menu
    item); the step costs ``invalid_action_penalty``, ``info["invalid_action"]`` is ``True`` and
    ``info["executed_action"]`` says what ran. Every step thus starts a job or lets an event happen
    (or finds the episode stuck), so repeating an invalid action cannot freeze the clock.
    ``invalid_action="noop"`` (v0 as first released) does nothing and time does not move; only the
    decision limit then ends an episode that repeats an invalid action.

    ## Observation Space

    A flat ``Box(0, 1, (2·R + W·(4 + 3·K) + 6,), float32)``, independent of the number of servers:

    | block       | feature            | meaning / normalisation                                        |
    |-------------|--------------------|----------------------------------------------------------------|
    | per resource| free_total         | free amount / capacity, whole cluster (R = 4: gpu, cpu, mem, bw)|
    |             | free_max_server    | largest free fraction of one server                            |
    | per slot    | present            | 1 if a job occupies the slot                                   |
    |             | weight             | w_j / 5000                                                     |
    |             | waited             | log1p(now − arrival) / log1p(1e7 s)                            |
    |             | chunks             | D_j / 50                                                       |
    |   per item  | valid              | 1 if this configuration fits now                               |
    |             | duration           | log1p(run time in s) / log1p(1e7)                              |
    |             | share              | Σ_r use_r / capacity_r of the configuration (≤ 1 clipped)      |
    | global      | queue_length, queue_overflow, running_jobs, finished_fraction, arrivals_left_fraction, sim_time | as in DDLCluster-v0 (log-scaled counts, fractions) |

    ## Rewards

    ``reward="weighted_jct"`` (default): ``−Δt · Σ weights in system · reward_scale`` per step; the
    undiscounted return is ``−Σ_j w_j JCT_j · reward_scale`` (= ``−(Σ w_j C_j − Σ w_j a_j)·scale``:
    A-Online's objective up to a constant). ``"jct"`` and ``"makespan"`` as in ``DDLCluster-v0``.
    ``reward_scale`` defaults to ``1/(3600·1e4)`` (hours × 10^4 weight units).

    ## Starting State

    ``reset(seed)`` draws the scenario's cluster and workload from ``np_random`` (the same episode
    as ``scenario.episode(seed)`` in the harness), puts the clock at the first arrival and advances
    to the first decision.

    ## Episode End

    Terminated when every job has finished (``info["metrics"]`` holds the harness's summary keys,
    ``weighted_completion`` included). Truncated when the decision limit is reached:
    ``max_decisions="auto"`` (default) is ``6·N + 64`` for ``N`` jobs. A valid step starts a job
    (at most ``N``) or advances to the next event (at most ``N`` arrivals and ``N`` completions),
    so no episode under valid actions (or ``"wait"``) comes near it: it is a backstop that ends
    ``"noop"`` episodes stuck on invalid actions and episodes stuck on jobs that never fit. An
    integer sets it; ``None`` removes it.

    ## Arguments

    ``scenario`` (an A-Online scenario: ``"aonline-ps"``, ``"aonline-ra"``, ``"aonline-ps-small"``),
    ``window`` W (8), ``menu`` (subset of :data:`MENU_ITEMS`), ``queue_order``, ``reward``,
    ``reward_scale``, ``invalid_action`` (``"wait"`` or ``"noop"``), ``invalid_action_penalty``,
    ``max_decisions`` (``"auto"``), ``render_mode`` (``"ansi"``), ``debug``.

    ## Version History

    * v0 (revised): invalid actions wait instead of doing nothing (``invalid_action="noop"`` keeps
      the first behaviour), ``max_decisions="auto"``, ``info["executed_action"]``. Trajectories
      under valid actions are unchanged.
    * v0: initial version.
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 4}

    def __init__(
        self,
        scenario: str | Scenario = "aonline-ps",
        *,
        window: int = 8,
        menu: Sequence[str] = MENU_ITEMS,
        queue_order: str = "wspt",
        reward: str = "weighted_jct",
        reward_scale: float = 1.0 / (3600.0 * 1e4),
        invalid_action: str = "wait",
        invalid_action_penalty: float = 0.0,
        max_decisions: int | str | None = "auto",
        render_mode: str | None = None,
        debug: bool = False,
    ) -> None:
        self._setup_common(scenario, reward=reward, reward_scale=reward_scale, render_mode=render_mode,
                           invalid_action=invalid_action, invalid_action_penalty=invalid_action_penalty,
                           max_decisions=max_decisions, debug=debug)
        self._executed = -1
        if window < 1:
            raise ConfigError(f"window must be >= 1, got {window}")
        unknown = [m for m in menu if m not in MENU_ITEMS]
        if unknown or not menu:
            raise ConfigError(f"menu items must be among {MENU_ITEMS}, got {tuple(menu)}")
        if queue_order not in ("wspt", "fifo"):
            raise ConfigError(f"queue_order must be 'wspt' or 'fifo', got {queue_order!r}")
        self.window = int(window)
        self.menu = tuple(menu)
        self.queue_order = queue_order
        probe_cluster = self.scenario.sample_cluster(np.random.default_rng(0))
        if "bw" not in probe_cluster.resources or not probe_cluster.worker_types:
            raise ConfigError(f"DDLClusterElastic-v0 needs an A-Online scenario (multi-resource servers with worker "
                              f"types); {self.scenario.name!r} has resources {probe_cluster.resources}")
        self.num_resources = probe_cluster.num_resources
        K = len(self.menu)
        self._per_slot = len(JOB_FEATURES) + len(MENU_FEATURES) * K
        n_obs = 2 * self.num_resources + self.window * self._per_slot + len(GLOBAL_FEATURES)
        self.observation_space = spaces.Box(0.0, 1.0, shape=(n_obs,), dtype=np.float32)
        self.action_space = spaces.Discrete(1 + self.window * K)
        self.observation_layout = {"resources": self.num_resources, "window": self.window, "menu": self.menu,
                                   "job_features": JOB_FEATURES, "menu_features": MENU_FEATURES,
                                   "global_features": GLOBAL_FEATURES}
        self._window: list[int] = []
        self._options: dict[tuple[int, str], Any] = {}
        self._mask: np.ndarray | None = None

    # ------------------------------------------------------------------ gym API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        sim = self._start_episode(seed, options)
        from ddl_gym.baselines.a_online.common import ideal_of, require_aonline

        require_aonline(type(self).__name__, sim.workload, sim.cluster, self.scenario.name)
        w = sim.workload
        self._ideal = [ideal_of(sim, j) for j in range(w.num_jobs)]
        self._profiles = [w.job_profile(j) for j in range(w.num_jobs)]
        self._total_cap = sim.capacity.sum(axis=0)
        fixed_runtime = [self._runtime(j, self._ideal[j][0], self._ideal[j][1], self._profiles[j].baseline_workers,
                                       colocated=False) for j in range(w.num_jobs)]
        self._rank_key = [(-w.weight[j] / fixed_runtime[j], j) if self.queue_order == "wspt" else (j,)
                          for j in range(w.num_jobs)]
        self._executed = -1
        self._auto_advance()
        return self._observe(), self._info(invalid=False)

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if self.sim is None:
            raise gym.error.ResetNeeded("call reset() before step()")
        sim = self.sim
        before = self._objective_area()
        if type(action) is not int:  # the rule every env follows: no silent int(1.7) == 1
            action = action_index(action, int(self.action_space.n), "DDLClusterElastic")
        mask = self.action_masks()
        invalid = bool(not (0 <= action < mask.size) or mask[action] == 0)
        if invalid:
            # "wait": advance if that is valid, else the first valid start; "noop": nothing happens.
            action = (0 if mask[0] else int(np.flatnonzero(mask)[0])) if self.invalid_action == "wait" else -1
        self._executed = action
        if action >= 0 and not sim.done:
            if action == 0:
                sim.advance()
            else:
                slot, item = divmod(action - 1, len(self.menu))
                job = self._window[slot]
                sim.start(job, self._options[(job, self.menu[item])])
            self._auto_advance()
        return self._finish_step(before, invalid)

    def _auto_decision_limit(self) -> int:
        # Each valid step starts a job (<= N) or lets an event happen (<= N arrivals + N completions).
        return 6 * self.sim.workload.num_jobs + 64  # type: ignore[union-attr]

    def action_masks(self) -> np.ndarray:
        """Valid actions as np.int8 0/1 (at least one is always 1)."""
        if self._mask is None:
            self._mask = self._compute_mask()
        return self._mask.copy()

    def render(self) -> str | None:
        if self.render_mode != "ansi" or self.sim is None:
            return None
        sim = self.sim
        free = sim.free_resources().sum(axis=0) / self._total_cap
        lines = [f"t={sim.now / SLOT_SECONDS:8.2f} slots queued={len(sim.queue)} running={len(sim.running)} "
                 f"done={sim.num_finished}/{sim.workload.num_jobs} free=" +
                 " ".join(f"{r}:{f:.2f}" for r, f in zip(sim.cluster.resources, free))]
        for slot, job in enumerate(self._window):
            valid = "".join("1" if (job, m) in self._options else "0" for m in self.menu)
            lines.append(f"  slot {slot}: job {int(sim.workload.job_id[job])} w={sim.workload.weight[job]:.0f} "
                         f"D={self._profiles[job].chunks} menu={valid}")
        return "\n".join(lines) + "\n"

    def _fork_state(self, twin: DDLClusterElasticEnv) -> None:
        twin._window = list(self._window)
        twin._options = dict(self._options)

    # ------------------------------------------------------------------ internals
    def _runtime(self, job: int, m: int, p: int, n: int, colocated: bool) -> float:
        """Seconds the job runs with ``n`` workers of type ``m`` (PS type ``p``)."""
        from ddl_gym.sim.perf.aonline import Config, config_rate

        arch = int(self.sim.workload.arch[job])
        rate = config_rate(self._profiles[job], self.sim.cluster, arch, Config(m, p, n, 1, colocated))
        return self._profiles[job].total_minibatches / (n * rate) * SLOT_SECONDS

    def _refresh(self) -> None:
        """Window and menu allocations for the current state (recomputed after every change)."""
        from ddl_gym.baselines.a_online.common import place_fixed

        sim = self.sim
        assert sim is not None
        self._window = sorted(sim.queue, key=self._rank_key.__getitem__)[: self.window]
        self._options = {}
        free = sim.free_resources()
        for job in self._window:
            m, p, D, _ = self._ideal[job]
            arch = int(sim.workload.arch[job])
            counts = {"ideal": D, "fixed": self._profiles[job].baseline_workers, "min": 1}
            for item in self.menu:
                if item == "max":
                    alloc = self._most_workers(sim, job, m, p, D, arch, free)
                else:
                    alloc = place_fixed(sim, job, m, p, counts[item], arch, free=free)
                if alloc is not None and sim.fits(alloc):
                    self._options[(job, item)] = alloc
        self._mask = None

    @staticmethod
    def _most_workers(sim, job, m, p, D, arch, free):
        from ddl_gym.baselines.a_online.common import max_workers_fitting, place_fixed

        n = max_workers_fitting(sim.cluster, free, m, p, D, arch)
        return place_fixed(sim, job, m, p, n, arch, free=free) if n >= 1 else None

    def _compute_mask(self) -> np.ndarray:
        mask = np.zeros(self.action_space.n, dtype=np.int8)
        sim = self.sim
        if sim is None or sim.done:
            mask[0] = 1
            return mask
        K = len(self.menu)
        for slot, job in enumerate(self._window):
            for k, item in enumerate(self.menu):
                if (job, item) in self._options:
                    mask[1 + slot * K + k] = 1
        if sim.running or sim.has_future_arrivals or not mask.any():
            mask[0] = 1
        return mask

    def _auto_advance(self) -> None:
        """Let time run while no start is possible."""
        sim = self.sim
        assert sim is not None
        while True:
            self._refresh()
            if sim.done or self._options:
                return
            if not sim.advance():
                return

    def _observe(self) -> np.ndarray:
        sim = self.sim
        assert sim is not None
        free = sim.free_resources()
        cap = sim.capacity
        out: list[float] = []
        out += np.clip(free.sum(axis=0) / self._total_cap, 0.0, 1.0).tolist()
        out += np.clip((free / np.maximum(cap, 1e-12)).max(axis=0), 0.0, 1.0).tolist()
        inv_dur = 1.0 / math.log1p(_DUR_MAX_S)
        for job in self._window:
            prof = self._profiles[job]
            out += [1.0, min(1.0, sim.workload.weight[job] / _W_MAX),
                    min(1.0, math.log1p(max(0.0, sim.now - sim.workload.arrival[job])) * inv_dur), min(1.0, prof.chunks / 50.0)]
            for item in self.menu:
                alloc = self._options.get((job, item))
                if alloc is None:
                    out += [0.0, 0.0, 0.0]
                    continue
                runtime = sim.estimate_iteration_time(job, alloc) * prof.total_minibatches
                servers, use = alloc.server_use(sim.cluster)
                share = float((use.sum(axis=0) / self._total_cap).sum())
                out += [1.0, min(1.0, math.log1p(runtime) * inv_dur), min(1.0, share)]
        out += [0.0] * (self._per_slot * (self.window - len(self._window)))
        n_jobs = max(1, sim.workload.num_jobs)
        queued = len(sim.queue)
        inv_q = 1.0 / math.log1p(_QUEUE_MAX)
        t0 = float(sim.workload.arrival[0]) if sim.workload.num_jobs else 0.0
        out += [min(1.0, math.log1p(queued) * inv_q), min(1.0, math.log1p(max(0, queued - self.window)) * inv_q),
                min(1.0, math.log1p(len(sim.running)) * inv_q), sim.num_finished / n_jobs,
                (n_jobs - sim.num_arrived) / n_jobs, min(1.0, math.log1p(max(0.0, sim.now - t0)) / math.log1p(_TIME_MAX_S))]
        return np.asarray(out, dtype=np.float32)

    def _info(self, invalid: bool) -> dict[str, Any]:
        sim = self.sim
        assert sim is not None
        return {
            "action_mask": self.action_masks(),
            "invalid_action": invalid,
            "executed_action": self._executed,
            "sim_time": float(sim.now),
            "queue_length": len(sim.queue),
            "running_jobs": len(sim.running),
            "finished_jobs": sim.num_finished,
            "window_jobs": list(self._window),
        }
