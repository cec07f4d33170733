"""A training run killed at any moment leaves a folder that ``--resume`` continues (issue 30 part 7).

Moments covered: before ``config.json`` exists (empty folder), right after it (the atomic write, no
checkpoint yet; a real kill through the test hook), a ``config.json`` torn by an older non-atomic writer,
and a checkpoint cut off while being written (only its temporary folder exists).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("sb3_contrib")

from ddl_gym.agents.train import main  # noqa: E402

TINY = ["--scenario", "small", "--preset", "quick", "--n-envs", "1", "--seed", "0", "--quiet", "--window", "4",
        "--eval-freq", "256", "--timesteps", "256"]


def test_killed_before_the_first_checkpoint_resumes_from_its_config(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert main([*TINY, "--checkpoint-freq", "100000", "--out", str(out), "--kill-after", "1"]) == 3
    saved = json.loads((out / "config.json").read_text())  # written (atomically) before any long work
    assert not (out / "checkpoints").exists() and not (out / "agent.zip").exists()
    assert main([*TINY, "--out", str(out)]) == 2  # without --resume the folder is still protected
    assert main([*TINY, "--window", "8", "--out", str(out), "--resume"]) == 0
    assert json.loads((out / "agent.json").read_text())["timesteps"] == 256
    assert json.loads((out / "config.json").read_text())["env"] == saved["env"]  # the run's own config won


@pytest.mark.parametrize("state", ["empty", "torn-config", "checkpoint-cut-off"])
def test_partial_states_resume(tmp_path: Path, state: str) -> None:
    out = tmp_path / "run"
    out.mkdir()
    if state == "torn-config":
        (out / "config.json").write_text('{"timesteps": 25')
        (out / "tb").mkdir()
    elif state == "checkpoint-cut-off":
        (out / "checkpoints" / ".tmp_step_000000000128").mkdir(parents=True)
        (out / "checkpoints" / ".tmp_step_000000000128" / "model.zip").write_bytes(b"PK\x03")
    assert main([*TINY, "--out", str(out), "--resume"]) == 0
    assert (out / "agent.zip").exists()
    assert json.loads((out / "config.json").read_text())["timesteps"] == 256


def test_a_run_with_only_broken_checkpoints_is_refused_not_restarted(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    (out / "checkpoints" / "step_000000000128").mkdir(parents=True)
    (out / "config.json").write_text("{}")
    assert main([*TINY, "--out", str(out), "--resume"]) == 2
    assert "no intact checkpoint" in capsys.readouterr().err
