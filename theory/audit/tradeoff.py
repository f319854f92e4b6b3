"""Trade-off curves (f-DP; Dong, Roth & Su 2022, "Gaussian Differential Privacy", JRSS B) that a claim about a
whole transcript implies, and the lower bound one tested event gives on them.

A mechanism is f-DP when every test between the outputs on two neighbouring datasets has power at most
`max_power(level)` = 1 - f(level) at every level. An event S with P[M(d0) in S] <= p0_hi and
P[M(d1) in S] >= p1_lo refutes the claim when p1_lo > max_power(p0_hi). `factor_lower_bound` states by how much:
the largest factor c by which the claim's privacy parameters (mu, or every eps) must be multiplied before the
event stops refuting it, so c > 1 refutes and "noise too small by 2x" shows as c close to 2.

Two curves, the ones the papers' calibrations imply under adaptive composition:
- `GaussianDP(mu)`: Gaussian noise of scale sigma_t on a quantity of l2 sensitivity Delta_t in each release is
  exactly (Delta_t / sigma_t)-GDP, and releases compose to mu = sqrt(sum (Delta_t / sigma_t)^2), adaptively
  (Dong, Roth & Su, Thm 2.7 and Cor. 3.3). max_power(a) = Phi(Phi^-1(a) + mu).
- `ComposedPureDP(epsilon, releases)`: `releases` adaptive releases each eps-DP, whatever their mechanism. The
  tightest curve is that of as many randomized responses (Kairouz, Oh & Viswanath 2015, Thm 3.5; Dong, Roth & Su,
  Prop. 2.5 and Thm 3.2): the number K of "yes" answers is Binomial(n, 1/(1 + e^eps)) under d0 and
  Binomial(n, e^eps/(1 + e^eps)) under d1, and the best tests reject for large K, randomized at the boundary, so
  the curve interpolates linearly between the points (P0[K >= k], P1[K >= k]).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special, stats

FACTOR_RANGE = (1e-3, 1e3)   # the factors the bisection searches (beyond them the bound is reported at the end)
BISECTIONS = 60              # halvings of the log-range: a relative precision far below the bounds' own
PRUNE_SLACK = 1e-9           # log-factor margin of largest_factor's pruning (any > 0 keeps it exact; small prunes early)


class Tradeoff:
    """An f-DP claim. Subclasses give `max_power(level, factor)` (vectorized over both)."""

    def max_power(self, level, factor=1.0) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def describe(self) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    def factor_lower_bound(self, p_numerator_low, p_denominator_high) -> np.ndarray:
        """The largest factor c with p1_lo > max_power(p0_hi, c) (0 where p1_lo <= p0_hi), by bisection in log c:
        max_power increases with c. Vectorized."""
        low, high = np.broadcast_arrays(np.asarray(p_numerator_low, float), np.asarray(p_denominator_high, float))
        entries, values = self._bisection(low.ravel(), high.ravel(), prune=False)
        factor = np.zeros(low.size)
        factor[entries] = values
        return factor.reshape(low.shape) if low.ndim else float(factor[0])

    def largest_factor(self, p_numerator_low, p_denominator_high) -> tuple[int, float]:
        """The index and value of the largest entry of factor_lower_bound over 1-d arrays (the first of equal ones),
        the same numbers, for the audit's event search over thousands of candidates: the bisection drops, as it goes,
        the entries that can no longer be the largest, so that it costs about as much as a few entries."""
        low, high = np.asarray(p_numerator_low, float), np.asarray(p_denominator_high, float)
        entries, values = self._bisection(low, high, prune=True)
        if not entries.size:      # no entry refutes even at the smallest factor: all 0
            return 0, 0.0
        best = int(np.argmax(values))
        return int(entries[best]), float(values[best])

    def _bisection(self, low: np.ndarray, high: np.ndarray, prune: bool) -> tuple[np.ndarray, np.ndarray]:
        """The entries (indices) that refute at the smallest factor, and their factor lower bounds (the others are 0).
        Each entry's bisection is its own (max_power is elementwise), so dropping some changes no other's value.
        `prune` drops those whose upper end lies below another's lower end (by more than PRUNE_SLACK, so that no
        rounding of exp can make a dropped entry equal to the largest)."""
        entries = np.flatnonzero(low > self.max_power(high, FACTOR_RANGE[0]))
        lo, hi = (np.full(entries.size, np.log(end)) for end in FACTOR_RANGE)
        for _ in range(BISECTIONS):
            middle = (lo + hi) / 2
            refutes = low[entries] > self.max_power(high[entries], np.exp(middle))
            lo, hi = np.where(refutes, middle, lo), np.where(refutes, hi, middle)
            if prune and entries.size > 1:
                kept = hi >= lo.max() - PRUNE_SLACK
                entries, lo, hi = entries[kept], lo[kept], hi[kept]
        return entries, np.exp(lo)


@dataclass(frozen=True)
class GaussianDP(Tradeoff):
    mu: float

    def max_power(self, level, factor=1.0) -> np.ndarray:
        return special.ndtr(special.ndtri(np.asarray(level, float)) + np.asarray(factor) * self.mu)

    def factor_lower_bound(self, p_numerator_low, p_denominator_high) -> np.ndarray:
        """(Phi^-1(p1_lo) - Phi^-1(p0_hi)) / mu, in closed form (0 where that is negative)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            value = (special.ndtri(np.asarray(p_numerator_low, float)) - special.ndtri(np.asarray(p_denominator_high, float))) / self.mu
        value = np.where(value > 0, value, 0.0)      # NaN and negative: no information
        return value if value.ndim else float(value)

    def largest_factor(self, p_numerator_low, p_denominator_high) -> tuple[int, float]:
        values = np.atleast_1d(self.factor_lower_bound(p_numerator_low, p_denominator_high))   # closed form: all
        best = int(np.argmax(values))
        return best, float(values[best])

    def describe(self) -> str:
        return f"{self.mu:.4g}-GDP"


@dataclass(frozen=True)
class ComposedPureDP(Tradeoff):
    epsilon: float
    releases: int

    def max_power(self, level, factor=1.0) -> np.ndarray:
        level, factor = np.broadcast_arrays(np.asarray(level, float), np.asarray(factor, float))
        yes = np.arange(self.releases, -1, -1)                          # K from n down: the likelihood ratio falls
        p_yes = special.expit(self.epsilon * factor)[..., None]          # e^eps / (1 + e^eps)
        first = stats.binom.pmf(yes, self.releases, 1 - p_yes)          # under d0
        second = stats.binom.pmf(yes, self.releases, p_yes)             # under d1
        zero = np.zeros(level.shape + (1,))
        curve0 = np.concatenate([zero, np.cumsum(first, axis=-1)], axis=-1)
        curve1 = np.concatenate([zero, np.cumsum(second, axis=-1)], axis=-1)
        # piecewise-linear interpolation of (curve0, curve1) at `level`, row by row
        position = np.clip((curve0 < level[..., None]).sum(axis=-1), 1, self.releases + 1)
        take = lambda curve, offset: np.take_along_axis(curve, (position - offset)[..., None], axis=-1)[..., 0]
        left0, right0, left1, right1 = take(curve0, 1), take(curve0, 0), take(curve1, 1), take(curve1, 0)
        share = np.clip((level - left0) / np.maximum(right0 - left0, 1e-300), 0.0, 1.0)
        return np.minimum(left1 + share * (right1 - left1), 1.0)

    def describe(self) -> str:
        return f"{self.releases} adaptive {self.epsilon:g}-DP releases (optimal composition)"
