"""``ddl-gym train``: MaskablePPO / PPO on DDLCluster-v0, CleanRL-style (read top to bottom).

    ddl-gym train --scenario default --algo maskable-ppo --timesteps 1000000 --n-envs 4 --seed 0 \\
        --out runs/default-ppo [--preset default] [--bc-expert srsf+ca --bc-steps 15] [--resume]

What one run writes under ``--out``::

    config.json                 resolved preset + command-line overrides
    agent.zip, agent.json       final model + metadata sidecar (scenario, version, obs/action layout)
    vecnormalize.pkl            VecNormalize statistics of the final model
    best/agent.zip, .json, vecnormalize.pkl   the model with the best evaluation return so far
    eval/evaluations.npz, eval/curve.csv      evaluation returns (MaskableEvalCallback) over time
    checkpoints/step_<N>/       model.zip, vecnormalize.pkl, rng.pkl, state.json (resume points)
    tb/                         TensorBoard logs
    bc.json                     behaviour-cloning losses/accuracy (with --bc-expert)

Seeds. Training env ``i`` is seeded ``seed + i`` once; later episodes continue that env's random
stream. Evaluation during training replays seeds ``eval.seed .. eval.seed + episodes - 1``
(10 000+ by default) at every evaluation, so the curve compares like with like. The leaderboard's
held-out seeds are 1 000 000+; neither range is ever passed to a training env.

Resume (``--resume``). Checkpoints are taken at rollout boundaries (after a PPO update, before the
next rollout), so a checkpoint's weights, optimizer state, VecNormalize statistics and
``num_timesteps`` belong together. ``--resume`` loads the newest checkpoint, restores the Python,
NumPy and torch random states and every training env's random generator, and trains up to the
same ``--timesteps`` total. Identical after resume: weights, optimizer moments, normalisation
statistics, timestep counter, learning-rate schedule position, random-generator states.
*Not* bit-identical to an uninterrupted run: the episodes that were in flight at the checkpoint
are restarted (new episodes are drawn from the restored env generators, so the envs see different
workloads from that point than the uninterrupted run would), TensorBoard gets a second event file,
the evaluation history is kept up to the checkpoint (evaluations logged after it are dropped) but
the evaluation callback's step counter restarts, so later evaluation timesteps are offset by the
rollout size. Work done after the last checkpoint is lost. ``agent.json``'s ``wall_s`` is that of
the last segment.

Safety. ``--out`` naming a folder that already holds a run (``config.json``, ``agent.zip`` or
``checkpoints/``) is refused unless ``--resume`` (continue it) or ``--overwrite`` (delete that run's
files first), so two runs never mix checkpoints. ``--resume`` picks the newest checkpoint that is
*intact* (its ``state.json``, ``model.zip``, ``rng.pkl`` and ``vecnormalize.pkl`` read back); a
checkpoint truncated by a crash or a full disk is skipped with a note and the previous one is used.

Progress. A progress line on stderr shows steps done, steps/s, the latest and best evaluation
return and the time left (``--no-progress`` or ``--quiet`` turn it off).

Checkpoints and agents are pickles (``.zip`` holds PyTorch state loaded by stable-baselines3,
``*.pkl`` are Python pickles): loading one runs code from it, so load only files from sources you
trust.

Vectorisation: ``--vec-env auto`` (default) uses SubprocVecEnv when ``--n-envs > 1`` and
DummyVecEnv otherwise; ``--vec-env dummy`` keeps all envs in-process, which is faster on few cores
because a simulator step costs ~0.1 ms.
"""

from __future__ import annotations

import argparse
import copy
import json
import pickle
import random
import shutil
import sys
import time
from pathlib import Path
from typing import Any, Sequence

import gymnasium as gym
import numpy as np

import ddl_gym
from ddl_gym.envs.base import generator_from_state
from ddl_gym.sim.model import ConfigError

ENV_ID = "ddl_gym:DDLCluster-v0"
ALGOS = ("maskable-ppo", "ppo")
PRESET_DIR = Path(__file__).with_name("presets")
#: Plain PPO cannot be told which actions are invalid; these env settings keep it from stalling.
PPO_ENV_OVERRIDES = {"invalid_action_penalty": 0.05, "max_decisions": 3000}


# ---------------------------------------------------------------------------- presets
def load_preset(name_or_path: str, _chain: tuple[str, ...] = ()) -> dict[str, Any]:
    """A preset from ``agents/presets/<name>.yaml`` (or a YAML path), with ``inherit`` resolved.

    Every file is checked (:func:`ddl_gym.agents.preset_schema.read_preset_file`): not YAML, not a
    mapping, an unknown key, a wrong type or range, an ``inherit`` cycle are one-line ConfigErrors
    naming the file and the key.
    """
    from ddl_gym.agents.preset_schema import read_preset_file

    path = Path(name_or_path)
    if not path.suffix:
        path = PRESET_DIR / f"{name_or_path}.yaml"
    if not path.exists():
        known = sorted(p.stem for p in PRESET_DIR.glob("*.yaml"))
        raise ConfigError(f"unknown preset {name_or_path!r}; known: {', '.join(known)}")
    key = str(path.resolve())
    if key in _chain or len(_chain) > 16:
        raise ConfigError(f"{path}: inherit: presets inherit from each other in a cycle")
    data = dict(read_preset_file(path))
    parent = data.pop("inherit", None)
    if parent:
        data = _deep_merge(load_preset(parent, (*_chain, key)), data)
    if not _chain:  # the merged preset must hold every section the trainer reads
        missing = [k for k in ("timesteps", "n_envs", "env", "ppo", "eval", "checkpoint", "bc") if k not in data]
        if missing:
            raise ConfigError(f"{path}: {missing[0]}: missing (add it, or 'inherit: default' to take the defaults)")
    return data


def _deep_merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _deep_merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


# ---------------------------------------------------------------------------- envs
class SeedCycle(gym.Wrapper):
    """Reset with the next seed of a fixed list (cyclic), so every evaluation sees the same episodes."""

    def __init__(self, env: gym.Env, seeds: Sequence[int]) -> None:
        super().__init__(env)
        self._seeds = list(seeds)
        self._next = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):  # type: ignore[override]
        seed = self._seeds[self._next % len(self._seeds)]
        self._next += 1
        return self.env.reset(seed=seed, options=options)


def make_env_fn(scenario: str, env_kwargs: dict[str, Any], eval_seeds: Sequence[int] | None = None):
    """A picklable thunk for (Subproc|Dummy)VecEnv; the string id lets child processes register the env."""

    def _thunk() -> gym.Env:
        from stable_baselines3.common.monitor import Monitor

        env = gym.make(ENV_ID, scenario=scenario, render_mode=None, **env_kwargs)
        env = Monitor(env)
        if eval_seeds is not None:
            env = SeedCycle(env, eval_seeds)
        return env

    return _thunk


def make_vec_env(scenario: str, env_kwargs: dict[str, Any], n_envs: int, seed: int | None,
                 eval_seeds: Sequence[int] | None = None, kind: str = "auto"):
    """``kind``: ``"auto"`` (SubprocVecEnv when ``n_envs > 1``), ``"subproc"`` or ``"dummy"``.

    The simulator steps in ~0.1 ms, so on few cores inter-process messaging can cost more than it
    saves; ``--vec-env dummy`` keeps every env in the learner's process.
    """
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    fns = [make_env_fn(scenario, env_kwargs, eval_seeds) for _ in range(n_envs)]
    subproc = kind == "subproc" or (kind == "auto" and n_envs > 1)
    venv = SubprocVecEnv(fns) if subproc else DummyVecEnv(fns)
    if seed is not None:
        venv.seed(seed)
    return venv


def env_metadata(scenario: str, env_kwargs: dict[str, Any]) -> dict[str, Any]:
    """What an agent needs from an env: recorded at training time, checked at load time."""
    env = gym.make(ENV_ID, scenario=scenario, render_mode=None, **env_kwargs)
    base = env.unwrapped
    layout = {k: (list(v) if isinstance(v, tuple) else v) for k, v in base.observation_layout.items()}
    meta = {
        "scenario": scenario,
        "ddl_gym_version": ddl_gym.__version__,
        "env_id": ENV_ID,
        "env_kwargs": {k: (list(v) if isinstance(v, tuple) else v) for k, v in env_kwargs.items()},
        "observation_layout": layout,
        "observation_shape": list(env.observation_space.shape),
        "action_n": int(env.action_space.n),
        "window": int(base.window),
        "placements": list(base.placement_names),
        "queue_order": base.queue_order,
    }
    env.close()
    return meta


# ---------------------------------------------------------------------------- checkpoints
class RolloutCheckpoint:
    """Saves model + VecNormalize + random states every ``freq`` steps, at rollout boundaries."""

    def __new__(cls, *args: Any, **kwargs: Any):  # built lazily so sb3 is imported only when training
        from stable_baselines3.common.callbacks import BaseCallback

        class _Checkpoint(BaseCallback):
            def __init__(self, directory: Path, freq: int, keep: int) -> None:
                super().__init__()
                self.directory, self.freq, self.keep = directory, max(1, int(freq)), max(1, int(keep))
                self._last = 0

            def _on_rollout_start(self) -> None:
                # Called after the previous PPO update: weights and num_timesteps are consistent here.
                steps = self.model.num_timesteps
                if steps == 0 or steps // self.freq == self._last // self.freq or steps == self._last:
                    return
                save_checkpoint(self.model, self.directory, keep=self.keep)
                self._last = steps

            def _on_step(self) -> bool:
                return True

        return _Checkpoint(*args, **kwargs)


def save_checkpoint(model: Any, directory: Path, keep: int = 3) -> Path:
    """Write ``directory/step_<N>/`` (atomic: written to a temp name, then renamed)."""
    steps = int(model.num_timesteps)
    final = directory / f"step_{steps:012d}"
    tmp = directory / f".tmp_step_{steps:012d}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    model.save(tmp / "model.zip")
    venv = model.get_env()
    from stable_baselines3.common.vec_env import VecNormalize

    if isinstance(venv, VecNormalize):
        venv.save(str(tmp / "vecnormalize.pkl"))
    import torch

    env_rng = venv.env_method("get_wrapper_attr", "np_random") if venv is not None else []
    rng = {
        "python": random.getstate(), "numpy": np.random.get_state(), "torch": torch.get_rng_state(),
        "envs": [g.bit_generator.state for g in env_rng],
    }
    with open(tmp / "rng.pkl", "wb") as fh:
        pickle.dump(rng, fh)
    (tmp / "state.json").write_text(json.dumps({"num_timesteps": steps, "time": time.time()}))
    shutil.rmtree(final, ignore_errors=True)
    tmp.rename(final)
    for old in sorted(directory.glob("step_*"))[:-keep]:
        shutil.rmtree(old, ignore_errors=True)
    return final


def parameter_checksum(model: Any) -> float:
    """Sum of |w| over the policy's parameters (a cheap fingerprint to check what was loaded)."""
    return float(sum(p.detach().abs().sum().item() for p in model.policy.parameters()))


def latest_checkpoint(out: Path) -> Path | None:
    """The newest checkpoint folder (intact or not); see :func:`intact_checkpoints`."""
    found = sorted((out / "checkpoints").glob("step_*"))
    return found[-1] if found else None


def checkpoint_problem(checkpoint: Path, needs_vecnormalize: bool) -> str | None:
    """Why ``checkpoint`` cannot be resumed from (``None`` if every file reads back)."""
    import zipfile

    try:
        state = json.loads((checkpoint / "state.json").read_text())
        int(state["num_timesteps"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return f"state.json unreadable ({type(exc).__name__})"
    model = checkpoint / "model.zip"
    try:
        with zipfile.ZipFile(model) as zf:
            bad = zf.testzip()
        if bad is not None:
            return f"model.zip member {bad} is corrupt"
    except (OSError, zipfile.BadZipFile) as exc:
        return f"model.zip unreadable ({exc})"
    for name in ("rng.pkl",) + (("vecnormalize.pkl",) if needs_vecnormalize else ()):
        try:
            with open(checkpoint / name, "rb") as fh:
                pickle.load(fh)
        except Exception as exc:  # truncated pickles raise EOFError, UnpicklingError, ValueError ...
            return f"{name} unreadable ({type(exc).__name__})"
    return None


def intact_checkpoints(out: Path, needs_vecnormalize: bool = True, log: Any = None) -> list[Path]:
    """Checkpoints that read back completely, newest first; broken ones are reported through ``log``."""
    good = []
    for checkpoint in sorted((out / "checkpoints").glob("step_*"), reverse=True):
        problem = checkpoint_problem(checkpoint, needs_vecnormalize)
        if problem is None:
            good.append(checkpoint)
        elif log is not None:
            log(f"note: skipping checkpoint {checkpoint.name}: {problem}")
    return good


def restore_rng(checkpoint: Path, venv: Any) -> None:
    import torch

    with open(checkpoint / "rng.pkl", "rb") as fh:
        rng = pickle.load(fh)
    random.setstate(rng["python"])
    np.random.set_state(rng["numpy"])
    torch.set_rng_state(rng["torch"])
    for i, state in enumerate(rng["envs"][: venv.num_envs]):
        # Subprocess envs get a pickled copy of the rebuilt generator.
        venv.env_method("set_wrapper_attr", "np_random", generator_from_state(state), indices=[i])


# ---------------------------------------------------------------------------- saving agents
def save_agent(model: Any, venv: Any, path: Path, meta: dict[str, Any]) -> Path:
    """``path`` (a .zip) + ``<stem>.json`` sidecar + ``vecnormalize.pkl`` in the same folder."""
    from stable_baselines3.common.vec_env import VecNormalize

    path.parent.mkdir(parents=True, exist_ok=True)
    model.save(path)
    meta = dict(meta)
    if isinstance(venv, VecNormalize):
        stats = path.with_name("vecnormalize.pkl")
        venv.save(str(stats))
        meta["vecnormalize"] = stats.name
    else:
        meta["vecnormalize"] = None
    meta["num_timesteps"] = int(model.num_timesteps)
    path.with_suffix(".json").write_text(json.dumps(meta, indent=2))
    return path


class _BestSaver:
    """``callback_on_new_best``: also store the VecNormalize statistics and metadata of the best model."""

    def __new__(cls, *args: Any, **kwargs: Any):
        from stable_baselines3.common.callbacks import BaseCallback

        class _Saver(BaseCallback):
            def __init__(self, directory: Path, meta: dict[str, Any]) -> None:
                super().__init__()
                self.directory, self.meta = directory, meta

            def _on_step(self) -> bool:
                meta = dict(self.meta, best_mean_reward=float(self.parent.best_mean_reward))
                save_agent(self.model, self.model.get_env(), self.directory / "agent.zip", meta)
                return True

        return _Saver(*args, **kwargs)


class _KillAfter:
    """Test hook: stop training abruptly after N steps, as if the process had been killed."""

    def __new__(cls, *args: Any, **kwargs: Any):
        from stable_baselines3.common.callbacks import BaseCallback

        class _Kill(BaseCallback):
            def __init__(self, steps: int) -> None:
                super().__init__()
                self.steps = steps

            def _on_step(self) -> bool:
                return self.model.num_timesteps < self.steps

        return _Kill(*args, **kwargs)


class TrainingProgress:
    """Progress line on stderr: steps done / total, steps per second, evaluation returns, time left."""

    def __new__(cls, *args: Any, **kwargs: Any):
        from stable_baselines3.common.callbacks import BaseCallback

        class _Progress(BaseCallback):
            def __init__(self, total: int, evaluator: Any) -> None:
                super().__init__()
                self.total, self.evaluator = int(total), evaluator
                self.bar: Any = None
                self._shown = 0

            def _on_training_start(self) -> None:
                from tqdm.auto import tqdm

                start = int(self.model.num_timesteps)
                self.bar = tqdm(total=self.total, initial=start, desc="train", unit="step", unit_scale=True,
                                file=sys.stderr, dynamic_ncols=True, smoothing=0.05,
                                mininterval=0.5 if sys.stderr.isatty() else 30.0)
                self._shown = start

            def _on_step(self) -> bool:
                steps = int(self.model.num_timesteps)
                if self.bar is not None and steps - self._shown >= 64:
                    self.bar.update(steps - self._shown)
                    self._shown = steps
                    self._postfix()
                return True

            def _postfix(self) -> None:
                last = getattr(self.evaluator, "last_mean_reward", None)
                best = getattr(self.evaluator, "best_mean_reward", None)
                if last is not None and np.isfinite(last):
                    self.bar.set_postfix_str(f"eval return {last:.3g} (best {best:.3g})", refresh=False)

            def _on_training_end(self) -> None:
                if self.bar is not None:
                    self.bar.update(int(self.model.num_timesteps) - self._shown)
                    self._postfix()
                    self.bar.close()

        return _Progress(*args, **kwargs)


# ---------------------------------------------------------------------------- CLI
def build_parser() -> argparse.ArgumentParser:
    from ddl_gym.cliargs import OneLineParser, bounded_int, seed_type

    p = OneLineParser(prog="ddl-gym train", description="Train a (Maskable)PPO scheduling agent.")
    p.add_argument("--scenario", default="default", help="scenario name or file (default: default)")
    p.add_argument("--algo", choices=ALGOS, default="maskable-ppo")
    p.add_argument("--preset", default="default", help="hyper-parameter preset in agents/presets/ (or a YAML path)")
    p.add_argument("--timesteps", type=bounded_int(1, 10**10, "--timesteps"), default=None,
                   help="total environment steps (preset's if omitted)")
    p.add_argument("--n-envs", type=bounded_int(1, 256, "--n-envs"), default=None,
                   help="parallel envs; >1 uses SubprocVecEnv")
    p.add_argument("--seed", type=seed_type, default=0, help="the run's seed (envs are seeded seed, seed+1, ...)")
    p.add_argument("--out", required=True, help="output folder")
    p.add_argument("--resume", action="store_true", help="continue from the newest intact checkpoint in --out")
    p.add_argument("--overwrite", action="store_true", help="delete an earlier run in --out and start again")
    p.add_argument("--bc-expert", default=None, help="classic policy to clone first, e.g. srsf+ca")
    p.add_argument("--bc-steps", type=bounded_int(0, 100_000, "--bc-steps"), default=None,
                   help="behaviour-cloning epochs (preset's bc.epochs if omitted)")
    p.add_argument("--bc-episodes", type=bounded_int(1, 100_000, "--bc-episodes"), default=None,
                   help="demonstration episodes")
    p.add_argument("--window", type=bounded_int(1, 4096, "--window"), default=None, help="override env window W")
    p.add_argument("--queue-order", default=None, choices=("srsf", "fifo", "sjf"))
    p.add_argument("--eval-freq", type=bounded_int(1, 10**10, "--eval-freq"), default=None)
    p.add_argument("--checkpoint-freq", type=bounded_int(1, 10**10, "--checkpoint-freq"), default=None)
    p.add_argument("--vec-env", choices=("auto", "subproc", "dummy"), default="auto",
                   help="auto: SubprocVecEnv when --n-envs > 1, else DummyVecEnv")
    p.add_argument("--device", default="cpu")
    p.add_argument("--torch-threads", type=bounded_int(1, 256, "--torch-threads"), default=1,
                   help="torch intra-op threads (CPU); 1 avoids oversubscription next to env processes")
    p.add_argument("--no-progress", action="store_true", help="no progress line")
    p.add_argument("--quiet", action="store_true", help="no output except errors")
    p.add_argument("--kill-after", type=int, default=None, help=argparse.SUPPRESS)  # test hook
    return p


def resolve_config(args: argparse.Namespace) -> dict[str, Any]:
    cfg = load_preset(args.preset)
    cfg["preset"] = args.preset
    cfg["scenario"] = args.scenario
    cfg["algo"] = args.algo
    cfg["seed"] = args.seed
    if args.timesteps is not None:
        cfg["timesteps"] = args.timesteps
    if args.n_envs is not None:
        cfg["n_envs"] = args.n_envs
    if args.window is not None:
        cfg["env"]["window"] = args.window
    if args.queue_order is not None:
        cfg["env"]["queue_order"] = args.queue_order
    if args.eval_freq is not None:
        cfg["eval"]["freq"] = args.eval_freq
    if args.checkpoint_freq is not None:
        cfg["checkpoint"]["freq"] = args.checkpoint_freq
    if args.algo == "ppo":
        cfg["env"] = {**PPO_ENV_OVERRIDES, **cfg["env"]}
    cfg["bc"]["expert"] = args.bc_expert
    if args.bc_steps is not None:
        cfg["bc"]["epochs"] = args.bc_steps
    if args.bc_episodes is not None:
        cfg["bc"]["episodes"] = args.bc_episodes
    if cfg["timesteps"] < 1 or cfg["n_envs"] < 1:
        raise ConfigError("--timesteps and --n-envs must be >= 1")
    return cfg


#: Files and folders one training run writes into ``--out`` (what ``--overwrite`` deletes).
RUN_FILES = ("config.json", "agent.zip", "agent.json", "vecnormalize.pkl", "bc.json", "resume.json")
RUN_FOLDERS = ("checkpoints", "best", "eval", "tb")


def main(argv: Sequence[str] | None = None) -> int:
    from ddl_gym.cliargs import UsageError

    try:
        args = build_parser().parse_args(argv)
        return _train(args)
    except (ConfigError, UsageError) as exc:
        text = str(exc).strip()
        print(f"ddl-gym: error: {text.splitlines()[0] if text else type(exc).__name__}", file=sys.stderr)
        return 2


def _write_json_atomic(path: Path, data: Any) -> None:
    """Write JSON to a temporary file in the same folder, fsync it, then rename it over ``path``: a kill at
    any moment leaves the old file or the new one, never a torn one."""
    import os

    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(json.dumps(data, indent=2))
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise ConfigError(f"{path}: cannot write ({exc.strerror or exc})") from None


def _existing_run(out: Path) -> list[str]:
    """What of an earlier run ``out`` holds."""
    return [name for name in (*RUN_FILES, *RUN_FOLDERS) if (out / name).exists()]


def _prepare_out(args: argparse.Namespace) -> None:
    """Refuse to mix two runs in one folder; ``--overwrite`` removes the earlier run's files."""
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out}: exists and is not a folder")
    if args.resume and args.overwrite:
        raise ConfigError("--resume and --overwrite exclude each other (continue the run, or start it again)")
    found = _existing_run(out) if out.is_dir() else []
    if found and not (args.resume or args.overwrite):
        raise ConfigError(f"--out {out} already holds a training run ({', '.join(found[:3])}); "
                          "continue it with --resume, or start again with --overwrite")
    if found and args.overwrite:
        for name in RUN_FILES:
            (out / name).unlink(missing_ok=True)
        for name in RUN_FOLDERS:
            shutil.rmtree(out / name, ignore_errors=True)
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        raise ConfigError(f"--out {out}: cannot write there ({exc.strerror or exc})") from None


def _check_device(device: str) -> None:
    """``--device``: a torch device that exists here (no silent fall-back to the CPU)."""
    if device == "cpu":
        return
    import torch

    try:
        parsed = torch.device(device)
    except (RuntimeError, ValueError):
        raise ConfigError(f"--device {device[:40]!r}: not a torch device (cpu, cuda, cuda:N, mps)") from None
    if parsed.type == "cuda":
        if not torch.cuda.is_available():
            raise ConfigError(f"--device {device}: CUDA is not available on this machine (torch "
                              f"{torch.__version__}); use --device cpu")
        if parsed.index is not None and parsed.index >= torch.cuda.device_count():
            raise ConfigError(f"--device {device}: only {torch.cuda.device_count()} CUDA device(s) here")
    elif parsed.type == "mps" and not torch.backends.mps.is_available():
        raise ConfigError(f"--device {device}: MPS is not available on this machine; use --device cpu")
    elif parsed.type not in ("cuda", "mps"):
        raise ConfigError(f"--device {device[:40]!r}: training runs on cpu, cuda or mps")


def _check_inputs(args: argparse.Namespace, cfg: dict[str, Any] | None = None) -> None:
    """Fail in a second, with one line, on names that would otherwise fail minutes into training."""
    from ddl_gym.scenarios import get_scenario

    _check_device(args.device)
    if not args.bc_expert and (args.bc_steps is not None or args.bc_episodes is not None):
        raise ConfigError("--bc-steps/--bc-episodes shape the behaviour-cloning warm start, which runs only with "
                          "--bc-expert POLICY; without it they would be ignored")
    scenario = get_scenario(args.scenario)
    if scenario.engine != "job":
        raise ConfigError(f"scenario {scenario.name!r} uses the {scenario.engine}-level engine; the env (and so "
                          "training) needs a job-level scenario")
    if args.bc_expert:
        from ddl_gym.policies import make_policy

        make_policy(args.bc_expert)
    if cfg is not None:  # the preset's env arguments (and --window/--queue-order) build an env now
        from ddl_gym.agents.preset_schema import check_env_arguments

        check_env_arguments(args.scenario, dict(cfg["env"]), f"preset {args.preset}")


def _train(args: argparse.Namespace) -> int:
    out = Path(args.out)
    log = (lambda *a: None) if args.quiet else (lambda *a: print(*a, file=sys.stderr, flush=True))
    cfg: dict[str, Any] | None = None
    if not args.resume:  # bad names fail in a second, before the folder is touched or torch is imported
        _check_inputs(args)
        cfg = resolve_config(args)
        _check_inputs(args, cfg)
    _prepare_out(args)
    candidates: list[Path] = []
    if args.resume:
        try:  # the run's own config wins over the command line (only --timesteps may grow)
            cfg = json.loads((out / "config.json").read_text())
        except FileNotFoundError:
            cfg = None
        except (OSError, ValueError) as exc:
            if latest_checkpoint(out) is not None:
                raise ConfigError(f"{out / 'config.json'}: cannot read the run's configuration "
                                  f"({type(exc).__name__}); start again with --overwrite") from None
            cfg = None  # torn by a writer older than the atomic one, before any checkpoint: start again
        if cfg is not None:
            from ddl_gym.agents.preset_schema import check_preset

            check_preset(out / "config.json", cfg, allow_run_keys=True)
        if cfg is not None:
            use_norm_cfg = bool(cfg.get("normalize", {}).get("obs") or cfg.get("normalize", {}).get("reward"))
            candidates = intact_checkpoints(out, use_norm_cfg, log)
        if not candidates:
            if latest_checkpoint(out) is not None or (out / "agent.zip").exists():
                raise ConfigError(f"--resume: no intact checkpoint in {out}/checkpoints; start again with --overwrite")
            # Stopped before its first checkpoint (a kill at any moment): nothing trained is lost, so the
            # run restarts from step 0 -- with its own config.json when that was written, else from the
            # command line -- after the partial files (logs, evaluations, BC summary) are cleared.
            partial = [name for name in _existing_run(out) if name != "config.json"]
            for name in RUN_FILES:
                if name != "config.json":
                    (out / name).unlink(missing_ok=True)
            for name in RUN_FOLDERS:
                shutil.rmtree(out / name, ignore_errors=True)
            if cfg is not None:
                log(f"note: {out} holds a run stopped before its first checkpoint; restarting it from step 0 with "
                    f"its config.json" + (f" (cleared {', '.join(partial)})" if partial else ""))
                if args.timesteps is not None:
                    cfg["timesteps"] = args.timesteps
            else:
                log(f"note: nothing to resume in {out}; starting from scratch")
        elif args.timesteps is not None:
            cfg["timesteps"] = args.timesteps
    if cfg is None:
        _check_inputs(args)
        cfg = resolve_config(args)
        _check_inputs(args, cfg)
    _write_json_atomic(out / "config.json", cfg)
    rollout = int(cfg["ppo"].get("n_steps", 2048)) * int(cfg["n_envs"])
    if int(cfg["timesteps"]) % rollout:  # PPO learns whole rollouts: say what the run will really take
        steps = -(-int(cfg["timesteps"]) // rollout) * rollout
        log(f"note: timesteps {cfg['timesteps']} is not a whole number of rollouts (n_steps x n_envs = {rollout}); "
            f"PPO trains whole rollouts, so this run takes {steps} steps")

    import torch
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.callbacks import MaskableEvalCallback
    from stable_baselines3 import PPO
    from stable_baselines3.common.callbacks import CallbackList, EvalCallback
    from stable_baselines3.common.vec_env import VecNormalize

    torch.set_num_threads(max(1, args.torch_threads))
    algo_cls = MaskablePPO if cfg["algo"] == "maskable-ppo" else PPO
    scenario, env_kwargs, seed = cfg["scenario"], dict(cfg["env"]), int(cfg["seed"])
    meta = env_metadata(scenario, env_kwargs)
    meta.update(algo=cfg["algo"], preset=cfg["preset"], seed=seed, bc_expert=cfg["bc"].get("expert"))
    wall_start = time.time()

    # 1. Seeding (python / numpy / torch); envs are seeded by venv.seed below.
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)

    # 2. Vectorised training envs (+ VecNormalize) and the evaluation env on its own seeds.
    # A resumed run must not re-seed: its env generators are restored from the checkpoint instead.
    checkpoint = candidates[0] if candidates else None
    venv = make_vec_env(scenario, env_kwargs, int(cfg["n_envs"]), seed if checkpoint is None else None,
                        kind=args.vec_env)
    norm = cfg.get("normalize", {})
    use_norm = bool(norm.get("obs") or norm.get("reward"))
    if use_norm:
        if checkpoint is not None and (checkpoint / "vecnormalize.pkl").exists():
            venv = VecNormalize.load(str(checkpoint / "vecnormalize.pkl"), venv)
            venv.training = True
        else:
            venv = VecNormalize(venv, norm_obs=bool(norm.get("obs")), norm_reward=bool(norm.get("reward")),
                                clip_obs=float(norm.get("clip_obs", 10.0)), gamma=float(cfg["ppo"]["gamma"]))
    eval_seeds = [int(cfg["eval"]["seed"]) + i for i in range(int(cfg["eval"]["episodes"]))]
    eval_env = make_vec_env(scenario, env_kwargs, 1, None, eval_seeds=eval_seeds)
    if use_norm:
        eval_env = VecNormalize(eval_env, norm_obs=bool(norm.get("obs")), norm_reward=False, training=False,
                                clip_obs=float(norm.get("clip_obs", 10.0)))

    # 3. Model: fresh, or the checkpoint's (weights + optimizer + timestep counter).
    ppo_cfg = dict(cfg["ppo"])
    net_arch = ppo_cfg.pop("net_arch", [64, 64])
    activation = {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU}[ppo_cfg.pop("activation", "tanh")]
    policy_kwargs = {"net_arch": {"pi": list(net_arch), "vf": list(net_arch)}, "activation_fn": activation}
    model = None
    for candidate in candidates:  # newest intact checkpoint that also loads; fall back to older ones
        try:
            model = algo_cls.load(candidate / "model.zip", env=venv, device=args.device,
                                  tensorboard_log=str(out / "tb"))
        except Exception as exc:  # a checkpoint torn in a way the file checks cannot see
            log(f"note: skipping checkpoint {candidate.name}: cannot load model.zip ({type(exc).__name__}: {exc})")
            continue
        checkpoint = candidate
        break
    if candidates and model is None:
        raise ConfigError(f"--resume: no checkpoint in {out}/checkpoints loads; start again with --overwrite")
    if checkpoint is not None and model is not None:
        if use_norm and (checkpoint / "vecnormalize.pkl").exists() and checkpoint != candidates[0]:
            venv = VecNormalize.load(str(checkpoint / "vecnormalize.pkl"), venv.venv)
            venv.training = True
            model.set_env(venv)
        restore_rng(checkpoint, venv)
        (out / "resume.json").write_text(json.dumps({
            "checkpoint": checkpoint.name, "num_timesteps": int(model.num_timesteps),
            "param_checksum": parameter_checksum(model)}, indent=2))
        log(f"resumed from {checkpoint} at {model.num_timesteps} timesteps")
    else:
        model = algo_cls("MlpPolicy", venv, seed=seed, device=args.device, tensorboard_log=str(out / "tb"),
                         policy_kwargs=policy_kwargs, verbose=0, **ppo_cfg)

    # 4. Optional behaviour-cloning warm start (fresh runs only).
    if checkpoint is None and cfg["bc"].get("expert"):
        if cfg["algo"] != "maskable-ppo":
            raise ConfigError("--bc-expert needs --algo maskable-ppo (cloning uses masked logits)")
        from ddl_gym.agents.imitation import warm_start

        bc_log = warm_start(model, scenario, env_kwargs, expert=cfg["bc"]["expert"], episodes=int(cfg["bc"]["episodes"]),
                            epochs=int(cfg["bc"]["epochs"]), batch_size=int(cfg["bc"]["batch_size"]),
                            learning_rate=float(cfg["bc"]["learning_rate"]), seed=int(cfg["bc"]["seed"]),
                            vecnormalize=venv if use_norm else None,
                            beyond_window=str(cfg["bc"].get("beyond_window", "window")))
        (out / "bc.json").write_text(json.dumps(bc_log, indent=2))
        log(f"behaviour cloning of {cfg['bc']['expert']}: accuracy {bc_log['accuracy_before']:.3f} -> "
            f"{bc_log['accuracy_after']:.3f} on {bc_log['samples']} samples")

    # 5. Callbacks: evaluation (best model), checkpoints, optional kill switch (tests).
    n_envs = int(cfg["n_envs"])
    eval_cls = MaskableEvalCallback if cfg["algo"] == "maskable-ppo" else EvalCallback
    evaluator = eval_cls(eval_env, n_eval_episodes=len(eval_seeds), eval_freq=max(1, int(cfg["eval"]["freq"]) // n_envs),
                         log_path=str(out / "eval"), deterministic=True, verbose=0,
                         callback_on_new_best=_BestSaver(out / "best", meta))
    if checkpoint is not None:
        restore_evaluator(evaluator, out, checkpoint)
    callbacks = [evaluator, RolloutCheckpoint(out / "checkpoints", int(cfg["checkpoint"]["freq"]),
                                              int(cfg["checkpoint"].get("keep", 3)))]
    if not (args.quiet or args.no_progress):
        callbacks.append(TrainingProgress(int(cfg["timesteps"]), evaluator))
    if args.kill_after is not None:
        callbacks.append(_KillAfter(args.kill_after))

    # 5b. Evaluation of the initial (random or cloned) policy: the learning curve's t = 0 point.
    if checkpoint is None:
        initial = evaluate_initial(model, eval_env, len(eval_seeds), venv if use_norm else None,
                                   masked=cfg["algo"] == "maskable-ppo")
        (out / "eval").mkdir(parents=True, exist_ok=True)
        (out / "eval" / "initial.json").write_text(json.dumps({"timesteps": 0, "returns": initial}))

    # 6. Learn up to the requested total (a resumed run continues its counter).
    total = int(cfg["timesteps"])
    remaining = total - int(model.num_timesteps)
    if remaining > 0:
        model.learn(total_timesteps=remaining, callback=CallbackList(callbacks),
                    reset_num_timesteps=checkpoint is None, tb_log_name=cfg["algo"])
    if args.kill_after is not None and model.num_timesteps < total:
        log(f"killed (test hook) at {model.num_timesteps} timesteps")
        venv.close()
        eval_env.close()
        return 3

    # 7. Save the final agent (+ metadata), the evaluation curve and the run summary.
    wall = time.time() - wall_start
    meta.update(timesteps=int(model.num_timesteps), wall_s=round(wall, 1),
                resumed_from=str(checkpoint.name) if checkpoint is not None else None)
    save_agent(model, venv, out / "agent.zip", meta)
    save_checkpoint(model, out / "checkpoints", keep=int(cfg["checkpoint"].get("keep", 3)))
    write_eval_curve(out)
    log(f"saved {out / 'agent.zip'} after {model.num_timesteps} timesteps in {wall:.0f}s")
    venv.close()
    eval_env.close()
    return 0


def restore_evaluator(evaluator: Any, out: Path, checkpoint: Path | None = None) -> None:
    """On resume: keep the evaluation history (evaluations.npz is rewritten, not restarted) and the best score.

    Evaluations logged after the checkpoint by the killed process are dropped, so the curve has no
    duplicate timesteps.
    """
    npz = out / "eval" / "evaluations.npz"
    checkpoint = checkpoint or latest_checkpoint(out)
    assert checkpoint is not None
    state = json.loads((checkpoint / "state.json").read_text())
    if npz.exists():
        data = np.load(npz)
        keep = data["timesteps"] <= state["num_timesteps"]
        evaluator.evaluations_timesteps = [int(t) for t in data["timesteps"][keep]]
        evaluator.evaluations_results = [list(r) for r in data["results"][keep]]
        evaluator.evaluations_length = [list(r) for r in data["ep_lengths"][keep]]
        if evaluator.evaluations_results:
            evaluator.best_mean_reward = float(max(np.mean(r) for r in evaluator.evaluations_results))


def evaluate_initial(model: Any, eval_env: Any, episodes: int, train_env: Any, masked: bool) -> list[float]:
    """Returns of ``model`` on the evaluation seeds before any RL update."""
    from stable_baselines3.common.vec_env import sync_envs_normalization

    if train_env is not None:
        sync_envs_normalization(train_env, eval_env)
    if masked:
        from sb3_contrib.common.maskable.evaluation import evaluate_policy
    else:
        from stable_baselines3.common.evaluation import evaluate_policy
    returns, _ = evaluate_policy(model, eval_env, n_eval_episodes=episodes, deterministic=True,
                                 return_episode_rewards=True)
    return [float(r) for r in returns]


def write_eval_curve(out: Path) -> Path | None:
    """``eval/evaluations.npz`` -> ``eval/curve.csv`` (timesteps, mean and std of the return)."""
    npz = out / "eval" / "evaluations.npz"
    if not npz.exists():
        return None
    data = np.load(npz)
    rows = ["timesteps,mean_return,std_return"]
    points = list(zip(data["timesteps"], data["results"]))
    initial = out / "eval" / "initial.json"
    if initial.exists():
        first = json.loads(initial.read_text())
        points.insert(0, (0, np.asarray(first["returns"])))
    for t, r in points:
        rows.append(f"{int(t)},{float(np.mean(r)):.6f},{float(np.std(r)):.6f}")
    path = out / "eval" / "curve.csv"
    path.write_text("\n".join(rows) + "\n")
    return path


def quick_train(scenario: str = "default", timesteps: int = 2048, out: str | Path = "runs/quick",
                algo: str = "maskable-ppo", seed: int = 0, preset: str = "quick", bc_expert: str | None = None,
                overwrite: bool = True, progress: bool = False) -> str:
    """Train a small agent (smoke tests, demos) and return its harness spec ``"maskable-ppo:PATH"``.

    With ``bc_expert`` (e.g. ``"sjf+ca"``) the policy is first cloned from that reference policy.
    ``overwrite`` (default) replaces an earlier quick run in ``out``.
    """
    argv = ["--scenario", scenario, "--algo", algo, "--timesteps", str(int(timesteps)), "--n-envs", "1",
            "--seed", str(seed), "--out", str(out), "--preset", preset]
    argv += [] if progress else ["--quiet"]
    if overwrite:
        argv.append("--overwrite")
    if bc_expert:
        argv += ["--bc-expert", bc_expert]
    code = main(argv)
    if code != 0:
        raise ConfigError(f"quick_train failed with exit code {code}")
    return f"{algo}:{Path(out) / 'agent.zip'}"


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
