"""One naming scheme with aliases; paired statistics; invalid-action counts; plot helpers; the RLlib wrapper."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import numpy as np
import pandas as pd
import pytest

import ddl_gym  # noqa: F401
from ddl_gym.policies import POLICY_ALIASES, canonical_name, list_policies, make_policy
from ddl_gym.cli import main
from ddl_gym.harness import evaluate, format_mean_ci, markdown_table, paired_differences, paired_markdown
from ddl_gym.sim.model import ConfigError

# Every name the golden digests (recorded before this scheme) use must keep working.
from tests.golden_cases import CLASSIC, TASKLEVEL


# ---------------------------------------------------------------------------- naming
@pytest.mark.parametrize("old, new", [
    ("sjf-bco-ff", "sjf-bco+ff"), ("sjf-bco-rand", "sjf-bco+rand"), ("lwf1+ada-srsf", "ada-srsf"),
    ("ada-srsf+lwf1", "ada-srsf"), ("ff+srsf1", "srsf1+ff"), ("lwf1+srsf3", "srsf3+lwf1"), ("rand+ada-srsf", "ada-srsf+rand"),
    ("fifo+contention_aware", "fifo+ca"), ("SRSF+First_Fit", "srsf+ff"), ("sjf+bestfit", "sjf+pack"),
    ("mcts:guide=srsf+contention_aware,sims=2", "mcts:guide=srsf+ca,sims=2"), ("sjf-bco+bco", "sjf-bco"),
    ("lwf8+srsf2", "srsf2+lwf8"), ("maskable-ppo:Runs/A.zip", "maskable-ppo:Runs/A.zip"),
])
def test_old_names_are_aliases_of_one_canonical_spec(old: str, new: str) -> None:
    assert canonical_name(old) == new
    assert canonical_name(new) == new  # canonical names are fixed points


def test_every_registered_name_is_canonical_and_every_alias_builds() -> None:
    for name in list_policies():
        assert canonical_name(name) == name
    for alias, target in POLICY_ALIASES.items():
        assert target in list_policies() and canonical_name(alias) == target
    for name in [*CLASSIC, *TASKLEVEL, "sjf-bco", "sjf-bco-ff", "sjf-bco-ls", "sjf-bco-rand"]:
        make_policy(name)  # the golden cases' old names
    a, b = make_policy("lwf1+srsf2"), make_policy("srsf2+lwf1")
    assert (a.placement_name, a.comm_name) == (b.placement_name, b.comm_name) == ("lwf1", "srsf2")


def test_unknown_names_fail_with_a_suggestion() -> None:
    with pytest.raises(ConfigError, match="did you mean fifo\\+pack"):
        make_policy("fifo+pakc")
    with pytest.raises(ConfigError, match="agents are given as maskable-ppo:PATH"):
        make_policy("dqn:agent.zip")
    with pytest.raises(ConfigError, match="sims"):
        make_policy("mcts:guide=srsf+pack,sims=abc")


def test_results_rows_carry_the_canonical_name(tmp_path: Path) -> None:
    result = evaluate(["FIFO+first_fit", "fifo+ff"], "small", 1, None, progress=False, echo=False)
    assert result.summary["policy"].tolist() == ["fifo+ff"]  # one policy, one row


# ---------------------------------------------------------------------------- statistics
def _summary(values: dict[str, list[float]], seeds: list[int] | None = None) -> pd.DataFrame:
    rows = []
    for policy, xs in values.items():
        for seed, x in zip(seeds or range(len(xs)), xs):
            rows.append({"scenario": "s", "policy": policy, "seed": seed, "avg_jct_s": x, "makespan_s": 2 * x,
                         "p95_jct_s": 3 * x})
    return pd.DataFrame(rows)


def test_paired_differences_on_known_numbers() -> None:
    summary = _summary({"ref": [100.0, 200.0, 300.0, 400.0], "a": [90.0, 170.0, 285.0, 360.0]})
    paired = paired_differences(summary, "ref", ["avg_jct_s"]).iloc[0]
    rel = np.array([-10.0, -15.0, -5.0, -10.0])
    half = 3.1824 * rel.std(ddof=1) / 2.0  # t_{0.975,3} · s / sqrt(4)
    assert paired["seeds"] == 4 and paired["rel_pct_mean"] == pytest.approx(-10.0)
    assert paired["rel_pct_ci"] == pytest.approx(half, rel=1e-6)
    assert paired["diff_mean"] == pytest.approx(-23.75) and paired["better"] == 4 and not paired["constant"]


def test_pairing_uses_only_shared_seeds_and_flags_constant_differences() -> None:
    summary = pd.concat([_summary({"ref": [10.0, 10.0, 10.0]}, [0, 1, 2]), _summary({"det": [8.0, 8.0]}, [1, 2])])
    paired = paired_differences(summary, "ref", ["avg_jct_s"]).iloc[0]
    assert paired["seeds"] == 2 and paired["constant"] and paired["rel_pct_ci"] == 0.0
    text = paired_markdown(paired_differences(summary, "ref"))
    assert "‡" in text and "more seeds add nothing" in text and "± 0" not in text
    with pytest.raises(ConfigError, match="reference policy 'nope'"):
        paired_differences(summary, "nope")


def test_identical_seeds_are_marked_instead_of_plus_minus_zero() -> None:
    assert format_mean_ci(42.0, 0.0) == "42.0 ‡"
    table = markdown_table(_summary({"det": [5.0, 5.0, 5.0]}))
    assert "± 0" not in table and "‡" in table and "more seeds add nothing" in table


def test_compare_command_writes_the_paired_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert main(["eval", "--scenario", "small", "--policies", "fifo+pack,srsf+pack", "--seeds", "0:3", "--out", str(out),
                 "--no-progress", "--no-plots", "--workers", "1", "--reference", "srsf+pack"]) == 0
    printed = capsys.readouterr().out
    assert "Paired against srsf+pack" in printed and "better on" in printed
    assert main(["compare", "--out", str(out), "--reference", "srsf+pack", "--metrics", "avg_jct_s"]) == 0
    csv = pd.read_csv(out / "paired_srsf_pack.csv")
    assert csv["policy"].tolist() == ["fifo+pack"] and csv["seeds"].tolist() == [3]
    summary = pd.read_csv(out / "summary.csv").set_index(["policy", "seed"])["avg_jct_s"]
    rel = [100 * (summary["fifo+pack", s] - summary["srsf+pack", s]) / summary["srsf+pack", s] for s in range(3)]
    assert csv["rel_pct_mean"].iloc[0] == pytest.approx(np.mean(rel))
    assert (out / "paired_srsf_pack.md").read_text().startswith("# Paired comparison against srsf+pack")


# ---------------------------------------------------------------------------- invalid actions in the harness
class EveryThirdInvalid:
    """Env-driven: every third decision picks a masked action (if one exists), else the first valid start."""

    name = "every-third-invalid"
    env_kwargs: dict = {}

    def __init__(self) -> None:
        self.chosen_invalid = 0
        self.steps = 0

    def reset(self, seed: int | None = None) -> None:
        self.chosen_invalid = self.steps = 0

    def act(self, obs: np.ndarray, action_mask: np.ndarray, info: dict) -> int:
        self.steps += 1
        invalid = np.flatnonzero(np.asarray(action_mask) == 0)
        if self.steps % 3 == 0 and invalid.size:
            self.chosen_invalid += 1
            return int(invalid[0])
        valid = np.flatnonzero(action_mask)
        starts = valid[valid > 0]
        return int(starts[0]) if starts.size else 0


def test_the_harness_counts_masked_actions() -> None:
    policy = EveryThirdInvalid()
    result = evaluate([policy], "small", 1, None, progress=False, echo=False)
    row = result.summary.iloc[0]
    assert row["invalid_actions"] == policy.chosen_invalid > 0
    assert row["invalid_action_rate"] == pytest.approx(policy.chosen_invalid / policy.steps)
    clean = evaluate(["fifo+pack"], "small", 1, None, progress=False, echo=False).summary.iloc[0]
    assert clean["invalid_actions"] == 0 and clean["invalid_action_rate"] == 0.0


# ---------------------------------------------------------------------------- plot helpers
def test_short_labels_are_short_and_distinct() -> None:
    from ddl_gym.plots import short_label

    assert short_label("maskable-ppo:leaderboard/default-10g/agents/agent-10g.zip") == "maskable-ppo:agent-10g"
    a, b = "maskable-ppo:runs/x/agent.zip", "maskable-ppo:runs/y/agent.zip"
    assert short_label(a, [a, b]) == "maskable-ppo:x" and short_label(b, [a, b]) == "maskable-ppo:y"
    assert short_label("srsf+ca") == "srsf+ca"


def test_bars_follow_the_table_order_and_error_bars_stop_at_zero(tmp_path: Path) -> None:
    from ddl_gym import plots

    summary = _summary({"b": [1.0, 1.0, 200.0], "a": [5.0, 6.0, 7.0]})
    labels = plots._group_labels(summary)
    assert plots._ordered_names(summary, labels, ["b", "a"]) == ["b", "a"]
    assert plots._ordered_names(summary, labels, None) == ["a", "b"]
    from ddl_gym.harness import mean_ci

    mean, half, _ = mean_ci([1.0, 1.0, 200.0])
    assert half > mean  # a symmetric bar would reach below zero ...
    below, above = plots.error_bars([mean, 5.0], [half, 1.0], non_negative=True)
    assert mean - below[0] == 0.0 and above[0] == half and (below[1], above[1]) == (1.0, 1.0)  # ... this one stops at 0
    assert plots.error_bars([-1.0], [3.0], non_negative=False)[0][0] == 3.0  # signed metrics keep the full bar
    path = plots.plot_metric_bars(summary, tmp_path / "m.png", metrics=[("avg_jct_s", "x", 1.0)], order=["b", "a"])
    assert path.read_bytes()[:4] == b"\x89PNG"
    assert plots._spread([1.0, 100.0]) == 100.0 and plots._spread([0.0, -1.0]) == 1.0


# ---------------------------------------------------------------------------- RLlib wrapper (no Ray needed)
def test_dict_obs_with_mask_matches_the_env_and_passes_check_env() -> None:
    from gymnasium.utils.env_checker import check_env

    from ddl_gym.wrappers import DictObsWithMask, rllib_env_creator

    env = DictObsWithMask(gym.make("ddl_gym:DDLCluster-Small-v0"))
    assert set(env.observation_space.spaces) == {"observations", "action_mask"}
    obs, info = env.reset(seed=3)
    rng = np.random.default_rng(0)
    for _ in range(200):
        assert obs in env.observation_space
        assert obs["action_mask"].dtype == np.float32
        assert np.array_equal(obs["action_mask"], np.asarray(info["action_mask"], dtype=np.float32))
        assert np.array_equal(obs["action_mask"], env.action_masks().astype(np.float32))
        valid = np.flatnonzero(obs["action_mask"])
        obs, _, terminated, truncated, info = env.step(int(rng.choice(valid)))
        assert not info.get("invalid_action", False)  # masked sampling never picks an invalid action
        if terminated or truncated:
            obs, info = env.reset()
    check_env(DictObsWithMask(gym.make("ddl_gym:DDLCluster-Small-v0").unwrapped), skip_render_check=True)
    made = rllib_env_creator({"env_id": "DDLCluster-Small-v0", "window": 4})
    assert made.observation_space["action_mask"].shape == (made.action_space.n,)
    assert made.unwrapped.window == 4
