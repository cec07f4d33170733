"""The LP lower bound on average JCT (ddl_gym/sim/lower_bound.py): never beaten, ≤ the exact optimum,
monotone in the partition, and refused where its proof does not apply."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ddl_gym.baselines import make_policy
from ddl_gym.scenarios import Scenario, get_scenario
from ddl_gym.sim.engine import QUEUED, RUNNING, Simulator, run_policy
from ddl_gym.sim.lower_bound import (
    LowerBoundUnsupported, default_breakpoints, lower_bound, lp_lower_bound, minimum_runtimes, scenario_lower_bound,
)
from ddl_gym.sim.model import ClusterSpec, ModelProfile, Workload
from ddl_gym.sim.perf import AllReduceContentionModel, RARContentionModel
from ddl_gym.sim.zoo import MODEL_ZOO

GBPS = 1e9 / 8
#: Every reference policy of the job-level engine (rigid all-reduce jobs, contention models).
_PLACEMENTS = ("ff", "ls", "rand", "pack", "spread", "ca", "fs")
JOB_LEVEL_REFERENCES = tuple(f"{o}+{p}" for o in ("fifo", "sjf", "srsf") for p in _PLACEMENTS) + tuple(
    f"easy-{o}+{p}" for o in ("fifo", "sjf", "srsf") for p in _PLACEMENTS) + (
    "sjf-bco", "sjf-bco+ff", "sjf-bco+ls", "sjf-bco+rand") + tuple(
    k + ("" if p == "pack" else f":placement={p}") for k in ("las", "las-np", "gittins", "gittins-np") for p in _PLACEMENTS)


def random_instance(seed: int, max_jobs: int = 9) -> tuple[ClusterSpec, Workload, object]:
    """A small random world: 1-3 servers of 2-4 GPUs (possibly unequal), slow or fast NICs, 3-9 jobs
    (some larger than a server), Table III models, RAR or all-reduce model."""
    rng = np.random.default_rng(seed)
    servers = int(rng.integers(1, 4))
    per_server = tuple(int(rng.integers(2, 5)) for _ in range(servers))
    nic = float(rng.choice([10.0, 25.0, 100.0]))
    cluster = ClusterSpec(gpus_per_server=per_server, inter_bandwidth=nic * GBPS, intra_bandwidth=800 * GBPS)
    n = int(rng.integers(3, max_jobs + 1))
    total = cluster.num_gpus
    gpus = rng.integers(1, total + 1, size=n)
    arrival = np.sort(rng.uniform(0, 60, size=n)) * float(rng.choice([0.0, 1.0, 4.0]))
    iterations = rng.integers(50, 800, size=n)
    zoo = list(MODEL_ZOO.values())
    models = [zoo[int(i)] for i in rng.integers(0, len(zoo), size=n)]
    workload = Workload.from_jobs(arrival=arrival, gpus=gpus, iterations=iterations, models=models)
    if rng.random() < 0.7:
        model = RARContentionModel(xi1=float(rng.choice([0.6, 1.0])), xi2=float(rng.choice([1e-3, 1e-2])))
    else:
        model = AllReduceContentionModel()
    return cluster, workload, model


class RandomSchedule:
    """Random decisions: random subsets of queued jobs started on random GPUs, random idle waits and,
    when ``preempt``, random preemptions (with a restart overhead)."""

    name = "random-schedule"

    def __init__(self, preempt: bool = False) -> None:
        self.capabilities = frozenset({"preempt"}) if preempt else frozenset()
        self.preempt = preempt

    def reset(self, sim: Simulator, rng: np.random.Generator) -> None:
        self.rng = rng

    def schedule(self, sim: Simulator) -> None:
        rng = self.rng
        if self.preempt and sim.running and rng.random() < 0.2:
            victim = int(rng.choice(list(sim.running)))
            sim.preempt(victim, overhead_s=float(rng.choice([0.0, 5.0])))
        for job in rng.permutation(list(sim.queue)).tolist():
            if sim.state[job] != QUEUED or int(sim.workload.gpus[job]) > sim.num_free:
                continue
            if sim.running and rng.random() < 0.4:
                continue  # idle on purpose
            free = np.flatnonzero(np.asarray(sim.gpu_owner) < 0)
            sim.start(job, np.sort(rng.choice(free, size=int(sim.workload.gpus[job]), replace=False)))
        if sim.num_queued and not any(sim.state[j] == RUNNING for j in range(sim.workload.num_jobs)):
            job = int(list(sim.queue)[0])  # nothing running: start one so the run cannot stall
            free = np.flatnonzero(np.asarray(sim.gpu_owner) < 0)
            sim.start(job, free[: int(sim.workload.gpus[job])])
        elif sim.num_queued and rng.random() < 0.3:
            sim.wake_at(sim.now + float(rng.uniform(1.0, 30.0)))


def _avg_jct(cluster: ClusterSpec, workload: Workload, model: object, policy: object, seed: int) -> float:
    sim = Simulator(cluster, workload, model)
    result = run_policy(sim, policy, np.random.default_rng(seed))
    return float(np.mean(result.finish - workload.arrival))


def test_no_reference_policy_or_random_schedule_beats_the_bound():
    """200 random small worlds: every job-level reference policy, random non-preemptive and preemptive
    schedules stay at or above the bound (a violation would disprove the docstring's claim)."""
    checked = 0
    gaps = []
    for seed in range(200):
        cluster, workload, model = random_instance(seed)
        bound = lp_lower_bound(workload, cluster, model, periods=48)
        runs = [_avg_jct(cluster, workload, model, make_policy(p), seed) for p in JOB_LEVEL_REFERENCES]
        runs += [_avg_jct(cluster, workload, model, RandomSchedule(preempt=k % 2 == 1), seed * 10 + k) for k in range(4)]
        for value in runs:
            assert value >= bound, (seed, value, bound)
            checked += 1
        gaps.append(min(runs) / bound - 1.0)
    assert checked == 200 * (len(JOB_LEVEL_REFERENCES) + 4)
    # not vacuous: the bound is close on some worlds (within 2% of the best policy)
    assert min(gaps) < 0.02


@settings(max_examples=40, deadline=None, derandomize=True)
@given(world=st.integers(0, 10**6), decisions=st.integers(0, 10**6), preempt=st.booleans())
def test_random_schedules_never_beat_the_bound(world: int, decisions: int, preempt: bool):
    """Hypothesis: any world, any random decision sequence (idle waits, random GPUs, preemptions)."""
    cluster, workload, model = random_instance(world)
    value = _avg_jct(cluster, workload, model, RandomSchedule(preempt=preempt), decisions)
    assert value >= lp_lower_bound(workload, cluster, model, periods=32)


def test_mcts_never_beats_the_bound():
    """The clairvoyant MCTS (forks see the true future) on a few small worlds."""
    for seed in range(10):
        cluster, workload, model = random_instance(1000 + seed, max_jobs=7)
        scenario = Scenario(name=f"lb-{seed}", cluster=cluster, workload=lambda rng, c, w=workload: w, model=model)
        from ddl_gym.harness import simulate

        run = simulate(make_policy("mcts:guide=srsf+pack,sims=8"), scenario, seed).result
        value = float(np.mean(run.finish - workload.arrival))
        assert value >= lp_lower_bound(workload, cluster, model, periods=48)


def _cpsat_optimum(arrival: list[int], durations: list[int], gpus: list[int], capacity: int) -> int:
    """Exact min Σ C_j of non-preemptive jobs on ``capacity`` interchangeable GPUs (CP-SAT)."""
    from ortools.sat.python import cp_model

    m = cp_model.CpModel()
    horizon = max(arrival) + sum(durations)
    ends, intervals = [], []
    for j, (r, d) in enumerate(zip(arrival, durations)):
        s = m.NewIntVar(r, horizon, f"s{j}")
        e = m.NewIntVar(r + d, horizon + d, f"e{j}")
        intervals.append(m.NewIntervalVar(s, d, e, f"i{j}"))
        ends.append(e)
    m.AddCumulative(intervals, gpus, capacity)
    m.Minimize(sum(ends))
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.max_time_in_seconds = 20.0
    assert solver.Solve(m) == cp_model.OPTIMAL
    return int(solver.ObjectiveValue())


#: τ = 1 s on one server: compute 0.999 s + ξ2 = 1 ms, no gradient (whole-second jobs)
UNIT_MODEL = ModelProfile("unit", 0.0, 0.5, 0.499)


def one_server_instances(count: int = 25):
    """``(cluster, workload, model, exact optimum of avg JCT)`` for small one-server worlds of
    whole-second jobs: the engine's schedules there are exactly non-preemptive cumulative schedules of
    p_j = F_j·τ_j, so CP-SAT's integer optimum is the optimum."""
    model = RARContentionModel(xi2=1e-3)
    for seed in range(count):
        rng = np.random.default_rng(seed)
        capacity = int(rng.integers(2, 5))
        n = int(rng.integers(3, 7))
        arrival = sorted(int(a) for a in rng.integers(0, 15, size=n))
        iterations = [int(f) for f in rng.integers(1, 20, size=n)]
        gpus = [int(g) for g in rng.integers(1, capacity + 1, size=n)]
        cluster = ClusterSpec(gpus_per_server=(capacity,))
        workload = Workload.from_jobs(arrival=arrival, gpus=gpus, iterations=iterations, models=[UNIT_MODEL] * n)
        assert np.allclose(minimum_runtimes(cluster, workload, model), iterations, rtol=1e-12)
        yield cluster, workload, model, (_cpsat_optimum(arrival, iterations, gpus, capacity) - sum(arrival)) / n


def test_bound_is_at_most_the_exact_optimum_on_one_server():
    """One server, whole-second jobs (:func:`one_server_instances`): CP-SAT gives the optimum."""
    gaps = []
    for seed, (cluster, workload, model, opt) in enumerate(one_server_instances()):
        bound = lp_lower_bound(workload, cluster, model, periods=64)
        assert bound <= opt * (1 + 1e-9), (seed, bound, opt)
        # the optimum is attained by some schedule the engine can run, so no policy is below it either
        best = min(_avg_jct(cluster, workload, model, make_policy(p), 0) for p in ("sjf+pack", "srsf+pack", "fifo+pack"))
        assert best >= opt - 1e-6
        gaps.append(1.0 - bound / opt)
    assert max(gaps) < 0.35 and min(gaps) < 0.05  # informative, not vacuous


def test_bound_is_at_most_the_cumulative_optimum_across_servers():
    """Several servers: the CP-SAT optimum of the pooled-GPU relaxation (fragmentation and contention
    ignored, p_j on the fewest servers) is ≤ the true optimum; the bound is ≤ it as well."""
    for seed in range(15):
        cluster, workload, model = random_instance(500 + seed, max_jobs=6)
        p = minimum_runtimes(cluster, workload, model)
        scale = 1000.0  # milliseconds, durations rounded down and arrivals rounded down: a relaxation
        arrival = [int(np.floor(a * scale)) for a in workload.arrival]
        durations = [max(1, int(np.floor(x * scale))) for x in p]
        opt = (_cpsat_optimum(arrival, durations, workload.gpus.tolist(), cluster.num_gpus) - sum(arrival)) / scale
        opt /= workload.num_jobs
        bound = lp_lower_bound(workload, cluster, model, periods=48)
        assert bound <= opt + 1e-3 * workload.num_jobs, (seed, bound, opt)


def test_coarser_periods_never_give_a_higher_bound():
    """Nested partitions: removing breakpoints never raises the bound (module docstring)."""
    for seed in range(30):
        cluster, workload, model = random_instance(2000 + seed)
        p = minimum_runtimes(cluster, workload, model)
        fine = default_breakpoints(workload.arrival, workload.gpus, p, cluster.num_gpus, periods=96)
        rng = np.random.default_rng(seed)
        keep = rng.random(fine.size) < 0.3
        keep[0] = keep[-1] = True
        coarse = fine[keep]
        coarser = coarse[np.r_[True, rng.random(coarse.size - 2) < 0.5, True]]
        values = [lp_lower_bound(workload, cluster, model, breakpoints=b) for b in (coarser, coarse, fine)]
        assert values[0] <= values[1] * (1 + 1e-7) and values[1] <= values[2] * (1 + 1e-7), (seed, values)


def test_spread_jobs_carry_their_spread_run_time():
    """A job larger than every server pays inter-server exchange and ξ2 per server in p_j."""
    cluster = ClusterSpec.homogeneous(4, 4, inter_bandwidth=10 * GBPS, intra_bandwidth=800 * GBPS)
    vgg = MODEL_ZOO["vgg16"]
    workload = Workload.from_jobs(arrival=[0.0, 0.0], gpus=[4, 8], iterations=[100, 100], models=[vgg, vgg])
    model = RARContentionModel(xi1=1.0)
    p = minimum_runtimes(cluster, workload, model)
    bound = model.bind(cluster, workload)
    assert p[0] == pytest.approx(100 * bound.iteration_time(0, 1, 0))
    assert p[1] == pytest.approx(100 * bound.iteration_time(1, 2, 1))
    assert p[1] > 3 * p[0]  # 10 GbE exchange of VGG-16's 526 MB
    sim = Simulator(cluster, workload, model)
    result = run_policy(sim, make_policy("sjf+pack"))
    assert np.mean(result.finish - workload.arrival) >= lp_lower_bound(workload, cluster, model)


def test_bound_of_a_scenario_and_its_refusals():
    lb = scenario_lower_bound(get_scenario("small"), 3, periods=64)
    assert lb.avg_jct_s >= lb.alone_avg_jct_s * (1 - 1e-9)
    assert lb.lp_value <= lb.lp_primal * (1 + 1e-7)
    with pytest.raises(LowerBoundUnsupported, match="engine 'task'"):
        scenario_lower_bound(get_scenario("ada-srsf"), 0)
    with pytest.raises(LowerBoundUnsupported, match="performance model"):
        scenario_lower_bound(get_scenario("smd-sync"), 0)
    cluster, workload, model = random_instance(0)
    with pytest.raises(Exception, match="breakpoints"):
        lower_bound(workload, cluster, model, breakpoints=[5.0, 1.0])
