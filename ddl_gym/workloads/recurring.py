"""Recurring-group job traces with pipeline configurations (A-SRPT's workload, spec §A3.4 #1).

The paper drives A-SRPT with the Alibaba PAI v2020 job tables (user id, group id of recurring jobs,
GPU demand, duration, submission time); those tables are not obtainable here. This generator
synthesises a trace with the properties the paper relies on, calibrated to the targets it states:

* **Groups and users.** Jobs belong to groups of recurring submissions (the PAI group id: a hash of
  user, dataset and command line). Group sizes follow a discrete power law ``P(s) ∝ s^−a`` on
  ``1..max_group_size``; the default ``a`` puts ≈65 % of jobs in groups with ≥ 5 submissions ("nearly
  65 % submitted at least five times"). Groups belong to users drawn from a Zipf law over
  ``num_users`` users. A group's submissions spread over a random stretch of the trace, so some groups
  first appear late (unseen by a predictor trained on the early jobs).
* **GPU demand** per group: 1 GPU with probability ``single_gpu_share`` (default 0.72: "over 70 %
  single-GPU jobs"), else drawn from Philly's multi-GPU histogram (:data:`PHILLY_MULTI_GPU`, the
  RFold table's sizes rounded up to powers of two, ≤ ``max_gpus``).
* **Model and configuration** (Luo §V-A-1-b): a single-GPU group gets a random model of the single-GPU
  pool with its 1-GPU configuration; a multi-GPU group a random Table I model that the planner can run
  on that many GPUs and one of its configurations (:mod:`ddl_gym.sim.zoo_pipeline`).
* **Durations and iterations.** A group's modal duration is drawn from Philly's job durations
  (:data:`PHILLY_DURATION_QUANTILES`, log-linear between quantiles, capped at ``max_duration_s``:
  otherwise a single multi-week job sets the time scale of a whole window). Its modal iteration count
  is ``n_g = duration / α̃_min`` (the paper's rule) with ``α̃_min`` on a reference cluster (so one job
  set serves every bandwidth of Fig. 8). A share ``deterministic_share`` of groups repeats ``n_g``
  exactly (fixed-epoch recurring jobs); in the others each job repeats it with probability
  ``repeat_prob`` or draws ``n_g · LogNormal(0, sigma)`` (every job's ``n·α̃_min`` capped at
  ``max_duration_s`` too).

Calibration (defaults; measured with the 100-tree forest on the first 80 % of 10,000 / 30,000-job
traces): 77 % / 82 % single-GPU jobs, 66 % / 67 % of jobs in groups with ≥ 5 submissions, 21 % / 22 %
of test jobs unseen, the forest exact on 53 % / 49 % of test jobs (paper: "approximately 60 %"), mean
absolute errors mean : median : RF = 557 : 453 : 369 / 645 : 552 : 369 (paper: 593 : 563 : 369, user
scope, :mod:`ddl_gym.baselines.a_srpt.prediction`). The forest stays below 60 % because its bootstrap mixes
the smallest groups with neighbouring ids (a per-group median is exact on 67 %); reaching 60 % would
need fewer unseen jobs than "65 % in groups of ≥ 5" leaves. ``tests/workloads/test_asrpt_workload.py`` checks
these targets.
* **Arrivals**: Philly's (RFold table) inter-arrival gaps, in trace order, cycled when the trace is
  longer than the table, each capped at the table's 99.9th percentile (4,841 s); a window's gaps are
  then rescaled to a target offered load (:func:`window_arrivals`).

Fig. 7's single-GPU share sweep switches whole groups (spec A5 #11): every random draw of a group is
made once, so raising ``single_gpu_share`` turns distributed groups into single-GPU ones and leaves
the others unchanged.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field, replace

import numpy as np

from ddl_gym.sim.model import ConfigError
from ddl_gym.sim.perf.pipeline import PipelineConfig, alpha_min_tilde
from ddl_gym.sim.zoo_pipeline import SINGLE_GPU_POOL, V100_MEMORY_BYTES, plan_configs, table_i_models

#: Philly RFold job sizes > 1 rounded up to a power of two (6, 7 -> 8; 12 -> 16; 20-28 -> 32; 48 -> 64;
#: one 128-GPU job dropped): counts from ``philly_rfold_jobs.csv``.
PHILLY_MULTI_GPU: tuple[tuple[int, int], ...] = ((2, 1951), (4, 4700), (8, 4523), (16, 606), (32, 136), (64, 7))
#: Percentiles (0, 1, 2, 5, 10, 20, ..., 90, 95, 98, 99, 100) of Philly RFold job durations >= 1 s, seconds.
PHILLY_DURATION_QUANTILES: tuple[tuple[float, float], ...] = (
    (0, 1.0), (1, 14.0), (2, 20.0), (5, 40.0), (10, 58.0), (20, 83.0), (30, 332.0), (40, 804.8), (50, 1419.0),
    (60, 2146.0), (70, 3465.0), (80, 8469.6), (90, 32372.8), (95, 120816.4), (98, 426943.3), (99, 834880.6),
    (100, 5196151.0),
)
PHILLY_GAP_CAP_S = 4841.2  # 99.9th percentile of RFold inter-arrival gaps


@dataclass(frozen=True)
class RecurringSpec:
    """Parameters of a recurring-group trace (module docstring); equal specs give equal traces.

    Reference cluster (``gpus_per_server``, ``inter_bandwidth``, ``intra_bandwidth``, ``memory_bytes``,
    ``eq6``) is where ``α̃_min`` turns durations into iterations and where the planner checks memory.
    """

    num_jobs: int = 20_000
    seed: int = 0
    num_users: int = 4_000
    user_zipf: float = 0.6
    group_size_exponent: float = 2.0
    max_group_size: int = 300
    group_spread: float = 3.0  # a group's submissions cover up to this multiple of the trace's length
    single_gpu_share: float = 0.78  # per group; 0.70-0.77 of jobs
    max_gpus: int = 64
    deterministic_share: float = 0.97
    repeat_prob: float = 0.5
    sigma: float = 0.5
    max_duration_s: float = 172_800.0
    iteration_scale: float = 1.0  # testbed: 0.1 ("scaled down to 10%")
    gpus_per_server: int = 8
    inter_bandwidth: float = 1.25e9
    intra_bandwidth: float = 300e9
    memory_bytes: float = V100_MEMORY_BYTES
    eq6: str = "reconstructed"

    def __post_init__(self) -> None:
        from ddl_gym.bounds import check_float, check_int

        for name, high in (("num_jobs", 10**7), ("num_users", 10**7), ("max_group_size", 10**6), ("max_gpus", 4096),
                           ("gpus_per_server", 1024)):
            check_int(getattr(self, name), 1, high, f"recurring trace: {name}")
        for name, low, high, open_low in (("user_zipf", 0.0, 100.0, False), ("group_size_exponent", 0.0, 100.0, True),
                                          ("group_spread", 0.0, 1e6, False), ("sigma", 0.0, 100.0, False),
                                          ("max_duration_s", 0.0, 1e9, True), ("iteration_scale", 0.0, 1e6, True),
                                          ("inter_bandwidth", 0.0, 1e15, True), ("intra_bandwidth", 0.0, 1e15, True),
                                          ("memory_bytes", 0.0, 1e15, True)):
            check_float(getattr(self, name), low, high, f"recurring trace: {name}", low_open=open_low)
        if self.num_jobs < 1 or self.num_users < 1 or self.max_group_size < 1:
            raise ConfigError("recurring trace: num_jobs, num_users and max_group_size must be >= 1")
        for name in ("single_gpu_share", "deterministic_share", "repeat_prob"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ConfigError(f"recurring trace: {name} must be in [0, 1], got {getattr(self, name)}")
        if self.max_gpus < 1 or self.sigma < 0 or self.max_duration_s <= 0 or self.iteration_scale <= 0:
            raise ConfigError("recurring trace: need max_gpus >= 1, sigma >= 0, max_duration_s > 0, iteration_scale > 0")


@dataclass(frozen=True)
class RecurringTrace:
    """A generated trace, jobs in submission order (arrays are read-only).

    Attributes:
        spec: the parameters.
        group, user, gpus, iterations: per job.
        config_index: per job, index into ``configs``.
        configs: the distinct configurations; ``models`` their model names.
        alpha_min: ``α̃_min`` of each configuration on the reference cluster (seconds).
        gaps: seconds from the previous submission (Philly gaps, capped; ``gaps[0] = 0``).
        duration_s: the group's modal duration of each job (seconds).
    """

    spec: RecurringSpec
    group: np.ndarray
    user: np.ndarray
    gpus: np.ndarray
    iterations: np.ndarray
    config_index: np.ndarray
    configs: tuple[PipelineConfig, ...]
    models: tuple[str, ...]
    alpha_min: np.ndarray
    gaps: np.ndarray
    duration_s: np.ndarray = field(repr=False)

    @property
    def num_jobs(self) -> int:
        return int(self.group.size)

    def stats(self) -> dict[str, float]:
        """Calibration statistics: single-GPU share and share of jobs in groups with ≥ 5 submissions."""
        _, inverse, counts = np.unique(self.group, return_inverse=True, return_counts=True)
        return {"jobs": float(self.num_jobs), "single_gpu_share": float(np.mean(self.gpus == 1)),
                "share_in_groups_ge5": float(np.mean(counts[inverse] >= 5)), "groups": float(counts.size),
                "users": float(np.unique(self.user).size)}


def _power_law_sizes(rng: np.random.Generator, spec: RecurringSpec, total: int) -> np.ndarray:
    support = np.arange(1, spec.max_group_size + 1, dtype=np.float64)
    pmf = support ** (-spec.group_size_exponent)
    pmf /= pmf.sum()
    mean = float((support * pmf).sum())
    sizes: list[np.ndarray] = []
    have = 0
    while have < total:
        draw = rng.choice(support.size, size=max(16, int(1.2 * (total - have) / mean)), p=pmf) + 1
        sizes.append(draw)
        have += int(draw.sum())
    out = np.concatenate(sizes)
    cut = int(np.searchsorted(np.cumsum(out), total))
    out = out[: cut + 1].copy()
    out[-1] -= int(out.sum()) - total  # trim the last group to hit the job count exactly
    return out.astype(np.int64)


def _durations(u: np.ndarray, cap: float) -> np.ndarray:
    q = np.array([p for p, _ in PHILLY_DURATION_QUANTILES]) / 100.0
    logv = np.log([v for _, v in PHILLY_DURATION_QUANTILES])
    return np.minimum(np.exp(np.interp(u, q, logv)), cap)


@functools.lru_cache(maxsize=4)
def philly_gaps() -> np.ndarray:
    """Philly RFold inter-arrival gaps (seconds, capped at :data:`PHILLY_GAP_CAP_S`), via :func:`load_philly`."""
    import warnings

    from ddl_gym.workloads.philly import load_philly

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        arrivals = load_philly(table="rfold", rng=0, drop_oversized=False).arrival
    gaps = np.minimum(np.diff(arrivals), PHILLY_GAP_CAP_S)
    gaps.setflags(write=False)
    return gaps


@functools.lru_cache(maxsize=64)
def _multi_gpu_candidates(gpus: int, memory_bytes: float) -> tuple[tuple[str, PipelineConfig], ...]:
    return tuple((name, config) for name in table_i_models() for config in plan_configs(name, gpus, memory_bytes))


@functools.lru_cache(maxsize=8)
def generate_recurring_trace(spec: RecurringSpec) -> RecurringTrace:
    """Generate the trace of ``spec`` (deterministic; cached per process)."""
    rng = np.random.default_rng(spec.seed)
    sizes = _power_law_sizes(rng, spec, spec.num_jobs)
    n_groups = sizes.size
    # Every random draw of a group, made once (Fig. 7 switches whole groups, spec A5 #11).
    ranks = np.arange(1, spec.num_users + 1, dtype=np.float64)
    user_p = ranks ** (-spec.user_zipf)
    user = rng.choice(spec.num_users, size=n_groups, p=user_p / user_p.sum())
    u_single = rng.random(n_groups)
    hist = [(g, c) for g, c in PHILLY_MULTI_GPU if g <= spec.max_gpus]
    if not hist and spec.single_gpu_share < 1.0:
        raise ConfigError(f"recurring trace: no multi-GPU demand <= max_gpus={spec.max_gpus}")
    multi_p = np.array([c for _, c in hist], dtype=np.float64) if hist else np.ones(1)
    multi_g = np.array([g for g, _ in hist] or [1])[rng.choice(multi_p.size, size=n_groups, p=multi_p / multi_p.sum())]
    u_model = rng.random(n_groups)
    u_config = rng.random(n_groups)
    duration = _durations(rng.random(n_groups), spec.max_duration_s)
    deterministic = rng.random(n_groups) < spec.deterministic_share
    start = rng.random(n_groups)
    span = rng.random(n_groups) * spec.group_spread
    group_ids = rng.permutation(np.arange(1, n_groups + 1) * 7919 + rng.integers(0, 7919, n_groups))  # hash-like

    configs: dict[PipelineConfig, int] = {}
    model_of: list[str] = []
    group_config = np.empty(n_groups, dtype=np.int64)
    group_gpus = np.where(u_single < spec.single_gpu_share, 1, multi_g)
    for i in range(n_groups):
        if group_gpus[i] == 1:
            model = SINGLE_GPU_POOL[int(u_model[i] * len(SINGLE_GPU_POOL))]
            config = plan_configs(model, 1, spec.memory_bytes)[0]
        else:
            candidates = _multi_gpu_candidates(int(group_gpus[i]), spec.memory_bytes)
            if not candidates:
                raise ConfigError(f"recurring trace: no Table I model runs on {int(group_gpus[i])} GPUs")
            names = list(dict.fromkeys(n for n, _ in candidates))  # Table I order
            model = names[int(u_model[i] * len(names))]
            options = [c for n, c in candidates if n == model]
            config = options[int(u_config[i] * len(options))]
        if config not in configs:
            configs[config] = len(configs)
            model_of.append(model)
        group_config[i] = configs[config]
    config_list = tuple(configs)
    alpha = np.array([alpha_min_tilde(c, spec.gpus_per_server, spec.inter_bandwidth, spec.intra_bandwidth, spec.eq6)
                      for c in config_list])
    modal = np.maximum(1, np.rint(duration / alpha[group_config] * spec.iteration_scale)).astype(np.int64)

    job_group = np.repeat(np.arange(n_groups), sizes)
    position = start[job_group] + span[job_group] * rng.random(job_group.size)
    noise = np.maximum(1, np.rint(modal[job_group] * np.exp(spec.sigma * rng.standard_normal(job_group.size))))
    repeat = deterministic[job_group] | (rng.random(job_group.size) < spec.repeat_prob)
    cap = np.maximum(1, np.rint(spec.max_duration_s / alpha[group_config] * spec.iteration_scale))[job_group]
    iterations = np.minimum(np.where(repeat, modal[job_group], noise), cap).astype(np.int64)  # duration <= cap
    order = np.argsort(position, kind="stable")
    job_group = job_group[order]
    iterations = iterations[order]
    gaps_table = philly_gaps()
    gaps = np.concatenate(([0.0], np.resize(gaps_table, job_group.size - 1))) if gaps_table.size else np.zeros(job_group.size)

    def frozen(a: np.ndarray) -> np.ndarray:
        a = np.ascontiguousarray(a)
        a.setflags(write=False)
        return a

    return RecurringTrace(
        spec=spec, group=frozen(group_ids[job_group]), user=frozen(user[job_group].astype(np.int64)),
        gpus=frozen(group_gpus[job_group].astype(np.int64)), iterations=frozen(iterations),
        config_index=frozen(group_config[job_group]), configs=config_list, models=tuple(model_of),
        alpha_min=frozen(alpha), gaps=frozen(gaps), duration_s=frozen(duration[job_group]),
    )


def window_arrivals(trace: RecurringTrace, first: int, count: int, *, load: float, num_gpus: int,
                    arrival_scale: float = 1.0) -> np.ndarray:
    """Arrival times (from 0) of jobs ``first .. first+count-1``: their Philly gaps rescaled so that the
    window's offered load ``Σ g_i n_i α̃_min_i / (G · span)`` equals ``load`` (then × ``arrival_scale``).

    ``load <= 0`` keeps the Philly gaps in seconds.
    """
    if count < 1 or first < 0 or first + count > trace.num_jobs:
        raise ConfigError(f"window [{first}, {first + count}) is outside the trace of {trace.num_jobs} jobs")
    gaps = trace.gaps[first: first + count].astype(np.float64).copy()
    gaps[0] = 0.0
    raw = np.cumsum(gaps)
    if load > 0 and raw[-1] > 0:
        rows = slice(first, first + count)
        work = float(np.sum(trace.gpus[rows] * trace.iterations[rows] * trace.alpha_min[trace.config_index[rows]]))
        raw *= work / (load * num_gpus * raw[-1])
    return raw * arrival_scale


def with_spec(spec: RecurringSpec, **changes: object) -> RecurringSpec:
    """``spec`` with some fields changed (keeps the generator cache keyed by value)."""
    return replace(spec, **changes)
