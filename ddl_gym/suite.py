"""The versioned task suite (issue 31): named tasks with fixed seed ranges, reference sets and tiers.

A :class:`Task` names a registered scenario (usable as ``DDLClusterEnv(scenario=task.scenario)``),
its tier, disjoint train / validation / test seed ranges, the reference policies its best reference
is chosen from, and whether the scheduler may see remaining work (``clairvoyant``). The env ids
``DDLCluster-<Task>-v1`` are registered from :data:`TASKS` on the RL side (:attr:`Task.env_id`);
this module imports neither Gymnasium nor the RL extra, only the scenario registry.

Tiers:

* **realistic** — worlds calibrated to published measurements (:mod:`ddl_gym.suite_scenarios`
  names each source), offered load ≤ 2. At least four of them leave ≥ 20 % between the best
  reference and the LP lower bound (:mod:`ddl_gym.sim.lower_bound`); ``pollux-25g`` makes most jobs
  spread across servers; ``pollux-nc-25g`` is non-clairvoyant.
* **stress** — contention- and burst-dominated regimes (the former default ``default-10g``; the
  Ada-SRSF setting ``ada-srsf-10g``): offered loads far above 1.
* **regression** — the easy built-in scenarios (``default``, ``small``, ``large``, the trace
  windows, SJF-BCO's offline batch): a learned scheduler must not lose there.

Protocol (the cards, :mod:`ddl_gym.suite_cards`): the best reference of a task is the reference
with the lowest mean avg JCT over its **validation** seeds; its card figures and LP headroom are
measured on the **test** seeds (≥ 20). Training uses only the **train** seeds (of
``train_scenario``, which for the trace-window tasks draws windows from the training split of the
trace; the test scenario draws them from the held-out split).

Non-clairvoyant task: the scheduler sees arrivals, job features (GPUs, model) and attained service,
not iterations or remaining work; its references are the policies that need no job size: FIFO and
``gpu-step`` (fewest GPU-seconds per training step first, :mod:`ddl_gym.sim.priority`) with every
placement, Tiresias's 2D-LAS (``las``, ``las-np``) and the 2D-Gittins index with the size
distribution of the task's training episodes (``gittins:prior=…``, ``gittins-np:prior=…``) or of
the episode's own finished jobs (``gittins``) — all in :mod:`ddl_gym.baselines.classic.attained` —
each also with every placement (``…:placement=fs``; the name without one is ``pack``, Tiresias's).
A-SRPT's random-forest prediction does not apply: it predicts from recurring job groups and users,
and the synthetic worlds have none (its trace, ``asrpt-*``, needs pipeline jobs).
"""

from __future__ import annotations

from dataclasses import dataclass

#: Tiers of the suite, in the order the card table lists them.
TIERS: tuple[str, ...] = ("realistic", "stress", "regression")
#: Seed ranges shared by every task (disjoint; test = the leaderboard's held-out seeds).
TRAIN_SEEDS = range(0, 500_000)
VALIDATION_SEEDS = range(500_000, 500_010)
TEST_SEEDS = range(1_000_000, 1_000_020)
#: Suite version: bump when a task's scenario, seeds or references change (2: the non-clairvoyant
#: task's references gain ``gpu-step+<rule>``; 3: every order gains the ``fs`` placement,
#: ``fewest_servers``; 4: the clairvoyant tasks gain EASY backfilling, ``easy-<order>+<rule>``; 5: the
#: non-clairvoyant task's 2D-LAS and 2D-Gittins references gain every placement, as its FIFO and gpu-step
#: ones have (on ``pollux-nc-25g``'s validation seeds the preemptive Gittins index with ``fs`` is 3.9% below
#: it with ``pack``); every env id and its dynamics are unchanged).
SUITE_VERSION = 5
#: Placements of the classic references (every order is paired with each).
REFERENCE_PLACEMENTS: tuple[str, ...] = ("ff", "ls", "rand", "pack", "spread", "ca", "fs")

#: References of a clairvoyant job-level task: the classic orders x placements, the same orders with EASY
#: backfilling (:mod:`ddl_gym.baselines.classic.backfill`: one reservation for the first job that cannot
#: start, the HPC batch schedulers' rule for rigid gang jobs) and SJF-BCO's family.
CLAIRVOYANT_REFERENCES: tuple[str, ...] = tuple(
    f"{o}+{p}" for o in ("fifo", "sjf", "srsf") for p in REFERENCE_PLACEMENTS
) + tuple(
    f"easy-{o}+{p}" for o in ("fifo", "sjf", "srsf") for p in REFERENCE_PLACEMENTS
) + ("sjf-bco", "sjf-bco+ff", "sjf-bco+ls", "sjf-bco+rand")


def non_clairvoyant_references(train_scenario: str) -> tuple[str, ...]:
    """FIFO and gpu-step, 2D-LAS and 2D-Gittins (prior from ``train_scenario``'s first 20 train seeds, or the
    episode's own history), each with every placement; the attained-service names without a placement are
    ``pack`` (their specs as in suite version 4)."""
    attained = ("las", "las-np", "gittins", f"gittins:prior={train_scenario},prior_seeds=0-19",
                f"gittins-np:prior={train_scenario},prior_seeds=0-19")
    with_rule = tuple(spec + (("," if ":" in spec else ":") + f"placement={p}" if p != "pack" else "")
                      for spec in attained for p in REFERENCE_PLACEMENTS)
    return tuple(f"{o}+{p}" for o in ("fifo", "gpu-step") for p in REFERENCE_PLACEMENTS) + with_rule


@dataclass(frozen=True)
class Task:
    """One task of the suite.

    Attributes:
        name: task name (lower case, ``-`` separated).
        scenario: registered scenario of validation and test episodes.
        env_name: the ``<Task>`` part of the env id ``DDLCluster-<Task>-v1`` (:attr:`env_id`).
        tier: ``"realistic"``, ``"stress"`` or ``"regression"``.
        references: reference policies (registry specs) the best reference is chosen from.
        clairvoyant: whether a scheduler may see remaining work (the references respect it).
        train_scenario: scenario of training episodes (``None``: ``scenario``).
        train_seeds, validation_seeds, test_seeds: disjoint seed ranges.
        summary: one line for the card table.
    """

    name: str
    scenario: str
    env_name: str
    tier: str
    references: tuple[str, ...] = CLAIRVOYANT_REFERENCES
    clairvoyant: bool = True
    train_scenario: str | None = None
    train_seeds: range = TRAIN_SEEDS
    validation_seeds: range = VALIDATION_SEEDS
    test_seeds: range = TEST_SEEDS
    summary: str = ""

    def __post_init__(self) -> None:
        if self.tier not in TIERS:
            raise ValueError(f"task {self.name!r}: tier must be one of {TIERS}, got {self.tier!r}")
        ranges = (self.train_seeds, self.validation_seeds, self.test_seeds)
        for i, a in enumerate(ranges):
            for b in ranges[i + 1:]:
                if a.start < b.stop and b.start < a.stop:
                    raise ValueError(f"task {self.name!r}: seed ranges {a} and {b} overlap")
        if len(self.test_seeds) < 20:
            raise ValueError(f"task {self.name!r}: needs >= 20 test seeds, got {len(self.test_seeds)}")

    @property
    def env_id(self) -> str:
        """``DDLCluster-<env_name>-v1`` (e.g. ``DDLCluster-Pollux25G-v1``)."""
        return f"DDLCluster-{self.env_name}-v1"

    @property
    def training_scenario(self) -> str:
        return self.train_scenario or self.scenario


def _nc(name: str, scenario: str, env_name: str, summary: str) -> Task:
    return Task(name, scenario, env_name=env_name, tier="realistic", references=non_clairvoyant_references(scenario), clairvoyant=False,
                summary=summary)


TASKS: tuple[Task, ...] = (
    Task("pollux-25g", "pollux-25g", "Pollux25G", "realistic",
         summary="16x4 GPUs, 25 GbE, Pollux/Philly sizes: 59% of jobs must spread across servers"),
    Task("pollux-8x8-100g", "pollux-8x8-100g", "Pollux8x8-100G", "realistic",
         summary="8x8 GPUs, 100 GbE, Pollux/Philly sizes"),
    Task("helios-ib200", "helios-ib200", "HeliosIB200", "realistic",
         summary="16x8 GPUs, 200 Gb/s InfiniBand, Helios-like 6.75 GPUs per job"),
    Task("paper-mix-40g", "paper-mix-40g", "PaperMix40G", "realistic",
         summary="16x4 GPUs, 40 GbE, SJF-BCO/Ada-SRSF job mix and Table III models"),
    _nc("pollux-nc-25g", "pollux-nc-25g", "PolluxNC25G",
        "non-clairvoyant: 16x4 GPUs, 25 GbE, Pollux/Philly sizes, iterations 100-20,000"),
    Task("default-10g", "default-10g", "Default10G", "stress",
         summary="the former default: 10 GbE, ξ1 = 1, 160 jobs in 20 min (offered load ≈ 9.5)"),
    Task("ada-srsf-10g", "ada-srsf-10g", "AdaSRSF10G", "stress",
         summary="Ada-SRSF 2020 setting on the job-level RAR model: 10 GbE, 160 jobs in 20 min"),
    Task("default", "default", "Default", "regression", summary="the default scenario (100 Gb/s, load ≈ 0.8)"),
    Task("small", "small", "Small", "regression", summary="4x4 GPUs, 40 jobs (smoke tests)"),
    Task("large", "large", "Large", "regression", summary="64x4 GPUs, 640 jobs"),
    Task("philly-windows", "philly-windows", "PhillyWindows", "regression", train_scenario="philly-windows-train",
         summary="Philly (Pollux table) 160-job windows, held-out split"),
    Task("alibaba-windows", "alibaba-windows", "AlibabaWindows", "regression", train_scenario="alibaba-windows-train",
         summary="Alibaba GPU v2023 160-job windows, held-out split"),
    Task("sjf-bco", "sjf-bco", "SJFBCO", "regression", summary="SJF-BCO's offline batch (all jobs at t = 0)"),
)


def get_task(name: str) -> Task:
    """The task named ``name`` (ValueError listing the tasks otherwise)."""
    for task in TASKS:
        if task.name == name:
            return task
    raise ValueError(f"unknown task {name!r}; tasks: {', '.join(t.name for t in TASKS)}")


__all__ = ["CLAIRVOYANT_REFERENCES", "SUITE_VERSION", "TASKS", "TEST_SEEDS", "TIERS", "TRAIN_SEEDS", "Task",
           "VALIDATION_SEEDS", "get_task", "non_clairvoyant_references"]
