"""Named scenarios (cluster + performance model + workload source) and scenario files.

A scenario samples one episode's ``(cluster, workload)`` from a ``np.random.Generator``, so the
env, the harness and every policy see the same world for the same seed.

Scenario file (TOML, or JSON with the same keys)::

    name = "my-cluster"
    description = "what it models"
    engine = "job"                     # "job" (default) or "task" (Ada-SRSF task-level engine)

    [cluster]
    servers = 16                       # number of servers ...
    gpus_per_server = 4                # ... of this many GPUs each (or a list, one per server)
    inter_bandwidth_gbps = 10          # NIC, gigabits per second
    intra_bandwidth_gbps = 800         # NVLink/PCIe, gigabits per second
    gpu_memory_mb = 16384

    [model]                            # performance model
    name = "rar"                       # "rar" (SJF-BCO eqs. 6-8) or "allreduce" (Ada-SRSF eq. 5)
    xi1 = 1.0                          # any parameter of that model's dataclass
    xi2 = 0.001

    [workload]
    kind = "synthetic"                 # "synthetic", "csv" or "philly"
    generator = "ada_srsf"             # synthetic: "ada_srsf", "sjf_bco", "scaled"
    num_jobs = 160                     # generator keyword arguments
    # kind = "csv":    path = "jobs.csv" (relative to the scenario file), drop_oversized = false
    # kind = "philly": table = "rfold", max_jobs = 5000, start = 0.0, end = 86400.0
    # kind = "philly-slice" / "alibaba-slice": path = "trace.csv", num_jobs = 160, split = "all",
    #        time_scale = 1.0 (windows of consecutive jobs; ddl_gym/workloads/windows.py)
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from ddl_gym.sim.model import ClusterSpec, ConfigError, Workload
from ddl_gym.sim.perf import AllReduceContentionModel, PerformanceModel, RARContentionModel, make_performance_model

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

GBPS = 1e9 / 8  # bytes per second in one gigabit per second

ClusterSource = Callable[[np.random.Generator], ClusterSpec]
WorkloadSource = Callable[[np.random.Generator, ClusterSpec], Workload]


@dataclass(frozen=True)
class Scenario:
    """A named experimental setting.

    Attributes:
        name: registry name.
        cluster: a fixed ClusterSpec, or a callable drawing one from the episode's generator.
        workload: callable ``(rng, cluster) -> Workload`` drawing one episode's jobs.
        model: the performance model.
        engine: ``"job"`` (event engine with job-level rates) or ``"task"`` (task-level all-reduce).
        description: one line for ``ddl-gym list``.
        options: engine options (e.g. task-level GPU sharing), free-form.
    """

    name: str
    cluster: ClusterSpec | ClusterSource
    workload: WorkloadSource
    model: PerformanceModel = field(default_factory=RARContentionModel)
    engine: str = "job"
    description: str = ""
    options: dict[str, Any] = field(default_factory=dict)

    def sample_cluster(self, rng: np.random.Generator) -> ClusterSpec:
        return self.cluster if isinstance(self.cluster, ClusterSpec) else self.cluster(rng)

    def sample(self, rng: np.random.Generator) -> tuple[ClusterSpec, Workload]:
        """Draw one episode: the cluster first, then the workload, from the same generator."""
        cluster = self.sample_cluster(rng)
        workload = self.workload(rng, cluster)
        workload.check_fits(cluster)
        return cluster, workload

    def episode(self, seed: int) -> tuple[ClusterSpec, Workload]:
        """The episode the harness uses for ``seed`` (the env draws the same one for ``reset(seed)``)."""
        return self.sample(np.random.default_rng(seed))


# ---------------------------------------------------------------------------- built-in scenarios
@dataclass(frozen=True)
class SyntheticSource:
    """Workload from ``ddl_gym.workloads.synthetic.<generator>_workload(rng, **params)``."""

    generator: str
    params: tuple[tuple[str, Any], ...] = ()

    def __call__(self, rng: np.random.Generator, cluster: ClusterSpec) -> Workload:
        from ddl_gym.workloads import synthetic

        fn = getattr(synthetic, f"{self.generator}_workload", None)
        if fn is None:
            raise ConfigError(f"unknown synthetic generator {self.generator!r}; choose ada_srsf, sjf_bco, scaled or default")
        return fn(rng, **dict(self.params))


@dataclass(frozen=True)
class PhillySource:
    """Workload from the Philly job tables (:func:`ddl_gym.workloads.philly.load_philly`).

    Iterations are derived so that a job alone on its most consolidated placement under
    ``performance_model`` takes exactly its recorded duration.
    """

    params: tuple[tuple[str, Any], ...] = ()
    performance_model: PerformanceModel = field(default_factory=RARContentionModel)

    def __call__(self, rng: np.random.Generator, cluster: ClusterSpec) -> Workload:
        from ddl_gym.workloads.philly import load_philly

        return load_philly(rng=rng, cluster=cluster, performance_model=self.performance_model, **dict(self.params))


@dataclass(frozen=True)
class CsvSource:
    """Workload from a workload CSV (the same jobs every episode)."""

    path: str
    drop_oversized: bool = False

    def __call__(self, rng: np.random.Generator, cluster: ClusterSpec) -> Workload:
        from ddl_gym.workloads.csv_io import read_workload_csv

        return read_workload_csv(self.path, cluster=cluster, drop_oversized=self.drop_oversized)


@dataclass(frozen=True)
class PhillySliceSource:
    """``num_jobs`` consecutive Philly jobs starting at a uniformly drawn row of the table.

    The table is loaded once per process (models sampled with seed 0, oversized jobs for the
    cluster dropped), then each episode draws its window start from the episode's generator and
    rebases arrivals to 0. Philly's multi-day jobs are kept as recorded.
    """

    num_jobs: int = 160
    table: str = "rfold"
    performance_model: PerformanceModel = field(default_factory=RARContentionModel)

    def __call__(self, rng: np.random.Generator, cluster: ClusterSpec) -> Workload:
        full = _cached_philly(self.table, cluster, self.performance_model)
        if full.num_jobs <= self.num_jobs:
            return full
        first = int(rng.integers(0, full.num_jobs - self.num_jobs + 1))
        rows = np.arange(first, first + self.num_jobs)
        part = full.subset(rows, name=f"philly-{self.table}[{first}:{first + self.num_jobs}]")
        return part.shifted(-float(part.arrival[0]))


_PHILLY_CACHE: dict[tuple[str, ClusterSpec, Any], Workload] = {}


def _cached_philly(table: str, cluster: ClusterSpec, performance_model: PerformanceModel) -> Workload:
    key = (table, cluster, performance_model)
    if key not in _PHILLY_CACHE:
        import warnings

        from ddl_gym.workloads.philly import load_philly

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the dropped-job count is reported by `ddl-gym list`
            _PHILLY_CACHE[key] = load_philly(table=table, rng=0, cluster=cluster, drop_oversized=True,
                                             performance_model=performance_model)
    return _PHILLY_CACHE[key]


def _synthetic(generator: str, **kwargs: Any) -> SyntheticSource:
    return SyntheticSource(generator, tuple(sorted(kwargs.items())))


def _philly(**kwargs: Any) -> PhillySource:
    return PhillySource(tuple(sorted(kwargs.items())))


def _csv(path: str, drop_oversized: bool = False) -> CsvSource:
    return CsvSource(path, drop_oversized)


DEFAULT_CLUSTER = ClusterSpec.homogeneous(16, 4, inter_bandwidth=10 * GBPS, intra_bandwidth=800 * GBPS)

SCENARIOS: dict[str, Scenario] = {}


def register_scenario(scenario: Scenario) -> Scenario:
    SCENARIOS[scenario.name] = scenario
    return scenario


register_scenario(Scenario(
    name="default",
    cluster=DEFAULT_CLUSTER,
    workload=_synthetic("default"),
    description="16x4 GPUs, 10 Gb/s NICs, RAR contention+overhead; 160 jobs (paper mix, Table III models) over 20 min",
))
register_scenario(Scenario(
    name="small",
    cluster=ClusterSpec.homogeneous(4, 4, inter_bandwidth=10 * GBPS, intra_bandwidth=800 * GBPS),
    workload=_synthetic("scaled", num_jobs=40, max_gpus=8, arrival_rate_per_s=40 / 300.0),
    description="4x4 GPUs, RAR model; 40 jobs of at most 8 GPUs over ~5 min (fast tests and smoke training)",
))
register_scenario(Scenario(
    name="large",
    cluster=ClusterSpec.homogeneous(64, 4, inter_bandwidth=10 * GBPS, intra_bandwidth=800 * GBPS),
    workload=_synthetic("scaled", num_jobs=640, max_gpus=32, arrival_rate_per_s=640 / 1200.0),
    description="64x4 GPUs, RAR model; 640 jobs (paper mix) over 20 min",
))
register_scenario(Scenario(
    name="ada-srsf",
    cluster=ClusterSpec.homogeneous(16, 4, inter_bandwidth=10 * GBPS, intra_bandwidth=800 * GBPS, gpu_memory_mb=16_384),
    workload=_synthetic("ada_srsf"),
    model=AllReduceContentionModel(),
    engine="task",
    description="Ada-SRSF §V-A: 16x4 V100, 10GbE, eq. (5) all-reduce contention at task level, 160 jobs in 20 min",
    options={"gpu_sharing": True},
))
register_scenario(Scenario(
    name="ada-srsf-joblevel",
    cluster=ClusterSpec.homogeneous(16, 4, inter_bandwidth=10 * GBPS, intra_bandwidth=800 * GBPS),
    workload=_synthetic("ada_srsf"),
    model=AllReduceContentionModel(),
    description="Ada-SRSF workload and eq. (5) in job-level form (every split job communicating), exclusive GPUs",
))
register_scenario(Scenario(
    name="philly",
    cluster=ClusterSpec.homogeneous(256, 8, inter_bandwidth=100 * GBPS, intra_bandwidth=800 * GBPS),
    workload=_philly(table="rfold"),
    description="Full Philly RFold job table (95,621 jobs) on 256x8 GPUs with 100 Gb/s InfiniBand-class NICs, RAR model",
))
register_scenario(Scenario(
    name="philly-slice",
    cluster=DEFAULT_CLUSTER,
    workload=PhillySliceSource(num_jobs=160, table="rfold"),
    description="160 consecutive Philly jobs from a random point of the trace on the default 16x4 cluster",
))


#: ``"module:ATTRIBUTE"`` of each paper module's list of scenarios (or a factory returning a scenario or
#: a list), imported on first lookup of a name
#: that is not built in (they are optional: a missing dependency of one never breaks the others).
PAPER_SCENARIO_SOURCES: list[str] = [
    "ddl_gym.baselines.sjf_bco:SJF_BCO_SCENARIOS",
    "ddl_gym.baselines.sjf_bco:sjf_bco_regime_scenario",
    "ddl_gym.workloads.windows:window_scenarios",
    "ddl_gym.agents.transfer:transfer_scenarios",
]
_PAPER_SCENARIOS_LOADED: set[str] = set()


def _register_paper_scenarios() -> None:
    """Register the scenarios contributed by the paper modules (each source once)."""
    import importlib

    for source in PAPER_SCENARIO_SOURCES:
        if source in _PAPER_SCENARIOS_LOADED:
            continue
        _PAPER_SCENARIOS_LOADED.add(source)
        module_name, attribute = source.split(":")
        try:
            scenarios = getattr(importlib.import_module(module_name), attribute)
        except ImportError:
            continue
        if callable(scenarios):  # a factory of one scenario or a list
            scenarios = scenarios()
        for scenario in [scenarios] if isinstance(scenarios, Scenario) else scenarios:
            register_scenario(scenario)


# ---------------------------------------------------------------------------- lookup & files
def get_scenario(name_or_path: str | Path) -> Scenario:
    """A registered scenario by name, or a scenario file (``.toml`` / ``.json``) by path."""
    key = str(name_or_path)
    if key not in SCENARIOS:
        _register_paper_scenarios()
    if key in SCENARIOS:
        return SCENARIOS[key]
    path = Path(key)
    if path.suffix.lower() in (".toml", ".json") or path.exists():
        return load_scenario_file(path)
    raise ConfigError(f"unknown scenario {key!r}; known: {', '.join(sorted(SCENARIOS))} (or give a .toml/.json file)")


def load_scenario_file(path: str | Path) -> Scenario:
    """Parse and validate a scenario file; errors name the file and the offending key."""
    path = Path(path)
    if not path.exists():
        raise ConfigError(f"{path}: scenario file not found")
    try:
        if path.suffix.lower() == ".json":
            data = json.loads(path.read_text())
        else:
            data = tomllib.loads(path.read_text())
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: not valid {path.suffix.lstrip('.').upper() or 'TOML'}: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: top level must be a table of keys")

    def err(key: str, msg: str) -> ConfigError:
        return ConfigError(f"{path}: {key}: {msg}")

    known_top = {"name", "description", "engine", "cluster", "model", "workload", "options"}
    for key in data:
        if key not in known_top:
            raise err(key, f"unknown key (expected one of {sorted(known_top)})")
    cluster_cfg = data.get("cluster")
    if not isinstance(cluster_cfg, dict):
        raise err("cluster", "missing [cluster] table")
    try:
        gps = cluster_cfg.get("gpus_per_server", 4)
        if isinstance(gps, list):
            per_server = tuple(int(g) for g in gps)
        else:
            servers = cluster_cfg.get("servers")
            if not isinstance(servers, int) or servers < 1:
                raise err("cluster.servers", f"must be a positive integer, got {servers!r}")
            per_server = (int(gps),) * servers
        cluster = ClusterSpec(
            gpus_per_server=per_server,
            inter_bandwidth=float(cluster_cfg.get("inter_bandwidth_gbps", 10)) * GBPS,
            intra_bandwidth=float(cluster_cfg.get("intra_bandwidth_gbps", 800)) * GBPS,
            gpu_memory_mb=float(cluster_cfg.get("gpu_memory_mb", 16_384)),
        )
    except ConfigError as exc:
        raise ConfigError(str(exc) if str(exc).startswith(str(path)) else f"{path}: {exc}") from None
    except (TypeError, ValueError) as exc:
        raise err("cluster", str(exc)) from None

    model_cfg = dict(data.get("model", {"name": "rar"}))
    model_name = model_cfg.pop("name", "rar")
    try:
        model = make_performance_model(model_name, **model_cfg)
    except ConfigError as exc:
        raise err("model", str(exc)) from None

    wl = data.get("workload")
    if not isinstance(wl, dict):
        raise err("workload", "missing [workload] table")
    wl = dict(wl)
    kind = wl.pop("kind", "synthetic")
    if kind == "synthetic":
        generator = wl.pop("generator", "default")
        source = _synthetic(generator, **wl)
    elif kind == "csv":
        if "path" not in wl:
            raise err("workload.path", "required for kind = 'csv'")
        csv_path = Path(wl.pop("path"))
        if not csv_path.is_absolute():
            csv_path = path.parent / csv_path
        source = _csv(str(csv_path), drop_oversized=bool(wl.pop("drop_oversized", False)))
    elif kind == "philly":
        source = _philly(**wl)
    elif kind in ("philly-slice", "alibaba-slice"):  # trace windows (ddl_gym/workloads/windows.py)
        from ddl_gym.workloads.windows import window_source_from_config

        source = window_source_from_config(kind, wl, path.parent, model, err)
    else:
        raise err("workload.kind", f"unknown kind {kind!r} (synthetic, csv, philly, philly-slice or alibaba-slice)")
    engine = data.get("engine", "job")
    if engine not in ("job", "task"):
        raise err("engine", f"must be 'job' or 'task', got {engine!r}")
    scenario = Scenario(
        name=str(data.get("name", path.stem)),
        cluster=cluster,
        workload=source,
        model=model,
        engine=engine,
        description=str(data.get("description", f"from {path}")),
        options=dict(data.get("options", {})),
    )
    try:  # fail now, with the file's name, rather than at the first episode
        scenario.episode(0)
    except ConfigError as exc:
        raise ConfigError(f"{path}: workload: {exc}") from None
    except TypeError as exc:
        raise err("workload", f"bad generator argument: {exc}") from None
    return scenario
