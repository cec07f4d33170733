"""The ``ddl-gym`` command.

Subcommands::

    ddl-gym list                                   scenarios, policies and shipped agents
    ddl-gym eval --scenario S --policies a,b --seeds N --out DIR [--workload F.csv] [--workers K]
    ddl-gym demo [--out DIR] [--timesteps N]       reference policies vs. a briefly trained agent
    ddl-gym bench [--quick] [--json PATH]          simulator / env speed figures (source checkout)
    ddl-gym reproduce sjf-bco|ada-srsf [ARGS...]   a paper's headline comparison
    ddl-gym scenarios [--stats ...]                utilisation, contention, load per scenario
    ddl-gym train [ARGS...]                        train an agent (needs the RL extra)

Bad input (unknown names, missing or invalid scenario / workload files) prints one line
``ddl-gym: error: <message>`` on stderr and exits with status 2; results already written stay.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ddl_gym.reproduce import REPRODUCTIONS  # name -> module; the registry is ddl_gym/reproduce/__init__.py
from ddl_gym.sim.model import ConfigError

PROG = "ddl-gym"
REPO_ROOT = Path(__file__).resolve().parents[1]

#: Reference policies compared by ``ddl-gym demo`` (those that fail to build are skipped).
DEMO_POLICIES: tuple[str, ...] = (
    "fifo+pack", "fifo+ff", "sjf+pack", "srsf+pack", "srsf+ca", "srsf+ls", "sjf-bco",
)
#: The leaderboard's fully trained agent, shown in the demo next to the briefly trained one.
DEMO_SHIPPED_AGENT: Path | None = REPO_ROOT / "leaderboard" / "default" / "agents" / "maskable-ppo-default.zip"
#: Held-out evaluation seeds of the demo start here (agent training uses other seeds).
DEMO_SEED_OFFSET = 1000

RL_HINT = "install the RL extra: pip install 'ddl-gym[rl]'"


class _UsageError(Exception):
    """A command-line problem reported as one line, exit status 2."""


# ============================================================================ helpers
def _seed_list(args: argparse.Namespace, offset: int = 0) -> list[int]:
    if getattr(args, "seed_list", None):
        try:
            return [int(s) for s in args.seed_list.split(",") if s.strip()]
        except ValueError:
            raise _UsageError(f"--seed-list must be comma-separated integers, got {args.seed_list!r}") from None
    if args.seeds < 1:
        raise _UsageError(f"--seeds must be >= 1, got {args.seeds}")
    return list(range(offset, offset + args.seeds))


def _split_names(text: str) -> list[str]:
    from ddl_gym.harness import split_policy_list

    names = split_policy_list(text)
    if not names:
        raise _UsageError("--policies is empty")
    return names


def _leaderboard_agents() -> list[Path]:
    found: dict[Path, None] = {}
    for root in (REPO_ROOT, Path.cwd()):
        for path in sorted((root / "leaderboard").glob("*/agents/*.zip")):
            found[path.resolve()] = None
    return list(found)


def _agent_spec(path: Path) -> str:
    stem = path.stem.lower()
    algo = next((a for a in ("maskable-ppo", "ppo", "a2c", "dqn") if stem.startswith(a)), "maskable-ppo")
    try:
        shown = path.relative_to(Path.cwd())
    except ValueError:
        shown = path
    return f"{algo}:{shown}"


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
        raise _UsageError(f"{what} needs {missing or 'an optional dependency'}: {RL_HINT}") from None


def _run_forwarded(module: Any, argv: list[str], what: str) -> int:
    """Call ``module.main(argv)``; a dependency it imports late and lacks becomes a one-line error."""
    try:
        return _exit_code(module.main(argv))
    except ImportError as exc:
        missing = getattr(exc, "name", "") or str(exc)
        raise _UsageError(f"{what} needs {missing}: {RL_HINT}") from None


def _exit_code(value: Any) -> int:
    if value is None or value is True:
        return 0
    if value is False:
        return 1
    return int(value)


# ============================================================================ subcommands
def cmd_list(args: argparse.Namespace) -> int:
    from ddl_gym import scenarios as scenario_module
    from ddl_gym.baselines import POLICY_DESCRIPTIONS

    register = getattr(scenario_module, "_register_paper_scenarios", None)
    if callable(register):
        register()
    print("Scenarios (--scenario NAME, or a .toml/.json scenario file):")
    _print_rows([(name, sc.description) for name, sc in sorted(scenario_module.SCENARIOS.items())])
    print("\nPolicies (--policies NAME,NAME,...):")
    _print_rows(sorted(POLICY_DESCRIPTIONS.items()))
    agents = _leaderboard_agents()
    print("\nAgents (--policies NAME:PATH):")
    if agents:
        _print_rows([(_agent_spec(p), f"leaderboard scenario {p.parent.parent.name}") for p in agents])
    else:
        print("  none shipped in leaderboard/*/agents/; train one with `ddl-gym train` or `ddl-gym demo`")
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    from ddl_gym.harness import evaluate

    policies = _split_names(args.policies)
    seeds = _seed_list(args)
    out = Path(args.out) if args.out else Path("results") / Path(args.scenario).stem
    results = evaluate(
        policies, args.scenario, seeds, out, workers=args.workers, workload_csv=args.workload,
        drop_oversized=args.drop_oversized,
        progress=not args.no_progress, debug=args.debug, overwrite=args.overwrite, plots=not args.no_plots,
        echo=True,
    )
    if results.reused:
        print(f"\n(reused {results.reused} run(s) already in {out}; --overwrite recomputes them)")
    print(f"\nwrote {out}/: " + ", ".join(p.name for p in results.files))
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from ddl_gym.baselines import make_policy
    from ddl_gym.harness import evaluate

    out = Path(args.out)
    seeds = list(range(DEMO_SEED_OFFSET, DEMO_SEED_OFFSET + args.seeds))
    policies: list[str] = []
    for name in DEMO_POLICIES:
        try:
            make_policy(name)
        except ConfigError as exc:
            print(f"note: skipping {name}: {exc}", file=sys.stderr)
        else:
            policies.append(name)
    agent_spec: str | None = None
    if args.timesteps > 0:
        try:
            train = importlib.import_module("ddl_gym.agents.train")
            quick_train = train.quick_train
        except (ImportError, AttributeError) as exc:
            print(f"note: no agent in this demo (agents unavailable: {exc}; {RL_HINT})", file=sys.stderr)
        else:
            print(f"training MaskablePPO on scenario 'default': cloning sjf+ca, then {args.timesteps} PPO steps ...",
                  file=sys.stderr)
            try:
                agent_spec = quick_train(scenario="default", timesteps=args.timesteps, out=out / "agent",
                                         preset="demo", bc_expert="sjf+ca")
            except (ImportError, ConfigError) as exc:  # the reference policies are still worth showing
                print(f"note: no agent in this demo (training failed: {exc})", file=sys.stderr)
    shipped = DEMO_SHIPPED_AGENT
    if shipped is not None and shipped.exists():  # the leaderboard's fully trained agent, evaluated without training
        policies.append(f"maskable-ppo:{shipped.relative_to(Path.cwd()) if shipped.is_relative_to(Path.cwd()) else shipped}")
    print(f"evaluating {len(policies) + (agent_spec is not None)} policies on scenario 'default', "
          f"held-out seeds {seeds[0]}-{seeds[-1]} ...", file=sys.stderr)
    # The demo owns its folder: recompute its rows so a retrained agent is never shown with stale numbers.
    results = evaluate(policies + ([agent_spec] if agent_spec else []), "default", seeds, out, workers=args.workers,
                       progress=not args.no_progress, overwrite=True, echo=False)
    print(results.markdown)
    print(f"\nwrote {out}/: summary.csv, jobs.csv, summary.md, jct_cdf.png, metrics.png, gantt_*.png")
    return 0


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
    return _exit_code(_load_bench().main(argv))


def cmd_reproduce(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(f"usage: {PROG} reproduce {{{','.join(REPRODUCTIONS)}}} [ARGS...]\n\n"
              "Reproduce a paper's headline comparison; ARGS go to the reproduction script "
              f"(`{PROG} reproduce sjf-bco --help`).")
        return 0
    target, rest = argv[0], argv[1:]
    if target not in REPRODUCTIONS:
        raise _UsageError(f"unknown reproduction {target!r}; choose one of {', '.join(REPRODUCTIONS)}")
    module = _import_optional(REPRODUCTIONS[target], f"reproduction {target!r}")
    return _run_forwarded(module, rest, f"reproduction {target!r}")


def cmd_scenarios(argv: list[str]) -> int:
    from ddl_gym import scenario_stats

    return _exit_code(scenario_stats.main(argv))


def cmd_train(argv: list[str]) -> int:
    module = _import_optional("ddl_gym.agents.train", "training")
    return _run_forwarded(module, argv, "training")


# ============================================================================ parser & main
def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG, description="ddl-gym: schedule distributed deep-learning jobs on a simulated GPU cluster.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.add_parser("list", help="list scenarios, policies and shipped agents")

    ev = sub.add_parser("eval", help="evaluate policies/agents on a scenario over seeds")
    ev.add_argument("--scenario", default="default", help="scenario name or .toml/.json file (default: default)")
    ev.add_argument("--policies", required=True, help="comma-separated policy names or agent specs NAME:PATH")
    group = ev.add_mutually_exclusive_group()
    group.add_argument("--seeds", type=int, default=5, help="evaluate seeds 0..N-1 (default 5)")
    group.add_argument("--seed-list", help="comma-separated seeds, e.g. 0,1,7")
    ev.add_argument("--out", help="results folder (default results/<scenario>)")
    ev.add_argument("--workload", help="workload CSV replacing the scenario's workload")
    ev.add_argument("--drop-oversized", action="store_true",
                    help="drop workload jobs needing more GPUs than the cluster (counted warning) instead of failing")
    ev.add_argument("--workers", type=int, help="parallel processes (default: min(cores, runs))")
    ev.add_argument("--debug", action="store_true", help="check simulator invariants at every event (slow)")
    ev.add_argument("--overwrite", action="store_true", help="recompute runs already in --out")
    ev.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    ev.add_argument("--no-progress", action="store_true", help="no progress bar")

    demo = sub.add_parser("demo", help="reference policies vs. a briefly trained MaskablePPO agent")
    demo.add_argument("--out", default="results/demo", help="results folder (default results/demo)")
    demo.add_argument("--timesteps", type=int, default=50_000,
                      help="agent training steps (default 50000; 0 = no agent)")
    demo.add_argument("--seeds", type=int, default=5, help=f"evaluation seeds {DEMO_SEED_OFFSET}.. (default 5)")
    demo.add_argument("--workers", type=int, help="parallel processes")
    demo.add_argument("--no-progress", action="store_true", help="no progress bar")

    # Forwarded commands: their own parsers read the arguments (listed here for --help).
    sub.add_parser("bench", help="speed figures: env steps/s, simulated jobs/s (--quick, --json PATH)",
                   add_help=False)
    sub.add_parser("reproduce", help="reproduce a paper's comparison: " + " | ".join(REPRODUCTIONS), add_help=False)
    sub.add_parser("scenarios", help="scenarios; --stats measures utilisation, contention, load (see --help)",
                   add_help=False)
    sub.add_parser("train", help="train an agent (RL extra); arguments go to ddl_gym.agents.train",
                   add_help=False)
    return parser


FORWARDED: dict[str, Callable[[list[str]], int]] = {
    "bench": cmd_bench, "reproduce": cmd_reproduce, "train": cmd_train, "scenarios": cmd_scenarios,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``ddl-gym`` command; returns the exit status."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    try:
        if args_list and args_list[0] in FORWARDED:
            return FORWARDED[args_list[0]](args_list[1:])
        parser = build_parser()
        args = parser.parse_args(args_list)
        if args.command is None:
            parser.print_help()
            return 0
        if args.command == "demo" and args.seeds < 1:
            raise _UsageError(f"--seeds must be >= 1, got {args.seeds}")
        handlers = {"list": cmd_list, "eval": cmd_eval, "demo": cmd_demo}
        return handlers[args.command](args)
    except (ConfigError, _UsageError, FileNotFoundError) as exc:
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        if isinstance(exc, FileNotFoundError) and exc.filename and str(exc.filename) not in message:
            message = f"{exc.filename}: {message}"
        print(f"{PROG}: error: {message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted (results written so far are kept)", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
