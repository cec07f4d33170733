"""Sampled futures for non-clairvoyant planning: what has not happened yet, drawn from the scenario's model.

A planner that forks the simulator (MCTS) sees the true future arrivals in every fork: it is an
oracle, not a scheduler a cluster could run. :class:`FutureSampler` replaces what the scheduler
cannot know by a draw from the scenario's own arrival model, given only the past:

* **Jobs not yet arrived.** A fresh episode of the scenario is drawn with the planner's generator;
  its jobs ``k, k+1, …, N−1`` (``k`` = jobs arrived so far, ``N`` = the episode's job count, which
  the scenario fixes and the observation reveals) become the future, their inter-arrival gaps laid
  end to end from ``now``. For the suite's Poisson worlds (i.i.d. exponential gaps, i.i.d. job
  features) this is exactly the conditional law of the future given the past: the gap running at
  ``now`` is exponential again (memorylessness), the later gaps and job features are independent of
  the past. For trace-driven or bursty scenarios it is an approximation (the window's own gaps,
  re-started at ``now``).
* **Remaining work** (``clairvoyant=False``): every arrived, unfinished job gets a total iteration
  count drawn from the scenario's iteration distribution (``prior_episodes`` episodes of training
  seeds) conditioned on exceeding the iterations it has done by now — its attained service, which
  a non-clairvoyant scheduler sees. Counts are drawn independently of the job's model and size
  (the suite's generator draws them so).

What a sample reads of the simulator: the arrived jobs (arrival, GPUs, model), ``now``, the job
count ``N``, and — only for ``clairvoyant=False`` — the iterations each job has done. Never a job
that has not arrived, never (non-clairvoyant) a job's total work.

:meth:`FutureSampler.fork` applies a sample: ``env.fork_with_future(sample)``
(:meth:`ddl_gym.envs.cluster_env.DDLClusterEnv.fork_with_future`, over
:meth:`ddl_gym.sim.engine.Simulator.with_future`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ddl_gym.scenarios import Scenario, get_scenario
from ddl_gym.sim.model import ConfigError, Workload


def splice_workload(past: Workload, k: int, future: Workload, future_rows: np.ndarray, arrival: np.ndarray,
                    iterations: np.ndarray | None = None) -> Workload:
    """Rows ``[:k]`` of ``past`` followed by ``future``'s ``future_rows`` arriving at ``arrival``.

    ``iterations`` (length ``k``) replaces the past rows' iteration counts. Model and architecture
    profiles of both are merged (equal profiles stored once); job ids of the future rows follow
    the largest past id.
    """
    rows = np.asarray(future_rows, dtype=np.int64)
    models: dict[Any, int] = {m: i for i, m in enumerate(past.models)}
    remap = np.array([models.setdefault(m, len(models)) for m in future.models], dtype=np.int64)
    profiles: dict[Any, int] = {p: i for i, p in enumerate(past.profiles)}
    premap = np.array([profiles.setdefault(p, len(profiles)) for p in future.profiles] + [-1], dtype=np.int64)
    first_id = int(past.job_id[:k].max()) + 1 if k else 0
    past_iters = past.iterations[:k] if iterations is None else np.asarray(iterations, dtype=np.int64)
    fut_profile = future.profile_index[rows]
    return Workload(
        job_id=np.concatenate([past.job_id[:k], first_id + np.arange(rows.size)]),
        arrival=np.concatenate([past.arrival[:k], np.asarray(arrival, dtype=np.float64)]),
        gpus=np.concatenate([past.gpus[:k], future.gpus[rows]]),
        iterations=np.concatenate([past_iters, future.iterations[rows]]),
        model_index=np.concatenate([past.model_index[:k], remap[future.model_index[rows]]]),
        models=tuple(models),
        weight=np.concatenate([past.weight[:k], future.weight[rows]]),
        user=np.concatenate([past.user[:k], future.user[rows]]),
        group=np.concatenate([past.group[:k], future.group[rows]]),
        name=f"{past.name}+sampled",
        arch=np.concatenate([past.arch[:k], future.arch[rows]]),
        profile_index=np.concatenate([past.profile_index[:k], premap[fut_profile]]),
        profiles=tuple(profiles),
        predicted_iterations=np.concatenate([past.predicted_iterations[:k], future.predicted_iterations[rows]]),
    )


class FutureSampler:
    """Draws the unseen future of a running episode from ``scenario``'s arrival model (module docstring).

    Args:
        scenario: the episode's scenario (name or object): its workload source is the arrival model.
        clairvoyant: whether the scheduler may see remaining work; ``False`` also resamples the
            iteration counts of arrived, unfinished jobs.
        prior_episodes: how many episodes' iteration counts form the remaining-work prior (only
            for ``clairvoyant=False``).
        prior_seed: the first of their seeds (``prior_seed, prior_seed + 1, …``).
    """

    def __init__(self, scenario: str | Scenario, *, clairvoyant: bool = True, prior_episodes: int = 8,
                 prior_seed: int = 0) -> None:
        self.scenario = get_scenario(scenario) if isinstance(scenario, str) else scenario
        self.clairvoyant = bool(clairvoyant)
        self._prior: np.ndarray | None = None
        self._prior_episodes = int(prior_episodes)
        self._prior_seed = int(prior_seed)

    def iteration_prior(self) -> np.ndarray:
        """Sorted iteration counts of the prior episodes (the remaining-work model)."""
        if self._prior is None:
            counts = [self.scenario.episode(self._prior_seed + i)[1].iterations for i in range(self._prior_episodes)]
            self._prior = np.sort(np.concatenate(counts)) if counts else np.zeros(0, dtype=np.int64)
        return self._prior

    def sample(self, sim: Any, rng: np.random.Generator) -> Workload:
        """A workload with ``sim``'s past and a sampled future (see the module docstring)."""
        past = sim.workload
        n = past.num_jobs
        k = int(sim.num_arrived)
        now = float(sim.now)
        rows = np.zeros(0, dtype=np.int64)
        arrival = np.zeros(0)
        fresh = past
        if k < n:
            fresh = self._draw(rng, sim.cluster, n)
            rows = np.arange(k, n)
            gaps = np.diff(np.concatenate([[0.0], fresh.arrival]))[k:n]
            arrival = now + np.cumsum(np.maximum(gaps, 0.0))
        iterations = None
        if not self.clairvoyant and k:
            iterations = self._resample_work(sim, k, rng)
        return splice_workload(past, k, fresh, rows, arrival, iterations)

    def fork(self, env: Any, rng: np.random.Generator) -> Any:
        """``env`` forked with a sampled future (its own state untouched)."""
        base = getattr(env, "unwrapped", env)
        return base.fork_with_future(self.sample(base.sim, rng))

    def _draw(self, rng: np.random.Generator, cluster: Any, n: int) -> Workload:
        for _ in range(100):
            workload = self.scenario.workload(rng, cluster)
            if workload.num_jobs >= n:
                return workload
        raise ConfigError(f"scenario {self.scenario.name!r} draws episodes with fewer than {n} jobs; the sampler "
                          "needs one as long as the running episode")

    def _resample_work(self, sim: Any, k: int, rng: np.random.Generator) -> np.ndarray:
        prior = self.iteration_prior()
        iterations = sim.workload.iterations[:k].copy()
        for job in range(k):
            if sim.state[job] >= 3:  # DONE or REJECTED: its work is known now
                continue
            done = float(iterations[job]) - float(sim.remaining_iterations(job))
            lo = int(np.searchsorted(prior, done, side="right"))
            if lo < prior.size:
                iterations[job] = int(prior[lo + int(rng.integers(prior.size - lo))])
            else:  # beyond every count of the prior: a little more than done
                iterations[job] = int(np.floor(done)) + 1 + int(rng.integers(max(1, int(done) // 10 + 1)))
        return iterations


__all__ = ["FutureSampler", "splice_workload"]
