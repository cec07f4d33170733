"""DAgger-style distillation of search into the shipped clone (issue 14): fine-tune, do not start afresh.

Round ``k``: the current student drives training episodes while the search
(:data:`ddl_gym.agents.distill.DEFAULT_SEARCH`: MCTS guided by ``srsf+ca``, 8 simulations) labels
every state it visits (:func:`ddl_gym.agents.distill.collect` with ``driver``); the labels of
all rounds so far are aggregated and cloned into a copy of the *start* agent (``agent-transfer``)
— not a fresh network — with its observation statistics frozen, so states the search never
labelled (other clusters, trace windows) keep the clone's behaviour as far as the network allows.

Why this and not :func:`ddl_gym.agents.distill.fit`: ``fit`` builds a fresh network and refits
the normalisation on the search's states only, which forgets everything the clone learned on
``transfer-train``.

::

    python -m ddl_gym.agents.distill collect --out r1.json --scenario default --seeds 20000:20060 \\
        --driver maskable-ppo:leaderboard/agents/agent-transfer.zip
    python -m ddl_gym.agents.dagger fit --demos r1.json --out runs/dagger/r1
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ddl_gym.sim.model import ConfigError

from ddl_gym.agents.finetune import START_AGENT


def fit_from_clone(demos: Sequence[str | Path], out: str | Path, *, start: str | Path = START_AGENT, epochs: int = 10,
                   learning_rate: float = 3e-4, batch_size: int = 256, seed: int = 0) -> Path:
    """Clone the search labels of ``demos`` (replayed) into a copy of ``start``; write ``out/agent.zip``."""
    import torch
    from sb3_contrib import MaskablePPO

    from ddl_gym.agents.distill import replay
    from ddl_gym.agents.imitation import behaviour_cloning, imitation_accuracy
    from ddl_gym.agents.policy import read_metadata

    wall = time.time()
    start = Path(start)
    meta = read_metadata(start)
    files = [json.loads(Path(p).read_text()) for p in demos]
    for path, data in zip(demos, files):
        if data["env_kwargs"] != meta["env_kwargs"]:
            raise ConfigError(f"{path}: demonstrations were recorded with env {data['env_kwargs']}, the agent "
                              f"{start.name} with {meta['env_kwargs']}")
    parts = [replay(f) for f in files]
    obs, labels, masks = (np.concatenate([p[k] for p in parts]) for k in ("obs", "actions", "masks"))
    stats_path = start.with_name(meta["vecnormalize"])
    import pickle

    with open(stats_path, "rb") as fh:
        stats = pickle.load(fh)
    normed = stats.normalize_obs(obs).astype(np.float32)
    torch.set_num_threads(1)
    torch.manual_seed(seed)
    model = MaskablePPO.load(start, device="cpu")
    before = imitation_accuracy(model, normed, labels, masks)
    history = behaviour_cloning(model, normed, labels, masks, epochs=epochs, batch_size=batch_size,
                                learning_rate=learning_rate, seed=seed)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    model.save(out / "agent.zip")
    shutil.copyfile(stats_path, out / "vecnormalize.pkl")
    search = files[0]["search"]
    meta = dict(meta)
    meta.pop("validation_vs_teacher", None)
    meta.update(vecnormalize="vecnormalize.pkl", scenario=files[0]["scenario"], finetuned_from=start.name,
                bc_expert=f"mcts:guide={search['guide']},sims={search['simulations']},depth={search.get('depth')}",
                dagger={"files": [str(p) for p in demos], "episodes": sum(len(f["episodes"]) for f in files),
                        "labels": int(len(labels)), "epochs": epochs, "learning_rate": learning_rate, "seed": seed,
                        "accuracy_before": before, "accuracy_after": history[-1]["accuracy"] if history else before,
                        "search_wall_s": round(sum(e["wall_s"] for f in files for e in f["episodes"].values()), 1),
                        "fit_wall_s": round(time.time() - wall, 1)},
                timesteps=0, rl_timesteps=0)
    (out / "agent.json").write_text(json.dumps(meta, indent=2))
    (out / "history.json").write_text(json.dumps(history, indent=2))
    return out / "agent.zip"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ddl_gym.agents.dagger")
    sub = parser.add_subparsers(dest="command", required=True)
    f = sub.add_parser("fit", help="clone aggregated search labels into a copy of the start agent")
    f.add_argument("--demos", required=True, nargs="+")
    f.add_argument("--out", required=True)
    f.add_argument("--start", default=str(START_AGENT))
    f.add_argument("--epochs", type=int, default=10)
    f.add_argument("--learning-rate", type=float, default=3e-4)
    f.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    path = fit_from_clone(args.demos, args.out, start=args.start, epochs=args.epochs, learning_rate=args.learning_rate,
                          seed=args.seed)
    meta: dict[str, Any] = json.loads(path.with_suffix(".json").read_text())
    print(f"{path}: accuracy on the labels {meta['dagger']['accuracy_before']:.4f} -> {meta['dagger']['accuracy_after']:.4f} "
          f"({meta['dagger']['labels']} labels, {meta['dagger']['fit_wall_s']} s)")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
