import networkx as nx
import numpy as np
import pytest

from dpverify.algorithms.core.errors import InvalidGraphError
from dpverify.algorithms.core.network import (
    Network,
    metropolis_weights,
    paper_matrices,
    phi_max,
    phi_min,
    random_connected_network,
    validate_weight_matrix,
)


def path3() -> Network:
    return Network(np.array([[0, 1, 0], [1, 0, 1], [0, 1, 0]]))


SMALL_GRAPHS = {
    "path3": nx.path_graph(3),
    "cycle4": nx.cycle_graph(4),
    "star4": nx.star_graph(3),
    "complete4": nx.complete_graph(4),
}
# Laplacian spectra by hand: path P3 {0,1,3}; cycle C4 {0,2,2,4}; star K_{1,3} {0,1,1,4}; K4 {0,4,4,4}.
LAPLACIAN_NONZERO_EXTREMES = {"path3": (1.0, 3.0), "cycle4": (2.0, 4.0), "star4": (1.0, 4.0), "complete4": (4.0, 4.0)}


def test_basic_properties_of_a_path():
    network = path3()
    assert network.num_agents == 3
    np.testing.assert_array_equal(network.degrees, [1.0, 2.0, 1.0])
    np.testing.assert_array_equal(network.edges, [[0, 1], [1, 2]])
    assert network.num_edges == 2
    np.testing.assert_array_equal(network.laplacian, [[1, -1, 0], [-1, 2, -1], [0, -1, 1]])
    np.testing.assert_array_equal(network.neighbors(1), [0, 2])
    np.testing.assert_array_equal(network.directed_pairs, [[0, 1], [1, 0], [1, 2], [2, 1]])


def test_adjacency_is_copied_and_read_only():
    adjacency = np.array([[0, 1], [1, 0]])
    network = Network(adjacency)
    adjacency[0, 1] = 0
    assert network.adjacency[0, 1] == 1
    with pytest.raises(ValueError):
        network.adjacency[0, 1] = 0


@pytest.mark.parametrize(
    "adjacency, message",
    [
        (np.array([[0, 1, 0, 0], [1, 0, 0, 0], [0, 0, 0, 1], [0, 0, 1, 0]]), "disconnected (2 components)"),
        (np.array([[0, 1, 0], [0, 0, 1], [0, 1, 0]]), "not symmetric"),
        (np.array([[1, 1], [1, 0]]), "self-loops"),
        (np.array([[0, 2], [2, 0]]), "0/1"),
        (np.array([[0]]), "at least 2 agents"),
        (np.zeros((2, 3)), "square"),
    ],
)
def test_invalid_graphs_are_rejected_with_the_violated_assumption(adjacency, message):
    with pytest.raises(InvalidGraphError, match=message.replace("(", r"\(").replace(")", r"\)")):
        Network(adjacency)


def test_from_networkx_relabels_nodes_in_sorted_order():
    graph = nx.Graph([("c", "b"), ("b", "a")])
    network = Network.from_networkx(graph)
    np.testing.assert_array_equal(network.adjacency, [[0, 1, 0], [1, 0, 1], [0, 1, 0]])
    with pytest.raises(InvalidGraphError, match="directed"):
        Network.from_networkx(nx.DiGraph([(0, 1)]))


def test_random_connected_network_is_connected_has_E_edges_and_is_reproducible():
    first = random_connected_network(50, 75, np.random.default_rng(3))
    second = random_connected_network(50, 75, np.random.default_rng(3))
    assert first.num_edges == 75
    assert nx.is_connected(nx.from_numpy_array(first.adjacency))
    np.testing.assert_array_equal(first.adjacency, second.adjacency)
    assert first.degrees.mean() == pytest.approx(3.0)  # seeds/004 L304: 3 neighbours on average


@pytest.mark.parametrize("num_edges", [3, 11])
def test_random_connected_network_rejects_impossible_edge_counts(num_edges):
    with pytest.raises(InvalidGraphError, match="N-1 = 4 <= E <= N\\(N-1\\)/2 = 10"):
        random_connected_network(5, num_edges, np.random.default_rng(0))


def test_metropolis_weights_of_a_path_equal_hand_values():
    # degrees 1, 2, 1: a_01 = a_12 = 1/(1 + 2) = 1/3; a_00 = a_22 = 2/3; a_11 = 1/3.
    expected = np.array([[2 / 3, 1 / 3, 0], [1 / 3, 1 / 3, 1 / 3], [0, 1 / 3, 2 / 3]])
    weights = metropolis_weights(path3())
    np.testing.assert_allclose(weights, expected, rtol=0, atol=1e-15)
    np.testing.assert_allclose(weights.sum(axis=0), 1.0, atol=1e-15)
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, atol=1e-15)
    validate_weight_matrix(weights, path3())


def test_metropolis_weights_of_a_star_equal_hand_values():
    # centre degree 3, leaves degree 1: a_cl = 1/4, a_cc = 1/4, a_ll = 3/4.
    weights = metropolis_weights(Network.from_networkx(nx.star_graph(3)))
    np.testing.assert_allclose(weights[0], [0.25, 0.25, 0.25, 0.25], atol=1e-15)
    np.testing.assert_allclose(np.diag(weights)[1:], [0.75, 0.75, 0.75], atol=1e-15)


def test_metropolis_weights_are_doubly_stochastic_on_a_random_graph():
    network = random_connected_network(30, 60, np.random.default_rng(1))
    weights = validate_weight_matrix(metropolis_weights(network), network)
    assert np.max(np.abs(weights.sum(axis=1) - 1)) < 1e-14
    assert weights.min() >= 0


@pytest.mark.parametrize(
    "weights, message",
    [
        (np.array([[0.5, 0.5, 0.0], [0.4, 0.2, 0.4], [0.0, 0.5, 0.5]]), "not symmetric"),
        (np.array([[1.2, -0.2, 0.0], [-0.2, 0.4, 0.8], [0.0, 0.8, 0.2]]), "negative"),
        (np.array([[0.5, 0.4, 0.0], [0.4, 0.2, 0.4], [0.0, 0.4, 0.5]]), "rows must sum to 1"),
        (np.array([[0.5, 0.25, 0.25], [0.25, 0.5, 0.25], [0.25, 0.25, 0.5]]), "not an edge"),
    ],
)
def test_validate_weight_matrix_rejects_violations(weights, message):
    with pytest.raises(InvalidGraphError, match=message):
        validate_weight_matrix(weights, path3())


@pytest.mark.parametrize("name", sorted(SMALL_GRAPHS))
@pytest.mark.parametrize("dim", [1, 2])
def test_paper_matrices_are_kronecker_products_of_graph_matrices(name, dim):
    network = Network.from_networkx(SMALL_GRAPHS[name])
    matrices = paper_matrices(network, dim)
    identity = np.eye(dim)
    degree = np.diag(network.degrees)
    # Derived from L150/L180 with the 2E directed pairs: (A1 - A2) is the signed incidence matrix of
    # the directed pairs, each undirected edge appearing twice, so H_- H_-^T = 2 (D - A) and
    # L_- = (D - A) (x) I_P (the ordinary Laplacian), L_+ = (D + A) (x) I_P (signless), M = D (x) I_P.
    np.testing.assert_allclose(matrices.L_minus, np.kron(network.laplacian, identity), atol=1e-12)
    np.testing.assert_allclose(matrices.L_plus, np.kron(degree + network.adjacency, identity), atol=1e-12)
    np.testing.assert_allclose(matrices.M, np.kron(degree, identity), atol=1e-12)
    np.testing.assert_allclose(matrices.Q @ matrices.Q, matrices.L_minus / 2, atol=1e-12)
    np.testing.assert_allclose(matrices.Q, matrices.Q.T, atol=1e-12)
    assert matrices.A1.shape == (2 * network.num_edges * dim, network.num_agents * dim)
    np.testing.assert_array_equal(matrices.A1.sum(axis=1), 1.0)  # one I_P block per row-block
    assert matrices.A.shape == (4 * network.num_edges * dim, network.num_agents * dim)
    assert matrices.B.shape == (4 * network.num_edges * dim, 2 * network.num_edges * dim)


@pytest.mark.parametrize("name", sorted(SMALL_GRAPHS))
def test_null_space_of_L_minus_and_Q_is_consensus_subspace(name):
    dim = 2
    network = Network.from_networkx(SMALL_GRAPHS[name])
    matrices = paper_matrices(network, dim)
    consensus = np.kron(np.ones((network.num_agents, 1)), np.eye(dim))  # columns 1 (x) e_i
    np.testing.assert_allclose(matrices.L_minus @ consensus, 0, atol=1e-12)
    np.testing.assert_allclose(matrices.Q @ consensus, 0, atol=1e-12)
    # Null(L_-) has dimension P (span{1 (x) e_i}); L180 writes span{1}, exact only for P = 1.
    for matrix in (matrices.L_minus, matrices.Q):
        eigenvalues = np.linalg.eigvalsh(matrix)
        assert np.sum(np.abs(eigenvalues) < 1e-9) == dim


@pytest.mark.parametrize("name", sorted(SMALL_GRAPHS))
def test_phi_min_and_phi_max_are_the_nonzero_extreme_singular_values(name):
    network = Network.from_networkx(SMALL_GRAPHS[name])
    expected_min, expected_max = LAPLACIAN_NONZERO_EXTREMES[name]
    L_minus = paper_matrices(network, 2).L_minus
    assert phi_min(L_minus) == pytest.approx(expected_min, abs=1e-12)
    assert phi_max(L_minus) == pytest.approx(expected_max, abs=1e-12)
    with pytest.raises(InvalidGraphError):
        phi_min(np.zeros((3, 3)))
