"""How loaded, how contended and how placement-sensitive a scenario is: ``ddl-gym scenarios --stats``.

A scenario is credible as a benchmark when GPUs do useful work a good part of the time, contention
is visible but does not dominate, the offered load is below saturation (makespans are not hours
for minutes of arrivals) and placement still matters. This module measures exactly those figures,
for a stated policy set and seeds, from the simulator's own results (no new engine metric).

Definitions (per episode; the tables average them over seeds and policies):

* **compute utilisation** — ``Σ_j G_j·F_j·(t_f + t_b) / (GPUs × makespan)``: the share of the
  cluster's GPU-seconds spent computing (``SimResult.summary()["gpu_compute_util"]``).
* **allocation utilisation** — ``Σ_j G_j·ρ_j / (GPUs × makespan)`` with ``ρ_j`` the job's run time
  (``gpu_alloc_util``).
* **contention share** — ``Σ_j G_j·(ρ_j − ρ_j^alone) / Σ_j G_j·ρ_j``: the share of allocated
  GPU-seconds lost to contention, where ``ρ_j^alone`` is the run time the job would have had on the
  *same placement* with no other job contending (``SimResult.ideal_runtime``). Communication that
  happens anyway (a spread job's transfer at full bandwidth, per-server overhead) is not counted.
* **offered load** — ``Σ_j G_j·ρ_j^min / (GPUs × W)`` with ``ρ_j^min = F_j·τ_j`` on the most
  consolidated placement (fewest servers, largest first), alone, and ``W`` the arrival window
  (last minus first arrival). Above 1 the cluster cannot keep up even with perfect packing and no
  contention; offline workloads (``W = 0``) have no load figure.
* **makespan / window** — makespan (first arrival to last completion) ÷ ``W``.
* **spread vs pack** — per seed, avg JCT of ``<order>+spread`` over ``<order>+pack`` minus 1
  (same queue order): how much a bad placement costs in this scenario.
* **LP bound** and **LP headroom** — the certified lower bound on avg JCT of any schedule
  (:mod:`ddl_gym.sim.lower_bound`; "—" where its proof does not cover the scenario), mean over seeds,
  and per seed ``(best measured policy's avg JCT − bound) / bound``, averaged. The suite's cards
  (``--suite``, :mod:`ddl_gym.suite_cards`) choose the best reference on validation seeds instead.

The job-level default policy set is :data:`JOB_LEVEL_POLICIES`; task-level scenarios (Ada-SRSF)
use :data:`TASK_LEVEL_POLICIES`. ``ddl-gym scenarios --stats --markdown`` prints the README table.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace

import numpy as np

from ddl_gym.scenarios import Scenario, get_scenario
from ddl_gym.sim.metrics import SimResult
from ddl_gym.sim.model import ClusterSpec, ConfigError, Workload
from ddl_gym.sim.perf import PerformanceModel

#: Scenarios measured by default (the env scenarios first, then the paper settings on the job engine).
DEFAULT_SCENARIOS: tuple[str, ...] = ("default", "small", "large", "philly-slice", "default-10g", "ada-srsf-10g",
                                      "sjf-bco")
#: Policies averaged for job-level scenarios: a good scheduler, a packing and a spreading one.
JOB_LEVEL_POLICIES: tuple[str, ...] = ("sjf+ca", "srsf+pack", "srsf+spread")
#: Policies for task-level (Ada-SRSF) scenarios.
TASK_LEVEL_POLICIES: tuple[str, ...] = ("lwf1+ada-srsf", "lwf1+srsf1")
#: The spread-vs-pack pair (same queue order) for the placement-sensitivity column.
PLACEMENT_PAIR: tuple[str, str] = ("srsf+spread", "srsf+pack")


def consolidated_servers(cluster: ClusterSpec, gpus: int) -> int:
    """Fewest servers that can hold ``gpus`` workers (largest servers first)."""
    reach = np.cumsum(sorted(cluster.gpus_per_server, reverse=True))
    return int(np.searchsorted(reach, gpus)) + 1


def minimal_runtimes(cluster: ClusterSpec, workload: Workload, model: PerformanceModel) -> np.ndarray:
    """Per job, ``F_j·τ_j`` alone on the most consolidated placement (seconds)."""
    bound = model.bind(cluster, workload)
    out = np.empty(workload.num_jobs)
    for j in range(workload.num_jobs):
        n = consolidated_servers(cluster, int(workload.gpus[j]))
        out[j] = float(workload.iterations[j]) * bound.iteration_time(j, n, 1 if n > 1 else 0)
    return out


def offered_load(cluster: ClusterSpec, workload: Workload, model: PerformanceModel) -> float:
    """``Σ G_j·ρ_j^min / (GPUs × arrival window)``; NaN for an offline workload (zero window).

    Contention-free rate models (pipeline, parameter-server) have no per-(servers, contention)
    formula; their ``ρ_j^min`` is the engine's planning estimate ``F_j·τ̂_j`` alone on the job's
    fastest configuration (:meth:`Simulator.nominal_iteration_time`, A-SRPT's ``α̃_min``).
    """
    window = float(workload.arrival.max() - workload.arrival.min()) if workload.num_jobs else 0.0
    if window <= 0:
        return math.nan
    if getattr(model.bind(cluster, workload), "contention_free", False):  # the engine's own model-kind flag
        from ddl_gym.sim.engine import Simulator
        from ddl_gym.sim.priority import nominal_runtimes

        runtimes = nominal_runtimes(Simulator(cluster, workload, model))
    else:
        runtimes = minimal_runtimes(cluster, workload, model)
    work = float((workload.gpus * runtimes).sum())
    return work / (cluster.num_gpus * window)


def contention_share(result: SimResult) -> float:
    """Share of allocated GPU-seconds lost to contention (same placements, run alone); see module doc.

    With preemption (``result.gpu_seconds`` recorded) a job's allocated GPU-seconds are those it held,
    not ``G_j·(finish − first start)``, so time spent preempted does not count as contention."""
    done = np.isfinite(result.finish)
    gpus = result.workload.gpus[done].astype(np.float64)
    if result.gpu_seconds is not None:
        runtime = result.gpu_seconds[done] / gpus
    else:
        runtime = (result.finish - result.start)[done]
    alloc = float((gpus * runtime).sum())
    if alloc <= 0:
        return 0.0
    lost = float((gpus * np.maximum(runtime - result.ideal_runtime[done], 0.0)).sum())
    return lost / alloc


#: Ada-SRSF §I: four 4-GPU jobs, each spread over the same four 10 GbE nodes, took 675 s against 295 s
#: for one such job alone.
ADA_SRSF_MEASURED_SLOWDOWN = 675.0 / 295.0


def contention_check(scenario: Scenario, jobs: int = 4) -> dict[str, float]:
    """Ada-SRSF §I's experiment in the scenario's model: per Table III model, the per-iteration slowdown of
    ``jobs`` ``jobs``-GPU jobs each spread one worker per server over the same ``jobs`` servers (``p = jobs``)
    against one such job alone on that placement (``p = 1``). Compare with :data:`ADA_SRSF_MEASURED_SLOWDOWN`."""
    from ddl_gym.sim.zoo import TABLE_III_MODELS, get_model

    cluster = scenario.sample_cluster(np.random.default_rng(0))
    if cluster.num_servers < jobs:
        raise ConfigError(f"contention_check: scenario {scenario.name!r} has fewer than {jobs} servers")
    out = {}
    for name in TABLE_III_MODELS:
        workload = Workload.from_jobs(arrival=[0.0], gpus=[jobs], iterations=[1], models=[get_model(name)])
        bound = scenario.model.bind(cluster, workload)
        out[name] = bound.iteration_time(0, jobs, jobs) / bound.iteration_time(0, jobs, 1)
    return out


def runs_table_iii_jobs(scenario: Scenario) -> bool:
    """True for job-level scenarios with ≥ 4 servers whose jobs use Ada-SRSF's Table III profiles
    (the scenarios :func:`contention_check` speaks about)."""
    from ddl_gym.sim.zoo import TABLE_III_MODELS

    if scenario.engine != "job":
        return False
    cluster, workload = scenario.episode(0)
    return cluster.num_servers >= 4 and all(m.name in TABLE_III_MODELS for m in workload.models)


def contention_check_line(scenario: Scenario) -> str:
    """One line: the model's slowdown for §I's experiment next to the measured 2.29×."""
    slow = contention_check(scenario)
    geo = float(np.exp(np.mean(np.log(list(slow.values())))))
    return (f"`{scenario.name}`: four 4-GPU jobs spread over the same four servers run "
            f"{min(slow.values()):.2f}–{max(slow.values()):.2f}× slower than one alone over the Table III models "
            f"(geometric mean {geo:.2f}×; Ada-SRSF §I measured {ADA_SRSF_MEASURED_SLOWDOWN:.2f}× on 10 GbE)")


@dataclass(frozen=True)
class EpisodeStats:
    """The figures of one (scenario, policy, seed) episode."""

    scenario: str
    policy: str
    seed: int
    compute_util: float
    alloc_util: float
    contention_share: float
    offered_load: float
    makespan_s: float
    window_s: float
    avg_jct_s: float
    lp_bound_s: float = math.nan  # NaN: the LP bound does not cover the scenario


def lp_bound_or_nan(scenario: Scenario, cluster: ClusterSpec, workload: Workload) -> float:
    """The LP lower bound on avg JCT of this episode, NaN where its proof does not apply."""
    from ddl_gym.sim.lower_bound import LowerBoundUnsupported, lower_bound

    try:
        return lower_bound(workload, cluster, scenario.model, engine=scenario.engine, options=scenario.options).avg_jct_s
    except LowerBoundUnsupported:
        return math.nan


def episode_stats(scenario: Scenario, policy: str, seed: int) -> EpisodeStats:
    """Simulate ``policy`` on ``scenario.episode(seed)`` (as the harness does) and measure it."""
    from ddl_gym.policies import make_policy
    from ddl_gym.harness import simulate

    result = simulate(make_policy(policy), scenario, seed).result
    cluster, workload = result.cluster, result.workload
    summary = result.summary()
    window = float(workload.arrival.max() - workload.arrival.min()) if workload.num_jobs else 0.0
    return EpisodeStats(
        scenario=scenario.name, policy=policy, seed=seed,
        compute_util=summary["gpu_compute_util"], alloc_util=summary["gpu_alloc_util"],
        contention_share=contention_share(result), offered_load=offered_load(cluster, workload, scenario.model),
        makespan_s=summary["makespan_s"], window_s=window, avg_jct_s=summary["avg_jct_s"],
    )


def default_policies(scenario: Scenario) -> tuple[str, ...]:
    """The stated policy set for a scenario's engine."""
    return TASK_LEVEL_POLICIES if scenario.engine == "task" else JOB_LEVEL_POLICIES


def _run(task: tuple[str, str, int]) -> EpisodeStats:
    name, policy, seed = task
    return episode_stats(get_scenario(name), policy, seed)


def measure(scenarios: Sequence[str], seeds: Sequence[int], policies: Sequence[str] | None = None,
            workers: int = 1) -> list[EpisodeStats]:
    """Every (scenario, policy, seed); ``policies=None`` uses :func:`default_policies` per scenario."""
    tasks = []
    bounds: dict[tuple[str, int], float] = {}
    for name in scenarios:
        scenario = get_scenario(name)
        pols = tuple(policies) if policies else default_policies(scenario)
        tasks += [(name, p, int(s)) for p in pols for s in seeds]
        for s in seeds:  # one LP per episode, shared by its policies
            bounds[(name, int(s))] = lp_bound_or_nan(scenario, *scenario.episode(int(s)))
    if workers > 1:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            stats = list(pool.map(_run, tasks))
    else:
        stats = [_run(t) for t in tasks]
    return [replace(st, lp_bound_s=bounds[(name, st.seed)]) for st, (name, _, _) in zip(stats, tasks)]


@dataclass(frozen=True)
class ScenarioSummary:
    """Means over policies and seeds of one scenario's :class:`EpisodeStats`."""

    scenario: str
    policies: tuple[str, ...]
    seeds: int
    compute_util: float
    compute_util_range: tuple[float, float]
    alloc_util: float
    contention_share: float
    contention_range: tuple[float, float]
    offered_load: float
    makespan_s: float
    window_s: float
    spread_over_pack: float  # NaN when the pair was not run
    lp_bound_s: float = math.nan
    lp_headroom: float = math.nan  # mean over seeds of (best measured avg JCT − LP bound) / LP bound


def summarise(stats: Sequence[EpisodeStats]) -> list[ScenarioSummary]:
    """One :class:`ScenarioSummary` per scenario, in first-seen order."""
    out = []
    for name in dict.fromkeys(s.scenario for s in stats):
        rows = [s for s in stats if s.scenario == name]
        per_policy: dict[str, list[EpisodeStats]] = {}
        for r in rows:
            per_policy.setdefault(r.policy, []).append(r)
        util_by_policy = [float(np.mean([r.compute_util for r in v])) for v in per_policy.values()]
        cont_by_policy = [float(np.mean([r.contention_share for r in v])) for v in per_policy.values()]
        spread, pack = PLACEMENT_PAIR
        ratio = math.nan
        if spread in per_policy and pack in per_policy:
            by_seed = {r.seed: r.avg_jct_s for r in per_policy[pack]}
            ratios = [r.avg_jct_s / by_seed[r.seed] - 1.0 for r in per_policy[spread] if r.seed in by_seed]
            ratio = float(np.mean(ratios)) if ratios else math.nan
        by_seed_best: dict[int, float] = {}
        bound_by_seed: dict[int, float] = {}
        for r in rows:
            by_seed_best[r.seed] = min(by_seed_best.get(r.seed, math.inf), r.avg_jct_s)
            bound_by_seed[r.seed] = r.lp_bound_s
        heads = [by_seed_best[k] / b - 1.0 for k, b in bound_by_seed.items() if math.isfinite(b) and b > 0]
        bounds = [b for b in bound_by_seed.values() if math.isfinite(b)]
        out.append(ScenarioSummary(
            scenario=name, policies=tuple(per_policy), seeds=len({r.seed for r in rows}),
            compute_util=float(np.mean([r.compute_util for r in rows])),
            compute_util_range=(min(util_by_policy), max(util_by_policy)),
            alloc_util=float(np.mean([r.alloc_util for r in rows])),
            contention_share=float(np.mean([r.contention_share for r in rows])),
            contention_range=(min(cont_by_policy), max(cont_by_policy)),
            offered_load=float(np.mean([r.offered_load for r in rows])),
            makespan_s=float(np.mean([r.makespan_s for r in rows])),
            window_s=float(np.mean([r.window_s for r in rows])),
            spread_over_pack=ratio,
            lp_bound_s=float(np.mean(bounds)) if len(bounds) == len(bound_by_seed) else math.nan,
            lp_headroom=float(np.mean(heads)) if len(heads) == len(bound_by_seed) else math.nan,
        ))
    return out


def _pct_range(lo: float, hi: float) -> str:
    return f"{100 * lo:.0f}%" if round(100 * lo) == round(100 * hi) else f"{100 * lo:.0f}–{100 * hi:.0f}%"


def markdown(summaries: Sequence[ScenarioSummary]) -> str:
    """The table the README's scenario section quotes."""
    lines = ["| scenario | compute util. | contention share | offered load | makespan / window | spread vs pack (avg JCT) "
             "| LP bound (s) | LP headroom of the best policy |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for s in summaries:
        load = "offline" if math.isnan(s.offered_load) else f"{s.offered_load:.2f}"
        if s.window_s > 0:
            span = f"{s.makespan_s / 60:.0f} min / {s.window_s / 60:.0f} min"
        else:
            span = f"{s.makespan_s / 60:.1f} min (all at t=0)"
        spread = "—" if math.isnan(s.spread_over_pack) else f"{s.spread_over_pack:+.0%}"
        bound = "—" if math.isnan(s.lp_bound_s) else f"{s.lp_bound_s:.0f}"
        head = "—" if math.isnan(s.lp_headroom) else f"{100 * s.lp_headroom:+.1f}%"
        lines.append(f"| `{s.scenario}` | {_pct_range(*s.compute_util_range)} | {_pct_range(*s.contention_range)} | "
                     f"{load} | {span} | {spread} | {bound} | {head} |")
    return "\n".join(lines)
