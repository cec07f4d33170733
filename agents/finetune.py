"""PPO fine-tuning of a cloned agent (issue 14): MaskablePPO started from ``agent-transfer``'s weights.

Why the pieces below exist (each answers a way plain ``model.learn`` on the clone goes wrong):

* **The clone is (almost) deterministic.** Behaviour cloning to accuracy 1.0 leaves the largest
  action probability above 0.9999 in every state, so PPO's sampled actions never differ from
  the teacher's and the gradient carries no information. :func:`soften` divides the action
  head's logits by a temperature chosen so that the *median* largest probability over the clone's
  own states is ``target_pmax`` (0.9 by default): the greedy (evaluation) action is unchanged, the
  sampled one now explores near it.
* **The clone has no critic.** Cloning trains only the actor; its value network is random, and
  advantages computed from it would push the actor anywhere. :class:`FinetunePPO` holds the
  actor's learning rate at 0 for every update made on the first ``critic_steps`` environment
  steps (the critic trains alone, at ``critic_lr``), then lets both learn — the actor at a small ``learning_rate`` with a
  tight ``clip_range`` and a ``target_kl`` early stop, so one update cannot undo the clone.
* **No discounting per decision** (``gamma = 1``). Decisions are events, not equal time steps,
  so ``gamma < 1`` discounts by decision count: an "advance" (wait) action adds a decision and
  so shrinks every later cost by a factor ``gamma``, which pays more than the wait costs. With
  ``gamma = 0.995`` PPO learnt exactly that — it idled the cluster: at actor lr 3e-5, 37 % of
  its greedy actions were "advance" after 82k steps and 62 % after 200k (validation avg JCT
  +25 %); at lr 3e-4, 64 % after 150k (+27 %) (``docs/agents/finetune/``). Every default episode has the same number of job starts, so the
  undiscounted return is −Σ JCT and nothing can be gained by adding decisions.
* **Observation statistics stay frozen**: the clone's VecNormalize statistics are loaded and not
  updated (the network was fitted to exactly those inputs); rewards are not normalised (the
  ``jct`` reward in hours is already of order 0.1 per step on the default scenario).
* **Training episodes are named seeds**: env ``i`` of ``n`` replays seeds ``start + i``,
  ``start + i + n``, … of the training range (never the validation seeds 40 000+, the demo's
  1 000+ or the leaderboard's held-out 1 000 000+), so a run is reproducible bit for bit (one
  process, :class:`DummyVecEnv`, torch on one thread).

:func:`finetune` runs it with checkpoints (resumable) and a validation curve: every
``eval_every`` steps the current greedy policy is saved as an agent and run by the harness on
validation seeds, paired per seed against the teacher. ``scripts/train_agent_finetune.py`` is the
command line.
"""

from __future__ import annotations

import json
import shutil
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from ddl_gym.sim.model import ConfigError

REPO_ROOT = Path(__file__).resolve().parents[1]
#: The agent fine-tuning starts from, and the teacher it was cloned from.
START_AGENT = REPO_ROOT / "leaderboard" / "agents" / "agent-transfer.zip"


@dataclass(frozen=True)
class FinetuneConfig:
    """Everything that determines a fine-tuning run (recorded in ``config.json`` and the agent's metadata)."""

    start: str = str(START_AGENT)
    scenario: str = "default"
    train_seeds: tuple[int, int] = (20_000, 30_000)  # [start, stop): the default scenario's training seeds
    n_envs: int = 2
    timesteps: int = 120_000
    critic_steps: int = 20_480  # actor frozen (lr 0) while the critic learns the clone's values
    critic_lr: float = 3e-4
    learning_rate: float = 1e-4  # actor, after critic_steps
    clip_range: float = 0.1
    target_kl: float = 0.01
    ent_coef: float = 0.0
    target_pmax: float = 0.9  # soften(): median largest action probability after the temperature
    n_steps: int = 512  # per env and rollout
    batch_size: int = 256
    n_epochs: int = 4
    gamma: float = 1.0  # module docstring: per-decision discounting rewards idling
    gae_lambda: float = 0.95
    seed: int = 0
    eval_every: int = 20_480
    val_scenario: str = "default"
    val_seeds: tuple[int, int] = (40_000, 40_020)
    teacher: str = "srsf+ca"
    checkpoint_every: int = 10_240

    def __post_init__(self) -> None:
        if self.train_seeds[0] >= self.train_seeds[1] or self.val_seeds[0] >= self.val_seeds[1]:
            raise ConfigError("train_seeds / val_seeds must be non-empty ranges [start, stop)")
        lo, hi = self.train_seeds
        vlo, vhi = self.val_seeds
        if lo < vhi and vlo < hi:
            raise ConfigError(f"training seeds {lo}:{hi} overlap the validation seeds {vlo}:{vhi}")
        if hi > 1_000_000:
            raise ConfigError("training seeds reach the leaderboard's held-out seeds (1 000 000+)")


# ---------------------------------------------------------------------------- the algorithm
def _finetune_cls() -> type:
    """:class:`FinetunePPO`, built lazily so importing this module does not import torch/SB3."""
    from sb3_contrib import MaskablePPO

    class FinetunePPO(MaskablePPO):
        """MaskablePPO whose optimizer has two parameter groups: actor (lr 0 until ``critic_steps``) and critic."""

        critic_steps: int = 0
        critic_lr: float = 3e-4

        def _setup_model(self) -> None:
            super()._setup_model()
            self._two_group_optimizer()

        def _two_group_optimizer(self) -> None:
            import torch

            critic = [p for n, p in self.policy.named_parameters() if n.startswith(("value_net", "mlp_extractor.value"))]
            ids = {id(p) for p in critic}
            actor = [p for p in self.policy.parameters() if id(p) not in ids]
            self.policy.optimizer = torch.optim.Adam([{"params": actor, "lr": 0.0}, {"params": critic, "lr": self.critic_lr}],
                                                     eps=1e-5)

        def _update_learning_rate(self, optimizers: Any) -> None:
            actor_lr = 0.0 if self.num_timesteps <= self.critic_steps else float(self.lr_schedule(self._current_progress_remaining))
            self.logger.record("train/learning_rate", actor_lr)
            actor_group, critic_group = self.policy.optimizer.param_groups
            actor_group["lr"], critic_group["lr"] = actor_lr, self.critic_lr

    return FinetunePPO


def action_probabilities(model: Any, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """Masked action probabilities of ``model`` for normalised observations ``obs`` (one row per state)."""
    import torch

    with torch.no_grad():
        dist = model.policy.get_distribution(torch.as_tensor(obs, dtype=torch.float32), action_masks=masks)
        return dist.distribution.probs.cpu().numpy()


def soften(model: Any, obs: np.ndarray, masks: np.ndarray, target_pmax: float) -> float:
    """Divide the action head by the temperature that makes the median largest probability ``target_pmax``.

    The argmax in every state is unchanged (logits are scaled by a positive constant). Returns the
    temperature (1.0 when the policy is already that soft).
    """
    import torch

    head = model.policy.action_net
    weight, bias = head.weight.data.clone(), head.bias.data.clone()

    def median_pmax(t: float) -> float:
        head.weight.data.copy_(weight / t)
        head.bias.data.copy_(bias / t)
        return float(np.median(action_probabilities(model, obs, masks).max(axis=1)))

    if median_pmax(1.0) <= target_pmax:
        return 1.0
    lo, hi = 1.0, 2.0
    while median_pmax(hi) > target_pmax:  # bracket, then bisect on log t
        lo, hi = hi, hi * 2
        if hi > 1e6:
            raise ConfigError("soften: no temperature reaches the target probability")
    for _ in range(40):
        mid = float(np.sqrt(lo * hi))
        lo, hi = (mid, hi) if median_pmax(mid) > target_pmax else (lo, mid)
    with torch.no_grad():
        head.weight.data.copy_(weight / hi)
        head.bias.data.copy_(bias / hi)
    return hi


def save_plain_agent(model: Any, path: Path, meta: dict[str, Any]) -> Path:
    """Save ``model`` as an agent that plain ``MaskablePPO.load`` (and so ``load_policy``) reads.

    The two-group optimizer of :class:`FinetunePPO` is swapped for a fresh one-group Adam while
    saving (an inference agent needs no optimizer moments; checkpoints keep the real ones).
    """
    import torch

    from ddl_gym.agents.train import save_agent

    kept = model.policy.optimizer
    model.policy.optimizer = torch.optim.Adam(model.policy.parameters(), lr=0.0, eps=1e-5)
    try:
        return save_agent(model, model.get_env(), path, meta)
    finally:
        model.policy.optimizer = kept


def _seed_cursors(venv: Any) -> list[int]:
    return [int(env._next) for env in venv.venv.envs]


# ---------------------------------------------------------------------------- envs and data
def training_env(cfg: FinetuneConfig, env_kwargs: dict[str, Any], stats_path: Path) -> Any:
    """``n_envs`` in-process envs replaying the training seeds, behind the clone's frozen VecNormalize."""
    from stable_baselines3.common.vec_env import DummyVecEnv, VecNormalize

    from ddl_gym.agents.train import make_env_fn

    lo, hi = cfg.train_seeds
    fns = [make_env_fn(cfg.scenario, env_kwargs, eval_seeds=range(lo + i, hi, cfg.n_envs)) for i in range(cfg.n_envs)]
    venv = VecNormalize.load(str(stats_path), DummyVecEnv(fns))
    venv.training = False  # frozen observation statistics (module docstring)
    venv.norm_reward = False
    return venv


def clone_states(model: Any, venv: Any, episodes: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """Normalised observations and masks along ``episodes`` greedy episodes of ``model`` (env 0 of ``venv``)."""
    env = venv.venv.envs[0]
    seeds = env._seeds[-episodes:]  # the range's last seeds: not replayed early in training
    obs_list, mask_list = [], []
    for seed in seeds:
        obs, info = env.unwrapped.reset(seed=int(seed))
        done = False
        while not done:
            mask = np.asarray(info["action_mask"], dtype=bool)
            normed = venv.normalize_obs(obs[None].astype(np.float32))
            obs_list.append(normed[0])
            mask_list.append(mask)
            action = int(action_probabilities(model, normed, mask[None]).argmax())
            obs, _, terminated, truncated, info = env.unwrapped.step(action)
            done = terminated or truncated
    return np.asarray(obs_list, dtype=np.float32), np.asarray(mask_list, dtype=bool)


# ---------------------------------------------------------------------------- validation
def validate(spec: str, scenario: str, seeds: Sequence[int], references: dict[str, np.ndarray]) -> dict[str, Any]:
    """Avg JCT of the agent ``spec`` per seed, paired against each reference (mean ± 95 % CI, in %)."""
    from ddl_gym.harness import load_policy_spec, mean_ci, simulate
    from ddl_gym.scenarios import get_scenario

    sc = get_scenario(scenario)
    policy = load_policy_spec(spec)
    jct = np.array([simulate(policy, sc, int(s)).result.summary()["avg_jct_s"] for s in seeds])
    row: dict[str, Any] = {"avg_jct_s": float(jct.mean())}
    for name, ref in references.items():
        mean, ci, _ = mean_ci(100 * (jct - ref) / ref)
        row[f"vs_{name}_pct"] = round(float(mean), 4)
        row[f"vs_{name}_ci"] = round(float(ci), 4)
        row[f"vs_{name}_better"] = int((jct < ref).sum())
        row[f"vs_{name}_worse"] = int((jct > ref).sum())
    return row


def reference_jcts(names: Sequence[str], scenario: str, seeds: Sequence[int]) -> dict[str, np.ndarray]:
    from ddl_gym.harness import load_policy_spec, simulate
    from ddl_gym.scenarios import get_scenario

    sc = get_scenario(scenario)
    return {n: np.array([simulate(load_policy_spec(n), sc, int(s)).result.summary()["avg_jct_s"] for s in seeds])
            for n in names}


# ---------------------------------------------------------------------------- the run
def _callbacks(cfg: FinetuneConfig, out: Path, meta: dict[str, Any], references: dict[str, np.ndarray],
               log: Callable[..., None]) -> Any:
    from stable_baselines3.common.callbacks import BaseCallback

    from ddl_gym.agents.train import save_checkpoint

    class _Periodic(BaseCallback):
        """At rollout boundaries (weights consistent with num_timesteps): checkpoints and validation points."""

        def __init__(self) -> None:
            super().__init__()
            self.start = time.time()

        def _on_rollout_start(self) -> None:
            steps = int(self.model.num_timesteps)
            n = self.model.n_steps * self.model.n_envs
            if steps and steps % cfg.checkpoint_every < n:
                folder = save_checkpoint(self.model, out / "checkpoints", keep=2)
                (folder / "seeds.json").write_text(json.dumps(_seed_cursors(self.model.get_env())))
            if steps and steps % cfg.eval_every < n:
                record_point(self.model, steps, time.time() - self.start)

        def _on_step(self) -> bool:
            return True

    def record_point(model: Any, steps: int, wall: float) -> dict[str, Any]:
        snap = save_plain_agent(model, out / "snapshots" / f"step_{steps:09d}" / "agent.zip", dict(meta, timesteps=steps))
        returns = [float(e["r"]) for e in model.ep_info_buffer or []]  # recent training episodes (sampled actions)
        row = {"timesteps": steps, "wall_s": round(wall, 1),
               "train_return": round(float(np.mean(returns)), 4) if returns and steps else None,
               **validate(f"maskable-ppo:{snap}", cfg.val_scenario, range(*cfg.val_seeds), references)}
        with open(out / "curve.jsonl", "a") as fh:
            fh.write(json.dumps(row) + "\n")
        log(f"step {steps}: validation avg JCT {row['avg_jct_s']:.2f} s, vs {cfg.teacher} "
            f"{row[f'vs_{cfg.teacher}_pct']:+.3f}% ± {row[f'vs_{cfg.teacher}_ci']:.3f}%")
        return row

    return _Periodic(), record_point


def finetune(cfg: FinetuneConfig, out: str | Path, *, resume: bool = False, best_reference: str | None = "srsf+pack",
             log: Callable[..., None] = print) -> Path:
    """Fine-tune ``cfg.start`` with PPO; write ``out/agent.zip`` (+ json, vecnormalize) and ``out/curve.jsonl``.

    Returns the path of the final agent. ``resume`` continues from the newest intact checkpoint.
    """
    import torch
    from sb3_contrib import MaskablePPO

    from ddl_gym.agents.policy import read_metadata
    from ddl_gym.agents.train import intact_checkpoints, restore_rng, save_checkpoint

    out = Path(out)
    start_path = Path(cfg.start)
    start_meta = read_metadata(start_path)
    stats_path = start_path.with_name(start_meta["vecnormalize"])
    env_kwargs = dict(start_meta["env_kwargs"])
    torch.set_num_threads(1)
    if out.exists() and not resume:
        raise ConfigError(f"{out} exists; pass resume=True (--resume) to continue it or remove it")
    checkpoints = intact_checkpoints(out, True, log) if resume else []
    out.mkdir(parents=True, exist_ok=True)
    if resume and (out / "config.json").exists():
        saved = json.loads((out / "config.json").read_text())
        if saved != json.loads(json.dumps(asdict(cfg))):
            raise ConfigError(f"{out}/config.json differs from this run's settings; use another --out")
    (out / "config.json").write_text(json.dumps(asdict(cfg), indent=2))
    torch.manual_seed(cfg.seed)
    np.random.seed(cfg.seed)
    venv = training_env(cfg, env_kwargs, stats_path)
    cls = _finetune_cls()
    hyper = dict(learning_rate=cfg.learning_rate, clip_range=cfg.clip_range, target_kl=cfg.target_kl,
                 ent_coef=cfg.ent_coef, n_steps=cfg.n_steps, batch_size=cfg.batch_size, n_epochs=cfg.n_epochs,
                 gamma=cfg.gamma, gae_lambda=cfg.gae_lambda)
    cls.critic_steps, cls.critic_lr = cfg.critic_steps, cfg.critic_lr
    temperature = None
    if checkpoints:
        checkpoint = checkpoints[0]
        model = cls.load(checkpoint / "model.zip", env=venv, device="cpu")
        restore_rng(checkpoint, venv)
        if (checkpoint / "seeds.json").exists():  # each env continues its training-seed list where it was
            for env, cursor in zip(venv.venv.envs, json.loads((checkpoint / "seeds.json").read_text())):
                env._next = int(cursor)
        state = json.loads((checkpoint / "state.json").read_text())
        curve = out / "curve.jsonl"
        if curve.exists():  # drop validation points logged after the checkpoint
            rows = [r for r in curve.read_text().splitlines() if json.loads(r)["timesteps"] <= state["num_timesteps"]]
            curve.write_text("".join(r + "\n" for r in rows))
        temperature = json.loads((out / "temperature.json").read_text())["temperature"]
        log(f"resumed from {checkpoint.name} at {model.num_timesteps} steps")
        resumes = out / "resumes.json"  # the report says where the wall clock restarted
        done = json.loads(resumes.read_text()) if resumes.exists() else []
        resumes.write_text(json.dumps(done + [int(model.num_timesteps)]))
    else:
        clone = MaskablePPO.load(start_path, device="cpu")
        model = cls("MlpPolicy", venv, seed=cfg.seed, device="cpu", verbose=0,
                    policy_kwargs=clone.policy_kwargs, **hyper)
        model.policy.load_state_dict(clone.policy.state_dict())
        obs, masks = clone_states(model, venv)
        temperature = soften(model, obs, masks, cfg.target_pmax)
        (out / "temperature.json").write_text(json.dumps({"temperature": temperature, "states": int(len(obs))}))
        log(f"softened the clone's action head by temperature {temperature:.3f} (median max prob {cfg.target_pmax})")
        (out / "curve.jsonl").unlink(missing_ok=True)
    meta = dict(start_meta)
    meta.update(scenario=cfg.scenario, preset=None, seed=cfg.seed, finetuned_from=start_path.name,
                finetune=asdict(cfg) | {"temperature": temperature})
    meta.pop("validation_vs_teacher", None)
    names = [cfg.teacher] + ([best_reference] if best_reference and best_reference != cfg.teacher else [])
    references = reference_jcts(names, cfg.val_scenario, range(*cfg.val_seeds))
    periodic, record_point = _callbacks(cfg, out, meta, references, log)
    wall_start = time.time()
    if not checkpoints:
        record_point(model, 0, 0.0)
    remaining = cfg.timesteps - int(model.num_timesteps)
    if remaining > 0:
        model.learn(total_timesteps=remaining, callback=periodic, reset_num_timesteps=not checkpoints)
    wall = time.time() - wall_start
    last = json.loads((out / "curve.jsonl").read_text().splitlines()[-1])
    if last["timesteps"] != model.num_timesteps:
        record_point(model, int(model.num_timesteps), wall)
    folder = save_checkpoint(model, out / "checkpoints", keep=2)
    (folder / "seeds.json").write_text(json.dumps(_seed_cursors(venv)))
    meta.update(timesteps=int(model.num_timesteps), rl_timesteps=int(model.num_timesteps), wall_s=round(wall, 1))
    path = save_plain_agent(model, out / "agent.zip", meta)
    venv.close()
    return path


def read_curve(out: str | Path) -> list[dict[str, Any]]:
    """The validation points of a run (``curve.jsonl``)."""
    path = Path(out) / "curve.jsonl"
    return [json.loads(r) for r in path.read_text().splitlines()] if path.exists() else []


def install(agent: Path, name: str, dest: Path) -> Path:
    """Copy ``agent`` (+ json and vecnormalize) to ``dest/<name>.{zip,json,vecnormalize.pkl}``."""
    meta = json.loads(agent.with_suffix(".json").read_text())
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(agent, dest / f"{name}.zip")
    shutil.copyfile(agent.with_name(meta["vecnormalize"]), dest / f"{name}.vecnormalize.pkl")
    meta["vecnormalize"] = f"{name}.vecnormalize.pkl"
    (dest / f"{name}.json").write_text(json.dumps(meta, indent=2))
    return dest / f"{name}.zip"
