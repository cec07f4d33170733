"""The SJF-BCO planner's compiled build and its list-based fast path (``baselines/sjf_bco/plan.py``).

``scripts/build_native.py`` compiles the planner like the engines: the plan records (``PlanEntry``,
``PlanResult``, ...) stay the plain module's classes, and the compiled ``Trial``/``plan`` are used
only while the build's stamp matches the source. Plans must be identical in both builds (the digests
of ``tests/baselines/sjf_bco/test_sjf_bco_digests.py`` run in whichever build is in use; here both run side by side).
"""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ddl_gym.baselines.sjf_bco import plan as sjf_bco_plan
from ddl_gym.baselines.sjf_bco.plan import InitialState, PlanEntry, PlanResult, _server_sum
from tests.native_build import build_script
from tests.sjf_bco_scale_cases import offline_world

finite = st.floats(min_value=0.0, max_value=1e7, allow_nan=False, allow_infinity=False)


@settings(max_examples=300, deadline=None)
@given(values=st.lists(finite, min_size=1, max_size=300))
def test_server_sum_is_numpys_reduceat_bit_for_bit(values: list[float]) -> None:
    # The per-server mean U of LBSGF (Alg. 3 line 2) is recomputed from the list; ties between servers
    # break by index, so the sum must be numpy's exactly (pairwise blocks of 8, then the tail).
    expected = float(np.add.reduceat(np.array(values, dtype=np.float64), [0])[0])
    assert _server_sum(values, 0, len(values)) == expected
    if len(values) > 3:  # a segment inside a longer list, as the servers are
        assert _server_sum(values, 1, len(values) - 1) == float(np.add.reduceat(np.array(values[1:-1]), [0])[0])


def test_native_source_imports_the_plan_records_from_the_plain_module() -> None:
    script = build_script()
    target = script.TARGETS["sjfbco"]
    text = target.source.read_text()
    out = script.native_source(text, target)
    assert "# <pure-only>" not in out and "PurePythonTrial" not in out  # the build switch stays behind
    imported = [line for line in out.splitlines() if line.startswith("from ddl_gym.baselines.sjf_bco.plan import ")]
    assert imported and {"PlanEntry", "PlanResult", "PlanOptions", "InitialState", "EstimateBounds"} <= \
        set(imported[0].split(" import ")[1].split(", "))
    assert "\nclass PlanEntry(" not in out and "\nclass Trial:" in out
    assert f'SOURCE_SHA256 = "{hashlib.sha256(text.encode()).hexdigest()}"' in out
    assert target.folder == script.REPO_ROOT / "baselines" / "sjf_bco"


def _plan_fields(result: PlanResult) -> tuple:
    return (result.theta_tilde, result.theta_plan, result.kappa, result.trials, result.history, result.planned_makespan,
            result.w_max, [tuple(e) for e in result.entries])


@pytest.mark.parametrize("kind", ["sjf-bco", "ff", "ls", "rand"])
def test_compiled_planner_makes_the_plain_plans(kind: str) -> None:
    if sjf_bco_plan.BUILD != "native":
        pytest.skip("the compiled planner is not built (scripts/build_native.py)")
    # The plain function builds the plain module's own classes (the switch rebinds only the public names).
    assert sjf_bco_plan._TRIAL is sjf_bco_plan.PurePythonTrial and sjf_bco_plan._CONTEXT is sjf_bco_plan.PurePythonPlanContext
    cluster, workload, model = offline_world(1500, seed=3)
    rng_seed = 7
    compiled = sjf_bco_plan.plan(cluster, workload, model, kind=kind, rng=np.random.default_rng(rng_seed))
    plain = sjf_bco_plan.pure_python_plan(cluster, workload, model, kind=kind, rng=np.random.default_rng(rng_seed))
    assert compiled.entries and isinstance(compiled.entries[0], PlanEntry)
    assert _plan_fields(compiled) == _plan_fields(plain)


def test_compiled_trial_forks_and_reports_like_the_plain_one() -> None:
    if sjf_bco_plan.BUILD != "native":
        pytest.skip("the compiled planner is not built (scripts/build_native.py)")
    cluster, workload, model = offline_world(300, seed=1)
    built = []
    for trial_class, context_class in ((sjf_bco_plan.Trial, sjf_bco_plan.PlanContext),
                                       (sjf_bco_plan.PurePythonTrial, sjf_bco_plan.PurePythonPlanContext)):
        bound = model.bind(cluster, workload)
        bounds = sjf_bco_plan.estimate_bounds(cluster, workload, model, bound)
        trial = trial_class(context_class(cluster, workload, bound, bounds), 10**9, "sjf-bco", 4, 1.0,
                            InitialState.empty(cluster))
        jobs = sorted(range(workload.num_jobs), key=lambda j: int(workload.gpus[j]))
        trial.run(jobs, 150)  # the first 150 jobs, then two forks continue with other κ
        forks = [trial.fork(kappa, np.inf) for kappa in (1, 32)]
        for fork in forks:
            assert fork.run(jobs)
        built.append([(fork.makespan, fork.load.tolist(), fork.busy.tolist(), fork.entries) for fork in forks])
    assert built[0] == built[1]


@pytest.mark.parametrize("world", ["offline", "allreduce"])
def test_estimate_bounds_at_once_equals_the_per_job_loop(world: str) -> None:
    from ddl_gym.sim.perf import AllReduceContentionModel

    cluster, workload, model = offline_world(400, seed=2)
    if world == "allreduce":
        model = AllReduceContentionModel()
    bound = model.bind(cluster, workload)
    bounds = sjf_bco_plan.estimate_bounds(cluster, workload, model, bound)
    p_up = cluster.max_server_gpus / getattr(model, "xi1", 1.0)
    assert float(p_up).is_integer()  # so the vectorised path ran
    for j in range(workload.num_jobs):
        low = bound.iteration_time(j, 1, 0)
        servers_up = min(int(workload.gpus[j]), cluster.num_servers)
        up = low if servers_up <= 1 else max(low, bound.iteration_time(j, servers_up, int(p_up)))
        assert bounds.tau_low[j] == low and bounds.tau_up[j] == up


def test_a_policy_that_has_planned_pickles_and_runs_on() -> None:
    import pickle

    from ddl_gym.policies import make_policy
    from ddl_gym.sim import Simulator, run_policy

    cluster, workload, model = offline_world(120, seed=4)
    policy = make_policy("sjf-bco")
    first = run_policy(Simulator(cluster, workload, model), policy, np.random.default_rng(0))
    copy = pickle.loads(pickle.dumps(policy))  # keeps its PlanContext (compiled or plain)
    assert type(copy._context) is type(policy._context) and copy._context.u == policy._context.u
    again = run_policy(Simulator(cluster, workload, model), copy, np.random.default_rng(0))
    np.testing.assert_array_equal(first.finish, again.finish)
    with pytest.raises(Exception, match="PlanContext needs"):
        sjf_bco_plan.PlanContext(cluster)
