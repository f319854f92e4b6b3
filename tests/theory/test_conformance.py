"""theory/verify/conformance.py: the runs the statistical checks take are enough for the noise-scale check's intervals to
be as narrow as SCALE_HALF_WIDTH, for every paper's verification setting (the widths of these exact intervals do
not depend on the draws, only on their number, so this is a deterministic check of the sample-size rule)."""

import numpy as np
import pytest
import scipy.stats

from dpverify.reproductions.run.experiments import parameters_of
from dpverify.reproductions.verify.command import suite_of
from dpverify.theory.execution import CheckContext
from dpverify.theory.instruments.stats import SIGNIFICANCE
from dpverify.theory.verify.conformance import (
    REPLICAS,
    SCALE_HALF_WIDTH,
    _families,
    _standardized,
    replicas_for,
    scale_interval,
    transcript,
)


@pytest.mark.parametrize("kind", ["laplace", "normal"])
def test_the_interval_half_width_matches_the_normal_approximation_the_rule_uses(kind):
    rng = np.random.default_rng(0)
    n, confidence = 5000, 1 - 2 * SIGNIFICANCE / 20
    draws = rng.laplace(size=n) if kind == "laplace" else rng.normal(size=n)
    low, high = np.log(scale_interval(draws, kind, confidence))
    z = scipy.stats.norm.ppf(1 - SIGNIFICANCE / 20)
    assert (high - low) / 2 == pytest.approx(z / np.sqrt(n if kind == "laplace" else 2 * n), rel=0.01)


@pytest.mark.parametrize("paper", ["dpdo-nc", "zcdp-nfl", "wang-basar", "dp-recal"])
def test_every_noise_scale_interval_is_as_narrow_as_the_rule_asks(paper):
    suite = suite_of(paper)
    setting = suite.setting(CheckContext(profile="quick", parameters=parameters_of(paper, "quick")))
    replicas = replicas_for(suite, setting, "quick")
    assert replicas >= REPLICAS["quick"]
    runs = [suite.added_noise(transcript(suite.reference, setting, np.random.default_rng(r), suite.shapes))
            for r in range(replicas)]
    families = _families(_standardized(suite, setting, np.stack(runs)))
    confidence = 1 - 2 * SIGNIFICANCE / len(families)
    widest = max(np.diff(np.log(scale_interval(draws, suite.noise, confidence)))[0] / 2 for draws in families.values())
    assert widest <= SCALE_HALF_WIDTH * 1.01, (paper, replicas, widest, SCALE_HALF_WIDTH)


def test_the_kolmogorov_distance_bound_is_dkw_twice():
    """Known answer: D + 2 sqrt(log(4 K / level) / (2 n)) for K entries of two samples of n draws."""
    from dpverify.theory.verify.conformance import kolmogorov_distance_bounds

    half_width = np.sqrt(np.log(4 * 2 / 0.05) / (2 * 800))
    assert np.allclose(kolmogorov_distance_bounds([0.0, 0.05], 800, 800, 0.05), [2 * half_width, 0.05 + 2 * half_width],
                       rtol=1e-12)


def test_the_kolmogorov_distance_bound_covers_the_true_distance():
    """N(0, 1) against N(0.5, 1), Kolmogorov distance 2 Phi(0.25) - 1 = 0.197, 5 entries of 200 draws a side, 400
    replicates (seed 0): the simultaneous bound lies below the true distance in at most 5% of them (one-sided binomial
    test at 0.001), while the statistic alone does in most of them (so a bound without the DKW terms fails this).
    About 2 s (the exact p-values ks_2samp computes)."""
    from dpverify.theory.verify.conformance import kolmogorov_distance_bounds

    distance = 2 * scipy.stats.norm.cdf(0.25) - 1
    rng = np.random.default_rng(0)                                  # 400 replicates x 5 entries, one call
    statistics = scipy.stats.ks_2samp(rng.normal(0.0, 1.0, (200, 400, 5)), rng.normal(0.5, 1.0, (200, 400, 5)),
                                      axis=0).statistic                                        # (400, 5)
    bounds = np.stack([kolmogorov_distance_bounds(row, 200, 200) for row in statistics])
    missed = int(np.any(bounds < distance, axis=1).sum())
    statistic_missed = int(np.any(statistics < distance, axis=1).sum())
    assert scipy.stats.binomtest(missed, 400, SIGNIFICANCE, alternative="greater").pvalue > 0.001, missed
    assert statistic_missed > 100, statistic_missed


def test_the_distribution_margin_is_what_its_comment_says():
    """DISTRIBUTION_MARGIN = 0.1: the Kolmogorov distance of a Gaussian shifted by a quarter of its standard deviation,
    and of one whose scale is 1.5 times larger (both about 0.1)."""
    from dpverify.theory.verify.conformance import DISTRIBUTION_MARGIN

    x = np.linspace(-6, 6, 120_001)
    shifted = np.max(np.abs(scipy.stats.norm.cdf(x) - scipy.stats.norm.cdf(x - 0.25)))
    scaled = np.max(np.abs(scipy.stats.norm.cdf(x) - scipy.stats.norm.cdf(x / 1.5)))
    assert shifted == pytest.approx(DISTRIBUTION_MARGIN, abs=0.005) and scaled == pytest.approx(DISTRIBUTION_MARGIN, abs=0.005)
