"""Digests of complete env *streams* (observations, rewards, flags, info).

``tests/golden_cases.py`` pins simulation results; this file pins what an agent sees. The digests in
``tests/golden/env_streams.json`` were recorded from the env code before the speed and API work
(commit 9a99d18) with ``python -m tests.env_stream_cases --write``; ``tests/envs/test_env_streams.py``
recomputes them. The shipped agents were trained on the legacy layout, so it must stay bit-identical.
Only info and metric keys that existed at recording time are hashed (new keys may be added).

The portable (default) layout's streams, ``tests/golden/env_streams_portable.json``, were recorded
with ``--write-portable`` from commit 07f6388, before the env-step speed work of issue 13's last
stop, so that work is shown to leave every observation bit-identical.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any, Callable

import numpy as np

from tests.golden_cases import _old_default_scenario, _small_scenario

STREAM_FILE = Path(__file__).parent / "golden" / "env_streams.json"
PORTABLE_STREAM_FILE = Path(__file__).parent / "golden" / "env_streams_portable.json"
CLUSTER_INFO_KEYS = ("action_mask", "invalid_action", "sim_time", "queue_length", "running_jobs", "finished_jobs",
                     "window_jobs")
# Summary keys of the first release (the engine has added more since; only these are hashed).
METRIC_KEYS = ("jobs", "makespan_s", "avg_jct_s", "median_jct_s", "p95_jct_s", "avg_queue_s", "gpu_alloc_util",
               "gpu_compute_util", "total_jct_s", "weighted_jct_s", "avg_slowdown")
PLACEMENT_INFO_KEYS = ("action_mask", "invalid_action", "sim_time", "current_job", "workers_left", "queue_length",
                       "running_jobs", "finished_jobs")


def _hash_info(h: Any, info: dict[str, Any], keys: tuple[str, ...]) -> None:
    for key in keys:
        value = info[key]
        if isinstance(value, np.ndarray):
            h.update(key.encode() + value.dtype.str.encode() + value.tobytes())
        else:
            h.update(f"{key}={value!r};".encode())
    if "metrics" in info:
        h.update(repr(sorted((k, v) for k, v in info["metrics"].items() if k in METRIC_KEYS)).encode())


def stream_digest(make_env: Callable[[], Any], seed: int, mode: str, info_keys: tuple[str, ...],
                  max_steps: int = 100_000) -> str:
    """Play one episode with masked actions (``"random"`` or ``"greedy"``) and hash everything returned."""
    env = make_env()
    chooser = np.random.default_rng(20_000 + seed)
    obs, info = env.reset(seed=seed)
    h = hashlib.sha256()
    h.update(obs.dtype.str.encode() + obs.tobytes())
    _hash_info(h, info, info_keys)
    for _ in range(max_steps):
        valid = np.flatnonzero(info["action_mask"])
        if mode == "random":
            action = int(chooser.choice(valid))
        else:
            action = int(valid[-1])  # last valid: a start with the last placement rule when possible
        obs, reward, terminated, truncated, info = env.step(action)
        h.update(obs.dtype.str.encode() + obs.tobytes())
        h.update(np.float64(reward).tobytes() + bytes([terminated, truncated]))
        _hash_info(h, info, info_keys)
        if terminated or truncated:
            break
    return h.hexdigest()


def _cluster(scenario_fn: Callable[[], Any], **kwargs: Any) -> Callable[[], Any]:
    def make() -> Any:
        from ddl_gym.envs.cluster_env import DDLClusterEnv

        return DDLClusterEnv(scenario_fn(), **kwargs)

    return make


def _placement(scenario_fn: Callable[[], Any], **kwargs: Any) -> Callable[[], Any]:
    def make() -> Any:
        from ddl_gym.envs.placement_env import DDLPlacementEnv

        return DDLPlacementEnv(scenario_fn(), **kwargs)

    return make


def cases(legacy: dict[str, Any] | None = None) -> dict[str, Callable[[], str]]:
    """Named stream cases; ``legacy`` holds the constructor arguments that select the legacy layout."""
    extra = dict(legacy or {})
    c = CLUSTER_INFO_KEYS
    return {
        "cluster-default10g/random/seed0": lambda: stream_digest(_cluster(_old_default_scenario, **extra), 0, "random", c),
        "cluster-default10g/greedy/seed1": lambda: stream_digest(_cluster(_old_default_scenario, **extra), 1, "greedy", c),
        "cluster-small-fifo-w4/random/seed2": lambda: stream_digest(
            _cluster(_small_scenario, window=4, queue_order="fifo", **extra), 2, "random", c),
        "cluster-small-sjf-rand/random/seed3": lambda: stream_digest(
            _cluster(_small_scenario, queue_order="sjf", placements=("pack", "random", "contention_aware"), **extra),
            3, "random", c),
        "cluster-small-w1/greedy/seed4": lambda: stream_digest(_cluster(_small_scenario, window=1, **extra), 4, "greedy", c),
        "placement-small/random/seed0": lambda: stream_digest(_placement(_small_scenario), 0, "random",
                                                              PLACEMENT_INFO_KEYS),
        "placement-small-fifo/greedy/seed1": lambda: stream_digest(_placement(_small_scenario, order="fifo"), 1,
                                                                   "greedy", PLACEMENT_INFO_KEYS),
    }


def _mixed_servers_scenario():
    """Servers of 2, 4 and 8 GPUs (the portable layout's heterogeneous paths), 48 jobs."""
    from ddl_gym.scenarios import Scenario, SyntheticSource
    from ddl_gym.sim.model import ClusterSpec
    from ddl_gym.sim.perf import RARContentionModel

    cluster = ClusterSpec(gpus_per_server=(8, 2, 4, 8, 2, 4), inter_bandwidth=1.25e9, intra_bandwidth=1e11)
    params = (("arrival_rate_per_s", 48 / 300.0), ("max_gpus", 16), ("num_jobs", 48))
    return Scenario(name="stream-mixed", cluster=cluster, workload=SyntheticSource("scaled", params),
                    model=RARContentionModel())


def portable_cases() -> dict[str, Callable[[], str]]:
    """Streams of the portable layout: the default world and small worlds covering its other paths."""
    c = CLUSTER_INFO_KEYS
    return {
        "default/greedy/seed0": lambda: stream_digest(_cluster(lambda: "default"), 0, "greedy", c),
        "default/random/seed1": lambda: stream_digest(_cluster(lambda: "default"), 1, "random", c),
        "default10g-padded/random/seed2": lambda: stream_digest(
            _cluster(_old_default_scenario, window=4, max_window=8), 2, "random", c),
        "small-sjf-rand/random/seed3": lambda: stream_digest(
            _cluster(_small_scenario, queue_order="sjf", placements=("pack", "random", "contention_aware")), 3,
            "random", c),
        "mixed-servers/random/seed4": lambda: stream_digest(_cluster(_mixed_servers_scenario), 4, "random", c),
        "mixed-servers-fifo/greedy/seed5": lambda: stream_digest(
            _cluster(_mixed_servers_scenario, queue_order="fifo", placements=("pack", "spread", "first_fit")), 5,
            "greedy", c),
    }


def main(argv: list[str]) -> int:
    if "--write" in argv:
        which, path = cases(), STREAM_FILE
    elif "--write-portable" in argv:
        which, path = portable_cases(), PORTABLE_STREAM_FILE
    else:
        print("usage: python -m tests.env_stream_cases --write | --write-portable   "
              "(records digests from the current code)")
        return 2
    digests = {name: run() for name, run in which.items()}
    path.write_text(json.dumps(digests, indent=1, sort_keys=True) + "\n")
    print(f"wrote {len(digests)} digests to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
