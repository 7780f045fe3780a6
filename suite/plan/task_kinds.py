"""Task kinds behind one interface: what a task trains on and how it is evaluated by default.

A task spec's ``kind`` names one of these (``lm``: language modelling on a corpus;
``synthetic``: a seeded generator). Code asks the kind, never compares the kind's
name: adding a kind is one class here and its registration.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from suite.core.registry import Registry
from suite.plan.task_limits import lm_limits, synthetic_limits
from suite.specs import GridSpec, TaskSpec, TrainRecipe


@dataclass(frozen=True)
class EvalRequest:
    """An evaluator and its settings (validated by the evaluator's own Settings)."""

    evaluator: str
    settings: dict = field(default_factory=dict)


class TaskKind:
    """The interface; subclasses are registered in :data:`TASK_KINDS` by ``TaskSpec.kind``."""

    reads_corpus: ClassVar[bool] = False  # its runs train and are scored on a corpus's text

    def fingerprint(self, task: TaskSpec) -> str:
        """A content hash of the training data (part of every training run id)."""
        raise NotImplementedError

    def description(self, task: TaskSpec) -> str:
        """What the data is, for provenance (a corpus and its size, or a generator)."""
        raise NotImplementedError

    def train_recipe(self, grid: GridSpec, task: TaskSpec) -> TrainRecipe:
        """The recipe ``grid`` trains ``task`` with."""
        return grid.train

    def evaluations(self, task: TaskSpec, grid: GridSpec) -> list[EvalRequest]:
        """The evaluations a grid runs on every model trained on this task."""
        raise NotImplementedError

    def train_batches(self, task: TaskSpec, recipe: TrainRecipe, seed: int):
        """A DataLoader of (inputs [B, T], targets [B, T]) for ``recipe.steps`` steps."""
        raise NotImplementedError

    def learning_probe(self, task: TaskSpec, recipe: TrainRecipe):
        """A held-out figure of a model during training (``model -> {name: value}``) for its
        learning curve (suite.training.learning_curve), or None: training loss alone."""
        return None

    def limits(self, grid, doc, i: int, task: TaskSpec, recipe: TrainRecipe, field: tuple[str, ...]) -> list:
        """file:line errors for what would fail only once training starts (``field``: the recipe's grid field)."""
        return []


TASK_KINDS: Registry[TaskKind] = Registry("task kind", TaskKind)


def kind_of(task: TaskSpec) -> TaskKind:
    return TASK_KINDS.get(task.kind)()


@TASK_KINDS.register("lm")
class LanguageModelling(TaskKind):
    """Next-byte prediction on a corpus; scored in bits per byte at every scale."""

    reads_corpus = True

    def fingerprint(self, task):
        from suite.data.corpus import corpus_fingerprint

        return corpus_fingerprint(task.corpus)

    def description(self, task):
        from suite.data.corpus import load_corpus

        return load_corpus(task.corpus).description

    def evaluations(self, task, grid):
        recipe = grid.eval
        passages = {} if recipe.passages is None else {"passages": recipe.passages}
        requests = [EvalRequest("extrapolation", {"tokens": recipe.tokens, "batch_size": recipe.batch_size,
                                                  "curve_buckets": recipe.curve_buckets, **passages})]
        if recipe.lmeval_rolling:
            requests.append(EvalRequest("lm_rolling", {"tokens": recipe.tokens, "batch_size": recipe.batch_size}))
        if grid.glue is not None:
            requests.append(EvalRequest("glue", grid.glue.model_dump()))
        return requests

    def train_batches(self, task, recipe, seed):
        from torch.utils.data import DataLoader

        from suite.data.corpus import load_corpus
        from suite.data.windows import RandomWindows

        windows = RandomWindows(load_corpus(task.corpus)["train"], recipe.seq_len, recipe.steps * recipe.batch_size, seed)
        return DataLoader(windows, batch_size=recipe.batch_size, shuffle=False, num_workers=0)

    def learning_probe(self, task, recipe):
        from suite.data.corpus import load_corpus
        from suite.data.windows import ValidationLoss

        return ValidationLoss(load_corpus(task.corpus)["validation"], recipe.seq_len)

    def limits(self, grid, doc, i, task, recipe, field):
        return lm_limits(self, grid, doc, i, task, recipe, field)


@TASK_KINDS.register("synthetic")
class GeneratedTask(TaskKind):
    """A seeded generator, trained at lengths up to L and scored through lm-eval at s x L."""

    def fingerprint(self, task):
        from suite.data.synthetic import get_task

        return f"{task.generator}-v{get_task(task.generator).version}"

    def description(self, task):
        return f"generated: {self.fingerprint(task)}"

    def train_recipe(self, grid, task):
        return grid.recipe_for(task.name)

    def evaluations(self, task, grid):
        return [EvalRequest("lmeval_task", {"task": task.generator, "examples": grid.eval.task_examples,
                                            "batch_size": grid.eval.batch_size})]

    def train_batches(self, task, recipe, seed):
        from torch.utils.data import DataLoader

        from suite.data.synthetic_train import SyntheticBatches

        batches = SyntheticBatches(task.generator, recipe.seq_len, task.min_train_len, recipe.steps, recipe.batch_size, seed)
        return DataLoader(batches, batch_size=None, shuffle=False, num_workers=0)

    def learning_probe(self, task, recipe):
        from suite.data.synthetic_train import HeldOutExactMatch

        return HeldOutExactMatch(task.generator, recipe.seq_len)

    def limits(self, grid, doc, i, task, recipe, field):
        return synthetic_limits(self, grid, doc, i, task, recipe, field)
