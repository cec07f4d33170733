"""Shared fixtures: tiny clusters and workloads with hand-checkable numbers."""

from __future__ import annotations

import os

import numpy as np
import pytest

from ddl_gym.sim.model import ClusterSpec, ModelProfile, Workload

# The three-node Ray cluster tests need the Ray venv (scripts/setup_ray.sh: ray[rllib] pins gymnasium==1.2.2);
# scripts/test.sh runs them there with DDL_GYM_RAY_TESTS=1, after the main suite.
collect_ignore = [] if os.environ.get("DDL_GYM_RAY_TESTS") == "1" else ["ray_cluster"]

# A model with round numbers: 100 MB gradients, 20 ms forward + 30 ms backward.
TOY_MODEL = ModelProfile("toy", gradient_bytes=100e6, forward_s=0.02, backward_s=0.03, batch_size=32, gpu_memory_mb=1000)


@pytest.fixture
def toy_model() -> ModelProfile:
    return TOY_MODEL


def make_cluster(servers: int = 2, gpus: int = 4) -> ClusterSpec:
    return ClusterSpec.homogeneous(servers, gpus, intra_bandwidth=100e9, inter_bandwidth=1.25e9)


def make_workload(gpus: list[int], iterations: list[int], arrival: list[float] | None = None) -> Workload:
    n = len(gpus)
    return Workload.from_jobs(
        arrival=arrival if arrival is not None else [0.0] * n,
        gpus=gpus, iterations=iterations, models=[TOY_MODEL] * n,
    )


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(0)
