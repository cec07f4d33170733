"""Env, vector-env and MCTS speed figures (printed, never asserted in tests).

Run ``python scripts/bench_env.py [--quick] [--json PATH] [--previous REF|DIR|none]``; the
functions :func:`run` and :func:`format_report` are what ``ddl-gym bench`` calls. Every figure is
measured ``repeats`` times (5, or 3 with ``--quick``) and given as min / median / max. CartPole-v1
is measured in the same run, interleaved with the env, and ratios are taken per repeat. In (a) each
timed pass of a loop follows an untimed pass of the same loop, so that it times the loop, not the
switch from the loop before it: one 800-step replay timed right after 100,000 CartPole steps read
0.23 of CartPole's rate where the same replay timed after a warm-up pass read 0.34 (ad hoc, one
process; a ``gc.collect()`` in between gave 0.31, disabling the collector during the timing 0.23, so
it is the caches' and the allocator's state after the other loop, not collections inside the loop).

(a) **One process**, ``gym.make("ddl_gym:DDLCluster-v0")`` (default scenario and arguments), steps
    per CPU-second of this process:

    * *policy-like*: action sequences of a greedy policy (first valid start, else advance; this is
      srsf+pack over the queue window) are recorded first and then replayed, so only ``reset`` and
      ``step`` are timed (goal: >= 1/4 of CartPole's rate);
    * *masked random*: ``action_space.sample(mask=info["action_mask"])`` every step, as the first
      bench did (goal: >= 1/6 of CartPole's rate);
    * CartPole-v1 with ``action_space.sample()`` (the reference).

(b) **Vector envs**, total env steps per wall-clock second with greedy actions computed from the
    masks in the parent, against one process running the same loop just before each case (goal: >= 1.6x one process on
    2 workers): Gymnasium ``AsyncVectorEnv(shared_memory=True)``, ddl-gym's batched vector env
    (:mod:`ddl_gym.envs.vector`, several envs per worker) in its Gymnasium and SB3 forms, and SB3
    ``SubprocVecEnv`` (masks fetched with ``env_method("action_masks")`` every step, as
    MaskablePPO does); and, as the machine's ceiling, two one-process loops started together in
    separate processes (their summed rate: what two processes get with nothing shared).

(c) **MCTS** (:mod:`ddl_gym.agents.mcts`): wall seconds per searched decision of one whole
    episode on the small scenario, and the schedule's avg JCT (equal results are a precondition
    of comparing costs).

With ``--previous`` (default: the commit before the env speed work) the code of that commit is
extracted with ``git archive`` and figures (a) and (c) are measured on it in a subprocess of the
same run. A directory holding such a tree also works; ``none`` skips it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import queue
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

ENV_ID = "ddl_gym:DDLCluster-v0"
PREVIOUS_REF = "9a99d18"  # the code before the env API/speed work (golden digests recorded there)
REPO_ROOT = Path(__file__).resolve().parents[1]
_SCRIPTS = str(Path(__file__).resolve().parent)
if _SCRIPTS not in sys.path:  # bench_engine_compare (callgrind, measured trees) lives beside this script
    sys.path.insert(0, _SCRIPTS)
GOALS = {"policy_like": 1 / 4, "masked_random": 1 / 6, "vector": 1.6, "mcts": 2.0}


def _stats(values: list[float]) -> dict[str, float]:
    return {"min": min(values), "median": statistics.median(values), "max": max(values), "n": len(values)}


def _clock(fn: Callable[[], int]) -> tuple[int, float, float]:
    t0, c0 = time.perf_counter(), time.process_time()
    count = fn()
    return count, time.perf_counter() - t0, max(time.process_time() - c0, 1e-9)


def _greedy(mask: np.ndarray) -> int:
    """First valid start (lowest slot, first placement rule), else advance."""
    starts = mask[1:]
    return int(starts.argmax()) + 1 if starts.any() else 0


# ============================================================================ (a) one process
def _cartpole(steps: int, seed: int) -> Callable[[], int]:
    import gymnasium as gym

    env = gym.make("CartPole-v1")
    env.action_space.seed(seed)
    env.reset(seed=seed)

    def loop() -> int:
        episode = 0
        for _ in range(steps):
            _, _, terminated, truncated, _ = env.step(env.action_space.sample())
            if terminated or truncated:
                episode += 1
                env.reset(seed=seed + episode)
        return steps

    return loop


def _record_greedy(env: Any, seeds: list[int]) -> list[list[int]]:
    sequences = []
    for seed in seeds:
        _, info = env.reset(seed=seed)
        actions: list[int] = []
        while True:
            action = _greedy(info["action_mask"])
            actions.append(action)
            _, _, terminated, truncated, info = env.step(action)
            if terminated or truncated:
                break
        sequences.append(actions)
    return sequences


def _replay(env: Any, seeds: list[int], sequences: list[list[int]]) -> Callable[[], int]:
    def loop() -> int:
        count = 0
        for seed, actions in zip(seeds, sequences):
            env.reset(seed=seed)
            step = env.step
            for action in actions:
                step(action)
            count += len(actions)
        return count

    return loop


def _masked(env: Any, steps: int, seed: int) -> Callable[[], int]:
    env.action_space.seed(seed)
    state = {"info": env.reset(seed=seed)[1], "episode": 0}

    def loop() -> int:
        info = state["info"]
        sample = env.action_space.sample
        for _ in range(steps):
            _, _, terminated, truncated, info = env.step(sample(mask=info["action_mask"]))
            if terminated or truncated:
                state["episode"] += 1
                _, info = env.reset(seed=seed + state["episode"])
        state["info"] = info
        return steps

    return loop


def single_process(repeats: int, quick: bool, extra_layouts: bool = True) -> dict[str, Any]:
    """Figures (a): per-repeat steps per CPU-second and ratios to CartPole."""
    import gymnasium as gym

    import ddl_gym  # noqa: F401

    seeds = list(range(2 if quick else 5))
    env = gym.make(ENV_ID)
    sequences = _record_greedy(env, seeds)
    variants: dict[str, Any] = {"policy_like": _replay(env, seeds, sequences),
                                "masked_random": _masked(gym.make(ENV_ID), 2_000 if quick else 10_000, 0)}
    if extra_layouts:
        try:
            legacy = gym.make(ENV_ID, observation="legacy")
            variants["policy_like_legacy_layout"] = _replay(legacy, seeds, _record_greedy(legacy, seeds))
        except TypeError:  # code without the option
            pass
    cart_loop = _cartpole(20_000 if quick else 100_000, 0)
    out: dict[str, Any] = {"steps_per_episode": statistics.fmean(len(s) for s in sequences)}
    rates: dict[str, list[float]] = {"cartpole": [], **{k: [] for k in variants}}
    ratios: dict[str, list[float]] = {k: [] for k in variants}
    for _ in range(repeats):
        cart_loop()  # untimed warm-up pass (see the module docstring)
        count, _, cpu = _clock(cart_loop)
        cart = count / cpu
        rates["cartpole"].append(cart)
        for name, loop in variants.items():
            loop()  # untimed warm-up pass
            count, _, cpu = _clock(loop)
            rates[name].append(count / cpu)
            ratios[name].append(count / cpu / cart)
    out["steps_per_cpu_s"] = {k: _stats(v) for k, v in rates.items()}
    out["ratio_to_cartpole"] = {k: _stats(v) for k, v in ratios.items()}
    return out


# ============================================================================ (b) vector envs
def _vector_loop(kind: str, num_envs: int, num_workers: int, steps: int) -> float:
    """Total env steps per wall second (setup and first reset excluded)."""
    import gymnasium as gym

    import ddl_gym  # noqa: F401

    iterations = max(1, steps // num_envs)
    if kind == INDEPENDENT:
        return _independent_processes(num_workers, steps)
    if kind == "one process":
        env = gym.make(ENV_ID)
        _, info = env.reset(seed=0)

        def loop() -> int:
            nonlocal info
            episode = 0
            for _ in range(steps):
                _, _, terminated, truncated, info = env.step(_greedy(info["action_mask"]))
                if terminated or truncated:
                    episode += 1
                    _, info = env.reset(seed=episode)
            return steps

        count, wall, _ = _clock(loop)
        env.close()
        return count / wall

    def batch_greedy(masks: np.ndarray) -> np.ndarray:
        starts = masks[:, 1:]
        return np.where(starts.any(axis=1), starts.argmax(axis=1) + 1, 0)

    if kind == "gymnasium AsyncVectorEnv" or kind.startswith("ddl-gym BatchedVectorEnv"):
        if kind == "gymnasium AsyncVectorEnv":
            envs = gym.make_vec(ENV_ID, num_envs=num_envs, vectorization_mode="async",
                                vector_kwargs={"shared_memory": True})
        else:
            from ddl_gym.envs.vector import BatchedVectorEnv

            envs = BatchedVectorEnv(ENV_ID, num_envs=num_envs, num_workers=num_workers,
                                    step_in_parent=kind.endswith(PARENT_SUFFIX))
        _, info = envs.reset(seed=0)

        def vloop() -> int:
            nonlocal info
            for _ in range(iterations):
                _, _, _, _, info = envs.step(batch_greedy(info["action_mask"]))
            return iterations * num_envs
    else:
        if kind == "SB3 SubprocVecEnv":
            from stable_baselines3.common.env_util import make_vec_env
            from stable_baselines3.common.vec_env import SubprocVecEnv

            envs = make_vec_env(ENV_ID, n_envs=num_envs, seed=0, vec_env_cls=SubprocVecEnv)
        else:
            from ddl_gym.envs.vector import BatchedSubprocVecEnv

            envs = BatchedSubprocVecEnv(ENV_ID, num_envs=num_envs, num_workers=num_workers,
                                        step_in_parent=kind.endswith(PARENT_SUFFIX))
            envs.seed(0)
        envs.reset()

        def vloop() -> int:
            for _ in range(iterations):
                envs.step(batch_greedy(np.stack(envs.env_method("action_masks"))))
            return iterations * num_envs

    try:
        count, wall, _ = _clock(vloop)
    finally:
        envs.close()
    return count / wall


def _one_process_in_child(steps: int, ready: Any, start: Any, out: Any) -> None:
    import gymnasium  # noqa: F401  (imported before the common start, as the loop's own imports are)

    import ddl_gym  # noqa: F401

    ready.put(None)
    start.wait()
    out.put(_vector_loop("one process", 1, 1, steps))


def _gather(messages: Any, count: int, procs: list[Any]) -> list[Any]:
    """``count`` messages from the children, or a RuntimeError as soon as one of them has failed."""
    received: list[Any] = []
    while len(received) < count:
        try:
            received.append(messages.get(timeout=1.0))
        except queue.Empty:
            if any(proc.exitcode not in (None, 0) for proc in procs):  # a child failed: say so, do not wait
                for proc in procs:
                    proc.kill()
                raise RuntimeError("an independent one-process loop failed (see its traceback above)") from None
    return received


def _independent_processes(count: int, steps: int) -> float:
    """The machine's ceiling for ``count`` processes: ``count`` one-process loops (nothing shared, no
    messages) started together once all have imported; their summed steps per wall second. A vector
    env cannot beat it."""
    import multiprocessing as mp

    ctx = mp.get_context("spawn")
    ready, start, out = ctx.Queue(), ctx.Event(), ctx.Queue()
    procs = [ctx.Process(target=_one_process_in_child, args=(steps, ready, start, out)) for _ in range(count)]
    for proc in procs:
        proc.start()
    _gather(ready, count, procs)
    start.set()
    rates = _gather(out, count, procs)
    for proc in procs:
        proc.join()
    return float(sum(rates))


INDEPENDENT = "independent one-process loops at once (the ceiling)"
PARENT_SUFFIX = ", parent steps a share"
VECTOR_CASES = (  # (kind, envs, workers); "parent steps a share": num_workers counts the caller
    ("one process", 1, 1),
    (INDEPENDENT, 2, 2),
    ("gymnasium AsyncVectorEnv", 2, 2),
    ("SB3 SubprocVecEnv", 2, 2),
    ("ddl-gym BatchedVectorEnv", 8, 2),
    ("ddl-gym BatchedVectorEnv", 16, 2),
    ("ddl-gym BatchedVectorEnv" + PARENT_SUFFIX, 16, 2),
    ("ddl-gym BatchedVectorEnv" + PARENT_SUFFIX, 32, 2),
    ("ddl-gym BatchedVectorEnv" + PARENT_SUFFIX, 64, 2),
    ("ddl-gym BatchedSubprocVecEnv (SB3)", 8, 2),
    ("ddl-gym BatchedSubprocVecEnv (SB3)" + PARENT_SUFFIX, 16, 2),
    ("ddl-gym BatchedSubprocVecEnv (SB3)" + PARENT_SUFFIX, 32, 2),
    ("ddl-gym BatchedSubprocVecEnv (SB3)" + PARENT_SUFFIX, 64, 2),
)


def vectors(repeats: int, quick: bool) -> dict[str, Any]:
    """Figures (b): total steps per wall second per case, and per-repeat ratios to one process.

    Each case's ratio is to a one-process run made right before it (not once per repeat): on a
    shared machine the load drifts within a repeat, and adjacent runs see about the same load.
    """
    steps = 2_000 if quick else 24_000
    rates: dict[str, list[float]] = {}
    ratios: dict[str, list[float]] = {}
    for _ in range(repeats):
        for kind, n, workers in VECTOR_CASES:
            label = f"{kind}, {n} envs / {workers} proc"
            base = _vector_loop("one process", 1, 1, steps)
            try:
                rate = base if kind == "one process" else _vector_loop(kind, n, workers, steps)
            except ImportError:  # SB3 missing
                continue
            rates.setdefault(label, []).append(rate)
            ratios.setdefault(label, []).append(rate / base)
    return {"steps_per_wall_s": {k: _stats(v) for k, v in rates.items()},
            "ratio_to_one_process": {k: _stats(v) for k, v in ratios.items()}, "cpus": os.cpu_count()}


# ============================================================================ (c) MCTS
MCTS_SPEC = "mcts:guide=srsf+pack,sims={sims},depth=end"


def mcts_scenario() -> Any:
    """The MCTS episode's scenario, spelled out so the previous code builds the very same one.

    It is the ``small`` scenario as it was before the default changed (10 Gb/s NICs, the RAR
    model's own defaults, 40 jobs over ~5 min): comparing the codes on today's ``small`` would
    compare two different episodes.
    """
    from ddl_gym.scenarios import GBPS, Scenario, _synthetic
    from ddl_gym.sim.model import ClusterSpec
    from ddl_gym.sim.perf import RARContentionModel

    return Scenario(name="small-10g-bench",
                    cluster=ClusterSpec.homogeneous(4, 4, inter_bandwidth=10 * GBPS, intra_bandwidth=800 * GBPS),
                    workload=_synthetic("scaled", num_jobs=40, max_gpus=8, arrival_rate_per_s=40 / 300.0),
                    model=RARContentionModel())


def mcts(repeats: int, quick: bool, setup_only: bool = False) -> dict[str, Any]:
    """Figures (c): seconds per searched decision for a whole small-scenario episode."""
    from ddl_gym.agents.mcts import make_mcts_policy

    sims = 4 if quick else 8
    scenario = mcts_scenario()
    cluster, workload = scenario.episode(0)
    if setup_only:  # everything but the search, for --mcts-instructions (start-up cancels out)
        make_mcts_policy(MCTS_SPEC.format(sims=sims))
        return {}
    per_decision, summary = [], None
    for _ in range(repeats):
        policy = make_mcts_policy(MCTS_SPEC.format(sims=sims))
        t0 = time.perf_counter()
        result = policy.run_episode(scenario, cluster, workload, np.random.default_rng(0))
        wall = time.perf_counter() - t0
        per_decision.append(wall / max(1, len(policy.decision_times)))
        summary = result.summary()
    assert summary is not None
    return {"spec": MCTS_SPEC.format(sims=sims), "scenario": scenario.name, "seed": 0,
            "seconds_per_decision": _stats(per_decision), "decisions": len(policy.decision_times),
            "avg_jct_s": summary["avg_jct_s"]}


# ============================================================================ previous code
def _previous_tree(previous: str | None, workdir: Path) -> tuple[Path | None, str]:
    """A directory holding the previous code (extracted from git if ``previous`` is a ref)."""
    if previous in (None, "", "none"):
        return None, "skipped"
    path = Path(previous)
    if path.is_dir():
        tree = path
    else:
        tree = workdir / "previous"
        tree.mkdir()
        try:
            archive = subprocess.run(["git", "-C", str(REPO_ROOT), "archive", previous], check=True,
                                     capture_output=True, timeout=60).stdout
            subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True, timeout=60)
        except (OSError, subprocess.SubprocessError) as exc:
            return None, f"unavailable ({type(exc).__name__}: git ref {previous!r} could not be extracted)"
    from bench_engine_compare import prepare_tree

    prepare_tree(str(tree))  # its own ddl_gym.agents / ddl_gym.baselines, byte-compiled
    return tree, str(previous)


def _run_previous(tree: Path, parts: list[str], repeats: int, quick: bool) -> dict[str, Any]:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", ",".join(parts), "--repeats", str(repeats)]
    if quick:
        cmd.append("--quick")
    from bench_engine_compare import tree_env

    done = subprocess.run(cmd, env=tree_env(str(tree)), cwd=str(tree), capture_output=True, text=True, timeout=3600)
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit {done.returncode}"}
    return json.loads(done.stdout)


# ============================================================================ report
def run(quick: bool = False, previous: str | None = PREVIOUS_REF, repeats: int | None = None) -> dict[str, Any]:
    """All figures as a dict (see the module docstring)."""
    from bench_engine_compare import engine_build

    reps = repeats or (3 if quick else 5)
    report: dict[str, Any] = {"quick": quick, "repeats": reps, "python": platform.python_version(),
                              "machine": platform.machine(), "cpus": os.cpu_count(), "engine_build": engine_build(),
                              "env_core_build": env_core_build()}
    report["single"] = single_process(reps, quick)
    report["vector"] = vectors(reps, quick)
    report["mcts"] = mcts(reps, quick)
    with tempfile.TemporaryDirectory() as tmp:
        tree, label = _previous_tree(previous, Path(tmp))
        report["previous_ref"] = label
        if tree is not None:
            report["previous_build"] = engine_build(str(tree))
            report["previous"] = _run_previous(tree, ["single", "mcts"], reps, quick)
    return report


def env_core_build() -> str:
    """Which build of the env core runs in this process (``scripts/build_native.py``)."""
    from bench_engine_compare import build_label

    try:
        from ddl_gym.envs import core
    except ImportError:  # code from before the env core
        return build_label("python")
    return build_label(core.BUILD)


def _mmm(s: dict[str, float], fmt: str = "{:,.0f}") -> str:
    return " / ".join(fmt.format(s[k]) for k in ("min", "median", "max"))


def format_report(report: dict[str, Any]) -> str:
    """Markdown tables of :func:`run`'s figures."""
    prev = report.get("previous") or {}
    lines = [f"# ddl-gym env benchmark{' (quick)' if report['quick'] else ''}", "",
             f"Python {report['python']} on {report['machine']}, {report['cpus']} CPUs; every figure is "
             f"min / median / max over {report['repeats']} repeats. Job-level engine: "
             f"{report.get('engine_build', 'plain Python')}; env core (`ddl_gym/envs/core.py`): "
             f"{report.get('env_core_build', 'plain Python')}. Previous code: {report['previous_ref']} "
             f"(job-level engine: {report.get('previous_build', 'plain Python')}).", "",
             "## (a) One process, `gym.make(\"ddl_gym:DDLCluster-v0\")`, steps per CPU-second", "",
             "| loop | this code | ratio to CartPole-v1 | goal | previous code | previous ratio |",
             "|---|---:|---:|---:|---:|---:|"]
    single = report["single"]
    names = {"policy_like": "policy-like (replayed greedy actions)", "masked_random": "masked random (sample(mask=...))",
             "policy_like_legacy_layout": "policy-like, observation=\"legacy\""}
    for key, label in names.items():
        if key not in single["steps_per_cpu_s"]:
            continue
        ratio = single["ratio_to_cartpole"][key]
        goal = GOALS.get(key)
        verdict = "" if goal is None else f">= {goal:.3f} ({'met' if ratio['median'] >= goal else 'not met'})"
        p = prev.get("single", {})
        p_rate = _mmm(p["steps_per_cpu_s"][key]) if key in p.get("steps_per_cpu_s", {}) else "–"
        p_ratio = _mmm(p["ratio_to_cartpole"][key], "{:.3f}") if key in p.get("ratio_to_cartpole", {}) else "–"
        lines.append(f"| {label} | {_mmm(single['steps_per_cpu_s'][key])} | {_mmm(ratio, '{:.3f}')} | {verdict} | "
                     f"{p_rate} | {p_ratio} |")
    p_cart = prev.get("single", {}).get("steps_per_cpu_s", {}).get("cartpole")
    lines.append(f"| CartPole-v1, random actions | {_mmm(single['steps_per_cpu_s']['cartpole'])} | 1 | | "
                 f"{_mmm(p_cart) if p_cart else '–'} | 1 |")
    lines += ["", f"Policy-like episodes have {single['steps_per_episode']:.0f} steps on average (resets included). "
              "Each timed pass of a loop (both codes) follows an untimed pass of the same loop."]

    vec = report["vector"]
    lines += ["", "## (b) Vector envs, total env steps per wall-clock second (greedy actions from the masks)", "",
              "| vector env | steps/s | ratio to one process |", "|---|---:|---:|"]
    for label, s in vec["steps_per_wall_s"].items():
        lines.append(f"| {label} | {_mmm(s)} | {_mmm(vec['ratio_to_one_process'][label], '{:.2f}')} |")
    batched = [v["median"] for k, v in vec["ratio_to_one_process"].items() if "ddl-gym" in k and "2 proc" in k]
    if batched:
        best = max(batched)
        lines += ["", f"Best batched vector env with 2 processes stepping envs: {best:.2f}x one process "
                      f"(goal >= {GOALS['vector']}: {'met' if best >= GOALS['vector'] else 'not met'}; "
                      f"{vec['cpus']} CPUs on this machine)."]
        ceiling = [v["median"] for k, v in vec["ratio_to_one_process"].items() if k.startswith(INDEPENDENT)]
        if ceiling:
            lines[-1] += (f" Two independent one-process loops at once reach {ceiling[0]:.2f}x: the most that two "
                          f"processes get on this machine; the best vector env is {best / ceiling[0]:.0%} of that.")
        for front, marker in (("Gymnasium", "BatchedVectorEnv"), ("SB3", "BatchedSubprocVecEnv")):
            mine = {k: v["median"] for k, v in vec["ratio_to_one_process"].items() if marker in k and "2 proc" in k}
            if mine:
                label = max(mine, key=mine.__getitem__)
                lines.append(f"- {front} front end: best {mine[label]:.2f}x ({label}; goal "
                             f"{'met' if mine[label] >= GOALS['vector'] else 'not met'}).")

    m = report["mcts"]
    lines += ["", f"## (c) MCTS `{m['spec']}`, scenario {m['scenario']} (the former `small`), seed {m['seed']}, one whole episode", "",
              "| code | seconds per decision | decisions | avg JCT (s) |", "|---|---:|---:|---:|",
              f"| this code | {_mmm(m['seconds_per_decision'], '{:.4f}')} | {m['decisions']} | {m['avg_jct_s']:.3f} |"]
    pm = prev.get("mcts")
    if pm:
        lines.append(f"| previous code | {_mmm(pm['seconds_per_decision'], '{:.4f}')} | {pm['decisions']} | "
                     f"{pm['avg_jct_s']:.3f} |")
        same = abs(pm["avg_jct_s"] - m["avg_jct_s"]) == 0
        speedup = pm["seconds_per_decision"]["median"] / m["seconds_per_decision"]["median"]
        lines += ["", f"Cost per decision: {speedup:.2f}x lower than the previous code (goal >= {GOALS['mcts']}), "
                      f"results {'identical' if same else 'DIFFERENT'}."]
    if prev.get("error"):
        lines += ["", f"Previous code failed: {prev['error']}"]
    return "\n".join(lines)


def _worker_main(parts: list[str], repeats: int, quick: bool) -> int:
    out: dict[str, Any] = {}
    if "single" in parts:
        out["single"] = single_process(repeats, quick, extra_layouts=False)
    if "mcts" in parts:
        out["mcts"] = mcts(repeats, quick)
    if "mcts-setup" in parts:
        out["mcts"] = mcts(1, quick, setup_only=True)
    for part in parts:  # "steps-policy_like=K" / "steps-cartpole=K": set up, then K extra loops (callgrind)
        if part.startswith("steps-"):
            name, loops = part[len("steps-"):].split("=")
            out[part] = _step_loops(name, int(loops), quick)
    print(json.dumps(out))
    return 0


def _step_loop(name: str, quick: bool) -> Callable[[], int]:
    """The loop of (a) named ``name`` ("policy_like" or "cartpole"); each call returns the steps it ran."""
    import gymnasium as gym

    import ddl_gym  # noqa: F401

    if name == "cartpole":
        return _cartpole(4_000, 0)
    env = gym.make(ENV_ID)
    seeds = list(range(2 if quick else 5))
    return _replay(env, seeds, _record_greedy(env, seeds))


def _step_loops(name: str, loops: int, quick: bool) -> int:
    """Run the loop once (warm-up), then ``loops`` more times; steps run after the warm-up."""
    loop = _step_loop(name, quick)
    loop()
    return sum(loop() for _ in range(loops))


def step_instructions(previous: str | None, quick: bool, loops: int = 3) -> dict[str, Any]:
    """Instructions (callgrind) per policy-like step of (a), this code, previous code and CartPole-v1.

    A load-independent companion of (a)'s CPU-time ratio: each figure is the difference of a run with
    ``loops`` extra loops and one with none, divided by the steps of those loops. Instructions are not
    time (numpy calls and Python's interpreter loop retire instructions at different rates), so the
    ratio to CartPole read this way is not the goal's figure; it shows what a change removed.
    """
    from bench_engine_compare import callgrind_instructions

    def per_step(tree: Path | None, name: str) -> float:
        def count(k: int) -> int:
            args = [str(Path(__file__).resolve()), "--worker", f"steps-{name}={k}", "--repeats", "1",
                    *(["--quick"] if quick else [])]
            return callgrind_instructions(args, str(tree) if tree is not None else None, str(tree or REPO_ROOT))

        steps = loops * _step_loop(name, quick)()  # every loop runs the same steps (replayed or fixed)
        return (count(loops) - count(0)) / steps

    out: dict[str, Any] = {"cartpole": per_step(None, "cartpole"), "this": per_step(None, "policy_like")}
    with tempfile.TemporaryDirectory() as tmpdir:
        tree, label = _previous_tree(previous, Path(tmpdir))
        if tree is not None:
            out["previous"] = per_step(tree, "policy_like")
            out["previous_ref"] = label
    return out


def mcts_instructions(previous: str | None, quick: bool) -> dict[str, Any]:
    """Instructions (valgrind callgrind) of one MCTS episode, previous code and this code.

    Machine load does not change instruction counts, so this is the figure to trust when the
    wall-clock ratio of (c) is noisy. Each tree runs this script's worker twice under callgrind,
    once with the whole episode and once without the search; the difference is the episode's cost.
    """
    from bench_engine_compare import callgrind_instructions

    def count(tree: Path | None, part: str) -> int:
        args = [str(Path(__file__).resolve()), "--worker", part, "--repeats", "1", *(["--quick"] if quick else [])]
        return callgrind_instructions(args, str(tree) if tree is not None else None, str(tree or REPO_ROOT))

    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        tree, label = _previous_tree(previous, tmp)
        for name, where in (("previous", tree), ("this", None)):
            if name == "previous" and tree is None:
                continue
            out[name] = count(where, "mcts") - count(where, "mcts-setup")
        out["previous_ref"] = label
    if "previous" in out:
        out["previous_over_this"] = out["previous"] / out["this"]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench_env.py", description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller runs, 3 repeats")
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument("--previous", default=PREVIOUS_REF, help="git ref or directory of the previous code, or 'none'")
    parser.add_argument("--json", type=Path, help="also write the figures as JSON here")
    parser.add_argument("--mcts-instructions", action="store_true",
                        help="only count the instructions of one MCTS episode (callgrind), previous code and this")
    parser.add_argument("--step-instructions", action="store_true",
                        help="only count instructions per policy-like step (callgrind): this code, previous, CartPole")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        return _worker_main(args.worker.split(","), args.repeats or (3 if args.quick else 5), args.quick)
    if args.mcts_instructions:
        figures = mcts_instructions(args.previous, args.quick)
        print(f"MCTS `{MCTS_SPEC.format(sims=4 if args.quick else 8)}`, one episode, instructions (callgrind): "
              f"this code {figures['this']:,}"
              + (f"; previous ({figures['previous_ref']}) {figures['previous']:,}; "
                 f"previous/this = {figures['previous_over_this']:.2f}" if "previous" in figures else ""))
        return 0
    if args.step_instructions:
        fig = step_instructions(args.previous, args.quick)
        line = (f"Instructions per policy-like step (callgrind): this code {fig['this']:,.0f}, CartPole-v1 "
                f"{fig['cartpole']:,.0f} (CartPole/this = {fig['cartpole'] / fig['this']:.3f})")
        if "previous" in fig:
            line += f"; previous ({fig['previous_ref']}) {fig['previous']:,.0f} (previous/this = {fig['previous'] / fig['this']:.2f})"
        print(line)
        return 0
    report = run(quick=args.quick, previous=args.previous, repeats=args.repeats)
    print(format_report(report))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2))
        print(f"\nwrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
