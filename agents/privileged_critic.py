"""An input-dependent baseline for PPO: a critic that also sees the episode's future arrivals (training only).

Why. In a ``DDLCluster`` episode much of the return's variance comes from the input, the arrivals
still to come, which no observation shows. A value function of the observation alone cannot tell a
quiet future from a burst, so every advantage carries that noise. Mao et al. ("Variance reduction for
reinforcement learning in input-driven environments", ICLR 2019; used by Decima) show that a
baseline may depend on the input sequence as well as the state: the policy gradient stays unbiased
because the baseline does not depend on the action. ``train_v1 --critic-sees-future`` applies it:

* :class:`FutureInputFeatures` (a wrapper of the *training* envs) appends a summary of the episode's
  future arrivals, :data:`FUTURE_FEATURES`, to the observation;
* :class:`PrivilegedCriticPolicy` feeds the actor only the first ``actor_features`` columns (the
  env's own observation) and the critic every column. The actor's output is a function of the
  observation alone, so the policy a cluster would run never reads the future.
* the agent is saved (``train_v1``, with :func:`actor_state`) as an ordinary ``MlpPolicy`` on the env's
  observation: the actor's weights unchanged, and a value head that is the critic evaluated at the
  future's running mean (its future columns normalise to 0, so their weights drop out). The shipped agent is then an
  ordinary agent: the harness, ``--init`` and the search load it as any other.

| feature | meaning / normalisation |
|---|---|
| arrive_5m, _15m, _1h, _4h, _all | jobs arriving in (now, now + h] (``_all``: all later) / jobs of the episode |
| work_5m, _15m, _1h, _4h, _all | log1p(their GPU-seconds Σ G_j·p_j / GPUs of the cluster) / log1p(1e6 s) |

``p_j`` is the minimum run time of :func:`ddl_gym.sim.lower_bound.minimum_runtimes`.
"""

from __future__ import annotations

import math
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from gymnasium import spaces
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.torch_layers import MlpExtractor
from torch import nn

_HORIZONS_S = (300.0, 900.0, 3600.0, 14400.0, math.inf)
_NAMES = ("5m", "15m", "1h", "4h", "all")
FUTURE_FEATURES = tuple(f"arrive_{n}" for n in _NAMES) + tuple(f"work_{n}" for n in _NAMES)
_LOG_MAX = math.log1p(1e6)


class FutureInputFeatures(gym.Wrapper):
    """Appends :data:`FUTURE_FEATURES` (the episode's arrivals after now) to a DDLCluster env's observation.

    For training envs only: an agent must never act on it (:class:`PrivilegedCriticPolicy` hides it
    from the actor). Rewards, masks, ``info`` and episode end are the wrapped env's.
    """

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        base = env.observation_space
        n = base.shape[0] + len(FUTURE_FEATURES)
        self.observation_space = spaces.Box(0.0, 1.0, shape=(n,), dtype=np.float32)
        self._arrival = np.zeros(0)
        self._work = np.zeros(0)  # cumulative GPU-seconds / GPUs in arrival order
        self._jobs = 1

    def reset(self, **kwargs: Any) -> tuple[np.ndarray, dict[str, Any]]:
        from ddl_gym.sim.lower_bound import minimum_runtimes

        obs, info = self.env.reset(**kwargs)
        sim = self.env.unwrapped.sim
        wl = sim.workload
        order = np.argsort(wl.arrival, kind="stable")
        p = minimum_runtimes(sim.cluster, wl, sim.model)
        self._arrival = np.asarray(wl.arrival, dtype=np.float64)[order]
        self._work = np.cumsum((wl.gpus.astype(np.float64) * p)[order]) / float(sim.cluster.num_gpus)
        self._jobs = max(1, wl.num_jobs)
        return self._augment(obs), info

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        return self._augment(obs), reward, terminated, truncated, info

    def future(self) -> np.ndarray:
        """The :data:`FUTURE_FEATURES` now."""
        now = float(self.env.unwrapped.sim.now)
        arrived = int(np.searchsorted(self._arrival, now, side="right"))
        done_work = self._work[arrived - 1] if arrived else 0.0
        counts, works = [], []
        for h in _HORIZONS_S:
            last = len(self._arrival) if math.isinf(h) else int(np.searchsorted(self._arrival, now + h, side="right"))
            counts.append((last - arrived) / self._jobs)
            work = (self._work[last - 1] if last else 0.0) - done_work
            works.append(min(1.0, math.log1p(max(0.0, work)) / _LOG_MAX))
        return np.asarray(counts + works, dtype=np.float32)

    def _augment(self, obs: np.ndarray) -> np.ndarray:
        return np.concatenate([np.asarray(obs, dtype=np.float32), self.future()])


class SplitMlpExtractor(nn.Module):
    """SB3's MlpExtractor with a policy net on the first ``actor_features`` columns and a value net on all."""

    def __init__(self, feature_dim: int, actor_features: int, net_arch: Any, activation_fn: Any, device: Any) -> None:
        super().__init__()
        actor = MlpExtractor(actor_features, net_arch, activation_fn, device)
        critic = MlpExtractor(feature_dim, net_arch, activation_fn, device)
        self.policy_net, self.value_net = actor.policy_net, critic.value_net
        self.latent_dim_pi, self.latent_dim_vf = actor.latent_dim_pi, critic.latent_dim_vf
        self.actor_features = actor_features

    def forward(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.forward_actor(features), self.forward_critic(features)

    def forward_actor(self, features: torch.Tensor) -> torch.Tensor:
        return self.policy_net(features[..., :self.actor_features])

    def forward_critic(self, features: torch.Tensor) -> torch.Tensor:
        return self.value_net(features)


class PrivilegedCriticPolicy(MaskableActorCriticPolicy):
    """MaskablePPO's MLP policy whose actor sees only the first ``actor_features`` observation columns."""

    def __init__(self, *args: Any, actor_features: int, **kwargs: Any) -> None:
        self.actor_features = int(actor_features)
        super().__init__(*args, **kwargs)

    def _build_mlp_extractor(self) -> None:
        self.mlp_extractor = SplitMlpExtractor(self.features_dim, self.actor_features, self.net_arch,
                                               self.activation_fn, self.device)

    def _get_constructor_parameters(self) -> dict[str, Any]:
        return dict(super()._get_constructor_parameters(), actor_features=self.actor_features)


def widen_critic_state(state: dict[str, Any], extra: int) -> dict[str, Any]:
    """An ordinary policy's state dict for :class:`PrivilegedCriticPolicy`: the critic's first layer gets
    ``extra`` zero columns, so the widened critic computes the old value until training moves them."""
    key = "mlp_extractor.value_net.0.weight"
    weight = state[key]
    return dict(state, **{key: torch.cat([weight, torch.zeros(weight.shape[0], extra, dtype=weight.dtype)], 1)})


def actor_state(state: dict[str, Any], extra: int) -> dict[str, Any]:
    """The inverse of :func:`widen_critic_state`: the critic's last ``extra`` (future) input columns
    dropped. With observations normalised, a dropped column contributes its weight times 0 at the
    future's running mean, so the value head is the critic evaluated there."""
    key = "mlp_extractor.value_net.0.weight"
    weight = state[key]
    return dict(state, **{key: weight[:, :weight.shape[1] - extra].clone()})


__all__ = ["FUTURE_FEATURES", "FutureInputFeatures", "PrivilegedCriticPolicy", "actor_state", "widen_critic_state"]
