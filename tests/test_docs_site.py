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
