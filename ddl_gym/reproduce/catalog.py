"""The one registry of committed reproduction reports: which command writes each file, and whether CI
regenerates it (issue 32 part 3).

``ddl-gym reproduce all [--quick | --full] [--check] [--out DIR]`` runs every entry (quick entries only with
``--quick``); with ``--check`` it regenerates into a scratch folder and compares each result with the committed
file (:func:`compare_text`), without touching ``docs/``; without it, it rewrites the committed files.

The comparison is byte for byte except the *timing section*, which wall clock makes irreproducible and which
every report marks in one of two ways (:func:`reproducible_part` strips both):

* a trailing section whose heading starts with ``## Timing`` (everything from that heading to the end), or
* lines between ``<!-- timing -->`` and ``<!-- /timing -->`` (markers included).

An entry with ``ci=False`` (a full report CI cannot afford) carries, in its header, the commit it was made at
(:func:`made_at`); :data:`CATALOG` says which are which and ``tests/reproduce/test_catalog.py`` regenerates
every ``ci=True`` entry.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ddl_gym.report_paths import REPO_ROOT

TIMING_START = "<!-- timing -->"
TIMING_END = "<!-- /timing -->"
TIMING_HEADING = "## Timing"

#: The flags that only say where outputs go or how fast they are made (never what they say).
_LOCATION_FLAGS = ("--out", "--report", "--claims")
_SPEED_FLAGS = ("--workers", "--jobs")
_BARE_FLAGS = ("--no-plots",)


@dataclass(frozen=True)
class Entry:
    """One command and the committed files it writes.

    Attributes:
        name: short id (``sjf-bco-quick``).
        reproduction: name for ``ddl-gym reproduce`` (:data:`ddl_gym.reproduce.REGISTRY`).
        args: the arguments that decide the content (seeds, grid, ``--quick``, ...).
        outputs: flag → committed path relative to the repository root (``--report``, ``--claims``).
        ci: whether CI regenerates and compares it (quick variants: yes).
        quick: belongs to ``reproduce all --quick``.
        workers: worker processes used when regenerating (content never depends on it).
        extra: further arguments that do not change the content (e.g. ``--no-plots``).
    """

    name: str
    reproduction: str
    args: tuple[str, ...]
    outputs: tuple[tuple[str, str], ...]
    ci: bool
    quick: bool
    workers: int = 1
    extra: tuple[str, ...] = ("--no-plots",)

    def argv(self, out: Path, outputs: dict[str, Path] | None = None) -> list[str]:
        """Arguments of the run: content args, workers, then outputs (``outputs`` overrides the committed paths)."""
        argv = [*self.args, "--workers", str(self.workers), *self.extra, "--out", str(out)]
        for flag, path in self.outputs:
            argv += [flag, str((outputs or {}).get(flag, REPO_ROOT / path))]
        return argv

    def command(self) -> str:
        """The documented command (docs/reports.md prints it)."""
        outs = " ".join(f"{flag} {path}" for flag, path in self.outputs)
        return (f"ddl-gym reproduce {self.reproduction} {' '.join(self.args)} --workers {self.workers} "
                f"{' '.join(self.extra)} --out results/{self.name} {outs}").replace("  ", " ").strip()

    @property
    def files(self) -> tuple[str, ...]:
        return tuple(path for _, path in self.outputs)


def _paper(reproduction: str) -> str:
    return reproduction.replace("-", "_")


def _q(reproduction: str, *, report: bool = False, args: tuple[str, ...] = ()) -> Entry:
    d = f"docs/reproductions/{_paper(reproduction)}"
    outputs = (("--claims", f"{d}/claims_quick.md"),) + ((("--report", f"{d}/report_quick.md"),) if report else ())
    return Entry(f"{reproduction}-quick", reproduction, ("--quick", *args), outputs, ci=True, quick=True)


def _full(reproduction: str, args: tuple[str, ...], *, claims: bool, workers: int = 2, ci: bool = False) -> Entry:
    d = f"docs/reproductions/{_paper(reproduction)}"
    outputs = (("--report", f"{d}/report.md"),) + ((("--claims", f"{d}/claims.md"),) if claims else ())
    return Entry(reproduction, reproduction, args, outputs, ci=ci, quick=False, workers=workers)


#: Every committed reproduction file, with the command that writes it. The A-Online and A-SRPT rows use their
#: documented commands of docs/reports.md (their owners keep them current).
CATALOG: tuple[Entry, ...] = (
    _q("sjf-bco", report=True),
    _full("sjf-bco", ("--seeds", "5"), claims=True, workers=1, ci=True),
    _q("ada-srsf", report=True),
    _full("ada-srsf", ("--seeds", "3", "--extras"), claims=True),
    _q("smd", report=True),
    _full("smd", ("--seeds", "10"), claims=True),
    Entry("a-online-quick", "a-online", ("--quick",), (("--claims", "docs/reproductions/a_online/claims_quick.md"),),
          ci=True, quick=True),
    Entry("a-online", "a-online", ("--seeds", "3"), (("--report", "docs/reproductions/a_online/report.md"),),
          ci=False, quick=False, workers=2, extra=()),
    Entry("a-srpt-quick", "a-srpt", ("--quick",), (("--report", "docs/reproductions/a_srpt/report_quick.md"),
                                                   ("--claims", "docs/reproductions/a_srpt/claims_quick.md")),
          ci=True, quick=True, extra=()),
    Entry("a-srpt", "a-srpt", (), (("--report", "docs/reproductions/a_srpt/report.md"),
                                   ("--claims", "docs/reproductions/a_srpt/claims.md")),
          ci=False, quick=False, workers=2, extra=()),
)
BY_NAME = {e.name: e for e in CATALOG}


# ----------------------------------------------------------------------------- comparison
def reproducible_part(text: str) -> str:
    """``text`` without its timing section(s): the marked blocks and a trailing ``## Timing`` section."""
    out: list[str] = []
    inside = False
    for line in text.splitlines(keepends=True):
        stripped = line.strip()
        if stripped == TIMING_START:
            inside = True
            continue
        if stripped == TIMING_END:
            inside = False
            continue
        if not inside and line.startswith(TIMING_HEADING):
            break
        if not inside:
            out.append(line)
    return "".join(out)


def compare_text(committed: str, regenerated: str, name: str) -> str | None:
    """``None`` if both are equal outside their timing sections, else a message naming ``name`` and the first
    differing line (1-based, both versions)."""
    a, b = reproducible_part(committed), reproducible_part(regenerated)
    if a == b:
        return None
    al, bl = a.splitlines(), b.splitlines()
    for i, (x, y) in enumerate(zip(al, bl)):
        if x != y:
            return f"{name}: line {i + 1} differs from a regeneration:\n  committed:   {x}\n  regenerated: {y}"
    i = min(len(al), len(bl))
    extra = (al[i] if len(al) > len(bl) else bl[i]) if max(len(al), len(bl)) > i else "(trailing newline)"
    which = "committed" if len(al) > len(bl) else "regenerated"
    return f"{name}: line {i + 1} differs from a regeneration: only the {which} file has it: {extra}"


def made_at(root: Path = REPO_ROOT) -> str:
    """The commit the report is made at (``git rev-parse --short HEAD``, ``+changes`` if code is changed;
    ``unknown`` outside a checkout)."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True,
                              check=True).stdout.strip()
        # Only code decides a report: changes to generated files (docs/, leaderboard/) do not make it "+changes".
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", ".", ":!docs",
                                ":!leaderboard"], cwd=root, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+changes" if dirty else "")


def content_command(reproduction: str, argv: Sequence[str]) -> str:
    """The command as far as it decides a report's content: output locations, worker counts and ``--no-plots``
    dropped (so that a regeneration into a scratch folder prints the same header)."""
    out: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
            continue
        flag = arg.split("=", 1)[0]
        if flag in _LOCATION_FLAGS + _SPEED_FLAGS:
            skip = "=" not in arg
            continue
        if flag in _BARE_FLAGS:
            continue
        out.append(arg)
    return " ".join(["ddl-gym reproduce", reproduction, *out])


# ----------------------------------------------------------------------------- running
def regenerate(entry: Entry, dest: Path) -> dict[str, str]:
    """Run ``entry`` writing into ``dest`` (never into docs/); committed path → regenerated text."""
    from ddl_gym.reproduce import run

    dest.mkdir(parents=True, exist_ok=True)
    outputs = {flag: dest / Path(path).name for flag, path in entry.outputs}
    status = run(entry.reproduction, entry.argv(dest / "out", outputs))
    if status != 0:
        raise RuntimeError(f"{entry.name}: `{entry.command()}` exited with {status}")
    return {path: outputs[flag].read_text() for flag, path in entry.outputs}


def check(entry: Entry, dest: Path, root: Path = REPO_ROOT) -> list[str]:
    """Regenerate ``entry`` into ``dest`` and compare with the committed files under ``root``; the mismatches."""
    problems = []
    for path, text in regenerate(entry, dest).items():
        committed = root / path
        if not committed.exists():
            problems.append(f"{path}: not committed (regenerate with `{entry.command()}`)")
            continue
        msg = compare_text(committed.read_text(), text, path)
        if msg:
            problems.append(msg + f"\n  regenerate with `{entry.command()}`")
    return problems


def select(quick: bool, full: bool, names: Sequence[str] = ()) -> list[Entry]:
    if names:
        unknown = [n for n in names if n not in BY_NAME]
        if unknown:
            raise SystemExit(f"unknown catalog entries {unknown}; known: {', '.join(BY_NAME)}")
        return [BY_NAME[n] for n in names]
    return [e for e in CATALOG if (quick and e.quick) or (full and not e.quick)]


def table() -> str:
    """Markdown: file → command → CI-checked (docs/reports.md's catalog table)."""
    lines = ["| files | command | CI |", "|---|---|---|"]
    for e in CATALOG:
        files = ", ".join(f"`{p.removeprefix('docs/')}`" for p in e.files)
        ci = "regenerated and compared by `tests/reproduce/test_catalog.py`" if e.ci else "no: header names the commit"
        lines.append(f"| {files} | `{e.command()}` | {ci} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="ddl-gym reproduce all", description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the quick variants (what CI checks)")
    parser.add_argument("--full", action="store_true", help="the full reports (minutes to hours)")
    parser.add_argument("--only", nargs="*", default=(), metavar="NAME", help=f"entries: {', '.join(BY_NAME)}")
    parser.add_argument("--check", action="store_true",
                        help="regenerate into a scratch folder and compare with the committed files (docs/ untouched)")
    parser.add_argument("--out", type=Path, default=None, help="scratch folder for --check / data folder")
    parser.add_argument("--list", action="store_true", help="print the catalog table and exit")
    args = parser.parse_args(list(argv) if argv is not None else None)
    if args.list:
        print(table())
        return 0
    if not (args.quick or args.full or args.only):
        args.quick = True
    entries = select(args.quick, args.full, args.only)
    base = args.out or Path(tempfile.mkdtemp(prefix="ddl-gym-reproduce-all-"))
    failed = 0
    for e in entries:
        t0 = time.perf_counter()
        if args.check:
            problems = check(e, base / e.name)
            failed += bool(problems)
            status = "ok" if not problems else "MISMATCH\n" + "\n".join(problems)
        else:
            from ddl_gym.reproduce import run

            status = "written" if run(e.reproduction, e.argv(base / e.name)) == 0 else "FAILED"
            failed += status == "FAILED"
        print(f"{e.name}: {status} ({time.perf_counter() - t0:.1f} s)", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":  # pragma: no cover
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    sys.exit(main())
