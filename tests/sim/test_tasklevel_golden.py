"""The task-level engine reproduces, bit for bit, the schedules recorded before its speed-up.

240 random configurations (``tests/tasklevel_golden.py``): seeds, cluster shapes and sizes, GPU
sharing on/off, the probe-defect replication on/off, the ``fast`` flag on/off, debug on/off (then
every compute task interval is part of the digest). The paper-sized 160-job digests in the same
file are checked by ``scripts/bench_tasklevel.py`` (minutes of CPU).
"""

from __future__ import annotations

import json

import pytest

from tests.tasklevel_golden import GOLDEN_FILE, NUM_RANDOM, PAPER_COMBOS, random_config, run_config

_GOLDEN = json.loads(GOLDEN_FILE.read_text())
_CHUNKS = 8


def test_every_configuration_has_a_recorded_digest() -> None:
    names = [random_config(seed).name for seed in range(NUM_RANDOM)]
    assert sorted(names) == sorted(_GOLDEN["random"])
    assert sorted(_GOLDEN["paper160"]) == sorted(f"{p}+{c}/seed0" for p, c in PAPER_COMBOS)


@pytest.mark.parametrize("chunk", range(_CHUNKS))
def test_random_configurations_reproduce_their_digests(chunk: int) -> None:
    changed = []
    for seed in range(chunk, NUM_RANDOM, _CHUNKS):
        config = random_config(seed)
        if run_config(config) != _GOLDEN["random"][config.name]:
            changed.append(config.name)
    assert not changed, f"task-level schedules changed: {changed}"
