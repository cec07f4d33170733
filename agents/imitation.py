"""Imitation warm start: express classic policies as env actions and clone them (behaviour cloning).

:func:`expert_action` answers "which ``DDLCluster-v0`` action would ``<order>+<placement>`` take
now?": the first job in the policy's priority order that fits (``G_j <=`` free GPUs) is started with
the policy's placement rule if that job is in the env's queue window; otherwise (nothing fits, or
the job lies beyond the window) the action is 0 = advance. FIFO is strict: only the head of the
arrival-ordered queue is considered (head-of-line blocking, as in :mod:`ddl_gym.baselines.classic.policy`).
With ``queue_order`` equal to the policy's order the window *is* the priority order, so the action
is always slot 0 and — except when the first fitting job is beyond the window — the env run
reproduces the native policy's schedule exactly (tested for ``fifo+pack``).

:func:`collect_demonstrations` drives the env with the expert and records ``(obs, action, mask)``;
:func:`behaviour_cloning` fits the MaskablePPO actor by cross-entropy on masked logits;
:func:`warm_start` does both for ``ddl-gym train --bc-expert``.

Script-level comparison of learning curves with and without warm start::

    python -m ddl_gym.agents.imitation compare --with-bc RUN_DIR_BC --without-bc RUN_DIR_PLAIN --out DIR
"""

from __future__ import annotations

import argparse
import math
import weakref
from pathlib import Path
from typing import Any, Sequence

import gymnasium as gym
import numpy as np

from ddl_gym.placement import canonical_placement_name as _canonical
from ddl_gym.sim.model import ConfigError


class _ExpertCache:
    """Per-episode priority keys of a classic policy (recomputed when the env's simulator changes).

    It holds the simulator it was built for and compares by identity: an ``id()`` of a simulator that
    has been freed can be reused by the next episode's, which would hand that episode the previous
    episode's policy state (wrong expert labels).
    """

    def __init__(self) -> None:
        self.sim: Any = None
        self.policy_name: str | None = None
        self.policy: Any = None


#: One cache per live env (an env that is garbage-collected drops its entry).
_CACHE: weakref.WeakKeyDictionary[Any, _ExpertCache] = weakref.WeakKeyDictionary()


def _expert_policy(env: gym.Env, policy_name: str) -> Any:
    from ddl_gym.policies import make_policy

    base = env.unwrapped
    cache = _CACHE.setdefault(base, _ExpertCache())
    if cache.sim is not base.sim or cache.policy_name != policy_name:
        policy = make_policy(policy_name)
        if not hasattr(policy, "priority_queue") and not hasattr(policy, "next_start"):
            raise ConfigError(f"expert {policy_name!r} is not a classic order+placement policy or EASY backfilling")
        policy.reset(base.sim, np.random.default_rng(0))
        cache.sim, cache.policy_name, cache.policy = base.sim, policy_name, policy
    return cache.policy


def expert_action(env: gym.Env, policy_name: str, beyond_window: str = "advance") -> int:
    """The ``DDLCluster-v0`` action the classic policy ``policy_name`` (e.g. ``"srsf+ca"``) takes now.

    Args:
        env: a reset DDLCluster env (wrapped or not).
        policy_name: ``<fifo|sjf|srsf>+<rule>`` or EASY backfilling ``easy-<fifo|sjf|srsf>+<rule>``; the
            rule must be one of ``env.placement_names``. EASY's action is its next start, or advance
            while it holds the free GPUs for its reserved job.
        beyond_window: what to do when the policy's first fitting job is not in the window:
            ``"advance"`` (action 0) or ``"window"`` (the first fitting job, in the policy's order,
            among the window's jobs). Advance is used only while it is a valid action; when it is
            not (nothing running, no arrivals left) the ``"window"`` choice is taken, so an expert
            never stalls the env.

    Returns:
        ``1 + slot·P + p`` to start the policy's next job, or 0 (advance).

    Raises:
        ConfigError: the policy is not classic, or its placement is not an action of this env.
    """
    base = env.unwrapped
    sim = base.sim
    if sim is None:
        raise ConfigError("expert_action needs a reset env")
    policy = _expert_policy(env, policy_name)
    names = [_canonical(p) for p in base.placement_names]
    rule = _canonical(policy.placement_name)
    if rule not in names:
        raise ConfigError(f"expert {policy_name!r} places with {rule!r}, which is not among this env's "
                          f"placements {tuple(base.placement_names)}")
    p = names.index(rule)
    gpus = sim.workload.gpus
    window = base._window
    candidates: list[int] | None
    if hasattr(policy, "next_start"):  # EASY backfilling: its next start, else wait (it may hold GPUs idle)
        choice = policy.next_start(sim)
        first = None if choice is None else choice[0]
        candidates = None  # its order, only needed beyond the window
    else:
        candidates = sim.queue[:1] if policy.order == "fifo" else policy.priority_queue(sim)  # strict FIFO: the head
        first = next((job for job in candidates if gpus[job] <= sim.num_free), None)
    if first is None:
        return 0
    if first in window:
        return 1 + window.index(first) * len(names) + p
    # The policy's job is beyond the window.
    if beyond_window == "advance" and (sim.running or sim.has_future_arrivals):
        return 0
    if candidates is None:
        candidates = policy.priority_queue(sim)
    in_window = [j for j in candidates if j in window] if policy.order != "fifo" else list(window)
    for job in in_window:
        if gpus[job] <= sim.num_free:
            return 1 + window.index(job) * len(names) + p
    return 0


def collect_demonstrations(env: gym.Env, expert: str, seeds: Sequence[int],
                           beyond_window: str = "advance", driver: Any = None) -> dict[str, np.ndarray]:
    """Run the expert through ``env`` on ``seeds``; returns raw ``obs``, ``actions`` (the expert's), ``masks``.

    ``expert``: a classic or EASY policy (:func:`expert_action`), or a preemptive ``gittins`` spec in an env
    with ``preemption=True`` (:class:`ddl_gym.agents.attained_expert.EnvGittinsExpert`). ``driver``
    (``driver(obs, mask) -> action``): who acts, the expert only labelling (DAgger); default: the expert.
    """
    env_expert = None
    if expert.split(":", 1)[0].strip().lower() == "gittins":
        from ddl_gym.agents.attained_expert import EnvGittinsExpert

        env_expert = EnvGittinsExpert(expert)
    obs_list, act_list, mask_list = [], [], []
    for seed in seeds:
        obs, info = env.reset(seed=int(seed))
        if env_expert is not None:
            env_expert.reset(env)
        done = False
        while not done:
            action = env_expert.act(env) if env_expert is not None else expert_action(env, expert, beyond_window)
            mask = np.asarray(info["action_mask"], dtype=bool)
            if not mask[action]:  # cannot happen for a fitting job; guard against silent garbage labels
                raise ConfigError(f"expert {expert!r} chose invalid action {action}")
            obs_list.append(obs)
            act_list.append(action)
            mask_list.append(mask)
            if driver is not None:
                action = int(driver(obs, mask))
            obs, _, terminated, truncated, info = env.step(action)
            done = terminated or truncated
    return {"obs": np.asarray(obs_list, dtype=np.float32), "actions": np.asarray(act_list, dtype=np.int64),
            "masks": np.asarray(mask_list, dtype=bool)}


def _masked_log_probs(model: Any, obs: np.ndarray, masks: np.ndarray, actions: np.ndarray):
    import torch

    obs_t = torch.as_tensor(obs, device=model.device)
    dist = model.policy.get_distribution(obs_t, action_masks=masks)
    return dist.log_prob(torch.as_tensor(actions, device=model.device)), dist


def imitation_accuracy(model: Any, obs: np.ndarray, actions: np.ndarray, masks: np.ndarray) -> float:
    """Share of states where the deterministic (masked argmax) action equals the expert's."""
    import torch

    with torch.no_grad():
        _, dist = _masked_log_probs(model, obs, masks, actions)
        pred = dist.distribution.probs.argmax(dim=1).cpu().numpy()
    return float(np.mean(pred == actions))


def behaviour_cloning(model: Any, obs: np.ndarray, actions: np.ndarray, masks: np.ndarray, *, epochs: int = 10,
                      batch_size: int = 256, learning_rate: float = 1e-3, seed: int = 0) -> list[dict[str, float]]:
    """Fit the actor of a MaskablePPO ``model`` to expert actions: minimise −log π(a*|s) over masked logits.

    Only the actor path (features → policy MLP → action head) receives gradients, with its own Adam
    optimizer, so PPO's optimizer state stays fresh. ``obs`` must already be normalised the way the
    model sees them. Returns one ``{epoch, loss, accuracy}`` row per epoch.
    """
    import torch

    policy = model.policy
    params = [p for name, p in policy.named_parameters() if not (name.startswith("value_net") or "mlp_extractor.value" in name)]
    optimizer = torch.optim.Adam(params, lr=learning_rate)
    rng = np.random.default_rng(seed)
    history = []
    n = len(actions)
    policy.set_training_mode(True)
    for epoch in range(epochs):
        order = rng.permutation(n)
        losses = []
        for start in range(0, n, batch_size):
            idx = order[start : start + batch_size]
            log_prob, _ = _masked_log_probs(model, obs[idx], masks[idx], actions[idx])
            loss = -log_prob.mean()
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            optimizer.step()
            losses.append(float(loss.item()))
        history.append({"epoch": epoch + 1, "loss": float(np.mean(losses)),
                        "accuracy": imitation_accuracy(model, obs, actions, masks)})
    policy.set_training_mode(False)
    return history


def warm_start(model: Any, scenario: str, env_kwargs: dict[str, Any], *, expert: str, episodes: int = 20,
               epochs: int = 10, batch_size: int = 256, learning_rate: float = 1e-3, seed: int = 20_000,
               vecnormalize: Any = None, beyond_window: str = "window") -> dict[str, Any]:
    """Collect ``episodes`` expert episodes (seeds ``seed..``) and clone them into ``model``'s actor.

    With a VecNormalize wrapper its observation statistics are first fitted on the demonstrations
    (so the cloned actor sees the same inputs PPO will feed it).
    """
    env = gym.make("ddl_gym:DDLCluster-v0", scenario=scenario, render_mode=None, **env_kwargs)
    demos = collect_demonstrations(env, expert, range(seed, seed + episodes), beyond_window)
    env.close()
    obs = demos["obs"]
    if vecnormalize is not None and vecnormalize.norm_obs:
        vecnormalize.obs_rms.update(obs)
        obs = vecnormalize.normalize_obs(obs).astype(np.float32)
    before = imitation_accuracy(model, obs, demos["actions"], demos["masks"])
    history = behaviour_cloning(model, obs, demos["actions"], demos["masks"], epochs=epochs,
                                batch_size=batch_size, learning_rate=learning_rate, seed=seed)
    return {"expert": expert, "beyond_window": beyond_window, "episodes": episodes, "samples": int(len(obs)), "accuracy_before": before,
            "accuracy_after": history[-1]["accuracy"] if history else before, "history": history}


# ---------------------------------------------------------------------------- learning-curve comparison
def compare_curves(with_bc: str | Path, without_bc: str | Path, out: str | Path) -> tuple[Path, Path]:
    """Write ``learning_curves.csv`` and ``learning_curves.png`` comparing two ``ddl-gym train`` runs.

    The y-axis is the evaluation return converted to average JCT in seconds (return = −ΣJCT/3600 in
    hours for the default ``reward_scale``; divided by the number of jobs per episode).
    """
    import json

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    rows = ["run,timesteps,mean_return,std_return,avg_jct_s"]
    fig, ax = plt.subplots(figsize=(6, 4))
    for label, run in (("BC warm start + PPO", Path(with_bc)), ("PPO from scratch", Path(without_bc))):
        data = np.load(run / "eval" / "evaluations.npz")
        cfg = json.loads((run / "config.json").read_text())
        scale = float(cfg["env"].get("reward_scale", 1 / 3600))
        jobs = _jobs_per_episode(cfg)
        t = data["timesteps"]
        mean = data["results"].mean(axis=1)
        std = data["results"].std(axis=1)
        initial = run / "eval" / "initial.json"
        if initial.exists():  # t = 0: the random (scratch) or cloned (BC) policy before PPO
            first = np.asarray(json.loads(initial.read_text())["returns"])
            t, mean, std = np.r_[0, t], np.r_[first.mean(), mean], np.r_[first.std(), std]
        jct = -mean / scale / jobs
        for ti, m, s, j in zip(t, mean, std, jct):
            rows.append(f"{label},{int(ti)},{m:.6f},{s:.6f},{j:.3f}")
        ax.plot(t, jct, label=label)
    ax.set_xlabel("environment steps")
    ax.set_ylabel("avg JCT on eval seeds (s)")
    ax.set_title("DDLCluster: learning curves with / without BC warm start")
    ax.legend()
    fig.tight_layout()
    csv_path, png_path = out / "learning_curves.csv", out / "learning_curves.png"
    csv_path.write_text("\n".join(rows) + "\n")
    fig.savefig(png_path, dpi=100)
    plt.close(fig)
    return csv_path, png_path


def _jobs_per_episode(cfg: dict[str, Any]) -> float:
    from ddl_gym.scenarios import get_scenario

    scenario = get_scenario(cfg["scenario"])
    return float(scenario.episode(int(cfg["eval"]["seed"]))[1].num_jobs) or math.nan


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ddl_gym.agents.imitation")
    sub = parser.add_subparsers(dest="cmd", required=True)
    cmp_ = sub.add_parser("compare", help="plot learning curves of two training runs")
    cmp_.add_argument("--with-bc", required=True)
    cmp_.add_argument("--without-bc", required=True)
    cmp_.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    csv_path, png_path = compare_curves(args.with_bc, args.without_bc, args.out)
    print(csv_path, png_path)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
