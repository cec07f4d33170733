"""Ada-SRSF (Wang, Shi, Wang, Chu 2020): ``ada-srsf`` (= Ada-SRSF + LWF-1), ``srsf<n>+<placement>``.

Runs on the task-level engine :class:`ddl_gym.sim.tasklevel.TaskLevelSimulator` (§III's DAG
model, eq. (5) contention; compute tasks per GPU by SRSF, Alg. 3 lines 23–31, in the engine).
:mod:`~ddl_gym.baselines.ada_srsf.policy` holds a policy = placement rule × communication rule:

* placement: :func:`lwf_placement` (LWF-κ, Alg. 1; ``lwf1``, ``lwf<κ>``), LS, FF, RAND;
* communication admission: :class:`AdaDual` (Alg. 2, the ``b / (2(b+η))`` rule of Theorems 1–2,
  ``comm="ada"``), :class:`SRSFn` (SRSF(n): ``srsf1`` no contention, ``srsf2``/``srsf3``);
* :func:`make_ada_srsf_policy` — the registry factory.

Reading option: ``replicate_probe_defect`` (default False) reproduces the authors' simulator's size
check instead of the paper's rule.
"""

from ddl_gym.baselines.ada_srsf.policy import (  # the former module ddl_gym.baselines.ada_srsf: its public names
    lwf_placement, least_workload_placement, first_fit_placement, random_placement, make_placement,
    adadual_threshold, adadual_accepts, AdaDual, SRSFn, make_comm_rule, AdaSRSFPolicy, make_ada_srsf_policy,
)

__all__ = ['lwf_placement', 'least_workload_placement', 'first_fit_placement', 'random_placement', 'make_placement', 'adadual_threshold', 'adadual_accepts', 'AdaDual', 'SRSFn', 'make_comm_rule', 'AdaSRSFPolicy', 'make_ada_srsf_policy']
