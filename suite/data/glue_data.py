"""Real GLUE through the `datasets` library, read from the user's own copy; never downloaded.

Two sources, both offline:
- a GLUE directory in GLUE's own format (what the original distribution's download
  script writes: one folder per task, CoLA/train.tsv, CoLA/dev.tsv, ...), read with
  the `datasets` CSV builder as tab-separated text with quoting off: GLUE's TSVs hold
  stray double quotes that a CSV reader would take for quoting and run lines together;
- the `datasets` cache, when no directory is given: `load_dataset("nyu-mll/glue", name)`
  (or the older `"glue"`) with the Hugging Face libraries in offline mode, which works
  only for what an earlier online run cached.
Data that is not there raises GlueUnavailable, whose message says what was looked for
and where, so a grid skips the task instead of failing it. A file that is there but
not in GLUE's format is an error (ValueError), not a skip.

Labels follow the Hugging Face `glue` dataset, whichever source they come from:

task  GLUE folder  text_a / text_b (TSV columns)  labels
cola  CoLA   sentence (col 4; no header)        0 unacceptable, 1 acceptable
sst2  SST-2  sentence                           0 negative, 1 positive
mrpc  MRPC   #1 String / #2 String              0 not_equivalent, 1 equivalent (Quality)
stsb  STS-B  sentence1 / sentence2              score, a float in [0, 5]
qqp   QQP    question1 / question2              0 not_duplicate, 1 duplicate (is_duplicate)
mnli  MNLI   sentence1 / sentence2              0 entailment, 1 neutral, 2 contradiction (gold_label)
qnli  QNLI   question / sentence                0 entailment, 1 not_entailment
rte   RTE    sentence1 / sentence2              0 entailment, 1 not_entailment

Dev is GLUE's dev split (MNLI: dev_matched); GLUE's test labels are not public.
Rows with an empty text or label are dropped, as the Hugging Face `glue` loader drops
rows with missing fields (quoting off, a missing field and an empty one read the same);
fields past the header's are ignored, as that loader ignores them.
Texts are kept whole; the fine-tuner truncates.

The metadata fields (name, glue_analogue, kind, num_labels, metrics, main_metric,
description, version) are those of suite.data.glue_tasks.GlueTask, so the fine-tuning and
metric code serve both batteries.
"""

from __future__ import annotations

import csv
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Mapping

import datasets
import datasets.config
import numpy as np

from suite.data.glue_tasks import GlueExample
from suite.data.hf_offline import hf_offline

from suite.core.registry import Registry

HUB_NAMES = ("nyu-mll/glue", "glue")  # the dataset's current id on the Hub, then its older one


@dataclass(frozen=True)
class GlueSource:
    name: str  # the Hugging Face `glue` config name
    glue_analogue: str  # GLUE's own name for the task (here the task itself)
    kind: Literal["classification", "regression"]
    num_labels: int  # head outputs: the number of classes, 1 for regression
    metrics: tuple[str, ...]  # GLUE's metrics; the task's score is their mean
    main_metric: str  # the one a single column shows: GLUE's first
    description: str  # what each label means
    folder: str  # the task's folder in GLUE's distribution
    text_columns: tuple[str, ...]  # TSV columns of text_a[, text_b]
    label_column: str
    file_labels: tuple[str, ...] | None  # how the TSV writes label 0, 1, ...; None: a float score
    hub_text_columns: tuple[str, ...]  # the Hugging Face dataset's columns of text_a[, text_b]
    hub_label_names: tuple[str, ...] | None  # its ClassLabel names, in label order
    file_columns: tuple[str, ...] | None = None  # column names of a TSV without header; None: it has one
    train_file: str = "train.tsv"
    dev_file: str = "dev.tsv"
    hub_dev_split: str = "validation"
    version: int = 1  # bump when reading or label mapping changes

    @property
    def regression(self) -> bool:
        return self.kind == "regression"

    def __post_init__(self) -> None:
        labels = self.file_labels
        if (self.kind == "regression") != (labels is None) or self.num_labels != (len(labels) if labels else 1):
            raise ValueError(f"{self.name}: kind {self.kind}, num_labels {self.num_labels} and file_labels disagree")
        if self.main_metric not in self.metrics:
            raise ValueError(f"{self.name}: main_metric {self.main_metric!r} is not one of {self.metrics}")


class GlueUnavailable(Exception):
    """The task's data is not on this machine; the message says what was looked for and where."""


def _binary(names: tuple[str, str], **rest) -> dict:
    return dict(kind="classification", num_labels=2, file_labels=("0", "1"), hub_label_names=names, **rest)


_NLI2 = ("entailment", "not_entailment")
_NLI3 = ("entailment", "neutral", "contradiction")

GLUE_TASKS: Registry[GlueSource] = Registry("GLUE task", GlueSource)
"""The real GLUE's tasks, in GLUE's order."""
for _source_ in (
    GlueSource(
        name="cola", glue_analogue="CoLA", metrics=("matthews",), main_metric="matthews",
        description="0: an unacceptable English sentence; 1: an acceptable one",
        folder="CoLA", file_columns=("source", "label", "original_label", "sentence"),
        text_columns=("sentence",), label_column="label", hub_text_columns=("sentence",),
        **_binary(("unacceptable", "acceptable")),
    ),
    GlueSource(
        name="sst2", glue_analogue="SST-2", metrics=("accuracy",), main_metric="accuracy",
        description="0: a negative movie-review sentence; 1: a positive one",
        folder="SST-2", text_columns=("sentence",), label_column="label", hub_text_columns=("sentence",),
        **_binary(("negative", "positive")),
    ),
    GlueSource(
        name="mrpc", glue_analogue="MRPC", metrics=("f1", "accuracy"), main_metric="f1",
        description="0: the two sentences are not paraphrases; 1: they are",
        folder="MRPC", text_columns=("#1 String", "#2 String"), label_column="Quality",
        hub_text_columns=("sentence1", "sentence2"), **_binary(("not_equivalent", "equivalent")),
    ),
    GlueSource(
        name="stsb", glue_analogue="STS-B", kind="regression", num_labels=1,
        metrics=("pearson", "spearman"), main_metric="pearson",
        description="the two sentences' semantic similarity, 0 (none) to 5 (same meaning)",
        folder="STS-B", text_columns=("sentence1", "sentence2"), label_column="score", file_labels=None,
        hub_text_columns=("sentence1", "sentence2"), hub_label_names=None,
    ),
    GlueSource(
        name="qqp", glue_analogue="QQP", metrics=("f1", "accuracy"), main_metric="f1",
        description="0: the two Quora questions ask different things; 1: they are duplicates",
        folder="QQP", text_columns=("question1", "question2"), label_column="is_duplicate",
        hub_text_columns=("question1", "question2"), **_binary(("not_duplicate", "duplicate")),
    ),
    GlueSource(
        name="mnli", glue_analogue="MNLI", kind="classification", num_labels=3,
        metrics=("accuracy",), main_metric="accuracy",
        description="premise / hypothesis; 0: entailment, 1: neutral, 2: contradiction",
        folder="MNLI", text_columns=("sentence1", "sentence2"), label_column="gold_label",
        file_labels=_NLI3, hub_text_columns=("premise", "hypothesis"), hub_label_names=_NLI3,
        dev_file="dev_matched.tsv", hub_dev_split="validation_matched",
    ),
    GlueSource(
        name="qnli", glue_analogue="QNLI", kind="classification", num_labels=2,
        metrics=("accuracy",), main_metric="accuracy",
        description="question / sentence; 0: the sentence answers the question (entailment), 1: it does not",
        folder="QNLI", text_columns=("question", "sentence"), label_column="label",
        file_labels=_NLI2, hub_text_columns=("question", "sentence"), hub_label_names=_NLI2,
    ),
    GlueSource(
        name="rte", glue_analogue="RTE", kind="classification", num_labels=2,
        metrics=("accuracy",), main_metric="accuracy",
        description="0: sentence1 entails sentence2; 1: it does not",
        folder="RTE", text_columns=("sentence1", "sentence2"), label_column="label",
        file_labels=_NLI2, hub_text_columns=("sentence1", "sentence2"), hub_label_names=_NLI2,
    ),
):
    GLUE_TASKS.add(_source_.name, _source_)


def get_source(name: str) -> GlueSource:
    return GLUE_TASKS.member(name)


def load_glue(
    name: str,
    glue_dir: Path | None = None,
    max_train: int | None = None,
    max_dev: int | None = None,
    seed: int = 0,
    cache_dir: Path | None = None,
) -> tuple[list[GlueExample], list[GlueExample]]:
    """(train, dev) of a GLUE task, from ``glue_dir`` in GLUE's own format or, without
    one, from the `datasets` cache; each split subsampled to at most max_train / max_dev
    examples (None: all), deterministically for the seed, in file order.

    cache_dir: the `datasets` cache to use (None: its default, HF_DATASETS_CACHE).
    Raises GlueUnavailable when the data is not there."""
    source = get_source(name)
    for limit in (max_train, max_dev):
        if limit is not None and limit <= 0:
            raise ValueError(f"{name}: max_train and max_dev must be positive or None, got {max_train}, {max_dev}")
    if glue_dir is None:
        train, dev = _from_cache(source, cache_dir)
    else:
        train, dev = _from_dir(source, Path(glue_dir), cache_dir)
    return _subsample(train, max_train, f"{name}/train/seed={seed}"), _subsample(dev, max_dev, f"{name}/dev/seed={seed}")


def available(glue_dir: Path | None = None, cache_dir: Path | None = None) -> dict[str, bool | str]:
    """Each GLUE task: True where load_glue would find it, else the reason it would not."""
    status: dict[str, bool | str] = {}
    for name, source in GLUE_TASKS.items():
        try:
            if glue_dir is None:
                _from_cache(source, cache_dir)
            else:
                _task_files(source, Path(glue_dir))
            status[name] = True
        except GlueUnavailable as exc:
            status[name] = str(exc)
    return status


# ---- a GLUE directory --------------------------------------------------------


def _task_files(source: GlueSource, glue_dir: Path) -> dict[str, Path]:
    files = {"train": glue_dir / source.folder / source.train_file, "dev": glue_dir / source.folder / source.dev_file}
    missing = [str(path) for path in files.values() if not path.is_file()]
    if missing:
        raise GlueUnavailable(
            f"GLUE task {source.name!r}: no {' or '.join(missing)} (looked in the GLUE directory {glue_dir} "
            f"for the folder {source.folder}/ of GLUE's own distribution with {source.train_file} and {source.dev_file})"
        )
    return files


def _from_dir(source: GlueSource, glue_dir: Path, cache_dir: Path | None) -> tuple[list, list]:
    files = _task_files(source, glue_dir)
    columns = (*source.text_columns, source.label_column)
    options = dict(
        delimiter="\t",
        quoting=csv.QUOTE_NONE,
        header=None if source.file_columns else 0,
        column_names=list(source.file_columns) if source.file_columns else None,
        usecols=list(columns),  # fields past the header are ignored, as the Hugging Face loader ignores them
        index_col=False,  # never take a row's first fields for an index when it has more fields than the header
        # every field a string, none read as missing: a sentence may be "null" or "NA"
        features=datasets.Features({column: datasets.Value("string") for column in columns}),
        keep_default_na=False,
    )
    try:
        with hf_offline():
            splits = datasets.load_dataset(
                "csv", data_files={split: str(path) for split, path in files.items()},
                cache_dir=None if cache_dir is None else str(cache_dir), **options,
            )
    except Exception as exc:
        raise ValueError(f"GLUE task {source.name!r}: {', '.join(map(str, files.values()))} are not in GLUE's "
                         f"format (tab-separated; columns {list(columns)}): {exc}") from exc
    return tuple(_rows_to_examples(source, splits[split].to_dict(), files[split]) for split in ("train", "dev"))


def _rows_to_examples(source: GlueSource, table: Mapping[str, list], path: Path) -> list[GlueExample]:
    texts = [table[column] for column in source.text_columns]
    examples = []
    for row, (label, *parts) in enumerate(zip(table[source.label_column], *texts)):
        if not label or not all(parts):
            continue
        examples.append(GlueExample(parts[0], parts[1] if len(parts) > 1 else None, _label(source, label, path, row)))
    return examples


def _label(source: GlueSource, value: str, path: Path, row: int) -> int | float:
    if source.file_labels is None:
        try:
            return float(value)
        except ValueError:
            raise ValueError(f"{path}, data row {row + 1}: {source.label_column} {value!r} is not a number") from None
    if value not in source.file_labels:
        raise ValueError(f"{path}, data row {row + 1}: {source.label_column} {value!r} is none of {source.file_labels}")
    return source.file_labels.index(value)


# ---- the datasets cache ------------------------------------------------------

def _from_cache(source: GlueSource, cache_dir: Path | None) -> tuple[list, list]:
    where = cache_dir if cache_dir is not None else datasets.config.HF_DATASETS_CACHE
    errors = []
    for hub_name in HUB_NAMES:
        try:
            with hf_offline():
                splits = datasets.load_dataset(hub_name, source.name, cache_dir=None if cache_dir is None else str(where))
        except Exception as exc:  # whatever the library raises for "not cached", it is a skip
            errors.append(f"load_dataset({hub_name!r}, {source.name!r}): {type(exc).__name__}: {exc}")
            continue
        return _hub_examples(source, splits, hub_name)
    raise GlueUnavailable(
        f"GLUE task {source.name!r} is not in the datasets cache at {where} (looked offline, HF_DATASETS_OFFLINE=1; "
        f"nothing is downloaded): " + "; ".join(errors)
        + f". Pass glue_dir, a folder in GLUE's own format with {source.folder}/{source.train_file}, "
        f"or cache the dataset once with network access"
    )


def _hub_examples(source: GlueSource, splits, hub_name: str) -> tuple[list, list]:
    label_feature = splits["train"].features["label"]
    names = getattr(label_feature, "names", None)
    if source.hub_label_names is not None and tuple(names or ()) != source.hub_label_names:
        raise ValueError(f"{hub_name}/{source.name}: cached labels are {names}, expected {source.hub_label_names}")
    result = []
    for split in ("train", source.hub_dev_split):
        table = splits[split].to_dict()
        texts = [table[column] for column in source.hub_text_columns]
        result.append([
            GlueExample(parts[0], parts[1] if len(parts) > 1 else None, _hub_label(source, label))
            for label, *parts in zip(table["label"], *texts)
            if label != -1  # the Hub's mark for a missing label
        ])
    return tuple(result)


def _hub_label(source: GlueSource, label: int | float) -> int | float:
    if source.file_labels is not None:
        return label
    # the Hub stores STS-B's scores as float32: read back the decimal GLUE's TSV wrote (3.8, not 3.7999999523)
    return float(str(np.float32(label)))


def _subsample(examples: list[GlueExample], limit: int | None, stream: str) -> list[GlueExample]:
    if limit is None or len(examples) <= limit:
        return examples
    keep = sorted(random.Random(f"posbench.glue_data/{stream}").sample(range(len(examples)), limit))
    return [examples[i] for i in keep]
