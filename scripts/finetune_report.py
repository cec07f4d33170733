"""Report of the attempts to improve on ``agent-transfer`` (issue 14): ``docs/agents/finetune/README.md``.

For every candidate agent (``NAME=SPEC``) it measures, with the harness, the average JCT per
seed on the **validation** seeds 40 000–40 019 of ``default`` and of ``transfer-train`` (disjoint
from every training seed and from the leaderboard's held-out seeds) and pairs it per seed against
``agent-transfer`` (the start point), ``srsf+ca`` (its teacher) and ``srsf+pack`` (the default
board's best reference): mean ± 95 % CI of ``100·(JCT − JCT_ref)/JCT_ref``.

Rule for going further (:func:`beats_start`): the candidate's paired change against
``agent-transfer`` on ``default`` validation has its whole 95 % interval below 0, and on
``transfer-train`` validation it is not worse beyond the CI. Only such a candidate is run on the
leaderboard's held-out protocol (seeds 1 000 000–1 000 019 of ``default``, ``philly-windows``,
``alibaba-windows``, against each board's best reference as recorded in ``leaderboard/<board>/results.csv``).

PPO runs (``--ppo-run DIR``) add their training settings and validation curve (``DIR/curve.jsonl``).

    .venv/bin/python scripts/finetune_report.py --ppo-run runs/finetune/ppo_lr3e-5 \\
        --candidate ppo=maskable-ppo:runs/finetune/ppo_lr3e-5/agent.zip --out docs/agents/finetune
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np

from ddl_gym.report_paths import AGENT_STUDIES

REPO = Path(__file__).resolve().parents[1]
VALIDATION = {"default": range(40_000, 40_020), "transfer-train": range(40_000, 40_020)}
REFERENCES = ("agent-transfer", "srsf+ca", "srsf+pack")
BOARDS = ("default", "philly-windows", "alibaba-windows")


def jcts(spec: str, scenario: str, seeds: Any) -> np.ndarray:
    from ddl_gym.harness import load_policy_spec, simulate
    from ddl_gym.scenarios import get_scenario

    sc, policy = get_scenario(scenario), load_policy_spec(spec)
    return np.array([simulate(policy, sc, int(s)).result.summary()["avg_jct_s"] for s in seeds])


def advance_share(spec: str, scenario: str, seeds: Any) -> float:
    """Share of the agent's greedy decisions that are "advance" (0: wait for the next event) on ``seeds``."""
    from ddl_gym.envs.cluster_env import DDLClusterEnv
    from ddl_gym.harness import load_policy_spec

    policy = load_policy_spec(spec)
    env = DDLClusterEnv(scenario, **policy.env_kwargs)
    actions = []
    for seed in seeds:
        obs, info = env.reset(seed=int(seed))
        policy.reset(seed=int(seed))
        done = False
        while not done:
            actions.append(policy.act(obs, info["action_mask"], info))
            obs, _, terminated, truncated, info = env.step(actions[-1])
            done = terminated or truncated
    return float(np.mean(np.asarray(actions) == 0))


def dagger_summary(spec: str) -> dict[str, Any] | None:
    """For an agent of ``agents/dagger.py``: its fit record and how often the search overruled the driver."""
    path = Path(spec.split(":", 1)[1])
    meta = json.loads(path.with_suffix(".json").read_text())
    if "dagger" not in meta:
        return None
    pairs = [(a, b) for f in meta["dagger"]["files"] for e in json.loads(Path(f).read_text())["episodes"].values()
             for a, b in zip(e["actions"], e["labels"])]
    return dict(meta["dagger"], teacher=meta["bc_expert"], overruled=float(np.mean([a != b for a, b in pairs])))


def paired(x: np.ndarray, ref: np.ndarray) -> dict[str, float]:
    from ddl_gym.harness import mean_ci

    mean, ci, _ = mean_ci(100 * (x - ref) / ref)
    return {"pct": float(mean), "ci": float(ci), "better": int((x < ref).sum()), "worse": int((x > ref).sum())}


def beats_start(validation: dict[str, dict[str, dict[str, float]]]) -> bool:
    """The rule of the module docstring, on a candidate's paired changes against ``agent-transfer``."""
    d, t = validation["default"]["agent-transfer"], validation["transfer-train"]["agent-transfer"]
    return d["pct"] + d["ci"] < 0 and t["pct"] <= t["ci"]


def best_reference(board: str) -> str:
    import pandas as pd

    table = pd.read_csv(REPO / "leaderboard" / board / "results.csv")
    return str(table["vs_best_reference"].iloc[0])


def fmt(p: dict[str, float]) -> str:
    return f"{p['pct']:+.3f}% ± {p['ci']:.3f}% ({p['better']}↓/{p['worse']}↑)"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--candidate", action="append", default=[], help="NAME=SPEC (repeatable)")
    parser.add_argument("--ppo-run", action="append", default=[], help="a fine-tuning run folder (repeatable)")
    parser.add_argument("--out", default=str(AGENT_STUDIES / "finetune"))
    args = parser.parse_args()
    import torch

    torch.set_num_threads(1)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    candidates = dict(c.split("=", 1) for c in args.candidate)
    refs = {sc: {r: jcts(r, sc, seeds) for r in REFERENCES} for sc, seeds in VALIDATION.items()}
    results: dict[str, Any] = {"validation_seeds": {k: f"{v.start}-{v.stop - 1}" for k, v in VALIDATION.items()},
                               "candidates": {}}
    for name, spec in candidates.items():
        val = {}
        for sc, seeds in VALIDATION.items():
            x = jcts(spec, sc, seeds)
            val[sc] = {"avg_jct_s": float(x.mean()), **{r: paired(x, refs[sc][r]) for r in REFERENCES}}
        row: dict[str, Any] = {"spec": spec, "validation": val, "beats_start": beats_start(val),
                               "advance_share_default": advance_share(spec, "default", VALIDATION["default"])}
        if row["beats_start"]:
            from ddl_gym.leaderboard import HELD_OUT_SEEDS

            row["held_out"] = {}
            for board in BOARDS:
                ref = best_reference(board)
                x, y = jcts(spec, board, HELD_OUT_SEEDS), jcts(ref, board, HELD_OUT_SEEDS)
                start = jcts("agent-transfer", board, HELD_OUT_SEEDS)
                row["held_out"][board] = {"best_reference": ref, "avg_jct_s": float(x.mean()), "vs_best": paired(x, y),
                                          "vs_agent_transfer": paired(x, start)}
        row["dagger"] = dagger_summary(spec)
        results["candidates"][name] = row
        print(name, json.dumps(row), flush=True)
    results["ppo_runs"] = {}
    for run in args.ppo_run:
        run_dir = Path(run)
        cfg = json.loads((run_dir / "config.json").read_text())
        temperature = json.loads((run_dir / "temperature.json").read_text())["temperature"]
        curve = [json.loads(r) for r in (run_dir / "curve.jsonl").read_text().splitlines()]
        resumes = json.loads((run_dir / "resumes.json").read_text()) if (run_dir / "resumes.json").exists() else []
        results["ppo_runs"][run_dir.name] = {"config": cfg, "temperature": temperature, "curve": curve, "resumed_at": resumes}
    (out / "results.json").write_text(json.dumps(results, indent=2))
    (out / "README.md").write_text(render(results, " ".join(["scripts/finetune_report.py", *_argv()])))
    print(f"wrote {out / 'README.md'}")
    return 0


def _argv() -> list[str]:
    import sys

    return sys.argv[1:]


def render(results: dict[str, Any], command: str) -> str:
    lines = ["# Improving on `agent-transfer`: PPO fine-tuning and distilled search (issue 14)", "",
             f"Generated by `.venv/bin/python {command}` (do not edit by hand); raw numbers in `results.json`.", "",
             "Validation seeds (never trained on, disjoint from the leaderboard's held-out seeds 1000000+): "
             + ", ".join(f"`{k}` {v}" for k, v in results["validation_seeds"].items())
             + ". Cells: paired change of avg JCT per seed, mean ± 95 % CI (seeds better↓ / worse↑).", ""]
    if results["ppo_runs"]:
        lines += ["## PPO fine-tuning runs (validation curve on `default`)", ""]
        for name, run in results["ppo_runs"].items():
            c = run["config"]
            lines += [f"### `{name}`", "",
                      f"MaskablePPO from `{Path(c['start']).name}`, `{c['scenario']}` seeds {c['train_seeds'][0]}–"
                      f"{c['train_seeds'][1] - 1}, {c['n_envs']} envs × {c['n_steps']} steps per rollout, "
                      f"{c['timesteps']} steps (critic alone for {c['critic_steps']}, lr {c['critic_lr']}), actor lr "
                      f"{c['learning_rate']}, clip {c['clip_range']}, target KL {c['target_kl']}, entropy "
                      f"{c['ent_coef']}, {c['n_epochs']} epochs × batch {c['batch_size']}, γ {c['gamma']}, λ "
                      f"{c['gae_lambda']}, seed {c['seed']}; action-head temperature {run['temperature']:.3f} "
                      f"(median largest probability {c['target_pmax']})."
                      + (f" Resumed from the checkpoint at step(s) {', '.join(map(str, run['resumed_at']))} (the wall "
                         "clock restarts there)." if run.get("resumed_at") else ""), "",
                      "Training return: mean undiscounted return (−Σ JCT in hours) of the last ≤ 100 training "
                      "episodes, with *sampled* actions (— : none yet, or the run predates this column); the other "
                      "columns are the greedy policy on validation seeds; wall includes the validation runs.",
                      "", "| steps | wall (s) | training return | avg JCT (s) | vs srsf+ca | vs srsf+pack |",
                      "|---:|---:|---:|---:|---:|---:|"]
            for r in run["curve"]:
                ret = "—" if r.get("train_return") is None else f"{r['train_return']:.3f}"
                lines.append(f"| {r['timesteps']} | {r['wall_s']} | {ret} | {r['avg_jct_s']:.2f} | "
                             f"{r['vs_srsf+ca_pct']:+.3f}% ± {r['vs_srsf+ca_ci']:.3f}% | "
                             f"{r['vs_srsf+pack_pct']:+.3f}% ± {r['vs_srsf+pack_ci']:.3f}% |")
            lines.append("")
    dag = {n: r["dagger"] for n, r in results["candidates"].items() if r.get("dagger")}
    if dag:
        lines += ["## DAgger rounds (search labels cloned into a copy of `agent-transfer`)", "",
                  "Overruled: share of visited states where the search's label differs from the driving agent's "
                  "action. Accuracy: the network's greedy action equals the label, before → after the fit.", "",
                  "| candidate | teacher | episodes | labels | overruled | accuracy | epochs, lr | search wall (s) | "
                  "fit wall (s) |", "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
        for n, d in dag.items():
            lines.append(f"| `{n}` | `{d['teacher']}` | {d['episodes']} | {d['labels']} | {100 * d['overruled']:.1f}% | "
                         f"{d['accuracy_before']:.4f} → {d['accuracy_after']:.4f} | {d['epochs']}, {d['learning_rate']} | "
                         f"{d['search_wall_s']} | {d['fit_wall_s']} |")
        lines.append("")
    lines += ["## Candidates on validation seeds", "",
              "Advance: share of the greedy decisions on `default` validation that are action 0 (wait for the next "
              "event); `agent-transfer` and its teacher never wait while a job fits.", "",
              "| candidate | scenario | avg JCT (s) | vs agent-transfer | vs srsf+ca (teacher) | vs srsf+pack | advance |",
              "|---|---|---:|---:|---:|---:|---:|"]
    for name, row in results["candidates"].items():
        for sc, v in row["validation"].items():
            adv = f"{100 * row['advance_share_default']:.1f}%" if sc == "default" else ""
            lines.append(f"| `{name}` | {sc} | {v['avg_jct_s']:.1f} | {fmt(v['agent-transfer'])} | {fmt(v['srsf+ca'])} | "
                         f"{fmt(v['srsf+pack'])} | {adv} |")
    lines += ["", "Rule (`beats_start` in the script): the interval against `agent-transfer` on `default` lies wholly "
              "below 0 and `transfer-train` is not worse beyond its CI. "
              + "; ".join(f"`{n}`: **{'passes' if r['beats_start'] else 'fails'}**" for n, r in results["candidates"].items())
              + ".", ""]
    held = {n: r for n, r in results["candidates"].items() if "held_out" in r}
    if held:
        lines += ["## Held-out protocol (leaderboard seeds 1000000–1000019)", "",
                  "| candidate | board | best reference | avg JCT (s) | vs best reference | vs agent-transfer |",
                  "|---|---|---|---:|---:|---:|"]
        for n, r in held.items():
            for board, h in r["held_out"].items():
                lines.append(f"| `{n}` | {board} | {h['best_reference']} | {h['avg_jct_s']:.1f} | {fmt(h['vs_best'])} | "
                             f"{fmt(h['vs_agent_transfer'])} |")
        lines.append("")
    else:
        lines += ["No candidate passed the rule, so none was run on the held-out protocol and nothing new is shipped.", ""]
    lines += ["## Reading (our interpretation of the tables above)", "",
              "* **γ < 1 teaches the agent to wait.** DDLCluster's decisions are events, not equal time steps; "
              "discounting per decision makes every extra \"advance\" shrink all later costs by γ, which outweighs "
              "the short wait it costs. The γ = 0.995 runs' greedy policies take \"advance\" on most decisions "
              "(advance column) and lose to their start on every validation seed. `agents/finetune.py` now defaults "
              "to γ = 1 (the undiscounted return is exactly −Σ JCT).",
              "* **With γ = 1, PPO finds nothing to improve.** The greedy policy stays at the clone's JCT within "
              "the CI on `default`; the training return of the sampled policy moves by noise only. Per-episode "
              "returns vary by whole hours between workloads, while the best search found under 1 % to gain, so "
              "the advantage of one sampled deviation is far below the return's noise.",
              "* **The search's improvements are not learnable from the observation.** The search overrules the "
              "clone on about one state in ten, but the fitted network reproduces under a tenth of those "
              "overrides (accuracy column). The search forks the simulator, future arrivals included, so its "
              "choices depend on information the observation does not hold; what the student keeps is noise "
              "around its teacher.", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
