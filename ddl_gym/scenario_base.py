"""The ``Scenario`` type, the default world's constants and the scenario-file value checks.

:mod:`ddl_gym.scenarios` (the registry and the scenario files) and the workload loaders of
:mod:`ddl_gym.workloads` (which build scenarios of their own) both import from here, so neither
imports the other's module at load time. The calibration of the default world is explained in
:mod:`ddl_gym.scenarios`' docstring.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ddl_gym.sim.model import ClusterSpec, ConfigError, Workload
from ddl_gym.sim.perf import PerformanceModel, RARContentionModel

GBPS = 1e9 / 8  # bytes per second in one gigabit per second

ClusterSource = Callable[[np.random.Generator], ClusterSpec]
WorkloadSource = Callable[[np.random.Generator, ClusterSpec], Workload]


@dataclass(frozen=True)
class Scenario:
    """A named experimental setting.

    Attributes:
        name: registry name.
        cluster: a fixed ClusterSpec, or a callable drawing one from the episode's generator.
        workload: callable ``(rng, cluster) -> Workload`` drawing one episode's jobs.
        model: the performance model.
        engine: ``"job"`` (event engine with job-level rates) or ``"task"`` (task-level all-reduce).
        description: one line for ``ddl-gym list``.
        options: engine options (e.g. task-level GPU sharing), free-form.
    """

    name: str
    cluster: ClusterSpec | ClusterSource
    workload: WorkloadSource
    model: PerformanceModel = field(default_factory=RARContentionModel)
    engine: str = "job"
    description: str = ""
    options: dict[str, Any] = field(default_factory=dict)

    def sample_cluster(self, rng: np.random.Generator) -> ClusterSpec:
        return self.cluster if isinstance(self.cluster, ClusterSpec) else self.cluster(rng)

    def sample(self, rng: np.random.Generator) -> tuple[ClusterSpec, Workload]:
        """Draw one episode: the cluster first, then the workload, from the same generator."""
        cluster = self.sample_cluster(rng)
        workload = self.workload(rng, cluster)
        workload.check_fits(cluster)
        return cluster, workload

    def episode(self, seed: int) -> tuple[ClusterSpec, Workload]:
        """The episode the harness uses for ``seed`` (the env draws the same one for ``reset(seed)``)."""
        return self.sample(np.random.default_rng(seed))


#: NIC bandwidth of the default cluster, Gb/s (module docstring: calibration).
DEFAULT_NIC_GBPS = 100.0
#: ξ1 of the default RAR model, calibrated to Ada-SRSF §I's 2.29× (module docstring).
DEFAULT_XI1 = 0.6
DEFAULT_MODEL = RARContentionModel(xi1=DEFAULT_XI1)
DEFAULT_CLUSTER = ClusterSpec.homogeneous(16, 4, inter_bandwidth=DEFAULT_NIC_GBPS * GBPS, intra_bandwidth=800 * GBPS)


# ---------------------------------------------------------------------------- scenario-file value checks
class _FileErrors:
    """Builds one-line errors ``<file>: <table.key>: <problem>`` for a scenario file."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __call__(self, key: str, message: str) -> ConfigError:
        return ConfigError(f"{self.path}: {key}: {message}")

    def unknown(self, table: str, key: str, known: Sequence[str]) -> ConfigError:
        import difflib

        where = f"{table}.{key}" if table else key
        close = difflib.get_close_matches(key, list(known), n=1, cutoff=0.6)
        hint = f"did you mean {close[0]!r}? " if close else ""
        inside = f"[{table}]" if table else "the top level"
        return self(where, f"unknown key; {hint}keys allowed in {inside}: {', '.join(known)}")

    def check_keys(self, table: str, data: Mapping[str, Any], known: Sequence[str]) -> None:
        for key in data:
            if key not in known:
                raise self.unknown(table, str(key), known)


def _type_name(value: Any) -> str:
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string", list: "a list",
            dict: "a table"}.get(type(value), type(value).__name__)


def _as_int(err: _FileErrors, key: str, value: Any, low: int, high: int) -> int:
    """An integer in ``[low, high]``; integral floats are accepted, booleans and strings are not."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise err(key, f"must be an integer, got {value!r} ({_type_name(value)})")
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        raise err(key, f"must be an integer, got {value!r}")
    if not low <= value <= high:
        raise err(key, f"must be an integer in [{low:,}, {high:,}], got {value!r}")
    return int(value)


def _as_number(err: _FileErrors, key: str, value: Any, *, low: float = 0.0, high: float = 1e15,
               low_open: bool = False) -> float:
    """A finite number in ``[low, high]`` (``(low, high]`` with ``low_open``)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise err(key, f"must be a number, got {value!r} ({_type_name(value)})")
    x = float(value)
    if not math.isfinite(x):
        raise err(key, f"must be a finite number, got {value!r}")
    if x < low or (low_open and x == low) or x > high:
        bracket = "(" if low_open else "["
        raise err(key, f"must be a number in {bracket}{low:g}, {high:g}], got {value!r}")
    return x


def _as_bool(err: _FileErrors, key: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise err(key, f"must be true or false, got {value!r} ({_type_name(value)})")
    return value


def _as_str(err: _FileErrors, key: str, value: Any, choices: Sequence[str] | None = None) -> str:
    if not isinstance(value, str):
        raise err(key, f"must be a string, got {value!r} ({_type_name(value)})")
    if choices is not None and value not in choices:
        import difflib

        close = difflib.get_close_matches(value, list(choices), n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise err(key, f"unknown value {value!r}; {hint}choose one of {', '.join(choices)}")
    return value


def _table(err: _FileErrors, key: str, value: Any, required: bool) -> dict[str, Any]:
    if value is None:
        if required:
            raise err(key, f"missing [{key}] table")
        return {}
    if not isinstance(value, dict):
        raise err(key, f"must be a [{key}] table, got {value!r} ({_type_name(value)})")
    return dict(value)
