"""One cell, start to finish: train, evaluate at every scale, write its run record.

A failure inside a cell (an encoding that raises, a NaN loss) is recorded as
``failed`` with the reason, so one broken cell never stops a grid and never
loses the others' results; ``posbench run`` retries failed cells.
"""

from __future__ import annotations

import datetime
import time
import traceback
from pathlib import Path

from .data.corpus import load_corpus
from .evaluation.extrapolation import evaluate_lm
from .grid import Cell
from .records import SCHEMA_VERSION, git_commit, package_versions, write_record
from .specs import Project
from .train import fit


def base_record(cell: Cell, project: Project) -> dict:
    return {
        "schema_version": SCHEMA_VERSION,
        "cell_id": cell.cell_id,
        "cell": cell.to_dict(),
        "content": cell.content(),
        "encoding": cell.encoding.name,
        "display_name": cell.encoding.display_name,
        "family": cell.encoding.family,
        "paper": cell.encoding.paper,
        "size": cell.size.name,
        "task": cell.task.name,
        "seed": cell.seed,
        "provenance": {"git_commit": git_commit(project.root), "versions": package_versions(),
                       "corpus": data_description(cell),
                       "corpus_fingerprint": cell.data_fingerprint,
                       "finished_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")},
    }


def data_description(cell: Cell) -> str:
    if cell.task.kind == "synthetic":
        return f"generated: {cell.task.generator} ({cell.data_fingerprint})"
    return load_corpus(cell.task.corpus).description


def _display_path(path: Path, root: Path) -> str:
    return str(path.relative_to(root) if path.is_relative_to(root) else path)


def evaluate_cell(cell: Cell, model, project: Project, log) -> tuple[list[dict], list[dict]]:
    """(metric rows, curve rows) for a trained cell: by task kind, plus GLUE-style scores."""
    if cell.task.kind == "synthetic":
        from .evaluation.lmeval_tasks import evaluate_tasks

        workdir = project.results / "lmeval" / cell.cell_id
        metrics = evaluate_tasks(model, cell.train.seq_len, [cell.task.generator], list(cell.scales),
                                 n=cell.eval.task_examples, seed=cell.seed, workdir=workdir, batch_size=cell.eval.batch_size)
        curves = []
    else:
        corpus = load_corpus(cell.task.corpus)
        metrics, curves = evaluate_lm(model, corpus["test"], cell.train.seq_len, cell.scales, cell.eval.tokens,
                                      cell.eval.batch_size, cell.eval.curve_buckets, task=cell.task.name)
        if cell.eval.lmeval_rolling:
            from .evaluation.lmeval_tasks import evaluate_lm_rolling

            # the same span through lm-eval's rolling log-likelihood, recorded beside the direct figure
            rolling = evaluate_lm_rolling(model, cell.train.seq_len, corpus["test"], list(cell.scales), cell.eval.tokens,
                                          project.results / "lmeval" / cell.cell_id, cell.eval.batch_size, task=cell.task.name)
            metrics += [{**row, "metric": "bpb_lmeval"} for row in rolling]
    if cell.glue is not None:
        from .evaluation.glue import evaluate_glue

        metrics += evaluate_glue(model, cell.glue, cell.seed, log=log)
    return metrics, curves


def run_cell(cell: Cell, project: Project, progress_bar: bool = True, log=print, **trainer_overrides) -> dict:
    record = base_record(cell, project)
    start = time.perf_counter()
    try:
        result = fit(cell, project.checkpoints, progress_bar=progress_bar, **trainer_overrides)
        model = result.module.model
        encoding = model.encodings[0]
        metrics, curves = evaluate_cell(cell, model, project, log)
        record.update(status="done", reason=None, metrics=metrics, curves=curves,
                      scale_behaviour=encoding.scale_behaviour.value, max_length=encoding.max_length(),
                      checkpoint=_display_path(result.checkpoint, project.root))
        record["provenance"].update(result.stats)
    except Exception as exc:  # recorded, never lost: the grid goes on
        record.update(status="failed", reason=f"{type(exc).__name__}: {exc}", traceback=traceback.format_exc(),
                      metrics=[], curves=[])
    record["provenance"]["wall_s"] = time.perf_counter() - start
    write_record(record, project.runs)
    return record
