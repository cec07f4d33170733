"""Compact per-job storage, so that a million-job run fits in a few hundred bytes per job.

A Python list of distinct floats costs 32 bytes per element (8 for the pointer, 24 for the float
object) and a small numpy array per job over 100 bytes. The simulator therefore keeps its per-job
scalars in :mod:`array` columns (8 bytes per double, the same IEEE values, so results are
bit-identical) and every job's GPU ids in one flat table (:class:`GpuIdTable`).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from typing import Any, overload

import numpy as np


def float_column(values: Any) -> array:
    """``values`` as an ``array('d')`` of the same float64 values (no per-element Python objects)."""
    out = array("d")
    out.frombytes(np.ascontiguousarray(values, dtype=np.float64).tobytes())
    return out


def int_column(values: Any) -> array:
    """``values`` as an ``array('q')`` of the same int64 values."""
    out = array("q")
    out.frombytes(np.ascontiguousarray(values, dtype=np.int64).tobytes())
    return out


def filled_column(typecode: str, value: float | int, n: int) -> array:
    """An array of ``n`` copies of ``value`` (typecode ``'d'``, ``'q'``, ``'i'``, ...)."""
    return array(typecode, [value]) * n


class GpuIdTable(Sequence[tuple[int, ...]]):
    """Read-only sequence of per-job GPU-id tuples stored as one flat id array plus offsets.

    ``table[j]`` is job ``j``'s GPU ids as a tuple of ints (``()`` if it never held a GPU), exactly
    what a ``list[tuple[int, ...]]`` would hold, at 4 bytes per GPU id plus 12 per job instead of
    a tuple object per job. Compares equal to any sequence with the same tuples.

    Args:
        ids: the flat GPU ids (``array('i')`` or anything ``array('i', ...)`` accepts).
        start: per job, the offset of its ids in ``ids``.
        count: per job, how many ids it has (negative = none).
    """

    __slots__ = ("_ids", "_start", "_count")

    def __init__(self, ids: Any, start: Any, count: Any) -> None:
        self._ids = ids if isinstance(ids, array) else array("i", ids)
        self._start = start if isinstance(start, array) else array("q", start)
        self._count = count if isinstance(count, array) else array("i", count)
        if len(self._start) != len(self._count):
            raise ValueError(f"GpuIdTable: {len(self._start)} offsets but {len(self._count)} counts")

    @classmethod
    def from_tuples(cls, rows: Sequence[Sequence[int]]) -> GpuIdTable:
        """A table holding ``rows`` (e.g. a list of tuples)."""
        ids, start, count = array("i"), array("q"), array("i")
        for row in rows:
            start.append(len(ids))
            count.append(len(row))
            ids.extend(int(g) for g in row)
        return cls(ids, start, count)

    def __len__(self) -> int:
        return len(self._start)

    @overload
    def __getitem__(self, index: int) -> tuple[int, ...]: ...

    @overload
    def __getitem__(self, index: slice) -> list[tuple[int, ...]]: ...

    def __getitem__(self, index: int | slice) -> tuple[int, ...] | list[tuple[int, ...]]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        count = self._count[index]  # IndexError (and negative indices) as a list would
        if count <= 0:
            return ()
        first = self._start[index]
        return tuple(self._ids[first:first + count])

    def __iter__(self) -> Iterator[tuple[int, ...]]:
        ids = self._ids
        for first, count in zip(self._start, self._count):
            yield tuple(ids[first:first + count]) if count > 0 else ()

    def tolist(self) -> list[tuple[int, ...]]:
        return list(self)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (GpuIdTable, list, tuple)):
            return len(self) == len(other) and all(a == tuple(b) for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable-sequence semantics, like the list it replaces

    def __repr__(self) -> str:
        head = ", ".join(repr(t) for t in self[:4])
        return f"GpuIdTable([{head}{', ...' if len(self) > 4 else ''}], jobs={len(self)})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (GpuIdTable, (self._ids, self._start, self._count))
