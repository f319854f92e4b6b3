"""Empirical privacy auditing: lower bounds on eps / rho from black-box samples of a mechanism on
neighbouring datasets (`audit`), and direct sensitivity probes (`sensitivity_probe`).
See `dpverify.theory.audit.auditor` for the method and its references."""

from dpverify.theory.audit.auditor import (
    DEFAULT_CONFIDENCE,
    AuditResult,
    PrivacyClaim,
    ProbeResult,
    audit,
    sensitivity_probe,
)
from dpverify.theory.audit.scores import (
    gaussian_log_likelihood_ratio,
    laplace_log_likelihood_ratio,
)

__all__ = [
    "DEFAULT_CONFIDENCE",
    "AuditResult",
    "PrivacyClaim",
    "ProbeResult",
    "audit",
    "sensitivity_probe",
    "gaussian_log_likelihood_ratio",
    "laplace_log_likelihood_ratio",
]
