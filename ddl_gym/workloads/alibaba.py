"""Load the Alibaba GPU cluster trace v2023 ("openb"; Weng et al., FGD, USENIX ATC'23) as workloads.

The trace (``alibaba/clusterdata``, folder ``cluster-trace-gpu-v2023/csv/``; see
``../shared/traces/alibaba-gpu-v2023/README.md``) carries no licence file; Alibaba publishes it for
research under the Alibaba Cluster Trace Program and asks users to cite the FGD paper. It is
therefore **not** bundled with ddl-gym: point ``path`` at ``openb_pod_list_default.csv`` (or a
folder holding it), or set ``$DDL_GYM_TRACES``.

File: ``openb_pod_list_default.csv``, one row per task (Kubernetes pod), header
``name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,
scheduled_time`` (times in seconds since the trace start; ``scheduled_time`` empty when the pod was
never bound to a node). Only the columns in :data:`REQUIRED_COLUMNS` are read; the others are
ignored and may be absent.

Mapping to a :class:`~ddl_gym.sim.model.Workload` (decisions, stated once here):

* **GPU tasks only.** Rows with ``num_gpu == 0`` (CPU-only pods) are dropped and counted
  (``dropped["cpu_only"]``): a GPU scheduler never places them.
* **Never-scheduled pods are dropped** (empty ``scheduled_time``; counted as ``"unscheduled"``):
  the trace records no run time for them.
* ``arrival`` = ``creation_time`` (submission), rebased to the first selected task.
* **Duration** = ``deletion_time − scheduled_time`` (the time the pod held its GPUs). Pods still
  running at the end of the trace were deleted then, so their durations are right-censored; they
  are kept as recorded, as Philly's multi-day jobs are.
* ``gpus`` = ``num_gpu`` (whole GPUs; ``gpu_milli`` only qualifies ``num_gpu == 1``).
* **Fractional GPUs** (``num_gpu == 1`` and ``gpu_milli < 1000``; 42 % of the GPU tasks). The
  job-level engine gives every job whole, exclusive GPUs (Ada-SRSF §III-B3: "each GPU can only be
  occupied by one job"; SJF-BCO's model has no sharing), so a fractional task must become a whole
  GPU or nothing. The named option ``fractional`` chooses how:

  - ``"whole"`` (default): one exclusive GPU for the recorded duration. The pod held a share of a
    GPU for that long; in a cluster without sharing it would have held the whole GPU. This keeps
    every task and every duration as recorded and over-states GPU demand by
    ``Σ (1000 − gpu_milli)/1000 · duration`` of the fractional tasks.
  - ``"work"``: one exclusive GPU for ``gpu_milli/1000 × duration``: the task's GPU-seconds are
    conserved and it runs faster on a GPU of its own (assumes its speed scales with its share).
  - ``"drop"``: fractional tasks are dropped (counted as ``"fractional"``); what remains are the
    whole-GPU tasks.
* **Model-profile sampler and iterations**: as for Philly (:mod:`ddl_gym.workloads.philly`): each
  task gets a profile drawn uniformly from ``models`` with the seeded ``rng``, and
  ``iterations = max(1, round(duration / t_iter))`` with ``t_iter`` the uncontended iteration time
  on the most consolidated placement (given ``performance_model`` and ``cluster``), else the
  profile's single-GPU compute time, else ``iteration_time_s``.
* ``job_id`` = the number in ``name`` (``openb-pod-0042`` → 42) when every selected name has one,
  else the 0-based data-row index. ``user`` = ``group`` = -1 (the trace has neither), ``weight`` = 1.
* ``gpu_spec`` (GPU-model constraints; empty in the default file) and the node heterogeneity are
  not modelled: the engine's GPUs are identical.

Every row is validated first; a bad value raises one line ``<file>: line <N>: column '<name>':
<problem>`` (or, with ``drop_malformed``, the row is dropped and counted).

:func:`load_alibaba_nodes` reads ``openb_node_list_gpu_node.csv`` (``sn,cpu_milli,memory_mib,gpu,
model``) into per-server GPU counts, for clusters shaped like the real one.
"""

from __future__ import annotations

import os
import re
import warnings
from pathlib import Path
from typing import Any, Literal

import numpy as np

from ddl_gym.sim.model import ClusterSpec, ConfigError, Workload
from ddl_gym.workloads.philly import _Rows, iterations_for_durations  # shared by the trace loaders
from ddl_gym.workloads.synthetic import TABLE_III, ModelSpec, resolve_models

POD_FILE = "openb_pod_list_default.csv"
NODE_FILE = "openb_node_list_gpu_node.csv"
TRACE_DIR = "alibaba-gpu-v2023"
#: Columns :func:`load_alibaba` reads (the others of the file are ignored).
REQUIRED_COLUMNS: tuple[str, ...] = ("name", "num_gpu", "gpu_milli", "creation_time", "deletion_time",
                                     "scheduled_time")
NODE_COLUMNS: tuple[str, ...] = ("sn", "gpu")
#: How fractional-GPU tasks become whole-GPU jobs (module docstring).
FRACTIONAL_MODES: tuple[str, ...] = ("whole", "work", "drop")
Fractional = Literal["whole", "work", "drop"]
_REPO_ROOT = Path(__file__).resolve().parents[2]


def default_alibaba_path(file: str = POD_FILE) -> Path:
    """Where the loaders look when no path is given (:func:`ddl_gym.workloads.tracedata.locate`).

    Returns:
        The first existing candidate: ``$DDL_GYM_TRACES/alibaba-gpu-v2023/<file>``,
        ``$DDL_GYM_TRACES/<file>``, ``<checkout>/../shared/traces/alibaba-gpu-v2023/<file>``.

    Raises:
        ConfigError: if none exists (the trace is not bundled: no licence to redistribute it); one
        line naming the file, ``DDL_GYM_TRACES`` and the source.
    """
    from ddl_gym.workloads.tracedata import locate

    keys = {POD_FILE: "alibaba-pods", NODE_FILE: "alibaba-nodes"}
    if file in keys:
        return locate(keys[file])
    candidates: list[Path] = []
    env = os.environ.get("DDL_GYM_TRACES")
    if env:
        candidates += [Path(env) / TRACE_DIR / file, Path(env) / file]
    candidates.append(_REPO_ROOT.parent / "shared" / "traces" / TRACE_DIR / file)
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    raise ConfigError(
        f"Alibaba GPU v2023 file {file} not found (looked at {', '.join(str(c) for c in candidates)}); it is "
        "not bundled (no licence to redistribute): download it from alibaba/clusterdata "
        "(cluster-trace-gpu-v2023/csv/) and set DDL_GYM_TRACES or pass path="
    )


def _resolve(path: str | os.PathLike[str] | None, file: str) -> Path:
    if path is None:
        return default_alibaba_path(file)
    resolved = Path(path)
    return resolved / file if resolved.is_dir() else resolved


def _read(path: Path, columns: tuple[str, ...], what: str, drop_malformed: bool) -> _Rows:
    """Split the file into validated string columns; the header must name every column in ``columns``."""
    from ddl_gym.workloads.csv_io import read_text_lines

    lines = read_text_lines(path, what)
    first = next((k for k, line in enumerate(lines) if line.strip()), None)
    if first is None:
        raise ConfigError(f"{path}: line 1: empty file; expected a header with {', '.join(columns)}")
    header = [c.strip() for c in lines[first].split(",")]
    missing = [c for c in columns if c not in header]
    if missing:
        from ddl_gym.workloads.csv_io import header_hint

        raise ConfigError(f"{path}: line {first + 1}: column {missing[0]!r}: missing from the header of this "
                          f"{what} ({header_hint(header, missing)}need {', '.join(columns)})")
    return _Rows(path, lines, first + 1, header, drop_malformed)


class AlibabaPods:
    """The validated GPU task table of one pod-list file (times in seconds, durations per fractional mode).

    Attributes:
        path: the file.
        job_id, creation, gpus, gpu_milli, duration: one entry per kept row, sorted by creation time.
        line: the file line of each kept row (for messages).
        dropped: counts of rows dropped before any window is chosen (``malformed``, ``cpu_only``,
            ``unscheduled``, ``fractional``).
    """

    def __init__(self, path: str | os.PathLike[str] | None = None, *, fractional: Fractional = "whole",
                 drop_malformed: bool = False) -> None:
        if fractional not in FRACTIONAL_MODES:
            raise ConfigError(f"fractional: must be one of {', '.join(FRACTIONAL_MODES)}, got {fractional!r}")
        file = _resolve(path, POD_FILE)
        rows = _read(file, REQUIRED_COLUMNS, "Alibaba pod list", drop_malformed)
        num_gpu = rows.numeric("num_gpu", integer=True)
        milli = rows.numeric("gpu_milli", integer=True)
        creation = rows.numeric("creation_time")
        deletion = rows.numeric("deletion_time")
        raw_sched = np.char.strip(rows.column("scheduled_time").astype(str))
        scheduled_present = raw_sched != ""
        # An empty scheduled_time means "never scheduled": parse the other cells only.
        rows.columns["scheduled_time"] = np.where(scheduled_present, raw_sched, "0").astype(object)
        sched = np.where(scheduled_present, rows.numeric("scheduled_time"), np.nan)
        gpu_rows = rows.ok & (num_gpu >= 1)
        self._check(rows, gpu_rows & (num_gpu == 1) & ((milli < 1) | (milli > 1000)), "gpu_milli", milli,
                    "must be in [1, 1000] for a 1-GPU task")
        timed = gpu_rows & scheduled_present
        self._check(rows, timed & (sched < creation), "scheduled_time", sched,
                    "is before the row's creation_time")
        self._check(rows, timed & (deletion < sched), "deletion_time", deletion,
                    "is before the row's scheduled_time")
        ok = rows.ok
        cpu_only = ok & (num_gpu == 0)
        unscheduled = ok & (num_gpu >= 1) & ~scheduled_present
        fractional_rows = ok & (num_gpu == 1) & (milli < 1000)
        keep = ok & (num_gpu >= 1) & scheduled_present
        self.dropped = {"malformed": int(rows.n_malformed), "cpu_only": int(cpu_only.sum()),
                        "unscheduled": int(unscheduled.sum()), "fractional": 0}
        if fractional == "drop":
            self.dropped["fractional"] = int((keep & fractional_rows).sum())
            keep &= ~fractional_rows
        if rows.n_malformed:
            warnings.warn(f"{file}: dropped {rows.n_malformed} malformed row(s)", UserWarning, stacklevel=2)
        idx = np.flatnonzero(keep)
        idx = idx[np.argsort(creation[idx], kind="stable")]
        duration = deletion[idx] - sched[idx]
        if fractional == "work":
            share = np.where(num_gpu[idx] == 1, milli[idx] / 1000.0, 1.0)
            duration = duration * share
        self.path = file
        self.fractional = fractional
        self.creation = creation[idx]
        self.gpus = num_gpu[idx].astype(np.int64)
        self.gpu_milli = milli[idx].astype(np.int64)
        self.duration = duration
        self.line = rows.lines[idx]
        names = rows.column("name")
        job_id = np.arange(len(names), dtype=np.int64)  # data-row index unless every valid name has a number
        numbers = _pod_numbers(names[rows.ok])
        if numbers is not None:
            job_id[rows.ok] = numbers
        self.job_id = job_id[idx]

    @staticmethod
    def _check(rows: _Rows, bad: np.ndarray, column: str, values: np.ndarray, problem: str) -> None:
        bad = bad & rows.ok
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            value = values[i]
            shown = int(value) if float(value).is_integer() else float(value)
            rows._bad(bad, f"{rows.path}: line {int(rows.lines[i])}: column {column!r}: {shown!r} {problem}")

    def __len__(self) -> int:
        return len(self.gpus)


def _pod_numbers(names: np.ndarray) -> np.ndarray | None:
    """``openb-pod-0042`` -> 42 for every name; ``None`` if a name has no number or two share one."""
    numbers = [re.search(r"(\d{1,15})\s*$", str(n)) for n in names.tolist()]
    if not all(numbers):
        return None
    values = np.array([int(m.group(1)) for m in numbers if m], dtype=np.int64)
    return values if len(np.unique(values)) == len(values) else None


def load_alibaba(
    path: str | os.PathLike[str] | None = None,
    *,
    fractional: Fractional = "whole",
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
    """Load the Alibaba GPU v2023 pod list as a workload (mapping and decisions in the module docstring).

    Rows are validated, then selected in this order: GPU tasks that were scheduled (and, with
    ``fractional="drop"``, whole-GPU ones) → creation time in ``[start, end)`` → oversized tasks
    (if ``cluster``) → the first ``max_jobs`` by creation time. Arrivals are rebased to the first
    selected task, then profiles are drawn and iterations derived.

    Args:
        path: the pod-list CSV or a folder holding it; ``None`` = :func:`default_alibaba_path`.
        fractional: ``"whole"``, ``"work"`` or ``"drop"`` (module docstring).
        rng: generator or seed for the model-profile sampler; ``None`` = seed 0.
        max_jobs: keep at most this many tasks (the earliest).
        start, end: creation-time window in trace seconds, ``[start, end)``.
        cluster: if given, tasks needing more GPUs than it has are dropped (warning) or, with
            ``drop_oversized=False``, an error naming the line.
        drop_oversized: see ``cluster``.
        drop_malformed: drop malformed rows with a counted warning instead of raising.
        iteration_time_s, performance_model: how durations become iterations
            (:func:`iterations_for_durations`).
        models: profiles or zoo names for the uniform model sampler (default: Table III).
        name: workload name (default ``"alibaba-v2023"``).
        return_dropped: also return the dropped-row counts.

    Returns:
        The workload, or ``(workload, dropped)`` with counts for ``malformed``, ``cpu_only``,
        ``unscheduled``, ``fractional`` and ``oversized``.

    Raises:
        ConfigError: unreadable file, missing column, or a bad value (naming file, line and column).
    """
    pods = AlibabaPods(path, fractional=fractional, drop_malformed=drop_malformed)
    keep = np.ones(len(pods), dtype=bool)
    if start is not None:
        keep &= pods.creation >= float(start)
    if end is not None:
        keep &= pods.creation < float(end)
    dropped = dict(pods.dropped, oversized=0)
    if cluster is not None:
        too_big = keep & (pods.gpus > cluster.num_gpus)
        if too_big.any():
            if not drop_oversized:
                i = int(np.flatnonzero(too_big)[0])
                raise ConfigError(f"{pods.path}: line {int(pods.line[i])}: column 'num_gpu': task needs "
                                  f"{int(pods.gpus[i])} GPUs but the cluster has {cluster.num_gpus} "
                                  f"({int(too_big.sum())} such tasks); drop them with drop_oversized=True")
            dropped["oversized"] = int(too_big.sum())
            keep &= ~too_big
            warnings.warn(f"{pods.path}: dropped {dropped['oversized']} task(s) needing more than the cluster's "
                          f"{cluster.num_gpus} GPUs", UserWarning, stacklevel=2)
    idx = np.flatnonzero(keep)
    if max_jobs is not None:
        if int(max_jobs) < 0:
            raise ConfigError(f"max_jobs: must be >= 0, got {max_jobs}")
        idx = idx[: int(max_jobs)]
    generator = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(0 if rng is None else rng)
    profiles = resolve_models(models)
    model_index = generator.integers(0, len(profiles), size=len(idx), dtype=np.int64)
    iterations = iterations_for_durations(pods.duration[idx], pods.gpus[idx], model_index, profiles, cluster=cluster,
                                          performance_model=performance_model, iteration_time_s=iteration_time_s,
                                          where=lambda i: f"{pods.path}: line {int(pods.line[idx[i]])}")
    arrival = pods.creation[idx] - (pods.creation[idx[0]] if idx.size else 0.0)
    workload = Workload(job_id=pods.job_id[idx], arrival=arrival, gpus=pods.gpus[idx], iterations=iterations,
                        model_index=model_index, models=profiles, name=name or "alibaba-v2023")
    return (workload, dropped) if return_dropped else workload


def load_alibaba_nodes(path: str | os.PathLike[str] | None = None) -> np.ndarray:
    """GPU count of every GPU node of ``openb_node_list_gpu_node.csv`` (file order).

    Nodes with ``gpu == 0`` are skipped (the all-node list has CPU-only nodes). GPU models (T4, V100,
    P100, ...) are not returned: the engine's GPUs are identical.

    Raises:
        ConfigError: unreadable file, missing column, bad value (naming file, line and column), no GPU node.
    """
    file = _resolve(path, NODE_FILE)
    rows = _read(file, NODE_COLUMNS, "Alibaba node list", drop_malformed=False)
    gpus = rows.numeric("gpu", integer=True)
    gpus = gpus[rows.ok & (gpus >= 1)].astype(np.int64)
    if gpus.size == 0:
        raise ConfigError(f"{file}: no node with gpu >= 1")
    return gpus
