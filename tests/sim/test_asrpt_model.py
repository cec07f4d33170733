"""A-SRPT's pipeline per-iteration time (Luo §III-B, eqs. 4–7) and its rate model in the engine.

The worked example is the spec's (shared/specs/asrpt-smd-aonline.md §A1.3), computed by hand there:
g = 8, B_inter = 10 Gb/s, B_intra = 300 GB/s, S = 3 stages of 2 replicas.
"""

from __future__ import annotations

import pytest

from ddl_gym.sim.alloc import Allocation
from ddl_gym.sim.engine import Simulator
from ddl_gym.sim.model import ClusterSpec, ConfigError, ModelProfile, Workload
from ddl_gym.sim.perf.pipeline import (
    PipelineConfig,
    PipelineRateModel,
    StageProfile,
    alpha_max,
    alpha_min_tilde,
    fewest_servers,
    iteration_time,
    stage_times,
)

MB = 1e6
B_INTER, B_INTRA = 1.25e9, 3e11
EXAMPLE = PipelineConfig((
    StageProfile(0.010, 0.020, 0.0, 8 * MB, 100 * MB, 2),
    StageProfile(0.012, 0.024, 8 * MB, 8 * MB, 50 * MB, 2),
    StageProfile(0.008, 0.016, 8 * MB, 0.0, 25 * MB, 2),
), name="example")


def ms(seconds: float) -> float:
    return seconds * 1e3


def test_worked_example_all_on_one_server():
    beta = stage_times(EXAMPLE, [[2, 2, 2]], 8, B_INTER, B_INTRA)
    assert ms(beta[0]).tolist() == pytest.approx([30.386667, 36.273333, 24.136667], abs=1e-5)
    assert ms(iteration_time(EXAMPLE, [[2, 2, 2]], 8, B_INTER, B_INTRA)) == pytest.approx(36.273333, abs=1e-5)


def test_worked_example_stage_two_breakdown():
    # comp 36 ms + comm 0.1067 ms (32 MB over NVLink) + AllReduce 0.1667 ms (50 MB over NVLink)
    comp = 36.0
    comm = ms((2 * 8 * MB + 2 * 8 * MB) / B_INTRA)
    allreduce = ms(2 * 1 * 50 * MB / 2 / B_INTRA)
    assert comm == pytest.approx(0.106667, abs=1e-5) and allreduce == pytest.approx(0.166667, abs=1e-5)
    assert ms(stage_times(EXAMPLE, [[2, 2, 2]], 8, B_INTER, B_INTRA)[0, 1]) == pytest.approx(comp + comm + allreduce)


def test_worked_example_two_servers_split_after_stage_two():
    beta = stage_times(EXAMPLE, [[2, 2, 0], [0, 0, 2]], 8, B_INTER, B_INTRA)
    assert ms(beta[0, 1]) == pytest.approx(138.62, abs=1e-6)  # 36 + 102.4533 + 0.1667
    assert ms(beta[1, 2]) == pytest.approx(126.483333, abs=1e-5)
    assert beta[1, 0] == 0.0 and beta[0, 2] == 0.0  # absent stages contribute nothing
    assert ms(iteration_time(EXAMPLE, [[2, 2, 0], [0, 0, 2]], 8, B_INTER, B_INTRA)) == pytest.approx(138.62, abs=1e-6)


def test_worked_example_replicas_split_across_two_servers():
    # each server {S1, S2, S3} x 1: S1's 100 MB AllReduce over half... (x/g) B_inter = 156.25 MB/s -> 640 ms
    assert ms(iteration_time(EXAMPLE, [[1, 1, 1], [1, 1, 1]], 8, B_INTER, B_INTRA)) == pytest.approx(721.226667, abs=1e-5)


def test_alpha_max_and_comm_heavy_ratio():
    assert ms(alpha_max(EXAMPLE, 8, B_INTER, B_INTRA)) == pytest.approx(772.4, abs=1e-9)
    # closed form: every stage alone on a server, NIC share B_inter/g for all its traffic
    closed = max(s.compute_s + (2 * s.act_in_bytes * (i > 0) + 2 * s.act_out_bytes * (i < 2)
                                + 2 * (s.replicas - 1) / s.replicas * s.param_bytes) * 8 / B_INTER
                 for i, s in enumerate(EXAMPLE.stages))
    assert alpha_max(EXAMPLE, 8, B_INTER, B_INTRA) == pytest.approx(closed)
    a_min = alpha_min_tilde(EXAMPLE, 8, B_INTER, B_INTRA)  # 6 GPUs fit one 8-GPU server
    assert ms(a_min) == pytest.approx(36.273333, abs=1e-5)
    assert alpha_max(EXAMPLE, 8, B_INTER, B_INTRA) / a_min == pytest.approx(21.29, abs=0.01)


def test_eq6_alternative_reading_differs_only_for_several_replicas_on_a_spanned_server():
    # x^m = 1 of k = 2: both readings give 2(k-1)h/k over B_inter/g
    one_each = [[1, 1, 1], [1, 1, 1]]
    assert iteration_time(EXAMPLE, one_each, 8, B_INTER, B_INTRA, "per_replica") == pytest.approx(
        iteration_time(EXAMPLE, one_each, 8, B_INTER, B_INTRA, "reconstructed"))
    three = PipelineConfig((StageProfile(0.01, 0.02, 0.0, 0.0, 100 * MB, 3),))
    rec = stage_times(three, [[2], [1]], 8, B_INTER, B_INTRA, "reconstructed")
    alt = stage_times(three, [[2], [1]], 8, B_INTER, B_INTRA, "per_replica")
    volume = 2 * 2 / 3 * 100 * MB
    assert rec[0, 0] == pytest.approx(0.03 + volume * 8 / (2 * B_INTER))  # stage's NIC share x/g = 2/8
    assert alt[0, 0] == pytest.approx(0.03 + volume * 8 / B_INTER)  # one replica's share 1/8
    assert rec[1, 0] == pytest.approx(alt[1, 0])
    with pytest.raises(ConfigError, match="eq6"):
        stage_times(three, [[3]], 8, B_INTER, B_INTRA, "garbled")


def test_placement_must_place_every_replica_and_configs_must_agree_on_activations():
    with pytest.raises(ConfigError, match=r"\[2, 2, 1\] replicas per stage"):
        stage_times(EXAMPLE, [[2, 2, 1]], 8, B_INTER, B_INTRA)
    with pytest.raises(ConfigError, match="act_out_bytes x replicas"):
        PipelineConfig((StageProfile(0.01, 0.02, 0, 8 * MB, 1, 2), StageProfile(0.01, 0.02, 4 * MB, 0, 1, 2)))
    with pytest.raises(ConfigError, match="replicas must be an integer >= 1"):
        StageProfile(0.01, 0.02, 0, 0, 1, 0)
    assert EXAMPLE.gpus == 6 and EXAMPLE.compute_gpu_seconds() == pytest.approx(2 * (0.03 + 0.036 + 0.024))
    assert fewest_servers(20, 8) == [8, 8, 4] and fewest_servers(8, 8) == [8]


def pipeline_workload(configs: list[PipelineConfig], arrival: list[float] | None = None,
                      iterations: list[int] | None = None, predicted: list[float] | None = None) -> Workload:
    n = len(configs)
    summary = ModelProfile("pipe", 0.0, 0.01, 0.02)
    return Workload.from_jobs(arrival=arrival or [0.0] * n, gpus=[c.gpus for c in configs],
                              iterations=iterations or [100] * n, models=[summary] * n, arch=["pipeline"] * n,
                              profiles=configs, predicted_iterations=predicted)


def test_rate_model_in_the_engine_uses_the_stage_mapping():
    cluster = ClusterSpec.homogeneous(2, 4, inter_bandwidth=B_INTER, intra_bandwidth=B_INTRA)
    sim = Simulator(cluster, pipeline_workload([EXAMPLE], iterations=[1000]), PipelineRateModel(), debug=True)
    # server 0: S1 x2, S2 x2 ; server 1: S3 x2  (the 138.62 ms placement, on 4-GPU servers: NIC share x/4)
    alloc = Allocation.pipeline([0, 1, 2, 3, 4, 5], [0, 0, 1, 1, 2, 2])
    assert sim.estimate_iteration_time(0, alloc) == pytest.approx(iteration_time(EXAMPLE, [[2, 2, 0], [0, 0, 2]], 4, B_INTER, B_INTRA))
    sim.start(0, alloc)
    assert sim.tau[0] == pytest.approx(0.036 + 2 * 8 * MB * 4 / B_INTER + 2 * 8 * MB / B_INTRA + 50 * MB / B_INTRA)
    while sim.advance():
        pass
    result = sim.result("manual")
    assert result.finish[0] == pytest.approx(1000 * sim.tau[0])
    assert result.busy_gpu_seconds[0] == pytest.approx(1000 * EXAMPLE.compute_gpu_seconds())
    assert sim.nominal_iteration_time(0) == pytest.approx(alpha_min_tilde(EXAMPLE, 4, B_INTER, B_INTRA))


def test_plain_gpu_ids_get_a_heavy_edge_mapping():
    cluster = ClusterSpec.homogeneous(2, 4, inter_bandwidth=B_INTER, intra_bandwidth=B_INTRA)
    sim = Simulator(cluster, pipeline_workload([EXAMPLE]), PipelineRateModel(), debug=True)
    # 4 GPUs on server 0 and 2 on server 1: Heavy-Edge puts S1 x2 + S2 x2 on the 4-GPU server (Fig. 2)
    sim.start(0, [0, 1, 2, 3, 4, 5])
    assert sim.tau[0] == pytest.approx(iteration_time(EXAMPLE, [[2, 2, 0], [0, 0, 2]], 4, B_INTER, B_INTRA))


def test_pipeline_model_refuses_other_architectures_and_mismatched_gpus():
    cluster = ClusterSpec.homogeneous(2, 4)
    plain = Workload.from_jobs(arrival=[0.0], gpus=[1], iterations=[1], models=[ModelProfile("m", 0, 1, 1)])
    with pytest.raises(ConfigError, match="'pipeline' models pipeline jobs.*has allreduce jobs"):
        Simulator(cluster, plain, PipelineRateModel())
    bad = Workload.from_jobs(arrival=[0.0], gpus=[4], iterations=[1], models=[ModelProfile("m", 0, 1, 1)],
                             arch=["pipeline"], profiles=[EXAMPLE])
    with pytest.raises(ConfigError, match="needs 4 GPUs but its configuration has 6 replicas"):
        Simulator(ClusterSpec.homogeneous(2, 8), bad, PipelineRateModel())
