"""A-SRPT scenarios (Luo §V): recurring-group pipeline workloads with predicted iterations.

Each episode is a window of consecutive jobs from the *test* part (the last 20 %) of a recurring-group
trace (:mod:`ddl_gym.workloads.recurring`); a predictor (default the random forest) is fitted once on
the trace's first 80 % ("We use the first 80 % jobs in the trace to train", spec A5 #9) and fills
``predicted_iterations``. The episode's generator only chooses the window, so for one scenario the
trace and the trained predictor are shared by all seeds (cached per process).

Arrivals are Philly gaps rescaled so that the window's offered load ``Σ g_i n_i α̃_min_i / (G·span)``
equals ``load`` (the paper replays PAI submissions of a 6,000-GPU cluster on 2,000 GPUs and states
no load; the load is an explicit, swept parameter here).

Scenarios (``ddl-gym list``):

* ``asrpt-sim`` — §V-B scaled to run in seconds: 32 servers × 8 V100 GPUs, 10 Gb/s NICs, 300 GB/s
  NVLink, 2,000-job windows of a 20,000-job trace. :func:`asrpt_sim_scenario` builds any size; the
  paper scale (250 × 8 GPUs, 150,000-job windows of a 750,000-job trace) is ``asrpt-sim-full``.
* ``asrpt-testbed`` — §V-A's stand-in (spec §A3.1): 2 servers × 7 MIG vGPUs, 128 GB/s between any
  two vGPUs (PCIe), 12 GB per vGPU, jobs of ≤ 8 GPUs, 75-job windows, iterations scaled to 10 %; use
  A-SRPT with ``tau=0`` as the paper does.
* ``asrpt-small`` — 8 servers × 8 GPUs, 200-job windows (fast experiments, RL training:
  ``DDLCluster-ASRPT-v0``).
"""

from __future__ import annotations

import functools
import hashlib
import os
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from ddl_gym.baselines.a_srpt.prediction import DEFAULT_UNSEEN, unseen_rule
from ddl_gym.scenario_base import GBPS, Scenario
from ddl_gym.sim.model import ARCH_PIPELINE, ClusterSpec, ConfigError, Workload
from ddl_gym.sim.perf.pipeline import PipelineRateModel
from ddl_gym.sim.zoo_pipeline import TESTBED_MEMORY_BYTES, summary_profile
from ddl_gym.workloads.recurring import RecurringSpec, RecurringTrace, generate_recurring_trace, window_arrivals

TRAIN_FRACTION = 0.8
DEFAULT_LOAD = 0.9


def trace_workload(trace: RecurringTrace, rows: np.ndarray, *, arrival: np.ndarray | None = None,
                   predicted: np.ndarray | None = None, name: str = "recurring") -> Workload:
    """The jobs ``rows`` of ``trace`` as a pipeline :class:`Workload` (arrivals default to the raw Philly gaps)."""
    rows = np.asarray(rows, dtype=np.int64)
    if arrival is None:
        arrival = np.cumsum(trace.gaps[rows]) - trace.gaps[rows[0]] if rows.size else np.zeros(0)
    config_index = trace.config_index[rows]
    models = tuple(summary_profile(c, m) for c, m in zip(trace.configs, trace.models))
    return Workload(
        job_id=rows, arrival=arrival, gpus=trace.gpus[rows], iterations=trace.iterations[rows],
        model_index=config_index, models=models, user=trace.user[rows], group=trace.group[rows], name=name,
        arch=np.full(rows.size, ARCH_PIPELINE, dtype=np.int8), profile_index=config_index, profiles=trace.configs,
        predicted_iterations=predicted,
    )


@functools.lru_cache(maxsize=16)
def trace_predictions(spec: RecurringSpec, predictor: str = "rf", scope: str = "user", seed: int = 0,
                      train_fraction: float = TRAIN_FRACTION, unseen: str = DEFAULT_UNSEEN) -> tuple[int, np.ndarray]:
    """``(first test row, predictions for the test rows)``: ``predictor`` fitted on the first
    ``train_fraction`` of the trace; jobs of unseen groups predicted by the rule ``unseen``
    (:data:`ddl_gym.baselines.a_srpt.prediction.UNSEEN_RULES`).

    Cached per process, and on disk when ``$DDL_GYM_CACHE`` names a folder (the forest takes minutes on
    paper-scale traces; the file is keyed by every input and the scikit-learn version, and holds
    exactly what a fresh fit returns).
    """
    from ddl_gym.baselines.a_srpt.prediction import make_predictor

    trace = generate_recurring_trace(spec)
    n_train = int(round(train_fraction * trace.num_jobs))
    if not 0 < n_train < trace.num_jobs:
        raise ConfigError(f"train_fraction {train_fraction} leaves no training or no test jobs")
    unseen = unseen_rule(unseen)
    cache = _cache_file(spec, predictor, scope, seed, train_fraction, unseen)
    if cache is not None and cache.exists():
        predicted = np.load(cache)
    else:
        model = make_predictor(predictor, seed=seed, scope=scope, unseen=unseen)
        model.fit(trace_workload(trace, np.arange(n_train)))
        test = trace_workload(trace, np.arange(n_train, trace.num_jobs))
        predicted = np.asarray(model.predict(test), dtype=np.float64)
        if cache is not None:
            cache.parent.mkdir(parents=True, exist_ok=True)
            tmp = cache.with_suffix(f".{os.getpid()}.tmp.npy")
            np.save(tmp, predicted)
            os.replace(tmp, cache)
    predicted.setflags(write=False)
    return n_train, predicted


def _cache_file(spec: RecurringSpec, predictor: str, scope: str, seed: int, train_fraction: float,
                unseen: str) -> Path | None:
    folder = os.environ.get("DDL_GYM_CACHE")
    if not folder or predictor == "perfect":
        return None
    try:
        from sklearn import __version__ as sklearn_version
    except ImportError:  # pragma: no cover
        sklearn_version = "none"
    key = repr((spec, predictor, scope, seed, train_fraction, sklearn_version, 1) + ((unseen,) if unseen != "zero" else ()))
    digest = hashlib.sha256(key.encode()).hexdigest()[:20]
    return Path(folder) / f"asrpt-predictions-{predictor}-{digest}.npy"


@dataclass(frozen=True)
class RecurringWindowSource:
    """Workload source: a window of ``num_jobs`` consecutive test jobs with predictions.

    Attributes:
        spec: the recurring trace.
        num_jobs: window length.
        load: target offered load of the window (``<= 0``: raw Philly gaps).
        predictor: ``"rf"``, ``"mean"``, ``"median"`` or ``"perfect"``; ``scope`` of mean/median.
        label: prefix of the workload name (the scenario's name).
        unseen: the unseen-job rule (``"zero"``: the paper's; default ``"median"``, see
            :mod:`ddl_gym.baselines.a_srpt.prediction`).
        load_inter_bandwidth: ``None`` (default): the offered load ``load`` is computed with the trace's
            reference ``α̃_min`` (10 Gb/s), so a bandwidth sweep replays one job set whose offered load
            changes with the bandwidth (the paper's Fig. 8). A bandwidth (bytes/s): ``α̃_min`` at that
            NIC bandwidth instead, so the window's offered load on such a cluster equals ``load``
            (Fig. 8 at equal offered load; the iterations are unchanged, the arrivals are stretched).
    """

    spec: RecurringSpec = field(default_factory=RecurringSpec)
    num_jobs: int = 2_000
    load: float = DEFAULT_LOAD
    predictor: str = "rf"
    scope: str = "user"
    label: str = "asrpt"
    unseen: str = DEFAULT_UNSEEN
    load_inter_bandwidth: float | None = None

    def trace_data(self) -> list[str]:
        """Keys of :data:`ddl_gym.workloads.tracedata.TRACE_DATA` this source needs (the Philly gaps)."""
        return ["philly-rfold"]

    def __call__(self, rng: np.random.Generator, cluster: ClusterSpec) -> Workload:
        trace = generate_recurring_trace(self.spec)
        n_train, predicted = trace_predictions(self.spec, self.predictor, self.scope, unseen=self.unseen)
        room = trace.num_jobs - n_train - self.num_jobs
        if room < 0:
            raise ConfigError(f"{self.label}: a {self.num_jobs}-job window does not fit the {trace.num_jobs - n_train} "
                              f"test jobs of a {trace.num_jobs}-job trace; raise the trace's num_jobs")
        offset = int(rng.integers(0, room + 1))
        first = n_train + offset
        rows = np.arange(first, first + self.num_jobs)
        scale = 1.0
        if self.load_inter_bandwidth is not None and self.load > 0:  # the offered load at this NIC bandwidth
            ci = trace.config_index[rows]
            weight = trace.gpus[rows] * trace.iterations[rows].astype(np.float64)
            at_nic = _alpha_at_nic(self.spec, float(self.load_inter_bandwidth))
            scale = float(np.sum(weight * at_nic[ci]) / np.sum(weight * trace.alpha_min[ci]))
        arrival = window_arrivals(trace, first, self.num_jobs, load=self.load, num_gpus=cluster.num_gpus,
                                  arrival_scale=scale)
        return trace_workload(trace, rows, arrival=arrival, predicted=predicted[offset: offset + self.num_jobs],
                              name=f"{self.label}[{first}:{first + self.num_jobs}]")

    def with_(self, **changes: object) -> RecurringWindowSource:
        return replace(self, **changes)


@functools.lru_cache(maxsize=32)
def _alpha_at_nic(spec: RecurringSpec, inter_bandwidth: float) -> np.ndarray:
    """``α̃_min`` of every configuration of ``spec``'s trace at another NIC bandwidth."""
    from ddl_gym.sim.perf.pipeline import alpha_min_tilde

    trace = generate_recurring_trace(spec)
    return np.array([alpha_min_tilde(c, spec.gpus_per_server, inter_bandwidth, spec.intra_bandwidth, spec.eq6)
                     for c in trace.configs])


def asrpt_sim_scenario(*, servers: int = 32, gpus_per_server: int = 8, num_jobs: int = 2_000,
                       trace_jobs: int = 20_000, inter_gbps: float = 10.0, intra_gbps: float = 2400.0,
                       load: float = DEFAULT_LOAD, single_gpu_share: float | None = None,
                       predictor: str = "rf", scope: str = "user", eq6: str = "reconstructed",
                       trace_seed: int = 0, name: str = "asrpt-sim", description: str | None = None,
                       unseen: str = DEFAULT_UNSEEN, equal_load: bool = False,
                       tie_break: str = "connected") -> Scenario:
    """Luo §V-B's simulation (defaults scaled; ``servers=250, num_jobs=150_000, trace_jobs=750_000`` is the paper's).

    ``intra_gbps = 2400`` is 300 GB/s (V100 NVLink). The job set depends on neither ``inter_gbps`` nor
    ``eq6`` (iterations come from the reference 10 Gb/s cluster under the reconstructed eq. (6)), so
    a bandwidth sweep or the eq. (6) reading replays one job set; ``eq6`` selects the rate model's
    reading (and so the policies' α estimates). ``equal_load=True`` computes the offered load at this
    cluster's NIC bandwidth instead (same jobs, arrivals stretched: Fig. 8 at equal offered load);
    ``unseen`` is the unseen-job prediction rule (:mod:`ddl_gym.baselines.a_srpt.prediction`);
    ``tie_break`` Heavy-Edge's HE9 tie-break (:mod:`ddl_gym.sim.perf.pipeline_mapping`).
    """
    overrides = {} if single_gpu_share is None else {"single_gpu_share": single_gpu_share}
    spec = RecurringSpec(num_jobs=trace_jobs, seed=trace_seed, gpus_per_server=gpus_per_server,
                         max_gpus=min(64, servers * gpus_per_server // 2), **overrides)  # type: ignore[arg-type]
    cluster = ClusterSpec.homogeneous(servers, gpus_per_server, inter_bandwidth=inter_gbps * GBPS,
                                      intra_bandwidth=intra_gbps * GBPS)
    at_nic = inter_gbps * GBPS if equal_load and inter_gbps * GBPS != spec.inter_bandwidth else None
    source = RecurringWindowSource(spec, num_jobs, load, predictor, scope, name, unseen_rule(unseen), at_nic)
    return Scenario(
        name=name, cluster=cluster, workload=source, model=PipelineRateModel(eq6=eq6, tie_break=tie_break),
        description=description or (f"A-SRPT §V-B: {servers}x{gpus_per_server} V100, {inter_gbps:g} Gb/s NICs, "
                                    f"{num_jobs}-job windows of a {trace_jobs}-job recurring trace, load {load:g}, "
                                    f"{predictor} predictions"),
    )


def asrpt_testbed_scenario(*, num_jobs: int = 75, trace_jobs: int = 20_000, load: float = DEFAULT_LOAD,
                           predictor: str = "rf", name: str = "asrpt-testbed", unseen: str = DEFAULT_UNSEEN) -> Scenario:
    """Luo §V-A's testbed stand-in (spec §A3.1): 14 MIG vGPUs (2 × 7), 128 GB/s PCIe everywhere."""
    spec = RecurringSpec(num_jobs=trace_jobs, gpus_per_server=7, inter_bandwidth=128e9, intra_bandwidth=128e9,
                         memory_bytes=TESTBED_MEMORY_BYTES, max_gpus=8, iteration_scale=0.1)
    cluster = ClusterSpec.homogeneous(2, 7, inter_bandwidth=128e9, intra_bandwidth=128e9, gpu_memory_mb=12_000)
    return Scenario(
        name=name, cluster=cluster, workload=RecurringWindowSource(spec, num_jobs, load, predictor, "user", name, unseen_rule(unseen)),
        model=PipelineRateModel(),
        description=f"A-SRPT §V-A testbed stand-in: 2x7 MIG vGPUs at 128 GB/s, {num_jobs}-job windows, iterations x0.1",
    )


ASRPT_SCENARIOS: list[Scenario] = [
    asrpt_sim_scenario(),
    asrpt_sim_scenario(servers=250, num_jobs=150_000, trace_jobs=750_000, name="asrpt-sim-full",
                       description="A-SRPT §V-B at paper scale: 250x8 V100, 10 Gb/s, 150,000-job windows of a "
                                   "750,000-job trace (minutes per episode)"),
    asrpt_testbed_scenario(),
    asrpt_sim_scenario(servers=8, num_jobs=200, trace_jobs=5_000, name="asrpt-small",
                       description="A-SRPT small: 8x8 V100, 10 Gb/s, 200-job windows (fast runs, RL training)"),
    # DDLCluster-ASRPT-v0's world as it was before issue 32 (Gymnasium's rule: a v0 id keeps its dynamics):
    # Heavy-Edge's old HE9 tie-break (lowest vertex) and the paper's unseen-job prediction 0.
    asrpt_sim_scenario(servers=8, num_jobs=200, trace_jobs=5_000, name="asrpt-small-v0", unseen="zero",
                       tie_break="lowest",
                       description="asrpt-small as DDLCluster-ASRPT-v0 keeps it: Heavy-Edge ties to the lowest "
                                   "vertex, unseen jobs predicted 0 (the defaults before issue 32)"),
]
