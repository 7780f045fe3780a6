"""The cross-machine-class tolerances (suite.results.tolerances): measured from replicate reports,
checked by simulation against differences of known size, and the shipped table is what its
script makes of the committed reports."""

from __future__ import annotations

import json
import random

import yaml

from suite.results import tolerances
from tests.conftest import REPO

HERE, ELSEWHERE = "CPU A (family 1)", "CPU B (generation not recorded)"


def report(machine: str, pieces: list[tuple[str, list[tuple[str, float | None, float | None]]]],
           headlines=()) -> dict:
    return {"machine": machine,
            "pieces": [{"run_id": f"r{i}", "recorded_class": cls,
                        "figures": [{"kind": k, "recorded": a, "rerun": b} for k, a, b in figures]}
                       for i, (cls, figures) in enumerate(pieces)],
            "headlines": [{"board": b, "published": p, "rerun": r} for b, p, r in headlines]}


def test_round_up_keeps_one_significant_figure_and_never_rounds_down():
    assert tolerances.round_up(3.2e-6) == 4e-6
    assert tolerances.round_up(0.07) == 0.07 and tolerances.round_up(0.14) == 0.2
    assert tolerances.round_up(0.0) == 0.0


def test_a_simulated_spread_is_bounded_by_twice_its_largest_difference():
    """Differences drawn with a known bound: the table's largest is the largest drawn, its tolerance
    at least twice that, and a same-class piece (which must be identical) is not counted."""
    rng = random.Random(0)
    drawn = [rng.uniform(-1e-5, 1e-5) for _ in range(200)]
    figures = ([("lm bpb", 3.0, 3.0 + d) for d in drawn] + [("code bpb", 2.0, 2.0 + d / 10) for d in drawn]
               + [("copy acc", 0.5, 0.5)] + [("copy acc", None, None)] + [("flip_flop acc", 0.6, 0.5)])
    table = tolerances.measure([report(HERE, [(ELSEWHERE, figures), (HERE, [("lm bpb", 1.0, 2.0)])])])
    largest = max(abs(d) for d in drawn)
    lm = table["kinds"]["lm bpb"]
    assert lm["largest"] == float(f"{largest:.3g}") and lm["tolerance"] >= 2 * largest
    assert lm["figures"] == 200 and lm["moved"] == 200
    assert table["kinds"]["code bpb"]["largest"] == float(f"{largest / 10:.3g}")
    assert table["kinds"]["bpb"]["largest"] == lm["largest"]  # the metric's own entry: the largest of its tasks
    # compared and never seen to move: an entry of its own, tolerance 0 (identical), though its metric
    # moved on another task (flip-flop's 0.1, which stands for a task no sample compared)
    assert table["kinds"]["copy acc"] == {"tolerance": 0.0, "largest": 0.0, "figures": 1, "moved": 0}
    parsed = tolerances.parse(table)
    assert parsed.allowed("copy acc") == 0.0 and parsed.allowed("lm bpb") == lm["tolerance"]
    assert parsed.allowed("parity acc") == table["kinds"]["acc"]["tolerance"] == 0.2
    assert parsed.allowed("passkey bpb") == table["kinds"]["bpb"]["tolerance"]  # a task no sample re-ran


def test_headlines_are_told_per_machine_class():
    table = tolerances.measure([
        report(HERE, [], [("flip", "A leads", "A and B could be first"), ("lm", "C leads", "C leads")]),
        report(ELSEWHERE, [], [("flip", "A leads", "A leads")])])
    assert table["headlines"] == {"flip": {ELSEWHERE: "holds", HERE: "changed to: A and B could be first"},
                                  "lm": {HERE: "holds"}}


def test_a_headline_holds_when_only_its_quoted_figures_moved():
    """A re-run that moves a lead by a thousandth of a bit per byte keeps the claim; another leader,
    another count of rows that could be first or another confirmation is another claim."""
    published = ("At 16x: ALiBi, ahead of every other entry (paired over seeds, Holm-corrected p < 0.05; "
                 "confirmed on seeds 3-5). Its lead over NoPE: 1.300 bpb at 16x, 0.583 at 1x (45% of it already "
                 "there within the training length).")
    moved = published.replace("1.300", "1.301").replace("0.583", "0.582").replace("45%", "44%")
    assert tolerances.same_claim(published, published) and tolerances.same_claim(published, moved)
    for other in (published.replace("ALiBi", "NoPE"), published.replace("seeds 3-5", "seeds 3-6"),
                  published.replace("confirmed", "not confirmed"), published.replace("p < 0.05", "p < 0.1"), None):
        assert not tolerances.same_claim(published, other)
    assert tolerances.same_claim(None, None)
    table = tolerances.measure([report(HERE, [], [("lm", published, moved), ("lm-2", published, published[:-1])])])
    assert table["headlines"] == {"lm": {HERE: "holds"}, "lm-2": {HERE: f"changed to: {published[:-1]}"}}


def test_the_shipped_table_is_what_the_committed_reports_give():
    reports = [json.loads(p.read_text()) for p in sorted((REPO / "benchmarks" / "tolerances").glob("*.json"))]
    shipped = yaml.safe_load((REPO / "suite" / "results" / "tolerances.yaml").read_text())
    assert shipped == tolerances.measure(reports)


def test_the_reproducibility_page_shows_the_shipped_table():
    shipped = yaml.safe_load((REPO / "suite" / "results" / "tolerances.yaml").read_text())
    page = (REPO / "docs" / "concepts" / "reproducibility.md").read_text()
    assert tolerances.markdown(shipped) in page
    assert tolerances.headline_markdown(shipped) in page
