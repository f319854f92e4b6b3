"""Publish verdicts: `summary.json` (the record), `<paper>.md` and a self-contained `index.html`.

Everything is rendered from the JSON summary, so `dpverify report` re-renders without
recomputing. Figures are PNG files under `figures/`; the HTML embeds them (base64) so it opens
from disk anywhere; the Markdown links them.
"""

from __future__ import annotations

import base64
import html
import io
import json
import math
import re
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from dpverify.reproductions.report.constants import room_constants
from dpverify.theory.audit.accounting import PRIVACY_KEY
from dpverify.theory.claims import FINDING, ClaimResult, Paper, Verdict
from dpverify.theory.robustness import seeds_agreeing, sweep_outcomes

VERDICT_ORDER = [Verdict.REFUTED, Verdict.INCONCLUSIVE, Verdict.NOT_RUN, Verdict.CONFIRMED]
VERDICT_COLOURS = {"confirmed": "#1a7f37", "refuted": "#cf222e", "inconclusive": "#9a6700", "not-run": "#6e7781"}
VERDICT_SYMBOLS = {"confirmed": "✔", "refuted": "✘", "inconclusive": "?", "not-run": "–"}


def jsonable(value: Any) -> Any:
    """numpy scalars/arrays and non-finite floats to plain JSON values."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist())
    if isinstance(value, (np.floating, float)):
        value = float(value)
        return value if math.isfinite(value) else str(value)
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.bool_,)):
        return bool(value)
    if value is None or isinstance(value, (str, int, bool)):
        return value
    return str(value)


def figure_png(figure: Any) -> bytes:
    """A matplotlib Figure as PNG bytes (closed afterwards). No metadata beyond the pixels: the same figure gives
    the same bytes on every run (no matplotlib version, no date), so a rerun changes no file."""
    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110, bbox_inches="tight", metadata={"Software": None})
    plt.close(figure)
    return buffer.getvalue()


def save_figure(figure: Any, path: Path) -> str:
    """Write a figure (a matplotlib Figure, or its PNG bytes from figure_png) as PNG; returns the path relative
    to the report."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(figure if isinstance(figure, bytes) else figure_png(figure))
    return f"{path.parent.name}/{path.name}"


def claim_record(result: ClaimResult, figures_dir: Path) -> dict[str, Any]:
    claim = result.claim
    checks, privacy = [], []
    for check in result.results:
        figure = None
        if check.evidence.figure is not None:
            slug = f"{claim.id}-{check.check}".replace("/", "__").replace(" ", "_")
            figure = save_figure(check.evidence.figure, figures_dir / f"{slug}.png")
        values = dict(check.evidence.values)
        # privacy-table rows (theory/audit/accounting.py) belong to the claim, not to one check's values
        privacy += [{**row, "check": check.check} for row in jsonable(values.pop(PRIVACY_KEY, []))]
        checks.append({"name": check.check, "method": str(check.method), "verdict": str(check.verdict),
                       "summary": check.evidence.summary, "values": jsonable(values),
                       "seconds": round(check.seconds, 3), "figure": figure,
                       "rule": check.rule.as_record() if check.rule is not None else None,
                       "paper": check.paper, "parameters": jsonable(dict(check.parameters))})
        if check.decision_argument:
            checks[-1]["decision_argument"] = check.decision_argument
    record = {"id": claim.id, "kind": claim.kind, "seed_line": claim.seed_line, "title": claim.title,
              "statement": claim.statement, "verdict": str(result.verdict),
              "not_run_reason": claim.not_run_reason if not result.results else "", "checks": checks}
    if (seeds := seeds_agreeing(result)) is not None:    # run under several root seeds (check --seeds)
        record["seeds"] = seeds
    if sweeps := jsonable(sweep_outcomes(result)):        # swept over a default's range (reproduce --sweep)
        record["sweeps"] = sweeps
    if defaults := free_defaults(checks, {s["parameter"] for s in sweeps}):
        record["free_defaults"] = defaults
    if qualification := qualified_verdict(record):
        record["qualification"] = qualification
    if privacy:
        record["privacy"] = privacy
    return record


def deciding_defaults(check: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The free defaults (a range or alternatives) a check read that its decision can depend on: not those its
    declared argument rules out (`decides` false, Check.decision_reads)."""
    return {name: p for name, p in check["parameters"].items()
            if p.get("source") == "default" and ("range" in p or "alternatives" in p) and p.get("decides", True)}


def free_defaults(checks: list[dict[str, Any]], swept: set[str]) -> list[dict[str, Any]]:
    """The free defaults that a claim's checks' decisions read (`deciding_defaults`): "experiment/name", our value,
    the range or alternatives with why, and whether this run swept it."""
    found: dict[str, dict[str, Any]] = {}
    for check in checks:
        for name, p in deciding_defaults(check).items():
            key = "range" if "range" in p else "alternatives"
            found.setdefault(name, {"parameter": name, "value": p["value"], key: p[key],
                                    "range_why": p.get("range_why", ""), "swept": name in swept})
    return list(found.values())


QUALIFIED_SHOWN = 3   # free defaults named in a qualified verdict; the rest are in claims[].free_defaults


def qualified_verdict(claim: dict[str, Any]) -> str:
    """A confirmed or refuted claim decided by checks that read free defaults that were not swept, as it may be
    said: "confirmed at our defaults (X = v, range a..b, not swept)". '' when the verdict does not rest on them:
    a refutation by a check that read none stands whatever we chose."""
    verdict = claim["verdict"]
    if verdict not in ("confirmed", "refuted"):
        return ""
    deciding = [c for c in claim["checks"] if c["verdict"] == verdict]
    unswept = {d["parameter"]: d for d in claim.get("free_defaults", []) if not d["swept"]}
    reads = [[n for n in deciding_defaults(c) if n in unswept] for c in deciding]
    if verdict == "refuted" and not all(reads):
        return ""
    names = list(dict.fromkeys(n for names in reads for n in names))
    if not names:
        return ""

    def spread(d: dict[str, Any]) -> str:
        if "range" in d:
            return f"range {d['range'][0]:g}..{d['range'][1]:g}"
        return "alternatives " + ", ".join(json.dumps(a) for a in d["alternatives"])
    shown = [f"{n} = {json.dumps(unswept[n]['value'])}, {spread(unswept[n])}" for n in names[:QUALIFIED_SHOWN]]
    more = f"; and {len(names) - QUALIFIED_SHOWN} more" if len(names) > QUALIFIED_SHOWN else ""
    return f"{verdict} at our defaults ({'; '.join(shown)}{more}; not swept)"


def _verdict_text(claim: dict[str, Any]) -> str:
    """The claim's verdict as the report shows it: qualified when it rests on defaults not swept, with the sweeps."""
    text = claim.get("qualification") or claim["verdict"]
    sweeps = "; ".join(f"{s['parameter']}: {s['outcome']} (" + ", ".join(
        f"{json.dumps(a['value'])}{' (ours)' if a['ours'] else ''}: {a['verdict']}" for a in s["at"]) + ")"
        for s in claim.get("sweeps", []))
    return text + (f"; swept {sweeps}" if sweeps else "")


def paper_record(paper: Paper, results: list[ClaimResult], figures: list[dict[str, Any]], *, profile: str,
                 figures_dir: Path, provenance: dict[str, Any], partial: bool = False,
                 cpu: dict[str, float] | None = None) -> dict[str, Any]:
    """One paper's record. Nothing in it depends on when or how fast this run went (a rerun from the cache writes
    the same bytes): `seconds` is what its checks took when they were computed and `cpu` ({"experiments": s,
    "checks": s}) the CPU time its experiments' tasks and its checks took when computed (both kept with them in the
    cache); the run's date, wall time and what it computed are the summary's one stamp, `run` (write_summary)."""
    claims = [claim_record(r, figures_dir) for r in results]
    record = {"id": paper.id, "title": paper.title, "seed_file": paper.seed_file, "profile": profile,
              "seconds": round(sum(check["seconds"] for claim in claims for check in claim["checks"]), 1),
              **({"cpu_seconds": {part: round(seconds, 1) for part, seconds in cpu.items()}} if cpu else {}),
              "counts": {}, "claims": claims,
              "figures": jsonable(figures), "constants": jsonable(room_constants(paper.id)),
              "provenance": jsonable(provenance), "partial": partial}
    record["counts"] = verdict_counts(paper_claims(record))   # the paper's tally; findings apart
    if extra := findings(record):
        record["finding_counts"] = verdict_counts(extra)
    return record


def verdict_counts(claims) -> dict[str, int]:
    """How many claims have each verdict, every verdict named (0 where none)."""
    counts = Counter(c["verdict"] for c in claims)
    return {str(v): counts.get(str(v), 0) for v in VERDICT_ORDER}


def paper_claims(record: dict[str, Any]) -> list[dict[str, Any]]:
    """The claims of the paper itself: the paper's tally counts them, the findings beyond them apart."""
    return [c for c in record["claims"] if c["kind"] != FINDING]


def findings(record: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for c in record["claims"] if c["kind"] == FINDING]


FINDINGS_NOTE = ("Statements the paper does not make, checked because a reader would ask (a reading the paper leaves "
                 "open, the privacy of its experiments' noise where it states none). Their verdicts are not in the "
                 "paper's tally above.")


# of summary.json (1.1: optional claims[].seeds; 1.2: optional claims[].privacy, the one stamp `run` on a line of its
# own, papers[].seconds the checks' computing time; 1.3: optional claims[].free_defaults, .qualification, .sweeps;
# 1.4: optional checks[].decision_argument, checks[].parameters[].decides and papers[].finding_counts, the
# verdicts of the claims of kind "finding", which papers[].counts leaves out; 1.5: optional papers[].cpu_seconds,
# the CPU time its experiments' tasks and its checks took when computed, and run.papers, each paper's wall time in
# the run and what it read from the cache, so a report states what its run cost; 1.6: optional
# claims[].seeds.not_repeated, the experiments not re-run under further root seeds (reproduce --seed-cpu-limit));
# reproductions/report/summary.schema.json describes it (bump both together)
SCHEMA_VERSION = "1.6"
SCHEMA_FILE = Path(__file__).with_name("summary.schema.json")


def write_summary(out_dir: Path, record: dict[str, Any], run: dict[str, Any] | None = None) -> Path:
    """Merge one paper's record into OUT/summary.json (other papers' records are kept, in their order), stamped
    `run`: when it was written (UTC) and what the run that wrote it says of itself (what it computed, its wall
    time). The stamp is the one line a rerun from the cache changes."""
    path = out_dir / "summary.json"
    summary = json.loads(path.read_text()) if path.exists() else {}
    stamp = {"generated": datetime.now(timezone.utc).isoformat(timespec="seconds"), **(run or {})}
    summary = {"schema_version": SCHEMA_VERSION, "run": stamp,
               "papers": {**summary.get("papers", {}), record["id"]: record}}
    path.write_text(summary_text(summary))
    return path


def summary_text(summary: dict[str, Any]) -> str:
    """summary.json's text: indented, with the stamp `run` on one line of its own."""
    text = json.dumps({**summary, "run": None}, indent=2)
    return text.replace('\n  "run": null,', '\n  "run": ' + json.dumps(jsonable(summary["run"])) + ",", 1)


CONSTANTS_HEADER = ["constant", "value", "module", "source", "line / why"]
CONSTANTS_NOTE = ("Values the checks use that are not experiment parameters, read from the theory room's source "
                  "with the comment that says where each comes from.")
AUDIT_HEADER = ["claim", "audit", "claimed", "lower bound", "GDP estimate (model-based)", "confidence", "samples/side",
                "verdict"]


def audit_rows(record: dict[str, Any]) -> list[list[str]]:
    """One row per audit of a privacy claim: what was claimed, the lower bound, at what confidence and
    sample size, and the verdict ("not refuted at N samples" when no violation is found)."""
    rows = []
    for claim in record["claims"]:
        for check in claim["checks"]:
            values = check["values"]
            if check["method"] != "audit" or "claim" not in values:
                continue
            bounds = [f"eps >= {values['epsilon_lower_bound']:.3g}"] if "eps" in values["claim"] else []
            if values.get("rho_lower_bound") is not None and "rho" in values["claim"]:
                bounds.append(f"rho >= {values['rho_lower_bound']:.3g}")
            gdp = values.get("gdp_mu_estimate (model-based)")
            verdict = ("REFUTED" if check["verdict"] == "refuted"
                       else f"not refuted at {values['samples_per_side']} samples")
            rows.append([claim["id"], check["name"], values["claim"], "; ".join(bounds),
                         f"mu = {gdp:.3g}" if isinstance(gdp, (int, float)) else "-", f"{values['confidence']:g}",
                         str(values["samples_per_side"]), verdict])
    return rows


PRIVACY_HEADER = ["claim", "setting", "delta", "paper eps", "accountant eps (PLD; RDP)", "ledger eps",
                  "audit lower bound", "paper / accountant", "accountant / audit"]
PRIVACY_NOTE = ("Four epsilons of one guarantee at one delta: as the paper states or derives it; a tight accountant "
                "(dp-accounting PLD, RDP beside it) on the same releases; the harness's privacy ledger (the smaller "
                "of basic composition and the zCDP route); the audit's empirical lower bound. When the sensitivities the "
                "calibration assumes hold, the true eps lies between the audit's bound and the accountant's; 'paper / "
                "accountant' > 1 is looseness of the paper's accounting, 'accountant / audit' > 1 the room the audit "
                "leaves, and < 1 an audit that found more than the accountant allows (the assumed sensitivity does not "
                "hold). n/a says why.")


def privacy_rows(record: dict[str, Any], *, with_paper: bool = False) -> tuple[list[list[str]], list[str]]:
    """The privacy table of a paper's record (claims[].privacy): formatted rows, and one line per row
    saying how each number was obtained (or why it is n/a)."""
    rows, notes = [], []
    for claim in record["claims"]:
        for row in claim.get("privacy", []):
            paper, tight = row["paper_epsilon"], row["accountant_epsilon"]
            ledger, audit = row["ledger_epsilon"], row["audit_lower_bound"]
            label = f"{record['id']}/{claim['id'].split('/', 1)[1]}" if with_paper else claim["id"]
            accountant = _number(tight)
            if tight.get("rdp") is not None:   # PLD with RDP beside it, or RDP alone (PLD not run)
                accountant += (f"; {tight['rdp']:.4g}" if tight["accountant"].startswith("PLD") else " (RDP only)")
            bound = _number(audit) + (f" ({audit['samples_per_side']}/side, {audit['confidence']:g})"
                                      if audit["value"] is not None else "")
            rows.append([label, row["setting"], f"{row['delta']:g}", _number(paper), accountant, _number(ledger), bound,
                         _ratio(paper, tight), _ratio(tight, audit)])
            accountant_how = " ".join(part for part in (tight.get("accountant"), tight["note"]) if part)
            notes.append(f"{label}, {row['setting']}: delta: {row['delta_note']}; paper: {paper['note']}; accountant: "
                         f"{accountant_how}; ledger: {ledger['note']}; audit: {audit['note']}")
    return rows, notes


def _number(cell: dict[str, Any]) -> str:
    return "n/a" if cell["value"] is None else f"{cell['value']:.4g}"


def _ratio(numerator: dict[str, Any], denominator: dict[str, Any]) -> str:
    if numerator["value"] is None or denominator["value"] is None or denominator["value"] <= 0:
        return "n/a"
    return f"{numerator['value'] / denominator['value']:.3g}x"


def _markdown_table(rows: list[list[str]], header: list[str]) -> str:
    def cell(text: str) -> str:
        return str(text).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


TABLE_ROWS_SHOWN = 80   # a figure's summary table in the report; the whole results are in the Parquet file


def _format_cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, (list, dict)):
        return json.dumps(value)
    return "" if value is None or value == "nan" else str(value)


def figure_table(figure: dict[str, Any]) -> tuple[list[str], list[list[str]], int]:
    """(header, formatted rows, rows left out) of a figure's summary table (FigureOutput.table)."""
    records = figure.get("table") or []
    if not records:
        return [], [], 0
    header = list(dict.fromkeys(key for record in records for key in record))  # rows may differ in their keys
    rows = [[_format_cell(record.get(name)) for name in header] for record in records[:TABLE_ROWS_SHOWN]]
    return header, rows, max(0, len(records) - TABLE_ROWS_SHOWN)


def _defaults_used(check: dict[str, Any], width: int = 40) -> str:
    """The harness defaults among the experiment parameters a check read, as `experiment/name` = value."""
    def shown(value: Any) -> str:
        text = json.dumps(value)
        return text if len(text) <= width else text[: width - 3] + "..."
    return "; ".join(f"`{name}` = {shown(p['value'])}" for name, p in (check.get("parameters") or {}).items()
                     if p.get("source") == "default" and p.get("decides", True))


# ----------------------------------------------------------------- what a reader sees first (issue 31 item 7)
DECIDED = ("confirmed", "refuted")
SENTENCE_CHARS = 200   # a claim's one computed sentence (summaries, rows); the whole evidence is one click away
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")   # "0.02", "Fig. 4" and "ref. (24)" end no sentence
_CLAUSE_END = re.compile(r";\s+|:\s+|(?<=[.!?])\s+(?=[A-Z])")
_DECIDES = re.compile(r"\bwould\b|^provide\b")   # "about 92 runs ... would separate it", "provide it with --data-dir"


def opening(text: str, limit: int = SENTENCE_CHARS) -> str:
    """The opening of an evidence line: its first sentences, as many as fit in `limit` characters (the first cut at
    a word, ending in "…", if it alone does not)."""
    first, *others = _SENTENCE_END.split(text.strip())
    for sentence in others:
        if len(first) + 1 + len(sentence) > limit:
            break
        first += " " + sentence
    return first if len(first) <= limit else first[:limit].rsplit(" ", 1)[0] + " …"


def deciding_check(claim: dict[str, Any]) -> dict[str, Any] | None:
    """The check that gives a claim its verdict: the first with the claim's verdict, or, for a claim left
    inconclusive because some of its checks were not run (combine_verdicts), the first not run; None if none ran."""
    return next((check for verdict in (claim["verdict"], "not-run") for check in claim["checks"]
                 if check["verdict"] == verdict), None)


def _deciding_line(claim: dict[str, Any]) -> str:
    check = deciding_check(claim)
    return check["summary"] if check is not None else claim["not_run_reason"]


def claim_sentence(claim: dict[str, Any]) -> str:
    """The claim's computed sentence: the opening of its deciding check's evidence line, or of why it was not run."""
    return opening(_deciding_line(claim))


def what_would_decide(claim: dict[str, Any]) -> str:
    """What the evidence itself says would decide an undecided claim (its first clause saying what would, or how to
    provide missing data), unless claim_sentence says it already; '' when the evidence says nothing (we add none)."""
    clauses = (clause.strip(" ().") for clause in _CLAUSE_END.split(_deciding_line(claim)))
    hint = next((clause for clause in clauses if _DECIDES.search(clause)), "")
    return "" if hint in claim_sentence(claim) else hint


def profile_flag(claim: dict[str, Any], paper_profile: dict[str, str]) -> str:
    """The paper profile's verdict on a claim that this quick report decides otherwise (compare.profile_agreement)."""
    verdict = paper_profile.get(claim["id"])
    if verdict is None:
        return ""
    return f"⚑ the paper profile {'decides this' if verdict in DECIDED else 'leaves this'}: {verdict}"


def side_notes(claim: dict[str, Any], paper_profile: dict[str, str]) -> list[str]:
    """What a claim's verdict says after its qualification: its seeds, the paper profile's verdict where it differs."""
    return [note for note in (seeds_note(claim.get("seeds")), profile_flag(claim, paper_profile)) if note]


def seeds_note(seeds: dict[str, Any] | None) -> str:
    """`3/3 seeds agree`, or that the verdict rests on one root seed because an experiment it reads was too costly to
    repeat (reproduce --seed-cpu-limit); '' for a claim not run under several seeds."""
    if not seeds:
        return ""
    if seeds["count"] == 1:
        return f"one root seed ({', '.join(seeds.get('not_repeated', []))} not repeated: over the CPU limit)"
    return f"{seeds['agreeing']}/{seeds['count']} seeds agree"


def summary_sections(record: dict[str, Any], paper_profile: dict[str, str]) -> list[tuple[str, str, list]]:
    """A paper's first lines: what is wrong in it (its refuted claims), then what could not be decided (inconclusive,
    not-run) and what would decide it where the evidence says; as (kind, title, [(claim, sentence, notes)]).
    Findings beyond the paper's claims are not among them (they have their own section)."""
    claims = paper_claims(record)

    def items(verdicts: tuple[str, ...]) -> list:
        return [(c, claim_sentence(c), [*side_notes(c, paper_profile)] + (
            ["at our defaults, not swept"] if c.get("qualification") else []) + (
            [f"what would decide it: {hint}"] if c["verdict"] != "refuted" and (hint := what_would_decide(c)) else []))
            for c in claims if c["verdict"] in verdicts]
    wrong, undecided = items(("refuted",)), items(("inconclusive", "not-run"))
    return [("refuted", f"What is wrong: {len(wrong)} refuted claim{'s' * (len(wrong) != 1)}", wrong),
            ("undecided", f"Could not be decided: {len(undecided)} claim{'s' * (len(undecided) != 1)}", undecided)]


def findings_line(record: dict[str, Any]) -> str:
    extra = findings(record)
    counts = ", ".join(f"{k}: {v}" for k, v in verdict_counts(extra).items() if v)
    return f"Beyond the paper's claims: {len(extra)} finding(s) ({counts}), in their own section below." if extra else ""


# ----------------------------------------------------------------- times and values as the report shows them
def duration(seconds: float) -> str:
    """9 min 54 s, 1 h 0 min 3 s, 32 s, 0.4 s."""
    if seconds < 10:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    parts = [(hours, "h"), (minutes, "min"), (secs, "s")]
    while parts[0][0] == 0:
        parts.pop(0)
    return " ".join(f"{n} {unit}" for n, unit in parts)


def cost_text(record: dict[str, Any]) -> str:
    """What computing the paper's verdicts cost, as recorded with them (the same on a rerun from the cache; this
    run's wall time is in the stamp). A summary before 1.5 recorded the checks' time alone."""
    cpu = record.get("cpu_seconds")
    if cpu is None:
        return f"checks computed in {record['seconds']} s (wall; the summary records no CPU time)"
    return (f"computing it took {duration(cpu['experiments'] + cpu['checks'])} CPU (experiments "
            f"{duration(cpu['experiments'])}, checks {duration(cpu['checks'])}; the checks {duration(record['seconds'])}"
            " wall)")


def cache_state(run: dict[str, Any], paper: str) -> str:
    """Whether this run computed a paper's results or read them from the cache (stamp `run`, schema 1.5)."""
    tasks, checks = run["tasks_computed"].get(paper, 0), run["checks_computed"].get(paper, 0)
    read = run["papers"][paper]   # what it read from the cache, computed by an earlier run
    if not tasks and not checks:
        return "from the cache"
    if not read["tasks_cached"] and not read["checks_cached"]:
        return "computed now"
    return (f"partly from the cache ({tasks} of {tasks + read['tasks_cached']} tasks and {checks} of "
            f"{checks + read['checks_cached']} checks computed now)")


VALUE_CHARS = 300   # a check's value as the report shows it; the whole value is in summary.json
LIST_SHOWN = 4      # items shown of a long list, with its length (and its range, if numbers)


def brief(value: Any) -> Any:
    """A check's value, short: floats to 4 significant digits, a list longer than 2 * LIST_SHOWN as its first items,
    its length and, for numbers, its min and max."""
    if isinstance(value, float):
        return float(f"{value:.4g}")
    if isinstance(value, dict):
        return {key: brief(item) for key, item in value.items()}
    if not isinstance(value, list) or len(value) <= 2 * LIST_SHOWN:
        return [brief(item) for item in value] if isinstance(value, list) else value
    numbers = [item for item in value if isinstance(item, (int, float)) and not isinstance(item, bool)]
    spread = f", min {min(numbers):.4g}, max {max(numbers):.4g}" if len(numbers) == len(value) else ""
    return [brief(item) for item in value[:LIST_SHOWN]] + [f"... {len(value)} items{spread}"]


def value_text(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(brief(value))
    return text if len(text) <= VALUE_CHARS else text[:VALUE_CHARS] + " ... (all of it in summary.json)"


def embedded_png(png: bytes) -> bytes:
    """A figure as index.html embeds it: in 256 colours (a plot's lines and text need no more; about a third of the
    bytes, so the page stays self-contained and small). The full-colour PNG stays in figures/, which the Markdown
    links. A figure with transparency, or one a palette does not shrink, is embedded as it is."""
    from PIL import Image

    image = Image.open(io.BytesIO(png))
    if image.mode not in ("RGB", "RGBA") or (image.mode == "RGBA" and image.getchannel("A").getextrema() != (255, 255)):
        return png
    buffer = io.BytesIO()
    image.convert("RGB").quantize(256).save(buffer, format="PNG", optimize=True)
    return min(buffer.getvalue(), png, key=len)


# ----------------------------------------------------------------- Markdown
CLAIMS_HEADER = ["verdict", "claim", "line", "statement", "evidence"]
RUN_WHERE_MD = "this run's wall time and what it read from the cache: the stamp `run` of summary.json and index.html"


def _verdict_markdown(claim: dict[str, Any], paper_profile: dict[str, str]) -> str:
    """The verdict first, then its qualifiers: `✘ **refuted** at our defaults (...) (5/5 seeds agree)`."""
    return (f"{VERDICT_SYMBOLS[claim['verdict']]} **{claim['verdict']}**"
            + _verdict_text(claim).removeprefix(claim["verdict"])
            + "".join(f" ({note})" for note in side_notes(claim, paper_profile)))


def _evidence_markdown(claim: dict[str, Any]) -> str:
    """A row's evidence: the opening of the deciding check's line; every check in full under "Claim details"."""
    check = deciding_check(claim)
    if check is None:
        return f"not run: {claim_sentence(claim)}"
    more = len(claim["checks"]) - 1
    return f"{check['name']}: {claim_sentence(claim)}" + (f" (+{more} more in Claim details)" if more else "")


def _claims_markdown(claims: list[dict[str, Any]], paper_profile: dict[str, str]) -> str:
    return _markdown_table([[_verdict_markdown(c, paper_profile), f"`{c['id']}`", c["seed_line"], c["title"],
                             _evidence_markdown(c)] for c in claims], CLAIMS_HEADER)


def _summary_markdown(record: dict[str, Any], paper_profile: dict[str, str]) -> list[str]:
    out = []
    for _, title, items in summary_sections(record, paper_profile):
        out += [f"## {title}", ""]
        out += [f"- {VERDICT_SYMBOLS[c['verdict']]} `{c['id']}` ({c['seed_line']}): {sentence}"
                + (f" ({'; '.join(notes)})" if notes else "") for c, sentence, notes in items] or ["None."]
        out.append("")
    return out + ([findings_line(record), ""] if findings(record) else [])


def render_markdown(record: dict[str, Any], paper_profile: dict[str, str] | None = None) -> str:
    """A paper's Markdown report. `paper_profile`: the paper profile's verdict of each claim it decides otherwise
    than this (quick) report (compare.profile_agreement), flagged in the claim's row."""
    paper_profile = paper_profile or {}
    counts = record["counts"]
    out = [f"# {record['title']}", "",
           f"Paper `{record['seed_file']}` · profile `{record['profile']}` · {cost_text(record)} · {RUN_WHERE_MD}", "",
           "**Verdicts:** " + ", ".join(f"{VERDICT_SYMBOLS[k]} {k}: {v}" for k, v in counts.items()), "",
           *_summary_markdown(record, paper_profile),
           "A refuted claim is a finding with its evidence; `not-run` says why; an audit that finds no "
           "violation says \"not refuted at N samples\", never \"private\". Each row opens the evidence line of the "
           "check that decided it; every check's evidence is under \"Claim details\".", "", "## Claims", "",
           _claims_markdown(paper_claims(record), paper_profile), ""]
    if extra := findings(record):
        out += ["## Findings beyond the paper's claims", "", FINDINGS_NOTE, "",
                "**Verdicts:** " + ", ".join(f"{VERDICT_SYMBOLS[k]} {k}: {v}" for k, v in verdict_counts(extra).items()),
                "", _claims_markdown(extra, paper_profile), ""]
    if audits := audit_rows(record):
        out += ["## Privacy audits", "", "Empirical lower bounds (simultaneous confidence; Clopper-Pearson on a fresh "
                "split) against the claimed guarantee. An audit can refute a claim, never prove it.", "",
                _markdown_table(audits, AUDIT_HEADER), ""]
    privacy, privacy_notes = privacy_rows(record)
    if privacy:
        out += ["## Privacy", "", PRIVACY_NOTE, "", _markdown_table(privacy, PRIVACY_HEADER), "",
                *[f"- {note}" for note in privacy_notes], ""]
    out += ["## Claim details", ""]
    for claim in record["claims"]:
        out += [f"### `{claim['id']}` — {_verdict_text(claim)}", "", f"*{claim['seed_line']}* — {claim['statement']}",
                ""]
        if not claim["checks"]:
            out += [f"Not run: {claim['not_run_reason']}", ""]
        for check in claim["checks"]:
            out += [f"- **{check['name']}** ({check['method']}, {check['seconds']} s): {check['verdict']} — "
                    f"{check['summary']}"]
            if check.get("rule"):
                out.append(f"    - rule `{check['rule']['name']}`: {check['rule']['sentence']}")
            if defaults := _defaults_used(check):
                out.append(f"    - depends on values we chose (defaults, see the parameter tables): {defaults}")
            if check.get("decision_argument"):
                out.append(f"    - its verdict does not depend on the other values it read: {check['decision_argument']}")
            for key, value in check["values"].items():
                out.append(f"    - `{key}` = {value_text(value)}")
            if check["figure"]:
                out.append(f"\n    ![{check['name']}]({check['figure']})")
        out.append("")
    if record["figures"]:
        out += ["## Figures", ""]
    for figure in record["figures"]:
        out += [f"### {figure['id']}: {figure['title']} ({figure['seed_line']})", "",
                f"**What the paper says:** {figure['paper_says']}", "", f"**What our run shows:** {figure['observed']}", ""]
        out += [f"![{figure['id']} {name}]({path})" for name, path in figure["images"].items()] + [""]
        header, table_rows, left_out = figure_table(figure)
        if header:
            out += [_markdown_table(table_rows, header), ""]
            out += [f"({left_out} more rows in the results file)", ""] if left_out else []
        rows = [[p["name"], f"`{p['value']}`", p["source"], p["note"]] for p in figure["parameters"]]
        out += [_markdown_table(rows, ["parameter", "value", "source", "line / why"]), ""]
        out += [f"Results: `{figure['results']}`", ""]
    if record.get("constants"):
        out += ["## Constants of the checks", "", CONSTANTS_NOTE, "",
                _markdown_table([[c["name"], f"`{json.dumps(c['value'])}`", c["module"], c["source"], c["note"]]
                                 for c in record["constants"]], CONSTANTS_HEADER), ""]
    out += ["## Provenance", "", "```json", json.dumps(record["provenance"], indent=2), "```", ""]
    return "\n".join(out)


# ----------------------------------------------------------------- HTML
CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:2rem auto;max-width:1200px;padding:0 1rem;color:#1f2328}
h1{font-size:1.6rem} h2{border-bottom:1px solid #d0d7de;padding-bottom:.3rem;margin-top:2rem}
table{border-collapse:collapse;width:100%;font-size:.9rem;margin:.5rem 0}
th,td{border:1px solid #d0d7de;padding:.35rem .5rem;vertical-align:top;text-align:left}
th{background:#f6f8fa} .badge{color:#fff;border-radius:1em;padding:.1rem .6rem;font-weight:600;white-space:nowrap}
.counts span{margin-right:1rem;font-size:1.05rem} details{margin:.2rem 0} code{font-size:.85rem}
.figure{display:flex;flex-wrap:wrap;gap:1rem;align-items:flex-start} .figure img{max-width:560px;border:1px solid #d0d7de}
.default{background:#fff8c5} .note{color:#57606a;font-size:.9rem}
.summary{background:#f6f8fa;border:1px solid #d0d7de;border-radius:6px;padding:.2rem 1rem;margin:1rem 0}
.summary li{margin:.3rem 0} td.verdict{white-space:normal;min-width:8rem}
"""


def _text(text: str) -> str:
    """Text of an element (no attribute): quotes stay quotes, which JSON values are full of."""
    return html.escape(text, quote=False)


def _badge(verdict: str) -> str:
    return (f'<span class="badge" style="background:{VERDICT_COLOURS[verdict]}">'
            f'{VERDICT_SYMBOLS[verdict]} {html.escape(verdict)}</span>')


def _image(out_dir: Path, relative: str) -> str:
    data = base64.b64encode(embedded_png((out_dir / relative).read_bytes())).decode()
    return f'<img alt="{html.escape(relative)}" src="data:image/png;base64,{data}">'


def _summary_html(record: dict[str, Any], paper_profile: dict[str, str]) -> str:
    """The paper's first lines (summary_sections): one list item per refuted claim, then per undecided one."""
    e = _text
    parts = [f"<section class='summary' id='{e(record['id'])}-summary'>"]
    for kind, title, items in summary_sections(record, paper_profile):
        lines = "".join(f"<li>{_badge(c['verdict'])} <code>{e(c['id'])}</code> ({e(c['seed_line'])}): {e(sentence)}"
                        + (f" <span class='note'>({e('; '.join(notes))})</span>" if notes else "") + "</li>"
                        for c, sentence, notes in items)
        parts.append(f"<h3>{e(title)}</h3>" + (f"<ul class='{kind}'>{lines}</ul>" if items else "<p>None.</p>"))
    if line := findings_line(record):
        parts.append(f"<p class='note'>{e(line)}</p>")
    return "".join(parts) + "</section>"


def _claims_html(claims: list[dict[str, Any]], out_dir: Path, paper_profile: dict[str, str]) -> str:
    """The claims' table, refuted first, the verdict in each row's first cell."""
    order = [str(v) for v in VERDICT_ORDER]
    head = "".join(f"<th>{h}</th>" for h in CLAIMS_HEADER)
    rows = "".join(_claim_row_html(claim, out_dir, paper_profile)
                   for claim in sorted(claims, key=lambda c: order.index(c["verdict"])))
    return f"<table class='claims'><tr>{head}</tr>{rows}</table>"


def _render_paper_html(record: dict[str, Any], out_dir: Path, paper_profile: dict[str, str]) -> str:
    e = html.escape
    parts = [f'<h2 id="{e(record["id"])}">{e(record["title"])}</h2>',
             f'<p class="note">Paper <code>{e(record["seed_file"])}</code> · profile <code>{e(record["profile"])}</code>'
             f' · {e(cost_text(record))} · this run\'s wall time: the stamp at the top</p>',
             '<p class="counts">' + "".join(f"<span>{_badge(k)} {v}</span>" for k, v in record["counts"].items()) + "</p>",
             _summary_html(record, paper_profile), "<h3>Claims</h3>",
             _claims_html(paper_claims(record), out_dir, paper_profile)]
    if extra := findings(record):
        parts.append(f"<h3>Findings beyond the paper's claims</h3><p class='note'>{e(FINDINGS_NOTE)}</p>"
                     '<p class="counts">' + "".join(f"<span>{_badge(k)} {v}</span>"
                                                    for k, v in verdict_counts(extra).items()) + "</p>"
                     + _claims_html(extra, out_dir, paper_profile))
    if audits := audit_rows(record):
        header = "".join(f"<th>{e(h)}</th>" for h in AUDIT_HEADER)
        body = "".join("<tr>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>" for row in audits)
        parts.append(f"<h3>Privacy audits</h3><p class='note'>Empirical lower bounds against the claimed guarantee; "
                     f"an audit can refute a claim, never prove it.</p><table><tr>{header}</tr>{body}</table>")
    if privacy := _privacy_html(privacy_rows(record)):
        parts.append(f"<h3>Privacy</h3>{privacy}")
    for figure in record["figures"]:
        parts.append(f"<h3>{e(figure['id'])}: {e(figure['title'])} <span class='note'>({e(figure['seed_line'])})</span></h3>")
        parts.append(f"<p><b>What the paper says:</b> {e(figure['paper_says'])}</p>"
                     f"<p><b>What our run shows:</b> {e(figure['observed'])}</p>")
        parts.append('<div class="figure">' + "".join(_image(out_dir, p) for p in figure["images"].values()) + "</div>")
        header, table_rows, left_out = figure_table(figure)
        if header:
            head = "".join(f"<th>{e(h)}</th>" for h in header)
            body = "".join("<tr>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>" for row in table_rows)
            more = f"<p class='note'>{left_out} more rows in the results file</p>" if left_out else ""
            parts.append(f"<div style='overflow-x:auto'><table><tr>{head}</tr>{body}</table></div>{more}")
        rows = "".join(f"<tr class='{'default' if p['source'] == 'default' else ''}'><td>{e(p['name'])}</td>"
                       f"<td><code>{e(json.dumps(p['value']))}</code></td><td>{e(p['source'])}</td><td>{e(p['note'])}</td></tr>"
                       for p in figure["parameters"])
        parts.append(f"<details><summary>parameters (defaults highlighted)</summary><table><tr><th>parameter</th>"
                     f"<th>value</th><th>source</th><th>line / why</th></tr>{rows}</table></details>"
                     f"<p class='note'>results: <code>{e(figure['results'])}</code></p>")
    if record.get("constants"):
        rows = "".join(f"<tr class='{'default' if c['source'] == 'default' else ''}'>" + "".join(
            f"<td>{e(cell)}</td>" for cell in (c["name"], json.dumps(c["value"]), c["module"], c["source"], c["note"]))
            + "</tr>" for c in record["constants"])
        head = "".join(f"<th>{e(h)}</th>" for h in CONSTANTS_HEADER)
        parts.append(f"<details><summary>constants of the checks (defaults highlighted)</summary><p class='note'>"
                     f"{e(CONSTANTS_NOTE)}</p><table><tr>{head}</tr>{rows}</table></details>")
    parts.append(f"<details><summary>provenance</summary><pre>{e(json.dumps(record['provenance'], indent=2))}</pre></details>")
    return "\n".join(parts)


def _check_html(check: dict[str, Any], out_dir: Path) -> str:
    """One check's evidence, collapsed: its verdict, name and opening on the line; the whole evidence line,
    its rule, the defaults it read, its values (long lists summarised: brief) and its figure one click away."""
    e = _text
    head = opening(check["summary"])
    notes = [e(check["summary"])] if check["summary"] != head else []
    if check.get("rule"):
        notes.append(f"<i>rule {e(check['rule']['name'])}:</i> {e(check['rule']['sentence'])}")
    if defaults := _defaults_used(check):
        notes.append(f"<i>depends on values we chose:</i> {e(defaults)}")
    if check.get("decision_argument"):
        notes.append(f"<i>does not depend on the other values it read:</i> {e(check['decision_argument'])}")
    values = "".join(f"<tr><td><code>{e(k)}</code></td><td><code>{e(value_text(v))}</code></td></tr>"
                     for k, v in check["values"].items())
    return (f"<details class='evidence'><summary>{_badge(check['verdict'])} <b>{e(check['name'])}</b> "
            f"({e(check['method'])}): {e(head)}</summary>" + "".join(f"<p>{note}</p>" for note in notes)
            + (f"<table>{values}</table>" if values else "")
            + (_image(out_dir, check["figure"]) if check["figure"] else "") + "</details>")


def _claim_row_html(claim: dict[str, Any], out_dir: Path, paper_profile: dict[str, str]) -> str:
    """One claim's row: the verdict first, its qualifiers after it, then the claim, and each check's evidence
    collapsed."""
    e = _text
    notes = [n for n in (_verdict_text(claim).removeprefix(claim["verdict"]).strip(), *side_notes(claim, paper_profile))
             if n]
    evidence = "".join(_check_html(check, out_dir) for check in claim["checks"]) or (
        f"<i>not run:</i> {e(claim['not_run_reason'])}")
    return (f"<tr class='claim'><td class='verdict'>{_badge(claim['verdict'])}"
            + (f"<br><span class='note'>{e('; '.join(notes))}</span>" if notes else "")
            + f"</td><td><code>{e(claim['id'])}</code></td><td>{e(claim['seed_line'])}</td>"
            f"<td><b>{e(claim['title'])}</b><br><span class='note'>{e(claim['statement'])}</span></td>"
            f"<td>{evidence}</td></tr>")


def _privacy_html(table: tuple[list[list[str]], list[str]]) -> str:
    rows, notes = table
    if not rows:
        return ""
    e = html.escape
    header = "".join(f"<th>{e(h)}</th>" for h in PRIVACY_HEADER)
    body = "".join("<tr>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>" for row in rows)
    how = "".join(f"<li>{e(note)}</li>" for note in notes)
    return (f"<p class='note'>{e(PRIVACY_NOTE)}</p><table><tr>{header}</tr>{body}</table>"
            f"<details><summary>how each number was obtained</summary><ul class='note'>{how}</ul></details>")


def _agreement_html(agreement: Any) -> str:
    """The section "Quick vs paper profile" (compare.ProfileAgreement): the agreement, then each claim whose verdicts
    differ."""
    e = html.escape
    share = f" ({agreement.same / agreement.decided:.0%})" if agreement.decided else ""
    rows = "".join(f"<tr><td><code>{e(d.claim)}</code></td><td>{_badge(d.before)}</td><td>{_badge(d.after)}</td></tr>"
                   for d in agreement.differing)
    return (f"<h2 id='profiles'>Quick vs paper profile</h2><p>Of the {agreement.decided} claims the paper profile's "
            f"report (<code>{e(agreement.source)}</code>) decides (confirmed or refuted), this quick report decides "
            f"<b>{agreement.same} the same way{share}</b>. {len(agreement.differing)} of the {agreement.compared} claims "
            "both reports hold have different verdicts; each is flagged in its row.</p>"
            f"<table class='profiles'><tr><th>claim</th><th>quick</th><th>paper profile</th></tr>{rows}</table>")


def render_html(summary: dict[str, Any], out_dir: Path, agreement: Any = None) -> str:
    """index.html: the stamp, each paper's tally, the quick-vs-paper agreement (`agreement`, a
    compare.ProfileAgreement, for a quick report), the privacy table of all papers, then each paper."""
    papers = summary["papers"].values()
    paper_profile = agreement.paper_verdicts() if agreement is not None else {}
    tables = [privacy_rows(p, with_paper=True) for p in papers]
    privacy = _privacy_html(([r for rows, _ in tables for r in rows], [n for _, notes in tables for n in notes]))
    privacy = f"<h2 id='privacy'>Privacy, all papers</h2>{privacy}" if privacy else ""
    toc = "".join(f'<li><a href="#{html.escape(p["id"])}">{html.escape(p["title"])}</a> — '
                  + " ".join(f"{_badge(k)} {v}" for k, v in p["counts"].items())
                  + (f"; findings beyond its claims: {sum(p['finding_counts'].values())}" if "finding_counts" in p
                     else "") + "</li>" for p in papers)
    profiles = _agreement_html(agreement) if agreement is not None else ""
    body = "\n".join(_render_paper_html(p, out_dir, paper_profile) for p in papers)
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>dpverify report</title><style>{CSS}</style>"
            f"</head><body><h1>dpverify — verification report</h1><p class='note'>One verdict per claim: "
            f"confirmed, refuted (with the counterexample or the significant violation), inconclusive (with why), "
            f"not-run (with why). Each paper opens with what is wrong in it and what could not be decided; every "
            f"check's evidence is one click away. Figures are embedded in 256 colours; the full PNGs are in "
            f"figures/.</p>\n{_stamp_line(summary)}\n<ul>{toc}</ul>{profiles}{privacy}{body}</body></html>")


def _stamp_line(summary: dict[str, Any]) -> str:
    """The report's one stamp (summary.json's `run`) on a line of its own: from 1.5 in words (the run's wall time,
    per paper its wall time, its CPU time as computed, and whether it was computed now or read from the cache);
    before, its facts as recorded; summaries before 1.2 stamped each paper."""
    run = summary.get("run") or {"generated": ", ".join(p.get("generated", "?") for p in summary["papers"].values())}
    if "papers" in run:
        papers = summary["papers"]
        facts = [f"this run: {duration(run['wall_seconds'])} wall"] + [
            f"{paper}: {duration(times['wall_seconds'])} wall, "
            + (f"{duration(sum(papers[paper]['cpu_seconds'].values()))} CPU as computed, "
               if "cpu_seconds" in papers.get(paper, {}) else "") + cache_state(run, paper)
            for paper, times in run["papers"].items()]
    else:
        facts = [f"{name.replace('_', ' ')}: {json.dumps(value)}" for name, value in run.items() if name != "generated"]
    return (f"<p class='note'>generated {html.escape(run['generated'])}{'; ' if facts else ''}"
            f"{html.escape('; '.join(facts))}</p>")


PAPER_REPORT = Path("paper") / "summary.json"   # a quick report's paper-profile report, beside it (README)


def render_reports(out_dir: Path, paper_report: Path | None = None) -> list[Path]:
    """(Re-)render index.html and one Markdown file per paper from OUT/summary.json. A quick report is compared with
    the paper-profile report at `paper_report` (default OUT/paper/summary.json, if there is one): index.html gets the
    agreement and the claims whose verdicts differ, each flagged in its row."""
    summary_path = out_dir / "summary.json"
    if not summary_path.exists():
        from dpverify.algorithms.core.errors import DpverifyError

        raise DpverifyError(f"no {summary_path} to render; run `dpverify reproduce --out {out_dir}` or "
                            f"`dpverify check --out {out_dir}` first")
    from dpverify.reproductions.report.compare import load_summary, quick_against_paper

    summary = load_summary(summary_path)      # a damaged file is a one-line error, not a traceback
    agreement = quick_against_paper(summary, paper_report or out_dir / PAPER_REPORT, required=paper_report is not None,
                                    relative_to=out_dir)
    paper_profile = agreement.paper_verdicts() if agreement is not None else {}
    written = []
    for record in summary["papers"].values():
        path = out_dir / f"{record['id'].replace('-', '_')}.md"
        path.write_text(render_markdown(record, paper_profile))
        written.append(path)
    index = out_dir / "index.html"
    index.write_text(render_html(summary, out_dir, agreement))
    return [index, *written, summary_path]
