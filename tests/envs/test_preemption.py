"""``DDLCluster-v1`` with ``preemption=True``: preempt actions, their masks, ticks, invariants, determinism."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ddl_gym.envs import cluster_env
from ddl_gym.envs import core as env_core
from ddl_gym.envs.cluster_env_v1 import RUNNING_SLOT_FEATURES, DDLClusterEnvV1
from ddl_gym.sim.model import ConfigError

NC = dict(clairvoyant=False, queue_order="gpu-step")


def _env(scenario: str = "pollux-nc-25g", **kwargs) -> DDLClusterEnvV1:
    return DDLClusterEnvV1(scenario, **{**NC, "preemption": True, **kwargs})


def _preempt_actions(env: DDLClusterEnvV1, mask: np.ndarray) -> np.ndarray:
    return np.flatnonzero(mask[env._first_preempt:]) + env._first_preempt


def _walk(env: DDLClusterEnvV1, seed: int, steps: int, p_preempt: float = 0.3) -> list[tuple]:
    """A masked random walk that preempts with probability ``p_preempt`` when it can; its trace."""
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    trace = [(obs.tobytes(), info["action_mask"].tobytes())]
    for _ in range(steps):
        mask = info["action_mask"]
        preempts = _preempt_actions(env, mask)
        if len(preempts) and rng.random() < p_preempt:
            action = int(rng.choice(preempts))
        else:
            starts = np.flatnonzero(mask[: env._first_preempt])
            action = int(rng.choice(starts))
        obs, reward, terminated, truncated, info = env.step(action)
        trace.append((obs.tobytes(), reward, terminated, truncated, info["action_mask"].tobytes(), info["sim_time"]))
        if terminated or truncated:
            break
    return trace


def test_off_by_default_and_options_need_it() -> None:
    plain = DDLClusterEnvV1("pollux-nc-25g", **NC)
    P, K, R = len(plain.placement_names), plain.max_window, plain.running_slots
    assert plain.action_space.n == 1 + K * P and not plain.preemption
    on = _env()
    assert on.action_space.n == 1 + K * P + R
    assert on.observation_space.shape[0] == plain.observation_space.shape[0] + K
    assert on.observation_layout["preemption"] is True and on.quantum_s == 300.0 and on.preempt_overhead_s == 10.0
    for option in ("quantum_s", "preempt_overhead_s"):
        with pytest.raises(ConfigError, match=f"{option} applies only with preemption=True"):
            DDLClusterEnvV1("pollux-nc-25g", **NC, **{option: 5.0})


@pytest.mark.parametrize("kwargs, match", [
    ({"quantum_s": 0.0}, "quantum_s"), ({"quantum_s": math.nan}, "quantum_s"), ({"quantum_s": "60"}, "quantum_s"),
    ({"quantum_s": True}, "quantum_s"), ({"preempt_overhead_s": -1.0}, "preempt_overhead_s"),
    ({"preempt_overhead_s": math.inf}, "preempt_overhead_s"), ({"running_slots": 0}, "running_slots"),
    ({"preemption": "yes"}, "preemption"),
])
def test_bad_preemption_options_are_named(kwargs: dict, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        _env(**kwargs)


def _until_preemptable(env: DDLClusterEnvV1, seed: int) -> dict:
    """Start jobs and advance until some running job may be preempted; returns the info."""
    obs, info = env.reset(seed=seed)
    for _ in range(500):
        if len(_preempt_actions(env, info["action_mask"])):
            return info
        starts = np.flatnonzero(info["action_mask"][1: env._first_preempt])
        action = 1 + int(starts[0]) if len(starts) else 0
        obs, _, _, _, info = env.step(action)
    raise AssertionError("no preemptable state reached")


def test_preempt_requeues_the_job_with_its_progress_and_service() -> None:
    env = _env()
    info = _until_preemptable(env, seed=3)
    sim = env.sim
    action = int(_preempt_actions(env, info["action_mask"])[0])
    job = env.running_slot_jobs()[action - env._first_preempt]
    now, left, service = sim.now, sim.remaining_iterations(job), sim.attained_gpu_seconds(job)
    assert service > 0
    _, _, _, _, info = env.step(action)
    assert info["executed_action"] == action and not info["invalid_action"]
    assert job in list(sim.queue) and job not in sim.running and sim.preemptions[job] == 1
    assert sim.now == now  # a preemption is a decision, not an event
    assert sim.remaining_iterations(job) == left and sim.attained_gpu_seconds(job) == service
    # The window shows every queued job's attained service (0 for one that never ran), the preempted one's too.
    window, block = env.window_jobs, env.queue_attained_block()
    assert window and block.shape == (env.max_window,) and not block[len(window):].any()
    for w, queued in enumerate(window):
        assert block[w] == pytest.approx(
            min(1.0, math.log1p(sim.attained_gpu_seconds(queued) / sim.workload.gpus[queued]) / math.log1p(1e6)))
    assert sim.attained_gpu_seconds(job) > 0 and (job not in window or block[window.index(job)] > 0)


def test_a_job_started_now_cannot_be_preempted_so_no_decision_loops() -> None:
    env = _env()
    obs, info = env.reset(seed=5)
    for _ in range(300):
        starts = np.flatnonzero(info["action_mask"][1: env._first_preempt])
        if not len(starts):
            obs, _, _, _, info = env.step(0)
            continue
        slot = int(starts[0]) // len(env.placement_names)
        job = env.window_jobs[slot]
        obs, _, _, _, info = env.step(1 + int(starts[0]))
        if job in env.sim.running and env.sim.running_since(job) == env.sim.now:
            slots = env.running_slot_jobs()
            if job in slots:
                assert info["action_mask"][env._first_preempt + slots.index(job)] == 0
                return
    raise AssertionError("no start observed in a running slot")


def test_a_masked_preempt_is_invalid_and_substituted() -> None:
    env = _env()
    obs, info = env.reset(seed=2)
    masked = [a for a in range(env._first_preempt, env.action_space.n) if not info["action_mask"][a]]
    assert masked
    _, reward, _, _, info = env.step(masked[0])
    assert info["invalid_action"] and info["executed_action"] != masked[0]


@pytest.mark.parametrize("scenario, seed", [("pollux-nc-25g", 1), ("small", 2)])
def test_random_walks_with_preemption_finish_with_invariants_checked(scenario: str, seed: int) -> None:
    env = _env(scenario, debug=True)
    trace = _walk(env, seed=seed, steps=20_000)
    terminated, truncated = trace[-1][2], trace[-1][3]
    assert terminated and not truncated
    assert env.sim.num_finished == env.sim.workload.num_jobs and sum(env.sim.preemptions.values()) > 0


def test_ticks_bound_the_time_between_preemption_decisions() -> None:
    """From a state where a preemption is possible, no advance runs past the next tick of the grid."""
    env = _env(quantum_s=200.0)
    rng = np.random.default_rng(0)
    obs, info = env.reset(seed=4)
    checked = 0
    while True:
        mask = info["action_mask"]
        could_preempt = len(_preempt_actions(env, mask)) > 0
        starts = np.flatnonzero(mask[1: env._first_preempt])
        action = 0 if (not len(starts) or rng.random() < 0.5) and mask[0] else 1 + int(rng.choice(starts))
        obs, _, terminated, truncated, info = env.step(action)
        if action == 0 and could_preempt:
            assert info["dt"] <= 200.0 + 1e-6
            checked += 1
        if terminated or truncated:
            break
    assert terminated and checked > 20


def test_same_seed_same_episode_and_forks_replay() -> None:
    a = _walk(_env(), seed=7, steps=600)
    b = _walk(_env(), seed=7, steps=600)
    assert a == b and len(a) > 100
    env = _env()
    info = _until_preemptable(env, seed=8)
    twin = env.fork()
    action = int(_preempt_actions(env, info["action_mask"])[0])
    for e in (env, twin):
        e.step(action)
    for _ in range(50):
        mask = env.action_masks()
        assert np.array_equal(mask, twin.action_masks())
        act = int(np.flatnonzero(mask)[-1])
        o1, r1, t1, _, _ = env.step(act)
        o2, r2, t2, _, _ = twin.step(act)
        assert np.array_equal(o1, o2) and r1 == r2
        if t1:
            break


def test_observation_stays_in_the_box_and_running_attained_is_service() -> None:
    env = _env()
    info = _until_preemptable(env, seed=9)
    obs, _, _, _, info = env.step(int(_preempt_actions(env, info["action_mask"])[0]))
    checked = 0
    for _ in range(200):
        assert env.observation_space.contains(obs)
        sim = env.sim
        start = len(obs) - env.max_window - len(RUNNING_SLOT_FEATURES) * env.running_slots
        for r, job in enumerate(env.running_slot_jobs()):  # each running slot's attained = attained service
            got = obs[start + r * len(RUNNING_SLOT_FEATURES) + RUNNING_SLOT_FEATURES.index("attained")]
            want = min(1.0, math.log1p(sim.attained_gpu_seconds(job) / sim.workload.gpus[job]) / math.log1p(1e6))
            assert got == pytest.approx(want, rel=1e-6)
            checked += 1
        obs, _, terminated, _, info = env.step(0 if info["action_mask"][0] else int(np.flatnonzero(info["action_mask"])[0]))
        if terminated:
            break
    assert checked > 20


@pytest.mark.skipif(env_core.BUILD != "native", reason="the compiled env core is not built: only one build to compare")
def test_compiled_and_plain_cores_agree_with_preemption(monkeypatch: pytest.MonkeyPatch) -> None:
    compiled = _walk(_env(), seed=11, steps=800)
    monkeypatch.setattr(cluster_env, "DecisionCore", env_core.PurePythonDecisionCore)
    monkeypatch.setattr(cluster_env, "PortableLayout", env_core.PurePythonPortableLayout)
    env = _env()
    plain = _walk(env, seed=11, steps=800)
    assert type(env._core) is env_core.PurePythonDecisionCore
    assert len(compiled) > 100 and compiled == plain


def test_decode_action_names_the_preempted_job() -> None:
    env = _env()
    info = _until_preemptable(env, seed=3)
    action = int(_preempt_actions(env, info["action_mask"])[0])
    decoded = env.decode_action(action)
    assert decoded.kind == "preempt" and decoded.job == env.running_slot_jobs()[decoded.slot]
    assert env.decode_action(1).kind == "start"
    with pytest.raises(ConfigError, match="outside"):
        env.decode_action(env.action_space.n)


def test_preemptive_env_schedules_never_beat_the_lp_bound() -> None:
    """Random walks that preempt (short ticks, restart overhead) on 30 small random worlds stay at or above the
    general LP bound, which holds for preemptive schedules too."""
    from ddl_gym.scenarios import Scenario
    from ddl_gym.sim.lower_bound import lp_lower_bound
    from tests.sim.test_lower_bound import random_instance

    preempted = 0
    for seed in range(30):
        cluster, workload, model = random_instance(2000 + seed)
        scenario = Scenario(name=f"lb-{seed}", cluster=cluster, workload=lambda rng, c, w=workload: w, model=model)
        env = DDLClusterEnvV1(scenario, clairvoyant=False, preemption=True, quantum_s=5.0, preempt_overhead_s=2.0,
                              window=4, running_slots=4)
        trace = _walk(env, seed=seed, steps=20_000, p_preempt=0.5)
        assert trace[-1][2]  # terminated
        preempted += sum(env.sim.preemptions.values())
        value = float(np.mean(env.sim.result().finish - workload.arrival))
        assert value >= lp_lower_bound(workload, cluster, model, periods=48), seed
    assert preempted > 30


def test_fork_with_its_own_future_replays_a_preemptive_episode_and_sampled_futures_keep_service() -> None:
    """The search's forks (``fork_with_future``) carry the preemptive state: with the episode's own future the
    twin replays the parent step for step; with a sampled future the arrived jobs keep their attained service
    and a walk with preemptions still finishes with invariants checked."""
    from ddl_gym.futures import FutureSampler

    env = _env(debug=True)
    info = _until_preemptable(env, seed=11)
    env.step(int(_preempt_actions(env, info["action_mask"])[0]))
    twin = env.fork_with_future(env.sim.workload)
    assert np.array_equal(twin.current_observation(), env.current_observation())
    rng = np.random.default_rng(3)
    for _ in range(20_000):
        mask = env.action_masks()
        assert np.array_equal(mask, twin.action_masks())
        act = _preempt_or_first(env, mask, rng, 0.3)
        o1, r1, t1, _, _ = env.step(act)
        o2, r2, t2, _, _ = twin.step(act)
        assert np.array_equal(o1, o2) and r1 == r2 and t1 == t2
        if t1:
            break
    assert t1 and env.sim.jobs_area == twin.sim.jobs_area

    env = _env(debug=True)
    info = _until_preemptable(env, seed=12)
    env.step(int(_preempt_actions(env, info["action_mask"])[0]))
    sim = env.sim
    arrived = range(sim.num_arrived)
    service = [sim.attained_gpu_seconds(j) for j in arrived]
    assert sim.preemptions
    sampled = env.fork_with_future(FutureSampler("pollux-nc-25g", clairvoyant=False).sample(sim, rng))
    assert [sampled.sim.attained_gpu_seconds(j) for j in arrived] == service
    assert sampled.sim.preemptions == sim.preemptions
    assert _walk_from(sampled, rng)


def _walk_from(env: DDLClusterEnvV1, rng: np.random.Generator) -> bool:
    for _ in range(20_000):
        if env.step(_preempt_or_first(env, env.action_masks(), rng, 0.2))[2]:
            return True
    return False


def _preempt_or_first(env: DDLClusterEnvV1, mask: np.ndarray, rng: np.random.Generator, p_preempt: float) -> int:
    """A random preempt with probability ``p_preempt`` when one is valid, else the first valid action."""
    preempts = _preempt_actions(env, mask)
    if len(preempts) and rng.random() < p_preempt:
        return int(rng.choice(preempts))
    return int(np.flatnonzero(mask)[0])
