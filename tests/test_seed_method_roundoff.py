"""The seed method's circular FFT composition (the GG paper's Algorithm 6) carries a
round-off term: the estimate covers the realised l1 error against a long-double
circular convolution, and Theorem 6's ``eta`` includes it."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sampledprv.engine import LatticePMF
from sampledprv.sampled.certification.seed_method import circular_compose, seed_direction


def _circular_conv(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Circular convolution modulo ``a.size``, directly (no FFT), in ``a``'s dtype."""
    nn = a.size
    idx = (np.arange(nn)[:, None] - np.arange(nn)[None, :]) % nn
    return (b[idx] * a[None, :]).sum(axis=1)


def _circular_power_exact(x: np.ndarray, c: int) -> np.ndarray:
    """``x`` convolved with itself ``c`` times modulo ``x.size``, in long double."""
    conv = _circular_conv
    result = None
    base = x.astype(np.longdouble)
    while c:
        if c & 1:
            result = base.copy() if result is None else conv(result, base)
        c >>= 1
        if c:
            base = conv(base, base)
    return result


def _exact(components, m):
    nn = 2 * m + 1
    total = None
    for pmf, c in components:
        x = np.zeros(nn, dtype=np.longdouble)
        x[(np.arange(pmf.probs.size) + pmf.offset + m) % nn] += pmf.probs
        p = _circular_power_exact(x, c)
        total = p if total is None else _circular_conv(total, p)
    k_total = sum(c for _, c in components)
    r = np.arange(nn)
    s = ((r - k_total * m + m) % nn) - m
    out = np.zeros(nn, dtype=np.longdouble)
    out[s + m] = total
    return out


def _law(rng, m, smooth):
    size = int(rng.integers(3, 2 * m + 2))
    if smooth:
        width = rng.uniform(0.5, size / 6)
        z = np.arange(size) - (size - 1) / 2
        p = np.exp(-0.5 * (z / width) ** 2)
    else:
        p = rng.random(size) ** 4 * (rng.random(size) < 0.5)
        p[0] += 1e-3
    offset = int(rng.integers(-m, m + 2 - size)) if size <= 2 * m else -m
    return LatticePMF(p / p.sum(), offset, 0.01, shift=float(rng.uniform(0, 0.005)))


@pytest.mark.parametrize("seed", range(24))
def test_circular_round_off_estimate_covers_the_realised_error(seed):
    rng = np.random.default_rng(seed)
    m = int(rng.integers(20, 400))          # odd lengths 41 .. 799, primes among them
    smooth = bool(seed % 2)
    components = [(_law(rng, m, smooth), int(rng.choice([1, 3, 17, 100, 1000])))
                  for _ in range(int(rng.integers(1, 4)))]
    got, bound = circular_compose(components, m)
    truth = _exact(components, m)
    err = float(np.abs(got.probs.astype(np.longdouble) - truth).sum())
    assert 0.0 < bound < 1e-9
    assert err <= bound, (err, bound)
    assert got.shift == pytest.approx(sum(c * p.shift for p, c in components))


def test_eta_includes_the_round_off():
    rng = np.random.default_rng(7)
    m = 100
    law = _law(rng, m, smooth=True)
    parts = [((law, 0.0, 10_000), 50)]
    kw = dict(m=m, n=10_000, L=(m + 0.5) * law.h, h=law.h, s=0.01, t=0.01, fine=64,
              tail_sum=0.0)
    _, _, eta, terms = seed_direction(parts, **kw)
    _, roundoff = circular_compose([(law, 50)], m)
    assert terms["FFT round-off"] == roundoff > 0.0
    others = sum(v for key, v in terms.items() if key != "FFT round-off")
    assert eta == pytest.approx(others + roundoff, rel=1e-15)
    assert math.isfinite(eta)
