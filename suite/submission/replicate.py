"""Re-running a sample of the published snapshot: ``posbench replicate``.

A benchmark's conclusions are worth what they are worth when someone else runs it. This
takes a stratified sample of the snapshot's training runs, re-trains each with the numerics
its record names and re-runs its evaluations (``posbench verify`` in a process of its own,
suite.submission.verify), and reports per piece whether every figure came back **identical**
(bit for bit), **within tolerance**, or **different**. Then it puts the re-run figures in the
published ones' place and says, board by board, whether each headline still holds.

The sample is stratified: the snapshot's runs are grouped by (grid, task, encoding as
trained); the strata are taken in turn across grids, and within a grid across tasks, so that
twenty pieces touch every grid and task before any repeats. Within a stratum the piece is
drawn with ``seed`` (or, with ``cheapest``, the one whose training and its ancestors' took the
least recorded time: CI's sample).

Every run may be sampled (``--cpu any``, the default), and each piece is judged by its machine
class (suite.core.machine): on the record's own class every figure should come back bit for
bit; on another class, or one the record does not fully name (every record made before
2026-11-27), each kind of figure within its measured cross-class tolerance
(suite/results/tolerances.yaml). ``--cpu this`` samples only the runs of this machine's class.
"""

from __future__ import annotations

import dataclasses
import json
import os
import random
import subprocess
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from suite.core import machine
from suite.core.numerics import measured
from suite.results.records import read_record, scan, write_record
from suite.results.rows import MetricRow
from suite.specs import Project
from suite.submission.verify import DIFFERENT, IDENTICAL, WITHIN, numerics_of

FAILED = "could not be re-run"


@dataclass(frozen=True)
class Piece:
    """One sampled training run of the snapshot, with its evaluations."""

    run_id: str
    grid: str
    task: str
    encoding: str
    label: str
    evaluations: int
    legacy: bool  # made before records named their numerics
    recorded_class: str = ""  # the machine class its record names (suite.core.machine.label)


@dataclass
class Outcome:
    piece: Piece
    verdict: str  # IDENTICAL, WITHIN, DIFFERENT or FAILED
    compared: int = 0
    identical: int = 0
    mismatches: int = 0
    numerics_differ: list[str] = field(default_factory=list)
    reruns: dict[str, list[dict]] = field(default_factory=dict)
    detail: str = ""
    machine_class: str = ""  # how the record's class compares with this machine's (ClassMatch.describe)
    figures: list[dict] = field(default_factory=list)  # verify's figure by figure (Verification.figures)


@dataclass
class Replication:
    outcomes: list[Outcome]
    headlines: list[tuple[str, str, str | None]]  # (board id, published headline, re-run headline)
    machine: str = ""  # the machine class the pieces were re-run on (suite.core.machine.label)
    sensitive: set[str] = field(default_factory=set)  # boards flagged arithmetic-sensitive

    def stated(self, board: str) -> bool:
        """Whether a change of the board's headline here is what the board already says: it did not
        hold on this machine class, or the board is arithmetic-sensitive and no sample re-ran it here."""
        from suite.results import tolerances

        state = tolerances.published().headlines.get(board, {}).get(self.machine)
        return state not in (None, "holds") or (state is None and board in self.sensitive)

    @property
    def headlines_changed(self) -> list[tuple[str, str, str | None]]:
        """The headlines whose claim changed (suite.results.tolerances.same_claim: a lead quoted a
        thousandth of a bit per byte away is the same claim)."""
        from suite.results.tolerances import same_claim

        return [h for h in self.headlines if not same_claim(h[1], h[2])]

    def count(self, verdict: str) -> int:
        return sum(o.verdict == verdict for o in self.outcomes)

    def as_json(self) -> dict:
        """What ``replicate --json`` writes: each piece with its figures, and each headline."""
        pieces = [{**dataclasses.asdict(o.piece), "verdict": o.verdict, "compared": o.compared,
                   "identical": o.identical, "numerics_differ": o.numerics_differ, "detail": o.detail,
                   "machine_class": o.machine_class, "figures": o.figures} for o in self.outcomes]
        return {"machine": self.machine, "pieces": pieces,
                "headlines": [{"board": b, "published": before, "rerun": after} for b, before, after in self.headlines]}


def grids_of_runs(snapshot_grids: list[str], project: Project, records: Project | None = None) -> dict[str, list[str]]:
    """run_id -> the snapshot's grids (by name, from ``grids/<name>.yaml``) that plan it, in name order.
    The names come from the snapshot: each is a name (SNAPSHOT.json's check, again here) and its
    file the project's own, reached through no link, for planning a grid imports what it names.
    A tuned grid's runs after its sweep are planned at the rates its sweep records in ``records``
    (the snapshot unpacked) chose, as ``posbench run`` planned them: without it a tuned grid plans
    its sweeps alone, and its other seeds' runs would belong to no grid (never sampled)."""
    from suite.core.boundary.names import check_name
    from suite.core.boundary.paths import own_path
    from suite.plan.grid import load_plan
    from suite.execution.tuned import sweep_chooser

    out: dict[str, list[str]] = defaultdict(list)
    for name in sorted(snapshot_grids):
        check_name(name, "a grid the snapshot names")
        path = own_path(project.root, project.root / "grids" / f"{name}.yaml")  # a link: OutsideProject, refused
        if not path.is_file():
            continue
        _, plan = load_plan(path, project, tuned=sweep_chooser(records) if records is not None else None)
        for run in plan.runs:
            out[run.run_id].append(name)
    return out


def sample(scratch: Project, grid_of: dict[str, list[str]], n: int, seed: int = 0, cheapest: bool = False,
           grids: set[str] | None = None, here: dict | None = None) -> list[Piece]:
    """``n`` pieces of the done training runs in ``scratch`` (those of the machine class of
    ``here``, a :func:`suite.core.numerics.measured`, when given), stratified (module docstring)."""
    runs = {r.run_id: r for r in scan(scratch.runs, "training_run").records
            if r.status == "done" and on_this_kind_of_device(r)}
    evals = defaultdict(int)
    for e in scan(scratch.evals, "evaluation").records:
        if e.status == "done":
            evals[e.run_id] += 1
    strata: dict[str, dict[str, dict[str, list]]] = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    for run_id, record in sorted(runs.items()):
        # a run several grids plan belongs to the first of them that is asked for
        grid = next((g for g in grid_of.get(run_id, ["?"]) if grids is None or g in grids), None)
        if grid is not None and (here is None or machine.compare(record.provenance.numerics, here).same):
            strata[grid][record.task][record.encoding].append(record)
    rng = random.Random(seed)
    # the strata in turn: across grids, within a grid across tasks, then encodings
    per_grid = {g: _interleave([[(g, t, e) for e in sorted(encs)] for t, encs in sorted(tasks.items())])
                for g, tasks in sorted(strata.items())}
    order = _interleave(list(per_grid.values()))
    pieces = []
    for grid, task, encoding in order[:n]:
        candidates = strata[grid][task][encoding]
        record = (min(candidates, key=lambda r: (_cost(r, runs), r.run_id)) if cheapest
                  else rng.choice(candidates))
        pieces.append(Piece(record.run_id, grid, task, encoding, f"{encoding}/{record.size}/{task}/seed{record.seed}",
                            evals[record.run_id], record.provenance.numerics is None,
                            machine.label(record.provenance.numerics)))
    return pieces


def on_this_kind_of_device(record) -> bool:
    """Whether a training record can be re-run here: trained on a CPU and this machine has no GPU,
    or on a GPU and it has one (a GPU's run re-trained on a CPU would take hours and compare two
    device classes: suite.submission.verify refuses the same)."""
    import torch

    from suite.submission.verify import device_kind

    return device_kind(record.provenance.device or "cpu") == ("cuda" if torch.cuda.is_available() else "cpu")


def _interleave(lists: list[list]) -> list:
    out, i = [], 0
    while any(i < len(x) for x in lists):
        out += [x[i] for x in lists if i < len(x)]
        i += 1
    return out


def _cost(record, runs: dict) -> float:
    """Recorded training time of a run and of the ancestors verify re-trains first."""
    total, lineage = record.provenance.train_wall_s or record.provenance.wall_s or 0.0, record.lineage
    while lineage and lineage.get("parent_run_id") in runs:
        parent = runs[lineage["parent_run_id"]]
        total += parent.provenance.train_wall_s or parent.provenance.wall_s or 0.0
        lineage = parent.lineage
    return total


def replicate_piece(piece: Piece, scratch: Project, evaluations: bool = True) -> Outcome:
    """``posbench verify`` of the piece, in a process with the record's numerics."""
    wanted = numerics_of(read_record(scratch.runs / f"{piece.run_id}.json", "training_run"))
    with tempfile.TemporaryDirectory(prefix="posbench-replicate-") as tmp:
        out = Path(tmp) / "verify.json"
        command = [sys.executable, "-m", "suite.cli.main", "--root", str(scratch.root), "verify", piece.run_id,
                   "--json", str(out)] + ([] if evaluations else ["--no-evals"])
        done = subprocess.run(command, env={**os.environ, **wanted.variables(), "TQDM_DISABLE": "1"},
                              capture_output=True, text=True)
        if not out.is_file():
            tail = (done.stdout + done.stderr).strip().splitlines()[-3:]
            return Outcome(piece, FAILED, detail=" | ".join(tail))
        result = json.loads(out.read_text())
    return Outcome(piece, result["verdict"], result["compared"], result["identical"], result["mismatches"],
                   result["numerics_differ"], result["reruns"],
                   "; ".join(line for line in result["lines"] if line.startswith("MISMATCH"))[:500],
                   result.get("machine_class", ""), result.get("figures", []))


def headlines(project: Project) -> tuple[dict[str, str | None], set[str]]:
    """Board id -> its headline, for the database of ``project`` as it is; and the boards flagged
    arithmetic-sensitive (suite.report.board_arithmetic)."""
    from suite.report.board_arithmetic import is_sensitive
    from suite.report.leaderboard import build
    from suite.results import tolerances
    from suite.results.store import connect_readonly

    with connect_readonly(project.database) as con:
        boards = build(con).all
    table = tolerances.published()
    return {b.id: b.headline for b in boards if b.headline}, {b.id for b in boards if is_sensitive(b, table)}


def with_reruns(scratch: Project, outcomes: list[Outcome]) -> None:
    """Put each re-run's metric rows in place of the published record's (same evaluation ids),
    in its record and in the database (the other records are as they were: not read again)."""
    from suite.results.store import replace_metrics

    changed = []
    for outcome in outcomes:
        for eval_id, rows in outcome.reruns.items():
            record = read_record(scratch.evals / f"{eval_id}.json", "evaluation")
            changed.append(dataclasses.replace(record, metrics=tuple(MetricRow(**row) for row in rows)))
            write_record(changed[-1], scratch.evals)
    replace_metrics(scratch.database, changed)


def replicate(folder: Path, project: Project, n: int, seed: int = 0, cheapest: bool = False,
              grids: set[str] | None = None, this_cpu: bool = False, log=print) -> Replication:
    """Sample, re-run and compare (module docstring); nothing under ``project`` changes."""

    from suite.results.snapshot import read_info, unpack
    from suite.results.store import ingest

    info = read_info(folder)
    unknown = sorted((grids or set()) - set(info.get("grids", [])))
    if unknown:
        raise ValueError(f"{folder.name}/ holds no grid {', '.join(unknown)}; it holds {', '.join(info.get('grids', []))}")
    with tempfile.TemporaryDirectory(prefix="posbench-replicate-") as tmp:
        scratch = Project(Path(tmp))
        unpack(folder, scratch, durable=False)  # a scratch folder, gone when this returns
        this_machine = measured()
        here = this_machine if this_cpu else None
        grid_of = grids_of_runs(info.get("grids", []), project, records=scratch)
        pieces = sample(scratch, grid_of, n, seed, cheapest, grids, here)
        if not pieces and here is not None and sample(scratch, grid_of, 1, seed, cheapest, grids):
            named = sorted({machine.label(r.provenance.numerics) for r in scan(scratch.runs, "training_run").records})
            raise ValueError(f"no training run of {folder.name}/ was computed on this machine's class "
                             f"({machine.label(here)}); its records name {', '.join(named)}. Without `--cpu this` "
                             "they are re-run here and compared within the measured cross-class tolerances")
        if not pieces and any(not on_this_kind_of_device(r) for r in scan(scratch.runs, "training_run").records):
            raise ValueError(f"the training runs of {folder.name}/ that could be sampled trained on another kind of "
                             "device (a GPU) than this machine's: replicate them on a machine with one")
        if not pieces:  # nothing re-run is nothing replicated, never a success
            raise ValueError(f"no training run of {folder.name}/ is planned by its grids as they are now "
                             "(a recipe changed since it was published?): nothing to re-run")
        elsewhere = sum(not on_this_kind_of_device(r) for r in scan(scratch.runs, "training_run").records)
        log(f"{len(pieces)} piece(s) of {folder.name}/, stratified over grids, tasks and encodings"
            + (f", of the runs computed on this machine's class ({machine.label(here)})" if here else "")
            + (f"; {elsewhere} run(s) trained on another kind of device (a GPU) are left to a machine with one"
               if elsewhere else ""))
        outcomes = []
        for i, piece in enumerate(pieces, 1):
            outcome = replicate_piece(piece, scratch)
            outcomes.append(outcome)
            log(f"{i}/{len(pieces)} {piece.grid}: {piece.label} ({piece.run_id}): {describe(outcome)}")
        ingest(scratch.runs, scratch.evals, scratch.database)
        before, sensitive = headlines(scratch)
        with_reruns(scratch, outcomes)
        after, _ = headlines(scratch)
    boards = sorted(before.keys() | after.keys())
    return Replication(outcomes, [(b, before.get(b), after.get(b)) for b in boards], machine.label(this_machine),
                       sensitive)


def describe(outcome: Outcome) -> str:
    if outcome.verdict == FAILED:
        return f"{FAILED}: {outcome.detail}"
    text = {IDENTICAL: "bit-identical", WITHIN: "within tolerance", DIFFERENT: "DIFFERENT"}[outcome.verdict]
    text += f" ({outcome.identical} of {outcome.compared} figures identical"
    text += ", made before records named their numerics)" if outcome.piece.legacy else ")"
    if outcome.machine_class and not outcome.machine_class.startswith("the same"):
        text += f"; {outcome.machine_class}: compared within the measured cross-class tolerances"
    elif outcome.numerics_differ:
        text += "; numerics differ: " + "; ".join(outcome.numerics_differ)
    return text + (f"; {outcome.detail}" if outcome.verdict == DIFFERENT and outcome.detail else "")
