"""Golden regression cases: digests of complete simulation results, recorded from the code before a change.

Every case builds its world explicitly (cluster, performance model, workload generator and its
parameters) rather than by scenario name, so renaming or recalibrating a named scenario does not
move a golden digest; only a change in simulation behaviour does.

``python -m tests.golden_cases --write`` records ``tests/golden/digests.json`` (run it only when a
behaviour change is intended, and say so in the commit); ``tests/sim/test_golden.py`` recomputes every
case and compares.
"""

from __future__ import annotations

import hashlib
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

GOLDEN_FILE = Path(__file__).parent / "golden" / "digests.json"
GBPS = 1e9 / 8


def result_digest(result: Any) -> str:
    """sha256 of a SimResult's per-job start/finish times (exact bytes) and GPU placements."""
    h = hashlib.sha256()
    h.update(np.ascontiguousarray(result.start, dtype=np.float64).tobytes())
    h.update(np.ascontiguousarray(result.finish, dtype=np.float64).tobytes())
    h.update(repr([tuple(int(g) for g in ids) for ids in result.gpu_ids]).encode())
    return h.hexdigest()


# ----------------------------------------------------------------------------- worlds
def _old_default_scenario():
    """The pre-2026-11 default: 16x4 GPUs, 10 Gb/s NICs, RAR model, Ada-SRSF 160-job mix over 20 min."""
    from ddl_gym.scenarios import Scenario, SyntheticSource
    from ddl_gym.sim.model import ClusterSpec
    from ddl_gym.sim.perf import RARContentionModel

    cluster = ClusterSpec.homogeneous(16, 4, inter_bandwidth=10 * GBPS, intra_bandwidth=800 * GBPS)
    return Scenario(name="golden-default-10g", cluster=cluster, workload=SyntheticSource("ada_srsf", ()),
                    model=RARContentionModel())


def _small_scenario():
    from ddl_gym.scenarios import Scenario, SyntheticSource
    from ddl_gym.sim.model import ClusterSpec
    from ddl_gym.sim.perf import RARContentionModel

    cluster = ClusterSpec.homogeneous(4, 4, inter_bandwidth=10 * GBPS, intra_bandwidth=800 * GBPS)
    params = (("arrival_rate_per_s", 40 / 300.0), ("max_gpus", 8), ("num_jobs", 40))
    return Scenario(name="golden-small", cluster=cluster, workload=SyntheticSource("scaled", params),
                    model=RARContentionModel())


def _allreduce_joblevel_scenario():
    from ddl_gym.scenarios import Scenario, SyntheticSource
    from ddl_gym.sim.model import ClusterSpec
    from ddl_gym.sim.perf import AllReduceContentionModel

    cluster = ClusterSpec.homogeneous(16, 4, inter_bandwidth=10 * GBPS, intra_bandwidth=800 * GBPS)
    return Scenario(name="golden-allreduce-joblevel", cluster=cluster, workload=SyntheticSource("ada_srsf", ()),
                    model=AllReduceContentionModel())


def _sjf_bco_scenario():
    from ddl_gym.baselines.sjf_bco.policy import sjf_bco_scenario

    return sjf_bco_scenario(20, name="golden-sjf-bco")


def _tasklevel_scenario():
    """Ada-SRSF's task-level world, 48 jobs (the 160-job episode is too slow for the suite)."""
    from ddl_gym.scenarios import Scenario, SyntheticSource
    from ddl_gym.sim.model import ClusterSpec
    from ddl_gym.sim.perf import AllReduceContentionModel

    cluster = ClusterSpec.homogeneous(16, 4, inter_bandwidth=10 * GBPS, intra_bandwidth=800 * GBPS,
                                      gpu_memory_mb=16_384)
    params = (("gpu_mix", {1: 24, 2: 4, 4: 8, 8: 9, 16: 2, 32: 1}), ("name", "golden-task-48"),
              ("window_s", 360.0))
    return Scenario(name="golden-tasklevel", cluster=cluster, workload=SyntheticSource("ada_srsf", params),
                    model=AllReduceContentionModel(), engine="task", options={"gpu_sharing": True})


CLASSIC = [f"{order}+{rule}" for order in ("fifo", "sjf", "srsf") for rule in ("ff", "ls", "rand", "pack", "spread", "ca")]
TASKLEVEL = [f"{p}+{c}" for p in ("lwf1", "rand", "ff", "ls") for c in ("ada-srsf", "srsf1", "srsf2", "srsf3")]


@dataclass(frozen=True)
class Case:
    name: str
    run: Callable[[], str]
    slow: bool = False


def _simulate(scenario_fn: Callable[[], Any], policy: str, seed: int) -> Callable[[], str]:
    def run() -> str:
        from ddl_gym.policies import make_policy
        from ddl_gym.harness import simulate

        return result_digest(simulate(make_policy(policy), scenario_fn(), seed).result)

    return run


def _env_trajectory(scenario_fn: Callable[[], Any], seed: int, mode: str, env_cls: str = "cluster") -> Callable[[], str]:
    """Digest of an env episode: rewards, final result, and (separately named) observations.

    ``mode="random"``: a uniformly random valid action from a generator independent of the env;
    ``mode="greedy"``: the first valid start action, else advance (policy-like actions).
    """

    def run() -> str:
        if env_cls == "cluster":
            from ddl_gym.envs.cluster_env import DDLClusterEnv as Env
        else:
            from ddl_gym.envs.placement_env import DDLPlacementEnv as Env
        env = Env(scenario_fn())
        chooser = np.random.default_rng(10_000 + seed)
        obs, info = env.reset(seed=seed)
        rewards: list[float] = []
        actions: list[int] = []
        while True:
            valid = np.flatnonzero(info["action_mask"])
            if mode == "random":
                action = int(chooser.choice(valid))
            else:
                starts = valid[valid > 0]
                action = int(starts[0]) if starts.size else 0
            obs, reward, terminated, truncated, info = env.step(action)
            rewards.append(reward)
            actions.append(action)
            if terminated or truncated:
                break
        h = hashlib.sha256()
        h.update(np.asarray(rewards, dtype=np.float64).tobytes())
        h.update(np.asarray(actions, dtype=np.int64).tobytes())
        h.update(result_digest(env.result()).encode())
        return h.hexdigest()

    return run


def cases() -> list[Case]:
    out: list[Case] = []
    for policy in CLASSIC:
        out.append(Case(f"default10g/{policy}/seed0", _simulate(_old_default_scenario, policy, 0)))
        out.append(Case(f"small/{policy}/seed3", _simulate(_small_scenario, policy, 3)))
    for policy in ("fifo+pack", "srsf+ca", "sjf+spread"):
        out.append(Case(f"allreduce-joblevel/{policy}/seed1", _simulate(_allreduce_joblevel_scenario, policy, 1)))
    for policy in ("sjf-bco", "sjf-bco-ff", "sjf-bco-ls", "sjf-bco-rand"):
        out.append(Case(f"sjf-bco/{policy}/seed0", _simulate(_sjf_bco_scenario, policy, 0)))
    for policy in TASKLEVEL:
        out.append(Case(f"tasklevel48/{policy}/seed0", _simulate(_tasklevel_scenario, policy, 0), slow=True))
    for seed, mode in ((0, "random"), (1, "greedy")):
        out.append(Case(f"env-default10g/{mode}/seed{seed}", _env_trajectory(_old_default_scenario, seed, mode)))
    out.append(Case("env-small/random/seed2", _env_trajectory(_small_scenario, 2, "random")))
    out.append(Case("placement-env-small/random/seed0", _env_trajectory(_small_scenario, 0, "random", "placement")))
    out.append(Case("mcts-small/seed0", _simulate(_small_scenario, "mcts:guide=srsf+pack,sims=2,depth=5", 0), slow=True))
    return out


def main(argv: list[str]) -> int:
    if "--write" not in argv:
        print("usage: python -m tests.golden_cases --write   (records digests from the current code)")
        return 2
    digests = {case.name: case.run() for case in cases()}
    GOLDEN_FILE.parent.mkdir(parents=True, exist_ok=True)
    GOLDEN_FILE.write_text(json.dumps(digests, indent=1, sort_keys=True) + "\n")
    print(f"wrote {len(digests)} digests to {GOLDEN_FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
