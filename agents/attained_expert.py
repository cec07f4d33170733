"""The preemptive 2D-Gittins reference as an *env* policy: its actions in ``DDLCluster-v1`` with ``preemption=True``.

The native reference (:class:`ddl_gym.baselines.classic.attained.AttainedServicePolicy`, ``gittins``)
schedules the simulator directly: at each of its decision points it ranks every queued and running
job by its Gittins index on the size distribution, keeps the jobs that fit the cluster's GPUs in that
order (fit-first), preempts running jobs that fall out while a kept job waits, and starts jobs in
order while they fit. :class:`EnvGittinsExpert` takes the same decisions one env action at a time:

1. a running job out of the kept set, while a kept job waits → "preempt" its running slot;
2. else the first job in index order that waits, fits the free GPUs and is in the queue window →
   start it with the reference's placement rule;
3. else "advance".

It reads what the env's agent could read — attained service (:meth:`Simulator.attained_gpu_seconds`),
job features and the size distribution of earlier episodes (``prior``) plus the jobs finished so far —
never remaining work. Two differences from the native reference are the env's: it decides at the env's
decision points (events and ``quantum_s`` ticks, not at each job's own Δ*), and it can start only jobs
in the window. On ``pollux-nc-25g``'s 10 validation seeds with ``window=8``, ``queue_order="gpu-step"``
and ``quantum_s=300`` it averaged 4059 s against the native reference's 4150 s (tested on fewer seeds
in ``tests/agents/test_attained_expert.py``); with a FIFO window of 8 it churned (preempting for jobs
it could not see) and averaged 14% worse on 4 seeds (4853 s against 4246 s); ticks of 120 s and 600 s
gave 4251 s and 4097 s on the 10 seeds.

Use: the expert of behaviour cloning (or DAgger) in the preemptive env.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ddl_gym.sim.engine import QUEUED
from ddl_gym.sim.model import ConfigError


class EnvGittinsExpert:
    """Preemptive 2D-Gittins acting through a preemptive ``DDLCluster-v1`` env (module docstring).

    Args:
        spec: a ``gittins`` policy spec (``"gittins:prior=pollux-nc-25g,prior_seeds=0-19"``): its size
            distribution, placement rule and class settings are the expert's.
    """

    def __init__(self, spec: str = "gittins") -> None:
        from ddl_gym.policies import make_policy

        policy = make_policy(spec)
        if getattr(policy, "kind", None) != "gittins" or not getattr(policy, "preempt", False):
            raise ConfigError(f"EnvGittinsExpert needs a preemptive 'gittins' spec, got {spec!r}")
        self.spec = spec
        self.policy = policy
        self._seen = 0

    def reset(self, env: Any) -> None:
        """Start an episode (call after ``env.reset``): the distribution starts again from the prior."""
        base = env.unwrapped
        if not getattr(base, "preemption", False):
            raise ConfigError("EnvGittinsExpert acts in a DDLCluster-v1 env with preemption=True")
        self.policy.reset(base.sim, np.random.default_rng(0))
        self._seen = 0
        self._placement = _placement_index(base, self.policy.placement)

    def act(self, env: Any) -> int:
        """The expert's action in the env's current state (the env is read, never changed)."""
        base = env.unwrapped
        sim = base.sim
        policy = self.policy
        for job in sim.finished_since(self._seen):  # the history grows with the jobs finished so far
            policy.learn(job, sim.attained_gpu_seconds(job))
            self._seen += 1
        order, _ = policy.rank(sim, list(sim.queue) + list(sim.running), attained=sim.attained_gpu_seconds)
        keep = policy.kept(sim, order)
        gpus = sim.workload.gpus
        mask = base.action_masks()
        if any(job in keep for job in sim.queue):
            slots = base.running_slot_jobs()
            for job in sim.running:
                if job not in keep and job in slots:
                    action = base._first_preempt + slots.index(job)
                    if mask[action]:
                        return action
        window = base.window_jobs
        P = len(base.placement_names)
        for job in order:
            if sim.state[job] == QUEUED and gpus[job] <= sim.num_free and job in window:
                action = 1 + window.index(job) * P + self._placement
                if mask[action]:
                    return action
        return 0 if mask[0] else int(np.flatnonzero(mask)[0])


def _placement_index(base: Any, placement: str) -> int:
    from ddl_gym.placement import canonical_placement_name

    names = [canonical_placement_name(p) for p in base.placement_names]
    rule = canonical_placement_name(placement)
    if rule not in names:
        raise ConfigError(f"EnvGittinsExpert: the reference's placement {placement!r} is not among the env's "
                          f"placements {tuple(base.placement_names)}")
    return names.index(rule)


__all__ = ["EnvGittinsExpert"]
