"""Which ``pip install 'ddl-gym[EXTRA]'`` provides a missing optional module (one place for every message)."""

from __future__ import annotations

#: top-level module -> the extras that install it (first = the one to suggest).
MODULE_EXTRAS: dict[str, tuple[str, ...]] = {
    "torch": ("rl",), "stable_baselines3": ("rl",), "sb3_contrib": ("rl",), "tensorboard": ("rl",),
    "yaml": ("rl",), "scipy": ("opt", "ml"), "highspy": ("opt",), "sklearn": ("ml",), "ray": ("ray",),
    "mkdocs": ("docs",), "mkdocstrings": ("docs",), "material": ("docs",),
    "pytest": ("dev",), "hypothesis": ("dev",), "mypy": ("native",),
}


def install_hint(module: str | None) -> str:
    """``"install the opt extra: pip install 'ddl-gym[opt]' (provides scipy)"`` for a missing module
    (dotted names count by their top level); a generic hint for a module no extra provides."""
    top = (module or "").split(".")[0]
    extras = MODULE_EXTRAS.get(top)
    if not extras:
        return f"install the package that provides {top!r}" if top else "install the optional dependencies"
    also = f" (or {', '.join(repr(e) for e in extras[1:])})" if len(extras) > 1 else ""
    return f"install the {extras[0]} extra{also}: pip install 'ddl-gym[{extras[0]}]' (provides {top})"
