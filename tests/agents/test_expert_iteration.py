"""Non-clairvoyant search and expert iteration (issue 31, item 4).

* ``Simulator.with_future`` / ``DDLClusterEnv.fork_with_future`` with the episode's own future are
  the plain fork (same observations, rewards and trajectory to the end);
* the non-clairvoyant MCTS (``future="sampled"``) decides the same with the same past and a
  different true future (arrivals, and on a non-clairvoyant env the remaining work); the oracle
  (``future="oracle"``) reads the true future;
* visit-count targets sum to 1 over the legal actions only;
* one tiny expert-iteration round runs end to end, writes a checkpoint and resumes.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from ddl_gym.agents.mcts import ClassicGuide, MCTSPolicy
from ddl_gym.envs.cluster_env import DDLClusterEnv
from ddl_gym.futures import FutureSampler, splice_workload
from ddl_gym.scenarios import get_scenario
from ddl_gym.sim.model import ConfigError

AGENT = Path(__file__).resolve().parents[2] / "leaderboard" / "agents" / "agent-v1-pollux25g.zip"


def _drive(env: DDLClusterEnv, guide: ClassicGuide, arrived: int) -> list[int]:
    """Follow ``guide`` as long as no more than ``arrived`` jobs have arrived after the step; the actions taken."""
    actions = []
    while not env.sim.done:
        a = guide.env_action(env)
        probe = env.fork()
        probe.step(a)
        if probe.sim.num_arrived > arrived:
            break
        env.step(a)
        actions.append(a)
    return actions


def _same_past_other_future(scenario: str, seed: int, cut: int, *, work: bool = False):
    """Workloads A (the episode) and B: the same first ``cut`` jobs, the later ones from another
    episode arriving after A's job ``cut``; with ``work`` B's jobs also have 3x the iterations."""
    scen = get_scenario(scenario)
    _, a = scen.episode(seed)
    _, other = scen.episode(seed + 1)
    n = a.num_jobs
    t = float(a.arrival[cut])
    gaps = np.diff(np.concatenate([[0.0], other.arrival]))[cut:n]
    b = splice_workload(a, cut, other, np.arange(cut, n), t + 5.0 + np.cumsum(gaps))
    return a, b, t


def test_with_future_of_its_own_future_is_the_plain_fork():
    env = DDLClusterEnv("small", reward="jct")
    env.reset(seed=3)
    guide = ClassicGuide("srsf", "pack")
    for _ in range(12):
        env.step(guide.env_action(env))
    a, b = env.fork(), env.fork_with_future(env.sim.workload)
    assert np.array_equal(a.current_observation(), b.current_observation())
    while not a.sim.done:
        act = guide.env_action(a)
        assert act == guide.env_action(b)
        assert a.step(act)[1] == b.step(act)[1]
    assert b.sim.done and a.sim.jobs_area == b.sim.jobs_area
    with pytest.raises(ConfigError, match="arrived jobs"):
        env.sim.with_future(get_scenario("small").episode(4)[1])


def test_sampled_futures_keep_the_past_and_respect_attained_work():
    env = DDLClusterEnv("small", reward="jct")
    env.reset(seed=5)
    guide = ClassicGuide("srsf", "pack")
    assert len(_drive(env, guide, 15)) > 5
    sim = env.sim
    k = sim.num_arrived
    sampler = FutureSampler("small", clairvoyant=False)
    rng = np.random.default_rng(0)
    for _ in range(5):
        w = sampler.sample(sim, rng)
        assert w.num_jobs == sim.workload.num_jobs
        assert np.array_equal(w.arrival[:k], sim.workload.arrival[:k])
        assert np.all(w.arrival[k:] >= sim.now)
        for j in range(k):
            done = sim.workload.iterations[j] - sim.remaining_iterations(j)
            assert w.iterations[j] > done - 1e-9
        twin = env.fork_with_future(w)
        assert np.array_equal(twin.current_observation()[:5], env.current_observation()[:5])
        while not twin.sim.done:
            twin.step(guide.env_action(twin))


def _search_pair(env_a, env_b, future: str, guide: str):
    stats = []
    for env in (env_a, env_b):
        m = MCTSPolicy(guide, simulations=12, future=future, samples=3, reuse_tree=False, seed=7, final="visits")
        m.reset(seed=7)
        stats.append(m.search(env))
    return stats


def test_sampled_search_ignores_the_true_future_and_the_oracle_reads_it():
    a, b, t = _same_past_other_future("small", 11, 20)
    env_a, env_b = DDLClusterEnv("small", reward="jct"), DDLClusterEnv("small", reward="jct")
    env_a.reset(seed=11, options={"workload": a})
    env_b.reset(seed=11, options={"workload": b})
    guide = ClassicGuide("srsf", "pack")
    actions = _drive(env_a, guide, 20)
    assert len(actions) > 5
    for act in actions:
        env_b.step(act)
    assert env_a.sim.now == env_b.sim.now and env_a.sim.num_arrived == env_b.sim.num_arrived
    assert np.array_equal(env_a.current_observation(), env_b.current_observation())
    for future in ("sampled", "determinized"):
        sa, sb = _search_pair(env_a, env_b, future, "srsf+pack")
        assert sa.root_visits == sb.root_visits and sa.action == sb.action and sa.simulations >= 12
        assert sa.root_best_cost == sb.root_best_cost
    oa, ob = _search_pair(env_a, env_b, "oracle", "srsf+pack")
    assert oa.root_best_cost != ob.root_best_cost  # its rollouts ran on the two true futures


def test_sampled_search_ignores_true_remaining_work_when_not_clairvoyant():
    from ddl_gym.envs.cluster_env_v1 import DDLClusterEnvV1
    from ddl_gym.sim.model import Workload
    import dataclasses

    scen = get_scenario("small")
    _, a = scen.episode(21)
    env_a = DDLClusterEnvV1("small", clairvoyant=False)
    env_a.reset(seed=21, options={"workload": a})
    guide = ClassicGuide("fifo", "pack")
    actions = _drive(env_a, guide, 18)
    assert len(actions) > 5
    unfinished = [j for j in range(a.num_jobs) if env_a.sim.state[j] < 3]
    iterations = a.iterations.copy()
    iterations[unfinished] *= 3  # more work for every job not finished yet: the past is unchanged
    b: Workload = dataclasses.replace(a, iterations=iterations)
    env_b = DDLClusterEnvV1("small", clairvoyant=False)
    env_b.reset(seed=21, options={"workload": b})
    for act in actions:
        env_b.step(act)
    assert np.array_equal(env_a.current_observation(), env_b.current_observation())
    sa, sb = _search_pair(env_a, env_b, "sampled", "fifo+pack")
    assert sa.root_visits == sb.root_visits and sa.action == sb.action
    oa, ob = _search_pair(env_a, env_b, "oracle", "fifo+pack")
    assert oa.root_best_cost != ob.root_best_cost


def test_visit_targets_sum_to_one_over_legal_actions_only():
    from ddl_gym.agents.expert_iteration import sharpen, visit_distribution

    mask = np.array([1, 0, 1, 1, 0], dtype=np.int8)
    pi = visit_distribution({0: 3, 1: 5, 3: 1}, mask)
    assert pi.sum() == pytest.approx(1.0) and pi[1] == 0 and pi[4] == 0
    assert pi[0] == pytest.approx(0.75) and pi[3] == pytest.approx(0.25)
    assert np.array_equal(visit_distribution({}, mask), mask / 3)
    sharp = sharpen(pi[None, :], 0.25)[0]
    assert sharp.sum() == pytest.approx(1.0) and sharp[1] == 0 and sharp[4] == 0 and sharp[0] > pi[0]


def test_one_tiny_round_runs_writes_a_checkpoint_and_resumes(tmp_path):
    pytest.importorskip("sb3_contrib")
    from ddl_gym.agents.expert_iteration import main
    from ddl_gym.agents.policy import load_policy

    out = tmp_path / "expit"
    common = ["train", "--task", "small", "--init", str(AGENT), "--out", str(out), "--episodes", "1", "--sims", "2",
              "--samples", "1", "--epochs", "1", "--validation-seeds", "1", "--workers", "1"]
    assert main(common + ["--rounds", "1"]) == 0
    state = json.loads((out / "state.json").read_text())
    assert state["rounds_done"] == 1 and len(state["history"]) == 2 and state["cpu_hours"] > 0
    data = np.load(out / "round-1" / "data.npz")
    assert np.allclose(data["pi"].sum(axis=1), 1.0) and np.all(data["pi"][~data["mask"]] == 0)
    ckpt = out / "round-1" / "agent.zip"
    assert ckpt.stat().st_size < 2_000_000
    policy = load_policy(f"maskable-ppo:{ckpt}")
    assert json.loads(ckpt.with_suffix(".json").read_text())["expert_iteration"]["round"] == 1
    assert policy.metadata["observation_layout"]["observation"] == "v1"
    first = (out / "round-1" / "data.npz").stat().st_mtime_ns
    assert main(common + ["--rounds", "2"]) == 0  # resumes: round 1 is not played again
    state = json.loads((out / "state.json").read_text())
    assert state["rounds_done"] == 2 and [h["round"] for h in state["history"]] == [0, 1, 2]
    assert (out / "round-1" / "data.npz").stat().st_mtime_ns == first
    assert (out / "agent.zip").exists()
    with pytest.raises(ConfigError, match="other settings"):
        main([*common[:-2], "--workers", "1", "--sims", "3", "--rounds", "3"])


def test_an_oracle_teacher_round_is_recorded_as_such(tmp_path, capsys):
    pytest.importorskip("sb3_contrib")
    from ddl_gym.agents.expert_iteration import TEACHERS, main

    out = tmp_path / "oracle"
    common = ["train", "--task", "small", "--init", str(AGENT), "--out", str(out), "--episodes", "1", "--sims", "2",
              "--epochs", "1", "--validation-seeds", "1", "--workers", "1", "--rounds", "1"]
    assert main(common + ["--future", "oracle"]) == 0
    meta = json.loads((out / "round-1" / "agent.json").read_text())
    assert meta["expert_iteration"]["future"] == TEACHERS["oracle"] and "clairvoyant" in TEACHERS["oracle"]
    state = json.loads((out / "state.json").read_text())
    assert state["config"]["future"] == "oracle"
    with pytest.raises(ConfigError, match="other settings"):  # a sampled-teacher run cannot resume it
        main(common[:-1] + ["2", "--future", "sampled"])
    with pytest.raises(SystemExit):
        main(common + ["--future", "psychic"])
    with pytest.raises(SystemExit):  # the oracle draws no futures: a sample count would be ignored
        main(common + ["--future", "oracle", "--samples", "3"])
    assert "--samples applies to the sampled search" in capsys.readouterr().err


def test_confident_targets_keep_only_rows_whose_search_was_that_sure():
    from ddl_gym.agents.expert_iteration import confident_targets

    pi = np.array([[0.5, 0.5, 0.0], [0.9, 0.1, 0.0], [0.2, 0.2, 0.6]], dtype=np.float32)
    data = {"pi": pi, "obs": np.arange(6, dtype=np.float32).reshape(3, 2), "ret": np.array([1.0, 2.0, 3.0])}
    kept = confident_targets(data, 0.6)
    assert np.array_equal(kept["ret"], [2.0, 3.0]) and np.array_equal(kept["obs"], data["obs"][1:])
    assert len(confident_targets(data, 0.0)["pi"]) == 3 and len(confident_targets(data, 0.95)["pi"]) == 0


def test_a_refit_trains_round_zero_on_stored_targets_and_refuses_what_it_cannot_do(tmp_path, capsys):
    pytest.importorskip("sb3_contrib")
    import shutil

    from ddl_gym.agents.expert_iteration import main
    from ddl_gym.agents.policy import load_policy

    run = tmp_path / "expit"
    assert main(["train", "--task", "small", "--init", str(AGENT), "--out", str(run), "--episodes", "1", "--sims", "2",
                 "--samples", "1", "--epochs", "1", "--validation-seeds", "1", "--workers", "1", "--rounds", "1"]) == 0
    # Targets with a known confidence: even rows uniform over their legal actions (share <= 0.5, a searched
    # decision has two or more), odd rows one-hot on their first legal action.
    with np.load(run / "round-1" / "data.npz") as f:
        data = {k: f[k] for k in f.files}
    mask = data["mask"]
    pi = mask / mask.sum(axis=1, keepdims=True)
    odd = np.arange(len(pi)) % 2 == 1
    pi[odd] = np.eye(mask.shape[1])[np.argmax(mask[odd], axis=1)]
    data["pi"] = pi.astype(np.float32)
    np.savez_compressed(run / "round-1" / "data.npz", **data)
    assert len(pi) >= 2

    refit = ["refit", "--run", str(run), "--epochs", "2", "--target-temperature", "0.5", "--value-coef", "0"]
    assert main(refit + ["--out", str(tmp_path / "a"), "--min-target-share", "0.9"]) == 0
    record = json.loads((tmp_path / "a" / "refit.json").read_text())
    assert record["samples"] == len(pi) and record["samples_kept"] == int(odd.sum())
    assert record["settings"]["data_rounds"] == [1] and record["settings"]["min_target_share"] == 0.9
    assert math.isfinite(record["validation_avg_jct_s"]) and record["ce_last"] < record["ce_first"]
    policy = load_policy(f"maskable-ppo:{tmp_path / 'a' / 'agent.zip'}")
    assert policy.metadata["expert_iteration_refit"]["epochs"] == 2
    assert (tmp_path / "a" / "agent.zip").read_bytes() != (run / "round-0" / "agent.zip").read_bytes()
    assert main(refit + ["--out", str(tmp_path / "b"), "--min-target-share", "0.9"]) == 0
    again = json.loads((tmp_path / "b" / "refit.json").read_text())
    assert again["validation_avg_jct_s"] == record["validation_avg_jct_s"] and again["ce_last"] == record["ce_last"]
    assert main(refit + ["--out", str(tmp_path / "all")]) == 0  # no floor: every target
    assert json.loads((tmp_path / "all" / "refit.json").read_text())["samples_kept"] == len(pi)

    with pytest.raises(ConfigError, match="round-2"):
        main(refit + ["--out", str(tmp_path / "c"), "--data-rounds", "2"])
    with pytest.raises(ConfigError, match="inside --run"):
        main(refit + ["--out", str(run / "refit")])
    with pytest.raises(ConfigError, match="no state.json"):
        main(["refit", "--run", str(tmp_path / "a"), "--out", str(tmp_path / "d")])
    uniform = tmp_path / "uniform"
    shutil.copytree(run, uniform)
    data["pi"] = (mask / mask.sum(axis=1, keepdims=True)).astype(np.float32)
    np.savez_compressed(uniform / "round-1" / "data.npz", **data)
    with pytest.raises(ConfigError, match="that confident"):
        main(["refit", "--run", str(uniform), "--out", str(tmp_path / "e"), "--min-target-share", "0.9"])
    with pytest.raises(ConfigError, match="listed twice"):
        main(refit + ["--out", str(tmp_path / "g"), "--data-rounds", "1", "1"])
    (uniform / "round-1" / "data.npz").write_bytes(b"not a zip")
    with pytest.raises(ConfigError, match=r"data\.npz: not a round's targets"):
        main(["refit", "--run", str(uniform), "--out", str(tmp_path / "h")])
    (uniform / "state.json").write_text("{")
    with pytest.raises(ConfigError, match="state.json: not an expert-iteration state file"):
        main(["refit", "--run", str(uniform), "--out", str(tmp_path / "h")])
    for bad, message in ((["--min-target-share", "1.5"], "--min-target-share must be in [0, 1]"),
                         (["--lr", "0"], "--lr must be > 0"), (["--value-coef", "-1"], "--value-coef must be >= 0")):
        with pytest.raises(SystemExit):
            main(refit + ["--out", str(tmp_path / "f"), *bad])
        assert message in capsys.readouterr().err
