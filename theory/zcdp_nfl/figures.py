"""Checks of what Sec. 5 of zCDP-NFL says its figures show, on the reproduced results.

The results table comes from reproductions (context.experiments[figure id]; the claim's `needs`
declares it). Comparisons are paired (same graph, data and replica index), at n = T, by a one-sided
Wilcoxon signed-rank test per eps in each direction; the rule paired_dominance (declared in
claims.py) decides with Holm across eps (family = one claim, level SIGNIFICANCE): confirmed if the
claimed direction is significant at every eps; refuted if the opposite direction is significant at
some eps; otherwise inconclusive (too few runs to tell).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from dpverify.theory.claims import Measurement, NothingToMeasure
from dpverify.theory.execution import CheckContext
from dpverify.theory.instruments.stats import SIGNIFICANCE, holm, paired_comparison


def _final_pairs(results: pd.DataFrame, better: str, worse: str) -> dict[float, tuple[np.ndarray, np.ndarray]]:
    final = results[results.iteration == results.iteration.max()]
    pairs = {}
    for epsilon, group in final.groupby("epsilon"):
        table = group.pivot_table(index=["instance", "replica"], columns="algorithm", values="normalized_error")
        if better in table and worse in table:
            pairs[float(epsilon)] = (table[better].to_numpy(), table[worse].to_numpy())
    return pairs


def outperforms(figure: str, better: str, worse: str, caveat: str = "",
                surrogate: str = "") -> Callable[[CheckContext], Measurement]:
    """A check: `better` has a lower normalized error than `worse` at n = T, at every eps (rule
    paired_dominance: `p_claimed`, `p_opposite` per eps). `caveat` names a harness default the
    comparison depends on; it is printed with the evidence. `surrogate` says why `worse` is not the paper's
    algorithm but a stand-in: then the comparison is outside the claim (inconclusive, whichever way it goes)."""

    def check(context: CheckContext) -> Measurement:
        pairs = _final_pairs(context.experiments[figure], better, worse)
        if not pairs:
            raise NothingToMeasure(f"{figure} has no paired runs of {better} and {worse}")
        claimed = {eps: paired_comparison(a, b, alternative="less") for eps, (a, b) in pairs.items()}
        opposite = {eps: paired_comparison(a, b, alternative="greater") for eps, (a, b) in pairs.items()}
        p_claimed = [r.p_value for r in claimed.values()]
        p_opposite = [r.p_value for r in opposite.values()]
        values = {f"eps={eps:g}": {"p_claimed": r.p_value, "p_opposite": opposite[eps].p_value,
                                   "median_ratio": float(np.median(pairs[eps][0] / pairs[eps][1])),
                                   "fraction_better": r.fraction_less, "pairs": len(pairs[eps][0])}
                  for eps, r in claimed.items()}
        values["significance_familywise"] = SIGNIFICANCE
        ratios = ", ".join(f"ε={eps:g}: {np.median(a / b):.2g}" for eps, (a, b) in pairs.items())
        if any(holm(p_opposite, SIGNIFICANCE)):
            what = "the opposite is significant at some eps"
        elif all(holm(p_claimed, SIGNIFICANCE)):
            what = "significant at every eps"
        else:
            what = "not significant at every eps with these runs"
        values["caveat"] = caveat or "none"
        return Measurement(f"{better} vs {worse}, median error ratio {ratios}; {what} "
                           f"(Wilcoxon, Holm, α={SIGNIFICANCE})" + (f". Caveat: {caveat}" if caveat else ""),
                           {"p_claimed": p_claimed, "p_opposite": p_opposite, **values}, outside=surrogate)

    return check
