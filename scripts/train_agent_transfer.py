"""Train and install the shipped portable agent ``agent-transfer`` (``leaderboard/agents/``).

Approach (why: see ``leaderboard/agents/README.md``): behaviour cloning of ``srsf+ca`` — the best
reference policy on the default board — on training episodes only:

* ``transfer-train`` seeds 30 000 … (random clusters 4–24 servers, 10–100 Gb/s, loads 0.5–4;
  synthetic, Philly and Alibaba **training-split** windows, :mod:`ddl_gym.agents.transfer`), plus
* ``default`` seeds 20 000 … (the default scenario's training seeds; held-out seeds are 1 000 000+,
  the demo's 1 000+).

No RL step (PPO fine-tuning moved clones away from their teacher in our measurements). The
validation check (seeds 40 000 … of ``transfer-train`` and 40 000 … of ``default``, disjoint from
training and from every evaluation seed) compares the clone with its teacher, paired per seed.
Training cost (wall seconds, demonstrations, epochs) is written to the agent's metadata.

    .venv/bin/python scripts/train_agent_transfer.py [--episodes 300] [--default-episodes 60]
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
TEACHER = "srsf+ca"
ENV_KWARGS = {"window": 8, "max_window": 16, "queue_order": "srsf"}


def demos(scenario: str, seeds: range) -> dict[str, np.ndarray]:
    import gymnasium as gym

    from ddl_gym.agents.imitation import collect_demonstrations

    env = gym.make("ddl_gym:DDLCluster-v0", scenario=scenario, render_mode=None, **ENV_KWARGS)
    out = collect_demonstrations(env, TEACHER, seeds, beyond_window="window")
    env.close()
    return out


def validate(spec: str, scenario: str, seeds: range) -> dict[str, float]:
    from ddl_gym.harness import load_policy_spec, simulate
    from ddl_gym.scenarios import get_scenario

    sc = get_scenario(scenario)
    agent, teacher = load_policy_spec(spec), load_policy_spec(TEACHER)
    a = np.array([simulate(agent, sc, s).result.summary()["avg_jct_s"] for s in seeds])
    t = np.array([simulate(teacher, sc, s).result.summary()["avg_jct_s"] for s in seeds])
    rel = 100 * (a - t) / t
    return {"scenario": scenario, "seeds": f"{seeds.start}-{seeds.stop - 1}", "mean_pct": round(float(rel.mean()), 3),
            "worse": int((a > t).sum()), "better": int((a < t).sum()), "equal": int((a == t).sum())}


def main() -> int:
    import torch

    from ddl_gym.agents.distill import fit_arrays

    parser = argparse.ArgumentParser()
    parser.add_argument("--episodes", type=int, default=300, help="transfer-train training episodes")
    parser.add_argument("--default-episodes", type=int, default=60, help="default training episodes")
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--val", type=int, default=20, help="validation episodes per scenario")
    parser.add_argument("--work", default="runs/agent-transfer")
    parser.add_argument("--install", action="store_true", help="copy into leaderboard/agents/agent-transfer.*")
    args = parser.parse_args()
    torch.set_num_threads(1)
    start = time.time()
    train = {"transfer-train": range(30_000, 30_000 + args.episodes), "default": range(20_000, 20_000 + args.default_episodes)}
    parts = [demos(sc, seeds) for sc, seeds in train.items()]
    obs, actions, masks = (np.concatenate([p[k] for p in parts]) for k in ("obs", "actions", "masks"))
    collect_s = time.time() - start
    print(f"{len(actions)} demonstrations in {collect_s:.0f} s", flush=True)
    path = fit_arrays(obs, actions, masks, "transfer-train", ENV_KWARGS, args.work, teacher=TEACHER, preset="transfer",
                      epochs=args.epochs, extra_meta={"episodes": {k: f"{v.start}-{v.stop - 1}" for k, v in train.items()},
                                                      "collect_wall_s": round(collect_s, 1)})
    train_wall = time.time() - start
    meta = json.loads(path.with_suffix(".json").read_text())
    print(f"cloned in {train_wall:.0f} s total; accuracy {meta['cloning']['accuracy_after']:.4f}", flush=True)
    checks = [validate(f"maskable-ppo:{path}", sc, range(40_000, 40_000 + args.val)) for sc in ("default", "transfer-train")]
    for c in checks:
        print("validation vs teacher:", c, flush=True)
    meta.update(training_wall_s=round(train_wall, 1), training_samples=int(len(actions)), rl_timesteps=0,
                validation_vs_teacher=checks)
    path.with_suffix(".json").write_text(json.dumps(meta, indent=2))
    if args.install:
        dest = REPO / "leaderboard" / "agents"
        dest.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, dest / "agent-transfer.zip")
        shutil.copyfile(path.with_name(meta["vecnormalize"]), dest / "agent-transfer.vecnormalize.pkl")
        meta["vecnormalize"] = "agent-transfer.vecnormalize.pkl"
        (dest / "agent-transfer.json").write_text(json.dumps(meta, indent=2))
        print(f"installed {dest / 'agent-transfer.zip'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
