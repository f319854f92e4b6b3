"""dpverify.theory.instruments.symbolic: identities, inequalities and counterexamples, with the numbers they report."""

import math

import pytest
import sympy as sp

from dpverify.theory.instruments.symbolic import (
    COUNTEREXAMPLE,
    PROVED,
    UNPROVED,
    SymbolicResult,
    prove_identity,
    prove_inequality,
)

x, y = sp.symbols("x y", real=True)
p = sp.Symbol("p", positive=True)


def test_identity_proved():
    result = prove_identity((x + y) ** 2, x**2 + 2 * x * y + y**2)
    assert result == SymbolicResult(PROVED, "simplify(lhs - rhs) == 0")
    assert prove_identity(sp.sin(x) ** 2 + sp.cos(x) ** 2, 1).proved
    assert prove_identity(sp.sqrt(p**2), p).proved  # needs p > 0


def test_identity_with_refine_assumptions():
    z = sp.Symbol("z", real=True)
    assert not prove_identity(sp.Abs(z), z, domains={z: (-2, -1)}).proved
    assert prove_identity(sp.Abs(z), z, assumptions=sp.Q.positive(z)).proved


def test_identity_counterexample_is_exact_and_reported():
    result = prove_identity((x + y) ** 2, x**2 + y**2, domains={x: (1, 2), y: (1, 2)})
    assert result.status == COUNTEREXAMPLE and result.refuted
    point = result.counterexample
    assert point["lhs"] == pytest.approx((point["x"] + point["y"]) ** 2, rel=1e-9)
    assert point["rhs"] == pytest.approx(point["x"] ** 2 + point["y"] ** 2, rel=1e-9)
    assert point["lhs"] - point["rhs"] == pytest.approx(2 * point["x"] * point["y"], rel=1e-9)


def test_identity_of_matrices_and_shape_mismatch():
    a = sp.Matrix([x, y])
    assert prove_identity(a.T * a, sp.Matrix([[x**2 + y**2]])).proved
    result = prove_identity(sp.Matrix([x, y]), sp.Matrix([x, y, 0]))
    assert result.refuted and result.counterexample == {"lhs_shape": (2, 1), "rhs_shape": (3, 1)}


def test_geometric_sum_identity_and_off_by_one():
    tau, phi = sp.symbols("tau phi", positive=True)
    closed = phi * (1 - tau**4) / (tau**3 - tau**4)
    assert prove_identity(sum(phi * tau ** (-(n - 1)) for n in range(1, 5)), closed).proved
    result = prove_identity(sum(phi * tau ** (-(n - 1)) for n in range(1, 4)), closed, domains={tau: (0.1, 0.9)})
    assert result.refuted
    tau_value, phi_value = result.counterexample["tau"], result.counterexample["phi"]
    assert result.counterexample["rhs"] - result.counterexample["lhs"] == pytest.approx(phi_value * tau_value**-3, rel=1e-9)


def test_inequality_proved_by_factoring_and_by_box_substitution():
    result = prove_inequality(2 * x * y, x**2 + y**2, {x: (-5, 5), y: (-5, 5)})
    assert result.status == PROVED and "(x - y)**2" in result.detail
    assert prove_inequality(x**3 - x, 0, {x: (0, 1)}).proved          # needs the upper bound of the box
    assert prove_inequality(p, p + 1, {p: (0.1, 10)}, strict=True).proved


def test_inequality_counterexample_with_point():
    result = prove_inequality(x**3 - x, 0, {x: (0, 2)})
    assert result.status == COUNTEREXAMPLE
    assert result.counterexample["x"] == 2 and result.counterexample["lhs"] == 6.0 and result.counterexample["rhs"] == 0.0
    result = prove_inequality(x * y, x + y, {x: (0, 5), y: (0, 5)})
    assert result.counterexample == {"x": 5, "y": 5, "lhs": 25.0, "rhs": 10.0}


def test_inequality_unproved_without_counterexample():
    result = prove_inequality(sp.sin(x) * sp.cos(x), sp.Rational(1, 2), {x: (0, 2 * math.pi)})
    assert result.status == UNPROVED
    assert result.extra["min_gap"] >= 0 and result.extra["min_gap"] < 1e-3


def test_inequality_unbounded_domain_counterexample():
    result = prove_inequality(x**2, 100, {x: (0, math.inf)})
    assert result.refuted and result.counterexample["x"] > 10


def test_inequality_requires_domains():
    with pytest.raises(ValueError, match="missing"):
        prove_inequality(x, y, {x: (0, 1)})
