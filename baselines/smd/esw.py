"""ESW: equal server-worker allocation, the 1:1 worker:PS baseline of Yu §V ([38], PaddlePaddle on Kubernetes).

Spec B2.5: each job gets ``w = p = k*``, the largest ``k`` with ``k·(O^r + G^r) <= v^r`` for every
resource r — as many as the user's limit allows (Yu's Fig. 12 remark: the other policies "use as
much resources specified by the user as possible"). Admission: the same MKP as SMD on ESW's
utilities (spec B5 #4), so only the allocation differs.
"""

from __future__ import annotations

import numpy as np

from ddl_gym.baselines.smd.interval import AllocateThenAdmit, IntervalInstance


class ESWPolicy(AllocateThenAdmit):
    """1:1 workers to PSs, as many pairs as the job's limit allows; MKP admission."""

    name = "esw"

    def allocate(self, instance: IntervalInstance, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, dict]:
        k = np.array([profile.max_equal_count() for profile in instance.profiles], dtype=np.int64)
        return k.copy(), k.copy(), {}
