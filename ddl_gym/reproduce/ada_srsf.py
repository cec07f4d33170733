"""Reproduce Ada-SRSF (Wang et al. 2020) §V: Tables IV and V, the κ study (Fig. 5), GPU sharing, η, probe defect.

``ddl-gym reproduce ada-srsf`` calls :func:`main` (contract: :mod:`ddl_gym.reproduce`).

Setting (§V-A, scenario ``"ada-srsf"``): 16 servers × 4 V100-16GB, 10GbE, 160 jobs of the paper's
size mix (80×1, 14×2, 26×4, 30×8, 8×16, 2×32 GPUs; 1000–6000 iterations; Table III models)
arriving within 20 minutes (:func:`ddl_gym.workloads.synthetic.ada_srsf_workload`), eq. (5) with
the authors' 10GbE fit ``a = 0``, ``b = 0.856 ms/MB``, ``η = 0.235 ms/MB``, GPUs shared while
memory fits. Seed ``s`` draws the episode ``scenario.episode(s)`` and the placement generator
``default_rng(s)``, like the evaluation harness.

Experiments (every distinct run is simulated once and reused by every table that needs it):

* **Table IV** — RAND / FF / LS / LWF-1 placement, each with Ada-SRSF.
* **Table V** — SRSF(1) / SRSF(2) / SRSF(3) / Ada-SRSF, each with LWF-1.
* **GPU sharing** — Tables IV and V with exclusive GPUs (named option ``gpu_sharing``): §III-B3
  says "each GPU can only be occupied by one job at any time slot", while the authors' simulator
  (and our default) lets jobs share a GPU while its memory fits.
* **κ study** (Fig. 5) — LWF-κ, κ ∈ {1, 2, 4, 8, 16, 32}, with Ada-SRSF.
* **η sensitivity** — Table V for η ∈ {0, 0.1175, 0.235, 0.47} ms/MB.
* **Probe defect** — Tables IV and V with ``replicate_probe_defect=True`` (the authors' simulator,
  whose AdaDUAL size check advances the checked transfer); the SRSF(n) rows never probe.
* **SRSF(n) gap** — Table V with the authors' simulator's 32 GB GPUs, with its job scale (the job
  set committed with it has 1–6 iterations per job arriving within 1.2 s on a 1 ms tick; times are
  reported ×1000, the paper's seconds), and with both.
* ``--extras`` adds Tables IV/V on 32 GB GPUs with and without the defect.

Verdicts come from :mod:`ddl_gym.reproduce.verdict` (paired by seed). ``--quick`` runs every
experiment except η and the gap study at the authors' job scale (1–6 iterations, arrivals within
1.2 s, times ×1000) on 2 seeds: seconds instead of minutes; its claims table is committed as
``docs/reproductions/ada_srsf/claims_quick.md``.

Outputs in ``--out``: ``episodes.csv`` (one row per run and seed), ``jct.csv`` (per-job JCTs),
``report.md``, ``claims.md``, ``jct_cdf_*.png`` (JCT CDFs, matplotlib Agg).
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ddl_gym.baselines.ada_srsf.policy import make_ada_srsf_policy
from ddl_gym.cliargs import add_seeds_argument, add_workers_argument, seeds_or_default
import functools

from ddl_gym.reproduce import verdict as _verdict
from ddl_gym.reproduce.catalog import TIMING_HEADING, content_command, made_at
from ddl_gym.reproduce.verdict import RULE_V2, Change, Claim, Verdict, magnitude, render_changes, render_claims

RULE = RULE_V2  # issue 32: exact ties are ties, magnitude claims by magnitude
compare = functools.partial(_verdict.compare, rule=RULE)
best_of = functools.partial(_verdict.best_of, rule=RULE)

#: Issue 32: checks replaced and verdict changes (old = the report before issue 32).
CHANGES: tuple[Change, ...] = (
    Change("Table V: 39.6% utilisation above SRSF(1), 20.1% / 36.7% lower avg JCT, 1.56x better p95", "replaced",
           "sign only (held by +2.5% for the 39.6% claim)", "magnitude claims: the claimed amount less the 2% margin",
           "a magnitude claim is checked against its magnitude"),
    Change("authors' job scale (gap study, quick grid)", "replaced", "1–6 iterations within 1.2 s",
           "10–60 iterations within 12 s", "what the authors' final code ran"),
    Change("32 GB GPUs, exclusive GPUs", "replaced", "32 GB shared only with --extras; no 32 GB exclusive",
           "Table V with 16/32 GB × shared/exclusive GPUs in every run", "the README's 'Ada-SRSF 15% worse than "
           "SRSF(1)' holds only with 16 GB shared GPUs"),
    Change("every directional claim", "replaced", "exact ties counted against the claim", "exact ties neutral (RULE_V2)",
           "issue 32's verdict rule"),
    Change("Fig. 5 κ; Table V η = 0 and η = 0.1175", "verdict", "κ held; η = 0 held on 1/3; η = 0.1175 held (stale "
           "report, before the verdict rule)", "as the rows below print (κ tie, η = 0 not held, η = 0.1175 tie when "
           "issue 32 was filed)", "the report was stale: regenerated"),
)
from ddl_gym.scenarios import Scenario, get_scenario
from ddl_gym.sim.model import ClusterSpec, Workload
from ddl_gym.sim.perf import AllReduceContentionModel
from ddl_gym.workloads.synthetic import ada_srsf_workload

MS_PER_MB = 1e-3 / 1e6  # seconds per byte in one ms/MB

#: Paper values: (avg GPU util %, avg JCT s, median JCT s, p95 JCT s).
PAPER_TABLE_IV: dict[str, tuple[float, float, float, float]] = {
    "rand": (19.52, 2881.6, 680.3, 8910.9),
    "ff": (26.76, 1921.1, 766.1, 6224.6),
    "ls": (25.14, 2282.41, 749.9, 7224.9),
    "lwf1": (42.78, 1098.57, 487.2, 4024.0),
}
PAPER_TABLE_V: dict[str, tuple[float, float, float, float]] = {
    "srsf1": (30.65, 1374.84, 459.0, 6283.1),
    "srsf2": (25.95, 1734.74, 477.0, 7658.6),
    "srsf3": (25.14, 1750.9, 520.7, 7578.7),
    "ada": (42.78, 1098.57, 487.2, 4024.0),
}
LABELS = {"rand": "RAND", "ff": "FF", "ls": "LS", "lwf1": "LWF-1", "srsf1": "SRSF(1)", "srsf2": "SRSF(2)",
          "srsf3": "SRSF(3)", "ada": "Ada-SRSF"}
KAPPAS = (1, 2, 4, 8, 16, 32)
ETAS_MS_PER_MB = (0.0, 0.1175, 0.235, 0.47)
METRICS = ("util_pct", "avg_jct_s", "median_jct_s", "p95_jct_s")
JCT_METRICS = ("avg_jct_s", "median_jct_s", "p95_jct_s")
#: The authors' simulator works on a 1 ms tick with the job set committed next to it (1–6 iterations,
#: arrivals within 1200 ticks); its times are what the paper prints as seconds.
AUTHORS_TIME_FACTOR = 1000.0


@dataclass(frozen=True)
class RunSpec:
    """One simulated configuration (without the seed).

    Attributes:
        placement, comm: the policy (``make_ada_srsf_policy(placement, comm)``).
        eta_ms_per_mb: η of eq. (5).
        defect: replicate the authors' AdaDUAL probe defect.
        gpu_memory_mb: GPU memory (16 GB as V100-16GB; the authors' simulator uses 32 GB).
        gpu_sharing: GPUs shared while memory fits (default) or exclusive (§III-B3).
        scale: ``"paper"`` (1000–6000 iterations, 20 min) or ``"authors"`` (1–6 iterations within 1.2 s,
            times ×1000).
    """

    placement: str
    comm: str
    eta_ms_per_mb: float = 0.235
    defect: bool = False
    gpu_memory_mb: float = 16384.0
    gpu_sharing: bool = True
    scale: str = "paper"

    @property
    def key(self) -> str:
        parts = [self.placement, self.comm, f"eta{self.eta_ms_per_mb:g}"]
        if self.defect:
            parts.append("defect")
        if self.gpu_memory_mb != 16384.0:
            parts.append(f"mem{self.gpu_memory_mb:g}")
        if not self.gpu_sharing:
            parts.append("exclusive")
        if self.scale != "paper":
            parts.append(f"{self.scale}-scale")
        return "/".join(parts)


@dataclass(frozen=True)
class Settings:
    seeds: tuple[int, ...]
    quick: bool
    extras: bool


def table_iv(**kw: Any) -> dict[str, RunSpec]:
    return {p: RunSpec(p, "ada", **kw) for p in ("rand", "ff", "ls", "lwf1")}


def table_v(eta: float = 0.235, defect: bool = False, **kw: Any) -> dict[str, RunSpec]:
    # SRSF(1) never runs two all-reduces on one server, so k = 1 and η never enters eq. (5): its run is
    # shared by every η (simulated once).
    rows = {c: RunSpec("lwf1", c, eta_ms_per_mb=0.235 if c == "srsf1" else eta, **kw) for c in ("srsf1", "srsf2", "srsf3")}
    rows["ada"] = RunSpec("lwf1", "ada", eta_ms_per_mb=eta, defect=defect, **kw)
    return rows


def experiments(settings: Settings) -> dict[str, dict[str, RunSpec]]:
    """Experiment name -> {row label: run}. Quick: everything at the authors' job scale, no η/gap study."""
    scale = "authors" if settings.quick else "paper"
    kappas = (1, 4, 32) if settings.quick else KAPPAS
    out: dict[str, dict[str, RunSpec]] = {
        "table_iv": table_iv(scale=scale),
        "table_v": table_v(scale=scale),
        "table_iv_exclusive": table_iv(gpu_sharing=False, scale=scale),
        "table_v_exclusive": table_v(gpu_sharing=False, scale=scale),
        "kappa": {f"lwf{k}": RunSpec(f"lwf{k}", "ada", scale=scale) for k in kappas},
        "table_iv_defect": table_iv(defect=True, scale=scale),
        "table_v_defect": table_v(defect=True, scale=scale),
        "table_v_mem32": table_v(gpu_memory_mb=32768.0, scale=scale),
        "table_v_mem32_exclusive": table_v(gpu_memory_mb=32768.0, gpu_sharing=False, scale=scale),
    }
    if not settings.quick:
        for eta in ETAS_MS_PER_MB:
            out[f"eta_{eta:g}"] = table_v(eta=eta)
        out["gap_mem32"] = table_v(gpu_memory_mb=32768.0)
        out["gap_scale"] = table_v(scale="authors")
        out["gap_scale_mem32"] = table_v(scale="authors", gpu_memory_mb=32768.0)
    if settings.extras:
        out["table_iv_mem32"] = table_iv(gpu_memory_mb=32768.0)
        out["table_iv_mem32_defect"] = table_iv(defect=True, gpu_memory_mb=32768.0)
        out["table_v_mem32_defect"] = table_v(defect=True, gpu_memory_mb=32768.0)
    return out


# ============================================================================ running
def authors_scale_workload(rng: np.random.Generator, cluster: ClusterSpec) -> Workload:
    """The authors' final code's job scale: 10–60 iterations, arrivals on a 1 ms tick within 12 s.

    (Before issue 32 this was the job set committed with their simulator, ``iters`` in 1..6 within
    1.2 s; their final code runs 10–60 iterations within 12 s.) Same generator as
    :func:`ada_srsf_workload` (size mix, models, uniform slots) at 1 ms slots.
    """
    jobs = ada_srsf_workload(rng, iterations=(10, 60), window_s=12000.0, name="ada-srsf-authors-scale")
    return dataclasses.replace(jobs, arrival=jobs.arrival / AUTHORS_TIME_FACTOR)


def _scenario(spec: RunSpec) -> Scenario:
    base = get_scenario("ada-srsf")
    model = base.model
    assert isinstance(model, AllReduceContentionModel)
    model = dataclasses.replace(model, eta=spec.eta_ms_per_mb * MS_PER_MB)
    cluster = base.cluster
    assert isinstance(cluster, ClusterSpec)
    if spec.gpu_memory_mb != cluster.gpu_memory_mb:
        cluster = dataclasses.replace(cluster, gpu_memory_mb=spec.gpu_memory_mb)
    workload = authors_scale_workload if spec.scale == "authors" else base.workload
    options = dict(base.options, gpu_sharing=spec.gpu_sharing)
    return dataclasses.replace(base, model=model, cluster=cluster, workload=workload, options=options)


def run_one(spec: RunSpec, seed: int) -> tuple[dict[str, Any], np.ndarray]:
    """Simulate ``spec`` on episode ``seed``; returns the summary row and the per-job JCTs (paper seconds)."""
    scenario = _scenario(spec)
    cluster, workload = scenario.episode(seed)
    policy = make_ada_srsf_policy(spec.placement, spec.comm, replicate_probe_defect=spec.defect)
    t0 = time.perf_counter()
    cpu0 = time.process_time()
    result = policy.run_episode(scenario, cluster, workload, np.random.default_rng(seed))
    wall = time.perf_counter() - t0
    cpu = time.process_time() - cpu0
    summary = result.summary()
    factor = AUTHORS_TIME_FACTOR if spec.scale == "authors" else 1.0
    sim = policy.last_simulator
    stats = dict(vars(sim.stats)) if sim is not None else {}
    row = {
        "run": spec.key, **dataclasses.asdict(spec), "seed": seed,
        "util_pct": 100.0 * summary["gpu_compute_util"],
        **{m: factor * summary[m] for m in JCT_METRICS}, "makespan_s": factor * summary["makespan_s"],
        "completed": bool(result.completed),
        "wall_s": wall, "cpu_s": cpu, "us_per_decision_point": 1e6 * wall / max(1, stats.get("decision_points", 1)),
        **{f"stat_{k}": v for k, v in stats.items()},
    }
    return row, factor * result.jct


def _run_task(args: tuple[RunSpec, int]) -> tuple[dict[str, Any], np.ndarray]:
    return run_one(*args)


def run_all(specs: Sequence[RunSpec], seeds: Sequence[int], jobs: int,
            log: Callable[[str], None] | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every (spec, seed) once, in ``jobs`` processes; returns (episodes, per-job JCTs)."""
    if log is None:
        def log(line: str) -> None:
            print(line, flush=True)
    tasks = [(spec, seed) for spec in specs for seed in seeds]
    rows: list[dict[str, Any]] = []
    jct_rows: list[pd.DataFrame] = []
    done = 0

    def collect(item: tuple[dict[str, Any], np.ndarray]) -> None:
        nonlocal done
        row, jct = item
        rows.append(row)
        jct_rows.append(pd.DataFrame({"run": row["run"], "seed": row["seed"], "job": np.arange(len(jct)),
                                      "jct_s": jct}))
        done += 1
        log(f"[{done}/{len(tasks)}] {row['run']} seed {row['seed']}: avg JCT {row['avg_jct_s']:.1f}s, "
            f"util {row['util_pct']:.1f}%, {row['wall_s']:.1f}s wall")

    if jobs <= 1:
        for task in tasks:
            collect(_run_task(task))
    else:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            for item in pool.map(_run_task, tasks):
                collect(item)
    episodes = pd.DataFrame(rows).sort_values(["run", "seed"]).reset_index(drop=True)
    return episodes, pd.concat(jct_rows, ignore_index=True)


# ============================================================================ claims
def _fmt(x: float, digits: int = 1) -> str:
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:,.{digits}f}"


def _values(episodes: pd.DataFrame, spec: RunSpec, metric: str, seeds: Sequence[int]) -> list[float]:
    sub = episodes[episodes.run == spec.key].set_index("seed")[metric]
    return [float(sub.loc[s]) for s in seeds]


@dataclass(frozen=True)
class Direction:
    """A claim of the paper about one experiment's rows: ``test(values) -> Verdict``."""

    paper: str
    ours: Callable[[Callable[[str, str], list[float]]], str]
    test: Callable[[Callable[[str, str], list[float]]], Verdict]


def _mean(v: list[float]) -> float:
    return float(np.mean(v))


def _lowest(row: str, others: Sequence[str], metric: str, paper: str, higher: bool = False) -> Direction:
    direction = "higher" if higher else "lower"

    def ours(val: Callable[[str, str], list[float]]) -> str:
        return ", ".join(f"{LABELS.get(r, r)} {_fmt(_mean(val(r, metric)))}" for r in (row, *others))

    return Direction(paper, ours, lambda val: best_of(val(row, metric), {LABELS.get(o, o): val(o, metric)
                                                                        for o in others}, direction))


def _beats(row: str, other: str, metric: str, paper: str, higher: bool = False) -> Direction:
    def ours(val: Callable[[str, str], list[float]]) -> str:
        a, b = _mean(val(row, metric)), _mean(val(other, metric))
        return f"{LABELS.get(row, row)} {_fmt(a)} vs {LABELS.get(other, other)} {_fmt(b)} ({a / b - 1:+.1%})"

    return Direction(paper, ours, lambda val: compare(val(row, metric), val(other, metric),
                                                      "higher" if higher else "lower"))


def _magnitude(row: str, other: str, metric: str, paper: str, amount: float, higher: bool = False) -> Direction:
    """A magnitude claim ("x% lower/higher"): checked against ``amount``, not the sign (issue 32)."""
    def ours(val: Callable[[str, str], list[float]]) -> str:
        a, b = _mean(val(row, metric)), _mean(val(other, metric))
        return (f"{LABELS.get(row, row)} {_fmt(a)} vs {LABELS.get(other, other)} {_fmt(b)} ({a / b - 1:+.1%}; "
                f"claimed {'+' if higher else '−'}{amount:.1%})")

    return Direction(paper, ours, lambda val: magnitude(val(row, metric), val(other, metric), amount,
                                                        "higher" if higher else "lower", rule=RULE))


def directions_iv() -> list[Direction]:
    rest = ("rand", "ff", "ls")
    return [
        _lowest("lwf1", rest, "avg_jct_s", "LWF-1 achieves the best results in terms of low average JCT"),
        _lowest("lwf1", rest, "util_pct", "LWF-1 achieves the best results in terms of high GPU utilization",
                higher=True),
        _lowest("lwf1", rest, "p95_jct_s", "over 95% of JCTs of LWF-1 are below 5000 s, which significantly "
                                           "outperforms the other three (our check: lowest p95 JCT)"),
        _lowest("rand", ("ff", "ls", "lwf1"), "avg_jct_s", "RAND performs the worst (highest average JCT)",
                higher=True),
        _beats("ff", "ls", "avg_jct_s", "FF surprisingly surpasses LS (average JCT)"),
    ]


def directions_v() -> list[Direction]:
    return [
        _magnitude("ada", "srsf1", "avg_jct_s", "Ada-SRSF saves 20.1% average JCT w.r.t. SRSF(1)", 0.201),
        _magnitude("ada", "srsf2", "avg_jct_s", "Ada-SRSF reduces the average JCT by 36.7% compared to SRSF(2)", 0.367),
        _lowest("ada", ("srsf1", "srsf2", "srsf3"), "avg_jct_s",
                "Ada-SRSF shows a considerable advantage among three scheduling algorithms (lowest average JCT)"),
        _magnitude("ada", "srsf1", "util_pct", "Ada-SRSF's average GPU utilization is 39.6% above SRSF(1)'s",
                   0.396, higher=True),
        _magnitude("ada", "srsf1", "p95_jct_s", "Ada-SRSF's 95th-percentile JCT is 1.56x better than SRSF(1)'s "
                   "(our check: ≥ 1 − 1/1.56 = 35.9% lower)", 1 - 1 / 1.56),
        _lowest("srsf1", ("srsf2", "srsf3"), "avg_jct_s",
                "avoiding all contention (SRSF(1)) is better than accepting it (SRSF(2), SRSF(3))"),
    ]


def directions_kappa(labels: Sequence[str]) -> list[Direction]:
    others = [k for k in labels if k != "lwf1"]
    return [_lowest("lwf1", others, "avg_jct_s", "κ = 1 generally gives the best results (lowest average JCT)")]


def check(episodes: pd.DataFrame, rows: dict[str, RunSpec], directions: list[Direction], seeds: Sequence[int],
          where: str) -> list[Claim]:
    """One :class:`Claim` per direction, judged by the verdict rule on per-seed values."""
    def val(label: str, metric: str) -> list[float]:
        return _values(episodes, rows[label], metric, seeds)

    return [Claim(where, d.paper, d.ours(val), d.test(val)) for d in directions]


#: Experiments whose claims are checked: name -> (where, directions factory).
CHECKED: dict[str, tuple[str, Callable[[dict[str, RunSpec]], list[Direction]]]] = {
    "table_iv": ("Table IV", lambda rows: directions_iv()),
    "table_v": ("Table V", lambda rows: directions_v()),
    "kappa": ("Fig. 5", lambda rows: directions_kappa(list(rows))),
    "table_iv_exclusive": ("Table IV, exclusive GPUs", lambda rows: directions_iv()),
    "table_v_exclusive": ("Table V, exclusive GPUs", lambda rows: directions_v()),
    "table_iv_defect": ("Table IV, probe defect", lambda rows: directions_iv()),
    "table_v_defect": ("Table V, probe defect", lambda rows: directions_v()),
}


def all_claims(episodes: pd.DataFrame, exps: dict[str, dict[str, RunSpec]], seeds: Sequence[int]) -> dict[str, list[Claim]]:
    out = {}
    for name, (where, factory) in CHECKED.items():
        if name in exps:
            out[name] = check(episodes, exps[name], factory(exps[name]), seeds, where)
    for name, rows in exps.items():
        if name.startswith("eta_"):
            out[name] = check(episodes, rows, directions_v(), seeds, f"Table V, η = {rows['ada'].eta_ms_per_mb:g} ms/MB")
        elif name.endswith(("_mem32", "_mem32_defect", "_mem32_exclusive")):
            factory = directions_iv if name.startswith("table_iv") else directions_v
            out[name] = check(episodes, rows, factory(), seeds, name.replace("_", " "))
    return out


# ============================================================================ report
def _table(episodes: pd.DataFrame, rows: dict[str, RunSpec], paper: dict[str, tuple[float, ...]] | None,
           seeds: Sequence[int]) -> str:
    """Mean over seeds (± sd) next to the paper, then one line per seed."""
    head = "| Method | Util. % | Avg JCT (s) | Median JCT (s) | p95 JCT (s) |"
    lines = [head, "|---|---:|---:|---:|---:|"]
    for label, spec in rows.items():
        sub = episodes[episodes.run == spec.key]
        cells = []
        for i, m in enumerate(METRICS):
            mean, sd = sub[m].mean(), sub[m].std(ddof=1) if len(sub) > 1 else float("nan")
            cell = _fmt(mean, 2 if m == "util_pct" else 1)
            if not math.isnan(sd):
                cell += f" ± {_fmt(sd, 2 if m == 'util_pct' else 0)}"
            if paper and label in paper:
                cell += f" (paper {_fmt(paper[label][i], 2 if m == 'util_pct' else 1)})"
            cells.append(cell)
        lines.append(f"| {LABELS.get(label, label)} | " + " | ".join(cells) + " |")
    lines += ["", "Per seed (util % / avg / median / p95 JCT s):", "",
              "| Method | " + " | ".join(f"seed {s}" for s in seeds) + " |",
              "|---|" + "---:|" * len(seeds)]
    for label, spec in rows.items():
        sub = episodes[episodes.run == spec.key].set_index("seed")
        cells = []
        for s in seeds:
            if s in sub.index:
                r = sub.loc[s]
                cells.append(f"{r.util_pct:.1f} / {r.avg_jct_s:,.0f} / {r.median_jct_s:,.0f} / {r.p95_jct_s:,.0f}")
            else:
                cells.append("—")
        lines.append(f"| {LABELS.get(label, label)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _both_ways(claims: dict[str, list[Claim]]) -> str:
    """Every Table IV/V claim with shared GPUs, exclusive GPUs (§III-B3) and the probe defect, side by side."""
    cols = [("shared GPUs (default)", ""), ("exclusive GPUs (§III-B3)", "_exclusive"), ("shared + probe defect", "_defect"),
            ("32 GB shared", "_mem32"), ("32 GB exclusive", "_mem32_exclusive")]
    lines = ["| claim | " + " | ".join(c for c, _ in cols) + " |", "|---|" + "---|" * len(cols)]
    for table in ("table_iv", "table_v"):
        for i, claim in enumerate(claims.get(table, [])):
            cells = []
            for _, suffix in cols:
                other = claims.get(table + suffix)
                if other is None:
                    cells.append("—")
                    continue
                v = other[i].verdict
                cells.append(f"**{v.outcome}** ({v.detail.split(' (margin')[0].replace('mean d ', '')})")
            lines.append(f"| {'IV' if table == 'table_iv' else 'V'}: {claim.paper} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _gap_section(episodes: pd.DataFrame, exps: dict[str, dict[str, RunSpec]], seeds: Sequence[int]) -> list[str]:
    """What was tried to explain why SRSF(n) stays above the paper's Table V (generated from the runs)."""
    variants = [("as run (16 GB GPUs, 1000–6000 iterations over 20 min)", "table_v"),
                ("32 GB GPUs (the authors' simulator)", "gap_mem32"),
                ("authors' job scale (10–60 iterations within 12 s, ×1000)", "gap_scale"),
                ("authors' job scale and 32 GB GPUs", "gap_scale_mem32")]
    variants = [(label, name) for label, name in variants if name in exps]
    if len(variants) < 2:
        return []
    rows = ["| variant | " + " | ".join(f"{LABELS[c]} avg JCT / util" for c in ("srsf1", "srsf2", "srsf3", "ada")) + " |",
            "|---|" + "---:|" * 4,
            "| paper | " + " | ".join(f"{PAPER_TABLE_V[c][1]:,.1f} / {PAPER_TABLE_V[c][0]:.1f}%"
                                      for c in ("srsf1", "srsf2", "srsf3", "ada")) + " |"]
    gaps = {}
    for label, name in variants:
        cells = []
        for c in ("srsf1", "srsf2", "srsf3", "ada"):
            jct = _mean(_values(episodes, exps[name][c], "avg_jct_s", seeds))
            util = _mean(_values(episodes, exps[name][c], "util_pct", seeds))
            cells.append(f"{jct:,.1f} / {util:.1f}%")
        gaps[label] = _mean(_values(episodes, exps[name]["srsf1"], "avg_jct_s", seeds)) / PAPER_TABLE_V["srsf1"][1] - 1
        rows.append(f"| {label} | " + " | ".join(cells) + " |")
    best = min(gaps, key=lambda k: abs(gaps[k]))
    spread = episodes[episodes.run == exps["table_v"]["srsf1"].key].avg_jct_s
    paper1 = PAPER_TABLE_V["srsf1"][1]
    above = [c for c in ("srsf1", "srsf2", "srsf3")
             if _mean(_values(episodes, exps["table_v"][c], "avg_jct_s", seeds)) > PAPER_TABLE_V[c][1]]
    sampling = (f"below every seed's ({spread.min():,.0f}–{spread.max():,.0f} s), so the paper's single job set "
                "(`microsoft-160`, one draw) is not within our seed-to-seed spread" if paper1 < spread.min() else
                f"within our seed-to-seed spread ({spread.min():,.0f}–{spread.max():,.0f} s)")
    return [
        "## Why the SRSF(n) rows stay above the paper's Table V (what was tried)",
        "",
        f"Our avg JCT is above the paper's for {', '.join(LABELS[c] for c in above) or 'none'} of the SRSF(n) rows "
        "(no AdaDUAL defect touches them). Each variant below changes one "
        "thing the authors' simulator (github.com/HKBU-HPML/dl-scheduling, `online/`) does differently from the "
        "paper's text; Table V's four rows under each (mean over seeds; paper in the first row):",
        "",
        *rows,
        "",
        f"SRSF(1)'s avg JCT vs the paper's {PAPER_TABLE_V['srsf1'][1]:,.1f} s: "
        + ", ".join(f"{label}: {gap:+.0%}" for label, gap in gaps.items())
        + f". The closest variant is *{best}*. The paper's SRSF(1) value is {sampling}.",
        "",
        "Not measured here (no option in the task-level engine, `ddl_gym/sim/tasklevel.py`): the authors' simulator "
        "tries queued jobs **largest first** (its default placement string `blf` sorts the queue by "
        "(−workers, −compute)), where the paper's Alg. 3 and our engine use SRSF order; it advances a 1 ms tick "
        "with integer task durations; and its LWF workload is each GPU's accumulated `makespan`. "
        "What remains of the gap after the variants above may come from these; that is not verified here.",
        "",
    ]


def write_report(out: Path, episodes: pd.DataFrame, exps: dict[str, dict[str, RunSpec]], settings: Settings,
                 total_wall: float, jobs: int, command: str) -> tuple[str, str]:
    """The report and the claims table; both written to ``out``."""
    seeds = settings.seeds
    claims = all_claims(episodes, exps, seeds)
    setting = ("QUICK: the authors' job scale (1–6 iterations within 1.2 s, times ×1000), no η or gap study"
               if settings.quick else "paper setting")
    v = exps["table_v"]

    def rel(a: RunSpec, b: RunSpec, metric: str) -> float:
        return 100 * (_mean(_values(episodes, a, metric, seeds)) / _mean(_values(episodes, b, metric, seeds)) - 1)

    lines = [
        "# Ada-SRSF (Wang et al. 2020) §V reproduction",
        "",
        f"Generated by `{command}` — seeds {list(seeds)}; {setting}. Do not edit: re-run the command"
        + ("." if settings.quick else f" (made at commit {made_at()}; too long for CI, whose check regenerates the "
                                      "quick variant, docs/reproductions/ada_srsf/report_quick.md)."),
        "",
        "16 servers x 4 V100-16GB, 10GbE, 160 jobs in 20 min (ada_srsf_workload), eq. (5) with a = 0, "
        "b = 0.856 ms/MB, η = 0.235 ms/MB unless stated, GPUs shared while memory fits unless stated, task-level "
        "engine (ddl_gym.sim.tasklevel). Values: mean ± sd over seeds (paper in brackets). GPU utilisation = "
        "total GPU compute time / (GPUs x makespan).",
        "",
        RULE.describe(),
        "",
        "## Headline: every Table IV/V claim with shared GPUs, exclusive GPUs and the probe defect",
        "",
        "§III-B3 of the paper says \"each GPU can only be occupied by one job at any time slot\", but the authors' "
        "simulator (and this project's default, scenario option `gpu_sharing`) lets jobs share a GPU while its "
        "memory (Table III) fits, their compute tasks time-multiplexed. Both readings are run; the defect column "
        "replicates the authors' AdaDUAL size check that advances the checked transfer (shared GPUs).",
        "",
        _both_ways(claims),
        "",
        "## Table IV — placement, each with Ada-SRSF (faithful AdaDUAL, shared GPUs)",
        "",
        _table(episodes, exps["table_iv"], PAPER_TABLE_IV, seeds),
        "",
        render_claims(claims["table_iv"]),
        "",
        "## Table V — all-reduce scheduling, each with LWF-1 (faithful AdaDUAL, shared GPUs)",
        "",
        _table(episodes, v, PAPER_TABLE_V, seeds),
        "",
        render_claims(claims["table_v"]),
        "",
        f"Ada-SRSF vs SRSF(1): avg JCT {rel(v['ada'], v['srsf1'], 'avg_jct_s'):+.1f}% (paper -20.1%), util "
        f"{rel(v['ada'], v['srsf1'], 'util_pct'):+.1f}% (paper +39.6%); vs SRSF(2): avg JCT "
        f"{rel(v['ada'], v['srsf2'], 'avg_jct_s'):+.1f}% (paper -36.7%).",
        "",
        "## Exclusive GPUs (§III-B3: one job per GPU)",
        "",
        _table(episodes, exps["table_iv_exclusive"], PAPER_TABLE_IV, seeds),
        "",
        render_claims(claims["table_iv_exclusive"]),
        "",
        _table(episodes, exps["table_v_exclusive"], PAPER_TABLE_V, seeds),
        "",
        render_claims(claims["table_v_exclusive"]),
        "",
    ]
    ex = exps["table_iv_exclusive"]
    if _values(episodes, ex["ff"], "avg_jct_s", seeds) == _values(episodes, ex["ls"], "avg_jct_s", seeds):
        lines += ["With exclusive GPUs, LS and FF coincide: a free GPU hosts no job, so every free GPU has zero "
                  "remaining workload and LS's least-workload choice falls back to GPU index order (FF).", ""]
    lines += [
        "## Probe defect replicated (the authors' simulator: AdaDUAL's size check advances the checked transfer)",
        "",
        "Table IV with the defect:",
        "",
        _table(episodes, exps["table_iv_defect"], PAPER_TABLE_IV, seeds),
        "",
        render_claims(claims["table_iv_defect"]),
        "",
        "Table V with the defect (SRSF(n) never probes, so its rows are the faithful ones):",
        "",
        _table(episodes, exps["table_v_defect"], PAPER_TABLE_V, seeds),
        "",
        render_claims(claims["table_v_defect"]),
        "",
        "## κ study (Fig. 5): LWF-κ with Ada-SRSF",
        "",
        _table(episodes, exps["kappa"], None, seeds),
        "",
        render_claims(claims["kappa"]),
        "",
    ]
    eta_names = [n for n in exps if n.startswith("eta_")]
    if eta_names:
        lines += ["## Sensitivity of Table V to η", ""]
        for name in eta_names:
            rows = exps[name]
            eta = rows["ada"].eta_ms_per_mb
            lines += [f"### η = {eta:g} ms/MB (AdaDUAL threshold b/(2(b+η)) = {0.856 / (2 * (0.856 + eta)):.3f})", "",
                      _table(episodes, rows, None, seeds), "", render_claims(claims[name]), ""]
    lines += _gap_section(episodes, exps, seeds)
    for name in ("table_iv_mem32", "table_v_mem32", "table_v_mem32_exclusive", "table_iv_mem32_defect",
                 "table_v_mem32_defect"):
        if name in exps:
            paper = PAPER_TABLE_IV if name.startswith("table_iv") else PAPER_TABLE_V
            lines += [f"## {name} (32 GB GPUs, as the authors' simulator builds them)", "",
                      _table(episodes, exps[name], paper, seeds), "", render_claims(claims[name]), ""]
    timing = episodes.groupby("run")[["wall_s", "cpu_s", "us_per_decision_point", "stat_decision_points",
                                      "stat_events"]].mean()
    lines += [
        "",
        "## Model and engine decisions (see ddl_gym/sim/tasklevel.py, baselines/ada_srsf/policy.py)",
        "",
        "- Event-driven continuous time on an integer-nanosecond clock (the paper uses 1 s slots, the authors' "
        "simulator 1 ms ticks); per event time: events, arrivals, placement pass, all-reduce pass, compute pass "
        "(Alg. 3 order).",
        "- Iteration = forward + backward task per GPU, then one all-reduce after all backward tasks; free on one "
        "server; eq. (5) across servers with k = max running all-reduces over the job's servers, re-rated (banked) "
        "whenever a task starts or ends; latency a charged once at the start.",
        "- GPUs shared while memory (Table III) fits (option `gpu_sharing`, default on; off = §III-B3's one job per "
        "GPU); one compute task at a time per GPU, chosen by SRSF on the remaining GPU compute time (decremented "
        "when a task ends); queue and all-reduces also in SRSF order (E_J = 0).",
        "- LWF workload L_g = sum of the remaining service R_J of the GPU's resident jobs (L_J = C_J x |G(J)| at "
        "placement); LS = least-workload GPUs for every job; FF = first fitting GPUs; RAND = uniform fitting GPUs.",
        "- AdaDUAL reads the remaining size of the running task without side effect; the defect rows reproduce the "
        "authors' simulator, where each check advances the checked transfer (continuous-time equivalent: the transfer "
        "runs 1 + p times as fast while p refused jobs keep checking it).",
    ]
    lines += ["", render_changes(CHANGES), ""]
    lines += [
        f"{TIMING_HEADING} (wall clock: not compared by the regeneration check)",
        "",
        f"Whole command: {total_wall:.0f} s with {jobs} worker process(es), {len(episodes)} episodes. "
        f"Per episode: {episodes.wall_s.mean():.1f} s mean, "
        f"{episodes.wall_s.min():.1f}–{episodes.wall_s.max():.1f} s (CPU {episodes.cpu_s.mean():.1f} s mean); "
        f"{episodes.us_per_decision_point.mean():.1f} µs per decision point.",
        "",
        "| Run | wall s | CPU s | µs / decision point | decision points | heap events |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for run, r in timing.iterrows():
        lines.append(f"| {run} | {r.wall_s:.1f} | {r.cpu_s:.1f} | {r.us_per_decision_point:.1f} | "
                     f"{r.stat_decision_points:,.0f} | {r.stat_events:,.0f} |")
    report = "\n".join(lines) + "\n"
    claims_md = "\n".join([
        f"# Ada-SRSF claims ({'quick: authors job scale' if settings.quick else 'paper setting'}; seeds {list(seeds)})",
        "",
        RULE.describe(),
        "",
        "## Every Table IV/V claim with shared GPUs, exclusive GPUs and the probe defect",
        "",
        _both_ways(claims),
        "",
        "## All claims",
        "",
        render_claims([c for name in claims for c in claims[name]]),
        "",
        render_changes(CHANGES),
        "",
    ])
    (out / "report.md").write_text(report)
    (out / "claims.md").write_text(claims_md)
    return report, claims_md


def plot_cdfs(out: Path, jct: pd.DataFrame, exps: dict[str, dict[str, RunSpec]]) -> list[Path]:
    """One JCT CDF figure per main experiment (all seeds pooled)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    titles = {
        "table_iv": "Table IV: placement, with Ada-SRSF",
        "table_v": "Table V: all-reduce scheduling, with LWF-1",
        "kappa": "Fig. 5: LWF-κ with Ada-SRSF",
        "table_iv_defect": "Table IV with the authors' probe defect",
        "table_v_defect": "Table V with the authors' probe defect",
        "table_iv_exclusive": "Table IV with exclusive GPUs (§III-B3)",
    }
    paths = []
    for name in titles:
        rows = exps.get(name)
        if not rows:
            continue
        fig, ax = plt.subplots(figsize=(5.5, 3.8))
        for label, spec in rows.items():
            values = np.sort(jct.loc[jct.run == spec.key, "jct_s"].to_numpy())
            if values.size:
                text = f"κ = {label[3:]}" if name == "kappa" else LABELS.get(label, label)
                ax.step(values, np.arange(1, values.size + 1) / values.size, where="post", label=text)
        ax.set_xscale("log")
        ax.set_xlabel("job completion time (s)")
        ax.set_ylabel("CDF")
        ax.set_title(titles[name], fontsize=10)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        path = out / f"jct_cdf_{name}.png"
        fig.savefig(path, dpi=120)
        plt.close(fig)
        paths.append(path)
    return paths


# ============================================================================ entry point
def build_parser() -> argparse.ArgumentParser:
    """The ``ddl-gym reproduce ada-srsf`` argument parser."""
    parser = argparse.ArgumentParser(prog="ddl-gym reproduce ada-srsf", description=(__doc__ or "").split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_seeds_argument(parser, "3 (--quick 2)")
    parser.add_argument("--out", type=Path, default=Path("results/ada_srsf"), help="output folder")
    parser.add_argument("--report", type=Path, default=None, help="also write the report here (docs/reproductions/ada_srsf/report.md)")
    parser.add_argument("--claims", type=Path, default=None,
                        help="also write the claims table here (docs/reproductions/ada_srsf/claims_quick.md with --quick)")
    parser.add_argument("--quick", action="store_true",
                        help="the authors' job scale (1-6 iterations within 1.2 s), 2 seeds, fewer κ, no η/gap study")
    parser.add_argument("--extras", action="store_true",
                        help="also Tables IV/V on 32 GB GPUs (with and without the defect)")
    parser.add_argument("--no-plots", action="store_true", help="skip the JCT CDF figures")
    add_workers_argument(parser, min(4, os.cpu_count() or 1))
    return parser


def parse_args(argv: Sequence[str] | None = None) -> tuple[argparse.Namespace, Settings]:
    """Parsed arguments and the settings they select (its ``seeds``: ``--seeds`` or the default)."""
    args = build_parser().parse_args(argv)
    seeds = seeds_or_default(args.seeds, 2 if args.quick else 3)
    return args, Settings(seeds=seeds, quick=bool(args.quick), extras=bool(args.extras))


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point (``ddl-gym reproduce ada-srsf``); returns the exit status."""
    args, settings = parse_args(argv)
    seeds = settings.seeds
    exps = experiments(settings)
    specs = list(dict.fromkeys(spec for rows in exps.values() for spec in rows.values()))
    args.out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    print(f"{len(specs)} distinct runs x {len(seeds)} seeds, {args.workers} processes -> {args.out}", flush=True)
    episodes, jct = run_all(specs, seeds, args.workers)
    total = time.perf_counter() - t0
    episodes.to_csv(args.out / "episodes.csv", index=False)
    jct.to_csv(args.out / "jct.csv", index=False)
    command = content_command("ada-srsf", list(argv) if argv is not None else sys.argv[1:])
    report, claims = write_report(args.out, episodes, exps, settings, total, args.workers, command)
    for path, text in ((args.report, report), (args.claims, claims)):
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    plots = [] if args.no_plots else plot_cdfs(args.out, jct, exps)
    print(f"wrote {args.out / 'report.md'}, {len(plots)} plots; {total:.0f} s")
    if not episodes.completed.all():
        print("some episodes did not complete")
        return 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
