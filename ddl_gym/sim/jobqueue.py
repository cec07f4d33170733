"""The simulator's queue of waiting jobs: a read-only ascending sequence with an O(1) head.

``Simulator.queue`` lists the queued jobs in index (= arrival) order. FIFO-like policies start the
head job, and a Python ``list`` moves every other element on ``del queue[0]``: O(queue) per start,
a large share of the cost of runs that keep 10⁵ jobs waiting (issue 13). :class:`JobQueue` keeps
the jobs in a list whose first ``head`` slots are vacated (set to ``-1``, so the whole buffer stays
sorted and binary-searchable); taking the head job only moves ``head``, and the vacated prefix is
cut off once it is half the buffer (amortised O(1)). A job deeper in the queue (SJF/SRSF, SJF-BCO's
plan order) is deleted from the buffer while the queue is short; in a long queue that delete moved
every later element, O(queue) per start and quadratic over a run (SJF-BCO offline keeps all 10⁵ jobs
queued), so there it is only marked gone (``_gone``) and the buffer is compacted once half of it is
gone, or when a read needs positions (amortised O(log n) per removal). The head slot is never a gone
job, so the head reads stay O(1).

For policies it reads like a list of ints: ``len``, truth, ``q[i]``, slices, iteration,
``in`` (binary search), ``index``, ``count``, equality with lists, ``list(q)``/``tuple(q)``,
``np.asarray(q)``. It is not a ``list``: only the simulator changes it (:meth:`append`,
:meth:`insort`, :meth:`remove`); a policy that wants to edit an order takes ``list(sim.queue)``.
As with a list, changing the queue (starting a job) while iterating over it is undefined: iterate
over a copy.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from itertools import islice
from typing import Any, Iterator, overload

import numpy as np

__all__ = ["JobQueue"]

_VACANT = -1  # below every job index: the vacated prefix keeps the buffer sorted
_MIN_TRIM = 64  # vacated slots tolerated before any trim (small queues never pay the trim)
#: Queues at least this long delete a non-head job lazily (mark it gone); shorter ones delete it at once,
#: a move of a few KB that is cheaper than the later compaction and keeps their reads plain slices.
LAZY_DELETE_MIN = 1024


class JobQueue:
    """Ascending job indices with an O(1) head removal (see the module docstring)."""

    __slots__ = ("_items", "_head", "_gone")

    def __init__(self, jobs: Sequence[int] = ()) -> None:
        items = [int(j) for j in jobs]
        if any(a >= b for a, b in zip(items, items[1:])) or (items and items[0] < 0):
            raise ValueError("JobQueue holds distinct job indices >= 0 in ascending order")
        self._items: list[int] = items
        self._head = 0
        self._gone: set[int] = set()  # removed jobs still in the buffer, all after the head slot

    def _compact(self) -> None:
        """Drop the gone jobs and the vacated prefix from the buffer (slices between the gone ones)."""
        items, head, gone = self._items, self._head, self._gone
        kept: list[int] = []
        for job in sorted(gone):
            i = bisect.bisect_left(items, job, head)
            kept += items[head:i]
            head = i + 1
        kept += items[head:]
        self._items, self._head = kept, 0
        gone.clear()

    def _queued(self) -> list[int]:
        """A copy of the queued jobs, in order (compacting first if some are marked gone)."""
        if self._gone:
            self._compact()
        return self._items[self._head:]

    # ------------------------------------------------------------------ reading (policies)
    def __len__(self) -> int:
        return len(self._items) - self._head - len(self._gone)

    def __bool__(self) -> bool:
        return len(self._items) > self._head

    @overload
    def __getitem__(self, index: int) -> int: ...
    @overload
    def __getitem__(self, index: slice) -> list[int]: ...

    def __getitem__(self, index: int | slice) -> int | list[int]:
        if self._gone:  # the queue is not empty: the head slot holds a queued job
            if index.__class__ is slice:
                start, stop, step = index.start, index.stop, index.step  # type: ignore[union-attr]
                if start is None and step is None and stop is not None and stop >= 0:
                    return self.head(stop)  # a window (q[:w]), read without compacting
            elif index == 0:
                return self._items[self._head]
            self._compact()
        head = self._head
        if index.__class__ is slice:
            start, stop, step = index.start, index.stop, index.step  # type: ignore[union-attr]
            if step is None and (start is None or start >= 0) and (stop is None or stop >= 0):
                # The common reads (q[:w], q[k:]) map straight onto the buffer.
                return self._items[head + (start or 0): None if stop is None else head + stop]
            return self._items[head:][index]
        if index >= 0:  # type: ignore[operator]
            if head + index < len(self._items):  # type: ignore[operator]
                return self._items[head + index]  # type: ignore[operator]
            raise IndexError("JobQueue index out of range")
        if -index <= len(self._items) - head:  # type: ignore[operator]
            return self._items[index]  # type: ignore[index]
        raise IndexError("JobQueue index out of range")

    def first(self) -> int:
        """The head job, or ``-1`` when the queue is empty (one call where ``q[0]`` after ``if q`` takes two)."""
        items, head = self._items, self._head
        return items[head] if head < len(items) else -1

    def head(self, count: int) -> list[int]:
        """The first ``count`` queued jobs (``q[:count]`` without the slice object)."""
        head = self._head
        if not self._gone:
            return self._items[head: head + count]
        gone, window = self._gone, []
        if count > 0:  # the window's jobs, stepping over gone ones (no compaction: the env reads this per step)
            for job in islice(self._items, head, None):
                if job not in gone:
                    window.append(job)
                    if len(window) == count:
                        break
        return window

    def __iter__(self) -> Iterator[int]:
        if self._gone:
            self._compact()
        if self._head == 0:
            return iter(self._items)
        return islice(self._items, self._head, None)

    def __reversed__(self) -> Iterator[int]:
        return reversed(self._queued())

    def __contains__(self, job: object) -> bool:
        if job.__class__ is not int and not isinstance(job, (int, np.integer)):
            return False
        items = self._items
        i = bisect.bisect_left(items, job, self._head)  # type: ignore[call-overload]
        return i < len(items) and items[i] == job and job not in self._gone

    def index(self, job: int) -> int:
        """Position of ``job`` in the queue (ValueError if it is not queued)."""
        if self._gone:
            self._compact()
        items = self._items
        i = bisect.bisect_left(items, job, self._head)
        if i < len(items) and items[i] == job:
            return i - self._head
        raise ValueError(f"job {job} is not in the queue")

    def count(self, job: int) -> int:
        return 1 if job in self else 0

    def __eq__(self, other: object) -> bool:
        if isinstance(other, JobQueue):
            return self._queued() == other._queued()
        if isinstance(other, list):
            return self._queued() == other
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable, like a list

    def __repr__(self) -> str:
        return f"JobQueue({self._queued()!r})"

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        return np.array(self._queued(), dtype=np.int64 if dtype is None else dtype)

    def __reduce__(self) -> tuple[Any, ...]:
        return (JobQueue, (self._queued(),))

    def copy(self) -> JobQueue:
        """An independent queue with the same jobs (what ``Simulator.fork`` uses)."""
        twin = object.__new__(JobQueue)
        twin._items = self._queued()
        twin._head = 0
        twin._gone = set()
        return twin

    # ------------------------------------------------------------------ changes (the simulator only)
    def append(self, job: int) -> None:
        """Add ``job``, which must be above every queued job (an arrival: the engine admits in index order)."""
        self._items.append(job)

    def insort(self, job: int) -> None:
        """Add ``job`` at its place in index order (a preempted job returning)."""
        if job in self._gone:  # still in the buffer, at its place
            self._gone.discard(job)
            return
        bisect.insort(self._items, job, self._head)

    def remove(self, job: int) -> None:
        """Take ``job`` out (ValueError if absent): O(1) at the head, else a binary search and a delete,
        or in a queue of :data:`LAZY_DELETE_MIN`+ jobs a mark (compacted once half the buffer is gone)."""
        items, head, gone = self._items, self._head, self._gone
        if head < len(items) and items[head] == job:
            items[head] = _VACANT
            head += 1
            if gone:  # keep the head slot a queued job
                while head < len(items) and items[head] in gone:
                    gone.discard(items[head])
                    items[head] = _VACANT
                    head += 1
            if head >= _MIN_TRIM and 2 * head >= len(items):
                del items[:head]
                head = 0
            self._head = head
            return
        i = bisect.bisect_left(items, job, head)
        if i < len(items) and items[i] == job and job not in gone:
            size = len(items) - head
            if size < LAZY_DELETE_MIN:
                del items[i]
                return
            gone.add(job)
            if 2 * len(gone) >= size:
                self._compact()
            return
        raise ValueError(f"job {job} is not in the queue")


Sequence.register(JobQueue)
