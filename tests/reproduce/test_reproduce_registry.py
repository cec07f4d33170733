"""The reproduction registry (ddl_gym.reproduce) and its contract; the scenarios command."""

from __future__ import annotations

import pytest

from ddl_gym.cli import main as cli_main
from ddl_gym.reproduce import REGISTRY, REPRODUCTIONS, load, run
from ddl_gym.sim.model import ConfigError


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_registered_reproduction_follows_the_contract(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    module = load(name)
    assert module.__name__ == REPRODUCTIONS[name] and callable(module.main)
    with pytest.raises(SystemExit) as exc:
        module.main(["--help"])
    assert exc.value.code == 0
    text = capsys.readouterr().out
    for option in ("--quick", "--seeds", "--out", "--report", "--claims"):
        assert option in text, f"{name}: {option} missing from --help"


def test_unknown_reproduction_is_a_clear_error() -> None:
    with pytest.raises(ConfigError, match="unknown reproduction 'no-such-paper'; choose one of"):
        run("no-such-paper")


def test_cli_dispatches_scenarios_stats(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["scenarios", "--stats", "--scenarios", "small", "--seeds", "1", "--policies", "srsf+pack"]) == 0
    assert "| `small` |" in capsys.readouterr().out
    assert cli_main(["scenarios", "--stats", "--scenarios", "nope"]) == 2
    assert "nope" in capsys.readouterr().err
