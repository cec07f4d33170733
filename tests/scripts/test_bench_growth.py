"""scripts/bench_growth.py: the growth exponent, its n·log n yardstick and the case parser (no valgrind needed)."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parents[2] / "scripts" / "bench_growth.py"
_spec = importlib.util.spec_from_file_location("bench_growth", _PATH)
assert _spec is not None and _spec.loader is not None
growth = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(growth)


def test_growth_exponent_tells_linear_nlogn_and_quadratic_apart() -> None:
    sizes = [2_500, 10_000]
    assert growth.growth_exponent(sizes, [3e5 * n for n in sizes]) == pytest.approx(1.0)
    assert growth.growth_exponent(sizes, [7.0 * n * n for n in sizes]) == pytest.approx(2.0)
    # Over 2,500 -> 10,000, n·log n reads 1 + log(log 10^4 / log 2500) / log 4 = 1.12.
    expected = 1 + math.log(math.log(10_000) / math.log(2_500)) / math.log(4)
    assert growth.nlogn_exponent(sizes) == pytest.approx(expected)
    assert 1.10 < growth.nlogn_exponent(sizes) < 1.14


def test_growth_exponent_refuses_too_few_sizes_or_non_positive_counts() -> None:
    with pytest.raises(ValueError, match=">= 2 sizes"):
        growth.growth_exponent([1_000], [5e8])
    with pytest.raises(ValueError, match="positive"):
        growth.growth_exponent([1_000, 4_000], [5e8, -1.0])


def test_parse_case_reads_synthetic_and_named_worlds_and_names_bad_fields() -> None:
    assert growth.parse_case("srsf+ff:16384:0.9") == ("srsf+ff", 16384, 0.9)
    assert growth.parse_case("a-srpt:asrpt:0.9") == ("a-srpt", "asrpt", 0.9)
    assert growth.parse_case("sjf-bco:sjf-bco-offline:0") == ("sjf-bco", "sjf-bco-offline", 0.0)
    with pytest.raises(ValueError, match="POLICY:GPUS:LOAD"):
        growth.parse_case("fifo+pack:1024")
    with pytest.raises(ValueError, match="GPUS must be"):
        growth.parse_case("fifo+pack:many:0.9")
    with pytest.raises(ValueError, match="LOAD must be a number"):
        growth.parse_case("fifo+pack:1024:high")


def test_bad_jobs_option_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        growth.main(["--jobs", "5000"])
    assert exit_info.value.code == 2
    assert "at least two distinct positive job counts" in capsys.readouterr().err


def test_regime_cell_shows_each_figure_of_the_run() -> None:
    cell = growth.regime_cell({"gpu_alloc_util": 0.937, "mean_waiting": 2251.8, "servers_per_job": 2.6016,
                               "split_share": 0.3927, "rate_changes_per_job": 1.4641})
    assert cell == "0.94 / 2,252 / 2.60 / 39% / 1.46"


def test_bench_regime_figures_tell_spread_from_pack() -> None:
    from ddl_gym.cli import _load_bench

    bench = _load_bench()
    case = bench.synthetic_case(64, 300, load=0.9)
    pack = bench.simulate_jobs_per_second(*case, policy="fifo+pack")
    spread = bench.simulate_jobs_per_second(*case, policy="fifo+spread")
    # spread places jobs across servers on purpose: more servers per job, more splits, more re-rates.
    assert spread["servers_per_job"] > pack["servers_per_job"]
    assert spread["split_share"] > pack["split_share"]
    assert spread["rate_changes_per_job"] > pack["rate_changes_per_job"] >= 1.0
    assert pack["mean_waiting"] > 0.0


def test_prepare_tree_links_its_own_policies_and_writes_bytecode(tmp_path: Path) -> None:
    """A measured tree runs its own baselines (not the checkout's, which the editable install maps)
    and is byte-compiled before a counted run (else its first run counts compilation)."""
    compare = growth.sys.modules["bench_engine_compare"]
    for folder in ("ddl_gym", "baselines", "elsewhere"):
        (tmp_path / folder).mkdir()
    (tmp_path / "ddl_gym" / "core.py").write_text("X = 1\n")
    (tmp_path / "baselines" / "classic.py").write_text("Y = 2\n")
    (tmp_path / "elsewhere" / "other.py").write_text("Z = 3\n")
    compare.prepare_tree(str(tmp_path))
    link = tmp_path / "ddl_gym" / "baselines"
    assert link.is_symlink() and link.resolve() == (tmp_path / "baselines").resolve()
    assert not (tmp_path / "ddl_gym" / "agents").exists()  # no agents folder: nothing to link
    assert list((tmp_path / "ddl_gym" / "__pycache__").glob("core.*.pyc"))
    assert list((tmp_path / "baselines" / "__pycache__").glob("classic.*.pyc"))
    assert not (tmp_path / "elsewhere" / "__pycache__").exists()  # only the packages a run imports


def test_tree_env_points_every_tree_at_the_same_traces(monkeypatch: pytest.MonkeyPatch) -> None:
    """A measured tree outside the checkout reads the checkout's traces (else trace-built worlds differ)."""
    compare = growth.sys.modules["bench_engine_compare"]
    traces = Path(compare.__file__).resolve().parents[2] / "shared" / "traces"
    monkeypatch.delenv("DDL_GYM_TRACES", raising=False)
    env = compare.tree_env("/somewhere/tree")
    assert env["PYTHONPATH"] == "/somewhere/tree"
    assert env.get("DDL_GYM_TRACES") == (str(traces) if traces.is_dir() else None)
    monkeypatch.setenv("DDL_GYM_TRACES", "/given/traces")
    assert compare.tree_env(None)["DDL_GYM_TRACES"] == "/given/traces"  # a given folder is kept


def test_tree_revision_names_the_commit_or_says_there_is_none(tmp_path: Path) -> None:
    revision = growth.tree_revision(str(growth.REPO_ROOT))
    assert revision.split()[0].isalnum() and len(revision.split()[0]) >= 7
    assert growth.tree_revision(str(tmp_path)) == "not a git checkout"
