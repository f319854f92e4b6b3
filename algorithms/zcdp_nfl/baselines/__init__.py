"""The algorithms zCDP-NFL compares against (seeds/004 Sec. 5): P-ADMM and subgradient NFL."""
