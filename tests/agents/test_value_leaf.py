"""The network's value head as the leaf evaluation of the non-clairvoyant search (issue 31, item 4).

* :class:`ValueLeaf`'s episode estimate is ``jobs_area(t) + (reference still to come) − V/scale``:
  with V ≡ 0 and the agent replaying the reference's own schedule it equals the episode's Σ JCT at
  every state (so the reference term is right), and V shifts it by exactly V/scale;
* a search with a value leaf still decides from the past only (same past, other true future: same
  decisions) and differs from the rollout search;
* a value leaf is refused where it would be ignored or cannot work.
"""

from __future__ import annotations

import types

import numpy as np
import pytest

import ddl_gym.baselines
from ddl_gym.agents.mcts import MCTSPolicy
from ddl_gym.agents.search_eval import SearchSettings, ValueLeaf
from ddl_gym.envs.cluster_env import DDLClusterEnv
from ddl_gym.envs.cluster_env_v1 import DDLClusterEnvV1
from ddl_gym.harness import simulate
from ddl_gym.scenarios import get_scenario
from ddl_gym.sim.model import ConfigError

from tests.agents.test_expert_iteration import _same_past_other_future


class _FakeNetwork:
    """A guide with the NetworkGuide interface: first valid action, flat prior, a chosen value."""

    name = "fake-net"

    def __init__(self, value=lambda obs: 0.0, reference: str | None = "srsf+pack") -> None:
        self._value = value
        self.env_kwargs: dict = {}
        recipe = {"reference": reference} if reference else {}
        self.agent = types.SimpleNamespace(metadata={"recipe": recipe}, path="fake.zip")

    def act(self, obs, mask, info=None) -> int:
        return int(np.flatnonzero(mask)[0])

    def probs(self, obs, mask, info=None) -> np.ndarray:
        m = np.asarray(mask, dtype=float)
        return m / m.sum()

    def value(self, obs) -> float:
        return float(self._value(obs))


def _replay_reference(seed: int, hours: float):
    """Replay srsf+pack's schedule through a v1 env; the leaf's estimates on the way and the true Σ JCT."""
    scenario = get_scenario("small")
    reference = simulate(ddl_gym.baselines.make_policy("srsf+pack"), scenario, seed).result
    env = DDLClusterEnvV1("small", window=64, placements=("pack",))
    obs, info = env.reset(seed=seed)
    leaf = ValueLeaf(_FakeNetwork(lambda o: hours))
    context = leaf.prepare(env)
    estimates = []
    while not env.sim.done:
        estimates.append(leaf.estimate(env, obs, context))
        due = [slot for slot, job in enumerate(info["window_jobs"]) if reference.start[job] == env.sim.now]
        obs, _, _, _, info = env.step(1 + due[0] if due else 0)
    np.testing.assert_array_equal(env.sim.result().finish, reference.finish)  # the replay is the reference
    return np.array(estimates), float(env.sim.jobs_area)


@pytest.mark.parametrize("seed", [0, 4])
def test_value_leaf_estimate_is_exact_for_the_reference_with_zero_value(seed: int) -> None:
    estimates, total = _replay_reference(seed, 0.0)
    assert len(estimates) > 10
    np.testing.assert_allclose(estimates, total, rtol=1e-9)


def test_value_leaf_subtracts_the_value_in_seconds() -> None:
    zero, total = _replay_reference(2, 0.0)
    shifted, _ = _replay_reference(2, 0.5)  # V = 0.5 h: the agent expects to beat the reference by 1800 job-seconds
    np.testing.assert_allclose(zero - shifted, 1800.0, rtol=1e-9)


def _value_search(env: DDLClusterEnv, leaf: bool) -> MCTSPolicy:
    net = _FakeNetwork(lambda obs: float(np.sum(obs)) * 0.05)
    search = MCTSPolicy(net, simulations=12, samples=3, depth=1, future="sampled", prior=net.probs, final="visits",
                        fallback="srsf+pack", root_candidates=3, reuse_tree=False, env_kwargs={"window": 64},
                        leaf=ValueLeaf(net) if leaf else None)
    search.reset(seed=7)
    return search


def test_value_leaf_search_reads_the_past_only_and_changes_the_evaluation() -> None:
    a, b, _ = _same_past_other_future("small", 11, 20)
    envs = []
    for workload in (a, b):
        env = DDLClusterEnvV1("small", window=64, reward="jct")
        env.reset(seed=11, options={"workload": workload})
        envs.append(env)
    decisions = 0
    while decisions < 6 and envs[0].sim.num_arrived < 20:
        if envs[0].action_masks().sum() > 1:
            sa = _value_search(envs[0], True).search(envs[0])
            sb = _value_search(envs[1], True).search(envs[1])
            assert sa.action == sb.action and sa.root_best_cost == sb.root_best_cost  # the true future is unread
            rollout = _value_search(envs[0], False).search(envs[0])
            assert rollout.root_best_cost != sa.root_best_cost  # the leaf is used, not the fallback finish
            decisions += 1
        action = int(np.flatnonzero(envs[0].action_masks())[0])
        for env in envs:
            env.step(action)
    assert decisions >= 3


def test_value_leaf_is_refused_where_it_cannot_apply() -> None:
    net = _FakeNetwork()
    with pytest.raises(ConfigError, match="future='sampled'"):
        MCTSPolicy(net, future="oracle", depth=0, leaf=ValueLeaf(net))
    with pytest.raises(ConfigError, match="objective"):
        MCTSPolicy(net, future="sampled", depth=0, objective="makespan", leaf=ValueLeaf(net))
    with pytest.raises(ConfigError, match="classic rule"):
        MCTSPolicy("srsf+pack", future="sampled", depth=0, leaf=ValueLeaf(net))
    with pytest.raises(ConfigError, match="never use it"):
        MCTSPolicy(net, future="sampled", depth=None, leaf=ValueLeaf(net))
    with pytest.raises(ConfigError, match="no training reference"):
        ValueLeaf(_FakeNetwork(reference=None))
    with pytest.raises(ConfigError, match="leaf must be one of"):
        SearchSettings(leaf="net")
    with pytest.raises(ConfigError, match="needs future='sampled'"):
        SearchSettings(leaf="value", future="oracle")
    assert "leaf=value head" in SearchSettings(leaf="value").label()
    assert SearchSettings().label().endswith("fallback=srsf+ca)")  # the rollout rows keep their label


def test_value_leaf_reads_a_multi_task_agent_against_the_searched_task_reference() -> None:
    net = _FakeNetwork(reference="sjf+ca")
    net.agent.metadata.update(task="pollux-8x8-100g", also=[{"task": "paper-mix-40g", "reference": "srsf+pack"}])
    assert ValueLeaf(net, task="paper-mix-40g").reference == "srsf+pack"
    assert ValueLeaf(net, task="pollux-8x8-100g").reference == "sjf+ca"
    assert ValueLeaf(net).reference == "sjf+ca"
    with pytest.raises(ConfigError, match="not trained on task 'default'"):
        ValueLeaf(net, task="default")
    assert ValueLeaf(net, reference="sjf-bco", task="paper-mix-40g").reference == "sjf-bco"  # named: used as is
    assert ValueLeaf(net, reference="sjf+ca", task="default").reference == "sjf+ca"
    # an expert-iteration round retrains the value against its own reference, on its own task
    net.agent.metadata["expert_iteration"] = {"task": "paper-mix-40g", "reference": "sjf+pack"}
    assert ValueLeaf(net, task="paper-mix-40g").reference == "sjf+pack"
    assert ValueLeaf(net, task="pollux-8x8-100g").reference == "sjf+ca"
