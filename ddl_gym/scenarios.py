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

    [options]                          # engine options (SCENARIO_OPTIONS)
    gpu_sharing = true                 # task-level engine: share GPUs by memory (Ada-SRSF)

Every table is validated when the file is loaded: an unknown key is an error that suggests the
nearest known key (``[cluster] servres`` -> "did you mean 'servers'?"), every value must have
the right type (``servers = "4"`` and ``servers = true`` are errors, not 4 and 1) and lie in a
bounded range (no 10^12 jobs or servers that would exhaust memory), and the first episode is
drawn, so a bad file fails at once with one line ``<file>: <table.key>: <problem>``.

Default scenario calibration (``default`` and the presets ``small``, ``large``, ``philly-slice``
that share its cluster and model). ``ddl-gym scenarios --stats`` measures the resulting
utilisation, contention share and load (README, scenario table).

* **NICs: 100 Gb/s** (intra-server 800 Gb/s). The jobs are Ada-SRSF's Table III profiles (V100,
  batch 16/64). For a 4-GPU job spread one GPU per server over four servers, ring all-reduce
  traffic costs 0.14–0.70× the job's compute per iteration at 100 Gb/s (Inception-V3 … VGG-16) and
  1.4–7.0× at 10 Gb/s. Pollux (OSDI'21) measured that placement for six applications on 4-GPU
  nodes (``shared/traces/pollux-workloads``, ``app_profiles/*/placements.csv``, placement ``1111``
  vs ``1``): 0.07–1.22× extra step time at the largest profiled per-GPU batch, 0.58–1.97× at the
  smallest. 100 Gb/s keeps the Table III jobs inside that measured range; 10 Gb/s puts VGG-16 and
  LSTM far above it. SJF-BCO's §7.1 setting and the ``philly`` scenario also use 100 Gb/s.
* **Contention: ξ1 = 0.6** (RAR model, ``k = max(1, ξ1·p)``, α = 0.275, ξ2 = 1 ms per server).
  Ada-SRSF §I measured four 4-GPU jobs, each spread over the same four 10 GbE nodes, at 675 s
  against 295 s for one such job alone: 2.29×. On the ``ada-srsf-10g`` cluster the RAR model gives
  that configuration 2.02–2.55× over the four Table III models (geometric mean 2.27×) with ξ1 = 0.6,
  against 3.2–4.3× with ξ1 = 1 (:func:`ddl_gym.scenario_stats.contention_check` prints it). ξ1 is the
  share of co-located spread jobs whose transfers actually overlap; on a 10× faster network
  transfers are shorter and overlap less, so the 10 GbE value is kept as an upper estimate.
  ξ1 = 0.6 also keeps two spread jobs on one NIC contending (k = 1.2; ξ1 ≤ 0.5 would give k = 1).
* **Load: 160 jobs over 80 minutes** (the Ada-SRSF size mix, 1000–6000 iterations, Table III
  models). The offered load ``Σ G_j·ρ_j^min / (GPUs × window)`` is 0.80 on average (below
  saturation); over Ada-SRSF's 20 minutes it is 3.2 even with perfect consolidation and no
  contention, which makes every schedule hours long. ``small`` (40 jobs, 16 GPUs) arrives over
  1 hour and ``large`` (640 jobs, 256 GPUs) over 80 minutes for a similar load.

The former default (10 Gb/s NICs, ξ1 = 1, 20 minutes of arrivals; ``leaderboard/default-10g`` was
measured on it) stays available as ``default-10g``; ``ada-srsf-10g`` is the Ada-SRSF 2020 setting
(10 GbE, 20 minutes) on the job-level RAR model with the ξ1 = 0.6 calibration.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ddl_gym.scenario_base import (  # the Scenario type, the default world and the config helpers
    DEFAULT_CLUSTER, DEFAULT_MODEL, DEFAULT_NIC_GBPS, DEFAULT_XI1, GBPS, ClusterSource, Scenario, WorkloadSource,
    _as_bool, _as_int, _as_number, _as_str, _FileErrors, _table, _type_name,
)
from ddl_gym.sim.model import ClusterSpec, ConfigError, Workload
from ddl_gym.sim.perf import AllReduceContentionModel, PerformanceModel, RARContentionModel, make_performance_model
from ddl_gym.workloads.synthetic import DEFAULT_WINDOW_S

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]


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

    def trace_data(self) -> list[str]:
        """Keys of :data:`ddl_gym.workloads.tracedata.TRACE_DATA` this source needs (none for a given path)."""
        params = dict(self.params)
        return [] if params.get("path") is not None else [f"philly-{params.get('table') or 'rfold'}"]

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

    def trace_data(self) -> list[str]:
        """Keys of :data:`ddl_gym.workloads.tracedata.TRACE_DATA` this source needs."""
        return [f"philly-{self.table}"]

    def __call__(self, rng: np.random.Generator, cluster: ClusterSpec) -> Workload:
        full = _cached_philly(self.table, cluster, self.performance_model)
        if full.num_jobs < self.num_jobs:
            raise ConfigError(f"Philly {self.table} table: {full.num_jobs} job(s) fit a cluster of {cluster.num_gpus} "
                              f"GPUs, fewer than num_jobs = {self.num_jobs}")
        if full.num_jobs == self.num_jobs:
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


#: Ada-SRSF §V-A's cluster: 16 × 4 GPUs behind 10 GbE.
CLUSTER_10G = ClusterSpec.homogeneous(16, 4, inter_bandwidth=10 * GBPS, intra_bandwidth=800 * GBPS)

SCENARIOS: dict[str, Scenario] = {}


def register_scenario(scenario: Scenario) -> Scenario:
    SCENARIOS[scenario.name] = scenario
    return scenario


register_scenario(Scenario(
    name="default",
    cluster=DEFAULT_CLUSTER,
    workload=_synthetic("default"),
    model=DEFAULT_MODEL,
    description="16x4 GPUs, 100 Gb/s NICs, RAR contention (ξ1=0.6) + overhead; 160 jobs (paper mix, Table III "
                "models) over 80 min, offered load ≈ 0.8",
))
register_scenario(Scenario(
    name="small",
    cluster=ClusterSpec.homogeneous(4, 4, inter_bandwidth=DEFAULT_NIC_GBPS * GBPS, intra_bandwidth=800 * GBPS),
    workload=_synthetic("scaled", num_jobs=40, max_gpus=8, arrival_rate_per_s=40 / 3600.0),
    model=DEFAULT_MODEL,
    description="4x4 GPUs, default model; 40 jobs of at most 8 GPUs over ~1 h (fast tests and smoke training)",
))
register_scenario(Scenario(
    name="large",
    cluster=ClusterSpec.homogeneous(64, 4, inter_bandwidth=DEFAULT_NIC_GBPS * GBPS, intra_bandwidth=800 * GBPS),
    workload=_synthetic("scaled", num_jobs=640, max_gpus=32, arrival_rate_per_s=640 / DEFAULT_WINDOW_S),
    model=DEFAULT_MODEL,
    description="64x4 GPUs, default model; 640 jobs (paper mix) over ~80 min",
))
register_scenario(Scenario(
    name="default-10g",
    cluster=CLUSTER_10G,
    workload=_synthetic("ada_srsf", name="default"),
    description="the former default: 16x4 GPUs, 10 Gb/s NICs, RAR model with ξ1=1, 160 jobs over 20 min "
                "(leaderboard/default-10g was measured on it; offered load ≈ 9.5)",
))
register_scenario(Scenario(
    name="ada-srsf-10g",
    cluster=CLUSTER_10G,
    workload=_synthetic("ada_srsf"),
    model=RARContentionModel(xi1=DEFAULT_XI1),
    description="Ada-SRSF 2020 setting on the job-level RAR model: 16x4 GPUs, 10 GbE, ξ1=0.6 (matches §I's "
                "measured 2.29x), 160 jobs over 20 min",
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
    cluster=CLUSTER_10G,
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
    workload=PhillySliceSource(num_jobs=160, table="rfold", performance_model=DEFAULT_MODEL),
    model=DEFAULT_MODEL,
    description="160 consecutive Philly jobs from a random point of the trace on the default 16x4 cluster and model",
))


#: ``"module:ATTRIBUTE"`` of each paper module's list of scenarios (or a factory returning a scenario or
#: a list), imported on first lookup of a name
#: that is not built in (they are optional: a missing dependency of one never breaks the others).
PAPER_SCENARIO_SOURCES: list[str] = [
    "ddl_gym.baselines.sjf_bco.policy:SJF_BCO_SCENARIOS",
    "ddl_gym.baselines.sjf_bco.policy:sjf_bco_regime_scenario",
    "ddl_gym.workloads.asrpt:ASRPT_SCENARIOS",
    "ddl_gym.workloads.smd_jobs:SMD_SCENARIOS",
    "ddl_gym.workloads.aonline:AONLINE_SCENARIOS",
    "ddl_gym.workloads.windows:window_scenarios",
    "ddl_gym.agents.transfer:transfer_scenarios",
    "ddl_gym.suite_scenarios:suite_scenarios",  # the versioned task suite (ddl_gym/suite.py, issue 31)
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


#: Largest scenario file read (a scenario is a few dozen keys; anything bigger is a wrong path).
MAX_SCENARIO_BYTES = 1 << 20
#: Bounds that keep a scenario file from asking for more memory than a machine has.
MAX_SERVERS = 100_000
MAX_GPUS_PER_SERVER = 1024
MAX_GPUS = 1_000_000
MAX_SYNTHETIC_JOBS = 1_000_000
MAX_BANDWIDTH_GBPS = 1e7  # 10 Pb/s: far above any link, far below float overflow

#: Keys of the ``[options]`` table and their types (engine options; extend when an engine gains one).
SCENARIO_OPTIONS: dict[str, type] = {"gpu_sharing": bool}

_TOP_KEYS = ("name", "description", "engine", "cluster", "model", "workload", "options")
_CLUSTER_KEYS = ("servers", "gpus_per_server", "inter_bandwidth_gbps", "intra_bandwidth_gbps", "gpu_memory_mb")
_CSV_KEYS = ("kind", "path", "drop_oversized")
_PHILLY_KEYS = ("kind", "path", "table", "max_jobs", "start", "end", "drop_oversized", "drop_malformed",
                "iteration_time_s", "models", "name")
_SYNTHETIC_GENERATORS = ("default", "ada_srsf", "sjf_bco", "scaled")


def _read_scenario_text(path: Path) -> str:
    try:
        info = path.stat()
    except OSError as exc:
        raise ConfigError(f"{path}: scenario file not found" if isinstance(exc, FileNotFoundError)
                          else f"{path}: cannot read scenario file ({exc.strerror or exc})") from None
    if path.is_dir():
        raise ConfigError(f"{path}: is a folder, not a scenario file (.toml or .json)")
    if path.is_file() and info.st_size > MAX_SCENARIO_BYTES:
        raise ConfigError(f"{path}: {info.st_size:,} bytes is too large for a scenario file "
                          f"(limit {MAX_SCENARIO_BYTES:,}); is this the right file?")
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_SCENARIO_BYTES + 1)  # bounded: /dev/zero or a pipe cannot fill memory
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read scenario file ({exc.strerror or exc})") from None
    if len(data) > MAX_SCENARIO_BYTES:
        raise ConfigError(f"{path}: more than {MAX_SCENARIO_BYTES:,} bytes; not a scenario file")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def _parse_cluster(err: _FileErrors, cfg: dict[str, Any]) -> ClusterSpec:
    err.check_keys("cluster", cfg, _CLUSTER_KEYS)
    gps = cfg.get("gpus_per_server", 4)
    if isinstance(gps, list):
        if "servers" in cfg:
            raise err("cluster.servers", "give either servers (with one gpus_per_server count) or a "
                      "gpus_per_server list, not both")
        if not gps:
            raise err("cluster.gpus_per_server", "the list is empty; give one GPU count per server")
        if len(gps) > MAX_SERVERS:
            raise err("cluster.gpus_per_server", f"more than {MAX_SERVERS:,} servers")
        per_server = tuple(_as_int(err, f"cluster.gpus_per_server[{i}]", g, 1, MAX_GPUS_PER_SERVER)
                           for i, g in enumerate(gps))
    else:
        if "servers" not in cfg:
            raise err("cluster.servers", "missing (number of servers; or give gpus_per_server as a list)")
        servers = _as_int(err, "cluster.servers", cfg["servers"], 1, MAX_SERVERS)
        per_server = (_as_int(err, "cluster.gpus_per_server", gps, 1, MAX_GPUS_PER_SERVER),) * servers
    if sum(per_server) > MAX_GPUS:
        raise err("cluster", f"{sum(per_server):,} GPUs in all; at most {MAX_GPUS:,} are supported")
    try:
        return ClusterSpec(
            gpus_per_server=per_server,
            inter_bandwidth=_as_number(err, "cluster.inter_bandwidth_gbps", cfg.get("inter_bandwidth_gbps", 10),
                                       high=MAX_BANDWIDTH_GBPS, low_open=True) * GBPS,
            intra_bandwidth=_as_number(err, "cluster.intra_bandwidth_gbps", cfg.get("intra_bandwidth_gbps", 800),
                                       high=MAX_BANDWIDTH_GBPS, low_open=True) * GBPS,
            gpu_memory_mb=_as_number(err, "cluster.gpu_memory_mb", cfg.get("gpu_memory_mb", 16_384),
                                     high=1e9, low_open=True),
        )
    except ConfigError as exc:
        raise err("cluster", str(exc)) from None


def _parse_model(err: _FileErrors, cfg: dict[str, Any]) -> PerformanceModel:
    import dataclasses

    from ddl_gym.sim.perf import PERFORMANCE_MODELS, performance_model_class

    name = _as_str(err, "model.name", cfg.pop("name", "rar"))
    if name not in PERFORMANCE_MODELS:
        raise err("model.name", f"unknown performance model {name!r}; choose one of {', '.join(sorted(PERFORMANCE_MODELS))}")
    try:
        cls = performance_model_class(name)
    except ConfigError as exc:
        raise err("model.name", str(exc)) from None
    fields = {f.name: f for f in dataclasses.fields(cls) if f.name != "name"} if dataclasses.is_dataclass(cls) else {}
    if fields:
        err.check_keys("model", cfg, ["name", *fields])
    params: dict[str, Any] = {}
    for key, value in cfg.items():
        default = fields[key].default if key in fields else None
        if isinstance(default, bool):
            params[key] = _as_bool(err, f"model.{key}", value)
        elif isinstance(default, (int, float)):
            params[key] = _as_number(err, f"model.{key}", value)
        elif isinstance(default, str):
            params[key] = _as_str(err, f"model.{key}", value)
        else:
            params[key] = value
    try:
        return make_performance_model(name, **params)
    except ConfigError as exc:
        raise err("model", str(exc)) from None


def _generator_params(err: _FileErrors, generator: str, cfg: dict[str, Any]) -> dict[str, Any]:
    """Check the keyword arguments of ``<generator>_workload`` by name, type and range."""
    import inspect

    from ddl_gym.workloads import synthetic

    fn = getattr(synthetic, f"{generator}_workload")
    allowed = [p for p in inspect.signature(fn).parameters if p != "rng"]
    err.check_keys("workload", cfg, ["kind", "generator", *allowed])
    required = [p.name for p in inspect.signature(fn).parameters.values()
                if p.name != "rng" and p.default is inspect.Parameter.empty]
    for key in required:
        if key not in cfg:
            raise err(f"workload.{key}", f"required by generator {generator!r}")
    out: dict[str, Any] = {}
    for key, value in cfg.items():
        where = f"workload.{key}"
        if key == "num_jobs":
            out[key] = _as_int(err, where, value, 1, MAX_SYNTHETIC_JOBS)
        elif key == "max_gpus":
            out[key] = _as_int(err, where, value, 1, MAX_GPUS)
        elif key in ("arrival_rate_per_s", "window_s"):
            if key == "arrival_rate_per_s" and value is None:  # JSON null: every job at t = 0
                out[key] = None
            else:
                out[key] = _as_number(err, where, value, high=1e9, low_open=True)
        elif key == "iterations":
            if not isinstance(value, list) or len(value) != 2:
                raise err(where, f"must be a list [low, high] of two integers, got {value!r}")
            low = _as_int(err, where + "[0]", value[0], 1, 10**12)
            high = _as_int(err, where + "[1]", value[1], 1, 10**12)
            if high < low:
                raise err(where, f"needs low <= high, got {value!r}")
            out[key] = (low, high)
        elif key == "gpu_mix":
            if not isinstance(value, dict) or not value:
                raise err(where, f"must be a table {{gpus = count, ...}}, e.g. {{1 = 80, 2 = 14}}, got {value!r}")
            mix: dict[int, int] = {}
            for size, count in value.items():
                try:
                    gpus = int(str(size))
                except ValueError:
                    raise err(where, f"key {size!r} is not a GPU count (an integer)") from None
                mix[_as_int(err, f"{where}.{size}", gpus, 1, MAX_GPUS)] = _as_int(
                    err, f"{where}.{size}", count, 0, MAX_SYNTHETIC_JOBS)
            if sum(mix.values()) > MAX_SYNTHETIC_JOBS:
                raise err(where, f"more than {MAX_SYNTHETIC_JOBS:,} jobs in all")
            out[key] = mix
        elif key == "models":
            names = [value] if isinstance(value, str) else value
            if not isinstance(names, list) or not names or not all(isinstance(m, str) for m in names):
                raise err(where, f"must be a list of model-zoo names, got {value!r}")
            out[key] = tuple(names)
        elif key == "name":
            out[key] = _as_str(err, where, value)
        else:  # a generator argument this loader does not know the type of: the generator checks it
            out[key] = value
    return out


def _parse_workload(err: _FileErrors, cfg: dict[str, Any], path: Path, model: Any = None) -> WorkloadSource:
    kind = _as_str(err, "workload.kind", cfg.get("kind", "synthetic"),
                   ("synthetic", "csv", "philly", "philly-slice", "alibaba-slice"))
    if kind in ("philly-slice", "alibaba-slice"):  # trace windows; keys validated in ddl_gym/workloads/windows.py
        from ddl_gym.workloads.windows import window_source_from_config

        return window_source_from_config(kind, cfg, path.parent, model, err)
    if kind == "synthetic":
        import inspect

        from ddl_gym.workloads import synthetic

        known = ["kind", "generator"] + sorted({p for g in _SYNTHETIC_GENERATORS
                                                for p in inspect.signature(getattr(synthetic, f"{g}_workload")).parameters
                                                if p != "rng"})
        err.check_keys("workload", cfg, known)  # a misspelt key of any generator (or 'generator' itself)
        generator = _as_str(err, "workload.generator", cfg.get("generator", "default"), _SYNTHETIC_GENERATORS)
        params = _generator_params(err, generator, cfg)
        params.pop("kind", None)
        params.pop("generator", None)
        return _synthetic(generator, **params)
    if kind == "csv":
        err.check_keys("workload", cfg, _CSV_KEYS)
        if "path" not in cfg:
            raise err("workload.path", "required for kind = 'csv'")
        csv_path = Path(_as_str(err, "workload.path", cfg["path"]))
        if not csv_path.is_absolute():
            csv_path = path.parent / csv_path
        if not csv_path.exists():
            raise err("workload.path", f"workload CSV {csv_path} not found")
        return _csv(str(csv_path), drop_oversized=_as_bool(err, "workload.drop_oversized",
                                                           cfg.get("drop_oversized", False)))
    err.check_keys("workload", cfg, _PHILLY_KEYS)
    params: dict[str, Any] = {}
    for key, value in cfg.items():
        where = f"workload.{key}"
        if key == "kind":
            continue
        if key == "table":
            params[key] = _as_str(err, where, value, ("rfold", "pollux"))
        elif key == "path":
            trace = Path(_as_str(err, where, value))
            params[key] = str(trace if trace.is_absolute() else path.parent / trace)
        elif key == "max_jobs":
            params[key] = _as_int(err, where, value, 1, MAX_SYNTHETIC_JOBS)
        elif key in ("start", "end"):
            params[key] = _as_number(err, where, value, high=1e12)
        elif key == "iteration_time_s":
            params[key] = _as_number(err, where, value, high=1e6, low_open=True)
        elif key in ("drop_oversized", "drop_malformed"):
            params[key] = _as_bool(err, where, value)
        elif key == "models":
            if not isinstance(value, list) or not value or not all(isinstance(m, str) for m in value):
                raise err(where, f"must be a list of model-zoo names, got {value!r}")
            params[key] = tuple(value)
        else:
            params[key] = _as_str(err, where, value)
    if "start" in params and "end" in params and params["end"] <= params["start"]:
        raise err("workload.end", f"must be after start ({params['start']:g}), got {params['end']:g}")
    return _philly(**params)


def _parse_options(err: _FileErrors, cfg: dict[str, Any]) -> dict[str, Any]:
    err.check_keys("options", cfg, list(SCENARIO_OPTIONS))
    out: dict[str, Any] = {}
    for key, value in cfg.items():
        if SCENARIO_OPTIONS[key] is bool:
            out[key] = _as_bool(err, f"options.{key}", value)
        else:
            out[key] = value
    return out


def load_scenario_file(path: str | Path) -> Scenario:
    """Parse and validate a scenario file (format in the module docstring).

    Every table is checked: unknown keys are rejected with the nearest known key suggested
    (``difflib``), every value's type and range is checked, and the first episode is drawn, so a
    bad file fails here with one line ``<file>: <table.key>: <problem>``.
    """
    path = Path(path)
    text = _read_scenario_text(path)
    try:
        if path.suffix.lower() == ".json":
            data = json.loads(text)
        else:
            data = tomllib.loads(text)
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as exc:
        kind = path.suffix.lstrip(".").upper() if path.suffix.lower() == ".json" else "TOML"
        raise ConfigError(f"{path}: not valid {kind}: {str(exc).splitlines()[0]}") from None
    except RecursionError:
        raise ConfigError(f"{path}: nested too deeply to be a scenario file") from None
    err = _FileErrors(path)
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: top level must be a table of keys, got {_type_name(data)}")
    err.check_keys("", data, _TOP_KEYS)
    from ddl_gym.workloads.ps_files import is_ps_scenario, load_ps_scenario  # resource pools, PS jobs (SMD)

    if is_ps_scenario(data):
        return load_ps_scenario(path, data)

    name = _as_str(err, "name", data.get("name", path.stem))
    if not name.strip() or len(name) > 200 or any(c in name for c in "\n\r"):
        raise err("name", f"must be a non-empty one-line string of at most 200 characters, got {name!r}")
    description = _as_str(err, "description", data.get("description", f"from {path}"))
    engine = _as_str(err, "engine", data.get("engine", "job"), ("job", "task"))
    cluster = _parse_cluster(err, _table(err, "cluster", data.get("cluster"), required=True))
    model = _parse_model(err, _table(err, "model", data.get("model"), required=False))
    source = _parse_workload(err, _table(err, "workload", data.get("workload"), required=True), path, model)
    options = _parse_options(err, _table(err, "options", data.get("options"), required=False))
    scenario = Scenario(name=name, cluster=cluster, workload=source, model=model, engine=engine,
                        description=description, options=options)
    try:  # fail now, with the file's name, rather than at the first episode
        scenario.episode(0)
    except ConfigError as exc:
        message = str(exc)
        raise ConfigError(message if message.startswith(str(path)) else f"{path}: workload: {message}") from None
    except (TypeError, ValueError) as exc:
        raise err("workload", f"bad generator argument: {exc}") from None
    return scenario
