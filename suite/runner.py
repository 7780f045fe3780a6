"""Doing a plan's work: train what has no record, evaluate what has no record.

One training run at a time: its checkpoint is trained (or loaded, when its record
says done) once, then every pending evaluation on it runs, each writing its own
record. A failure (an exception, a non-finite loss) is a ``failed`` record with the
reason, the traceback and the step; the plan goes on. Failed pieces are redone only
when asked (``retry_failed``). The evaluations of a run whose training failed wait
for it.
"""

from __future__ import annotations

import datetime
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from .grid import Evaluation, Plan, TrainingRun
from .rows import metric_info
from .records import SCHEMA_VERSION, git_commit, package_versions, status_of, write_record
from .specs import Project
from .task_kinds import kind_of


@dataclass
class Progress:
    """What a pass over a plan did."""

    trained: list[dict] = field(default_factory=list)
    evaluated: list[dict] = field(default_factory=list)

    @property
    def failed(self) -> list[dict]:
        return [r for r in self.trained + self.evaluated if r["status"] == "failed"]


def run_path(project: Project, run: TrainingRun) -> Path:
    return project.runs / f"{run.run_id}.json"


def eval_path(project: Project, evaluation: Evaluation) -> Path:
    return project.evals / f"{evaluation.eval_id}.json"


def pending(plan: Plan, project: Project, retry_failed: bool) -> dict[str, list[Evaluation]]:
    """run_id -> its evaluations still to do (runs whose own training is to do included)."""
    wanted = {"todo", "failed"} if retry_failed else {"todo"}
    out: dict[str, list[Evaluation]] = {}
    for run in plan.runs:
        todo = [e for e in plan.evaluations_of(run) if status_of(eval_path(project, e), "evaluation") in wanted]
        if todo or status_of(run_path(project, run), "training_run") in wanted:
            out[run.run_id] = todo
    return out


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def _failure(exc: BaseException) -> dict:
    return {"status": "failed", "reason": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()}


def _display_path(path: Path, root: Path) -> str:
    return str(path.relative_to(root) if path.is_relative_to(root) else path)


def train_run(run: TrainingRun, project: Project, progress_bar: bool = True, **trainer_overrides):
    """Train ``run``; write its record. Returns (record, trained LightningModule or None)."""
    from .train import fit

    record = {
        "schema_version": SCHEMA_VERSION, "kind": "training_run", "run_id": run.run_id, "run": run.to_dict(),
        "content": run.content(), "encoding": run.encoding.name, "display_name": run.encoding.display_name,
        "family": run.encoding.family, "size": run.size.name, "task": run.task.name, "seed": run.seed,
        "provenance": {"git_commit": git_commit(project.root), "versions": package_versions(),
                       "corpus": kind_of(run.task).description(run.task), "corpus_fingerprint": run.data_fingerprint},
    }
    start, module = time.perf_counter(), None
    try:
        result = fit(run, project.checkpoints, progress_bar=progress_bar, **trainer_overrides)
        module = result.module.eval()
        record.update(status="done", reason=None, checkpoint=_display_path(result.checkpoint, project.root))
        record["provenance"].update(result.stats)
    except Exception as exc:  # recorded, never lost: the plan goes on
        record.update(_failure(exc))
    record["provenance"].update(wall_s=time.perf_counter() - start, finished_at=_now())
    write_record(record, project.runs)
    return record, module


def evaluate(evaluation: Evaluation, trained, project: Project, log=print) -> dict:
    """Run one evaluation on the trained module; write and return its record."""
    from .evaluation import EVALUATORS, EvalContext
    from .train import model_for

    evaluator = EVALUATORS.get(evaluation.evaluator)
    encoding, run = evaluation.encoding, evaluation.run
    record = {
        "schema_version": SCHEMA_VERSION, "kind": "evaluation", "eval_id": evaluation.eval_id, "run_id": run.run_id,
        "evaluation": evaluation.to_dict(), "content": evaluation.content(), "evaluator": evaluation.evaluator,
        "settings": evaluation.settings, "scale": evaluation.scale, "encoding": encoding.name,
        "display_name": encoding.display_name, "family": encoding.family, "paper": encoding.paper,
        "trained_as": run.encoding.name, "checkpoint_level": not evaluator.uses_eval_encoding,
        "size": run.size.name, "task": run.task.name, "seed": run.seed, "metrics": [], "curves": [],
    }
    start = time.perf_counter()
    try:
        model = model_for(encoding, trained)
        context = EvalContext(evaluation, evaluator.Settings.model_validate(evaluation.settings),
                              project.results / "lmeval" / run.run_id, log)
        result = evaluator.evaluate(model, context)
        record.update(status="done", reason=None, metrics=[m.as_dict() for m in result.metrics],
                      curves=[c.as_dict() for c in result.curves],
                      scale_behaviour=model.encodings[0].scale_behaviour.value, max_length=model.encodings[0].max_length())
    except Exception as exc:  # recorded, never lost
        record.update(_failure(exc))
    record["provenance"] = {"git_commit": git_commit(project.root), "versions": package_versions(),
                            "wall_s": time.perf_counter() - start, "finished_at": _now()}
    write_record(record, project.evals)
    return record


def trained_module(run: TrainingRun, project: Project, retry_failed: bool, progress_bar: bool, log):
    """(record or None, module or None): the checkpoint loaded, or trained when it must be."""
    from .train import load_checkpoint

    status = status_of(run_path(project, run), "training_run")
    checkpoint = project.checkpoints / f"{run.run_id}.ckpt"
    if status == "done" and checkpoint.is_file():
        return None, load_checkpoint(checkpoint)
    if status == "failed" and not retry_failed:
        return None, None
    if status == "done":
        log(f"  checkpoint {checkpoint} is missing: training again")
    return train_run(run, project, progress_bar=progress_bar)


def run_plan(plan: Plan, project: Project, console, retry_failed: bool = True, progress_bar: bool = True) -> Progress:
    """Every pending piece of ``plan``, training run by training run."""
    progress = Progress()
    work = pending(plan, project, retry_failed)
    runs = [r for r in plan.runs if r.run_id in work]
    for i, run in enumerate(runs, 1):
        todo = work[run.run_id]
        console.print(f"[bold]run {i}/{len(runs)}[/] {run.label} [dim]{run.run_id}[/]: {len(todo)} evaluation(s) to do")
        record, module = trained_module(run, project, retry_failed, progress_bar, console.print)
        if record is not None:
            progress.trained.append(record)
            report_training(console, record)
        if module is None:
            continue
        for evaluation in todo:
            done = evaluate(evaluation, module, project, log=console.print)
            progress.evaluated.append(done)
            report_evaluation(console, done)
    return progress


def report_training(console, record: dict) -> None:
    if record["status"] == "failed":
        console.print(f"  [red]training failed[/]: {record['reason']}")
    else:
        console.print(f"  [green]trained[/] in {record['provenance']['wall_s']:.1f}s "
                      f"(final loss {record['provenance']['final_train_loss']:.3f})")


def report_evaluation(console, record: dict) -> None:
    """One line: the evaluation and its headline figures (or why it failed)."""
    at = f" {record['scale']}x" if record["scale"] is not None else ""
    what = f"{record['evaluator']}{at} as {record['encoding']}"
    if record["status"] == "failed":
        console.print(f"  [red]{what} failed[/]: {record['reason']}")
        return
    headline = {name for name, info in metric_info().items() if info.headline}
    shown = [m for m in record["metrics"] if m["metric"] in headline]
    figures = "  ".join(f"{m['metric']}={'n/a' if m['value'] is None else format(m['value'], '.3f')}" for m in shown)
    console.print(f"  {what}: {figures} [dim]({record['provenance']['wall_s']:.1f}s)[/]")
