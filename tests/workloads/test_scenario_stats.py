"""Scenario figures (ddl_gym.scenario_stats) and the calibration of the default scenario."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ddl_gym.scenarios_command import main
from ddl_gym.scenario_stats import (
    ADA_SRSF_MEASURED_SLOWDOWN,
    consolidated_servers,
    contention_check,
    contention_share,
    minimal_runtimes,
    offered_load,
)
from ddl_gym.scenarios import GBPS, get_scenario
from ddl_gym.sim.engine import Simulator
from ddl_gym.sim.model import ClusterSpec, ModelProfile, Workload
from ddl_gym.sim.perf import RARContentionModel

# 1 s of compute per iteration, 1 GB exchanged per iteration at 1 GB/s across servers, no overhead.
PROFILE = ModelProfile("p", gradient_bytes=1e9, forward_s=0.5, backward_s=0.5)
MODEL = RARContentionModel(xi1=1.0, xi2=0.0, alpha=0.0, reduce_bytes_per_s=1e30)


def test_consolidated_servers_and_minimal_runtime() -> None:
    cluster = ClusterSpec((4, 8, 4), inter_bandwidth=1e9, intra_bandwidth=1e30)
    assert [consolidated_servers(cluster, g) for g in (1, 8, 9, 12, 13, 16)] == [1, 1, 2, 2, 3, 3]
    w = Workload.from_jobs(arrival=[0.0, 10.0], gpus=[8, 12], iterations=[10, 10], models=[PROFILE] * 2)
    # Job 0 fits the 8-GPU server: 1 s/iteration. Job 1 needs two servers: + 2·(11/12)·1 GB at 1 GB/s.
    assert minimal_runtimes(cluster, w, MODEL) == pytest.approx([10.0, 10.0 * (1.0 + 2 * 11 / 12)])
    expected = (8 * 10.0 + 12 * 10.0 * (1.0 + 2 * 11 / 12)) / (16 * 10.0)
    assert offered_load(cluster, w, MODEL) == pytest.approx(expected)
    offline = Workload.from_jobs(arrival=[0.0, 0.0], gpus=[1, 1], iterations=[1, 1], models=[PROFILE] * 2)
    assert math.isnan(offered_load(cluster, offline, MODEL))


def test_contention_share_counts_only_the_slowdown_from_other_jobs() -> None:
    cluster = ClusterSpec((2, 2), inter_bandwidth=1e9, intra_bandwidth=1e30)
    w = Workload.from_jobs(arrival=[0.0, 0.0], gpus=[2, 2], iterations=[10, 10], models=[PROFILE] * 2)
    sim = Simulator(cluster, w, MODEL)
    sim.start(0, [0, 2])  # both jobs spread over both servers: p = 2, half the bandwidth each
    sim.start(1, [1, 3])
    while sim.advance():
        pass
    result = sim.result()
    # Alone on the same placement: 1 + 2·(1/2)·1 GB / 1 GB/s = 2 s/iteration; together 1 + 2 = 3 s.
    assert result.ideal_runtime == pytest.approx([20.0, 20.0])
    assert result.finish - result.start == pytest.approx([30.0, 30.0])
    assert contention_share(result) == pytest.approx(1 / 3)


def test_ada_srsf_10g_matches_the_measured_slowdown() -> None:
    calibrated = contention_check(get_scenario("ada-srsf-10g"))
    geo = float(np.exp(np.mean(np.log(list(calibrated.values())))))
    assert geo == pytest.approx(ADA_SRSF_MEASURED_SLOWDOWN, rel=0.02)  # Ada-SRSF §I: 675 s / 295 s
    former = contention_check(get_scenario("default-10g"))
    assert min(former.values()) > 3.0  # ξ1 = 1 on 10 GbE: 3.2–4.3×, far above the measurement


def test_default_scenario_is_below_saturation_on_100g() -> None:
    scenario = get_scenario("default")
    loads = []
    for seed in range(3):
        cluster, workload = scenario.episode(seed)
        assert cluster.inter_bandwidth == 100 * GBPS and cluster.num_gpus == 64 and len(workload) == 160
        loads.append(offered_load(cluster, workload, scenario.model))
    assert 0.6 < float(np.mean(loads)) < 1.0
    old_cluster, old_workload = get_scenario("default-10g").episode(0)
    assert offered_load(old_cluster, old_workload, get_scenario("default-10g").model) > 5


def test_stats_command_prints_the_table(capsys) -> None:
    assert main(["--stats", "--scenarios", "small", "--seeds", "1", "--policies", "srsf+pack,srsf+spread"]) == 0
    out = capsys.readouterr().out
    assert "| `small` |" in out and "Contention check" in out
    assert main([]) == 0 and "default-10g" in capsys.readouterr().out


def test_offered_load_of_pipeline_jobs_uses_the_fastest_configuration() -> None:
    """Pipeline rate models have no per-(servers, contention) formula: ρ_min is the engine's α̃_min estimate."""
    from ddl_gym.scenario_stats import offered_load
    from ddl_gym.sim.priority import nominal_runtimes

    scenario = get_scenario("asrpt-small")
    cluster, workload = scenario.episode(0)
    sim = Simulator(cluster, workload, scenario.model)
    window = float(workload.arrival.max() - workload.arrival.min())
    expected = float((workload.gpus * nominal_runtimes(sim)).sum()) / (cluster.num_gpus * window)
    assert offered_load(cluster, workload, scenario.model) == pytest.approx(expected, rel=1e-12)
    # the scenario calibrates its arrivals to this very load (A-SRPT §V's Σ g n α̃_min / (G·span))
    assert expected == pytest.approx(scenario.workload.load, rel=0.05)
