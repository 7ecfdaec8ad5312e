"""The unit Gaussian pair P = N(1, 1), Q = N(0, 1) as a user would write it (tests only):
log-densities and exact samplers, shared by the sampler-check tests."""

from __future__ import annotations

import math

C = -0.5 * math.log(2.0 * math.pi)


def logp(w):
    return C - 0.5 * (w - 1.0) ** 2


def logq(w):
    return C - 0.5 * w ** 2


def good_p(rng, n):
    return rng.normal(1.0, 1.0, n)


def good_q(rng, n):
    return rng.normal(0.0, 1.0, n)
