"""Model sizes and tasks: ``sizes/<name>.yaml`` and ``tasks/<name>.yaml``."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import pydantic
from pydantic import Field

from suite.core.registry import did_you_mean
from suite.core.yamldoc import SpecErrors, read_yaml
from suite.specs.base import _salvage, _validate, failed_keys, Spec, SpecName, MAX_WIDTH, MAX_LAYERS, MAX_LENGTH, MAX_TOKENS


# -- model sizes and tasks ------------------------------------------------------------


class SizeSpec(Spec):
    name: SpecName
    d_model: int = Field(gt=0, le=MAX_WIDTH)
    n_layers: int = Field(gt=0, le=MAX_LAYERS)
    n_heads: int = Field(gt=0, le=MAX_WIDTH)
    d_ff: int = Field(gt=0, le=MAX_WIDTH)
    # How the weights start (suite.modeling.init.INIT_SCHEMES): "gpt2" (std 0.02, tied output
    # head) or "pytorch" (the modules' own defaults, untied head). Not hashed at its default, so
    # the ids of runs made before the field existed stay what they were.
    init: Literal["gpt2", "pytorch"] = "gpt2"
    description: str = ""

    @pydantic.field_validator("n_heads")
    @classmethod
    def _heads_divide_width(cls, n_heads: int, info: pydantic.ValidationInfo) -> int:
        d_model = info.data.get("d_model")
        if d_model is not None and d_model % n_heads:
            raise ValueError(f"d_model {d_model} is not divisible by n_heads {n_heads}")
        return n_heads


GENERATED_KINDS = frozenset({"synthetic"})  # task kinds (suite.plan.task_kinds) whose data a generator makes


class CorpusSpec(Spec):
    kind: str = "stdlib"  # a source of suite.data.corpus.CORPUS_SOURCES (stdlib: the pinned CPython 3.11.7 one)
    path: str | None = None  # folder: a directory of text files (relative to the task file)
    # pinned: a shipped archive, corpora/<archive>.yaml (name-version, e.g. english-pd-1.0)
    archive: str | None = Field(None, pattern=r"^[a-z0-9][a-z0-9-]*-[A-Za-z0-9][A-Za-z0-9.]*$")
    glob: str = "**/*.py"  # which files, for the stdlib, host-stdlib, pinned and folder kinds
    max_bytes: int | None = Field(None, gt=0, le=MAX_TOKENS)  # cap on the corpus, to bound memory and time
    # datasets (suite.data.hf_corpus): a save_to_disk or data-file folder, or a name in the datasets cache
    dataset: str | None = None
    config: str | None = None  # the dataset's configuration (wikitext-103-raw-v1)
    text_field: str = "text"
    # the dataset's names for our three splits
    train_split: str = "train"
    validation_split: str = "validation"
    test_split: str = "test"

    @pydantic.field_validator("kind")
    @classmethod
    def _known_source(cls, kind: str) -> str:
        from suite.data.corpus import CORPUS_SOURCES

        CORPUS_SOURCES.member(kind)
        return kind

    @pydantic.model_validator(mode="after")
    def _dataset_for_datasets(self):
        from suite.data.corpus import source_of

        if source_of(self).needs_dataset != (self.dataset is not None):
            raise ValueError("a datasets corpus needs dataset: (a folder or a name), and only it takes one")
        if source_of(self).needs_archive != (self.archive is not None):
            raise ValueError("a pinned corpus needs archive: (a name-version of corpora/), and only it takes one")
        return self

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

    name: SpecName
    kind: Literal["lm", "synthetic"] = "lm"
    description: str = ""
    paper: str = ""
    corpus: CorpusSpec = CorpusSpec()  # lm only
    generator: str | None = None  # synthetic: a task of suite.data.synthetic.TASKS
    min_train_len: int = Field(8, gt=0, le=MAX_LENGTH)  # synthetic: training lengths are drawn from [this, L]

    @pydantic.field_validator("generator")
    @classmethod
    def _known_generator(cls, generator: str | None) -> str | None:
        from suite.data.synthetic import TASKS

        if generator is not None and generator not in TASKS:
            raise ValueError(f"unknown generator '{generator}'{did_you_mean(generator, TASKS)}; known: {', '.join(TASKS)}")
        return generator

    @pydantic.model_validator(mode="after")
    def _generator_for_synthetic(self):
        if self.kind in GENERATED_KINDS and self.generator is None:
            raise ValueError("a synthetic task needs a generator")
        return self


def load_size(path: Path) -> SizeSpec:
    spec, errors, _ = _load_simple(SizeSpec, path)
    if errors:
        raise SpecErrors(errors)
    return spec


def load_task(path: Path) -> TaskSpec:
    from suite.data.corpus import CorpusPathError, source_of

    spec, errors, doc = _load_simple(TaskSpec, path)
    if spec is not None and "corpus" not in failed_keys(errors):  # checked even when another key is wrong
        try:
            corpus = source_of(spec.corpus).resolve(spec.corpus, Path(path).parent)
        except CorpusPathError as exc:
            errors.append(doc.error(("corpus", exc.field), str(exc)))
        else:
            spec = spec.model_copy(update={"corpus": corpus})
    if errors:
        raise SpecErrors(sorted(errors, key=lambda e: e.line))
    return spec


def _load_simple(model: type[Spec], path: Path):
    """(the spec, or what of it validates (suite.specs.base._salvage); its problems; the document)."""
    doc = read_yaml(path)
    spec, errors = _validate(model, doc)
    spec = spec if spec is not None else _salvage(model, doc, errors)
    name = doc.data.get("name") if isinstance(doc.data, dict) and "name" not in failed_keys(errors) else None
    if isinstance(name, str) and name != Path(path).stem:
        errors.append(doc.error(("name",), f"must match the file name '{Path(path).stem}'"))
    return spec, errors, doc
