"""A-Online's world (Zhou §7, spec C3 / C5 #3): EC2-shaped multi-resource servers, worker and PS
type catalogues, and PS or ring-all-reduce jobs.

Everything is drawn from one generator, jobs first, because the cluster's capacity is set from them:
"the overall resource capacities are approximately [0.2, 0.5] fraction of the respective overall job
resource demand, computed by adding the ideal resource demand of all jobs" (Zhou §7). Decisions
(spec C5 #3, #6, #12, #13), each a field of :class:`AOnlineSetup`:

* server *shapes* (GPU : vCPU : GiB : Gb/s) drawn uniformly from nine EC2 P3/P2/G3 instances
  (:data:`SERVER_SHAPES`), then every resource column scaled by one factor so that
  ``Σ_h C_h^r = κ · Σ_j ideal_demand_j^r`` (κ = ``kappa``, default 0.35); GPUs floored, at least 1.
  The total is fixed by the jobs, so varying ``servers`` (Fig. 3/6) keeps it fixed;
* worker types: GPUs U{1..4}, vCPUs U{1..16}, bandwidth log-uniform [0.1, 5] Gb/s; PS types:
  vCPUs U{1..16}, bandwidth U[5, 20] Gb/s; memory 7.5 GiB per vCPU (the P3 ratio; not given);
* jobs: ``w`` U[200, 5000], ``E`` U{50..100}, ``D`` U{5..50}, ``K`` U{10..50}, ``U^p`` and the
  ring-all-reduce ``U`` U[10, 100] ms, ``v_jm`` U[0.001, 0.05] slots independently per type (or
  ``speed_model="gpu_scaled"``: ``v_jm = v_j (1/g_m)^0.8``), ``π`` U[30, 575] MB, arrival slot
  U{1..T}; the FIFO/AntMan/Tiresias worker count ``min(U{1..30}, D_j)`` drawn once per job;
* ``worker_catalogue="ec2"``: Fig. 9's four instances as worker types (p3.8xlarge, p2.8xlarge,
  p3.2xlarge, p2.xlarge stand for the paper's partly non-existent names), with the GPU-scaled speed
  model; ``only_worker_type=k`` gives every job that one type (Fig. 9's fixed-type bars).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ddl_gym.sim.model import ClusterSpec, ConfigError, ModelProfile, ResourceType, Workload
from ddl_gym.sim.perf.aonline import (
    AONLINE_RESOURCES, SLOT_SECONDS, AOnlineProfile, ideal_config, ps_count_for_bandwidth,
)

#: EC2 instance shapes (GPUs, vCPUs, GiB, Gb/s); only the ratios matter after scaling.
SERVER_SHAPES: dict[str, tuple[float, float, float, float]] = {
    "p3.2xlarge": (1, 8, 61, 10), "p3.8xlarge": (4, 32, 244, 10), "p3.16xlarge": (8, 64, 488, 25),
    "p2.xlarge": (1, 4, 61, 5), "p2.8xlarge": (8, 32, 488, 10), "p2.16xlarge": (16, 64, 732, 25),
    "g3.4xlarge": (1, 16, 122, 10), "g3.8xlarge": (2, 32, 244, 10), "g3.16xlarge": (4, 64, 488, 25),
}
#: Fig. 9's worker types (real instances standing for "p3.4xlarge, p2.2xlarge, p3.2xlarge, p2.xlarge").
EC2_WORKER_TYPES: dict[str, tuple[float, float, float, float]] = {
    "p3.8xlarge": (4, 32, 244, 10), "p2.8xlarge": (8, 32, 488, 10),
    "p3.2xlarge": (1, 8, 61, 10), "p2.xlarge": (1, 4, 61, 1.25),
}
MEM_PER_VCPU_GIB = 7.5
_PLACEHOLDER_MODEL = ModelProfile("aonline-job", gradient_bytes=0.0, forward_s=0.0, backward_s=0.0)


@dataclass(frozen=True)
class AOnlineSetup:
    """Knobs of one A-Online world (defaults: Zhou §7 and spec C3/C5)."""

    num_jobs: int = 100
    horizon: int = 150  # T, arrival slots 1..T
    servers: int = 150  # H
    arch: str = "ps"  # or "allreduce_elastic"
    kappa: float | None = 0.35  # capacity / summed ideal demand; None draws U[0.2, 0.5] per episode
    worker_types: int = 8  # M
    ps_types: int = 10  # P
    speed_model: str = "independent"  # or "gpu_scaled"
    worker_catalogue: str = "random"  # or "ec2" (Fig. 9)
    only_worker_type: int | None = None
    max_baseline_workers: int = 30
    weight_range: tuple[float, float] = (200.0, 5000.0)
    epochs_range: tuple[int, int] = (50, 100)  # E_j, inclusive
    chunks_range: tuple[int, int] = (5, 50)  # D_j
    minibatch_range: tuple[int, int] = (10, 50)  # K_j
    worker_time_range: tuple[float, float] = (0.001, 0.05)  # v_jm, slots

    def __post_init__(self) -> None:
        from ddl_gym.bounds import check_int

        check_int(self.num_jobs, 1, 10_000, "A-Online setup: num_jobs")
        check_int(self.horizon, 1, 100_000, "A-Online setup: horizon")
        check_int(self.servers, 1, 100_000, "A-Online setup: servers")
        check_int(self.worker_types, 1, 1_000, "A-Online setup: worker_types")
        check_int(self.ps_types, 1, 1_000, "A-Online setup: ps_types")
        check_int(self.max_baseline_workers, 1, 100_000, "A-Online setup: max_baseline_workers")
        if self.arch not in ("ps", "allreduce_elastic"):
            raise ConfigError(f"A-Online setup: arch must be 'ps' or 'allreduce_elastic', got {self.arch!r}")
        if self.speed_model not in ("independent", "gpu_scaled"):
            raise ConfigError(f"A-Online setup: speed_model must be 'independent' or 'gpu_scaled', got {self.speed_model!r}")
        if self.worker_catalogue not in ("random", "ec2"):
            raise ConfigError(f"A-Online setup: worker_catalogue must be 'random' or 'ec2', got {self.worker_catalogue!r}")
        if self.kappa is not None and not 0 < self.kappa:
            raise ConfigError(f"A-Online setup: kappa must be > 0, got {self.kappa}")


def worker_catalogue(rng: np.random.Generator, setup: AOnlineSetup) -> tuple[ResourceType, ...]:
    """The worker types (demand over gpu, cpu, mem, bw)."""
    if setup.worker_catalogue == "ec2":
        return tuple(ResourceType(name, shape) for name, shape in EC2_WORKER_TYPES.items())
    gpus = rng.integers(1, 5, setup.worker_types)
    cpus = rng.integers(1, 17, setup.worker_types)
    bw = np.exp(rng.uniform(np.log(0.1), np.log(5.0), setup.worker_types))
    return tuple(ResourceType(f"w{m}", (int(g), int(c), MEM_PER_VCPU_GIB * int(c), float(b)))
                 for m, (g, c, b) in enumerate(zip(gpus, cpus, bw)))


def ps_catalogue(rng: np.random.Generator, setup: AOnlineSetup) -> tuple[ResourceType, ...]:
    if setup.arch != "ps":
        return ()
    cpus = rng.integers(1, 17, setup.ps_types)
    bw = rng.uniform(5.0, 20.0, setup.ps_types)
    return tuple(ResourceType(f"ps{p}", (0, int(c), MEM_PER_VCPU_GIB * int(c), float(b)))
                 for p, (c, b) in enumerate(zip(cpus, bw)))


def draw_profiles(rng: np.random.Generator, setup: AOnlineSetup, wtypes: tuple[ResourceType, ...],
                  n_ps: int) -> tuple[list[AOnlineProfile], np.ndarray, np.ndarray]:
    """Jobs' profiles, weights and arrival slots."""
    J, M = setup.num_jobs, len(wtypes)
    w = rng.uniform(*setup.weight_range, J)
    E = rng.integers(setup.epochs_range[0], setup.epochs_range[1] + 1, J)
    D = rng.integers(setup.chunks_range[0], setup.chunks_range[1] + 1, J)
    K = rng.integers(setup.minibatch_range[0], setup.minibatch_range[1] + 1, J)
    pi = rng.uniform(30e6, 575e6, J)
    ms_to_slots = 1e-3 / SLOT_SECONDS
    U_ps = rng.uniform(10, 100, (J, max(n_ps, 0))) * ms_to_slots
    U_ra = rng.uniform(10, 100, J) * ms_to_slots
    if setup.speed_model == "gpu_scaled" or setup.worker_catalogue == "ec2":
        base = rng.uniform(*setup.worker_time_range, J)
        gpus = np.array([t.demand[0] for t in wtypes])
        v = base[:, None] * (1.0 / gpus[None, :]) ** 0.8
    else:
        v = rng.uniform(*setup.worker_time_range, (J, M))
    n_fifo = np.minimum(rng.integers(1, setup.max_baseline_workers + 1, J), D)
    arrival = rng.integers(1, setup.horizon + 1, J).astype(np.float64)
    profiles = [AOnlineProfile(int(E[j]), int(D[j]), int(K[j]), float(pi[j]), tuple(v[j]), tuple(U_ps[j]),
                               float(U_ra[j]), int(n_fifo[j])) for j in range(J)]
    return profiles, w, arrival


def _restrict_types(cluster: ClusterSpec, profiles: list[AOnlineProfile], keep: int
                    ) -> tuple[ClusterSpec, list[AOnlineProfile]]:
    cluster = replace(cluster, worker_types=(cluster.worker_types[keep],))
    return cluster, [replace(p, worker_time=(p.worker_time[keep],)) for p in profiles]


def aonline_world(rng: np.random.Generator, setup: AOnlineSetup = AOnlineSetup(), name: str = "aonline"
                  ) -> tuple[ClusterSpec, Workload]:
    """Draw one episode: catalogues, jobs, then servers scaled to ``κ ×`` the jobs' ideal demand."""
    wtypes = worker_catalogue(rng, setup)
    ptypes = ps_catalogue(rng, setup)
    profiles, weight, arrival = draw_profiles(rng, setup, wtypes, len(ptypes))
    kappa = setup.kappa if setup.kappa is not None else float(rng.uniform(0.2, 0.5))
    shapes = np.array(list(SERVER_SHAPES.values()), dtype=np.float64)
    rows = shapes[rng.integers(0, len(shapes), setup.servers)]
    arch_code = 2 if setup.arch == "ps" else 3
    # Ideal demand needs the catalogues in a cluster object; capacities are filled in below.
    probe = ClusterSpec(gpus_per_server=(1,), resources=AONLINE_RESOURCES, capacity=((1, 1, 1, 1),),
                        worker_types=wtypes, ps_types=ptypes)
    if setup.only_worker_type is not None:
        probe, profiles = _restrict_types(probe, profiles, setup.only_worker_type)
    demand = np.zeros(len(AONLINE_RESOURCES))
    for prof in profiles:
        m, p, n, ps = ideal_config(prof, probe, arch_code)
        demand += n * np.asarray(probe.worker_types[m].demand)
        if p >= 0:
            demand += ps * np.asarray(probe.ps_types[p].demand)
    capacity = rows * (kappa * demand / rows.sum(axis=0))[None, :]
    capacity[:, 0] = np.maximum(1.0, np.floor(capacity[:, 0]))
    cluster = replace(probe, gpus_per_server=tuple(int(g) for g in capacity[:, 0]),
                      capacity=tuple(tuple(float(c) for c in row) for row in capacity))
    _check_some_server_fits(cluster)
    workload = Workload.from_jobs(
        arrival=(arrival * SLOT_SECONDS).tolist(), gpus=[1] * len(profiles),
        iterations=[p.total_minibatches for p in profiles], models=[_PLACEHOLDER_MODEL] * len(profiles),
        weight=weight.tolist(), arch=[setup.arch] * len(profiles), profiles=profiles, name=name,
    )
    return cluster, workload


def _check_some_server_fits(cluster: ClusterSpec) -> None:
    cap = cluster.capacity_matrix()
    smallest_ps = min(cluster.ps_types, key=lambda t: t.demand[1]).demand if cluster.ps_types else (0, 0, 0, 0)
    for t in cluster.worker_types:
        need = np.asarray(t.demand) + np.asarray(smallest_ps)
        if not np.any(np.all(cap >= need - 1e-9, axis=1)):
            raise ConfigError(f"A-Online cluster: no server fits one {t.name} worker {t.demand} with a PS; "
                              "use fewer servers or a larger kappa")


def ps_needed(cluster: ClusterSpec, m: int, p: int, remote_workers: int) -> int:
    """PSs of type ``p`` on one server covering ``remote_workers`` of type ``m`` (eq. 2i)."""
    bw = cluster.resources.index("bw")
    return ps_count_for_bandwidth(remote_workers, cluster.worker_types[m].demand[bw], cluster.ps_types[p].demand[bw])


# ----------------------------------------------------------------------------- scenarios
def _unused_source(*_args):  # AOnlineScenario draws cluster and workload together
    raise ConfigError("A-Online scenarios draw the cluster and the workload together; call scenario.sample(rng)")


def make_aonline_scenario(name: str, setup: AOnlineSetup, description: str):
    """A :class:`~ddl_gym.scenarios.Scenario` whose episodes come from :func:`aonline_world`."""
    from ddl_gym.sim.perf.aonline import AOnlinePSModel, AOnlineRAModel

    model = AOnlinePSModel() if setup.arch == "ps" else AOnlineRAModel()
    return AOnlineScenario(name=name, cluster=_unused_source, workload=_unused_source, model=model,
                           description=description, setup=setup)


def _define_scenario_class():
    from dataclasses import dataclass as _dc

    from ddl_gym.scenario_base import Scenario

    @_dc(frozen=True)
    class AOnlineScenario(Scenario):
        """An A-Online world: jobs first, then the cluster scaled to them (:func:`aonline_world`)."""

        setup: AOnlineSetup = AOnlineSetup()

        def sample(self, rng: np.random.Generator) -> tuple[ClusterSpec, Workload]:
            return aonline_world(rng, self.setup, name=self.name)

        def sample_cluster(self, rng: np.random.Generator) -> ClusterSpec:
            return self.sample(rng)[0]

        def with_setup(self, name: str | None = None, **changes) -> "AOnlineScenario":
            """The same scenario with some :class:`AOnlineSetup` fields changed (sweeps)."""
            return replace(self, setup=replace(self.setup, **changes), name=name or self.name)

    # Defined inside a function (Scenario is imported late: ddl_gym.scenarios imports this module), but
    # named as the module-level class it is bound to, so that pickle and copy.deepcopy find it.
    AOnlineScenario.__qualname__ = "AOnlineScenario"
    AOnlineScenario.__module__ = __name__
    return AOnlineScenario


AOnlineScenario = _define_scenario_class()

AONLINE_SCENARIOS = [
    make_aonline_scenario("aonline-ps", AOnlineSetup(arch="ps"),
                          "A-Online §7, PS jobs (eq. 1): 100 jobs over T=150 one-hour slots, 150 EC2-shaped servers "
                          "(GPU/CPU/mem/bw) at 0.35x the jobs' ideal demand, 8 worker / 10 PS types"),
    make_aonline_scenario("aonline-ra", AOnlineSetup(arch="allreduce_elastic"),
                          "A-Online §6-7, elastic ring-all-reduce jobs (eq. 14), same world as aonline-ps"),
    make_aonline_scenario("aonline-ps-small", AOnlineSetup(arch="ps", num_jobs=30, horizon=40, servers=12),
                          "small A-Online PS world (30 jobs, 12 servers, T=40): tests and agent training"),
]
