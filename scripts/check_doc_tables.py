"""Check that no table, code block or signature of the built docs runs past the content
column (under the right-hand table of contents) or scrolls sideways, at a given width.

Needs a headless Chromium (``apt-get install chromium``); not part of the test suite.

    .venv/bin/mkdocs build --strict -d /tmp/site
    python scripts/check_doc_tables.py /tmp/site --width 1280 [--pages 'reference/*/index.html']

Prints, per page, the number of elements checked and those that overflow; exits 1 if any.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

JS = """<script>window.addEventListener('load', function(){ setTimeout(function(){
var toc=document.querySelector('.md-sidebar--secondary');
var tl=toc?toc.getBoundingClientRect().left:1e9; var out=[]; var n=0;
document.querySelectorAll('.md-content table, .md-content pre, .md-content .doc-signature')
 .forEach(function(t){ n++; var r=t.getBoundingClientRect(); var p=t.parentElement, clipped=false;
  while(p && p!==document.body){var s=getComputedStyle(p);
   if(s.overflowX=='auto'||s.overflowX=='scroll'||s.overflowX=='hidden'){
    clipped = p.getBoundingClientRect().right<=tl+1; break;} p=p.parentElement;}
  if(r.right>tl+1 && !clipped) out.push('UNDER-TOC '+t.tagName+' right='+Math.round(r.right)+
   ' toc='+Math.round(tl)+' '+(t.innerText||'').slice(0,40).replace(/\\n/g,' '));});
document.querySelectorAll('.md-typeset__scrollwrap').forEach(function(w){
 if(w.scrollWidth>w.clientWidth+1) out.push('SCROLLS '+w.scrollWidth+'>'+w.clientWidth+' '+
  (w.innerText||'').slice(0,40).replace(/\\n/g,' '));});
var pre=document.createElement('pre'); pre.id='MEASURE';
pre.textContent='CHECKED '+n+' OVER '+out.length+'\\n'+out.join('\\n');
document.body.appendChild(pre);},1500);});</script>"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("site", type=Path)
    ap.add_argument("--width", type=int, default=1280)
    ap.add_argument("--pages", default="reference/*/index.html")
    ap.add_argument("--chromium", default="chromium")
    a = ap.parse_args()
    total = 0
    for f in sorted(a.site.glob(a.pages)):
        tmp = f.with_name("_measure.html")
        tmp.write_text(f.read_text("utf-8").replace("</body>", JS + "</body>"), "utf-8")
        try:
            p = subprocess.run([a.chromium, "--headless", "--no-sandbox", "--disable-gpu",
                                f"--window-size={a.width},900", "--virtual-time-budget=8000",
                                "--dump-dom", tmp.as_uri()], capture_output=True, text=True,
                               timeout=300)
        finally:
            tmp.unlink()
        m = re.search(r'<pre id="MEASURE">(.*?)</pre>', p.stdout, re.S)
        res = m.group(1) if m else "NO RESULT (OVER 1)"
        total += int(re.search(r"OVER (\d+)", res).group(1))
        print(f.relative_to(a.site), res.replace("&gt;", ">"))
    print(f"width {a.width}px: {total} element(s) overflow")
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
