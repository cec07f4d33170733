"""Read and write workloads as CSV files.

Format (UTF-8, optionally with the byte-order mark spreadsheets write; comma-separated; one header
line; one job per line; blank lines and lines starting with ``#`` are ignored, so a file may carry
comment lines):

=================  ========  ==================================================================
column             required  meaning (accepted range)
=================  ========  ==================================================================
``job_id``         yes       integer identifier, unique within the file (any 64-bit integer)
``arrival_s``      yes       arrival (submission) time in seconds, ``0 .. 1e9``; rows may be unsorted
``gpus``           yes       GPUs the job needs (rigid gang), integer ``1 .. 1,000,000``
``iterations``     yes       training iterations, integer ``1 .. 1e12``
``model``          yes       model name: a zoo model (``ddl_gym.sim.zoo``) or a custom name
``weight``         no        job weight for weighted JCT, ``0 .. 1e6`` (default 1)
``user``           no        integer user id, any 64-bit integer (default -1 = unknown)
``group``          no        integer group id, e.g. recurring job (default -1 = unknown)
``gradient_bytes`` no        per-job profile override: bytes exchanged per all-reduce, ``0 .. 1e15``
``forward_s``      no        per-job profile override: forward time of one mini-batch, ``0 .. 1e6`` s
``backward_s``     no        per-job profile override: backward time of one mini-batch, ``0 .. 1e6`` s
``batch_size``     no        per-job profile override: per-worker mini-batch size, ``1 .. 1e9``
``gpu_memory_mb``  no        per-job profile override: GPU memory of one worker, ``0 .. 1e9`` MB
=================  ========  ==================================================================

The ranges (:data:`FIELD_BOUNDS`) keep every value exact and every derived quantity finite:
integers are parsed exactly (never through a float), arrivals stay where float64 seconds still
resolve microseconds (at ``1e16`` s one ulp is 2 s, so run times and slowdowns would be wrong),
and weights cannot overflow a weighted sum. Input size is bounded too (:data:`MAX_FILE_BYTES`,
:data:`MAX_LINE_CHARS`, :data:`MAX_JOBS`), checked while reading, so an endless or binary input
(``/dev/zero``) fails at once instead of filling memory. A file without jobs, or whose every job
is dropped, is an error.

A non-empty override replaces that field of the row's zoo profile (zoo names are matched
case-insensitively, paper spellings such as ``ResNet-50`` accepted); a row whose ``model`` is not
in the zoo must give all of ``gradient_bytes``, ``forward_s`` and ``backward_s`` (``batch_size``
then defaults to 32 and ``gpu_memory_mb`` to 0). A row giving all five profile fields defines a
complete profile named exactly as its ``model`` cell. Column order is free; extra columns are
ignored.

Every problem raises :class:`~ddl_gym.sim.model.ConfigError` with one line of the form
``<file>: line <N>: column '<name>': <problem>``, where ``N`` is the line as a spreadsheet or
editor shows it (the header is line 1 when the file has no comment lines).

:func:`write_workload_csv` writes floats with ``repr`` (shortest exact round-trip form), so
``read_workload_csv(write_workload_csv(w))`` reproduces every column and per-job profile exactly.
"""

from __future__ import annotations

import csv
import os
import re
import stat
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Literal, TextIO, overload

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

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
#: Largest time in seconds a workload may hold (about 31.7 years; float64 still resolves 0.1 µs).
MAX_TIME_S = 1e9


@dataclass(frozen=True)
class FieldBounds:
    """Accepted closed range of one numeric column, and whether it must be an integer."""

    low: float
    high: float
    integer: bool = False
    unit: str = ""

    def describe(self) -> str:
        def fmt(x: float) -> str:
            if x in (INT64_MIN, INT64_MAX):
                return "-2**63" if x < 0 else "2**63-1"
            return f"{int(x):,}" if float(x).is_integer() and abs(x) < 1e7 else f"{x:g}"

        unit = f" {self.unit}" if self.unit else ""
        return f"{'an integer' if self.integer else 'a number'} in [{fmt(self.low)}, {fmt(self.high)}]{unit}"


#: Accepted range of every numeric column (see the module docstring for why).
FIELD_BOUNDS: dict[str, FieldBounds] = {
    "job_id": FieldBounds(INT64_MIN, INT64_MAX, integer=True),
    "arrival_s": FieldBounds(0.0, MAX_TIME_S, unit="seconds"),
    "gpus": FieldBounds(1, 1_000_000, integer=True),
    "iterations": FieldBounds(1, 10**12, integer=True),
    "weight": FieldBounds(0.0, 1e6),
    "user": FieldBounds(INT64_MIN, INT64_MAX, integer=True),
    "group": FieldBounds(INT64_MIN, INT64_MAX, integer=True),
    "gradient_bytes": FieldBounds(0.0, 1e15, unit="bytes"),
    "forward_s": FieldBounds(0.0, 1e6, unit="seconds"),
    "backward_s": FieldBounds(0.0, 1e6, unit="seconds"),
    "batch_size": FieldBounds(1, 10**9, integer=True),
    "gpu_memory_mb": FieldBounds(0.0, 1e9, unit="MB"),
}

#: Input limits, checked while reading (a larger or endless input fails at once).
MAX_FILE_BYTES = 512 << 20  # 512 MiB of CSV text
MAX_LINE_CHARS = 1 << 20  # one line (record) of at most 1 MiB
MAX_JOBS = 1_000_000

PathLike = str | os.PathLike[str]
_PLAIN_INT = re.compile(r"[+-]?[0-9]{1,18}")  # at most 18 digits: always inside int64
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def _fail(path: PathLike, line: int, column: str, problem: str) -> ConfigError:
    return ConfigError(f"{path}: line {line}: column {column!r}: {problem}")


def _bounded_lines(path: PathLike, handle: TextIO, max_chars: int, max_line: int) -> Iterator[str]:
    """Lines of ``handle``, refusing a line longer than ``max_line`` or a file larger than ``max_chars``.

    ``readline(limit)`` never reads more than ``limit`` characters, so ``/dev/zero`` (one endless
    line) or a multi-gigabyte file fails after reading at most the limits.
    """
    total = 0
    number = 0
    while True:
        line = handle.readline(max_line + 1)
        if not line:
            return
        number += 1
        total += len(line)
        if len(line) > max_line:
            raise ConfigError(f"{path}: line {number}: longer than {max_line:,} characters; "
                              "is this a CSV file (text, one job per line)?")
        if "\x00" in line:
            raise ConfigError(f"{path}: line {number}: contains a NUL byte; is this a binary file? "
                              "A job table is UTF-8 text")
        if total > max_chars:
            raise ConfigError(f"{path}: larger than {max_chars:,} characters (read up to line {number}); "
                              "split the workload or raise ddl_gym.workloads.csv_io.MAX_FILE_BYTES")
        yield line


def read_text_lines(path: PathLike, what: str = "workload CSV") -> list[str]:
    """All lines of a text file (UTF-8, BOM dropped), under the same size limits as workload CSVs.

    Raises:
        ConfigError: folder, missing or unreadable file, not UTF-8, or over the limits.
    """
    with _open_text(path, what) as handle:
        try:
            return [line.rstrip("\r\n") for line in _bounded_lines(path, handle, MAX_FILE_BYTES, MAX_LINE_CHARS)]
        except UnicodeDecodeError as exc:
            raise ConfigError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
        except (OSError, EOFError) as exc:  # a truncated or corrupt .gz
            raise ConfigError(f"{path}: cannot read {what} ({getattr(exc, 'strerror', None) or type(exc).__name__})") from None


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
        raise ConfigError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start}); save the CSV as UTF-8") from None


def _open_text(path: PathLike, what: str = "workload CSV") -> TextIO:
    """Open a text input for reading, with one-line errors for folders, absent or unreadable files."""
    try:
        info = os.stat(path)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot open {what} ({exc.strerror or exc})") from None
    if stat.S_ISDIR(info.st_mode):
        raise ConfigError(f"{path}: is a folder, not a {what} file")
    if stat.S_ISREG(info.st_mode) and info.st_size > MAX_FILE_BYTES:
        raise ConfigError(f"{path}: {info.st_size:,} bytes is larger than the {MAX_FILE_BYTES:,}-byte limit for a "
                          f"{what}; split it or raise ddl_gym.workloads.csv_io.MAX_FILE_BYTES")
    try:
        # utf-8-sig: a leading byte-order mark (Excel's "CSV UTF-8") is dropped, not read as part of 'job_id'.
        if str(path).endswith(".gz"):  # the bundled traces (ddl_gym/workloads/tracedata.py); limits apply to the text
            from ddl_gym.workloads.tracedata import open_text

            return open_text(path)
        return open(path, newline="", encoding="utf-8-sig")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot open {what} ({exc.strerror or exc})") from None


def header_hint(header: list[str], missing: list[str]) -> str:
    """``"header has N columns; did you mean ..."`` without echoing the line: only header names close to a
    missing column are shown (a file that is not a table, e.g. a private text, is never quoted)."""
    import difflib

    close = []
    for name in missing:
        match = difflib.get_close_matches(name, [h for h in header if 0 < len(h) <= 64], n=1, cutoff=0.6)
        if match:
            close.append(f"{match[0]!r} for {name!r}")
    hint = f"; did you mean {', '.join(close)}" if close else ""
    return f"the first line has {len(header)} comma-separated field(s){hint}; "


def _check_header(path: PathLike, header: list[str], header_line: int) -> None:
    missing = [c for c in REQUIRED_COLUMNS if c not in header]
    if missing:
        raise ConfigError(
            f"{path}: line {header_line}: column {missing[0]!r}: missing required column "
            f"({header_hint(header, missing)}required: {', '.join(REQUIRED_COLUMNS)})"
        )
    dupes = sorted({c for c in header if header.count(c) > 1 and c})
    if dupes:
        raise ConfigError(f"{path}: line {header_line}: column {dupes[0]!r}: appears more than once in the header")


def _read_rows(path: PathLike, max_jobs: int = MAX_JOBS) -> tuple[list[str], list[list[str]], np.ndarray]:
    """Return (header, data rows, 1-based file line of each row), skipping blanks and comments.

    The header is checked as soon as it is read, and the row count while reading, so a file that
    is not a workload fails at its first line.
    """
    header: list[str] | None = None
    header_line = 0
    rows: list[list[str]] = []
    lines: list[int] = []
    with _open_text(path) as handle:
        reader = csv.reader(_bounded_lines(path, handle, MAX_FILE_BYTES, MAX_LINE_CHARS))
        start = 1  # file line where the next record begins (records may span lines if quoted)
        for record in _records(path, reader):
            line = start
            start = reader.line_num + 1
            if not record or all(not f.strip() for f in record) or record[0].lstrip().startswith("#"):
                continue
            if header is None:
                header = [f.strip() for f in record]
                header_line = line
                _check_header(path, header, header_line)
                continue
            if len(record) != len(header):
                raise ConfigError(
                    f"{path}: line {line}: expected {len(header)} fields as in the header "
                    f"(line {header_line}), got {len(record)}"
                )
            if len(rows) >= max_jobs:
                raise ConfigError(f"{path}: line {line}: more than {max_jobs:,} jobs; split the workload "
                                  "or raise ddl_gym.workloads.csv_io.MAX_JOBS")
            rows.append(record)
            lines.append(line)
    if header is None:
        raise ConfigError(f"{path}: line 1: empty workload CSV (no header line); required columns: "
                          + ", ".join(REQUIRED_COLUMNS))
    if not rows:
        raise ConfigError(f"{path}: line {header_line}: no jobs (the header is not followed by any data row)")
    return header, rows, np.asarray(lines, dtype=np.int64)


def _shown(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:37] + "...")


def _parse_integers(path: PathLike, column: str, texts: np.ndarray, present: np.ndarray,
                    lines: np.ndarray, bounds: FieldBounds) -> np.ndarray:
    """Exact int64 values of an integer column (no float rounding: ``9007199254740993`` stays itself)."""
    values = np.zeros(texts.size, dtype=np.int64)
    plain = present & pd.Series(texts, dtype=object).str.fullmatch(_PLAIN_INT).to_numpy(dtype=bool)
    if plain.any():
        values[plain] = texts[plain].astype(str).astype(np.int64)
    for i in np.flatnonzero(present & ~plain).tolist():  # rare: long or float-looking integers
        text = str(texts[i])
        if not _DECIMAL.fullmatch(text):  # Decimal alone would also take "1_000" and non-ASCII digits
            try:
                float(text)
                problem = "is not a finite number (NaN/inf not allowed)" if "_" not in text else "is not a number"
            except ValueError:
                problem = "is not a number"
            raise _fail(path, int(lines[i]), column, f"{_shown(text)} {problem}")
        try:
            exact = Decimal(text)
        except InvalidOperation:
            raise _fail(path, int(lines[i]), column, f"{_shown(text)} is not a number") from None
        if exact != exact.to_integral_value():
            raise _fail(path, int(lines[i]), column, f"{_shown(text)} is not an integer")
        if not (bounds.low <= exact <= bounds.high):
            raise _fail(path, int(lines[i]), column, f"{_shown(text)} is out of range: must be {bounds.describe()}")
        values[i] = int(exact)
    below = present & (values < bounds.low)
    above = present & (values > bounds.high)
    for bad in (below, above):
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise _fail(path, int(lines[i]), column,
                        f"must be {'>= ' + format(int(bounds.low), ',') if bad is below else bounds.describe()}, "
                        f"got {int(values[i])}")
    return values


def _numeric(
    path: PathLike, column: str, raw: np.ndarray, lines: np.ndarray, *, required: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Parse and bound-check one column (:data:`FIELD_BOUNDS`).

    Returns:
        ``(values, present)``: int64 values for integer columns, float64 otherwise; empty cells
        (allowed only if not ``required``) are 0 / NaN and ``present`` is false there.
    """
    bounds = FIELD_BOUNDS[column]
    stripped = np.char.strip(raw.astype(str))
    present = stripped != ""
    if required and not present.all():
        i = int(np.flatnonzero(~present)[0])
        raise _fail(path, int(lines[i]), column, "value is empty")
    if bounds.integer:
        return _parse_integers(path, column, stripped, present, lines, bounds), present
    values = pd.to_numeric(pd.Series(np.where(present, stripped, "nan")), errors="coerce").to_numpy(np.float64)
    bad = present & ~np.isfinite(values)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        text = str(stripped[i])
        try:
            float(text)
            problem = f"{_shown(text)} is not a finite number (NaN/inf not allowed)"
        except ValueError:
            problem = f"{_shown(text)} is not a number"
        raise _fail(path, int(lines[i]), column, problem)
    below = present & (values < bounds.low)
    if below.any():
        i = int(np.flatnonzero(below)[0])
        raise _fail(path, int(lines[i]), column, f"must be >= {bounds.low:g}{' ' + bounds.unit if bounds.unit else ''}, "
                                                 f"got {_shown(str(stripped[i]))[1:-1]}")
    above = present & (values > bounds.high)
    if above.any():
        i = int(np.flatnonzero(above)[0])
        raise _fail(path, int(lines[i]), column,
                    f"{_shown(str(stripped[i]))} is out of range: must be {bounds.describe()}")
    return values, present


@overload
def read_workload_csv(
    path: PathLike, *, cluster: ClusterSpec | None = ..., drop_oversized: bool = ...,
    return_dropped: Literal[False] = ..., name: str | None = ..., max_jobs: int = ...,
) -> Workload: ...
@overload
def read_workload_csv(
    path: PathLike, *, cluster: ClusterSpec | None = ..., drop_oversized: bool = ...,
    return_dropped: Literal[True], name: str | None = ..., max_jobs: int = ...,
) -> tuple[Workload, int]: ...
def read_workload_csv(
    path: PathLike,
    *,
    cluster: ClusterSpec | None = None,
    drop_oversized: bool = False,
    return_dropped: bool = False,
    name: str | None = None,
    max_jobs: int = MAX_JOBS,
) -> Workload | tuple[Workload, int]:
    """Read a workload CSV (format in the module docstring), validating every field.

    Args:
        path: the CSV file.
        cluster: if given, jobs needing more GPUs than ``cluster.num_gpus`` are an error ...
        drop_oversized: ... unless this is true: then they are dropped with a ``UserWarning``
            saying how many.
        return_dropped: also return the number of dropped oversized jobs.
        name: workload name (default: the file's stem).
        max_jobs: refuse files with more data rows than this (:data:`MAX_JOBS`).

    Returns:
        The workload sorted (stably) by arrival, or ``(workload, n_dropped)`` if
        ``return_dropped``.

    Raises:
        ConfigError: one line naming the file, the line and the column of the first problem;
            also for a file without jobs or whose every job is dropped.
    """
    header, rows, lines = _read_rows(path, max_jobs)
    n = len(rows)
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
            missing = np.zeros(n, np.int64) if FIELD_BOUNDS[c].integer else np.full(n, np.nan)
            vals[c], has[c] = missing, np.zeros(n, dtype=bool)

    job_id = vals["job_id"]
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

    gpus = vals["gpus"]
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
            if n_dropped == n:
                raise _fail(path, int(lines[0]), "gpus",
                            f"every job ({n}) needs more than the cluster's {cluster.num_gpus} GPUs, so "
                            "dropping oversized jobs leaves nothing to simulate")
            warnings.warn(f"{path}: dropped {n_dropped} job(s) needing more than the cluster's "
                          f"{cluster.num_gpus} GPUs", UserWarning, stacklevel=2)

    idx = np.flatnonzero(keep)
    idx = idx[np.argsort(vals["arrival_s"][idx], kind="stable")]
    weight = np.where(has["weight"], vals["weight"], 1.0)
    user = np.where(has["user"], vals["user"], -1)
    group = np.where(has["group"], vals["group"], -1)
    models = tuple(distinct)
    if idx.size < n:
        used = np.unique(model_index[idx])  # keep only the profiles the remaining jobs use
        remap = np.full(len(models), -1, dtype=np.int64)
        remap[used] = np.arange(len(used))
        models = tuple(models[u] for u in used)
        model_index = remap[model_index]
    workload = Workload(
        job_id=job_id[idx], arrival=vals["arrival_s"][idx], gpus=gpus[idx],
        iterations=vals["iterations"][idx], model_index=model_index[idx],
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
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")  # written whole, then renamed: never torn
    try:
        with open(tmp, "w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle, lineterminator="\n")
            writer.writerow(header)
            if with_profiles:
                for i, row in enumerate(zip(*columns)):
                    writer.writerow(list(row) + profile_cells[int(workload.model_index[i])])
            else:
                writer.writerows(zip(*columns))
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path
