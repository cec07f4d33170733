"""The plugin path of issue 34: module:Class specs, the ddl_gym.policies entry-point group (a plugin
package installed into a temporary site folder), register_policy without a __main__ guard, and the
missing-dependency hints."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ddl_gym.policies import canonical_name, make_policy, runs_in_process_only
from ddl_gym.extras import install_hint
from ddl_gym.protocols import EnvPolicy, EpisodePolicy, SchedulerPolicy, driver_of
from ddl_gym.sim.model import ConfigError

REPO = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-c", "import sys; from ddl_gym.cli import main; sys.exit(main())"]

PLUGIN_MODULE = '''
from ddl_gym.baselines.classic import ClassicPolicy


class Smallest(ClassicPolicy):
    """SJF with a placement chosen by the spec (a plugin's policy)."""

    def __init__(self, placement="pack", shift=0):
        super().__init__("sjf", placement)
        self.shift = int(shift)
        self.name = f"smallest+{placement}"
'''


def _env(*paths: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([*(str(p) for p in paths), str(REPO), env.get("PYTHONPATH", "")])
    env.pop("DDL_GYM_TRACEBACK", None)
    return env


def test_import_specs_keep_their_case_and_pass_placement_and_options() -> None:
    spec = "ddl_gym.baselines.classic:ClassicPolicy+first_fit:order=srsf"
    assert canonical_name(spec) == "ddl_gym.baselines.classic:ClassicPolicy+ff:order=srsf"
    policy = make_policy(spec)
    assert isinstance(policy, SchedulerPolicy) and policy.name == "srsf+ff"
    # registry names with options are not import paths
    assert canonical_name("mcts:guide=SRSF+pack,sims=4") == "mcts:guide=srsf+pack,sims=4"
    with pytest.raises(ConfigError, match="agents are given as maskable-ppo:PATH"):
        make_policy("dqn:agent.zip")
    with pytest.raises(ConfigError, match="cannot import module 'no_such_module_xyz'.*PYTHONPATH"):
        make_policy("no_such_module_xyz:Policy")
    with pytest.raises(ConfigError, match="has no 'Nope'"):
        make_policy("ddl_gym.baselines.classic:Nope")


def test_protocols_classify_the_three_drivers() -> None:
    assert driver_of(make_policy("srsf+ca")) == "native"
    assert isinstance(make_policy("ada-srsf"), EpisodePolicy) and driver_of(make_policy("ada-srsf")) == "self"

    class Acts:
        name = "acts"

        def act(self, obs, action_mask, info):  # noqa: ANN001, ANN201
            return 0

    assert isinstance(Acts(), EnvPolicy) and driver_of(Acts()) == "env" and driver_of(object()) == ""


def test_entry_point_plugin_runs_through_ddl_gym_eval(tmp_path: Path) -> None:
    site = tmp_path / "site"
    (site / "ddlgym_demo_plugin").mkdir(parents=True)
    (site / "ddlgym_demo_plugin" / "__init__.py").write_text(PLUGIN_MODULE)
    dist = site / "ddlgym_demo_plugin-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: ddlgym-demo-plugin\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[ddl_gym.policies]\ndemo-smallest = ddlgym_demo_plugin:Smallest\n")
    out = tmp_path / "out"
    run = subprocess.run([*CLI, "eval", "--scenario", "small", "--policies", "demo-smallest,sjf+pack", "--seeds", "2",
                          "--workers", "2", "--out", str(out), "--no-progress", "--no-plots"],
                         capture_output=True, text=True, env=_env(site), cwd=tmp_path, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "| demo-smallest | 2 |" in run.stdout
    rows = (out / "summary.csv").read_text().splitlines()
    assert sum(",demo-smallest," in r for r in rows) == 2
    # the plugin is SJF + pack, so it reproduces sjf+pack exactly (same episodes, same decisions)
    import pandas as pd

    summary = pd.read_csv(out / "summary.csv").set_index(["policy", "seed"])
    assert summary.loc["demo-smallest", "avg_jct_s"].tolist() == summary.loc["sjf+pack", "avg_jct_s"].tolist()
    listed = subprocess.run([*CLI, "list"], capture_output=True, text=True, env=_env(site), timeout=60)
    assert "demo-smallest" in listed.stdout and "from ddlgym-demo-plugin" in listed.stdout


def test_register_policy_without_a_main_guard(tmp_path: Path) -> None:
    (tmp_path / "mine.py").write_text(PLUGIN_MODULE)
    script = tmp_path / "unguarded.py"
    script.write_text(textwrap.dedent('''
        from ddl_gym.baselines.classic import ClassicPolicy
        from ddl_gym.policies import register_policy
        from ddl_gym.harness import evaluate

        print("top level ran")


        class InScript(ClassicPolicy):
            def __init__(self):
                super().__init__("srsf", "ca")
                self.name = "in-script"


        register_policy("from-module", "mine:Smallest", {"placement": "ca"})
        register_policy("in-script", InScript)
        results = evaluate(["from-module", "in-script", "srsf+ca", "mine:Smallest+pack"], "small", 2, workers=2,
                           progress=False, echo=False, plots=False)
        print(sorted(set(results.summary["policy"])), len(results.summary))
    '''))
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=_env(tmp_path),
                         cwd=tmp_path, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.count("top level ran") == 1  # workers never re-ran the script
    assert "['from-module', 'in-script', 'mine:Smallest+pack', 'srsf+ca'] 8" in run.stdout
    assert "in-script defined in the running script: run in this process" in run.stderr
    assert "Traceback" not in run.stderr and "BrokenProcessPool" not in run.stderr


def test_in_process_only_for_main_targets() -> None:
    from ddl_gym.policies import register_policy

    class Local:  # defined in a function: no worker can import it
        name = "local"

        def act(self, obs, action_mask, info):  # noqa: ANN001, ANN201
            return 0

    register_policy("test-local-policy", Local)
    assert runs_in_process_only("test-local-policy")
    assert not runs_in_process_only("srsf+ca") and not runs_in_process_only("ddl_gym.baselines.classic:ClassicPolicy")


def test_missing_module_hints_name_the_extra_that_provides_it() -> None:
    assert "pip install 'ddl-gym[opt]'" in install_hint("scipy.optimize")
    assert "pip install 'ddl-gym[rl]'" in install_hint("sb3_contrib")
    assert "pip install 'ddl-gym[ml]'" in install_hint("sklearn.ensemble")
    assert "ddl-gym[" not in install_hint("some_unknown_module")


def test_import_specs_are_cached_on_their_source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ddl_gym.harness import evaluate

    (tmp_path / "cached_plugin_mod.py").write_text(PLUGIN_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    out = tmp_path / "out"
    kwargs = {"workers": 1, "progress": False, "echo": False, "plots": False}
    first = evaluate(["cached_plugin_mod:Smallest+ca"], "small", [0], out, **kwargs)
    assert first.reused == 0 and list(first.summary["policy"]) == ["cached_plugin_mod:Smallest+ca"]
    assert evaluate(["cached_plugin_mod:Smallest+ca"], "small", [0], out, **kwargs).reused == 1
    (tmp_path / "cached_plugin_mod.py").write_text(PLUGIN_MODULE + "\n# edited\n")
    again = evaluate(["cached_plugin_mod:Smallest+ca"], "small", [0], out, **kwargs)
    assert again.reused == 0 and again.stale == 1  # the module's source is part of the cache key
