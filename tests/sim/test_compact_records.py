"""Compact per-job storage (issue 13, memory): GpuIdTable, the placement view over the GPU-id log,
released state of finished jobs, and results identical to the list-of-tuples records they replace."""

from __future__ import annotations

import pickle
from array import array

import numpy as np
import pytest

from ddl_gym.baselines.classic.policy import ClassicPolicy
from ddl_gym.sim.compact import GpuIdTable, float_column, int_column
from ddl_gym.sim.engine import Simulator, run_policy
from ddl_gym.sim.perf import RARContentionModel
from tests.conftest import make_cluster, make_workload

RAR = RARContentionModel(xi1=1.0, xi2=1e-3, alpha=0.5, reduce_bytes_per_s=1e11)


def test_gpu_id_table_is_a_read_only_sequence_of_the_same_tuples():
    rows = [(3, 1), (), (0,), (4, 5, 6, 7)]
    table = GpuIdTable.from_tuples(rows)
    assert len(table) == 4 and list(table) == rows and table.tolist() == rows
    assert table[0] == (3, 1) and table[1] == () and table[-1] == (4, 5, 6, 7)
    assert table[1:3] == [(), (0,)] and table[::-2] == [(4, 5, 6, 7), ()]
    assert all(type(g) is int for ids in table for g in ids)  # plain ints, as tuple(p.tolist()) gave
    assert table == rows and rows == table and table == tuple(rows)
    assert table != rows[:3] and table != [(3, 1), (), (1,), (4, 5, 6, 7)]
    assert pickle.loads(pickle.dumps(table)) == rows
    with pytest.raises(IndexError):
        table[4]
    with pytest.raises(TypeError):
        hash(table)
    with pytest.raises(ValueError, match="offsets"):
        GpuIdTable(array("i"), array("q", [0]), array("i"))


def test_gpu_id_table_negative_count_means_never_placed():
    table = GpuIdTable(array("i", [7, 8]), array("q", [0, 0, 1]), array("i", [-1, 1, 1]))
    assert table.tolist() == [(), (7,), (8,)]


def test_columns_keep_the_exact_float64_and_int64_values():
    values = np.array([0.1, 1e300, -0.0, np.nan, 2.0 ** -1074])
    column = float_column(values)
    assert column.typecode == "d" and np.array_equal(np.array(column), values, equal_nan=True)
    assert np.array(column).tobytes() == values.tobytes()  # bit for bit (signed zero, subnormal)
    ints = int_column(np.array([2 ** 62, -5], dtype=np.int64))
    assert ints.typecode == "q" and list(ints) == [2 ** 62, -5]


def _finished_run(seed: int = 3) -> tuple[Simulator, object]:
    rng = np.random.default_rng(seed)
    n = 40
    wl = make_workload(rng.choice([1, 2, 3, 4, 6], n).tolist(), rng.integers(20, 300, n).tolist(),
                       np.sort(rng.uniform(0, 30, n)).tolist())
    sim = Simulator(make_cluster(3, 4), wl, RAR, debug=True)
    return sim, run_policy(sim, ClassicPolicy("fifo", "spread"), rng)


def test_finished_jobs_release_their_servers_but_keep_placement_and_span():
    sim, result = _finished_run()
    assert result.completed
    assert all(s == () for s in sim.servers)  # released at completion
    assert max(result.n_servers) > 1  # ... while the records keep each job's span
    for j, ids in enumerate(result.gpu_ids):
        placement = sim.placement[j]
        assert placement.dtype == np.int64 and tuple(placement.tolist()) == ids
        assert len(ids) == sim.workload.gpus[j]
        assert result.n_servers[j] == len(set(sim.gpu_server[list(ids)].tolist()))
    assert len(sim.placement) == sim.workload.num_jobs and sum(1 for _ in sim.placement) == len(sim.placement)


def test_placement_view_before_start_while_running_and_after_preemption():
    sim = Simulator(make_cluster(2, 4), make_workload([2, 1], [100, 300]), RAR, debug=True)
    sim.capabilities = frozenset({"preempt"})
    assert sim.placement[0] is None and sim.result().gpu_ids == [(), ()]
    sim.start(0, [0, 4])
    held = sim.placement[0]
    assert held.tolist() == [0, 4] and sim.servers[0] == (0, 1)
    sim.preempt(0)
    assert sim.placement[0].tolist() == [0, 4]  # the last holding, as the records report it
    assert sim.servers[0] == (0, 1)  # a preempted job keeps its servers (it is not finished)
    sim.start(0, [2, 3])
    sim.start(1, [5])
    while sim.advance():
        pass
    result = sim.result()
    assert result.gpu_ids == [(2, 3), (5,)] and result.n_servers.tolist() == [1, 1]


def test_fork_copies_the_compact_columns():
    rng = np.random.default_rng(0)
    wl = make_workload([1, 2, 4, 1], [50, 80, 120, 60], [0.0, 0.5, 1.0, 1.5])
    sim = Simulator(make_cluster(2, 4), wl, RAR)
    policy = ClassicPolicy("fifo", "pack")
    policy.reset(sim, rng)
    policy.schedule(sim)
    sim.advance()
    twin = sim.fork()
    for name in ("remaining", "tau", "_last", "start_time", "finish_time", "_gpu_log", "_gpu_count", "_span"):
        mine, theirs = getattr(sim, name), getattr(twin, name)
        assert theirs.tobytes() == mine.tobytes() and theirs is not mine, name  # bytes: NaN-safe equality
    run_policy(twin, ClassicPolicy("fifo", "pack"))
    assert np.isnan(sim.finish_time[3]) and not np.isnan(twin.finish_time[3])
    assert twin.result().gpu_ids == run_policy(sim, ClassicPolicy("fifo", "pack")).gpu_ids
