"""Policy specs in the harness: parsing ``--policies`` lists, loading a spec (reference policy by name,
agent as ``KIND:PATH``), the label a results row carries and how a policy is driven (native, self-driving, env).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ddl_gym.sim.model import ConfigError


def split_policy_list(text: str) -> list[str]:
    """Split ``"fifo+pack,mcts:guide=srsf+pack,sims=16,srsf+ca"`` into policy specs.

    A comma followed by ``key=`` continues the previous spec (options of ``mcts:...``); any other
    comma starts a new spec.
    """
    specs: list[str] = []
    for token in (t.strip() for t in text.split(",")):
        if not token:
            continue
        if specs and re.match(r"[A-Za-z_]+=", token):
            specs[-1] += "," + token
        else:
            specs.append(token)
    return specs


def is_agent_spec(spec: str) -> bool:
    """Whether ``spec`` names a saved agent (``"maskable-ppo:PATH"``, ``"ppo:PATH"``) rather than a registry policy."""
    from ddl_gym.policies import is_agent_spec as _is_agent

    return _is_agent(spec)


def load_policy_spec(spec: str) -> Any:
    """A policy object for a registry name (``"srsf+pack"``) or an agent spec (``"NAME:PATH"``).

    Raises:
        ConfigError: unknown name, bad agent file, or an agent spec without the agents package / RL extra.
    """
    if is_agent_spec(spec):
        try:
            from ddl_gym.agents import load_policy
        except ImportError as exc:  # the agents package or its RL dependencies are missing
            raise ConfigError(
                f"policy {spec!r} is an agent (NAME:PATH) but agents are unavailable ({exc}); "
                "install the RL extra: pip install 'ddl-gym[rl]'"
            ) from None
        try:
            return load_policy(spec)
        except ImportError as exc:
            from ddl_gym.extras import install_hint

            raise ConfigError(f"policy {spec!r} needs {getattr(exc, 'name', None) or exc}; "
                              f"{install_hint(getattr(exc, 'name', None) or 'torch')}") from None
    from ddl_gym.policies import make_policy

    return make_policy(spec)


def policy_label(policy: str | Any) -> str:
    """The name a policy's rows carry: the canonical spec (aliases folded), the agent spec, or ``.name``."""
    if isinstance(policy, str):
        from ddl_gym.policies import canonical_name

        return canonical_name(policy)
    name = getattr(policy, "name", None)
    if not name:
        raise ConfigError(f"policy object {policy!r} has no 'name' attribute")
    return str(name)


def policy_driver(policy: Any) -> str:
    """``"self"`` (run_episode), ``"native"`` (schedule) or ``"env"`` (act)."""
    if callable(getattr(policy, "run_episode", None)):
        return "self"
    if callable(getattr(policy, "schedule", None)):
        return "native"
    if callable(getattr(policy, "act", None)):
        return "env"
    raise ConfigError(f"policy {policy_label(policy)!r} has none of run_episode, schedule or act")


def _portable_spec(spec: str) -> str:
    """The spec workers load: an agent's relative path made absolute (workers may not share our cwd)."""
    if not is_agent_spec(spec):
        return spec
    name, path = spec.split(":", 1)
    return f"{name}:{Path(path).resolve()}" if Path(path).exists() else spec
