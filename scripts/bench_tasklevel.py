"""Speed of the Ada-SRSF task-level engine per episode, against the engine before its speed-up.

Run ``python scripts/bench_tasklevel.py [--quick] [--repeats N] [--json PATH]`` (``ddl-gym bench``
calls it too). For each of the 16 combinations {lwf1, rand, ff, ls} × {ada, srsf1, srsf2, srsf3}
of the Ada-SRSF setting it simulates one episode of scenario ``ada-srsf`` (160 jobs on 16×4 V100s,
seed 0) with the current engine and, in the same process, with the engine as it was at commit
``BASELINE_COMMIT`` (loaded from git history into a private module, never into the package),
alternating old and new runs so that both see the same machine load. Per combination it reports
CPU seconds per episode (min/median/max over the repeats), the speed-up (median old / median new),
decision points, µs per decision point, and whether the schedules are identical (same digest of
every job's start, finish and placement time and GPUs; plus the digest recorded in
``tests/golden/tasklevel_digests.json`` when run from a source checkout). The headline is the
median over the 16 combinations of the per-combination speed-ups (goal: >= 3).

``--quick``: the same 16 combinations on a 48-job episode (the golden world), one repeat.

"new" is whichever build ``ddl_gym.sim.tasklevel`` uses: the mypyc-compiled one when
``scripts/build_native.py`` has been run (and its stamp matches the source), else plain
Python. With the compiled build the plain-Python engine is timed as well (third run of each
repeat, column "python CPU-s"), so one table shows both.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import platform
import statistics
import subprocess
import sys
import time
import types
from pathlib import Path
from collections.abc import Iterator
from typing import Any

import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[1]
#: The engine before the speed-up (task-level golden digests recorded from it).
BASELINE_COMMIT = "9a99d18"
PLACEMENTS = ("lwf1", "rand", "ff", "ls")
COMMS = ("ada", "srsf1", "srsf2", "srsf3")
GOAL = 3.0


# ============================================================================ the baseline engine
def load_baseline(commit: str = BASELINE_COMMIT) -> types.ModuleType | str:
    """The baseline's ``baselines/ada_srsf/policy.py`` bound to its own ``tasklevel.py``, or why not."""
    sources = {}
    for name, path in (("tasklevel", "ddl_gym/sim/tasklevel.py"), ("ada_srsf", "baselines/ada_srsf/policy.py")):
        try:
            sources[name] = subprocess.run(["git", "-C", str(REPO_ROOT), "show", f"{commit}:{path}"], check=True,
                                           capture_output=True, text=True).stdout
        except (OSError, subprocess.CalledProcessError) as exc:
            return f"baseline {commit} unavailable ({type(exc).__name__}: not a git checkout or commit missing)"
    modules = {}
    for name in ("tasklevel", "ada_srsf"):
        module_name = f"_bench_baseline_{name}"
        source = sources[name].replace("from ddl_gym.sim.tasklevel import", "from _bench_baseline_tasklevel import")
        module = types.ModuleType(module_name)
        module.__file__ = f"<{commit}:{name}>"
        sys.modules[module_name] = module  # dataclasses need the module registered
        exec(compile(source, module.__file__, "exec"), module.__dict__)
        modules[name] = module
    return modules["ada_srsf"]


# ============================================================================ one episode
def episode(quick: bool, seed: int = 0) -> tuple[Any, Any, Any]:
    """``(scenario, cluster, workload)``: the paper's 160-job episode, or the 48-job golden world."""
    from ddl_gym.scenarios import Scenario, SyntheticSource, get_scenario

    scenario = get_scenario("ada-srsf")
    if quick:
        params = (("gpu_mix", {1: 24, 2: 4, 4: 8, 8: 9, 16: 2, 32: 1}), ("name", "golden-task-48"),
                  ("window_s", 360.0))
        scenario = Scenario(name="ada-srsf-48", cluster=scenario.cluster, workload=SyntheticSource("ada_srsf", params),
                            model=scenario.model, engine="task", options=dict(scenario.options))
    cluster, workload = scenario.episode(seed)
    return scenario, cluster, workload


def schedule_digest(sim: Any) -> str:
    """sha256 of every job's start, finish and placement time (ns) and its GPUs (engine state)."""
    h = hashlib.sha256()
    for values in (sim.start_ns, sim.finish_ns, sim.placed_ns):
        h.update(np.asarray(values, dtype=np.int64).tobytes())
    h.update(repr([tuple(int(g) for g in ids) for ids in sim.job_gpus]).encode())
    return h.hexdigest()


@contextlib.contextmanager
def _engine_class(module: Any, cls: Any) -> Iterator[None]:
    """Make ``module``'s policies build ``cls`` (e.g. the plain-Python engine) for a while."""
    saved = module.TaskLevelSimulator
    module.TaskLevelSimulator = cls
    try:
        yield
    finally:
        module.TaskLevelSimulator = saved


def run_once(module: Any, placement: str, comm: str, scenario: Any, cluster: Any, workload: Any,
             seed: int = 0, engine: Any = None) -> dict[str, Any]:
    """CPU and wall seconds of one episode with ``module``'s policy and engine (or ``engine``)."""
    policy = module.AdaSRSFPolicy(placement, comm)
    with _engine_class(module, engine or module.TaskLevelSimulator):
        sim = policy.make_simulator(scenario, cluster, workload, np.random.default_rng(seed))
    c0, t0 = time.process_time(), time.perf_counter()
    sim.advance()
    cpu, wall = time.process_time() - c0, time.perf_counter() - t0
    return {"cpu_s": cpu, "wall_s": wall, "decision_points": sim.stats.decision_points,
            "digest": schedule_digest(sim), "sim": sim}


def _recorded_digests() -> dict[str, str]:
    path = REPO_ROOT / "tests" / "golden" / "tasklevel_digests.json"
    return json.loads(path.read_text()).get("paper160", {}) if path.exists() else {}


def _golden_digest(sim: Any) -> str | None:
    """The digest of ``tests/tasklevel_golden.py`` (source checkout only)."""
    try:
        sys.path.insert(0, str(REPO_ROOT))
        from tests.tasklevel_golden import _schedule_digest
    except ImportError:
        return None
    finally:
        sys.path.remove(str(REPO_ROOT))
    return _schedule_digest(sim, sim.result())


def _spread(values: list[float]) -> dict[str, float]:
    return {"min": min(values), "median": statistics.median(values), "max": max(values)}


# ============================================================================ report
def run(quick: bool = False, repeats: int | None = None, combos: list[tuple[str, str]] | None = None,
        baseline: str = BASELINE_COMMIT) -> dict[str, Any]:
    """All figures as a dict (see the module docstring)."""
    import ddl_gym.baselines.ada_srsf.policy as current
    from ddl_gym.sim import tasklevel

    pure = tasklevel.PurePythonTaskLevelSimulator if tasklevel.BUILD == "native" else None

    repeats = repeats or (1 if quick else 3)
    combos = combos or [(p, c) for p in PLACEMENTS for c in COMMS]
    old = load_baseline(baseline)
    scenario, cluster, workload = episode(quick)
    recorded = {} if quick else _recorded_digests()
    report: dict[str, Any] = {
        "quick": quick, "repeats": repeats, "python": platform.python_version(), "machine": platform.machine(),
        "episode": f"{workload.num_jobs} jobs on {cluster.num_gpus} GPUs (scenario ada-srsf, seed 0)",
        "baseline": baseline if not isinstance(old, str) else old, "build": tasklevel.BUILD, "rows": [],
    }
    for placement, comm in combos:
        row: dict[str, Any] = {"combination": f"{placement}+{comm}", "new_cpu_s": [], "old_cpu_s": [],
                               "python_cpu_s": []}
        for _ in range(repeats):
            if not isinstance(old, str):
                before = run_once(old, placement, comm, scenario, cluster, workload)
                row["old_cpu_s"].append(before["cpu_s"])
                row["old_digest"] = before["digest"]
                row["old_decision_points"] = before["decision_points"]
                del before
            if pure is not None:
                plain = run_once(current, placement, comm, scenario, cluster, workload, engine=pure)
                row["python_cpu_s"].append(plain["cpu_s"])
                row["python_digest"] = plain["digest"]
                del plain
            after = run_once(current, placement, comm, scenario, cluster, workload)
            row["new_cpu_s"].append(after["cpu_s"])
            row["new_digest"] = after["digest"]
            row["decision_points"] = after["decision_points"]
        key = f"{placement}+{comm}/seed0"
        if key in recorded:
            row["matches_recorded"] = _golden_digest(after["sim"]) == recorded[key]
        row["new"] = _spread(row["new_cpu_s"])
        row["us_per_decision_point"] = 1e6 * row["new"]["median"] / max(1, row["decision_points"])
        if row["python_cpu_s"]:
            row["python"] = _spread(row["python_cpu_s"])
        if row["old_cpu_s"]:
            row["old"] = _spread(row["old_cpu_s"])
            row["speedup"] = row["old"]["median"] / row["new"]["median"]
            row["identical"] = row["old_digest"] == row["new_digest"] == row.get("python_digest", row["new_digest"])
            if "python" in row:
                row["python_speedup"] = row["old"]["median"] / row["python"]["median"]
        report["rows"].append(row)
        print(f"  {row['combination']}: new {row['new']['median']:.2f} s"
              + (f", old {row['old']['median']:.2f} s, x{row['speedup']:.2f}, identical={row['identical']}"
                 if "old" in row else ""), file=sys.stderr, flush=True)
    speedups = [r["speedup"] for r in report["rows"] if "speedup" in r]
    if speedups:
        report["median_speedup"] = statistics.median(speedups)
        report["speedup_spread"] = _spread(speedups)
        python = [r["python_speedup"] for r in report["rows"] if "python_speedup" in r]
        if python:
            report["python_speedup_spread"] = _spread(python)
        report["all_identical"] = all(r["identical"] for r in report["rows"])
    return report


def format_report(report: dict[str, Any]) -> str:
    """Markdown table of :func:`run`'s figures."""
    lines = [f"## Task-level engine (Ada-SRSF) per episode{' (quick)' if report['quick'] else ''}", "",
             f"{report['episode']}; CPU seconds per episode, min / median / max over {report['repeats']} "
             f"repeat(s), old = engine at {report['baseline']}, new = this engine "
             f"({'compiled with mypyc' if report['build'] == 'native' else 'plain Python'})"
             f"{', python = this engine as plain Python' if report['build'] == 'native' else ''}, runs alternating "
             f"in one process (Python {report['python']}).", "",
             "| combination | new CPU-s | old CPU-s | speed-up | python CPU-s | python speed-up | decision points "
             "| µs / decision point | identical schedule | = recorded digest |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---|---|"]

    def spread(s: dict[str, float] | None) -> str:
        return f"{s['min']:.2f} / {s['median']:.2f} / {s['max']:.2f}" if s else "–"

    for r in report["rows"]:
        recorded = {True: "yes", False: "**NO**"}.get(r.get("matches_recorded"), "–")
        identical = {True: "yes", False: "**NO**"}.get(r.get("identical"), "–")
        speedup = f"×{r['speedup']:.2f}" if "speedup" in r else "–"
        python_speedup = f"×{r['python_speedup']:.2f}" if "python_speedup" in r else "–"
        lines.append(f"| {r['combination']} | {spread(r['new'])} | {spread(r.get('old'))} | {speedup} | "
                     f"{spread(r.get('python'))} | {python_speedup} | "
                     f"{r['decision_points']:,} | {r['us_per_decision_point']:.1f} | {identical} | {recorded} |")
    if "median_speedup" in report:
        s = report["speedup_spread"]
        verdict = "meets" if report["median_speedup"] >= GOAL else "below"
        lines += ["", f"Median speed-up over the {len(report['rows'])} combinations: ×{report['median_speedup']:.2f} "
                      f"(min ×{s['min']:.2f}, max ×{s['max']:.2f}): {verdict} the goal of ×{GOAL:g}; schedules "
                      f"{'identical in every combination' if report['all_identical'] else 'DIFFER'}."]
        if "python_speedup_spread" in report:
            p = report["python_speedup_spread"]
            lines += ["", f"Plain-Python build of this engine: median ×{p['median']:.2f} "
                          f"(min ×{p['min']:.2f}, max ×{p['max']:.2f}) over the baseline."]
    else:
        lines += ["", f"No baseline: {report['baseline']}."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="48-job episode, one repeat")
    parser.add_argument("--repeats", type=int, help="runs per combination and engine (default 3, quick 1)")
    parser.add_argument("--only", help="comma-separated combinations, e.g. lwf1+ada,ff+srsf1")
    parser.add_argument("--baseline", default=BASELINE_COMMIT, help="git commit of the old engine")
    parser.add_argument("--json", type=Path, help="also write the figures as JSON here")
    args = parser.parse_args(argv)
    combos = [tuple(c.split("+")) for c in args.only.split(",")] if args.only else None
    report = run(quick=args.quick, repeats=args.repeats, combos=combos, baseline=args.baseline)  # type: ignore[arg-type]
    print(format_report(report))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        for row in report["rows"]:
            row.pop("sim", None)
        args.json.write_text(json.dumps(report, indent=2))
        print(f"\nwrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
