"""The leaderboard: shipped agents against every applicable reference policy, one folder per scenario.

``ddl-gym leaderboard --rebuild`` (or ``python -m ddl_gym.leaderboard``) regenerates, for each
board in :data:`BOARDS`, ``leaderboard/<scenario>/``:

* ``results.csv`` — one row per policy: mean and 95 % CI of avg JCT, makespan and p95 JCT (and of
  the board's own metric where it is another one) over the held-out seeds, and the paired per-seed
  relative change of the board's metric against the scenario's best reference policy (mean ± 95 %
  CI, seeds better);
* ``README.md`` — protocol, the table, the verdicts (rules below, computed here) and the
  command;
* ``paired.png`` (paired changes with CIs), ``metrics.png`` and ``jct_cdf.png`` (from the harness).

Raw per-seed and per-job rows go to ``results/leaderboard/<scenario>/`` (the harness's
``summary.csv`` / ``jobs.csv``; reused by a rerun unless ``--overwrite``), not into git.

Protocol (the same for every board):

* **Episodes**: held-out seeds :data:`HELD_OUT_SEEDS` (1 000 000 …); episode ``s`` is
  ``scenario.episode(s)`` for every policy. Agents never trained on these seeds, and trace-window
  boards draw their windows from the evaluation split (:mod:`ddl_gym.workloads.windows`).
* **Metric**: each board ranks by one metric, the objective of the paper its scenario comes from
  (:attr:`Board.metric`): avg JCT for the all-reduce and pipeline boards, total weighted completion
  time for A-Online's world (Zhou et al. minimise it), total utility for SMD's interval (Yu et al.
  maximise it; higher is better).
* **Best reference**: among the reference policies that ran, the one with the best mean metric
  over the *selection* seeds :data:`SELECTION_SEEDS` (2 000 000 …, disjoint from the comparison seeds;
  one choice per board, never per seed). Choosing it on the seeds it is then compared on would favour
  it (the best of 13 noisy means is optimistic on those same seeds: selection bias); on disjoint
  seeds the comparison is unbiased.
* **Paired change** of policy ``p``: ``r_s = 100·(m_p,s − m_ref,s) / m_ref,s`` per seed;
  mean ± ``t₀.₉₇₅,ₙ₋₁·sd/√n`` (:func:`ddl_gym.harness.paired_differences`, as ``ddl-gym compare``).
* **Verdicts** (:func:`verdicts`): *goal met* when the agent's mean paired change is ≤ −10 % (≥ +10 %
  where higher is better); *not worse than the best reference* when its mean paired change is within
  its CI half-width of 0 on the worse side (the interval reaches 0 or the better side).
* **Bound** (avg JCT boards): the mean over jobs of each job's uncontended run time on its most consolidated
  placement, averaged over seeds — no schedule's avg JCT can be lower (a job's JCT is at least its
  run time, and contention and spreading only slow it down). ``headroom`` = how far below the
  best reference that bound lies: an agent cannot beat the best reference by more.
* **LP bound** (every board): the certified LP lower bound on avg JCT of
  :mod:`ddl_gym.sim.lower_bound` (time-indexed mean-busy-time relaxation, valid for any schedule),
  per seed, averaged; *LP headroom* = per seed ``(best reference − LP bound) / LP bound``, mean ±
  95 % CI. Boards whose engine or rate model the bound's proof does not cover say so, with the reason.
"""

from __future__ import annotations

import argparse
import math
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from ddl_gym.sim.model import ConfigError

REPO_ROOT = Path(__file__).resolve().parents[1]
#: Held-out evaluation seeds of every board (never used by training or model selection).
HELD_OUT_SEEDS: tuple[int, ...] = tuple(range(1_000_000, 1_000_020))
#: Seeds on which the best reference is chosen: disjoint from the comparison seeds (no selection bias).
SELECTION_SEEDS: tuple[int, ...] = tuple(range(2_000_000, 2_000_010))
#: Relative improvement the issue asks of the shipped agent over the best reference.
GOAL_PCT = -10.0
METRICS: tuple[str, ...] = ("avg_jct_s", "makespan_s", "p95_jct_s")
#: Reference candidates for job-level all-reduce scenarios: classic orders x placements and SJF-BCO.
CLASSIC_REFERENCES: tuple[str, ...] = tuple(f"{o}+{p}" for o in ("srsf", "sjf", "fifo") for p in ("ca", "pack", "ff", "ls"))
#: Paper policies tried on every board; those whose model does not fit the scenario (Ada-SRSF needs the
#: task-level all-reduce model, A-SRPT pipeline jobs) are listed as not applicable with the reason.
PAPER_REFERENCES: tuple[str, ...] = ("sjf-bco", "ada-srsf", "a-srpt")


@dataclass(frozen=True)
class Board:
    """One leaderboard: a scenario, its reference candidates, the agents shown, notes."""

    scenario: str
    references: tuple[str, ...] = CLASSIC_REFERENCES + PAPER_REFERENCES
    agents: tuple[str, ...] = ()
    title: str = ""
    note: str = ""
    seeds: tuple[int, ...] = HELD_OUT_SEEDS
    #: Seeds the best reference is chosen on (must not overlap ``seeds``).
    selection_seeds: tuple[int, ...] = SELECTION_SEEDS
    #: The summary metric the board ranks by (a column of the harness's ``summary.csv``).
    metric: str = "avg_jct_s"

    @property
    def higher_is_better(self) -> bool:
        from ddl_gym.harness import HIGHER_IS_BETTER

        return self.metric in HIGHER_IS_BETTER

    @property
    def metric_label(self) -> str:
        return METRIC_LABELS.get(self.metric, self.metric)


#: Column headers of the board metrics (a board's ``metric`` must be one of these).
METRIC_LABELS: dict[str, str] = {"avg_jct_s": "avg JCT (s)", "makespan_s": "makespan (s)", "p95_jct_s": "p95 JCT (s)",
                                 "weighted_completion": "total weighted completion (s)",
                                 "total_utility": "total utility"}


_SMD_REFERENCES: tuple[str, ...] = ("smd", "smd-fc", "smd-literal", "smd-opt", "esw", "optimus", "optimus-official")
_AONLINE_REFERENCES: tuple[str, ...] = ("a-online", "a-online-listing", "a-online-paper", "fifo-mr", "drf", "antman",
                                        "tiresias", "tiresias-dlas")
_TRANSFER_NOTE = ("`agent-transfer` never trained on these episodes: its training episodes were `transfer-train` seeds "
                  "30000–30299 (Philly/Alibaba windows from the *training* splits only) and `default` seeds "
                  "20000–20059; see `leaderboard/agents/README.md`.")
BOARDS: tuple[Board, ...] = (
    Board("default", agents=("agent-transfer",),
          title="The default scenario: 16 × 4 GPUs, 100 Gb/s NICs, 160 jobs (paper mix) over 80 min.",
          note=_TRANSFER_NOTE),
    Board("philly-windows", agents=("agent-transfer",),
          title="160-job windows of the Philly (Pollux table) trace's held-out evaluation split on the default cluster.",
          note=_TRANSFER_NOTE),
    Board("alibaba-windows", agents=("agent-transfer",),
          title="160-job windows of the Alibaba GPU v2023 trace's held-out evaluation split (fractional GPUs as whole "
                "GPUs) on the default cluster.",
          note=_TRANSFER_NOTE),
    Board("asrpt-small",
          references=("a-srpt", "a-srpt-backfill", "a-srpt-perfect", "spjf", "spwf", "wcs-duration", "wcs-workload",
                      "wcs-subtime", *CLASSIC_REFERENCES, "sjf-bco"),
          title="A-SRPT's pipeline (mixed-parallel) jobs: 8 × 8 V100, 10 Gb/s, 200-job windows of a recurring trace "
                "(the scenario of `DDLCluster-ASRPT-v0`). Reference policies only: no agent is shipped for it yet.",
          note="Only `a-srpt` (strict head of line, Alg. 1 line 25), `a-srpt-backfill` and the SPJF/SPWF/WCS baselines "
               "(best-fit servers, their default since issue 32) schedule on the random forest's *predicted* iteration "
               "counts, as in the paper; jobs of groups unseen in training are predicted the training median (the "
               "default unseen-job rule since issue 32; the paper predicts 0). `a-srpt-perfect` and the classic "
               "`sjf`/`srsf` orders rank jobs by their *true* iteration counts (clairvoyant), so they are oracle "
               "references here, not policies a scheduler could run on this trace; `fifo` needs no job sizes."),
    *(Board(f"smd-{mode}", references=_SMD_REFERENCES, metric="total_utility",
            title=f"SMD's interval world (Yu et al. INFOCOM'21 §V): 50 {mode.upper()}-SGD parameter-server jobs with sigmoid "
                  "utilities compete for one interval of pooled resources; admission by reservation. Ranked by total "
                  "utility (the paper's objective; higher is better). Reference policies only: no agent is shipped for it.",
            note="`smd-opt` is the exact optimum of the interval problem (integer inner optimum per job + exact MKP "
                 "MILP), so it is an upper reference, not a competitor; `smd-fc` uses the paper's Frieze-Clarke MKP "
                 "scheme, `smd` the exact MKP. Avg JCT and makespan are over the admitted jobs only.")
      for mode in ("sync", "async")),
    Board("aonline-ps-small", references=_AONLINE_REFERENCES, agents=("aonline-ppo",), metric="weighted_completion",
          title="A-Online's world, small (Zhou et al. §7): 30 elastic parameter-server jobs on 12 EC2-shaped "
                "multi-resource servers over T = 40 slots. Ranked by total weighted completion time (the paper's "
                "objective; lower is better).",
          note="`aonline-ppo` is MaskablePPO on `DDLClusterElastic-v0` trained on `aonline-ps-small` seeds from 10 000 "
               "on (see `elastic-agent/README.md`); it never saw these seeds. `tiresias` is clairvoyant (2D-SRSF on "
               "true sizes) as §7 (iv) defines it."),
)


# ============================================================================ statistics
def verdicts(change_pct: float, ci_pct: float, higher_is_better: bool = False) -> dict[str, bool]:
    """The two stated rules (module docstring) for an agent's paired change against the best reference."""
    gain = change_pct if higher_is_better else -change_pct  # > 0: better than the reference
    return {"goal_met": gain >= -GOAL_PCT,
            "not_worse": -gain <= (ci_pct if math.isfinite(ci_pct) else 0.0)}


def uncontended_bound(scenario: Any, seed: int) -> float:
    """Mean uncontended, most-consolidated run time over the jobs of ``scenario.episode(seed)``."""
    from ddl_gym.sim.engine import Simulator
    from ddl_gym.sim.priority import nominal_runtimes

    cluster, workload = scenario.episode(seed)
    return float(nominal_runtimes(Simulator(cluster, workload, scenario.model)).mean())


# ============================================================================ building
def _applicable(references: Sequence[str], scenario: Any, seed: int) -> tuple[list[str], dict[str, str]]:
    """References that build and finish one episode quickly enough to be checked; the rest with reasons."""
    from ddl_gym.harness import load_policy_spec, simulate

    ok: list[str] = []
    skipped: dict[str, str] = {}
    for name in references:
        try:
            policy = load_policy_spec(name)
            simulate(policy, scenario, seed)
        except (ConfigError, NotImplementedError, ValueError) as exc:
            skipped[name] = str(exc).splitlines()[0].split("; ")[0]
            continue
        ok.append(name)
    return ok, skipped


@dataclass
class BoardResult:
    board: Board
    summary: pd.DataFrame
    table: pd.DataFrame
    best_reference: str
    bound: float | None  # avg JCT boards only
    skipped: dict[str, str] = field(default_factory=dict)
    lp_bound: float | None = None  # mean LP lower bound on avg JCT over the seeds
    lp_headroom: tuple[float, float] | None = None  # (mean, 95% CI half-width) of (best ref − LP) / LP, in %
    lp_note: str = ""  # why there is no LP bound (unsupported engine / model)
    #: reference -> its mean metric over the selection seeds (the best reference's choice)
    selection_means: dict[str, float] = field(default_factory=dict)
    selection_seeds: tuple[int, ...] = ()


def run_board(board: Board, *, cache: Path, workers: int | None = None, overwrite: bool = False,
              seeds: Sequence[int] | None = None, progress: bool = False) -> BoardResult:
    """Evaluate one board through the harness and compute its table (no files under leaderboard/)."""
    from ddl_gym.harness import evaluate, mean_ci, paired_differences
    from ddl_gym.scenarios import get_scenario

    scenario = get_scenario(board.scenario)
    seeds = list(seeds if seeds is not None else board.seeds)
    references, skipped = _applicable(board.references, scenario, seeds[0])
    agents = list(board.agents)  # registry names (agents/shipped.py)
    results = evaluate(references + agents, board.scenario, seeds, cache, workers=workers, overwrite=overwrite,
                       progress=progress, echo=False, plots=True)
    summary = results.summary
    metric = board.metric
    pivot = summary.pivot(index="seed", columns="policy", values=metric)
    selection = tuple(board.selection_seeds)
    if not selection or set(selection) & set(seeds):
        raise ConfigError(f"board {board.scenario!r}: the selection seeds must be given and disjoint from the "
                          f"comparison seeds (overlap: {sorted(set(selection) & set(seeds))[:5]})")
    chosen = evaluate(references, board.scenario, list(selection), cache / "selection", workers=workers,
                      overwrite=overwrite, progress=progress, echo=False, plots=False).summary
    ref_means = chosen.groupby("policy")[metric].mean()
    best = str(ref_means.idxmax() if board.higher_is_better else ref_means.idxmin())
    bound = float(np.mean([uncontended_bound(scenario, s) for s in seeds])) if metric == "avg_jct_s" else None
    paired = paired_differences(summary, best, [metric]).set_index("policy")
    rows = []
    for policy, group in summary.groupby("policy", sort=False):
        row: dict[str, Any] = {"scenario": board.scenario, "policy": policy,
                               "kind": "agent" if policy in board.agents else "reference",
                               "seeds": int(group["seed"].nunique())}
        for column in _metrics(board):
            mean, half, _ = mean_ci(group[column])
            row[f"{column}_mean"], row[f"{column}_ci95"] = mean, half
        if policy == best:
            change, half, better = 0.0, 0.0, 0
        else:
            r = paired.loc[policy]
            change, half, better = float(r["rel_pct_mean"]), float(r["rel_pct_ci"]), int(r["better"])
        row.update(metric=metric, vs_best_reference=best, change_pct=change, change_ci95_pct=half, seeds_better=better)
        rows.append(row)
    table = pd.DataFrame(rows).sort_values(f"{metric}_mean", ascending=not board.higher_is_better,
                                           kind="stable").reset_index(drop=True)
    lp_bound, lp_headroom, lp_note = lp_bound_figures(scenario, seeds, pivot[best] if metric == "avg_jct_s" else
                                                      summary.pivot(index="seed", columns="policy",
                                                                    values="avg_jct_s")[best])
    return BoardResult(board, summary, table, best, bound, skipped, lp_bound, lp_headroom, lp_note,
                       selection_means={str(k): float(v) for k, v in ref_means.items()}, selection_seeds=selection)


def lp_bound_figures(scenario: Any, seeds: Sequence[int], best_avg_jct: pd.Series
                     ) -> tuple[float | None, tuple[float, float] | None, str]:
    """Mean LP lower bound over ``seeds``, the best reference's LP headroom (mean, CI; %), or why there is none."""
    from ddl_gym.harness import mean_ci
    from ddl_gym.sim.lower_bound import LowerBoundUnsupported, scenario_lower_bound

    try:
        bounds = {s: scenario_lower_bound(scenario, s).avg_jct_s for s in seeds}
    except LowerBoundUnsupported as exc:
        return None, None, str(exc).removeprefix("LP lower bound: ")
    heads = [100.0 * (float(best_avg_jct.loc[s]) - b) / b for s, b in bounds.items()]
    mean, half, _ = mean_ci(heads)
    return float(np.mean(list(bounds.values()))), (mean, half), ""


def _metrics(board: Board) -> tuple[str, ...]:
    """The table's metrics: the board's own first, then avg JCT, makespan and p95 JCT."""
    return (board.metric, *(m for m in METRICS if m != board.metric))


def _headroom(result: BoardResult) -> float | None:
    """How far (%) below the best reference's avg JCT the bound lies; None without a bound."""
    if result.bound is None:
        return None
    best = result.table.set_index("policy").loc[result.best_reference, "avg_jct_s_mean"]
    return 100.0 * (result.bound - best) / best


# ============================================================================ writing
def _fmt(mean: float, half: float, digits: int = 0) -> str:
    spec = ".3e" if abs(mean) >= 1e8 else f".{digits}f"  # totals such as weighted completion: 1.679e+10
    if not math.isfinite(half):
        return f"{mean:{spec}}"
    return f"{mean:{spec}} ± {half:{spec}}"


def _paired_plot(result: BoardResult, path: Path) -> Path:
    from ddl_gym import plots as plotting

    table = result.table[result.table["policy"] != result.best_reference]
    fig = plotting._figure(7.0, 0.35 * len(table) + 1.4)
    ax = fig.add_subplot(111)
    y = np.arange(len(table))
    colours = ["tab:red" if k == "agent" else "tab:gray" for k in table["kind"]]
    ax.barh(y, table["change_pct"], xerr=table["change_ci95_pct"].fillna(0), color=colours, capsize=3)
    ax.set_yticks(y)
    ax.set_yticklabels(table["policy"])
    ax.axvline(0, color="black", lw=0.8)
    board = result.board
    ax.axvline(-GOAL_PCT if board.higher_is_better else GOAL_PCT, color="tab:green", lw=0.8, ls="--")
    headroom = _headroom(result)
    if headroom is not None:
        ax.axvline(headroom, color="tab:blue", lw=0.8, ls=":")
    label = board.metric_label.replace(" (s)", "")
    goal = f"{-GOAL_PCT if board.higher_is_better else GOAL_PCT:+.0f}%"
    ax.set_xlabel(f"{label} vs {result.best_reference}, % per seed (95% CI); green: {goal} goal"
                  + (", blue: bound" if headroom is not None else ""))
    ax.set_title(f"{result.board.scenario}: paired change against the best reference")
    ax.invert_yaxis()
    return plotting._save(fig, path)


def write_board(result: BoardResult, folder: Path, cache: Path, command: str) -> list[Path]:
    """Write ``results.csv``, ``README.md`` and the plots of one board."""
    folder.mkdir(parents=True, exist_ok=True)
    board, table = result.board, result.table
    csv_path = folder / "results.csv"
    table.round(4).to_csv(csv_path, index=False)
    written = [csv_path, _paired_plot(result, folder / "paired.png")]
    for name in ("metrics.png", "jct_cdf.png"):
        if (cache / name).exists():
            shutil.copyfile(cache / name, folder / name)
            written.append(folder / name)
    headroom = _headroom(result)
    label = board.metric_label
    sense = "highest" if board.higher_is_better else "lowest"
    seeds = sorted(result.summary["seed"].unique().tolist())
    lines = [f"# Leaderboard: `{board.scenario}`", ""]
    if board.title:
        lines += [board.title, ""]
    lines += [
        "Generated by `" + command + "` (do not edit by hand). Protocol: `ddl_gym/leaderboard.py` "
        "(module docstring).", "",
        f"* Episodes: held-out seeds {seeds[0]}–{seeds[-1]} ({len(seeds)}); every policy runs the same "
        "episode per seed (`scenario.episode(seed)`).",
        f"* Ranked by **{label.replace(' (s)', '')}** ({'higher' if board.higher_is_better else 'lower'} is better). "
        f"Best reference: **{result.best_reference}**, the {sense} mean {label.replace(' (s)', '')} among "
        f"{int((table['kind'] == 'reference').sum())} reference policies on {len(result.selection_seeds)} separate "
        f"*selection* seeds {min(result.selection_seeds)}–{max(result.selection_seeds)}, disjoint from the comparison "
        "seeds above, so the choice does not favour it on the seeds it is compared on (no selection bias).",
    ]
    if headroom is not None:
        lines.append(f"* Bound (mean uncontended, most-consolidated run time; no schedule goes below): {result.bound:.0f} s, "
                     f"i.e. {headroom:+.1f}% from the best reference — the most any policy could gain here.")
    if result.lp_bound is not None and result.lp_headroom is not None:
        lines.append(f"* LP lower bound (`ddl_gym/sim/lower_bound.py`: certified, no schedule's avg JCT goes below it): "
                     f"{result.lp_bound:.0f} s; the best reference's avg JCT is {result.lp_headroom[0]:+.1f}% ± "
                     f"{result.lp_headroom[1]:.1f}% above it (per seed, 95% CI).")
    else:
        lines.append(f"* LP lower bound: not available for this board ({result.lp_note}).")
    columns = _metrics(board)
    digits = {"total_utility": 2}
    lines += ["", "| policy | kind | " + " | ".join(METRIC_LABELS[c] for c in columns)
              + f" | {label.replace(' (s)', '')} vs best reference, paired | better on |",
              "|---|---|" + "---:|" * (len(columns) + 2)]
    for row in table.itertuples(index=False):
        r = row._asdict()
        change = "—" if r["policy"] == result.best_reference else (
            f"{r['change_pct']:+.1f}% ± {r['change_ci95_pct']:.1f}%")
        name = f"**{r['policy']}**" if r["kind"] == "agent" else r["policy"]
        better = "—" if r["policy"] == result.best_reference else f"{r['seeds_better']}/{r['seeds']}"
        cells = " | ".join(_fmt(r[f"{c}_mean"], r[f"{c}_ci95"], digits.get(c, 0)) for c in columns)
        lines.append(f"| {name} | {r['kind']} | {cells} | {change} | {better} |")
    lines.append("")
    goal_text = f"≥{abs(GOAL_PCT):.0f} % {'above' if board.higher_is_better else 'below'} the best reference"
    for agent in board.agents:
        if agent not in set(table["policy"]):
            continue
        r = table.set_index("policy").loc[agent]
        v = verdicts(float(r["change_pct"]), float(r["change_ci95_pct"]), board.higher_is_better)
        bound = f"; bound {headroom:+.1f}%" if headroom is not None else ""
        goal = ("met" if v["goal_met"] else
                f"not met (needs {-GOAL_PCT if board.higher_is_better else GOAL_PCT:+.0f}%, measured "
                f"{r['change_pct']:+.1f}%{bound})")
        lines.append(f"* `{agent}` vs {result.best_reference}: {goal_text}: **{goal}**; not worse "
                     "than the best reference "
                     f"beyond the CI: **{'held' if v['not_worse'] else 'not held'}**.")
    if result.skipped:
        lines += ["", "References that could not run here: "
                  + "; ".join(f"`{k}` ({v})" for k, v in sorted(result.skipped.items())) + "."]
    if board.note:
        lines += ["", board.note]
    lines += ["", "Files: `results.csv` (this table, unrounded), `paired.png`, `metrics.png`, `jct_cdf.png`; raw rows in "
              f"`{cache.relative_to(REPO_ROOT) if cache.is_relative_to(REPO_ROOT) else cache}/` after a rebuild.", ""]
    readme = folder / "README.md"
    readme.write_text("\n".join(lines))
    written.append(readme)
    return written


def build(boards: Sequence[Board] | None = None, *, root: Path = REPO_ROOT / "leaderboard",
          cache_root: Path = REPO_ROOT / "results" / "leaderboard", workers: int | None = None,
          overwrite: bool = False, seeds: Sequence[int] | None = None, command: str = "ddl-gym leaderboard --rebuild",
          progress: bool = False) -> list[BoardResult]:
    """Evaluate and write every board (``boards=None``: :data:`BOARDS`)."""
    out = []
    for board in boards if boards is not None else BOARDS:
        cache = cache_root / board.scenario
        result = run_board(board, cache=cache, workers=workers, overwrite=overwrite, seeds=seeds, progress=progress)
        write_board(result, root / board.scenario, cache, command)
        out.append(result)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    from ddl_gym.cliargs import OneLineParser, bounded_float, bounded_int, workers_type

    parser = OneLineParser(prog="ddl-gym leaderboard", description="rebuild leaderboard/<scenario>/")
    parser.add_argument("--rebuild", action="store_true", help="evaluate and rewrite the boards")
    parser.add_argument("--scenario", action="append", help="only this board (repeatable)")
    parser.add_argument("--workers", type=workers_type, default=None)
    parser.add_argument("--overwrite", action="store_true", help="recompute runs cached in results/leaderboard/")
    args = parser.parse_args(argv)
    boards = [b for b in BOARDS if not args.scenario or b.scenario in args.scenario]
    if args.scenario and len(boards) != len(set(args.scenario)):
        known = ", ".join(b.scenario for b in BOARDS)
        raise ConfigError(f"unknown board in {args.scenario}; boards: {known}")
    if not args.rebuild:
        for b in boards:
            print(f"{b.scenario:22s} agents: {', '.join(b.agents) or '-'}  ({REPO_ROOT / 'leaderboard' / b.scenario})")
        print("\nrun with --rebuild to evaluate and rewrite them")
        return 0
    command = "ddl-gym leaderboard --rebuild" + "".join(f" --scenario {s}" for s in args.scenario or [])
    for result in build(boards, workers=args.workers, overwrite=args.overwrite, command=command, progress=True):
        print(f"{result.board.scenario}: best reference {result.best_reference}; wrote leaderboard/{result.board.scenario}/",
              file=sys.stderr)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
