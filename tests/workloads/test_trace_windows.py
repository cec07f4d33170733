"""Alibaba GPU v2023 loader, trace windows (train / eval split by time), scenario-file kinds."""

from __future__ import annotations

import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from ddl_gym.scenarios import get_scenario, load_scenario_file
from ddl_gym.sim.model import ClusterSpec, ConfigError
from ddl_gym.workloads.alibaba import AlibabaPods, load_alibaba, load_alibaba_nodes
from ddl_gym.workloads.philly import SAMPLE_PATH, default_trace_path
from ddl_gym.workloads.windows import (
    ALIBABA_EVAL_START_S,
    BUILTIN_TIME_SCALE,
    TraceWindowSource,
    calibrate_time_scale,
    trace_table,
    window_loads,
)

HEAD = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"
ROWS = [
    "openb-pod-0000,1000,1024,1,1000,,LS,Running,0,600,100",       # whole GPU, 500 s
    "openb-pod-0001,1000,1024,0,0,,BE,Succeeded,10,50,10",         # CPU only
    "openb-pod-0002,1000,1024,1,250,,BE,Running,20,2020,20",       # quarter GPU, 2000 s
    "openb-pod-0003,1000,1024,1,1000,,LS,Pending,30,90,",          # never scheduled
    "openb-pod-0004,1000,1024,8,1000,,LS,Running,40,1040,40",      # 8 GPUs, 1000 s
]


def write_pods(tmp_path: Path, rows: list[str] = ROWS, name: str = "pods.csv") -> Path:
    path = tmp_path / name
    path.write_text(HEAD + "\n".join(rows) + "\n")
    return path


# ----------------------------------------------------------------------------- Alibaba loader
def test_alibaba_mapping_and_fractional_modes(tmp_path: Path) -> None:
    path = write_pods(tmp_path)
    w, dropped = load_alibaba(path, iteration_time_s=1.0, return_dropped=True)
    assert w.job_id.tolist() == [0, 2, 4]
    assert w.arrival.tolist() == [0.0, 20.0, 40.0]
    assert w.gpus.tolist() == [1, 1, 8]
    assert w.iterations.tolist() == [500, 2000, 1000]  # "whole": duration as recorded
    assert dropped == {"malformed": 0, "cpu_only": 1, "unscheduled": 1, "fractional": 0, "oversized": 0}
    work = load_alibaba(path, fractional="work", iteration_time_s=1.0)
    assert work.iterations.tolist() == [500, 500, 1000]  # 2000 s x 250/1000 GPU
    drop, counts = load_alibaba(path, fractional="drop", iteration_time_s=1.0, return_dropped=True)
    assert drop.job_id.tolist() == [0, 4] and counts["fractional"] == 1
    with pytest.raises(ConfigError, match="fractional: must be one of whole, work, drop"):
        load_alibaba(path, fractional="share")


def test_alibaba_window_oversized_and_seeding(tmp_path: Path) -> None:
    path = write_pods(tmp_path)
    w = load_alibaba(path, start=15, end=100, iteration_time_s=1.0)
    assert w.job_id.tolist() == [2, 4] and w.arrival.tolist() == [0.0, 20.0]
    with pytest.warns(UserWarning, match="dropped 1 task"):
        small = load_alibaba(path, cluster=ClusterSpec.homogeneous(1, 4), iteration_time_s=1.0)
    assert small.gpus.max() == 1
    with pytest.raises(ConfigError, match=r"pods\.csv: line 6: column 'num_gpu': task needs 8 GPUs"):
        load_alibaba(path, cluster=ClusterSpec.homogeneous(1, 4), drop_oversized=False)
    a, b = load_alibaba(path, rng=3), load_alibaba(path, rng=3)
    assert np.array_equal(a.model_index, b.model_index) and np.array_equal(a.iterations, b.iterations)
    # without iteration_time_s: duration / the sampled model's compute time
    assert a.iterations[0] == max(1, round(500 / a.profile(0).compute_s))


@pytest.mark.parametrize(
    ("row", "column"),
    [
        ("openb-pod-0009,1,1,x,1000,,LS,Running,50,60,50", "num_gpu"),
        ("openb-pod-0009,1,1,1,0,,LS,Running,50,60,50", "gpu_milli"),
        ("openb-pod-0009,1,1,1,1500,,LS,Running,50,60,50", "gpu_milli"),
        ("openb-pod-0009,1,1,1,1000,,LS,Running,50,52,55", "deletion_time"),
        ("openb-pod-0009,1,1,1,1000,,LS,Running,50,60,20", "scheduled_time"),
        ("openb-pod-0009,1,1,1,1000,,LS,Running,abc,60,50", "creation_time"),
        ("openb-pod-0009,1,1,1,1000,,LS,Running,50,60,soon", "scheduled_time"),
    ],
)
def test_alibaba_bad_rows_name_file_line_column(tmp_path: Path, row: str, column: str) -> None:
    path = write_pods(tmp_path, ROWS[:2] + [row] + ROWS[2:], name="bad.csv")
    with pytest.raises(ConfigError) as info:
        load_alibaba(path)
    message = str(info.value)
    assert "bad.csv: line 4:" in message and repr(column) in message
    with pytest.warns(UserWarning, match="dropped 1 malformed"):
        w, dropped = load_alibaba(path, drop_malformed=True, return_dropped=True)
    assert dropped["malformed"] == 1 and w.job_id.tolist() == [0, 2, 4]


def test_alibaba_missing_column_and_ragged_row(tmp_path: Path) -> None:
    path = tmp_path / "cols.csv"
    path.write_text("name,num_gpu,gpu_milli,creation_time,deletion_time\nopenb-pod-1,1,1000,0,5\n")
    with pytest.raises(ConfigError, match=r"cols\.csv: line 1: column 'scheduled_time': missing"):
        load_alibaba(path)
    ragged = write_pods(tmp_path, ROWS + ["openb-pod-0005,1,1"], name="ragged.csv")
    with pytest.raises(ConfigError, match=r"ragged\.csv: line 7: expected 11 fields"):
        load_alibaba(ragged)
    with pytest.raises(ConfigError, match="cannot (read|open)"):
        load_alibaba(tmp_path / "absent.csv")


def test_alibaba_job_ids_fall_back_to_rows(tmp_path: Path) -> None:
    rows = [r.replace("openb-pod-0000", "task-a") for r in ROWS]
    w = load_alibaba(write_pods(tmp_path, rows), iteration_time_s=1.0)
    assert w.job_id.tolist() == [0, 2, 4]  # positions among the data rows (names have no number)


def test_alibaba_nodes(tmp_path: Path) -> None:
    path = tmp_path / "nodes.csv"
    path.write_text("sn,cpu_milli,memory_mib,gpu,model\nn0,1,1,8,G2\nn1,1,1,0,\nn2,1,1,2,T4\n")
    assert load_alibaba_nodes(path).tolist() == [8, 2]
    path.write_text("sn,cpu_milli,memory_mib,gpu,model\nn0,1,1,eight,G2\n")
    with pytest.raises(ConfigError, match=r"nodes\.csv: line 2: column 'gpu'"):
        load_alibaba_nodes(path)


# ----------------------------------------------------------------------------- trace windows
def write_rfold(tmp_path: Path, n: int = 40) -> Path:
    """RFold rows one hour apart from the epoch: jobs 0..n-1; sizes cycle 1, 2, 16."""
    lines = ["#job id,arrival time (sec),topology,shape,size,duration (sec)"]
    for i in range(n):
        size = (1, 2, 16)[i % 3]
        lines.append(f"{i},{i * 3600.0},CLOS,{size},{size},{100.0 + i}")
    path = tmp_path / "rfold.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_windows_split_by_time_is_disjoint_and_windows_stay_inside(tmp_path: Path) -> None:
    path = write_rfold(tmp_path)
    cut = "2017-08-15 10:27:00"  # epoch 2017-08-14 23:27:00 + 11 h: jobs 0..10 train, 11.. eval
    train = trace_table("philly", str(path), None, "train", "whole", cut)
    test = trace_table("philly", str(path), None, "eval", "whole", cut)
    assert train.job_id.tolist() == list(range(11)) and test.job_id.tolist() == list(range(11, 40))
    cluster = ClusterSpec.homogeneous(2, 4)  # 8 GPUs: the 16-GPU jobs never enter a window
    source = TraceWindowSource(trace="philly", path=str(path), split="eval", split_at=cut, num_jobs=5)
    seen: set[int] = set()
    for seed in range(30):
        w = source(np.random.default_rng(seed), cluster)
        assert len(w) == 5 and w.gpus.max() <= 8 and w.arrival[0] == 0.0
        assert w.job_id.min() >= 11
        fitting = [j for j in range(11, 40) if (1, 2, 16)[j % 3] <= 8]
        first = fitting.index(int(w.job_id[0]))
        assert w.job_id.tolist() == fitting[first : first + 5]  # consecutive fitting jobs
        seen.add(int(w.job_id[0]))
    assert len(seen) > 5  # windows start at different points
    a = source(np.random.default_rng(7), cluster)
    b = source(np.random.default_rng(7), cluster)
    assert np.array_equal(a.job_id, b.job_id) and np.array_equal(a.iterations, b.iterations)


def test_windows_time_scale_and_durations(tmp_path: Path) -> None:
    path = write_rfold(tmp_path)
    cluster = ClusterSpec.homogeneous(4, 4)
    base = TraceWindowSource(trace="philly", path=str(path), num_jobs=4)
    slow = replace(base, time_scale=2.5)
    w1, w2 = base(np.random.default_rng(1), cluster), slow(np.random.default_rng(1), cluster)
    assert np.array_equal(w1.job_id, w2.job_id)
    assert np.allclose(w2.arrival, 2.5 * w1.arrival) and w1.arrival[1] == 3600.0
    # iterations x per-iteration compute time = the recorded duration (no performance model given)
    times = w1.iterations * np.array([w1.profile(i).compute_s for i in range(len(w1))])
    assert np.allclose(times, 100.0 + w1.job_id, rtol=0.01)


def test_windows_alibaba_split_default_cut(tmp_path: Path) -> None:
    day = 86_400
    rows = [f"openb-pod-{i:04d},1,1,1,1000,,LS,Running,{t},{t + 600},{t}"
            for i, t in enumerate([100 * day, 137 * day, 138 * day - 1, 138 * day, 140 * day])]
    path = write_pods(tmp_path, rows, name="split.csv")
    train = trace_table("alibaba", str(path), None, "train")
    test = trace_table("alibaba", str(path), None, "eval")
    assert train.job_id.tolist() == [0, 1, 2] and test.job_id.tolist() == [3, 4]
    assert ALIBABA_EVAL_START_S == 138 * day
    with pytest.raises(ConfigError, match="has no jobs"):
        trace_table("alibaba", str(path), None, "eval", "whole", 1e9)


def test_windows_in_window_load_and_calibration(tmp_path: Path) -> None:
    path = write_rfold(tmp_path)
    source = TraceWindowSource(trace="philly", path=str(path), num_jobs=3)
    cluster = ClusterSpec.homogeneous(1, 32)
    rows = source.window_rows(np.random.default_rng(0), cluster)
    first = int(rows[0])
    sizes = [(1, 2, 16)[(first + k) % 3] for k in range(3)]
    # span 7200 s; the last job arrives at the end of the span and contributes nothing
    expected = (sizes[0] * (100.0 + first) + sizes[1] * (101.0 + first)) / (32 * 7200.0)
    assert window_loads(source, num_gpus=32, samples=1)[0] == pytest.approx(expected)
    # squeezed so far that jobs run past the span: each contributes G_j (T - t_j) only
    tight = replace(source, time_scale=1e-3)
    assert window_loads(tight, num_gpus=32, samples=1)[0] == pytest.approx((sizes[0] + sizes[1] * 0.5) / 32)
    medians = [np.median(window_loads(replace(source, time_scale=s), 32, samples=50)) for s in (0.01, 0.1, 1, 10)]
    assert medians == sorted(medians, reverse=True) and medians[0] > medians[-1]
    scale = calibrate_time_scale(source, num_gpus=32, target=0.02, samples=50)
    assert np.median(window_loads(replace(source, time_scale=scale), 32, samples=50)) == pytest.approx(0.02, rel=0.02)
    with pytest.raises(ConfigError, match="above what these windows reach"):
        calibrate_time_scale(source, num_gpus=32, target=5.0, samples=50)


def test_window_source_rejects_bad_settings() -> None:
    for kwargs, match in [({"split": "test"}, "split"), ({"trace": "helios"}, "trace"),
                          ({"time_scale": 0.0}, "time_scale"), ({"num_jobs": 0}, "num_jobs"),
                          ({"trace": "alibaba", "table": "rfold"}, "table")]:
        with pytest.raises(ConfigError, match=match):
            TraceWindowSource(**kwargs)


# ----------------------------------------------------------------------------- scenario files
def test_scenario_file_trace_slices(tmp_path: Path) -> None:
    write_rfold(tmp_path)
    write_pods(tmp_path)
    (tmp_path / "philly.toml").write_text(
        '[cluster]\nservers = 2\ngpus_per_server = 4\n'
        '[workload]\nkind = "philly-slice"\npath = "rfold.csv"\nnum_jobs = 6\ntime_scale = 0.5\n')
    scenario = load_scenario_file(tmp_path / "philly.toml")
    cluster, w = scenario.episode(3)
    assert len(w) == 6 and w.gpus.max() <= 8
    assert np.array_equal(w.arrival, 0.5 * 3600.0 * (w.job_id - w.job_id[0]))  # time_scale 0.5
    (tmp_path / "ali.toml").write_text(
        '[cluster]\nservers = 2\ngpus_per_server = 4\n'
        '[workload]\nkind = "alibaba-slice"\npath = "pods.csv"\nnum_jobs = 2\nfractional = "drop"\n')
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, w = load_scenario_file(tmp_path / "ali.toml").episode(0)
    assert w.job_id.tolist() == [0, 4]  # the quarter-GPU task 2 is dropped; the 8-GPU task fits 2x4
    bad = [
        ('num_jobs = "many"', "workload.num_jobs"),
        ('split = "test"', "workload.split"),
        ('fractional = "whole"', "workload.fractional"),  # not a Philly key
        ('path = "missing.csv"', "workload.path"),
        ("time_scale = -1", "workload.time_scale"),
    ]
    for line, key in bad:
        (tmp_path / "bad.toml").write_text(
            '[cluster]\nservers = 2\ngpus_per_server = 4\n[workload]\nkind = "philly-slice"\n'
            + ('path = "rfold.csv"\n' if "path" not in line else "") + line + "\n")
        with pytest.raises(ConfigError) as info:
            load_scenario_file(tmp_path / "bad.toml")
        assert str(info.value).startswith(f"{tmp_path / 'bad.toml'}: {key}:"), str(info.value)


# ----------------------------------------------------------------------------- shared traces
HAVE_TRACES = default_trace_path("rfold") != SAMPLE_PATH
try:
    from ddl_gym.workloads.alibaba import default_alibaba_path

    default_alibaba_path()
    HAVE_ALIBABA = True
except ConfigError:
    HAVE_ALIBABA = False


@pytest.mark.skipif(not (HAVE_TRACES and HAVE_ALIBABA), reason="shared traces not available")
def test_builtin_window_scenarios_and_calibration() -> None:
    for trace, extra in (("philly", {"table": "pollux"}), ("alibaba", {})):
        train = TraceWindowSource(trace=trace, split="train", **extra)
        assert calibrate_time_scale(train, 64) == BUILTIN_TIME_SCALE[trace]
        evaluation = trace_table(trace, None, extra.get("table"), "eval")
        training = trace_table(trace, None, extra.get("table"), "train")
        assert not set(evaluation.job_id.tolist()) & set(training.job_id.tolist())
    for name in ("philly-windows", "alibaba-windows", "philly-windows-train", "alibaba-windows-train"):
        cluster, w = get_scenario(name).episode(1_000_000)
        assert len(w) == 160 and w.gpus.max() <= cluster.num_gpus
        assert (":eval[" in w.name) == (not name.endswith("-train"))


def test_alibaba_pods_counts_match_readme() -> None:
    if not HAVE_ALIBABA:
        pytest.skip("Alibaba trace not available")
    pods = AlibabaPods()
    # README: 6,476 tasks; num_gpu 0: 927; 666 pending, of which 635 request GPUs.
    assert pods.dropped == {"malformed": 0, "cpu_only": 927, "unscheduled": 635, "fractional": 0}
    assert len(pods) == 6476 - 927 - 635
