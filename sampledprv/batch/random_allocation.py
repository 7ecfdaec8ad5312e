r"""Random allocation (``k`` of ``T`` steps) and balls-and-bins batch sampling.

In one epoch of ``T`` steps every record takes part in exactly ``selected = k`` steps,
chosen uniformly among the :math:`\binom Tk` subsets, independently of the other
records; each step releases its batch's sum plus noise.  ``k = 1`` is balls-and-bins
sampling (Chua, Ghazi, Kamath, Kumar, Manurangsi, Sinha, Zhang, "Balls-and-Bins
Sampling for DP-SGD", AISTATS 2025, arXiv 2412.16802); general ``k`` is the random
allocation of Feldman and Shenfeld ("Privacy Amplification by Random Allocation",
arXiv 2502.08202).  Compose ``E`` epochs with ``compose(spec, count=E)``.

Dominating pair (design notes, "Batch samplers: random allocation"): with the step
pair :math:`(A, B)` of the base noise (:math:`A` centred at the sensitivity, :math:`B`
at 0; Gaussian by default),

.. math:: P = \binom Tk^{-1}\sum_{|S|=k} A^{\otimes S}\otimes B^{\otimes S^c},
          \qquad Q = B^{\otimes T},

remove loss :math:`L = \log e_k(e^{\ell(x_1)},\dots,e^{\ell(x_T)}) - \log\binom Tk`
under :math:`P`, add loss :math:`-L` under :math:`Q`.  The privacy loss has no
closed-form law: only :class:`~sampledprv.SampledAccountant` accounts these specs (the
analytic accountant refuses them, naming it); their fused Numba sampler is
:mod:`sampledprv.sampled.draws.allocation`, their Renyi bounds (exact in the remove
direction for ``k = 1``, proven in both directions for every ``k``) are
:mod:`sampledprv.rdp.allocation` and bound the unseen tail without any premise.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any, Callable, Dict, Optional

from ..core.formatting import spec_number as _g
from ..core import validation as v
from ..mechanisms.base import Mechanism
from ..mechanisms.gaussian import Gaussian
from ..mechanisms.generalized_gaussian import GeneralizedGaussian
from ..mechanisms.laplace import Laplace
from ..mechanisms.registry import CliKind, Family, method_hooks, register
from ..rdp import allocation as ra
from ..rdp.allocation_reduction import block_counts
from ..sampled.certification import tilted_laws
from ..sampled.certification.conditional import ConditionalRemove
from ..sampled.draws import allocation as al

__all__ = ["RandomAllocation", "BallsAndBins", "NoClosedFormError", "no_closed_form_law"]

#: most terms ``steps * selected`` of one sampled draw of the loss (memory and time)
MAX_STEP_TERMS = 10 ** 7

#: How the tail bounds of these specs are described in an interval's ``method``.
TAIL_SOURCE = ("proven Renyi bounds of random allocation (remove: exact occupancy moments at "
               "integer orders, the block reduction or Hoeffding's comparison beyond the exact "
               "recursion's budget; "
               "add: Jensen's inequality)")


class NoClosedFormError(TypeError, ValueError):
    """A spec whose privacy loss has no closed-form law (sample it instead)."""


def no_closed_form_law(compose_call: str):
    """The ``loss_pair`` hook of a family without a closed-form law: it raises
    :class:`NoClosedFormError` pointing to the sampled accountant, with ``compose_call``
    the argument list of the ``compose`` to use (``"spec, count=epochs"``)."""
    def loss_pair(spec: Any):
        raise NoClosedFormError(
            f"{spec!r} has no closed-form privacy-loss law, so the analytic Accountant "
            "cannot account it: use sp.SampledAccountant (its fused sampler and proven "
            "Renyi tail bounds give certified intervals), e.g. "
            f"sp.SampledAccountant(n_samples=10**7).compose({compose_call})")
    return loss_pair


#: the hooks a batch sampler's spec implements (its family's record names them)
SAMPLED_HOOKS = ("loss_sampler", "numpy_loss_sampler", "torch_loss_sampler", "conditional",
                 "renyi")


def _step_base(base: Any) -> Any:
    if isinstance(base, (Gaussian, Laplace)):
        return base
    if isinstance(base, GeneralizedGaussian):
        if base.dimension != 1:
            raise ValueError(f"base={base!r}: random allocation takes one-dimensional "
                             "GeneralizedGaussian steps (dimension=1)")
        return base
    raise ValueError(f"base must be a Gaussian, Laplace or one-dimensional "
                     f"GeneralizedGaussian spec (the noise of each step), got {base!r}")


@dataclass(frozen=True)
class RandomAllocation(Mechanism):
    r"""One epoch of random allocation: each record in ``selected`` of ``steps`` steps.

    Parameters
    ----------
    sigma : float or None
        Standard deviation of the Gaussian noise of each step (units of the query);
        ``None`` when ``base`` is given.
    steps : int
        Steps per epoch :math:`T` (>= 1).
    selected : int
        Steps each record takes part in, :math:`1 \le k \le T` (default 1:
        balls-and-bins).
    sensitivity : float
        Per-record L2 sensitivity of each step's sum (Gaussian steps; default 1).
    base : Gaussian, Laplace or GeneralizedGaussian, optional
        The noise of each step with its own sensitivity, instead of ``sigma``/
        ``sensitivity``; e.g. ``base=sp.Laplace(2.0)``.

    Notes
    -----
    Neighbouring relation: add/remove only (under substitution the record's steps
    are the same on both datasets and there is no amplification to certify).
    For Gaussian steps with :math:`\mu = \Delta/\sigma` the remove loss is
    :math:`\log e_k(e^{\mu z_t + \mu^2 [t \le k] - \mu^2/2}) - \log\binom Tk` with
    :math:`z` standard normal, i.e. the formula
    :math:`\log e_k(e^{x_t/\sigma^2}) - \log\binom Tk - k/(2\sigma^2)` of the
    literature at :math:`\Delta = 1`.
    """

    sigma: Optional[float]
    steps: int
    selected: int = 1
    sensitivity: float = 1.0
    base: Any = None

    #: read by PoissonSubsampled/FixedSizeSubsampled, which refuse to wrap a batch scheme
    batch_scheme = "random allocation: each record in `selected` of `steps` steps"

    def __post_init__(self) -> None:
        object.__setattr__(self, "steps", v.positive_int("steps", self.steps))
        object.__setattr__(self, "selected", v.positive_int("selected", self.selected))
        if self.steps * self.selected > MAX_STEP_TERMS:
            raise ValueError(
                f"steps * selected = {self.steps * self.selected:,} exceeds "
                f"{MAX_STEP_TERMS:,}: every sampled draw of the loss sums one term per "
                f"step and selected (the elementary symmetric sum), so steps="
                f"{self.steps:,} cannot run in memory and time; use steps <= "
                f"{MAX_STEP_TERMS // self.selected:,} for selected={self.selected}")
        if self.selected > self.steps:
            raise ValueError(f"selected must be at most steps={self.steps} (each record is "
                             f"in `selected` of the `steps` steps of an epoch), got "
                             f"{self.selected}")
        if self.base is None:
            if self.sigma is None:
                raise ValueError("give sigma (Gaussian steps) or base= (the step's noise "
                                 "spec, e.g. sp.Laplace(1.0))")
            object.__setattr__(self, "sigma", v.positive("sigma", self.sigma))
            object.__setattr__(self, "sensitivity",
                               v.positive("sensitivity", self.sensitivity))
        else:
            if self.sigma is not None:
                raise ValueError(f"give either sigma or base, not both (sigma={self.sigma!r}, "
                                 f"base={self.base!r})")
            if self.sensitivity != 1.0:
                raise ValueError("with base=, give the sensitivity in the base spec "
                                 f"(base={self.base!r}), not as sensitivity=")
            object.__setattr__(self, "base", _step_base(self.base))

    # -- the step pair ----------------------------------------------------------------
    @functools.cached_property
    def step(self) -> Any:
        """The base step spec (``Gaussian(sigma, sensitivity)`` unless ``base`` is set;
        made once per spec: the Renyi bounds ask for it at every order)."""
        return self.base if self.base is not None else Gaussian(self.sigma, self.sensitivity)

    def _kernel_params(self, direction: str):
        st = self.step
        if isinstance(st, Gaussian):
            kind, d, beta = al.BASE_GAUSS, st.mu, 2.0
        elif isinstance(st, Laplace):
            kind, d, beta = al.BASE_LAPLACE, st.sensitivity / st.scale, 1.0
        elif st.beta == 1.0:
            kind, d, beta = al.BASE_LAPLACE, st.sensitivity / st.scale, 1.0
        elif st.beta == 2.0:     # GG(2, s) is N(0, s^2/2)
            kind, d, beta = al.BASE_GAUSS, math.sqrt(2.0) * st.sensitivity / st.scale, 2.0
        else:
            kind, d, beta = al.BASE_GG, st.sensitivity / st.scale, float(st.beta)
        return kind, d, beta

    # -- hooks of the sampled accountant (sampledprv.sampled.draws.hooks) -----------------
    def loss_sampler(self, direction: str) -> tuple:
        """``(fill, params)``: the fused Numba sampler of the loss in ``direction``."""
        kind, d, beta = self._kernel_params(direction)
        return al.allocation_fill, al.allocation_params(self.steps, self.selected, kind, d,
                                                        beta, direction)

    def numpy_loss_sampler(self, direction: str) -> Callable:
        """``sample(rng, size)``: the compiled sampler on streams seeded from ``rng``."""
        kind, d, beta = self._kernel_params(direction)
        return al.allocation_numpy_sampler(
            al.allocation_params(self.steps, self.selected, kind, d, beta, direction))

    def torch_loss_sampler(self, direction: str) -> Callable:
        """``f(generator, size)``: the loss on a torch device (Gaussian/Laplace steps)."""
        kind, d, beta = self._kernel_params(direction)
        return al.allocation_torch_sampler(self.steps, self.selected, kind, d, beta,
                                           direction)

    # -- tail information: proven Renyi bounds ------------------------------------------
    def renyi(self, order: float, direction: str) -> float:
        r"""Upper bound on :math:`D_\alpha` of the dominating pair (nats).

        ``"remove"``: :math:`D_\alpha(P\|Q)`, exact (up to outward rounding) at
        integer orders: the multinomial expansion for ``selected = 1``, the occupancy
        recursion of :mod:`sampledprv.rdp.occupancy` for ``selected > 1`` within its
        budget, the smaller of the block reduction (:mod:`sampledprv.rdp.allocation_reduction`)
        and Hoeffding's comparison bound beyond it; chords between integers;
        ``inf`` when neither applies.  ``"add"``:
        :math:`D_\alpha(Q\|P) \le k D_{1+(\alpha-1)k/T}(B\|A)`
        (:mod:`sampledprv.rdp.allocation`)."""
        a = float(order)
        if not a > 1.0:
            raise ValueError(f"order must be > 1, got {order!r}")
        if direction == "remove":
            return ra.remove_divergence(a, self.steps, self.selected, self.step)
        if direction == "add":
            return ra.add_divergence(a, self.steps, self.selected, self.step)
        raise ValueError(f"direction must be 'remove' or 'add', got {direction!r}")

    def conditional(self, direction: str) -> Any:
        """The conditional sampler of the remove loss of balls-and-bins with Gaussian
        steps (:class:`~sampledprv.sampled.certification.conditional.ConditionalRemove`:
        the record's step integrated exactly, the others sampled), else ``None``."""
        if direction != "remove" or self.selected != 1 or self.steps < 2:
            return None
        kind, d, _ = self._kernel_params(direction)
        if kind != al.BASE_GAUSS:
            return None
        return ConditionalRemove(self.steps, d)

    def dominating_compositions(self, conditional: bool = True) -> tuple:
        r"""``((name, ((spec, count), ...)), ...)``: compositions whose pair dominates
        this spec's in both directions (every :math:`\delta(\varepsilon)` and Renyi
        order), for the sampled accountant's "every valid bound" (empty for
        ``selected = 1``).  ``k``-of-``T`` allocation is dominated by balls-and-bins over
        ``k`` blocks of :math:`\lfloor T/k\rfloor` or :math:`\lceil T/k\rceil` steps
        (:mod:`sampledprv.rdp.allocation_reduction`).  ``conditional=False``: blocks
        whose remove direction is sampled plainly (cheaper; for a caller that bounds
        the remove direction otherwise, e.g. by tilted draws)."""
        if self.selected == 1:
            return ()
        counts = block_counts(self.steps, self.selected)
        cls = BallsAndBins if conditional else PlainBallsAndBins
        blocks = tuple((cls(self.sigma, size, 1, self.sensitivity, self.base), count)
                       for size, count in counts)
        sizes = "/".join(str(size) for size, _ in counts)
        return ((f"block reduction ({self.selected} of {self.steps} steps <= balls-and-bins "
                 f"over {self.selected} blocks of {sizes} steps, Feldman-Shenfeld)",
                 blocks),)

    def tilted_law(self, order: int, count: int = 1) -> Any:
        r"""The tilted law :math:`P_a` of ``count`` epochs, remove direction
        (:func:`sampledprv.sampled.certification.tilted_laws.allocation_law`), for
        Gaussian steps; ``None`` for other steps (their tilted step law is not a
        Gaussian) and where the stored recursion would be too large."""
        kind, d, _ = self._kernel_params("remove")
        if kind != al.BASE_GAUSS or self.selected == 1:
            return None
        if not tilted_laws.storable(int(order), self.steps, self.selected):
            return None
        return tilted_laws.allocation_law(d, self.steps, self.selected, int(order), count)

    @property
    def tail_source(self) -> str:
        return TAIL_SOURCE

    def describe(self) -> str:
        k = "balls-and-bins" if self.selected == 1 else f"{self.selected} of"
        return f"random allocation ({k} {self.steps} steps) of {self.step!r}"


@dataclass(frozen=True)
class BallsAndBins(RandomAllocation):
    """Balls-and-bins sampling: :class:`RandomAllocation` with ``selected=1`` (each record
    in one uniformly chosen step of the epoch; Chua et al., AISTATS 2025).

    The bin is **redrawn every epoch**: ``compose(spec, count=E)`` is ``E`` independent
    epochs.  jax_privacy's ``BallsInBinsSampling`` keeps one bin for the whole run (the
    record takes part every ``steps`` steps from its bin); that sampler is
    ``sp.MatrixMechanism(sigma, E * steps, sp.FixedBin(steps), c_col=(1.0,))`` (with any
    banded ``c_col`` for matrix-factorization training), which equals one balls-and-bins
    epoch with noise ``sigma / sqrt(E)``: much less private than ``E`` fresh epochs."""

    def __post_init__(self) -> None:
        if self.selected != 1:
            raise ValueError(f"BallsAndBins has selected=1, got selected={self.selected!r}; "
                             "use RandomAllocation(sigma, steps, selected=k) for k of T")
        super().__post_init__()


@dataclass(frozen=True)
class PlainBallsAndBins(BallsAndBins):
    """:class:`BallsAndBins` sampled without the conditional envelope (its remove loss
    drawn plainly): the blocks of a block reduction whose remove direction is bounded
    by other means (:meth:`RandomAllocation.dominating_compositions`)."""

    def conditional(self, direction: str) -> Any:
        return None


def _build(p: Dict[str, Any]) -> RandomAllocation:
    base = None
    sens = p.get("sensitivity", 1.0)
    if "scale" in p:          # Laplace (beta absent or 1) or GG steps
        beta = p.get("beta", 1.0)
        base = Laplace(p["scale"], sens) if beta == 1.0 else \
            GeneralizedGaussian(beta, p["scale"], sens)
        return RandomAllocation(None, int(p["steps"]), int(p.get("selected", 1)), base=base)
    if "sigma" not in p:
        raise ValueError("random allocation needs sigma= (Gaussian steps) or scale= "
                         "(Laplace steps; with beta= Generalized Gaussian steps)")
    return RandomAllocation(p["sigma"], int(p["steps"]), int(p.get("selected", 1)), sens)


def _build_bb(p: Dict[str, Any]) -> BallsAndBins:
    if p.get("selected", 1) != 1:
        raise ValueError("balls-and-bins has selected=1; use random-allocation ... "
                         "selected=k for k of T steps")
    m = _build(p)
    return BallsAndBins(m.sigma, m.steps, 1, m.sensitivity, m.base)



def _format(m: RandomAllocation) -> str:
    st = m.step
    if isinstance(st, Gaussian):
        noise = f"sigma={_g(st.sigma)}"
    elif isinstance(st, Laplace):
        noise = f"scale={_g(st.scale)}"
    else:
        noise = f"scale={_g(st.scale)} beta={_g(st.beta)}"
    sens = "" if st.sensitivity == 1.0 else f" sensitivity={_g(st.sensitivity)}"
    if isinstance(m, BallsAndBins):
        return f"balls-and-bins {noise} steps={m.steps}{sens}"
    sel = "" if m.selected == 1 else f" selected={m.selected}"
    return f"random-allocation {noise} steps={m.steps}{sel}{sens}"


FAMILY = register(Family(
    name="random_allocation", types=(RandomAllocation, BallsAndBins, PlainBallsAndBins),
    loss_pair=no_closed_form_law("spec, count=epochs"),
    cli=(CliKind("balls-and-bins", (("sigma", "scale"), ("steps",)),
                 ("sensitivity", "beta"), ("sigma", "scale"),
                 "balls-and-bins sigma=1 steps=100",
                 "each record in 1 uniformly chosen step of an epoch of `steps` (compose "
                 "epochs with -c); sampled accountant only", _build_bb,
                 aliases=("balls-bins", "bnb"), integers=("steps",)),
         CliKind("random-allocation", (("sigma", "scale"), ("steps",)),
                 ("selected", "sensitivity", "beta"), ("sigma", "scale"),
                 "random-allocation sigma=0.55 steps=391 selected=5",
                 "each record in `selected` uniformly chosen steps of an epoch; scale= "
                 "(beta=) for Laplace (GG) steps; sampled accountant only", _build,
                 aliases=("k-of-t", "allocation"), integers=("steps", "selected"))),
    format=_format,
    relations_note="add/remove only",
    # no closed-form law and no kind code of the built-in kernel: the spec samples itself
    # through the hooks of sampledprv.sampled.draws.hooks (the methods of the spec, so
    # that PlainBallsAndBins's own conditional is the one called)
    extras={"sampled_only": True},
    # the proven Renyi bounds of the spec bound the unseen tail of the sampled accountant
    # and answer sampledprv.rdp.renyi_divergence (quadrature-like: anchors only)
    renyi_costly=True, **method_hooks(*SAMPLED_HOOKS, "dominating_compositions",
                                      "tilted_law")))
