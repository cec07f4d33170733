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


# ==== SMD (Yu, Wu, Ji, Liu, INFOCOM'21) and its §V baselines: parameter-server interval policies (issue 9).
# One block, kept last on purpose (the naming scheme above is being redesigned): every name runs one
# scheduling interval of SMD jobs (scenarios smd-sync / smd-async or a PS scenario file) with admission.
_SMD_POLICIES: dict[str, tuple[str, dict[str, Any], str]] = {
    "smd": ("ddl_gym.baselines.smd:SMDPolicy", {},
            "SMD (Yu et al. INFOCOM'21): Alg. 1 eps-grid sum-of-ratios + Alg. 2 rounding + exact MKP admission"),
    "smd-fc": ("ddl_gym.baselines.smd:SMDPolicy", {"mkp": "frieze-clarke", "name": "smd-fc"},
               "SMD with the paper's Frieze-Clarke MKP scheme (subsets up to q=2) instead of the exact MILP"),
    "smd-literal": ("ddl_gym.baselines.smd:SMDPolicy", {"rounding": "literal", "name": "smd-literal"},
                    "SMD with Alg. 2 line 3 as printed (redraw until feasible and >F draws, keep the last)"),
    "smd-opt": ("ddl_gym.baselines.interval_opt:IntervalOptimum", {},
                "exact optimum of SMD's interval problem (integer inner optimum per job + exact MKP MILP)"),
    "esw": ("ddl_gym.baselines.esw:ESWPolicy", {}, "ESW (Yu §V): workers:PSs = 1:1, as many as the job's limit allows; MKP admission"),
    "optimus": ("ddl_gym.baselines.optimus:OptimusPolicy", {},
                "Optimus as Yu §V defines it: greedy +1 worker / +1 PS by utility gain; MKP admission"),
    "optimus-time": ("ddl_gym.baselines.optimus:OptimusPolicy", {"gain": "time"},
                     "Optimus greedy with the completion-time reduction as the gain; MKP admission"),
    "optimus-official": ("ddl_gym.baselines.optimus:OptimusOfficialPolicy", {},
                         "Optimus's own scheduler: 1 PS + 1 worker each, then a global queue by time gain / dominant share"),
}
_LAZY.update(_SMD_POLICIES)
POLICY_DESCRIPTIONS.update({name: desc for name, (_, _, desc) in _SMD_POLICIES.items()})
