"""Scenarios of the versioned task suite (:mod:`ddl_gym.suite`), registered into the scenario registry.

Every scenario here is a job-level world with the RAR contention model (ξ1 = 0.6, the default
scenario's calibration to Ada-SRSF §I's measured 2.29×) whose cluster, NICs, models, job-size mix
and offered load are taken from published measurements. Each source is named where it is used:

**NICs.** Commodity Ethernet at 25, 40 and 100 Gb/s and 200 Gb/s InfiniBand (HDR; the fabric of
8-GPU training nodes such as those of the Helios clusters, Hu et al. SC'21 §2). Intra-server links
800 Gb/s as in every built-in scenario.

**Models** (:data:`POLLUX_MODELS`, besides Ada-SRSF's Table III in :mod:`ddl_gym.sim.zoo`):
per-iteration compute = Pollux's measured single-GPU ``step_time − sync_time`` (Qiao et al. OSDI'21
artifact, ``shared/traces/pollux-workloads/app_profiles/<app>/placements.csv``, placement ``1``, at
the stated per-GPU batch), split 1:2 into forward and backward (only the sum enters the RAR model);
gradient volume = 4 bytes (fp32) × the architecture's parameter count:

========================  =========  ================  ==============================================
profile                   batch/GPU  compute (s/iter)  gradient (fp32)
========================  =========  ================  ==============================================
``pollux_bert``           8          0.6896            110 M params (BERT-base, Devlin et al. 2019)
``pollux_resnet50``       40         0.2523            25.6 M params (ResNet-50, He et al. 2016)
``pollux_resnet18``       64         0.0593            11.2 M params (ResNet-18, CIFAR-10 variant)
========================  =========  ================  ==============================================

**Job sizes.** :data:`POLLUX_REPLICA_MIX` — the GPU counts of Pollux's eight evaluation workloads
(1,280 jobs sampled from the Philly trace; ``pollux-workloads/README.md``): mean 6.75 GPUs per job,
close to Helios's Venus cluster (843,064 GPUs requested by 125,214 GPU jobs: 6.7 per job,
``helios-aggregates``). ``PAPER_GPU_MIX`` — SJF-BCO /
Ada-SRSF's 160-job mix.

**Arrivals.** Poisson, with the rate that gives the stated offered load
``Σ G_j·ρ_j^min / (GPUs × window)`` (:func:`ddl_gym.scenario_stats.offered_load`), between 1.2 and
1.8: jobs arrive faster than even a perfect schedule serves them over the window and the queue
drains after it — the queueing regime in which Jeon et al. (ATC'19, Philly) and Hu et al. (SC'21,
Helios) report long queueing delays. The rates were fitted by :func:`calibrate_rate` on seeds
10,000–10,019 and are fixed constants here (``tests/envs/test_suite.py`` re-measures the load).
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any, Mapping

import numpy as np

from ddl_gym.sim.model import ClusterSpec, ModelProfile
from ddl_gym.sim.perf import RARContentionModel
from ddl_gym.sim.zoo import MODEL_ZOO

GBPS = 1e9 / 8
MB = 1e6


def _pollux_profile(name: str, compute_s: float, params_millions: float, batch: int) -> ModelProfile:
    return ModelProfile(name, 4.0 * params_millions * MB, compute_s / 3.0, 2.0 * compute_s / 3.0, batch_size=batch)


#: Pollux-measured models (module docstring).
POLLUX_MODELS: dict[str, ModelProfile] = {
    "pollux_bert": _pollux_profile("pollux_bert", 0.7032617032527924 - 0.013705408036708831, 110.0, 8),
    "pollux_resnet50": _pollux_profile("pollux_resnet50", 0.2534669876098633 - 0.0012079136133193971, 25.6, 40),
    "pollux_resnet18": _pollux_profile("pollux_resnet18", 0.05983335971832275 - 0.0005080448031425476, 11.2, 64),
}
#: Table III (Ada-SRSF, V100) and the Pollux profiles together.
MIXED_MODELS: tuple[ModelProfile, ...] = tuple(MODEL_ZOO[m] for m in ("vgg16", "resnet50", "inception_v3", "lstm_ptb")) \
    + tuple(POLLUX_MODELS.values())

#: GPU counts of Pollux's eight evaluation workloads (README of shared/traces/pollux-workloads).
POLLUX_REPLICA_MIX: Mapping[int, int] = MappingProxyType({1: 503, 4: 59, 6: 191, 8: 171, 12: 196, 16: 134, 24: 9,
                                                          32: 9, 48: 8})

#: The RAR model of every suite scenario (the default scenario's calibration).
SUITE_MODEL = RARContentionModel(xi1=0.6)
#: Jobs per episode.
SUITE_JOBS = 160


def cluster(servers: int, gpus_per_server: int, nic_gbps: float) -> ClusterSpec:
    return ClusterSpec.homogeneous(servers, gpus_per_server, inter_bandwidth=nic_gbps * GBPS, intra_bandwidth=800 * GBPS)


#: name -> servers, GPUs per server, NIC Gb/s, size mix (None: the papers'), models (None: Table III), iterations,
#: target offered load, description
SUITE_WORLDS: dict[str, dict[str, Any]] = {
    "pollux-25g": dict(
        servers=16, gpus=4, nic=25.0, mix=POLLUX_REPLICA_MIX, models=MIXED_MODELS, iterations=(1000, 6000),
        load=1.2,
        description="16x4 GPUs (Pollux's 4-GPU nodes), 25 GbE; Pollux/Philly job sizes (59% of jobs larger than a "
                    "server: spreading unavoidable); Table III + Pollux-measured models"),
    "pollux-8x8-100g": dict(
        servers=8, gpus=8, nic=100.0, mix=POLLUX_REPLICA_MIX, models=MIXED_MODELS, iterations=(1000, 6000),
        load=1.2,
        description="8x8 GPUs, 100 GbE; Pollux/Philly job sizes (30% larger than a server); Table III + Pollux models"),
    "helios-ib200": dict(
        servers=16, gpus=8, nic=200.0, mix=POLLUX_REPLICA_MIX, models=MIXED_MODELS, iterations=(1000, 6000),
        load=1.8,
        description="16x8 GPUs (Helios-style 8-GPU nodes), 200 Gb/s InfiniBand; 6.75 GPUs per job as Helios Venus; "
                    "Table III + Pollux models"),
    "paper-mix-40g": dict(
        servers=16, gpus=4, nic=40.0, mix=None, models=None, iterations=(1000, 6000), load=1.5,
        description="16x4 GPUs, 40 GbE; SJF-BCO/Ada-SRSF job-size mix and Table III models"),
    "pollux-nc-25g": dict(
        servers=16, gpus=4, nic=25.0, mix=POLLUX_REPLICA_MIX, models=MIXED_MODELS, iterations=(100, 20000),
        load=1.2,
        description="non-clairvoyant task's world: 16x4 GPUs, 25 GbE, Pollux/Philly job sizes, iterations 100-20,000 "
                    "(the scheduler sees attained service, not remaining work)"),
}


def _source(world: dict[str, Any], rate: float) -> Any:
    from ddl_gym.scenarios import _synthetic
    from ddl_gym.workloads.synthetic import PAPER_GPU_MIX

    mix = world["mix"] if world["mix"] is not None else PAPER_GPU_MIX
    kwargs: dict[str, Any] = dict(num_jobs=SUITE_JOBS, max_gpus=world["servers"] * world["gpus"],
                                  arrival_rate_per_s=rate, gpu_mix=dict(mix), iterations=world["iterations"])
    if world["models"] is not None:
        kwargs["models"] = world["models"]
    return _synthetic("scaled", **kwargs)


def calibrate_rate(name: str, seeds: range = range(10_000, 10_020)) -> float:
    """The Poisson rate giving world ``name`` its target offered load on ``seeds`` (mean over seeds)."""
    from ddl_gym.scenario_stats import offered_load
    from ddl_gym.scenarios import Scenario

    world = SUITE_WORLDS[name]
    probe_rate = SUITE_JOBS / 3600.0
    probe = Scenario(name="probe", cluster=cluster(world["servers"], world["gpus"], world["nic"]),
                     workload=_source(world, probe_rate), model=SUITE_MODEL)
    loads = [offered_load(*probe.episode(s), SUITE_MODEL) for s in seeds]
    return probe_rate * world["load"] / float(np.mean(loads))


#: Fitted by :func:`calibrate_rate` (``python -m ddl_gym.suite_scenarios`` prints them).
CALIBRATED_RATES: dict[str, float] = {
    'pollux-25g': 0.010405018699607149,
    'pollux-8x8-100g': 0.015342030260189248,
    'helios-ib200': 0.048507726583203785,
    'paper-mix-40g': 0.04599782164472893,
    'pollux-nc-25g': 0.0036282039452267692,
}


def suite_scenarios() -> list[Any]:
    """The suite's scenarios (registered on first lookup, like the paper modules' scenarios)."""
    from ddl_gym.scenarios import Scenario

    out = []
    for name, world in SUITE_WORLDS.items():
        rate = CALIBRATED_RATES[name]  # a world without its fitted rate is a KeyError, not a silent refit
        out.append(Scenario(name=name, cluster=cluster(world["servers"], world["gpus"], world["nic"]),
                            workload=_source(world, rate), model=SUITE_MODEL,
                            description=f"{world['description']}; offered load ≈ {world['load']:g} (suite, issue 31)"))
    return out


if __name__ == "__main__":  # pragma: no cover
    for _name in SUITE_WORLDS:
        print(f"    {_name!r}: {calibrate_rate(_name)!r},")
