"""Shared by every paper: networks and mixing matrices, noise mechanisms and the privacy ledger,
problems (losses, regularizers), mirror maps and projections, synthetic data, validation, errors,
and reference mechanisms with known privacy for validating the auditor. Imports nothing of dpverify
but itself."""
