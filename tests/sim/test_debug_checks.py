"""``--debug`` checks invariants for every engine and every kind of policy (issue 30).

Self-driving policies (``run_episode``) build their own engines; the switch is process-wide
(:mod:`ddl_gym.sim.checks`), so each policy kind below must report more than 0 checks, and a
corrupted engine state must be caught (the checks can fail), whoever drives the engine.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from ddl_gym.baselines.ada_srsf import make_comm_rule, make_placement
from ddl_gym.policies import make_policy
from ddl_gym.harness import evaluate, simulate
from ddl_gym.scenarios import Scenario, get_scenario
from ddl_gym.sim import checks
from ddl_gym.sim.engine import InvariantError, Simulator, run_policy
from ddl_gym.sim.model import ClusterSpec, ModelProfile, Workload
from ddl_gym.sim.perf import AllReduceContentionModel
from ddl_gym.sim.tasklevel import InvariantError as TaskInvariantError
from ddl_gym.sim.tasklevel import TaskLevelSimulator
from ddl_gym.sim.zoo import get_model


def _first_jobs(name: str, k: int) -> Scenario:
    """Scenario ``name`` with only the first ``k`` jobs of each episode (fast debug runs)."""
    scenario = get_scenario(name)
    draw = scenario.workload

    def workload(rng: np.random.Generator, cluster: ClusterSpec) -> Workload:
        full = draw(rng, cluster)
        return full.subset(np.arange(min(k, full.num_jobs)))

    return dataclasses.replace(scenario, workload=workload)


#: One policy of each kind, with the engine it drives: (spec, scenario, jobs, expected driver).
POLICY_KINDS = [
    ("srsf+ff", "small", 12, "native"),  # classic, job-level engine, harness-driven
    ("easy-srsf+fs", "small", 12, "native"),  # EASY backfilling: reservations, idle GPUs by choice
    ("a-srpt", "asrpt-small", 10, "native"),  # pipeline rate model
    ("sjf-bco", "small", 12, "self"),  # offline plan, own Simulator
    ("mcts:guide=srsf+pack,sims=2", "small", 5, "self"),  # env forks
    ("ada-srsf", "ada-srsf", 10, "self"),  # task-level engine, fast path
    ("srsf3+lwf1", "ada-srsf", 10, "self"),
    ("smd", "smd-sync", 8, "self"),  # PS / SMD interval world
    ("esw", "smd-sync", 8, "self"),
    ("a-online", "aonline-ps-small", 10, "self"),  # A-Online world
    ("drf", "aonline-ps-small", 10, "self"),
    ("tiresias", "aonline-ps-small", 10, "self"),  # preemptive
]


@pytest.mark.parametrize("spec,scenario,jobs,driver", POLICY_KINDS, ids=[c[0] for c in POLICY_KINDS])
def test_every_policy_kind_runs_invariant_checks_under_debug(spec: str, scenario: str, jobs: int, driver: str) -> None:
    run = simulate(make_policy(spec), _first_jobs(scenario, jobs), 0, debug=True)
    assert run.driver == driver
    assert run.result.completed
    assert run.invariant_checks > 0
    plain = simulate(make_policy(spec), _first_jobs(scenario, jobs), 0, debug=False)
    assert plain.invariant_checks == 0
    # Checking changes nothing in the schedule.
    np.testing.assert_array_equal(plain.result.finish, run.result.finish)


class _EnvPolicy:
    """An env-driven policy (``act``): the first valid action."""

    name = "first-valid"

    def act(self, obs: object, mask: np.ndarray, info: dict) -> int:
        return int(np.flatnonzero(mask)[0])


def test_env_driven_policy_runs_invariant_checks() -> None:
    run = simulate(_EnvPolicy(), _first_jobs("small", 8), 0, debug=True)
    assert run.driver == "env" and run.invariant_checks > 0


def test_evaluate_debug_reports_checks_per_pair(tmp_path, capsys) -> None:
    scenario = _first_jobs("ada-srsf", 8)
    results = evaluate(["ada-srsf", "srsf3+lwf1"], scenario, seeds=1, out=tmp_path / "debug", workers=1, debug=True,
                       progress=False, plots=False)
    assert (results.summary["invariant_checks"] > 0).all()
    assert "invariant checks over 2 simulated pairs, 0 violations" in capsys.readouterr().err
    quiet = evaluate(["ada-srsf"], scenario, seeds=1, out=None, workers=1, debug=False, progress=False, plots=False)
    assert (quiet.summary["invariant_checks"] == 0).all()


# ----------------------------------------------------------------------------- the checks can fail
class _Corrupting:
    """FIFO on first-fit GPUs that corrupts the engine state with ``corrupt`` at the first decision
    point where a job has been running for a while."""

    name = "corrupting"

    def __init__(self, corrupt) -> None:
        self.corrupt = corrupt
        self.done = False

    def reset(self, sim: Simulator, rng: np.random.Generator) -> None:
        self.done = False

    def schedule(self, sim: Simulator) -> None:
        if not self.done and any(sim.now > sim.start_time[j] for j in sim.running):
            self.done = True
            self.corrupt(sim)  # before this decision point's starts (each start is checked in debug)
        for job in list(sim.queue):
            free = np.flatnonzero(sim.gpu_owner < 0)
            need = int(sim.workload.gpus[job])
            if free.size < need:
                break
            sim.start(job, free[:need].tolist())


def _steal_gpu(sim: Simulator) -> None:
    job = next(j for j in sim.running if sim.now > sim.start_time[j])
    sim.gpu_owner[int(np.flatnonzero(sim.gpu_owner < 0)[-1])] = job  # a free GPU booked behind the ledger's back


def _undo_progress(sim: Simulator) -> None:
    job = next(j for j in sim.running if sim.now > sim.start_time[j])
    sim._last[job] = sim.now  # the progress since its last banking is forgotten: work done falls


class _SelfDriving:
    """A self-driving policy (own ``run_episode``) that runs :class:`_Corrupting` on its own engine."""

    name = "self-corrupting"

    def __init__(self, corrupt) -> None:
        self.corrupt = corrupt

    def run_episode(self, scenario, cluster, workload, rng):
        return run_policy(Simulator(cluster, workload, scenario.model), _Corrupting(self.corrupt), rng)


@pytest.mark.parametrize("corrupt,message", [(_steal_gpu, "bookkeeping"), (_undo_progress, "progress not monotone")])
def test_corrupted_job_level_state_is_caught_also_in_self_driving_policies(corrupt, message: str) -> None:
    scenario = _first_jobs("small", 10)
    for policy in (_Corrupting(corrupt), _SelfDriving(corrupt)):
        with pytest.raises(InvariantError, match=message):
            simulate(policy, scenario, 0, debug=True)


def test_progress_that_falls_is_caught() -> None:
    cluster = ClusterSpec.homogeneous(2, 4)
    workload = Workload.from_jobs(arrival=[0.0, 0.0, 5.0], gpus=[2, 2, 2], iterations=[500, 400, 300],
                                  models=[get_model("resnet50")] * 3)
    sim = Simulator(cluster, workload, debug=True)
    sim.start(0, [0, 1])
    sim.advance()  # the arrival at 5 s
    sim._last[0] = sim.now  # forgets the progress since it started: work done falls back to 0
    with pytest.raises(InvariantError, match="progress not monotone"):
        sim.check_invariants()


def test_completion_before_the_ideal_run_time_is_caught() -> None:
    cluster = ClusterSpec.homogeneous(1, 4)
    workload = Workload.from_jobs(arrival=[0.0], gpus=[2], iterations=[100], models=[get_model("resnet50")])
    sim = Simulator(cluster, workload, debug=True)
    sim.start(0, [0, 1])
    sim._ideal_tau[0] = sim.tau[0] * 2  # claims the job could not have finished this early
    with pytest.raises(InvariantError, match="ideal run time"):
        while sim.advance():
            pass


def test_corrupted_task_level_state_is_caught() -> None:
    cluster = ClusterSpec.homogeneous(2, 2)
    profile = ModelProfile("m", gradient_bytes=1e6, forward_s=0.01, backward_s=0.02, batch_size=8, gpu_memory_mb=100)
    workload = Workload.from_jobs(arrival=[0.0, 0.0], gpus=[4, 2], iterations=[5, 5], models=[profile, profile])
    model = AllReduceContentionModel()

    def place_and_corrupt(sim, job, rng):
        ids = make_placement("ff")(sim, job, rng)
        if ids is not None:
            sim.gpu_mem_free[0] -= 1.0  # memory booked twice
        return ids

    def build(debug: bool) -> TaskLevelSimulator:
        return TaskLevelSimulator(cluster, workload, model, placement=place_and_corrupt,
                                  comm_admission=make_comm_rule("srsf1", model), debug=debug)

    build(False).run()  # unchecked: passes silently
    with pytest.raises(TaskInvariantError, match="memory"):
        build(True).run()
    with checks.invariant_checks() as session, pytest.raises(TaskInvariantError, match="memory"):
        build(False).run()  # the session switches debug on, whatever the caller passed
    assert session.checks > 0


def test_sessions_count_and_switch_only_while_open() -> None:
    assert not checks.forced()
    with checks.invariant_checks() as outer:
        assert checks.forced()
        with checks.invariant_checks(enabled=False) as off:
            checks.count(3)
        assert outer.checks == 3 and off.checks == 0
    assert not checks.forced()
    checks.count()
    assert outer.checks == 3
