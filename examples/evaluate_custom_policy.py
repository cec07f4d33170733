"""Evaluate a custom policy from Python, paired against a reference — no ``__main__`` guard needed.

    python examples/evaluate_custom_policy.py

``register_policy`` gives the policy a name that worker processes can build; the harness runs the
pairs in parallel, and prints the paired per-seed comparison against ``srsf+ca``.
"""

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # so that workers can import my_policy

from ddl_gym.policies import register_policy
from ddl_gym.harness import compare, evaluate

register_policy("largest-first", "my_policy:LargestFirst", {"placement": "ca"},
                "largest GPU demand first, contention-aware placement")

out = Path(tempfile.mkdtemp(prefix="ddl-gym-example-"))
results = evaluate(["largest-first", "srsf+ca", "fifo+pack"], "small", seeds=2, out=out,
                   workers=2, progress=False, echo=False, plots=False)
print(results.markdown)
paired, table = compare(out, "srsf+ca", ["avg_jct_s"], formats=("png",))
print(table)
print(f"figure: {out / 'paired_srsf_ca.png'}")
