"""``ddl-gym reproduce a-srpt``: run specs reach the worlds and policies, and the quick claims table is
regenerated bit for bit."""

from __future__ import annotations

from pathlib import Path

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
    assert policy_of(RunSpec("spwf", selection="pack")).selection == "pack"
    assert spec.key == "a-srpt/sim/4x8/n50/t800/1G/load0.9/single_gpu_share=0.0/eq6=per_replica/delay_blocks=False/tau=0.5"
    assert RunSpec("a-srpt", world="testbed", tau=0.0).key == "a-srpt/testbed/load0.9"
    exps = experiments(GRIDS["default"])
    assert {"fig5", "fig6/1000", "fig7/0", "fig8/50", "fig9", "sens/tau=2", "sens/eq6 per_replica"} <= set(exps)
    assert exps["fig8/1"]["a-srpt"].single_gpu_share == 0.0 and exps["fig5"]["a-srpt"].tau == 0.0


@pytest.mark.slow
def test_quick_claims_match_the_committed_table(tmp_path):
    """Regenerate the quick claims (12 x 8 GPUs, 2 seeds); they must equal docs/reproductions/a_srpt/claims_quick.md
    (regenerate with ``ddl-gym reproduce a-srpt --quick --jobs 1 --claims docs/reproductions/a_srpt/claims_quick.md``)."""
    from ddl_gym.reproduce.a_srpt import main
    from ddl_gym.workloads.philly import SAMPLE_PATH, default_trace_path

    if default_trace_path("rfold") == SAMPLE_PATH:
        pytest.skip("the committed claims were made on the Philly traces (../shared/traces or $DDL_GYM_TRACES), "
                    "not found here: the asrpt worlds fall back to the bundled sample, another workload")

    assert main(["--quick", "--out", str(tmp_path), "--jobs", "1"]) == 0
    committed = reproduction_file("a_srpt", "claims_quick.md")
    assert (tmp_path / "claims.md").read_text() == committed.read_text()
    report = (tmp_path / "report.md").read_text()
    for heading in ("Fig. 5", "Fig. 6", "Fig. 7", "Fig. 8", "Fig. 9", "Table II", "Sensitivity", "Deviations", "Wall time"):
        assert heading in report
    rows = (tmp_path / "episodes.csv").read_text().splitlines()
    assert main(["--quick", "--out", str(tmp_path), "--jobs", "1"]) == 0  # a rerun reuses every episode
    assert (tmp_path / "episodes.csv").read_text().splitlines() == rows
