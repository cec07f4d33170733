"""Heavy-Edge GPU mapping of a pipeline job's stage replicas onto given servers (Luo §IV-B, Fig. 2).

The job is a graph ``Ω = (V, E)``: one vertex per stage replica ``(s, r)``; every pair of replicas of
consecutive stages ``s−1, s`` is joined by an edge of weight ``2d^out_{s−1}/k_s`` (the per-pair
activation + gradient volume); replicas of one stage are joined by the edges of their all-reduce:
a ring (RAR) with edges of weight ``2(k_s−1)/k_s·h_s`` (for ``k_s = 2`` one edge, not a doubled
2-ring), or NCCL's double binary tree (TAR) with edges of weight ``(k_s−1)/k_s·h_s``. Mapping the job
onto servers that contribute ``g_m`` GPUs each is a balanced graph cut; Heavy-Edge is the paper's
greedy for it. Steps, as the spec (``shared/specs/asrpt-smd-aonline.md`` §A2.3) numbers them:

* HE1  servers by ``g_m`` descending (ties: the order given);
* HE2  for each server: HE3 ``node_set ← ∅``;
* HE4  case 1: as many unassigned vertices as GPUs → all of them;
* HE5  case 2: a 1-GPU server → the unassigned vertex of least total incident weight ``W(v)``;
* HE6–HE10 case 3: seed with the heaviest unassigned–unassigned edge (HE7; Fig. 2 starts from
  (S1-R1, S1-R2)), then repeatedly add the unassigned end of the heaviest edge between ``node_set``
  and an unassigned vertex (HE9); with no such edge, a uniformly random unassigned vertex (HE7/HE10);
* HE11 assign ``node_set`` to the server.

Decisions on what the text leaves open (spec A5 #8): ``W(v)`` counts the whole graph (stable);
"assigned" in HE9 is the current server's ``node_set`` (the Fig. 2 narrative grows one server at a
time); the seed is the heaviest edge; the single heaviest edge decides (``connectivity="single"``,
the text), with ``"summed"`` (total weight into ``node_set``) as a switch; the random choice uses the caller's
generator. Only the counts ``x^m_s`` matter to eq. (7).

Tie-break (deterministic; issue 32). Stage boundaries of equal activation size give edges of equal
weight (VGG19 on 4 stages × 2 replicas: the boundaries 0|1 and 1|2 both carry 51.4 MB), so HE9's
"heaviest edge" often names several vertices. Among the vertices whose heaviest edge into
``node_set`` is equally heavy, HE9 takes the one with the largest *total* weight into ``node_set``
(the vertex most tied to what the server already holds: it completes a stage's all-reduce group or
both sides of a boundary before a new stage is opened), then the lowest ``(stage, replica)`` vertex.
With ``"summed"`` the total is the key itself and ties go to the lowest vertex. The seed (HE7) goes
to the lexicographically smallest pair among equally heavy edges; HE5 to the lowest vertex among
equal ``W(v)``. Equality is exact (the weights of equal boundaries are computed by the same
expression, so they are equal as floats). Before this rule, ties went to the lowest vertex alone,
which split VGG19 4 × 2's stage 2 across servers and cost +111 % against the ILP (Table II).

TAR graph (an approximation, documented): NCCL's two trees are built as heap-ordered binary trees
over the ranks ``0..k−1`` and over the ranks shifted by one; an edge in both trees counts twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Sequence

import numpy as np

from ddl_gym.sim.model import ConfigError

if TYPE_CHECKING:  # a type only: perf_pipeline imports this module (lazily) for the mapping
    from ddl_gym.sim.perf.pipeline import PipelineConfig

CONNECTIVITY: tuple[str, ...] = ("single", "summed")
#: HE9's tie-break among equally heavy edges (module docstring): ``"connected"`` (default since issue 32:
#: most total weight into ``node_set``, then the lowest vertex) or ``"lowest"`` (the lowest vertex alone,
#: the rule before; ``DDLCluster-ASRPT-v0`` keeps it so that the v0 env's dynamics stay as they were).
TIE_BREAKS: tuple[str, ...] = ("connected", "lowest")


@dataclass(frozen=True)
class Mapping:
    """A stage mapping onto servers (in the order they were given).

    Attributes:
        counts: ``x^m_s``: one row per server (input order), one entry per stage.
        vertex_server: for each vertex ``(s, r)`` in lexicographic order, the input position of its server.
        used_random: whether a random fallback (HE7/HE10) was taken.
    """

    counts: tuple[tuple[int, ...], ...]
    vertex_server: tuple[int, ...]
    used_random: bool = False

    def stage_labels(self, sizes: Sequence[int]) -> list[list[int]]:
        """Stage hosted by each GPU a server contributes: one list per server (input order)."""
        labels: list[list[int]] = [[] for _ in sizes]
        for server, row in enumerate(self.counts):
            for s, n in enumerate(row):
                labels[server].extend([s] * n)
        return labels

    @cached_property
    def flat_labels(self) -> np.ndarray:
        """Stage of every GPU, servers in input order (:meth:`stage_labels` concatenated; read-only, computed once)."""
        labels = np.array([s for row in self.counts for s, n in enumerate(row) for _ in range(n)], dtype=np.int64)
        labels.setflags(write=False)
        return labels


class JobGraph:
    """``Ω`` of one configuration: vertex stages and the dense weight matrix (bytes)."""

    __slots__ = ("stage", "weight", "total", "rows", "totals", "stages")

    def __init__(self, config: PipelineConfig) -> None:
        stages = config.stages
        stage_of = [s for s, st in enumerate(stages) for _ in range(st.replicas)]
        first = np.cumsum([0] + [st.replicas for st in stages])
        n = len(stage_of)
        w = np.zeros((n, n))
        for s, st in enumerate(stages):
            block = slice(first[s], first[s + 1])
            k = st.replicas
            if s > 0:  # complete bipartite with the previous stage: 2 d^out_{s-1} / k_s per pair
                prev = slice(first[s - 1], first[s])
                w[prev, block] = 2.0 * stages[s - 1].act_out_bytes / k
                w[block, prev] = w[prev, block].T
            if k < 2:
                continue
            base = int(first[s])
            for a, b in _allreduce_edges(k, config.allreduce):
                weight = (2.0 if config.allreduce == "rar" else 1.0) * (k - 1) / k * st.param_bytes
                w[base + a, base + b] += weight
                w[base + b, base + a] += weight
        self.stage = np.asarray(stage_of, dtype=np.int64)
        self.weight = w
        self.total = w.sum(axis=1)  # W(v): total incident weight in the whole graph (A5 #8a)
        # The same as Python lists: the greedy below reads single entries of a graph of at most a few
        # dozen vertices, where list indexing is far cheaper than numpy's per-call overhead.
        self.rows: list[list[float]] = w.tolist()
        self.totals: list[float] = self.total.tolist()
        self.stages: list[int] = list(stage_of)


def _allreduce_edges(k: int, kind: str) -> list[tuple[int, int]]:
    if kind == "rar":
        if k == 2:
            return [(0, 1)]  # one edge, not a doubled 2-ring
        return [(r, (r + 1) % k) for r in range(k)]
    edges = []
    for shift in (0, 1):  # two heap-ordered binary trees (the second over ranks shifted by one)
        ranks = [(r + shift) % k for r in range(k)]
        for pos in range(1, k):
            edges.append((ranks[(pos - 1) // 2], ranks[pos]))
    return edges


_GRAPHS: dict[PipelineConfig, JobGraph] = {}
_MAPPINGS: dict[tuple[PipelineConfig, tuple[int, ...], str, str], Mapping] = {}
_CACHE_LIMIT = 200_000


def job_graph(config: PipelineConfig) -> JobGraph:
    """The job graph of ``config`` (cached)."""
    graph = _GRAPHS.get(config)
    if graph is None:
        graph = _GRAPHS[config] = JobGraph(config)
    return graph


def heavy_edge(config: PipelineConfig, sizes: Sequence[int], rng: np.random.Generator, *,
               connectivity: str = "single", tie_break: str = "connected") -> Mapping:
    """Map ``config``'s replicas onto servers contributing ``sizes[m]`` GPUs each (HE1–HE11).

    Args:
        config: the job's configuration.
        sizes: ``g_m`` per server (any order; ``Σ g_m`` must equal the job's GPUs, each ``>= 1``).
        rng: the policy's generator for the random fallback (HE7/HE10).
        connectivity: ``"single"`` (heaviest single edge, the text) or ``"summed"``.
        tie_break: HE9 among equally heavy edges, :data:`TIE_BREAKS`.

    Returns:
        The mapping, rows in the order of ``sizes``. Mappings that took no random choice are cached
        (the result and the generator's state are then the same with or without the cache).
    """
    if type(sizes) is tuple:  # the hot path (placements): a cached mapping needs no checks, it passed them
        cached = _MAPPINGS.get((config, sizes, connectivity, tie_break))
        if cached is not None:
            return cached
    if connectivity not in CONNECTIVITY:
        raise ConfigError(f"Heavy-Edge connectivity must be one of {CONNECTIVITY}, got {connectivity!r}")
    if tie_break not in TIE_BREAKS:
        raise ConfigError(f"Heavy-Edge tie_break must be one of {TIE_BREAKS}, got {tie_break!r}")
    sizes = tuple(int(g) for g in sizes)
    if sum(sizes) != config.gpus or min(sizes, default=0) < 1:
        raise ConfigError(f"Heavy-Edge: servers contribute {list(sizes)} GPUs, the job needs {config.gpus} "
                          "(each server at least 1)")
    key = (config, sizes, connectivity, tie_break)
    cached = _MAPPINGS.get(key)
    if cached is not None:
        return cached
    if config.num_stages == 1:  # one stage: every partition gives x^m = g_m
        vertex_server = tuple(m for m, g in enumerate(sizes) for _ in range(g))
        mapping = Mapping(tuple((g,) for g in sizes), vertex_server, False)
    else:
        mapping = _partition(job_graph(config), config.num_stages, sizes, rng, connectivity == "summed",
                             tie_break == "connected")
    if not mapping.used_random and len(_MAPPINGS) < _CACHE_LIMIT:
        _MAPPINGS[key] = mapping
    return mapping


def _partition(graph: JobGraph, num_stages: int, sizes: tuple[int, ...], rng: np.random.Generator,
               summed: bool, by_connection: bool = True) -> Mapping:
    rows = graph.rows
    n = len(rows)
    unassigned = [True] * n
    server_of = [-1] * n
    used_random = False
    left = n
    order = sorted(range(len(sizes)), key=lambda m: (-sizes[m], m))  # HE1
    for m in order:  # HE2
        g_m = sizes[m]
        free = [v for v in range(n) if unassigned[v]]
        if left == g_m:  # HE4, case 1
            chosen = free
        elif g_m == 1:  # HE5, case 2: least total incident weight (whole graph); ties: lowest vertex
            totals = graph.totals
            best_v = free[0]
            for v in free:
                if totals[v] < totals[best_v]:
                    best_v = v
            chosen = [best_v]
        else:  # HE6, case 3
            heaviest = 0.0
            seed: list[int] = []
            for i, a in enumerate(free):  # HE7: heaviest unassigned–unassigned edge, first (a, b) on ties
                row = rows[a]
                for b in free[i + 1:]:
                    if row[b] > heaviest:
                        heaviest = row[b]
                        seed = [a, b]
            if seed:
                chosen = seed
            else:
                chosen = [free[rng.integers(len(free))]]
                used_random = True
            for v in chosen:
                unassigned[v] = False
            if len(chosen) == 1:
                link = list(rows[chosen[0]])
            elif summed:
                link = [x + y for x, y in zip(rows[chosen[0]], rows[chosen[1]])]
            else:
                link = [x if x >= y else y for x, y in zip(rows[chosen[0]], rows[chosen[1]])]
            # The tie-break key of HE9: total weight into node_set (with "summed" the key itself).
            tie = (link if summed else
                   (list(rows[chosen[0]]) if len(chosen) == 1 else [x + y for x, y in zip(rows[chosen[0]], rows[chosen[1]])]))
            while len(chosen) < g_m:  # HE8
                best_v = -1
                for v in range(n):
                    if unassigned[v] and (best_v < 0 or link[v] > link[best_v]
                                          or (by_connection and link[v] == link[best_v] and tie[v] > tie[best_v])):
                        best_v = v
                if link[best_v] > 0.0:  # HE9: heaviest edge node_set – unassigned (ties: module docstring)
                    v = best_v
                else:  # HE10: no connecting edge
                    candidates = [u for u in range(n) if unassigned[u]]
                    v = candidates[rng.integers(len(candidates))]
                    used_random = True
                chosen.append(v)
                unassigned[v] = False
                row = rows[v]
                if summed:
                    link = tie = [x + y for x, y in zip(link, row)]
                else:
                    link = [x if x >= y else y for x, y in zip(link, row)]
                    tie = [x + y for x, y in zip(tie, row)]
        for v in chosen:  # HE11
            unassigned[v] = False
            server_of[v] = m
        left -= len(chosen)
    counts = [[0] * num_stages for _ in sizes]
    for v, stage in enumerate(graph.stages):
        counts[server_of[v]][stage] += 1
    return Mapping(tuple(tuple(r) for r in counts), tuple(server_of), used_random)
