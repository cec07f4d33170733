"""Trained agents as harness policies: ``load_policy("maskable-ppo:PATH")`` / ``load_policy("ppo:PATH")``.

``PATH`` is an ``agent.zip`` written by ``ddl-gym train`` (or the folder holding it). Next to it
lie ``agent.json`` (metadata: scenario, ddl_gym version, observation layout, action count, window,
placements, queue order, env kwargs) and ``vecnormalize.pkl`` (observation statistics). The
returned object follows the env-driven policy protocol of the harness::

    policy.name                      # "maskable-ppo:<folder>/agent"
    policy.env_kwargs                # DDLClusterEnv kwargs the agent was trained with
    policy.check_env(env)            # ConfigError if the env's layout differs
    policy.reset(seed=None)
    policy.act(obs, action_mask, info) -> int

``act`` normalises ``obs`` with the saved VecNormalize statistics and calls
``model.predict(obs, action_masks=mask, deterministic=True)``. Plain PPO never sees the mask, so
when its greedy action is invalid it is replaced by the **first valid action** of the mask
(``np.flatnonzero(mask)[0]`` — usually 0 = advance); ``policy.invalid_replacements`` counts how
often that happened (the harness reports it as ``invalid_actions`` in ``summary.csv``).

**Security.** ``agent.zip`` (PyTorch state read by stable-baselines3) and ``vecnormalize.pkl`` (a
Python pickle) can run arbitrary code when loaded. Load only agents from sources you trust, as
you would run only scripts you trust.

Files of the wrong kind (a CSV renamed ``.zip``, a zip that is no SB3 model, a broken or incomplete
``agent.json``, a truncated ``vecnormalize.pkl``) raise :class:`~ddl_gym.sim.model.ConfigError`
naming the file, never a library traceback.
"""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any

import numpy as np

import ddl_gym
from ddl_gym.sim.model import ConfigError

KINDS = ("maskable-ppo", "ppo")


#: Keys ``agent.json`` must hold (written by ``ddl-gym train``).
METADATA_KEYS = ("window", "placements", "queue_order", "observation_layout", "observation_shape", "action_n")


def _resolve(path: str | Path) -> Path:
    if not str(path).strip():
        raise ConfigError("agent spec has no path: give KIND:PATH, e.g. maskable-ppo:runs/ppo/agent.zip")
    path = Path(str(path).strip())
    if path.is_dir():
        path = path / "agent.zip"
    if path.suffix != ".zip":
        path = path.with_suffix(".zip")
    if not path.exists():
        raise ConfigError(f"agent file not found: {path}")
    return path


def read_metadata(path: str | Path) -> dict[str, Any]:
    """The JSON sidecar of an agent zip (``agent.zip`` -> ``agent.json``)."""
    zip_path = _resolve(path)
    sidecar = zip_path.with_suffix(".json")
    if not sidecar.exists():
        raise ConfigError(f"agent {zip_path} has no metadata sidecar {sidecar.name}; re-save it with ddl-gym train")
    try:
        meta = json.loads(sidecar.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ConfigError(f"{sidecar}: not a valid agent metadata file ({type(exc).__name__}: "
                          f"{str(exc).splitlines()[0] if str(exc) else ''}); re-save the agent with ddl-gym train") from None
    if not isinstance(meta, dict):
        raise ConfigError(f"{sidecar}: agent metadata must be a JSON object, got {type(meta).__name__}")
    missing = [k for k in METADATA_KEYS if k not in meta]
    if missing:
        raise ConfigError(f"{sidecar}: agent metadata lacks {', '.join(missing)}; re-save the agent with ddl-gym train")
    return meta



def trained_observation(meta: dict[str, Any]) -> str:
    """The env observation layout an agent was trained on (``"legacy"`` for agents saved before the option)."""
    layout = meta.get("observation_layout") or {}
    kind = layout.get("observation") or (meta.get("env_kwargs") or {}).get("observation") or "legacy"
    return str(kind)


def observation_kwargs(meta: dict[str, Any]) -> dict[str, Any]:
    """The ``DDLClusterEnv`` arguments that rebuild an agent's observation layout."""
    kind = trained_observation(meta)
    if kind == "v1":  # DDLCluster-v1 (ddl_gym.envs.cluster_env_v1): the harness builds that env for env_version 1
        layout = meta["observation_layout"]
        preemption = ({"preemption": True, "quantum_s": float(layout["quantum_s"]),
                       "preempt_overhead_s": float(layout["preempt_overhead_s"])} if layout.get("preemption") else {})
        return {"env_version": 1, "max_window": int(layout["slots"]), "clairvoyant": bool(layout["clairvoyant"]),
                "running_slots": int(layout["running_slots"]), **preemption}
    if kind == "portable":
        return {"observation": kind, "max_window": int(meta["observation_layout"]["slots"])}
    return {"observation": kind}


class AgentPolicy:
    """A trained (Maskable)PPO agent behind the harness's ``reset`` / ``act`` protocol."""

    engine = "env"

    def __init__(self, kind: str, path: Path, model: Any, meta: dict[str, Any], obs_stats: Any | None) -> None:
        self.kind = kind
        self.path = path
        self.model = model
        self.metadata = meta
        self.obs_stats = obs_stats
        self.name = f"{kind}:{path.parent.name}/{path.stem}"
        self.scenario = meta.get("scenario")
        # Settings that change what the agent sees or can do. Reward settings never change its
        # actions, and the training-time ``max_decisions`` of plain PPO is left out on purpose:
        # ``act`` never emits an invalid action, so evaluation episodes always run to the end.
        self.env_kwargs: dict[str, Any] = {
            "window": int(meta["window"]),
            "placements": tuple(meta["placements"]),
            "queue_order": meta["queue_order"],
            **observation_kwargs(meta),
        }
        self.invalid_replacements = 0

    # -------------------------------------------------------------- compatibility
    def check_env(self, env: Any) -> None:
        """Raise :class:`ConfigError` naming the first difference between ``env`` and the training env.

        Agents on the portable observation run on any cluster size and any ``window`` up to their
        ``max_window`` (slots); legacy agents need the training layout exactly (server count included).
        """
        base = getattr(env, "unwrapped", env)
        meta = self.metadata
        trained_obs = trained_observation(meta)
        env_obs = getattr(base, "observation", "legacy")
        checks: list[tuple[str, Any, Any]] = [("observation", trained_obs, env_obs)]
        if trained_obs == "portable":
            checks.append(("max_window", int(meta["observation_layout"]["slots"]), int(getattr(base, "max_window", -1))))
        else:
            checks.append(("window", int(meta["window"]), int(getattr(base, "window", -1))))
        checks += [
            ("placements", _short_placements(meta["placements"]), _short_placements(getattr(base, "placement_names", ()))),
            ("queue_order", meta["queue_order"], getattr(base, "queue_order", None)),
            ("action_space.n", int(meta["action_n"]), int(env.action_space.n)),
            ("observation shape", list(meta["observation_shape"]), list(env.observation_space.shape)),
        ]
        for what, trained, given in checks:
            if trained != given:
                where = (f"scenario {meta.get('scenario')!r}, servers {meta['observation_layout'].get('servers')}"
                         if trained_obs == "legacy" else f"scenario {meta.get('scenario')!r}")
                raise ConfigError(f"agent {self.path} was trained with {what}={trained!r} but the env has "
                                  f"{what}={given!r} ({where}); build the env with policy.env_kwargs")
        layout = {k: (list(v) if isinstance(v, tuple) else v) for k, v in base.observation_layout.items()}
        trained = dict(meta["observation_layout"])
        if "placements" in layout and "placements" in trained:  # "ca" and "contention_aware" are one rule
            layout["placements"] = _short_placements(layout["placements"])
            trained["placements"] = _short_placements(trained["placements"])
        if layout != trained:
            diff = sorted(k for k in set(layout) | set(trained) if layout.get(k) != trained.get(k))
            raise ConfigError(f"agent {self.path} observation layout differs from the env's in {', '.join(diff)}")

    # -------------------------------------------------------------- policy protocol
    def reset(self, seed: int | None = None) -> None:
        self.invalid_replacements = 0

    def normalise(self, obs: np.ndarray) -> np.ndarray:
        obs = np.asarray(obs, dtype=np.float32)
        expected = tuple(self.metadata["observation_shape"])
        if obs.shape != expected:
            raise ConfigError(f"agent {self.path} expects observations of shape {expected}, got {obs.shape}; "
                              "build the env with policy.env_kwargs on the agent's scenario")
        if self.obs_stats is not None and getattr(self.obs_stats, "norm_obs", False):
            obs = self.obs_stats.normalize_obs(obs).astype(np.float32)
        return obs

    def act(self, obs: np.ndarray, action_mask: np.ndarray, info: dict[str, Any] | None = None) -> int:
        mask = np.asarray(action_mask, dtype=bool)
        x = self.normalise(obs)
        if self.kind == "maskable-ppo":
            action, _ = self.model.predict(x, action_masks=mask, deterministic=True)
            return int(action)
        action, _ = self.model.predict(x, deterministic=True)
        action = int(action)
        if not (0 <= action < mask.size and mask[action]):
            self.invalid_replacements += 1
            action = int(np.flatnonzero(mask)[0])
        return action


def _check_model_archive(path: Path) -> None:
    """A stable-baselines3 save is a zip holding a ``data`` entry (JSON) and the PyTorch state."""
    import zipfile

    try:
        with zipfile.ZipFile(path) as zf:
            names = set(zf.namelist())
    except (OSError, zipfile.BadZipFile):
        raise ConfigError(f"{path}: not a stable-baselines3 model (not a zip archive); give the agent.zip "
                          "written by ddl-gym train") from None
    if "data" not in names:
        raise ConfigError(f"{path}: not a stable-baselines3 model (the zip has no 'data' entry); give the "
                          "agent.zip written by ddl-gym train")


def _short_placements(names: Any) -> list[str]:
    """Placement names in the registry's short form (``contention_aware`` -> ``ca``)."""
    from ddl_gym.policies import PLACEMENT_SHORT_NAMES

    return [PLACEMENT_SHORT_NAMES.get(str(n).lower(), str(n).lower()) for n in names]


def load_policy(spec: str, env: Any | None = None) -> AgentPolicy:
    """``"maskable-ppo:PATH"`` or ``"ppo:PATH"`` -> :class:`AgentPolicy`.

    Args:
        spec: algorithm and agent path (the zip or its folder).
        env: optional env to check against (:meth:`AgentPolicy.check_env`).

    Raises:
        ConfigError: bad spec, missing files, or an incompatible env.
    """
    kind, sep, path_text = spec.partition(":")
    kind = kind.strip().lower()
    if not sep or kind not in KINDS:
        raise ConfigError(f"agent spec must be 'maskable-ppo:PATH' or 'ppo:PATH', got {spec!r}")
    if not path_text.strip():
        raise ConfigError(f"agent spec {spec!r} has no path: give {kind}:PATH, e.g. {kind}:runs/ppo/agent.zip")
    path = _resolve(path_text)
    _check_model_archive(path)  # before the sidecar and before importing torch: a wrong file fails at once
    meta = read_metadata(path)
    if meta.get("algo") and meta["algo"] != kind:
        raise ConfigError(f"agent {path} was trained with {meta['algo']!r}, not {kind!r}; use '{meta['algo']}:{path_text}'")
    saved = str(meta.get("ddl_gym_version") or "")
    if saved and saved.split(".")[:2] != ddl_gym.__version__.split(".")[:2]:
        raise ConfigError(f"agent {path} was saved by ddl_gym {saved}, this is {ddl_gym.__version__}")
    if kind == "maskable-ppo":
        from sb3_contrib import MaskablePPO as algo_cls
    else:
        from stable_baselines3 import PPO as algo_cls
    try:
        model = algo_cls.load(path, device="cpu")
    except ImportError:
        raise
    except Exception as exc:  # SB3 raises KeyError, ValueError, RuntimeError, pickle errors ... on foreign zips
        raise ConfigError(f"{path}: cannot load it as a {kind} model ({type(exc).__name__}: "
                          f"{str(exc).splitlines()[0] if str(exc) else 'no detail'})") from None
    obs_stats = None
    if meta.get("vecnormalize"):
        stats_path = path.with_name(str(meta["vecnormalize"]))
        if not stats_path.exists():
            raise ConfigError(f"agent {path} needs its observation statistics {stats_path.name}, which is missing")
        try:
            with open(stats_path, "rb") as fh:
                obs_stats = pickle.load(fh)  # a VecNormalize without its venv: only normalize_obs is used
        except Exception as exc:  # truncated or foreign pickle
            raise ConfigError(f"{stats_path}: cannot read the agent's observation statistics "
                              f"({type(exc).__name__})") from None
        if not callable(getattr(obs_stats, "normalize_obs", None)):
            raise ConfigError(f"{stats_path}: not VecNormalize statistics")
    try:
        policy = AgentPolicy(kind, path, model, meta, obs_stats)
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError(f"{path.with_suffix('.json')}: agent metadata is malformed ({type(exc).__name__}: {exc})") from None
    if env is not None:
        policy.check_env(env)
    return policy


def run_agent_episode(policy: AgentPolicy, scenario: str, seed: int) -> Any:
    """Drive one episode (``env.reset(seed)`` = ``scenario.episode(seed)``) with ``policy``; returns the SimResult.

    A stand-alone evaluation loop for scripts and tests; the harness has its own.
    """

    from ddl_gym.envs.agent_env import make_agent_env

    env = make_agent_env(scenario, policy.env_kwargs)
    policy.check_env(env)
    policy.reset(seed)
    obs, info = env.reset(seed=int(seed))
    done = False
    while not done:
        action = policy.act(obs, info["action_mask"], info)
        obs, _, terminated, truncated, info = env.step(action)
        done = terminated or truncated
    result = env.unwrapped.result()
    env.close()
    return result


# ---------------------------------------------------------------------------- held-out comparison
def _mean_ci(values: Any) -> tuple[float, float]:
    """Mean and half-width of the 95% t-interval over seeds."""
    x = np.asarray(values, dtype=float)
    if x.size < 2:
        return float(x.mean()), float("nan")
    try:
        from scipy.stats import t

        q = float(t.ppf(0.975, x.size - 1))
    except ImportError:  # pragma: no cover - scipy is a dev dependency
        q = 1.96
    return float(x.mean()), q * float(x.std(ddof=1)) / float(np.sqrt(x.size))


def evaluate_on_seeds(names: list[str], scenario: str, seeds: list[int]) -> dict[str, list[dict[str, float]]]:
    """Per-seed summaries for agents (``maskable-ppo:PATH``) and reference policies (registry names).

    Reference policies run natively (``run_policy`` on ``scenario.episode(seed)``, rng seeded with
    the episode seed); agents run through the env reset with the same seed, i.e. the same episode.
    """
    from ddl_gym.policies import make_policy
    from ddl_gym.scenarios import get_scenario
    from ddl_gym.sim.engine import Simulator, run_policy

    scen = get_scenario(scenario)
    out: dict[str, list[dict[str, float]]] = {}
    for name in names:
        rows = []
        agent = load_policy(name) if name.split(":")[0] in KINDS else None
        for seed in seeds:
            if agent is not None:
                result = run_agent_episode(agent, scenario, seed)
            else:
                cluster, workload = scen.episode(seed)
                result = run_policy(Simulator(cluster, workload, scen.model), make_policy(name),
                                    np.random.default_rng(seed))
            rows.append(result.summary())
        out[name] = rows
    return out


def main(argv: list[str] | None = None) -> int:
    """``python -m ddl_gym.agents.policy --scenario default --seeds 1000000:1000010 NAME ...`` -> CSV on stdout."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m ddl_gym.agents.policy")
    parser.add_argument("names", nargs="+", help="agents (maskable-ppo:PATH) and reference policies")
    parser.add_argument("--scenario", default="default")
    parser.add_argument("--seeds", default="1000000:1000010", help="start:stop (stop excluded)")
    parser.add_argument("--metrics", default="avg_jct_s,makespan_s,p95_jct_s")
    args = parser.parse_args(argv)
    start, stop = (int(v) for v in args.seeds.split(":"))
    seeds = list(range(start, stop))
    metrics = args.metrics.split(",")
    results = evaluate_on_seeds(args.names, args.scenario, seeds)
    print("policy,scenario,seeds," + ",".join(f"{m}_mean,{m}_ci95" for m in metrics))
    for name, rows in results.items():
        cells = []
        for m in metrics:
            mean, half = _mean_ci([r[m] for r in rows])
            cells += [f"{mean:.1f}", f"{half:.1f}"]
        print(f"{name},{args.scenario},{start}-{stop - 1}," + ",".join(cells))
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
