"""Speed figures for ddl-gym (printed, never asserted in tests).

Run ``python scripts/bench.py [--quick] [--json PATH]`` or ``ddl-gym bench [--quick]``. Prints:

(a) the env benchmark (``scripts/bench_env.py``, section ``env``): ``DDLCluster-v0`` steps per
    CPU-second against CartPole-v1 in the same run, vector envs and MCTS, with min/median/max over
    repeats and the previous code's figures.
(b) simulated jobs per second of ``fifo+pack`` on the full Philly RFold table (scenario
    ``philly``, skipped if the trace is absent) and on a 100,000-job synthetic workload on
    1,024 GPUs with the contention model on (goal: >= 20,000 jobs/s), once at a steady offered
    load and once saturated (queue grows, split jobs contend). For scale, the Alibaba PAI trace
    simulator reports about 180-390 jobs/s without any network model.
(c) how the simulation cost grows with cluster size (64 .. 4,096 GPUs) and job count
    (1k .. 100k jobs).
(d) every classic policy family (fifo/sjf/srsf × every placement rule of ``ddl_gym.placement``):
    a scaling table of jobs/CPU-s (jobs × GPUs, offered load 0.9; goal >= 20,000 jobs/s at
    100k jobs on 1,024 GPUs, growth n·log n) with the fitted exponent per family, and fifo+pack at
    100k jobs on 65,536 GPUs. The goal cell is repeated (``--family-repeats``, min/median/max) and
    interleaved with runs of the pre-round code's fifo+pack on the same case (a child process on
    ``$DDL_GYM_REFERENCE_TREE``, default ``/tmp/old_engine``, a checkout of commit 9a99d18; skipped
    with a note when absent). The issue set 20k against 25k for that code, so each family is also
    judged normalised: >= 0.8 × the reference measured in the same run.
(d2) the paper policies that run on the job-level engine (SJF-BCO in its own offline setting, all jobs
    at t=0 on 1,024 GPUs up to 100k jobs; SJF-BCO re-planning at arrivals on the synthetic RAR case;
    A-SRPT and its baselines on the asrpt-sim world) over a jobs grid, with the fitted growth exponent.
    Each world's largest size is repeated (``--paper-repeats``, min/median/max), each run paired
    with a run of the reference as in (d); the goal verdicts read the medians.
(e) peak RSS of 10^6 jobs with contention on 1,024 GPUs (fifo+pack, load 0.9), measured in a
    child process with ``resource.getrusage`` (goal < 500 MB), in ``--memory-repeats`` processes; the
    verdict reads the largest peak.
(f) the task-level engine (``scripts/bench_tasklevel.py``). Sections (a) and (f) run their scripts
    through ``run(quick)`` / ``format_report``.

Single-process rates are given per wall-clock second and per CPU second of this process
(``time.process_time``); the CPU figure is the one to compare on a shared, busy machine.
Synthetic workloads use the papers' job-size mix and Table III models with Poisson arrivals at an
offered load of ``--load`` of the cluster's nominal capacity: the arrival rate is
``load · GPUs / E[G_j · F_j · τ̂_j]`` with ``τ̂`` the uncontended, consolidated iteration time
(estimated on a 20,000-job sample; the size mix is heavy-tailed).
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

_SCRIPTS = str(Path(__file__).resolve().parent)
if _SCRIPTS not in sys.path:  # bench_common (measured trees, the reference) lives beside this script
    sys.path.insert(0, _SCRIPTS)

from bench_common import DEFAULT_REFERENCE_TREE, build_label, engine_build, reference_fifo_pack, reference_tree  # noqa: E402

GBPS = 1e9 / 8
#: Sections run by separate scripts in ``scripts/`` (their ``run(quick)`` / ``format_report``).
SUB_BENCHES: dict[str, str] = {"env": "bench_env", "tasklevel": "bench_tasklevel"}
SECTIONS: tuple[str, ...] = ("env", "engine", "families", "paper", "memory", "tasklevel")
PAI_NOTE = "the Alibaba PAI simulator does ~180-390 jobs/s with no network model"


def _rates(count: int, run: Callable[[], None]) -> dict[str, float]:
    t0, c0 = time.perf_counter(), time.process_time()
    run()
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return {"count": count, "seconds": wall, "cpu_seconds": cpu,
            "per_s": count / wall, "per_cpu_s": count / max(cpu, 1e-9)}


def synthetic_case(num_gpus: int, num_jobs: int, load: float = 0.7, seed: int = 0,
                   gpus_per_server: int = 4) -> tuple[Any, Any, Any]:
    """A cluster of ``num_gpus`` GPUs and a paper-mix workload offered at ``load`` of its capacity."""
    from ddl_gym.sim import ClusterSpec, RARContentionModel, Simulator
    from ddl_gym.workloads.synthetic import scaled_workload

    cluster = ClusterSpec.homogeneous(max(1, num_gpus // gpus_per_server), gpus_per_server,
                                      inter_bandwidth=10 * GBPS, intra_bandwidth=800 * GBPS)
    model = RARContentionModel()
    max_gpus = min(32, cluster.num_gpus)
    rng = np.random.default_rng(seed)
    probe = scaled_workload(rng, 20_000, max_gpus=max_gpus, arrival_rate_per_s=1.0)
    sim = Simulator(cluster, probe, model)
    tau = np.array([sim.nominal_iteration_time(j) for j in range(probe.num_jobs)])
    mean_work = float(np.mean(probe.gpus * probe.iterations * tau))  # GPU-seconds per job
    rate = load * cluster.num_gpus / mean_work
    workload = scaled_workload(rng, num_jobs, max_gpus=max_gpus, arrival_rate_per_s=rate)
    return cluster, workload, model


def simulate_jobs_per_second(cluster: Any, workload: Any, model: Any, policy: str = "fifo+pack") -> dict[str, float]:
    """Run ``policy`` natively; rates count simulation only (building the workload is excluded)."""
    from ddl_gym.policies import make_policy
    from ddl_gym.sim import Simulator, run_policy

    box: dict[str, Any] = {}

    def run() -> None:
        sim = Simulator(cluster, workload, model)
        box["result"] = run_policy(sim, make_policy(policy), np.random.default_rng(0))
        box["rate_changes"] = sim.rate_changes  # the simulator itself is not kept (10⁶-job memory bench)

    figures = _rates(workload.num_jobs, run)
    result = box["result"]
    summary = result.summary()
    n = max(1, workload.num_jobs)
    started = result.n_servers[result.n_servers > 0]
    return {
        "jobs": workload.num_jobs, "gpus": cluster.num_gpus, "seconds": figures["seconds"],
        "cpu_seconds": figures["cpu_seconds"], "jobs_per_s": figures["per_s"], "jobs_per_cpu_s": figures["per_cpu_s"],
        "gpu_alloc_util": summary["gpu_alloc_util"], "avg_queue_s": summary["avg_queue_s"],
        "avg_slowdown": summary["avg_slowdown"],
        # The regime, which sets the work per job at any engine speed (computed after the timing):
        # mean jobs waiting (Little's law: jobs × mean queueing delay / makespan), servers per started
        # job, the share of jobs placed across servers, and rates set per job.
        "mean_waiting": workload.num_jobs * summary["avg_queue_s"] / summary["makespan_s"] if summary["makespan_s"] > 0 else 0.0,
        "servers_per_job": float(started.mean()) if started.size else 0.0,
        "split_share": float((started > 1).sum() / n),
        "rate_changes_per_job": box["rate_changes"] / n,
    }


def philly_jobs_per_second() -> dict[str, float] | str:
    """fifo+pack on the full Philly RFold table (scenario ``philly``), or a note why it was skipped."""
    from ddl_gym.scenarios import get_scenario
    from ddl_gym.sim.model import ConfigError

    try:
        from ddl_gym.workloads.philly import default_trace_path

        path = default_trace_path("rfold")
        if not Path(path).exists():
            return f"skipped: Philly trace not found at {path}"
    except (ImportError, ConfigError, FileNotFoundError) as exc:
        return f"skipped: Philly trace unavailable ({exc})"
    scenario = get_scenario("philly")
    t0 = time.perf_counter()
    try:
        cluster, workload = scenario.episode(0)
    except (ConfigError, FileNotFoundError) as exc:
        return f"skipped: {exc}"
    load_s = time.perf_counter() - t0
    figures = simulate_jobs_per_second(cluster, workload, scenario.model)
    figures["load_seconds"] = load_s
    return figures


# ============================================================================ (d) families, (e) memory
ORDERS = ("fifo", "sjf", "srsf")
PLACEMENTS = ("pack", "ff", "ls", "rand", "spread", "ca")
FAMILY_GOAL = 20_000  # jobs per CPU-second (issue 13)
#: fifo+pack's jobs/s on the goal case (1,024 GPUs, 100k jobs, load 0.9) that issue 13 quotes for the code
#: of its day: the goal of 20k was set against it, so on a slower day the goal reads "0.8 x that code".
ISSUE_FIFO_PACK = 25_000
NORMALISED_GOAL = FAMILY_GOAL / ISSUE_FIFO_PACK
#: Where the pre-round engine (commit 9a99d18) is checked out: ``$DDL_GYM_REFERENCE_TREE`` or this path.
RSS_GOAL_MB = 500

def fitted_exponent(jobs: Sequence[float], seconds: Sequence[float]) -> float:
    """Least-squares slope of log(CPU seconds) against log(jobs): 1 is linear, n·log n a little above, 2 quadratic."""
    x, y = np.log(np.asarray(jobs, dtype=float)), np.log(np.maximum(np.asarray(seconds, dtype=float), 1e-9))
    return float(np.polyfit(x, y, 1)[0]) if len(x) >= 2 else float("nan")


def _stats(values: Sequence[float]) -> dict[str, float]:
    import statistics

    return {"min": min(values), "median": statistics.median(values), "max": max(values), "n": len(values)}


NO_REFERENCE = "skipped: no reference tree (set DDL_GYM_REFERENCE_TREE to a checkout of 9a99d18)"


def family_jobs_grid(quick: bool) -> tuple[int, int]:
    """Jobs counts of section (d); the last is the goal cell's, which the reference runs too."""
    return (2_000, 20_000) if quick else (10_000, 100_000)


def _repeats(requested: int | None, quick: bool) -> int:
    """Runs of a repeated measurement: as requested, else 3 (1 with ``--quick``)."""
    return requested if requested is not None else (1 if quick else 3)


def family_scaling(quick: bool, load: float = 0.9, policies: Sequence[str] | None = None,
                   repeats: int | None = None, reference: bool = True) -> dict[str, Any]:
    """jobs/CPU-s of every classic policy over a (GPUs × jobs) grid, the goal cell repeated, against the reference.

    The goal cell (the largest jobs count on 1,024 GPUs; 100k in a full run) is timed ``repeats``
    times per policy, each run right after a run of the pre-round code's fifo+pack on the same case
    (a child process on :func:`reference_tree`): each family's rate is read as the median of these
    paired ratios, so a shared machine's speed drifting over the minutes of a run (it does, by up to
    ±30%) cancels within each pair instead of landing on whichever families ran in a slow spell.
    """
    policies = list(policies or [f"{o}+{p}" for o in ORDERS for p in PLACEMENTS])
    repeats = _repeats(repeats, quick)
    gpus_grid = (256, 1024) if quick else (1024, 16_384)
    jobs_grid = family_jobs_grid(quick)
    goal_cell = (1024, jobs_grid[-1])
    tree = reference_tree() if reference else None
    cells: dict[str, list[dict[str, float]]] = {p: [] for p in policies}
    goal_runs: dict[str, list[float]] = {p: [] for p in policies}
    goal_ratios: dict[str, list[float]] = {p: [] for p in policies}  # family ÷ the reference run just before it
    reference_runs: list[float] = []
    for gpus in gpus_grid:
        for jobs in jobs_grid:
            case = synthetic_case(gpus, jobs, load=load)
            rounds = repeats if (gpus, jobs) == goal_cell else 1
            paired = (gpus, jobs) == goal_cell and tree is not None
            for r in range(rounds):
                for policy in policies:
                    if paired:
                        reference_runs.append(reference_fifo_pack(tree, gpus, jobs, load)["jobs_per_cpu_s"])
                        print(f"  reference fifo+pack {jobs:,} jobs {gpus:,} GPUs: {reference_runs[-1]:,.0f} jobs/CPU-s",
                              file=sys.stderr, flush=True)
                    figures = simulate_jobs_per_second(*case, policy=policy)
                    if r == 0:
                        cells[policy].append({k: figures[k] for k in ("gpus", "jobs", "cpu_seconds", "jobs_per_cpu_s")})
                    if (gpus, jobs) == goal_cell:
                        goal_runs[policy].append(figures["jobs_per_cpu_s"])
                        if paired:
                            goal_ratios[policy].append(figures["jobs_per_cpu_s"] / reference_runs[-1])
                    print(f"  {policy} {jobs:,} jobs {gpus:,} GPUs: {figures['jobs_per_cpu_s']:,.0f} jobs/CPU-s",
                          file=sys.stderr, flush=True)
    big = {"gpus": 65_536 if not quick else 16_384, "jobs": 100_000 if not quick else 20_000}
    big_case = synthetic_case(big["gpus"], big["jobs"], load=load)
    if tree is not None:  # its pair (the reference is the goal cell's case: the issue sets both goals against it)
        reference_runs.append(reference_fifo_pack(tree, *goal_cell, load)["jobs_per_cpu_s"])
    pack = simulate_jobs_per_second(*big_case, policy="fifo+pack")
    if tree is not None:
        pack = {**pack, "reference_ratio": pack["jobs_per_cpu_s"] / reference_runs[-1]}
    return {"load": load, "gpus_grid": list(gpus_grid), "jobs_grid": list(jobs_grid), "cells": cells,
            "goal_cell": list(goal_cell), "goal_runs": {p: _stats(v) for p, v in goal_runs.items() if v},
            "goal_ratios": {p: _stats(v) for p, v in goal_ratios.items() if v},
            "reference": _stats(reference_runs) if reference_runs else NO_REFERENCE,
            "reference_tree": tree, "fifo_pack_big": pack}


# ---------------------------------------------------------------------------- paper policies (job-level)
def _paper_worlds(quick: bool) -> list[dict[str, Any]]:
    """Paper policies that run on the job-level engine, each on its own kind of world, over a jobs grid."""
    return [
        {"world": "sjf-bco-offline", "policies": ["sjf-bco"] if quick else ["sjf-bco", "sjf-bco+ff"],
         "jobs_grid": (500, 2_000) if quick else (1_000, 10_000, 100_000), "gpus": 1024,
         "note": "the paper's own setting (§7.1): every job known at t=0, one plan (bisection over θ, Alg. 1) then "
                 "its execution; the §7.1 size mix scaled to the job count, §7.1 servers of {4,8,16,32} GPUs drawn "
                 "up to 1,024 GPUs (the last one trimmed), calibrated RAR model"},
        {"world": "sjf-bco", "policies": ["sjf-bco", SJF_BCO_WHEN_STARTED] if quick else
            ["sjf-bco", "sjf-bco+ff", SJF_BCO_WHEN_STARTED],
         "jobs_grid": (100, 200) if quick else (100, 200, 400, 800), "gpus": 64,
         "note": "synthetic RAR case, 64 GPUs, load 0.9, Poisson arrivals; SJF-BCO (default online='replan') re-plans "
                 "(bisection over θ, Alg. 1) over every queued job at each arrival batch, so its cost grows with "
                 "jobs × queue by design; online='replan-when-started' plans arrivals once the current plan has "
                 "fully started (JCT effect in the table below)"},
        {"world": "asrpt", "policies": ["a-srpt", "a-srpt-perfect", "spjf", "spwf", "wcs-duration", "wcs-workload",
                                         "wcs-subtime"],
         "jobs_grid": (500, 2_000) if quick else (2_000, 4_000, 8_000), "gpus": 256,
         "note": "asrpt-sim world (32x8 V100, pipeline jobs, load 0.9) with mean predictions (the scenario's rf "
                 "needs scikit-learn and minutes of fitting)"},
    ]


def sjf_bco_offline_case(jobs: int, gpus: int = 1024, seed: int = 0) -> tuple[Any, Any, Any]:
    """SJF-BCO's §7.1 world grown to ``gpus`` GPUs and ``jobs`` jobs, all arriving at t=0 (its offline setting)."""
    from ddl_gym.baselines.sjf_bco.policy import SJF_BCO_MODELS, SJF_BCO_PERF_MODEL, INTER_GBPS, INTRA_GBPS, PAPER_SERVER_GPU_CHOICES
    from ddl_gym.sim import ClusterSpec
    from ddl_gym.workloads.synthetic import PAPER_GPU_MIX, sjf_bco_workload

    rng = np.random.default_rng(seed)
    counts: list[int] = []
    while sum(counts) < gpus:
        counts.append(int(rng.choice(PAPER_SERVER_GPU_CHOICES)))
    counts[-1] -= sum(counts) - gpus
    cluster = ClusterSpec(tuple(counts), intra_bandwidth=INTRA_GBPS * GBPS, inter_bandwidth=INTER_GBPS * GBPS)
    total = sum(PAPER_GPU_MIX.values())
    mix = {g: max(1, round(c * jobs / total)) for g, c in PAPER_GPU_MIX.items()}
    mix[1] += jobs - sum(mix.values())
    return cluster, sjf_bco_workload(rng, gpu_mix=mix, models=SJF_BCO_MODELS), SJF_BCO_PERF_MODEL


SJF_BCO_WHEN_STARTED = "sjf-bco:online=replan-when-started"


def sjf_bco_online_modes(quick: bool, load: float = 0.9) -> dict[str, Any]:
    """SJF-BCO's online modes on the replan world, per seed: jobs/CPU-s and avg JCT of each."""
    from ddl_gym.policies import make_policy
    from ddl_gym.sim import Simulator, run_policy

    jobs, seeds = (200, (0, 1)) if quick else (400, (0, 1, 2, 3, 4))
    rows = []
    for seed in seeds:
        case = synthetic_case(64, jobs, load=load, seed=seed)
        row: dict[str, Any] = {"seed": seed}
        for label, spec in (("replan", "sjf-bco"), ("replan-when-started", SJF_BCO_WHEN_STARTED)):
            box: dict[str, Any] = {}
            policy = make_policy(spec)
            figures = _rates(jobs, lambda: box.update(r=run_policy(Simulator(*case), policy, np.random.default_rng(0))))
            plans = [executed.plan for executed in policy.plans]
            row[label] = {"jobs_per_cpu_s": figures["per_cpu_s"], "avg_jct_s": box["r"].summary()["avg_jct_s"],
                          # where the time goes: the plans (Alg. 1 over the queued jobs) against the whole run
                          "plans": len(plans), "planned_entries": sum(len(p.entries) for p in plans),
                          "planning_s": sum(p.planning_time_s for p in plans), "seconds": figures["seconds"],
                          "cpu_seconds": figures["cpu_seconds"]}
        rows.append(row)
        print(f"  sjf-bco online modes seed {seed}: {row}", file=sys.stderr, flush=True)
    return {"jobs": jobs, "gpus": 64, "load": load, "rows": rows}


def _paper_case(world: str, jobs: int, gpus: int, load: float) -> tuple[Any, Any, Any]:
    if world == "sjf-bco-offline":
        return sjf_bco_offline_case(jobs, gpus)
    if world == "sjf-bco":
        return synthetic_case(gpus, jobs, load=load)
    from ddl_gym.workloads.asrpt import asrpt_sim_scenario

    # The window is drawn from the trace's test part (the last 20 %), so the trace must hold 5x the jobs.
    scenario = asrpt_sim_scenario(num_jobs=jobs, trace_jobs=max(20_000, 6 * jobs), predictor="mean")
    cluster, workload = scenario.episode(0)
    return cluster, workload, scenario.model


def paper_scaling(quick: bool, load: float = 0.9, reference: bool = True,
                  repeats: int | None = None) -> tuple[list[dict[str, Any]], list[float]]:
    """jobs/CPU-s and the fitted growth exponent of the job-level paper policies, and the reference runs.

    At each world's largest size every policy is timed ``repeats`` times (default 3; 1 with
    ``quick``), each run right after a run of the reference (section (d)'s pre-round fifo+pack on its
    goal cell, when :func:`reference_tree` is present), and keeps every rate (``runs``) and paired
    ratio (``ratios``); the growth table uses the first run. The reference's own rates are returned
    for the report's header.
    """
    repeats = _repeats(repeats, quick)
    from ddl_gym.sim.model import ConfigError

    tree = reference_tree() if reference else None
    reference_jobs = family_jobs_grid(quick)[-1]
    reference_runs: list[float] = []
    out = []
    for spec in _paper_worlds(quick):
        rows: dict[str, list[dict[str, float]]] = {p: [] for p in spec["policies"]}
        for jobs in spec["jobs_grid"]:
            try:
                case = _paper_case(spec["world"], jobs, spec["gpus"], load)
            except ConfigError as exc:  # a world that cannot be built at this size: say so, keep the rest
                print(f"  {spec['world']} {jobs:,} jobs: skipped ({exc})", file=sys.stderr, flush=True)
                continue
            largest = jobs == spec["jobs_grid"][-1]
            paired = tree is not None and largest
            for r in range(repeats if largest else 1):
                for policy in spec["policies"]:
                    if paired:
                        reference_runs.append(reference_fifo_pack(tree, 1024, reference_jobs, load)["jobs_per_cpu_s"])
                    figures = simulate_jobs_per_second(*case, policy=policy)
                    if r == 0:
                        rows[policy].append({k: figures[k] for k in ("jobs", "gpus", "cpu_seconds", "jobs_per_cpu_s")})
                    if largest:
                        rows[policy][-1].setdefault("runs", []).append(figures["jobs_per_cpu_s"])
                    if paired:
                        rows[policy][-1].setdefault("ratios", []).append(figures["jobs_per_cpu_s"] / reference_runs[-1])
                    print(f"  {policy} {jobs:,} jobs: {figures['jobs_per_cpu_s']:,.0f} jobs/CPU-s", file=sys.stderr,
                          flush=True)
        world = {**{k: spec[k] for k in ("world", "note", "gpus")}, "jobs_grid": list(spec["jobs_grid"]), "rows": rows}
        if spec["world"] == "sjf-bco":
            world["online_modes"] = sjf_bco_online_modes(quick, load)
        out.append(world)
    return out, reference_runs


_RSS_CHILD = """
import json, resource, sys, time
sys.path.insert(0, {scripts!r})
import bench
case = bench.synthetic_case({gpus}, {jobs}, load={load})
rss_workload = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
figures = bench.simulate_jobs_per_second(*case, policy={policy!r})
print(json.dumps({{"rss_workload_kb": rss_workload, "rss_peak_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                  "jobs_per_cpu_s": figures["jobs_per_cpu_s"], "cpu_seconds": figures["cpu_seconds"],
                  "mean_waiting": figures["mean_waiting"]}}))
"""


def peak_rss(jobs: int, gpus: int = 1024, load: float = 0.9, policy: str = "fifo+pack") -> dict[str, Any]:
    """Peak resident memory (MB) of a child process that builds and simulates the workload."""
    import subprocess

    code = _RSS_CHILD.format(scripts=str(Path(__file__).resolve().parent), gpus=gpus, jobs=jobs, load=load, policy=policy)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if done.returncode != 0:
        return {"jobs": jobs, "error": done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "failed"}
    out = json.loads(done.stdout.strip().splitlines()[-1])
    return {"jobs": jobs, "gpus": gpus, "policy": policy, "peak_mb": out["rss_peak_kb"] / 1024,
            "after_workload_mb": out["rss_workload_kb"] / 1024, "jobs_per_cpu_s": out["jobs_per_cpu_s"],
            "mean_waiting": out["mean_waiting"]}


def memory_runs(jobs: int, load: float, repeats: int) -> dict[str, Any]:
    """:func:`peak_rss` ``repeats`` times (each a fresh child process): the first run's record, with every
    run's peak RSS and rate in ``runs`` (the verdict reads the largest peak)."""
    done: list[dict[str, Any]] = []
    for _ in range(max(1, repeats)):
        mem = peak_rss(jobs, load=load)
        if "error" in mem:
            return mem
        done.append(mem)
        print(f"  memory {jobs:,} jobs: {mem['peak_mb']:,.0f} MB", file=sys.stderr, flush=True)
    return {**done[0], "runs": [{"peak_mb": m["peak_mb"], "jobs_per_cpu_s": m["jobs_per_cpu_s"]} for m in done]}


def load_sub_bench(name: str) -> Any:
    """``scripts/<name>.py`` as a module, or None if it is not there.

    Imported by its own name from the scripts folder on sys.path: processes it spawns (the vector
    bench's two-process ceiling) unpickle its functions by module name, and they inherit sys.path.
    """
    import importlib

    path = Path(__file__).resolve().parent / f"{name}.py"
    if not path.exists():
        return None
    if str(path.parent) not in sys.path:
        sys.path.insert(0, str(path.parent))
    return importlib.import_module(name)


def _sub_bench(name: str, quick: bool) -> tuple[Any, dict[str, Any]] | str:
    """``scripts/<name>.py``'s module and ``run(quick)``, or why it was skipped."""
    module = load_sub_bench(name)
    if module is None:
        return f"skipped: {name}.py not present"
    return module, module.run(quick)


# ============================================================================ report
def run(quick: bool = False, load: float = 0.7, saturated_load: float = 0.9,
        sections: Sequence[str] = SECTIONS, family_repeats: int | None = None,
        paper_repeats: int | None = None, memory_repeats: int | None = None) -> dict[str, Any]:
    """All figures as a dict (see the module docstring); ``sections`` picks the parts to run."""

    from ddl_gym.baselines.sjf_bco import plan as sjf_bco_plan

    report: dict[str, Any] = {"quick": quick, "python": platform.python_version(), "machine": platform.machine(),
                              "sections": list(sections), "engine_build": engine_build(),
                              "planner_build": build_label(sjf_bco_plan.BUILD)}
    if "engine" in sections:
        report.update(_run_engine(quick, load, saturated_load))
    if "families" in sections:
        report["families"] = family_scaling(quick, saturated_load, repeats=family_repeats)
    if "paper" in sections:
        report["paper"], paired_references = paper_scaling(quick, saturated_load, repeats=paper_repeats)
        report["paper_reference"] = _stats(paired_references) if paired_references else NO_REFERENCE
    if "memory" in sections:
        report["memory"] = memory_runs(100_000 if quick else 1_000_000, saturated_load, _repeats(memory_repeats, quick))
    for name, script in SUB_BENCHES.items():
        if name in sections:
            sub = _sub_bench(script, quick)
            report[name] = sub if isinstance(sub, str) else sub[1]
            if not isinstance(sub, str):
                report[f"{name}_text"] = sub[0].format_report(sub[1])
    return report


def _run_engine(quick: bool, load: float, saturated_load: float) -> dict[str, Any]:
    report: dict[str, Any] = {}
    report["philly"] = "skipped in --quick" if quick else philly_jobs_per_second()
    big_jobs = 20_000 if quick else 100_000
    report["synthetic"] = [
        {"load": lo, **simulate_jobs_per_second(*synthetic_case(1024, big_jobs, load=lo))}
        for lo in (load, saturated_load)
    ]
    gpus_grid = (64, 1024) if quick else (64, 256, 1024, 4096)
    jobs_grid = (1_000, 10_000) if quick else (1_000, 10_000, 100_000)
    report["grid_load"] = load
    report["grid"] = [simulate_jobs_per_second(*synthetic_case(g, j, load=load)) for g in gpus_grid for j in jobs_grid]
    return report


def _fmt(x: float) -> str:
    return f"{x:,.0f}" if x >= 100 else f"{x:.2f}"


def format_report(report: dict[str, Any]) -> str:
    """Markdown tables of :func:`run`'s figures."""
    builds = f"job-level engine: {report.get('engine_build', 'plain Python')}"
    if "paper" in report and "planner_build" in report:  # only the paper section runs the planner
        builds += f"; SJF-BCO planner: {report['planner_build']}"
    lines = [f"# ddl-gym benchmark{' (quick)' if report['quick'] else ''}", "",
             f"Python {report['python']} on {report['machine']}; {builds}."]
    if "synthetic" in report:
        lines += ["", *_format_engine(report)]
    if "families" in report:
        lines += ["", *_format_families(report["families"])]
    if "paper" in report:
        lines += ["", *_format_paper(report["paper"], report.get("paper_reference"))]
    if "memory" in report:
        lines += ["", *_format_memory(report["memory"])]
    for name, title in (("env", "env"), ("tasklevel", "task-level engine")):
        if name in report:
            lines += ["", report.get(f"{name}_text") or f"## {title}: {report[name]}"]
    return "\n".join(lines)


def _format_families(fam: dict[str, Any]) -> list[str]:
    gpus_grid, jobs_grid = fam["gpus_grid"], fam["jobs_grid"]
    head = [f"{g:,} GPUs × {j:,} jobs" for g in gpus_grid for j in jobs_grid]
    ref = fam.get("reference")
    ref_median = ref["median"] if isinstance(ref, dict) else None
    goal_gpus, goal_jobs = fam.get("goal_cell", (1024, jobs_grid[-1]))
    lines = [f"## (d) Classic policy families: jobs/CPU-s (CPU seconds), offered load {fam['load']}", "",
             "| policy | " + " | ".join(head) + " | exponent (per GPU size) |",
             "|---" + "|---:" * (len(head) + 1) + "|"]
    for policy, cells in fam["cells"].items():
        by = {(c["gpus"], c["jobs"]): c for c in cells}
        text = [f"{_fmt(by[(g, j)]['jobs_per_cpu_s'])} ({by[(g, j)]['cpu_seconds']:.1f} s)" for g in gpus_grid for j in jobs_grid]
        slopes = [fitted_exponent(jobs_grid, [by[(g, j)]["cpu_seconds"] for j in jobs_grid]) for g in gpus_grid]
        lines.append(f"| {policy} | " + " | ".join(text) + " | " + ", ".join(f"{x:.2f}" for x in slopes) + " |")
    lines.append(f"(exponent: log-log slope of CPU seconds against jobs; n·log n gives about "
                 f"{1 + 1 / np.log(np.sqrt(jobs_grid[0] * jobs_grid[-1])):.2f} over this range, n² gives 2.)")
    lines += ["", f"### Goal cell: {goal_jobs:,} jobs on {goal_gpus:,} GPUs, load {fam['load']} "
                  f"(jobs/CPU-s, min / median / max of {max((v['n'] for v in fam.get('goal_runs', {}).values()), default=1)} runs)", ""]
    if ref_median is not None:
        lines.append(f"Reference: the pre-round code's fifo+pack on the same case, same run ({fam.get('reference_tree')}): "
                     f"{_fmt(ref['min'])} / {_fmt(ref_median)} / {_fmt(ref['max'])} jobs/CPU-s. Issue 13 quotes "
                     f"{ISSUE_FIFO_PACK:,} for it, so its goal of {FAMILY_GOAL:,} is {NORMALISED_GOAL:.1f} × that code; "
                     f"on this machine today that is {_fmt(NORMALISED_GOAL * ref_median)} jobs/CPU-s.")
    else:
        lines.append(f"Reference: {ref} — only the absolute verdict is given.")
    ratios = fam.get("goal_ratios") or {}
    if ratios and ref_median is not None:
        lines.append("Each family run follows a reference run; ÷ reference is the median of these paired ratios "
                     "(min–max in brackets), so the machine's drift during the run cancels within each pair.")
    ratio_head = "÷ reference (paired: median [min–max])" if ratios else "÷ reference (medians)"
    lines += ["", f"| policy | jobs/CPU-s (min / median / max) | {ratio_head} | absolute (>= 20,000) | "
                  f"normalised (>= {NORMALISED_GOAL:.1f} × reference) |", "|---|---:|---:|---|---|"]
    absolute_ok = normalised_ok = 0
    runs = fam.get("goal_runs", {})
    for policy, st in runs.items():
        ok_abs = st["median"] >= FAMILY_GOAL
        absolute_ok += ok_abs
        if ref_median is not None:
            pair = ratios.get(policy)
            ratio = pair["median"] if pair else st["median"] / ref_median
            ok_norm = ratio >= NORMALISED_GOAL
            normalised_ok += ok_norm
            shown = f"{ratio:.2f} [{pair['min']:.2f}–{pair['max']:.2f}]" if pair else f"{ratio:.2f}"
            norm = f"{shown} | {'meets' if ok_abs else 'below'} | {'meets' if ok_norm else 'below'}"
        else:
            norm = f"– | {'meets' if ok_abs else 'below'} | –"
        lines.append(f"| {policy} | {_fmt(st['min'])} / {_fmt(st['median'])} / {_fmt(st['max'])} | {norm} |")
    if runs:
        lines.append("")
        lines.append(f"Absolute: {absolute_ok} of {len(runs)} families meet >= {FAMILY_GOAL:,} jobs/CPU-s on this machine."
                     + (f" Normalised: {normalised_ok} of {len(runs)} meet >= {NORMALISED_GOAL:.1f} × the reference "
                        f"(the goal read on the issue's machine)." if ref_median is not None else ""))
    big = fam["fifo_pack_big"]
    big_line = (f"fifo+pack, {big['jobs']:,} jobs on {big['gpus']:,} GPUs: {_fmt(big['jobs_per_cpu_s'])} jobs/CPU-s "
                f"(absolute: {'meets' if big['jobs_per_cpu_s'] >= FAMILY_GOAL else 'below'} >= {FAMILY_GOAL:,}")
    if ref_median is not None:
        ratio = big.get("reference_ratio", big["jobs_per_cpu_s"] / ref_median)
        big_line += (f"; {ratio:.2f} × the reference{' run just before it' if 'reference_ratio' in big else ''}: normalised "
                     f"{'meets' if ratio >= NORMALISED_GOAL else 'below'} >= {NORMALISED_GOAL:.1f}")
    lines += ["", big_line + ")."]
    return lines


def _format_paper_goal(paper: list[dict[str, Any]], ref: dict[str, float] | str | None) -> list[str]:
    """Each paper policy at its world's largest size against the absolute and the normalised goal of (d)."""
    if not isinstance(ref, dict):
        return [f"Reference for the normalised goal: {ref or 'not measured'}.", ""]
    lines = [f"Goal reading at each world's largest size. Reference: the pre-round code's fifo+pack, 1,024 GPUs, "
             f"load 0.9, same run: {_fmt(ref['min'])} / {_fmt(ref['median'])} / {_fmt(ref['max'])} jobs/CPU-s "
             f"(min / median / max); normalised goal >= {NORMALISED_GOAL:.1f} × the reference: each policy's ratio "
             f"is to a reference run made just before it where one was (else to that median).", "",
             "| world | policy | jobs | jobs/CPU-s (min / median / max) | ÷ reference (min / median / max) | "
             "absolute (>= 20,000) | normalised |",
             "|---|---|---:|---:|---:|---|---|"]
    for world in paper:
        for policy, rows in world["rows"].items():
            if not rows:
                continue
            last = rows[-1]
            runs = last.get("runs", [last["jobs_per_cpu_s"]])
            ratios = last.get("ratios", [rate / ref["median"] for rate in runs])
            rate, ratio = _stats(runs)["median"], _stats(ratios)["median"]
            lines.append(f"| {world['world']} | {policy} | {last['jobs']:,} | {_spread(runs, _fmt)} | "
                         f"{_spread(ratios, lambda x: f'{x:.2f}')} | {'meets' if rate >= FAMILY_GOAL else 'below'} | "
                         f"{'meets' if ratio >= NORMALISED_GOAL else 'below'} |")
    return lines + ["", "Verdicts read the medians; a cell with one figure had one run.", ""]


def _spread(values: Sequence[float], fmt: Callable[[float], str]) -> str:
    """``min / median / max`` of several runs, or the one figure of a single run."""
    if len(values) == 1:
        return fmt(values[0])
    stats = _stats(values)
    return " / ".join(fmt(stats[k]) for k in ("min", "median", "max"))


def _format_paper(paper: list[dict[str, Any]], ref: dict[str, float] | str | None = None) -> list[str]:
    lines = ["## (d2) Paper policies on the job-level engine: jobs/CPU-s (CPU seconds) and growth", ""]
    for world in paper:
        grid = world["jobs_grid"]
        lines += [f"**{world['world']}** — {world['note']}.", "",
                  "| policy | " + " | ".join(f"{j:,} jobs" for j in grid) + " | exponent |",
                  "|---" + "|---:" * (len(grid) + 1) + "|"]
        for policy, rows in world["rows"].items():
            cells = [f"{_fmt(r['jobs_per_cpu_s'])} ({r['cpu_seconds']:.2f} s)" for r in rows]
            slope = fitted_exponent([r["jobs"] for r in rows], [r["cpu_seconds"] for r in rows])
            lines.append(f"| {policy} | " + " | ".join(cells) + f" | {slope:.2f} |")
        lines.append("")
        if world["world"] == "sjf-bco-offline":
            for policy, rows in world["rows"].items():
                if rows:
                    last = rows[-1]
                    rate = _stats(last.get("runs", [last["jobs_per_cpu_s"]]))["median"]
                    verdict = "meets" if rate >= FAMILY_GOAL else "below"
                    lines.append(f"{policy} at {last['jobs']:,} jobs: {_fmt(rate)} jobs/CPU-s (median of its runs), "
                                 f"{verdict} the absolute goal of {FAMILY_GOAL:,}.")
            lines.append("")
        modes = world.get("online_modes")
        if modes:
            lines += [f"SJF-BCO online modes, {modes['jobs']:,} jobs on {modes['gpus']} GPUs, load {modes['load']}: "
                      "jobs/CPU-s and avg JCT (s) per seed.", "",
                      "| seed | replan jobs/CPU-s | replan avg JCT | when-started jobs/CPU-s | when-started avg JCT | "
                      "JCT ratio |", "|---:|---:|---:|---:|---:|---:|"]
            for row in modes["rows"]:
                a, b = row["replan"], row["replan-when-started"]
                lines.append(f"| {row['seed']} | {_fmt(a['jobs_per_cpu_s'])} | {a['avg_jct_s']:,.0f} | "
                             f"{_fmt(b['jobs_per_cpu_s'])} | {b['avg_jct_s']:,.0f} | {b['avg_jct_s'] / a['avg_jct_s']:.2f} |")
            lines.append("")
            lines += _format_planning_share(modes)
    lines += _format_paper_goal(paper, ref)
    return lines


def _format_planning_share(modes: dict[str, Any]) -> list[str]:
    """Where an online mode's time goes: its plans (each a bisection over θ, Alg. 1, over the queued jobs)
    against the whole run, per seed."""
    rows = [(row["seed"], label, row[label]) for row in modes["rows"] for label in ("replan", "replan-when-started")]
    lines = ["Where the time goes: plans made, jobs per plan, the plans' share of the run (wall-clock, "
             "`PlanResult.planning_time_s` over the run's wall time), time per plan, and the rate the run would have "
             "if planning took no time (jobs / (CPU-s × (1 − share))).", "",
             "| seed | mode | plans | jobs per plan | planning share | µs per plan | jobs/CPU-s without planning |",
             "|---:|---|---:|---:|---:|---:|---:|"]
    for seed, label, m in rows:
        share = m["planning_s"] / m["seconds"] if m["seconds"] > 0 else 0.0
        plans = max(m["plans"], 1)
        rest = m["cpu_seconds"] * (1.0 - min(share, 1.0))
        without = _fmt(modes["jobs"] / rest) if rest > 0 else "n/a"
        lines.append(f"| {seed} | {label} | {m['plans']:,} | {m['planned_entries'] / plans:.1f} | {share:.0%} | "
                     f"{1e6 * m['planning_s'] / plans:,.0f} | {without} |")
    return lines + [""]


def _format_memory(mem: dict[str, Any]) -> list[str]:
    if "error" in mem:
        return [f"## (e) Memory: {mem['jobs']:,} jobs failed: {mem['error']}"]
    runs = mem["runs"]
    peaks = [r["peak_mb"] for r in runs]
    verdict = "meets" if max(peaks) < RSS_GOAL_MB else "above"  # the largest peak: every run must fit
    header = f"## (e) Memory: {mem['jobs']:,} jobs with contention on {mem['gpus']:,} GPUs ({mem['policy']}, child process)"
    if len(runs) > 1:
        header += f", {len(runs)} runs (min / median / max)"
    return [header, "",
            f"Peak RSS {_spread(peaks, lambda v: f'{v:,.0f}')} MB ({mem['after_workload_mb']:,.0f} MB after building the "
            f"workload in the first run), {_spread([r['jobs_per_cpu_s'] for r in runs], _fmt)} jobs/CPU-s: {verdict} the "
            f"goal of < {RSS_GOAL_MB} MB (read on the largest peak). "
            f"The case saturates: {_fmt(mem['mean_waiting'])} jobs wait on average (Little's law)."]


def _format_engine(report: dict[str, Any]) -> list[str]:
    lines = ["## (b) Simulated jobs per second, fifo+pack, contention model on", "",
              "| workload | GPUs | jobs | jobs/s (wall) | jobs/CPU-s | GPU alloc util | avg queue (s) | avg slowdown |",
              "|---|---:|---:|---:|---:|---:|---:|---:|"]

    def row(label: str, f: dict[str, float]) -> str:
        return (f"| {label} | {f['gpus']:,} | {f['jobs']:,} | {_fmt(f['jobs_per_s'])} | {_fmt(f['jobs_per_cpu_s'])} | "
                f"{f['gpu_alloc_util']:.2f} | {f['avg_queue_s']:,.0f} | {f['avg_slowdown']:.2f} |")

    philly = report["philly"]
    if isinstance(philly, dict):
        lines.append(row(f"Philly RFold, full table (loading {philly['load_seconds']:.2f} s)", philly))
    else:
        lines.append(f"| Philly RFold | – | – | {philly} | – | – | – | – |")
    for syn in report["synthetic"]:
        lines.append(row(f"synthetic, offered load {syn['load']}", syn))
    best = max(s["jobs_per_cpu_s"] for s in report["synthetic"])
    verdict = "meets" if best >= 20_000 else "below"
    lines += ["", f"Synthetic: {verdict} the goal of >= 20,000 jobs/s per CPU-second; for scale, {PAI_NOTE}."]

    grid = report["grid"]
    gpus_axis = sorted({g["gpus"] for g in grid})
    jobs_axis = sorted({g["jobs"] for g in grid})
    cell = {(g["gpus"], g["jobs"]): g for g in grid}
    lines += ["", f"## (c) Cost vs. scale: jobs/CPU-s (CPU seconds), fifo+pack, offered load {report['grid_load']}", "",
              "| GPUs \\ jobs | " + " | ".join(f"{j:,}" for j in jobs_axis) + " |",
              "|---" + "|---:" * len(jobs_axis) + "|"]
    for gpus in gpus_axis:
        cells = [f"{_fmt(cell[(gpus, j)]['jobs_per_cpu_s'])} ({cell[(gpus, j)]['cpu_seconds']:.2f} s)" for j in jobs_axis]
        lines.append(f"| {gpus:,} | " + " | ".join(cells) + " |")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="ddl-gym bench", description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller runs (about 15 seconds)")
    parser.add_argument("--json", type=Path, help="also write the figures as JSON here")
    parser.add_argument("--load", type=float, default=0.7, help="steady offered load of synthetic workloads (0.7)")
    parser.add_argument("--saturated-load", type=float, default=0.9, help="saturated offered load (0.9)")
    parser.add_argument("--sections", default=",".join(SECTIONS),
                        help=f"comma-separated parts to run ({', '.join(SECTIONS)})")
    parser.add_argument("--family-repeats", type=int, default=None,
                        help="runs of each family (and of the reference) on the goal cell (default 3; 1 with --quick)")
    parser.add_argument("--paper-repeats", type=int, default=None,
                        help="runs of each paper policy (and of the reference) at its world's largest size "
                             "(default 3; 1 with --quick)")
    parser.add_argument("--memory-repeats", type=int, default=None,
                        help="child processes of the memory section (default 3; 1 with --quick)")
    args = parser.parse_args(argv)
    sections = [x.strip() for x in args.sections.split(",") if x.strip()]
    unknown = sorted(set(sections) - set(SECTIONS))
    if unknown:
        parser.error(f"unknown section(s) {', '.join(unknown)}")
    report = run(quick=args.quick, load=args.load, saturated_load=args.saturated_load, sections=sections,
                 family_repeats=args.family_repeats, paper_repeats=args.paper_repeats,
                 memory_repeats=args.memory_repeats)
    print(format_report(report))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2))
        print(f"\nwrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
