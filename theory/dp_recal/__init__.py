"""DP-RECAL (seeds/001 (v1), seeds/000 (v0)): `claims.py` lists the paper's claims in the paper's order; the other
modules are their checks. Imports the algorithms floor, the shared theory modules and this room."""
