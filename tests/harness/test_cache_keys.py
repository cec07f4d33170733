"""Cache keys cover what determines a result (issue 30 part 2): a user policy's source and parameters, and --debug."""

from __future__ import annotations

import importlib
import sys
import warnings
from pathlib import Path

import pytest

from ddl_gym import harness, policy_keys
from ddl_gym.scenarios import get_scenario
from ddl_gym.policies import register_policy

POLICY_MODULE = '''
from ddl_gym.baselines.classic import ClassicPolicy


def make(**options):
    return ClassicPolicy(order="{order}", placement="pack")
'''


def _evaluate(policies: list, out: Path, **kwargs: object) -> harness.EvalResults:
    return harness.evaluate(policies, "small", 2, out, workers=1, progress=False, echo=False, plots=False, **kwargs)


def test_editing_a_registered_policy_module_recomputes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The issue's reproduction: register, evaluate into a folder, edit the module, evaluate again."""
    package = tmp_path / "userpol"
    package.mkdir()
    module_file = package / "stale_cache_user_policy.py"
    module_file.write_text(POLICY_MODULE.format(order="fifo"))
    monkeypatch.syspath_prepend(str(package))
    import stale_cache_user_policy  # noqa: F401

    register_policy("stale-cache-user", "stale_cache_user_policy:make", {}, "test policy")
    first = _evaluate(["stale-cache-user"], tmp_path / "out")
    assert first.reused == 0 and len(first.summary) == 2
    again = _evaluate(["stale-cache-user"], tmp_path / "out")
    assert again.reused == 2  # nothing changed: reused

    module_file.write_text(POLICY_MODULE.format(order="sjf"))  # the user edits the policy ...
    importlib.reload(sys.modules["stale_cache_user_policy"])   # ... and runs again (a new process would import it)
    edited = _evaluate(["stale-cache-user"], tmp_path / "out")
    assert edited.reused == 0 and edited.stale == 2
    fresh = _evaluate(["stale-cache-user"], tmp_path / "fresh")
    assert edited.summary["avg_jct_s"].tolist() == fresh.summary["avg_jct_s"].tolist()
    assert edited.summary["avg_jct_s"].tolist() != first.summary["avg_jct_s"].tolist()

    register_policy("stale-cache-user", "stale_cache_user_policy:make", {"unused": 1}, "test policy")
    assert harness.run_cache_key(get_scenario("small"), "stale-cache-user") != edited.summary["cache_key"][0]


def test_debug_runs_never_reuse_rows_computed_without_checks(tmp_path: Path) -> None:
    plain = _evaluate(["fifo+pack"], tmp_path / "out")
    debug = _evaluate(["fifo+pack"], tmp_path / "out", debug=True)
    assert debug.reused == 0 and debug.stale == 2
    assert debug.summary["avg_jct_s"].tolist() == plain.summary["avg_jct_s"].tolist()
    assert _evaluate(["fifo+pack"], tmp_path / "out", debug=True).reused == 2


class PlainPolicy:
    """A policy object whose parameters are plain data (keyable); a fresh one per evaluation."""

    def __init__(self, order: str) -> None:
        self.name = "plain-object"
        self.order = order

    def reset(self, sim, rng) -> None:  # noqa: ANN001
        from ddl_gym.baselines.classic import ClassicPolicy

        self._inner = ClassicPolicy(order=self.order, placement="pack")
        self._inner.reset(sim, rng)

    def schedule(self, sim):  # noqa: ANN001
        return self._inner.schedule(sim)


def test_policy_objects_key_on_class_source_and_parameters(tmp_path: Path) -> None:
    first = _evaluate([PlainPolicy("fifo")], tmp_path / "out")
    assert first.summary["cache_key"][0] != harness.NO_CACHE_KEY
    assert _evaluate([PlainPolicy("fifo")], tmp_path / "out").reused == 2
    changed = _evaluate([PlainPolicy("sjf")], tmp_path / "out")
    assert changed.reused == 0 and changed.stale == 2


def test_a_policy_whose_parameters_cannot_be_known_is_never_cached_and_says_so(tmp_path: Path) -> None:
    policy = PlainPolicy("fifo")
    policy.name = "opaque-object"
    policy.hook = lambda job: job  # a function: its behaviour cannot be keyed
    policy_keys._WARNED.discard("opaque-object")
    with pytest.warns(UserWarning, match="policy 'opaque-object': no cache key .*function.*always recomputed"):
        first = _evaluate([policy], tmp_path / "out")
    assert set(first.summary["cache_key"]) == {harness.NO_CACHE_KEY}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # said once per policy and process, not on every call
        second = _evaluate([policy], tmp_path / "out")
    assert second.reused == 0


def test_module_without_a_source_file_is_unknowable() -> None:
    import types

    module = types.ModuleType("made_in_memory_policy")
    sys.modules["made_in_memory_policy"] = module
    try:
        with pytest.raises(policy_keys.Unknowable, match="no source file"):
            policy_keys.source_digests(["made_in_memory_policy"])
    finally:
        del sys.modules["made_in_memory_policy"]
