"""``DDLCluster-v0``: scheduling distributed training jobs on a shared GPU cluster.

The env is a thin adapter over :class:`ddl_gym.sim.engine.Simulator`: it turns the simulator's
decision points into ``step()`` calls and contains no simulation logic.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from ddl_gym.envs.base import DiscreteActions, SimulatorEnv, action_index
from ddl_gym.envs.core import _INV_LOG_QUEUE, _INV_LOG_TIME, _INV_LOG_WAIT, DecisionCore, PortableLayout, to_float32
from ddl_gym.envs.helpers import ActionObservationHelpers, label_frame
from ddl_gym.placement import DRAWLESS_RULES, PlacementRule, get_placement_rule
from ddl_gym.scenarios import Scenario
from ddl_gym.sim.model import ConfigError, Workload
from ddl_gym.sim.priority import ORDERS, comm_intensity, nominal_runtimes, priority_key, rank_by_key

# Normalisation constants (log-scaled heavy-tailed quantities saturate at these; the per-step ones,
# waited, queue length and simulated time, are defined with the core that uses them every step).
_WORK_MAX_S = 1e6  # seconds of estimated run time
# Portable layout: sizes saturate at these (a job of 64 GPUs, 64-GPU servers, 65,536-GPU clusters).
_LOG2_JOB_GPUS_MAX = 6.0
_LOG2_SERVER_GPUS_MAX = 6.0
_LOG2_CLUSTER_GPUS_MAX = 16.0
_LOG2_SERVERS_NEEDED_MAX = 4.0  # 16 servers
_FREE_LEVELS = (1, 2, 4, 8)  # "servers with at least g free GPUs", g in GPUs (not a fraction of the server)

OBSERVATIONS = ("portable", "legacy")

# Legacy layout (v0 as first released; the shipped agents were trained on it).
SERVER_FEATURES = ("free_fraction", "split_jobs", "size")
JOB_FEATURES = ("present", "gpus", "est_runtime", "waited", "comm_intensity", "fits_now", "fits_one_server")
GLOBAL_FEATURES = ("queue_length", "queue_overflow", "running_jobs", "free_fraction", "finished_fraction",
                   "arrivals_left_fraction", "sim_time", "mean_split_contention")
# Portable layout (default): no block depends on the server count.
PORTABLE_CLUSTER_FEATURES = ("servers_free_1", "servers_free_2", "servers_free_4", "servers_free_8", "servers_empty",
                             "most_free_server", "servers_split", "cluster_gpus", "server_gpus")
PORTABLE_JOB_FEATURES = ("present", "gpus", "cluster_share", "servers_needed", "est_runtime", "comm_intensity",
                         "waited", "free_share", "fits_now", "fits_one_server", "one_server_choices")
PORTABLE_GLOBAL_FEATURES = ("queue_length", "queue_overflow", "queued_demand", "running_jobs", "free_fraction",
                            "finished_fraction", "arrivals_left_fraction", "sim_time", "mean_split_contention")


#: Most queue slots (``window`` / ``max_window``): observation and action sizes grow linearly with them.
MAX_SLOTS = 4096


class DDLClusterEnv(ActionObservationHelpers, SimulatorEnv):
    """Schedule distributed deep-learning jobs on a multi-tenant GPU cluster.

    ## Description

    Jobs (data-parallel, ring-all-reduce) arrive over time and wait in a queue. Each needs ``G_j``
    GPUs at once (gang scheduling) and runs ``F_j`` iterations without preemption. A job spread
    over several servers communicates over their NICs and slows down every other spread job on
    those servers (ring-all-reduce contention, SJF-BCO §4.1 eqs. 6–8) and pays a per-server
    overhead; a job on one server uses the fast intra-server link. The agent decides which queued
    job to start next, how to place it, and when to wait. The default scenario has 16 servers × 4
    GPUs and 160 jobs (80×1, 14×2, 26×4, 30×8, 8×16, 2×32 GPUs; Table III models of Ada-SRSF)
    arriving over 80 minutes, freshly sampled each episode (see ``ddl-gym list`` for its NICs).

    ## Action Space

    ``Discrete(1 + K·P)`` with ``K = max_window`` queue slots (default: ``window``) and
    ``P = len(placements)`` rules:

    | action          | meaning                                                               |
    |-----------------|-----------------------------------------------------------------------|
    | 0               | advance: let simulated time run to the next event (arrival/completion)|
    | 1 + w·P + p     | start the job in queue slot ``w`` with placement rule ``placements[p]``|

    The queue window lists the first ``window`` queued jobs in ``queue_order`` (``"srsf"``:
    smallest ``F·G·τ̂`` first; ``"fifo"``: arrival order; ``"sjf"``: smallest ``F·τ̂``; ``"gpu-step"``:
    smallest ``G·τ̂``, no iteration count, the order a non-clairvoyant v1 env may use); slots
    ``window .. K−1`` (only when ``max_window > window``) stay empty. Slots are re-sorted every
    step: an action names "the job now in slot w", never a job id. Default rules: ``pack``
    (consolidate on the fullest server that fits, else fewest servers), ``spread`` (one GPU at a
    time on the least-loaded server) and ``contention_aware`` (one server if possible, else the
    servers with the fewest spread jobs).

    **Masks.** A start is valid iff the slot holds a job with ``G_j <=`` free GPUs; "advance" is
    valid unless it would wait forever (nothing running, no arrivals left). At least one action is
    always valid (also in the terminal state, where only 0 is). Read the mask as ``np.int8`` 0/1
    from ``info["action_mask"]`` or from :meth:`action_masks`. Through ``gym.make``'s wrappers use
    ``env.unwrapped.action_masks()`` or ``env.get_wrapper_attr("action_masks")()`` (Gymnasium 1.x
    wrappers do not forward attributes); in SB3 vector envs ``venv.env_method("action_masks")``
    (what MaskablePPO does), in Gymnasium vector envs ``envs.unwrapped.call("action_masks")``.

    **Invalid actions** (a masked action or an integer outside ``0 .. K·P``) never raise. With
    ``invalid_action="wait"`` (default) the env carries out "advance" instead, or, when advance
    is itself invalid, the first valid start (lowest slot, then lowest rule); either way the step
    costs ``invalid_action_penalty`` on top of its reward, ``info["invalid_action"]`` is ``True``
    and ``info["executed_action"]`` says what ran. Every step therefore starts a job or lets at
    least one event happen, so an episode of ``N`` jobs ends within ``3N`` steps whatever the
    agent does (an agent without masks, such as plain PPO, cannot stall it); the default penalty
    (0.05) makes the substitute slightly worse than choosing it directly, which keeps plain PPO
    from drifting onto invalid synonyms of "advance" (``scripts/ppo_unmasked_curve.py``). With
    ``invalid_action="noop"`` (v0 as first released) nothing happens and time does not move;
    only the decision limit then ends an episode that repeats an invalid action.
    Anything that is not an integer (``1.7``, ``"1"``, ``None``, ``nan``, ``True``, an array of
    shape ``(1,)``) raises :class:`~ddl_gym.envs.base.InvalidActionError` naming the action and
    the space; accepted types are those of Gymnasium's ``Discrete.contains`` (Python ints, NumPy
    integer scalars, 0-d integer arrays) minus bools.

    ## Observation Space

    A flat ``Box(0, 1, (n,), float32)`` in one of two layouts (``observation=``); the sizes are in
    ``env.observation_layout``. Blocks follow each other in the order of the tables. A
    *feature-major* block lists one feature for every item, then the next feature; a
    *slot-major* block lists all features of slot 0, then all of slot 1, and so on (row ``w``
    starts at ``offset + w·F``). Empty slots are all zeros.

    ``"portable"`` (default): ``9 + 11·K + 9`` values; no block depends on the server count, so
    one agent runs on clusters of any size, and on any ``window <= K``.

    | block (order)       | feature (per item)   | meaning / normalisation                               |
    |---------------------|----------------------|-------------------------------------------------------|
    | cluster (9)         | servers_free_g, g=1,2,4,8 | servers with >= g free GPUs / servers            |
    |                     | servers_empty        | servers with every GPU free / servers                 |
    |                     | most_free_server     | most free GPUs on one server / largest server          |
    |                     | servers_split        | servers hosting a spread job / servers                 |
    |                     | cluster_gpus         | log2(GPUs in cluster) / 16                             |
    |                     | server_gpus          | log2(GPUs of the largest server) / 6                   |
    | slots (K × 11, slot-major) | present       | 1 if a job occupies the slot                           |
    |                     | gpus                 | log2(G_j) / 6 (64 GPUs = 1)                            |
    |                     | cluster_share        | G_j / GPUs in cluster                                  |
    |                     | servers_needed       | log2(⌈G_j / largest server⌉) / 4                       |
    |                     | est_runtime          | log1p(F_j·τ̂_j) / log1p(1e6 s), τ̂ = uncontended, consolidated |
    |                     | comm_intensity       | r/(1+r), r = 2·m_j/b_e ÷ compute time per iteration    |
    |                     | waited               | log1p(now − arrival) / log1p(1e6 s)                    |
    |                     | free_share           | G_j / free GPUs (1 if it does not fit)                 |
    |                     | fits_now             | 1 if G_j <= free GPUs                                  |
    |                     | fits_one_server      | 1 if some server alone has G_j free GPUs               |
    |                     | one_server_choices   | servers that alone have G_j free GPUs / servers        |
    | global (9)          | queue_length         | log1p(queued) / log1p(1000)                            |
    |                     | queue_overflow       | log1p(queued beyond the window) / log1p(1000)          |
    |                     | queued_demand        | log2(1 + queued GPUs / GPUs in cluster) / 4            |
    |                     | running_jobs         | log1p(running) / log1p(GPUs in cluster)                |
    |                     | free_fraction        | free GPUs / GPUs in cluster                            |
    |                     | finished_fraction    | finished jobs / jobs in the episode                    |
    |                     | arrivals_left_fraction | jobs not yet arrived / jobs in the episode           |
    |                     | sim_time             | log1p(now − first arrival) / log1p(1e7 s)              |
    |                     | mean_split_contention| mean p_j of running spread jobs / largest server       |

    ``"legacy"``: ``3·S + 7·W + 8`` values for ``S`` servers (tied to the cluster size, so the
    scenario must keep its server count). The shipped agents were trained on it; their metadata
    records it and :func:`ddl_gym.agents.load_policy` selects it.

    | block (order)       | feature (per item)   | meaning / normalisation                               |
    |---------------------|----------------------|-------------------------------------------------------|
    | servers (S × 3, feature-major) | free_fraction | free GPUs / GPUs of the server                  |
    |                     | split_jobs           | spread jobs with workers on it / GPUs of the server (p_s) |
    |                     | size                 | GPUs of the server / largest server                   |
    | slots (W × 7, slot-major) | present        | 1 if a job occupies the slot                           |
    |                     | gpus                 | log2(1+G_j) / log2(1+GPUs in cluster)                  |
    |                     | est_runtime          | as above                                               |
    |                     | waited               | as above                                               |
    |                     | comm_intensity       | as above                                               |
    |                     | fits_now             | as above                                               |
    |                     | fits_one_server      | as above                                               |
    | global (8)          | queue_length, queue_overflow, running_jobs, free_fraction, finished_fraction, arrivals_left_fraction, sim_time, mean_split_contention | as above |

    Values are clipped to [0, 1].

    ## Rewards

    ``reward="jct"`` (default): ``−Δt · (jobs in system) · reward_scale`` per step, so with no
    invalid actions the undiscounted return is exactly ``−(Σ_j JCT_j) · reward_scale`` (each
    invalid action adds ``−invalid_action_penalty``). ``"makespan"``: ``−Δt · reward_scale``
    while jobs remain (return ``−makespan · scale``). ``"weighted_jct"``: ``−Δt · Σ weights in
    system · scale``. ``reward_scale`` defaults to 1/3600 (hours).

    ## Info

    Every ``reset`` and ``step``:

    | key              | type        | meaning                                                    |
    |------------------|-------------|------------------------------------------------------------|
    | action_mask      | np.int8 (n,)| valid actions now (a copy of :meth:`action_masks`)          |
    | invalid_action   | bool        | the action given to this step was invalid (False on reset)  |
    | executed_action  | int         | the action carried out (its substitute when invalid; −1 for a "noop"; −1 on reset) |
    | sim_time         | float       | simulated seconds now                                       |
    | queue_length     | int         | queued jobs (all, not just the window)                      |
    | running_jobs     | int         | running jobs                                                |
    | finished_jobs    | int         | finished jobs                                               |
    | window_jobs      | list[int]   | job indices in slots 0, 1, ... (workload row numbers)       |

    On the last step of an episode (terminated or truncated) ``info["metrics"]`` holds the
    harness's summary keys (``avg_jct_s``, ``makespan_s``, ...). No value is wall-clock.

    ## Starting State

    ``reset(seed)`` draws the cluster and workload from the scenario with the env's
    ``np_random`` (identical to ``scenario.episode(seed)`` used by the evaluation harness),
    puts the clock at the first arrival and advances to the first decision. ``options`` (a dict;
    unknown keys are refused by name): ``{"workload": Workload | path.csv}`` replaces the
    sampled jobs for this episode.

    ## Episode End

    Terminated when every job has finished. Truncated when the decision limit is reached:
    ``max_decisions="auto"`` (default) is ``6·N + 64`` for ``N`` jobs, twice what any episode can
    take with ``invalid_action="wait"``, so it only ends ``"noop"`` episodes stuck on invalid
    actions; an integer sets it, ``None`` removes it. Steps are decisions, not seconds: time only
    moves on "advance" (or by itself while no start is possible).

    ## Arguments

    ``scenario`` (name, file or :class:`Scenario`), ``window`` W (8), ``max_window`` K (``None``
    = ``window``; portable layout only), ``placements``, ``queue_order``, ``observation``
    (``"portable"`` or ``"legacy"``), ``reward``, ``reward_scale``, ``invalid_action``
    (``"wait"`` or ``"noop"``), ``invalid_action_penalty`` (0.05, in reward units: three job-minutes at
    the default scale), ``max_decisions``
    (``"auto"``), ``render_mode`` (``"ansi"`` or ``"rgb_array"``), ``debug`` (simulator
    invariant checks).

    ## Vector envs

    Gymnasium: ``gym.make_vec("ddl_gym:DDLCluster-v0", num_envs=n, vectorization_mode="async",
    vector_kwargs={"shared_memory": True})``, or :func:`ddl_gym.envs.vector.make_async_vec` for
    the tuned variant; SB3: ``make_vec_env("ddl_gym:DDLCluster-v0", n_envs=n,
    vec_env_cls=SubprocVecEnv)`` (call ``torch.set_num_threads(1)`` in the learner). The batched
    vector envs of :mod:`ddl_gym.envs.vector` (several envs per process, measured speeds there) step
    this env with :meth:`step_into`, which writes the observation and mask into shared rows.

    ## Version History

    * v0 (revised): portable observation layout as default (``observation="legacy"`` keeps the
      first layout), invalid actions wait instead of doing nothing (``invalid_action="noop"``
      keeps the first behaviour), ``max_decisions="auto"``, ``info["executed_action"]``,
      non-integer actions and unknown reset options raise clear errors. Trajectories under
      valid actions are unchanged.
    * v0: initial version.
    """

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}
    _size_free_observation = True  # set per instance from ``observation``

    def __init__(
        self,
        scenario: str | Scenario = "default",
        *,
        window: int = 8,
        max_window: int | None = None,
        placements: Sequence[str] = ("pack", "spread", "contention_aware"),
        queue_order: str = "srsf",
        observation: str = "portable",
        reward: str = "jct",
        reward_scale: float = 1.0 / 3600.0,
        invalid_action: str = "wait",
        invalid_action_penalty: float = 0.05,
        max_decisions: int | str | None = "auto",
        render_mode: str | None = None,
        debug: bool = False,
    ) -> None:
        self._setup_common(scenario, reward=reward, reward_scale=reward_scale, render_mode=render_mode,
                           invalid_action=invalid_action, invalid_action_penalty=invalid_action_penalty,
                           max_decisions=max_decisions, debug=debug)
        if isinstance(window, bool) or not isinstance(window, (int, np.integer)) or window < 1:
            raise ConfigError(f"window must be an integer >= 1, got {window!r}")
        if queue_order not in ORDERS:
            raise ConfigError(f"queue_order must be one of {', '.join(map(repr, ORDERS))}, got {queue_order!r}")
        if observation not in OBSERVATIONS:
            raise ConfigError(f"observation must be 'portable' or 'legacy', got {observation!r}")
        from ddl_gym.bounds import check_int

        check_int(window, 1, MAX_SLOTS, "window")
        slots = int(window) if max_window is None else max_window
        if isinstance(slots, bool) or not isinstance(slots, (int, np.integer)) or slots < window:
            raise ConfigError(f"max_window must be an integer >= window ({window}), got {max_window!r}")
        check_int(slots, int(window), MAX_SLOTS, "max_window")  # the observation and action sizes grow with it
        if observation == "legacy" and slots != window:
            raise ConfigError("max_window (padded slots) needs observation='portable'; the legacy layout has "
                              f"exactly window={window} slots")
        self.window = int(window)
        self.max_window = int(slots)
        self.placement_names = tuple(placements)
        if not self.placement_names:
            raise ConfigError("placements must name at least one placement rule")
        self._rules: tuple[PlacementRule, ...] = tuple(get_placement_rule(p) for p in self.placement_names)
        self.queue_order = queue_order
        self.observation = observation
        self._size_free_observation = observation == "portable"
        P = len(self._rules)
        if observation == "portable":
            n_obs = (len(PORTABLE_CLUSTER_FEATURES) + len(PORTABLE_JOB_FEATURES) * self.max_window
                     + len(PORTABLE_GLOBAL_FEATURES))
            self.observation_layout: dict[str, Any] = {
                "observation": "portable", "slots": self.max_window,
                "cluster_features": PORTABLE_CLUSTER_FEATURES, "job_features": PORTABLE_JOB_FEATURES,
                "global_features": PORTABLE_GLOBAL_FEATURES, "placements": self.placement_names,
            }
        else:
            n_obs = len(SERVER_FEATURES) * self.num_servers + len(JOB_FEATURES) * self.window + len(GLOBAL_FEATURES)
            # Exactly the keys the first release recorded in agent metadata (the compatibility check compares them).
            self.observation_layout = {
                "servers": self.num_servers, "server_features": SERVER_FEATURES, "window": self.window,
                "job_features": JOB_FEATURES, "global_features": GLOBAL_FEATURES, "placements": self.placement_names,
            }
        self.observation_space = spaces.Box(0.0, 1.0, shape=(n_obs,), dtype=np.float32)
        self._observation_size = n_obs
        self.action_space = DiscreteActions(1 + self.max_window * P)
        self._n_actions = 1 + self.max_window * P
        self._core: DecisionCore | None = None  # the window, mask bits and portable observation (reset builds it)
        self._mask_cache: dict[int, np.ndarray] = {}

    # ------------------------------------------------------------------ gym API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        self._begin_episode(seed, options)
        return self._observe(), self._info(invalid=False)

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        reward, terminated, truncated, invalid = self._transition(action)
        obs = self._observe()
        info = self._info(invalid)
        if terminated or truncated:
            info["metrics"] = self.sim.result().summary()  # type: ignore[union-attr]
        return obs, reward, terminated, truncated, info

    #: Whether the decision core also stops where a running job could be preempted (v1's ``preemption``).
    _preemptive = False

    #: The scalar ``info`` keys whose values :meth:`step_into` and :meth:`reset_into` return, in order.
    SCALAR_INFO_KEYS = ("invalid_action", "executed_action", "sim_time", "queue_length", "running_jobs", "finished_jobs")

    def step_into(self, action: int, obs_out: np.ndarray, mask_out: np.ndarray, row: int
                  ) -> tuple[float, bool, bool, tuple[Any, ...], dict[str, Any] | None]:
        """:meth:`step` for batched vector envs (:mod:`ddl_gym.envs.vector`): the same transition, with the
        observation written into ``obs_out[row]`` and the mask into ``mask_out[row]`` (C-contiguous 2-D
        arrays such as views on shared memory) instead of fresh arrays, and no info dict.

        Returns ``(reward, terminated, truncated, values, metrics)``: ``values`` of
        :attr:`SCALAR_INFO_KEYS` in order, ``metrics`` what ``info["metrics"]`` holds (``None`` before
        the episode's end).
        """
        reward, terminated, truncated, invalid = self._transition(action)
        self._write_row(obs_out, mask_out, row)
        metrics = self.sim.result().summary() if terminated or truncated else None  # type: ignore[union-attr]
        return reward, terminated, truncated, self._scalar_info(invalid), metrics

    def reset_into(self, obs_out: np.ndarray, mask_out: np.ndarray, row: int, *, seed: int | None = None,
                   options: dict[str, Any] | None = None) -> tuple[Any, ...]:
        """:meth:`reset` writing into ``obs_out[row]`` and ``mask_out[row]`` (see :meth:`step_into`);
        returns the values of :attr:`SCALAR_INFO_KEYS`."""
        self._begin_episode(seed, options)
        self._write_row(obs_out, mask_out, row)
        return self._scalar_info(False)

    def _begin_episode(self, seed: int | None, options: dict[str, Any] | None) -> None:
        """The state change of a reset: a new episode, advanced to its first decision."""
        self._start_episode(seed, options)
        self._prepare_episode()
        assert self._core is not None
        self._core.auto_advance(self.sim)

    def _transition(self, action: int) -> tuple[float, bool, bool, bool]:
        """The state change of a step: ``(reward, terminated, truncated, invalid)``."""
        sim = self.sim
        if sim is None:
            raise gym.error.ResetNeeded("call reset() before step()")
        if type(action) is not int:
            action = action_index(action, self._n_actions, "DDLCluster")
        before = getattr(sim, self._area)
        invalid = self._apply(action)
        # SimulatorEnv._finish_step, inlined on this hot path.
        self._steps += 1
        reward = -(getattr(sim, self._area) - before) * self.reward_scale
        if invalid:
            reward -= self.invalid_action_penalty
        terminated = sim.done
        limit = self._decision_limit
        truncated = limit is not None and self._steps >= limit and not terminated
        return float(reward), terminated, truncated, invalid

    def _write_row(self, obs_out: np.ndarray, mask_out: np.ndarray, row: int) -> None:
        if self._size_free_observation:
            self._core.observe_portable_into(self.sim, obs_out, row)  # type: ignore[union-attr]
        else:
            obs_out[row] = self._observe_legacy()
        mask_out[row] = self._mask_array()

    def _scalar_info(self, invalid: bool) -> tuple[Any, ...]:
        sim = self.sim
        assert sim is not None
        return invalid, self._executed, sim.now, sim.num_queued, len(sim.running), sim.num_finished

    def apply_action(self, action: int) -> bool:
        """``step(action)`` without reward, observation or info (for planners such as MCTS).

        The state afterwards, the decision count and the random generator are exactly those
        ``step`` would leave; returns whether the action was invalid.
        """
        if self.sim is None:
            raise gym.error.ResetNeeded("call reset() before apply_action()")
        if type(action) is not int:
            action = action_index(action, self._n_actions, "DDLCluster")
        self._steps += 1
        return self._apply(action)

    def _apply(self, action: int) -> bool:
        """Carry out an integer action (or its substitute); returns whether it was invalid.

        The state transition of :meth:`step` without reward, observation or info: MCTS rollouts,
        which read none of those, step with this.
        """
        sim = self.sim
        core = self._core
        assert sim is not None and core is not None
        key = core.mask_key  # bit 0: advance valid; bit 1 + w: slot w startable
        P = self._n_rules
        if action == 0:
            invalid = not key & 1
        elif 0 < action < self._n_actions:
            invalid = not (key >> (1 + (action - 1) // P)) & 1
        else:
            invalid = True
        if invalid:
            action = self._substitute() if self.invalid_action == "wait" else -1
        self._executed = action
        if action > 0:
            slot, rule = divmod(action - 1, P)
            job = core.window[slot]
            place = self._rules[rule]
            # Seeded by reset(). A fork builds its generator on first use (base.fork); rules that never
            # draw get whatever is there, so MCTS rollouts with pack/ca/... never build one.
            rng = self._np_random if self._np_random is not None or place in DRAWLESS_RULES else self.np_random
            sim.start(job, place(sim, job, rng))
            core.started(job)  # only the env starts jobs: it leaves the ranked queue; the window is rebuilt next
            core.auto_advance(sim)
        elif action == 0 and not sim.done:
            sim.advance()
            core.auto_advance(sim)
        return invalid

    def action_masks(self) -> np.ndarray:
        """Valid actions as np.int8 0/1 (at least one is always 1); a fresh array."""
        return self._mask_array().copy()

    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None or self.sim is None:
            return None
        if self.render_mode == "ansi":
            return self._render_text()
        return self._render_rgb()

    @property
    def window_jobs(self) -> list[int]:
        """Job indices (workload rows) in slots 0, 1, ... now (a copy)."""
        return list(self._window)

    def current_observation(self) -> np.ndarray:
        """The observation of the current state (what the last ``reset``/``step`` returned)."""
        if self.sim is None:
            raise gym.error.ResetNeeded("call reset() first")
        return self._observe()

    def current_info(self) -> dict[str, Any]:
        """The info of the current state, as a step into it with a valid action would return."""
        if self.sim is None:
            raise gym.error.ResetNeeded("call reset() first")
        return self._info(invalid=False)

    def _fork_state(self, twin: DDLClusterEnv) -> None:
        twin._core = self._core.fork() if self._core is not None else None

    def fork_with_future(self, workload: Workload) -> DDLClusterEnv:
        """A :meth:`fork` whose jobs not yet arrived (and, optionally, the iteration counts of arrived,
        unfinished jobs) are ``workload``'s: :meth:`Simulator.with_future <ddl_gym.sim.engine.Simulator.with_future>`
        under the env. The per-episode tables (queue ranks, static job features) are rebuilt for the
        new workload; the decision state (window, mask, queue order of the waiting jobs) is the
        parent's. With the same number of jobs the current observation is unchanged unless the
        new iteration counts change what the agent sees (the clairvoyant est_runtime and the queue
        order by remaining work; a non-clairvoyant env shows neither). Non-clairvoyant planners fork
        with a sampled future (:mod:`ddl_gym.futures`), never the true one.
        """
        if self.sim is None or self._core is None:
            raise gym.error.ResetNeeded("call reset() before fork_with_future()")
        twin = self.fork()
        parent_core = twin._core
        twin.sim = sim = self.sim.with_future(workload)
        executed = self._executed
        twin._prepare_episode()  # the per-job tables of the new workload (the ranks of the past keep their order)
        twin._executed = executed
        core = twin._core
        assert core is not None and parent_core is not None
        if core.rank is not None:
            rank = core.rank
            core.ranked = sorted(rank[j] for j in sim.queue)
        core.queued_gpus = parent_core.queued_gpus
        core.seen_arrivals = parent_core.seen_arrivals
        core.window = list(parent_core.window)
        core.window_min_gpus = parent_core.window_min_gpus
        core.window_stale = parent_core.window_stale
        core.mask_key = parent_core.mask_key
        if sim.num_arrived != core.seen_arrivals or workload.iterations[: sim.num_arrived].tolist() != \
                self.sim.workload.iterations[: sim.num_arrived].tolist():
            core.window_stale = True  # jobs arrived exactly now, or the queue's order by remaining work moved
            core.auto_advance(sim)
        return twin

    @property
    def _window(self) -> list[int]:
        """Job indices in slots 0, 1, ... (the core's list: read only)."""
        return self._core.window if self._core is not None else []

    @property
    def _gpus(self) -> list[int]:
        """``G_j`` per job of the episode (the core's list: read only)."""
        return self._core.gpus if self._core is not None else []

    @property
    def _mask_key(self) -> int:
        """Bit 0: advance is valid; bit ``1 + w``: slot ``w``'s job fits the free GPUs."""
        return self._core.mask_key if self._core is not None else 1

    def _auto_decision_limit(self) -> int:
        # Each step starts a job (<= N) or lets an event happen (<= N arrivals + N completions).
        return 6 * self.sim.workload.num_jobs + 64  # type: ignore[union-attr]

    # ------------------------------------------------------------------ internals
    def _prepare_episode(self) -> None:
        sim = self.sim
        assert sim is not None
        w = sim.workload
        cluster = sim.cluster
        self.num_servers = cluster.num_servers
        self._num_jobs = w.num_jobs
        self._n_rules = len(self._rules)
        gpus = w.gpus.tolist()
        runtime = nominal_runtimes(sim)
        key = priority_key(sim, self.queue_order, runtime)
        # Queue order as a rank per job (ties by index): the core keeps the queued jobs as a sorted list
        # of ranks, updated on arrivals and starts, so the window is its first W entries.
        if key is None:
            rank: list[int] | None = None
            job_by_rank: list[int] = []
        else:
            rank, job_by_rank = rank_by_key(key)
        self._arrival_list = w.arrival.tolist()
        self._t0 = self._arrival_list[0] if w.num_jobs else 0.0
        self._num_gpus = cluster.num_gpus
        self._max_server = float(cluster.max_server_gpus)
        self._inv_log_gpus = 1.0 / math.log1p(cluster.num_gpus)
        self._executed = -1
        est_runtime = np.minimum(1.0, np.log1p(runtime) / math.log1p(_WORK_MAX_S))
        comm = comm_intensity(w, cluster)
        if self.observation == "legacy":
            S = self.num_servers
            inv = 1.0 / sim.server_gpus.astype(np.float64)
            self._inv_server_gpus = inv.tolist()
            self._server_size_features = (sim.server_gpus.astype(np.float64) / self._max_server).tolist()
            g_feature = np.log2(1.0 + w.gpus) / math.log2(1.0 + cluster.num_gpus)
            # Per job: (present, gpus, est_runtime) and comm_intensity, as float32-exact float64 values of
            # the first release's float32 static table.
            static = np.zeros((w.num_jobs, 4), dtype=np.float32)
            static[:, 0] = 1.0
            static[:, 1] = g_feature
            static[:, 2] = est_runtime
            static[:, 3] = comm
            self._legacy_static = [(a, b, c, d) for a, b, c, d in static.tolist()]
            self._legacy_S = S
            layout = None
        else:
            max_server = cluster.max_server_gpus
            gpus_f = w.gpus.astype(np.float64)
            servers_needed = np.ceil(gpus_f / max_server)
            static = np.stack([
                np.ones(w.num_jobs),
                np.minimum(1.0, np.log2(gpus_f) / _LOG2_JOB_GPUS_MAX),
                gpus_f / cluster.num_gpus,
                np.minimum(1.0, np.log2(servers_needed) / _LOG2_SERVERS_NEEDED_MAX),
                est_runtime,
                comm,
            ], axis=1).astype(np.float32).astype(np.float64) if w.num_jobs else np.zeros((0, 6))
            free_levels = [g for g in _FREE_LEVELS if g <= max_server]
            layout = PortableLayout(
                static=list(map(tuple, static.tolist())), arrival=self._arrival_list,
                server_caps=list(cluster.gpus_per_server), free_levels=free_levels,
                free_levels_pad=(0.0,) * (len(_FREE_LEVELS) - len(free_levels)),
                scale_features=(min(1.0, math.log2(cluster.num_gpus) / _LOG2_CLUSTER_GPUS_MAX),
                                min(1.0, math.log2(max_server) / _LOG2_SERVER_GPUS_MAX)),
                num_gpus=cluster.num_gpus, num_jobs=w.num_jobs, t0=self._t0, size=self._observation_size)
        self._core = DecisionCore(gpus, rank, job_by_rank, self.window, layout, self._preemptive)

    def _substitute(self) -> int:
        """What an invalid action does under ``invalid_action="wait"``: advance, else the first valid start."""
        key = self._mask_key
        if key & 1:
            return 0
        slot = ((key & -key).bit_length() - 2)  # lowest startable slot
        return 1 + slot * self._n_rules

    def _mask_array(self) -> np.ndarray:
        """The mask of the current state (cached per pattern; callers must copy before handing it out)."""
        key = self._mask_key
        mask = self._mask_cache.get(key)
        if mask is None:
            mask = np.zeros(self._n_actions, dtype=np.int8)
            mask[0] = key & 1
            P = self._n_rules
            for slot in range(self.max_window):
                if (key >> (1 + slot)) & 1:
                    mask[1 + slot * P : 1 + (slot + 1) * P] = 1
            self._mask_cache[key] = mask
        return mask

    def _observe(self) -> np.ndarray:
        return self._core.observe_portable(self.sim) if self._size_free_observation else self._observe_legacy()  # type: ignore[union-attr]

    def _observe_legacy(self) -> np.ndarray:
        sim = self.sim
        assert sim is not None
        free = sim.free_per_server.tolist()
        inv = self._inv_server_gpus
        # One Python list, one conversion: cheaper than many small numpy writes. Same float64 values,
        # cast once to float32, as the first release's numpy arithmetic.
        block = [f * i for f, i in zip(free, inv)]
        block += [p * i for p, i in zip(sim.split_count.tolist(), inv)]
        block += self._server_size_features
        window = self._window
        if window:
            now, arrival, gpus, static = sim.now, self._arrival_list, self._core.gpus, self._legacy_static  # type: ignore[union-attr]
            num_free = sim.num_free
            most_free = max(free)
            log1p = math.log1p
            for job in window:
                present, g_feature, runtime, comm = static[job]
                g = gpus[job]
                block += (present, g_feature, runtime, min(1.0, log1p(now - arrival[job]) * _INV_LOG_WAIT), comm,
                          1.0 if g <= num_free else 0.0, 1.0 if g <= most_free else 0.0)
        n_jobs = self._num_jobs or 1
        queued = sim.num_queued
        contended = sim.contended_jobs  # running jobs with p_j > 0 (the spread ones)
        tail = (
            min(1.0, math.log1p(queued) * _INV_LOG_QUEUE),
            min(1.0, math.log1p(max(0, queued - self.window)) * _INV_LOG_QUEUE),
            math.log1p(len(sim.running)) * self._inv_log_gpus,
            sim.num_free / self._num_gpus,
            sim.num_finished / n_jobs,
            (n_jobs - sim.num_arrived) / n_jobs if self._num_jobs else 0.0,
            min(1.0, math.log1p(max(0.0, sim.now - self._t0)) * _INV_LOG_TIME),
            min(1.0, sim.contention_sum / contended / self._max_server) if contended else 0.0,
        )
        return to_float32(block, tail, self._observation_size)

    def _info(self, invalid: bool) -> dict[str, Any]:
        sim = self.sim
        assert sim is not None
        return {
            "action_mask": self._mask_array().copy(),
            "invalid_action": invalid,
            "executed_action": self._executed,
            "sim_time": float(sim.now),
            "queue_length": sim.num_queued,
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
        """GPU occupancy Gantt chart so far: one row band per GPU, colour per job, darker = more contention;
        labelled (time axis in seconds since the first arrival, GPU axis with server boundaries, the
        clock and queue in the title)."""
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
        title = (f"t = {sim.now - t0:,.0f} s   queued {sim.num_queued}   running {len(sim.running)}   "
                 f"done {sim.num_finished}/{sim.workload.num_jobs}")
        return label_frame(image, title=title, t_span_s=float(span), num_gpus=n_gpus,
                           gpus_per_server=[int(g) for g in sim.server_gpus])
