"""Plain SB3 PPO (no action masks) on ``DDLCluster-Small-v0``: does every episode end, does it learn?

Example::

    python scripts/ppo_unmasked_curve.py --timesteps 60000 --out docs/agents/ppo_unmasked

Trains ``stable_baselines3.PPO("MlpPolicy")`` on the registered env with its defaults (invalid
actions wait, ``max_decisions="auto"``), evaluating the deterministic policy every
``--eval-every`` steps on held-out seeds (``--eval-seeds``). Writes ``curve.csv`` (one row per
evaluation: training steps, episodes ended, mean return, avg JCT, invalid-action share) and
``curve.png``, and prints the same table with two reference rows measured on the same seeds:
uniform random over *all* actions (what an untrained unmasked agent does) and uniform random over
*valid* actions. An evaluation episode that has not ended after ``--eval-step-cap`` steps counts
as not ended (the first release's env let plain PPO repeat an invalid action forever).
"""

from __future__ import annotations

import argparse
import csv
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

ENV_ID = "ddl_gym:DDLCluster-Small-v0"


def evaluate(choose: Callable[[np.ndarray, dict, np.random.Generator], int], seeds: list[int], env_kwargs: dict,
             step_cap: int) -> dict[str, float]:
    """Mean return, avg JCT (ended episodes), share of ended episodes and of invalid actions."""
    import gymnasium as gym

    returns, jcts, ended, invalid, steps = [], [], 0, 0, 0
    for seed in seeds:
        env = gym.make(ENV_ID, **env_kwargs)
        rng = np.random.default_rng(seed)
        obs, info = env.reset(seed=seed)
        total = 0.0
        for _ in range(step_cap):
            obs, reward, terminated, truncated, info = env.step(choose(obs, info, rng))
            total += reward
            invalid += info["invalid_action"]
            steps += 1
            if terminated or truncated:
                break
        if terminated:
            ended += 1
            jcts.append(info["metrics"]["avg_jct_s"])
        returns.append(total)
        env.close()
    return {"episodes_ended": ended / len(seeds), "mean_return": statistics.fmean(returns),
            "avg_jct_s": statistics.fmean(jcts) if jcts else float("nan"), "invalid_share": invalid / max(1, steps)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--timesteps", type=int, default=60_000)
    parser.add_argument("--eval-every", type=int, default=6_000)
    parser.add_argument("--eval-seeds", default="10000:10010", help="start:stop (stop excluded)")
    parser.add_argument("--eval-step-cap", type=int, default=2_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--n-steps", type=int, default=1024)
    parser.add_argument("--penalty", type=float, default=None, help="invalid_action_penalty (default: the env's)")
    parser.add_argument("--out", type=Path, default=Path("results/ppo_unmasked"))
    args = parser.parse_args(argv)

    import torch
    from stable_baselines3 import PPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.env_util import make_vec_env

    import ddl_gym  # noqa: F401  (registers the ids for the evaluation envs)

    torch.set_num_threads(1)
    start, stop = (int(v) for v in args.eval_seeds.split(":"))
    seeds = list(range(start, stop))
    env_kwargs: dict[str, Any] = {} if args.penalty is None else {"invalid_action_penalty": args.penalty}
    n_actions = int(make_vec_env(ENV_ID, n_envs=1, env_kwargs=env_kwargs).action_space.n)

    rows: list[dict[str, Any]] = []
    refs = {
        "random (all actions)": evaluate(lambda o, i, r: int(r.integers(n_actions)), seeds, env_kwargs,
                                         args.eval_step_cap),
        "random (valid actions)": evaluate(lambda o, i, r: int(r.choice(np.flatnonzero(i["action_mask"]))), seeds,
                                           env_kwargs, args.eval_step_cap),
    }
    venv = make_vec_env(ENV_ID, n_envs=1, seed=args.seed, env_kwargs=env_kwargs)
    model = PPO("MlpPolicy", venv, n_steps=args.n_steps, batch_size=64, seed=args.seed, verbose=0, device="cpu")
    t0 = time.perf_counter()

    def evaluate_model(step: int) -> None:
        row = evaluate(lambda o, i, r: int(model.predict(o, deterministic=True)[0]), seeds, env_kwargs,
                       args.eval_step_cap)
        row["timesteps"] = step
        row["wall_s"] = time.perf_counter() - t0
        rows.append(row)
        print(f"{step:>8} steps: ended {row['episodes_ended']:.0%}, return {row['mean_return']:.2f}, "
              f"avg JCT {row['avg_jct_s']:.0f} s, invalid {row['invalid_share']:.0%}", flush=True)

    ended = {"terminated": 0, "truncated": 0}

    class EvalEvery(BaseCallback):
        def _on_step(self) -> bool:
            for done, info in zip(self.locals["dones"], self.locals["infos"]):
                if done:
                    ended["truncated" if info.get("TimeLimit.truncated") else "terminated"] += 1
            if self.num_timesteps % args.eval_every == 0:
                evaluate_model(self.num_timesteps)
            return True

    evaluate_model(0)
    model.learn(total_timesteps=args.timesteps, callback=EvalEvery())

    args.out.mkdir(parents=True, exist_ok=True)
    fields = ["timesteps", "wall_s", "episodes_ended", "mean_return", "avg_jct_s", "invalid_share"]
    with open(args.out / "curve.csv", "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=["policy", *fields])
        writer.writeheader()
        for name, ref in refs.items():
            writer.writerow({"policy": name, **{k: ref.get(k, "") for k in fields}})
        for row in rows:
            writer.writerow({"policy": "ppo (no masks)", **{k: row[k] for k in fields}})

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot([r["timesteps"] for r in rows], [r["avg_jct_s"] for r in rows], marker="o", label="PPO, no masks")
    for (name, ref), style in zip(refs.items(), ("--", ":")):
        ax.axhline(ref["avg_jct_s"], linestyle=style, color="grey", label=name)
    ax.set_xlabel("training steps")
    ax.set_ylabel(f"avg JCT (s), seeds {start}-{stop - 1}")
    ax.set_title("Plain PPO on DDLCluster-Small-v0 (invalid actions wait)")
    ax.legend(loc="upper right", fontsize=8)
    fig.tight_layout()
    fig.savefig(args.out / "curve.png", dpi=120)

    lines = [f"# Plain SB3 PPO without masks on {ENV_ID}", "",
             f"`python scripts/ppo_unmasked_curve.py {' '.join(argv if argv is not None else sys.argv[1:])}`; "
             f"deterministic evaluation on seeds {start}-{stop - 1}, env defaults"
             f"{'' if args.penalty is None else f', invalid_action_penalty={args.penalty}'}.", "",
             "| policy | steps | episodes ended | mean return | avg JCT (s) | invalid actions |",
             "|---|---:|---:|---:|---:|---:|"]
    for name, ref in refs.items():
        lines.append(f"| {name} | – | {ref['episodes_ended']:.0%} | {ref['mean_return']:.2f} | "
                     f"{ref['avg_jct_s']:.0f} | {ref['invalid_share']:.0%} |")
    for row in rows:
        lines.append(f"| PPO (no masks) | {row['timesteps']} | {row['episodes_ended']:.0%} | "
                     f"{row['mean_return']:.2f} | {row['avg_jct_s']:.0f} | {row['invalid_share']:.0%} |")
    lines += ["", f"Training: {ended['terminated']} episodes terminated (every job finished), "
                  f"{ended['truncated']} truncated by the decision limit."]
    (args.out / "table.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    print(f"wrote {args.out / 'curve.csv'}, {args.out / 'curve.png'} and {args.out / 'table.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
