"""The privacy table: four epsilons of one privacy claim side by side, at one delta.

- paper: the epsilon as the paper states or derives it (its own composition, e.g. basic composition);
- accountant: a tight accountant (dp-accounting's PLD, and its RDP accountant) on the same sequence of
  releases as the paper's adversary composes them;
- ledger: what the harness's privacy ledger (`algorithms/core/noise.py`) gives: the smaller of its two
  totals, basic composition of pure eps and the zCDP route (sum of rho, then the RDP conversion of
  `zcdp_to_dp_tight`);
- audit: the empirical lower bound of the claim's audit, with its samples and confidence.

A cell the table cannot fill holds `value = None` and a `note` saying why ("n/a: ..."), never a made-up
number. Checks build rows with `privacy_row` and put them in their measurement's values under
`PRIVACY_KEY`; the report moves them to the claim's `privacy` record in summary.json.

dp-accounting is a dependency of dpverify; when it does not import (a broken installation) the accountant
cell says so instead of crashing the check.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpverify.algorithms.core.errors import InvalidParameterError
from dpverify.algorithms.core.noise import GAUSSIAN, LAPLACE, PrivacyLedger
from dpverify.algorithms.core.privacy import gdp_mu_of_gaussians, zcdp_to_dp_tight
from dpverify.theory.audit import AuditResult, bounds

PRIVACY_KEY = "privacy"          # the measurement values' key that holds a check's privacy-table rows
# default: delta at which a pure-eps claim is compared (the paper's claim holds at every delta >= 0;
# the tight accountants need a delta > 0). 1e-5 is the delta of the DPDO-NC example.
COMPARISON_DELTA = 1e-5
NOT_INSTALLED = ("not computed: dp-accounting, a dependency of dpverify, does not import: the installation is broken; "
                 "reinstall dpverify (python -m pip install -e . in the checkout)")
MULTIPLIER_DIGITS = 12           # releases whose noise multipliers agree to this many digits are grouped


class AccountantUnavailable(RuntimeError):
    """dp-accounting does not import."""


@dataclass(frozen=True)
class Release:
    """`count` identical releases of one mechanism; noise_multiplier = noise scale / sensitivity
    (Laplace: b / Delta_1, so pure eps = 1/multiplier; Gaussian: sigma / Delta_2)."""

    mechanism: str
    noise_multiplier: float
    count: int = 1

    def __post_init__(self) -> None:
        if self.mechanism not in (LAPLACE, GAUSSIAN):
            raise InvalidParameterError(f"mechanism must be {LAPLACE!r} or {GAUSSIAN!r}; got {self.mechanism!r}")
        if not (self.noise_multiplier > 0 and math.isfinite(self.noise_multiplier)):
            raise InvalidParameterError(f"noise_multiplier must be finite and > 0; got {self.noise_multiplier!r}")
        if self.count < 1:
            raise InvalidParameterError(f"count must be >= 1; got {self.count!r}")


DESCRIBED_GROUPS = 3     # longer release sequences are summarized per mechanism (count and multiplier range)


def describe(releases: Sequence[Release]) -> str:
    if len(releases) <= DESCRIBED_GROUPS:
        return " + ".join(f"{r.count} x {r.mechanism}(scale/sensitivity = {r.noise_multiplier:.4g})" for r in releases)
    parts = []
    for mechanism in (LAPLACE, GAUSSIAN):
        of_kind = [r for r in releases if r.mechanism == mechanism]
        if of_kind:
            multipliers = [r.noise_multiplier for r in of_kind]
            parts.append(f"{sum(r.count for r in of_kind)} x {mechanism}(scale/sensitivity from "
                         f"{min(multipliers):.4g} to {max(multipliers):.4g})")
    return " + ".join(parts)


def grouped(mechanisms: Iterable[tuple[str, float]]) -> list[Release]:
    """Consecutive (mechanism, multiplier) pairs with equal values (to MULTIPLIER_DIGITS) as one Release each."""
    releases: list[Release] = []
    for mechanism, multiplier in mechanisms:
        multiplier = float(f"{multiplier:.{MULTIPLIER_DIGITS}g}")
        last = releases[-1] if releases else None
        if last is not None and (last.mechanism, last.noise_multiplier) == (mechanism, multiplier):
            releases[-1] = Release(mechanism, multiplier, last.count + 1)
        else:
            releases.append(Release(mechanism, multiplier))
    return releases


def worst_agent(ledger: PrivacyLedger) -> int:
    """The agent whose releases cost the most by the ledger's zCDP total (the one a table row is about)."""
    return int(np.argmax(ledger.total_zcdp()))


def ledger_releases(ledger: PrivacyLedger, agent: int | None = None) -> list[Release]:
    """One agent's releases as recorded in the ledger (data-independent releases, sensitivity 0, cost
    nothing and are left out)."""
    agent = worst_agent(ledger) if agent is None else agent
    pairs = [(r.mechanism, float(r.scale[agent] / r.sensitivity[agent]))
             for r in ledger.releases if r.sensitivity[agent] > 0]
    return grouped(pairs)


def ledger_at(ledger: PrivacyLedger, iteration: int) -> PrivacyLedger:
    """The ledger of one iteration's releases alone (what a per-iteration guarantee is about)."""
    single = PrivacyLedger()
    for release in ledger.releases:
        if release.iteration == iteration:
            single.record(release)
    return single


def _compact(releases: Sequence[Release]) -> list[Release]:
    """Gaussian releases compose exactly into one Gaussian with mu = sqrt(sum count/multiplier^2)
    (Dong, Roth & Su 2019 Cor. 3.3), so an accountant needs one event (one composition) for all of them."""
    gaussians = [r for r in releases if r.mechanism == GAUSSIAN]
    if not gaussians:
        return list(releases)
    counts = np.array([r.count for r in gaussians], dtype=float)
    mu = gdp_mu_of_gaussians(np.sqrt(counts), [r.noise_multiplier for r in gaussians])
    return [r for r in releases if r.mechanism != GAUSSIAN] + [Release(GAUSSIAN, 1.0 / mu)]


def _event(releases: Sequence[Release]):
    try:
        import dp_accounting
    except ImportError as error:
        raise AccountantUnavailable(NOT_INSTALLED) from error
    kinds = {LAPLACE: dp_accounting.LaplaceDpEvent, GAUSSIAN: dp_accounting.GaussianDpEvent}
    events = [dp_accounting.SelfComposedDpEvent(kinds[r.mechanism](r.noise_multiplier), r.count)
              for r in _compact(releases)]
    return dp_accounting.ComposedDpEvent(events)


PLD_INTERVAL = 1e-4              # dp-accounting's default value discretization interval of the privacy loss
# default: for very leaky releases (eps in the thousands) the interval grows to this fraction of the RDP
# epsilon per composition, so the discretized loss stays a few thousand points instead of 1e10 (76 GiB
# for one Gaussian with sigma/Delta = 1e-3 at the default interval)
PLD_RELATIVE_RESOLUTION = 1e-5


def pld_epsilon(releases: Sequence[Release], delta: float) -> float:
    """eps at delta of the composed releases by dp-accounting's privacy-loss-distribution accountant.
    Its discretization is pessimistic (an upper bound), off by at most one interval per composition:
    the interval is PLD_INTERVAL, or PLD_RELATIVE_RESOLUTION x the RDP epsilon / compositions when larger."""
    event = _event(releases)   # first: without dp-accounting it raises AccountantUnavailable, not ImportError
    from dp_accounting.pld import PLDAccountant

    compositions = sum(r.count for r in _compact(releases))
    interval = max(PLD_INTERVAL, PLD_RELATIVE_RESOLUTION * rdp_epsilon(releases, delta) / compositions)
    accountant = PLDAccountant(value_discretization_interval=interval)
    accountant.compose(event)
    return float(accountant.get_epsilon(delta))


def rdp_epsilon(releases: Sequence[Release], delta: float) -> float:
    """eps at delta of the composed releases by dp-accounting's RDP accountant (its default orders)."""
    event = _event(releases)   # first: without dp-accounting it raises AccountantUnavailable, not ImportError
    from dp_accounting.rdp import RdpAccountant

    accountant = RdpAccountant()
    accountant.compose(event)
    return float(accountant.get_epsilon(delta))


def accountant_version() -> str:
    from importlib.metadata import version

    return f"dp-accounting {version('dp-accounting')}"


# ------------------------------------------------------------------------------------------------
# the row's cells


def cell(value: float | None, note: str, **extra: Any) -> dict[str, Any]:
    """A table cell: a number with how it was obtained, or None with why not ('n/a: ...')."""
    return {"value": None if value is None else float(value), "note": note, **extra}


def not_applicable(why: str) -> dict[str, Any]:
    return cell(None, f"n/a: {why}")


# default: above this RDP epsilon (no meaningful privacy) the PLD accountant is not run: its discretized
# loss would need a huge grid or overflow (exp of the interval), and the RDP value already says enough
PLD_EPSILON_CEILING = 1e4


def accountant_cell(releases: Sequence[Release], delta: float) -> dict[str, Any]:
    """PLD epsilon (the tight one) as the value, RDP beside it; the RDP value alone above
    PLD_EPSILON_CEILING; NOT_INSTALLED when dp-accounting does not import."""
    try:
        rdp = rdp_epsilon(releases, delta)
        if rdp > PLD_EPSILON_CEILING:
            return cell(rdp, f"{describe(releases)}; PLD not run above eps {PLD_EPSILON_CEILING:g}",
                        accountant=f"RDP ({accountant_version()})", rdp=rdp)
        pld = pld_epsilon(releases, delta)
    except AccountantUnavailable:
        return cell(None, NOT_INSTALLED)
    return cell(pld, f"{describe(releases)}; RDP accountant: {rdp:.4g}", accountant=f"PLD ({accountant_version()})",
                rdp=rdp)


def ledger_cell(ledger: PrivacyLedger, delta: float, agent: int | None = None) -> dict[str, Any]:
    """The smaller of the ledger's two valid totals for one agent: basic composition of eps (inf when a
    release has no eps, or when the declared deltas add up to more than `delta`) and the zCDP route
    sum rho -> (eps, delta) (`zcdp_to_dp_tight`)."""
    agent = worst_agent(ledger) if agent is None else agent
    basic = float(ledger.total_epsilon()[agent])
    # basic composition of (eps_k, delta_k) holds at sum delta_k only (1e-12: the float sum of equal deltas)
    if ledger.total_delta()[agent] > delta * (1 + 1e-12):
        basic = math.inf
    rho = float(ledger.total_zcdp()[agent])
    zcdp_route = float(zcdp_to_dp_tight(rho, delta)) if math.isfinite(rho) else math.inf
    routes = f"basic composition {basic:.4g}; zCDP route rho = {rho:.4g} -> {zcdp_route:.4g}"
    if math.isinf(min(basic, zcdp_route)):
        return not_applicable(f"the ledger holds a data-dependent release without noise: no finite eps ({routes})")
    if basic <= zcdp_route:
        return cell(basic, f"ledger, basic composition of the releases' eps ({routes})", route="basic")
    return cell(zcdp_route, f"ledger, zCDP route, CKS20 Prop. 12 conversion ({routes})", route="zcdp")


def audit_lower_bound_at(result: AuditResult, delta: float) -> float:
    """The audit's eps lower bound at `delta` (which may differ from the delta the audit claimed): the
    strongest ln((p1_lo - delta)/p0_hi) over its tested events, from the same simultaneous
    Clopper-Pearson bounds, so it holds at the audit's confidence."""
    return max(max(0.0, float(bounds.epsilon_lower_bound(event["p_numerator_low"], event["p_denominator_high"], delta)))
               for event in result.details["events"])


def audit_cell(results: Sequence[AuditResult], delta: float, what: str, confidence: float | None = None) -> dict[str, Any]:
    """The largest eps lower bound at `delta` among audits of the same guarantee; `confidence` is
    their simultaneous confidence when the caller Bonferroni-corrected them (default: the audit's own)."""
    best = max(results, key=lambda result: audit_lower_bound_at(result, delta))
    return cell(audit_lower_bound_at(best, delta), what, samples_per_side=best.samples_per_side,
                confidence=best.confidence if confidence is None else confidence)


def privacy_row(setting: str, delta: float, delta_note: str, *, paper: dict[str, Any], accountant: dict[str, Any],
                ledger: dict[str, Any], audit: dict[str, Any]) -> dict[str, Any]:
    """One row of the privacy table (the `privacy` record of summary.json; schema 1.2)."""
    return {"setting": setting, "delta": float(delta), "delta_note": delta_note, "paper_epsilon": paper,
            "accountant_epsilon": accountant, "ledger_epsilon": ledger, "audit_lower_bound": audit}
