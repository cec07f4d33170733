"""Reference policies (installed as ``ddl_gym.baselines``): every paper algorithm and classic baseline.

Policies are created by name with :func:`make_policy`; :func:`list_policies` lists them.

One package per paper family (each ``__init__`` docstring is its map: sections, equations,
algorithm lines, readings and their option names):

* :mod:`~ddl_gym.baselines.classic` — FIFO / SJF / SRSF × placement rule;
* :mod:`~ddl_gym.baselines.sjf_bco` — SJF-BCO (Yu et al. MobiHoc'22): planner and executor;
* :mod:`~ddl_gym.baselines.ada_srsf` — Ada-SRSF (Wang et al. 2020), task-level engine;
* :mod:`~ddl_gym.baselines.a_srpt` — A-SRPT (Luo et al.): policy, server selection, prediction,
  SPJF/SPWF/WCS;
* :mod:`~ddl_gym.baselines.smd` — SMD (Yu et al. INFOCOM'21): SMD, sum-of-ratios, MKP, ESW,
  Optimus, the interval model and its optimum;
* :mod:`~ddl_gym.baselines.a_online` — A-Online (Zhou et al.), its routines and optimum, and that
  paper's baselines FIFO-MR, DRF, AntMan, Tiresias, Jain greedy.
"""

from __future__ import annotations

from typing import Any

from ddl_gym._moved import install as _install_moved_paths

_install_moved_paths()  # the flat module paths of 0.1 (ddl_gym.baselines.sjf_bco_plan, ...) still import, with a warning

_REGISTRY_NAMES = ("POLICY_DESCRIPTIONS", "list_policies", "make_policy")


def __getattr__(name: str) -> Any:
    """``make_policy``, ``list_policies``, ``POLICY_DESCRIPTIONS``: the registry of names (:mod:`ddl_gym.policies`),
    re-exported on first use (ddl_gym.placement imports the A-SRPT rules from this package while the
    registry itself is being imported)."""
    if name in _REGISTRY_NAMES:
        import ddl_gym.policies as registry

        return getattr(registry, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = ["POLICY_DESCRIPTIONS", "list_policies", "make_policy"]
