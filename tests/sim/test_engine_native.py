"""The optional compiled build of the job-level engine (``scripts/build_native.py``).

The build switch: ``ddl_gym.sim.engine`` rebinds ``Simulator`` and ``run_policy`` to the compiled
module only while its stamp is the sha256 of ``engine.py`` and ``DDL_GYM_PURE_PYTHON`` is unset; the
source transformation keeps one ``SimulationError``/``InvariantError`` for both builds. With the
compiled build in use, the whole suite exercises it, and the golden digests are also recomputed with
plain Python in a child process, so both builds stay pinned to the same results.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import pickle
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

import ddl_gym.sim as sim_package
from ddl_gym.policies import make_policy
from ddl_gym.baselines.sjf_bco import plan as sjf_bco_plan
from ddl_gym.envs import core as env_core
from ddl_gym.sim import engine, tasklevel
from ddl_gym.sim.model import ClusterSpec, ConfigError, Workload
from ddl_gym.sim.native import compiled_module
from ddl_gym.sim.zoo import MODEL_ZOO
from tests.golden_cases import cases
from tests.native_build import REPO_ROOT, build_script, fake_native


def test_native_source_drops_the_switch_shares_the_errors_and_allows_subclasses() -> None:
    script = build_script()
    text = Path(engine.__file__).read_text()
    out = script.native_source(text, script.TARGETS["engine"])
    assert "# <shared>" not in out and "# <pure-only>" not in out
    assert "class SimulationError" not in out and "class InvariantError" not in out
    assert "from ddl_gym.sim.engine import InvariantError, SimulationError\n" in out
    assert "def _native_module" not in out and "PurePythonSimulator = " not in out
    assert "@mypyc_attr(allow_interpreted_subclasses=True)\nclass Simulator:" in out
    assert f'SOURCE_SHA256 = "{hashlib.sha256(text.encode()).hexdigest()}"' in out
    compile(out, "_engine_native.py", "exec")  # still a valid module


def test_native_source_refuses_an_engine_without_its_markers() -> None:
    script = build_script()
    with pytest.raises(SystemExit, match="shared"):
        script.native_source("import math\n", script.TARGETS["engine"])


def test_native_source_of_the_env_core_has_no_shared_import_and_keeps_the_stamp() -> None:
    script = build_script()
    text = Path(env_core.__file__).read_text()
    out = script.native_source(text, script.TARGETS["envcore"])
    assert "# <pure-only>" not in out and "PurePythonDecisionCore = " not in out and "def _native_module" not in out
    assert "from ddl_gym.envs.core import" not in out  # nothing shared: the compiled copy imports nothing back
    assert "class DecisionCore:" in out
    assert f'SOURCE_SHA256 = "{hashlib.sha256(text.encode()).hexdigest()}"' in out
    compile(out, "_core_native.py", "exec")


# The build switch of every compiled module (ddl_gym.sim.native), through each module's own accessor.
_SWITCHES = {
    "engine": (lambda: engine.__file__, lambda fake: fake, lambda: engine._native_module()),
    "tasklevel": (lambda: tasklevel.__file__, lambda fake: fake.TaskLevelSimulator, lambda: tasklevel._native_simulator()),
    "core": (lambda: env_core.__file__, lambda fake: fake, lambda: env_core._native_module()),
    "plan": (lambda: sjf_bco_plan.__file__, lambda fake: fake, lambda: compiled_module(sjf_bco_plan.__file__)),
}
_PACKAGES = {target.module: target.package for target in build_script().TARGETS.values()}


def _install_fake(monkeypatch: pytest.MonkeyPatch, stem: str, stamp: str) -> types.ModuleType:
    class FakeSimulator:
        pass

    return fake_native(monkeypatch, stem, stamp, _PACKAGES[stem], TaskLevelSimulator=FakeSimulator,
                       Simulator=FakeSimulator)


@pytest.mark.parametrize("stem", sorted(_SWITCHES))
def test_compiled_build_used_only_while_its_stamp_matches_the_source(monkeypatch: pytest.MonkeyPatch, stem: str) -> None:
    source, expected, in_use = _SWITCHES[stem]
    monkeypatch.delenv("DDL_GYM_PURE_PYTHON", raising=False)
    fake = _install_fake(monkeypatch, stem, hashlib.sha256(Path(source()).read_bytes()).hexdigest())
    assert in_use() is expected(fake)
    _install_fake(monkeypatch, stem, "0" * 64)  # built from another version of the source
    assert in_use() is None


@pytest.mark.parametrize("stem", sorted(_SWITCHES))
def test_pure_python_switch_disables_the_compiled_build(monkeypatch: pytest.MonkeyPatch, stem: str) -> None:
    source, _, in_use = _SWITCHES[stem]
    _install_fake(monkeypatch, stem, hashlib.sha256(Path(source()).read_bytes()).hexdigest())
    monkeypatch.setenv("DDL_GYM_PURE_PYTHON", "1")
    assert in_use() is None
    monkeypatch.setenv("DDL_GYM_PURE_PYTHON", "0")  # "0" keeps it on
    assert in_use() is not None


# Per compiled module: (module, native module suffix, (public name, its plain-Python alias) pairs).
_BUILD_NAMES = {
    "engine": (lambda: engine, "_engine_native",
               (("Simulator", "PurePythonSimulator"), ("run_policy", "pure_python_run_policy"))),
    "core": (lambda: env_core, "_core_native",
             (("DecisionCore", "PurePythonDecisionCore"), ("PortableLayout", "PurePythonPortableLayout"))),
    "plan": (lambda: sjf_bco_plan, "_plan_native",
                     (("Trial", "PurePythonTrial"), ("PlanContext", "PurePythonPlanContext"), ("plan", "pure_python_plan"))),
}


@pytest.mark.parametrize("stem", sorted(_BUILD_NAMES))
def test_build_flag_names_the_classes_in_use(stem: str) -> None:
    module_of, suffix, names = _BUILD_NAMES[stem]
    module = module_of()
    assert module.BUILD in ("native", "python")
    for public, plain in names:
        compiled = getattr(module, public) is not getattr(module, plain)
        assert compiled == (module.BUILD == "native")  # the public name is the build in use
        if compiled:
            assert getattr(module, public).__module__.endswith(suffix)
    assert sim_package.Simulator is engine.Simulator  # the package exports the build in use


def _world() -> tuple[ClusterSpec, Workload]:
    cluster = ClusterSpec.homogeneous(4, 4)
    rng = np.random.default_rng(5)
    n = 30
    workload = Workload.from_jobs(
        arrival=np.sort(rng.uniform(0, 200, n)), gpus=rng.choice([1, 2, 4, 8], n).tolist(),
        iterations=rng.integers(200, 2000, n).tolist(), models=[MODEL_ZOO["resnet50"]] * n)
    return cluster, workload


@pytest.mark.parametrize("build", ["in use", "plain"])
def test_fork_pickle_and_copy_continue_exactly(build: str) -> None:
    """A fork, a pickled and a copied simulator, taken mid-run, finish with the original's results."""
    cls = engine.Simulator if build == "in use" else engine.PurePythonSimulator
    drive = engine.run_policy if build == "in use" else engine.pure_python_run_policy
    cluster, workload = _world()
    sim = cls(cluster, workload)
    drive(sim, make_policy("srsf+spread"), np.random.default_rng(0), max_events=25)
    assert 0 < sim.num_finished < workload.num_jobs and sim.contended_jobs > 0
    twins = [sim.fork(), pickle.loads(pickle.dumps(sim)), copy.deepcopy(sim)]
    for twin in twins:
        assert type(twin) is cls and twin.now == sim.now and list(twin.queue) == list(sim.queue)
    policy = make_policy("srsf+spread")
    expected = drive(sim, policy, np.random.default_rng(1)).summary()
    for twin in twins:
        assert twin.num_finished < workload.num_jobs  # untouched by the original's run
        assert drive(twin, make_policy("srsf+spread"), np.random.default_rng(1)).summary() == expected


@pytest.mark.parametrize("cls", [engine.Simulator, engine.PurePythonSimulator], ids=["in-use", "plain"])
def test_a_simulator_needs_both_cluster_and_workload(cls: type) -> None:
    cluster, workload = _world()
    with pytest.raises(ConfigError, match="cluster and a workload"):
        cls(cluster)
    with pytest.raises(ConfigError, match="cluster and a workload"):
        cls(workload=workload)
    with pytest.raises(engine.SimulationError, match="cannot start: it is not in the queue"):
        sim = cls(cluster, workload)
        sim.start(workload.num_jobs - 1, np.array([0]))  # not arrived: the shared error class, either build


_PURE_CHECK = """
import json, sys
from tests.golden_cases import GOLDEN_FILE, cases
from ddl_gym.sim import engine
assert engine.BUILD == "python", engine.BUILD
golden = json.loads(GOLDEN_FILE.read_text())
names = set(sys.argv[1:])
checked = [c for c in cases() if c.name in names]
print(json.dumps({"checked": len(checked), "changed": [c.name for c in checked if c.run() != golden[c.name]]}))
"""

_CHUNKS = 2


@pytest.mark.skipif(engine.BUILD != "native", reason="plain Python is the engine in use: test_golden covers it")
@pytest.mark.parametrize("chunk", range(_CHUNKS))
def test_plain_python_engine_reproduces_the_golden_digests_too(chunk: int) -> None:
    names = [c.name for c in cases() if not c.slow][chunk::_CHUNKS]
    env = dict(os.environ, DDL_GYM_PURE_PYTHON="1", PYTHONPATH=str(REPO_ROOT))
    proc = subprocess.run([sys.executable, "-c", _PURE_CHECK, *names], cwd=REPO_ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    outcome = json.loads(proc.stdout.strip().splitlines()[-1])
    assert names and outcome["checked"] == len(names)  # every named case ran in plain Python
    assert outcome["changed"] == [], "plain-Python results changed"
