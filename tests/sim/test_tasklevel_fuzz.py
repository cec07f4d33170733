"""Property-based fuzzing of the task-level engine with degenerate inputs (zero durations allowed).

Instances are drawn by hypothesis (derandomized: the same examples on every run) with compute
times, message sizes and GPU memory that may be zero or round to zero nanoseconds. Every instance
must either be rejected at construction with a one-line :class:`ConfigError` that names the model
and the field (a compute task of zero duration: the engine needs ``forward_s`` and ``backward_s``
of at least 1 ns), or run to completion with every debug invariant checked at every decision
point, and the fast path must give exactly the reference path's schedule.

A second strategy (``zero_comm_instances``) draws busier instances whose all-reduces are often of
zero length (``gradient_bytes = 0`` with ``a = 0``): there a multi-server job's iteration boundary
is two decision points at one instant (the backward tasks end; the zero-length all-reduce ends),
which is where the fast path once double-booked GPUs (issue 30). Every instance must run with
identical fast/reference schedules and no GPU running two compute tasks at once.

``python -m tests.sim.test_tasklevel_fuzz [N]`` runs N examples and prints how many were tried,
rejected and passed.
"""

from __future__ import annotations

import sys
from collections import Counter

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ddl_gym.baselines.ada_srsf.policy import make_comm_rule, make_placement
from ddl_gym.sim.model import ClusterSpec, ConfigError, ModelProfile, Workload
from ddl_gym.sim.perf import AllReduceContentionModel
from ddl_gym.sim.tasklevel import NS_PER_S, TaskLevelSimulator

TALLY: Counter[str] = Counter()
DURATIONS = [0.0, 1e-10, 4e-10, 6e-10, 1e-9, 1e-6, 1e-3, 0.01, 0.037]
MESSAGES = [0.0, 1.0, 1e3, 1e6, 1e8]
MEMORY = [0.0, 100.0, 5000.0, 9000.0]


@st.composite
def instances(draw: st.DrawFn) -> dict:
    servers = draw(st.integers(1, 3))
    per_server = draw(st.integers(1, 3))
    cluster = ClusterSpec.homogeneous(servers, per_server, gpu_memory_mb=16_384)
    profiles = [
        ModelProfile(f"m{i}", gradient_bytes=draw(st.sampled_from(MESSAGES)),
                     forward_s=draw(st.sampled_from(DURATIONS)), backward_s=draw(st.sampled_from(DURATIONS)),
                     batch_size=8, gpu_memory_mb=draw(st.sampled_from(MEMORY)))
        for i in range(draw(st.integers(1, 3)))
    ]
    n = draw(st.integers(1, 6))
    jobs = [(draw(st.sampled_from([0.0, 0.0, 1e-9, 0.5, 1.0])), draw(st.integers(1, cluster.num_gpus)),
             draw(st.integers(1, 6)), draw(st.sampled_from(profiles))) for _ in range(n)]
    workload = Workload.from_jobs(arrival=[j[0] for j in jobs], gpus=[j[1] for j in jobs],
                                  iterations=[j[2] for j in jobs], models=[j[3] for j in jobs], name="fuzz")
    comm = draw(st.sampled_from(["ada", "srsf1", "srsf2"]))
    return {
        "cluster": cluster, "workload": workload,
        "model": AllReduceContentionModel(a=draw(st.sampled_from([0.0, 1e-9, 6.69e-4])), b=8.56e-10,
                                          eta=draw(st.sampled_from([0.0, 2.35e-10]))),
        "placement": draw(st.sampled_from(["lwf1", "ff", "ls", "rand"])), "comm": comm,
        "gpu_sharing": draw(st.booleans()), "probe_defect": comm == "ada" and draw(st.booleans()),
    }


@st.composite
def zero_comm_instances(draw: st.DrawFn) -> dict:
    """Up to 9 jobs of up to 12 iterations on up to 4 × 3 GPUs, many with zero-length all-reduces."""
    servers = draw(st.integers(2, 4))
    per_server = draw(st.integers(1, 3))
    cluster = ClusterSpec.homogeneous(servers, per_server, gpu_memory_mb=16_384)
    profiles = [
        ModelProfile(f"m{i}", gradient_bytes=draw(st.sampled_from([0.0, 0.0, 1e6, 1e8])),
                     forward_s=draw(st.sampled_from([1e-9, 1e-3, 0.01, 0.037])),
                     backward_s=draw(st.sampled_from([1e-9, 1e-3, 0.01, 0.05])),
                     batch_size=8, gpu_memory_mb=draw(st.sampled_from([0.0, 100.0, 5000.0, 9000.0])))
        for i in range(draw(st.integers(1, 3)))
    ]
    n = draw(st.integers(2, 9))
    jobs = [(draw(st.sampled_from([0.0, 0.0, 0.5, 1.0, 2.0])), draw(st.integers(1, cluster.num_gpus)),
             draw(st.integers(1, 12)), draw(st.sampled_from(profiles))) for _ in range(n)]
    workload = Workload.from_jobs(arrival=[j[0] for j in jobs], gpus=[j[1] for j in jobs],
                                  iterations=[j[2] for j in jobs], models=[j[3] for j in jobs], name="fuzz0")
    return {
        "cluster": cluster, "workload": workload,
        "model": AllReduceContentionModel(a=draw(st.sampled_from([0.0, 0.0, 6.69e-4])), b=8.56e-10,
                                          eta=draw(st.sampled_from([0.0, 2.35e-10]))),
        "placement": draw(st.sampled_from(["lwf1", "lwf2", "ff", "ls", "rand"])),
        "comm": draw(st.sampled_from(["ada", "srsf1", "srsf2", "srsf3"])),
        "gpu_sharing": draw(st.booleans()), "probe_defect": False,
    }


def double_bookings(intervals: list[list[tuple[int, int, int]]]) -> list[tuple[int, tuple, tuple]]:
    """Per GPU, the pairs of compute tasks whose ``[start, end)`` intervals overlap."""
    clashes = []
    for g, tasks in enumerate(intervals):
        ordered = sorted(tasks)
        for before, after in zip(ordered, ordered[1:]):
            if after[0] < before[1]:
                clashes.append((g, before, after))
    return clashes


def _run(inst: dict, fast: bool) -> tuple:
    sim = TaskLevelSimulator(
        inst["cluster"], inst["workload"], inst["model"], placement=make_placement(inst["placement"]),
        comm_admission=make_comm_rule(inst["comm"], inst["model"], replicate_probe_defect=inst["probe_defect"]),
        rng=np.random.default_rng(0), gpu_sharing=inst["gpu_sharing"], fast=fast, debug=True,
        probe_defect=inst["probe_defect"],
    )
    sim.run()  # debug: invariants after every decision point and at the end
    return sim.start_ns, sim.finish_ns, sim.placed_ns, sim.job_gpus, sim.task_intervals()


def check_instance(inst: dict) -> str:
    """``"rejected"`` or ``"passed"``; raises on any failure."""
    TALLY["tried"] += 1
    zero = [(m.name, field) for m in inst["workload"].models for field in ("forward_s", "backward_s")
            if round(getattr(m, field) * NS_PER_S) == 0]
    try:
        reference = _run(inst, fast=False)
    except ConfigError as exc:
        message = str(exc)
        assert zero, f"rejected although every compute time is >= 1 ns: {message}"
        assert "\n" not in message
        assert any(name in message and field in message for name, field in zero), message
        TALLY["rejected"] += 1
        return "rejected"
    assert not zero, f"accepted a zero-duration compute task: {zero}"
    assert not double_bookings(reference[4]), "reference path ran two tasks at once on a GPU"
    fast = _run(inst, fast=True)
    assert not double_bookings(fast[4]), "fast path ran two tasks at once on a GPU"
    assert reference == fast, "fast path and reference path disagree"
    TALLY["passed"] += 1
    return "passed"


@settings(max_examples=150, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances())
def test_degenerate_instances_are_rejected_by_name_or_run_with_invariants(inst: dict) -> None:
    check_instance(inst)


@settings(max_examples=120, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(zero_comm_instances())
def test_zero_length_allreduces_fast_path_equals_reference(inst: dict) -> None:
    assert check_instance(inst) == "passed"


def test_zero_length_allreduce_regression() -> None:
    """Issue 30's case: two zero-size multi-server jobs beside a 7-GPU job with real all-reduces
    (SRSF(2), LWF-1). The fast path once undid a backward task another job had started at the
    instant of a zero-length all-reduce and ran two jobs' tasks on GPU 0 at once."""
    cluster = ClusterSpec.homogeneous(4, 3, gpu_memory_mb=16_384)
    small = ModelProfile("m0", gradient_bytes=0.0, forward_s=1e-9, backward_s=1e-3, batch_size=8, gpu_memory_mb=100)
    wide = ModelProfile("m1", gradient_bytes=1e8, forward_s=0.037, backward_s=1e-9, batch_size=8, gpu_memory_mb=100)
    big = ModelProfile("m2", gradient_bytes=1e8, forward_s=0.01, backward_s=0.05, batch_size=8, gpu_memory_mb=9000)
    workload = Workload.from_jobs(arrival=[0, 0, 0, 0, 0, 0.5, 1.0, 2.0], gpus=[9, 12, 7, 7, 7, 6, 4, 6],
                                  iterations=[15, 24, 19, 10, 29, 23, 29, 21],
                                  models=[small, wide, small, big, big, big, big, wide], name="issue30")
    inst = {"cluster": cluster, "workload": workload, "model": AllReduceContentionModel(a=0.0, b=8.56e-10, eta=0.0),
            "placement": "lwf1", "comm": "srsf2", "gpu_sharing": True, "probe_defect": False}
    assert check_instance(inst) == "passed"


def test_double_bookings_finds_an_overlap() -> None:
    """The invariant helper itself can fail: overlapping intervals on a GPU are reported."""
    assert double_bookings([[(0, 5, 0), (5, 9, 1)], [(0, 5, 0)]]) == []
    assert double_bookings([[(0, 5, 0), (4, 9, 1)]]) == [(0, (0, 5, 0), (4, 9, 1))]


def test_zero_compute_time_is_a_named_config_error() -> None:
    """The crash of issue 12: a custom model with zero compute time (was a ZeroDivisionError)."""
    cluster = ClusterSpec.homogeneous(2, 2)
    model = AllReduceContentionModel()
    for field in ("forward_s", "backward_s"):
        times = {"forward_s": 0.01, "backward_s": 0.02, field: 0.0}
        profile = ModelProfile("instant", gradient_bytes=1e6, batch_size=8, gpu_memory_mb=100, **times)
        wl = Workload.from_jobs(arrival=[0.0], gpus=[2], iterations=[3], models=[profile])
        try:
            TaskLevelSimulator(cluster, wl, model, placement=make_placement("ff"), comm_admission=make_comm_rule("ada", model))
        except ConfigError as exc:
            assert "'instant'" in str(exc) and field in str(exc)
        else:
            raise AssertionError(f"{field} = 0 was accepted")


def _tally_only(inst: dict) -> None:
    """``__main__`` mode: count a failure instead of stopping (and shrinking) at the first one."""
    try:
        check_instance(inst)
    except Exception as exc:  # noqa: BLE001 - every failure kind is counted
        TALLY[f"failed: {type(exc).__name__}"] += 1


if __name__ == "__main__":
    examples = int(sys.argv[1]) if len(sys.argv) > 1 else 1500
    settings(max_examples=examples, derandomize=True, deadline=None, database=None,
             suppress_health_check=list(HealthCheck))(given(instances())(_tally_only))()
    failed = {k: v for k, v in TALLY.items() if k.startswith("failed")}
    print(f"fuzzed instances: {TALLY['tried']} tried, {TALLY['rejected']} rejected with a named ConfigError, "
          f"{TALLY['passed']} passed every debug invariant with identical fast/reference schedules, "
          f"{sum(failed.values())} failed {failed or ''}")
