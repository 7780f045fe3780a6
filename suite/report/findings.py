"""Published findings re-tested on the boards: found on one half of the seeds, confirmed on the other.

A finding (``findings.yaml`` beside this module) is a paper's claim that one row beats another:
"ALiBi extrapolates better than RoPE" (Press et al. 2022). It is tested on every ranked board of
its kind (and task, when given) that holds both rows, at the column the board is ranked by
(its longest length), with the paired t-test of :mod:`.stats` (per-seed differences, the
sampling floor of an accuracy):

* **found**: on the discovery seeds (the first half of the board's seeds, sorted), the claimed
  row is better, significant after Holm's correction over every (finding, board) test of the
  site (Holm 1979);
* **confirmed**: the found claim holds again on the confirmation seeds alone (the rest),
  significant after Holm's correction over the found claims; "not confirmed" otherwise;
* **not found**: the discovery seeds do not show it ("contradicted" when they show the
  opposite, significantly); **too few seeds**: under 4 seeds (2 per half).

Data-splitting keeps the confirmation honest (Cox 1975): the seeds that confirm a claim played
no part in finding it. The whole-seed mean difference and its 95% interval are shown beside.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import yaml
from pydantic import BaseModel, ConfigDict, Field

from suite.report import ranking
from suite.report.stats import ALPHA, Comparison, paired_comparison

FINDINGS = Path(__file__).with_name("findings.yaml")
MIN_SEEDS = 4  # two per half


class Finding(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    paper: str
    claim: str
    kind: str  # a board kind (suite.report.board_kinds)
    task: str | None = None  # only that task's boards
    better: str  # encoding names, as the rows of a board
    worse: str


def load_findings(path: Path = FINDINGS) -> list[Finding]:
    data = yaml.safe_load(path.read_text()) or {}
    return [Finding.model_validate(item) for item in data.get("findings", [])]


@dataclass
class Check:
    """One finding on one board."""

    finding: Finding
    board_id: str
    board_title: str
    column: str  # the board's ranked column
    label: str  # its header ("bpb 16x")
    lower_is_better: bool
    whole: Comparison  # better - worse over every shared seed
    discovery: tuple[int, ...]
    confirmation: tuple[int, ...]
    discovery_p: float | None = None  # Holm-adjusted
    confirmation_p: float | None = None  # Holm-adjusted over the found claims
    status: str = "too few seeds"

    @property
    def gain(self) -> float | None:
        """How much better the claimed row is (positive: as claimed), in the board's unit."""
        d = self.whole.mean_difference
        return None if d is None else (-d if self.lower_is_better else d)


def _one_sided(per_seed_a: dict, per_seed_b: dict, floors_a: dict, floors_b: dict, seeds, lower: bool,
               text_a: dict | None = None, text_b: dict | None = None) -> tuple[float, float]:
    """(p two-sided, signed gain) of a - b on ``seeds`` alone (the paired test of :mod:`.stats`);
    gain > 0 when a is better; nan for fewer than two shared seeds."""
    chosen = set(seeds)
    c = paired_comparison({s: v for s, v in per_seed_a.items() if s in chosen},
                          {s: v for s, v in per_seed_b.items() if s in chosen}, floors_a, floors_b,
                          text_a=text_a, text_b=text_b)
    if c.p_value is None:
        return math.nan, math.nan
    return c.p_value, -c.mean_difference if lower else c.mean_difference


def check_findings(boards, findings: list[Finding] | None = None) -> list[Check]:
    """Every finding on every board it applies to (module docstring); boards as the site builds them."""
    findings = load_findings() if findings is None else findings
    checks: list[Check] = []
    raw_discovery: list[tuple[float, float]] = []
    for finding in findings:
        for board in boards:
            if board.kind != finding.kind or not board.ranked_by or (finding.task and board.task != finding.task):
                continue
            rows = {e.encoding: e for e in board.entries}
            if finding.better not in rows or finding.worse not in rows:
                continue
            column = board.ranked_by
            a, b = rows[finding.better], rows[finding.worse]
            pa, pb = a.per_seed.get(column, {}), b.per_seed.get(column, {})
            fa, fb = a.floors.get(column, {}), b.floors.get(column, {})
            ta, tb = a.text.get(column), b.text.get(column)
            seeds = sorted(s for s in pa.keys() & pb.keys() if pa[s] is not None and pb[s] is not None)
            half = math.ceil(len(seeds) / 2)
            test = Check(finding, board.id, board.title, column, board.column(column).label, bool(board.lower_is_better),
                        paired_comparison(pa, pb, fa, fb, text_a=ta, text_b=tb), tuple(seeds[:half]), tuple(seeds[half:]))
            checks.append(test)
            raw_discovery.append(_one_sided(pa, pb, fa, fb, test.discovery, test.lower_is_better, ta, tb)
                                 if len(seeds) >= MIN_SEEDS else (math.nan, math.nan))
    _decide(checks, boards, raw_discovery)
    return checks


def _decide(tests: list[Check], boards, raw_discovery: list[tuple[float, float]]) -> None:
    """Holm over the discovery tests, then over the confirmation tests of the found claims."""
    p = np.array([r[0] for r in raw_discovery], dtype=float)
    tested = ~np.isnan(p)
    adjusted = np.full(p.shape, np.nan)
    if tested.any():
        adjusted[tested] = ranking.holm(p[tested])
    by_id = {b.id: b for b in boards}
    found = []
    for k, test in enumerate(tests):
        if not tested[k]:
            continue
        test.discovery_p = float(adjusted[k])
        gain = raw_discovery[k][1]
        if adjusted[k] < ALPHA and gain > 0:
            found.append(k)
        else:
            test.status = "contradicted" if adjusted[k] < ALPHA else "not found"
    confirm_p = []
    for k in found:
        test = tests[k]
        rows = {e.encoding: e for e in by_id[test.board_id].entries}
        a, b = rows[test.finding.better], rows[test.finding.worse]
        pc, gain = _one_sided(a.per_seed[test.column], b.per_seed[test.column], a.floors.get(test.column, {}),
                              b.floors.get(test.column, {}), test.confirmation, test.lower_is_better,
                              a.text.get(test.column), b.text.get(test.column))
        confirm_p.append(pc if gain > 0 else 1.0)  # a difference the other way confirms nothing
    if found:
        adjusted_c = ranking.holm(np.nan_to_num(np.array(confirm_p), nan=1.0))
        for k, pc in zip(found, adjusted_c):
            tests[k].confirmation_p = float(pc)
            tests[k].status = "confirmed" if pc < ALPHA else "not confirmed"
