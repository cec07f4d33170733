"""``scripts/build_native.py`` loaded as a module (the compiled builds' tests read its source transformation)."""

from __future__ import annotations

import importlib.util
import sys
import types
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]


def build_script() -> types.ModuleType:
    spec = importlib.util.spec_from_file_location("build_native", REPO_ROOT / "scripts" / "build_native.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def fake_native(monkeypatch: pytest.MonkeyPatch, stem: str, stamp: str, package: str = "sim",
                **attributes: object) -> types.ModuleType:
    """Install a stand-in for the compiled module ``ddl_gym.<package>._<stem>_native`` stamped ``stamp``."""
    import importlib

    parent = importlib.import_module(f"ddl_gym.{package}")
    name = f"_{stem}_native"
    fake = types.ModuleType(f"ddl_gym.{package}.{name}")
    fake.SOURCE_SHA256 = stamp  # type: ignore[attr-defined]
    for key, value in attributes.items():
        setattr(fake, key, value)
    monkeypatch.setitem(sys.modules, f"ddl_gym.{package}.{name}", fake)
    monkeypatch.setattr(parent, name, fake, raising=False)
    return fake
