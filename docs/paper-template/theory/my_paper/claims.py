"""My Paper (seeds/NNN): its claims in the paper's order, each wired to its checks and their rules.
Line numbers are those of seeds/NNN_xxxxxxxx.txt."""

from __future__ import annotations

from dpverify.theory import rules
from dpverify.theory.claims import Check, Claim, Method, Paper
from dpverify.theory.my_paper import checks

PAPER_ID = "my-paper"   # the room's name with '-' for '_'


def claim(id_: str, kind: str, line: str, title: str, statement: str, *checks_: Check, not_run: str = "") -> Claim:
    return Claim(f"{PAPER_ID}/{id_}", kind, line, title, statement, tuple(checks_), not_run)


CLAIMS = (
    claim("lemma-1", "lemma", "L10", "Averaging preserves the mean",
          "With a doubly stochastic W the network average is invariant.",
          Check("drift of the average", Method.NUMERICAL, checks.average_is_preserved,
                rule=rules.within_tolerance(1e-12, relative=False))),
    claim("theorem-1", "theorem", "L20", "Released noise is zero-mean",
          "Every released message is the state plus zero-mean Gaussian noise.",
          Check("mean of the released noise", Method.STATISTICAL, checks.released_noise_is_unbiased,
                rule=rules.equivalence(0.05))),
    claim("figure-1", "experiment", "L30", "The consensus error decays",
          "Fig. 1: the consensus error decreases over the iterations.",
          Check("last vs first error", Method.STATISTICAL, checks.figure_1_error_decays, rule=rules.exact(),
                needs=("figure-1",))),
)

PAPER = Paper(PAPER_ID, "My Paper: noisy average consensus (template)", "seeds/NNN_xxxxxxxx.txt", CLAIMS)
