"""SJF-BCO speed-ups keep plans and executed schedules bit for bit (digests recorded before them).

Two sets: the paper-size cases of :mod:`tests.sjf_bco_digest_cases` and the bench-scale cases of
:mod:`tests.sjf_bco_scale_cases` (1,024 GPUs offline, the 64-GPU re-planning world).
"""

from __future__ import annotations

import json

import pytest

from tests import sjf_bco_digest_cases, sjf_bco_scale_cases

_SETS = {module.__name__.rsplit(".", 1)[-1]: (module.cases(), json.loads(module.DIGEST_FILE.read_text()))
         for module in (sjf_bco_digest_cases, sjf_bco_scale_cases)}
_CASES = [(set_name, case) for set_name, (cases, _) in _SETS.items() for case in cases]


@pytest.mark.parametrize("set_name", sorted(_SETS))
def test_every_case_has_a_recorded_digest(set_name: str) -> None:
    cases, digests = _SETS[set_name]
    assert sorted(c.name for c in cases) == sorted(digests)


@pytest.mark.parametrize(("set_name", "case"), _CASES, ids=[f"{s}:{c.name}" for s, c in _CASES])
def test_sjf_bco_digest(set_name: str, case) -> None:
    assert case.run() == _SETS[set_name][1][case.name], f"{case.name}: plan or executed schedule changed"
