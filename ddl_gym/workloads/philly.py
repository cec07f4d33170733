"""Load the Microsoft Philly job tables (Jeon et al., ATC'19; CC BY 4.0) as workloads.

Two derived tables are supported (see ``../shared/traces/philly/README.md``):

* ``"rfold"`` — ``philly_rfold_jobs.csv`` (95,621 jobs, via shuoshuc/RFold, MIT). First line is
  a ``#`` comment header ``#job id,arrival time (sec),topology,shape,size,duration (sec)``;
  rows sorted by arrival; arrivals in seconds since 2017-08-14 23:27:00.
* ``"pollux"`` — ``philly_pollux_jobs.csv`` (71,570 jobs, via petuum/adaptdl, Apache-2.0).
  Columns ``timestamp,duration,num_gpus,gpu_time,cluster``; rows NOT sorted by time; timestamps
  ``YYYY-MM-DD HH:MM:SS`` are converted to seconds since the earliest one in the file.

Mapping to a :class:`~ddl_gym.sim.model.Workload` (assumptions, stated once here):

* ``arrival`` = submission time in seconds relative to the first job of the loaded slice.
* ``gpus`` = the recorded GPU count (``size`` / ``num_gpus``).
* **Model-profile sampler.** Philly does not record which model a job trained. Each job gets a
  profile drawn uniformly and independently from ``models`` (default: the four Ada-SRSF Table III
  models), using the seeded ``rng``; the draw happens after the slice is selected, so the same
  slice and seed always give the same profiles.
* **Iterations.** The recorded duration is interpreted as the job's run time *alone*, i.e.
  without contention or communication: ``iterations = max(1, round(duration_s / t_iter))`` where
  ``t_iter`` is the sampled model's single-GPU compute time per iteration
  (``forward_s + backward_s``) or ``iteration_time_s`` if given — or, when a ``performance_model``
  and ``cluster`` are given (the built-in Philly scenarios do this), the job's uncontended
  per-iteration time on its most consolidated placement, so that a job running alone takes
  exactly its recorded duration (communication included). Zero-duration jobs get one
  iteration. Simulated run times therefore match the trace only for jobs that run alone on one
  server; multi-server jobs take longer by their communication time.
* ``user`` = the hashed virtual-cluster (VC) id where the table has one (Pollux ``cluster``,
  a hex string, read as a base-16 integer; other strings fall back to CRC-32), else -1.
  ``group`` = -1 (no recurrence information). ``weight`` = 1.
* ``job_id`` = RFold's ``job id``; for the Pollux table, the 0-based data-row index in the file.

Trace location (when ``path`` is None): ``$DDL_GYM_TRACES`` (a traces folder holding
``philly/``, or the ``philly/`` folder itself), else the bundled full tables
``ddl_gym/data/philly_{rfold,pollux}_jobs.csv.gz`` (:mod:`ddl_gym.workloads.tracedata`). The
500-job sample ``ddl_gym/data/philly_sample.csv`` is never a fallback; pass it as ``path``.
"""

from __future__ import annotations

import os
import warnings
import zlib
from pathlib import Path
from collections.abc import Callable
from typing import Any, Literal, overload

import numpy as np
import pandas as pd

from ddl_gym.sim.model import ClusterSpec, ConfigError, Workload
from ddl_gym.workloads.csv_io import FIELD_BOUNDS, MAX_TIME_S
from ddl_gym.workloads.synthetic import TABLE_III, ModelSpec, resolve_models

TRACE_FILES: dict[str, str] = {"rfold": "philly_rfold_jobs.csv", "pollux": "philly_pollux_jobs.csv"}
RFOLD_COLUMNS: tuple[str, ...] = ("job id", "arrival time (sec)", "topology", "shape", "size", "duration (sec)")
POLLUX_COLUMNS: tuple[str, ...] = ("timestamp", "duration", "num_gpus", "gpu_time", "cluster")
#: The bundled sample: 500 consecutive RFold rows (job ids 80000–80499), unmodified.
SAMPLE_PATH: Path = Path(__file__).resolve().parent.parent / "data" / "philly_sample.csv"

Table = Literal["rfold", "pollux"]


def default_trace_path(table: Table = "rfold") -> Path:
    """Where :func:`load_philly` looks for ``table`` when no path is given.

    Args:
        table: ``"rfold"`` or ``"pollux"``.

    Returns:
        :func:`ddl_gym.workloads.tracedata.locate`'s answer: ``$DDL_GYM_TRACES/philly/<file>``
        (or ``$DDL_GYM_TRACES/<file>``), else the bundled full table
        ``ddl_gym/data/<file>.gz`` (both tables are bundled, CC BY 4.0). Never the 500-job sample
        (:data:`SAMPLE_PATH`), which is read only when passed as ``path``.

    Raises:
        ConfigError: if ``table`` is unknown, or (in an install without the data folder) no copy is found.
    """
    if table not in TRACE_FILES:
        raise ConfigError(f"table: must be one of {sorted(TRACE_FILES)}, got {table!r}")
    from ddl_gym.workloads.tracedata import locate

    return locate(f"philly-{table}")


def _split_lines(path: Path) -> list[str]:
    """All lines of the file (line ``k`` of the list is file line ``k + 1``), under the CSV size limits."""
    from ddl_gym.workloads.csv_io import read_text_lines

    return read_text_lines(path, "Philly trace")


def _detect(path: Path, lines: list[str]) -> tuple[Table, list[str], int]:
    """Find the header; return (table, column names, index of the first data line)."""
    for k, line in enumerate(lines):
        stripped = line.strip()
        if not stripped:
            continue
        body = stripped.lstrip("#").strip()
        names = [c.strip() for c in body.split(",")]
        if names[:2] == list(RFOLD_COLUMNS[:2]):
            return "rfold", names, k + 1
        if "timestamp" in names and "num_gpus" in names:
            return "pollux", names, k + 1
        if not stripped.startswith("#"):
            break  # a data line before any recognisable header
    raise ConfigError(
        f"{path}: line 1: not a Philly job table: expected a header '#{','.join(RFOLD_COLUMNS)}' "
        f"(RFold) or '{','.join(POLLUX_COLUMNS)}' (Pollux)"
    )


class _Rows:
    """Data lines split into string columns, with their file line numbers and a keep mask."""

    def __init__(self, path: Path, lines: list[str], first: int, header: list[str], drop_malformed: bool):
        self.path = path
        self.drop_malformed = drop_malformed
        self.header_line = first  # the header is the line just before the first data line
        body = lines[first:]
        line_no = np.arange(first + 1, first + 1 + len(body), dtype=np.int64)
        nonblank = np.fromiter((bool(s.strip()) and not s.lstrip().startswith("#") for s in body),
                               dtype=bool, count=len(body))
        split = [s.split(",") for s, keep in zip(body, nonblank) if keep]
        self.lines = line_no[nonblank]
        width = len(header)
        counts = np.fromiter((len(r) for r in split), dtype=np.int64, count=len(split))
        self.ok = counts == width
        self.n_malformed = 0
        if not self.ok.all():
            i = int(np.flatnonzero(~self.ok)[0])
            self._bad(~self.ok, f"{self.path}: line {int(self.lines[i])}: expected {width} fields, "
                      f"got {int(counts[i])}")
        good = [r if ok else [""] * width for r, ok in zip(split, self.ok)]
        cols = list(zip(*good)) if good else [()] * width
        self.columns = {name: np.asarray(c, dtype=object) for name, c in zip(header, cols)}

    def _bad(self, mask: np.ndarray, message: str) -> None:
        """Raise for the first malformed row, or mark all of ``mask`` to be dropped."""
        if not self.drop_malformed:
            raise ConfigError(message)
        new = mask & self.ok
        self.n_malformed += int(new.sum())
        self.ok &= ~mask

    def column(self, name: str) -> np.ndarray:
        if name not in self.columns:
            from ddl_gym.workloads.csv_io import header_hint

            raise ConfigError(f"{self.path}: line {self.header_line}: column {name!r}: missing from the "
                              f"header ({header_hint(list(self.columns), [name]).rstrip('; ')})")
        return self.columns[name]

    def numeric(self, name: str, *, integer: bool = False, minimum: float = 0.0,
                maximum: float = MAX_TIME_S) -> np.ndarray:
        """Parse a numeric column; malformed rows raise (or are dropped), values outside
        ``[minimum, maximum]`` too (integers also beyond 2**53, where float64 stops being exact)."""
        raw = self.column(name)
        values = pd.to_numeric(pd.Series(raw), errors="coerce").to_numpy(np.float64)
        with np.errstate(invalid="ignore"):
            checks = [
                (~np.isfinite(values), "is not a finite number"),
                (values < minimum, f"must be >= {minimum:g}"),
                (values > maximum, f"is out of range: must be <= {maximum:g}"),
            ]
            if integer:
                checks.append((np.abs(values) >= 2.0**53, "is out of range: integers must stay below 2**53"))
                checks.append((values != np.floor(values), "is not an integer"))
        for bad, problem in checks:
            bad = bad & self.ok
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                text = str(raw[i]).strip()
                if problem == "is not a finite number" and not _is_float(text):
                    problem = "is not a number"
                self._bad(bad, f"{self.path}: line {int(self.lines[i])}: column {name!r}: {text!r} {problem}")
        return values


def _is_float(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _vc_code(values: np.ndarray) -> np.ndarray:
    """Stable integer code per hashed VC id: base-16 value if hex, else CRC-32 (-1 if empty)."""
    uniques, inverse = np.unique(values.astype(str), return_inverse=True)
    codes = np.empty(len(uniques), dtype=np.int64)
    for k, vc in enumerate(uniques.tolist()):
        vc = vc.strip()
        try:
            codes[k] = int(vc, 16) if vc and len(vc) <= 15 else (zlib.crc32(vc.encode()) if vc else -1)
        except ValueError:
            codes[k] = zlib.crc32(vc.encode())
    return codes[inverse.reshape(-1)]


def iterations_for_durations(
    duration_s: np.ndarray, gpus: np.ndarray, model_index: np.ndarray, profiles: tuple[Any, ...], *,
    cluster: ClusterSpec | None = None, performance_model: Any = None, iteration_time_s: float | None = None,
    where: Callable[[int], str] = lambda i: f"job {i}",
) -> np.ndarray:
    """Iterations that make each job, alone on its most consolidated placement, take ``duration_s``.

    ``iteration_time_s`` fixes the time per iteration; else with ``performance_model`` and ``cluster``
    it is the job's uncontended per-iteration time on ``ceil(G/largest server)`` servers (the recorded
    duration includes the job's own communication, so dividing by compute alone would overstate
    the work); else the profile's compute time. Shared by every trace loader; ``where(i)`` names
    job ``i``'s row in errors.
    """
    n = len(duration_s)
    if iteration_time_s is not None:
        if not np.isfinite(iteration_time_s) or iteration_time_s <= 0:
            raise ConfigError(f"iteration_time_s: must be a finite number > 0, got {iteration_time_s!r}")
        per_iter = np.full(n, float(iteration_time_s))
    else:
        compute = np.array([p.compute_s for p in profiles], dtype=np.float64)
        if compute.min() <= 0:
            raise ConfigError("models: every profile needs forward_s + backward_s > 0 to convert durations")
        per_iter = compute[model_index]
        if performance_model is not None and cluster is not None:
            probe = Workload(job_id=np.arange(n), arrival=np.zeros(n), gpus=np.asarray(gpus, dtype=np.int64),
                             iterations=np.ones(n, dtype=np.int64), model_index=model_index, models=profiles)
            bound = performance_model.bind(cluster, probe)
            spans = -(-probe.gpus // cluster.max_server_gpus)
            per_iter = np.array([bound.iteration_time(j, int(s), 1 if s > 1 else 0)
                                 for j, s in enumerate(spans.tolist())], dtype=np.float64)
    iterations_f = np.maximum(1.0, np.rint(np.asarray(duration_s, dtype=np.float64) / per_iter))
    too_long = iterations_f > FIELD_BOUNDS["iterations"].high
    if too_long.any():  # a tiny iteration time turns a long job into more iterations than int64 holds safely
        i = int(np.flatnonzero(too_long)[0])
        raise ConfigError(f"{where(i)}: duration {float(duration_s[i]):g} s at {per_iter[i]:g} s per iteration is "
                          f"{iterations_f[i]:.3g} iterations, more than the {FIELD_BOUNDS['iterations'].high:.0e} "
                          "allowed; check iteration_time_s / the model profiles")
    return iterations_f.astype(np.int64)


@overload
def load_philly(
    path: str | os.PathLike[str] | None = ..., *, table: Table | None = ...,
    rng: np.random.Generator | int | None = ..., max_jobs: int | None = ..., start: float | None = ...,
    end: float | None = ..., cluster: ClusterSpec | None = ..., drop_oversized: bool = ...,
    drop_malformed: bool = ..., iteration_time_s: float | None = ..., models: ModelSpec | None = ...,
    name: str | None = ..., return_dropped: Literal[False] = ...,
) -> Workload: ...
@overload
def load_philly(
    path: str | os.PathLike[str] | None = ..., *, table: Table | None = ...,
    rng: np.random.Generator | int | None = ..., max_jobs: int | None = ..., start: float | None = ...,
    end: float | None = ..., cluster: ClusterSpec | None = ..., drop_oversized: bool = ...,
    drop_malformed: bool = ..., iteration_time_s: float | None = ..., models: ModelSpec | None = ...,
    name: str | None = ..., return_dropped: Literal[True],
) -> tuple[Workload, dict[str, int]]: ...
def load_philly(
    path: str | os.PathLike[str] | None = None,
    *,
    table: Table | None = None,
    rng: np.random.Generator | int | None = None,
    max_jobs: int | None = None,
    start: float | None = None,
    end: float | None = None,
    cluster: ClusterSpec | None = None,
    drop_oversized: bool = True,
    drop_malformed: bool = False,
    iteration_time_s: float | None = None,
    performance_model: Any = None,
    models: ModelSpec | None = TABLE_III,
    name: str | None = None,
    return_dropped: bool = False,
) -> Workload | tuple[Workload, dict[str, int]]:
    """Load a Philly job table as a workload (mapping and assumptions in the module docstring).

    Every row of the file is validated first (a malformed row raises, or with ``drop_malformed``
    is dropped and counted); then rows are selected in this order: time window ``[start, end)``
    → oversized jobs (if ``cluster`` and ``drop_oversized``) → the first ``max_jobs`` by arrival.
    Finally arrivals are rebased to the first selected job and models are drawn.

    Args:
        path: a table file (or a folder holding it); ``None`` = :func:`default_trace_path`.
        table: ``"rfold"`` or ``"pollux"``; ``None`` detects it from the header (and means RFold
            when ``path`` is ``None``). A given value must match the file.
        rng: generator or seed for the model-profile sampler; ``None`` = seed 0 (reproducible).
        max_jobs: keep at most this many jobs (the earliest).
        start: window start in the table's own seconds (RFold ``arrival time (sec)``; Pollux:
            seconds since the file's earliest timestamp), inclusive.
        end: window end in the same seconds, exclusive.
        cluster: if given, jobs needing more GPUs than it has are dropped (with a warning) or,
            when ``drop_oversized`` is false, an error naming the line.
        drop_oversized: see ``cluster``.
        drop_malformed: drop malformed rows with a counted warning instead of raising.
        iteration_time_s: seconds per iteration used to turn durations into iterations instead of
            the sampled model's ``forward_s + backward_s``.
        models: profiles or zoo names for the uniform model sampler (default: Table III).
        name: workload name (default ``"philly-<table>"``).
        return_dropped: also return ``{"malformed": n, "oversized": n}``.

    Returns:
        The workload (sorted by arrival), or ``(workload, dropped_counts)``.

    Raises:
        ConfigError: unreadable/unknown file, or a malformed row (naming file, line and column).
    """
    if table is not None and table not in TRACE_FILES:
        raise ConfigError(f"table: must be one of {sorted(TRACE_FILES)}, got {table!r}")
    if path is None:
        file = default_trace_path(table or "rfold")
    else:
        file = Path(path)
        if file.is_dir():
            file = file / TRACE_FILES[table or "rfold"]
    lines = _split_lines(file)
    detected, header, first = _detect(file, lines)
    if table is not None and detected != table:
        raise ConfigError(f"{file}: line {first}: header is a {detected!r} table, but table={table!r} was asked")
    rows = _Rows(file, lines, first, header, drop_malformed)

    if detected == "rfold":
        job_id = rows.numeric("job id", integer=True, minimum=-(2.0**53))
        t = rows.numeric("arrival time (sec)")
        gpus = rows.numeric("size", integer=True, minimum=1, maximum=FIELD_BOUNDS["gpus"].high)
        duration = rows.numeric("duration (sec)")
        user = np.full(len(t), -1, dtype=np.int64)
    else:
        raw_ts = pd.Series(rows.column("timestamp")).astype(str).str.strip()
        stamp = pd.to_datetime(raw_ts, format="%Y-%m-%d %H:%M:%S", errors="coerce")
        bad = stamp.isna().to_numpy() & rows.ok
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            rows._bad(bad, f"{file}: line {int(rows.lines[i])}: column 'timestamp': {raw_ts.iloc[i]!r} "
                      "is not a 'YYYY-MM-DD HH:MM:SS' time")
        duration = rows.numeric("duration")
        gpus = rows.numeric("num_gpus", integer=True, minimum=1, maximum=FIELD_BOUNDS["gpus"].high)
        seconds = (stamp - stamp[rows.ok].min()).dt.total_seconds().to_numpy(np.float64) if rows.ok.any() \
            else np.zeros(len(stamp))
        t = np.where(rows.ok, seconds, 0.0)
        job_id = np.arange(len(t), dtype=np.float64)
        user = _vc_code(rows.column("cluster")) if "cluster" in rows.columns else np.full(len(t), -1, np.int64)

    if rows.n_malformed:
        warnings.warn(f"{file}: dropped {rows.n_malformed} malformed row(s)", UserWarning, stacklevel=2)
    keep = rows.ok.copy()
    if start is not None:
        keep &= t >= float(start)
    if end is not None:
        keep &= t < float(end)
    n_oversized = 0
    if cluster is not None:
        too_big = keep & (gpus > cluster.num_gpus)
        if too_big.any():
            if not drop_oversized:
                i = int(np.flatnonzero(too_big)[0])
                raise ConfigError(
                    f"{file}: line {int(rows.lines[i])}: column {'size' if detected == 'rfold' else 'num_gpus'!r}: "
                    f"job needs {int(gpus[i])} GPUs but the cluster has {cluster.num_gpus} "
                    f"({int(too_big.sum())} such jobs); drop them with drop_oversized=True"
                )
            n_oversized = int(too_big.sum())
            keep &= ~too_big
            warnings.warn(f"{file}: dropped {n_oversized} job(s) needing more than the cluster's "
                          f"{cluster.num_gpus} GPUs", UserWarning, stacklevel=2)

    idx = np.flatnonzero(keep)
    idx = idx[np.argsort(t[idx], kind="stable")]
    if max_jobs is not None:
        if int(max_jobs) < 0:
            raise ConfigError(f"max_jobs: must be >= 0, got {max_jobs}")
        idx = idx[: int(max_jobs)]
    if idx.size == 0:  # an empty workload would "succeed" with jobs=0: say why nothing is left
        raise ConfigError(
            f"{file}: no jobs left to simulate ({int(rows.ok.sum())} valid rows; window start={start}, end={end}, "
            f"{n_oversized} dropped as larger than the cluster, max_jobs={max_jobs})")

    generator = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(0 if rng is None else rng)
    profiles = resolve_models(models)
    model_index = generator.integers(0, len(profiles), size=len(idx), dtype=np.int64)
    iterations = iterations_for_durations(
        duration[idx], gpus[idx], model_index, profiles, cluster=cluster, performance_model=performance_model,
        iteration_time_s=iteration_time_s, where=lambda i: f"{file}: line {int(rows.lines[idx[i]])}")

    arrival = t[idx] - (t[idx[0]] if idx.size else 0.0)
    workload = Workload(
        job_id=job_id[idx].astype(np.int64), arrival=arrival, gpus=gpus[idx].astype(np.int64),
        iterations=iterations, model_index=model_index, models=profiles, user=user[idx],
        name=name or f"philly-{detected}",
    )
    dropped = {"malformed": rows.n_malformed, "oversized": n_oversized}
    return (workload, dropped) if return_dropped else workload
