"""Property tests (hypothesis) of the validators: every invalid input raises the specific error,
every valid one is accepted unchanged."""

import math

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpverify.algorithms.core.errors import (
    InvalidDataError,
    InvalidGraphError,
    InvalidParameterError,
)
from dpverify.algorithms.core.network import (
    Network,
    metropolis_weights,
    validate_weight_matrix,
)
from dpverify.algorithms.core.problems import LocalData, Problem
from dpverify.algorithms.zcdp_nfl.algorithm import (
    ClassicalGaussianSchedule,
    StepSchedule,
    ZcdpNflParams,
    ZcdpSchedule,
)

outside_unit = st.one_of(st.floats(max_value=0.0), st.floats(min_value=1.0), st.just(math.nan))
non_positive = st.one_of(st.floats(max_value=0.0), st.just(math.nan), st.just(-math.inf))


@st.composite
def random_graphs(draw):
    nodes = draw(st.integers(2, 9))
    pairs = [(i, j) for i in range(nodes) for j in range(i + 1, nodes)]
    edges = draw(st.lists(st.sampled_from(pairs), unique=True, max_size=len(pairs)))
    graph = nx.Graph()
    graph.add_nodes_from(range(nodes))
    graph.add_edges_from(edges)
    return graph


@settings(max_examples=200, deadline=None)
@given(random_graphs())
def test_network_accepts_exactly_the_connected_graphs(graph):
    if nx.is_connected(graph):
        network = Network.from_networkx(graph)
        weights = validate_weight_matrix(metropolis_weights(network), network)
        np.testing.assert_allclose(weights.sum(axis=0), 1.0, atol=1e-12)
        np.testing.assert_allclose(weights.sum(axis=1), 1.0, atol=1e-12)
    else:
        with pytest.raises(InvalidGraphError, match="disconnected"):
            Network.from_networkx(graph)


@settings(max_examples=100, deadline=None)
@given(st.integers(3, 7), st.floats(0.01, 0.3))
def test_wrongly_weighted_matrix_is_rejected(nodes, perturbation):
    network = Network.from_networkx(nx.path_graph(nodes))
    weights = metropolis_weights(network)
    weights[0, 0] += perturbation  # row 0 no longer sums to 1
    with pytest.raises(InvalidGraphError):
        validate_weight_matrix(weights, network)


@given(outside_unit)
def test_tau_outside_unit_interval_rejected(tau):
    with pytest.raises(InvalidParameterError, match="tau"):
        ZcdpSchedule(1e-3, tau)


@given(non_positive)
def test_non_positive_budgets_and_penalties_rejected(value):
    with pytest.raises(InvalidParameterError):
        ZcdpSchedule(value, 0.99)
    with pytest.raises(InvalidParameterError):
        ClassicalGaussianSchedule(value, 1e-3, 0.99, 200)
    with pytest.raises(InvalidParameterError):
        Problem("squared", "l2", value)
    with pytest.raises(InvalidParameterError):
        ZcdpNflParams(rho=value, step=StepSchedule(1.0), c1=1.0, noise=ZcdpSchedule(1e-3, 0.99))
    with pytest.raises(InvalidParameterError):
        StepSchedule(value)


@given(outside_unit)
def test_delta_outside_unit_interval_rejected(delta):
    with pytest.raises(InvalidParameterError, match="delta"):
        ClassicalGaussianSchedule(1.0, delta, 0.99, 200)


@settings(max_examples=50, deadline=None)
@given(st.integers(1, 4), st.integers(1, 6), st.integers(1, 4), st.sampled_from([math.nan, math.inf, -math.inf]),
       st.data())
def test_non_finite_data_rejected(agents, samples, dim, bad, data):
    features = np.ones((agents, samples, dim))
    targets = np.ones((agents, samples))
    where = data.draw(st.booleans())
    (features if where else targets).flat[0] = bad
    with pytest.raises(InvalidDataError, match="finite|NaN"):
        LocalData(features, targets)


@given(st.integers(1, 4), st.integers(1, 6), st.integers(1, 4), st.integers(1, 3))
def test_mismatched_dimensions_rejected(agents, samples, dim, extra):
    with pytest.raises(InvalidDataError):
        LocalData(np.ones((agents, samples, dim)), np.ones((agents, samples + extra)))
    with pytest.raises(InvalidDataError):
        Problem("squared", "l2", 1.0).objective(np.ones((agents, dim + extra)),
                                                 LocalData(np.ones((agents, samples, dim)), np.ones((agents, samples))))
