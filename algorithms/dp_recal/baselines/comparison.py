"""The private algorithms compared with DP-RECAL in seeds/001 Sec. VII (Figs. 3, 6; Tables IV, V),
behind one signature:

    run(problem, data, network, *, epsilon, delta, plf, decay, clip, replicas, rng, x1=None,
        stepsize=None, keep_history=True) -> PrivateRunSummary

plf = the privacy-leaking activations allowed (the run length follows from it); epsilon=None runs the
non-private algorithm (sigma1 = 0); decay = R of sigma_t^2 = sigma_1^2 R^(1-t); stepsize=None = the
frozen tuned rule below. Each module's docstring gives its update rule, noise placement, sensitivity
and message count. Extra keyword-only options (not part of the common signature): every module takes
`sensitivity_reading` ("assumption3" | "per_sample"); dp-admm-13 and dp-mradmm-17 take `stepsize_decay`
(gamma of alpha_k = alpha_0 gamma^k: 0.999 by default for dp-admm-13, 1 (fixed) for dp-mradmm-17).
"""

from __future__ import annotations

from dpverify.algorithms.dp_recal.baselines import (
    dp_admm_huang,
    dp_admm_zhang,
    dp_extra,
    dp_ic_admm,
    dp_mradmm,
    dp_nids,
    dp_rwadmm,
)

MODULES = {
    "dp-admm-12": dp_admm_zhang,
    "dp-admm-13": dp_admm_huang,
    "dp-mradmm-17": dp_mradmm,
    "dp-nids-28": dp_nids,
    "dp-extra-27": dp_extra,
    "dp-rwadmm-30": dp_rwadmm,
    "dp-ic-admm-25": dp_ic_admm,   # v0 only (v0:L520, ref. [20] there)
}
COMPARED = {key: module.run for key, module in MODULES.items()}
DISPLAY_NAMES = {key: module.NAME for key, module in MODULES.items()}

# Frozen defaults, per loss, as rules in L = max_i L_i + 2 ridge (`dp_common.smoothness`): for dp-extra-27,
# dp-nids-28 and dp-admm-13 the value v gives stepsize = v / L; for the ADMM penalties (dp-admm-12,
# dp-mradmm-17, dp-rwadmm-30) the penalty is c = v L and stepsize = 1/c. Tuned by
# reproductions/dp_recal/tune_baselines.py on the NON-private problem (spec §6): 8-agent ring, 40 samples of
# dimension 6 per agent, features U[0, 1], labels +-1, ridge 0.5, lasso 0.02 (lasso 0 for dp-mradmm-17);
# v from a grid 0.05..3 minimizing the PLF until the relative error stays below 1e-8.
DEFAULT_STEPSIZES = {
    key: dict(getattr(module, "STEPSIZE_FRACTION", None) or module.PENALTY_FACTOR) for key, module in MODULES.items()
}
STEPSIZE_MEANING = {key: "stepsize = v / L" if hasattr(module, "STEPSIZE_FRACTION") else "penalty c = v L, stepsize = 1/c"
                    for key, module in MODULES.items()}


def default_stepsize(key: str, problem, data) -> float:
    """The frozen default stepsize argument of algorithm `key` on this problem and data."""
    return MODULES[key].default_stepsize(problem, data)
