"""Fuzz every engine with its debug invariant checks on, and the task-level fast path against its reference.

Three families of runs, each drawn from a fixed seed (the same runs every time):

* ``job``: the job-level engine (:class:`ddl_gym.sim.engine.Simulator`) on random clusters and
  workloads (1–12 jobs, random model profiles including zero-size gradients and zero compute,
  RAR or all-reduce rate models with random parameters), driven by a random classic policy.
* ``task``: the task-level engine (:class:`ddl_gym.sim.tasklevel.TaskLevelSimulator`) on random
  instances with zero-length all-reduces (``gradient_bytes = 0``, ``a = 0``), 1-ns compute
  tasks and GPU sharing; every instance runs on the fast path and on the reference path
  (``fast=False``), which must give identical schedules (start, finish, placement, every task
  interval) and never run two tasks on one GPU at once.
* ``self``: self-driving policies (sjf-bco, mcts, ada-srsf, srsf<n>+lwf<k>, smd, esw, a-online,
  drf, tiresias) on the first jobs of random episodes of their scenarios; the task-level ones
  also with ``fast=False`` (same finish times required).

Every run is inside :func:`ddl_gym.sim.checks.invariant_checks`, so every engine a policy builds
checks its invariants. Printed figures: runs, invariant checks, violations (an
``InvariantError`` or any other unexpected exception), fast-vs-reference disagreements, and
refusals (inputs refused with a named ``ConfigError``, e.g. zero-time iterations: not failures).

``python scripts/fuzz_engines.py [--runs N] [--seed S]`` (N runs per family; default 1000).
``tests/sim/test_engine_fuzz.py`` runs a small budget of the same in the test suite.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np

from ddl_gym.sim.checks import invariant_checks
from ddl_gym.sim.model import ClusterSpec, ConfigError, ModelProfile, Workload

FAMILIES = ("job", "task", "self")
CLASSIC = [f"{order}+{place}" for order in ("fifo", "sjf", "srsf") for place in ("ff", "ls", "rand", "pack", "spread", "ca")]
#: (policy spec, scenario, most jobs per episode, task-level: also compared with fast=false)
SELF_DRIVING: list[tuple[str, str, int, bool]] = [
    ("sjf-bco", "small", 12, False),
    ("mcts:guide=srsf+pack,sims=2", "small", 5, False),
    ("ada-srsf", "ada-srsf", 12, True),
    ("srsf3+lwf2", "ada-srsf", 12, True),
    ("srsf1+rand", "ada-srsf", 12, True),
    ("smd", "smd-sync", 8, False),
    ("esw", "smd-async", 8, False),
    ("a-online", "aonline-ps-small", 30, False),
    ("drf", "aonline-ps-small", 30, False),
    ("tiresias", "aonline-ps-small", 30, False),
]


@dataclasses.dataclass
class Tally:
    """The figures of a fuzz run (per family and in total)."""

    runs: Counter = dataclasses.field(default_factory=Counter)
    checks: Counter = dataclasses.field(default_factory=Counter)
    violations: Counter = dataclasses.field(default_factory=Counter)
    disagreements: Counter = dataclasses.field(default_factory=Counter)
    refused: Counter = dataclasses.field(default_factory=Counter)
    failures: list[str] = dataclasses.field(default_factory=list)

    def line(self, family: str | None = None) -> str:
        def pick(c: Counter) -> int:
            return c[family] if family else sum(c.values())

        return (f"{family or 'total'}: runs={pick(self.runs)} invariant_checks={pick(self.checks)} "
                f"violations={pick(self.violations)} fast_vs_reference_disagreements={pick(self.disagreements)} "
                f"refused_by_name={pick(self.refused)}")


def _checked(tally: Tally, family: str, label: str, run: Callable[[], Any]) -> Any:
    """Run ``run()`` in an invariant-check session; count it. Returns its value, or None."""
    tally.runs[family] += 1
    with invariant_checks() as session:
        try:
            value = run()
        except ConfigError as exc:  # a named refusal of the input, not a failure
            tally.refused[family] += 1
            tally.checks[family] += session.checks
            if "\n" in str(exc):
                tally.violations[family] += 1
                tally.failures.append(f"{label}: multi-line ConfigError")
            return None
        except Exception as exc:  # noqa: BLE001 - every failure kind is counted
            tally.checks[family] += session.checks
            tally.violations[family] += 1
            tally.failures.append(f"{label}: {type(exc).__name__}: {str(exc)[:200]}")
            return None
    tally.checks[family] += session.checks
    if session.checks == 0:
        tally.violations[family] += 1
        tally.failures.append(f"{label}: ran no invariant checks")
    return value


# ----------------------------------------------------------------------------- job-level engine
def job_instance(rng: np.random.Generator) -> tuple[ClusterSpec, Workload, Any, str]:
    from ddl_gym.sim.perf import AllReduceContentionModel, RARContentionModel

    servers = int(rng.integers(1, 5))
    cluster = ClusterSpec(tuple(int(g) for g in rng.choice([1, 2, 4, 8], size=servers)),
                          inter_bandwidth=float(rng.choice([1.25e9, 12.5e9])))
    profiles = [ModelProfile(f"m{i}", gradient_bytes=float(rng.choice([0.0, 1e6, 1e8, 5e8])),
                             forward_s=float(rng.choice([0.0, 1e-9, 0.01, 0.1])),
                             backward_s=float(rng.choice([0.0, 1e-9, 0.02, 0.2])), batch_size=8, gpu_memory_mb=100.0)
                for i in range(int(rng.integers(1, 4)))]
    n = int(rng.integers(1, 13))
    workload = Workload.from_jobs(
        arrival=sorted(float(x) for x in rng.choice([0.0, 0.0, 1.0, 10.0, 100.0], size=n)),
        gpus=[int(rng.integers(1, cluster.max_server_gpus * (2 if servers > 1 else 1) + 1)) for _ in range(n)],
        iterations=[int(rng.integers(1, 300)) for _ in range(n)],
        models=[profiles[int(rng.integers(len(profiles)))] for _ in range(n)], name="fuzz-job")
    workload = workload.subset(np.flatnonzero(workload.gpus <= cluster.num_gpus))
    if rng.random() < 0.5:
        model: Any = RARContentionModel(xi1=float(rng.choice([0.3, 0.6, 1.0])), xi2=float(rng.choice([0.0, 1e-3])),
                                        alpha=float(rng.choice([0.0, 0.275, 1.0])))
    else:
        model = AllReduceContentionModel(a=float(rng.choice([0.0, 6.69e-4])), eta=float(rng.choice([0.0, 2.35e-10])))
    return cluster, workload, model, str(rng.choice(CLASSIC))


def fuzz_job(tally: Tally, runs: int, seed: int) -> None:
    from ddl_gym.policies import make_policy
    from ddl_gym.sim.engine import Simulator, run_policy

    for k in range(runs):
        rng = np.random.default_rng([seed, 1, k])
        cluster, workload, model, policy = job_instance(rng)
        if workload.num_jobs == 0:
            continue
        _checked(tally, "job", f"job seed={seed} k={k} {policy}",
                 lambda: run_policy(Simulator(cluster, workload, model), make_policy(policy), np.random.default_rng(k)))


# ----------------------------------------------------------------------------- task-level engine
def task_instance(rng: np.random.Generator) -> dict[str, Any]:
    from ddl_gym.sim.perf import AllReduceContentionModel

    cluster = ClusterSpec.homogeneous(int(rng.integers(1, 5)), int(rng.integers(1, 4)), gpu_memory_mb=16_384)
    profiles = [ModelProfile(f"m{i}", gradient_bytes=float(rng.choice([0.0, 0.0, 1e6, 1e8])),
                             forward_s=float(rng.choice([1e-9, 1e-3, 0.01, 0.037])),
                             backward_s=float(rng.choice([1e-9, 1e-3, 0.01, 0.05])), batch_size=8,
                             gpu_memory_mb=float(rng.choice([0.0, 100.0, 5000.0, 9000.0])))
                for i in range(int(rng.integers(1, 4)))]
    n = int(rng.integers(1, 10))
    workload = Workload.from_jobs(
        arrival=[float(rng.choice([0.0, 0.0, 0.5, 1.0, 2.0])) for _ in range(n)],
        gpus=[int(rng.integers(1, cluster.num_gpus + 1)) for _ in range(n)],
        iterations=[int(rng.integers(1, 25)) for _ in range(n)],
        models=[profiles[int(rng.integers(len(profiles)))] for _ in range(n)], name="fuzz-task")
    return {"cluster": cluster, "workload": workload,
            "model": AllReduceContentionModel(a=float(rng.choice([0.0, 0.0, 6.69e-4])), b=8.56e-10,
                                              eta=float(rng.choice([0.0, 2.35e-10]))),
            "placement": str(rng.choice(["lwf1", "lwf2", "ff", "ls", "rand"])),
            "comm": str(rng.choice(["ada", "srsf1", "srsf2", "srsf3"])), "gpu_sharing": bool(rng.integers(2))}


def task_schedule(inst: dict[str, Any], fast: bool) -> tuple:
    """Start, finish, placement and every task interval of one task-level run (debug on)."""
    from ddl_gym.baselines.ada_srsf import make_comm_rule, make_placement
    from ddl_gym.sim.tasklevel import InvariantError, TaskLevelSimulator

    sim = TaskLevelSimulator(inst["cluster"], inst["workload"], inst["model"], placement=make_placement(inst["placement"]),
                             comm_admission=make_comm_rule(inst["comm"], inst["model"]), rng=np.random.default_rng(0),
                             gpu_sharing=inst["gpu_sharing"], fast=fast, debug=True)
    sim.run()
    intervals = sim.task_intervals()
    for g, tasks in enumerate(intervals):  # no GPU runs two compute tasks at once
        for before, after in zip(tasks, tasks[1:]):
            if after[0] < before[1]:
                raise InvariantError(f"GPU {g} double-booked: {before} and {after}")
    return sim.start_ns, sim.finish_ns, sim.placed_ns, sim.job_gpus, intervals


def fuzz_task(tally: Tally, runs: int, seed: int) -> None:
    for k in range(runs):
        inst = task_instance(np.random.default_rng([seed, 2, k]))
        label = f"task seed={seed} k={k} {inst['placement']}+{inst['comm']}"
        reference = _checked(tally, "task", label + " reference", lambda: task_schedule(inst, False))
        fast = _checked(tally, "task", label + " fast", lambda: task_schedule(inst, True))
        if reference is not None and fast is not None and reference != fast:
            tally.disagreements["task"] += 1
            tally.failures.append(f"{label}: fast path and reference path disagree")


# ----------------------------------------------------------------------------- self-driving policies
def _first_jobs(scenario: Any, k: int, most_iterations: int | None = None) -> Any:
    """``scenario`` cut to the first ``k`` jobs of each episode, each of at most ``most_iterations``."""
    draw = scenario.workload
    if not callable(draw) or getattr(scenario, "setup", None) is not None:
        return scenario  # A-Online worlds draw cluster and jobs together: whole (small) episodes

    def workload(rng: np.random.Generator, cluster: ClusterSpec) -> Workload:
        full = draw(rng, cluster)
        cut = full.subset(np.arange(min(k, full.num_jobs)))
        if most_iterations is not None:
            cut = dataclasses.replace(cut, iterations=np.minimum(cut.iterations, most_iterations))
        return cut

    return dataclasses.replace(scenario, workload=workload)


def fuzz_self(tally: Tally, runs: int, seed: int) -> None:
    from ddl_gym.policies import make_policy
    from ddl_gym.harness import simulate
    from ddl_gym.scenarios import get_scenario

    for k in range(runs):
        rng = np.random.default_rng([seed, 3, k])
        spec, name, most, task_level = SELF_DRIVING[k % len(SELF_DRIVING)]
        # Task-level episodes: at most 40 iterations a job (the reference path runs every task as an event).
        scenario = _first_jobs(get_scenario(name), int(rng.integers(2, most + 1)), 40 if task_level else None)
        episode = int(rng.integers(0, 10_000))
        label = f"self seed={seed} k={k} {spec} on {name} episode {episode}"
        run = _checked(tally, "self", label, lambda: simulate(make_policy(spec), scenario, episode, debug=True))
        if task_level and run is not None:
            ref = _checked(tally, "self", label + " fast=false",
                           lambda: simulate(make_policy(f"{spec}:fast=false"), scenario, episode, debug=True))
            if ref is not None and not np.array_equal(ref.result.finish, run.result.finish):
                tally.disagreements["self"] += 1
                tally.failures.append(f"{label}: fast path and fast=false disagree")


def fuzz(runs: dict[str, int], seed: int = 0) -> Tally:
    """Run ``runs[family]`` runs of each family from ``seed``; the tally of what happened."""
    tally = Tally()
    for family, fn in (("job", fuzz_job), ("task", fuzz_task), ("self", fuzz_self)):
        if runs.get(family):
            fn(tally, runs[family], seed)
    return tally


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1000, help="runs per family (task: each instance twice)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--families", default=",".join(FAMILIES), help="comma-separated subset of job,task,self")
    args = parser.parse_args(argv)
    families = [f.strip() for f in args.families.split(",") if f.strip()]
    unknown = [f for f in families if f not in FAMILIES]
    if unknown or args.runs < 1:
        parser.error(f"--families takes {', '.join(FAMILIES)}; --runs must be >= 1")
    t0 = time.perf_counter()
    tally = fuzz({f: args.runs for f in families}, args.seed)
    for family in families:
        print(tally.line(family))
    print(tally.line())
    print(f"({time.perf_counter() - t0:.0f} s; python scripts/fuzz_engines.py --runs {args.runs} --seed {args.seed} "
          f"--families {','.join(families)})")
    for failure in tally.failures[:20]:
        print("  FAILED", failure)
    return 1 if tally.failures else 0


if __name__ == "__main__":
    sys.exit(main())
