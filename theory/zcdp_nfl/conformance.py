"""`dpverify verify zcdp-nfl`: the verification setting and what the conformance checks need
(theory/verify/conformance.py).

The setting is Fig. 1's problem (elastic net, L306) with the figure's algorithm parameters (rho, eta0,
eta_power, c1, tau, delta, lambda, the learning curves' first eps), on a smaller random network and over
VERIFY_HORIZON iterations, the zCDP budget recalibrated so that those iterations compose to the figure's
(eps, delta) (Corollary, L136). Per-sample subgradients are clipped to c1 (VERIFY_CLIP), so that Assumption
1 holds, Lemma I's calibration is valid and every line of Algorithm 1 acts: clipping binds (the squared
loss's per-sample subgradients exceed c1 = 1 for many records), the l1 part of the regularizer has
sign(0) = 0 at the first iteration and +-1 afterwards, the per-client calibration differs with |N_k|.

The privacy audit observes every broadcast of every client over the whole run (L26: an honest-but-curious
neighbour or an eavesdropper) under neighbouring records of client 0 (contract.neighbours). Theorem I releases
tilde w_0^(n) through the Gaussian mechanism, noise sigma_0(n) on Lemma I's sensitivity Delta_0(n) (varphi^(n) =
Delta^2 / (2 sigma^2)); given the earlier broadcasts, each iterate's only new dependence on the data is that
iteration's subgradient (eq. (7) takes it at tilde w), so the run composes adaptively to
mu = sqrt(sum_n 2 varphi^(n))-GDP (theory/audit/tradeoff.py), the curve of the varphi-zCDP the paper sums.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from dpverify.algorithms.core.network import random_connected_network
from dpverify.algorithms.core.synthetic import noisy_linear_observations
from dpverify.algorithms.zcdp_nfl import contract
from dpverify.theory.audit import PrivacyClaim
from dpverify.theory.audit.tradeoff import GaussianDP
from dpverify.theory.execution import CheckContext
from dpverify.theory.verify.conformance import Suite, every_message
from dpverify.theory.zcdp_nfl.instances import make_problem, zcdp_budget
from dpverify.theory.zcdp_nfl.numerics import settings_of

FIGURE = "figure-1"          # the experiment whose problem and parameters verify uses (Fig. 1, L306-L310)
VERIFY_AGENTS = 6            # default: clients of the verification network instead of Fig. 1's 50 (plausible 3-20): a short run, the same per-client code
VERIFY_EDGES = 9             # default: 3 neighbours per client on average, as L304 (E = N * 3 / 2); a random graph has unequal degrees, so the calibration differs per client
VERIFY_HORIZON = 10          # default: iterations of a verification run instead of 200 (every quantity of Algorithm 1 changes with n; a run of 10 keeps the 400-run statistical checks at a few seconds; plausible 10-100)
VERIFY_CLIP = True           # default: per-sample subgradients clipped to c1 (specs/zcdp_nfl.md 2.6 `clip`; the experiments leave it off): Assumption 1 holds, so the audit's claim is true of the paper's algorithm, and a missing clip can show
VERIFY_INSTANCE_SEED = 0     # default: the seed of the verification network and data (fixed: --seed varies the noise, not the instance)


def setting(context: CheckContext) -> contract.ZcdpNflSetting:
    values = context.parameters[FIGURE]
    settings = replace(settings_of(values), horizon=min(VERIFY_HORIZON, values["horizon"]))
    rng = np.random.default_rng(VERIFY_INSTANCE_SEED)
    network = random_connected_network(VERIFY_AGENTS, VERIFY_EDGES, rng)
    data, _ = noisy_linear_observations(VERIFY_AGENTS, values["num_samples"], values["dim"], rng,
                                        noise=values["data_noise"])
    problem = make_problem(values["problem"], data, values["lam"], values["l2_weight"])
    epsilon = float(values["curve_epsilons"][0])                         # the learning curves' first eps over T iterations
    _, phi1 = zcdp_budget(epsilon, settings)
    return contract.ZcdpNflSetting(problem, data, network, settings.rho, settings.eta0, settings.eta_power, settings.c1,
                                   VERIFY_CLIP, phi1, settings.tau, settings.delta, settings.horizon, epsilon)


def neighbours(setting: contract.ZcdpNflSetting) -> tuple[contract.ZcdpNflSetting, contract.ZcdpNflSetting]:
    return contract.neighbours(setting, horizon=setting.horizon)


def claimed(setting: contract.ZcdpNflSetting) -> PrivacyClaim:
    """Theorem I's Gaussian releases of client 0 over the run, composed: sqrt(2 sum_n varphi^(n))-GDP."""
    phi = setting.phi1 * setting.tau ** -np.arange(setting.horizon, dtype=float)      # varphi^(n) (App. C L373)
    return PrivacyClaim(tradeoff=GaussianDP(float(np.sqrt(2.0 * phi.sum()))))


SUITE = Suite(
    paper="zcdp-nfl", line="L83-L100", setting=setting, reference=contract.REFERENCE, shapes=contract.shapes,
    added_noise=contract.added_noise, calibration=contract.calibration, noise="normal", neighbours=neighbours,
    observe=every_message, claimed=claimed, replay=contract.replay,
    implied_noise=contract.implied_noise)
