"""DP-RECAL (seeds/001 (v1), seeds/000 (v0)): the algorithm as printed, its baselines and its implementation contract.
Imports `dpverify.algorithms.core` and this room only."""
