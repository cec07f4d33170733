"""The documentation site: `mkdocs build --strict` passes (a broken link or a missing page fails it),
and the built site opened in real headless Chromium shows the home page, the API page of
DDLClusterEnv and a leaderboard page with their tables (screenshots in results/docs-screenshots/)."""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SCREENSHOTS = REPO / "results" / "docs-screenshots"
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--hide-scrollbars", "--window-size=1280,1000")


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    raise AssertionError("no Chromium found: install Debian's `chromium` package (scripts/test.sh does)")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    build = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
                           cwd=REPO, capture_output=True, text=True, env=env, timeout=300)
    assert build.returncode == 0, (build.stdout + build.stderr)[-4000:]
    return out


@pytest.fixture(scope="module")
def server(site: Path) -> Iterator[str]:
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site))

    class Quiet(handler.func):  # type: ignore[name-defined,misc]
        def log_message(self, *args: object) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(site)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_site_has_every_section(site: Path) -> None:
    for page in ("index.html", "getting-started.html", "env.html", "scenarios.html", "policies.html", "training.html",
                 "evaluation.html", "performance.html", "api/envs.html", "api/policies.html",
                 "leaderboards/index.html", "leaderboards/default/index.html", "reproductions/index.html",
                 "reproductions/sjf_bco/report.html",
                 "reproductions/ada_srsf/report.html", "reproductions/a_srpt/report.html", "reproductions/smd/report.html",
                 "reproductions/a_online/report.html"):
        assert (site / page).exists(), page
    assert (site / "leaderboards" / "default" / "paired.png").exists()  # figures come along


def test_hook_leaves_broken_links_for_strict_mode() -> None:
    sys.path.insert(0, str(REPO / "docs"))
    try:
        import hooks
    finally:
        sys.path.remove(str(REPO / "docs"))
    from mkdocs.structure.files import Files

    text = "[a](../ddl_gym/harness/evaluation.py) and [b](no-such-page.md) and [c](env.md)"
    out = hooks._rewrite(text, "usage.md", None, REPO, Files([]))
    assert "a (`../ddl_gym/harness/evaluation.py`)" in out  # a repository file outside the site: named, not linked
    assert "[b](no-such-page.md)" in out and "[c](env.md)" in out  # left for mkdocs to check


@pytest.mark.parametrize(("page", "texts"), [
    ("index.html", ("DDLCluster-v0", "Getting started", "Writing your own policy")),
    ("api/envs.html", ("DDLClusterEnv", "action_for", "observation_view", "contention_aware")),
    ("leaderboards/default/index.html", ("Leaderboard", "agent-transfer", "srsf+pack", "better on")),
])
def test_pages_render_with_their_tables_in_chromium(server: str, page: str, texts: tuple[str, ...],
                                                     tmp_path: Path) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    shot = SCREENSHOTS / (page.replace("/", "_").removesuffix(".html") + ".png")
    shot.unlink(missing_ok=True)
    run = subprocess.run([_chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'profile'}",
                          f"--screenshot={shot}", "--dump-dom", f"{server}/{page}"],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    dom = run.stdout
    assert dom.count("<table") >= 1 and "<td" in dom  # the page's tables rendered as HTML tables
    for text in texts:
        assert text in dom, text
    assert shot.exists() and shot.stat().st_size > 20_000  # a rendered page, not a blank one
