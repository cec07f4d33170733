"""The A-SRPT family's schedules on asrpt-sim worlds stay what they were before the speed-up (issue 13).

Digests of every start decision (time, GPUs, stage mapping) and of the results; see
``tests/asrpt_schedule_cases.py``. A mismatch means a policy decided differently.
"""

from __future__ import annotations

import json

import pytest

from tests.asrpt_schedule_cases import DIGEST_FILE, WORLDS, case_names, key, schedule_digest

_RECORDED = json.loads(DIGEST_FILE.read_text())


def test_every_case_has_a_recorded_digest() -> None:
    assert sorted(key(*c) for c in case_names()) == sorted(_RECORDED)


@pytest.mark.parametrize("world_name", sorted(WORLDS))
def test_schedules_are_unchanged(world_name: str) -> None:
    cases = [c for c in case_names() if c[0] == world_name]
    changed = [key(*c) for c in cases if schedule_digest(*c) != _RECORDED[key(*c)]]
    assert not changed, f"A-SRPT family schedules changed: {changed}"


def test_digest_sees_a_different_decision() -> None:
    # The digest is of decisions, so two policies that decide differently on one world differ.
    assert _RECORDED[key("small-8x8-load0.9", 0, "a-srpt")] != _RECORDED[key("small-8x8-load0.9", 0, "a-srpt-tau0")]
