"""The A-SRPT family's schedules on asrpt-sim worlds stay what they were before the speed-up (issue 13).

Digests of every start decision (time, GPUs, stage mapping) and of the results; see
``tests/asrpt_schedule_cases.py``. A mismatch means a policy decided differently.

The worlds' arrivals come from the Philly traces when they are found (``../shared/traces`` or
``$DDL_GYM_TRACES``, CI's layout) and from the bundled Philly sample otherwise (e.g. a clone with no
``../shared`` beside it): another workload, so each trace source has its own pinned digests.
"""

from __future__ import annotations

import json

import pytest

from tests.asrpt_schedule_cases import DIGEST_FILE, DIGEST_FILES, WORLDS, case_names, key, schedule_digest, trace_source

_SOURCE = trace_source()
_RECORDED = json.loads(DIGEST_FILE.read_text())


@pytest.mark.parametrize("source", sorted(DIGEST_FILES))
def test_every_case_has_a_recorded_digest(source: str) -> None:
    # Both sources' files cover every case, whichever layout this run is in.
    recorded = json.loads(DIGEST_FILES[source].read_text())
    assert sorted(key(*c) for c in case_names()) == sorted(recorded)


@pytest.mark.parametrize("world_name", sorted(WORLDS))
def test_schedules_are_unchanged(world_name: str) -> None:
    cases = [c for c in case_names() if c[0] == world_name]
    changed = [key(*c) for c in cases if schedule_digest(*c) != _RECORDED[key(*c)]]
    assert not changed, f"A-SRPT family schedules changed ({_SOURCE}, {DIGEST_FILE.name}): {changed}"


def test_digest_sees_a_different_decision() -> None:
    # The digest is of decisions, so two policies that decide differently on one world differ.
    assert _RECORDED[key("small-8x8-load0.9", 0, "a-srpt")] != _RECORDED[key("small-8x8-load0.9", 0, "a-srpt-tau0")]


def test_trace_sources_are_different_workloads() -> None:
    # The sample's gaps make other worlds, so no case may share a digest across sources (a file
    # recorded in the wrong layout would).
    traces, sample = (json.loads(DIGEST_FILES[s].read_text()) for s in ("philly-traces", "philly-sample"))
    assert not [k for k in traces if traces[k] == sample.get(k)]
