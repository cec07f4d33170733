"""The keys a training preset (``agents/presets/*.yaml`` or a user's YAML file) may hold, with their types and ranges.

:func:`check_preset` turns every problem into one line ``<file>: <section.key>: <problem>`` (a
:class:`~ddl_gym.sim.model.ConfigError`): a file that is not YAML, a top level that is not a
mapping, an unknown key (the nearest known key is suggested), a value of the wrong type
(``learning_rate: fast``, ``timesteps: lots``) or out of range. Messages never quote the file's
lines. The ``env`` section holds the env's keyword arguments; they are checked by building the env
(:func:`ddl_gym.envs.cluster_env.DDLClusterEnv`), which names the argument.
"""

from __future__ import annotations

import difflib
import math
import re
from pathlib import Path
from typing import Any

from ddl_gym.sim.model import ConfigError

#: Largest preset file read (a preset is a few dozen lines).
MAX_PRESET_BYTES = 1 << 20

# (kind, low, high): kind "int", "float", "bool", "str", "int_list", "str_or_none"; low/high inclusive
# except where the float range is given as an open "(low" (low_open=True as a 4th item).
_SCHEMA: dict[str, Any] = {
    "description": ("str",),
    "inherit": ("str",),
    "timesteps": ("int", 1, 10**10),
    "n_envs": ("int", 1, 256),
    "env": "env",
    "normalize": {"obs": ("bool",), "reward": ("bool",), "clip_obs": ("float", 0.0, 1e6, True)},
    "ppo": {
        "learning_rate": ("float", 0.0, 1.0, True), "n_steps": ("int", 1, 10**6), "batch_size": ("int", 1, 10**7),
        "n_epochs": ("int", 1, 10_000), "gamma": ("float", 0.0, 1.0, True), "gae_lambda": ("float", 0.0, 1.0),
        "clip_range": ("float", 0.0, 10.0, True), "ent_coef": ("float", 0.0, 10.0), "vf_coef": ("float", 0.0, 1000.0),
        "max_grad_norm": ("float", 0.0, 1e6, True), "net_arch": ("int_list", 1, 65_536),
        "activation": ("choice", ("tanh", "relu")), "target_kl": ("float", 0.0, 100.0, True),
    },
    "eval": {"freq": ("int", 1, 10**10), "episodes": ("int", 1, 100_000), "seed": ("int", 0, 2**63 - 1)},
    "checkpoint": {"freq": ("int", 1, 10**10), "keep": ("int", 1, 1_000)},
    "bc": {
        "episodes": ("int", 1, 100_000), "epochs": ("int", 0, 100_000), "batch_size": ("int", 1, 10**7),
        "learning_rate": ("float", 0.0, 1.0, True), "beyond_window": ("choice", ("window", "advance")),
        "seed": ("int", 0, 2**63 - 1), "expert": ("str_or_none",),
    },
}
#: Keys ``resolve_config`` adds from the command line (present in a run's ``config.json``).
RUN_KEYS = ("preset", "scenario", "algo", "seed")


def _type_name(value: Any) -> str:
    return "null" if value is None else {"str": "text", "bool": "true/false", "list": "list", "dict": "mapping"}.get(
        type(value).__name__, type(value).__name__)


def _unknown(path: Path, where: str, key: Any, known: list[str]) -> ConfigError:
    close = difflib.get_close_matches(str(key), known, n=1)
    nested = [f"{section}.{key}" for section, rule in _SCHEMA.items() if isinstance(rule, dict) and key in rule]
    if not where and nested:
        hint = f"; did you mean {nested[0]!r} (inside the {nested[0].split('.')[0]} section)?"
    else:
        hint = f"; did you mean {close[0]!r}?" if close else f"; known: {', '.join(known)}"
    return ConfigError(f"{path}: {where}{str(key)[:60]!r}: unknown key{hint}")


def _check_value(path: Path, key: str, value: Any, rule: tuple[Any, ...]) -> None:
    kind = rule[0]

    def bad(problem: str) -> ConfigError:
        return ConfigError(f"{path}: {key}: {problem}")

    if kind == "str":
        if not isinstance(value, str):
            raise bad(f"must be text, got {_type_name(value)}")
    elif kind == "str_or_none":
        if value is not None and not isinstance(value, str):
            raise bad(f"must be text or null, got {_type_name(value)}")
    elif kind == "bool":
        if not isinstance(value, bool):
            raise bad(f"must be true or false, got {_type_name(value)}")
    elif kind == "choice":
        if value not in rule[1]:
            raise bad(f"must be one of {', '.join(rule[1])}" + (f", got {value!r}" if isinstance(value, str) and
                                                                  len(value) <= 40 else f", got {_type_name(value)}"))
    elif kind == "int":
        if isinstance(value, bool) or not isinstance(value, (int, float)) or \
                (isinstance(value, float) and not (math.isfinite(value) and value.is_integer())):
            raise bad(f"must be a whole number in [{rule[1]:,}, {rule[2]:,}], got {_type_name(value)}"
                      + (f" {value!r}" if isinstance(value, float) else ""))
        if not rule[1] <= value <= rule[2]:
            raise bad(f"must be a whole number in [{rule[1]:,}, {rule[2]:,}], got {value!r}")
    elif kind == "float":
        low_open = len(rule) > 3 and rule[3]
        span = f"{'(' if low_open else '['}{rule[1]:g}, {rule[2]:g}]"
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise bad(f"must be a number in {span}, got {_type_name(value)}")
        if not math.isfinite(value) or value > rule[2] or value < rule[1] or (low_open and value == rule[1]):
            raise bad(f"must be a finite number in {span}, got {value!r}")
    elif kind == "int_list":
        if not isinstance(value, list) or not 1 <= len(value) <= 32:
            raise bad(f"must be a list of 1 to 32 layer sizes, got {_type_name(value)}")
        for i, item in enumerate(value):
            _check_value(path, f"{key}[{i}]", item, ("int", rule[1], rule[2]))
    else:  # pragma: no cover - a schema typo
        raise AssertionError(kind)


def check_preset(path: Path, data: Any, *, allow_run_keys: bool = False) -> dict[str, Any]:
    """Validate a parsed preset (before ``inherit`` is merged); returns it unchanged."""
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: a preset is a mapping of keys (timesteps, ppo, env, ...), got a {_type_name(data)}")
    known = list(_SCHEMA) + (list(RUN_KEYS) if allow_run_keys else [])
    for key, value in data.items():
        if key not in known:
            raise _unknown(path, "", key, known)
        if key in RUN_KEYS and key not in _SCHEMA:
            continue
        rule = _SCHEMA[key]
        if rule == "env":
            if not isinstance(value, dict):
                raise ConfigError(f"{path}: env: must be a mapping of env arguments, got {_type_name(value)}")
            for name in value:
                if not isinstance(name, str):
                    raise ConfigError(f"{path}: env: keys must be text, got {_type_name(name)}")
        elif isinstance(rule, dict):
            if not isinstance(value, dict):
                raise ConfigError(f"{path}: {key}: must be a mapping, got {_type_name(value)}")
            for sub, sub_value in value.items():
                if sub not in rule:
                    raise _unknown(path, f"{key}.", sub, list(rule))
                _check_value(path, f"{key}.{sub}", sub_value, rule[sub])
        else:
            _check_value(path, key, value, rule)
    return data


def read_preset_file(path: Path) -> dict[str, Any]:
    """Read and validate one preset file (YAML); one-line :class:`ConfigError` for every problem."""
    import yaml

    try:
        size = path.stat().st_size
        if path.is_dir():
            raise ConfigError(f"{path}: is a folder, not a preset file")
        if size > MAX_PRESET_BYTES:
            raise ConfigError(f"{path}: {size:,} bytes is too large for a preset (limit {MAX_PRESET_BYTES:,})")
        text = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read preset ({exc.strerror or exc})") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        # The parser's own words only, with anything it quotes from the file blanked out.
        problem = re.sub(r"'[^']*'|\"[^\"]*\"", "'...'", str(getattr(exc, "problem", None) or "syntax error"))[:120]
        raise ConfigError(f"{path}: not valid YAML{where} ({problem})") from None
    except RecursionError:
        raise ConfigError(f"{path}: nested too deeply to be a preset") from None
    return check_preset(path, data)


def check_env_arguments(scenario: str, env_kwargs: dict[str, Any], where: str) -> None:
    """Build the training env once with ``env_kwargs``: a bad argument fails now, named, before training."""
    import inspect

    from ddl_gym.envs.cluster_env import DDLClusterEnv

    allowed = [p for p in inspect.signature(DDLClusterEnv.__init__).parameters if p not in ("self", "scenario")]
    for key in env_kwargs:
        if key not in allowed:
            raise _unknown(Path(where), "env.", key, allowed)
    try:
        DDLClusterEnv(scenario, **env_kwargs)
    except ConfigError as exc:
        raise ConfigError(f"{where}: env: {str(exc).splitlines()[0]}") from None
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{where}: env: {str(exc).splitlines()[0]}") from None


__all__ = ["MAX_PRESET_BYTES", "RUN_KEYS", "check_env_arguments", "check_preset", "read_preset_file"]
