"""Why no audit of dpdo-nc's verification transcript can refute Gaussian noise of the Laplace variance (docs/verify.md).

The audit's claim is the exact tradeoff curve of T = VERIFY_HORIZON releases, each AUDIT_EPSILON-DP, composed
(theory/audit/tradeoff.py ComposedPureDP). Gaussian noise of std sqrt(2) b in place of Laplace(b), with b calibrated
to an l1 sensitivity Delta_1 = eps_t b, shifts each release by at most Delta_2 <= Delta_1, so each is at most
(eps_t / sqrt 2)-GDP and the transcript mu-GDP with mu = sqrt(sum_t eps_t^2 / 2) (Dong, Roth and Su 2022, Thm 1,
Cor. 2). Its most powerful test has power Phi(Phi^-1(alpha) + mu) at level alpha. Printed: that power against the
claim's at levels down to 1e-8. Run from the checkout: python docs/measurements/gaussian_for_laplace_bound.py (a second)."""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from dpverify.theory.audit.tradeoff import ComposedPureDP, GaussianDP  # noqa: E402
from dpverify.theory.dpdo_nc.conformance import AUDIT_EPSILON, VERIFY_HORIZON  # noqa: E402

claim = ComposedPureDP(AUDIT_EPSILON, VERIFY_HORIZON)
mu = np.sqrt(VERIFY_HORIZON * AUDIT_EPSILON**2 / 2.0)
levels = np.logspace(-8, np.log10(0.5), 401)
gaussian, claimed = GaussianDP(mu).max_power(levels), claim.max_power(levels)
print(f"{VERIFY_HORIZON} releases of {AUDIT_EPSILON}-DP; Gaussian for Laplace: at most {mu:.2f}-GDP")
print(f"levels 1e-8 to 0.5 where its power exceeds the claim's: {int((gaussian > claimed).sum())} of {levels.size}; "
      f"largest power / claimed power: {float((gaussian / claimed).max()):.2f}")
for level in (1e-6, 1e-4, 1e-2):
    print(f"  level {level:g}: power {float(GaussianDP(mu).max_power(level)):.3g}, "
          f"claimed {float(claim.max_power(np.array(level))):.3g}")
