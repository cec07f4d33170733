"""Worker processes that work from any calling script (with or without a ``__main__`` guard).

``spawn``/``forkserver`` workers normally re-run the calling script's top level (as ``__mp_main__``)
to find its functions. The harness never sends functions of the script to its workers (only policy
*specs*), so re-running it is useless — and harmful: an unguarded ``evaluate()`` at the script's top
level would start workers from inside a worker (``BrokenProcessPool``). :func:`workers_skip_main`
hides the script while the pool starts its processes; :func:`register_in_worker` repeats, in each
worker, the policies the caller registered at run time (:func:`ddl_gym.baselines.registry.user_registrations`).
Policies whose code lives in the script itself run in the calling process (see
:func:`ddl_gym.baselines.registry.runs_in_process_only`).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator, Sequence
from typing import Any

_MISSING = object()


@contextlib.contextmanager
def workers_skip_main() -> Iterator[None]:
    """While active, processes started by ``multiprocessing`` (spawn/forkserver) do not import the
    calling script: ``__main__.__file__`` and ``__spec__`` are hidden and restored afterwards."""
    main = sys.modules.get("__main__")
    if main is None:
        yield
        return
    saved = {attr: getattr(main, attr, _MISSING) for attr in ("__file__", "__spec__")}
    try:
        if saved["__file__"] is not _MISSING:
            del main.__file__
        main.__spec__ = None
        yield
    finally:
        for attr, value in saved.items():
            if value is _MISSING:
                with contextlib.suppress(AttributeError):
                    delattr(main, attr)
            else:
                setattr(main, attr, value)


def register_in_worker(registrations: Sequence[tuple[tuple[Any, ...], dict[str, Any]]]) -> None:
    """Repeat the caller's run-time :func:`register_policy` calls in a worker process."""
    if not registrations:
        return
    from ddl_gym.policies import register_policy

    for args, kwargs in registrations:
        register_policy(*args, **kwargs)
