"""Regression guarantee: every recorded (world, policy, seed) case reproduces its golden digest bit for bit.

The digests were recorded from the code before the engine generalisation (see
``tests/golden_cases.py``); a mismatch means simulation behaviour changed.
"""

from __future__ import annotations

import json

import pytest

from tests.golden_cases import GOLDEN_FILE, cases

_GOLDEN = json.loads(GOLDEN_FILE.read_text())
_CASES = cases()


def test_every_case_has_a_recorded_digest() -> None:
    assert sorted(c.name for c in _CASES) == sorted(_GOLDEN)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name, marks=[pytest.mark.slow] if c.slow else [])
                                  for c in _CASES])
def test_golden_digest(case) -> None:
    assert case.run() == _GOLDEN[case.name], f"{case.name}: simulation results changed"
