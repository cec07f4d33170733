"""Debug invariant checks for every engine and every kind of policy, switched on at the engine level.

A policy that drives the simulator itself (``run_episode``: SJF-BCO, MCTS, Ada-SRSF, SMD, ESW,
A-Online, DRF, Tiresias, ...) builds its own :class:`~ddl_gym.sim.engine.Simulator` or
:class:`~ddl_gym.sim.tasklevel.TaskLevelSimulator`, out of reach of a ``debug=`` argument. So the
switch is process-wide: inside ``with invariant_checks() as session:`` every engine built turns on
its debug mode (``debug=True`` whatever its caller passed) and every invariant check any engine runs
is counted in ``session.checks``. The harness wraps each ``--debug`` episode in one session and
reports the count (``invariant_checks`` in the pair's row and in the run log), so a debug run that
checked nothing shows 0 instead of passing silently.

What each engine checks is listed in its module docstring (job-level: :mod:`ddl_gym.sim.engine`;
task-level, fast path included: :mod:`ddl_gym.sim.tasklevel`). The PS/SMD, A-Online, pipeline and
elastic worlds run on the job-level engine with their own rate models, so its checks (GPU and
resource ledgers against capacity, gangs, progress, time) cover them too.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


class CheckSession:
    """The invariant checks counted while a session is open (``checks``: how many ran)."""

    __slots__ = ("checks",)

    def __init__(self) -> None:
        self.checks = 0

    def __repr__(self) -> str:
        return f"CheckSession(checks={self.checks})"


_SESSIONS: list[CheckSession] = []


def forced() -> bool:
    """True while a session is open: engines built now run their debug invariant checks."""
    return bool(_SESSIONS)


def count(n: int = 1) -> None:
    """An engine ran ``n`` invariant checks (counted in every open session)."""
    for session in _SESSIONS:
        session.checks += n


@contextmanager
def invariant_checks(enabled: bool = True) -> Iterator[CheckSession]:
    """Open a session: engines built inside check their invariants; ``session.checks`` counts them.

    ``enabled=False`` yields a session that switches nothing on (its count stays what other open
    sessions make it, normally 0), so callers can write one ``with`` for both cases.
    """
    session = CheckSession()
    if not enabled:
        yield session
        return
    _SESSIONS.append(session)
    try:
        yield session
    finally:
        _SESSIONS.remove(session)
