"""DPDO-NC claims: the symbolic findings and the privacy checks give the verdicts their numbers imply."""

import numpy as np
import pytest

from dpverify.reproductions.experiments import experiments_of
from dpverify.theory.claims import Verdict
from dpverify.theory.dpdo_nc import audit as audits
from dpverify.theory.dpdo_nc import numerics, symbolic
from dpverify.theory.execution import CheckContext
from dpverify.theory.papers import get_paper


@pytest.fixture(scope="module")
def context():
    return CheckContext(parameters={e.id: e.config("quick").values() for e in experiments_of("dpdo-nc")})


def execute(function, context):
    """Run the paper's check of `function` as declared in claims.py, so its rule decides the verdict."""
    check = next(c for claim in get_paper("dpdo-nc").claims for c in claim.checks if c.run is function)
    return check.execute(context)


def test_every_claim_is_listed_with_an_id():
    ids = [c.id for c in get_paper("dpdo-nc").claims]
    assert len(ids) == len(set(ids)) and all(i.startswith("dpdo-nc/") for i in ids)
    assert {"dpdo-nc/lemma-1", "dpdo-nc/theorem-1", "dpdo-nc/theorem-2", "dpdo-nc/figure-1"} <= set(ids)


def test_theorem_2_constants_miss_n_squared():
    result = execute(symbolic.check_theorem_2_constants, None)
    verdict, evidence = result.verdict, result.evidence
    assert verdict == Verdict.REFUTED and evidence.values["ratios"]["eta"] == "N**2"
    assert all(v == "1" for k, v in evidence.values["ratios"].items() if k != "eta")


def test_lemma_4_printed_telescoping_drops_last_term():
    result = execute(symbolic.check_lemma_4_telescoping, None)
    verdict, evidence = result.verdict, result.evidence
    assert verdict == Verdict.REFUTED and all(v["with_t=T_term"] and not v["printed_identity"] for v in
                                              (evidence.values[f"T={h}"] for h in range(3, 7)))


def test_sensitivity_probe_finds_sqrt2_at_round_2(context):
    result = execute(audits.probe_lemma_1, context)
    evidence = result.evidence
    assert result.verdict == Verdict.REFUTED
    assert evidence.values["ratio_t2"] == pytest.approx(np.sqrt(2), rel=1e-9)   # alpha_1/alpha_2, unclipped step
    assert evidence.values["shifted_reading_max_ratio"] <= 1 + 1e-9              # (8) holds for X_{t+1}


def test_laplace_norm_and_lemma_2(context):
    result = execute(numerics.check_laplace_norm, context)
    verdict, evidence = result.verdict, result.evidence
    # E||xi|| for two i.i.d. Lap(1): 1.623225... by quadrature, < sqrt(2d) = 2
    assert verdict == Verdict.REFUTED and evidence.values["expected_norm"] == pytest.approx(1.623225, abs=1e-6)
    c, lam = numerics.lemma_2_constants(context.parameters["figure-1"])
    assert c == pytest.approx(2 * (1 + 5**10) / (1 + 5**-10)) and lam == pytest.approx((1 - 0.2**10) ** 0.1)


def test_round_audit_refutes_with_exact_sup_loss(context):
    """eps = 1 at t = 2: the exact privacy loss sup of the round is eps * sqrt(2) = 1.414 (unclipped);
    the audit's 95% lower bound must lie between the claim and that sup (validity of a lower bound)."""
    values = {**context.parameters["figure-1"], "epsilons": [1.0]}
    small = CheckContext(parameters={"figure-1": values}, audit_samples=100_000)
    original = audits.AUDIT_ROUNDS
    audits.AUDIT_ROUNDS = (2,)
    try:
        result = execute(audits.audit_rounds, small)
    finally:
        audits.AUDIT_ROUNDS = original
    found = result.evidence.values["audits"]["eps=1, t=2"]
    assert result.verdict == Verdict.REFUTED and 1.0 < found["eps_lb"] <= found["exact_loss_sup"] + 1e-9
