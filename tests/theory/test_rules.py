"""Known answers for every rule (theory/rules.py): a true case confirms, a false case refutes, and
for the statistical rules, over 400 seeds of a true null on the boundary, the refute rate (and for
equivalence the false-confirm rate) stays within the stated level. Each of those rate assertions is a
one-sided binomial test at 0.001: a valid rule fails it with probability at most 0.001, and the
seeds are fixed, so the outcome is reproducible."""

import numpy as np
import pytest
import scipy.stats

from dpverify.theory import rules
from dpverify.theory.claims import Check, Measurement, Method, Verdict
from dpverify.theory.execution import CheckContext
from dpverify.theory.instruments.stats import SIGNIFICANCE, mean_interval

SEEDS = 400
META_LEVEL = 0.001


def decide(rule, **values):
    return rule.decide(Measurement("known answer", values))


def assert_rate_within_level(events: int, level: float) -> None:
    p = scipy.stats.binomtest(events, SEEDS, level, alternative="greater").pvalue
    assert p > META_LEVEL, f"{events}/{SEEDS} = {events / SEEDS:.3f} exceeds the level {level}"


def test_significance_is_set_once():
    assert rules.SIGNIFICANCE == SIGNIFICANCE == 0.05


def test_exact():
    assert decide(rules.exact(), holds=True) == Verdict.CONFIRMED
    assert decide(rules.exact(), holds=False) == Verdict.REFUTED


def test_within_tolerance():
    rule = rules.within_tolerance(1e-6)
    assert decide(rule, excess=-3.0, scale=2.0) == Verdict.CONFIRMED
    assert decide(rule, excess=1.5e-6, scale=2.0) == Verdict.CONFIRMED     # 1.5e-6 <= 1e-6 * 2
    assert decide(rule, excess=3e-6, scale=2.0) == Verdict.REFUTED
    assert decide(rules.within_tolerance(0.0, relative=False), excess=[0.0, 1e-12]) == Verdict.REFUTED


def test_interval_rules_known_answers():
    below, above = rules.interval_below(1.0), rules.interval_above(1.0)
    assert decide(below, intervals={"a": (0.2, 0.8), "b": (0.5, 0.9)}) == Verdict.CONFIRMED
    assert decide(below, intervals={"a": (0.2, 0.8), "b": (1.0, 1.3)}) == Verdict.REFUTED
    assert decide(below, intervals={"a": (0.2, 1.2)}) == Verdict.INCONCLUSIVE
    assert decide(above, intervals={"a": (1.1, 1.4)}) == Verdict.CONFIRMED
    assert decide(above, intervals={"a": (0.1, 0.9)}) == Verdict.REFUTED
    assert decide(above, intervals={"a": (0.9, 1.1)}) == Verdict.INCONCLUSIVE


def test_interval_below_null_refute_rate():
    """The claim 'mean < 1' at its boundary (true mean exactly 1): refuted at most at the level."""
    rule = rules.interval_below(1.0)
    refuted = 0
    for seed in range(SEEDS):
        sample = np.random.default_rng(seed).normal(1.0, 1.0, size=30)
        refuted += decide(rule, intervals={"mean": mean_interval(sample)}) == Verdict.REFUTED
    assert_rate_within_level(refuted, SIGNIFICANCE)


def test_paired_dominance_known_answers():
    rule = rules.paired_dominance()
    assert decide(rule, p_claimed=[1e-4, 1e-3, 0.01], p_opposite=[0.99, 0.9, 0.8]) == Verdict.CONFIRMED
    assert decide(rule, p_claimed=[0.9, 1e-3], p_opposite=[1e-4, 0.9]) == Verdict.REFUTED
    assert decide(rule, p_claimed=[0.2, 1e-3], p_opposite=[0.8, 0.9]) == Verdict.INCONCLUSIVE
    # Holm: three p-values of 0.02 are not all significant at a family-wise 0.05
    assert decide(rule, p_claimed=[0.02, 0.02, 0.02], p_opposite=[0.9] * 3) == Verdict.INCONCLUSIVE


def test_paired_dominance_null_refute_rate():
    """A beats B at three grid points, at the boundary (A = B in law): refuted at most at the level."""
    rule = rules.paired_dominance()
    a, b = np.stack([np.random.default_rng(seed).normal(size=(2, 3, 20)) for seed in range(SEEDS)], axis=1)
    claimed = scipy.stats.ttest_rel(a, b, axis=-1, alternative="less").pvalue        # (SEEDS, 3)
    opposite = scipy.stats.ttest_rel(a, b, axis=-1, alternative="greater").pvalue
    refuted = sum(decide(rule, p_claimed=c, p_opposite=o) == Verdict.REFUTED for c, o in zip(claimed, opposite))
    assert_rate_within_level(refuted, SIGNIFICANCE)


def test_equivalence_known_answers():
    rule = rules.equivalence(0.1)
    assert decide(rule, intervals={"d": (-0.05, 0.04)}) == Verdict.CONFIRMED
    assert decide(rule, intervals={"d": (0.12, 0.3)}) == Verdict.REFUTED
    assert decide(rule, intervals={"d": (-0.05, 0.2)}) == Verdict.INCONCLUSIVE
    with pytest.raises(ValueError):
        rules.equivalence(0.0)


@pytest.mark.parametrize("difference, wrong", [(0.1, Verdict.CONFIRMED), (0.0, Verdict.REFUTED)])
def test_equivalence_error_rates(difference, wrong):
    """At the margin the claim is false: confirmed at most at the level (TOST). Inside it the claim is
    true: never refuted beyond the level."""
    rule = rules.equivalence(0.1)
    errors = 0
    for seed in range(SEEDS):
        d = np.random.default_rng(seed).normal(difference, 0.2, size=50)
        errors += decide(rule, intervals={"d": mean_interval(d, 2 * SIGNIFICANCE)}) == wrong
    assert_rate_within_level(errors, SIGNIFICANCE)


def test_calibrated_noise_refutes_less_noise_than_promised_whatever_the_margin():
    rule = rules.calibrated_noise(0.1)

    def verdict(low, high, upper):
        return decide(rule, intervals={"round 1": (low, high)}, upper_bounds={"round 1": upper})
    assert verdict(-0.05, 0.04, 0.05) == Verdict.CONFIRMED
    assert verdict(-0.101, -0.073, -0.06) == Verdict.REFUTED     # [0.904, 0.93], upper bound below 1: less noise
    assert verdict(-0.043, -0.0004, 0.01) == Verdict.CONFIRMED   # [0.958, 1.0) but not below 1 at the strict level
    assert verdict(-0.05, 0.2, 0.25) == Verdict.INCONCLUSIVE
    assert verdict(0.02, 0.2, 0.25) == Verdict.INCONCLUSIVE      # more noise: accuracy only
    assert verdict(0.12, 0.3, 0.35) == Verdict.REFUTED


def test_audit_lower_bound_never_confirms():
    rule = rules.audit_lower_bounds()
    assert decide(rule, lower_bounds={"eps": (1.3, 1.0)}) == Verdict.REFUTED
    assert decide(rule, lower_bounds={"eps": (0.9, 1.0)}) == Verdict.INCONCLUSIVE


def test_rule_is_printed_as_data():
    record = rules.interval_below(0.6).as_record()
    assert record["name"] == "interval-below" and record["parameters"] == {"limit": 0.6, "level": SIGNIFICANCE}
    assert "0.6" in record["sentence"]


def test_check_declares_its_needs():
    calls = []
    check = Check("fig", Method.STATISTICAL, lambda context: calls.append(1) or Measurement("m", {"holds": True}),
                  rule=rules.exact(), needs=("figure-1",))
    result = check.execute(CheckContext())
    assert result.verdict == Verdict.NOT_RUN and "figure-1 not reproduced" in result.evidence.summary and not calls
    result = check.execute(CheckContext(experiments={"figure-1": None}))
    assert result.verdict == Verdict.CONFIRMED and calls == [1] and result.rule.name == "exact"


def test_mean_interval_matches_statsmodels():
    from statsmodels.stats.weightstats import DescrStatsW

    sample = np.random.default_rng(7).normal(2.0, 3.0, size=25)
    assert np.allclose(mean_interval(sample, 0.05), DescrStatsW(sample).tconfint_mean(0.05), rtol=1e-12)


def test_check_needs_any_of_several():
    check = Check("fig", Method.STATISTICAL, lambda context: Measurement("m", {"holds": True}), rule=rules.exact(),
                  needs=(("figure-1", "long-horizon"),))
    missing = check.execute(CheckContext())
    assert missing.verdict == Verdict.NOT_RUN and "figure-1 or long-horizon not reproduced" in missing.evidence.summary
    assert check.execute(CheckContext(experiments={"long-horizon": None})).verdict == Verdict.CONFIRMED


def test_audit_lower_bounds_refutes_or_is_inconclusive():
    rule = rules.audit_lower_bounds()
    assert decide(rule, lower_bounds={"eps": (0.8, 1.0), "rho": (0.06, 0.05)}) == Verdict.REFUTED
    assert decide(rule, lower_bounds={"eps": (0.8, 1.0), "rho": (0.05, 0.05)}) == Verdict.INCONCLUSIVE
    probe = rules.audit_lower_bounds(relative_tolerance=1e-9)
    assert decide(probe, lower_bounds={"sensitivity": (1.0 + 1e-12, 1.0)}) == Verdict.INCONCLUSIVE
    assert decide(probe, lower_bounds={"sensitivity": (1.0 + 1e-6, 1.0)}) == Verdict.REFUTED
    with pytest.raises(ValueError):
        rules.audit_lower_bounds(relative_tolerance=-1.0)


def test_reported_neither_confirms_nor_refutes():
    rule = rules.reported()
    assert decide(rule) == Verdict.INCONCLUSIVE
    assert decide(rule, holds=True, epsilon=13.8) == Verdict.INCONCLUSIVE
    assert decide(rule, holds=False) == Verdict.INCONCLUSIVE
    assert rule.as_record() == {"name": "reported", "parameters": {"why": "the paper claims nothing here; the measured "
                                                                    "values are reported"}, "sentence": rule.sentence}


def test_fits_identity_known_answers():
    rule = rules.fits_identity(0.02)
    small, large = {"a": 0.01, "b": 0.019}, {"a": 0.01, "b": 0.03}
    assert decide(rule, p_values=[0.3, 0.8, 0.04], deviations=small) == Verdict.CONFIRMED   # Holm: 3 x 0.04 > 0.05
    assert decide(rule, p_values=[0.3, 0.8, 0.04], deviations=large) == Verdict.INCONCLUSIVE  # not rejected, not shown
    assert decide(rule, p_values=[0.3, 0.8, 1e-4], deviations=small) == Verdict.REFUTED
    assert decide(rule, p_values=[], deviations=small) == Verdict.INCONCLUSIVE
    assert decide(rule, p_values=[0.3], deviations={}) == Verdict.INCONCLUSIVE
    assert decide(rules.fits_identity(0.02, level=0.01), p_values=[0.3, 0.006], deviations=small) == Verdict.CONFIRMED
    assert rule.as_record()["parameters"] == {"margin": 0.02, "level": SIGNIFICANCE, "correction": "Holm"}
    with pytest.raises(KeyError, match="deviations"):
        decide(rule, p_values=[0.3])
    with pytest.raises(ValueError):
        rules.fits_identity(0.0)


LAW = np.array([0.1, 0.2, 0.3, 0.4])
FIT_MARGIN = 0.02     # as the walk checks' WALK_MARGIN: a probability off by 0.02 matters


def _law_fit(counts: np.ndarray, law: np.ndarray = LAW, level: float = SIGNIFICANCE) -> dict:
    """What the walk checks measure: a chi-square test per row of counts and Goodman's simultaneous bound on
    max_i |p_i - law_i|, Bonferroni over the rows."""
    from dpverify.theory.dp_recal.activation import probability_deviation

    return {"p_values": scipy.stats.chisquare(counts, counts.sum(axis=1, keepdims=True) * law, axis=1).pvalue,
            "deviations": {f"row {i}": probability_deviation(c, law, level / len(counts)) for i, c in enumerate(counts)}}


@pytest.mark.parametrize("samples, shift, verdict", [
    (40_000, 0.0, Verdict.CONFIRMED),        # the law holds, and 40000 draws per row bound every deviation < 0.02
    (200, 0.0, Verdict.INCONCLUSIVE),        # the law holds, but 200 draws cannot rule out 0.02: not rejected, not shown
    (2_000, 0.05, Verdict.REFUTED),          # the law is off by 0.05 in two probabilities
])
def test_fits_identity_on_sampled_laws(samples, shift, verdict):
    """Known answers on multinomial samples, 2 rows of a 4-point law, seed 0 (about 0.01 s)."""
    true_law = LAW + shift * np.array([1, -1, 0, 0])
    counts = np.random.default_rng(0).multinomial(samples, true_law, size=2)
    assert decide(rules.fits_identity(FIT_MARGIN), **_law_fit(counts)) == verdict


def test_fits_identity_null_refute_rate():
    """Samples drawn from the stated law (chi-square goodness of fit of 4 laws, 200 draws each): refuted at most at
    the level (about 1.5 s)."""
    rule = rules.fits_identity(FIT_MARGIN)
    refuted = 0
    for seed in range(SEEDS):
        counts = np.random.default_rng(seed).multinomial(200, LAW, size=4)
        refuted += decide(rule, **_law_fit(counts)) == Verdict.REFUTED
    assert_rate_within_level(refuted, SIGNIFICANCE)


def test_fits_identity_deviation_bounds_cover_and_a_law_at_the_margin_is_not_confirmed():
    """The sampled law is 0.1 from the stated one (in p_3 and p_4), 300 draws per row, 2 rows, 400 seeds: the
    simultaneous bound the walk checks compute lies below the true distance 0.1 at most at the level (a bound
    without the estimate's own distance, or a pointwise one, fails this: its half-width alone is about 0.08), and
    the rule with margin 0.1 ('within 0.1', false here) confirms at most at the level (about 1 s)."""
    rule = rules.fits_identity(0.1)
    true_law = LAW + 0.1 * np.array([0, 0, 1, -1])
    missed = confirmed = 0
    for seed in range(SEEDS):
        fit = _law_fit(np.random.default_rng(seed).multinomial(300, true_law, size=2))
        missed += min(fit["deviations"].values()) < 0.1
        confirmed += decide(rule, **fit) == Verdict.CONFIRMED
    assert_rate_within_level(missed, SIGNIFICANCE)
    assert_rate_within_level(confirmed, SIGNIFICANCE)


def test_counterexample_and_proof_searches_decide_one_way_only():
    assert decide(rules.counterexample(), found=True) == Verdict.REFUTED
    assert decide(rules.counterexample(), found=False) == Verdict.INCONCLUSIVE
    assert decide(rules.proof(), proved=True) == Verdict.CONFIRMED
    assert decide(rules.proof(), proved=False) == Verdict.INCONCLUSIVE
    assert decide(rules.reported("phi has existence-only constants"), anything=1) == Verdict.INCONCLUSIVE
    assert rules.reported("phi has existence-only constants").sentence.endswith("phi has existence-only constants")



def test_worst_case_equality_refutes_a_bound_printed_as_an_equality():
    rule = rules.worst_case_equality()
    assert decide(rule, exceeded=False, attained=True) == Verdict.CONFIRMED       # the supremum, reached
    assert decide(rule, exceeded=False, attained=False) == Verdict.REFUTED        # only a bound (dp-recal lemma-5)
    assert decide(rule, exceeded=True, attained=True) == Verdict.REFUTED          # violated (wang-basar (31))
    assert decide(rule, exceeded=False, attained=None) == Verdict.INCONCLUSIVE    # a probe below it proves nothing


def test_interval_below_with_a_fit_floor():
    rule = rules.interval_below(0.0, min_r_squared=0.95)
    assert decide(rule, intervals={"a": (-2.0, -1.0)}, r_squared={"a": 0.99}) == Verdict.CONFIRMED
    assert decide(rule, intervals={"a": (-2.0, -1.0)}, r_squared={"a": 0.90}) == Verdict.INCONCLUSIVE  # not log-linear
    assert decide(rule, intervals={"a": (0.1, 0.3)}, r_squared={"a": 0.50}) == Verdict.REFUTED        # a bad fit may refute
    assert rule.as_record()["parameters"] == {"limit": 0.0, "level": SIGNIFICANCE, "min_r_squared": 0.95}


def test_converges_known_answers():
    rule = rules.converges(1e-3)

    def case(upper, final, stalled):
        return {"final_upper": upper, "final": final, "stalled": stalled}
    assert decide(rule, cases={"a": case(5e-4, 4e-4, False), "b": case(9e-4, 1e-4, False)}) == Verdict.CONFIRMED
    assert decide(rule, cases={"a": case(5e-4, 4e-4, False), "b": case(0.3, 0.2, True)}) == Verdict.REFUTED    # plateau
    assert decide(rule, cases={"a": case(np.inf, np.inf, True)}) == Verdict.REFUTED                            # diverged
    assert decide(rule, cases={"a": case(0.3, 0.2, False)}) == Verdict.INCONCLUSIVE         # still decreasing above it
    assert decide(rule, cases={"a": case(2e-3, 5e-4, False)}) == Verdict.INCONCLUSIVE       # the bound straddles it
    assert decide(rule, cases={"a": case(5e-4, 4e-4, True)}) == Verdict.INCONCLUSIVE        # below, but no decrease shown
    assert decide(rule, cases={}) == Verdict.INCONCLUSIVE


def test_converges_null_refute_rate():
    """Runs that do converge to exactly the threshold at the horizon (the boundary), measured as the
    zCDP-NFL check measures them (mean over 10 noisy replicas on a 12-point grid, Mann-Kendall trend): the
    rule refutes them at most at the level."""
    from dpverify.theory.instruments.stats import mann_kendall, one_sided_upper_mean_bound

    rule, threshold = rules.converges(1e-3), 1e-3
    grid = np.geomspace(20, 2000, 12)
    curve = threshold * grid[-1] / grid
    refuted = 0
    for seed in range(SEEDS):
        rng = np.random.default_rng(seed)
        runs = curve * rng.lognormal(0.0, 0.5, size=(10, grid.size))
        trend = mann_kendall(runs.mean(axis=0))
        final = runs[:, -1]
        cases = {"run": {"final_upper": one_sided_upper_mean_bound(final, 1 - SIGNIFICANCE, rng=rng),
                         "final": float(final.mean()), "stalled": trend[2] != "decreasing"}}
        refuted += decide(rule, cases=cases) == Verdict.REFUTED
    assert_rate_within_level(refuted, SIGNIFICANCE)


def test_separated_below_known_answers():
    rule = rules.separated_below()
    assert decide(rule, samples={"x": ([10, 11, 12], [20, 21, 25])}) == Verdict.CONFIRMED
    assert decide(rule, samples={"x": ([10, 11, 22], [20, 21, 25])}) == Verdict.INCONCLUSIVE   # the replicas overlap
    assert decide(rule, samples={"x": ([10, 11, 12], [20, 21, 25]), "y": ([30, 31], [30, 29])}) == Verdict.REFUTED
    assert decide(rule, samples={}) == Verdict.INCONCLUSIVE


def test_a_measurement_outside_the_claims_conditions_is_inconclusive_whatever_the_rule():
    check = Check("printed", Method.NUMERICAL, lambda context: Measurement("RE 1e-3 vs 1e-15", {"holds": False},
                                                                          outside="not at the printed sizes"),
                  rule=rules.exact())
    result = check.execute(CheckContext())
    assert result.verdict == Verdict.INCONCLUSIVE
    assert result.evidence.summary.startswith("Outside the claim's conditions (not at the printed sizes)")


@pytest.mark.parametrize("holds, verdict", [(True, Verdict.INCONCLUSIVE), (False, Verdict.REFUTED)])
def test_a_degenerate_instance_cannot_confirm_but_can_refute(holds, verdict):
    """The trap of a degenerate optimum (RE 0 vs 0 at x* = 0): the rule's confirmation is not earned."""
    check = Check("near", Method.NUMERICAL, lambda context: Measurement("RE 0 vs 0", {"holds": holds},
                                                                       cannot_confirm="x* = 0 on mnist"),
                  rule=rules.exact())
    result = check.execute(CheckContext())
    assert result.verdict == verdict
    assert result.evidence.summary.startswith("The rule confirms, but this instance could not have refuted the claim "
                                              "(x* = 0 on mnist): inconclusive. ") == holds


@pytest.mark.parametrize("holds, verdict", [(True, Verdict.CONFIRMED), (False, Verdict.INCONCLUSIVE)])
def test_a_weak_attack_of_ours_cannot_refute_but_its_success_confirms(holds, verdict):
    check = Check("attack", Method.NUMERICAL, lambda context: Measurement("PSNR 13.9 dB", {"holds": holds},
                                                                         cannot_refute="our attack"), rule=rules.exact())
    result = check.execute(CheckContext())
    assert result.verdict == verdict
    assert result.evidence.summary.startswith("The rule refutes, but this is not a witness against the claim "
                                              "(our attack): inconclusive. ") != holds


def test_a_verdict_that_flips_between_readings_is_inconclusive_and_says_where():
    """The trap of a default-dependent flip: refuted under one reading, confirmed under the other."""
    def measured(*holds):
        readings = {f"reading {i}": Measurement(f"holds {h}", {"holds": h}) for i, h in enumerate(holds)}
        return Check("x", Method.NUMERICAL, lambda context: Measurement("law of i_1", {}, readings=readings,
                                                                       depends_on="the law of i_1"),
                     rule=rules.exact()).execute(CheckContext())
    flips = measured(False, True)
    assert flips.verdict == Verdict.INCONCLUSIVE
    assert flips.evidence.summary == ("Depends on the law of i_1 (reading 0: refuted; reading 1: confirmed): inconclusive. "
                                      "law of i_1 | reading 0: holds False | reading 1: holds True")
    assert flips.evidence.values["readings"]["reading 0"] == {"verdict": "refuted", "holds": False}
    assert measured(False, False).verdict == Verdict.REFUTED and measured(True, True).verdict == Verdict.CONFIRMED


def test_a_value_the_claim_quantifies_over_refutes_at_any_instance():
    """Unlike a reading, a value the claim states no condition on (zcdp-nfl Theorem IV's rho): one refuting
    instance is a counterexample, and a confirmation needs every instance."""
    def measured(*holds):
        instances = {f"rho = {i}": Measurement(f"holds {h}", {"holds": h}) for i, h in enumerate(holds)}
        return Check("x", Method.NUMERICAL, lambda context: Measurement("rate", {}, instances=instances,
                                                                       for_every="rho > 0"),
                     rule=rules.exact()).execute(CheckContext())
    mixed = measured(False, True)
    assert mixed.verdict == Verdict.REFUTED
    assert mixed.evidence.summary == ("For every rho > 0 (rho = 0: refuted; rho = 1: confirmed): refuted. "
                                      "rate | rho = 0: holds False | rho = 1: holds True")
    assert mixed.evidence.values["instances"]["rho = 1"] == {"verdict": "confirmed", "holds": True}
    assert measured(True, True).verdict == Verdict.CONFIRMED and measured(False, False).verdict == Verdict.REFUTED


def test_nothing_to_measure_is_not_run():
    from dpverify.theory.claims import NothingToMeasure

    def run(context):
        raise NothingToMeasure("figure-1 has no paired runs of A and B")
    result = Check("pairs", Method.STATISTICAL, run, rule=rules.paired_dominance()).execute(CheckContext())
    assert result.verdict == Verdict.NOT_RUN and result.evidence.summary == "figure-1 has no paired runs of A and B"


def test_check_declares_its_datasets():
    """A dataset need is read against the datasets that the needed experiment's parameters request."""
    from dpverify.theory.execution import Parameters

    calls = []
    check = Check("table", Method.STATISTICAL, lambda context: calls.append(1) or Measurement("m", {"holds": True}),
                  rule=rules.exact(), needs=("table-4",), datasets=(("ijcnn1", "mnist", "cifar10"),))
    requested = {"table-4": Parameters("table-4", {"datasets": ["ijcnn1", "cifar10"]}, {"datasets": ("default", "")})}
    missing = {"ijcnn1": "ijcnn1.trn.bz2 not found", "mnist": "", "cifar10": "no CIFAR-10 directory"}
    result = check.execute(CheckContext(experiments={"table-4": None}, parameters=requested, datasets=missing))
    assert result.verdict == Verdict.NOT_RUN and not calls     # mnist is available but this run does not request it
    assert result.evidence.summary == ("data not available: ijcnn1: ijcnn1.trn.bz2 not found; cifar10: no CIFAR-10 "
                                       "directory")
    result = check.execute(CheckContext(experiments={"table-4": None}, parameters=requested,
                                        datasets={**missing, "ijcnn1": ""}))
    assert result.verdict == Verdict.CONFIRMED and calls == [1]
    assert check.execute(CheckContext(experiments={"table-4": None}, parameters=requested)).verdict == Verdict.NOT_RUN


def test_the_harness_records_the_parameters_a_check_read():
    from dpverify.theory.execution import Parameters, Task

    parameters = {"figure-1": Parameters("figure-1", {"rho": 0.1, "c1": 1.0, "T": 50},
                                         {"rho": ("paper", "L300"), "c1": ("default", "not stated"), "T": ("paper", "L301")}),
                  "figure-2": Parameters("figure-2", {"eps": 1.0}, {"eps": ("paper", "L302")})}

    def run(context):
        rho = context.parameters["figure-1"]["rho"]
        context.memoized("shared", lambda: context.parameters["figure-1"]["c1"])
        return Measurement("m", {"holds": rho > 0})

    def reuse(context):
        context.memoized("shared", lambda: None)    # a memo hit is credited with what the computation read
        Task("t", dict, {"values": context.parameters["figure-2"]})   # a task handed the mapping may read all of it
        return Measurement("m", {"holds": True})

    context = CheckContext(parameters=parameters)
    first = Check("a", Method.NUMERICAL, run, rule=rules.exact()).execute(context)
    assert first.parameters == {"figure-1/c1": {"value": 1.0, "source": "default", "note": "not stated"},
                                "figure-1/rho": {"value": 0.1, "source": "paper", "note": "L300"}}
    second = Check("b", Method.NUMERICAL, reuse, rule=rules.exact()).execute(context)
    assert set(second.parameters) == {"figure-1/c1", "figure-2/eps"}
