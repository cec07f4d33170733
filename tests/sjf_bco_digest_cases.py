"""SJF-BCO regression digests: exact plans *and* executed schedules, recorded before the planner speed-up.

Each case digests, bit for bit, every plan the policy made (entries: job, GPUs, planned start/end,
``ρ̂``, method, servers; θ̃, θ of the kept plan, κ, trial count, bisection history, ``Ŵ_max``) and
the executed :class:`SimResult` (per-job start/finish, GPUs). Offline cases use the §7.1 world
(several seeds, every kind, the named readings and the "feasible" bisection) and a larger cluster
where jobs wait; online cases re-plan at every arrival batch.

``python -m tests.sjf_bco_digest_cases --write`` records ``tests/golden/sjf_bco_digests.json`` (only
when a behaviour change is intended); ``tests/baselines/sjf_bco/test_sjf_bco_digests.py`` recomputes and compares.
"""

from __future__ import annotations

import hashlib
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

DIGEST_FILE = Path(__file__).parent / "golden" / "sjf_bco_digests.json"
GBPS = 1e9 / 8


def plan_digest(policy: Any, result: Any) -> str:
    """sha256 over every plan of ``policy`` and the executed result."""
    from tests.golden_cases import result_digest

    h = hashlib.sha256()
    for executed in policy.plans:
        p = executed.plan
        h.update(repr((p.kind, p.theta_tilde, p.theta_plan, p.kappa, p.kappa_class, p.trials, p.horizon,
                       p.horizon_doublings, p.clock0, executed.replan_time)).encode())
        h.update(np.asarray([x for step in p.history for x in step], dtype=np.float64).tobytes())
        h.update(np.asarray([p.planned_makespan, p.w_max], dtype=np.float64).tobytes())
        for e in p.entries:
            h.update(repr((e.job, e.gpus, e.method, e.n_servers)).encode())
            h.update(np.asarray([e.start, e.end, e.rho_hat], dtype=np.float64).tobytes())
    h.update(result_digest(result).encode())
    return h.hexdigest()


@dataclass(frozen=True)
class BCOCase:
    name: str
    world: str  # "paper" (§7.1, 20 servers), "wide" (larger cluster, more jobs), "online"
    kind: str
    seed: int
    kwargs: dict[str, Any] = field(default_factory=dict)

    def build(self) -> tuple[Any, Any, Any]:
        from ddl_gym.baselines.sjf_bco.policy import SJF_BCO_MODELS, SJF_BCO_PERF_MODEL, sjf_bco_scenario
        from ddl_gym.sim.model import ClusterSpec
        from ddl_gym.workloads.synthetic import scaled_workload, sjf_bco_workload

        if self.world == "paper":
            cluster, workload = sjf_bco_scenario(20).episode(self.seed)
            return cluster, workload, SJF_BCO_PERF_MODEL
        if self.world == "small":  # 10 servers, 160 jobs: lots of waiting on the planned clock
            cluster, workload = sjf_bco_scenario(10).episode(self.seed)
            return cluster, workload, SJF_BCO_PERF_MODEL
        if self.world == "wide":
            rng = np.random.default_rng(self.seed)
            cluster = ClusterSpec(tuple(rng.choice([4, 8, 16, 32], size=12).tolist()), intra_bandwidth=800 * GBPS,
                                  inter_bandwidth=100 * GBPS)
            mix = {1: 200, 2: 35, 4: 65, 8: 75, 16: 20, 32: 5}
            return cluster, sjf_bco_workload(rng, gpu_mix=mix, models=SJF_BCO_MODELS), SJF_BCO_PERF_MODEL
        if self.world == "online":
            cluster = ClusterSpec((4, 8, 16, 32, 8, 4), intra_bandwidth=800 * GBPS, inter_bandwidth=100 * GBPS)
            wl = scaled_workload(np.random.default_rng(self.seed), 60, max_gpus=16, arrival_rate_per_s=0.3,
                                 models=SJF_BCO_MODELS)
            return cluster, wl, SJF_BCO_PERF_MODEL
        raise ValueError(self.world)

    def run(self) -> str:
        from ddl_gym.baselines.sjf_bco.policy import PlanOptions, SJFBCOPolicy
        from ddl_gym.sim.engine import Simulator, run_policy

        cluster, workload, model = self.build()
        kwargs = dict(self.kwargs)
        if "options" in kwargs:
            kwargs["options"] = PlanOptions(**kwargs["options"])
        policy = SJFBCOPolicy(self.kind, **kwargs)
        result = run_policy(Simulator(cluster, workload, model), policy, np.random.default_rng(self.seed))
        return plan_digest(policy, result)


def cases() -> list[BCOCase]:
    out: list[BCOCase] = []
    for seed in (1, 2, 3):
        for kind in ("sjf-bco", "ff", "ls", "rand"):
            out.append(BCOCase(f"paper/{kind}/seed{seed}", "paper", kind, seed))
    for seed in (0, 4):
        for kind in ("sjf-bco", "ff", "ls"):
            out.append(BCOCase(f"small/{kind}/seed{seed}", "small", kind, seed))
    out.append(BCOCase("paper/sjf-bco/feasible/seed1", "paper", "sjf-bco", 1, {"bisection": "feasible"}))
    out.append(BCOCase("paper/ff/feasible/seed2", "paper", "ff", 2, {"bisection": "feasible"}))
    out.append(BCOCase("paper/sjf-bco/prose/seed1", "paper", "sjf-bco", 1, {"options": {"fa_ffp": "prose"}}))
    out.append(BCOCase("paper/sjf-bco/list-order/seed2", "paper", "sjf-bco", 2,
                       {"options": {"lbsgf_pick": "list-order"}}))
    out.append(BCOCase("paper/sjf-bco/lam2/seed3", "paper", "sjf-bco", 3, {"lam": 2.0}))
    out.append(BCOCase("paper/rand/servers/seed1", "paper", "rand", 1, {"options": {"rand_pick": "servers"}}))
    out.append(BCOCase("paper/ls/arrival/seed2", "paper", "ls", 2, {"options": {"job_order": "arrival"}}))
    out.append(BCOCase("paper/sjf-bco/horizon/seed1", "paper", "sjf-bco", 1, {"horizon": 400}))
    for seed in (5, 6):
        for kind in ("sjf-bco", "ff", "ls", "rand"):
            out.append(BCOCase(f"wide/{kind}/seed{seed}", "wide", kind, seed))
    for seed in (1, 2):
        for kind in ("sjf-bco", "ff", "ls", "rand"):
            out.append(BCOCase(f"online/{kind}/seed{seed}", "online", kind, seed))
    return out


def record(argv: list[str], module: str, all_cases: list[Any], digest_file: Path) -> int:
    """``python -m <module> --write``: record the digests of ``all_cases`` from the current code."""
    if "--write" not in argv:
        print(f"usage: python -m {module} --write   (records digests from the current code)")
        return 2
    digests = {case.name: case.run() for case in all_cases}
    digest_file.write_text(json.dumps(digests, indent=1, sort_keys=True) + "\n")
    print(f"wrote {len(digests)} digests to {digest_file}")
    return 0


def main(argv: list[str]) -> int:
    return record(argv, "tests.sjf_bco_digest_cases", cases(), DIGEST_FILE)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
