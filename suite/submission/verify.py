"""Re-running a training-run record: ``posbench verify RECORD``.

The run is rebuilt from the record alone (``TrainingRun.from_dict(record["run"])``,
whose content must still hash to the record's ``run_id``), trained again with
``suite.training.fit.fit`` into a temporary folder, and its final training loss compared with
the recorded one. Every ``done`` evaluation record of that run in ``results/evals`` is
then run again on the fresh weights with ``suite.execution.runner.evaluate`` (into a temporary
project, so nothing under ``results/`` changes) and each metric compared.

The re-run computes with the numerics the record names (threads, ATen's SIMD level, MKL's
branch: suite.core.numerics); the command starts a process with them when this one has
others (:func:`numerics_of`), and says which settings or libraries still differ (a CPU
without the recorded SIMD level, another torch).

Each figure is **identical** (bit for bit), **within tolerance**, or a **mismatch**:

* CPU, the record's machine class (suite.core.machine: every class field recorded and equal):
  identical is the expectation. Training on the CPU is deterministic (Lightning
  ``deterministic=True``, float32, the same seed) and the numerics are the record's, so
  the same code gives the same bits; ``1e-6`` absolute is reported as within tolerance.
* CPU, another machine class or one the record does not fully name: each kind of figure within
  its measured cross-class tolerance (suite/results/tolerances.yaml, measured by
  benchmarks/measure_tolerances.py from ``replicate --json`` across the classes at hand); a kind
  compared and never seen to move (tolerance 0), or with no measured tolerance at all, must be
  identical, and one no sample compared takes its metric's.
* GPU: relative difference at most ``2e-2``: bf16 autocast and non-deterministic
  kernels make two runs differ in the last bits, and training amplifies that.
"""

from __future__ import annotations

import dataclasses
import math
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from suite.core import machine, numerics
from suite.results import tolerances
from suite.results.records import RecordError, git_commit, read_record, scan
from suite.specs import Project

CPU_ABS_TOL = 1e-6
GPU_REL_TOL = 2e-2
IDENTICAL, WITHIN, DIFFERENT = "identical", "within tolerance", "different"


@dataclass(frozen=True)
class Tolerance:
    device: str  # "cpu" or "cuda"
    cross_class: bool = False  # a CPU re-run on another machine class than the record's

    def matches(self, recorded, rerun) -> bool:
        return self.outcome(recorded, rerun) != DIFFERENT

    def outcome(self, recorded, rerun, kind: str | None = None) -> str:
        """IDENTICAL, WITHIN (the tolerance for a figure of ``kind``) or DIFFERENT."""
        if recorded is None or rerun is None:  # not applicable / not finite
            return IDENTICAL if recorded is None and rerun is None else DIFFERENT
        if recorded == rerun:
            return IDENTICAL
        if self.device == "cpu":
            allowed = max(CPU_ABS_TOL, tolerances.published().allowed(kind) if self.cross_class else 0.0)
            return WITHIN if abs(recorded - rerun) <= allowed else DIFFERENT
        return WITHIN if abs(recorded - rerun) <= GPU_REL_TOL * max(abs(recorded), 1e-12) else DIFFERENT

    def __str__(self) -> str:
        if self.device != "cpu":
            return f"|diff| <= {GPU_REL_TOL:g} x |recorded|"
        if self.cross_class:
            return "each kind of figure within its measured cross-class tolerance (suite/results/tolerances.yaml)"
        return f"|diff| <= {CPU_ABS_TOL:g}"


@dataclass
class Verification:
    lines: list[str] = field(default_factory=list)
    mismatches: int = 0  # figures that differ, and anything that could not be compared
    compared: int = 0
    matched: int = 0  # identical or within tolerance
    identical: int = 0
    numerics_differ: list[str] = field(default_factory=list)  # settings or libraries not as recorded
    machine_class: str = ""  # how the record's machine class compares with this one's (ClassMatch.describe)
    # eval_id -> the re-run's metric rows (suite.submission.replicate puts them in the published records' place)
    reruns: dict[str, list[dict]] = field(default_factory=dict)
    # each compared figure: what, its kind (a task's metric: "lm bpb"), scale, recorded, re-run, outcome; what a
    # cross-machine measurement of tolerances reads (benchmarks/measure_tolerances.py)
    figures: list[dict] = field(default_factory=list)

    def compare(self, what: str, recorded, rerun, tolerance: Tolerance, kind: str | None = None,
                scale: int | None = None) -> None:
        outcome = tolerance.outcome(recorded, rerun, kind or what)
        self.figures.append({"what": what, "kind": kind or what, "scale": scale, "recorded": recorded,
                             "rerun": rerun, "outcome": outcome})
        self.compared += 1
        self.matched += outcome != DIFFERENT
        self.identical += outcome == IDENTICAL
        self.mismatches += outcome == DIFFERENT
        diff = "" if outcome == IDENTICAL or recorded is None or rerun is None else f", |diff| {abs(recorded - rerun):.3g}"
        label = {IDENTICAL: "identical", WITHIN: "within tolerance", DIFFERENT: "MISMATCH"}[outcome]
        self.lines.append(f"{label}: {what}: recorded {_fmt(recorded)}, re-run {_fmt(rerun)}{diff}")

    @property
    def verdict(self) -> str:
        """IDENTICAL when every figure is, WITHIN when every one at least matches, else DIFFERENT."""
        if self.mismatches or not self.compared:  # nothing compared is nothing reproduced
            return DIFFERENT
        return IDENTICAL if self.identical == self.compared else WITHIN

    def fail(self, message: str) -> None:
        self.mismatches += 1
        self.lines.append(f"MISMATCH: {message}")

    def summary(self) -> dict:
        """What ``posbench verify --json`` writes."""
        return {"verdict": self.verdict, "compared": self.compared, "matched": self.matched,
                "identical": self.identical, "mismatches": self.mismatches, "numerics_differ": self.numerics_differ,
                "machine_class": self.machine_class,
                "lines": self.lines, "reruns": self.reruns, "figures": self.figures}


def _fmt(value) -> str:
    return "n/a" if value is None else f"{value:.10g}"


def device_kind(device: str) -> str:
    return "cpu" if device == "cpu" else "cuda"


def record_path(ref: str, project: Project) -> Path:
    """A record file, or a run id of ``results/runs``."""
    path = Path(ref)
    return path if path.suffix == ".json" or path.exists() else project.runs / f"{ref}.json"


def verify(path: Path, project: Project, evaluations: bool = True, log=print) -> Verification:
    """Train the run of the record at ``path`` again and compare (see the module docstring).
    Raises RecordError or ValueError when the record cannot be verified at all. The record is
    checked against the project's specs before anything it names is imported, and while it is
    rebuilt and re-run only the code the project's specs name is imported
    (suite.specs.project_code): a record chooses no code."""
    from suite.specs.project_code import check_record_code, check_record_data, project_code

    record = read_record(path, "training_run")
    try:
        check_record_code(record.run, project.root, "run")
        check_record_data(record.run, project.root, "run")  # nor the data it reads
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None
    with project_code(project.root):
        return _verify(path, record, project, evaluations, log)


def _verify(path: Path, record, project: Project, evaluations: bool, log) -> Verification:
    import torch

    from suite.plan.grid import TrainingRun
    from suite.training.fit import fit

    if record.status != "done":
        raise ValueError(f"{path}: the run's status is {record.status!r}: only a done run has figures to verify")
    run = TrainingRun.from_dict(record.run)
    out = Verification()
    if run.run_id != record.run_id:
        out.fail(f"the run in the record hashes to {run.run_id}, not its run_id {record.run_id}: the record was edited")
        return out
    recorded_device = record.provenance.device or "cpu"
    here = "cuda" if torch.cuda.is_available() else "cpu"
    if device_kind(recorded_device) != here:
        raise ValueError(f"{path}: recorded on {recorded_device}; this machine trains on {here}: verify on the same kind of device")
    same_class = _check_numerics(record, out, log)
    tolerance = Tolerance(here, cross_class=here == "cpu" and not same_class)
    commit = git_commit(project.root)
    if commit != record.provenance.git_commit:
        log(f"note: recorded at commit {record.provenance.git_commit}, re-run at {commit}")
    log(f"re-training {run.label} ({run.run_id}) on {here}; tolerance {tolerance}")
    with tempfile.TemporaryDirectory(prefix="posbench-verify-") as tmp:
        scratch = Project(Path(tmp))
        for ancestor in _ancestors(run):  # a fine-tuned child starts from its parent's weights: those are re-trained too
            log(f"re-training its parent {ancestor.label} ({ancestor.run_id}) first")
            fit(ancestor, scratch.checkpoints, progress_bar=False)
        result = fit(run, scratch.checkpoints, progress_bar=False)
        if run.train.steps:  # a search-only child (0 steps) has no training loss
            out.compare("final_train_loss", record.provenance.final_train_loss, result.stats["final_train_loss"],
                        tolerance, f"{record.task} final_train_loss")
        if here == "cpu" and same_class:
            _verify_weights(record.provenance.weights_sha256, result.stats.get("weights_sha256"),
                            record.provenance.world_size or 1, out)
        _verify_calibration(record.provenance.calibration, result.stats.get("calibration"), tolerance, out)
        if evaluations:
            _verify_evaluations(run, result.module.eval(), project, scratch, tolerance, out, log)
    return out


def _verify_weights(recorded: str | None, rerun: str | None, world_size: int, out: Verification) -> None:
    """On the CPU class the record names, the weights trained again are the recorded ones bit for
    bit: their sha256 (suite.training.checkpoints.weights_sha256) is compared, beside the figures
    (elsewhere they differ in general, and a record from before digests has none). Not for a run
    trained by several processes: verify re-trains it in one, whose gradient sums are added in
    another order (tests/e2e/test_distributed.py holds the two within 1e-5)."""
    if recorded is None or rerun is None:
        return
    if world_size > 1:
        out.lines.append(f"weights sha256 not compared: trained by {world_size} processes, re-trained by one")
        return
    if recorded == rerun:
        out.lines.append(f"identical: weights sha256 {recorded[:16]}")
    else:
        out.fail(f"weights sha256: recorded {recorded[:16]}, re-trained {rerun[:16]} (the record's machine class: "
                 "the same bits were expected)")


def numerics_of(record) -> numerics.Numerics:
    """The numerics to re-run ``record`` with: its own, or the standard ones for a record made
    before they were recorded."""
    recorded = record.provenance.numerics
    return numerics.STANDARD if recorded is None else numerics.Numerics.from_record(recorded)


def _check_numerics(record, out: Verification, log) -> bool:
    """Pin the record's numerics in this process, say what still differs from it, and whether this
    machine is of the record's machine class (where bit-identity is claimed)."""
    recorded = record.provenance.numerics
    numerics.pin(numerics_of(record))
    here = numerics.measured()
    match = machine.compare(recorded, here)
    out.machine_class = match.describe()
    log(f"machine class: {out.machine_class}")
    if recorded is None:
        log(f"note: the record names no numerics (made before they were recorded); re-running with "
            f"{numerics.describe(numerics.STANDARD)}")
        return False
    out.numerics_differ = numerics.differences(recorded, here)
    for line in out.numerics_differ:
        log(f"note: numerics differ from the record's: {line}")
    return match.same and not any(line.startswith(numerics.SETTINGS) for line in out.numerics_differ)


def _verify_calibration(recorded: dict | None, rerun: dict | None, tolerance: Tolerance, out: Verification) -> None:
    """What a calibrating child searched on its parent (LongRoPE: suite.training.calibration): the
    search's best loss and every factor it found."""
    if recorded is None and rerun is None:
        return
    if recorded is None or rerun is None:
        out.fail(f"calibration: recorded {'none' if recorded is None else 'one'}, re-run {'none' if rerun is None else 'one'}")
        return
    out.compare("calibration search_loss", recorded["search_loss"], rerun["search_loss"], tolerance, "search_loss")
    mine, theirs = recorded["longrope_factors"], rerun["longrope_factors"]
    if len(mine) != len(theirs):
        out.fail(f"calibration: {len(mine)} factors recorded, {len(theirs)} re-run")
        return
    for i, (a, b) in enumerate(zip(mine, theirs)):
        out.compare(f"calibration factor {i}", a, b, tolerance, "longrope_factor")


def _ancestors(run) -> list:
    """A child's parent chain, the first ancestor first."""
    chain = []
    while run.parent is not None:
        run = run.parent
        chain.insert(0, run)
    return chain


def _verify_evaluations(run, module, project: Project, scratch: Project, tolerance: Tolerance, out: Verification, log) -> None:
    from suite.plan.grid import Evaluation
    from suite.execution.runner import evaluate
    from suite.specs.project_code import check_record_code, project_refs

    found = scan(project.evals, "evaluation")
    mine = [r for r in found.records if r.run_id == run.run_id and r.status == "done"]
    log(f"{len(mine)} evaluation record(s) of this run to re-run")
    allowed = project_refs(project.root)
    for record in sorted(mine, key=lambda r: (r.evaluator, r.encoding, r.scale or 0)):
        what = f"{record.evaluator} as {record.encoding}" + (f" at {record.scale}x" if record.scale else "")
        try:
            check_record_code(record.evaluation, project.root, "evaluation", allowed)
        except ValueError as exc:
            out.fail(f"{what}: {exc}")
            continue
        evaluation = Evaluation.from_dict(record.evaluation)
        if record.provenance.numerics is not None:  # an evaluation run later, with other numerics (posbench eval)
            own = numerics.Numerics.from_record(record.provenance.numerics)
            if own != numerics.requested():
                out.numerics_differ.append(f"{what}: recorded with {numerics.describe(own)}, re-run with "
                                           f"{numerics.describe(numerics.requested())}")
        if evaluation.eval_id != record.eval_id:
            out.fail(f"{what}: the evaluation in the record hashes to {evaluation.eval_id}, not {record.eval_id}")
            continue
        rerun = evaluate(evaluation, module, scratch, log=lambda *a, **k: None)
        if rerun.status != "done":
            out.fail(f"{what}: the re-run failed: {rerun.reason}")
            continue
        out.reruns[record.eval_id] = [dataclasses.asdict(m) for m in rerun.metrics]
        again = {_key(m): m.value for m in rerun.metrics}
        for m in record.metrics:
            label = f"{what}: {m.task} {m.metric}"
            if _key(m) not in again:
                out.fail(f"{label}: not produced by the re-run")
                continue
            out.compare(label, _finite(m.value), _finite(again[_key(m)]), tolerance, f"{m.task} {m.metric}", m.scale)


def _key(metric) -> tuple:
    return metric.task, metric.metric, metric.scale, metric.eval_len


def _finite(value):
    return value if value is None or math.isfinite(value) else None


__all__ = ["DIFFERENT", "IDENTICAL", "WITHIN", "RecordError", "Tolerance", "Verification", "numerics_of",
           "record_path", "verify"]
