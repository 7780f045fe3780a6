"""The cross-machine-class tolerances (suite/results/tolerances.yaml), from replicate reports.

Each report in benchmarks/tolerances/ is one `posbench replicate --json` run: a sample of the
published snapshot re-run on one machine class. This script turns them into the table that
`verify`, `replicate` and the boards read (suite.results.tolerances.measure: per kind of figure,
twice the largest difference seen between classes, rounded up; per board, on which classes its
headline held).

    # on the machine the report was made on: file it, naming that machine's class
    .venv/bin/posbench replicate --sample 20 --json /tmp/report.json
    .venv/bin/python benchmarks/measure_tolerances.py add /tmp/report.json
    # then, anywhere: rewrite the table from every filed report
    .venv/bin/python benchmarks/measure_tolerances.py
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from suite.core import machine, numerics  # noqa: E402
from suite.results.snapshot_files import RUNS, read_records  # noqa: E402
from suite.results.tolerances import measure  # noqa: E402

REPORTS = ROOT / "benchmarks" / "tolerances"
TABLE = ROOT / "suite" / "results" / "tolerances.yaml"
HEADER = ("# Written by benchmarks/measure_tolerances.py from the replicate reports in benchmarks/tolerances/;\n"
          "# not edited by hand (docs/concepts/reproducibility.md reads it).\n")


def file_report(path: Path, snapshot: Path, cut: bool = False) -> Path:
    """Copy a replicate report into benchmarks/tolerances/, naming this machine's class where the
    report does not, and each piece's recorded class from the snapshot's records. A report of a
    cut of the snapshot (``cut``) keeps its figures but not its headlines: a cut's boards are not
    the published ones."""
    report = json.loads(path.read_text())
    if cut:
        report["headlines"] = []
    report.setdefault("machine", machine.label(numerics.measured()))
    recorded = {r.run_id: r.provenance.numerics for r in read_records(snapshot / RUNS, "training_run")}
    for piece in report["pieces"]:
        piece.setdefault("recorded_class", machine.label(recorded.get(piece["run_id"])))
        for figure in piece["figures"]:  # a report made before a figure's kind named its task
            if " " not in figure["kind"]:
                what = figure["what"]
                figure["kind"] = what.rsplit(": ", 1)[1] if ": " in what else f"{piece['task']} {figure['kind']}"
    name = re.sub(r"[^a-z0-9]+", "-", report["machine"].lower()).strip("-")[:80]
    REPORTS.mkdir(exist_ok=True)
    target = REPORTS / f"{name}-{path.stem}.json"
    target.write_text(json.dumps(report, indent=1, sort_keys=True) + "\n")
    return target


def table() -> dict:
    return measure([json.loads(p.read_text()) for p in sorted(REPORTS.glob("*.json"))])


def write_table() -> None:
    TABLE.write_text(HEADER + yaml.safe_dump(table(), sort_keys=True, width=120, allow_unicode=True))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command")
    add = sub.add_parser("add", help="file a replicate --json report made on this machine")
    add.add_argument("report", type=Path)
    add.add_argument("--snapshot", type=Path, default=ROOT / "leaderboard")
    add.add_argument("--cut", action="store_true", help="the report re-ran a cut of the snapshot: keep no headline")
    args = parser.parse_args()
    if args.command == "add":
        print(f"filed {file_report(args.report, args.snapshot, args.cut).relative_to(ROOT)}")
    write_table()
    print(f"wrote {TABLE.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
