"""The results folder: columns, reading with dtypes restored, atomic writes, appends cut back on failure,
the one-writer lock and the content cache keys (``cache_key``) that decide what a rerun reuses.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ddl_gym.harness.policy_specs import is_agent_spec, policy_label
from ddl_gym.scenarios import Scenario
from ddl_gym.sim.metrics import SUMMARY_KEYS
from ddl_gym.sim.model import ConfigError


#: Columns identifying one evaluated pair.
ID_COLUMNS: tuple[str, ...] = ("scenario", "policy", "seed")


#: Every column of ``summary.csv``, in file order.
SUMMARY_COLUMNS: tuple[str, ...] = (
    *ID_COLUMNS, *SUMMARY_KEYS, "decisions", "invalid_actions", "invalid_action_rate", "completed", "driver",
    "invariant_checks", "num_gpus", "num_servers", "gpus_per_server", "decision_time_s", "wall_time_s", "ddl_gym_version", "git_sha",
    "cache_key",
)


#: Wall-clock measurements: vary from run to run, so never compared for determinism.
TIMING_COLUMNS: tuple[str, ...] = ("decision_time_s", "wall_time_s")


_STRING_COLUMNS = ("scenario", "policy", "driver", "ddl_gym_version", "git_sha", "model", "gpu_ids",
                   "gpus_per_server", "cache_key")


#: Integer columns of both files: restored to int64 when read back (a NaN would make pandas use float).
_INT_COLUMNS = ("seed", "jobs", "decisions", "invalid_actions", "invariant_checks", "num_gpus", "num_servers",
                "job_id", "gpus", "iterations", "n_servers", "preemptions")


#: Job-record columns that are never empty in a complete row (``n_servers`` is 0 for a job that never ran).
_JOB_REQUIRED = ("job_id", "arrival_s", "gpus", "iterations", "n_servers", "arch", "rejected", "preemptions")


LOCK_FILE = ".ddl-gym.lock"


#: ``cache_key`` of rows that may never be reused (policies whose source or parameters cannot be known).
NO_CACHE_KEY = "-"


SUMMARY_FILE = "summary.csv"


JOBS_FILE = "jobs.csv"


def _run_length(counts: Sequence[int]) -> str:
    """``(4, 4, 4, 8)`` -> ``"3x4,1x8"`` (servers x GPUs, in server order)."""
    parts: list[str] = []
    for value in counts:
        if parts and parts[-1].split("x")[1] == str(value):
            n, g = parts[-1].split("x")
            parts[-1] = f"{int(n) + 1}x{g}"
        else:
            parts.append(f"1x{value}")
    return ",".join(parts)


def gpus_per_server_from_text(text: str) -> list[int]:
    """Inverse of the ``gpus_per_server`` column: ``"3x4,1x8"`` -> ``[4, 4, 4, 8]``."""
    out: list[int] = []
    for part in filter(None, str(text).split(",")):
        n, _, g = part.partition("x")
        out += [int(g)] * int(n)
    return out


# ============================================================================ files
def _canonical(frame: pd.DataFrame, columns: Sequence[str] | None = None) -> pd.DataFrame:
    """Fixed column order and dtypes, so fresh and re-read rows compare equal."""
    if columns is not None:
        for col in columns:
            if col not in frame.columns:
                frame[col] = np.nan
        extra = [c for c in frame.columns if c not in columns]
        frame = frame[list(columns) + extra]
    for col in _STRING_COLUMNS:
        if col in frame.columns:
            frame[col] = frame[col].fillna("").astype(str)
    for col in _INT_COLUMNS:  # back to int64 unless a value is missing (rows from an older version)
        if col in frame.columns and len(frame) and frame[col].dtype != np.int64 and frame[col].notna().all():
            frame[col] = frame[col].astype(np.int64)
    if "completed" in frame.columns and frame["completed"].dtype != bool:
        frame["completed"] = frame["completed"].map(lambda v: str(v).lower() == "true").astype(bool)
    return frame


def _read_csv(path: Path) -> pd.DataFrame:
    dtype = {c: str for c in _STRING_COLUMNS}
    try:
        frame = pd.read_csv(path, dtype=dtype)
    except pd.errors.EmptyDataError:
        return pd.DataFrame()
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError) as exc:
        raise ConfigError(f"{path}: cannot read results file ({str(exc).splitlines()[0]}); "
                          "move it away or rerun with --overwrite into another folder") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read results file ({exc.strerror or exc})") from None
    return frame


def read_results(out: str | Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``summary.csv`` and ``jobs.csv`` of a results folder, cleaned of incomplete rows.

    A summary row is complete when its metric columns parse; job rows count only if their pair
    has a summary row (rows are appended jobs-first, so a crash mid-pair leaves orphan job rows),
    and a job appearing twice for one pair keeps its last row. Integer columns come back as int64.
    """
    out = Path(out)
    summary_path, jobs_path = out / SUMMARY_FILE, out / JOBS_FILE
    summary = _read_csv(summary_path) if summary_path.exists() else pd.DataFrame()
    jobs = _read_csv(jobs_path) if jobs_path.exists() else pd.DataFrame()
    if summary.empty or any(c not in summary.columns for c in (*ID_COLUMNS, *SUMMARY_KEYS)):
        return _canonical(pd.DataFrame(columns=list(SUMMARY_COLUMNS))), pd.DataFrame()
    # A row cut short by a crash misses its trailing columns; the version is never empty when complete.
    # cache_key is the last column and never empty ("-" for rows that may not be reused), so a row torn
    # anywhere before it is dropped here (a key cut short cannot match, so it is recomputed anyway).
    required = [*ID_COLUMNS, *SUMMARY_KEYS] + [c for c in ("decision_time_s", "ddl_gym_version", "cache_key")
                                               if c in summary]
    summary = summary.dropna(subset=required).copy()
    summary = summary[pd.to_numeric(summary["seed"], errors="coerce").notna()]
    summary = summary.drop_duplicates(subset=list(ID_COLUMNS), keep="last")
    summary = _canonical(summary, SUMMARY_COLUMNS)
    if not jobs.empty and all(c in jobs.columns for c in ID_COLUMNS):
        jobs = jobs.dropna(subset=list(ID_COLUMNS)).copy()
        jobs = jobs[pd.to_numeric(jobs["seed"], errors="coerce").notna()]
        jobs["seed"] = jobs["seed"].astype(np.float64).astype(np.int64)
        # A job row cut short misses its trailing columns: its whole pair is incomplete and is recomputed.
        torn = jobs[list(c for c in _JOB_REQUIRED if c in jobs.columns)].isna().any(axis=1)
        if torn.any():
            bad = set(zip(jobs.loc[torn, "scenario"], jobs.loc[torn, "policy"], jobs.loc[torn, "seed"]))
            summary = summary[[k not in bad for k in zip(summary["scenario"], summary["policy"], summary["seed"])]]
        keys = set(zip(summary["scenario"], summary["policy"], summary["seed"]))
        jobs_keys = list(zip(jobs["scenario"].astype(str), jobs["policy"].astype(str), jobs["seed"]))
        jobs = jobs[[k in keys for k in jobs_keys]]
        if "job_id" in jobs.columns:
            jobs = jobs.drop_duplicates(subset=[*ID_COLUMNS, "job_id"], keep="last")
        jobs = _canonical(jobs.reset_index(drop=True))
    else:
        jobs = pd.DataFrame()
    return _sort_summary(summary), _sort_jobs(jobs)


def _sort_summary(summary: pd.DataFrame) -> pd.DataFrame:
    if summary.empty:
        return summary.reset_index(drop=True)
    return summary.sort_values(list(ID_COLUMNS), kind="stable").reset_index(drop=True)


def _sort_jobs(jobs: pd.DataFrame) -> pd.DataFrame:
    """Pairs in (scenario, policy, seed) order; jobs within a pair keep their workload order."""
    if jobs.empty:
        return jobs.reset_index(drop=True)
    order = np.lexsort((np.arange(len(jobs)), jobs["seed"].to_numpy(),
                        jobs["policy"].to_numpy(), jobs["scenario"].to_numpy()))
    return jobs.iloc[order].reset_index(drop=True)


def _write_error(path: Path, exc: OSError) -> ConfigError:
    hint = {errno.ENOSPC: "the disk is full", errno.EROFS: "the file system is read-only",
            errno.EACCES: "permission denied", errno.EDQUOT: "the disk quota is exhausted"}.get(exc.errno or 0)
    reason = hint or exc.strerror or str(exc)
    return ConfigError(f"cannot write {path}: {reason}; the results already written there are kept intact")


def _write_bytes_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to a temporary file in the same folder, flush it to disk, then rename it over ``path``."""
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        try:
            tmp.unlink(missing_ok=True)
        except OSError:
            pass
        raise _write_error(path, exc) from None


def _write_text_atomic(path: Path, text: str) -> None:
    _write_bytes_atomic(path, text.encode("utf-8"))


def _write_csv_atomic(frame: pd.DataFrame, path: Path) -> None:
    _write_bytes_atomic(path, frame.to_csv(index=False).encode("utf-8"))


def _append_csv(frame: pd.DataFrame, path: Path) -> None:
    """Append rows in one write; on failure cut the file back to its old size (never a torn row)."""
    exists = path.exists() and path.stat().st_size > 0
    if exists:
        header = pd.read_csv(path, nrows=0).columns.tolist()
        for col in header:
            if col not in frame.columns:
                frame[col] = np.nan
        text = frame[header].to_csv(index=False, header=False)
    else:
        text = frame.to_csv(index=False)
    data = text.encode("utf-8")
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    except OSError as exc:
        raise _write_error(path, exc) from None
    size = os.fstat(fd).st_size
    try:
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
    except OSError as exc:
        try:
            os.ftruncate(fd, size)
        except OSError:
            pass
        raise _write_error(path, exc) from None
    finally:
        os.close(fd)


# ============================================================================ the folder lock
@contextmanager
def results_lock(out: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``out/.ddl-gym.lock`` (one writer per results folder).

    Raises:
        ConfigError: another process holds it (its pid is named), or the folder is not writable.
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: no advisory locks, run unguarded
        yield
        return
    path = out / LOCK_FILE
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise _write_error(path, exc) from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "?"
            raise ConfigError(f"{out}: another ddl-gym run (pid {holder}) is writing results here; wait for it "
                              "to finish or choose another --out") from None
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        except OSError as exc:
            raise _write_error(path, exc) from None
        yield
    finally:
        os.close(fd)  # releases the lock (also released by the kernel if this process dies)


def _agent_files(spec: str) -> list[Path]:
    """The files an agent spec loads (zip, metadata sidecar, normalisation statistics)."""
    _, _, text = spec.partition(":")
    path = Path(text.strip())
    if path.is_dir():
        path = path / "agent.zip"
    if path.suffix != ".zip":
        path = path.with_suffix(".zip")
    return [path, path.with_suffix(".json"), path.with_name("vecnormalize.pkl"),
            path.with_name(f"{path.stem}.vecnormalize.pkl")]


def policy_fingerprint(spec: str) -> str:
    """Content key of a policy spec: the canonical spec plus the bytes of every agent file it loads."""
    from ddl_gym.fingerprint import file_digest, fingerprint

    label = policy_label(spec)
    agents = [label] if is_agent_spec(label) else [
        value for item in label.partition(":")[2].split(",")
        for key, _, value in [item.partition("=")] if key.strip() == "policy" and is_agent_spec(value)]
    files = {str(f): file_digest(f) for a in agents for f in _agent_files(a)}
    return fingerprint({"spec": label, "files": files})


def run_cache_key(scenario: Scenario, policy: str | Any, instance: Any | None = None, debug: bool = False) -> str:
    """The ``cache_key`` of a (scenario, policy) pair: scenario content, policy content, code and ``debug``.

    A registered policy from outside ddl-gym and an in-process policy object also key on the source
    of their defining modules and their parameters (:mod:`ddl_gym.policy_keys`); where those cannot
    be known the pair gets ``"-"`` (never reused) and a warning says so once. ``debug=True`` is part
    of the key, so a ``--debug`` run never reuses rows computed without the checks.
    """
    from ddl_gym.fingerprint import code_fingerprint, fingerprint, scenario_fingerprint
    from ddl_gym.policy_keys import Unknowable, object_policy_key, registered_policy_key, warn_uncached

    try:
        if isinstance(policy, str):
            user = registered_policy_key(policy, instance)
            policy_key = policy_fingerprint(policy) if not user else fingerprint(
                {"spec": policy_fingerprint(policy), "user": user})
        else:
            policy_key = fingerprint({"object": object_policy_key(policy)})
    except Unknowable as exc:
        warn_uncached(policy_label(policy), str(exc))
        return NO_CACHE_KEY
    parts: dict[str, Any] = {"scenario": scenario_fingerprint(scenario), "policy": policy_key,
                             "code": code_fingerprint()}
    if debug:
        parts["debug"] = True
    return fingerprint(parts)[:24]
