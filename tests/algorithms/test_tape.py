"""The noise tape hands out one fixed stream per distribution, whatever the split of the draws."""

import numpy as np
import pytest

from dpverify.algorithms.core.errors import InvalidParameterError
from dpverify.algorithms.core.tape import MirroredTape, NoiseTape


def test_the_same_draws_whatever_the_split():
    batched = NoiseTape(5).laplace(0.0, 1.0, size=(3, 6, 2))            # a batched code: one call per round
    looped = NoiseTape(5)
    per_agent = np.array([[looped.laplace(0.0, 1.0, size=2) for _ in range(6)] for _ in range(3)])
    np.testing.assert_array_equal(batched, per_agent)
    assert looped.drawn == {"laplace": 36, "normal": 0}


def test_scale_and_location_apply_to_the_standard_draws():
    standard = NoiseTape(1).laplace(size=4)
    np.testing.assert_array_equal(NoiseTape(1).laplace(2.0, 3.0, size=4), 2.0 + 3.0 * standard)
    np.testing.assert_array_equal(NoiseTape(1).laplace(0.0, [1.0, 2.0]), standard[:2] * [1.0, 2.0])
    assert isinstance(NoiseTape(1).normal(), float)


def test_streams_are_independent_and_seeded():
    tape = NoiseTape(9)
    first = tape.laplace(size=3)
    tape.normal(size=100)                                        # Gaussian draws never shift the Laplace stream
    fresh = NoiseTape(9)
    np.testing.assert_array_equal(np.concatenate([first, tape.laplace(size=3)]), fresh.laplace(size=6))
    assert not np.array_equal(NoiseTape(10).laplace(size=6), fresh.laplace(size=6))
    np.testing.assert_array_equal(NoiseTape(3).standard_normal(5), NoiseTape(3).normal(0.0, 1.0, 5))


def test_the_standard_laplace_law():
    """Kolmogorov-Smirnov against the standard Laplace, level 0.001 on a fixed seed."""
    import scipy.stats

    assert scipy.stats.kstest(NoiseTape(0).laplace(size=20_000), "laplace").pvalue > 0.001
    with pytest.raises(InvalidParameterError):
        NoiseTape(0).laplace(0.0, -1.0)


def test_a_tapes_position_is_plain_data_and_restores_where_its_copy_left_off():
    """What a worker sends back for the harness's tape (isolation._state): no Generator objects, and a fresh tape of
    the same seed that restores it draws on exactly as the copy would (also a mirrored tape's pending blocks)."""
    for make in (lambda: NoiseTape(5), lambda: MirroredTape(5, [1.0, 2.0, 2.0])):
        worker, here, straight = make(), make(), make()
        worker.normal(0, 1, size=(2, 3)), worker.laplace(0, 2, size=4), worker.normal(0, 1, size=2)
        straight.normal(0, 1, size=(2, 3)), straight.laplace(0, 2, size=4), straight.normal(0, 1, size=2)
        position = worker.position()
        assert all(isinstance(state, dict) for state in position["_generators"].values())
        here.restore(position)
        assert np.array_equal(here.normal(0, 1, size=5), straight.normal(0, 1, size=5))
        assert np.array_equal(here.laplace(0, 1, size=3), straight.laplace(0, 1, size=3))
        assert here.drawn == straight.drawn
