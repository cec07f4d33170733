"""Helpers the bench scripts share (bench.py, bench_engine_compare.py): which build runs, the environment
and preparation of a measured source tree, and the pre-round reference tree's fifo+pack.

Both scripts import this module (from the scripts folder on ``sys.path``); neither imports the other.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

#: Folders of a source tree whose modules a counted run imports.
TREE_PACKAGES = ("ddl_gym", "baselines", "agents", "scripts")
#: This checkout (its ``ddl_gym.baselines`` / ``ddl_gym.agents`` come from the editable install).
CHECKOUT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_PREPARED_TREES: set[str] = set()


def engine_build(tree: str | None = None) -> str:
    """Which build of the job-level engine runs: in this process (``tree`` None), else in a child run
    on ``tree`` (``scripts/build_native.py``; code from before the compiled build is plain Python)."""
    if tree is None:
        from ddl_gym.sim import engine

        build = engine.BUILD
    else:
        probe = "import ddl_gym.sim.engine as e; print(getattr(e, 'BUILD', 'python'))"
        done = subprocess.run([sys.executable, "-c", probe], env=tree_env(tree), capture_output=True, text=True,
                              cwd="/tmp")
        build = done.stdout.strip() if done.returncode == 0 else "unknown"
    return build_label(build)


def build_label(build: str) -> str:
    """A module's ``BUILD`` flag (``native`` / ``python``) as the reports name it."""
    return {"native": "compiled (mypyc, scripts/build_native.py)", "python": "plain Python"}.get(build, build)


def tree_env(tree: str | None) -> dict[str, str]:
    """The environment of a child run on ``tree``: ``PYTHONPATH=tree``, and ``DDL_GYM_TRACES`` set to this
    checkout's ``../shared/traces`` when that exists and the variable is unset. Trace-built worlds (the
    asrpt-sim world's Philly gaps) otherwise differ between a tree beside ``shared/`` and one elsewhere
    (e.g. a worktree under /tmp falls back to the bundled sample), and the two trees would measure
    different workloads."""
    env = dict(os.environ) if tree is None else dict(os.environ, PYTHONPATH=tree)
    traces = os.path.join(os.path.dirname(CHECKOUT), "shared", "traces")
    if "DDL_GYM_TRACES" not in env and os.path.isdir(traces):
        env["DDL_GYM_TRACES"] = traces
    return env


def prepare_tree(tree: str | None) -> None:
    """Make a measured tree run its own code, once per tree, before anything is counted or timed.

    * ``ddl_gym/baselines`` and ``ddl_gym/agents`` links to the tree's own folders: the editable
      install maps those subpackages to *this checkout's* folders, so without the links a tree's
      engine would silently run this checkout's policies.
    * Byte-compiled packages: a fresh tree has no ``__pycache__``, and the first counted run that
      imports a module would count its compilation (tens of millions of instructions: thousands
      per job at 2,500 jobs, and only in that run's size).
    """
    import compileall

    root = os.path.abspath(tree) if tree is not None else CHECKOUT
    if root in _PREPARED_TREES:
        return
    if root != CHECKOUT:
        for sub in ("agents", "baselines"):
            link = os.path.join(root, "ddl_gym", sub)
            if os.path.isdir(os.path.join(root, sub)) and not os.path.lexists(link):
                os.symlink(os.path.join("..", sub), link, target_is_directory=True)
    for name in TREE_PACKAGES:
        path = os.path.join(root, name)
        if os.path.isdir(path):
            compileall.compile_dir(path, quiet=2)
    _PREPARED_TREES.add(root)


DEFAULT_REFERENCE_TREE = "/tmp/old_engine"

_REFERENCE_CHILD = r"""
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("reference_bench", sys.argv[1] + "/scripts/bench.py")
bench = importlib.util.module_from_spec(spec); spec.loader.exec_module(bench)
gpus, jobs, load = int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
figures = bench.simulate_jobs_per_second(*bench.synthetic_case(gpus, jobs, load=load), policy="fifo+pack")
print(json.dumps({k: figures[k] for k in ("jobs_per_cpu_s", "cpu_seconds", "avg_queue_s")}))
"""


def reference_tree() -> str | None:
    """The pre-round source tree to time as the reference, if it is present."""
    import os

    tree = os.environ.get("DDL_GYM_REFERENCE_TREE", DEFAULT_REFERENCE_TREE)
    return tree if (Path(tree) / "scripts" / "bench.py").exists() and (Path(tree) / "ddl_gym").is_dir() else None


def reference_fifo_pack(tree: str, gpus: int, jobs: int, load: float) -> dict[str, float]:
    """The reference tree's fifo+pack on the same case, in a child process with only that tree importable."""
    import subprocess

    prepare_tree(tree)  # its own ddl_gym.baselines, byte-compiled
    done = subprocess.run([sys.executable, "-c", _REFERENCE_CHILD, tree, str(gpus), str(jobs), str(load)],
                          env=tree_env(tree), capture_output=True, text=True, cwd="/tmp")
    if done.returncode != 0:
        raise RuntimeError(f"reference run failed: {(done.stderr.strip().splitlines() or ['?'])[-1]}")
    return json.loads(done.stdout.strip().splitlines()[-1])
