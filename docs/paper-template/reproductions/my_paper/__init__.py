"""My Paper (seeds/NNN): `experiments.py` (one experiment per figure or table, parameters in the
TOML files here). Imports the floors below and this room."""
