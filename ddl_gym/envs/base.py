"""What every ddl-gym env shares: scenario handling, episode start, action checks, reward areas, results, fork.

The envs are adapters over :class:`ddl_gym.sim.engine.Simulator`; this base class holds the parts
of that adaptation that do not depend on how actions are encoded.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np

from ddl_gym.scenarios import Scenario, get_scenario
from ddl_gym.sim.engine import Simulator
from ddl_gym.sim.metrics import SimResult
from ddl_gym.sim.model import ClusterSpec, ConfigError, Workload

REWARD_KINDS = ("jct", "makespan", "weighted_jct")
INVALID_ACTION_MODES = ("wait", "noop")
RESET_OPTIONS = ("workload",)


class InvalidActionError(gym.error.Error, TypeError):
    """``step()`` got something that is not an action at all (a float, a string, ``None``, an array...).

    Integers outside the action space or masked by :meth:`action_masks` are *not* errors: they are
    invalid actions with a documented effect (``info["invalid_action"]``).
    """


def action_index(action: Any, n: int, env_name: str) -> int:
    """``action`` as a Python int, accepting what Gymnasium's ``Discrete.contains`` accepts as a type.

    Accepted: Python ints, NumPy integer scalars and 0-d integer arrays (what SB3 and Gymnasium's
    vector envs pass). Unlike ``Discrete.contains``, bools are refused: ``True`` is not "action 1".
    The value is not range-checked here: out-of-range integers are invalid actions, not errors.

    Raises:
        InvalidActionError: naming the action, its type and the action space.
    """
    if isinstance(action, (int, np.integer)) and not isinstance(action, (bool, np.bool_)):
        return int(action)
    if isinstance(action, np.ndarray) and action.shape == () and action.dtype.kind in "iu":
        return int(action)
    kind = type(action).__name__
    if isinstance(action, (bool, np.bool_)):
        hint = "booleans are not actions; pass int(action) if you meant 0 or 1"
    elif isinstance(action, np.ndarray):
        hint = (f"an array of shape {action.shape} and dtype {action.dtype}; pass one integer, e.g. "
                "action.item() for a one-element array (vector envs take one action per sub-env)")
    elif isinstance(action, (float, np.floating)):
        hint = "floats are not actions, even integral ones (Gymnasium's Discrete.contains rejects them); round first"
    else:
        hint = "pass one integer"
    raise InvalidActionError(
        f"{env_name}.step(): action {action!r} ({kind}) is not an element of Discrete({n}): {hint}. "
        f"Integers outside 0..{n - 1} and masked integers are accepted and reported in info['invalid_action']."
    )


def check_reset_options(options: Any) -> dict[str, Any]:
    """``reset(options=...)`` as a dict with known keys only (``None`` means no options)."""
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise ConfigError(f"reset(options=...) must be a dict such as {{'workload': 'jobs.csv'}} or None, "
                          f"got {type(options).__name__} {options!r}")
    for key in options:
        if key not in RESET_OPTIONS:
            near = difflib.get_close_matches(str(key), RESET_OPTIONS, n=1)
            hint = f"; did you mean {near[0]!r}?" if near else ""
            raise ConfigError(f"reset(options=...) has unknown key {key!r}{hint} (known keys: {', '.join(RESET_OPTIONS)})")
    return dict(options)


class DiscreteActions(gym.spaces.Discrete):
    """``Discrete`` whose masked ``sample`` is several times cheaper, with Gymnasium's exact draws.

    ``sample(mask=m)`` checks ``m`` as Gymnasium does (an ``np.int8`` array of shape ``(n,)`` with
    values 0/1, ``AssertionError`` otherwise) and returns the same value as
    ``gymnasium.spaces.Discrete.sample(mask=m)`` for the same generator state: ``choice`` over
    the valid actions is one ``integers(0, k)`` draw indexing them, so both consume the generator
    identically. Unmasked and probability sampling are Gymnasium's own. It is still a
    ``Discrete`` (``isinstance`` checks, equality, batching, SB3/RLlib all see one).
    """

    def sample(self, mask: Any = None, probability: Any = None) -> np.int64:
        if mask is None or probability is not None:
            return super().sample(mask=mask, probability=probability)
        if type(mask) is not np.ndarray or mask.dtype != np.int8 or mask.shape != (self.n,):
            return super().sample(mask=mask)  # Gymnasium's checks and messages
        raw = mask.tobytes()
        if raw.count(0) + raw.count(1) != len(raw):
            return super().sample(mask=mask)  # values other than 0/1: Gymnasium's assertion
        valid = mask.nonzero()[0]
        if not valid.size:
            return self.start
        return self.start + self.dtype.type(valid[self.np_random.integers(0, valid.size)])


_THROWAWAY_SEED = np.random.SeedSequence(0)


def generator_from_state(state: dict[str, Any]) -> np.random.Generator:
    """A generator that continues from ``state`` (a ``bit_generator.state`` dict)."""
    # A fixed seed, overwritten at once: avoids drawing OS entropy for a state we discard.
    bit_generator = getattr(np.random, state["bit_generator"])(_THROWAWAY_SEED)
    bit_generator.state = state
    return np.random.Generator(bit_generator)


class SimulatorEnv(gym.Env[np.ndarray, np.int64]):
    """Base class: a Gymnasium env driving one :class:`Simulator` per episode."""

    sim: Simulator | None
    #: whether the observation does not depend on the cluster's size (server count may vary per episode)
    _size_free_observation: bool = False
    #: a fork's generator state, copied into a generator only when first used (see :meth:`fork`)
    _pending_rng: dict[str, Any] | None = None

    @property
    def np_random(self) -> np.random.Generator:
        """Gymnasium's generator; in a fork it is built from the parent's state on first use."""
        if self._np_random is None and self._pending_rng is not None:
            self._np_random = generator_from_state(self._pending_rng)
            self._pending_rng = None
        return gym.Env.np_random.fget(self)  # type: ignore[attr-defined]

    @np_random.setter
    def np_random(self, value: np.random.Generator) -> None:
        self._pending_rng = None
        gym.Env.np_random.fset(self, value)  # type: ignore[attr-defined]

    def _setup_common(self, scenario: str | Scenario, *, reward: str, reward_scale: float, render_mode: str | None,
                      invalid_action: str, invalid_action_penalty: float, max_decisions: int | str | None,
                      debug: bool) -> None:
        """Validate and store the constructor arguments every env has."""
        if isinstance(scenario, os.PathLike):  # a scenario file given as a Path
            scenario = os.fspath(scenario)
        self.scenario = get_scenario(scenario) if isinstance(scenario, str) else scenario
        if self.scenario.engine != "job":
            raise ConfigError(
                f"scenario {self.scenario.name!r} uses the task-level engine, which {type(self).__name__} does not "
                "drive; evaluate its policies with `ddl-gym eval` instead"
            )
        if reward not in REWARD_KINDS:
            raise ConfigError(f"reward must be 'jct', 'makespan' or 'weighted_jct', got {reward!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ConfigError(f"render_mode must be one of {self.metadata['render_modes']} or None, got {render_mode!r}")
        if invalid_action not in INVALID_ACTION_MODES:
            raise ConfigError(f"invalid_action must be 'wait' or 'noop', got {invalid_action!r}")
        if not (max_decisions is None or max_decisions == "auto"
                or (isinstance(max_decisions, (int, np.integer)) and not isinstance(max_decisions, bool)
                    and max_decisions >= 1)):
            raise ConfigError(f"max_decisions must be 'auto', None or an integer >= 1, got {max_decisions!r}")
        penalty = float(invalid_action_penalty)
        if not np.isfinite(penalty):
            raise ConfigError(f"invalid_action_penalty must be finite, got {invalid_action_penalty!r}")
        self.reward_kind = reward
        self._area = {"jct": "jobs_area", "weighted_jct": "weighted_area", "makespan": "now"}[reward]
        from ddl_gym.bounds import check_float

        self.reward_scale = check_float(reward_scale, 0.0, 1e6, "reward_scale", low_open=True)  # finite rewards
        check_float(penalty, 0.0, 1e9, "invalid_action_penalty")
        self.invalid_action = invalid_action
        self.invalid_action_penalty = penalty
        self.max_decisions = max_decisions if max_decisions is None or max_decisions == "auto" else int(max_decisions)
        self.render_mode = render_mode
        self.debug = debug
        self.num_servers = self.scenario.sample_cluster(np.random.default_rng(0)).num_servers
        self.sim = None
        self._steps = 0
        self._decision_limit: int | None = None

    def _start_episode(self, seed: int | None, options: Any) -> Simulator:
        """Seed, draw the episode's cluster and workload from ``np_random``, build the simulator."""
        options = check_reset_options(options)
        super().reset(seed=seed)
        cluster, workload = self.scenario.sample(self.np_random)
        if "workload" in options:
            workload = self._load_option_workload(options["workload"], cluster)
        if cluster.num_servers != self.num_servers:
            if not self._size_free_observation:
                raise ConfigError(
                    f"scenario {self.scenario.name!r} changed its server count ({cluster.num_servers} != "
                    f"{self.num_servers}), which this observation layout cannot follow; use observation='portable'"
                )
            self.num_servers = cluster.num_servers
        self.sim = Simulator(cluster, workload, self.scenario.model, debug=self.debug)
        self._steps = 0
        self._decision_limit = self._auto_decision_limit() if self.max_decisions == "auto" else self.max_decisions
        return self.sim

    def _auto_decision_limit(self) -> int:
        """``max_decisions="auto"``: a bound no episode reaches when invalid actions wait (see the env docs)."""
        raise NotImplementedError

    @staticmethod
    def _load_option_workload(value: Any, cluster: ClusterSpec) -> Workload:
        """``reset(options={"workload": ...})``: a Workload, or the path of a workload CSV."""
        if isinstance(value, Workload):
            value.check_fits(cluster)
            return value
        import os

        if not isinstance(value, (str, os.PathLike)):
            raise ConfigError(f"reset(options={{'workload': ...}}) takes a Workload or the path of a workload CSV, "
                              f"got {type(value).__name__}")
        from ddl_gym.workloads.csv_io import read_workload_csv

        return read_workload_csv(str(value), cluster=cluster)

    def _objective_area(self) -> float:
        """The integral the reward is the negative increment of (see the env docstrings)."""
        assert self.sim is not None
        return getattr(self.sim, self._area)

    def _finish_step(self, before: float, invalid: bool) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """The common end of ``step``: reward from the objective's area, episode end, obs, info.

        Args:
            before: :meth:`_objective_area` at the start of the step.
            invalid: whether the action was invalid (costs ``invalid_action_penalty``).
        """
        sim = self.sim
        assert sim is not None
        self._steps += 1
        reward = -(getattr(sim, self._area) - before) * self.reward_scale
        if invalid:
            reward -= self.invalid_action_penalty
        terminated = sim.num_finished == sim.workload.num_jobs
        limit = self._decision_limit
        truncated = limit is not None and self._steps >= limit and not terminated
        obs = self._observe()
        info = self._info(invalid=invalid)
        if terminated or truncated:
            info["metrics"] = sim.result().summary()
        return obs, float(reward), terminated, truncated, info

    def _observe(self) -> np.ndarray:
        raise NotImplementedError

    def _info(self, invalid: bool) -> dict[str, Any]:
        raise NotImplementedError

    def result(self) -> SimResult:
        """Per-job records of the current episode (complete once terminated)."""
        if self.sim is None:
            raise gym.error.ResetNeeded("call reset() first")
        return self.sim.result("env")

    def close(self) -> None:
        self.sim = None

    def fork(self) -> Any:
        """An exact, independent copy of this env mid-episode (for tree search / rollouts).

        The copy shares the immutable scenario, workload and per-episode static features, copies
        the simulator state (:meth:`Simulator.fork`), the random generator and the env's own
        mutable state (:meth:`_fork_state`), so both replay identically under the same actions.
        """
        twin = object.__new__(type(self))
        twin.__dict__.update(self.__dict__)
        if self._np_random is not None:
            # Only the state is copied now (a dict); the twin builds its generator when it first draws.
            # MCTS forks hundreds of envs per decision whose rollouts (pack, ca, ...) never draw.
            twin._np_random = None
            twin._pending_rng = self._np_random.bit_generator.state
        twin.sim = self.sim.fork() if self.sim is not None else None
        self._fork_state(twin)
        return twin

    def _fork_state(self, twin: Any) -> None:
        """Copy the subclass's mutable per-episode state into ``twin`` (its attributes are shared)."""
