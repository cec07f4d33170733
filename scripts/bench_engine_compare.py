"""Job-level engine throughput of two source trees, measured in one run.

Usage::

    python scripts/bench_engine_compare.py OLD_TREE NEW_TREE [--repeats 5] [--jobs 50000]
    python scripts/bench_engine_compare.py OLD_TREE NEW_TREE --instructions [--jobs 8000]
    python scripts/bench_engine_compare.py OLD_TREE NEW_TREE --cases fifo+rand:1024:0.9,srsf+spread:1024:0.9
    python scripts/bench_engine_compare.py OLD_TREE NEW_TREE --cases a-srpt:asrpt:0.9 --jobs 8000 --reference

Each measurement runs in a fresh subprocess with ``PYTHONPATH=<tree>`` (the tree's own
``scripts/bench.py`` builds the case). Timing mode alternates old/new so machine load affects both
alike, and prints simulated jobs per CPU-second (min/median/max) and new/old of the medians.
``--instructions`` counts executed instructions with valgrind's callgrind instead, which does not
depend on machine load: it runs each case at ``jobs/4`` and ``jobs`` jobs and reports the
difference per job (start-up and imports cancel), and new/old of those.
GPUS ``asrpt`` is the bench's asrpt-sim world (section d2: 32x8 V100, pipeline jobs, ``jobs`` jobs;
its load is the scenario's); its instruction count subtracts a run that only builds the case.
GPUS ``sjf-bco-offline`` is section d2's offline SJF-BCO world (1,024 GPUs, all jobs at t = 0).
``--reference`` also times the pre-round code's fifo+pack on 100k jobs / 1,024 GPUs at load 0.9
(``bench.reference_tree``) once per repeat and prints the new tree's medians over its median (the
normalised reading of issue 13's goal).
Each measured tree gets ``ddl_gym/baselines`` and ``ddl_gym/agents`` links to its own folders
(:func:`prepare_tree`; else the editable install would hand it this checkout's policies).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # bench_common lives beside this script
from bench_common import (  # noqa: E402  (re-exported: engine_build, tree_env, prepare_tree keep their old home)
    CHECKOUT, TREE_PACKAGES, build_label, engine_build, prepare_tree, reference_fifo_pack, reference_tree, tree_env,
)

CASES = (("fifo+pack", 1024, 0.7), ("fifo+pack", 1024, 0.9), ("srsf+ca", 256, 0.7))
NAMED_WORLDS = ("asrpt", "sjf-bco-offline")  # GPUS values that name a bench world instead of a GPU count

_CHILD = r"""
import importlib.util, json, sys, numpy as np
spec = importlib.util.spec_from_file_location("b", sys.argv[1] + "/scripts/bench.py")
b = importlib.util.module_from_spec(spec); spec.loader.exec_module(b)
policy, gpus, load, jobs = sys.argv[2], sys.argv[3], float(sys.argv[4]), int(sys.argv[5])
if gpus in ("asrpt", "sjf-bco-offline"):
    cluster, workload, model = b._paper_case(gpus, jobs, 256 if gpus == "asrpt" else 1024, load)
else:
    cluster, workload, model = b.synthetic_case(int(gpus), jobs, load=load)
if policy != "-":  # "-": build the case only (the baseline an instruction count subtracts)
    print(json.dumps(b.simulate_jobs_per_second(cluster, workload, model, policy)))
"""


def parse_case(text: str) -> tuple[str, int | str, float]:
    """``POLICY:GPUS:LOAD`` -> (policy, GPU count or a :data:`NAMED_WORLDS` name, load); errors name the field."""
    parts = text.split(":")
    if len(parts) != 3 or not parts[0]:
        raise ValueError(f"case {text!r}: expected POLICY:GPUS:LOAD (e.g. fifo+pack:1024:0.9)")
    policy, gpus, load = parts
    if gpus not in NAMED_WORLDS and not gpus.isdigit():
        raise ValueError(f"case {text!r}: GPUS must be a number or one of {', '.join(NAMED_WORLDS)}, got {gpus!r}")
    try:
        load_value = float(load)
    except ValueError:
        raise ValueError(f"case {text!r}: LOAD must be a number, got {load!r}") from None
    return policy, gpus if gpus in NAMED_WORLDS else int(gpus), load_value


def case_label(policy: str, gpus: int | str, load: float) -> str:
    if isinstance(gpus, str):
        return f"{policy}, {'asrpt-sim' if gpus == 'asrpt' else gpus} world"
    return f"{policy}, {gpus:,} GPUs, load {load:g}"


def _child_args(tree: str, policy: str, gpus: int | str, load: float, jobs: int) -> list[str]:
    return ["-c", _CHILD, tree, policy, str(gpus), str(load), str(jobs)]


def _child_figures(stdout: str) -> dict[str, float]:
    """The figures a child run prints (:func:`bench.simulate_jobs_per_second`), from its last line."""
    return json.loads(stdout.strip().splitlines()[-1])


def measure(tree: str, policy: str, gpus: int | str, load: float, jobs: int) -> float:
    prepare_tree(tree)
    env = tree_env(tree)
    out = subprocess.run([sys.executable, *_child_args(tree, policy, gpus, load, jobs)],
                         env=env, capture_output=True, text=True, check=True, cwd="/tmp")
    return float(_child_figures(out.stdout)["jobs_per_cpu_s"])


def callgrind_run(python_args: list[str], tree: str | None = None, cwd: str | None = None) -> tuple[int, str]:
    """Instructions valgrind's callgrind counts for ``python <python_args>`` (whole process), and its stdout.

    ``tree``: a source tree put first on ``PYTHONPATH`` (None: this interpreter's own packages, i.e.
    this checkout). The tree is prepared first (:func:`prepare_tree`).
    """
    import re
    import tempfile

    prepare_tree(tree)
    env = tree_env(tree)
    with tempfile.TemporaryDirectory() as tmp:
        done = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={tmp}/cg.out", sys.executable,
                               *python_args], env=env, capture_output=True, text=True, cwd=cwd or tmp, timeout=3600)
    found = re.search(r"Collected : (\d+)", done.stderr)
    if done.returncode != 0 or found is None:
        raise RuntimeError(f"callgrind run failed: {done.stderr.strip().splitlines()[-1:]}")
    return int(found.group(1)), done.stdout


def callgrind_instructions(python_args: list[str], tree: str | None = None, cwd: str | None = None) -> int:
    """:func:`callgrind_run`'s instruction count alone."""
    return callgrind_run(python_args, tree, cwd)[0]


def instructions(tree: str, policy: str, gpus: int | str, load: float, jobs: int) -> int:
    """Instructions callgrind counts for one run of a bench case (whole process)."""
    return callgrind_instructions(_child_args(tree, policy, gpus, load, jobs), tree)


def instructions_and_figures(tree: str, policy: str, gpus: int | str, load: float, jobs: int) -> tuple[int, dict[str, float]]:
    """:func:`instructions` of a policy run, with the figures that run printed (its regime, not its timing)."""
    count, stdout = callgrind_run(_child_args(tree, policy, gpus, load, jobs), tree)
    return count, _child_figures(stdout)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=50_000)
    parser.add_argument("--instructions", action="store_true", help="count instructions with callgrind")
    parser.add_argument("--cases", help="POLICY:GPUS:LOAD,... instead of the default cases (e.g. fifo+rand:1024:0.9; "
                                            "GPUS 'asrpt': the asrpt-sim world; 'sjf-bco-offline': SJF-BCO's offline world)")
    parser.add_argument("--reference", action="store_true",
                        help="also time the pre-round fifo+pack (100k jobs, 1,024 GPUs) and print new ÷ it")
    args = parser.parse_args(argv)
    try:
        cases = CASES if not args.cases else tuple(parse_case(c) for c in args.cases.split(","))
    except ValueError as exc:
        parser.error(str(exc))
    if args.instructions:
        print("| case | old instructions/job | new instructions/job | new/old |")
        print("|---|---:|---:|---:|")
        small = max(1, args.jobs // 4)
        for policy, gpus, load in cases:
            per_job = []
            for tree in (args.old, args.new):
                if isinstance(gpus, str):  # named worlds differ by size: subtract the build instead
                    delta = instructions(tree, policy, gpus, load, args.jobs) - instructions(tree, "-", gpus, load, args.jobs)
                    per_job.append(delta / args.jobs)
                else:
                    delta = instructions(tree, policy, gpus, load, args.jobs) - instructions(tree, policy, gpus, load, small)
                    per_job.append(delta / (args.jobs - small))
            size = f"{args.jobs:,} jobs" if isinstance(gpus, str) else f"{small:,}->{args.jobs:,} jobs"
            print(f"| {case_label(policy, gpus, load)}, {size} | {per_job[0]:,.0f} | "
                  f"{per_job[1]:,.0f} | {per_job[1] / per_job[0]:.3f} |", flush=True)
        return 0
    reference: list[float] = []
    tree = None
    if args.reference:
        tree = reference_tree()
        if tree is None:
            parser.error("--reference: no pre-round tree (set DDL_GYM_REFERENCE_TREE)")
    fmt = lambda xs: f"{min(xs):,.0f} / {statistics.median(xs):,.0f} / {max(xs):,.0f}"  # noqa: E731
    rows = []
    for policy, gpus, load in cases:
        old, new = [], []
        for _ in range(args.repeats):
            if tree is not None:
                reference.append(reference_fifo_pack(tree, 1024, 100_000, 0.9)["jobs_per_cpu_s"])
            old.append(measure(args.old, policy, gpus, load, args.jobs))
            new.append(measure(args.new, policy, gpus, load, args.jobs))
        rows.append((policy, gpus, load, old, new))
    ref = statistics.median(reference) if reference else None
    print("| case | old jobs/CPU-s (min/med/max) | new jobs/CPU-s (min/med/max) | new/old (medians) |"
          + (" new ÷ reference (medians) |" if ref else ""))
    print("|---|---|---|---|" + ("---:|" if ref else ""))
    for policy, gpus, load, old, new in rows:
        print(f"| {case_label(policy, gpus, load)}, {args.jobs:,} jobs | {fmt(old)} | {fmt(new)} | "
              f"{statistics.median(new) / statistics.median(old):.3f} |"
              + (f" {statistics.median(new) / ref:.2f} |" if ref else ""), flush=True)
    if ref:
        print(f"\nreference: pre-round fifo+pack, 100,000 jobs on 1,024 GPUs, load 0.9 ({tree}): {fmt(reference)} jobs/CPU-s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
