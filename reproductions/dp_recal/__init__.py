"""DP-RECAL (seeds/001 (v1), seeds/000 (v0)): `experiments.py` (one experiment per figure or table, parameters in the
TOML files here) and `bench.py`. Imports the floors below and this room."""
