"""Train a (tiny) agent, then compare it with reference policies, paired per seed.

    python examples/train_and_compare.py            # ~20 s on a laptop CPU: a smoke-sized budget
    python examples/train_and_compare.py 200000     # a real budget (timesteps)

The agent is cloned from ``srsf+ca`` (behaviour cloning) and fine-tuned with MaskablePPO for the
given timesteps on the ``small`` scenario, evaluated on held-out seeds (training uses others), and
compared with ``srsf+ca`` per seed: mean relative change with its 95% CI and better-on-k-of-n, plus
the paired-difference figure. Needs the RL extra (``pip install 'ddl-gym[rl]'``).
"""

import sys
import tempfile
from pathlib import Path

import torch

from ddl_gym.agents.train import quick_train
from ddl_gym.harness import compare, evaluate

torch.set_num_threads(1)
timesteps = int(sys.argv[1]) if len(sys.argv) > 1 else 1024
work = Path(tempfile.mkdtemp(prefix="ddl-gym-train-"))

agent = quick_train("small", timesteps=timesteps, out=work / "agent", bc_expert="srsf+ca", seed=0)
print(f"trained {agent}")

held_out = [1_000_000, 1_000_001]  # evaluation seeds the training never saw
evaluate([agent, "srsf+ca", "fifo+pack"], "small", held_out, out=work / "eval", workers=1,
         progress=False, echo=True, plots=False)
_, table = compare(work / "eval", "srsf+ca", ["avg_jct_s"], formats=("png",))
print(table)
print(f"paired figure: {work / 'eval' / 'paired_srsf_ca.png'}")
