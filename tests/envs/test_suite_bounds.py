"""docs/suite-bounds.md (python -m ddl_gym.suite_bounds): generated from its JSON, consistent with the cards
and the agent board it was made from, reproducible, and never above a reference it bounds."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from ddl_gym.scenarios import get_scenario
from ddl_gym.sim.lower_bound_np import scenario_nonpreemptive_lower_bound
from ddl_gym.suite import TASKS, get_task
from ddl_gym.suite_bounds import BOARD_JSON, DEFAULT_DOC, agent_rows, bounds_markdown, main
from ddl_gym.suite_cards import load_cards

DATA = json.loads(DEFAULT_DOC.with_suffix(".json").read_text())
CARDS = load_cards()


def test_markdown_is_the_rendering_of_its_json():
    assert DEFAULT_DOC.read_text() == bounds_markdown(DATA)


def test_every_task_is_reported_and_agrees_with_its_card():
    assert [t["task"] for t in DATA["tasks"]] == [t.name for t in TASKS]
    for t in DATA["tasks"]:
        card = CARDS[t["task"]]
        assert list(card.test_seeds) == t["test_seeds"]
        assert t["general_bound_s"] == pytest.approx(card.lp_bound_s, rel=1e-12)
        if t["reference"] == card.best_reference:
            assert t["reference_jct_per_seed"] == list(card.best_jct_per_seed)
        else:  # the best reference preempts: the card names the non-preemptive one
            assert t["reference"] == card.nonpreemptive_reference
            assert t["reference_jct_s"] == pytest.approx(card.nonpreemptive_jct_s, rel=1e-12)
        strong = np.maximum(card.lp_bound_per_seed, t["nonpreemptive_bound_per_seed"])
        assert t["strong_bound_s"] == pytest.approx(float(strong.mean()), rel=1e-12)
        # validity on the report's own episodes: the reference never goes below the strong bound
        assert np.all(np.asarray(t["reference_jct_per_seed"]) >= strong)


def test_a_bound_of_the_report_is_reproduced():
    """Recompute one episode's non-preemptive bound (the smallest task, its first test seed)."""
    t = next(x for x in DATA["tasks"] if x["task"] == "small")
    seed = t["test_seeds"][0]
    lb = scenario_nonpreemptive_lower_bound(get_scenario(get_task("small").scenario), seed, periods=DATA["periods"])
    assert lb.avg_jct_s == pytest.approx(t["nonpreemptive_bound_per_seed"][0], rel=1e-7)


def test_agent_rows_match_the_committed_board():
    """A board regenerated after the report makes this fail: regenerate the report as well."""
    board = json.loads(BOARD_JSON.read_text())
    rows = agent_rows(board, {t["task"]: t for t in DATA["tasks"]})
    assert len(rows) == len(DATA["agents"]) > 0
    for mine, theirs in zip(rows, DATA["agents"]):
        assert mine["agent"] == theirs["agent"] and mine["task"] == theirs["task"]
        assert mine["gap_closed_strong"] == pytest.approx(theirs["gap_closed_strong"], rel=1e-12)
        assert mine["gap_closed_general"] == pytest.approx(theirs["gap_closed_general"], rel=1e-12)


def test_board_with_another_reference_figure_is_refused():
    t = dict(DATA["tasks"][0])
    row = {"task": t["task"], "agent": "x", "kind": "network", "reference": t["reference"],
           "reference_avg_jct_s": t["reference_jct_s"] * 1.01, "agent_avg_jct_s": 1.0}
    with pytest.raises(ValueError, match="regenerate the board"):
        agent_rows([row], {t["task"]: t})
    row["reference_avg_jct_s"] = t["reference_jct_s"]
    (out,) = agent_rows([row], {t["task"]: t})
    expected = (t["reference_jct_s"] - 1.0) / (t["reference_jct_s"] - t["strong_bound_s"])
    assert math.isclose(out["gap_closed_strong"], expected)


def test_cli_errors_name_the_option(capsys):
    assert main(["--task", "no-such-task"]) == 2
    assert "unknown task 'no-such-task'" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["--periods", "0"])
    assert exc.value.code == 2
    assert "--periods must be >= 1" in capsys.readouterr().err


def test_a_missing_or_broken_board_is_an_error_before_any_bound_is_solved(tmp_path, monkeypatch, capsys):
    """No silent report without the agents: the board must exist (or --no-agents says to leave it out)."""
    import ddl_gym.suite_bounds as sb

    def no_solve(*a, **k):
        raise AssertionError("a bound was solved before the board was read")

    monkeypatch.setattr(sb, "task_bounds", no_solve)
    monkeypatch.setattr(sb, "BOARD_JSON", tmp_path / "missing.json")
    assert main(["--task", "small"]) == 2
    err = capsys.readouterr().err
    assert "missing.json" in err and "--no-agents" in err
    broken = tmp_path / "broken.json"
    broken.write_text("[{not json")
    monkeypatch.setattr(sb, "BOARD_JSON", broken)
    assert main(["--task", "small"]) == 2
    err = capsys.readouterr().err
    assert "not valid JSON" in err and "{not json" not in err  # named, never echoed


def test_rows_of_agents_that_preempt_are_left_out():
    """The non-preemptive bound does not hold for a preemptive agent's schedules: no gap under it is printed."""
    t = dict(DATA["tasks"][0])
    row = {"task": t["task"], "agent": "x", "kind": "network", "reference": t["reference"],
           "reference_avg_jct_s": t["reference_jct_s"], "agent_avg_jct_s": 1.0}
    assert len(agent_rows([row], {t["task"]: t})) == 1
    assert agent_rows([dict(row, kind="network, preemptive")], {t["task"]: t}) == []
