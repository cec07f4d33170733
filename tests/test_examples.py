"""Every script in examples/ runs (tiny budgets) and prints what its docstring promises."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"


def _run(args: list[str], cwd: Path = REPO, timeout: int = 180) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    env.pop("DDL_GYM_TRACEBACK", None)
    return subprocess.run(args, capture_output=True, text=True, cwd=cwd, env=env, timeout=timeout)


def test_every_example_is_covered() -> None:
    scripts = {p.relative_to(EXAMPLES).as_posix() for p in EXAMPLES.rglob("*.py")}
    assert scripts == {"heuristic_env.py", "my_policy.py", "evaluate_custom_policy.py", "own_cluster/run.py",
                       "train_and_compare.py", "cleanrl_style.py"}


def test_heuristic_through_the_env() -> None:
    run = _run([sys.executable, "examples/heuristic_env.py"])
    assert run.returncode == 0, run.stderr
    lines = [line for line in run.stdout.splitlines() if line.startswith("seed ")]
    assert len(lines) == 2 and all("average JCT" in line for line in lines)


def test_custom_policy_from_python_and_from_the_cli(tmp_path: Path) -> None:
    run = _run([sys.executable, "examples/evaluate_custom_policy.py"])
    assert run.returncode == 0, run.stderr
    assert "| largest-first | 2 |" in run.stdout and "largest-first | 2 |" in run.stdout.split("vs srsf+ca")[-1]
    figure = Path(run.stdout.strip().splitlines()[-1].removeprefix("figure: "))
    assert figure.exists() and figure.stat().st_size > 5_000
    cli = _run([sys.executable, "-c", "import sys; from ddl_gym.cli import main; sys.exit(main())", "eval",
                "--scenario", "small", "--policies", "my_policy:LargestFirst+ca,srsf+ca", "--seeds", "1",
                "--out", str(tmp_path / "cli"), "--no-progress", "--no-plots"], cwd=EXAMPLES)
    assert cli.returncode == 0, cli.stderr
    assert "| my_policy:LargestFirst+ca | 1 |" in cli.stdout


def test_own_cluster_scenario_and_workload() -> None:
    run = _run([sys.executable, "examples/own_cluster/run.py"])
    assert run.returncode == 0, run.stderr
    assert "| srsf+ca | 1 |" in run.stdout and "env episode: 10 jobs" in run.stdout


@pytest.mark.slow
def test_training_and_paired_comparison() -> None:
    pytest.importorskip("sb3_contrib")
    run = _run([sys.executable, "examples/train_and_compare.py", "512"])
    assert run.returncode == 0, run.stderr
    assert "trained maskable-ppo:" in run.stdout and "vs srsf+ca" in run.stdout
    assert Path(run.stdout.strip().splitlines()[-1].removeprefix("paired figure: ")).exists()


def test_cleanrl_style_loop() -> None:
    pytest.importorskip("torch")
    run = _run([sys.executable, "examples/cleanrl_style.py", "1"])
    assert run.returncode == 0, run.stderr
    returns = [float(line.split("mean return ")[1].split()[0]) for line in run.stdout.splitlines()
               if line.startswith("update ")]
    assert len(returns) == 1 and all(r < 0 for r in returns)  # −Σ JCT: always negative
