"""The versioned task suite (ddl_gym/suite.py), its worlds, cards and generated docs/suite.md, and the
non-clairvoyant references (baselines/attained.py)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ddl_gym.sim.priority import NONCLAIRVOYANT_ORDERS

from ddl_gym.baselines import make_policy
from ddl_gym.baselines.classic.attained import gittins_index
from ddl_gym.scenario_stats import offered_load
from ddl_gym.scenarios import get_scenario
from ddl_gym.sim.engine import Simulator, run_policy
from ddl_gym.sim.lower_bound import check_supported
from ddl_gym.sim.model import ClusterSpec, Workload
from ddl_gym.sim.perf import RARContentionModel
from ddl_gym.sim.zoo import MODEL_ZOO
from ddl_gym.suite import TASKS, Task, get_task
from ddl_gym.suite_cards import DEFAULT_DOC, definitions_section, definitions_table, task_card
from ddl_gym.suite_scenarios import SUITE_WORLDS
from ddl_gym.workloads.philly import SAMPLE_PATH, default_trace_path

REPO = Path(__file__).resolve().parents[2]
HAVE_TRACES = default_trace_path("rfold") != SAMPLE_PATH


def test_tasks_are_well_formed():
    names = [t.name for t in TASKS]
    assert len(set(names)) == len(names) and len({t.env_id for t in TASKS}) == len(TASKS)
    tiers = [t.tier for t in TASKS]
    assert tiers.count("realistic") >= 4 and "stress" in tiers and "regression" in tiers
    assert any(not t.clairvoyant for t in TASKS if t.tier == "realistic")
    for t in TASKS:
        assert re.fullmatch(r"DDLCluster-[A-Za-z0-9-]+-v1", t.env_id)
        assert len(t.test_seeds) >= 20
        for scenario in {t.scenario, t.training_scenario}:
            sc = get_scenario(scenario)
            assert sc.engine == "job"
        if not t.clairvoyant:  # no reference may read remaining work
            assert all(r.split(":")[0].split("+")[0] in NONCLAIRVOYANT_ORDERS + ("las", "las-np", "gittins",
                                                                                 "gittins-np")
                       for r in t.references)
    with pytest.raises(ValueError, match="overlap"):
        Task("x", "small", "X", "regression", train_seeds=range(0, 10), validation_seeds=range(5, 15))
    with pytest.raises(ValueError, match="20 test seeds"):
        Task("x", "small", "X", "regression", test_seeds=range(1_000_000, 1_000_005))
    with pytest.raises(ValueError, match="unknown task"):
        get_task("nope")


def test_existing_scenarios_are_unchanged_by_the_suite():
    """The suite adds scenarios; it never redefines a built-in one (same names, same first episode)."""
    cluster, workload = get_scenario("default-10g").episode(0)
    assert cluster.inter_bandwidth == 10e9 / 8 and workload.num_jobs == 160
    assert {t.scenario for t in TASKS if t.tier == "realistic"} == set(SUITE_WORLDS)


def test_suite_worlds_have_their_stated_load_and_the_bound_covers_them():
    """The fitted arrival rates still give each world its stated offered load (± 15% over 4 seeds), every job
    fits, and the LP bound's proof applies to every task's scenario."""
    for name, world in SUITE_WORLDS.items():
        scenario = get_scenario(name)
        loads = []
        for seed in range(20_000, 20_004):
            cluster, workload = scenario.episode(seed)
            assert cluster.num_servers == world["servers"] and cluster.inter_bandwidth == world["nic"] * 1e9 / 8
            loads.append(offered_load(cluster, workload, scenario.model))
        assert abs(np.mean(loads) / world["load"] - 1.0) < 0.15, (name, loads)
        assert max(loads) <= 2.5
    spread = get_scenario("pollux-25g").episode(0)
    assert np.mean(spread[1].gpus > spread[0].max_server_gpus) > 0.4  # spreading unavoidable for most jobs
    for t in TASKS:
        scenario = get_scenario(t.scenario)
        if t.scenario.endswith("-windows") and not HAVE_TRACES:
            continue  # trace windows need ../shared/traces (tests/test_trace_windows.py skips likewise)
        cluster, workload = scenario.episode(int(t.test_seeds[0]))
        check_supported(cluster, workload, scenario.model, scenario.engine, scenario.options)


def test_suite_module_needs_no_rl_side():
    # `import ddl_gym` registers the env ids (Gymnasium side, with their vector entry points); what the
    # suite must not pull in is the RL side: torch, SB3, the training code.
    code = ("import sys, ddl_gym.suite as s; s.TASKS[0].env_id; "
            "print(sorted(m for m in sys.modules if m.startswith(('ddl_gym.agents.train', 'ddl_gym.agents.policy', "
            "'torch', 'stable_baselines3', 'sb3_contrib'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_docs_suite_definitions_regenerate_identically():
    """docs/suite.md is generated (python -m ddl_gym.suite_cards --write docs/suite.md); its definitions
    block is cheap to rebuild and must match the code."""
    text = DEFAULT_DOC.read_text()
    if HAVE_TRACES:
        assert definitions_section(text) == definitions_table().strip()
    else:  # without ../shared/traces the trace-window tasks cannot draw an episode: check the other rows
        rows = definitions_table([t for t in TASKS if not t.scenario.endswith("-windows")]).splitlines()
        committed = definitions_section(text).splitlines()
        assert [r for r in rows if r.startswith("| `")] == [r for r in committed if r.startswith("| `")
                                                            and "-windows` |" not in r]
    # the committed cards claim >= 4 realistic tasks with >= 20% LP headroom
    rows = [line for line in text.splitlines() if line.startswith("| `") and "| realistic |" in line
            and "%" in line.rsplit("|", 2)[-2]]
    heads = [float(line.rsplit("|", 2)[-2].split("%")[0]) for line in rows]
    assert sum(h >= 20.0 for h in heads) >= 4, heads


def test_committed_cards_json_matches_the_markdown_and_the_bound():
    """docs/suite.json (written with docs/suite.md) has a card per task, the same best references as the
    table, and per-seed figures from which its headroom follows; no best reference is below its LP bound."""
    from ddl_gym.suite_cards import DEFAULT_JSON, load_cards, preempts

    cards = load_cards(DEFAULT_JSON)
    assert list(cards) == [t.name for t in TASKS]
    text = DEFAULT_DOC.read_text()
    for name, card in cards.items():
        assert f"| `{name}` | {card.tier} |" in text and f"`{card.best_reference}`" in text
        assert card.best_reference in get_task(name).references
        jct, lp = np.array(card.best_jct_per_seed), np.array(card.lp_bound_per_seed)
        assert len(jct) == len(get_task(name).test_seeds) and np.all(jct >= lp)
        assert card.headroom == pytest.approx(float(np.mean((jct - lp) / lp)))
        if preempts(card.best_reference):  # the env's agents cannot preempt: a non-preemptive one is named too
            assert card.nonpreemptive_reference and not preempts(card.nonpreemptive_reference)
            assert card.nonpreemptive_jct_s >= float(np.mean(lp))
        else:
            assert card.nonpreemptive_reference == ""


def test_quick_card_is_deterministic_and_never_below_the_bound():
    task = get_task("small")
    a = task_card(task, validation_seeds=[500_000], test_seeds=[1_000_000, 1_000_001])
    b = task_card(task, validation_seeds=[500_000], test_seeds=[1_000_000, 1_000_001])
    assert a == b
    assert a.best_reference == min(a.validation_jct_s, key=a.validation_jct_s.get)
    assert all(h >= 0 for h in a.headroom_per_seed) and a.lp_bound_s > 0


# ---------------------------------------------------------------------------- attained-service references
def test_gittins_index_on_a_two_point_distribution():
    """Sizes {1, 10} equally likely: at a = 0 the best Δ is 1 (P = 1/2, E[min(S, 1)] = 1 -> index 0.5);
    once a job has 1 unit of service it must be the size-10 job: index 1/9 with Δ* = 9."""
    sizes = np.array([1.0, 10.0])
    index, delta = gittins_index(sizes, 0.0)
    assert index == pytest.approx(0.5) and delta == pytest.approx(1.0)
    index, delta = gittins_index(sizes, 1.0)
    assert index == pytest.approx(1 / 9) and delta == pytest.approx(9.0)
    assert gittins_index(sizes, 10.0) == (0.0, float("inf"))


def _features_only_world(iterations: list[int]) -> tuple[ClusterSpec, Workload]:
    cluster = ClusterSpec.homogeneous(2, 4, inter_bandwidth=25e9 / 8, intra_bandwidth=800e9 / 8)
    vgg, resnet = MODEL_ZOO["vgg16"], MODEL_ZOO["resnet50"]
    n = len(iterations)
    workload = Workload.from_jobs(arrival=[0.0, 0.0, 5.0, 10.0, 15.0, 20.0][:n], gpus=[4, 2, 4, 2, 1, 8][:n],
                                  iterations=iterations, models=[vgg, resnet, resnet, vgg, resnet, vgg][:n])
    return cluster, workload


@pytest.mark.parametrize("policy", ["las", "las-np", "gittins", "gittins-np"])
def test_attained_service_policies_do_not_read_job_sizes(policy):
    """Two worlds that differ only in iterations: every decision before the first completion is the same
    (the policy cannot tell them apart until a job finishes)."""
    model = RARContentionModel(xi1=0.6)
    runs = []
    for iterations in ([3000, 5000, 2000, 4000, 6000, 3000], [9000, 7000, 8000, 9500, 8800, 9900]):
        cluster, workload = _features_only_world(iterations)
        runs.append(run_policy(Simulator(cluster, workload, model), make_policy(policy), np.random.default_rng(0)))
    first_done = min(float(np.nanmin(r.finish)) for r in runs)
    before = [{j: s for j, s in enumerate(r.start) if s < first_done} for r in runs]
    assert before[0] == before[1] and len(before[0]) >= 2


def test_las_preempts_a_demoted_job_for_a_new_arrival():
    """Queue limit 100 GPU-s: the 8-GPU job passes it after 12.5 s; the job arriving at 20 s (Q0) takes
    its GPUs, and the long job resumes later with the restart overhead."""
    cluster = ClusterSpec.homogeneous(2, 4, inter_bandwidth=100e9 / 8, intra_bandwidth=800e9 / 8)
    vgg = MODEL_ZOO["resnet50"]
    workload = Workload.from_jobs(arrival=[0.0, 20.0], gpus=[8, 8], iterations=[3000, 200], models=[vgg, vgg])
    result = run_policy(Simulator(cluster, workload, RARContentionModel()), make_policy("las:limits=100,overhead=5"))
    assert result.preemptions is not None and int(result.preemptions[0]) == 1
    assert result.start[1] == pytest.approx(20.0) and result.finish[1] < result.finish[0]
    np_result = run_policy(Simulator(cluster, workload, RARContentionModel()), make_policy("las-np:limits=100"))
    assert np_result.preemptions is None or int(np.sum(np_result.preemptions)) == 0
    assert np_result.finish[1] > np_result.finish[0]


def test_stats_command_prints_the_suite_cards(capsys):
    from ddl_gym.scenarios_command import main

    assert main(["--stats", "--suite", "--quick", "--task", "small"]) == 0
    out = capsys.readouterr().out
    assert "| `small` | regression |" in out and "LP headroom" in out
    from ddl_gym.cliargs import UsageError

    with pytest.raises(UsageError, match="--no-such-option"):
        main(["--stats", "--no-such-option"])
