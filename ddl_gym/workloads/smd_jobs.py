"""SMD's job generator (Yu §V, spec B3), its resource pool, the utility time scale, and the scenarios.

One episode is one scheduling interval: ``num_jobs`` parameter-server jobs arrive at ``t = 0`` on
a pooled cluster (no servers, no topology; :meth:`ClusterSpec.pooled`). Every job parameter is
drawn uniformly from the ranges of Yu §V, job after job from one generator, so the first ``I``
jobs of a draw of ``I' > I`` jobs are the draw of ``I`` jobs (curves over the number of jobs are
paired).

Decisions (spec B5, each a parameter here):

* Instance (B5 #2): Amazon EC2 c4.8xlarge (36 vCPU, 60 GiB — the only C4 size that fits the largest
  worker) plus 4 GPUs and 20 GB storage, which C4 lacks. Limits ``v^r = θ·instance^r`` with one
  integer ``θ ∈ [1, 20]`` per job. GiB and GB are used as one unit, as the paper does.
* Integer draws: ``E``, ``m``, ``N``, the multiplier of ``K`` and the worker's GPU count; the rest
  is continuous (vCPU, memory and storage demands included).
* Layer times in ms as drawn, converted to seconds; ``g`` in MB = 1e6 B; ``B`` in Gb/s / 8.
* Overlap model (B5 #3): wait-free (Lemma 1) by default.
* Time scale (B5 #1): ``π = completion / time_scale`` with ``time_scale`` calibrated once per
  (mode, overlap model) so that the **median ESW completion time maps to π = 8**, the centre of
  ``γ3``'s range (:func:`smd_time_scale`, on calibration seeds disjoint from evaluation seeds).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Mapping

import numpy as np

from ddl_gym.scenario_base import Scenario
from ddl_gym.sim.model import ClusterSpec, ConfigError, ModelProfile, Workload
from ddl_gym.sim.perf.ps import MODES, SMDProfile, SMDSpeedModel, overlap_coefficients

GBPS = 1e9 / 8  # bytes per second in one gigabit per second
MB = 1e6
#: Resource order of every SMD profile and pooled cluster (GPU first, as ClusterSpec requires).
SMD_RESOURCES: tuple[str, ...] = ("gpu", "cpu", "mem", "storage")
#: One virtual instance (spec B5 #2): c4.8xlarge's 36 vCPU and 60 GiB, plus 4 GPUs and 20 GB storage.
INSTANCE: Mapping[str, float] = {"gpu": 4.0, "cpu": 36.0, "mem": 60.0, "storage": 20.0}
#: Yu §V's "one unit of resources" (Figs. 7–8 use 1–5 units).
RESOURCE_UNIT: Mapping[str, float] = {"gpu": 600.0, "cpu": 3400.0, "mem": 1400.0, "storage": 1200.0}
#: Calibration seeds of the time scale (disjoint from the evaluation seeds 0..999).
CALIBRATION_SEEDS: tuple[int, ...] = tuple(range(10_000, 10_020))
CALIBRATION_JOBS = 50
#: The sigmoid's centre that the median ESW completion time maps to (centre of γ3 ∈ [1, 15]).
CALIBRATION_TARGET_PI = 8.0
#: Placeholder all-reduce profile the Workload's ``models`` column needs (SMD jobs use their SMDProfile).
PS_PLACEHOLDER_MODEL = ModelProfile("smd-ps-job", gradient_bytes=0.0, forward_s=0.0, backward_s=0.0)


def pooled_cluster(units: float = 1.0, unit: Mapping[str, float] = RESOURCE_UNIT) -> ClusterSpec:
    """The aggregate pool of ``units`` × ``unit`` (``units`` chosen so the GPU total is whole)."""
    capacity = {r: float(unit[r]) * units for r in SMD_RESOURCES}
    if capacity["gpu"] != int(capacity["gpu"]):
        raise ConfigError(f"pooled cluster: {capacity['gpu']} GPUs is not a whole number (units={units})")
    return ClusterSpec.pooled(capacity)


def instance_cluster(instances: float) -> ClusterSpec:
    """A pool of ``instances`` virtual instances (Yu Fig. 11: 1000× an instance)."""
    return pooled_cluster(instances, INSTANCE)


def draw_smd_jobs(rng: np.random.Generator, num_jobs: int, mode: str, *, overlap: str = "wait-free",
                  time_scale: float = 1.0, slice_s: float = 0.0) -> tuple[list[SMDProfile], list[int]]:
    """``num_jobs`` jobs with Yu §V's parameter ranges; returns ``(profiles, E per job)``.

    Draw order per job (fixed, so prefixes of a draw are draws): E, g, m, K's multiplier, N, the
    N BP / FP / push-pull layer times, β1, β2, α, B, worker demand (GPU, vCPU, memory, storage),
    PS demand (vCPU, memory, storage), θ, γ1, γ2, γ3.
    """
    if mode not in MODES:
        raise ConfigError(f"SMD jobs: mode must be one of {MODES}, got {mode!r}")
    if num_jobs < 1:
        raise ConfigError(f"SMD jobs: num_jobs must be >= 1, got {num_jobs}")
    profiles, iterations = [], []
    for _ in range(num_jobs):
        e = int(rng.integers(50, 201))
        g = float(rng.uniform(30.0, 575.0)) * MB
        m = int(rng.integers(10, 101))
        k = int(rng.integers(1, 101)) * m
        n = int(rng.integers(10, 101))
        b = rng.uniform(1.0, 300.0, n) * 1e-3
        f = rng.uniform(1.0, 500.0, n) * 1e-3
        r = rng.uniform(80.0, 500.0, n) * 1e-3
        beta1 = float(rng.uniform(3.0, 4.0))
        beta2 = float(rng.uniform(0.0, 0.01))
        alpha = float(rng.uniform(0.0, 1.0))
        bandwidth = float(rng.uniform(5.0, 20.0)) * GBPS
        worker = (float(rng.integers(0, 5)), float(rng.uniform(1.0, 10.0)), float(rng.uniform(2.0, 32.0)),
                  float(rng.uniform(5.0, 10.0)))
        ps = (0.0, float(rng.uniform(1.0, 10.0)), float(rng.uniform(2.0, 32.0)), float(rng.uniform(5.0, 10.0)))
        theta = int(rng.integers(1, 21))
        gamma = (float(rng.uniform(1.0, 100.0)), float(rng.uniform(4.0, 6.0)), float(rng.uniform(1.0, 15.0)))
        eta = overlap_coefficients(f, b, r, overlap, slice_s)
        profiles.append(SMDProfile(
            mode=mode, gradient_bytes=g, bandwidth=bandwidth, global_batch=k, mini_batch=m,
            t_f=float(f.sum()), t_b=float(b.sum()), alpha=alpha, beta1=beta1, beta2=beta2, eta=eta,
            resources=SMD_RESOURCES, worker_demand=worker, ps_demand=ps,
            limit=tuple(theta * INSTANCE[x] for x in SMD_RESOURCES), gamma=gamma, time_scale=time_scale,
            overlap=overlap,
        ))
        iterations.append(e)
    return profiles, iterations


def smd_workload(profiles: list[SMDProfile], iterations: list[int], name: str = "smd") -> Workload:
    """A one-interval workload: every job arrives at ``t = 0`` with its SMD profile."""
    n = len(profiles)
    return Workload.from_jobs(arrival=[0.0] * n, gpus=[1] * n, iterations=iterations,
                              models=[PS_PLACEHOLDER_MODEL] * n, arch=["ps"] * n, profiles=profiles, name=name)


@lru_cache(maxsize=None)
def smd_time_scale(mode: str, overlap: str = "wait-free") -> float:
    """Seconds per unit of π such that the median ESW completion time of the calibration jobs is π = 8."""
    times = []
    for seed in CALIBRATION_SEEDS:
        profiles, iterations = draw_smd_jobs(np.random.default_rng(seed), CALIBRATION_JOBS, mode, overlap=overlap)
        for profile, e in zip(profiles, iterations):
            k = profile.max_equal_count()
            if k >= 1:
                times.append(profile.completion_time(e, k, k))
    return float(np.median(times)) / CALIBRATION_TARGET_PI


#: Most jobs of an SMD interval (the paper's §V uses 50; Alg. 1-2 and the MKP grow with the count).
MAX_PS_JOBS = 10_000


@dataclass(frozen=True)
class SMDJobSource:
    """Scenario workload source: one interval of :func:`draw_smd_jobs` jobs.

    Attributes:
        mode: ``"sync"`` or ``"async"``.
        num_jobs: ``I``.
        overlap: overlap model of the η coefficients.
        time_scale: seconds per unit of π (``None``: :func:`smd_time_scale`).
        time_scale_factor: multiplies the time scale (the ×0.5 / ×2 sensitivity).
        name: workload name (the scenario's).
    """

    mode: str = "sync"
    num_jobs: int = 50
    overlap: str = "wait-free"
    time_scale: float | None = None
    time_scale_factor: float = 1.0
    name: str = "smd"

    def __post_init__(self) -> None:
        from ddl_gym.bounds import check_float, check_int

        check_int(self.num_jobs, 1, MAX_PS_JOBS, "SMD num_jobs")
        check_float(self.time_scale_factor, 0.0, 1e6, "SMD time_scale_factor", low_open=True)
        if self.time_scale is not None:
            check_float(self.time_scale, 0.0, 1e12, "SMD time_scale", low_open=True)

    def resolved_time_scale(self) -> float:
        base = self.time_scale if self.time_scale is not None else smd_time_scale(self.mode, self.overlap)
        return base * self.time_scale_factor

    def __call__(self, rng: np.random.Generator, cluster: ClusterSpec) -> Workload:
        profiles, iterations = draw_smd_jobs(rng, self.num_jobs, self.mode, overlap=self.overlap,
                                             time_scale=self.resolved_time_scale())
        return smd_workload(profiles, iterations, self.name)


def smd_scenario(mode: str, *, units: float = 1.0, num_jobs: int = 50, overlap: str = "wait-free",
                 time_scale_factor: float = 1.0, name: str | None = None) -> Scenario:
    """SMD's setting (Yu §V): ``num_jobs`` jobs of one training mode on ``units`` units of pooled resources."""
    name = name or f"smd-{mode}"
    return Scenario(
        name=name,
        cluster=pooled_cluster(units),
        workload=SMDJobSource(mode, num_jobs, overlap, None, time_scale_factor, name),
        model=SMDSpeedModel(),
        description=(f"SMD (Yu et al. INFOCOM'21 §V): one interval of {num_jobs} {mode.upper()}-SGD PS jobs on "
                     f"{units:g} unit(s) of pooled resources; sigmoid utility, admission by reservation"),
    )


#: Contributed to :data:`ddl_gym.scenarios.PAPER_SCENARIO_SOURCES`.
SMD_SCENARIOS: list[Scenario] = [smd_scenario("sync"), smd_scenario("async")]
