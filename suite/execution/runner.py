"""Doing a plan's work: train what has no record, evaluate what has no record.

One training run at a time: its checkpoint is trained (or loaded, when its record
says done) once, then every pending evaluation on it runs, each writing its own
record. A child run (a fine-tuned extension) needs its parent's checkpoint: the process
that reaches it trains the parent first (or waits for the process that holds the parent's
claim). A failure (an exception, a non-finite loss) is a ``failed`` record with the
reason, the traceback and the step; the plan goes on. Failed pieces are redone only
when asked (``retry_failed``). The evaluations of a run whose training failed wait
for it.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from suite.core import numerics
from suite.core.aside import set_aside
from suite.execution.claims import try_claim
from suite.execution.sigterm import exit_if_terminated, sigterm_exits
from suite.plan.grid import Evaluation, Plan, TrainingRun
from suite.results.rows import metric_info
from suite.core.runtime import evaluation_device, peak_memory_mb, reset_peak_memory
from suite.results.record_types import (EvaluationRecord, Failure, Provenance, Record, TrainingProvenance, TrainingRecord,
                                        failed)
from suite.results.records import git_commit, package_versions, status_of, write_record
from suite.results.samples import write_samples
from suite.specs import Project
from suite.plan.task_kinds import kind_of


@dataclass
class Progress:
    """What a pass over a plan did."""

    trained: list[TrainingRecord] = field(default_factory=list)
    evaluated: list[EvaluationRecord] = field(default_factory=list)

    @property
    def failed(self) -> list[Record]:
        return [r for r in self.trained + self.evaluated if r.status == "failed"]


def run_path(project: Project, run: TrainingRun) -> Path:
    return project.runs / f"{run.run_id}.json"


def eval_path(project: Project, evaluation: Evaluation) -> Path:
    return project.evals / f"{evaluation.eval_id}.json"


def needs_training(run: TrainingRun, project: Project, retry_failed: bool, has_work: bool = True) -> bool:
    """Whether ``run`` trains now. A done run whose checkpoint is gone trains again only when
    an evaluation still needs it (``has_work``): a published record (suite.results.snapshot)
    comes without its checkpoint, and its evaluations are done."""
    status = status_of(run_path(project, run), "training_run")
    if status == "done":
        return has_work and not (project.checkpoints / f"{run.run_id}.ckpt").is_file()
    return status == "todo" or retry_failed


def pending(plan: Plan, project: Project, retry_failed: bool, attempted: frozenset = frozenset()) -> dict[str, list[Evaluation]]:
    """run_id -> its evaluations still to do, for every run with work left (training or
    evaluation). Pieces in ``attempted`` (tried by this process already) are not redone;
    nor are the evaluations of a run whose training failed and is not retried."""
    wanted = {"todo", "failed"} if retry_failed else {"todo"}
    out: dict[str, list[Evaluation]] = {}
    for run in plan.runs:
        candidates = [e for e in plan.evaluations_of(run) if e.eval_id not in attempted
                      and status_of(eval_path(project, e), "evaluation") in wanted]
        train = run.run_id not in attempted and needs_training(run, project, retry_failed, bool(candidates))
        blocked = not train and status_of(run_path(project, run), "training_run") != "done"
        todo = [] if blocked else candidates
        if train or todo:
            out[run.run_id] = todo
    return out


def failed_pieces(plan: Plan, project: Project) -> int:
    """How many of the plan's training runs and evaluations are recorded as failed."""
    return (sum(status_of(run_path(project, r), "training_run") == "failed" for r in plan.runs)
            + sum(status_of(eval_path(project, e), "evaluation") == "failed" for e in plan.evaluations))


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def _failure(exc: BaseException, project: Project, name: str) -> Failure:
    """Why a piece failed; the traceback also goes to results/logs/<name>.log."""
    from suite.training.fit import TrainingFailed

    text = traceback.format_exc()
    project.logs.mkdir(parents=True, exist_ok=True)
    log = project.logs / f"{name}.log"
    log.write_text(text)
    step = exc.step if isinstance(exc, TrainingFailed) else None
    reason = str(exc) if isinstance(exc, TrainingFailed) else f"{type(exc).__name__}: {exc}"
    return Failure(reason, step, text, _display_path(log, project.root))


def _display_path(path: Path, root: Path) -> str:
    return str(path.relative_to(root) if path.is_relative_to(root) else path)


def train_run(run: TrainingRun, project: Project, progress_bar: bool = True, **trainer_overrides):
    """Train ``run``; write its record. Returns (record, trained LightningModule or None)."""
    from suite.training.fit import fit

    provenance = {"git_commit": git_commit(project.root), "versions": package_versions(),
                  "corpus": kind_of(run.task).description(run.task), "corpus_fingerprint": run.data_fingerprint}
    record = TrainingRecord(run_id=run.run_id, run=run.to_dict(), content=run.content(), encoding=run.encoding.name,
                            display_name=run.encoding.display_name, family=run.encoding.family, size=run.size.name,
                            task=run.task.name, seed=run.seed, status="done", lineage=run.lineage())
    start, cpu_start, module = time.perf_counter(), time.process_time(), None
    try:
        result = fit(run, project.checkpoints, progress_bar=progress_bar, commit=provenance["git_commit"],
                     **trainer_overrides)
        module = result.module.eval()
        record = dataclasses.replace(record, checkpoint=_display_path(result.checkpoint, project.root),
                                     learning_curve=result.learning_curve)
        provenance.update(result.stats)
    except Exception as exc:  # recorded, never lost: the plan goes on
        exit_if_terminated()  # a SIGTERM a library swallowed is an exit, not this run's failure
        record = failed(record, _failure(exc, project, f"run-{run.run_id}"))
    provenance.update(wall_s=time.perf_counter() - start, cpu_s=time.process_time() - cpu_start, finished_at=_now())
    record = dataclasses.replace(record, provenance=TrainingProvenance(**provenance))
    write_record(record, project.runs)
    return record, module


def evaluate(evaluation: Evaluation, trained, project: Project, log=print) -> EvaluationRecord:
    """Run one evaluation on the trained module; write and return its record."""
    from suite.evaluation.base import EvalContext
    from suite.plan.evaluators import EVALUATORS
    from suite.training.checkpoints import model_for

    evaluator = EVALUATORS.get(evaluation.evaluator)
    encoding, run = evaluation.encoding, evaluation.run
    record = EvaluationRecord(
        eval_id=evaluation.eval_id, run_id=run.run_id, evaluation=evaluation.to_dict(), content=evaluation.content(),
        evaluator=evaluation.evaluator, settings=evaluation.settings, scale=evaluation.scale, encoding=encoding.name,
        display_name=encoding.display_name, family=encoding.family, paper=encoding.paper, trained_as=run.encoding.name,
        checkpoint_level=not evaluator.uses_eval_encoding, size=run.size.name, task=run.task.name, seed=run.seed,
        status="done")
    numerics.pin()  # recorded below: verify re-runs the record with the same numerics
    start, cpu_start = time.perf_counter(), time.process_time()
    reset_peak_memory(collect=False)  # evaluations are many and short: no full collection before each
    try:
        model = model_for(encoding, trained).to(evaluation_device())
        context = EvalContext(evaluation, evaluator.Settings.model_validate(evaluation.settings),
                              project.results / "lmeval" / run.run_id, log)
        result = evaluator.evaluate(model, context)
        if not result.metrics:  # a done record with no figure would count the piece as done for ever
            raise RuntimeError(f"evaluator {evaluation.evaluator} returned no metrics")
        if result.samples:  # written before the record that names them
            samples = write_samples(project.samples / f"{evaluation.eval_id}.parquet", result.samples)
            record = dataclasses.replace(record, samples=_display_path(samples, project.root))
        record = dataclasses.replace(record, metrics=tuple(result.metrics), curves=tuple(result.curves),
                                     scale_behaviour=model.encodings[0].scale_behaviour.value,
                                     max_length=model.encodings[0].max_length())
    except Exception as exc:  # recorded, never lost
        exit_if_terminated()  # a SIGTERM a library swallowed is an exit, not this piece's failure
        record = failed(record, _failure(exc, project, f"eval-{evaluation.eval_id}"))
    record = dataclasses.replace(record, provenance=Provenance(
        git_commit=git_commit(project.root), versions=package_versions(), wall_s=time.perf_counter() - start,
        cpu_s=time.process_time() - cpu_start, finished_at=_now(), peak_memory_mb=peak_memory_mb(), numerics=numerics.measured()))
    write_record(record, project.evals)
    return record


@dataclass(frozen=True)
class Earlier:
    """What a done run trained again had recorded of its weights (None: a record from before digests)."""

    weights_sha256: str | None


def _run_of(path: Path) -> str | None:
    """The run an evaluation record belongs to; None for a file that is not one (left to the readers' checks)."""
    try:
        return json.loads(path.read_text()).get("run_id")
    except (OSError, ValueError, AttributeError):
        return None


class _Pass:
    """One process's work on a plan: what it tried, and whether it waited on others."""

    def __init__(self, project: Project, console, retry_failed: bool, progress_bar: bool):
        self.project, self.console, self.retry_failed, self.progress_bar = project, console, retry_failed, progress_bar
        self.attempted: set[str] = set()
        self.progress = Progress()
        self.waiting = False

    def claim(self, name: str):
        claim = try_claim(self.project.claims, name)
        if claim is None:
            self.waiting = True  # another process has it: come back when it is done or stale
        return claim

    def train(self, run: TrainingRun):
        """The trained module for ``run`` (trained now if this process holds its claim), or None."""
        if not needs_training(run, self.project, self.retry_failed) or run.run_id in self.attempted:
            if status_of(run_path(self.project, run), "training_run") != "done":
                return None
            module = self.load(run)
            if module is not None or run.run_id in self.attempted:
                return module
        if run.parent is not None and not self.parent_ready(run.parent):
            return None
        claim = self.claim(f"run-{run.run_id}")
        if claim is None:
            return None
        with claim:
            if not needs_training(run, self.project, self.retry_failed):  # recorded by another meanwhile
                if status_of(run_path(self.project, run), "training_run") != "done":
                    return None  # failed there: redone only when asked (--retry-failed)
                module = self.load(run)  # under the claim: an unloadable checkpoint is set aside here
                if module is not None:
                    return module
            self.attempted.add(run.run_id)
            earlier = self.set_aside_done_record(run)
            record, module = train_run(run, self.project, progress_bar=self.progress_bar)
            if earlier is not None and record.status == "done":
                self.set_aside_stale_evaluations(run, earlier, record.provenance.weights_sha256)
        self.progress.trained.append(record)
        report_training(self.console, record)
        return module

    def load(self, run: TrainingRun):
        """The done run's module from its checkpoint; None, with the checkpoint set aside, when the
        file itself cannot be read (truncated, corrupt): the run is then trained again like a
        missing one. An error in building the model from a sound file (a plugin that does not
        import) is not the file's fault and is raised, leaving checkpoint and record in place."""
        from suite.training.checkpoints import load_checkpoint, unreadable

        checkpoint = self.project.checkpoints / f"{run.run_id}.ckpt"
        why = unreadable(checkpoint)
        if why is None:
            return load_checkpoint(checkpoint)
        where = set_aside(checkpoint, self.project.results, f"unloadable checkpoint of run {run.run_id}: {why}")
        if where is not None:
            self.console.print(f"  [yellow]checkpoint of {run.label} cannot be loaded[/] ({why.split(':')[0]}); "
                               f"set aside as {_display_path(where, self.project.root)}: training it again",
                               highlight=False)
        return None

    def set_aside_done_record(self, run: TrainingRun) -> Earlier | None:
        """A done record is never overwritten silently: it goes to results/aside/ with the reason.
        Returns what the earlier training's weights were (None: there was no done record)."""
        path = run_path(self.project, run)
        if status_of(path, "training_run") != "done":
            return None
        earlier = Earlier(json.loads(path.read_text()).get("provenance", {}).get("weights_sha256"))
        reason = f"run {run.run_id} was done, but its checkpoint is missing or unloadable: trained again"
        where = set_aside(path, self.project.results, reason)
        if where is not None:
            self.console.print(f"  [yellow]{run.label} is trained again[/] (no usable checkpoint); its done record "
                               f"is kept as {_display_path(where, self.project.root)}")
        return earlier

    def set_aside_stale_evaluations(self, run: TrainingRun, earlier: Earlier, weights: str | None) -> None:
        """The evaluations of a run trained again measured the earlier training's weights. They
        stand when the new weights are those bit for bit (the same sha256: the same numerics on
        the same machine class); otherwise (another class, a GPU, or an earlier record with no
        digest) each goes to results/aside/ and is done again on the new checkpoint, so that no
        run's figures come from two trainings."""
        if earlier.weights_sha256 is not None and earlier.weights_sha256 == weights:
            return
        why = ("its earlier record names no weights digest" if earlier.weights_sha256 is None else
               f"weights sha256 {earlier.weights_sha256[:12]} then, {(weights or '?')[:12]} now")
        stale = [path for path in sorted(self.project.evals.glob("*.json")) if _run_of(path) == run.run_id]
        for path in stale:
            set_aside(path, self.project.results, f"evaluation of run {run.run_id}'s earlier training, which was "
                                                  f"trained again with other weights ({why}): done again")
        if stale:
            self.console.print(f"  [yellow]{len(stale)} evaluation(s) of its earlier weights set aside[/] ({why}); "
                               "done again on the new checkpoint")

    def parent_ready(self, parent: TrainingRun) -> bool:
        """Whether a child can start: its parent is done with a checkpoint, trained now by this
        process if nobody has (a published parent comes without one), or False while another
        process holds it (then this pass waits) or its training failed."""
        if needs_training(parent, self.project, self.retry_failed):
            return parent.run_id not in self.attempted and self.train(parent) is not None
        return status_of(run_path(self.project, parent), "training_run") == "done"

    def evaluate(self, evaluation: Evaluation, module) -> None:
        claim = self.claim(f"eval-{evaluation.eval_id}")
        if claim is None:
            return
        with claim:
            wanted = {"todo", "failed"} if self.retry_failed else {"todo"}
            if status_of(eval_path(self.project, evaluation), "evaluation") not in wanted:
                return  # recorded by another process meanwhile
            self.attempted.add(evaluation.eval_id)
            record = evaluate(evaluation, module, self.project, log=self.console.print)
        self.progress.evaluated.append(record)
        report_evaluation(self.console, record)


def run_plan(plan: Plan, project: Project, console, retry_failed: bool = False, progress_bar: bool = True,
             poll_s: float = 2.0) -> Progress:
    """Every pending piece of ``plan``, training run by training run, shared with any other
    process working on the same results folder (claims): each piece is done once, by one
    of them. Returns when nothing is left that this process could do or wait for.

    A SIGTERM anywhere in it (before a fit has installed Lightning's handler, between pieces,
    in an evaluation) ends it as ``SystemExit(143)``, which releases this process's claims on
    the way out: a rerun, on any host, takes the pieces up at once."""
    with sigterm_exits():
        return _run_plan(plan, project, console, retry_failed, progress_bar, poll_s)


def _run_plan(plan: Plan, project: Project, console, retry_failed: bool, progress_bar: bool, poll_s: float) -> Progress:
    work = _Pass(project, console, retry_failed, progress_bar)
    while True:
        todo = pending(plan, project, retry_failed, frozenset(work.attempted))
        if not todo:
            return work.progress
        work.waiting, before = False, len(work.attempted)
        runs = [r for r in plan.runs if r.run_id in todo]
        for i, run in enumerate(runs, 1):
            console.print(f"[bold]run {i}/{len(runs)}[/] {run.label} [dim]{run.run_id}[/]: "
                          f"{len(todo[run.run_id])} evaluation(s) to do")
            module = None  # the previous run's model goes before this one trains (its memory is not this run's)
            module = work.train(run)
            if module is None:
                continue
            for evaluation in todo[run.run_id]:
                work.evaluate(evaluation, module)
        if len(work.attempted) == before:
            if not work.waiting:
                return work.progress
            console.print(f"[dim]waiting for {len(todo)} run(s) claimed by other processes[/]")
            time.sleep(poll_s)


def report_training(console, record: TrainingRecord) -> None:
    if record.status == "failed":
        console.print(f"  [red]training failed[/]: {record.reason}")
    elif record.provenance.final_train_loss is None:  # a search-only child (0 steps)
        console.print(f"  [green]calibrated[/] in {record.provenance.wall_s:.1f}s (no training step)")
    else:
        console.print(f"  [green]trained[/] in {record.provenance.wall_s:.1f}s "
                      f"(final loss {record.provenance.final_train_loss:.3f})")


def report_evaluation(console, record: EvaluationRecord) -> None:
    """One line: the evaluation and its headline figures (or why it failed)."""
    at = f" {record.scale}x" if record.scale is not None else ""
    what = f"{record.evaluator}{at} as {record.encoding}"
    if record.status == "failed":
        console.print(f"  [red]{what} failed[/]: {record.reason}")
        return
    headline = {name for name, info in metric_info().items() if info.headline}
    shown = [m for m in record.metrics if m.metric in headline]
    figures = "  ".join(f"{m.metric}={'n/a' if m.value is None else format(m.value, '.3f')}" for m in shown)
    console.print(f"  {what}: {figures} [dim]({record.provenance.wall_s:.1f}s)[/]")
