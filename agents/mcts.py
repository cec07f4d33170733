"""Spear-style Monte-Carlo tree search over ``DDLCluster-v0`` decisions.

After Hu et al., *Spear: Optimized Dependency-Aware Task Scheduling with Deep Reinforcement
Learning*, ICDCS 2019: at every scheduling decision a search tree is grown over the env's discrete
actions; expansion is limited to valid actions and guided by a policy (Spear: a DRL policy; here a
classic ``order+placement`` rule or any object with ``act(obs, mask, info)``), and leaves are
evaluated by rolling that policy out to the end of the episode. The simulator is deterministic and
:meth:`DDLClusterEnv.fork` copies the full env state (random generator included), so every tree
node holds an exact copy of the env after its action sequence and a rollout's cost is exact for
"this action prefix, then the guide".

Search (one decision, ``simulations`` iterations):

1. *Selection* — from the root, pick children by PUCT ``Q̄(a) + c · P(a) · √N(s) / (1 + N(a))``
   over valid actions, where ``Q̄`` is the child's value min-max normalised over the tree (MuZero
   normalisation) and ``P`` the prior (guide-weighted, uniform, or a callable's probabilities).
2. *Expansion* — the first unvisited action met becomes a new child: fork the parent env, step it.
   The guide's own action is always expanded first at the root.
3. *Rollout* — from the new child, follow the guide for ``depth`` env decisions (``None``: to the
   end), then finish the episode natively with the classic fallback policy (fast, no observations).
4. *Backup* — the rollout's episode cost (``sim.jobs_area`` for ``"jct"`` = Σ JCT, ``sim.now`` for
   ``"makespan"``, ``sim.weighted_area`` for ``"weighted_jct"``) is propagated to the root. With
   ``backup="best"`` (default; valid because the env is deterministic) a node's value is the best
   cost found below it, so the plan kept in the reused subtree never gets lost; ``"mean"`` is UCT's
   average.

The root action is the child with the lowest backed-up cost (``final="best"``) or the most visits
(``"visits"``). The subtree under the chosen action is reused at the next decision. Since the
guide's action is always evaluated and ``backup="best"`` keeps the best trajectory, with
full-depth rollouts (``depth=None``) the episode cost is never worse than the guide's own
env-level run (the search can only replace the guide's continuation with a cheaper one it found).

**Oracle or not** (``future``). The forks of ``future="oracle"`` (the default, the search described
above) copy the simulator as it is, so their rollouts see the true future arrivals (and, on a
non-clairvoyant task, every job's true remaining work): a *clairvoyant oracle*, useful as a bound
or a teacher, not a scheduler a cluster could run. The two other modes are non-clairvoyant: they
fork the env with futures drawn from the scenario's arrival model
(:class:`ddl_gym.futures.FutureSampler`: jobs not yet arrived, and on a non-clairvoyant env the
remaining work of arrived jobs, conditioned only on the past; :meth:`DDLClusterEnv.fork_with_future`)
with a generator seeded by ``(seed, decision)``, so for a fixed ``seed`` their decisions depend on
the past only: changing the true future changes nothing (tested).

* ``future="sampled"`` (paired root search): the i-th evaluation of every root action runs on the
  i-th sampled future (common random numbers): "the action, then ``fallback``" (or the guide for
  ``depth`` steps first), scored by its regret against the guide's action on the same future. PUCT
  over the root's valid actions (prior as above, ``c_uct``) chooses which action to evaluate next;
  a new future is drawn (and the guide's action evaluated on it) whenever an action needs one.
  The root value of an action is its mean regret over futures, never a plan that knows one future.
* ``future="determinized"``: ``samples`` futures, one tree per future with ``simulations / samples``
  iterations, root visits summed. Inside a tree the search knows that tree's future, so deeper
  plans are fitted to one sample (strategy fusion); kept for comparison.

The chosen action is the most visited (``final="visits"``) or the one with the lowest mean regret
(``final="best"``); no subtree is reused. ``root_noise`` mixes Dirichlet noise into the root prior
(AlphaZero's self-play exploration; the noise is drawn from the same generator).

The value of a rollout equals the negative undiscounted env return from the root (``reward``
matching ``objective``) divided by ``reward_scale``: the env's reward is ``−Δ(objective area) ·
scale``.
"""

from __future__ import annotations

import dataclasses
import math
import time
from typing import Any, Callable, Protocol, Sequence

import numpy as np

from ddl_gym.baselines.classic.backfill import EasyBackfillPolicy
from ddl_gym.baselines.classic.policy import ORDERS, ClassicPolicy
from ddl_gym.sim.priority import priority_key
from ddl_gym.envs.cluster_env import DDLClusterEnv
from ddl_gym.placement import get_placement_rule
from ddl_gym.scenarios import Scenario, get_scenario
from ddl_gym.sim.engine import Simulator
from ddl_gym.sim.metrics import SimResult
from ddl_gym.sim.model import ClusterSpec, ConfigError, Workload

OBJECTIVES = ("jct", "makespan", "weighted_jct")
#: ``future=``: ``"oracle"`` forks see the true future (clairvoyant); ``"sampled"`` forks draw it.
FUTURES = ("oracle", "sampled", "determinized")

PriorFn = Callable[[np.ndarray, np.ndarray, dict], np.ndarray]


# ---------------------------------------------------------------------------- classic guide as env actions
def _classic_key(sim: Simulator, order: str) -> list[float] | None:
    """ClassicPolicy's priority key per job (None for FIFO = arrival/index order)."""
    key = priority_key(sim, order)
    return None if key is None else key.tolist()


def classic_env_action(env: DDLClusterEnv, order: str = "srsf", placement: str = "pack",
                       key: Sequence[float] | None = None) -> int:
    """The env action a classic ``order+placement`` policy takes now.

    The first job of the queue window, in the policy's priority order, that fits the free GPUs is
    started with ``placement`` (its index in ``env.placement_names``); if none fits, "advance" (0).
    FIFO keeps head-of-line blocking: only the oldest queued job is considered. Only the env's
    window is visible, so with more than ``window`` queued jobs this can differ from the native
    policy, which sees the whole queue.

    Args:
        env: a reset :class:`DDLClusterEnv`.
        order: ``"fifo"``, ``"sjf"`` or ``"srsf"``.
        placement: a placement rule name or alias that is one of the env's ``placements``.
        key: precomputed priority key per job (speeds up repeated calls); computed if omitted.

    Raises:
        ConfigError: unknown order, or a placement rule the env does not offer.
    """
    if order not in ORDERS:
        raise ConfigError(f"unknown job order {order!r}; choose one of {ORDERS}")
    sim = env.sim
    if sim is None:
        raise ConfigError("classic_env_action needs a reset env")
    p = _placement_index(env, placement)
    window: list[int] = env._window  # the env re-sorts it on every step (queue_order); read only
    if not window or sim.done:
        return 0
    if order == env.queue_order and order != "fifo":
        # The guide ranks like the window: its action is the lowest startable slot of the mask.
        return _first_start(env, p)
    if order == "fifo":
        head = sim.queue[0]  # the queue is in arrival order
        if head not in window:
            return 0  # the oldest job is outside the window: FIFO blocks
        candidates = [head]
    else:
        if key is None:
            key = _classic_key(sim, order)
        assert key is not None
        candidates = sorted(window, key=lambda j: (key[j], j))
    gpus = env._gpus
    n_rules = len(env.placement_names)
    for job in candidates:
        if gpus[job] <= sim.num_free:
            return 1 + window.index(job) * n_rules + p
    return 0


def _first_start(env: DDLClusterEnv, rule: int) -> int:
    """``1 + w·P + rule`` for the lowest slot ``w`` whose job fits now, else 0 (advance)."""
    starts = env._mask_key >> 1  # bit w: slot w's job fits the free GPUs (the env keeps it current)
    if not starts:
        return 0
    slot = (starts & -starts).bit_length() - 1
    return 1 + slot * len(env.placement_names) + rule


def _placement_index(env: DDLClusterEnv, placement: str) -> int:
    rule = get_placement_rule(placement)
    for index, env_rule in enumerate(env._rules):
        if env_rule is rule:
            return index
    raise ConfigError(f"placement {placement!r} is not one of the env's placements {env.placement_names}")


class ClassicGuide:
    """A classic ``order+placement`` rule as an env-action rollout policy (plus its native twin).

    Args:
        order: ``"fifo"``, ``"sjf"`` or ``"srsf"``.
        placement: placement rule name or alias.
    """

    def __init__(self, order: str = "srsf", placement: str = "pack") -> None:
        self.policy = ClassicPolicy(order, placement)  # validates both names
        self.order = order
        self.placement = placement
        self.name = f"{order}+{placement}"
        self._key_for: Any = None  # the workload the key was computed for (held: an id() could be reused)
        self._key: list[float] | None = None
        self._rule_for: tuple[str, ...] | None = None
        self._rule = 0

    def key(self, sim: Simulator) -> list[float] | None:
        if self._key_for is not sim.workload:
            self._key = _classic_key(sim, self.order)
            self._key_for = sim.workload
        return self._key

    def env_action(self, env: DDLClusterEnv) -> int:
        sim = env.sim
        assert sim is not None
        if self.order == env.queue_order and self.order != "fifo" and not sim.done:
            names = env.placement_names
            if self._rule_for != names:
                self._rule = _placement_index(env, self.placement)
                self._rule_for = names
            return _first_start(env, self._rule) if env._window else 0
        return classic_env_action(env, self.order, self.placement, key=self.key(sim))

    def finish_native(self, sim: Simulator, rng: np.random.Generator) -> None:
        """Run the native policy on ``sim`` (mutated) until every job has finished."""
        self.policy.reset(sim, rng, key=self.key(sim))
        _schedule_to_end(sim, self.policy)


def _schedule_to_end(sim: Simulator, policy: Any) -> None:
    """Let ``policy`` (already reset on ``sim``) schedule at every decision point until every job has finished."""
    while not sim.done:
        if sim.queue:
            policy.schedule(sim)
        if not sim.advance():
            break


class EasyFinish:
    """EASY backfilling (``easy-<order>+<placement>``) as the native finish of rollouts (``fallback=``).

    Rollouts only finish natively with a fallback, so EASY needs no env-level twin here.
    """

    def __init__(self, name: str) -> None:
        order, _, placement = name.removeprefix("easy-").partition("+")
        self.policy = EasyBackfillPolicy(order, placement or "pack")  # validates both names
        self.name = self.policy.name

    def finish_native(self, sim: Simulator, rng: np.random.Generator) -> None:
        """Run EASY on ``sim`` (mutated) until every job has finished (its tables rebuilt for ``sim``'s
        workload: a sampled future is another workload)."""
        self.policy.reset(sim, rng)
        _schedule_to_end(sim, self.policy)


def native_finish(name: str) -> ClassicGuide | EasyFinish:
    """The rollout finish named ``name``: a classic greedy ``order+placement`` or EASY ``easy-<order>+<placement>``."""
    if name.startswith("easy-"):
        return EasyFinish(name)
    order, _, placement = name.partition("+")
    return ClassicGuide(order, placement or "pack")


# ---------------------------------------------------------------------------- search tree
class LeafEstimator(Protocol):
    """What the paired search asks of a leaf evaluator (``MCTSPolicy(leaf=...)``).

    ``prepare(twin)`` runs once per sampled future (the twin env as forked at the root) and returns a
    context; ``estimate(env, obs, context)`` returns the estimated episode Σ JCT (s) of the state
    ``env`` (observation ``obs``) reached on that future, in the units of ``sim.jobs_area``.
    """

    def prepare(self, twin: DDLClusterEnv) -> Any: ...

    def estimate(self, env: DDLClusterEnv, obs: np.ndarray, context: Any) -> float: ...


@dataclasses.dataclass
class _Node:
    env: DDLClusterEnv
    obs: np.ndarray | None
    info: dict[str, Any] | None
    mask: np.ndarray
    valid: np.ndarray  # valid action indices
    terminal: bool
    children: dict[int, _Node] = dataclasses.field(default_factory=dict)
    prior: np.ndarray | None = None  # over `valid`
    visits: int = 0
    cost_sum: float = 0.0
    best_cost: float = math.inf
    guide_action: int | None = None


@dataclasses.dataclass
class SearchStats:
    """What one decision's search did.

    ``root_visits[a]`` sums to ``simulations`` on a fresh tree; with tree reuse it also counts the
    visits inherited from the previous decision's search. ``root_best_cost`` is the best episode
    cost (objective area, unscaled) found below each root child. ``root_prior`` is the oracle tree's
    root prior over its valid actions as searched (root noise included); ``None`` where not recorded.
    """

    action: int
    guide_action: int
    simulations: int
    root_visits: dict[int, int]
    root_best_cost: dict[int, float]
    wall_s: float
    root_prior: dict[int, float] | None = None


def _fingerprint(env: DDLClusterEnv) -> tuple:
    # id(sim.workload) is safe here: the stored fingerprint's root node keeps its workload alive.
    sim = env.sim
    assert sim is not None
    return (id(sim.workload), sim.decisions, sim.now, sim.jobs_area, sim.num_finished, tuple(sim.queue),
            tuple(sim.running), repr(env.np_random.bit_generator.state))


class MCTSPolicy:
    """Spear-style MCTS scheduler over ``DDLCluster-v0`` actions (see the module docstring).

    Args:
        guide: ``"order+placement"`` (classic rule, e.g. ``"srsf+pack"``) or an object with
            ``act(obs, action_mask, info) -> int`` (e.g. a trained agent); optional
            ``env_kwargs`` on it configure the env (observation layout must match its training).
        simulations: tree-search iterations per decision (each = one fork + step + rollout).
        depth: env decisions a rollout follows the guide before the episode is finished natively
            by ``fallback``; ``None`` follows the guide at env level to the end (exact).
        c_uct: PUCT exploration constant.
        objective: ``"jct"`` (Σ JCT), ``"makespan"`` or ``"weighted_jct"``.
        prior: ``"guide"`` (``guide_weight`` on the guide's action, rest uniform over valid
            actions), ``"uniform"``, or a callable ``(obs, mask, info) -> probabilities``.
        guide_weight: prior mass of the guide's action for ``prior="guide"``.
        backup: ``"best"`` (min cost below a node; deterministic env) or ``"mean"``.
        final: root choice, ``"best"`` (lowest cost) or ``"visits"`` (most visited).
        fallback: classic rule or EASY (``easy-<order>+<rule>``) finishing truncated rollouts natively
            (default: the guide if it is classic, else ``"srsf+pack"``).
        reuse_tree: keep the chosen child's subtree for the next decision.
        env_kwargs: extra :class:`DDLClusterEnv` arguments (window, placements, queue_order).
        seed: recorded for reproducibility; the oracle search has no randomness of its own (its
            rollouts use the forked envs' generators), so it is deterministic for a given env seed;
            the sampled search draws its futures from ``default_rng((seed, decision))``.
        future: ``"oracle"`` (clairvoyant forks: the true future) or ``"sampled"`` (non-clairvoyant:
            forks with futures drawn from the scenario's arrival model); see the module docstring.
        samples: futures drawn per decision (``future="sampled"``); the simulations are split among them.
        root_noise: weight of Dirichlet(``noise_alpha``) noise mixed into the root prior (0: none).
        noise_alpha: its concentration.
        root_candidates: the root actions expanded first (the guide's, then the most probable under
            the prior; per sampled tree for ``future="sampled"``); a peaked prior otherwise sends every
            simulation of a small budget below the guide's action.
        leaf: ``future="sampled"`` only: a :class:`LeafEstimator` that replaces the ``fallback``
            finish of every evaluation after its ``depth`` guide steps (e.g. a network's value head,
            :class:`ddl_gym.agents.search_eval.ValueLeaf`); ``None`` (default) finishes natively.
    """

    engine = "job"

    def __init__(
        self,
        guide: str | Any = "srsf+pack",
        *,
        simulations: int = 32,
        depth: int | None = None,
        c_uct: float = 1.0,
        objective: str = "jct",
        prior: str | PriorFn = "guide",
        guide_weight: float = 0.5,
        backup: str = "best",
        final: str = "best",
        fallback: str | None = None,
        reuse_tree: bool = True,
        env_kwargs: dict[str, Any] | None = None,
        seed: int | None = None,
        future: str = "oracle",
        samples: int = 4,
        root_noise: float = 0.0,
        noise_alpha: float = 0.3,
        root_candidates: int = 1,
        leaf: LeafEstimator | None = None,
    ) -> None:
        from ddl_gym.bounds import check_int

        check_int(simulations, 1, 100_000, "mcts: simulations (sims)")  # per decision: 10^5 already takes hours
        if depth is not None:
            check_int(depth, 0, 10**7, "mcts: depth")
        if objective not in OBJECTIVES:
            raise ConfigError(f"objective must be one of {OBJECTIVES}, got {objective!r}")
        if backup not in ("best", "mean"):
            raise ConfigError(f"backup must be 'best' or 'mean', got {backup!r}")
        if final not in ("best", "visits"):
            raise ConfigError(f"final must be 'best' or 'visits', got {final!r}")
        if future not in FUTURES:
            raise ConfigError(f"future must be one of {FUTURES} ('oracle' sees the true future), got {future!r}")
        check_int(samples, 1, 10_000, "mcts: samples")
        check_int(root_candidates, 1, 10_000, "mcts: root_candidates")
        if not 0.0 <= float(root_noise) <= 1.0 or not float(noise_alpha) > 0.0:
            raise ConfigError("mcts: root_noise must lie in [0, 1] and noise_alpha be > 0")
        if not callable(prior) and prior not in ("guide", "uniform"):
            raise ConfigError(f"prior must be 'guide', 'uniform' or a callable, got {prior!r}")
        if leaf is not None:
            if future != "sampled":
                raise ConfigError(f"mcts: a leaf estimator is used by the paired search only (future='sampled'), "
                                  f"not future={future!r}")
            if objective != "jct":
                raise ConfigError(f"mcts: a leaf estimator estimates Σ JCT; objective={objective!r} has none")
            if isinstance(guide, str):
                raise ConfigError("mcts: a leaf estimator reads observations; the guide must be a policy, not a classic rule")
            if depth is None:
                raise ConfigError("mcts: a leaf estimator scores the state after `depth` guide steps; depth=None "
                                  "rolls out to the end and would never use it")
        self.classic_guide: ClassicGuide | None = None
        self.guide_policy: Any = None
        if isinstance(guide, str):
            order, _, placement = guide.partition("+")
            self.classic_guide = ClassicGuide(order, placement or "pack")
            guide_name = self.classic_guide.name
        else:
            if not hasattr(guide, "act"):
                raise ConfigError("guide must be 'order+placement' or an object with act(obs, action_mask, info)")
            self.guide_policy = guide
            guide_name = str(getattr(guide, "name", type(guide).__name__))
        fallback_name = fallback or (guide_name if self.classic_guide is not None else "srsf+pack")
        self.fallback = native_finish(fallback_name)
        self.simulations = int(simulations)
        self.depth = depth
        self.c_uct = float(c_uct)
        self.objective = objective
        self.prior = prior
        self.guide_weight = float(guide_weight)
        self.backup = backup
        self.final = final
        self.reuse_tree = reuse_tree
        self.seed = seed
        self.future = future
        self.samples = int(samples)
        self.root_noise = float(root_noise)
        self.noise_alpha = float(noise_alpha)
        self.root_candidates = int(root_candidates)
        self.leaf = leaf
        self._sampler: Any = None
        self._sampler_for: Any = None
        self._searches = 0
        tag = "oracle" if future == "oracle" else ("sampled" if future == "sampled" else f"determinized×{samples}")
        leaf_tag = "" if leaf is None else f",leaf={getattr(leaf, 'name', type(leaf).__name__)}"
        self.name = (f"mcts[{guide_name},sims={simulations},depth={'end' if depth is None else depth},{objective},"
                     f"future={tag}{leaf_tag}]")
        kwargs: dict[str, Any] = dict(getattr(guide, "env_kwargs", None) or {})
        kwargs.update(env_kwargs or {})
        kwargs["reward"] = objective
        # A classic guide can name an invalid action (FIFO head outside the window while advance is
        # invalid); in the search envs that stays a no-op, as in the first release, so searches and
        # their results are unchanged by the env's default invalid_action="wait".
        kwargs.setdefault("invalid_action", "noop")
        if self.classic_guide is not None:
            placements = tuple(kwargs.get("placements", ("pack", "spread", "contention_aware")))
            if not any(get_placement_rule(p) is self.classic_guide.policy.rule for p in placements):
                placements = placements + (self.classic_guide.placement,)  # the guide must be expressible
            kwargs["placements"] = placements
        self.env_kwargs = kwargs
        self._needs_obs = self.guide_policy is not None or callable(prior)
        self._bound: DDLClusterEnv | None = None
        self._root: _Node | None = None
        self._root_print: tuple | None = None
        self.last_stats: SearchStats | None = None
        self.decision_times: list[float] = []

    # ------------------------------------------------------------------ harness API
    def reset(self, *args: Any, seed: int | None = None, **_: Any) -> None:
        """Forget the search tree (call between episodes). ``reset(seed)`` or ``reset(seed=...)``."""
        if args and isinstance(args[0], (int, np.integer)):
            seed = int(args[0])
        if seed is not None:
            self.seed = seed
        self._root = None
        self._root_print = None
        self._searches = 0
        self.decision_times = []
        if self.guide_policy is not None and hasattr(self.guide_policy, "reset"):
            try:
                self.guide_policy.reset(seed=seed)
            except TypeError:
                pass

    def bind(self, env: DDLClusterEnv) -> MCTSPolicy:
        """Bind the env that :meth:`act` plans on (MCTS needs the simulator, not just the observation)."""
        self._bound = env.unwrapped if hasattr(env, "unwrapped") else env
        return self

    def act(self, obs: np.ndarray, action_mask: np.ndarray, info: dict[str, Any]) -> int:
        """Harness-style call; works only after :meth:`bind` (the search forks the bound env)."""
        if self._bound is None:
            raise ConfigError(
                "MCTSPolicy plans on the env itself: call policy.bind(env) first, use act_env(env), "
                "or let the harness call run_episode(scenario, cluster, workload, rng)"
            )
        return self.act_env(self._bound)

    def act_env(self, env: DDLClusterEnv) -> int:
        """Search from ``env``'s current state (left untouched) and return the chosen action."""
        return self.search(env).action

    def run_episode(self, scenario: str | Scenario, cluster: ClusterSpec, workload: Workload,
                    rng: np.random.Generator) -> SimResult:
        """Schedule one whole episode with MCTS decisions; returns the simulator's records."""
        scen = get_scenario(scenario) if isinstance(scenario, str) else scenario
        scen = dataclasses.replace(scen, cluster=cluster)  # the harness's cluster, even for sampled ones
        from ddl_gym.envs.agent_env import make_agent_env

        env = make_agent_env(scen, self.env_kwargs)  # v0, or v1 for agents trained on DDLCluster-*-v1
        seed = int(rng.integers(2**31 - 1))
        self.reset(seed=seed)
        env.reset(seed=seed, options={"workload": workload})
        assert env.sim is not None
        while not env.sim.done:
            env.step(self.act_env(env))
        return env.sim.result(self.name)

    # ------------------------------------------------------------------ search
    def search(self, env: DDLClusterEnv) -> SearchStats:
        """Run ``simulations`` MCTS iterations from ``env``'s state; ``env`` is only forked."""
        start = time.perf_counter()
        if env.sim is None:
            raise ConfigError("search needs a reset env")
        if self.future == "determinized":
            return self._search_sampled(env, start)
        if self.future == "sampled":
            return self._search_paired(env, start)
        root = self._take_root(env)
        guide_action = self._guide_action(root)
        root.guide_action = guide_action
        sims = 0
        if len(root.valid) > 1 and not root.terminal:
            if self.root_noise > 0:  # AlphaZero's exploration noise; the generator is (seed, decision)
                rng = np.random.default_rng((0 if self.seed is None else int(self.seed), self._searches))
                prior = self._priors(root)
                root.prior = ((1.0 - self.root_noise) * prior
                              + self.root_noise * rng.dirichlet(np.full(len(root.valid), self.noise_alpha)))
            self._searches += 1
            # The guide's action first: its rollout is exactly "follow the guide from here"; then the
            # next ``root_candidates - 1`` most probable root actions under the prior.
            self._simulate(root, forced=guide_action)
            sims = 1
            if self.root_candidates > 1:
                prior = self._priors(root)
                actions = root.valid.tolist()
                ranked = [actions[i] for i in np.argsort(-prior, kind="stable") if actions[i] != guide_action]
                for action in ranked[: max(0, min(self.root_candidates, self.simulations) - 1)]:
                    self._simulate(root, forced=action)
                    sims += 1
            while sims < self.simulations:
                self._simulate(root)
                sims += 1
            action = self._choose(root)
        else:
            # One valid action: no search, but keep its subtree (it may hold the best plan found).
            action = int(root.valid[0]) if len(root.valid) else 0
        stats = SearchStats(
            action=action, guide_action=guide_action, simulations=sims,
            root_visits={a: c.visits for a, c in root.children.items()},
            root_best_cost={a: c.best_cost for a, c in root.children.items()},
            wall_s=time.perf_counter() - start,
            root_prior=(None if root.prior is None else
                        {int(a): float(p) for a, p in zip(root.valid.tolist(), root.prior)}),
        )
        if self.reuse_tree and action in root.children:
            self._root = root.children[action]
            self._root_print = _fingerprint(self._root.env)
        else:
            self._root = None
            self._root_print = None
        self.last_stats = stats
        self.decision_times.append(stats.wall_s)
        return stats

    def _future_rng(self, base: DDLClusterEnv) -> np.random.Generator:
        from ddl_gym.futures import FutureSampler

        rng = np.random.default_rng((0 if self.seed is None else int(self.seed), self._searches))
        self._searches += 1
        if self._sampler is None or self._sampler_for is not base.scenario:
            self._sampler = FutureSampler(base.scenario, clairvoyant=bool(getattr(base, "clairvoyant", True)))
            self._sampler_for = base.scenario
        self._root = None
        self._root_print = None
        return rng

    def _search_paired(self, env: DDLClusterEnv, start: float) -> SearchStats:
        """Non-clairvoyant paired root search (module docstring): regret vs the guide on common sampled futures."""
        base = env.unwrapped if hasattr(env, "unwrapped") else env
        rng = self._future_rng(base)
        obs = info = None
        if self._needs_obs:
            obs = base._observe()
            info = base._info(invalid=False)
        root = self._make_node(base, obs, info)  # the real env: read only (every evaluation forks a sampled twin)
        valid = root.valid
        guide_action = self._guide_action(root)
        visits: dict[int, int] = {}
        regret_sum: dict[int, float] = {}
        sims = 0
        if len(valid) > 1 and not root.terminal:
            prior = self._priors(root).copy()
            if self.root_noise > 0:
                prior = (1.0 - self.root_noise) * prior + self.root_noise * rng.dirichlet(np.full(len(valid), self.noise_alpha))
            futures: list[DDLClusterEnv] = []
            contexts: list[Any] = []  # the leaf estimator's per-future context (e.g. the reference's run on it)
            baseline: list[float] = []
            actions = valid.tolist()
            index = {a: i for i, a in enumerate(actions)}

            def evaluate(action: int) -> None:
                # The i-th visit of an action runs on future i; the guide's evaluation there is the
                # control (paid once per future, a visit of the guide only when it is chosen).
                nonlocal sims
                i = visits.get(action, 0)
                while len(futures) <= i:  # a new future, and the guide's action on it
                    twin = self._sampler.fork(base, rng)
                    futures.append(twin)
                    contexts.append(self.leaf.prepare(twin) if self.leaf is not None else None)
                    baseline.append(self._action_cost(twin, guide_action, contexts[-1]))
                    sims += 1
                visits[action] = i + 1
                if action == guide_action:
                    regret_sum[action] = 0.0
                    return
                cost = self._action_cost(futures[i], action, contexts[i])
                regret_sum[action] = regret_sum.get(action, 0.0) + cost - baseline[i]
                sims += 1

            ranked = [guide_action] + [actions[i] for i in np.argsort(-prior, kind="stable") if actions[i] != guide_action]
            for action in ranked[: max(1, min(self.root_candidates, self.simulations))]:
                evaluate(action)
            rounds = 0
            while sims < self.simulations and rounds < 4 * self.simulations:
                rounds += 1
                means = {a: regret_sum[a] / visits[a] for a in visits}
                lo, hi = min(means.values()), max(means.values())
                span = hi - lo
                sqrt_n = math.sqrt(sum(visits.values()))
                best_score, best_action = -math.inf, guide_action
                for a in actions:
                    n = visits.get(a, 0)
                    m = means[a] if n else 0.0  # first-play value: the guide's (regret 0)
                    q = (hi - m) / span if span > 0 else 0.5
                    score = q + self.c_uct * prior[index[a]] * sqrt_n / (1 + n)
                    if score > best_score:
                        best_score, best_action = score, a
                evaluate(best_action)
            means = {a: regret_sum[a] / visits[a] for a in visits}
            if self.final == "visits":
                action = min(visits, key=lambda a: (-visits[a], means[a], a != guide_action, a))
            else:
                action = min(means, key=lambda a: (means[a], a != guide_action, -visits[a], a))
        else:
            action = int(valid[0]) if len(valid) else 0
            means = {}
        stats = SearchStats(action=int(action), guide_action=int(guide_action), simulations=sims, root_visits=visits,
                            root_best_cost=means, wall_s=time.perf_counter() - start)
        self.last_stats = stats
        self.decision_times.append(stats.wall_s)
        return stats

    def _action_cost(self, env: DDLClusterEnv, action: int, context: Any = None) -> float:
        """Episode cost of ``action`` then the rollout (``depth`` guide steps, then ``fallback`` or the leaf
        estimator with its ``context``) from ``env`` (forked)."""
        twin = env.fork()
        if self._needs_obs and (self.depth or self.leaf is not None):
            obs, _, _, _, info = twin.step(action)
            node = self._make_node(twin, obs, info)
        else:
            twin.apply_action(action)
            node = self._make_node(twin, None, None)
        return self._rollout(node, context)

    def _search_sampled(self, env: DDLClusterEnv, start: float) -> SearchStats:
        """Non-clairvoyant search: one tree per sampled future, root visits summed (module docstring)."""
        base = env.unwrapped if hasattr(env, "unwrapped") else env
        rng = self._future_rng(base)
        mask = base.action_masks()
        valid = np.flatnonzero(mask)
        visits: dict[int, int] = {}
        regret: dict[int, list[float]] = {}
        guide_action = -1
        sims = 0
        noise = None
        if len(valid) > 1 and not base.sim.done:  # type: ignore[union-attr]
            if self.root_noise > 0:
                noise = rng.dirichlet(np.full(len(valid), self.noise_alpha))
            per = [self.simulations // self.samples + (1 if b < self.simulations % self.samples else 0)
                   for b in range(self.samples)]
            for budget in per:
                if budget < 1:
                    continue
                twin = self._sampler.fork(base, rng)
                obs = info = None
                if self._needs_obs:
                    obs = twin._observe()
                    info = twin._info(invalid=False)
                root = self._make_node(twin, obs, info)
                guide_action = self._guide_action(root)
                if noise is not None:
                    prior = self._priors(root)
                    root.prior = (1.0 - self.root_noise) * prior + self.root_noise * noise
                prior = self._priors(root)
                ranked = [guide_action] + [int(root.valid[i]) for i in np.argsort(-prior, kind="stable")
                                           if int(root.valid[i]) != guide_action]
                forced = ranked[: max(1, min(self.root_candidates, budget))]
                for a in forced:
                    self._simulate(root, forced=a)
                for _ in range(budget - len(forced)):
                    self._simulate(root)
                sims += budget
                best = min(c.best_cost for c in root.children.values())
                for a, child in root.children.items():
                    visits[a] = visits.get(a, 0) + child.visits
                    regret.setdefault(a, []).append(child.best_cost - best)
            full = [a for a, r in regret.items() if len(r) == len(regret[guide_action])]
            if self.final == "visits":
                action = min(visits, key=lambda a: (-visits[a], a != guide_action, a))
            else:
                action = min(full, key=lambda a: (float(np.mean(regret[a])), a != guide_action, -visits[a], a))
        else:
            action = int(valid[0]) if len(valid) else 0
            guide_action = action
        stats = SearchStats(action=int(action), guide_action=int(guide_action), simulations=sims,
                            root_visits=visits, root_best_cost={a: float(np.mean(r)) for a, r in regret.items()},
                            wall_s=time.perf_counter() - start)
        self.last_stats = stats
        self.decision_times.append(stats.wall_s)
        return stats

    def _take_root(self, env: DDLClusterEnv) -> _Node:
        if self._root is not None and self._root_print == _fingerprint(env):
            return self._root
        twin = env.fork()
        obs = info = None
        if self._needs_obs:
            obs = twin._observe()  # the env has no public "current observation" getter
            info = twin._info(invalid=False)
        return self._make_node(twin, obs, info)

    def _make_node(self, env: DDLClusterEnv, obs: np.ndarray | None, info: dict | None) -> _Node:
        assert env.sim is not None
        mask = env.action_masks()
        return _Node(env=env, obs=obs, info=info, mask=mask, valid=np.flatnonzero(mask),
                     terminal=env.sim.done)

    def _cost(self, sim: Simulator) -> float:
        if self.objective == "jct":
            return sim.jobs_area
        if self.objective == "weighted_jct":
            return sim.weighted_area
        return sim.now

    def _guide_env_action(self, env: DDLClusterEnv, obs: np.ndarray | None, info: dict | None) -> int:
        if self.classic_guide is not None:
            return self.classic_guide.env_action(env)
        mask = env.action_masks()
        if obs is None or info is None:
            obs = env._observe()
            info = env._info(invalid=False)
        action = int(self.guide_policy.act(obs, mask, info))
        if not (0 <= action < mask.size and mask[action]):
            action = int(np.flatnonzero(mask)[0])  # a guide that ignores the mask: keep rollouts valid
        return action

    def _guide_action(self, node: _Node) -> int:
        if node.guide_action is None:
            node.guide_action = self._guide_env_action(node.env, node.obs, node.info)
        return node.guide_action

    def _priors(self, node: _Node) -> np.ndarray:
        if node.prior is None:
            k = len(node.valid)
            if callable(self.prior):
                assert node.obs is not None and node.info is not None
                probs = np.asarray(self.prior(node.obs, node.mask, node.info), dtype=np.float64)[node.valid]
                total = probs.sum()
                prior = probs / total if total > 0 else np.full(k, 1.0 / k)
            elif self.prior == "uniform" or k == 1:
                prior = np.full(k, 1.0 / k)
            else:
                guide = self._guide_action(node)
                prior = np.full(k, (1.0 - self.guide_weight) / k)
                prior[np.searchsorted(node.valid, guide)] += self.guide_weight
            node.prior = prior
        return node.prior

    def _value(self, node: _Node) -> float:
        return node.best_cost if self.backup == "best" else node.cost_sum / max(1, node.visits)

    def _select(self, node: _Node, lo: float, hi: float) -> int:
        prior = self._priors(node)
        span = hi - lo
        sqrt_n = math.sqrt(max(1, node.visits))
        parent_q = (hi - self._value(node)) / span if span > 0 and node.visits else 0.5
        best_score, best_action = -math.inf, int(node.valid[0])
        for i, action in enumerate(node.valid.tolist()):
            child = node.children.get(action)
            if child is None or child.visits == 0:
                q, n = parent_q, 0  # first-play urgency: the parent's value
            else:
                q = (hi - self._value(child)) / span if span > 0 else 0.5
                n = child.visits
            score = q + self.c_uct * prior[i] * sqrt_n / (1 + n)
            if score > best_score:  # strict: ties go to the lowest action index (deterministic)
                best_score, best_action = score, action
        return best_action

    def _simulate(self, root: _Node, forced: int | None = None) -> None:
        lo, hi = self._bounds(root)
        path = [root]
        node = root
        action = forced
        while True:
            if node.terminal:
                cost = self._cost(node.env.sim)  # type: ignore[arg-type]
                break
            if action is None:
                action = self._select(node, lo, hi)
            child = node.children.get(action)
            if child is None:
                child = self._expand(node, action)
                path.append(child)
                cost = self._rollout(child)
                break
            path.append(child)
            node = child
            action = None
        for visited in path:
            visited.visits += 1
            visited.cost_sum += cost
            if cost < visited.best_cost:
                visited.best_cost = cost

    def _bounds(self, root: _Node) -> tuple[float, float]:
        """Min and max backed-up value in the tree's top two levels (for Q normalisation)."""
        values = [self._value(c) for c in root.children.values() if c.visits]
        for c in root.children.values():
            values.extend(self._value(g) for g in c.children.values() if g.visits)
        if root.visits:
            values.append(self._value(root))
        if not values:
            return 0.0, 0.0
        return min(values), max(values)

    def _expand(self, node: _Node, action: int) -> _Node:
        twin = node.env.fork()
        if self._needs_obs:
            obs, _, _, _, info = twin.step(action)
            child = self._make_node(twin, obs, info)
        else:  # a classic guide and prior read the simulator, not the observation
            twin.apply_action(action)
            child = self._make_node(twin, None, None)
        node.children[action] = child
        return child

    def _rollout(self, leaf: _Node, context: Any = None) -> float:
        """Episode cost of "the leaf's state, then the guide" (leaf state untouched): the guide for ``depth``
        decisions, then the native ``fallback`` finish or, with a leaf estimator, its estimate."""
        if leaf.terminal:
            return self._cost(leaf.env.sim)  # type: ignore[arg-type]
        env = leaf.env.fork()
        assert env.sim is not None
        obs, info = leaf.obs, leaf.info
        steps = 0
        sim = env.sim
        if self.classic_guide is not None and not self._needs_obs:
            guide = self.classic_guide.env_action
            while not sim.done and (self.depth is None or steps < self.depth):
                env.apply_action(guide(env))
                steps += 1
        while not sim.done and (self.depth is None or steps < self.depth):
            action = self._guide_env_action(env, obs, info)
            obs, _, _, _, info = env.step(action)
            steps += 1
        if not env.sim.done:
            if self.leaf is not None:
                assert obs is not None  # a leaf needs a policy guide, so every node and step carries its observation
                return float(self.leaf.estimate(env, obs, context))
            sim = env.sim
            self.fallback.finish_native(sim, env.np_random)
        return self._cost(env.sim)

    def _choose(self, root: _Node) -> int:
        best, best_key = None, None
        for action, child in root.children.items():
            not_guide = action != root.guide_action  # ties go to the guide (e.g. equal makespans)
            if self.final == "best":
                key = (self._value(child), not_guide, -child.visits, action)
            else:
                key = (-child.visits, self._value(child), not_guide, action)
            if best_key is None or key < best_key:
                best, best_key = action, key
        assert best is not None
        return int(best)


# ---------------------------------------------------------------------------- spec parsing
def make_mcts_policy(spec: str = "mcts") -> MCTSPolicy:
    """Build an :class:`MCTSPolicy` from ``"mcts:guide=srsf+pack,sims=32,depth=20,objective=jct"``.

    Keys: ``guide`` (classic ``order+placement`` or ``policy=<load_policy spec>`` via
    :func:`ddl_gym.agents.load_policy`), ``sims``/``simulations``, ``depth`` (int or ``end``),
    ``c``/``c_uct``, ``objective``, ``prior`` (``guide``/``uniform``), ``guide_weight``, ``backup``,
    ``final``, ``fallback``, ``window``, ``queue_order``, ``seed``, ``future`` (``oracle`` — clairvoyant —
    or ``sampled``), ``samples``, ``root_noise``, ``root_candidates``.

    Raises:
        ConfigError: malformed spec or unknown key.
    """
    head, _, rest = spec.strip().partition(":")
    if head.lower() != "mcts":
        raise ConfigError(f"MCTS spec must start with 'mcts', got {spec!r}")
    kwargs: dict[str, Any] = {}
    env_kwargs: dict[str, Any] = {}
    guide: Any = "srsf+pack"
    for item in filter(None, (part.strip() for part in rest.split(","))):
        key, sep, value = item.partition("=")
        if not sep:
            raise ConfigError(f"MCTS spec item {item!r} is not key=value")
        key = key.strip().lower()
        value = value.strip()
        if key == "guide":
            guide = value
        elif key == "policy":
            from ddl_gym.agents import load_policy

            guide = load_policy(value)
        elif key in ("sims", "simulations"):
            kwargs["simulations"] = int(value)
        elif key == "depth":
            kwargs["depth"] = None if value.lower() in ("end", "none", "inf") else int(value)
        elif key in ("c", "c_uct"):
            kwargs["c_uct"] = float(value)
        elif key in ("objective", "prior", "backup", "final", "fallback"):
            kwargs[key] = value
        elif key == "guide_weight":
            kwargs["guide_weight"] = float(value)
        elif key == "seed":
            kwargs["seed"] = int(value)
        elif key == "future":
            kwargs["future"] = value
        elif key == "samples":
            kwargs["samples"] = int(value)
        elif key == "root_noise":
            kwargs["root_noise"] = float(value)
        elif key in ("root_candidates", "candidates"):
            kwargs["root_candidates"] = int(value)
        elif key == "window":
            env_kwargs["window"] = int(value)
        elif key == "queue_order":
            env_kwargs["queue_order"] = value
        else:
            raise ConfigError(f"unknown MCTS spec key {key!r} in {spec!r}")
    return MCTSPolicy(guide, env_kwargs=env_kwargs, **kwargs)


__all__ = ["MCTSPolicy", "SearchStats", "ClassicGuide", "classic_env_action", "make_mcts_policy", "OBJECTIVES", "FUTURES"]
