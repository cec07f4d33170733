"""Issue 32's named options of A-SRPT and its baselines: each changes behaviour as documented.

* ``backfill``: strict head-of-line order (Alg. 1 line 25) never starts a later job of
  ``pending_queue`` while an earlier one waits; backfill does.
* the baselines' server selection: best fit (default), most free first, A-SRPT's own rule.
* the unseen-job prediction rule: the stated value for each rule.
* Heavy-Edge's tie-break: deterministic, documented, and it no longer splits VGG19 4x2's stage 2.
* Fig. 8 at equal offered load; HiGHS's stdout line is silenced.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from ddl_gym.baselines.a_srpt.policy import ASRPT
from ddl_gym.baselines.a_srpt.paper_baselines import PredictedOrderPolicy, selection_reading
from ddl_gym.baselines.a_srpt.prediction import UNSEEN_RULES, RandomForestPredictor, StatPredictor, make_predictor, unseen_rule
from ddl_gym.sim.engine import Simulator, run_policy
from ddl_gym.sim.model import ConfigError, ModelProfile, Workload
from ddl_gym.workloads.asrpt import asrpt_sim_scenario

#: DDLCluster-ASRPT-v0, seed 0, 120 random legal steps: recorded on 83b910f (before issue 32).
V0_STREAM_DIGEST = "923a36727f484b5b9286a99f14e3a0e262fd429d879c59c22c1edd913b29935d"

PLAIN = ModelProfile("plain", 0.0, 0.01, 0.02)


class _Recording(ASRPT):
    """A-SRPT that records the order in which jobs entered ``pending_queue``."""

    def reset(self, sim, rng):  # type: ignore[no-untyped-def]
        super().reset(sim, rng)
        self.order: list[int] = []
        self._in: set[int] = set()

    def _run_virtual_machine(self, sim):  # type: ignore[no-untyped-def]
        super()._run_virtual_machine(sim)
        for job in list(self.pending):
            if job not in self._in:
                self._in.add(job)
                self.order.append(job)


def _run(policy: ASRPT, seed: int = 0):  # type: ignore[no-untyped-def]
    scenario = asrpt_sim_scenario(servers=2, num_jobs=80, trace_jobs=1_500, load=1.3, predictor="mean", name="hol")
    cluster, workload = scenario.episode(seed)
    return run_policy(Simulator(cluster, workload, scenario.model), policy, np.random.default_rng(seed))


def _overtakes(policy: _Recording, start: np.ndarray) -> int:
    """How many jobs started strictly before a job that entered pending_queue earlier."""
    starts = [float(start[j]) for j in policy.order]
    return sum(1 for i in range(1, len(starts)) if starts[i] < max(starts[:i]))


def test_strict_head_of_line_never_starts_a_later_job_while_the_head_waits_backfill_does():
    strict, backfill = _Recording(), _Recording(backfill=True)
    r_strict, r_backfill = _run(strict), _run(backfill)
    assert strict.backfill is False and strict.name == "a-srpt"
    assert backfill.name == "a-srpt-backfill"
    assert len(strict.order) == len(backfill.order) == 80
    assert _overtakes(strict, r_strict.start) == 0  # start times follow the queue order exactly
    assert _overtakes(backfill, r_backfill.start) > 0  # a later job that fitted started first
    assert np.all(np.isfinite(r_backfill.finish)) and np.all(np.isfinite(r_strict.finish))
    with pytest.raises(ConfigError, match="backfill"):
        ASRPT(backfill="yes")  # type: ignore[arg-type]


def test_registered_variants_reach_the_options():
    from ddl_gym.policies import make_policy

    assert make_policy("a-srpt").backfill is False
    assert make_policy("a-srpt-backfill").backfill is True
    assert make_policy("a-srpt:backfill=true").backfill is True
    assert make_policy("spjf").selection == "best-fit"
    assert make_policy("spjf-mostfree").selection == "most-free"
    assert make_policy("wcs-subtime-asrptsel").selection == "a-srpt"
    assert make_policy("wcs-duration:selection=consolidate").selection == "most-free"


def test_baseline_server_selections_differ_as_documented():
    assert selection_reading("pack") == "best-fit" and selection_reading("consolidate") == "most-free"
    assert selection_reading("fragment") == "fragment"
    with pytest.raises(ConfigError, match="server selection"):
        PredictedOrderPolicy("spjf", selection="widest")
    scenario = asrpt_sim_scenario(servers=4, num_jobs=80, trace_jobs=1_500, load=1.2, predictor="mean", name="sel")
    cluster, workload = scenario.episode(0)
    servers_used = {}
    for sel in ("best-fit", "most-free", "a-srpt"):
        policy = PredictedOrderPolicy("wcs-subtime", selection=sel)
        result = run_policy(Simulator(cluster, workload, scenario.model), policy, np.random.default_rng(0))
        servers_used[sel] = result
        if sel == "a-srpt":  # per job: most free for comm-heavy jobs, best fit otherwise
            assert set(policy._modes) <= {"consolidate", "fragment"}
    total = {k: r.summary()["total_jct_s"] for k, r in servers_used.items()}
    assert total["best-fit"] < total["most-free"]  # spreading small jobs slows the multi-server ones


def _jobs(groups: list[int], users: list[int], iterations: list[int]) -> Workload:
    n = len(groups)
    return Workload.from_jobs(arrival=list(range(n)), gpus=[1] * n, iterations=iterations, models=[PLAIN] * n,
                              user=users, group=groups)


def test_unseen_job_rules_give_the_stated_values():
    train = _jobs(groups=[10, 10, 10, 20, 20, 30], users=[1, 1, 1, 1, 1, 2], iterations=[100, 100, 100, 10, 40, 7])
    # jobs 0-1 seen; 2 (new group, known user 1), 3 (unknown group, user 1), 4 (new group, new user 3)
    test = _jobs(groups=[10, 30, 99, -1, 98], users=[1, 2, 1, 1, 3], iterations=[100, 7, 500, 8, 9])
    mean, median = 357 / 6, 70.0  # all training jobs
    want = {"zero": [0, 0, 0], "mean": [mean] * 3, "median": [median] * 3,
            "user": [70.0, 70.0, mean],  # user 1's mean (100, 100, 100, 10, 40); user 3 unseen: training mean
            "user-median": [100.0, 100.0, median]}
    assert set(want) == set(UNSEEN_RULES)
    makers = (lambda rule: StatPredictor("median", "group", unseen=rule),
              lambda rule: RandomForestPredictor(n_estimators=10, unseen=rule))
    for make in makers:
        seen = make("zero").fit(train).predict(test)[:2]
        for rule, values in want.items():
            if make is makers[1] and rule not in ("zero", "user"):
                continue  # the forest shares the rule's code with the statistics; two rules suffice
            got = make(rule).fit(train).predict(test)
            assert got[2:].tolist() == pytest.approx(values), rule
            assert got[:2].tolist() == seen.tolist()  # seen jobs: the rule does not apply
    assert unseen_rule("paper") == "zero" and unseen_rule("nn") == "user"
    assert make_predictor("mean").unseen.rule == "median"  # the default
    with pytest.raises(ConfigError, match="unseen"):
        unseen_rule("oracle")


def test_heavy_edge_tie_break_is_deterministic_documented_and_keeps_stages_together():
    import ddl_gym.sim.perf.pipeline_mapping as he
    from ddl_gym.baselines.a_srpt.server_selection import brute_force_mapping
    from ddl_gym.sim.perf.pipeline import iteration_time
    from ddl_gym.sim.zoo_pipeline import stage_config

    assert "Tie-break" in (he.__doc__ or "") and "total weight into" in (he.__doc__ or "")
    config = stage_config("vgg19", 4, 8)  # stage boundaries 0|1 and 1|2 both carry 51.4 MB
    act = [s.act_out_bytes for s in config.stages]
    assert act[0] == act[1]
    results = set()
    for seed in range(3):
        he._MAPPINGS.clear()
        results.add(he.heavy_edge(config, (7, 1), np.random.default_rng(seed)).counts)
    assert results == {((1, 2, 2, 2), (1, 0, 0, 0))}  # same mapping whatever the generator: no random draw
    alpha = iteration_time(config, next(iter(results)), 8, 1.25e9, 3e11)
    assert alpha == pytest.approx(brute_force_mapping(config, [7, 1], 8, 1.25e9, 3e11))  # the optimum (was +66 %)


def test_equal_offered_load_stretches_arrivals_to_the_bandwidth():
    loads = {}
    for equal in (False, True):
        scenario = asrpt_sim_scenario(servers=4, num_jobs=60, trace_jobs=1_500, inter_gbps=1.0, load=0.9,
                                      single_gpu_share=0.0, predictor="mean", name="eq", equal_load=equal)
        cluster, workload = scenario.episode(0)
        sim = Simulator(cluster, workload, scenario.model)
        alpha = np.array([sim.bound.alpha_min_tilde(j) for j in range(workload.num_jobs)])
        span = workload.arrival.max() - workload.arrival.min()
        loads[equal] = float(np.sum(workload.gpus * workload.iterations * alpha) / (cluster.num_gpus * span))
    assert loads[True] == pytest.approx(0.9, rel=1e-6)  # the offered load at 1 Gb/s is the load asked for
    assert loads[False] > 1.0  # the paper's fixed job set (its load is set at 10 Gb/s) overloads 1 Gb/s


def test_silenced_c_stdout_drops_native_writes_only_inside(capfd):
    from ddl_gym.cstdout import silenced_c_stdout

    os.write(1, b"before\n")
    with silenced_c_stdout():
        os.write(1, b"HighsMipSolverData::transformNewIntegerFeasibleSolution tmpSolver.run();\n")
    os.write(1, b"after\n")
    assert capfd.readouterr().out == "before\nafter\n"


def test_lowest_tie_break_is_the_rule_before_and_the_v0_env_keeps_it():
    """``tie_break="lowest"`` reproduces the mapping of the rule before issue 32 (recorded from that code:
    VGG19 4 x 2 on (7, 1) GPUs split stage 2), and DDLCluster-ASRPT-v0's world uses it (a v0 id keeps
    its dynamics), while ``asrpt-small`` uses the new rule."""
    import ddl_gym.sim.perf.pipeline_mapping as he
    from ddl_gym.scenarios import get_scenario
    from ddl_gym.sim.zoo_pipeline import stage_config

    config = stage_config("vgg19", 4, 8)
    assert he.heavy_edge(config, (7, 1), np.random.default_rng(0), tie_break="lowest").counts == \
        ((2, 2, 1, 2), (0, 0, 1, 0))
    with pytest.raises(ConfigError, match="tie_break"):
        he.heavy_edge(config, (7, 1), np.random.default_rng(0), tie_break="random")
    import gymnasium as gym

    env = gym.make("DDLCluster-ASRPT-v0")
    assert env.unwrapped.scenario.name == "asrpt-small-v0"
    assert env.unwrapped.scenario.model.tie_break == "lowest"
    assert get_scenario("asrpt-small").model.tie_break == "connected"
    cluster, workload = env.unwrapped.scenario.episode(0)
    sim = Simulator(cluster, workload, env.unwrapped.scenario.model)
    assert sim.bound.tie_break == "lowest"  # what the env's Heavy-Edge placements read


def test_asrpt_v0_env_stream_is_unchanged():
    """The first 120 steps of DDLCluster-ASRPT-v0 under random legal actions hash to the digest recorded
    on the code before issue 32 (commit 83b910f)."""
    import hashlib

    import gymnasium as gym

    env = gym.make("DDLCluster-ASRPT-v0")
    obs, info = env.reset(seed=0)
    rng = np.random.default_rng(0)
    digest = hashlib.sha256()
    for _ in range(120):
        obs, reward, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        digest.update(np.asarray(obs).tobytes())
        digest.update(np.float64(reward).tobytes())
        if terminated or truncated:
            break
    assert digest.hexdigest() == V0_STREAM_DIGEST
