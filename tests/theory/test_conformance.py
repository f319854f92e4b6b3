"""theory/conformance.py: the runs the statistical checks take are enough for the noise-scale check's intervals to
be as narrow as SCALE_HALF_WIDTH, for every paper's verification setting (the widths of these exact intervals do
not depend on the draws, only on their number, so this is a deterministic check of the sample-size rule)."""

import numpy as np
import pytest
import scipy.stats

from dpverify.reproductions.experiments import parameters_of
from dpverify.reproductions.verify import suite_of
from dpverify.theory.conformance import (
    REPLICAS,
    SCALE_HALF_WIDTH,
    _families,
    _standardized,
    replicas_for,
    scale_interval,
    transcript,
)
from dpverify.theory.execution import CheckContext
from dpverify.theory.stats import SIGNIFICANCE


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
