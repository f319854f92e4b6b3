"""`dpverify verify wang-basar`, part d: Lemma 2's check (theory/wang_basar/coupling.py) re-run on a user's
implementation of Algorithm 2. Coupled pairs are its runs from NoiseTape(seed) and MirroredTape(seed, e_1) (the same
draws, e_1 component negated: Definition 2); xbar^k, q(k, x) and xi are recovered from the transcripts (eq. (8)).
The reference's numbers are those it measured before; the transcript path computes them from the same draws; the
example gets the reference's verdict; a planted bug diverges; an implementation drawing its own noise is not run."""

from pathlib import Path

import numpy as np
import pytest

from dpverify.algorithms.core.tape import MirroredTape, NoiseTape
from dpverify.algorithms.wang_basar import contract
from dpverify.algorithms.wang_basar.contract import _Negated  # -z: eq. (8) subtracts lambda n
from dpverify.reproductions.run.experiments import parameters_of
from dpverify.reproductions.verify.rerun_claims import ClaimComparison
from dpverify.theory.claims import Verdict, evaluate
from dpverify.theory.door.implementations import REFERENCE, implementation_value
from dpverify.theory.execution import CheckContext
from dpverify.theory.papers import get_paper
from dpverify.theory.verify.conformance import transcript
from dpverify.theory.wang_basar import coupling
from dpverify.theory.wang_basar.instances import estimation, refined_saddle
from tests.reproductions.planting import planted

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "wang_basar" / "my_wang_basar.py"
PAIRS, CHUNK, WINDOW = 12, 6, 150   # small: 24 runs of 150 rounds (the median escape is ~50 rounds)
# the gradient computed once, at the start x^1 (a stale cache): no curvature, xbar^k a random walk that escapes slowly
STALE_GRADIENT = ("g = setting.gradient(j, x[j])", "g = setting.gradient(j, setting.x1[j])")
# the consensus step mixes the noise-free M_j^k instead of the messages (the noise only decorates the wire): the
# iterates follow Algorithm 1, which stays at the refined saddle (L589), though every message carries its noise
MIXES_UNNOISED = ("x = weights @ sent ", "x = weights @ unnoised ")
# the noise from numpy's global generator instead of the rng it is given (what --noise own declares)
OWN_NOISE = ("noise = rng.normal(0.0, std, size=d)", "noise = np.random.normal(0.0, std, size=d)")


def _context(implementation=REFERENCE) -> CheckContext:
    return CheckContext(profile="quick", parameters=parameters_of("wang-basar", "quick"), implementation=implementation)


def _lemma_2(implementation=REFERENCE):
    claim = next(c for c in get_paper("wang-basar").claims if c.id == "wang-basar/lemma-2")
    return evaluate(claim, _context(implementation))


@pytest.fixture
def small(monkeypatch):
    for name, value in {"PAIRS": {"quick": PAIRS}, "CHUNK_PAIRS": CHUNK, "WINDOW": WINDOW}.items():
        monkeypatch.setattr(coupling, name, value)


def test_the_reference_measures_what_it_measured_before():
    """400 pairs of 500 rounds (1-2 s batched), the numbers of git HEAD before the check could run an implementation."""
    measurement = coupling.check_lemma_2(_context())
    assert measurement.values["escaped"] == measurement.values["pairs"] == 400
    assert ("in 98.0% of (pair, k) near the saddle, in at least 258 pairs at every k = 2..52 (the median escape), on the "
            "whole path to escape in 74/400 pairs") in measurement.summary
    assert measurement.readings["each iteration"].values["intervals"]["P(T <= 500)"] == pytest.approx((0.990820, 1.0), abs=1e-6)


def test_the_transcript_path_computes_the_reference_numbers_from_the_same_draws():
    """Our batched coupled_runs on the tape's draws and our reference through the contract from NoiseTape and
    MirroredTape, its quantities recovered from the transcripts: the same domination and distances."""
    values = parameters_of("wang-basar", "quick")["figures-3-4"]
    problem = estimation(values)
    saddle, params, rounds = refined_saddle(problem), coupling.lemma_parameters(values), 80
    e1 = coupling.escape_direction(problem.gradient, saddle)
    setting = contract.setting_of(problem.local_gradients, params, np.broadcast_to(saddle, (params.num_agents, 2)), rounds)
    for seed in range(3):
        batched = coupling.coupled_runs(problem.local_gradients, problem.gradient, saddle, params, 1, rounds + 1,
                                        _Negated(NoiseTape(seed)))
        runs = [transcript(contract.reference, setting, tape, contract.shapes) for tape in (NoiseTape(seed), MirroredTape(seed, e1))]
        mean, q, xi, noise = coupling.transcript_quantities(runs, setting, problem.gradient)
        dominated, distance = coupling.compare(mean, q, xi, saddle, 1)
        ours = coupling.outcome(dominated, distance)
        np.testing.assert_array_equal(ours.dominated, batched.dominated)
        np.testing.assert_array_equal(ours.escape, batched.escape)
        assert 0 < ours.dominated.sum() < rounds   # domination is decided both ways along the path
        assert np.abs(noise[:, 1] - coupling.reflected(noise[:, 0], e1)).max() < 1e-12
        assert np.abs(noise[:, 1] @ e1 + noise[:, 0] @ e1).max() < 1e-12 and np.abs(noise[:, 0] @ e1).max() > 1


def test_the_example_gets_the_reference_verdict(small):
    """12 pairs: inconclusive on both (12/12 escapes: the CP lower bound 0.735 cannot pass 1 - mu = 0.99), the
    hypothesis witnessed under both readings, from other draws."""
    ours, theirs = _lemma_2(), _lemma_2(implementation_value(f"{EXAMPLE}:run"))
    assert ours.verdict == theirs.verdict == Verdict.INCONCLUSIVE
    for result in (ours, theirs):
        values = result.results[0].evidence.values
        assert values["escaped"] == values["pairs"] == PAIRS
        assert "'witnessed': True" in values["hypothesis"]["each iteration"]
        assert "'witnessed': True" in values["hypothesis"]["whole path"]
    assert ours.results[0].evidence.summary != theirs.results[0].evidence.summary


def test_a_stale_gradient_stops_the_escape_which_the_check_shows_but_cannot_count_against_the_lemma(small, tmp_path):
    """Domination is witnessed at every k (the lemma applies under the each-iteration reading) but no pair escapes by
    WINDOW, where the reference's all do: the rule refutes, and the check reports that this is no witness against
    the lemma (its O(log(1/mu)/a) has an unspecified constant, Measurement.cannot_refute), so inconclusive. The
    check can therefore never refute, and verify never counts it as diverging (ClaimComparison.diverges)."""
    buggy = planted(EXAMPLE, tmp_path, *STALE_GRADIENT)
    ours, theirs = _lemma_2(), _lemma_2(implementation_value(f"{buggy}:run"))
    assert ours.results[0].evidence.values["escaped"] == PAIRS and "The rule refutes" not in ours.results[0].evidence.summary
    values = theirs.results[0].evidence.values
    assert values["escaped"] == 0 and "'witnessed': True" in values["hypothesis"]["each iteration"]
    assert theirs.verdict == Verdict.INCONCLUSIVE
    assert "each iteration: The rule refutes, but this is not a witness against the claim" in theirs.results[0].evidence.summary
    assert not ClaimComparison(ours, theirs).diverges


def test_mixing_the_unnoised_values_is_outside_the_lemma(small, tmp_path):
    """x'^k = x''^k in every pair (Algorithm 1's path): no direction u, no domination, no escape; the hypothesis is
    not witnessed, so the runs are outside the lemma's conditions and cannot refute it (inconclusive)."""
    buggy = planted(EXAMPLE, tmp_path, *MIXES_UNNOISED)
    result = _lemma_2(implementation_value(f"{buggy}:run"))
    values = result.results[0].evidence.values
    assert result.verdict == Verdict.INCONCLUSIVE and values["escaped"] == 0
    assert "'witnessed': False" in values["hypothesis"]["each iteration"] and "'pooled': 0.0" in values["hypothesis"]["each iteration"]


def test_own_noise_is_not_run(small, tmp_path):
    """Its two runs of a pair carry independent noises, not reflections: no coupling, so the check is not run."""
    own = planted(EXAMPLE, tmp_path, *OWN_NOISE)
    result = _lemma_2(implementation_value(f"{own}:run"))
    assert result.verdict == Verdict.NOT_RUN
    assert "does not draw n_j^k from the rng it is given" in result.results[0].evidence.summary
