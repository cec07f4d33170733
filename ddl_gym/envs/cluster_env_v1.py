"""``DDLCluster-v1``: the v0 decision problem with an observation and a contract fit for learning.

v1 keeps v0's simulator, actions, masks and episode end, and changes what learning depends on
(Gymnasium's rule: dynamics or observations that change learning results get a new version; every
``-v0`` id stays as it was):

* **Running jobs in the observation.** v0 shows the queue and the free GPUs but nothing of the jobs
  that hold the rest, although *when* GPUs free up decides whether waiting pays. v1 appends a
  size-independent block (:data:`RUNNING_GLOBAL_FEATURES`, then :data:`RUNNING_SLOT_FEATURES` for the
  ``running_slots`` running jobs that finish first).
* **Non-clairvoyant mode** (``clairvoyant=False``): the agent sees attained service and job features
  (GPUs, model's communication intensity) but no remaining work: the queue's ``est_runtime`` column
  and every remaining-time feature read 0 and the window is in arrival order (``queue_order="fifo"``,
  the default) or in ``"gpu-step"`` order (fewest GPU-seconds per training step first: it reads no
  iteration count, and with FIFO the 8-slot window shows only the oldest jobs while the queue is longer
  than that at more than 80% of the decisions of ``pollux-nc-25g`` under ``fifo+ca``, tested).
* **Arrival pools** (``arrival_pool=n`` or a seed list): every episode draws its input from a fixed
  pool of episode seeds, so several rollouts share one arrival sequence (the input-driven baseline of
  Decima, Mao et al. SIGCOMM'19); ``info["episode_seed"]`` names the input.
* **Discounting.** Rewards are costs over *time* (``−Δt · jobs in system``), and steps are decisions of
  uneven length. A per-decision discount γ < 1 would make each extra "advance" shrink every later cost,
  so idling pays. The v1 contract is γ = 1 (the return is ``−Σ JCT``); a trainer that needs
  discounting must use a time-based factor e^{−β·Δt} (``info["dt"]`` is the step's simulated
  seconds), never a per-decision one. The presets in ``agents/presets/v1-*.yaml`` use γ = 1.

* **Preemption** (``preemption=True``; off by default, so every registered id keeps v0's
  actions): the best non-clairvoyant references (Tiresias's 2D-LAS, the 2D-Gittins index) preempt,
  so an agent without that action cannot express them. With it on:

  - **Actions** ``Discrete(1 + K·P + R)``: the v0 actions, then ``1 + K·P + r`` = preempt the
    job in running slot ``r`` (the running-slot order of the observation; ``R = running_slots``).
    The job goes back to the queue with its progress and its attained service kept, and pays
    ``preempt_overhead_s`` (default 10 s, the Gittins/LAS references' restart cost) as extra
    iterations when it next starts. A preempt is valid iff the slot holds a job that has held its
    GPUs since before now: a job started at this instant cannot be preempted, so no decision loops.
  - **Decision points**: besides the v0 ones, every event (arrival, completion) and every tick of
    ``quantum_s`` simulated seconds (default 300; the grid starts at the first arrival) at which some
    job waits and some running job is preemptable, because attained service changes between events
    (a Gittins index re-ranks at its own times, which the env cannot know; the tick is the stated
    substitute: the Gittins reference acting through these actions, ``ddl_gym.agents.attained_expert``,
    matches the native one, tested). The mask offers the first ``R`` running slots only, so with more
    running jobs such a decision may leave just "advance".
  - **Observation**: the running slots' ``attained`` is the job's attained service (seconds run over
    all its holdings) instead of the time since its first start, and a block of ``K`` values follows:
    ``queue_attained``, log1p(attained service of the job in queue slot ``w``, s) / log1p(1e6 s), 0 for
    a job that never ran.
  - **Episode end**: ``max_decisions="auto"`` allows ``50·N + 1000`` decisions (ticks and preemptions
    add decisions that v0's ``6·N + 64`` does not count).

The reference-relative reward (each step's cost minus a reference policy's over the same interval on
the same input) needs a reference policy, so it lives one layer up, in
:class:`ddl_gym.wrappers.ReferenceRelativeReward`; the registered ``DDLCluster-<Task>-v1`` ids build
this env and, with ``reference=...``, that wrapper (:func:`ddl_gym.wrappers.make_v1_env`).

## Observation (v1)

The v0 ``"portable"`` observation (see :class:`~ddl_gym.envs.cluster_env.DDLClusterEnv`), followed by

| block | feature | meaning / normalisation |
|---|---|---|
| running (13) | free_within_5m, _15m, _1h, _4h | (free GPUs + GPUs of running jobs estimated to finish within h) / GPUs; non-clairvoyant: free GPUs / GPUs |
| | wait_for_1, _2, _4, _8 | log1p(estimated s until some server has ≥ g free GPUs) / log1p(1e6 s) (0: now; 1: never); non-clairvoyant: 0 |
| | servers_split_0, _1, _2, _3plus | servers with 0, 1, 2, ≥ 3 spread jobs / servers |
| | running_spread | running jobs spread over ≥ 2 servers / running jobs |
| running slots (R × 7, slot-major) | present | 1 if a running job occupies the slot |
| | gpus | log2(G_j) / 6 |
| | est_remaining | log1p(remaining iterations · current τ_j) / log1p(1e6 s); non-clairvoyant: 0 |
| | attained | log1p(now − start_j) / log1p(1e6 s) |
| | spread | 1 if the job spans ≥ 2 servers |
| | contention | p_j / GPUs of the largest server (SJF-BCO eq. 6) |
| | slowdown | min(1, τ_j / τ̂_j − 1): current iteration time over the uncontended consolidated one |

Slots hold the running jobs in order of estimated finish (clairvoyant) or of start (non-clairvoyant,
oldest first); empty slots are zeros. All values lie in [0, 1].
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from ddl_gym.envs.base import DiscreteActions, check_reset_options
from ddl_gym.envs.cluster_env import PORTABLE_CLUSTER_FEATURES, PORTABLE_JOB_FEATURES, DDLClusterEnv
from ddl_gym.scenarios import Scenario
from ddl_gym.sim.engine import Simulator
from ddl_gym.sim.model import ConfigError
from ddl_gym.sim.priority import NONCLAIRVOYANT_ORDERS

_HORIZONS_S = (300.0, 900.0, 3600.0, 14400.0)
_WAIT_LEVELS = (1, 2, 4, 8)
_LOG_MAX = math.log1p(1e6)
RUNNING_GLOBAL_FEATURES = (
    "free_within_5m", "free_within_15m", "free_within_1h", "free_within_4h",
    "wait_for_1", "wait_for_2", "wait_for_4", "wait_for_8",
    "servers_split_0", "servers_split_1", "servers_split_2", "servers_split_3plus",
    "running_spread",
)
RUNNING_SLOT_FEATURES = ("present", "gpus", "est_remaining", "attained", "spread", "contention", "slowdown")
#: the queue's ``est_runtime`` column inside the portable slot block (hidden when non-clairvoyant)
_EST_RUNTIME = PORTABLE_JOB_FEATURES.index("est_runtime")
_MAX_POOL = 1_000_000


class DDLClusterEnvV1(DDLClusterEnv):
    """``DDLCluster-v1``: v0's decisions with running jobs observed, an optional non-clairvoyant view,
    arrival pools and γ = 1. See the module docstring for what changed and the observation table;
    actions, masks, invalid actions, rewards and episode end are those of
    :class:`~ddl_gym.envs.cluster_env.DDLClusterEnv` (``reward="jct"``: return = −Σ JCT · scale).

    Args (beyond v0's, which are all accepted except ``observation``, fixed to the portable layout):
        clairvoyant: whether the agent may see remaining work (default True).
        running_slots: R, running jobs listed individually (default 8).
        arrival_pool: ``None`` (a fresh input every episode, as v0), an int n (episode seeds 0..n−1)
            or a sequence of episode seeds; each reset draws one with the env's generator.
        preemption: add the preempt actions, their decision points and the attained-service block
            (module docstring; default False).
        quantum_s: with ``preemption``, simulated seconds between preemption ticks (default 300).
        preempt_overhead_s: with ``preemption``, restart cost of a preempted job in seconds (default 10).
    """

    def __init__(self, scenario: str | Scenario = "default", *, clairvoyant: bool = True, running_slots: int = 8,
                 arrival_pool: int | Sequence[int] | None = None, queue_order: str | None = None,
                 preemption: bool = False, quantum_s: float | None = None, preempt_overhead_s: float | None = None,
                 **kwargs: Any) -> None:
        if "observation" in kwargs and kwargs["observation"] != "portable":
            raise ConfigError("DDLCluster-v1 builds on the portable observation; observation= cannot be changed")
        if not isinstance(clairvoyant, (bool, np.bool_)):
            raise ConfigError(f"clairvoyant must be True or False, got {clairvoyant!r}")
        if queue_order is None:
            queue_order = "srsf" if clairvoyant else "fifo"
        elif not clairvoyant and queue_order not in NONCLAIRVOYANT_ORDERS:
            raise ConfigError(f"queue_order={queue_order!r} ranks jobs by their remaining work, which a "
                              f"non-clairvoyant env hides; use one of {', '.join(map(repr, NONCLAIRVOYANT_ORDERS))}")
        if isinstance(running_slots, bool) or not isinstance(running_slots, (int, np.integer)) \
                or not 0 <= running_slots <= 256:
            raise ConfigError(f"running_slots must be an integer in 0..256, got {running_slots!r}")
        super().__init__(scenario, queue_order=queue_order, observation="portable", **kwargs)
        self.observation = "v1"  # the portable layout plus the running-jobs block (the agent loader checks it)
        self.clairvoyant = bool(clairvoyant)
        self.running_slots = int(running_slots)
        self.arrival_pool = _pool_seeds(arrival_pool)
        self._base_size = self._observation_size
        n_obs = self._base_size + len(RUNNING_GLOBAL_FEATURES) + len(RUNNING_SLOT_FEATURES) * self.running_slots
        self.observation_space = spaces.Box(0.0, 1.0, shape=(n_obs,), dtype=np.float32)
        self.observation_layout = dict(self.observation_layout, observation="v1", clairvoyant=self.clairvoyant,
                                       running_global_features=RUNNING_GLOBAL_FEATURES,
                                       running_slot_features=RUNNING_SLOT_FEATURES, running_slots=self.running_slots)
        n_cluster, n_job = len(PORTABLE_CLUSTER_FEATURES), len(PORTABLE_JOB_FEATURES)
        self._hidden_columns = ([] if self.clairvoyant else
                                [n_cluster + w * n_job + _EST_RUNTIME for w in range(self.max_window)])
        self.episode_seed: int | None = None
        self._gpu_server: list[int] = []
        self._setup_preemption(preemption, quantum_s, preempt_overhead_s)

    def _setup_preemption(self, preemption: Any, quantum_s: Any, overhead_s: Any) -> None:
        if not isinstance(preemption, (bool, np.bool_)):
            raise ConfigError(f"preemption must be True or False, got {preemption!r}")
        self.preemption = bool(preemption)
        self.quantum_s = self.preempt_overhead_s = math.nan
        self._tick_at = -math.inf
        if not self.preemption:
            for name, value in (("quantum_s", quantum_s), ("preempt_overhead_s", overhead_s)):
                if value is not None:
                    raise ConfigError(f"{name} applies only with preemption=True (got {name}={value!r} without it)")
            return
        for name, value, default, low in (("quantum_s", quantum_s, 300.0, 0.0),
                                          ("preempt_overhead_s", overhead_s, 10.0, -1.0)):
            value = default if value is None else value
            if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
                    or not math.isfinite(value) or not value > low:
                raise ConfigError(f"{name} must be a finite number {'> 0' if low == 0.0 else '>= 0'} (seconds), "
                                  f"got {value!r}")
            setattr(self, name, float(value))
        if self.running_slots < 1:
            raise ConfigError("preemption=True needs running_slots >= 1 (the preempt actions name running slots)")
        self._preemptive = True
        self._first_preempt = self._n_actions
        self._n_actions += self.running_slots
        self.action_space = DiscreteActions(self._n_actions)
        n_obs = self.observation_space.shape[0] + self.max_window
        self.observation_space = spaces.Box(0.0, 1.0, shape=(n_obs,), dtype=np.float32)
        self.observation_layout = dict(self.observation_layout, preemption=True, quantum_s=self.quantum_s,
                                       preempt_overhead_s=self.preempt_overhead_s,
                                       queue_slot_features=("queue_attained",))

    # ------------------------------------------------------------------ episode input
    def _start_episode(self, seed: int | None, options: Any) -> Simulator:
        if self.arrival_pool is None:
            self.episode_seed = seed
            sim = super()._start_episode(seed, options)
        else:
            options = check_reset_options(options)
            if "workload" in options:
                raise ConfigError("reset(options={'workload': ...}) and arrival_pool exclude each other: the pool "
                                  "names the inputs")
            # Seed the env's generator as any reset does, then draw the episode's input from the pool.
            gym.Env.reset(self, seed=seed)
            k = int(self.arrival_pool[int(self.np_random.integers(len(self.arrival_pool)))])
            self.episode_seed = k
            cluster, workload = self.scenario.episode(k)
            if cluster.num_servers != self.num_servers:
                self.num_servers = cluster.num_servers
            self.sim = sim = Simulator(cluster, workload, self.scenario.model, debug=self.debug)
            self._steps = 0
            self._decision_limit = self._auto_decision_limit() if self.max_decisions == "auto" else self.max_decisions
        if self.preemption:
            sim.capabilities = frozenset({"preempt"})
            self._tick_at = -math.inf
        return sim

    def _auto_decision_limit(self) -> int:
        if self.preemption:
            return 50 * self.sim.workload.num_jobs + 1000  # type: ignore[union-attr]
        return super()._auto_decision_limit()

    def _begin_episode(self, seed: int | None, options: dict[str, Any] | None) -> None:
        super()._begin_episode(seed, options)
        self._gpu_server = self.sim.cluster.gpu_server().tolist()  # type: ignore[union-attr]

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        obs, info = super().reset(seed=seed, options=options)
        info["dt"] = 0.0
        return obs, info

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        before = self.sim.now if self.sim is not None else 0.0
        obs, reward, terminated, truncated, info = super().step(action)
        info["dt"] = self.sim.now - before  # type: ignore[union-attr]
        return obs, reward, terminated, truncated, info

    def _info(self, invalid: bool) -> dict[str, Any]:
        info = super()._info(invalid)
        info["episode_seed"] = self.episode_seed
        return info

    def step_into(self, *args: Any, **kwargs: Any) -> Any:  # the batched vector envs assume v0's layout
        raise NotImplementedError("DDLCluster-v1 runs in Gymnasium's or SB3's standard vector envs")

    reset_into = step_into

    # ------------------------------------------------------------------ preemption
    def running_slot_jobs(self) -> list[int]:
        """Job indices in running slots 0, 1, ... now (the observation's order; at most ``running_slots``)."""
        rows, _ = self._running_rows()
        return [row[-1] for row in rows[: self.running_slots]]

    def decode_action(self, action: int) -> Any:
        """As v0's, plus ``DecodedAction("preempt", slot, None, job)`` for the preempt actions (``slot``: the
        running slot, ``job``: the running job in it now, if any)."""
        from ddl_gym.envs.helpers import DecodedAction

        a = int(action)
        if not self.preemption or a < self._first_preempt:
            return super().decode_action(a)
        if a >= self._n_actions:
            raise ConfigError(f"action {action!r} is outside 0..{self._n_actions - 1}")
        slot = a - self._first_preempt
        jobs = self.running_slot_jobs() if self.sim is not None else []
        return DecodedAction("preempt", slot, None, int(jobs[slot]) if slot < len(jobs) else None)

    def _preemptable_slots(self, jobs: list[int] | None = None) -> list[int]:
        """Running slots whose job may be preempted now (``jobs``: :meth:`running_slot_jobs`, if at hand)."""
        sim = self.sim
        assert sim is not None
        if not sim.num_queued:
            return []
        now = sim.now
        jobs = self.running_slot_jobs() if jobs is None else jobs
        return [r for r, job in enumerate(jobs) if sim.running_since(job) < now]

    def _apply(self, action: int) -> bool:
        if not self.preemption:
            return super()._apply(action)
        sim = self.sim
        core = self._core
        assert sim is not None and core is not None
        if sim.running and self._tick_at <= sim.now:  # the next tick of the grid, for the next advance
            t0, q = self._t0, self.quantum_s
            k = math.floor((sim.now - t0) / q) + 1
            while t0 + k * q <= sim.now:  # rounding: a tick at now would be an advance that does not move
                k += 1
            self._tick_at = t0 + k * q
            sim.wake_at(self._tick_at)
        first = self._first_preempt
        if not first <= action < self._n_actions:
            return super()._apply(action)
        slot = action - first
        jobs = self.running_slot_jobs()
        if slot not in self._preemptable_slots(jobs):
            return super()._apply(self._n_actions)  # out of range: the invalid-action path (substitute or no-op)
        job = jobs[slot]
        self._executed = action
        sim.preempt(job, overhead_s=self.preempt_overhead_s)
        core.requeued(job)
        core.auto_advance(sim)
        return False

    def _mask_array(self) -> np.ndarray:
        mask = super()._mask_array()
        if not self.preemption or self.sim is None:
            return mask
        slots = self._preemptable_slots()
        if not slots:
            return mask
        mask = mask.copy()  # the v0 mask is cached per pattern
        for r in slots:
            mask[self._first_preempt + r] = 1
        return mask

    # ------------------------------------------------------------------ observation
    def _observe(self) -> np.ndarray:
        base = super()._observe()
        out = np.empty(self.observation_space.shape[0], dtype=np.float32)
        out[: self._base_size] = base
        if self._hidden_columns:
            out[self._hidden_columns] = 0.0
        block = self.running_block()
        end = self._base_size + block.size
        out[self._base_size: end] = block
        if self.preemption:
            out[end:] = self.queue_attained_block()
        return out

    def queue_attained_block(self) -> np.ndarray:
        """``queue_attained`` of the window's slots (``preemption=True``; see the module docstring)."""
        sim = self.sim
        assert sim is not None
        gpus = self._gpus
        block = np.zeros(self.max_window, dtype=np.float64)
        for w, job in enumerate(self._window):
            block[w] = min(1.0, math.log1p(sim.attained_gpu_seconds(job) / gpus[job]) / _LOG_MAX)
        return block

    def _running_rows(self) -> tuple[list[tuple[float, int, float, float, int, float, float, int]],
                                     dict[int, list[tuple[float, int]]]]:
        """Per running job ``(key, G, remaining s, attained s, spread, contention, slowdown, job)`` in slot
        order, and (clairvoyant) the estimated finish times and GPU counts per server."""
        sim = self.sim
        assert sim is not None
        now = sim.now
        clairvoyant = self.clairvoyant
        preemption = self.preemption
        gpus = self._gpus
        tau = sim.tau
        gpu_server = self._gpu_server
        rows: list[tuple[float, int, float, float, int, float, float, int]] = []
        finish_by_server: dict[int, list[tuple[float, int]]] = {}
        for job in sim.running:
            g = gpus[job]
            remaining_s = sim.remaining_iterations(job) * tau[job] if clairvoyant else 0.0
            attained = sim.attained_gpu_seconds(job) / g if preemption else now - sim.start_time[job]
            servers = sim.servers[job]
            spread = 1 if len(servers) > 1 else 0
            nominal = sim.nominal_iteration_time(job)
            slowdown = min(1.0, max(0.0, tau[job] / nominal - 1.0)) if nominal > 0 else 0.0
            key = remaining_s if clairvoyant else -attained
            rows.append((key, g, remaining_s, attained, spread, sim.contention[job] / self._max_server, slowdown, job))
            if clairvoyant:
                per_server: dict[int, int] = {}
                for gpu in sim.placement[job].tolist():
                    s = gpu_server[gpu]
                    per_server[s] = per_server.get(s, 0) + 1
                for s, c in per_server.items():
                    finish_by_server.setdefault(s, []).append((remaining_s, c))
        rows.sort()
        return rows, finish_by_server

    def running_block(self) -> np.ndarray:
        """The v1 running-jobs features of the current state (float64, see the module docstring)."""
        sim = self.sim
        assert sim is not None
        n_gpus = self._num_gpus
        clairvoyant = self.clairvoyant
        rows, finish_by_server = self._running_rows()
        free = sim.num_free
        block: list[float] = []
        for h in _HORIZONS_S:
            freed = sum(r[1] for r in rows if r[2] <= h) if clairvoyant else 0
            block.append((free + freed) / n_gpus)
        free_per_server = sim.free_per_server.tolist()
        for g in _WAIT_LEVELS:
            if not clairvoyant:
                block.append(0.0)
                continue
            best = math.inf
            for s, f in enumerate(free_per_server):
                if f >= g:
                    best = 0.0
                    break
                have = f
                for t, c in sorted(finish_by_server.get(s, ())):
                    have += c
                    if have >= g:
                        best = min(best, t)
                        break
            block.append(1.0 if best == math.inf else min(1.0, math.log1p(best) / _LOG_MAX))
        split = sim.split_count_list()
        n_servers = len(split) or 1
        hist = [0, 0, 0, 0]
        for p in split:
            hist[min(p, 3)] += 1
        block += [h / n_servers for h in hist]
        block.append(sum(r[4] for r in rows) / len(rows) if rows else 0.0)
        for key, g, remaining_s, attained, spread, contention, slowdown, _job in rows[: self.running_slots]:
            block += (1.0, min(1.0, math.log2(g) / 6.0), min(1.0, math.log1p(remaining_s) / _LOG_MAX),
                      min(1.0, math.log1p(max(0.0, attained)) / _LOG_MAX), float(spread), min(1.0, contention), slowdown)
        block += [0.0] * (len(RUNNING_SLOT_FEATURES) * (self.running_slots - min(len(rows), self.running_slots)))
        return np.clip(np.asarray(block, dtype=np.float64), 0.0, 1.0)


def _pool_seeds(pool: int | Sequence[int] | None) -> tuple[int, ...] | None:
    if pool is None:
        return None
    if isinstance(pool, (int, np.integer)) and not isinstance(pool, bool):
        if not 1 <= pool <= _MAX_POOL:
            raise ConfigError(f"arrival_pool must be between 1 and {_MAX_POOL:,} episode seeds, got {pool}")
        return tuple(range(int(pool)))
    try:
        seeds = tuple(int(s) for s in pool)  # type: ignore[union-attr]
    except (TypeError, ValueError):
        raise ConfigError(f"arrival_pool must be None, an int or a sequence of int seeds, got {pool!r}") from None
    if not seeds or len(seeds) > _MAX_POOL or any(s < 0 for s in seeds):
        raise ConfigError(f"arrival_pool must hold 1..{_MAX_POOL:,} non-negative seeds")
    return seeds


__all__ = ["DDLClusterEnvV1", "RUNNING_GLOBAL_FEATURES", "RUNNING_SLOT_FEATURES"]
