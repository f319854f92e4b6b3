"""Communication graphs, mixing weights and the stacked network matrices of seeds/004 Sec. 4.1.

A `Network` validates what the papers assume of a graph (undirected, simple, connected) at
construction, so every algorithm can rely on it without re-checking.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import networkx as nx
import numpy as np
from scipy.sparse.csgraph import connected_components

from dpverify.algorithms.core.errors import InvalidGraphError
from dpverify.algorithms.core.validation import require_positive_int

# Relative tolerance below which a singular value counts as zero in phi_min / phi_max
# (seeds/004 L36 defines Phi_min, Phi_max as the NONZERO extreme singular values).
SINGULAR_VALUE_RTOL = 1e-9
# Eigenvalues of L_-/2 below this fraction of the largest are round-off of exact zeros (for Q).
EIGENVALUE_ZERO_RTOL = 1e-12


@dataclass(frozen=True, eq=False)
class Network:
    """Connected undirected simple graph on agents 0..N-1 (seeds/004 Sec. 2.1, L42)."""

    adjacency: np.ndarray

    def __post_init__(self) -> None:
        adjacency = np.array(self.adjacency, dtype=float, copy=True)
        if adjacency.ndim != 2 or adjacency.shape[0] != adjacency.shape[1]:
            raise InvalidGraphError(f"adjacency must be a square (N, N) matrix; got shape {adjacency.shape}")
        num_agents = adjacency.shape[0]
        if num_agents < 2:
            raise InvalidGraphError(f"a network needs at least 2 agents; got N = {num_agents}")
        if not np.all(np.isfinite(adjacency)) or not np.all((adjacency == 0) | (adjacency == 1)):
            raise InvalidGraphError("adjacency must contain only 0/1 entries (unweighted simple graph, seeds/004 L42)")
        loops = np.flatnonzero(np.diag(adjacency))
        if loops.size:
            raise InvalidGraphError(
                f"adjacency has self-loops at nodes {loops.tolist()}; seeds/004 L42 uses a simple graph "
                "(|N_k| counts neighbours other than k)"
            )
        if not np.array_equal(adjacency, adjacency.T):
            k, l = np.argwhere(adjacency != adjacency.T)[0]
            raise InvalidGraphError(
                f"adjacency is not symmetric (A[{k},{l}] = {adjacency[k, l]:g}, A[{l},{k}] = {adjacency[l, k]:g}); "
                "seeds/004 Sec. 2.1 assumes an undirected network"
            )
        num_components, _ = connected_components(adjacency, directed=False)
        if num_components > 1:
            raise InvalidGraphError(
                f"graph is disconnected ({num_components} components); seeds/004 Sec. 2.1 assumes a connected network"
            )
        adjacency.setflags(write=False)
        object.__setattr__(self, "adjacency", adjacency)

    @classmethod
    def from_networkx(cls, graph: nx.Graph) -> "Network":
        """Nodes are relabelled 0..N-1 in sorted order of their labels; edge weights are ignored."""
        if graph.is_directed():
            raise InvalidGraphError("graph is directed; seeds/004 Sec. 2.1 assumes an undirected network")
        nodes = sorted(graph.nodes())
        return cls(nx.to_numpy_array(graph, nodelist=nodes, weight=None))

    @property
    def num_agents(self) -> int:
        return self.adjacency.shape[0]

    @cached_property
    def degrees(self) -> np.ndarray:
        """|N_k| for every agent, as floats (used directly in formulas)."""
        degrees = self.adjacency.sum(axis=1)
        degrees.setflags(write=False)
        return degrees

    @cached_property
    def edges(self) -> np.ndarray:
        """(E, 2) int array of undirected edges (k, l) with k < l, in lexicographic order."""
        rows, cols = np.nonzero(np.triu(self.adjacency, k=1))
        edges = np.stack([rows, cols], axis=1).astype(int)
        edges.setflags(write=False)
        return edges

    @property
    def num_edges(self) -> int:
        return self.edges.shape[0]

    @cached_property
    def laplacian(self) -> np.ndarray:
        laplacian = np.diag(self.degrees) - self.adjacency
        laplacian.setflags(write=False)
        return laplacian

    @cached_property
    def directed_pairs(self) -> np.ndarray:
        """(2E, 2) array of (sender, receiver): every edge in both directions, (k,l) then (l,k)."""
        forward = self.edges
        pairs = np.empty((2 * forward.shape[0], 2), dtype=int)
        pairs[0::2] = forward
        pairs[1::2] = forward[:, ::-1]
        pairs.setflags(write=False)
        return pairs

    def neighbors(self, agent: int) -> np.ndarray:
        if not 0 <= agent < self.num_agents:
            raise InvalidGraphError(f"agent index must lie in [0, {self.num_agents - 1}]; got {agent}")
        return np.flatnonzero(self.adjacency[agent]).astype(int)


def random_connected_network(
    num_agents: int, num_edges: int, rng: np.random.Generator, max_tries: int = 1000
) -> Network:
    """G(N, E) random graph (networkx.gnm_random_graph), resampled until connected (spec §6 default
    for seeds/004 L304: "random topology", K = 50, 3 neighbours on average -> E = 75)."""
    num_agents = require_positive_int("num_agents", num_agents)
    num_edges = require_positive_int("num_edges", num_edges)
    max_tries = require_positive_int("max_tries", max_tries)
    if num_agents < 2:
        raise InvalidGraphError(f"a network needs at least 2 agents; got N = {num_agents}")
    max_edges = num_agents * (num_agents - 1) // 2
    if not num_agents - 1 <= num_edges <= max_edges:
        raise InvalidGraphError(
            f"a connected simple graph on N = {num_agents} nodes needs N-1 = {num_agents - 1} <= E <= "
            f"N(N-1)/2 = {max_edges} edges; got E = {num_edges}"
        )
    for _ in range(max_tries):
        graph = nx.gnm_random_graph(num_agents, num_edges, seed=int(rng.integers(2**32)))
        if nx.is_connected(graph):
            return Network.from_networkx(graph)
    raise InvalidGraphError(
        f"no connected G(N={num_agents}, E={num_edges}) graph found in {max_tries} draws; increase E or max_tries"
    )


def metropolis_weights(network: Network) -> np.ndarray:
    """a_kl = 1/(1 + max(d_k, d_l)) on edges, a_kk = 1 - sum_l a_kl (spec §2.10 A4): symmetric and
    doubly stochastic for any undirected graph."""
    degrees = network.degrees
    weights = network.adjacency / (1.0 + np.maximum(degrees[:, None], degrees[None, :]))
    weights[np.diag_indices_from(weights)] = 1.0 - weights.sum(axis=1)
    return weights


def validate_weight_matrix(weights: np.ndarray, network: Network, atol: float = 1e-10) -> np.ndarray:
    """Check a mixing matrix is symmetric, nonnegative, doubly stochastic and supported on the graph
    (edges + diagonal). Returns it as a float array; raises InvalidGraphError naming the violation."""
    weights = np.asarray(weights, dtype=float)
    n = network.num_agents
    if weights.shape != (n, n):
        raise InvalidGraphError(f"weight matrix must have shape ({n}, {n}) to match the network; got {weights.shape}")
    if not np.all(np.isfinite(weights)):
        raise InvalidGraphError("weight matrix contains NaN/inf entries")
    asymmetry = np.max(np.abs(weights - weights.T))
    if asymmetry > atol:
        raise InvalidGraphError(f"weight matrix is not symmetric (max |W - W^T| = {asymmetry:.3g} > {atol:g})")
    if weights.min() < -atol:
        raise InvalidGraphError(f"weight matrix has negative entries (min = {weights.min():.3g})")
    for axis, name in ((1, "rows"), (0, "columns")):
        deviation = np.max(np.abs(weights.sum(axis=axis) - 1.0))
        if deviation > atol:
            raise InvalidGraphError(
                f"weight matrix {name} must sum to 1 (doubly stochastic); max deviation {deviation:.3g} > {atol:g}"
            )
    allowed = (network.adjacency > 0) | np.eye(n, dtype=bool)
    outside = np.argwhere((np.abs(weights) > atol) & ~allowed)
    if outside.size:
        k, l = outside[0]
        raise InvalidGraphError(
            f"weight matrix is nonzero at ({k}, {l}) but ({k}, {l}) is not an edge; mixing must follow the graph"
        )
    return weights


def phi_min(matrix: np.ndarray) -> float:
    """Smallest NONZERO singular value (seeds/004 L36, Phi_min)."""
    nonzero = _nonzero_singular_values(matrix)
    return float(nonzero.min())


def phi_max(matrix: np.ndarray) -> float:
    """Largest nonzero singular value (seeds/004 L36, Phi_max)."""
    nonzero = _nonzero_singular_values(matrix)
    return float(nonzero.max())


def _nonzero_singular_values(matrix: np.ndarray) -> np.ndarray:
    singular_values = np.linalg.svd(np.asarray(matrix, dtype=float), compute_uv=False)
    if singular_values.size == 0 or singular_values.max() == 0:
        raise InvalidGraphError("matrix has no nonzero singular value; Phi_min/Phi_max (seeds/004 L36) undefined")
    return singular_values[singular_values > SINGULAR_VALUE_RTOL * singular_values.max()]


@dataclass(frozen=True, eq=False)
class PaperMatrices:
    """The stacked matrices of seeds/004 Sec. 4.1 (L150, L180, L185), built densely.

    `directed_pairs[q] = (k, l)` is the pair whose auxiliary variable has index q in the stacked z:
    block (q, k) of A1 and block (q, l) of A2 are I_P (L150).
    """

    dim: int
    directed_pairs: np.ndarray
    A1: np.ndarray
    A2: np.ndarray
    H_plus: np.ndarray
    H_minus: np.ndarray
    L_plus: np.ndarray
    L_minus: np.ndarray
    M: np.ndarray
    Q: np.ndarray

    @property
    def A(self) -> np.ndarray:
        """A = [A1; A2] in R^{4EP x KP} (L150)."""
        return np.vstack([self.A1, self.A2])

    @property
    def B(self) -> np.ndarray:
        """B = [-I_{2EP}; -I_{2EP}] in R^{4EP x 2EP} (L150)."""
        identity = np.eye(self.A1.shape[0])
        return np.vstack([-identity, -identity])


def paper_matrices(network: Network, dim: int) -> PaperMatrices:
    dim = require_positive_int("dim", dim)
    pairs = network.directed_pairs
    num_pairs, num_agents = pairs.shape[0], network.num_agents
    # seeds/004 L150: row-block q of A1 selects the first client of pair q, of A2 the second one.
    selector_first = np.zeros((num_pairs, num_agents))
    selector_second = np.zeros((num_pairs, num_agents))
    selector_first[np.arange(num_pairs), pairs[:, 0]] = 1.0
    selector_second[np.arange(num_pairs), pairs[:, 1]] = 1.0
    identity = np.eye(dim)
    A1 = np.kron(selector_first, identity)
    A2 = np.kron(selector_second, identity)
    # seeds/004 L180
    H_plus = A1.T + A2.T
    H_minus = A1.T - A2.T
    L_plus = H_plus @ H_plus.T / 2.0
    L_minus = H_minus @ H_minus.T / 2.0
    M = (L_plus + L_minus) / 2.0
    # seeds/004 L185: Q = sqrt(L_-/2), symmetric PSD square root. Round-off eigenvalues of the exact
    # null space (|lambda| <= 1e-12 lambda_max) are set to 0 so that Null(Q) = Null(L_-) to machine precision.
    eigenvalues, eigenvectors = np.linalg.eigh((L_minus + L_minus.T) / 4.0)
    eigenvalues[eigenvalues <= EIGENVALUE_ZERO_RTOL * max(eigenvalues.max(), 0.0)] = 0.0
    Q = (eigenvectors * np.sqrt(eigenvalues)) @ eigenvectors.T
    return PaperMatrices(
        dim=dim, directed_pairs=np.array(pairs), A1=A1, A2=A2, H_plus=H_plus, H_minus=H_minus,
        L_plus=L_plus, L_minus=L_minus, M=M, Q=Q,
    )
