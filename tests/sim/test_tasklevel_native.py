"""The optional compiled build of the task-level engine (``scripts/build_native.py``).

The build switch (``ddl_gym.sim.native``, tested with the job-level engine's in
``test_engine_native.py``) uses the compiled module only while its stamp is the sha256 of
``tasklevel.py`` and ``DDL_GYM_PURE_PYTHON`` is unset; the source transformation keeps one
``InvariantError``/``EngineStats`` for both builds. When the compiled build is active, the golden
digests are checked with the plain-Python engine too (``test_tasklevel_golden.py`` then checks the
compiled one), so both builds stay pinned to the same schedules.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from ddl_gym.sim import tasklevel
from tests.native_build import build_script
from tests.tasklevel_golden import GOLDEN_FILE, NUM_RANDOM, _schedule_digest, random_config


def test_native_source_drops_the_switch_shares_the_classes_and_is_stamped() -> None:
    text = Path(tasklevel.__file__).read_text()
    script = build_script()
    out = script.native_source(text, script.TARGETS["tasklevel"])
    assert "# <shared>" not in out and "# <pure-only>" not in out
    assert "class InvariantError" not in out and "class EngineStats" not in out
    assert "from ddl_gym.sim.tasklevel import EngineStats, InvariantError\n" in out
    assert "def _native_simulator" not in out and "PurePythonTaskLevelSimulator" not in out
    assert f'SOURCE_SHA256 = "{hashlib.sha256(text.encode()).hexdigest()}"' in out
    assert "class TaskLevelSimulator:" in out
    compile(out, "_tasklevel_native.py", "exec")  # still a valid module


def test_native_source_rejects_a_source_without_its_markers() -> None:
    script = build_script()
    with pytest.raises(SystemExit, match="shared"):
        script.native_source("import math\n", script.TARGETS["tasklevel"])


def test_build_flag_names_the_class_in_use() -> None:
    if tasklevel.BUILD == "native":
        assert tasklevel.TaskLevelSimulator is not tasklevel.PurePythonTaskLevelSimulator
        assert tasklevel.TaskLevelSimulator.__module__.endswith("_tasklevel_native")
    else:
        assert tasklevel.BUILD == "python"
        assert tasklevel.TaskLevelSimulator is tasklevel.PurePythonTaskLevelSimulator


_CHUNKS = 4


@pytest.mark.skipif(tasklevel.BUILD != "native", reason="plain Python is the engine in use: test_tasklevel_golden covers it")
@pytest.mark.parametrize("chunk", range(_CHUNKS))
def test_plain_python_build_reproduces_the_golden_digests_too(chunk: int) -> None:
    from ddl_gym.baselines.ada_srsf.policy import make_comm_rule, make_placement

    golden = json.loads(GOLDEN_FILE.read_text())["random"]
    changed = []
    for seed in range(chunk, NUM_RANDOM, _CHUNKS * 2):  # half of them: the compiled build runs all
        c = random_config(seed)
        sim = tasklevel.PurePythonTaskLevelSimulator(
            c.cluster, c.workload, c.model, placement=make_placement(c.placement),
            comm_admission=make_comm_rule(c.comm, c.model, replicate_probe_defect=c.probe_defect),
            rng=np.random.default_rng(c.seed), gpu_sharing=c.gpu_sharing, fast=c.fast, debug=c.debug,
            probe_defect=c.probe_defect,
        )
        if _schedule_digest(sim, sim.run()) != golden[c.name]:
            changed.append(c.name)
    assert not changed, f"plain-Python schedules changed: {changed}"


@pytest.mark.skipif(tasklevel.BUILD != "native", reason="no compiled build")
def test_compiled_engine_raises_the_shared_invariant_error() -> None:
    from ddl_gym.sim.model import ClusterSpec, Workload
    from ddl_gym.sim.perf import AllReduceContentionModel
    from ddl_gym.sim.zoo import MODEL_ZOO

    cluster = ClusterSpec.homogeneous(1, 2)
    workload = Workload.from_jobs(arrival=[0.0], gpus=[1], iterations=[2], models=[MODEL_ZOO["resnet50"]])

    def nowhere(sim: object, job: int, rng: np.random.Generator) -> None:
        return None  # never places: the engine is stuck

    sim = tasklevel.TaskLevelSimulator(cluster, workload, AllReduceContentionModel(), placement=nowhere,
                                       comm_admission=lambda s, j: True)
    with pytest.raises(tasklevel.InvariantError, match="stuck"):
        sim.run()
