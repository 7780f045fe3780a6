"""What a task kind checks of a grid before anything trains (suite.plan.task_kinds calls these)."""

from __future__ import annotations

from suite.core.yamldoc import SpecError
from suite.data.corpus import source_of
from suite.data.synthetic import get_task
from suite.specs import TaskSpec, TrainRecipe



def synthetic_limits(kind, grid, doc, i, task: TaskSpec, recipe: TrainRecipe, field: tuple[str, ...]) -> list[SpecError]:
    """The generator's shortest example and the task's shortest training length fit the training length."""
    errors, need = [], get_task(task.generator).min_length
    if need > recipe.seq_len:
        errors.append(doc.error((*field, "seq_len"), (
            f"task '{task.name}' needs sequences of at least {need} bytes (generator '{task.generator}'); "
            f"the training length {'.'.join(field)}.seq_len is {recipe.seq_len}")))
    if task.min_train_len > recipe.seq_len:
        errors.append(doc.error(("tasks", i), (
            f"task '{task.name}': min_train_len {task.min_train_len} is above the training length "
            f"{'.'.join(field)}.seq_len {recipe.seq_len} (training lengths are drawn from [min_train_len, seq_len])")))
    return errors


def lm_limits(kind, grid, doc, i, task: TaskSpec, recipe: TrainRecipe, field: tuple[str, ...]) -> list[SpecError]:
    """A corpus's splits hold a training window, every eval window and the scored span
    (checked from file sizes; a source whose sizes are known only once read is not checked)."""
    source = source_of(task.corpus)
    where = f"task '{task.name}': corpus {task.corpus.kind}"  # until the source says where it is
    try:
        where = f"task '{task.name}': corpus {source.where(task.corpus)}"
        splits = source.split_bytes(task.corpus)
    except (OSError, ValueError, NotImplementedError) as exc:
        return [doc.error(("tasks", i), f"{where}: cannot list its files: {exc}")]
    if splits is None:
        return []
    if not any(splits.values()):
        return [doc.error(("tasks", i), f"{where} has no files (max_bytes {task.corpus.max_bytes})"
                          if task.corpus.max_bytes else f"{where} matches no files")]
    empty = [s for s, n in splits.items() if n == 0]
    if empty:
        return [doc.error(("tasks", i), f"{where} has no {' or '.join(empty)} files (files are split 90/5/5 by "
                                        "a hash of their path): it needs more files")]
    errors = []
    if splits["train"] < recipe.seq_len + 2:
        errors.append(doc.error((*field, "seq_len"), f"{where}: the training split holds {splits['train']} bytes, "
                                                    f"fewer than one training window of {recipe.seq_len} + 1"))
    test = splits["test"]
    for k, scale in enumerate(grid.spec.scales):
        if scale * recipe.seq_len + 1 > test:
            errors.append(doc.error(("scales", k), (
                f"scale {scale}: an eval window of {scale} x {recipe.seq_len} = {scale * recipe.seq_len} bytes (+1) "
                f"is longer than the test split of {where}, which holds {test} bytes")))
    budgets = {r.settings["tokens"] for r in kind.evaluations(task, grid.spec) if "tokens" in r.settings}
    for tokens in sorted(b for b in budgets if b + 1 > test):
        errors.append(doc.error(("eval", "tokens"), (
            f"{tokens} tokens (+1) are more than the {test} bytes the test split of {where} holds: every scale "
            "must score the same span")))
    return errors


# The limits of each task kind, by TaskSpec.kind as suite.plan.task_kinds.TASK_KINDS (a kind without an
# entry has none checked here; these could become a method of the TaskKind interface).
