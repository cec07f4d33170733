"""Cards of the task suite: measured figures per task and the generated ``docs/suite.md``.

``python -m ddl_gym.suite_cards --write docs/suite.md`` (or ``ddl-gym scenarios --stats --suite
--write docs/suite.md``) regenerates the file and, next to it, ``docs/suite.json`` (every card field,
per-seed figures included: :func:`load_cards` reads it, e.g. for the learning side's comparisons);
``--quick`` uses the first 2 validation and 3 test seeds (for smoke runs; the committed files are
the full protocol).

Per task (protocol of :mod:`ddl_gym.suite`):

* **best reference** — the reference with the lowest mean avg JCT over the task's validation seeds;
* on the **test** seeds, for that reference: avg JCT (mean ± 95 % CI), compute utilisation and
  contention share (definitions of :mod:`ddl_gym.scenario_stats`);
* **offered load** (:func:`ddl_gym.scenario_stats.offered_load`) and **spread share** (jobs larger
  than the largest server: they cannot avoid the NICs), means over the test episodes;
* **LP bound** — :func:`ddl_gym.sim.lower_bound.lower_bound` per test episode (mean), and
  **LP headroom** — per test seed ``(best reference avg JCT − LP bound) / LP bound``, mean ± 95 % CI.
  A learned scheduler cannot gain more than this over the best reference.
* where the best reference **preempts** (``las``, ``gittins``: the ``DDLCluster`` envs' agents only
  start jobs), the best non-preemptive reference on the validation seeds and its test figures too.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ddl_gym.suite import SUITE_VERSION, TASKS, TIERS, Task, get_task

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DOC = REPO_ROOT / "docs" / "suite.md"
DEFAULT_JSON = DEFAULT_DOC.with_suffix(".json")
DEFINITIONS_BEGIN = "<!-- suite definitions: begin -->"
DEFINITIONS_END = "<!-- suite definitions: end -->"


@dataclass(frozen=True)
class TaskCard:
    """Measured card of one task (module docstring)."""

    task: str
    tier: str
    best_reference: str
    validation_jct_s: dict[str, float]
    validation_seeds: tuple[int, ...]
    test_seeds: tuple[int, ...]
    best_jct_s: float
    best_jct_ci_s: float
    lp_bound_s: float
    headroom: float
    headroom_ci: float
    compute_util: float
    contention_share: float
    offered_load: float
    spread_share: float
    headroom_per_seed: tuple[float, ...]
    best_jct_per_seed: tuple[float, ...] = ()
    lp_bound_per_seed: tuple[float, ...] = ()
    #: when the best reference preempts (the env's agents only start jobs): the best non-preemptive one
    nonpreemptive_reference: str = ""
    nonpreemptive_jct_s: float = math.nan
    nonpreemptive_headroom: float = math.nan
    nonpreemptive_headroom_ci: float = math.nan


def _episode(job: tuple[str, str, int]) -> dict[str, float]:
    """Run ``policy`` on ``scenario``'s episode ``seed`` as the harness does and measure it."""
    from ddl_gym.harness import load_policy_spec, simulate
    from ddl_gym.scenario_stats import contention_share
    from ddl_gym.scenarios import get_scenario

    scenario_name, policy, seed = job
    result = simulate(load_policy_spec(policy), get_scenario(scenario_name), seed).result
    summary = result.summary()
    return {"avg_jct_s": float(summary["avg_jct_s"]), "compute_util": float(summary["gpu_compute_util"]),
            "contention_share": contention_share(result)}


def _bound(job: tuple[str, int]) -> dict[str, float]:
    from ddl_gym.scenario_stats import offered_load
    from ddl_gym.scenarios import get_scenario
    from ddl_gym.sim.lower_bound import lower_bound

    scenario_name, seed = job
    scenario = get_scenario(scenario_name)
    cluster, workload = scenario.episode(seed)
    lb = lower_bound(workload, cluster, scenario.model, engine=scenario.engine, options=scenario.options)
    return {"lp_bound_s": lb.avg_jct_s, "offered_load": offered_load(cluster, workload, scenario.model),
            "spread_share": float(np.mean(workload.gpus > cluster.max_server_gpus))}


def _map(fn: Any, jobs: list[Any], workers: int) -> list[Any]:
    if workers > 1 and len(jobs) > 1:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            return list(pool.map(fn, jobs, chunksize=max(1, len(jobs) // (4 * workers))))
    return [fn(j) for j in jobs]


def best_reference(task: Task, seeds: Sequence[int] | None = None, workers: int = 1) -> tuple[str, dict[str, float]]:
    """The task's best reference on its validation seeds (lowest mean avg JCT) and every reference's mean."""
    seeds = list(task.validation_seeds if seeds is None else seeds)
    jobs = [(task.scenario, p, s) for p in task.references for s in seeds]
    runs = _map(_episode, jobs, workers)
    means: dict[str, float] = {}
    for i, policy in enumerate(task.references):
        means[policy] = float(np.mean([r["avg_jct_s"] for r in runs[i * len(seeds):(i + 1) * len(seeds)]]))
    best = min(task.references, key=lambda p: (means[p], task.references.index(p)))
    return best, means


def task_card(task: Task, *, validation_seeds: Sequence[int] | None = None, test_seeds: Sequence[int] | None = None,
              workers: int = 1) -> TaskCard:
    """Measure one task's card (module docstring)."""
    from ddl_gym.harness import mean_ci

    val = list(task.validation_seeds if validation_seeds is None else validation_seeds)
    test = list(task.test_seeds if test_seeds is None else test_seeds)
    best, means = best_reference(task, val, workers)
    runs = _map(_episode, [(task.scenario, best, s) for s in test], workers)
    bounds = _map(_bound, [(task.scenario, s) for s in test], workers)
    jct = np.array([r["avg_jct_s"] for r in runs])
    lp = np.array([b["lp_bound_s"] for b in bounds])
    if np.any(jct < lp):  # the bound's proof says this cannot happen: fail loudly, never print it
        seed = test[int(np.flatnonzero(jct < lp)[0])]
        raise AssertionError(f"task {task.name}: {best} beat the LP lower bound on seed {seed}")
    head = (jct - lp) / lp
    jct_mean, jct_ci, _ = mean_ci(jct)
    head_mean, head_ci, _ = mean_ci(head)
    np_ref, np_jct, np_head, np_ci = "", math.nan, math.nan, math.nan
    if preempts(best):
        candidates = [p for p in task.references if not preempts(p)]
        if candidates:
            np_ref = min(candidates, key=lambda p: (means[p], task.references.index(p)))
            np_runs = np.array([r["avg_jct_s"] for r in _map(_episode, [(task.scenario, np_ref, s) for s in test], workers)])
            np_jct = float(np_runs.mean())
            np_head, np_ci, _ = mean_ci((np_runs - lp) / lp)
    return TaskCard(
        task=task.name, tier=task.tier, best_reference=best, validation_jct_s=means, validation_seeds=tuple(val),
        test_seeds=tuple(test), best_jct_s=jct_mean, best_jct_ci_s=jct_ci, lp_bound_s=float(lp.mean()),
        headroom=head_mean, headroom_ci=head_ci,
        compute_util=float(np.mean([r["compute_util"] for r in runs])),
        contention_share=float(np.mean([r["contention_share"] for r in runs])),
        offered_load=float(np.mean([b["offered_load"] for b in bounds])),
        spread_share=float(np.mean([b["spread_share"] for b in bounds])),
        headroom_per_seed=tuple(float(h) for h in head),
        best_jct_per_seed=tuple(float(x) for x in jct), lp_bound_per_seed=tuple(float(x) for x in lp),
        nonpreemptive_reference=np_ref, nonpreemptive_jct_s=np_jct, nonpreemptive_headroom=np_head,
        nonpreemptive_headroom_ci=np_ci,
    )


def preempts(policy: str) -> bool:
    """Whether the reference ``policy`` declares the engine's ``preempt`` capability."""
    from ddl_gym.harness import load_policy_spec

    return "preempt" in (getattr(load_policy_spec(policy), "capabilities", None) or ())


def cards_json(cards: Sequence[TaskCard], command: str) -> str:
    """Every card field as JSON (``{"suite_version", "command", "cards": {task: {...}}}``); a figure that does
    not apply (no non-preemptive alternative needed) is written as ``NaN``, which :func:`json.loads` reads."""
    from dataclasses import asdict

    body = {"suite_version": SUITE_VERSION, "command": command, "cards": {c.task: asdict(c) for c in cards}}
    return json.dumps(body, indent=1, sort_keys=False) + "\n"


def load_cards(path: str | Path = DEFAULT_JSON) -> dict[str, TaskCard]:
    """The committed cards by task name (written by ``--write``); ValueError for another suite version."""
    data = json.loads(Path(path).read_text())
    if data.get("suite_version") != SUITE_VERSION:
        raise ValueError(f"{path}: cards of suite version {data.get('suite_version')!r}, this code is version "
                         f"{SUITE_VERSION}; regenerate them (python -m ddl_gym.suite_cards --write docs/suite.md)")
    out = {}
    for name, fields in data["cards"].items():
        fields = {k: tuple(v) if isinstance(v, list) else v for k, v in fields.items()}
        out[name] = TaskCard(**fields)
    return out


def suite_cards(tasks: Sequence[Task] = TASKS, *, quick: bool = False, workers: int = 1,
                progress: bool = False) -> list[TaskCard]:
    """Cards of ``tasks`` (``quick``: 2 validation and 3 test seeds)."""
    out = []
    for task in tasks:
        val = list(task.validation_seeds)[:2] if quick else None
        test = list(task.test_seeds)[:3] if quick else None
        out.append(task_card(task, validation_seeds=val, test_seeds=test, workers=workers))
        if progress:
            c = out[-1]
            print(f"{c.task}: best {c.best_reference}, headroom {100 * c.headroom:+.1f}%", file=sys.stderr, flush=True)
    return out


# ---------------------------------------------------------------------------- markdown
def _load(x: float) -> str:
    return "offline" if not math.isfinite(x) else f"{x:.2f}"


def card_table(cards: Sequence[TaskCard]) -> str:
    """The card table (one row per task)."""
    lines = ["| task | tier | compute util. | contention share | offered load | jobs spread by size | best reference "
             "(validation) | its avg JCT, test (s) | LP bound (s) | LP headroom |",
             "|---|---|---:|---:|---:|---:|---|---:|---:|---:|"]
    for c in cards:
        lines.append(f"| `{c.task}` | {c.tier} | {100 * c.compute_util:.0f}% | {100 * c.contention_share:.1f}% | "
                     f"{_load(c.offered_load)} | {100 * c.spread_share:.0f}% | `{c.best_reference}` | "
                     f"{c.best_jct_s:.0f} ± {c.best_jct_ci_s:.0f} | {c.lp_bound_s:.0f} | "
                     f"{100 * c.headroom:+.1f}% ± {100 * c.headroom_ci:.1f}% |")
    return "\n".join(lines)


def _range(r: range) -> str:
    return f"{r.start:,}–{r.stop - 1:,}"


def definitions_table(tasks: Sequence[Task] = TASKS) -> str:
    """The static part of the suite (no simulation): ids, scenarios, seeds, references, worlds."""
    from ddl_gym.scenarios import get_scenario

    lines = [f"Suite version {SUITE_VERSION}.", "",
             "| task | env id | tier | scenario (train scenario) | cluster | NIC | jobs, arrival window (first test "
             "episode) | models | train / validation / test seeds | scheduler sees | references |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for t in tasks:
        scenario = get_scenario(t.scenario)
        cluster = scenario.sample_cluster(np.random.default_rng(0))
        sizes = sorted(set(cluster.gpus_per_server))
        shape = f"{cluster.num_servers}×{sizes[0]}" if len(sizes) == 1 else f"{cluster.num_servers} servers"
        nic = f"{cluster.inter_bandwidth * 8 / 1e9:g} Gb/s"
        _, workload = scenario.episode(int(t.test_seeds[0]))
        window = float(workload.arrival.max() - workload.arrival.min())
        jobs = f"{workload.num_jobs}, " + (f"{window / 60:.0f} min" if window > 0 else "all at t = 0")
        models = ", ".join(sorted(m.name for m in workload.models))
        scen = f"`{t.scenario}`" + (f" (`{t.train_scenario}`)" if t.train_scenario else "")
        seeds = f"{_range(t.train_seeds)} / {_range(t.validation_seeds)} / {_range(t.test_seeds)}"
        sees = "remaining work" if t.clairvoyant else "attained service only"
        refs = (f"{len(t.references)} clairvoyant job-level references" if t.clairvoyant
                else ", ".join(f"`{r}`" for r in t.references))
        lines.append(f"| `{t.name}` | `{t.env_id}` | {t.tier} | {scen} | {shape} | {nic} | {jobs} | {models} | {seeds} | "
                     f"{sees} | {refs} |")
    lines += ["", "Worlds: " + "; ".join(f"`{t.scenario}`: {get_scenario(t.scenario).description}" for t in tasks
                                          if t.tier == "realistic") + "."]
    return "\n".join(lines)


def _preemptive_note(cards: Sequence[TaskCard]) -> list[str]:
    notes = [f"`{c.task}`: the best reference `{c.best_reference}` preempts, which a `DDLCluster` agent cannot; the "
             f"best non-preemptive reference (validation) is `{c.nonpreemptive_reference}`: avg JCT "
             f"{c.nonpreemptive_jct_s:.0f} s on the test seeds, LP headroom {100 * c.nonpreemptive_headroom:+.1f}% ± "
             f"{100 * c.nonpreemptive_headroom_ci:.1f}%." for c in cards if c.nonpreemptive_reference]
    return [" ".join(notes), ""] if notes else []


def suite_markdown(cards: Sequence[TaskCard], command: str, quick: bool = False) -> str:
    """The whole ``docs/suite.md``."""
    tiers = {tier: [c.task for c in cards if c.tier == tier] for tier in TIERS}
    rich = [c.task for c in cards if c.tier == "realistic" and c.headroom >= 0.20]
    lines = [
        "# The task suite (`DDLCluster-<Task>-v1`)", "",
        f"Generated by `{command}` — do not edit by hand. Definitions: `ddl_gym/suite.py`; worlds and their "
        "calibration sources: `ddl_gym/suite_scenarios.py`; card protocol: `ddl_gym/suite_cards.py`; LP bound "
        "(with its proof): `ddl_gym/sim/lower_bound.py`." + (" **Quick variant: 2 validation and 3 test seeds.**"
                                                             if quick else ""), "",
        "## Tasks", "", DEFINITIONS_BEGIN, definitions_table(), DEFINITIONS_END, "",
        "## Cards", "",
        "Best reference chosen on the validation seeds (lowest mean avg JCT); every other figure on the test seeds. "
        "LP headroom = (best reference's avg JCT − LP bound) / LP bound per seed, mean ± 95 % CI. Compute "
        "utilisation and contention share are the best reference's; offered load and the share of jobs larger "
        "than a server are properties of the episodes.", "",
        card_table(cards), "",
        *_preemptive_note(cards),
        f"Realistic tasks with LP headroom ≥ 20 %: {len(rich)} ({', '.join(f'`{t}`' for t in rich) or 'none'}). "
        + "; ".join(f"{tier}: {len(names)}" for tier, names in tiers.items()) + " tasks.", "",
        "## Validation means of every reference (avg JCT, s)", "",
    ]
    for c in cards:
        ranked = sorted(c.validation_jct_s.items(), key=lambda kv: kv[1])
        lines.append(f"* `{c.task}` (seeds {c.validation_seeds[0]}–{c.validation_seeds[-1]}): "
                     + ", ".join(f"`{p}` {v:.0f}" for p, v in ranked))
    return "\n".join(lines) + "\n"


def definitions_section(text: str) -> str:
    """The definitions block of a generated ``docs/suite.md`` (for the regeneration test)."""
    start, end = text.find(DEFINITIONS_BEGIN), text.find(DEFINITIONS_END)
    if start < 0 or end < 0:
        raise ValueError("no suite definitions block (markers missing)")
    return text[start + len(DEFINITIONS_BEGIN):end].strip()


def main(argv: Sequence[str] | None = None, prog: str = "python -m ddl_gym.suite_cards") -> int:
    parser = argparse.ArgumentParser(prog=prog, description="measure the suite's cards (LP headroom included)")
    parser.add_argument("--task", action="append", help="only this task (repeatable)")
    parser.add_argument("--quick", action="store_true", help="2 validation and 3 test seeds per task")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--write", default=None, help=f"write the markdown there (e.g. {DEFAULT_DOC.relative_to(REPO_ROOT)})")
    args = parser.parse_args(argv)
    tasks = [get_task(n) for n in args.task] if args.task else list(TASKS)
    cards = suite_cards(tasks, quick=args.quick, workers=max(1, args.workers), progress=True)
    command = prog + "".join(f" --task {t}" for t in args.task or []) + (" --quick" if args.quick else "") \
        + (f" --write {args.write}" if args.write else "")
    if args.write:
        path = Path(args.write)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(suite_markdown(cards, command, args.quick))
        path.with_suffix(".json").write_text(cards_json(cards, command))
        print(f"wrote {path} and {path.with_suffix('.json')}", file=sys.stderr)
    else:
        print(card_table(cards))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
