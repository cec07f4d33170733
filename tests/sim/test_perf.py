"""Performance models against hand-computed per-iteration times (SJF-BCO eq. 8, Ada-SRSF eq. 5)."""

from __future__ import annotations

import numpy as np
import pytest

from ddl_gym.sim.model import ConfigError
from ddl_gym.sim.perf import (
    AllReduceContentionModel,
    RARContentionModel,
    contention_counts,
    make_performance_model,
    per_iteration_times,
)
from tests.conftest import make_cluster, make_workload

# Toy numbers: m = 100e6 B, t_f + t_b = 0.05 s, b_i = 100e9 B/s, b_e = 1.25e9 B/s, C = 1e11 B/s.
RAR = RARContentionModel(xi1=1.0, xi2=1e-3, alpha=0.5, reduce_bytes_per_s=1e11)


def test_single_server_job_uses_intra_link_and_one_server_overhead():
    cluster, wl = make_cluster(2, 4), make_workload([2], [10])
    tau = per_iteration_times(RAR, cluster, wl, [0], [np.array([0, 1])])
    # 2·m·(1/2)/b_i + m·(1/2)/C + ξ2·1 + t_f + t_b = 0.001 + 0.0005 + 0.001 + 0.05
    assert tau[0] == pytest.approx(0.0525, rel=1e-12)


def test_job_split_one_plus_one_alone_gets_full_nic():
    cluster, wl = make_cluster(2, 4), make_workload([2], [10])
    tau = per_iteration_times(RAR, cluster, wl, [0], [np.array([0, 4])])  # GPU 0 on s0, GPU 4 on s1
    # p = 1 → k = 1 → f = 1 → B = b_e: 100e6/1.25e9 + 0.0005 + 2·ξ2 + 0.05
    assert tau[0] == pytest.approx(0.08 + 0.0005 + 0.002 + 0.05, rel=1e-12)


def test_two_split_jobs_sharing_servers_contend():
    cluster, wl = make_cluster(2, 4), make_workload([2, 2], [10, 10])
    tau = per_iteration_times(RAR, cluster, wl, [0, 1], [np.array([0, 4]), np.array([1, 5])])
    # p = 2 → k = 2 → f = 2 + 0.5·1 = 2.5 → exchange 100e6·2.5/1.25e9 = 0.2 s
    assert tau == pytest.approx([0.2525, 0.2525], rel=1e-12)


def test_contention_is_max_over_the_jobs_servers_and_ignores_single_server_jobs():
    cluster = make_cluster(3, 4)
    placements = [np.array([0, 4]), np.array([5, 8]), np.array([9, 10])]  # A: s0+s1, B: s1+s2, C: s2 only
    n_servers, p = contention_counts(cluster, placements, [2, 2, 2])
    assert n_servers.tolist() == [2, 2, 1]
    assert p.tolist() == [2, 2, 0]


def test_xi1_below_one_floors_contention_level_at_one():
    model = RARContentionModel(xi1=0.4, xi2=1e-3, alpha=0.5, reduce_bytes_per_s=1e11)
    cluster, wl = make_cluster(2, 4), make_workload([2, 2], [10, 10])
    tau = per_iteration_times(model, cluster, wl, [0, 1], [np.array([0, 4]), np.array([1, 5])])
    # ξ1·p = 0.8 < 1: without the floor a job would get more than the NIC's bandwidth.
    assert tau == pytest.approx([0.1325, 0.1325], rel=1e-12)


def test_single_gpu_job_has_no_communication():
    cluster, wl = make_cluster(1, 4), make_workload([1], [10])
    tau = per_iteration_times(RAR, cluster, wl, [0], [np.array([2])])
    assert tau[0] == pytest.approx(0.05 + 1e-3, rel=1e-12)


def test_allreduce_model_eq5():
    model = AllReduceContentionModel(a=6.69e-4, b=8.53e-10, eta=2.35e-10)
    cluster, wl = make_cluster(2, 4), make_workload([2, 2, 2], [10, 10, 10])
    placements = [np.array([0, 4]), np.array([1, 5]), np.array([2, 3])]
    tau = per_iteration_times(model, cluster, wl, [0, 1, 2], placements)
    contended = 0.05 + 6.69e-4 + 2 * 8.53e-10 * 100e6 + 1 * 2.35e-10 * 100e6
    assert tau == pytest.approx([contended, contended, 0.05], rel=1e-12)  # intra-server all-reduce is free
    assert model.allreduce_time(100e6, 1) == pytest.approx(6.69e-4 + 0.0853, rel=1e-12)


def test_degradation_functions_satisfy_paper_properties():
    for name in ("linear", "power"):
        model = RARContentionModel(degradation=name, alpha=0.3)
        from ddl_gym.sim.perf import DEGRADATION_FUNCTIONS

        f = DEGRADATION_FUNCTIONS[name]
        assert f(0.3, 1.0) == 1.0
        assert f(0.3, 2.0) < f(0.3, 3.0) < f(0.3, 4.0)
        assert model.degradation == name


def test_bad_parameters_raise_config_errors():
    with pytest.raises(ConfigError, match="xi1"):
        RARContentionModel(xi1=0.0)
    with pytest.raises(ConfigError, match="degradation"):
        RARContentionModel(degradation="cubic")
    with pytest.raises(ConfigError, match="unknown performance model"):
        make_performance_model("no-such-model")


@pytest.mark.parametrize("model", [RAR, RARContentionModel(xi1=0.6, xi2=2e-3, alpha=0.3, degradation="power"),
                                   RARContentionModel()])
def test_vectorised_rar_times_equal_the_scalar_ones_bit_for_bit(model):
    rng = np.random.default_rng(7)
    gpus = rng.integers(1, 33, 200).tolist()
    cluster, wl = make_cluster(16, 8), make_workload(gpus, rng.integers(10, 1000, 200).tolist())
    bound = model.bind(cluster, wl)
    jobs = rng.integers(0, 200, 500)
    n_servers = rng.integers(1, 6, 500)
    contention = np.where(n_servers > 1, rng.integers(0, 9, 500), 0)
    scalar = [bound.iteration_time(int(j), int(s), int(p)) for j, s, p in zip(jobs, n_servers, contention)]
    assert bound.iteration_times(jobs, n_servers, contention).tolist() == scalar


def test_simulator_nominal_times_vectorised_equal_the_per_job_ones():
    from ddl_gym.sim.engine import Simulator

    rng = np.random.default_rng(3)
    cluster, wl = make_cluster(8, 4), make_workload(rng.integers(1, 17, 60).tolist(), rng.integers(10, 500, 60).tolist())
    all_at_once = Simulator(cluster, wl, RAR).nominal_iteration_times()
    one_by_one = Simulator(cluster, wl, RAR)
    assert all_at_once.tolist() == [one_by_one.nominal_iteration_time(j) for j in range(60)]
    assert one_by_one.nominal_iteration_times().tolist() == all_at_once.tolist()  # from the filled cache
