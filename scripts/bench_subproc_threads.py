"""Measure MaskablePPO training speed with SB3 SubprocVecEnv, torch's default thread count vs one thread.

Usage::

    python scripts/bench_subproc_threads.py [--steps 4096] [--n-envs 2] [--repeats 3] [--scenario small]

Each configuration trains a fresh agent for ``--steps`` environment steps in a fresh process (torch's
thread count is fixed per process) and reports steps per second; the ratio of the two is taken within
each repeat (the machine may be shared), and min / median / max over repeats are printed.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

CHILD = r"""
import json, sys, time
import torch
threads = int(sys.argv[1]); steps = int(sys.argv[2]); n_envs = int(sys.argv[3]); scenario = sys.argv[4]
if threads > 0:
    torch.set_num_threads(threads)
import gymnasium as gym
import ddl_gym  # noqa: F401
from sb3_contrib import MaskablePPO
from stable_baselines3.common.env_util import make_vec_env
from stable_baselines3.common.vec_env import SubprocVecEnv

if __name__ == "__main__":
    venv = make_vec_env("ddl_gym:DDLCluster-v0", n_envs=n_envs, seed=0, vec_env_cls=SubprocVecEnv,
                        env_kwargs={"scenario": scenario, "render_mode": None})
    model = MaskablePPO("MlpPolicy", venv, n_steps=256, batch_size=128, n_epochs=4, seed=0, verbose=0,
                        policy_kwargs={"net_arch": [128, 128]})
    t0 = time.perf_counter()
    model.learn(total_timesteps=steps)
    elapsed = time.perf_counter() - t0
    venv.close()
    print(json.dumps({"threads": torch.get_num_threads(), "steps_per_s": model.num_timesteps / elapsed}))
"""


def run(threads: int, steps: int, n_envs: int, scenario: str) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, str(threads), str(steps), str(n_envs), scenario],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench_subproc_threads.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=4096)
    parser.add_argument("--n-envs", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--scenario", default="small")
    args = parser.parse_args(argv)
    ratios, default_rates, one_rates = [], [], []
    for r in range(args.repeats):
        default = run(0, args.steps, args.n_envs, args.scenario)
        one = run(1, args.steps, args.n_envs, args.scenario)
        default_rates.append(default["steps_per_s"])
        one_rates.append(one["steps_per_s"])
        ratios.append(one["steps_per_s"] / default["steps_per_s"])
        print(f"repeat {r + 1}: default ({default['threads']} threads) {default['steps_per_s']:.0f} steps/s, "
              f"torch.set_num_threads(1) {one['steps_per_s']:.0f} steps/s, speed-up x{ratios[-1]:.2f}", flush=True)
    print(f"speed-up of torch.set_num_threads(1) with SubprocVecEnv({args.n_envs}) on {args.scenario}: "
          f"min x{min(ratios):.2f}, median x{statistics.median(ratios):.2f}, max x{max(ratios):.2f} "
          f"({args.repeats} repeats, {args.steps} steps each)")
    return 0


if __name__ == "__main__":
    t0 = time.perf_counter()
    status = main()
    print(f"({time.perf_counter() - t0:.0f} s)", file=sys.stderr)
    sys.exit(status)
