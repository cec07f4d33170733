"""What every ddl-gym env shares: scenario handling, episode start, reward areas, results, fork.

The envs are adapters over :class:`ddl_gym.sim.engine.Simulator`; this base class holds the parts
of that adaptation that do not depend on how actions are encoded.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from ddl_gym.scenarios import Scenario, get_scenario
from ddl_gym.sim.engine import Simulator
from ddl_gym.sim.metrics import SimResult
from ddl_gym.sim.model import ClusterSpec, ConfigError, Workload

REWARD_KINDS = ("jct", "makespan", "weighted_jct")


class SimulatorEnv(gym.Env[np.ndarray, np.int64]):
    """Base class: a Gymnasium env driving one :class:`Simulator` per episode."""

    sim: Simulator | None

    def _setup_common(self, scenario: str | Scenario, *, reward: str, reward_scale: float, render_mode: str | None,
                      invalid_action_penalty: float, max_decisions: int | None, debug: bool) -> None:
        """Validate and store the constructor arguments every env has."""
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
        self.reward_kind = reward
        self.reward_scale = float(reward_scale)
        self.invalid_action_penalty = float(invalid_action_penalty)
        self.max_decisions = max_decisions
        self.render_mode = render_mode
        self.debug = debug
        self.num_servers = self.scenario.sample_cluster(np.random.default_rng(0)).num_servers
        self.sim = None
        self._steps = 0

    def _start_episode(self, seed: int | None, options: dict[str, Any] | None) -> Simulator:
        """Seed, draw the episode's cluster and workload from ``np_random``, build the simulator."""
        super().reset(seed=seed)
        options = options or {}
        cluster, workload = self.scenario.sample(self.np_random)
        if "workload" in options:
            workload = self._load_option_workload(options["workload"], cluster)
        if cluster.num_servers != self.num_servers:
            raise ConfigError(
                f"scenario {self.scenario.name!r} changed its server count ({cluster.num_servers} != {self.num_servers})"
            )
        self.sim = Simulator(cluster, workload, self.scenario.model, debug=self.debug)
        self._steps = 0
        return self.sim

    @staticmethod
    def _load_option_workload(value: Any, cluster: ClusterSpec) -> Workload:
        """``reset(options={"workload": ...})``: a Workload, or the path of a workload CSV."""
        if isinstance(value, Workload):
            value.check_fits(cluster)
            return value
        from ddl_gym.workloads.csv_io import read_workload_csv

        return read_workload_csv(str(value), cluster=cluster)

    def _objective_area(self) -> float:
        """The integral the reward is the negative increment of (see the env docstrings)."""
        sim = self.sim
        assert sim is not None
        if self.reward_kind == "jct":
            return sim.jobs_area
        if self.reward_kind == "weighted_jct":
            return sim.weighted_area
        return sim.now

    def _finish_step(self, before: float, invalid: bool) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """The common end of ``step``: reward from the objective's area, episode end, obs, info.

        Args:
            before: :meth:`_objective_area` at the start of the step.
            invalid: whether the action was masked (a no-op that costs ``invalid_action_penalty``).
        """
        sim = self.sim
        assert sim is not None
        self._steps += 1
        reward = -(self._objective_area() - before) * self.reward_scale
        if invalid:
            reward -= self.invalid_action_penalty
        terminated = sim.done
        truncated = bool(self.max_decisions is not None and self._steps >= self.max_decisions and not terminated)
        obs = self._observe()
        info = self._info(invalid=invalid)
        if terminated or truncated:
            info["metrics"] = sim.result().summary()
        return obs, float(reward), bool(terminated), truncated, info

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
        twin._np_random = None
        if self._np_random is not None:
            generator = np.random.Generator(type(self._np_random.bit_generator)())
            generator.bit_generator.state = self._np_random.bit_generator.state
            twin._np_random = generator
        twin.sim = self.sim.fork() if self.sim is not None else None
        self._fork_state(twin)
        return twin

    def _fork_state(self, twin: Any) -> None:
        """Copy the subclass's mutable per-episode state into ``twin`` (its attributes are shared)."""
