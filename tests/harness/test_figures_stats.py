"""Figures and statistics of issue 34: the paired-difference figure (eval --reference, compare),
--format, float-noise spreads printed as deterministic, and rliable-style aggregates across tasks."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ddl_gym.aggregate import aggregate_across_tasks, iqm, probability_of_improvement, stratified_bootstrap_ci
from ddl_gym.harness import format_mean_ci, mean_ci, paired_differences
from ddl_gym.paired_plot import parse_formats, plot_paired
from ddl_gym.sim.model import ConfigError

def test_float_noise_spreads_are_zero_and_marked_deterministic() -> None:
    values = [7311.874508, 7311.874508 + 1e-12, 7311.874508 - 1e-12]
    mean, half, n = mean_ci(values)
    assert half == 0.0 and n == 3
    assert format_mean_ci(mean, half) == "7312 ‡"
    assert mean_ci([1.0, 1.001, 0.999])[1] > 0  # a real spread keeps its interval
    summary = pd.DataFrame({"scenario": "s", "policy": ["a"] * 3 + ["b"] * 3, "seed": [0, 1, 2] * 2,
                            "avg_jct_s": [100.0, 200.0, 300.0, 110.0 + 1e-12, 210.0, 310.0 - 1e-12]})
    row = paired_differences(summary, "a", ["avg_jct_s"]).iloc[0]
    assert row["constant"] and row["diff_ci"] == 0.0 and row["diff_mean"] == pytest.approx(10.0)


def test_paired_figure_from_the_cli_in_every_format(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ddl_gym.cli import main

    out = tmp_path / "eval"
    code = main(["eval", "--scenario", "small", "--policies", "fifo+pack,sjf+pack,srsf+pack", "--reference", "srsf+ca",
                 "--seeds", "2", "--workers", "1", "--out", str(out), "--no-progress", "--format", "svg"])
    assert code == 0, capsys.readouterr().err
    for name in ("paired_srsf_ca.svg", "metrics.svg", "jct_cdf.svg"):
        assert (out / name).stat().st_size > 5_000, name
    svg = (out / "paired_srsf_ca.svg").read_text()
    for policy in ("fifo+pack", "sjf+pack", "srsf+pack"):
        assert policy in svg  # one row per policy, labelled
    assert "better" in svg and "srsf+ca" in svg
    assert main(["compare", "--out", str(out), "--reference", "fifo+pack", "--format", "png,pdf"]) == 0
    assert (out / "paired_fifo_pack.pdf").read_bytes()[:4] == b"%PDF"
    assert (out / "paired_fifo_pack.png").read_bytes()[:4] == b"\x89PNG"
    capsys.readouterr()
    assert main(["compare", "--out", str(out), "--reference", "fifo+pack", "--format", "gif"]) == 2
    assert "choose from png, svg, pdf" in capsys.readouterr().err


def test_paired_figure_sorts_best_first(tmp_path: Path) -> None:
    paired = pd.DataFrame({"scenario": "s", "policy": ["worse", "better", "same"], "reference": "ref",
                           "metric": "avg_jct_s", "seeds": 4, "diff_mean": [5.0, -5.0, 0.0], "diff_ci": 1.0,
                           "rel_pct_mean": [5.0, -5.0, 0.0], "rel_pct_ci": [1.0, 1.0, math.nan],
                           "better": [0.0, 4.0, 0.0], "constant": False})
    files = plot_paired(paired, tmp_path / "p", formats=("svg",))
    text = files[0].read_text()
    assert text.index("better  4/4 better") < text.index("same  0/4 better") < text.index("worse  0/4 better")
    assert parse_formats("PNG, svg") == ("png", "svg")
    with pytest.raises(ConfigError, match="choose from"):
        parse_formats("jpg")


def test_aggregates_follow_rliables_definitions() -> None:
    assert iqm(np.arange(8.0)) == pytest.approx(np.mean([2.0, 3.0, 4.0, 5.0]))
    x = np.array([[2.0, 1.0], [3.0, 1.0]])
    y = np.array([[1.0, 1.0], [1.0, 1.0]])
    assert probability_of_improvement(x, y) == pytest.approx((1.0 + 0.5) / 2)  # task 1 always, task 2 ties
    lo, hi = stratified_bootstrap_ci(x, iqm, reps=300, seed=1)
    assert lo <= iqm(x) <= hi and (lo, hi) == stratified_bootstrap_ci(x, iqm, reps=300, seed=1)
    rows = []
    for task, base in (("t1", 100.0), ("t2", 1000.0)):
        for seed in range(5):
            rows += [{"scenario": task, "policy": "ref", "seed": seed, "avg_jct_s": base + seed},
                     {"scenario": task, "policy": "fast", "seed": seed, "avg_jct_s": 0.5 * (base + seed)},
                     {"scenario": task, "policy": "slow", "seed": seed, "avg_jct_s": 2.0 * (base + seed)}]
    table = aggregate_across_tasks(pd.DataFrame(rows), "ref", reps=200).set_index("policy")
    assert table.loc["fast", "iqm"] == pytest.approx(2.0) and table.loc["slow", "iqm"] == pytest.approx(0.5)
    assert table.loc["fast", "p_improvement"] > 0.8 > 0.2 > table.loc["slow", "p_improvement"]
    assert list(table.index) == ["fast", "slow"] and (table["tasks"] == 2).all()


def test_equal_series_are_merged_not_hidden():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ddl_gym.plots import merged_series, plot_lines

    series = {"smd": [3.0, 5.0], "esw": [3.0, 5.0], "optimus": [2.0, 5.0], "smd-opt": [3.0, 5.0 + 1e-12]}
    assert merged_series(series) == [("smd = esw = smd-opt", [3.0, 5.0]), ("optimus", [2.0, 5.0])]
    fig, ax = plt.subplots()
    labels = plot_lines(ax, [1, 2], series)
    lines = ax.get_lines()
    assert labels == ["smd = esw = smd-opt", "optimus"] and len(lines) == 2
    assert lines[0].get_marker() != lines[1].get_marker() and lines[0].get_linestyle() != lines[1].get_linestyle()
    plt.close(fig)
