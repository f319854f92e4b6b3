"""DPDO-NC (seeds/002): the algorithm as printed, its baselines and its implementation contract.
Imports `dpverify.algorithms.core` and this room only."""
