"""Optional Gymnasium wrappers for RL libraries that want the action mask inside the observation.

:class:`DictObsWithMask` turns the env's flat ``Box`` observation into::

    Dict({"observations": <the env's Box>, "action_mask": Box(0, 1, (n_actions,), float32)})

the layout RLlib's action-masking RLModule reads (``ActionMaskingTorchRLModule`` in
``ray/rllib/examples/rl_modules/classes/action_masking_rlm.py``; key names from that example).
The mask is the env's own ``action_masks()`` (the same as ``info["action_mask"]``) after every
``reset`` and ``step``, as ``float32`` 0/1, so a masked policy can only pick valid actions. The
permanent "advance" action keeps at least one entry at 1.

:func:`rllib_env_creator` is the ``env_creator`` to hand to ``ray.tune.registry.register_env``;
it reads the env's keyword arguments from RLlib's ``env_config``. Ray is an optional extra
(``pip install 'ddl-gym[ray]'``); nothing here imports it. The README has the full recipe.

Example (no Ray needed)::

    import gymnasium as gym, ddl_gym
    from ddl_gym.wrappers import DictObsWithMask

    env = DictObsWithMask(gym.make("ddl_gym:DDLCluster-Small-v0"))
    obs, info = env.reset(seed=0)
    obs["action_mask"]          # float32 0/1, one entry per action
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np
from gymnasium import spaces

OBSERVATIONS_KEY = "observations"
ACTION_MASK_KEY = "action_mask"


def _masks_of(env: gym.Env) -> np.ndarray:
    """The current action mask of ``env`` through any wrappers (``get_wrapper_attr`` walks them)."""
    return np.asarray(env.get_wrapper_attr("action_masks")())


class DictObsWithMask(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Observation ``{"observations": obs, "action_mask": mask}`` for libraries that mask from the observation.

    Args:
        env: a ddl-gym env (``DDLCluster-*`` or ``DDLClusterPlacement-v0``), wrapped or not, with a
            ``Discrete`` action space and an ``action_masks()`` method.
    """

    def __init__(self, env: gym.Env) -> None:
        gym.utils.RecordConstructorArgs.__init__(self)  # lets gym.make / check_env re-create the wrapper
        gym.Wrapper.__init__(self, env)
        if not isinstance(env.action_space, spaces.Discrete):
            raise TypeError(f"DictObsWithMask needs a Discrete action space, got {env.action_space}")
        n = int(env.action_space.n)
        self.observation_space = spaces.Dict({
            OBSERVATIONS_KEY: env.observation_space,
            ACTION_MASK_KEY: spaces.Box(0.0, 1.0, shape=(n,), dtype=np.float32),
        })

    def _wrap(self, obs: Any, info: Mapping[str, Any]) -> dict[str, np.ndarray]:
        mask = info.get("action_mask") if isinstance(info, Mapping) else None
        if mask is None:
            mask = _masks_of(self.env)
        return {OBSERVATIONS_KEY: obs, ACTION_MASK_KEY: np.asarray(mask, dtype=np.float32)}

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        obs, info = self.env.reset(seed=seed, options=options)
        return self._wrap(obs, info), info

    def step(self, action: Any) -> tuple[dict[str, np.ndarray], SupportsFloat, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        return self._wrap(obs, info), reward, terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        """The mask as the env gives it (``np.int8``), for MaskablePPO users of the same wrapper."""
        return _masks_of(self.env)


def rllib_env_creator(env_config: Mapping[str, Any] | None = None) -> gym.Env:
    """``register_env("ddl-gym-masked", rllib_env_creator)``: a masked-observation ddl-gym env for RLlib.

    ``env_config`` (RLlib's ``EnvContext``, a dict) holds ``DDLClusterEnv`` keyword arguments, plus
    an optional ``"env_id"`` (default ``"DDLCluster-v0"``) naming a registered preset.
    """
    import ddl_gym  # noqa: F401  (registers the ids inside every RLlib worker process)

    kwargs = dict(env_config or {})
    env_id = kwargs.pop("env_id", "DDLCluster-v0")
    return DictObsWithMask(gym.make(f"ddl_gym:{env_id}", **kwargs))


__all__ = ["ACTION_MASK_KEY", "OBSERVATIONS_KEY", "DictObsWithMask", "rllib_env_creator"]
