"""`dpverify verify dp-recal`, part d: the figure and table claims re-run on a user's implementation of
Algorithm 1 (reproductions/dp_recal/curves.relay_through_contract, reproductions/verify/rerun_claims.py)."""

from pathlib import Path

import networkx as nx
import numpy as np
import pytest

from dpverify.algorithms.core.network import Network
from dpverify.algorithms.dp_recal import contract
from dpverify.algorithms.dp_recal.algorithm import uniform_transition_matrix
from dpverify.reproductions.data.datasets import DatasetNotAvailableError, load_dataset
from dpverify.reproductions.dp_recal.curves import relay_through_contract
from dpverify.reproductions.verify.command import verify
from dpverify.reproductions.verify.rerun_claims import (ClaimComparison, claims_on, rerunnable, selected, verify_config,
                                                       verify_parameters)
from dpverify.theory.claims import CheckResult, ClaimResult, Evidence, Verdict
from dpverify.theory.door.implementations import load_implementation
from dpverify.theory.dp_recal import conformance
from dpverify.theory.papers import get_paper
from tests.reproductions.planting import planted

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "dp_recal" / "my_dp_recal.py"
RING = Network.from_networkx(nx.cycle_graph(8))


def test_verify_runs_its_own_sizes_and_its_checks_read_them():
    # the quick report keeps the figures' PLF 500 (and MNIST in Fig. 6); verify compares at PLF 100 on ijcnn1, and the
    # values its checks receive are those its tasks ran
    by_id = {e.id: e for e in rerunnable("dp-recal", "quick")}
    for figure, report_datasets in (("figure-2", ["ijcnn1", "cifar10"]), ("figure-6", ["ijcnn1", "mnist", "cifar10"])):
        report = by_id[figure].config("quick").values()
        assert (report["plf"], report["datasets"]) == (500, report_datasets)
        sized = verify_config(by_id[figure], "quick").values()
        assert (sized["plf"], sized["datasets"]) == (100, ["ijcnn1", "cifar10"])
        assert verify_parameters("dp-recal", "quick")[figure]["plf"] == 100
    assert verify_config(by_id["table-4"], "quick").values() == by_id["table-4"].config("quick").values()   # no plf key
    v0 = verify_parameters("dp-recal", "quick")["v0-figure-2"]        # not re-run by verify: the profile's values
    assert v0["plf"] == 30


def test_which_experiments_and_claims_are_rerun():
    experiments = {e.id for e in rerunnable("dp-recal", "quick")}
    assert experiments == {"figure-2", "figure-3", "figure-5", "figure-6", "table-4", "table-5"}
    claims = {c.id.removeprefix("dp-recal/") for c in claims_on("dp-recal", experiments)}
    assert {"figure-2-near-nonprivate", "figure-3-best", "table-4-best-re", "table-5-least-communication"} <= claims
    assert {"theorem-2", "theorem-3"} <= claims and "lemma-1" not in claims   # through their RECAL checks (runs_algorithm)


def test_a_walk_stops_where_run_recal_stops():
    """At the first K where some agent has held the baton plf times (run_recal's plf_target), along edges."""
    rng = np.random.default_rng(3)
    for plf in (1, 4, 9):
        walk = contract.relay_walk(RING, rng, horizon=10_000, plf=plf)
        holders = walk[:-1]
        counts = np.array([np.bincount(holders[:k], minlength=8).max() for k in range(1, len(holders) + 1)])
        assert counts[-1] == plf and np.all(counts[:-1] < plf)
        assert np.all(uniform_transition_matrix(RING)[walk[:-1], walk[1:]] > 0)
    capped = contract.relay_walk(RING, rng, horizon=7, plf=100)
    assert capped.shape == (8,)


def test_a_walk_of_fixed_length_draws_as_before():
    """horizon only: i_1 = integers(n), then one choice per step from row i_k of P (the verify setting's walk)."""
    walk = contract.relay_walk(RING, np.random.default_rng(11), horizon=6)
    rng = np.random.default_rng(11)
    expected = [int(rng.integers(8))]
    for _ in range(6):
        expected.append(int(rng.choice(8, p=uniform_transition_matrix(RING)[expected[-1]])))
    assert walk.tolist() == expected


@pytest.mark.parametrize("epsilon", [None, 5.0])
def test_the_example_and_the_reference_make_the_same_curve_through_the_contract(epsilon):
    """Same walks and same Generators: the per-agent-loop example gives our reference's x^k at every kept point
    (it draws its noise as N(0, sigma) q at a time, the reference sigma x standard normals)."""
    problem, data, x1, _alpha = conformance.instance({"loss": "linear", "ridge": 0.5, "lasso": 0.05})
    network = Network.from_networkx(nx.cycle_graph(data.num_agents))
    points = np.array([1, 2, 5, 10, 20, 40])
    common = dict(epsilon=epsilon, delta=1e-3, plf=6, decay=1.05, clip=1.0, replicas=4, x1=x1, points=points)
    ours = relay_through_contract(contract.REFERENCE, problem, data, network, rng=np.random.default_rng(7), **common)
    theirs = relay_through_contract(load_implementation(f"{EXAMPLE}:run"), problem, data, network,
                                    rng=np.random.default_rng(7), **common)
    kept, history, iterations, reached, settings = ours
    np.testing.assert_array_equal(kept, theirs[0])
    np.testing.assert_allclose(theirs[1], history, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(iterations, theirs[2])
    assert np.all(reached == 6)                               # every run stopped at PLF = 6, not at the cap
    assert kept[-1] == iterations.max() + 1 and history.shape == (len(kept), 4, data.dim)
    # a run that stopped before the last kept point keeps x^{K+1} (relay_run freezes it)
    early = int(np.argmin(iterations))
    assert np.array_equal(history[-1, early], history[np.searchsorted(kept, iterations[early] + 1), early])
    assert settings["sigma1"] == (0.0 if epsilon is None else pytest.approx(settings["sigma1"]))
    assert (settings["sigma1"] > 0) == (epsilon is not None)


def _result(verdict: Verdict) -> ClaimResult:
    claim = get_paper("dp-recal").claims[0]
    return ClaimResult(claim, (CheckResult("c", "numerical", verdict, Evidence("x"), 0.0, None),))


@pytest.mark.parametrize("reference, implementation, diverges", [
    (Verdict.CONFIRMED, Verdict.REFUTED, True),
    (Verdict.INCONCLUSIVE, Verdict.REFUTED, True),      # e.g. x* = 0: the reference cannot confirm, only refute
    (Verdict.REFUTED, Verdict.REFUTED, False),
    (Verdict.NOT_RUN, Verdict.REFUTED, False),
    (Verdict.CONFIRMED, Verdict.INCONCLUSIVE, False),
    (Verdict.CONFIRMED, Verdict.CONFIRMED, False),
])
def test_a_claim_diverges_when_only_the_implementation_refutes_it(reference, implementation, diverges):
    assert ClaimComparison(_result(reference), _result(implementation)).diverges is diverges


def _ijcnn1_available() -> bool:
    try:
        load_dataset("ijcnn1")
    except DatasetNotAvailableError:
        return False
    return True


@pytest.mark.skipif(not _ijcnn1_available(), reason="ijcnn1 not available (set DPVERIFY_DATA)")
def test_noise_30_times_too_large_makes_figure_2_diverge(tmp_path):
    """On ijcnn1 x* = 0, so the reference can only leave figure-2-near-nonprivate inconclusive; an
    implementation whose noise is 30x the calibration refutes it (final RE far from RECAL's)."""
    buggy = planted(EXAMPLE, tmp_path, "noise = rng.normal(0.0, sigma, size=q)",
                    "noise = rng.normal(0.0, 30 * sigma, size=q)")
    result = verify("dp-recal", f"{buggy}:run", checks=(), claims=("figure-2-near-nonprivate",),
                    cache=tmp_path / "cache", jobs=2)
    (compared,) = result.claims
    assert compared.reference.verdict == Verdict.INCONCLUSIVE
    assert compared.implementation.verdict == Verdict.REFUTED
    assert result.divergences == [compared] and result.exit_status == 3


def test_the_convergence_claims_run_the_algorithm_themselves_and_keep_their_run_checks():
    """RECAL's and DP-RECAL's (theory/dp_recal/convergence.py states the DP runs through the contract); Theorem 3's
    noise condition, which runs nothing, is left out."""
    experiments, claims, _ = selected("dp-recal", "quick", ("theorem-2", "theorem-3"))
    assert experiments == []
    assert {c.id: [check.name for check in c.checks] for c in claims} == {
        "dp-recal/theorem-2": ["RECAL to the certified x*", "DP-RECAL (R > 1) to the certified x*"],
        "dp-recal/theorem-3": ["RECAL: log-error slope with bootstrap CI", "DP-RECAL: log-error slope"]}


def test_a_stepsize_outside_the_theorem_makes_theorem_2_diverge(tmp_path):
    """Theorem 2's RECAL runs (K = 4000 on a ring and a random graph) re-run on the example with y's step
    2.5 alpha_i, outside (0, 2/(L_i+1)) for alpha_i = 0.99 * 2/(L_i+1): the reference converges, this does not."""
    buggy = planted(EXAMPLE, tmp_path, "y_new = y[i] - alpha[i] * (g - lam_half)",
                    "y_new = y[i] - 2.5 * alpha[i] * (g - lam_half)")
    result = verify("dp-recal", f"{buggy}:run", checks=(), claims=("theorem-2",), jobs=1)
    (compared,) = result.claims
    assert compared.reference.verdict == Verdict.CONFIRMED
    assert compared.implementation.verdict == Verdict.REFUTED
    assert result.exit_status == 3
