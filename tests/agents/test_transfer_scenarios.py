"""The randomised training family (agents/transfer.py): draws, loads, and no evaluation window."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from ddl_gym.agents.transfer import MixedWorkloadSource, RandomClusterSource, offered_load
from ddl_gym.scenarios import get_scenario
from ddl_gym.sim.model import ClusterSpec
from ddl_gym.sim.perf import RARContentionModel


def test_random_clusters_cover_sizes_bandwidths_and_mixes() -> None:
    source = RandomClusterSource()
    clusters = [source(np.random.default_rng(seed)) for seed in range(200)]
    sizes = {c.num_servers for c in clusters}
    assert sizes >= {4, 8, 12, 16}  # several sizes (24-server 8-GPU clusters are cut to 128 GPUs)
    assert max(c.num_gpus for c in clusters) <= 128
    nics = np.array([c.inter_bandwidth * 8 / 1e9 for c in clusters])
    assert nics.min() >= 10 and nics.max() <= 100 and nics.max() / nics.min() > 5
    mixed = [c for c in clusters if len(set(c.gpus_per_server)) > 1]
    assert mixed and all(set(c.gpus_per_server) <= {2, 4, 8} for c in mixed)
    again = RandomClusterSource()(np.random.default_rng(5))
    assert again == clusters[5]


def test_synthetic_episodes_hit_their_drawn_load() -> None:
    model = RARContentionModel()
    source = MixedWorkloadSource(performance_model=model, kinds=(("synthetic", 1.0),))
    cluster = ClusterSpec.homogeneous(8, 4, inter_bandwidth=100e9 / 8, intra_bandwidth=800e9 / 8)
    loads = []
    for seed in range(20):
        rng = np.random.default_rng(seed)
        w = source(rng, cluster)
        assert w.num_jobs == 80 and w.gpus.max() <= 32
        rng = np.random.default_rng(seed)
        rng.choice(1, p=[1.0])  # replay the kind draw ...
        target = float(np.exp(rng.uniform(np.log(0.5), np.log(4.0))))  # ... and the load draw
        loads.append(offered_load(w, cluster, model))
        assert loads[-1] == pytest.approx(target, rel=1e-9)
    assert min(loads) < 1.0 < max(loads)


def test_transfer_train_scenario_draws_every_kind_from_training_splits_only() -> None:
    scenario = get_scenario("transfer-train")
    names = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seed in range(40):
            try:
                cluster, w = scenario.episode(seed)
            except Exception as exc:  # traces absent: only synthetic episodes can be checked
                if "not found" in str(exc):
                    pytest.skip("shared traces not available")
                raise
            assert w.gpus.max() <= cluster.num_gpus and 40 <= w.num_jobs <= 160
            names.append(w.name)
    kinds = {n.split(":")[0].split("[")[0] for n in names}
    assert kinds == {"transfer-synthetic", "philly-pollux", "alibaba-whole"}
    assert all(":train[" in n for n in names if n != "transfer-synthetic")
