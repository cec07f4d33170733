"""CLI misuse, fuzzed: any argument vector gives exit 0 or one line ``ddl-gym: error: ...`` with exit 2,
never a traceback (an internal error would exit 1 and fail these tests)."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ddl_gym.cli import main


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _assert_clean(code: int, err: str, argv: list[str]) -> None:
    assert code in (0, 2), (argv, code, err)
    assert "Traceback" not in err, (argv, err)
    if code == 2:
        lines = [line for line in err.splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith("ddl-gym: error: "), (argv, err)


# ---------------------------------------------------------------------------- a fuzzed argument space
POLICIES = ["fifo+pack", "srsf+ca", "FIFO+first_fit", "fifo+", "+pack", "fifo+nope", "nope", "", ",",
            "mcts:sims=abc", "mcts:guide=nope", "mcts:guide=srsf+pack,foo=1", "dqn:x.zip", "maskable-ppo:",
            "maskable-ppo:/nonexistent/agent.zip", "ppo:README.md", "sjf-bco-ff", "lwf1+ada-srsf"]
SEEDS = ["1", "0", "-2", "x", "1.5", "1e3", "10000000000000", "0:1", "3:1", "a,b", "1,,", "99999999999999999999999"]
WORKERS = ["1", "0", "-1", "two", "100000000"]
SCENARIOS = ["small", "nope", "/dev/zero", "/", "{tmp}/absent.toml"]
OUTS = ["{tmp}/out", "{tmp}/afile", "/dev/null/x", "/proc/ddl-gym-x"]


@st.composite
def eval_argv(draw: st.DrawFn) -> list[str]:
    argv = ["eval", "--no-plots", "--no-progress"]
    if draw(st.booleans()):
        argv += ["--scenario", draw(st.sampled_from(SCENARIOS))]
    if draw(st.integers(0, 9)) > 0:
        argv += ["--policies", draw(st.sampled_from(POLICIES))]
    argv += ["--seeds", draw(st.sampled_from(SEEDS))]
    if draw(st.booleans()):
        argv += ["--workers", draw(st.sampled_from(WORKERS))]
    argv += ["--out", draw(st.sampled_from(OUTS))]
    if draw(st.integers(0, 5)) == 0:
        argv.append(draw(st.sampled_from(["--sedes", "--reference", "--metrics", "-x", "--workload"])))
    return argv


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(argv=eval_argv())
def test_fuzzed_eval_arguments_never_give_a_traceback(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                      argv: list[str]) -> None:
    (tmp_path / "afile").write_text("x")
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    code, _, err = _run(argv, capsys)
    _assert_clean(code, err, argv)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(argv=st.lists(st.sampled_from(["list", "eval", "compare", "demo", "train", "reproduce", "bench", "--version",
                                      "--help", "--out", "--seeds", "-1", "x", "--reference", "--timesteps",
                                      "--n-envs", "0", "--resume", "--overwrite", "sjf-bco", "nope", "--bogus"]),
                     min_size=1, max_size=5))
def test_fuzzed_command_words_never_give_a_traceback(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                     argv: list[str]) -> None:
    # Keep anything that would really train or evaluate out of this fuzz (they run in their own tests).
    if argv[0] in ("demo", "reproduce", "bench") and "--help" not in argv and "x" not in argv and "-1" not in argv \
            and "--bogus" not in argv and "nope" not in argv and "0" not in argv:
        argv = [*argv, "--bogus"]
    if argv[0] == "train":  # never really train here
        argv = [*argv, "--timesteps", "-1"]
    argv = [a if a != "--out" else f"--out={tmp_path / 'o'}" for a in argv]
    code, _, err = _run(argv, capsys)
    _assert_clean(code, err, argv)


# ---------------------------------------------------------------------------- named misuse cases
def _fake_agent(folder: Path, kind: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "agent.zip"
    if kind == "csv":
        path.write_text("job_id,arrival_s\n")
    else:
        with zipfile.ZipFile(path, "w") as zf:
            zf.writestr("data", "{}")
    meta = {"algo": "maskable-ppo", "window": 4, "placements": ["pack"], "queue_order": "srsf",
            "observation_layout": {}, "observation_shape": [3], "action_n": 5, "vecnormalize": None}
    if kind == "bad-json":
        path.with_suffix(".json").write_text("{not json")
    elif kind == "incomplete":
        path.with_suffix(".json").write_text(json.dumps({"algo": "maskable-ppo"}))
    else:
        path.with_suffix(".json").write_text(json.dumps(meta))
    return path


@pytest.mark.parametrize("kind, needle", [("csv", "not a stable-baselines3 model"), ("zip", "cannot load it"),
                                          ("bad-json", "agent.json"), ("incomplete", "lacks")])
def test_agent_files_of_the_wrong_kind(tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str,
                                       needle: str) -> None:
    pytest.importorskip("sb3_contrib")
    path = _fake_agent(tmp_path / "a", kind)
    code, _, err = _run(["eval", "--scenario", "small", "--policies", f"maskable-ppo:{path}", "--seeds", "1",
                         "--out", str(tmp_path / "out"), "--no-progress"], capsys)
    _assert_clean(code, err, [kind])
    assert code == 2 and needle in err and "agent" in err


@pytest.mark.parametrize("argv, needle", [
    (["eval", "--policies", "fifo+pack", "--seeds", "x"], "--seeds"),
    (["eval", "--policies", "fifo+pack", "--seeds", "1000000000000"], "--seeds"),
    (["eval", "--policies", "fifo+pack", "--seeds", "1", "--workers", "1000000"], "--workers"),
    (["eval", "--policies", "fifo+pack", "--seeds", "1", "--out", "{tmp}/afile"], "afile"),
    (["eval", "--policies", "fifo+pack", "--seeds", "1", "--out", "/dev/null/x"], "/dev/null"),
    (["eval", "--policies", "fifo+pack", "--seeds", "1", "--workload", "{tmp}/nope.csv"], "nope.csv"),
    (["eval", "--policies", "fifo+pack", "--seeds", "1", "--workload", "/dev/zero"], "/dev/zero"),
    (["evaluate"], "evaluate"),
    (["eval", "--policies", "fifo+pack", "--sedes", "1"], "--sedes"),
    (["demo", "--timesteps", "-5"], "--timesteps"),
    (["compare", "--out", "{tmp}/none", "--reference", "fifo+pack"], "none"),
    (["train", "--timesteps", "-1", "--out", "{tmp}/t"], "--timesteps"),
    (["train", "--window", "0", "--out", "{tmp}/t"], "--window"),
    (["train", "--out", "{tmp}/afile"], "afile"),
    (["train", "--scenario", "nowhere", "--timesteps", "64", "--out", "{tmp}/t"], "nowhere"),
    (["train", "--bc-expert", "nope", "--timesteps", "64", "--out", "{tmp}/t"], "nope"),
    (["reproduce", "sjf-bco", "--seeds", "x"], "--seeds"),
    (["bench", "--bogus"], "--bogus"),
])
def test_named_misuse_gives_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str],
                                     needle: str) -> None:
    if argv[0] == "train":
        pytest.importorskip("sb3_contrib")
    (tmp_path / "afile").write_text("x")
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    if argv[0] == "eval" and "--out" not in argv:
        argv += ["--out", str(tmp_path / "out")]
    code, _, err = _run([*argv, "--no-progress"] if argv[0] == "eval" else argv, capsys)
    assert code == 2, err
    _assert_clean(code, err, argv)
    assert needle.replace("{tmp}", str(tmp_path)) in err


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    import ddl_gym

    code, out, _ = _run(["--version"], capsys)
    assert code == 0 and out.startswith(f"ddl-gym {ddl_gym.__version__}")


def test_list_shows_env_ids_presets_and_aliases(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(["list"], capsys)
    assert code == 0
    assert "DDLCluster-v0" in out and "DDLCluster-Small-v0" in out and "DDLClusterPlacement-v0" in out
    assert "sjf-bco-ff -> sjf-bco+ff" in out and "lwf1+ada-srsf -> ada-srsf" in out
    if (Path(__file__).resolve().parents[2] / "agents" / "presets").is_dir():
        assert "Training presets" in out and "quick" in out
