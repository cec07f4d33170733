"""Data that travels with the project (issue 30 part 1): every listed scenario runs on the data it names
from a fresh clone with no ``../shared`` beside it and from a wheel, or stops with one ``needs FILE`` line.

Cheap by design: one copy of the tracked tree, two CLI subprocesses, one wheel build (~10 s in all).
"""

from __future__ import annotations

import gzip
import hashlib
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from ddl_gym.sim.model import ConfigError
from ddl_gym.workloads import tracedata
from ddl_gym.workloads.philly import SAMPLE_PATH, default_trace_path, load_philly

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared" / "traces"


@pytest.mark.parametrize("key", [k for k, d in tracedata.TRACE_DATA.items() if d.bundled])
def test_bundled_tables_are_the_named_data(key: str) -> None:
    data = tracedata.TRACE_DATA[key]
    path = tracedata.bundled_path(key)
    assert path is not None and path.name == data.bundled
    assert path.stat().st_size < 5 * 2**20  # every tracked file < 5 MB
    raw = gzip.decompress(path.read_bytes())
    assert hashlib.sha256(raw).hexdigest() == data.sha256
    rows = [line for line in raw.decode().splitlines()[1:] if line.strip()]
    assert len(rows) == data.rows
    shared = SHARED / data.folder / data.file
    if shared.is_file():  # where the project's slice is present, the bundled copy is byte-identical to it
        assert hashlib.sha256(shared.read_bytes()).hexdigest() == data.sha256


def test_resolution_order_env_then_bundled_never_the_sample(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DDL_GYM_TRACES", raising=False)
    assert default_trace_path("rfold") == tracedata.bundled_path("philly-rfold") != SAMPLE_PATH
    assert load_philly(table="pollux").num_jobs == 71_570  # the full table, read from the .gz
    own = tmp_path / "philly"
    own.mkdir()
    shutil.copy(SAMPLE_PATH, own / "philly_rfold_jobs.csv")
    monkeypatch.setenv("DDL_GYM_TRACES", str(tmp_path))
    assert default_trace_path("rfold") == own / "philly_rfold_jobs.csv"  # the user's copy wins
    tracedata._WARNED.discard("philly-pollux")
    with pytest.warns(UserWarning, match="holds no philly/philly_pollux_jobs.csv; using the bundled copy"):
        assert default_trace_path("pollux") == tracedata.bundled_path("philly-pollux")


def test_unbundled_trace_is_one_named_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ddl_gym.scenarios import get_scenario

    if (SHARED / "alibaba-gpu-v2023" / "openb_pod_list_default.csv").is_file():  # read it once first: the
        get_scenario("alibaba-windows").episode(0)  # per-process table cache must not outlive the lookup
    monkeypatch.setenv("DDL_GYM_TRACES", str(tmp_path))
    monkeypatch.setattr(tracedata, "_CHECKOUT", tmp_path / "clone")  # no ../shared beside it
    with pytest.raises(tracedata.MissingTraceError) as info:
        tracedata.locate("alibaba-pods")
    message = str(info.value)
    assert "\n" not in message
    for needle in ("needs openb_pod_list_default.csv", "DDL_GYM_TRACES", "alibaba/clusterdata"):
        assert needle in message
    for name in ("alibaba-windows", "transfer-train"):
        scenario = get_scenario(name)
        assert tracedata.source_needs(scenario.workload) == ["alibaba-pods"]
        with pytest.raises(ConfigError, match="needs openb_pod_list_default.csv"):
            scenario.episode(0)
    assert tracedata.source_needs(get_scenario("philly-windows").workload) == []


def test_a_window_asking_for_more_jobs_than_the_file_has_stops(tmp_path: Path) -> None:
    from ddl_gym.scenarios import load_scenario_file

    lines = SAMPLE_PATH.read_text().splitlines()
    short = tmp_path / "short.csv"
    short.write_text("\n".join(lines[1:42]) + "\n")  # RFold header + 40 jobs
    text = ('[cluster]\nservers = 16\ngpus_per_server = 4\n[workload]\nkind = "philly-slice"\npath = "short.csv"\n'
            'num_jobs = 160\n')
    (tmp_path / "s.toml").write_text(text)
    with pytest.raises(ConfigError, match=r"short\.csv: split 'all' has 40 job\(s\) that fit .* fewer than num_jobs = 160"):
        load_scenario_file(tmp_path / "s.toml")
    (tmp_path / "s.toml").write_text(text + "allow_fewer = true\n")
    with pytest.warns(UserWarning, match="allow_fewer: running them all"):
        assert load_scenario_file(tmp_path / "s.toml").episode(1)[1].num_jobs == 40


def _copy_tracked(dest: Path) -> None:
    out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                         capture_output=True, check=True).stdout
    for raw in filter(None, out.split(b"\0")):
        src = ROOT / raw.decode()
        if src.is_file():
            target = dest / raw.decode()
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, target)


def _env(pythonpath: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DDL_GYM_TRACES", "DDL_GYM_CACHE", "PYTHONPATH")}
    env.update(PYTHONPATH=str(pythonpath), DDL_GYM_PURE_PYTHON="1", OMP_NUM_THREADS="1")
    return env


#: One child process: `list`, then one episode of every trace-backed scenario (the others need no file).
_CHILD = r"""
import contextlib, io, sys
from ddl_gym.cli import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    assert main(["list"]) == 0
rows = {line.split()[0]: line for line in out.getvalue().splitlines() if line.startswith("  ") and line.split()}
for name in sys.argv[1:]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(["eval", "--scenario", name, "--policies", "fifo+pack", "--seeds", "1", "--out", "o-" + name,
                     "--no-plots", "--no-progress", "--workers", "1"])
    jobs = ""
    if code == 0:
        import csv
        jobs = next(csv.DictReader(open("o-" + name + "/summary.csv")))["jobs"]
    print(name, code, jobs or "-", "LISTED-NEEDS" if "needs " in rows[name] else "-",
          err.getvalue().strip().replace("\n", " | "), sep="\t")
"""


def test_fresh_clone_without_shared_runs_every_trace_scenario(tmp_path: Path) -> None:
    clone = tmp_path / "clone"  # no ../shared beside it
    _copy_tracked(clone)
    names = ["philly-windows", "philly-slice", "alibaba-windows", "transfer-train"]
    proc = subprocess.run([sys.executable, "-c", _CHILD, *names], cwd=clone, env=_env(clone), capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = {line.split("\t")[0]: line.split("\t")[1:] for line in proc.stdout.splitlines() if "\t" in line}
    assert result["philly-windows"][:3] == ["0", "160", "-"]
    assert result["philly-slice"][:3] == ["0", "160", "-"]
    for name in ("alibaba-windows", "transfer-train"):
        code, _, listed, line = result[name]
        assert (code, listed) == ("2", "LISTED-NEEDS"), result[name]
        assert line.startswith("ddl-gym: error: needs openb_pod_list_default.csv") and "DDL_GYM_TRACES" in line
        assert " | " not in line  # one line


def test_wheel_carries_the_data_and_the_notice(tmp_path: Path) -> None:
    pytest.importorskip("wheel")  # scripts/setup.sh installs it (dev extra); the build needs no network
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
                            str(tmp_path / "dist"), str(ROOT)], capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stderr[-2000:]
    wheel = next((tmp_path / "dist").glob("ddl_gym-*.whl"))
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        zf.extractall(tmp_path / "site")
    for data in tracedata.TRACE_DATA.values():
        if data.bundled:
            assert f"ddl_gym/data/{data.bundled}" in names
    assert any(n.endswith(".dist-info/NOTICE") or n.endswith("/licenses/NOTICE") for n in names), names[-8:]
    code = ("import ddl_gym, sys; from pathlib import Path; assert Path(ddl_gym.__file__).is_relative_to(sys.argv[1]); "
            "from ddl_gym.workloads.philly import load_philly; print(load_philly(table='rfold').num_jobs)")
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path / "site")], cwd=tmp_path,
                          env=_env(tmp_path / "site"), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.split() == ["95621"], proc.stderr[-2000:]
