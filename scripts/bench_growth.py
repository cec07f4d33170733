"""Growth of the job-level engine's cost with the number of jobs, counted in instructions (callgrind).

The growth exponents of ``ddl-gym bench`` (sections d and d2) are fitted to CPU seconds, which drift
with the shared machine's speed during a run (a slow spell at the largest size reads as super-linear
growth). Executed instructions do not drift. For each case this counts, with valgrind's callgrind,
the instructions of a run of the case at each size of ``--jobs`` and of a run that only builds it,
so imports and workload generation cancel, and fits the log-log slope of the simulated instructions
against jobs. It prints the slope that n·log n gives over the same sizes next to it (1 is linear,
2 quadratic), and, from the same runs, each size's regime (allocation utilisation, mean jobs
waiting, servers per started job, share of jobs split across servers, rates set per job), which
sets the work per job at any engine speed. Needs ``valgrind``; a case takes minutes (callgrind
runs ~50× slower).

Usage::

    python scripts/bench_growth.py                       # the default cases, 2,500 and 10,000 jobs
    python scripts/bench_growth.py --cases srsf+ff:16384:0.9,a-srpt:asrpt:0.9 --jobs 2000,8000
    python scripts/bench_growth.py --out docs/performance/bench_growth.md

Cases are ``POLICY:GPUS:LOAD`` as in ``scripts/bench_engine_compare.py``: a synthetic case of the
bench on GPUS GPUs at that offered load, or GPUS ``asrpt`` (the asrpt-sim world) or
``sjf-bco-offline`` (SJF-BCO's offline world on 1,024 GPUs); LOAD is ignored by those two.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import sys
from pathlib import Path
from typing import Sequence

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

from bench_engine_compare import case_label, engine_build, instructions, instructions_and_figures, parse_case  # noqa: E402,F401

REPO_ROOT = Path(__file__).resolve().parents[1]

# The wall-time exponents of the last reports that stood above n·log n, and one case per world.
DEFAULT_CASES = ("fifo+pack:1024:0.9", "srsf+ff:16384:0.9", "fifo+ls:1024:0.9", "srsf+rand:1024:0.9",
                 "a-srpt:asrpt:0.9", "wcs-workload:asrpt:0.9", "wcs-subtime:asrpt:0.9", "sjf-bco:sjf-bco-offline:0")


def growth_exponent(jobs: Sequence[float], simulated_instructions: Sequence[float]) -> float:
    """Least-squares slope of log(instructions) against log(jobs)."""
    if len(jobs) < 2 or min(simulated_instructions) <= 0:
        raise ValueError(f"need >= 2 sizes with positive simulated instructions, got {list(simulated_instructions)}")
    return float(np.polyfit(np.log(np.asarray(jobs, float)), np.log(np.asarray(simulated_instructions, float)), 1)[0])


def nlogn_exponent(jobs: Sequence[float]) -> float:
    """The slope :func:`growth_exponent` reads for a cost exactly proportional to n·log n over ``jobs``."""
    return growth_exponent(jobs, [n * math.log(n) for n in jobs])


def regime_cell(figures: dict[str, float]) -> str:
    """One size's regime: allocation utilisation, mean jobs waiting, servers per started job, split
    share, rates set per job (longer runs of a near-saturated case queue more and split more jobs,
    which costs more per job at any engine speed)."""
    return (f"{figures['gpu_alloc_util']:.2f} / {figures['mean_waiting']:,.0f} / {figures['servers_per_job']:.2f} / "
            f"{figures['split_share']:.0%} / {figures['rate_changes_per_job']:.2f}")


def measure_case(tree: str, policy: str, gpus: int | str, load: float,
                 sizes: Sequence[int]) -> tuple[list[float], list[dict[str, float]]]:
    """Simulated instructions (run minus build-only run) at each size, and the figures each run printed."""
    counts, figures = [], []
    for jobs in sizes:
        built = instructions(tree, "-", gpus, load, jobs)
        count, printed = instructions_and_figures(tree, policy, gpus, load, jobs)
        counts.append(float(count - built))
        figures.append(printed)
        print(f"  {case_label(policy, gpus, load)}, {jobs:,} jobs: {counts[-1] / jobs:,.0f} instructions/job",
              file=sys.stderr, flush=True)
    return counts, figures


def tree_revision(tree: str) -> str:
    """``tree``'s git commit (short), marked ``+changes`` when its tracked files differ from it."""
    import subprocess

    def git(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["git", "-C", tree, *args], capture_output=True, text=True)

    head = git("rev-parse", "--short", "HEAD")
    if head.returncode != 0:
        return "not a git checkout"
    dirty = git("status", "--porcelain", "--untracked-files=no").stdout.strip()
    return head.stdout.strip() + (" +changes" if dirty else "")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", default=str(REPO_ROOT), help="source tree to measure (default: this checkout)")
    parser.add_argument("--cases", default=",".join(DEFAULT_CASES), help="POLICY:GPUS:LOAD,...")
    parser.add_argument("--jobs", default="2500,10000", help="job counts, comma-separated (>= 2)")
    parser.add_argument("--out", help="also write the report to this file")
    args = parser.parse_args(argv)
    try:
        cases = [parse_case(c) for c in args.cases.split(",")]
        sizes = sorted({int(j) for j in args.jobs.split(",")})
    except ValueError as exc:
        parser.error(str(exc))
    if len(sizes) < 2 or sizes[0] < 1:
        parser.error(f"--jobs: need at least two distinct positive job counts, got {args.jobs!r}")
    reference = nlogn_exponent(sizes)
    command = f"python scripts/bench_growth.py --jobs {','.join(map(str, sizes))}"
    if args.cases != ",".join(DEFAULT_CASES):
        command += f" --cases {args.cases}"
    if Path(args.tree).resolve() != REPO_ROOT:
        command += f" --tree {args.tree}"
    head = " | ".join(f"instructions/job at {n:,}" for n in sizes)
    regime_head = " | ".join(f"regime at {n:,}" for n in sizes)
    lines = ["# ddl-gym engine growth in instructions", "",
             f"Python {platform.python_version()} on {platform.machine()}; `{command}`; measured code: "
             f"{tree_revision(args.tree)}, job-level engine {engine_build(args.tree)}. Simulated instructions = a run's count minus a build-only "
             "run's; exponent = log-log slope against jobs. Over these sizes n·log n gives "
             f"{reference:.2f}, linear 1, quadratic 2.", "",
             "Per-job cost rises with the job count where a case saturates as it runs longer (more jobs wait, "
             "more are placed across servers and re-rate their neighbours). The regime columns give, from the "
             "same runs: allocation utilisation / mean jobs waiting (Little's law) / servers per started job / "
             "share of jobs placed across servers / rates set per job.", "",
             f"| case | {head} | exponent | {regime_head} |", "|---|" + "---:|" * (2 * len(sizes) + 1)]
    for policy, gpus, load in cases:
        counts, figures = measure_case(args.tree, policy, gpus, load, sizes)
        per_job = " | ".join(f"{c / n:,.0f}" for c, n in zip(counts, sizes))
        states = " | ".join(regime_cell(f) for f in figures)
        lines.append(f"| {case_label(policy, gpus, load)} | {per_job} | {growth_exponent(sizes, counts):.2f} | {states} |")
        print(lines[-1], file=sys.stderr, flush=True)
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if args.out:
        Path(args.out).write_text(text)
        print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
