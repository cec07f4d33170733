"""Issue 32: every committed reproduction report CI can afford equals its regeneration byte for byte (outside the
marked timing section), and the comparison fails, naming the file and the first differing line, when a committed
report is edited by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from ddl_gym.report_paths import REPO_ROOT
from ddl_gym.reproduce import REGISTRY
from ddl_gym.reproduce.catalog import (
    BY_NAME,
    CATALOG,
    check,
    compare_text,
    content_command,
    reproducible_part,
)


def test_catalog_covers_every_committed_reproduction_file() -> None:
    committed = {str(p.relative_to(REPO_ROOT)) for p in (REPO_ROOT / "docs" / "reproductions").rglob("*.md")}
    listed = {f for e in CATALOG for f in e.files}
    assert committed <= listed, f"committed but not in the catalog: {sorted(committed - listed)}"
    assert all(e.reproduction in REGISTRY for e in CATALOG)
    assert all(e.ci for e in CATALOG if e.quick)  # every quick variant is checked


def test_timing_section_is_stripped_and_nothing_else() -> None:
    text = "a\n<!-- timing -->\n12 s\n<!-- /timing -->\nb\n## Timing (wall clock)\nx 3 s\n"
    assert reproducible_part(text) == "a\nb\n"
    assert compare_text(text, text.replace("3 s", "9 s").replace("12 s", "1 s"), "r.md") is None
    assert "r.md: line 2" in (compare_text("a\nb\n", "a\nc\n", "r.md") or "")
    assert content_command("smd", ["--quick", "--out", "x", "--workers", "2", "--no-plots", "--claims=y"]) == \
        "ddl-gym reproduce smd --quick"


def test_hand_edited_report_fails_the_check(tmp_path: Path) -> None:
    """Copy the committed quick SJF-BCO files, edit one figure in the claims, run the check: it must fail and name
    the file and the first differing line."""
    entry = BY_NAME["sjf-bco-quick"]
    root = tmp_path / "repo"
    for path in entry.files:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text((REPO_ROOT / path).read_text())
    claims = root / "docs/reproductions/sjf_bco/claims_quick.md"
    lines = claims.read_text().splitlines(keepends=True)
    i = next(k for k, line in enumerate(lines) if "| Fig. 4 | SJF-BCO outperforms RAND in makespan" in line)
    edited = lines[i].replace("held", "tie", 1) if "**held**" in lines[i] else lines[i] + "x"
    lines[i] = edited.replace("s vs", "s  vs", 1)
    claims.write_text("".join(lines))
    problems = check(entry, tmp_path / "regen", root=root)
    assert len(problems) == 1, problems
    assert problems[0].startswith(f"docs/reproductions/sjf_bco/claims_quick.md: line {i + 1} differs")


#: Entries whose regeneration another test already makes and compares, file by file (one run, not two).
CHECKED_ELSEWHERE = {"a-srpt-quick": Path("tests/reproduce/test_asrpt_reproduction.py")}


def test_entries_checked_elsewhere_are_really_checked_there() -> None:
    for name, test in CHECKED_ELSEWHERE.items():
        text = (REPO_ROOT / test).read_text()
        for path in BY_NAME[name].files:  # the other test compares every file of the entry
            assert Path(path).name in text and Path(path).parent.name in text, (name, path)


@pytest.mark.slow
@pytest.mark.parametrize("name", [e.name for e in CATALOG
                                  if e.ci and e.name != "sjf-bco-quick" and e.name not in CHECKED_ELSEWHERE])
def test_committed_report_equals_its_regeneration(name: str, tmp_path: Path) -> None:
    """``ddl-gym reproduce all --quick --check`` in one test per entry (sjf-bco-quick runs in the test above, where
    the unedited report also has to match)."""
    assert check(BY_NAME[name], tmp_path) == []
