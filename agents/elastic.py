"""MaskablePPO on ``DDLClusterElastic-v0`` (A-Online's elastic jobs) and its harness policy.

``ddl-gym train`` drives ``DDLCluster-v0`` (its metadata and checks are that env's window /
placements / queue order), so this module is the small trainer for the elastic env::

    python -m ddl_gym.agents.elastic --scenario aonline-ps --timesteps 30000 --out runs/elastic

writes ``agent.zip`` + ``agent.json`` (scenario, env kwargs, observation layout, timesteps, seed,
wall time). Training episodes use seeds ``seed + 10_000·k`` onwards; evaluation in the harness uses
the usual seeds 0.., so they never overlap.

:class:`ElasticAgentPolicy` is a *self-driving* harness policy (``run_episode``): it builds the
elastic env on exactly the harness's ``(cluster, workload)`` and acts greedily with the mask.
The registry name ``aonline-ppo`` loads the shipped agent (``leaderboard/aonline-ps-small/elastic-agent/``; not under ``agents/``, which
``ddl-gym list`` offers as ``NAME:PATH`` specs of DDLCluster-v0 agents),
trained on ``aonline-ps-small``; its observation does not depend on the server count, so it also
runs on ``aonline-ps``.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

import ddl_gym
from ddl_gym.scenarios import Scenario, get_scenario
from ddl_gym.sim.model import ConfigError

SHIPPED = Path(__file__).resolve().parents[1] / "leaderboard" / "aonline-ps-small" / "elastic-agent" / "maskable-ppo-elastic.zip"
ENV_KWARGS: dict[str, Any] = {"window": 8, "queue_order": "wspt"}


@dataclass(frozen=True)
class _FixedEpisode(Scenario):
    """A scenario that always yields one given (cluster, workload): the harness's episode."""

    fixed: tuple = ()

    def sample(self, rng: np.random.Generator):
        return self.fixed

    def sample_cluster(self, rng: np.random.Generator):
        return self.fixed[0]


class ElasticAgentPolicy:
    """A trained MaskablePPO agent on ``DDLClusterElastic-v0`` as a harness policy."""

    capabilities: frozenset = frozenset()

    def __init__(self, path: str | Path = SHIPPED, name: str = "aonline-ppo") -> None:
        path = Path(path)
        if not path.exists():
            raise ConfigError(f"elastic agent not found: {path}; train one with `python -m ddl_gym.agents.elastic`")
        from sb3_contrib import MaskablePPO

        self.path = path
        self.meta = json.loads(path.with_suffix(".json").read_text())
        self.model = MaskablePPO.load(str(path), device="cpu")
        self.name = name

    def run_episode(self, scenario: Scenario, cluster: Any, workload: Any, rng: np.random.Generator):
        from ddl_gym.envs.elastic_env import DDLClusterElasticEnv

        episode = _FixedEpisode(name=scenario.name, cluster=cluster, workload=lambda *_: workload,
                                model=scenario.model, fixed=(cluster, workload))
        env = DDLClusterElasticEnv(episode, **self.meta["env_kwargs"])
        obs, info = env.reset(seed=0)
        while True:
            action, _ = self.model.predict(obs, action_masks=info["action_mask"].astype(bool), deterministic=True)
            obs, _, terminated, truncated, info = env.step(int(action))
            if terminated or truncated:
                break
        result = env.result()
        result.policy = self.name
        return result


def make_elastic_agent(path: str | None = None) -> ElasticAgentPolicy:
    return ElasticAgentPolicy(path or SHIPPED)


def train(scenario: str = "aonline-ps", timesteps: int = 30_000, out: str | Path = "runs/elastic", seed: int = 0,
          n_steps: int = 512, net_arch: Sequence[int] = (64, 64)) -> Path:
    """Train MaskablePPO on the elastic env; returns the path of ``agent.zip``."""
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.monitor import Monitor
    from stable_baselines3.common.vec_env import DummyVecEnv

    from ddl_gym.envs.elastic_env import DDLClusterElasticEnv

    get_scenario(scenario)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)

    def make() -> Any:
        return Monitor(DDLClusterElasticEnv(scenario, **ENV_KWARGS))

    venv = DummyVecEnv([make])
    venv.seed(seed + 10_000)  # training seeds never meet the evaluation seeds 0..
    model = MaskablePPO("MlpPolicy", venv, n_steps=n_steps, batch_size=128, n_epochs=5, gamma=1.0, gae_lambda=0.95,
                        learning_rate=3e-4, ent_coef=0.01, policy_kwargs={"net_arch": list(net_arch)}, seed=seed,
                        device="cpu", verbose=0)
    t0 = time.perf_counter()
    model.learn(total_timesteps=timesteps)
    wall = time.perf_counter() - t0
    path = out / "agent.zip"
    model.save(str(path))
    env = DDLClusterElasticEnv(scenario, **ENV_KWARGS)
    meta = {"algo": "maskable-ppo", "env_id": "ddl_gym:DDLClusterElastic-v0", "scenario": scenario,
            "env_kwargs": ENV_KWARGS, "observation_layout": {k: list(v) if isinstance(v, tuple) else v
                                                             for k, v in env.observation_layout.items()},
            "observation_shape": list(env.observation_space.shape), "action_n": int(env.action_space.n),
            "timesteps": timesteps, "seed": seed, "n_steps": n_steps, "net_arch": list(net_arch),
            "wall_s": round(wall, 1), "ddl_gym_version": ddl_gym.__version__,
            "training_seeds": f"{seed + 10_000} onwards (one env, episodes continue its generator)"}
    path.with_suffix(".json").write_text(json.dumps(meta, indent=2) + "\n")
    return path


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ddl_gym.agents.elastic", description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenario", default="aonline-ps")
    parser.add_argument("--timesteps", type=int, default=30_000)
    parser.add_argument("--out", default="runs/elastic")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    path = train(args.scenario, args.timesteps, args.out, args.seed)
    print(f"wrote {path} and {path.with_suffix('.json')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
