"""theory/robustness.py: a check's verdict under several root seeds, with known answers (agree, flip, not-run,
symbolic checks run once), and the claim-level record the report keeps."""

from dpverify.theory import rules
from dpverify.theory.claims import Check, Claim, Measurement, Method, Verdict, evaluate
from dpverify.theory.execution import CheckContext
from dpverify.theory.robustness import across_seeds, randomized, seeds_agreeing


def _claim(statistical) -> Claim:
    symbolic = Check("algebra", Method.SYMBOLIC, lambda context: Measurement("identity", {"holds": True}),
                     rule=rules.exact())
    drawn = Check("draws", Method.STATISTICAL, statistical, rule=rules.exact())
    return Claim("toy/claim", "lemma", "L1", "toy", "toy", (symbolic, drawn))


def _run(claim: Claim, seeds: list[int]):
    first = evaluate(claim, CheckContext(root_seed=seeds[0]))
    return across_seeds(seeds, first, [evaluate(randomized(claim), CheckContext(root_seed=s)) for s in seeds[1:]])


def test_agreeing_seeds_keep_the_verdict_and_a_flip_is_inconclusive():
    stable = _run(_claim(lambda context: Measurement("stable", {"holds": True})), [1, 2, 3])
    assert stable.verdict == Verdict.CONFIRMED
    assert stable.results[1].evidence.summary == "stable (the same verdict under 3 root seeds)"
    assert seeds_agreeing(stable) == {"count": 3, "agreeing": 3}
    flips = _run(_claim(lambda context: Measurement(f"seed {context.root_seed}", {"holds": context.root_seed != 2})),
                 [1, 2, 3])
    assert flips.verdict == Verdict.INCONCLUSIVE
    assert flips.results[1].evidence.summary.startswith(
        "The verdict flips across root seeds (1: confirmed, 2: refuted, 3: confirmed): inconclusive; ")
    assert flips.results[1].evidence.values["seeds"] == {"root_seeds": [1, 2, 3],
                                                          "verdicts": ["confirmed", "refuted", "confirmed"],
                                                          "agreeing": 2}
    assert seeds_agreeing(flips) == {"count": 3, "agreeing": 2}
    assert flips.results[0].evidence.summary == "identity"          # the symbolic check ran once, untouched


def test_only_the_randomized_checks_run_again():
    claim = _claim(lambda context: Measurement("x", {"holds": True}))
    assert [c.name for c in randomized(claim).checks] == ["draws"]
    symbolic_only = Claim("toy/s", "lemma", "L1", "t", "t", claim.checks[:1])
    assert randomized(symbolic_only) is None
