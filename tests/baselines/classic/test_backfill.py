"""EASY backfilling (ddl_gym.baselines.classic.backfill): the reservation, the backfill rule, the names."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ddl_gym.baselines.classic.backfill import EasyBackfillPolicy
from ddl_gym.baselines.classic.policy import ClassicPolicy
from ddl_gym.policies import canonical_name, make_policy
from ddl_gym.sim.engine import Simulator, run_policy
from ddl_gym.sim.model import ConfigError
from tests.conftest import make_cluster, make_workload


def test_a_long_job_that_would_delay_the_head_waits_and_a_short_one_is_backfilled():
    # One 4-GPU server. Job 0 (2 GPUs, long) runs; job 1 needs all 4 and becomes the head; job 2
    # (2 GPUs) fits now but runs past job 0's end; job 3 (1 GPU) finishes long before it.
    wl = make_workload([2, 4, 2, 1], [1000, 10, 2000, 100], [0.0, 1.0, 2.0, 3.0])
    easy = run_policy(Simulator(make_cluster(1, 4), wl), EasyBackfillPolicy("srsf", "pack"))
    greedy = run_policy(Simulator(make_cluster(1, 4), wl), ClassicPolicy("srsf", "pack"))
    assert greedy.start[2] == 2.0 and greedy.start[1] >= greedy.finish[2]  # greedy: the head waits for job 2
    assert easy.start[1] == pytest.approx(easy.finish[0])  # EASY: the head starts at its shadow time
    assert easy.start[2] >= easy.finish[1]  # job 2 was not backfilled
    assert easy.start[3] == 3.0  # job 3 was: it ends before the shadow time
    assert easy.jct.mean() < greedy.jct.mean()


def test_extra_gpus_admit_a_long_job_once():
    # One 8-GPU server. Job 0 (4 GPUs, long) runs; head job 1 needs 6, so at its shadow time 2 GPUs are
    # extra: the first long 2-GPU job may use them, the second (arriving with it) may not.
    wl = make_workload([4, 6, 2, 2], [1000, 10, 5000, 5000], [0.0, 1.0, 2.0, 2.0])
    policy = EasyBackfillPolicy("fifo", "pack")
    res = run_policy(Simulator(make_cluster(1, 8), wl), policy)
    assert res.start[2] == 2.0
    assert res.start[3] > 2.0
    assert res.start[1] == pytest.approx(res.finish[0])  # the extra GPUs did not delay the head
    assert policy.reservations > 0


@settings(max_examples=40, deadline=None)
@given(jobs=st.lists(st.tuples(st.sampled_from([1, 2, 3, 4, 6, 8]), st.integers(10, 3000),
                               st.floats(0.0, 200.0, allow_nan=False)), min_size=2, max_size=14))
def test_with_exact_estimates_a_fifo_head_never_starts_after_its_first_shadow_time(jobs):
    """EASY's guarantee (Mu'alem & Feitelson 2001): on one server nothing contends, so run-time estimates
    are exact, and with FIFO order a head keeps its place until it starts; it must start by the shadow
    time computed when it first became the head."""
    jobs = sorted(jobs, key=lambda j: j[2])
    wl = make_workload([g for g, _, _ in jobs], [f for _, f, _ in jobs], [a for _, _, a in jobs])
    first_shadow: dict[int, float] = {}

    class Recording(EasyBackfillPolicy):
        def shadow(self, sim, head):
            t, extra = super().shadow(sim, head)
            first_shadow.setdefault(head, t)
            return t, extra

    res = run_policy(Simulator(make_cluster(1, 8), wl), Recording("fifo", "pack"))
    assert res.completed
    for head, t in first_shadow.items():
        assert res.start[head] <= t + 1e-6 * max(1.0, t), (head, res.start[head], t)


def test_names_and_options():
    assert canonical_name("EASY-SRSF+fewest_servers") == "easy-srsf+fs"
    assert make_policy("easy-fifo+pack").name == "easy-fifo+pack"
    with pytest.raises(ConfigError, match="easy: unknown job order 'gpu-step'"):
        EasyBackfillPolicy("gpu-step", "pack")
    with pytest.raises(ConfigError):
        make_policy("easy-gpu-step+pack")  # not registered: EASY needs run-time estimates
