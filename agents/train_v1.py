"""Train a MaskablePPO agent on a ``DDLCluster-<Task>-v1`` task, top to bottom (issue 31's recipe).

    python -m ddl_gym.agents.train_v1 --preset v1 --task pollux-25g --expert srsf+ca --reference srsf+ca \\
        --out runs/v1-pollux-25g

The recipe, and why:

1. **The v1 env** (:mod:`ddl_gym.envs.cluster_env_v1`): the observation shows the running jobs (when
   GPUs free up), which decides whether waiting pays.
2. **γ = 1**: rewards are costs over simulated time and steps are decisions of uneven length; a
   per-decision γ < 1 makes each extra "advance" shrink all later costs, so idling pays.
3. **Reference-relative reward** (:class:`ddl_gym.relative_reward.ReferenceRelativeReward`): each
   step's cost minus the reference policy's over the same interval on the same input. The return is
   Σ JCT(reference) − Σ JCT(agent): the optimum is unchanged, the input's variance (hours between
   workloads) is gone.
4. **Arrival pool**: training episodes draw their input from ``--pool`` fixed train seeds, so the
   reference's run is computed once per input and several rollouts share each input.
5. **Behaviour-cloning warm start** from a classic expert (``--expert``), then PPO.
6. **Selection on validation seeds** (the task's), never on its test seeds: the agent saved is the
   checkpoint with the lowest mean avg JCT on them.
7. **Several tasks at once** (optional, ``--also TASK=REFERENCE``, repeatable): the training envs are
   dealt round-robin over ``--task`` and the extra tasks, each with its own arrival pool (its first
   ``--pool`` train seeds) and reference; cloning draws ``--bc-episodes`` demonstrations from each
   task. A multi-task run selects on the *mean ratio* of the agent's avg JCT to its reference's over
   every task's validation seeds (absolute seconds would let the slowest task decide alone). All tasks
   must share the observation and action layout (same window, placements, clairvoyance, queue order).
8. **Input-dependent baseline** (optional, ``--critic-sees-future``): during training the critic, never
   the actor, also sees a summary of the episode's future arrivals, which explain much of a return's
   variance and no observation shows (:mod:`ddl_gym.agents.privileged_critic`; Mao et al. ICLR'19).
   The agent saved is an ordinary one on the env's observation.

Writes ``OUT/agent.zip`` (+ ``agent.json`` metadata, ``agent.vecnormalize.pkl``), ``OUT/log.json``
(validation curve, BC accuracy, CPU seconds). ``timesteps`` counts the steps requested, ``--validate-every``
at a time; PPO collects whole rollouts of ``n_envs × n_steps`` decisions, so the steps it consumed
(``env_steps``, SB3's ``num_timesteps``) are more when ``--validate-every`` is not a multiple of that
(the defaults, 20,000 and 8 × 256: 20,480 per chunk). Load it with
``ddl_gym.agents.load_policy("maskable-ppo:OUT/agent.zip")``; ``ddl-gym eval`` runs it in the v1 env.
"""

from __future__ import annotations

import argparse
import json
import math
import pickle
import sys
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np

import ddl_gym
from ddl_gym.sim.model import ConfigError


#: the env's own placement actions (DDLClusterEnv's default); other sets are recorded in the agent's env_kwargs
DEFAULT_PLACEMENTS = ("pack", "spread", "contention_aware")


def make_env(task_scenario: str, clairvoyant: bool, pool: Sequence[int] | None, reference: str | None,
             window: int, queue_order: str | None = None, placements: Sequence[str] | None = None,
             preemption: bool = False) -> Any:
    from ddl_gym.relative_reward import make_v1_env

    extra: dict[str, Any] = {} if placements is None else {"placements": tuple(placements)}
    if preemption:
        extra["preemption"] = True
    return make_v1_env(task_scenario, clairvoyant=clairvoyant, arrival_pool=pool, reference=reference,
                       window=window, queue_order=queue_order, **extra)


def _clone_driver(model: Any, norm: Any, env: Any) -> Any:
    """The model's deterministic masked action for an observation of ``env`` (validation; DAgger's driver)."""
    # A privileged critic's model reads more columns (the future, recipe step 8); its actor ignores them: zeros.
    pad = np.zeros(model.observation_space.shape[0] - env.observation_space.shape[0], dtype=np.float32)

    def act(obs: np.ndarray, mask: np.ndarray) -> int:
        x = norm.normalize_obs(np.concatenate([obs, pad])[None, :]).astype(np.float32)
        action, _ = model.predict(x, action_masks=mask[None, :].astype(bool), deterministic=True)
        return int(action[0])
    return act


def _thunk(*args: Any, critic_sees_future: bool = False):
    def build() -> Any:
        from stable_baselines3.common.monitor import Monitor

        env = make_env(*args)
        if critic_sees_future:
            from ddl_gym.agents.privileged_critic import FutureInputFeatures

            env = FutureInputFeatures(env)
        return Monitor(env)
    return build


def validate(model: Any, norm: Any, scenario: str, clairvoyant: bool, seeds: Sequence[int], window: int,
             queue_order: str | None = None, placements: Sequence[str] | None = None,
             preemption: bool = False) -> float:
    """Mean avg JCT (s) of the deterministic masked policy on ``seeds`` (plain −ΣJCT env, no reference)."""
    env = make_env(scenario, clairvoyant, None, None, window, queue_order, placements, preemption)
    act = _clone_driver(model, norm, env)
    jcts = []
    for seed in seeds:
        obs, info = env.reset(seed=int(seed))
        while True:
            obs, _, terminated, truncated, info = env.step(act(obs, info["action_mask"]))
            if terminated or truncated:
                jcts.append(info["metrics"]["avg_jct_s"])
                break
    return float(np.mean(jcts))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--task", required=True, help="suite task name (ddl_gym.suite)")
    parser.add_argument("--expert", default=None,
                        help="classic order+placement policy to clone first (e.g. srsf+ca); not with --init")
    parser.add_argument("--reference", required=True, help="reference policy of the relative reward")
    parser.add_argument("--also", action="append", default=[], metavar="TASK=REFERENCE",
                        help="train on this task too, with this reference (repeatable; recipe step 7)")
    parser.add_argument("--timesteps", type=int, default=300_000)
    parser.add_argument("--pool", type=int, default=256, help="train seeds in the arrival pool (first of the task's)")
    parser.add_argument("--n-envs", type=int, default=8)
    parser.add_argument("--window", type=int, default=8)
    parser.add_argument("--queue-order", default=None,
                        help="the window's job order (default: srsf, or fifo on a non-clairvoyant task; "
                             "gpu-step is the other non-clairvoyant order); recorded in the agent's env_kwargs")
    parser.add_argument("--placements", default=None, type=_placement_list,
                        help="comma-separated placement rules of the action space (default: the env's "
                             f"{','.join(DEFAULT_PLACEMENTS)}; e.g. pack,spread,ca,fs); recorded in the agent's "
                             "env_kwargs when not the default")
    parser.add_argument("--widen-from", default=None, metavar="RULE",
                        help="with --init from an agent whose placements are a subset of --placements: each new rule's "
                             "action logits start as copies of RULE's, the copies sharing RULE's probability, so the "
                             "widened network samples as the old one did")
    parser.add_argument("--network", choices=("mlp", "attention"), default="mlp",
                        help="mlp: 2x256 tanh MLPs on the flat observation; attention: a Transformer over the queue "
                             "and running slots with one shared per-slot action head (ddl_gym.agents.slot_attention)")
    parser.add_argument("--attention-width", type=int, default=None, metavar="D",
                        help="--network attention: token width d_model, a multiple of its 4 heads (default 64; "
                             "feed-forward 2D)")
    parser.add_argument("--attention-layers", type=int, default=None, metavar="L",
                        help="--network attention: Transformer encoder layers (default 2)")
    parser.add_argument("--critic-sees-future", action="store_true",
                        help="input-dependent baseline (recipe step 8): the critic, never the actor, also sees the "
                             "episode's future arrivals during training; the saved agent is an ordinary one")
    parser.add_argument("--bc-episodes", type=int, default=40)
    parser.add_argument("--bc-epochs", type=int, default=20)
    parser.add_argument("--dagger-rounds", type=int, default=0,
                        help="after cloning: rounds in which the clone drives and the expert labels (DAgger)")
    parser.add_argument("--dagger-episodes", type=int, default=15, help="train episodes per DAgger round")
    parser.add_argument("--preemption", action="store_true",
                        help="the env's preempt actions (DDLCluster-v1 preemption=True; recorded in env_kwargs); an "
                             "expert 'gittins:...' then clones the preemptive Gittins reference")
    parser.add_argument("--critic-warmup", type=int, default=0, metavar="STEPS",
                        help="env steps of PPO that train the critic alone (actor and observation statistics "
                             "frozen) before the PPO proper: cloning fits the actor only, and an untrained critic's "
                             "advantages would otherwise steer the first updates")
    parser.add_argument("--learning-rate", type=float, default=1e-4)
    parser.add_argument("--ent-coef", type=float, default=0.003)
    parser.add_argument("--clip-range", type=float, default=0.1)
    parser.add_argument("--gae-lambda", type=float, default=0.95,
                        help="GAE's lambda (bias against variance of the advantage; gamma stays 1, the env contract)")
    parser.add_argument("--n-epochs", type=int, default=5)
    parser.add_argument("--n-steps", type=int, default=256,
                        help="steps per env between PPO updates (an update sees n_envs x n_steps decisions)")
    parser.add_argument("--batch-size", type=int, default=512, help="PPO minibatch size")
    parser.add_argument("--validate-every", type=int, default=20_000, help="environment steps between validations")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--init", default=None,
                        help="continue from this agent zip (a train_v1 run or a shipped v1 agent trained on this task, "
                             "alone or among others, with the same env settings): its network and observation "
                             "statistics; no behaviour cloning")
    parser.add_argument("--preset", help="a YAML file (or a name in agents/presets/) whose keys set these defaults")
    parser.add_argument("--out", required=True)
    first, _ = parser.parse_known_args(argv)
    if first.preset:
        parser.set_defaults(**_preset_defaults(parser, first.preset))
    args = parser.parse_args(argv)
    if (args.expert is None) == (args.init is None):
        parser.error("give --expert (clone it, then PPO) or --init (continue from an agent), not both or neither")
    if args.dagger_rounds and args.init is not None:
        parser.error("--dagger-rounds follows the cloning of --expert; not with --init")
    if args.dagger_rounds and args.also:
        parser.error("--dagger-rounds runs on the main task only; not with --also")
    if args.widen_from is not None and args.init is None:
        parser.error("--widen-from widens an --init agent's action space; give --init")
    if args.network != "attention" and (args.attention_width is not None or args.attention_layers is not None):
        parser.error("--attention-width / --attention-layers size the attention network; give --network attention")
    if args.network == "attention":
        from ddl_gym.agents.slot_attention import D_MODEL, N_HEADS, N_LAYERS

        args.attention_width = D_MODEL if args.attention_width is None else args.attention_width
        args.attention_layers = N_LAYERS if args.attention_layers is None else args.attention_layers
        if args.attention_width < N_HEADS or args.attention_width % N_HEADS:
            parser.error(f"--attention-width must be a positive multiple of {N_HEADS} (the heads), "
                         f"got {args.attention_width}")
        if args.attention_layers < 1:
            parser.error(f"--attention-layers must be >= 1, got {args.attention_layers}")
    if args.placements == DEFAULT_PLACEMENTS:
        args.placements = None  # the env's default: not recorded, as in every earlier agent
    if args.dagger_rounds < 0:
        parser.error("--dagger-rounds must be >= 0")
    if args.critic_warmup < 0:
        parser.error("--critic-warmup must be >= 0")
    for name in ("timesteps", "pool", "n_envs", "window", "bc_episodes", "bc_epochs", "validate_every", "n_epochs",
                 "n_steps", "batch_size", "dagger_episodes"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be >= 1")

    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv, VecNormalize

    from ddl_gym.agents.imitation import behaviour_cloning, collect_demonstrations, imitation_accuracy
    from ddl_gym.suite import get_task

    torch.set_num_threads(1)
    try:
        task = get_task(args.task)
        extra = _extra_tasks(args.also, task)
    except ValueError as exc:
        raise SystemExit(f"train_v1: {exc}") from None
    # (task, reference) of every training task, the main one first
    tasks = [(task, args.reference)] + extra
    if args.n_envs < len(tasks):
        raise SystemExit(f"train_v1: --n-envs {args.n_envs} cannot give each of the {len(tasks)} tasks an env")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    cpu0 = time.process_time()

    def pool_of(t: Any) -> list[int]:
        return list(range(t.train_seeds.start, t.train_seeds.start + args.pool))

    def bc_seeds_of(t: Any) -> range:  # disjoint from the pool
        start = t.train_seeds.start + args.pool
        return range(start, start + args.bc_episodes)

    # 1. Vectorised training envs: v1 observation, arrival pool, reference-relative reward; obs normalised.
    fns = []
    for i in range(args.n_envs):
        t, reference = tasks[i % len(tasks)]
        fns.append(_thunk(t.training_scenario, t.clairvoyant, pool_of(t), reference, args.window, args.queue_order,
                          args.placements, args.preemption, critic_sees_future=args.critic_sees_future))
    venv = VecNormalize(DummyVecEnv(fns), norm_obs=True, norm_reward=False, clip_obs=10.0, gamma=1.0)
    venv.seed(args.seed)
    layout_env = make_env(task.scenario, task.clairvoyant, None, None, args.window, args.queue_order, args.placements,
                          args.preemption)
    policy, policy_kwargs = _policy_spec(args, layout_env, extra=_future_columns(args))
    model = MaskablePPO(policy, venv, seed=args.seed, device="cpu", verbose=0, gamma=1.0,
                        gae_lambda=args.gae_lambda,
                        learning_rate=args.learning_rate, n_steps=args.n_steps, batch_size=args.batch_size,
                        n_epochs=args.n_epochs,
                        ent_coef=args.ent_coef, clip_range=args.clip_range, vf_coef=0.5, max_grad_norm=0.5,
                        policy_kwargs=policy_kwargs)

    log: dict[str, Any] = {"task": task.name, "expert": args.expert, "reference": args.reference, "pool": args.pool,
                           "validation": []}
    if extra:
        log["also"] = _also(tasks)
    if args.init:
        # 2'. Continue from a trained agent: its network and observation statistics, no cloning.
        _load_init(model, venv, Path(args.init), task, args)
        log["init"] = str(args.init)
        print(f"init from {args.init}", file=sys.stderr, flush=True)
    else:
        # 2. Behaviour cloning of the expert on seeds outside the pool (obs statistics fitted on its states).
        parts = []
        for t, _ in tasks:
            demo_env = _thunk(t.training_scenario, t.clairvoyant, None, None, args.window, args.queue_order,
                              args.placements, args.preemption, critic_sees_future=args.critic_sees_future)()
            parts.append(collect_demonstrations(demo_env, args.expert, bc_seeds_of(t), "window"))
        demos = {key: np.concatenate([part[key] for part in parts]) for key in parts[0]}
        venv.obs_rms.update(demos["obs"])
        obs = venv.normalize_obs(demos["obs"]).astype(np.float32)
        before = imitation_accuracy(model, obs, demos["actions"], demos["masks"])
        history = behaviour_cloning(model, obs, demos["actions"], demos["masks"], epochs=args.bc_epochs,
                                    seed=args.seed)
        log["bc"] = {"samples": int(len(obs)), "accuracy_before": before, "accuracy_after": history[-1]["accuracy"]}
        print(f"BC {args.expert}: accuracy {before:.3f} -> {history[-1]['accuracy']:.3f} on {len(obs)} states",
              file=sys.stderr, flush=True)
        # 2b. DAgger (Ross et al., 2011): the clone drives, the expert labels the states it visits, and the clone
        # is fitted again on every label so far (its own mistakes' states included; statistics kept from 2).
        for r in range(args.dagger_rounds):
            start = task.train_seeds.start + args.pool + args.bc_episodes + r * args.dagger_episodes
            demo_env = _thunk(task.training_scenario, task.clairvoyant, None, None, args.window, args.queue_order,
                              args.placements, args.preemption, critic_sees_future=args.critic_sees_future)()
            driver = _clone_driver(model, venv, demo_env)
            new = collect_demonstrations(demo_env, args.expert, range(start, start + args.dagger_episodes), "window",
                                         driver=driver)
            demos = {key: np.concatenate([demos[key], new[key]]) for key in demos}
            obs = venv.normalize_obs(demos["obs"]).astype(np.float32)
            history = behaviour_cloning(model, obs, demos["actions"], demos["masks"], epochs=args.bc_epochs,
                                        seed=args.seed + 1 + r)
            log["bc"].setdefault("dagger", []).append({"round": r + 1, "samples": int(len(obs)),
                                                       "accuracy": history[-1]["accuracy"]})
            print(f"DAgger round {r + 1}: {len(new['obs'])} new labels, accuracy {history[-1]['accuracy']:.3f} on "
                  f"{len(obs)} states", file=sys.stderr, flush=True)

    # 3. PPO with validation-based selection; the critic first learns the cloned actor's values.
    selection = _Selection(tasks, args)
    best = selection.score(model, venv, log, 0)
    _save(model, venv, out, task, args, selection, 0)
    if args.critic_warmup:
        warm_critic(model, venv, args.critic_warmup)
        log["critic_warmup"] = {"env_steps": int(model.num_timesteps)}
        print(f"critic warm-up: {model.num_timesteps} env steps, actor unchanged", file=sys.stderr, flush=True)
    done = 0
    while done < args.timesteps:
        chunk = min(args.validate_every, args.timesteps - done)
        model.learn(total_timesteps=chunk, reset_num_timesteps=False)
        done += chunk
        venv.training = False
        score = selection.score(model, venv, log, done, best)
        venv.training = True
        if score < best:
            best = score
            _save(model, venv, out, task, args, selection, done)
        log["cpu_s"] = time.process_time() - cpu0
        (out / "log.json").write_text(json.dumps(log, indent=2))
    return 0


def critic_parameters(policy: Any) -> list[str]:
    """Names of the parameters only the critic reads (its head and its MLP branch, in every network here)."""
    return [name for name, _ in policy.named_parameters()
            if name.startswith(("value_net.", "mlp_extractor.value_net.", "vf_features_extractor."))]


def warm_critic(model: Any, venv: Any, steps: int) -> None:
    """Run ``steps`` env steps of PPO with every parameter but the critic's frozen and the observation
    statistics fixed, so the actor (the clone) acts and is left exactly as it was."""
    critic = set(critic_parameters(model.policy))
    if not critic:
        raise ConfigError("--critic-warmup: this network has no critic-only parameters to warm up")
    frozen = [p for name, p in model.policy.named_parameters() if name not in critic and p.requires_grad]
    for p in frozen:
        p.requires_grad_(False)
    training = venv.training
    venv.training = False
    try:
        model.learn(total_timesteps=steps, reset_num_timesteps=False)
    finally:
        for p in frozen:
            p.requires_grad_(True)
        venv.training = training


class _Selection:
    """The figure a checkpoint is selected on (recipe step 6; step 7 for several tasks), logged and printed."""

    def __init__(self, tasks: list[tuple[Any, str]], args: argparse.Namespace) -> None:
        from ddl_gym.harness import evaluate

        self.tasks, self.args = tasks, args
        self.reference_means: list[float] = []
        self.main_avg_jct_s = math.nan  # the main task's figure and the metadata of the latest score
        self.extra_meta: dict[str, Any] = {}
        if len(tasks) > 1:  # the ratio's denominators: each task's reference on its validation seeds
            for t, reference in tasks:
                res = evaluate([reference], t.scenario, list(t.validation_seeds), None, workers=1, progress=False,
                               plots=False, echo=False)
                self.reference_means.append(float(res.summary["avg_jct_s"].mean()))

    def score(self, model: Any, venv: Any, log: dict[str, Any], steps: int, best: float | None = None) -> float:
        a = self.args
        means = [validate(model, venv, t.scenario, t.clairvoyant, list(t.validation_seeds), a.window, a.queue_order,
                          a.placements, a.preemption) for t, _ in self.tasks]
        if len(self.tasks) == 1:
            score = means[0]
            log["validation"].append({"timesteps": steps, "env_steps": int(model.num_timesteps), "avg_jct_s": score})
            text = f"validation avg JCT {score:.1f}s"
        else:
            ratios = [m / r for m, r in zip(means, self.reference_means)]
            score = float(np.mean(ratios))
            log["validation"].append({"timesteps": steps, "env_steps": int(model.num_timesteps), "avg_jct_s": means[0],
                                      "mean_ratio": score,
                                      "per_task": {t.name: m for (t, _), m in zip(self.tasks, means)}})
            text = f"validation mean ratio to the references {score:.4f} ({self.tasks[0][0].name} {means[0]:.1f}s)"
        self.main_avg_jct_s = means[0]
        if len(self.tasks) > 1:
            self.extra_meta = {"also": _also(self.tasks), "validation_mean_ratio": score}
        shown = score if best is None else min(best, score)
        best_text = f"{shown:.1f}s" if len(self.tasks) == 1 else f"{shown:.4f}"
        print(f"t={steps} {text}" + ("" if best is None else f" (best {best_text})"), file=sys.stderr, flush=True)
        return score


def _also(tasks: list[tuple[Any, str]]) -> list[dict[str, str]]:
    """The extra tasks of a run as recorded in its log and metadata."""
    return [{"task": t.name, "reference": r} for t, r in tasks[1:]]


def _extra_tasks(items: Sequence[str], main_task: Any) -> list[tuple[Any, str]]:
    """``--also TASK=REFERENCE`` items as (task, reference); every task shares the main task's clairvoyance."""
    from ddl_gym.suite import get_task

    out: list[tuple[Any, str]] = []
    for item in items:
        name, sep, reference = item.partition("=")
        if not sep or not name or not reference:
            raise ValueError(f"--also takes TASK=REFERENCE, got {item!r}")
        t = get_task(name)
        if t.clairvoyant != main_task.clairvoyant:
            raise ValueError(f"--also {name}: its scheduler sees {'remaining work' if t.clairvoyant else 'attained service only'}, "
                             f"unlike --task {main_task.name}; one network cannot serve both observations")
        if t.name == main_task.name or t.name in (o.name for o, _ in out):
            raise ValueError(f"--also {name}: the task is already in the run")
        out.append((t, reference))
    return out


def _preset_defaults(parser: argparse.ArgumentParser, name: str) -> dict[str, Any]:
    """The keys of a preset file as argparse defaults (unknown keys and wrong types are named errors)."""
    import yaml

    path = Path(name)
    if not path.suffix:
        path = Path(__file__).with_name("presets") / f"{name}.yaml"
    try:
        data = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"preset {path}: cannot read it ({type(exc).__name__})") from None
    if not isinstance(data, dict):
        raise ConfigError(f"preset {path}: expected a mapping of settings")
    known = {a.dest: a for a in parser._actions}
    out: dict[str, Any] = {}
    for key, value in data.items():
        if key == "description":
            continue
        action = known.get(str(key))
        if action is None or action.dest in ("help", "preset", "out"):
            raise ConfigError(f"preset {path}: unknown key {key!r}")
        try:
            out[action.dest] = action.type(value) if action.type is not None else value
        except (TypeError, ValueError):
            raise ConfigError(f"preset {path}: {key} must be of type {action.type.__name__}, got {value!r}") from None
    return out


def _load_init(model: Any, venv: Any, path: Path, task: Any, args: argparse.Namespace) -> None:
    """Copy ``path``'s network weights and observation statistics into ``model`` / ``venv`` (same task and env)."""
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import VecNormalize

    meta_path = path.with_suffix(".json")
    try:
        meta = json.loads(meta_path.read_text())
    except (OSError, ValueError):
        raise ConfigError(f"--init {path}: cannot read its metadata {meta_path}") from None
    # A multi-task agent may be continued on any task it trained on: the v1 observation is size-independent, and
    # its value head already learnt that task's reference-relative return.
    trained_on = [meta.get("task")] + [o.get("task") for o in meta.get("also", []) if isinstance(o, dict)]
    if task.name not in trained_on:
        raise ConfigError(f"--init {path}: trained on task{'s' if len(trained_on) > 1 else ''} "
                          f"{', '.join(repr(t) for t in trained_on)}, not {task.name!r}")
    mine = _env_kwargs(task, args)
    theirs = dict(meta.get("env_kwargs", {}))
    old_rules = _canonical_rules(theirs.get("placements", DEFAULT_PLACEMENTS))
    new_rules = _canonical_rules(mine.get("placements", DEFAULT_PLACEMENTS))
    theirs.pop("placements", None)
    if theirs != {k: v for k, v in mine.items() if k != "placements"}:
        raise ConfigError(f"--init {path}: its env settings {meta.get('env_kwargs')} differ from this run's {mine}")
    if old_rules != new_rules:
        if args.widen_from is None:
            raise ConfigError(f"--init {path}: its placements {old_rules} differ from this run's {new_rules}; give "
                              "--widen-from RULE to start the new rules as copies of one of its rules")
        if not set(old_rules) <= set(new_rules):
            raise ConfigError(f"--init {path}: --widen-from adds rules; the run's placements {new_rules} lack "
                              f"{sorted(set(old_rules) - set(new_rules))}")
    elif args.widen_from is not None:
        raise ConfigError(f"--widen-from {args.widen_from}: the agent at {path} already has this run's placements")
    theirs_network = (meta.get("recipe") or {}).get("network", "mlp")
    if theirs_network != args.network:
        raise ConfigError(f"--init {path}: a {theirs_network} network; this run's --network is {args.network}")
    if args.widen_from is not None and args.network != "mlp":
        raise ConfigError("--widen-from widens the MLP's action head; the attention network is not supported")
    if args.network == "attention":
        from ddl_gym.agents.slot_attention import D_MODEL, N_LAYERS

        recipe = meta.get("recipe") or {}  # agents from before the size flags have the default size
        theirs_size = (recipe.get("attention_width", D_MODEL), recipe.get("attention_layers", N_LAYERS))
        if theirs_size != (args.attention_width, args.attention_layers):
            raise ConfigError(f"--init {path}: an attention network of width {theirs_size[0]} and {theirs_size[1]} "
                              f"layers; this run asks for width {args.attention_width} and {args.attention_layers} "
                              "layers (--attention-width / --attention-layers)")
    sidecar = path.parent / meta.get("vecnormalize", "")
    if not path.is_file() or not sidecar.is_file():
        raise ConfigError(f"--init {path}: the zip or its observation statistics ({sidecar.name}) is missing")
    loaded = MaskablePPO.load(str(path), device="cpu")
    state = loaded.policy.state_dict()
    if old_rules != new_rules:
        source = _canonical_rules([args.widen_from])[0]
        if source not in old_rules:
            raise ConfigError(f"--widen-from {args.widen_from}: not one of the --init agent's placements {old_rules}")
        state = widen_action_head(state, old_rules, new_rules, source, window=args.window)
    if args.critic_sees_future:
        from stable_baselines3.common.running_mean_std import RunningMeanStd

        from ddl_gym.agents.privileged_critic import FUTURE_FEATURES, widen_critic_state

        state = widen_critic_state(state, len(FUTURE_FEATURES))
        with open(sidecar, "rb") as fh:  # the agent's statistics on the env's observation (VecNormalize.load's pickle)
            plain = pickle.load(fh).obs_rms
        # the future's columns start at mean 0, variance 1 (their critic weights are 0); training updates them
        stats = RunningMeanStd(shape=venv.observation_space.shape)
        stats.mean = np.concatenate([plain.mean, np.zeros(len(FUTURE_FEATURES))])
        stats.var = np.concatenate([plain.var, np.ones(len(FUTURE_FEATURES))])
        stats.count = plain.count
        venv.obs_rms = stats
    else:
        venv.obs_rms = VecNormalize.load(str(sidecar), venv.venv).obs_rms
    model.policy.load_state_dict(state)


def _placement_list(text: str) -> tuple[str, ...]:
    """``--placements``: comma-separated rule names or aliases, canonical and without repeats."""
    names = tuple(n.strip() for n in str(text).split(",") if n.strip())
    if not names:
        raise argparse.ArgumentTypeError("name at least one placement rule")
    try:
        rules = _canonical_rules(names)
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if len(set(rules)) != len(rules):
        raise argparse.ArgumentTypeError(f"a rule is named twice in {text!r}")
    return rules


def _canonical_rules(names: Sequence[str]) -> tuple[str, ...]:
    """Rule names with aliases resolved (``ca`` -> ``contention_aware``); an unknown name is a ConfigError."""
    from ddl_gym.placement import canonical_placement_name

    return tuple(canonical_placement_name(str(name)) for name in names)


def widen_action_head(state: dict[str, Any], old_rules: Sequence[str], new_rules: Sequence[str], source: str,
                      window: int) -> dict[str, Any]:
    """A policy state dict whose action head serves ``new_rules`` (a superset of ``old_rules``).

    Actions are ``0`` (advance) and ``1 + w·P + p`` (start window slot ``w`` with rule ``p``). Each old
    rule's logits are kept; each new rule's row is a copy of ``source``'s. The ``c`` rows that now share
    ``source``'s logit (itself and its copies) each get ``log c`` less bias, so the widened *stochastic*
    policy is the old one (the copies' probabilities sum to ``source``'s old one), which is what PPO
    continues from. The deterministic (argmax) policy may differ: ``source``'s share of a job is split
    in ``c``, so another rule for the same job can now win the argmax.
    """
    import torch

    weight, bias = state["action_net.weight"], state["action_net.bias"]
    p_old, p_new = len(old_rules), len(new_rules)
    if weight.shape[0] != 1 + window * p_old:
        raise ConfigError(f"the --init agent's action head has {weight.shape[0]} outputs, not 1 + {window} x {p_old}")
    copies = 1 + sum(1 for r in new_rules if r not in old_rules)
    shift = math.log(copies)
    rows = [0]
    for w in range(window):
        for rule in new_rules:
            rows.append(1 + w * p_old + old_rules.index(rule if rule in old_rules else source))
    index = torch.tensor(rows, dtype=torch.long)
    new_weight, new_bias = weight[index].clone(), bias[index].clone()
    for w in range(window):
        for p, rule in enumerate(new_rules):
            if rule == source or rule not in old_rules:
                new_bias[1 + w * p_new + p] -= shift
    return dict(state, **{"action_net.weight": new_weight, "action_net.bias": new_bias})


def _env_kwargs(task: Any, args: argparse.Namespace) -> dict[str, Any]:
    """The env settings an agent of this run records (and an --init agent must share)."""
    return {"window": args.window, "clairvoyant": task.clairvoyant,
            **({"queue_order": args.queue_order} if args.queue_order else {}),
            **({"placements": list(args.placements)} if args.placements else {}),
            **({"preemption": True} if args.preemption else {})}


def _save(model: Any, venv: Any, out: Path, task: Any, args: argparse.Namespace, selection: _Selection,
          steps: int) -> None:
    """agent.zip + agent.json (the metadata ddl_gym.agents.load_policy reads) + observation statistics."""
    env = make_env(task.scenario, task.clairvoyant, None, None, args.window, args.queue_order, args.placements,
                   args.preemption)
    base = env.unwrapped
    layout = {k: (list(v) if isinstance(v, tuple) else v) for k, v in base.observation_layout.items()}
    meta = {
        "algo": "maskable-ppo", "scenario": task.scenario, "task": task.name, "ddl_gym_version": ddl_gym.__version__,
        "env_id": task.env_id, "env_kwargs": _env_kwargs(task, args),
        "observation_layout": layout, "observation_shape": list(env.observation_space.shape),
        "action_n": int(env.action_space.n), "window": int(base.window), "placements": list(base.placement_names),
        "queue_order": base.queue_order, "timesteps": steps, "env_steps": int(model.num_timesteps),
        "validation_avg_jct_s": selection.main_avg_jct_s,
        **selection.extra_meta,
        "recipe": {"expert": args.expert, "reference": args.reference, "pool": args.pool, "gamma": 1.0,
                   "gae_lambda": args.gae_lambda,
                   "learning_rate": args.learning_rate, "ent_coef": args.ent_coef, "clip_range": args.clip_range,
                   "n_epochs": args.n_epochs, "n_steps": args.n_steps, "batch_size": args.batch_size, "seed": args.seed, **({"init": str(args.init)} if args.init else {}),
                   **({"widen_from": args.widen_from} if args.widen_from else {}),
                   **({"critic_sees_future": True} if args.critic_sees_future else {}),
                   **({"critic_warmup": args.critic_warmup} if args.critic_warmup else {}),
                   **({"network": args.network} if args.network != "mlp" else {}),
                   **(_attention_recipe(args) if args.network == "attention" else {})},
        "vecnormalize": "agent.vecnormalize.pkl",
    }
    if args.critic_sees_future:  # recipe step 8: ship the actor as an ordinary agent on the env's observation
        _save_actor(model, venv, env, out)
    else:
        # The agent ships without Adam's moment estimates (2/3 of the file): acting never reads them.
        trained_optimizer = model.policy.optimizer
        model.policy.optimizer = model.policy.optimizer_class(model.policy.parameters(), lr=model.lr_schedule(1),
                                                              **model.policy.optimizer_kwargs)
        model.save(out / "agent.zip")
        model.policy.optimizer = trained_optimizer
        venv.save(str(out / "agent.vecnormalize.pkl"))  # VecNormalize pickles its statistics without the envs
    (out / "agent.json").write_text(json.dumps(meta, indent=2))


def _future_columns(args: argparse.Namespace) -> int:
    """Observation columns the critic alone reads (recipe step 8), 0 without --critic-sees-future."""
    if not args.critic_sees_future:
        return 0
    from ddl_gym.agents.privileged_critic import FUTURE_FEATURES

    return len(FUTURE_FEATURES)


def _attention_recipe(args: argparse.Namespace) -> dict[str, int]:
    """The attention network's size as the recipe records it (the agent's zip holds it too)."""
    return {"attention_width": args.attention_width, "attention_layers": args.attention_layers}


def _policy_spec(args: argparse.Namespace, env: Any, extra: int) -> tuple[Any, dict[str, Any]]:
    """(policy class or name, policy_kwargs) of ``--network`` on ``env`` (the task's plain v1 env), the critic
    reading ``extra`` more columns than its observation."""
    import torch

    if args.network == "attention":
        from ddl_gym.agents.slot_attention import SlotAttentionPolicy, observation_blocks

        blocks = observation_blocks(env.unwrapped.observation_layout, int(env.action_space.n), extra=extra)
        return SlotAttentionPolicy, {"blocks": blocks, "d_model": args.attention_width,
                                     "n_layers": args.attention_layers}
    kwargs: dict[str, Any] = {"net_arch": {"pi": [256, 256], "vf": [256, 256]}, "activation_fn": torch.nn.Tanh}
    if not extra:
        return "MlpPolicy", kwargs
    from ddl_gym.agents.privileged_critic import PrivilegedCriticPolicy

    return PrivilegedCriticPolicy, dict(kwargs, actor_features=int(env.observation_space.shape[0]))


def _save_actor(model: Any, venv: Any, env: Any, out: Path) -> None:
    """A privileged-critic model saved as an ordinary MlpPolicy agent on ``env``'s observation: actor unchanged,
    critic evaluated at the future's running mean (:func:`ddl_gym.agents.privileged_critic.actor_state`)."""
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.running_mean_std import RunningMeanStd
    from stable_baselines3.common.vec_env import DummyVecEnv, VecNormalize

    from ddl_gym.agents.privileged_critic import actor_state

    n = env.observation_space.shape[0]
    extra = model.observation_space.shape[0] - n
    if "blocks" in model.policy_kwargs:  # the attention network: the same class, its critic reading no future
        policy: Any = type(model.policy)
        kwargs = dict(model.policy_kwargs, blocks=dict(model.policy_kwargs["blocks"], extra=0))
    else:
        policy = "MlpPolicy"
        kwargs = {k: v for k, v in model.policy_kwargs.items() if k != "actor_features"}
    plain_venv = DummyVecEnv([lambda: env])
    plain = MaskablePPO(policy, plain_venv, device="cpu", verbose=0, gamma=model.gamma, gae_lambda=model.gae_lambda,
                        learning_rate=model.learning_rate, n_steps=model.n_steps, batch_size=model.batch_size,
                        n_epochs=model.n_epochs, ent_coef=model.ent_coef, clip_range=model.clip_range,
                        vf_coef=model.vf_coef, max_grad_norm=model.max_grad_norm, policy_kwargs=kwargs)
    plain.policy.load_state_dict(actor_state(model.policy.state_dict(), extra))
    plain.num_timesteps = model.num_timesteps
    plain.save(out / "agent.zip")
    norm = VecNormalize(plain_venv, norm_obs=True, norm_reward=False, clip_obs=venv.clip_obs, gamma=1.0)
    stats = RunningMeanStd(shape=(n,))
    stats.mean, stats.var, stats.count = venv.obs_rms.mean[:n].copy(), venv.obs_rms.var[:n].copy(), venv.obs_rms.count
    norm.obs_rms = stats
    norm.training = False
    norm.save(str(out / "agent.vecnormalize.pkl"))


if __name__ == "__main__":
    try:
        sys.exit(main())
    except ConfigError as exc:
        raise SystemExit(f"train_v1: {exc}") from None
