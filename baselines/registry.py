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


# ---------------------------------------------------------------------------------------------------
# A-SRPT (Luo et al.): pipeline jobs, Heavy-Edge mapping, iteration prediction (issue 8 part 2).
# Policies read Workload.predicted_iterations (filled by the asrpt-* scenarios' predictor); the
# "-perfect" variants use the true iteration counts. They need pipeline jobs (ConfigError otherwise).
_ASRPT: dict[str, tuple[str, dict[str, Any], str]] = {
    "a-srpt": ("ddl_gym.baselines.a_srpt:ASRPT", {},
               "A-SRPT (Luo et al., Alg. 1 reconstructed): virtual SRPT on predicted work, comm-heavy delay tau=1"),
    "a-srpt-perfect": ("ddl_gym.baselines.a_srpt:ASRPT", {"perfect": True},
                       "A-SRPT with perfect iteration knowledge (A-SRPT-Perfect)"),
    "a-srpt-tau0": ("ddl_gym.baselines.a_srpt:ASRPT", {"tau": 0.0, "name": "a-srpt-tau0"},
                    "A-SRPT without the comm-heavy delay (tau=0, the paper's testbed setting)"),
    "a-srpt-nonblocking": ("ddl_gym.baselines.a_srpt:ASRPT", {"delay_blocks": False, "name": "a-srpt-nonblocking"},
                           "A-SRPT whose delayed comm-heavy jobs wait in a side list instead of blocking the queue"),
}
for _kind, _desc in (("spjf", "SPJF (MLaaS): shortest predicted duration first, strict head of line"),
                     ("spwf", "SPWF (Tiresias): shortest predicted workload (duration x GPUs) first, strict"),
                     ("wcs-duration", "WCS-Duration: work-conserving, by predicted duration"),
                     ("wcs-workload", "WCS-Workload: work-conserving, by predicted workload"),
                     ("wcs-subtime", "WCS-SubTime: work-conserving, by submission time (FIFO + backfill)")):
    _ASRPT[_kind] = ("ddl_gym.baselines.a_srpt_baselines:make_baseline", {"kind": _kind},
                     f"A-SRPT paper baseline {_desc}; Heavy-Edge mapping")
_LAZY.update(_ASRPT)
POLICY_DESCRIPTIONS.update({name: desc for name, (_, _, desc) in _ASRPT.items()})
