"""Compile the engines and the env's hot path with mypyc (optional speed-up, identical results).

Run ``python scripts/build_native.py`` (needs ``pip install mypy`` and a C compiler; the ``native``
extra of ``pyproject.toml``). For each target it writes a copy of its source as a module next to it
— the job-level engine ``ddl_gym/sim/engine.py`` as ``ddl_gym.sim._engine_native``, the Ada-SRSF
task-level engine ``ddl_gym/sim/tasklevel.py`` as ``ddl_gym.sim._tasklevel_native``, the env core
``ddl_gym/envs/core.py`` (decision window, masks, portable observation of ``DDLCluster-v0``) as
``ddl_gym.envs._core_native``, the SJF-BCO planner ``baselines/sjf_bco/plan.py`` (installed as
``ddl_gym.baselines``) as ``ddl_gym.baselines.sjf_bco._plan_native`` — the same code, except that:

* the ``# <shared>`` blocks (exception and record classes, the planner's plan records) are imported
  from the plain module, so both builds raise and report with the same classes;
* the ``# <pure-only>`` block (the build switch) is left out;
* the job-level ``Simulator`` is marked ``allow_interpreted_subclasses`` (the harness and tests
  subclass it);

stamped with the sha256 of the source, compiles it with mypyc and puts the extension next to the
source. The plain module then uses it while the stamp matches (an edit falls back to plain Python
until rebuilt; ``DDL_GYM_PURE_PYTHON=1`` disables both). mypyc keeps Python's integer and float
semantics, so results are bit-identical (the golden tests run both builds). ``--clean`` removes the
extensions; ``--only engine|tasklevel|envcore|sjfbco`` builds one.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
PACKAGE = REPO_ROOT / "ddl_gym"


@dataclass(frozen=True)
class Target:
    """One module and how its compiled copy differs from it."""

    label: str  # what the messages call it
    module: str  # ddl_gym.<package>.<module>
    shared_blocks: int  # how many ``# <shared>`` blocks the source has
    anchor: str = ""  # the import line after which shared classes and mypyc_attr are imported (if any)
    subclassable: tuple[str, ...] = ()  # classes interpreted code may subclass
    package: str = "sim"  # the subpackage of ddl_gym the module is in (dotted: "baselines.sjf_bco")

    @property
    def folder(self) -> Path:
        """``ddl_gym/<package>``, or ``<package>/`` at the top (``baselines/`` and ``agents/`` are installed
        as ``ddl_gym.<package>``, see pyproject.toml)."""
        inside = PACKAGE / self.package.replace(".", "/")
        return inside if inside.is_dir() else REPO_ROOT / self.package.replace(".", "/")

    @property
    def source(self) -> Path:
        return self.folder / f"{self.module}.py"

    @property
    def dotted(self) -> str:
        return f"ddl_gym.{self.package}.{self.module}"

    @property
    def name(self) -> str:
        return f"_{self.module}_native"


TARGETS: dict[str, Target] = {
    "engine": Target("job-level engine", "engine", 1, "from ddl_gym.sim.perf import PerformanceModel, RARContentionModel\n",
                     ("Simulator",)),
    "tasklevel": Target("task-level engine", "tasklevel", 2, "from ddl_gym.sim.perf import AllReduceContentionModel\n"),
    "envcore": Target("env core", "core", 0, package="envs"),
    "sjfbco": Target("SJF-BCO planner", "plan", 1,
                     "from ddl_gym.sim.perf import BoundModel, PerformanceModel, RARContentionModel\n",
                     package="baselines.sjf_bco"),
}


def native_source(text: str, target: Target) -> str:
    """The module ``target``'s extension is compiled from (see the module docstring)."""
    digest = hashlib.sha256(text.encode()).hexdigest()
    shared_block = re.compile(r"# <shared>[^\n]*\n.*?# </shared>\n", flags=re.S)
    blocks = shared_block.findall(text)
    shared, out = len(blocks), shared_block.sub("", text)
    # The compiled copy imports the shared classes back from the plain module, by the names defined there.
    shared_names = sorted(name for block in blocks for name in re.findall(r"^class (\w+)", block, flags=re.M))
    out, pure = re.subn(r"\n# <pure-only>[^\n]*\n.*?# </pure-only>\n?", "\n", out, flags=re.S)
    if shared != target.shared_blocks or pure != 1 or (target.anchor and target.anchor not in out):
        raise SystemExit(f"{target.source}: expected {target.shared_blocks} '# <shared>' block(s), 1 '# <pure-only>' "
                         f"block and the line {target.anchor.strip()!r}; found {shared}, {pure}")
    if shared_names:
        shared_import = f"from {target.dotted} import {', '.join(shared_names)}\n"
        out = out.replace(target.anchor, target.anchor + shared_import, 1)
    for cls in target.subclassable:
        line = f"\nclass {cls}:\n"
        if line not in out:
            raise SystemExit(f"{target.source}: class {cls} not found")
        out = out.replace(line, f"\n@mypyc_attr(allow_interpreted_subclasses=True)\nclass {cls}:\n", 1)
    if target.subclassable:
        out = out.replace(target.anchor, target.anchor + "from mypy_extensions import mypyc_attr\n", 1)
    return out.rstrip("\n") + (f"\n\n#: sha256 of the {target.module}.py this build was compiled from.\n"
                               f'SOURCE_SHA256 = "{digest}"\n')


def existing(target: Target) -> list[Path]:
    return sorted(target.folder.glob(f"{target.name}.*.so")) + sorted(target.folder.glob(f"{target.name}.*.pyd"))


def build_in_use(target: Target) -> str:
    """``ddl_gym.<package>.<module>.BUILD`` in a fresh interpreter (``native`` or ``python``), else its error."""
    check = subprocess.run([sys.executable, "-c", f"import {target.dotted} as m; print(m.BUILD)"],
                           capture_output=True, text=True,
                           env={k: v for k, v in os.environ.items() if k != "DDL_GYM_PURE_PYTHON"})
    return check.stdout.strip() or check.stderr[-500:]


def build(target: Target, if_stale: bool) -> int:
    if if_stale and existing(target) and build_in_use(target) == "native":
        print(f"compiled {target.label} is up to date")
        return 0
    for path in existing(target):
        path.unlink()
    with tempfile.TemporaryDirectory(prefix=f"{target.module}-native-") as tmp:
        module = Path(tmp) / f"{target.name}.py"
        module.write_text(native_source(target.source.read_text(), target))
        # Only this module is compiled and type-checked; what it imports is taken as untyped (Any).
        proc = subprocess.run([sys.executable, "-m", "mypyc", "--follow-imports=skip", "--ignore-missing-imports",
                               module.name], cwd=tmp, capture_output=True, text=True)
        built = sorted(Path(tmp).glob(f"{target.name}.*.so")) + sorted(Path(tmp).glob(f"{target.name}.*.pyd"))
        if proc.returncode != 0 or not built:
            print(proc.stdout[-4000:] + proc.stderr[-4000:], file=sys.stderr)
            print(f"error: mypyc failed to compile {target.source} (exit {proc.returncode})", file=sys.stderr)
            return 1
        shutil.copy2(built[0], target.folder / built[0].name)
    in_use = build_in_use(target)
    print(f"built {target.folder / built[0].name}; {target.dotted}.BUILD = {in_use}")
    return 0 if in_use == "native" else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--clean", action="store_true", help="remove the compiled extensions and exit")
    parser.add_argument("--if-stale", action="store_true",
                        help="do nothing for a compiled build in place that matches its source (what setup.sh runs)")
    parser.add_argument("--only", choices=sorted(TARGETS), help="build (or clean) one target only")
    args = parser.parse_args(argv)
    targets = [TARGETS[args.only]] if args.only else list(TARGETS.values())
    if args.clean:
        for target in targets:
            for path in existing(target):
                path.unlink()
            print(f"removed the compiled {target.label}; plain Python is used")
        return 0
    try:
        import mypyc  # noqa: F401
    except ImportError:
        print("error: mypyc not installed (pip install mypy, or pip install -e .[native])", file=sys.stderr)
        return 2
    status = 0
    for target in targets:
        status = max(status, build(target, args.if_stale))
    return status


if __name__ == "__main__":
    sys.exit(main())
