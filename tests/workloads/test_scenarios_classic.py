"""Scenario registry and files; classic policies' ordering and placement semantics."""

from __future__ import annotations

import numpy as np
import pytest

from ddl_gym.policies import list_policies, make_policy
from ddl_gym.baselines.classic.policy import ClassicPolicy
from ddl_gym.placement import PLACEMENT_RULES, get_placement_rule
from ddl_gym.scenarios import SCENARIOS, get_scenario, load_scenario_file
from ddl_gym.sim.engine import Simulator, run_policy
from ddl_gym.sim.model import ConfigError
from ddl_gym.sim.perf import AllReduceContentionModel
from tests.conftest import make_cluster, make_workload


def test_default_scenario_matches_its_calibration():
    scenario = get_scenario("default")
    cluster, workload = scenario.episode(0)
    assert cluster.gpus_per_server == (4,) * 16
    assert cluster.inter_bandwidth == pytest.approx(100e9 / 8)  # 100 Gb/s NICs (scenarios.py docstring)
    assert scenario.model.xi1 == pytest.approx(0.6)
    counts = dict(zip(*np.unique(workload.gpus, return_counts=True)))
    assert counts == {1: 80, 2: 14, 4: 26, 8: 30, 16: 8, 32: 2}
    assert 3600.0 < workload.arrival.max() <= 4800.0  # 80 minutes of arrivals
    assert {m.name for m in workload.models} <= {"vgg16", "resnet50", "inception_v3", "lstm_ptb"}


def test_former_default_is_kept_as_default_10g():
    cluster, workload = get_scenario("default-10g").episode(0)
    assert cluster.inter_bandwidth == pytest.approx(10e9 / 8) and get_scenario("default-10g").model.xi1 == 1.0
    assert workload.arrival.max() <= 1200.0 and workload.name == "default"


def test_every_registered_scenario_samples(tmp_path):
    for name in ("default", "small", "large", "ada-srsf", "ada-srsf-joblevel", "philly-slice", "default-10g",
                 "ada-srsf-10g"):
        cluster, workload = SCENARIOS[name].episode(1)
        assert workload.num_jobs > 0 and workload.gpus.max() <= cluster.num_gpus


def test_scenario_file_round_trip(tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text(
        'name = "mine"\n[cluster]\nservers = 3\ngpus_per_server = 8\ninter_bandwidth_gbps = 25\n'
        '[model]\nname = "allreduce"\neta = 1e-10\n[workload]\nkind = "synthetic"\ngenerator = "scaled"\n'
        'num_jobs = 12\nmax_gpus = 8\n'
    )
    scenario = load_scenario_file(path)
    cluster, workload = scenario.episode(3)
    assert cluster.num_gpus == 24 and cluster.inter_bandwidth == pytest.approx(25e9 / 8)
    assert isinstance(scenario.model, AllReduceContentionModel) and scenario.model.eta == 1e-10
    assert workload.num_jobs == 12
    assert get_scenario(str(path)).name == "mine"


@pytest.mark.parametrize("text,needle", [
    ("[cluster\nservers = 2", "not valid TOML"),
    ('bogus = 1\n[cluster]\nservers = 2\n[workload]\nkind = "synthetic"', "bogus: unknown key"),
    ('[workload]\nkind = "synthetic"', "missing [cluster]"),
    ('[cluster]\nservers = 0\n[workload]\nkind = "synthetic"', "cluster.servers"),
    ('[cluster]\nservers = 2\n[model]\nname = "magic"\n[workload]\nkind = "synthetic"', "unknown performance model"),
    ('[cluster]\nservers = 2\n[workload]\nkind = "ftp"', "workload.kind"),
    ('[cluster]\nservers = 2\n[workload]\nkind = "csv"', "workload.path"),
])
def test_bad_scenario_files_name_the_file_and_key(tmp_path, text, needle):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        load_scenario_file(path)
    assert str(path) in str(err.value) and needle in str(err.value)
    assert "\n" not in str(err.value)


def test_unknown_names_suggest_alternatives():
    with pytest.raises(ConfigError, match="did you mean"):
        make_policy("srsf+pak")
    with pytest.raises(ConfigError, match="unknown scenario"):
        get_scenario("nope")
    with pytest.raises(ConfigError, match="unknown placement rule"):
        get_placement_rule("nope")
    assert "fifo+pack" in list_policies() and "sjf-bco" in list_policies()


def test_fifo_is_strict_but_sjf_and_srsf_backfill():
    # 4 GPUs. Job 0 (2 GPUs, long) runs; job 1 needs 4 and blocks FIFO; job 2 (1 GPU) could fit.
    wl = make_workload([2, 4, 1], [1000, 10, 10], [0.0, 1.0, 2.0])
    fifo = run_policy(Simulator(make_cluster(1, 4), wl), ClassicPolicy("fifo", "pack"))
    assert fifo.start[2] >= fifo.start[1]  # head-of-line blocking
    sjf = run_policy(Simulator(make_cluster(1, 4), wl), ClassicPolicy("sjf", "pack"))
    assert sjf.start[2] == 2.0  # backfilled immediately


def test_srsf_prefers_less_total_service():
    # Same duration F·τ, but job 0 uses 4 GPUs: SJF ties, SRSF (× GPUs) prefers job 1.
    wl = make_workload([4, 1, 4], [100, 100, 10000], [0.0, 0.0, 0.0])
    sim = Simulator(make_cluster(1, 4), wl)
    policy = ClassicPolicy("srsf", "pack")
    policy.reset(sim, np.random.default_rng(0))
    assert policy.priority_queue(sim)[0] == 1


def test_placement_rules_semantics():
    sim = Simulator(make_cluster(3, 4), make_workload([1, 3, 2, 5], [10, 10, 10, 10]))
    sim.start(0, [0])  # server 0 has 3 free, servers 1 and 2 have 4 free
    rng = np.random.default_rng(0)
    assert get_placement_rule("pack")(sim, 1, rng).tolist() == [1, 2, 3]  # best fit: the fullest that fits
    assert get_placement_rule("ff")(sim, 2, rng).tolist() == [1, 2]
    spread = get_placement_rule("spread")(sim, 1, rng)
    assert len(set(sim.gpu_server[spread].tolist())) == 3
    five = get_placement_rule("pack")(sim, 3, rng)
    assert len(five) == 5 and len(set(sim.gpu_server[five].tolist())) == 2
    for name, rule in PLACEMENT_RULES.items():
        ids = rule(sim, 3, rng)
        assert len(set(ids.tolist())) == 5 and np.all(sim.gpu_owner[ids] < 0), name


def test_contention_aware_avoids_servers_with_split_jobs():
    sim = Simulator(make_cluster(4, 4), make_workload([2, 2, 8], [10, 10, 10]))
    sim.start(0, [0, 4])  # split job on servers 0 and 1
    sim.start(1, [8, 9])  # single-server job on server 2 (no contention)
    ids = get_placement_rule("ca")(sim, 2, np.random.default_rng(0))
    # Free: s0=3, s1=3, s2=2, s3=4; split jobs: s0=1, s1=1. Uncontended servers first (s3, s2), then s0.
    assert sorted(sim.gpu_server[ids].tolist()) == [0, 0, 2, 2, 3, 3, 3, 3]


def test_fewest_servers_keeps_empty_servers_whole():
    """Free 4, 4, 2, 1 (servers 2 and 3 partly used): a 6-GPU job. ``pack`` takes 4 + 2 from the two
    empty servers and breaks one; ``fs`` takes an empty server and puts the rest on the 2-free one."""
    sim = Simulator(make_cluster(4, 4), make_workload([2, 3, 6], [10, 10, 10]))
    sim.start(0, [8, 9])  # server 2: 2 free
    sim.start(1, [12, 13, 14])  # server 3: 1 free
    rng = np.random.default_rng(0)
    pack = get_placement_rule("pack")(sim, 2, rng)
    fs = get_placement_rule("fs")(sim, 2, rng)
    assert sorted(sim.gpu_server[pack].tolist()) == [0, 0, 0, 0, 1, 1]
    assert sorted(sim.gpu_server[fs].tolist()) == [0, 0, 0, 0, 2, 2]
    assert get_placement_rule("fewest_servers") is get_placement_rule("fs")


@pytest.mark.parametrize("seed", range(40))
def test_fewest_servers_spans_the_minimum_number_of_servers(seed):
    """Random occupancy: ``fs`` returns ``need`` distinct free GPUs on as few servers as ``pack`` (the
    minimum: whole servers emptiest first), and for a job that fits one server the same GPUs as ``pack``."""
    rng = np.random.default_rng(seed)
    servers, per = int(rng.integers(2, 7)), int(rng.choice([2, 4, 8]))
    n_busy = int(rng.integers(0, servers * per))
    sizes = [1] * n_busy
    need = int(rng.integers(1, servers * per - n_busy + 1)) if n_busy < servers * per else 1
    sim = Simulator(make_cluster(servers, per), make_workload(sizes + [need], [10] * (n_busy + 1)))
    for j, gpu in enumerate(rng.permutation(servers * per)[:n_busy].tolist()):
        sim.start(j, [gpu])
    fs = get_placement_rule("fs")(sim, n_busy, rng)
    pack = get_placement_rule("pack")(sim, n_busy, rng)
    if need > sim.num_free:
        assert fs is None and pack is None
        return
    assert len(set(fs.tolist())) == need and np.all(sim.gpu_owner[fs] < 0)
    assert len(set(sim.gpu_server[fs].tolist())) == len(set(sim.gpu_server[pack].tolist()))
    if need <= max(sim.free_per_server):
        assert fs.tolist() == pack.tolist()
