"""Read and write workloads as CSV files.

Format (UTF-8, comma-separated, one header line, one job per line; blank lines and lines
starting with ``#`` are ignored, so a file may carry comment lines):

=================  ========  ==================================================================
column             required  meaning
=================  ========  ==================================================================
``job_id``         yes       integer identifier, unique within the file
``arrival_s``      yes       arrival (submission) time in seconds, ``>= 0``; rows may be unsorted
``gpus``           yes       GPUs the job needs (rigid gang), integer ``>= 1``
``iterations``     yes       training iterations, integer ``>= 1``
``model``          yes       model name: a zoo model (``ddl_gym.sim.zoo``) or a custom name
``weight``         no        job weight for weighted JCT, ``>= 0`` (default 1)
``user``           no        integer user id (default -1 = unknown)
``group``          no        integer group id, e.g. recurring job (default -1 = unknown)
``gradient_bytes`` no        per-job profile override: bytes exchanged per all-reduce
``forward_s``      no        per-job profile override: forward time of one mini-batch, seconds
``backward_s``     no        per-job profile override: backward time of one mini-batch, seconds
``batch_size``     no        per-job profile override: per-worker mini-batch size
``gpu_memory_mb``  no        per-job profile override: GPU memory of one worker, MB
=================  ========  ==================================================================

A non-empty override replaces that field of the row's zoo profile (zoo names are matched
case-insensitively, paper spellings such as ``ResNet-50`` accepted); a row whose ``model`` is not
in the zoo must give all of ``gradient_bytes``, ``forward_s`` and ``backward_s`` (``batch_size``
then defaults to 32 and ``gpu_memory_mb`` to 0). A row giving all five profile fields defines a
complete profile named exactly as its ``model`` cell. Column order is free; extra columns are
ignored. ``job_id``, ``user`` and ``group`` are parsed as numbers, so keep them below 2**53.

Every problem raises :class:`~ddl_gym.sim.model.ConfigError` with one line of the form
``<file>: line <N>: column '<name>': <problem>``, where ``N`` is the line as a spreadsheet or
editor shows it (the header is line 1 when the file has no comment lines).

:func:`write_workload_csv` writes floats with ``repr`` (shortest exact round-trip form), so
``read_workload_csv(write_workload_csv(w))`` reproduces every column and per-job profile exactly.
"""

from __future__ import annotations

import csv
import os
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Literal, overload

import numpy as np
import pandas as pd

from ddl_gym.sim.model import ClusterSpec, ConfigError, ModelProfile, Workload
from ddl_gym.sim.zoo import MODEL_ZOO, get_model

REQUIRED_COLUMNS: tuple[str, ...] = ("job_id", "arrival_s", "gpus", "iterations", "model")
OPTIONAL_COLUMNS: tuple[str, ...] = ("weight", "user", "group")
PROFILE_COLUMNS: tuple[str, ...] = (
    "gradient_bytes", "forward_s", "backward_s", "batch_size", "gpu_memory_mb",
)
#: Override columns a custom (non-zoo) model must provide.
CUSTOM_MODEL_COLUMNS: tuple[str, ...] = ("gradient_bytes", "forward_s", "backward_s")

_INT_COLUMNS = {"job_id", "gpus", "iterations", "user", "group", "batch_size"}

PathLike = str | os.PathLike[str]


def _fail(path: PathLike, line: int, column: str, problem: str) -> ConfigError:
    return ConfigError(f"{path}: line {line}: column {column!r}: {problem}")


def _records(path: PathLike, reader: Iterator[list[str]]) -> Iterator[list[str]]:
    """Iterate CSV records, turning parser and decoding errors into ConfigError."""
    line = 1
    try:
        for line, record in enumerate(reader, start=1):
            yield record
    except csv.Error as exc:
        where = getattr(reader, "line_num", line) or line
        raise ConfigError(f"{path}: line {where}: unreadable CSV ({exc})") from None
    except UnicodeDecodeError as exc:  # decoding runs ahead in blocks, so no reliable line number
        raise ConfigError(f"{path}: not UTF-8 text ({exc}); save the CSV as UTF-8") from None


def _read_rows(path: PathLike) -> tuple[list[str], list[list[str]], np.ndarray]:
    """Return (header, data rows, 1-based file line of each row), skipping blanks and comments."""
    header: list[str] | None = None
    header_line = 0
    rows: list[list[str]] = []
    lines: list[int] = []
    try:
        handle = open(path, newline="", encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot open workload CSV ({exc.strerror or exc})") from None
    with handle:
        reader = csv.reader(handle)
        start = 1  # file line where the next record begins (records may span lines if quoted)
        for record in _records(path, reader):
            line = start
            start = reader.line_num + 1
            if not record or all(not f.strip() for f in record) or record[0].lstrip().startswith("#"):
                continue
            if header is None:
                header = [f.strip() for f in record]
                header_line = line
                continue
            if len(record) != len(header):
                raise ConfigError(
                    f"{path}: line {line}: expected {len(header)} fields as in the header "
                    f"(line {header_line}), got {len(record)}"
                )
            rows.append(record)
            lines.append(line)
    if header is None:
        raise ConfigError(f"{path}: line 1: empty workload CSV (no header line); required columns: "
                          + ", ".join(REQUIRED_COLUMNS))
    missing = [c for c in REQUIRED_COLUMNS if c not in header]
    if missing:
        raise ConfigError(
            f"{path}: line {header_line}: column {missing[0]!r}: missing required column "
            f"(header has {', '.join(header)}; required: {', '.join(REQUIRED_COLUMNS)})"
        )
    dupes = sorted({c for c in header if header.count(c) > 1 and c})
    if dupes:
        raise ConfigError(f"{path}: line {header_line}: column {dupes[0]!r}: appears more than once in the header")
    return header, rows, np.asarray(lines, dtype=np.int64)


def _numeric(
    path: PathLike, column: str, raw: np.ndarray, lines: np.ndarray, *, required: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Parse one column; return (float64 values, present mask). Empty cells allowed if not required."""
    stripped = np.char.strip(raw.astype(str))
    present = stripped != ""
    if required and not present.all():
        i = int(np.flatnonzero(~present)[0])
        raise _fail(path, int(lines[i]), column, "value is empty")
    values = pd.to_numeric(pd.Series(np.where(present, stripped, "nan")), errors="coerce").to_numpy(np.float64)
    bad = present & ~np.isfinite(values)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        text = str(stripped[i])
        try:
            float(text)
            problem = f"{text!r} is not a finite number (NaN/inf not allowed)"
        except ValueError:
            problem = f"{text!r} is not a number"
        raise _fail(path, int(lines[i]), column, problem)
    if column in _INT_COLUMNS:
        frac = present & (values != np.floor(values))
        if frac.any():
            i = int(np.flatnonzero(frac)[0])
            raise _fail(path, int(lines[i]), column, f"{str(stripped[i])!r} is not an integer")
    return values, present


def _check(path: PathLike, column: str, ok: np.ndarray, values: np.ndarray, lines: np.ndarray, need: str) -> None:
    if not ok.all():
        i = int(np.flatnonzero(~ok)[0])
        v = values[i]
        shown = int(v) if float(v).is_integer() else float(v)
        raise _fail(path, int(lines[i]), column, f"must be {need}, got {shown}")


@overload
def read_workload_csv(
    path: PathLike, *, cluster: ClusterSpec | None = ..., drop_oversized: bool = ...,
    return_dropped: Literal[False] = ..., name: str | None = ...,
) -> Workload: ...
@overload
def read_workload_csv(
    path: PathLike, *, cluster: ClusterSpec | None = ..., drop_oversized: bool = ...,
    return_dropped: Literal[True], name: str | None = ...,
) -> tuple[Workload, int]: ...
def read_workload_csv(
    path: PathLike,
    *,
    cluster: ClusterSpec | None = None,
    drop_oversized: bool = False,
    return_dropped: bool = False,
    name: str | None = None,
) -> Workload | tuple[Workload, int]:
    """Read a workload CSV (format in the module docstring), validating every field.

    Args:
        path: the CSV file.
        cluster: if given, jobs needing more GPUs than ``cluster.num_gpus`` are an error ...
        drop_oversized: ... unless this is true: then they are dropped with a ``UserWarning``
            saying how many.
        return_dropped: also return the number of dropped oversized jobs.
        name: workload name (default: the file's stem).

    Returns:
        The workload sorted (stably) by arrival, or ``(workload, n_dropped)`` if
        ``return_dropped``.

    Raises:
        ConfigError: one line naming the file, the line and the column of the first problem.
    """
    header, rows, lines = _read_rows(path)
    n = len(rows)
    if n == 0:
        empty = Workload(job_id=[], arrival=[], gpus=[], iterations=[], model_index=[], models=(),
                         name=name or Path(path).stem)
        return (empty, 0) if return_dropped else empty
    col = {c: i for i, c in enumerate(header)}
    table = np.array(rows, dtype=object).reshape(n, len(header))

    def raw(c: str) -> np.ndarray:
        return table[:, col[c]]

    vals: dict[str, np.ndarray] = {}
    has: dict[str, np.ndarray] = {}
    for c in ("job_id", "arrival_s", "gpus", "iterations"):
        vals[c], has[c] = _numeric(path, c, raw(c), lines, required=True)
    for c in OPTIONAL_COLUMNS + PROFILE_COLUMNS:
        if c in col:
            vals[c], has[c] = _numeric(path, c, raw(c), lines, required=False)
        else:
            vals[c], has[c] = np.full(n, np.nan), np.zeros(n, dtype=bool)

    _check(path, "arrival_s", vals["arrival_s"] >= 0, vals["arrival_s"], lines, ">= 0 seconds")
    _check(path, "gpus", vals["gpus"] >= 1, vals["gpus"], lines, ">= 1")
    _check(path, "iterations", vals["iterations"] >= 1, vals["iterations"], lines, ">= 1")
    _check(path, "weight", ~has["weight"] | (vals["weight"] >= 0), vals["weight"], lines, ">= 0")
    for c in ("gradient_bytes", "forward_s", "backward_s", "gpu_memory_mb"):
        _check(path, c, ~has[c] | (vals[c] >= 0), vals[c], lines, ">= 0")
    _check(path, "batch_size", ~has["batch_size"] | (vals["batch_size"] >= 1), vals["batch_size"], lines, ">= 1")

    job_id = vals["job_id"].astype(np.int64)
    later = pd.Series(job_id).duplicated(keep="first").to_numpy()
    if later.any():
        second = int(np.flatnonzero(later)[0])  # first repeat in file order
        first = int(np.flatnonzero(job_id == job_id[second])[0])
        raise _fail(path, int(lines[second]), "job_id",
                    f"duplicate job_id {int(job_id[second])} (first on line {int(lines[first])})")

    # Profiles: build one per distinct (model, overrides) combination, not per row.
    model_raw = np.char.strip(raw("model").astype(str))
    if (model_raw == "").any():
        i = int(np.flatnonzero(model_raw == "")[0])
        raise _fail(path, int(lines[i]), "model", "value is empty")
    keys = pd.Series(model_raw).str.cat(
        [pd.Series(np.where(has[c], vals[c].astype(str), "")) for c in PROFILE_COLUMNS], sep="\x1f"
    )
    codes, uniques = pd.factorize(keys, sort=False)  # codes numbered in order of first appearance
    _, first_row = np.unique(codes, return_index=True)
    distinct: dict[ModelProfile, int] = {}
    key_to_model = np.empty(len(uniques), dtype=np.int64)
    for k, i in enumerate(first_row.tolist()):
        profile = _row_profile(path, int(lines[i]), str(model_raw[i]),
                               {c: float(vals[c][i]) for c in PROFILE_COLUMNS if has[c][i]})
        key_to_model[k] = distinct.setdefault(profile, len(distinct))
    model_index = key_to_model[codes]

    gpus = vals["gpus"].astype(np.int64)
    n_dropped = 0
    keep = np.ones(n, dtype=bool)
    if cluster is not None:
        too_big = gpus > cluster.num_gpus
        if too_big.any():
            if not drop_oversized:
                i = int(np.flatnonzero(too_big)[0])
                raise _fail(path, int(lines[i]), "gpus",
                            f"job {int(job_id[i])} needs {int(gpus[i])} GPUs but the cluster has "
                            f"{cluster.num_gpus} ({int(too_big.sum())} such jobs); drop them with "
                            "drop_oversized=True (ddl-gym eval --drop-oversized)")
            n_dropped = int(too_big.sum())
            keep = ~too_big
            warnings.warn(f"{path}: dropped {n_dropped} job(s) needing more than the cluster's "
                          f"{cluster.num_gpus} GPUs", UserWarning, stacklevel=2)

    idx = np.flatnonzero(keep)
    idx = idx[np.argsort(vals["arrival_s"][idx], kind="stable")]
    weight = np.where(has["weight"], vals["weight"], 1.0)
    user = np.where(has["user"], vals["user"], -1.0)
    group = np.where(has["group"], vals["group"], -1.0)
    models = tuple(distinct)
    if idx.size < n:
        used = np.unique(model_index[idx])  # keep only the profiles the remaining jobs use
        remap = np.full(len(models), -1, dtype=np.int64)
        remap[used] = np.arange(len(used))
        models = tuple(models[u] for u in used)
        model_index = remap[model_index]
    workload = Workload(
        job_id=job_id[idx], arrival=vals["arrival_s"][idx], gpus=gpus[idx],
        iterations=vals["iterations"][idx].astype(np.int64), model_index=model_index[idx],
        models=models, weight=weight[idx], user=user[idx].astype(np.int64),
        group=group[idx].astype(np.int64), name=name or Path(path).stem,
    )
    if {"arch", "pipeline", "predicted_iterations"} & set(col):  # pipeline jobs (A-SRPT): see pipeline_csv
        from ddl_gym.workloads.pipeline_csv import add_pipeline_columns
        workload = add_pipeline_columns(path, workload, {c: raw(c)[idx] for c in col}, lines[idx])
    return (workload, n_dropped) if return_dropped else workload


def _row_profile(path: PathLike, line: int, model: str, overrides: dict[str, float]) -> ModelProfile:
    """The profile of one row: the zoo model with overrides applied, or a fully custom model."""
    fields: dict[str, float | int] = {
        c: (int(v) if c == "batch_size" else v) for c, v in overrides.items()
    }
    if len(fields) == len(PROFILE_COLUMNS):
        # Fully specified row: a complete profile under the name as written (exact round trip
        # even when a custom profile's name is a zoo alias).
        try:
            return ModelProfile(name=model, **fields)  # type: ignore[arg-type]
        except ConfigError as exc:
            raise _fail(path, line, "model", str(exc)) from None
    try:
        base = get_model(model)
    except ConfigError:
        missing = [c for c in CUSTOM_MODEL_COLUMNS if c not in overrides]
        if missing:
            raise _fail(path, line, "model",
                        f"unknown model {model!r} (zoo: {', '.join(sorted(MODEL_ZOO))}); a custom model "
                        f"needs {', '.join(CUSTOM_MODEL_COLUMNS)} (missing {', '.join(missing)})") from None
        try:
            return ModelProfile(name=model, **fields)  # type: ignore[arg-type]
        except ConfigError as exc:
            raise _fail(path, line, "model", str(exc)) from None
    return replace(base, **fields) if fields else base


def _fmt_float(values: np.ndarray) -> list[str]:
    return [repr(float(v)) for v in values]


def write_workload_csv(workload: Workload, path: PathLike) -> Path:
    """Write ``workload`` in the format above (exact round trip with :func:`read_workload_csv`).

    Profile override columns are written only when some job's profile differs from the zoo
    model of the same name (then every such row carries all five fields; zoo rows stay empty).

    Args:
        workload: the jobs to write.
        path: destination file (parent folders are created).

    Returns:
        The path written.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    custom = [MODEL_ZOO.get(m.name) != m for m in workload.models]
    with_profiles = any(custom)
    from ddl_gym.workloads.pipeline_csv import pipeline_columns  # arch, pipeline stages, predictions (A-SRPT)

    extra = pipeline_columns(workload)
    header = list(REQUIRED_COLUMNS + OPTIONAL_COLUMNS) + list(extra) + (list(PROFILE_COLUMNS) if with_profiles else [])
    profile_cells: list[list[str]] = []
    for m, is_custom in zip(workload.models, custom):
        if not is_custom:
            profile_cells.append([""] * len(PROFILE_COLUMNS))
        else:
            profile_cells.append([repr(float(m.gradient_bytes)), repr(float(m.forward_s)),
                                  repr(float(m.backward_s)), str(int(m.batch_size)),
                                  repr(float(m.gpu_memory_mb))])
    names = [m.name for m in workload.models]
    columns: list[Sequence[str]] = [
        workload.job_id.astype(str).tolist(),
        _fmt_float(workload.arrival),
        workload.gpus.astype(str).tolist(),
        workload.iterations.astype(str).tolist(),
        [names[k] for k in workload.model_index],
        _fmt_float(workload.weight),
        workload.user.astype(str).tolist(),
        workload.group.astype(str).tolist(),
        *extra.values(),
    ]
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(header)
        if with_profiles:
            for i, row in enumerate(zip(*columns)):
                writer.writerow(list(row) + profile_cells[int(workload.model_index[i])])
        else:
            writer.writerows(zip(*columns))
    return path
