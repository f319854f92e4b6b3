"""Wang-Başar (seeds/003): `claims.py` lists the paper's claims in the paper's order; the other
modules are their checks. Imports the algorithms floor, the shared theory modules and this room."""
