"""Silence output that native code writes straight to the process's stdout (file descriptor 1).

scipy's HiGHS (1.17 bundles HiGHS 1.8–1.12) prints ``HighsMipSolverData::transformNewIntegerFeasibleSolution
tmpSolver.run();`` from C++ with ``printf`` whenever it repairs a transformed integer solution, whatever
``disp``/``output_flag`` say (an unconditional debug line: ERGO-Code/HiGHS issue #2783). Python's
``sys.stdout`` and logging never see it, so it can only be caught at the file-descriptor level:
:func:`silenced_c_stdout` points fd 1 at ``/dev/null`` for the duration of a block, flushing C's and
Python's buffers on the way in and out so nothing printed before or after is lost or reordered.

It redirects the whole process's fd 1, so use it around short, single-threaded native calls only
(:func:`ddl_gym.baselines.a_srpt.server_selection.exact_mapping` wraps its ``milp`` call in it).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys
from collections.abc import Iterator


def _flush_c_stdio() -> None:
    try:
        ctypes.CDLL(None).fflush(None)
    except (OSError, AttributeError):  # pragma: no cover - no C library to flush (not Linux/macOS)
        pass


@contextlib.contextmanager
def silenced_c_stdout() -> Iterator[None]:
    """Discard what native code writes to file descriptor 1 inside the block (Python output too)."""
    fd = 1  # C's stdout, whatever Python's sys.stdout has been replaced with (pytest capture, notebooks)
    try:
        saved = os.dup(fd)
    except OSError:  # pragma: no cover - no fd 1 at all
        yield
        return
    with contextlib.suppress(AttributeError, ValueError, OSError):
        sys.stdout.flush()
    _flush_c_stdio()
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
        yield
    finally:
        _flush_c_stdio()
        os.dup2(saved, fd)
        os.close(saved)
        os.close(devnull)
