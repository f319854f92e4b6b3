"""DP-RECAL (seeds/001, v1; seeds/000, v0): figures, tables and attack experiments."""

from reproductions.dp_recal import attacks, curves, tables

EXPERIMENTS = list(curves.EXPERIMENTS) + list(tables.EXPERIMENTS) + list(attacks.ATTACK_EXPERIMENTS)
