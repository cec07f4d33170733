"""Copy a finished ``train_v1`` run into the agent zoo under a name, with its training record.

    python -m ddl_gym.agents.ship --run runs/pollux-25g --name agent-v1-pollux25g \\
        --command "python -m ddl_gym.agents.train_v1 --preset v1 --task pollux-25g ..."

Writes ``DEST/NAME.zip``, ``DEST/NAME.vecnormalize.pkl`` and ``DEST/NAME.json`` (``DEST`` defaults to
``leaderboard/agents``). The metadata is the run's ``agent.json`` with the sidecar renamed and a
``training`` block from the run's ``log.json``: CPU seconds, the validation curve, the behaviour-cloning
accuracy and the command that reproduces the run. Registering the name (:mod:`ddl_gym.agents.shipped`)
stays a reviewed code change.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path
from typing import Sequence

from ddl_gym.sim.model import ConfigError

DEFAULT_DEST = Path(__file__).resolve().parents[1] / "leaderboard" / "agents"


def ship(run: Path, name: str, command: str, dest: Path = DEFAULT_DEST) -> Path:
    """Copy ``run``'s best checkpoint to ``dest/name.*``; returns the zip's path."""
    run, dest = Path(run), Path(dest)
    needed = {"agent.zip", "agent.json", "agent.vecnormalize.pkl", "log.json"}
    missing = sorted(f for f in needed if not (run / f).is_file())
    if missing:
        raise ConfigError(f"run {run}: missing {', '.join(missing)} (is it a finished train_v1 run?)")
    if not name or "/" in name or name.startswith("."):
        raise ConfigError(f"agent name {name!r}: use a plain file name such as agent-v1-pollux25g")
    try:
        meta = json.loads((run / "agent.json").read_text())
        log = json.loads((run / "log.json").read_text())
    except ValueError as exc:
        raise ConfigError(f"run {run}: unreadable metadata ({type(exc).__name__})") from None
    curve = [[int(v["timesteps"]), round(float(v["avg_jct_s"]), 3)] for v in log.get("validation", [])]
    if not curve or meta.get("timesteps") not in [c[0] for c in curve]:
        raise ConfigError(f"run {run}: agent.json's checkpoint ({meta.get('timesteps')} steps) is not on log.json's "
                          "validation curve; the two files belong to different runs")
    meta["vecnormalize"] = f"{name}.vecnormalize.pkl"
    meta["training"] = {"cpu_s": round(float(log.get("cpu_s", float("nan"))), 1), "validation_curve": curve,
                        "bc": log.get("bc"), "command": command}
    if any("mean_ratio" in v for v in log.get("validation", [])):
        # a multi-task run (train_v1 --also) is selected on the mean ratio, not on the main task's curve above:
        # keep that figure and every task's avg JCT per checkpoint
        meta["training"]["validation_selection"] = [
            [int(v["timesteps"]), round(float(v["mean_ratio"]), 6),
             {task: round(float(x), 3) for task, x in v["per_task"].items()}] for v in log["validation"]]
    lineage = _lineage(run, log)
    if len(lineage) > 1:  # a run continued from others (--init): the agent's whole cost
        runs = [{"run": str(r), "cpu_s": round(c, 1)} for r, c in lineage]
        meta["training"]["runs"] = runs
        meta["training"]["cpu_s_total"] = round(sum(r["cpu_s"] for r in runs), 1)  # adds up as printed
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(run / "agent.zip", dest / f"{name}.zip")
    shutil.copyfile(run / "agent.vecnormalize.pkl", dest / f"{name}.vecnormalize.pkl")
    (dest / f"{name}.json").write_text(json.dumps(meta, indent=2) + "\n")
    return dest / f"{name}.zip"


def _lineage(run: Path, log: dict) -> list[tuple[Path, float]]:
    """``(run folder, CPU seconds)`` of ``run`` and of every run it continued from (``--init``), newest first."""
    chain = [(run, float(log.get("cpu_s", float("nan"))))]
    seen = {run.resolve()}
    while log.get("init"):
        init = Path(log["init"])
        parent = init.parent
        shipped = _shipped_training(init)
        if shipped is not None:  # continued from a zoo agent: its record already sums its own lineage
            chain.append((init, float(shipped.get("cpu_s_total", shipped.get("cpu_s", float("nan"))))))
            break
        if parent.resolve() in seen or not (parent / "log.json").is_file():
            raise ConfigError(f"run {chain[-1][0]}: it continued from {log['init']}, whose log.json is missing "
                              "(ship from a tree that has every run of the chain)")
        seen.add(parent.resolve())
        try:
            log = json.loads((parent / "log.json").read_text())
        except ValueError:
            raise ConfigError(f"run {parent}: unreadable log.json") from None
        chain.append((parent, float(log.get("cpu_s", float("nan")))))
    return chain


def _shipped_training(agent_zip: Path) -> dict | None:
    """The ``training`` record of a zoo agent (``NAME.json`` beside ``NAME.zip``), or None for a run's agent."""
    meta = agent_zip.with_suffix(".json")
    if agent_zip.name == "agent.zip" or not meta.is_file():
        return None
    try:
        record = json.loads(meta.read_text()).get("training")
    except ValueError:
        raise ConfigError(f"agent {agent_zip}: unreadable metadata {meta}") from None
    return record if isinstance(record, dict) else None


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", required=True, help="a train_v1 --out folder")
    parser.add_argument("--name", required=True, help="the agent's name (file stem in DEST)")
    parser.add_argument("--command", required=True, help="the train_v1 command that made the run")
    parser.add_argument("--dest", default=str(DEFAULT_DEST))
    args = parser.parse_args(argv)
    print(ship(Path(args.run), args.name, args.command, Path(args.dest)))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except ConfigError as exc:
        raise SystemExit(f"ship: {exc}") from None
