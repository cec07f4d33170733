"""SJF-BCO at bench scale: exact plans and executed schedules on 1,024 GPUs and in the re-planning world.

The 42 cases of :mod:`tests.sjf_bco_digest_cases` run on at most 20 servers. These cases cover what
the (d2) bench measures: the offline world grown to 1,024 GPUs (about 70 servers of {4,8,16,32} GPUs,
every job at t=0), where the job-level engine re-rates many split jobs at every start and end, and
the 64-GPU re-planning world (Poisson arrivals, load 0.9), where every plan starts from a cluster with
running jobs. A classic spreading policy on the same 1,024 GPUs covers the engine's contention path
with no plan in between. Recorded before the SJF-BCO speed-up of issue 13.

``python -m tests.sjf_bco_scale_cases --write`` records ``tests/golden/sjf_bco_scale_digests.json``
(only when a behaviour change is intended); ``tests/baselines/sjf_bco/test_sjf_bco_digests.py`` compares.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

DIGEST_FILE = Path(__file__).parent / "golden" / "sjf_bco_scale_digests.json"


def _bench() -> Any:
    """``scripts/bench.py`` as a module: these are its (d2) worlds, so the digests cover what it measures."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_script", Path(__file__).resolve().parents[1] / "scripts" / "bench.py")
    bench = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(bench)  # type: ignore[union-attr]
    return bench


def offline_world(jobs: int, seed: int = 0) -> tuple[Any, Any, Any]:
    """The (d2) offline world (``sjf_bco_offline_case``): §7.1 servers of {4,8,16,32} GPUs up to 1,024 GPUs."""
    return _bench().sjf_bco_offline_case(jobs, 1024, seed=seed)


def online_world(jobs: int, seed: int = 0) -> tuple[Any, Any, Any]:
    """The (d2) re-planning world (``synthetic_case``): 16 servers of 4 GPUs, RAR model, paper mix at load 0.9."""
    return _bench().synthetic_case(64, jobs, load=0.9, seed=seed)


@dataclass(frozen=True)
class ScaleCase:
    name: str
    world: str  # "offline" (1,024 GPUs, all at t=0) or "online" (64 GPUs, Poisson arrivals)
    policy: str  # an SJF-BCO kind, or a classic policy name for make_policy
    jobs: int
    seed: int = 0

    def run(self) -> str:
        from ddl_gym.policies import make_policy
        from ddl_gym.baselines.sjf_bco.policy import SJFBCOPolicy
        from ddl_gym.sim.engine import Simulator, run_policy
        from tests.golden_cases import result_digest
        from tests.sjf_bco_digest_cases import plan_digest

        case = offline_world(self.jobs, seed=self.seed) if self.world == "offline" else online_world(self.jobs, self.seed)
        if self.policy in ("sjf-bco", "ff", "ls", "rand"):
            policy = SJFBCOPolicy(self.policy)
            result = run_policy(Simulator(*case), policy, np.random.default_rng(self.seed))
            return plan_digest(policy, result)
        result = run_policy(Simulator(*case), make_policy(self.policy), np.random.default_rng(self.seed))
        return result_digest(result)


def cases() -> list[ScaleCase]:
    return [
        ScaleCase("offline/sjf-bco/1500", "offline", "sjf-bco", 1500),
        ScaleCase("offline/ff/1500", "offline", "ff", 1500, seed=1),
        ScaleCase("offline/ls/800", "offline", "ls", 800, seed=2),
        ScaleCase("offline/fifo+spread/3000", "offline", "fifo+spread", 3000),
        ScaleCase("online/sjf-bco/150", "online", "sjf-bco", 150),
        ScaleCase("online/ff/120", "online", "ff", 120, seed=1),
    ]


def main(argv: list[str]) -> int:
    from tests.sjf_bco_digest_cases import record

    return record(argv, "tests.sjf_bco_scale_cases", cases(), DIGEST_FILE)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
