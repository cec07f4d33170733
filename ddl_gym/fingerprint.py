"""Content fingerprints: what the evaluation cache is keyed on.

A cached result may be reused only if everything that could change it is the same, so the key is
built from *content*, never from names:

* :func:`scenario_fingerprint` — every field of the :class:`~ddl_gym.scenarios.Scenario` (cluster,
  performance model and its parameters, workload generator and its parameters, engine, options),
  walked recursively, plus the bytes of every file the workload reads (a workload CSV, the Philly
  trace);
* :func:`file_digest` — SHA-256 of a file (agent zip, its metadata and normalisation statistics);
* :func:`code_fingerprint` — the package version, the git commit of a source checkout and a hash
  of its uncommitted changes to tracked files.

Fingerprints are hex SHA-256 digests of a canonical JSON rendering; they are identical across
processes and machines for identical inputs.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import math
import os
import re
import subprocess
import types
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
_REPO = Path(__file__).resolve().parents[1]


@functools.lru_cache(maxsize=256)
def _file_digest_cached(path: str, size: int, mtime_ns: int) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def file_digest(path: str | os.PathLike[str]) -> str:
    """SHA-256 of a file's bytes (cached per path, size and modification time); ``"missing"`` if absent."""
    try:
        info = os.stat(path)
    except OSError:
        return "missing"
    if not os.path.isfile(path):
        return f"not-a-file:{info.st_mode:o}"
    return _file_digest_cached(str(Path(path).resolve()), info.st_size, info.st_mtime_ns)


def _stable(obj: Any, depth: int = 0) -> Any:
    """A JSON-able, process-independent rendering of ``obj`` (no memory addresses, sorted keys)."""
    if depth > 40:
        return "<deep>"
    if obj is None or isinstance(obj, (bool, int, str)):
        return obj
    if isinstance(obj, float):
        return repr(obj) if not math.isfinite(obj) else obj.hex()  # exact, including -0.0
    if isinstance(obj, (np.integer, np.floating, np.bool_)):
        return _stable(obj.item(), depth + 1)
    if isinstance(obj, np.ndarray):
        return {"ndarray": str(obj.dtype), "shape": list(obj.shape),
                "sha256": hashlib.sha256(np.ascontiguousarray(obj).tobytes()).hexdigest()}
    if isinstance(obj, (Path, os.PathLike)):
        return {"path": str(obj), "sha256": file_digest(obj)}
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        fields = {f.name: _stable(getattr(obj, f.name), depth + 1) for f in dataclasses.fields(obj)}
        out: dict[str, Any] = {"type": f"{type(obj).__module__}.{type(obj).__qualname__}", "fields": fields}
        out.update(_source_files(obj))
        return out
    if isinstance(obj, (Mapping, types.MappingProxyType)):
        return {"mapping": sorted(([_stable(k, depth + 1), _stable(v, depth + 1)] for k, v in obj.items()),
                                  key=lambda kv: json.dumps(kv, sort_keys=True))}
    if isinstance(obj, (list, tuple)):
        return [_stable(v, depth + 1) for v in obj]
    if isinstance(obj, (set, frozenset)):
        return sorted((_stable(v, depth + 1) for v in obj), key=lambda v: json.dumps(v, sort_keys=True))
    if isinstance(obj, functools.partial):
        return {"partial": _stable(obj.func, depth + 1), "args": _stable(obj.args, depth + 1),
                "kwargs": _stable(obj.keywords, depth + 1)}
    if isinstance(obj, (types.FunctionType, types.BuiltinFunctionType, type)):
        return {"callable": f"{getattr(obj, '__module__', '?')}.{getattr(obj, '__qualname__', repr(obj))}"}
    state = getattr(obj, "__dict__", None)
    if isinstance(state, dict):
        return {"type": f"{type(obj).__module__}.{type(obj).__qualname__}", "state": _stable(state, depth + 1)}
    return {"repr": _ADDRESS.sub("", repr(obj))}


def _source_files(source: Any) -> dict[str, Any]:
    """Digests of the files a workload source reads, so an edited file changes the fingerprint."""
    from ddl_gym import scenarios

    if isinstance(source, scenarios.CsvSource):
        return {"file_sha256": file_digest(source.path)}
    trace_files = getattr(source, "trace_files", None)  # trace windows, the transfer-training family
    if callable(trace_files):
        try:
            return {"file_sha256": [file_digest(f) for f in trace_files()]}
        except Exception:  # an unresolvable trace fails later with its own message
            return {"file_sha256": "unresolved"}
    if isinstance(source, (scenarios.PhillySource, scenarios.PhillySliceSource)):
        from ddl_gym.workloads.philly import default_trace_path

        params = dict(getattr(source, "params", ()))
        table = params.get("table") or getattr(source, "table", None) or "rfold"
        try:
            path = params.get("path") or default_trace_path(table)
        except Exception:  # an unresolvable trace fails later with its own message
            return {"file_sha256": "unresolved"}
        return {"file_sha256": file_digest(path)}
    return {}


def fingerprint(obj: Any) -> str:
    """Hex SHA-256 of :func:`_stable` ``(obj)``."""
    text = json.dumps(_stable(obj), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def scenario_fingerprint(scenario: Any) -> str:
    """Fingerprint of everything in a scenario that can change a result (not its description)."""
    fields = {f.name: getattr(scenario, f.name) for f in dataclasses.fields(scenario) if f.name != "description"}
    return fingerprint(fields)


# ---------------------------------------------------------------------------- provenance (results rows, cache keys)
def package_version() -> str:
    """``ddl_gym.__version__``, else the installed distribution's version, else ``"unknown"``."""
    import ddl_gym

    version = getattr(ddl_gym, "__version__", None)
    if version:
        return str(version)
    try:
        from importlib.metadata import PackageNotFoundError, version as dist_version

        return dist_version("ddl-gym")
    except (ImportError, PackageNotFoundError):
        return "unknown"


@functools.lru_cache(maxsize=None)
def git_sha() -> str:
    """Short commit of the source checkout the package runs from (``""`` if not a git checkout)."""
    root = Path(__file__).resolve().parents[1]
    if not (root / ".git").exists():
        return ""
    try:
        out = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=root, capture_output=True,
                             text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.stdout.strip() if out.returncode == 0 else ""


@functools.lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """Package version + git commit + hash of uncommitted changes to tracked files (source checkouts)."""
    parts = [package_version(), git_sha()]
    if parts[1] and (_REPO / ".git").exists():
        try:
            diff = subprocess.run(["git", "diff", "HEAD", "--no-color", "--", "ddl_gym", "baselines", "agents"],
                                  cwd=_REPO, capture_output=True, timeout=20, check=False).stdout
        except (OSError, subprocess.SubprocessError):
            diff = b"?"
        if diff:
            parts.append(hashlib.sha256(diff).hexdigest()[:16])
    return "+".join(p for p in parts if p)
