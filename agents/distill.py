"""Expert iteration: distil a tree search into the agent's network (search labels, behaviour cloning).

Why search and not PPO fine-tuning: on trace windows the average JCT is set by multi-day jobs, so
most episodes' returns do not depend on the decisions and PPO's advantage estimates are mostly
noise. A search only departs from its guide where a forked simulation shows a cheaper episode:
:mod:`ddl_gym.agents.mcts` with guide ``srsf+ca`` and native ``srsf+ca`` rollouts keeps the guide's
trajectory unless it finds a better one (``backup="best"``). Measured gain is small on the default
scenario (``mcts:guide=srsf+ca,sims=8,depth=0``: −0.75 % ± 0.38 % avg JCT against ``srsf+ca`` on
seeds 40000–40009, see ``leaderboard/agents/README.md``); the shipped agent is a plain clone.
This module turns that into a network that decides in microseconds:

1. :func:`collect` runs the search on training episodes and stores, per episode seed, the action
   sequence it chose (a JSON file, resumable: an interrupted collection keeps every finished
   episode). Optionally the episodes are driven by the current agent (``driver``) while the
   search only labels the states it visits (DAgger), so the network also learns to recover from
   its own mistakes.
2. :func:`replay` rebuilds observations and masks by replaying the actions (the env is
   deterministic: same seed, same actions, same states), so stored demonstrations stay valid
   whatever the observation normalisation.
3. :func:`fit` clones the labels into a fresh MaskablePPO network (the architecture of a training
   preset), fits the observation statistics on the demonstrations, and saves an agent
   (``agent.zip`` + ``agent.json`` + ``vecnormalize.pkl``) that ``load_policy`` / the harness run
   like any PPO agent.

::

    python -m ddl_gym.agents.distill collect --out demos.json --scenario transfer-train --seeds 30000:30060
    python -m ddl_gym.agents.distill fit --demos demos.json --out runs/distilled [--preset transfer]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ddl_gym.sim.model import ConfigError

#: The search that labels states: guide srsf+ca, native srsf+ca continuations, 8 simulations.
DEFAULT_SEARCH: dict[str, Any] = {"guide": "srsf+ca", "simulations": 8, "depth": 0}


def _env(scenario: str, env_kwargs: dict[str, Any]) -> Any:
    from ddl_gym.envs.cluster_env import DDLClusterEnv

    return DDLClusterEnv(scenario, **env_kwargs)


def collect(out: str | Path, scenario: str, seeds: Sequence[int], env_kwargs: dict[str, Any], *,
            search: dict[str, Any] | None = None, driver: str | None = None, log: Any = print) -> dict[str, Any]:
    """Label episodes with the search; append them to ``out`` (JSON, written after every episode).

    Args:
        out: the demonstrations file (existing episodes are kept and skipped).
        scenario: training scenario (never an evaluation scenario).
        seeds: episode seeds.
        env_kwargs: :class:`DDLClusterEnv` arguments (recorded in the file; must match on resume).
        search: :class:`~ddl_gym.agents.mcts.MCTSPolicy` arguments (default :data:`DEFAULT_SEARCH`).
        driver: an agent spec (``maskable-ppo:PATH``) whose actions drive the episode (DAgger); the
            search's action is only recorded as the label. ``None``: the search drives.

    Returns:
        The file's content: ``{"scenario", "env_kwargs", "search", "episodes": {seed: {...}}}``.
    """
    from ddl_gym.agents.mcts import MCTSPolicy

    out = Path(out)
    search = dict(DEFAULT_SEARCH if search is None else search)
    data: dict[str, Any] = json.loads(out.read_text()) if out.exists() else {
        "scenario": scenario, "env_kwargs": env_kwargs, "search": search, "episodes": {}}
    if data["scenario"] != scenario or data["env_kwargs"] != env_kwargs:
        raise ConfigError(f"{out}: holds demonstrations of scenario {data['scenario']!r} with env {data['env_kwargs']}, "
                          f"not {scenario!r} with {env_kwargs}; use another file")
    agent = None
    if driver is not None:
        from ddl_gym.agents.policy import load_policy

        agent = load_policy(driver)
    for seed in seeds:
        key = f"{seed}" if driver is None else f"{seed}@{Path(driver.split(':', 1)[1]).parent.name}"
        if key in data["episodes"]:
            continue
        start = time.time()
        env = _env(scenario, env_kwargs)
        mcts = MCTSPolicy(search["guide"], simulations=int(search["simulations"]), depth=search.get("depth"),
                          env_kwargs=env_kwargs)
        obs, info = env.reset(seed=int(seed))
        mcts.reset(seed=int(seed))
        mcts.bind(env)
        if agent is not None:
            agent.reset(seed)
        taken: list[int] = []
        labels: list[int] = []
        done = False
        while not done:
            label = int(mcts.act_env(env))
            action = label if agent is None else int(agent.act(obs, info["action_mask"], info))
            labels.append(label)
            taken.append(action)
            obs, _, terminated, truncated, info = env.step(action)
            done = terminated or truncated
        data["episodes"][key] = {"seed": int(seed), "actions": taken, "labels": labels,
                                 "avg_jct_s": float(info["metrics"]["avg_jct_s"]), "workload": env.sim.workload.name,
                                 "wall_s": round(time.time() - start, 1)}
        tmp = out.with_suffix(".tmp")
        tmp.write_text(json.dumps(data))
        tmp.replace(out)
        log(f"{key}: {env.sim.workload.name} {len(taken)} decisions, avg JCT {info['metrics']['avg_jct_s']:.0f} s, "
            f"{time.time() - start:.0f} s")
    return data


def replay(data: dict[str, Any]) -> dict[str, np.ndarray]:
    """Observations, labels and masks of every stored episode (replayed; the env is deterministic)."""
    obs_list, label_list, mask_list = [], [], []
    for key, episode in sorted(data["episodes"].items()):
        env = _env(data["scenario"], data["env_kwargs"])
        obs, info = env.reset(seed=int(episode["seed"]))
        for action, label in zip(episode["actions"], episode["labels"]):
            mask = np.asarray(info["action_mask"], dtype=bool)
            if not mask[label]:
                raise ConfigError(f"demonstration {key}: label {label} is not a valid action on replay; "
                                  "the env changed since the demonstrations were collected")
            obs_list.append(obs)
            label_list.append(label)
            mask_list.append(mask)
            obs, _, terminated, truncated, info = env.step(action)
        if not (terminated or truncated):
            raise ConfigError(f"demonstration {key}: the replay did not end where the recording did")
    return {"obs": np.asarray(obs_list, dtype=np.float32), "actions": np.asarray(label_list, dtype=np.int64),
            "masks": np.asarray(mask_list, dtype=bool)}


def fit_arrays(obs: np.ndarray, actions: np.ndarray, masks: np.ndarray, scenario: str, env_kwargs: dict[str, Any],
               out: str | Path, *, teacher: str, preset: str = "transfer", epochs: int = 40, batch_size: int = 256,
               learning_rate: float = 1e-3, seed: int = 0, extra_meta: dict[str, Any] | None = None) -> Path:
    """Clone ``(obs, actions, masks)`` (raw observations) into a fresh network; save ``out/agent.zip``.

    The network (sizes, activation) and the observation normalisation come from ``preset``; the
    normalisation statistics are fitted on ``obs``. ``teacher`` is recorded as the agent's
    ``bc_expert``.
    """
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv, VecNormalize

    from ddl_gym.agents.imitation import behaviour_cloning, imitation_accuracy
    from ddl_gym.agents.train import env_metadata, load_preset, make_env_fn, save_agent

    start = time.time()
    cfg = load_preset(preset)
    torch.manual_seed(seed)
    np.random.seed(seed)
    venv = DummyVecEnv([make_env_fn(scenario, env_kwargs)])
    norm = cfg.get("normalize", {})
    venv = VecNormalize(venv, norm_obs=bool(norm.get("obs", True)), norm_reward=bool(norm.get("reward", True)),
                        clip_obs=float(norm.get("clip_obs", 10.0)), gamma=float(cfg["ppo"]["gamma"]))
    venv.obs_rms.update(obs)
    normed = venv.normalize_obs(obs).astype(np.float32)
    ppo = dict(cfg["ppo"])
    net_arch = ppo.pop("net_arch", [128, 128])
    activation = {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU}[ppo.pop("activation", "tanh")]
    model = MaskablePPO("MlpPolicy", venv, seed=seed, device="cpu", verbose=0,
                        policy_kwargs={"net_arch": {"pi": list(net_arch), "vf": list(net_arch)},
                                       "activation_fn": activation}, **ppo)
    before = imitation_accuracy(model, normed, actions, masks)
    history = behaviour_cloning(model, normed, actions, masks, epochs=epochs, batch_size=batch_size,
                                learning_rate=learning_rate, seed=seed)
    out = Path(out)
    meta = env_metadata(scenario, env_kwargs)
    meta.update(algo="maskable-ppo", preset=preset, seed=seed, timesteps=0, wall_s=round(time.time() - start, 1),
                bc_expert=teacher, cloning={"samples": int(len(actions)), "epochs": epochs, "accuracy_before": before,
                                            "accuracy_after": history[-1]["accuracy"] if history else before,
                                            **(extra_meta or {})})
    path = save_agent(model, venv, out / "agent.zip", meta)
    (out / "cloning.json").write_text(json.dumps({"history": history, **meta["cloning"]}, indent=2))
    venv.close()
    return path


def fit(demos: Sequence[str | Path], out: str | Path, *, preset: str = "transfer", epochs: int = 40,
        seed: int = 0, log: Any = print) -> Path:
    """Clone the search labels of the demonstration files ``demos`` (replayed) into a fresh network."""
    start = time.time()
    files = [json.loads(Path(p).read_text()) for p in demos]
    scenario, env_kwargs = files[0]["scenario"], files[0]["env_kwargs"]
    if any(f["scenario"] != scenario or f["env_kwargs"] != env_kwargs for f in files):
        raise ConfigError("demonstration files disagree on scenario or env arguments")
    parts = [replay(f) for f in files]
    obs, actions, masks = (np.concatenate([p[k] for p in parts]) for k in ("obs", "actions", "masks"))
    search = files[0]["search"]
    teacher = f"mcts:guide={search['guide']},sims={search['simulations']},depth={search.get('depth')}"
    info = {"files": [str(p) for p in demos], "episodes": sum(len(f["episodes"]) for f in files),
            "search_wall_s": round(sum(e["wall_s"] for f in files for e in f["episodes"].values()), 1)}
    path = fit_arrays(obs, actions, masks, scenario, env_kwargs, out, teacher=teacher, preset=preset, epochs=epochs,
                      seed=seed, extra_meta=info)
    log(f"distilled {len(actions)} labels of {info['episodes']} episodes into {path} ({time.time() - start:.0f} s)")
    return path


def clone(teacher: str, scenario: str, env_kwargs: dict[str, Any], seeds: Sequence[int], out: str | Path, *,
          preset: str = "transfer", epochs: int = 20, seed: int = 0) -> Path:
    """Behaviour-clone a classic ``order+placement`` policy on ``seeds`` of ``scenario`` (no RL step after)."""
    import gymnasium as gym

    from ddl_gym.agents.imitation import collect_demonstrations

    env = gym.make("ddl_gym:DDLCluster-v0", scenario=scenario, render_mode=None, **env_kwargs)
    demos = collect_demonstrations(env, teacher, seeds, beyond_window="window")
    env.close()
    return fit_arrays(demos["obs"], demos["actions"], demos["masks"], scenario, env_kwargs, out, teacher=teacher,
                      preset=preset, epochs=epochs, seed=seed, extra_meta={"episodes": len(list(seeds))})


def _seeds(text: str) -> list[int]:
    start, _, stop = text.partition(":")
    return list(range(int(start), int(stop))) if stop else [int(s) for s in text.split(",")]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ddl_gym.agents.distill")
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("collect", help="label training episodes with the search (resumable)")
    c.add_argument("--out", required=True)
    c.add_argument("--scenario", default="transfer-train")
    c.add_argument("--seeds", required=True, help="start:stop or a comma list")
    c.add_argument("--window", type=int, default=8)
    c.add_argument("--max-window", type=int, default=16)
    c.add_argument("--sims", type=int, default=DEFAULT_SEARCH["simulations"])
    c.add_argument("--driver", default=None, help="agent spec driving the episodes (DAgger); default: the search")
    f = sub.add_parser("fit", help="clone the labels into a network and save an agent")
    f.add_argument("--demos", required=True, nargs="+")
    f.add_argument("--out", required=True)
    f.add_argument("--preset", default="transfer")
    f.add_argument("--epochs", type=int, default=40)
    f.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    if args.command == "collect":
        kwargs = {"window": args.window, "max_window": args.max_window, "queue_order": "srsf"}
        collect(args.out, args.scenario, _seeds(args.seeds), kwargs, driver=args.driver,
                search=dict(DEFAULT_SEARCH, simulations=args.sims))
    else:
        fit(args.demos, args.out, preset=args.preset, epochs=args.epochs, seed=args.seed)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
