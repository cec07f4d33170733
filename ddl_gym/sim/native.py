"""The build switch of the optional compiled modules (``scripts/build_native.py``).

``python scripts/build_native.py`` compiles ``ddl_gym/sim/engine.py``, ``ddl_gym/sim/tasklevel.py``,
``ddl_gym/envs/core.py`` and ``baselines/sjf_bco/plan.py`` themselves with mypyc (same code, same integer and float arithmetic:
results are bit-identical, the golden tests check both builds) into ``_<module>_native*.so`` beside
each source, each stamped with the sha256 of its source. A build is used only while its stamp
matches, so an edit falls back to plain Python until it is rebuilt; ``DDL_GYM_PURE_PYTHON=1``
disables every build.
"""

from __future__ import annotations

import hashlib
import importlib
import os
from types import ModuleType


def compiled_module(source_file: str) -> ModuleType | None:
    """The compiled build of the module at ``source_file`` (``<package>/<m>.py`` →
    ``<package>._<m>_native``, the package's dotted name read from the folders that hold an
    ``__init__.py``: ``ddl_gym/sim/engine.py`` → ``ddl_gym.sim._engine_native``; ``baselines/`` is installed
    as ``ddl_gym.baselines``, so ``baselines/sjf_bco/plan.py`` → ``ddl_gym.baselines.sjf_bco._plan_native``)
    if it is built, its stamp matches the source and it is not disabled; else None."""
    if os.environ.get("DDL_GYM_PURE_PYTHON", "") not in ("", "0"):
        return None
    stem = os.path.splitext(os.path.basename(source_file))[0]
    try:
        module = importlib.import_module(f"{_package_of(source_file)}._{stem}_native")
    except ImportError:
        return None
    with open(source_file, "rb") as source:
        digest = hashlib.sha256(source.read()).hexdigest()
    return module if getattr(module, "SOURCE_SHA256", None) == digest else None


def _package_of(source_file: str) -> str:
    """The dotted package name of the folder holding ``source_file`` (``ddl_gym.<...>``)."""
    parts: list[str] = []
    folder = os.path.dirname(os.path.abspath(source_file))
    while os.path.isfile(os.path.join(folder, "__init__.py")):
        parts.insert(0, os.path.basename(folder))
        folder = os.path.dirname(folder)
    if parts and parts[0] != "ddl_gym":  # a source checkout: baselines/ and agents/ are ddl_gym.<name>
        parts.insert(0, "ddl_gym")
    return ".".join(parts)
