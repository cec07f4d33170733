"""SJF-BCO and the contention engine at bench scale keep plans and schedules bit for bit (digests recorded before the speed-up)."""

from __future__ import annotations

import json

import pytest

from tests.sjf_bco_scale_cases import DIGEST_FILE, cases

_DIGESTS = json.loads(DIGEST_FILE.read_text())
_CASES = cases()


def test_every_scale_case_has_a_recorded_digest() -> None:
    assert sorted(c.name for c in _CASES) == sorted(_DIGESTS)


@pytest.mark.parametrize("case", _CASES, ids=[c.name for c in _CASES])
def test_sjf_bco_scale_digest(case) -> None:
    assert case.run() == _DIGESTS[case.name], f"{case.name}: plan or executed schedule changed"
