"""Grid specs: ``grids/<name>.yaml`` -> :class:`GridSpec`, loaded with everything it names."""

from __future__ import annotations

from dataclasses import dataclass, field as dataclass_field
from pathlib import Path
from typing import Annotated, Any, Literal

import pydantic
from pydantic import Field
from pydantic_core import PydanticCustomError

from suite.core.boundary.names import NAME
from suite.core.registry import did_you_mean
from suite.core.yamldoc import SpecError, SpecErrors, read_yaml
from suite.specs.base import _salvage, _validate, Spec, SpecName, MAX_SEED, MAX_SEEDS, MAX_SCALE
from suite.specs.encoding import EncodingSpec, load_encoding
from suite.specs.recipes import TrainRecipe, EvalRecipe, GlueRecipe, EvaluationEntry, ExtensionSpec, TuningSpec
from suite.specs.tasks import SizeSpec, TaskSpec, load_size, load_task


# -- grids ----------------------------------------------------------------------------


class GridSpec(Spec):
    name: SpecName
    description: str = ""
    encodings: list[str] = Field(min_length=1)
    sizes: list[str] = Field(min_length=1)
    tasks: list[str] = Field(min_length=1)
    # a grid of thousands of seeds is a typo, not a plan (each seed trains every run again)
    seeds: list[Annotated[int, Field(ge=0, le=MAX_SEED)]] = Field([0], min_length=1, max_length=MAX_SEEDS)
    scales: list[Annotated[int, Field(le=MAX_SCALE)]] = Field([1, 2, 4, 8, 16], min_length=1)
    train: TrainRecipe = TrainRecipe()
    task_train: TrainRecipe | None = None  # the recipe for synthetic tasks; `train` when absent
    # a generated task's own recipe (what its models need to learn it): fields over task_train's,
    # e.g. {copy: {steps: 4000, lr: 0.001}}, and optionally the `size` it trains at in place of
    # the `sizes` axis (a task the smallest model cannot learn); see recipe_for
    task_recipes: dict[str, dict[str, Any]] = {}
    eval: EvalRecipe = EvalRecipe()
    glue: GlueRecipe | None = None  # GLUE-style scores for every training run on an lm task; none when absent
    evaluations: list[EvaluationEntry] = []  # more evaluations of every training run (e.g. lm-eval tasks)
    extensions: list[ExtensionSpec] = []  # child runs fine-tuned from a trained encoding's checkpoints
    # a learning-rate sweep per (encoding, size, task), chosen on validation loss (suite.plan.tuning);
    # none: the recipes' learning rates
    tuning: TuningSpec | None = None
    # a size ladder's token budget (suite.plan.grid.sized): the first size of ``sizes`` trains each
    # recipe's steps, every other size those steps x (its weights / the first's) ** this exponent
    # (weights as suite.plan.estimate.matmul_params counts them): 0, the recipe's steps at every
    # size; 1, the same tokens per weight at every size; 0.5, tokens growing as the square root
    steps_weight_exponent: float = Field(0.0, ge=0, le=1)
    # GiB of memory on the machine that runs each piece (a cluster's GPU), for the check that a
    # training run fits (suite.plan.limits); None: this machine's RAM or GPU memory
    device_memory_gib: float | None = Field(None, gt=0)
    # where the grid is meant to run, for the cost posbench plan states (suite.plan.estimate):
    # cpu (this project's CPU machine class: CPU-hours) or cuda (GPUs: GPU-hours); not where it runs
    device: Literal["cpu", "cuda"] = "cpu"

    @pydantic.field_validator("tuning")
    @classmethod
    def _tuned_on_a_seed_of_the_grid(cls, tuning: TuningSpec | None, info: pydantic.ValidationInfo):
        seeds = info.data.get("seeds")
        if tuning is not None and seeds is not None and tuning.seed not in seeds:
            raise PydanticCustomError("value_error", "tuning.seed {seed} is not one of the grid's seeds {seeds}: the "
                                      "sweep's run at the chosen rate is that seed's run", {"seed": tuning.seed, "seeds": seeds})
        return tuning


    def recipe_for(self, task: str) -> TrainRecipe:
        """The training recipe of a generated task: ``task_train`` (or ``train``) with the
        task's ``task_recipes`` entry over it. A task without an entry gets the base recipe
        itself, so its run ids do not change when another task gains a recipe."""
        base = self.task_train if self.task_train is not None else self.train
        override = {k: v for k, v in self.task_recipes.get(task, {}).items() if k != "size"}
        return TrainRecipe.model_validate({**base.model_dump(), **override}) if override else base


SPEC_NAME = NAME  # suite.core.boundary.names: what a spec file, a page and a job may be called


@dataclass(frozen=True)
class Project:
    """Where specs and outputs live: the project root (the folder holding encodings/)."""

    root: Path

    @property
    def results(self) -> Path:
        return self.root / "results"

    @property
    def runs(self) -> Path:
        return self.results / "runs"

    @property
    def claims(self) -> Path:
        return self.results / "claims"

    @property
    def logs(self) -> Path:
        return self.results / "logs"

    @property
    def evals(self) -> Path:
        return self.results / "evals"

    @property
    def samples(self) -> Path:
        return self.results / "samples"

    @property
    def checkpoints(self) -> Path:
        return self.results / "checkpoints"

    @property
    def database(self) -> Path:
        return self.results / "posbench.duckdb"

    @property
    def site(self) -> Path:
        """The site of this project's own results (posbench run, posbench site)."""
        return self.root / "site" / "_build"

    @property
    def published_site(self) -> Path:
        """The published snapshot's site (posbench site --published): its own folder, so that
        rendering it never replaces the site of one's own results."""
        return self.root / "site" / "published"

    def spec_path(self, kind: str, ref: str, relative_to: Path) -> Path:
        """A name is ``<root>/<kind>/<name>.yaml``; anything ending in .yaml is a path."""
        if ref.endswith((".yaml", ".yml")):
            return (relative_to / ref).resolve()
        return self.root / kind / f"{ref}.yaml"

    def ref_problem(self, ref: str, target: Path) -> str | None:
        """Why a grid may not refer to ``ref`` (resolved to ``target``), or None: a name
        is a plain name, and a path stays inside the project."""
        if not ref.endswith((".yaml", ".yml")) and not SPEC_NAME.fullmatch(ref):
            return f"'{ref}' is not a spec name (letters, digits, '-', '_', '.') or a path ending in .yaml"
        if not target.resolve().is_relative_to(self.root.resolve()):
            return f"'{ref}' resolves to {target.resolve()}, outside the project {self.root.resolve()}: refused"
        return None


@dataclass(frozen=True)
class Grid:
    """A grid spec with everything it names loaded and validated."""

    spec: GridSpec
    path: Path
    encodings: tuple[EncodingSpec, ...]
    sizes: tuple[SizeSpec, ...]
    tasks: tuple[TaskSpec, ...]
    trained_as: dict[str, EncodingSpec]  # a variant's name -> the spec whose checkpoint it evaluates
    # per ``extensions`` entry, the encodings its children train with (renamed "<name>-<suffix>")
    extended: tuple[tuple[EncodingSpec, ...], ...] = ()
    # a task's recipe size (``task_recipes.<task>.size``): it trains at that size alone, not at ``sizes``
    task_sizes: dict[str, SizeSpec] = dataclass_field(default_factory=dict)


def load_grid(path: Path, project: Project) -> Grid:
    grid, errors = load_grid_partly(path, project)
    if errors:
        raise SpecErrors(errors)
    return grid


def load_grid_partly(path: Path, project: Project) -> tuple[Grid | None, list[SpecError]]:
    """The grid with what of it loads, and every problem of it: (None, problems) when even its
    required keys do not validate. A key that does not validate is left at its default and the
    rest is loaded and checked (a bad learning rate must not hide an unknown encoding or an
    unknown evaluator until it is fixed); a spec it names that does not load is left out. The
    problems are ordered: the grid's own lines first, then those of the files it names."""
    path = Path(path)
    doc = read_yaml(path)
    spec, errors = _validate(GridSpec, doc)
    if spec is None:
        spec = _salvage(GridSpec, doc, errors)
    if spec is None:  # every problem in one run: what can be checked without a valid spec is checked too
        return None, _ordered(errors + _checks_of_the_raw_document(doc, path, project), path)
    if spec.name != path.stem:
        errors.append(doc.error(("name",), f"must match the file name '{path.stem}'"))
    for axis in ("encodings", "sizes", "tasks", "seeds", "scales"):
        values = getattr(spec, axis)
        for i, v in enumerate(values):
            if v in values[:i]:
                errors.append(doc.error((axis, i), f"duplicate entry {v!r}"))
    for i, s in enumerate(spec.scales):
        if s < 1:
            errors.append(doc.error(("scales", i), "scales are multiples of the training length and must be >= 1"))

    loaded: dict[str, list] = {"encodings": [], "sizes": [], "tasks": []}
    loaders = {"encodings": load_encoding, "sizes": load_size, "tasks": load_task}
    for axis, loader in loaders.items():
        for i, ref in enumerate(getattr(spec, axis)):
            found = _load_ref(project, axis, ref, path, doc, (axis, i), loader, errors)
            if found is not None:
                loaded[axis].append(found)
    errors += _check_task_recipes(spec, doc, loaded["tasks"])

    task_sizes, size_errors = _load_recipe_sizes(spec, doc, path, project)
    errors += size_errors
    trained_as = {}
    for encoding in list(loaded["encodings"]):
        if encoding.trains_as:
            try:
                trained_as[encoding.name] = load_trained_as(encoding, project)
            except SpecErrors as exc:
                errors += exc.errors
                loaded["encodings"].remove(encoding)  # a variant without its checkpoint's spec is left out
    extended, extension_errors = _load_extensions(spec, doc, path, project, loaded["encodings"])
    errors += extension_errors
    return (Grid(spec, path, tuple(loaded["encodings"]), tuple(loaded["sizes"]), tuple(loaded["tasks"]), trained_as,
                 extended, task_sizes), _ordered(errors, path))


def _ordered(errors: list[SpecError], path: Path) -> list[SpecError]:
    """Each problem once: the grid's own in line order, then the other files' as they came."""
    unique = list(dict.fromkeys(errors))
    return sorted(unique, key=lambda e: (e.file != str(path), e.line if e.file == str(path) else 0))


def _checks_of_the_raw_document(doc, path: Path, project: Project) -> list:
    """The name and the referenced specs of a grid whose document did not validate as a whole
    (a bad number elsewhere must not hide an unknown encoding until it is fixed)."""
    data, errors = doc.data if isinstance(doc.data, dict) else {}, []
    if isinstance(data.get("name"), str) and data["name"] != path.stem:
        errors.append(doc.error(("name",), f"must match the file name '{path.stem}'"))
    for axis, loader in (("encodings", load_encoding), ("sizes", load_size), ("tasks", load_task)):
        refs = data.get(axis)
        for i, ref in enumerate(refs if isinstance(refs, list) else []):
            if isinstance(ref, str):
                _load_ref(project, axis, ref, path, doc, (axis, i), loader, errors)
    return errors


def _load_recipe_sizes(spec: GridSpec, doc, path: Path, project: Project) -> tuple[dict[str, SizeSpec], list]:
    """The size each ``task_recipes`` entry with a ``size`` trains at, loaded, and the problems."""
    sizes, errors = {}, []
    for name, override in spec.task_recipes.items():
        if "size" not in override or name not in spec.tasks:
            continue
        ref, where = override["size"], ("task_recipes", name, "size")
        if not isinstance(ref, str):
            errors.append(doc.error(where, f"a size is named by its spec, e.g. 'tiny-4l'; got {ref!r}"))
            continue
        found = _load_ref(project, "sizes", ref, path, doc, where, load_size, errors)
        if found is not None:
            sizes[name] = found
    return sizes, errors


def _load_ref(project: Project, axis: str, ref: str, path: Path, doc, where: tuple, loader, errors: list):
    """The spec ``ref`` names in the project's ``axis`` folder (e.g. sizes/), loaded; None, with
    the problem appended to ``errors`` at ``where``, when it is outside the project, missing or
    invalid."""
    target = project.spec_path(axis, ref, path.parent)
    problem = project.ref_problem(ref, target)
    if problem:
        errors.append(doc.error(where, problem))
        return None
    if not target.is_file():
        known = sorted(p.stem for p in (project.root / axis).glob("*.yaml"))
        errors.append(doc.error(where, f"no {axis[:-1]} '{ref}' ({target} does not exist){did_you_mean(ref, known)}"))
        return None
    try:
        return loader(target)
    except SpecErrors as exc:
        errors += exc.errors
        return None


def _load_extensions(spec: GridSpec, doc, path: Path, project: Project, encodings: list[EncodingSpec]):
    """Each ``extensions`` entry's encodings, loaded and renamed for their rows, and the
    problems: a parent that is not a trained encoding of the grid, an unknown encoding, two
    children with one name (a grid row each)."""
    trained = {e.name for e in encodings if not e.trains_as}
    extended, errors, names = [], [], {e.name: ("encodings",) for e in encodings}
    for i, entry in enumerate(spec.extensions):
        if entry.parent not in trained:
            why = "a training-free variant: name the spec it trains as" if entry.parent in spec.encodings else \
                f"not an encoding of this grid{did_you_mean(entry.parent, sorted(trained))}"
            errors.append(doc.error(("extensions", i, "parent"), f"'{entry.parent}' is {why}"))
        children = []
        for j, ref in enumerate(entry.encodings):
            target = project.spec_path("encodings", ref, path.parent)
            problem = project.ref_problem(ref, target)
            if problem or not target.is_file():
                known = sorted(p.stem for p in (project.root / "encodings").glob("*.yaml"))
                errors.append(doc.error(("extensions", i, "encodings", j),
                                        problem or f"no encoding '{ref}'{did_you_mean(ref, known)}"))
                continue
            try:
                encoding = load_encoding(target)
            except SpecErrors as exc:
                errors += exc.errors
                continue
            child = fine_tuned_spec(encoding, entry)
            if child.name in names:
                errors.append(doc.error(("extensions", i, "encodings", j), (
                    f"a second row named '{child.name}' (also {'.'.join(map(str, names[child.name]))}): "
                    "give one of the entries its own `label`")))
            names[child.name] = ("extensions", i, "encodings", j)
            children.append(child)
        extended.append(tuple(children))
    return tuple(extended), errors


def fine_tuned_spec(encoding: EncodingSpec, entry: ExtensionSpec) -> EncodingSpec:
    """The encoding as a fine-tuned child trains it: its own implementation and parameters
    (a training-free variant's included: PI fine-tuned is PI's frequencies, trained), under
    the row name ``<name>-<suffix>``."""
    how = (f"fine-tuned from {entry.parent} at {entry.factor}x ({entry.steps} steps)" if entry.steps
           else f"calibrated on {entry.parent} at {entry.factor}x, not fine-tuned")  # a search-only child
    return encoding.model_copy(update={"name": f"{encoding.name}-{entry.suffix}", "trains_as": None,
                                       "display_name": f"{encoding.display_name}, {how}"})


def _check_task_recipes(spec: GridSpec, doc, tasks: list[TaskSpec]) -> list:
    """Each ``task_recipes`` entry names a generated task of the grid and makes a valid recipe."""
    from suite.specs.tasks import GENERATED_KINDS

    kinds = {t.name: t.kind for t in tasks}
    errors = []
    for name, override in spec.task_recipes.items():
        if name not in spec.tasks:
            errors.append(doc.error(("task_recipes", name), f"'{name}' is not a task of this grid"
                                                            f"{did_you_mean(name, spec.tasks)}"))
            continue
        if name in kinds and kinds[name] not in GENERATED_KINDS:
            errors.append(doc.error(("task_recipes", name), f"'{name}' is a {kinds[name]} task: it trains with `train`"))
            continue
        try:
            spec.recipe_for(name)
        except pydantic.ValidationError as exc:
            for err in exc.errors():
                message = "unknown recipe field" + did_you_mean(str(err["loc"][-1]), TrainRecipe.model_fields) \
                    if err["type"] == "extra_forbidden" else err["msg"]
                errors.append(doc.error(("task_recipes", name, *err["loc"]), message))
    return errors


def load_trained_as(encoding: EncodingSpec, project: Project) -> EncodingSpec:
    """The spec named by ``encoding.trains_as`` (a spec that itself trains as itself)."""
    doc = read_yaml(Path(encoding.source))
    target = project.spec_path("encodings", encoding.trains_as, Path(encoding.source).parent)
    if not target.is_file():
        known = sorted(p.stem for p in (project.root / "encodings").glob("*.yaml"))
        raise SpecErrors([doc.error(("trains_as",), f"no encoding '{encoding.trains_as}'{did_you_mean(encoding.trains_as, known)}")])
    base = load_encoding(target)
    if base.trains_as:
        raise SpecErrors([doc.error(("trains_as",), f"'{base.name}' itself trains as '{base.trains_as}': "
                                                    f"name the spec that is trained ('{base.trains_as}')")])
    return base


def validate_path(path: Path, project: Project):
    """Load one spec file of any kind (told apart by its folder): (its kind, the spec)."""
    loaders = {"grids": lambda p: load_grid(p, project), "encodings": load_encoding, "sizes": load_size, "tasks": load_task}
    kind = Path(path).resolve().parent.name
    if kind not in loaders:
        raise SpecErrors([SpecError(str(path), 1, "(file)", "cannot tell the spec kind: put it in encodings/, grids/, sizes/ or tasks/")])
    return kind[:-1], loaders[kind](path)
