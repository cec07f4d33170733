"""Trace windows: episodes of ``num_jobs`` consecutive jobs of a real trace, split by time into
training and held-out evaluation windows.

A :class:`TraceWindowSource` is a scenario workload source (``(rng, cluster) -> Workload``). Each
episode draws a window start uniformly among the jobs of the chosen split that fit the episode's
cluster, takes the next ``num_jobs`` such jobs, rebases their arrivals to 0, multiplies arrivals
by ``time_scale``, draws one model profile per job from the episode's generator and derives
iterations so that each job alone on its most consolidated placement takes its recorded duration
(:func:`ddl_gym.workloads.philly.iterations_for_durations`). The trace is read once per process
(per file, table, split and fractional mode) and shared by every cluster.

Traces (any file in these formats; by default the training slices under ``../shared/traces`` or
``$DDL_GYM_TRACES``):

* ``"philly"`` — the Philly job tables (:mod:`ddl_gym.workloads.philly`): ``table = "pollux"``
  (``philly_pollux_jobs.csv``: duration = sum of attempt run times, the table Pollux and Sia
  simulate) or ``"rfold"`` (``philly_rfold_jobs.csv``: duration = wall span including retries).
* ``"alibaba"`` — the Alibaba GPU v2023 pod list (:mod:`ddl_gym.workloads.alibaba`), with its
  ``fractional`` option.

**Training / evaluation split (by submission time).** Training never sees an evaluation window:
a window lies entirely inside its split, and the splits are disjoint in time.

===========  ==========================================  =========================================
trace        ``split = "train"``                         ``split = "eval"``
===========  ==========================================  =========================================
Philly       submitted before 2017-11-13 00:00:00        2017-11-13 00:00:00 and later (in the
             (trace-local time; 2017-08-14 → 11-12)      shared slice: → 2017-11-26, two weeks)
Alibaba      ``creation_time`` < day 138 (11,923,200 s)  day 138 and later (shared slice: days
             (dense part: days 115–137)                  138–144, one week)
===========  ==========================================  =========================================

``split = "all"`` (the default for a scenario file) uses the whole file, e.g. a user's own weeks.
``split_at`` moves the cut (Philly: a ``"YYYY-MM-DD HH:MM:SS"`` time; Alibaba: trace seconds).
The Philly week reserved by the project for evaluating generalisation (2017-11-27 → 12-04) is in
neither shared file; the evaluation split here is carved out of the shared training slice, so the
bundled 500-job sample (2017-11-12) is training data. Pollux-table seconds are measured from the
file's earliest timestamp and RFold seconds from RFold's epoch 2017-08-14 23:27:00, so the same
calendar cut applies to both tables.

**Load (``time_scale``).** Real windows are far from the load a 64-GPU cluster sees: 160
consecutive Philly jobs (submitted to a cluster of thousands of GPUs) arrive within ~2 h; 160
Alibaba GPU tasks span ~22 h. Multiplying arrival times by ``time_scale`` keeps each window's
order and burstiness and moves its load. The load of a window is its **in-window load**: the GPU
time its jobs demand *within the window's arrival span* over the GPU time the cluster has in it,
``Σ G_j·min(d_j, T − t_j) / (GPUs × T)`` (arrivals ``t_j`` rebased to 0, ``T`` the last arrival,
``d_j`` the recorded duration). *Decision:* not ``Σ G_j·d_j / (GPUs × T)`` (the offered-load
formula of the synthetic default), because in these traces one multi-day job routinely carries
a quarter of a window's GPU time (median) and runs far past the window: that formula calls an
Alibaba window "8× overloaded" when no job ever waits. The built-in window scenarios use the
``time_scale`` that puts the **median in-window load of the training split at 0.8** on their
cluster (:func:`calibrate_time_scale`, bisection; 0.8 = the default scenario's offered load), so
window-to-window variation of load is kept.
"""

from __future__ import annotations

import functools
import math
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ddl_gym.sim.model import ClusterSpec, ConfigError, Workload
from ddl_gym.workloads.alibaba import FRACTIONAL_MODES, AlibabaPods
from ddl_gym.workloads.philly import iterations_for_durations
from ddl_gym.workloads.synthetic import TABLE_III, resolve_models

TRACES: tuple[str, ...] = ("philly", "alibaba")
SPLITS: tuple[str, ...] = ("train", "eval", "all")
#: Scenario-file ``[workload] kind`` of each trace.
WINDOW_KINDS: dict[str, str] = {"philly-slice": "philly", "alibaba-slice": "alibaba"}
#: First submission of Philly's evaluation split (trace-local wall-clock time, as in the raw log).
PHILLY_EVAL_START = "2017-11-13 00:00:00"
#: Arrival 0 of RFold's table (``../shared/traces/philly/README.md``: matched against the Pollux table).
RFOLD_EPOCH = "2017-08-14 23:27:00"
#: First creation time of Alibaba's evaluation split, trace seconds (day 138).
ALIBABA_EVAL_START_S = 138 * 86_400.0
#: Median in-window load the built-in window scenarios are calibrated to (the default's offered load).
TARGET_MEDIAN_LOAD = 0.8
#: Philly durations are read in units of this many seconds (exact to 1 ms).
_DURATION_UNIT_S = 1e-3


@dataclass(frozen=True)
class TraceTable:
    """The jobs of one split of one trace file, cluster-independent, sorted by submission.

    Attributes:
        submit_s: submission times in the table's own seconds.
        gpus, duration_s, job_id: per job.
        label: ``"<trace>-<table>:<split>"`` for workload names and messages.
        path: the file read.
    """

    submit_s: np.ndarray
    gpus: np.ndarray
    duration_s: np.ndarray
    job_id: np.ndarray
    label: str
    path: str

    def __len__(self) -> int:
        return len(self.gpus)


def _philly_cut_seconds(file: Path, table: str, when: str) -> float:
    """``when`` (``YYYY-MM-DD HH:MM:SS``) in the table's own seconds."""
    import pandas as pd

    try:
        moment = pd.Timestamp(when)
    except (ValueError, TypeError):
        raise ConfigError(f"split_at: {when!r} is not a 'YYYY-MM-DD HH:MM:SS' time") from None
    if table == "rfold":
        return float((moment - pd.Timestamp(RFOLD_EPOCH)).total_seconds())
    stamps = pd.to_datetime(pd.read_csv(file, usecols=["timestamp"])["timestamp"], format="%Y-%m-%d %H:%M:%S",
                            errors="coerce")
    earliest = stamps.min()
    if pd.isna(earliest):
        return 0.0  # load_philly reports the malformed file with its line
    return float((moment - earliest).total_seconds())


def trace_table(trace: str, path: str | None = None, table: str | None = None, split: str = "all",
                fractional: str = "whole", split_at: str | float | None = None) -> TraceTable:
    """Read (once per process) the jobs of ``split`` of a trace file; arguments as :class:`TraceWindowSource`.

    The per-process cache is keyed on the *resolved* file and its size and modification time, so a
    different lookup result (``$DDL_GYM_TRACES`` changed, a copy appeared or went) or an edited file is
    read again, never served from an earlier read.
    """
    if trace not in TRACES:
        raise ConfigError(f"trace: must be one of {', '.join(TRACES)}, got {trace!r}")
    if split not in SPLITS:
        raise ConfigError(f"split: must be one of {', '.join(SPLITS)}, got {split!r}")
    if trace == "philly":
        from ddl_gym.workloads.philly import default_trace_path

        if table is not None and table not in ("rfold", "pollux"):
            raise ConfigError(f"table: must be 'rfold' or 'pollux', got {table!r}")
        file = default_trace_path(table or "rfold") if path is None else Path(path)
    else:
        from ddl_gym.workloads.alibaba import POD_FILE, _resolve

        file = _resolve(path, POD_FILE)
    try:
        stat = file.stat()
        stamp: tuple[int, int] = (stat.st_size, stat.st_mtime_ns)
    except OSError:
        stamp = (-1, -1)  # missing: the reader below names the file
    return _trace_table(trace, str(file), stamp, table, split, fractional, split_at)


@functools.lru_cache(maxsize=16)
def _trace_table(trace: str, resolved: str, stamp: tuple[int, int], table: str | None, split: str,
                 fractional: str, split_at: str | float | None) -> TraceTable:
    start = end = None
    file = Path(resolved)
    if trace == "philly":
        from ddl_gym.workloads.philly import _detect

        if file.is_dir():
            file = file / ("philly_pollux_jobs.csv" if table == "pollux" else "philly_rfold_jobs.csv")
        if not file.is_file():
            raise ConfigError(f"{file}: Philly trace not found")
        from ddl_gym.workloads.tracedata import read_lines

        detected = _detect(file, read_lines(file, 50))[0]
        if split != "all":
            cut = _philly_cut_seconds(file, detected, str(split_at or PHILLY_EVAL_START))
            start, end = (None, cut) if split == "train" else (cut, None)
        from ddl_gym.workloads.philly import load_philly

        workload = load_philly(file, table=table, rng=0, start=start, end=end, iteration_time_s=_DURATION_UNIT_S,
                               drop_malformed=False)
        # load_philly rebases arrivals to the first selected job; windows only need relative times.
        result = TraceTable(submit_s=workload.arrival, gpus=workload.gpus,
                            duration_s=workload.iterations * _DURATION_UNIT_S,
                            job_id=workload.job_id, label=f"philly-{detected}:{split}", path=str(file))
    else:
        pods = AlibabaPods(file, fractional=fractional)  # type: ignore[arg-type]
        keep = np.ones(len(pods), dtype=bool)
        if split != "all":
            try:
                cut = float(ALIBABA_EVAL_START_S if split_at is None else split_at)
            except (TypeError, ValueError):
                raise ConfigError(f"split_at: must be a number of trace seconds for Alibaba, got {split_at!r}") from None
            keep = pods.creation < cut if split == "train" else pods.creation >= cut
        result = TraceTable(submit_s=pods.creation[keep], gpus=pods.gpus[keep], duration_s=pods.duration[keep],
                            job_id=pods.job_id[keep], label=f"alibaba-{fractional}:{split}", path=str(pods.path))
    if len(result) == 0:
        raise ConfigError(f"{result.path}: split {split!r} has no jobs (cut at {split_at or 'the default'}); "
                          "use split = 'all' for a file outside the documented split")
    return result


@dataclass(frozen=True)
class TraceWindowSource:
    """``num_jobs`` consecutive jobs of a trace split per episode (module docstring).

    Attributes:
        trace: ``"philly"`` or ``"alibaba"``.
        num_jobs: jobs per window.
        split: ``"train"``, ``"eval"`` or ``"all"``.
        path: trace file (or folder); ``None`` = the default location of the trace.
        table: Philly table ``"pollux"`` or ``"rfold"`` (``None`` = detected from the file; RFold
            when ``path`` is ``None``).
        fractional: Alibaba's fractional-GPU mode (``"whole"``, ``"work"``, ``"drop"``).
        time_scale: inter-arrival multiplier (> 1 stretches, lowering the load).
        split_at: moves the train/eval cut (Philly: a time string; Alibaba: trace seconds).
        models: zoo names for the per-job profile draw (default: Ada-SRSF Table III).
        performance_model: the scenario's model, used to turn durations into iterations.
        allow_fewer: when fewer than ``num_jobs`` jobs of the split fit the cluster, run them all with
            a warning; by default (False) that is a ConfigError naming the file and both counts.
    """

    trace: str = "philly"
    num_jobs: int = 160
    split: str = "all"
    path: str | None = None
    table: str | None = None
    fractional: str = "whole"
    time_scale: float = 1.0
    split_at: str | float | None = None
    models: tuple[str, ...] = TABLE_III
    performance_model: Any = field(default=None, compare=True)
    allow_fewer: bool = False

    def __post_init__(self) -> None:
        if self.trace not in TRACES:
            raise ConfigError(f"trace: must be one of {', '.join(TRACES)}, got {self.trace!r}")
        if self.split not in SPLITS:
            raise ConfigError(f"split: must be one of {', '.join(SPLITS)}, got {self.split!r}")
        if self.fractional not in FRACTIONAL_MODES:
            raise ConfigError(f"fractional: must be one of {', '.join(FRACTIONAL_MODES)}, got {self.fractional!r}")
        if not isinstance(self.num_jobs, int) or self.num_jobs < 1:
            raise ConfigError(f"num_jobs: must be a positive integer, got {self.num_jobs!r}")
        if not (np.isfinite(self.time_scale) and self.time_scale > 0):
            raise ConfigError(f"time_scale: must be a finite number > 0, got {self.time_scale!r}")
        if self.trace == "alibaba" and self.table is not None:
            raise ConfigError("table: only for trace 'philly'")

    def trace_data(self) -> list[str]:
        """Keys of :data:`ddl_gym.workloads.tracedata.TRACE_DATA` this source needs (none for a given path)."""
        if self.path is not None:
            return []
        return [f"philly-{self.table or 'rfold'}"] if self.trace == "philly" else ["alibaba-pods"]

    def trace_files(self) -> list[str]:
        """The file this source reads (for the evaluation cache's content fingerprint)."""
        return [self.table_data().path]

    def table_data(self) -> TraceTable:
        return trace_table(self.trace, self.path, self.table, self.split, self.fractional, self.split_at)

    def window_rows(self, rng: np.random.Generator, cluster: ClusterSpec) -> np.ndarray:
        """Rows of :meth:`table_data` forming this episode's window (jobs that fit ``cluster`` only)."""
        data = self.table_data()
        fits = np.flatnonzero(data.gpus <= cluster.num_gpus)
        if fits.size == 0:
            raise ConfigError(f"{data.path}: no job of split {self.split!r} fits a cluster of {cluster.num_gpus} GPUs")
        if fits.size < self.num_jobs:
            message = (f"{data.path}: split {self.split!r} has {fits.size} job(s) that fit a cluster of "
                       f"{cluster.num_gpus} GPUs, fewer than num_jobs = {self.num_jobs}")
            if not self.allow_fewer:
                raise ConfigError(message + "; lower num_jobs or set allow_fewer = true to run them all")
            _warn_fewer(message + " (allow_fewer: running them all)")
            return fits
        if fits.size == self.num_jobs:
            return fits
        first = int(rng.integers(0, fits.size - self.num_jobs + 1))
        return fits[first : first + self.num_jobs]

    def __call__(self, rng: np.random.Generator, cluster: ClusterSpec) -> Workload:
        data = self.table_data()
        rows = self.window_rows(rng, cluster)
        profiles = resolve_models(self.models)
        model_index = rng.integers(0, len(profiles), size=rows.size, dtype=np.int64)
        iterations = iterations_for_durations(data.duration_s[rows], data.gpus[rows], model_index, profiles,
                                              cluster=cluster, performance_model=self.performance_model)
        arrival = (data.submit_s[rows] - data.submit_s[rows[0]]) * self.time_scale
        return Workload(job_id=data.job_id[rows], arrival=arrival, gpus=data.gpus[rows], iterations=iterations,
                        model_index=model_index, models=profiles,
                        name=f"{data.label}[{int(rows[0])}:{int(rows[-1]) + 1}]")


_WARNED_FEWER: set[str] = set()


def _warn_fewer(message: str) -> None:
    """Warn once per message (every episode of a short file would repeat it)."""
    if message not in _WARNED_FEWER:
        _WARNED_FEWER.add(message)
        warnings.warn(message, stacklevel=3)


# ---------------------------------------------------------------------------- load calibration
def _window_sample(source: TraceWindowSource, num_gpus: int, samples: int, seed: int) -> tuple[np.ndarray, ...]:
    """Rebased arrivals (unscaled), GPUs and durations of ``samples`` random windows, one row each."""
    data = source.table_data()
    cluster = ClusterSpec.homogeneous(1, int(num_gpus))
    rng = np.random.default_rng(seed)
    rows = [source.window_rows(rng, cluster) for _ in range(samples)]
    width = min(len(r) for r in rows)
    rows_arr = np.array([r[:width] for r in rows])
    t = data.submit_s[rows_arr] - data.submit_s[rows_arr[:, :1]]
    return t, data.gpus[rows_arr].astype(np.float64), data.duration_s[rows_arr]


def _in_window_load(t: np.ndarray, gpus: np.ndarray, duration: np.ndarray, scale: float, num_gpus: int) -> np.ndarray:
    span = np.maximum(1.0, t[:, -1:] * scale)
    return (gpus * np.minimum(duration, span - t * scale)).sum(axis=1) / (num_gpus * span[:, 0])


def window_loads(source: TraceWindowSource, num_gpus: int, samples: int = 400, seed: int = 0) -> np.ndarray:
    """In-window load ``Σ G·min(d, T − t) / (GPUs × T)`` of ``samples`` random windows of ``source``."""
    return _in_window_load(*_window_sample(source, num_gpus, samples, seed), source.time_scale, num_gpus)


def calibrate_time_scale(source: TraceWindowSource, num_gpus: int, target: float = TARGET_MEDIAN_LOAD,
                         samples: int = 400, seed: int = 0) -> float:
    """The ``time_scale`` giving median in-window load ``target`` on ``num_gpus`` GPUs (3 significant digits).

    The in-window load never increases with ``time_scale`` (each job's share ``min(d/(sT), 1 − t/T)``
    does not), so a bisection on ``log(time_scale)`` finds it.

    Raises:
        ConfigError: ``target`` is above what the windows reach when every job arrives at once.
    """
    sample = _window_sample(source, num_gpus, samples, seed)

    def median(scale: float) -> float:
        return float(np.median(_in_window_load(*sample, scale, num_gpus)))

    low, high = 1e-6, 1e6
    if median(low) < target:
        raise ConfigError(f"target load {target} is above what these windows reach ({median(low):.3g})")
    for _ in range(60):
        mid = math.sqrt(low * high)
        if median(mid) > target:
            low = mid
        else:
            high = mid
    return float(f"{math.sqrt(low * high):.3g}")


# ---------------------------------------------------------------------------- scenario files
_FILE_KEYS: tuple[str, ...] = ("kind", "path", "table", "num_jobs", "split", "split_at", "time_scale",
                               "fractional", "models", "allow_fewer")


def window_source_from_config(kind: str, cfg: dict[str, Any], base: Path, performance_model: Any,
                              err: Any) -> TraceWindowSource:
    """The source of a scenario file's ``[workload]`` table with ``kind = "philly-slice"`` / ``"alibaba-slice"``.

    Keys: ``path`` (relative to the scenario file; default: the trace's default location),
    ``num_jobs`` (160; fewer jobs in the split is an error unless ``allow_fewer = true``), ``split`` (``"all"``), ``split_at``, ``time_scale`` (1.0), ``table``
    (Philly), ``fractional`` (Alibaba), ``models`` (list of zoo names). ``err`` is the scenario
    file's error builder (:class:`ddl_gym.scenarios._FileErrors`): every problem is one line
    ``<file>: workload.<key>: <problem>``, an unknown key names the nearest allowed one.
    """
    from ddl_gym.scenario_base import _as_int, _as_number, _as_str

    trace = WINDOW_KINDS[kind]
    allowed = [k for k in _FILE_KEYS if not (trace == "alibaba" and k == "table")
               and not (trace == "philly" and k == "fractional")]
    err.check_keys("workload", cfg, allowed)
    params: dict[str, Any] = {"trace": trace, "performance_model": performance_model}
    if "path" in cfg:
        trace_path = Path(_as_str(err, "workload.path", cfg["path"])).expanduser()
        trace_path = trace_path if trace_path.is_absolute() else base / trace_path
        if not trace_path.exists():
            raise err("workload.path", f"trace file {trace_path} not found")
        params["path"] = str(trace_path)
    if "num_jobs" in cfg:
        params["num_jobs"] = _as_int(err, "workload.num_jobs", cfg["num_jobs"], 1, 1_000_000)
    if "time_scale" in cfg:
        params["time_scale"] = _as_number(err, "workload.time_scale", cfg["time_scale"], high=1e6, low_open=True)
    for key, choices in (("split", SPLITS), ("table", ("rfold", "pollux")), ("fractional", FRACTIONAL_MODES)):
        if key in cfg:
            params[key] = _as_str(err, f"workload.{key}", cfg[key], choices)
    if "allow_fewer" in cfg:
        if not isinstance(cfg["allow_fewer"], bool):
            raise err("workload.allow_fewer", f"must be true or false, got {type(cfg['allow_fewer']).__name__}")
        params["allow_fewer"] = cfg["allow_fewer"]
    if "split_at" in cfg:
        if trace == "philly":
            params["split_at"] = _as_str(err, "workload.split_at", cfg["split_at"])
        else:
            params["split_at"] = _as_number(err, "workload.split_at", cfg["split_at"], high=1e12)
    if "models" in cfg:
        value = cfg["models"]
        if not isinstance(value, list) or not value or not all(isinstance(m, str) for m in value):
            raise err("workload.models", f"must be a non-empty list of model-zoo names, got {value!r}")
        try:
            resolve_models(value)
        except ConfigError as exc:
            raise err("workload.models", str(exc)) from None
        params["models"] = tuple(value)
    return TraceWindowSource(**params)


# ---------------------------------------------------------------------------- built-in scenarios
#: ``time_scale`` of the built-in window scenarios: :func:`calibrate_time_scale` on the *training*
#: split, 64 GPUs, target median in-window load 0.8 (``python -m ddl_gym.workloads.windows`` recomputes them;
#: a test checks them when the traces are present).
BUILTIN_TIME_SCALE: dict[str, float] = {"philly": 0.588, "alibaba": 0.0234}


def window_scenarios() -> list[Any]:
    """``philly-windows[-train]`` and ``alibaba-windows[-train]`` on the default scenario's cluster and model."""
    from ddl_gym.scenario_base import DEFAULT_CLUSTER, DEFAULT_MODEL, Scenario

    cluster, model = DEFAULT_CLUSTER, DEFAULT_MODEL
    out = []
    specs = [
        ("philly", {"table": "pollux"}, "Philly (Pollux table)"),
        ("alibaba", {"fractional": "whole"}, "Alibaba GPU v2023 (fractional GPUs as whole GPUs)"),
    ]
    for trace, extra, what in specs:
        scale = BUILTIN_TIME_SCALE[trace]
        for split, suffix, when in (("eval", "", "held-out evaluation"), ("train", "-train", "training")):
            source = TraceWindowSource(trace=trace, num_jobs=160, split=split, time_scale=scale,
                                       performance_model=model, **extra)
            out.append(Scenario(
                name=f"{trace}-windows{suffix}", cluster=cluster, workload=source, model=model,
                description=f"160 consecutive {what} jobs from the {when} split, arrivals x{scale:g} (median "
                            f"in-window load {TARGET_MEDIAN_LOAD} on training windows), default cluster and model",
            ))
    return out


def main(argv: list[str] | None = None) -> int:
    """Print the calibrated time scales and the load quantiles of the built-in window scenarios."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m ddl_gym.workloads.windows",
                                     description="calibrate time_scale of the built-in trace-window scenarios")
    parser.add_argument("--gpus", type=int, default=64)
    parser.add_argument("--samples", type=int, default=400)
    args = parser.parse_args(argv)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for trace, extra in (("philly", {"table": "pollux"}), ("alibaba", {"fractional": "whole"})):
            train = TraceWindowSource(trace=trace, split="train", **extra)
            scale = calibrate_time_scale(train, args.gpus, samples=args.samples)
            for split in ("train", "eval"):
                from dataclasses import replace

                loads = window_loads(replace(train, split=split, time_scale=scale), args.gpus, args.samples)
                q = np.percentile(loads, [10, 50, 90])
                print(f"{trace:8s} {split:5s} jobs={len(replace(train, split=split).table_data()):6d} "
                      f"time_scale={scale:g} load p10/p50/p90 = {q[0]:.2f}/{q[1]:.2f}/{q[2]:.2f}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())


__all__ = [
    "ALIBABA_EVAL_START_S", "PHILLY_EVAL_START", "SPLITS", "TRACES", "TraceTable", "TraceWindowSource",
    "calibrate_time_scale", "trace_table", "window_loads", "window_scenarios", "window_source_from_config",
]
