"""The task-level engine's admission kernels (AdaDUAL, SRSF(n) run inside the engine).

A rule that declares ``engine_kernel()`` is not called per query: the engine runs its own copy of
the rule's ``decide_hold``. These tests pin that copy to the rule: the declaration itself, the
schedules of golden configurations run through the rule instead of the kernel, and the debug-mode
cross-check that catches a kernel answering differently from its rule.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from ddl_gym.baselines.ada_srsf.policy import AdaDual, SRSFn, make_comm_rule, make_placement
from ddl_gym.sim.model import ClusterSpec, ConfigError, Workload
from ddl_gym.sim.tasklevel import InvariantError, TaskLevelSimulator
from tests.tasklevel_golden import GOLDEN_FILE, NUM_RANDOM, _schedule_digest, random_config
from tests.sim.test_tasklevel import B, ETA, MODEL, profile, scripted, two_allreduce_sim


def test_rules_declare_their_kernel_only_when_it_is_exactly_their_decide_hold() -> None:
    ada = AdaDual(B, ETA)
    assert ada.engine_kernel() == ("adadual", ada.threshold)
    assert AdaDual(B, ETA, replicate_probe_defect=True).engine_kernel() is None  # needs mark_probe
    assert SRSFn(3).engine_kernel() == ("srsf", 3)

    class Stricter(AdaDual):
        def decide_hold(self, sim, job):  # type: ignore[no-untyped-def]
            return False, sim.job_servers[job], sim.job_servers[job], 0, 0

    class Laxer(SRSFn):
        def decide_hold(self, sim, job):  # type: ignore[no-untyped-def]
            return True, (), (), 0, 0

    assert Stricter(B, ETA).engine_kernel() is None
    assert Laxer(1).engine_kernel() is None


class _CountingRule:
    """Wraps a rule: same ``engine_kernel`` and ``decide_hold``, counting the calls of the latter."""

    def __init__(self, rule: AdaDual | SRSFn) -> None:
        self.rule = rule
        self.calls = 0
        self.admits_when_idle = rule.admits_when_idle
        self.reconsider_on_server_change_only = rule.reconsider_on_server_change_only

    def engine_kernel(self):  # type: ignore[no-untyped-def]
        return self.rule.engine_kernel()

    def decide_hold(self, sim, job):  # type: ignore[no-untyped-def]
        self.calls += 1
        return self.rule.decide_hold(sim, job)

    def __call__(self, sim, job):  # type: ignore[no-untyped-def]
        return self.decide_hold(sim, job)[0]


@pytest.mark.parametrize("comm", ["ada", "srsf1", "srsf2"])
def test_engine_runs_the_kernel_and_debug_mode_checks_it_against_the_rule(comm: str) -> None:
    def run(debug: bool) -> tuple[int, tuple[float, ...]]:
        rule = _CountingRule(make_comm_rule(comm, MODEL))
        sim = two_allreduce_sim(100.0, 20.0, rule, iterations=3)
        sim.debug = debug  # the helper builds it in debug mode; the cross-check is read per pass
        result = sim.run()
        return rule.calls, tuple(result.finish)

    quiet_calls, quiet_finish = run(debug=False)
    checked_calls, checked_finish = run(debug=True)
    assert quiet_calls == 0  # the engine answered every query itself
    assert checked_calls > 0  # debug mode asked the rule as well, and both agreed
    assert quiet_finish == checked_finish


def test_debug_catches_a_kernel_that_disagrees_with_its_rule() -> None:
    class Mislabelled(SRSFn):
        """SRSF(2)'s decisions, but declares SRSF(1)'s kernel."""

        def engine_kernel(self) -> tuple[str, int]:
            return ("srsf", 1)

    # Two concurrent all-reduces on the same two servers: SRSF(2) admits the second, SRSF(1) not.
    with pytest.raises(InvariantError, match="admission kernel"):
        two_allreduce_sim(100.0, 20.0, Mislabelled(2)).run()


def test_unknown_kernel_is_a_config_error() -> None:
    class Odd(SRSFn):
        def engine_kernel(self) -> tuple[str, int]:
            return ("fifo", 1)

    cluster = ClusterSpec.homogeneous(1, 2)
    wl = Workload.from_jobs(arrival=[0.0], gpus=[1], iterations=[1], models=[profile("m", 1.0)])
    with pytest.raises(ConfigError, match="unknown engine kernel"):
        TaskLevelSimulator(cluster, wl, MODEL, placement=scripted({0: [0]}), comm_admission=Odd(1))


_GOLDEN = json.loads(GOLDEN_FILE.read_text())["random"]
# Golden configurations whose rule has a kernel (no probe defect), every 6th: run through the rule.
_KERNEL_SEEDS = [s for s in range(NUM_RANDOM) if not random_config(s).probe_defect][::6]


@pytest.mark.parametrize("chunk", range(2))
def test_the_rules_themselves_reproduce_the_golden_schedules(chunk: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """With the kernels switched off the engine calls AdaDual/SRSFn.decide_hold: same digests."""
    monkeypatch.setattr(AdaDual, "engine_kernel", lambda self: None)
    monkeypatch.setattr(SRSFn, "engine_kernel", lambda self: None)
    changed = []
    for seed in _KERNEL_SEEDS[chunk::2]:
        config = random_config(seed)
        comm = make_comm_rule(config.comm, config.model)
        assert comm.engine_kernel() is None
        sim = TaskLevelSimulator(
            config.cluster, config.workload, config.model, placement=make_placement(config.placement),
            comm_admission=comm, rng=np.random.default_rng(config.seed), gpu_sharing=config.gpu_sharing,
            fast=config.fast, debug=config.debug,
        )
        if _schedule_digest(sim, sim.run()) != _GOLDEN[config.name]:
            changed.append(config.name)
    assert len(_KERNEL_SEEDS) >= 20
    assert not changed, f"schedules through the rules differ from the golden ones: {changed}"
