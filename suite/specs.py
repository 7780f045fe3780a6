"""YAML -> frozen, validated spec objects.

Every problem is reported as ``file:line: field: message``; all problems of a load
are collected and raised together as one :class:`SpecErrors`, before anything is
trained or written. Unknown keys are errors with a did-you-mean.

Spec kinds and where they live (relative to the project root):

* ``encodings/<name>.yaml`` -> :class:`EncodingSpec` (its ``params`` are checked
  against the implementation's own frozen parameter dataclass)
* ``sizes/<name>.yaml``     -> :class:`SizeSpec`
* ``tasks/<name>.yaml``     -> :class:`TaskSpec`
* ``grids/<name>.yaml``     -> :class:`GridSpec`, which names the others
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pydantic
from pydantic import BaseModel, ConfigDict, Field

from .registry import did_you_mean

from .yamldoc import SpecError, SpecErrors, YamlDoc, read_yaml


def _pydantic_errors(doc: YamlDoc, exc: pydantic.ValidationError, prefix: tuple = (), fields=None) -> list[SpecError]:
    out = []
    for err in exc.errors():
        loc = prefix + tuple(err["loc"])
        message = err["msg"]
        if err["type"] == "extra_forbidden":
            message = "unknown key" + did_you_mean(loc[-1], fields or [])
        elif err["type"] == "missing":
            message = "required key is missing"
        out.append(doc.error(loc, message))
    return out


def _validate(model: type[BaseModel], doc: YamlDoc, **context):
    """Build ``model`` from ``doc``; returns (object or None, errors)."""
    if doc.problems or not isinstance(doc.data, dict):
        return None, list(doc.problems)
    try:
        return model.model_validate({**doc.data, **context}), []
    except pydantic.ValidationError as exc:
        return None, _pydantic_errors(doc, exc, fields=model.model_fields)


class Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# -- encodings --------------------------------------------------------------------


class Conformance(Spec):
    """What an encoding's golden values were checked against (shown on its page)."""

    reference: str  # repository or library, e.g. "huggingface/transformers"
    version: str  # the pinned version or the commit the golden script ran
    script: str  # the committed script that regenerates the golden values
    tolerance: float = Field(1e-5, gt=0)
    convention: str = ""  # e.g. "half-split rotary pairs"


class EncodingSpec(Spec):
    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]*$")
    display_name: str
    family: Literal["none", "absolute", "rotary", "bias", "contextual", "additive", "wrapper"]
    paper: str
    impl: str
    params: dict[str, Any] = {}
    description: str = ""
    # The encoding whose checkpoint this one evaluates (training-free variants: YaRN, PI,
    # NTK, ReRoPE ... train as RoPE). None: it trains as itself.
    trains_as: str | None = Field(None, pattern=r"^[a-z0-9][a-z0-9_-]*$")
    conformance: Conformance | None = None
    source: str = Field("", exclude=True)  # the file it came from (provenance, not content)

    def resolved_params(self):
        """The implementation's frozen parameter dataclass, with defaults filled in."""
        cls = self.implementation()
        return cls.Params(**self.params)

    def implementation(self):
        from .encodings import ENCODINGS

        return ENCODINGS.get(self.impl, relative_to=Path(self.source).parent if self.source else None)


def check_params(params_cls, params: dict, doc: YamlDoc) -> list[SpecError]:
    """Unknown keys (with did-you-mean), wrong types and failed checks of a Params dataclass."""
    names = [f.name for f in dataclasses.fields(params_cls)]
    errors = [doc.error(("params", k), "unknown parameter" + did_you_mean(k, names) + f"; valid: {', '.join(names) or '(none)'}")
              for k in params if k not in names]
    if errors:
        return errors
    try:
        pydantic.TypeAdapter(params_cls).validate_python(params, strict=False)
    except pydantic.ValidationError as exc:
        errors += _pydantic_errors(doc, exc, prefix=("params",), fields=names)
    return errors


def load_encoding(path: Path) -> EncodingSpec:
    doc = read_yaml(path)
    spec, errors = _validate(EncodingSpec, doc, source=str(path))
    if spec is not None:
        if spec.name != Path(path).stem:
            errors.append(doc.error(("name",), f"must match the file name '{Path(path).stem}'"))
        if spec.trains_as == spec.name:
            errors.append(doc.error(("trains_as",), "an encoding trains as itself by default: remove trains_as"))
        try:
            cls = spec.implementation()
        except (KeyError, TypeError) as exc:
            errors.append(doc.error(("impl",), str(exc).strip('"')))
        else:
            errors += check_params(cls.Params, spec.params, doc)
    if errors:
        raise SpecErrors(errors)
    return spec


# -- model sizes and tasks ------------------------------------------------------------


class SizeSpec(Spec):
    name: str
    d_model: int = Field(gt=0)
    n_layers: int = Field(gt=0)
    n_heads: int = Field(gt=0)
    d_ff: int = Field(gt=0)
    description: str = ""


class CorpusSpec(Spec):
    kind: Literal["stdlib", "folder"] = "stdlib"
    path: str | None = None  # folder: a directory of text files (relative to the task file)
    glob: str = "**/*.py"  # which files, for both kinds
    max_bytes: int | None = Field(None, gt=0)  # cap on the corpus, to bound memory and time


class TaskSpec(Spec):
    """``lm``: language modelling on a corpus, scored in bits per byte.
    ``synthetic``: a seeded generator (suite.data.synthetic), trained at lengths up to L
    and scored by exact match through lm-eval at every scale."""

    name: str
    kind: Literal["lm", "synthetic"] = "lm"
    description: str = ""
    paper: str = ""
    corpus: CorpusSpec = CorpusSpec()  # lm only
    generator: str | None = None  # synthetic: a task of suite.data.synthetic.TASKS
    min_train_len: int = Field(8, gt=0)  # synthetic: training lengths are drawn from [this, L]

    @pydantic.model_validator(mode="after")
    def _generator_for_synthetic(self):
        if self.kind == "synthetic":
            from .data.synthetic import TASKS

            if self.generator is None:
                raise ValueError("a synthetic task needs a generator")
            if self.generator not in TASKS:
                raise ValueError(f"unknown generator '{self.generator}'{did_you_mean(self.generator, TASKS)}; "
                                 f"known: {', '.join(TASKS)}")
        return self


def _load_simple(model: type[Spec], path: Path):
    doc = read_yaml(path)
    spec, errors = _validate(model, doc)
    if spec is not None and spec.name != Path(path).stem:
        errors.append(doc.error(("name",), f"must match the file name '{Path(path).stem}'"))
    if errors:
        raise SpecErrors(errors)
    return spec


def load_size(path: Path) -> SizeSpec:
    return _load_simple(SizeSpec, path)


def load_task(path: Path) -> TaskSpec:
    spec = _load_simple(TaskSpec, path)
    if spec.corpus.kind == "folder":
        if not spec.corpus.path:
            raise SpecErrors([read_yaml(path).error(("corpus", "path"), "a folder corpus needs a path")])
        folder = (Path(path).parent / spec.corpus.path).resolve()
        if not folder.is_dir():
            raise SpecErrors([read_yaml(path).error(("corpus", "path"), f"no such directory: {folder}")])
        spec = spec.model_copy(update={"corpus": spec.corpus.model_copy(update={"path": str(folder)})})
    return spec


# -- grids ----------------------------------------------------------------------------


class TrainRecipe(Spec):
    steps: int = Field(300, gt=0)
    batch_size: int = Field(16, gt=0)
    seq_len: int = Field(64, gt=1)  # L, the training length
    lr: float = Field(3e-3, gt=0)
    warmup_steps: int = Field(30, ge=0)
    weight_decay: float = Field(0.1, ge=0)
    grad_clip: float = Field(1.0, gt=0)


class EvalRecipe(Spec):
    tokens: int = Field(32768, gt=0)  # tokens scored at every scale (the same tokens for all)
    batch_size: int = Field(8, gt=0)
    curve_buckets: int = Field(32, gt=0)  # position buckets of the loss-vs-position curve
    lmeval_rolling: bool = True  # also score the LM span through lm-eval (recorded as bpb_lmeval)
    task_examples: int = Field(64, gt=0)  # synthetic tasks: test examples at each scale


def glue_task_names(battery: str) -> tuple[str, ...]:
    """The battery's tasks, as the modules that build them define them (imported lazily:
    real GLUE pulls in `datasets`, which a spec check should not pay for up front)."""
    if battery == "offline":
        from .evaluation.glue_tasks import TASKS
    else:
        from .evaluation.glue_data import GLUE_TASKS as TASKS
    return tuple(TASKS)


class GlueRecipe(Spec):
    """The GLUE-style fine-tuning protocol; part of every GLUE-style evaluation id."""

    battery: Literal["offline", "glue"] = "offline"  # offline: built here from the stdlib; glue: the real thing
    tasks: list[str] | None = None  # default: the battery's eight
    steps: int = Field(150, gt=0)  # fine-tuning steps per task
    batch_size: int = Field(32, gt=0)
    lr: float = Field(1e-3, gt=0)
    max_len: int = Field(128, gt=1)  # inputs are cut to their last max_len bytes
    budget: float = Field(1.0, gt=0, le=1)  # offline: share of each task's own train/dev sizes
    max_train: int | None = Field(20000, gt=0)  # real GLUE: subsample train to at most this
    max_dev: int | None = Field(2000, gt=0)
    glue_dir: str | None = None  # real GLUE: a folder in GLUE's own format; None: the datasets cache

    def task_names(self) -> list[str]:
        return list(self.tasks or glue_task_names(self.battery))

    @pydantic.model_validator(mode="after")
    def _known_tasks(self):
        known = glue_task_names(self.battery)
        for t in self.tasks or []:
            if t not in known:
                raise ValueError(f"unknown {self.battery} GLUE task '{t}'{did_you_mean(t, known)}; known: {', '.join(known)}")
        return self


class EvaluationEntry(Spec):
    """One more evaluation of every training run: an evaluator of suite.evaluation and its
    settings (checked against the evaluator's own Settings when the grid is planned)."""

    evaluator: str
    settings: dict[str, Any] = {}


class GridSpec(Spec):
    name: str
    description: str = ""
    encodings: list[str] = Field(min_length=1)
    sizes: list[str] = Field(min_length=1)
    tasks: list[str] = Field(min_length=1)
    seeds: list[int] = Field([0], min_length=1)
    scales: list[int] = Field([1, 2, 4, 8, 16], min_length=1)
    train: TrainRecipe = TrainRecipe()
    task_train: TrainRecipe | None = None  # the recipe for synthetic tasks; `train` when absent
    eval: EvalRecipe = EvalRecipe()
    glue: GlueRecipe | None = None  # GLUE-style scores for every training run on an lm task; none when absent
    evaluations: list[EvaluationEntry] = []  # more evaluations of every training run (e.g. lm-eval tasks)



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
    def evals(self) -> Path:
        return self.results / "evals"

    @property
    def checkpoints(self) -> Path:
        return self.results / "checkpoints"

    @property
    def database(self) -> Path:
        return self.results / "posbench.duckdb"

    @property
    def site(self) -> Path:
        return self.root / "site" / "_build"

    def spec_path(self, kind: str, ref: str, relative_to: Path) -> Path:
        """A name is ``<root>/<kind>/<name>.yaml``; anything ending in .yaml is a path."""
        if ref.endswith((".yaml", ".yml")):
            return (relative_to / ref).resolve()
        return self.root / kind / f"{ref}.yaml"


@dataclass(frozen=True)
class Grid:
    """A grid spec with everything it names loaded and validated."""

    spec: GridSpec
    path: Path
    encodings: tuple[EncodingSpec, ...]
    sizes: tuple[SizeSpec, ...]
    tasks: tuple[TaskSpec, ...]
    trained_as: dict[str, EncodingSpec]  # a variant's name -> the spec whose checkpoint it evaluates


def load_grid(path: Path, project: Project) -> Grid:
    path = Path(path)
    doc = read_yaml(path)
    spec, errors = _validate(GridSpec, doc)
    if spec is None:
        raise SpecErrors(errors)
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
            target = project.spec_path(axis, ref, path.parent)
            if not target.is_file():
                known = sorted(p.stem for p in (project.root / axis).glob("*.yaml"))
                errors.append(doc.error((axis, i), f"no {axis[:-1]} '{ref}' ({target} does not exist){did_you_mean(ref, known)}"))
                continue
            try:
                loaded[axis].append(loader(target))
            except SpecErrors as exc:
                errors += exc.errors
    for i, size in enumerate(loaded["sizes"]):
        if size.d_model % size.n_heads:
            errors.append(doc.error(("sizes", i), f"size '{size.name}': d_model {size.d_model} is not divisible by n_heads {size.n_heads}"))
    trained_as = {}
    for i, encoding in enumerate(loaded["encodings"]):
        if encoding.trains_as:
            try:
                trained_as[encoding.name] = load_trained_as(encoding, project)
            except SpecErrors as exc:
                errors += exc.errors
    if errors:
        raise SpecErrors(errors)
    return Grid(spec, path, tuple(loaded["encodings"]), tuple(loaded["sizes"]), tuple(loaded["tasks"]), trained_as)


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


def validate_path(path: Path, project: Project) -> str:
    """Validate one spec file of any kind (told apart by its folder); returns its kind."""
    kind = Path(path).resolve().parent.name
    if kind == "grids":
        load_grid(path, project)
    elif kind == "encodings":
        load_encoding(path)
    elif kind == "sizes":
        load_size(path)
    elif kind == "tasks":
        load_task(path)
    else:
        raise SpecErrors([SpecError(str(path), 1, "(file)", "cannot tell the spec kind: put it in encodings/, grids/, sizes/ or tasks/")])
    return kind[:-1]
