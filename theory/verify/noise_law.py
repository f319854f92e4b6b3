"""The law of the noise an implementation actually sent (`dpverify verify`'s noise-law check, issue 30).

From independent runs, the realized noise (message - state, each draw divided by the paper's calibrated scale)
is an array (R runs, T rounds, N agents, ...). A conforming implementation's draws are independent across
runs, rounds, agents and coordinates, centred, and of the paper's family (Laplace or Gaussian). Three parts,
each with a test that can refute and a simultaneous bound that can confirm (the rule fits_identity, every
bound in units of its own margin, so one margin of 1 serves them all):

- family: the pooled draws, self-normalized (the scale is the noise-scale check's), against the family's
  standard law, one-sample Kolmogorov-Smirnov; bound: the Kolmogorov distance + a DKW half-width;
- centre: per (round, agent, coordinate) a t test of the mean over the runs (refutes a bias in one entry),
  and per round and per agent the pooled mean, bounded simultaneously (confirms);
- independence: the correlation across runs of every pair of entries (Fisher's z, simultaneous), which is
  1 for noise reused across rounds, shared between agents, or drawn once and added every round; noise that
  is the same in every run (zero variance across runs) refutes on its own.

Why not the two-sample KS of each message against the reference's: it needs about 2,000 runs per side to
confirm anything (the distribution check), while these tests use every draw of every run.
"""

from __future__ import annotations

import numpy as np
import scipy.stats

# default margins: the deviation each part must rule out to confirm (plausible ranges in brackets)
FAMILY_MARGIN = 0.03        # Kolmogorov distance of the self-normalized law from the family's: Laplace vs Gaussian of
                            # equal variance is 0.05 apart [0.02-0.05]
# The two below are about the smallest deviations the default run counts (400-700 runs) can rule out for a conforming
# implementation at level 0.01, computed before verify's level became 0.0025 (conformance.CHECK_LEVEL: the widths grow
# by about 6%) (the bounds' widths, computed before any verdict: 3.6 sqrt(2) / sqrt(pooled draws) for a
# mean, tanh(~0.2 + 5.5 / sqrt(runs)) for ~15,000 correlations), rounded up.
CENTRE_MARGIN = 0.15        # |mean| of a round's or an agent's pooled draws, in calibrated scales [0.05-0.2]
CORRELATION_MARGIN = 0.6    # |correlation| of two entries across runs; reuse and sharing give 1 [0.3-0.7]


def _standard_law(kind: str):
    return scipy.stats.laplace if kind == "laplace" else scipy.stats.norm


def family_part(draws: np.ndarray, kind: str, level: float) -> tuple[float, float]:
    """(p, distance bound) of the pooled finite draws, divided by their own scale estimate, against the family."""
    draws = draws[np.isfinite(draws)]
    scale = np.mean(np.abs(draws)) if kind == "laplace" else np.sqrt(np.mean(draws ** 2))   # each law's MLE
    test = scipy.stats.kstest(draws / scale, _standard_law(kind).cdf)
    return float(test.pvalue), float(test.statistic + np.sqrt(np.log(2 / level) / (2 * draws.size)))


def centre_part(standard: np.ndarray, kind: str, level: float) -> tuple[np.ndarray, dict[str, float]]:
    """p values of a t test per entry (axis 0: runs), and simultaneous bounds on |mean| per round and per agent."""
    entries = standard.reshape(standard.shape[0], -1)
    entries = entries[:, np.isfinite(entries).all(axis=0)]
    p_values = scipy.stats.ttest_1samp(entries, 0.0, axis=0).pvalue if entries.size else np.array([])
    families = {f"round {t + 1}": standard[:, t] for t in range(standard.shape[1])}
    if standard.ndim > 3:
        families |= {f"agent {i}": standard[:, :, i] for i in range(standard.shape[2])}
    families = {label: draws[np.isfinite(draws)] for label, draws in families.items() if np.isfinite(draws).any()}
    z = scipy.stats.norm.ppf(1 - level / (2 * max(len(families), 1)))
    spread = np.sqrt(2.0) if kind == "laplace" else 1.0    # the standard deviation of a standardized draw
    bounds = {label: float(abs(draws.mean()) + z * spread / np.sqrt(draws.size)) for label, draws in families.items()}
    return np.nan_to_num(np.asarray(p_values, dtype=float), nan=1.0), bounds


def _pairs(shape: tuple[int, ...], keep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The pairs of kept entries (flat indices into the kept ones) that independence tests: the same coordinate at
    any two (round, agent) places (noise reused across rounds, shared between agents, or shifted), and any two
    coordinates of one (round, agent) (one draw spread over the coordinates). Pairs of different coordinates at
    different places are left out: a reuse that permutes coordinates is not a bug anyone writes, and the tests
    left out would cost power on the ones above."""
    index = np.full(keep.shape, -1)
    index[keep] = np.arange(int(keep.sum()))
    places = index.reshape(shape[0] * shape[1], -1)                 # (rounds x agents, coordinates)
    first, second = [], []
    for column in places.T:                                          # same coordinate, two places
        live = column[column >= 0]
        a, b = np.triu_indices(live.size, k=1)
        first.append(live[a]), second.append(live[b])
    for row in places:                                               # one place, two coordinates
        live = row[row >= 0]
        a, b = np.triu_indices(live.size, k=1)
        first.append(live[a]), second.append(live[b])
    return np.concatenate(first), np.concatenate(second)


def independence_part(standard: np.ndarray, level: float) -> tuple[np.ndarray, float, str]:
    """p values of the correlation across runs of each pair of entries (_pairs; Fisher's z), a simultaneous bound on
    the largest |correlation|, and the pair that reaches it; entries constant across runs give p = 0 (the same draw
    in every run)."""
    runs = standard.shape[0]
    entries = standard.reshape(runs, -1)
    keep = np.isfinite(entries).all(axis=0)
    entries = entries[:, keep]
    spread = entries.std(axis=0)
    if (spread == 0).any():
        return np.zeros(1), np.inf, "an entry whose noise is the same in every run"
    first, second = _pairs(standard.shape[1:], keep.reshape(standard.shape[1:]))
    centred = (entries - entries.mean(axis=0)) / spread
    r = np.clip(np.einsum("rp,rp->p", centred[:, first], centred[:, second]) / runs, -1 + 1e-15, 1 - 1e-15)
    p_values = 2 * scipy.stats.norm.sf(np.arctanh(np.abs(r)) * np.sqrt(runs - 3))
    worst = int(np.argmax(np.abs(r)))
    width = scipy.stats.norm.ppf(1 - level / (2 * max(r.size, 1))) / np.sqrt(runs - 3)
    bound = float(np.tanh(np.arctanh(abs(r[worst])) + width))
    labels = np.argwhere(keep.reshape(standard.shape[1:]))
    one, two = (tuple(int(i) for i in labels[side[worst]]) for side in (first, second))
    return p_values, bound, f"entries {one} and {two} (round, agent, ...; 0-based): r = {r[worst]:.3f}"


def measure(standard: np.ndarray, kind: str, level: float) -> tuple[str, dict]:
    """The three parts on standardized noise (R, T, N, ...), NaN where the paper adds no noise: an evidence line
    and the values fits_identity(1.0) reads (every bound divided by its own margin). Each part's bounds hold at
    level / 3, so the three together at `level`."""
    part = level / 3
    family_p, distance = family_part(standard, kind, part)
    centre_p, centres = centre_part(standard, kind, part)
    pair_p, correlation, where = independence_part(standard, part)
    worst_centre = max(centres, key=centres.get) if centres else None
    deviations = {"family (Kolmogorov distance / margin)": distance / FAMILY_MARGIN,
                  "independence (|correlation| / margin)": correlation / CORRELATION_MARGIN}
    if worst_centre:
        deviations["centre (|mean| / margin)"] = centres[worst_centre] / CENTRE_MARGIN
    p_values = np.concatenate([[family_p], centre_p, pair_p])
    line = (f"{standard.shape[0]} runs: family {kind}, self-normalized KS p = {family_p:.3g}, distance <= "
            f"{distance:.3g} (margin {FAMILY_MARGIN:g}); centre: {centre_p.size} entries, smallest t-test p = "
            f"{(centre_p.min() if centre_p.size else 1.0):.3g}, |mean| <= {centres.get(worst_centre, 0.0):.3g} at its "
            f"widest ({worst_centre}; margin {CENTRE_MARGIN:g}); independence: {pair_p.size} pairs, smallest p = "
            f"{pair_p.min():.3g}, |correlation| <= {correlation:.3g} at its largest, {where} (margin "
            f"{CORRELATION_MARGIN:g}); simultaneous {1 - level:.2%}, Holm over all {p_values.size} tests")
    return line, {"p_values": p_values.tolist(), "deviations": deviations, "smallest_p": float(p_values.min())}
