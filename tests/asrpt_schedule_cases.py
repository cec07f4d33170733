"""Schedule digests of the A-SRPT family on asrpt-sim worlds, recorded before the A-SRPT speed-up (issue 13).

Each digest covers what a policy decided, not only what came out: for every start, the time, the job,
its GPU ids and the pipeline stage each GPU hosts (Heavy-Edge's mapping), then the run's start/finish
times, GPU placements (:func:`tests.golden_cases.result_digest`) and per-job uncontended iteration
times (eq. (7) on the chosen mapping). A faster placement or virtual machine that changes any
decision changes the digest.

The worlds' arrivals are Philly RFold gaps (:func:`ddl_gym.workloads.recurring.philly_gaps`), read from
the full table when the traces are found (``$DDL_GYM_TRACES`` or ``../shared/traces``) and from the
bundled 500-job sample ``ddl_gym/data/philly_sample.csv`` otherwise: two workloads, so the digests are
pinned per trace source (:data:`DIGEST_FILES`; :func:`trace_source` asks the workload's own lookup,
:func:`ddl_gym.workloads.philly.default_trace_path`).

``python -m tests.asrpt_schedule_cases --write`` records the current source's file (only for an
intended behaviour change, said so in the commit; run it in both layouts, e.g. once in a clone with no
``../shared`` beside it); ``tests/baselines/a_srpt/test_asrpt_schedules.py`` compares.
"""

from __future__ import annotations

import hashlib
import json
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

#: trace source -> its digest file: the full Philly RFold table (``shared/traces/philly``, CI's layout)
#: or the bundled sample that :func:`ddl_gym.workloads.philly.default_trace_path` falls back to.
DIGEST_FILES: dict[str, Path] = {
    "philly-traces": Path(__file__).parent / "golden" / "asrpt_schedules.json",
    "philly-sample": Path(__file__).parent / "golden" / "asrpt_schedules_philly_sample.json",
}


def trace_source() -> str:
    """``"philly-traces"`` or ``"philly-sample"``: where this layout's asrpt worlds get their Philly gaps."""
    from ddl_gym.workloads.philly import SAMPLE_PATH, default_trace_path

    return "philly-sample" if default_trace_path("rfold") == SAMPLE_PATH else "philly-traces"


DIGEST_FILE = DIGEST_FILES[trace_source()]

#: world name -> asrpt_sim_scenario keyword arguments (mean predictions: no scikit-learn fit)
WORLDS: dict[str, dict[str, Any]] = {
    "sim-32x8": {"num_jobs": 500, "trace_jobs": 20_000},  # the bench's world, smaller window
    "small-8x8-load0.9": {"servers": 8, "num_jobs": 300, "trace_jobs": 5_000, "load": 0.9},
    "narrow-16x4-load1.0": {"servers": 16, "gpus_per_server": 4, "num_jobs": 300, "trace_jobs": 5_000, "load": 1.0},
}
#: world name -> episode seeds
SEEDS: dict[str, tuple[int, ...]] = {"sim-32x8": (0,), "small-8x8-load0.9": (0, 1), "narrow-16x4-load1.0": (0, 1)}
POLICIES: tuple[str, ...] = (
    "a-srpt", "a-srpt-perfect", "a-srpt-tau0", "a-srpt-nonblocking", "a-srpt:connectivity=summed",
    "a-srpt:fragment=literal_ascending", "a-srpt:consolidate=pack", "spjf", "spwf", "wcs-duration",
    "wcs-workload", "wcs-subtime", "spjf:selection=pack", "wcs-duration:selection=fragment",
    "wcs-workload:selection=literal_ascending", "a-srpt-backfill", "spjf-mostfree", "wcs-duration-asrptsel",
)


@lru_cache(maxsize=None)
def world(name: str, seed: int) -> tuple[Any, Any, Any]:
    """``(cluster, workload, model)`` of one episode of a world."""
    from ddl_gym.workloads.asrpt import asrpt_sim_scenario

    scenario = asrpt_sim_scenario(predictor="mean", name=f"asrpt-{name}", **WORLDS[name])
    cluster, workload = scenario.episode(seed)
    return cluster, workload, scenario.model


def schedule_digest(world_name: str, seed: int, policy: str) -> str:
    """sha256 of every start decision (time, job, GPU ids, stage labels) and the run's results."""
    from ddl_gym.policies import make_policy
    from ddl_gym.sim.alloc import Allocation
    from ddl_gym.sim.engine import Simulator, run_policy
    from tests.golden_cases import result_digest

    starts: list[tuple[float, int, tuple[int, ...], tuple[int, ...] | None]] = []

    class Recording(Simulator):
        def start(self, job: int, placement: Any) -> None:
            if isinstance(placement, Allocation):
                ids = tuple(int(g) for g in placement.gpu_ids)
                stages = None if placement.stage_of is None else tuple(int(s) for s in placement.stage_of)
            else:
                ids, stages = tuple(int(g) for g in np.asarray(placement).ravel()), None
            starts.append((float(self.now).hex(), job, ids, stages))
            super().start(job, placement)

    cluster, workload, model = world(world_name, seed)
    result = run_policy(Recording(cluster, workload, model), make_policy(policy), np.random.default_rng(seed))
    h = hashlib.sha256(repr(starts).encode())
    h.update(result_digest(result).encode())
    h.update(np.ascontiguousarray(result.ideal_runtime, dtype=np.float64).tobytes())
    return h.hexdigest()


def case_names() -> list[tuple[str, int, str]]:
    return [(w, s, p) for w in WORLDS for s in SEEDS[w] for p in POLICIES]


def key(world_name: str, seed: int, policy: str) -> str:
    return f"{world_name}/seed{seed}/{policy}"


def main(argv: list[str]) -> int:
    digests = {key(*c): schedule_digest(*c) for c in case_names()}
    if "--write" in argv:
        DIGEST_FILE.write_text(json.dumps(digests, indent=1, sort_keys=True) + "\n")
        print(f"wrote {len(digests)} {trace_source()} digests to {DIGEST_FILE}")
    else:
        recorded = json.loads(DIGEST_FILE.read_text())
        bad = [k for k, v in digests.items() if recorded.get(k) != v]
        print(f"{trace_source()}: {len(digests) - len(bad)}/{len(digests)} match" + (f"; differ: {bad}" if bad else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
