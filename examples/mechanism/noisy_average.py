"""A mechanism of your own, audited by dpverify:

    dpverify audit-mechanism examples/mechanism/noisy_average.py:noisy_average --epsilon 1 \
        --neighbours examples/mechanism/noisy_average.py:NEIGHBOURS

`noisy_average(dataset, n, rng)` returns n independent releases of the average of `dataset` (values in [0, 1])
with Laplace noise calibrated to epsilon = 1: the average moves by at most 1/len(dataset) when one value
changes. `buggy_average` divides the sensitivity by the wrong count and is caught.
"""

import numpy as np

EPSILON = 1.0
NEIGHBOURS = (np.array([0.0] * 10), np.array([0.0] * 9 + [1.0]))   # one value changed


def noisy_average(dataset, n, rng):
    sensitivity = 1.0 / len(dataset)
    return dataset.mean() + rng.laplace(0.0, sensitivity / EPSILON, size=n)


def buggy_average(dataset, n, rng):
    sensitivity = 1.0 / (10 * len(dataset))          # the bug: the noise is ten times too small
    return dataset.mean() + rng.laplace(0.0, sensitivity / EPSILON, size=n)
