"""Heavy-Edge placement for pipeline jobs (Luo §IV-B, Alg. 1 lines 8–23) and its exact ILP (Table II).

Two steps, as the paper and Algorithm 1 use them:

1. **Server selection** — which servers a job uses and how many GPUs each contributes:

   * ``"consolidate"`` (Alg. 1 lines 8–20, communication-heavy jobs; all baselines, spec A5 #13):
     servers by free GPUs descending (ties: lower index), taken until their free GPUs cover ``g_i``;
     the last one contributes the remainder.
   * ``"fragment"`` (lines 21–23, non-communication-heavy jobs: "servers with lower availability"):
     best fit first — the single server with the fewest free GPUs that still holds the whole job —
     else servers by free GPUs ascending, accumulated like above (spec A5 #7's decision).
   * ``"literal_ascending"``: always the ascending accumulation (the literal reading of A5 #7).
   * ``"pack"``: the single server with the fewest free GPUs that holds the whole job (best fit), else
     ``"consolidate"`` (the baselines' default: the fewest servers without fragmenting empty ones).

2. **GPU mapping** — :func:`ddl_gym.sim.perf.pipeline_mapping.heavy_edge` assigns stage replicas to those servers.

:func:`place_pipeline` combines them into an :class:`~ddl_gym.sim.alloc.Allocation` (lowest free GPU
ids of each chosen server, with their stage labels). The placement rules ``heavy_edge_consolidate``
and ``heavy_edge_fragment`` (registered in :data:`ddl_gym.placement.PLACEMENT_RULES`) let the
``DDLCluster`` envs and classic policies use it; on jobs without a pipeline profile they return the
selected servers' GPU ids.

:func:`exact_mapping` solves the same mapping problem exactly as a MILP (spec A7.1; scipy's HiGHS):
one-hot ``u[s,m,v]`` for ``x^m_s = v``, the bottleneck ``A ≥ β^m_s`` for every stage present on a
server (eq. (5)'s NIC term is linear in ``x`` because ``x^m_s`` cancels; eq. (6) is tabulated per
``v``). ``sizes="exact"`` fixes each server's GPU count (Heavy-Edge's problem: the certificate of
Table II); ``sizes="at_most"`` lets the ILP also choose how many GPUs each candidate server gives.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ddl_gym.sim.alloc import Allocation
from ddl_gym.sim.engine import Simulator
from ddl_gym.sim.perf.pipeline_mapping import heavy_edge
from ddl_gym.sim.model import ARCH_PIPELINE, ConfigError
from ddl_gym.sim.perf.pipeline import EQ6_READINGS, PipelineConfig, iteration_time

SERVER_SELECTIONS: tuple[str, ...] = ("consolidate", "fragment", "literal_ascending", "pack")


# ============================================================================ server selection
def select_servers(free: Sequence[int] | np.ndarray, need: int, mode: str) -> list[tuple[int, int]] | None:
    """``[(server, GPUs it contributes), ...]`` for a job of ``need`` GPUs, or ``None`` if they are not free.

    Args:
        free: free GPUs per server.
        need: ``g_i``.
        mode: ``"consolidate"``, ``"fragment"``, ``"literal_ascending"`` or ``"pack"`` (module docstring).
    """
    free_list = [int(n) for n in np.asarray(free, dtype=np.int64).tolist()]
    if mode not in SERVER_SELECTIONS:
        raise ConfigError(f"server selection must be one of {SERVER_SELECTIONS}, got {mode!r}")
    by_free: list[list[int]] = [[] for _ in range(max(free_list, default=0) + 1)]
    for server, n in enumerate(free_list):
        if n > 0:
            by_free[n].append(server)
    return select_from_groups(by_free, sum(n for n in free_list if n > 0), need, mode)


def select_from_groups(by_free: Sequence[Sequence[int]], num_free: int, need: int,
                       mode: str) -> list[tuple[int, int]] | None:
    """:func:`select_servers` on servers grouped by free GPUs (entry ``c``: the servers with ``c`` free, ascending).

    The engine keeps these groups up to date (:meth:`~ddl_gym.sim.engine.Simulator.servers_by_free`),
    so a placement walks the few non-empty groups instead of sorting every server: "free GPUs
    descending, ties lower index" is the groups from the top, each in index order; "ascending" is
    the groups from 1 up. Entry 0 (full servers) is never used.
    """
    if num_free < need or need < 1:
        return None
    top = len(by_free) - 1
    if mode == "pack" or mode == "fragment":
        for c in range(need, top + 1):  # best fit: fewest free GPUs that still hold the job, lowest index
            if by_free[c]:
                return [(by_free[c][0], need)]
        mode = "consolidate" if mode == "pack" else "literal_ascending"
    if mode == "consolidate":
        levels = range(top, 0, -1)
    elif mode == "literal_ascending":
        levels = range(1, top + 1)
    else:
        raise ConfigError(f"server selection must be one of {SERVER_SELECTIONS}, got {mode!r}")
    chosen: list[tuple[int, int]] = []
    left = need
    for c in levels:
        for s in by_free[c]:
            if c >= left:
                chosen.append((s, left))
                return chosen
            chosen.append((s, c))
            left -= c
    return chosen


# ============================================================================ placement
def place_pipeline(sim: Simulator, job: int, rng: np.random.Generator, *, selection: str = "consolidate",
                   connectivity: str = "single") -> Allocation | np.ndarray | None:
    """Select servers, map the job's stages with Heavy-Edge, and return the allocation (``None`` if it does not fit).

    A job without a pipeline profile gets the selected servers' lowest free GPU ids.
    """
    return place_pipeline_traced(sim, job, rng, selection=selection, connectivity=connectivity)[0]


def place_pipeline_traced(sim: Simulator, job: int, rng: np.random.Generator, *, selection: str = "consolidate",
                          connectivity: str = "single") -> tuple[Allocation | np.ndarray | None, bool]:
    """:func:`place_pipeline` and whether Heavy-Edge drew from ``rng`` (HE7/HE10's random fallback).

    A placement that drew nothing is a function of the free GPUs alone, so a caller may reuse it for
    as long as no GPU was taken or given back (A-SRPT reassessing a delayed job).
    """
    need = int(sim.workload.gpus[job])
    num_free = sim.num_free
    if num_free < need:
        return None, False
    chosen = select_from_groups(sim.servers_by_free(), num_free, need, selection)
    if chosen is None:
        return None, False
    ids: list[int] = []
    for s, n in chosen:
        ids += sim.free_gpu_list(s)[:n]
    workload = sim.workload
    config = workload.job_profile(job) if workload.arch[job] == ARCH_PIPELINE else None
    if not isinstance(config, PipelineConfig):
        return np.array(ids, dtype=np.int64), False
    gpu_ids = np.array(ids, dtype=np.int64)
    gpu_ids.setflags(write=False)
    # Allocation.pipeline without its checks: one label per id, each a stage of the job, by construction
    if need == 1:
        return Allocation(gpu_ids=gpu_ids, stage_of=_STAGE_ZERO), False
    # The simulator's pipeline model says which HE9 tie-break its world uses (the v0 env keeps the old one).
    tie_break = getattr(getattr(sim, "bound", None), "tie_break", "connected")
    mapping = heavy_edge(config, tuple(n for _, n in chosen), rng, connectivity=connectivity, tie_break=tie_break)
    return Allocation(gpu_ids=gpu_ids, stage_of=mapping.flat_labels), mapping.used_random


_STAGE_ZERO = np.zeros(1, dtype=np.int64)  # a one-GPU job's single replica hosts stage 0
_STAGE_ZERO.setflags(write=False)


def heavy_edge_consolidate(sim: Simulator, job: int, rng: np.random.Generator) -> Allocation | np.ndarray | None:
    """Placement rule: most-free servers first, then Heavy-Edge (Alg. 1 lines 8–20)."""
    return place_pipeline(sim, job, rng, selection="consolidate")


def heavy_edge_fragment(sim: Simulator, job: int, rng: np.random.Generator) -> Allocation | np.ndarray | None:
    """Placement rule: best fit, else least-free servers first, then Heavy-Edge (Alg. 1 lines 21–23)."""
    return place_pipeline(sim, job, rng, selection="fragment")


#: Rules this module adds to :data:`ddl_gym.placement.PLACEMENT_RULES` (name -> rule) and their aliases.
HEAVY_EDGE_RULES = {"heavy_edge_consolidate": heavy_edge_consolidate, "heavy_edge_fragment": heavy_edge_fragment}
HEAVY_EDGE_ALIASES = {"he": "heavy_edge_consolidate", "he-c": "heavy_edge_consolidate",
                      "he-f": "heavy_edge_fragment"}


# ============================================================================ exact mapping (spec A7.1)
@dataclass(frozen=True)
class ExactMapping:
    """Optimal mapping found by the MILP.

    Attributes:
        alpha: optimal ``α_i`` (seconds), re-evaluated with eq. (7) on ``counts``.
        counts: ``x^m_s`` per candidate server (rows in input order; unused servers are zero rows).
        seconds: solver wall time.
        status: scipy's status message.
    """

    alpha: float
    counts: tuple[tuple[int, ...], ...]
    seconds: float
    status: str


def exact_mapping(config: PipelineConfig, capacities: Sequence[int], gpus_per_server: Sequence[int] | int,
                  inter_bandwidth: float, intra_bandwidth: float, *, eq6: str = "reconstructed",
                  sizes: str = "exact", time_limit_s: float = 600.0) -> ExactMapping:
    """Minimise ``α_i`` (eq. (7)) over all mappings of ``config`` onto servers (spec A7.1, scipy HiGHS).

    Args:
        config: the job's configuration.
        capacities: GPUs each candidate server contributes (``sizes="exact"``) or may contribute (``"at_most"``).
        gpus_per_server: ``g`` of each candidate server (its NIC share is ``x/g``), or one value.
        inter_bandwidth, intra_bandwidth: bytes/s.
        eq6: reading of eq. (6).
        sizes: ``"exact"`` (Heavy-Edge's problem) or ``"at_most"``.
        time_limit_s: solver limit.

    Raises:
        ConfigError: infeasible input or a solver failure.
    """
    from scipy.optimize import Bounds, LinearConstraint, milp
    from scipy.sparse import lil_matrix

    if eq6 not in EQ6_READINGS:
        raise ConfigError(f"eq6 must be one of {EQ6_READINGS}, got {eq6!r}")
    if sizes not in ("exact", "at_most"):
        raise ConfigError(f"sizes must be 'exact' or 'at_most', got {sizes!r}")
    caps = [int(c) for c in capacities]
    M = len(caps)
    g_list = [int(gpus_per_server)] * M if isinstance(gpus_per_server, (int, np.integer)) else [int(g) for g in gpus_per_server]
    total = sum(caps)
    if (sizes == "exact" and total != config.gpus) or total < config.gpus:
        raise ConfigError(f"exact mapping: servers offer {caps} GPUs, the job needs {config.gpus}")
    st = config.stages
    S = len(st)
    k = [s.replicas for s in st]
    ms = 1e3  # work in milliseconds (better conditioned)
    index: dict[tuple[int, int, int], int] = {}
    for s in range(S):
        for m in range(M):
            for v in range(min(k[s], caps[m]) + 1):
                index[(s, m, v)] = len(index)
    a_col = len(index)
    n_var = a_col + 1

    def ar_time(s: int, v: int, g: int) -> float:
        if k[s] == 1 or v == 0:
            return 0.0
        volume = 2.0 * (k[s] - 1) * st[s].param_bytes / k[s]
        if v == k[s]:
            return volume / intra_bandwidth
        return volume * g / ((v if eq6 == "reconstructed" else 1) * inter_bandwidth)

    din2 = [0.0] + [2.0 * s.act_in_bytes for s in st[1:]]
    dout2 = [2.0 * s.act_out_bytes for s in st[:-1]] + [0.0]
    rows: list[tuple[dict[int, float], float, float]] = []  # (coefficients, lower, upper)
    for s in range(S):
        for m in range(M):
            rows.append(({index[(s, m, v)]: 1.0 for v in range(min(k[s], caps[m]) + 1)}, 1.0, 1.0))  # one-hot
        rows.append(({index[(s, m, v)]: float(v) for m in range(M) for v in range(1, min(k[s], caps[m]) + 1)},
                     float(k[s]), float(k[s])))  # eq. (2)
    for m in range(M):
        coef = {index[(s, m, v)]: float(v) for s in range(S) for v in range(1, min(k[s], caps[m]) + 1)}
        rows.append((coef, float(caps[m]) if sizes == "exact" else -np.inf, float(caps[m])))
    for s in range(S):
        for m in range(M):
            g = g_list[m]
            inter = g / inter_bandwidth
            intra = 1.0 / intra_bandwidth
            big_m = (din2[s] + dout2[s]) * (inter + intra) * ms + 1.0
            const = (din2[s] + dout2[s]) * inter * ms  # the NIC term with no neighbour on m
            coef: dict[int, float] = {a_col: 1.0}
            for v in range(1, min(k[s], caps[m]) + 1):
                coef[index[(s, m, v)]] = -(st[s].compute_s + ar_time(s, v, g)) * ms - big_m
            for nb, d2 in ((s - 1, din2[s]), (s + 1, dout2[s])):
                if 0 <= nb < S and d2 > 0:
                    per_x = d2 / k[nb] * (intra - inter) * ms  # x^m_nb moves bytes from the NIC to NVLink
                    for v in range(1, min(k[nb], caps[m]) + 1):
                        coef[index[(nb, m, v)]] = coef.get(index[(nb, m, v)], 0.0) - per_x * v
            rows.append((coef, const - big_m, np.inf))
    A = lil_matrix((len(rows), n_var))
    lower = np.empty(len(rows))
    upper = np.empty(len(rows))
    for r, (coef, lo, hi) in enumerate(rows):
        for c, value in coef.items():
            A[r, c] = value
        lower[r], upper[r] = lo, hi
    objective = np.zeros(n_var)
    objective[a_col] = 1.0
    integrality = np.ones(n_var)
    integrality[a_col] = 0
    ub = np.ones(n_var)
    ub[a_col] = np.inf
    from ddl_gym.cstdout import silenced_c_stdout

    t0 = time.perf_counter()
    with silenced_c_stdout():  # HiGHS printf()s a debug line to fd 1 whatever disp says (ddl_gym.cstdout)
        res = milp(objective, constraints=LinearConstraint(A.tocsr(), lower, upper), integrality=integrality,
                   bounds=Bounds(np.zeros(n_var), ub), options={"time_limit": time_limit_s, "disp": False})
    seconds = time.perf_counter() - t0
    if res.x is None:
        raise ConfigError(f"exact mapping: solver failed ({res.message})")
    counts = np.zeros((M, S), dtype=np.int64)
    for (s, m, v), c in index.items():
        if v and res.x[c] > 0.5:
            counts[m, s] = v
    used = [m for m in range(M) if counts[m].any()]
    alpha = iteration_time(config, counts[used], [g_list[m] for m in used], inter_bandwidth, intra_bandwidth, eq6)
    return ExactMapping(alpha, tuple(tuple(r) for r in counts.tolist()), seconds, str(res.message))


def brute_force_mapping(config: PipelineConfig, sizes: Sequence[int], gpus_per_server: int, inter_bandwidth: float,
                        intra_bandwidth: float, eq6: str = "reconstructed") -> float:
    """Smallest ``α_i`` over every count matrix with row sums ``sizes`` (tiny instances; a test oracle)."""
    k = list(config.replicas)
    best = np.inf

    def rows_for(total: int, left: list[int]) -> list[list[int]]:
        out: list[list[int]] = []

        def rec(s: int, remaining: int, row: list[int]) -> None:
            if s == len(left):
                if remaining == 0:
                    out.append(row.copy())
                return
            for v in range(min(left[s], remaining) + 1):
                row.append(v)
                rec(s + 1, remaining - v, row)
                row.pop()

        rec(0, total, [])
        return out

    def search(m: int, left: list[int], chosen: list[list[int]]) -> None:
        nonlocal best
        if m == len(sizes):
            if not any(left):
                alpha = iteration_time(config, chosen, gpus_per_server, inter_bandwidth, intra_bandwidth, eq6)
                best = min(best, alpha)
            return
        for row in rows_for(int(sizes[m]), left):
            search(m + 1, [a - b for a, b in zip(left, row)], chosen + [row])

    search(0, k, [])
    return float(best)
