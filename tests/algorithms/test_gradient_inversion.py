"""Gradient inference from the RECAL / DP-RECAL transcript (v1 App. A and the x-leak) and the
gradient-leakage attacks (DLG [3], Inverting Gradients [19], GradInversion [20]) on the paper's models."""

import networkx as nx
import numpy as np
import pytest
from scipy.optimize import check_grad

from dpverify.algorithms.core.errors import InvalidDataError, InvalidParameterError
from dpverify.algorithms.core.network import Network
from dpverify.algorithms.core.problems import LocalData
from dpverify.algorithms.dp_recal.algorithm import (
    RecalParams,
    RelayNoise,
    paper_beta,
    run_recal,
)
from dpverify.algorithms.dp_recal.composite import CompositeProblem
from dpverify.algorithms.dp_recal.gradient_attacks import (
    range_prior,
    run_attack,
    total_variation,
)
from dpverify.algorithms.dp_recal.gradient_inversion import (
    first_activations,
    infer_gradients,
    infer_gradients_from_x,
    mse,
    psnr,
    record_gradients,
    record_gradients_vjp,
)

N, M, Q = 8, 6, 16


def _run(sigma1, lasso=0.5, clip=1.0, seed=0, horizon=150, replicas=4):
    rng = np.random.default_rng(seed)
    data = LocalData(rng.uniform(0, 1, (N, M, Q)), rng.choice([-1.0, 1.0], (N, M)))
    problem = CompositeProblem("linear", lasso=lasso)
    alpha = 1.0 / (problem.lipschitz_constants(data) + 1.0)
    beta = paper_beta(N)
    params = RecalParams(alpha, beta, RelayNoise(sigma1, 1.05), clip=clip)
    x1 = 0.1 * rng.standard_normal(Q)
    run = run_recal(problem, data, Network.from_networkx(nx.cycle_graph(N)), params, replicas=replicas,
                    rng=np.random.default_rng(seed + 1), horizon=horizon, x1=x1)
    return run, problem, data, alpha, beta, x1


def _true_gradients(problem, data, inferred, run, clip):
    return np.stack([problem.active_gradients(inferred.model_points[k], run.holders[k], data, clip)
                     for k in range(run.holders.shape[0])])


def test_app_a_inference_is_exact_on_recal():
    run, problem, data, alpha, beta, _ = _run(sigma1=0.0)
    inferred = infer_gradients(run, alpha, beta)
    truth = _true_gradients(problem, data, inferred, run, 1.0)
    assert np.abs(inferred.gradients - truth).max() < 1e-10
    assert np.abs(truth).max() > 0.1  # the gradients are not trivially zero


def test_app_a_inference_error_on_dp_recal_matches_the_noise():
    """At an agent's first activation (lambda = 0, y = y^1 known) the App. A error is
    -(eps^k - eps^{k-1}) / (alpha beta): std sqrt(sigma_k^2 + sigma_{k-1}^2) / (alpha_i beta) per coordinate."""
    sigma1 = 0.01
    run, problem, data, alpha, beta, x1 = _run(sigma1=sigma1, replicas=40, horizon=60)
    inferred = infer_gradients(run, alpha, beta)
    first = first_activations(run.holders, N)
    standardized = []
    for r in range(run.holders.shape[1]):
        for agent in range(N):
            k = first[r, agent]
            if k < 1:   # k = 0 has no previous release (u~^1 = 0 is noise-free)
                continue
            truth = problem.active_gradients(x1[None], np.array([agent]), data, 1.0)[0]
            scale = np.hypot(run.noise_std[k, r], run.noise_std[k - 1, r]) / (alpha[agent] * beta)
            standardized.append((inferred.gradients[k, r] - truth) / scale)
    z = np.concatenate(standardized)
    assert z.size > 2000
    assert abs(z.std() - 1.0) < 0.08 and abs(z.mean()) < 0.08


def test_x_leak_recovers_noise_free_gradients_under_dp_recal():
    """x^{k+1} is sent without noise: inverting (7b) gives y_i^k, and two activations the gradient."""
    run, problem, data, alpha, beta, x1 = _run(sigma1=20.0)   # sigma of the eps = 12, PLF 300 calibration
    leaked = infer_gradients_from_x(run, problem, alpha, beta)
    first = first_activations(run.holders, N)
    truth = problem.local_gradients(np.broadcast_to(x1, (run.holders.shape[1], N, Q)), data, 1.0)
    gradients = leaked.gradients[first, np.arange(run.holders.shape[1])[:, None]]       # (R, n, q)
    revealed = np.isfinite(gradients)
    assert revealed.mean() > 0.5
    assert np.abs(gradients - truth)[revealed].max() < 1e-9
    # the App. A inference on the same transcript is noise-dominated
    app_a = infer_gradients(run, alpha, beta).gradients[first, np.arange(run.holders.shape[1])[:, None]]
    assert np.median(np.abs(app_a - truth)) > 100 * np.abs(truth).max()


def test_x_leak_without_l1_reveals_every_coordinate_and_nothing_under_small_noise():
    run, problem, data, alpha, beta, _ = _run(sigma1=0.5, lasso=0.0)
    leaked = infer_gradients_from_x(run, problem, alpha, beta)
    truth = _true_gradients(problem, data, leaked, run, 1.0)
    done = np.isfinite(leaked.gradients).all(axis=-1)
    assert done.mean() > 0.8
    assert np.abs(leaked.gradients - truth)[done].max() < 1e-9
    run, problem, data, alpha, beta, _ = _run(sigma1=0.0)   # RECAL: |argument| < n lasso, all thresholded
    assert not infer_gradients_from_x(run, problem, alpha, beta).revealed.any()


def test_inference_rejects_bad_input():
    run, problem, data, alpha, beta, _ = _run(sigma1=0.0, horizon=5, replicas=1)
    with pytest.raises(InvalidParameterError, match="alpha"):
        infer_gradients(run, -alpha, beta)
    with pytest.raises(InvalidParameterError, match="beta"):
        infer_gradients(run, alpha, 0.0)
    with pytest.raises(InvalidParameterError, match="M2"):
        infer_gradients_from_x(run, CompositeProblem("linear", mapping="M2"), alpha, beta)


@pytest.mark.parametrize("loss", ["linear", "logistic"])
@pytest.mark.parametrize("clip", [None, 1.0])
def test_record_gradient_vjp_matches_finite_differences(loss, clip):
    rng = np.random.default_rng(3)
    B, b = rng.uniform(0, 1, (3, 20)), np.array([1.0, -1.0, 1.0])
    x, r = 0.3 * rng.standard_normal((3, 20)), rng.standard_normal((3, 20))
    error = check_grad(lambda z: float((record_gradients(z.reshape(3, 20), b, x, loss, clip) * r).sum()),
                       lambda z: record_gradients_vjp(z.reshape(3, 20), b, x, loss, clip, r).ravel(), B.ravel())
    assert error < 1e-5


def test_record_gradients_closed_form():
    B, b, x = np.array([[1.0, 2.0]]), np.array([1.0]), np.array([[0.5, 0.5]])
    assert np.allclose(record_gradients(B, b, x, "linear"), [[0.5, 1.0]])           # (1.5 - 1) B
    assert np.allclose(record_gradients(B, b, x, "logistic"), -B / (1 + np.exp(1.5)))
    assert np.isclose(np.linalg.norm(record_gradients(B, -b, x, "linear", clip=1.0)), 1.0)  # 2.5 sqrt5 > 1: clipped


def test_mse_and_psnr_closed_forms():
    a, b = np.zeros(4), np.full(4, 0.1)
    assert np.isclose(mse(a, b), 0.01)
    assert np.isclose(psnr(a, b), 20.0)          # 10 log10(1 / 0.01)
    assert psnr(b, b) == np.inf
    assert np.allclose(range_prior(np.array([[0.1, 0.5], [0.0, 0.0]])), [[0.2, 1.0], [0.0, 0.0]])


def test_total_variation_gradient():
    rng = np.random.default_rng(0)
    z = rng.uniform(0, 1, 36)
    error = check_grad(lambda v: float(total_variation(v[None], (6, 6))[0][0]),
                       lambda v: total_variation(v[None], (6, 6))[1][0], z)
    assert error < 1e-6
    assert total_variation(np.ones((1, 36)), (6, 6))[0][0] == 0.0


def _records(loss, seed=5, T=3, q=64):
    rng = np.random.default_rng(seed)
    B = np.where(rng.uniform(0, 1, (T, q)) > 0.6, rng.uniform(0.2, 1, (T, q)), 0.0)
    B[:, 0] = 1.0                                 # the images' peak (pixel / 255 attains 1)
    labels = np.array([1.0, -1.0, 1.0])[:T]
    x = 0.05 * rng.standard_normal((T, q))
    return B, labels, x, record_gradients(B, labels, x, loss)


@pytest.mark.parametrize("loss", ["linear", "logistic"])
def test_dlg_recovers_a_record_from_its_noiseless_gradient(loss):
    B, labels, x, g = _records(loss)
    result = run_attack("dlg", g, x, loss=loss, clip=None, rng=np.random.default_rng(0), iterations=300)
    assert np.all(psnr(result.reconstruction, B) > 40.0)
    assert np.array_equal(result.labels, labels)


@pytest.mark.parametrize("attack", ["inverting-gradients", "gradinversion"])
def test_image_prior_attacks_recover_a_record(attack):
    B, labels, x, g = _records("linear", q=64)
    result = run_attack(attack, g, x, loss="linear", clip=None, rng=np.random.default_rng(0), iterations=600,
                        image_shape=(8, 8))
    assert np.median(psnr(result.reconstruction, B)) > 20.0


def test_dlg_on_a_noised_gradient_does_not_recover_the_record():
    B, labels, x, g = _records("linear")
    noisy = g + 50.0 * np.random.default_rng(1).standard_normal(g.shape)   # DP-RECAL scale noise
    result = run_attack("dlg", noisy, x, loss="linear", clip=1.0, rng=np.random.default_rng(0), iterations=100)
    assert np.all(psnr(result.reconstruction, B) < 10.0)


def test_attack_rejects_bad_input():
    B, labels, x, g = _records("linear")
    with pytest.raises(InvalidParameterError, match="attack"):
        run_attack("dlgx", g, x, loss="linear", clip=None, rng=np.random.default_rng(0), iterations=5)
    with pytest.raises(InvalidDataError, match="zero"):
        run_attack("dlg", np.zeros_like(g), x, loss="linear", clip=None, rng=np.random.default_rng(0), iterations=5)
    with pytest.raises(InvalidParameterError, match="image_shape"):
        run_attack("gradinversion", g, x, loss="linear", clip=None, rng=np.random.default_rng(0), iterations=5,
                   image_shape=(5, 5))
