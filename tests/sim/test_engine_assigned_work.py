"""``Simulator.gpu_assigned_work``: starts queue their additions; what a reader sees is the same
float64 array, bit for bit, as adding ``F_j·τ̂_j`` to each GPU of a job at its start."""

from __future__ import annotations

import numpy as np

from ddl_gym.placement import pack
from ddl_gym.sim.engine import _WORK_BATCH, Simulator
from tests.conftest import make_cluster, make_workload


def _fifo_pack(sim: Simulator, read_each_start: bool) -> np.ndarray:
    """Run FIFO + pack; returns the expected work, accumulated independently at each start."""
    expected = np.zeros(sim.cluster.num_gpus)
    rng = np.random.default_rng(0)
    while not sim.done:
        while sim.queue:
            job = sim.queue[0]
            ids = pack(sim, job, rng)
            if ids is None:
                break
            sim.start(job, ids)
            for gpu in ids.tolist():
                expected[gpu] += sim.workload.iterations[job] * sim.nominal_iteration_time(job)
            if read_each_start:
                assert sim.gpu_assigned_work.tolist() == expected.tolist()
        if not sim.done:
            sim.advance()
    return expected


def test_queued_work_equals_work_added_at_every_start() -> None:
    n = _WORK_BATCH * 2 + 37  # more starts than two batches, and a remainder
    rng = np.random.default_rng(5)
    gpus = rng.choice([1, 1, 2, 4, 8, 12], n).tolist()
    arrival = np.cumsum(rng.exponential(0.5, n)).tolist()
    cluster = make_cluster(8, 8)
    make = lambda: Simulator(cluster, make_workload(gpus, rng_iters.tolist(), arrival))  # noqa: E731
    rng_iters = rng.integers(10, 400, n)
    batched = make()
    expected = _fifo_pack(batched, read_each_start=False)
    assert batched.gpu_assigned_work.tolist() == expected.tolist()
    assert not batched._pending_work
    eager = make()
    _fifo_pack(eager, read_each_start=True)
    assert eager.gpu_assigned_work.tolist() == expected.tolist()


def test_a_fork_carries_the_queued_work_and_keeps_its_own() -> None:
    sim = Simulator(make_cluster(2, 4), make_workload([1, 2, 1], [100, 200, 300]))
    sim.start(0, [0])
    twin = sim.fork()
    sim.start(1, [1, 2])
    assert twin.gpu_assigned_work.tolist() == [100 * sim.nominal_iteration_time(0)] + [0.0] * 7
    assert sim.gpu_assigned_work[[1, 2]].tolist() == [200 * sim.nominal_iteration_time(1)] * 2
