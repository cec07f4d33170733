"""Argument types shared by every ``ddl-gym`` command, so seeds, workers and counts read the same everywhere.

* ``--seeds SPEC`` (commands that run several episodes: ``eval``, ``demo``, ``reproduce``):
  ``N`` = the first N seeds of the command (``0..N-1``; the demo's start at 1000),
  ``A:B`` = seeds ``A..B-1``, ``a,b,c`` = exactly these. :func:`parse_seeds`.
* ``--seed S`` (commands that run one seeded process: ``train``): one integer ``>= 0``.
* ``--workers K``: parallel processes, an integer in ``[1, 256]`` (default: one per core, at most
  one per run). :func:`workers_type`. The reproductions also take the older spelling ``--jobs K``
  (hidden, same destination): :func:`add_workers_argument`.

The reproductions (``ddl-gym reproduce NAME``) declare both with :func:`add_seeds_argument` and
:func:`add_workers_argument`, and fill in their default seed count with :func:`seeds_or_default`.

Every parser raises ``argparse.ArgumentTypeError`` with a message that names the problem; the CLI
turns it into one line ``ddl-gym: error: argument --seeds: ...`` and exit status 2.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable, Sequence
from typing import NoReturn

MAX_SEEDS = 100_000
MAX_SEED = 2**63 - 1
MAX_WORKERS = 256

_INT = re.compile(r"[+-]?[0-9]+")


def _int(text: str, what: str) -> int:
    text = text.strip()
    if not _INT.fullmatch(text):
        raise argparse.ArgumentTypeError(f"{what} must be an integer, got {text!r}")
    return int(text)


def parse_seeds(text: str, offset: int = 0) -> list[int]:
    """Seeds from ``"N"``, ``"A:B"`` or ``"a,b,c"`` (see the module docstring).

    Args:
        text: the argument.
        offset: first seed of the ``"N"`` form.

    Raises:
        argparse.ArgumentTypeError: not one of the forms, a seed outside ``[0, 2**63-1]``, an empty
            or reversed range, or more than :data:`MAX_SEEDS` seeds.
    """
    text = str(text).strip()
    if not text:
        raise argparse.ArgumentTypeError("is empty; give N, A:B or a,b,c")
    if ":" in text:
        start_text, _, stop_text = text.partition(":")
        start, stop = _int(start_text, "range start"), _int(stop_text, "range end")
        if stop <= start:
            raise argparse.ArgumentTypeError(f"range {text!r} is empty (A:B means seeds A..B-1, so B > A)")
        seeds = range(start, stop)
    elif "," in text:
        parts = [p for p in text.split(",") if p.strip()]
        if not parts:
            raise argparse.ArgumentTypeError(f"{text!r} lists no seed")
        seeds = [_int(p, "each seed") for p in parts]
    else:
        count = _int(text, "the number of seeds")
        if count < 1:
            raise argparse.ArgumentTypeError(f"the number of seeds must be >= 1, got {count}")
        if count > MAX_SEEDS:
            raise argparse.ArgumentTypeError(f"at most {MAX_SEEDS:,} seeds, got {count:,}")
        seeds = range(offset, offset + count)
    count = seeds.stop - seeds.start if isinstance(seeds, range) else len(seeds)  # len() overflows on huge ranges
    if count > MAX_SEEDS:
        raise argparse.ArgumentTypeError(f"at most {MAX_SEEDS:,} seeds, got {count:,}")
    for s in (seeds[0], seeds[-1]) if isinstance(seeds, range) else seeds:
        if not 0 <= s <= MAX_SEED:
            raise argparse.ArgumentTypeError(f"seeds must be in [0, 2**63-1], got {s}")
    return list(dict.fromkeys(seeds))


def seeds_type(offset: int = 0) -> Callable[[str], list[int]]:
    """An argparse ``type=`` for ``--seeds`` whose ``N`` form starts at ``offset``."""

    def parse(text: str) -> list[int]:
        return parse_seeds(text, offset)

    parse.__name__ = "seeds"
    return parse


def format_seeds(seeds: Sequence[int]) -> str:
    """The shortest ``--seeds`` text that parses back to ``seeds``: ``N`` for ``0..N-1``, ``A:B``, ``a,b,c``."""
    seeds = list(seeds)
    if not seeds:
        raise ValueError("no seeds")
    if seeds == list(range(seeds[0], seeds[0] + len(seeds))):
        return str(len(seeds)) if seeds[0] == 0 else f"{seeds[0]}:{seeds[0] + len(seeds)}"
    return ",".join(map(str, seeds))


def seeds_or_default(seeds: Sequence[int] | None, count: int) -> tuple[int, ...]:
    """The parsed ``--seeds`` as a tuple, or the command's default ``0..count-1`` when it was not given."""
    return tuple(seeds) if seeds is not None else tuple(range(count))


def add_seeds_argument(parser: argparse.ArgumentParser, default: str, offset: int = 0) -> None:
    """``--seeds N|A:B|a,b,c`` (:func:`seeds_type`); ``args.seeds`` is a list, or ``None`` when not given.

    Args:
        parser: the command's parser.
        default: what the command runs without ``--seeds`` (for the help text), e.g. ``"3 (--quick 2)"``.
        offset: first seed of the ``N`` form.
    """
    first = "0..N-1" if offset == 0 else f"{offset}..{offset}+N-1"
    parser.add_argument("--seeds", type=seeds_type(offset), default=None, metavar="N|A:B|a,b,c",
                        help=f"seeds: N = {first}, A:B = A..B-1, a,b,c = these; default {default}")


def add_workers_argument(parser: argparse.ArgumentParser, default: int) -> None:
    """``--workers K`` (:func:`workers_type`) into ``args.workers``, plus ``--jobs K``, its older spelling.

    ``--jobs`` is kept (hidden from ``--help``, deprecated) so commands written before ``--workers``
    was the one name still run; both write the same destination, the last one given wins.
    """
    parser.add_argument("--workers", type=workers_type, default=default, metavar="K",
                        help=f"parallel worker processes, 1..{MAX_WORKERS} (default {default})")
    parser.add_argument("--jobs", dest="workers", type=workers_type, default=argparse.SUPPRESS,
                        metavar="K", help=argparse.SUPPRESS)


def add_executor_arguments(parser: argparse.ArgumentParser, workers_default: int = 1) -> None:
    """``--workers K``, ``--executor local|ray`` and ``--ray-address`` of a command whose work items run on the
    sweep executors (:func:`ddl_gym.executors.make_executor`)."""
    parser.add_argument("--workers", type=workers_type, default=workers_default, metavar="K",
                        help=f"parallel worker processes, 1..{MAX_WORKERS} (default {workers_default})")
    parser.add_argument("--executor", default="local", choices=("local", "ray"),
                        help="local worker processes (default) or Ray tasks (needs the ray extra)")
    parser.add_argument("--ray-address", default=None, metavar="auto|HOST:PORT",
                        help="with --executor ray: join this cluster (default: start a local one)")


def seed_list_type(text: str) -> list[int]:
    """``--seed-list a,b,c`` (the older spelling of ``--seeds a,b,c``): always a list, even of one seed."""
    return parse_seeds(text if ("," in text or ":" in text) else f"{text},")


def bounded_int(low: int, high: int, what: str = "value") -> Callable[[str], int]:
    """An argparse ``type=`` for an integer in ``[low, high]``."""

    def parse(text: str) -> int:
        value = _int(text, what)
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{what} must be in [{low:,}, {high:,}], got {value:,}")
        return value

    parse.__name__ = what.replace(" ", "_")
    return parse


def bounded_float(low: float, high: float, what: str = "value", *, low_open: bool = False,
                  high_open: bool = False) -> Callable[[str], float]:
    """An argparse ``type=`` for a finite number in ``[low, high]`` (ends open where asked)."""
    import math

    span = f"{'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{what} must be a number in {span}, got {text[:40]!r}") from None
        if not math.isfinite(value) or not low <= value <= high or (low_open and value == low) or \
                (high_open and value == high):
            raise argparse.ArgumentTypeError(f"{what} must be a finite number in {span}, got {text[:40]!r}")
        return value

    parse.__name__ = what.replace(" ", "_")
    return parse


def workers_type(text: str) -> int:
    """``--workers``: an integer in ``[1, MAX_WORKERS]``."""
    return bounded_int(1, MAX_WORKERS, "workers")(text)


def seed_type(text: str) -> int:
    """``--seed``: one integer in ``[0, 2**63-1]``."""
    return bounded_int(0, MAX_SEED, "seed")(text)


class UsageError(Exception):
    """A command-line problem, reported as one line ``ddl-gym: error: ...`` with exit status 2."""


class OneLineParser(argparse.ArgumentParser):
    """argparse whose errors raise :class:`UsageError` (one line) instead of printing usage and exiting."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see `{self.prog} --help`)")
