"""Batched multi-process vector envs: several envs per worker process, results in shared memory.

Why: one ``DDLCluster-v0`` step costs tens of microseconds, about as much as one inter-process
round trip, so a vector env that sends every sub-env's step over its own pipe (Gymnasium's
``AsyncVectorEnv``, SB3's ``SubprocVecEnv``) spends most of its time messaging. Here each worker
process owns ``num_envs / num_workers`` envs and steps all of them per message; observations,
rewards, flags, action masks and the scalar ``info`` fields travel through shared memory, and the
pipe carries one byte each way (plus the rare end-of-episode metrics). ``DDLCluster-v0`` sub-envs
(with only Gymnasium's pass-through wrappers above them) write their observation and mask straight
into their shared rows (``DDLClusterEnv.step_into``): no observation array, info dict or mask copy
per step; any other env takes the generic ``step``/``reset`` path.

Two front ends over the same workers:

* :class:`BatchedVectorEnv` — a ``gymnasium.vector.VectorEnv`` (next-step autoreset, Gymnasium's
  default and what RLlib expects; ``info`` is a dict of arrays with ``_key`` masks)::

      envs = BatchedVectorEnv("ddl_gym:DDLCluster-v0", num_envs=16, num_workers=2)
      obs, info = envs.reset(seed=0)
      masks = envs.action_masks()            # (num_envs, n) int8, no extra round trip
      obs, reward, terminated, truncated, info = envs.step(actions)

* :class:`BatchedSubprocVecEnv` — a stable-baselines3 ``VecEnv`` (same-step autoreset,
  ``infos[i]["terminal_observation"]``, ``TimeLimit.truncated``) for PPO and MaskablePPO; its
  ``env_method("action_masks")`` reads the masks from shared memory::

      venv = BatchedSubprocVecEnv("ddl_gym:DDLCluster-v0", num_envs=8, num_workers=2)
      model = MaskablePPO("MlpPolicy", venv)   # call torch.set_num_threads(1) first on few cores

Measured speeds (``python scripts/bench_env.py``) are in that script's report. Rules of thumb:
use as many workers as free cores, at least 4 envs per worker so that messaging is amortised, and
``step_in_parent=True`` when the calling process would otherwise sit idle while the workers step
(a plain rollout loop, or PPO collecting rollouts): the caller then steps one share itself and
only ``num_workers - 1`` processes are started, so ``num_workers`` = cores keeps every core busy::

      envs = BatchedVectorEnv("ddl_gym:DDLCluster-v0", num_envs=16, num_workers=2, step_in_parent=True)

When every process has a core, each polls its pipe for up to ``spin_s`` (2 ms) before it blocks:
waking a blocked process cost more than stepping four envs on the 2-core VM measured, twice per
vector step. With more processes than cores polling would starve the steppers, so it is off there.
Results are identical to stepping the same envs one by one in one process (same seeds, same
actions), which the tests check. Only ``Box`` observations and ``Discrete`` actions are supported.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import pickle
import time
import traceback
from typing import Any, Sequence

import gymnasium as gym
import numpy as np

from ddl_gym.poolsafe import workers_skip_main

# Scalar info fields carried in shared memory (name, dtype); every other info key is dropped,
# except "metrics", which is sent through the pipe on the step that ends an episode.
INFO_FIELDS: tuple[tuple[str, Any], ...] = (
    ("invalid_action", np.bool_), ("executed_action", np.int64), ("sim_time", np.float64),
    ("queue_length", np.int64), ("running_jobs", np.int64), ("finished_jobs", np.int64),
)

_INFO_NAMES = tuple(name for name, _ in INFO_FIELDS)


def _info_dicts(columns: list[list[Any]], masks: list[np.ndarray]) -> list[dict[str, Any]]:
    """Per sub-env, the :data:`INFO_FIELDS` values of ``columns`` (one list per field) and its
    ``action_mask`` row as a dict. The SB3 front end builds one per env and step: a dict display costs
    half of ``dict(zip(names, values))``, so the keys are written out here (``tests/envs/test_vector.py``
    checks they are :data:`INFO_FIELDS`' names, in order)."""
    invalid, executed, sim_time, queue, running, finished = columns
    return [{"invalid_action": a, "executed_action": b, "sim_time": c, "queue_length": d, "running_jobs": e,
             "finished_jobs": f, "action_mask": m}
            for a, b, c, d, e, f, m in zip(invalid, executed, sim_time, queue, running, finished, masks)]


_STEP, _RESET, _CALL, _CLOSE = b"s", b"r", b"c", b"x"
#: Seconds a process busy-polls its pipe before a blocking read (see _wait_readable).
DEFAULT_SPIN_S = 0.002


def auto_spin_s(num_workers: int, step_in_parent: bool) -> float:
    """The default poll time: :data:`DEFAULT_SPIN_S` when every process (the caller too) has a core of
    its own, else 0. A process that polls keeps its core busy: with more processes than cores, the
    pollers take the cores the others need to step, and the vector env runs several times slower."""
    processes = num_workers if step_in_parent else num_workers + 1
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return DEFAULT_SPIN_S if processes <= cores else 0.0


def _wait_readable(conn: Any, spin_s: float) -> None:
    """Poll ``conn`` without sleeping for up to ``spin_s`` seconds; the blocking read follows.

    A process blocked on a pipe is woken by the kernel when the message arrives: on a virtual machine
    that costs tens to hundreds of microseconds, as much as stepping several envs, and each vector
    step has two such waits (the workers for the actions, the caller for the results). Polling for a
    little longer than a step takes avoids both; past ``spin_s`` (a policy update in the caller, say)
    the process blocks as before and leaves the core free.
    """
    poll = conn.poll
    if spin_s <= 0.0 or poll():
        return
    clock = time.perf_counter
    deadline = clock() + spin_s
    while clock() < deadline:
        if poll():
            return


class _Buffers:
    """Numpy views on one shared block: actions, observations, rewards, flags, masks, info fields."""

    def __init__(self, raw: Any, num_envs: int, obs_shape: tuple[int, ...], obs_dtype: Any, n_actions: int) -> None:
        self.raw = raw
        layout = self.layout(num_envs, obs_shape, obs_dtype, n_actions)
        buf = memoryview(raw).cast("B")
        self.views: dict[str, np.ndarray] = {}
        for name, (offset, dtype, shape) in layout.items():
            size = int(np.prod(shape)) * np.dtype(dtype).itemsize
            self.views[name] = np.frombuffer(buf[offset : offset + size], dtype=dtype).reshape(shape)

    @staticmethod
    def layout(num_envs: int, obs_shape: tuple[int, ...], obs_dtype: Any,
               n_actions: int) -> dict[str, tuple[int, Any, tuple[int, ...]]]:
        fields: list[tuple[str, Any, tuple[int, ...]]] = [
            ("actions", np.int64, (num_envs,)), ("obs", obs_dtype, (num_envs, *obs_shape)),
            ("reward", np.float64, (num_envs,)), ("terminated", np.bool_, (num_envs,)),
            ("truncated", np.bool_, (num_envs,)), ("mask", np.int8, (num_envs, n_actions)),
            ("has_mask", np.bool_, (num_envs,)),
        ] + [(f"info_{name}", dtype, (num_envs,)) for name, dtype in INFO_FIELDS]
        out, offset = {}, 0
        for name, dtype, shape in fields:
            offset = -(-offset // 8) * 8  # 8-byte alignment
            out[name] = (offset, dtype, shape)
            offset += int(np.prod(shape)) * np.dtype(dtype).itemsize
        out["_total"] = (offset, np.uint8, (0,))
        return out

    @classmethod
    def nbytes(cls, num_envs: int, obs_shape: tuple[int, ...], obs_dtype: Any, n_actions: int) -> int:
        return max(8, cls.layout(num_envs, obs_shape, obs_dtype, n_actions)["_total"][0])


def _make_env(env_id: str, env_kwargs: dict[str, Any]) -> gym.Env:
    # A bare id ("DDLCluster-v0") is registered already: importing this module ran ddl_gym/__init__ first.
    # The passive env checker only inspects the first reset/step, but its wrapper stays in every call
    # (about 1 µs of a ~30 µs step); the single-env path keeps it, sub-envs skip it unless asked.
    return gym.make(env_id, **{"disable_env_checker": True, **env_kwargs})


#: Wrappers that only check call order or the first reset/step: stepping the env beneath them directly
#: (after the group's own first reset) changes nothing.
_PASSTHROUGH_WRAPPERS = (gym.wrappers.OrderEnforcing, gym.wrappers.PassiveEnvChecker)


def _direct_env(env: gym.Env) -> Any:
    """The env beneath ``env`` if it can step straight into the shared rows (``step_into``/``reset_into``,
    as :class:`~ddl_gym.envs.cluster_env.DDLClusterEnv` has, with the info fields carried here) and
    only pass-through wrappers stand above it; else None (the generic ``step``/``reset`` path)."""
    while isinstance(env, gym.Wrapper):
        if type(env) not in _PASSTHROUGH_WRAPPERS:
            return None
        env = env.env
    if getattr(env, "SCALAR_INFO_KEYS", None) != _INFO_NAMES or not hasattr(env, "step_into"):
        return None
    return env


class _EnvGroup:
    """Sub-envs ``first .. first+count-1``, stepped in the current process into the shared buffers.

    A worker process owns one group; with ``step_in_parent`` the calling process owns one too and
    steps it while the worker processes step theirs. Envs that can (see :func:`_direct_env`) write
    their observation and mask straight into the shared rows: no observation array, info dict or
    mask copy per step.
    """

    def __init__(self, envs: list[gym.Env], bufs: dict[str, np.ndarray], first: int, same_step: bool) -> None:
        self.envs = envs
        self.first = first
        self.count = len(envs)
        self.same_step = same_step
        self.rows = slice(first, first + self.count)
        self.obs_b, self.rew_b, self.term_b, self.trunc_b = bufs["obs"], bufs["reward"], bufs["terminated"], bufs["truncated"]
        self.mask_b, self.has_mask_b, self.act_b = bufs["mask"], bufs["has_mask"], bufs["actions"]
        self.info_b = [(name, bufs[f"info_{name}"]) for name, _ in INFO_FIELDS]
        self.done = [False] * self.count  # next-step autoreset: this env ended on the previous step
        # step_into packs float32 rows; the buffers are C-contiguous by construction (_Buffers).
        self.direct = [_direct_env(env) if self.obs_b.dtype == np.float32 else None for env in envs]
        self.started = [False] * self.count  # reset once through its wrappers (they check the call order)

    def _write_state(self, i: int, obs: Any, info: dict[str, Any]) -> None:
        self.obs_b[i] = obs
        mask = info.get("action_mask")
        if mask is not None:
            self.mask_b[i] = mask
            self.has_mask_b[i] = True

    def step(self) -> dict[int, dict[str, Any]]:
        """Step every env with its action from the buffer; returns end-of-episode extras by row."""
        extra: dict[int, dict[str, Any]] = {}
        actions = self.act_b[self.rows].tolist()
        rewards, terms, truncs = [], [], []
        fields: list[tuple[Any, ...]] = []  # per env, the INFO_FIELDS values
        done, same_step, direct = self.done, self.same_step, self.direct
        obs_b, mask_b = self.obs_b, self.mask_b
        for k, env in enumerate(self.envs):
            i = self.first + k
            if done[k] and not same_step:  # next-step autoreset: ignore the action
                values = self._reset_one(k, None, None)
                reward, terminated, truncated = 0.0, False, False
                done[k] = False
            else:
                stepper = direct[k]
                if stepper is not None:  # the observation and mask land in the rows directly
                    reward, terminated, truncated, values, metrics = stepper.step_into(actions[k], obs_b, mask_b, i)
                    obs = None
                else:
                    obs, reward, terminated, truncated, info = env.step(actions[k])
                    self._write_state(i, obs, info)
                    values = tuple(info.get(name, 0) for name in _INFO_NAMES)
                    metrics = info.get("metrics")
                if terminated or truncated:
                    end = extra[i] = {"metrics": metrics}
                    if same_step:  # hand over the last observation, then reset into the rows
                        end["terminal_observation"] = obs_b[i].copy() if obs is None else obs
                        values = self._reset_one(k, None, None)
                    else:
                        done[k] = True
            rewards.append(reward)
            terms.append(terminated)
            truncs.append(truncated)
            fields.append(values)
        # One write per field for this group's rows instead of one per env.
        rows = self.rows
        self.rew_b[rows], self.term_b[rows], self.trunc_b[rows] = rewards, terms, truncs
        for values, (_, view) in zip(zip(*fields), self.info_b):
            view[rows] = values
        return extra

    def _reset_one(self, k: int, seed: int | None, options: dict[str, Any] | None) -> tuple[Any, ...]:
        """Reset env ``k`` into its rows; returns its INFO_FIELDS values."""
        i = self.first + k
        direct = self.direct[k]
        if direct is not None and self.started[k]:
            values = direct.reset_into(self.obs_b, self.mask_b, i, seed=seed, options=options)
            self.has_mask_b[i] = True
            return values
        obs, info = self.envs[k].reset(seed=seed, options=options)  # the first reset passes the wrappers
        self.started[k] = True
        self._write_state(i, obs, info)
        return tuple(info.get(name, 0) for name in _INFO_NAMES)

    def reset(self, seeds: Sequence[int | None], options: dict[str, Any] | None) -> None:
        for k in range(self.count):
            i = self.first + k
            values = self._reset_one(k, seeds[k], options)
            self.rew_b[i], self.term_b[i], self.trunc_b[i] = 0.0, False, False
            self.done[k] = False
            for value, (_, view) in zip(values, self.info_b):
                view[i] = value

    def call(self, name: str, args: tuple, kwargs: dict[str, Any], which: Sequence[int]) -> list[Any]:
        results = []
        for k in which:
            attr = self.envs[k].get_wrapper_attr(name)
            results.append(attr(*args, **kwargs) if callable(attr) else attr)
        return results

    def close(self) -> None:
        for env in self.envs:
            env.close()


def _worker(conn: Any, raw: Any, env_id: str, env_kwargs: dict[str, Any], first: int, count: int, num_envs: int,
            obs_shape: tuple[int, ...], obs_dtype: Any, n_actions: int, same_step: bool, spin_s: float) -> None:
    """Own envs ``first .. first+count-1``; serve step/reset/call requests until close."""
    group: _EnvGroup | None = None
    try:
        envs = [_make_env(env_id, env_kwargs) for _ in range(count)]
        group = _EnvGroup(envs, _Buffers(raw, num_envs, obs_shape, obs_dtype, n_actions).views, first, same_step)
        conn.send_bytes(b"ok")
        while True:
            _wait_readable(conn, spin_s)
            command = conn.recv_bytes()
            if command == _STEP:
                extra = group.step()
                conn.send_bytes(pickle.dumps(extra) if extra else b"")
            elif command == _RESET:
                seeds, options = pickle.loads(conn.recv_bytes())
                group.reset(seeds, options)
                conn.send_bytes(b"")
            elif command == _CALL:
                name, args, kwargs, which = pickle.loads(conn.recv_bytes())
                conn.send_bytes(pickle.dumps(group.call(name, args, kwargs, which)))
            elif command == _CLOSE:
                break
    except KeyboardInterrupt:
        pass
    except BaseException:  # report to the parent instead of dying silently
        try:
            conn.send_bytes(b"E" + traceback.format_exc().encode())
        except (BrokenPipeError, OSError):
            pass
    finally:
        if group is not None:
            group.close()
        conn.close()


class _WorkerPool:
    """``num_workers`` shares of ``num_envs`` envs (split as evenly as possible), one per process.

    With ``step_in_parent`` the calling process is one of the ``num_workers``: it steps the first
    share itself while ``num_workers - 1`` worker processes step theirs, so on ``c`` cores
    ``num_workers = c`` keeps every core stepping envs instead of one waiting on the others.
    """

    def __init__(self, env_id: str, num_envs: int, num_workers: int, env_kwargs: dict[str, Any] | None,
                 same_step: bool, context: str | None, step_in_parent: bool = False,
                 spin_s: float | None = None) -> None:
        if num_envs < 1 or num_workers < 1:
            raise ValueError(f"num_envs and num_workers must be >= 1, got {num_envs} and {num_workers}")
        num_workers = min(num_workers, num_envs)
        self.spin_s = auto_spin_s(num_workers, step_in_parent) if spin_s is None else float(spin_s)
        if not self.spin_s >= 0.0:
            raise ValueError(f"spin_s must be >= 0 seconds, got {spin_s}")
        self.env_id = env_id
        self.env_kwargs = dict(env_kwargs or {})
        self.env_kwargs.setdefault("render_mode", None)
        probe = _make_env(env_id, self.env_kwargs)
        self.observation_space = probe.observation_space
        self.action_space = probe.action_space
        self.metadata = dict(probe.metadata)
        self.spec = probe.spec
        probe.close()
        if not isinstance(self.action_space, gym.spaces.Discrete) or not isinstance(self.observation_space,
                                                                                   gym.spaces.Box):
            raise ValueError("batched vector envs support Box observations and Discrete actions only")
        self.num_envs = num_envs
        self.n_actions = int(self.action_space.n)
        shape, dtype = tuple(self.observation_space.shape), self.observation_space.dtype
        if context is None:
            context = "forkserver" if "forkserver" in mp.get_all_start_methods() else "spawn"
        ctx = mp.get_context(context)
        if context == "forkserver":  # workers fork from a server that has these imported already
            ctx.set_forkserver_preload(["numpy", "gymnasium", "ddl_gym.envs.cluster_env"])
        self._raw = ctx.RawArray("b", _Buffers.nbytes(num_envs, shape, dtype, self.n_actions))
        self.buffers = _Buffers(self._raw, num_envs, shape, dtype, self.n_actions).views
        sizes = [num_envs // num_workers + (1 if w < num_envs % num_workers else 0) for w in range(num_workers)]
        self.slices: list[range] = []
        self._conns, self._procs = [], []
        self._parent: _EnvGroup | None = None
        first = 0
        if step_in_parent:
            envs = [_make_env(env_id, self.env_kwargs) for _ in range(sizes[0])]
            self._parent = _EnvGroup(envs, self.buffers, 0, same_step)
            self._parent_rows = range(0, sizes[0])
            first, sizes = sizes[0], sizes[1:]
        for size in sizes:
            parent, child = ctx.Pipe()
            proc = ctx.Process(target=_worker, daemon=True,
                               args=(child, self._raw, env_id, self.env_kwargs, first, size, num_envs, shape, dtype,
                                     self.n_actions, same_step, self.spin_s))
            with workers_skip_main():  # the worker needs nothing of the calling script (no __main__ guard needed)
                proc.start()
            child.close()
            self._conns.append(parent)
            self._procs.append(proc)
            self.slices.append(range(first, first + size))
            first += size
        self.closed = False
        for conn in self._conns:
            self._receive(conn)

    def _receive(self, conn: Any) -> bytes:
        try:
            data = conn.recv_bytes()
        except EOFError:
            self.close(terminate=True)
            raise RuntimeError("a vector-env worker died without a message") from None
        if data[:1] == b"E":
            self.close(terminate=True)
            trace = data[1:].decode()
            raise RuntimeError(f"a vector-env worker failed: {trace.strip().splitlines()[-1]}\n{trace}")
        return data

    def step(self, actions: np.ndarray) -> dict[int, dict[str, Any]]:
        if self.closed:
            raise gym.error.ClosedEnvironmentError("the vector env is closed")
        self.buffers["actions"][:] = actions
        for conn in self._conns:
            conn.send_bytes(_STEP)
        extra: dict[int, dict[str, Any]] = self._parent.step() if self._parent is not None else {}
        for conn in self._conns:
            _wait_readable(conn, self.spin_s)
            data = self._receive(conn)
            if data:
                extra.update(pickle.loads(data))
        return extra

    def reset(self, seeds: Sequence[int | None], options: dict[str, Any] | None) -> None:
        if self.closed:
            raise gym.error.ClosedEnvironmentError("the vector env is closed")
        for conn, rows in zip(self._conns, self.slices):
            conn.send_bytes(_RESET)
            conn.send_bytes(pickle.dumps(([seeds[i] for i in rows], options)))
        if self._parent is not None:
            self._parent.reset([seeds[i] for i in self._parent_rows], options)
        for conn in self._conns:
            self._receive(conn)

    def call(self, name: str, args: tuple, kwargs: dict[str, Any], indices: Sequence[int]) -> list[Any]:
        wanted = set(indices)
        results: dict[int, Any] = {}
        asked = []
        for conn, rows in zip(self._conns, self.slices):
            which = [k for k, i in enumerate(rows) if i in wanted]
            if which:
                conn.send_bytes(_CALL)
                conn.send_bytes(pickle.dumps((name, args, kwargs, which)))
                asked.append((conn, [rows[k] for k in which]))
        if self._parent is not None:
            which = [k for k, i in enumerate(self._parent_rows) if i in wanted]
            results.update(zip([self._parent_rows[k] for k in which], self._parent.call(name, args, kwargs, which)))
        for conn, rows_asked in asked:
            for i, value in zip(rows_asked, pickle.loads(self._receive(conn))):
                results[i] = value
        return [results[i] for i in indices]

    def close(self, terminate: bool = False) -> None:
        if getattr(self, "closed", True):
            return
        self.closed = True
        for conn in self._conns:
            try:
                if not terminate:
                    conn.send_bytes(_CLOSE)
            except (BrokenPipeError, OSError):
                pass
        for proc in self._procs:
            proc.join(timeout=5)
            if proc.is_alive():
                proc.terminate()
        for conn in self._conns:
            conn.close()
        if self._parent is not None:
            self._parent.close()

    def __del__(self) -> None:  # pragma: no cover - interpreter shutdown order varies
        try:
            self.close()
        except Exception:
            pass


def _seed_list(seed: int | Sequence[int | None] | None, n: int) -> list[int | None]:
    if seed is None:
        return [None] * n
    if isinstance(seed, (int, np.integer)):
        return [int(seed) + i for i in range(n)]
    seeds = list(seed)
    if len(seeds) != n:
        raise ValueError(f"expected {n} seeds, got {len(seeds)}")
    return seeds


class BatchedVectorEnv(gym.vector.VectorEnv):
    """A Gymnasium vector env over batched worker processes (see the module docstring).

    Args:
        env_id: registered id (``"ddl_gym:DDLCluster-v0"``) made with ``gym.make`` in each worker.
        num_envs: sub-envs in total.
        num_workers: processes stepping envs (default: 2).
        env_kwargs: keyword arguments for ``gym.make``.
        context: multiprocessing start method (default ``"forkserver"`` where available).
        step_in_parent: the calling process counts as one of ``num_workers`` and steps the first
            share of envs itself while the others step theirs (one process fewer; see the module
            docstring).
        spin_s: seconds each process polls for its next message before it blocks (see
            :func:`auto_spin_s`; default: 2 ms when every process has a core, else 0).

    ``reset(seed=s)`` seeds sub-env ``i`` with ``s + i`` (Gymnasium's convention). Autoreset is
    next-step: the step after a sub-env's episode ended resets it, ignores its action and returns
    reward 0. ``info`` holds ``action_mask`` and the scalar fields of :data:`INFO_FIELDS` (each with
    its ``_key`` mask), and ``metrics`` (a dict of arrays) on steps that ended an episode.
    """

    def __init__(self, env_id: str = "ddl_gym:DDLCluster-v0", num_envs: int = 8, num_workers: int = 2,
                 env_kwargs: dict[str, Any] | None = None, context: str | None = None,
                 step_in_parent: bool = False, spin_s: float | None = None) -> None:
        self._pool = _WorkerPool(env_id, num_envs, num_workers, env_kwargs, same_step=False, context=context,
                                 step_in_parent=step_in_parent, spin_s=spin_s)
        self.num_envs = num_envs
        self.single_observation_space = self._pool.observation_space
        self.single_action_space = self._pool.action_space
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space, num_envs)
        self.action_space = gym.vector.utils.batch_space(self.single_action_space, num_envs)
        self.metadata = {**self._pool.metadata, "autoreset_mode": gym.vector.AutoresetMode.NEXT_STEP}
        self.spec = self._pool.spec
        self.render_mode = None
        self._all = np.ones(num_envs, dtype=bool)

    def reset(self, *, seed: int | Sequence[int | None] | None = None,
              options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        self._pool.reset(_seed_list(seed, self.num_envs), options)
        return self._pool.buffers["obs"].copy(), self._infos({})

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        extra = self._pool.step(np.asarray(actions, dtype=np.int64).reshape(self.num_envs))
        b = self._pool.buffers
        return (b["obs"].copy(), b["reward"].copy(), b["terminated"].copy(), b["truncated"].copy(),
                self._infos(extra))

    def _infos(self, extra: dict[int, dict[str, Any]]) -> dict[str, Any]:
        b = self._pool.buffers
        info: dict[str, Any] = {}
        if b["has_mask"].all():
            info["action_mask"] = b["mask"].copy()
            info["_action_mask"] = self._all
        for name, _ in INFO_FIELDS:
            info[name] = b[f"info_{name}"].copy()
            info[f"_{name}"] = self._all
        ended = {i: e["metrics"] for i, e in extra.items() if e.get("metrics")}
        if ended:
            keys = sorted({k for m in ended.values() for k in m})
            present = np.zeros(self.num_envs, dtype=bool)
            present[list(ended)] = True
            metrics = {}
            for key in keys:
                column = np.full(self.num_envs, np.nan)
                for i, m in ended.items():
                    column[i] = m.get(key, np.nan)
                metrics[key] = column
                metrics[f"_{key}"] = present
            info["metrics"] = metrics
            info["_metrics"] = present
        return info

    def action_masks(self) -> np.ndarray:
        """Masks of the current states, shape ``(num_envs, n)``, np.int8 (read from shared memory)."""
        return self._pool.buffers["mask"].copy()

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Call a method (or read an attribute) of every sub-env, through ``get_wrapper_attr``."""
        if name == "action_masks" and not args and not kwargs:
            return tuple(self.action_masks())
        return tuple(self._pool.call(name, args, kwargs, range(self.num_envs)))

    def get_attr(self, name: str) -> tuple[Any, ...]:
        return tuple(self._pool.call(name, (), {}, range(self.num_envs)))

    def close_extras(self, **kwargs: Any) -> None:
        self._pool.close()


def _build_sb3_class() -> type:
    """The SB3 front end, built on first use so that importing this module does not import torch."""
    from stable_baselines3.common.vec_env.base_vec_env import VecEnv

    class BatchedSubprocVecEnv(VecEnv):  # type: ignore[no-redef,valid-type,misc]
        """A stable-baselines3 ``VecEnv`` over batched worker processes (see the module docstring).

        Same-step autoreset as every SB3 vec env: on the step that ends an episode ``obs`` is
        already the next episode's first observation and ``infos[i]["terminal_observation"]``
        holds the last one. Seeds: ``seed(s)`` then ``reset()`` seeds sub-env ``i`` with ``s + i``.
        ``env_method("action_masks")`` (what MaskablePPO calls every step) is answered from shared
        memory without messaging the workers.
        """

        def __init__(self, env_id: str = "ddl_gym:DDLCluster-v0", num_envs: int = 8, num_workers: int = 2,
                     env_kwargs: dict[str, Any] | None = None, context: str | None = None,
                     step_in_parent: bool = False, spin_s: float | None = None) -> None:
            self._pool = _WorkerPool(env_id, num_envs, num_workers, env_kwargs, same_step=True, context=context,
                                     step_in_parent=step_in_parent, spin_s=spin_s)
            super().__init__(num_envs, self._pool.observation_space, self._pool.action_space)
            self._seeds: list[int | None] = [None] * num_envs
            self._actions: np.ndarray | None = None

        def reset(self) -> np.ndarray:
            self._pool.reset(self._seeds, None)
            self._seeds = [None] * self.num_envs
            self.reset_infos = self._infos()
            return self._pool.buffers["obs"].copy()

        def seed(self, seed: int | None = None) -> list[int | None]:
            self._seeds = _seed_list(seed, self.num_envs)
            return list(self._seeds)

        def step_async(self, actions: np.ndarray) -> None:
            self._actions = np.asarray(actions, dtype=np.int64).reshape(self.num_envs)

        def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
            assert self._actions is not None, "step_async first"
            extra = self._pool.step(self._actions)
            b = self._pool.buffers
            terminated, truncated = b["terminated"], b["truncated"]
            infos = self._infos()
            for i, end in extra.items():
                infos[i]["terminal_observation"] = end["terminal_observation"]
                infos[i]["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
                if end.get("metrics"):
                    infos[i]["metrics"] = end["metrics"]
            return (b["obs"].copy(), b["reward"].astype(np.float32), terminated | truncated, infos)

        def _infos(self) -> list[dict[str, Any]]:
            """One info dict per sub-env: the scalar fields as Python values, the mask as a fresh row."""
            b = self._pool.buffers
            # A column read per field and one copy of all masks, not a numpy read per env and field.
            columns = [b[f"info_{name}"].tolist() for name in _INFO_NAMES]
            infos = _info_dicts(columns, list(b["mask"].copy()))
            has_mask = b["has_mask"]
            if not has_mask.all():  # every DDLCluster sub-env has one; another env may not
                for i in np.flatnonzero(~has_mask).tolist():
                    del infos[i]["action_mask"]
            return infos

        def close(self) -> None:
            self._pool.close()

        def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
            return self._pool.call(attr_name, (), {}, self._get_indices(indices))

        def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
            raise NotImplementedError("BatchedSubprocVecEnv does not set sub-env attributes")

        def env_method(self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any) -> list[Any]:
            which = list(self._get_indices(indices))
            if method_name == "action_masks" and not method_args and not method_kwargs:
                return list(self._pool.buffers["mask"][which])  # one fancy-indexed copy, a row each
            return self._pool.call(method_name, method_args, method_kwargs, which)

        def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
            return [False for _ in self._get_indices(indices)]

        def get_images(self) -> Sequence[np.ndarray | None]:
            return [None] * self.num_envs

    BatchedSubprocVecEnv.__qualname__ = "BatchedSubprocVecEnv"  # importable by name (module __getattr__)
    return BatchedSubprocVecEnv


_SB3_CLASS: type | None = None


def __getattr__(name: str) -> Any:
    """``BatchedSubprocVecEnv`` is created lazily (it subclasses SB3's ``VecEnv``; SB3 is optional)."""
    global _SB3_CLASS
    if name == "BatchedSubprocVecEnv":
        if _SB3_CLASS is None:
            _SB3_CLASS = _build_sb3_class()
        return _SB3_CLASS
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def make_async_vec(env_id: str = "ddl_gym:DDLCluster-v0", num_envs: int = 32, num_workers: int = 2,
                   **env_kwargs: Any) -> BatchedVectorEnv:
    """The tuned Gymnasium vector env: ``BatchedVectorEnv`` with the caller stepping one share.

    32 envs on 2 processes (the caller and one worker) was the fastest measured layout on 2 cores
    (``python scripts/bench_env.py``, section (b)); use ``num_workers`` = free cores.
    """
    return BatchedVectorEnv(env_id, num_envs=num_envs, num_workers=num_workers, env_kwargs=env_kwargs,
                            step_in_parent=True)


__all__ = ["BatchedVectorEnv", "BatchedSubprocVecEnv", "INFO_FIELDS", "make_async_vec"]
