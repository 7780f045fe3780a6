"""How far a figure moves between machine classes: measured, stated per kind of figure, and read
by ``verify``/``replicate`` (a re-run on another class is compared within it) and by the boards (a
kind that moves more than a board's interval is flagged there as arithmetic-sensitive).

The table (``tolerances.yaml`` beside this module) is written by
``benchmarks/measure_tolerances.py`` from ``posbench replicate --json`` reports, each a sample of
the published snapshot re-run on one machine class, never by hand. A kind's tolerance is twice
the largest difference seen across classes, rounded up to one significant figure: a sample sees
the largest difference of *its* pieces, and the next sample's may be somewhat larger.

A kind is a task's metric (``flip_flop acc``, ``lm bpb``, ``lm final_train_loss``): a flip-flop
accuracy moves by hundredths where a passkey accuracy may not move at all. Each metric also has
an entry of its own (``acc``), the largest over the tasks measured, which stands for a task whose
figures no sample has re-run yet. A kind re-run and never seen to differ has an entry of its own
with a tolerance of 0 (``glue/order accuracy``), and must come back identical: its metric's entry
stands only for kinds no sample has compared.
"""

from __future__ import annotations

import functools
import math
import re
from collections import defaultdict
from dataclasses import dataclass, field
from importlib import resources

import yaml

SAFETY = 2.0  # the stated tolerance over the largest difference seen


@dataclass(frozen=True)
class KindTolerance:
    tolerance: float  # the absolute difference allowed between machine classes
    largest: float  # the largest seen
    figures: int  # figures of this kind compared across classes
    moved: int  # of which not bit-identical


@dataclass(frozen=True)
class Tolerances:
    kinds: dict[str, KindTolerance] = field(default_factory=dict)
    # board id -> machine class label -> "holds", or what the headline became on that class
    headlines: dict[str, dict[str, str]] = field(default_factory=dict)
    samples: list[dict] = field(default_factory=list)  # each report's re-run class, recorded classes, pieces

    def entry(self, kind: str | None) -> KindTolerance | None:
        """The kind's own entry (``flip_flop acc``), a tolerance of 0 where it never moved, else its
        metric's (``acc``: a kind no sample compared), else None."""
        kind = kind or ""
        return self.kinds[kind] if kind in self.kinds else self.kinds.get(kind.rsplit(" ", 1)[-1])

    def allowed(self, kind: str | None) -> float:
        entry = self.entry(kind)
        return 0.0 if entry is None else entry.tolerance


def round_up(value: float) -> float:
    """``value`` rounded up to one significant figure (3.2e-6 -> 4e-6)."""
    if value <= 0:
        return 0.0
    scale = 10 ** math.floor(math.log10(value))
    return float(f"{math.ceil(value / scale - 1e-9) * scale:.1g}")


# A headline's figures: its leads in bits per byte (1.300) and shares (45%). Counts of rows, seed
# ranges and the test's level (p < 0.05) are part of what it claims.
_QUOTED_FIGURE = re.compile(r"(?<!< )(?<![\d.])(?:\d+(?:\.\d+)?%|\d+\.\d+)")


def same_claim(published: str | None, rerun: str | None) -> bool:
    """Whether two headlines of a board claim the same: the same text once the figures it quotes
    are set aside. A re-run on another machine class moves a lead by a thousandth of a bit per byte
    ("1.300 bpb" -> "1.301 bpb") without moving who leads or whether it is significant; that
    headline holds. Another leader, another count of rows that could be first, or another
    confirmation verdict is another claim."""
    if published is None or rerun is None:
        return published == rerun
    return _QUOTED_FIGURE.sub("#", published) == _QUOTED_FIGURE.sub("#", rerun)


def measure(reports: list[dict]) -> dict:
    """The table (as ``tolerances.yaml`` holds it) from ``replicate --json`` reports, each with
    ``machine`` (the re-run's class label) added, and each piece's ``recorded_class`` label. Only
    pieces re-run on another class than their record's count: a same-class piece must be
    identical and says nothing of other classes."""
    largest: dict[str, float] = defaultdict(float)
    figures: dict[str, int] = defaultdict(int)
    moved: dict[str, int] = defaultdict(int)
    headlines: dict[str, dict[str, str]] = defaultdict(dict)
    samples = []
    for report in reports:
        cross = [p for p in report["pieces"] if p.get("recorded_class") != report["machine"]]
        samples.append({"rerun_class": report["machine"], "pieces": len(report["pieces"]),
                        "recorded_classes": sorted({p.get("recorded_class", "?") for p in report["pieces"]})})
        for piece in cross:
            for figure in piece["figures"]:
                recorded, rerun = figure["recorded"], figure["rerun"]
                if recorded is None or rerun is None:
                    continue  # not applicable on both (identical) or on one: no distance to state
                kind = figure["kind"]
                for key in {kind, kind.rsplit(" ", 1)[-1]}:  # the task's metric, and the metric's own entry
                    figures[key] += 1
                    moved[key] += recorded != rerun
                    largest[key] = max(largest[key], abs(recorded - rerun))
        for h in report["headlines"]:
            headlines[h["board"]][report["machine"]] = ("holds" if same_claim(h["published"], h["rerun"])
                                                        else f"changed to: {h['rerun'] or 'no headline'}")
    kinds = {kind: {"tolerance": round_up(SAFETY * largest[kind]), "largest": float(f"{largest[kind]:.3g}"),
                    "figures": figures[kind], "moved": moved[kind]}
             for kind in sorted(figures)}  # a kind compared that never moved: tolerance 0, identical
    return {"kinds": kinds, "headlines": {b: dict(sorted(c.items())) for b, c in sorted(headlines.items())},
            "samples": samples}


def markdown(data: dict) -> str:
    """The table as the reproducibility page shows it (docs/concepts/reproducibility.md; a test
    checks the page against the shipped table)."""
    lines = ["| kind of figure | compared across classes | not bit-identical | largest difference | tolerance |",
             "|---|---|---|---|---|"]
    for kind, e in sorted((data.get("kinds") or {}).items()):
        lines.append(f"| `{kind}` | {e['figures']} | {e['moved']} | {e['largest']:.3g} | {e['tolerance']:.2g} |")
    return "\n".join(lines)


def headline_markdown(data: dict) -> str:
    """Each re-checked board's headline and, per machine class, whether it held (the page's list)."""
    return "\n".join(f"- `{board}`: " + "; ".join(f"on {cls}: {state}" for cls, state in classes.items())
                     for board, classes in sorted((data.get("headlines") or {}).items()))


def parse(data: dict) -> Tolerances:
    return Tolerances({kind: KindTolerance(float(e["tolerance"]), float(e["largest"]), int(e["figures"]),
                                           int(e["moved"])) for kind, e in (data.get("kinds") or {}).items()},
                      {b: dict(c) for b, c in (data.get("headlines") or {}).items()}, list(data.get("samples") or []))


@functools.lru_cache(maxsize=1)
def published() -> Tolerances:
    """The measured table that ships with the suite."""
    return parse(yaml.safe_load(resources.files("suite.results").joinpath("tolerances.yaml").read_text()) or {})


__all__ = ["KindTolerance", "Tolerances", "headline_markdown", "markdown", "measure", "parse", "published", "round_up"]
