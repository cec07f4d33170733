"""Every ``ddl-gym reproduce X`` reads ``--seeds N|A:B|a,b,c`` and ``--workers K`` like ``ddl-gym eval``.

The seeds are checked where each module uses them (its settings/grid, or the runs it builds), through
the module's ``parse_args`` — nothing is simulated.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest

from ddl_gym.cli import main as cli_main
from ddl_gym.cliargs import format_seeds, parse_seeds
from ddl_gym.reproduce import REGISTRY, a_online, a_srpt, ada_srsf, load, sjf_bco, smd


def _sjf_bco_seeds(argv: Sequence[str]) -> tuple[int, ...]:
    args = sjf_bco.parse_args(argv)
    runs = sjf_bco.build_runs(args.seeds, True, args.bisection)  # what main simulates
    assert sorted({run.seed for run in runs}) == sorted(args.seeds)
    return tuple(args.seeds)


def _ada_srsf_seeds(argv: Sequence[str]) -> tuple[int, ...]:
    return ada_srsf.parse_args(argv)[1].seeds


def _a_srpt_seeds(argv: Sequence[str]) -> tuple[int, ...]:
    return a_srpt.parse_args(argv)[2]


def _smd_seeds(argv: Sequence[str]) -> tuple[int, ...]:
    return smd.parse_args(argv)[1].seeds


def _a_online_seeds(argv: Sequence[str]) -> tuple[int, ...]:
    st = a_online.parse_args(argv)[1]
    assert sorted({task[3] for task in a_online.tasks(st)}) == sorted(st.seeds)  # task = (kind, exp, x, seed, ...)
    return st.seeds


SEEDS_OF: dict[str, Callable[[Sequence[str]], tuple[int, ...]]] = {
    "sjf-bco": _sjf_bco_seeds, "ada-srsf": _ada_srsf_seeds, "a-srpt": _a_srpt_seeds, "smd": _smd_seeds,
    "a-online": _a_online_seeds,
}
QUICK_DEFAULT = {"sjf-bco": 1, "ada-srsf": 2, "a-srpt": 2, "smd": 2, "a-online": 2}


def test_every_registered_reproduction_is_covered() -> None:
    assert set(SEEDS_OF) == set(REGISTRY)


@pytest.mark.parametrize("name", sorted(REGISTRY))
@pytest.mark.parametrize(("spec", "expected"), [("1:3", (1, 2)), ("0,2", (0, 2)), ("3", (0, 1, 2)), ("7", tuple(range(7))),
                                                 ("5,1,5", (5, 1))])
def test_seeds_reach_the_module(name: str, spec: str, expected: tuple[int, ...]) -> None:
    assert tuple(SEEDS_OF[name](["--quick", "--seeds", spec])) == expected


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_without_seeds_the_default_count_starts_at_zero(name: str) -> None:
    # The committed quick claims tables were made without --seeds: their seeds must not move.
    assert tuple(SEEDS_OF[name](["--quick"])) == tuple(range(QUICK_DEFAULT[name]))


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_workers_and_the_old_jobs_spelling_share_one_destination(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    module = load(name)
    assert module.build_parser().parse_args(["--workers", "3"]).workers == 3
    assert module.build_parser().parse_args(["--jobs", "3"]).workers == 3
    assert module.build_parser().parse_args(["--jobs", "3", "--workers", "1"]).workers == 1  # last one wins
    module.build_parser().print_help()
    text = capsys.readouterr().out
    assert "--workers" in text and "--jobs" not in text and "N|A:B|a,b,c" in text


@pytest.mark.parametrize("name", sorted(REGISTRY))
@pytest.mark.parametrize(("argv", "option"), [(["--seeds", "3:1"], "--seeds"), (["--seeds", "0"], "--seeds"),
                                              (["--seeds", "x"], "--seeds"), (["--seeds", "-1,2"], "--seeds"),
                                              (["--workers", "0"], "--workers"), (["--jobs", "many"], "--jobs")])
def test_bad_values_are_one_line_errors(name: str, argv: list[str], option: str,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["reproduce", name, *argv]) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"ddl-gym: error: argument {option}"), captured.err
    assert captured.out == ""  # rejected before anything ran


def test_sjf_bco_first_seed_shifts_the_count_form() -> None:
    assert sjf_bco.parse_args(["--seeds", "3", "--first-seed", "4"]).seeds == [4, 5, 6]  # = --seeds 4:7
    assert sjf_bco.parse_args(["--quick", "--first-seed", "2"]).seeds == [2]  # shifts the default count too
    assert sjf_bco.parse_args(["--seeds", "0:2", "--first-seed", "5"]).seeds == [5, 6]


@pytest.mark.parametrize("spec", ["1:3", "0,2"])
def test_sjf_bco_first_seed_with_a_range_or_list_is_an_error(spec: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["reproduce", "sjf-bco", "--seeds", spec, "--first-seed", "2"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ddl-gym: error: argument --first-seed:") and f"--seeds {spec}" in err


@pytest.mark.parametrize(("argv", "command"), [
    (["--quick"], "ddl-gym reproduce a-online --quick"),
    ([], "ddl-gym reproduce a-online"),
    (["--seeds", "3"], "ddl-gym reproduce a-online --seeds 3"),  # the README's command, as before
    (["--seeds", "0:3"], "ddl-gym reproduce a-online --seeds 3"),
    (["--seeds", "1:3"], "ddl-gym reproduce a-online --seeds 1:3"),
    (["--quick", "--seeds", "2,0"], "ddl-gym reproduce a-online --quick --seeds 2,0"),
])
def test_a_online_header_names_the_seeds(argv: list[str], command: str) -> None:
    args, st = a_online.parse_args(argv)
    assert a_online.command_text(args, st) == command


@pytest.mark.parametrize("seeds", [[0], [0, 1, 2], [4, 5, 6], [0, 2], [3, 1], [7]])
def test_format_seeds_round_trips(seeds: list[int]) -> None:
    assert parse_seeds(format_seeds(seeds)) == seeds
    assert format_seeds(range(5)) == "5" and format_seeds([2, 3]) == "2:4" and format_seeds([0, 2]) == "0,2"
