"""The sampling subcommands: ``plan`` (samples the sampled accountant needs) and
``validate`` (Monte Carlo check of an analytic privacy-loss law)."""

from __future__ import annotations

import argparse
import sys

from .composition import build_setup
from .errors import EXIT_INTERNAL, EXIT_OK, PROG, UsageError
from .mechanism_strings import format_mechanism, parse_mechanism
from .output import composition_json, emit

__all__ = ["cmd_plan", "cmd_validate"]


def _auto_bins(k: int) -> int:
    """The bins ``SampledAccountant(bins="auto")`` uses for ``k`` compositions."""
    from ..sampled.certification.twolevel import bins_for

    return min(bins_for(max(1, k)), 2**23)      # 2**23: the accountant's default max_grid


def cmd_plan(args: argparse.Namespace) -> int:
    import sampledprv as sp

    s = build_setup(args, check_accountant=False)
    for spec, _ in s.mechanisms:
        if spec.kind == "shuffled":
            raise UsageError(
                "plan sizes the sampled accountant's draws, and shuffled batches are not "
                "sampled: they are accounted without samples (a certified lower end from "
                "the worst known pair, the deterministic-batch value as upper end); run "
                f"`{PROG} epsilon -m \"{format_mechanism(spec.build())}\" --delta ...`")
    deltas = args.delta or s.deltas
    if not deltas:
        raise UsageError("give --delta (e.g. --delta 1e-5)")
    if len(deltas) != 1:
        raise UsageError("plan takes one --delta")
    delta = deltas[0]
    alpha = s.alpha if s.alpha is not None else 1e-9
    mechs = [(spec.build(), c) for spec, c in s.mechanisms]
    k = sum(c for _, c in mechs)
    # the accountant's own default (bins="auto"): 4096 sqrt(k) as a power of two
    bins = s.bins if s.bins is not None else _auto_bins(k)
    hists = sum(1 if m.symmetric else 2 for m, _ in mechs)
    if args.target_width is not None and len(mechs) != 1:
        raise UsageError("--target-width runs a pilot for one mechanism: give a single "
                         "--mechanism (the floor is computed for any composition)")
    from ..sampled.certification.floor import tail_source

    tails = [tail_source(m, **s.tails.get(i, {})) for i, (m, _) in enumerate(mechs)]
    # the floor comes from the mechanisms whose unseen tail nothing bounds
    k_floor = sum(c for (_, c), t in zip(mechs, tails) if t is None)
    n_plain = sp.min_samples(k, delta, alpha=alpha, bins=bins, histograms=hists)
    n_min = sp.min_samples(k_floor, delta, alpha=alpha, bins=bins, histograms=hists) \
        if k_floor else 1
    plan = None
    n_at = getattr(args, "predict_n", None)
    workers = getattr(args, "workers", None)
    if (n_at is not None or workers is not None) and len(mechs) != 1:
        raise UsageError("--predict-n simulates one mechanism: give a single --mechanism")
    if workers is not None and workers < 1:
        raise UsageError(f"--workers must be >= 1, got {workers}")
    if n_at is not None and args.target_width is None:
        if n_at < 1:
            raise UsageError(f"--predict-n must be >= 1, got {n_at}")
        plan = sp.plan_samples(mechs[0][0], mechs[0][1], delta, alpha=alpha, bins=bins,
                               n=n_at, workers=workers, seed=s.seed or 0,
                               **s.tails.get(0, {}))
    if args.target_width is not None:
        if not args.target_width > 0:
            raise UsageError(f"--target-width must be > 0, got {args.target_width}")
        plan = sp.plan_samples(mechs[0][0], mechs[0][1], delta, alpha=alpha, bins=bins,
                               target_width=args.target_width, pilot_n=args.pilot_n,
                               seed=s.seed or 0, workers=workers, **s.tails.get(0, {}))
    auto = "" if s.bins is not None else f" (auto for k = {k:,})"
    text = [f"sample plan for the sampled accountant (alpha={alpha:g}, bins={bins:,}{auto}):"]
    text += [f"  {c:>8,} x {spec.text}" for spec, c in s.mechanisms]
    if k_floor:
        text += ["",
                 f"minimum n_samples for a finite upper bound on epsilon({delta:g}): {n_min:,}",
                 f"  (per histogram; {hists} histogram(s) -> {n_min * hists:,} draws in all)",
                 "  below it the unseen tail mass alone exceeds delta: about "
                 "k ln((2 bins + 3) H / alpha) / delta"
                 + ("" if k_floor == k else f" (k = {k_floor:,}: the compositions without a "
                    "Renyi bound or loss range)")]
    else:
        text += ["", "no sample floor: every mechanism's unseen tail is bounded by "
                 + " / ".join(dict.fromkeys(t for t in tails if t is not None))
                 + " (Chernoff's inequality); the width alone decides n_samples",
                 f"  (from the samples alone a finite upper bound on epsilon({delta:g}) "
                 f"would need n_samples >= {n_plain:,})"]
    n_target = None
    pred = None if plan is None else plan.prediction
    if plan is not None and args.target_width is not None:
        n_target = plan.n_target
        if n_target is None:
            text.append(f"target width {args.target_width:g}: the pilot ({plan.pilot_n:,} "
                        "samples) gave no finite bound; raise --pilot-n")
        else:
            text.append(f"n_samples for an epsilon interval about {args.target_width:g} wide: "
                        f"~{n_target:,} (extrapolated as n^-1/2 from a pilot of "
                        f"{plan.pilot_n:,} whose width was {plan.pilot_width:.4g}, corrected "
                        "by simulating the counts of the full run; an estimate, not a "
                        "guarantee)")
            if plan.n_per_direction is not None:
                nd = plan.n_per_direction
                text.append(f"  per direction: remove {nd['remove']:,}, add {nd['add']:,} "
                            f"(--n-samples {nd['remove']},{nd['add']}: each direction's own "
                            "pilot width extrapolated; the interval of the maximum is no "
                            "wider than the widest direction's)")
    if pred is not None:
        text.append(f"predicted certified width at n = {pred.n:,}: {pred.width:.4g} (median "
                    f"of {len(pred.widths)} simulated runs from {pred.source} bin "
                    f"probabilities; rounding part {pred.mesh_width:.3g})")
        text.append(f"expected sampling time: {pred.seconds_here:.3g} s here "
                    f"({pred.rate_here:.3g} draws/s measured)"
                    + (f", {pred.seconds_workers:.3g} s on {workers} single-core workers "
                       f"({pred.rate_per_core:.3g} draws/s per core)" if workers else ""))
    payload = {"command": "plan", "delta": delta, "alpha": alpha, "bins": bins,
               "compositions": k, "histograms": hists, "n_min": n_min,
               "tail_bounds": tails, "n_min_without_tail_bounds": n_plain,
               "total_draws_min": n_min * hists, "target_width": args.target_width,
               "n_target": n_target,
               "n_per_direction": None if plan is None else plan.n_per_direction,
               "pilot_n": None if plan is None else plan.pilot_n,
               "pilot_width": None if plan is None else plan.pilot_width,
               "predicted_n": None if pred is None else pred.n,
               "predicted_width": None if pred is None else pred.width,
               "predicted_seconds_here": None if pred is None else pred.seconds_here,
               "predicted_seconds_workers": None if pred is None else pred.seconds_workers,
               "workers": workers,
               "composition": composition_json(s)}
    emit(args, payload, text)
    return EXIT_OK


def cmd_validate(args: argparse.Namespace) -> int:
    import sampledprv as sp

    if len(args.mechanism or []) != 1:
        raise UsageError("validate checks one mechanism: give exactly one --mechanism")
    spec = parse_mechanism(args.mechanism[0])
    mech = spec.build()
    if not 0 < args.level < 1:
        raise UsageError(f"--level must lie in (0, 1), got {args.level}")
    rep = sp.validate(mech, args.n_samples, seed=args.seed, bins=args.bins,
                      progress=args.progress)
    ok = rep.passed(args.level)
    k = len(rep.per_direction)
    text = [f"validate {spec.text}: Monte Carlo check of the analytic privacy-loss law",
            f"  {rep.n:,} draws per direction; statistic: largest distance between the "
            "empirical and the analytic tail P[Y >= t] over the histogram edges"]
    for d, (st, p, loc) in rep.per_direction.items():
        text.append(f"  {d:>6s}: KS distance {st:.3g} at loss {loc:.4g}, p-value {p:.3g}")
    if k > 1:
        text.append(f"  combined p-value {rep.pvalue:.3g} = min(1, {k} x smallest per-direction "
                    f"p-value): Bonferroni correction, so that testing {k} directions does "
                    "not raise the false-alarm rate above the level")
    else:
        text.append(f"  p-value {rep.pvalue:.3g} (one direction: the law is symmetric)")
    text.append(f"  {'PASS' if ok else 'FAIL'} at level {args.level:g}: the "
                + ("samples are consistent with the analytic law (p-value >= level)" if ok
                   else "samples reject the analytic law (p-value < level): please report this"))
    power = rep.detectable(args.level)
    text.append(f"  power: at n = {rep.n:,} the test rejects a law whose tail probabilities "
                f"differ from the samples' by more than {power:.3g}; smaller errors pass "
                "(raise --n-samples to detect them: the distance shrinks as 1/sqrt(n))")
    payload = {"command": "validate", "mechanism": format_mechanism(mech),
               "n_samples": rep.n, "statistic": rep.statistic, "pvalue": rep.pvalue,
               "location": rep.location, "direction": rep.direction, "level": args.level,
               "passed": ok, "detectable_distance": power,
               "per_direction": {d: {"statistic": a, "pvalue": b, "location": c}
                                 for d, (a, b, c) in rep.per_direction.items()}}
    emit(args, payload, text)
    if not ok:
        print(f"{PROG} validate: the samples reject the analytic law at level "
              f"{args.level:g} (p-value {rep.pvalue:.3g})", file=sys.stderr)
        return EXIT_INTERNAL
    return EXIT_OK
