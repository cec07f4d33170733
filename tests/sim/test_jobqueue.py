"""JobQueue (``Simulator.queue``): reads exactly like the ascending list it replaces, O(1) head removal."""

from __future__ import annotations

import bisect
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ddl_gym.sim import Simulator
from ddl_gym.sim.engine import SimulationError
from ddl_gym.sim import jobqueue
from ddl_gym.sim.jobqueue import _MIN_TRIM, LAZY_DELETE_MIN, JobQueue
from tests.conftest import make_cluster, make_workload

# An operation: ("arrive", k) appends k new jobs, ("take", x) removes the job at relative position
# x ∈ [0, 1) of the queue (0 = the head), ("return", x) puts back a removed job at x of the removed ones.
OPERATIONS = st.lists(st.one_of(
    st.tuples(st.just("arrive"), st.integers(1, 40)),
    st.tuples(st.just("take"), st.one_of(st.just(0.0), st.floats(0.0, 0.999))),
    st.tuples(st.just("return"), st.floats(0.0, 0.999)),
), max_size=120)


def _replay(operations: list[tuple[str, float]], lazy_min: int = LAZY_DELETE_MIN) -> tuple[JobQueue, list[int]]:
    """Apply ``operations`` to a JobQueue and to a plain sorted list; return both. Queues of at least
    ``lazy_min`` jobs mark a non-head removal gone instead of deleting it (0: always)."""
    saved, jobqueue.LAZY_DELETE_MIN = jobqueue.LAZY_DELETE_MIN, lazy_min
    try:
        return _apply(operations)
    finally:
        jobqueue.LAZY_DELETE_MIN = saved


def _apply(operations: list[tuple[str, float]]) -> tuple[JobQueue, list[int]]:
    queue, reference, removed, next_job = JobQueue(), [], [], 0
    for op, arg in operations:
        if op == "arrive":
            for _ in range(int(arg)):
                queue.append(next_job)
                reference.append(next_job)
                next_job += 1
        elif op == "take" and reference:
            job = reference.pop(int(arg * len(reference)))
            queue.remove(job)
            removed.append(job)
        elif op == "return" and removed:
            job = removed.pop(int(arg * len(removed)))
            queue.insort(job)
            bisect.insort(reference, job)
    return queue, reference


@settings(max_examples=200, deadline=None)
@given(OPERATIONS, st.integers(-45, 45), st.integers(-45, 45), st.sampled_from([None, 1, 2, -1, -3]),
       st.sampled_from([0, 8, LAZY_DELETE_MIN]))
def test_reads_match_a_sorted_list(operations, a, b, step, lazy_min):
    queue, reference = _replay(operations, lazy_min)
    # First the reads that step over gone jobs without compacting (the env's window, the head)...
    assert len(queue) == len(reference) and bool(queue) == bool(reference)
    assert queue.first() == (reference[0] if reference else -1)
    if reference:
        assert queue[0] == reference[0]
    assert queue.head(max(a, 0)) == reference[: max(a, 0)] and queue[: max(b, 0)] == reference[: max(b, 0)]
    for job in set(reference[:3] + reference[-3:] + [-1, 10_000]):
        assert (job in queue) == (job in reference)
    # ...then every other read (these compact the buffer first).
    assert len(queue) == len(reference) and bool(queue) == bool(reference)
    assert list(queue) == reference and tuple(queue) == tuple(reference)
    assert queue == reference and reference == queue and not queue != reference
    assert list(reversed(queue)) == reference[::-1]
    for i in (a, b):
        if -len(reference) <= i < len(reference):
            assert queue[i] == reference[i]
        else:
            with pytest.raises(IndexError):
                queue[i]
    for s in (slice(a, b, step), slice(None, b), slice(a, None), slice(None, None, step)):
        assert queue[s] == reference[s], s
    assert queue.head(max(a, 0)) == reference[: max(a, 0)]
    assert queue.first() == (reference[0] if reference else -1)
    probes = set(reference[:3] + reference[-3:] + [-1, 10_000])
    for job in probes:
        assert (job in queue) == (job in reference)
        if job in reference:
            assert queue.index(job) == reference.index(job) and queue.count(job) == 1
        else:
            assert queue.count(job) == 0
            with pytest.raises(ValueError, match="not in the queue"):
                queue.index(job)
    assert np.asarray(queue).tolist() == reference and np.asarray(queue).dtype == np.int64
    twin = queue.copy()
    assert twin == queue
    assert pickle.loads(pickle.dumps(queue)) == reference


def test_head_removal_keeps_the_buffer_bounded():
    """Taking 10,000 heads while 10 more arrive each time: the vacated prefix is trimmed."""
    queue = JobQueue(range(100))
    next_job = 100
    for _ in range(10_000):
        head = queue[0]
        queue.remove(head)
        queue.append(next_job)
        next_job += 1
        assert len(queue._items) <= 2 * len(queue) + _MIN_TRIM
    assert list(queue) == list(range(10_000, 10_100))


def test_long_queue_marks_removals_gone_and_compacts():
    """In a queue of LAZY_DELETE_MIN+ jobs a non-head removal leaves the buffer in place (no O(queue)
    move); it is compacted once half of it is gone; the head skips gone jobs; a gone job can return."""
    n = 2 * LAZY_DELETE_MIN
    queue = JobQueue(range(n))
    buffer = queue._items
    for job in range(2, n // 2, 2):  # every other job of the first half, not the head
        queue.remove(job)
    assert queue._items is buffer and len(buffer) == n  # nothing moved
    assert len(queue) == n - len(range(2, n // 2, 2)) and 4 not in queue and 5 in queue
    queue.remove(0)
    queue.remove(1)  # the head: 2 is gone, so 3 becomes the head
    assert queue.first() == 3 and queue[0] == 3 and queue.head(3) == [3, 5, 7]
    queue.insort(6)  # a gone job coming back (a preempted job) is revived in place
    assert queue.head(3) == [3, 5, 6] and queue._items is buffer
    for job in range(n // 2, n - 1):  # now more than half is gone: compacted
        queue.remove(job)
    assert queue._items is not buffer and not queue._gone
    expected = [3, 5, 6] + list(range(7, n // 2, 2)) + [n - 1]
    assert list(queue) == expected and len(queue) == len(expected)
    with pytest.raises(ValueError, match="not in the queue"):
        queue.remove(4)


def test_copy_is_independent_and_bad_input_is_refused():
    queue = JobQueue([1, 4, 9])
    twin = queue.copy()
    queue.remove(1)
    twin.insort(2)
    assert queue == [4, 9] and twin == [1, 2, 4, 9]
    with pytest.raises(ValueError, match="job 7 is not in the queue"):
        queue.remove(7)
    with pytest.raises(ValueError, match="ascending"):
        JobQueue([3, 1])
    assert queue != (4, 9)  # like a list: a tuple is not equal
    with pytest.raises(TypeError):
        hash(queue)


def test_simulator_queue_and_its_fork():
    """FIFO starts from a queue of 200 waiting jobs: the queue, its fork and numpy indexing agree."""
    n = 200
    workload = make_workload([1] * n, [10] * n, [0.0] * n)
    sim = Simulator(make_cluster(2, 4), workload, debug=True)
    assert sim.queue == list(range(n))
    twin = sim.fork()
    for job in range(8):
        sim.start(job, [job])
    assert sim.queue == list(range(8, n)) and twin.queue == list(range(n))
    assert (sim.num_queued, twin.num_queued) == (n - 8, n)  # the counter the env and run_policy read
    assert workload.gpus[sim.queue].sum() == n - 8
    with pytest.raises(SimulationError, match="not in the queue"):
        sim.start(3, [3])


@pytest.mark.parametrize("policy", ["sjf+pack", "srsf+rand", "sjf-bco"])
def test_lazy_deletion_leaves_runs_unchanged(policy, monkeypatch):
    """SJF-like orders start jobs from deep in the queue: a run with every such removal marked gone
    (LAZY_DELETE_MIN = 0) equals a run with every one deleted at once, invariants checked per event."""
    from ddl_gym.policies import make_policy
    from ddl_gym.sim import run_policy

    rng = np.random.default_rng(3)
    n = 120
    workload = make_workload(rng.choice([1, 2, 4, 8], n).tolist(), rng.integers(50, 400, n).tolist(),
                             np.sort(rng.uniform(0, 50, n)).tolist())
    most_gone = []  # per run, the most jobs marked gone at once
    remove = JobQueue.remove

    def counting_remove(queue, job):
        remove(queue, job)
        most_gone[-1] = max(most_gone[-1], len(queue._gone))

    monkeypatch.setattr(JobQueue, "remove", counting_remove)
    results = []
    for lazy_min in (10**9, 0):
        monkeypatch.setattr(jobqueue, "LAZY_DELETE_MIN", lazy_min)
        most_gone.append(0)
        sim = Simulator(make_cluster(3, 4), workload, debug=True)
        result = run_policy(sim, make_policy(policy), np.random.default_rng(0))
        results.append((result.start.tolist(), result.finish.tolist()))
    assert results[0] == results[1]
    assert np.isfinite(results[0][1]).all()
    assert most_gone[0] == 0 and most_gone[1] >= 2  # the second run did take the lazy path
