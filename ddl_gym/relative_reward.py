"""Reference-relative reward for ``DDLCluster-v1`` and the factory behind the registered v1 ids.

:class:`ReferenceRelativeReward` pays, for every step from ``t0`` to ``t1`` (simulated seconds),

    r = scale · ∫_{t0}^{t1} (N_ref(t) − N_agent(t)) dt  (− the invalid-action penalty),

where ``N`` counts jobs in the system and ``N_ref`` is what a named reference policy has in the system
at ``t`` on the *same* input (the same cluster and arrivals, run once per episode at reset). Both
share the arrivals, so ``N_ref − N_agent = F_agent − F_ref`` (jobs finished so far), and the step's
integral is a sum over the finish times inside ``[t0, t1]``. At the episode's end the reference's
remaining time in the system is added, so the undiscounted return is

    Σ_j (C_j^ref − C_j^agent) · scale = (Σ JCT(reference) − Σ JCT(agent)) · scale,

positive when the agent beats the reference. The agent's own return differs from v0's
(``−Σ JCT · scale``) by a constant of the input, so the optimal policy is unchanged; what changes is
the variance the input causes (one episode's input can cost hours more than another's, whatever the
agent does). An agent that makes exactly the reference's decisions gets exactly 0 in every step: the
two finish-time lists are then equal and every segment's difference is an integer 0.

Layering: this module sits above the env (:mod:`ddl_gym.envs`) and the reference policies
(:mod:`ddl_gym.baselines`); neither imports it.
"""

from __future__ import annotations

import bisect
from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np

from ddl_gym.sim.model import ConfigError


class ReferenceRelativeReward(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Reward = (reference's jobs in system − the agent's) · Δt · scale, per step (module docstring).

    Args:
        env: a ``DDLClusterEnv`` (v0 or v1) with ``reward="jct"``.
        reference: a reference policy spec (``"sjf-bco"``, ``"srsf+ca"``, ...) that runs on the
            simulator by itself (no agents: they would need an env of their own).
        cache_inputs: remember the reference's finish times per episode seed (arrival pools re-use
            inputs); at most this many inputs are kept.

    ``info`` gains ``reference_avg_jct_s`` (on reset and at the end) and ``reference`` (its spec).
    """

    def __init__(self, env: gym.Env, reference: str, *, cache_inputs: int = 4096) -> None:
        gym.utils.RecordConstructorArgs.__init__(self, reference=reference, cache_inputs=cache_inputs)
        gym.Wrapper.__init__(self, env)
        base = env.unwrapped
        if getattr(base, "reward_kind", None) != "jct":
            raise ConfigError("the reference-relative reward compares jobs in system: the env needs reward='jct'")
        from ddl_gym.policies import make_policy
        from ddl_gym.harness import policy_driver

        self.reference = str(reference)
        self._policy = make_policy(self.reference)
        if policy_driver(self._policy) == "env":
            raise ConfigError(f"reference {reference!r} acts through an env; choose a policy that runs on the simulator")
        if isinstance(cache_inputs, bool) or not isinstance(cache_inputs, int) or cache_inputs < 0:
            raise ConfigError(f"cache_inputs must be an integer >= 0, got {cache_inputs!r}")
        self._cache_size = cache_inputs
        self._cache: dict[Any, tuple[list[float], float]] = {}
        self._ref_finish: list[float] = []
        self._agent_finish: list[float] = []
        self._agent_count = 0
        self._t = 0.0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(seed=seed, options=options)
        base = self.env.unwrapped
        sim = base.sim
        key = info.get("episode_seed")
        pooled = getattr(base, "arrival_pool", None) is not None and key is not None and not options
        cached = self._cache.get(key) if pooled else None
        if cached is None:
            cached = self._reference_run(base, sim, key if key is not None else (seed or 0))
            if pooled and self._cache_size:
                if len(self._cache) >= self._cache_size:
                    self._cache.pop(next(iter(self._cache)))
                self._cache[key] = cached
        self._ref_finish, ref_avg = cached
        self._agent_finish = []
        self._agent_count = sim.num_finished
        self._t = sim.now
        info["reference"] = self.reference
        info["reference_avg_jct_s"] = ref_avg
        return obs, info

    def _reference_run(self, base: Any, sim: Any, seed: int) -> tuple[list[float], float]:
        finish = reference_finish_times(self._policy, self.reference, base.scenario, sim.cluster, sim.workload, seed)
        arrival = np.asarray(sim.workload.arrival, dtype=np.float64)
        return sorted(finish.tolist()), float(np.mean(finish - arrival)) if finish.size else 0.0

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        base = self.env.unwrapped
        sim = base.sim
        t0, t1 = self._t, sim.now
        agent = self._agent_finish
        finish_time = sim.finish_time
        for job in sim.finished_since(self._agent_count):
            agent.append(finish_time[job])
        self._agent_count = sim.num_finished
        ref = self._ref_finish
        # Breakpoints: every finish (agent's or reference's) inside (t0, t1); F_agent − F_ref is constant between.
        lo_a, hi_a = bisect.bisect_right(agent, t0), bisect.bisect_left(agent, t1)
        lo_r, hi_r = bisect.bisect_right(ref, t0), bisect.bisect_left(ref, t1)
        points = sorted(set(agent[lo_a:hi_a]) | set(ref[lo_r:hi_r]))
        area = 0.0
        prev = t0
        for t in points + [t1]:
            diff = bisect.bisect_right(agent, prev) - bisect.bisect_right(ref, prev)
            if diff:
                area += diff * (t - prev)
            prev = t
        if terminated:  # the reference's jobs still in the system after the agent's last finish
            tail = sum(f - t1 for f in ref[bisect.bisect_right(ref, t1):])
            area += tail
        self._t = t1
        shaped = area * base.reward_scale
        if info.get("invalid_action"):
            shaped -= base.invalid_action_penalty
        info["reference"] = self.reference
        return obs, float(shaped), terminated, truncated, info


def reference_finish_times(policy: Any, name: str, scenario: Any, cluster: Any, workload: Any, seed: int) -> np.ndarray:
    """Finish time of every job when the reference ``policy`` (spec ``name``) runs the episode (``cluster``,
    ``workload``) alone with generator seed ``seed``; an error if it leaves a job unfinished (the relative
    reward and the search's value leaves, :class:`ddl_gym.agents.search_eval.ValueLeaf`, both need every one)."""
    from ddl_gym.harness import simulate_episode

    result, _ = simulate_episode(policy, scenario, cluster, workload, int(seed))
    finish = np.asarray(result.finish, dtype=np.float64)
    if finish.size != workload.num_jobs or not np.all(np.isfinite(finish)):
        raise ConfigError(f"reference {name!r} did not finish every job of the episode")
    return finish


def make_v1_env(scenario: str = "default", *, reference: str | None = None, **kwargs: Any) -> gym.Env:
    """The env behind the ``DDLCluster-*-v1`` ids: :class:`~ddl_gym.envs.cluster_env_v1.DDLClusterEnvV1`
    with ``kwargs``, wrapped in :class:`ReferenceRelativeReward` when ``reference`` names a policy."""
    from ddl_gym.envs.cluster_env_v1 import DDLClusterEnvV1

    env: gym.Env = DDLClusterEnvV1(scenario, **kwargs)
    if reference:
        env = ReferenceRelativeReward(env, reference)
    return env


__all__ = ["ReferenceRelativeReward", "make_v1_env", "reference_finish_times"]
