"""Policy registry: ``make_policy("srsf+pack")``, ``make_policy("sjf-bco")``, ...

Paper policies live in their own modules and are imported lazily, so a missing optional
dependency of one never breaks the others.
"""

from __future__ import annotations

import importlib
from typing import Any

from ddl_gym.placement import PLACEMENT_ALIASES
from ddl_gym.sim.model import ConfigError

CLASSIC_PLACEMENTS = ("ff", "ls", "rand", "pack", "spread", "ca")

#: name -> ("module:factory", keyword arguments, one-line description)
_LAZY: dict[str, tuple[str, dict[str, Any], str]] = {}

for _order, _desc in (("fifo", "FIFO (strict, head-of-line blocking)"), ("sjf", "shortest job first"),
                      ("srsf", "shortest remaining service first")):
    for _rule in CLASSIC_PLACEMENTS:
        _LAZY[f"{_order}+{_rule}"] = (
            "ddl_gym.baselines.classic:ClassicPolicy", {"order": _order, "placement": _rule},
            f"{_desc} with {PLACEMENT_ALIASES[_rule].replace('_', '-')} placement",
        )

# Paper policies (SJF-BCO, Yu et al. MobiHoc'22 §5 and §7.2 baselines).
_LAZY["sjf-bco"] = ("ddl_gym.baselines.sjf_bco:make_sjf_bco", {}, "SJF-BCO (Yu et al. 2022, Alg. 1-3), offline plan executed in the simulator")
for _name in ("ff", "ls", "rand"):
    _LAZY[f"sjf-bco-{_name}"] = ("ddl_gym.baselines.sjf_bco:make_sjf_bco_baseline", {"kind": _name},
                                 f"SJF-BCO paper's {_name.upper()} baseline (§7.2)")
# Ada-SRSF (Wang et al. 2020): placement x communication scheduling on the task-level engine.
for _placement in ("lwf1", "rand", "ff", "ls"):
    for _comm in ("ada", "srsf1", "srsf2", "srsf3"):
        _label = "ada-srsf" if _comm == "ada" else f"srsf{_comm[-1]}"
        _LAZY[f"{_placement}+{_label}"] = (
            "ddl_gym.baselines.ada_srsf:make_ada_srsf_policy", {"placement": _placement, "comm": _comm},
            f"Ada-SRSF paper: {_placement.upper()} placement, {_label.upper()} scheduling (task-level engine)",
        )
_LAZY["ada-srsf"] = ("ddl_gym.baselines.ada_srsf:make_ada_srsf_policy", {"placement": "lwf1", "comm": "ada"},
                     "Ada-SRSF with LWF-1 placement (Wang et al. 2020, Alg. 1-3)")

POLICY_DESCRIPTIONS: dict[str, str] = {name: desc for name, (_, _, desc) in _LAZY.items()}
POLICY_DESCRIPTIONS["mcts:guide=srsf+pack,sims=16"] = (
    "Spear-style MCTS over env.fork() guided by a reference policy (agents/mcts.py; keys guide, sims, depth, objective)"
)


def list_policies() -> list[str]:
    """Names accepted by :func:`make_policy`."""
    return sorted(_LAZY)


def make_policy(name: str, **overrides: Any) -> Any:
    """Build a policy by registry name. Extra keyword arguments override the defaults.

    Raises:
        ConfigError: unknown name (the message lists close matches).
    """
    key = name.strip().lower()
    if key.startswith("mcts"):  # "mcts:guide=srsf+pack,sims=32,depth=20,objective=jct"
        from ddl_gym.agents.mcts import make_mcts_policy

        return make_mcts_policy(name.strip())
    if key not in _LAZY:
        import difflib

        close = difflib.get_close_matches(key, _LAZY, n=4)
        hint = f"; did you mean {', '.join(close)}?" if close else "; run `ddl-gym list` for all names"
        raise ConfigError(f"unknown policy {name!r}{hint}")
    target, kwargs, _ = _LAZY[key]
    module_name, factory_name = target.split(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(f"policy {name!r} is not available: {exc}") from None
    return getattr(module, factory_name)(**{**kwargs, **overrides})

# ============================================================================ A-Online (issue 10)
# Zhou et al., "Online Scheduling Algorithm for Heterogeneous Distributed ML Jobs": A-Online and the
# baselines of its §7, on the multi-resource scenarios aonline-ps / aonline-ra (ps and elastic
# ring-all-reduce jobs). Each raises a ConfigError naming itself and the scenario on other worlds.
_AONLINE = "ddl_gym.baselines"
_LAZY["a-online"] = (f"{_AONLINE}.a_online:make_a_online", {"mode": "calendar"},
                     "A-Online (Zhou et al., Alg. 1-7), calendar execution (no idle windows), effective alpha reported")
_LAZY["a-online-paper"] = (f"{_AONLINE}.a_online:make_a_online", {"mode": "paper"},
                           "A-Online, Alg. 1 l.8 literally: round i runs in [A tau_i, A tau_i+1), A = 4")
_LAZY["a-online-ect"] = (f"{_AONLINE}.a_online:make_a_online", {"mode": "calendar", "tie_break": "completion"},
                         "A-Online, calendar mode, equal-cost schedules broken by earliest completion")
_LAZY["fifo-mr"] = (f"{_AONLINE}.fifo_mr:make_fifo_mr", {},
                    "FIFO over multi-resource servers, fixed ideal config with N in [1,30] (Zhou §7 (i))")
_LAZY["drf"] = (f"{_AONLINE}.drf:make_drf", {}, "Dominant Resource Fairness progressive filling, non-preemptive (Zhou §7 (ii))")
_LAZY["antman"] = (f"{_AONLINE}.antman:make_antman", {},
                   "AntMan: resource-guarantee FIFO + opportunistic after 1 slot, preemptible (Zhou §7 (iii))")
_LAZY["tiresias"] = (f"{_AONLINE}.tiresias:make_tiresias", {"variant": "srsf"},
                     "Tiresias as Zhou §7 (iv) defines it: clairvoyant 2D-SRSF, preemptive")
_LAZY["tiresias-dlas"] = (f"{_AONLINE}.tiresias:make_tiresias", {"variant": "dlas"},
                          "Tiresias official semantics: discretised 2D-LAS (GPU-s queues), preemptive, starvation knob")
_LAZY["jain-greedy"] = (f"{_AONLINE}.jain_greedy:make_jain_greedy", {},
                        "Jain et al. greedy (latest window, w/resource-time order) as A-Online's batch routine")
_LAZY["aonline-ppo"] = ("ddl_gym.agents.elastic:make_elastic_agent", {},
                        "MaskablePPO on DDLClusterElastic-v0 (job x configuration menu), shipped agent trained on aonline-ps-small")
POLICY_DESCRIPTIONS.update({k: _LAZY[k][2] for k in ("aonline-ppo", "a-online", "a-online-paper", "a-online-ect", "fifo-mr", "drf",
                                                      "antman", "tiresias", "tiresias-dlas", "jain-greedy")})
