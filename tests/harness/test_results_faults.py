"""Results that cannot go stale or tear: content-keyed cache, one writer per folder, atomic files with
dtypes kept, one-line errors on full or read-only disks, worker processes that die with their parent."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ddl_gym import harness
from ddl_gym.harness import store
from ddl_gym.cli import main
from ddl_gym.harness import evaluate, read_results, results_lock
from ddl_gym.sim.model import ConfigError

TINY = ("name = 'tiny'\n[cluster]\nservers = 2\ngpus_per_server = 4\n"
        "[workload]\nkind = 'synthetic'\ngenerator = 'scaled'\nnum_jobs = {n}\nmax_gpus = 8\n")


def _tiny(tmp_path: Path, n: int = 8) -> Path:
    path = tmp_path / "tiny.toml"
    path.write_text(TINY.format(n=n))
    return path


# ---------------------------------------------------------------------------- cache on content
def test_an_edited_scenario_file_is_recomputed_not_reused(tmp_path: Path) -> None:
    scenario = _tiny(tmp_path)
    first = evaluate(["fifo+pack"], str(scenario), 2, tmp_path / "out", workers=1, progress=False, plots=False,
                     echo=False)
    same = evaluate(["fifo+pack"], str(scenario), 2, tmp_path / "out", workers=1, progress=False, plots=False,
                    echo=False)
    assert same.reused == 2 and same.stale == 0
    scenario.write_text(TINY.format(n=12))  # same name, same path, different content
    changed = evaluate(["fifo+pack"], str(scenario), 2, tmp_path / "out", workers=1, progress=False, plots=False,
                       echo=False)
    assert changed.reused == 0 and changed.stale == 2
    assert changed.summary["jobs"].tolist() == [12, 12] and first.summary["jobs"].tolist() == [8, 8]
    assert len(pd.read_csv(tmp_path / "out" / "summary.csv")) == 2  # replaced, not duplicated


def test_an_edited_workload_csv_is_recomputed(tmp_path: Path) -> None:
    jobs = tmp_path / "jobs.csv"
    jobs.write_text("job_id,arrival_s,gpus,iterations,model\n0,0,1,100,resnet50\n")
    kwargs = dict(workers=1, progress=False, plots=False, echo=False, workload_csv=jobs)
    evaluate(["fifo+pack"], "small", 1, tmp_path / "out", **kwargs)
    assert evaluate(["fifo+pack"], "small", 1, tmp_path / "out", **kwargs).reused == 1
    jobs.write_text("job_id,arrival_s,gpus,iterations,model\n0,0,1,200,resnet50\n")
    assert evaluate(["fifo+pack"], "small", 1, tmp_path / "out", **kwargs).stale == 1


def test_policy_fingerprint_follows_the_agent_files_bytes(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    folder.mkdir()
    for name in ("agent.zip", "agent.json", "vecnormalize.pkl"):
        (folder / name).write_bytes(b"v1")
    spec = f"maskable-ppo:{folder / 'agent.zip'}"
    before = harness.policy_fingerprint(spec)
    assert harness.policy_fingerprint(spec) == before
    (folder / "agent.zip").write_bytes(b"v2 retrained")
    assert harness.policy_fingerprint(spec) != before
    # Aliases are one policy: one key.
    assert harness.policy_fingerprint("lwf1+ada-srsf") == harness.policy_fingerprint("ada-srsf")
    assert harness.policy_fingerprint("fifo+pack") != harness.policy_fingerprint("fifo+ff")


# ---------------------------------------------------------------------------- one writer per folder
def test_a_second_writer_is_refused_and_rows_are_never_duplicated(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    with results_lock(out):
        with pytest.raises(ConfigError, match=f"another ddl-gym run \\(pid {os.getpid()}\\)"):
            evaluate(["fifo+pack"], "small", 1, out, workers=1, progress=False, echo=False)
    evaluate(["fifo+pack"], "small", 1, out, workers=1, progress=False, plots=False, echo=False)
    evaluate(["fifo+pack"], "small", 1, out, workers=1, progress=False, plots=False, echo=False, overwrite=True)
    jobs = pd.read_csv(out / "jobs.csv")
    assert not jobs.duplicated(subset=["scenario", "policy", "seed", "job_id"]).any()


def test_duplicated_job_rows_in_a_file_are_read_once(tmp_path: Path) -> None:
    out = tmp_path / "out"
    evaluate(["fifo+pack"], "small", 1, out, workers=1, progress=False, plots=False, echo=False)
    jobs = pd.read_csv(out / "jobs.csv")
    pd.concat([jobs, jobs]).to_csv(out / "jobs.csv", index=False)  # what two unlocked writers used to leave
    _, again = read_results(out)
    assert len(again) == len(jobs)


# ---------------------------------------------------------------------------- atomic files, dtypes
def test_a_torn_jobs_file_reads_back_with_integer_dtypes(tmp_path: Path) -> None:
    out = tmp_path / "out"
    evaluate(["fifo+pack", "srsf+pack"], "small", 1, out, workers=1, progress=False, plots=False, echo=False)
    text = (out / "jobs.csv").read_text()
    (out / "jobs.csv").write_text(text[: len(text) - 25])  # the last row loses its trailing columns
    summary, jobs = read_results(out)
    for col in ("seed", "job_id", "gpus", "iterations", "n_servers"):
        assert jobs[col].dtype == np.int64, col
    assert summary["jobs"].dtype == np.int64 and summary["seed"].dtype == np.int64
    assert summary["policy"].tolist() == ["fifo+pack"]  # the pair with the torn row is incomplete
    again = evaluate(["fifo+pack", "srsf+pack"], "small", 1, out, workers=1, progress=False, plots=False, echo=False)
    assert again.reused == 1 and len(again.jobs) == len(text.splitlines()) - 1
    assert again.jobs["job_id"].dtype == np.int64 and pd.read_csv(out / "jobs.csv")["gpus"].dtype == np.int64


@pytest.mark.parametrize("code, words", [(errno.ENOSPC, "disk is full"), (errno.EROFS, "read-only")])
def test_a_full_or_read_only_disk_stops_with_one_line_and_no_torn_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], code: int, words: str) -> None:
    out = tmp_path / "out"
    assert main(["eval", "--scenario", "small", "--policies", "fifo+pack", "--seeds", "1", "--out", str(out),
                 "--no-progress", "--no-plots", "--workers", "1"]) == 0
    before = (out / "jobs.csv").read_bytes()
    real_write = os.write

    def failing_write(fd: int, data: bytes) -> int:  # half a block lands, then the disk fails
        real_write(fd, bytes(data[: len(data) // 2]))
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(store.os, "write", failing_write)
    capsys.readouterr()
    status = main(["eval", "--scenario", "small", "--policies", "fifo+pack,srsf+pack", "--seeds", "1", "--out",
                   str(out), "--no-progress", "--no-plots", "--workers", "1"])
    err = capsys.readouterr().err
    assert status == 2 and len(err.strip().splitlines()) == 1 and words in err and "jobs.csv" in err
    assert (out / "jobs.csv").read_bytes() == before  # cut back to its size before the failed append
    monkeypatch.undo()
    summary, jobs = read_results(out)
    assert summary["policy"].tolist() == ["fifo+pack"] and jobs["gpus"].dtype == np.int64


def test_stale_plots_do_not_linger(tmp_path: Path) -> None:
    out = tmp_path / "out"
    evaluate(["fifo+pack", "srsf+pack"], "small", 1, out, workers=1, progress=False, plots=False, echo=False)
    for name in ("gantt_old_policy.png", "gantt_srsf_pack.png", "metrics.png"):
        (out / name).write_bytes(b"old")
    store._write_csv_atomic(pd.read_csv(out / "summary.csv").query("policy == 'fifo+pack'"), out / "summary.csv")
    written = harness.write_artifacts(out)
    assert not (out / "gantt_old_policy.png").exists() and not (out / "gantt_srsf_pack.png").exists()
    assert (out / "gantt_fifo_pack.png") in written and (out / "metrics.png").read_bytes()[:4] == b"\x89PNG"
    harness.write_artifacts(out, plots=False)
    assert not list(out.glob("*.png"))


# ---------------------------------------------------------------------------- workers die with their parent
def _descendants(pid: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
    found, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["kill-9", "sigterm"])
def test_pool_workers_and_forkserver_exit_with_a_killed_eval(tmp_path: Path, sig: signal.Signals) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "ddl_gym.cli", "eval", "--scenario", "large", "--policies", "srsf+ca,fifo+pack",
         "--seeds", "6", "--debug", "--workers", "2", "--out", str(tmp_path / "out"), "--no-progress", "--no-plots"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    family: set[int] = set()
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len(family) < 3:  # forkserver + 2 workers (+ resource tracker)
            time.sleep(0.3)
            family = _descendants(proc.pid)
        assert len(family) >= 3, "the pool never started"
        time.sleep(0.5)
        family = _descendants(proc.pid)
        proc.send_signal(sig)
        proc.wait(timeout=30)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and any(_alive(p) for p in family):
            time.sleep(0.2)
        assert not [p for p in family if _alive(p)], "orphaned worker processes"
        if sig == signal.SIGTERM:
            assert proc.returncode == 143 and b"terminated" in proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
        for pid in family:  # clean up after a failure: only the processes this test started
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as fh:
                    ours = b"multiprocessing" in fh.read()
            except OSError:
                continue
            if ours and _alive(pid):
                os.kill(pid, signal.SIGKILL)
