"""Tests for ddl_gym.workloads: synthetic generators, the workload CSV format, Philly loading."""

from __future__ import annotations

import warnings
from collections import Counter
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from ddl_gym.sim.model import ClusterSpec, ConfigError, ModelProfile, Workload
from ddl_gym.sim.zoo import MODEL_ZOO, TABLE_III_MODELS
from ddl_gym.workloads import (
    PAPER_GPU_MIX,
    ada_srsf_workload,
    default_trace_path,
    default_workload,
    load_philly,
    read_workload_csv,
    scaled_workload,
    sjf_bco_workload,
    write_workload_csv,
)
from ddl_gym.workloads.philly import SAMPLE_PATH

COLUMNS = ("job_id", "arrival", "gpus", "iterations", "model_index", "weight", "user", "group")
FULL_RFOLD = default_trace_path("rfold")
HAVE_FULL_TRACE = FULL_RFOLD != SAMPLE_PATH


def same(a: Workload, b: Workload) -> bool:
    return all(np.array_equal(getattr(a, c), getattr(b, c)) for c in COLUMNS) and a.models == b.models


def per_job_profiles(w: Workload) -> list[ModelProfile]:
    return [w.profile(i) for i in range(len(w))]


# ----------------------------------------------------------------------------- synthetic


@pytest.mark.parametrize("make", [sjf_bco_workload, ada_srsf_workload, default_workload])
def test_paper_mix_counts_exact(make) -> None:
    w = make(np.random.default_rng(3))
    assert len(w) == 160
    assert dict(Counter(w.gpus.tolist())) == {1: 80, 2: 14, 4: 26, 8: 30, 16: 8, 32: 2}
    assert dict(PAPER_GPU_MIX) == {1: 80, 2: 14, 4: 26, 8: 30, 16: 8, 32: 2}
    assert w.iterations.min() >= 1000 and w.iterations.max() <= 6000
    assert sorted(np.unique(w.job_id).tolist()) == list(range(160))


def test_iterations_cover_range_inclusive() -> None:
    w = scaled_workload(np.random.default_rng(0), 50_000, arrival_rate_per_s=None)
    assert w.iterations.min() == 1000 and w.iterations.max() == 6000


def test_sjf_bco_all_at_zero_and_sizes_shuffled() -> None:
    w = sjf_bco_workload(np.random.default_rng(0))
    assert np.all(w.arrival == 0.0)
    # a shuffled order: not the sorted-by-size listing the mix would give
    assert not np.array_equal(w.gpus, np.sort(w.gpus))


def test_sjf_bco_custom_models_used() -> None:
    custom = (ModelProfile("a", 1e6, 0.01, 0.02), ModelProfile("b", 2e6, 0.02, 0.03))
    w = sjf_bco_workload(np.random.default_rng(0), models=custom)
    assert set(w.models) <= set(custom)
    assert {p.name for p in per_job_profiles(w)} == {"a", "b"}


def test_ada_srsf_arrivals_in_window_and_models_table_iii() -> None:
    w = ada_srsf_workload(np.random.default_rng(5))
    assert w.arrival.min() >= 0.0 and w.arrival.max() <= 1200.0
    assert np.all(w.arrival == np.floor(w.arrival))  # one-second slots
    assert np.all(np.diff(w.arrival) >= 0)
    assert w.arrival.max() - w.arrival.min() > 600  # spread over the window, not bunched
    names = {p.name for p in per_job_profiles(w)}
    assert names == set(TABLE_III_MODELS)
    # sizes mixed across arrival order: the large jobs are not all at the end
    assert w.gpus[:80].max() > 1


def test_ada_srsf_window_parameter() -> None:
    w = ada_srsf_workload(np.random.default_rng(5), window_s=60.0)
    assert w.arrival.min() >= 1.0 and w.arrival.max() <= 60.0


@pytest.mark.parametrize(
    "make",
    [sjf_bco_workload, ada_srsf_workload, default_workload,
     lambda rng: scaled_workload(rng, 1000, 16, 0.5)],
)
def test_determinism(make) -> None:
    a, b = make(np.random.default_rng(42)), make(np.random.default_rng(42))
    c = make(np.random.default_rng(43))
    assert same(a, b)
    assert not all(np.array_equal(getattr(a, k), getattr(c, k)) for k in ("gpus", "iterations", "arrival", "model_index"))


def test_generators_do_not_touch_global_rng() -> None:
    np.random.seed(0)
    before = np.random.random()
    np.random.seed(0)
    sjf_bco_workload(np.random.default_rng(1))
    ada_srsf_workload(np.random.default_rng(1))
    scaled_workload(np.random.default_rng(1), 100)
    assert np.random.random() == before


def test_scaled_workload_mix_and_arrivals() -> None:
    rng = np.random.default_rng(7)
    w = scaled_workload(rng, 100_000, max_gpus=8, arrival_rate_per_s=2.0)
    assert len(w) == 100_000
    assert set(np.unique(w.gpus).tolist()) == {1, 2, 4, 8}
    # proportions of the kept sizes: 80:14:26:30 renormalised
    share_1 = np.mean(w.gpus == 1)
    assert abs(share_1 - 80 / 150) < 0.01
    assert np.all(np.diff(w.arrival) >= 0) and w.arrival[0] > 0
    assert abs(np.mean(np.diff(w.arrival)) - 0.5) < 0.01  # Poisson rate 2/s
    assert np.array_equal(w.job_id, np.arange(100_000))


def test_scaled_workload_offline_and_errors() -> None:
    w = scaled_workload(np.random.default_rng(0), 10, arrival_rate_per_s=None)
    assert np.all(w.arrival == 0)
    with pytest.raises(ConfigError, match="max_gpus"):
        scaled_workload(np.random.default_rng(0), 10, max_gpus=0)
    with pytest.raises(ConfigError, match="arrival_rate_per_s"):
        scaled_workload(np.random.default_rng(0), 10, arrival_rate_per_s=-1.0)
    with pytest.raises(ConfigError, match="iterations"):
        sjf_bco_workload(np.random.default_rng(0), iterations=(10, 5))


# ----------------------------------------------------------------------------- CSV


def test_csv_round_trip_exact(tmp_path: Path) -> None:
    w = scaled_workload(np.random.default_rng(11), 2000, 32, 0.37)
    # non-trivial floats, weights, users and groups
    w = replace(w, arrival=w.arrival * np.pi / 3, weight=np.random.default_rng(1).random(len(w)) * 5,
                user=np.arange(len(w)) % 7, group=np.arange(len(w)) % 3 - 1)
    path = write_workload_csv(w, tmp_path / "w.csv")
    r = read_workload_csv(path)
    for c in ("job_id", "arrival", "gpus", "iterations", "weight", "user", "group"):
        assert np.array_equal(getattr(r, c), getattr(w, c)), c
    assert per_job_profiles(r) == per_job_profiles(w)
    assert r.name == "w"
    # second write is byte-identical
    write_workload_csv(r, tmp_path / "w2.csv")
    assert (tmp_path / "w.csv").read_bytes() == (tmp_path / "w2.csv").read_bytes()


def test_csv_round_trip_custom_profiles(tmp_path: Path) -> None:
    custom = ModelProfile("my_bert", 1.234567891e8, 0.0123456789, 0.0456, batch_size=8, gpu_memory_mb=9000.5)
    tweaked = replace(MODEL_ZOO["resnet50"], forward_s=0.1 / 3)
    w = sjf_bco_workload(np.random.default_rng(2), models=[custom, tweaked, MODEL_ZOO["vgg16"]])
    path = write_workload_csv(w, tmp_path / "c.csv")
    assert "gradient_bytes" in path.read_text().splitlines()[0]
    r = read_workload_csv(path)
    assert per_job_profiles(r) == per_job_profiles(w)
    assert set(r.models) == {custom, tweaked, MODEL_ZOO["vgg16"]}


def test_csv_minimal_unsorted_comments_and_overrides(tmp_path: Path) -> None:
    path = tmp_path / "jobs.csv"
    path.write_text(
        "# my workload\n"
        "job_id,arrival_s,gpus,iterations,model,forward_s\n"
        "7,10.5,4,1000,ResNet-50,\n"
        "\n"
        "3,2,1,2000,vgg16,0.5\n"
    )
    w = read_workload_csv(path)
    assert w.job_id.tolist() == [3, 7]  # sorted by arrival
    assert w.arrival.tolist() == [2.0, 10.5]
    assert w.profile(1) == MODEL_ZOO["resnet50"]
    assert w.profile(0) == replace(MODEL_ZOO["vgg16"], forward_s=0.5)
    assert w.weight.tolist() == [1.0, 1.0] and w.user.tolist() == [-1, -1]


HEADER = "job_id,arrival_s,gpus,iterations,model"


@pytest.mark.parametrize(
    ("content", "line", "column"),
    [
        ("job_id,arrival_s,gpus,model\n1,0,1,vgg16\n", 1, "iterations"),
        (f"{HEADER}\n1,0,1,100,vgg16\n2,abc,1,100,vgg16\n", 3, "arrival_s"),
        (f"{HEADER}\n1,0,1,100,vgg16\n2,0,two,100,vgg16\n", 3, "gpus"),
        (f"{HEADER}\n1,0,1,100,vgg16\n2,nan,1,100,vgg16\n", 3, "arrival_s"),
        (f"{HEADER}\n1,0,1,100,vgg16\n2,0,1,NaN,vgg16\n", 3, "iterations"),
        (f"{HEADER}\n1,0,1,0,vgg16\n", 2, "iterations"),
        (f"{HEADER}\n1,0,1,100,vgg16\n2,0,1,-5,vgg16\n", 3, "iterations"),
        (f"{HEADER}\n1,0,1,12.5,vgg16\n", 2, "iterations"),
        (f"{HEADER}\n1,0,0,100,vgg16\n", 2, "gpus"),
        (f"{HEADER}\n1,0,1,100,vgg16\n2,-1,1,100,vgg16\n", 3, "arrival_s"),
        (f"{HEADER}\n1,0,1,100,vgg16\n2,0,1,100,gpt17\n", 3, "model"),
        (f"{HEADER},gradient_bytes,forward_s\n1,0,1,100,gpt17,1e6,0.1\n", 2, "model"),
        (f"{HEADER}\n1,0,1,100,vgg16\n2,0,1,100,vgg16\n1,5,1,100,vgg16\n", 4, "job_id"),
        (f"{HEADER}\n1,0,1,100,\n", 2, "model"),
        (f"{HEADER}\n,0,1,100,vgg16\n", 2, "job_id"),
        (f"{HEADER},weight\n1,0,1,100,vgg16,-2\n", 2, "weight"),
        (f"{HEADER},forward_s\n1,0,1,100,vgg16,inf\n", 2, "forward_s"),
        (f"{HEADER},batch_size\n1,0,1,100,vgg16,0\n", 2, "batch_size"),
        (f"# comment\n{HEADER}\n1,0,1,100,vgg16\n2,x,1,100,vgg16\n", 4, "arrival_s"),
    ],
)
def test_csv_bad_input_names_file_line_column(tmp_path: Path, content: str, line: int, column: str) -> None:
    path = tmp_path / "bad_jobs.csv"
    path.write_text(content)
    with pytest.raises(ConfigError) as info:
        read_workload_csv(path)
    message = str(info.value)
    assert "\n" not in message
    assert "bad_jobs.csv" in message
    assert f"line {line}:" in message
    assert repr(column) in message


def test_csv_duplicate_mentions_first_line(tmp_path: Path) -> None:
    path = tmp_path / "dup.csv"
    path.write_text(f"{HEADER}\n1,0,1,100,vgg16\n2,0,1,100,vgg16\n1,5,1,100,vgg16\n")
    with pytest.raises(ConfigError, match="first on line 2"):
        read_workload_csv(path)


def test_csv_wrong_field_count(tmp_path: Path) -> None:
    path = tmp_path / "ragged.csv"
    path.write_text(f"{HEADER}\n1,0,1,100,vgg16\n2,0,1,100\n")
    with pytest.raises(ConfigError, match=r"ragged\.csv: line 3: expected 5 fields"):
        read_workload_csv(path)


def test_csv_missing_file() -> None:
    with pytest.raises(ConfigError, match="nope.csv"):
        read_workload_csv("/nonexistent/nope.csv")


def _oversized_csv(tmp_path: Path) -> Path:
    path = tmp_path / "big.csv"
    path.write_text(f"{HEADER}\n1,0,4,100,vgg16\n2,1,64,100,resnet50\n3,2,8,100,vgg16\n4,3,9,100,vgg16\n")
    return path


def test_csv_oversized_is_error_naming_row(tmp_path: Path) -> None:
    cluster = ClusterSpec.homogeneous(2, 4)
    with pytest.raises(ConfigError) as info:
        read_workload_csv(_oversized_csv(tmp_path), cluster=cluster)
    assert "big.csv" in str(info.value) and "line 3:" in str(info.value) and "'gpus'" in str(info.value)


def test_csv_drop_oversized_warns_and_counts(tmp_path: Path) -> None:
    cluster = ClusterSpec.homogeneous(2, 4)
    with pytest.warns(UserWarning, match="dropped 2 job"):
        w, n = read_workload_csv(_oversized_csv(tmp_path), cluster=cluster, drop_oversized=True,
                                 return_dropped=True)
    assert n == 2
    assert w.job_id.tolist() == [1, 3]
    assert w.models == (MODEL_ZOO["vgg16"],)  # resnet50 only served the dropped job
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        w2, n2 = read_workload_csv(_oversized_csv(tmp_path), cluster=ClusterSpec.homogeneous(8, 8),
                                   return_dropped=True)
    assert n2 == 0 and len(w2) == 4


# ----------------------------------------------------------------------------- Philly


def test_philly_sample_loads() -> None:
    w = load_philly(SAMPLE_PATH, rng=0)
    assert len(w) == 500
    assert w.name == "philly-rfold"
    assert w.job_id.tolist() == list(range(80000, 80500))
    assert w.arrival[0] == 0.0 and np.all(np.diff(w.arrival) >= 0)
    assert w.arrival[-1] == 7764912.0 - 7713460.0
    assert dict(Counter(w.gpus.tolist())) == {1: 389, 2: 12, 4: 45, 8: 41, 16: 12, 32: 1}
    assert {p.name for p in w.models} == set(TABLE_III_MODELS)
    assert np.all(w.user == -1) and np.all(w.group == -1)
    # iterations = round(duration / compute time of the sampled model); first job lasted 842 s
    assert w.iterations[0] == max(1, round(842.0 / w.profile(0).compute_s))


def test_philly_iterations_and_seeding() -> None:
    w = load_philly(SAMPLE_PATH, rng=1, iteration_time_s=2.0)
    assert w.iterations[0] == 421  # 842 s / 2 s
    a = load_philly(SAMPLE_PATH, rng=np.random.default_rng(9))
    b = load_philly(SAMPLE_PATH, rng=9)
    c = load_philly(SAMPLE_PATH, rng=10)
    assert same(a, b)
    assert not np.array_equal(a.model_index, c.model_index)
    assert same(load_philly(SAMPLE_PATH), load_philly(SAMPLE_PATH))  # default seed is fixed


def test_philly_window_and_max_jobs() -> None:
    w = load_philly(SAMPLE_PATH, start=7720000, end=7740000, max_jobs=50)
    assert len(w) == 50 and w.arrival[0] == 0.0
    assert w.job_id.min() > 80000
    full = load_philly(SAMPLE_PATH, start=7720000, end=7740000)
    assert np.all(np.diff(full.job_id) > 0)
    assert np.array_equal(full.job_id[:50], w.job_id)


def test_philly_default_path_finds_something() -> None:
    w = load_philly(max_jobs=20)
    assert len(w) == 20


def test_philly_oversized(tmp_path: Path) -> None:
    cluster = ClusterSpec.homogeneous(1, 8)
    with pytest.warns(UserWarning, match="dropped 13 job"):
        w, dropped = load_philly(SAMPLE_PATH, cluster=cluster, return_dropped=True)
    assert dropped == {"malformed": 0, "oversized": 13}
    assert len(w) == 487 and w.gpus.max() == 8
    with pytest.raises(ConfigError) as info:
        load_philly(SAMPLE_PATH, cluster=cluster, drop_oversized=False)
    assert "philly_sample.csv" in str(info.value) and "'size'" in str(info.value) and "line " in str(info.value)


RFOLD_HEAD = "#job id,arrival time (sec),topology,shape,size,duration (sec)\n"


@pytest.mark.parametrize(
    ("row", "column"),
    [
        ("2,5.0,CLOS,1,x,10.0", "size"),
        ("2,5.0,CLOS,1,0,10.0", "size"),
        ("2,abc,CLOS,1,1,10.0", "arrival time (sec)"),
        ("2,5.0,CLOS,1,1,-3", "duration (sec)"),
        ("2,5.0,CLOS,1,1,nan", "duration (sec)"),
    ],
)
def test_philly_malformed_rows(tmp_path: Path, row: str, column: str) -> None:
    path = tmp_path / "mal.csv"
    path.write_text(RFOLD_HEAD + "0,0.0,CLOS,1,1,60.0\n1,1.0,CLOS,8,8,0.0\n" + row + "\n3,9.0,CLOS,1,1,5.0\n")
    with pytest.raises(ConfigError) as info:
        load_philly(path)
    message = str(info.value)
    assert "mal.csv" in message and "line 4:" in message and repr(column) in message
    with pytest.warns(UserWarning, match="dropped 1 malformed"):
        w, dropped = load_philly(path, drop_malformed=True, return_dropped=True)
    assert w.job_id.tolist() == [0, 1, 3] and dropped["malformed"] == 1
    assert w.iterations[1] == 1  # zero-duration job gets one iteration


def test_philly_field_count_and_table_mismatch(tmp_path: Path) -> None:
    path = tmp_path / "ragged.csv"
    path.write_text(RFOLD_HEAD + "0,0.0,CLOS,1,1,60.0\n1,1.0,CLOS,1\n")
    with pytest.raises(ConfigError, match=r"ragged\.csv: line 3: expected 6 fields"):
        load_philly(path)
    with pytest.raises(ConfigError, match="pollux"):
        load_philly(SAMPLE_PATH, table="pollux")
    junk = tmp_path / "junk.csv"
    junk.write_text("a,b,c\n1,2,3\n")
    with pytest.raises(ConfigError, match="not a Philly job table"):
        load_philly(junk)


def test_philly_pollux_format(tmp_path: Path) -> None:
    path = tmp_path / "pollux.csv"
    path.write_text(
        "timestamp,duration,num_gpus,gpu_time,cluster\n"
        "2017-10-09 07:01:55,66.0,1,66.0,11cb48\n"
        "2017-10-09 06:13:03,2951.0,4,11804.0,6214e9\n"
        "2017-10-09 06:13:36,0.0,1,0.0,11cb48\n"
    )
    w = load_philly(path, iteration_time_s=1.0)
    assert w.name == "philly-pollux"
    assert w.arrival.tolist() == [0.0, 33.0, 2932.0]
    assert w.job_id.tolist() == [1, 2, 0]
    assert w.gpus.tolist() == [4, 1, 1]
    assert w.iterations.tolist() == [2951, 1, 66]
    assert w.user.tolist() == [0x6214E9, 0x11CB48, 0x11CB48]
    bad = tmp_path / "pollux_bad.csv"
    bad.write_text(path.read_text() + "2017-13-45 99:00:00,1.0,1,1.0,11cb48\n")
    with pytest.raises(ConfigError, match=r"pollux_bad\.csv: line 5: column 'timestamp'"):
        load_philly(bad)


@pytest.mark.skipif(not HAVE_FULL_TRACE, reason="shared Philly trace not available")
def test_philly_full_rfold_trace() -> None:
    w = load_philly(FULL_RFOLD)
    assert len(w) == 95_621
    expected = {1: 83_697, 2: 1_951, 4: 4_700, 6: 1, 7: 2, 8: 4_520, 12: 12, 16: 594, 20: 1,
                24: 19, 28: 1, 32: 115, 48: 2, 64: 5, 128: 1}
    assert dict(Counter(w.gpus.tolist())) == expected
    assert w.arrival[0] == 0.0 and np.all(np.diff(w.arrival) >= 0)
    assert w.arrival[-1] < 8_987_580
    assert w.iterations.min() >= 1


@pytest.mark.skipif(not HAVE_FULL_TRACE, reason="shared Philly trace not available")
def test_philly_full_pollux_trace() -> None:
    path = default_trace_path("pollux")
    w = load_philly(path)
    assert len(w) == 71_570
    expected = {1: 66_960, 2: 1_406, 4: 1_646, 8: 1_368, 12: 7, 16: 141, 24: 6, 32: 36}
    assert dict(Counter(w.gpus.tolist())) == expected
    assert np.all(np.diff(w.arrival) >= 0) and w.arrival[0] == 0.0
    assert len(np.unique(w.user)) == 14


def test_csv_round_trip_custom_profile_named_like_zoo_alias(tmp_path: Path) -> None:
    alias = ModelProfile("VGG-16", 1e8, 0.01, 0.02, batch_size=4, gpu_memory_mb=100.0)
    w = sjf_bco_workload(np.random.default_rng(0), models=[alias, "vgg16"])
    r = read_workload_csv(write_workload_csv(w, tmp_path / "alias.csv"))
    assert per_job_profiles(r) == per_job_profiles(w)


def test_csv_empty_file_and_header_only(tmp_path: Path) -> None:
    (tmp_path / "empty.csv").write_text("")
    with pytest.raises(ConfigError, match=r"empty\.csv: line 1"):
        read_workload_csv(tmp_path / "empty.csv")
    (tmp_path / "header.csv").write_text(HEADER + "\n# only a comment\n")
    with pytest.raises(ConfigError, match=r"header\.csv: line 1: no jobs"):  # an empty workload is an error
        read_workload_csv(tmp_path / "header.csv")


def test_philly_pollux_missing_column(tmp_path: Path) -> None:
    path = tmp_path / "p.csv"
    path.write_text("timestamp,num_gpus,cluster\n2017-10-09 07:01:55,1,ab\n")
    with pytest.raises(ConfigError, match=r"p\.csv: line 1: column 'duration'"):
        load_philly(path)
