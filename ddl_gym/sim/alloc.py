"""What a running job holds: :class:`Allocation`, the value a policy hands to ``Simulator.start``.

A placement used to be just "these GPU ids". Three of the five papers need more:

* A-SRPT (pipeline jobs): which *stage* each GPU hosts (``stage_of``), because the per-iteration
  time depends on how stages are mapped to servers (Luo §III-B, eqs. 4–7).
* SMD and A-Online (parameter-server and elastic ring-all-reduce jobs): how many workers and
  parameter servers of which *type* sit on which server (``workers``, ``ps``), and the non-GPU
  resources they take there (CPU, memory, bandwidth, storage).

An allocation is immutable. ``use`` is the amount of every cluster resource it takes on each of
its ``servers`` (GPU column first, equal to the number of its GPU ids on that server). GPU ids keep
device identity (for plots and GPU-level bookkeeping); a typed allocation may leave them to the
engine (``gpu_ids=None``: the lowest-index free GPUs of each server, chosen at start).

``Simulator.start(job, gpu_ids)`` keeps working: a plain id list is :meth:`Allocation.rigid`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ddl_gym.sim.model import ClusterSpec, ConfigError

#: ``(server, type index, count)`` triples: ``count`` instances of a worker / PS type on a server.
TypedCounts = tuple[tuple[int, int, int], ...]


@dataclass(frozen=True, eq=False)
class Allocation:
    """Resources one job holds while it runs.

    Attributes:
        gpu_ids: global GPU indices, int64 (may be empty: e.g. CPU-only parameter servers);
            ``None`` only in a typed allocation whose GPUs the engine picks at start.
        stage_of: pipeline stage hosted by each entry of ``gpu_ids`` (``None``: not a pipeline
            mapping; a pipeline rate model then maps stages itself).
        workers, ps: typed instances per server (``()`` for rigid jobs).
        servers: servers used, ascending (``None``: derived from ``gpu_ids``).
        use: amount of every cluster resource on each of ``servers`` (rows aligned with
            ``servers``; ``None``: GPU-only, derived from ``gpu_ids``).
        duration_hint: a planner's own estimate of the run time (informational; the engine
            ignores it).
    """

    gpu_ids: np.ndarray | None
    stage_of: np.ndarray | None = None
    workers: TypedCounts = ()
    ps: TypedCounts = ()
    servers: tuple[int, ...] | None = None
    use: np.ndarray | None = None
    duration_hint: float | None = None

    # ------------------------------------------------------------------ constructors
    @classmethod
    def rigid(cls, gpu_ids: Sequence[int] | np.ndarray) -> Allocation:
        """GPUs only (today's placements): a rigid all-reduce gang."""
        return cls(gpu_ids=_as_ids(gpu_ids))

    @classmethod
    def pipeline(cls, gpu_ids: Sequence[int] | np.ndarray, stage_of: Sequence[int] | np.ndarray) -> Allocation:
        """GPUs with the pipeline stage each one hosts (A-SRPT's GPU mapping ``x^m_{i,s}``)."""
        ids = _as_ids(gpu_ids)
        stages = np.ascontiguousarray(stage_of, dtype=np.int64).ravel()
        if stages.shape != ids.shape:
            raise ConfigError(f"pipeline allocation: {ids.size} GPU ids but {stages.size} stage labels")
        if stages.size and stages.min() < 0:
            raise ConfigError("pipeline allocation: stage labels must be >= 0")
        stages.setflags(write=False)
        return cls(gpu_ids=ids, stage_of=stages)

    @classmethod
    def typed(cls, cluster: ClusterSpec, *, workers: Sequence[tuple[int, int, int]] = (),
              ps: Sequence[tuple[int, int, int]] = (), gpu_ids: Sequence[int] | np.ndarray | None = None,
              duration_hint: float | None = None) -> Allocation:
        """Workers and parameter servers of catalogue types placed on servers (SMD, A-Online).

        Args:
            cluster: supplies the type catalogues and the resource order.
            workers: ``(server, worker type index, count)`` triples.
            ps: ``(server, PS type index, count)`` triples.
            gpu_ids: the GPUs to use (must match the GPU demand per server); ``None`` lets the
                engine take the lowest-index free GPUs of each server at start.
            duration_hint: a planner's own run-time estimate (informational).

        Raises:
            ConfigError: unknown server or type, negative count.
        """
        w = _check_counts(cluster, workers, cluster.worker_types, "worker")
        p = _check_counts(cluster, ps, cluster.ps_types, "ps")
        per_server: dict[int, np.ndarray] = {}
        for triples, catalogue in ((w, cluster.worker_types), (p, cluster.ps_types)):
            for server, kind, count in triples:
                demand = np.asarray(catalogue[kind].demand, dtype=np.float64) * count
                per_server[server] = per_server.get(server, 0.0) + demand
        servers = tuple(sorted(s for s, u in per_server.items() if np.any(u > 0)))
        use = (np.array([per_server[s] for s in servers], dtype=np.float64) if servers
               else np.zeros((0, cluster.num_resources)))
        use.setflags(write=False)
        ids = None if gpu_ids is None else _as_ids(gpu_ids)
        alloc = cls(gpu_ids=ids, workers=w, ps=p, servers=servers, use=use, duration_hint=duration_hint)
        if ids is not None:
            alloc.check_gpu_column(cluster)
        return alloc

    # ------------------------------------------------------------------ queries
    def server_use(self, cluster: ClusterSpec) -> tuple[tuple[int, ...], np.ndarray]:
        """``(servers, use)``: resource amounts per server, deriving them from the GPU ids if needed."""
        if self.use is not None and self.servers is not None:
            return self.servers, self.use
        if self.gpu_ids is None:
            raise ConfigError("allocation has neither GPU ids nor resource amounts")
        gpu_server = cluster.gpu_server()[self.gpu_ids]
        servers, counts = np.unique(gpu_server, return_counts=True)
        use = np.zeros((servers.size, cluster.num_resources))
        use[:, 0] = counts
        return tuple(servers.tolist()), use

    def gpu_count(self) -> int:
        """GPUs held (from the ids, or from the GPU column of ``use``)."""
        if self.gpu_ids is not None:
            return int(self.gpu_ids.size)
        return int(round(float(self.use[:, 0].sum()))) if self.use is not None else 0

    def num_workers(self) -> int:
        return sum(c for _, _, c in self.workers)

    def num_ps(self) -> int:
        return sum(c for _, _, c in self.ps)

    def stage_counts(self, cluster: ClusterSpec, num_stages: int) -> dict[int, np.ndarray]:
        """``{server: replicas of each stage on it}`` (A-SRPT's ``x^m_{i,s}``) of a pipeline mapping."""
        if self.stage_of is None or self.gpu_ids is None:
            raise ConfigError("allocation has no pipeline stage mapping (stage_of)")
        if self.stage_of.size and self.stage_of.max() >= num_stages:
            raise ConfigError(f"allocation maps a GPU to stage {int(self.stage_of.max())} of a {num_stages}-stage job")
        gpu_server = cluster.gpu_server()[self.gpu_ids]
        out: dict[int, np.ndarray] = {}
        for server, stage in zip(gpu_server.tolist(), self.stage_of.tolist()):
            counts = out.get(server)
            if counts is None:
                counts = out[server] = np.zeros(num_stages, dtype=np.int64)
            counts[stage] += 1
        return out

    def check_gpu_column(self, cluster: ClusterSpec) -> None:
        """Raise ConfigError unless the GPU ids agree with the GPU column of ``use`` per server."""
        if self.gpu_ids is None or self.use is None or self.servers is None:
            return
        need = {s: int(round(u)) for s, u in zip(self.servers, self.use[:, 0].tolist())}
        have: dict[int, int] = {}
        for server in cluster.gpu_server()[self.gpu_ids].tolist():
            have[server] = have.get(server, 0) + 1
        if {s: c for s, c in need.items() if c} != have:
            raise ConfigError(f"allocation: GPU ids per server {have} disagree with the GPU demand per server {need}")

    def with_gpu_ids(self, gpu_ids: np.ndarray) -> Allocation:
        """The same allocation with concrete GPU ids (the engine fills them for ``gpu_ids=None``)."""
        return Allocation(gpu_ids=_as_ids(gpu_ids), stage_of=self.stage_of, workers=self.workers, ps=self.ps,
                          servers=self.servers, use=self.use, duration_hint=self.duration_hint)

    def __repr__(self) -> str:
        parts = [f"gpus={self.gpu_ids.tolist() if self.gpu_ids is not None else 'auto'}"]
        if self.stage_of is not None:
            parts.append(f"stages={self.stage_of.tolist()}")
        if self.workers:
            parts.append(f"workers={list(self.workers)}")
        if self.ps:
            parts.append(f"ps={list(self.ps)}")
        return f"Allocation({', '.join(parts)})"


def _as_ids(gpu_ids: Sequence[int] | np.ndarray) -> np.ndarray:
    # np.array copies a list in a third of ascontiguousarray's time; arrays are not copied
    ids = (np.array(gpu_ids, dtype=np.int64) if isinstance(gpu_ids, list)
           else np.ascontiguousarray(gpu_ids, dtype=np.int64)).ravel()
    ids.setflags(write=False)
    return ids


def _check_counts(cluster: ClusterSpec, triples: Sequence[tuple[int, int, int]], catalogue: Sequence, kind: str
                  ) -> tuple[tuple[int, int, int], ...]:
    out = []
    for triple in triples:
        try:
            server, type_index, count = (int(v) for v in triple)
        except (TypeError, ValueError):
            raise ConfigError(f"{kind} placement entries must be (server, type, count) triples, got {triple!r}") from None
        if not 0 <= server < cluster.num_servers:
            raise ConfigError(f"{kind} placement: server {server} does not exist ({cluster.num_servers} servers)")
        if not 0 <= type_index < len(catalogue):
            raise ConfigError(f"{kind} placement: type {type_index} is not in the cluster's {len(catalogue)} {kind} types")
        if count < 0:
            raise ConfigError(f"{kind} placement: negative count {count}")
        if count:
            out.append((server, type_index, count))
    return tuple(sorted(out))
