"""``ddl-gym scenarios``: list the scenarios, measure their cards (``--stats``,
:mod:`ddl_gym.scenario_stats`) or the task suite's cards (``--stats --suite``, :mod:`ddl_gym.suite_cards`).

Kept apart from both so that neither imports the other (the suite's cards use the statistics).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from ddl_gym import scenario_stats
from ddl_gym.scenario_stats import (
    DEFAULT_SCENARIOS, JOB_LEVEL_POLICIES, TASK_LEVEL_POLICIES, contention_check_line, markdown, measure,
    runs_table_iii_jobs, summarise,
)
from ddl_gym.scenarios import get_scenario
from ddl_gym.sim.model import ConfigError


def main(argv: Sequence[str] | None = None) -> int:
    """``ddl-gym scenarios --stats`` entry point; returns the exit status."""
    from ddl_gym.cliargs import OneLineParser, bounded_int, workers_type

    parser = OneLineParser(prog="ddl-gym scenarios", description=(scenario_stats.__doc__ or "").splitlines()[0])
    parser.add_argument("--stats", action="store_true",
                        help="measure utilisation, contention share, load, makespan/window (else list the scenarios)")
    parser.add_argument("--scenarios", default=",".join(DEFAULT_SCENARIOS),
                        help=f"comma-separated scenario names (default {','.join(DEFAULT_SCENARIOS)})")
    parser.add_argument("--policies", default=None,
                        help="comma-separated policies (default: per engine, "
                             f"{','.join(JOB_LEVEL_POLICIES)} / {','.join(TASK_LEVEL_POLICIES)})")
    parser.add_argument("--seeds", type=bounded_int(1, 100_000, "--seeds"), default=3, help="seeds 0..N-1 (default 3)")
    parser.add_argument("--workers", type=workers_type, default=1, help="parallel processes (default 1)")
    parser.add_argument("--suite", action="store_true",
                        help="the task suite's cards instead (ddl_gym/suite_cards.py: best reference on validation "
                             "seeds, LP headroom on test seeds); with --quick, --task, --write")
    args, rest = parser.parse_known_args(argv)
    if args.suite:
        if not args.stats:
            raise ConfigError("--suite goes with --stats (ddl-gym scenarios --stats --suite)")
        from ddl_gym.suite_cards import main as suite_main

        return suite_main([*rest, "--workers", str(max(1, args.workers))], prog="ddl-gym scenarios --stats --suite")
    if rest:
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    if not args.stats:
        from ddl_gym.scenarios import SCENARIOS, _register_paper_scenarios

        _register_paper_scenarios()
        for name, sc in sorted(SCENARIOS.items()):
            print(f"{name:<20} {sc.description}")
        print("\n`ddl-gym scenarios --stats` measures utilisation, contention share and load (see --help).")
        return 0
    if args.seeds < 1:
        raise ConfigError(f"--seeds must be >= 1, got {args.seeds}")
    names = [s.strip() for s in args.scenarios.split(",") if s.strip()]
    policies = [p.strip() for p in args.policies.split(",") if p.strip()] if args.policies else None
    from ddl_gym.workloads import aonline_load

    aonline = [n for n in names if aonline_load.is_aonline(get_scenario(n))]  # multi-resource worlds: own table
    names = [n for n in names if n not in aonline]
    if aonline:
        rows = [aonline_load.scenario_stats(get_scenario(n), range(args.seeds), policies or aonline_load.STATS_POLICIES)
                for n in aonline]
        print(f"A-Online worlds, measured by `ddl-gym scenarios --stats --seeds {args.seeds}` (seeds 0..{args.seeds - 1}; "
              f"policies {', '.join(rows[0]['policies'])}; definitions in ddl_gym/workloads/aonline_load.py; "
              "contention share 0 by construction: bandwidth is reserved per worker and PS):\n")
        print(aonline_load.stats_markdown(rows) + ("\n" if names else ""))
    if not names:
        return 0
    stats = measure(names, range(args.seeds), policies, workers=max(1, args.workers))
    summaries = summarise(stats)
    print(f"Measured by `ddl-gym scenarios --stats --seeds {args.seeds}` (seeds 0..{args.seeds - 1}); "
          "utilisation and contention as min–max over the policy means; policies: "
          + "; ".join(f"{s.scenario}: {', '.join(s.policies)}" for s in summaries) + ".\n")
    print(markdown(summaries))
    lines = [contention_check_line(sc) for sc in map(get_scenario, names) if runs_table_iii_jobs(sc)]
    if lines:
        print("\nContention check (Ada-SRSF §I):\n" + "\n".join(f"- {line}" for line in lines))
    return 0



if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
