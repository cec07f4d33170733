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

from ddl_gym import _moved
from ddl_gym.baselines.registry import POLICY_DESCRIPTIONS, list_policies, make_policy

_moved.install()  # the flat module paths of 0.1 (ddl_gym.baselines.sjf_bco_plan, ...) still import, with a warning

__all__ = ["POLICY_DESCRIPTIONS", "list_policies", "make_policy"]
