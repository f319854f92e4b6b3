"""Generic sympy helpers: prove an identity, prove an inequality on a box, or find a counterexample.

Both helpers first try a symbolic proof; when it fails they search for a counterexample by
evaluating at random points of the stated domain. A counterexample found numerically is confirmed
by exact (rational) substitution and high-precision evaluation before it is reported, so a
floating-point artefact is never reported as a counterexample. When neither a proof nor a
counterexample is found the result says so ('unproved-no-counterexample'): absence of a
counterexample is not a proof.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import sympy as sp

PROVED = "proved"
COUNTEREXAMPLE = "counterexample"
UNPROVED = "unproved-no-counterexample"

DEFAULT_SAMPLES = 400           # random points tried when a symbolic proof fails (harness default)
DEFAULT_SEED = 20240221         # fixed seed: the same search every run
RELATIVE_TOLERANCE = 1e-9       # |lhs - rhs| <= tol (1 + |lhs| + |rhs|) counts as equal in the numeric search
PRECISION_DIGITS = 50           # digits of the exact confirmation of a counterexample
_DEFAULT_BOX = (-3.0, 3.0)      # sampling box of a real symbol without a stated domain
_DEFAULT_POSITIVE_BOX = (0.1, 3.0)


@dataclass(frozen=True)
class SymbolicResult:
    """status: 'proved' | 'counterexample' | 'unproved-no-counterexample'; detail: one line saying how;
    counterexample: {symbol name: value, plus 'lhs'/'rhs' values} or None."""

    status: str
    detail: str
    counterexample: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def proved(self) -> bool:
        return self.status == PROVED

    @property
    def refuted(self) -> bool:
        return self.status == COUNTEREXAMPLE


def _as_matrix(expr) -> sp.Matrix:
    if isinstance(expr, sp.MatrixBase):
        return sp.Matrix(expr)
    if isinstance(expr, (list, tuple)):
        return sp.Matrix(expr)
    return sp.Matrix([sp.sympify(expr)])


def _is_zero(expr: sp.Expr, assumptions=None) -> bool:
    candidates = [expr]
    if assumptions is not None:
        candidates.append(sp.refine(expr, assumptions))
    for candidate in candidates:
        for transform in (sp.simplify, lambda e: sp.simplify(sp.expand(e)), sp.cancel, sp.powsimp):
            try:
                if transform(candidate) == 0:
                    return True
            except (TypeError, NotImplementedError, sp.PolynomialError):
                continue
    return False


def _sampling_box(symbol: sp.Symbol, domains: Mapping | None) -> tuple[float, float]:
    if domains and symbol in domains:
        low, high = domains[symbol]
        return float(low), float(high)
    if symbol.is_positive:
        return _DEFAULT_POSITIVE_BOX
    if symbol.is_nonnegative:
        return (0.0, _DEFAULT_POSITIVE_BOX[1])
    return _DEFAULT_BOX


def _rational(value: float, symbol: sp.Symbol) -> sp.Expr:
    if symbol.is_integer:
        return sp.Integer(int(round(value)))
    return sp.Rational(value).limit_denominator(10**6)


def _draw(symbols: list[sp.Symbol], domains, rng: np.random.Generator) -> dict[sp.Symbol, sp.Expr]:
    point = {}
    for symbol in symbols:
        low, high = _sampling_box(symbol, domains)
        if symbol.is_integer:
            point[symbol] = sp.Integer(int(rng.integers(int(np.ceil(low)), int(np.floor(high)) + 1)))
        else:
            point[symbol] = _rational(float(rng.uniform(low, high)), symbol)
    return point


def _evaluate(expr: sp.Expr, point: Mapping) -> sp.Expr:
    return sp.N(expr.subs(point), PRECISION_DIGITS)


def _point_dict(point: Mapping) -> dict[str, Any]:
    return {str(k): (int(v) if getattr(v, "is_integer", False) else float(v)) for k, v in point.items()}


def prove_identity(lhs, rhs, assumptions=None, *, domains: Mapping | None = None,
                   samples: int = DEFAULT_SAMPLES, seed: int = DEFAULT_SEED) -> SymbolicResult:
    """Is lhs == rhs identically? (scalars or matrices of equal shape)

    1. symbolic: simplify(lhs - rhs) == 0 (also after `refine` with `assumptions`, a sympy
       predicate such as Q.positive(x));
    2. otherwise: evaluate lhs - rhs exactly at `samples` random rational points (each symbol drawn
       from `domains[symbol] = (low, high)`, else from a box respecting its sympy assumptions) and
       report the first point where it is nonzero (to PRECISION_DIGITS digits) as a counterexample.
    """
    lhs_m, rhs_m = _as_matrix(lhs), _as_matrix(rhs)
    if lhs_m.shape != rhs_m.shape:
        return SymbolicResult(COUNTEREXAMPLE, f"shapes differ: {lhs_m.shape} vs {rhs_m.shape}",
                              {"lhs_shape": lhs_m.shape, "rhs_shape": rhs_m.shape})
    difference = lhs_m - rhs_m
    if all(_is_zero(entry, assumptions) for entry in difference):
        return SymbolicResult(PROVED, "simplify(lhs - rhs) == 0")
    symbols = sorted(set().union(*(entry.free_symbols for entry in difference)), key=str)
    rng = np.random.default_rng(seed)
    for _ in range(samples if symbols else 1):
        point = _draw(symbols, domains, rng)
        for index, entry in enumerate(difference):
            value = _evaluate(entry, point)
            if not value.is_number or value.has(sp.nan, sp.zoo):
                continue
            lhs_value, rhs_value = _evaluate(lhs_m[index], point), _evaluate(rhs_m[index], point)
            scale = 1 + abs(complex(lhs_value)) + abs(complex(rhs_value))
            if abs(complex(value)) > RELATIVE_TOLERANCE * scale:
                example = _point_dict(point)
                example.update(lhs=_num(lhs_value), rhs=_num(rhs_value), entry=index)
                return SymbolicResult(COUNTEREXAMPLE, f"lhs != rhs at {_point_dict(point)}: "
                                      f"{_num(lhs_value)} vs {_num(rhs_value)}", example)
    return SymbolicResult(UNPROVED, f"simplify did not reduce lhs - rhs to 0, and {samples} random "
                          "points gave no counterexample")


def _num(value) -> float | complex:
    number = complex(value)
    return number.real if abs(number.imag) < 1e-30 else number


def _assumption_symbols(domains: Mapping[sp.Symbol, tuple[float, float]]) -> dict[sp.Symbol, sp.Symbol]:
    """Replacement symbols carrying the sign information of each box (for sympy's sign reasoning)."""
    replacement = {}
    for symbol, (low, _high) in domains.items():
        if low > 0:
            replacement[symbol] = sp.Symbol(symbol.name, positive=True)
        elif low >= 0:
            replacement[symbol] = sp.Symbol(symbol.name, nonnegative=True)
        else:
            replacement[symbol] = sp.Symbol(symbol.name, real=True)
    return replacement


def _uniform_or_heavy(rng: np.random.Generator, lows: np.ndarray, highs: np.ndarray, samples: int) -> np.ndarray:
    """Uniform draws on bounded sides; an unbounded side is reached with exponential tails (scale 10)."""
    draws = np.empty((samples, lows.size))
    for j, (low, high) in enumerate(zip(lows, highs)):
        if np.isfinite(low) and np.isfinite(high):
            draws[:, j] = rng.uniform(low, high, samples)
        elif np.isfinite(low):
            draws[:, j] = low + rng.exponential(10.0, samples)
        elif np.isfinite(high):
            draws[:, j] = high - rng.exponential(10.0, samples)
        else:
            draws[:, j] = rng.normal(0.0, 10.0, samples)
    return draws


def _sign_candidates(gap: sp.Expr, domains, replacement):
    """Forms of rhs - lhs whose sign sympy may decide: (a) with sign-assumption symbols (valid on the
    sign domain of the box, a superset of it), simplified and factored; (b) on the box itself, each
    bounded symbol x in [lo, hi] written lo + (hi - lo) s/(1 + s) with s >= 0 (covers [lo, hi); the
    endpoint hi follows by continuity), half-bounded ones lo + s or hi - s."""
    signed = gap.subs(replacement)
    for how, transform in (("sign domain, simplify", sp.simplify), ("sign domain, factor", sp.factor)):
        try:
            yield how, transform(signed)
        except (TypeError, NotImplementedError, sp.PolynomialError):
            continue
    box_substitution = {}
    for symbol, (low, high) in domains.items():
        s = sp.Symbol(f"_{symbol.name}_s", nonnegative=True)
        lo, hi = sp.nsimplify(low), sp.nsimplify(high)
        if np.isfinite(low) and np.isfinite(high):
            box_substitution[symbol] = lo + (hi - lo) * s / (1 + s)
        elif np.isfinite(low):
            box_substitution[symbol] = lo + s
        elif np.isfinite(high):
            box_substitution[symbol] = hi - s
        else:
            box_substitution[symbol] = replacement[symbol]
    try:
        yield "box substitution, factor", sp.factor(sp.together(gap.subs(box_substitution)))
    except (TypeError, NotImplementedError, sp.PolynomialError):
        return


def prove_inequality(lhs, rhs, symbols_with_domains: Mapping[sp.Symbol, tuple[float, float]], *,
                     samples: int = 2000, seed: int = DEFAULT_SEED, strict: bool = False) -> SymbolicResult:
    """Does lhs <= rhs (lhs < rhs if strict) hold for every point of the box `symbols_with_domains`
    = {symbol: (low, high)}? Every free symbol must have a domain.

    1. symbolic: sympy decides the sign of rhs - lhs (simplified / factored) using the sign
       information of the box, or after mapping the box onto nonnegative parameters -> 'proved';
    2. otherwise: random search over the box (uniform draws plus the box's corners), with float
       evaluation; the worst violating point is confirmed by exact rational substitution
       -> 'counterexample' (with the point, lhs, rhs); none found -> 'unproved-no-counterexample'.
    The symbolic step tries the sign domain of the box (a superset of it) and the box itself
    (see `_sign_candidates`); either way 'proved' covers the whole box.
    """
    lhs, rhs = sp.sympify(lhs), sp.sympify(rhs)
    domains = {symbol: (float(low), float(high)) for symbol, (low, high) in symbols_with_domains.items()}
    free = (lhs.free_symbols | rhs.free_symbols)
    missing = free - set(domains)
    if missing:
        raise ValueError(f"every free symbol needs a domain; missing {sorted(map(str, missing))}")
    replacement = _assumption_symbols(domains)
    for how, gap in _sign_candidates(rhs - lhs, domains, replacement):
        if (gap.is_positive if strict else gap.is_nonnegative):
            return SymbolicResult(PROVED, f"sympy ({how}): rhs - lhs = {gap} is "
                                  f"{'positive' if strict else 'nonnegative'}")
    symbols = sorted(domains, key=str)
    gap_function = sp.lambdify(symbols, rhs - lhs, modules="numpy")
    rng = np.random.default_rng(seed)
    lows = np.array([domains[s][0] for s in symbols])
    highs = np.array([domains[s][1] for s in symbols])
    draws = _uniform_or_heavy(rng, lows, highs, samples) if symbols else np.zeros((1, 0))
    if symbols and len(symbols) <= 10 and np.all(np.isfinite(lows)) and np.all(np.isfinite(highs)):
        corners = np.array(np.meshgrid(*[[lo, hi] for lo, hi in zip(lows, highs)])).reshape(len(symbols), -1).T
        draws = np.vstack([corners, draws])
    with np.errstate(all="ignore"):
        values = np.asarray(gap_function(*draws.T), dtype=float) * np.ones(draws.shape[0])
    violated = values <= 0 if strict else values < 0
    violated &= np.isfinite(values)
    if violated.any():
        order = np.argsort(values)
        for index in order[: min(20, int(violated.sum()))]:
            if not violated[index]:
                continue
            point = {s: _rational(float(v), s) for s, v in zip(symbols, draws[index])}
            exact_gap = _evaluate(rhs - lhs, point)
            if exact_gap.is_real and ((exact_gap <= 0) if strict else (exact_gap < 0)):
                example = _point_dict(point)
                example.update(lhs=float(_evaluate(lhs, point)), rhs=float(_evaluate(rhs, point)))
                return SymbolicResult(COUNTEREXAMPLE, f"lhs {'>=' if strict else '>'} rhs at {_point_dict(point)}: "
                                      f"{example['lhs']} vs {example['rhs']}", example)
    return SymbolicResult(UNPROVED, f"sympy could not decide the sign of rhs - lhs; {draws.shape[0]} points of "
                          f"the box gave no counterexample (min rhs - lhs = {float(np.nanmin(values)):.6g})",
                          extra={"min_gap": float(np.nanmin(values))})
