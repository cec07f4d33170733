"""Reference policies (installed as ``ddl_gym.baselines``): every paper algorithm and classic baseline.

Policies are created by name with :func:`make_policy`; :func:`list_policies` lists them.
"""

from ddl_gym.baselines.registry import POLICY_DESCRIPTIONS, list_policies, make_policy

__all__ = ["POLICY_DESCRIPTIONS", "list_policies", "make_policy"]
