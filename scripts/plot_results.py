"""Regenerate ``summary.md`` and the plots of a results folder from its CSV files only.

Usage::

    python scripts/plot_results.py results/demo [results/other ...] [--no-plots] [--reference POLICY]

Reads ``summary.csv`` and ``jobs.csv`` written by ``ddl-gym eval`` / :func:`ddl_gym.harness.evaluate`
and writes ``summary.md``, ``jct_cdf.png``, ``metrics.png`` and ``gantt_<policy>.png`` next to them
(plots of an earlier run in the folder are removed first, so none linger). With ``--reference`` it
also writes the per-seed paired comparison ``paired_<policy>.csv``/``.md`` (as ``ddl-gym compare``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="plot_results.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="+", type=Path, help="results folders holding summary.csv")
    parser.add_argument("--no-plots", action="store_true", help="only rewrite summary.md")
    parser.add_argument("--reference", help="also write the paired comparison against this policy")
    args = parser.parse_args(argv)

    from ddl_gym.harness import SUMMARY_FILE, compare, write_artifacts
    from ddl_gym.sim.model import ConfigError

    status = 0
    for folder in args.folders:
        if not (folder / SUMMARY_FILE).exists():
            print(f"plot_results.py: error: {folder / SUMMARY_FILE}: not found", file=sys.stderr)
            status = 2
            continue
        try:
            written = write_artifacts(folder, plots=not args.no_plots)
            if args.reference:
                compare(folder, args.reference)
        except ConfigError as exc:
            print(f"plot_results.py: error: {exc}", file=sys.stderr)
            status = 2
            continue
        print(f"{folder}: " + ", ".join(p.name for p in written))
    return status


if __name__ == "__main__":
    sys.exit(main())
