"""The baselines of A-SRPT's evaluation (Luo §V-A-1-d): SPJF, SPWF, WCS-Duration, WCS-Workload, WCS-SubTime.

"All baselines adopt the Heavy-Edge algorithm for GPU mapping." Each orders the queued jobs by a
key (smaller first; ties: earlier arrival, then smaller index) and places the job it starts with
server selection ``selection`` followed by Heavy-Edge. The paper does not say how the baselines
choose servers (spec A5 #13). Three named readings (:data:`BASELINE_SELECTIONS`):

* ``"best-fit"`` (**default**; ``"pack"``): the single server with the fewest free GPUs that holds the
  whole job, else the fewest servers, most free first. Measured the strongest of the three for the
  baselines (issue 32; ``docs/reproductions/a_srpt/report.md``, "Baseline placement"), so the comparison is with
  the baselines at their best.
* ``"most-free"`` (``"consolidate"``): most free servers first, always (the spec's first choice and
  this module's default before issue 32). It spreads small jobs over empty servers, fragments the
  cluster and slows later multi-server jobs: the reading under which the paper's Figs. 6–8 gaps appear.
* ``"a-srpt"``: A-SRPT's own rule (Alg. 1 lines 8–23): most free first for communication-heavy jobs
  (``α_max/α̃_min > 1.5``), best fit / least free first for the others.

Registered names: ``spjf`` … (best fit), ``spjf-mostfree`` …, ``spjf-asrptsel`` …; any reading by
option (``spjf:selection=most-free``).

=================  ==========================================  =================================
policy             key                                         work-conserving?
=================  ==========================================  =================================
``spjf``           predicted duration ``ñ_i·α̃_min``            no: strict head of line
``spwf``           predicted workload ``ñ_i·α̃_min·g_i``        no: strict head of line (A5 #12)
``wcs-duration``   predicted duration                          yes: starts every job that fits
``wcs-workload``   predicted workload                          yes
``wcs-subtime``    submission time                             yes (FIFO with backfilling)
=================  ==========================================  =================================

SPJF (MLaaS [6]): "If the shortest job does not fit, it will not schedule longer jobs with fewer GPU
demands" (§V-B-2-a). SPWF (Tiresias [14]) is given the same blocking semantics (spec A5 #12; its
work-conserving twin is WCS-Workload). WCS ([46]) "continuously schedules jobs to use available
GPUs ... following the order". "Predicted duration" is ``ñ_i·α̃_min`` (iterations × the best
per-iteration time, the only estimate before placement, A5 #14); unseen jobs (``ñ = 0``) come first.
"""

from __future__ import annotations

import heapq

import numpy as np

from ddl_gym.baselines.a_srpt.server_selection import SERVER_SELECTIONS, place_pipeline
from ddl_gym.sim.engine import QUEUED, Simulator
from ddl_gym.sim.model import ConfigError
from ddl_gym.sim.perf.pipeline import require_pipeline_scenario, pipeline_oracle

#: named server selections of the baselines -> the selection mode of :mod:`ddl_gym.baselines.a_srpt.server_selection`
#: (``"a-srpt"``: per job, ``"consolidate"`` if communication-heavy else ``"fragment"``)
BASELINE_SELECTIONS: dict[str, str] = {"best-fit": "pack", "most-free": "consolidate", "a-srpt": "a-srpt"}
DEFAULT_SELECTION = "best-fit"
#: every accepted spelling -> the canonical reading
_SELECTION_NAMES: dict[str, str] = {**{k: k for k in BASELINE_SELECTIONS}, "pack": "best-fit", "best_fit": "best-fit",
                                    "bestfit": "best-fit", "consolidate": "most-free", "most_free": "most-free",
                                    "mostfree": "most-free", "asrpt": "a-srpt", "a_srpt": "a-srpt"}


def selection_reading(selection: str) -> str:
    """The canonical reading of a baseline server selection (``"best-fit"``, ``"most-free"``, ``"a-srpt"``)
    or a raw mode of :data:`~ddl_gym.baselines.a_srpt.server_selection.SERVER_SELECTIONS` (``"fragment"``, ...)."""
    key = str(selection).strip().lower()
    if key in _SELECTION_NAMES:
        return _SELECTION_NAMES[key]
    if key in SERVER_SELECTIONS:
        return key
    raise ConfigError(f"server selection must be one of {sorted(BASELINE_SELECTIONS)} (or {SERVER_SELECTIONS}), "
                      f"got {selection!r}")


#: name -> (key, work-conserving)
BASELINES: dict[str, tuple[str, bool]] = {
    "spjf": ("duration", False),
    "spwf": ("workload", False),
    "wcs-duration": ("duration", True),
    "wcs-workload": ("workload", True),
    "wcs-subtime": ("subtime", True),
}


class PredictedOrderPolicy:
    """A queue order by predicted duration / workload / submission time, blocking or work-conserving.

    Args:
        kind: one of :data:`BASELINES`.
        selection: server selection before Heavy-Edge: ``"best-fit"`` (default), ``"most-free"`` or
            ``"a-srpt"`` (module docstring), or a raw mode (``"fragment"``, ``"literal_ascending"``).
        perfect: order by the true iteration counts instead of the predictions.
        name: policy name (default ``kind``).
    """

    engine = "job"

    def __init__(self, kind: str = "spjf", *, selection: str = DEFAULT_SELECTION, perfect: bool = False,
                 name: str | None = None) -> None:
        if kind not in BASELINES:
            raise ConfigError(f"unknown A-SRPT baseline {kind!r}; choose one of {sorted(BASELINES)}")
        self.kind = kind
        self.key_name, self.work_conserving = BASELINES[kind]
        self.selection = selection_reading(selection)
        self._mode = BASELINE_SELECTIONS.get(self.selection, self.selection)
        self.perfect = perfect
        self.name = name or kind
        self._rng = np.random.default_rng(0)

    def check_scenario(self, scenario: object) -> None:
        """Harness hook: a scenario without pipeline jobs is a ConfigError naming both."""
        require_pipeline_scenario(self.name, scenario)

    def reset(self, sim: Simulator, rng: np.random.Generator) -> None:
        self._rng = rng
        oracle = pipeline_oracle(sim, self.name)
        w = sim.workload
        n_tilde = w.iterations.astype(np.float64) if self.perfect else np.nan_to_num(w.predicted_iterations, nan=0.0)
        if self.key_name == "subtime":
            key = w.arrival.astype(np.float64)
        else:
            alpha = np.array([oracle.alpha_min_tilde(j) for j in range(w.num_jobs)])
            key = n_tilde * alpha * (w.gpus if self.key_name == "workload" else 1.0)
        self.key = key
        self._key = key.tolist()
        if self._mode == "a-srpt":  # A-SRPT's lines 8–23 choice, fixed per job (line 6 (R))
            from ddl_gym.baselines.a_srpt.policy import COMM_HEAVY

            self._modes = ["consolidate" if oracle.alpha_max(j) / oracle.alpha_min_tilde(j) > COMM_HEAVY else "fragment"
                           for j in range(w.num_jobs)]
        self._gpus = w.gpus.tolist()
        self._seen = 0
        # One heap per GPU demand: the work-conserving scan picks the best job among the demands
        # that fit, without walking the whole queue (the queue can hold tens of thousands of jobs).
        self._heaps: dict[int, list[tuple[float, int]]] = {}

    def schedule(self, sim: Simulator) -> None:
        heaps = self._heaps
        while self._seen < sim.num_arrived:
            job = self._seen
            self._seen += 1
            heapq.heappush(heaps.setdefault(self._gpus[job], []), (self._key[job], job))
        while True:
            best = None
            for g, heap in heaps.items():
                while heap and sim.state[heap[0][1]] != QUEUED:  # started elsewhere (never, but stay exact)
                    heapq.heappop(heap)
                if heap and (self.work_conserving is False or g <= sim.num_free):
                    if best is None or heap[0] < heaps[best][0]:
                        best = g
            if best is None:
                return
            key, job = heaps[best][0]
            if self._gpus[job] > sim.num_free:  # blocking policies: the head does not fit -> stop
                return
            heapq.heappop(heaps[best])
            mode = self._modes[job] if self._mode == "a-srpt" else self._mode
            sim.start(job, place_pipeline(sim, job, self._rng, selection=mode))


def make_baseline(kind: str, **kwargs: object) -> PredictedOrderPolicy:
    """Registry factory: ``make_baseline("wcs-duration")``."""
    return PredictedOrderPolicy(kind, **kwargs)  # type: ignore[arg-type]
