"""The conditional envelope of balls-and-bins is built once for every composition length
up to 1024 (issue 36: Opacus' ``get_epsilon`` at a new epoch count must not rebuild it).

The envelope's tail floor is rounded down to a shared value
(:func:`~sampledprv.sampled.certification.conditional.shared_floor`), which is valid for
any floor at most the requested one; these tests check that the floor is never above the
requested one, that new epoch counts reuse the envelope, and that the intervals still
bracket an independent reference.
"""

from __future__ import annotations

import math

import pytest

import sampledprv as sp
from sampledprv.sampled.certification import conditional


@pytest.mark.parametrize("count", [1, 2, 3, 7, 1000, 1024, 1025, 4096, 10**6, 3 * 10**9])
def test_shared_floor_is_never_above_the_requested_floor(count):
    floor = 1e-16 / count
    got = conditional.shared_floor(floor)
    assert got <= floor
    assert got <= 1e-16 / 1024
    assert got > floor / 2 or count <= 1024          # beyond 1024: at most a factor 2 lower
    assert math.log2(got) == int(math.log2(got)) or got == 1e-16 / 1024


def test_shared_floor_rejects_a_non_positive_floor():
    with pytest.raises(ValueError, match="floor"):
        conditional.shared_floor(0.0)


def test_new_epoch_counts_reuse_the_conditional_envelope(monkeypatch):
    builds = []
    real = conditional.ConditionalRemove._envelope

    def counted(self, *args, **kwargs):
        builds.append(self)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(conditional.ConditionalRemove, "_envelope", counted)
    conditional._envelopes.clear()
    spec = sp.BallsAndBins(2.0, 8)
    ivs = []
    for epochs in (1, 2, 3, 5, 9):
        acc = sp.SampledAccountant(20_000, alpha=1e-3, seed=3, progress=False)
        ivs.append(acc.compose(spec, count=epochs).epsilon(1e-3))
    assert len(builds) == 1, f"the conditional envelope was built {len(builds)} times"
    ups = [iv.upper for iv in ivs]
    assert ups == sorted(ups)                       # more epochs, more privacy loss


def test_shared_envelope_brackets_the_exact_one_epoch_curve():
    """The envelope built for a 5-epoch query answers a 1-epoch query afterwards; that
    answer brackets the deterministic quadrature reference (tests/allocation_reference.py)."""
    from allocation_reference import balls_and_bins_delta
    spec = sp.BallsAndBins(1.0, 3)
    conditional._envelopes.clear()
    sp.SampledAccountant(50_000, alpha=1e-3, seed=5, progress=False).compose(
        spec, 5).delta(1.0)                         # builds the shared envelope
    iv = sp.SampledAccountant(50_000, alpha=1e-3, seed=5, progress=False).compose(
        spec, 1).delta(0.5, direction="remove")
    exact = balls_and_bins_delta(0.5, 1.0, 3, "remove")
    assert iv.lower <= exact <= iv.upper
