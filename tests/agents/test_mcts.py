"""Spear-style MCTS agent: mechanics only (no performance assertions)."""

from __future__ import annotations

import numpy as np
import pytest

from ddl_gym.agents.mcts import ClassicGuide, MCTSPolicy, classic_env_action, make_mcts_policy
from ddl_gym.baselines.classic.policy import ClassicPolicy
from ddl_gym.envs.cluster_env import DDLClusterEnv
from ddl_gym.scenarios import get_scenario
from ddl_gym.sim.engine import Simulator, run_policy
from ddl_gym.sim.model import ConfigError


def _snapshot(env: DDLClusterEnv) -> tuple:
    sim = env.sim
    return (sim.now, sim.jobs_area, tuple(sim.queue), tuple(sim.running), sim.gpu_owner.tobytes(),
            sim.free_per_server.tobytes(), tuple(sim.remaining), sim.num_finished, tuple(env._window),
            repr(env.np_random.bit_generator.state))


def test_search_mechanics_and_real_env_untouched() -> None:
    env = DDLClusterEnv("small")
    env.reset(seed=0)
    policy = MCTSPolicy("srsf+pack", simulations=12, reuse_tree=False)
    searched = 0
    while not env.sim.done:
        before = _snapshot(env)
        stats = policy.search(env)
        assert _snapshot(env) == before  # the search only forks the env
        mask = env.action_masks()
        assert mask[stats.action] == 1
        if int(mask.sum()) > 1:
            searched += 1
            assert stats.simulations == 12
            assert sum(stats.root_visits.values()) == 12  # every simulation passes through one root child
            assert all(mask[a] == 1 for a in stats.root_visits)  # expansion only of valid actions
            assert stats.guide_action in stats.root_visits  # the guide's action is always evaluated
        _, _, _, _, info = env.step(stats.action)
        assert not info["invalid_action"]
    assert searched > 0


def test_tree_reuse_keeps_visits_and_never_takes_masked_actions() -> None:
    env = DDLClusterEnv("small")
    env.reset(seed=1)
    policy = MCTSPolicy("srsf+pack", simulations=8, depth=5, objective="makespan", env_kwargs={"reward": "makespan"})
    while not env.sim.done:
        action = policy.act_env(env)
        assert env.action_masks()[action] == 1
        _, _, _, _, info = env.step(action)
        assert not info["invalid_action"]


def _episode(spec: str, seed: int) -> dict:
    scenario = get_scenario("small")
    cluster, workload = scenario.episode(seed)
    policy = make_mcts_policy(spec)
    result = policy.run_episode("small", cluster, workload, np.random.default_rng(seed))
    assert np.all(np.isfinite(result.finish))  # ran to completion
    assert result.policy == policy.name
    return result.summary()


def test_run_episode_is_deterministic_for_a_seed() -> None:
    spec = "mcts:guide=srsf+pack,sims=6,depth=4,objective=jct"
    assert _episode(spec, 3) == _episode(spec, 3)


def test_full_depth_rollout_value_is_the_guides_env_return() -> None:
    """The guide child's rollout cost equals −(env return of following the guide) / reward_scale."""
    env = DDLClusterEnv("small")
    env.reset(seed=4)
    policy = MCTSPolicy("srsf+pack", simulations=1, depth=None)
    stats = policy.search(env)
    area0 = env.sim.jobs_area
    guide = ClassicGuide("srsf", "pack")
    twin, total = env.fork(), 0.0
    while not twin.sim.done:
        total += twin.step(guide.env_action(twin))[1]
    cost = stats.root_best_cost[stats.guide_action]
    assert (cost - area0) * env.reward_scale == pytest.approx(-total, rel=1e-12)


def test_classic_env_action_matches_native_policy_when_window_is_large() -> None:
    scenario = get_scenario("small")
    cluster, workload = scenario.episode(0)
    native = run_policy(Simulator(cluster, workload, scenario.model), ClassicPolicy("sjf", "pack"))
    env = DDLClusterEnv("small", window=64, queue_order="srsf")  # sjf guide re-sorts the srsf window
    env.reset(seed=0)
    while not env.sim.done:
        env.step(classic_env_action(env, "sjf", "pack"))
    assert np.array_equal(env.result().start, native.start)
    assert np.array_equal(env.result().finish, native.finish)


def test_policy_object_guide_and_callable_priors() -> None:
    class FirstValid:
        name = "first-valid"

        def act(self, obs, action_mask, info):
            return int(np.flatnonzero(action_mask)[-1])

    calls = []

    def priors(obs, mask, info):
        calls.append(1)
        return mask.astype(np.float64)

    env = DDLClusterEnv("small")
    env.reset(seed=2)
    policy = MCTSPolicy(FirstValid(), simulations=4, depth=3, prior=priors)
    for _ in range(5):
        action = policy.act_env(env)
        assert env.action_masks()[action] == 1
        env.step(action)
    assert calls


def test_act_requires_binding_and_spec_errors() -> None:
    policy = MCTSPolicy("srsf+pack", simulations=2)
    env = DDLClusterEnv("small")
    obs, info = env.reset(seed=0)
    with pytest.raises(ConfigError, match="bind"):
        policy.act(obs, info["action_mask"], info)
    assert info["action_mask"][policy.bind(env).act(obs, info["action_mask"], info)] == 1
    with pytest.raises(ConfigError):
        make_mcts_policy("mcts:bogus=1")
    with pytest.raises(ConfigError):
        make_mcts_policy("mcts:objective=latency")
    p = make_mcts_policy("mcts:guide=sjf+spread,sims=5,depth=end,objective=makespan,c=2")
    assert (p.simulations, p.depth, p.objective, p.c_uct) == (5, None, "makespan", 2.0)
    assert p.env_kwargs["reward"] == "makespan"


@pytest.mark.parametrize("objective,key", [("jct", "total_jct_s"), ("makespan", "makespan_s")])
def test_full_depth_best_backup_never_loses_the_guides_trajectory(objective: str, key: str) -> None:
    """Mechanics, not tuning: with exact rollouts and best-value backup the guide's own trajectory
    is always in the tree, so the episode's cost cannot exceed the guide's env-level cost."""
    scenario = get_scenario("small")
    for seed in (0, 1):
        cluster, workload = scenario.episode(seed)
        env = DDLClusterEnv("small")
        env.reset(seed=seed)
        guide = ClassicGuide("srsf", "pack")
        while not env.sim.done:
            env.step(guide.env_action(env))
        policy = MCTSPolicy("srsf+pack", simulations=3, depth=None, objective=objective)
        result = policy.run_episode("small", cluster, workload, np.random.default_rng(seed))
        assert result.summary()[key] <= env.result().summary()[key] * (1 + 1e-12)


def test_mcts_eval_script_smoke(tmp_path) -> None:
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[2] / "scripts" / "mcts_eval.py"
    out = tmp_path / "table.md"
    run = subprocess.run([sys.executable, str(script), "--scenario", "small", "--seeds", "0", "--sims", "2",
                          "--depth", "3", "--out", str(out)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    table = out.read_text()
    assert "| 0 | MCTS |" in table and "srsf+pack (native)" in table and "env.fork()" in table


def _reference_classic_action(env: DDLClusterEnv, order: str, placement: str) -> int:
    """The first release's classic_env_action, kept verbatim as the reference for its fast paths."""
    from ddl_gym.placement import get_placement_rule
    from ddl_gym.sim.priority import priority_key

    sim = env.sim
    p = [i for i, rule in enumerate(env._rules) if rule is get_placement_rule(placement)][0]
    window = list(env.window_jobs)
    if not window or sim.done:
        return 0
    if order == "fifo":
        head = sim.queue[0]
        if head not in window:
            return 0
        candidates = [head]
    elif order == env.queue_order:
        candidates = window
    else:
        key = priority_key(sim, order).tolist()
        candidates = sorted(window, key=lambda j: (key[j], j))
    for job in candidates:
        if sim.workload.gpus[job] <= sim.num_free:
            return 1 + window.index(job) * len(env.placement_names) + p
    return 0


@pytest.mark.parametrize("queue_order", ["srsf", "sjf", "fifo"])
def test_classic_env_action_fast_paths_match_the_reference(queue_order: str) -> None:
    env = DDLClusterEnv("small", queue_order=queue_order, window=4)
    env.reset(seed=7)
    guides = {order: ClassicGuide(order, "spread") for order in ("fifo", "sjf", "srsf")}
    rng = np.random.default_rng(0)
    checked = 0
    while not env.sim.done:
        for order, guide in guides.items():
            expected = _reference_classic_action(env, order, "spread")
            assert classic_env_action(env, order, "spread") == expected
            assert guide.env_action(env) == expected
            checked += 1
        env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
    assert checked > 30


def test_easy_backfilling_finishes_rollouts_as_it_runs_natively() -> None:
    """``fallback="easy-<order>+<rule>"``: the native finish is EASY's own schedule, also when the same
    finish object moves on to another workload (its tables follow the workload, not an ``id()``)."""
    from ddl_gym.agents.mcts import EasyFinish, native_finish
    from ddl_gym.baselines.classic.backfill import EasyBackfillPolicy

    finish = native_finish("easy-srsf+pack")
    assert isinstance(finish, EasyFinish) and isinstance(native_finish("srsf+pack"), ClassicGuide)
    scenario = get_scenario("pollux-8x8-100g")
    for seed in (3, 4, 3):
        cluster, workload = scenario.episode(seed)
        native = run_policy(Simulator(cluster, workload, scenario.model), EasyBackfillPolicy("srsf", "pack"),
                            np.random.default_rng(0))
        sim = Simulator(cluster, workload, scenario.model)
        finish.finish_native(sim, np.random.default_rng(0))
        assert np.array_equal(sim.result().finish, native.finish)
    with pytest.raises(ConfigError, match="easy: unknown job order"):
        native_finish("easy-gpu-step+pack")
    env = DDLClusterEnv("small")
    env.reset(seed=2)
    policy = MCTSPolicy("srsf+pack", simulations=4, depth=0, fallback="easy-srsf+pack")
    while not env.sim.done:
        action = policy.act_env(env)
        assert env.action_masks()[action] == 1
        env.step(action)


def test_oracle_search_honours_root_candidates_and_root_noise() -> None:
    """The clairvoyant search expands the prior's top root actions first and mixes seeded noise into the
    root prior (both were accepted and ignored by the oracle path before)."""
    env = DDLClusterEnv("small")
    env.reset(seed=3)
    while int(env.action_masks().sum()) < 3:
        env.step(classic_env_action(env, "srsf", "pack"))
    valid = int(env.action_masks().sum())
    plain = MCTSPolicy("srsf+pack", simulations=3, reuse_tree=False, depth=0, prior="uniform").search(env)
    wide = MCTSPolicy("srsf+pack", simulations=3, reuse_tree=False, depth=0, prior="uniform",
                      root_candidates=3).search(env)
    assert len(wide.root_visits) == min(3, valid) and all(v == 1 for v in wide.root_visits.values())
    assert plain.guide_action in wide.root_visits

    def priors(seed: int, noise: float) -> np.ndarray:
        policy = MCTSPolicy("srsf+pack", simulations=2, reuse_tree=False, depth=0, root_noise=noise, seed=seed)
        prior = policy.search(env).root_prior
        assert prior is not None and sorted(prior) == np.flatnonzero(env.action_masks()).tolist()
        return np.array(list(prior.values()))

    base, again, other = priors(5, 0.5), priors(5, 0.5), priors(6, 0.5)
    assert np.allclose(base.sum(), 1.0) and np.array_equal(base, again) and not np.allclose(base, other)
    assert not np.allclose(base, priors(5, 0.0))
