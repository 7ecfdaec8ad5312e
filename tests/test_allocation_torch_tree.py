"""The torch random-allocation sampler's pairwise tree for e_k against the sequential
recursion it replaced (kept here as the reference), its log-space fallback, its draws
and its blocks (sampledprv.sampled.draws.allocation.allocation_torch_sampler)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from sampledprv.sampled.draws import allocation as al

torch = pytest.importorskip("torch")
F64 = torch.float64


# ---- the implementation before the tree (a loop over the T steps), the reference --------
def _old_step_losses(gen, rows, T, k, kind, d, direction):
    with_rec = torch.zeros((1, T), dtype=torch.bool)
    if direction == "remove":
        with_rec[0, :k] = True
    if kind == al.BASE_GAUSS:
        z = torch.randn((rows, T), generator=gen, dtype=F64)
        # the old code wrote torch.where(with_rec, 0.5 * d * d, -0.5 * d * d): two Python
        # scalars give a float32 tensor, d^2/2 rounded to float32; here in float64
        half = torch.tensor(0.5 * d * d, dtype=F64)
        return d * z + torch.where(with_rec, half, -half)
    e = torch.empty((rows, T), dtype=F64).exponential_(generator=gen)
    sgn = torch.where(torch.rand((rows, T), generator=gen, dtype=F64) < 0.5, -1.0, 1.0).to(F64)
    y = sgn * e
    return torch.where(with_rec, (d + y).abs() - y.abs(), y.abs() - (y - d).abs())


def _old_esp(y, k):
    """e_k of each row by e_j <- e_j + y_t e_{j-1}, t = 1..T."""
    e = torch.zeros((y.shape[0], k + 1), dtype=F64)
    e[:, 0] = 1.0
    for t in range(y.shape[1]):
        e[:, 1:] = e[:, 1:] + y[:, t:t + 1] * e[:, :-1]
    return e[:, k]


def _old_log_esp(ell, k):
    le = torch.full((ell.shape[0], k + 1), -math.inf, dtype=F64)
    le[:, 0] = 0.0
    for t in range(ell.shape[1]):
        le[:, 1:] = torch.logaddexp(le[:, 1:], le[:, :-1] + ell[:, t:t + 1])
    return le[:, k]


def _old_losses(ell, k, logc):
    if k == 1:
        return torch.logsumexp(ell, dim=1) - logc
    m = ell.max(dim=1, keepdim=True).values
    ek = _old_esp(torch.exp(ell - m), k)
    out = k * m[:, 0] + torch.log(ek) - logc
    bad = ~(ek > 1e-290)
    if bool(bad.any()):
        out[bad] = _old_log_esp(ell[bad], k) - logc
    return out


def _brute_log_esp(row, k):
    """log e_k(exp(row)) over all k-subsets (small T only)."""
    sums = np.array([sum(c) for c in itertools.combinations(row.tolist(), k)])
    top = sums.max()
    return top + math.log(np.exp(sums - top).sum())


def _rel(a, b):
    return float(((a - b).abs() / b.abs()).max()) if a.numel() else 0.0


TK = [(1, 1), (2, 1), (2, 2), (3, 2), (3, 3), (5, 2), (5, 5), (7, 3), (8, 4), (8, 8),
      (9, 4), (13, 6), (31, 2), (64, 5), (100, 17), (33, 33), (391, 5)]


@pytest.mark.parametrize("T,k", TK)
def test_tree_equals_the_sequential_recursion(T, k):
    gen = torch.Generator().manual_seed(T * 100 + k)
    for spread in (0.5, 5.0, 40.0):       # y = exp(spread z - max): mild to wide
        ell = spread * torch.randn((257, T), generator=gen, dtype=F64)
        y = torch.exp(ell - ell.max(dim=1, keepdim=True).values)
        ref = _old_esp(y, k)
        ok = ref > 1e-290
        assert spread > 1.0 or bool(ok.all())
        assert _rel(al._esp_tree(y, k)[ok], ref[ok]) < 1e-12
        # the log-space tree against the log-space recursion, every row
        assert float((al._log_esp_tree(ell, k) - _old_log_esp(ell, k)).abs().max()) \
            < 1e-12 * (1.0 + float(ell.abs().max()))


def test_k_above_T_is_an_empty_sum():
    y = torch.rand((4, 3), dtype=F64)
    assert torch.equal(al._esp_tree(y, 4), torch.zeros(4, dtype=F64))
    assert torch.all(al._log_esp_tree(y, 4) == -math.inf)
    assert torch.all(al._allocation_losses(y.log(), 4, 0.0) == -math.inf)


@pytest.mark.parametrize("T,k", [(4, 2), (5, 3), (7, 7), (9, 4)])
def test_tree_and_log_tree_against_all_subsets(T, k):
    gen = torch.Generator().manual_seed(3)
    ell = 3.0 * torch.randn((20, T), generator=gen, dtype=F64)
    ref = torch.tensor([_brute_log_esp(r, k) for r in ell.numpy()], dtype=F64)
    logc = al.log_binom(T, k)
    for force in (False, True):
        got = al._allocation_losses(ell, k, logc, force_log=force) + logc
        assert float((got - ref).abs().max()) < 1e-12 * (1.0 + float(ref.abs().max()))


@pytest.mark.parametrize("kind", [al.BASE_GAUSS, al.BASE_LAPLACE])
@pytest.mark.parametrize("direction", ["remove", "add"])
@pytest.mark.parametrize("T,k,d", [(9, 3, 1.25), (391, 5, 1 / 0.55), (7, 7, 0.8),
                                   (10, 1, 2.0), (40, 5, 300.0)])
def test_sampler_equals_the_old_implementation_on_the_same_draws(kind, direction, T, k, d):
    """Same generator, same block: the same per-step draws bit for bit, and losses equal
    to the old loop over T to rounding (Gaussian, d = 300: most rows take the log-space
    fallback)."""
    rows, block = 600, 256
    f = al.allocation_torch_sampler(T, k, kind, d, 2.0, direction, block=block)
    got = f(torch.Generator().manual_seed(11), rows)
    gen = torch.Generator().manual_seed(11)
    sign = 1.0 if direction == "remove" else -1.0
    logc = al.log_binom(T, k)
    parts, new_ell, n_bad = [], [], 0
    gen2 = torch.Generator().manual_seed(11)
    for a in range(0, rows, block):
        r = min(block, rows - a)
        ell = _old_step_losses(gen, r, T, k, kind, d, direction)
        new_ell.append(al._torch_step_losses(torch, gen2, r, T, k, kind, d,
                                             direction == "remove"))
        assert torch.equal(new_ell[-1], ell)
        parts.append(sign * _old_losses(ell, k, logc))
        n_bad += int((~(_old_esp(torch.exp(ell - ell.max(1, keepdim=True).values), k)
                        > 1e-290)).sum())
    ref = torch.cat(parts)
    assert (n_bad > rows // 4) == (kind == al.BASE_GAUSS and d > 100 and k > 1)
    assert got.shape == (rows,) and got.dtype == F64
    assert bool(torch.isfinite(got).all())
    # absolute error relative to the magnitude of the terms k m, log e_k, log C(T, k)
    scale = 1.0 + logc + k * float(torch.cat(new_ell).abs().max())
    assert float((got - ref).abs().max()) < 1e-13 * scale


def test_log_fallback_is_taken_and_exact():
    """A Gaussian step with a huge d: most rows' scaled e_k underflows; the log tree
    gives the value of all k-subsets."""
    T, k, d = 8, 3, 1000.0
    ell = al._torch_step_losses(torch, torch.Generator().manual_seed(5), 50, T, k,
                                al.BASE_GAUSS, d, False)
    y = torch.exp(ell - ell.max(dim=1, keepdim=True).values)
    assert int((~(al._esp_tree(y, k) > 1e-290)).sum()) >= 20
    logc = al.log_binom(T, k)
    got = al._allocation_losses(ell, k, logc)
    ref = torch.tensor([_brute_log_esp(r, k) for r in ell.numpy()], dtype=F64) - logc
    assert bool(torch.isfinite(got).all())
    assert float((got - ref).abs().max()) < 1e-12 * float(ref.abs().max())


def test_blocks():
    T, k = 391, 5
    f = al.allocation_torch_sampler(T, k, al.BASE_GAUSS, 1.8, 2.0, "remove")
    g = al.allocation_torch_sampler(T, k, al.BASE_GAUSS, 1.8, 2.0, "remove",
                                    block=2 ** 20 // T)
    a = f(torch.Generator().manual_seed(2), 6000)   # CPU default: 2**20 // T rows a block
    b = g(torch.Generator().manual_seed(2), 6000)
    assert torch.equal(a, b)
    h = al.allocation_torch_sampler(9, 3, al.BASE_LAPLACE, 1.0, 2.0, "add", block=1)
    assert h(torch.Generator().manual_seed(0), 5).shape == (5,)
    assert f(torch.Generator(), 0).shape == (0,)
    with pytest.raises(ValueError, match="direction"):
        al.allocation_torch_sampler(T, k, al.BASE_GAUSS, 1.8, 2.0, "both")
    with pytest.raises(ValueError, match="numba"):
        al.allocation_torch_sampler(T, k, al.BASE_GG, 1.8, 1.5, "add")
