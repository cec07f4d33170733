"""The ``ddl-gym`` command: listing, evaluation runs, and one-line errors (exit 2) on bad input."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from ddl_gym.cli import main


def _one_line_error(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("ddl-gym: error: "), err
    assert "Traceback" not in err
    return lines[0]


def test_list_shows_scenarios_policies_and_agents(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "Scenarios" in out and "Policies" in out and "Shipped agents (--policies NAME):" in out
    assert "default" in out and "small" in out
    # Shipped agents are listed by short name (agents/shipped.py), one row each, with their description.
    from ddl_gym.agents.shipped import SHIPPED_AGENTS

    shipped = out.split("Shipped agents (--policies NAME):", 1)[1]
    listed = {line.split()[0] for line in shipped.splitlines() if line.startswith("  ")}
    assert "agent-10g" in listed and set(SHIPPED_AGENTS) >= listed
    assert "fifo+pack" in out and "srsf+ca" in out


def test_eval_writes_results_and_prints_the_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    code = main(["eval", "--scenario", "small", "--policies", "fifo+pack, sjf+pack", "--seed-list", "0,3",
                 "--out", str(out), "--workers", "1", "--no-progress"])
    assert code == 0
    printed = capsys.readouterr().out
    assert "| policy | seeds |" in printed and "fifo+pack" in printed and "sjf+pack" in printed
    summary = pd.read_csv(out / "summary.csv")
    assert sorted(zip(summary["policy"], summary["seed"])) == [
        ("fifo+pack", 0), ("fifo+pack", 3), ("sjf+pack", 0), ("sjf+pack", 3)]
    for name in ("jobs.csv", "summary.md", "jct_cdf.png", "metrics.png", "gantt_sjf_pack.png"):
        assert (out / name).stat().st_size > 0, name
    # Rerunning reuses the rows; a failing run on the same folder leaves them in place.
    assert main(["eval", "--scenario", "small", "--policies", "fifo+pack", "--seed-list", "0",
                 "--out", str(out), "--no-progress", "--no-plots"]) == 0
    assert "reused 1 run" in capsys.readouterr().out
    assert main(["eval", "--scenario", "small", "--policies", "fifo+pack,bogus", "--seeds", "1",
                 "--out", str(out), "--no-progress"]) == 2
    capsys.readouterr()
    assert len(pd.read_csv(out / "summary.csv")) == 4


def test_unknown_policy_is_one_line_exit_2_without_traceback(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "ddl_gym.cli", "eval", "--scenario", "small", "--policies", "fifo+pakc",
         "--seeds", "1", "--out", str(tmp_path / "x"), "--no-progress"],
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 2
    line = _one_line_error(proc.stderr)
    assert "fifo+pakc" in line and "fifo+pack" in line  # names the bad input and suggests the fix


def test_unknown_scenario_is_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["eval", "--scenario", "no-such-scenario", "--policies", "fifo+pack", "--seeds", "1",
                 "--out", str(tmp_path / "x"), "--no-progress"])
    assert code == 2
    assert "no-such-scenario" in _one_line_error(capsys.readouterr().err)


def test_missing_scenario_file_is_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["eval", "--scenario", str(tmp_path / "absent.toml"), "--policies", "fifo+pack", "--seeds", "1",
                 "--out", str(tmp_path / "x"), "--no-progress"])
    assert code == 2
    assert "absent.toml" in _one_line_error(capsys.readouterr().err)


def test_malformed_workload_csv_names_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "my_jobs.csv"
    bad.write_text("job_id,arrival_s,gpus,iterations,model\n0,0.0,4,100,resnet50\n1,5.0,-3,100,resnet50\n")
    code = main(["eval", "--scenario", "small", "--policies", "fifo+pack", "--seeds", "1",
                 "--workload", str(bad), "--out", str(tmp_path / "x"), "--no-progress"])
    assert code == 2
    line = _one_line_error(capsys.readouterr().err)
    assert "my_jobs.csv" in line and "gpus" in line


@pytest.mark.parametrize(
    "content, expected",
    [
        ("name = 'broken\n[cluster\n", "not valid"),  # not TOML
        ("name = 'x'\ncolour = 'blue'\n[cluster]\nservers = 2\n[workload]\nkind = 'synthetic'\n", "colour"),
        ("name = 'x'\n[cluster]\nservers = 0\n[workload]\nkind = 'synthetic'\n", "servers"),
    ],
    ids=["invalid-toml", "unknown-key", "bad-value"],
)
def test_bad_scenario_file_is_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, expected: str
) -> None:
    path = tmp_path / "scenario.toml"
    path.write_text(content)
    code = main(["eval", "--scenario", str(path), "--policies", "fifo+pack", "--seeds", "1",
                 "--out", str(tmp_path / "x"), "--no-progress"])
    assert code == 2
    line = _one_line_error(capsys.readouterr().err)
    assert "scenario.toml" in line and expected in line


def test_scenario_file_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "tiny.toml"
    path.write_text(
        "name = 'tiny'\n[cluster]\nservers = 2\ngpus_per_server = 4\n"
        "[workload]\nkind = 'synthetic'\ngenerator = 'scaled'\nnum_jobs = 12\nmax_gpus = 8\n"
    )
    assert main(["eval", "--scenario", str(path), "--policies", "srsf+pack", "--seeds", "1",
                 "--out", str(tmp_path / "x"), "--no-progress", "--no-plots"]) == 0
    summary = pd.read_csv(tmp_path / "x" / "summary.csv")
    assert summary["scenario"].tolist() == ["tiny"] and summary["jobs"].tolist() == [12]
    capsys.readouterr()


def test_forwarded_commands_report_unknown_targets(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["reproduce", "no-such-paper"]) == 2
    assert "no-such-paper" in _one_line_error(capsys.readouterr().err)
    assert main(["reproduce", "--help"]) == 0
    assert "sjf-bco" in capsys.readouterr().out


def test_bench_script_is_reachable_and_its_pieces_run(capsys: pytest.CaptureFixture[str]) -> None:
    from ddl_gym.cli import _load_bench

    bench = _load_bench()
    figures = bench.simulate_jobs_per_second(*bench.synthetic_case(64, 300))
    assert figures["jobs"] == 300 and figures["gpus"] == 64 and figures["jobs_per_s"] > 0
    assert main(["bench", "--help"]) == 0  # --help returns its status instead of raising SystemExit
    assert "--quick" in capsys.readouterr().out


def test_demo_without_agent_compares_reference_policies(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import ddl_gym.cli as cli

    monkeypatch.setattr(cli, "DEMO_POLICIES", ("fifo+pack", "no-such-policy"))
    monkeypatch.setattr(cli, "DEMO_SHIPPED_AGENT", None)
    out = tmp_path / "demo"
    assert main(["demo", "--out", str(out), "--no-train", "--seeds", "1", "--no-progress", "--workers", "1"]) == 0
    captured = capsys.readouterr()
    assert "fifo+pack" in captured.out and "srsf+ca" in captured.out  # the teacher is always shown
    assert "skipping no-such-policy" in captured.err  # unavailable policies are skipped with a note
    assert "How to read this:" in captured.out and "gantt_" in captured.out
    summary = pd.read_csv(out / "summary.csv")
    assert sorted(summary["policy"]) == ["fifo+pack", "srsf+ca"]
    assert set(summary["seed"]) == {cli.DEMO_SEED_OFFSET} and set(summary["scenario"]) == {"default"}
    assert (out / "jct_cdf.png").exists()


def test_bench_env_loaded_by_ddl_gym_bench_can_spawn_its_ceiling_processes() -> None:
    # `ddl-gym bench` loads scripts/bench_env.py; its two-process ceiling spawns children that unpickle
    # a function of that module by name (it failed with a PicklingError when loaded under another name).
    from ddl_gym.cli import _load_bench

    bench_env = _load_bench().load_sub_bench("bench_env")
    assert bench_env._independent_processes(1, 200) > 0
