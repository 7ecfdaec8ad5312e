"""Hash the loss histograms of every sampler kind, mode and direction (bit-identity check).

Writes a JSON of SHA-256 prefixes of the counts of ``loss_histogram`` at a fixed seed
(every built-in kind, twelve GG betas covering every power code, remove/add, subsampled
remove/add, symmetrized; parallel and serial) and two accountant intervals.  Run it on two
trees and compare the files to check that a change of the samplers or kernels leaves
every number unchanged::

    PYTHONPATH=/path/to/tree python scripts/dump_loss_histograms.py out.json [n]
"""
import hashlib, json, sys
import numpy as np
import sampledprv as sp
from sampledprv.sampled.histograms.kernels import loss_histogram
from sampledprv.mechanisms.substitution import SymmetricDominatingPair

bases = {
    "gauss": sp.Gaussian(2.0), "laplace": sp.Laplace(1.5),
    "rr": sp.RandomizedResponse(0.8), "pure": sp.PureDP(1.0), "approx": sp.ApproxDP(1.0, 1e-3),
    "dlap": sp.DiscreteLaplace(2.0), "dgauss": sp.DiscreteGaussian(2.0), "binom": sp.Binomial(20, 0.5),
    "logistic": sp.Logistic(1.5), "ggnmax": sp.GGNMax(1.5, 2.0),
}
for b in (1.0, 1.25, 1.3, 1.5, 1.75, 2.0, 2.5, 2.7, 3.0, 4.0, 5.5, 7.3):
    bases[f"gg{b}"] = sp.GeneralizedGaussian(beta=b, scale=2.0)
n = int(sys.argv[2]) if len(sys.argv) > 2 else 100_000
out = {}
def run(name, mech, direction, nt=None):
    try:
        hst = loss_histogram(mech, direction=direction, n=n, lo=-8.0, h=1 / 64, bins=1024,
                             seed=12345, n_threads=nt, progress=False)
    except Exception as e:      # record refusals too
        out[name] = "ERR " + type(e).__name__
        return
    arr = np.concatenate([np.asarray(hst.counts, dtype=np.int64),
                          np.array([hst.below, hst.above, hst.pos_inf, hst.neg_inf])])
    out[name] = hashlib.sha256(arr.tobytes()).hexdigest()[:16]
for k, m in bases.items():
    for d in ("remove", "add"):
        run(f"{k}/{d}", m, d)
        run(f"{k}/sub/{d}", sp.PoissonSubsampled(m, q=0.05), d)
    run(f"{k}/sym", SymmetricDominatingPair(sp.PoissonSubsampled(m, q=0.05)), "remove")
for k in ("gauss", "gg1.5", "gg2.7", "gg1.0"):
    run(f"{k}/sub/remove/serial", sp.PoissonSubsampled(bases[k], q=0.05), "remove", nt=1)
for k, m in (("gauss", sp.Gaussian(2.0)), ("gg", sp.PoissonSubsampled(sp.GeneralizedGaussian(beta=1.5, scale=2.0), q=0.01))):
    iv = sp.SampledAccountant(n_samples=200_000, progress=False).compose(m, count=10).epsilon(delta=1e-5)
    out[f"acc/{k}"] = [float(iv.lower), float(iv.upper)]
json.dump(out, open(sys.argv[1], "w"), indent=1, sort_keys=True)
print(len(out), "entries")
