"""The (d2) goal table of scripts/bench.py: verdicts come from the figures, at each world's largest size."""

from __future__ import annotations

import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location("bench_script", Path(__file__).resolve().parents[2] / "scripts" / "bench.py")
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


def _world(name: str, rates: list[float]) -> dict:
    rows = [{"jobs": 1000 * (i + 1), "gpus": 64, "cpu_seconds": 1.0, "jobs_per_cpu_s": r} for i, r in enumerate(rates)]
    return {"world": name, "rows": {"p": rows}}


def _row(lines: list[str], world: str) -> list[str]:
    found = [line for line in lines if line.startswith(f"| {world} |")]
    assert len(found) == 1
    return [cell.strip() for cell in found[0].strip("|").split("|")]


def test_verdicts_read_the_largest_size_against_the_reference_median() -> None:
    ref = {"min": 9_000.0, "median": 10_000.0, "max": 11_000.0}
    normalised = bench.NORMALISED_GOAL * ref["median"]
    lines = bench._format_paper_goal([
        _world("fast-at-the-end", [1.0, normalised * 1.01]),  # small sizes slow: only the largest counts
        _world("slow-at-the-end", [50_000.0, normalised * 0.99]),
        _world("absolute", [21_000.0]),
    ], ref)
    fast, slow, absolute = _row(lines, "fast-at-the-end"), _row(lines, "slow-at-the-end"), _row(lines, "absolute")
    assert fast[2] == "2,000" and fast[5:] == ["below", "meets"]
    assert slow[5:] == ["below", "below"]
    assert absolute[5:] == ["meets", "meets"] and absolute[4] == "2.10"


def test_without_a_reference_no_verdict_is_given() -> None:
    lines = bench._format_paper_goal([_world("w", [30_000.0])], "skipped: no reference tree")
    assert not any(line.startswith("| w |") for line in lines)
    assert "skipped: no reference tree" in lines[0]


def test_the_header_names_the_planner_build_with_the_paper_section(monkeypatch) -> None:
    monkeypatch.setattr(bench, "_format_paper", lambda paper, reference: [])
    base = {"quick": False, "python": "3.11", "machine": "x86_64", "engine_build": "E", "planner_build": "P"}
    assert "job-level engine: E; SJF-BCO planner: P." in bench.format_report({**base, "paper": {}})
    assert "SJF-BCO planner" not in bench.format_report(base)  # only the paper section runs the planner


def test_repeated_runs_print_their_spread_and_the_verdicts_read_the_medians() -> None:
    ref = {"min": 9_000.0, "median": 10_000.0, "max": 11_000.0}
    world = _world("repeated", [1.0, 19_000.0])
    # Three runs at the largest size: the best would meet both goals, the median meets neither.
    world["rows"]["p"][-1].update(runs=[19_000.0, 25_000.0, 7_000.0], ratios=[0.7, 2.5, 0.79])
    cells = _row(bench._format_paper_goal([world], ref), "repeated")
    assert cells[3] == "7,000 / 19,000 / 25,000" and cells[4] == "0.70 / 0.79 / 2.50"
    assert cells[5:] == ["below", "below"]
    world["rows"]["p"][-1]["ratios"] = [0.7, 0.81, 0.9]
    assert _row(bench._format_paper_goal([world], ref), "repeated")[5:] == ["below", "meets"]


def test_the_offline_line_reads_the_median_of_the_runs() -> None:
    world = {**_world("sjf-bco-offline", [1_000.0, 18_000.0]), "note": "n", "jobs_grid": [1_000, 2_000]}
    world["rows"]["p"][-1]["runs"] = [18_000.0, 21_000.0, 22_000.0]
    lines = bench._format_paper([world], None)
    assert "p at 2,000 jobs: 21,000 jobs/CPU-s (median of its runs), meets the absolute goal of 20,000." in lines


def test_the_planning_share_table_derives_its_columns_from_the_run() -> None:
    mode = {"jobs_per_cpu_s": 2_000.0, "avg_jct_s": 900.0, "plans": 400, "planned_entries": 1_400,
            "planning_s": 0.15, "seconds": 0.2, "cpu_seconds": 0.2}
    started = {**mode, "plans": 100, "planned_entries": 400, "planning_s": 0.05}
    lines = bench._format_planning_share({"jobs": 400, "rows": [{"seed": 7, "replan": mode, "replan-when-started": started}]})
    rows = [line for line in lines if line.startswith("| 7 | replan |")]
    assert len(rows) == 1
    cells = [cell.strip() for cell in rows[0].strip("|").split("|")]
    # 1,400 entries over 400 plans; 0.15 of 0.2 s planning; 375 µs per plan; 400 jobs / (0.2 × 0.25) CPU-s
    assert cells == ["7", "replan", "400", "3.5", "75%", "375", "8,000"]
    # the other mode's row from its own figures: 4 jobs per plan, 25% of the run, 500 µs per plan
    other = [line for line in lines if line.startswith("| 7 | replan-when-started |")]
    assert [cell.strip() for cell in other[0].strip("|").split("|")][2:6] == ["100", "4.0", "25%", "500"]
