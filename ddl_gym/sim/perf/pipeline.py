"""Per-iteration time of asynchronous-pipeline (mixed-parallel) jobs: A-SRPT (Luo et al.) §III-B.

A pipeline job ``i`` is a chain of ``S`` stages; stage ``s`` has ``k_s`` data-parallel replicas, one
GPU each, so the job needs ``g_i = Σ_s k_s`` GPUs (a rigid gang). Its placement is the count matrix
``x^m_s`` (replicas of stage ``s`` on server ``m``). Each replica of stage ``s`` on server ``m``
takes per iteration (all times in seconds, sizes in bytes, bandwidths in bytes/s; ``g`` = GPUs of
the server, ``B_inter`` its NIC, ``B_intra`` its NVLink/PCIe)::

    (4) comp^m_s = p^f_s + p^b_s                                          (if x^m_s > 0)
    (5) comm^m_s = g/B_inter · [2d^in_s (k_{s-1} − x^m_{s-1})/k_{s-1} + 2d^out_s (k_{s+1} − x^m_{s+1})/k_{s+1}]
                 + 1/B_intra · [2d^in_s x^m_{s-1}/k_{s-1} + 2d^out_s x^m_{s+1}/k_{s+1}]
    (6) AllReduce^m_s = 2(k_s − 1)h_s / (k_s · (x^m_s/g) · B_inter)        if 0 < x^m_s < k_s
                      = 2(k_s − 1)h_s / (k_s · B_intra)                    if x^m_s = k_s
                      = 0                                                  if k_s = 1
    (7) α_i = max over servers m and stages s with x^m_s > 0 of  comp + comm + AllReduce

Eq. (5)'s first term is written in the paper as ``[...]·x^m_s / ((x^m_s/g)·B_inter)``: each replica
gets the NIC share ``B_inter/g`` that its GPU reserves (Luo §III-A), so ``x^m_s`` cancels. For the
first stage every ``d^in`` term is dropped, for the last every ``d^out`` term ("calculated
similarly"). The model is **contention-free**: bandwidth is partitioned by GPU count, so a job's
rate depends only on its own placement and is fixed at start.

**Eq. (6) is garbled in the paper text** (``2(k−1)h/x^m`` and ``2(k−1)h/y``). The default
``eq6="reconstructed"`` is the spec's reconstruction above (``shared/specs/asrpt-smd-aonline.md``
§A1.3 / A5 #2): per-replica volume ``2(k−1)h/k`` (NCCL, [31]) over the stage's reserved NIC share
``x^m_s/g``; it keeps the visible ``x^m`` and matches the α_max definition. The alternative reading
``eq6="per_replica"`` sends that volume over one replica's share ``B_inter/g`` whatever ``x^m_s``
is. The two agree when ``x^m_s = 1`` (so α_max is the same under both).

**α_max and α̃_min** (Luo §III-B, §IV-B). ``α_max`` is (7) with the job on ``g_i`` servers, one
replica on each, every server of the cluster's largest GPU count ``g``. ``α̃_min`` is (7) on the
Heavy-Edge mapping (:mod:`ddl_gym.sim.perf.pipeline_mapping`) of the job onto ``⌈g_i/g⌉`` empty servers, the
first ``⌈g_i/g⌉ − 1`` giving ``g`` GPUs and the last the rest. Both depend only on the job's
configuration and the cluster, so they are computed once per configuration and cached.

**Decision (plain GPU ids).** A pipeline job started with plain GPU ids (no stage labels, e.g. by a
classic placement rule or the env's ``pack``/``spread`` rules) gets its stage mapping from Heavy-Edge
on the servers of those ids (servers ordered by GPUs taken, descending; HE's random fallback drawn
from a generator seeded with 0), so its rate is a function of the GPUs it got. Policies that want
another mapping pass an :meth:`~ddl_gym.sim.alloc.Allocation.pipeline`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ddl_gym.sim.alloc import Allocation
from ddl_gym.sim.model import ARCH_PIPELINE, ClusterSpec, ConfigError, Workload
from ddl_gym.sim.perf import require_architectures

#: Readings of the garbled eq. (6) (see the module docstring).
EQ6_READINGS: tuple[str, ...] = ("reconstructed", "per_replica")
#: All-reduce algorithms of the Heavy-Edge job graph (eq. (6)'s volume is the same for both).
ALLREDUCE_KINDS: tuple[str, ...] = ("rar", "tar")


@dataclass(frozen=True)
class StageProfile:
    """One pipeline stage as profiled for its configuration (Luo §III-A).

    Attributes:
        fwd_s: ``p^f_s``, forward time of one mini-batch on one replica, seconds.
        bwd_s: ``p^b_s``, backward time of one mini-batch on one replica, seconds.
        act_in_bytes: ``d^in_s``, activations received per iteration per replica (ignored for the
            first stage).
        act_out_bytes: ``d^out_s``, activations sent per iteration per replica (ignored for the last
            stage).
        param_bytes: ``h_s``, size of the stage's trainable parameters (all-reduced over replicas).
        replicas: ``k_s``, data-parallel replicas = GPUs of the stage.
    """

    fwd_s: float
    bwd_s: float
    act_in_bytes: float
    act_out_bytes: float
    param_bytes: float
    replicas: int

    def __post_init__(self) -> None:
        for name in ("fwd_s", "bwd_s", "act_in_bytes", "act_out_bytes", "param_bytes"):
            value = getattr(self, name)
            if not isinstance(value, (int, float, np.floating, np.integer)) or not math.isfinite(value) or value < 0:
                raise ConfigError(f"pipeline stage: {name} must be a finite number >= 0, got {value!r}")
            object.__setattr__(self, name, float(value))
        if int(self.replicas) != self.replicas or self.replicas < 1:
            raise ConfigError(f"pipeline stage: replicas must be an integer >= 1, got {self.replicas!r}")
        object.__setattr__(self, "replicas", int(self.replicas))

    @property
    def compute_s(self) -> float:
        """``p^f + p^b``: eq. (4) on a server hosting the stage."""
        return self.fwd_s + self.bwd_s


@dataclass(frozen=True)
class PipelineConfig:
    """A pipeline job's distributed training configuration: its stages, in pipeline order.

    Attributes:
        stages: one :class:`StageProfile` per stage.
        allreduce: ``"rar"`` (ring) or ``"tar"`` (double binary tree): shapes the Heavy-Edge graph
            only (eq. (6)'s volume is the same for both, Luo §III-B).
        name: label, e.g. ``"gpt-13b/4x2"`` (part of the identity: equal configs of different
            models stay distinct profiles).

    The inter-stage volumes must agree: ``k_{s-1}·d^out_{s-1} = k_s·d^in_s`` (Luo §III-B: the
    per-pair volume is ``2d^out_{s-1}/k_s = 2d^in_s/k_{s-1}``).
    """

    stages: tuple[StageProfile, ...]
    allreduce: str = "rar"
    name: str = ""

    def __post_init__(self) -> None:
        stages = tuple(self.stages)
        object.__setattr__(self, "stages", stages)
        if not stages:
            raise ConfigError(f"pipeline config {self.name!r}: needs at least one stage")
        if any(not isinstance(s, StageProfile) for s in stages):
            raise ConfigError(f"pipeline config {self.name!r}: stages must be StageProfile objects")
        if self.allreduce not in ALLREDUCE_KINDS:
            raise ConfigError(f"pipeline config {self.name!r}: allreduce must be one of {ALLREDUCE_KINDS}, "
                              f"got {self.allreduce!r}")
        for s in range(1, len(stages)):
            sent = stages[s - 1].replicas * stages[s - 1].act_out_bytes
            received = stages[s].replicas * stages[s].act_in_bytes
            if not math.isclose(sent, received, rel_tol=1e-6, abs_tol=1e-6):
                raise ConfigError(
                    f"pipeline config {self.name!r}: stage {s} act_out_bytes x replicas ({sent:g}) must equal "
                    f"stage {s + 1} act_in_bytes x replicas ({received:g}) (same activations, Luo §III-B)")

    def __hash__(self) -> int:
        # Configurations key the Heavy-Edge, graph and constant caches on every placement; the
        # generated hash walks every stage's six fields (~20 µs for 32 stages), so it is kept.
        h = self.__dict__.get("_hash")
        if h is None:
            h = hash((self.stages, self.allreduce, self.name))
            object.__setattr__(self, "_hash", h)
        return h

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("_hash", None)  # string hashes differ between processes: recompute after unpickling
        return state

    @property
    def num_stages(self) -> int:
        return len(self.stages)

    @property
    def gpus(self) -> int:
        """``g_i = Σ_s k_s``."""
        return sum(s.replicas for s in self.stages)

    @property
    def replicas(self) -> tuple[int, ...]:
        return tuple(s.replicas for s in self.stages)

    def compute_gpu_seconds(self) -> float:
        """GPU-seconds of pure computation per iteration: ``Σ_s k_s (p^f_s + p^b_s)`` (eq. (4) per replica)."""
        return sum(s.replicas * s.compute_s for s in self.stages)

    @classmethod
    def single_gpu(cls, fwd_s: float, bwd_s: float, param_bytes: float = 0.0, name: str = "") -> PipelineConfig:
        """The one-stage, one-replica configuration of a single-GPU job (Luo §III-A's special case)."""
        return cls((StageProfile(fwd_s, bwd_s, 0.0, 0.0, param_bytes, 1),), name=name)


class _Constants:
    """Per-configuration constants of eqs. (4)–(6), as Python floats (the hot path is scalar)."""

    __slots__ = ("S", "k", "comp", "din2", "dout2", "ar_bytes")

    def __init__(self, config: PipelineConfig) -> None:
        st = config.stages
        self.S = len(st)
        self.k = [s.replicas for s in st]
        self.comp = [s.compute_s for s in st]
        self.din2 = [0.0] + [2.0 * s.act_in_bytes for s in st[1:]]  # first stage: no d^in term
        self.dout2 = [2.0 * s.act_out_bytes for s in st[:-1]] + [0.0]  # last stage: no d^out term
        self.ar_bytes = [2.0 * (s.replicas - 1) * s.param_bytes / s.replicas for s in st]  # per replica


_CONSTANTS: dict[PipelineConfig, _Constants] = {}


def _constants(config: PipelineConfig) -> _Constants:
    c = _CONSTANTS.get(config)
    if c is None:
        c = _CONSTANTS[config] = _Constants(config)
    return c


def stage_times(config: PipelineConfig, counts: Sequence[Sequence[int]], gpus_per_server: Sequence[int] | int,
                inter_bandwidth: float, intra_bandwidth: float, eq6: str = "reconstructed") -> np.ndarray:
    """``β^m_s`` (eqs. (4)–(7)) for every server row of ``counts`` and every stage; 0 where ``x^m_s = 0``.

    Args:
        config: the job's configuration.
        counts: ``x^m_s``, one row per server the job uses, one column per stage.
        gpus_per_server: ``g`` of each of those servers (or one value for all).
        inter_bandwidth: ``B_inter``, bytes/s.
        intra_bandwidth: ``B_intra``, bytes/s.
        eq6: ``"reconstructed"`` (default) or ``"per_replica"`` (see the module docstring).

    Returns:
        Array of shape ``(servers, stages)``, seconds.
    """
    if eq6 not in EQ6_READINGS:
        raise ConfigError(f"eq6 must be one of {EQ6_READINGS}, got {eq6!r}")
    c = _constants(config)
    rows = [list(map(int, r)) for r in counts]
    g_list = [int(gpus_per_server)] * len(rows) if isinstance(gpus_per_server, (int, np.integer)) else list(gpus_per_server)
    if len(g_list) != len(rows):
        raise ConfigError(f"stage_times: {len(rows)} count rows but {len(g_list)} server sizes")
    out = np.zeros((len(rows), c.S))
    for m, (x, g) in enumerate(zip(rows, g_list)):
        if len(x) != c.S:
            raise ConfigError(f"stage_times: a count row has {len(x)} entries, the job has {c.S} stages")
        for s in range(c.S):
            if x[s] > 0:
                out[m, s] = _beta(c, x, s, g, inter_bandwidth, intra_bandwidth, eq6)
    per_stage = np.sum(np.asarray(rows, dtype=np.int64), axis=0) if rows else np.zeros(c.S, dtype=np.int64)
    if rows and not np.array_equal(per_stage, c.k):
        raise ConfigError(f"stage_times: placement has {per_stage.tolist()} replicas per stage, config has {c.k} (eq. 2)")
    return out


def _beta(c: _Constants, x: Sequence[int], s: int, g: int, b_inter: float, b_intra: float, eq6: str) -> float:
    """``β^m_s`` for one server with count row ``x`` (``x[s] > 0``)."""
    k = c.k
    xs = x[s]
    inter = 0.0
    intra = 0.0
    if s > 0:
        share = x[s - 1] / k[s - 1]
        inter += c.din2[s] * (1.0 - share)
        intra += c.din2[s] * share
    if s < c.S - 1:
        share = x[s + 1] / k[s + 1]
        inter += c.dout2[s] * (1.0 - share)
        intra += c.dout2[s] * share
    beta = c.comp[s] + inter * g / b_inter + intra / b_intra  # (4) + (5)
    ks = k[s]
    if ks > 1:  # (6)
        if xs == ks:
            beta += c.ar_bytes[s] / b_intra
        elif eq6 == "reconstructed":
            beta += c.ar_bytes[s] * g / (xs * b_inter)
        else:
            beta += c.ar_bytes[s] * g / b_inter
    return beta


def iteration_time(config: PipelineConfig, counts: Sequence[Sequence[int]], gpus_per_server: Sequence[int] | int,
                   inter_bandwidth: float, intra_bandwidth: float, eq6: str = "reconstructed") -> float:
    """``α_i`` (eq. (7)): the largest ``β^m_s`` over the job's servers and stages, seconds."""
    return float(stage_times(config, counts, gpus_per_server, inter_bandwidth, intra_bandwidth, eq6).max())


def _alpha_fast(c: _Constants, rows: Sequence[Sequence[int]], g_list: Sequence[int], b_inter: float, b_intra: float,
                eq6: str) -> float:
    """Eq. (7) without validation (rows already checked by the caller)."""
    best = 0.0
    for x, g in zip(rows, g_list):
        for s in range(c.S):
            if x[s] > 0:
                beta = _beta(c, x, s, g, b_inter, b_intra, eq6)
                if beta > best:
                    best = beta
    return best


def alpha_max(config: PipelineConfig, gpus_per_server: int, inter_bandwidth: float, intra_bandwidth: float,
              eq6: str = "reconstructed") -> float:
    """``α_max`` (Luo §III-B): (7) with ``g_i`` servers each holding one replica (NIC share ``B_inter/g``)."""
    rows = []
    for s, stage in enumerate(config.stages):
        for _ in range(stage.replicas):
            row = [0] * config.num_stages
            row[s] = 1
            rows.append(row)
    return _alpha_fast(_constants(config), rows, [gpus_per_server] * len(rows), inter_bandwidth, intra_bandwidth, eq6)


def fewest_servers(gpus: int, gpus_per_server: int) -> list[int]:
    """GPUs per server of the most consolidated placement: ``⌈g_i/g⌉`` servers, all full but the last."""
    n = -(-gpus // gpus_per_server)
    return [gpus_per_server] * (n - 1) + [gpus - (n - 1) * gpus_per_server]


def alpha_min_tilde(config: PipelineConfig, gpus_per_server: int, inter_bandwidth: float, intra_bandwidth: float,
                    eq6: str = "reconstructed", tie_break: str = "connected") -> float:
    """``α̃_min`` (Luo §IV-B): (7) on Heavy-Edge's mapping onto ``⌈g_i/g⌉`` empty servers.

    Heavy-Edge's random fallback (only reached when the remaining replicas are not connected) draws
    from a generator seeded with 0, so the value is a constant of the configuration.
    """
    from ddl_gym.sim.perf.pipeline_mapping import heavy_edge

    sizes = fewest_servers(config.gpus, gpus_per_server)
    mapping = heavy_edge(config, sizes, np.random.default_rng(0), tie_break=tie_break)
    return _alpha_fast(_constants(config), mapping.counts, sizes, inter_bandwidth, intra_bandwidth, eq6)


@dataclass(frozen=True)
class PipelineRateModel:
    """Contention-free rate model of pipeline jobs (Luo §III-B, eqs. (4)–(7)).

    Attributes:
        eq6: reading of the garbled eq. (6): ``"reconstructed"`` (default) or ``"per_replica"``.
        tie_break: Heavy-Edge's HE9 tie-break (:data:`ddl_gym.sim.perf.pipeline_mapping.TIE_BREAKS`) for
            the mappings this model and the placements on its simulator make.
        name: registry name.
    """

    eq6: str = "reconstructed"
    name: str = "pipeline"
    tie_break: str = "connected"

    def __post_init__(self) -> None:
        from ddl_gym.sim.perf.pipeline_mapping import TIE_BREAKS

        if self.eq6 not in EQ6_READINGS:
            raise ConfigError(f"pipeline model: eq6 must be one of {EQ6_READINGS}, got {self.eq6!r}")
        if self.tie_break not in TIE_BREAKS:
            raise ConfigError(f"pipeline model: tie_break must be one of {TIE_BREAKS}, got {self.tie_break!r}")

    def bind(self, cluster: ClusterSpec, workload: Workload) -> BoundPipelineModel:
        require_architectures(self.name, workload, ("pipeline",))
        return BoundPipelineModel(self, cluster, workload)


class BoundPipelineModel:
    """:class:`PipelineRateModel` bound to a cluster and workload; also the planning oracle of the
    A-SRPT policies (``config``, ``alpha_max``, ``alpha_min_tilde``, ``alpha``)."""

    contention_free = True

    def __init__(self, model: PipelineRateModel, cluster: ClusterSpec, workload: Workload) -> None:
        self.model = model
        self.eq6 = model.eq6
        self.tie_break = model.tie_break
        self.cluster = cluster
        self.b_inter = cluster.inter_bandwidth
        self.b_intra = cluster.intra_bandwidth
        self.g = cluster.max_server_gpus
        self._server_gpus = list(cluster.gpus_per_server)
        self._gpu_server = cluster.gpu_server()
        self._profile_of = workload.profile_index.tolist()
        self._configs: tuple[PipelineConfig, ...] = tuple(workload.profiles)
        for j in np.flatnonzero(workload.arch == ARCH_PIPELINE).tolist():
            prof = workload.profiles[int(workload.profile_index[j])]
            if not isinstance(prof, PipelineConfig):
                raise ConfigError(f"workload {workload.name!r}: pipeline job {int(workload.job_id[j])} has a "
                                  f"{type(prof).__name__} profile, expected a PipelineConfig")
            if prof.gpus != int(workload.gpus[j]):
                raise ConfigError(f"workload {workload.name!r}: pipeline job {int(workload.job_id[j])} needs "
                                  f"{int(workload.gpus[j])} GPUs but its configuration has {prof.gpus} replicas")
        self._alpha_min: dict[int, float] = {}
        self._alpha_max: dict[int, float] = {}
        self._cache: dict[tuple, float] = {}
        self._gpu_server_list: list[int] = self._gpu_server.tolist()
        self._busy: dict[int, float] = {}  # profile -> compute GPU-seconds per iteration
        # The last allocation rated: A-SRPT estimates α on a mapping and then starts the job on that
        # very (immutable) allocation, so the engine's rating at start reuses the estimate.
        self._last_rated: tuple[Allocation | None, int, float] = (None, -1, 0.0)

    # ---------------------------------------------------------------- planning quantities
    def config(self, job: int) -> PipelineConfig:
        return self._configs[self._profile_of[job]]

    def alpha_min_tilde(self, job: int) -> float:
        """``α̃_min`` of ``job`` (cached per configuration)."""
        p = self._profile_of[job]
        value = self._alpha_min.get(p)
        if value is None:
            value = self._alpha_min[p] = alpha_min_tilde(self._configs[p], self.g, self.b_inter, self.b_intra, self.eq6,
                                                         self.tie_break)
        return value

    def alpha_max(self, job: int) -> float:
        """``α_max`` of ``job`` (cached per configuration)."""
        p = self._profile_of[job]
        value = self._alpha_max.get(p)
        if value is None:
            value = self._alpha_max[p] = alpha_max(self._configs[p], self.g, self.b_inter, self.b_intra, self.eq6)
        return value

    def alpha(self, job: int, counts_by_server: dict[int, Sequence[int]] | Sequence[tuple[int, Sequence[int]]]) -> float:
        """``α_i`` (eq. (7)) of ``job`` for the count rows ``{server: x^m}`` (cached per pattern)."""
        items = counts_by_server.items() if isinstance(counts_by_server, dict) else counts_by_server
        key_rows = tuple(sorted((self._server_gpus[m], tuple(int(v) for v in x)) for m, x in items))
        return self._alpha_of_rows(job, self._profile_of[job], key_rows)

    def _alpha_of_rows(self, job: int, p: int, key_rows: tuple[tuple[int, tuple[int, ...]], ...]) -> float:
        """:meth:`alpha` on canonical rows: ``(server GPUs, x^m)`` pairs, sorted."""
        key = (p, key_rows)
        value = self._cache.get(key)
        if value is None:
            config = self._configs[p]
            per_stage = [sum(r[1][s] for r in key_rows) for s in range(config.num_stages)]
            if per_stage != list(config.replicas):
                raise ConfigError(f"job {job}: mapping has {per_stage} replicas per stage, its configuration "
                                  f"has {list(config.replicas)} (eq. 2)")
            value = _alpha_fast(_constants(config), [r[1] for r in key_rows], [r[0] for r in key_rows],
                                self.b_inter, self.b_intra, self.eq6)
            self._cache[key] = value
        return value

    # ---------------------------------------------------------------- the engine's interface
    def allocation_time(self, job: int, alloc: Allocation) -> float:
        last = self._last_rated
        if last[0] is alloc and last[1] == job:
            return last[2]
        p = self._profile_of[job]
        config = self._configs[p]
        stages = config.stages
        if len(stages) == 1 and stages[0].replicas == 1:  # g_i = 1
            return stages[0].compute_s
        stage_of = alloc.stage_of
        if stage_of is None:
            return self.alpha(job, self._heavy_edge_rows(job, alloc))
        if alloc.gpu_ids is None:
            raise ConfigError("allocation has no pipeline stage mapping (stage_of)")
        # x^m_s from the GPU ids and stage labels (Allocation.stage_counts, on plain Python ints)
        num_stages = len(stages)
        labels = stage_of.tolist()
        if labels and max(labels) >= num_stages:
            raise ConfigError(f"allocation maps a GPU to stage {max(labels)} of a {num_stages}-stage job")
        gpu_server = self._gpu_server_list
        rows: dict[int, list[int]] = {}
        for gpu, stage in zip(alloc.gpu_ids.tolist(), labels):
            server = gpu_server[gpu]
            row = rows.get(server)
            if row is None:
                row = rows[server] = [0] * num_stages
            row[stage] += 1
        server_gpus = self._server_gpus
        value = self._alpha_of_rows(job, p, tuple(sorted([(server_gpus[m], tuple(x)) for m, x in rows.items()])))
        if not (stage_of.flags.writeable or alloc.gpu_ids.flags.writeable):
            self._last_rated = (alloc, job, value)
        return value

    def nominal_iteration_time(self, job: int) -> float:
        return self.alpha_min_tilde(job)

    def busy_gpu_seconds_per_iteration(self, job: int, alloc: Any) -> float:
        p = self._profile_of[job]
        value = self._busy.get(p)
        if value is None:
            value = self._busy[p] = self._configs[p].compute_gpu_seconds()
        return value

    def _heavy_edge_rows(self, job: int, alloc: Allocation) -> list[tuple[int, list[int]]]:
        """Decision (module docstring): plain GPU ids are mapped with Heavy-Edge on their servers."""
        from ddl_gym.sim.perf.pipeline_mapping import heavy_edge

        servers, counts = np.unique(self._gpu_server[alloc.gpu_ids], return_counts=True)
        order = sorted(range(servers.size), key=lambda i: (-int(counts[i]), int(servers[i])))
        sizes = [int(counts[i]) for i in order]
        mapping = heavy_edge(self.config(job), sizes, np.random.default_rng(0), tie_break=self.tie_break)
        return [(int(servers[i]), row) for i, row in zip(order, mapping.counts)]


def pipeline_oracle(sim: Any, policy_name: str) -> BoundPipelineModel:
    """The bound pipeline model of ``sim`` (the planning oracle of the A-SRPT family).

    Raises:
        ConfigError: naming the policy, the workload and its architectures / the rate model, when
            the simulator does not run pipeline jobs under :class:`PipelineRateModel`.
    """
    bound = getattr(sim, "bound", None)
    workload = sim.workload
    if not isinstance(bound, BoundPipelineModel) or not np.any(workload.arch == ARCH_PIPELINE):
        kinds = ", ".join(sorted(workload.architectures)) or "no"
        raise ConfigError(
            f"policy {policy_name!r} schedules pipeline (mixed-parallel) jobs, but workload {workload.name!r} has "
            f"{kinds} jobs under rate model {getattr(sim.model, 'name', type(sim.model).__name__)!r}; use an A-SRPT "
            "scenario (asrpt-sim, asrpt-testbed, asrpt-small) or a pipeline workload with model 'pipeline'")
    return bound


def require_pipeline_scenario(policy_name: str, scenario: Any) -> None:
    """Raise ConfigError naming the policy and the scenario unless the scenario runs pipeline jobs."""
    model = getattr(scenario, "model", None)
    if not isinstance(model, PipelineRateModel):
        raise ConfigError(
            f"policy {policy_name!r} schedules pipeline (mixed-parallel) jobs, but scenario "
            f"{getattr(scenario, 'name', scenario)!r} uses rate model {getattr(model, 'name', type(model).__name__)!r} "
            "without pipeline jobs; use an A-SRPT scenario (asrpt-sim, asrpt-testbed, asrpt-small) or a pipeline "
            "workload with model 'pipeline'")
