"""Where the generated reports of a source checkout live (each path defined here once).

``docs/`` holds what the commands generate, never edited by hand (``docs/reports.md`` lists the
command behind every file); hand-written pages of the documentation site sit beside these folders:

* ``docs/reproductions/<paper>/`` — ``ddl-gym reproduce <paper> --report/--claims`` (report.md,
  claims.md, and claims_quick.md, which a test regenerates and compares);
* ``docs/performance/`` — ``scripts/bench*.py`` reports;
* ``docs/robustness/`` — ``scripts/hardening_battery.py``;
* ``docs/agents/`` — agent studies (``scripts/finetune_report.py``, ``scripts/ppo_unmasked_curve.py``,
  ``scripts/mcts_eval.py``).

Leaderboards stay where ``ddl-gym leaderboard`` writes them, ``leaderboard/<board>/`` (with the agents
they rank).
"""

from __future__ import annotations

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
DOCS = REPO_ROOT / "docs"
REPRODUCTIONS = DOCS / "reproductions"
PERFORMANCE = DOCS / "performance"
ROBUSTNESS = DOCS / "robustness"
AGENT_STUDIES = DOCS / "agents"
REPORTS_INDEX = DOCS / "reports.md"


def reproduction_file(paper: str, name: str) -> Path:
    """``docs/reproductions/<paper>/<name>`` (``paper`` as the package names it: ``sjf_bco``, ``a_srpt``, ...)."""
    return REPRODUCTIONS / paper / name


def relative(path: Path) -> str:
    """``path`` relative to the repository root, as help texts and reports print it."""
    return str(path.relative_to(REPO_ROOT))
