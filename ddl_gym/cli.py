"""The ``ddl-gym`` command.

Subcommands::

    ddl-gym list                                   scenarios, policies (+ aliases), env ids, presets, agents
    ddl-gym eval --scenario S --policies a,b --seeds N|A:B|a,b --out DIR [--workload F.csv] [--workers K]
                 [--reference P]                   ... and a paired comparison against P
                 [--executor local|ray [--ray-address auto|HOST:PORT]]   ... on worker processes or Ray
    ddl-gym sweep SPEC.toml [--executor ray] [--shard i/n]  scenarios × policies × seeds, resumable
    ddl-gym compare --out DIR --reference P        per-seed paired differences with 95% CIs
    ddl-gym demo [--out DIR] [--no-train]          teacher, an agent cloned from it now, the shipped agent
    ddl-gym leaderboard [--rebuild] [--scenario S] leaderboard/<scenario>/ (results, README, plots)
    ddl-gym bench [--quick] [--json PATH]          simulator / env speed figures (source checkout)
    ddl-gym reproduce sjf-bco|ada-srsf [ARGS...]   a paper's headline comparison
    ddl-gym scenarios [--stats ...]                utilisation, contention, load per scenario
    ddl-gym train [ARGS...]                        train an agent (needs the RL extra)
    ddl-gym --version

Seeds and workers are given the same way everywhere (:mod:`ddl_gym.cliargs`): ``--seeds N`` (the
first N), ``--seeds A:B`` (A..B-1) or ``--seeds a,b,c``; ``--seed S`` where one process is seeded
(``train``); ``--workers K`` for parallel processes.

Every misuse — bad option or number, unknown name, unreadable input, unwritable output, a file of
the wrong kind — prints one line ``ddl-gym: error: <message>`` on stderr and exits with status 2;
results already written stay. SIGTERM and Ctrl-C stop the run (exit 143 / 130) and its worker
processes. An unexpected internal error prints one line and exits 1 (``DDL_GYM_TRACEBACK=1`` shows
the traceback).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.util
import os
import signal
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, NoReturn

from ddl_gym.cliargs import OneLineParser, UsageError, seed_list_type, seeds_type, workers_type
from ddl_gym.extras import install_hint
from ddl_gym.reproduce import REPRODUCTIONS  # name -> module; the registry is ddl_gym/reproduce/__init__.py
from ddl_gym.sim.model import ConfigError

PROG = "ddl-gym"
REPO_ROOT = Path(__file__).resolve().parents[1]

#: Reference policies shown by ``ddl-gym demo`` besides the teacher (those that fail to build are skipped).
DEMO_POLICIES: tuple[str, ...] = ("sjf+pack", "srsf+pack", "fifo+pack")
#: The shipped agent (short name in ``ddl-gym list``), shown in the demo next to the one trained there.
DEMO_SHIPPED_AGENT: str | None = "agent-transfer"
#: Held-out evaluation seeds of the demo start here (agent training uses other seeds).
DEMO_SEED_OFFSET = 1000



_UsageError = UsageError  # one-line error, exit status 2
_Parser = OneLineParser  # argparse with one-line errors (``ddl-gym: error: ...``) instead of usage + message


@contextlib.contextmanager
def _one_line_argparse_errors() -> Iterator[None]:
    """Forwarded commands build their own argparse parsers: make their errors one line too."""
    original = argparse.ArgumentParser.error

    def error(self: argparse.ArgumentParser, message: str) -> NoReturn:
        raise _UsageError(f"{message} (see `{self.prog} --help`)")

    argparse.ArgumentParser.error = error  # type: ignore[method-assign]
    try:
        yield
    finally:
        argparse.ArgumentParser.error = original  # type: ignore[method-assign]


# ============================================================================ helpers
def _split_names(text: str) -> list[str]:
    from ddl_gym.harness import split_policy_list

    names = split_policy_list(text)
    if not names:
        raise _UsageError("--policies is empty; give comma-separated policy names (see `ddl-gym list`)")
    return names


def _leaderboard_agents() -> list[Path]:
    found: dict[Path, None] = {}
    for root in (REPO_ROOT, Path.cwd()):
        for path in sorted([*(root / "leaderboard").glob("*/agents/*.zip"), *(root / "leaderboard").glob("agents/*.zip")]):
            found[path.resolve()] = None
    return list(found)


def _shown_path(path: Path) -> Path:
    try:
        return path.relative_to(Path.cwd())
    except ValueError:
        return path


def _agent_spec(path: Path) -> str:
    stem = path.stem.lower()
    algo = next((a for a in ("maskable-ppo", "ppo") if stem.startswith(a)), "maskable-ppo")
    return f"{algo}:{_shown_path(path)}"


def _print_rows(rows: Sequence[tuple[str, str]], indent: str = "  ") -> None:
    width = max((len(name) for name, _ in rows), default=0)
    for name, desc in rows:
        print(f"{indent}{name:<{width}}  {desc}".rstrip())


def _import_optional(module: str, what: str) -> Any:
    """Import ``module``; a missing module of ours or a missing dependency becomes a _UsageError."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        missing = getattr(exc, "name", "") or ""
        if missing.startswith("ddl_gym"):
            raise _UsageError(f"{what} is not available in this installation ({missing} is missing)") from None
        raise _UsageError(f"{what} needs {missing or 'an optional dependency'}: {install_hint(missing)}") from None


def _run_forwarded(module: Any, argv: list[str], what: str) -> int:
    """Call ``module.main(argv)``; a dependency it imports late and lacks becomes a one-line error."""
    try:
        with _one_line_argparse_errors():
            return _exit_code(module.main(argv))
    except ImportError as exc:
        missing = getattr(exc, "name", "") or str(exc)
        raise _UsageError(f"{what} needs {missing}: {install_hint(getattr(exc, 'name', None))}") from None


def _exit_code(value: Any) -> int:
    if value is None or value is True:
        return 0
    if value is False:
        return 1
    if isinstance(value, str):  # sys.exit("message")
        print(value, file=sys.stderr)
        return 1
    return int(value)


def _check_out_folder(path: Path, option: str = "--out") -> Path:
    """An output folder that exists or can be created (one-line error otherwise)."""
    if path.exists() and not path.is_dir():
        raise _UsageError(f"{option} {path}: exists and is not a folder")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _UsageError(f"{option} {path}: cannot create the folder ({exc.strerror or exc})") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise _UsageError(f"{option} {path}: the folder is not writable")
    return path


def _env_ids() -> list[tuple[str, str]]:
    """Registered Gymnasium ids of this package with the kwargs they preset."""
    import gymnasium as gym

    import ddl_gym  # noqa: F401  (registers the ids)

    rows = []
    for env_id, spec in sorted(gym.registry.items()):
        entry = spec.entry_point if isinstance(spec.entry_point, str) else ""
        if entry.startswith("ddl_gym."):
            kwargs = ", ".join(f"{k}={v!r}" for k, v in sorted(spec.kwargs.items())) or "defaults"
            limit = f"; max_episode_steps={spec.max_episode_steps}" if spec.max_episode_steps else ""
            rows.append((env_id, f"{entry.rsplit(':', 1)[-1]}({kwargs}){limit}"))
    return rows


def _training_presets() -> list[tuple[str, str]]:
    folder = REPO_ROOT / "agents" / "presets"
    if not folder.is_dir():
        try:
            import ddl_gym.agents as agents_pkg

            folder = Path(agents_pkg.__file__).with_name("presets")
        except ImportError:
            return []
    rows = []
    for path in sorted(folder.glob("*.yaml")):
        lines = path.read_text().splitlines()
        described = [line.split(":", 1)[1].strip().strip("'\"") for line in lines if line.startswith("description:")]
        comment = [line.lstrip("# ").strip() for line in lines if line.startswith("#") and line.lstrip("# ").strip()]
        rows.append((path.stem, (described or comment or [""])[0]))
    return rows


# ============================================================================ subcommands
def cmd_list(args: argparse.Namespace) -> int:
    from ddl_gym import scenarios as scenario_module
    from ddl_gym.policies import POLICY_DESCRIPTIONS
    from ddl_gym.policies import POLICY_ALIASES

    register = getattr(scenario_module, "_register_paper_scenarios", None)
    if callable(register):
        register()
    from ddl_gym.workloads.tracedata import needs_line, source_needs

    print("Scenarios (--scenario NAME, or a .toml/.json scenario file):")
    rows = []
    for name, sc in sorted(scenario_module.SCENARIOS.items()):
        needs = source_needs(sc.workload)
        rows.append((name, sc.description + "".join(f" -- {needs_line(k, short=True)}" for k in needs)))
    _print_rows(rows)
    print("\nPolicies (--policies NAME,NAME,...; NAME[+PLACEMENT][:key=value,...], see ddl_gym.policies):")
    _print_rows(sorted(POLICY_DESCRIPTIONS.items()))
    print("\nOld names still accepted (alias -> canonical):")
    aliases = sorted(POLICY_ALIASES.items())
    for i in range(0, len(aliases), 4):
        print("  " + "   ".join(f"{a} -> {c}" for a, c in aliases[i:i + 4]))
    print("  placements: first_fit -> ff, least_loaded -> ls, random -> rand, contention_aware -> ca, bestfit -> pack")
    print("\nGymnasium env ids (gym.make(\"ddl_gym:ID\")):")
    _print_rows(_env_ids())
    presets = _training_presets()
    if presets:
        print("\nTraining presets (ddl-gym train --preset NAME):")
        _print_rows(presets)
    from ddl_gym.agents.shipped import SHIPPED_AGENTS

    shipped = {str(a.file.resolve()) for a in SHIPPED_AGENTS.values()}
    print("\nShipped agents (--policies NAME):")
    _print_rows([(name, a.description) for name, a in SHIPPED_AGENTS.items() if a.file.exists()]
                or [("(none)", "agent files missing from leaderboard/agents/")])
    agents = [p for p in _leaderboard_agents() if str(p) not in shipped]
    if agents:
        print("\nOther agents (--policies KIND:PATH, KIND = maskable-ppo or ppo):")
        _print_rows([(_agent_spec(p), f"leaderboard scenario {p.parent.parent.name}") for p in agents])
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    from ddl_gym.harness import compare, evaluate, policy_label
    from ddl_gym.harness.report import _slug

    policies = _split_names(args.policies)
    if args.seed_list is not None and _seeds_given(args):
        raise _UsageError("--seeds and --seed-list both name the seeds; give one (--seeds a,b,c)")
    if args.metrics is not None and not args.reference:
        raise _UsageError("--metrics chooses the metrics of the paired comparison; it needs --reference POLICY")
    if args.drop_oversized and args.workload is None:
        raise _UsageError("--drop-oversized applies to a --workload file; without --workload it would be ignored")
    if "" not in sys.path and os.getcwd() not in sys.path:  # `module:Class` specs import from here too
        sys.path.insert(0, os.getcwd())
    seeds = args.seed_list if args.seed_list is not None else args.seeds
    if args.reference and policy_label(args.reference) not in {policy_label(p) for p in policies}:
        policies.append(args.reference)  # the comparison needs the reference's rows
    out = Path(args.out) if args.out else Path("results") / Path(args.scenario).stem
    _check_out_folder(out)
    if args.ray_address is not None and args.executor != "ray":
        raise _UsageError("--ray-address needs --executor ray")
    if args.workload is not None and not Path(args.workload).exists():
        raise _UsageError(f"--workload {args.workload}: file not found")
    results = evaluate(
        policies, args.scenario, seeds, out, workers=args.workers, workload_csv=args.workload,
        drop_oversized=args.drop_oversized,
        progress=not args.no_progress, debug=args.debug, overwrite=args.overwrite, plots=not args.no_plots,
        echo=True, executor=args.executor, ray_address=args.ray_address, formats=args.format,
    )
    if results.stale:
        print(f"\n(recomputed {results.stale} run(s) whose scenario, policy, agent file or code changed)")
    if results.reused:
        print(f"\n(reused {results.reused} run(s) already in {out} with identical inputs; --overwrite recomputes them)")
    if args.reference:
        _, table = compare(out, args.reference, _metrics(args.metrics or _DEFAULT_PAIRED_METRICS),
                           formats=() if args.no_plots else args.format)
        print(f"\nPaired against {policy_label(args.reference)} (per seed):\n\n{table}")
        if not args.no_plots:
            results.files += [out / f"paired_{_slug(policy_label(args.reference))}.{fmt}" for fmt in args.format]
    print(f"\nwrote {out}/: " + ", ".join(p.name for p in results.files))
    return 0


def _formats(text: str) -> tuple[str, ...]:
    from ddl_gym.paired_plot import parse_formats

    try:
        return parse_formats(text)
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("--format ")) from None


def _metrics(text: str) -> list[str]:
    metrics = [m.strip() for m in text.split(",") if m.strip()]
    if not metrics:
        raise _UsageError("--metrics is empty")
    return metrics


def cmd_compare(args: argparse.Namespace) -> int:
    from ddl_gym.harness import compare, policy_label

    out = Path(args.out)
    if not out.is_dir():
        raise _UsageError(f"--out {out}: no such results folder")
    _, table = compare(out, args.reference, _metrics(args.metrics), write=not args.no_write, formats=args.format)
    print(f"Paired comparison against {policy_label(args.reference)} ({out}):\n\n{table}")
    if not args.no_write:
        from ddl_gym.harness.report import _slug

        stem = f"paired_{_slug(policy_label(args.reference))}"
        shown = args.format[0] if len(args.format) == 1 else "{" + ",".join(args.format) + "}"
        print(f"\nwrote {out}/{stem}.csv, .md and the paired-difference figure {stem}.{shown}")
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from ddl_gym import demo
    from ddl_gym.policies import make_policy

    out = _check_out_folder(Path(args.out))
    others: list[str] = []
    for name in DEMO_POLICIES:
        try:
            make_policy(name)
        except ConfigError as exc:
            print(f"note: skipping {name}: {exc}", file=sys.stderr)
        else:
            others.append(name)
    shipped = None
    if DEMO_SHIPPED_AGENT is not None:
        try:  # the shipped agent is a registry name; it needs the RL extra and its files
            make_policy(DEMO_SHIPPED_AGENT)
        except (ConfigError, ImportError) as exc:
            print(f"note: the shipped agent is not shown ({_first_line(exc)})", file=sys.stderr)
        else:
            shipped = DEMO_SHIPPED_AGENT
    return demo.run(out, args.seeds, train=not args.no_train, shipped=shipped, others=others,
                    workers=args.workers, progress=not args.no_progress)


def _load_bench() -> Any:
    path = REPO_ROOT / "scripts" / "bench.py"
    if not path.exists():
        raise _UsageError("bench is only available from a source checkout (scripts/bench.py not found)")
    spec = importlib.util.spec_from_file_location("ddl_gym_bench_script", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def cmd_bench(argv: list[str]) -> int:
    return _run_forwarded(_load_bench(), argv, "bench")


def cmd_reproduce(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(f"usage: {PROG} reproduce {{{','.join(REPRODUCTIONS)},all}} [ARGS...]\n\n"
              "Reproduce a paper's headline comparison; ARGS go to the reproduction script "
              f"(`{PROG} reproduce sjf-bco --help`). `{PROG} reproduce all [--quick|--full] [--check]` "
              "regenerates every committed report (ddl_gym/reproduce/catalog.py).")
        return 0
    target, rest = argv[0], argv[1:]
    if target == "all":
        return _run_forwarded(_import_optional("ddl_gym.reproduce.catalog", "reproduce all"), rest, "reproduce all")
    if target not in REPRODUCTIONS:
        raise _UsageError(f"unknown reproduction {target!r}; choose one of {', '.join(REPRODUCTIONS)}")
    module = _import_optional(REPRODUCTIONS[target], f"reproduction {target!r}")
    return _run_forwarded(module, rest, f"reproduction {target!r}")


def cmd_scenarios(argv: list[str]) -> int:
    from ddl_gym import scenarios_command

    return _run_forwarded(scenarios_command, argv, "scenarios")


def cmd_train(argv: list[str]) -> int:
    module = _import_optional("ddl_gym.agents.train", "training")
    return _run_forwarded(module, argv, "training")


# ============================================================================ parser & main
def _version() -> str:
    from ddl_gym.harness import git_sha, package_version

    sha = git_sha()
    return f"{PROG} {package_version()}" + (f" (git {sha})" if sha else "")


#: The default value objects of --seeds (argparse keeps a non-string default as is, so identity tells
#: an explicit --seeds from the default).
_SEED_DEFAULTS: list[object] = []


def _seeds_given(args: argparse.Namespace) -> bool:
    return not any(args.seeds is d for d in _SEED_DEFAULTS)


_DEFAULT_PAIRED_METRICS = "avg_jct_s,makespan_s,p95_jct_s"


def _add_seeds(parser: argparse.ArgumentParser, default: str, offset: int = 0) -> None:
    first = f"{offset}..{offset}+N-1" if offset else "0..N-1"
    default_value = seeds_type(offset)(default)
    _SEED_DEFAULTS.append(default_value)
    parser.add_argument("--seeds", type=seeds_type(offset), default=default_value, metavar="N|A:B|a,b,c",
                        help=f"N = seeds {first}; A:B = seeds A..B-1; a,b,c = these seeds (default {default})")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=PROG, description="ddl-gym: schedule distributed deep-learning jobs on a simulated GPU cluster.",
        epilog="Seeds: --seeds N | A:B | a,b,c everywhere; workers: --workers K. Errors exit with status 2.",
    )
    parser.add_argument("--version", action="version", version=_version())
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.add_parser("list", help="list scenarios, policies (with aliases), env ids, training presets and agents")

    ev = sub.add_parser("eval", help="evaluate policies/agents on a scenario over seeds")
    ev.add_argument("--scenario", default="default", help="scenario name or .toml/.json file (default: default)")
    ev.add_argument("--policies", required=True, help="comma-separated policy specs or agents KIND:PATH")
    _add_seeds(ev, "5")
    ev.add_argument("--seed-list", type=seed_list_type, help=argparse.SUPPRESS)  # old spelling of --seeds a,b,c
    ev.add_argument("--out", help="results folder (default results/<scenario>)")
    ev.add_argument("--workload", help="workload CSV replacing the scenario's workload")
    ev.add_argument("--drop-oversized", action="store_true",
                    help="drop workload jobs needing more GPUs than the cluster (counted warning) instead of failing")
    ev.add_argument("--workers", type=workers_type, help="parallel processes (default: min(cores, runs))")
    ev.add_argument("--executor", choices=("local", "ray"), default="local",
                    help="local worker processes (default) or Ray tasks (needs the ray extra)")
    ev.add_argument("--ray-address", metavar="auto|HOST:PORT",
                    help="with --executor ray: join this cluster (default: start a local one)")
    ev.add_argument("--reference", help="also print per-seed paired differences against this policy")
    ev.add_argument("--metrics", default=None,
                    help="metrics of the paired comparison (with --reference)")
    ev.add_argument("--debug", action="store_true", help="check simulator invariants at every event (slow)")
    ev.add_argument("--overwrite", action="store_true", help="recompute runs already in --out")
    ev.add_argument("--no-plots", action="store_true", help="skip the figures")
    ev.add_argument("--format", type=_formats, default=("png",), metavar="png,svg,pdf",
                    help="figure formats (default png)")
    ev.add_argument("--no-progress", action="store_true", help="no progress bar")

    cmp_ = sub.add_parser("compare", help="per-seed paired differences against a reference policy, with 95%% CIs")
    cmp_.add_argument("--out", required=True, help="results folder written by `ddl-gym eval`")
    cmp_.add_argument("--reference", required=True, help="the policy every other policy is compared with")
    cmp_.add_argument("--metrics", default="avg_jct_s,makespan_s,p95_jct_s", help="comma-separated summary columns")
    cmp_.add_argument("--no-write", action="store_true",
                      help="only print; do not write paired_<reference>.csv/.md and its figure")
    cmp_.add_argument("--format", type=_formats, default=("png",), metavar="png,svg,pdf",
                      help="formats of the paired-difference figure (default png)")

    demo = sub.add_parser("demo", help="the shipped agent, an agent cloned from srsf+ca now, and its teacher")
    demo.add_argument("--out", default="results/demo", help="results folder (default results/demo)")
    demo.add_argument("--no-train", action="store_true", help="skip training (reference policies and shipped agent)")
    _add_seeds(demo, "10", DEMO_SEED_OFFSET)
    demo.add_argument("--workers", type=workers_type, help="parallel processes")
    demo.add_argument("--no-progress", action="store_true", help="no progress bar")

    # Forwarded commands: their own parsers read the arguments (listed here for --help).
    sub.add_parser("bench", help="speed figures: env steps/s, simulated jobs/s (--quick, --json PATH)",
                   add_help=False)
    sub.add_parser("reproduce", help="reproduce a paper's comparison: " + " | ".join(REPRODUCTIONS), add_help=False)
    sub.add_parser("scenarios", help="scenarios; --stats measures utilisation, contention, load (see --help)",
                   add_help=False)
    sub.add_parser("train", help="train an agent (RL extra); arguments go to ddl_gym.agents.train",
                   add_help=False)
    sub.add_parser("leaderboard", help="rebuild leaderboard/<scenario>/ (--rebuild; see --help)", add_help=False)
    sub.add_parser("sweep", help="a grid of scenarios × policies × seeds from a spec file, local or on Ray "
                   "(see --help)", add_help=False)
    return parser


def cmd_sweep(argv: list[str]) -> int:
    from ddl_gym import sweep

    with _one_line_argparse_errors():
        return _exit_code(sweep.main(argv))


def cmd_leaderboard(argv: list[str]) -> int:
    from ddl_gym import leaderboard

    with _one_line_argparse_errors():
        return _exit_code(leaderboard.main(argv))


FORWARDED: dict[str, Callable[[list[str]], int]] = {
    "bench": cmd_bench, "reproduce": cmd_reproduce, "train": cmd_train, "scenarios": cmd_scenarios,
    "leaderboard": cmd_leaderboard, "sweep": cmd_sweep,
}


class _Terminated(BaseException):
    """Raised by the SIGTERM handler so that ``finally`` blocks (worker shutdown) run."""


def _on_sigterm(signum: int, frame: Any) -> None:
    raise _Terminated()


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``ddl-gym`` command; returns the exit status."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    previous = None
    if threading_is_main():
        previous = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        if args_list and args_list[0] in FORWARDED:
            return FORWARDED[args_list[0]](args_list[1:])
        parser = build_parser()
        args = parser.parse_args(args_list)
        if args.command is None:
            parser.print_help()
            return 0
        handlers = {"list": cmd_list, "eval": cmd_eval, "demo": cmd_demo, "compare": cmd_compare}
        return handlers[args.command](args)
    except SystemExit as exc:  # --help / --version (and sys.exit in a forwarded command)
        return _exit_code(exc.code)
    except (ConfigError, _UsageError) as exc:
        print(f"{PROG}: error: {_first_line(exc)}", file=sys.stderr)
        return 2
    except OSError as exc:  # unreadable input, unwritable output, disk full: name the file, no traceback
        message = exc.strerror or _first_line(exc)
        if exc.filename and str(exc.filename) not in message:
            message = f"{exc.filename}: {message}"
        print(f"{PROG}: error: {message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted (results written so far are kept)", file=sys.stderr)
        return 130
    except _Terminated:
        print(f"{PROG}: terminated (results written so far are kept)", file=sys.stderr)
        return 143
    except RecursionError as exc:
        print(f"{PROG}: error: input nested too deeply ({_first_line(exc)})", file=sys.stderr)
        return 2
    except Exception as exc:  # a bug: one line by default, the traceback on request
        if os.environ.get("DDL_GYM_TRACEBACK"):
            raise
        print(f"{PROG}: internal error: {type(exc).__name__}: {_first_line(exc)} "
              "(please report it; DDL_GYM_TRACEBACK=1 shows the traceback)", file=sys.stderr)
        return 1
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def threading_is_main() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()


if __name__ == "__main__":
    sys.exit(main())
