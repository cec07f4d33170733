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

import json
from pathlib import Path
from typing import Any

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


def signed_pct(x: float, ci: float | None = None) -> str:
    """``x`` (a fraction) as a signed percentage, with ``± ci`` when given: ``+6.0% ± 1.7%``."""
    return f"{100 * x:+.1f}%" + (f" ± {100 * ci:.1f}%" if ci is not None else "")


def write_report(path: str | Path, markdown: str, data: Any) -> tuple[Path, Path]:
    """Write a generated report: ``path`` (Markdown) and the JSON it was rendered from beside it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(markdown)
    path.with_suffix(".json").write_text(json.dumps(data, indent=1) + "\n")
    return path, path.with_suffix(".json")
