"""The private baselines of the DP-RECAL comparison (algorithms/dp_recal/baselines/dp_*.py): convergence to the
certified x*, PG-EXTRA and NIDS against a line-by-line transcription of spec §5.6, the noise schedule
and its calibration, sensitivities, PLF and message counts, input errors."""

import networkx as nx
import numpy as np
import pytest

from dpverify.algorithms.core.errors import InvalidParameterError
from dpverify.algorithms.core.network import Network
from dpverify.algorithms.core.problems import LocalData
from dpverify.algorithms.dp_recal.algorithm import sigma1_for_budget
from dpverify.algorithms.dp_recal.baselines import (
    dp_admm_huang,
    dp_admm_zhang,
    dp_common,
    dp_extra,
    dp_mradmm,
    dp_nids,
)
from dpverify.algorithms.dp_recal.baselines.comparison import (
    COMPARED,
    DEFAULT_STEPSIZES,
    DISPLAY_NAMES,
)
from dpverify.algorithms.dp_recal.composite import CompositeProblem
from dpverify.theory.dp_recal.composite_ground_truth import solve_composite

N, M, Q = 6, 12, 3
EDGES = N  # ring
SMOOTH_R_ONLY = {"dp-mradmm-17"}  # run with r = 0 / no l1 part (v1:L568)


def _setup(seed=1, loss="linear", lasso=0.02):
    rng = np.random.default_rng(seed)
    data = LocalData(rng.uniform(0, 1, (N, M, Q)), rng.choice([-1.0, 1.0], (N, M), p=[0.2, 0.8]))
    return data, CompositeProblem(loss, lasso=lasso), Network.from_networkx(nx.cycle_graph(N))


def _rho_star(epsilon, delta):
    """Prop. 3 solved for rho, written out independently of zcdp_for_epsilon."""
    return (np.sqrt(np.log(1 / delta) + epsilon) - np.sqrt(np.log(1 / delta))) ** 2


# ---------------------------------------------------------------- convergence (non-private)
@pytest.mark.parametrize("loss", ["linear", "logistic"])
@pytest.mark.parametrize("key", sorted(COMPARED))
def test_non_private_run_converges_to_the_certified_minimizer(key, loss):
    data, problem, network = _setup(loss=loss, lasso=0.0 if key in SMOOTH_R_ONLY else 0.02)
    truth = solve_composite(problem, data)
    assert truth.certified(1e-10) and np.linalg.norm(truth.x) > 0.05
    x1 = 0.1 * np.random.default_rng(2).standard_normal(Q)
    plf = 150 if key == "dp-rwadmm-30" else 500
    run = COMPARED[key](problem, data, network, epsilon=None, delta=1e-3, plf=plf, decay=1.0, clip=None,
                        replicas=2, rng=np.random.default_rng(3), x1=x1)
    assert run.sigma1 == 0.0 and run.algorithm == DISPLAY_NAMES[key]
    np.testing.assert_allclose(run.x_history[0], np.tile(x1, (2, 1)))
    error = np.linalg.norm(run.x_history[-1] - truth.x, axis=-1) / np.linalg.norm(x1 - truth.x)
    assert np.all(error < 1e-9), error


# ---------------------------------------------------------------- transcriptions of spec §5.6
def _gradients(problem, data, X):
    """grad f_i(x_i) agent by agent from the printed losses (Sec. VII), no clipping."""
    out = np.empty_like(X)
    for i in range(data.num_agents):
        B, b = data.features[i], data.targets[i]
        z = B @ X[i]
        coef = z - b if problem.loss == "linear" else -b / (1 + np.exp(b * z))
        out[i] = B.T @ coef / data.num_samples
    return out


def _prox(problem, V, alpha):
    """prox_{alpha r}, r = ridge ||x||^2 + lasso ||x||_1, per agent (spec §2.6)."""
    return np.sign(V) * np.maximum(np.abs(V) - alpha * problem.lasso, 0) / (1 + 2 * alpha * problem.ridge)


def _metropolis_ring(n):
    W = np.zeros((n, n))
    for i in range(n):
        W[i, (i + 1) % n] = W[i, (i - 1) % n] = W[i, i] = 1 / 3
    return W


def _sigma1(epsilon, delta, T, R, Delta):
    rho1 = _rho_star(epsilon, delta) * (R - 1) / (R**T - 1)
    return np.sqrt(Delta**2 / (2 * rho1))


def _pg_extra(problem, data, alpha, K, x1, sigma, R, rng):
    W = _metropolis_ring(N)
    Wt = (np.eye(N) + W) / 2
    noise = lambda t: rng.standard_normal((1, N, Q))[0] * sigma * R ** (-(t - 1) / 2)  # noqa: E731
    X0 = np.tile(x1, (N, 1))
    Xh = W @ X0 - alpha * _gradients(problem, data, X0)                                        # X^{1/2}
    X1 = _prox(problem, Xh, alpha) + noise(1)                                                  # X^1
    out = [X0, X1]
    for t in range(2, K + 1):
        Xh = W @ X1 + Xh - Wt @ X0 - alpha * (_gradients(problem, data, X1) - _gradients(problem, data, X0))
        X0, X1 = X1, _prox(problem, Xh, alpha) + noise(t)
        out.append(X1)
    return np.array([X.mean(axis=0) for X in out])


def _nids(problem, data, alpha, K, x1, sigma, R, rng):
    Wt = (np.eye(N) + _metropolis_ring(N)) / 2
    X0 = np.tile(x1, (N, 1))
    Z = X0 - alpha * _gradients(problem, data, X0)                                             # Z^1
    X1 = _prox(problem, Z, alpha)                                                              # X^1
    out = [X0]
    for t in range(1, K + 1):
        V = 2 * X1 - X0 - alpha * _gradients(problem, data, X1) + alpha * _gradients(problem, data, X0)
        V = V + rng.standard_normal((1, N, Q))[0] * sigma * R ** (-(t - 1) / 2)
        Z = Z - X1 + Wt @ V
        X0, X1 = X1, _prox(problem, Z, alpha)
        out.append(X1)
    return np.array([X.mean(axis=0) for X in out])


@pytest.mark.parametrize("loss", ["linear", "logistic"])
@pytest.mark.parametrize("epsilon", [None, 5.0])
@pytest.mark.parametrize("module, transcription", [(dp_extra, _pg_extra), (dp_nids, _nids)])
def test_pg_extra_and_nids_equal_the_transcription_of_spec_5_6(module, transcription, epsilon, loss):
    data, problem, network = _setup(loss=loss)
    alpha, K, R, c, x1 = 0.3, 40, 1.05, 0.5, np.array([0.3, -0.2, 0.1])
    run = module.run(problem, data, network, epsilon=epsilon, delta=1e-3, plf=K, decay=R, clip=c, replicas=1,
                     rng=np.random.default_rng(5), x1=x1, stepsize=alpha)
    sigma = 0.0 if epsilon is None else _sigma1(epsilon, 1e-3, K, R, 2 * alpha * c)   # Delta = 2 alpha c
    assert run.sigma1 == pytest.approx(sigma, rel=1e-12)
    # clip = 0.5 is active on some samples; the transcription does not clip, so compare unclipped runs
    run = module.run(problem, data, network, epsilon=epsilon, delta=1e-3, plf=K, decay=R, clip=None, replicas=1,
                     rng=np.random.default_rng(5), x1=x1, stepsize=alpha) if epsilon is None else \
        _unclipped_with_sigma(module, problem, data, network, epsilon, K, R, c, x1, alpha)
    expected = transcription(problem, data, alpha, K, x1, sigma, R, np.random.default_rng(5))
    np.testing.assert_allclose(run.x_history[:, 0], expected, rtol=1e-11, atol=1e-13)


def _unclipped_with_sigma(module, problem, data, network, epsilon, K, R, c, x1, alpha):
    """The private run with the noise calibrated for clip c but gradients not clipped (so that the
    transcription, which does not clip, is comparable): gradients are evaluated with clip=None."""
    original = problem.local_gradients

    class Unclipped(CompositeProblem):
        def local_gradients(self, X, data, clip=None):
            return original(X, data, None)

    unclipped = Unclipped(problem.loss, problem.ridge, problem.lasso, problem.mapping)
    return module.run(unclipped, data, network, epsilon=epsilon, delta=1e-3, plf=K, decay=R, clip=c, replicas=1,
                      rng=np.random.default_rng(5), x1=x1, stepsize=alpha)


# ---------------------------------------------------------------- noise schedule and calibration
@pytest.mark.parametrize("key", sorted(COMPARED))
def test_noise_std_follows_the_senders_release_count(key, monkeypatch):
    data, problem, network = _setup(lasso=0.0 if key in SMOOTH_R_ONLY else 0.02)
    calls, noise_std = [], dp_common.noise_std

    def recording(sigma1, decay, count):
        calls.append(np.array(count, dtype=float))
        return noise_std(sigma1, decay, count)

    monkeypatch.setattr(dp_common, "noise_std", recording)   # every baseline calls it as dp_common.noise_std
    plf, R = 6, 1.2
    run = COMPARED[key](problem, data, network, epsilon=3.0, delta=1e-3, plf=plf, decay=R, clip=1.0, replicas=3,
                        rng=np.random.default_rng(0))
    if key == "dp-rwadmm-30":
        # one call per iteration with the active agent's activation count: it rises to plf for the busiest
        counts = np.stack(calls)
        assert counts.max() == plf and counts.min() == 1 and counts.shape[0] == run.iterations.max()
    else:
        np.testing.assert_array_equal(np.stack(calls), np.arange(1, plf + 1))
    np.testing.assert_allclose(dp_common.noise_std(2.0, R, np.arange(1, 5)), 2.0 * R ** (-np.arange(4) / 2))
    assert run.sigma1 > 0 and np.all(run.plf == plf)


@pytest.mark.parametrize("decay", [1.0, 1.05])
def test_calibration_spends_exactly_the_budget(decay):
    epsilon, delta, T = 12.0, 1e-3, 300
    constant = np.full(T, 0.7)
    assert dp_common.calibrated_sigma1(epsilon, delta, decay, constant) == pytest.approx(
        sigma1_for_budget(epsilon, delta, T, decay, 0.7), rel=1e-12)
    varying = 0.7 * 0.99 ** np.arange(T)
    sigma1 = dp_common.calibrated_sigma1(epsilon, delta, decay, varying)
    rho = np.sum(varying**2 / (2 * (sigma1**2 * decay ** (-np.arange(T)))))          # sum_t Delta_t^2/(2 sigma_t^2)
    assert rho == pytest.approx(_rho_star(epsilon, delta), rel=1e-12)
    assert rho + 2 * np.sqrt(rho * np.log(1 / delta)) == pytest.approx(epsilon, rel=1e-12)


def test_admm_argmin_sensitivity_bounds_a_replace_one_change():
    """||argmin on D - argmin on D'|| <= Delta for the [12] subproblem with per-sample clipping (both readings)."""
    data, problem, network = _setup(lasso=0.02)
    c, clip = 0.8, 0.3
    rng = np.random.default_rng(4)
    X = rng.standard_normal((5, N, Q))
    linear = rng.standard_normal((5, N, Q))
    worst = 0.0
    for index in range(3):
        neighbour = data.replace_sample(0, index, rng.uniform(0, 3, Q), -data.targets[0, index])
        a = dp_common.solve_admm_subproblem(problem, data, linear, c * network.degrees, X, clip)
        b = dp_common.solve_admm_subproblem(problem, neighbour, linear, c * network.degrees, X, clip)
        worst = max(worst, np.max(np.linalg.norm(a - b, axis=-1)))
    assert 0 < worst <= dp_admm_zhang.argmin_sensitivity(problem, data, network, c, clip, "per_sample")
    assert dp_admm_zhang.argmin_sensitivity(problem, data, network, c, clip, "assumption3") == pytest.approx(
        2 * clip / (2 * c * 2 + 2 * problem.ridge))


@pytest.mark.parametrize("loss", ["linear", "logistic"])
@pytest.mark.parametrize("lasso", [0.0, 0.3])
@pytest.mark.parametrize("active", [False, True])
def test_majorize_minimize_and_proximal_gradient_find_the_same_argmin(loss, lasso, active, monkeypatch):
    """The two exact solvers of the ADMM subproblem agree to 1e-11 with per-sample clipping binding on part of the
    samples (m = 200 >= 32 q, so the Gram model is used with and without an l1 part); a noise level in the stopping
    rule moves the result by less than 1e-2 of that noise's std."""
    rng = np.random.default_rng(5)
    data = LocalData(rng.uniform(0, 1, (N, 200, Q)), rng.choice([-1.0, 1.0], (N, 200)))
    problem, network = CompositeProblem(loss, lasso=lasso), Network.from_networkx(nx.cycle_graph(N))
    assert dp_common.uses_quadratic_model(problem, data, clip=0.4)
    if active:
        agents = rng.integers(0, N, 4)
        start, linear, curvature = rng.standard_normal((4, Q)), rng.standard_normal((4, Q)), 0.7 * network.degrees[agents]
    else:
        agents = None
        start, linear, curvature = rng.standard_normal((4, N, Q)), rng.standard_normal((4, N, Q)), 0.7 * network.degrees
    clip = 0.4
    norms = problem.per_sample_gradient_norms(np.broadcast_to(start.mean(axis=0), (N, Q)), data)
    assert 0 < np.mean(norms > clip) < 1                                                 # clipping binds on some samples
    model = dp_common.solve_admm_subproblem(problem, data, linear, curvature, start, clip, agents=agents)
    noisy = dp_common.solve_admm_subproblem(problem, data, linear, curvature, start, clip, agents=agents, noise_std=1.0)
    monkeypatch.setattr(dp_common, "uses_quadratic_model", lambda *_: False)
    gradient = dp_common.solve_admm_subproblem(problem, data, linear, curvature, start, clip, agents=agents)
    np.testing.assert_allclose(model, gradient, atol=1e-11)
    assert 0 < np.max(np.abs(noisy - gradient)) < 1e-2


# ---------------------------------------------------------------- PLF and messages
def test_plf_iterations_and_message_counts():
    data, problem, network = _setup(lasso=0.0)
    common = dict(epsilon=None, delta=1e-3, plf=20, decay=1.0, clip=None, replicas=3, rng=np.random.default_rng(1))
    for key in ("dp-admm-12", "dp-admm-13", "dp-nids-28", "dp-extra-27", "dp-ic-admm-25"):
        run = COMPARED[key](problem, data, network, **common)
        assert np.all(run.plf == 20) and np.all(run.iterations == 20) and np.all(run.messages == 20 * 2 * EDGES)
        assert run.x_history.shape == (21, 3, Q) and run.settings["messages_per_iteration"] == 2 * EDGES
    run = COMPARED["dp-mradmm-17"](problem, data, network, **common)
    assert np.all(run.plf == 20) and np.all(run.iterations == 40) and np.all(run.messages == 40 * 2 * EDGES)
    run = COMPARED["dp-rwadmm-30"](problem, data, network, **common)
    assert np.all(run.plf == 20) and np.all(run.messages == 4 * run.iterations)   # ring: pull 2 + push 2
    assert np.all(run.iterations >= 20 * N * 0.5) and run.x_history.shape[0] == run.iterations.max() + 1


def test_default_stepsizes_are_the_frozen_rules():
    data, problem, network = _setup(loss="logistic")
    L = np.max(problem.lipschitz_constants(data)) + 2 * problem.ridge
    assert dp_extra.default_stepsize(problem, data) == pytest.approx(DEFAULT_STEPSIZES["dp-extra-27"]["logistic"] / L)
    assert dp_admm_zhang.default_stepsize(problem, data) == pytest.approx(1 / (DEFAULT_STEPSIZES["dp-admm-12"]["logistic"] * L))


# ---------------------------------------------------------------- input errors
@pytest.mark.parametrize("key", sorted(COMPARED))
@pytest.mark.parametrize("bad", [dict(epsilon=0.0), dict(epsilon=-1.0), dict(plf=0), dict(stepsize=0.0),
                                 dict(stepsize=-0.1), dict(delta=1.0), dict(clip=None)])
def test_bad_input_raises(key, bad):
    data, problem, network = _setup(lasso=0.0)
    args = dict(epsilon=1.0, delta=1e-3, plf=5, decay=1.05, clip=1.0, replicas=1, rng=np.random.default_rng(0)) | bad
    with pytest.raises(InvalidParameterError):
        COMPARED[key](problem, data, network, **args)


def test_mradmm_refuses_a_nonsmooth_r_and_a_bad_gamma():
    data, problem, network = _setup(lasso=0.02)
    with pytest.raises(InvalidParameterError, match="lasso"):
        dp_mradmm.run(problem, data, network, epsilon=None, plf=5, decay=1.0, clip=None, replicas=1,
                      rng=np.random.default_rng(0))
    with pytest.raises(InvalidParameterError, match="gamma"):
        dp_admm_huang.run(problem, data, network, epsilon=None, plf=5, decay=1.0, clip=None, replicas=1,
                          rng=np.random.default_rng(0), stepsize_decay=1.5)


def test_backtracking_solver_finds_the_huber_argmin_certified_by_cvxpy(monkeypatch):
    """The proximal-gradient solver of the ADMM subproblem (backtracked curvature) against CVXPY on the same problem:
    with per-sample clipping of the linear loss, f_i is a Huber loss with threshold clip/||B_ij|| per sample, written
    for CVXPY as min_w 1/2 w^2 + delta |r - w|. Agreement to 1e-6 with clipping binding on most samples."""
    import cvxpy as cp

    rng = np.random.default_rng(8)
    data = LocalData(rng.uniform(0, 1, (N, 40, Q)), rng.choice([-1.0, 1.0], (N, 40)))
    problem, clip = CompositeProblem("linear", lasso=0.3), 0.2
    monkeypatch.setattr(dp_common, "uses_quadratic_model", lambda *_: False)
    agents = np.array([0, 3, 3])
    start, linear, curvature = rng.standard_normal((3, Q)), rng.standard_normal((3, Q)), np.array([0.5, 1.0, 1.0])
    solved = dp_common.solve_admm_subproblem(problem, data, linear, curvature, start, clip, agents=agents)
    for r, i in enumerate(agents):
        B, b = data.features[i], data.targets[i]
        delta = clip / np.linalg.norm(B, axis=1)
        x, w = cp.Variable(Q), cp.Variable(40)
        huber = cp.sum(0.5 * cp.square(w) + cp.multiply(delta, cp.abs(B @ x - b - w))) / 40
        objective = (huber + linear[r] @ x + (curvature[r] + problem.prox_ridge) * cp.sum_squares(x)
                     + problem.lasso * cp.norm1(x))
        cp.Problem(cp.Minimize(objective)).solve(solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12,
                                                 tol_feas=1e-12)
        assert np.mean(np.abs(B @ solved[r] - b) > delta) > 0.5                # clipping binds on most samples
        np.testing.assert_allclose(solved[r], x.value, atol=1e-6)


def test_which_solver_the_subproblem_uses():
    """The quadratic model where it is the subproblem (unclipped linear loss, no l1) or cheap against a data pass
    (m/q >= 8 without l1, >= 32 with it); the backtracked proximal gradient otherwise (MNIST 0/1's shape, m/q = 2)."""
    def shape(m, q):
        return LocalData(np.ones((2, m, q)), np.ones((2, m)))
    ridge_only, lasso = CompositeProblem("linear", lasso=0.0), CompositeProblem("linear", lasso=0.5)
    assert dp_common.uses_quadratic_model(ridge_only, shape(1583, 784), None)
    assert not dp_common.uses_quadratic_model(ridge_only, shape(1583, 784), 19.0)
    assert not dp_common.uses_quadratic_model(CompositeProblem("logistic", lasso=0.0), shape(1583, 784), None)
    assert dp_common.uses_quadratic_model(ridge_only, shape(6248, 22), 1.0)
    assert dp_common.uses_quadratic_model(lasso, shape(6248, 22), 1.0)
    assert not dp_common.uses_quadratic_model(lasso, shape(600, 22), None)
    assert "backtracked" in dp_common.subproblem_description(ridge_only, shape(1583, 784), 19.0)


def _scripted(moves: np.ndarray, scale: float):
    """runs[g]() of `_in_turn_with_batch_stop` for one row whose t-th step moves by moves[t] (signs alternating) from
    `scale`: a fresh generator per call, as a deterministic solver's steps are."""
    def run():
        x = np.array([[scale, -scale]])
        for t, move in enumerate(moves):
            x = x + (-1) ** t * move
            yield x
    return run


def test_agents_in_turn_stop_where_the_whole_batch_stops(monkeypatch):
    """CSR blocks are solved one agent at a time but must stop at the batch's step: the first at which no row of any
    agent moves more than the tolerance at the largest |x| of the batch. Over 300 scripted batches (moves that decay,
    bounce back after settling, or never settle; tolerances set by the noise or by |x|), each group's result is, bit
    for bit, its rows of `_until_settled` on all groups' steps stacked; and every path of the in-turn solver is taken:
    the batch stopping before some group's own stop (that group is run again), after every group's own stop, and at
    SUBPROBLEM_MAX_STEPS."""
    cap = 40
    monkeypatch.setattr(dp_common, "SUBPROBLEM_MAX_STEPS", cap)
    rng = np.random.default_rng(11)
    taken = {"run again": 0, "past every own stop": 0, "at the cap": 0}
    for _ in range(300):
        noise_std = float(rng.choice([0.0, 1e-6, 1e-3]))
        scales = 10.0 ** rng.uniform(-2, 14, int(rng.integers(1, 5)))
        runs, calls = [], []
        for scale in scales:
            moves = 10.0 ** rng.uniform(-3, 3, 60) * 0.5 ** np.arange(60.0)
            if rng.random() < 0.3:
                moves[rng.integers(1, 20):] *= 1e6                   # bounces back after settling
            if rng.random() < 0.1:
                moves = np.full(60, 1.0)                              # never settles
            runs.append(lambda run=_scripted(moves, scale): calls.append(1) or run())
        starts = [np.array([[s, -s]]) for s in scales]
        got = np.concatenate(dp_common._in_turn_with_batch_stop(runs, starts, noise_std))
        taken["run again"] += len(calls) > len(runs)
        steps = [np.stack(list(run())) for run in runs]              # (60, 1, 2) per group
        stacked = np.concatenate(steps, axis=1)
        expected = dp_common._until_settled(iter(stacked), np.concatenate(starts), noise_std)
        assert np.array_equal(got, expected)
        stop = next(t for t in range(cap) if np.array_equal(stacked[t], expected))
        own = [next((t for t in range(cap) if dp_common._settled(s[t], s[t - 1] if t else start, noise_std)), cap)
               for s, start in zip(steps, starts)]
        taken["past every own stop"] += stop > max(own)
        taken["at the cap"] += stop == cap - 1
    assert all(count > 0 for count in taken.values()), taken


@pytest.mark.parametrize("noise_std", [0.0, 1e-4])
def test_csr_blocks_solved_in_turn_give_the_batch_solution_bit_for_bit(noise_std, monkeypatch):
    """The exact ADMM argmin on CSR blocks (clipping binding, l1 on): each agent's rows in turn
    (`_backtracking_proximal_gradient`) give the bits of the proximal-gradient steps on all rows at once, stopped by
    the batch's rule; agents with 1, 2, 3 and 5 rows take both kinds of sparse product."""
    from dpverify.algorithms.dp_recal import composite

    monkeypatch.setattr(composite, "SPARSE_MIN_ENTRIES", 0)
    rng = np.random.default_rng(12)
    features = rng.uniform(0, 1, (4, 120, 30)) * (rng.random((4, 120, 30)) < 0.2)
    data = LocalData(features, rng.choice([-1.0, 1.0], (4, 120)))
    problem, clip = CompositeProblem("linear", lasso=0.05), 0.3
    engine = dp_common.ActiveGradients(problem, data, clip, method="samples")
    agents = np.array([2, 0, 1, 1, 3, 3, 2, 3, 3, 3, 1])
    assert engine.reads_csr(np.unique(agents))
    start, linear = rng.standard_normal((11, 30)), rng.standard_normal((11, 30))
    curvature = rng.uniform(0.5, 2.0, 11)
    in_turn = dp_common._backtracking_proximal_gradient(problem, engine, linear, curvature, start, agents, noise_std)
    together = dp_common._until_settled(dp_common._proximal_gradient_steps(problem, engine, linear, curvature, start,
                                                                          agents), start, noise_std)
    assert np.array_equal(in_turn, together)
    assert not np.array_equal(in_turn, start)
