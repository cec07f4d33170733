"""``ddl-gym reproduce a-srpt``: run specs reach the worlds and policies, and the quick claims table is
regenerated bit for bit."""

from __future__ import annotations


import numpy as np
import pytest

from ddl_gym.reproduce import REGISTRY
from ddl_gym.report_paths import reproduction_file


def test_registered_and_run_specs_reach_worlds_and_policies():
    from ddl_gym.reproduce.a_srpt import GRIDS, RunSpec, experiments, policy_of, scenario_of

    assert REGISTRY["a-srpt"] == "a_srpt"
    spec = RunSpec("a-srpt", servers=4, num_jobs=50, trace_jobs=800, inter_gbps=1.0, eq6="per_replica", tau=0.5,
                   delay_blocks=False, single_gpu_share=0.0)
    scenario = scenario_of(spec)
    assert scenario.model.eq6 == "per_replica"
    cluster = scenario.sample_cluster(np.random.default_rng(0))
    assert cluster.num_gpus == 32 and cluster.inter_bandwidth == pytest.approx(1.25e8)
    assert scenario.workload.spec.single_gpu_share == 0.0
    policy = policy_of(spec)
    assert policy.tau == 0.5 and policy.delay_blocks is False
    assert policy_of(RunSpec("spwf", selection="pack")).selection == "best-fit"
    assert policy_of(RunSpec("spwf", selection="most-free")).selection == "most-free"
    assert policy_of(RunSpec("a-srpt", backfill=True)).backfill is True
    assert spec.key == "a-srpt/sim/4x8/n50/t800/1G/load0.9/single_gpu_share=0.0/eq6=per_replica/delay_blocks=False/tau=0.5"
    assert RunSpec("a-srpt", world="testbed", tau=0.0).key == "a-srpt/testbed/load0.9"
    exps = experiments(GRIDS["default"])
    assert {"fig5", "fig6/1000", "fig7/0", "fig8/50", "fig8eq/50", "fig9", "sens/tau=2", "sens/eq6 per_replica",
            "sens/unseen=zero"} <= set(exps)
    assert exps["fig8/1"]["a-srpt"].single_gpu_share == 0.0 and exps["fig5"]["a-srpt"].tau == 0.0
    # Figs. 5-8 carry every reading: A-SRPT strict/backfill, baselines under the three selections
    assert {"a-srpt", "a-srpt-backfill", "spjf", "spjf@most-free", "spjf@a-srpt"} <= set(exps["fig7/0"])
    assert exps["fig7/0"]["a-srpt-backfill"].backfill and exps["fig7/0"]["spjf@most-free"].selection == "most-free"
    assert exps["fig8eq/1"]["a-srpt"].equal_load and exps["fig8eq/10"] == exps["fig8/10"]


@pytest.mark.slow
def test_quick_reports_match_the_committed_ones_and_figures_are_written(tmp_path):
    """Regenerate the quick reproduction (12 x 8 GPUs, 2 seeds, ≈ 20 s): its claims table and its report above
    the timing section must equal docs/reproductions/a_srpt/claims_quick.md and report_quick.md (regenerate with
    ``ddl-gym reproduce a-srpt --quick --jobs 1 --out results/a_srpt_quick
    --report docs/reproductions/a_srpt/report_quick.md --claims docs/reproductions/a_srpt/claims_quick.md``), and every
    figure is a PNG."""
    from ddl_gym.reproduce.a_srpt import FIGURES, GRIDS, TIMING_HEADING, experiments, main, reproducible_part, run_all
    assert main(["--quick", "--out", str(tmp_path), "--jobs", "1"]) == 0
    assert (tmp_path / "claims.md").read_text() == reproduction_file("a_srpt", "claims_quick.md").read_text()
    report = (tmp_path / "report.md").read_text()
    committed = reproduction_file("a_srpt", "report_quick.md").read_text()
    assert TIMING_HEADING in report and TIMING_HEADING in committed
    assert reproducible_part(report) == reproducible_part(committed)
    for heading in ("Fig. 5", "Fig. 6", "Fig. 7", "Fig. 8", "Fig. 9", "Table II", "Sensitivity", "Deviations",
                    "every reading", "Baseline placement", "Equal offered load", "Unseen-job prediction rule"):
        assert heading in report
    assert "HighsMipSolverData" not in report
    for name in FIGURES:
        assert (tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # a rerun reuses every episode (nothing left to simulate)
    exps = experiments(GRIDS["quick"])
    specs = list(dict.fromkeys(spec for rows in exps.values() for spec in rows.values()))
    lines: list[str] = []
    run_all(specs, (0, 1), 1, tmp_path, log=lines.append)
    assert "0 to simulate" in lines[0]
