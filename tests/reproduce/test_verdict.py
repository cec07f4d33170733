"""The one verdict rule of every reproduction (ddl_gym.reproduce.verdict): cases giving each outcome."""

from __future__ import annotations

import pytest

from ddl_gym.reproduce.verdict import (
    RULE,
    Claim,
    Verdict,
    VerdictRule,
    all_of,
    best_of,
    compare,
    equal,
    monotone,
    moves,
    render_claims,
    shape,
)


def test_compare_held_tie_not_held() -> None:
    theirs = [100.0, 200.0, 300.0]
    assert compare([90.0, 180.0, 270.0], theirs).outcome == "held"  # −10% on every seed
    assert compare([99.0, 201.0, 299.0], theirs).outcome == "tie"  # |mean| ≈ 0.2% ≤ 2%
    assert compare([110.0, 220.0, 330.0], theirs).outcome == "not held"  # +10%: the opposite direction
    # The mean is beyond the margin but only one seed of three agrees: not held.
    v = compare([40.0, 202.0, 303.0], theirs)
    assert v.outcome == "not held" and "lower in 1/3 seeds" in v.detail
    assert compare([110.0, 220.0, 330.0], theirs, "higher").outcome == "held"


def test_compare_margin_boundary_and_rule_margin() -> None:
    # −1.5% is within the 2% margin (tie), −3% beyond it; a 5% margin turns −3% into a tie too.
    assert compare([98.5], [100.0]).outcome == "tie"
    assert compare([97.0], [100.0]).outcome == "held"
    assert compare([97.0], [100.0], rule=VerdictRule(0.05)).outcome == "tie"


def test_compare_absolute_scale_for_shares() -> None:
    # Shares: 0.30 vs 0.20 is +10 pp on the absolute scale.
    v = compare([0.30, 0.31], [0.20, 0.22], "higher", scale="absolute")
    assert v.outcome == "held" and "pp" in v.detail
    assert compare([0.205, 0.21], [0.20, 0.20], "higher", scale="absolute").outcome == "tie"


def test_best_of_compares_with_the_best_other_per_seed() -> None:
    ours = [90.0, 90.0, 90.0]
    # Each other is beaten on the mean, but per seed the best of them is 89, 200, 88: ours wins 1/3.
    others = {"a": [89.0, 300.0, 300.0], "b": [300.0, 200.0, 88.0]}
    assert best_of(ours, others).outcome == "not held"
    assert best_of(ours, {"a": [100.0] * 3, "b": [120.0] * 3}).outcome == "held"
    assert best_of([101.0] * 3, {"a": [100.0] * 3}).outcome == "tie"


def test_equal_claims() -> None:
    assert equal([300.0, 300.0], [300.0, 301.0]).outcome == "held"
    v = equal([103.3, 123.5, 106.1], [300.0, 300.0, 300.0])  # Lemma 2 as measured before this change
    assert v.outcome == "not held" and "0/3" in v.detail


def test_moves_zigzag_filter() -> None:
    assert moves([100, 90, 80]) == ["drop"]
    assert moves([100, 100.3, 99.9, 100.1]) == []  # wiggles within 2%
    assert moves([100, 90, 95, 85]) == ["drop", "rise", "drop"]
    # A +0.3% uptick inside a falling curve is not a move (the old report called that "non-monotone").
    assert moves([361.5, 300.0, 300.9, 290.0, 283.4]) == ["drop"]
    # Slow drift accumulates: 1% steps add up to a drop beyond 2%.
    assert moves([100, 99, 98, 97]) == ["drop"]
    assert moves([100, 103, 100.5]) == ["rise", "drop"]


def test_shape_verdicts() -> None:
    drd = [100, 90, 95, 85]
    assert shape(drd, [drd, drd, [100, 90, 80, 70]], ["drop", "rise", "drop"]).outcome == "held"
    # Mean curve has the shape but only 1 of 3 seeds does: not held.
    assert shape(drd, [drd, [100, 90, 80, 70], [100, 90, 80, 70]], ["drop", "rise", "drop"]).outcome == "not held"
    mono = [361.5, 317.1, 298.7, 284.3]
    v = shape(mono, [mono] * 3, ["drop", "rise", "drop"])
    assert v.outcome == "not held" and "mean curve drop " in v.detail
    assert shape([100, 100.5, 99.8], [[100, 100.5, 99.8]], ["drop"]).outcome == "tie"
    assert monotone(mono, [mono, mono, mono]).outcome == "held"
    assert monotone([100, 110, 120], [[100, 110, 120]], "increasing").outcome == "held"
    assert monotone([100, 90, 95], [[100, 90, 95]]).outcome == "not held"


def test_bad_inputs_are_errors() -> None:
    with pytest.raises(ValueError, match="same seeds"):
        compare([1.0, 2.0], [1.0])
    with pytest.raises(ValueError, match="positive"):
        compare([1.0], [0.0])
    with pytest.raises(ValueError, match="at least one"):
        compare([], [])
    with pytest.raises(ValueError, match="margin"):
        VerdictRule(1.5)


def test_render_claims_and_rule_text() -> None:
    claim = Claim("Fig. 4", "SJF-BCO makespan below FF", "283.6 vs 283.4 s", compare([283.6], [283.4]))
    text = render_claims([claim])
    lines = text.splitlines()
    assert lines[0] == "| where | paper's words | our numbers | verdict | rule applied |"
    assert lines[2].startswith("| Fig. 4 | SJF-BCO makespan below FF | 283.6 vs 283.4 s | **tie** |")
    assert "2%" in RULE.describe() and "strict majority" in RULE.describe()
    assert str(Verdict("held", "x")) == "held" and Verdict("held", "x").held and not Verdict("tie", "x").held


def test_all_of_combines_parts() -> None:
    held, tie, no = Verdict("held", "a"), Verdict("tie", "b"), Verdict("not held", "c")
    assert all_of(held, held).outcome == "held"
    assert all_of(held, tie).outcome == "tie"
    assert all_of(tie, no, held).outcome == "not held"
    assert "held: a; tie: b" == all_of(held, tie).detail
