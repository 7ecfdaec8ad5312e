r"""Both directions at once: the change-of-measure identity joins the two envelopes.

For any two probability laws :math:`P, Q` on one space the hockey-stick curves of the
two directions determine each other:

.. math:: H_P(\gamma) = \int (p - \gamma q)_+ = 1 - \gamma + \gamma\, H_Q(1/\gamma),
          \qquad \gamma > 0,

(the integrand difference :math:`(p - \gamma q)_+ - (\gamma q - p)_+ = p - \gamma q`
integrates to :math:`1 - \gamma`), where :math:`H_P(\gamma) = E_P[(1 - \gamma e^{-L})_+]`
is the "remove" curve (:math:`L = \log p/q` under ``P``, :math:`\delta(\varepsilon)` at
:math:`\gamma = e^\varepsilon`) and :math:`H_Q` the "add" curve.  No premise is needed
(no absolute continuity: the atoms at :math:`\pm\infty` are part of both laws).  The
sampled accountant brackets both curves on one event of probability
:math:`\ge 1 - \alpha` (:mod:`.envelopes`): :math:`H_{D} \le H_P \le H_{U}` and
:math:`H_{D'} \le H_Q \le H_{U'}`.  On that event

* :math:`H_P \le g := \min(H_U, T H_{U'})` with :math:`T H(\gamma) = 1 - \gamma + \gamma
  H(1/\gamma)`; :math:`H_P` is convex, so it lies below the greatest convex minorant
  of ``g`` (the lower hull of its values on the lattice, with the point ``(0, 1)``).
  That hull is the curve of a valid pair (convex, :math:`H(0) = 1`,
  :math:`H \ge (1 - \gamma)_+`, nonincreasing), the *join* ``J``: ``J`` is a dominating
  pair of the step (Zhu, Dong and Wang 2022, Definition 7), hence by their Theorem 10
  its ``k``-fold composition dominates the true composition in both directions.  Its kinks lie on the lattice, so its law of
  :math:`L` under ``P`` is a :class:`~sampledprv.engine.LatticePMF` that the FFT
  composition takes as it takes ``U``.
* :math:`H_P \ge h := \max(H_D, T H_{D'})`; ``h`` is convex with :math:`h(0) = 1`,
  :math:`h \ge (1-\gamma)_+`, so it is the curve of a valid pair (the *meet* ``M``)
  dominated by the true pair.  Its kinks off the lattice (where the two curves cross)
  carry P-mass that is moved down to the lattice point below (at most the amount
  :math:`\gamma_i\,\Delta s`, the rest to :math:`-\infty`): a stochastically smaller
  law, so the composed remove curve of ``M`` stays below the truth.

Why it helps.  ``U`` moves the unseen mass up at every threshold, so its mean is too
large by about the band width times the loss range (for a Gaussian step of
:math:`\mu = 0.01`, three times the true mean at ``n = 1e6``), and ``k`` such steps
shift the composed loss by ``k`` times that.  ``T H_{U'}`` is tight where ``H_U`` is
loose (below the median of ``L``: the add direction's upper envelope moves mass *down*
there), so the join's law is the true law spread on both sides with almost the true
mean: the composed shift disappears and only the variance grows.  Proof and figures:
``docs/design-notes.md``, "Joining the two directions' envelopes".

The mirrored atoms (``L = -L'``) are rounded onto this direction's lattice: down for
``U'`` (``L'`` up: ``H_{U'}`` only grows), up for ``D'``.  The curves are evaluated in
extended precision with a carried round-off bound, and the join is used only if its
curve exceeds the certified one at every kink by more than that bound.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from numba import njit

from ...engine import LatticePMF
from ...engine.compose import GridTooLargeError
from .envelopes import Envelope, compose_bounds
from .inputs import LogDensityPair
from .twolevel import compose_bounds_two_level

__all__ = ["join_upper", "meet_lower", "JoinedBounds", "JOIN_TEXT", "HULL_MARGIN",
           "MAX_JOIN_POINTS", "qualifies", "joined_state", "join_report"]

#: Added to the upper curve's values before the hull, so that the hull's float round-off
#: (about 1e-16 per value) cannot put a vertex below the certified curve (checked).
HULL_MARGIN = 1e-13
#: Largest joint lattice (this direction's points and the mirrored ones) joined.
MAX_JOIN_POINTS = 2**24
#: Largest |loss| on the joint lattice: e^t must stay finite and e^{-t} nonzero.
MAX_ABS_LOSS = 600.0
JOIN_TEXT = ("both directions joined by the change of measure "
             "H_P(g) = 1 - g + g H_Q(1/g) (hull of the two curves)")


#: Block length of the suffix sums (:func:`_suffix_gt`).
_BLOCK = 1024
#: Unit round-off of the extended precision the curves are evaluated in.
_EPS_LD = float(np.finfo(np.longdouble).eps)


def _suffix_gt(a: np.ndarray) -> np.ndarray:
    """``out[i] = sum(a[i+1:])`` in extended precision, blockwise: for ``a >= 0`` the
    error is at most ``(B + m/B + 4) eps sum(a[i+1:])`` (``B`` = :data:`_BLOCK`, ``m``
    terms), and only the summed terms enter it (no total minus prefix)."""
    r = np.asarray(a, dtype=np.longdouble)[::-1]
    m = r.size
    pad = (-m) % _BLOCK
    blk = np.concatenate([r, np.zeros(pad, dtype=np.longdouble)]).reshape(-1, _BLOCK)
    inner = np.cumsum(blk, axis=1)
    carry = np.concatenate([np.zeros(1, dtype=np.longdouble),
                            np.cumsum(inner[:-1, -1])])
    incl = (inner + carry[:, None]).reshape(-1)[:m][::-1]   # sum(a[i:])
    return np.concatenate([incl[1:], np.zeros(1, dtype=np.longdouble)])


def _kappa(m: int) -> float:
    """Relative error bound of :func:`_suffix_gt` over ``m`` terms."""
    return (_BLOCK + m / _BLOCK + 4) * _EPS_LD


def _common_lattice(own: LatticePMF, other: LatticePMF, mode: str):
    """Indices of ``own``'s atoms and of the mirrored atoms ``-l'`` of ``other`` on
    ``own``'s lattice ``shift + i h`` (``mode`` ``"down"``: floor, ``"up"``: ceil).

    With ``l'_j = s' + (o' + j) h`` the mirrored point is ``s + (c - o' - j) h``,
    ``c = -(s + s')/h``: one rounding of ``c`` serves every atom, in integers.  A ``c``
    within 1e-9 of an integer is that integer (the lattices coincide up to float noise;
    a symmetric pair mirrored onto itself, for example)."""
    h = own.h
    if not math.isclose(other.h, h, rel_tol=1e-12):
        raise ValueError(f"the two directions need one mesh, got {own.h} and {other.h}")
    c = -(own.shift + other.shift) / h
    r = round(c)
    ci = r if abs(c - r) < 1e-9 else (math.floor(c) if mode == "down" else math.ceil(c))
    im = ci - (other.offset + np.arange(other.probs.size, dtype=np.int64))
    iu = own.offset + np.arange(own.probs.size, dtype=np.int64)
    lo, hi = int(min(iu[0], im.min())), int(max(iu[-1], im.max()))
    return iu, im, lo, hi - lo + 1


def _curves(own: LatticePMF, other: LatticePMF, mode: str):
    """Values on the joint lattice of ``H_own`` and ``T H_other`` (module docstring),
    in extended precision, with the atoms of both (P-masses ``p``, Q-masses
    ``q = p e^{-t}``) and a bound ``err`` on the round-off of each value.

    ``H_own(gamma_i) = p_inf + P1[> i] - gamma_i Q1[> i]`` and, for the mirrored law
    (Q-masses ``q2`` = the other law's masses, ``p2 = q2 gamma``, total mass
    ``1 - u_inf - dq``), ``T H_other(gamma_i) = (1 - P2) + P2[> i] - gamma_i (Q2[> i] +
    dq)``: suffix sums only, so ``gamma_i Q[> i] <= P[> i]`` keeps every error of the
    order of the masses (``dq`` is multiplied by ``gamma_i``, counted as such)."""
    iu, im, lo, m = _common_lattice(own, other, mode)
    if m > MAX_JOIN_POINTS:
        return None
    t = own.shift + (lo + np.arange(m)) * own.h
    if max(abs(t[0]), abs(t[-1])) > MAX_ABS_LOSS:
        return None
    tl = t.astype(np.longdouble)
    gam = np.exp(tl)
    p1 = np.zeros(m)
    p1[iu - lo] = own.probs
    q1 = p1 * np.exp(-tl)
    q2 = np.bincount(im - lo, weights=other.probs, minlength=m).astype(np.longdouble)
    p2 = q2 * gam
    P1, Q1, P2, Q2 = _suffix_gt(p1), _suffix_gt(q1), _suffix_gt(p2), _suffix_gt(q2)
    p1tot = float(np.sum(p1, dtype=np.longdouble))
    p2tot = P2[0] + p2[0]
    q2tot = Q2[0] + q2[0]
    dq = 1.0 - np.longdouble(other.p_inf) - q2tot
    f1 = own.p_inf + P1 - gam * Q1
    f2 = (1.0 - p2tot) + P2 - gam * (Q2 + dq)
    k = _kappa(m)
    e1 = 2 * k * p1tot + 12 * _EPS_LD
    e2 = 4 * k * float(p2tot) + gam * (k * float(q2tot) + 4 * _EPS_LD) + 12 * _EPS_LD
    return dict(lo=lo, t=t, gam=gam, p1=p1, q1=q1, p2=p2, q2=q2, f1=f1, f2=f2,
                u_inf=float(other.p_inf), q2tot=q2tot, dq=dq,
                err=np.maximum(e1, e2) + 4 * _EPS_LD * gam)


@njit(cache=True)
def _lower_hull(x, y):  # pragma: no cover - compiled
    out = np.empty(x.size, dtype=np.int64)
    n = 0
    for i in range(x.size):
        while n >= 2:
            o, a = out[n - 2], out[n - 1]
            cr = (x[a] - x[o]) * (y[i] - y[o]) - (y[a] - y[o]) * (x[i] - x[o])
            if cr <= 0.0:
                n -= 1
            else:
                break
        out[n] = i
        n += 1
    return out[:n]


def join_upper(own: LatticePMF, other: LatticePMF) -> "LatticePMF | None":
    r"""The join ``J`` of this direction's upper envelope ``own`` (:math:`H_U`) and the
    other direction's ``other`` (:math:`H_{U'}`, mirrored): the law of :math:`L` under
    ``P`` whose curve is the lower convex hull of :math:`\min(H_U, T H_{U'})` (module
    docstring).  ``None`` when the joint lattice exceeds :data:`MAX_JOIN_POINTS` points
    or reaches beyond :data:`MAX_ABS_LOSS`.

    The slopes are made nondecreasing and at least -1 by raising them (which only
    raises the curve :math:`1 + \int_0^\gamma s`); :class:`RuntimeError` if round-off
    still put a kink of ``J`` below the certified curve (the margin
    :data:`HULL_MARGIN` covers it)."""
    c = _curves(own, other, "down")
    if c is None:
        return None
    gam, f1, f2 = c["gam"], c["f1"], c["f2"]
    src = np.where(f1 <= f2, 1, 2)
    g = np.minimum(f1, f2)
    g = np.minimum.accumulate(np.maximum(g, np.maximum(1.0 - gam, 0.0)))  # truth obeys both
    tau = max(HULL_MARGIN, 8.0 * float(np.max(c["err"])))
    x = np.concatenate([[0.0], gam.astype(np.float64)])
    y = np.concatenate([[1.0], (g + tau).astype(np.float64)])
    hull = _lower_hull(x, y)
    a, b = hull[:-1], hull[1:]
    slope = (y[b] - y[a]) / (x[b] - x[a])
    # consecutive lattice vertices on one curve: its exact slope (no cancellation)
    ia, ib = a - 1, b - 1
    cons = (ib == ia + 1) & (ia >= 0)
    sa = src[np.maximum(ia, 0)]
    for k, q in ((1, c["q1"]), (2, c["q2"])):
        e = cons & (sa == k) & (src[ib] == k)
        slope[e] = -_suffix_gt(q)[ia[e]].astype(np.float64)
    slope = np.concatenate([slope, [0.0]])              # flat beyond the last vertex
    # the exact and the divided slopes disagree by round-off where runs meet bridges;
    # raising a slope only raises the curve 1 + int_0^g slope (conservative); the first
    # at least -1 + 1e-14 keeps the Q-mass of the atoms below 1 despite round-off
    slope = np.maximum.accumulate(np.maximum(slope, -1.0 + 1e-14))
    q = np.zeros(gam.size)
    q[b - 1] = np.diff(slope)                           # >= 0 exactly (nondecreasing)
    p = q * gam.astype(np.float64)
    p_inf = max(0.0, 1.0 - float(np.sum(p, dtype=np.longdouble)))
    J = LatticePMF(p, c["lo"], own.h, shift=own.shift, p_inf=p_inf)
    # certificate: at every kink the curve of J (its stored atoms, in extended
    # precision) exceeds the certified curve g by more than both round-off bounds
    pl = p.astype(np.longdouble)
    fj = p_inf + _suffix_gt(pl) - gam * _suffix_gt(pl * np.exp(-c["t"].astype(np.longdouble)))
    ej = 2 * _kappa(gam.size) * (1.0 + p_inf) + 12 * _EPS_LD
    v = b - 1
    if np.any(fj[v] - g[v] <= c["err"][v] + ej):
        raise RuntimeError("the join's curve is not above the certified curve by more "
                           "than the round-off at every kink")
    return J


def meet_lower(own: LatticePMF, other: LatticePMF) -> "LatticePMF | None":
    r"""The meet ``M`` of this direction's lower envelope ``own`` (:math:`H_D`) and the
    other direction's ``other`` (:math:`H_{D'}`, mirrored): the law of :math:`L` under
    ``P`` whose curve is :math:`\max(H_D, T H_{D'})`, the P-mass of each kink between
    lattice points ``i, i+1`` moved down to ``i`` (at most :math:`\gamma_i` times the
    slope jump; the rest to :math:`-\infty`).  ``None`` when the joint lattice exceeds
    :data:`MAX_JOIN_POINTS` points or reaches beyond :data:`MAX_ABS_LOSS`."""
    c = _curves(own, other, "up")
    if c is None:
        return None
    gam, f1, f2 = c["gam"], c["f1"], c["f2"]
    # intervals j = -1..m-1: (gamma_j, gamma_{j+1}), gamma_{-1} = 0, gamma_m = inf;
    # index j + 1 below.  Slopes of each curve there:
    q1tot = float(c["q1"].sum())
    s1 = np.concatenate([[-q1tot], -_suffix_gt(c["q1"])])
    s2 = -(np.concatenate([[c["q2tot"]], _suffix_gt(c["q2"])]) + c["dq"])
    # values at each interval's left end (0: f1(0) = total mass of own, f2(0) = 1) and
    # right end (at infinity: f1 -> its flat value, f2 -> -inf if it still decreases)
    v1l = np.concatenate([[own.p_inf + float(c["p1"].sum())], f1])
    v2l = np.concatenate([[1.0], f2])
    v1r = np.concatenate([f1, [f1[-1]]])
    v2r = np.concatenate([f2, [f2[-1] if s2[-1] >= 0.0 else -np.inf]])
    act_l = np.where((v1l > v2l) | ((v1l == v2l) & (s1 >= s2)), 1, 2)
    act_r = np.where((v1r > v2r) | ((v1r == v2r) & (s1 <= s2)), 1, 2)
    sl = np.where(act_l == 1, s1, s2)
    sr = np.where(act_r == 1, s1, s2)
    # kink at lattice point i (i = 0..m-1): between interval i-1 (index i) and i
    # (index i+1); one curve active on both sides: that curve's own atom
    li, ri = act_r[:-1], act_l[1:]
    jump = np.maximum(sl[1:] - sr[:-1], 0.0)
    p = np.where((li == 1) & (ri == 1), c["p1"],
                 np.where((li == 2) & (ri == 2), c["p2"] * (1.0 - 1e-12),
                          gam * jump * (1.0 - 1e-9))).astype(np.float64)
    # kinks strictly inside interval j (the curves cross there): P-mass at most
    # gamma_{j+1} * jump, moved down to gamma_j (at least gamma_j * jump there); inside
    # (0, gamma_0): dropped (to -inf)
    inner = np.maximum(sr - sl, 0.0) * (act_l != act_r)
    p = p + gam * inner[1:] * (1.0 - 1e-9)
    p_inf = float(v1r[-1]) if act_r[-1] == 1 else float(max(v2r[-1], v1r[-1]))
    p = np.maximum(p, 0.0)
    p_inf = max(0.0, min(p_inf, 1.0 - float(p.sum())))
    return LatticePMF(p, c["lo"], own.h, shift=own.shift, p_inf=p_inf)


def qualifies(mech: object) -> bool:
    r"""Whether the join and the meet apply to ``mech``'s two histograms: both must be
    the two orders of one pair ``(P, Q)`` -- a user :class:`~.inputs.LogDensityPair`
    (remove: :math:`\log p/q` under ``P``; add: :math:`\log q/p` under ``Q``; a pair
    declared symmetric has one histogram for both, by the user's declaration, as
    everywhere else in the accountant).  Built-in specs may sample a different
    dominating pair per direction (the meet would then be invalid); they keep their
    own envelopes."""
    return type(mech) is LogDensityPair


def _join_env(env, other, notes: list, name: str):
    """``env`` with its join and meet; the estimate replaced by a point mass (the
    joined composition's estimate is not read: the base's is).  Where a join cannot be
    built (:func:`join_upper`) the envelope stays and ``notes`` says why."""
    wide = "joint lattice too large or too wide"
    try:
        J = join_upper(env.upper, other.upper)
        if J is None:
            notes.append(f"{name}: upper envelope kept ({wide})")
    except RuntimeError as err:
        J = None
        notes.append(f"{name}: upper envelope kept ({err})")
    M = meet_lower(env.lower, other.lower)
    if M is None:
        notes.append(f"{name}: lower envelope kept ({wide})")
    return Envelope(env.upper if J is None else J, env.lower if M is None else M,
                    _point(env.upper.h), env.alpha)


def _point(h: float) -> LatticePMF:
    return LatticePMF(np.ones(1), 0, h)


def joined_state(mechs: list, envs: dict, base: dict, two_level_factor: int,
                 max_grid: int) -> dict:
    """Each direction's :class:`JoinedBounds`: ``envs[d]`` the ``(Envelope, count)``
    list of direction ``d`` (one per mechanism of ``mechs``, in order), ``base[d]`` its
    composed envelopes.  Qualifying mechanisms (:func:`qualifies`) get their join and
    meet; the others keep their envelopes (a mixed composition stays certified: each
    step of the chain from the truth to the composed laws changes one factor, by
    Blackwell's order or by the stochastic order, the others held fixed).  The same
    composition as ``base`` (``two_level_factor`` 0: one level).  Where nothing could
    be joined, or no grid fits, ``base`` is returned and its details say why
    (``identity_join_skipped``)."""
    if not any(qualifies(m) for m in mechs):
        return base
    out, notes = {}, []
    for d, comps in envs.items():
        o = "add" if d == "remove" else "remove"
        others = envs.get(o, comps)
        jcomps = [(_join_env(e, others[i][0], notes, f"{mechs[i]!r} ({d})")
                   if qualifies(mechs[i]) else
                   (Envelope(e.upper, e.lower, _point(e.upper.h), e.alpha)), c)
                  for i, (e, c) in enumerate(comps)]
        joined = _compose(jcomps, two_level_factor, max_grid)
        if joined is None:
            notes.append("no FFT grid up to max_grid fits the joined composition")
            break
        out[d] = JoinedBounds(base[d], joined, dict(base[d].details))
    if len(out) < len(envs):
        for b in base.values():
            b.details["identity_join_skipped"] = notes
        return base
    if notes:
        for b in out.values():
            b.details["identity_join_notes"] = notes
    return out


def _compose(comps: list, factor: int, max_grid: int):
    """The base's composition (one level, or two at ``factor``); the joined lattices can
    be wider, so a larger two-level factor is tried before giving up (``None``)."""
    for f in [factor] + [g for g in (2, 4, 8, 16, 32, 64) if g > factor]:
        try:
            return compose_bounds_two_level(comps, f, max_size=max_grid) if f \
                else compose_bounds(comps, max_size=max_grid)
        except GridTooLargeError:
            continue
    return None


def join_report(bounds: dict, kind: str, x: float) -> "dict | None":
    """Which end the join (upper) or the meet (lower) set after the maximum over the
    directions of ``bounds`` (``kind`` ``"epsilon"`` or ``"delta"`` at ``x``), with
    both brackets; ``None`` when no direction was joined."""
    js = [b for b in bounds.values() if isinstance(b, JoinedBounds)]
    if not js:
        return None
    base = [getattr(b.base, kind)(x) for b in js]
    joined = [getattr(b.joined, kind)(x) for b in js]
    lo_b, up_b = max(t[0] for t in base), max(t[2] for t in base)
    lo_j, up_j = max(t[0] for t in joined), max(t[2] for t in joined)
    return {"upper": up_j < up_b, "lower": lo_j > lo_b, "envelopes": (lo_b, up_b),
            "joined": (lo_j, up_j)}


@dataclass(frozen=True, eq=False)
class JoinedBounds:
    """The composed envelopes of one direction (``base``, :mod:`.envelopes`) and of its
    join and meet (``joined``); each query keeps the smaller upper end and the larger
    lower end (both hold on the same event).  ``up``/``low``/``est``/``tail_bound``
    are the base's (the seed method reads them)."""

    base: object
    joined: object
    details: dict = field(default_factory=dict)

    @property
    def up(self):
        return self.base.up

    @property
    def low(self):
        return self.base.low

    @property
    def est(self):
        return self.base.est

    def tail_bound(self, a: float) -> float:
        return self.base.tail_bound(a)

    @staticmethod
    def _best(b: tuple, j: tuple) -> tuple[float, float, float]:
        lo, up = max(b[0], j[0]), min(b[2], j[2])
        lo = min(lo, up)
        return lo, min(max(b[1], lo), up), up

    def delta(self, eps: float) -> tuple[float, float, float]:
        return self._best(self.base.delta(eps), self.joined.delta(eps))

    def epsilon(self, delta: float) -> tuple[float, float, float]:
        return self._best(self.base.epsilon(delta), self.joined.epsilon(delta))
