"""Building blocks of the DP-RECAL convergence analysis (seeds/001 Sec. IV, App. B-E; spec §2.1, §2.7, §4).

Everything here is a formula of the paper, implemented as printed (line cited), with the harness's
reading where the print cannot be executed literally (named, recorded by the checks):
  * the operator matrices A, H, S, H_1, H_2, J, K, J^, S^ of (5) and App. C, ordering w = (lam, x, y);
  * g of Lemma 1 and the walk's exact marginals;
  * the analysis model (9)-(10) ("all agents activated" T^[eps], then the block selection E^{k+1}).
Iterates are batched: lam (R, n, q), x (R, q), y (R, n, q).
"""

from __future__ import annotations

from dataclasses import dataclass

import networkx as nx
import numpy as np

from dpverify.algorithms.core.network import Network
from dpverify.algorithms.core.problems import LocalData
from dpverify.algorithms.core.synthetic import noisy_linear_observations
from dpverify.algorithms.dp_recal.composite import CompositeProblem

DK_BLOCKS = ("x", "lambda_broadcast")   # spec §4.2 switch: where the q-vector eps^k sits in D^k
ACTIVATIONS = ("walk", "iid")           # spec §2.7 switch: who E^{k+1} selects in (10b)
CHECK_LASSO = 0.02  # default: the printed lasso = 1/2 makes x* = 0 on the paper's data; 0.02 keeps x* != 0
CHECK_RIDGE = 0.5   # the printed ridge (v1:L556)


# ----- the stacking operator and the matrices of (5) and Sec. IV -----
def stacking(n: int, q: int) -> np.ndarray:
    """U = 1 (x) I_q (v1 eq. (2)): (nq, q)."""
    return np.kron(np.ones((n, 1)), np.eye(q))


@dataclass(frozen=True)
class OperatorMatrices:
    """The block matrices of spec §4.2 in the ordering (lam, x, y), dimension nq + q + nq."""

    A: np.ndarray
    H: np.ndarray
    S: np.ndarray
    H1: np.ndarray
    H2: np.ndarray
    J: np.ndarray
    K: np.ndarray
    J_hat: np.ndarray
    S_hat: np.ndarray
    Gamma: np.ndarray
    Q: np.ndarray


def operator_matrices(alpha: np.ndarray, lipschitz: np.ndarray, q: int, beta: float) -> OperatorMatrices:
    alpha, lipschitz = np.asarray(alpha, float), np.asarray(lipschitz, float)
    n = alpha.size
    U, I, Iq, Z = stacking(n, q), np.eye(n * q), np.eye(q), np.zeros
    Gamma = np.kron(np.diag(alpha), Iq)
    Q = np.kron(np.diag(lipschitz), Iq)        # Assumption 1, v1:L57
    Gi = np.linalg.inv(Gamma)
    zq, zn = Z((q, q)), Z((n * q, n * q))
    block = np.block
    A = block([[zn, -U, I], [U.T, zq, Z((q, n * q))], [-I, Z((n * q, q)), zn]])          # spec §1.5
    H = block([[I / beta, Z((n * q, q)), zn], [U.T, Iq, Z((q, n * q))], [-I, Z((n * q, q)), Gi]])  # v1:L322
    S = block([[I / beta, Z((n * q, q)), zn], [Z((q, n * q)), Iq, Z((q, n * q))], [zn, Z((n * q, q)), Gi]])  # v1:L326
    # v1:L167 prints H_1 lam-component "lam/beta + U x - x"; read "- y" (spec §2.1; nq-vector minus q-vector otherwise)
    H1 = block([[I / beta, U, -I], [Z((q, n * q)), Iq, Z((q, n * q))], [zn, Z((n * q, q)), Gi]])
    H2 = block([[I, beta * U, -beta * I], [Z((q, n * q)), Iq, Z((q, n * q))], [zn, Z((n * q, q)), I]])  # v1:L169
    J = block([[I / beta, U / 2, -I / 2], [U.T / 2, Iq, Z((q, n * q))], [-I / 2, Z((n * q, q)), Gi]])  # App. C
    K = block([[zn, -U / 2, I / 2], [U.T / 2, zq, Z((q, n * q))], [-I / 2, Z((n * q, q)), zn]])     # App. C
    J_hat = block([[I / beta, -U / 2, I / 2], [-U.T / 2, Iq, Z((q, n * q))], [I / 2, Z((n * q, q)), Gi - Q / 4]])
    S_hat = block([[I / beta, -U, I], [-U.T, Iq, Z((q, n * q))], [I, Z((n * q, q)), Gi - Q / 2]])   # v1:L334
    return OperatorMatrices(A, H, S, H1, H2, J, K, J_hat, S_hat, Gamma, Q)


def v0_stepsize_matrix(alpha: np.ndarray, lipschitz: np.ndarray, q: int, beta: float) -> np.ndarray:
    """v0 eq. (11) (v0:L126-L134): [[I, 0], [0, Gamma^-1 - Q/2]] - beta [[U^T U, -U^T], [-U, I]], ordering (x, y)."""
    n = len(alpha)
    U = stacking(n, q)
    Gi_Q = np.kron(np.diag(1.0 / np.asarray(alpha) - np.asarray(lipschitz) / 2.0), np.eye(q))
    first = np.block([[np.eye(q), np.zeros((q, n * q))], [np.zeros((n * q, q)), Gi_Q]])
    return first - beta * np.block([[U.T @ U, -U.T], [-U, np.eye(n * q)]])


def activation_weights(g: np.ndarray, q: int) -> np.ndarray:
    """Pi = diag(Pi~ (x) I_q, I_q, Pi~ (x) I_q) (v1:L306) as its diagonal."""
    gq = np.repeat(np.asarray(g, float), q)
    return np.concatenate([gq, np.ones(q), gq])


# ----- Lemma 1 -----
def lemma1_g(network: Network) -> np.ndarray:
    """g = (D^-1 L^2 D^-1 + 1 1^T)^-1 1 (v1:L298, Lemma 1, as printed)."""
    Dinv = np.diag(1.0 / network.degrees)
    L = network.laplacian
    n = network.num_agents
    return np.linalg.solve(Dinv @ L @ L @ Dinv + np.ones((n, n)), np.ones(n))


def stationary_distribution(network: Network) -> np.ndarray:
    """pi = D 1 / 1^T D 1: the stationary law of the uniform walk P = I - D^-1 L."""
    return network.degrees / network.degrees.sum()


def walk_marginals(P: np.ndarray, start: np.ndarray, steps: int) -> np.ndarray:
    """P(i_k = .) for k = 1..steps, exactly: p_{k+1} = p_k P. (steps, n)."""
    out = [np.asarray(start, float)]
    for _ in range(steps - 1):
        out.append(out[-1] @ P)
    return np.array(out)


def check_graphs(n: int, rng: np.random.Generator) -> dict[str, Network]:
    """The graphs of the activation checks: ring, complete, star, path and a connected G(n, 2n) graph."""
    graphs = {"ring": nx.cycle_graph(n), "complete": nx.complete_graph(n), "star": nx.star_graph(n - 1),
              "path": nx.path_graph(n)}
    while True:
        random_graph = nx.gnm_random_graph(n, 2 * n, seed=int(rng.integers(2**32)))
        if nx.is_connected(random_graph):
            break
    graphs["random"] = random_graph
    return {name: Network.from_networkx(graph) for name, graph in graphs.items()}


# ----- instances -----
@dataclass(frozen=True)
class Instance:
    problem: CompositeProblem
    data: LocalData
    network: Network
    x_star: np.ndarray
    certificate: float        # certified bound on ||x_star - x*|| (solve_composite)

    @property
    def lipschitz(self) -> np.ndarray:
        return self.problem.lipschitz_constants(self.data)

    def saddle_point(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """w* = (lam*, x*, y*): y* = U x*, lam*_i = grad f_i(x*) (spec §1.5)."""
        n = self.data.num_agents
        y_star = np.broadcast_to(self.x_star, (n, self.data.dim)).copy()
        return self.problem.local_gradients(y_star, self.data), self.x_star.copy(), y_star


def linear_instance(graph: nx.Graph, rng: np.random.Generator, samples: int = 10, dim: int = 4) -> Instance:
    """Linear regression + elastic net (r = ridge ||x||^2 + lasso ||x||_1, mapping M1) on `graph`."""
    from dpverify.theory.dp_recal.composite_ground_truth import (
        solve_composite,  # heavy (cvxpy) import only when needed
    )

    network = Network.from_networkx(graph)
    data, _ = noisy_linear_observations(network.num_agents, samples, dim, rng)
    problem = CompositeProblem(loss="linear", ridge=CHECK_RIDGE, lasso=CHECK_LASSO)
    solution = solve_composite(problem, data)
    return Instance(problem, data, network, solution.x, solution.distance_bound)


# ----- the analysis model (9)-(10) -----
def all_active_step(instance: Instance, alpha: np.ndarray, beta: float, lam, x, y, eps=None):
    """T^[eps] (v1 eqs. (9a)-(9d)): returns (lam_half, x_hat, y_hat, lam_hat). eps (R, q) or None."""
    n = instance.data.num_agents
    lam_half = lam + beta * (x[:, None, :] - y)                                          # (9a)
    eps = np.zeros_like(x) if eps is None else eps
    x_hat = instance.problem.prox_scaled_r(x - (lam_half.sum(axis=1) - eps), n)           # (9b)
    gradient = instance.problem.local_gradients(y, instance.data)
    y_hat = y - alpha[None, :, None] * (gradient - lam_half)                              # (9c)
    lam_hat = lam_half + beta * ((x_hat - x)[:, None, :] - (y_hat - y))                   # (9d)
    return lam_half, x_hat, y_hat, lam_hat


def select_blocks(active: np.ndarray, lam, x, y, lam_hat, x_hat, y_hat):
    """(10b): w^{k+1} = w^k + E^{k+1}(w^ - w^k); E selects agent `active` (R,) in the lam and y blocks,
    and the x block always (E^k = diag(E~, I, E~), v1:L306)."""
    chosen = (np.arange(lam.shape[1])[None, :] == active[:, None])[..., None]
    return np.where(chosen, lam_hat, lam), x_hat, np.where(chosen, y_hat, y)


def flatten(lam, x, y) -> np.ndarray:
    """w = col{lam, x, y} per replica: (R, nq + q + nq)."""
    R = x.shape[0]
    return np.concatenate([lam.reshape(R, -1), x, y.reshape(R, -1)], axis=1)


def squared_norm(v: np.ndarray, M: np.ndarray) -> np.ndarray:
    """||v||_M^2 = <v, M v> per row."""
    return np.einsum("ri,ij,rj->r", v, M, v)


def noise_vector(eps: np.ndarray, n: int, q: int, dk_block: str) -> np.ndarray:
    """D^k of Lemma 3, printed [(eps^k)^T, 0, 0]^T (v1:L334) with the q-vector placed per `dk_block`."""
    R = eps.shape[0]
    D = np.zeros((R, 2 * n * q + q))
    if dk_block == "x":
        D[:, n * q: n * q + q] = eps
    elif dk_block == "lambda_broadcast":
        D[:, : n * q] = np.tile(eps, n)
    else:
        raise ValueError(f"dk_block must be one of {DK_BLOCKS}; got {dk_block!r}")
    return D
