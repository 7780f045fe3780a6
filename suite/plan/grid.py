"""Grid expansion: a pure function from a loaded grid to training runs and the evaluations on them.

Train once, evaluate many:

* A :class:`TrainingRun` is (encoding as trained, size, task's training data, seed,
  training recipe). Its id hashes what changes the weights: the implementation and
  its resolved parameters, the size, the task's training content, the seed, the
  recipe, the data fingerprint and ``RECIPE_VERSION``. Names are not hashed, so two
  grids (or two specs) that ask for the same training share one run and one checkpoint.
  A child run (a fine-tuned extension: the grid's ``extensions``) continues from its
  parent's checkpoint; the parent's id is part of its id.
* An :class:`Evaluation` is (training run, evaluator, its settings, eval-time encoding,
  scale). Its id hashes those plus the evaluator's version. Scales, lm-eval tasks,
  GLUE-style fine-tuning and training-free variants (``trains_as:``) are evaluations:
  adding one to a finished grid trains nothing.

The git commit is provenance, recorded but never hashed.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
from dataclasses import dataclass
from functools import cached_property

from suite import RECIPE_VERSION
from suite.specs import EncodingSpec, Grid, SizeSpec, TaskSpec, TrainRecipe
from suite.plan.evaluators import EVALUATORS
from suite.plan.task_kinds import EvalRequest, kind_of
from suite.plan.tuning import Chooser, swept


def content_id(content: dict) -> str:
    blob = json.dumps(content, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def encoding_content(encoding: EncodingSpec) -> dict:
    """What of an encoding changes a computation: its implementation and resolved parameters,
    and its training positions where it has any (absent otherwise, so that ids made before
    transforms existed stay what they were); a parameter marked so is left out at its default."""
    params = encoding.resolved_params()
    content = {"impl": encoding.impl, "params": {name: value for name, value in dataclasses.asdict(params).items()
                                                  if not _unhashed_default(params, name)}}
    if encoding.train_positions is not None:
        content["train_positions"] = encoding.train_positions.model_dump()
    return content


def _unhashed_default(params, name: str) -> bool:
    """A parameter added after runs were published says ``metadata={"hash_default": False}``: at
    its default it is left out of the id, so the runs made before it existed keep theirs (as
    a size's ``init``)."""
    field = next(f for f in dataclasses.fields(params) if f.name == name)
    return field.metadata.get("hash_default", True) is False and getattr(params, name) == field.default


def recipe_content(train: TrainRecipe) -> dict:
    """The recipe as it enters a run's id: not ``compile`` (how the steps run, not what they
    compute: see TrainRecipe), and ``lr_sweep`` only where there is one, so the ids of runs
    whose learning rate was given stay what they were."""
    return train.model_dump(exclude={"compile"} | ({"lr_sweep"} if train.lr_sweep is None else set()))


def task_content(task: TaskSpec) -> dict:
    """The task as it enters a run's id. Its corpus source's ``location_fields`` (a folder's
    ``path``) are left out: where the files lie on this machine, while their content is in the
    run's ``data_fingerprint`` already, so a fresh clone in another folder, or ``verify`` of a
    published run, plans the same id. No published run reads a folder, so no id changes.
    A pinned ``archive`` enters only where there is one, so the ids of runs made before the
    field existed stay what they were."""
    from suite.data.corpus import source_of

    content = task.model_dump(exclude={"name", "description", "paper"})
    located = set(source_of(task.corpus).location_fields)
    content["corpus"] = {k: v for k, v in content["corpus"].items()
                         if k not in located and not (k == "archive" and v is None)}
    return content


@dataclass(frozen=True)
class TrainingRun:
    encoding: EncodingSpec  # the encoding as trained (a variant's ``trains_as``)
    size: SizeSpec
    task: TaskSpec
    seed: int
    train: TrainRecipe
    data_fingerprint: str
    parent: "TrainingRun | None" = None  # a fine-tuned extension's parent: it starts from that checkpoint

    def content(self) -> dict:
        """Everything that changes the weights, in canonical JSON-able form (a parent only
        where there is one, so the ids of runs without stay what they were)."""
        content = {
            "recipe_version": RECIPE_VERSION,
            "encoding": encoding_content(self.encoding),
            "size": self.size.model_dump(exclude={"name", "description"}, exclude_defaults=True),
            "task": task_content(self.task),
            "seed": self.seed,
            "train": recipe_content(self.train),
            "data_fingerprint": self.data_fingerprint,
        }
        if self.parent is not None:
            content["parent"] = self.parent.run_id
        return content

    @property
    def base_len(self) -> int:
        """What scale 1 means for this run's model: its own training length, or for a child its
        first ancestor's, so a child's 4x is the same length as its parent's 4x."""
        return self.train.seq_len if self.parent is None else self.parent.base_len

    @property
    def extension_factor(self) -> float:
        """The scale a child was fine-tuned at and keeps (suite.modeling.model.ModelConfig); 1 otherwise."""
        return self.train.seq_len / self.base_len

    @cached_property
    def run_id(self) -> str:
        return content_id(self.content())

    @property
    def label(self) -> str:
        return f"{self.encoding.name}/{self.size.name}/{self.task.name}/seed{self.seed}"

    def to_dict(self) -> dict:
        """The run with its specs' names, enough to rebuild it anywhere: :meth:`from_dict`."""
        d = {"encoding": self.encoding.model_dump(), "encoding_source": self.encoding.source,
             "size": self.size.model_dump(), "task": self.task.model_dump(), "seed": self.seed,
             "train": self.train.model_dump(), "data_fingerprint": self.data_fingerprint}
        if self.parent is not None:
            d["parent"] = {"run_id": self.parent.run_id, **self.parent.to_dict()}
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "TrainingRun":
        parent = cls.from_dict(d["parent"]) if d.get("parent") else None
        return cls(encoding=EncodingSpec.model_validate({**d["encoding"], "source": d.get("encoding_source", "")}),
                   size=SizeSpec.model_validate(d["size"]), task=TaskSpec.model_validate(d["task"]), seed=d["seed"],
                   train=TrainRecipe.model_validate(d["train"], context={"child": parent is not None}),
                   data_fingerprint=d["data_fingerprint"], parent=parent)

    def lineage(self) -> dict | None:
        """What a child continues from, for its record and page; None for a run trained from scratch."""
        if self.parent is None:
            return None
        return {"parent_run_id": self.parent.run_id, "parent_label": self.parent.label,
                "parent_encoding": self.parent.encoding.name, "parent_steps": self.parent.train.steps,
                "parent_seq_len": self.parent.train.seq_len, "steps": self.train.steps, "seq_len": self.train.seq_len,
                "factor": self.extension_factor}


@dataclass(frozen=True)
class Evaluation:
    run: TrainingRun
    evaluator: str
    settings: dict  # the evaluator's Settings, defaults filled in
    encoding: EncodingSpec  # the encoding as evaluated (the run's own for checkpoint-level evaluators)
    scale: int | None  # None: the evaluator does not depend on length (GLUE-style)

    def content(self) -> dict:
        evaluator = EVALUATORS.get(self.evaluator)
        return {
            "run_id": self.run.run_id,
            "evaluator": self.evaluator,
            "evaluator_version": evaluator.version,
            "settings": self.settings,
            # the name too: two specs with equal parameters are two leaderboard rows
            "encoding": {"name": self.encoding.name, **encoding_content(self.encoding)},
            "task": self.run.task.name,
            "scale": self.scale,
        }

    @cached_property
    def eval_id(self) -> str:
        return content_id(self.content())

    @property
    def label(self) -> str:
        at = f" at {self.scale}x" if self.scale is not None else ""
        return f"{self.evaluator} of {self.run.label} as {self.encoding.name}{at}"

    def to_dict(self) -> dict:
        return {"run": self.run.to_dict(), "evaluator": self.evaluator, "settings": self.settings,
                "encoding": self.encoding.model_dump(), "encoding_source": self.encoding.source, "scale": self.scale}

    @classmethod
    def from_dict(cls, d: dict) -> "Evaluation":
        return cls(run=TrainingRun.from_dict(d["run"]), evaluator=d["evaluator"], settings=d["settings"],
                   encoding=EncodingSpec.model_validate({**d["encoding"], "source": d.get("encoding_source", "")}),
                   scale=d["scale"])


@dataclass(frozen=True)
class Plan:
    """A grid's work: every training run once, and every evaluation on them."""

    runs: tuple[TrainingRun, ...]
    evaluations: tuple[Evaluation, ...]
    # (encoding, size, task) groups of a tuned grid whose sweep has not finished: their runs at the
    # chosen learning rate wait for it (suite.plan.tuning), and are not in ``runs`` yet
    pending: tuple[str, ...] = ()
    # groups whose sweep finished without a usable validation loss (every rate failed): no rate, no runs
    untunable: tuple[str, ...] = ()

    def evaluations_of(self, run: TrainingRun) -> list[Evaluation]:
        return [e for e in self.evaluations if e.run.run_id == run.run_id]

    def of_sizes(self, sizes) -> "Plan":
        """The part of the plan at these sizes (a size ladder run one rung at a time); the ids are
        the whole grid's, so the rungs' records are the grid's records. No sizes (``--size`` not
        given): the whole plan."""
        if not sizes:
            return self
        keep = set(sizes)
        return Plan(tuple(r for r in self.runs if r.size.name in keep),
                    tuple(e for e in self.evaluations if e.run.size.name in keep),
                    pending=tuple(g for g in self.pending if g.split("/")[1] in keep),
                    untunable=tuple(g for g in self.untunable if g.split("/")[1] in keep))

    def missing_at(self, size: str, recorded, failed=lambda run: False) -> int:
        """How many pieces at ``size`` have no record (``recorded(piece)``: a TrainingRun or an
        Evaluation), a pending sweep counting as one (its chosen runs are not planned yet). The
        evaluations of a run whose training failed (``failed(run)``) are not missing: the runner
        never evaluates a failed run, and its failure is the result."""
        part = self.of_sizes([size])
        return (sum(not recorded(r) for r in part.runs) + len(part.pending)
                + sum(not recorded(e) and not failed(e.run) for e in part.evaluations))

    def at_whole_sizes(self, sizes, recorded, failed=lambda run: False) -> tuple["Plan", dict[str, int]]:
        """The part of the plan at those of ``sizes`` (the grid's, in its order) whose every piece
        is recorded (:meth:`missing_at` is 0), and each size left out with its missing pieces. A
        size ladder is published rung by rung (``posbench publish --whole-sizes``): a rung half run
        would put rows of one seed beside rows of three on its boards."""
        left = {size: n for size in sizes if (n := self.missing_at(size, recorded, failed))}
        if not left:
            return self, {}
        keep = set(sizes) - set(left)
        return Plan(tuple(r for r in self.runs if r.size.name in keep),
                    tuple(e for e in self.evaluations if e.run.size.name in keep),
                    untunable=tuple(g for g in self.untunable if g.split("/")[1] in keep)), left


def sized(grid: Grid, recipe: TrainRecipe, size: SizeSpec) -> TrainRecipe:
    """``recipe`` as ``size`` trains it: steps x (its weights / the grid's first size's) ** the
    grid's ``steps_weight_exponent``, rounded (1: the same tokens per weight at every size); the
    recipe itself at exponent 0 and at the first size."""
    from suite.plan.estimate import matmul_params

    exponent = grid.spec.steps_weight_exponent
    if exponent == 0 or size.name == grid.sizes[0].name:
        return recipe
    steps = round(recipe.steps * (matmul_params(size) / matmul_params(grid.sizes[0])) ** exponent)
    return recipe.model_copy(update={"steps": max(1, steps)})


def trained_as(encoding: EncodingSpec, grid: Grid) -> EncodingSpec:
    return grid.trained_as[encoding.name] if encoding.trains_as else encoding


def evaluations_for(run: TrainingRun, encodings: list[EncodingSpec], requests: list[EvalRequest],
                    scales: list[int]) -> list[Evaluation]:
    """Each request on ``run`` for each encoding evaluated on its checkpoint, at every
    scale (and 1x) for length-dependent evaluators; checkpoint-level evaluators once."""
    out: dict[str, Evaluation] = {}
    for request, encoding in itertools.product(requests, encodings):
        evaluator = EVALUATORS.get(request.evaluator)
        settings = evaluator.Settings.model_validate(request.settings).model_dump()
        as_evaluated = encoding if evaluator.uses_eval_encoding else run.encoding
        for scale in sorted({1, *scales}) if evaluator.per_scale else [None]:
            evaluation = Evaluation(run, request.evaluator, settings, as_evaluated, scale)
            out.setdefault(evaluation.eval_id, evaluation)
    return list(out.values())


def expand(grid: Grid, fingerprint=None, tuned: "Chooser | None" = None) -> Plan:
    """Every training run of ``encoding-as-trained x size x task x seed`` (each once, seed by
    seed: every row of a seed before the next seed, each seed's in the order the spec lists
    them) and every evaluation of the grid on them. Seed-major, so that a grid stopped part
    way (a laptop's session, a cluster's time limit) leaves every row with the same seeds:
    the paired tests of a board compare rows over the seeds they share. A tuned grid
    (``tuning``) first has each group's sweep runs, evaluated by nothing; its runs at every
    seed follow at the rate ``tuned`` chose from their records (suite.plan.tuning), or wait for it."""
    spec = grid.spec
    runs: dict[str, TrainingRun] = {}
    evaluated_as: dict[str, list[EncodingSpec]] = {}
    requests: dict[str, list[EvalRequest]] = {}
    fingerprints: dict[str, str] = {}
    rates: dict[tuple, float | None | bool] = {}  # tuned grids: (encoding, size, task) -> its rate
    for task in grid.tasks:
        kind = kind_of(task)
        fingerprints[task.name] = fingerprint(task) if fingerprint else kind.fingerprint(task)
    for seed, encoding, size, task in itertools.product(spec.seeds, grid.encodings, grid.sizes, grid.tasks):
        size = grid.task_sizes.get(task.name, size)  # a task's recipe size replaces the axis (once: ids dedupe)
        kind = kind_of(task)
        recipe, as_trained = sized(grid, kind.train_recipe(spec, task), size), trained_as(encoding, grid)
        if spec.tuning is not None:
            group = (as_trained.name, size.name, task.name)
            if group not in rates:
                sweep = [TrainingRun(as_trained, size, task, spec.tuning.seed, swept(recipe, spec.tuning.lr, lr),
                                     fingerprints[task.name]) for lr in spec.tuning.lr]
                for run in sweep:
                    runs.setdefault(run.run_id, run)
                    evaluated_as.setdefault(run.run_id, [])
                    requests.setdefault(run.run_id, [])
                rates[group] = tuned(sweep) if tuned is not None else None
            if not rates[group]:  # waiting for its sweep, or untunable
                continue
            recipe = swept(recipe, spec.tuning.lr, rates[group])
        run = TrainingRun(as_trained, size, task, seed, recipe, fingerprints[task.name])
        runs.setdefault(run.run_id, run)
        evaluated_as.setdefault(run.run_id, [])
        if encoding not in evaluated_as[run.run_id]:
            evaluated_as[run.run_id].append(encoding)
        requests[run.run_id] = kind.evaluations(task, spec) + [EvalRequest(e.evaluator, e.settings) for e in spec.evaluations]
    # after every parent, so one process trains a parent first; never from a sweep's other rates
    for child in children(grid, {run_id: run for run_id, run in runs.items() if evaluated_as[run_id]}):
        runs.setdefault(child.run_id, child)
        evaluated_as[child.run_id] = [child.encoding]
        requests[child.run_id] = requests[child.parent.run_id]
    evaluations = [e for run_id, run in runs.items()
                   for e in evaluations_for(run, evaluated_as[run_id], requests[run_id], spec.scales)]
    return Plan(tuple(runs.values()), tuple(evaluations),
                pending=tuple("/".join(g) for g, rate in rates.items() if rate is None),
                untunable=tuple("/".join(g) for g, rate in rates.items() if rate is False))


def children(grid: Grid, runs: dict[str, TrainingRun]) -> list[TrainingRun]:
    """The grid's fine-tuned extensions: for every run of an entry's parent encoding (each
    size, task and seed), one child per encoding of the entry."""
    out = []
    for entry, encodings in zip(grid.spec.extensions, grid.extended):
        parents = [r for r in runs.values() if r.parent is None and r.encoding.name == entry.parent]
        for parent, encoding in itertools.product(parents, encodings):
            out.append(TrainingRun(encoding, parent.size, parent.task, parent.seed, entry.recipe(parent.train),
                                   parent.data_fingerprint, parent=parent))
    return out


def load_plan(path, project, tuned: "Chooser | None" = None) -> tuple[Grid, Plan]:
    """Load, check and expand a grid; every problem is raised at once as SpecErrors. ``tuned``:
    a tuned grid's chooser of each group's learning rate from its sweep's records
    (suite.execution.tuned.sweep_chooser); without one, a tuned grid plans its sweeps alone."""
    from suite.plan.checks import load_checked_grid

    grid = load_checked_grid(path, project)
    return grid, expand(grid, tuned=tuned)
