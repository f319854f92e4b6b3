"""The algorithms DP-RECAL compares against (seeds/001 Sec. VII): DP-EXTRA, DP-NIDS, the DP-ADMM
variants, DP-MRADMM, DP-RWADMM and (v0) DP-IC-ADMM; `comparison` is their registry."""
