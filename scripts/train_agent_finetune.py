"""PPO fine-tuning of the shipped clone ``agent-transfer`` on the default scenario's training seeds.

What it does, top to bottom (the algorithm and its reasons: :mod:`ddl_gym.agents.finetune`):

1. loads ``leaderboard/agents/agent-transfer.zip`` (a behaviour clone of ``srsf+ca``) and its
   frozen observation statistics;
2. softens its action head by a temperature (same greedy actions, some exploration);
3. trains the critic alone for ``--critic-steps``, then actor and critic with MaskablePPO at a
   small learning rate, a tight clip range and a KL early stop, on ``default`` seeds
   20 000–29 999 (two in-process envs, seeds replayed in order: deterministic for a given
   ``--seed``);
4. every ``--eval-every`` steps saves the greedy policy and runs it with the harness on the
   validation seeds 40 000–40 019 of ``default``, paired per seed against ``srsf+ca`` (teacher)
   and ``srsf+pack`` (the default board's best reference); the points go to ``OUT/curve.jsonl``;
5. checkpoints every ``--checkpoint-every`` steps (``--resume`` continues an interrupted run).

Validation seeds pick nothing automatically: ``--install NAME`` copies the final agent (or, with
``--snapshot STEPS``, a validation snapshot) to ``leaderboard/agents/NAME.*``. Do that only for
an agent that beats its teacher on validation beyond the CI and then on the held-out protocol.

    nice -n 10 .venv/bin/python scripts/train_agent_finetune.py --out runs/finetune/ppo [--timesteps 200000]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    from ddl_gym.agents.finetune import FinetuneConfig, finetune, install, read_curve
    from ddl_gym.sim.model import ConfigError

    d = FinetuneConfig()
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True)
    p.add_argument("--resume", action="store_true")
    p.add_argument("--start", default=d.start, help="agent zip to start from (default: agent-transfer)")
    p.add_argument("--timesteps", type=int, default=d.timesteps)
    p.add_argument("--critic-steps", type=int, default=d.critic_steps)
    p.add_argument("--critic-lr", type=float, default=d.critic_lr)
    p.add_argument("--learning-rate", type=float, default=d.learning_rate)
    p.add_argument("--clip-range", type=float, default=d.clip_range)
    p.add_argument("--target-kl", type=float, default=d.target_kl)
    p.add_argument("--ent-coef", type=float, default=d.ent_coef)
    p.add_argument("--target-pmax", type=float, default=d.target_pmax)
    p.add_argument("--n-steps", type=int, default=d.n_steps)
    p.add_argument("--batch-size", type=int, default=d.batch_size)
    p.add_argument("--n-epochs", type=int, default=d.n_epochs)
    p.add_argument("--gamma", type=float, default=d.gamma)
    p.add_argument("--gae-lambda", type=float, default=d.gae_lambda)
    p.add_argument("--seed", type=int, default=d.seed)
    p.add_argument("--eval-every", type=int, default=d.eval_every)
    p.add_argument("--checkpoint-every", type=int, default=d.checkpoint_every)
    p.add_argument("--val-seeds", default=f"{d.val_seeds[0]}:{d.val_seeds[1]}", help="start:stop")
    p.add_argument("--install", default=None, help="copy the agent to leaderboard/agents/NAME.*")
    p.add_argument("--snapshot", type=int, default=None, help="with --install: the validation snapshot at STEPS")
    args = p.parse_args(argv)
    lo, hi = (int(x) for x in args.val_seeds.split(":"))
    try:
        cfg = FinetuneConfig(start=args.start, timesteps=args.timesteps, critic_steps=args.critic_steps,
                             critic_lr=args.critic_lr, learning_rate=args.learning_rate, clip_range=args.clip_range,
                             target_kl=args.target_kl, ent_coef=args.ent_coef, target_pmax=args.target_pmax,
                             n_steps=args.n_steps, batch_size=args.batch_size, n_epochs=args.n_epochs, gamma=args.gamma,
                             gae_lambda=args.gae_lambda, seed=args.seed,
                             eval_every=args.eval_every, checkpoint_every=args.checkpoint_every, val_seeds=(lo, hi))
        path = finetune(cfg, args.out, resume=args.resume, log=lambda *a: print(*a, flush=True))
    except ConfigError as exc:
        print(f"error: {str(exc).splitlines()[0]}", file=sys.stderr)
        return 2
    for row in read_curve(args.out):
        print(json.dumps(row))
    if args.install:
        agent = path if args.snapshot is None else Path(args.out) / "snapshots" / f"step_{args.snapshot:09d}" / "agent.zip"
        print("installed", install(agent, args.install, REPO / "leaderboard" / "agents"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
