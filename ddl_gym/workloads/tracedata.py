"""Where the real-trace files come from: bundled copies, ``$DDL_GYM_TRACES``, or a named, one-line error.

Every trace file a built-in scenario reads is listed in :data:`TRACE_DATA` with its licence and where
to get it. :func:`locate` resolves a file in this order, the same for a source checkout, a fresh
clone and an installed wheel:

1. ``$DDL_GYM_TRACES/<folder>/<file>``, then ``$DDL_GYM_TRACES/<file>`` (also with ``.gz``) — a
   user's own copy (e.g. more weeks of the trace) always wins;
2. the bundled copy under the package (``ddl_gym/data/<file>.gz``, found through
   :func:`importlib.resources.files`, so it works from a wheel) — for data whose licence allows
   redistribution (the Philly tables: CC BY 4.0);
3. for data that is *not* bundled, ``<checkout>/../shared/traces/<folder>/<file>`` (the project's
   development layout);
4. otherwise :class:`MissingTraceError`, one line naming the file, the environment variable and the
   source. There is never a fallback to other data (e.g. the 500-row Philly sample): a scenario
   runs on the data it names or stops.

If ``$DDL_GYM_TRACES`` is set but holds no copy of a bundled file, the bundled copy is used and a
warning says so once per file (a user pointing at their own copy learns it was not found).

The bundled copies are byte-identical to the project's training slices (``shared/traces/philly``):
:data:`TraceData.sha256` is the SHA-256 of the decompressed text, checked by the test suite.
"""

from __future__ import annotations

import gzip
import io
import os
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from ddl_gym.sim.model import ConfigError

#: The environment variable naming a folder of trace files (``philly/``, ``alibaba-gpu-v2023/`` inside it).
ENV_VAR = "DDL_GYM_TRACES"
_CHECKOUT = Path(__file__).resolve().parents[2]


class MissingTraceError(ConfigError):
    """A trace file a scenario needs is neither bundled nor found; the message is one line."""


@dataclass(frozen=True)
class TraceData:
    """One trace file a built-in scenario reads.

    Attributes:
        key: short id (``"philly-rfold"``).
        file: file name as published (``philly_rfold_jobs.csv``).
        folder: its folder under ``$DDL_GYM_TRACES`` (``philly``).
        what: a few words for messages.
        licence: the licence (and why it is or is not bundled).
        source: where to get the file.
        bundled: the bundled file name under ``ddl_gym/data/`` (``None``: not bundled).
        sha256: SHA-256 of the bundled file's decompressed bytes.
        rows: data rows of the bundled file.
    """

    key: str
    file: str
    folder: str
    what: str
    licence: str
    source: str
    bundled: str | None = None
    sha256: str | None = None
    rows: int = 0


TRACE_DATA: dict[str, TraceData] = {d.key: d for d in (
    TraceData(
        "philly-rfold", "philly_rfold_jobs.csv", "philly", "Philly job table (RFold derivative)",
        "Philly trace CC BY 4.0 (Jeon et al., ATC'19); RFold repository MIT",
        "shuoshuc/RFold WorkloadGen/data/philly_trace.csv (rows with arrival < 8,987,580 s)",
        bundled="philly_rfold_jobs.csv.gz",
        sha256="cbba7db049e37980a818cbf2e00a1fa934bb9a6618347c63fdc88b68f90fd706", rows=95_621),
    TraceData(
        "philly-pollux", "philly_pollux_jobs.csv", "philly", "Philly job table (Pollux derivative)",
        "Philly trace CC BY 4.0 (Jeon et al., ATC'19); petuum/adaptdl Apache-2.0",
        "petuum/adaptdl branch osdi21-artifact simulator/traces/philly.csv (rows before 2017-11-27)",
        bundled="philly_pollux_jobs.csv.gz",
        sha256="864322590311f5f7de20cd620ff2734daa650a75a5fa6cac509f3cf4697a3a25", rows=71_570),
    TraceData(
        "alibaba-pods", "openb_pod_list_default.csv", "alibaba-gpu-v2023", "Alibaba GPU v2023 pod list",
        "no licence file (research use with citation, Weng et al., ATC'23): not redistributed",
        "github.com/alibaba/clusterdata cluster-trace-gpu-v2023/csv/openb_pod_list_default.csv"),
    TraceData(
        "alibaba-nodes", "openb_node_list_gpu_node.csv", "alibaba-gpu-v2023", "Alibaba GPU v2023 node list",
        "no licence file (research use with citation, Weng et al., ATC'23): not redistributed",
        "github.com/alibaba/clusterdata cluster-trace-gpu-v2023/csv/openb_node_list_gpu_node.csv"),
)}

_WARNED: set[str] = set()


def data_dir() -> Path:
    """The package's data folder (``ddl_gym/data``), from a checkout or an installed wheel."""
    from importlib.resources import files

    return Path(str(files("ddl_gym").joinpath("data")))


def bundled_path(key: str) -> Path | None:
    """The bundled copy of ``key`` (``None`` if it is not bundled or missing from this install)."""
    data = _entry(key)
    if data.bundled is None:
        return None
    path = data_dir() / data.bundled
    return path if path.is_file() else None


def _entry(key: str) -> TraceData:
    try:
        return TRACE_DATA[key]
    except KeyError:
        raise ConfigError(f"trace data: unknown key {key!r} (known: {', '.join(TRACE_DATA)})") from None


def _env_candidates(data: TraceData) -> list[Path]:
    root = os.environ.get(ENV_VAR)
    if not root:
        return []
    base = Path(root).expanduser()
    out = []
    for folder in (base / data.folder, base):
        out += [folder / data.file, folder / (data.file + ".gz")]
    return out


def needs_line(key: str, short: bool = False) -> str:
    """``needs FILE (how to get it)``: what ``ddl-gym list`` shows (``short``) and :class:`MissingTraceError` says."""
    data = _entry(key)
    if short:
        return f"needs {data.file} (not bundled: get it from {data.source}; set {ENV_VAR})"
    return (f"needs {data.file} ({data.what}; {data.licence}): download it from {data.source} and set "
            f"{ENV_VAR} to a folder holding {data.folder}/{data.file}")


def locate(key: str) -> Path:
    """The file of ``key``, resolved in the order of the module docstring.

    Raises:
        MissingTraceError: no copy found (one line: file, environment variable, source).
    """
    data = _entry(key)
    env = _env_candidates(data)
    for candidate in env:
        if candidate.is_file():
            return candidate
    bundled = bundled_path(key)
    if bundled is not None:
        if env and key not in _WARNED:
            _WARNED.add(key)
            warnings.warn(f"{ENV_VAR}={os.environ.get(ENV_VAR)} holds no {data.folder}/{data.file}; using the "
                          f"bundled copy {bundled} (same rows as the project's training slice)", stacklevel=2)
        return bundled
    shared = _CHECKOUT.parent / "shared" / "traces" / data.folder / data.file
    if shared.is_file():
        return shared
    where = f" (not found: {ENV_VAR}={os.environ.get(ENV_VAR)} has none)" if env else f" (not found: {ENV_VAR} is not set)"
    raise MissingTraceError(needs_line(key) + where)


def missing(keys: list[str] | tuple[str, ...]) -> list[str]:
    """The keys among ``keys`` that :func:`locate` cannot resolve."""
    out = []
    for key in keys:
        try:
            locate(key)
        except MissingTraceError:
            out.append(key)
    return out


def source_needs(source: object) -> list[str]:
    """The :data:`TRACE_DATA` keys a scenario's workload source needs that cannot be found here
    (sources declare theirs with a ``trace_data()`` method; others need none)."""
    declared = getattr(source, "trace_data", None)
    if not callable(declared):
        return []
    return missing(list(dict.fromkeys(declared())))


def open_text(path: str | os.PathLike[str]) -> TextIO:
    """Open a trace file as UTF-8 text (BOM dropped), decompressing ``*.gz`` transparently.

    Raises:
        OSError: as :func:`open` (callers turn it into a one-line error naming the file).
    """
    if str(path).endswith(".gz"):
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8-sig", newline="")
    return open(path, encoding="utf-8-sig", newline="")


def read_lines(path: str | os.PathLike[str], limit: int | None = None) -> list[str]:
    """The first ``limit`` lines (all when ``None``), line ends dropped; ``ConfigError`` naming the file
    (never its contents) when it cannot be read or decoded."""
    out: list[str] = []
    try:
        with open_text(path) as handle:
            for line in handle:
                if limit is not None and len(out) >= limit:
                    break
                out.append(line.rstrip("\r\n"))
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise ConfigError(f"{path}: cannot read trace ({getattr(exc, 'strerror', None) or type(exc).__name__})") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    return out


__all__ = ["ENV_VAR", "MissingTraceError", "TRACE_DATA", "TraceData", "bundled_path", "data_dir", "locate",
           "missing", "needs_line", "open_text", "read_lines",
           "source_needs"]
