"""Golden digests of the task-level engine on many random configurations (recorded before a speed-up).

Each configuration is drawn from its own seed with plain numpy draws (no workload generator, so a
change elsewhere cannot move it): cluster shape (homogeneous or not, 1–4 GPUs per server), GPU
memory, eq. (5) parameters, jobs (sizes, iterations, arrivals, custom or Table III profiles),
placement rule, admission rule, GPU sharing on/off, replication of the authors' probe defect on/off
(AdaDUAL only), the engine's ``fast`` flag on/off, debug on/off. A digest covers the schedule: every
job's start, finish and placement time and its GPUs; in debug mode also every compute task's
``(GPU, start, end, job)``. The 16 placement × admission combinations of the paper's 160-job
episode (scenario ``ada-srsf``, seed 0) are recorded too; they take minutes, so the test suite
checks only the small configurations and ``scripts/bench_tasklevel.py`` checks the paper ones.

``python -m tests.tasklevel_golden --write`` records ``tests/golden/tasklevel_digests.json`` from
the current code (only when a behaviour change is intended, and say so in the commit).
"""

from __future__ import annotations

import hashlib
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

GOLDEN_FILE = Path(__file__).parent / "golden" / "tasklevel_digests.json"
NUM_RANDOM = 240
PLACEMENTS = ("lwf1", "lwf2", "ls", "ff", "rand")
COMMS = ("ada", "srsf1", "srsf2", "srsf3")
PAPER_COMBOS = [(p, c) for p in ("lwf1", "rand", "ff", "ls") for c in ("ada", "srsf1", "srsf2", "srsf3")]

B, ETA = 8.56e-10, 2.35e-10


@dataclass(frozen=True)
class Config:
    """One random task-level world and how to run it."""

    seed: int
    cluster: Any
    workload: Any
    model: Any
    placement: str
    comm: str
    gpu_sharing: bool
    probe_defect: bool
    fast: bool
    debug: bool

    @property
    def name(self) -> str:
        flags = "".join((
            "S" if self.gpu_sharing else "x", "P" if self.probe_defect else "x",
            "F" if self.fast else "x", "D" if self.debug else "x",
        ))
        return f"random{self.seed:03d}/{self.placement}+{self.comm}/{flags}/{self.workload.num_jobs}j{self.cluster.num_gpus}g"


def random_config(seed: int) -> Config:
    """Configuration ``seed`` (deterministic, independent of every other module's randomness)."""
    from ddl_gym.sim.model import ClusterSpec, ModelProfile, Workload
    from ddl_gym.sim.perf import AllReduceContentionModel
    from ddl_gym.sim.zoo import MODEL_ZOO, TABLE_III_MODELS

    rng = np.random.default_rng(1_000_003 + seed)
    servers = int(rng.integers(1, 9))
    if rng.random() < 0.25:
        per_server = tuple(int(x) for x in rng.integers(1, 5, size=servers))
    else:
        per_server = (int(rng.integers(1, 5)),) * servers
    memory = float(rng.choice([8_000.0, 12_000.0, 16_384.0]))
    cluster = ClusterSpec(per_server, gpu_memory_mb=memory)
    model = AllReduceContentionModel(a=float(rng.choice([0.0, 0.0, 6.69e-4])), b=B,
                                     eta=float(rng.choice([0.0, ETA, ETA, 3 * ETA])))
    profiles = [MODEL_ZOO[m] for m in TABLE_III_MODELS]
    for i in range(int(rng.integers(0, 4))):
        tf = int(rng.integers(1, 60)) * 1e-3 + float(rng.choice([0.0, 0.37e-3]))
        tb = int(rng.integers(1, 90)) * 1e-3
        profiles.append(ModelProfile(f"custom{i}", gradient_bytes=float(rng.integers(1, 700)) * 1e6, forward_s=tf,
                                     backward_s=tb, batch_size=16,
                                     gpu_memory_mb=float(rng.integers(500, int(memory) + 1))))
    n = int(rng.integers(2, 41))
    sizes = [g for g in (1, 2, 3, 4, 8, 16, 32) if g <= cluster.num_gpus]
    weights = np.array([8.0, 3.0, 1.0, 3.0, 2.0, 1.0, 0.5][:len(sizes)])
    gpus = rng.choice(sizes, size=n, p=weights / weights.sum())
    debug = bool(rng.random() < 0.5)  # debug runs check invariants at every decision point: keep them shorter
    iters = rng.integers(1, int(rng.choice([10, 60, 200] if debug else [10, 60, 300, 1500])) + 1, size=n)
    window = float(rng.choice([0.0, 1.0, 5.0, 30.0]))
    if rng.random() < 0.5:
        arrival = np.sort(rng.integers(0, int(window) + 1, size=n)).astype(float)  # whole seconds: ties
    else:
        arrival = np.sort(rng.random(n) * window)
    models = [profiles[int(k)] for k in rng.integers(0, len(profiles), size=n)]
    workload = Workload.from_jobs(arrival=arrival.tolist(), gpus=gpus.tolist(), iterations=iters.tolist(),
                                  models=models, name=f"tasklevel-golden-{seed}")
    placement = PLACEMENTS[int(rng.integers(0, len(PLACEMENTS)))]
    comm = COMMS[int(rng.integers(0, len(COMMS)))]
    gpu_sharing = bool(rng.random() < 0.7)
    probe_defect = comm == "ada" and bool(rng.random() < 0.5)
    fast = bool(rng.random() < 0.7)
    return Config(seed, cluster, workload, model, placement, comm, gpu_sharing, probe_defect, fast, debug)


def _schedule_digest(sim: Any, result: Any) -> str:
    h = hashlib.sha256()
    h.update(np.ascontiguousarray(result.start, dtype=np.float64).tobytes())
    h.update(np.ascontiguousarray(result.finish, dtype=np.float64).tobytes())
    h.update(np.asarray(sim.placed_ns, dtype=np.int64).tobytes())
    h.update(repr([tuple(int(g) for g in ids) for ids in result.gpu_ids]).encode())
    if sim.debug:
        h.update(repr([sorted(ivs) for ivs in sim._intervals]).encode())
    return h.hexdigest()


def run_config(config: Config) -> str:
    """Digest of the schedule the current engine gives for ``config``."""
    from ddl_gym.baselines.ada_srsf.policy import make_comm_rule, make_placement
    from ddl_gym.sim.tasklevel import TaskLevelSimulator

    comm = make_comm_rule(config.comm, config.model, replicate_probe_defect=config.probe_defect)
    sim = TaskLevelSimulator(
        config.cluster, config.workload, config.model, placement=make_placement(config.placement),
        comm_admission=comm, rng=np.random.default_rng(config.seed), gpu_sharing=config.gpu_sharing,
        fast=config.fast, debug=config.debug, probe_defect=config.probe_defect,
    )
    return _schedule_digest(sim, sim.run())


def paper_digest(placement: str, comm: str, seed: int = 0) -> str:
    """Digest of one combination on the paper's 160-job episode (scenario ``ada-srsf``)."""
    from ddl_gym.baselines.ada_srsf.policy import AdaSRSFPolicy
    from ddl_gym.scenarios import get_scenario

    scenario = get_scenario("ada-srsf")
    cluster, workload = scenario.episode(seed)
    policy = AdaSRSFPolicy(placement, comm)
    sim = policy.make_simulator(scenario, cluster, workload, np.random.default_rng(seed))
    return _schedule_digest(sim, sim.run())


def random_configs() -> list[Config]:
    return [random_config(seed) for seed in range(NUM_RANDOM)]


def main(argv: list[str]) -> int:
    if "--write" not in argv:
        print("usage: python -m tests.tasklevel_golden --write [--no-paper]  (records digests from the current code)")
        return 2
    digests: dict[str, Any] = {"random": {c.name: run_config(c) for c in random_configs()}}
    if "--no-paper" not in argv:
        digests["paper160"] = {f"{p}+{c}/seed0": paper_digest(p, c) for p, c in PAPER_COMBOS}
    elif GOLDEN_FILE.exists():
        digests["paper160"] = json.loads(GOLDEN_FILE.read_text()).get("paper160", {})
    GOLDEN_FILE.parent.mkdir(parents=True, exist_ok=True)
    GOLDEN_FILE.write_text(json.dumps(digests, indent=1, sort_keys=True) + "\n")
    print(f"wrote {len(digests['random'])} random and {len(digests.get('paper160', {}))} paper digests to {GOLDEN_FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
