"""The MkDocs site renders the docstrings' Sphinx markup: math typeset, roles linked."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("sphinx_roles", ROOT / "docs/hooks/sphinx_roles.py")
sphinx_roles = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sphinx_roles)

LEFTOVER = re.compile(r":(math|func|meth|class|mod|attr|data|exc|obj):|\.\. math::")


def test_convert_roles_and_math_blocks():
    doc = ("Loss :math:`\\log p/q` with\n\n.. math:: a = b_1,\n\nand a block\n\n"
           ".. math::\n\n    x^2\n    + y\n\nthen :func:`~sampledprv.engine.eps_of_delta`, "
           ":class:`Gaussian`,\n:meth:`check` and :mod:`sampledprv.sampled`.")
    out = sphinx_roles.convert(doc, lambda n: {"Gaussian": "sampledprv.mechanisms.Gaussian"}.get(n))
    assert not LEFTOVER.search(out), out
    assert "\\(\\log p/q\\)" in out
    assert "$$\na = b_1,\n$$" in out and "$$\nx^2\n+ y\n$$" in out
    assert ('<autoref identifier="sampledprv.engine.eps_of_delta" optional>'
            "<code>eps_of_delta()</code></autoref>") in out
    assert '<autoref identifier="sampledprv.mechanisms.Gaussian" optional><code>Gaussian</code>' in out
    assert '<autoref identifier="check" optional><code>check()</code>' in out
    assert out.rstrip().endswith("</autoref>.")


WARNING_LINE = re.compile(r"^\s*(WARNING|ERROR)\b|Aborted with \d+ warnings", re.M)


def build_site(dest: Path) -> subprocess.CompletedProcess:
    """``mkdocs build --strict`` into ``dest``, verbose: nothing filters the log."""
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
               NO_MKDOCS_2_WARNING="1")
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(dest)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600, env=env)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    dest = tmp_path_factory.mktemp("docs") / "site"
    p = build_site(dest)
    log = p.stdout + p.stderr
    # count the warnings ourselves: a strict build must not depend on a quiet flag
    warned = [m.group(0) for m in re.finditer(r"^.*(WARNING|ERROR).*$|^.*Aborted with.*$",
                                             log, re.M)]
    assert p.returncode == 0 and not warned, "\n".join(warned) or log[-4000:]
    assert "Documentation built" in log           # the log is really the verbose one
    return dest


def test_build_log_warnings_are_counted():
    """The check above reads a verbose log: a griffe warning line is caught."""
    log = ("INFO    -  Cleaning site directory\n"
           "WARNING -  griffe: sampledprv/x.py:3: Parameter 'The' does not appear\n")
    assert re.findall(r"^.*(WARNING|ERROR).*$", log, re.M)


def test_built_site_has_no_raw_sphinx_markup(site):
    pages = sorted(site.rglob("*.html"))
    ref = [f for f in pages if "reference" in f.parts]
    assert len(ref) >= 5
    left = [f"{f.relative_to(site)}: {m.group(0)}" for f in pages
            for m in LEFTOVER.finditer(f.read_text(encoding="utf-8"))]
    assert not left, left[:20]
    text = "".join(f.read_text(encoding="utf-8") for f in ref)
    assert text.count('class="arithmatex"') >= 30          # docstring math is typeset
    assert "<autoref" not in text                          # every reference was processed
    assert re.search(r'<a class="autorefs autorefs-internal"[^>]*><code>min_samples\(\)', text)
    # numpy-style sections parsed: no prose line taken for a parameter name
    assert not re.search(r"<td>\s*<code>(The|Python|A|An)</code>", text)
    assert "no matching lower bound" in (site / "reference/rdp/index.html").read_text("utf-8")


def test_mathjax_is_served_by_the_site(site):
    """Formulas render offline: every page loads MathJax from a file inside the site."""
    pages = sorted(site.rglob("*.html"))
    with_math = [f for f in pages if 'class="arithmatex"' in f.read_text(encoding="utf-8")]
    assert len(with_math) >= 5
    for f in pages:
        html = f.read_text(encoding="utf-8")
        srcs = re.findall(r'<script[^>]*\bsrc="([^"]+)"', html)
        mj = [s for s in srcs if "mathjax" in s.lower()]
        assert not [s for s in mj if re.match(r"(https?:)?//", s)], (f, mj)   # no CDN
        if f in with_math:
            assert mj, f"{f.relative_to(site)} loads no MathJax"
            for s in mj:
                local = (f.parent / s.split("?")[0]).resolve()
                assert local.is_file() and local.stat().st_size > 500_000, local
                assert site.resolve() in local.parents
    assert (site / "javascripts/mathjax/LICENSE").is_file()


def test_api_tables_fit_the_content_column(site):
    """The stylesheet that keeps API tables out from under the table of contents at
    1280 px is linked from every page (checked in a browser by
    scripts/check_doc_tables.py, which needs Chromium)."""
    css = (site / "stylesheets/extra.css").read_text(encoding="utf-8")
    assert "overflow-wrap: anywhere" in css and "width: 100%" in css
    for f in sorted(site.rglob("reference/*/index.html")):
        assert 'href="../../stylesheets/extra.css"' in f.read_text(encoding="utf-8"), f


def test_markdown_tables_end_with_a_blank_line():
    """A table row followed directly by prose swallows the prose into the last cell."""
    bad = []
    for f in sorted((ROOT / "docs").rglob("*.md")) + [ROOT / "README.md"]:
        lines = f.read_text(encoding="utf-8").splitlines()
        for i in range(1, len(lines)):
            if (lines[i - 1].startswith("|") and lines[i].strip()
                    and not lines[i].startswith("|")):
                bad.append(f"{f.relative_to(ROOT)}:{i + 1}: {lines[i][:60]}")
            if lines[i - 1].startswith("|") and re.search(r"\|\s*\S[^|]*$", lines[i - 1]) \
                    and not lines[i - 1].rstrip().endswith("|"):
                bad.append(f"{f.relative_to(ROOT)}:{i}: text after the last cell")
    assert not bad, bad


def test_math_uses_only_macros_mathjax_knows():
    r"""``\texttt`` is a text-mode macro MathJax's TeX input does not define in math."""
    hits = [str(f.relative_to(ROOT)) for f in (ROOT / "docs").rglob("*.md")
            if "\\texttt" in f.read_text(encoding="utf-8")]
    assert not hits, hits


# ---- offline: no request to another host, and pages render in a real browser -----------

#: attributes and CSS constructs through which a page makes the browser fetch something
_FETCHES = re.compile(r'<(?:script|img|iframe|source|audio|video|embed)\b[^>]*\bsrc="([^"]+)"'
                      r'|<link\b[^>]*\bhref="([^"]+)"|url\(\s*[\'"]?([^\'")]+)')


def _external(url: str) -> bool:
    return bool(re.match(r"(https?:)?//", url.strip()))


def test_fetch_pattern_sees_what_the_theme_used_to_load():
    """The pattern is not vacuous: the web-font links the theme printed before
    ``font: false``, a CDN script and a CSS import are all caught; a plain hyperlink
    (navigation, not a request) is not."""
    old = ('<link rel="preconnect" href="https://fonts.gstatic.com" crossorigin>'
           '<script src="https://cdn.jsdelivr.net/npm/mathjax@3"></script>'
           '<style>@import url("https://fonts.googleapis.com/css?family=Roboto")</style>'
           '<a href="https://example.org/paper">paper</a>')
    hits = [u for m in _FETCHES.finditer(old) for u in m.groups() if u]
    assert [u for u in hits if _external(u)] == [
        "https://fonts.gstatic.com", "https://cdn.jsdelivr.net/npm/mathjax@3",
        "https://fonts.googleapis.com/css?family=Roboto"]


def test_site_requests_nothing_from_another_host(site):
    """Issue 32: the docs work fully offline.  No page or stylesheet of the built site
    loads a resource from another host (web fonts, CDN scripts, images), and no page has
    the theme's repository widget, whose script asks the code host's API for stats."""
    bad = []
    files = sorted(site.rglob("*.html")) + sorted(site.rglob("*.css"))
    assert len(files) > 20
    for f in files:
        text = f.read_text(encoding="utf-8", errors="replace")
        for m in _FETCHES.finditer(text):
            url = next(u for u in m.groups() if u)
            if _external(url):
                bad.append(f"{f.relative_to(site)}: {url}")
        if 'data-md-component="source"' in text:
            bad.append(f"{f.relative_to(site)}: repository widget (fetches repository stats)")
    assert not bad, "\n".join(bad[:20])


def _chromium() -> "str | None":
    import shutil
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


@pytest.fixture(scope="module")
def served(site):
    """The built site on a localhost HTTP server that records every request's path and
    status."""
    import functools
    import http.server
    import threading
    log: list[tuple[str, int]] = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def log_request(self, code="-", size="-"):
            log.append((self.path, int(code) if str(code).isdigit() else 0))

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Handler, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", log
    finally:
        server.shutdown()


def _render(url: str, tmp_path: Path) -> str:
    """The DOM of ``url`` after its scripts ran, from headless Chromium with no network:
    every host name but 127.0.0.1 fails to resolve."""
    exe = _chromium()
    if exe is None:
        pytest.skip("no Chromium on this machine: install Debian's 'chromium' package "
                    "(.ci/run does) to render the docs in a real browser")
    cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
           "--no-first-run", "--disable-background-networking", "--disable-component-update",
           "--disable-sync", f"--user-data-dir={tmp_path / 'profile'}",
           "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
           "--virtual-time-budget=30000", "--dump-dom", url]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    assert out.returncode == 0 and "<html" in out.stdout, out.stderr[-3000:]
    return out.stdout


def test_formulas_render_as_mathjax_output_in_a_browser(site, served, tmp_path):
    """A page with formulas, in a real browser with no network: every formula the site
    marked for MathJax came out as MathJax's output (``mjx-container``), none is left as
    raw TeX."""
    base, _ = served
    page = "concepts/"
    static = (site / page / "index.html").read_text(encoding="utf-8")
    marked = static.count('class="arithmatex"')
    assert marked >= 10
    dom = _render(f"{base}/{page}", tmp_path)
    rendered = len(re.findall(r"<mjx-container\b", dom))
    assert rendered >= marked, f"{rendered} MathJax outputs for {marked} formulas"
    raw = re.findall(r'<span class="arithmatex">\s*\\\(', dom)
    assert not raw, f"{len(raw)} formulas left as raw TeX"
    assert not re.search(r"<g\b[^>]*data-mml-node=\"merror\"", dom), "MathJax reported a TeX error"


def test_plots_load_in_a_browser(site, served, tmp_path):
    """A page with plots, in a real browser: each image the page shows was requested from
    the site and served (status 200), and is a PNG."""
    base, log = served
    page = "howto/plots/"
    static = (site / page / "index.html").read_text(encoding="utf-8")
    images = re.findall(r'<img\b[^>]*\bsrc="([^"]+\.png)"', static)
    assert len(images) >= 2
    start = len(log)
    dom = _render(f"{base}/{page}", tmp_path)
    assert "<img" in dom
    got = {p: code for p, code in log[start:]}
    for src in images:
        path = "/" + str(Path(page, src)).replace("\\", "/")
        path = os.path.normpath(path)
        assert got.get(path) == 200, (src, path, sorted(got))
        assert (site / path.lstrip("/")).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
