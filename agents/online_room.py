"""How much of the known room a scheduler *without hindsight* reaches by search: rollout over the reference.

    python -m ddl_gym.agents.online_room --workers 2 --write docs/suite-online.md

``docs/suite-oracle.md`` brackets each task's optimum between the strong LP bound and the best
schedule known, which clairvoyant searches found: they see the future, so their room may be out of
reach of any scheduler a cluster could run. This report measures what a *non-clairvoyant* search
reaches on the same seeds: :class:`ddl_gym.agents.rollout.ReferenceRollout`, one-step policy
improvement over the oracle report's finish rule (the task's reference where it runs natively) on
``--futures`` futures sampled from the task's arrival model (and, on a non-clairvoyant task, its
remaining-work model), deviating only when a paired t-test (``--t``) says the deviation is better.

Per task, from ``docs/suite-oracle.json`` (its test seeds, reference, finish rule and best known
schedule per seed) and a fresh rollout episode per seed:

* the rollout's avg JCT and its reduction below the reference (per seed ``(reference − rollout) /
  reference``, mean ± 95 % CI), better on k of n seeds;
* its base's own avg JCT (the finish rule run natively) and the rollout's change against it;
* the share of the known room it takes: ``(reference − rollout) / (reference − best known)``, means
  over the seeds;
* the goal's 10 % rule applied to it: *reached* when the mean reduction is ≥ 10 %.

The Markdown is generated from its JSON; edit the code, never the file. Work runs on the sweep
executors (``--executor local|ray``); after every task the rows so far are kept in
``<write>.partial.json`` with the settings they depend on (options, code fingerprint, the oracle
figures read), so an interrupted run resumes and a partial file made otherwise is refused.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import math
import sys
import time
from typing import Any, Sequence

import numpy as np

from ddl_gym.cliargs import add_executor_arguments
from ddl_gym.report_paths import DOCS, ResumeFile, emit_report, signed_pct
from ddl_gym.sim.model import ConfigError

DEFAULT_DOC = DOCS / "suite-online.md"
ORACLE_JSON = DOCS / "suite-oracle.json"
DEFAULT_FUTURES = 16
DEFAULT_T = 3.0
#: What a task's entry in the oracle report must hold for this report.
REQUIRED_ORACLE_KEYS = ("task", "test_seeds", "reference", "finish", "reference_jct_per_seed", "oracle_jct_per_seed",
                        "priority_jct_per_seed", "best_known_jct_s")
GOAL_REDUCTION = 0.10  # issue 31's goal: >= 10% lower avg JCT than the best reference


@dataclasses.dataclass(frozen=True)
class RolloutItem:
    """One test episode of the rollout (a work item of ``Executor.map``)."""

    scenario: str
    seed: int
    base: str
    futures: int
    t: float
    clairvoyant: bool


def rollout_episode(item: RolloutItem) -> dict[str, float]:
    """The rollout's and its base's avg JCT (s) on one episode, the rollout's deviations and CPU seconds."""
    from ddl_gym.agents.rollout import ReferenceRollout
    from ddl_gym.harness.episodes import simulate_episode
    from ddl_gym.policies import make_policy
    from ddl_gym.scenarios import get_scenario

    cpu0 = time.process_time()
    scenario = get_scenario(item.scenario)
    cluster, workload = scenario.episode(item.seed)
    policy = ReferenceRollout(item.base, futures=item.futures, t=item.t, clairvoyant=item.clairvoyant)
    result = policy.run_episode(scenario, cluster, workload, np.random.default_rng(item.seed))
    if not result.completed:
        raise RuntimeError(f"{item}: the rollout's episode did not complete")
    base, _ = simulate_episode(make_policy(item.base), scenario, cluster, workload, item.seed)
    return {"avg_jct_s": float(result.summary()["avg_jct_s"]), "base_avg_jct_s": float(base.summary()["avg_jct_s"]),
            "searched": policy.stats.searched, "deviations": policy.stats.deviations,
            "cpu_s": time.process_time() - cpu0}


def task_online(oracle: dict[str, Any], *, futures: int, t: float, executor: Any) -> dict[str, Any]:
    """One task's row (module docstring) from its ``docs/suite-oracle.json`` entry and fresh rollout episodes."""
    from ddl_gym.harness import mean_ci
    from ddl_gym.suite import get_task

    task = get_task(oracle["task"])
    seeds = [int(s) for s in oracle["test_seeds"]]
    ref = np.asarray(oracle["reference_jct_per_seed"], dtype=float)
    best = _best_known_per_seed(oracle)
    items = [RolloutItem(task.scenario, s, oracle["finish"], int(futures), float(t), bool(task.clairvoyant))
             for s in seeds]
    out = executor.map(rollout_episode, items)
    mine = np.array([o["avg_jct_s"] for o in out], dtype=float)
    base = np.array([o["base_avg_jct_s"] for o in out], dtype=float)
    reduction, reduction_ci, _ = mean_ci((ref - mine) / ref)
    vs_base, vs_base_ci, _ = mean_ci((mine - base) / base)
    room = float(ref.mean() - best.mean())
    return {
        "task": task.name, "tier": task.tier, "clairvoyant_task": bool(task.clairvoyant), "test_seeds": seeds,
        "reference": oracle["reference"], "base": oracle["finish"], "futures": int(futures), "t": float(t),
        "reference_jct_per_seed": [float(x) for x in ref], "best_known_jct_per_seed": [float(x) for x in best],
        "base_jct_per_seed": [float(x) for x in base], "rollout_jct_per_seed": [float(x) for x in mine],
        "deviations_per_seed": [int(o["deviations"]) for o in out],
        "searched_per_seed": [int(o["searched"]) for o in out],
        "reference_jct_s": float(ref.mean()), "base_jct_s": float(base.mean()), "rollout_jct_s": float(mine.mean()),
        "best_known_jct_s": float(best.mean()),
        "reduction": float(reduction), "reduction_ci": float(reduction_ci), "better": int(np.sum(mine < ref)),
        "change_vs_base": float(vs_base), "change_vs_base_ci": float(vs_base_ci),
        "share_of_known_room": None if room <= 0 else float((ref.mean() - mine.mean()) / room),
        "verdict": "reached" if reduction >= GOAL_REDUCTION else "not reached",
        "cpu_hours": float(sum(o["cpu_s"] for o in out) / 3600.0),
    }


def _best_known_per_seed(oracle: dict[str, Any]) -> np.ndarray:
    """The oracle report's best known schedule per seed (the lowest of its columns, as it computed it)."""
    columns = [oracle["reference_jct_per_seed"], oracle["oracle_jct_per_seed"], oracle["priority_jct_per_seed"]]
    if oracle.get("agent_jct_per_seed"):
        columns.append(oracle["agent_jct_per_seed"])
    best = np.min(np.asarray(columns, dtype=float), axis=0)
    if not math.isclose(float(best.mean()), float(oracle["best_known_jct_s"]), rel_tol=1e-9):
        raise ConfigError(f"{ORACLE_JSON}: task {oracle['task']}: its per-seed columns do not give its best known "
                          "schedule; regenerate it")
    return best


def online_markdown(data: dict[str, Any]) -> str:
    """The whole ``docs/suite-online.md`` from its JSON."""
    lines = [
        "# The room without hindsight: rollout over the reference on sampled futures", "",
        f"Generated by `{data['command']}` — do not edit by hand. Method: `agents/online_room.py`, policy "
        "`agents/rollout.py`. Per task, the test seeds, reference, finish rule and best known schedule of "
        "`docs/suite-oracle.json`; the rollout improves on the finish rule (its *base*) one decision at a time, "
        "judging each deviation on futures sampled from the task's arrival model (and, on a non-clairvoyant task, "
        "its remaining-work model), never the true one, and deviating only when a paired t-test says it is better. "
        "It is a non-clairvoyant scheduler: what it reaches, an online scheduler can reach.", "",
        "| task | tier | seeds | reference | its avg JCT (s) | base | base avg JCT (s) | rollout (futures, t) "
        "| rollout avg JCT (s) | change vs the base | reduction below the reference | better on | deviations per episode "
        "| best known (s, with hindsight) | share of the known room | goal's 10% without hindsight |",
        "|---|---|---:|---|---:|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for t in data["tasks"]:
        share = t["share_of_known_room"]
        lines.append(
            f"| `{t['task']}` | {t['tier']} | {len(t['test_seeds'])} | `{t['reference']}` | {t['reference_jct_s']:.0f} "
            f"| `{t['base']}` | {t['base_jct_s']:.0f} | ({t['futures']}, {t['t']:g}) | {t['rollout_jct_s']:.0f} "
            f"| {signed_pct(t['change_vs_base'], t['change_vs_base_ci'])} "
            f"| {signed_pct(t['reduction'], t['reduction_ci'])} | {t['better']}/{len(t['test_seeds'])} "
            f"| {np.mean(t['deviations_per_seed']):.1f} | {t['best_known_jct_s']:.0f} "
            f"| {'—' if share is None else f'{100 * share:.0f}%'} | {t['verdict']} |")
    lines += [
        "", "Reduction = per seed (reference − rollout) / reference, mean ± 95% CI (Student t); positive is better. "
        "*Change vs the base* = per seed (rollout − base) / base; negative is better. Share of the known room = (reference − "
        "rollout) / (reference − best known), means over the seeds (best known: the oracle report's, found with "
        "hindsight). Rule: *reached* when the mean reduction is ≥ 10%. Deviations: decisions at which the rollout "
        "played another action than its base's.",
        f"CPU time of the rollouts: {sum(t['cpu_hours'] for t in data['tasks']):.2f} CPU-hours.", "",
    ]
    return "\n".join(lines)


def _settings(args: argparse.Namespace, oracle: dict[str, Any], names: Sequence[str]) -> dict[str, Any]:
    """What a partial file's rows depend on (a file made under anything else is refused)."""
    from ddl_gym import __version__
    from ddl_gym.fingerprint import code_fingerprint

    digest = hashlib.sha256(json.dumps([oracle[n] for n in names], sort_keys=True).encode()).hexdigest()
    return {"ddl_gym": __version__, "code": code_fingerprint(), "futures": args.futures, "t": args.t,
            "tasks": list(names), "oracle_sha256": digest}


def main(argv: Sequence[str] | None = None, prog: str = "python -m ddl_gym.agents.online_room") -> int:
    parser = argparse.ArgumentParser(prog=prog, description="the room a non-clairvoyant search reaches: rollout over "
                                                            "the reference on the oracle report's seeds")
    parser.add_argument("--task", action="append", help="only this task (repeatable; default: the oracle report's)")
    parser.add_argument("--futures", type=int, default=DEFAULT_FUTURES, help="sampled futures per decision")
    parser.add_argument("--t", type=float, default=DEFAULT_T, help="paired t-statistic a deviation must beat")
    add_executor_arguments(parser)
    parser.add_argument("--write", default=None, help="write the markdown there (and the JSON beside it)")
    args = parser.parse_args(argv)
    if not 2 <= args.futures <= 10_000:
        parser.error(f"--futures must be in [2, 10000], got {args.futures}")
    if not (args.t >= 0):  # also refuses nan
        parser.error(f"--t must be >= 0 (inf: never deviate), got {args.t}")
    from ddl_gym.executors import make_executor
    from ddl_gym.suite import get_task

    try:
        try:
            data = json.loads(ORACLE_JSON.read_text())
            oracle = {t["task"]: t for t in data["tasks"]}
        except (OSError, ValueError, KeyError, TypeError):
            raise ConfigError(f"{ORACLE_JSON} is missing or unreadable; generate it first "
                              "(python -m ddl_gym.agents.oracle_headroom --write docs/suite-oracle.md)") from None
        names = [get_task(n).name for n in args.task] if args.task else list(oracle)
        missing = [n for n in names if n not in oracle]
        if missing:
            raise ConfigError(f"{ORACLE_JSON} has no entry for {', '.join(missing)}")
        for name in names:
            absent = [k for k in REQUIRED_ORACLE_KEYS if k not in oracle[name]]
            if absent:
                raise ConfigError(f"{ORACLE_JSON}: task {name} lacks {', '.join(absent)}; regenerate it")
        settings = _settings(args, oracle, names)
        executor = make_executor(args.executor, workers=args.workers, ray_address=args.ray_address)
    except ConfigError as exc:
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
            row = done.get(name) or task_online(oracle[name], futures=args.futures, t=args.t, executor=executor)
            tasks.append(row)
            resume.save(tasks)
            print(f"{name}: reference {row['reference_jct_s']:.1f}s, rollout {row['rollout_jct_s']:.1f}s "
                  f"({signed_pct(-row['reduction'])}), best known {row['best_known_jct_s']:.1f}s", file=sys.stderr,
                  flush=True)
    except ConfigError as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 2
    finally:
        executor.close()
    command = prog + "".join(f" --task {n}" for n in args.task or []) \
        + (f" --futures {args.futures}" if args.futures != DEFAULT_FUTURES else "") \
        + (f" --t {args.t:g}" if args.t != DEFAULT_T else "") \
        + (f" --write {args.write}" if args.write else "")
    out = {"command": command, "settings": settings, "tasks": tasks}
    emit_report(args.write, online_markdown(out), out, resume)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
