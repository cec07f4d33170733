"""``ddl-gym sweep``: spec validation (file and key named, contents never echoed), resuming, shards."""

from __future__ import annotations

import pandas as pd
import pytest

from ddl_gym.cli import main
from ddl_gym.harness import TIMING_COLUMNS, read_results

SECRET = "s3cr3t-marker"
GOOD = 'scenarios = ["small"]\npolicies = ["fifo+pack", "srsf+pack"]\nseeds = 4\n'


@pytest.mark.parametrize("text, key, problem", [
    ('scenarios = ["small"]\npolicies = ["fifo+pack"]\n', "seeds", "required"),
    (GOOD + f'seedz = "{SECRET}"\n', "seedz", "did you mean 'seeds'"),
    ('scenarios = ["small"]\npolicies = ["fifo+pack"]\nseeds = true\n', "seeds", "must be N"),
    ('scenarios = ["small"]\npolicies = ["fifo+pack"]\nseeds = "5:2"\n', "seeds", "empty"),
    ('scenarios = ["small"]\npolicies = ["fifo+pack"]\nseeds = [1, -3]\n', "seeds", "[0, 2**63-1]"),
    ('scenarios = []\npolicies = ["fifo+pack"]\nseeds = 2\n', "scenarios", "non-empty list"),
    (f'scenarios = ["{SECRET}.toml"]\npolicies = ["fifo+pack"]\nseeds = 2\n', "scenarios[0]", "not found"),
    ('scenarios = [{scenario = "small", workload = "nope.csv"}]\npolicies = ["fifo+pack"]\nseeds = 2\n',
     "scenarios[0].workload", "not found"),
    ('scenarios = [{scenario = "small", wl = "x.csv"}]\npolicies = ["fifo+pack"]\nseeds = 2\n',
     "scenarios[0].wl", "unknown key"),
    (f'scenarios = ["small"]\npolicies = ["fifo+pack", "{SECRET}"]\nseeds = 2\n', "policies[1]", "unknown"),
    ('scenarios = ["small"]\npolicies = [3]\nseeds = 2\n', "policies[0]", "must be a policy spec"),
    (GOOD + 'executor = "dask"\n', "executor", "must be one of local, ray"),
    (GOOD + 'workers = 0\n', "workers", "[1, 256]"),
    (GOOD + 'reference = "sjf+pack"\n', "reference", "one of the spec's policies"),
    ('scenarios = ["small", "small"]\npolicies = ["fifo+pack"]\nseeds = 2\n', "scenarios", "appears twice"),
])
def test_bad_spec_is_one_line_naming_file_and_key(tmp_path, capsys, text, key, problem):
    spec = tmp_path / "grid.toml"
    spec.write_text(text)
    rc = main(["sweep", str(spec), "--out", str(tmp_path / "out"), "--no-progress"])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1, err
    assert err.startswith(f"ddl-gym: error: {spec}: {key}: ") and problem in err, err
    if key in ("seedz", "seeds"):
        assert SECRET not in err  # a value is never echoed where the key alone says what is wrong
    assert not (tmp_path / "out").exists()  # nothing ran


def test_bad_toml_and_missing_file(tmp_path, capsys):
    spec = tmp_path / "grid.toml"
    spec.write_text(f'scenarios = ["{SECRET}"\n')
    assert main(["sweep", str(spec)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"ddl-gym: error: {spec}: not valid TOML") and SECRET not in err
    assert main(["sweep", str(tmp_path / "none.toml")]) == 2
    assert "sweep spec not found" in capsys.readouterr().err
    assert main(["sweep", str(spec), "--shard", "2/2"]) == 2
    assert "0 <= i < n" in capsys.readouterr().err


def _table(path):
    frame = pd.read_csv(path).drop(columns=list(TIMING_COLUMNS))
    return frame.sort_values(["scenario", "policy", "seed"]).reset_index(drop=True)


def test_sweep_resumes_and_shards_merge_to_the_same_table(tmp_path, capsys):
    spec = tmp_path / "grid.toml"
    spec.write_text('scenarios = ["small", {scenario = "default", workload = "w.csv"}]\n'
                    'policies = ["fifo+pack", "srsf+pack"]\nseeds = 4\n')
    from ddl_gym.scenarios import get_scenario
    from ddl_gym.workloads.csv_io import write_workload_csv

    _, workload = get_scenario("small").episode(9)
    write_workload_csv(workload, tmp_path / "w.csv")
    out = tmp_path / "full"
    assert main(["sweep", str(spec), "--out", str(out), "--workers", "2", "--no-progress"]) == 0
    first = capsys.readouterr().out
    assert "sweep: computed 16, reused 0" in first
    assert sorted(p.name for p in out.iterdir()) == ["default@w", "small", "sweep_summary.csv", "sweep_summary.md"]
    assert len(read_results(out / "small")[0]) == 8 and len(pd.read_csv(out / "sweep_summary.csv")) == 16
    assert "16 of 16 runs present" in (out / "sweep_summary.md").read_text()
    before = pd.read_csv(out / "sweep_summary.csv")
    assert main(["sweep", str(spec), "--out", str(out), "--no-progress"]) == 0
    assert "sweep: computed 0, reused 16" in capsys.readouterr().out
    pd.testing.assert_frame_equal(pd.read_csv(out / "sweep_summary.csv"), before)  # timings too: nothing rerun
    assert "Across the" not in (out / "sweep_summary.md").read_text()  # no reference: no aggregate
    spec.write_text(spec.read_text() + 'reference = "srsf+pack"\n')
    assert main(["sweep", str(spec), "--out", str(out), "--merge"]) == 0
    text = (out / "sweep_summary.md").read_text()
    assert "## Across the 2 scenarios (avg JCT)" in text and "| fifo+pack | 2 × 4 |" in text, text
    assert "P(improves on srsf+pack)" in text

    sharded = tmp_path / "sharded"
    for i in range(3):
        assert main(["sweep", str(spec), "--out", str(sharded), "--shard", f"{i}/3", "--no-progress"]) == 0
    assert sorted(p.name for p in sharded.iterdir()) == ["shard-0-of-3", "shard-1-of-3", "shard-2-of-3"]
    assert len(read_results(sharded / "shard-1-of-3" / "small")[0]) == 2 * 1  # seed 1 only
    capsys.readouterr()
    assert main(["sweep", str(spec), "--out", str(sharded), "--merge"]) == 0
    pd.testing.assert_frame_equal(_table(sharded / "sweep_summary.csv"), _table(out / "sweep_summary.csv"))
