"""Measure Spear-style MCTS against its guiding policy (Markdown table on stdout).

Example::

    python scripts/mcts_eval.py --seeds 0 1 2 --sims 16 --objective jct --out results/mcts_jct.md

For each seed the guide runs twice — natively (the harness's ``order+placement`` policy, whole
queue visible) and through the env's actions (what MCTS's rollouts follow, queue window ``W``) —
and MCTS runs one episode via :meth:`MCTSPolicy.run_episode`, the same entry point the harness uses.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from ddl_gym.agents.mcts import ClassicGuide, MCTSPolicy
from ddl_gym.baselines.classic.policy import ClassicPolicy
from ddl_gym.envs.cluster_env import DDLClusterEnv
from ddl_gym.scenarios import get_scenario
from ddl_gym.sim.engine import Simulator, run_policy

KEYS = ("avg_jct_s", "makespan_s", "p95_jct_s")


def _guide_env(scenario: str, seed: int, guide: str, env_kwargs: dict) -> dict:
    order, _, placement = guide.partition("+")
    g = ClassicGuide(order, placement or "pack")
    env = DDLClusterEnv(scenario, **env_kwargs)
    env.reset(seed=seed)
    while not env.sim.done:
        env.step(g.env_action(env))
    return env.result().summary()


def fork_timing(scenario: str, seed: int = 0, repeats: int = 200) -> tuple[float, float]:
    """Mean seconds of one ``env.fork()`` and of one env ``step`` mid-episode (half-way through)."""
    env = DDLClusterEnv(scenario)
    env.reset(seed=seed)
    guide = ClassicGuide()
    steps = 0
    while not env.sim.done and env.sim.num_finished < env.sim.workload.num_jobs // 2:
        env.step(guide.env_action(env))
        steps += 1
    start = time.perf_counter()
    for _ in range(repeats):
        env.fork()
    fork_s = (time.perf_counter() - start) / repeats
    twin = env.fork()
    start = time.perf_counter()
    n = 0
    while not twin.sim.done:
        twin.step(guide.env_action(twin))
        n += 1
    step_s = (time.perf_counter() - start) / max(1, n)
    return fork_s, step_s


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--sims", type=int, default=16, help="simulations per decision")
    parser.add_argument("--depth", default="end", help="guided env decisions per rollout, or 'end'")
    parser.add_argument("--guide", default="srsf+pack")
    parser.add_argument("--objective", default="jct", choices=["jct", "makespan", "weighted_jct"])
    parser.add_argument("--scenario", default="default")
    parser.add_argument("--c-uct", type=float, default=1.0)
    parser.add_argument("--out", type=Path, default=None, help="also write the Markdown table here")
    args = parser.parse_args(argv)
    depth = None if str(args.depth).lower() in ("end", "none") else int(args.depth)
    scenario = get_scenario(args.scenario)

    rows = []
    for seed in args.seeds:
        cluster, workload = scenario.episode(seed)
        order, _, placement = args.guide.partition("+")
        native = run_policy(Simulator(cluster, workload, scenario.model), ClassicPolicy(order, placement or "pack"),
                            np.random.default_rng(seed)).summary()
        policy = MCTSPolicy(args.guide, simulations=args.sims, depth=depth, objective=args.objective, c_uct=args.c_uct)
        env_guide = _guide_env(args.scenario, seed, args.guide, policy.env_kwargs)
        start = time.perf_counter()
        result = policy.run_episode(args.scenario, cluster, workload, np.random.default_rng(seed))
        wall = time.perf_counter() - start
        mcts = result.summary()
        per_decision = wall / max(1, len(policy.decision_times))
        rows.append((seed, native, env_guide, mcts, wall, per_decision, len(policy.decision_times)))
        print(f"seed {seed}: done in {wall:.1f}s", file=sys.stderr)

    lines = [
        f"MCTS on `{args.scenario}`, guide `{args.guide}`, objective `{args.objective}`, "
        f"{args.sims} simulations/decision, rollout depth {args.depth}, c_uct {args.c_uct}",
        "",
        "| seed | policy | avg JCT (s) | makespan (s) | p95 JCT (s) | wall (s) | ms/decision |",
        "|---:|---|---:|---:|---:|---:|---:|",
    ]
    for seed, native, env_guide, mcts, wall, per_decision, n in rows:
        lines.append(f"| {seed} | {args.guide} (native) | " + " | ".join(f"{native[k]:.0f}" for k in KEYS) + " | | |")
        lines.append(f"| {seed} | {args.guide} (env actions) | " + " | ".join(f"{env_guide[k]:.0f}" for k in KEYS) + " | | |")
        lines.append(f"| {seed} | MCTS | " + " | ".join(f"{mcts[k]:.0f}" for k in KEYS)
                     + f" | {wall:.1f} | {1000 * per_decision:.0f} ({n} decisions) |")
    lines.append("")
    lines.append("| mean over seeds | avg JCT (s) | makespan (s) | p95 JCT (s) |")
    lines.append("|---|---:|---:|---:|")
    for label, idx in (("guide (native)", 1), ("guide (env actions)", 2), ("MCTS", 3)):
        lines.append(f"| {label} | " + " | ".join(f"{statistics.mean(r[idx][k] for r in rows):.0f}" for k in KEYS) + " |")
    change = [100 * (statistics.mean(r[3][k] for r in rows) / statistics.mean(r[1][k] for r in rows) - 1) for k in KEYS]
    lines.append("| MCTS vs native guide | " + " | ".join(f"{c:+.1f}%" for c in change) + " |")
    lines.append("")
    lines.append(f"wall time per decision: mean {1000 * statistics.mean(r[5] for r in rows):.0f} ms")
    fork_s, step_s = fork_timing(args.scenario)
    lines.append(f"env.fork() mid-episode: {1e6 * fork_s:.0f} µs; one guided env step: {1e6 * step_s:.0f} µs")
    table = "\n".join(lines)
    print(table)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(table + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
