"""SMD's PS speed model (Yu §III-B/C): hand-computed values of eqs. (4)/(5), θ of (9)/(10), the sigmoid,
the overlap recurrences of Lemmas 1 and 2 (and the direct event simulation that cross-checks Lemma 2),
the exact inner optimum, allocations and the engine's rate model."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ddl_gym.sim.engine import Simulator
from ddl_gym.sim.model import ClusterSpec, ConfigError
from ddl_gym.sim.perf import make_performance_model
from ddl_gym.sim.perf.ps import (
    PER_JOB_TYPE, SMDProfile, SMDSpeedModel, brute_force_inner_optimum, exact_inner_optimum, overlap_coefficients,
    priority_link_simulation, priority_times, ps_allocation, sequential_times, sigmoid_utility, smd_allocation,
    wait_free_times,
)
from ddl_gym.workloads.smd_jobs import SMD_RESOURCES, draw_smd_jobs, smd_workload

RES = ("gpu", "cpu", "mem", "storage")


def worked_profile(mode: str, **changes) -> SMDProfile:
    """Spec B1.4's worked example: K=320, m=32, t_f=0.01, t_b=0.5, g=100 MB, B=10 Gb/s, β=(3.5, 0.005), α=0.5, η=1."""
    base = dict(mode=mode, gradient_bytes=100e6, bandwidth=1.25e9, global_batch=320, mini_batch=32, t_f=0.01, t_b=0.5,
                alpha=0.5, beta1=3.5, beta2=0.005, eta=(1.0, 1.0, 1.0), resources=RES,
                worker_demand=(1, 4, 8, 5), ps_demand=(0, 2, 4, 5), limit=(4, 36, 60, 20), gamma=(50.0, 5.0, 8.0))
    base.update(changes)
    return SMDProfile(**base)


# ----------------------------------------------------------------------------- eqs. (4)/(5), (9)/(10)
def test_worked_example_sync_and_async_completion_times():
    sync, asyn = worked_profile("sync"), worked_profile("async")
    assert sync.per_iteration_time(4, 2) == pytest.approx(15.63, rel=1e-12)  # 0.8 + 0.5 + 0.32 + 14 + 0.01
    assert sync.completion_time(100, 4, 2) == pytest.approx(1563.0, rel=1e-12)
    assert asyn.per_iteration_time(4, 2) == pytest.approx(14.99 / 4, rel=1e-12)  # 0.32 + 0.5 + 0.16 + 14 + 0.01
    assert asyn.completion_time(100, 4, 2) == pytest.approx(374.75, rel=1e-12)


def test_theta_identities_of_problems_9_and_10():
    sync, asyn = worked_profile("sync"), worked_profile("async")
    t1, t2, t3, t4, t5 = sync.thetas(100)
    assert (t1, t2, t3, t4, t5) == pytest.approx((350, 0.5, 50, 16, 320))
    w, p = 4, 2
    assert t1 * w + t2 * p + t3 + t4 * w / p + t5 / w == pytest.approx(1563.0)
    a1, a2, a3, a4 = asyn.thetas(100)
    assert (a1, a2, a3, a4) == pytest.approx((350, 0.5, 82, 8))
    assert a1 + a2 * p / w + a3 / w + a4 / p == pytest.approx(374.75)
    # The θ form equals eqs. (4)/(5) everywhere, not only at the worked point.
    for w in (1, 3, 7):
        for p in (1, 2, 5):
            assert sync.completion_time(100, w, p) == pytest.approx(t1 * w + t2 * p + t3 + t4 * w / p + t5 / w)
            assert asyn.completion_time(100, w, p) == pytest.approx(a1 + a2 * p / w + a3 / w + a4 / p)


def test_eta_scales_each_component_of_eq_4():
    p = worked_profile("sync", eta=(0.5, 0.2, 0.25))
    assert p.per_iteration_time(4, 2) == pytest.approx(0.5 * 0.8 + 0.2 * 0.5 + 0.25 * 0.32 + 14 + 0.01)


def test_sigmoid_values_and_time_scale():
    p = worked_profile("sync")
    assert p.utility(6.0) == pytest.approx(49.99773, abs=1e-5)
    assert p.utility(8.0) == 25.0
    assert p.utility(10.0) == pytest.approx(0.0022698, rel=1e-4)
    scaled = p.with_time_scale(100.0)
    assert scaled.utility(800.0) == 25.0 and scaled.utility(600.0) == pytest.approx(49.99773, abs=1e-5)
    assert sigmoid_utility(1e9, 50, 5, 8) == 0.0 and sigmoid_utility(-1e9, 50, 5, 8) == 50.0  # no overflow


# ----------------------------------------------------------------------------- overlap models
def test_sequential_time_is_sum_b_plus_two_sum_r_plus_sum_f():
    f, b, r = [0.1, 0.2, 0.3], [0.4, 0.5, 0.6], [0.7, 0.8, 0.9]
    times = sequential_times(f, b, r)
    assert times.t == pytest.approx(1.5 + 2 * 2.4 + 0.6)
    assert overlap_coefficients(f, b, r, "sequential") == (1.0, 1.0, 1.0)


def test_wait_free_communication_bound_example_matches_fig4_form():
    # Hand-computed: κ = (13, 10, 6, 1), s = (18, 15, 11, 6), τ1 = 20, t = 24.
    f, b, r = [1, 1, 1, 1], [1, 1, 1, 1], [2, 3, 4, 5]
    times = wait_free_times(f, b, r)
    assert times.t == 24.0
    assert (times.h_f, times.h_b, times.h_r) == (4.0, 1.0, 19.0)  # H_r = 2r4 + r3 + r2 + r1, H_b = b4
    eta = overlap_coefficients(f, b, r, "wait-free")
    assert eta == pytest.approx((1.0, 1 / 4, 19 / 28))  # η2 = b4/Σb, η3 = (2r4+r3+r2+r1)/(2Σr)


def test_wait_free_compute_bound_example():
    # κ1 = Σb = 20 binds; s1 = κ1 + r1 = 21; τ1 = 22; t = 26: H_b = 20, H_r = 2 r1, H_f = 4.
    times = wait_free_times([1, 1, 1, 1], [5, 5, 5, 5], [1, 1, 1, 1])
    assert (times.t, times.h_f, times.h_b, times.h_r) == (26.0, 4.0, 20.0, 2.0)


layer_lists = st.integers(1, 12).flatmap(lambda n: st.tuples(
    *(st.lists(st.floats(0.0, 5.0, allow_nan=False), min_size=n, max_size=n) for _ in range(3))))


@settings(max_examples=150, deadline=None)
@given(layer_lists)
def test_overlap_attribution_sums_to_t_and_wait_free_never_slower_than_sequential(layers):
    f, b, r = layers
    seq = sequential_times(f, b, r)
    for model in (wait_free_times, priority_times, priority_link_simulation):
        times = model(f, b, r)
        assert times.h_f + times.h_b + times.h_r == pytest.approx(times.t, rel=1e-9, abs=1e-9)
        assert min(times.h_f, times.h_b, times.h_r) >= -1e-9
    assert wait_free_times(f, b, r).t <= seq.t + 1e-9
    assert priority_link_simulation(f, b, r).t <= seq.t + 1e-9


def test_lemma2_agrees_with_the_event_simulation_for_two_layers():
    # b = (1, 2), r = (1, 4): layer 2 is ready at 2 and sends 1 s before layer 1 preempts at 3;
    # e1 = 4, e2 = 4 + (4 - 1) = 7, τ2 = 7, t = 8.
    for fn in (priority_times, priority_link_simulation):
        times = fn([1, 1], [1, 2], [1, 4])
        assert (times.t, times.h_f, times.h_b, times.h_r) == (8.0, 1.0, 2.0, 5.0)


@settings(max_examples=100, deadline=None)
@given(st.tuples(*(st.lists(st.floats(0.0, 5.0, allow_nan=False), min_size=2, max_size=2) for _ in range(3))))
def test_lemma2_equals_event_simulation_whenever_at_most_one_layer_has_backlog(layers):
    f, b, r = layers
    assert priority_times(f, b, r).t == pytest.approx(priority_link_simulation(f, b, r).t, rel=1e-12, abs=1e-12)


def test_lemma2_as_printed_double_counts_a_second_backlog():
    # b = f = (1, 1, 1), r = (1, 3, 3). Link: layer 3 sends [1, 2], layer 2 [2, 3], layer 1 [3, 4] (e1 = 4),
    # layer 2 [4, 6] (e2 = 6), layer 3 [6, 8] (e3 = 8) -> t = 9. Lemma 2: e3 = (3+3) - (1+1) + max(4, 6) = 10 -> t = 11.
    assert priority_link_simulation([1, 1, 1], [1, 1, 1], [1, 3, 3]).t == 9.0
    assert priority_times([1, 1, 1], [1, 1, 1], [1, 3, 3]).t == 11.0


def test_slices_delay_layer_one_by_at_most_one_slice():
    f, b, r = [1, 1], [1, 2], [1, 4]
    # Slices of layer 2 from t=2: [2, 2.75], [2.75, 3.5]; layer 1 waits for the slice in flight, sends
    # [3.5, 4.5] (e1 = 4.5), layer 2's remaining 2.5 s end at 7 -> t = 8. Lemma 2: e1 = Σb + r1 + φ = 4.75,
    # e2 = (4 - 1) + 4.75 = 7.75 -> t = 8.75 (φ as a worst-case wait).
    assert priority_link_simulation(f, b, r, slice_s=0.75).t == 8.0
    assert priority_times(f, b, r, slice_s=0.75).t == 8.75


def test_overlap_errors_name_the_problem():
    with pytest.raises(ConfigError, match="same number"):
        wait_free_times([1, 2], [1], [1, 2])
    with pytest.raises(ConfigError, match="unknown overlap model"):
        overlap_coefficients([1], [1], [1], "magic")


# ----------------------------------------------------------------------------- profiles, limits, optimum
def test_profile_validation_and_limits():
    with pytest.raises(ConfigError, match="mode"):
        worked_profile("both")
    with pytest.raises(ConfigError, match="GPU demands"):
        worked_profile("sync", worker_demand=(0.5, 4, 8, 5))
    with pytest.raises(ConfigError, match="one value per resource"):
        worked_profile("sync", limit=(4, 36))
    p = worked_profile("sync")  # worker (1,4,8,5), PS (0,2,4,5), limit (4,36,60,20)
    assert p.max_equal_count() == 2  # pairs (1,6,12,10): storage allows 2
    assert p.max_workers(1) == 3 and p.max_ps(1) == 3  # storage: 5w + 5p <= 20
    assert bool(p.fits_limit(3, 1)) and not bool(p.fits_limit(3, 2)) and not bool(p.fits_limit(0, 1))
    assert dict(p.resource_limits) == {"gpu": 4.0, "cpu": 36.0, "mem": 60.0, "storage": 20.0}


def test_exact_inner_optimum_equals_brute_force_enumeration():
    for mode in ("sync", "async"):
        for seed in range(3):
            profiles, iterations = draw_smd_jobs(np.random.default_rng(seed), 12, mode)
            for profile, e in zip(profiles, iterations):
                fast, brute = exact_inner_optimum(profile, e), brute_force_inner_optimum(profile, e)
                if brute is None:
                    assert fast is None
                    continue
                assert fast is not None and fast.completion_s == brute.completion_s
                assert bool(profile.fits_limit(fast.workers, fast.ps))


# ----------------------------------------------------------------------------- allocations and the engine
def test_ps_allocation_use_and_per_job_types():
    cluster = ClusterSpec.pooled({"gpu": 10, "cpu": 100, "mem": 100, "storage": 100})
    alloc = smd_allocation(cluster, worked_profile("sync"), 3, 1)
    assert alloc.num_workers() == 3 and alloc.num_ps() == 1
    assert alloc.workers == ((0, PER_JOB_TYPE, 3),) and alloc.use.tolist() == [[3, 14, 28, 20]]
    with pytest.raises(ConfigError, match="demands 'disk'"):
        ps_allocation(cluster, 1, 1, (1, 1), (0, 1), resources=("gpu", "disk"))


def test_engine_runs_smd_jobs_with_hand_computed_completion():
    cluster = ClusterSpec.pooled({"gpu": 10, "cpu": 100, "mem": 100, "storage": 100})
    wl = smd_workload([worked_profile("sync"), worked_profile("async")], [100, 100])
    model = make_performance_model("smd-ps")
    assert isinstance(model, SMDSpeedModel)
    sim = Simulator(cluster, wl, model, debug=True)
    sim.start(0, smd_allocation(cluster, wl.job_profile(0), 4, 2))  # 4 GPUs, 20 CPUs
    sim.start(1, smd_allocation(cluster, wl.job_profile(1), 4, 2))
    assert sim.free_resources().tolist() == [[2, 60, 20, 40]]
    while sim.advance():
        pass
    assert sim.finish_time == pytest.approx([1563.0, 374.75], rel=1e-12)
    result = sim.result()
    summary = result.summary()
    # utilities: π = 1563 s and 374.75 s with time_scale 1 -> both far right of γ3 = 8
    assert summary["total_utility"] == 0.0 and summary["rejected_jobs"] == 0
    assert summary["resource_use_ratio_gpu"] == pytest.approx(8 / 8)  # (4 + 4) GPUs / (4 + 4) limit
    assert summary["resource_use_ratio_cpu"] == pytest.approx(40 / 72)
    assert summary["resource_use_ratio_storage"] == pytest.approx(60 / 40)  # the engine does not enforce (7)
    assert result.busy_gpu_seconds[0] == pytest.approx(100 * 4 * (80 * 0.01 + 0.5))


def test_resource_use_ratio_absent_without_limits():
    from tests.conftest import make_cluster, make_workload

    sim = Simulator(make_cluster(1, 4), make_workload([1], [10]))
    sim.start(0, [0])
    while sim.advance():
        pass
    assert not any(k.startswith("resource_use_ratio") for k in sim.result().summary())


def test_rate_model_rejects_other_profiles_and_missing_resources():
    cluster = ClusterSpec.pooled({"gpu": 10, "cpu": 100})
    wl = smd_workload([worked_profile("sync")], [10])
    with pytest.raises(ConfigError, match=r"demands \['mem', 'storage'\]"):
        Simulator(cluster, wl, SMDSpeedModel())
    assert SMD_RESOURCES == RES
    assert math.isfinite(SMDSpeedModel().bind(ClusterSpec.pooled(dict(zip(RES, (10, 100, 100, 100)))), wl)
                         .nominal_iteration_time(0))
