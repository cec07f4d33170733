"""What a policy object must provide: the typed contract the harness, ``ddl-gym eval`` and the
leaderboard rely on.

A policy is any object with a ``name`` and **one** of three driving methods; the harness
(:func:`ddl_gym.harness.simulate`) picks the driver from the first one it finds, in this order:

* :class:`EpisodePolicy` — ``run_episode(scenario, cluster, workload, rng)``: the policy runs the
  whole episode itself (its own engine or planner) and returns the
  :class:`~ddl_gym.sim.engine.SimResult`.
* :class:`SchedulerPolicy` — ``reset(sim, rng)`` + ``schedule(sim)``: driven by the job-level
  simulator; ``schedule`` is called at every decision point and may call
  ``sim.start(job, placement)`` and ``sim.wake_at(t)``.
* :class:`EnvPolicy` — ``act(obs, action_mask, info) -> int``: driven by the Gymnasium env
  (:class:`~ddl_gym.envs.cluster_env.DDLClusterEnv`), one action per step; optional
  ``reset(seed=...)`` and ``env_kwargs``.

Rules the harness enforces or relies on:

* ``name`` (str) labels the policy's result rows when it is passed as an object; policies given by
  spec (``"srsf+pack"``, ``"mypkg.mod:MyPolicy"``) are labelled by the canonical spec.
* Determinism: all randomness must come from the ``rng`` handed to ``reset``/``run_episode`` (or
  the env's seeded generator), so seed ``s`` gives the same result every time.
* A scheduler may use ``sim.reject``, ``sim.preempt`` or ``sim.resize`` only if it lists them in a
  ``capabilities`` attribute (``("preempt",)``, ...); the simulator refuses undeclared calls.
* An optional ``check_scenario(scenario)`` raising :class:`~ddl_gym.sim.model.ConfigError` refuses a
  scenario the policy cannot run (checked before any episode starts).
* A scheduler runs on job-level scenarios only; task-level scenarios (``engine = "task"``) need an
  :class:`EpisodePolicy`.

Register a policy so that it has a spec (and runs in worker processes):
:func:`ddl_gym.baselines.registry.register_policy`, a ``module:Class`` spec on the command line,
or the ``ddl_gym.policies`` entry-point group (see ``docs/policies.md``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, Union, runtime_checkable

if TYPE_CHECKING:
    import numpy as np

    from ddl_gym.scenarios import Scenario
    from ddl_gym.sim.engine import SimResult, Simulator
    from ddl_gym.sim.model import ClusterSpec, Workload

__all__ = ["EnvPolicy", "EpisodePolicy", "Policy", "PolicyFactory", "SchedulerPolicy"]


@runtime_checkable
class SchedulerPolicy(Protocol):
    """A native scheduler of the job-level simulator (the fastest driver).

    ``reset`` prepares for ``sim``'s episode; ``schedule`` is called whenever jobs are queued after a
    batch of events and starts jobs with ``sim.start(job, placement)`` (``placement``: a tuple of
    GPUs per server, see :mod:`ddl_gym.placement`) or asks to be woken with ``sim.wake_at(t)``. A
    scheduler that leaves jobs queued with nothing running and nothing to wait for is reported as
    stuck (:class:`~ddl_gym.sim.engine.SimulationError`).
    """

    name: str

    def reset(self, sim: Simulator, rng: np.random.Generator) -> None: ...

    def schedule(self, sim: Simulator) -> None: ...


@runtime_checkable
class EnvPolicy(Protocol):
    """A policy that acts through the Gymnasium env, one discrete action per step.

    ``act`` receives the observation, the ``np.int8`` action mask and the step's ``info`` dict and
    returns an action index (``0`` = advance, ``1 + slot·P + rule`` = start; use
    ``env.unwrapped.action_for(slot, rule)``). An optional ``reset(seed=...)`` is called at the start
    of every episode, and an optional ``env_kwargs`` mapping configures the env the harness builds
    (window, placements, observation layout).
    """

    name: str

    def act(self, obs: np.ndarray, action_mask: np.ndarray, info: dict[str, Any]) -> int: ...


@runtime_checkable
class EpisodePolicy(Protocol):
    """A policy that runs a whole episode itself (planners, task-level and interval engines).

    ``run_episode`` gets the scenario, the episode's cluster and workload (``scenario.episode(seed)``)
    and the seeded generator, and returns the simulator's records for that episode.
    """

    name: str

    def run_episode(self, scenario: Scenario, cluster: ClusterSpec, workload: Workload,
                    rng: np.random.Generator) -> SimResult: ...


#: Anything :func:`ddl_gym.baselines.make_policy` returns and :func:`ddl_gym.harness.evaluate` accepts.
Policy = Union[SchedulerPolicy, EnvPolicy, EpisodePolicy]


class PolicyFactory(Protocol):
    """A registered target: called with the spec's options (and ``placement=`` for ``+PLACEMENT``)."""

    def __call__(self, **options: Any) -> Policy: ...


def driver_of(policy: object) -> str:
    """``"self"`` (:class:`EpisodePolicy`), ``"native"`` (:class:`SchedulerPolicy`) or ``"env"``
    (:class:`EnvPolicy`); ``""`` if ``policy`` satisfies none (the harness's order of precedence)."""
    if callable(getattr(policy, "run_episode", None)):
        return "self"
    if callable(getattr(policy, "schedule", None)):
        return "native"
    if callable(getattr(policy, "act", None)):
        return "env"
    return ""
