"""Score learned agents on the task suite's held-out test seeds (issue 31's protocol).

    python -m ddl_gym.agents.suite_eval --agent pollux-25g=agent-v1-pollux25g \\
        --search pollux-25g=agent-v1-pollux25g --write docs/suite-agents.md

``--agent TASK=AGENT`` scores a network alone; ``--search TASK=AGENT`` scores that network as the
guide and prior of the non-clairvoyant tree search (:mod:`ddl_gym.agents.search_eval`; its episodes
run on ``--executor local|ray``); ``--search TASK=AGENT,KEY=VALUE,...`` overrides fields of
:class:`ddl_gym.agents.search_eval.SearchSettings` for that row (e.g. ``leaf=value,depth=2``: the
network's value head scores the leaves). ``AGENT`` is a shipped agent's name
(:data:`ddl_gym.agents.shipped.SHIPPED_AGENTS`) or an agent zip. A network trained on another task
is marked as a transfer row.

Per task:

1. the **best reference** is chosen on the task's *validation* seeds (lowest mean avg JCT among the
   task's references, :func:`ddl_gym.suite_cards.best_reference`), never on the test seeds;
2. the agent and that reference run on the task's **test** seeds (≥ 20), same episodes, same harness;
3. paired change of avg JCT (agent − reference)/reference per seed, mean ± 95% CI (Student t),
   seeds where the agent is better;
4. the LP lower bound of every test episode (:mod:`ddl_gym.sim.lower_bound`) and the fraction of the
   gap closed, (mean reference − mean agent) / (mean reference − mean bound);
5. the verdict of the issue's goal, by a stated rule (:func:`goal_verdict`): at least 10% lower avg JCT,
   the CI's upper end below 0, better on ≥ 80% of the seeds.

The Markdown it writes is generated; edit the code, never the file. A board takes long (its search
rows dominate), so with ``--write`` every finished row is kept in ``<write>.partial.json`` together
with what it depends on (the rows asked for, the references, each agent file's SHA-256, the code's
fingerprint); rerunning the same command resumes after the last finished row, a partial file made
under anything else is refused, and it is deleted once the board is written.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, NamedTuple, Sequence

import numpy as np

from ddl_gym.sim.model import ConfigError
from ddl_gym.suite_bounds import PREEMPTIVE_KIND

GOAL_IMPROVEMENT_PCT = 10.0  # issue 31: >= 10% lower avg JCT than the best reference
GOAL_BETTER_SHARE = 0.8  # ... better on >= 80% of the test seeds


@dataclass
class AgentRow:
    task: str
    agent: str
    reference: str
    seeds: int
    reference_avg_jct_s: float
    agent_avg_jct_s: float
    lp_bound_s: float
    change_pct: float
    change_ci_pct: float
    better: int
    gap_closed: float
    verdict: str
    #: "network", "network + search" or "network, transfer from <task>" (what the row measures)
    kind: str = "network"


def goal_verdict(change_pct: float, ci_pct: float, better: int, seeds: int) -> str:
    """``"met"``: change ≤ −10%, CI upper end < 0, better on ≥ 80% of seeds; ``"not worse"``: the CI
    includes 0 or the agent is better; ``"worse"``: the CI lies above 0."""
    if change_pct <= -GOAL_IMPROVEMENT_PCT and change_pct + ci_pct < 0 and better >= GOAL_BETTER_SHARE * seeds:
        return "met"
    if change_pct - ci_pct > 0:
        return "worse"
    return "not worse"


def score_agent(task_name: str, agent_path: str, *, validation_seeds: Sequence[int] | None = None,
                test_seeds: Sequence[int] | None = None, reference: str | None = None, workers: int = 1,
                lp_bounds: np.ndarray | None = None) -> AgentRow:
    """The network ``agent_path`` against ``reference`` (default: the best on the validation seeds) on the
    task's test seeds; ``lp_bounds`` (the LP bound of each of those episodes) when already computed."""
    from ddl_gym.harness import evaluate
    from ddl_gym.suite import get_task
    from ddl_gym.suite_cards import best_reference

    task = get_task(task_name)
    if reference is None:
        reference, _ = best_reference(task, seeds=validation_seeds, workers=workers)
    seeds = list(test_seeds if test_seeds is not None else task.test_seeds)
    label, agent_file = resolve_agent(agent_path)
    spec = f"maskable-ppo:{agent_file}"
    results = evaluate([reference, spec], task.scenario, seeds, None, workers=workers, progress=False, plots=False,
                       echo=False)
    summary = results.summary
    labels = [p for p in summary["policy"].unique() if p != reference]
    if len(labels) != 1:
        raise ConfigError(f"expected one agent row besides {reference!r}, got {labels}")
    ref = summary[summary["policy"] == reference].set_index("seed").loc[seeds, "avg_jct_s"].to_numpy(float)
    mine = summary[summary["policy"] == labels[0]].set_index("seed").loc[seeds, "avg_jct_s"].to_numpy(float)
    bound = _lp_bounds(task, seeds) if lp_bounds is None else lp_bounds
    return paired_row(task, label, reference, ref, mine, bound, kind=network_kind(task.name, agent_file))


def paired_row(task: Any, label: str, reference: str, ref: np.ndarray, mine: np.ndarray, bound: np.ndarray,
               kind: str = "network") -> AgentRow:
    """The row of this protocol from per-seed avg JCTs of the reference, the agent and the LP bound."""
    from ddl_gym.harness import mean_ci

    change = 100.0 * (mine - ref) / ref
    mean, ci, _ = mean_ci(change)
    gap = (ref.mean() - mine.mean()) / (ref.mean() - bound.mean()) if ref.mean() > bound.mean() else math.nan
    better = int(np.sum(mine < ref))
    return AgentRow(task=task.name, agent=label, reference=reference, seeds=len(ref),
                    reference_avg_jct_s=float(ref.mean()), agent_avg_jct_s=float(mine.mean()),
                    lp_bound_s=float(bound.mean()), change_pct=float(mean), change_ci_pct=float(ci), better=better,
                    gap_closed=float(gap), verdict=goal_verdict(float(mean), float(ci), better, len(ref)), kind=kind)


def resolve_agent(agent: str) -> tuple[str, str]:
    """``(label, zip path)`` of a shipped agent's name or an agent zip (ConfigError if neither exists)."""
    from ddl_gym.agents.shipped import SHIPPED_AGENTS

    if agent in SHIPPED_AGENTS:
        return agent, str(SHIPPED_AGENTS[agent].file)
    path = Path(agent)
    if not path.is_file():
        raise ConfigError(f"agent {agent!r}: neither a shipped agent ({', '.join(SHIPPED_AGENTS)}) nor a file")
    for name, shipped in SHIPPED_AGENTS.items():
        if shipped.file.resolve() == path.resolve():
            return name, str(path)
    return agent, str(path)


def split_versus(agent: str) -> tuple[str, str]:
    """``AGENT[@POLICY]`` → ``(AGENT, POLICY)`` (``POLICY`` empty when the row keeps the task's best reference)."""
    name, at, versus = agent.rpartition("@")
    return (name, versus) if at else (agent, "")


def agent_digest(agent: str) -> str:
    """SHA-256 of the file behind ``AGENT[@POLICY]`` (ConfigError if it names no agent): what a kept result of
    that agent depends on, beyond its name."""
    from ddl_gym.fingerprint import file_digest

    return file_digest(resolve_agent(split_versus(agent)[0])[1])


def network_kind(task_name: str, agent_file: str) -> str:
    """``"network"``; ``"network, multi-task (a, b, ...)"`` for an agent trained on several tasks that include
    this one; ``"network, transfer from <tasks>"`` when the agent never trained on this task; each followed by
    ``", preemptive"`` for an agent with the env's preempt actions (its schedules may preempt, so only the
    general LP bound applies to them, never the non-preemptive one)."""
    meta_path = Path(agent_file).with_suffix(".json")
    try:
        meta = json.loads(meta_path.read_text())
    except (OSError, ValueError):
        raise ConfigError(f"agent {agent_file}: cannot read its metadata {meta_path}") from None
    suffix = PREEMPTIVE_KIND if (meta.get("env_kwargs") or {}).get("preemption") else ""
    trained_on = [meta.get("task")] + [a.get("task") for a in meta.get("also", [])]
    if trained_on[0] is None:
        return "network" + suffix
    names = ", ".join(str(t) for t in trained_on)
    if task_name not in trained_on:
        return f"network, transfer from {names}" + suffix
    return ("network" if len(trained_on) == 1 else f"network, multi-task ({names})") + suffix


class SearchScore(NamedTuple):
    """A network + search row and what it is made of (per-seed figures in test-seed order)."""

    row: AgentRow
    cpu_hours: float
    reference_avg_jct_s: list[float]
    search_avg_jct_s: list[float]


def score_search(task_name: str, agent: str, reference: str, *, test_seeds: Sequence[int] | None = None,
                 executor: str = "local", workers: int | None = None, ray_address: str | None = None,
                 lp_bounds: np.ndarray | None = None, **overrides: Any) -> SearchScore:
    """Network + search on the task's test seeds, paired with ``reference`` (``lp_bounds``: as in
    :func:`score_agent`).

    ``overrides`` replace fields of :class:`ddl_gym.agents.search_eval.SearchSettings`; rollouts are
    finished by ``fallback`` (default: the reference when it is a classic ``order+placement`` rule or EASY
    backfilling, ``easy-<order>+<placement>``, else ``srsf+ca``); ``future`` is ``"sampled"`` (non-clairvoyant) unless overridden with ``"oracle"``.
    """
    from ddl_gym.agents.search_eval import SearchSeedItem, SearchSettings, search_rows
    from ddl_gym.harness import evaluate
    from ddl_gym.agents.mcts import native_finish
    from ddl_gym.suite import get_task

    task = get_task(task_name)
    known = [f.name for f in dataclasses.fields(SearchSettings)]
    unknown = set(overrides) - set(known)
    if unknown:
        raise ConfigError(f"unknown search settings {sorted(unknown)}; known: {', '.join(known)}")
    try:
        native_finish(reference)  # the rollout finishes the search can run natively
        fallback = reference
    except ConfigError:
        fallback = "srsf+ca"
    settings = SearchSettings(**{"fallback": fallback, **overrides})
    seeds = list(test_seeds if test_seeds is not None else task.test_seeds)
    label, agent_file = resolve_agent(agent)
    results = evaluate([reference], task.scenario, seeds, None, workers=workers or 1, progress=False, plots=False,
                       echo=False)
    ref = results.summary.set_index("seed").loc[seeds, "avg_jct_s"].to_numpy(float)
    items = [SearchSeedItem(agent=str(Path(agent_file).resolve()), task=task.name, seed=int(s), search=settings)
             for s in seeds]
    mine, cpu_hours = search_rows(items, executor=executor, workers=workers, ray_address=ray_address)
    searched = "network + search" if settings.future == "sampled" else "network + clairvoyant search (oracle)"
    kind = network_kind(task.name, agent_file).replace("network", searched, 1)
    bound = _lp_bounds(task, seeds) if lp_bounds is None else lp_bounds
    row = paired_row(task, f"{label} + {settings.label()}", reference, ref, mine, bound, kind=kind)
    return SearchScore(row, cpu_hours, ref.tolist(), mine.tolist())


def _lp_bounds(task: Any, seeds: Sequence[int]) -> np.ndarray:
    """The LP lower bound on avg JCT of each of ``task``'s test episodes ``seeds``."""
    from ddl_gym.scenarios import get_scenario
    from ddl_gym.sim.lower_bound import scenario_lower_bound

    scenario = get_scenario(task.scenario)
    return np.array([scenario_lower_bound(scenario, s).avg_jct_s for s in seeds])


def board_markdown(rows: Sequence[AgentRow], command: str, search_cpu: dict[str, float] | None = None) -> str:
    lines = [
        "# Learned agents on the task suite (test seeds)", "",
        f"Generated by `{command}` — do not edit by hand. Protocol: `ddl_gym/agents/suite_eval.py` (best reference "
        "chosen on validation seeds; agent and reference on the task's test seeds; LP bound of every test episode). "
        f"Goal (issue 31): avg JCT ≥ {GOAL_IMPROVEMENT_PCT:.0f}% below the best reference, 95% CI excluding 0, "
        f"better on ≥ {GOAL_BETTER_SHARE:.0%} of seeds.", "",
        "| task | agent | kind | best reference | its avg JCT (s) | agent avg JCT (s) | LP bound (s) | "
        "change (paired) | better on | LP gap closed | goal |",
        "|---|---|---|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        lines.append(f"| `{r.task}` | `{r.agent}` | {r.kind} | `{r.reference}` | {r.reference_avg_jct_s:.0f} | "
                     f"{r.agent_avg_jct_s:.0f} | {r.lp_bound_s:.0f} | {r.change_pct:+.1f}% ± {r.change_ci_pct:.1f}% | "
                     f"{r.better}/{r.seeds} | {r.gap_closed:.0%} | {r.verdict} |")
    lines += ["", "Every agent is non-clairvoyant of future arrivals: a network sees the `DDLCluster-<Task>-v1` "
              "observation; a search row forks the simulator with futures drawn from the task's arrival model "
              "(`future=sampled`), never the episode's own. Search rows' CPU cost: "
              + (", ".join(f"`{t}` {h:.2f} CPU-h" for t, h in search_cpu.items()) if search_cpu else "none run")
              + ".", ""]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agent", action="append", default=[], metavar="TASK=AGENT[@POLICY]",
                        help="a task and its network: a shipped agent's name or an agent zip (repeatable); "
                             "@POLICY pairs this row with POLICY instead of the task's best reference (e.g. the best "
                             "non-preemptive one)")
    parser.add_argument("--search", action="append", default=[], metavar="TASK=AGENT[@POLICY][,KEY=VALUE...]",
                        help="a task and the network that guides the non-clairvoyant search (repeatable); KEY=VALUE "
                             "pairs override the search settings of this row (sims, samples, depth, c_uct, "
                             "candidates, final, fallback, leaf); @POLICY as for --agent")
    parser.add_argument("--reference", action="append", default=[], metavar="TASK=POLICY",
                        help="the task's best reference as chosen on its validation seeds (docs/suite.md's cards); "
                             "default: choose it again here on the validation seeds")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--executor", default="local", choices=("local", "ray"), help="where search episodes run")
    parser.add_argument("--ray-address", default=None)
    parser.add_argument("--write", help="write the Markdown board here (and a .json beside it)")
    args = parser.parse_args(argv)
    if args.workers < 1:
        parser.error("--workers must be >= 1")
    if not args.agent and not args.search:
        parser.error("name at least one --agent or --search")
    references = _pairs(parser, args.reference, "--reference")
    jobs = [("network", *_pair(parser, item, "--agent"), {}) for item in args.agent] + \
        [("search", task, *_search_overrides(parser, item))
         for task, item in (_pair(parser, item, "--search") for item in args.search)]
    order = [t.name for t in _tasks()]
    jobs.sort(key=lambda job: order.index(job[1]) if job[1] in order else len(order))  # suite order, stable
    rows, search_cpu = [], {}
    bounds: dict[str, np.ndarray] = {}  # the LP bounds of a task's test episodes, solved once for all its rows

    def bounds_of(name: str) -> np.ndarray:
        if name not in bounds:
            from ddl_gym.suite import get_task

            task = get_task(name)
            bounds[name] = _lp_bounds(task, list(task.test_seeds))
        return bounds[name]

    from ddl_gym.report_paths import ResumeFile

    resume = ResumeFile(args.write, _partial_settings(jobs, references), "rows")
    try:
        done = resume.load()
    except ValueError as exc:
        print(f"suite_eval: {exc} (it records the rows asked for, the references, agent files and code)",
              file=sys.stderr)
        return 2
    if done:
        print(f"suite_eval: resuming after {len(done)} of {len(jobs)} rows from {resume.path}", file=sys.stderr)
    kept: list[dict[str, Any]] = []
    for index, (what, task, agent, overrides) in enumerate(jobs):
        if index < len(done):  # made under these exact settings by an interrupted run
            rows.append(AgentRow(**done[index]["row"]))
            if done[index].get("search_cpu_h") is not None:
                search_cpu[task] = search_cpu.get(task, 0.0) + float(done[index]["search_cpu_h"])
            kept.append(done[index])
            continue
        cpu_h = None
        if what == "network":
            agent, versus = split_versus(agent)
            rows.append(score_agent(task, agent, workers=args.workers, reference=versus or references.get(task),
                                    lp_bounds=bounds_of(task)))
            if versus:
                rows[-1].kind += f" (vs `{versus}`, not the best reference)"
        else:
            from ddl_gym.suite import get_task
            from ddl_gym.suite_cards import best_reference

            agent, versus = split_versus(agent)
            reference = versus or references.get(task) or best_reference(get_task(task), workers=args.workers)[0]
            score = score_search(task, agent, reference, executor=args.executor, workers=args.workers,
                                 ray_address=args.ray_address, lp_bounds=bounds_of(task), **overrides)
            rows.append(score.row)
            if versus:
                rows[-1].kind += f" (vs `{versus}`, not the best reference)"
            cpu_h = score.cpu_hours
            search_cpu[task] = search_cpu.get(task, 0.0) + score.cpu_hours
        print(json.dumps(asdict(rows[-1])), file=sys.stderr, flush=True)
        kept.append({"row": asdict(rows[-1]), "search_cpu_h": cpu_h})
        resume.save(kept)  # a long board survives an interruption: rerun the same command to resume
    command = "python -m ddl_gym.agents.suite_eval " + " ".join(
        [f"--agent {a}" for a in args.agent] + [f"--search {a}" for a in args.search]
        + [f"--reference {r}" for r in args.reference] + ([f"--workers {args.workers}"] if args.workers > 1 else []))
    text = board_markdown(rows, command + (f" --write {args.write}" if args.write else ""), search_cpu)
    print(text)
    if args.write:
        out = Path(args.write)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text)
        out.with_suffix(".json").write_text(json.dumps([asdict(r) for r in rows], indent=2) + "\n")
        resume.remove()
    return 0


def _partial_settings(jobs: Sequence[tuple[str, str, str, dict[str, Any]]],
                      references: dict[str, str]) -> dict[str, Any]:
    """What a board's rows depend on, by content: the rows asked for, the references, the bytes of every
    agent file and the code (a partial file made under anything else is refused)."""
    from ddl_gym.fingerprint import code_fingerprint

    digests = []
    for _what, _task, agent, _overrides in jobs:
        try:
            digests.append(agent_digest(agent))
        except ConfigError:
            digests.append("unresolved")  # the row itself reports the error
    return {"code": code_fingerprint(), "jobs": [[w, t, a, {k: str(v) for k, v in sorted(o.items())}]
                                                 for w, t, a, o in jobs],
            "references": dict(sorted(references.items())), "agent_sha256": digests}


def _tasks() -> Sequence[Any]:
    from ddl_gym.suite import TASKS

    return TASKS


def _pair(parser: argparse.ArgumentParser, item: str, option: str) -> tuple[str, str]:
    key, sep, value = item.partition("=")
    if not sep or not key or not value:
        parser.error(f"{option} takes TASK=VALUE, got {item!r}")
    return key, value


def _search_overrides(parser: argparse.ArgumentParser, item: str) -> tuple[str, dict[str, Any]]:
    """``AGENT,KEY=VALUE,...`` → the agent and its search-setting overrides, typed as the settings' fields."""
    from ddl_gym.agents.search_eval import SearchSettings

    agent, *pairs = item.split(",")
    fields = {f.name: f.type for f in dataclasses.fields(SearchSettings)}
    overrides: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or key not in fields:
            parser.error(f"--search {item!r}: {pair!r} is not KEY=VALUE with KEY one of {', '.join(fields)}")
        if key in overrides:
            parser.error(f"--search {item!r}: {key} given twice")
        kind = {"int": int, "float": float}.get(str(fields[key]), str)
        try:
            overrides[key] = kind(value)
        except ValueError:
            parser.error(f"--search {item!r}: {key} must be {kind.__name__}, got {value!r}")
    try:  # checked before any row is computed: a bad value must not cost the rows before it
        SearchSettings(**overrides)
    except ConfigError as exc:
        parser.error(f"--search {item!r}: {exc}")
    return agent, overrides


def _pairs(parser: argparse.ArgumentParser, items: Sequence[str], option: str) -> dict[str, str]:
    return dict(_pair(parser, item, option) for item in items)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (ConfigError, ValueError) as exc:
        raise SystemExit(f"suite_eval: {exc}") from None
