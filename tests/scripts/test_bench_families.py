"""The families section of the bench: growth exponents, verdicts against the in-run reference, the reference child."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ddl_gym.cli import _load_bench

bench = _load_bench()


def test_fitted_exponent_tells_linear_nlogn_and_quadratic_apart() -> None:
    jobs = np.array([10_000, 30_000, 100_000], dtype=float)
    assert bench.fitted_exponent(jobs, 3e-5 * jobs) == pytest.approx(1.0)
    assert 1.05 < bench.fitted_exponent(jobs, 1e-6 * jobs * np.log(jobs)) < 1.15
    assert bench.fitted_exponent(jobs, 1e-9 * jobs**2) == pytest.approx(2.0)


def _families(reference: object) -> dict:
    cells = {p: [{"gpus": 1024, "jobs": j, "cpu_seconds": j / rate, "jobs_per_cpu_s": rate} for j in (10, 100)]
             for p, rate in (("fifo+pack", 6_000.0), ("srsf+rand", 5_000.0))}
    return {"load": 0.9, "gpus_grid": [1024], "jobs_grid": [10, 100], "cells": cells, "goal_cell": [1024, 100],
            "goal_runs": {"fifo+pack": {"min": 5_900.0, "median": 6_000.0, "max": 6_100.0, "n": 3},
                          "srsf+rand": {"min": 4_000.0, "median": 5_000.0, "max": 5_500.0, "n": 3}},
            "reference": reference, "reference_tree": "/ref",
            "fifo_pack_big": {"gpus": 65_536, "jobs": 100, "jobs_per_cpu_s": 21_000.0}}


def test_family_verdicts_are_absolute_and_normalised_to_the_reference_of_the_same_run() -> None:
    text = "\n".join(bench._format_families(_families({"min": 6_900.0, "median": 7_000.0, "max": 7_100.0, "n": 3})))
    scaling = [line for line in text.splitlines() if line.startswith("| fifo+pack | 6,000 (")]
    # 6,000 / 7,000 = 0.86 >= 0.8 meets the normalised goal; 5,000 / 7,000 = 0.71 does not; neither reaches 20k.
    assert "| 0.86 | below | meets |" in [r for r in text.splitlines() if r.startswith("| fifo+pack | 5,900")][0]
    assert "| 0.71 | below | below |" in [r for r in text.splitlines() if r.startswith("| srsf+rand | 4,000")][0]
    assert "Absolute: 0 of 2" in text and "Normalised: 1 of 2" in text
    assert "21,000 jobs/CPU-s (absolute: meets" in text and "3.00 × the reference" in text
    assert len(scaling) == 1 and scaling[0].endswith("| 1.00 |")  # CPU seconds ∝ jobs: exponent 1


def test_without_a_reference_tree_only_the_absolute_verdict_is_given() -> None:
    text = "\n".join(bench._format_families(_families("skipped: no reference tree")))
    assert "skipped: no reference tree" in text and "only the absolute verdict" in text
    assert "Normalised:" not in text


def test_reference_child_runs_fifo_pack_from_a_source_tree() -> None:
    repo = Path(__file__).resolve().parents[2]
    figures = bench.reference_fifo_pack(str(repo), 64, 200, 0.9)
    assert figures["jobs_per_cpu_s"] > 0 and figures["cpu_seconds"] > 0
    with pytest.raises(RuntimeError, match="reference run failed"):
        bench.reference_fifo_pack("/nonexistent-tree", 64, 200, 0.9)


def test_paired_ratios_decide_the_normalised_verdict_when_present() -> None:
    # Medians alone: 5,000 / 7,000 = 0.71 (below); the runs paired with their reference say 0.85 (meets).
    fam = _families({"min": 5_000.0, "median": 7_000.0, "max": 9_000.0, "n": 3})
    fam["goal_ratios"] = {"fifo+pack": {"min": 0.70, "median": 0.75, "max": 0.9, "n": 3},
                          "srsf+rand": {"min": 0.80, "median": 0.85, "max": 0.95, "n": 3}}
    fam["fifo_pack_big"]["reference_ratio"] = 0.5
    text = "\n".join(bench._format_families(fam))
    assert "| 0.75 [0.70–0.90] | below | below |" in [r for r in text.splitlines() if r.startswith("| fifo+pack | 5,900")][0]
    assert "| 0.85 [0.80–0.95] | below | meets |" in [r for r in text.splitlines() if r.startswith("| srsf+rand | 4,000")][0]
    assert "Normalised: 1 of 2" in text and "paired ratios" in text
    assert "0.50 × the reference run just before it: normalised below" in text


def test_paper_goal_uses_the_paired_ratio_of_each_policy() -> None:
    paper = [{"world": "asrpt", "rows": {"a-srpt": [{"jobs": 8_000, "jobs_per_cpu_s": 6_000.0, "runs": [6_000.0], "ratios": [0.9]}],
                                         "spjf": [{"jobs": 8_000, "jobs_per_cpu_s": 6_000.0}]}}]
    lines = bench._format_paper_goal(paper, {"min": 9_000.0, "median": 10_000.0, "max": 11_000.0, "n": 3})
    assert any(r.startswith("| asrpt | a-srpt | 8,000 | 6,000 | 0.90 | below | meets |") for r in lines)
    assert any(r.startswith("| asrpt | spjf | 8,000 | 6,000 | 0.60 | below | below |") for r in lines)


def test_memory_section_gives_the_verdict_and_the_queue_of_the_run() -> None:
    mem = {"jobs": 1_000_000, "gpus": 1024, "policy": "fifo+pack", "peak_mb": 431.2, "after_workload_mb": 164.0,
           "jobs_per_cpu_s": 7_215.0, "mean_waiting": 366_816.4,
           "runs": [{"peak_mb": 431.2, "jobs_per_cpu_s": 7_215.0}]}
    text = "\n".join(bench._format_memory(mem))
    assert "meets the goal of < 500 MB" in text and "366,816 jobs wait on average" in text
    over = {**mem, "runs": [{"peak_mb": 612.0, "jobs_per_cpu_s": 7_215.0}]}
    assert "above the goal of < 500 MB" in "\n".join(bench._format_memory(over))


def test_memory_runs_print_their_spread_and_the_verdict_reads_the_largest_peak() -> None:
    mem = {"jobs": 1_000_000, "gpus": 1024, "policy": "fifo+pack", "peak_mb": 431.0, "after_workload_mb": 164.0,
           "jobs_per_cpu_s": 30_000.0, "mean_waiting": 366_816.4,
           "runs": [{"peak_mb": 431.0, "jobs_per_cpu_s": 30_000.0}, {"peak_mb": 498.0, "jobs_per_cpu_s": 28_000.0},
                    {"peak_mb": 502.0, "jobs_per_cpu_s": 33_000.0}]}
    text = "\n".join(bench._format_memory(mem))
    assert "3 runs (min / median / max)" in text and "Peak RSS 431 / 498 / 502 MB" in text
    assert "28,000 / 30,000 / 33,000 jobs/CPU-s" in text
    assert "above the goal of < 500 MB" in text  # one run of three over the goal fails it
    below = {**mem, "runs": mem["runs"][:2]}
    assert "meets the goal of < 500 MB" in "\n".join(bench._format_memory(below))
