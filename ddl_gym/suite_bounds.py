"""How much room the suite's tasks really leave: the cards' LP bound beside the non-preemptive one.

``python -m ddl_gym.suite_bounds --write docs/suite-bounds.md`` (and ``docs/suite-bounds.json``) takes,
for every task, its card (``docs/suite.json``: best reference, its avg JCT and the general LP bound per
test seed) and computes on the same test episodes the start-time LP bound of
:mod:`ddl_gym.sim.lower_bound_np`, which holds for every schedule that never preempts — every
reference but ``las``/``gittins``, every ``DDLCluster`` agent and the search. Per task it reports:

* the general bound (the cards'), the non-preemptive bound and their per-seed maximum, the
  **strong bound** (valid for non-preemptive schedules);
* the LP headroom of the best *non-preemptive* reference (the card's best reference, or its
  ``nonpreemptive_reference`` where the best one preempts) under the general and the strong bound,
  per test seed ``(reference − bound) / bound``, mean ± 95 % CI;
* for every network row of the agent board (``docs/suite-agents.json``), the fraction of the gap
  (reference → bound) it closes under each bound (means over the test seeds, as on the board).

The cards and the board keep the general bound: it is the one valid for the preemptive references
too. This report says how much of that headroom is only reachable by preempting.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any, Sequence

import numpy as np

from ddl_gym.report_paths import signed_pct, write_report
from ddl_gym.sim.lower_bound_np import DEFAULT_NP_PERIODS
from ddl_gym.suite import TASKS, get_task
from ddl_gym.suite_cards import DEFAULT_JSON as CARDS_JSON
from ddl_gym.suite_cards import REPO_ROOT, _episode, _map, load_cards, preempts

DEFAULT_DOC = REPO_ROOT / "docs" / "suite-bounds.md"
BOARD_JSON = REPO_ROOT / "docs" / "suite-agents.json"


def _np_bound(job: tuple[str, int, int]) -> float:
    from ddl_gym.scenarios import get_scenario
    from ddl_gym.sim.lower_bound_np import scenario_nonpreemptive_lower_bound

    scenario, seed, periods = job
    return scenario_nonpreemptive_lower_bound(get_scenario(scenario), seed, periods=periods).avg_jct_s


def task_bounds(task_name: str, cards: dict[str, Any], *, periods: int = DEFAULT_NP_PERIODS,
                workers: int = 1) -> dict[str, Any]:
    """One task's figures (module docstring) from its card and fresh non-preemptive bounds."""
    from ddl_gym.harness import mean_ci

    task = get_task(task_name)
    card = cards[task_name]
    seeds = list(card.test_seeds)
    general = np.array(card.lp_bound_per_seed, dtype=float)
    if general.size != len(seeds):
        raise ValueError(f"{CARDS_JSON}: card {task_name!r} has no per-seed LP bounds; regenerate the cards")
    strong_np = np.array(_map(_np_bound, [(task.scenario, s, periods) for s in seeds], workers))
    strong = np.maximum(general, strong_np)
    if preempts(card.best_reference):
        reference = card.nonpreemptive_reference
        ref_jct = np.array([r["avg_jct_s"] for r in _map(_episode, [(task.scenario, reference, s) for s in seeds],
                                                         workers)])
    else:
        reference = card.best_reference
        ref_jct = np.array(card.best_jct_per_seed, dtype=float)
    if np.any(ref_jct < strong):  # the proof says this cannot happen: fail loudly, never print it
        seed = seeds[int(np.flatnonzero(ref_jct < strong)[0])]
        raise AssertionError(f"task {task_name}: {reference} beat the non-preemptive LP bound on seed {seed}")
    head_general, ci_general, _ = mean_ci((ref_jct - general) / general)
    head_strong, ci_strong, _ = mean_ci((ref_jct - strong) / strong)
    return {
        "task": task_name, "tier": task.tier, "reference": reference,
        "best_reference": card.best_reference, "test_seeds": seeds, "periods": periods,
        "reference_jct_s": float(ref_jct.mean()), "general_bound_s": float(general.mean()),
        "nonpreemptive_bound_s": float(strong_np.mean()), "strong_bound_s": float(strong.mean()),
        "headroom_general": head_general, "headroom_general_ci": ci_general,
        "headroom_strong": head_strong, "headroom_strong_ci": ci_strong,
        "nonpreemptive_bound_per_seed": [float(x) for x in strong_np],
        "reference_jct_per_seed": [float(x) for x in ref_jct],
    }


#: The ``kind`` suffix of a board row whose agent may preempt (``agents/suite_eval.network_kind`` writes it).
PREEMPTIVE_KIND = ", preemptive"


def is_preemptive_row(row: dict[str, Any]) -> bool:
    """Whether a board row's schedules may preempt (its ``kind`` says so): only the general LP bound holds."""
    return PREEMPTIVE_KIND in str(row.get("kind", ""))


def agent_rows(board: dict[str, Any] | list[dict[str, Any]], tasks: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Network rows of the board against each task's non-preemptive reference, gap closed under both bounds.

    Rows of agents that may preempt (``kind`` ends in ``", preemptive"``) are left out: the non-preemptive
    bound does not hold for their schedules."""
    rows = board["rows"] if isinstance(board, dict) else board
    out = []
    for row in rows:
        t = tasks.get(row["task"])
        if t is None or not str(row.get("kind", "")).startswith("network") or row["reference"] != t["reference"] \
                or is_preemptive_row(row):
            continue
        ref, agent = t["reference_jct_s"], float(row["agent_avg_jct_s"])
        if not math.isclose(ref, float(row["reference_avg_jct_s"]), rel_tol=1e-9):
            raise ValueError(f"{BOARD_JSON}: {row['task']} reference {row['reference']} has avg JCT "
                             f"{row['reference_avg_jct_s']} on the board but {ref} in the cards; regenerate the board")
        out.append({"task": row["task"], "agent": row["agent"], "kind": row["kind"], "agent_avg_jct_s": agent,
                    "gap_closed_general": (ref - agent) / (ref - t["general_bound_s"]),
                    "gap_closed_strong": (ref - agent) / (ref - t["strong_bound_s"])})
    return out


def bounds_markdown(data: dict[str, Any]) -> str:
    """The whole ``docs/suite-bounds.md`` from its JSON."""
    lines = [
        "# Headroom under the non-preemptive LP bound", "",
        f"Generated by `{data['command']}` — do not edit by hand. Bounds: `ddl_gym/sim/lower_bound.py` (general, "
        "valid for every schedule; the cards' and the board's) and `ddl_gym/sim/lower_bound_np.py` (start-time LP, "
        f"valid for schedules that never preempt; {data['periods']} start periods). Strong bound = the larger of the "
        "two per episode. Test seeds of each task; the reference is the best non-preemptive one on the validation "
        "seeds (the card's best reference unless that one preempts).", "",
        "| task | tier | reference | its avg JCT (s) | general bound (s) | non-preemptive bound (s) | strong bound (s) "
        "| headroom, general | headroom, strong |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for t in data["tasks"]:
        lines.append(f"| `{t['task']}` | {t['tier']} | `{t['reference']}` | {t['reference_jct_s']:.0f} | "
                     f"{t['general_bound_s']:.0f} | {t['nonpreemptive_bound_s']:.0f} | {t['strong_bound_s']:.0f} | "
                     f"{signed_pct(t['headroom_general'], t['headroom_general_ci'])} | "
                     f"{signed_pct(t['headroom_strong'], t['headroom_strong_ci'])} |")
    rich = [t["task"] for t in data["tasks"] if t["tier"] == "realistic" and t["headroom_strong"] >= 0.20]
    lines += ["", f"Realistic tasks whose reference sits ≥ 20 % above the strong bound: {len(rich)} "
              f"({', '.join(f'`{x}`' for x in rich) or 'none'}).", ""]
    if data["agents"]:
        lines += ["## Fraction of the gap closed by the board's agents (network and network + search rows)", "",
                  "Gap = reference's avg JCT − bound (means over the test seeds, as on `docs/suite-agents.md`).", "",
                  "| task | agent | agent avg JCT (s) | gap closed, general | gap closed, strong |",
                  "|---|---|---:|---:|---:|"]
        for a in data["agents"]:
            lines.append(f"| `{a['task']}` | `{a['agent']}` | {a['agent_avg_jct_s']:.0f} | "
                         f"{100 * a['gap_closed_general']:.0f}% | {100 * a['gap_closed_strong']:.0f}% |")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None, prog: str = "python -m ddl_gym.suite_bounds") -> int:
    parser = argparse.ArgumentParser(prog=prog, description="the suite's headroom under the non-preemptive LP bound")
    parser.add_argument("--task", action="append", help="only this task (repeatable; default: every task)")
    parser.add_argument("--periods", type=int, default=DEFAULT_NP_PERIODS, help="start periods of the LP")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--write", default=None, help="write the markdown there (and the JSON beside it)")
    parser.add_argument("--no-agents", action="store_true",
                        help="leave out the board's agents (default: read docs/suite-agents.json, which must exist)")
    args = parser.parse_args(argv)
    if args.periods < 1:
        parser.error(f"--periods must be >= 1, got {args.periods}")
    try:
        names = [get_task(n).name for n in args.task] if args.task else [t.name for t in TASKS]
        cards = load_cards(CARDS_JSON)
    except (OSError, ValueError) as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 2
    missing = [n for n in names if n not in cards]
    if missing:
        print(f"{prog}: {CARDS_JSON} has no card for {', '.join(missing)}; regenerate the cards", file=sys.stderr)
        return 2
    board: Any = []
    if not args.no_agents:  # read before the bounds are solved, so a bad board costs nothing
        try:
            board = json.loads(BOARD_JSON.read_text())
        except OSError as exc:
            print(f"{prog}: cannot read the board {BOARD_JSON} ({exc.strerror}); generate it first "
                  "(docs/suite-agents.md's command) or pass --no-agents", file=sys.stderr)
            return 2
        except ValueError:
            print(f"{prog}: the board {BOARD_JSON} is not valid JSON; regenerate it", file=sys.stderr)
            return 2
    tasks = []
    for name in names:
        tasks.append(task_bounds(name, cards, periods=args.periods, workers=max(1, args.workers)))
        t = tasks[-1]
        print(f"{name}: headroom {signed_pct(t['headroom_general'])} -> {signed_pct(t['headroom_strong'])}", file=sys.stderr,
              flush=True)
    by_task = {t["task"]: t for t in tasks}
    command = prog + "".join(f" --task {n}" for n in args.task or []) \
        + (f" --periods {args.periods}" if args.periods != DEFAULT_NP_PERIODS else "") \
        + (" --no-agents" if args.no_agents else "") + (f" --write {args.write}" if args.write else "")
    try:
        data = {"command": command, "periods": args.periods, "tasks": tasks, "agents": agent_rows(board, by_task)}
    except ValueError as exc:  # the board disagrees with the cards: it must be regenerated first
        print(f"{prog}: {exc}", file=sys.stderr)
        return 2
    text = bounds_markdown(data)
    if args.write:
        doc, data_file = write_report(args.write, text, data)
        print(f"wrote {doc} and {data_file}", file=sys.stderr)
    else:
        print(text)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
