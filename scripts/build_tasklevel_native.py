"""Compile the Ada-SRSF task-level engine with mypyc (optional speed-up, identical schedules).

Run ``python scripts/build_tasklevel_native.py`` (needs ``pip install mypy`` and a C compiler; the
``native`` extra of ``pyproject.toml``). It writes a copy of ``ddl_gym/sim/tasklevel.py`` as
module ``ddl_gym.sim._tasklevel_native`` — the same code, except that the ``# <shared>`` blocks
(``InvariantError``, ``EngineStats``) are imported from the plain module so both builds raise and
report with the same classes, and the ``# <pure-only>`` block (the build switch) is left out —
stamped with the sha256 of ``tasklevel.py``, compiles it with mypyc and puts the extension next to
``tasklevel.py``. ``ddl_gym.sim.tasklevel`` then uses it while the stamp matches (an edit falls
back to plain Python until rebuilt; ``DDL_GYM_PURE_PYTHON=1`` disables it). mypyc keeps Python's
integer and float semantics, so schedules are bit-identical (the golden digests and
``scripts/bench_tasklevel.py`` check it). ``--clean`` removes the extension.
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
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
SOURCE = REPO_ROOT / "ddl_gym" / "sim" / "tasklevel.py"
NAME = "_tasklevel_native"
ANCHOR = "from ddl_gym.sim.perf import AllReduceContentionModel\n"


def native_source(text: str) -> str:
    """The module the extension is compiled from (see the module docstring)."""
    digest = hashlib.sha256(text.encode()).hexdigest()
    out, shared = re.subn(r"# <shared>[^\n]*\n.*?# </shared>\n", "", text, flags=re.S)
    out, pure = re.subn(r"\n# <pure-only>[^\n]*\n.*?# </pure-only>\n?", "\n", out, flags=re.S)
    if shared != 2 or pure != 1 or ANCHOR not in out:
        raise SystemExit(f"{SOURCE}: expected 2 '# <shared>' blocks, 1 '# <pure-only>' block and the perf import; "
                         f"found {shared}, {pure}")
    out = out.replace(ANCHOR, ANCHOR + "from ddl_gym.sim.tasklevel import EngineStats, InvariantError\n", 1)
    return out.rstrip("\n") + f'\n\n#: sha256 of the tasklevel.py this build was compiled from.\nSOURCE_SHA256 = "{digest}"\n'


def existing() -> list[Path]:
    return sorted(SOURCE.parent.glob(f"{NAME}.*.so")) + sorted(SOURCE.parent.glob(f"{NAME}.*.pyd"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--clean", action="store_true", help="remove the compiled extension and exit")
    parser.add_argument("--if-stale", action="store_true",
                        help="do nothing when the compiled build in place matches the source (what setup.sh runs)")
    args = parser.parse_args(argv)
    if args.if_stale and not args.clean and existing():
        check = subprocess.run([sys.executable, "-c", "import ddl_gym.sim.tasklevel as t; print(t.BUILD)"],
                               capture_output=True, text=True,
                               env={k: v for k, v in os.environ.items() if k != "DDL_GYM_PURE_PYTHON"})
        if check.stdout.strip() == "native":
            print("compiled task-level engine is up to date")
            return 0
    for path in existing():
        path.unlink()
    if args.clean:
        print("removed the compiled task-level engine; plain Python is used")
        return 0
    try:
        import mypyc  # noqa: F401
    except ImportError:
        print("error: mypyc not installed (pip install mypy, or pip install -e .[native])", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="tasklevel-native-") as tmp:
        module = Path(tmp) / f"{NAME}.py"
        module.write_text(native_source(SOURCE.read_text()))
        # Only this module is compiled and type-checked; what it imports is taken as untyped (Any).
        proc = subprocess.run([sys.executable, "-m", "mypyc", "--follow-imports=skip", "--ignore-missing-imports",
                               module.name], cwd=tmp, capture_output=True, text=True)
        built = sorted(Path(tmp).glob(f"{NAME}.*.so")) + sorted(Path(tmp).glob(f"{NAME}.*.pyd"))
        if proc.returncode != 0 or not built:
            print(proc.stdout[-4000:] + proc.stderr[-4000:], file=sys.stderr)
            print(f"error: mypyc failed to compile {SOURCE} (exit {proc.returncode})", file=sys.stderr)
            return 1
        shutil.copy2(built[0], SOURCE.parent / built[0].name)
    check = subprocess.run([sys.executable, "-c", "import ddl_gym.sim.tasklevel as t; print(t.BUILD)"],
                           capture_output=True, text=True, env={k: v for k, v in os.environ.items()
                                                                if k != "DDL_GYM_PURE_PYTHON"})
    build = check.stdout.strip()
    print(f"built {SOURCE.parent / built[0].name}; ddl_gym.sim.tasklevel.BUILD = {build or check.stderr[-500:]}")
    return 0 if build == "native" else 1


if __name__ == "__main__":
    sys.exit(main())
