"""Run every scenario `ddl-gym list` shows from a fresh copy of the tracked tree, with no ../shared beside it.

Copies the files git tracks (a fresh clone's content; ``--include-untracked`` adds untracked files that
git does not ignore, for a check before committing) into a temporary folder, unsets
``DDL_GYM_TRACES``, and for each listed scenario runs ``ddl-gym eval --scenario X --seeds 1`` with one
suitable cheap policy in a subprocess. Each scenario ends in one of:

* ``ran``: the episode ran on the data the scenario names (``jobs`` is the summary's job count);
* ``needs``: the run stopped with the one-line ``needs FILE`` error, and ``ddl-gym list`` showed the
  same ``needs`` note for it;
* ``FAIL``: anything else (a traceback, a different error, a ``needs`` line ``list`` did not show, a
  timeout).

Usage: ``python scripts/fresh_clone_check.py [--only NAME,NAME] [--timeout S] [--markdown]``; exit
status 1 if any scenario fails.
"""

from __future__ import annotations

import argparse
import csv
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: scenario-name prefix -> a cheap policy that applies to it (first match wins; default fifo+pack).
POLICY_FOR: tuple[tuple[str, str], ...] = (
    ("ada-srsf-", "fifo+pack"), ("ada-srsf", "srsf1+ff"), ("smd-", "esw"), ("aonline-", "fifo-mr"),
)
#: scenarios whose one episode takes minutes on 2 cores: their data is resolved, the episode is not run.
RESOLVE_ONLY: tuple[str, ...] = ("asrpt-sim-full",)


def copy_tree(dest: Path, include_untracked: bool = False) -> None:
    """Copy the tracked files (and optionally untracked, non-ignored ones) of this checkout to ``dest``."""
    args = ["git", "ls-files", "-z", "--cached"] + (["--others", "--exclude-standard"] if include_untracked else [])
    names = subprocess.run(args, cwd=ROOT, capture_output=True, check=True).stdout.split(b"\0")
    for raw in filter(None, names):
        rel = raw.decode()
        src = ROOT / rel
        if not src.is_file():
            continue  # deleted in the work tree
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, target)


def clean_env(tree: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DDL_GYM_TRACES", "DDL_GYM_CACHE")}
    env["PYTHONPATH"] = str(tree)
    env["DDL_GYM_PURE_PYTHON"] = "1"  # compiled builds are not tracked
    env.setdefault("OMP_NUM_THREADS", "1")
    return env


def listed(tree: Path, env: dict[str, str]) -> dict[str, str]:
    """Scenario name -> its `ddl-gym list` description."""
    out = subprocess.run([sys.executable, "-m", "ddl_gym.cli", "list"], cwd=tree, env=env, capture_output=True,
                         text=True, timeout=300)
    if out.returncode != 0:
        raise SystemExit(f"ddl-gym list failed: {out.stderr.strip()[-500:]}")
    rows: dict[str, str] = {}
    in_scenarios = False
    for line in out.stdout.splitlines():
        if line.startswith("Scenarios"):
            in_scenarios = True
            continue
        if in_scenarios and not line.strip():
            break
        if in_scenarios:
            match = re.match(r"\s+(\S+)\s+(.*)", line)
            if match:
                rows[match[1]] = match[2]
    return rows


def policy_for(name: str) -> str:
    return next((p for prefix, p in POLICY_FOR if name.startswith(prefix)), "fifo+pack")


def check(tree: Path, env: dict[str, str], name: str, description: str, timeout: float) -> dict[str, str]:
    listed_needs = re.findall(r"needs (\S+) \(", description)
    out_dir = tree / "results-check" / name
    policy = policy_for(name)
    if name in RESOLVE_ONLY:
        code = ("import sys; from ddl_gym.scenarios import get_scenario; from ddl_gym.workloads.tracedata import "
                "source_needs, locate\nsc = get_scenario(sys.argv[1])\n[locate(k) for k in "
                "getattr(sc.workload, 'trace_data', lambda: [])()]\nprint('resolved')")
        cmd = [sys.executable, "-c", code, name]
    else:
        cmd = [sys.executable, "-m", "ddl_gym.cli", "eval", "--scenario", name, "--policies", policy, "--seeds", "1",
               "--out", str(out_dir), "--no-plots", "--no-progress", "--workers", "1"]
    start = time.monotonic()
    try:
        proc = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"scenario": name, "policy": policy, "result": "FAIL", "detail": f"timeout after {timeout:.0f} s"}
    wall = time.monotonic() - start
    err = proc.stderr.strip().splitlines()
    last = err[-1] if err else ""
    if proc.returncode == 0:
        if listed_needs:
            return {"scenario": name, "policy": policy, "result": "FAIL",
                    "detail": f"listed as needing {listed_needs} but ran", "wall_s": f"{wall:.1f}"}
        jobs = ""
        summary = out_dir / "summary.csv"
        if summary.exists():
            with open(summary, newline="") as fh:
                rows = list(csv.DictReader(fh))
            jobs = rows[0].get("jobs", "") if rows else ""
        what = "data resolved (episode not run: minutes)" if name in RESOLVE_ONLY else f"jobs={jobs}"
        return {"scenario": name, "policy": policy, "result": "ran", "detail": what, "wall_s": f"{wall:.1f}"}
    needs = re.search(r"error: needs (\S+) ", last)
    if proc.returncode == 2 and needs and needs[1] in listed_needs and len(err) == 1 and "DDL_GYM_TRACES" in last:
        return {"scenario": name, "policy": policy, "result": "needs", "detail": last[:160], "wall_s": f"{wall:.1f}"}
    return {"scenario": name, "policy": policy, "result": "FAIL", "detail": f"rc={proc.returncode}: {last[:300]}",
            "wall_s": f"{wall:.1f}"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="comma-separated scenario names (default: every listed one)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per scenario")
    parser.add_argument("--include-untracked", action="store_true", help="also copy untracked, non-ignored files")
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="ddl-gym-fresh-") as tmp:
        tree = Path(tmp) / "ddl-gym"  # no ../shared beside it
        copy_tree(tree, args.include_untracked)
        env = clean_env(tree)
        scenarios = listed(tree, env)
        names = [n for n in args.only.split(",") if n] or sorted(scenarios)
        unknown = [n for n in names if n not in scenarios]
        if unknown:
            raise SystemExit(f"not listed by `ddl-gym list`: {', '.join(unknown)}")
        results = []
        for name in names:
            row = check(tree, env, name, scenarios[name], args.timeout)
            results.append(row)
            if not args.markdown:
                print(f"{row['result']:5s} {name:22s} {row['policy']:10s} {row.get('wall_s', ''):>6s}s  {row['detail']}",
                      flush=True)
        if args.markdown:
            print("| scenario | policy | result | detail | wall (s) |\n|---|---|---|---|---:|")
            for row in results:
                print(f"| {row['scenario']} | {row['policy']} | {row['result']} | {row['detail']} | {row.get('wall_s', '')} |")
    failed = [r for r in results if r["result"] == "FAIL"]
    print(f"{len(results)} scenarios: {sum(r['result'] == 'ran' for r in results)} ran, "
          f"{sum(r['result'] == 'needs' for r in results)} stopped with 'needs FILE', {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
