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


def test_a_check_whose_experiment_a_further_seed_did_not_reproduce_is_decided_on_the_seeds_that_ran_it():
    """reproduce re-runs under further seeds only the experiments below its CPU limit: a check that needs another one
    is not-run under those seeds, which is not a flip; it is decided on the first seed, and says so."""
    def reads_figure(context):
        return Measurement(f"seed {context.root_seed}", {"holds": context.root_seed != 2})

    drawn = Check("draws", Method.STATISTICAL, reads_figure, rule=rules.exact(), needs=("figure-9",))
    claim = Claim("toy/claim", "lemma", "L1", "toy", "toy", (drawn,))
    first = evaluate(claim, CheckContext(root_seed=1, experiments={"figure-9": None}))
    others = [evaluate(claim, CheckContext(root_seed=s, experiments={} if s == 2 else {"figure-9": None}))
              for s in (2, 3)]
    combined = across_seeds([1, 2, 3], first, others)
    assert combined.verdict == Verdict.CONFIRMED          # seed 2 would refute, but it did not reproduce figure-9
    assert combined.results[0].evidence.values["seeds"] == {"root_seeds": [1, 3], "verdicts": ["confirmed", "confirmed"],
                                                            "agreeing": 2, "not_repeated": ["figure-9"]}
    assert seeds_agreeing(combined) == {"count": 2, "agreeing": 2, "not_repeated": ["figure-9"]}
    alone = across_seeds([1, 2], first, others[:1])
    assert alone.results[0].evidence.summary == ("seed 1 (one root seed: figure-9 not reproduced under the further "
                                                 "seeds)")
    assert seeds_agreeing(alone) == {"count": 1, "agreeing": 1, "not_repeated": ["figure-9"]}
