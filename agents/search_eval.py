"""The network as a search guide, and network + non-clairvoyant search scored on test episodes.

Shared by :mod:`ddl_gym.agents.expert_iteration` (the search that generates training data) and
:mod:`ddl_gym.agents.suite_eval` (the "network + search" rows of the suite board):

* :class:`NetworkGuide` — a shipped or trained MaskablePPO agent as the MCTS guide (``act``), PUCT
  prior (``probs``) and value (``value``);
* :class:`ValueLeaf` — the network's value head as the search's leaf evaluation (AlphaZero's), in
  place of the native fallback finish (``SearchSettings(leaf="value")``);
* :class:`SearchSettings` / :func:`make_search` — the non-clairvoyant
  :class:`ddl_gym.agents.mcts.MCTSPolicy` both use (``future="sampled"``: forks whose unseen future is
  drawn from the scenario's arrival model);
* :class:`SearchSeedItem` / :func:`search_episode_avg_jct` — one test episode of network + search, a
  work item of :mod:`ddl_gym.executors` (local process pool or Ray);
* :func:`search_rows` — those episodes on a list of seeds through an executor.
"""

from __future__ import annotations

import dataclasses
import os
import time
from typing import Any, Sequence

import numpy as np


@dataclasses.dataclass(frozen=True)
class SearchSettings:
    """Settings of the network-guided search; the defaults are those measured in docs/expert-iteration.md.

    ``sims`` simulations per decision over ``samples`` sampled futures, rollouts of ``depth`` network
    steps finished natively by ``fallback`` (``leaf="rollout"``) or scored by the network's value head
    (``leaf="value"``, :class:`ValueLeaf`), PUCT constant ``c_uct``, ``candidates`` root actions
    expanded first, the action played by ``final`` ("visits" or "best"); ``future="oracle"`` forks the
    true future (a clairvoyant oracle, for comparisons only).
    """

    sims: int = 32
    samples: int = 4
    depth: int = 0
    c_uct: float = 0.5
    fallback: str = "srsf+ca"
    candidates: int = 4
    final: str = "visits"
    future: str = "sampled"
    leaf: str = "rollout"

    def __post_init__(self) -> None:
        from ddl_gym.sim.model import ConfigError

        if self.leaf not in LEAVES:
            raise ConfigError(f"search leaf must be one of {LEAVES}, got {self.leaf!r}")
        if self.leaf == "value" and self.future != "sampled":
            raise ConfigError("search leaf='value' needs future='sampled' (the paired search)")

    def label(self) -> str:
        """The settings as they appear in a board row."""
        finish = f"fallback={self.fallback}" if self.leaf == "rollout" else "leaf=value head"
        return (f"MCTS(future={self.future}, sims={self.sims}, samples={self.samples}, depth={self.depth}, "
                f"candidates={self.candidates}, final={self.final}, {finish})")


#: how an evaluation is finished after its ``depth`` network steps
LEAVES = ("rollout", "value")



# ============================================================================ the network as guide and prior
class NetworkGuide:
    """A loaded MaskablePPO agent as MCTS guide (``act``), prior (``probs``) and value (``value``).

    Args:
        agent: ``OUT/agent.zip`` (its ``.json`` and ``.vecnormalize.pkl`` beside it), or a loaded
            :class:`ddl_gym.agents.policy.AgentPolicy`.
    """

    def __init__(self, agent: Any) -> None:
        from ddl_gym.agents.policy import AgentPolicy, load_policy

        self.agent: AgentPolicy = agent if isinstance(agent, AgentPolicy) else load_policy(f"maskable-ppo:{agent}")
        self.policy = self.agent.model.policy
        self.policy.set_training_mode(False)
        self.env_kwargs = dict(self.agent.env_kwargs)
        self.name = f"net:{self.agent.path.stem}"
        self._memo_key: bytes | None = None
        self._memo: np.ndarray | None = None

    def reset(self, seed: int | None = None) -> None:
        self._memo_key = None

    def probs(self, obs: np.ndarray, action_mask: np.ndarray, info: dict[str, Any] | None = None) -> np.ndarray:
        """π(·|obs) over the action space, zero on masked actions (float64)."""
        import torch

        mask = np.asarray(action_mask, dtype=bool)
        key = np.asarray(obs, dtype=np.float32).tobytes() + mask.tobytes()
        if key == self._memo_key and self._memo is not None:
            return self._memo
        x = torch.as_tensor(self.agent.normalise(obs)[None, :])
        with torch.no_grad():
            dist = self.policy.get_distribution(x, action_masks=mask[None, :])
            p = dist.distribution.probs[0].numpy().astype(np.float64)
        p[~mask] = 0.0
        total = p.sum()
        p = p / total if total > 0 else mask / mask.sum()
        self._memo_key, self._memo = key, p
        return p

    def act(self, obs: np.ndarray, action_mask: np.ndarray, info: dict[str, Any] | None = None) -> int:
        """The most probable valid action (the agent's deterministic choice)."""
        return int(np.argmax(self.probs(obs, action_mask, info)))

    def value(self, obs: np.ndarray) -> float:
        import torch

        x = torch.as_tensor(self.agent.normalise(obs)[None, :])
        with torch.no_grad():
            return float(self.policy.predict_values(x)[0, 0])


class ValueLeaf:
    """The network's value head as the leaf evaluation of the paired search (``MCTSPolicy(leaf=...)``).

    A v1 agent is trained on the reference-relative reward (:mod:`ddl_gym.relative_reward`), so its
    value at a state ``s`` reached at time ``t`` estimates

        V(s) ≈ scale · ∫_t^∞ (N_ref(u) − N_agent(u)) du,

    where ``N_ref`` is what the agent's training reference has in the system on the same input. The
    agent's cost still to come is therefore ``∫_t^∞ N_ref − V(s)/scale``, and the episode's Σ JCT is
    estimated as

        jobs_area(t) + Σ_j (C_j^ref − max(r_j, t))⁺ − V(s) / scale,

    where ``scale`` is the env's ``reward_scale`` and ``C^ref`` are the reference's finish times on the sampled future's whole input (the true
    past and the sampled future: ``prepare`` runs the reference once per future, with generator seed
    0). On a clairvoyant task the reference's past on that input is its true past. On a
    non-clairvoyant one the future resamples the remaining work of arrived jobs, so the reference's
    past is re-simulated with that work: an approximation, as the sample itself is.

    Args:
        guide: the network (its value head, the reference its value was last trained against on the
            task — ``expert_iteration.reference`` for that round's task, else the task's ``also`` entry
            of a multi-task agent, else ``recipe.reference``).
        reference: the reference the value is relative to (default: the agent's training reference).
        task: the suite task searched; for a multi-task agent (``train_v1 --also``) its value on a task
            is relative to that task's reference.
    """

    def __init__(self, guide: NetworkGuide, reference: str | None = None, task: str | None = None) -> None:
        from ddl_gym.policies import make_policy
        from ddl_gym.sim.model import ConfigError

        meta = guide.agent.metadata
        # the reference of the reward the value head was last trained on for this task: an expert-iteration
        # round's (on its task), else PPO's (for a multi-task agent, the reference of ``task``'s envs)
        rounds = meta.get("expert_iteration") or {}
        also = {a.get("task"): a.get("reference") for a in meta.get("also", [])}
        if rounds.get("reference") and (task is None or rounds.get("task") in (None, task)):
            trained = rounds["reference"]
        elif task is not None and task in also:
            trained = also[task]
        else:
            trained = (meta.get("recipe") or {}).get("reference")
        if reference is None and task is not None and also and task != meta.get("task") and task not in also:
            raise ConfigError(f"{guide.agent.path}: the multi-task agent's value was not trained on task {task!r}; "
                              "name the reference its value should be read against")
        self.reference = reference or trained
        if not self.reference:
            raise ConfigError(f"{guide.agent.path}: the agent records no training reference (recipe.reference or "
                              "expert_iteration.reference); "
                              "a value leaf needs the reference its value is relative to")
        self.guide = guide
        self._policy = make_policy(self.reference)
        self.name = f"value[{self.reference}]"

    def prepare(self, twin: Any) -> tuple[np.ndarray, np.ndarray]:
        """The reference's run on the twin's whole input: (arrival, finish) per job."""
        from ddl_gym.relative_reward import reference_finish_times

        sim = twin.sim
        finish = reference_finish_times(self._policy, self.reference, twin.scenario, sim.cluster, sim.workload, 0)
        return np.asarray(sim.workload.arrival, dtype=np.float64), finish

    def estimate(self, env: Any, obs: np.ndarray, context: tuple[np.ndarray, np.ndarray]) -> float:
        arrival, finish = context
        now = env.sim.now
        reference_to_come = float(np.clip(finish - np.maximum(arrival, now), 0.0, None).sum())
        # the search env is built from the agent's env settings, so its reward scale is the one V was trained in
        return float(env.sim.jobs_area) + reference_to_come - self.guide.value(obs) / env.reward_scale


def make_search(guide: NetworkGuide, settings: SearchSettings, *, root_noise: float, seed: int,
                task: str | None = None) -> Any:
    """The MCTS the rounds and the evaluation use: ``guide``'s policy as prior and first action (and, with
    ``settings.leaf == "value"``, its value head as the leaf evaluation)."""
    from ddl_gym.agents.mcts import MCTSPolicy

    return MCTSPolicy(guide, simulations=settings.sims, depth=settings.depth, c_uct=settings.c_uct,
                      prior=guide.probs, backup="best", final=settings.final, fallback=settings.fallback,
                      reuse_tree=False, future=settings.future, samples=settings.samples, root_noise=root_noise,
                      seed=seed, root_candidates=settings.candidates,
                      leaf=ValueLeaf(guide, task=task) if settings.leaf == "value" else None)


_GUIDES: dict[str, tuple[float, NetworkGuide]] = {}


def _guide(path: str) -> NetworkGuide:
    """One loaded network per agent file and worker process (reloaded when the file changes)."""
    mtime = os.path.getmtime(path)
    found = _GUIDES.get(path)
    if found is None or found[0] != mtime:
        found = _GUIDES[path] = (mtime, NetworkGuide(path))
    return found[1]


# ============================================================================ network + search on one test episode
@dataclasses.dataclass(frozen=True)
class SearchSeedItem:
    """One test episode of network + search (a work item of ``Executor.map``)."""

    agent: str
    task: str
    seed: int
    search: SearchSettings = SearchSettings()


def search_episode_avg_jct(item: SearchSeedItem) -> tuple[float, float]:
    """Avg JCT (s) of network + search on one test episode, and the CPU seconds it took."""
    import torch

    from ddl_gym.scenarios import get_scenario
    from ddl_gym.suite import get_task

    torch.set_num_threads(1)
    cpu0 = time.process_time()
    task = get_task(item.task)
    guide = _guide(item.agent)
    search = make_search(guide, item.search, root_noise=0.0, seed=item.seed, task=item.task)
    scenario = get_scenario(task.scenario)
    cluster, workload = scenario.episode(item.seed)
    result = search.run_episode(scenario, cluster, workload, np.random.default_rng(item.seed))
    return float(result.summary()["avg_jct_s"]), time.process_time() - cpu0


def search_rows(items: Sequence[SearchSeedItem], *, executor: str = "local", workers: int | None = None,
                ray_address: str | None = None) -> tuple[np.ndarray, float]:
    """Avg JCT (s) of every item's episode, in order, and the CPU-hours they took together."""
    from ddl_gym.executors import make_executor

    with make_executor(executor, workers=workers, ray_address=ray_address) as pool:
        out = pool.map(search_episode_avg_jct, list(items))
    return np.array([o[0] for o in out], dtype=float), sum(o[1] for o in out) / 3600.0
