"""Symbolic checks of DPDO-NC (sympy): Bregman maps and Assumption 4, the noise calibration of
Lemma 1 / Theorem 1, (14), Lemma 4's telescoping (24), Lemma 5's three-point identity, Remark 2,
and the substitution of Theorem 2's penultimate display into U_1 + U_2 sqrt(T) (33).
Line numbers are those of seeds/002_982ba883ea3d0f38.txt."""

from __future__ import annotations

import numpy as np
import sympy as sp

from dpverify.theory.claims import Measurement, holds
from dpverify.theory.execution import CheckContext
from dpverify.theory.instruments.symbolic import prove_identity

x1, x2, y1, y2 = sp.symbols("x1 x2 y1 y2", real=True)
X, Y = sp.Matrix([x1, x2]), sp.Matrix([y1, y2])
N, d, T, t = sp.symbols("N d T t", positive=True, integer=True)
theta, omega, eps, M, eta, C, lam, beta, EX1 = sp.symbols("theta omega epsilon M eta C lambda beta EX1", positive=True)
DEFAULT_Q = sp.Matrix([[2, sp.Rational(1, 2)], [sp.Rational(1, 2), 1]])  # the TOML's default Q (spec P4)


def bregman(phi: sp.Expr) -> sp.Expr:
    """D_phi(x, y) = phi(x) - phi(y) - <grad phi(y), x - y> (eq. (5), L131)."""
    at_y = phi.subs({x1: y1, x2: y2}, simultaneous=True)
    grad_y = sp.Matrix([sp.diff(at_y, y1), sp.diff(at_y, y2)])
    return sp.expand(phi - at_y - (grad_y.T * (X - Y))[0])


MAPS = {
    "½||x||²": (sp.Rational(1, 2) * (x1**2 + x2**2), sp.eye(2) * 1),
    "||x||²": (x1**2 + x2**2, sp.eye(2) * 2),
    "xᵀQx": ((X.T * DEFAULT_Q * X)[0], 2 * DEFAULT_Q),
}


def check_assumption_4(context: CheckContext) -> Measurement:
    """Assumption 4 (L139-L141) for the maps of Figs. 1-3: Hessian of D_phi(x, .) in y is constant
    = Hessian of phi, PSD (convexity (i)) with largest eigenvalue M (smoothness (ii)); and omega of
    Definition 2 = smallest eigenvalue of the Hessian of phi."""
    values, ok = {}, True
    for name, (phi, hessian_expected) in MAPS.items():
        divergence = bregman(phi)
        hessian_y = sp.hessian(divergence, (y1, y2))
        same = prove_identity(hessian_y, hessian_expected).proved
        eigen = [float(e) for e in hessian_y.eigenvals()]
        zero_at_diagonal = sp.simplify(divergence.subs({x1: y1, x2: y2})) == 0
        ok &= same and min(eigen) > 0 and zero_at_diagonal
        values[name] = {"hessian_in_y": str(hessian_y.tolist()), "M": max(eigen), "omega": min(eigen),
                        "convex_in_y": min(eigen) >= 0, "D(x,x)=0": bool(zero_at_diagonal)}
    return holds(ok, "D_phi(x, .) has the constant Hessian of phi for ½||x||², ||x||², xᵀQx: convex, M-smooth on R^2 "
                 f"(M = {', '.join(format(v['M'], '.4g') for v in values.values())}); omega = smallest eigenvalue", **values)


def check_entropic_assumption_4(context: CheckContext) -> Measurement:
    """Remark 2's entropic map phi = sum x log x: Assumption 4(ii) asks D_phi(x, .) M-smooth. The paper does not
    say on which domain, so both readings are decided: on R^d (as printed for Assumption 3) and on Remark 2's
    Omega, the simplex. Hessian in y = diag(x_k / y_k^2): undefined for y_k <= 0, and unbounded as y_k -> 0+
    along the simplex (y = (t, 1 - t), x = (1/2, 1/2), t -> 0+), so no finite M on either domain."""
    phi = x1 * sp.log(x1) + x2 * sp.log(x2)
    divergence = sp.simplify(bregman(phi))
    hessian_y = sp.simplify(sp.hessian(divergence, (y1, y2)))
    expected = sp.diag(x1 / y1**2, x2 / y2**2)
    t = sp.symbols("t", positive=True)
    on_simplex = hessian_y[0, 0].subs({x1: sp.Rational(1, 2), x2: sp.Rational(1, 2), y1: t, y2: 1 - t})
    unbounded_on_simplex = sp.limit(on_simplex, t, 0, "+") == sp.oo
    undefined_off_orthant = divergence.subs({x1: sp.Rational(1, 2), x2: sp.Rational(1, 2), y1: -1, y2: 2}).is_real is not True
    readings = {"R^d": not undefined_off_orthant and not unbounded_on_simplex, "simplex": not unbounded_on_simplex}
    satisfied = prove_identity(hessian_y, expected).proved and any(readings.values())
    return holds(satisfied, f"Hessian of D_phi(x, .) = {hessian_y.tolist()}. On R^d: D_phi undefined at y = (-1, 2) "
                 f"({undefined_off_orthant}); on the simplex: Hessian -> oo as y -> (0, 1) ({unbounded_on_simplex}). "
                 "Assumption 4(ii) " + ("fails under both readings" if not any(readings.values()) else
                                        f"holds on {', '.join(k for k, v in readings.items() if v)}") +
                 " of its domain for Remark 2's map (convexity (i) holds)",
                 hessian=str(hessian_y.tolist()), readings=readings, unbounded=bool(unbounded_on_simplex))


def check_remark_2(context: CheckContext) -> Measurement:
    """Remark 2 (L169): softmax(y_t - alpha g - 1) with y_t = log x_t + 1 + c equals
    x_t * exp(-alpha g) / normalizer, which lies in the simplex (positive, sums to 1)."""
    a, g1, g2, c = sp.symbols("alpha g1 g2 c", real=True)
    p1, p2 = sp.symbols("p1 p2", positive=True)
    y = [sp.log(p1) + 1 + c, sp.log(p2) + 1 + c]
    y_next = [y[0] - a * g1, y[1] - a * g2]
    normal = sp.exp(y_next[0] - 1) + sp.exp(y_next[1] - 1)
    printed = sp.exp(y_next[0] - 1) / normal
    multiplicative = p1 * sp.exp(-a * g1) / (p1 * sp.exp(-a * g1) + p2 * sp.exp(-a * g2))
    result = prove_identity(printed, multiplicative)
    total = sp.simplify(printed + sp.exp(y_next[1] - 1) / normal)
    return holds(result.proved and total == 1, f"printed update = x*exp(-alpha g)/normalizer ({result.status}); "
                 f"coordinates positive and sum to {total}: the iterates remain in the simplex",
                 identity=result.status)


def check_lemma_5(context: CheckContext) -> Measurement:
    """Lemma 5 (L385-L389) rests on the three-point identity D(z,y) - D(z,x*) - D(x*,y) =
    <grad phi(x*) - grad phi(y), z - x*> (with first-order optimality of x* it gives the stated
    inequality); checked for each quadratic map and for the entropic map."""
    z1, z2, s1, s2 = sp.symbols("z1 z2 s1 s2", real=True)
    statuses = {}
    maps = {**{k: v[0] for k, v in MAPS.items()}, "entropy": x1 * sp.log(x1) + x2 * sp.log(x2)}
    for name, phi in maps.items():
        D = sp.Lambda((x1, x2, y1, y2), bregman(phi))
        grad = sp.Lambda((x1, x2), sp.Matrix([sp.diff(phi, x1), sp.diff(phi, x2)]))
        lhs = D(z1, z2, y1, y2) - D(z1, z2, s1, s2) - D(s1, s2, y1, y2)
        rhs = ((grad(s1, s2) - grad(y1, y2)).T * sp.Matrix([z1 - s1, z2 - s2]))[0]
        domains = {v: (0.05, 3.0) for v in (z1, z2, s1, s2, y1, y2)} if name == "entropy" else None
        statuses[name] = prove_identity(lhs, rhs, domains=domains).status
    return holds(all(s == "proved" for s in statuses.values()), f"three-point identity: {statuses}", **statuses)


def check_calibration(context: CheckContext) -> Measurement:
    """Algorithm 1's sigma_t = 2 sqrt(d) alpha_t theta/(omega eps) equals bound (8)/eps, so bound/sigma_t
    = eps at every t (Theorem 1's rule sigma_t = Delta(t)/eps with Delta(t) replaced by (8)); (8) decreases in t."""
    alpha = 1 / (N * sp.sqrt(t))
    bound = 2 * sp.sqrt(d) * alpha * theta / omega
    sigma = 2 * sp.sqrt(d) * alpha * theta / (omega * eps)
    ratio = sp.simplify(bound / sigma)
    decreasing = sp.simplify(sp.diff(bound, t)).is_negative
    return holds(ratio == eps and bool(decreasing), f"(8)/sigma_t = {ratio}; d(8)/dt < 0: {decreasing} (Remark 3)",
                 ratio=str(ratio))


def check_sensitivity_index(context: CheckContext) -> Measurement:
    """Definition 5 (L204) measures ||X_t - X_t'||_1, the state that round t's noise perturbs; x_t is
    produced by (7) at round t-1 with alpha_{t-1}. For neighbouring linear costs <c, x> vs -<c, x>,
    ||c|| = theta, c parallel to (1,...,1), unclipped steps: ||X_t - X_t'||_1 = 2 sqrt(d) alpha_{t-1}
    theta / omega, so the ratio to bound (8) at the same t is alpha_{t-1}/alpha_t = sqrt(t/(t-1))."""
    alpha = sp.Lambda(t, 1 / (N * sp.sqrt(t)))
    realized = 2 * sp.sqrt(d) * alpha(t - 1) * theta / omega
    ratio = sp.simplify(realized / (2 * sp.sqrt(d) * alpha(t) * theta / omega))
    at_two = float(ratio.subs(t, 2))
    horizon_total = float(sum(np.sqrt(k / (k - 1)) for k in range(2, 501)))
    return holds(at_two <= 1.0, f"||X_t - X_t'||_1 / (8) = {ratio} > 1 for every t >= 2 ({at_two:.4f} at t = 2): the "
                 f"per-round eps is eps*sqrt(t/(t-1)); over T = 500 the sum is {horizon_total:.2f} eps (x_1 public) vs "
                 "T eps from (8)", ratio=str(ratio), at_t2=at_two, horizon_sum_over_eps=horizon_total)


def check_eq_14(context: CheckContext) -> Measurement:
    """(14), L272: each coordinate factor exp(-|q - x|/s)/exp(-|q - x'|/s) <= exp(|x - x'|/s)
    (triangle inequality), with equality when q is beyond both means; the product over coordinates
    gives exp(||X - X'||_1 / s)."""
    q, a, b = sp.symbols("q a b", real=True)
    gap = sp.Abs(a - b) - (sp.Abs(q - b) - sp.Abs(q - a))
    rng = np.random.default_rng(0)
    samples = rng.normal(size=(20000, 3)) * 3
    f = sp.lambdify((q, a, b), gap, "numpy")
    worst = float(np.min(f(*samples.T)))
    equality = sp.simplify(gap.subs({q: 10, a: 2, b: 1}))  # q beyond both, on the side of x
    return holds(worst >= -1e-12 and equality == 0, f"|x - x'| - (|q - x'| - |q - x|) >= 0 on 20000 random points "
                 f"(min {worst:.2g}); equality at q beyond both means", min_gap=worst)


def check_lemma_4_telescoping(context: CheckContext) -> Measurement:
    """(24), L369: sum_{t=1}^T (D_t - D_{t+1})/alpha_t = D_1/alpha_1 - D_{T+1}/alpha_T + sum_{t=2}^{T-1}
    (1/alpha_t - 1/alpha_{t-1}) D_t as printed, and its last line Meta^2/(2alpha_1) + (Meta^2/2)
    sum_{t=2}^{T-1}(...) = M eta^2/(2 alpha_T). Both checked for T = 2..6 with symbolic D_t."""
    findings = {}
    for horizon in range(2, 7):
        D = sp.symbols(f"D1:{horizon + 2}", nonnegative=True)
        alpha = [1 / (N * sp.sqrt(k)) for k in range(1, horizon + 1)]
        lhs = sum((D[k] - D[k + 1]) / alpha[k] for k in range(horizon))
        printed = D[0] / alpha[0] - D[horizon] / alpha[-1] + sum((1 / alpha[k] - 1 / alpha[k - 1]) * D[k] for k in range(1, horizon - 1))
        corrected = printed + (1 / alpha[-1] - 1 / alpha[-2]) * D[horizon - 1]
        last = M * eta**2 / (2 * alpha[0]) + M * eta**2 / 2 * sum(1 / alpha[k] - 1 / alpha[k - 1] for k in range(1, horizon - 1))
        findings[f"T={horizon}"] = {"printed_identity": sp.simplify(lhs - printed) == 0,
                                    "with_t=T_term": sp.simplify(lhs - corrected) == 0,
                                    "printed_last_line_equals_M_eta2_over_2alpha_T": sp.simplify(last - M * eta**2 / (2 * alpha[-1])) == 0}
    printed_ok = all(f["printed_identity"] and f["printed_last_line_equals_M_eta2_over_2alpha_T"] for f in findings.values())
    corrected_ok = all(f["with_t=T_term"] for f in findings.values())
    return holds(printed_ok, "printed identity (sum to T-1) " + ("holds" if printed_ok else "FAILS: it drops the t = T term "
                 "(1/alpha_T - 1/alpha_{T-1}) D_T; with the sum to T it " + ("holds" if corrected_ok else "still fails") +
                 ", and the printed last line equals M eta^2/(2 alpha_{T-1}), not M eta^2/(2 alpha_T); the bound (22) itself "
                 "follows from the corrected sum (also the side bound prints ||x - x_1|| for ||x - x_1||^2, L377)"),
                 **{k: {kk: bool(vv) for kk, vv in v.items()} for k, v in findings.items()})


def penultimate_terms() -> dict[str, sp.Expr]:
    """The terms of Theorem 2's penultimate display (L470-L473) with alpha_t = 1/(N sqrt t),
    sigma_t = 2 sqrt(d) alpha_t theta/(omega eps) and the summation facts of L464-L466
    (sum lambda^(t-1) <= 1/(1-lambda); sum alpha_t <= 2 sqrt(T)/N; double sums <= 2 sqrt(T)/(N(1-lambda)))."""
    sum_alpha = 2 * sp.sqrt(T) / N
    double = 2 * sp.sqrt(T) / (N * (1 - lam))
    sigma_factor = 2 * sp.sqrt(d) * theta / (omega * eps)          # sigma_t = sigma_factor * alpha_t
    alpha_T = 1 / (N * sp.sqrt(T))
    return {
        "X1": 2 * N**sp.Rational(3, 2) * sp.sqrt(d) * C * (beta * eta + 2 * theta) * EX1 / (1 - lam),
        "sigma": 2 * sp.sqrt(2 * d) * N**sp.Rational(3, 2) * theta * sigma_factor * sum_alpha,
        "alpha": N**sp.Rational(3, 2) * theta**2 / omega * sum_alpha,
        "eta": N * M * eta**2 / (2 * alpha_T),
        "sigma^2/alpha": N * M * d * sigma_factor**2 * sum_alpha,          # sigma_t^2/alpha_t = sigma_factor^2 alpha_t
        "lambda-sigma": 2 * sp.sqrt(2) * N**2 * d * C * (beta * eta + 2 * theta) * sigma_factor * double,
        "lambda-alpha": 2 * sp.sqrt(d) * N**2 * theta * C * (beta * eta + 2 * theta) / omega * double,
    }


def printed_u_terms() -> dict[str, sp.Expr]:
    """U_1 and the six terms of U_2 (times sqrt T) as printed in (28)/(33), L425-L475."""
    k = C * theta * (beta * eta + 2 * theta)
    return {
        "X1": 2 * N**sp.Rational(3, 2) * sp.sqrt(d) * C * (beta * eta + 2 * theta) * EX1 / (1 - lam),
        "sigma": 8 * sp.sqrt(2 * N) * d * theta**2 / (omega * eps) * sp.sqrt(T),
        "alpha": 2 * sp.sqrt(N) * theta**2 / omega * sp.sqrt(T),
        "eta": M * eta**2 / 2 * sp.sqrt(T),
        "sigma^2/alpha": 8 * d**2 * M * theta**2 / (omega**2 * eps**2) * sp.sqrt(T),
        "lambda-sigma": 8 * sp.sqrt(2) * d**sp.Rational(3, 2) * N * k / (omega * eps * (1 - lam)) * sp.sqrt(T),
        "lambda-alpha": 4 * sp.sqrt(d) * N * k / (omega * (1 - lam)) * sp.sqrt(T),
    }


def check_theorem_2_constants(context: CheckContext) -> Measurement:
    """Theorem 2 (33): the penultimate display after substitution, term by term against U_1 + U_2 sqrt T."""
    derived, printed = penultimate_terms(), printed_u_terms()
    ratios = {name: sp.simplify(derived[name] / printed[name]) for name in derived}
    wrong = {name: str(r) for name, r in ratios.items() if r != 1}
    return holds(not wrong, "every term matches" if not wrong else
                 f"terms that do not follow from the penultimate display (derived/printed): {wrong}; NM eta^2/(2 alpha_T) "
                 "= N^2 M eta^2 sqrt(T)/2, printed as M eta^2 sqrt(T)/2", ratios={k: str(v) for k, v in ratios.items()})


def check_combined_display(context: CheckContext) -> Measurement:
    """Theorem 2 (L457-L473): the coefficients of the first combined display (two brackets with
    (beta eta + theta) and theta) add up to the penultimate display's (beta eta + 2 theta) terms; the
    lambda^t term of the second bracket is bounded by lambda^(t-1)."""
    s = sp.symbols("s", positive=True)  # a generic sum standing for each series
    first_sigma = 2 * C * N * sp.sqrt(d) * (beta * eta + theta) * sp.sqrt(2 * d) * N * s + 2 * C * theta * sp.sqrt(2) * N**2 * d * s
    first_alpha = 2 * C * N * sp.sqrt(d) * (beta * eta + theta) * N * theta / omega * s + 2 * C * theta * sp.sqrt(d) * N**2 * theta / omega * s
    first_x1 = 2 * C * N * sp.sqrt(d) * (beta * eta + theta) * sp.sqrt(N) * s + 2 * C * theta * N**sp.Rational(3, 2) * sp.sqrt(d) * s
    checks = {
        "lambda-sigma": prove_identity(first_sigma, 2 * sp.sqrt(2) * N**2 * d * C * (beta * eta + 2 * theta) * s).status,
        "lambda-alpha": prove_identity(first_alpha, 2 * sp.sqrt(d) * N**2 * theta * C * (beta * eta + 2 * theta) / omega * s).status,
        "X1": prove_identity(first_x1, 2 * N**sp.Rational(3, 2) * sp.sqrt(d) * C * (beta * eta + 2 * theta) * s).status,
    }
    return holds(all(v == "proved" for v in checks.values()), f"coefficients combine as printed: {checks}", **checks)


def check_summation_facts(context: CheckContext) -> Measurement:
    """L464-L466: sum_{t<=T} alpha_t <= 2 sqrt(T)/N and the double-sum bound, for T = 1..2000,
    lambda in {0.1, 0.5, 0.9, 0.999}; sum lambda^t <= 1/(1-lambda)."""
    horizons = np.arange(1, 2001)
    sum_alpha = np.cumsum(1 / np.sqrt(horizons))  # N alpha_t
    worst = float(np.max(sum_alpha / (2 * np.sqrt(horizons))))
    worst_double = 0.0
    for lam_value in (0.1, 0.5, 0.9, 0.999):
        inner = np.zeros_like(sum_alpha)  # sum_{k<=t} lambda^{t-k} alpha_k, recursively
        acc = 0.0
        for index, h in enumerate(horizons):
            acc = lam_value * acc + 1 / np.sqrt(h)
            inner[index] = acc
        worst_double = max(worst_double, float(np.max(np.cumsum(inner) * (1 - lam_value) / (2 * np.sqrt(horizons)))))
    return Measurement(f"max ratio to the bound: sum alpha {worst:.4f}, double sum {worst_double:.4f}",
                       {"excess": max(worst, worst_double) - 1, "sum_alpha_ratio": worst, "double_sum_ratio": worst_double})


def check_eps_coefficient(context: CheckContext) -> Measurement:
    """Remark 4 (L481): in the bound derived from the penultimate display, eps enters only the
    coefficients: every term is (constant in T) * sqrt(T) or free of T, for every eps, and the
    eps-dependent terms decrease in eps."""
    terms = penultimate_terms()
    orders = {name: sp.simplify(term / sp.sqrt(T)).has(T) for name, term in terms.items() if name != "X1"}
    gap = sp.Symbol("kappa", positive=True)  # 1 - lambda > 0 (Lemma 2: lambda in (0, 1))
    decreasing = all(sp.simplify(sp.diff(term.subs(lam, 1 - gap), eps)).is_nonpositive for term in terms.values())
    return holds(not any(orders.values()) and decreasing,
                 f"every T-dependent term is c * sqrt(T) (terms with T left after dividing by sqrt T: "
                 f"{[k for k, v in orders.items() if v] or 'none'}); d/d eps of every term <= 0: {decreasing}",
                 orders={k: bool(v) for k, v in orders.items()})
