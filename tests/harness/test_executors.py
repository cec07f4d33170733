"""Executors without Ray: the local executor's map, scenarios and agents travelling by content, the
one-line error when Ray is missing, ``eval --executor`` options. The Ray cluster itself is tested in
``tests/ray_cluster`` (Ray venv)."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pandas as pd
import pytest

from ddl_gym import executors
from ddl_gym.cli import main
from ddl_gym.executors import LocalExecutor, TaskFailed, bundle_scenario, make_executor, run_pair_chunk
from ddl_gym.harness import TIMING_COLUMNS, evaluate, git_sha, package_version, resolve_scenario, run_cache_key
from ddl_gym.harness.episodes import _PairTask
from ddl_gym.sim.model import ConfigError

TINY = """name = "tiny"
[cluster]
servers = 2
gpus_per_server = 4
[workload]
kind = "csv"
path = "jobs.csv"
"""


def _square(x: int) -> int:
    return x * x


def _flaky_once(arg: tuple[str, int]) -> int:
    """Fails the first time it sees an item (a marker file remembers), then succeeds."""
    folder, x = arg
    marker = Path(folder) / f"seen{x}"
    if not marker.exists():
        marker.write_text("1")
        raise RuntimeError(f"transient failure on {x}")
    return x


def _always_fails(x: int) -> int:
    raise RuntimeError(f"broken input {x}")


def _config_error(x: int) -> int:
    raise ConfigError(f"bad item {x}")


@pytest.mark.parametrize("workers", [1, 2])
def test_local_map_keeps_item_order(workers):
    with LocalExecutor(workers=workers) as ex:
        assert ex.map(_square, range(7)) == [x * x for x in range(7)]


def test_local_map_retries_then_reports_the_item_and_the_workers_message(tmp_path):
    ex = LocalExecutor(workers=2, max_retries=1)
    assert ex.map(_flaky_once, [(str(tmp_path), i) for i in range(4)]) == [0, 1, 2, 3]  # one retry each
    with pytest.raises(TaskFailed, match=r"item 0 failed after 2 attempt\(s\).*RuntimeError: broken input 0"):
        ex.map(_always_fails, [0])
    with pytest.raises(ConfigError, match="bad item 1"):  # deterministic input errors are not retried
        LocalExecutor(workers=1).map(_config_error, [1])


def test_ray_missing_is_one_line_naming_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # "import ray" raises ImportError
    with pytest.raises(ConfigError) as info:
        make_executor("ray")
    assert str(info.value) == "the ray executor needs Ray: pip install 'ddl-gym[ray]'"
    with pytest.raises(ConfigError, match="unknown executor 'dask'"):
        make_executor("dask")
    with pytest.raises(ConfigError, match="--ray-address needs --executor ray"):
        make_executor("local", ray_address="auto")


def test_cli_ray_options(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)
    rc = main(["eval", "--scenario", "small", "--policies", "fifo+pack", "--seeds", "1", "--out", str(tmp_path / "a"),
               "--ray-address", "auto"])
    assert rc == 2 and capsys.readouterr().err.strip() == "ddl-gym: error: --ray-address needs --executor ray"
    rc = main(["eval", "--scenario", "small", "--policies", "fifo+pack", "--seeds", "1", "--out", str(tmp_path / "b"),
               "--executor", "ray", "--no-plots"])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and err == "ddl-gym: error: the ray executor needs Ray: pip install 'ddl-gym[ray]'"


def _tasks(scenario_handle, resolved, policies, seeds):
    provenance = (package_version(), git_sha())
    return [_PairTask(scenario_handle, None, False, p, p, s, False, provenance, run_cache_key(resolved, p))
            for p in policies for s in seeds]


def test_scenario_file_and_workload_travel_by_content(tmp_path):
    """A worker that cannot see the driver's files (or sees other bytes at the same path) gets the
    driver's content: rows equal the driver's own evaluation."""
    folder = tmp_path / "driver"
    folder.mkdir()
    from ddl_gym.scenarios import get_scenario
    from ddl_gym.workloads.csv_io import write_workload_csv

    (folder / "gen.toml").write_text(TINY.replace('kind = "csv"\npath = "jobs.csv"',
                                                  'kind = "synthetic"\ngenerator = "scaled"\nnum_jobs = 6\nmax_gpus = 8'))
    _, workload = get_scenario(folder / "gen.toml").episode(3)
    write_workload_csv(workload, folder / "jobs.csv")
    (folder / "tiny.toml").write_text(TINY)
    spec = str(folder / "tiny.toml")
    expected = evaluate(["fifo+pack", "srsf+pack"], spec, 2, None, workers=1, progress=False, echo=False)

    resolved = resolve_scenario(spec)
    bundle = bundle_scenario(spec, resolved, ["fifo+pack", "srsf+pack"])
    assert [Path(p).name for p, _ in bundle.files] == ["jobs.csv"]
    assert bundle.files[0][1] == (folder / "jobs.csv").read_bytes()
    tasks = _tasks(spec, resolved, ["fifo+pack", "srsf+pack"], [0, 1])
    # The driver's files change after bundling: the worker must not read them.
    (folder / "jobs.csv").write_text("job_id,arrival_s,gpus,iterations,model\n0,0,1,10,vgg16\n")
    outcomes = run_pair_chunk(bundle, tasks)
    assert [status for status, _ in outcomes] == ["ok"] * 4
    rows = pd.DataFrame([row for _, (row, _) in outcomes]).sort_values(["policy", "seed"]).reset_index(drop=True)
    want = expected.summary.drop(columns=list(TIMING_COLUMNS)).reset_index(drop=True)
    got = rows[want.columns]
    pd.testing.assert_frame_equal(got, want, check_dtype=False)
    jobs = pd.concat([pd.DataFrame(j) for _, (_, j) in outcomes], ignore_index=True)
    assert len(jobs) == len(expected.jobs)
    assert jobs["jct_s"].sum() == pytest.approx(expected.jobs["jct_s"].sum(), rel=0, abs=0)
    (folder / "jobs.csv").unlink()  # gone entirely: still the bundle's bytes
    assert [s for s, _ in run_pair_chunk(bundle, tasks[:1])] == ["ok"]


def test_a_worker_with_other_code_refuses_every_task(tmp_path):
    resolved = resolve_scenario("small")
    bundle = dataclasses.replace(bundle_scenario("small", resolved), code="0.0.0+someone-elses-checkout")
    outcomes = run_pair_chunk(bundle, _tasks("small", resolved, ["fifo+pack"], [0, 1]))
    assert [s for s, _ in outcomes] == ["config", "config"]
    assert "runs ddl-gym code" in outcomes[0][1] and "someone-elses-checkout" in outcomes[0][1]


def test_agent_files_travel_by_content(tmp_path, monkeypatch):
    agent = tmp_path / "agentdir"
    agent.mkdir()
    (agent / "agent.zip").write_bytes(b"zip-bytes")
    (agent / "agent.json").write_text("{}")
    spec = f"maskable-ppo:{agent / 'agent.zip'}"
    files = executors._agent_bundle(spec)
    assert dict(files) == {"agent.zip": b"zip-bytes", "agent.json": b"{}"}
    monkeypatch.setattr(executors, "_files_root", lambda: tmp_path / "worker")
    bundle = executors.ScenarioBundle(name="small", agents=((spec, files),))
    local = executors._materialise_agents(bundle)[spec]
    kind, _, path = local.partition(":")
    assert kind == "maskable-ppo" and Path(path).read_bytes() == b"zip-bytes"
    assert (Path(path).parent / "agent.json").read_text() == "{}" and Path(path).parent != agent
    with pytest.raises(ConfigError, match="agent inside another policy"):
        bundle_scenario("small", resolve_scenario("small"), [f"mcts:policy={spec}"])


def test_evaluate_executor_local_is_the_default_path(tmp_path):
    a = evaluate(["fifo+pack"], "small", 2, tmp_path / "a", workers=2, progress=False, echo=False, plots=False)
    b = evaluate(["fifo+pack"], "small", 2, tmp_path / "b", progress=False, echo=False, plots=False,
                 executor=make_executor("local", workers=2))
    pd.testing.assert_frame_equal(a.summary.drop(columns=list(TIMING_COLUMNS)),
                                  b.summary.drop(columns=list(TIMING_COLUMNS)))
    with pytest.raises(ConfigError, match="--ray-address needs --executor ray"):
        evaluate(["fifo+pack"], "small", 1, None, progress=False, echo=False, ray_address="auto")


def test_an_address_where_no_cluster_listens_fails_at_once():
    import socket

    with socket.socket() as s:  # a port nothing listens on (bound, never listening)
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        with pytest.raises(ConfigError, match=f"--ray-address 127.0.0.1:{port}: no Ray cluster answers there"):
            executors._probe(f"127.0.0.1:{port}", timeout_s=2)
    with pytest.raises(ConfigError, match="expected auto or HOST:PORT"):
        executors._probe("nonsense")
