"""My Paper (seeds/NNN): the algorithm as printed, its baselines and its implementation contract.
Imports `dpverify.algorithms.core` and this room only."""
