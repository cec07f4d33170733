"""``ddl-gym reproduce smd``: the quick claims table is regenerated and must equal the committed one; the
reproduction's instance at (mode, 1 unit, I = 50) is the harness's episode of scenario smd-<mode>."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ddl_gym.reproduce.smd import Grid, Task, main, run_task
from ddl_gym.report_paths import reproduction_file


@pytest.mark.slow
def test_quick_claims_match_the_committed_table(tmp_path: Path) -> None:
    """Regenerate with ``ddl-gym reproduce smd --quick --jobs 1 --claims docs/reproductions/smd/claims_quick.md``."""
    assert main(["--quick", "--out", str(tmp_path), "--jobs", "1", "--no-plots"]) == 0
    committed = reproduction_file("smd", "claims_quick.md")
    assert (tmp_path / "claims.md").read_text() == committed.read_text()
    report = (tmp_path / "report.md").read_text()
    for heading in ("Figs. 7/8", "Figs. 9/10", "Fig. 11", "Fig. 12", "Time-scale sensitivity", "Overlap models", "Deviations"):
        assert heading in report
    rows = pd.read_csv(tmp_path / "rows.csv")
    assert set(rows["policy"]) == {"smd", "esw", "optimus", "optimus-time", "optimus-official", "smd-opt"}
    assert (rows[rows.policy == "smd"]["total_utility"].to_numpy()
            <= rows[rows.policy == "smd-opt"]["total_utility"].to_numpy() + 1e-9).all()


def test_reproduction_instance_is_the_harness_episode():
    from ddl_gym.harness import evaluate

    grid = Grid(seeds=(1,), units=(1,), resource_jobs=50, jobs=(50,), fig11_jobs=(10,), fig12_jobs=(50,),
                factors=(1.0,), eps=0.05)
    rows = pd.DataFrame(run_task(Task(1, "async", grid)))
    ours = rows[(rows.capacity == "units") & (rows.jobs == 50) & (rows.policy == "esw")]["total_utility"].item()
    harness = evaluate(["esw"], "smd-async", [1], workers=1, progress=False, echo=False).summary
    assert harness["total_utility"].item() == ours
    assert np.isfinite(rows["theorem5_bound"]).all()
