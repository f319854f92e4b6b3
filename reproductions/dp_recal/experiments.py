"""DP-RECAL (seeds/001, v1; seeds/000, v0): figures, tables and attack experiments."""

from dpverify.reproductions.dp_recal import attacks, curves, tables, v0

EXPERIMENTS = (list(curves.EXPERIMENTS) + list(tables.EXPERIMENTS) + list(attacks.ATTACK_EXPERIMENTS)
               + list(v0.V0_EXPERIMENTS))
