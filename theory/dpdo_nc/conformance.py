"""`dpverify verify dpdo-nc`: the verification setting and what the conformance checks need
(theory/verify/conformance.py).

The setting is Fig. 1's instance (localization, the three graphs of L487 switched cyclically, phi =
1/2 ||x||^2, the first eps of the figure) over VERIFY_HORIZON rounds, built from the figure's
experiment parameters, with a smaller Omega (VERIFY_RADIUS) so that every line of Algorithm 1 acts.

The privacy audit observes every broadcast of every node over the whole run (the adversary of L186 sees all
communication) under neighbouring costs of node 0 whose sign alternates from round to round (contract.neighbours:
noise reused across rounds cannot hide a difference that changes), at AUDIT_EPSILON. Algorithm 1 calibrates
every release to eps (line 1; Theorem 1, "eps-DP at each time"), so the run is claimed to be T adaptive eps-DP
releases, whose tightest trade-off curve is that of T randomized responses (theory/audit/tradeoff.py).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from dpverify.algorithms.dpdo_nc import contract
from dpverify.algorithms.dpdo_nc.algorithm import paper_schedule
from dpverify.theory.audit import PrivacyClaim
from dpverify.theory.audit.tradeoff import ComposedPureDP
from dpverify.theory.dpdo_nc.instances import instance_of, params_of
from dpverify.theory.execution import CheckContext
from dpverify.theory.verify.conformance import Suite, every_message

FIGURE = "figure-1"         # the experiment whose instance and parameters verify uses (Fig. 1, L503)
VERIFY_HORIZON = 20         # default: rounds of a verification run (every quantity of Algorithm 1 changes with t from round 2; plausible 10-100)
AUDIT_EPSILON = 0.5         # default: eps of each audited release, Fig. 1's smallest (L503): at its first eps (5) T composed releases may leak almost anything, so nothing could be refuted (plausible 0.1-1)
VERIFY_RADIUS = 1.0         # default: Omega = {||x||_1 <= 1} instead of Fig. 1's 3, so that the projection binds (the target starts at ||x||_1 = 1.75): a run that never projects cannot show a missing projection


def setting(context: CheckContext) -> contract.DpdoNcSetting:
    values = context.parameters[FIGURE]
    epsilon = float(values["epsilons"][0])
    params = params_of(values, epsilon, values["mirrors"][0])   # Fig. 1: phi = 1/2 ||x||^2 (L501)
    return contract.DpdoNcSetting(instance_of(values), paper_schedule(values["window"]),
                                  np.zeros((values["num_agents"], values["dim"])), epsilon, params.theta,
                                  params.mirror.scale, VERIFY_RADIUS, min(VERIFY_HORIZON, values["horizon"]))


def neighbours(setting: contract.DpdoNcSetting) -> tuple[contract.DpdoNcSetting, contract.DpdoNcSetting]:
    return contract.neighbours(replace(setting, epsilon=AUDIT_EPSILON), horizon=setting.horizon, alternating=True)


def claimed(setting: contract.DpdoNcSetting) -> PrivacyClaim:
    """Theorem 1 at each of the T rounds, composed (the optimal composition of T eps-DP releases)."""
    return PrivacyClaim(tradeoff=ComposedPureDP(AUDIT_EPSILON, setting.horizon))


SUITE = Suite(
    paper="dpdo-nc", line="L159-L168", setting=setting, reference=contract.REFERENCE, shapes=contract.shapes,
    added_noise=contract.added_noise, calibration=contract.calibration, noise="laplace", neighbours=neighbours, observe=every_message,
    claimed=claimed, replay=contract.replay, implied_noise=contract.implied_noise)
