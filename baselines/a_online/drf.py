"""Dominant Resource Fairness (Ghodsi et al. [6]) as A-Online's baseline (ii) (spec C3 DRF row).

"The numbers of workers (and PSs) are computed to achieve max-min fairness in dominant resources."
Progressive filling at every decision point, over the waiting jobs (DL2's ``drf_env.py`` filling
rule, spec Part D): repeatedly give one bundle — one worker of the job's ideal type, plus PSs of
its ideal PS type when the PS bandwidth no longer covers its remote workers (2i) — to the job with
the smallest dominant share ``max_r alloc_r / C_total^r`` (ties: earlier arrival), until no bundle
fits or the job has ``D_j`` workers. Jobs that received at least one worker start; **non-preemptive,
no rescaling afterwards** (the paper calls only Tiresias preemptive; C5 #4). Decision: a job whose
next bundle does not fit leaves the filling and the others continue ("until no bundle fits"); DL2
stops the whole round at the first failure.
"""

from __future__ import annotations


import numpy as np

from ddl_gym.baselines.a_online.common import SelfDrivingPolicy, ideal_of, require_aonline, worker_room
from ddl_gym.sim.alloc import Allocation
from ddl_gym.sim.engine import Simulator
from ddl_gym.sim.model import ARCH_PS
from ddl_gym.sim.perf.aonline import ps_count_for_bandwidth


class DominantResourceFairness(SelfDrivingPolicy):
    name = "drf"


    def reset(self, sim: Simulator, rng: np.random.Generator) -> None:
        require_aonline(self.name, sim.workload, sim.cluster)
        self.config = {j: ideal_of(sim, j) for j in range(sim.workload.num_jobs)}
        self.total = sim.capacity.sum(axis=0)

    def schedule(self, sim: Simulator) -> None:
        cluster = sim.cluster
        free = sim.free_resources()
        bw = cluster.resources.index("bw")
        state: dict[int, dict] = {}
        active = list(sim.queue)
        while active:
            job = min(active, key=lambda j: (self._share(state.get(j)), j))
            m, p, _, _ = self.config[job]
            st = state.setdefault(job, {"workers": {}, "ps_server": -1, "ps": 0, "use": np.zeros_like(self.total)})
            if not self._add_bundle(sim, job, st, free, m, p, bw) or sum(st["workers"].values()) >= sim.workload.job_profile(job).chunks:
                active.remove(job)
        for job in sorted(state):
            st = state[job]
            if not st["workers"]:
                continue
            m, p, _, _ = self.config[job]
            ps = [(st["ps_server"], p, st["ps"])] if st["ps"] else []
            alloc = Allocation.typed(cluster, workers=[(h, m, c) for h, c in st["workers"].items()], ps=ps)
            sim.start(job, alloc)

    def _share(self, st: dict | None) -> float:
        return 0.0 if st is None else float((st["use"] / np.maximum(self.total, 1e-12)).max())

    def _add_bundle(self, sim: Simulator, job: int, st: dict, free: np.ndarray, m: int, p: int, bw: int) -> bool:
        """One more worker (and the PS it needs); updates ``free`` and ``st``; False if it does not fit."""
        cluster = sim.cluster
        e = np.asarray(cluster.worker_types[m].demand)
        is_ps = sim.workload.arch[job] == ARCH_PS
        z = np.asarray(cluster.ps_types[p].demand) if is_ps else None
        trial = free.copy()
        ps_server, ps_count = st["ps_server"], st["ps"]
        if is_ps and ps_server < 0:  # first bundle: one PS on the server with the most free bandwidth that fits it
            ok = np.flatnonzero(np.all(trial >= z[None, :] - 1e-9, axis=1))
            if ok.size == 0:
                return False
            ps_server = int(ok[np.argmax(trial[ok, bw])])
            trial[ps_server] -= z
            ps_count = 1
        room = worker_room(trial, e)
        if room.max() < 1:
            return False
        load = (1.0 - trial / np.maximum(sim.capacity, 1e-12)).sum(axis=1)  # least-loaded node first
        h = int(min(np.flatnonzero(room >= 1), key=lambda s: (load[s], s)))
        trial[h] -= e
        workers = dict(st["workers"])
        workers[h] = workers.get(h, 0) + 1
        if is_ps:
            remote = sum(workers.values()) - workers.get(ps_server, 0)
            need = ps_count_for_bandwidth(remote, e[bw], z[bw])
            while ps_count < need:  # more PSs for the remote workers' bandwidth (2i)
                if not np.all(trial[ps_server] >= z - 1e-9):
                    return False
                trial[ps_server] -= z
                ps_count += 1
        free[:] = trial
        st["workers"], st["ps_server"], st["ps"] = workers, ps_server, ps_count
        use = np.asarray(e) * sum(workers.values()) + (ps_count * z if is_ps else 0.0)
        st["use"] = use
        return True


def make_drf() -> DominantResourceFairness:
    return DominantResourceFairness()
