"""Placement rules: which free GPUs a job gets. Shared by the env's action decoder and the baselines.

Each rule is ``rule(sim, job, rng) -> np.ndarray | None`` returning ``G_j`` free global GPU indices,
or ``None`` when fewer than ``G_j`` GPUs are free. Rules never mutate the simulator.

* ``pack`` (best-fit consolidate): the fullest server that still fits the whole job; otherwise the
  fewest servers, taking the emptiest first. Minimises servers spanned (overhead, contention).
* ``first_fit`` (FF): servers in index order, free GPUs in index order.
* ``spread`` (spread over least-loaded servers): one GPU at a time from the server with the most
  free GPUs. Balances load, maximises servers spanned.
* ``least_loaded`` (LS, list scheduling): the ``G_j`` free GPUs with the least work assigned so far
  (``sim.gpu_assigned_work``, estimated GPU-seconds), ties by index.
* ``random`` (RAND): ``G_j`` free GPUs uniformly at random.
* ``contention_aware``: one server if the job fits on one (best fit); otherwise servers with the
  fewest split jobs first (smallest resulting ``p_j``, SJF-BCO eq. 6), ties by most free GPUs.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ddl_gym.sim.engine import Simulator
from ddl_gym.sim.model import ConfigError

PlacementRule = Callable[[Simulator, int, np.random.Generator], "np.ndarray | None"]


def _take_from_servers(sim: Simulator, order: np.ndarray | list[int], need: int) -> np.ndarray:
    """The lowest free GPU ids of each server in ``order`` until ``need`` are taken."""
    chosen: list[int] = []
    for s in order.tolist() if isinstance(order, np.ndarray) else order:
        ids = sim.free_gpu_list(s)
        if ids:
            take = ids[:need]
            chosen += take
            need -= len(take)
            if need == 0:
                break
    return np.array(chosen, dtype=np.int64)


#: Above this many servers, rules read the engine's servers-by-free-count groups (kept up to date at
#: every start and release) instead of scanning every server per decision.
SMALL_CLUSTER_SERVERS = 64


def _best_fit_server(sim: Simulator, need: int) -> int:
    """The server with the fewest free GPUs that still has ``need`` (lowest index on ties), else -1."""
    free = sim.free_per_server
    if free.size <= SMALL_CLUSTER_SERVERS:  # small clusters: list scans beat keeping the groups
        # The smallest free count >= need that occurs, then its first server: C-level ``in``/``index``
        # scans, one per count tried (at most a server's size), instead of a Python loop over servers.
        free_list = free.tolist()
        for count in range(need, max(free_list) + 1):
            if count in free_list:
                return free_list.index(count)
        return -1
    by_free = sim.servers_by_free()
    for count in range(need, len(by_free)):
        if by_free[count]:
            return by_free[count][0]
    return -1


def pack(sim: Simulator, job: int, rng: np.random.Generator) -> np.ndarray | None:
    need = int(sim.workload.gpus[job])
    if sim.num_free < need:
        return None
    s = _best_fit_server(sim, need)
    if s >= 0:
        return np.array(sim.free_gpu_list(s)[:need], dtype=np.int64)
    free = sim.free_per_server
    if free.size <= SMALL_CLUSTER_SERVERS:
        # Most free GPUs first, lowest index on ties: a stable sort (reverse keeps ties in index order)
        # of a short Python list, cheaper than np.lexsort at these sizes.
        free_list = free.tolist()
        return _take_from_servers(sim, sorted(range(len(free_list)), key=free_list.__getitem__, reverse=True), need)
    return _take_emptiest_first(sim, need)


def _take_emptiest_first(sim: Simulator, need: int) -> np.ndarray:
    """``need`` free GPUs from servers by most free GPUs (lowest index on ties), as a full sort would.

    Only the servers actually used are visited: the engine's servers-by-free-count groups, from the
    largest count down, ``ceil(left / count)`` servers of each (a sort of all servers cost
    O(S log S) per start, and even a scan per count O(S), which dominated at 16k servers).
    """
    by_free = sim.servers_by_free()
    chosen: list[int] = []
    left = need
    for count in range(len(by_free) - 1, 0, -1):
        for server in by_free[count][: -(-left // count)]:
            take = sim.free_gpu_list(server)[:left]
            chosen += take
            left -= len(take)
            if left == 0:
                return np.array(chosen, dtype=np.int64)
    return np.array(chosen, dtype=np.int64)


def first_fit(sim: Simulator, job: int, rng: np.random.Generator) -> np.ndarray | None:
    need = int(sim.workload.gpus[job])
    if sim.num_free < need:
        return None
    return np.flatnonzero(sim.gpu_owner < 0)[:need]


def spread(sim: Simulator, job: int, rng: np.random.Generator) -> np.ndarray | None:
    need = int(sim.workload.gpus[job])
    if sim.num_free < need:
        return None
    if sim.free_per_server.size <= SMALL_CLUSTER_SERVERS:  # small clusters: the same choice on Python lists
        free_list = sim.free_per_server.tolist()
        taken_list = [0] * len(free_list)
        for _ in range(need):
            s = free_list.index(max(free_list))  # most free GPUs left, lowest index on ties
            taken_list[s] += 1
            free_list[s] -= 1
        chosen = [gpu for s, k in enumerate(taken_list) if k for gpu in sim.free_gpu_list(s)[:k]]
        return np.array(chosen, dtype=np.int64)
    # Large clusters: the same choice in closed form. Taking one GPU at a time from the server with
    # the most left (lowest index on ties) drains the servers level by level: the round at level c
    # takes one GPU from every server with at least c free, in index order. Every server above the
    # final level L gives (free - L), and the r GPUs still missing come one each from the r
    # lowest-index servers with at least L free.
    by_free = sim.servers_by_free()
    above: list[int] = []  # servers with more free GPUs than ``level``, ascending
    left = need
    level = len(by_free) - 1
    while True:
        at_level = by_free[level]
        if left <= len(above) + len(at_level):
            break
        left -= len(above) + len(at_level)
        if at_level:
            above = sorted(above + at_level)
        level -= 1
    extra = set(sorted(above[:left] + at_level[:left])[:left])
    chosen: list[int] = []
    for server in sorted(extra.union(above)):
        ids = sim.free_gpu_list(server)
        k = (len(ids) - level if len(ids) > level else 0) + (server in extra)
        chosen += ids[:k]
    return np.array(chosen, dtype=np.int64)


def least_loaded(sim: Simulator, job: int, rng: np.random.Generator) -> np.ndarray | None:
    need = int(sim.workload.gpus[job])
    if sim.num_free < need:
        return None
    free = np.flatnonzero(sim.gpu_owner < 0)
    if need == 1:  # argmin is the first minimum: what the stable sort puts first
        return free[[np.argmin(sim.gpu_assigned_work[free])]]
    order = np.argsort(sim.gpu_assigned_work[free], kind="stable")
    return np.sort(free[order[:need]])


def random_fit(sim: Simulator, job: int, rng: np.random.Generator) -> np.ndarray | None:
    need = int(sim.workload.gpus[job])
    if sim.num_free < need:
        return None
    free = np.flatnonzero(sim.gpu_owner < 0)
    if need == 1:
        # Generator.choice(n, 1, replace=False) draws one bounded integer in [0, n) (Floyd's method,
        # one step) exactly as Generator.integers(n) does: the same GPU and the same generator state
        # (tests/baselines/classic/test_joblevel_scale_paths.py checks it), at a fraction of the call overhead.
        return free[[rng.integers(free.size)]]
    return np.sort(rng.choice(free, size=need, replace=False))


def contention_aware(sim: Simulator, job: int, rng: np.random.Generator) -> np.ndarray | None:
    need = int(sim.workload.gpus[job])
    if sim.num_free < need:
        return None
    s = _best_fit_server(sim, need)
    if s >= 0:
        return np.array(sim.free_gpu_list(s)[:need], dtype=np.int64)
    if sim.free_per_server.size <= SMALL_CLUSTER_SERVERS:
        # (fewest split jobs, most free GPUs, lowest index) over servers with a free GPU: a stable sort
        # of a short Python list, cheaper than np.lexsort at these sizes.
        free_list, split_list = sim.free_per_server.tolist(), sim.split_count_list()
        order = sorted((s for s, f in enumerate(free_list) if f > 0), key=lambda s: (split_list[s], -free_list[s]))
        return _take_from_servers(sim, order, need)
    # Servers with free GPUs by (most free, lowest index) come straight from the free-count groups; a
    # stable sort by split count puts them in the (split count, most free, index) order of the lexsort.
    by_free = sim.servers_by_free()
    candidates = [server for count in range(len(by_free) - 1, 0, -1) for server in by_free[count]]
    candidates.sort(key=sim.split_count_list().__getitem__)
    chosen: list[int] = []
    for server in candidates:
        take = sim.free_gpu_list(server)[:need - len(chosen)]
        chosen += take
        if len(chosen) == need:
            break
    return np.array(chosen, dtype=np.int64)


def fewest_servers(sim: Simulator, job: int, rng: np.random.Generator) -> np.ndarray | None:
    """Span as few servers as possible without breaking up an empty server needlessly.

    A job that fits one server goes exactly where ``pack`` puts it (best fit, lowest index on ties). A
    larger job takes whole servers, emptiest first, until the rest fits one server; that rest goes to
    the best-fitting server (fewest free GPUs that still hold it) instead of a partial slice of another
    empty server, which ``pack`` would take. In this multi-server case ties go to the server with fewer
    spread jobs (less NIC contention, as ``contention_aware``), then the lowest index. The server count
    equals ``pack``'s, the minimum.
    """
    need = int(sim.workload.gpus[job])
    if sim.num_free < need:
        return None
    s = _best_fit_server(sim, need)
    if s >= 0:
        return np.array(sim.free_gpu_list(s)[:need], dtype=np.int64)
    free = sim.free_per_server.tolist()
    split = sim.split_count_list()
    used = [False] * len(free)
    chosen: list[int] = []
    left = need
    while left > 0:
        fitting = [i for i, f in enumerate(free) if not used[i] and f >= left]
        if fitting:  # the rest fits one server: the best fit
            server = min(fitting, key=lambda i: (free[i], split[i], i))
        else:  # a whole server, the emptiest
            server = min((i for i, f in enumerate(free) if not used[i] and f > 0), key=lambda i: (-free[i], split[i], i))
        used[server] = True
        take = sim.free_gpu_list(server)[:left]
        chosen += take
        left -= len(take)
    return np.array(chosen, dtype=np.int64)


PLACEMENT_RULES: dict[str, PlacementRule] = {
    "pack": pack,
    "first_fit": first_fit,
    "spread": spread,
    "least_loaded": least_loaded,
    "random": random_fit,
    "contention_aware": contention_aware,
    "fewest_servers": fewest_servers,
}

#: Short names used in policy names (``fifo+ff``) mapped to rules.
PLACEMENT_ALIASES: dict[str, str] = {
    "ff": "first_fit", "ls": "least_loaded", "rand": "random", "pack": "pack", "bestfit": "pack",
    "spread": "spread", "ca": "contention_aware", "fs": "fewest_servers",
}


def canonical_placement_name(name: str) -> str:
    """The registry name of a rule given by name or alias, in any case (``CA`` -> ``contention_aware``).

    Raises:
        ConfigError: no rule has that name or alias.
    """
    key = PLACEMENT_ALIASES.get(name.lower(), name.lower())
    if key not in PLACEMENT_RULES:
        raise ConfigError(
            f"unknown placement rule {name!r}; choose one of {sorted(PLACEMENT_RULES)} or aliases {sorted(PLACEMENT_ALIASES)}"
        )
    return key


def get_placement_rule(name: str) -> PlacementRule:
    """Look up a rule by name or alias (``ff``, ``ls``, ``rand``, ``pack``, ``spread``, ``ca``, ``fs``)."""
    return PLACEMENT_RULES[canonical_placement_name(name)]


# Heavy-Edge rules for pipeline jobs (A-SRPT, Luo §IV-B): defined with the paper's policies, added here
# so that the envs and classic policies can name them ("heavy_edge_consolidate", "heavy_edge_fragment").
from ddl_gym.baselines.a_srpt.server_selection import HEAVY_EDGE_ALIASES, HEAVY_EDGE_RULES  # noqa: E402

#: Rules that never draw from ``rng`` (the env then need not build a fork's generator for them).
DRAWLESS_RULES: frozenset[PlacementRule] = frozenset({pack, first_fit, spread, least_loaded, contention_aware,
                                                     fewest_servers})
PLACEMENT_RULES.update(HEAVY_EDGE_RULES)
PLACEMENT_ALIASES.update(HEAVY_EDGE_ALIASES)
