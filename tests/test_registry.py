"""The mechanism registry, the direction/relation enums, the accountant contract and the
table-driven command-line parsing built on them."""

from __future__ import annotations

import numpy as np
import pytest

import sampledprv as sp
from sampledprv import mechanisms as M
from sampledprv.cli import main, parse_mechanism, format_mechanism
from sampledprv.cli.mechanism_strings import KINDS
from sampledprv.mechanisms import registry
from sampledprv.mechanisms.relations import privacy_loss


def _examples():
    """One spec per command-line kind (from its own example string)."""
    return [parse_mechanism(k.example).build() for k in KINDS.values()]


def test_every_builtin_spec_is_registered_once_with_all_hooks():
    seen = set()
    for fam in registry.families():
        if fam.extras.get("sampled_only"):   # no closed-form law: the specs sample themselves
            assert all(hasattr(t, "loss_sampler") and hasattr(t, "numpy_loss_sampler")
                       for t in fam.types)
            seen.update(fam.types)
            continue
        assert fam.types and fam.numpy_losses is not None
        for t in fam.types:
            assert t not in seen
            seen.add(t)
        if not fam.cli:   # internal pairs the relations resolve to, not public specs
            assert all(t.__name__ not in sp.__all__ for t in fam.types)
            continue
        assert fam.format is not None and fam.numba_source is not None
    for name in ("Gaussian", "Laplace", "GeneralizedGaussian", "GGNMax", "RandomizedResponse",
                 "PureDP", "ApproxDP"):
        assert getattr(sp, name) in seen and getattr(M, name) is getattr(sp, name)


def test_registering_a_taken_name_or_type_fails():
    with pytest.raises(ValueError, match="already registered"):
        registry.register(registry.Family("gaussian", (), lambda m: None))
    with pytest.raises(ValueError, match="already registered"):
        registry.register(registry.Family("other", (sp.Gaussian,), lambda m: None))


@pytest.mark.parametrize("spec", _examples() + [
    sp.PoissonSubsampled(sp.Laplace(2.0, 0.5), 0.25),
    sp.GeneralizedGaussian(2.0, 3.0, 1.5, 4)], ids=repr)
def test_cli_strings_round_trip(spec):
    """format -> parse gives the same spec (to the 12 digits the strings carry)."""
    back = parse_mechanism(format_mechanism(spec)).build()
    assert type(back) is type(spec)
    np.testing.assert_allclose(_numbers(back), _numbers(spec), rtol=1e-11)


def _numbers(spec):
    import dataclasses
    out = []
    for f in dataclasses.fields(spec):
        x = getattr(spec, f.name)
        out += list(_numbers(x)) if dataclasses.is_dataclass(x) else list(np.ravel(x))
    return np.asarray(out, dtype=float)


def test_unregistered_objects_get_type_errors():
    class Mine(sp.Mechanism):
        pass
    with pytest.raises(TypeError, match="no analytic privacy loss"):
        privacy_loss(Mine(), "remove")
    with pytest.raises(ValueError, match="mechanism spec"):
        sp.Accountant().compose(object())
    assert not sp.Accountant().supports(Mine())
    assert "Mine" in format_mechanism(Mine())


def test_direction_and_relation_validators():
    assert M.as_direction("remove") is sp.Direction.REMOVE
    assert M.as_direction(" ADD ") is sp.Direction.ADD
    assert sp.Direction.ADD == "add"
    for bad in ("both", None, 1):
        with pytest.raises(ValueError, match="direction must be 'remove' or 'add'"):
            M.as_direction(bad)
    assert M.as_relation("replace_one") is sp.NeighbouringRelation.SUBSTITUTE
    assert M.as_relation(sp.NeighbouringRelation.ADD_REMOVE) == "add_remove"
    with pytest.raises(ValueError, match="neighbouring must be 'add_remove' or 'substitute'"):
        sp.Accountant(neighbouring="swap")
    with pytest.raises(ValueError, match="neighbouring"):
        sp.SampledAccountant(1000, neighbouring="bounded")
    with pytest.raises(ValueError, match="direction"):
        privacy_loss(sp.Gaussian(1.0), "sideways")


def test_both_accountants_implement_the_contract():
    for acc in (sp.Accountant(), sp.SampledAccountant(1000)):
        assert isinstance(acc, sp.PrivacyAccountant)
        d = acc.settings()
        assert d["type"] in ("analytic", "sampled") and d["neighbouring"] == "add_remove"
        assert type(acc).__name__ in acc.describe()
        assert acc.supports(sp.Gaussian(1.0))
        assert not acc.supports("gaussian")
    assert not sp.Accountant().supports(object())


def test_calibration_and_plotting_check_the_contract_by_type():
    from sampledprv.calibration import _accountant_factory
    from sampledprv.plotting import privacy_curve

    template = sp.Accountant(eps_error=0.05).compose(sp.Gaussian(3.0))
    fresh = _accountant_factory(template)()
    assert fresh is not template and fresh.composition == template.composition

    class DuckTyped:  # has the methods but is not an accountant
        def compose(self, *a):
            return self

        def epsilon(self, *a):
            return 0.0
    with pytest.raises(ValueError, match="sampledprv accountant"):
        privacy_curve(DuckTyped(), [0.5])
    curve = privacy_curve(sp.Accountant().compose(sp.Gaussian(2.0)), [0.5, 1.0])
    assert np.all(curve.lower <= curve.upper)


def test_simple_fractions_in_mechanism_strings():
    spec = parse_mechanism("subsampled-gaussian sigma=1 q=256/60000").build()
    assert spec == sp.PoissonSubsampled(sp.Gaussian(1.0), 256 / 60000)
    assert parse_mechanism("laplace scale=3/2").build() == sp.Laplace(1.5)
    for text, needle in (("laplace scale=1/0", "divides by zero"),
                         ("laplace scale=a/b", "fraction")):
        with pytest.raises(ValueError, match=needle):
            parse_mechanism(text)


def _run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_config_typo_names_the_key_and_suggests(tmp_path, capsys):
    cfg = tmp_path / "job.toml"
    cfg.write_text('[[mechanism]]\nspec = "gaussian sigma=1"\ncout = 10\n')
    code, _, err = _run(capsys, "epsilon", "--delta", "1e-5", "--config", str(cfg))
    assert code == 2 and "unknown key 'cout'" in err and "did you mean 'count'?" in err
    assert "not both" not in err
    cfg.write_text('[[mechanism]]\nkind = "gaussian"\nsigma = 1\ncout = 10\n')
    code, _, err = _run(capsys, "epsilon", "--delta", "1e-5", "--config", str(cfg))
    assert code == 2 and "unknown key 'cout'" in err and "did you mean 'count'?" in err
    cfg.write_text('delat = 1e-5\n[[mechanism]]\nspec = "gaussian sigma=1"\n')
    code, _, err = _run(capsys, "epsilon", "--delta", "1e-5", "--config", str(cfg))
    assert code == 2 and "did you mean 'delta'?" in err
    code, _, err = _run(capsys, "epsilon", "--delta", "1e-5", "-m", "gausian sigma=1")
    assert code == 2 and "did you mean 'gaussian'?" in err
    code, _, err = _run(capsys, "epsilon", "--delta", "1e-5", "-m", "gaussian sigm=1")
    assert code == 2 and "did you mean 'sigma'?" in err


def test_config_kind_tables_accept_fractions_and_match_strings(tmp_path, capsys):
    cfg = tmp_path / "job.toml"
    cfg.write_text('[[mechanism]]\nkind = "subsampled-gaussian"\nsigma = 1\nq = "256/60000"\n'
                   'count = 10\n')
    code, out_file, _ = _run(capsys, "epsilon", "--delta", "1e-5", "--config", str(cfg),
                             "--json")
    code2, out_str, _ = _run(capsys, "epsilon", "--delta", "1e-5", "-m",
                             "subsampled-gaussian sigma=1 q=256/60000", "--count", "10", "--json")
    import json
    a, b = json.loads(out_file), json.loads(out_str)
    assert code == code2 == 0
    assert a["results"] == b["results"]
    assert a["composition"][0]["mechanism"] == b["composition"][0]["mechanism"] == \
        format_mechanism(sp.PoissonSubsampled(sp.Gaussian(1.0), 256 / 60000))


def test_per_direction_queries():
    acc = sp.Accountant().compose(sp.PoissonSubsampled(sp.Gaussian(1.0), 0.1), 10)
    rem, add = acc.epsilon(1e-5, direction="remove"), acc.epsilon(1e-5, direction=sp.Direction.ADD)
    both = acc.epsilon(1e-5)
    assert max(rem.upper, add.upper) == both.upper and rem.upper != add.upper
    sym = sp.Accountant().compose(sp.Laplace(1.0), 3)
    assert sym.delta(0.5, direction="add").upper == sym.delta(0.5, direction="remove").upper
    for a in (acc, sp.SampledAccountant(1000).compose(sp.Gaussian(1.0))):
        with pytest.raises(ValueError, match="direction must be 'remove' or 'add'"):
            a.delta(0.5, direction="both")
