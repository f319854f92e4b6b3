"""DP-RECAL (seeds/001, v1; seeds/000, v0): figures, tables and attack experiments."""

EXPERIMENTS: list = []
