"""The one registry of policy names: ``make_policy("srsf+pack")``, ``make_policy("sjf-bco")``, ... and the naming scheme.

It names the reference policies (:mod:`ddl_gym.baselines`) and the agents (:mod:`ddl_gym.agents`:
MCTS, the shipped agents, ``aonline-ppo``) by ``"module:factory"`` strings imported on first use, so
it sits above both without importing either, and neither imports the other through it.
(Formerly ``ddl_gym.policies``, which still imports with a DeprecationWarning.)

Policy specs (what ``--policies`` and :func:`make_policy` take) follow one grammar for every
family::

    SPEC      = NAME [ "+" PLACEMENT ] [ ":" OPTIONS ]     a reference policy
              | AGENT ":" PATH                             a trained agent (maskable-ppo, ppo)
    NAME      = the scheduling rule: a family name, optionally with a variant suffix joined by "-"
                (fifo, sjf, srsf, sjf-bco, ada-srsf, srsf1, mcts; later a-srpt, a-srpt-perfect,
                smd, optimus-time, a-online, drf, tiresias-dlas, ...)
    PLACEMENT = where a job's GPUs go, by short name (PLACEMENT_SHORT_NAMES):
                pack, ff, ls, rand, spread, ca  (classic rules, ddl_gym.placement)
                lwf1, lwf<k>                    (Ada-SRSF's LWF-κ)
    OPTIONS   = key=value[,key=value...]          (e.g. mcts:guide=srsf+pack,sims=16)

Rules:

* The part before ``+`` always says *which job / transfer goes next*, the part after it *where it
  runs*. A NAME alone means the paper's own placement (``sjf-bco`` = SJF order + BCO placement,
  ``ada-srsf`` = Ada-SRSF + LWF-1); ``+PLACEMENT`` swaps in another rule (the papers' baselines:
  ``sjf-bco+ff``, ``ada-srsf+rand``, ``srsf1+lwf1``).
* Placements always use the short names; the long names (``first_fit``, ``least_loaded``,
  ``random``, ``contention_aware``, ``bestfit``) are accepted everywhere as aliases, in specs and
  in the env's ``placements=`` argument.
* Everything is case-insensitive except an agent's PATH.
* Rows of results carry the canonical spec (:func:`canonical_name`), so an alias and its
  canonical name are one policy (one row, one cache entry).

Old names keep working as aliases (:data:`POLICY_ALIASES` lists the irregular ones):
``sjf-bco-ff`` -> ``sjf-bco+ff``, ``lwf1+ada-srsf`` -> ``ada-srsf``, ``ff+srsf1`` -> ``srsf1+ff``,
``fifo+contention_aware`` -> ``fifo+ca``.

A new family registers its names with :func:`register_policy` (lazy ``"module:factory"``
target, aliases, description); its options arrive as keyword arguments of the factory
(``a-srpt:predictor=rf`` calls ``factory(predictor="rf")``, values parsed as int, float, bool or
string), so it needs no parsing code of its own.

Paper policies live in their own modules and are imported lazily, so a missing optional
dependency of one never breaks the others.
"""

from __future__ import annotations

import difflib
import importlib
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ddl_gym.placement import PLACEMENT_ALIASES
from ddl_gym.sim.model import ConfigError

if TYPE_CHECKING:
    from ddl_gym.protocols import Policy

CLASSIC_ORDERS = ("fifo", "sjf", "srsf", "gpu-step")
CLASSIC_PLACEMENTS = ("ff", "ls", "rand", "pack", "spread", "ca", "fs")
#: Agent kinds: ``KIND:PATH`` specs name a saved agent, not registry options.
AGENT_KINDS = ("maskable-ppo", "ppo")

#: Long placement names (and ``bestfit``) -> the short names used in specs.
PLACEMENT_SHORT_NAMES: dict[str, str] = {PLACEMENT_ALIASES[short]: short for short in CLASSIC_PLACEMENTS
                                         if PLACEMENT_ALIASES[short] != short}
PLACEMENT_SHORT_NAMES.update({"bestfit": "pack", "best_fit": "pack"})

#: name -> ("module:factory", keyword arguments, one-line description)
_LAZY: dict[str, tuple[str, dict[str, Any], str]] = {}
#: irregular old name -> canonical name (regular placement long names are handled by rule)
POLICY_ALIASES: dict[str, str] = {}
#: Families whose NAME alone means their own placement: name -> that placement's short name.
_OWN_PLACEMENT: dict[str, str] = {}
#: canonical name -> one-line description (``ddl-gym list``); kept current by :func:`register_policy`
POLICY_DESCRIPTIONS: dict[str, str] = {}


#: The agents this registry names, as ``"module:ATTRIBUTE"`` strings resolved on use (issue 29: the
#: reference policies in ddl_gym.baselines never import the RL side; this module imports neither).
MCTS_TARGET = "ddl_gym.agents.mcts:make_mcts_policy"
ROLLOUT_TARGET = "ddl_gym.agents.rollout:make_rollout_policy"
SHIPPED_AGENTS_SOURCE = "ddl_gym.agents.shipped:SHIPPED_AGENTS"


def _import_target(target: str) -> Any:
    """The object a ``"module:ATTRIBUTE"`` string names (ImportError if the module is missing)."""
    module_name, attribute = target.split(":")
    return getattr(importlib.import_module(module_name), attribute)
#: name -> the factory object, for policies registered with a callable target
_OBJECTS: dict[str, Callable[..., Any]] = {}
#: registrations made after the built-ins (user code): name -> (args, kwargs) of register_policy
_RUNTIME: dict[str, tuple[tuple[Any, ...], dict[str, Any]]] = {}
_BUILTINS_DONE = False


def register_policy(name: str, target: str | Callable[..., Any], kwargs: dict[str, Any] | None = None,
                    description: str = "", *,
                    aliases: tuple[str, ...] = (), own_placement: str | None = None) -> None:
    """Add a policy to the registry.

    Works at any time, also at the top level of a script without an ``if __name__ == "__main__":``
    guard: the harness's worker processes re-register what was registered at run time, and a target
    that lives in the running script (``__main__``) runs in the calling process (one-line note).

    Args:
        name: canonical spec, lower case (``"a-srpt"``, ``"sjf-bco+ff"``).
        target: ``"module:factory"``, imported when the policy is first built; or the factory
            (a class or function) itself. The factory is called with the spec's options as keyword
            arguments and must return an object of one of the :mod:`ddl_gym.protocols`.
        kwargs: keyword arguments for the factory.
        description: one line for ``ddl-gym list``.
        aliases: other spellings that mean the same policy.
        own_placement: for a family name that implies a placement (``sjf-bco`` -> ``bco``), its
            short name, so ``NAME+own_placement`` is read as ``NAME``.
    """
    key = name.strip().lower()
    if not key:
        raise ConfigError("register_policy: the name must be a non-empty string")
    if callable(target):
        module = getattr(target, "__module__", None) or "__main__"
        qualname = getattr(target, "__qualname__", None) or getattr(target, "__name__", "factory")
        _OBJECTS[key] = target
        target = f"{module}:{qualname}"
    else:
        if not isinstance(target, str) or ":" not in target:
            raise ConfigError(f"register_policy({name!r}): target must be 'module:factory' or a callable, "
                              f"got {target!r}")
        _OBJECTS.pop(key, None)
    if _BUILTINS_DONE:  # registered at run time: worker processes must repeat it
        _RUNTIME[key] = ((key, target, dict(kwargs or {}), description),
                         {"aliases": tuple(aliases), "own_placement": own_placement})
    _LAZY[key] = (target, dict(kwargs or {}), description)
    POLICY_DESCRIPTIONS[key] = description
    for alias in aliases:
        POLICY_ALIASES[alias.strip().lower()] = key
    if own_placement:
        _OWN_PLACEMENT[key] = own_placement


# ---------------------------------------------------------------------------- built-in families
for _order, _desc in (("fifo", "FIFO (strict, head-of-line blocking)"), ("sjf", "shortest job first"),
                      ("srsf", "shortest remaining service first"),
                      ("gpu-step", "fewest GPU-seconds per training step first (non-clairvoyant: no iteration counts)")):
    for _rule in CLASSIC_PLACEMENTS:
        register_policy(f"{_order}+{_rule}", "ddl_gym.baselines.classic.policy:ClassicPolicy",
                        {"order": _order, "placement": _rule},
                        f"{_desc} with {PLACEMENT_ALIASES[_rule].replace('_', '-')} placement")

# EASY backfilling (Lifka 1995; Mu'alem & Feitelson 2001): an order plus one reservation for the first job
# that cannot start; later jobs start only if they do not delay it (baselines/classic/backfill.py).
for _order, _desc in (("fifo", "arrival order (the original EASY)"), ("sjf", "shortest job first"),
                      ("srsf", "shortest remaining service first")):
    for _rule in CLASSIC_PLACEMENTS:
        register_policy(f"easy-{_order}+{_rule}", "ddl_gym.baselines.classic.backfill:make_easy_backfill",
                        {"order": _order, "placement": _rule},
                        f"EASY backfilling, {_desc}, with {PLACEMENT_ALIASES[_rule].replace('_', '-')} placement")

# SJF-BCO (Yu et al. MobiHoc'22): the algorithm (its own BCO placement) and the §7.2 baselines.
register_policy("sjf-bco", "ddl_gym.baselines.sjf_bco.policy:make_sjf_bco", {},
                "SJF-BCO (Yu et al. 2022, Alg. 1-3), offline plan executed in the simulator", own_placement="bco")
for _name in ("ff", "ls", "rand"):
    register_policy(f"sjf-bco+{_name}", "ddl_gym.baselines.sjf_bco.policy:make_sjf_bco_baseline", {"kind": _name},
                    f"SJF-BCO paper's {_name.upper()} baseline (§7.2)", aliases=(f"sjf-bco-{_name}",))

# Ada-SRSF (Wang et al. 2020): communication scheduling x placement on the task-level engine.
_ADA_PLACEMENTS = ("lwf1", "rand", "ff", "ls")
_ADA_COMMS = {"ada-srsf": "ada", "srsf1": "srsf1", "srsf2": "srsf2", "srsf3": "srsf3"}
for _label, _comm in _ADA_COMMS.items():
    for _placement in _ADA_PLACEMENTS:
        _canonical = "ada-srsf" if (_label, _placement) == ("ada-srsf", "lwf1") else f"{_label}+{_placement}"
        _aliases = (f"{_placement}+{_label}",) + (("ada-srsf+lwf1",) if _canonical == "ada-srsf" else ())
        _what = "Ada-SRSF (Wang et al. 2020, Alg. 1-3)" if _label == "ada-srsf" else f"{_label.upper()} scheduling"
        register_policy(_canonical, "ddl_gym.baselines.ada_srsf.policy:make_ada_srsf_policy",
                        {"placement": _placement, "comm": _comm},
                        f"{_what} with {_placement.upper()} placement (Ada-SRSF paper, task-level engine)",
                        aliases=_aliases, own_placement="lwf1" if _canonical == "ada-srsf" else None)
# Ada-SRSF placements are LWF-κ for any κ and SRSF(n) for any n (Ada-SRSF §IV): parsed by rule.
_ADA_RULE = re.compile(r"(?P<comm>ada-srsf|srsf[1-9][0-9]*)\+(?P<placement>lwf[1-9][0-9]*|rand|ff|ls)")
_ADA_OLD_RULE = re.compile(r"(?P<placement>lwf[1-9][0-9]*|rand|ff|ls)\+(?P<comm>ada-srsf|srsf[1-9][0-9]*)")

POLICY_DESCRIPTIONS["mcts:guide=srsf+pack,sims=16"] = (
    "Spear-style MCTS over env.fork() guided by a reference policy (agents/mcts.py; keys guide, sims, depth, objective)"
)
POLICY_DESCRIPTIONS["rollout:base=easy-srsf+fs,futures=16,t=3"] = (
    "rollout over a reference on sampled futures: non-clairvoyant one-step improvement (agents/rollout.py; keys "
    "base, futures, t, clairvoyant, seed, window)"
)


def list_policies() -> list[str]:
    """Canonical names accepted by :func:`make_policy` (aliases are accepted too)."""
    return sorted(_LAZY)


def is_agent_spec(spec: str) -> bool:
    """Whether ``spec`` names a saved agent (``maskable-ppo:PATH``, ``ppo:PATH``)."""
    kind, sep, _ = spec.strip().partition(":")
    return bool(sep) and kind.strip().lower() in AGENT_KINDS


def _canonical_head(head: str) -> str:
    """Canonical ``NAME[+PLACEMENT]`` (no options)."""
    head = POLICY_ALIASES.get(head, head)
    name, plus, placement = head.partition("+")
    if not plus:
        return head
    if _ADA_OLD_RULE.fullmatch(head) and not _ADA_RULE.fullmatch(head):
        match = _ADA_OLD_RULE.fullmatch(head)
        assert match is not None
        name, placement = match["comm"], match["placement"]
    placement = PLACEMENT_SHORT_NAMES.get(placement, placement)
    if _OWN_PLACEMENT.get(name) == placement:
        return name
    joined = f"{name}+{placement}"
    return POLICY_ALIASES.get(joined, joined)


def canonical_name(spec: str) -> str:
    """The canonical form of a policy spec (see the module docstring); agents keep their path.

    >>> canonical_name("LWF1+Ada-SRSF"), canonical_name("sjf-bco-ff"), canonical_name("fifo+first_fit")
    ('ada-srsf', 'sjf-bco+ff', 'fifo+ff')
    """
    text = spec.strip()
    if is_agent_spec(text):
        kind, _, path = text.partition(":")
        return f"{kind.strip().lower()}:{path.strip()}"
    imported = _import_spec(text)
    if imported is not None:  # "mypkg.mod:MyPolicy[+placement][:options]": case kept
        return imported.canonical
    head, colon, options = text.lower().partition(":")
    head = _canonical_head(head.strip())
    if not colon:
        return head
    items = []
    for item in (part.strip() for part in options.split(",")):
        key, eq, value = item.partition("=")
        if eq and key.strip() == "guide":  # MCTS's guide is itself a policy spec
            item = f"guide={canonical_name(value)}"
        items.append(item)
    return f"{head}:{','.join(items)}"


def _parse_option_value(text: str) -> Any:
    low = text.strip().lower()
    if low in ("true", "false"):
        return low == "true"
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text.strip()


def _suggest(key: str) -> str:
    known = list(_LAZY) + list(POLICY_ALIASES)
    close = difflib.get_close_matches(key, known, n=4)
    if close:
        return "; did you mean " + ", ".join(dict.fromkeys(canonical_name(c) for c in close)) + "?"
    return "; run `ddl-gym list` for all names"


class _RegisteredNames:
    """``name in _RegisteredNames()``: a registered name or alias (no copies of the registry)."""

    def __contains__(self, name: object) -> bool:
        return name in _LAZY or name in POLICY_ALIASES


def _import_spec(text: str) -> Any:
    """The parsed ``module:Class`` spec in ``text`` (:mod:`ddl_gym.plugins`), or None."""
    from ddl_gym.plugins import parse_import_spec

    if ":" not in text or is_agent_spec(text):
        return None
    return parse_import_spec(text, _RegisteredNames(), PLACEMENT_SHORT_NAMES)


def make_policy(name: str, **overrides: Any) -> Policy:
    """Build a policy by spec (canonical name, alias, or ``module:Class`` import path). Extra keyword
    arguments override the defaults.

    An import spec ``mypkg.mod:MyPolicy[+PLACEMENT][:k=v,...]`` is registered under its canonical
    form (so it runs in worker processes and gets a cache key) and built as
    ``MyPolicy(k=v, ..., placement=PLACEMENT)``.

    Returns:
        An object of one of the protocols of :mod:`ddl_gym.protocols`.

    Raises:
        ConfigError: unknown name (the message lists close matches), malformed or unknown option,
            a module that cannot be imported.
    """
    if not isinstance(name, str) or not name.strip():
        raise ConfigError(f"policy name must be a non-empty string, got {name!r}")
    if is_agent_spec(name):
        raise ConfigError(f"{name!r} is a trained agent, not a reference policy; load it with "
                          "ddl_gym.agents.load_policy (the harness does this for NAME:PATH specs)")
    imported = _import_spec(name)
    if imported is not None:
        key = imported.head.lower()
        if _LAZY.get(key, ("",))[0] != imported.target:
            register_policy(key, imported.target, {"placement": imported.placement} if imported.placement else {},
                            f"imported policy {imported.target}")
        spec, head, options = imported.canonical, key, imported.options
    else:
        spec = canonical_name(name)
        head, _, options = spec.partition(":")
    if head == "mcts":  # "mcts:guide=srsf+pack,sims=32,depth=20,objective=jct"
        make_mcts_policy = _import_target(MCTS_TARGET)
        try:
            return make_mcts_policy(spec, **overrides) if overrides else make_mcts_policy(spec)
        except (ValueError, TypeError) as exc:
            raise ConfigError(f"policy {name!r}: {exc}") from None
    if head == "rollout":  # "rollout:base=easy-srsf+fs,futures=16,t=3"
        if overrides:
            raise ConfigError(f"policy {name!r}: a rollout takes its settings in the spec, not as keyword arguments")
        return _import_target(ROLLOUT_TARGET)(spec)
    match = _ADA_RULE.fullmatch(head)
    if head not in _LAZY and match is not None:  # lwf<k> / srsf<n> beyond the registered grid
        target, kwargs = "ddl_gym.baselines.ada_srsf.policy:make_ada_srsf_policy", {
            "placement": match["placement"], "comm": "ada" if match["comm"] == "ada-srsf" else match["comm"]}
    elif head not in _LAZY:
        if "+" in head and head.split("+", 1)[0] in CLASSIC_ORDERS:
            placement = head.split("+", 1)[1]
            close = difflib.get_close_matches(head, list(_LAZY), n=3)
            hint = f"did you mean {', '.join(close)}? " if close else ""
            raise ConfigError(f"unknown placement {placement!r} in policy {name!r}; {hint}placements: "
                              f"{', '.join(CLASSIC_PLACEMENTS)} (long names {', '.join(sorted(PLACEMENT_SHORT_NAMES))})")
        if options and "=" not in options:  # "dqn:agent.zip": looks like an agent of an unknown kind
            raise ConfigError(f"unknown policy or agent kind {head!r} in {name!r}; agents are given as "
                              f"{' or '.join(k + ':PATH' for k in AGENT_KINDS)}")
        raise ConfigError(f"unknown policy {name!r}{_suggest(head)}")
    else:
        target, kwargs, _ = _LAZY[head]
    for item in filter(None, (part.strip() for part in options.split(","))):
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise ConfigError(f"policy {name!r}: option {item!r} is not key=value")
        kwargs = {**kwargs, key.strip(): _parse_option_value(value)}
    factory = _OBJECTS.get(head)
    if factory is None:
        module_name, _, factory_name = target.partition(":")
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            from ddl_gym.extras import install_hint

            missing = getattr(exc, "name", None) or ""
            if imported is not None and missing == module_name.split(".")[0]:
                raise ConfigError(f"policy {name!r}: cannot import module {module_name!r} ({exc}); a module:Class "
                                  "spec needs the module on the import path (run from its folder or set "
                                  "PYTHONPATH)") from None
            hint = f"; {install_hint(missing)}" if missing.split(".")[0] in _extras_modules() else ""
            raise ConfigError(f"policy {name!r} is not available: {exc}{hint}") from None
        factory = module
        for part in factory_name.split("."):
            factory = getattr(factory, part, None)
            if factory is None:
                raise ConfigError(f"policy {name!r}: module {module_name!r} has no {factory_name!r}")
    try:
        return factory(**{**kwargs, **overrides})  # type: ignore[no-any-return]
    except (TypeError, ValueError, OverflowError) as exc:  # an option the factory does not take, or a bad value
        text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ConfigError(f"policy {name!r}: {text}") from None


def _extras_modules() -> set[str]:
    from ddl_gym.extras import MODULE_EXTRAS

    return set(MODULE_EXTRAS)


def user_registrations() -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    """The :func:`register_policy` calls made after the built-ins (by user code), as
    ``(args, kwargs)``: the harness repeats them in its worker processes."""
    return [(args, kw) for args, kw in _RUNTIME.values() if not runs_in_process_only(args[0])]


def registry_key(spec: str) -> str:
    """The registry entry a spec builds from: the canonical ``NAME[+PLACEMENT]`` head, or for a
    ``module:Class`` spec its lower-cased ``module:class[+placement]`` head (no options)."""
    imported = _import_spec(spec)
    return imported.head.lower() if imported is not None else canonical_name(spec).partition(":")[0]


def runs_in_process_only(spec: str) -> bool:
    """Whether the policy ``spec`` must run in the calling process: its factory is an object or lives
    in the running script (``__main__``), which worker processes cannot import."""
    from ddl_gym.plugins import in_process_only

    if is_agent_spec(spec):
        return False
    entry = _LAZY.get(registry_key(spec))
    return entry is not None and ("<locals>" in entry[0] or in_process_only(entry[0]))


# ---------------------------------------------------------------------------------------------------
# A-SRPT (Luo et al.): pipeline jobs, Heavy-Edge mapping, iteration prediction (issue 8 part 2).
# Policies read Workload.predicted_iterations (filled by the asrpt-* scenarios' predictor); the
# "-perfect" variants use the true iteration counts. They need pipeline jobs (ConfigError otherwise).
register_policy("a-srpt", "ddl_gym.baselines.a_srpt.policy:ASRPT", {},
                "A-SRPT (Luo et al., Alg. 1 reconstructed): virtual SRPT on predicted work, comm-heavy delay tau=1")
register_policy("a-srpt-perfect", "ddl_gym.baselines.a_srpt.policy:ASRPT", {"perfect": True},
                "A-SRPT with perfect iteration knowledge (A-SRPT-Perfect)")
register_policy("a-srpt-tau0", "ddl_gym.baselines.a_srpt.policy:ASRPT", {"tau": 0.0, "name": "a-srpt-tau0"},
                "A-SRPT without the comm-heavy delay (tau=0, the paper's testbed setting)")
register_policy("a-srpt-nonblocking", "ddl_gym.baselines.a_srpt.policy:ASRPT", {"delay_blocks": False, "name": "a-srpt-nonblocking"},
                "A-SRPT whose delayed comm-heavy jobs wait in a side list instead of blocking the queue")
register_policy("a-srpt-backfill", "ddl_gym.baselines.a_srpt:ASRPT", {"backfill": True},
                "A-SRPT with backfill: later jobs that fit start while the head of pending_queue waits (Alg. 1 line 25 read loosely)")
register_policy("a-srpt-perfect-backfill", "ddl_gym.baselines.a_srpt:ASRPT", {"perfect": True, "backfill": True},
                "A-SRPT-Perfect with backfill")
for _kind, _desc in (("spjf", "SPJF (MLaaS): shortest predicted duration first, strict head of line"),
                     ("spwf", "SPWF (Tiresias): shortest predicted workload (duration x GPUs) first, strict"),
                     ("wcs-duration", "WCS-Duration: work-conserving, by predicted duration"),
                     ("wcs-workload", "WCS-Workload: work-conserving, by predicted workload"),
                     ("wcs-subtime", "WCS-SubTime: work-conserving, by submission time (FIFO + backfill)")):
    register_policy(_kind, "ddl_gym.baselines.a_srpt.paper_baselines:make_baseline", {"kind": _kind},
                    f"A-SRPT paper baseline {_desc}; best-fit servers + Heavy-Edge mapping")
    register_policy(f"{_kind}-mostfree", "ddl_gym.baselines.a_srpt.paper_baselines:make_baseline",
                    {"kind": _kind, "selection": "most-free", "name": f"{_kind}-mostfree"},
                    f"{_kind} with most-free-first servers (the default before issue 32)")
    register_policy(f"{_kind}-asrptsel", "ddl_gym.baselines.a_srpt.paper_baselines:make_baseline",
                    {"kind": _kind, "selection": "a-srpt", "name": f"{_kind}-asrptsel"},
                    f"{_kind} with A-SRPT's own server selection (most free if comm-heavy, else best fit)")

# ---------------------------------------------------------------------------------------------------
# SMD (Yu, Wu, Ji, Liu, INFOCOM'21) and its §V baselines: parameter-server interval policies (issue 9).
# Every name runs one scheduling interval of SMD jobs (scenarios smd-sync / smd-async or a PS
# scenario file) with admission.
register_policy("smd", "ddl_gym.baselines.smd.policy:SMDPolicy", {},
                "SMD (Yu et al. INFOCOM'21): Alg. 1 eps-grid sum-of-ratios + Alg. 2 rounding + exact MKP admission")
register_policy("smd-fc", "ddl_gym.baselines.smd.policy:SMDPolicy", {"mkp": "frieze-clarke", "name": "smd-fc"},
                "SMD with the paper's Frieze-Clarke MKP scheme (subsets up to q=2) instead of the exact MILP")
register_policy("smd-literal", "ddl_gym.baselines.smd.policy:SMDPolicy", {"rounding": "literal", "name": "smd-literal"},
                "SMD with Alg. 2 line 3 as printed (redraw until feasible and >F draws, keep the last)")
register_policy("smd-opt", "ddl_gym.baselines.smd.interval_optimum:IntervalOptimum", {},
                "exact optimum of SMD's interval problem (integer inner optimum per job + exact MKP MILP)")
register_policy("esw", "ddl_gym.baselines.smd.esw:ESWPolicy", {},
                "ESW (Yu §V): workers:PSs = 1:1, as many as the job's limit allows; MKP admission")
register_policy("optimus", "ddl_gym.baselines.smd.optimus:OptimusPolicy", {},
                "Optimus as Yu §V defines it: greedy +1 worker / +1 PS by utility gain; MKP admission")
register_policy("optimus-time", "ddl_gym.baselines.smd.optimus:OptimusPolicy", {"gain": "time"},
                "Optimus greedy with the completion-time reduction as the gain; MKP admission")
register_policy("optimus-official", "ddl_gym.baselines.smd.optimus:OptimusOfficialPolicy", {},
                "Optimus's own scheduler: 1 PS + 1 worker each, then a global queue by time gain / dominant share")

# ---------------------------------------------------------------------------------------------------
# A-Online (Zhou et al., "Online Scheduling Algorithm for Heterogeneous Distributed ML Jobs") and the
# baselines of its §7, on the multi-resource scenarios aonline-ps / aonline-ra (ps and elastic
# ring-all-reduce jobs) (issue 10). Each raises a ConfigError naming itself and the scenario on other worlds.
_AONLINE = "ddl_gym.baselines.a_online"
register_policy("a-online", f"{_AONLINE}.policy:make_a_online", {"mode": "calendar"},
                "A-Online (Zhou et al., Alg. 1-7), calendar execution (no idle windows), §7.1(3) tie-break: best type, "
                "earliest-completing worker count among equal costs")
register_policy("a-online-listing", f"{_AONLINE}.policy:make_a_online", {"mode": "calendar", "tie_break": "listing"},
                "A-Online, calendar mode, equal-cost schedules broken by the listings' order (idle cluster: type 1, "
                "one server, fewest workers)")
register_policy("a-online-paper", f"{_AONLINE}.policy:make_a_online", {"mode": "paper"},
                "A-Online, Alg. 1 l.8 literally: round i runs in [A tau_i, A tau_i+1), A = 4")
register_policy("a-online-ect", f"{_AONLINE}.policy:make_a_online",
                {"mode": "calendar", "tie_break": "completion", "name": "a-online-ect"},
                "A-Online with the completion tie-break: since issue 32 the same as a-online (kept for old commands)")
register_policy("fifo-mr", f"{_AONLINE}.fifo_mr:make_fifo_mr", {},
                "FIFO over multi-resource servers, fixed ideal config with N in [1,30] (Zhou §7 (i))")
register_policy("drf", f"{_AONLINE}.drf:make_drf", {},
                "Dominant Resource Fairness progressive filling, non-preemptive (Zhou §7 (ii))")
register_policy("antman", f"{_AONLINE}.antman:make_antman", {},
                "AntMan: resource-guarantee FIFO + opportunistic after 1 slot, preemptible (Zhou §7 (iii))")
register_policy("tiresias", f"{_AONLINE}.tiresias:make_tiresias", {"variant": "srsf"},
                "Tiresias as Zhou §7 (iv) defines it: clairvoyant 2D-SRSF, preemptive")
register_policy("tiresias-dlas", f"{_AONLINE}.tiresias:make_tiresias", {"variant": "dlas"},
                "Tiresias official semantics: discretised 2D-LAS (GPU-s queues), preemptive, starvation knob")
register_policy("jain-greedy", f"{_AONLINE}.jain_greedy:make_jain_greedy", {},
                "Jain et al. greedy (latest window, w/resource-time order) as A-Online's batch routine")
register_policy("aonline-ppo", "ddl_gym.agents.elastic:make_elastic_agent", {},
                "MaskablePPO on DDLClusterElastic-v0 (job x configuration menu), shipped agent trained on aonline-ps-small")

# ---------------------------------------------------------------------------------------------------
# Non-clairvoyant references on the job-level engine (issue 31): attained service only, never remaining work.
for _kind, _what in (("las", "Tiresias discretised 2D-LAS (GPU-s queues 3250/7200)"),
                     ("gittins", "2D-Gittins index (Tiresias §3.2; Gittins 1989) on a size distribution")):
    register_policy(_kind, "ddl_gym.baselines.classic.attained:make_attained_policy", {"kind": _kind, "preempt": True},
                    f"{_what}, preemptive, job-level engine, non-clairvoyant")
    register_policy(f"{_kind}-np", "ddl_gym.baselines.classic.attained:make_attained_policy", {"kind": _kind, "preempt": False},
                    f"{_what}, non-preemptive, job-level engine, non-clairvoyant")

# ---------------------------------------------------------------------------------------------------
# Shipped agents (issue 14): trained agents committed under leaderboard/, by short name (agents/shipped.py).
# Read through its "module:ATTRIBUTE" string like every target here (light: no torch import), so this
# registry imports neither ddl_gym.agents nor ddl_gym.baselines; skipped where the agents are not installed.
try:
    _SHIPPED = _import_target(SHIPPED_AGENTS_SOURCE)
except ImportError:  # pragma: no cover - an installation without ddl_gym.agents
    _SHIPPED = {}

for _agent in _SHIPPED.values():
    register_policy(_agent.name, "ddl_gym.agents.shipped:load_shipped", {"name": _agent.name},
                    f"shipped agent: {_agent.description}")

# ---------------------------------------------------------------------------------------------------
# Plugins: installed packages' ``ddl_gym.policies`` entry points (ddl_gym/plugins.py).
from ddl_gym.plugins import load_entry_points as _load_entry_points  # noqa: E402

_load_entry_points(register_policy, set(_LAZY) | set(POLICY_ALIASES))
_BUILTINS_DONE = True
