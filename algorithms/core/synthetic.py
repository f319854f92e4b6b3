"""Synthetic data generators of the papers. They are pure (no I/O), so theory's statistical checks
run on the same instances as the figures; file loaders of real datasets live in reproductions/.

zCDP-NFL (seeds/004 L304) says only: "Each node k possesses M_k = 50 local noisy observations of
the unknown parameter w of dimension P = 8". The model below is the harness default of
specs/zcdp_nfl.md Sec. 6; each constant is named and reported as a default.
"""

from __future__ import annotations

import numpy as np

from dpverify.algorithms.core.errors import InvalidParameterError
from dpverify.algorithms.core.problems import LocalData
from dpverify.algorithms.core.validation import require_positive, require_positive_int

FEATURE_NORM_BOUND = 1.0   # default: rows rescaled to ||x|| <= 1, so LAD subgradients have norm <= 1 = c_1
OBSERVATION_NOISE_STD = 0.1  # default: y = x^T w0 + e, e ~ N(0, 0.1^2)
STUDENT_T_DOF = 2.0        # default for the heavy-tailed LAD variant


def noisy_linear_observations(num_agents: int, num_samples: int, dim: int, rng: np.random.Generator, *,
                              noise: str = "gaussian", noise_std: float = OBSERVATION_NOISE_STD) -> tuple[LocalData, np.ndarray]:
    """Noisy observations y = x^T w0 + e of an unknown w0 ~ N(0, I), spread over agents.

    Returns the data and the true parameter w0."""
    require_positive_int("num_agents", num_agents)
    require_positive_int("num_samples", num_samples)
    require_positive_int("dim", dim)
    require_positive("noise_std", noise_std)
    true_parameter = rng.standard_normal(dim)
    features = rng.standard_normal((num_agents, num_samples, dim))
    norms = np.linalg.norm(features, axis=-1, keepdims=True)
    features = features / np.maximum(norms / FEATURE_NORM_BOUND, 1.0)
    if noise == "gaussian":
        errors = noise_std * rng.standard_normal((num_agents, num_samples))
    elif noise == "student-t":
        errors = noise_std * rng.standard_t(STUDENT_T_DOF, size=(num_agents, num_samples))
    else:
        raise InvalidParameterError(f"noise must be 'gaussian' or 'student-t'; got {noise!r}")
    targets = features @ true_parameter + errors
    return LocalData(features=features, targets=targets), true_parameter
