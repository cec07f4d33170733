"""``DDLClusterPlacement-v0``: Harmony-style worker-by-worker placement of DDL jobs.

The job order is fixed by a rule; the agent only decides *where* each worker (GPU) of the current
job goes, one server at a time (after Harmony, Bao et al., ICDCS'19 / INFOCOM'19, which learns
placement of workers across servers for a given job). Like :mod:`ddl_gym.envs.cluster_env` it is a
thin adapter over :class:`ddl_gym.sim.engine.Simulator` with no simulation logic of its own.
"""

from __future__ import annotations

import math
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from ddl_gym.envs.base import DiscreteActions, SimulatorEnv, action_index
from ddl_gym.envs.cluster_env import _WORK_MAX_S
from ddl_gym.envs.core import _QUEUE_MAX, _TIME_MAX_S, _WAIT_MAX_S
from ddl_gym.scenarios import Scenario
from ddl_gym.sim.priority import comm_intensity, nominal_runtimes, priority_key
from ddl_gym.sim.model import ConfigError

SERVER_FEATURES = ("free_fraction", "split_jobs", "claimed")
JOB_FEATURES = ("present", "gpus", "workers_left", "est_runtime", "comm_intensity", "waited",
                "fits_one_server", "servers_claimed")
GLOBAL_FEATURES = ("queue_length", "running_jobs", "free_fraction", "finished_fraction",
                   "arrivals_left_fraction", "sim_time", "mean_split_contention")


class DDLPlacementEnv(SimulatorEnv):
    """Place the workers of distributed deep-learning jobs, one GPU at a time.

    ## Description

    Same cluster, jobs and performance model as ``DDLCluster-v0`` (gang-scheduled,
    non-preemptive ring-all-reduce jobs; a job spread over several servers is slowed by NIC
    contention, SJF-BCO §4.1 eqs. 6–8). Here the *order* in which queued jobs start is fixed by a
    rule (``order``: SRSF by default, greedy: the first job in that order whose ``G_j`` fits the
    free GPUs); the agent builds that job's placement worker by worker, choosing a server for each
    of its ``G_j`` workers (Harmony-style placement). Once all ``G_j`` are placed the job starts and
    the next fitting job in the order becomes current; if none fits, time runs on by itself.

    ## Action Space

    ``Discrete(R + 1)`` with ``R = S`` servers (or ``R = max_servers``, see below):

    | action | meaning                                                                     |
    |--------|-----------------------------------------------------------------------------|
    | s < R  | put one more worker of the current job on server ``s``                       |
    | R      | wait: drop the partial placement, let time run to the next event            |

    Masks (:meth:`action_masks`, np.int8, and ``info["action_mask"]``; through wrappers
    ``env.unwrapped.action_masks()`` or ``env.get_wrapper_attr("action_masks")()``): server ``s``
    is valid iff it exists and has a free GPU not yet claimed by the current job's partial placement
    (the current job is chosen only when it fits, so every partial placement can be completed);
    "wait" is valid iff ``allow_wait`` and something is running or jobs are still to arrive.
    **Invalid actions** (masked or out-of-range integers) never raise: with
    ``invalid_action="wait"`` (default) the env waits instead, or, when waiting is invalid, places
    on the first valid server; the step costs ``invalid_action_penalty`` (0.05) and sets
    ``info["invalid_action"]``; ``info["executed_action"]`` says what ran. Every step thus claims
    a worker or lets an event happen, so episodes end whatever the agent does.
    ``invalid_action="noop"`` keeps the first release's no-op. Non-integer actions raise
    :class:`~ddl_gym.envs.base.InvalidActionError` (as ``DDLCluster-v0``).

    ## Observation Space

    A flat ``Box(0, 1, (3·S + 8 + 7,), float32)``; the server blocks are feature-major (every
    server's ``free_fraction``, then every server's ``split_jobs``, ...). With ``max_servers=R``
    (padded layout, ``4·R + 8 + 7`` values) each server block has ``R`` entries, servers beyond the
    episode's ``S`` are all zeros with ``present = 0`` and masked, and the scenario may draw any
    cluster of at most ``R`` servers per episode: one agent then runs on clusters of every size up
    to ``R`` (the server actions are per server, so a bound is unavoidable here).

    | block       | feature              | meaning / normalisation                                   |
    |-------------|----------------------|-----------------------------------------------------------|
    | per server  | free_fraction        | free GPUs (not counting this job's claims) / server GPUs  |
    |             | split_jobs           | running spread jobs on it (p_s) / server GPUs              |
    |             | claimed              | workers of the current job placed on it / server GPUs      |
    |             | present              | (padded layout only) 1 for servers of this episode         |
    | current job | present              | 1 if a job is being placed                                 |
    |             | gpus                 | log2(1+G_j) / log2(1+GPUs in cluster)                      |
    |             | workers_left         | workers still to place / G_j                               |
    |             | est_runtime          | log1p(F_j·τ̂_j) / log1p(1e6 s)                              |
    |             | comm_intensity       | r/(1+r), r = 2·m_j/b_e ÷ compute time per iteration        |
    |             | waited               | log1p(now − arrival) / log1p(1e6 s)                        |
    |             | fits_one_server      | 1 if some server alone has G_j free GPUs                   |
    |             | servers_claimed      | servers used so far by the partial placement / S           |
    | global      | queue_length         | log1p(queued) / log1p(1000)                                |
    |             | running_jobs         | log1p(running) / log1p(GPUs in cluster)                    |
    |             | free_fraction        | free GPUs / GPUs in cluster                                |
    |             | finished_fraction    | finished jobs / jobs in the episode                        |
    |             | arrivals_left_fraction | jobs not yet arrived / jobs in the episode               |
    |             | sim_time             | log1p(now − first arrival) / log1p(1e7 s)                  |
    |             | mean_split_contention| mean p_j of running spread jobs / largest server           |

    ## Rewards

    As ``DDLCluster-v0``: ``reward="jct"`` gives ``−Δt · (jobs in system) · reward_scale`` per step,
    so with no invalid actions the undiscounted return is exactly ``−(Σ_j JCT_j) · reward_scale``
    (each invalid action adds ``−invalid_action_penalty``); ``"makespan"`` gives
    ``−Δt · scale`` while jobs remain; ``"weighted_jct"`` weights jobs. Placing a worker takes no
    simulated time (reward 0) unless it completes a placement and time then runs on.

    ## Starting State

    ``reset(seed)`` draws cluster and workload from the scenario with ``np_random`` (the same
    episode as ``scenario.episode(seed)``), then runs time to the first job that fits.
    ``options={"workload": Workload | path.csv}`` replaces the sampled jobs.

    ## Episode End

    Terminated when every job has finished (``info["metrics"]`` holds the summary). Truncated at
    the decision limit: ``max_decisions="auto"`` (default) is twice the most steps any episode can
    take when invalid actions wait (``2·(2N·max G_j + Σ G_j) + 64``), an integer sets it, ``None``
    removes it.

    ## Info

    ``action_mask``, ``invalid_action``, ``executed_action`` (−1 on reset and for a "noop"),
    ``sim_time``, ``current_job`` (−1 if none), ``workers_left``, ``queue_length``,
    ``running_jobs``, ``finished_jobs``; ``metrics`` on the last step.

    ## Arguments

    ``scenario`` (name, file or :class:`Scenario`), ``order`` (``"srsf"``, ``"sjf"``, ``"fifo"``;
    FIFO keeps head-of-line blocking), ``reward``, ``reward_scale`` (1/3600), ``allow_wait``
    (True), ``max_servers`` (None: the scenario's server count, fixed), ``invalid_action``
    (``"wait"``), ``invalid_action_penalty`` (0.05), ``max_decisions`` (``"auto"``),
    ``render_mode`` (``"ansi"``), ``debug`` (simulator invariant checks).

    ## Version History

    * v0 (revised): invalid actions wait (``invalid_action="noop"`` keeps the first behaviour),
      ``max_decisions="auto"``, padded layout ``max_servers``, ``info["executed_action"]``, named
      errors for non-integer actions and bad reset options. Trajectories under valid actions and
      the default observation are unchanged.
    * v0: initial version.
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 4}

    def __init__(
        self,
        scenario: str | Scenario = "default",
        *,
        order: str = "srsf",
        reward: str = "jct",
        reward_scale: float = 1.0 / 3600.0,
        allow_wait: bool = True,
        max_servers: int | None = None,
        invalid_action: str = "wait",
        invalid_action_penalty: float = 0.05,
        max_decisions: int | str | None = "auto",
        render_mode: str | None = None,
        debug: bool = False,
    ) -> None:
        self._setup_common(scenario, reward=reward, reward_scale=reward_scale, render_mode=render_mode,
                           invalid_action=invalid_action, invalid_action_penalty=invalid_action_penalty,
                           max_decisions=max_decisions, debug=debug)
        if order not in ("srsf", "sjf", "fifo"):
            raise ConfigError(f"order must be 'srsf', 'sjf' or 'fifo', got {order!r}")
        self.order = order
        self.allow_wait = bool(allow_wait)
        if max_servers is not None and (isinstance(max_servers, bool) or not isinstance(max_servers, (int, np.integer))
                                        or max_servers < self.num_servers):
            raise ConfigError(f"max_servers must be an integer >= the scenario's {self.num_servers} servers, "
                              f"got {max_servers!r}")
        if max_servers is not None:
            from ddl_gym.bounds import check_int

            check_int(max_servers, self.num_servers, 100_000, "max_servers")  # observation/action sizes grow with it
        self.max_servers = None if max_servers is None else int(max_servers)
        self._size_free_observation = self.max_servers is not None
        slots = self.max_servers or self.num_servers  # server rows in the observation, server actions
        self._server_features = SERVER_FEATURES + (("present",) if self.max_servers is not None else ())
        n_obs = len(self._server_features) * slots + len(JOB_FEATURES) + len(GLOBAL_FEATURES)
        self.observation_space = spaces.Box(0.0, 1.0, shape=(n_obs,), dtype=np.float32)
        self.action_space = DiscreteActions(slots + 1)
        self.wait_action = slots
        if self.max_servers is None:
            self.observation_layout: dict[str, Any] = {
                "servers": self.num_servers, "server_features": SERVER_FEATURES, "job_features": JOB_FEATURES,
                "global_features": GLOBAL_FEATURES}
        else:
            self.observation_layout = {
                "observation": "padded", "max_servers": slots, "server_features": self._server_features,
                "job_features": JOB_FEATURES, "global_features": GLOBAL_FEATURES}
        self.current_job: int | None = None
        self._claimed = np.zeros(self.num_servers, dtype=np.int64)
        self._executed = -1

    # ------------------------------------------------------------------ gym API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        self._start_episode(seed, options)
        self._prepare_episode()
        self._next_job_or_advance()
        return self._observe(), self._info(invalid=False)

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if self.sim is None:
            raise gym.error.ResetNeeded("call reset() before step()")
        sim = self.sim
        if type(action) is not int:
            action = action_index(action, int(self.action_space.n), "DDLClusterPlacement")
        before = self._objective_area()
        mask = self.action_masks()
        invalid = bool(not (0 <= action < mask.size) or mask[action] == 0)
        if invalid:
            # "wait": wait if that is valid, else the first valid server; "noop": nothing happens.
            if self.invalid_action == "noop":
                action = -1
            else:
                action = self.wait_action if mask[self.wait_action] else int(np.flatnonzero(mask)[0])
        self._executed = action
        if action >= 0 and not sim.done:
            if action == self.wait_action:
                self._drop_claim()
                sim.advance()
                self._next_job_or_advance()
            else:
                self._claimed[action] += 1
                job = self.current_job
                assert job is not None
                if int(self._claimed.sum()) == self._gpus[job]:
                    ids = np.concatenate([sim.free_gpu_ids(s)[:k] for s, k in enumerate(self._claimed.tolist()) if k])
                    self._drop_claim()
                    sim.start(job, ids)
                    self._next_job_or_advance()
        return self._finish_step(before, invalid)

    def action_masks(self) -> np.ndarray:
        """Valid actions as np.int8 0/1 (at least one is always 1)."""
        mask = np.zeros(self.action_space.n, dtype=np.int8)
        sim = self.sim
        if sim is None or sim.done:
            mask[self.wait_action] = 1
            return mask
        if self.current_job is not None:
            mask[: self.num_servers] = (sim.free_per_server - self._claimed) > 0
        if (self.allow_wait and (sim.running or sim.has_future_arrivals)) or not mask.any():
            mask[self.wait_action] = 1
        return mask

    @property
    def claimed(self) -> np.ndarray:
        """Workers of the current job placed so far, per server (a copy)."""
        return self._claimed.copy()

    def render(self) -> str | None:
        if self.render_mode is None or self.sim is None:
            return None
        sim = self.sim
        lines = [f"t={sim.now:10.1f}s  queued={len(sim.queue)}  running={len(sim.running)}  "
                 f"done={sim.num_finished}/{sim.workload.num_jobs}  free GPUs={sim.num_free}/{sim.cluster.num_gpus}"]
        if self.current_job is not None:
            j = self.current_job
            lines.append(f"placing job {int(sim.workload.job_id[j])} (G={self._gpus[j]}), "
                         f"{self._gpus[j] - int(self._claimed.sum())} workers left")
        row = []
        for s in range(self.num_servers):
            total = int(sim.server_gpus[s])
            free = int(sim.free_per_server[s])
            claim = int(self._claimed[s])
            row.append(f"S{s:02d}[{'#' * (total - free)}{'+' * claim}{'.' * (free - claim)}]p{int(sim.split_count[s])}")
        for i in range(0, len(row), 4):
            lines.append("  ".join(row[i : i + 4]))
        return "\n".join(lines) + "\n"

    def _fork_state(self, twin: DDLPlacementEnv) -> None:
        twin._claimed = self._claimed.copy()

    def _auto_decision_limit(self) -> int:
        # Each step claims a worker (<= G_j per job and event, a wait drops the claims) or lets an
        # event happen (<= 2N): at most 2N·max G + Σ G when invalid actions wait; twice that.
        w = self.sim.workload  # type: ignore[union-attr]
        if not w.num_jobs:
            return 64
        return 2 * (2 * w.num_jobs * int(w.gpus.max()) + int(w.gpus.sum())) + 64

    # ------------------------------------------------------------------ internals
    def _prepare_episode(self) -> None:
        sim = self.sim
        assert sim is not None
        w = sim.workload
        cluster = sim.cluster
        if self.max_servers is not None and cluster.num_servers > self.max_servers:
            raise ConfigError(f"scenario {self.scenario.name!r} drew {cluster.num_servers} servers, more than "
                              f"max_servers={self.max_servers}")
        self._gpus: list[int] = w.gpus.tolist()
        runtime = nominal_runtimes(sim)
        key = priority_key(sim, self.order, runtime)  # the same keys as ClassicPolicy
        self._order_key: list[float] | None = None if key is None else key.tolist()
        self._job_static = np.stack([
            np.log2(1.0 + w.gpus) / math.log2(1.0 + cluster.num_gpus),
            np.log1p(runtime) / math.log1p(_WORK_MAX_S),
            comm_intensity(w, cluster),
        ], axis=1)
        self._arrival = w.arrival
        self._server_gpus = sim.server_gpus.astype(np.float64)
        self._max_server = float(cluster.max_server_gpus)
        self._claimed = np.zeros(self.num_servers, dtype=np.int64)
        self.current_job = None
        self._executed = -1

    def _drop_claim(self) -> None:
        self._claimed[:] = 0

    def _pick_job(self) -> int | None:
        """The first queued job in the order rule that fits the free GPUs (FIFO: the head only)."""
        sim = self.sim
        assert sim is not None
        if not sim.queue:
            return None
        if self._order_key is None:
            head = sim.queue[0]
            return head if self._gpus[head] <= sim.num_free else None
        key = self._order_key
        free = sim.num_free
        best: int | None = None
        for j in sim.queue:
            if self._gpus[j] <= free and (best is None or (key[j], j) < (key[best], best)):
                best = j
        return best

    def _next_job_or_advance(self) -> None:
        """Make the next fitting job current; let time run while none fits."""
        sim = self.sim
        assert sim is not None
        while True:
            self.current_job = None if sim.done else self._pick_job()
            if self.current_job is not None or sim.done:
                return
            if not sim.advance():
                return

    def _observe(self) -> np.ndarray:
        sim = self.sim
        assert sim is not None
        S = self.num_servers
        R = self.wait_action  # server rows: S, or max_servers with absent servers all zeros
        obs = np.zeros(self.observation_space.shape, dtype=np.float64)
        obs[0:S] = (sim.free_per_server - self._claimed) / self._server_gpus
        obs[R : R + S] = sim.split_count / self._server_gpus
        obs[2 * R : 2 * R + S] = self._claimed / self._server_gpus
        if self.max_servers is not None:
            obs[3 * R : 3 * R + S] = 1.0  # present
        base = len(self._server_features) * R
        job = self.current_job
        if job is not None:
            g = self._gpus[job]
            obs[base + 0] = 1.0
            obs[base + 1] = self._job_static[job, 0]
            obs[base + 2] = (g - int(self._claimed.sum())) / g
            obs[base + 3] = self._job_static[job, 1]
            obs[base + 4] = self._job_static[job, 2]
            obs[base + 5] = math.log1p(max(0.0, sim.now - self._arrival[job])) / math.log1p(_WAIT_MAX_S)
            obs[base + 6] = float(g <= sim.free_per_server.max())
            obs[base + 7] = np.count_nonzero(self._claimed) / S
        gbase = base + len(JOB_FEATURES)
        n_jobs = max(1, sim.workload.num_jobs)
        split = [sim.contention[j] for j in sim.running if len(sim.servers[j]) > 1]
        obs[gbase + 0] = math.log1p(len(sim.queue)) / math.log1p(_QUEUE_MAX)
        obs[gbase + 1] = math.log1p(len(sim.running)) / math.log1p(sim.cluster.num_gpus)
        obs[gbase + 2] = sim.num_free / sim.cluster.num_gpus
        obs[gbase + 3] = sim.num_finished / n_jobs
        obs[gbase + 4] = (sim.workload.num_jobs - sim.num_arrived) / n_jobs
        elapsed = sim.now - (self._arrival[0] if sim.workload.num_jobs else 0.0)
        obs[gbase + 5] = math.log1p(max(0.0, elapsed)) / math.log1p(_TIME_MAX_S)
        obs[gbase + 6] = (sum(split) / len(split) / self._max_server) if split else 0.0
        return np.clip(obs, 0.0, 1.0).astype(np.float32)

    def _info(self, invalid: bool) -> dict[str, Any]:
        sim = self.sim
        assert sim is not None
        job = self.current_job
        return {
            "action_mask": self.action_masks(),
            "invalid_action": invalid,
            "executed_action": self._executed,
            "sim_time": float(sim.now),
            "current_job": -1 if job is None else int(job),
            "workers_left": 0 if job is None else self._gpus[job] - int(self._claimed.sum()),
            "queue_length": len(sim.queue),
            "running_jobs": len(sim.running),
            "finished_jobs": sim.num_finished,
        }


# ---------------------------------------------------------------------------- reference heuristics
def pack_worker_action(env: DDLPlacementEnv) -> int:
    """Worker-by-worker equivalent of the ``pack`` rule (:func:`ddl_gym.placement.pack`).

    First worker: the fullest server that fits the whole job (best fit, lowest index on ties),
    else the server with the most free GPUs. Later workers: the same server while it has an
    unclaimed free GPU, then the server with the most unclaimed free GPUs (lowest index on ties).
    The GPUs taken per server are the lowest free ids, as in ``pack``, so an episode reproduces the
    native ``order+pack`` policy exactly. Returns "wait" if no job is being placed.
    """
    sim = env.sim
    job = env.current_job
    if sim is None or job is None:
        return env.wait_action
    claimed = env._claimed
    left = sim.free_per_server - claimed
    if not claimed.any():
        need = env._gpus[job]
        fits = np.flatnonzero(sim.free_per_server >= need)
        if fits.size:
            return int(fits[np.argmin(sim.free_per_server[fits])])
        return int(np.argmax(left))
    # Continue on the server being filled (pack takes whole servers, emptiest first).
    partial = np.flatnonzero((claimed > 0) & (left > 0))
    if partial.size:
        return int(partial[0])
    return int(np.argmax(left))


def random_worker_action(env: DDLPlacementEnv, rng: np.random.Generator) -> int:
    """A uniformly random valid server (never "wait" while a job is being placed)."""
    mask = env.action_masks()
    servers = np.flatnonzero(mask[: env.num_servers])
    if servers.size == 0:
        return env.wait_action
    return int(rng.choice(servers))


__all__ = ["DDLPlacementEnv", "pack_worker_action", "random_worker_action"]
