"""The build switch of the optional compiled modules (``scripts/build_native.py``).

``python scripts/build_native.py`` compiles ``ddl_gym/sim/engine.py``, ``ddl_gym/sim/tasklevel.py``,
``ddl_gym/envs/core.py`` and ``baselines/sjf_bco_plan.py`` themselves with mypyc (same code, same integer and float arithmetic:
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
    """The compiled build of the module at ``source_file`` (``<folder>/<m>.py`` →
    ``ddl_gym.<folder>._<m>_native``, the folder being the subpackage's: ``baselines/`` is installed as
    ``ddl_gym.baselines``) if it is built, its stamp matches the source and it is not disabled; else None."""
    if os.environ.get("DDL_GYM_PURE_PYTHON", "") not in ("", "0"):
        return None
    stem = os.path.splitext(os.path.basename(source_file))[0]
    package = os.path.basename(os.path.dirname(os.path.abspath(source_file)))
    try:
        module = importlib.import_module(f"ddl_gym.{package}._{stem}_native")
    except ImportError:
        return None
    with open(source_file, "rb") as source:
        digest = hashlib.sha256(source.read()).hexdigest()
    return module if getattr(module, "SOURCE_SHA256", None) == digest else None
