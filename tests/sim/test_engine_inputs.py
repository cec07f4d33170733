"""Inputs that enter the simulator are finite and valid, or refused by name (issue 30).

* Zero-time iterations are refused: a job whose time per iteration is 0 (no compute, no
  communication) has no defined slowdown and made the debug checker divide by zero. The job-level
  engine refuses any rate that is not positive and finite when the job starts (a named
  ``ConfigError``: job, model, rate model); the task-level engine refuses compute tasks that round
  to 0 ns at construction (tests/test_tasklevel_fuzz.py).
* Performance-model parameters are finite (``RARContentionModel(xi2=nan)`` once hung ``step()``).
* Workload arrivals and weights are finite.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from ddl_gym.policies import make_policy
from ddl_gym.harness import simulate
from ddl_gym.scenarios import Scenario
from ddl_gym.sim.engine import Simulator, run_policy
from ddl_gym.sim.model import ClusterSpec, ConfigError, ModelProfile, Workload
from ddl_gym.sim.perf import AllReduceContentionModel, RARContentionModel
from ddl_gym.sim.zoo import get_model

NAN, INF = math.nan, math.inf


@pytest.mark.parametrize("field", ["xi1", "xi2", "alpha", "reduce_bytes_per_s"])
@pytest.mark.parametrize("value", [NAN, INF, -INF])
def test_rar_model_refuses_non_finite_parameters_by_name(field: str, value: float) -> None:
    with pytest.raises(ConfigError, match=f"RAR model: {field} must be a finite number"):
        RARContentionModel(**{field: value})


@pytest.mark.parametrize("field", ["a", "b", "eta"])
@pytest.mark.parametrize("value", [NAN, INF, -INF])
def test_allreduce_model_refuses_non_finite_parameters_by_name(field: str, value: float) -> None:
    with pytest.raises(ConfigError, match=f"all-reduce model: {field} must be a finite number"):
        AllReduceContentionModel(**{field: value})


@pytest.mark.parametrize("model,kwargs,message", [
    (RARContentionModel, {"xi2": -1e-3}, "xi2 and alpha must be >= 0"),
    (RARContentionModel, {"reduce_bytes_per_s": 0.0}, "reduce_bytes_per_s > 0"),
    (RARContentionModel, {"xi1": 0.0}, "xi1 must be in"),
    (AllReduceContentionModel, {"b": 0.0}, "b > 0"),
    (AllReduceContentionModel, {"a": -1.0}, "a >= 0"),
])
def test_models_refuse_out_of_range_parameters_by_name(model, kwargs, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        model(**kwargs)


@pytest.mark.parametrize("key", ["arrival", "weight"])
@pytest.mark.parametrize("value", [NAN, INF])
def test_workload_refuses_non_finite_arrivals_and_weights(key: str, value: float) -> None:
    columns = {"arrival": [0.0, 1.0], "weight": [1.0, 1.0]}
    columns[key] = [0.0 if key == "arrival" else 1.0, value]
    with pytest.raises(ConfigError, match=f"job 1: {key} must be a finite number"):
        Workload.from_jobs(gpus=[1, 1], iterations=[3, 3], models=[get_model("resnet50")] * 2, **columns)


def _instant_workload(gradient_bytes: float = 0.0) -> Workload:
    instant = ModelProfile("instant", gradient_bytes=gradient_bytes, forward_s=0.0, backward_s=0.0, batch_size=8,
                           gpu_memory_mb=100)
    return Workload.from_jobs(arrival=[0.0, 1.0], gpus=[1, 2], iterations=[10, 10],
                              models=[get_model("resnet50"), instant])


@pytest.mark.parametrize("debug", [False, True])
def test_zero_time_iterations_are_refused_by_name(debug: bool) -> None:
    cluster = ClusterSpec.homogeneous(2, 4)
    sim = Simulator(cluster, _instant_workload(), AllReduceContentionModel(), debug=debug)
    with pytest.raises(ConfigError, match=r"job 1 \(model 'instant'\).*time per iteration of 0.0 s.*positive and finite"):
        run_policy(sim, make_policy("fifo+pack"), np.random.default_rng(0))


def test_zero_time_iterations_through_the_harness_are_a_named_error_not_a_crash() -> None:
    scenario = Scenario(name="instant", cluster=ClusterSpec.homogeneous(2, 4),
                        workload=lambda rng, cluster: _instant_workload(), model=AllReduceContentionModel())
    for debug in (False, True):  # was: slowdown 0.0 without --debug, ZeroDivisionError with it
        with pytest.raises(ConfigError, match="time per iteration"):
            simulate(make_policy("srsf+ff"), scenario, 0, debug=debug)


def test_a_job_with_communication_only_is_valid_with_a_positive_slowdown() -> None:
    """Zero compute but a real all-reduce across servers: a positive time per iteration, valid."""
    cluster = ClusterSpec.homogeneous(2, 1)
    comm_only = ModelProfile("comm-only", gradient_bytes=1e8, forward_s=0.0, backward_s=0.0, batch_size=8,
                             gpu_memory_mb=100)
    workload = Workload.from_jobs(arrival=[0.0], gpus=[2], iterations=[5], models=[comm_only])
    result = run_policy(Simulator(cluster, workload, AllReduceContentionModel(), debug=True),
                        make_policy("fifo+spread"), np.random.default_rng(0))
    assert result.completed and result.summary()["avg_slowdown"] == pytest.approx(1.0)


class _BrokenModel:
    """A user rate model that returns a bad time per iteration."""

    name = "broken"

    def __init__(self, tau: float) -> None:
        self.tau = tau

    def bind(self, cluster, workload):
        tau = self.tau

        class Bound:
            contention_free = False

            def iteration_time(self, job, n_servers, contention):
                return tau

        return Bound()


@pytest.mark.parametrize("tau", [0.0, -1.0, NAN, INF])
def test_a_rate_model_giving_a_bad_time_per_iteration_is_refused_not_hung(tau: float) -> None:
    cluster = ClusterSpec.homogeneous(1, 4)
    workload = Workload.from_jobs(arrival=[0.0], gpus=[2], iterations=[5], models=[get_model("resnet50")])
    sim = Simulator(cluster, workload, _BrokenModel(tau))
    with pytest.raises(ConfigError, match="_BrokenModel gives a time per iteration"):
        sim.start(0, [0, 1])
