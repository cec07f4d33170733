"""Checks for the sizes, counts and numbers a user can type: one-line :class:`ConfigError` naming the option.

Every integer a user gives (a policy option, an env constructor argument, a scenario-file key) has a
range that keeps the run finite in time and memory, and every float that enters the simulator or
the reward must be finite. These helpers give the same message everywhere:
``<what>: must be an integer in [low, high], got <value>``.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

from ddl_gym.sim.model import ConfigError


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def check_int(value: Any, low: int, high: int, what: str) -> int:
    """``value`` as an int in ``[low, high]`` (bools and fractional numbers refused)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ConfigError(f"{what}: must be an integer in [{low:,}, {high:,}], got {_shown(value)}")
    if isinstance(value, numbers.Integral):
        number = int(value)
    else:
        as_float = float(value)
        if not math.isfinite(as_float) or as_float != int(as_float):
            raise ConfigError(f"{what}: must be an integer in [{low:,}, {high:,}], got {_shown(value)}")
        number = int(as_float)
    if not low <= number <= high:
        raise ConfigError(f"{what}: must be an integer in [{low:,}, {high:,}], got {number:,}")
    return number


def check_float(value: Any, low: float, high: float, what: str, *, low_open: bool = False,
                high_open: bool = False) -> float:
    """``value`` as a finite float in the interval (bounds open where asked)."""
    left, right = "(" if low_open else "[", ")" if high_open else "]"
    span = f"{left}{low:g}, {high:g}{right}"
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ConfigError(f"{what}: must be a finite number in {span}, got {_shown(value)}")
    number = float(value)
    if not math.isfinite(number) or number < low or number > high or (low_open and number == low) or \
            (high_open and number == high):
        raise ConfigError(f"{what}: must be a finite number in {span}, got {_shown(value)}")
    return number


__all__ = ["check_float", "check_int"]
