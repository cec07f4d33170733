"""Leaderboard statistics and rules: paired changes, verdicts, and the bound no schedule beats."""

from __future__ import annotations

import numpy as np
import pytest

from ddl_gym.policies import make_policy
from ddl_gym.leaderboard import uncontended_bound, verdicts
from ddl_gym.scenarios import get_scenario
from ddl_gym.sim.engine import Simulator, run_policy
from ddl_gym.sim.model import ConfigError


@pytest.mark.parametrize(("change", "ci", "goal", "not_worse"), [
    (-12.0, 3.0, True, True), (-9.9, 1.0, False, True), (1.5, 2.0, False, True), (2.5, 2.0, False, False),
    (0.0, float("nan"), False, True), (0.1, float("nan"), False, False),
])
def test_verdict_rules(change: float, ci: float, goal: bool, not_worse: bool) -> None:
    assert verdicts(change, ci) == {"goal_met": goal, "not_worse": not_worse}
    # Where higher is better (SMD's total utility) the same rules hold with the sign flipped.
    assert verdicts(-change, ci, higher_is_better=True) == {"goal_met": goal, "not_worse": not_worse}


@pytest.mark.parametrize("name", ["small", "default"])
def test_no_policy_beats_the_uncontended_bound(name: str) -> None:
    scenario = get_scenario(name)
    for seed in (0, 1):
        bound = uncontended_bound(scenario, seed)
        for policy in ("srsf+ca", "sjf+spread", "fifo+ff"):
            cluster, workload = scenario.episode(seed)
            result = run_policy(Simulator(cluster, workload, scenario.model), make_policy(policy),
                                np.random.default_rng(seed))
            assert result.summary()["avg_jct_s"] >= bound * (1 - 1e-9)


def test_board_picks_the_best_reference_by_mean_and_writes_paired_rows(tmp_path) -> None:
    import pandas as pd

    from ddl_gym.leaderboard import Board, run_board, write_board

    from ddl_gym.harness import simulate

    board = Board("small", references=("fifo+ff", "srsf+ca", "a-srpt"), seeds=(5, 6, 7), selection_seeds=(8, 9))
    result = run_board(board, cache=tmp_path / "cache", workers=1)
    # chosen on the selection seeds (disjoint from the comparison seeds), by mean
    means = {p: np.mean([simulate(make_policy(p), get_scenario("small"), s).result.summary()["avg_jct_s"]
                         for s in (8, 9)]) for p in ("fifo+ff", "srsf+ca")}
    assert result.selection_means == pytest.approx(means) and result.selection_seeds == (8, 9)
    assert result.best_reference == min(means, key=means.get)
    assert set(result.summary["seed"]) == {5, 6, 7} and set(result.summary["policy"]) == {"fifo+ff", "srsf+ca"}
    assert "a-srpt" in result.skipped  # pipeline-only policy on an all-reduce scenario: listed, not run
    other = ({"fifo+ff", "srsf+ca"} - {result.best_reference}).pop()
    pivot = result.summary.pivot(index="seed", columns="policy", values="avg_jct_s")
    rel = 100 * (pivot[other] - pivot[result.best_reference]) / pivot[result.best_reference]
    row = result.table.set_index("policy").loc[other]
    assert row["change_pct"] == pytest.approx(rel.mean())
    write_board(result, tmp_path / "board", tmp_path / "cache", "cmd")
    readme = (tmp_path / "board" / "README.md").read_text()
    assert f"**{result.best_reference}**" in readme and "`a-srpt`" in readme
    # the LP bound: below every policy on every seed, and shown on the board
    from ddl_gym.sim.lower_bound import scenario_lower_bound

    for seed in board.seeds:
        assert pivot.loc[seed].min() >= scenario_lower_bound(get_scenario("small"), seed).avg_jct_s
    assert result.lp_bound is not None and result.lp_headroom is not None and result.lp_headroom[0] >= 0
    assert f"LP lower bound (`ddl_gym/sim/lower_bound.py`" in readme and f"{result.lp_bound:.0f} s" in readme
    assert "*selection* seeds 8–9, disjoint from the comparison seeds" in readme
    assert len(pd.read_csv(tmp_path / "board" / "results.csv")) == 2
    with pytest.raises(ConfigError, match="disjoint"):
        run_board(Board("small", references=("srsf+ca",), seeds=(5, 6), selection_seeds=(6, 7)),
                  cache=tmp_path / "cache2", workers=1)


def test_sjf_bco_refuses_pipeline_jobs_by_name() -> None:
    """SJF-BCO's bounds need the all-reduce τ(servers, contention); a pipeline scenario is a named error."""
    from ddl_gym.harness import simulate
    from ddl_gym.sim.model import ConfigError

    with pytest.raises(ConfigError, match="sjf-bco: SJF-BCO plans with the per-.servers, contention. all-reduce model"):
        simulate(make_policy("sjf-bco"), get_scenario("asrpt-small"), 0)


def test_a_higher_is_better_board_picks_the_highest_mean_and_counts_seeds_above_it(tmp_path) -> None:
    """SMD's board ranks by total utility: the best reference is the highest mean, 'better' means above it."""
    from ddl_gym.leaderboard import Board, run_board, write_board

    board = Board("smd-sync", references=("esw", "optimus", "smd"), metric="total_utility", seeds=(0, 1, 2),
                  selection_seeds=(3, 4))
    assert board.higher_is_better
    result = run_board(board, cache=tmp_path / "cache", workers=1)
    pivot = result.summary.pivot(index="seed", columns="policy", values="total_utility")
    assert result.best_reference == max(result.selection_means, key=result.selection_means.get)
    assert result.bound is None  # the uncontended-JCT bound means nothing for a utility
    table = result.table.set_index("policy")
    assert list(result.table["total_utility_mean"]) == sorted(result.table["total_utility_mean"], reverse=True)
    for other in set(pivot.columns) - {result.best_reference}:
        rel = 100 * (pivot[other] - pivot[result.best_reference]) / pivot[result.best_reference]
        assert table.loc[other, "change_pct"] == pytest.approx(rel.mean())
        assert table.loc[other, "seeds_better"] == int((pivot[other] > pivot[result.best_reference]).sum())
    write_board(result, tmp_path / "board", tmp_path / "cache", "cmd")
    readme = (tmp_path / "board" / "README.md").read_text()
    assert "higher is better" in readme and "| total utility |" in readme and "Bound" not in readme
    assert result.lp_bound is None and "LP lower bound: not available for this board (performance model 'smd-ps'" in readme
