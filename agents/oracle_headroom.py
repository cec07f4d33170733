"""The optimum bracketed per task: the LP bounds from below, a clairvoyant search's schedule from above.

    python -m ddl_gym.agents.oracle_headroom --workers 2 --write docs/suite-oracle.md

The cards (``docs/suite.md``) and ``docs/suite-bounds.md`` prove how far the best reference sits
*above a lower bound*. A lower bound can be loose, so it does not say how much of that room any
scheduler can reach. This report bounds the optimum from the other side: a schedule found by a
search that sees the whole episode is feasible, so the optimal non-preemptive avg JCT of that
episode is at most its avg JCT.

For every task in scope (default: those whose best reference sits ≥ 20 % above the general LP
bound, the scope of issue 31's goal), on the task's first ``--seeds`` test seeds:

1. **reference**: the task's best non-preemptive reference and its per-seed avg JCT, read from
   ``docs/suite-bounds.json`` (the card's best reference unless that one preempts);
2. **clairvoyant search**: :class:`ddl_gym.agents.mcts.MCTSPolicy` with ``future="oracle"`` (its
   forks see the true future arrivals and, on a non-clairvoyant task, every job's true remaining
   work), ``--sims`` simulations per decision, rollouts of one action finished natively
   (``depth=0``) by the *finish* rule, tree reused between decisions, lowest-cost action played.
   The finish rule is the reference itself where it runs natively (a classic ``order+placement``
   or EASY ``easy-<order>+<placement>``), else the best such rule on the validation seeds (the
   card's validation figures); the guide is the finish rule's ``order+placement``;
3. **clairvoyant priority search**: the finish rule's list scheduler (EASY or greedy, its placement)
   with one static priority per job in place of its order's key, hill-climbed on the episode itself
   (``--priority-evals`` episodes: from the order's key, perturb the log-keys of one to three random
   jobs by N(0, 1), keep the change when the episode's avg JCT drops; generator seeded by the
   episode seed). A queued job's priority under SJF/SRSF never changes before it starts
   (non-preemptive), so a static key covers every order these rules could use; the search looks
   for a better one with hindsight;
4. **the board's best network** on the task (lowest avg JCT among the network rows of
   ``docs/suite-agents.json``, transfer rows included, leaving out agents with the env's preempt
   actions, whose schedules fall outside this bracket), re-run on the same seeds: a non-clairvoyant
   schedule;
5. **best known schedule** per seed: the lowest of the four avg JCTs. All are non-preemptive
   schedules of the episode, so ``strong LP bound ≤ optimum ≤ best known`` (strong bound: the
   per-seed maximum of the general and the non-preemptive LP bound, from ``docs/suite-bounds.json``).

Where the card's best reference preempts (``pollux-nc-25g``'s Gittins index), a paragraph puts that
reference beside the best known non-preemptive schedule on the same seeds (its per-seed figures from
the cards): how far below the reference the goal's comparison could go without preempting.

Per task it reports that bracket, the reduction of the best known schedule below the reference
(per seed ``(reference − best known) / reference``, mean ± 95 % CI) and the share of the LP gap it
closes. The rule for the last column: the goal's 10 % is **shown reachable** when the mean
reduction is ≥ 10 % (a schedule that good exists; where only the clairvoyant search found it, a
non-clairvoyant agent may still not reach it); otherwise **not shown**: the search found less, which does not prove that less is
all there is (the search is not exhaustive; the optimum may lie anywhere in the bracket).

The Markdown is generated from its JSON; edit the code, never the file. Work runs on the sweep
executors (``--executor local|ray``); after every task the figures so far are kept in
``<write>.partial.json`` with the settings they were made under (options, the code's fingerprint,
the SHA-256 of every agent file, the finish rules and the references' figures), so an interrupted
run resumes (a partial file made under other settings is refused, never reused) and is deleted when
the report is written.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
import time
from typing import Any, Sequence

import numpy as np

from ddl_gym.baselines.classic.backfill import EasyBackfillPolicy
from ddl_gym.baselines.classic.policy import ClassicPolicy
from ddl_gym.cliargs import add_executor_arguments
from ddl_gym.report_paths import DOCS, ResumeFile, emit_report, signed_pct
from ddl_gym.suite_bounds import BOARD_JSON, is_preemptive_row
from ddl_gym.suite_bounds import DEFAULT_DOC as BOUNDS_DOC
from ddl_gym.sim.model import ConfigError

DEFAULT_DOC = DOCS / "suite-oracle.md"
BOUNDS_JSON = BOUNDS_DOC.with_suffix(".json")
DEFAULT_SIMS = 32
DEFAULT_SEEDS = 10
DEFAULT_PRIORITY_EVALS = 1000
SCOPE_HEADROOM = 0.20  # issue 31: the goal applies to tasks whose best reference sits >= 20% above the LP bound
GOAL_REDUCTION = 0.10  # ... and asks for >= 10% lower avg JCT than that reference


def finishes_natively(policy: str) -> bool:
    """Whether ``policy`` can finish the search's rollouts natively (classic ``order+placement`` or EASY)."""
    from ddl_gym.agents.mcts import native_finish

    try:
        native_finish(policy)
    except (ConfigError, ValueError, KeyError):
        return False
    return True


def finish_rule(reference: str, validation_jct_s: dict[str, float]) -> str:
    """The search's rollout finish: ``reference`` if it runs natively, else the best native rule on validation."""
    if finishes_natively(reference):
        return reference
    native = {p: v for p, v in validation_jct_s.items() if finishes_natively(p)}
    if not native:
        raise ConfigError(f"no reference of the card finishes rollouts natively (reference {reference!r})")
    return min(native, key=lambda p: (native[p], p))


@dataclasses.dataclass(frozen=True)
class OracleItem:
    """One test episode of the clairvoyant search (a work item of ``Executor.map``)."""

    scenario: str
    seed: int
    guide: str
    finish: str
    sims: int


@dataclasses.dataclass(frozen=True)
class PriorityItem:
    """One test episode of the clairvoyant priority search (a work item of ``Executor.map``)."""

    scenario: str
    seed: int
    finish: str
    evals: int


def oracle_episode(item: OracleItem) -> tuple[float, float]:
    """Avg JCT (s) of the clairvoyant search's schedule of one episode, and the CPU seconds it took."""
    from ddl_gym.agents.mcts import MCTSPolicy
    from ddl_gym.scenarios import get_scenario

    cpu0 = time.process_time()
    scenario = get_scenario(item.scenario)
    cluster, workload = scenario.episode(item.seed)
    search = MCTSPolicy(item.guide, simulations=item.sims, depth=0, fallback=item.finish, future="oracle",
                        final="best", backup="best", reuse_tree=True, seed=item.seed)
    result = search.run_episode(scenario, cluster, workload, np.random.default_rng(item.seed))
    if not result.completed:
        raise RuntimeError(f"{item}: the search's episode did not complete")
    return float(result.summary()["avg_jct_s"]), time.process_time() - cpu0


class _KeyedEasy(EasyBackfillPolicy):
    """EASY backfilling whose job order is a given per-job key (smaller first)."""

    def __init__(self, placement: str, key: np.ndarray) -> None:
        super().__init__("srsf", placement)
        self.key = key

    def reset(self, sim: Any, rng: np.random.Generator, key: Any = None) -> None:
        super().reset(sim, rng, key=self.key if key is None else key)


class _KeyedGreedy(ClassicPolicy):
    """The classic greedy list scheduler whose job order is a given per-job key (smaller first)."""

    def __init__(self, placement: str, key: np.ndarray) -> None:
        super().__init__("sjf", placement)  # any keyed order: the key below replaces it
        self.key = key

    def reset(self, sim: Any, rng: np.random.Generator, key: Any = None) -> None:
        super().reset(sim, rng, key=(self.key if key is None else key).tolist())


def priority_search_episode(item: PriorityItem) -> tuple[float, float]:
    """Avg JCT (s) of the best static-priority list schedule the hill climb found (module docstring, step 3),
    and the CPU seconds it took. The first evaluation is the finish rule itself, except for the greedy
    ``fifo`` rule, which blocks at its head: its keyed start is first-fit in arrival order."""
    from ddl_gym.harness.episodes import simulate_episode
    from ddl_gym.scenarios import get_scenario
    from ddl_gym.sim.engine import Simulator
    from ddl_gym.sim.priority import priority_key

    cpu0 = time.process_time()
    scenario = get_scenario(item.scenario)
    cluster, workload = scenario.episode(item.seed)
    easy = item.finish.startswith("easy-")
    order, _, placement = item.finish.removeprefix("easy-").partition("+")
    keyed = _KeyedEasy if easy else _KeyedGreedy

    def avg_jct(log_key: np.ndarray) -> float:
        result, _ = simulate_episode(keyed(placement, np.exp(log_key)), scenario, cluster, workload, item.seed)
        return float(result.summary()["avg_jct_s"])

    key = priority_key(Simulator(cluster, workload, scenario.model), order)
    base = np.arange(1.0, workload.num_jobs + 1.0) if key is None else np.asarray(key, dtype=float)
    best = np.log(base)
    best_cost = avg_jct(best)
    rng = np.random.default_rng((int(item.seed), 1))
    for _ in range(item.evals - 1):
        moved = rng.choice(workload.num_jobs, size=int(rng.integers(1, 4)), replace=False)
        trial = best.copy()
        trial[moved] += rng.normal(0.0, 1.0, moved.size)
        cost = avg_jct(trial)
        if cost < best_cost:
            best, best_cost = trial, cost
    return best_cost, time.process_time() - cpu0


def guide_of(finish: str) -> str:
    """The search's guide for a finish rule: its ``order+placement`` (EASY's order without the reservation)."""
    return finish.removeprefix("easy-")


def _agent_episode(job: tuple[str, str, int]) -> float:
    from ddl_gym.suite_cards import _episode

    return float(_episode(job)["avg_jct_s"])


def best_known_schedule(runs: dict[str, Any]) -> tuple[np.ndarray, list[str]]:
    """Per seed the lowest avg JCT of ``runs`` (name → per-seed figures) and the name that gave it (ties: the
    first in ``runs``' order)."""
    names = list(runs)
    stack = np.vstack([np.asarray(runs[n], dtype=float) for n in names])
    return stack.min(axis=0), [names[i] for i in stack.argmin(axis=0)]


def _stored_runs(t: dict[str, Any]) -> dict[str, Any]:
    """A stored row's per-seed figures of the schedules it brackets the optimum with, in ``task_oracle``'s order."""
    runs = {"reference": t["reference_jct_per_seed"], "search": t["oracle_jct_per_seed"],
            "priority": t["priority_jct_per_seed"]}
    return runs | ({"agent": t["agent_jct_per_seed"]} if t.get("agent") else {})


def task_oracle(task_name: str, bounds: dict[str, Any], validation_jct_s: dict[str, float], *, seeds: int,
                sims: int, executor: Any, agent: str | None = None,
                priority_evals: int = DEFAULT_PRIORITY_EVALS) -> dict[str, Any]:
    """One task's row (module docstring) from its suite-bounds entry and fresh search episodes."""
    from ddl_gym.harness import mean_ci
    from ddl_gym.suite import get_task

    task = get_task(task_name)
    n = min(int(seeds), len(bounds["test_seeds"]))
    test_seeds = [int(s) for s in bounds["test_seeds"][:n]]
    reference = bounds["reference"]
    ref = np.asarray(bounds["reference_jct_per_seed"][:n], dtype=float)
    strong = np.maximum(np.asarray(bounds["general_bound_per_seed"][:n], dtype=float),
                        np.asarray(bounds["nonpreemptive_bound_per_seed"][:n], dtype=float))
    finish = finish_rule(reference, validation_jct_s)
    items = [OracleItem(task.scenario, s, guide_of(finish), finish, int(sims)) for s in test_seeds]
    out = executor.map(oracle_episode, items)
    oracle = np.array([o[0] for o in out], dtype=float)
    ranked = executor.map(priority_search_episode, [PriorityItem(task.scenario, s, finish, int(priority_evals))
                                                    for s in test_seeds])
    priority = np.array([o[0] for o in ranked], dtype=float)
    mine = None
    if agent is not None:
        from ddl_gym.agents.suite_eval import resolve_agent

        _, agent_file = resolve_agent(agent)
        mine = np.array(executor.map(_agent_episode, [(task.scenario, f"maskable-ppo:{agent_file}", s)
                                                      for s in test_seeds]), dtype=float)
    best, best_by = best_known_schedule({"reference": ref, "search": oracle, "priority": priority,
                                         **({"agent": mine} if mine is not None else {})})
    if np.any(best < strong - 1e-6 * strong):  # the LP proof says this cannot happen: fail loudly
        seed = test_seeds[int(np.flatnonzero(best < strong - 1e-6 * strong)[0])]
        raise AssertionError(f"task {task_name}: a schedule beat the non-preemptive LP bound on seed {seed}")
    reduction, reduction_ci, _ = mean_ci((ref - best) / ref)
    gap = float((ref.mean() - best.mean()) / (ref.mean() - strong.mean())) if ref.mean() > strong.mean() else math.nan
    # Without hindsight: the network alone (choosing per seed between it and the reference would be hindsight).
    plain_reduction, plain_ci = (math.nan, math.nan) if mine is None else mean_ci((ref - mine) / ref)[:2]
    # ... and how much of the room that is known to exist (reference -> best known) the network takes
    known_share = (None if mine is None or ref.mean() <= best.mean()
                   else float((ref.mean() - mine.mean()) / (ref.mean() - best.mean())))
    return {
        "task": task_name, "tier": task.tier, "reference": reference, "finish": finish, "guide": guide_of(finish),
        "sims": int(sims), "test_seeds": test_seeds, "reference_jct_s": float(ref.mean()),
        "oracle_jct_s": float(oracle.mean()), "best_known_jct_s": float(best.mean()),
        "strong_bound_s": float(strong.mean()), "reduction": float(reduction), "reduction_ci": float(reduction_ci),
        "oracle_better": int(np.sum(oracle < ref)), "gap_closed": gap, "agent": agent,
        "priority_evals": int(priority_evals), "priority_jct_s": float(priority.mean()),
        "priority_jct_per_seed": [float(x) for x in priority],
        "agent_jct_s": None if mine is None else float(mine.mean()),
        "agent_jct_per_seed": None if mine is None else [float(x) for x in mine],
        "best_known_by": best_by,
        "verdict": "shown reachable" if reduction >= GOAL_REDUCTION else "not shown",
        "clairvoyant_task": bool(task.clairvoyant),
        "without_hindsight_reduction": None if mine is None else float(plain_reduction),
        "without_hindsight_ci": None if mine is None else float(plain_ci),
        "network_share_of_known_room": known_share,
        "without_hindsight_verdict": "—" if mine is None else
        "reached" if plain_reduction >= GOAL_REDUCTION else "not reached",
        "reference_jct_per_seed": [float(x) for x in ref], "oracle_jct_per_seed": [float(x) for x in oracle],
        "strong_bound_per_seed": [float(x) for x in strong],
        "cpu_hours": float(sum(o[1] for o in out + ranked) / 3600.0),
    }


def best_agents(board: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per task, the board's network row (not network + search; transfer rows included) with the lowest avg JCT,
    among the rows whose agent never preempts (this report brackets non-preemptive schedules)."""
    best: dict[str, dict[str, Any]] = {}
    for row in board:
        if not str(row.get("kind", "")).startswith("network") or "search" in str(row.get("kind", "")) \
                or is_preemptive_row(row):
            continue
        held = best.get(row["task"])
        if held is None or float(row["agent_avg_jct_s"]) < float(held["agent_avg_jct_s"]):
            best[row["task"]] = row
    return best


def preemptive_reference_comparison(data: dict[str, Any], cards: dict[str, Any]) -> list[dict[str, Any]]:
    """Where a task's best reference preempts: that reference beside the best known non-preemptive schedule.

    The bracket above is for non-preemptive schedules, but the goal compares an agent with the card's
    best reference, which may preempt (``gittins``, ``las``). Per such task, on the report's seeds, the
    reference's avg JCT from the card (``best_jct_per_seed``, the task's test seeds in order) and the
    reduction of the best known non-preemptive schedule below it, per seed
    ``(preemptive reference − best known) / preemptive reference``, mean ± 95 % CI; negative when the
    reference is better than every schedule the searches found. Figures come from the two generated
    files only (this report's JSON and the cards), so the Markdown stays their rendering.
    """
    from ddl_gym.harness import mean_ci
    from ddl_gym.suite_cards import preempts

    out = []
    for t in data["tasks"]:
        card = cards.get(t["task"])
        if card is None:
            raise ValueError(f"the cards have no task {t['task']!r}; regenerate docs/suite-oracle.md")
        if not preempts(card.best_reference):
            continue
        n = len(t["test_seeds"])
        if list(card.test_seeds[:n]) != list(t["test_seeds"]) or len(card.best_jct_per_seed) < n:
            raise ValueError(f"card {t['task']!r}: its test seeds or per-seed figures do not cover the seeds of "
                             "docs/suite-oracle.json; regenerate one of them")
        best, _ = best_known_schedule(_stored_runs(t))
        ref = np.asarray(card.best_jct_per_seed[:n], dtype=float)
        reduction, ci, _ = mean_ci((ref - best) / ref)
        out.append({"task": t["task"], "reference": card.best_reference, "reference_jct_s": float(ref.mean()),
                    "best_known_jct_s": float(best.mean()), "reduction": reduction, "reduction_ci": ci,
                    "best_known_better": int(np.sum(best < ref)), "seeds": n})
    return out


def oracle_markdown(data: dict[str, Any], cards: dict[str, Any]) -> str:
    """The whole ``docs/suite-oracle.md`` from its JSON (and, for a preemptive best reference, the cards)."""
    lines = [
        "# How much of the headroom can be reached: the optimum bracketed", "",
        f"Generated by `{data['command']}` — do not edit by hand. Method: `agents/oracle_headroom.py`. "
        "Per task, its first test seeds: the best non-preemptive reference and the strong LP bound "
        "(from `docs/suite-bounds.json`); two clairvoyant searches, which see the true future arrivals and remaining "
        "work (bounds, not schedulers a cluster could run): a tree search (`MCTSPolicy(future=\"oracle\")`) and a "
        "hill climb over per-job priorities of the finish rule's list scheduler; the board's best network that never "
        "preempts, re-run on the same seeds; and the best known schedule per seed (the lowest of the four). All are "
        "non-preemptive, so "
        "strong bound ≤ optimum ≤ best known.", "",
        "| task | tier | seeds | reference | its avg JCT (s) | finish rule | tree search (sims): avg JCT (s) "
        "| priority search (episodes): avg JCT (s) | board's best network: avg JCT (s) | best known (s) | from "
        "| strong bound (s) | reduction below the reference | LP gap closed | goal's 10% "
        "| without hindsight: the network's reduction | goal's 10% by the network | network's share of the known room |",
        "|---|---|---:|---|---:|---|---:|---:|---:|---:|---|---:|---:|---:|---|---:|---|---:|",
    ]
    for t in data["tasks"]:
        agent = f"`{t['agent']}`: {t['agent_jct_s']:.0f}" if t.get("agent") else "—"
        known = t["network_share_of_known_room"]
        share = "—" if known is None else f"{100 * known:.0f}%"
        by = ", ".join(f"{k} {t['best_known_by'].count(k)}" for k in ("reference", "search", "priority", "agent")
                       if k in t["best_known_by"])
        lines.append(
            f"| `{t['task']}` | {t['tier']} | {len(t['test_seeds'])} | `{t['reference']}` | {t['reference_jct_s']:.0f} "
            f"| `{t['finish']}` | ({t['sims']}): {t['oracle_jct_s']:.0f} "
            f"| ({t['priority_evals']}): {t['priority_jct_s']:.0f} | {agent} "
            f"| {t['best_known_jct_s']:.0f} | {by} | {t['strong_bound_s']:.0f} | {signed_pct(t['reduction'], t['reduction_ci'])} "
            f"| {100 * t['gap_closed']:.0f}% | {t['verdict']} "
            f"| {'—' if t['agent'] is None else signed_pct(t['without_hindsight_reduction'], t['without_hindsight_ci'])} "
            f"| {t['without_hindsight_verdict']} "
            f"| {share} |")
    lines += [
        "", "Best known = per seed the lowest of the four; *from* counts the seeds where each gave it (search: the tree "
        "search; priority: the priority search). Reduction = per seed (reference − best known) / reference, mean ± "
        "95% CI (Student t). LP gap closed = (reference − best known) / (reference − strong bound), means over the "
        "seeds. Rule: *shown reachable* when the mean reduction is ≥ 10%; *not shown* means no schedule that good "
        "was found, not that none exists. *Without hindsight*: the board's network alone (it sees neither future "
        "arrivals nor, on a non-clairvoyant task, sizes), per seed (reference − network) / reference, *reached* by "
        "the same 10% rule. Network's share of the known room = (reference − network) / (reference − best known), means "
        "over the seeds: how much of the room a schedule is known to reach the network takes.",
    ]
    hidden = [t["task"] for t in data["tasks"] if not t["clairvoyant_task"]]
    if hidden:
        lines.append("")
        lines.append(f"{', '.join(f'`{n}`' for n in hidden)}: a non-clairvoyant task. Both searches also know every "
                     "job's size, which its schedulers cannot see, so a reachable 10% there may need that knowledge; the "
                     "*without hindsight* columns and the board's network + search rows say what is reached without it.")
    for p in preemptive_reference_comparison(data, cards):
        lines += ["", f"`{p['task']}`: its best reference, `{p['reference']}`, preempts; the table brackets the best "
                  f"non-preemptive one. On the same {p['seeds']} seeds the preemptive reference averages "
                  f"{p['reference_jct_s']:.0f} s against the best known non-preemptive schedule's "
                  f"{p['best_known_jct_s']:.0f} s: reduction below it {signed_pct(p['reduction'], p['reduction_ci'])}, "
                  f"the best known schedule is better on {p['best_known_better']} of {p['seeds']} seeds. "
                  + ("Against that reference the goal's 10% is **not shown** for non-preemptive schedules: none found "
                     "here reaches it, even with hindsight and every size known (a preemptive schedule's room is not "
                     "bracketed here)." if p["reduction"] < GOAL_REDUCTION else
                     "Against that reference too the goal's 10% is shown reachable (with hindsight).")]
    lines += ["", f"CPU time of the searches: {sum(t['cpu_hours'] for t in data['tasks']):.2f} CPU-hours.", ""]
    return "\n".join(lines)


def _settings(args: argparse.Namespace, names: Sequence[str], bounds: dict[str, Any],
              agents: dict[str, str]) -> dict[str, Any]:
    """What a partial file's figures depend on (a file made under anything else is refused)."""
    from ddl_gym import __version__
    from ddl_gym.agents.suite_eval import agent_digest
    from ddl_gym.fingerprint import code_fingerprint
    from ddl_gym.suite import SUITE_VERSION

    # Content, not names: the agent file's bytes, the finish rule the cards select and the code itself.
    return {"ddl_gym": __version__, "code": code_fingerprint(), "suite_version": SUITE_VERSION, "sims": args.sims,
            "seeds": args.seeds, "priority_evals": args.priority_evals,
            "tasks": list(names), "agents": {n: agents.get(n) for n in names},
            "agent_sha256": {n: agent_digest(agents[n]) if agents.get(n) else None for n in names},
            "finish": {n: finish_rule(bounds[n]["reference"], bounds[n]["validation_jct_s"]) for n in names},
            "references": {n: [bounds[n]["reference"], bounds[n]["reference_jct_per_seed"][: args.seeds]]
                           for n in names}}


def main(argv: Sequence[str] | None = None, prog: str = "python -m ddl_gym.agents.oracle_headroom") -> int:
    parser = argparse.ArgumentParser(prog=prog, description="the optimum bracketed: LP bound below, clairvoyant "
                                                            "search above")
    parser.add_argument("--task", action="append", help="only this task (repeatable; default: the goal's scope)")
    parser.add_argument("--seeds", type=int, default=DEFAULT_SEEDS, help="first N test seeds of each task")
    parser.add_argument("--sims", type=int, default=DEFAULT_SIMS, help="search simulations per decision")
    parser.add_argument("--priority-evals", type=int, default=DEFAULT_PRIORITY_EVALS,
                        help="episodes the priority search evaluates per test seed")
    add_executor_arguments(parser)
    parser.add_argument("--write", default=None, help="write the markdown there (and the JSON beside it)")
    args = parser.parse_args(argv)
    if not 1 <= args.seeds <= 1000:
        parser.error(f"--seeds must be in [1, 1000], got {args.seeds}")
    if not 1 <= args.sims <= 10_000:
        parser.error(f"--sims must be in [1, 10000], got {args.sims}")
    if not 1 <= args.priority_evals <= 1_000_000:
        parser.error(f"--priority-evals must be in [1, 1000000], got {args.priority_evals}")
    from ddl_gym.executors import make_executor
    from ddl_gym.suite import TASKS, get_task
    from ddl_gym.suite_cards import load_cards

    try:
        cards = load_cards()
        data = json.loads(BOUNDS_JSON.read_text())
        bounds = {t["task"]: t for t in data["tasks"]}
        board = json.loads(BOARD_JSON.read_text())
        names = ([get_task(n).name for n in args.task] if args.task
                 else [t.name for t in TASKS if t.name in cards and cards[t.name].headroom >= SCOPE_HEADROOM])
        missing = [n for n in names if n not in bounds or n not in cards]
        if missing:
            raise ConfigError(f"{BOUNDS_JSON} or the cards have no entry for {', '.join(missing)}; regenerate them")
        for n in names:  # the per-seed general bound lives in the cards
            bounds[n] = dict(bounds[n], general_bound_per_seed=list(cards[n].lp_bound_per_seed),
                             validation_jct_s=dict(cards[n].validation_jct_s))
        executor = make_executor(args.executor, workers=args.workers, ray_address=args.ray_address)
    except (OSError, ValueError, KeyError, ConfigError) as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 2
    agents = {task: row["agent"] for task, row in best_agents(board).items()}
    try:
        settings = _settings(args, names, bounds, agents)
    except ConfigError as exc:
        executor.close()
        print(f"{prog}: {exc}", file=sys.stderr)
        return 2
    resume = ResumeFile(args.write, settings, "tasks")
    kept = resume.load_or_explain(prog)
    if kept is None:
        executor.close()
        return 2
    done = {t["task"]: t for t in kept}
    if done:
        print(f"resuming: {', '.join(done)} already done", file=sys.stderr)
    tasks = []
    try:
        for name in names:
            t = done.get(name) or task_oracle(name, bounds[name], cards[name].validation_jct_s, seeds=args.seeds,
                                              sims=args.sims, executor=executor, agent=agents.get(name),
                                              priority_evals=args.priority_evals)
            tasks.append(t)
            resume.save(tasks)
            print(f"{name}: reference {t['reference_jct_s']:.1f}s, tree search {t['oracle_jct_s']:.1f}s, priority "
                  f"search {t['priority_jct_s']:.1f}s, "
                  f"best known {t['best_known_jct_s']:.1f}s ({signed_pct(-t['reduction'])}), strong bound "
                  f"{t['strong_bound_s']:.1f}s", file=sys.stderr, flush=True)
    finally:
        executor.close()
    command = prog + "".join(f" --task {n}" for n in args.task or []) \
        + (f" --seeds {args.seeds}" if args.seeds != DEFAULT_SEEDS else "") \
        + (f" --sims {args.sims}" if args.sims != DEFAULT_SIMS else "") \
        + (f" --priority-evals {args.priority_evals}" if args.priority_evals != DEFAULT_PRIORITY_EVALS else "") \
        + (f" --write {args.write}" if args.write else "")
    out = {"command": command, "settings": settings, "tasks": tasks}
    try:
        markdown = oracle_markdown(out, cards)
    except ValueError as exc:  # cards and bounds out of step: the partial file keeps every finished task
        print(f"{prog}: {exc}", file=sys.stderr)
        return 2
    emit_report(args.write, markdown, out, resume)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
