"""Symbolic checks of zCDP-NFL (seeds/004): verdicts and the numbers behind them.

A regression that flips a verdict or changes a reported counterexample fails here.
"""

import math
import re

import pytest

from dpverify.theory.claims import Verdict
from dpverify.theory.execution import CheckContext
from dpverify.theory.zcdp_nfl import symbolic as checks
from dpverify.theory.zcdp_nfl.claims import PAPER

_RESULTS: dict = {}


def run(name):
    """The check as declared in claims.py (its rule decides): (verdict, evidence)."""
    if name not in _RESULTS:
        check = next(c for claim in PAPER.claims for c in claim.checks if c.run is checks.SYMBOLIC_CHECKS[name])
        result = check.execute(CheckContext())
        _RESULTS[name] = result.verdict, result.evidence
    return _RESULTS[name]


def test_every_check_names_its_seed_lines():
    for name, function in checks.SYMBOLIC_CHECKS.items():
        assert function.__doc__ and re.search(r"\bL\d{2,3}\b", function.__doc__), name
    assert len(checks.SYMBOLIC_CHECKS) == 11


def test_primal_closed_form_confirmed():
    verdict, evidence = run("primal-closed-form")
    assert verdict == Verdict.CONFIRMED
    assert len(evidence.values["configurations"]) == 4
    assert all(row.count("proved") == 3 for row in evidence.values["configurations"])


def test_appendix_a_update_refuted_with_coefficients():
    verdict, evidence = run("appendix-a-update")
    values = evidence.values
    assert verdict == Verdict.REFUTED
    assert values["differing_terms_excluding_R_point"] == ["wt_k", "wt_1", "wt_2", "gamma_k"]
    assert values["data_term_coefficient_equal"] is True
    assert values["minimizer_of_7"] == pytest.approx(0.2, abs=1e-15)
    assert values["eq_25_printed"] == pytest.approx(-0.1, abs=1e-15)
    assert values["gradient_of_7_at_eq_25"] == pytest.approx(-1.5, abs=1e-15)
    assert values["objective_at_minimizer"] == pytest.approx(0.15, abs=1e-15)
    assert values["objective_at_eq_25"] == pytest.approx(0.375, abs=1e-15)
    rows = values["coefficients"]
    assert "|N_k|=2: coefficient of wt_k (times 2rho|N_k|+1/eta): derived 2*rho + 1/eta, printed rho + 1/eta  <-- differs" in rows
    assert "|N_k|=2: coefficient of gamma_k (times 2rho|N_k|+1/eta): derived -1, printed 1/2  <-- differs" in rows


def test_lemma_1_confirmed():
    verdict, evidence = run("lemma-1")
    values = evidence.values
    assert verdict == Verdict.CONFIRMED
    for key in ("difference_identity", "norm_identity", "cauchy_schwarz_lagrange_identity", "triangle_step", "bound_attained"):
        assert values[key] == "proved"
    assert values["decreasing_in"] == {"inv_eta": True, "rho": True, "N_k": True, "M_k": True}
    assert "no counterexample" in values["random_search"]


def test_theorem_1_gaussian_renyi_confirmed():
    verdict, evidence = run("theorem-1-gaussian-renyi")
    values = evidence.values
    assert verdict == Verdict.CONFIRMED
    assert values["symbolic_alpha"] == "proved" and values["two_dimensional"] == "proved" and values["eq_12"] == "proved"
    assert values["integer_alphas"] == {k: "proved" for k in range(2, 7)}
    assert values["gaussian_zcdp_0p3_0p7"] == pytest.approx(0.09 / 0.98, rel=1e-15)


def test_appendix_c_sum_refuted_smallest_counterexample():
    verdict, evidence = run("appendix-c-sum")
    values = evidence.values
    assert verdict == Verdict.REFUTED
    assert values["counterexample_T"] == 1
    assert values["counterexample_lhs"] == "0" and values["counterexample_rhs"] == "varphi1"
    assert values["T2_lhs_at_phi1_1_tau_half"] == 1.0 and values["T2_rhs_at_phi1_1_tau_half"] == 3.0
    assert values["closed_minus_printed_sum"] == "tau**(1 - T)*varphi1"
    assert all(row.endswith(": counterexample") for row in values["printed_range_0_lt_n_lt_T"])
    assert all(row.endswith(": proved") for row in values["range_1_to_T"])
    assert values["closed_form_limit_tau_to_1_at_T5"] == "5*varphi1"


def test_corollary_confirmed_with_range_1_to_T():
    verdict, evidence = run("corollary")
    values = evidence.values
    assert verdict == Verdict.CONFIRMED
    assert all(row.endswith(": proved") for row in values["range_1_to_T"])
    assert all(row.endswith(": counterexample") for row in values["range_0_lt_n_lt_T"])
    assert values["max_relative_error_numeric_grid"] < 1e-12
    assert values["round_trip_max_relative_error"] < 1e-12
    assert values["increasing_in_phi1"] is True and values["inversion"] == "proved"


def test_tradeoff_23_24_refuted_factor_K_and_tau():
    verdict, evidence = run("tradeoff-23-24")
    values = evidence.values
    assert verdict == Verdict.REFUTED
    assert values["ratio_23_over_24"] == "3" and values["K"] == 3
    assert values["term_23_at_point"] == 3.0 and values["term_24_at_point"] == 1.0
    assert values["sigma0_theorem_I_over_sigma0_in_23"] == "1/tau"
    assert values["status_23_vs_24"] == "counterexample" and values["status_sigma0"] == "counterexample"


def test_noise_term_22_refuted_for_increasing_eta_only():
    verdict, evidence = run("noise-term-22")
    values, table = evidence.values, evidence.values["table"]
    assert verdict == Verdict.REFUTED
    assert values["constant_eta_identity"] == "proved"
    assert values["Delta_decreasing_for_eta0_n^-p"] is True and values["Delta_increasing_for_eta0_n^p"] is True
    assert table["constant"]["noise_sum_over_printed"] == pytest.approx(1.0, abs=1e-9)
    assert table["eta0*n^-0.5"]["noise_sum_over_printed"] == pytest.approx(0.0702433244, rel=1e-6)
    assert table["eta0*n^-1"]["noise_sum_over_printed"] == pytest.approx(0.0283415335, rel=1e-6)
    assert table["eta0*n^-2"]["noise_sum_over_printed"] == pytest.approx(0.0211019396, rel=1e-6)
    assert table["eta0*n^1.1"]["noise_sum_over_printed"] == pytest.approx(16.1493094, rel=1e-6)
    assert table["eta0*n^2"]["noise_sum_over_printed"] == pytest.approx(17.9386956, rel=1e-6)
    assert table["eta0*n^2"]["spent_over_corollary_reading_a"] == pytest.approx(18.6567753, rel=1e-6)
    assert table["constant"]["Delta_1"] == pytest.approx(2 / (50 * (0.6 + 2)), rel=1e-15)
    assert values["printed_term_is_upper_bound"] == {"constant": True, "eta0*n^-0.5": True, "eta0*n^-1": True,
                                                     "eta0*n^-2": True, "eta0*n^1.1": False, "eta0*n^2": False}


def test_assumptions_3_4_refuted_incompatible():
    verdict, evidence = run("assumptions-3-4")
    values, table = evidence.values, evidence.values["table"]
    assert verdict == Verdict.REFUTED
    assert values["schedules_satisfying_both"] == [] and values["schedules_satisfying_both_weak_reading"] == []
    assert values["assumption_4_implies_assumption_3"] is False
    expected = {  # name: (A3, A4 series, A4 weak)
        "eta0*n^-1/2": (True, False, False), "eta0*n^-1": (True, False, False), "eta0*n^-2": (True, False, False),
        "constant eta0": (False, False, True), "eta0*n^(11/10)": (False, True, True), "eta0*n^2": (False, True, True)}
    for name, (a3, a4, weak) in expected.items():
        row = table[name]
        assert (row["assumption_3_eta_to_0"], row["assumption_4_series_converges"],
                row["assumption_4_weak_sequence_converges"]) == (a3, a4, weak), name
    assert values["lim_{eta->0+} 1/(2 eta)"] == "oo"


def test_identity_21_confirmed():
    verdict, evidence = run("identity-21")
    assert verdict == Verdict.CONFIRMED
    assert evidence.values["identity"] == "proved"
    assert evidence.values["psd_determinant_zero"] == "proved" and evidence.values["psd_trace_nonnegative"] == "proved"


def test_zcdp_vs_renyi_confirmed_with_counterexample():
    verdict, evidence = run("zcdp-vs-renyi")
    values = evidence.values
    assert verdict == Verdict.CONFIRMED
    assert values["D_three_halves"] == pytest.approx(math.log(2) / 2, rel=1e-14)
    assert values["D_2"] == "oo" and values["D_3"] == "oo"
    assert values["gaussian_D_alpha_over_alpha"] == "Delta**2/(2*sigma**2)"
