"""The layout of ``sampledprv.sampled``: three layers, no import cycles.

``draws`` (random numbers, samplers) < ``histograms`` (binning, kernels, sharding) <
``certification`` (envelopes, accountant, planner): a module imports only from its own
layer or the ones below.  The static check reads every import statement of the package,
including those inside functions and ``TYPE_CHECKING`` blocks (a lazy import hides a
cycle from the interpreter, not from the design), and fails on any cycle.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import sampledprv.sampled as sampled_pkg

ROOT = Path(sampled_pkg.__file__).resolve().parent
PKG = "sampledprv.sampled"
LAYERS = ("draws", "histograms", "certification")


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = [p for p in rel.parts if p != "__init__"]
    return ".".join([PKG, *parts])


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    """``name`` (a module, or a module attribute) as a module of the package, or None."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def import_graph() -> dict[str, set[str]]:
    """``module -> modules of sampledprv.sampled it imports`` (every import statement)."""
    modules = _modules()
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for mod, path in modules.items():
        package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                    src = f"{base}.{node.module}" if node.module else base
                else:
                    src = node.module or ""
                # "from pkg import sub" imports the module pkg.sub when there is one
                targets = [f"{src}.{a.name}" for a in node.names] + [src]
            for t in targets:
                if t == PKG or t.startswith(PKG + "."):
                    dep = _resolve(t, modules)
                    if dep is not None and dep != mod:
                        graph[mod].add(dep)
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as a list of nodes (first == last), or None."""
    state: dict[str, int] = {}     # 1: on the stack, 2: done
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def _layer(mod: str) -> int | None:
    parts = mod.split(".")
    return LAYERS.index(parts[2]) if len(parts) > 2 and parts[2] in LAYERS else None


def test_cycle_finder_finds_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


def test_graph_sees_lazy_and_relative_imports():
    g = import_graph()
    # planner imports the accountant; the accountant must not import the planner back
    assert f"{PKG}.certification.accountant" in g[f"{PKG}.certification.planner"]
    assert f"{PKG}.certification.planner" not in g[f"{PKG}.certification.accountant"]
    # "from ..histograms import _numpy_histogram" is an edge to the module
    assert f"{PKG}.histograms._numpy_histogram" in g[f"{PKG}.certification.accountant"]


def test_no_import_cycle_in_sampled():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle in sampledprv.sampled: " + " -> ".join(cycle)


def test_layers_import_only_downwards():
    bad = []
    for mod, deps in import_graph().items():
        lm = _layer(mod)
        for dep in deps:
            if dep == PKG and mod != PKG:
                bad.append(f"{mod} imports the package {PKG} itself")
            ld = _layer(dep)
            if lm is not None and ld is not None and ld > lm:
                bad.append(f"{mod} ({LAYERS[lm]}) imports {dep} ({LAYERS[ld]})")
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("module", [
    f"{PKG}.draws", f"{PKG}.histograms", f"{PKG}.certification",
    f"{PKG}.certification.planner", f"{PKG}.certification.accountant",
])
def test_fresh_import(module):
    """Each sub-package (and the planner before the accountant) imports in a fresh
    interpreter; the public names stay where they were."""
    code = (f"import {module}\n"
            "import sampledprv as sp, sampledprv.sampled as s\n"
            "assert sp.SampledAccountant is s.SampledAccountant\n"
            "for n in ('LossHistogram', 'loss_histogram', 'make_rejection_sampler',\n"
            "          'AdaptiveRejectionSampler', 'LogDensityPair', 'PrivacyLossSampler',\n"
            "          'EmpiricalPRV', 'min_samples', 'plan_samples', 'validate',\n"
            "          'ValidationReport'):\n"
            "    assert getattr(s, n) is getattr(sp, n, getattr(s, n)), n\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=str(ROOT.parent.parent), timeout=300)
    assert res.returncode == 0, res.stderr
