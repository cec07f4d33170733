"""scripts/bench_growth.py: the growth exponent, its n·log n yardstick and the case parser (no valgrind needed)."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parents[1] / "scripts" / "bench_growth.py"
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
