"""`dpverify verify dpdo-nc`, part d, the checks that run Algorithm 1 themselves (Lemma 3 (16), Lemma 4 (22), proof
step (11)): re-run on a user's implementation from its transcripts (iterates, and z_t = A(t) q_t from its messages,
contract.mixed), beside the reference's verdicts (theory/dpdo_nc/runs.py). The reference measures what it measured
before; the per-agent-loop example measures what the reference measures through the contract, and gets its
verdicts under `verify`; a planted step-size bug makes Lemma 4 diverge; runs the contract cannot state, or that do
not stay finite, are not-run in the implementation's column."""

from pathlib import Path

import numpy as np
import pytest

from dpverify.algorithms.dpdo_nc import contract
from dpverify.algorithms.dpdo_nc.algorithm import paper_schedule, run_dpdo_nc
from dpverify.reproductions.run.experiments import parameters_of
from dpverify.reproductions.verify.command import verify
from dpverify.reproductions.verify.rerun_claims import ClaimComparison, claims_on, selected
from dpverify.theory.claims import Verdict, evaluate
from dpverify.theory.door.implementations import implementation_value
from dpverify.theory.dpdo_nc import audit, numerics, runs
from dpverify.theory.dpdo_nc.instances import instance_of, params_of
from dpverify.theory.execution import CheckContext
from dpverify.theory.papers import get_paper
from tests.reproductions.planting import planted

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "dpdo_nc" / "my_dpdo_nc.py"
CLAIMS = {c.id: c for c in get_paper("dpdo-nc").claims}
LEMMA_3, LEMMA_4, STEP_11 = "dpdo-nc/lemma-3", "dpdo-nc/lemma-4", "dpdo-nc/lemma-1-step-11"
CHECKS = {LEMMA_3: numerics.check_lemma_3, LEMMA_4: numerics.check_lemma_4, STEP_11: audit.check_proof_step_11}
# alpha_t = 1/sqrt(t), the usual online-mirror-descent step, instead of Algorithm 1's 1/(N sqrt t) (line 1): steps and
# noise N = 6 times too large; the consensus bound (16) is too loose to notice, Lemma 4's (22) is not
STEP_WITHOUT_N = ("alpha = 1.0 / (n * np.sqrt(t))", "alpha = 1.0 / np.sqrt(t)")

# the reference's measurements on the quick profile (Fig. 1's instance, T = 500, root seed 20240221), as they were
# before the checks ran implementations (commit bc24574): the reference path is unchanged
BEFORE = {
    LEMMA_3: {"excess": -2741512809.6266713, "max_gap": 3.2772832799088434, "rhs_at_T": 118538890530.6807},
    LEMMA_4: {"excess": -0.848558265058082, "0": 0.1450407703406663, "s": 0.15144173494191807,
              "vertex": 0.1342314483876907},
    STEP_11: {"excess": 21.533537107752103,
              "eps=5": {"max_ratio": 0.5335035430738465, "fraction_violated": 0.0, "fraction_z_outside_Omega": 0.0},
              "eps=1": {"max_ratio": 7.882691620222588, "fraction_violated": 0.008033333333333333,
                        "fraction_z_outside_Omega": 0.014683333333333333},
              "eps=0.5": {"max_ratio": 22.533537107752103, "fraction_violated": 0.044316666666666664,
                          "fraction_z_outside_Omega": 0.05821666666666667}},
}


def _small(monkeypatch, horizon: int = 60, consensus_runs: int = 12, step_runs: int = 4) -> dict:
    """The quick profile's parameters over `horizon` rounds, with fewer runs per check."""
    monkeypatch.setattr(numerics, "CONSENSUS_RUNS", consensus_runs)
    monkeypatch.setattr(audit, "STEP_11_RUNS", step_runs)
    return {figure: {**values, "horizon": horizon} for figure, values in parameters_of("dpdo-nc", "quick").items()}


def _context(parameters, spec: str) -> CheckContext:
    return CheckContext(parameters=parameters, implementation=implementation_value(spec))


def test_the_reference_measures_what_it_measured_before():
    """Full size (100 + 60 batched runs, about 1 s): every number as before (bit for bit where this was written; to
    rtol 1e-9, for a BLAS that sums the mixing's products in another order)."""
    context = CheckContext(parameters=parameters_of("dpdo-nc", "quick"))
    for claim, check in CHECKS.items():
        _assert_close(BEFORE[claim], check(context).values, rtol=1e-9)


def test_z_from_the_messages_is_the_references_own_mix():
    """contract.mixed (line 5 from the broadcasts and the public A(t)) is run_dpdo_nc's z_t bit for bit, for a batch
    of runs and for one run's transcript."""
    values = {**parameters_of("dpdo-nc", "quick")["figure-1"], "horizon": 30}
    schedule = paper_schedule(values["window"])
    run = run_dpdo_nc(instance_of(values), schedule, params_of(values, 0.5, "half-euclidean"), horizon=30, replicas=5,
                      rng=np.random.default_rng(3), dim=2, keep=True, regret=False)
    assert np.array_equal(contract.mixed(schedule.at, run.broadcasts), run.mixed)
    assert np.array_equal(contract.mixed(schedule.at, np.ascontiguousarray(run.broadcasts[:, 2])), run.mixed[:, 2])


@pytest.mark.parametrize("claim", list(CHECKS))
def test_the_example_measures_what_the_reference_measures_through_the_contract(claim, monkeypatch):
    """The example and our reference, both through the contract with the same Generator per run (the example draws
    laplace(size=d) per agent, the reference (1, N, d) per round: the same draws): the same numbers to rtol 1e-10,
    the same verdict, other numbers than the reference's batched runs (other draws)."""
    parameters = _small(monkeypatch)
    check = CLAIMS[claim].checks[0]
    results = {name: check.execute(_context(parameters, spec)) for name, spec in
               [("contract", "dpverify.algorithms.dpdo_nc.contract:REFERENCE"), ("example", f"{EXAMPLE}:run")]}
    batched = check.execute(CheckContext(parameters=parameters))
    ours, theirs = (results[name].evidence.values for name in ("contract", "example"))
    _assert_close(ours, theirs)
    assert results["example"].verdict == results["contract"].verdict == batched.verdict
    assert theirs != batched.evidence.values


def test_how_the_runs_are_split_into_tasks_changes_no_number(monkeypatch):
    """Each run of an implementation is seeded by its own key: 7 runs in tasks of 3, 3, 1 or in one task, the same
    numbers."""
    parameters = _small(monkeypatch, horizon=30, consensus_runs=7)
    measured = []
    for per_task in (3, 10):
        monkeypatch.setattr(runs, "RUNS_PER_TASK", per_task)
        measured.append(numerics.check_lemma_4(_context(parameters, "dpverify.algorithms.dpdo_nc.contract:REFERENCE")))
    assert measured[0].values == measured[1].values


def _assert_close(a, b, path="values", rtol=1e-10):
    if isinstance(a, dict):
        assert a.keys() == b.keys(), path
        for key in a:
            _assert_close(a[key], b[key], f"{path}/{key}", rtol)
    else:
        np.testing.assert_allclose(b, a, rtol=rtol, atol=1e-12, err_msg=path)


def test_verify_reruns_the_three_claims_on_the_example(tmp_path, monkeypatch):
    """`verify --claim lemma-3 --claim lemma-4 --claim lemma-1-step-11` through the runner (tasks, cache), at T = 500
    with 4 and 2 runs: the example gets the reference's verdicts (Lemmas 3 and 4 confirmed, step (11) refuted on
    both: z_t leaves Omega) from its own runs. About 4 s."""
    _small(monkeypatch, horizon=500, consensus_runs=4, step_runs=2)
    result = verify("dpdo-nc", f"{EXAMPLE}:run", checks=("accounting",),
                    claims=("lemma-3", "lemma-4", "lemma-1-step-11"), cache=tmp_path / "cache", jobs=1)
    assert result.verdicts == {"accounting": Verdict.CONFIRMED}
    verdicts = {c.claim.id: (c.reference.verdict, c.implementation.verdict) for c in result.claims}
    assert verdicts == {STEP_11: (Verdict.REFUTED, Verdict.REFUTED), LEMMA_3: (Verdict.CONFIRMED, Verdict.CONFIRMED),
                        LEMMA_4: (Verdict.CONFIRMED, Verdict.CONFIRMED)}
    for comparison in result.claims:
        ours, theirs = (r.results[0].evidence.values for r in (comparison.reference, comparison.implementation))
        assert ours["excess"] != theirs["excess"], comparison.line()
    assert result.conforms and result.exit_status == 0, result.lines()


def test_a_step_without_1_over_n_makes_lemma_4_diverge(tmp_path, monkeypatch):
    """STEP_WITHOUT_N, T = 60, 20 runs: (22)'s left side is several times its right side on the implementation's runs
    (its noise is 6 times the calibrated sigma_t of the right side), below it on the reference's."""
    parameters = _small(monkeypatch, consensus_runs=20)
    buggy = planted(EXAMPLE, tmp_path, *STEP_WITHOUT_N)
    lemma_4 = CLAIMS[LEMMA_4]
    comparison = ClaimComparison(evaluate(lemma_4, CheckContext(parameters=parameters)),
                                 evaluate(lemma_4, _context(parameters, f"{buggy}:run")))
    assert comparison.diverges, comparison.line()
    ratios = comparison.implementation.results[0].evidence.values
    assert min(ratios[x] for x in ("0", "s", "vertex")) > 2, ratios
    assert max(comparison.reference.results[0].evidence.values[x] for x in ("0", "s", "vertex")) < 0.5


def test_runs_the_contract_cannot_state_fail_or_overflow_are_not_run(tmp_path, monkeypatch):
    """Not-run in the implementation's column, with the reason: Fig. 1 read with phi = x^T Q x (not in the contract's
    setting; nothing is submitted); an implementation that raises (alpha = 1/(N sqrt(t - 1)): an infinite first step,
    on which the example's l1 projection fails); the same step with a clipping 'projection', which does not fail:
    non-finite iterates, the round named."""
    parameters = _small(monkeypatch, horizon=10, consensus_runs=2)
    check = CLAIMS[LEMMA_4].checks[0]
    mahalanobis = {**parameters, "figure-1": {**parameters["figure-1"], "mirrors": ["mahalanobis"],
                                              "q_matrix": parameters["figure-3"]["q_matrix"]}}
    result = check.execute(_context(mahalanobis, f"{EXAMPLE}:run"))
    assert result.verdict == Verdict.NOT_RUN and "phi = c ||x||^2 only" in result.evidence.summary
    infinite = planted(EXAMPLE, tmp_path, "alpha = 1.0 / (n * np.sqrt(t))", "alpha = 1.0 / (n * np.sqrt(t - 1))")
    step = "(z - alpha * g / (2.0 * setting.mirror_scale)"
    clipped = planted(infinite, tmp_path, f"project_l1_ball{step}, setting.radius)",
                      f"np.clip{step}, -setting.radius, setting.radius)", name="clipped.py")
    with np.errstate(divide="ignore", invalid="ignore"):
        raised, overflowed = (check.execute(_context(parameters, f"{path}:run")) for path in (infinite, clipped))
    assert raised.verdict == overflowed.verdict == Verdict.NOT_RUN
    assert raised.evidence.summary.startswith("the implementation failed: the implementation raised IndexError")
    assert overflowed.evidence.summary == "the implementation's iterates or messages are not finite from round 1 on"


def test_which_of_them_verify_reruns_by_default():
    """All three run Algorithm 1 themselves (about 40 CPU-seconds of the per-agent example together), so verify
    re-runs them by default."""
    rerun = {c.id: [check.name for check in c.checks] for c in claims_on("dpdo-nc", {"figure-1"})}
    assert rerun[LEMMA_3] == ["Monte-Carlo vs (16)"] and rerun[LEMMA_4] == ["Monte-Carlo vs (22)"]
    assert rerun[STEP_11] == ["along the experiment's runs"]
    _, default, skipped = selected("dpdo-nc", "quick")
    assert {LEMMA_3, LEMMA_4, STEP_11} <= {c.id for c in default} and not {LEMMA_3, LEMMA_4, STEP_11} & {c.id for c in skipped}
