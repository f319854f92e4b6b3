"""Neighbour mixing of batched states, the product every decentralized algorithm takes each iteration, and the
agent-major layout it is fastest in.

Written with np.matmul, which calls BLAS: np.einsum("ij,rjd->rid") computes the same sums without it
and was 23x slower at N = 200 (issue 17). The sums run in another order, so results agree with the
einsum to rounding (about 1e-16 relative), not bit for bit. For a sparse graph `mixing_operator` gives a
scipy CSR array instead, whose product skips the zero weights (2.9x faster for zCDP-NFL's 75-edge graph on
50 agents at R = 100, d = 8).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse

# A sparse product beat the dense BLAS one (1.1-3.9x, one BLAS thread, 2 cores) wherever at most 10% of the weights
# were nonzero and the product had N * columns >= 4000 (N = 50-200; R d = 80-8000); below that size scipy's
# fixed cost per call wins for the dense product (up to 3x at N = 10).
SPARSE_MAX_DENSITY = 0.1
SPARSE_MIN_SIZE = 4000


def agent_major(values) -> np.ndarray:
    """A copy of values (R, N, ...) stored agent by agent, as (N, R, ...) in memory: the layout in which `mix` is
    one BLAS product with no copy. Elementwise numpy keeps an operand's layout (order 'K'), so a state started
    this way stays so through an algorithm's arithmetic."""
    values = np.asarray(values, dtype=float)
    return np.array(values.swapaxes(0, 1), order="C").swapaxes(0, 1)


def copy_vectors(destination: np.ndarray, source: np.ndarray) -> None:
    """destination[...] = source for float arrays (..., d) whose last axes are contiguous, each d-vector moved as one
    8d-byte item. Between two layouts (agent-major and replica-major, or into a wider buffer) numpy's copy otherwise
    loops over the short last axis: 27 against 12 us at R = 100, N = 50, d = 8. The same bytes either way."""
    if (destination.shape == source.shape and destination.size and destination.dtype == source.dtype == np.float64
            and destination.strides[-1] == source.strides[-1] == 8):
        item = np.dtype(f"V{8 * destination.shape[-1]}")
        np.copyto(destination.view(item)[..., 0], source.view(item)[..., 0])
    else:
        np.copyto(destination, source)


def mixing_operator(weights: np.ndarray, columns: int):
    """The weights as a CSR array where a sparse product is the cheaper one for states of `columns` = R d entries per
    agent, else the dense weights themselves; `mix` takes either. Built once per run: building the CSR array costs
    more than a product."""
    weights = np.asarray(weights, dtype=float)
    agents = weights.shape[0]
    if np.count_nonzero(weights) <= SPARSE_MAX_DENSITY * agents * agents and agents * columns >= SPARSE_MIN_SIZE:
        return scipy.sparse.csr_array(weights)
    return weights


def mix(weights, states: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """sum_j w_ij x_j for every replica: weights (N, N), dense or a scipy sparse array (`mixing_operator`), states
    (..., N, d) -> (..., N, d).

    A state (R, N, d) stored agent-major (`agent_major`) is mixed as one product W @ (N, R*d): np.matmul over
    (R, N, d) calls one small product per replica, 7-20x slower at R = 1000, N = 6 (issue 17). The result is
    agent-major too."""
    if scipy.sparse.issparse(weights):
        return _mix_sparse(weights, states, out)
    if out is None and states.ndim == 3:
        by_agent = states.swapaxes(0, 1)
        if by_agent.flags.c_contiguous:
            agents, replicas, dim = by_agent.shape
            return (weights @ by_agent.reshape(agents, replicas * dim)).reshape(agents, replicas, dim).swapaxes(0, 1)
    return np.matmul(weights, states, out=out)


def _mix_sparse(weights, states: np.ndarray, out: np.ndarray | None) -> np.ndarray:
    """A sparse product takes 2-D operands: the agent axis first and all others as columns, which for an agent-major
    state is a view (no copy), and so is the agent-major result."""
    by_agent = np.moveaxis(states, -2, 0)
    mixed = np.moveaxis((weights @ by_agent.reshape(by_agent.shape[0], -1)).reshape(by_agent.shape), 0, -2)
    if out is None:
        return mixed
    out[...] = mixed
    return out


def mix_per_link(weights: np.ndarray, messages: np.ndarray) -> np.ndarray:
    """sum_j w_ij q_{j->i}: each receiver i weighs what each sender j sent to it alone.
    weights (N, N), messages (R, N_receiver, N_sender, d) -> (R, N, d)."""
    return np.matmul(weights[:, None, :], messages)[..., 0, :]   # row i of W times receiver i's (N_sender, d) block
