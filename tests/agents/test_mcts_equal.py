"""MCTS gives the same episodes as before its speed work: digests recorded from commit 9a99d18's code.

Each case runs a whole small-cluster episode with a different search configuration (guide, depth,
objective, prior, backup, final choice, window/queue order, a policy-object guide) and compares the
schedule's digest (``tests.golden_cases.result_digest``) with the one the first release produced.
"""

from __future__ import annotations

import numpy as np
import pytest

from ddl_gym.agents.mcts import MCTSPolicy
from ddl_gym.policies import make_policy
from ddl_gym.harness import simulate
from tests.golden_cases import _small_scenario, result_digest

SPEC_CASES = {
    "small/srsf+pack,sims=4,depth=end/seed1": ("mcts:guide=srsf+pack,sims=4,depth=end", 1,
                                               "414ad13b2ab97029c72c0ed8b8a45021954504db9ce2db2c5b37bafd4abefefa"),
    "small/sjf+ca,sims=6,depth=8,makespan/seed2": ("mcts:guide=sjf+ca,sims=6,depth=8,objective=makespan", 2,
                                                   "e49ab98850d972b3ae9f7496012adf57bca5f90983e39348cc6443e362052397"),
    "small/fifo+spread,uniform,mean,visits/seed0": (
        "mcts:guide=fifo+spread,sims=5,depth=4,prior=uniform,backup=mean,final=visits", 0,
        "c4827d92aca9cc31d982fb9c13efa4bac22f32b2b0feff3f71ce2056dcdaaff5"),
    "small/srsf+pack,window4,fifo-queue/seed3": ("mcts:guide=srsf+pack,sims=3,depth=6,window=4,queue_order=fifo", 3,
                                                 "36b5d477531d03525f10d058751913e777be2efeb41ca74eba70b8e7365ff898"),
    "small/sjf+pack,weighted,c2/seed4": (
        "mcts:guide=sjf+pack,sims=5,depth=10,objective=weighted_jct,c=2.0,guide_weight=0.8", 4,
        "77ab89d2c83f6b0e428649f1492229b99eae1663c202ddf39555a89eb2b38400"),
}
OBJECT_GUIDE_DIGEST = "094a8d0ed45336eafc061f0f05fdf076c1a043aca6d12b056a02e23fd748f631"


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SPEC_CASES))
def test_mcts_episode_unchanged(name: str) -> None:
    spec, seed, digest = SPEC_CASES[name]
    assert result_digest(simulate(make_policy(spec), _small_scenario(), seed).result) == digest


@pytest.mark.slow
def test_mcts_with_policy_object_guide_unchanged() -> None:
    class LastValid:
        name = "last-valid"

        def act(self, obs, action_mask, info):
            return int(np.flatnonzero(action_mask)[-1])

    scenario = _small_scenario()
    cluster, workload = scenario.episode(5)
    policy = MCTSPolicy(LastValid(), simulations=4, depth=6, prior="uniform")
    result = policy.run_episode(scenario, cluster, workload, np.random.default_rng(5))
    assert result_digest(result) == OBJECT_GUIDE_DIGEST
