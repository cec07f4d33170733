"""Bad input, class by class: every malformed workload CSV, Philly table or scenario file gives one
ConfigError line naming the file and the field, never another exception or silently wrong numbers."""

from __future__ import annotations

import string
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from ddl_gym.scenarios import load_scenario_file
from ddl_gym.sim.model import ClusterSpec, ConfigError
from ddl_gym.workloads import csv_io
from ddl_gym.workloads.csv_io import FIELD_BOUNDS, read_workload_csv
from ddl_gym.workloads.philly import load_philly

HEADER = ("job_id,arrival_s,gpus,iterations,model,weight,user,group,"
          "gradient_bytes,forward_s,backward_s,batch_size,gpu_memory_mb")
COLUMNS = HEADER.split(",")
GOOD = ["1", "5.0", "2", "100", "resnet50", "1", "-1", "-1", "1e8", "0.02", "0.03", "32", "1000"]
FIRST = "0,0.0,1,100,resnet50,1,-1,-1,,,,,"
SETTINGS = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _write(tmp_path: Path, column: str, text: str) -> Path:
    row = list(GOOD)
    row[COLUMNS.index(column)] = text
    path = tmp_path / "jobs.csv"
    path.write_text(f"{HEADER}\n{FIRST}\n{','.join(row)}\n")
    return path


def _assert_names(exc: ConfigError, *needles: str) -> None:
    message = str(exc)
    assert "\n" not in message
    for needle in needles:
        assert needle in message, (needle, message)


# ---------------------------------------------------------------------------- numbers
def _outside(column: str) -> st.SearchStrategy[str]:
    """Texts that are not a value of ``column``: outside its range, fractional integers, not finite, not numbers."""
    b = FIELD_BOUNDS[column]
    above = st.floats(min_value=max(b.high, 1.0) * 1.0001, max_value=1e308, allow_infinity=False).map(repr)
    huge_int = st.integers(min_value=2**63, max_value=2**300).map(str)
    junk = st.sampled_from(["nan", "NaN", "inf", "-inf", "1e999", "abc", "0x10", "1_000", "--1", "1e"])
    options = [above, huge_int, junk]
    if b.low > -(2**63):
        options.append(st.floats(min_value=-1e308, max_value=b.low - max(1e-9, abs(b.low) * 1e-9),
                                 allow_infinity=False, allow_nan=False).map(repr))
    if b.integer:
        options.append(st.integers(-10**6, 10**6).map(lambda i: f"{i}.5"))
    return st.one_of(options)


@pytest.mark.parametrize("column", sorted(FIELD_BOUNDS))
def test_every_numeric_field_is_bounded_and_named(tmp_path: Path, column: str) -> None:
    @SETTINGS
    @given(text=_outside(column))
    @example(text="1e300")
    @example(text="-1e300")
    def check(text: str) -> None:
        path = _write(tmp_path, column, text)
        with pytest.raises(ConfigError) as info:
            read_workload_csv(path)
        _assert_names(info.value, "jobs.csv", "line 3", repr(column))

    check()


@SETTINGS
@given(job_id=st.integers(-(2**63), 2**63 - 1), user=st.integers(-(2**63), 2**63 - 1))
def test_integers_are_read_exactly_across_the_int64_range(tmp_path: Path, job_id: int, user: int) -> None:
    row = list(GOOD)
    row[0], row[6] = str(job_id), str(user)
    path = tmp_path / "exact.csv"
    path.write_text(f"{HEADER}\n{','.join(row)}\n")
    w = read_workload_csv(path)
    assert int(w.job_id[0]) == job_id and int(w.user[0]) == user  # 2**53 + 1 stays 2**53 + 1


def test_float_spelled_integers_are_accepted_only_when_exact(tmp_path: Path) -> None:
    w = read_workload_csv(_write(tmp_path, "iterations", "1e3"))
    assert int(w.iterations[w.job_id.tolist().index(1)]) == 1000
    with pytest.raises(ConfigError, match="not an integer"):
        read_workload_csv(_write(tmp_path, "iterations", "1000.0000000000001"))


def test_arrival_precision_bound_keeps_slowdown_at_least_one(tmp_path: Path) -> None:
    # 1e9 s is accepted; at 1e16 s float64 cannot resolve run times any more (the old silent slowdown < 1).
    read_workload_csv(_write(tmp_path, "arrival_s", "1e9"))
    with pytest.raises(ConfigError) as info:
        read_workload_csv(_write(tmp_path, "arrival_s", "1e16"))
    _assert_names(info.value, "'arrival_s'", "out of range")


# ---------------------------------------------------------------------------- empty and huge inputs
@pytest.mark.parametrize("text", [HEADER + "\n", HEADER + "\n# nothing\n\n", "", "\n\n  \n", "# only\n"])
def test_a_file_without_jobs_is_an_error(tmp_path: Path, text: str) -> None:
    path = tmp_path / "empty.csv"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        read_workload_csv(path)
    _assert_names(info.value, "empty.csv")


def test_dropping_every_job_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "big.csv"
    path.write_text("job_id,arrival_s,gpus,iterations,model\n0,0,64,10,resnet50\n1,1,32,10,resnet50\n")
    with pytest.raises(ConfigError) as info:
        read_workload_csv(path, cluster=ClusterSpec.homogeneous(2, 4), drop_oversized=True)
    _assert_names(info.value, "big.csv", "every job")


def test_endless_input_fails_after_reading_at_most_the_line_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(csv_io, "MAX_LINE_CHARS", 4096)
    with pytest.raises(ConfigError) as info:
        read_workload_csv("/dev/zero")
    _assert_names(info.value, "/dev/zero", "line 1")
    with pytest.raises(ConfigError, match="/dev/zero"):
        load_philly("/dev/zero")


def test_size_and_row_limits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "many.csv"
    path.write_text("job_id,arrival_s,gpus,iterations,model\n" + "".join(f"{i},0,1,10,resnet50\n" for i in range(50)))
    with pytest.raises(ConfigError, match="more than 20 jobs"):
        read_workload_csv(path, max_jobs=20)
    monkeypatch.setattr(csv_io, "MAX_FILE_BYTES", 200)
    with pytest.raises(ConfigError) as info:
        read_workload_csv(path)
    _assert_names(info.value, "many.csv", "limit")


@pytest.mark.parametrize("content, needle", [
    (b"\x89PNG\r\n\x1a\n" + bytes(range(256)), "UTF-8"),
    (f"{HEADER}\n{FIRST}\n".encode("utf-16"), "UTF-8"),
    (f"{HEADER}\n0,0,1,10,res\x00net\n".encode(), "NUL"),
], ids=["png", "utf16", "nul"])
def test_binary_input_is_named(tmp_path: Path, content: bytes, needle: str) -> None:
    path = tmp_path / "bin.csv"
    path.write_bytes(content)
    with pytest.raises(ConfigError) as info:
        read_workload_csv(path)
    _assert_names(info.value, "bin.csv", needle)


def test_utf8_bom_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "excel.csv"
    path.write_bytes(("\ufeff" + f"{HEADER}\n{FIRST}\n").encode("utf-8"))
    assert read_workload_csv(path).job_id.tolist() == [0]


def test_a_folder_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="is a folder"):
        read_workload_csv(tmp_path)


def test_philly_iterations_cannot_overflow(tmp_path: Path) -> None:
    path = tmp_path / "philly.csv"
    path.write_text("#job id,arrival time (sec),topology,shape,size,duration (sec)\n1,0,CLOS,1,1,1e9\n")
    with pytest.raises(ConfigError) as info:
        load_philly(path, iteration_time_s=1e-6)
    _assert_names(info.value, "philly.csv", "iterations")
    path.write_text("#job id,arrival time (sec),topology,shape,size,duration (sec)\n1,0,CLOS,1,1,1e300\n")
    with pytest.raises(ConfigError, match="duration"):
        load_philly(path)
    with pytest.raises(ConfigError, match="no jobs left"), pytest.warns(UserWarning, match="malformed"):
        load_philly(tmp_path / "philly.csv", start=5.0, end=6.0, drop_malformed=True)


# ---------------------------------------------------------------------------- scenario files
BASE = {
    "": {"name": "'x'"},
    "cluster": {"servers": "2", "gpus_per_server": "4", "inter_bandwidth_gbps": "10", "intra_bandwidth_gbps": "800",
                "gpu_memory_mb": "16384"},
    "model": {"name": "'rar'", "xi1": "1.0", "xi2": "0.001", "alpha": "0.2"},
    "workload": {"kind": "'synthetic'", "generator": "'scaled'", "num_jobs": "6", "max_gpus": "4",
                 "arrival_rate_per_s": "0.1"},
    "options": {"gpu_sharing": "true"},
}


def _toml(tables: dict[str, dict[str, str]]) -> str:
    lines = [f"{k} = {v}" for k, v in tables[""].items()]
    for table, items in tables.items():
        if table:
            lines.append(f"[{table}]")
            lines += [f"{k} = {v}" for k, v in items.items()]
    return "\n".join(lines) + "\n"


def test_the_base_scenario_is_valid(tmp_path: Path) -> None:
    path = tmp_path / "sc.toml"
    path.write_text(_toml(BASE))
    assert load_scenario_file(path).episode(0)[1].num_jobs == 6


def _typo(key: str) -> st.SearchStrategy[str]:
    """A one-edit misspelling of ``key`` that is no known key."""
    letters = st.sampled_from(string.ascii_lowercase)
    positions = st.integers(0, len(key) - 1)
    return st.one_of(
        st.tuples(positions, letters).map(lambda p: key[:p[0]] + p[1] + key[p[0] + 1:]),  # substitute
        positions.map(lambda p: key[:p] + key[p + 1:]),  # delete
        st.tuples(positions, letters).map(lambda p: key[:p[0]] + p[1] + key[p[0]:]),  # insert
    ).filter(lambda k: k and k != key and k[0].isalpha() and all(k not in t for t in BASE.values()))


TABLE_KEYS = [(t, k) for t, items in BASE.items() for k in items if (t, k) != ("", "name")]


@pytest.mark.parametrize("table, key", TABLE_KEYS, ids=[f"{t or 'top'}.{k}" for t, k in TABLE_KEYS])
def test_a_misspelt_key_in_any_table_is_rejected_with_a_suggestion(tmp_path: Path, table: str, key: str) -> None:
    @settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(typo=_typo(key))
    def check(typo: str) -> None:
        tables = {t: dict(items) for t, items in BASE.items()}
        tables[table][typo] = tables[table].pop(key)
        path = tmp_path / "sc.toml"
        path.write_text(_toml(tables))
        with pytest.raises(ConfigError) as info:
            load_scenario_file(path)
        _assert_names(info.value, "sc.toml", typo, "unknown key")

    check()


def test_the_suggestion_is_the_nearest_key(tmp_path: Path) -> None:
    tables = {t: dict(items) for t, items in BASE.items()}
    tables["cluster"]["servres"] = tables["cluster"].pop("servers")
    path = tmp_path / "sc.toml"
    path.write_text(_toml(tables))
    with pytest.raises(ConfigError, match="cluster.servres: unknown key; did you mean 'servers'"):
        load_scenario_file(path)


WRONG_TYPES = ["'4'", "true", "[1, 2]", "{a = 1}", "nan", "inf", "-1", "1e300", "0"]


@pytest.mark.parametrize("table, key", [tk for tk in TABLE_KEYS if tk[0] not in ("",)],
                         ids=[f"{t}.{k}" for t, k in TABLE_KEYS if t])
def test_wrong_types_and_values_are_named(tmp_path: Path, table: str, key: str) -> None:
    rejected = 0
    for value in WRONG_TYPES:
        tables = {t: dict(items) for t, items in BASE.items()}
        tables[table][key] = value
        path = tmp_path / "sc.toml"
        path.write_text(_toml(tables))
        try:
            load_scenario_file(path)
        except ConfigError as exc:
            assert "\n" not in str(exc) and "sc.toml" in str(exc)
            assert key in str(exc) or table in str(exc), str(exc)
            rejected += 1
    # Every value of the wrong type is rejected; of the rest only values the key accepts pass
    # (e.g. gpu_memory_mb = 1e300 is not a valid memory size, xi2 = 0 is).
    assert rejected >= len(WRONG_TYPES) - 3, (table, key, rejected)


@pytest.mark.parametrize("text, needle", [
    ("name = 'x'\n[cluster]\nservers = 1000000000\n[workload]\nnum_jobs = 2\ngenerator = 'scaled'\n", "servers"),
    ("name = 'x'\n[cluster]\nservers = 2\n[workload]\ngenerator = 'scaled'\nnum_jobs = 1000000000000\n", "num_jobs"),
    ("name = 'x'\n[cluster]\nservers = true\n[workload]\nnum_jobs = 2\ngenerator = 'scaled'\n", "servers"),
    ("name = 5\n[cluster]\nservers = 2\n[workload]\nnum_jobs = 2\ngenerator = 'scaled'\n", "name"),
    ("options = 5\n[cluster]\nservers = 2\n[workload]\nnum_jobs = 2\ngenerator = 'scaled'\n", "options"),
    ("model = 'rar'\n[cluster]\nservers = 2\n[workload]\nnum_jobs = 2\ngenerator = 'scaled'\n", "model"),
])
def test_values_that_used_to_exhaust_memory_or_pass_silently(tmp_path: Path, text: str, needle: str) -> None:
    path = tmp_path / "sc.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_scenario_file(path)
    _assert_names(info.value, "sc.toml", needle)


def test_scenario_paths_that_are_not_scenario_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="/dev/zero"):
        load_scenario_file("/dev/zero")
    with pytest.raises(ConfigError, match="is a folder"):
        load_scenario_file(tmp_path)
    bad = tmp_path / "latin1.toml"
    bad.write_bytes(b"name = '\xff'\n")
    with pytest.raises(ConfigError, match="UTF-8"):
        load_scenario_file(bad)
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ConfigError, match="deep.json"):
        load_scenario_file(deep)


def test_nan_in_json_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "sc.json"
    path.write_text('{"cluster": {"servers": 2, "gpu_memory_mb": NaN}, "workload": {"generator": "scaled", "num_jobs": 2}}')
    with pytest.raises(ConfigError, match="gpu_memory_mb"):
        load_scenario_file(path)
