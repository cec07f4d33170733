"""Leaderboard statistics and rules: paired changes, verdicts, and the bound no schedule beats."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ddl_gym.baselines import make_policy
from ddl_gym.leaderboard import paired_change, uncontended_bound, verdicts
from ddl_gym.scenarios import get_scenario
from ddl_gym.sim.engine import Simulator, run_policy


def test_paired_change_matches_hand_computation() -> None:
    ref = np.array([100.0, 200.0, 400.0])
    mine = np.array([90.0, 190.0, 420.0])  # -10 %, -5 %, +5 %
    mean, half, better = paired_change(mine, ref)
    assert mean == pytest.approx(-10 / 3)
    sd = np.std([-10.0, -5.0, 5.0], ddof=1)
    assert half == pytest.approx(4.3027 * sd / math.sqrt(3), rel=1e-6)  # t(0.975, 2) as the harness tabulates it
    assert better == 2


@pytest.mark.parametrize(("change", "ci", "goal", "not_worse"), [
    (-12.0, 3.0, True, True), (-9.9, 1.0, False, True), (1.5, 2.0, False, True), (2.5, 2.0, False, False),
    (0.0, float("nan"), False, True), (0.1, float("nan"), False, False),
])
def test_verdict_rules(change: float, ci: float, goal: bool, not_worse: bool) -> None:
    assert verdicts(change, ci) == {"goal_met": goal, "not_worse": not_worse}


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
