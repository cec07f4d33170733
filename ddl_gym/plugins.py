"""User policies: ``module:Class`` specs and the ``ddl_gym.policies`` entry-point group.

Three ways to make your own policy a name that ``ddl-gym eval --policies``, :func:`make_policy`,
:func:`ddl_gym.harness.evaluate` and the leaderboard accept (the policy itself implements one of
the protocols of :mod:`ddl_gym.protocols`):

1. **Import path**: ``mypkg.module:MyPolicy[+PLACEMENT][:key=value,...]`` — the module is imported
   (it must be importable: installed, or on ``PYTHONPATH``), ``MyPolicy`` is called with the
   options as keyword arguments (values parsed as int, float, bool or string) and
   ``placement="<short name>"`` when ``+PLACEMENT`` is given. The spec keeps its case and is the
   label of the result rows.
2. **Entry point**: a package declares ``[project.entry-points."ddl_gym.policies"]
   my-policy = "mypkg.module:MyPolicy"``; once it is installed, ``my-policy`` is a policy name
   (listed by ``ddl-gym list``).
3. **From Python**: ``register_policy("my-policy", "mypkg.module:MyPolicy")`` or
   ``register_policy("my-policy", MyPolicy)`` (a class or factory object).

Worker processes: the harness runs specs in parallel processes; they re-register what the parent
registered at run time (:func:`user_registrations`). A policy whose code lives in the running script
(``__main__``) cannot be imported by a worker: it runs in the calling process instead, with a one-line
note (:func:`in_process_only`). Module-level code of the calling script is never re-run in workers,
so ``evaluate()`` needs no ``if __name__ == "__main__":`` guard.
"""

from __future__ import annotations

import re
import sys
import warnings
from collections.abc import Container, Mapping
from dataclasses import dataclass
from typing import Any

#: The entry-point group a plugin package declares its policies in.
ENTRY_POINT_GROUP = "ddl_gym.policies"

_IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
_IMPORT_SPEC = re.compile(
    rf"(?P<module>{_IDENT}(?:\.{_IDENT})*):(?P<attr>{_IDENT}(?:\.{_IDENT})*)"
    r"(?:\+(?P<placement>[A-Za-z0-9_-]+))?(?::(?P<options>.*))?")


@dataclass(frozen=True)
class ImportSpec:
    """A parsed ``module:Attr[+placement][:options]`` spec."""

    module: str
    attr: str
    placement: str | None
    options: str

    @property
    def target(self) -> str:
        return f"{self.module}:{self.attr}"

    @property
    def head(self) -> str:
        """``module:Attr[+placement]``: the registry key (options excluded)."""
        return self.target + (f"+{self.placement}" if self.placement else "")

    @property
    def canonical(self) -> str:
        return self.head + (f":{self.options}" if self.options else "")


def parse_import_spec(spec: str, registered: Container[str] | None = None,
                      placement_names: Mapping[str, str] | None = None) -> ImportSpec | None:
    """The import spec in ``spec``, or None if it is a registry name / agent spec.

    ``registered``: names whose ``NAME:OPTIONS`` form must not be read as an import path
    (``smd:verbose`` is the policy ``smd`` with an option, not the module ``smd``).
    """
    match = _IMPORT_SPEC.fullmatch(spec.strip())
    if match is None:
        return None
    module = match["module"]
    if match["attr"].lower().endswith(".zip"):  # "dqn:agent.zip": an agent file of an unknown kind
        return None
    if registered is not None and (module.lower() in registered or module.lower() == "mcts"):
        return None
    placement = match["placement"]
    if placement:  # long placement names -> short ones (the registry passes its map; it imports this module)
        placement = (placement_names or {}).get(placement.lower(), placement.lower())
    options = ",".join(part.strip() for part in (match["options"] or "").split(",") if part.strip())
    return ImportSpec(module, match["attr"], placement, options)


def target_module(target: str) -> str:
    return target.partition(":")[0]


def in_process_only(target: str) -> bool:
    """Whether a registered target lives in the running script (``__main__``), which worker processes
    cannot import (they do not re-run the calling script)."""
    module = target_module(target)
    if module in ("__main__", "__mp_main__"):
        return True
    main = sys.modules.get("__main__")
    main_name = getattr(getattr(main, "__spec__", None), "name", None)
    return main_name is not None and module == main_name


def load_entry_points(register: Any, known: set[str]) -> list[str]:
    """Register every ``ddl_gym.policies`` entry point of the installed packages (lazily: nothing is
    imported until the policy is built). A name that clashes with a built-in policy is skipped with a
    warning naming the package. Returns the names registered."""
    from importlib.metadata import entry_points

    names = []
    try:
        eps = entry_points(group=ENTRY_POINT_GROUP)
    except Exception as exc:  # a broken installed distribution must not break the registry
        warnings.warn(f"ddl-gym: cannot read the {ENTRY_POINT_GROUP!r} entry points: {exc}", stacklevel=2)
        return names
    for ep in eps:
        name = ep.name.strip().lower()
        dist = getattr(getattr(ep, "dist", None), "name", None) or "an installed package"
        if name in known:
            warnings.warn(f"ddl-gym: entry point {name!r} of {dist} clashes with a built-in policy; ignored",
                          stacklevel=2)
            continue
        if ":" not in ep.value:
            warnings.warn(f"ddl-gym: entry point {name!r} of {dist} is {ep.value!r}, not 'module:attr'; ignored",
                          stacklevel=2)
            continue
        register(name, ep.value.strip(), description=f"plugin policy {ep.value.strip()} (from {dist})")
        names.append(name)
    return names
