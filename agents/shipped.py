"""Shipped agents by short name: ``--policies agent-transfer`` instead of ``maskable-ppo:PATH``.

Each entry is a trained agent committed under ``leaderboard/`` (zip + ``.json`` metadata +
``.vecnormalize.pkl`` observation statistics, < 2 MB together). The registry
(:mod:`ddl_gym.policies`) registers every name, so the harness, ``ddl-gym eval`` and the
leaderboard use them like any reference policy; results rows carry the short name. Loading checks
the env exactly as ``load_policy("maskable-ppo:PATH")`` does (observation layout, window, placements,
queue order), so an incompatible env is refused with a message naming the difference.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ddl_gym.sim.model import ConfigError

REPO_ROOT = Path(__file__).resolve().parents[1]
#: Where an installed package (wheel) keeps the committed agent folders (pyproject's package-dir maps
#: them): repository folder -> folder inside the installed ``ddl_gym/agents``.
INSTALLED_ZOO = {"leaderboard/agents": "zoo", "leaderboard/default-10g/agents": "zoo/legacy"}


@dataclass(frozen=True)
class ShippedAgent:
    """A committed agent: ``path`` relative to the repository root, one-line ``description``."""

    name: str
    path: str
    description: str
    algo: str = "maskable-ppo"

    @property
    def file(self) -> Path:
        """The agent's zip: in the source checkout, else in the installed package's zoo."""
        source = REPO_ROOT / self.path
        if source.exists():
            return source
        folder, _, name = self.path.rpartition("/")
        return Path(__file__).resolve().parent / INSTALLED_ZOO.get(folder, folder) / name

    @property
    def spec(self) -> str:
        return f"{self.algo}:{self.file}"


SHIPPED_AGENTS: dict[str, ShippedAgent] = {a.name: a for a in (
    ShippedAgent("agent-transfer", "leaderboard/agents/agent-transfer.zip",
                 "MaskablePPO network, portable observation (16 slots): behaviour clone of srsf+ca on transfer-train "
                 "(random clusters, NICs, loads; Philly/Alibaba training windows) + default training seeds"),
    ShippedAgent("agent-v1-papermix40g", "leaderboard/agents/agent-v1-papermix40g.zip",
                 "MaskablePPO network on DDLCluster-PaperMix40G-v1 (v1 observation): BC srsf+pack, then PPO with "
                 "gamma 1 and the srsf+pack-relative reward (python -m ddl_gym.agents.train_v1; docs/suite-agents.md)"),
    ShippedAgent("agent-v1-default10g", "leaderboard/agents/agent-v1-default10g.zip",
                 "MaskablePPO network on DDLCluster-Default10G-v1 (stress task): BC sjf+ca, then PPO with gamma 1 and "
                 "the sjf-bco-relative reward (docs/suite-agents.md)"),
    ShippedAgent("agent-v1-default10g-r2", "leaderboard/agents/agent-v1-default10g-r2.zip",
                 "MaskablePPO network on DDLCluster-Default10G-v1 (stress task), round 2: agent-v1-default10g continued "
                 "for 2M PPO steps (lr 2e-4, seed 1); sjf-bco-relative reward, gamma 1 (docs/suite-agents.md)"),
    ShippedAgent("agent-v1-pollux25g", "leaderboard/agents/agent-v1-pollux25g.zip",
                 "MaskablePPO network on DDLCluster-Pollux25G-v1: BC srsf+ca, then PPO with gamma 1 and the "
                 "srsf+ca-relative reward (docs/suite-agents.md)"),
    ShippedAgent("agent-v1-pollux8x8", "leaderboard/agents/agent-v1-pollux8x8.zip",
                 "MaskablePPO network on DDLCluster-Pollux8x8-100G-v1: BC sjf+ca, then PPO with gamma 1 and the "
                 "sjf+ca-relative reward (docs/suite-agents.md)"),
    ShippedAgent("agent-v1-papermix40g-r2", "leaderboard/agents/agent-v1-papermix40g-r2.zip",
                 "MaskablePPO network on DDLCluster-PaperMix40G-v1, round 2: agent-v1-papermix40g continued for 800k "
                 "PPO steps (train_v1 --init, seed 1); srsf+pack-relative reward, gamma 1 (docs/suite-agents.md)"),
    ShippedAgent("agent-v1-papermix40g-r3", "leaderboard/agents/agent-v1-papermix40g-r3.zip",
                 "MaskablePPO network on DDLCluster-PaperMix40G-v1, round 3: agent-v1-mix7 continued on paper-mix-40g "
                 "alone against the easy-srsf+ca-relative reward, 1M PPO steps (lr 1e-4, seed 21) then 600k from the "
                 "best checkpoint (lr 5e-5, seed 23); gamma 1 (CHANGELOG, issue 31 eighth round)"),
    ShippedAgent("agent-v1-pollux25g-r2", "leaderboard/agents/agent-v1-pollux25g-r2.zip",
                 "MaskablePPO network on DDLCluster-Pollux25G-v1, round 2: BC srsf+ca, 1.6M PPO steps, then 1M more "
                 "from the best checkpoint (train_v1 --init); srsf+ca-relative reward, gamma 1 (docs/suite-agents.md)"),
    ShippedAgent("agent-v1-pollux8x8-r2", "leaderboard/agents/agent-v1-pollux8x8-r2.zip",
                 "MaskablePPO network on DDLCluster-Pollux8x8-100G-v1, round 2: BC sjf+ca, 1.2M PPO steps, then 1M "
                 "more from the best checkpoint; sjf+ca-relative reward, gamma 1 (docs/suite-agents.md)"),
    ShippedAgent("agent-v1-pollux8x8-r3", "leaderboard/agents/agent-v1-pollux8x8-r3.zip",
                 "MaskablePPO network on DDLCluster-Pollux8x8-100G-v1, round 3: agent-v1-pollux8x8-r2 continued for "
                 "1.5M PPO steps with 8x larger rollouts per update (n_steps 1024, batch 1024, lr 1e-4); sjf+ca-relative "
                 "reward, gamma 1 (docs/suite-agents.md)"),
    ShippedAgent("agent-v1-mix5", "leaderboard/agents/agent-v1-mix5.zip",
                 "MaskablePPO network trained on five suite tasks at once (train_v1 --also: pollux-8x8-100g, "
                 "pollux-25g, helios-ib200, paper-mix-40g, default-10g, each against its best reference): "
                 "agent-v1-pollux8x8-r2 continued for 2M PPO steps, selected on the mean ratio to the references "
                 "(docs/suite-agents.md)"),
    ShippedAgent("agent-v1-mix7", "leaderboard/agents/agent-v1-mix7.zip",
                 "MaskablePPO network on seven suite tasks: agent-v1-mix5's five plus the light-load regression tasks "
                 "default and small (train_v1 --also), continued from agent-v1-mix5 for 1.2M PPO steps with GAE "
                 "lambda 0.99; selected on the mean ratio to the references (docs/suite-agents.md)"),
    ShippedAgent("agent-v1-lightload", "leaderboard/agents/agent-v1-lightload.zip",
                 "MaskablePPO network for the light-load regression tasks: agent-v1-mix7 specialised on default and "
                 "small (train_v1 --also) for 600k PPO steps, GAE lambda 0.99; sjf+ca- and srsf+pack-relative "
                 "rewards (docs/suite-agents.md)"),
    ShippedAgent("agent-v1-pollux8x8-attn", "leaderboard/agents/agent-v1-pollux8x8-attn.zip",
                 "Slot-attention MaskablePPO network (train_v1 --network attention) on DDLCluster-Pollux8x8-100G-v1 "
                 "with the fs placement among its actions: BC sjf+fs, 1.5M PPO steps with an input-dependent "
                 "baseline (--critic-sees-future); sjf+fs-relative reward, gamma 1 (docs/suite-agents.md)"),
    ShippedAgent("agent-v1-lightload-r2", "leaderboard/agents/agent-v1-lightload-r2.zip",
                 "MaskablePPO network for the light-load regression tasks, round 2: agent-v1-lightload continued for "
                 "600k PPO steps on default, small and the training windows of alibaba-windows (train_v1 --also; its "
                 "validation and test windows are held out); GAE lambda 0.99 (docs/suite-agents.md)"),
    ShippedAgent("agent-v1-heliosib200-r2", "leaderboard/agents/agent-v1-heliosib200-r2.zip",
                 "MaskablePPO network on DDLCluster-HeliosIB200-v1, round 2: agent-v1-mix5 specialised on helios-ib200 "
                 "for 1M PPO steps (lr 5e-5, GAE lambda 0.99); sjf+ca-relative reward, gamma 1 (docs/suite-agents.md)"),
    ShippedAgent("agent-v1-heliosib200", "leaderboard/agents/agent-v1-heliosib200.zip",
                 "MaskablePPO network on DDLCluster-HeliosIB200-v1: BC sjf+ca, 1.6M PPO steps, then 1M more from the "
                 "best checkpoint; sjf+ca-relative reward, gamma 1 (docs/suite-agents.md)"),
    ShippedAgent("agent-v1-polluxnc25g", "leaderboard/agents/agent-v1-polluxnc25g.zip",
                 "MaskablePPO network on the non-clairvoyant DDLCluster-PolluxNC25G-v1 with the gpu-step window "
                 "(queue_order=gpu-step): BC gpu-step+ca, PPO with the reward relative to the preemptive 2D-Gittins "
                 "reference (docs/suite-agents.md)"),
    ShippedAgent("agent-v1-polluxnc25g-preempt", "leaderboard/agents/agent-v1-polluxnc25g-preempt.zip",
                 "MaskablePPO network on the non-clairvoyant DDLCluster-PolluxNC25G-v1 with preempt actions "
                 "(preemption=True, gpu-step window): BC of the preemptive 2D-Gittins reference through the env's "
                 "actions, then 4 DAgger rounds (board row: network, preemptive; suite version 4's best agent on the task, "
                 "superseded by agent-v1-polluxnc25g-preempt-fs)"),
    ShippedAgent("agent-v1-polluxnc25g-preempt-fs", "leaderboard/agents/agent-v1-polluxnc25g-preempt-fs.zip",
                 "MaskablePPO network on the non-clairvoyant DDLCluster-PolluxNC25G-v1 with preempt actions and the "
                 "fs placement among its actions: BC of the preemptive 2D-Gittins reference with fewest-servers "
                 "placement (suite version 5's best reference) through the env's actions, then 4 DAgger rounds"),
    ShippedAgent("agent-10g", "leaderboard/default-10g/agents/agent-10g.zip",
                 "RETIRED from default: BC sjf+ca + PPO on the former 10 GbE default (legacy observation, 16 servers)"),
    ShippedAgent("agent-10g-scratch", "leaderboard/default-10g/agents/agent-10g-scratch.zip",
                 "RETIRED from default: PPO from scratch on the former 10 GbE default (legacy observation, 16 servers)"),
)}


def load_shipped(name: str) -> Any:
    """The shipped agent ``name`` as a harness policy (:class:`ddl_gym.agents.policy.AgentPolicy`)."""
    if name not in SHIPPED_AGENTS:
        raise ConfigError(f"unknown shipped agent {name!r}; known: {', '.join(SHIPPED_AGENTS)}")
    agent = SHIPPED_AGENTS[name]
    if not agent.file.exists():
        raise ConfigError(f"shipped agent {name!r}: {agent.path} is missing from this installation "
                          "(a source checkout and the wheel have it)")
    from ddl_gym.agents.policy import load_policy

    policy = load_policy(agent.spec)
    policy.name = name
    return policy
