"""Old module paths of the 0.1 layout still import for one release, warn, and are the same modules (issue 29)."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

from ddl_gym._moved import MOVED_MODULES


def test_every_old_path_warns_once_and_is_the_new_module() -> None:
    # a fresh interpreter: the warning is given when an old name is first imported
    code = ("import importlib, sys, warnings\n"
            "from ddl_gym._moved import MOVED_MODULES\n"
            "for old, new in sorted(MOVED_MODULES.items()):\n"
            "    with warnings.catch_warnings(record=True) as caught:\n"
            "        warnings.simplefilter('always')\n"
            "        module = importlib.import_module(old)\n"
            "    deprecations = [str(w.message) for w in caught if w.category is DeprecationWarning and old in str(w.message)]\n"
            "    assert len(deprecations) == 1 and new in deprecations[0], (old, deprecations)\n"
            "    assert module is importlib.import_module(new) and sys.modules[old] is module, old\n"
            "print('OK', len(MOVED_MODULES))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == f"OK {len(MOVED_MODULES)}"


def test_old_names_resolve_to_the_same_objects() -> None:
    with pytest.warns(DeprecationWarning):
        from ddl_gym.baselines.sjf_bco_plan import PlanOptions, plan  # noqa: F401  (the old path)
    new = importlib.import_module("ddl_gym.baselines.sjf_bco.plan")
    assert PlanOptions is new.PlanOptions and plan is new.plan
    old_registry = importlib.import_module("ddl_gym.baselines.registry")
    import ddl_gym.policies as policies

    assert old_registry is policies and old_registry.make_policy is policies.make_policy
    from ddl_gym.baselines.a_srpt_baselines import make_baseline
    from ddl_gym.baselines.a_srpt.paper_baselines import make_baseline as new_make_baseline

    assert make_baseline is new_make_baseline


def test_public_names_keep_working() -> None:
    """Former modules that are now packages re-export their names; the harness keeps its API."""
    from ddl_gym.baselines.sjf_bco import SJFBCOPolicy
    from ddl_gym.baselines.sjf_bco.policy import SJFBCOPolicy as new
    import ddl_gym.harness as harness
    from ddl_gym.harness.evaluation import evaluate

    assert SJFBCOPolicy is new
    assert harness.evaluate is evaluate and callable(harness.compare) and callable(harness.read_results)
    from ddl_gym.baselines import make_policy
    from ddl_gym.policies import make_policy as registry_make_policy

    assert make_policy is registry_make_policy


def test_unknown_old_looking_path_still_fails() -> None:
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("ddl_gym.baselines.no_such_module")
