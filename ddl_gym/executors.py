"""Executors: where independent (scenario, policy, seed) evaluations and other work items run.

One small interface, two implementations:

* :class:`LocalExecutor` (``"local"``, the default): worker processes on this machine (the harness's
  ``ProcessPoolExecutor`` with forkserver children that exit when the parent dies); no new dependency.
* :class:`RayExecutor` (``"ray"``): Ray tasks on a Ray cluster. ``address="auto"`` or ``"HOST:PORT"``
  joins a running cluster (``ray start --head`` ...); no address starts a private local one. Ray is
  imported only here and only when this executor is made (``pip install 'ddl-gym[ray]'``).

Both give the same rows for the same tasks: every task is seeded, and the row's ``cache_key`` and
provenance are computed once by the driver (:func:`ddl_gym.harness.evaluate`), which alone writes
``summary.csv`` / ``jobs.csv`` through the folder lock, appends and atomic rewrites — workers never
touch the results folder, so no shared file system is needed, and a resumed run recomputes nothing
whose ``cache_key`` still matches.

On Ray, what a task needs travels with it **by content**: a scenario given as a file (and the
workload CSV or trace files it reads, i.e. every field named ``path``/``*_path``) is resolved on the
driver, the bytes of those files are put in Ray's object store once, and each worker writes them to
a content-addressed temporary folder and points the scenario there (:class:`ScenarioBundle`).
Agents given as ``KIND:PATH`` travel the same way (the zip and its sidecar files). Registered
scenario names travel as names: their data is the package's own, and each worker checks that it
runs the driver's code (:func:`ddl_gym.fingerprint.code_fingerprint`), so a node with other code
fails loudly instead of giving rows under the driver's ``cache_key``. (A registered scenario that
reads a trace outside the package, e.g. the full Philly table from ``/work/shared/traces``, needs
that file on every node; a node without it fails with the file's name.)

Failures: a worker process or node that dies (killed, out of memory, node lost) has its tasks
retried by Ray up to ``max_retries`` times; a task whose code raises is retried up to
``max_retries`` times unless the error is a :class:`~ddl_gym.sim.model.ConfigError` (deterministic:
same seed, same error). Tasks still failing then are reported one by one with the worker's message
(stderr) and the first is raised after every other row has been written.

:meth:`Executor.map` runs any picklable top-level function over independent items with the same
machinery (search-generated training data, self-play episodes), results in item order.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import os
import sys
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ddl_gym.sim.model import ConfigError

#: Executor names accepted by ``--executor``.
EXECUTORS: tuple[str, ...] = ("local", "ray")
RAY_HINT = "the ray executor needs Ray: pip install 'ddl-gym[ray]'"
#: Retries of a failed task (worker crash, lost node, or an exception other than ConfigError).
DEFAULT_MAX_RETRIES = 3
#: Object store of a Ray cluster this module starts itself (bytes); results are small rows.
LOCAL_OBJECT_STORE_BYTES = 200 * 1024**2


class TaskFailed(RuntimeError):
    """A task that still failed after its retries; the message is the worker's, with where it ran."""


# ============================================================================ the interface
class Executor:
    """Runs independent tasks and hands their results back to the driver (this process)."""

    name = "executor"

    def run_pairs(self, tasks: Sequence[Any], scenario: Any, record: Callable[[Any, dict, dict], None],
                  errors: list[BaseException], bar: Any) -> None:
        """Evaluate harness pair tasks; call ``record(task, row, jobs)`` on the driver as each finishes.

        Failures are appended to ``errors`` (after retries) and do not stop the other tasks; an
        exception raised by ``record`` (a results file that cannot be written) stops everything.
        """
        raise NotImplementedError

    def map(self, fn: Callable[[Any], Any], items: Iterable[Any], *, progress: bool = False,
            desc: str | None = None) -> list[Any]:
        """``[fn(x) for x in items]`` on the executor's workers, in item order.

        ``fn`` must be a picklable top-level function and its results picklable. Raises
        :class:`TaskFailed` (or the item's ConfigError) naming the first item that failed after its retries.
        """
        raise NotImplementedError

    def close(self) -> None:
        """Release workers (and a Ray cluster this executor started)."""

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def make_executor(kind: str | Executor | None = "local", *, workers: int | None = None,
                  ray_address: str | None = None, max_retries: int = DEFAULT_MAX_RETRIES,
                  chunk_size: int | None = None) -> Executor:
    """The executor named ``kind`` (``"local"`` or ``"ray"``); an Executor is returned as is.

    Raises:
        ConfigError: unknown kind, an option the kind does not take, or Ray missing (one line naming the extra).
    """
    if isinstance(kind, Executor):
        return kind
    kind = kind or "local"
    if kind not in EXECUTORS:
        raise ConfigError(f"unknown executor {kind!r}; choose from {', '.join(EXECUTORS)}")
    if not 0 <= int(max_retries) <= 100:
        raise ConfigError(f"max_retries must be in [0, 100], got {max_retries}")
    if kind == "local":
        if ray_address is not None:
            raise ConfigError("--ray-address needs --executor ray")
        return LocalExecutor(workers=workers, max_retries=max_retries)
    return RayExecutor(address=ray_address, workers=workers, max_retries=max_retries, chunk_size=chunk_size)


# ============================================================================ local
def _forkserver_pool(n_workers: int) -> Any:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from ddl_gym.harness.episodes import _worker_init

    method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
    return ProcessPoolExecutor(max_workers=n_workers, mp_context=multiprocessing.get_context(method),
                               initializer=_worker_init, initargs=(os.getpid(),))


class LocalExecutor(Executor):
    """Worker processes on this machine (today's harness pool); ``workers=1`` runs in this process."""

    name = "local"

    def __init__(self, workers: int | None = None, max_retries: int = DEFAULT_MAX_RETRIES) -> None:
        self.workers = workers
        self.max_retries = int(max_retries)

    def _n_workers(self, n_items: int) -> int:
        return int(self.workers) if self.workers is not None else min(os.cpu_count() or 1, max(1, n_items))

    def run_pairs(self, tasks: Sequence[Any], scenario: Any, record: Callable[[Any, dict, dict], None],
                  errors: list[BaseException], bar: Any) -> None:
        from ddl_gym.harness.episodes import _run_in_pool, run_pairs_here

        n = self._n_workers(len(tasks))
        if n > 1 and len(tasks) > 1:
            _run_in_pool(list(tasks), n, record, errors, bar)
            return
        run_pairs_here(tasks, record, errors, bar)

    def map(self, fn: Callable[[Any], Any], items: Iterable[Any], *, progress: bool = False,
            desc: str | None = None) -> list[Any]:
        from concurrent.futures import FIRST_COMPLETED, wait

        from tqdm.auto import tqdm

        items = list(items)
        results: list[Any] = [None] * len(items)
        bar = tqdm(total=len(items), desc=desc or getattr(fn, "__name__", "map"), disable=not progress,
                   file=sys.stderr, dynamic_ncols=True)
        try:
            n = self._n_workers(len(items))
            if n <= 1 or len(items) <= 1:
                for i, item in enumerate(items):
                    results[i] = _call_with_retries(fn, item, i, self.max_retries, "this process")
                    bar.update(1)
                return results
            pool = _forkserver_pool(min(n, len(items)))
            ok = False
            try:
                attempts = dict.fromkeys(range(len(items)), 0)
                pending = {pool.submit(fn, items[i]): i for i in range(len(items))}
                while pending:
                    done, _ = wait(pending, return_when=FIRST_COMPLETED)
                    for fut in done:
                        i = pending.pop(fut)
                        try:
                            results[i] = fut.result()
                        except ConfigError:
                            raise
                        except Exception as exc:  # includes a worker that died (BrokenProcessPool)
                            attempts[i] += 1
                            if attempts[i] > self.max_retries or _pool_broken(exc):
                                raise TaskFailed(f"item {i} failed after {attempts[i]} attempt(s) in a local "
                                                 f"worker: {type(exc).__name__}: {_first_line(exc)}") from exc
                            pending[pool.submit(fn, items[i])] = i
                            continue
                        bar.update(1)
                ok = True
            finally:
                _close_pool(pool, ok)
            return results
        finally:
            bar.close()


def _pool_broken(exc: BaseException) -> bool:
    from concurrent.futures.process import BrokenProcessPool

    return isinstance(exc, BrokenProcessPool)


def _close_pool(pool: Any, finished_cleanly: bool) -> None:
    from ddl_gym.harness.episodes import close_pool

    close_pool(pool, finished_cleanly)


def _call_with_retries(fn: Callable[[Any], Any], item: Any, index: int, max_retries: int, where: str) -> Any:
    for attempt in range(1, max_retries + 2):
        try:
            return fn(item)
        except ConfigError:
            raise
        except Exception as exc:
            if attempt > max_retries:
                raise TaskFailed(f"item {index} failed after {attempt} attempt(s) in {where}: "
                                 f"{type(exc).__name__}: {_first_line(exc)}") from exc
    raise AssertionError("unreachable")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


# ============================================================================ scenarios by content
#: Field names whose string value is a file the scenario reads (shipped by content to Ray workers).
def _is_path_field(name: str) -> bool:
    return name == "path" or name.endswith("_path")


def _package_root() -> Path:
    return Path(__file__).resolve().parent


def _shippable(value: Any) -> str | None:
    """``value`` as a file path to ship, or None (not a file, or package data every worker has)."""
    if not isinstance(value, (str, os.PathLike)) or not str(value):
        return None
    path = Path(value)
    if not path.is_file():
        return None
    try:
        path.resolve().relative_to(_package_root())
        return None  # package data: identical on every worker running the same code (checked per worker)
    except ValueError:
        return str(value)


def _walk_paths(obj: Any, found: dict[str, None], depth: int = 0) -> None:
    if depth > 20:
        return
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        for f in dataclasses.fields(obj):
            value = getattr(obj, f.name, None)
            if _is_path_field(f.name) and _shippable(value):
                found[str(value)] = None
            else:
                _walk_paths(value, found, depth + 1)
    elif isinstance(obj, Mapping):
        for key, value in obj.items():
            if isinstance(key, str) and _is_path_field(key) and _shippable(value):
                found[str(value)] = None
            else:
                _walk_paths(value, found, depth + 1)
    elif isinstance(obj, (list, tuple)):
        if len(obj) == 2 and isinstance(obj[0], str) and _is_path_field(obj[0]) and _shippable(obj[1]):
            found[str(obj[1])] = None  # ("path", value) in a params tuple
            return
        for value in obj:
            _walk_paths(value, found, depth + 1)


def _rewrite_paths(obj: Any, mapping: Mapping[str, str], depth: int = 0) -> Any:
    """A copy of ``obj`` whose path strings in ``mapping`` are replaced (frozen dataclasses included)."""
    if depth > 20:
        return obj
    if isinstance(obj, str):
        return mapping.get(obj, obj)
    if isinstance(obj, Path):
        return Path(mapping[str(obj)]) if str(obj) in mapping else obj
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        changes = {}
        for f in dataclasses.fields(obj):
            value = getattr(obj, f.name, None)
            new = _rewrite_paths(value, mapping, depth + 1)
            if new is not value:
                changes[f.name] = new
        if not changes:
            return obj
        import copy

        clone = copy.copy(obj)
        for name, value in changes.items():
            object.__setattr__(clone, name, value)
        return clone
    if isinstance(obj, dict):
        items = {k: _rewrite_paths(v, mapping, depth + 1) for k, v in obj.items()}
        return items if any(items[k] is not obj[k] for k in obj) else obj
    if isinstance(obj, (list, tuple)) and not hasattr(obj, "_fields"):
        values = [_rewrite_paths(v, mapping, depth + 1) for v in obj]
        if all(a is b for a, b in zip(values, obj)):
            return obj
        return type(obj)(values)
    return obj


@dataclasses.dataclass(frozen=True)
class ScenarioBundle:
    """A scenario as it travels to a worker: its name, or the resolved object plus its files' bytes.

    Attributes:
        name: the registered scenario name (``scenario`` is None), else the resolved scenario's name.
        scenario: the resolved Scenario (scenario files, workload CSV replacements), or None.
        files: driver path -> bytes of every file the scenario reads (outside the package).
        code: the driver's :func:`~ddl_gym.fingerprint.code_fingerprint`.
    """

    name: str
    scenario: Any = None
    files: tuple[tuple[str, bytes], ...] = ()
    code: str = ""
    agents: tuple[tuple[str, tuple[tuple[str, bytes], ...]], ...] = ()  # agent spec -> (file name, bytes)

    @property
    def digest(self) -> str:
        h = hashlib.sha256(self.name.encode())
        for path, data in self.files:
            h.update(path.encode() + b"\0" + hashlib.sha256(data).digest())
        return h.hexdigest()[:20]


def _agent_bundle(spec: str) -> tuple[tuple[str, bytes], ...]:
    """The files an agent spec ``KIND:PATH`` loads, by content (the zip and the sidecars next to it)."""
    from ddl_gym.harness.store import _agent_files

    files = []
    for path in _agent_files(spec):
        if path.is_file():
            try:
                files.append((path.name, path.read_bytes()))
            except OSError as exc:
                raise ConfigError(f"{path}: cannot read agent file ({exc.strerror or exc})") from None
    if not files:
        raise ConfigError(f"policy {spec!r}: agent file not found")
    return tuple(files)


def bundle_scenario(handle: Any, resolved: Any, policies: Sequence[str] = ()) -> ScenarioBundle:
    """The :class:`ScenarioBundle` of a harness task's scenario handle, its resolved Scenario and the
    agent files of the ``policies`` given as ``KIND:PATH``.

    Raises:
        ConfigError: an agent nested inside another spec (``mcts:policy=KIND:PATH``), which is not shipped.
    """
    from ddl_gym.fingerprint import code_fingerprint
    from ddl_gym.harness.policy_specs import is_agent_spec
    from ddl_gym.scenarios import SCENARIOS

    agents = []
    for spec in dict.fromkeys(policies):
        if is_agent_spec(spec):
            agents.append((spec, _agent_bundle(spec)))
        elif any(is_agent_spec(part.partition("=")[2]) for part in spec.partition(":")[2].split(",")):
            raise ConfigError(f"policy {spec!r}: an agent inside another policy's options is not shipped to Ray "
                              "workers; use --executor local for it")
    code = code_fingerprint()
    if isinstance(handle, str) and SCENARIOS.get(handle) is not None and SCENARIOS[handle].name == resolved.name \
            and handle == resolved.name:
        return ScenarioBundle(name=handle, code=code, agents=tuple(agents))
    found: dict[str, None] = {}
    _walk_paths(resolved, found)
    files = []
    for path in found:
        try:
            files.append((path, Path(path).read_bytes()))
        except OSError as exc:
            raise ConfigError(f"{path}: cannot read a file of scenario {resolved.name!r} "
                              f"({exc.strerror or exc})") from None
    return ScenarioBundle(name=resolved.name, scenario=resolved, files=tuple(files), code=code, agents=tuple(agents))


_MATERIALISED: dict[str, Any] = {}


def _files_root() -> Path:
    return Path(tempfile.gettempdir()) / f"ddl-gym-files-{os.getuid() if hasattr(os, 'getuid') else 0}"


def _write_once(target: Path, data: bytes) -> None:
    if target.is_file() and target.stat().st_size == len(data) and \
            hashlib.sha256(target.read_bytes()).digest() == hashlib.sha256(data).digest():
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, target)


def _materialise_agents(bundle: ScenarioBundle) -> dict[str, str]:
    """Agent spec -> the same spec pointing at a local copy of its files (one folder per content)."""
    out: dict[str, str] = {}
    for spec, files in bundle.agents:
        h = hashlib.sha256()
        for name, data in files:
            h.update(name.encode() + b"\0" + hashlib.sha256(data).digest())
        folder = _files_root() / f"agent-{h.hexdigest()[:24]}"
        for name, data in files:
            _write_once(folder / name, data)
        kind = spec.split(":", 1)[0]
        out[spec] = f"{kind}:{folder / files[0][0]}"
    return out


def _materialise(bundle: ScenarioBundle) -> Any:
    """The bundle's scenario in this worker: its name, or the object pointed at local copies of its files."""
    from ddl_gym.fingerprint import code_fingerprint

    mine = code_fingerprint()
    if bundle.code and mine != bundle.code:
        import socket

        raise ConfigError(f"worker {socket.gethostname()} runs ddl-gym code {mine!r} but the driver runs "
                          f"{bundle.code!r}; install the driver's version on every node")
    if bundle.scenario is None:
        return bundle.name
    key = bundle.digest
    if key in _MATERIALISED:
        return _MATERIALISED[key]
    mapping: dict[str, str] = {}
    for path, data in bundle.files:
        target = _files_root() / hashlib.sha256(data).hexdigest() / Path(path).name
        _write_once(target, data)
        mapping[path] = str(target)
    scenario = _rewrite_paths(bundle.scenario, mapping)
    _MATERIALISED[key] = scenario
    return scenario


def run_pair_chunk(bundle: ScenarioBundle, tasks: Sequence[Any]) -> list[tuple[str, Any]]:
    """Worker side: evaluate harness pair tasks on the bundle's scenario.

    Returns, per task, ``("ok", (row, jobs))``, ``("config", message)`` (deterministic input error)
    or ``("error", "Type: message")``.
    """
    from ddl_gym.harness.episodes import _run_pair

    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(var, "1")
    try:
        scenario = _materialise(bundle)
        agents = _materialise_agents(bundle)
    except ConfigError as exc:  # other code on this node: every task of the chunk fails with the reason
        return [("config", str(exc))] * len(tasks)
    out: list[tuple[str, Any]] = []
    for task in tasks:
        local = dataclasses.replace(task, scenario=scenario, workload_csv=None) if bundle.scenario is not None \
            else dataclasses.replace(task, scenario=scenario)
        if task.policy in agents:
            local = dataclasses.replace(local, policy=agents[task.policy])
        try:
            out.append(("ok", _run_pair(local)))
        except ConfigError as exc:
            out.append(("config", str(exc)))
        except Exception as exc:
            out.append(("error", f"{type(exc).__name__}: {_first_line(exc)}"))
    return out


# ============================================================================ ray
def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ConfigError(RAY_HINT) from None
    return ray


class RayExecutor(Executor):
    """Ray tasks on a Ray cluster: ``address`` ``"auto"`` / ``"HOST:PORT"`` joins one, None starts one.

    Args:
        address: the cluster to join; None starts a local cluster of ``workers`` CPUs (default: all)
            with a small object store, no dashboard, torn down by :meth:`close`.
        workers: CPUs of a cluster started here (not allowed with ``address``: the cluster decides).
        max_retries: retries of a task whose worker or node died, or whose code raised (not ConfigError).
        chunk_size: pairs per Ray task (default: about four chunks per CPU of the cluster, at most 8),
            trading per-task overhead against load balance and the work a killed driver loses.
    """

    name = "ray"

    def __init__(self, address: str | None = None, workers: int | None = None,
                 max_retries: int = DEFAULT_MAX_RETRIES, chunk_size: int | None = None) -> None:
        if address is not None and workers is not None:
            raise ConfigError("--workers does not apply to --executor ray with --ray-address (the cluster "
                              "sets the CPUs); leave it out")
        if chunk_size is not None and not 1 <= int(chunk_size) <= 10_000:
            raise ConfigError(f"chunk size must be in [1, 10000], got {chunk_size}")
        ray = _import_ray()
        self._ray = ray
        self.address = address
        self.max_retries = int(max_retries)
        self.chunk_size = chunk_size
        self._started = False
        if not ray.is_initialized():
            env = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
            kwargs: dict[str, Any] = {"include_dashboard": False, "configure_logging": False,
                                      "log_to_driver": False, "runtime_env": {"env_vars": env}}
            if address is None:
                kwargs.update(num_cpus=workers or os.cpu_count() or 1,
                              object_store_memory=LOCAL_OBJECT_STORE_BYTES)
            if address not in (None, "auto"):
                _probe(address)
            try:
                ray.init(address=address, **kwargs)
            except ConnectionError as exc:
                raise ConfigError(f"--ray-address {address}: cannot connect to a Ray cluster "
                                  f"({_first_line(exc)})") from None
            except (ValueError, RuntimeError) as exc:
                raise ConfigError(f"cannot start Ray ({_first_line(exc)})") from None
            self._started = True
        self._chunk_fn = ray.remote(max_retries=self.max_retries, num_cpus=1)(run_pair_chunk)

    def cluster_cpus(self) -> int:
        return max(1, int(self._ray.cluster_resources().get("CPU", 1)))

    def _chunks(self, n: int) -> int:
        if self.chunk_size is not None:
            return int(self.chunk_size)
        return max(1, min(8, math.ceil(n / (4 * self.cluster_cpus()))))

    def run_pairs(self, tasks: Sequence[Any], scenario: Any, record: Callable[[Any, dict, dict], None],
                  errors: list[BaseException], bar: Any) -> None:
        from ddl_gym.harness.episodes import _annotate

        ray = self._ray
        if not tasks:
            return
        bundle = bundle_scenario(tasks[0].scenario, scenario, [t.policy for t in tasks])
        bundle_ref = ray.put(bundle)
        size = self._chunks(len(tasks))
        chunks = [list(tasks[i:i + size]) for i in range(0, len(tasks), size)]
        attempts = [0] * len(chunks)
        pending: dict[Any, int] = {}

        def submit(i: int, subset: list[Any] | None = None) -> None:
            if subset is not None:
                chunks[i] = subset
            attempts[i] += 1
            pending[self._chunk_fn.remote(bundle_ref, chunks[i])] = i

        for i in range(len(chunks)):
            submit(i)
        ok = False
        try:
            while pending:
                ready, _ = ray.wait(list(pending), num_returns=1, timeout=1.0)
                for ref in ready:
                    i = pending.pop(ref)
                    try:
                        outcomes = ray.get(ref)
                    except Exception as exc:  # worker/node died beyond Ray's own retries, or the task was lost
                        if attempts[i] <= self.max_retries:
                            submit(i)
                            continue
                        for task in chunks[i]:
                            errors.append(_report(_annotate(TaskFailed(
                                f"failed after {attempts[i]} attempt(s) on the Ray cluster: "
                                f"{type(exc).__name__}: {_first_line(exc)}"), task)))
                            bar.update(1)
                        continue
                    retry: list[Any] = []
                    for task, (status, value) in zip(chunks[i], outcomes):
                        if status == "ok":
                            record(task, *value)
                        elif status == "error" and attempts[i] <= self.max_retries:
                            retry.append(task)
                            continue
                        else:
                            exc_type = ConfigError if status == "config" else TaskFailed
                            message = value if status == "config" else (
                                f"failed after {attempts[i]} attempt(s) on a Ray worker: {value}")
                            errors.append(_report(_annotate(exc_type(message), task)))
                        bar.update(1)
                    if retry:
                        submit(i, retry)
            ok = True
        finally:
            if not ok:  # interrupted or a results file cannot be written: stop the cluster's work for us
                for ref in pending:
                    try:
                        ray.cancel(ref, force=True)
                    except Exception:
                        pass

    def map(self, fn: Callable[[Any], Any], items: Iterable[Any], *, progress: bool = False,
            desc: str | None = None) -> list[Any]:
        from tqdm.auto import tqdm

        ray = self._ray
        items = list(items)
        remote = ray.remote(max_retries=self.max_retries, num_cpus=1)(_call_reporting)
        results: list[Any] = [None] * len(items)
        attempts = [0] * len(items)
        pending: dict[Any, int] = {}

        def submit(i: int) -> None:
            attempts[i] += 1
            pending[remote.remote(fn, items[i])] = i

        bar = tqdm(total=len(items), desc=desc or getattr(fn, "__name__", "map"), disable=not progress,
                   file=sys.stderr, dynamic_ncols=True)
        ok = False
        try:
            for i in range(len(items)):
                submit(i)
            while pending:
                ready, _ = ray.wait(list(pending), num_returns=1, timeout=1.0)
                for ref in ready:
                    i = pending.pop(ref)
                    try:
                        status, value = ray.get(ref)
                    except Exception as exc:
                        status, value = "error", f"{type(exc).__name__}: {_first_line(exc)}"
                    if status == "ok":
                        results[i] = value
                        bar.update(1)
                    elif status == "config":
                        raise ConfigError(value)
                    elif attempts[i] <= self.max_retries:
                        submit(i)
                    else:
                        raise TaskFailed(f"item {i} failed after {attempts[i]} attempt(s) on the Ray cluster: {value}")
            ok = True
            return results
        finally:
            bar.close()
            if not ok:
                for ref in pending:
                    try:
                        ray.cancel(ref, force=True)
                    except Exception:
                        pass

    def close(self) -> None:
        if self._started and self._ray.is_initialized():
            self._ray.shutdown()
        self._started = False


def _probe(address: str, timeout_s: float = 5.0) -> None:
    """Fail at once, in one line, if nothing listens at ``HOST:PORT`` (Ray itself retries for minutes)."""
    import socket

    host, sep, port = address.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ConfigError(f"--ray-address {address!r}: expected auto or HOST:PORT")
    try:
        with socket.create_connection((host, int(port)), timeout=timeout_s):
            pass
    except OSError as exc:
        raise ConfigError(f"--ray-address {address}: no Ray cluster answers there ({exc.strerror or exc}); "
                          "start one with `ray start --head` or check the address") from None


def _call_reporting(fn: Callable[[Any], Any], item: Any) -> tuple[str, Any]:
    """Worker side of :meth:`RayExecutor.map`: the result, or the error as text (ConfigError kept apart)."""
    try:
        return "ok", fn(item)
    except ConfigError as exc:
        return "config", str(exc)
    except Exception as exc:
        return "error", f"{type(exc).__name__}: {_first_line(exc)}"


def _report(exc: BaseException) -> BaseException:
    """Print one line per failed task as it is given up on (the first is raised at the end)."""
    notes = " ".join(getattr(exc, "__notes__", []) or [])
    print(f"ddl-gym: task failed: {_first_line(exc)}" + (f" ({notes})" if notes else ""), file=sys.stderr)
    return exc


__all__ = ["DEFAULT_MAX_RETRIES", "EXECUTORS", "Executor", "LocalExecutor", "RayExecutor", "ScenarioBundle",
           "TaskFailed", "bundle_scenario", "make_executor", "run_pair_chunk"]
