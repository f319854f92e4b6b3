"""Empirical privacy auditing: lower bounds on eps / rho from black-box samples of a mechanism on
neighbouring datasets (`audit`), and direct sensitivity probes (`sensitivity_probe`).
See `dpverify.theory.audit.auditor` for the method and its references. Beside it, `accounting` sets
the accountants' upper bounds next to the audit's lower bound (the privacy table), and `tradeoff` the
f-DP curves a whole-transcript claim implies. Imports: the claim model, `instruments` and
`dpverify.algorithms`."""

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
