"""A real three-node Ray cluster on this machine (loopback only): sweeps, faults, RLlib with masking.

Runs in the Ray venv only (``scripts/setup_ray.sh`` makes ``.venv-ray``; ``scripts/test.sh`` runs this
folder there with ``DDL_GYM_RAY_TESTS=1``). The module starts ``ray start --head`` and two
``ray start --address=127.0.0.1:PORT`` worker nodes of one CPU each, all under a private temp dir
and a private auth token, and tears them down in a finalizer by PID (every process whose command
line names that temp dir, plus their descendants) — not ``ray stop --force``, which would also stop
any other Ray on a shared machine.

Order matters (pytest keeps file order): the node-kill test leaves two nodes for the tests after it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ddl_gym.harness import TIMING_COLUMNS, read_results

from tests.ray_cluster.cluster import BIN, Cluster, alive as _alive


@pytest.fixture(scope="module")
def cluster():
    c = Cluster()
    # This process joins the cluster too (Executor.map, RLlib): its token before Ray reads one.
    saved = {k: os.environ.get(k) for k in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN")}
    os.environ.update({k: c.env[k] for k in saved})
    from ray import cloudpickle

    # Functions of this test module reach Ray workers by value (workers cannot import the tests).
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    try:
        c.start()
        yield c
    finally:
        c.stop()
        cloudpickle.unregister_pickle_by_value(sys.modules[__name__])
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


# ---------------------------------------------------------------------------- sweep helpers
TINY = """name = "tiny"
[cluster]
servers = 2
gpus_per_server = 4
[workload]
kind = "synthetic"
generator = "scaled"
num_jobs = 6
max_gpus = 8
"""


@pytest.fixture(scope="module")
def specs(tmp_path_factory, cluster):
    """Spec files: a 208-run grid of tiny episodes (a scenario file and the same file with a workload
    CSV, both shipped by content) and a slower 24-run grid for the fault tests."""
    root = tmp_path_factory.mktemp("specs")
    (root / "tiny.toml").write_text(TINY)
    from ddl_gym.scenarios import get_scenario
    from ddl_gym.workloads.csv_io import write_workload_csv

    _, workload = get_scenario(root / "tiny.toml").episode(7)
    write_workload_csv(workload, root / "jobs7.csv")
    (root / "grid.toml").write_text(
        'scenarios = ["tiny.toml", {scenario = "tiny.toml", workload = "jobs7.csv"}]\n'
        'policies = ["fifo+pack", "srsf+pack", "sjf+pack", "fifo+ca"]\nseeds = 26\n')
    (root / "fault.toml").write_text('scenarios = ["large"]\npolicies = ["sjf-bco", "srsf+pack"]\nseeds = 12\n')
    return root


def _sweep_cmd(spec: Path, out: Path, *extra: str) -> list[str]:
    return [str(BIN / "ddl-gym"), "sweep", str(spec), "--out", str(out), "--no-progress", *extra]


def _run(cmd: list[str], env: dict[str, str], timeout: float = 240) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)


def _computed(stdout: str) -> int:
    line = [x for x in stdout.splitlines() if x.startswith("sweep: computed")][-1]
    return int(line.split("computed")[1].split(",")[0])


def _frames(folder: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    summary, jobs = read_results(folder)
    return summary.drop(columns=list(TIMING_COLUMNS)), jobs


def _raw_unique(folder: Path, n_rows: int) -> None:
    """The files on disk hold each run once (no row lost or duplicated), each job once."""
    raw = pd.read_csv(folder / "summary.csv")
    assert len(raw) == n_rows and not raw.duplicated(["scenario", "policy", "seed"]).any()
    jobs = pd.read_csv(folder / "jobs.csv")
    assert not jobs.duplicated(["scenario", "policy", "seed", "job_id"]).any()
    assert set(map(tuple, jobs[["policy", "seed"]].drop_duplicates().to_numpy().tolist())) == \
        set(map(tuple, raw[["policy", "seed"]].to_numpy().tolist()))


def _wait_rows(path: Path, at_least: int, proc: subprocess.Popen, timeout: float = 120) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            n = max(0, sum(1 for _ in open(path)) - 1)
        except OSError:
            n = 0
        if n >= at_least:
            return n
        time.sleep(0.05)
    raise AssertionError(f"{path}: fewer than {at_least} rows before the sweep ended (rc {proc.poll()})")


# ---------------------------------------------------------------------------- tests
@pytest.fixture(scope="module")
def local_reference(specs, tmp_path_factory, cluster):
    out = tmp_path_factory.mktemp("local")
    for spec in ("grid.toml", "fault.toml"):
        r = _run(_sweep_cmd(specs / spec, out / spec, "--executor", "local", "--workers", "2"), cluster.env)
        assert r.returncode == 0, r.stderr[-2000:]
    return out


def test_sweep_on_three_nodes_matches_local(cluster, specs, local_reference, tmp_path):
    r = _run(_sweep_cmd(specs / "grid.toml", tmp_path, "--executor", "ray", "--ray-address", cluster.address),
             cluster.env)
    assert r.returncode == 0, r.stderr[-2000:]
    assert _computed(r.stdout) == 208
    for scenario in ("tiny", "tiny@jobs7"):
        ray_s, ray_j = _frames(tmp_path / scenario)
        loc_s, loc_j = _frames(local_reference / "grid.toml" / scenario)
        assert len(ray_s) == 104 and ray_s["cache_key"].str.len().eq(24).all()
        pd.testing.assert_frame_equal(ray_s, loc_s)  # cache keys and every metric
        pd.testing.assert_frame_equal(ray_j, loc_j)
        _raw_unique(tmp_path / scenario, 104)
    combined = pd.read_csv(tmp_path / "sweep_summary.csv")
    assert len(combined) == 208


def test_worker_node_killed_mid_sweep(cluster, specs, local_reference, tmp_path):
    raylet = cluster.raylet_of("node-a")
    proc = subprocess.Popen(_sweep_cmd(specs / "fault.toml", tmp_path, "--executor", "ray", "--ray-address",
                                       cluster.address), env=cluster.env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        seen = _wait_rows(tmp_path / "large" / "summary.csv", 2, proc)
        os.kill(raylet, signal.SIGKILL)  # the node's raylet: its workers and their tasks go with it
        out, err = proc.communicate(timeout=240)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert seen < 24, "the sweep had finished before the node was killed"
    assert not _alive(raylet)
    assert proc.returncode == 0, err[-2000:]
    assert _computed(out) == 24
    _raw_unique(tmp_path / "large", 24)
    got_s, got_j = _frames(tmp_path / "large")
    ref_s, ref_j = _frames(local_reference / "fault.toml" / "large")
    pd.testing.assert_frame_equal(got_s, ref_s)
    pd.testing.assert_frame_equal(got_j, ref_j)
    before = read_results(tmp_path / "large")[0]
    again = _run(_sweep_cmd(specs / "fault.toml", tmp_path, "--executor", "ray", "--ray-address", cluster.address),
                 cluster.env)
    assert again.returncode == 0, again.stderr[-2000:]
    assert _computed(again.stdout) == 0  # a second run recomputes nothing
    pd.testing.assert_frame_equal(read_results(tmp_path / "large")[0], before)  # timings too: same rows


def test_driver_killed_mid_sweep_keeps_rows_and_rerun_completes_the_rest(cluster, specs, local_reference, tmp_path):
    proc = subprocess.Popen(_sweep_cmd(specs / "fault.toml", tmp_path, "--executor", "ray", "--ray-address",
                                       cluster.address), env=cluster.env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        _wait_rows(tmp_path / "large" / "summary.csv", 2, proc)
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=3)
        except subprocess.TimeoutExpired:
            proc.kill()
        proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    kept = read_results(tmp_path / "large")[0]
    assert 2 <= len(kept) < 24, f"{len(kept)} rows kept"
    again = _run(_sweep_cmd(specs / "fault.toml", tmp_path, "--executor", "ray", "--ray-address", cluster.address),
                 cluster.env)
    assert again.returncode == 0, again.stderr[-2000:]
    assert _computed(again.stdout) == 24 - len(kept)  # only the missing ones
    final = read_results(tmp_path / "large")[0]
    ids = ["scenario", "policy", "seed"]
    merged = kept.merge(final, on=ids, suffixes=("_kept", "_final"))
    assert len(merged) == len(kept)
    np.testing.assert_array_equal(merged["wall_time_s_kept"], merged["wall_time_s_final"])  # not recomputed
    _raw_unique(tmp_path / "large", 24)
    got_s, got_j = _frames(tmp_path / "large")
    ref_s, ref_j = _frames(local_reference / "fault.toml" / "large")
    pd.testing.assert_frame_equal(got_s, ref_s)
    pd.testing.assert_frame_equal(got_j, ref_j)


def test_eval_command_on_the_cluster(cluster, tmp_path):
    from ddl_gym.harness import evaluate

    cmd = [str(BIN / "ddl-gym"), "eval", "--scenario", "small", "--policies", "fifo+pack,srsf+ca", "--seeds", "6",
           "--executor", "ray", "--ray-address", cluster.address, "--out", str(tmp_path / "ray"), "--no-plots",
           "--no-progress"]
    r = _run(cmd, cluster.env)
    assert r.returncode == 0, r.stderr[-2000:]
    local = evaluate(["fifo+pack", "srsf+ca"], "small", 6, tmp_path / "local", workers=1, progress=False,
                     echo=False, plots=False)
    got_s, got_j = _frames(tmp_path / "ray")
    pd.testing.assert_frame_equal(got_s, local.summary.drop(columns=list(TIMING_COLUMNS)))
    pd.testing.assert_frame_equal(got_j, local.jobs)


def test_executor_map_on_the_cluster(cluster):
    import ray

    from ddl_gym.executors import make_executor

    try:
        with make_executor("ray", ray_address=cluster.address) as ex:
            assert ex.map(_square_pid, range(12)) == [(i * i, i) for i in range(12)]
            with pytest.raises(Exception, match="item 3 failed after 4 attempt.*three is not allowed"):
                make_executor(ex).map(_fail_on_three, range(5))
    finally:
        if ray.is_initialized():
            ray.shutdown()


def test_search_episodes_on_the_cluster_equal_the_local_pool(cluster):
    """Search-generated episodes (suite_eval's network + search rows; expert iteration's data) run as
    Executor.map items on Ray workers and give exactly what the local process pool gives."""
    import ray

    from ddl_gym.agents.search_eval import SearchSeedItem, SearchSettings, search_rows
    from ddl_gym.agents.shipped import SHIPPED_AGENTS

    agent = str(SHIPPED_AGENTS["agent-v1-pollux8x8"].file)
    settings = SearchSettings(sims=4, samples=2, fallback="sjf+ca", candidates=2)
    items = [SearchSeedItem(agent=agent, task="pollux-8x8-100g", seed=s, search=settings) for s in (1_000_000, 1_000_001)]
    local, local_hours = search_rows(items, executor="local", workers=2)
    try:
        remote, remote_hours = search_rows(items, executor="ray", ray_address=cluster.address)
    finally:
        if ray.is_initialized():
            ray.shutdown()
    assert remote.tolist() == local.tolist() and local_hours > 0 and remote_hours > 0


def _square_pid(x: int) -> tuple[int, int]:
    return x * x, x


def _fail_on_three(x: int) -> int:
    if x == 3:
        raise RuntimeError("three is not allowed")
    return x


def _count_masked(*, episode, metrics_logger=None, **kwargs) -> None:
    """RLlib callback: was the action just taken allowed by the mask of the observation it acted on?"""
    mask = np.asarray(episode.get_observations(-2)["action_mask"])
    action = int(episode.get_actions(-1))
    info = episode.get_infos(-1)
    metrics_logger.log_value("ddl_steps", 1, reduce="sum")
    metrics_logger.log_value("ddl_steps_with_masked_actions", int((mask == 0).any()), reduce="sum")
    metrics_logger.log_value("ddl_masked_taken", int(mask[action] == 0), reduce="sum")
    metrics_logger.log_value("ddl_env_invalid", int(bool(info.get("invalid_action", False))), reduce="sum")


def test_rllib_ppo_with_action_masking_never_takes_a_masked_action(cluster):
    import ray
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule
    from ray.tune.registry import register_env

    from ddl_gym.wrappers import rllib_env_creator

    ray.init(address=cluster.address, include_dashboard=False, log_to_driver=False)
    try:
        register_env("ddl-gym-masked", rllib_env_creator)
        config = (
            PPOConfig()
            .environment("ddl-gym-masked", env_config={"env_id": "DDLCluster-Small-v0"})
            .env_runners(num_env_runners=1, rollout_fragment_length=128, num_cpus_per_env_runner=1)
            .learners(num_learners=0)
            .training(train_batch_size_per_learner=256, minibatch_size=64, num_epochs=1, lr=3e-4)
            .rl_module(rl_module_spec=RLModuleSpec(module_class=ActionMaskingTorchRLModule,
                                                   model_config={"fcnet_hiddens": [32, 32]}))
            .callbacks(on_episode_step=_count_masked)
            .debugging(seed=0)
        )
        algo = config.build_algo()
        try:
            totals = {"ddl_steps": 0, "ddl_steps_with_masked_actions": 0, "ddl_masked_taken": 0, "ddl_env_invalid": 0}
            for _ in range(2):
                result = algo.train()
                for key in totals:
                    totals[key] += int(result["env_runners"][key])
        finally:
            algo.stop()
    finally:
        ray.shutdown()
    assert totals["ddl_steps"] >= 2 * 256
    assert totals["ddl_steps_with_masked_actions"] >= totals["ddl_steps"] // 2  # the mask had something to forbid
    assert totals["ddl_masked_taken"] == 0
    assert totals["ddl_env_invalid"] == 0
