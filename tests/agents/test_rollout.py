"""Rollout over a reference policy (agents/rollout.py) and the report built on it (agents/online_room.py).

* with ``t = inf`` the rollout is its base, schedule for schedule (EASY, greedy, non-clairvoyant);
* its decisions read the past only: the same past with another true future (arrivals; on a
  non-clairvoyant task, remaining work) gives the same action and the same sampled costs;
* it improves on a weak base (strict FIFO) and is deterministic;
* bad settings are errors naming the option;
* ``docs/suite-online.md`` is the rendering of its JSON, its figures follow from its per-seed columns,
  and a run on a small task writes the report, resumes from its partial file and refuses one made otherwise.
"""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import numpy as np
import pytest

from ddl_gym.agents import online_room
from ddl_gym.agents.rollout import ReferenceRollout, make_rollout_policy
from ddl_gym.envs.cluster_env import DDLClusterEnv
from ddl_gym.harness.episodes import simulate_episode
from ddl_gym.policies import make_policy
from ddl_gym.scenarios import get_scenario
from ddl_gym.sim.model import ConfigError
from tests.agents.test_expert_iteration import _drive, _same_past_other_future

DOC = Path(__file__).resolve().parents[2] / "docs" / "suite-online.md"


@pytest.mark.parametrize("base,clairvoyant", [("easy-srsf+fs", True), ("srsf+pack", True), ("gpu-step+ca", False)])
def test_without_deviations_the_rollout_is_its_base(base, clairvoyant):
    scenario = get_scenario("small")
    for seed in (0, 5):
        cluster, workload = scenario.episode(seed)
        native, _ = simulate_episode(make_policy(base), scenario, cluster, workload, seed)
        policy = ReferenceRollout(base, t=math.inf, clairvoyant=clairvoyant)
        mine = policy.run_episode(scenario, cluster, workload, np.random.default_rng(seed))
        assert np.array_equal(mine.start, native.start) and np.array_equal(mine.finish, native.finish)
        assert policy.stats.deviations == 0 and policy.stats.rollouts == 0


def _same_past(seed: int, cut: int, *, work: bool) -> tuple[DDLClusterEnv, DDLClusterEnv, ReferenceRollout]:
    """Two envs with the same past (the base's decisions up to job ``cut``'s arrival) and other true futures."""
    a, b, _ = _same_past_other_future("small", seed, cut)
    policy = ReferenceRollout("fifo+pack" if work else "easy-srsf+pack", futures=4, t=0.0, clairvoyant=not work)
    env_a, env_b = DDLClusterEnv("small", **policy.env_kwargs), DDLClusterEnv("small", **policy.env_kwargs)
    env_a.reset(seed=seed, options={"workload": a})
    from ddl_gym.agents.imitation import expert_action

    class BaseGuide:  # the base policy's env actions, as _drive follows a guide
        def env_action(self, env):
            return expert_action(env, policy.base)

    actions = _drive(env_a, BaseGuide(), cut)  # the base's decisions while no job beyond `cut` has arrived
    assert len(actions) > 5
    if work:  # other remaining work for every unfinished job as well: the past is unchanged
        unfinished = [j for j in range(b.num_jobs) if env_a.sim.state[j] < 3]
        iterations = b.iterations.copy()
        iterations[unfinished] *= 3
        b = dataclasses.replace(b, iterations=iterations)
    env_b.reset(seed=seed, options={"workload": b})
    for action in actions:
        env_b.step(action)
    assert env_a.sim.now == env_b.sim.now and env_a.sim.num_arrived == env_b.sim.num_arrived
    return env_a, env_b, policy


@pytest.mark.parametrize("work", [False, True])
def test_decisions_read_the_past_only(work):
    env_a, env_b, policy = _same_past(7, 15, work=work)
    candidates = [0] + [int(a) for a in np.flatnonzero(env_a.action_masks())][:3]
    costs_a = policy._costs(env_a, candidates, decision=3)
    costs_b = policy._costs(env_b, candidates, decision=3)
    assert np.array_equal(costs_a, costs_b)
    assert policy.choose(env_a, 3) == policy.choose(env_b, 3)
    # the seed option is used: another seed samples other futures for the same decision
    other = ReferenceRollout(policy.base, futures=4, t=0.0, clairvoyant=policy.clairvoyant, seed=1)
    assert not np.array_equal(other._costs(env_a, candidates, decision=3), costs_a)
    # the true future does matter to a fork that reads it: the same candidates finished on the true futures
    true_a, true_b = env_a.fork(), env_b.fork()
    for env in (true_a, true_b):
        policy._finish.finish_native(env.sim, np.random.default_rng(0))
    assert true_a.sim.jobs_area != true_b.sim.jobs_area


def test_the_rollout_improves_on_strict_fifo_and_is_deterministic():
    scenario = get_scenario("small")
    better = 0
    for seed in (0, 1, 2):
        cluster, workload = scenario.episode(seed)
        fifo, _ = simulate_episode(make_policy("fifo+pack"), scenario, cluster, workload, seed)
        first = ReferenceRollout("fifo+pack", futures=6, t=2.0)
        mine = first.run_episode(scenario, cluster, workload, np.random.default_rng(seed))
        again = ReferenceRollout("fifo+pack", futures=6, t=2.0).run_episode(scenario, cluster, workload,
                                                                            np.random.default_rng(seed))
        assert np.array_equal(mine.start, again.start) and np.array_equal(mine.finish, again.finish)
        better += mine.summary()["avg_jct_s"] < fifo.summary()["avg_jct_s"]
        assert first.stats.searched > 0
    assert better >= 2  # head-of-line blocking leaves room that one-step lookahead finds


@pytest.mark.parametrize("spec,message", [
    ("rollout:base=srsf", r"order\+placement"),
    ("rollout:base=easy-gpu-step+fs", "easy"),
    ("rollout:base=srsf+nowhere", "placement"),
    ("rollout:futures=1", "futures"),
    ("rollout:t=-1", "t must"),
    ("rollout:t=nan", "t must"),
    ("rollout:base=easy-srsf+fs,clairvoyant=0", "non-clairvoyant"),
    ("rollout:base=sjf+pack,clairvoyant=false", "non-clairvoyant"),
    ("rollout:clairvoyant=maybe", "clairvoyant"),
    ("rollout:sims=3", "unknown rollout spec key"),
    ("rollout:futures", "key=value"),
    ("rollout:seed=-1", "seed"),
    ("rollout:window=0", "window"),
    ("rollout:futures=many", "futures='many'"),
    ("mcts:futures=3", "must start with 'rollout'"),
])
def test_bad_settings_name_the_option(spec, message):
    with pytest.raises(ConfigError, match=message):
        make_rollout_policy(spec)


def test_a_spec_builds_the_policy_it_names():
    policy = make_rollout_policy("rollout:base=gpu-step+ca,futures=5,t=2.5,clairvoyant=0,seed=9,window=12")
    assert (policy.base, policy.futures, policy.t, policy.clairvoyant, policy.window) == ("gpu-step+ca", 5, 2.5,
                                                                                         False, 12)
    assert policy.env_kwargs["queue_order"] == "gpu-step"  # never an order that reads hidden work


# ---------------------------------------------------------------------------- the report
def test_the_report_is_the_rendering_of_its_json_and_its_figures_follow_from_its_columns():
    data = json.loads(DOC.with_suffix(".json").read_text())
    assert DOC.read_text() == online_room.online_markdown(data)
    oracle = {t["task"]: t for t in json.loads(online_room.ORACLE_JSON.read_text())["tasks"]}
    assert [t["task"] for t in data["tasks"]] == list(oracle)
    for t in data["tasks"]:
        o = oracle[t["task"]]
        assert t["test_seeds"] == o["test_seeds"] and t["reference"] == o["reference"] and t["base"] == o["finish"]
        ref, mine = np.array(t["reference_jct_per_seed"]), np.array(t["rollout_jct_per_seed"])
        best = np.array(t["best_known_jct_per_seed"])
        assert np.allclose(ref, o["reference_jct_per_seed"]) and math.isclose(best.mean(), o["best_known_jct_s"])
        assert math.isclose(t["reduction"], float(np.mean((ref - mine) / ref)), rel_tol=1e-9, abs_tol=1e-12)
        assert t["better"] == int(np.sum(mine < ref))
        if t["share_of_known_room"] is not None:
            assert math.isclose(t["share_of_known_room"], (ref.mean() - mine.mean()) / (ref.mean() - best.mean()))
        assert t["verdict"] == ("reached" if t["reduction"] >= online_room.GOAL_REDUCTION else "not reached")
        # no schedule, online or not, goes below the strong LP bound the oracle report read
        assert np.all(mine >= np.array(o["strong_bound_per_seed"]) * (1 - 1e-9))


def _small_oracle(tmp_path: Path) -> Path:
    """An oracle JSON with one entry for the small regression task (two seeds), as the oracle report writes it."""
    from ddl_gym.suite import get_task

    task = get_task("small")
    scenario = get_scenario(task.scenario)
    seeds = list(task.test_seeds)[:2]
    ref = [float(simulate_episode(make_policy("srsf+pack"), scenario, *scenario.episode(s), s)[0].summary()["avg_jct_s"])
           for s in seeds]
    entry = {"task": "small", "test_seeds": seeds, "reference": "srsf+pack", "finish": "srsf+pack",
             "reference_jct_per_seed": ref, "oracle_jct_per_seed": [r * 0.97 for r in ref],
             "priority_jct_per_seed": [r * 0.98 for r in ref], "agent_jct_per_seed": None,
             "best_known_jct_s": float(np.mean([r * 0.97 for r in ref])), "strong_bound_per_seed": [0.0, 0.0]}
    path = tmp_path / "suite-oracle.json"
    path.write_text(json.dumps({"tasks": [entry]}))
    return path


def test_a_run_writes_resumes_and_refuses_a_partial_file_made_otherwise(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(online_room, "ORACLE_JSON", _small_oracle(tmp_path))
    out = tmp_path / "online.md"
    assert online_room.main(["--futures", "3", "--write", str(out)]) == 0
    data = json.loads(out.with_suffix(".json").read_text())
    assert out.read_text() == online_room.online_markdown(data)
    assert not out.with_suffix(".partial.json").exists()
    row = data["tasks"][0]
    assert row["task"] == "small" and len(row["rollout_jct_per_seed"]) == 2
    assert row["base_jct_per_seed"] == pytest.approx(row["reference_jct_per_seed"], rel=1e-12)
    # resume: a partial file with this run's settings is taken as it is (no episode is run again)
    partial = out.with_suffix(".partial.json")
    partial.write_text(json.dumps({"settings": data["settings"], "tasks": [dict(row, rollout_jct_s=1.0)]}))
    monkeypatch.setattr(online_room, "task_online", lambda *a, **k: pytest.fail("a kept task was run again"))
    assert online_room.main(["--futures", "3", "--write", str(out)]) == 0
    assert json.loads(out.with_suffix(".json").read_text())["tasks"][0]["rollout_jct_s"] == 1.0
    # ... and one made under other settings (here: another t) is refused, naming the file
    partial.write_text(json.dumps({"settings": data["settings"], "tasks": [row]}))
    assert online_room.main(["--futures", "3", "--t", "1", "--write", str(out)]) == 2
    assert "other settings" in capsys.readouterr().err


def test_cli_errors_name_the_option(tmp_path, monkeypatch, capsys):
    for argv, message in ((["--futures", "1"], "--futures"), (["--t", "-2"], "--t"), (["--workers", "0"], "--workers")):
        with pytest.raises(SystemExit):
            online_room.main(argv)
        assert message in capsys.readouterr().err
    monkeypatch.setattr(online_room, "ORACLE_JSON", tmp_path / "absent.json")
    assert online_room.main([]) == 2
    assert "absent.json" in capsys.readouterr().err
    monkeypatch.setattr(online_room, "ORACLE_JSON", _small_oracle(tmp_path))
    assert online_room.main(["--task", "default-10g"]) == 2
    assert "no entry for default-10g" in capsys.readouterr().err
    broken = tmp_path / "broken.json"
    entry = json.loads((tmp_path / "suite-oracle.json").read_text())["tasks"][0]
    del entry["finish"]
    broken.write_text(json.dumps({"tasks": [entry]}))
    monkeypatch.setattr(online_room, "ORACLE_JSON", broken)
    assert online_room.main([]) == 2
    err = capsys.readouterr().err
    assert "broken.json" in err and "lacks finish" in err and "Traceback" not in err
