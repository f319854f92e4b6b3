"""`dpverify verify dp-recal`: the verification setting and what the conformance checks need
(theory/verify/conformance.py).

The setting is Fig. 2's problem and privacy parameters (linear regression with r = 1/2 ||x||^2 + 1/2 ||x||_1,
the figure's first eps, its delta, R and c) on a small synthetic instance (NUM_AGENTS agents on a ring, as in
the paper, SAMPLES_PER_AGENT records in R^DIM each) over VERIFY_HORIZON iterations. The walk i_1..i_{K+1} is
drawn here from the relay's law (i_1 uniform, then P = I - D^{-1} L) with the verification seed, and is part of
the setting (contract module docstring); sigma_1 spends the figure's eps over the walk's own PLF by Theorem 4.
A round of the generic checks is one iteration k: one holder, one baton (u~^{k+1}, x^{k+1}), q noisy
coordinates, so the noise-scale check has one family per iteration and none per agent.

The privacy audit observes u~^2, the first release of the agent with the largest stepsize (Lemma 5's alpha),
under neighbouring local functions (contract.neighbours, Lemma 5's worst case), along a walk that starts at that
agent. Lemma 6 makes it the Gaussian mechanism of noise sigma_1 on Lemma 5's sensitivity Delta = 4 alpha beta c:
(Delta / sigma_1)-GDP (theory/audit/tradeoff.py; rho_1 = Delta^2 / (2 sigma_1^2)). Unlike the other papers' audits,
this one does not observe the whole run, because the paper's accounting does not compose over it: the holder's
private lam_i and y_i carry its data from one activation to the next, so its later releases are not Lemma 6's
mechanism given the earlier ones. Measured on dpverify's reference (10,000 runs per side, 99.75%), the batons of a
10-iteration run on which the audited agent holds every other baton leak at least 4.3x (literal reading) and 2.2x
(received) the curve of Lemma 6 composed over its activations; a whole-run audit would refute every faithful
implementation, so it would judge the paper, not the code.

The setting's reading of (7e) is U_READING, which the reference (hence the exact and distribution checks) runs; the
replay accepts either reading, the one each run follows (followed_reading), since both are Algorithm 1 and verify has
no per-paper option through which a user could name one.
"""

from __future__ import annotations

import networkx as nx
import numpy as np

from dpverify.algorithms.core.network import Network
from dpverify.algorithms.core.problems import LocalData
from dpverify.algorithms.core.synthetic import noisy_linear_observations
from dpverify.algorithms.dp_recal import contract
from dpverify.algorithms.dp_recal.algorithm import stepsize_bounds
from dpverify.algorithms.dp_recal.composite import CompositeProblem
from dpverify.theory.audit import PrivacyClaim
from dpverify.theory.audit.tradeoff import GaussianDP
from dpverify.theory.execution import CheckContext, task_seed_sequence
from dpverify.theory.verify.conformance import ABSOLUTE_TOLERANCE, RELATIVE_TOLERANCE, Suite

FIGURE = "figure-2"         # the experiment whose problem and privacy parameters verify uses (Fig. 2, v1:L566)
NUM_AGENTS = 5              # default: agents on the ring (the paper's is 8; fewer keep a run short, plausible 4-8)
SAMPLES_PER_AGENT = 10      # default: records per agent of the synthetic instance (plausible 5-100)
DIM = 3                     # default: q (plausible 2-5): 3 noisy coordinates a round, which the noise-scale check pools over the runs
VERIFY_HORIZON = 10         # default: iterations K of a verification run (each agent holds the baton about twice, so sigma_tau decays; plausible 10-100; the reference costs about 0.6 ms an iteration, and the statistical checks run it 400 times)
INSTANCE_SEED = 0           # default: seed of the synthetic data and x^1 (the instance does not change with --seed; the walk does)
X1_SCALE = 0.1              # default: x^1 = 0.1 N(0, I), y_i^1 = x^1 (spec §6)
TARGET_SCALE = 3.0          # default: targets b = 3 (B w0 + e) (w0 of this seed has norm 0.67): per-sample clipping to c = 1 then binds on about a fifth of the gradients, in most iterations (plausible 1-10)
# default: alpha_i = f_i 2/(L_i + 1), uncoordinated fractions inside the theorems' range (0, 2/(L_i + 1)) (v1 Theorems 2-3;
# spec §6 suggests f = 1/2 for all); spread so that max_i alpha_i, Lemma 5's alpha, differs from most agents' own
STEP_FRACTIONS = (0.25, 0.4, 0.55, 0.7, 0.85)
# default: (7e) read as printed (Alg. 1 line 3, v1:L258; the exact running sum u^k = U^T lam^k, v1:L201), the
# algorithm the paper analyses ((9b): the x-update carries the one fresh eps^k) and the reference reproduces its
# figures with. The other reading, "received" (u~^k + lam_i+ - lam_i, what a relay agent can compute), is replayed too
U_READING = "literal"


def instance(values) -> tuple[CompositeProblem, LocalData, np.ndarray, np.ndarray]:
    """Fig. 2's problem on the synthetic data: (problem, data, x^1, alpha)."""
    rng = np.random.default_rng(INSTANCE_SEED)
    data, _ = noisy_linear_observations(NUM_AGENTS, SAMPLES_PER_AGENT, DIM, rng)
    data = LocalData(data.features, TARGET_SCALE * data.targets)
    problem = CompositeProblem(values["loss"], ridge=float(values["ridge"]), lasso=float(values["lasso"]))
    alpha = np.asarray(STEP_FRACTIONS) * stepsize_bounds(problem, data)
    return problem, data, X1_SCALE * rng.standard_normal(DIM), alpha


def setting(context: CheckContext) -> contract.DpRecalSetting:
    values = context.parameters[FIGURE]
    problem, data, x1, alpha = instance(values)
    network = Network.from_networkx(nx.cycle_graph(NUM_AGENTS))            # the paper's ring (v1:L560)
    horizon = VERIFY_HORIZON
    walk = contract.relay_walk(network, np.random.default_rng(task_seed_sequence(context.root_seed, "verify/dp-recal/walk")),
                               horizon=horizon)
    plf = int(np.bincount(walk[:-1], minlength=NUM_AGENTS).max())          # Theta_K of this walk
    return contract.DpRecalSetting(problem, data, network, walk, x1, np.tile(x1, (NUM_AGENTS, 1)), alpha,
                                   float(values["epsilons"][0]), float(values["delta"]), plf, float(values["decay"]),
                                   float(values["clip"]), horizon, U_READING)


def _replays(setting: contract.DpRecalSetting, transcript) -> tuple[str, dict[str, np.ndarray]]:
    """The reading of (7e) the transcript follows, and the replay's predictions in it: the reading under which every
    value is predicted (the setting's when both are: no noise), else the one followed longest (the latest first
    divergence), so that a run that mixes the readings is refuted where it leaves the one it followed first."""
    def followed(predicted: dict[str, np.ndarray]) -> int:      # iterations matched before the first divergence
        first = setting.horizon + 1
        for name, offset in (("iterates", 0), ("messages", 1)):   # iteration k: iterates[k] and messages[k-1]
            known = np.isfinite(predicted[name])
            close = np.isclose(np.where(known, transcript[name], 0.0), np.where(known, predicted[name], 0.0),
                               rtol=RELATIVE_TOLERANCE, atol=ABSOLUTE_TOLERANCE)
            wrong = np.flatnonzero(~close.reshape(len(close), -1).all(axis=1))
            first = min(first, int(wrong[0]) + offset) if wrong.size else first
        return first
    readings = (setting.u_reading,) + tuple(r for r in contract.U_READINGS if r != setting.u_reading)
    predictions = {reading: contract.replay(setting, transcript, reading) for reading in readings}
    reading = max(readings, key=lambda r: followed(predictions[r]))    # the first maximum: the setting's on a tie
    return reading, predictions[reading]


def followed_reading(setting: contract.DpRecalSetting, transcript) -> str:
    """"literal" or "received": the reading of (7e) the transcript follows (the replay's, _replays)."""
    return _replays(setting, transcript)[0]


def replay(setting: contract.DpRecalSetting, transcript) -> dict[str, np.ndarray]:
    """contract.replay in the reading the transcript follows (followed_reading): either reading is Algorithm 1."""
    return _replays(setting, transcript)[1]


def claimed(setting: contract.DpRecalSetting) -> PrivacyClaim:
    """Lemma 6 for a first activation: the Gaussian mechanism, (Delta / sigma_1)-GDP."""
    return PrivacyClaim(tradeoff=GaussianDP(float(setting.sensitivity() / setting.sigma1())))


SUITE = Suite(
    paper="dp-recal", line="v1:L248-L266", setting=setting, reference=contract.REFERENCE, shapes=contract.shapes,
    added_noise=contract.added_noise, calibration=contract.calibration, noise="normal", neighbours=contract.neighbours,
    observe=contract.observe, claimed=claimed, replay=replay)
