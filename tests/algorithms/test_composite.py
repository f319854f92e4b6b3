"""The composite problems of DP-RECAL (seeds/001 Sec. VII): gradients, prox and constants against
finite differences, CVXPY and closed forms."""

import cvxpy as cp
import numpy as np
import pytest
from scipy.optimize import approx_fprime

from dpverify.algorithms.core.errors import InvalidDataError, InvalidParameterError
from dpverify.algorithms.core.problems import LocalData
from dpverify.algorithms.dp_recal.composite import (
    ActiveGradients,
    CompositeProblem,
    accuracy,
)


def _data(seed=0, n=3, m=7, q=4):
    rng = np.random.default_rng(seed)
    return LocalData(rng.uniform(0, 1, (n, m, q)), rng.choice([-1.0, 1.0], (n, m)))


@pytest.mark.parametrize("loss", ["linear", "logistic"])
@pytest.mark.parametrize("mapping", ["M1", "M2"])
def test_gradients_match_finite_differences(loss, mapping):
    data, problem = _data(), CompositeProblem(loss, mapping=mapping)
    X = np.random.default_rng(1).normal(size=(data.num_agents, data.dim))
    gradients = problem.local_gradients(X, data)
    for i in range(data.num_agents):
        def f_i(x, i=i):
            Z = X.copy()
            Z[i] = x
            return problem.local_losses(Z, data)[i]
        np.testing.assert_allclose(gradients[i], approx_fprime(X[i], f_i, 1e-7), atol=1e-5)


@pytest.mark.parametrize("loss", ["linear", "logistic"])
def test_active_gradients_select_the_active_agent(loss):
    data, problem = _data(2), CompositeProblem(loss)
    rng = np.random.default_rng(3)
    x, agents = rng.normal(size=(11, data.dim)), rng.integers(0, data.num_agents, 11)
    full = problem.local_gradients(np.repeat(x[:, None, :], data.num_agents, axis=1), data, clip=0.3)
    np.testing.assert_allclose(problem.active_gradients(x, agents, data, clip=0.3), full[np.arange(11), agents], rtol=1e-12)


def test_active_gradient_operator_by_hand():
    """One agent, B = [[1, 0, 2], [0, 0, 1]], b = [1, -1], y = [1, 5, -1]: B y - b = [-2, 0], grad =
    B^T [-2, 0] / 2 = [-1, 0, -2]; column 1 is zero, so G = [[1, 2], [2, 5]]/2, h = [1, 1]/2 on {0, 2}."""
    data = LocalData(np.array([[[1.0, 0.0, 2.0], [0.0, 0.0, 1.0]]]), np.array([[1.0, -1.0]]))
    y = np.array([[1.0, 5.0, -1.0]])
    gram = ActiveGradients(CompositeProblem("linear"), data)
    assert gram.method == "gram"
    np.testing.assert_array_equal(gram.supports[0], [0, 2])
    np.testing.assert_array_equal(gram.gram[0], [[0.5, 1.0], [1.0, 2.5]])
    np.testing.assert_array_equal(gram.shift[0], [0.5, 0.5])
    np.testing.assert_array_equal(gram(y, np.array([0])), [[-1.0, 0.0, -2.0]])
    samples = ActiveGradients(CompositeProblem("linear"), data, method="samples")
    np.testing.assert_array_equal(samples(y, np.array([0])), [[-1.0, 0.0, -2.0]])
    # clipped to c = 1: the first sample's gradient -2 B_1 has norm 2 sqrt(5) -> scaled by 1/(2 sqrt 5)
    clipped = ActiveGradients(CompositeProblem("linear"), data, clip=1.0)
    assert clipped.method == "samples"
    np.testing.assert_allclose(clipped(y, np.array([0])), [[-1.0, 0.0, -2.0]] / np.sqrt(5) / 2, rtol=1e-15)


@pytest.mark.parametrize("loss", ["linear", "logistic"])
@pytest.mark.parametrize("mapping", ["M1", "M2"])
@pytest.mark.parametrize("clip", [None, 0.3])
def test_active_gradient_operator_equals_active_gradients(loss, mapping, clip):
    rng = np.random.default_rng(11)
    features = rng.uniform(0, 1, (4, 9, 6))
    features[0, :, [1, 4]] = 0.0     # pixels that are always zero, different per agent
    features[2, :, 5] = 0.0
    data, problem = LocalData(features, rng.choice([-1.0, 1.0], (4, 9))), CompositeProblem(loss, mapping=mapping)
    x, agents = rng.normal(size=(13, 6)), rng.integers(0, 4, 13)
    exact = problem.active_gradients(x, agents, data, clip)
    methods = ["auto", "samples"] + (["gram"] if loss == "linear" and clip is None else [])
    for method in methods:
        operator = ActiveGradients(problem, data, clip, method=method)
        assert operator.method == ("gram" if method == "auto" and loss == "linear" and clip is None else
                                   method if method != "auto" else "samples")
        np.testing.assert_allclose(operator(x, agents), exact, rtol=1e-12, atol=1e-15)
    if mapping == "M1":  # off the support the gradient is exactly zero
        assert np.all(ActiveGradients(problem, data, clip)(x, agents)[agents == 0][:, [1, 4]] == 0)
    with pytest.raises(InvalidDataError, match="x must be"):
        ActiveGradients(problem, data, clip)(x[:, :5], agents)


def test_gram_form_is_refused_where_it_is_not_exact():
    data = _data()
    with pytest.raises(InvalidParameterError, match="Gram"):
        ActiveGradients(CompositeProblem("linear"), data, clip=1.0, method="gram")
    with pytest.raises(InvalidParameterError, match="Gram"):
        ActiveGradients(CompositeProblem("logistic"), data, method="gram")
    with pytest.raises(InvalidParameterError, match="method"):
        ActiveGradients(CompositeProblem("linear"), data, method="fast")
    # more columns than samples: the Gram form would cost more, "auto" keeps the samples
    assert ActiveGradients(CompositeProblem("linear"), _data(m=3, q=5)).method == "samples"


def test_clipping_bounds_every_gradient_and_leaves_small_ones():
    data, problem = _data(4), CompositeProblem("linear")
    X = 5 * np.random.default_rng(5).normal(size=(data.num_agents, data.dim))
    assert problem.per_sample_gradient_norms(X, data).max() > 1
    assert np.linalg.norm(problem.local_gradients(X, data, clip=1.0), axis=-1).max() <= 1 + 1e-12
    np.testing.assert_allclose(problem.local_gradients(X, data, clip=1e9), problem.local_gradients(X, data))


@pytest.mark.parametrize("scale", [0.3, 8.0])
def test_prox_matches_cvxpy(scale):
    problem = CompositeProblem("linear")
    v = np.random.default_rng(6).normal(scale=5, size=6)
    z = cp.Variable(6)
    cp.Problem(cp.Minimize(scale * (problem.ridge * cp.sum_squares(z) + problem.lasso * cp.norm1(z))
                           + 0.5 * cp.sum_squares(z - v))).solve()
    np.testing.assert_allclose(problem.prox_scaled_r(v, scale), z.value, atol=1e-6)
    # the paper's objective with n = 8: prox_{nr}(v) = soft(v, n/2)/(1 + n) (spec §5.1)
    w = problem.prox_scaled_r(v, 8.0)
    np.testing.assert_allclose(w, np.sign(v) * np.maximum(np.abs(v) - 4, 0) / 9)


@pytest.mark.parametrize("loss", ["linear", "logistic"])
def test_lipschitz_constants_are_tight_upper_bounds(loss):
    data, problem = _data(7), CompositeProblem(loss)
    L = problem.lipschitz_constants(data)
    hessian_bound = np.linalg.eigvalsh(np.einsum("nmq,nmp->nqp", data.features, data.features))[:, -1] / data.num_samples
    np.testing.assert_allclose(L, hessian_bound if loss == "linear" else hessian_bound / 4)
    rng = np.random.default_rng(8)
    a, b = rng.normal(size=(2, 50, data.num_agents, data.dim))
    ratio = (np.linalg.norm(problem.local_gradients(a, data) - problem.local_gradients(b, data), axis=-1)
             / np.linalg.norm(a - b, axis=-1))
    assert np.all(ratio <= L + 1e-12)


def test_mappings_describe_the_same_objective_and_minimizer():
    data = _data(9)
    x = np.random.default_rng(10).normal(size=(5, data.dim))
    m1, m2 = CompositeProblem("logistic", mapping="M1"), CompositeProblem("logistic", mapping="M2")
    np.testing.assert_allclose(m1.objective(x, data), m2.objective(x, data))
    printed = (np.logaddexp(0, -data.targets[None] * np.einsum("nmq,rq->rnm", data.features, x)).mean(axis=-1).mean(axis=-1)
               + 0.5 * (x**2).sum(-1) + 0.5 * np.abs(x).sum(-1))  # v1:L948 as printed, times n
    np.testing.assert_allclose(m1.objective(x, data), data.num_agents * printed)


def test_accuracy_counts_signs():
    data = LocalData(np.array([[[1.0, 0.0], [0.0, 1.0]]]), np.array([[1.0, -1.0]]))
    assert accuracy(np.array([1.0, 1.0]), data) == 0.5
    assert accuracy(np.array([1.0, -1.0]), data) == 1.0


def test_accuracy_of_many_points_counts_each_point_over_all_samples():
    """Blocked scoring (composite.ACCURACY_BLOCK) against a count per point and agent, over more points than a block."""
    rng = np.random.default_rng(3)
    data = LocalData(rng.standard_normal((3, 40, 5)), np.sign(rng.standard_normal((3, 40))))
    x = rng.standard_normal((30, 5, 5))
    x[0, 0] = 0.0                                           # margins 0 count as +1
    expected = np.array([[np.mean([np.sign(np.where(B @ point >= 0, 1.0, -1.0)) == b
                                   for B, b in zip(data.features, data.targets)]) for point in row] for row in x])
    np.testing.assert_array_equal(accuracy(x, data), expected)


def test_bad_input_is_named():
    with pytest.raises(InvalidParameterError, match="loss"):
        CompositeProblem("hinge")
    with pytest.raises(InvalidParameterError, match="mapping"):
        CompositeProblem(mapping="M3")
    with pytest.raises(InvalidDataError, match="shape"):
        CompositeProblem().local_gradients(np.zeros((2, 2)), _data())


@pytest.mark.parametrize("loss", ["linear", "logistic"])
@pytest.mark.parametrize("clip", [None, 0.3])
def test_clipped_sample_losses_have_the_clipped_coefficients_as_derivative(loss, clip):
    """d/d(margin) of `clipped_sample_losses` is the (clipped) coefficient the gradients use, by central differences
    (to 1e-7), on margins where clipping binds on some samples; where it does not bind the value is the loss itself."""
    problem, rng = CompositeProblem(loss), np.random.default_rng(3)
    margins, targets = rng.normal(0, 3, 200), rng.choice([-1.0, 1.0], 200)
    norms = rng.uniform(0.2, 2.0, 200)
    h = 1e-6
    slope = (problem.clipped_sample_losses(margins + h, targets, norms, clip)
             - problem.clipped_sample_losses(margins - h, targets, norms, clip)) / (2 * h)
    coefficients = problem.sample_coefficients(margins, targets)
    clipped = problem._clipped(coefficients, norms, clip)
    np.testing.assert_allclose(slope, clipped, atol=1e-7)
    unclipped = 0.5 * (margins - targets) ** 2 if loss == "linear" else np.logaddexp(0, -targets * margins)
    free = clipped == coefficients
    np.testing.assert_allclose(problem.clipped_sample_losses(margins, targets, norms, clip)[free], unclipped[free],
                               rtol=1e-14)
    assert (clip is None) == np.all(free)


def test_margins_coefficients_and_data_gradients_compose_to_the_gradient():
    """The three halves of a per-sample gradient give `ActiveGradients` itself (same products: bit for bit), with
    clipping and a restricted support (a zero column)."""
    rng = np.random.default_rng(4)
    features = rng.uniform(0, 1, (3, 9, 5))
    features[:, :, 2] = 0.0
    data, problem = LocalData(features, rng.choice([-1.0, 1.0], (3, 9))), CompositeProblem("logistic")
    engine = ActiveGradients(problem, data, clip=0.2, method="samples")
    x, agents = rng.normal(size=(6, 5)), np.array([2, 0, 2, 1, 1, 2])
    coefficients, losses = engine.coefficients_and_losses(engine.margins(x, agents), agents)
    np.testing.assert_array_equal(engine.data_gradients(coefficients, agents), engine(x, agents))
    assert np.all(engine.data_gradients(coefficients, agents)[:, 2] == 0)
    expected = [problem.clipped_sample_losses(features[a] @ x[r], data.targets[a], data.feature_norms[a], 0.2).mean()
                for r, a in enumerate(agents)]
    np.testing.assert_allclose(losses, expected, rtol=1e-14)
    with pytest.raises(InvalidParameterError, match="per-sample form"):
        ActiveGradients(CompositeProblem("linear"), data).margins(x, agents)


def test_sparse_blocks_give_the_dense_gradients(monkeypatch):
    """A block at most SPARSE_DENSITY dense is read as CSR: the same gradients, margins and data gradients as the
    dense block to 1e-13 (only the order of the sums differs), with clipping; a denser block stays dense."""
    from dpverify.algorithms.dp_recal import composite

    rng = np.random.default_rng(6)
    features = rng.uniform(0, 1, (3, 60, 8)) * (rng.random((3, 60, 8)) < 0.15)
    data, problem = LocalData(features, rng.choice([-1.0, 1.0], (3, 60))), CompositeProblem("linear")
    dense = ActiveGradients(problem, data, clip=0.5, method="samples")
    monkeypatch.setattr(composite, "SPARSE_MIN_ENTRIES", 0)
    sparse = ActiveGradients(problem, data, clip=0.5, method="samples")
    assert all(pair is None for pair in dense.sparse) and all(pair is not None for pair in sparse.sparse)
    x, agents = rng.normal(size=(5, 8)), np.array([0, 2, 2, 1, 0])
    np.testing.assert_allclose(sparse(x, agents), dense(x, agents), rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(sparse.margins(x, agents), dense.margins(x, agents), rtol=1e-13, atol=1e-15)
    coefficients = rng.normal(size=(5, 60))
    np.testing.assert_allclose(sparse.data_gradients(coefficients, agents), dense.data_gradients(coefficients, agents),
                               rtol=1e-13, atol=1e-15)
    busy = LocalData(rng.uniform(0.1, 1, (3, 60, 8)), data.targets)
    assert all(pair is None for pair in ActiveGradients(problem, busy, clip=0.5, method="samples").sparse)


@pytest.mark.parametrize("count", [1, 2, 3, 6, 7, 12])
def test_few_rows_product_is_the_matrix_product_with_each_rows_own_bits(count):
    """2..FEW_ROWS rows are multiplied one at a time: the product agrees with numpy's to 1e-14, and each row has the
    bits of that row's product alone (so a replica's gradient does not depend on how many replicas share its agent);
    a single row and more than FEW_ROWS rows go through one product."""
    from dpverify.algorithms.dp_recal.composite import FEW_ROWS, _few_rows_product

    rng = np.random.default_rng(count)
    rows, block = rng.normal(size=(count, 40)), rng.normal(size=(40, 30))
    product = _few_rows_product(rows, block)
    np.testing.assert_allclose(product, rows @ block, rtol=1e-14, atol=1e-13)
    if count <= FEW_ROWS:
        alone = np.concatenate([rows[r:r + 1] @ block for r in range(count)])
        assert np.array_equal(product, alone)
    else:
        assert np.array_equal(product, rows @ block)


@pytest.mark.parametrize("count", [1, 2, 3, 4, 7])
def test_sparse_product_has_the_bits_of_scipys_product(count):
    """Up to FEW_SPARSE_ROWS rows are multiplied by a CSR matrix one at a time, the others at once: either way the bits
    of scipy's product of all rows (each entry adds the same products in the same order)."""
    import scipy.sparse as sp

    from dpverify.algorithms.dp_recal.composite import _sparse_product

    rng = np.random.default_rng(count)
    matrix = sp.csr_array(rng.uniform(0, 1, (300, 50)) * (rng.random((300, 50)) < 0.2))
    rows = rng.normal(size=(count, 50))
    assert np.array_equal(_sparse_product(matrix, rows), (matrix @ rows.T).T)
    np.testing.assert_allclose(_sparse_product(matrix, rows), rows @ matrix.toarray().T, rtol=1e-13, atol=1e-13)
