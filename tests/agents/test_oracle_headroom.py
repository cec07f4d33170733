"""docs/suite-oracle.md (python -m ddl_gym.agents.oracle_headroom): generated from its JSON, consistent with the
bounds it brackets the optimum with, reproducible, and a resumable run that refuses figures made otherwise."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ddl_gym.agents import oracle_headroom as oh
from ddl_gym.sim.model import ConfigError
from ddl_gym.suite_cards import load_cards

DATA = json.loads(oh.DEFAULT_DOC.with_suffix(".json").read_text())
BOUNDS = {t["task"]: t for t in json.loads(oh.BOUNDS_JSON.read_text())["tasks"]}
CARDS = load_cards()


def test_markdown_is_the_rendering_of_its_json():
    assert oh.DEFAULT_DOC.read_text() == oh.oracle_markdown(DATA, CARDS)


def test_default_scope_is_the_goal_scope():
    scoped = [name for name, card in CARDS.items() if card.headroom >= oh.SCOPE_HEADROOM]
    assert sorted(t["task"] for t in DATA["tasks"]) == sorted(scoped)


def test_every_row_agrees_with_the_bounds_and_brackets_the_optimum():
    for t in DATA["tasks"]:
        b, card = BOUNDS[t["task"]], CARDS[t["task"]]
        n = len(t["test_seeds"])
        assert t["test_seeds"] == b["test_seeds"][:n] and t["reference"] == b["reference"]
        assert t["reference_jct_per_seed"] == b["reference_jct_per_seed"][:n]
        strong = np.maximum(card.lp_bound_per_seed[:n], b["nonpreemptive_bound_per_seed"][:n])
        # The same bounds; HiGHS's optimum may move in the last digits between SciPy builds (1e-12 s seen
        # when the cards were regenerated), far below its own 1e-7 tolerances and every printed figure.
        assert np.allclose(strong, t["strong_bound_per_seed"], rtol=1e-9, atol=0.0)
        runs = {"reference": t["reference_jct_per_seed"], "search": t["oracle_jct_per_seed"],
                "priority": t["priority_jct_per_seed"]}
        if t["agent"]:
            runs["agent"] = t["agent_jct_per_seed"]
        best = np.min(np.vstack(list(runs.values())), axis=0)
        assert t["best_known_jct_s"] == pytest.approx(best.mean(), rel=1e-12)
        assert all(runs[by][i] == best[i] for i, by in enumerate(t["best_known_by"]))
        assert np.all(best >= strong * (1 - 1e-6))  # a feasible schedule is never below a valid lower bound
        reduction = (np.asarray(t["reference_jct_per_seed"]) - best) / np.asarray(t["reference_jct_per_seed"])
        assert t["reduction"] == pytest.approx(reduction.mean(), rel=1e-9, abs=1e-12)
        assert t["verdict"] == ("shown reachable" if t["reduction"] >= oh.GOAL_REDUCTION else "not shown")
        assert t["finish"] == oh.finish_rule(t["reference"], card.validation_jct_s)
        # without hindsight: the network alone, by the same rule; a non-clairvoyant task is flagged as such
        from ddl_gym.suite import get_task

        assert t["clairvoyant_task"] == get_task(t["task"]).clairvoyant
        if t["agent"]:
            ref = np.asarray(t["reference_jct_per_seed"])
            plain = ((ref - np.asarray(t["agent_jct_per_seed"])) / ref).mean()
            assert t["without_hindsight_reduction"] == pytest.approx(plain, rel=1e-9, abs=1e-12)
            assert t["without_hindsight_verdict"] == ("reached" if plain >= oh.GOAL_REDUCTION else "not reached")
            best_mean = t["best_known_jct_s"]
            if t["reference_jct_s"] > best_mean:
                share = (t["reference_jct_s"] - t["agent_jct_s"]) / (t["reference_jct_s"] - best_mean)
                assert t["network_share_of_known_room"] == pytest.approx(share, rel=1e-9)


def test_one_episode_of_each_schedule_is_reproduced():
    """The cheapest row of the report (the stress tasks' 10 GbE cluster), its first seed, exactly."""
    from ddl_gym.agents.suite_eval import resolve_agent
    from ddl_gym.suite import get_task

    t = next(x for x in DATA["tasks"] if x["task"] in ("default-10g", "ada-srsf-10g"))
    scenario, seed = get_task(t["task"]).scenario, t["test_seeds"][0]
    jct, _ = oh.oracle_episode(oh.OracleItem(scenario, seed, t["guide"], t["finish"], t["sims"]))
    assert jct == t["oracle_jct_per_seed"][0]
    jct, _ = oh.priority_search_episode(oh.PriorityItem(scenario, seed, t["finish"], t["priority_evals"]))
    assert jct == t["priority_jct_per_seed"][0]
    _, zip_path = resolve_agent(t["agent"])
    assert oh._agent_episode((scenario, f"maskable-ppo:{zip_path}", seed)) == t["agent_jct_per_seed"][0]


def test_finish_rule_takes_the_reference_when_it_runs_natively_else_the_best_native_one():
    val = {"sjf-bco": 1.0, "sjf+fs": 3.0, "easy-srsf+fs": 2.0, "gittins:prior=x": 0.5}
    assert oh.finish_rule("easy-srsf+ca", val) == "easy-srsf+ca"
    assert oh.finish_rule("srsf+pack", val) == "srsf+pack"
    assert oh.finish_rule("sjf-bco", val) == "easy-srsf+fs"
    assert oh.guide_of("easy-srsf+fs") == "srsf+fs" and oh.guide_of("sjf+fs") == "sjf+fs"
    with pytest.raises(ConfigError, match="finishes rollouts natively"):
        oh.finish_rule("sjf-bco", {"sjf-bco": 1.0})


def test_cli_errors_name_the_option(capsys, tmp_path):
    with pytest.raises(SystemExit):
        oh.main(["--seeds", "0"])
    assert "--seeds must be in" in capsys.readouterr().err
    assert oh.main(["--task", "no-such-task"]) == 2
    assert "no-such-task" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        oh.main(["--sims", "0"])
    assert "--sims must be in" in capsys.readouterr().err


def test_a_run_resumes_from_its_partial_file_and_refuses_one_made_otherwise(tmp_path, monkeypatch, capsys):
    out = tmp_path / "o.md"
    args = ["--task", "small", "--seeds", "1", "--sims", "2", "--write", str(out)]
    assert oh.main(args) == 0
    first = json.loads(out.with_suffix(".json").read_text())
    assert not out.with_suffix(".partial.json").exists()  # removed once the report is written
    (row,) = first["tasks"]
    assert row["task"] == "small" and len(row["oracle_jct_per_seed"]) == 1
    # an interrupted run left its partial file: the same settings resume without searching again
    partial = out.with_suffix(".partial.json")
    partial.write_text(json.dumps({"settings": first["settings"], "tasks": first["tasks"]}))

    def no_search(*a, **k):
        raise AssertionError("a finished task was searched again")

    monkeypatch.setattr(oh, "task_oracle", no_search)
    assert oh.main(args) == 0
    assert json.loads(out.with_suffix(".json").read_text())["tasks"] == first["tasks"]
    # figures made under other settings are refused, never reused
    partial.write_text(json.dumps({"settings": dict(first["settings"], sims=99), "tasks": first["tasks"]}))
    assert oh.main(args) == 2
    assert "other settings" in capsys.readouterr().err


def test_partial_settings_follow_the_agent_files_bytes_and_the_finish_rule(tmp_path):
    """A partial file is keyed on content: rewriting the agent file under the same name, or validation figures
    that select another finish rule, change the settings (so the old figures are refused)."""
    import argparse

    agent = tmp_path / "agent.zip"
    agent.write_bytes(b"one network")
    args = argparse.Namespace(sims=2, seeds=1, priority_evals=3)
    bounds = {"small": {"reference": "sjf-bco", "reference_jct_per_seed": [10.0],
                        "validation_jct_s": {"sjf-bco": 1.0, "sjf+fs": 3.0, "easy-srsf+fs": 2.0}}}
    first = oh._settings(args, ["small"], bounds, {"small": str(agent)})
    assert first["finish"] == {"small": "easy-srsf+fs"} and first["code"]
    assert oh._settings(args, ["small"], bounds, {"small": str(agent)}) == first
    agent.write_bytes(b"another network")
    assert oh._settings(args, ["small"], bounds, {"small": str(agent)})["agent_sha256"] != first["agent_sha256"]
    agent.write_bytes(b"one network")
    bounds["small"]["validation_jct_s"]["sjf+fs"] = 1.5
    assert oh._settings(args, ["small"], bounds, {"small": str(agent)})["finish"] == {"small": "sjf+fs"}


@pytest.mark.parametrize("finish", ["easy-srsf+fs", "easy-fifo+pack", "sjf+fs", "gpu-step+ca"])
def test_the_priority_search_starts_from_its_finish_rule_exactly(finish):
    """One evaluation is the finish rule itself: the keyed list schedulers reproduce EASY and the greedy rules
    from the order's own key (EASY's FIFO: arrival index)."""
    from ddl_gym.harness import load_policy_spec, simulate
    from ddl_gym.scenarios import get_scenario

    for seed in (0, 1):
        rule = simulate(load_policy_spec(finish), get_scenario("small"), seed).result.summary()["avg_jct_s"]
        jct, _ = oh.priority_search_episode(oh.PriorityItem("small", seed, finish, 1))
        assert jct == rule
    more = [oh.priority_search_episode(oh.PriorityItem("small", 0, finish, 40))[0] for _ in range(2)]
    assert more[0] == more[1]  # seeded by the episode


def test_easy_takes_a_priority_key_of_the_right_length():
    import numpy as np

    from ddl_gym.baselines.classic.backfill import EasyBackfillPolicy
    from ddl_gym.harness.episodes import simulate_episode
    from ddl_gym.scenarios import get_scenario
    from ddl_gym.sim.engine import Simulator
    from ddl_gym.sim.priority import priority_key

    scenario = get_scenario("small")
    cluster, workload = scenario.episode(2)
    key = priority_key(Simulator(cluster, workload, scenario.model), "srsf")

    class Keyed(EasyBackfillPolicy):
        def __init__(self, key):
            super().__init__("fifo", "pack")
            self.key = key

        def reset(self, sim, rng, key=None):
            super().reset(sim, rng, key=self.key)

    def jobs(policy):
        return simulate_episode(policy, scenario, cluster, workload, 2)[0].summary()["avg_jct_s"]

    assert jobs(Keyed(key)) == jobs(EasyBackfillPolicy("srsf", "pack"))  # the srsf key makes easy-fifo easy-srsf
    assert jobs(Keyed(-key)) != jobs(EasyBackfillPolicy("srsf", "pack"))
    with pytest.raises(ConfigError, match="one value per job"):
        EasyBackfillPolicy("srsf", "pack").reset(Simulator(cluster, workload, scenario.model),
                                                np.random.default_rng(0), key=key[:-1])


def test_the_bracketed_network_never_preempts():
    """A preemptive agent's schedule lies outside the non-preemptive bracket: it is never the network re-run."""
    rows = [{"task": "t", "kind": "network", "agent": "a", "agent_avg_jct_s": 10.0},
            {"task": "t", "kind": "network, preemptive", "agent": "p", "agent_avg_jct_s": 5.0},
            {"task": "t", "kind": "network + search", "agent": "s", "agent_avg_jct_s": 1.0}]
    assert oh.best_agents(rows)["t"]["agent"] == "a"
    assert oh.best_agents(rows[1:]) == {}


def test_a_preemptive_best_reference_is_set_beside_the_best_known_schedule():
    rows = oh.preemptive_reference_comparison(DATA, CARDS)
    from ddl_gym.suite_cards import preempts

    assert sorted(r["task"] for r in rows) == sorted(t["task"] for t in DATA["tasks"]
                                                     if preempts(CARDS[t["task"]].best_reference))
    for r in rows:
        t = next(t for t in DATA["tasks"] if t["task"] == r["task"])
        n = len(t["test_seeds"])
        ref = np.asarray(CARDS[r["task"]].best_jct_per_seed[:n])
        runs = [t["reference_jct_per_seed"], t["oracle_jct_per_seed"], t["priority_jct_per_seed"]]
        runs += [t["agent_jct_per_seed"]] if t["agent"] else []
        best = np.min(np.asarray(runs), axis=0)
        assert r["reduction"] == pytest.approx(((ref - best) / ref).mean(), rel=1e-12)
        assert r["best_known_better"] == int(np.sum(best < ref)) and r["seeds"] == n
        assert f"`{r['task']}`: its best reference, `{r['reference']}`, preempts" in oh.oracle_markdown(DATA, CARDS)


def test_the_preemptive_comparison_refuses_cards_for_other_seeds():
    import dataclasses

    task = DATA["tasks"][0]
    card = CARDS[task["task"]]
    preemptive = dataclasses.replace(card, best_reference="gittins")
    other = dataclasses.replace(preemptive, test_seeds=tuple(s + 1 for s in card.test_seeds))
    with pytest.raises(ValueError, match=task["task"]):
        oh.preemptive_reference_comparison({"tasks": [task]}, {task["task"]: other})
    with pytest.raises(ValueError, match="no task"):
        oh.preemptive_reference_comparison({"tasks": [task]}, {})
    assert len(oh.preemptive_reference_comparison({"tasks": [task]}, {task["task"]: preemptive})) == 1
    plain = dataclasses.replace(card, best_reference="sjf+fs")
    assert oh.preemptive_reference_comparison({"tasks": [task]}, {task["task"]: plain}) == []
