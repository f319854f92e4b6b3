"""Checks of the DP-RECAL attack statements (seeds/001 Figs. 4, 7, 8, 9; seeds/000 Fig. 5) and of
"no additional protection is required for the passing of x^{k+1}" (v1:L264).

They read the reproduced results table (context.experiments[figure id], from
reproductions/dp_recal/attacks.py); without it: not-run. Criteria, fixed before any result was seen:

* "effective reconstruction" (RECAL, App. A inference, batch-1 targets): median PSNR over targets
  >= EFFECTIVE_PSNR_DB (20 dB, features in [0, 1]). Below: refuted.
* "meaningless noise" (DP-RECAL, App. A inference, batch-1 targets): a reconstruction that carries
  information about its record is closer to it than to the other targets' records. Per target
  d = PSNR(own record) - mean PSNR(other records); one-sided Wilcoxon signed-rank test of
  H1: median(d) > MARGIN_DB (1 dB) at level SIGNIFICANCE (0.05). Rejected: refuted (the
  reconstruction identifies its record); not rejected with >= MIN_TARGETS targets: confirmed;
  fewer targets: inconclusive (the exact test cannot reach 0.05).
* Fig. 9 "converges to zero" (RECAL): median final MSE <= ZERO_MSE (1e-6); "remained consistently
  large" (DP-RECAL): at every snapshot the median MSE >= LARGE_FRACTION (1/2) x its value at the
  dummy init.
* x-leak: the statement is refuted if, on DP-RECAL, the x-based inference recovers the noise-free
  gradient (max relative error <= EXACT_TOLERANCE = 1e-6 on the revealed coordinates) on at least
  REVEALED_FRACTION (10 %) of the coordinates of some target; confirmed if no coordinate is revealed.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from dpverify.theory.claims import Evidence, Verdict
from dpverify.theory.execution import CheckContext
from dpverify.theory.stats import paired_comparison

EFFECTIVE_PSNR_DB = 20.0
MARGIN_DB = 1.0
SIGNIFICANCE = 0.05
MIN_TARGETS = 5          # the exact one-sided signed-rank test reaches p = 1/32 < 0.05 from 5 pairs
ZERO_MSE = 1e-6
LARGE_FRACTION = 0.5
EXACT_TOLERANCE = 1e-6
REVEALED_FRACTION = 0.10

CheckFunction = Callable[[CheckContext], tuple[Verdict, Evidence]]


def _rows(context: CheckContext, figure: str, dataset: str, mechanism: str, inference: str,
          kind: str = "record") -> tuple[pd.DataFrame | None, tuple[Verdict, Evidence] | None]:
    if figure not in context.experiments:
        return None, (Verdict.NOT_RUN, Evidence(f"{figure} not reproduced in this run (`dpverify reproduce` checks it)"))
    results = context.experiments[figure]
    here = results[results.dataset == dataset]
    if here.empty:
        return None, (Verdict.NOT_RUN, Evidence(f"{figure}: {dataset} was not part of this run"))
    if (here.status == "data not available").all():
        return None, (Verdict.NOT_RUN, Evidence(f"{dataset}: data not available ({here.reason.iloc[0]})"))
    rows = here[(here.mechanism == mechanism) & (here.inference == inference) & (here.target_kind == kind)
                & here.psnr.notna()]
    if rows.empty:
        return None, (Verdict.NOT_RUN, Evidence(f"{figure}/{dataset}: no {mechanism} {inference} {kind} reconstructions"))
    return rows, None


def effective_reconstruction(figure: str, dataset: str) -> CheckFunction:
    """RECAL: median PSNR of the batch-1 reconstructions >= 20 dB (the full-local-gradient value is reported)."""

    def check(context: CheckContext) -> tuple[Verdict, Evidence]:
        rows, early = _rows(context, figure, dataset, "recal", "app-a")
        if early:
            return early
        median = float(rows.psnr.median())
        local, _ = _rows(context, figure, dataset, "recal", "app-a", "local")
        local_text = (f"; full local gradient (mean over m_i records): median PSNR to the closest record "
                      f"{local.psnr.median():.1f} dB" if local is not None else "")
        values = {"median_psnr_db": median, "psnr_db": rows.psnr.round(2).tolist(), "threshold_db": EFFECTIVE_PSNR_DB,
                  "targets": len(rows), "label_accuracy": float((rows.label == rows.true_label).mean()),
                  "local_median_psnr_db": None if local is None else float(local.psnr.median())}
        verdict = Verdict.CONFIRMED if median >= EFFECTIVE_PSNR_DB else Verdict.REFUTED
        return verdict, Evidence(f"{dataset}, RECAL, batch-1 targets: median PSNR {median:.1f} dB over {len(rows)} "
                                 f"targets (criterion >= {EFFECTIVE_PSNR_DB:g} dB){local_text}", values)

    return check


def meaningless_noise(figure: str, dataset: str, inference: str = "app-a") -> CheckFunction:
    """DP-RECAL: the reconstructions do not identify their records (module docstring)."""

    def check(context: CheckContext) -> tuple[Verdict, Evidence]:
        rows, early = _rows(context, figure, dataset, "dp-recal", inference)
        if early:
            return early
        gain = (rows.psnr - rows.psnr_other).to_numpy()
        test = paired_comparison(gain, np.full(gain.size, MARGIN_DB), alternative="greater")
        values = {"psnr_db": rows.psnr.round(2).tolist(), "psnr_other_db": rows.psnr_other.round(2).tolist(),
                  "median_gain_db": float(np.median(gain)), "p_value": test.p_value, "margin_db": MARGIN_DB,
                  "level": SIGNIFICANCE, "targets": len(rows), "inference": inference}
        text = (f"{dataset}, DP-RECAL ({inference} inference): median PSNR {rows.psnr.median():.1f} dB to the own record vs "
                f"{rows.psnr_other.median():.1f} dB to other records (gain {np.median(gain):.2f} dB); one-sided Wilcoxon "
                f"H1 gain > {MARGIN_DB:g} dB: p = {test.p_value:.3g} (level {SIGNIFICANCE:g}, {len(rows)} targets)")
        if test.p_value < SIGNIFICANCE:
            return Verdict.REFUTED, Evidence(text + ": the reconstructions identify their records", values)
        if len(rows) < MIN_TARGETS:
            return Verdict.INCONCLUSIVE, Evidence(text + f": fewer than {MIN_TARGETS} targets, the test has no power", values)
        return Verdict.CONFIRMED, Evidence(text + ": no better than an unrelated record", values)

    return check


def mse_converges_to_zero(figure: str = "figure-9", dataset: str = "ijcnn1") -> CheckFunction:
    def check(context: CheckContext) -> tuple[Verdict, Evidence]:
        rows, early = _rows(context, figure, dataset, "recal", "app-a")
        if early:
            return early
        final = float(rows.mse.median())
        values = {"median_final_mse": final, "threshold": ZERO_MSE, "mse": rows.mse.tolist(), "targets": len(rows)}
        verdict = Verdict.CONFIRMED if final <= ZERO_MSE else Verdict.REFUTED
        return verdict, Evidence(f"{dataset}, RECAL: median final DLG MSE {final:.3g} over {len(rows)} targets "
                                 f"(criterion <= {ZERO_MSE:g})", values)

    return check


def mse_remains_large(figure: str = "figure-9", dataset: str = "ijcnn1") -> CheckFunction:
    def check(context: CheckContext) -> tuple[Verdict, Evidence]:
        rows, early = _rows(context, figure, dataset, "dp-recal", "app-a")
        if early:
            return early
        traces = np.median(np.stack([np.asarray(t) for t in rows.mse_trace]), axis=0)
        ratio = float(traces.min() / traces[0])
        values = {"median_mse_trace": traces.tolist(), "min_over_init": ratio, "threshold": LARGE_FRACTION}
        verdict = Verdict.CONFIRMED if ratio >= LARGE_FRACTION else Verdict.REFUTED
        return verdict, Evidence(f"{dataset}, DP-RECAL: median MSE from {traces[0]:.3g} (dummy init) to {traces[-1]:.3g}; "
                                 f"minimum {ratio:.2f} x the init (criterion >= {LARGE_FRACTION:g})", values)

    return check


def x_needs_no_protection(figure: str = "figure-4", dataset: str = "mnist") -> CheckFunction:
    """v1:L264: 'no additional protection is required for the passing of x^{k+1}'."""

    def check(context: CheckContext) -> tuple[Verdict, Evidence]:
        if figure not in context.experiments:
            return Verdict.NOT_RUN, Evidence(f"{figure} not reproduced in this run")
        results = context.experiments[figure]
        rows = results[(results.dataset == dataset) & (results.status == "ok")]
        rows = rows[rows.inference == "x-leak"]
        if rows.empty:
            return Verdict.NOT_RUN, Evidence(f"{figure}/{dataset}: no x-leak inference in this run")
        exact = (rows.gradient_max_rel_error <= EXACT_TOLERANCE) & (rows.revealed_fraction >= REVEALED_FRACTION)
        values = {"revealed_fraction": rows.revealed_fraction.round(3).tolist(),
                  "gradient_max_rel_error": rows.gradient_max_rel_error.tolist(), "sigma1": float(rows.sigma1.iloc[0]),
                  "reconstruction_psnr_db": rows.psnr.round(2).tolist(), "tolerance": EXACT_TOLERANCE,
                  "fraction_threshold": REVEALED_FRACTION}
        summary = (f"{dataset}, DP-RECAL (sigma_1 = {rows.sigma1.iloc[0]:.3g}): from x^k, u~^k, x^{{k+1}} the eavesdropper "
                   f"inverts (7b) and recovers the NOISE-FREE gradient on a median {rows.revealed_fraction.median():.0%} of "
                   f"the coordinates (max relative error {rows.gradient_max_rel_error.max():.2g}) for {int(exact.sum())}/"
                   f"{len(rows)} targets; DLG on it: median PSNR {rows.psnr.median():.1f} dB")
        if exact.any():
            return Verdict.REFUTED, Evidence(summary, values)
        if (rows.revealed_fraction == 0).all():
            return Verdict.CONFIRMED, Evidence(summary + ": nothing revealed", values)
        return Verdict.INCONCLUSIVE, Evidence(summary, values)

    return check
