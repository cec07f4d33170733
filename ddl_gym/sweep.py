"""``ddl-gym sweep SPEC.toml``: a grid of scenarios × policies × seeds on the local or the Ray executor.

A sweep spec is a TOML file::

    scenarios = ["default", "my-cluster.toml",              # names, or files relative to this spec
                 { scenario = "small", workload = "jobs.csv", drop_oversized = false }]
    policies = ["fifo+pack", "srsf+pack", "sjf-bco"]        # registry names or agents KIND:PATH
    seeds = 50                                              # N (0..N-1), "A:B" (A..B-1) or [a, b, c]
    out = "results/grid"                                    # optional (default results/<spec stem>),
                                                            # relative to the current folder
    executor = "local"                                      # optional: "local" or "ray" (--executor wins)
    ray_address = "auto"                                    # optional, with executor = "ray"
    workers = 2                                             # optional, local executor
    reference = "srsf+pack"                                 # optional: one of the policies; adds the
                                                            # aggregate across scenarios (IQM, bootstrap
                                                            # CIs, P(improvement); ddl_gym/aggregate.py)

Each scenario gets its own results folder ``<out>/<scenario>/`` written by
:func:`ddl_gym.harness.evaluate` (the folder lock, appends as rows arrive, the content cache: a rerun
recomputes only rows that are missing or whose ``cache_key`` changed), and the grid gets one
combined table, ``<out>/sweep_summary.csv`` and ``<out>/sweep_summary.md`` (mean ± 95% CI over seeds;
with ``reference`` and two or more scenarios, also the rliable-style aggregate of every policy against
the reference across scenarios: interquartile mean of per-seed scores, stratified bootstrap CIs and
the probability of improvement).

``--shard i/n`` (0 ≤ i < n) runs every n-th seed starting at the i-th (all scenarios, all policies)
into ``<out>/shard-<i>-of-<n>/<scenario>/``, so n batch jobs without a shared file system each write
their own folder; ``--merge`` (after copying the shard folders under ``<out>``) builds the combined
table from every shard without running anything.

Every problem with the spec is one line naming the file and the key (``grid.toml: seeds: ...``); the
file's contents are never echoed.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ddl_gym.sim.model import ConfigError

SPEC_KEYS: tuple[str, ...] = ("scenarios", "policies", "seeds", "out", "executor", "ray_address", "workers",
                              "reference")
SCENARIO_ENTRY_KEYS: tuple[str, ...] = ("scenario", "workload", "drop_oversized")
COMBINED_CSV = "sweep_summary.csv"
COMBINED_MD = "sweep_summary.md"
#: Largest sweep spec read (a spec is a few lists; anything bigger is the wrong file).
MAX_SPEC_BYTES = 1_000_000


@dataclass(frozen=True)
class ScenarioEntry:
    """One scenario of the grid: a name or file, optionally with a workload CSV replacing its jobs."""

    scenario: str
    workload: str | None = None
    drop_oversized: bool = False


@dataclass
class SweepSpec:
    """A validated sweep spec (:func:`load_spec`)."""

    path: Path
    scenarios: list[ScenarioEntry]
    policies: list[str]
    seeds: list[int]
    out: Path
    executor: str = "local"
    ray_address: str | None = None
    workers: int | None = None
    reference: str | None = None  # the policy the cross-scenario aggregate compares against
    resolved: list[Any] = field(default_factory=list)  # the Scenario of each entry (workload applied)


def _err(path: Path, key: str, message: str) -> ConfigError:
    return ConfigError(f"{path}: {key}: {message}")


def _type_name(value: Any) -> str:
    return {str: "a string", int: "an integer", float: "a number", bool: "a boolean", list: "a list",
            dict: "a table"}.get(type(value), type(value).__name__)


def _seeds(path: Path, value: Any) -> list[int]:
    from ddl_gym.cliargs import UsageError, parse_seeds
    from ddl_gym.harness.evaluation import _as_seed_list

    try:
        if isinstance(value, bool):
            raise ConfigError(f"must be N, \"A:B\" or a list of integers, got {_type_name(value)}")
        if isinstance(value, str):
            return _as_seed_list(parse_seeds(value))
        if isinstance(value, (int, list)):
            return _as_seed_list(value)
        raise ConfigError(f"must be N, \"A:B\" or a list of integers, got {_type_name(value)}")
    except (ConfigError, UsageError, ValueError, argparse.ArgumentTypeError) as exc:
        raise _err(path, "seeds", str(exc).splitlines()[0]) from None


def _relative(spec_path: Path, text: str) -> str:
    """A file named in the spec, relative to the spec's folder (registered names stay names)."""
    from ddl_gym.scenarios import SCENARIOS

    if text in SCENARIOS:
        return text
    p = Path(text)
    return str(p if p.is_absolute() else spec_path.parent / p)


def load_spec(path: str | Path, *, check: bool = True) -> SweepSpec:
    """Read and validate a sweep spec; with ``check`` also load every scenario and policy.

    Raises:
        ConfigError: one line ``<file>: <key>: <problem>``.
    """
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]

    path = Path(path)
    try:
        if path.is_dir():
            raise ConfigError(f"{path}: is a folder, not a sweep spec (.toml)")
        size = path.stat().st_size
        if size > MAX_SPEC_BYTES:
            raise ConfigError(f"{path}: {size:,} bytes is too large for a sweep spec")
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ConfigError(f"{path}: sweep spec not found") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read sweep spec ({exc.strerror or exc})") from None
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {str(exc).splitlines()[0]}") from None
    except RecursionError:
        raise ConfigError(f"{path}: nested too deeply to be a sweep spec") from None

    for key in data:
        if key not in SPEC_KEYS:
            import difflib

            near = difflib.get_close_matches(key, SPEC_KEYS, n=1)
            hint = f"did you mean {near[0]!r}? " if near else ""
            raise _err(path, key, f"unknown key; {hint}keys allowed: {', '.join(SPEC_KEYS)}")
    for key in ("scenarios", "policies", "seeds"):
        if key not in data:
            raise _err(path, key, "required")

    scenarios_raw = data["scenarios"]
    if not isinstance(scenarios_raw, list) or not scenarios_raw:
        raise _err(path, "scenarios", f"must be a non-empty list, got {_type_name(scenarios_raw)}")
    scenarios: list[ScenarioEntry] = []
    for i, item in enumerate(scenarios_raw):
        where = f"scenarios[{i}]"
        if isinstance(item, str) and item.strip():
            scenarios.append(ScenarioEntry(_relative(path, item.strip())))
            continue
        if not isinstance(item, dict):
            raise _err(path, where, f"must be a scenario name/file or a table, got {_type_name(item)}")
        for key in item:
            if key not in SCENARIO_ENTRY_KEYS:
                raise _err(path, f"{where}.{key}", f"unknown key; keys allowed: {', '.join(SCENARIO_ENTRY_KEYS)}")
        name = item.get("scenario")
        if not isinstance(name, str) or not name.strip():
            raise _err(path, f"{where}.scenario", "required: a scenario name or file")
        workload = item.get("workload")
        if workload is not None and (not isinstance(workload, str) or not workload.strip()):
            raise _err(path, f"{where}.workload", f"must be a CSV file name, got {_type_name(workload)}")
        drop = item.get("drop_oversized", False)
        if not isinstance(drop, bool):
            raise _err(path, f"{where}.drop_oversized", f"must be true or false, got {_type_name(drop)}")
        wl = None if workload is None else str(Path(workload) if Path(workload).is_absolute()
                                               else path.parent / workload)
        scenarios.append(ScenarioEntry(_relative(path, name.strip()), wl, drop))

    policies_raw = data["policies"]
    if not isinstance(policies_raw, list) or not policies_raw:
        raise _err(path, "policies", f"must be a non-empty list of policy specs, got {_type_name(policies_raw)}")
    policies: list[str] = []
    for i, item in enumerate(policies_raw):
        if not isinstance(item, str) or not item.strip():
            raise _err(path, f"policies[{i}]", f"must be a policy spec (string), got {_type_name(item)}")
        policies.append(item.strip())

    seeds = _seeds(path, data["seeds"])

    out = data.get("out", str(Path("results") / path.stem))
    if not isinstance(out, str) or not out.strip():
        raise _err(path, "out", f"must be a folder name, got {_type_name(out)}")
    executor = data.get("executor", "local")
    from ddl_gym.executors import EXECUTORS

    if executor not in EXECUTORS:
        raise _err(path, "executor", f"must be one of {', '.join(EXECUTORS)}")
    ray_address = data.get("ray_address")
    if ray_address is not None and (not isinstance(ray_address, str) or not ray_address.strip()):
        raise _err(path, "ray_address", "must be \"auto\" or \"HOST:PORT\"")
    workers = data.get("workers")
    if workers is not None:
        from ddl_gym.harness import MAX_WORKERS

        if isinstance(workers, bool) or not isinstance(workers, int) or not 1 <= workers <= MAX_WORKERS:
            raise _err(path, "workers", f"must be an integer in [1, {MAX_WORKERS}]")

    reference = data.get("reference")
    if reference is not None:
        if not isinstance(reference, str) or not reference.strip():
            raise _err(path, "reference", f"must be a policy spec (string), got {_type_name(reference)}")
        reference = reference.strip()
        if reference not in policies:
            raise _err(path, "reference", "must be one of the spec's policies (it is compared on the same seeds)")

    spec = SweepSpec(path=path, scenarios=scenarios, policies=policies, seeds=seeds, out=Path(out),
                     executor=executor, ray_address=ray_address, workers=workers, reference=reference)
    if check:
        _check_entries(spec)
    return spec


def _check_entries(spec: SweepSpec) -> None:
    """Load every scenario and policy now, so a typo fails before anything runs (naming the spec key)."""
    from ddl_gym.harness import load_policy_spec, resolve_scenario

    spec.resolved = []
    for i, entry in enumerate(spec.scenarios):
        where = f"scenarios[{i}]" + (".workload" if entry.workload else "")
        if entry.workload is not None and not Path(entry.workload).is_file():
            raise _err(spec.path, where, f"workload CSV {entry.workload} not found")
        try:
            resolved = resolve_scenario(entry.scenario, entry.workload, entry.drop_oversized)
            resolved.episode(spec.seeds[0])
        except ConfigError as exc:
            raise _err(spec.path, f"scenarios[{i}]", str(exc).splitlines()[0]) from None
        spec.resolved.append(resolved)
    names = [s.name for s in spec.resolved]
    for name in names:
        if names.count(name) > 1:
            raise _err(spec.path, "scenarios", f"scenario {name!r} appears twice (its rows would mix)")
    for i, policy in enumerate(spec.policies):
        try:
            load_policy_spec(policy)
        except ConfigError as exc:
            raise _err(spec.path, f"policies[{i}]", str(exc).splitlines()[0]) from None


def parse_shard(text: str) -> tuple[int, int]:
    """``"i/n"`` -> ``(i, n)`` with ``0 <= i < n``."""
    from ddl_gym.cliargs import UsageError

    i_text, sep, n_text = text.partition("/")
    try:
        i, n = int(i_text), int(n_text)
    except ValueError:
        raise UsageError(f"--shard {text!r}: expected i/n with integers, e.g. 0/4") from None
    if not sep or n < 1 or not 0 <= i < n or n > 100_000:
        raise UsageError(f"--shard {text!r}: expected i/n with 0 <= i < n (e.g. 0/4 ... 3/4)")
    return i, n


def _slug(text: str) -> str:
    keep = [c if c.isalnum() or c in "-_.@" else "_" for c in text]
    return "".join(keep).strip("_") or "scenario"


@dataclass
class SweepOutcome:
    """What :func:`run_sweep` did: rows computed and reused per scenario, and the combined table."""

    computed: dict[str, int] = field(default_factory=dict)
    reused: dict[str, int] = field(default_factory=dict)
    stale: dict[str, int] = field(default_factory=dict)
    folders: dict[str, Path] = field(default_factory=dict)
    combined: Path | None = None


def run_sweep(spec: SweepSpec, *, executor: Any = None, ray_address: str | None = None, workers: int | None = None,
              shard: tuple[int, int] | None = None, out: Path | None = None, progress: bool = True,
              overwrite: bool = False, plots: bool = False) -> SweepOutcome:
    """Run the grid (or one shard of it) and write the combined table (not for a shard).

    ``executor`` / ``ray_address`` / ``workers`` override the spec's. A pair that fails does not stop
    the others; the first failure is raised after every folder and the combined table are written.
    """
    from ddl_gym.executors import make_executor
    from ddl_gym.harness import evaluate

    kind = executor or spec.executor
    if kind != "ray" and spec.ray_address is not None and ray_address is None:
        raise ConfigError(f"{spec.path}: ray_address: applies only to the ray executor, and this sweep runs on "
                          f"'{kind}'; remove it or use executor = \"ray\" (--executor ray)")
    address = ray_address if ray_address is not None else (spec.ray_address if kind == "ray" else None)
    n_workers = workers if workers is not None else spec.workers
    if kind == "ray" and address is not None:
        if n_workers is not None:
            raise ConfigError(f"{spec.path if workers is None else '--workers'}: workers: a Ray cluster's size is "
                              "its own; workers applies to the local executor (or a local Ray started here)")
        n_workers = None
    root = out or spec.out
    seeds = spec.seeds
    base = root
    if shard is not None:
        i, n = shard
        seeds = seeds[i::n]
        base = root / f"shard-{i}-of-{n}"
        if not seeds:
            raise ConfigError(f"--shard {i}/{n}: no seed falls in this shard ({len(spec.seeds)} seeds)")
    if not spec.resolved:
        _check_entries(spec)
    outcome = SweepOutcome()
    errors: list[BaseException] = []
    with make_executor(kind, workers=n_workers, ray_address=address) as runner:
        for entry, resolved in zip(spec.scenarios, spec.resolved):
            folder = base / _slug(resolved.name)
            try:
                results = evaluate(spec.policies, entry.scenario, seeds, folder, workload_csv=entry.workload,
                                   drop_oversized=entry.drop_oversized, progress=progress, overwrite=overwrite,
                                   plots=plots, echo=False, executor=runner, workers=n_workers)
            except ConfigError as exc:
                if "another ddl-gym run" in str(exc) or "cannot write" in str(exc):
                    raise
                errors.append(exc)
                continue
            except Exception as exc:  # a pair's failure: the other scenarios still run
                errors.append(exc)
                continue
            outcome.folders[resolved.name] = folder
            outcome.reused[resolved.name] = results.reused
            outcome.stale[resolved.name] = results.stale
            outcome.computed[resolved.name] = len(results.summary) - results.reused
    if shard is None:
        outcome.combined = write_combined(spec, root)
    if errors:
        raise errors[0]
    return outcome


def _wanted(spec: SweepSpec) -> set[tuple[str, str, int]]:
    from ddl_gym.harness import policy_label

    return {(s.name, policy_label(p), seed) for s in spec.resolved for p in spec.policies for seed in spec.seeds}


def write_combined(spec: SweepSpec, root: Path) -> Path:
    """``<root>/sweep_summary.csv`` (+ ``.md``): the grid's rows from every scenario and shard folder."""
    import pandas as pd

    from ddl_gym.harness import SUMMARY_COLUMNS, markdown_table, read_results
    from ddl_gym.harness.store import _canonical, _sort_summary, _write_csv_atomic, _write_text_atomic

    if not spec.resolved:
        _check_entries(spec)
    frames = []
    folders = [root] + sorted(p for p in root.glob("shard-*-of-*") if p.is_dir()) if root.is_dir() else []
    for base in folders:
        for resolved in spec.resolved:
            folder = base / _slug(resolved.name)
            if (folder / "summary.csv").is_file():
                summary, _ = read_results(folder)
                frames.append(summary)
    frames = [f for f in frames if not f.empty]
    combined = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=list(SUMMARY_COLUMNS))
    wanted = _wanted(spec)
    if len(combined):
        keys = list(zip(combined["scenario"], combined["policy"], combined["seed"].astype(int)))
        combined = combined[[k in wanted for k in keys]]
        combined = combined.drop_duplicates(subset=["scenario", "policy", "seed"], keep="last")
    combined = _sort_summary(_canonical(combined.copy(), SUMMARY_COLUMNS))
    root.mkdir(parents=True, exist_ok=True)
    _write_csv_atomic(combined, root / COMBINED_CSV)
    missing = len(wanted) - len(combined)
    lines = [f"# Sweep {spec.path.name}", "",
             f"{len(spec.resolved)} scenario(s) × {len(spec.policies)} policies × {len(spec.seeds)} seeds: "
             f"{len(combined)} of {len(wanted)} runs present" + (f" ({missing} missing)." if missing else "."),
             "Cells are mean ± half-width of the 95% confidence interval over seeds (Student t).", "",
             markdown_table(combined) if len(combined) else "(no results)", ""]
    if spec.reference is not None and len(combined) and combined["scenario"].nunique() >= 2:
        from ddl_gym.aggregate import aggregate_across_tasks, aggregate_markdown
        from ddl_gym.harness import policy_label

        table = aggregate_across_tasks(combined, policy_label(spec.reference), "avg_jct_s")
        lines += [f"## Across the {combined['scenario'].nunique()} scenarios (avg JCT)", "", aggregate_markdown(table), ""]
    _write_text_atomic(root / COMBINED_MD, "\n".join(lines))
    return root / COMBINED_CSV


def build_parser() -> argparse.ArgumentParser:
    from ddl_gym.cliargs import OneLineParser, workers_type
    from ddl_gym.executors import EXECUTORS

    parser = OneLineParser(prog="ddl-gym sweep", description="Run a grid of scenarios × policies × seeds (see "
                           "ddl_gym/sweep.py for the spec format); resumable: a rerun computes only missing rows.")
    parser.add_argument("spec", help="sweep spec (.toml)")
    parser.add_argument("--out", help="results root (default: the spec's out, else results/<spec stem>)")
    parser.add_argument("--executor", choices=EXECUTORS, help="where runs execute (default: the spec's, else local)")
    parser.add_argument("--ray-address", metavar="auto|HOST:PORT",
                        help="join this Ray cluster (with --executor ray; default: start a local one)")
    parser.add_argument("--workers", type=workers_type, help="local processes, or CPUs of a Ray cluster started here")
    parser.add_argument("--shard", help="run shard i of n (0 <= i < n): every n-th seed from the i-th, "
                        "into <out>/shard-i-of-n/")
    parser.add_argument("--merge", action="store_true", help="only (re)build the combined table from <out>")
    parser.add_argument("--overwrite", action="store_true", help="recompute runs already present")
    parser.add_argument("--plots", action="store_true", help="also draw each scenario folder's plots")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    return parser


def main(argv: Sequence[str]) -> int:
    """``ddl-gym sweep``; errors propagate to the ``ddl-gym`` command (one line, exit 2)."""
    from ddl_gym.cliargs import UsageError

    args = build_parser().parse_args(list(argv))
    shard = parse_shard(args.shard) if args.shard else None
    if args.merge and shard is not None:
        raise UsageError("--merge builds the table from every shard; leave out --shard")
    if args.ray_address and (args.executor or "") != "ray":
        spec_kind = load_spec(args.spec, check=False).executor
        if args.executor == "local" or spec_kind != "ray":
            raise UsageError("--ray-address needs --executor ray")
    spec = load_spec(args.spec)
    out = Path(args.out) if args.out else None
    if args.merge:
        path = write_combined(spec, out or spec.out)
        print(f"wrote {path} and {path.with_suffix('.md').name}")
        return 0
    outcome = run_sweep(spec, executor=args.executor, ray_address=args.ray_address, workers=args.workers,
                        shard=shard, out=out, progress=not args.no_progress, overwrite=args.overwrite,
                        plots=args.plots)
    for name, folder in outcome.folders.items():
        print(f"{name}: computed {outcome.computed[name]}, reused {outcome.reused[name]}"
              + (f" (recomputed {outcome.stale[name]} stale)" if outcome.stale.get(name) else "") + f" -> {folder}/")
    total = sum(outcome.computed.values())
    print(f"sweep: computed {total}, reused {sum(outcome.reused.values())}"
          + (f"; combined table {outcome.combined}" if outcome.combined else ""))
    sys.stdout.flush()
    return 0
