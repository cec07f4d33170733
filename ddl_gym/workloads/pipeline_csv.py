"""Pipeline (mixed-parallel) jobs in workload CSV files: the extra columns and their parsing.

:func:`ddl_gym.workloads.csv_io.read_workload_csv` calls :func:`add_pipeline_columns` when the header
has any of these optional columns, and :func:`~ddl_gym.workloads.csv_io.write_workload_csv` writes
them through :func:`pipeline_columns`:

==========================  ==========================================================================
column                      meaning
==========================  ==========================================================================
``arch``                    ``allreduce`` (default when empty) or ``pipeline``
``pipeline``                the job's stages, ``;``-separated, each
                            ``replicas:fwd_s:bwd_s:act_in_bytes:act_out_bytes:param_bytes``
                            (A-SRPT's ``k_s : p^f_s : p^b_s : d^in_s : d^out_s : h_s``), optionally
                            after a configuration label and ``@`` (``gpt-13b/16x1@...``; default
                            label: the row's model); a non-empty cell makes the row a pipeline job
``predicted_iterations``    what a scheduler may know about ``iterations`` (a predictor's output),
                            ``>= 0``; empty = unknown
==========================  ==========================================================================

Example row (two stages of two replicas; ``gpus`` must equal the replicas' sum)::

    job_id,arrival_s,gpus,iterations,model,pipeline,predicted_iterations
    7,12.5,4,1000,bert-large,2:0.01:0.02:0:8e6:4e8;2:0.012:0.024:8e6:0:4e8,950

A pipeline row still names a ``model`` like any row (a zoo name, or a custom name with the profile
columns): it is the job's flat summary for generic consumers; the pipeline rate model reads only the
stages. Errors are one line naming the file, the line, the column and, inside ``pipeline``, the
stage and field (``<file>: line 3: column 'pipeline': stage 2 field 'bwd_s': 'x' is not a number``).
"""

from __future__ import annotations

import math
import os
from typing import Mapping

import numpy as np

from ddl_gym.sim.model import ARCH_ALLREDUCE, ARCH_PIPELINE, ARCHITECTURES, ConfigError, Workload
from ddl_gym.sim.perf.pipeline import PipelineConfig, StageProfile

PIPELINE_COLUMNS: tuple[str, ...] = ("arch", "pipeline", "predicted_iterations")
STAGE_FIELDS: tuple[str, ...] = ("replicas", "fwd_s", "bwd_s", "act_in_bytes", "act_out_bytes", "param_bytes")

PathLike = str | os.PathLike[str]


def _fail(path: PathLike, line: int, column: str, problem: str) -> ConfigError:
    return ConfigError(f"{path}: line {line}: column {column!r}: {problem}")


def parse_pipeline(text: str, *, path: PathLike = "<pipeline>", line: int = 0, name: str = "") -> PipelineConfig:
    """Parse one ``pipeline`` cell into a :class:`PipelineConfig` (errors name file, line, stage and field)."""
    stages = []
    text = text.strip()
    if "@" in text:
        name, text = (t.strip() for t in text.split("@", 1))
    parts = [p.strip() for p in text.split(";")]
    for s, part in enumerate(parts, start=1):
        fields = [f.strip() for f in part.split(":")]
        if len(fields) != len(STAGE_FIELDS):
            raise _fail(path, line, "pipeline", f"stage {s}: expected {len(STAGE_FIELDS)} ':'-separated fields "
                        f"({':'.join(STAGE_FIELDS)}), got {len(fields)} in {part!r}")
        values = []
        for field, raw in zip(STAGE_FIELDS, fields):
            try:
                value = float(raw)
            except ValueError:
                raise _fail(path, line, "pipeline", f"stage {s} field {field!r}: {raw!r} is not a number") from None
            if not math.isfinite(value) or value < 0:
                raise _fail(path, line, "pipeline", f"stage {s} field {field!r}: must be a finite number >= 0, got {raw}")
            if field == "replicas" and (value != int(value) or value < 1):
                raise _fail(path, line, "pipeline", f"stage {s} field 'replicas': must be an integer >= 1, got {raw}")
            values.append(value)
        k, fwd, bwd, d_in, d_out, h = values
        stages.append(StageProfile(fwd, bwd, d_in, d_out, h, int(k)))
    try:
        return PipelineConfig(tuple(stages), name=name)
    except ConfigError as exc:
        raise _fail(path, line, "pipeline", str(exc)) from None


def format_pipeline(config: PipelineConfig) -> str:
    """The ``pipeline`` cell of ``config`` (floats in shortest round-trip form)."""
    label = f"{config.name}@" if config.name else ""
    return label + ";".join(":".join([str(s.replicas)] + [repr(float(getattr(s, f))) for f in STAGE_FIELDS[1:]])
                    for s in config.stages)


def add_pipeline_columns(path: PathLike, workload: Workload, cells: Mapping[str, np.ndarray],
                         lines: np.ndarray) -> Workload:
    """Attach ``arch``, pipeline profiles and ``predicted_iterations`` parsed from ``cells`` (one raw
    string array per CSV column, rows aligned with ``workload``) to ``workload``."""
    n = workload.num_jobs
    arch = np.full(n, ARCH_ALLREDUCE, dtype=np.int8)
    profile_index = np.full(n, -1, dtype=np.int64)
    profiles: dict[PipelineConfig, int] = {}
    arch_cells = cells.get("arch")
    pipe_cells = cells.get("pipeline")
    names = [workload.models[k].name for k in workload.model_index.tolist()]
    for i in range(n):
        line = int(lines[i])
        kind = str(arch_cells[i]).strip().lower() if arch_cells is not None else ""
        text = str(pipe_cells[i]).strip() if pipe_cells is not None else ""
        if kind and kind not in ARCHITECTURES:
            raise _fail(path, line, "arch", f"unknown architecture {kind!r} (choose {', '.join(ARCHITECTURES)})")
        if kind not in ("", "pipeline", "allreduce"):
            raise _fail(path, line, "arch", f"{kind!r} jobs cannot be given in a workload CSV (allreduce or pipeline)")
        if kind == "pipeline" and not text:
            raise _fail(path, line, "pipeline", "a pipeline job needs its stages (column 'pipeline' is empty)")
        if kind == "allreduce" and text:
            raise _fail(path, line, "pipeline", "an allreduce job has no stages (leave 'pipeline' empty or set arch=pipeline)")
        if not text:
            continue
        config = parse_pipeline(text, path=path, line=line, name=names[i])
        if config.gpus != int(workload.gpus[i]):
            raise _fail(path, line, "gpus", f"the pipeline has {config.gpus} replicas in all, gpus is {int(workload.gpus[i])}")
        arch[i] = ARCH_PIPELINE
        profile_index[i] = profiles.setdefault(config, len(profiles))
    predicted = np.full(n, np.nan)
    pred_cells = cells.get("predicted_iterations")
    if pred_cells is not None:
        for i, raw in enumerate(pred_cells.tolist()):
            text = str(raw).strip()
            if not text:
                continue
            try:
                value = float(text)
            except ValueError:
                raise _fail(path, int(lines[i]), "predicted_iterations", f"{text!r} is not a number") from None
            if not math.isfinite(value) or value < 0:
                raise _fail(path, int(lines[i]), "predicted_iterations", f"must be a finite number >= 0, got {text}")
            predicted[i] = value
    return Workload(
        job_id=workload.job_id, arrival=workload.arrival, gpus=workload.gpus, iterations=workload.iterations,
        model_index=workload.model_index, models=workload.models, weight=workload.weight, user=workload.user,
        group=workload.group, name=workload.name, arch=arch, profile_index=profile_index, profiles=tuple(profiles),
        predicted_iterations=predicted,
    )


def pipeline_columns(workload: Workload) -> dict[str, list[str]]:
    """The extra CSV columns of ``workload`` (``{}`` when it has no pipeline job and no prediction)."""
    has_pipeline = bool(np.any(workload.arch == ARCH_PIPELINE))
    has_prediction = bool(np.any(np.isfinite(workload.predicted_iterations)))
    if np.any((workload.arch != ARCH_ALLREDUCE) & (workload.arch != ARCH_PIPELINE)):
        raise ConfigError(f"workload {workload.name!r}: only allreduce and pipeline jobs can be written to CSV")
    if not has_pipeline and not has_prediction:
        return {}
    out: dict[str, list[str]] = {}
    if has_pipeline:
        cells = [format_pipeline(p) if isinstance(p, PipelineConfig) else "" for p in workload.profiles]
        out["arch"] = [ARCHITECTURES[a] for a in workload.arch.tolist()]
        out["pipeline"] = [cells[k] if k >= 0 else "" for k in workload.profile_index.tolist()]
    if has_prediction:
        out["predicted_iterations"] = ["" if not math.isfinite(v) else repr(float(v))
                                       for v in workload.predicted_iterations.tolist()]
    return out
