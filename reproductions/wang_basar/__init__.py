"""Wang-Başar (seeds/003): `experiments.py` (one experiment per figure or table, parameters in the
TOML files here) and `bench.py`. Imports the floors below and this room."""
