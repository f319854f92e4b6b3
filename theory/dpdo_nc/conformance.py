"""`dpverify verify dpdo-nc`: the verification setting and what the conformance checks need
(theory/conformance.py).

The setting is Fig. 1's instance (localization, the three graphs of L487 switched cyclically, phi =
1/2 ||x||^2, the first eps of the figure) over VERIFY_HORIZON rounds, built from the figure's
experiment parameters, with a smaller Omega (VERIFY_RADIUS) so that every line of Algorithm 1 acts. The privacy audit observes node 0's broadcast q_2 under neighbouring costs
(contract.neighbours); Algorithm 1 calibrates every release to eps (line 1), so one release is
claimed eps-DP.
"""

from __future__ import annotations

import numpy as np

from dpverify.algorithms.dpdo_nc import contract
from dpverify.algorithms.dpdo_nc.algorithm import paper_schedule
from dpverify.theory.audit import PrivacyClaim
from dpverify.theory.conformance import Suite
from dpverify.theory.dpdo_nc.instances import instance_of, params_of
from dpverify.theory.execution import CheckContext

FIGURE = "figure-1"         # the experiment whose instance and parameters verify uses (Fig. 1, L503)
VERIFY_HORIZON = 20         # default: rounds of a verification run (every quantity of Algorithm 1 changes with t from round 2; plausible 10-100)
VERIFY_RADIUS = 1.0         # default: Omega = {||x||_1 <= 1} instead of Fig. 1's 3, so that the projection binds (the target starts at ||x||_1 = 1.75): a run that never projects cannot show a missing projection


def setting(context: CheckContext) -> contract.DpdoNcSetting:
    values = context.parameters[FIGURE]
    epsilon = float(values["epsilons"][0])
    params = params_of(values, epsilon, values["mirrors"][0])   # Fig. 1: phi = 1/2 ||x||^2 (L501)
    return contract.DpdoNcSetting(instance_of(values), paper_schedule(values["window"]),
                                  np.zeros((values["num_agents"], values["dim"])), epsilon, params.theta,
                                  params.mirror.scale, VERIFY_RADIUS, min(VERIFY_HORIZON, values["horizon"]))


SUITE = Suite(
    paper="dpdo-nc", line="L159-L168", setting=setting, reference=contract.REFERENCE, shapes=contract.shapes,
    added_noise=contract.added_noise, calibration=contract.calibration, noise="laplace", neighbours=contract.neighbours, observe=contract.observe,
    claimed=lambda setting: PrivacyClaim(epsilon=setting.epsilon), replay=contract.replay)
