"""The evaluation harness: rows, files, determinism over worker counts, resume, CI maths, plots,
and that an env-driven policy scores exactly like the native policy it imitates."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ddl_gym import harness
from ddl_gym.harness import evaluation
from ddl_gym.harness import (
    SUMMARY_COLUMNS,
    TIMING_COLUMNS,
    evaluate,
    format_mean_ci,
    markdown_table,
    mean_ci,
    read_results,
    t_quantile_975,
)
from ddl_gym.scenarios import get_scenario
from ddl_gym.sim.metrics import SUMMARY_KEYS
from ddl_gym.sim.model import ConfigError

POLICIES = ["fifo+pack", "srsf+ca"]
SMALL_JOBS = 40  # jobs per episode of scenario "small"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
REPO = Path(__file__).resolve().parents[2]


def _without_timing(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.drop(columns=[c for c in TIMING_COLUMNS if c in frame.columns])


@pytest.fixture(scope="module")
def serial_run(tmp_path_factory: pytest.TempPathFactory) -> harness.EvalResults:
    out = tmp_path_factory.mktemp("serial")
    return evaluate(POLICIES, "small", 2, out, workers=1, progress=False)


# ---------------------------------------------------------------------------- rows and files
def test_summary_has_one_row_per_pair_with_all_columns(serial_run: harness.EvalResults) -> None:
    summary = serial_run.summary
    assert list(summary.columns[: len(SUMMARY_COLUMNS)]) == list(SUMMARY_COLUMNS)
    assert sorted(zip(summary["policy"], summary["seed"])) == [(p, s) for p in sorted(POLICIES) for s in (0, 1)]
    assert set(summary["scenario"]) == {"small"}
    assert (summary["jobs"] == SMALL_JOBS).all() and summary["completed"].all()
    assert (summary["driver"] == "native").all()
    assert (summary["decision_time_s"] >= 0).all()
    # Metrics equal a direct SimResult summary of the same episode.
    from ddl_gym.policies import make_policy
    from ddl_gym.sim import Simulator, run_policy

    scenario = get_scenario("small")
    cluster, workload = scenario.episode(1)
    direct = run_policy(Simulator(cluster, workload, scenario.model), make_policy("srsf+ca"), np.random.default_rng(1)).summary()
    row = summary[(summary["policy"] == "srsf+ca") & (summary["seed"] == 1)].iloc[0]
    for key in SUMMARY_KEYS:
        assert row[key] == pytest.approx(direct[key], rel=1e-12), key


def test_files_written_and_jobs_csv_has_one_row_per_job(serial_run: harness.EvalResults) -> None:
    out = serial_run.out
    assert out is not None
    pairs = len(POLICIES) * 2
    jobs = pd.read_csv(out / "jobs.csv")
    assert len(jobs) == SMALL_JOBS * pairs == len(serial_run.jobs)
    assert {"scenario", "policy", "seed", "jct_s", "slowdown", "gpu_ids"} <= set(jobs.columns)
    summary = pd.read_csv(out / "summary.csv")
    assert len(summary) == pairs
    assert {"ddl_gym_version", "git_sha", "decision_time_s"} <= set(summary.columns)
    markdown = (out / "summary.md").read_text()
    assert "±" in markdown and all(p in markdown for p in POLICIES)
    pngs = ["jct_cdf.png", "metrics.png", "gantt_fifo_pack.png", "gantt_srsf_ca.png"]
    for name in pngs:
        data = (out / name).read_bytes()
        assert data[:8] == PNG_MAGIC and len(data) > 1000, name


def test_results_do_not_depend_on_worker_count(serial_run: harness.EvalResults, tmp_path: Path) -> None:
    parallel = evaluate(POLICIES, "small", 2, tmp_path, workers=2, progress=False, plots=False)
    pd.testing.assert_frame_equal(_without_timing(parallel.summary), _without_timing(serial_run.summary))
    pd.testing.assert_frame_equal(parallel.jobs, serial_run.jobs)
    # The files are sorted the same way too.
    assert serial_run.out is not None
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "jobs.csv"), pd.read_csv(serial_run.out / "jobs.csv"))


def test_rows_read_back_from_files_equal_fresh_rows(serial_run: harness.EvalResults) -> None:
    assert serial_run.out is not None
    summary, jobs = read_results(serial_run.out)
    pd.testing.assert_frame_equal(summary, serial_run.summary)
    pd.testing.assert_frame_equal(jobs, serial_run.jobs)


# ---------------------------------------------------------------------------- resume / checkpoint
def test_resume_reuses_existing_rows_and_overwrite_recomputes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[str, int]] = []
    from ddl_gym.harness import episodes

    real = episodes._run_pair

    def counting(task: episodes._PairTask):  # type: ignore[no-untyped-def]
        calls.append((task.label, task.seed))
        return real(task)

    monkeypatch.setattr(episodes, "_run_pair", counting)  # every in-process pair runs through it
    first = evaluate(POLICIES, "small", 2, tmp_path, workers=1, progress=False, plots=False)
    assert len(calls) == 4 and first.reused == 0
    calls.clear()
    again = evaluate(POLICIES, "small", 3, tmp_path, workers=1, progress=False, plots=False)
    assert sorted(calls) == [("fifo+pack", 2), ("srsf+ca", 2)]  # only the new seed ran
    assert again.reused == 4 and len(again.summary) == 6
    pd.testing.assert_frame_equal(  # reused rows are the original rows, wall-clock columns included
        again.summary[again.summary["seed"] < 2].reset_index(drop=True), first.summary)
    calls.clear()
    evaluate(["fifo+pack"], "small", [0], tmp_path, workers=1, progress=False, plots=False, overwrite=True)
    assert calls == [("fifo+pack", 0)]
    assert len(pd.read_csv(tmp_path / "summary.csv")) == 6  # other rows kept, none duplicated
    assert len(pd.read_csv(tmp_path / "jobs.csv")) == 6 * SMALL_JOBS


class _FailsOnSecondEpisode:
    """A native scheduler (FIFO + pack) that raises in its second episode."""

    name = "flaky"

    def __init__(self) -> None:
        from ddl_gym.policies import make_policy

        self.inner = make_policy("fifo+pack")
        self.episodes = 0

    def reset(self, sim, rng) -> None:  # type: ignore[no-untyped-def]
        self.episodes += 1
        if self.episodes == 2:
            raise RuntimeError("boom")
        self.inner.reset(sim, rng)

    def schedule(self, sim) -> None:  # type: ignore[no-untyped-def]
        self.inner.schedule(sim)


def test_a_failing_pair_keeps_the_rows_already_computed(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="boom"):
        evaluate([_FailsOnSecondEpisode()], "small", 2, tmp_path, workers=1, progress=False, plots=False)
    summary = pd.read_csv(tmp_path / "summary.csv")
    assert summary[["policy", "seed"]].values.tolist() == [["flaky", 0]]
    assert len(pd.read_csv(tmp_path / "jobs.csv")) == SMALL_JOBS


def test_orphan_job_rows_from_a_crash_are_dropped_on_resume(serial_run: harness.EvalResults, tmp_path: Path) -> None:
    assert serial_run.out is not None
    summary = pd.read_csv(serial_run.out / "summary.csv")
    jobs = pd.read_csv(serial_run.out / "jobs.csv")
    summary[summary["seed"] == 0].to_csv(tmp_path / "summary.csv", index=False)  # crash after seed 1's jobs
    jobs.to_csv(tmp_path / "jobs.csv", index=False)
    result = evaluate(POLICIES, "small", 2, tmp_path, workers=1, progress=False, plots=False)
    assert result.reused == 2
    assert len(pd.read_csv(tmp_path / "jobs.csv")) == 4 * SMALL_JOBS
    pd.testing.assert_frame_equal(result.jobs, serial_run.jobs)


def test_a_summary_row_cut_short_by_a_crash_is_recomputed(serial_run: harness.EvalResults, tmp_path: Path) -> None:
    assert serial_run.out is not None
    text = (serial_run.out / "summary.csv").read_text()
    (tmp_path / "summary.csv").write_text(text[: len(text) - 40])  # last row loses its trailing columns
    (tmp_path / "jobs.csv").write_bytes((serial_run.out / "jobs.csv").read_bytes())
    summary, _ = read_results(tmp_path)
    assert len(summary) == 3
    result = evaluate(POLICIES, "small", 2, tmp_path, workers=1, progress=False, plots=False)
    assert result.reused == 3 and len(pd.read_csv(tmp_path / "summary.csv")) == 4
    pd.testing.assert_frame_equal(_without_timing(result.summary), _without_timing(serial_run.summary))


def test_bad_policy_name_fails_before_running_anything(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown policy"):
        evaluate(["fifo+pack", "no-such-policy"], "small", 1, tmp_path / "out", progress=False)
    assert not (tmp_path / "out" / "summary.csv").exists()


# ---------------------------------------------------------------------------- statistics
def test_t_quantiles_match_scipy() -> None:
    stats = pytest.importorskip("scipy.stats")
    for df in list(range(1, 41)) + [60, 120, 1000]:
        assert t_quantile_975(df) == pytest.approx(stats.t.ppf(0.975, df), abs=6e-5), df


def test_mean_ci_on_a_known_sample() -> None:
    mean, half, n = mean_ci([1.0, 2.0, 3.0, 4.0, 5.0])
    # s = sqrt(2.5); half-width = t_{0.975,4} * s / sqrt(5) = 2.7764 * 1.58114 / 2.23607 = 1.96321
    assert (mean, n) == (3.0, 5)
    assert half == pytest.approx(2.7764 * math.sqrt(2.5) / math.sqrt(5), rel=1e-9)
    assert half == pytest.approx(1.96321, abs=1e-5)
    single = mean_ci([7.0, float("nan")])
    assert single[0] == 7.0 and math.isnan(single[1]) and single[2] == 1


def test_format_mean_ci_shows_two_significant_digits_of_the_interval() -> None:
    assert format_mean_ci(5169.39, 123.4) == "5169 ± 123"
    assert format_mean_ci(0.51234, 0.0123) == "0.512 ± 0.012"
    assert format_mean_ci(42.0, float("nan")) == "42.0"


def test_markdown_table_lists_policies_best_first(serial_run: harness.EvalResults) -> None:
    table = markdown_table(serial_run.summary)
    lines = table.splitlines()
    assert lines[0].startswith("| policy | seeds | avg JCT (s)")
    means = serial_run.summary.groupby("policy")["avg_jct_s"].mean().sort_values()
    assert [line.split("|")[1].strip() for line in lines[2:]] == list(means.index)


# ---------------------------------------------------------------------------- other drivers and inputs
class SlotZeroPack:
    """Env-driven policy: start the job in queue slot 0 with placement 0 ("pack"), else advance.

    Action ``1 + w·P + p`` starts slot ``w`` with rule ``p``; action 0 advances time.
    """

    name = "env-slot0-pack"
    env_kwargs = {"queue_order": "fifo"}

    def __init__(self) -> None:
        self.resets: list[int] = []

    def reset(self, seed: int | None = None) -> None:
        self.resets.append(seed if seed is not None else -1)

    def act(self, obs: np.ndarray, action_mask: np.ndarray, info: dict) -> int:
        return 1 if action_mask[1] else 0


def test_env_driven_policy_matches_native_fifo_pack(serial_run: harness.EvalResults) -> None:
    pytest.importorskip("ddl_gym.envs.cluster_env")
    policy = SlotZeroPack()
    via_env = evaluate([policy], "small", 2, None, progress=False)
    assert policy.resets == [0, 1]
    assert (via_env.summary["driver"] == "env").all()
    native = serial_run.summary[serial_run.summary["policy"] == "fifo+pack"].reset_index(drop=True)
    for key in (*SUMMARY_KEYS, "decisions"):
        assert via_env.summary[key].tolist() == native[key].tolist(), key
    native_jobs = serial_run.jobs[serial_run.jobs["policy"] == "fifo+pack"].reset_index(drop=True)
    for col in ("start_s", "finish_s", "gpu_ids"):
        assert via_env.jobs[col].tolist() == native_jobs[col].tolist(), col


def test_workload_csv_replaces_the_scenario_workload(serial_run: harness.EvalResults, tmp_path: Path) -> None:
    from ddl_gym.workloads.csv_io import write_workload_csv

    _, workload = get_scenario("small").episode(0)
    path = write_workload_csv(workload, tmp_path / "jobs_seed0.csv")
    result = evaluate(["fifo+pack"], "small", [0, 5], None, workload_csv=path, progress=False)
    assert set(result.summary["scenario"]) == {"small@jobs_seed0"}
    native = serial_run.summary[(serial_run.summary["policy"] == "fifo+pack") & (serial_run.summary["seed"] == 0)]
    for key in SUMMARY_KEYS:  # every seed runs the file's jobs: same numbers as scenario seed 0
        assert result.summary[key].tolist() == [native[key].iloc[0]] * 2, key


def test_malformed_workload_csv_is_a_config_error_naming_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "broken.csv"
    bad.write_text("job_id,arrival_s,gpus,iterations,model\n0,0.0,two,100,resnet50\n")
    with pytest.raises(ConfigError, match="broken.csv"):
        evaluate(["fifo+pack"], "small", 1, None, workload_csv=bad, progress=False)


def test_plot_results_script_regenerates_plots_from_files(serial_run: harness.EvalResults, tmp_path: Path) -> None:
    assert serial_run.out is not None
    for name in ("summary.csv", "jobs.csv"):
        (tmp_path / name).write_bytes((serial_run.out / name).read_bytes())
    spec = importlib.util.spec_from_file_location("plot_results", REPO / "scripts" / "plot_results.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.main([str(tmp_path)]) == 0
    assert (tmp_path / "summary.md").read_text() == (serial_run.out / "summary.md").read_text()
    for name in ("jct_cdf.png", "metrics.png", "gantt_fifo_pack.png", "gantt_srsf_ca.png"):
        assert (tmp_path / name).read_bytes()[:8] == PNG_MAGIC
    assert module.main([str(tmp_path / "missing")]) == 2


def test_agent_spec_runs_through_the_env_identically_in_workers(tmp_path: Path) -> None:
    pytest.importorskip("sb3_contrib")
    train = pytest.importorskip("ddl_gym.agents.train")
    spec = train.quick_train(scenario="small", timesteps=256, out=tmp_path / "agent")
    assert spec.startswith("maskable-ppo:")
    serial = evaluate([spec], "small", 2, None, workers=1, progress=False, echo=False)
    parallel = evaluate([spec], "small", 2, tmp_path / "out", workers=2, progress=False, plots=False, echo=False)
    assert (serial.summary["driver"] == "env").all() and serial.summary["completed"].all()
    assert serial.summary["policy"].tolist() == [spec, spec]
    pd.testing.assert_frame_equal(_without_timing(parallel.summary), _without_timing(serial.summary))


def test_policy_lists_keep_mcts_options_together() -> None:
    from ddl_gym.harness import split_policy_list

    assert split_policy_list("fifo+pack, mcts:guide=srsf+pack,sims=16,depth=20,srsf+ca,maskable-ppo:a/b.zip") == [
        "fifo+pack", "mcts:guide=srsf+pack,sims=16,depth=20", "srsf+ca", "maskable-ppo:a/b.zip"]
    assert split_policy_list(" , ") == []
