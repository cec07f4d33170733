"""The wheel contains the shipped agents, the bundled data and py.typed; installed into a clean venv
(dependencies shared through a .pth, no downloads) it runs `ddl-gym list` and an eval with a shipped
agent from a folder outside the repository."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _dependency_dirs() -> list[str]:
    """This interpreter's site-packages folders (and the folders they add), minus the repository."""
    paths = [sysconfig.get_paths()["purelib"], *sys.path]
    keep = []
    for p in dict.fromkeys(paths):
        if p and Path(p).is_dir() and "site-packages" in p and Path(p).resolve() != REPO:
            keep.append(p)
    return keep


@pytest.mark.slow
def test_wheel_installs_into_a_clean_venv_and_runs_outside_the_repo(tmp_path: Path) -> None:
    pytest.importorskip("sb3_contrib")
    wheels = tmp_path / "wheels"
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", str(REPO), "--no-deps", "-q", "-w", str(wheels)],
                           capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr[-2000:]
    (wheel,) = wheels.glob("ddl_gym-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for required in ("ddl_gym/py.typed", "ddl_gym/agents/zoo/agent-transfer.zip", "ddl_gym/agents/zoo/agent-transfer.json",
                     "ddl_gym/agents/zoo/agent-transfer.vecnormalize.pkl", "ddl_gym/agents/zoo/legacy/agent-10g.zip",
                     "ddl_gym/data/philly_sample.csv", "ddl_gym/data/philly_pollux_jobs.csv.gz",
                     "ddl_gym/policies.py", "ddl_gym/protocols.py", "ddl_gym/baselines/a_online/policy.py",
                     "ddl_gym/baselines/classic/attained.py", "ddl_gym/harness/episodes.py", "ddl_gym/sim/perf/rar.py"):
        assert required in names, required
    for licence in ("LICENSE", "NOTICE"):  # Apache-2.0 text and the traces' attributions travel with the wheel
        assert any(n.endswith(f"/{licence}") and ".dist-info/" in n for n in names), licence
    assert not any(n.startswith(("tests/", "baselines/", "agents/")) for n in names)

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    Path(purelib, "zz_ddl_gym_deps.pth").write_text("\n".join(_dependency_dirs()) + "\n")
    installed = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "-q",
                                str(wheel)], capture_output=True, text=True, timeout=300)
    assert installed.returncode == 0, installed.stderr[-2000:]

    outside = tmp_path / "elsewhere"
    outside.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "DDL_GYM_TRACEBACK")}
    cli = str(venv / "bin" / "ddl-gym")
    where = subprocess.run([str(python), "-c", "import ddl_gym; print(ddl_gym.__file__)"], capture_output=True,
                           text=True, cwd=outside, env=env, check=True).stdout
    assert where.startswith(str(venv)), where  # the wheel's copy, not the checkout
    listed = subprocess.run([cli, "list"], capture_output=True, text=True, cwd=outside, env=env, timeout=120)
    assert listed.returncode == 0, listed.stderr
    shipped = listed.stdout.split("Shipped agents")[1]
    assert "agent-transfer" in shipped and "(none)" not in shipped
    ran = subprocess.run([cli, "eval", "--scenario", "small", "--policies", "agent-transfer,srsf+ca", "--seeds", "1",
                          "--workers", "1", "--out", "out", "--no-progress", "--no-plots"],
                         capture_output=True, text=True, cwd=outside, env=env, timeout=300)
    assert ran.returncode == 0, ran.stderr
    assert "| agent-transfer | 1 |" in ran.stdout and (outside / "out" / "summary.csv").exists()
