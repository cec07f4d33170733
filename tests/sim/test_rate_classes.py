"""Rate classes: τ memoised per class of jobs with bit-identical constants changes no result.

The RAR and all-reduce bound models read a job only through two float64 columns, so jobs whose two
values are bit-identical share τ for every (servers, contention). The engine and SJF-BCO's planner
key their τ memos by that class instead of by job; these tests check the classes, that both
memos give the same results as per-job keys, and that they ask the model less often.
"""

from __future__ import annotations

from array import array

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ddl_gym.baselines.sjf_bco import plan as sjf_bco_plan
from ddl_gym.baselines.classic.policy import ClassicPolicy
from ddl_gym.sim import AllReduceContentionModel, ClusterSpec, RARContentionModel, Simulator, run_policy
from ddl_gym.sim.perf import rate_classes
from ddl_gym.workloads.synthetic import scaled_workload
from tests.golden_cases import result_digest
from tests.sjf_bco_scale_cases import offline_world

GBPS = 1e9 / 8


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([0.0, -0.0, 0.5, 1.5, 2.0]), st.sampled_from([1.0, 3.0, -0.0, 0.0])),
                min_size=4, max_size=40))
def test_classes_group_exactly_the_bit_identical_pairs(pairs: list[tuple[float, float]]) -> None:
    first = array("d", [a for a, _ in pairs])
    second = np.array([b for _, b in pairs])
    classes = rate_classes(first, second)
    bits = [(np.float64(a).view(np.int64), np.float64(b).view(np.int64)) for a, b in pairs]
    if 2 * len(set(bits)) > len(pairs):
        assert classes is None  # too few shared: per-job keys
        return
    assert classes is not None and len(classes) == len(pairs)
    for i in range(len(pairs)):
        for j in range(len(pairs)):
            assert (classes[i] == classes[j]) == (bits[i] == bits[j])  # -0.0 and 0.0 are two classes


def test_no_jobs_no_classes() -> None:
    assert rate_classes(array("d"), array("d")) is None


def _counting(bound):
    calls = []
    original = bound.iteration_time

    def iteration_time(job: int, n_servers: int, contention: int) -> float:
        calls.append(job)
        return original(job, n_servers, contention)

    bound.iteration_time = iteration_time
    return calls


def _run(model, with_classes: bool) -> tuple[str, int, int]:
    cluster = ClusterSpec.homogeneous(8, 4, inter_bandwidth=10 * GBPS, intra_bandwidth=800 * GBPS)
    workload = scaled_workload(np.random.default_rng(5), 400, max_gpus=16, arrival_rate_per_s=1.5)
    sim = Simulator(cluster, workload, model)
    if not with_classes:
        sim._rate_class = None
    calls = _counting(sim.bound)
    result = run_policy(sim, ClassicPolicy("srsf", "spread"), np.random.default_rng(1))
    return result_digest(result), len(calls), len(set(sim._rate_class or [])) or workload.num_jobs


@pytest.mark.parametrize("model", [RARContentionModel(), AllReduceContentionModel()], ids=["rar", "allreduce"])
def test_the_engine_keyed_by_class_runs_the_same_schedule_with_fewer_model_calls(model) -> None:
    by_class, class_calls, classes = _run(model, True)
    by_job, job_calls, _ = _run(model, False)
    assert by_class == by_job
    assert classes < 100  # the scaled workload draws a few model profiles and sizes
    assert class_calls < job_calls / 2


def test_the_planner_keyed_by_class_makes_the_same_plan() -> None:
    cluster, workload, model = offline_world(800, seed=2)
    bound = model.bind(cluster, workload)
    bounds = sjf_bco_plan.estimate_bounds(cluster, workload, model, bound)
    plans = []
    for with_classes in (True, False):
        context = sjf_bco_plan.PlanContext(cluster, workload, bound, bounds)
        if not with_classes:
            context._rate_class = None
        assert (context._rate_class is not None) == with_classes
        result = sjf_bco_plan.plan(cluster, workload, model, bounds=bounds, bound=bound, context=context)
        plans.append((result.history, result.kappa, [tuple(e) for e in result.entries]))
    assert plans[0] == plans[1]
