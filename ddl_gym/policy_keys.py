"""What a policy's cached result depends on: its spec, its parameters and the source of the code that defines it.

The evaluation cache (:func:`ddl_gym.harness.run_cache_key`) reuses a row only if the key it was
computed under still matches. ddl-gym's own code is covered by
:func:`ddl_gym.fingerprint.code_fingerprint`; this module covers the code that is *not* ddl-gym's:

* a policy registered by a user (:func:`ddl_gym.policies.register_policy` with a
  ``"user_module:factory"`` target): the registered target and keyword arguments, and the bytes of
  every module that defines it — the factory's module and the module of every class in the built
  policy's MRO — plus the other ``.py`` files of the same top-level package (helpers it imports);
* a policy *object* passed to :func:`ddl_gym.harness.evaluate`: the same module sources for its
  class, and its parameters (the instance's attributes), rendered only if every value is plain data
  (numbers, strings, arrays, containers and dataclasses of those, nested objects of such classes).

When the source or the parameters cannot be known (a class defined interactively, a module without a
file, an attribute holding a function, a lock, a network), the policy gets no cache key: its rows
are always recomputed, and a warning says so once per policy name and process.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import sys
import sysconfig
import types
import warnings
from pathlib import Path
from typing import Any

import numpy as np

#: More files than this in a user's top-level package: hash only the defining modules.
MAX_PACKAGE_FILES = 300
_OWN_ROOT = Path(__file__).resolve().parent  # ddl_gym (the installed baselines/agents are under it in a wheel)
_CHECKOUT = _OWN_ROOT.parent
_STDLIB = tuple(str(Path(p).resolve()) for p in {sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["platstdlib"]})
_WARNED: set[str] = set()


class Unknowable(Exception):
    """The source or the parameters of a policy cannot be known (the message says what)."""


def _is_own(path: Path) -> bool:
    """Files covered by the code fingerprint (ddl_gym and, in a checkout, baselines/ and agents/)."""
    return any(path.is_relative_to(root) for root in (_OWN_ROOT, _CHECKOUT / "baselines", _CHECKOUT / "agents"))


def _module_file(module_name: str) -> Path | None:
    """The file of an imported module; None for ddl-gym's own and standard-library modules.

    Raises:
        Unknowable: the module has no file (``__main__`` of an interactive session, a module built in memory).
    """
    if module_name in sys.builtin_module_names:
        return None
    module = sys.modules.get(module_name)
    if module is None:
        raise Unknowable(f"module {module_name!r} is not imported")
    file = getattr(module, "__file__", None)
    if not file:
        raise Unknowable(f"module {module_name!r} has no source file (defined interactively?)")
    path = Path(file).resolve()
    if _is_own(path) or str(path).startswith(_STDLIB):
        return None
    if not path.is_file():
        raise Unknowable(f"source file {path} of module {module_name!r} is gone")
    return path


def _package_files(module_name: str, path: Path) -> list[Path]:
    """``path`` and the other ``.py`` files of its top-level package (a lone module: itself only)."""
    top = module_name.split(".")[0]
    module = sys.modules.get(top)
    top_file = getattr(module, "__file__", None) if module is not None else None
    if not top_file or Path(top_file).name != "__init__.py" or top == "__main__":
        return [path]
    root = Path(top_file).resolve().parent
    files = sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)
    return files if len(files) <= MAX_PACKAGE_FILES else [path]


def source_digests(module_names: list[str]) -> dict[str, str]:
    """SHA-256 of every source file defining these modules (ddl-gym's own and the standard library excluded).

    Raises:
        Unknowable: a module without a source file.
    """
    out: dict[str, str] = {}
    for name in dict.fromkeys(module_names):
        path = _module_file(name)
        if path is None:
            continue
        for file in _package_files(name, path):
            key = str(file)
            if key not in out:
                try:
                    out[key] = hashlib.sha256(file.read_bytes()).hexdigest()
                except OSError as exc:
                    raise Unknowable(f"cannot read {file} ({exc.strerror or exc})") from None
    return out


def _class_modules(obj: Any) -> list[str]:
    return [c.__module__ for c in type(obj).__mro__ if c is not object]


def plain_state(value: Any, depth: int = 0, seen: set[int] | None = None) -> Any:
    """A JSON-able rendering of plain data, or :class:`Unknowable` (parameters that cannot be keyed)."""
    from ddl_gym.fingerprint import _stable

    seen = set() if seen is None else seen
    if depth > 20:
        raise Unknowable("parameters nested more than 20 levels deep")
    if value is None or isinstance(value, (bool, int, str, bytes)):
        return value if not isinstance(value, bytes) else {"bytes": hashlib.sha256(value).hexdigest()}
    if isinstance(value, float):
        return _stable(value)
    if isinstance(value, (np.integer, np.floating, np.bool_, np.ndarray)):
        return _stable(value)
    if isinstance(value, (Path, os.PathLike)):
        return _stable(value)
    if isinstance(value, np.random.Generator):
        return {"Generator": plain_state(value.bit_generator.state, depth + 1, seen)}
    if id(value) in seen:
        raise Unknowable("parameters refer to themselves")
    seen = seen | {id(value)}
    if isinstance(value, (list, tuple)):
        return [type(value).__name__, [plain_state(v, depth + 1, seen) for v in value]]
    if isinstance(value, (set, frozenset)):
        return sorted(repr(plain_state(v, depth + 1, seen)) for v in value)
    if isinstance(value, (dict, types.MappingProxyType)):
        return {"dict": sorted((repr(plain_state(k, depth + 1, seen)), plain_state(v, depth + 1, seen))
                               for k, v in value.items())}
    if isinstance(value, (types.FunctionType, types.MethodType, types.BuiltinFunctionType, types.ModuleType, type)):
        raise Unknowable(f"a parameter is a {type(value).__name__} ({getattr(value, '__qualname__', value)!r})")
    cls = type(value)
    state: Any
    if dataclasses.is_dataclass(value):
        state = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    elif isinstance(getattr(value, "__dict__", None), dict):
        state = dict(vars(value))
    elif hasattr(cls, "__slots__"):
        state = {s: getattr(value, s) for s in getattr(cls, "__slots__", ()) if hasattr(value, s)}
    else:
        raise Unknowable(f"a parameter of type {cls.__module__}.{cls.__qualname__} cannot be keyed")
    return {"type": f"{cls.__module__}.{cls.__qualname__}", "modules": source_digests(_class_modules(value)),
            "state": plain_state(state, depth + 1, seen)}


def registered_policy_key(spec: str, instance: Any | None = None) -> dict[str, Any]:
    """The non-ddl-gym content a registry spec depends on (empty for ddl-gym's own policies).

    Raises:
        Unknowable: a registered target whose module has no source file.
    """
    from ddl_gym import policies as registry

    entry = registry._LAZY.get(registry.registry_key(spec))  # module:Class specs included
    if entry is None:
        return {}
    target, kwargs, _ = entry
    module_name = target.partition(":")[0]
    modules = [module_name] + (_class_modules(instance) if instance is not None else [])
    digests = source_digests(modules)
    if not digests and module_name.startswith("ddl_gym."):
        return {}  # ddl-gym's own policy, built from its own classes: the code fingerprint covers it
    return {"target": target, "kwargs": plain_state(kwargs), "sources": digests}


def object_policy_key(policy: Any) -> dict[str, Any]:
    """The class sources and parameters of an in-process policy object.

    Raises:
        Unknowable: its source or one of its parameters cannot be known.
    """
    cls = type(policy)
    return {"type": f"{cls.__module__}.{cls.__qualname__}", "sources": source_digests(_class_modules(policy)),
            "state": plain_state(dict(vars(policy)) if isinstance(getattr(policy, "__dict__", None), dict) else
                                 plain_state(policy))}


def warn_uncached(label: str, why: str) -> None:
    """Say once per policy name and process that its rows are never reused."""
    if label in _WARNED:
        return
    _WARNED.add(label)
    warnings.warn(f"policy {label!r}: no cache key ({why}); its results are always recomputed, never reused",
                  stacklevel=3)


__all__ = ["MAX_PACKAGE_FILES", "Unknowable", "object_policy_key", "plain_state", "registered_policy_key",
           "source_digests", "warn_uncached"]
