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


class ResumeFile:
    """``<write>.partial.json``: the items a long report has finished, kept with the settings they depend on.

    An interrupted run that is started again with equal settings resumes after the kept items; a file made
    under other settings is refused (never reused), and :meth:`remove` deletes it once the report is written.
    ``write=None`` (the report is printed, not written) keeps nothing.
    """

    def __init__(self, write: str | Path | None, settings: dict[str, Any], key: str) -> None:
        self.path = Path(write).with_suffix(".partial.json") if write else None
        self.settings = settings
        self.key = key  # the list of items in the file ("rows", "tasks", ...)

    def load(self) -> list[Any]:
        """The items kept by an interrupted run with equal settings (``[]`` if none); ValueError naming the file
        when it cannot be read or was made under other settings."""
        if self.path is None or not self.path.is_file():
            return []
        try:
            stored = json.loads(self.path.read_text())
        except (OSError, ValueError):
            raise ValueError(f"{self.path} cannot be read as a partial report; delete it") from None
        if not isinstance(stored, dict) or stored.get("settings") != self.settings:
            raise ValueError(f"{self.path} was made under other settings; delete it or use another --write")
        return list(stored.get(self.key, []))

    def load_or_explain(self, prog: str) -> list[Any] | None:
        """:meth:`load`, but ``None`` after printing to stderr why the file cannot be used (a command then exits 2)."""
        import sys

        try:
            if self.path is not None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            return self.load()
        except OSError as exc:
            print(f"{prog}: --write {self.path}: {exc.strerror}", file=sys.stderr)
        except ValueError as exc:
            print(f"{prog}: {exc}", file=sys.stderr)
        return None

    def save(self, items: list[Any]) -> None:
        """Keep ``items``: written beside the file, then renamed over it, so a run killed while saving leaves
        the previous items readable (never half a file)."""
        if self.path is not None:
            from ddl_gym.harness.store import _write_text_atomic

            self.path.parent.mkdir(parents=True, exist_ok=True)
            _write_text_atomic(self.path, json.dumps({"settings": self.settings, self.key: items}, indent=1) + "\n")

    def remove(self) -> None:
        if self.path is not None and self.path.exists():
            self.path.unlink()


def emit_report(write: str | Path | None, markdown: str, data: Any, resume: ResumeFile) -> None:
    """Write the report (and its JSON) to ``write`` and delete the partial file, or print the Markdown."""
    import sys

    if write:
        doc, data_file = write_report(write, markdown, data)
        resume.remove()
        print(f"wrote {doc} and {data_file}", file=sys.stderr)
    else:
        print(markdown)
