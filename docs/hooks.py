"""MkDocs hook: pages generated from the repository's committed reports (never edited by hand).

* ``leaderboard/**/README.md`` (+ figures) -> ``leaderboards/<board>/index.md``, and a generated
  ``leaderboards/index.md`` table (from each board's ``results.csv``).
* the reproduction reports ``docs/reproductions/<paper>/*.md`` and the benchmark reports
  ``docs/performance/bench_*.md`` (written there by their commands, ``docs/reports.md``) are served as
  they are and listed in the nav.

A page that already exists under ``docs/`` is used as it is: nothing is generated over it. The discovered pages are appended to the nav sections "Reproductions",
"Leaderboards" and "Performance reports", so a new report joins the site without editing
``mkdocs.yml``. Links in any page to repository files outside the site (source files, other
folders) become code spans naming the file, so ``mkdocs build --strict`` fails only on links that
are really broken.
"""

from __future__ import annotations

import csv
import posixpath
import re
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

_LINK = re.compile(r"(?<!!)\[([^\]\n]+)\]\(([^)\s]+)\)")
_IMAGE = re.compile(r"!\[([^\]\n]*)\]\(([^)\s]+)\)")
_FIGURES = (".png", ".svg", ".jpg")
_PAPER_TITLES = {"sjf_bco": "SJF-BCO (Yu et al. 2022)", "ada_srsf": "Ada-SRSF (Wang et al. 2020)",
                 "a_srpt": "A-SRPT (Luo et al.)", "smd": "SMD (Yu et al. INFOCOM'21)",
                 "a_online": "A-Online (Zhou et al.)"}


def _root(config: Any) -> Path:
    return Path(config["config_file_path"]).resolve().parent


def _discover(root: Path) -> dict[str, Path]:
    """site path -> repository file, for every generated page and figure."""
    out: dict[str, Path] = {}
    board_root = root / "leaderboard"
    for readme in sorted(board_root.glob("**/README.md")):
        rel = readme.parent.relative_to(board_root).as_posix()
        base = f"leaderboards/{rel}" if rel != "." else "leaderboards/about"
        out[f"{base}/index.md"] = readme
        for fig in sorted(readme.parent.iterdir()):
            if fig.suffix in _FIGURES:
                out[f"{base}/{fig.name}"] = fig
    # The generated reports live under docs/ (ddl_gym/report_paths.py): listed here so that each joins
    # its nav section; mkdocs serves the files themselves.
    reproductions = root / "docs" / "reproductions"
    for folder in sorted(p for p in reproductions.iterdir() if p.is_dir()) if reproductions.is_dir() else []:
        for md in sorted(folder.glob("*.md")):
            out[f"reproductions/{folder.name}/{md.name}"] = md
    performance = root / "docs" / "performance"
    for md in sorted(performance.glob("bench_*.md")) if performance.is_dir() else []:
        out[f"performance/{md.name}"] = md
    return out


def _title(text: str, fallback: str) -> str:
    for line in text.splitlines():
        if line.startswith("# "):
            return line[2:].strip().strip("`")
    return fallback


def _board_index(root: Path, boards: list[str]) -> str:
    lines = ["# Leaderboards", "",
             "Generated from `leaderboard/*/results.csv` (rebuild: `ddl-gym leaderboard --rebuild`). Each board "
             "ranks learned agents and reference policies on held-out seeds; the change column is the paired "
             "per-seed change against the board's best reference, mean ± 95% CI.", "",
             "| board | ranked by | best reference (chosen on selection seeds) | its mean | best agent | "
             "agent vs best reference, paired | better on |",
             "|---|---|---|---:|---|---:|---:|"]
    for board in boards:
        path = root / "leaderboard" / board / "results.csv"
        if not path.exists():
            continue
        with path.open(newline="") as fh:
            rows = list(csv.DictReader(fh))
        agents = [r for r in rows if r.get("kind") == "agent"]
        best = rows[0].get("vs_best_reference", "") if rows else ""
        metric = rows[0].get("metric", "") if rows else ""
        best_row = next((r for r in rows if r.get("policy") == best), {})
        mean = best_row.get(f"{metric}_mean", "")
        mean_text = f"{float(mean):,.6g}" if mean not in ("", None) else "–"
        head = f"| [{board}]({board}/index.md) | {metric} | {best} | {mean_text} |"
        if agents:
            a = agents[0]
            change = f"{float(a['change_pct']):+.2f}% ± {float(a['change_ci95_pct'] or 0):.2f}%"
            lines.append(f"{head} {a['policy']} | {change} | {a['seeds_better']}/{a['seeds']} |")
        else:
            lines.append(f"{head} – | – | – |")
    return "\n".join(lines) + "\n"


def _reproduction_index(found: dict[str, Path]) -> str:
    papers: dict[str, list[str]] = {}
    for uri in sorted(found):
        if uri.startswith("reproductions/") and uri.endswith(".md"):
            papers.setdefault(uri.split("/")[1], []).append(uri)
    lines = ["# Reproductions", "",
             "One page per paper: our numbers beside the paper's, with verdicts from one stated rule "
             "(`ddl_gym/reproduce/verdict.py`). Generated by `ddl-gym reproduce PAPER` (commands in "
             "[the list of generated reports](../reports.md)); the quick claims tables are regenerated and compared by the tests.", "",
             "| paper | report | claims |", "|---|---|---|"]
    for paper, uris in papers.items():
        rel = [u.removeprefix("reproductions/") for u in uris]
        report = next((r for r in rel if r.endswith("/report.md")), None)
        claims = ", ".join(f"[{Path(r).stem.replace('_', ' ')}]({r})" for r in rel if r != report)
        title = _PAPER_TITLES.get(paper, paper)
        lines.append(f"| {title} | {f'[report]({report})' if report else '–'} | {claims or '–'} |")
    return "\n".join(lines) + "\n"


def on_config(config: Any) -> Any:
    root = _root(config)
    found = _discover(root)
    docs = Path(config["docs_dir"])
    pages = {uri: src for uri, src in found.items() if uri.endswith(".md")}
    sections: dict[str, list[Any]] = {"Reproductions": [], "Leaderboards": [], "Performance reports": []}
    def order(item: tuple[str, Path]) -> tuple[str, int, str]:
        uri = item[0]
        folder, _, name = uri.rpartition("/")
        return folder, 0 if name in ("index.md", "report.md") else 1, name

    for uri, src in sorted(pages.items(), key=order):
        text = (docs / uri).read_text() if (docs / uri).exists() else src.read_text()
        if uri.startswith("reproductions/"):
            paper = uri.split("/")[1]
            label = (_PAPER_TITLES.get(paper, paper) if uri.endswith("/report.md")
                     else f"{paper}: {_title(text, Path(uri).stem.replace('_', ' '))}")
            sections["Reproductions"].append({label: uri})
        elif uri.startswith("leaderboards/"):
            sections["Leaderboards"].append({uri.removeprefix("leaderboards/").removesuffix("/index.md"): uri})
        else:
            sections["Performance reports"].append({f"bench: {Path(uri).stem.removeprefix('bench_')}": uri})
    for item in config["nav"] or []:
        if isinstance(item, dict):
            for key, value in item.items():
                if key in sections and isinstance(value, list):
                    known = {v for entry in value for v in (entry.values() if isinstance(entry, dict) else [entry])}
                    value.extend(e for e in sections[key] if next(iter(e.values())) not in known)
    config["_ddl_generated"] = found
    return config


def on_files(files: Files, config: Any) -> Files:
    root = _root(config)
    found: dict[str, Path] = config.get("_ddl_generated") or _discover(root)
    for uri, src in found.items():
        if files.get_file_from_path(uri) is not None:
            continue  # a real page under docs/ wins
        if uri.endswith(".md"):
            files.append(File.generated(config, uri, content=src.read_text()))
        else:
            files.append(File.generated(config, uri, abs_src_path=str(src)))
    if files.get_file_from_path("reproductions/index.md") is None:
        files.append(File.generated(config, "reproductions/index.md", content=_reproduction_index(found)))
    if files.get_file_from_path("leaderboards/index.md") is None:
        boards = sorted(p.parent.name for p in (root / "leaderboard").glob("*/results.csv"))
        files.append(File.generated(config, "leaderboards/index.md", content=_board_index(root, boards)))
    config["_ddl_sources"] = {uri: src for uri, src in found.items()}
    return files


def _rewrite(markdown: str, page_uri: str, source: Path | None, root: Path, files: Files) -> str:
    """Links to files outside the site -> code spans; links between reports -> their site pages."""
    site_by_source = {}
    for f in files:
        abs_src = getattr(f, "abs_src_path", None)
        if abs_src:
            site_by_source[str(Path(abs_src).resolve())] = f.src_uri
    generated = {str(src.resolve()): uri for uri, src in _discover(root).items()}
    base_dir = source.parent if source is not None else (root / "docs" / page_uri).parent

    def target_uri(target: str) -> str | None:
        path, _, anchor = target.partition("#")
        resolved = (base_dir / path).resolve()
        uri = generated.get(str(resolved)) or site_by_source.get(str(resolved))
        if uri is None and resolved.is_dir():
            uri = generated.get(str(resolved / "README.md")) or site_by_source.get(str(resolved / "README.md"))
        if uri is None:
            return None
        rel = posixpath.relpath(uri, posixpath.dirname(page_uri) or ".")
        return rel + (f"#{anchor}" if anchor else "")

    def fix(match: re.Match[str], image: bool) -> str:
        text, target = match.group(1), match.group(2)
        if re.match(r"^[a-z]+:", target) or target.startswith("#") or target.startswith("/"):
            return match.group(0)
        uri = target_uri(target)
        if uri is not None:
            return f"{'!' if image else ''}[{text}]({uri})"
        path = target.partition("#")[0]
        if not path or not (base_dir / path).exists() or (root / "docs") in (base_dir / path).resolve().parents:
            return match.group(0)  # a broken link, or one into the site: left for mkdocs to check (--strict fails)
        if image:
            return f"*(figure `{target}` is in the repository)*"
        shown = text if text.startswith("`") else f"{text}"
        return shown if path in text else f"{shown} (`{path}`)"

    markdown = _IMAGE.sub(lambda m: fix(m, True), markdown)
    return _LINK.sub(lambda m: fix(m, False), markdown)


_SUMMARY_MARK = "<!-- generated: leaderboard-summary -->"


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    root = _root(config)
    if _SUMMARY_MARK in markdown:  # the current boards, from their results.csv (never copied by hand)
        boards = sorted(p.parent.name for p in (root / "leaderboard").glob("*/results.csv"))
        table = _board_index(root, boards).split("\n\n", 2)[2]
        table = table.replace("](", "](leaderboards/")
        markdown = markdown.replace(_SUMMARY_MARK, table.strip())
    sources: dict[str, Path] = config.get("_ddl_sources") or {}
    uri = page.file.src_uri
    source = sources.get(uri) if page.file.generated_by else None
    return _rewrite(markdown, uri, source, root, files)
