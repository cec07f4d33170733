"""A bounded fuzz run of every engine in the test suite (issue 30): scripts/fuzz_engines.py, fixed seed.

Job-level engine (random clusters, workloads, rate models, classic policies), task-level engine
(zero-length all-reduces, 1-ns tasks, GPU sharing; fast path == reference path on every instance,
no GPU double-booked) and self-driving policies (each kind twice; task-level ones also with
``fast=false``), all with every engine's invariant checks on. ``python scripts/fuzz_engines.py
--runs N`` runs a bigger budget and prints the same figures.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parents[2] / "scripts" / "fuzz_engines.py"


@pytest.fixture(scope="module")
def fuzz_engines():
    spec = importlib.util.spec_from_file_location("fuzz_engines", _PATH)
    module = importlib.util.module_from_spec(spec)
    sys.modules["fuzz_engines"] = module
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop("fuzz_engines", None)


def test_bounded_fuzz_of_every_engine_finds_no_violation_or_disagreement(fuzz_engines) -> None:
    n_self = 2 * len(fuzz_engines.SELF_DRIVING)
    tally = fuzz_engines.fuzz({"job": 200, "task": 150, "self": n_self}, seed=20261128)
    print(tally.line("job"), tally.line("task"), tally.line("self"), sep="\n")
    assert tally.failures == []
    assert sum(tally.violations.values()) == 0 and sum(tally.disagreements.values()) == 0
    assert tally.runs["task"] == 300  # each instance on both paths
    task_level = sum(1 for entry in fuzz_engines.SELF_DRIVING if entry[3])
    assert tally.runs["self"] == n_self + 2 * task_level
    assert 190 <= tally.runs["job"] <= 200  # draws with no job that fits are skipped
    for family in ("job", "task", "self"):
        assert tally.checks[family] > tally.runs[family]  # every run checked, most many times
    assert tally.refused["task"] == 0  # the task instances are all valid
    assert 0 < tally.refused["job"] < tally.runs["job"]  # zero-time iterations are drawn and refused by name


def test_the_tally_counts_a_violation_and_a_disagreement(fuzz_engines) -> None:
    """The counters can fail: an unexpected exception is a violation, a named ConfigError a refusal,
    and an engine that runs no checks is a violation too."""
    from ddl_gym.sim.checks import count
    from ddl_gym.sim.model import ConfigError

    tally = fuzz_engines.Tally()

    def boom():
        count()
        raise RuntimeError("engine bug")

    def refuse():
        raise ConfigError("bad input, named")

    fuzz_engines._checked(tally, "job", "boom", boom)
    fuzz_engines._checked(tally, "job", "refuse", refuse)
    fuzz_engines._checked(tally, "job", "unchecked", lambda: 1)
    assert tally.runs["job"] == 3 and tally.violations["job"] == 2 and tally.refused["job"] == 1
    assert tally.checks["job"] == 1
    assert any("engine bug" in f for f in tally.failures) and any("no invariant checks" in f for f in tally.failures)


def test_script_main_prints_the_four_figures(fuzz_engines, capsys) -> None:
    assert fuzz_engines.main(["--runs", "3", "--families", "job,task"]) == 0
    out = capsys.readouterr().out
    assert "total: runs=" in out and "invariant_checks=" in out and "violations=0" in out
    assert "fast_vs_reference_disagreements=0" in out
