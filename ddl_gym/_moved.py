"""Old module paths of the layout of issue 29, kept importable for one release with a DeprecationWarning.

``ddl_gym.baselines.sjf_bco_plan`` was moved to ``ddl_gym.baselines.sjf_bco.plan`` (and so on, see
:data:`MOVED_MODULES`). Importing an old path imports the new module, warns once (DeprecationWarning,
naming the new path) and binds the old name to the *same* module object, so every class and
function is identical under both names. No file is kept at the old paths (git then sees the moves
as renames); a finder on ``sys.meta_path`` answers only the names listed here. The project's own
code imports the new paths only (a test checks it).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings
from importlib.machinery import ModuleSpec
from types import ModuleType
from typing import Sequence

#: old dotted path -> new dotted path (removal planned for the release after 0.1).
MOVED_MODULES: dict[str, str] = {
    # the policy registry: above baselines/ and agents/
    "ddl_gym.baselines.registry": "ddl_gym.policies",
    "ddl_gym.baselines.plugins": "ddl_gym.plugins",
    # sim/perf/: one module per performance model
    "ddl_gym.sim.perf_pipeline": "ddl_gym.sim.perf.pipeline",
    "ddl_gym.sim.perf_ps": "ddl_gym.sim.perf.ps",
    "ddl_gym.sim.perf_aonline": "ddl_gym.sim.perf.aonline",
    "ddl_gym.sim.heavy_edge": "ddl_gym.sim.perf.pipeline_mapping",
    # baselines/: one package per paper family
    "ddl_gym.baselines.sjf_bco_plan": "ddl_gym.baselines.sjf_bco.plan",
    "ddl_gym.baselines.heavy_edge": "ddl_gym.baselines.a_srpt.server_selection",
    "ddl_gym.baselines.prediction": "ddl_gym.baselines.a_srpt.prediction",
    "ddl_gym.baselines.a_srpt_baselines": "ddl_gym.baselines.a_srpt.paper_baselines",
    "ddl_gym.baselines.sum_of_ratios": "ddl_gym.baselines.smd.sum_of_ratios",
    "ddl_gym.baselines.mkp": "ddl_gym.baselines.smd.mkp",
    "ddl_gym.baselines.esw": "ddl_gym.baselines.smd.esw",
    "ddl_gym.baselines.optimus": "ddl_gym.baselines.smd.optimus",
    "ddl_gym.baselines.ps_interval": "ddl_gym.baselines.smd.interval",
    "ddl_gym.baselines.interval_opt": "ddl_gym.baselines.smd.interval_optimum",
    "ddl_gym.baselines.a_online_mincost": "ddl_gym.baselines.a_online.mincost",
    "ddl_gym.baselines.a_online_opt": "ddl_gym.baselines.a_online.optimum",
    "ddl_gym.baselines.aonline_common": "ddl_gym.baselines.a_online.common",
    "ddl_gym.baselines.fifo_mr": "ddl_gym.baselines.a_online.fifo_mr",
    "ddl_gym.baselines.drf": "ddl_gym.baselines.a_online.drf",
    "ddl_gym.baselines.antman": "ddl_gym.baselines.a_online.antman",
    "ddl_gym.baselines.tiresias": "ddl_gym.baselines.a_online.tiresias",
    "ddl_gym.baselines.jain_greedy": "ddl_gym.baselines.a_online.jain_greedy",
    "ddl_gym.baselines.attained": "ddl_gym.baselines.classic.attained",
}


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, new: str) -> None:
        self.new = new

    def create_module(self, spec: ModuleSpec) -> ModuleType:
        warnings.warn(f"{spec.name} is deprecated and will be removed in the next release; import {self.new}",
                      DeprecationWarning, stacklevel=2)
        return importlib.import_module(self.new)

    def exec_module(self, module: ModuleType) -> None:
        """The new module is already executed; the import system then binds the old name to it."""


class _MovedFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> ModuleSpec | None:
        new = MOVED_MODULES.get(fullname)
        if new is None:
            return None
        return ModuleSpec(fullname, _AliasLoader(new))


def install() -> None:
    """Put the finder on ``sys.meta_path`` once (the packages whose modules moved call it)."""
    if not any(isinstance(finder, _MovedFinder) for finder in sys.meta_path):
        sys.meta_path.append(_MovedFinder())
