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


def _take_from_servers(sim: Simulator, order: np.ndarray, need: int) -> np.ndarray:
    """The lowest free GPU ids of each server in ``order`` until ``need`` are taken."""
    chosen: list[int] = []
    for s in order.tolist():
        ids = sim.free_gpu_list(s)
        if ids:
            take = ids[:need]
            chosen += take
            need -= len(take)
            if need == 0:
                break
    return np.array(chosen, dtype=np.int64)


def _best_fit_server(sim: Simulator, need: int) -> int:
    free = sim.free_per_server
    if free.size <= 64:  # small clusters: a Python scan beats three numpy calls
        best, best_free = -1, 1 << 30
        for server, n_free in enumerate(free.tolist()):
            if need <= n_free < best_free:
                best, best_free = server, n_free
        return best
    fits = np.flatnonzero(free >= need)
    if fits.size == 0:
        return -1
    return int(fits[np.argmin(free[fits])])  # argmin: lowest index among ties


def pack(sim: Simulator, job: int, rng: np.random.Generator) -> np.ndarray | None:
    need = int(sim.workload.gpus[job])
    if sim.num_free < need:
        return None
    s = _best_fit_server(sim, need)
    if s >= 0:
        return sim.free_gpu_ids(s)[:need]
    free = sim.free_per_server
    if free.size <= 256:
        order = np.lexsort((np.arange(free.size), -free))
        return _take_from_servers(sim, order, need)
    return _take_emptiest_first(sim, need)


def _take_emptiest_first(sim: Simulator, need: int) -> np.ndarray:
    """``need`` free GPUs from servers by most free GPUs (lowest index on ties), as a full sort would.

    Only the servers actually used are located: one vectorised scan per free-GPU count, from the
    largest down, taking ``ceil(left / count)`` servers of each (a sort of all servers cost
    O(S log S) per start, which dominated at 16k servers).
    """
    free = sim.free_per_server
    chosen: list[np.ndarray] = []
    left = need
    for count in range(int(free.max()), 0, -1):
        for server in np.flatnonzero(free == count)[: -(-left // count)].tolist():
            ids = sim.free_gpu_ids(server)
            chosen.append(ids[:left])
            left -= min(left, ids.size)
            if left == 0:
                return np.concatenate(chosen)
    return np.concatenate(chosen)


def first_fit(sim: Simulator, job: int, rng: np.random.Generator) -> np.ndarray | None:
    need = int(sim.workload.gpus[job])
    if sim.num_free < need:
        return None
    return np.flatnonzero(sim.gpu_owner < 0)[:need]


def spread(sim: Simulator, job: int, rng: np.random.Generator) -> np.ndarray | None:
    need = int(sim.workload.gpus[job])
    if sim.num_free < need:
        return None
    if sim.free_per_server.size <= 64:  # small clusters: the same choice on Python lists
        free_list = sim.free_per_server.tolist()
        taken_list = [0] * len(free_list)
        for _ in range(need):
            s = free_list.index(max(free_list))  # most free GPUs left, lowest index on ties
            taken_list[s] += 1
            free_list[s] -= 1
        chosen = [gpu for s, k in enumerate(taken_list) if k for gpu in sim.free_gpu_list(s)[:k]]
        return np.array(chosen, dtype=np.int64)
    free = sim.free_per_server.copy()
    taken = np.zeros_like(free)
    for _ in range(need):
        s = int(np.argmax(free))  # most free GPUs left, lowest index on ties
        taken[s] += 1
        free[s] -= 1
    return np.concatenate([sim.free_gpu_ids(s)[:k] for s, k in enumerate(taken.tolist()) if k])


def least_loaded(sim: Simulator, job: int, rng: np.random.Generator) -> np.ndarray | None:
    need = int(sim.workload.gpus[job])
    if sim.num_free < need:
        return None
    free = np.flatnonzero(sim.gpu_owner < 0)
    order = np.argsort(sim.gpu_assigned_work[free], kind="stable")
    return np.sort(free[order[:need]])


def random_fit(sim: Simulator, job: int, rng: np.random.Generator) -> np.ndarray | None:
    need = int(sim.workload.gpus[job])
    if sim.num_free < need:
        return None
    free = np.flatnonzero(sim.gpu_owner < 0)
    return np.sort(rng.choice(free, size=need, replace=False))


def contention_aware(sim: Simulator, job: int, rng: np.random.Generator) -> np.ndarray | None:
    need = int(sim.workload.gpus[job])
    if sim.num_free < need:
        return None
    s = _best_fit_server(sim, need)
    if s >= 0:
        return sim.free_gpu_ids(s)[:need]
    servers = np.arange(sim.free_per_server.size)
    order = np.lexsort((servers, -sim.free_per_server, sim.split_count))
    order = order[sim.free_per_server[order] > 0]
    return _take_from_servers(sim, order, need)


PLACEMENT_RULES: dict[str, PlacementRule] = {
    "pack": pack,
    "first_fit": first_fit,
    "spread": spread,
    "least_loaded": least_loaded,
    "random": random_fit,
    "contention_aware": contention_aware,
}

#: Short names used in policy names (``fifo+ff``) mapped to rules.
PLACEMENT_ALIASES: dict[str, str] = {
    "ff": "first_fit", "ls": "least_loaded", "rand": "random", "pack": "pack", "bestfit": "pack",
    "spread": "spread", "ca": "contention_aware",
}


def get_placement_rule(name: str) -> PlacementRule:
    """Look up a rule by name or alias (``ff``, ``ls``, ``rand``, ``pack``, ``spread``, ``ca``)."""
    key = PLACEMENT_ALIASES.get(name.lower(), name.lower())
    try:
        return PLACEMENT_RULES[key]
    except KeyError:
        raise ConfigError(
            f"unknown placement rule {name!r}; choose one of {sorted(PLACEMENT_RULES)} or aliases {sorted(PLACEMENT_ALIASES)}"
        ) from None


# Heavy-Edge rules for pipeline jobs (A-SRPT, Luo §IV-B): defined with the paper's policies, added here
# so that the envs and classic policies can name them ("heavy_edge_consolidate", "heavy_edge_fragment").
from ddl_gym.baselines.heavy_edge import HEAVY_EDGE_ALIASES, HEAVY_EDGE_RULES  # noqa: E402

PLACEMENT_RULES.update(HEAVY_EDGE_RULES)
PLACEMENT_ALIASES.update(HEAVY_EDGE_ALIASES)
