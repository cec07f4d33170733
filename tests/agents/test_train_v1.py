"""The v1 training recipe and the suite's agent scoring (issue 31)."""

from __future__ import annotations

import json

import pytest

from ddl_gym.agents.suite_eval import goal_verdict
from ddl_gym.agents.train_v1 import main as train_v1
from ddl_gym.harness import evaluate
from ddl_gym.sim.model import ConfigError


@pytest.mark.parametrize("change, ci, better, seeds, verdict", [
    (-12.0, 3.0, 18, 20, "met"),
    (-12.0, 3.0, 15, 20, "not worse"),   # better on only 75% of seeds
    (-9.9, 1.0, 20, 20, "not worse"),    # a magnitude claim: 9.9% is not 10%
    (-12.0, 13.0, 20, 20, "not worse"),  # the CI reaches 0
    (2.0, 1.0, 3, 20, "worse"),
    (0.0, 0.0, 0, 20, "not worse"),      # an exact tie
])
def test_goal_verdict_rule(change, ci, better, seeds, verdict):
    assert goal_verdict(change, ci, better, seeds) == verdict


def test_tiny_training_run_gives_an_agent_the_harness_runs_in_the_v1_env(tmp_path):
    out = tmp_path / "agent"
    assert train_v1(["--task", "small", "--expert", "srsf+pack", "--reference", "srsf+pack", "--timesteps", "256",
                     "--validate-every", "256", "--pool", "2", "--n-envs", "1", "--bc-episodes", "1",
                     "--bc-epochs", "1", "--gae-lambda", "0.9", "--out", str(out)]) == 0
    meta = json.loads((out / "agent.json").read_text())
    assert meta["observation_layout"]["observation"] == "v1" and meta["recipe"]["gamma"] == 1.0
    from sb3_contrib import MaskablePPO

    assert meta["recipe"]["gae_lambda"] == 0.9 == MaskablePPO.load(out / "agent.zip", device="cpu").gae_lambda
    log = json.loads((out / "log.json").read_text())
    assert [v["timesteps"] for v in log["validation"]] == [0, 256]
    assert [v["env_steps"] for v in log["validation"]] == [0, 256]  # one env x 256 steps: one rollout
    results = evaluate([f"maskable-ppo:{out / 'agent.zip'}"], "small", [1_000_000], None, workers=1, progress=False,
                       plots=False, echo=False)
    row = results.summary.iloc[0]
    assert row["jobs"] == 40 and row["invalid_actions"] == 0

    # --init continues from the saved agent: the same network and statistics validate to the same figure.
    again_out = tmp_path / "again"
    assert train_v1(["--task", "small", "--init", str(out / "agent.zip"), "--reference", "srsf+pack",
                     "--timesteps", "256", "--validate-every", "256", "--pool", "2", "--n-envs", "1",
                     "--out", str(again_out)]) == 0
    again_log = json.loads((again_out / "log.json").read_text())
    assert again_log["validation"][0]["avg_jct_s"] == meta["validation_avg_jct_s"] and "bc" not in again_log
    with pytest.raises(ConfigError, match="env settings"):
        train_v1(["--task", "small", "--init", str(out / "agent.zip"), "--reference", "srsf+pack", "--window", "4",
                  "--out", str(tmp_path / "x")])
    with pytest.raises(SystemExit):
        train_v1(["--task", "small", "--init", str(out / "agent.zip"), "--expert", "srsf+pack",
                  "--reference", "srsf+pack", "--out", str(tmp_path / "x")])

    # Shipping copies the checkpoint under a name with its training record; the copy loads and acts the same.
    from ddl_gym.agents.ship import ship

    zoo = tmp_path / "zoo"
    shipped = ship(out, "agent-tiny", "python -m ddl_gym.agents.train_v1 --task small ...", zoo)
    shipped_meta = json.loads((zoo / "agent-tiny.json").read_text())
    assert shipped_meta["vecnormalize"] == "agent-tiny.vecnormalize.pkl"
    assert shipped_meta["training"]["validation_curve"][-1][0] == 256 and shipped_meta["training"]["cpu_s"] > 0
    again = evaluate([f"maskable-ppo:{shipped}"], "small", [1_000_000], None, workers=1, progress=False,
                     plots=False, echo=False)
    assert again.summary.iloc[0]["avg_jct_s"] == row["avg_jct_s"]
    continued = ship(again_out, "agent-tiny-2", "x", zoo)  # its lineage: the run it continued from counts too
    record = json.loads(continued.with_suffix(".json").read_text())["training"]
    assert [r["run"] for r in record["runs"]] == [str(again_out), str(out)]
    assert record["cpu_s_total"] == pytest.approx(sum(r["cpu_s"] for r in record["runs"]))
    # continuing from the zoo copy: the lineage ends at the shipped record
    third = tmp_path / "third"
    assert train_v1(["--task", "small", "--init", str(continued), "--reference", "srsf+pack", "--timesteps", "256",
                     "--validate-every", "256", "--pool", "2", "--n-envs", "1", "--out", str(third)]) == 0
    record3 = json.loads(ship(third, "agent-tiny-3", "x", zoo).with_suffix(".json").read_text())["training"]
    assert [r["run"] for r in record3["runs"]] == [str(third), str(continued)]
    assert record3["cpu_s_total"] == pytest.approx(record3["cpu_s"] + record["cpu_s_total"], abs=0.2)
    meta["timesteps"] = 999
    (out / "agent.json").write_text(json.dumps(meta))
    with pytest.raises(ConfigError, match="not on log.json's validation curve"):
        ship(out, "agent-tiny", "x", zoo)
    with pytest.raises(ConfigError, match="missing agent.json, .*agent.zip"):
        ship(tmp_path, "agent-tiny", "x", zoo)


def test_preset_errors_are_named(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("learning_rate: fast\n")
    with pytest.raises(ConfigError, match="learning_rate must be of type float"):
        train_v1(["--preset", str(bad), "--task", "small", "--expert", "srsf+pack", "--reference", "srsf+pack",
                  "--out", str(tmp_path / "x")])
    bad.write_text("gamma: 0.99\n")
    with pytest.raises(ConfigError, match="unknown key 'gamma'"):
        train_v1(["--preset", str(bad), "--task", "small", "--expert", "srsf+pack", "--reference", "srsf+pack",
                  "--out", str(tmp_path / "x")])


@pytest.mark.parametrize("name, scenario", [
    ("agent-v1-papermix40g", "small"), ("agent-v1-default10g", "small"), ("agent-v1-pollux25g", "small"),
    ("agent-v1-pollux8x8", "small"), ("agent-v1-pollux25g-r2", "small"), ("agent-v1-pollux8x8-r2", "small"),
    ("agent-v1-heliosib200", "small"), ("agent-v1-polluxnc25g", "small"), ("agent-v1-papermix40g-r2", "small"),
    ("agent-v1-pollux8x8-r3", "small"), ("agent-v1-default10g-r2", "small"),
    ("agent-v1-mix5", "small"), ("agent-v1-mix7", "small"), ("agent-v1-heliosib200-r2", "small"),
    ("agent-v1-lightload", "small"), ("agent-v1-lightload-r2", "small"),
    ("agent-v1-pollux8x8-attn", "small"), ("agent-v1-papermix40g-r3", "small"),
    ("agent-v1-polluxnc25g-preempt", "small"), ("agent-v1-polluxnc25g-preempt-fs", "small")])
def test_shipped_v1_agents_load_and_act_legally(name, scenario):
    from ddl_gym.scenarios import get_scenario
    from ddl_gym.sim.lower_bound import scenario_lower_bound

    results = evaluate([name], scenario, [1_000_000], None, workers=1, progress=False, plots=False, echo=False)
    row = results.summary.iloc[0]
    assert row["policy"] == name and row["jobs"] == 40 and row["invalid_actions"] == 0
    assert row["avg_jct_s"] >= scenario_lower_bound(get_scenario(scenario), 1_000_000).avg_jct_s  # issue 31: never below


def test_suite_eval_names_agents_and_marks_transfer_rows(tmp_path):
    from ddl_gym.agents.suite_eval import network_kind, resolve_agent

    label, path = resolve_agent("agent-v1-pollux8x8")
    assert label == "agent-v1-pollux8x8" and path.endswith("agent-v1-pollux8x8.zip")
    assert resolve_agent(path)[0] == "agent-v1-pollux8x8"  # the file of a shipped agent is named as such
    assert network_kind("pollux-8x8-100g", path) == "network"
    assert network_kind("helios-ib200", path) == "network, transfer from pollux-8x8-100g"
    with pytest.raises(ConfigError, match="neither a shipped agent"):
        resolve_agent(str(tmp_path / "missing.zip"))


def test_suite_eval_search_row_pairs_the_search_with_the_reference():
    from ddl_gym.agents.suite_eval import score_search

    score = score_search("pollux-8x8-100g", "agent-v1-pollux8x8", "sjf+ca", test_seeds=[1_000_000],
                         sims=4, samples=2, candidates=2)
    row, hours = score.row, score.cpu_hours
    assert row.kind == "network + search" and "MCTS(future=sampled" in row.agent and "fallback=sjf+ca" in row.agent
    assert row.seeds == 1 and hours > 0
    direct = evaluate(["sjf+ca"], "pollux-8x8-100g", [1_000_000], None, workers=1, progress=False, plots=False,
                      echo=False)
    assert row.reference_avg_jct_s == pytest.approx(float(direct.summary.iloc[0]["avg_jct_s"]))
    assert row.agent_avg_jct_s >= row.lp_bound_s  # the LP bound holds for the search too
    with pytest.raises(ConfigError, match="unknown search settings"):
        score_search("pollux-8x8-100g", "agent-v1-pollux8x8", "sjf+ca", test_seeds=[1_000_000], budget=3)


def test_suite_eval_cli_needs_an_agent_or_a_search(capsys):
    from ddl_gym.agents.suite_eval import main

    with pytest.raises(SystemExit):
        main([])
    assert "--agent or --search" in capsys.readouterr().err


def test_suite_eval_search_settings_per_row(capsys):
    import argparse

    from ddl_gym.agents.suite_eval import _search_overrides, main

    parser = argparse.ArgumentParser()
    agent, overrides = _search_overrides(parser, "agent-v1-pollux8x8,leaf=value,depth=2,c_uct=0.25")
    assert agent == "agent-v1-pollux8x8" and overrides == {"leaf": "value", "depth": 2, "c_uct": 0.25}
    assert _search_overrides(parser, "agent-v1-pollux8x8") == ("agent-v1-pollux8x8", {})
    for bad, says in [("a,budget=3", "KEY one of"), ("a,depth", "KEY one of"), ("a,depth=two", "depth must be int"),
                      ("a,sims=4,sims=8", "sims given twice"), ("a,leaf=net", "leaf must be one of")]:
        with pytest.raises(SystemExit):
            main(["--search", f"pollux-8x8-100g={bad}"])
        assert says in capsys.readouterr().err


def test_suite_eval_value_leaf_row_runs_on_a_shipped_agent():
    from ddl_gym.agents.suite_eval import score_search

    score = score_search("pollux-8x8-100g", "agent-v1-pollux8x8", "sjf+ca", test_seeds=[1_000_000],
                         sims=4, samples=2, candidates=2, depth=1, leaf="value")
    row = score.row
    assert "leaf=value head" in row.agent and "fallback" not in row.agent
    assert row.agent_avg_jct_s >= row.lp_bound_s


def test_multi_task_run_deals_envs_over_tasks_and_selects_on_the_mean_ratio(tmp_path):
    from ddl_gym.agents.suite_eval import network_kind

    out = tmp_path / "mix"
    assert train_v1(["--task", "small", "--also", "sjf-bco=sjf+pack", "--expert", "srsf+pack",
                     "--reference", "srsf+pack", "--timesteps", "200", "--validate-every", "200", "--pool", "2",
                     "--n-envs", "2", "--n-steps", "128", "--batch-size", "128", "--bc-episodes", "1",
                     "--bc-epochs", "1", "--out", str(out)]) == 0
    meta = json.loads((out / "agent.json").read_text())
    log = json.loads((out / "log.json").read_text())
    assert meta["also"] == [{"task": "sjf-bco", "reference": "sjf+pack"}] == log["also"]
    assert meta["recipe"]["n_steps"] == 128 and meta["recipe"]["batch_size"] == 128
    # SB3 collects whole rollouts (2 envs x 128 = 256 decisions): 200 requested, 256 consumed, both recorded
    assert [(v["timesteps"], v["env_steps"]) for v in log["validation"]] == [(0, 0), (200, 256)]
    first = log["validation"][0]
    assert set(first["per_task"]) == {"small", "sjf-bco"} and first["avg_jct_s"] == first["per_task"]["small"]
    # the selection figure is the mean ratio to each task's reference on its validation seeds
    refs = {}
    for name, ref in (("small", "srsf+pack"), ("sjf-bco", "sjf+pack")):
        from ddl_gym.suite import get_task

        task = get_task(name)
        res = evaluate([ref], task.scenario, list(task.validation_seeds), None, workers=1, progress=False,
                       plots=False, echo=False)
        refs[name] = float(res.summary["avg_jct_s"].mean())
    expected = (first["per_task"]["small"] / refs["small"] + first["per_task"]["sjf-bco"] / refs["sjf-bco"]) / 2
    assert first["mean_ratio"] == pytest.approx(expected, rel=1e-12)
    best = min(v["mean_ratio"] for v in log["validation"])
    assert meta["validation_mean_ratio"] == best
    zip_path = str(out / "agent.zip")
    assert network_kind("small", zip_path) == "network, multi-task (small, sjf-bco)"
    # shipping keeps the selection figure and every task's curve, not only the main task's
    from ddl_gym.agents.ship import ship

    ship(out, "agent-mix", "python -m ddl_gym.agents.train_v1 ...", tmp_path / "zoo")
    record = json.loads((tmp_path / "zoo" / "agent-mix.json").read_text())["training"]
    assert [s[0] for s in record["validation_selection"]] == [v["timesteps"] for v in log["validation"]]
    assert record["validation_selection"][0][1] == round(first["mean_ratio"], 6)
    assert set(record["validation_selection"][0][2]) == {"small", "sjf-bco"}
    assert network_kind("default", zip_path) == "network, transfer from small, sjf-bco"
    # a multi-task agent continues on any of its tasks: its first validation is its figure on that task
    cont = tmp_path / "cont"
    assert train_v1(["--task", "sjf-bco", "--init", zip_path, "--reference", "sjf+pack", "--timesteps", "128",
                     "--validate-every", "128", "--pool", "2", "--n-envs", "1", "--n-steps", "128",
                     "--batch-size", "128", "--out", str(cont)]) == 0
    selected = next(v for v in log["validation"] if v["mean_ratio"] == best)
    assert json.loads((cont / "log.json").read_text())["validation"][0]["avg_jct_s"] == selected["per_task"]["sjf-bco"]
    with pytest.raises(ConfigError, match="trained on tasks 'small', 'sjf-bco', not 'default'"):
        train_v1(["--task", "default", "--init", zip_path, "--reference", "sjf+ca", "--out", str(tmp_path / "x")])
    for bad, says in [(["--also", "small=srsf+pack"], "already in the run"),
                      (["--also", "pollux-nc-25g=fifo+ca"], "one network cannot serve both"),
                      (["--also", "sjf-bco"], "TASK=REFERENCE"),
                      (["--also", "sjf-bco=sjf+pack", "--also", "default=sjf+ca", "--n-envs", "2"], "cannot give each")]:
        with pytest.raises(SystemExit, match=says):
            train_v1(["--task", "small", "--expert", "srsf+pack", "--reference", "srsf+pack", *bad,
                      "--out", str(tmp_path / "bad")])


def test_placements_option_and_widening_an_agent_keep_its_sampling_policy(tmp_path, capsys):
    """``--placements`` sets the action space (recorded in env_kwargs); ``--widen-from`` continues an agent
    on a superset of its rules with the same action distribution (each copy sharing its source's mass)."""
    import numpy as np
    import torch
    from sb3_contrib import MaskablePPO

    from ddl_gym.agents.train_v1 import widen_action_head

    base = tmp_path / "base"
    common = ["--timesteps", "128", "--validate-every", "128", "--pool", "2", "--n-envs", "1", "--n-steps", "128",
              "--batch-size", "128"]
    assert train_v1(["--task", "small", "--expert", "srsf+pack", "--reference", "srsf+pack", "--bc-episodes", "1",
                     "--bc-epochs", "1", *common, "--out", str(base)]) == 0
    assert "placements" not in json.loads((base / "agent.json").read_text())["env_kwargs"]  # the env's default

    wide = tmp_path / "wide"
    assert train_v1(["--task", "small", "--init", str(base / "agent.zip"), "--reference", "srsf+pack",
                     "--placements", "pack,spread,ca,fs", "--widen-from", "pack", *common, "--out", str(wide)]) == 0
    meta = json.loads((wide / "agent.json").read_text())
    assert meta["env_kwargs"]["placements"] == ["pack", "spread", "contention_aware", "fewest_servers"]
    assert meta["action_n"] == 1 + 8 * 4 and meta["recipe"]["widen_from"] == "pack"
    res = evaluate([f"maskable-ppo:{wide / 'agent.zip'}"], "small", [1_000_000], None, workers=1, progress=False,
                   plots=False, echo=False)
    assert res.summary.iloc[0]["jobs"] == 40 and res.summary.iloc[0]["invalid_actions"] == 0

    # The widened head's distribution, with each fs action merged into its slot's pack action, is the old one.
    state = MaskablePPO.load(base / "agent.zip", device="cpu").policy.state_dict()
    old_rules, new_rules = ("pack", "spread", "contention_aware"), ("pack", "fewest_servers", "spread",
                                                                    "contention_aware")
    widened = widen_action_head(state, old_rules, new_rules, "pack", window=8)
    latent = torch.randn(16, state["action_net.weight"].shape[1], generator=torch.Generator().manual_seed(0))

    def probs(s: dict) -> np.ndarray:
        return torch.softmax(latent @ s["action_net.weight"].T + s["action_net.bias"], -1).numpy()

    before, after = probs(state), probs(widened)
    slots = after[:, 1:].reshape(16, 8, 4)
    merged = np.concatenate([after[:, :1], np.stack([slots[:, :, 0] + slots[:, :, 1], slots[:, :, 2],
                                                     slots[:, :, 3]], -1).reshape(16, -1)], 1)
    np.testing.assert_allclose(merged, before, rtol=1e-5, atol=1e-7)
    assert not np.allclose(after[:, 2::4], 0)  # the new rule gets probability from the start

    # Errors name what is wrong.
    for argv, says in [(["--placements", "pack,spread,ca,fs"], "--widen-from RULE"),
                       (["--placements", "pack,fs", "--widen-from", "pack"], "lack"),
                       (["--placements", "pack,spread,ca,fs", "--widen-from", "fs"], "not one of the --init agent's"),
                       (["--widen-from", "pack"], "already has this run's placements")]:
        with pytest.raises(ConfigError, match=says):
            train_v1(["--task", "small", "--init", str(base / "agent.zip"), "--reference", "srsf+pack", *argv,
                      *common, "--out", str(tmp_path / "x")])
    for argv, says in [(["--expert", "srsf+pack", "--widen-from", "pack"], "give --init"),
                       (["--expert", "srsf+pack", "--placements", "pack,nowhere"], "nowhere"),
                       (["--expert", "srsf+pack", "--placements", "pack,bestfit"], "named twice")]:
        capsys.readouterr()
        with pytest.raises(SystemExit):
            train_v1(["--task", "small", "--reference", "srsf+pack", *argv, "--out", str(tmp_path / "x")])
        assert says in capsys.readouterr().err


def test_preemptive_run_clones_gittins_with_dagger_and_records_the_env(tmp_path):
    """--preemption: the env's preempt actions; --expert gittins clones the preemptive reference through them
    and --dagger-rounds lets the clone drive while the expert labels (more states than the cloning alone)."""
    out = tmp_path / "agent"
    assert train_v1(["--task", "small", "--preemption", "--expert", "gittins", "--reference", "srsf+pack",
                     "--timesteps", "256", "--validate-every", "256", "--pool", "2", "--n-envs", "1",
                     "--bc-episodes", "1", "--bc-epochs", "1", "--dagger-rounds", "1", "--dagger-episodes", "1",
                     "--out", str(out)]) == 0
    meta = json.loads((out / "agent.json").read_text())
    assert meta["env_kwargs"]["preemption"] is True and meta["observation_layout"]["preemption"] is True
    assert meta["action_n"] == 1 + 8 * 3 + 8
    from ddl_gym.agents.suite_eval import network_kind
    from ddl_gym.suite_bounds import is_preemptive_row

    kind = network_kind("small", str(out / "agent.zip"))
    assert kind == "network, preemptive" and is_preemptive_row({"kind": kind + " (vs `x`, not the best reference)"})
    assert not is_preemptive_row({"kind": network_kind("small", "leaderboard/agents/agent-v1-lightload.zip")})
    bc = json.loads((out / "log.json").read_text())["bc"]
    assert len(bc["dagger"]) == 1 and bc["dagger"][0]["samples"] > bc["samples"]
    results = evaluate([f"maskable-ppo:{out / 'agent.zip'}"], "small", [1_000_000], None, workers=1, progress=False,
                       plots=False, echo=False)
    assert results.summary.iloc[0]["jobs"] == 40 and results.summary.iloc[0]["invalid_actions"] == 0
    with pytest.raises(ConfigError, match="preemption=True"):
        train_v1(["--task", "small", "--expert", "gittins", "--reference", "srsf+pack", "--pool", "2", "--n-envs", "1",
                  "--bc-episodes", "1", "--out", str(tmp_path / "x")])
    with pytest.raises(SystemExit):
        train_v1(["--task", "small", "--init", str(out / "agent.zip"), "--dagger-rounds", "1",
                  "--reference", "srsf+pack", "--out", str(tmp_path / "y")])


def test_critic_warmup_trains_the_critic_alone_and_leaves_the_actor_and_statistics_as_they_were(tmp_path):
    """warm_critic: PPO steps whose updates reach only the critic's parameters; the observation statistics are
    fixed meanwhile and every parameter is trainable again afterwards; the CLI records the warm-up."""
    import numpy as np
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv, VecNormalize

    from ddl_gym.agents.train_v1 import _thunk, critic_parameters, warm_critic

    venv = VecNormalize(DummyVecEnv([_thunk("small", False, [0, 1], "srsf+pack", 8)]), norm_obs=True,
                        norm_reward=False, gamma=1.0)
    model = MaskablePPO("MlpPolicy", venv, seed=0, device="cpu", n_steps=64, batch_size=32, n_epochs=2, gamma=1.0,
                        learning_rate=1e-3, policy_kwargs={"net_arch": {"pi": [16], "vf": [16]}})
    before = {k: v.clone() for k, v in model.policy.state_dict().items()}
    mean = venv.obs_rms.mean.copy()
    critic = set(critic_parameters(model.policy))
    assert critic and {"value_net.weight", "mlp_extractor.value_net.0.weight"} <= critic
    warm_critic(model, venv, 128)
    after = model.policy.state_dict()
    assert model.num_timesteps >= 128
    assert all(torch.equal(before[k], after[k]) for k in before if k not in critic)  # the actor: bit for bit
    assert any(not torch.equal(before[k], after[k]) for k in critic)
    assert np.array_equal(venv.obs_rms.mean, mean) and venv.training
    assert all(p.requires_grad for p in model.policy.parameters())

    out = tmp_path / "warm"
    assert train_v1(["--task", "small", "--expert", "srsf+pack", "--reference", "srsf+pack", "--critic-warmup", "64",
                     "--timesteps", "64", "--validate-every", "64", "--pool", "2", "--n-envs", "1", "--n-steps", "64",
                     "--batch-size", "32", "--bc-episodes", "1", "--bc-epochs", "1", "--out", str(out)]) == 0
    assert json.loads((out / "log.json").read_text())["critic_warmup"]["env_steps"] >= 64
    assert json.loads((out / "agent.json").read_text())["recipe"]["critic_warmup"] == 64
    with pytest.raises(SystemExit):
        train_v1(["--task", "small", "--expert", "srsf+pack", "--reference", "srsf+pack", "--critic-warmup", "-1",
                  "--out", str(tmp_path / "bad")])
