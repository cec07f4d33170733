"""Event engine: golden traces, incremental re-rating, invariants (hypothesis), determinism, fork."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ddl_gym.baselines.classic.policy import ClassicPolicy
from ddl_gym.sim.engine import DONE, InvariantError, SimulationError, Simulator, run_policy
from ddl_gym.sim.model import ClusterSpec, ConfigError, Workload
from ddl_gym.sim.perf import AllReduceContentionModel, RARContentionModel, per_iteration_times
from ddl_gym.sim.zoo import MODEL_ZOO
from tests.conftest import make_cluster, make_workload

RAR = RARContentionModel(xi1=1.0, xi2=1e-3, alpha=0.5, reduce_bytes_per_s=1e11)


def test_golden_trace_contention_ends_and_survivor_speeds_up():
    sim = Simulator(make_cluster(2, 4), make_workload([2, 2], [100, 300]), RAR, debug=True)
    sim.start(0, [0, 4])
    sim.start(1, [1, 5])
    assert sim.tau[0] == pytest.approx(0.2525) and sim.tau[1] == pytest.approx(0.2525)
    while sim.advance():
        pass
    # A: 100 iterations at 0.2525 s. B: 100 done by then, 200 left alone at 0.1325 s.
    assert sim.finish_time[0] == pytest.approx(25.25, rel=1e-12)
    assert sim.finish_time[1] == pytest.approx(25.25 + 200 * 0.1325, rel=1e-12)
    assert sim.done and list(sim.remaining) == [0.0, 0.0]


def test_rates_match_from_scratch_model_after_every_event():
    rng = np.random.default_rng(3)
    cluster = make_cluster(4, 4)
    wl = make_workload(rng.choice([1, 2, 3, 4, 6], 25).tolist(), rng.integers(50, 400, 25).tolist(),
                       np.sort(rng.uniform(0, 30, 25)).tolist())
    sim = Simulator(cluster, wl, RAR, debug=True)
    policy = ClassicPolicy("fifo", "spread")  # spreads jobs: lots of contention changes
    policy.reset(sim, rng)
    while not sim.done:
        policy.schedule(sim)
        running = list(sim.running)
        if running:
            expected = per_iteration_times(RAR, cluster, wl, running, [sim.placement[j] for j in running])
            assert [sim.tau[j] for j in running] == pytest.approx(expected.tolist(), rel=1e-12)
        assert sim.advance()


def test_start_rejects_bad_placements_with_clear_errors():
    sim = Simulator(make_cluster(2, 4), make_workload([2, 1], [10, 10], [0.0, 5.0]), RAR)
    with pytest.raises(SimulationError, match="needs 2 GPUs"):
        sim.start(0, [0])
    with pytest.raises(SimulationError, match="busy or repeated"):
        sim.start(0, [1, 1])
    with pytest.raises(SimulationError, match="not in the queue"):
        sim.start(1, [3])  # not arrived yet
    sim.start(0, [0, 1])
    with pytest.raises(SimulationError, match="not in the queue"):
        sim.start(0, [2, 3])


def test_no_start_before_arrival_and_clock_starts_at_first_arrival():
    sim = Simulator(make_cluster(1, 4), make_workload([1, 1], [10, 10], [5.0, 7.0]), RAR)
    assert sim.now == 5.0 and sim.queue == [0]
    assert sim.advance() and sim.now == 7.0 and sim.queue == [0, 1]


def test_oversized_job_is_rejected_naming_the_job():
    with pytest.raises(ConfigError, match="job 0 needs 9 GPUs but the cluster has 8"):
        Simulator(make_cluster(2, 4), make_workload([9], [10]), RAR)


def test_debug_mode_detects_corrupted_state():
    sim = Simulator(make_cluster(1, 4), make_workload([2], [10]), RAR, debug=True)
    sim.start(0, [0, 1])
    sim.gpu_owner[2] = 0  # corrupt: job 0 now "holds" a third GPU
    with pytest.raises(InvariantError):
        sim.check_invariants()


def test_stuck_policy_is_reported():
    class Lazy:
        name = "lazy"

        def reset(self, sim, rng):
            pass

        def schedule(self, sim):
            pass

    sim = Simulator(make_cluster(1, 4), make_workload([1], [10]), RAR)
    with pytest.raises(SimulationError, match="stuck"):
        run_policy(sim, Lazy())


def test_wake_up_is_a_decision_point():
    sim = Simulator(make_cluster(1, 4), make_workload([1], [10]), RAR)
    sim.wake_at(3.0)
    assert sim.next_event_time() == 3.0
    assert sim.advance() and sim.now == 3.0
    with pytest.raises(SimulationError):
        sim.wake_at(1.0)


def test_time_integrals_equal_total_jct_and_busy_gpu_seconds():
    wl = make_workload([1, 2, 4, 1], [100, 50, 80, 30], [0.0, 1.0, 2.0, 10.0])
    sim = Simulator(make_cluster(2, 4), wl, RAR, debug=True)
    result = run_policy(sim, ClassicPolicy("fifo", "pack"))
    assert sim.jobs_area == pytest.approx(result.jct.sum(), rel=1e-12)
    busy = float(((result.finish - result.start) * wl.gpus).sum())
    assert sim.busy_gpu_area == pytest.approx(busy, rel=1e-12)


def test_finished_since_lists_the_jobs_that_ended_in_completion_order():
    rng = np.random.default_rng(4)
    wl = make_workload(rng.choice([1, 2, 4], 30).tolist(), rng.integers(20, 400, 30).tolist(),
                       np.sort(rng.uniform(0, 30, 30)).tolist())
    sim = Simulator(make_cluster(3, 4), wl, RAR, debug=True)
    policy = ClassicPolicy("fifo", "spread")
    policy.reset(sim, rng)
    seen, order = 0, []
    while not sim.done:
        policy.schedule(sim)
        sim.advance()
        ended = sim.finished_since(seen)
        assert len(ended) == sim.num_finished - seen and all(sim.state[j] == DONE for j in ended)
        assert all(sim.finish_time[j] == sim.now for j in ended)  # each ended at this event
        seen = sim.num_finished
        order += ended
    assert sorted(order) == list(range(30))
    finish = [sim.finish_time[j] for j in order]
    assert finish == sorted(finish)  # completion order
    assert sim.finished_since(0) == order and sim.finished_since(30) == []
    twin = sim.fork()
    assert twin.finished_since(25) == order[25:]


def test_fork_is_exact_and_independent():
    rng = np.random.default_rng(1)
    wl = make_workload(rng.choice([1, 2, 4], 20).tolist(), rng.integers(20, 200, 20).tolist(),
                       np.sort(rng.uniform(0, 20, 20)).tolist())
    sim = Simulator(make_cluster(3, 4), wl, RAR)
    policy = ClassicPolicy("srsf", "spread")
    policy.reset(sim, rng)
    for _ in range(10):
        policy.schedule(sim)
        sim.advance()
    twin = sim.fork()
    policy_b = ClassicPolicy("srsf", "spread")
    policy_b.reset(twin, np.random.default_rng(0))
    before = list(sim.finish_time)
    res_twin = run_policy(twin, policy_b)
    np.testing.assert_array_equal(sim.finish_time, before)  # original untouched
    res_orig = run_policy(sim, ClassicPolicy("srsf", "spread"))
    np.testing.assert_array_equal(res_orig.finish, res_twin.finish)


def test_same_seed_same_results_bit_for_bit():
    def run(seed: int) -> np.ndarray:
        rng = np.random.default_rng(seed)
        wl = make_workload(rng.choice([1, 2, 4, 8], 40).tolist(), rng.integers(100, 1000, 40).tolist(),
                           np.sort(rng.uniform(0, 100, 40)).tolist())
        sim = Simulator(make_cluster(4, 4), wl, RAR)
        return run_policy(sim, ClassicPolicy("sjf", "rand"), np.random.default_rng(seed)).finish

    np.testing.assert_array_equal(run(5), run(5))
    assert not np.array_equal(run(5), run(6))


# ---------------------------------------------------------------------------- property-based
@st.composite
def clusters_and_workloads(draw):
    servers = draw(st.integers(1, 5))
    gpus = draw(st.lists(st.integers(1, 8), min_size=servers, max_size=servers))
    cluster = ClusterSpec(tuple(gpus), intra_bandwidth=50e9, inter_bandwidth=draw(st.sampled_from([1.25e9, 5e9])))
    n = draw(st.integers(1, 25))
    total = cluster.num_gpus
    job_gpus = draw(st.lists(st.integers(1, total), min_size=n, max_size=n))
    iters = draw(st.lists(st.integers(1, 500), min_size=n, max_size=n))
    arrivals = draw(st.lists(st.floats(0, 200, allow_nan=False), min_size=n, max_size=n))
    models = [MODEL_ZOO[k] for k in draw(st.lists(st.sampled_from(sorted(MODEL_ZOO)), min_size=n, max_size=n))]
    wl = Workload.from_jobs(arrival=arrivals, gpus=job_gpus, iterations=iters, models=models)
    return cluster, wl


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=clusters_and_workloads(),
    order=st.sampled_from(["fifo", "sjf", "srsf"]),
    placement=st.sampled_from(["ff", "ls", "rand", "pack", "spread", "ca"]),
    model=st.sampled_from([RAR, RARContentionModel(xi1=0.5, degradation="power"), AllReduceContentionModel()]),
    seed=st.integers(0, 2**16),
)
def test_invariants_hold_and_work_conserving_policies_drain(data, order, placement, model, seed):
    cluster, wl = data
    sim = Simulator(cluster, wl, model, debug=True)  # debug: invariants checked after every event
    result = run_policy(sim, ClassicPolicy(order, placement), np.random.default_rng(seed))
    assert result.completed
    assert np.all(result.start >= wl.arrival)
    assert np.all(result.finish > result.start)
    # Contention only ever slows a job down relative to running alone on the same placement.
    assert np.all(result.finish - result.start >= result.ideal_runtime * (1 - 1e-9))
    summary = result.summary()
    assert 0 < summary["gpu_alloc_util"] <= 1 + 1e-9
    assert math.isclose(summary["total_jct_s"], sim.jobs_area, rel_tol=1e-9)


def test_placements_on_one_server_are_validated_on_the_fast_path_too():
    # Taking a server's lowest free GPUs is validated by one list comparison; anything else takes the
    # full checks, so busy, repeated and out-of-range ids are still refused.
    sim = Simulator(make_cluster(2, 4), make_workload([1, 2, 2, 2, 2], [10] * 5))
    sim.start(0, [0])
    for bad in ([0, 1], [1, 1], [3, 9], [-1, 1]):
        with pytest.raises(SimulationError):
            sim.start(1, bad)
    sim.start(1, [1, 2])  # the lowest free GPUs of server 0
    assert sim.free_gpu_list(0) == [3] and sim.placement[1].tolist() == [1, 2]
    sim.start(2, [5, 4])  # one server, not in ascending order: the general path
    assert sim.free_gpu_list(1) == [6, 7] and sim.placement[2].tolist() == [5, 4]
    sim.check_invariants()


def test_rate_changes_count_starts_and_re_rated_neighbours():
    sim = Simulator(make_cluster(3, 4), make_workload([2, 2, 2], [100, 300, 5000]), RAR, debug=True)
    sim.start(0, [0, 4])  # split over servers 0 and 1: its own rate
    assert sim.rate_changes == 1
    sim.start(1, [5, 8])  # split over servers 1 and 2: its rate, and job 0 re-rated (p 1 -> 2 on server 1)
    assert sim.rate_changes == 3 and sim.contention[0] == 2
    sim.start(2, [1, 2])  # one server: no neighbour's p moves
    assert sim.rate_changes == 4
    assert sim.advance() and sim.state[0] == DONE  # job 0 ends first: job 1's p falls back, one re-rate
    assert sim.rate_changes == 5 and sim.contention[1] == 1
