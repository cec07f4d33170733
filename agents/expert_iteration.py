"""Expert iteration (AlphaZero-style) for ``DDLCluster-<Task>-v1`` agents, with a non-clairvoyant search.

    python -m ddl_gym.agents.expert_iteration train --task pollux-25g \\
        --init leaderboard/agents/agent-v1-pollux25g.zip --out runs/expit-pollux25g \\
        --rounds 3 --episodes 8 --sims 32 --samples 4 --workers 2

Each round:

1. **Search-generated episodes** on the task's *train* seeds (a block of seeds per round, never a
   validation or test seed), one per work item through :mod:`ddl_gym.executors` (``Executor.map``:
   a local process pool, or Ray with ``--executor ray``). At every decision with two or more valid
   actions the **non-clairvoyant** MCTS (:class:`ddl_gym.agents.mcts.MCTSPolicy`,
   ``future="sampled"``: forks whose unseen future is drawn from the scenario's arrival model,
   never the true one) searches with the network's policy as prior (PUCT) and first action, and
   leaf rollouts finished natively by ``--fallback`` (``--depth`` network steps first); the root
   prior gets Dirichlet noise (``--root-noise``). The episode follows the search's most visited
   action. Recorded per searched decision: the observation, the action mask, the **visit-count
   distribution** π (normalised over the legal actions only) and the **realised return-to-go** of the
   reference-relative reward (:class:`ddl_gym.relative_reward.ReferenceRelativeReward` with
   ``--reference``, γ = 1: the same value target PPO's value head was trained on).
   With ``--future oracle`` the labelling search is the clairvoyant one instead (its forks see the
   train episode's true future, :mod:`ddl_gym.agents.mcts`): hindsight targets from a teacher no
   cluster could run. The trained network still acts on its observation alone, so the agent it
   yields is non-clairvoyant; the teacher is recorded in every checkpoint's metadata.
2. **Training**: the network (MaskablePPO's actor-critic) minimises cross-entropy to π plus
   ``--value-coef`` × squared error of its value to the return-to-go, on this round's data and the
   previous ``--replay`` rounds'; observation statistics stay the initial agent's (frozen).
3. **Selection** on the task's *validation* seeds (network alone, deterministic): the checkpoint with
   the lowest mean avg JCT so far is ``OUT/agent.zip`` (the initial network counts as round 0).

Every round writes ``OUT/round-R/`` (``agent.zip`` + sidecars, ``data.npz``) and ``OUT/state.json``
(rounds done, validation curve, CPU seconds of the driver and of every search episode); the same
command resumes after the last completed round. ``OUT/agent.zip`` loads with
``ddl_gym.agents.load_policy("maskable-ppo:OUT/agent.zip")``.

Refitting (``refit --run OUT --out DIR``): the run's initial network (round 0) trained again on the
targets its rounds stored, under other target settings (``--target-temperature``, ``--lr``,
``--epochs``, ``--value-coef``, ``--min-target-share``: only decisions where the search's most
visited action had at least that share of the visits), then validated like a round; no search runs,
so a refit costs seconds where a round costs CPU-hours. ``DIR/refit.json`` records the settings,
the targets kept, the losses and the validation beside round 0's.

Evaluation (``evaluate``): the protocol of :mod:`ddl_gym.agents.suite_eval` on the task's test seeds
— network alone, and network + non-clairvoyant search as a separate row — against the best reference.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import shutil
import sys
import time
import zipfile
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ddl_gym.agents.search_eval import LEAVES, NetworkGuide, SearchSettings, _guide, make_search
from ddl_gym.sim.model import ConfigError

#: What a round's search sees (recorded in every checkpoint's metadata).
TEACHERS = {"sampled": "sampled (non-clairvoyant)",
            "oracle": "oracle (clairvoyant teacher on train seeds; the network acts on its observation alone)"}

#: Seeds of round r start at train.start + SEED_OFFSET + r * SEED_STRIDE (clear of train_v1's pool 0..~300).
SEED_OFFSET = 100_000
SEED_STRIDE = 10_000


def visit_distribution(root_visits: dict[int, int], mask: np.ndarray) -> np.ndarray:
    """π over the action space from root visit counts: zero outside ``mask``, sums to 1 over the legal actions.

    Visits of illegal actions (there are none in a search over valid actions) are dropped; with no
    visit on a legal action the distribution is uniform over the legal ones.
    """
    mask = np.asarray(mask, dtype=bool)
    pi = np.zeros(mask.size, dtype=np.float64)
    for action, count in root_visits.items():
        if 0 <= action < mask.size and mask[action]:
            pi[action] += count
    total = pi.sum()
    if total <= 0:
        return mask / mask.sum()
    return pi / total


# ============================================================================ one search-generated episode
@dataclasses.dataclass(frozen=True)
class EpisodeItem:
    """One search-generated episode (a work item of ``Executor.map``)."""

    agent: str
    task: str
    seed: int
    search: SearchSettings
    reference: str
    root_noise: float
    search_seed: int


def play_search_episode(item: EpisodeItem) -> dict[str, Any]:
    """Play one train-seed episode with the non-clairvoyant search; return its training data.

    Returns ``obs`` (float32, searched decisions × obs size), ``mask`` (bool), ``pi`` (float32, visit
    distributions), ``ret`` (float32, return-to-go of the reference-relative reward from each searched
    decision), ``avg_jct_s``, ``reference_avg_jct_s``, ``decisions``, ``searched``, ``cpu_s``.
    """
    import torch

    from ddl_gym.relative_reward import make_v1_env
    from ddl_gym.suite import get_task

    torch.set_num_threads(1)
    cpu0 = time.process_time()
    task = get_task(item.task)
    guide = _guide(item.agent)
    guide.reset()
    kwargs = {k: v for k, v in guide.env_kwargs.items() if k != "env_version"}
    env = make_v1_env(task.training_scenario, reference=item.reference, **kwargs)
    base = env.unwrapped
    search = make_search(guide, item.search, root_noise=item.root_noise, seed=item.search_seed, task=item.task)
    search.reset(seed=item.search_seed)
    obs, info = env.reset(seed=int(item.seed))
    reference_avg = float(info.get("reference_avg_jct_s", math.nan))
    rows_obs, rows_mask, rows_pi, at = [], [], [], []
    rewards: list[float] = []
    steps = 0
    while True:
        mask = np.asarray(info["action_mask"], dtype=bool)
        if int(mask.sum()) > 1:
            stats = search.search(base)
            rows_obs.append(np.asarray(obs, dtype=np.float32))
            rows_mask.append(mask)
            rows_pi.append(visit_distribution(stats.root_visits, mask).astype(np.float32))
            at.append(steps)
            action = stats.action
        else:
            action = int(np.flatnonzero(mask)[0])
        obs, reward, terminated, truncated, info = env.step(action)
        rewards.append(float(reward))
        steps += 1
        if terminated or truncated:
            break
    to_go = np.cumsum(np.asarray(rewards[::-1], dtype=np.float64))[::-1]
    n_obs = int(np.prod(env.observation_space.shape))
    return {
        "obs": np.asarray(rows_obs, dtype=np.float32).reshape(-1, n_obs),
        "mask": np.asarray(rows_mask, dtype=bool).reshape(-1, mask.size),
        "pi": np.asarray(rows_pi, dtype=np.float32).reshape(-1, mask.size),
        "ret": to_go[at].astype(np.float32) if at else np.zeros(0, np.float32),
        "avg_jct_s": float(info["metrics"]["avg_jct_s"]), "reference_avg_jct_s": reference_avg,
        "seed": int(item.seed), "decisions": steps, "searched": len(at), "cpu_s": time.process_time() - cpu0,
    }


# ============================================================================ training on search targets
def sharpen(pi: np.ndarray, temperature: float) -> np.ndarray:
    """Visit distributions raised to ``1/temperature`` and renormalised per row (AlphaZero's τ; 1: unchanged)."""
    pi = np.asarray(pi, dtype=np.float64)
    if temperature == 1.0:
        return pi
    out = np.power(pi, 1.0 / temperature)
    return out / out.sum(axis=1, keepdims=True)


def train_network(model: Any, normalise: Any, data: dict[str, np.ndarray], *, epochs: int, lr: float,
                  value_coef: float, batch_size: int = 256, seed: int = 0, temperature: float = 1.0) -> dict[str, float]:
    """Cross-entropy to the visit distributions (sharpened by ``temperature``) + ``value_coef`` × MSE of the
    value to the return-to-go.

    ``normalise`` maps raw observations to the network's input (the agent's frozen statistics).
    Returns the first and last epoch's mean losses.
    """
    import torch

    policy = model.policy
    policy.set_training_mode(True)
    x_all = torch.as_tensor(np.asarray(normalise(np.asarray(data["obs"], dtype=np.float32)), dtype=np.float32))
    masks = np.asarray(data["mask"], dtype=bool)
    pi_all = torch.as_tensor(sharpen(data["pi"], temperature), dtype=torch.float32)
    ret_all = torch.as_tensor(data["ret"], dtype=torch.float32)
    opt = torch.optim.Adam(policy.parameters(), lr=lr)
    gen = np.random.default_rng(seed)
    n = len(x_all)
    history = []
    for _ in range(epochs):
        order = gen.permutation(n)
        sums = np.zeros(3)
        for lo in range(0, n, batch_size):
            idx = order[lo: lo + batch_size]
            x = x_all[idx]
            dist = policy.get_distribution(x, action_masks=masks[idx])
            logp = dist.distribution.logits  # normalised log-probabilities, masked actions at ≈ −1e8
            target = pi_all[idx]
            ce = -(target * torch.where(target > 0, logp, torch.zeros_like(logp))).sum(dim=1).mean()
            v = policy.predict_values(x).squeeze(-1)
            vl = torch.nn.functional.mse_loss(v, ret_all[idx])
            loss = ce + value_coef * vl
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), 0.5)
            opt.step()
            sums += np.array([float(ce.detach()), float(vl.detach()), 1.0]) * len(idx)
        history.append({"cross_entropy": sums[0] / max(1, n), "value_mse": sums[1] / max(1, n)})
    policy.set_training_mode(False)
    return {"ce_first": history[0]["cross_entropy"], "ce_last": history[-1]["cross_entropy"],
            "value_mse_first": history[0]["value_mse"], "value_mse_last": history[-1]["value_mse"]} if history else {}


def validate_network(agent_path: str | Path, task_name: str, seeds: Sequence[int]) -> float:
    """Mean avg JCT (s) of the network alone (deterministic) on ``seeds`` of the task's scenario."""
    from ddl_gym.envs.agent_env import make_agent_env
    from ddl_gym.suite import get_task

    task = get_task(task_name)
    guide = NetworkGuide(str(agent_path))
    env = make_agent_env(task.scenario, guide.env_kwargs)
    jcts = []
    for seed in seeds:
        obs, info = env.reset(seed=int(seed))
        while True:
            obs, _, terminated, truncated, info = env.step(guide.act(obs, info["action_mask"]))
            if terminated or truncated:
                jcts.append(info["metrics"]["avg_jct_s"])
                break
    return float(np.mean(jcts))


def save_agent(model: Any, source_agent: Path, out_dir: Path, extra: dict[str, Any]) -> Path:
    """``out_dir/agent.zip`` without optimiser state, the source's observation statistics and its
    metadata updated with ``extra`` (what :func:`ddl_gym.agents.load_policy` reads)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    trained = model.policy.optimizer
    model.policy.optimizer = model.policy.optimizer_class(model.policy.parameters(), lr=1e-4,
                                                          **model.policy.optimizer_kwargs)
    model.save(out_dir / "agent.zip")
    model.policy.optimizer = trained
    meta = json.loads(source_agent.with_suffix(".json").read_text())
    stats_name = meta.get("vecnormalize")
    if stats_name:
        shutil.copyfile(source_agent.with_name(stats_name), out_dir / "agent.vecnormalize.pkl")
        meta["vecnormalize"] = "agent.vecnormalize.pkl"
    meta.update(extra)
    (out_dir / "agent.json").write_text(json.dumps(meta, indent=2))
    return out_dir / "agent.zip"


def _copy_agent(src_zip: Path, dst_dir: Path) -> Path:
    dst_dir.mkdir(parents=True, exist_ok=True)
    for suffix in (".zip", ".json", ".vecnormalize.pkl"):
        src = src_zip.with_suffix(suffix) if suffix != ".vecnormalize.pkl" else src_zip.with_name(
            src_zip.stem + ".vecnormalize.pkl")
        if suffix == ".vecnormalize.pkl":
            meta = json.loads(src_zip.with_suffix(".json").read_text())
            src = src_zip.with_name(meta.get("vecnormalize", src.name))
        if src.exists():
            shutil.copyfile(src, dst_dir / ("agent" + suffix))
    meta = json.loads((dst_dir / "agent.json").read_text())
    if meta.get("vecnormalize"):
        meta["vecnormalize"] = "agent.vecnormalize.pkl"
        (dst_dir / "agent.json").write_text(json.dumps(meta, indent=2))
    return dst_dir / "agent.zip"


# ============================================================================ the rounds
def run_rounds(args: argparse.Namespace) -> dict[str, Any]:
    """Run (or resume) expert iteration as configured by ``args`` (see :func:`main`); returns the state."""
    import torch

    from ddl_gym.executors import make_executor
    from ddl_gym.suite import get_task

    torch.set_num_threads(1)
    task = get_task(args.task)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    state_path = out / "state.json"
    config = {k: v for k, v in vars(args).items() if k not in ("command", "out", "workers", "executor", "ray_address",
                                                                 "rounds")}
    if state_path.exists():
        state = json.loads(state_path.read_text())
        stored = state["config"]
        diff = sorted(k for k in set(config) | set(stored) if k in stored and config.get(k) != stored[k])
        if diff:  # (a setting the stored run predates is taken at its value now)
            raise ConfigError(f"{out} holds a run with other settings ({', '.join(diff)}); use another --out")
    else:
        init = _copy_agent(Path(args.init), out / "round-0")
        validation = list(task.validation_seeds)[: args.validation_seeds]
        score = validate_network(init, task.name, validation)
        state = {"config": config, "rounds_done": 0, "history": [{"round": 0, "validation_avg_jct_s": score}],
                 "best_round": 0, "best_validation_avg_jct_s": score, "driver_cpu_s": time.process_time(),
                 "episode_cpu_s": 0.0}
        shutil.copytree(out / "round-0", out / "best", dirs_exist_ok=True)
        _write_state(state_path, state)
        print(f"round 0 (initial network): validation avg JCT {score:.1f}s", file=sys.stderr, flush=True)
    cpu_start = time.process_time()
    driver_before = float(state["driver_cpu_s"])
    executor = make_executor(args.executor, workers=args.workers, ray_address=args.ray_address)
    try:
        for r in range(int(state["rounds_done"]) + 1, args.rounds + 1):
            current = out / f"round-{r - 1}" / "agent.zip"
            start = task.train_seeds.start + SEED_OFFSET + r * SEED_STRIDE
            settings = SearchSettings(sims=args.sims, samples=args.samples, depth=args.depth, c_uct=args.c_uct,
                                      fallback=args.fallback, candidates=args.candidates, final=args.final,
                                      leaf=args.leaf, future=args.future)
            items = [EpisodeItem(agent=str(current.resolve()), task=task.name, seed=start + i, search=settings,
                                 reference=args.reference, root_noise=args.root_noise,
                                 search_seed=args.seed * 1_000_003 + start + i) for i in range(args.episodes)]
            t0 = time.time()
            episodes = executor.map(play_search_episode, items, progress=False, desc=f"round {r}")
            data = {key: np.concatenate([e[key] for e in episodes]) for key in ("obs", "mask", "pi", "ret")}
            round_dir = out / f"round-{r}"
            round_dir.mkdir(parents=True, exist_ok=True)
            np.savez_compressed(round_dir / "data.npz", **data)
            replay = [data]
            for back in range(1, args.replay + 1):
                old = out / f"round-{r - back}" / "data.npz"
                if r - back >= 1 and old.exists():
                    with np.load(old) as f:
                        replay.append({k: f[k] for k in f.files})
            merged = {key: np.concatenate([d[key] for d in replay]) for key in data}
            model, normalise = _trainable(current)
            losses = train_network(model, normalise, merged, epochs=args.epochs, lr=args.lr,
                                   value_coef=args.value_coef, batch_size=args.batch_size, seed=args.seed + r,
                                   temperature=args.target_temperature)
            save_agent(model, current, round_dir, {"expert_iteration": {
                "round": r, "init": str(args.init), "task": task.name, "sims": args.sims, "samples": args.samples,
                "depth": args.depth, "fallback": args.fallback, "leaf": args.leaf, "reference": args.reference,
                "episodes": args.episodes,
                "future": TEACHERS[args.future]}})
            validation = list(task.validation_seeds)[: args.validation_seeds]
            score = validate_network(round_dir / "agent.zip", task.name, validation)
            episode_cpu = float(sum(e["cpu_s"] for e in episodes))
            entry = {"round": r, "validation_avg_jct_s": score, "samples": int(len(data["pi"])),
                     "train_samples": int(len(merged["pi"])), "episodes": len(episodes),
                     "search_avg_jct_s": float(np.mean([e["avg_jct_s"] for e in episodes])),
                     "reference_avg_jct_s": float(np.nanmean([e["reference_avg_jct_s"] for e in episodes])),
                     "episode_cpu_s": episode_cpu, "wall_s": time.time() - t0, **losses}
            state["history"].append(entry)
            state["episode_cpu_s"] = float(state["episode_cpu_s"]) + episode_cpu
            state["driver_cpu_s"] = driver_before + (time.process_time() - cpu_start)
            if score < float(state["best_validation_avg_jct_s"]):
                state["best_round"], state["best_validation_avg_jct_s"] = r, score
                shutil.copytree(round_dir, out / "best", dirs_exist_ok=True)
            state["rounds_done"] = r
            state["cpu_hours"] = (float(state["driver_cpu_s"]) + float(state["episode_cpu_s"])) / 3600.0
            _write_state(state_path, state)
            print(f"round {r}: search episodes avg JCT {entry['search_avg_jct_s']:.1f}s (reference "
                  f"{entry['reference_avg_jct_s']:.1f}s) on {len(episodes)} train seeds, {entry['samples']} targets; "
                  f"CE {losses.get('ce_first', math.nan):.3f}->{losses.get('ce_last', math.nan):.3f}; "
                  f"validation avg JCT {score:.1f}s (best {state['best_validation_avg_jct_s']:.1f}s, round "
                  f"{state['best_round']}); CPU so far {state['cpu_hours']:.3f} h", file=sys.stderr, flush=True)
    finally:
        executor.close()
    best = out / "best"
    for name in ("agent.zip", "agent.json", "agent.vecnormalize.pkl"):
        if (best / name).exists():
            shutil.copyfile(best / name, out / name)
    return state


def _trainable(agent: Path) -> tuple[Any, Any]:
    """The agent's MaskablePPO model and the map from raw observations to its input (its frozen statistics),
    from one load of the agent."""
    from ddl_gym.agents.policy import load_policy

    loaded = load_policy(f"maskable-ppo:{agent}")
    stats = loaded.obs_stats
    normalise = stats.normalize_obs if stats is not None and getattr(stats, "norm_obs", False) else np.asarray
    return loaded.model, normalise


# ============================================================================ refitting stored targets
def confident_targets(data: dict[str, np.ndarray], min_share: float) -> dict[str, np.ndarray]:
    """The rows of ``data`` whose most visited action holds at least ``min_share`` of the visits (0: all)."""
    keep = np.asarray(data["pi"]).max(axis=1) >= min_share
    return {key: np.asarray(value)[keep] for key, value in data.items()}


def refit(args: argparse.Namespace) -> dict[str, Any]:
    """Train a run's *initial* network again on the search targets its rounds stored, under other target
    settings (temperature, learning rate, epochs, value weight, a floor on the search's confidence), and
    validate it like a round. No search runs: the targets are ``RUN/round-R/data.npz`` as written.

    Writes ``OUT/agent.zip`` (+ sidecars) and ``OUT/refit.json`` (settings, samples kept, losses, the
    validation avg JCT beside the run's round 0, CPU seconds); returns that record.
    """
    import torch

    from ddl_gym.suite import get_task

    torch.set_num_threads(1)
    cpu0 = time.process_time()
    run, out = Path(args.run), Path(args.out)
    state_path = run / "state.json"
    if not state_path.is_file():
        raise ConfigError(f"--run {run}: no state.json (not an expert-iteration run directory)")
    if out.resolve() == run.resolve() or run.resolve() in out.resolve().parents:
        raise ConfigError(f"--out {out} is inside --run {run}; a refit never writes into the run it reads")
    try:
        state = json.loads(state_path.read_text())
        rounds_done = int(state["rounds_done"])
        task_name, n_validation = state["config"]["task"], int(state["config"]["validation_seeds"])
        round0 = float(state["history"][0]["validation_avg_jct_s"])
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise ConfigError(f"{state_path}: not an expert-iteration state file ({type(exc).__name__})") from None
    rounds = args.data_rounds or list(range(1, rounds_done + 1))
    if not rounds:
        raise ConfigError(f"--run {run}: no completed round holds targets")
    if len(set(rounds)) != len(rounds):
        raise ConfigError(f"--data-rounds {' '.join(map(str, rounds))}: a round is listed twice")
    parts = []
    for r in rounds:
        path = run / f"round-{r}" / "data.npz"
        if not path.is_file():
            raise ConfigError(f"--data-rounds: {path} does not exist")
        try:
            with np.load(path) as f:
                parts.append({k: f[k] for k in ("obs", "mask", "pi", "ret")})
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
            raise ConfigError(f"{path}: not a round's targets ({type(exc).__name__})") from None
    data = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    kept = confident_targets(data, args.min_target_share)
    if not len(kept["pi"]):
        raise ConfigError(f"--min-target-share {args.min_target_share}: no target of rounds {rounds} is that confident")
    init = run / "round-0" / "agent.zip"
    model, normalise = _trainable(init)
    losses = train_network(model, normalise, kept, epochs=args.epochs, lr=args.lr, value_coef=args.value_coef,
                           batch_size=args.batch_size, seed=args.seed, temperature=args.target_temperature)
    settings = {"run": str(run), "data_rounds": rounds, "target_temperature": args.target_temperature,
                "lr": args.lr, "epochs": args.epochs, "value_coef": args.value_coef, "batch_size": args.batch_size,
                "min_target_share": args.min_target_share, "seed": args.seed}
    agent = save_agent(model, init, out, {"expert_iteration_refit": settings})
    task = get_task(task_name)
    validation = list(task.validation_seeds)[:n_validation]
    record = {"settings": settings, "samples": int(len(data["pi"])), "samples_kept": int(len(kept["pi"])),
              "validation_avg_jct_s": validate_network(agent, task.name, validation),
              "round0_validation_avg_jct_s": round0, **losses,
              "cpu_s": time.process_time() - cpu0}
    (out / "refit.json").write_text(json.dumps(record, indent=2, default=float) + "\n")
    return record


def _write_state(path: Path, state: dict[str, Any]) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(state, indent=2))
    os.replace(tmp, path)


def evaluate_agent(args: argparse.Namespace) -> list[Any]:
    """Network alone and network + non-clairvoyant search on the task's test seeds vs the best reference.

    The rows are :func:`ddl_gym.agents.suite_eval.score_agent` and
    :func:`ddl_gym.agents.suite_eval.score_search` (network prior and first action, ``future=args.future``,
    episodes through ``Executor.map``), scored by the same rule.
    """
    from ddl_gym.agents.suite_eval import score_agent, score_search
    from ddl_gym.suite import get_task
    from ddl_gym.suite_cards import best_reference

    task = get_task(args.task)
    reference = args.reference
    if reference is None:
        reference, _ = best_reference(task, workers=args.workers or 1)
    seeds = list(task.test_seeds)[: args.seeds] if args.seeds else list(task.test_seeds)
    agent = str(Path(args.agent).resolve())
    rows = [score_agent(task.name, agent, test_seeds=seeds, reference=reference, workers=args.workers or 1)]
    print(json.dumps(dataclasses.asdict(rows[0])), file=sys.stderr, flush=True)
    if args.no_search:
        if args.write:
            Path(args.write).parent.mkdir(parents=True, exist_ok=True)
            Path(args.write).write_text(json.dumps({"rows": [dataclasses.asdict(r) for r in rows], "seeds": seeds},
                                                   indent=2) + "\n")
        return rows
    t0 = time.time()
    score = score_search(task.name, agent, reference, test_seeds=seeds, executor=args.executor, workers=args.workers,
                         ray_address=args.ray_address, sims=args.sims, samples=args.samples, depth=args.depth,
                         c_uct=args.c_uct, fallback=args.fallback, future=args.future, candidates=args.candidates,
                         final=args.final, leaf=args.leaf)
    rows.append(score.row)
    print(f"search row: {len(seeds)} episodes, {score.cpu_hours:.3f} CPU-hours, {time.time() - t0:.0f} s wall",
          file=sys.stderr)
    if args.write:
        Path(args.write).parent.mkdir(parents=True, exist_ok=True)
        Path(args.write).write_text(json.dumps({"rows": [dataclasses.asdict(r) for r in rows], "seeds": seeds,
                                                "search_avg_jct_s": score.search_avg_jct_s,
                                                "reference_avg_jct_s": score.reference_avg_jct_s,
                                                "search_cpu_hours": score.cpu_hours}, indent=2) + "\n")
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    fit = argparse.ArgumentParser(add_help=False)  # how the network is fitted to the targets (train and refit)
    fit.add_argument("--epochs", type=int, default=10)
    fit.add_argument("--lr", type=float, default=1e-4)
    fit.add_argument("--value-coef", type=float, default=0.5)
    fit.add_argument("--target-temperature", type=float, default=1.0,
                     help="visit distributions raised to 1/T before the cross-entropy (T < 1 sharpens)")
    fit.add_argument("--batch-size", type=int, default=256)
    fit.add_argument("--seed", type=int, default=0)
    train = sub.add_parser("train", parents=[fit], help="run or resume expert iteration")
    train.add_argument("--task", required=True)
    train.add_argument("--init", required=True, help="the starting agent zip (a train_v1 / shipped v1 agent)")
    train.add_argument("--out", required=True)
    train.add_argument("--rounds", type=int, default=3)
    train.add_argument("--episodes", type=int, default=8, help="search-generated episodes per round")
    train.add_argument("--sims", type=int, default=SearchSettings.sims, help="MCTS simulations per decision (all samples together)")
    train.add_argument("--samples", type=int, default=None,
                       help=f"sampled futures per decision (default {SearchSettings.samples}; not with --future oracle)")
    train.add_argument("--depth", type=int, default=SearchSettings.depth, help="network steps of a rollout before the fallback finishes it")
    train.add_argument("--c-uct", type=float, default=SearchSettings.c_uct)
    train.add_argument("--candidates", type=int, default=SearchSettings.candidates, help="root actions each sampled tree expands first")
    train.add_argument("--final", default=SearchSettings.final, choices=("visits", "best"),
                       help="action played: most visited, or lowest mean regret over the samples")
    train.add_argument("--fallback", default=SearchSettings.fallback, help="classic rule finishing rollouts natively")
    train.add_argument("--future", default="sampled", choices=tuple(TEACHERS),
                       help="the search that labels states: 'sampled' (non-clairvoyant, default) or 'oracle' "
                            "(clairvoyant teacher: its forks see the true future of the train episode; the network "
                            "still sees only its observation)")
    train.add_argument("--leaf", default=SearchSettings.leaf, choices=LEAVES,
                       help="how an evaluation ends after --depth network steps: the fallback's native finish "
                            "(rollout) or the network's value head (value)")
    train.add_argument("--reference", default="srsf+ca", help="reference of the relative reward (value targets)")
    train.add_argument("--root-noise", type=float, default=0.25)
    train.add_argument("--replay", type=int, default=1, help="earlier rounds' data trained on again")
    train.add_argument("--validation-seeds", type=int, default=10)
    train.add_argument("--workers", type=int, default=None, help="local worker processes (default: CPUs)")
    train.add_argument("--executor", default="local", choices=("local", "ray"))
    train.add_argument("--ray-address", default=None)
    rf = sub.add_parser("refit", parents=[fit],
                        help="train a run's initial network again on its stored search targets (no search)")
    rf.add_argument("--run", required=True, help="an expert-iteration --out directory")
    rf.add_argument("--out", required=True)
    rf.add_argument("--data-rounds", type=int, nargs="+", default=None, help="rounds whose targets to fit (default: all)")
    rf.add_argument("--min-target-share", type=float, default=0.0,
                    help="keep only targets whose most visited action has at least this share of the visits")
    ev = sub.add_parser("evaluate", help="network and network + search on the task's test seeds (suite_eval's rule)")
    ev.add_argument("--task", required=True)
    ev.add_argument("--agent", required=True)
    ev.add_argument("--reference", default=None, help="best reference (default: chosen on validation seeds)")
    ev.add_argument("--sims", type=int, default=SearchSettings.sims)
    ev.add_argument("--samples", type=int, default=None,
                    help=f"sampled futures per decision (default {SearchSettings.samples}; not with --future oracle)")
    ev.add_argument("--depth", type=int, default=SearchSettings.depth)
    ev.add_argument("--c-uct", type=float, default=SearchSettings.c_uct)
    ev.add_argument("--candidates", type=int, default=SearchSettings.candidates)
    ev.add_argument("--final", default=SearchSettings.final, choices=("visits", "best"))
    ev.add_argument("--fallback", default=SearchSettings.fallback)
    ev.add_argument("--leaf", default=SearchSettings.leaf, choices=LEAVES)
    ev.add_argument("--future", default="sampled", choices=("sampled", "oracle"))
    ev.add_argument("--no-search", action="store_true", help="network row only")
    ev.add_argument("--seeds", type=int, default=None, help="first N test seeds (default: all)")
    ev.add_argument("--workers", type=int, default=None)
    ev.add_argument("--executor", default="local", choices=("local", "ray"))
    ev.add_argument("--ray-address", default=None)
    ev.add_argument("--write", help="write the rows as JSON here")
    args = parser.parse_args(argv)
    if args.command == "refit":
        if args.epochs < 1 or args.batch_size < 1:
            parser.error("--epochs and --batch-size must be >= 1")
        for name in ("target_temperature", "lr"):
            value = getattr(args, name)
            if not (value > 0 and math.isfinite(value)):
                parser.error(f"--{name.replace('_', '-')} must be > 0, got {value}")
        if not (args.value_coef >= 0 and math.isfinite(args.value_coef)):
            parser.error(f"--value-coef must be >= 0, got {args.value_coef}")
        if not 0.0 <= args.min_target_share <= 1.0:
            parser.error(f"--min-target-share must be in [0, 1], got {args.min_target_share}")
        print(json.dumps(refit(args)))
        return 0
    if args.samples is not None and args.future == "oracle":  # the oracle forks the one true future
        parser.error("--samples applies to the sampled search; --future oracle draws no futures")
    if args.samples is None:
        args.samples = SearchSettings.samples
    if args.command == "train":
        for name in ("rounds", "episodes", "sims", "samples", "epochs", "batch_size", "validation_seeds"):
            if getattr(args, name) < 1:
                parser.error(f"--{name.replace('_', '-')} must be >= 1")
        state = run_rounds(args)
        print(json.dumps({k: state[k] for k in ("rounds_done", "best_round", "best_validation_avg_jct_s", "cpu_hours")
                          if k in state}))
        return 0
    rows = evaluate_agent(args)
    for row in rows:
        print(json.dumps(dataclasses.asdict(row)))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except ConfigError as exc:
        raise SystemExit(f"expert_iteration: {exc}") from None
