"""``ddl-gym demo``: the shipped agent, an agent trained on the spot, and its teacher, on held-out seeds.

What it does (a few minutes on 2 cores):

1. **Train** (about a minute): behaviour-clone the teacher ``srsf+ca`` — the best reference
   policy on the default scenario — on training seeds 20 000 … of ``default``
   (:func:`ddl_gym.agents.distill.clone`: expert demonstrations, then cross-entropy on the masked
   action logits; no RL step, which in our measurements only moved a clone *away* from its teacher).
2. **Evaluate** on the demo's held-out seeds 1000 … (never used for training): the teacher, the
   agent trained here, the shipped agent (``leaderboard/agents/``) and a few other reference
   policies, through the evaluation harness (``results/demo/``: CSVs, plots, Gantt charts).
3. **Check and say** how the trained agent compares with its teacher on exactly these seeds
   (paired per seed): equal, better or worse — it is printed either way, never hidden.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any, Sequence

from ddl_gym.sim.model import ConfigError

TEACHER = "srsf+ca"
SCENARIO = "default"
#: Other reference policies in the demo's table.
OTHERS: tuple[str, ...] = ("sjf+pack", "srsf+pack", "fifo+pack")
TRAIN_SEEDS = range(20_000, 20_010)
#: Env settings of the agent trained here (those of the shipped agent: portable observation, 16 slots).
ENV_KWARGS: dict[str, Any] = {"window": 8, "max_window": 16, "queue_order": "srsf"}


def compare_to_teacher(summary: Any, agent: str, teacher: str = TEACHER) -> tuple[str, dict[str, float]]:
    """One sentence comparing ``agent`` with ``teacher`` on the seeds both ran (paired), and the numbers."""
    pivot = summary.pivot(index="seed", columns="policy", values="avg_jct_s")
    a, t = pivot[agent].to_numpy(float), pivot[teacher].to_numpy(float)
    rel = 100.0 * (a - t) / t
    n = rel.size
    from ddl_gym.harness import t_quantile_975

    half = t_quantile_975(n - 1) * float(rel.std(ddof=1)) / math.sqrt(n) if n > 1 else math.nan
    better, worse, equal = int((a < t).sum()), int((a > t).sum()), int((a == t).sum())
    stats = {"mean_pct": float(rel.mean()), "ci_pct": half, "better": better, "worse": worse, "equal": equal, "seeds": n}
    if equal == n:
        verdict = f"the agent trained here scheduled exactly like its teacher {teacher} on all {n} seeds (same avg JCT)"
    elif worse == 0:
        verdict = (f"the agent trained here was never worse than its teacher {teacher}: better on {better}, equal on "
                   f"{equal} of {n} seeds ({rel.mean():+.2f}% avg JCT, paired)")
    else:
        verdict = (f"NOTE: the agent trained here was WORSE than its teacher {teacher} on {worse} of {n} seeds "
                   f"({rel.mean():+.2f}% ± {half:.2f}% avg JCT, paired; better on {better}, equal on {equal}) — "
                   "a short cloning run does not always reproduce its teacher")
    return verdict, stats


def run(out: Path, seeds: Sequence[int], *, train: bool = True, shipped: str | None = None,
        others: Sequence[str] = OTHERS, workers: int | None = None, progress: bool = True, log: Any = None) -> int:
    """Train (optionally), evaluate, print the table and the verdict; returns the exit status."""
    from ddl_gym.harness import evaluate, policy_label

    log = log or (lambda text: print(text, file=sys.stderr))
    out.mkdir(parents=True, exist_ok=True)
    policies = [TEACHER, *others]
    agent_spec = None
    if train:
        try:
            from ddl_gym.agents.distill import clone
        except ImportError as exc:
            log(f"note: no agent trained in this demo (agents need the RL extra: {exc})")
        else:
            log(f"training: cloning {TEACHER} on {len(TRAIN_SEEDS)} training episodes of '{SCENARIO}' ...")
            try:
                path = clone(TEACHER, SCENARIO, ENV_KWARGS, TRAIN_SEEDS, out / "agent")
            except (ImportError, ConfigError) as exc:
                log(f"note: no agent trained in this demo (training failed: {exc})")
            else:
                agent_spec = f"maskable-ppo:{path}"
    if agent_spec:
        policies.append(agent_spec)
    if shipped:
        policies.append(shipped)
    log(f"evaluating {len(policies)} policies on '{SCENARIO}', held-out seeds {seeds[0]}-{seeds[-1]} ...")
    results = evaluate(policies, SCENARIO, list(seeds), out, workers=workers, progress=progress, echo=False)
    print(results.markdown)
    print()
    if agent_spec:
        verdict, _ = compare_to_teacher(results.summary, policy_label(agent_spec))
        print(f"Check: {verdict}.")
    gantts = sorted(p.name for p in out.glob("gantt_*.png"))
    print(f"How to read this: each row is one policy on the same {len(seeds)} held-out episodes, cells are mean ± 95% "
          f"CI over seeds (lower JCT and makespan are better); `maskable-ppo:.../agent` is the agent trained just now "
          f"from its teacher {TEACHER}" + (f", `{shipped}` is the shipped agent" if shipped else "")
          + f", and the Gantt charts (GPU occupancy over time, one per policy) are {out}/gantt_*.png"
          + (f" ({len(gantts)} files)." if gantts else "."))
    return 0


__all__ = ["ENV_KWARGS", "TEACHER", "compare_to_teacher", "run"]
