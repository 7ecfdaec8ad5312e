"""The family registry holds one record per family, whatever was imported first.

Each check runs in a fresh interpreter, so that nothing imported before it (by another
test, or by pytest's collection) decides what the registry knows.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(code: str) -> str:
    res = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                         text=True, cwd=str(ROOT), timeout=300)
    assert res.returncode == 0, res.stderr
    return res.stdout.strip()


def test_batch_families_are_listed_before_sampledprv_batch_is_imported():
    out = _run("""
        import sys
        from sampledprv.mechanisms import registry
        names = [f.name for f in registry.families()]
        assert "random_allocation" in names and "matrix_mechanism" in names, names
        assert "balls-and-bins" in registry.cli_kinds(), sorted(registry.cli_kinds())
        assert registry.cli_aliases()["dp-ftrl"] == "bandmf"
        print("ok")
    """)
    assert out == "ok"


def test_a_batch_family_is_found_by_name_and_kind_before_its_import():
    out = _run("""
        import sys
        from sampledprv.mechanisms import registry
        assert "sampledprv.batch" not in sys.modules
        # one kind, not the whole list: only the module that registers it is imported
        kind = registry.cli_kind("bnb")
        assert kind is not None and kind.name == "balls-and-bins"
        assert "sampledprv.batch.random_allocation" in sys.modules
        assert registry.family("matrix_mechanism").name == "matrix_mechanism"
        assert registry.cli_kind("gaussian").name == "gaussian"
        assert registry.cli_kind("no-such-kind") is None
        print("ok")
    """)
    assert out == "ok"


def test_import_order_does_not_matter():
    """The contract test's imports in the other order (the command line, then the batch
    package), and the batch package alone first: the same families and kinds."""
    first = _run("""
        import sampledprv.cli
        from sampledprv.mechanisms import registry
        a = [f.name for f in registry.families()]
        import sampledprv.batch
        b = [f.name for f in registry.families()]
        assert a == b, (a, b)
        print(sorted(a), sorted(registry.cli_kinds()))
    """)
    second = _run("""
        import sampledprv.batch
        import sampledprv.cli
        from sampledprv.mechanisms import registry
        print(sorted(f.name for f in registry.families()), sorted(registry.cli_kinds()))
    """)
    assert first == second


def test_every_plug_in_is_in_the_family_record():
    """The Renyi bounds computed in the rdp layer (GG quadrature, the symmetric dominating
    pair, the GG vector), the torch sampler kinds and the batch samplers' hooks are fields
    of the record, present before the module that computes them is imported."""
    out = _run("""
        import sys
        import sampledprv as sp
        from sampledprv.mechanisms import registry
        assert "sampledprv.rdp.divergence" not in sys.modules
        gg = registry.family_of(sp.GeneralizedGaussian(1.5, 1.0))
        assert gg.renyi is not None and gg.renyi_costly
        vec = registry.family_of(sp.GeneralizedGaussianVector(2, 1.0, 2))
        assert vec.renyi is not None and vec.renyi_costly
        assert registry.family_of(sp.Gaussian(1.0)).torch_source(sp.Gaussian(2.0))[:2] == \
            ("gauss", 0.5)
        assert registry.family_of(sp.Laplace(2.0)).torch_source(sp.Laplace(2.0))[:2] == \
            ("laplace", 0.5)
        assert registry.family_of(sp.PureDP(1.0)).torch_source is None
        fam = registry.family("random_allocation")
        for hook in ("loss_sampler", "numpy_loss_sampler", "torch_loss_sampler",
                     "conditional", "dominating_compositions", "tilted_law", "renyi"):
            assert callable(getattr(fam, hook)), hook
        print("ok")
    """)
    assert out == "ok"


def test_hooks_of_a_registered_spec_come_from_its_family():
    """``find_hook`` answers a registered spec from its family's record, and a user's
    source (no family) from its own methods."""
    import sampledprv as sp
    from sampledprv.batch.random_allocation import PlainBallsAndBins
    from sampledprv.mechanisms import registry
    from sampledprv.sampled.draws.hooks import find_hook

    spec = sp.BallsAndBins(1.0, 4)
    assert find_hook(spec, "conditional")("remove") is not None
    plain = PlainBallsAndBins(1.0, 4)
    assert registry.family_of(plain).name == "random_allocation"
    assert find_hook(plain, "conditional")("remove") is None
    assert find_hook(sp.Gaussian(1.0), "conditional") is None

    class Mine:
        def conditional(self, direction):
            return "mine"
    assert find_hook(Mine(), "conditional")("remove") == "mine"


def test_a_package_family_outside_the_mechanisms_must_be_declared():
    from dataclasses import dataclass

    from sampledprv.mechanisms import registry
    from sampledprv.mechanisms.base import Mechanism

    @dataclass(frozen=True)
    class Undeclared(Mechanism):
        pass
    Undeclared.__module__ = "sampledprv.batch.undeclared"
    with pytest.raises(ValueError, match="DEFERRED"):
        registry.register(registry.Family(name="undeclared", types=(Undeclared,),
                                          loss_pair=lambda s: None))


def test_every_family_registered_outside_the_mechanisms_is_declared():
    """Read statically: a module of the package outside ``sampledprv/mechanisms`` that
    calls ``register(Family(...`` is a :data:`registry.DEFERRED` module (the runtime check
    of :func:`registry.register` fires only once the module is imported)."""
    import re

    from sampledprv.mechanisms import registry

    pkg = ROOT / "sampledprv"
    found = set()
    for path in pkg.rglob("*.py"):
        rel = path.relative_to(ROOT).with_suffix("")
        if rel.parts[1] == "mechanisms":
            continue
        if re.search(r"\bregister\(\s*Family\(", path.read_text()):
            found.add(".".join(p for p in rel.parts if p != "__init__"))
    assert found, "the scan found no family outside sampledprv.mechanisms"
    assert found == {d.module for d in registry.DEFERRED}, found
