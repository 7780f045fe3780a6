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

Loading never runs code from outside the package when imports are off
(:func:`suite.registry.no_imports`, what ``posbench validate`` does without
``--import``): an external ``impl:`` is then checked for its form and that its file
exists, and its params are left for ``--import`` to check. Every number is bounded
(no NaN or infinity, integers within what torch and the store can hold, sizes within
what a machine could train), and a spec refers only to files inside its project
unless it gives an absolute path.
"""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

import pydantic
from pydantic import BaseModel, ConfigDict, Field

from .registry import NotImported, did_you_mean, parse_ref, resolve_file

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
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


# Bounds of sizes: generous for any real run, small enough that an absurd value is a
# spec error instead of an allocation that takes the machine down.
MAX_SEED = 2**32 - 1  # what Lightning's seed_everything accepts (beyond it, it silently draws a random seed)
MAX_WIDTH = 1 << 16  # d_model, d_ff
MAX_LAYERS = 1024
MAX_LENGTH = 1 << 22  # seq_len, eval lengths, GLUE max_len
MAX_STEPS = 10_000_000
MAX_BATCH = 1 << 16
MAX_SCALE = 1024
MAX_TOKENS = 1 << 34  # tokens scored, corpus bytes


# -- encodings --------------------------------------------------------------------


class Conformance(Spec):
    """What an encoding's golden values were checked against (shown on its page)."""

    reference: str  # repository or library, e.g. "huggingface/transformers"
    version: str  # the pinned version or the commit the golden script ran
    script: str  # the committed script that regenerates the golden values
    tolerance: float = Field(1e-5, gt=0, le=1)
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
    """Unknown keys (with did-you-mean), wrong types, failed checks of a Params dataclass,
    and non-finite values (a string "nan" becomes a float NaN on the way in)."""
    names = [f.name for f in dataclasses.fields(params_cls)]
    errors = [doc.error(("params", k), "unknown parameter" + did_you_mean(k, names) + f"; valid: {', '.join(names) or '(none)'}")
              for k in params if k not in names]
    if errors:
        return errors
    try:
        resolved = pydantic.TypeAdapter(params_cls).validate_python(params, strict=False)
    except pydantic.ValidationError as exc:
        return _pydantic_errors(doc, exc, prefix=("params",), fields=names)
    except Exception as exc:  # a plugin's own check that raised something other than ValueError
        return [doc.error(("params",), f"{type(exc).__name__}: {exc}")]
    for f in dataclasses.fields(resolved):
        value = getattr(resolved, f.name)
        if isinstance(value, float) and not math.isfinite(value):
            errors.append(doc.error(("params", f.name), f"{value} is not a finite number"))
    return errors


def spec_project_root(source: Path) -> Path:
    """The project a spec file belongs to: the folder holding its kind's folder."""
    return Path(source).resolve().parent.parent


def check_impl_form(spec: EncodingSpec, doc: YamlDoc) -> list[SpecError]:
    """An external ``impl:`` without importing it: its form, its file (inside the spec's
    project unless the path is absolute) or its module's top-level package."""
    from .encodings import ENCODINGS

    if ENCODINGS.is_registered(spec.impl) or ":" not in spec.impl:
        return []
    try:
        target, _ = parse_ref(spec.impl)
        if target.endswith(".py") and not Path(target).is_absolute():
            path, root = resolve_file(target, Path(spec.source).parent), spec_project_root(spec.source)
            if not path.is_relative_to(root):
                return [doc.error(("impl",), f"'{target}' resolves to {path}, outside the project {root}: "
                                             "give an absolute path to load code from elsewhere")]
        ENCODINGS.check_exists(target, Path(spec.source).parent)
    except KeyError as exc:
        return [doc.error(("impl",), str(exc))]
    return []


def check_implementation(cls) -> str | None:
    """What is wrong with an implementation class beyond the registry's subclass check."""
    params = getattr(cls, "Params", None)
    if not (isinstance(params, type) and dataclasses.is_dataclass(params)):
        return f"{cls.__name__}.Params must be a frozen dataclass (got {params!r})"
    if not params.__dataclass_params__.frozen:
        return f"{cls.__name__}.Params must be a frozen dataclass: add @dataclass(frozen=True)"
    return None


def load_encoding(path: Path) -> EncodingSpec:
    doc = read_yaml(path)
    spec, errors = _validate(EncodingSpec, doc, source=str(path))
    if spec is not None:
        if spec.name != Path(path).stem:
            errors.append(doc.error(("name",), f"must match the file name '{Path(path).stem}'"))
        if spec.trains_as == spec.name:
            errors.append(doc.error(("trains_as",), "an encoding trains as itself by default: remove trains_as"))
        form = check_impl_form(spec, doc)
        errors += form
        if not form:
            errors += _check_loaded_implementation(spec, doc)
    if errors:
        raise SpecErrors(errors)
    return spec


def _check_loaded_implementation(spec: EncodingSpec, doc: YamlDoc) -> list[SpecError]:
    """The implementation's own checks and its params' (nothing when imports are off
    and the implementation is external: see :func:`suite.registry.no_imports`)."""
    try:
        cls = spec.implementation()
    except NotImported:
        return []
    except (KeyError, TypeError) as exc:
        return [doc.error(("impl",), str(exc))]
    problem = check_implementation(cls)
    if problem:
        return [doc.error(("impl",), problem)]
    return check_params(cls.Params, spec.params, doc)


# -- model sizes and tasks ------------------------------------------------------------


class SizeSpec(Spec):
    name: str
    d_model: int = Field(gt=0, le=MAX_WIDTH)
    n_layers: int = Field(gt=0, le=MAX_LAYERS)
    n_heads: int = Field(gt=0, le=MAX_WIDTH)
    d_ff: int = Field(gt=0, le=MAX_WIDTH)
    description: str = ""

    @pydantic.field_validator("n_heads")
    @classmethod
    def _heads_divide_width(cls, n_heads: int, info: pydantic.ValidationInfo) -> int:
        d_model = info.data.get("d_model")
        if d_model is not None and d_model % n_heads:
            raise ValueError(f"d_model {d_model} is not divisible by n_heads {n_heads}")
        return n_heads


class CorpusSpec(Spec):
    kind: Literal["stdlib", "folder"] = "stdlib"
    path: str | None = None  # folder: a directory of text files (relative to the task file)
    glob: str = "**/*.py"  # which files, for both kinds
    max_bytes: int | None = Field(None, gt=0, le=MAX_TOKENS)  # cap on the corpus, to bound memory and time

    @pydantic.field_validator("glob")
    @classmethod
    def _relative_glob(cls, pattern: str) -> str:
        if not pattern.strip():
            raise ValueError("an empty glob matches nothing")
        if pattern.startswith(("/", "~")) or ".." in Path(pattern).parts:
            raise ValueError(f"'{pattern}' must be a pattern inside the corpus folder (no absolute path, no '..')")
        return pattern


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
    min_train_len: int = Field(8, gt=0, le=MAX_LENGTH)  # synthetic: training lengths are drawn from [this, L]

    @pydantic.field_validator("generator")
    @classmethod
    def _known_generator(cls, generator: str | None) -> str | None:
        from .data.synthetic import TASKS

        if generator is not None and generator not in TASKS:
            raise ValueError(f"unknown generator '{generator}'{did_you_mean(generator, TASKS)}; known: {', '.join(TASKS)}")
        return generator

    @pydantic.model_validator(mode="after")
    def _generator_for_synthetic(self):
        if self.kind == "synthetic" and self.generator is None:
            raise ValueError("a synthetic task needs a generator")
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
    steps: int = Field(300, gt=0, le=MAX_STEPS)
    batch_size: int = Field(16, gt=0, le=MAX_BATCH)
    seq_len: int = Field(64, gt=1, le=MAX_LENGTH)  # L, the training length
    lr: float = Field(3e-3, gt=0)
    warmup_steps: int = Field(30, ge=0, le=MAX_STEPS)
    weight_decay: float = Field(0.1, ge=0)
    grad_clip: float = Field(1.0, gt=0)


class EvalRecipe(Spec):
    tokens: int = Field(32768, gt=0, le=MAX_TOKENS)  # tokens scored at every scale (the same tokens for all)
    batch_size: int = Field(8, gt=0, le=MAX_BATCH)
    curve_buckets: int = Field(32, gt=0, le=MAX_LENGTH)  # position buckets of the loss-vs-position curve
    lmeval_rolling: bool = True  # also score the LM span through lm-eval (recorded as bpb_lmeval)
    task_examples: int = Field(64, gt=0, le=MAX_STEPS)  # synthetic tasks: test examples at each scale


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
    steps: int = Field(150, gt=0, le=MAX_STEPS)  # fine-tuning steps per task
    batch_size: int = Field(32, gt=0, le=MAX_BATCH)
    lr: float = Field(1e-3, gt=0)
    max_len: int = Field(128, gt=1, le=MAX_LENGTH)  # inputs are cut to their last max_len bytes
    budget: float = Field(1.0, gt=0, le=1)  # offline: share of each task's own train/dev sizes
    max_train: int | None = Field(20000, gt=0, le=MAX_TOKENS)  # real GLUE: subsample train to at most this
    max_dev: int | None = Field(2000, gt=0, le=MAX_TOKENS)
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
    seeds: list[Annotated[int, Field(ge=0, le=MAX_SEED)]] = Field([0], min_length=1)
    scales: list[Annotated[int, Field(le=MAX_SCALE)]] = Field([1, 2, 4, 8, 16], min_length=1)
    train: TrainRecipe = TrainRecipe()
    task_train: TrainRecipe | None = None  # the recipe for synthetic tasks; `train` when absent
    eval: EvalRecipe = EvalRecipe()
    glue: GlueRecipe | None = None  # GLUE-style scores for every training run on an lm task; none when absent
    evaluations: list[EvaluationEntry] = []  # more evaluations of every training run (e.g. lm-eval tasks)



SPEC_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")


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
            problem = project.ref_problem(ref, target)
            if problem:
                errors.append(doc.error((axis, i), problem))
                continue
            if not target.is_file():
                known = sorted(p.stem for p in (project.root / axis).glob("*.yaml"))
                errors.append(doc.error((axis, i), f"no {axis[:-1]} '{ref}' ({target} does not exist){did_you_mean(ref, known)}"))
                continue
            try:
                loaded[axis].append(loader(target))
            except SpecErrors as exc:
                errors += exc.errors
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


def validate_path(path: Path, project: Project):
    """Load one spec file of any kind (told apart by its folder): (its kind, the spec)."""
    loaders = {"grids": lambda p: load_grid(p, project), "encodings": load_encoding, "sizes": load_size, "tasks": load_task}
    kind = Path(path).resolve().parent.name
    if kind not in loaders:
        raise SpecErrors([SpecError(str(path), 1, "(file)", "cannot tell the spec kind: put it in encodings/, grids/, sizes/ or tasks/")])
    return kind[:-1], loaders[kind](path)
