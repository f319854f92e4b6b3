"""Issue 30 item 5: the false-alarm rate of verify's exit status on the correct examples, family-wise over its checks,
is at most VERIFY_LEVEL = 1%. 100 root seeds per paper (20240221-20240320), `--noise own`, every conformance check but
exact (deterministic: the examples conform on the tape, test_verify*.py; tape mode adds only that check, so this is
the rate of both modes). Pooled over the four papers, 400 runs: the test fails when the exit-3 count reaches the
smallest k with P(>= k | 1%) <= 1% (k = 10), which a 5% rate reaches with probability 0.996 (both computed below).

Opt-in (DPVERIFY_MEASURE=1): about 75 minutes of both cores (7.9-30 minutes a paper), more than CI's whole budget, so
the suite reports it skipped. `docs/measurements/verify_false_alarms.py` prints the same measurement per paper."""

import os

import joblib
import pytest
from scipy.stats import binom

from dpverify.reproductions.bench.verify import implementation_of
from dpverify.theory.claims import Verdict
from dpverify.theory.verify.conformance import VERIFY_LEVEL

PAPERS = ("dp-recal", "wang-basar", "zcdp-nfl", "dpdo-nc")
SEEDS = range(20240221, 20240321)
CHECKS = ("accounting", "replay", "noise-scale", "noise-law", "distribution", "privacy")
TEST_LEVEL = 0.01     # the chance that this test fails when the rate is VERIFY_LEVEL


def exit_status_of(paper: str, seed: int) -> tuple[int, int, list[str]]:
    """(seed, exit status, the checks that refuted) of verify on the paper's correct example."""
    from dpverify.reproductions.verify.command import verify

    result = verify(paper, implementation_of(paper)[0], seed=seed, noise="own", checks=CHECKS, claims=False)
    return seed, result.exit_status, sorted(k for k, v in result.verdicts.items() if v == Verdict.REFUTED)


def alarm_threshold(runs: int) -> int:
    """The smallest count k with P(X >= k) <= TEST_LEVEL for X ~ Binomial(runs, VERIFY_LEVEL)."""
    return next(k for k in range(runs + 1) if binom.sf(k - 1, runs, VERIFY_LEVEL) <= TEST_LEVEL)


def test_the_threshold_holds_the_level_and_catches_five_percent():
    runs = len(PAPERS) * len(SEEDS)
    k = alarm_threshold(runs)
    assert k == 10 and binom.sf(k - 1, runs, VERIFY_LEVEL) <= TEST_LEVEL < binom.sf(k - 2, runs, VERIFY_LEVEL)
    assert binom.sf(k - 1, runs, 0.05) > 0.99


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("DPVERIFY_MEASURE") != "1",
                    reason="a measurement of about 75 minutes on 2 cores; DPVERIFY_MEASURE=1 runs it")
def test_the_exit_status_false_alarms_at_most_one_percent_on_correct_code():
    rows = joblib.Parallel(n_jobs=2)(joblib.delayed(exit_status_of)(paper, seed) for paper in PAPERS for seed in SEEDS)
    alarms = [row for row in rows if row[1] != 0]
    assert len(alarms) < alarm_threshold(len(rows)), alarms
