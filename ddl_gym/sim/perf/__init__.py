"""Performance models: the per-iteration time of every running job, given all placements.

Two job-level models share one structure. A job whose workers sit on more than one server
("split": ``0 < y_js < G_j`` for some server ``s``) communicates over the NICs of its servers.
The *contention count* of a split job is

    p_j = max over servers s holding j of  #{split jobs j' with workers on s}        (SJF-BCO eq. 6)

(``j`` itself included, so ``p_j >= 1``). A job on one server never contends. The simulator keeps
``p_j`` up to date incrementally; the models only turn ``(job, servers spanned, p_j)`` into a
per-iteration time ``τ_j`` (seconds). :func:`per_iteration_times` is the pure, from-scratch
reference used by tests and by planners.

* :class:`RARContentionModel` — SJF-BCO §4.1, eqs. (6)–(8) (the default).
* :class:`AllReduceContentionModel` — Ada-SRSF §III-A, eq. (5), in job-level form (every split
  job is counted as communicating all the time; the task-level form with explicit communication
  phases lives in :mod:`ddl_gym.sim.tasklevel`).

**Rate models.** Both are *contention* rate models: a job's rate depends on what else runs on its
servers, so the engine re-rates neighbours when a split job starts or ends. The other papers'
models are *contention-free* (each reserves bandwidth per job: A-SRPT's per-GPU NIC share, SMD's
per-PS bandwidth, A-Online's per-type bandwidth), so a job's per-iteration time depends only on its
own :class:`~ddl_gym.sim.alloc.Allocation`. A bound contention-free model sets
``contention_free = True`` and implements :class:`ContentionFreeBoundModel`; the engine then
computes τ once at start (and on resize) and never re-rates. Which model a scenario uses is a name in
:data:`PERFORMANCE_MODELS` (classes, or ``"module:Class"`` strings imported on first use).

One module per model, behind the :data:`PERFORMANCE_MODELS` registry (issue 29):

* :mod:`~ddl_gym.sim.perf.rar` — ``"rar"``, :class:`RARContentionModel` (SJF-BCO eqs. (6)-(8));
* :mod:`~ddl_gym.sim.perf.allreduce` — ``"allreduce"``, :class:`AllReduceContentionModel` (Ada-SRSF eq. (5));
* :mod:`~ddl_gym.sim.perf.pipeline` — ``"pipeline"`` (A-SRPT §III-B eqs. (4)-(7)), with the Heavy-Edge
  stage-to-GPU mapping in :mod:`~ddl_gym.sim.perf.pipeline_mapping`;
* :mod:`~ddl_gym.sim.perf.ps` — ``"smd-ps"`` (SMD §III-B/C eqs. (4)/(5));
* :mod:`~ddl_gym.sim.perf.aonline` — ``"aonline-ps"``, ``"aonline-ra"`` (A-Online eqs. (1), (14));
* :mod:`~ddl_gym.sim.perf.base` — the protocols and the contention counts they share.
"""

from __future__ import annotations

from typing import Any

from ddl_gym.sim.model import ConfigError
from ddl_gym.sim.perf.allreduce import AllReduceContentionModel, _BoundAllReduce
from ddl_gym.sim.perf.base import (
    DEGRADATION_FUNCTIONS, BoundModel, ContentionFreeBoundModel, ContentionFunction, PerformanceModel,
    contention_counts, linear_degradation, per_iteration_times, power_degradation, rate_classes,
    require_architectures,
)
from ddl_gym.sim.perf.rar import RARContentionModel, _BoundRAR


#: Model name -> class, or ``"module:Class"`` imported on first use (paper models live in their own
#: modules so that an optional dependency of one never breaks the others).
PERFORMANCE_MODELS: dict[str, type | str] = {
    "rar": RARContentionModel,
    "allreduce": AllReduceContentionModel,
    "pipeline": "ddl_gym.sim.perf.pipeline:PipelineRateModel",  # A-SRPT §III-B eqs. (4)-(7)
    "smd-ps": "ddl_gym.sim.perf.ps:SMDSpeedModel",  # SMD §III-B/C eqs. (4)/(5)
    "aonline-ps": "ddl_gym.sim.perf.aonline:AOnlinePSModel",  # A-Online eq. (1)
    "aonline-ra": "ddl_gym.sim.perf.aonline:AOnlineRAModel",  # A-Online eq. (14)
}


def performance_model_class(name: str) -> type:
    """The class registered under ``name`` (imports it on first use)."""
    try:
        target = PERFORMANCE_MODELS[name]
    except KeyError:
        raise ConfigError(f"unknown performance model {name!r}; choose one of {sorted(PERFORMANCE_MODELS)}") from None
    if isinstance(target, str):
        import importlib

        module_name, class_name = target.split(":")
        try:
            target = getattr(importlib.import_module(module_name), class_name)
        except (ImportError, AttributeError) as exc:
            raise ConfigError(f"performance model {name!r} is not available: {exc}") from None
        PERFORMANCE_MODELS[name] = target
    return target


def make_performance_model(name: str, **params: Any) -> PerformanceModel:
    """Build a performance model by registry name (e.g. ``"rar"``, ``"allreduce"``) with keyword parameters."""
    cls = performance_model_class(name)
    try:
        return cls(**params)
    except TypeError as exc:
        raise ConfigError(f"performance model {name!r}: {exc}") from None


__all__ = [
    "DEGRADATION_FUNCTIONS", "PERFORMANCE_MODELS", "AllReduceContentionModel", "BoundModel", "ContentionFreeBoundModel",
    "ContentionFunction", "PerformanceModel", "RARContentionModel", "contention_counts", "linear_degradation",
    "make_performance_model", "per_iteration_times", "performance_model_class", "power_degradation", "rate_classes",
    "require_architectures",
]
