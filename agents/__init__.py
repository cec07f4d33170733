"""Learned agents (installed as ``ddl_gym.agents``): training, loading as harness policies, imitation.

* :func:`ddl_gym.agents.train.main` — ``ddl-gym train`` (MaskablePPO / PPO with SB3).
* :func:`load_policy` — ``"maskable-ppo:PATH"`` / ``"ppo:PATH"`` to a harness policy.
* :mod:`ddl_gym.agents.imitation` — expert actions of classic policies and behaviour cloning.

Heavy dependencies (torch, stable-baselines3) are imported lazily so ``import ddl_gym.agents``
stays cheap.
"""

from __future__ import annotations

from typing import Any


def load_policy(spec: str, env: Any | None = None) -> Any:
    """Load a trained agent as a harness policy; see :func:`ddl_gym.agents.policy.load_policy`."""
    from ddl_gym.agents.policy import load_policy as _load

    return _load(spec, env=env)


__all__ = ["load_policy"]
