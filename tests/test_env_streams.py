"""The legacy observation layouts stay bit-identical: every recorded env stream reproduces its digest."""

from __future__ import annotations

import json

import pytest

from tests.env_stream_cases import STREAM_FILE, cases

_RECORDED = json.loads(STREAM_FILE.read_text())
_CASES = cases(legacy={"observation": "legacy"})  # recorded before the option existed


def test_every_stream_case_has_a_recorded_digest() -> None:
    assert sorted(_CASES) == sorted(_RECORDED)


@pytest.mark.parametrize("name", sorted(_CASES))
def test_legacy_stream_digest(name: str) -> None:
    assert _CASES[name]() == _RECORDED[name], f"{name}: what the agent sees changed"
